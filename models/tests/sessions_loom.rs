//! loom over the session models (`bpspec_models::sessions`): chain insertion and removal while
//! a scheduler walks the chain, session destroy, and a session tracer removed while a scheduler
//! may be calling it. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2, `make check` 3).
#![cfg(loom)]

use bpspec_models::baselines;
use bpspec_models::sessions::{expected_session_kills, loom_session_scenarios, run_sessions};
use bpspec_reference::Qsbr;

bpspec_models::loom_family! {
    const SESSIONS: bpspec_models::sessions::SessionScenario =
        (loom_session_scenarios, run_sessions::<Qsbr>);
    sessions_kill_matrix => ("session", expected_session_kills("loom"));
    sessions_insert => "session-insert",
    sessions_unlink_head => "session-unlink-head",
    sessions_destroy => "session-destroy",
    sessions_tracer_remove => "tracer-remove",
    sessions_tracer_replace => "tracer-replace",
}

// Two schedulers on a chain changing at both ends: 631,878 executions (189 s) at bound 2, so it
// runs at preemption bound 1 whatever `LOOM_MAX_PREEMPTIONS` says (recorded in the table).
baselines! { "loom", |s| SESSIONS.explore_capped(s, None, "hold", 1);
    sessions_unlink_2sched => "session-unlink-2sched",
}
