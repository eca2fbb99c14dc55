//! shuttle (PCT and random) over the timem reader models (`bpspec_models::readers`): the loom
//! scenarios with a second scheduler, and a churn of two sessions over two functions.
//! Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000, `make check` 50,000).
#![cfg(shuttle)]

use bpspec_models::harness::scenario_named;
use bpspec_models::harness::shuttle_run;
use bpspec_models::readers::{expected_kills, run, shuttle_scenarios, RScenario};
use bpspec_reference::{Mutant, Qsbr};

fn explore(scn: &RScenario, mutant: Option<Mutant>, pct: bool, expected: &str) -> bool {
    shuttle_run::explore_scenario(scn, mutant, pct, expected, run::<Qsbr>)
}

#[test]
fn readers_baseline() {
    shuttle_run::assert_baselines(shuttle_scenarios(), run::<Qsbr>);
}

/// Every mutant in shuttle's column is found (PCT is expected to find it, random may miss it);
/// the fresh-node store is run and
/// recorded as surviving (an ordering bug: shuttle runs every atomic as SeqCst).
#[test]
fn readers_kill_matrix() {
    let kills = expected_kills("shuttle");
    let mut survivors = Vec::new();
    for m in [Mutant::SkipWaitBeforeFree, Mutant::FreshNodeRelaxedStore] {
        let expected = kills.iter().find(|(k, _)| *k == m).map(|(_, s)| *s);
        let name = expected.unwrap_or("timem-fresh-node");
        let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
        let mut killed = false;
        for pct in [true, false] {
            // Only PCT is claimed: the random scheduler's fixed-seed schedules need not meet
            // the one window (a read of the slot between consolidate's unlink and the free).
            let exp = if expected.is_some() && pct {
                "killed"
            } else {
                "survives"
            };
            killed |= explore(&scn, Some(m), pct, exp);
        }
        if expected.is_some() && !killed {
            survivors.push(m.name());
        }
    }
    assert!(
        survivors.is_empty(),
        "reader mutants shuttle should kill survived: {survivors:?}"
    );
}
