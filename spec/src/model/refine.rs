//! Refinement: walk a history recorded by the engine (`bpspec_reference::history`) through the
//! spec's transition relation, and reject the first step the spec does not allow, naming it.
//!
//! Each engine event maps to exactly one spec action:
//! - `TracePattern`, `WaitBegin`, `WaitEnd`, `Install`, `Commit`, `Uninstall`, `Consolidate`,
//!   `Free` to the stager's next step, which must be that step (so a missing wait or a reordering
//!   is rejected where it happens);
//! - `Progress`, `Sleep`, `Wake` to the scheduler's step;
//! - each hit-path read to the scheduler's next read, which must be the read the spec expects
//!   next, and the value read must be one the spec lets that scheduler see: the current value,
//!   or the older value its view still holds;
//! - each further read of the active index (`TimemIx`: `get_time_break` during a hit's
//!   previous-function charge, a return, a schedule-out) to no step: the value must be one the
//!   scheduler may see, and reading the current value drops its older one (coherence), so every
//!   read of the index a scheduler makes is checked, not one per node.
//!
//! The spec's stager steps are coarse (one step writes every matched function). The engine
//! records a step before its first write, so an engine read that lands between two of the
//! step's writes reads an old value, which the spec allows as a stale view (every spec write
//! leaves the old value readable until the reader's next barrier). After every step the spec's
//! safety properties must still hold.
//!
//! The script and the number of sessions are taken from the history's `TracePattern` events.

use super::config::{Config, PatternKind, StagerOp};
use super::state::{HitStep, Loc, Mode, State, BP, FRESH, NIL, ORIG};
use super::step::{bp_name, Action};
use super::BpModel;
use bpspec_reference::history::Event;
use stateright::{Expectation, Model};
use std::fmt;

/// The first engine step the spec does not allow.
#[derive(Clone, Debug)]
pub struct Rejection {
    /// Index of the event in the history.
    pub index: usize,
    pub event: Event,
    pub reason: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "engine step {} ({}) is not allowed by the spec: {}",
            self.index + 1,
            describe(&self.event),
            self.reason
        )
    }
}

/// An engine event in protocol words.
pub fn describe(e: &Event) -> String {
    let node = |g: Option<u64>| g.map_or("null".to_string(), |g| format!("GenericBp#{g}"));
    match *e {
        Event::TracePattern {
            session,
            funcs,
            op,
            flags,
        } => format!(
            "stager: trace_pattern begins (session {session}, functions {funcs:#b}, op {op}, flags {flags:#b})"
        ),
        Event::Batch {
            entries,
            elide_idle,
        } => format!(
            "stager: a batch of {entries} entries begins ({})",
            if elide_idle { "batch-elide-idle" } else { "batch" }
        ),
        Event::WaitBegin => "stager: a wait begins".into(),
        Event::WaitEnd => "stager: a wait completes".into(),
        Event::Install => "stager: install".into(),
        Event::Commit => "stager: flip".into(),
        Event::Uninstall => "stager: uninstall".into(),
        Event::Consolidate => "stager: consolidate".into(),
        Event::Free => "stager: free".into(),
        Event::Progress(s) => format!("scheduler {s} passes a progress point"),
        Event::Sleep(s) => format!("scheduler {s} goes to sleep"),
        Event::Wake(s) => format!("scheduler {s} wakes up"),
        Event::Instr {
            sched,
            func,
            breakpoint,
        } => format!(
            "scheduler {sched} calls f{func}: instruction -> {}",
            if breakpoint { "breakpoint" } else { "original" }
        ),
        Event::Slot { sched, func, node: g } => {
            format!("scheduler {sched} reads slot of f{func} -> {}", node(g))
        }
        Event::Ix { sched, ix } => format!("scheduler {sched} reads the active index -> {ix}"),
        Event::Half { sched, node: g, ix } => {
            format!("scheduler {sched} acts on half {ix} of GenericBp#{g}")
        }
        Event::Next {
            sched,
            node: g,
            next,
        } => format!(
            "scheduler {sched} reads next of GenericBp#{g} -> {}",
            node(next)
        ),
        Event::Orig { sched, node: g } => {
            format!("scheduler {sched} reads orig_instr of GenericBp#{g}")
        }
        Event::TimemIx { sched, ix } => {
            format!("scheduler {sched}'s call_time reader reads the active index -> {ix}")
        }
        Event::TimemSlot {
            sched,
            func,
            node: g,
        } => format!(
            "scheduler {sched}'s call_time reader reads slot of f{func} -> {}",
            node(g)
        ),
        Event::TimemNext {
            sched,
            node: g,
            next,
        } => format!(
            "scheduler {sched}'s call_time reader reads next of GenericBp#{g} -> {}",
            node(next)
        ),
    }
}

/// The spec configuration a history runs in: its `TracePattern` events are the script.
pub fn config_of(events: &[Event], schedulers: u8, functions: u8) -> Result<Config, String> {
    let mut script = Vec::new();
    let mut sessions = 1u8;
    // An open batch: its op's index in the script and how many entries are still to come.
    let mut batch: Option<(usize, u32)> = None;
    for e in events {
        if let Event::Batch {
            entries,
            elide_idle,
        } = *e
        {
            if batch.is_some() {
                return Err("a batch begins inside a batch".into());
            }
            script.push(StagerOp::batch(0, elide_idle));
            batch = (entries > 0).then_some((script.len() - 1, entries));
        }
        if let Event::TracePattern {
            session,
            funcs,
            op,
            flags,
        } = *e
        {
            let kind = match op {
                0 => PatternKind::True,
                1 => PatternKind::False,
                2 => PatternKind::Pause,
                3 => PatternKind::Restart,
                _ => return Err(format!("unknown trace_pattern op {op}")),
            };
            if session > 2 || funcs >> functions != 0 {
                return Err(format!(
                    "trace_pattern on session {session} / functions {funcs:#b} outside the spec's limits"
                ));
            }
            sessions = sessions.max(session as u8 + 1);
            if funcs != 0 {
                // call_time and call_memory (bits 2, 3) are the spec's one timem kind.
                let time = if flags & 0b1100 != 0 {
                    super::config::bits::TIME
                } else {
                    0
                };
                script.push(StagerOp::tp(
                    session as u8,
                    funcs as u8,
                    kind,
                    (flags & 3) | time,
                ));
                if let Some((at, _)) = batch {
                    if let StagerOp::Batch { len, .. } = &mut script[at] {
                        *len += 1;
                    }
                }
            }
            if let Some((at, left)) = batch {
                batch = (left > 1).then_some((at, left - 1));
            }
        }
    }
    if batch.is_some() {
        return Err("the history ends inside a batch's entries".into());
    }
    let cfg = Config::hits(schedulers, functions, sessions, script);
    cfg.validate()?;
    Ok(cfg)
}

fn spec_node(g: u64) -> Result<u8, String> {
    if g == 0 || g > 250 {
        Err(format!("GenericBp#{g} has no spec counterpart"))
    } else {
        Ok((g - 1) as u8)
    }
}

fn spec_ptr(g: Option<u64>) -> Result<u8, String> {
    g.map_or(Ok(NIL), spec_node)
}

/// The spec action for engine event `e` in state `s`, or why there is none.
fn action_for(cfg: &Config, s: &State, e: &Event) -> Result<Action, String> {
    let sched_mode = |i: usize| -> Result<Mode, String> {
        s.scheds
            .get(i)
            .map(|x| x.mode)
            .ok_or_else(|| format!("no scheduler {i} in the spec"))
    };
    // A relaxed read of `l` by scheduler `i` that returned `v`.
    let value = |i: usize, l: Loc, v: u8, name: &dyn Fn(u8) -> String| {
        may_read(s, i, l.index(cfg.functions), v, "", name)
    };
    let ix_name = |v: u8| v.to_string();
    let instr_name = |v: u8| {
        if v == BP {
            "breakpoint".into()
        } else {
            "original".into()
        }
    };
    let hit = |i: usize, want: HitStep| -> Result<super::state::Hit, String> {
        match sched_mode(i)? {
            Mode::Hit(h) if h.step == want => Ok(h),
            Mode::Hit(h) => Err(format!(
                "scheduler {i}'s next read in the spec is {:?}, not {want:?}",
                h.step
            )),
            m => Err(format!(
                "scheduler {i} is {m:?} in the spec, not inside a hit"
            )),
        }
    };
    let stager = |what: &str, ok: bool| -> Result<Action, String> {
        if ok && cfg.stager_enabled(s) {
            Ok(Action::Stager)
        } else if s.done(cfg) {
            Err(format!(
                "{what}, but the spec's stager has finished its script"
            ))
        } else {
            Err(format!(
                "{what}, but the spec's stager is at {:?}{} of {}",
                s.stager.phase,
                if s.stager.waiting { " (waiting)" } else { "" },
                cfg.script[s.stager.op as usize]
            ))
        }
    };
    let phase = s.stager.phase;
    let waiting = s.stager.waiting;
    use super::state::Phase as P;
    match *e {
        Event::TracePattern { .. } => stager("trace_pattern begins", phase == P::Stage),
        Event::Batch { .. } => stager("a batch begins", phase == P::Stage),
        Event::WaitBegin => stager("a wait begins", phase.wait_number().is_some() && !waiting),
        Event::WaitEnd => {
            if waiting && !cfg.stager_enabled(s) {
                let late: Vec<String> = s
                    .scheds
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| !x.counted)
                    .map(|(i, _)| format!("scheduler {i}"))
                    .collect();
                return Err(format!(
                    "the wait completes before {} passed a progress point (or slept) since it began",
                    late.join(" and ")
                ));
            }
            stager("a wait completes", waiting)
        }
        Event::Install => stager("install", phase == P::Install),
        Event::Commit => stager("flip", phase == P::Commit),
        Event::Uninstall => stager("uninstall", phase == P::Uninstall),
        Event::Consolidate => stager("consolidate", phase == P::Consolidate),
        Event::Free => stager("free", phase == P::Free),
        Event::Progress(i) => match sched_mode(i)? {
            Mode::Idle => Ok(Action::Progress(i as u8)),
            m => Err(format!("scheduler {i} passes a progress point while {m:?}")),
        },
        Event::Sleep(i) => match sched_mode(i)? {
            Mode::Idle => Ok(Action::Sleep(i as u8)),
            m => Err(format!("scheduler {i} goes to sleep while {m:?}")),
        },
        Event::Wake(i) => match sched_mode(i)? {
            Mode::Asleep => Ok(Action::Wake(i as u8)),
            m => Err(format!("scheduler {i} wakes up while {m:?}")),
        },
        Event::Instr {
            sched,
            func,
            breakpoint,
        } => {
            match sched_mode(sched)? {
                Mode::Idle => {}
                m => return Err(format!("scheduler {sched} calls while {m:?}")),
            }
            if func >= cfg.functions as usize {
                return Err(format!("no function f{func} in the spec"));
            }
            let v = if breakpoint { BP } else { ORIG };
            let stale = value(sched, Loc::Instr(func as u8), v, &instr_name)?;
            Ok(Action::Call(sched as u8, func as u8, stale))
        }
        Event::Slot { sched, func, node } => {
            let h = hit(sched, HitStep::Slot)?;
            if h.func as usize != func {
                return Err(format!("scheduler {sched} is in a hit of f{}", h.func));
            }
            let v = spec_ptr(node)?;
            let stale = value(sched, Loc::Slot(h.func), v, &|g| bp_name(g))?;
            Ok(Action::Read(sched as u8, stale))
        }
        Event::Ix { sched, ix } => {
            hit(sched, HitStep::Ix)?;
            let stale = value(sched, Loc::Ix, ix as u8, &ix_name)?;
            Ok(Action::Read(sched as u8, stale))
        }
        Event::Half { sched, node, ix } => {
            let h = hit(sched, HitStep::Half)?;
            if h.at != spec_node(node)? || h.ix as u32 != ix {
                return Err(format!(
                    "the spec's scheduler {sched} acts on half {} of {}",
                    h.ix,
                    bp_name(h.at)
                ));
            }
            Ok(Action::Read(sched as u8, false))
        }
        Event::Next { sched, node, next } => {
            let h = hit(sched, HitStep::Next)?;
            if h.at != spec_node(node)? {
                return Err(format!(
                    "the spec's scheduler {sched} stands on {}",
                    bp_name(h.at)
                ));
            }
            let v = spec_ptr(next)?;
            let stale = value(sched, Loc::Next(h.at), v, &|g| bp_name(g))?;
            Ok(Action::Read(sched as u8, stale))
        }
        Event::TimemIx { .. } | Event::TimemSlot { .. } | Event::TimemNext { .. } => {
            Err("a call_time reader's read is no step".into())
        }
        Event::Orig { sched, node } => {
            let h = hit(sched, HitStep::Orig)?;
            if h.head != spec_node(node)? {
                return Err(format!(
                    "the spec's scheduler {sched} started from {}",
                    bp_name(h.head)
                ));
            }
            Ok(Action::Read(sched as u8, false))
        }
    }
}

/// A call_time reader's read of the active index by scheduler `sched` that returned `ix`: the
/// spec lets it see the current value or the older one its view holds (not asleep); reading
/// the current value drops the older one.
fn timem_ix(cfg: &Config, s: &mut State, sched: usize, ix: u32) -> Result<(), String> {
    let x = s
        .scheds
        .get(sched)
        .ok_or_else(|| format!("no scheduler {sched} in the spec"))?;
    if x.mode == Mode::Asleep {
        return Err(format!(
            "scheduler {sched} reads the active index while asleep"
        ));
    }
    let v = u8::try_from(ix).map_err(|_| format!("active index {ix} out of range"))?;
    view_read(
        s,
        sched,
        Loc::Ix.index(cfg.functions),
        v,
        "the active index",
        &|v| v.to_string(),
    )
}

/// May scheduler `sched` read `v` from location index `i`? `Ok(false)`: the current value;
/// `Ok(true)`: the older value its view still holds; anything else is rejected, naming the
/// values as `what` followed by `name` of each.
fn may_read(
    s: &State,
    sched: usize,
    i: usize,
    v: u8,
    what: &str,
    name: &dyn Fn(u8) -> String,
) -> Result<bool, String> {
    let (cur, stale) = (s.cur[i], s.scheds[sched].stale[i]);
    if v == cur {
        Ok(false)
    } else if stale != FRESH && v == stale {
        Ok(true)
    } else {
        Err(format!(
            "scheduler {sched} cannot see {what}{}: the current value is {}{}",
            name(v),
            name(cur),
            if stale != FRESH {
                format!(" and its view still holds {}", name(stale))
            } else {
                ", and its view holds nothing older".into()
            }
        ))
    }
}

/// Scheduler `sched` read `v` from location index `i` ([`may_read`]); reading the current
/// value drops the older one its view holds (coherence).
fn view_read(
    s: &mut State,
    sched: usize,
    i: usize,
    v: u8,
    what: &str,
    name: &dyn Fn(u8) -> String,
) -> Result<(), String> {
    if !may_read(s, sched, i, v, &format!("{what} "), name)? {
        s.scheds[sched].stale[i] = FRESH;
    }
    Ok(())
}

/// A call_time reader's load of a slot or a `next` link (`TimemSlot`, `TimemNext`): like
/// [`timem_ix`], the value must be the current one or the older one the scheduler's view
/// holds, and reading the current one drops the older; the node it reads `next` of, and the
/// node it loads, must not be freed in the spec (I1 for the readers that walk the slot).
fn timem_link(cfg: &Config, s: &mut State, e: &Event) -> Result<(), String> {
    let (sched, loc, v) = match *e {
        Event::TimemSlot { sched, func, node } => {
            if func >= cfg.functions as usize {
                return Err(format!("no function f{func} in the spec"));
            }
            (sched, Loc::Slot(func as u8), spec_ptr(node)?)
        }
        Event::TimemNext { sched, node, next } => {
            let g = spec_node(node)?;
            if g as usize >= s.nodes.len() || s.nodes[g as usize].freed {
                return Err(format!(
                    "scheduler {sched}'s call_time reader reads next of {}, which the spec's \
                     stager has freed (or never made)",
                    bp_name(g)
                ));
            }
            (sched, Loc::Next(g), spec_ptr(next)?)
        }
        _ => unreachable!("slot and link reads only"),
    };
    let x = s
        .scheds
        .get(sched)
        .ok_or_else(|| format!("no scheduler {sched} in the spec"))?;
    if x.mode == Mode::Asleep {
        return Err(format!("scheduler {sched} reads {loc:?} while asleep"));
    }
    if v != NIL && (v as usize >= s.nodes.len() || s.nodes[v as usize].freed) {
        return Err(format!(
            "scheduler {sched}'s call_time reader loads {}, which the spec's stager has freed \
             (or never made)",
            bp_name(v)
        ));
    }
    let what = format!("{loc:?} ->");
    view_read(s, sched, loc.index(cfg.functions), v, &what, &|g| {
        bp_name(g)
    })
}

/// Check `events` (recorded by an engine with `schedulers` schedulers, which start asleep, and
/// `functions` functions). Returns the number of steps accepted.
pub fn check(events: &[Event], schedulers: u8, functions: u8) -> Result<usize, Rejection> {
    check_in(events, schedulers, functions, false)
}

/// [`check`] for an engine under the pipeline plan (`Config::pipeline`, docs/fewer-waits.md
/// §6). The engine returns from a call after consolidate and records the deferred free after
/// the next call's first wait; the spec takes a `Free` step that frees nothing and frees the
/// list when that wait completes. So the spec's `Free` step is taken, with no engine event,
/// before the engine's next event; and the engine's `Free` is no step, allowed only when the
/// spec's list is already empty (a wait that began after the consolidate has freed it).
pub fn check_pipelined(
    events: &[Event],
    schedulers: u8,
    functions: u8,
) -> Result<usize, Rejection> {
    check_in(events, schedulers, functions, true)
}

fn check_in(
    events: &[Event],
    schedulers: u8,
    functions: u8,
    pipeline: bool,
) -> Result<usize, Rejection> {
    let reject = |index: usize, reason: String| Rejection {
        index,
        event: events.get(index).copied().unwrap_or(Event::WaitBegin),
        reason,
    };
    let mut cfg = config_of(events, schedulers, functions).map_err(|r| reject(0, r))?;
    cfg.pipeline = pipeline;
    let m = BpModel::new(cfg.clone());
    let props = m.properties();
    let mut s = State::initial(&cfg);
    for x in &mut s.scheds {
        x.mode = Mode::Asleep;
    }
    // The entries of the batch under way that are still to come: their `TracePattern`s are the
    // batch's script, not steps (the batch's one stage step was its `Batch` event).
    let mut entries_left = 0u32;
    for (i, e) in events.iter().enumerate() {
        if let Event::Batch { entries, .. } = *e {
            entries_left = entries;
        } else if matches!(e, Event::TracePattern { .. }) && entries_left > 0 {
            entries_left -= 1;
            continue;
        }
        if matches!(e, Event::TracePattern { funcs: 0, .. }) {
            continue; // matched nothing: the spec's script omits it
        }
        if pipeline {
            use super::state::Phase;
            if *e == Event::Free {
                if !s.stager.free_list.is_empty() {
                    return Err(reject(
                        i,
                        "the engine frees nodes that no wait begun after their consolidate has \
                         passed (the spec's free list still holds them)"
                            .into(),
                    ));
                }
                continue;
            }
            if s.stager.phase == Phase::Free && !s.stager.waiting && cfg.stager_enabled(&s) {
                // The call returned after consolidate: the spec's Free step frees nothing.
                cfg.apply(&mut s, Action::Stager, &mut None);
            }
        }
        if let Event::TimemIx { sched, ix } = *e {
            timem_ix(&cfg, &mut s, sched, ix).map_err(|r| reject(i, r))?;
            continue;
        }
        if let Event::TimemSlot { .. } | Event::TimemNext { .. } = *e {
            timem_link(&cfg, &mut s, e).map_err(|r| reject(i, r))?;
            continue;
        }
        let a = action_for(&cfg, &s, e).map_err(|r| reject(i, r))?;
        debug_assert!(cfg.is_enabled(&s, a), "{a:?} chosen but not enabled");
        let mut n = s;
        cfg.apply(&mut n, a, &mut None);
        for p in &props {
            if p.expectation == Expectation::Always && !(p.condition)(&m, &n) {
                return Err(reject(
                    i,
                    format!("after it the spec's property {} is violated", p.name),
                ));
            }
        }
        s = n;
    }
    Ok(events.len())
}
