//! Shared by the spec's integration tests.

use bpspec_spec::model::matrix::{expected_unreached, kills};
use bpspec_spec::model::model_config;
use bpspec_spec::model::run::{run, RunOptions, RunResult};

/// Run the named model's baseline with `opts`; assert that every property holds, that exactly
/// the expected `sometimes` properties go unreached, and that the state space is not trivial.
pub fn baseline(name: &str, opts: RunOptions) -> RunResult {
    let r = run(name, model_config(name).unwrap(), opts);
    assert!(
        r.violated.is_empty(),
        "{name}: baseline violated {:?}:\n{}",
        r.violated_names(),
        r.violated[0].steps.join("\n")
    );
    assert_eq!(r.unreached, expected_unreached(name), "{name}: vacuity");
    assert!(
        r.unique > 10_000,
        "{name}: suspiciously small state space {}",
        r.unique
    );
    r
}

/// The first counterexample BFS finds (a shortest one) to the designated property of the
/// mutant named `mutant`, on the model of its first kill row (`matrix::kills`), one step a line.
pub fn counterexample(mutant: &str) -> String {
    let k = kills()
        .into_iter()
        .find(|k| k.mutant.name() == mutant)
        .unwrap_or_else(|| panic!("no kill row for {mutant}"));
    let r = run(
        k.model,
        model_config(k.model).unwrap().with_mutant(Some(k.mutant)),
        RunOptions {
            liveness: false,
            stop_at: Some(k.designated),
            ..RunOptions::small()
        },
    );
    let v = r.violated.iter().find(|v| v.property == k.designated);
    let v = v.unwrap_or_else(|| panic!("{mutant} survives {} on {}", k.designated, k.model));
    v.steps.join("\n")
}

/// Assert that `text` (a counterexample) says each of `lines`.
pub fn assert_says(text: &str, lines: &[&str]) {
    for l in lines {
        assert!(text.contains(l), "no {l:?} in:\n{text}");
    }
}
