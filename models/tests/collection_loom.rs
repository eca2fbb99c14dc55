//! loom models of call_time / call_memory and the OTP 29 collection (docs/collection.md):
//! baselines hold, every collection mutant is killed, and finding F1 (paused counters read in
//! place) is reproduced. Bound from `LOOM_MAX_PREEMPTIONS` (make test: 2, make check: 3).
#![cfg(loom)]

use bpspec_models::baselines;
use bpspec_models::collection::{expected_kills, loom_scenarios, run, CScenario};
use bpspec_models::harness::loom_run::{self, builder};
use bpspec_models::harness::{assert_all_killed, scenario_named};
use bpspec_reference::{Mutant, Qsbr};

fn scenario(name: &str) -> CScenario {
    scenario_named(loom_scenarios(), name, |s| s.name)
}

/// Explore; record the verdict; return the counterexample.
fn explore(
    scn: &CScenario,
    variant: &str,
    mutant: Option<Mutant>,
    expected: &str,
) -> Option<String> {
    explore_capped(scn, variant, mutant, expected, usize::MAX)
}

/// As [`explore`], at a preemption bound of at most `cap`.
fn explore_capped(
    scn: &CScenario,
    variant: &str,
    mutant: Option<Mutant>,
    expected: &str,
    cap: usize,
) -> Option<String> {
    let mut b = builder();
    b.preemption_bound = b.preemption_bound.map(|p| p.min(cap));
    let scn2 = scn.clone();
    let o = loom_run::explore(&b, move || run::<Qsbr>(&scn2, mutant));
    loom_run::record_outcome("qsbr", scn.name, variant, expected, &o);
    assert!(o.executions > 0);
    o.cx
}

baselines! { "loom", |s| explore(&scenario(s), "baseline", None, "hold");
    timem_info => "info",
    timem_info_dirty => "info-dirty",
    timem_info_inflight => "info-inflight",
    timem_info_rehash => "info-rehash",
    timem_reset => "reset",
    timem_info_vs_reset => "info-vs-reset",
    timem_info_stw => "info-stw",
    timem_info_stw_nap => "info-stw-nap",
}

/// Capped at preemption bound 2 whatever `LOOM_MAX_PREEMPTIONS` says (the table's bound column
/// shows the bound that ran): at bound 2 `paused-inflight` takes 122,786 executions (22 s), and
/// at bound 3 it ran for more than 2,475 s on the 2-core machine without finishing (and 240 s in
/// a later timed run), more than the whole loom part's budget in `make check`.
#[test]
fn timem_paused_inflight_fixed() {
    let cx = explore_capped(&scenario("paused-inflight"), "baseline", None, "hold", 2);
    assert!(
        cx.is_none(),
        "loom: paused-inflight violated: {}",
        cx.unwrap()
    );
}

#[test]
fn timem_kill_matrix() {
    assert_all_killed("collection", "loom", expected_kills("loom"), |m, name| {
        explore(&scenario(name), m.name(), Some(m), "killed").is_some()
    });
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
