//! The load kill matrix is complete: every load mutant has a killer on an existing scenario.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::harness::{assert_matrix_complete, names};
use bpspec_models::load::{expected_kills, loom_scenarios, runs_in_shuttle, shuttle_scenarios};
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

/// ERTS's three code indices (`CodeIxScheme::Three`) and the pipeline wait plan are variants of
/// the one load sequence, so each is checked where the default is: every claim on a scenario
/// with a `-3ix` twin (`load::THREE_TWINS`) or a `-pipeline` twin (`load::PIPELINE_TWINS`) is
/// claimed on the twin too, for both checkers and protocols, and every twin exists in both
/// checkers' scenario lists; but shuttle's `-3ix` twins under `Blocking`, which shuttle does
/// not run (`load::runs_in_shuttle`), carry none.
#[test]
fn every_claim_on_a_scenario_with_a_twin_is_claimed_on_the_twin() {
    use bpspec_models::load::{PIPELINE_TWINS, THREE_TWINS};
    let loom = names(loom_scenarios(), |s| s.name);
    let shuttle = names(shuttle_scenarios(), |s| s.name);
    for (twins, least) in [(THREE_TWINS, 25), (PIPELINE_TWINS, 10)] {
        for &(base, twin) in twins {
            for list in [&loom, &shuttle] {
                assert!(
                    list.contains(&base) && list.contains(&twin),
                    "{base} / {twin}"
                );
            }
        }
        let mut twinned = 0;
        for checker in ["loom", "shuttle"] {
            for proto in LoadProtocol::ALL {
                let claims = expected_kills(checker, proto);
                for &(m, s) in &claims {
                    if let Some(&(_, twin)) = twins.iter().find(|t| t.0 == s) {
                        // shuttle does not run the `-3ix` twins under `Blocking`, where they make
                        // their base's decisions (`load::runs_in_shuttle`): no claim there.
                        let runs = checker == "loom" || runs_in_shuttle(twin, false, proto);
                        assert!(
                            claims.contains(&(m, twin)) == runs,
                            "{checker} {proto:?}: {m} claimed on {s}; on {twin}: {} (runs: {runs})",
                            claims.contains(&(m, twin))
                        );
                        twinned += runs as usize;
                    }
                }
            }
        }
        assert!(
            twinned >= least,
            "only {twinned} claims have a twin in {twins:?}"
        );
    }
}
