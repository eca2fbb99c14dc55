//! The random generator reaches every sequence of two `trace_pattern` ops (true, false, pause,
//! restart) of each flag kind on one function, followed by a call and a `trace_info`
//! (oracle/src/coverage.rs), within the draw count `bpspec oracle gen --coverage` uses by default.

use bpspec_oracle::coverage::{Coverage, KINDS};
use bpspec_oracle::gen::{sample, GenConfig};

/// The draw count and seed of the default coverage run (and of `make test`).
pub const DRAWS: usize = 3000;
pub const SEED: u64 = 1;

#[test]
fn generator_draws_every_two_pattern_sequence() {
    let cfg = GenConfig {
        call_memory: true,
        pairs: true,
        ..GenConfig::default()
    };
    let scs = sample(cfg, DRAWS, SEED);
    let c = Coverage::of(&scs);
    println!("{}", c.table(&KINDS));
    let last = c.first.values().max().copied().unwrap_or(0);
    println!("every drawn sequence appeared by scenario #{last}");
    assert!(c.gaps(&KINDS).is_empty(), "{}", c.table(&KINDS));
}

/// The coverage check can fail: without call_memory, no call_memory sequence is drawn, and the
/// table names them.
#[test]
fn a_missing_feature_shows_as_gaps() {
    let cfg = GenConfig {
        pairs: true,
        ..GenConfig::default()
    };
    let scs = sample(cfg, 200, SEED);
    let c = Coverage::of(&scs);
    let gaps = c.gaps(&["call_memory"]);
    assert_eq!(gaps.len(), 16);
    assert!(c
        .table(&["call_memory"])
        .contains("never drawn: call_memory pause then restart"));
}
