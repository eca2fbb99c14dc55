//! shuttle (PCT and random) over the wait-plan models (`bpspec_models::waits`): the loom
//! scenarios with a second scheduler. Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000,
//! `make check` 50,000).
#![cfg(shuttle)]

use bpspec_models::harness::scenario_named;
use bpspec_models::harness::shuttle_run::{self, iters};
use bpspec_models::readers::{run_planned, RScenario};
use bpspec_models::waits::{expected_kills, shuttle_scenarios, PLANS};
use bpspec_reference::{Mutant, Qsbr, WaitPlan};

fn explore(
    scn: &RScenario,
    plan: WaitPlan,
    mutant: Option<Mutant>,
    pct: bool,
    expected: &str,
) -> bool {
    let scn2 = scn.clone();
    // The scenario label `name@plan` names the plan in the verdict and in a violation.
    let label = format!("{}@{}", scn.name, plan.name());
    shuttle_run::explore_mutant(&label, mutant, pct, expected, iters(), move || {
        run_planned::<Qsbr>(&scn2, mutant, plan)
    })
}

#[test]
fn waits_baseline() {
    for plan in PLANS {
        for scn in shuttle_scenarios() {
            for pct in [false, true] {
                explore(&scn, plan, None, pct, "hold");
            }
        }
    }
}

/// PCT must find every mutant in shuttle's column under every plan (random may miss it and is
/// recorded as surviving).
#[test]
fn waits_kill_matrix() {
    let mut survivors = Vec::new();
    for plan in PLANS {
        for (m, name) in expected_kills("shuttle", plan) {
            let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
            let mut killed = false;
            for pct in [true, false] {
                let exp = if pct { "killed" } else { "survives" };
                killed |= explore(&scn, plan, Some(m), pct, exp);
            }
            if !killed {
                survivors.push(format!("{m} on {name} under {plan:?}"));
            }
        }
    }
    assert!(
        survivors.is_empty(),
        "wait-plan mutants shuttle should kill survived: {survivors:?}"
    );
}
