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
/// far larger: it runs at the bound in `BPSPEC_EPOCH_LOOM_BOUND` (`make check`: 2), else at
/// preemption bound 1 (recorded in the table).
fn epoch_builder() -> loom::model::Builder {
    let mut b = builder();
    let cap = std::env::var("BPSPEC_EPOCH_LOOM_BOUND")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    b.preemption_bound = Some(b.preemption_bound.unwrap_or(cap).min(cap));
    b
}

macro_rules! epoch_baselines {
    ($($test:ident => $scn:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            baseline::<EpochProgress>($scn, epoch_builder());
        }
    )*};
}

/// `EpochProgress::progress` by `Guard::repin` (a Release store of the local epoch, no fence):
/// a scheduler's reads after such a progress point need not see the stager's writes before the
/// wait that counted it. loom must find it (`EPOCH_KILLS`).
#[test]
fn epoch_kill_matrix() {
    let b = epoch_builder();
    let mut survivors = Vec::new();
    for &(m, name) in bpspec_models::EPOCH_KILLS {
        let scn = scenario(name);
        let (cx, execs, secs, bound) = explore::<EpochProgress>(&scn, Some(m), &b);
        record(&Verdict {
            checker: "loom",
            progress: "epoch",
            scenario: name,
            variant: m.name(),
            bound: format!("{bound} executions={execs}"),
            expected: "killed",
            observed: observed("killed", cx.is_some()),
            seconds: secs,
            detail: cx.clone().unwrap_or_default(),
        });
        if cx.is_none() {
            survivors.push(format!("{m} on {name}"));
        }
    }
    assert!(
        survivors.is_empty(),
        "epoch mutants loom should kill survived: {survivors:?}"
    );
}

epoch_baselines! {
    epoch_add => "add",
    epoch_remove => "remove",
    epoch_remove_nap => "remove-nap",
    epoch_remove_session => "remove-session",
    epoch_remove_long => "remove-long",
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
