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
