//! The collection kill matrix is complete: every collection mutant is expected to be killed by
//! at least one checker, on a collection scenario that exists; names round-trip.

use bpspec_models::collection::{expected_kills, loom_scenarios, shuttle_scenarios};
use bpspec_reference::Mutant;

#[test]
fn every_collection_mutant_has_a_killer_on_an_existing_scenario() {
    for m in Mutant::COLLECTION {
        let mut killers = 0;
        for c in ["loom", "shuttle"] {
            for (k, s) in expected_kills(c) {
                if k != m {
                    continue;
                }
                killers += 1;
                let exists = if c == "loom" {
                    loom_scenarios()
                } else {
                    shuttle_scenarios()
                }
                .iter()
                .any(|x| x.name == s);
                assert!(exists, "{c} scenario {s} for {m} does not exist");
            }
        }
        assert!(
            killers > 0,
            "collection mutant {m} has no checker expected to kill it"
        );
        assert_eq!(Mutant::from_name(m.name()), Some(m));
        assert!(
            !Mutant::ALL.contains(&m),
            "{m} must not be in the trace_pattern matrix"
        );
    }
}
