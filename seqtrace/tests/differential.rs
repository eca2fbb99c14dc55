//! The reference against a real Erlang/OTP node: the fixed corpus and seeded random scenarios
//! run in one `erl` batch; step results and events (pids by spawn order, timestamps by kind
//! only) must be identical. The same OTP output also shows the comparison can fail: the
//! manual's dialect and every mutant of the serial rules differ from it somewhere.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use bpspec_seqtrace::otp::{have, run_batch, OtpError};
use bpspec_seqtrace::scenario::{
    corpus, first_difference, random_scenario, run_reference, run_reference_with, Outcome, Scenario,
};
use bpspec_seqtrace::{Dialect, Mutant};

/// Seed: BPSPEC_SEQTRACE_SEED (hex, default 0x5e9); BPSPEC_SEQTRACE_RANDOM scenarios (default 200).
fn scenarios() -> Vec<Scenario> {
    let seed: u64 = std::env::var("BPSPEC_SEQTRACE_SEED")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        .unwrap_or(0x5e9);
    let n: u32 = std::env::var("BPSPEC_SEQTRACE_RANDOM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let mut v = corpus();
    let base = v.len() as u32 + 1;
    for i in 0..n {
        v.push(random_scenario(
            base + i,
            seed.wrapping_add(u64::from(i)),
            24,
        ));
    }
    v
}

/// The OTP release `Dialect::Otp25` was measured on.
const MEASURED_ON: &str = "25.2.3";

/// One erl run shared by the tests of this file.
fn otp() -> &'static (Vec<Scenario>, BTreeMap<u32, Outcome>) {
    static RUN: OnceLock<(Vec<Scenario>, BTreeMap<u32, Outcome>)> = OnceLock::new();
    RUN.get_or_init(|| {
        let scs = scenarios();
        let work = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("seqtrace-otp");
        match run_batch(&work, &scs) {
            Ok(b) => {
                println!(
                    "OTP {} (Dialect::Otp25 was measured on {MEASURED_ON})",
                    b.otp_version
                );
                if !b.otp_version.starts_with("25.") {
                    eprintln!(
                        "warning: this node runs OTP {}, not 25: differences below may be \
                         OTP changes rather than reference bugs; re-measure the dialect",
                        b.otp_version
                    );
                }
                (scs, b.outcomes)
            }
            Err(e) => panic!("{e}"),
        }
    })
}

fn differences(dialect: Dialect, mutant: Mutant) -> Vec<String> {
    let (scs, otp) = otp();
    scs.iter()
        .filter_map(|sc| {
            let r = run_reference_with(sc, dialect, mutant);
            let o = otp.get(&sc.id).cloned().unwrap_or_default();
            first_difference(&r, &o).map(|d| {
                format!(
                    "scenario {} ({}): {d}\n  steps: {}",
                    sc.id,
                    sc.name,
                    sc.to_erl()
                )
            })
        })
        .collect()
}

#[test]
fn reference_matches_otp() {
    let (scs, otp) = otp();
    let events: usize = otp.values().map(|o| o.events.len()).sum();
    let results: usize = otp.values().map(|o| o.results.len()).sum();
    println!(
        "differential: {} scenarios, {events} OTP events and {results} step results compared",
        scs.len()
    );
    assert_eq!(otp.len(), scs.len(), "OTP ran every scenario");
    assert!(
        events > 0,
        "OTP produced no events at all: the comparison would be vacuous"
    );
    for sc in scs {
        assert_eq!(otp[&sc.id].fail, None, "scenario {} failed on OTP", sc.id);
        let _ = run_reference(sc, Dialect::Otp25);
    }
    let bad = differences(Dialect::Otp25, Mutant::None);
    assert!(
        bad.is_empty(),
        "{} of {} scenarios differ:\n{}",
        bad.len(),
        scs.len(),
        bad.join("\n")
    );
}

#[test]
fn manual_dialect_differs_from_otp25() {
    let bad = differences(Dialect::Manual, Mutant::None);
    println!("manual dialect: {} scenarios differ from OTP 25", bad.len());
    assert!(
        !bad.is_empty(),
        "the OTP 25 quirks (spawn reply, print without flag) were not observed"
    );
}

#[test]
fn every_mutant_differs_from_otp() {
    for m in Mutant::ALL {
        let bad = differences(Dialect::Otp25, m);
        println!("mutant {}: {} scenarios differ", m.name(), bad.len());
        assert!(
            !bad.is_empty(),
            "mutant {} is not caught by the differential test",
            m.name()
        );
    }
}

#[test]
fn missing_erlang_says_what_to_install() {
    let e = have("erl-not-installed-here").unwrap_err();
    assert!(matches!(e, OtpError::Missing(_)));
    assert!(e.to_string().contains("apt-get install erlang-nox"), "{e}");
}
