//! Models of the wait plans (docs/fewer-waits.md): the timem reader scenarios of
//! [`crate::readers`], with the stager's ops run as one batch under [`WaitPlan::Batch`] and
//! [`WaitPlan::BatchElideIdle`], and as consecutive calls under [`WaitPlan::Pipeline`] (each
//! call without W4, its unlinked nodes freed after the next call's first wait). The schedulers' scripts exercise every reader class the readers
//! models do: the hit path (calls), the call_time/call_memory charges on return, raise and
//! schedule-out (the slot-walking readers), and sleeping through the waits. Shared by
//! `tests/waits_loom.rs` and `tests/waits_shuttle.rs`.
//!
//! Properties: those of [`crate::readers`] (RD1 no read of a freed node or counter, RD2 no read of
//! a node before its initialisation, RD3 conservation where it applies, I5 at rest).

use crate::readers::{ROp, RScenario, RStep, TIME, TIME_MEM};
use bpspec_reference::{Mutant, PatternOp, WaitPlan};

/// The plans the models run (the ERTS plan is the readers models themselves).
pub const PLANS: [WaitPlan; 3] = [
    WaitPlan::Batch,
    WaitPlan::BatchElideIdle,
    WaitPlan::Pipeline,
];

fn set(s: u32, f: usize, op: PatternOp, fl: bpspec_reference::FlagSet) -> ROp {
    (s, f, op, fl)
}

/// The loom scenarios: one stager (one batch), one scheduler.
pub fn loom_scenarios() -> Vec<RScenario> {
    use PatternOp::*;
    use RStep::*;
    let leave = vec![Switch, Work(1), Switch, Switch, Switch, Work(1), Ret];
    vec![
        // One batch removes call_time and call_memory from f0 and f1 while the process is inside
        // f1 called from f0: both nodes are unlinked, W4 stays in every plan.
        RScenario {
            name: "batch-remove",
            functions: 2,
            sessions: 1,
            setup: vec![set(0, 0, True, TIME_MEM), set(0, 1, True, TIME_MEM)],
            prelude: vec![Call(0), Call(1), Work(1)],
            after_prelude: vec![],
            stagers: vec![vec![set(0, 0, False, TIME_MEM), set(0, 1, False, TIME_MEM)]],
            schedulers: vec![leave.clone()],
            conserve: None,
        },
        // One batch restarts f0's call_time (fresh object in the staging half; the old one is
        // released at consolidate) and sets it on the unpatched f1 (a fresh node in its slot):
        // nothing is unlinked, so the elide-idle plan makes no W3 and no W4. The process inside f0 calls f1
        // (hit path, new node), returns and is scheduled out.
        RScenario {
            name: "batch-restart-set",
            functions: 2,
            sessions: 1,
            setup: vec![set(0, 0, True, TIME)],
            prelude: vec![Call(0), Work(1)],
            after_prelude: vec![],
            stagers: vec![vec![set(0, 0, Restart, TIME), set(0, 1, True, TIME)]],
            schedulers: vec![vec![Switch, Call(1), Work(1), Ret, Switch, Work(1), Ret]],
            conserve: None,
        },
        // Two sessions on f0: one batch of session 1 removes its node on f0 (the head; session 0
        // keeps f0 patched, its readers walk `next` over the unlinked node) and sets call_time on
        // f1. Session 0's figures are conserved.
        RScenario {
            name: "batch-remove-2sess",
            functions: 2,
            sessions: 2,
            setup: vec![set(0, 0, True, TIME_MEM), set(1, 0, True, TIME_MEM)],
            prelude: vec![Call(0), Work(1)],
            after_prelude: vec![],
            stagers: vec![vec![set(1, 0, False, TIME_MEM), set(1, 1, True, TIME)]],
            schedulers: vec![leave],
            conserve: Some(0),
        },
        // A batch that releases counters and unlinks nothing: call_count removed from f0 and
        // call_memory from f1, call_time stays on both, so both nodes stay on their chains and
        // consolidate releases the two dropped counters (EL5: after W2 and uninstall under the
        // elide-idle plan, which makes two waits here). The process inside f0 calls f1 (the hit
        // path reads the nodes' active halves), returns (call_time and call_memory charged on
        // f1's node), is scheduled out and in, calls f0 again (its count) and returns.
        RScenario {
            name: "batch-drop-counters",
            functions: 2,
            sessions: 1,
            setup: vec![set(0, 0, True, COUNT_TIME), set(0, 1, True, TIME_MEM)],
            prelude: vec![Call(0), Work(1)],
            after_prelude: vec![],
            stagers: vec![vec![set(0, 0, False, COUNT), set(0, 1, False, MEM)]],
            schedulers: vec![vec![
                Call(1),
                Work(1),
                Ret,
                Switch,
                Call(0),
                Work(1),
                Ret,
                Ret,
            ]],
            conserve: None,
        },
        // A batch that pauses: call_time and call_memory paused on f0 and f1 while the process
        // is inside f1 called from f0. Both nodes stay, nothing is released or installed: the
        // elide-idle plan makes three waits. The process returns twice (charging paused and
        // running halves), is scheduled out and in between.
        RScenario {
            name: "batch-pause",
            functions: 2,
            sessions: 1,
            setup: vec![set(0, 0, True, TIME_MEM), set(0, 1, True, TIME_MEM)],
            prelude: vec![Call(0), Call(1), Work(1)],
            after_prelude: vec![],
            stagers: vec![vec![set(0, 0, Pause, TIME_MEM), set(0, 1, Pause, TIME_MEM)]],
            schedulers: vec![vec![Work(1), Ret, Switch, Work(1), Call(1), Ret, Ret]],
            conserve: None,
        },
        // The hit path on an unlinking batch: call_count removed from f0 and f1 in one batch
        // while the process calls both (W3 stays in every plan: uninstall restores both
        // instructions and consolidate empties both slots).
        RScenario {
            name: "batch-remove-hit",
            functions: 2,
            sessions: 1,
            setup: vec![set(0, 0, True, COUNT), set(0, 1, True, COUNT)],
            prelude: vec![],
            after_prelude: vec![],
            stagers: vec![vec![set(0, 0, False, COUNT), set(0, 1, False, COUNT)]],
            schedulers: vec![vec![
                Call(0),
                Ret,
                Call(1),
                Ret,
                Switch,
                Call(1),
                Ret,
                Call(0),
                Ret,
            ]],
            conserve: None,
        },
    ]
}

const COUNT: bpspec_reference::FlagSet = bpspec_reference::FlagSet {
    local: false,
    call_count: true,
    call_time: false,
    call_memory: false,
};

const COUNT_TIME: bpspec_reference::FlagSet = bpspec_reference::FlagSet {
    local: false,
    call_count: true,
    call_time: true,
    call_memory: false,
};

const MEM: bpspec_reference::FlagSet = bpspec_reference::FlagSet {
    local: false,
    call_count: false,
    call_time: false,
    call_memory: true,
};

/// The shuttle scenarios: the loom ones with a second scheduler whose process calls f0 and f1,
/// returns, raises, switches and naps.
pub fn shuttle_scenarios() -> Vec<RScenario> {
    use RStep::*;
    let mut out = loom_scenarios();
    for s in out.iter_mut() {
        s.schedulers.push(vec![
            Call(0),
            Work(1),
            Call(1),
            Work(1),
            Raise(1),
            Switch,
            Call(1),
            Work(1),
            Ret,
            Nap,
            Call(0),
            Work(1),
            Ret,
        ]);
        // As in the readers models: a second process's own return frames make RD3 differ.
        s.conserve = None;
    }
    out
}

/// The mutants each checker must kill on each scenario under `plan`: the wait the plan still
/// makes there, removed. Under the pipeline plan `skip-w4-before-free` stands for removing the
/// wait that serves as W4 (the next call's first one): the call frees its unlinked nodes at
/// once. Under the batch plan W2 on `batch-restart-set` is covered by W3 (the
/// old call_time object is released at consolidate, after W3), so only the elide-idle plan,
/// which makes no W3 there, claims it.
pub fn expected_kills(checker: &str, plan: WaitPlan) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    let mut v = match checker {
        "loom" => vec![
            (SkipWaitBeforeFree, "batch-remove"),
            (SkipWaitBeforeFree, "batch-remove-2sess"),
            (SkipWaitBeforeConsolidate, "batch-remove-hit"),
        ],
        "shuttle" => vec![
            (SkipWaitBeforeFree, "batch-remove-2sess"),
            (SkipWaitBeforeConsolidate, "batch-remove-hit"),
        ],
        other => panic!("unknown checker {other}"),
    };
    if plan.elides_idle() {
        v.push((SkipWaitBeforeUninstall, "batch-restart-set"));
        v.push((SkipWaitBeforeUninstall, "batch-drop-counters"));
        v.push((SkipWaitBeforeUninstall, "batch-pause"));
    }
    v
}
