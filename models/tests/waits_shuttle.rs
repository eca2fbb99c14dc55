//! shuttle (PCT and random) over the wait-plan models (`bpspec_models::waits`): the loom
//! scenarios with a second scheduler. Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000,
//! `make check` 50,000).
#![cfg(shuttle)]

use bpspec_models::harness::shuttle_run::{assert_baselines_under, explore_under};
use bpspec_models::harness::{assert_all_killed_under, scenario_named};
use bpspec_models::readers::{run_planned, RScenario};
use bpspec_models::waits::{expected_kills, shuttle_scenarios, PLANS};
use bpspec_reference::{Mutant, Qsbr, WaitPlan};

fn run(scn: &RScenario, plan: WaitPlan, mutant: Option<Mutant>) {
    run_planned::<Qsbr>(scn, mutant, plan)
}

#[test]
fn waits_baseline() {
    assert_baselines_under(&PLANS, shuttle_scenarios, run);
}

/// PCT must find every mutant in shuttle's column under every plan (random may miss it and is
/// recorded as surviving).
#[test]
fn waits_kill_matrix() {
    let kills = |plan| expected_kills("shuttle", plan);
    assert_all_killed_under("wait-plan", "shuttle", &PLANS, kills, |m, name, plan| {
        let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
        [true, false]
            .map(|pct| {
                let exp = if pct { "killed" } else { "survives" };
                explore_under(&scn, plan, Some(m), pct, exp, run)
            })
            .contains(&true)
    });
}
