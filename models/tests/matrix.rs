//! The kill matrix is complete: every mutant is expected to be killed by at least one checker,
//! on a scenario that exists.

use bpspec_models::harness::assert_matrix_complete;
use bpspec_models::{expected_kills, loom_scenarios, shuttle_scenarios};
use bpspec_reference::Mutant;

#[test]
fn every_mutant_has_a_killer_on_an_existing_scenario() {
    let exists = |c: &str, s: &str| {
        let scenarios = if c == "loom" {
            loom_scenarios()
        } else {
            shuttle_scenarios()
        };
        scenarios.iter().any(|x| x.name == s)
    };
    assert_matrix_complete(
        "trace_pattern",
        &Mutant::ALL,
        &["loom", "shuttle"],
        expected_kills,
        exists,
    );
}
