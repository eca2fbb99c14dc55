//! Refinement under shuttle: random and PCT interleavings of the engine (stager + scheduler
//! threads) record their step histories, and the spec's refinement checker
//! (`bpspec_spec::model::refine`) must accept every one of them; an engine with the
//! `uninstall-before-commit` reordering must be rejected in every one. Iterations per scenario
//! and scheduler: BPSPEC_SHUTTLE_ITERS / 2 (1,000 in `make test`, 25,000 in `make check`).
#![cfg(shuttle)]

use bpspec_models::harness::shuttle_run::config;
use bpspec_reference::history::Event;
use bpspec_reference::sync::{spawn, yield_now, Arc};
use bpspec_reference::TraceSpec;
use bpspec_reference::{
    Engine, EngineConfig, Mfa, Mutant, Pattern, PatternOp, Process, Qsbr, Scheduler, TraceFlags,
};
use bpspec_spec::model::refine::{check, check_pipelined};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::Runner;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// A refinement checker: [`check`] or [`check_pipelined`].
type CheckFn = fn(&[Event], u8, u8) -> Result<usize, bpspec_spec::model::refine::Rejection>;

const SEED: u64 = 0x7370_6563_3372; // "spec3r"

fn iters() -> usize {
    std::env::var("BPSPEC_SHUTTLE_ITERS")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .map_or(500, |n| (n / 2).max(1))
}

const LOCAL: TraceFlags = TraceFlags::LOCAL;
const COUNT: TraceFlags = TraceFlags::CALL_COUNT;

/// (session, function or None = all, op, flags)
type Op = (u32, Option<usize>, PatternOp, TraceFlags);

#[derive(Clone)]
struct Scn {
    name: &'static str,
    schedulers: usize,
    functions: usize,
    ops: Vec<Op>,
    /// The sizes of the batches the ops form, in order, run by `trace_pattern_batch` in
    /// session 0; empty: each op is its own `trace_pattern` call.
    batches: Vec<usize>,
}

fn scenarios() -> Vec<Scn> {
    use PatternOp::*;
    let scn = |name, schedulers, functions, ops: &[Op]| Scn {
        name,
        schedulers,
        functions,
        ops: ops.to_vec(),
        batches: vec![],
    };
    let one_session = [
        (0, None, True, LOCAL),
        (0, Some(0), True, COUNT),
        (0, Some(0), Pause, COUNT),
        (0, None, False, LOCAL),
        (0, Some(0), False, COUNT),
    ];
    let two_sessions = [
        (0, None, True, LOCAL),
        (1, None, True, LOCAL),
        (0, None, False, LOCAL),
    ];
    let two_functions = [
        (0, None, True, LOCAL),
        (1, Some(0), True, LOCAL),
        (0, None, False, LOCAL),
        (1, Some(0), False, LOCAL),
    ];
    vec![
        scn("2sched-2func-1session", 2, 2, &one_session),
        scn("2sched-1func-2sessions", 2, 1, &two_sessions),
        scn("3sched-2func-2sessions", 3, 2, &two_functions),
    ]
}

/// `m:f{f}/0`, or every function of `m` for `None`.
fn pattern(f: Option<usize>) -> Pattern {
    f.map_or_else(Pattern::all, |f| {
        Pattern::exact(&Mfa::new("m", &format!("f{f}"), 0))
    })
}

/// One execution on an engine with `mutant` under `plan` (its history recorded): `schedulers` threads each run four
/// rounds (two calls when `calls`, then a progress point; scheduler 0 sleeps and wakes instead
/// in round 2) while `stager` runs on this thread; returns the recorded history.
fn record(
    (schedulers, functions): (usize, usize),
    (mutant, plan): (Option<Mutant>, bpspec_reference::WaitPlan),
    calls: bool,
    stager: impl FnOnce(&Engine<Qsbr>),
) -> Vec<Event> {
    let e = Arc::new(
        Engine::<Qsbr>::new(EngineConfig::simple(functions, schedulers).with_mutant(mutant))
            .with_wait_plan(plan),
    );
    e.history.start();
    let handles: Vec<_> = (0..schedulers)
        .map(|id| {
            let (e, nf) = (e.clone(), functions);
            spawn(move || {
                let mut s = Scheduler::start(e, id);
                s.record = false;
                let p = Process::call_traced_in(10 + id as u64, 0);
                for round in 0..4 {
                    if calls {
                        s.call((id + round) % nf, &p);
                        s.call((id + round + 1) % nf, &p);
                    }
                    if round == 2 && id == 0 {
                        s.sleep();
                        s.wake();
                    } else {
                        s.progress();
                    }
                    yield_now();
                }
                s.sleep();
            })
        })
        .collect();
    stager(&e);
    for h in handles {
        h.join().expect("scheduler thread");
    }
    e.history.take()
}

/// One execution; returns the recorded history.
fn execute(scn: &Scn, mutant: Option<Mutant>) -> Vec<Event> {
    execute_in(scn, mutant, bpspec_reference::WaitPlan::Erts, true)
}

/// One execution under `plan` ([`record`]): the ops as single calls, or as the scenario's
/// batches; returns the recorded history.
fn execute_in(
    scn: &Scn,
    mutant: Option<Mutant>,
    plan: bpspec_reference::WaitPlan,
    calls: bool,
) -> Vec<Event> {
    use bpspec_reference::BatchEntry;
    record(
        (scn.schedulers, scn.functions),
        (mutant, plan),
        calls,
        |e| {
            let mut ops = scn.ops.iter();
            if scn.batches.is_empty() {
                for &(session, f, op, fl) in ops {
                    e.trace_pattern(&pattern(f), op, &TraceSpec::from(fl).session(session))
                        .expect("valid op");
                }
                return;
            }
            for &k in &scn.batches {
                let entries: Vec<BatchEntry> = ops
                    .by_ref()
                    .take(k)
                    .map(|&(_, f, op, fl)| BatchEntry {
                        pattern: pattern(f),
                        op,
                        spec: TraceSpec::from(fl),
                    })
                    .collect();
                e.trace_pattern_batch(0, &entries).expect("valid batch");
            }
        },
    )
}

fn run(scn: &Scn, pct: bool, n: usize, f: impl Fn(&Scn) + Send + Sync + 'static) {
    let name = format!("refine {} pct={pct}", scn.name);
    let scn = scn.clone();
    let body = move || f(&scn);
    bpspec_reference::watchdog::guard(&name, move || {
        if pct {
            Runner::new(PctScheduler::new_from_seed(SEED, 3, n), config()).run(body);
        } else {
            Runner::new(RandomScheduler::new_from_seed(SEED, n), config()).run(body);
        }
    });
}

/// `n` runs (PCT depth 3 or random) of `history`, each recorded history checked by `check`
/// (`schedulers` and `functions` as recorded); asserts every run was accepted and that in some
/// run a hit read the active index between a flip and the end of the wait after it (the stager
/// and the schedulers really interleaved), and prints the figures under `name`.
fn refine_runs(
    name: String,
    (schedulers, functions): (usize, usize),
    pct: bool,
    n: usize,
    check: CheckFn,
    history: impl Fn() -> Vec<Event> + Send + Sync + 'static,
) {
    let accepted = Arc::new(AtomicUsize::new(0));
    let interleaved = Arc::new(AtomicUsize::new(0));
    let (a, il) = (accepted.clone(), interleaved.clone());
    let t0 = std::time::Instant::now();
    let label = name.clone();
    let body = move || {
        let h = history();
        let mut after_flip = false;
        for e in &h {
            match e {
                Event::Commit => after_flip = true,
                Event::WaitEnd => after_flip = false,
                Event::Ix { .. } if after_flip => {
                    il.fetch_add(1, Relaxed);
                    break;
                }
                _ => {}
            }
        }
        match check(&h, schedulers as u8, functions as u8) {
            Ok(k) => {
                assert!(k > 20, "short history");
                a.fetch_add(1, Relaxed);
            }
            Err(r) => panic!("{label}: {r}"),
        }
    };
    if pct {
        Runner::new(PctScheduler::new_from_seed(SEED, 3, n), config()).run(body);
    } else {
        Runner::new(RandomScheduler::new_from_seed(SEED, n), config()).run(body);
    }
    let (got, il) = (accepted.load(Relaxed), interleaved.load(Relaxed));
    assert_eq!(got, n, "{name}: every run must be checked");
    assert!(
        il > 0,
        "{name}: no run read the index between a flip and its wait"
    );
    eprintln!(
        "refinement: {name} ({}, {n} iterations, seed {SEED:#x}): {got} histories accepted \
         ({il} with a hit reading the index between a flip and the next wait's end) in {:.1} s",
        if pct { "pct depth 3" } else { "random" },
        t0.elapsed().as_secs_f64()
    );
}

/// The single-call scenarios under `plan`, each history checked by `check`.
fn refine_single_calls(plan: bpspec_reference::WaitPlan, check: CheckFn) {
    let n = iters();
    for scn in scenarios() {
        for pct in [false, true] {
            let size = (scn.schedulers, scn.functions);
            let s2 = scn.clone();
            let name = match plan {
                bpspec_reference::WaitPlan::Erts => scn.name.to_string(),
                p => format!("{}@{}", scn.name, p.name()),
            };
            refine_runs(name, size, pct, n, check, move || {
                execute_in(&s2, None, plan, true)
            });
        }
    }
}

#[test]
fn engine_histories_refine_the_spec() {
    refine_single_calls(bpspec_reference::WaitPlan::Erts, check);
}

/// `min(iters(), 200)` random runs of `history`, each rejected by `check` (recorded with
/// `size` = (schedulers, functions)) for a reason containing `why`.
fn rejected_in_every_run(
    size: (usize, usize),
    check: CheckFn,
    why: &'static str,
    history: impl Fn() -> Vec<Event> + Send + Sync + 'static,
) {
    let n = iters().min(200);
    let rejected = Arc::new(AtomicUsize::new(0));
    let r2 = rejected.clone();
    let body = move || {
        let h = history();
        let r = check(&h, size.0 as u8, size.1 as u8).expect_err("the mutant must be rejected");
        assert!(r.reason.contains(why), "{r}");
        r2.fetch_add(1, Relaxed);
    };
    Runner::new(RandomScheduler::new_from_seed(SEED, n), config()).run(body);
    assert_eq!(rejected.load(Relaxed), n);
}

#[test]
fn reordered_engine_is_rejected_in_every_run() {
    let scn = scenarios().remove(0);
    let size = (scn.schedulers, scn.functions);
    let why = "uninstall, but the spec's stager is at Commit";
    rejected_in_every_run(size, check, why, move || {
        execute(&scn, Some(Mutant::UninstallBeforeCommit))
    });
}

/// A bug only some interleavings show: with `wait-without-new-period` a wait may complete on a
/// progress point from before it began. The refinement checker must reject exactly the runs in
/// which that happened (seen as a wait completing before some scheduler's progress point), and
/// accept the others: it sees interleavings, not just the stager's sequence.
#[test]
fn stale_progress_point_is_rejected_in_some_runs() {
    let n = iters();
    let scn = scenarios().remove(0);
    let (rejected, accepted) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (r2, a2) = (rejected.clone(), accepted.clone());
    run(&scn, false, n, move |scn| {
        let h = execute(scn, Some(Mutant::WaitWithoutNewPeriod));
        match check(&h, scn.schedulers as u8, scn.functions as u8) {
            Ok(_) => a2.fetch_add(1, Relaxed),
            Err(r) => {
                assert!(
                    r.reason.contains("the wait completes before scheduler"),
                    "{r}"
                );
                r2.fetch_add(1, Relaxed)
            }
        };
    });
    let (r, a) = (rejected.load(Relaxed), accepted.load(Relaxed));
    eprintln!("refinement: wait-without-new-period: {r} of {n} runs rejected, {a} accepted");
    assert!(r > 0 && a > 0, "rejected {r}, accepted {a}");
}

/// A shuttle counterexample as a trace file: one run of the engine with `uninstall-before-commit`
/// (random scheduler, seed SEED, its first iteration), its history up to the step the spec's
/// refinement checker rejects. With `BPSPEC_TRACES=DIR` the test writes
/// `DIR/refine-uninstall-before-commit.trace` (docs/traces/ holds the recorded one and its
/// timeline). The trace depends on the shuttle version and on the engine's scheduling points.
#[test]
fn rejected_history_as_a_trace_file() {
    let scn = scenarios().remove(0);
    let out = Arc::new(std::sync::Mutex::new(None));
    let o2 = out.clone();
    run(&scn, false, 1, move |scn| {
        let h = execute(scn, Some(Mutant::UninstallBeforeCommit));
        let r = check(&h, scn.schedulers as u8, scn.functions as u8)
            .expect_err("the reordered engine must be rejected");
        *o2.lock().expect("not poisoned") = Some((h[..=r.index].to_vec(), r));
    });
    let (h, r) = out
        .lock()
        .expect("not poisoned")
        .take()
        .expect("one execution ran");
    assert!(
        r.reason
            .contains("uninstall, but the spec's stager is at Commit"),
        "{r}"
    );
    let mut text = String::from(
        "# bpspec counterexample trace: header lines, then one step a line (docs/traces/README.md)\n",
    );
    text.push_str("checker\tshuttle (random scheduler) + refinement against the spec\n");
    text.push_str(&format!("model\trefine {}\n", scn.name));
    text.push_str("mutant\tuninstall-before-commit\n");
    text.push_str("property\trefinement (the history is a behaviour of the spec)\n");
    text.push_str(&format!(
        "bound\tfirst iteration, seed {SEED:#x}, {} schedulers x {} functions, {} stager ops\n",
        scn.schedulers,
        scn.functions,
        scn.ops.len()
    ));
    text.push_str(
        "command\tBPSPEC_TRACES=DIR cargo test -p bpspec-models --release --target-dir target/shuttle --test refine rejected_history_as_a_trace_file (RUSTFLAGS=\"--cfg shuttle -C debug-assertions\")\n",
    );
    for e in &h {
        let (l, t) = bpspec_spec::model::lane_of(&bpspec_spec::model::refine::describe(e));
        text.push_str(&format!("step\t{l}\t{t}\n"));
    }
    text.push_str(&format!("violated\trefinement: {r}\n"));
    if let Some(dir) = std::env::var_os("BPSPEC_TRACES") {
        let path = std::path::Path::new(&dir).join("refine-uninstall-before-commit.trace");
        std::fs::create_dir_all(&dir).expect("create the trace directory");
        std::fs::write(&path, text).expect("write the trace file");
    }
}

/// The batch scenarios.
fn batch_scenarios() -> Vec<Scn> {
    use PatternOp::*;
    vec![
        // Idle first batch (nothing to unlink: 3 waits under elide-idle), then one that unlinks
        // f1's node (local off everywhere, call_count paused on f0), then f0 emptied.
        Scn {
            name: "2sched-2func-batches",
            schedulers: 2,
            functions: 2,
            ops: vec![
                (0, None, True, LOCAL),
                (0, Some(0), True, COUNT),
                (0, Some(0), Pause, COUNT),
                (0, None, False, LOCAL),
                (0, Some(0), Restart, COUNT),
                (0, Some(0), False, COUNT),
            ],
            batches: vec![2, 2, 1, 1],
        },
    ]
}

/// Histories of batch runs (both batch plans) refine the spec's batch op (`StagerOp::Batch`,
/// docs/spec.md §12): the engine records the batch and its entries, every hit-path read and
/// every further read of the active index, and the checker walks them through the spec.
#[test]
fn batch_histories_refine_the_spec() {
    use bpspec_reference::WaitPlan;
    let n = iters();
    for scn in batch_scenarios() {
        for plan in [WaitPlan::Batch, WaitPlan::BatchElideIdle] {
            for pct in [false, true] {
                let size = (scn.schedulers, scn.functions);
                let s2 = scn.clone();
                let name = format!("{}@{}", scn.name, plan.name());
                refine_runs(name, size, pct, n, check, move || {
                    let h = execute_in(&s2, None, plan, true);
                    assert!(h.iter().any(|e| matches!(e, Event::Batch { .. })));
                    h
                });
            }
        }
    }
}

/// The batch plan's mutant `batch-elide-unlinking` (W3 and W4 skipped although consolidate
/// unlinks) is rejected by the refinement in every run, at the consolidate the spec's stager
/// does not allow before W3. The schedulers only pass progress points here: with calls, the
/// engine's own assertions could stop a run before its history is checked.
#[test]
fn batch_elide_unlinking_is_rejected_by_the_refinement() {
    use bpspec_reference::WaitPlan;
    let scn = batch_scenarios().remove(0);
    let size = (scn.schedulers, scn.functions);
    let why = "consolidate, but the spec's stager is at W3";
    rejected_in_every_run(size, check, why, move || {
        let m = Some(Mutant::BatchElideUnlinking);
        execute_in(&scn, m, WaitPlan::BatchElideIdle, false)
    });
}

/// Histories of pipelined runs (`WaitPlan::Pipeline`, docs/fewer-waits.md §6) refine the spec
/// under `Config::pipeline` ([`check_pipelined`]): every call without W4, its unlinked nodes
/// freed after the next call's first wait.
#[test]
fn pipeline_histories_refine_the_spec() {
    refine_single_calls(bpspec_reference::WaitPlan::Pipeline, check_pipelined);
}

/// Under the pipeline plan, `skip-w4-before-free` (the call frees what it unlinked at once,
/// without the next call's first wait) is rejected in every run. The schedulers only pass
/// progress points here (with calls, the engine's own assertions could stop a run first).
#[test]
fn pipeline_skip_w4_is_rejected_by_the_refinement() {
    use bpspec_reference::WaitPlan;
    let scn = scenarios().remove(0);
    let size = (scn.schedulers, scn.functions);
    let why = "no wait begun after their consolidate";
    rejected_in_every_run(size, check_pipelined, why, move || {
        execute_in(
            &scn,
            Some(Mutant::SkipWaitBeforeFree),
            WaitPlan::Pipeline,
            false,
        )
    });
}
