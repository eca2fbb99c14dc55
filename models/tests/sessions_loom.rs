//! loom over the session models (`bpspec_models::sessions`): chain insertion and removal while
//! a scheduler walks the chain, session destroy, and a session tracer removed while a scheduler
//! may be calling it. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2, `make check` 3).
#![cfg(loom)]

use bpspec_models::harness::loom_run::{self, builder};
use bpspec_models::harness::scenario_named;
use bpspec_models::sessions::{
    expected_session_kills, loom_session_scenarios, run_sessions, SessionScenario,
};
use bpspec_reference::{Mutant, Qsbr};

fn scenario(name: &str) -> SessionScenario {
    scenario_named(loom_session_scenarios(), name, |s| s.name)
}

fn explore(name: &'static str, mutant: Option<Mutant>, expected: &str) -> Option<String> {
    explore_capped(name, mutant, expected, usize::MAX)
}

fn explore_capped(
    name: &'static str,
    mutant: Option<Mutant>,
    expected: &str,
    cap: usize,
) -> Option<String> {
    let mut b = builder();
    b.preemption_bound = b.preemption_bound.map(|p| p.min(cap));
    let scn = scenario(name);
    let o = loom_run::explore(&b, move || run_sessions::<Qsbr>(&scn, mutant));
    loom_run::record_outcome(
        "qsbr",
        name,
        mutant.map_or("baseline", |m| m.name()),
        expected,
        &o,
    );
    o.cx
}

macro_rules! baselines {
    ($($test:ident => $scn:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let cx = explore($scn, None, "hold");
            assert!(cx.is_none(), "loom: {} violated a property: {}", $scn, cx.unwrap());
        }
    )*};
}

baselines! {
    sessions_insert => "session-insert",
    sessions_unlink_head => "session-unlink-head",
    sessions_destroy => "session-destroy",
    sessions_tracer_remove => "tracer-remove",
    sessions_tracer_replace => "tracer-replace",
}

/// Two schedulers on a chain changing at both ends: 631,878 executions (189 s) at bound 2, so it
/// runs at preemption bound 1 whatever `LOOM_MAX_PREEMPTIONS` says (recorded in the table).
#[test]
fn sessions_unlink_2sched() {
    let cx = explore_capped("session-unlink-2sched", None, "hold", 1);
    assert!(cx.is_none(), "loom: session-unlink-2sched: {}", cx.unwrap());
}

/// Every session mutant in loom's column must produce a counterexample.
#[test]
fn sessions_kill_matrix() {
    let survivors: Vec<String> = expected_session_kills("loom")
        .into_iter()
        .filter(|&(m, name)| explore(name, Some(m), "killed").is_none())
        .map(|(m, name)| format!("{m} on {name}"))
        .collect();
    assert!(
        survivors.is_empty(),
        "session mutants loom should kill survived: {survivors:?}"
    );
}
