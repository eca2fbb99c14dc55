//! The spec's call_time collection and chain insertion/removal: baselines
//! hold exhaustively with their `sometimes` examples, every engine mutant is handled (modelled
//! with a kill, or listed as not modelled with its reason), the findings F1/F2 are reproduced,
//! and the survivals the matrix documents really survive. The designated kills of the new
//! mutants run in `spec_model.rs` (`every_mutant_killed_by_its_property`, from `matrix::kills`).

use bpspec_reference::Mutant;
use bpspec_spec::model::config::NOT_MODELLED;
use bpspec_spec::model::matrix::{kills, survivals};
use bpspec_spec::model::run::{run, RunOptions, RunResult};
use bpspec_spec::model::*;

mod common;
use common::{assert_says, counterexample};

/// The baseline at the small bound, with liveness over the whole reachable graph.
fn baseline(name: &str) -> RunResult {
    let r = common::baseline(name, RunOptions::small());
    let (ls, _) = r.liveness_graph.expect("liveness ran");
    assert_eq!(ls, r.unique);
    r
}

/// The collection, active and paused, with a dirty scheduler: every property holds, a charge
/// lands in a temporary, and a scheduler charges the old table after a flip.
#[test]
fn c2f1_collection_holds_and_is_not_vacuous() {
    let r = baseline("c2f1");
    assert!(!r.unreached.contains(&"charge-lands-in-temp"));
    assert!(!r.unreached.contains(&"charges-old-table-after-flip"));
}

/// Removing the head of a two-node chain while schedulers walk it.
#[test]
fn s2f1x2h_chain_removal_holds() {
    let r = baseline("s2f1x2h");
    assert!(!r.unreached.contains(&"stands-on-unlinked-node"));
}

/// Every engine mutant (`Mutant::ALL`, `Mutant::COLLECTION`, `Mutant::SESSIONS`) is a spec
/// mutant with a kill row, or listed in `NOT_MODELLED` with its reason.
#[test]
fn every_engine_mutant_is_modelled_or_explained() {
    let killed: Vec<&str> = kills().iter().map(|k| k.mutant.name()).collect();
    let names = Mutant::ALL
        .iter()
        .chain(Mutant::COLLECTION.iter())
        .chain(Mutant::SESSIONS.iter())
        .chain(Mutant::META.iter())
        .map(|m| m.name());
    for n in names {
        let modelled = SpecMutant::from_name(n).is_some_and(|m| killed.contains(&m.name()));
        let explained = NOT_MODELLED
            .iter()
            .any(|(m, why)| *m == n && why.len() > 40);
        assert!(
            modelled ^ explained,
            "engine mutant {n}: modelled {modelled}, explained {explained}"
        );
    }
    // A name the engine knows must mean the same mutant here (no spec-only clash).
    for (n, _) in NOT_MODELLED {
        assert!(
            SpecMutant::from_name(n).is_none(),
            "{n} both modelled and not"
        );
    }
    for m in SpecMutant::all() {
        assert_eq!(SpecMutant::from_name(m.name()), Some(m));
    }
    // The chain mutants have engine counterparts of the same meaning (same name except
    // link-at-stage, which resolves to link-before-install-wait).
    for c in ChainMutant::ALL {
        let e = c.engine();
        assert!(Mutant::SESSIONS.contains(&e));
        assert_eq!(SpecMutant::from_name(e.name()), Some(SpecMutant::Chain(c)));
    }
    // The spec's collection mutants that have an engine counterpart carry its name.
    for c in CollectMutant::ALL {
        if let Some(e) = c.engine() {
            assert_eq!(c.name(), e.name());
            assert!(Mutant::COLLECTION.contains(&e));
        } else {
            assert!(Mutant::from_name(c.name()).is_none(), "{}", c.name());
        }
    }
}

/// F2: ERTS flips back right after reading the real tables; a scheduler reads the new index
/// and writes a table the read is not ordered before.
#[test]
fn finding_f2_flip_back_without_wait() {
    let t = counterexample("erts-f2-flip-back-without-wait");
    assert_says(&t, &["C3: read the tables of BpTimemTrace R0", "C4: flip"]);
    assert_says(
        &t,
        &["nothing ordering the write after the collector's read"],
    );
    assert!(!t.contains("TW2b"), "{t}");
}

/// F1: ERTS reads a paused counter in place while a frame in flight still charges it.
#[test]
fn finding_f1_paused_read_in_place() {
    let t = counterexample("erts-f1-paused-read-in-place");
    assert_says(
        &t,
        &["is paused: read its tables in place", "BpTimemTrace R0"],
    );
}

/// The merge without the lock races with a dirty scheduler's charge of the shared slot, and
/// clear-next-on-unlink: a scheduler standing on the unlinked head loses the rest of the chain.
#[test]
fn merge_without_lock_and_clear_next_name_the_race() {
    let t = counterexample("collect-merge-without-lock");
    assert_says(
        &t,
        &[
            "without the dirty lock",
            "scheduler 1 begins a call_time charge of f0 (dirty)",
            "while dirty scheduler 1 was writing it",
        ],
    );
    let t = counterexample("clear-next-on-unlink");
    assert_says(
        &t,
        &[
            "next of GenericBp#2 := null",
            "reads next of GenericBp#2 -> null",
            "without acting on GenericBp#1",
        ],
    );
}

/// The survivals the matrix documents survive (exhaustively), and break only what it says.
#[test]
fn documented_survivals_survive() {
    for (m, model, why) in survivals() {
        if m == SpecMutant::Engine(bpspec_reference::Mutant::SkipWaitBeforeFree) {
            continue; // the W4 survival is asserted by spec_model.rs
        }
        let r = run(
            model,
            model_config(model).unwrap().with_mutant(Some(m)),
            RunOptions {
                liveness: false,
                ..RunOptions::small()
            },
        );
        assert!(
            r.violated.is_empty(),
            "{m} on {model} ({why}): {:?}",
            r.violated_names()
        );
    }
}

/// Bad configurations are rejected with a message naming what is wrong.
#[test]
fn bad_configurations_are_rejected() {
    let mut cfg = model_config("c2f1").unwrap();
    cfg.script
        .push(StagerOp::tp(1, 0b1, PatternKind::Restart, bits::TIME));
    let e = cfg.validate().unwrap_err();
    assert!(e.contains("script op 4") && e.contains("outside"), "{e}");
    let mut cfg = model_config("c2f1").unwrap();
    cfg.charges = 4;
    assert!(cfg.validate().unwrap_err().contains("charges 4"));
}
