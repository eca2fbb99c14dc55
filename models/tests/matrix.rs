//! The kill matrix is complete: every mutant is expected to be killed by at least one checker,
//! on a scenario that exists.

use bpspec_models::{expected_kills, loom_scenarios, shuttle_scenarios};
use bpspec_reference::Mutant;

#[test]
fn every_mutant_has_a_killer_on_an_existing_scenario() {
    for m in Mutant::ALL {
        let killers: Vec<_> = ["loom", "shuttle"]
            .into_iter()
            .flat_map(|c| {
                expected_kills(c)
                    .into_iter()
                    .filter(move |(k, _)| *k == m)
                    .map(move |(_, s)| (c, s))
            })
            .collect();
        assert!(
            !killers.is_empty(),
            "mutant {m} has no checker expected to kill it"
        );
        for (c, s) in killers {
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
    for m in Mutant::ALL {
        assert_eq!(Mutant::from_name(m.name()), Some(m));
    }
}
