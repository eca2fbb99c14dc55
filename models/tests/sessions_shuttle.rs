//! shuttle (PCT and random) over the session models, three schedulers, plus a churn of three
//! sessions. Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000, `make check` 50,000).
#![cfg(shuttle)]

use bpspec_models::harness::scenario_named;
use bpspec_models::harness::shuttle_run;
use bpspec_models::sessions::{
    expected_session_kills, run_sessions, shuttle_session_scenarios, SessionScenario,
};
use bpspec_reference::{Mutant, Qsbr};

fn explore(scn: &SessionScenario, mutant: Option<Mutant>, pct: bool, expected: &str) -> bool {
    shuttle_run::explore_scenario(scn, mutant, pct, expected, run_sessions::<Qsbr>)
}

#[test]
fn sessions_baseline() {
    shuttle_run::assert_baselines(shuttle_session_scenarios(), run_sessions::<Qsbr>);
}

/// Every session mutant in shuttle's column is found by PCT or random; the others are run and
/// recorded as surviving (ordering bugs shuttle cannot see).
#[test]
fn sessions_kill_matrix() {
    let kills = expected_session_kills("shuttle");
    let mut survivors = Vec::new();
    for m in Mutant::SESSIONS {
        let expected = kills.iter().find(|(k, _)| *k == m).map(|(_, s)| *s);
        let name = expected.unwrap_or("session-insert");
        let scn = scenario_named(shuttle_session_scenarios(), name, |s| s.name);
        let exp = if expected.is_some() {
            "killed"
        } else {
            "survives"
        };
        let mut killed = false;
        for pct in [true, false] {
            killed |= explore(&scn, Some(m), pct, exp);
        }
        if expected.is_some() && !killed {
            survivors.push(m.name());
        }
    }
    assert!(
        survivors.is_empty(),
        "session mutants shuttle should kill survived: {survivors:?}"
    );
}
