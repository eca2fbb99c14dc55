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

/// The family's scenarios on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`, docs/nonblocking-load.md §7, "The static area"): the
/// module's export entries, their dispatch words per code index; its row named
/// `<scenario>@versions`.
fn explore_versions(
    name: &'static str,
    mutant: Option<bpspec_reference::Mutant>,
    expected: &str,
) -> Option<String> {
    use bpspec_models::harness::{loom_run, scenario_named};
    let scn = scenario_named(bpspec_models::exports::loom_scenarios(), name, |s| s.name);
    let row = format!("{name}@versions");
    loom_run::explore_mutant(&row, mutant, expected, usize::MAX, move || {
        bpspec_models::exports::run_on::<bpspec_reference::Qsbr>(
            &scn,
            mutant,
            bpspec_models::Placement::Versions,
        )
    })
}

/// Every baseline of the family holds on a version.
#[test]
fn exports_versions() {
    let failures: Vec<String> = bpspec_models::exports::loom_scenarios()
        .iter()
        .filter_map(|s| {
            explore_versions(s.name, None, "hold").map(|cx| format!("{}: {cx}", s.name))
        })
        .collect();
    assert!(failures.is_empty(), "loom: on versions: {failures:?}");
}

/// Every kill of loom's column, on a version.
#[test]
fn exports_versions_kill_matrix() {
    bpspec_models::harness::assert_all_killed(
        "export on versions",
        "loom",
        bpspec_models::exports::expected_kills("loom"),
        |m, name| explore_versions(name, Some(m), "killed").is_some(),
    );
}
