//! The meta kill matrix is complete: every meta mutant has a killer on an existing scenario.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::harness::assert_matrix_complete;
use bpspec_models::meta::{expected_meta_kills, META_SCENARIOS};
use bpspec_reference::Mutant;

#[test]
fn every_meta_mutant_has_a_killer_on_an_existing_scenario() {
    let scenarios = [
        ("loom", META_SCENARIOS.to_vec()),
        ("shuttle", META_SCENARIOS.to_vec()),
    ];
    let mutants: Vec<Mutant> = Mutant::META
        .into_iter()
        .chain(Mutant::META_RECLAIM)
        .collect();
    assert_matrix_complete("meta", &mutants, &scenarios, expected_meta_kills);
}
