//! shuttle (PCT and random) over the session models, three schedulers, plus a churn of three
//! sessions. Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000, `make check` 50,000).
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
/// (`bpspec_models::Placement::Versions`): every baseline holds, under PCT and random, at most
/// `shuttle_run::versions_iters` iterations.
#[test]
fn sessions_versions_baseline() {
    let n = shuttle_run::versions_iters();
    let mut failures = Vec::new();
    for scn in shuttle_scenarios() {
        for pct in [false, true] {
            let row = format!("{}@versions", scn.name);
            let s = scn.clone();
            let model = move || {
                bpspec_models::sessions::run_on::<Qsbr>(
                    &s,
                    None,
                    bpspec_models::Placement::Versions,
                )
            };
            if let Some(c) =
                shuttle_run::explore_row("qsbr", &row, "baseline", "hold", pct, n, model)
            {
                failures.push(format!("{row} (pct={pct}): {c}"));
            }
        }
    }
    assert!(failures.is_empty(), "shuttle: on versions: {failures:?}");
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
            let row = format!("{name}@versions");
            let model = move || {
                bpspec_models::sessions::run_on::<Qsbr>(
                    &scn,
                    Some(m),
                    bpspec_models::Placement::Versions,
                )
            };
            shuttle_run::explore_row(
                "qsbr",
                &row,
                m.name(),
                exp,
                pct,
                shuttle_run::versions_iters(),
                model,
            )
            .is_some()
        },
    );
}
