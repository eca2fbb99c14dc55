//! shuttle models of call_time / call_memory and the OTP 29 collection at larger scale (three
//! schedulers, a dirty one, several pids per scheduler so tables rehash, resets racing queries).
//! Shuttle runs every atomic as SeqCst: it cannot see the TW1 mutant (an ordering bug).
#![cfg(shuttle)]

use bpspec_models::collection::{expected_kills, run, shuttle_scenarios, CScenario};
use bpspec_models::harness::scenario_named;
use bpspec_models::harness::shuttle_run::{self, assert_kill_column};
use bpspec_reference::{Mutant, Qsbr};

/// Explore `scn` under `mutant`, its row named `variant`; record; return the counterexample.
fn explore(
    scn: &CScenario,
    variant: &str,
    mutant: Option<Mutant>,
    pct: bool,
    expected: &str,
) -> Option<String> {
    shuttle_run::explore_run("qsbr", scn, variant, mutant, pct, expected, run::<Qsbr>)
}

#[test]
fn timem_baselines() {
    shuttle_run::assert_baselines(shuttle_scenarios(), run::<Qsbr>);
}

/// Mutants one of the two schedulers does not reach within the iteration budget while the other
/// does (the test requires a kill by either). Their rows for that scheduler expect "survives" (a
/// kill is accepted too). `collect-merge-without-lock` needs the lock-free merge to overlap a
/// dirty scheduler's update of the same shared table, a window PCT's few priority changes rarely
/// hit; `timem-pause-keeps-running` needs a call between the two frozen-check queries, which PCT
/// finds at once and random did not in 2,000 iterations.
const MAY_MISS: &[(Mutant, bool)] = &[
    (Mutant::CollectMergeWithoutLock, true),
    (Mutant::TimemPauseKeepsRunning, false),
];

/// Every (mutant, scenario) in shuttle's column is killed; the collection mutants shuttle is not
/// expected to kill (ordering bugs) are run on `info` and recorded too.
#[test]
fn timem_kill_matrix() {
    let kills = expected_kills("shuttle");
    let others = Mutant::COLLECTION
        .into_iter()
        .filter(|m| !kills.iter().any(|(k, _)| k == m));
    let rows = kills
        .iter()
        .map(|&(m, name)| (m, name, true))
        .chain(others.map(|m| (m, "info", false)))
        .collect();
    let may_miss = |m, pct| MAY_MISS.contains(&(m, pct));
    assert_kill_column("collection", rows, may_miss, |(m, name, _), pct, exp| {
        explore(
            &scenario_named(shuttle_scenarios(), name, |s| s.name),
            m.name(),
            Some(m),
            pct,
            exp,
        )
        .is_some()
    });
}

/// Finding F1 at shuttle's scale: the ERTS variant (paused counters read in place) fails on a
/// paused function with frames in flight.
#[test]
fn timem_finding_f1_paused_read_in_place() {
    let mut scn = scenario_named(shuttle_scenarios(), "pause-restart", |s| s.name);
    scn.paused_via_flip = false;
    let found = [true, false]
        .into_iter()
        .any(|pct| explore(&scn, "erts-paused-in-place", None, pct, "killed").is_some());
    assert!(found, "shuttle no longer finds F1");
}
