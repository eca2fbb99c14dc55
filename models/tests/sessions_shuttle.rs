//! shuttle (PCT and random) over the session models, three schedulers, plus a churn of three
//! sessions. Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000, `make check` 50,000, PCT at most 20,000).
#![cfg(shuttle)]

use bpspec_models::harness::scenario_named;
use bpspec_models::harness::shuttle_run::{self, assert_kill_column, kill_rows};
use bpspec_models::sessions::{expected_kills, run, shuttle_scenarios};
use bpspec_reference::{Mutant, Qsbr};

#[test]
fn sessions_baseline() {
    shuttle_run::assert_baselines(shuttle_scenarios(), run::<Qsbr>);
}

/// Every session mutant in shuttle's column is found by PCT or random; the others are run (on
/// session-insert) and recorded as surviving (ordering bugs shuttle cannot see).
#[test]
fn sessions_kill_matrix() {
    let kills = expected_kills("shuttle");
    let rows = kill_rows(&Mutant::SESSIONS, &kills, |_| "session-insert");
    assert_kill_column(
        "session",
        rows,
        |_, _| false,
        |(m, name, _), pct, exp| {
            let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
            shuttle_run::explore_scenario(&scn, Some(m), pct, exp, run::<Qsbr>)
        },
    );
}

/// The family's scenarios on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`): every baseline holds, under PCT and random, at
/// `shuttle_run::versions_iters` iterations.
#[test]
fn sessions_versions_baseline() {
    shuttle_run::assert_baselines_on_versions(
        shuttle_scenarios(),
        bpspec_models::sessions::run_on::<Qsbr>,
    );
}

/// Every kill of shuttle's column, on a version, by PCT or random.
#[test]
fn sessions_versions_kill_matrix() {
    let kills = expected_kills("shuttle");
    let mutants: Vec<Mutant> = kills.iter().map(|&(m, _)| m).collect();
    let rows = kill_rows(&mutants, &kills, |_| "session-insert");
    assert_kill_column(
        "session on versions",
        rows,
        |_, _| false,
        |(m, name, _), pct, exp| {
            let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
            let run = bpspec_models::sessions::run_on::<Qsbr>;
            shuttle_run::explore_on_versions(&scn, Some(m), pct, exp, run).is_some()
        },
    );
}
