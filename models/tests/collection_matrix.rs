//! The collection kill matrix is complete: every collection mutant is expected to be killed by
//! at least one checker, on a collection scenario that exists; names round-trip.

use bpspec_models::collection::{expected_kills, loom_scenarios, shuttle_scenarios};
use bpspec_models::harness::assert_matrix_complete;
use bpspec_reference::Mutant;

#[test]
fn every_collection_mutant_has_a_killer_on_an_existing_scenario() {
    let exists = |c: &str, s: &str| {
        let scenarios = if c == "loom" {
            loom_scenarios()
        } else {
            shuttle_scenarios()
        };
        scenarios.iter().any(|x| x.name == s)
    };
    assert_matrix_complete(
        "collection",
        &Mutant::COLLECTION,
        &["loom", "shuttle"],
        expected_kills,
        exists,
    );
    for m in Mutant::COLLECTION {
        assert!(
            !Mutant::ALL.contains(&m),
            "{m} must not be in the trace_pattern matrix"
        );
    }
}
