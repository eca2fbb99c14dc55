//! shuttle (PCT and random) over the wait-plan models (`bpspec_models::waits`): the loom
//! scenarios with a second scheduler. Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000,
//! `make check` 50,000, PCT at most 20,000).
#![cfg(shuttle)]

use bpspec_models::harness::shuttle_run::{
    assert_baselines_under, explore_mutant, explore_under, iters,
};
use bpspec_models::harness::{assert_all_killed_under, scenario_named};
use bpspec_models::readers::{run_placed, run_planned, RScenario};
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

/// Global (export) patterns under `exports::SHUTTLE_PLANS` and meta patterns under every plan:
/// the baselines hold (random and PCT).
#[test]
fn waits_global_and_meta_baseline() {
    let runs = exports::PLAN_SCENARIOS
        .into_iter()
        .flat_map(|n| exports::SHUTTLE_PLANS.map(|p| (n, p)))
        .chain(
            meta::META_PLAN_SCENARIOS
                .into_iter()
                .flat_map(|n| PLANS.map(|p| (n, p))),
        );
    for (name, plan) in runs {
        for pct in [false, true] {
            explore_other(name, plan, None, pct);
        }
    }
}

/// The export scenarios make one `trace_pattern` call at a time, and under `batch` a call is a
/// batch of one that runs ERTS's sequence (docs/fewer-waits.md, proof BA). So under `batch` they
/// make exactly the decisions they make under ERTS's plan (whose rows `exports_shuttle.rs`
/// has), and shuttle does not run them under `batch` (`exports::SHUTTLE_PLANS`). Compared by
/// the digest of every decision of 300 PCT iterations from one seed (`shuttle_run::explored`),
/// both ways: `batch` must equal ERTS's plan on every export scenario, and each plan shuttle does
/// run them under must differ from it on every one (else its rows check nothing ERTS's do not).
#[test]
fn the_batch_plan_makes_erts_decisions_on_the_export_scenarios() {
    use bpspec_models::harness::shuttle_run::explored;
    let digest = |name: &'static str, plan: WaitPlan| {
        let scn = scenario_named(exports::shuttle_scenarios(), name, |s| s.name);
        let label = format!("{name}@{}", plan.name());
        explored(&label, true, 300, move || {
            exports::run_planned::<Qsbr>(&scn, None, plan)
        })
        .run
    };
    let mut wrong = Vec::new();
    for name in exports::PLAN_SCENARIOS {
        let erts = digest(name, WaitPlan::Erts);
        for plan in PLANS {
            let same = digest(name, plan) == erts;
            let rides = !exports::SHUTTLE_PLANS.contains(&plan);
            if same != rides {
                wrong.push(format!(
                    "{name} under {}: {} ERTS's plan",
                    plan.name(),
                    if same {
                        "the same decisions as"
                    } else {
                        "decisions other than"
                    }
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Global (export) patterns under `exports::SHUTTLE_PLANS` and meta patterns under every plan:
/// PCT or random finds each wait removal in shuttle's column.
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

/// No plan rides along on the wait-plan scenarios or on the meta plan scenarios: each scenario
/// makes decisions under each plan that it makes under no other, so each of its rows explores
/// executions of its own (unlike the export scenarios under `batch`, above). The wait-plan
/// scenarios are compared under ERTS's plan (one call at a time) too. The meta plan scenarios'
/// stager makes one call, a batch of one under `batch`, so there `batch` makes exactly ERTS's
/// decisions; shuttle runs them under the three plans only, and their `batch` rows stand for
/// ERTS's plan (required here, both ways). Digests of every decision of 300 PCT iterations
/// from one seed, compared pairwise.
#[test]
fn each_plan_makes_decisions_of_its_own_on_the_plan_scenarios() {
    use bpspec_models::harness::shuttle_run::explored;
    let plans: Vec<WaitPlan> = std::iter::once(WaitPlan::Erts).chain(PLANS).collect();
    let mut wrong = Vec::new();
    let mut compare = |name: &str, digests: Vec<u64>, erts_is_batch: bool| {
        for i in 0..plans.len() {
            for j in i + 1..plans.len() {
                let (a, b) = (plans[i], plans[j]);
                let expected = erts_is_batch && a == WaitPlan::Erts && b == WaitPlan::Batch;
                if (digests[i] == digests[j]) != expected {
                    wrong.push(format!(
                        "{name}: {} and {} make {} decisions",
                        a.name(),
                        b.name(),
                        if expected { "different" } else { "the same" }
                    ));
                }
            }
        }
    };
    let mut compared = 0;
    for scn in shuttle_scenarios() {
        let digests = plans
            .iter()
            .map(|&plan| {
                let s = scn.clone();
                let label = format!("{}@{}", scn.name, plan.name());
                explored(&label, true, 300, move || run(&s, plan, None)).run
            })
            .collect();
        compare(scn.name, digests, false);
        compared += 1;
    }
    for name in meta::META_PLAN_SCENARIOS {
        let digests = plans
            .iter()
            .map(|&plan| {
                let label = format!("{name}@{}", plan.name());
                explored(&label, true, 300, move || {
                    meta::run_meta_planned::<Qsbr>(name, None, plan)
                })
                .run
            })
            .collect();
        compare(name, digests, true);
        compared += 1;
    }
    assert!(compared >= 8, "only {compared} scenarios compared");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A wait-plan scenario on a module's version, never loaded (`Placement::Versions`, the batch by
/// `Engine::trace_pattern_batch_in`), row `<scenario>@<plan>@versions`, at
/// `shuttle_run::versions_iters`; whether a counterexample was found.
fn explore_versions(
    scn: &RScenario,
    plan: WaitPlan,
    m: Option<Mutant>,
    pct: bool,
    expected: &str,
) -> bool {
    use bpspec_models::harness::shuttle_run::{explore_row, versions_iters};
    let label = bpspec_models::harness::on_versions(&format!("{}@{}", scn.name, plan.name()));
    let variant = m.map_or("baseline", |m| m.name());
    let s = scn.clone();
    let model = move || run_placed::<Qsbr>(&s, m, plan, bpspec_models::Placement::Versions);
    explore_row(
        "qsbr",
        &label,
        variant,
        expected,
        pct,
        versions_iters(),
        model,
    )
    .is_some()
}

/// An export or meta plan scenario on a version, as [`explore_versions`].
fn explore_other_versions(
    name: &'static str,
    plan: WaitPlan,
    m: Option<Mutant>,
    pct: bool,
    expected: &str,
) -> bool {
    use bpspec_models::harness::shuttle_run::{explore_row, versions_iters};
    let label = bpspec_models::harness::on_versions(&format!("{name}@{}", plan.name()));
    let variant = m.map_or("baseline", |m| m.name());
    let v = bpspec_models::Placement::Versions;
    let n = versions_iters();
    if name.starts_with("meta-") {
        let model = move || meta::run_meta_planned_on::<Qsbr>(name, m, plan, v);
        return explore_row("qsbr", &label, variant, expected, pct, n, model).is_some();
    }
    let scn = scenario_named(exports::shuttle_scenarios(), name, |s| s.name);
    let model = move || exports::run_placed::<Qsbr>(&scn, m, plan, v);
    explore_row("qsbr", &label, variant, expected, pct, n, model).is_some()
}

/// Every wait-plan scenario holds on a version under every plan, PCT and random; so do the
/// export scenarios under `exports::SHUTTLE_PLANS` and the meta ones under every plan.
#[test]
fn waits_versions_baseline() {
    let mut failures = Vec::new();
    for plan in PLANS {
        for scn in shuttle_scenarios() {
            for pct in [false, true] {
                if explore_versions(&scn, plan, None, pct, "hold") {
                    failures.push(format!("{}@{}@versions pct={pct}", scn.name, plan.name()));
                }
            }
        }
    }
    let others = exports::PLAN_SCENARIOS
        .into_iter()
        .flat_map(|n| exports::SHUTTLE_PLANS.map(|p| (n, p)))
        .chain(
            meta::META_PLAN_SCENARIOS
                .into_iter()
                .flat_map(|n| PLANS.map(|p| (n, p))),
        );
    for (name, plan) in others {
        for pct in [false, true] {
            if explore_other_versions(name, plan, None, pct, "hold") {
                failures.push(format!("{name}@{}@versions pct={pct}", plan.name()));
            }
        }
    }
    assert!(failures.is_empty(), "shuttle: on versions: {failures:?}");
}

/// The export and meta plan scenarios' shuttle kills on a version, by PCT (random recorded, a
/// miss allowed).
#[test]
fn waits_global_and_meta_versions_kill_matrix() {
    let kills = |plan| {
        let mut v = exports::expected_plan_kills("shuttle", plan);
        v.extend(meta::expected_meta_plan_kills("shuttle", plan));
        v
    };
    assert_all_killed_under(
        "wait-plan on versions",
        "shuttle",
        &PLANS,
        kills,
        |m, name, plan| {
            [true, false]
                .map(|pct| {
                    let exp = if pct { "killed" } else { "survives" };
                    explore_other_versions(name, plan, Some(m), pct, exp)
                })
                .contains(&true)
        },
    );
}

/// Every kill of the wait plans' shuttle column on a version, by PCT (random recorded, a miss
/// allowed).
#[test]
fn waits_versions_kill_matrix() {
    let kills = |plan| expected_kills("shuttle", plan);
    assert_all_killed_under(
        "wait-plan on versions",
        "shuttle",
        &PLANS,
        kills,
        |m, name, plan| {
            let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
            [true, false]
                .map(|pct| {
                    let exp = if pct { "killed" } else { "survives" };
                    explore_versions(&scn, plan, Some(m), pct, exp)
                })
                .contains(&true)
        },
    );
}
