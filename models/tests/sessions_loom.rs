//! loom over the session models (`bpspec_models::sessions`): chain insertion and removal while
//! a scheduler walks the chain, session destroy, and a session tracer removed while a scheduler
//! may be calling it. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2, `make check` 3).
#![cfg(loom)]

bpspec_models::loom_family! { sessions: "session", sessions_kill_matrix;
    sessions_insert => "session-insert",
    sessions_unlink_head => "session-unlink-head",
    sessions_destroy => "session-destroy",
    // Two schedulers on a chain changing at both ends: it runs at preemption bound 2 at most
    // whatever `LOOM_MAX_PREEMPTIONS` says (recorded in the table). Measured (`--profile
    // checked`, the loaded 2-core machine): bound 1 24,126 executions; bound 2 587,284, held:
    // 49 CPU seconds, 110 s wall, before loom's generator stacks were pooled (vendor/README.md),
    // 84 CPU seconds and 504 s wall with the pool on a machine more loaded (load average 7 to
    // 8; the pool's ratio beside it, 0.64 on this file's tests at bound 2, puts it near 31 CPU
    // seconds of the first machine); bound 3 still running after 4,204,145 executions, 369 CPU
    // seconds and 555 s wall before the pool (stopped by `timeout 600`), more than make
    // check's 30 minutes leave (docs/perf.md, "Where loom runs below make check's bound 3").
    sessions_unlink_2sched => "session-unlink-2sched" at most 2,
    sessions_tracer_remove => "tracer-remove",
    sessions_tracer_replace => "tracer-replace",
}
