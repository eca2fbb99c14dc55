//! loom over the export-entry models (`bpspec_models::exports`): remote calls through an
//! export entry while the stager sets, re-sets, removes or replaces by local trace a `global`
//! pattern, with one session and two. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2, `make check` 3).
#![cfg(loom)]

bpspec_models::loom_family! { exports: "export", exports_kill_matrix;
    exports_global_set => "global-set",
    exports_global_set_2f => "global-set-2f",
    exports_global_remove_2f => "global-remove-2f",
    exports_global_remove => "global-remove",
    exports_global_pause => "global-pause",
    exports_global_to_local => "global-to-local",
    exports_global_remove_2sess => "global-remove-2sess",
    exports_global_remove_old_2sess => "global-remove-old-2sess",
}

/// Every baseline of the family holds on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`, docs/nonblocking-load.md §7, "The static area"; the
/// module's export entries, their dispatch words per code index; rows named
/// `<scenario>@versions`).
#[test]
fn exports_versions() {
    bpspec_models::harness::loom_run::assert_hold_on_versions(
        bpspec_models::exports::loom_scenarios,
        &[],
        bpspec_models::exports::run_on::<bpspec_reference::Qsbr>,
    );
}

/// Every kill of loom's column, on a version.
#[test]
fn exports_versions_kill_matrix() {
    use bpspec_models::harness::loom_run;
    bpspec_models::harness::assert_all_killed(
        "export on versions",
        "loom",
        bpspec_models::exports::expected_kills("loom"),
        |m, name| {
            let run = bpspec_models::exports::run_on::<bpspec_reference::Qsbr>;
            let scns = bpspec_models::exports::loom_scenarios();
            loom_run::explore_on_versions(scns, name, Some(m), "killed", usize::MAX, run).is_some()
        },
    );
}
