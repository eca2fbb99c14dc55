//! shuttle: randomized (random and PCT) schedules at larger scale: more functions, three or four
//! schedulers, repeated trace_pattern loops. Shuttle runs every atomic as SeqCst, so it finds
//! protocol-level bugs (missing waits between steps that interleave badly) but not ordering
//! bugs; the kill matrix records which mutants it can and cannot see.
#![cfg(shuttle)]

use bpspec_models::results::{catch, record, Verdict};
use bpspec_models::{expected_kills, run, shuttle_scenarios, Scenario};
use bpspec_reference::{EpochProgress, Mutant, Qsbr, ThreadProgress};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};
use std::time::Instant;

/// Fixed seeds: a failure reproduces from (seed, scheduler, shuttle version, commit).
const SEED: u64 = 0x6270_7370_6563; // "bpspec"
const PCT_DEPTH: usize = 3;

fn iters() -> usize {
    std::env::var("BPSPEC_SHUTTLE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000)
}

fn explore<P: ThreadProgress>(
    scn: &Scenario,
    mutant: Option<Mutant>,
    pct: bool,
    n: usize,
) -> (Option<String>, f64, String) {
    let scn2 = scn.clone();
    let start = Instant::now();
    let f = move || run::<P>(&scn2, mutant);
    let cx = catch(|| {
        if pct {
            Runner::new(
                PctScheduler::new_from_seed(SEED, PCT_DEPTH, n),
                Config::new(),
            )
            .run(f);
        } else {
            Runner::new(RandomScheduler::new_from_seed(SEED, n), Config::new()).run(f);
        }
    });
    let bound = if pct {
        format!("pct depth={PCT_DEPTH} iterations={n} seed={SEED:#x}")
    } else {
        format!("random iterations={n} seed={SEED:#x}")
    };
    (cx, start.elapsed().as_secs_f64(), bound)
}

fn baseline<P: ThreadProgress>() {
    let mut failures = Vec::new();
    for scn in shuttle_scenarios() {
        for pct in [false, true] {
            let (cx, secs, bound) = explore::<P>(&scn, None, pct, iters());
            record(&Verdict {
                checker: "shuttle",
                progress: P::name(),
                scenario: scn.name,
                variant: "baseline",
                bound,
                expected: "hold",
                observed: if cx.is_some() { "VIOLATED" } else { "hold" },
                seconds: secs,
                detail: cx.clone().unwrap_or_default(),
            });
            if let Some(c) = cx {
                failures.push(format!("{} (pct={pct}): {c}", scn.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "shuttle {} baseline violations: {failures:?}",
        P::name()
    );
}

#[test]
fn baseline_qsbr() {
    baseline::<Qsbr>();
}

#[test]
fn baseline_epoch() {
    baseline::<EpochProgress>();
}

/// Mutants one scheduler may not reach within 2,000 iterations while the other kills them at
/// once (the test requires a kill by either; a kill is accepted on these rows too). The random
/// scheduler's fixed-seed schedules shift whenever the engine gains or loses a yield point
/// anywhere in an execution (issue 5's session state and export area did), and these two
/// windows are narrow for it; PCT finds both in its first iterations.
const MAY_MISS: &[(Mutant, bool)] = &[
    (Mutant::SkipWaitBeforeConsolidate, false),
    (Mutant::WaitWithoutNewPeriod, false),
];

/// Every mutant in shuttle's column must be found by PCT or random within the iteration budget;
/// every mutant *not* in it is run too, and recorded as surviving (an ordering bug shuttle
/// cannot see by construction). Both schedulers run and are recorded for every mutant.
#[test]
fn kill_matrix() {
    let kills = expected_kills("shuttle");
    let mut survivors = Vec::new();
    for m in Mutant::ALL {
        let expected = kills.iter().find(|(k, _)| *k == m).map(|(_, s)| *s);
        let name = expected.unwrap_or("remove-2sched");
        let scn = shuttle_scenarios()
            .into_iter()
            .find(|s| s.name == name)
            .expect("scenario");
        let mut killed = false;
        for pct in [true, false] {
            let (cx, secs, bound) = explore::<Qsbr>(&scn, Some(m), pct, iters());
            killed |= cx.is_some();
            record(&Verdict {
                checker: "shuttle",
                progress: "qsbr",
                scenario: name,
                variant: m.name(),
                bound,
                expected: if expected.is_some() && !MAY_MISS.contains(&(m, pct)) {
                    "killed"
                } else {
                    "survives"
                },
                observed: if cx.is_some() { "killed" } else { "survives" },
                seconds: secs,
                detail: cx.clone().unwrap_or_default(),
            });
        }
        if expected.is_some() && !killed {
            survivors.push(m.name());
        }
    }
    assert!(
        survivors.is_empty(),
        "mutants shuttle should kill survived both schedulers: {survivors:?}"
    );
}
