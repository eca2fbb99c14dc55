//! The load kill matrix is complete: every load mutant has a killer on an existing scenario.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::harness::{assert_matrix_complete, names};
use bpspec_models::load::{expected_kills, loom_scenarios, shuttle_scenarios};
use bpspec_reference::{LoadProtocol, Mutant};

#[test]
fn every_load_mutant_has_a_killer_on_an_existing_scenario() {
    let scenarios = [
        ("loom", names(loom_scenarios(), |s| s.name)),
        ("shuttle", names(shuttle_scenarios(), |s| s.name)),
    ];
    for proto in LoadProtocol::ALL {
        let mine: Vec<Mutant> = expected_kills("loom", proto)
            .into_iter()
            .map(|(m, _)| m)
            .collect();
        assert_matrix_complete("load", &mine, &scenarios, |c| expected_kills(c, proto));
    }
    for m in Mutant::LOAD {
        assert!(
            LoadProtocol::ALL
                .iter()
                .any(|&p| expected_kills("loom", p).iter().any(|(k, _)| *k == m)),
            "load mutant {m} has no loom killer"
        );
    }
}
