//! The model's properties. `always` ones are safety (docs/protocol.md I1–I5 plus the engine's
//! slot assertion); `sometimes` ones show the safety properties are not vacuous: the dangerous
//! situations they guard against do occur in the model.

use super::state::{Caps, ChargeStep, HitStep, Loc, Mode, StateOf, Violation, NIL};
use super::{BpModel, Config};
use stateright::Property;

/// Names of the `always` properties, in the order the kill matrix prints them.
pub const SAFETY: [&str; 13] = [
    "no-use-after-free",
    "no-torn-half",
    "slot-set-behind-breakpoint",
    "activation-atomic-per-scheduler",
    "at-rest-consistent",
    "patched-iff-active-flag",
    "returns-settled",
    "collector-reads-quiet-table",
    "shared-slot-under-lock",
    "no-temp-use-after-free",
    "charges-conserved",
    "no-missed-node",
    "no-freed-tracer-use",
];

/// Names of the `sometimes` properties.
pub const REACHABILITY: [&str; 8] = [
    "old-half-after-flip",
    "stands-on-unlinked-node",
    "hit-spans-flip",
    "script-completes",
    "charge-lands-in-temp",
    "charges-old-table-after-flip",
    "charge-walks-unpatched-function",
    "tracer-replaced-while-held",
];

/// The liveness property (checked by [`super::liveness`], not by stateright).
pub const LIVENESS: &str = "stager-finishes-under-fair-progress";

/// The name of the fused safety property: every registered `always` property in one
/// (`BpModel::fused`). A run that finds it violated is run again unfused, so reports name the
/// member properties (`run::run`).
pub const FUSED_SAFETY: &str = "safety-invariants";

/// A property's condition, as stateright takes it.
type Cond<K> = fn(&BpModel<K>, &StateOf<K>) -> bool;

/// `[first_violation::<K, I>, ...]` for each index `I` given (`Conds::FIRST`).
macro_rules! first_violations {
    ($($i:literal)*) => { [$(first_violation::<K, $i>,)*] };
}

/// The conditions, per capacities `K` of the state.
struct Conds<K>(std::marker::PhantomData<K>);

impl<K: Caps> Conds<K> {
    /// The conditions of the `SAFETY` names, in their order.
    const SAFETY: [Cond<K>; 13] = [
        |_, s| no_use_after_free(s),
        |_, s| {
            !matches!(
                s.violation,
                Some(Violation::TornHalf { .. } | Violation::UnpublishedNode { .. })
            )
        },
        |_, s| !matches!(s.violation, Some(Violation::EmptySlot { .. })),
        |_, s| !matches!(s.violation, Some(Violation::OldAfterNew { .. })),
        |m, s| at_rest_consistent(m, s).is_ok(),
        |m, s| patched_iff_active(m, s).is_ok(),
        |m, s| returns_settled(m, s).is_ok(),
        |_, s| !matches!(s.violation, Some(Violation::TableRace { .. })),
        |_, s| !matches!(s.violation, Some(Violation::SharedSlotRace { .. })),
        |_, s| !matches!(s.violation, Some(Violation::TempUseAfterFree { .. })),
        |m, s| charges_conserved(m, s).is_ok(),
        |_, s| !matches!(s.violation, Some(Violation::MissedNode { .. })),
        // A scheduler about to send through a freed tracer cell, or one that did.
        |_, s| no_freed_tracer_use(s),
    ];

    /// The conditions of the `SAFETY` names reporting only their first violation
    /// (`BpModel::first_discovery`), in their order.
    const FIRST: [Cond<K>; 13] = first_violations!(0 1 2 3 4 5 6 7 8 9 10 11 12);

    /// The conditions of the `REACHABILITY` names, in their order.
    const REACH: [Cond<K>; 8] = [
        |m, s| {
            let cur = s.active_ix(&m.cfg);
            s.scheds
                .iter()
                .any(|x| matches!(x.mode, Mode::Hit(h) if h.step == HitStep::Half && h.ix != cur))
        },
        |_, s| {
            s.scheds.iter().any(
            |x| matches!(x.mode, Mode::Hit(h) if h.at != NIL && s.nodes[h.at as usize].unlinked),
        )
        },
        |_, s| {
            s.scheds
                .iter()
                .any(|x| matches!(x.mode, Mode::Hit(h) if h.spans_flip))
        },
        |m, s| s.done(&m.cfg),
        |_, s| {
            s.scheds.iter().any(|x| {
                matches!(x.mode, Mode::Charge(c)
                if c.step == ChargeStep::Write && s.objs[c.obj as usize].temp)
            })
        },
        |m, s| {
            let cur = s.active_ix(&m.cfg) as usize;
            s.scheds.iter().any(|x| {
                matches!(x.mode, Mode::Charge(c)
                if c.step == ChargeStep::Write
                    && s.nodes.iter().all(|n| n.tm[cur] != c.obj))
            })
        },
        // A call_time reader stands on a node of a function whose instruction is the original
        // one: it came through the slot, not through the breakpoint.
        |m, s| {
            let f = super::collect::COUNTED_FUNC;
            s.get(&m.cfg, Loc::Instr(f)) == super::state::ORIG
                && s.scheds
                    .iter()
                    .any(|x| matches!(x.mode, Mode::Charge(c) if c.at != NIL))
        },
        // A scheduler holds a tracer cell the stager (or another hit) has unpublished.
        |m, s| {
            let cur = s.get(&m.cfg, Loc::Tracer);
            s.scheds
                .iter()
                .any(|x| matches!(x.mode, Mode::Hit(h) if h.cell != NIL && h.cell != cur))
        },
    ];
}

/// The properties a configuration's features can reach, as bit masks over [`SAFETY`] and
/// [`REACHABILITY`]: the others are vacuous for it (an `always` one cannot fail, a `sometimes`
/// one cannot hold, whatever the mutant), so checking them costs stateright a discoveries
/// lookup per state and a call for nothing. Each rule says why, naming the code it rests on:
///
/// - **No charges** (`charges == 0`): `charge_may_start` (collect.rs) is false while
///   `started >= charges`, so no `Action::Charge` is enabled and no scheduler is ever in
///   `Mode::Charge`. `TableRace` is set only for a scheduler in `Mode::Charge` (the collector's
///   read) or at a charge's `Write` step, `SharedSlotRace` only for a scheduler in
///   `Mode::Charge`, `TempUseAfterFree` only at a `Write` step: `collector-reads-quiet-table`,
///   `shared-slot-under-lock` and `no-temp-use-after-free` cannot fail. `charged` grows only at
///   a `Write` step and a table entry only there or by the merge (which moves a sum, zeroing
///   its source) or the symmetry renumbering (a permutation): every table stays 0 and so does
///   `charged`, and `charges-conserved` holds. The three charge `sometimes` properties each
///   need a scheduler in `Mode::Charge`.
/// - **No calls** (`calls == false`): `Mode::Hit` is entered only by `Action::Call` (step.rs),
///   which `enabled` offers for `functions * calls` functions, none. `EmptySlot` is set only
///   at a hit's slot read, `OldAfterNew` only by a call or a hit's read, `MissedNode` only at a
///   hit's end, `FreedTracer` only at a hit's send, and `no-freed-tracer-use` otherwise looks
///   at hits: `slot-set-behind-breakpoint`, `activation-atomic-per-scheduler`,
///   `no-missed-node` and `no-freed-tracer-use` cannot fail; `old-half-after-flip`,
///   `stands-on-unlinked-node`, `hit-spans-flip` and `tracer-replaced-while-held` each need a
///   scheduler in `Mode::Hit`.
/// - **One session**: `check_missed` (step.rs) returns at once when `sessions == 1`, the only
///   place `MissedNode` is set: `no-missed-node` cannot fail.
/// - **No tracer op** (`Config::tracer()` is `None`): `State::initial` publishes no cell and
///   leaves `Loc::Tracer` at `NIL`, only a `SetTracer` stage pushes a cell or writes a cell to
///   it (the meta tracer's `remove` writes `NIL`), so a hit reads `NIL` there and never holds a
///   cell (`h.cell == NIL`): no send through a cell, no `FreedTracer`; `no-freed-tracer-use`
///   cannot fail, `tracer-replaced-while-held` cannot hold.
///
/// The kill matrix and the vacuity lists (`matrix.rs`) are unchanged by this: what is left
/// out could neither be violated nor reached (spec/tests/spec_model.rs `exact_kill_matrix`).
pub fn reachable(cfg: &Config) -> (u16, u8) {
    let s = |name: &str| {
        1u16 << SAFETY
            .iter()
            .position(|p| *p == name)
            .expect("a safety name")
    };
    let r = |name: &str| {
        1u8 << REACHABILITY
            .iter()
            .position(|p| *p == name)
            .expect("a reachability name")
    };
    let (mut safety, mut reach) = ((1u16 << SAFETY.len()) - 1, u8::MAX);
    if cfg.charges == 0 {
        for p in [
            "collector-reads-quiet-table",
            "shared-slot-under-lock",
            "no-temp-use-after-free",
            "charges-conserved",
        ] {
            safety &= !s(p);
        }
        for p in [
            "charge-lands-in-temp",
            "charges-old-table-after-flip",
            "charge-walks-unpatched-function",
        ] {
            reach &= !r(p);
        }
    }
    if !cfg.calls {
        for p in [
            "slot-set-behind-breakpoint",
            "activation-atomic-per-scheduler",
            "no-missed-node",
            "no-freed-tracer-use",
        ] {
            safety &= !s(p);
        }
        for p in [
            "old-half-after-flip",
            "stands-on-unlinked-node",
            "hit-spans-flip",
            "tracer-replaced-while-held",
        ] {
            reach &= !r(p);
        }
    }
    if cfg.sessions == 1 {
        safety &= !s("no-missed-node");
    }
    if cfg.tracer().is_none() {
        safety &= !s("no-freed-tracer-use");
        reach &= !r("tracer-replaced-while-held");
    }
    (safety, reach)
}

/// The properties stateright checks on `m`: those its configuration can reach
/// ([`reachable`]), the `always` ones each on its own, or (`m.fused`) one [`FUSED_SAFETY`]
/// property and nothing else: the fused model's `sometimes` properties are not registered with
/// stateright but evaluated inside the fused condition, on the same states (every state the
/// checker explores, each once), and latched on the model ([`BpModel::reached`]), so a state
/// costs the checker one discoveries lookup (stateright 0.31, bfs.rs:247-248, dfs.rs:241-242:
/// one `DashMap::contains_key` with SipHash of the name per registered property per state)
/// instead of one per property.
pub fn properties<K: Caps>(m: &BpModel<K>) -> Vec<Property<BpModel<K>>> {
    let (safety, reach) = (m.safety, m.reach);
    let mut v = Vec::with_capacity(SAFETY.len() + REACHABILITY.len());
    if m.fused {
        v.push(Property::always(
            FUSED_SAFETY,
            |m: &BpModel<K>, s: &StateOf<K>| {
                latch_reached(m, s);
                holds_all(m, s)
            },
        ));
        return v;
    }
    // With `BpModel::first_discovery`, each `always` condition fails only on the first state
    // the checker finds violating it (`BpModel::reports_violation`).
    let conds = if m.first.is_some() {
        Conds::<K>::FIRST
    } else {
        Conds::<K>::SAFETY
    };
    for (i, (name, cond)) in SAFETY.iter().zip(conds).enumerate() {
        if safety & (1 << i) != 0 {
            v.push(Property::always(name, cond));
        }
    }
    for (i, (name, cond)) in REACHABILITY.iter().zip(Conds::<K>::REACH).enumerate() {
        if reach & (1 << i) != 0 {
            v.push(Property::sometimes(name, cond));
        }
    }
    v
}

/// `Conds::SAFETY[I]`, failing only on the violations `m` reports
/// ([`BpModel::reports_violation`]).
fn first_violation<K: Caps, const I: usize>(m: &BpModel<K>, s: &StateOf<K>) -> bool {
    Conds::<K>::SAFETY[I](m, s) || !m.reports_violation(I, s)
}

/// No property `m` registers awaits a discovery in `s` in stateright's sense (bfs.rs:245-296):
/// every registered `always` condition fails in `s` and every registered `sometimes` one holds.
pub(super) fn awaits_nothing<K: Caps>(m: &BpModel<K>, s: &StateOf<K>) -> bool {
    (0..SAFETY.len()).all(|i| m.safety & (1 << i) == 0 || !Conds::<K>::SAFETY[i](m, s))
        && (0..REACHABILITY.len()).all(|i| m.reach & (1 << i) == 0 || Conds::<K>::REACH[i](m, s))
}

/// The fused model's `sometimes` properties on `s`: each registered one not yet reached is
/// evaluated, and set in `m.reached` if it holds (once set, never evaluated again).
fn latch_reached<K: Caps>(m: &BpModel<K>, s: &StateOf<K>) {
    // Relaxed: a flag only skips work; a racing thread that misses it evaluates once more.
    let done = m.reached.load(std::sync::atomic::Ordering::Relaxed);
    let mut mask = m.reach & !done;
    while mask != 0 {
        let i = mask.trailing_zeros() as usize;
        if Conds::<K>::REACH[i](m, s) {
            m.reached
                .fetch_or(1 << i, std::sync::atomic::Ordering::Relaxed);
        }
        mask &= mask - 1;
    }
}

/// Every `always` property `m` registers holds in `s` (the fused property's condition).
fn holds_all<K: Caps>(m: &BpModel<K>, s: &StateOf<K>) -> bool {
    let mut mask = m.safety;
    while mask != 0 {
        let i = mask.trailing_zeros() as usize;
        if !Conds::<K>::SAFETY[i](m, s) {
            return false;
        }
        mask &= mask - 1;
    }
    true
}

/// The registered `always` properties of `m` that fail in `s`, in [`SAFETY`]'s order.
pub fn failing<K: Caps>(m: &BpModel<K>, s: &StateOf<K>) -> Vec<&'static str> {
    (0..SAFETY.len())
        .filter(|&i| m.safety & (1 << i) != 0 && !Conds::<K>::SAFETY[i](m, s))
        .map(|i| SAFETY[i])
        .collect()
}

/// No scheduler holds (about to send through) a freed tracer cell, and none used one.
pub fn no_freed_tracer_use<K: Caps>(s: &StateOf<K>) -> bool {
    !matches!(s.violation, Some(Violation::FreedTracer { .. }))
        && !s.scheds.iter().any(|x| {
            matches!(x.mode, Mode::Hit(h)
                if h.step == HitStep::Send && h.cell != NIL && s.cells[h.cell as usize])
        })
}

/// CT4 in the abstract: every charge lands in exactly one table, and no temporary with charges
/// in it is ever freed (its charges are moved into the real object's shared slot before it is
/// freed): the live objects' tables, plus those of real objects freed because their counter was
/// removed or restarted (trace_pattern drops those counts on purpose), hold exactly the charges
/// made.
pub fn charges_conserved<K: Caps>(_m: &BpModel<K>, s: &StateOf<K>) -> Result<(), String> {
    let mut live = 0u32;
    for (o, ob) in s.objs.iter().enumerate() {
        let n: u32 = ob.cnt.iter().map(|&c| c as u32).sum();
        if !ob.temp {
            live += n;
            continue;
        }
        if ob.freed && n > 0 {
            return Err(format!(
                "{} was freed with {n} charge(s) in its tables: lost",
                super::collect::obj_name(s, o as u8)
            ));
        }
        if !ob.freed {
            live += n;
        }
    }
    if live != s.charged as u32 {
        return Err(format!(
            "{} charges made, {live} in the live tables",
            s.charged
        ));
    }
    Ok(())
}

/// I1: no scheduler inside a hit holds a freed node (the head it will run `orig_instr` of, or
/// the node it stands on), and no call_time reader walking a slot stands on one.
pub fn no_use_after_free<K: Caps>(s: &StateOf<K>) -> bool {
    s.scheds.iter().all(|x| match x.mode {
        Mode::Hit(h) => [h.head, h.at]
            .iter()
            .all(|&g| g == NIL || !s.nodes[g as usize].freed),
        Mode::Charge(c) => c.at == NIL || !s.nodes[c.at as usize].freed,
        _ => true,
    })
}

/// I5: at rest, every node on a chain has equal halves, no pending `to_insert` and an active
/// flag; the free list is empty; every node not on a chain was freed.
pub fn at_rest_consistent<K: Caps>(m: &BpModel<K>, s: &StateOf<K>) -> Result<(), String> {
    if !s.at_rest() {
        return Ok(());
    }
    let cfg = &m.cfg;
    let active = s.active_ix(cfg) as usize;
    // Nodes on a chain, a bit each (no allocation per state: `MAX_NODES` is at most 32).
    const _: () = assert!(super::state::MAX_NODES <= 32);
    let mut on_chain = 0u32;
    for f in 0..cfg.functions {
        for g in s.chain(cfg, f) {
            on_chain |= 1 << g;
            let n = &s.nodes[g as usize];
            if n.half[0] != n.half[1] {
                return Err(format!(
                    "f{f}: GenericBp#{} halves differ at rest ({:#x} / {:#x})",
                    g + 1,
                    n.half[0],
                    n.half[1]
                ));
            }
            if n.tm[0] != n.tm[1] {
                return Err(format!(
                    "f{f}: GenericBp#{} counter objects differ at rest ({} / {})",
                    g + 1,
                    super::collect::obj_name(s, n.tm[0]),
                    super::collect::obj_name(s, n.tm[1])
                ));
            }
            if n.to_insert != NIL {
                return Err(format!("f{f}: GenericBp#{} has a pending to_insert", g + 1));
            }
            if n.half[active] == 0 {
                return Err(format!("f{f}: disabled GenericBp#{} still linked", g + 1));
            }
        }
    }
    if let Some(o) = s.objs.iter().position(|o| o.temp && !o.freed) {
        return Err(format!(
            "{} still allocated at rest",
            super::collect::obj_name(s, o as u8)
        ));
    }
    // Pipeline: the last call's unlinked nodes wait on the free list for the next wait.
    if !s.stager.free_list.is_empty() && !cfg.pipeline {
        return Err("free list not empty at rest".into());
    }
    for &g in s.stager.free_list.iter() {
        let n = &s.nodes[g as usize];
        if on_chain & (1 << g) != 0 || !n.unlinked || n.freed {
            return Err(format!(
                "GenericBp#{} on the free list at rest is not an unlinked live node",
                g + 1
            ));
        }
    }
    for (g, n) in s.nodes.iter().enumerate() {
        if on_chain & (1 << g) == 0 && !n.freed && !s.stager.free_list.contains(&(g as u8)) {
            return Err(format!(
                "GenericBp#{} leaked (unlinked, never freed)",
                g + 1
            ));
        }
    }
    Ok(())
}

/// I4: at rest, a function's instruction is the breakpoint iff some session has an active flag
/// on it.
pub fn patched_iff_active<K: Caps>(m: &BpModel<K>, s: &StateOf<K>) -> Result<(), String> {
    if !s.at_rest() {
        return Ok(());
    }
    let cfg = &m.cfg;
    let active = s.active_ix(cfg) as usize;
    for f in 0..cfg.functions {
        let any = s
            .chain(cfg, f)
            .iter()
            .any(|&g| s.nodes[g as usize].half[active] != 0);
        let patched = s.get(cfg, Loc::Instr(f)) == super::state::BP;
        if any != patched {
            return Err(format!(
                "f{f}: instruction is {} but {} session has an active flag",
                if patched {
                    "the breakpoint"
                } else {
                    "original"
                },
                if any { "some" } else { "no" }
            ));
        }
    }
    Ok(())
}

/// When trace_pattern has returned, no awake scheduler can act on the old settings: it can read
/// no older instruction word, slot, index or link, and a hit in progress holds the current index.
pub fn returns_settled<K: Caps>(m: &BpModel<K>, s: &StateOf<K>) -> Result<(), String> {
    if !s.at_rest() || s.stager.op == 0 {
        return Ok(());
    }
    let cfg = &m.cfg;
    let cur = s.active_ix(cfg);
    // The meta tracer's pointer is also written by hits (a compare-and-swap when the tracer
    // answers remove), at any time: not a write of the stager's that returning settles.
    let hits_write = (cfg.tracer() == Some(true)).then(|| Loc::Tracer.index(cfg.functions));
    // Pipeline (docs/fewer-waits.md, P7): with no W4, the slots and links T5 wrote may still
    // be read stale until the next wait; the instruction words and the index may not.
    let settles = |l: usize| {
        let link = l >= Loc::Slot(0).index(cfg.functions) && l < Loc::Ix.index(cfg.functions)
            || l >= Loc::Next(0).index(cfg.functions);
        !(cfg.pipeline && link)
    };
    for (i, x) in s.scheds.iter().enumerate() {
        if x.mode == Mode::Asleep {
            continue; // its wake-up is a barrier
        }
        if let Some(l) = x.stale.iter().enumerate().position(|(l, &v)| {
            v != super::state::FRESH && v != s.cur[l] && Some(l) != hits_write && settles(l)
        }) {
            return Err(format!(
                "scheduler {i} can still read an old value of location {l}"
            ));
        }
        if let Mode::Hit(h) = x.mode {
            if h.step == HitStep::Half && h.ix != cur {
                return Err(format!(
                    "scheduler {i} is about to act on the old half {}",
                    h.ix
                ));
            }
        }
    }
    Ok(())
}
