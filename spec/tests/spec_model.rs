//! The stateright model of the protocol: baselines hold exhaustively, every mutant is killed by
//! the property it is meant to break, and (with `--ignored`, run by `make check`) the exact kill
//! matrix of `bpspec_spec::model::matrix`.

use bpspec_reference::Mutant;
use bpspec_spec::model::matrix::{expected_unreached, kills};
use bpspec_spec::model::props::{LIVENESS, SAFETY};
use bpspec_spec::model::run::{run, RunOptions};
use bpspec_spec::model::*;

mod common;
use common::baseline;

/// 2 schedulers x 2 functions x 1 session, exhaustive (BFS), plus liveness on the full graph.
#[test]
fn s2f2x1_exhaustive_holds() {
    let r = baseline("s2f2x1", RunOptions::small());
    let (ls, _) = r.liveness_graph.expect("liveness ran");
    assert_eq!(
        ls, r.unique,
        "liveness graph covers the same reachable states"
    );
}

#[test]
fn s2f1x2_exhaustive_holds() {
    baseline("s2f1x2", RunOptions::small());
}

/// Symmetry reduction over schedulers keeps the verdicts and shrinks the state space.
#[test]
fn symmetry_keeps_verdicts() {
    let plain = run(
        "s2f1x2",
        model_config("s2f1x2").unwrap(),
        RunOptions {
            liveness: false,
            ..RunOptions::small()
        },
    );
    let sym = run(
        "s2f1x2",
        model_config("s2f1x2").unwrap(),
        RunOptions {
            symmetry: true,
            liveness: false,
            ..RunOptions::small()
        },
    );
    for r in [&sym, &plain] {
        assert!(r.violated.is_empty(), "{:?}", r.violated_names());
        assert_eq!(r.unreached, expected_unreached("s2f1x2"));
    }
    assert!(
        sym.unique < plain.unique,
        "{} !< {}",
        sym.unique,
        plain.unique
    );
    let m = model_config("s2f1x2")
        .unwrap()
        .with_mutant(Some(SpecMutant::Engine(Mutant::SkipWaitBeforeFree)));
    let symm = run(
        "s2f1x2",
        m,
        RunOptions {
            symmetry: true,
            liveness: false,
            ..RunOptions::small()
        },
    );
    assert!(symm.violated_names().contains(&"no-use-after-free"));
}

/// Every mutant is killed by its designated property (stopping at the first counterexample).
#[test]
fn every_mutant_killed_by_its_property() {
    assert_eq!(kills().len(), SpecMutant::all().len(), "one row per mutant");
    for k in kills() {
        let live = k.designated == LIVENESS;
        let opts = RunOptions {
            liveness: live,
            stop_at: if live { None } else { Some(k.designated) },
            ..RunOptions::small()
        };
        let r = run(
            k.model,
            model_config(k.model).unwrap().with_mutant(Some(k.mutant)),
            opts,
        );
        let v = r.violated.iter().find(|v| v.property == k.designated);
        let v =
            v.unwrap_or_else(|| panic!("{} survives {} on {}", k.mutant, k.designated, k.model));
        assert!(v.steps.len() > 2 && v.steps.last().unwrap().starts_with("violated: "));
    }
}

/// The counterexamples speak protocol words.
#[test]
fn counterexamples_are_narrated() {
    let m = model_config("s2f2x1")
        .unwrap()
        .with_mutant(Some(SpecMutant::Engine(Mutant::SkipWaitBeforeConsolidate)));
    let r = run(
        "s2f2x1",
        m,
        RunOptions {
            liveness: false,
            stop_at: Some("slot-set-behind-breakpoint"),
            ..RunOptions::small()
        },
    );
    let text = r.violated[0].steps.join("\n");
    assert!(
        text.contains("1. stager: trace_pattern(session 0, {f0,f1}, true, [local]) begins"),
        "{text}"
    );
    assert!(text.contains("stager: flip 0->1"), "{text}");
    assert!(text.contains("reads slot of f"), "{text}");
    assert!(text.contains("breakpoint slot is empty"), "{text}");
}

/// skip-w4-before-free: no use after free with one session (W3 suffices), killed with two.
#[test]
fn finding_w4_needed_only_with_sessions() {
    let m = model_config("s2f2x1")
        .unwrap()
        .with_mutant(Some(SpecMutant::Engine(Mutant::SkipWaitBeforeFree)));
    let r = run(
        "s2f2x1",
        m,
        RunOptions {
            liveness: false,
            ..RunOptions::small()
        },
    );
    assert_eq!(r.violated_names(), vec!["returns-settled"]);
}

/// The exact matrix (every property each mutant breaks). Slow in debug: `make check` runs it.
#[test]
#[ignore]
fn exact_kill_matrix() {
    for k in kills() {
        let r = run(
            k.model,
            model_config(k.model).unwrap().with_mutant(Some(k.mutant)),
            RunOptions {
                threads: 2,
                ..RunOptions::small()
            },
        );
        let mut got = r.violated_names();
        got.sort();
        let mut want = k.breaks.to_vec();
        want.sort();
        assert_eq!(got, want, "{} on {}", k.mutant, k.model);
        assert!(want.iter().all(|p| SAFETY.contains(p) || *p == LIVENESS));
    }
}
