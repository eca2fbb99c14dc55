//! shuttle (PCT and random) over the timem reader models (`bpspec_models::readers`): the loom
//! scenarios with a second scheduler, and a churn of two sessions over two functions.
//! Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000, `make check` 50,000, PCT at most 20,000).
#![cfg(shuttle)]

use bpspec_models::harness::scenario_named;
use bpspec_models::harness::shuttle_run::{self, assert_kill_column, kill_rows};
use bpspec_models::readers::{expected_kills, run, shuttle_scenarios};
use bpspec_reference::{Mutant, Qsbr};

#[test]
fn readers_baseline() {
    shuttle_run::assert_baselines(shuttle_scenarios(), run::<Qsbr>);
}

/// Every mutant in shuttle's column is found (PCT is expected to find it, random may miss it);
/// the fresh-node store is run and
/// recorded as surviving (an ordering bug: shuttle runs every atomic as SeqCst).
#[test]
fn readers_kill_matrix() {
    let mutants = [Mutant::SkipWaitBeforeFree, Mutant::FreshNodeRelaxedStore];
    let rows = kill_rows(&mutants, &expected_kills("shuttle"), |_| "timem-fresh-node");
    // Only PCT is claimed: the random scheduler's fixed-seed schedules need not meet the one
    // window (a read of the slot between consolidate's unlink and the free).
    let may_miss = |_, pct: bool| !pct;
    assert_kill_column("reader", rows, may_miss, |(m, name, _), pct, exp| {
        let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
        shuttle_run::explore_scenario(&scn, Some(m), pct, exp, run::<Qsbr>)
    });
}

/// The family's scenarios on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`): every baseline holds, under PCT and random, at
/// `shuttle_run::versions_iters` iterations.
#[test]
fn readers_versions_baseline() {
    shuttle_run::assert_baselines_on_versions(
        shuttle_scenarios(),
        bpspec_models::readers::run_on::<Qsbr>,
    );
}

/// shuttle's kill on a version, by PCT (random may miss it, as on the static area).
#[test]
fn readers_versions_kill_matrix() {
    let kills = expected_kills("shuttle");
    let mutants: Vec<Mutant> = kills.iter().map(|&(m, _)| m).collect();
    let rows = kill_rows(&mutants, &kills, |_| "timem-remove");
    assert_kill_column(
        "reader on versions",
        rows,
        |_, pct: bool| !pct,
        |(m, name, _), pct, exp| {
            let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
            let run = bpspec_models::readers::run_on::<Qsbr>;
            shuttle_run::explore_on_versions(&scn, Some(m), pct, exp, run).is_some()
        },
    );
}
