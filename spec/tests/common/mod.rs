//! Shared by the spec's integration tests.

use bpspec_spec::model::matrix::expected_unreached;
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
