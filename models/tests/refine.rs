//! Refinement under shuttle: random and PCT interleavings of the engine (stager + scheduler
//! threads) record their step histories, and the spec's refinement checker
//! (`bpspec_spec::model::refine`) must accept every one of them; an engine with the
//! `uninstall-before-commit` reordering must be rejected in every one. Iterations per scenario
//! and scheduler: BPSPEC_SHUTTLE_ITERS / 2 (1,000 in `make test`, 25,000 in `make check`).
#![cfg(shuttle)]

use bpspec_reference::history::Event;
use bpspec_reference::sync::{spawn, yield_now, Arc};
use bpspec_reference::TraceSpec;
use bpspec_reference::{
    Engine, EngineConfig, Mfa, Mutant, Pattern, PatternOp, Process, Qsbr, Scheduler, TraceFlags,
};
use bpspec_spec::model::refine::check;
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

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
}

fn scenarios() -> Vec<Scn> {
    use PatternOp::*;
    let scn = |name, schedulers, functions, ops: &[Op]| Scn {
        name,
        schedulers,
        functions,
        ops: ops.to_vec(),
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

/// One execution; returns the recorded history.
fn execute(scn: &Scn, mutant: Option<Mutant>) -> Vec<bpspec_reference::history::Event> {
    let e = Arc::new(Engine::<Qsbr>::new(
        EngineConfig::simple(scn.functions, scn.schedulers).with_mutant(mutant),
    ));
    e.history.start();
    let handles: Vec<_> = (0..scn.schedulers)
        .map(|id| {
            let (e, nf) = (e.clone(), scn.functions);
            spawn(move || {
                let mut s = Scheduler::start(e, id);
                s.record = false;
                let p = Process::call_traced_in(10 + id as u64, 0);
                for round in 0..4 {
                    s.call((id + round) % nf, &p);
                    s.call((id + round + 1) % nf, &p);
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
    for &(session, f, op, fl) in &scn.ops {
        let pat = f.map_or_else(Pattern::all, |f| {
            Pattern::exact(&Mfa::new("m", &format!("f{f}"), 0))
        });
        e.trace_pattern(&pat, op, &TraceSpec::from(fl).session(session))
            .expect("valid op");
    }
    for h in handles {
        h.join().expect("scheduler thread");
    }
    e.history.take()
}

fn run(scn: &Scn, pct: bool, n: usize, f: impl Fn(&Scn) + Send + Sync + 'static) {
    let name = format!("refine {} pct={pct}", scn.name);
    let scn = scn.clone();
    let body = move || f(&scn);
    bpspec_reference::watchdog::guard(&name, move || {
        if pct {
            Runner::new(PctScheduler::new_from_seed(SEED, 3, n), Config::new()).run(body);
        } else {
            Runner::new(RandomScheduler::new_from_seed(SEED, n), Config::new()).run(body);
        }
    });
}

#[test]
fn engine_histories_refine_the_spec() {
    let n = iters();
    for scn in scenarios() {
        for pct in [false, true] {
            let accepted = Arc::new(AtomicUsize::new(0));
            let interleaved = Arc::new(AtomicUsize::new(0));
            let (a, il) = (accepted.clone(), interleaved.clone());
            let t0 = std::time::Instant::now();
            run(&scn, pct, n, move |scn| {
                let h = execute(scn, None);
                // A hit's read between a flip and the end of the wait after it: the stager and
                // the schedulers really interleaved in this run.
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
                match check(&h, scn.schedulers as u8, scn.functions as u8) {
                    Ok(k) => {
                        assert!(k > 20, "short history");
                        a.fetch_add(1, Relaxed);
                    }
                    Err(r) => panic!("{}: {r}", scn.name),
                }
            });
            let got = accepted.load(Relaxed);
            let il = interleaved.load(Relaxed);
            assert_eq!(got, n, "{}: every run must be checked", scn.name);
            assert!(
                il > 0,
                "{}: no run read the index between a flip and its wait",
                scn.name
            );
            eprintln!(
                "refinement: {} ({}, {n} iterations, seed {SEED:#x}): {got} histories accepted \
                 ({il} with a hit reading the index between a flip and the next wait's end) in {:.1} s",
                scn.name,
                if pct { "pct depth 3" } else { "random" },
                t0.elapsed().as_secs_f64()
            );
        }
    }
}

#[test]
fn reordered_engine_is_rejected_in_every_run() {
    let n = iters().min(200);
    let scn = scenarios().remove(0);
    let rejected = Arc::new(AtomicUsize::new(0));
    let r2 = rejected.clone();
    run(&scn, false, n, move |scn| {
        let h = execute(scn, Some(Mutant::UninstallBeforeCommit));
        let r = check(&h, scn.schedulers as u8, scn.functions as u8)
            .expect_err("the reordered engine must be rejected");
        assert!(
            r.reason
                .contains("uninstall, but the spec's stager is at Commit"),
            "{r}"
        );
        r2.fetch_add(1, Relaxed);
    });
    assert_eq!(rejected.load(Relaxed), n);
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
