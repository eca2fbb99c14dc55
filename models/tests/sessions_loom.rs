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
    // seconds of the first machine); bound 3, run to its end on an idle machine: 9,649,988
    // executions, held, 935.7 CPU seconds, more than make check's 30 minutes leave
    // (docs/perf.md, "Where loom runs below make check's bound 3").
    sessions_unlink_2sched => "session-unlink-2sched" at most 2,
    sessions_tracer_remove => "tracer-remove",
    sessions_tracer_replace => "tracer-replace",
}

/// Every baseline of the family holds on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`, docs/nonblocking-load.md §7, "The static area"; rows
/// named `<scenario>@versions`): at make check's bound but `session-unlink-2sched`, at 1 there
/// (its static row runs at 2: 587,284 executions; at 2 it costs about a minute on a version).
#[test]
fn sessions_versions() {
    use bpspec_models::harness::loom_run;
    let failures: Vec<String> = bpspec_models::sessions::loom_scenarios()
        .iter()
        .filter_map(|s| {
            let cap = if s.name == "session-unlink-2sched" {
                1
            } else {
                usize::MAX
            };
            let run = bpspec_models::sessions::run_on::<bpspec_reference::Qsbr>;
            let scns = bpspec_models::sessions::loom_scenarios();
            loom_run::explore_on_versions(scns, s.name, None, "hold", cap, run)
                .map(|cx| format!("{}: {cx}", s.name))
        })
        .collect();
    assert!(failures.is_empty(), "loom: on versions: {failures:?}");
}

/// Every kill of loom's column, on a version.
#[test]
fn sessions_versions_kill_matrix() {
    use bpspec_models::harness::loom_run;
    bpspec_models::harness::assert_all_killed(
        "session on versions",
        "loom",
        bpspec_models::sessions::expected_kills("loom"),
        |m, name| {
            let run = bpspec_models::sessions::run_on::<bpspec_reference::Qsbr>;
            let scns = bpspec_models::sessions::loom_scenarios();
            loom_run::explore_on_versions(scns, name, Some(m), "killed", usize::MAX, run).is_some()
        },
    );
}
