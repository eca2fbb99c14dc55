//! loom: every interleaving and every weak-memory outcome loom's C11 model allows, up to the
//! preemption bound in `LOOM_MAX_PREEMPTIONS` (CI: 2, `make check`: 3). Each model run records
//! its bound, the number of executions explored and its verdict in the results table.
#![cfg(loom)]

use bpspec_models::harness::loom_run::{self, builder};
use bpspec_models::harness::{observed, scenario_named};
use bpspec_models::results::{record, Verdict};
use bpspec_models::{expected_kills, loom_scenarios, run, Scenario};
use bpspec_reference::{EpochProgress, Mutant, Qsbr, ThreadProgress};

/// Explore `scn` under `mutant`; returns (counterexample, executions, seconds, bound text).
fn explore<P: ThreadProgress>(
    scn: &Scenario,
    mutant: Option<Mutant>,
    b: &loom::model::Builder,
) -> (Option<String>, usize, f64, String) {
    let scn2 = scn.clone();
    let o = loom_run::explore(b, move || run::<P>(&scn2, mutant));
    (o.cx, o.executions, o.seconds, o.bound)
}

fn scenario(name: &str) -> Scenario {
    scenario_named(loom_scenarios(), name, |s| s.name)
}

/// Explore `mutant` on scenario `name` and record the verdict against `expected`
/// ("killed" or "survives"); returns the counterexample, if any.
fn mutant_run(
    name: &'static str,
    m: Mutant,
    expected: &str,
    b: &loom::model::Builder,
) -> Option<String> {
    let scn = scenario(name);
    let (cx, execs, secs, bound) = explore::<Qsbr>(&scn, Some(m), b);
    record(&Verdict {
        checker: "loom",
        progress: "qsbr",
        scenario: name,
        variant: m.name(),
        bound: format!("{bound} executions={execs}"),
        expected,
        observed: observed(expected, cx.is_some()),
        seconds: secs,
        detail: cx.clone().unwrap_or_default(),
    });
    cx
}

fn baseline<P: ThreadProgress>(name: &str, b: loom::model::Builder) {
    let scn = scenario(name);
    let (cx, execs, secs, bound) = explore::<P>(&scn, None, &b);
    record(&Verdict {
        checker: "loom",
        progress: P::name(),
        scenario: name,
        variant: "baseline",
        bound: format!("{bound} executions={execs}"),
        expected: "hold",
        observed: observed("hold", cx.is_some()),
        seconds: secs,
        detail: cx.clone().unwrap_or_default(),
    });
    assert!(
        cx.is_none(),
        "loom {}: {name} violated a property: {}",
        P::name(),
        cx.unwrap()
    );
    assert!(execs > 0);
}

macro_rules! baselines {
    ($($test:ident => $scn:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            baseline::<Qsbr>($scn, builder());
        }
    )*};
}

baselines! {
    qsbr_add => "add",
    qsbr_update => "update",
    qsbr_remove => "remove",
    qsbr_remove_2sched => "remove-2sched",
    qsbr_add_and_remove => "add-and-remove",
    qsbr_pause_restart => "pause-restart",
    qsbr_remove_nap => "remove-nap",
    qsbr_remove_session => "remove-session",
    qsbr_remove_old_session => "remove-old-session",
    qsbr_remove_long => "remove-long",
}

/// The epoch-based grace period explores crossbeam-epoch's own atomics too, so its state space is
/// far larger: it runs at preemption bound 1 (recorded in the table).
macro_rules! epoch_baselines {
    ($($test:ident => $scn:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let mut b = builder();
            b.preemption_bound = Some(b.preemption_bound.unwrap_or(1).min(1));
            baseline::<EpochProgress>($scn, b);
        }
    )*};
}

epoch_baselines! {
    epoch_add => "add",
    epoch_remove => "remove",
    epoch_remove_nap => "remove-nap",
    epoch_remove_session => "remove-session",
}

/// Every mutant in loom's column of the kill matrix must produce a counterexample.
#[test]
fn kill_matrix() {
    let b = builder();
    let survivors: Vec<String> = expected_kills("loom")
        .into_iter()
        .filter(|&(m, name)| mutant_run(name, m, "killed", &b).is_none())
        .map(|(m, name)| format!("{m} on {name}"))
        .collect();
    assert!(
        survivors.is_empty(),
        "mutants loom should kill survived: {survivors:?}"
    );
}

/// Finding (docs/protocol.md, I1): with one session per function, W4 is redundant: a node is
/// unlinked exactly when its function is uninstalled, and W3 already keeps every scheduler off
/// it. The mutant must survive every single-session removal; it dies only with two sessions.
#[test]
fn finding_w4_redundant_with_one_session() {
    let b = builder();
    for name in [
        "remove",
        "remove-2sched",
        "remove-long",
        "remove-nap",
        "add-and-remove",
    ] {
        let cx = mutant_run(name, Mutant::SkipWaitBeforeFree, "survives", &b);
        assert!(
            cx.is_none(),
            "W4 mattered on single-session scenario {name}: {}",
            cx.unwrap()
        );
    }
}
