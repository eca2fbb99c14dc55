//! The session kill matrix is complete (every session mutant has a killer on an existing
//! scenario), and each session scenario runs once on real threads.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::harness::assert_matrix_complete;
use bpspec_models::sessions::{
    expected_session_kills, loom_session_scenarios, run_sessions, shuttle_session_scenarios,
};
use bpspec_reference::{Mutant, Qsbr};

/// Named behaviour checks in tests/tests/sessions.rs that kill a mutant.
const STD_CHECKS: [&str; 1] = ["destroy-inert"];

#[test]
fn every_session_mutant_has_a_killer_on_an_existing_scenario() {
    let exists = |c: &str, s: &str| match c {
        "loom" => loom_session_scenarios().iter().any(|x| x.name == s),
        "shuttle" => shuttle_session_scenarios().iter().any(|x| x.name == s),
        // tests/tests/sessions.rs::destroy_inert_mutant_is_caught
        _ => STD_CHECKS.contains(&s),
    };
    assert_matrix_complete(
        "session",
        &Mutant::SESSIONS,
        &["loom", "shuttle", "std"],
        expected_session_kills,
        exists,
    );
}

#[test]
fn session_scenarios_hold_on_real_threads() {
    for scn in shuttle_session_scenarios() {
        for _ in 0..20 {
            run_sessions::<Qsbr>(&scn, None);
        }
    }
}
