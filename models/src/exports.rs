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

use bpspec_reference::sync::Arc;
use bpspec_reference::{
    flags, Area, Engine, EngineConfig, FlagSet, Mfa, Mutant, Pattern, PatternOp, ThreadProgress,
    TraceSpec,
};

use crate::sessions::call_traced_procs;
use crate::{check_generations, schedulers_vs_stager, Seen, Step};

/// One stager operation on every function.
#[derive(Clone, Copy, Debug)]
pub enum XOp {
    /// `trace_pattern({m,'_','_'}, Op, [global])` in a session.
    Global(u32, PatternOp),
    /// `trace_pattern({m,'_','_'}, Op, [local])` in a session (clears its global flag on the
    /// export entries).
    Local(u32, PatternOp),
}

/// An export model configuration.
#[derive(Clone, Debug)]
pub struct ExportScenario {
    pub name: &'static str,
    pub functions: usize,
    pub setup: Vec<XOp>,
    pub ops: Vec<XOp>,
    pub schedulers: Vec<Vec<Step>>,
}

/// The loom scenarios: one stager, one scheduler, one function (two where the property needs
/// a second entry to be seen out of order, as the trace_pattern models' `add`).
pub fn loom_export_scenarios() -> Vec<ExportScenario> {
    use PatternOp::*;
    use Step::*;
    use XOp::*;
    let sched = vec![Call(0), Progress, Call(0)];
    let scn = |name, setup: Vec<XOp>, ops: Vec<XOp>| ExportScenario {
        name,
        functions: 1,
        setup,
        ops,
        schedulers: vec![sched.clone()],
    };
    vec![
        // The export entry gets a node and is redirected to the trampoline.
        scn("global-set", vec![], vec![Global(0, True)]),
        // Two export entries set in one trace_pattern: a scheduler calls both, twice.
        ExportScenario {
            name: "global-set-2f",
            functions: 2,
            setup: vec![],
            ops: vec![Global(0, True)],
            schedulers: vec![vec![Call(0), Call(1), Progress, Call(0), Call(1)]],
        },
        // Two export entries removed in one trace_pattern.
        ExportScenario {
            name: "global-remove-2f",
            functions: 2,
            setup: vec![Global(0, True)],
            ops: vec![Global(0, False)],
            schedulers: vec![vec![Call(0), Call(1), Progress, Call(1), Call(0)]],
        },
        // One session: the dispatch word is restored (W3 keeps hits off the node), then the
        // node is unlinked and freed.
        scn(
            "global-remove",
            vec![Global(0, True)],
            vec![Global(0, False)],
        ),
        // Global pause sets global as true does: the halves are staged again and flipped.
        scn(
            "global-pause",
            vec![Global(0, True)],
            vec![Global(0, Pause)],
        ),
        // Local trace in the same session clears its global flag on the export entry: one
        // trace_pattern installs in the code and removes from the export area.
        scn(
            "global-to-local",
            vec![Global(0, True)],
            vec![Local(0, True)],
        ),
        // Two sessions: removing the newer one unlinks the head of a still-redirected entry.
        scn(
            "global-remove-2sess",
            vec![Global(0, True), Global(1, True)],
            vec![Global(1, False)],
        ),
        // Removing the older one: a scheduler on the head walks `next` onto it.
        scn(
            "global-remove-old-2sess",
            vec![Global(0, True), Global(1, True)],
            vec![Global(0, False)],
        ),
    ]
}

/// The shuttle scenarios: the loom ones with two more schedulers, and a churn over both
/// sessions and both areas.
pub fn shuttle_export_scenarios() -> Vec<ExportScenario> {
    use PatternOp::*;
    use Step::*;
    use XOp::*;
    let script = |fs: usize, rounds: usize| -> Vec<Step> {
        (0..rounds)
            .flat_map(|r| {
                let end = if r % 3 == 2 { Nap } else { Progress };
                (0..fs).map(move |f| Call((f + r) % fs)).chain([end])
            })
            .collect()
    };
    let mut out = loom_export_scenarios();
    for s in out.iter_mut() {
        s.schedulers.push(script(s.functions, 3));
        s.schedulers.push(script(s.functions, 4));
    }
    out.push(ExportScenario {
        name: "global-churn-2sess",
        functions: 2,
        setup: vec![Global(0, True)],
        ops: vec![
            Global(1, True),
            Global(0, False),
            Local(1, True),
            Global(0, True),
            Global(1, True),
            Global(1, False),
            Global(0, Pause),
            Global(0, False),
        ],
        schedulers: (0..3).map(|_| script(2, 6)).collect(),
    });
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
    let n = e
        .trace_pattern(&Pattern::all(), op, &spec.clone().session(session))
        .expect("valid trace_pattern");
    assert_eq!(
        n,
        e.code.len(),
        "trace_pattern returns the number of matched entries"
    );
}

/// The acted flags (over both sessions) a hit would have now on each entry: the code of
/// functions `0..n`, then their export entries (entry `n + f`).
fn acted_now<P: ThreadProgress>(e: &Engine<P>) -> Vec<u32> {
    let n = e.code.len();
    let flags = |area, i| (0..2u32).fold(0, |a, s| a | e.active_flags_in(area, s, i)) & ACTED;
    (0..n)
        .map(|f| flags(Area::Code, f))
        .chain((0..n).map(|f| flags(Area::Export, e.export_of(f).expect("exported"))))
        .collect()
}

/// Run one execution of `scn`. Panics on any violation.
pub fn run_exports<P: ThreadProgress>(scn: &ExportScenario, mutant: Option<Mutant>) {
    let cfg = EngineConfig {
        functions: (0..scn.functions)
            .map(|i| Mfa::new("m", &format!("f{i}"), 0))
            .collect(),
        schedulers: scn.schedulers.len(),
        mutant,
    };
    let engine = Arc::new(Engine::<P>::new(cfg));
    assert_eq!(engine.create_session("s1"), Ok(1));
    for o in &scn.setup {
        apply(&engine, o);
    }
    let procs = call_traced_procs(&engine, scn.schedulers.len(), 2);
    let n = engine.code.len();
    let (per_sched, gens) = schedulers_vs_stager(
        &engine,
        &scn.schedulers,
        procs,
        scn.ops.len(),
        |i| apply(&engine, &scn.ops[i]),
        || acted_now(&engine),
        move |s, f, proc, returned| {
            let before = s.hits.len();
            s.tail_call_remote(f, proc);
            assert_eq!(s.hits.len(), before + 2, "export entry hit, then code hit");
            let (x, c) = (s.hits[before], s.hits[before + 1]);
            [(n + f, x.flags), (f, c.flags)].map(|(func, fl)| Seen {
                func,
                acted: fl & ACTED,
                returned,
            })
        },
    );
    for (id, calls) in per_sched.iter().enumerate() {
        let seen: Vec<Seen> = calls.iter().flatten().copied().collect();
        check_generations(id, &seen, &gens);
    }
    if let Err(e) = engine.check_at_rest() {
        panic!("I5 at rest violated: {e}");
    }
}

/// The wait-removal mutants of the trace_pattern sequence, on the export area.
pub const EXPORT_MUTANTS: [Mutant; 5] = [
    Mutant::SkipWaitBeforeInstall,
    Mutant::SkipWaitBeforeCommit,
    Mutant::SkipWaitBeforeUninstall,
    Mutant::SkipWaitBeforeConsolidate,
    Mutant::SkipWaitBeforeFree,
];

/// Which checker kills which wait-removal mutant on which export scenario.
pub fn expected_export_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
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
