//! loom over the session models (`bpspec_models::sessions`): chain insertion and removal while
//! a scheduler walks the chain, session destroy, and a session tracer removed while a scheduler
//! may be calling it. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2, `make check` 3).
#![cfg(loom)]

bpspec_models::loom_family! { sessions: "session", sessions_kill_matrix;
    sessions_insert => "session-insert",
    sessions_unlink_head => "session-unlink-head",
    sessions_destroy => "session-destroy",
    // Two schedulers on a chain changing at both ends: 631,878 executions (189 s) at bound 2, so
    // it runs at preemption bound 1 whatever `LOOM_MAX_PREEMPTIONS` says (recorded in the table).
    sessions_unlink_2sched => "session-unlink-2sched" at most 1,
    sessions_tracer_remove => "tracer-remove",
    sessions_tracer_replace => "tracer-replace",
}
