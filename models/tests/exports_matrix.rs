//! The export kill matrix is complete (every wait-removal mutant has a killer on an existing
//! export scenario), and each export scenario holds on real threads.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::exports::{
    expected_kills, loom_scenarios, run, shuttle_scenarios, EXPORT_MUTANTS,
};
use bpspec_models::harness::{assert_matrix_complete, hold_on_real_threads, names};
use bpspec_reference::{EpochProgress, Qsbr};

#[test]
fn every_export_mutant_has_a_killer_on_an_existing_scenario() {
    let scenarios = [
        ("loom", names(loom_scenarios(), |s| s.name)),
        ("shuttle", names(shuttle_scenarios(), |s| s.name)),
    ];
    assert_matrix_complete("export", &EXPORT_MUTANTS, &scenarios, expected_kills);
}

#[test]
fn export_scenarios_hold_on_real_threads() {
    hold_on_real_threads(
        shuttle_scenarios(),
        20,
        &[run::<Qsbr>, run::<EpochProgress>],
    );
}
