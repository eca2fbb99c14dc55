//! The kill matrix is complete: every mutant is expected to be killed by at least one checker,
//! on a scenario that exists.

use bpspec_models::harness::{assert_matrix_complete, names};
use bpspec_models::{count_kills, expected_kills, loom_scenarios, shuttle_scenarios};
use bpspec_reference::Mutant;

/// Each checker's trace_pattern scenarios, by name.
fn scenarios() -> [(&'static str, Vec<&'static str>); 2] {
    [
        ("loom", names(loom_scenarios(), |s| s.name)),
        ("shuttle", names(shuttle_scenarios(), |s| s.name)),
    ]
}

#[test]
fn every_mutant_has_a_killer_on_an_existing_scenario() {
    assert_matrix_complete("trace_pattern", &Mutant::ALL, &scenarios(), expected_kills);
}

/// The call_count mutants: each killed by count conservation in loom and in shuttle.
#[test]
fn every_count_mutant_has_a_killer_on_an_existing_scenario() {
    assert_matrix_complete("call_count", &Mutant::COUNTS, &scenarios(), count_kills);
    for checker in ["loom", "shuttle"] {
        for m in Mutant::COUNTS {
            assert!(
                count_kills(checker).iter().any(|&(k, _)| k == m),
                "{checker} has no count kill of {m}"
            );
        }
    }
}
