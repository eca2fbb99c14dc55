//! Every BFS baseline model reaches the same number of states (total and unique) as the last
//! `make check` recorded in docs/results/check-stateright.tsv: a change of the state's
//! representation (packing, hashing, canonicalisation) must keep the state space identical.
//!
//! Debug builds run only the rows with at most `DEBUG_MAX_STATES` states; a release build
//! (`cargo test --release -p bpspec-spec --test spec_counts`) runs every BFS row and every DFS
//! row without symmetry (a fused baseline with no liveness check: `run::run_model`; DFS and
//! BFS reach the same states and unique states). Rows checked with DFS and symmetry (`s3f2x2`)
//! are left out: their unique count depends on which member of a symmetry class the threads
//! reach first, so it differs between runs.

use bpspec_spec::model::model_config;
use bpspec_spec::model::run::{run, RunOptions};

/// The largest model (total states) a debug build runs.
const DEBUG_MAX_STATES: usize = 900_000;

/// (model, states, unique) of each BFS baseline row of the recorded `make check`.
fn recorded() -> Vec<(String, usize, usize)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/results/check-stateright.tsv"
    );
    let text = std::fs::read_to_string(path).expect("docs/results/check-stateright.tsv");
    let field = |params: &str, key: &str| -> usize {
        params
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {params}"))
    };
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| {
            f.len() > 4
                && f[0] == "stateright"
                && f[1] == "spec"
                && f[3] == "baseline"
                && (f[4].starts_with("stateright bfs ")
                    || (f[4].starts_with("stateright dfs ")
                        && !f[4].starts_with("stateright dfs + symmetry")))
                && model_config(f[2]).is_some()
        })
        .map(|f| {
            (
                f[2].to_string(),
                field(f[4], "states="),
                field(f[4], "unique="),
            )
        })
        .collect()
}

#[test]
fn state_counts_match_the_recorded_run() {
    let rows = recorded();
    assert!(rows.len() >= 20, "too few recorded rows: {}", rows.len());
    let mut ran = 0;
    for (name, states, unique) in rows {
        if cfg!(debug_assertions) && states > DEBUG_MAX_STATES {
            eprintln!("{name}: {states} states, skipped in a debug build");
            continue;
        }
        let cfg = model_config(&name).unwrap();
        let opts = RunOptions {
            symmetry: false,
            liveness: false,
            ..RunOptions::small()
        };
        let r = run(&name, cfg, opts);
        assert!(r.violated.is_empty(), "{name}: {:?}", r.violated);
        assert_eq!(
            (r.states, r.unique),
            (states, unique),
            "{name}: (states, unique) differ from docs/results/check-stateright.tsv"
        );
        eprintln!("{name}: {states} states, {unique} unique, {:.2} s", r.secs);
        ran += 1;
    }
    assert!(ran >= 5, "only {ran} models ran");
}
