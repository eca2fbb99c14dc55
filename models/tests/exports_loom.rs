//! loom over the export-entry models (`bpspec_models::exports`): remote calls through an
//! export entry while the stager sets, re-sets, removes or replaces by local trace a `global`
//! pattern, with one session and two. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2, `make check` 3).
#![cfg(loom)]

use bpspec_models::baselines;
use bpspec_models::exports::{
    expected_export_kills, loom_export_scenarios, run_exports, ExportScenario,
};
use bpspec_models::harness::{assert_all_killed, loom_run};
use bpspec_reference::Qsbr;

baselines! { "loom", |s| EXPORTS.explore(s, None, "hold");
    exports_global_set => "global-set",
    exports_global_set_2f => "global-set-2f",
    exports_global_remove_2f => "global-remove-2f",
    exports_global_remove => "global-remove",
    exports_global_pause => "global-pause",
    exports_global_to_local => "global-to-local",
    exports_global_remove_2sess => "global-remove-2sess",
    exports_global_remove_old_2sess => "global-remove-old-2sess",
}

/// Every wait-removal mutant in loom's export column must produce a counterexample.
#[test]
fn exports_kill_matrix() {
    assert_all_killed(
        "export",
        "loom",
        expected_export_kills("loom"),
        |m, name| EXPORTS.explore(name, Some(m), "killed").is_some(),
    );
}

/// The family every test here explores.
const EXPORTS: loom_run::Family<ExportScenario> = loom_run::Family {
    scenarios: loom_export_scenarios,
    run: run_exports::<Qsbr>,
};
