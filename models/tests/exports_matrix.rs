//! The export kill matrix is complete (every wait-removal mutant has a killer on an existing
//! export scenario), and each export scenario holds on real threads.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::exports::{
    expected_export_kills, loom_export_scenarios, run_exports, shuttle_export_scenarios,
    EXPORT_MUTANTS,
};
use bpspec_models::harness::{assert_matrix_complete, hold_on_real_threads, names};
use bpspec_reference::{EpochProgress, Qsbr};

#[test]
fn every_export_mutant_has_a_killer_on_an_existing_scenario() {
    let scenarios = [
        ("loom", names(loom_export_scenarios(), |s| s.name)),
        ("shuttle", names(shuttle_export_scenarios(), |s| s.name)),
    ];
    assert_matrix_complete("export", &EXPORT_MUTANTS, &scenarios, expected_export_kills);
}

#[test]
fn export_scenarios_hold_on_real_threads() {
    hold_on_real_threads(
        shuttle_export_scenarios(),
        20,
        &[run_exports::<Qsbr>, run_exports::<EpochProgress>],
    );
}
