//! Model of the meta tracer swap (`reference/src/actions/meta.rs`, M1–M3), for shuttle
//! (`tests/meta_shuttle.rs`) and loom (`tests/meta_loom.rs`).
//!
//! One function, meta traced with a tracer that answers `remove` (its `enabled` callback does an
//! atomic increment, a scheduling point inside the call). Two schedulers each call the function
//! once: both may load the same cell; the winner of the NIL compare-and-swap retires it. The
//! stager meanwhile reclaims retired cells twice, then once more after the joins.
//!
//! Properties:
//! - M-free: no scheduler touches a freed cell (the engine's liveness assertion after the
//!   tracer call fires otherwise);
//! - M-once: exactly one cell is retired and freed (the CAS has one winner), and `trace_info`
//!   then shows the NIL tracer as `[]`.
//!
//! Checked parameters: 2 schedulers, 1 function, 3 reclaims; shuttle PCT (depth 3) and random,
//! `BPSPEC_SHUTTLE_ITERS` iterations each (seed `harness::shuttle_run::SEED`); loom at
//! `LOOM_MAX_PREEMPTIONS` (the results table records executions).

use crate::Placement;
use bpspec_reference::sync::{spawn, Arc, AtomicU32, JoinHandle, Ordering::Relaxed};
use bpspec_reference::{
    Enabled, Engine, FlagSet, InfoKey, Mutant, PatternOp, Process, Scheduler, Term, ThreadProgress,
    TraceOpts, TraceSpec, TraceTag, Tracer, TracerSpec, WaitPlan,
};

/// A meta tracer that is gone: every event answers `remove`.
struct Gone(AtomicU32);

impl Tracer for Gone {
    fn enabled(&self, _: TraceTag, _: &Term, _: &Term) -> Enabled {
        // Relaxed: a counter for the scheduling point only; nothing is published through it.
        self.0.fetch_add(1, Relaxed);
        Enabled::Remove
    }
    fn trace(&self, _: TraceTag, _: &Term, _: &Term, _: &Term, _: &TraceOpts) {
        panic!("a tracer answering remove is never asked to trace")
    }
}

/// The fixture the models share: an engine with `functions` functions (`m:f0/0`, ..) at
/// `placement` and `schedulers` schedulers.
fn engine<P: ThreadProgress>(
    functions: usize,
    schedulers: usize,
    mutant: Option<Mutant>,
    placement: Placement,
) -> Engine<P> {
    crate::placed_engine(functions, schedulers, mutant, 1, placement)
}

/// A tracer that is gone ([`Gone`]), named by the tracer pid `pid`.
fn gone(pid: u64) -> TracerSpec {
    TracerSpec::new(std::sync::Arc::new(Gone(AtomicU32::new(0))), Term::Pid(pid))
}

/// Meta trace f0 (and nothing else) with `tracer`.
fn set_meta<P: ThreadProgress>(e: &Engine<P>, tracer: &TracerSpec) {
    let only_meta = TraceSpec::counters(FlagSet::default()).meta(tracer.clone());
    crate::trace_on(e, Some(0), PatternOp::True, &only_meta);
}

/// One execution. Panics on any violation. Runs under shuttle (`tests/meta_shuttle.rs`) and
/// loom (`tests/meta_loom.rs`).
pub fn run_meta_swap<P: ThreadProgress>(mutant: Option<Mutant>) {
    meta_swap::<P>(mutant, Placement::Static)
}

fn meta_swap<P: ThreadProgress>(mutant: Option<Mutant>, placement: Placement) {
    let engine = Arc::new(engine::<P>(1, 2, mutant, placement));
    set_meta(&engine, &gone(7));
    let handles: Vec<_> = (0..2)
        .map(|id| {
            let engine = engine.clone();
            spawn(move || {
                let mut s = Scheduler::start(engine, id);
                crate::call_at(&mut s, 0, &Process::new(100 + id as u64));
                s.progress();
                s.sleep();
            })
        })
        .collect();
    let mut freed = engine.reclaim_meta_tracers();
    freed += engine.reclaim_meta_tracers();
    for h in handles {
        h.join().expect("scheduler panicked");
    }
    freed += engine.reclaim_meta_tracers();
    assert_eq!(freed, 1, "M-once: one cell retired and freed");
    let info = match placement {
        Placement::Static => engine.trace_info_term(0, &engine.code.funcs[0].mfa, InfoKey::Meta),
        Placement::Versions => engine.trace_info_module_in(0, 0, 0, InfoKey::Meta),
    };
    assert_eq!(info.to_string(), "{meta,[]}", "M-once: NIL shows as []");
}

/// Scheduler 0 on its own thread: its process calls f0, then again after a progress point.
/// Returns what each hit counted on ((function, `Hit::counted`), for count conservation).
fn hit_twice<P: ThreadProgress>(engine: &Arc<Engine<P>>) -> JoinHandle<Vec<(usize, u64)>> {
    let e2 = engine.clone();
    spawn(move || {
        let mut s = Scheduler::start(e2, 0);
        let first = crate::call_at(&mut s, 0, &Process::new(100));
        s.progress();
        let second = crate::call_at(&mut s, 0, &Process::new(100));
        s.sleep();
        vec![(0, first.1), (0, second.1)]
    })
}

/// The meta tracer replaced while a scheduler hits the function (M1/M2 under loom): the stager
/// sets meta trace again with a second tracer, which swaps a new cell into the slot (Release)
/// while the scheduler loads it (Acquire) and calls it. Property: M-free (the liveness word of
/// whichever cell the scheduler loaded is read, under loom's causality check, before and after
/// the call). Checked parameters: 1 scheduler, 1 function, one replacement, 3 reclaims.
pub fn run_meta_replace<P: ThreadProgress>(mutant: Option<Mutant>) {
    meta_replace::<P>(mutant, Placement::Static)
}

fn meta_replace<P: ThreadProgress>(mutant: Option<Mutant>, placement: Placement) {
    let engine = Arc::new(engine::<P>(1, 1, mutant, placement));
    let (first, second) = (gone(7), gone(8));
    set_meta(&engine, &first);
    let h = hit_twice(&engine);
    set_meta(&engine, &second);
    engine.reclaim_meta_tracers();
    h.join().expect("scheduler panicked");
    engine.reclaim_meta_tracers();
}

/// Several cells retired before and during one reclaim (M3 with a list of more than one cell):
/// two functions meta traced with one tracer, replaced in one `trace_pattern` (two cells retired
/// by the staging swaps, none reclaimed yet); then the stager reclaims while two schedulers hit
/// f0, whose new tracer answers `remove`: the winner of the compare-and-swap retires a third
/// cell during the reclaim. Scheduler 1 passes a progress point first, then hits f0: under the
/// mutant [`Mutant::MetaReclaimWaitBeforeTake`] the reclaim's wait can count that point, end
/// after scheduler 0's retirement and progress point, and take and free the third cell while
/// scheduler 1 is still inside its tracer call. Properties: M-free (the engine's liveness
/// assertions on the cell), and every retired cell freed once (three in all, at rest).
/// Checked parameters: 2 schedulers, 2 functions, 3 retirements, 2 reclaims.
pub fn run_meta_reclaim_many<P: ThreadProgress>(mutant: Option<Mutant>) {
    meta_reclaim_many::<P>(mutant, Placement::Static)
}

fn meta_reclaim_many<P: ThreadProgress>(mutant: Option<Mutant>, placement: Placement) {
    let engine = Arc::new(engine::<P>(2, 2, mutant, placement));
    let only_meta = |t: &TracerSpec| TraceSpec::counters(FlagSet::default()).meta(t.clone());
    crate::trace_on(&engine, None, PatternOp::True, &only_meta(&gone(7)));
    // Both cells of tracer 7 are swapped out and retired (the reclaim at the start of this
    // trace_pattern ran before, on an empty list).
    crate::trace_on(&engine, None, PatternOp::True, &only_meta(&gone(8)));
    let handles: Vec<_> = (0..2)
        .map(|id| {
            let engine = engine.clone();
            spawn(move || {
                let mut s = Scheduler::start(engine, id);
                if id == 1 {
                    s.progress();
                }
                crate::call_at(&mut s, 0, &Process::new(100 + id as u64));
                s.progress();
                s.sleep();
            })
        })
        .collect();
    let mut freed = engine.reclaim_meta_tracers();
    for h in handles {
        h.join().expect("scheduler panicked");
    }
    freed += engine.reclaim_meta_tracers();
    assert_eq!(
        freed, 3,
        "M-once: two swapped cells and one removed, each freed once"
    );
}

/// Meta cleared by `trace_pattern(false, [meta])` under `plan` while a scheduler hits the
/// function twice around a progress point. `keep_count`: the function also has call_count, so
/// its node stays (the sequence unlinks nothing and uninstall restores nothing: an idle
/// sequence but for the meta tracer consolidate releases, which the elide-idle plan therefore
/// does not treat as idle); otherwise the node is unlinked and freed (W3 and W4 needed).
/// Properties: M-free and I1 (the engine's liveness assertions on the node, the
/// `BpMetaTracer` and the cell), I5 at rest, the cell freed once.
pub fn run_meta_clear<P: ThreadProgress>(mutant: Option<Mutant>, plan: WaitPlan, keep_count: bool) {
    meta_clear::<P>(mutant, plan, keep_count, Placement::Static)
}

fn meta_clear<P: ThreadProgress>(
    mutant: Option<Mutant>,
    plan: WaitPlan,
    keep_count: bool,
    placement: Placement,
) {
    let engine = Arc::new(engine::<P>(1, 1, mutant, placement).with_wait_plan(plan));
    let fl = FlagSet {
        call_count: keep_count,
        ..FlagSet::default()
    };
    let meta = TraceSpec::counters(fl).meta(gone(7));
    crate::trace_on(&engine, Some(0), PatternOp::True, &meta);
    let h = hit_twice(&engine);
    let clear = TraceSpec::counters(FlagSet::default()).meta(gone(9));
    crate::trace_on(&engine, Some(0), PatternOp::False, &clear);
    engine.settle();
    let counted = h.join().expect("scheduler panicked");
    engine.reclaim_meta_tracers();
    if let Err(e) = engine.check_at_rest() {
        panic!("I5 at rest violated: {e}");
    }
    crate::check_count_conservation(&engine, counted);
}

/// The meta scenarios, by name: `meta-swap` ([`run_meta_swap`]), `meta-replace`
/// ([`run_meta_replace`]) and `meta-reclaim-many` ([`run_meta_reclaim_many`]).
pub const META_SCENARIOS: [&str; 3] = ["meta-swap", "meta-replace", "meta-reclaim-many"];

/// The meta scenarios run under every wait plan (`tests/waits_loom.rs`, `waits_shuttle.rs`):
/// `meta-clear` (the node unlinked) and `meta-clear-keep` (call_count keeps the node).
pub const META_PLAN_SCENARIOS: [&str; 2] = ["meta-clear", "meta-clear-keep"];

/// Run the meta scenario `name` ([`META_SCENARIOS`] and [`META_PLAN_SCENARIOS`] under ERTS's
/// plan) with its functions at `placement` (docs/nonblocking-load.md §7, "The static area").
pub fn run_meta_on<P: ThreadProgress>(name: &str, mutant: Option<Mutant>, placement: Placement) {
    match name {
        "meta-swap" => meta_swap::<P>(mutant, placement),
        "meta-replace" => meta_replace::<P>(mutant, placement),
        "meta-reclaim-many" => meta_reclaim_many::<P>(mutant, placement),
        "meta-clear" => meta_clear::<P>(mutant, WaitPlan::Erts, false, placement),
        "meta-clear-keep" => meta_clear::<P>(mutant, WaitPlan::Erts, true, placement),
        other => panic!("no meta scenario {other} on a placement"),
    }
}

/// The meta scenarios [`run_meta_on`] runs.
pub const META_PLACED_SCENARIOS: [&str; 5] = [
    "meta-swap",
    "meta-replace",
    "meta-reclaim-many",
    "meta-clear",
    "meta-clear-keep",
];

/// Run a scenario of [`META_PLAN_SCENARIOS`] under `plan`.
pub fn run_meta_planned<P: ThreadProgress>(name: &str, mutant: Option<Mutant>, plan: WaitPlan) {
    run_meta_planned_on::<P>(name, mutant, plan, Placement::Static)
}

/// [`run_meta_planned`] with the function at `placement`.
pub fn run_meta_planned_on<P: ThreadProgress>(
    name: &str,
    mutant: Option<Mutant>,
    plan: WaitPlan,
    placement: Placement,
) {
    match name {
        "meta-clear" => meta_clear::<P>(mutant, plan, false, placement),
        "meta-clear-keep" => meta_clear::<P>(mutant, plan, true, placement),
        other => panic!("unknown meta plan scenario {other}"),
    }
}

/// The wait-removal mutants each checker must kill on the meta scenarios under `plan`. W4 is
/// not claimed: with one session, once W3 has passed no scheduler reaches the unlinked node
/// (its instruction is restored and its slot emptied), so `skip-w4-before-free` survives
/// `meta-clear` (loom, preemption bound 2); the export scenario `global-remove-2sess` kills it
/// under every plan.
pub fn expected_meta_plan_kills(checker: &str, _plan: WaitPlan) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    match checker {
        "loom" | "shuttle" => vec![(SkipWaitBeforeConsolidate, "meta-clear")],
        other => panic!("unknown checker {other}"),
    }
}

/// Which checker kills which meta mutant on which scenario.
pub fn expected_meta_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    match checker {
        // meta-replace does not kill it (loom, preemption bound 2, 1,720 executions): with one
        // scheduler a cell is retired either by that scheduler's own compare-and-swap, after
        // its last access, or by the stager's swap at staging, and then the same
        // trace_pattern's waits W0-W4 pass the scheduler's progress point before the reclaim.
        // meta-swap needs a second scheduler still inside the cell the winner retired.
        "loom" => vec![
            (Mutant::MetaFreeWithoutWait, "meta-swap"),
            (Mutant::MetaReclaimWaitBeforeTake, "meta-reclaim-many"),
        ],
        "shuttle" => vec![
            (Mutant::MetaFreeWithoutWait, "meta-swap"),
            (Mutant::MetaReclaimWaitBeforeTake, "meta-reclaim-many"),
        ],
        other => panic!("unknown checker {other}"),
    }
}
