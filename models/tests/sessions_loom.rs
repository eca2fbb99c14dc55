//! loom over the session models (`bpspec_models::sessions`): chain insertion and removal while
//! a scheduler walks the chain, session destroy, and a session tracer removed while a scheduler
//! may be calling it. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2, `make check` 3).
#![cfg(loom)]

use bpspec_models::baselines;
use bpspec_models::harness::{assert_all_killed, loom_run};
use bpspec_models::sessions::{
    expected_session_kills, loom_session_scenarios, run_sessions, SessionScenario,
};
use bpspec_reference::Qsbr;

baselines! { "loom", |s| SESSIONS.explore(s, None, "hold");
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
    let cx = SESSIONS.explore_capped("session-unlink-2sched", None, "hold", 1);
    assert!(cx.is_none(), "loom: session-unlink-2sched: {}", cx.unwrap());
}

/// Every session mutant in loom's column must produce a counterexample.
#[test]
fn sessions_kill_matrix() {
    assert_all_killed(
        "session",
        "loom",
        expected_session_kills("loom"),
        |m, name| SESSIONS.explore(name, Some(m), "killed").is_some(),
    );
}

/// The family every test here explores.
const SESSIONS: loom_run::Family<SessionScenario> = loom_run::Family {
    scenarios: loom_session_scenarios,
    run: run_sessions::<Qsbr>,
};
