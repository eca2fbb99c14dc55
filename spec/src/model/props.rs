//! The model's properties. `always` ones are safety (docs/protocol.md I1–I5 plus the engine's
//! slot assertion); `sometimes` ones show the safety properties are not vacuous: the dangerous
//! situations they guard against do occur in the model.

use super::state::{ChargeStep, HitStep, Loc, Mode, State, Violation, NIL};
use super::BpModel;
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

pub fn properties() -> Vec<Property<BpModel>> {
    vec![
        Property::always(SAFETY[0], |_, s: &State| no_use_after_free(s)),
        Property::always(SAFETY[1], |_, s: &State| {
            !matches!(
                s.violation,
                Some(Violation::TornHalf { .. } | Violation::UnpublishedNode { .. })
            )
        }),
        Property::always(SAFETY[2], |_, s: &State| {
            !matches!(s.violation, Some(Violation::EmptySlot { .. }))
        }),
        Property::always(SAFETY[3], |_, s: &State| {
            !matches!(s.violation, Some(Violation::OldAfterNew { .. }))
        }),
        Property::always(SAFETY[4], |m, s| at_rest_consistent(m, s).is_ok()),
        Property::always(SAFETY[5], |m, s| patched_iff_active(m, s).is_ok()),
        Property::always(SAFETY[6], |m, s| returns_settled(m, s).is_ok()),
        Property::always(SAFETY[7], |_, s: &State| {
            !matches!(s.violation, Some(Violation::TableRace { .. }))
        }),
        Property::always(SAFETY[8], |_, s: &State| {
            !matches!(s.violation, Some(Violation::SharedSlotRace { .. }))
        }),
        Property::always(SAFETY[9], |_, s: &State| {
            !matches!(s.violation, Some(Violation::TempUseAfterFree { .. }))
        }),
        Property::always(SAFETY[10], |m, s| charges_conserved(m, s).is_ok()),
        Property::always(SAFETY[11], |_, s: &State| {
            !matches!(s.violation, Some(Violation::MissedNode { .. }))
        }),
        // A scheduler about to send through a freed tracer cell, or one that did.
        Property::always(SAFETY[12], |_, s: &State| no_freed_tracer_use(s)),
        Property::sometimes(REACHABILITY[0], |m: &BpModel, s: &State| {
            let cur = s.active_ix(&m.cfg);
            s.scheds
                .iter()
                .any(|x| matches!(x.mode, Mode::Hit(h) if h.step == HitStep::Half && h.ix != cur))
        }),
        Property::sometimes(REACHABILITY[1], |_, s: &State| {
            s.scheds.iter().any(|x| {
                matches!(x.mode, Mode::Hit(h) if h.at != NIL && s.nodes[h.at as usize].unlinked)
            })
        }),
        Property::sometimes(REACHABILITY[2], |_, s: &State| {
            s.scheds
                .iter()
                .any(|x| matches!(x.mode, Mode::Hit(h) if h.spans_flip))
        }),
        Property::sometimes(REACHABILITY[3], |m: &BpModel, s: &State| s.done(&m.cfg)),
        Property::sometimes(REACHABILITY[4], |_, s: &State| {
            s.scheds.iter().any(|x| {
                matches!(x.mode, Mode::Charge(c)
                    if c.step == ChargeStep::Write && s.objs[c.obj as usize].temp)
            })
        }),
        Property::sometimes(REACHABILITY[5], |m: &BpModel, s: &State| {
            let cur = s.active_ix(&m.cfg) as usize;
            s.scheds.iter().any(|x| {
                matches!(x.mode, Mode::Charge(c)
                    if c.step == ChargeStep::Write
                        && s.nodes.iter().all(|n| n.tm[cur] != c.obj))
            })
        }),
        // A call_time reader stands on a node of a function whose instruction is the original
        // one: it came through the slot, not through the breakpoint.
        Property::sometimes(REACHABILITY[6], |m: &BpModel, s: &State| {
            let f = super::collect::COUNTED_FUNC;
            s.get(&m.cfg, Loc::Instr(f)) == super::state::ORIG
                && s.scheds
                    .iter()
                    .any(|x| matches!(x.mode, Mode::Charge(c) if c.at != NIL))
        }),
        // A scheduler holds a tracer cell the stager (or another hit) has unpublished.
        Property::sometimes(REACHABILITY[7], |m: &BpModel, s: &State| {
            let cur = s.get(&m.cfg, Loc::Tracer);
            s.scheds
                .iter()
                .any(|x| matches!(x.mode, Mode::Hit(h) if h.cell != NIL && h.cell != cur))
        }),
    ]
}

/// No scheduler holds (about to send through) a freed tracer cell, and none used one.
pub fn no_freed_tracer_use(s: &State) -> bool {
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
pub fn charges_conserved(_m: &BpModel, s: &State) -> Result<(), String> {
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
pub fn no_use_after_free(s: &State) -> bool {
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
pub fn at_rest_consistent(m: &BpModel, s: &State) -> Result<(), String> {
    if !s.at_rest() {
        return Ok(());
    }
    let cfg = &m.cfg;
    let active = s.active_ix(cfg) as usize;
    let mut on_chain = vec![false; s.nodes.len()];
    for f in 0..cfg.functions {
        for g in s.chain(cfg, f) {
            on_chain[g as usize] = true;
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
    for &g in &s.stager.free_list {
        let n = &s.nodes[g as usize];
        if on_chain[g as usize] || !n.unlinked || n.freed {
            return Err(format!(
                "GenericBp#{} on the free list at rest is not an unlinked live node",
                g + 1
            ));
        }
    }
    for (g, n) in s.nodes.iter().enumerate() {
        if !on_chain[g] && !n.freed && !s.stager.free_list.contains(&(g as u8)) {
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
pub fn patched_iff_active(m: &BpModel, s: &State) -> Result<(), String> {
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
pub fn returns_settled(m: &BpModel, s: &State) -> Result<(), String> {
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
