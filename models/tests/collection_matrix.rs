//! The collection kill matrix is complete: every collection mutant is expected to be killed by
//! at least one checker, on a collection scenario that exists; names round-trip.

use bpspec_models::collection::{expected_kills, loom_scenarios, shuttle_scenarios};
use bpspec_models::harness::{assert_matrix_complete, names};
use bpspec_reference::Mutant;

#[test]
fn every_collection_mutant_has_a_killer_on_an_existing_scenario() {
    let scenarios = [
        ("loom", names(loom_scenarios(), |s| s.name)),
        ("shuttle", names(shuttle_scenarios(), |s| s.name)),
    ];
    assert_matrix_complete(
        "collection",
        &Mutant::COLLECTION,
        &scenarios,
        expected_kills,
    );
    for m in Mutant::COLLECTION {
        assert!(
            !Mutant::ALL.contains(&m),
            "{m} must not be in the trace_pattern matrix"
        );
    }
}
