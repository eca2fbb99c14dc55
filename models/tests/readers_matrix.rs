//! The reader kill matrix is complete (every reader mutant has a killer on an existing
//! scenario), and each reader scenario holds on real threads with both grace periods.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::harness::{assert_matrix_complete, hold_on_real_threads, names};
use bpspec_models::readers::{expected_kills, loom_scenarios, run, shuttle_scenarios};
use bpspec_models::{EPOCH_KILLS, EPOCH_SURVIVORS};
use bpspec_reference::{EpochProgress, Mutant, Qsbr};

/// The readers' columns, plus the epoch loom column (`tests/loom.rs::epoch_kill_matrix`, on the
/// trace_pattern scenarios).
fn kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    match checker {
        "loom-epoch" => EPOCH_KILLS.to_vec(),
        c => expected_kills(c),
    }
}

#[test]
fn every_reader_mutant_has_a_killer_on_an_existing_scenario() {
    let scenarios = [
        ("loom", names(loom_scenarios(), |s| s.name)),
        ("shuttle", names(shuttle_scenarios(), |s| s.name)),
        (
            "loom-epoch",
            names(bpspec_models::loom_scenarios(), |s| s.name),
        ),
    ];
    // The documented epoch survivors (`EPOCH_SURVIVORS`) have no killer.
    let mutants: Vec<Mutant> = Mutant::READERS
        .into_iter()
        .filter(|m| !EPOCH_SURVIVORS.iter().any(|s| s.0 == *m))
        .collect();
    assert_matrix_complete("reader", &mutants, &scenarios, kills);
}

#[test]
fn reader_scenarios_hold_on_real_threads() {
    hold_on_real_threads(
        shuttle_scenarios(),
        20,
        &[run::<Qsbr>, run::<EpochProgress>],
    );
}
