//! loom models of the wait plans (`bpspec_models::waits`): the stager's ops as one batch under
//! the batch and elide-idle plans, racing the timem readers and the hit path. Bound from
//! `LOOM_MAX_PREEMPTIONS` (make test: 2, make check: 3).
#![cfg(loom)]

use bpspec_models::baselines;
use bpspec_models::harness::{assert_all_killed_under, loom_run, scenario_named};
use bpspec_models::readers::{run_placed, run_planned};
use bpspec_models::waits::{expected_kills, loom_scenarios, PLANS};
use bpspec_models::{exports, meta};
use bpspec_reference::{Mutant, Qsbr, WaitPlan};

/// The two-session scenario runs at preemption bound 2 at most, whatever `LOOM_MAX_PREEMPTIONS`
/// says (the table's bound column shows the bound that ran). Its baselines at bound 3
/// (`--profile checked`, one test at a time on the loaded 2-core machine, load average 3 to 6):
/// 469,026, 469,026 and 886,196 executions under the batch, batch-elide-idle and pipeline
/// plans, 154 CPU seconds (user 130, system 24; 341 s wall), against 68,979, 68,979 and 124,978
/// at bound 2: about 132 CPU seconds more before loom's generator stacks were pooled
/// (vendor/README.md); with the pool its bound-2 runs take 0.73 of the CPU seconds they took
/// beside them, so about 96 more, still more than make check's 30 minutes leave once
/// `load-vs-trace-pattern`, `load-collect-fold` and `session-unlink-2sched` have taken their
/// share of what the pool gave back (docs/perf.md, "Where loom runs below make check's bound
/// 3"). Measured again on an idle machine with the pool: the same executions at bound 3,
/// held, 205.8 CPU seconds. Its kill runs are at `loom_run::KILL_BOUND` (2) either way.
const CAP_2SESS: usize = 2;

/// Explore; record the verdict (scenario `name@plan`); return the counterexample.
fn explore(name: &str, plan: WaitPlan, mutant: Option<Mutant>, expected: &str) -> Option<String> {
    let scn = scenario_named(loom_scenarios(), name, |s| s.name);
    let label = format!("{name}@{}", plan.name());
    let cap = if name == "batch-remove-2sess" {
        CAP_2SESS
    } else {
        usize::MAX
    };
    loom_run::explore_mutant(&label, mutant, expected, cap, move || {
        run_planned::<Qsbr>(&scn, mutant, plan)
    })
}

/// Holds under every plan (the first violation names its plan).
fn hold_under_every_plan(name: &str) -> Option<String> {
    PLANS.into_iter().find_map(|plan| {
        explore(name, plan, None, "hold").map(|cx| format!("under {plan:?}: {cx}"))
    })
}

baselines! { "loom", hold_under_every_plan;
    waits_batch_remove => "batch-remove",
    waits_batch_restart_set => "batch-restart-set",
    waits_batch_remove_2sess => "batch-remove-2sess",
    waits_batch_remove_hit => "batch-remove-hit",
    waits_batch_drop_counters => "batch-drop-counters",
    waits_batch_pause => "batch-pause",
}

/// Under every plan, removing one more wait than the plan does is caught.
#[test]
fn waits_kill_matrix() {
    let kills = |plan| expected_kills("loom", plan);
    assert_all_killed_under("wait-plan", "loom", &PLANS, kills, |m, name, plan| {
        explore(name, plan, Some(m), "killed").is_some()
    });
}

/// The elide-idle plan's claim seen from the other side: under the batch plan (all five waits),
/// removing W3 or W4 on a batch that unlinks nothing (`batch-restart-set`, `batch-drop-counters`,
/// `batch-pause`) breaks no property at this bound. Recorded as surviving; the proof is
/// docs/fewer-waits.md, proof EL.
#[test]
fn finding_w3_w4_idle_not_needed() {
    for name in ["batch-restart-set", "batch-drop-counters", "batch-pause"] {
        for m in [
            Mutant::SkipWaitBeforeConsolidate,
            Mutant::SkipWaitBeforeFree,
        ] {
            let cx = explore(name, WaitPlan::Batch, Some(m), "survives");
            assert!(
                cx.is_none(),
                "{m} on the idle batch {name}: {}",
                cx.unwrap()
            );
        }
    }
}

/// Explore an export or meta scenario under `plan` (scenario `name@plan`).
fn explore_other(
    name: &'static str,
    plan: WaitPlan,
    mutant: Option<Mutant>,
    expected: &str,
) -> Option<String> {
    let label = format!("{name}@{}", plan.name());
    if name.starts_with("meta-") {
        return loom_run::explore_mutant(&label, mutant, expected, usize::MAX, move || {
            meta::run_meta_planned::<Qsbr>(name, mutant, plan)
        });
    }
    let scn = scenario_named(exports::loom_scenarios(), name, |s| s.name);
    loom_run::explore_mutant(&label, mutant, expected, usize::MAX, move || {
        exports::run_planned::<Qsbr>(&scn, mutant, plan)
    })
}

/// Global (export) and meta patterns under every plan: the baselines hold.
#[test]
fn waits_global_and_meta_hold_under_every_plan() {
    let names = exports::PLAN_SCENARIOS
        .into_iter()
        .chain(meta::META_PLAN_SCENARIOS);
    for name in names {
        for plan in PLANS {
            let cx = explore_other(name, plan, None, "hold");
            assert!(cx.is_none(), "{name} under {plan:?}: {}", cx.unwrap());
        }
    }
}

/// Global (export) and meta patterns under every plan: each wait the plan makes there, removed,
/// is caught.
#[test]
fn waits_global_and_meta_kill_matrix() {
    let kills = |plan| {
        let mut v = exports::expected_plan_kills("loom", plan);
        v.extend(meta::expected_meta_plan_kills("loom", plan));
        v
    };
    assert_all_killed_under("wait-plan", "loom", &PLANS, kills, |m, name, plan| {
        explore_other(name, plan, Some(m), "killed").is_some()
    });
}

/// The wait-plan scenarios on a module's version, never loaded (`Placement::Versions`, the batch
/// by `Engine::trace_pattern_batch_in`), at preemption bound 2 at most: at the static area's
/// bound 3 `batch-remove` alone runs 272,751 (batch) and 591,057 (pipeline) executions there,
/// and an execution on a version costs 1.5 to 2 times one on the static area
/// (docs/nonblocking-load.md §7, "The static area"). Rows `<scenario>@<plan>@versions`.
const VERSIONS_CAP: usize = 2;

fn explore_versions(
    name: &str,
    plan: WaitPlan,
    mutant: Option<Mutant>,
    expected: &str,
) -> Option<String> {
    let scn = scenario_named(loom_scenarios(), name, |s| s.name);
    let label = bpspec_models::harness::on_versions(&format!("{name}@{}", plan.name()));
    loom_run::explore_mutant(&label, mutant, expected, VERSIONS_CAP, move || {
        run_placed::<Qsbr>(&scn, mutant, plan, bpspec_models::Placement::Versions)
    })
}

/// [`explore_versions`] of an export or meta plan scenario (on a version the export entries
/// are module `m`'s, the engine made `with_global_trace`).
fn explore_other_versions(
    name: &'static str,
    plan: WaitPlan,
    mutant: Option<Mutant>,
    expected: &str,
) -> Option<String> {
    let label = bpspec_models::harness::on_versions(&format!("{name}@{}", plan.name()));
    let v = bpspec_models::Placement::Versions;
    if name.starts_with("meta-") {
        return loom_run::explore_mutant(&label, mutant, expected, VERSIONS_CAP, move || {
            meta::run_meta_planned_on::<Qsbr>(name, mutant, plan, v)
        });
    }
    let scn = scenario_named(exports::loom_scenarios(), name, |s| s.name);
    loom_run::explore_mutant(&label, mutant, expected, VERSIONS_CAP, move || {
        exports::run_placed::<Qsbr>(&scn, mutant, plan, v)
    })
}

/// Every wait-plan scenario, and the export and meta ones, holds on a version under every plan.
#[test]
fn waits_versions() {
    let mut failures: Vec<String> = loom_scenarios()
        .iter()
        .flat_map(|s| PLANS.into_iter().map(move |p| (s.name, p)))
        .filter_map(|(name, plan)| {
            explore_versions(name, plan, None, "hold").map(|cx| format!("{name}@{plan:?}: {cx}"))
        })
        .collect();
    for name in exports::PLAN_SCENARIOS
        .into_iter()
        .chain(meta::META_PLAN_SCENARIOS)
    {
        for plan in PLANS {
            if let Some(cx) = explore_other_versions(name, plan, None, "hold") {
                failures.push(format!("{name}@{plan:?}: {cx}"));
            }
        }
    }
    assert!(failures.is_empty(), "loom: on versions: {failures:?}");
}

/// Every kill of the export and meta plan scenarios' loom column, on a version.
#[test]
fn waits_global_and_meta_versions_kill_matrix() {
    let kills = |plan| {
        let mut v = exports::expected_plan_kills("loom", plan);
        v.extend(meta::expected_meta_plan_kills("loom", plan));
        v
    };
    assert_all_killed_under(
        "wait-plan on versions",
        "loom",
        &PLANS,
        kills,
        |m, name, plan| explore_other_versions(name, plan, Some(m), "killed").is_some(),
    );
}

/// Every kill of the wait plans' loom column, on a version.
#[test]
fn waits_versions_kill_matrix() {
    let kills = |plan| expected_kills("loom", plan);
    assert_all_killed_under(
        "wait-plan on versions",
        "loom",
        &PLANS,
        kills,
        |m, name, plan| explore_versions(name, plan, Some(m), "killed").is_some(),
    );
}
