//! shuttle: randomized (random and PCT) schedules at larger scale: more functions, three or four
//! schedulers, repeated trace_pattern loops. Shuttle runs every atomic as SeqCst, so it finds
//! protocol-level bugs (missing waits between steps that interleave badly) but not ordering
//! bugs; the kill matrix records which mutants it can and cannot see.
#![cfg(shuttle)]

use bpspec_models::harness::shuttle_run::{self, assert_kill_column, explore_run, kill_rows};
use bpspec_models::{count_kills, expected_kills, run, run_on, shuttle_scenarios};
use bpspec_reference::{EpochProgress, Mutant, Qsbr, ThreadProgress};

fn baseline<P: ThreadProgress>() {
    let mut failures = Vec::new();
    for scn in shuttle_scenarios() {
        for pct in [false, true] {
            let cx = explore_run(P::name(), &scn, "baseline", None, pct, "hold", run::<P>);
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

/// The scenarios on a module's current version, never loaded (`Placement::Versions`): every
/// baseline holds there too, under PCT and random, at `shuttle_run::versions_iters`
/// iterations.
#[test]
fn baseline_versions() {
    shuttle_run::assert_baselines_on_versions(shuttle_scenarios(), run_on::<Qsbr>);
}

/// Every kill claimed on the static area's scenarios (the kill matrix's and the call_count
/// mutants') on a module's current version, by PCT or random.
#[test]
fn versions_kill_matrix() {
    let claims: Vec<_> = expected_kills("shuttle")
        .into_iter()
        .chain(count_kills("shuttle"))
        .collect();
    let mutants: Vec<Mutant> = claims.iter().map(|&(m, _)| m).collect();
    let rows = kill_rows(&mutants, &claims, |_| "remove-2sched");
    let may_miss = |m, pct| MAY_MISS.contains(&(m, pct));
    assert_kill_column(
        "trace_pattern on versions",
        rows,
        may_miss,
        |(m, name, _), pct, exp| {
            let scn = shuttle_scenarios()
                .into_iter()
                .find(|s| s.name == name)
                .expect("scenario");
            shuttle_run::explore_on_versions(&scn, Some(m), pct, exp, run_on::<Qsbr>).is_some()
        },
    );
}

/// Mutants one scheduler may not reach within 2,000 iterations while the other kills them at
/// once (the test requires a kill by either; a kill is accepted on these rows too). The random
/// scheduler's fixed-seed schedules shift whenever the engine gains or loses a yield point
/// anywhere in an execution (the session state and the export area did), and these two
/// windows are narrow for it; PCT finds both in its first iterations. The third joined with meta
/// trace: its retire-list lock (`Engine::reclaim_meta`, taken at every `trace_pattern`)
/// added a yield point, and the random scheduler no longer meets skip-w4's window on
/// remove-session within 2,000 iterations (seed 0x627073706563); PCT still kills it in its first
/// iterations ("read after free: GenericBp#2 (next link)").
const MAY_MISS: &[(Mutant, bool)] = &[
    (Mutant::SkipWaitBeforeConsolidate, false),
    (Mutant::WaitWithoutNewPeriod, false),
    (Mutant::SkipWaitBeforeFree, false),
];

/// Every mutant in shuttle's column must be found by PCT or random within the iteration budget;
/// every mutant *not* in it is run too (on remove-2sched), and recorded as surviving (an
/// ordering bug shuttle cannot see by construction). Both schedulers run and are recorded for
/// every mutant.
#[test]
fn kill_matrix() {
    let rows = kill_rows(&Mutant::ALL, &expected_kills("shuttle"), |_| {
        "remove-2sched"
    });
    let may_miss = |m, pct| MAY_MISS.contains(&(m, pct));
    assert_kill_column("trace_pattern", rows, may_miss, |(m, name, _), pct, exp| {
        let scn = shuttle_scenarios()
            .into_iter()
            .find(|s| s.name == name)
            .expect("scenario");
        explore_run("qsbr", &scn, m.name(), Some(m), pct, exp, run::<Qsbr>).is_some()
    });
}

/// The call_count mutants (`Mutant::COUNTS`) break count conservation at rest
/// (`bpspec_models::count_kills`); each must be found by PCT or random.
#[test]
fn count_kill_matrix() {
    let rows = kill_rows(&Mutant::COUNTS, &count_kills("shuttle"), |_| {
        "remove-2sched"
    });
    assert_kill_column(
        "call_count",
        rows,
        |_, _| false,
        |(m, name, _), pct, exp| {
            let scn = shuttle_scenarios()
                .into_iter()
                .find(|s| s.name == name)
                .expect("scenario");
            explore_run("qsbr", &scn, m.name(), Some(m), pct, exp, run::<Qsbr>).is_some()
        },
    );
}

/// The shim's scheduling point is skipped only where the scheduler has one task to offer
/// (reference/src/protocol/sync.rs, `gate`): the main task before its first spawn and after
/// every spawned task finished; never while another task is unfinished, from either side.
#[test]
fn scheduling_point_skipped_only_when_alone() {
    use bpspec_reference::sync::{alone, spawn};
    shuttle::check_random(
        || {
            assert!(alone(), "main before its first spawn");
            let child = spawn(|| assert!(!alone(), "a spawned task while main is unfinished"));
            let second = spawn(|| ());
            assert!(!alone(), "main while its tasks are unfinished");
            child.join().expect("child");
            second.join().expect("second");
            assert!(alone(), "main after every spawned task finished");
        },
        200,
    );
}

/// The bound's `distinct=` and `last-new=` words (`shuttle_run::Distinct`) count executions:
/// one task alone runs one schedule however many iterations; two tasks with three atomic
/// operations each run a handful, each found early and then run again and again; the count
/// can neither stay at 1 (decisions ignored) nor reach the iterations (something other than
/// the decisions in the digest).
#[test]
fn distinct_counts_the_schedules_a_run_explored() {
    use bpspec_models::harness::shuttle_run::explore;
    use shuttle::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use shuttle::sync::Arc;
    fn word(bound: &str, key: &str) -> usize {
        bound
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {bound:?}"))
    }
    let (cx, _, alone) = explore("distinct alone", false, 500, || {
        let a = AtomicUsize::new(0);
        for _ in 0..3 {
            a.fetch_add(1, SeqCst);
        }
    });
    assert!(cx.is_none());
    assert_eq!(word(&alone, "distinct="), 1, "{alone}");
    assert_eq!(word(&alone, "last-new="), 1, "{alone}");
    for pct in [false, true] {
        let (cx, _, two) = explore("distinct two tasks", pct, 2000, || {
            let a = Arc::new(AtomicUsize::new(0));
            let b = a.clone();
            let t = shuttle::thread::spawn(move || {
                for _ in 0..3 {
                    b.fetch_add(1, SeqCst);
                }
            });
            for _ in 0..3 {
                a.fetch_add(1, SeqCst);
            }
            t.join().unwrap();
        });
        assert!(cx.is_none());
        let (d, last) = (word(&two, "distinct="), word(&two, "last-new="));
        assert!(d > 1 && d < 2000 && last < 2000, "{two}");
    }
}

/// `make check`'s PCT cap (`BPSPEC_SHUTTLE_PCT_ITERS`, docs/running.md "The PCT budget") and
/// the claims' floor (`CLAIM_FLOOR`, docs/mutants.md "Claims and the seed") rest on two facts
/// checked here. The budget caps PCT rows only, and the floor raises claimed kills only. And a
/// PCT run of `k` iterations is the first `k` of a longer run from the same seed: a bug first
/// found at iteration `k` of a 2,000-iteration run is found at `k` by a run of exactly `k` and
/// missed by a run of `k - 1`. If PCT's schedules depended on the iteration count, a capped row
/// would not be a prefix of the uncapped one, the kills measured at 50,000 would say nothing
/// about the cap, and a claim's floor could move its first kill.
#[test]
fn a_capped_pct_run_is_a_prefix_of_the_longer_run() {
    use bpspec_models::harness::shuttle_run::{budget, explore, row_budget, CLAIM_FLOOR};
    use shuttle::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use shuttle::sync::Arc;
    assert_eq!(budget(true, 50_000, Some(20_000)), 20_000);
    assert_eq!(budget(true, 2_000, Some(20_000)), 2_000);
    assert_eq!(budget(false, 50_000, Some(20_000)), 50_000);
    assert_eq!(budget(true, 50_000, None), 50_000);
    // A claimed kill runs at least the floor; a baseline and an allowed miss their budget.
    assert_eq!(CLAIM_FLOOR, 50_000);
    assert_eq!(row_budget("killed", true, 2_000, None), CLAIM_FLOOR);
    assert_eq!(row_budget("killed", false, 80_000, Some(20_000)), 80_000);
    assert_eq!(
        row_budget("killed", true, 50_000, Some(10_000)),
        CLAIM_FLOOR
    );
    assert_eq!(row_budget("hold", true, 2_000, None), 2_000);
    assert_eq!(row_budget("survives", false, 2_000, None), 2_000);
    // A lost update that needs the reader preempted between its two steps, and the other
    // task's three increments all in that gap: rare enough under PCT not to be iteration 1.
    fn lost_update() {
        let a = Arc::new(AtomicUsize::new(0));
        let b = a.clone();
        let t = shuttle::thread::spawn(move || {
            for _ in 0..3 {
                b.fetch_add(1, SeqCst);
            }
        });
        let seen = a.load(SeqCst);
        a.store(seen + 1, SeqCst);
        t.join().unwrap();
        assert!(a.load(SeqCst) != 1, "lost update");
    }
    fn first_kill(bound: &str) -> Option<usize> {
        bound
            .split_whitespace()
            .find_map(|w| w.strip_prefix("first-killed-at="))
            .map(|v| v.parse().expect("a number"))
    }
    let (cx, _, long) = explore("prefix long", true, 2000, lost_update);
    assert!(cx.is_some(), "PCT never found the lost update: {long}");
    let k = first_kill(&long).expect("a kill has its iteration");
    assert!(
        k > 1,
        "found at the first iteration, so no prefix is tested: {long}"
    );
    let (cx, _, exact) = explore("prefix exact", true, k, lost_update);
    assert!(cx.is_some(), "a run of {k} missed the kill at {k}: {exact}");
    assert_eq!(first_kill(&exact), Some(k), "{exact}");
    let (cx, _, short) = explore("prefix short", true, k - 1, lost_update);
    assert!(cx.is_none(), "a run of {} found it: {short}", k - 1);
}
