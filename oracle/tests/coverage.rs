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
        extras: true,
        ..GenConfig::default()
    };
    let scs = sample(cfg, DRAWS, SEED);
    let c = Coverage::of(&scs);
    println!("{}", c.table(&KINDS));
    let last = c.first.values().max().copied().unwrap_or(0);
    println!("every drawn sequence appeared by scenario #{last}");
    assert!(c.gaps(&KINDS).is_empty(), "{}", c.table(&KINDS));
    // With extras, every newer feature is drawn too (the table's features row).
    assert!(c.feature_gaps().is_empty(), "{}", c.table(&KINDS));
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
    // Without extras, none of the newer features is drawn, and the features row shows it.
    assert_eq!(
        c.feature_gaps().len(),
        bpspec_oracle::coverage::FEATURES.len()
    );
}

/// The pairs mode draws valid scenarios on which the engine and the sequential oracle agree
/// (256 cases, seed 9).
#[test]
fn pairs_scenarios_conform() {
    conforms(GenConfig {
        pairs: true,
        ..GenConfig::default()
    });
}

/// The engine and the sequential oracle agree on 256 scenarios drawn with `cfg` (seed 9).
fn conforms(cfg: GenConfig) {
    use bpspec_oracle::conformance::check_scenarios;
    use bpspec_oracle::target::{RefEngine, SpecOracle};
    if let Err(f) = check_scenarios(&RefEngine::boxed, &SpecOracle::boxed, cfg, 256, 9) {
        panic!("{}\nminimal scenario:\n{}", f.message, f.minimal);
    }
}

/// The extras (catch, arity, return_to, expressions in returns, badarg causes, `{caller}`) with
/// terms draw valid scenarios on which the engine and the sequential oracle agree (256 cases,
/// seed 9).
#[test]
fn extras_scenarios_conform() {
    conforms(GenConfig {
        terms: true,
        extras: true,
        call_memory: true,
        ..GenConfig::default()
    });
}

fn pairs_on_erts(erl: &bpspec_oracle::erlang::Erl) {
    use bpspec_oracle::erlang::{differential, Summary};
    let cfg = GenConfig {
        pairs: true,
        call_memory: erl.otp >= 26,
        ..GenConfig::default()
    };
    let scs: Vec<_> = sample(cfg, 150, 11)
        .iter()
        .map(|s| s.loaded().unwrap())
        .collect();
    let vs = differential(erl, &scs).unwrap_or_else(|e| panic!("{e}"));
    let s = Summary::of(&vs);
    println!("pairs mode, 150 scenarios (seed 11), {}: {s}", erl.origin());
    assert!(s.ok() && s.agree == 150, "{vs:?}");
}

/// The pairs mode's scenarios agree with ERTS (150 scenarios, seed 11): OTP on PATH, and the OTP
/// root in BPSPEC_OTP_ROOT (with call_memory) when set.
#[test]
fn pairs_scenarios_agree_with_erts() {
    use bpspec_oracle::erlang::Erl;
    pairs_on_erts(&Erl::setup().unwrap_or_else(|e| panic!("{e}")));
    if let Some(r) = Erl::env_root() {
        pairs_on_erts(&Erl::setup_root(&r).unwrap_or_else(|e| panic!("{e}")));
    }
}
