//! Models of export entries (`Area::Export`, global call trace: `reference/src/sessions/export.rs`),
//! shared by the loom and shuttle harnesses (`tests/exports_loom.rs`, `tests/exports_shuttle.rs`).
//!
//! One model = an engine with sessions 0 and 1 and one or two exported functions, a stager thread
//! setting, re-setting (global `pause` sets as `true` does), removing or replacing by local
//! trace the `global` pattern of one session, and scheduler threads making remote calls
//! (`Scheduler::tail_call_remote`: the export entry's chain, then the code's) as a process call
//! traced in both sessions, between progress points.
//!
//! Properties (the trace_pattern ones of docs/protocol.md, on the export area):
//! - I1 no scheduler reads an export entry's node after it is freed (engine liveness assertion
//!   on every node it walks, loom's cells on the halves);
//! - I2 no half is read while it is written (loom cells, shuttle write marks);
//! - I3/I4 per scheduler, over every entry of both areas: each hit (a remote call is two, the
//!   export entry's then the code's) acted on global and local flags some generation of the
//!   stager's ops had on that entry, generations never go back, and after an op returned no hit
//!   acts on an older one (the generation check of `crate::run`, with the export entries as
//!   entries of their own: a call may straddle a flip between its two hits, as one hit may
//!   between two nodes; in a counterexample, "f{k}" with `k` at least the number of functions
//!   `n` names the export entry of function `k - n`);
//! - I5 at rest after the run.

use crate::Placement;
use bpspec_reference::sync::Arc;
use bpspec_reference::{
    flags, Area, Engine, FlagSet, Mutant, PatternOp, ThreadProgress, TraceSpec, WaitPlan,
};

use crate::sessions::call_traced_procs;
use crate::{
    check_generations, rotating_calls, schedulers_vs_stager, trace_on, Scenario, Seen, Step,
};

/// One stager operation on every function.
#[derive(Clone, Copy, Debug)]
pub enum XOp {
    /// `trace_pattern({m,'_','_'}, Op, [global])` in a session.
    Global(u32, PatternOp),
    /// `trace_pattern({m,'_','_'}, Op, [local])` in a session (clears its global flag on the
    /// export entries).
    Local(u32, PatternOp),
}

/// An export model configuration: [`XOp`]s racing the schedulers' remote calls, one round.
pub type ExportScenario = Scenario<XOp>;

/// The loom scenarios: one stager, one scheduler, one function (two where the property needs
/// a second entry to be seen out of order, as the trace_pattern models' `add`).
pub fn loom_scenarios() -> Vec<ExportScenario> {
    use PatternOp::*;
    use Step::*;
    use XOp::*;
    let scn = |name, setup: &[XOp], ops: &[XOp]| {
        let sched = vec![Call(0), Progress, Call(0)];
        Scenario::new(name, 1, setup.to_vec(), ops.to_vec(), vec![sched])
    };
    // Both sessions set global; `session`'s is removed.
    let two_sess = |name, session| {
        scn(
            name,
            &[Global(0, True), Global(1, True)],
            &[Global(session, False)],
        )
    };
    vec![
        // The export entry gets a node and is redirected to the trampoline.
        scn("global-set", &[], &[Global(0, True)]),
        // Two export entries set in one trace_pattern: a scheduler calls both, twice.
        Scenario::new(
            "global-set-2f",
            2,
            vec![],
            vec![Global(0, True)],
            vec![vec![Call(0), Call(1), Progress, Call(0), Call(1)]],
        ),
        // Two export entries removed in one trace_pattern.
        Scenario::new(
            "global-remove-2f",
            2,
            vec![Global(0, True)],
            vec![Global(0, False)],
            vec![vec![Call(0), Call(1), Progress, Call(1), Call(0)]],
        ),
        // One session: the dispatch word is restored (W3 keeps hits off the node), then the
        // node is unlinked and freed.
        scn("global-remove", &[Global(0, True)], &[Global(0, False)]),
        // Global pause sets global as true does: the halves are staged again and flipped.
        scn("global-pause", &[Global(0, True)], &[Global(0, Pause)]),
        // Local trace in the same session clears its global flag on the export entry: one
        // trace_pattern installs in the code and removes from the export area.
        scn("global-to-local", &[Global(0, True)], &[Local(0, True)]),
        // Two sessions: removing the newer one unlinks the head of a still-redirected entry.
        two_sess("global-remove-2sess", 1),
        // Removing the older one: a scheduler on the head walks `next` onto it.
        two_sess("global-remove-old-2sess", 0),
    ]
}

/// The shuttle scenarios: the loom ones with two more schedulers, and a churn over both
/// sessions and both areas.
pub fn shuttle_scenarios() -> Vec<ExportScenario> {
    use PatternOp::*;
    use Step::*;
    use XOp::*;
    let script = |fs, rounds| rotating_calls(fs, rounds, Call, Progress, Nap);
    let mut out = loom_scenarios();
    for s in out.iter_mut() {
        s.schedulers.push(script(s.functions, 3));
        s.schedulers.push(script(s.functions, 4));
    }
    let churn = vec![
        Global(1, True),
        Global(0, False),
        Local(1, True),
        Global(0, True),
        Global(1, True),
        Global(1, False),
        Global(0, Pause),
        Global(0, False),
    ];
    let schedulers = (0..3).map(|_| script(2, 6)).collect();
    out.push(Scenario::new(
        "global-churn-2sess",
        2,
        vec![Global(0, True)],
        churn,
        schedulers,
    ));
    out
}

const ACTED: u32 = flags::LOCAL_TRACE | flags::GLOBAL_TRACE;

fn apply<P: ThreadProgress>(e: &Engine<P>, o: &XOp) {
    let (session, op, spec) = match *o {
        XOp::Global(s, op) => (s, op, TraceSpec::global()),
        XOp::Local(s, op) => (
            s,
            op,
            TraceSpec::counters(FlagSet {
                local: true,
                ..FlagSet::default()
            }),
        ),
    };
    trace_on(e, None, op, &spec.session(session));
}

/// The acted flags (over both sessions) a hit would have now on each entry: the code of
/// functions `0..n`, then their export entries (entry `n + f`).
fn acted_now<P: ThreadProgress>(e: &Engine<P>, n: usize) -> Vec<u32> {
    let both = |flags: &dyn Fn(u32) -> u32| (0..2u32).fold(0, |a, s| a | flags(s)) & ACTED;
    match crate::placement_of(e) {
        Placement::Static => (0..n)
            .map(|f| both(&|s| e.active_flags_in(Area::Code, s, f)))
            .chain((0..n).map(|f| {
                let x = e.export_of(f).expect("exported");
                both(&|s| e.active_flags_in(Area::Export, s, x))
            }))
            .collect(),
        Placement::Versions => (0..n)
            .map(|f| both(&|s| e.active_flags_version_in(0, s, f)))
            .chain((0..n).map(|f| both(&|s| e.active_flags_export_in(0, s, f))))
            .collect(),
    }
}

/// Run one execution of `scn`. Panics on any violation.
pub fn run<P: ThreadProgress>(scn: &ExportScenario, mutant: Option<Mutant>) {
    run_planned::<P>(scn, mutant, WaitPlan::Erts)
}

/// [`run`] on an engine under `plan` (docs/fewer-waits.md; `tests/waits_loom.rs`,
/// `waits_shuttle.rs`). Under the pipeline plan the stager settles after its last op, so the
/// run ends at rest.
pub fn run_planned<P: ThreadProgress>(
    scn: &ExportScenario,
    mutant: Option<Mutant>,
    plan: WaitPlan,
) {
    run_placed::<P>(scn, mutant, plan, Placement::Static)
}

/// [`run`] with the functions at `placement`: on a version (module `m`, never loaded, its
/// engine made `with_global_trace`), a remote call is `Scheduler::call_version_proc` through
/// the export entry's dispatch word at the active code index (its global breakpoint), then the
/// version's code.
pub fn run_on<P: ThreadProgress>(
    scn: &ExportScenario,
    mutant: Option<Mutant>,
    placement: Placement,
) {
    run_placed::<P>(scn, mutant, WaitPlan::Erts, placement)
}

/// [`run_planned`] with the functions at `placement` (the wait plans on a version,
/// `tests/waits_loom.rs` and `waits_shuttle.rs`).
pub fn run_placed<P: ThreadProgress>(
    scn: &ExportScenario,
    mutant: Option<Mutant>,
    plan: WaitPlan,
    placement: Placement,
) {
    assert_eq!(scn.rounds, 1, "the export models run their ops once");
    let mut e =
        crate::placed_engine::<P>(scn.functions, scn.schedulers.len(), mutant, 2, placement)
            .with_wait_plan(plan);
    if placement == Placement::Versions {
        e = e.with_global_trace();
    }
    let engine = Arc::new(e);
    assert_eq!(engine.create_session("s1"), Ok(1));
    for o in &scn.setup {
        apply(&engine, o);
    }
    let procs = call_traced_procs(&engine, scn.schedulers.len(), 2);
    let n = scn.functions;
    let (per_sched, gens) = schedulers_vs_stager(
        &engine,
        &scn.schedulers,
        procs,
        scn.ops.len(),
        |i| apply(&engine, &scn.ops[i]),
        || acted_now(&engine, n),
        move |s, f, proc, returned| {
            let (x, c) = match placement {
                Placement::Static => {
                    let before = s.hits.len();
                    s.tail_call_remote(f, proc);
                    assert_eq!(s.hits.len(), before + 2, "export entry hit, then code hit");
                    let (x, c) = (s.hits[before], s.hits[before + 1]);
                    ((x.flags, x.counted), (c.flags, c.counted))
                }
                Placement::Versions => {
                    let seen = s.call_version_proc(proc, 0, f, true, true);
                    assert_eq!(seen.version, 1, "f{f}: a call outside version 1");
                    let x = seen.export_hit.expect("export entry hit, then code hit");
                    ((x.flags, x.counted), (seen.flags, seen.counted_in))
                }
            };
            [(n + f, x), (f, c)].map(|(func, (flags, counted))| Seen {
                func,
                acted: flags & ACTED,
                returned,
                counted,
            })
        },
    );
    for (id, calls) in per_sched.iter().enumerate() {
        let seen: Vec<Seen> = calls.iter().flatten().copied().collect();
        check_generations(id, &seen, &gens);
    }
    engine.settle();
    if let Err(e) = engine.check_at_rest() {
        panic!("I5 at rest violated: {e}");
    }
    let counted = per_sched.iter().flatten().flatten();
    crate::check_count_conservation(&engine, counted.map(|c| (c.func, c.counted)));
}

/// The wait-removal mutants of the trace_pattern sequence, on the export area.
pub const EXPORT_MUTANTS: [Mutant; 5] = [
    Mutant::SkipWaitBeforeInstall,
    Mutant::SkipWaitBeforeCommit,
    Mutant::SkipWaitBeforeUninstall,
    Mutant::SkipWaitBeforeConsolidate,
    Mutant::SkipWaitBeforeFree,
];

/// The export scenarios run under the wait plans (`tests/waits_loom.rs`, `waits_shuttle.rs`):
/// every loom scenario (the shuttle runs add their two schedulers). loom runs them under every
/// plan; shuttle under [`SHUTTLE_PLANS`].
pub const PLAN_SCENARIOS: [&str; 8] = [
    "global-set",
    "global-set-2f",
    "global-remove-2f",
    "global-remove",
    "global-pause",
    "global-to-local",
    "global-remove-2sess",
    "global-remove-old-2sess",
];

/// The plans shuttle runs [`PLAN_SCENARIOS`] under: not `batch`. Each of these scenarios makes
/// one `trace_pattern` call at a time, and under `batch` a call is a batch of one, which runs
/// ERTS's sequence (docs/fewer-waits.md, proof BA): the scenarios make exactly the decisions
/// under `batch` that they make under ERTS's plan, whose rows `tests/exports_shuttle.rs` has
/// (`the_batch_plan_makes_erts_decisions_on_the_export_scenarios`, `tests/waits_shuttle.rs`,
/// compares the digests of every decision; it fails if `batch` starts to differ there, or if
/// either plan here stops differing). loom keeps its `batch` rows (a few seconds in all): its
/// executions also depend on the orderings of the operations, which the decisions do not show.
pub const SHUTTLE_PLANS: [WaitPlan; 2] = [WaitPlan::BatchElideIdle, WaitPlan::Pipeline];

/// The wait-removal mutants each checker must kill on [`PLAN_SCENARIOS`] under `plan`: those of
/// [`expected_kills`]. A single `trace_pattern` on the export area makes ERTS's five waits under
/// both batch plans (the elide-idle plan keeps W3 and W4 there: docs/fewer-waits.md, proof EL,
/// EL0), and all but W4 under the pipeline plan, where `skip-w4-before-free` frees at once what
/// the call unlinked. None for shuttle under a plan it does not run them under
/// ([`SHUTTLE_PLANS`]).
pub fn expected_plan_kills(checker: &str, plan: WaitPlan) -> Vec<(Mutant, &'static str)> {
    if checker == "shuttle" && !SHUTTLE_PLANS.contains(&plan) {
        return Vec::new();
    }
    expected_kills(checker)
}

/// Which checker kills which wait-removal mutant on which export scenario.
pub fn expected_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    match checker {
        "loom" => vec![
            (SkipWaitBeforeInstall, "global-set"),
            (SkipWaitBeforeCommit, "global-set-2f"),
            (SkipWaitBeforeUninstall, "global-remove-2f"),
            (SkipWaitBeforeConsolidate, "global-remove"),
            (SkipWaitBeforeFree, "global-remove-2sess"),
        ],
        "shuttle" => vec![
            (SkipWaitBeforeConsolidate, "global-remove"),
            (SkipWaitBeforeFree, "global-remove-2sess"),
        ],
        other => panic!("unknown checker {other}"),
    }
}
