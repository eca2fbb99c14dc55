//! loom over the export-entry models (`bpspec_models::exports`): remote calls through an
//! export entry while the stager sets, re-sets, removes or replaces by local trace a `global`
//! pattern, with one session and two. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2, `make check` 3).
#![cfg(loom)]

use bpspec_models::exports::{
    expected_export_kills, loom_export_scenarios, run_exports, ExportScenario,
};
use bpspec_models::harness::loom_run::{self, builder};
use bpspec_models::harness::scenario_named;
use bpspec_reference::{Mutant, Qsbr};

fn scenario(name: &str) -> ExportScenario {
    scenario_named(loom_export_scenarios(), name, |s| s.name)
}

fn explore(name: &'static str, mutant: Option<Mutant>, expected: &str) -> Option<String> {
    let scn = scenario(name);
    let o = loom_run::explore(&builder(), move || run_exports::<Qsbr>(&scn, mutant));
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
    let survivors: Vec<String> = expected_export_kills("loom")
        .into_iter()
        .filter(|&(m, name)| explore(name, Some(m), "killed").is_none())
        .map(|(m, name)| format!("{m} on {name}"))
        .collect();
    assert!(
        survivors.is_empty(),
        "export mutants loom should kill survived: {survivors:?}"
    );
}
