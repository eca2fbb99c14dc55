//! loom models of call_time / call_memory and the OTP 29 collection (docs/collection.md):
//! baselines hold, every collection mutant is killed, and finding F1 (paused counters read in
//! place) is reproduced. Bound from `LOOM_MAX_PREEMPTIONS` (make test: 2, make check: 3).
#![cfg(loom)]

use bpspec_models::collection::{expected_kills, loom_scenarios, run, CScenario};
use bpspec_models::results::{catch, record, Verdict};
use bpspec_reference::{Mutant, Qsbr};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

fn builder() -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b
}

fn scenario(name: &str) -> CScenario {
    loom_scenarios()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no loom collection scenario {name}"))
}

/// Explore; record the verdict; return the counterexample.
fn explore(
    scn: &CScenario,
    variant: &str,
    mutant: Option<Mutant>,
    expected: &str,
) -> Option<String> {
    let b = builder();
    let execs = Arc::new(AtomicUsize::new(0));
    let (scn2, execs2) = (scn.clone(), execs.clone());
    let start = Instant::now();
    let cx = catch(|| {
        b.check(move || {
            execs2.fetch_add(1, Relaxed);
            run::<Qsbr>(&scn2, mutant);
        })
    });
    let n = execs.load(Relaxed);
    record(&Verdict {
        checker: "loom",
        progress: "qsbr",
        scenario: scn.name,
        variant,
        bound: format!(
            "preemption={} branches={} executions={n}",
            b.preemption_bound.map_or("none".into(), |p| p.to_string()),
            b.max_branches
        ),
        expected,
        observed: match (&cx, expected) {
            (Some(_), "hold") => "VIOLATED",
            (Some(_), _) => "killed",
            (None, "hold") => "hold",
            (None, _) => "survives",
        },
        seconds: start.elapsed().as_secs_f64(),
        detail: cx.clone().unwrap_or_default(),
    });
    assert!(n > 0);
    cx
}

macro_rules! baselines {
    ($($test:ident => $scn:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let cx = explore(&scenario($scn), "baseline", None, "hold");
            assert!(cx.is_none(), "loom: {} violated: {}", $scn, cx.unwrap());
        }
    )*};
}

baselines! {
    timem_info => "info",
    timem_info_dirty => "info-dirty",
    timem_info_inflight => "info-inflight",
    timem_info_rehash => "info-rehash",
    timem_reset => "reset",
    timem_info_vs_reset => "info-vs-reset",
    timem_info_stw => "info-stw",
    timem_paused_inflight_fixed => "paused-inflight",
}

#[test]
fn timem_kill_matrix() {
    let survivors: Vec<String> = expected_kills("loom")
        .into_iter()
        .filter(|&(m, name)| explore(&scenario(name), m.name(), Some(m), "killed").is_none())
        .map(|(m, name)| format!("{m} on {name}"))
        .collect();
    assert!(
        survivors.is_empty(),
        "collection mutants loom should kill survived: {survivors:?}"
    );
}

/// Finding F1 (docs/collection.md): ERTS reads a paused counter in place, while a frame still in
/// flight from before the pause charges it on return. With the fix off, loom must find it.
#[test]
fn timem_finding_f1_paused_read_in_place() {
    let mut scn = scenario("paused-inflight");
    scn.paused_via_flip = false;
    let cx = explore(&scn, "erts-paused-in-place", None, "killed");
    assert!(cx.is_some(), "loom no longer finds F1");
}

/// Finding F2 (docs/collection.md): ERTS flips back (a relaxed store) right after reading the
/// real tables. Nothing orders those reads before the writes of a scheduler that reads the
/// flipped-back index, so under C11 the read races with them. loom must find it.
#[test]
fn timem_finding_f2_read_then_flip_back() {
    let mut scn = scenario("info-dirty");
    scn.flip_back_wait = false;
    let cx = explore(&scn, "erts-flip-back-after-read", None, "killed");
    assert!(cx.is_some(), "loom no longer finds F2");
}
