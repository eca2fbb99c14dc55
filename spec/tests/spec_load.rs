//! The stateright model of loading a traced module (`bpspec_spec::load`): both protocols hold
//! their properties exhaustively, and every load mutant is killed by its property.

use bpspec_reference::LoadProtocol;
use bpspec_spec::load::{LoadModel, LoadSpecMutant};

const CALLS: u8 = 3;

fn check(m: LoadModel) -> (Vec<&'static str>, usize, bool) {
    let r = m.check_all();
    (r.violated, r.unique, r.reached)
}

#[test]
fn both_protocols_hold() {
    for protocol in LoadProtocol::ALL {
        let (found, states, reached) = check(LoadModel {
            protocol,
            mutant: None,
            calls: CALLS,
        });
        assert!(
            found.is_empty(),
            "{protocol:?}: {found:?} violated ({states} states)"
        );
        assert!(reached, "{protocol:?}: no call reaches the new version");
        eprintln!(
            "spec load {}: {states} unique states, calls={CALLS}, hold",
            protocol.name()
        );
    }
}

#[test]
fn every_load_mutant_is_killed() {
    for m in LoadSpecMutant::ALL {
        let (found, states, _) = check(LoadModel {
            protocol: m.protocol(),
            mutant: Some(m),
            calls: CALLS,
        });
        assert!(
            found.contains(&m.killed_by()),
            "{} survived ({states} states; found {found:?})",
            m.name()
        );
        assert!(
            bpspec_reference::Mutant::from_name(m.name()).is_some(),
            "{}: the engine has a mutant of the same name",
            m.name()
        );
        eprintln!(
            "spec load {}: killed by {} ({states} unique states)",
            m.name(),
            m.killed_by()
        );
    }
}
