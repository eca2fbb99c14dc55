//! The session kill matrix is complete (every session mutant has a killer on an existing
//! scenario), and each session scenario runs once on real threads.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::harness::{assert_matrix_complete, hold_on_real_threads, names};
use bpspec_models::sessions::{expected_kills, loom_scenarios, run, shuttle_scenarios};
use bpspec_reference::{Mutant, Qsbr};

/// Named behaviour checks in tests/tests/sessions.rs that kill a mutant.
const STD_CHECKS: [&str; 1] = ["destroy-inert"];

#[test]
fn every_session_mutant_has_a_killer_on_an_existing_scenario() {
    let scenarios = [
        ("loom", names(loom_scenarios(), |s| s.name)),
        ("shuttle", names(shuttle_scenarios(), |s| s.name)),
        // tests/tests/sessions.rs::destroy_inert_mutant_is_caught
        ("std", STD_CHECKS.to_vec()),
    ];
    assert_matrix_complete("session", &Mutant::SESSIONS, &scenarios, expected_kills);
}

#[test]
fn session_scenarios_hold_on_real_threads() {
    hold_on_real_threads(shuttle_scenarios(), 20, &[run::<Qsbr>]);
}
