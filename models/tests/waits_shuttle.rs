//! shuttle (PCT and random) over the wait-plan models (`bpspec_models::waits`): the loom
//! scenarios with a second scheduler. Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000,
//! `make check` 50,000).
#![cfg(shuttle)]

use bpspec_models::harness::shuttle_run::{
    assert_baselines_under, explore_mutant, explore_under, iters,
};
use bpspec_models::harness::{assert_all_killed_under, scenario_named};
use bpspec_models::readers::{run_planned, RScenario};
use bpspec_models::waits::{expected_kills, shuttle_scenarios, PLANS};
use bpspec_models::{exports, meta};
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

/// Explore an export or meta scenario under `plan` (row `name@plan`); whether a
/// counterexample was found (a baseline's panics).
fn explore_other(name: &'static str, plan: WaitPlan, m: Option<Mutant>, pct: bool) -> bool {
    let label = format!("{name}@{}", plan.name());
    let exp = match (m, pct) {
        (None, _) => "hold",
        (Some(_), true) => "killed",
        (Some(_), false) => "survives",
    };
    if name.starts_with("meta-") {
        return explore_mutant(&label, m, pct, exp, iters(), move || {
            meta::run_meta_planned::<Qsbr>(name, m, plan)
        });
    }
    let scn = scenario_named(exports::shuttle_scenarios(), name, |s| s.name);
    explore_mutant(&label, m, pct, exp, iters(), move || {
        exports::run_planned::<Qsbr>(&scn, m, plan)
    })
}

/// Global (export) and meta patterns under every plan: the baselines hold (random and PCT).
#[test]
fn waits_global_and_meta_baseline() {
    for name in exports::PLAN_SCENARIOS
        .into_iter()
        .chain(meta::META_PLAN_SCENARIOS)
    {
        for plan in PLANS {
            for pct in [false, true] {
                explore_other(name, plan, None, pct);
            }
        }
    }
}

/// Global (export) and meta patterns under every plan: PCT or random finds each wait removal
/// in shuttle's column.
#[test]
fn waits_global_and_meta_kill_matrix() {
    let kills = |plan| {
        let mut v = exports::expected_plan_kills("shuttle", plan);
        v.extend(meta::expected_meta_plan_kills("shuttle", plan));
        v
    };
    assert_all_killed_under("wait-plan", "shuttle", &PLANS, kills, |m, name, plan| {
        [true, false]
            .map(|pct| explore_other(name, plan, Some(m), pct))
            .contains(&true)
    });
}
