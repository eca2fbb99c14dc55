//! Linearizability of the engine's concurrent histories with code loading, against the
//! sequential oracle with its functions, patterns and counts.
//!
//! A history is what the threads of one concurrent run did and saw: each operation (a remote
//! call, possibly one after which the process stays in the version it ran, a local call from
//! that version, current or old, and its return out of it, a `trace_pattern` of call_count,
//! call_time or call_memory on one function in one session, a `trace_info` of its call_count or
//! of call_time's or call_memory's calls, a session's destruction, a load, a delete, a soft purge) with the thread
//! that made it, the moment it began and the moment it ended (one clock for the run), and what
//! it observed (a remote call also whether its export entry's global breakpoint acted, with
//! global call trace set by `trace_pattern(..., [global])`, and `trace_info` of `traced`; a
//! call whether its code's breakpoint sent a meta message, with `{meta, Tracer}` patterns). Each
//! call enters through the oracle's process stack (`Oracle::enter`, every
//! session call-traced, as the engine's processes are), so call_time and call_memory act on
//! it as in ERTS; their times and words are not compared. The history is accepted iff
//! there is one order of all its operations that
//! - keeps each thread's order, and puts `a` before `b` whenever `a` ended before `b` began
//!   (real time), and
//! - when replayed through [`Oracle`] one by one gives every operation the observation it made.
//!
//! A history that sets global trace replays a remote call as two steps, its export entry's
//! breakpoint and then its code's, each placed on its own within the call's interval: each
//! reads the active breakpoint index, so a `trace_pattern` may fall between them.
//!
//! That is linearizability (Herlihy and Wing) with the oracle as the sequential specification;
//! the search is Wing and Gong's (try each operation that may come next, undo on a mismatch),
//! with the states already refuted remembered. Observations are the oracle's own: the version a
//! call ran (the oracle's current version when it is linearized, counted from 1 as the
//! engine's) or `undef`, the sessions whose counter of the function it counted on, what
//! `trace_pattern` answered, the count `trace_info` answered, what a code operation answered.
//!
//! The oracle loads as ERTS does (CL1: a load over a current version leaves no breakpoint on
//! the module). The engine's load carries the module's patterns into the new version, each
//! counter starting again from zero as the new version's breakpoints are new: under
//! [`LoadRule::Carry`] the replay of a load is the oracle's load followed by each session's
//! call_count pattern on each function that had one before the load (or before the delete that
//! came first), oldest session first, `true` then `pause` if it was paused: what a new
//! version's on_load patterns do (CL8). docs/nonblocking-load.md §8 says why the engine carries.
//!
//! A process may stay in the version of a call and make local calls from it after a load or a
//! delete made it old: old code has no breakpoint left (CL1). Under [`LoadRule::Carry`] its
//! breakpoints go at the load's linearization point (the engine's `Blocking`, which clears
//! them under the block before its commit); under [`LoadRule::CarryRemovedLater`] at a second
//! point of the same load, before it ends (the engine's `NonBlocking`, whose removal of the
//! old version's breakpoints follows its commit), so a local call in old code may count after
//! a remote call saw the new version: a history ERTS, which clears under the block, does not
//! have, and which the stricter rule refuses.

use crate::code::CodeOp;
use crate::{Entry, Oracle};
use bpspec_reference::{
    FlagSet, InfoItem, InfoKey, InfoValue, Mfa, Pattern, PatternOp, Term, TraceSpec,
};
use std::collections::HashSet;
use std::fmt;

/// What a load does to the module's patterns in the replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadRule {
    /// ERTS (the oracle's CL1): no pattern survives a load or a delete.
    ClearErts,
    /// The engine's: the module's call_count patterns are carried into the new version with
    /// fresh counters (the patterns a delete left are carried by the load after it). The old
    /// version's breakpoints go at the load's (or delete's) linearization point, as under
    /// `Blocking`, which clears them under the block before its commit.
    Carry,
    /// [`LoadRule::Carry`], with the old version's breakpoints removed at a second point of the
    /// load (or delete): after its linearization point and before it ends. Until then a local
    /// call in the old version counts on the counters the version had when the load took
    /// effect. `NonBlocking`: the commit publishes the new version, the removal of the old
    /// one's breakpoints follows (its W0–W4 sequence) inside the same call, so a local call
    /// in old code may count after a remote call has seen the new version.
    CarryRemovedLater,
}

impl LoadRule {
    fn carries(self) -> bool {
        self != LoadRule::ClearErts
    }
}

/// One operation of a history, on the module's function `f` where it names one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinOp {
    /// A remote call `m:f()`.
    Call {
        f: usize,
    },
    /// `trace_pattern({m, f, 0}, op, [call_count])` in `session` (0: legacy).
    Pattern {
        session: u32,
        f: usize,
        op: PatternOp,
    },
    /// `trace_info({m, f, 0}, call_count)` in `session`.
    Info {
        session: u32,
        f: usize,
    },
    /// `trace:session_destroy/1` of `session` (not the legacy one).
    DestroySession {
        session: u32,
    },
    /// `trace_pattern({m, f, 0}, op, [call_time])` in `session` (0: legacy).
    TimePattern {
        session: u32,
        f: usize,
        op: PatternOp,
    },
    /// `trace_info({m, f, 0}, call_time)` in `session`: observed as the number of calls over
    /// every process's row ([`time_calls`]; the times are the clocks', not compared).
    TimeInfo {
        session: u32,
        f: usize,
    },
    /// `trace_pattern({m, f, 0}, op, [call_memory])` in `session`.
    MemPattern {
        session: u32,
        f: usize,
        op: PatternOp,
    },
    /// `trace_info({m, f, 0}, call_memory)` in `session`: the number of calls over every
    /// process's row, as [`LinOp::TimeInfo`] (the words are not compared).
    MemInfo {
        session: u32,
        f: usize,
    },
    /// `trace_pattern({m, f, 0}, op, [global])` in `session`: global call trace on the export
    /// entry (local and global exclude each other in a session).
    GlobalPattern {
        session: u32,
        f: usize,
        op: PatternOp,
    },
    /// `trace_pattern({m, f, 0}, op, [{meta, Tracer}])` in the legacy session (meta trace is
    /// the legacy session's only).
    MetaPattern {
        f: usize,
        op: PatternOp,
    },
    /// `trace_info({m, f, 0}, traced)` in `session`.
    Traced {
        session: u32,
        f: usize,
    },
    /// Whether `session` is alive (`trace:session_info/1` lists it): a session being destroyed
    /// is not, from the moment its destruction begins (ERTS's `erts_is_trace_session_alive`).
    SessionAlive {
        session: u32,
    },
    Load,
    Delete,
    SoftPurge,
    /// A remote call `m:f()` after which the process stays in the version it ran (a `receive`
    /// in `f`: the engine's `call_and_stay`): observed as a call.
    Stay {
        f: usize,
    },
    /// A local call `f()` from the version the process stays in, current or old (the engine's
    /// `local_call`): observed as a call of that version.
    Local {
        f: usize,
    },
    /// The process returns out of the version it stays in (the engine's `return_out`).
    Return,
}

/// What an operation observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinObs {
    /// A call: the version it ran (0: `undef`), the sessions it counted in (bit `s`), and
    /// whether it ran a global breakpoint of its export entry that acted (a call message to
    /// some session).
    Call {
        version: u64,
        counted: u64,
        global: bool,
        /// The code's breakpoint sent a meta message.
        meta: bool,
    },
    /// `trace_info` of `traced`.
    Traced(TracedAs),
    /// `trace_pattern`: the number of functions matched.
    Matched(usize),
    /// `trace_info`: `Some(Some(n))` a count, `Some(None)` `false`, `None` `undefined`.
    Count(Option<Option<u64>>),
    /// A code operation's answer (`{module, m}` / `true` as `true`).
    Answer(bool),
}

/// What `trace_info(MFA, traced)` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracedAs {
    Undefined,
    False,
    Local,
    Global,
    /// Anything else (no replay gives it).
    Other,
}

/// `{traced, Value}` as a [`LinObs::Traced`].
pub fn traced_of(t: &Term) -> LinObs {
    let v = match t {
        Term::Tuple(kv) => match kv.get(1) {
            Some(Term::Atom("undefined")) => TracedAs::Undefined,
            Some(Term::Atom("false")) => TracedAs::False,
            Some(Term::Atom("local")) => TracedAs::Local,
            Some(Term::Atom("global")) => TracedAs::Global,
            _ => TracedAs::Other,
        },
        _ => TracedAs::Other,
    };
    LinObs::Traced(v)
}

/// One operation of a history, as it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinRecord {
    pub thread: usize,
    pub op: LinOp,
    pub obs: LinObs,
    /// The run's clock when it began and when it ended (`begin < end`).
    pub begin: u64,
    pub end: u64,
}

impl fmt::Display for LinRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t{} [{}..{}] {:?} -> {:?}",
            self.thread, self.begin, self.end, self.op, self.obs
        )
    }
}

/// Why a history was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// No order of the operations replays through the oracle. `longest` is the longest prefix
    /// of an order that did (indices into the history), `history` the history by its begins.
    NotLinearizable {
        longest: Vec<usize>,
        history: Vec<LinRecord>,
    },
    /// The search visited `limit` states without an answer.
    SearchLimit { limit: usize },
    /// The history itself is malformed (what and where).
    Malformed(String),
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::NotLinearizable { longest, history } => {
                writeln!(f, "no linearization replays through the oracle; history:")?;
                for (i, r) in history.iter().enumerate() {
                    writeln!(f, "  #{i} {r}")?;
                }
                write!(f, "longest replayed prefix: {longest:?}")
            }
            Rejection::SearchLimit { limit } => {
                write!(
                    f,
                    "the linearization search stopped at its limit of {limit} states"
                )
            }
            Rejection::Malformed(m) => write!(f, "malformed history: {m}"),
        }
    }
}

/// The states the search may visit before it gives up ([`Rejection::SearchLimit`]).
pub const SEARCH_LIMIT: usize = 1_000_000;

/// The replay's state: the oracle and, under [`LoadRule::Carry`], the patterns the last delete
/// left for the next load.
/// A kind of counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Count,
    Time,
    Memory,
    /// Global call trace on the export entry (`running` always).
    Global,
    /// Meta trace (legacy session; `running` always).
    Meta,
}

/// A counter of a session on a function: (session, function, running, kind).
type Counter = (u32, usize, bool, Kind);

#[derive(Clone, Debug)]
struct Replay {
    oracle: Oracle,
    /// Each counter a delete took away.
    deleted: Vec<Counter>,
    /// [`LoadRule::CarryRemovedLater`]: the old version whose breakpoints a linearized load or
    /// delete has not removed yet, its counters as (session, function, running), and the end
    /// of that load or delete (the removal comes before any operation that began after it).
    removal: Option<(u64, Vec<Counter>, u64)>,
    /// The threads (a bit each) whose next operation is a remote call whose export entry's
    /// half is replayed already ([`Search::split`]).
    export_done: u64,
}

struct Search<'a> {
    module: &'a str,
    funcs: &'a [Mfa],
    /// Sessions 0 (legacy) to `sessions`, created before the run.
    sessions: u32,
    rule: LoadRule,
    history: &'a [LinRecord],
    /// Each thread's operations, by begin.
    threads: Vec<Vec<usize>>,
    refuted: HashSet<(Vec<usize>, String)>,
    /// A remote call is two steps, the export entry's breakpoint and then the code's, each
    /// reading the active breakpoint index (ERTS: two hits of one call): a `trace_pattern`
    /// may fall between them. On when the history sets global trace, the only pattern whose
    /// breakpoints are on the export entry.
    split: bool,
    visited: usize,
    longest: Vec<usize>,
}

fn count_spec(session: u32) -> TraceSpec {
    TraceSpec::from(FlagSet {
        call_count: true,
        ..FlagSet::default()
    })
    .session(session)
}

fn spec_of(kind: Kind, session: u32) -> TraceSpec {
    if kind == Kind::Global {
        return TraceSpec::global().session(session);
    }
    if kind == Kind::Meta {
        return TraceSpec::default().meta(meta_tracer());
    }
    TraceSpec::from(FlagSet {
        call_count: kind == Kind::Count,
        call_time: kind == Kind::Time,
        call_memory: kind == Kind::Memory,
        ..FlagSet::default()
    })
    .session(session)
}

/// `{call_time, Rows}` as the number of calls over the rows (`{Pid, Count, S, Us}` each;
/// call_memory's `{Pid, Count, Words}` alike): `Some(Some(n))`; `{call_time, false}` as
/// `Some(None)`, `{call_time, undefined}` as `None`.
/// Any other shape is `Some(Some(u64::MAX))`, which no replay gives.
pub fn time_calls(t: &Term) -> Option<Option<u64>> {
    let Term::Tuple(kv) = t else {
        return Some(Some(u64::MAX));
    };
    match kv.get(1) {
        Some(Term::Atom("undefined")) => None,
        Some(Term::Atom("false")) => Some(None),
        Some(Term::List(rows)) => Some(Some(rows.iter().fold(0, |n, r| match r {
            Term::Tuple(row) => match row.get(1) {
                Some(&Term::Int(c)) if c >= 0 => n + c as u64,
                _ => u64::MAX,
            },
            _ => u64::MAX,
        }))),
        _ => Some(Some(u64::MAX)),
    }
}

/// The meta tracer of a replay: `{tracer, Pid}` (the oracle keeps the pid only).
fn meta_tracer() -> bpspec_reference::TracerSpec {
    bpspec_reference::ProcessTracer::spec(&bpspec_reference::Mailbox::new(0))
}

/// Every session is call-traced (the engine's processes are, `Scheduler::trace_code_proc`):
/// what call_time needs to act.
const ALL_SESSIONS: u64 = u64::MAX;

fn count_of(o: &Oracle, session: u32, mfa: &Mfa) -> Option<Option<u64>> {
    match o.trace_info(session, mfa, InfoItem::CallCount) {
        InfoValue::Undefined => None,
        InfoValue::Count(n) => Some(Some(n)),
        _ => Some(None),
    }
}

impl Search<'_> {
    fn pattern_of(&self, f: usize) -> Pattern {
        let m = &self.funcs[f];
        Pattern {
            module: Some(m.module.clone()),
            name: Some(m.name.clone()),
            arity: Some(m.arity),
        }
    }

    /// Every live session's call_count, call_time and call_memory counters, by session
    /// (oldest first), then function, in that order.
    fn counters(&self, o: &Oracle) -> Vec<Counter> {
        (0..=self.sessions)
            .filter(|&s| o.session_alive(s))
            .flat_map(|s| {
                (0..self.funcs.len()).flat_map(move |f| {
                    let count = o.counter(s, f).map(|(_, on)| (s, f, on, Kind::Count));
                    let time = o.time_counter(s, f).map(|on| (s, f, on, Kind::Time));
                    let mem = o.memory_counter(s, f).map(|on| (s, f, on, Kind::Memory));
                    let global = o.global_on(s, f).then_some((s, f, true, Kind::Global));
                    let meta = (s == 0 && o.meta_on(f)).then_some((s, f, true, Kind::Meta));
                    count
                        .into_iter()
                        .chain(time)
                        .chain(mem)
                        .chain(global)
                        .chain(meta)
                })
            })
            .collect()
    }

    fn carry(&self, o: &mut Oracle, carried: &[Counter]) {
        for &(s, f, running, kind) in carried {
            // The export breakpoint: `Blocking` clears it as ERTS's `delete_code` does,
            // `NonBlocking` keeps it on the entry.
            let global_kept = self.rule == LoadRule::CarryRemovedLater;
            if !o.session_alive(s) || (kind == Kind::Global && !global_kept) {
                continue;
            }
            let p = self.pattern_of(f);
            let spec = spec_of(kind, s);
            let set = o.trace_pattern(&p, PatternOp::True, &spec);
            assert_eq!(set, Ok(1), "the carried pattern on {:?}", self.funcs[f]);
            if !running {
                let paused = o.trace_pattern(&p, PatternOp::Pause, &spec);
                assert_eq!(paused, Ok(1), "the carried pause on {:?}", self.funcs[f]);
            }
        }
    }

    /// A call of `f` by `pid` entered `how` (the process's frames and call_time state, the
    /// oracle's `enter`), returning at once unless it stays; the sessions it counted in, and
    /// whether it sent a call message (the patterns of a history have no `local` flag, so a
    /// message is the export entry's global breakpoint's).
    fn enter(
        &self,
        o: &mut Oracle,
        f: usize,
        pid: u64,
        how: Entry,
        stays: bool,
    ) -> (u64, bool, bool) {
        let before = self.counts(o, f);
        let events = o.enter(f, pid, ALL_SESSIONS, how);
        let meta = !o.take_meta().is_empty();
        if !stays {
            o.ret(pid, ALL_SESSIONS);
        }
        let after = self.counts(o, f);
        let counted = (0..before.len())
            .filter(|&s| before[s] != after[s])
            .fold(0u64, |m, s| m | 1 << s);
        (counted, !events.is_empty(), meta)
    }

    /// Every session's call_count answer for `f` (a call changes those it counts in).
    fn counts(&self, o: &Oracle, f: usize) -> Vec<Option<Option<u64>>> {
        (0..=self.sessions)
            .map(|s| count_of(o, s, &self.funcs[f]))
            .collect()
    }

    /// Replay `op` (which ended at `end`) on `r`; its observation.
    fn apply(&self, r: &mut Replay, op: LinOp, end: u64, pid: u64) -> LinObs {
        let lop = op;
        let o = &mut r.oracle;
        match op {
            LinOp::Call { f } | LinOp::Stay { f } => {
                if !o.is_loaded(f) {
                    return LinObs::Call {
                        version: 0,
                        counted: 0,
                        global: false,
                        meta: false,
                    };
                }
                let remote = Entry {
                    remote: true,
                    ..Entry::default()
                };
                let stays = matches!(op, LinOp::Stay { .. });
                let (counted, global, meta) = self.enter(o, f, pid, remote, stays);
                if stays {
                    o.wait_in(pid, f);
                }
                LinObs::Call {
                    version: o.current_version(self.module).map_or(0, |v| v + 1),
                    counted,
                    global,
                    meta,
                }
            }
            LinOp::Pattern { session, f, op } => {
                let p = self.pattern_of(f);
                let spec = count_spec(session);
                LinObs::Matched(o.trace_pattern(&p, op, &spec).unwrap_or(usize::MAX))
            }
            LinOp::Info { session, f } => LinObs::Count(count_of(o, session, &self.funcs[f])),
            LinOp::TimePattern { session, f, op } | LinOp::MemPattern { session, f, op } => {
                let kind = match lop {
                    LinOp::TimePattern { .. } => Kind::Time,
                    _ => Kind::Memory,
                };
                let p = self.pattern_of(f);
                let spec = spec_of(kind, session);
                LinObs::Matched(o.trace_pattern(&p, op, &spec).unwrap_or(usize::MAX))
            }
            LinOp::TimeInfo { session, f } | LinOp::MemInfo { session, f } => {
                let key = match lop {
                    LinOp::TimeInfo { .. } => InfoKey::CallTime,
                    _ => InfoKey::CallMemory,
                };
                LinObs::Count(time_calls(&o.trace_info_term(session, &self.funcs[f], key)))
            }
            LinOp::GlobalPattern { session, f, op } => {
                let p = self.pattern_of(f);
                let spec = spec_of(Kind::Global, session);
                LinObs::Matched(o.trace_pattern(&p, op, &spec).unwrap_or(usize::MAX))
            }
            LinOp::Traced { session, f } => {
                traced_of(&o.trace_info_term(session, &self.funcs[f], InfoKey::Traced))
            }
            LinOp::MetaPattern { f, op } => {
                let p = self.pattern_of(f);
                LinObs::Matched(
                    o.trace_pattern(&p, op, &spec_of(Kind::Meta, 0))
                        .unwrap_or(usize::MAX),
                )
            }
            LinOp::DestroySession { session } => LinObs::Answer(o.destroy_session(session)),
            LinOp::SessionAlive { session } => LinObs::Answer(o.session_alive(session)),
            LinOp::Load => {
                let old = o.current_version(self.module);
                let carried = if old.is_some() {
                    self.counters(o)
                } else {
                    std::mem::take(&mut r.deleted)
                };
                let answer = o.code_op(CodeOp::Load, self.module);
                if self.rule.carries() {
                    self.carry(o, &carried);
                }
                if let (Some(v), LoadRule::CarryRemovedLater) = (old, self.rule) {
                    r.removal = Some((v, carried, end));
                }
                LinObs::Answer(answer)
            }
            LinOp::Delete => {
                let old = o.current_version(self.module);
                let carried = self.counters(o);
                let answer = o.code_op(CodeOp::Delete, self.module);
                if answer && old.is_some() {
                    r.deleted = carried.clone();
                    if let (Some(v), LoadRule::CarryRemovedLater) = (old, self.rule) {
                        r.removal = Some((v, carried, end));
                    }
                }
                LinObs::Answer(answer)
            }
            LinOp::SoftPurge => LinObs::Answer(o.code_op(CodeOp::SoftPurge, self.module)),
            LinOp::Local { f } => {
                // A local call with no version to make it from cannot be linearized here.
                let Some(v) = o.waiting_version(pid) else {
                    return LinObs::Answer(false);
                };
                if o.current_version(self.module) != Some(v) {
                    // Old code: no breakpoint is left on it (CL1, and the engine's removal),
                    // unless its removal is still to come (`CarryRemovedLater`): then the
                    // call_count counters it had, of the sessions still alive (what its
                    // call_time counters count no `trace_info` reads).
                    let kept: &[Counter] = match &r.removal {
                        Some((w, bps, _)) if *w == v => bps,
                        _ => &[],
                    };
                    let counted = kept
                        .iter()
                        .filter(|&&(s, g, running, kind)| {
                            g == f && running && kind == Kind::Count && o.session_alive(s)
                        })
                        .fold(0u64, |m, &(s, ..)| m | 1 << s);
                    let meta = kept
                        .iter()
                        .any(|&(_, g, _, kind)| g == f && kind == Kind::Meta);
                    let old = Entry {
                        old: true,
                        ..Entry::BODY
                    };
                    self.enter(o, f, pid, old, false);
                    return LinObs::Call {
                        version: v + 1,
                        counted,
                        global: false,
                        meta,
                    };
                }
                let (counted, _, meta) = self.enter(o, f, pid, Entry::BODY, false);
                LinObs::Call {
                    version: v + 1,
                    counted,
                    global: false,
                    meta,
                }
            }
            LinOp::Return => {
                if o.waiting_version(pid).is_none() {
                    return LinObs::Answer(false);
                }
                o.ret(pid, ALL_SESSIONS);
                LinObs::Answer(o.leave(pid))
            }
        }
    }

    /// May thread `t`'s next operation come next? No other pending operation ended before it
    /// began (each thread's first pending operation ends first among its pending ones).
    fn may_come_next(&self, pos: &[usize], t: usize) -> bool {
        let me = &self.history[self.threads[t][pos[t]]];
        (0..self.threads.len()).all(|u| {
            u == t
                || self.threads[u]
                    .get(pos[u])
                    .is_none_or(|&i| self.history[i].end > me.begin)
        })
    }

    fn go(
        &mut self,
        r: &Replay,
        pos: &mut Vec<usize>,
        order: &mut Vec<usize>,
    ) -> Result<bool, Rejection> {
        if order.len() == self.history.len() {
            return Ok(true);
        }
        self.visited += 1;
        if self.visited > SEARCH_LIMIT {
            return Err(Rejection::SearchLimit {
                limit: SEARCH_LIMIT,
            });
        }
        let key = (pos.clone(), format!("{r:?}"));
        if self.refuted.contains(&key) {
            return Ok(false);
        }
        // `CarryRemovedLater`: the old version's breakpoints removed now (a step of the load
        // already linearized, observed by nobody).
        let due = r.removal.as_ref().map(|&(_, _, end)| end);
        if due.is_some() {
            let mut next = r.clone();
            next.removal = None;
            if self.go(&next, pos, order)? {
                return Ok(true);
            }
        }
        for t in 0..self.threads.len() {
            if pos[t] == self.threads[t].len() || !self.may_come_next(pos, t) {
                continue;
            }
            let i = self.threads[t][pos[t]];
            let rec = self.history[i];
            if due.is_some_and(|end| rec.begin > end) {
                continue; // began after the load ended: its removal comes first
            }
            let pid = 1 + t as u64;
            let remote = matches!(rec.op, LinOp::Call { .. } | LinOp::Stay { .. });
            let half = self.split && remote;
            if half && r.export_done & (1 << t) == 0 {
                // The export entry's half: its global breakpoint acts or not.
                let (LinOp::Call { f } | LinOp::Stay { f }) = rec.op else {
                    unreachable!()
                };
                let LinObs::Call { global, .. } = rec.obs else {
                    continue;
                };
                let o = &r.oracle;
                if global != (o.is_loaded(f) && !o.export_hit(f, pid, ALL_SESSIONS).is_empty()) {
                    continue;
                }
                let mut next = r.clone();
                next.export_done |= 1 << t;
                if self.go(&next, pos, order)? {
                    return Ok(true);
                }
                continue;
            }
            let mut next = r.clone();
            next.export_done &= !(1 << t);
            // One pid per thread: a thread is one process (its stay in a version is the
            // oracle's `wait_in`).
            let seen = self.apply(&mut next, rec.op, rec.end, pid);
            let code_half = |o: LinObs| match o {
                LinObs::Call {
                    version,
                    counted,
                    meta,
                    ..
                } if half => LinObs::Call {
                    version,
                    counted,
                    global: false,
                    meta,
                },
                other => other,
            };
            if code_half(seen) != code_half(rec.obs) {
                continue;
            }
            pos[t] += 1;
            order.push(i);
            if order.len() > self.longest.len() {
                self.longest = order.clone();
            }
            if self.go(&next, pos, order)? {
                return Ok(true);
            }
            order.pop();
            pos[t] -= 1;
        }
        self.refuted.insert(key);
        Ok(false)
    }
}

/// Accept `history` iff it linearizes against the oracle on `funcs` (all of module `module`,
/// the module's first version current, sessions 1 to `sessions` created) under `rule`; on
/// acceptance, the order found (indices into `history`).
pub fn check(
    module: &str,
    funcs: &[Mfa],
    sessions: u32,
    history: &[LinRecord],
    rule: LoadRule,
) -> Result<Vec<usize>, Rejection> {
    let mut threads: Vec<Vec<usize>> = Vec::new();
    for (i, r) in history.iter().enumerate() {
        if r.begin >= r.end {
            return Err(Rejection::Malformed(format!(
                "#{i} ({r}) ends before it begins"
            )));
        }
        let (f, session) = match r.op {
            LinOp::Call { f }
            | LinOp::Stay { f }
            | LinOp::Local { f }
            | LinOp::MetaPattern { f, .. } => (Some(f), None),
            LinOp::Pattern { session, f, .. }
            | LinOp::Info { session, f }
            | LinOp::TimePattern { session, f, .. }
            | LinOp::TimeInfo { session, f }
            | LinOp::MemPattern { session, f, .. }
            | LinOp::MemInfo { session, f }
            | LinOp::GlobalPattern { session, f, .. }
            | LinOp::Traced { session, f } => (Some(f), Some(session)),
            LinOp::DestroySession { session } | LinOp::SessionAlive { session } => {
                (None, Some(session))
            }
            _ => (None, None),
        };
        if let Some(s) = session.filter(|&s| s > sessions) {
            return Err(Rejection::Malformed(format!(
                "#{i} ({r}) names session {s} of {sessions}"
            )));
        }
        if let Some(f) = f.filter(|&f| f >= funcs.len()) {
            return Err(Rejection::Malformed(format!(
                "#{i} ({r}) names function {f} of {}",
                funcs.len()
            )));
        }
        if threads.len() <= r.thread {
            threads.resize(r.thread + 1, Vec::new());
        }
        threads[r.thread].push(i);
    }
    for (t, ops) in threads.iter_mut().enumerate() {
        ops.sort_by_key(|&i| history[i].begin);
        for w in ops.windows(2) {
            if history[w[0]].end > history[w[1]].begin {
                return Err(Rejection::Malformed(format!(
                    "thread {t}: #{} and #{} overlap",
                    w[0], w[1]
                )));
            }
        }
    }
    let mut s = Search {
        module,
        funcs,
        sessions,
        rule,
        history,
        threads,
        refuted: HashSet::new(),
        split: false,
        visited: 0,
        longest: Vec::new(),
    };
    let mut oracle = Oracle::new(funcs.to_vec());
    for _ in 0..sessions {
        oracle.create_session();
    }
    s.split = history
        .iter()
        .any(|r| matches!(r.op, LinOp::GlobalPattern { .. }));
    let start = Replay {
        oracle,
        deleted: Vec::new(),
        removal: None,
        export_done: 0,
    };
    let mut pos = vec![0; s.threads.len()];
    let mut order = Vec::with_capacity(history.len());
    if s.go(&start, &mut pos, &mut order)? {
        return Ok(order);
    }
    let mut by_begin = history.to_vec();
    by_begin.sort_by_key(|r| r.begin);
    let longest = s
        .longest
        .iter()
        .map(|&i| {
            by_begin
                .iter()
                .position(|r| *r == history[i])
                .expect("a record of the history")
        })
        .collect();
    Err(Rejection::NotLinearizable {
        longest,
        history: by_begin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn funcs() -> Vec<Mfa> {
        vec![Mfa::new("m", "f0", 0)]
    }

    fn rec(thread: usize, begin: u64, end: u64, op: LinOp, obs: LinObs) -> LinRecord {
        LinRecord {
            thread,
            op,
            obs,
            begin,
            end,
        }
    }

    const CALL: LinOp = LinOp::Call { f: 0 };
    const ON: LinOp = LinOp::Pattern {
        session: 0,
        f: 0,
        op: PatternOp::True,
    };
    const INFO: LinOp = LinOp::Info { session: 0, f: 0 };

    fn ran(version: u64, counted: bool) -> LinObs {
        LinObs::Call {
            version,
            counted: u64::from(counted),
            global: false,
            meta: false,
        }
    }

    /// A counted call that overlaps the pattern's setting linearizes after it; one that ended
    /// before the setting began cannot count.
    #[test]
    fn a_call_counts_only_after_the_pattern() {
        let overlapping = [
            rec(0, 1, 4, ON, LinObs::Matched(1)),
            rec(1, 2, 3, CALL, ran(1, true)),
            rec(0, 5, 6, INFO, LinObs::Count(Some(Some(1)))),
        ];
        assert!(check("m", &funcs(), 0, &overlapping, LoadRule::ClearErts).is_ok());
        let before = [
            rec(1, 1, 2, CALL, ran(1, true)),
            rec(0, 3, 4, ON, LinObs::Matched(1)),
        ];
        let e = check("m", &funcs(), 0, &before, LoadRule::ClearErts).unwrap_err();
        assert!(matches!(e, Rejection::NotLinearizable { .. }), "{e}");
    }

    /// After a load, ERTS's rule has no counter left; the engine's carries it from zero.
    #[test]
    fn the_load_rule_decides_the_count_after_a_load() {
        let h = [
            rec(0, 1, 2, ON, LinObs::Matched(1)),
            rec(1, 3, 4, CALL, ran(1, true)),
            rec(0, 5, 6, LinOp::Load, LinObs::Answer(true)),
            rec(1, 7, 8, CALL, ran(2, true)),
            rec(0, 9, 10, INFO, LinObs::Count(Some(Some(1)))),
        ];
        assert!(check("m", &funcs(), 0, &h, LoadRule::Carry).is_ok());
        assert!(check("m", &funcs(), 0, &h, LoadRule::ClearErts).is_err());
        // A call that ran the new version before the load began is refused under both.
        let early = [
            rec(1, 1, 2, CALL, ran(2, false)),
            rec(0, 3, 4, LinOp::Load, LinObs::Answer(true)),
        ];
        assert!(check("m", &funcs(), 0, &early, LoadRule::Carry).is_err());
    }

    /// A delete's patterns come back with the next load under `Carry`; calls between are
    /// `undef`.
    #[test]
    fn a_delete_leaves_its_patterns_for_the_next_load() {
        let h = [
            rec(0, 1, 2, ON, LinObs::Matched(1)),
            rec(0, 3, 4, LinOp::Delete, LinObs::Answer(true)),
            rec(1, 5, 6, CALL, ran(0, false)),
            rec(0, 7, 8, INFO, LinObs::Count(None)),
            rec(0, 9, 10, LinOp::SoftPurge, LinObs::Answer(true)),
            rec(0, 11, 12, LinOp::Load, LinObs::Answer(true)),
            rec(1, 13, 14, CALL, ran(2, true)),
        ];
        assert!(check("m", &funcs(), 0, &h, LoadRule::Carry).is_ok());
        assert!(check("m", &funcs(), 0, &h, LoadRule::ClearErts).is_err());
    }

    /// A process that stays in version 1 across a load: a local call it makes after the load
    /// ended runs version 1 uncounted (old code has no breakpoint left), one that overlaps the
    /// load may count (linearized before it), one after the load that counted is refused; a
    /// soft purge is refused while the process stays and accepted after its return.
    #[test]
    fn local_calls_in_old_code_count_nothing() {
        let stay = LinOp::Stay { f: 0 };
        let local = LinOp::Local { f: 0 };
        let base = |after_load: LinObs, overlapping: LinObs| {
            vec![
                rec(0, 1, 2, ON, LinObs::Matched(1)),
                rec(1, 3, 4, stay, ran(1, true)),
                rec(0, 5, 8, LinOp::Load, LinObs::Answer(true)),
                rec(1, 6, 7, local, overlapping),
                rec(1, 9, 10, local, after_load),
                rec(0, 11, 12, LinOp::SoftPurge, LinObs::Answer(false)),
                rec(1, 13, 14, LinOp::Return, LinObs::Answer(true)),
                rec(0, 15, 16, LinOp::SoftPurge, LinObs::Answer(true)),
                rec(0, 17, 18, INFO, LinObs::Count(Some(Some(0)))),
            ]
        };
        for overlapping in [ran(1, true), ran(1, false)] {
            let h = base(ran(1, false), overlapping);
            assert!(check("m", &funcs(), 0, &h, LoadRule::Carry).is_ok());
        }
        let counted_late = base(ran(1, true), ran(1, false));
        let e = check("m", &funcs(), 0, &counted_late, LoadRule::Carry).unwrap_err();
        assert!(matches!(e, Rejection::NotLinearizable { .. }), "{e}");
        // A local call of the new version from a process that stayed in the old one.
        let wrong_version = base(ran(2, false), ran(1, false));
        assert!(check("m", &funcs(), 0, &wrong_version, LoadRule::Carry).is_err());
        // The purge that succeeds while the process still stays.
        let mut early_purge = base(ran(1, false), ran(1, false));
        early_purge[5].obs = LinObs::Answer(true);
        assert!(check("m", &funcs(), 0, &early_purge, LoadRule::Carry).is_err());
    }

    /// The shape shuttle found on the engine under `NonBlocking` (`lin-old-code-delete`): a
    /// remote call sees the delete (`undef`), and a local call in the deleted version that
    /// began after it still counts, since the removal of its breakpoints follows the commit
    /// inside the delete. Refused under `Carry` (the breakpoints go at the delete's point),
    /// accepted under `CarryRemovedLater`; a local call that counts after the delete ended is
    /// refused under both.
    #[test]
    fn old_breakpoints_removed_later_than_the_commit() {
        let stay = LinOp::Stay { f: 0 };
        let local = LinOp::Local { f: 0 };
        let h = |local_begin, local_end| {
            [
                rec(0, 1, 2, ON, LinObs::Matched(1)),
                rec(1, 3, 4, stay, ran(1, true)),
                rec(0, 5, 15, LinOp::Delete, LinObs::Answer(true)),
                rec(2, 6, 7, CALL, ran(0, false)),
                rec(1, local_begin, local_end, local, ran(1, true)),
            ]
        };
        let during = h(9, 10);
        let e = check("m", &funcs(), 0, &during, LoadRule::Carry).unwrap_err();
        assert!(matches!(e, Rejection::NotLinearizable { .. }), "{e}");
        assert!(check("m", &funcs(), 0, &during, LoadRule::CarryRemovedLater).is_ok());
        let after = h(16, 17);
        for rule in [LoadRule::Carry, LoadRule::CarryRemovedLater] {
            assert!(check("m", &funcs(), 0, &after, rule).is_err(), "{rule:?}");
        }
    }

    /// call_time's calls: `trace_info` answers the calls over every process's row; a call that
    /// ended before the pattern began is not among them, a paused counter keeps its calls, and
    /// a load gives the new version a fresh counter (`Carry`).
    #[test]
    fn call_time_counts_its_calls() {
        let time = |op| LinOp::TimePattern {
            session: 0,
            f: 0,
            op,
        };
        let tinfo = LinOp::TimeInfo { session: 0, f: 0 };
        let calls = |n| LinObs::Count(Some(Some(n)));
        let h = |after_pause: u64, after_load: u64| {
            [
                rec(1, 1, 2, CALL, ran(1, false)),
                rec(0, 3, 4, time(PatternOp::True), LinObs::Matched(1)),
                rec(1, 5, 6, CALL, ran(1, false)),
                rec(0, 7, 8, time(PatternOp::Pause), LinObs::Matched(1)),
                rec(1, 9, 10, CALL, ran(1, false)),
                rec(0, 11, 12, tinfo, calls(after_pause)),
                rec(0, 13, 14, LinOp::Load, LinObs::Answer(true)),
                rec(0, 15, 16, tinfo, calls(after_load)),
            ]
        };
        assert!(check("m", &funcs(), 0, &h(1, 0), LoadRule::Carry).is_ok());
        for (a, b) in [(2, 0), (0, 0), (1, 1)] {
            assert!(
                check("m", &funcs(), 0, &h(a, b), LoadRule::Carry).is_err(),
                "{a} {b}"
            );
        }
        let row = |c| Term::Tuple(vec![Term::Pid(1), Term::Int(c), Term::Int(0), Term::Int(0)]);
        let pair = |v| Term::Tuple(vec![Term::Atom("call_time"), v]);
        assert_eq!(
            time_calls(&pair(Term::List(vec![row(2), row(3)]))),
            Some(Some(5))
        );
        assert_eq!(time_calls(&pair(Term::Atom("false"))), Some(None));
        assert_eq!(time_calls(&pair(Term::Atom("undefined"))), None);
        assert_eq!(time_calls(&Term::Atom("x")), Some(Some(u64::MAX)));
    }

    /// Global call trace on the export entry: a remote call sends a call message while a
    /// session has it; a counter set in that session takes it away (local and global exclude
    /// each other); across a load `Carry` (`Blocking`, as ERTS) clears it and
    /// `CarryRemovedLater` (`NonBlocking`) keeps it.
    #[test]
    fn global_trace_across_a_load() {
        let g = |op| LinOp::GlobalPattern {
            session: 0,
            f: 0,
            op,
        };
        let traced = LinOp::Traced { session: 0, f: 0 };
        let call = |version, counted, global| LinObs::Call {
            version,
            counted,
            global,
            meta: false,
        };
        let h = |after_load: bool| {
            [
                rec(0, 1, 2, g(PatternOp::True), LinObs::Matched(1)),
                rec(1, 3, 4, CALL, call(1, 0, true)),
                rec(0, 5, 6, traced, LinObs::Traced(TracedAs::Global)),
                rec(0, 7, 8, LinOp::Load, LinObs::Answer(true)),
                rec(1, 9, 10, CALL, call(2, 0, after_load)),
                rec(0, 11, 12, ON, LinObs::Matched(1)),
                rec(1, 13, 14, CALL, call(2, 1, false)),
                rec(0, 15, 16, traced, LinObs::Traced(TracedAs::False)),
            ]
        };
        assert!(check("m", &funcs(), 0, &h(false), LoadRule::Carry).is_ok());
        assert!(check("m", &funcs(), 0, &h(true), LoadRule::Carry).is_err());
        assert!(check("m", &funcs(), 0, &h(true), LoadRule::CarryRemovedLater).is_ok());
        assert!(check("m", &funcs(), 0, &h(false), LoadRule::CarryRemovedLater).is_err());
        // One call, two hits: the export entry's before the pattern that moves the session
        // from global to call_count, the code's after it, so it both sends its call message
        // and counts; a call whose two halves are both after the pattern cannot.
        let moved = |begin, end| {
            [
                rec(0, 1, 2, g(PatternOp::True), LinObs::Matched(1)),
                rec(0, 3, 8, ON, LinObs::Matched(1)),
                rec(1, begin, end, CALL, call(1, 1, true)),
            ]
        };
        assert!(check("m", &funcs(), 0, &moved(4, 5), LoadRule::Carry).is_ok());
        assert!(check("m", &funcs(), 0, &moved(9, 10), LoadRule::Carry).is_err());
        let row = |v| Term::Tuple(vec![Term::Atom("traced"), Term::Atom(v)]);
        assert_eq!(traced_of(&row("global")), LinObs::Traced(TracedAs::Global));
        assert_eq!(traced_of(&row("x")), LinObs::Traced(TracedAs::Other));
    }

    /// Meta trace: a call sends its meta message while the function is meta traced, also from
    /// old code until the removal under `CarryRemovedLater`; one after meta was cleared, or a
    /// local call in old code after the load ended, cannot.
    #[test]
    fn meta_trace_follows_its_pattern() {
        let meta = |op| LinOp::MetaPattern { f: 0, op };
        let call = |version, meta| LinObs::Call {
            version,
            counted: 0,
            global: false,
            meta,
        };
        let h = |after_clear: bool| {
            [
                rec(0, 1, 2, meta(PatternOp::True), LinObs::Matched(1)),
                rec(1, 3, 4, CALL, call(1, true)),
                rec(0, 5, 6, meta(PatternOp::False), LinObs::Matched(1)),
                rec(1, 7, 8, CALL, call(1, after_clear)),
            ]
        };
        assert!(check("m", &funcs(), 0, &h(false), LoadRule::Carry).is_ok());
        assert!(check("m", &funcs(), 0, &h(true), LoadRule::Carry).is_err());
        let old = |local_begin, local_end| {
            [
                rec(0, 1, 2, meta(PatternOp::True), LinObs::Matched(1)),
                rec(1, 3, 4, LinOp::Stay { f: 0 }, call(1, true)),
                rec(0, 5, 15, LinOp::Load, LinObs::Answer(true)),
                rec(2, 6, 7, CALL, call(2, true)),
                rec(
                    1,
                    local_begin,
                    local_end,
                    LinOp::Local { f: 0 },
                    call(1, true),
                ),
            ]
        };
        let rule = LoadRule::CarryRemovedLater;
        assert!(check("m", &funcs(), 0, &old(9, 10), rule).is_ok());
        assert!(check("m", &funcs(), 0, &old(16, 17), rule).is_err());
        assert!(check("m", &funcs(), 0, &old(9, 10), LoadRule::Carry).is_err());
    }

    #[test]
    fn malformed_histories_are_named() {
        let h = [rec(0, 2, 2, CALL, ran(1, false))];
        let e = check("m", &funcs(), 0, &h, LoadRule::Carry).unwrap_err();
        assert!(e.to_string().contains("#0"), "{e}");
        let h = [
            rec(0, 1, 3, CALL, ran(1, false)),
            rec(0, 2, 4, CALL, ran(1, false)),
        ];
        let e = check("m", &funcs(), 0, &h, LoadRule::Carry).unwrap_err();
        assert!(e.to_string().contains("overlap"), "{e}");
    }

    /// A session destroyed under calls: a call linearized after the destroy counts in the
    /// legacy session only; the destroyed session's counter is gone with it.
    #[test]
    fn a_destroyed_sessions_counter_is_gone() {
        let on1 = LinOp::Pattern {
            session: 1,
            f: 0,
            op: PatternOp::True,
        };
        let call = |counted| LinObs::Call {
            version: 1,
            counted,
            global: false,
            meta: false,
        };
        let h = [
            rec(0, 1, 2, ON, LinObs::Matched(1)),
            rec(0, 3, 4, on1, LinObs::Matched(1)),
            rec(1, 5, 8, CALL, call(0b11)),
            rec(
                0,
                6,
                7,
                LinOp::DestroySession { session: 1 },
                LinObs::Answer(true),
            ),
            rec(1, 9, 10, CALL, call(0b01)),
            rec(
                0,
                11,
                12,
                LinOp::Info { session: 1, f: 0 },
                LinObs::Count(Some(None)),
            ),
        ];
        assert!(check("m", &funcs(), 1, &h, LoadRule::Carry).is_ok());
        let late = [
            rec(0, 1, 2, on1, LinObs::Matched(1)),
            rec(
                0,
                3,
                4,
                LinOp::DestroySession { session: 1 },
                LinObs::Answer(true),
            ),
            rec(1, 5, 6, CALL, call(0b10)),
        ];
        assert!(check("m", &funcs(), 1, &late, LoadRule::Carry).is_err());
        // A session seen dead while its destruction runs: a call after that sight may not count
        // in it, though the destruction has not returned.
        let alive = |s, b, e, a| {
            rec(
                1,
                b,
                e,
                LinOp::SessionAlive { session: s },
                LinObs::Answer(a),
            )
        };
        let destroy = rec(
            0,
            3,
            10,
            LinOp::DestroySession { session: 1 },
            LinObs::Answer(true),
        );
        let seen_dead = [
            rec(0, 1, 2, on1, LinObs::Matched(1)),
            destroy,
            alive(1, 4, 5, false),
            rec(1, 6, 7, CALL, call(0b10)),
        ];
        assert!(check("m", &funcs(), 1, &seen_dead, LoadRule::Carry).is_err());
        let seen_alive = [
            rec(0, 1, 2, on1, LinObs::Matched(1)),
            destroy,
            alive(1, 4, 5, true),
            rec(1, 6, 7, CALL, call(0b10)),
        ];
        assert!(check("m", &funcs(), 1, &seen_alive, LoadRule::Carry).is_ok());
        let e = check("m", &funcs(), 0, &late, LoadRule::Carry).unwrap_err();
        assert!(e.to_string().contains("session 1 of 0"), "{e}");
    }
}
