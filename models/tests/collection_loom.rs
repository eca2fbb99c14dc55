//! loom models of call_time / call_memory and the OTP 29 collection (docs/collection.md):
//! baselines hold, every collection mutant is killed, and finding F1 (paused counters read in
//! place) is reproduced. Bound from `LOOM_MAX_PREEMPTIONS` (make test: 2, make check: 3).
#![cfg(loom)]

use bpspec_models::collection::{loom_scenarios, run};
use bpspec_models::harness::{loom_run, scenario_named};
use bpspec_reference::Qsbr;

bpspec_models::loom_family! { collection: "collection", timem_kill_matrix;
    timem_info => "info",
    timem_info_dirty => "info-dirty",
    timem_info_inflight => "info-inflight",
    timem_info_rehash => "info-rehash",
    timem_reset => "reset",
    timem_info_vs_reset => "info-vs-reset",
    timem_info_stw => "info-stw",
    timem_info_stw_nap => "info-stw-nap",
    // At make check's bound 3 uncapped: 1,679,701 executions, 91 CPU seconds (user 69, system
    // 22; 172 s wall on the loaded 2-core machine, load average 3 to 6), against 122,786 at
    // bound 2.
    timem_paused_inflight_fixed => "paused-inflight",
}

/// One test a finding of docs/collection.md: scenario `$scn` with its fix (`$fix`) off, the
/// ERTS variant (row `$variant`); loom must find a counterexample.
macro_rules! findings {
    ($($(#[$doc:meta])* $test:ident: $finding:literal, $scn:literal without $fix:ident
        as $variant:literal;)*) => {$(
        $(#[$doc])*
        #[test]
        fn $test() {
            let mut scn = scenario_named(loom_scenarios(), $scn, |s| s.name);
            scn.$fix = false;
            let model = move || run::<Qsbr>(&scn, None);
            let cx = loom_run::explore_variant($scn, $variant, "killed", usize::MAX, model);
            assert!(cx.is_some(), "loom no longer finds {}", $finding);
        }
    )*};
}

findings! {
    /// Finding F1 (docs/collection.md): ERTS reads a paused counter in place, while a frame still
    /// in flight from before the pause charges it on return. With the fix off, loom must find it.
    timem_finding_f1_paused_read_in_place: "F1", "paused-inflight" without paused_via_flip
        as "erts-paused-in-place";
    /// Finding F2 (docs/collection.md): ERTS flips back (a relaxed store) right after reading the
    /// real tables. Nothing orders those reads before the writes of a scheduler that reads the
    /// flipped-back index, so under C11 the read races with them. loom must find it.
    timem_finding_f2_read_then_flip_back: "F2", "info-dirty" without flip_back_wait
        as "erts-flip-back-after-read";
}

/// The scenarios capped at bound 2 on a version (below).
const CAPPED: &[&str] = &["paused-inflight", "info-vs-reset"];

/// Every baseline of the family holds on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`, docs/nonblocking-load.md §7, "The static area"; rows
/// named `<scenario>@versions`), at make check's bound but for the two of `CAPPED`, at 2
/// there: at 3 they held, at 1,679,701 and 241,396 executions, with about 155 CPU seconds
/// (docs/perf.md, "Where loom runs below make check's bound 3"), more than make check's budget
/// leaves.
#[test]
fn timem_versions() {
    loom_run::assert_hold_on_versions(
        loom_scenarios,
        CAPPED,
        bpspec_models::collection::run_on::<Qsbr>,
    );
}

/// Every kill of loom's column on a version, and findings F1 and F2 there (the ERTS variants).
#[test]
fn timem_versions_kill_matrix() {
    bpspec_models::harness::assert_all_killed(
        "collection on versions",
        "loom",
        bpspec_models::collection::expected_kills("loom"),
        |m, name| {
            let run = bpspec_models::collection::run_on::<Qsbr>;
            loom_run::explore_on_versions(
                loom_scenarios(),
                name,
                Some(m),
                "killed",
                usize::MAX,
                run,
            )
            .is_some()
        },
    );
    for (name, variant) in [
        ("paused-inflight", "erts-paused-in-place"),
        ("info-dirty", "erts-flip-back-after-read"),
    ] {
        let mut scn = scenario_named(loom_scenarios(), name, |s| s.name);
        match variant {
            "erts-paused-in-place" => scn.paused_via_flip = false,
            _ => scn.flip_back_wait = false,
        }
        let model = move || {
            bpspec_models::collection::run_on::<Qsbr>(
                &scn,
                None,
                bpspec_models::Placement::Versions,
            )
        };
        let row = bpspec_models::harness::on_versions(name);
        let cx = loom_run::explore_variant(&row, variant, "killed", usize::MAX, model);
        assert!(cx.is_some(), "loom no longer finds {variant} on a version");
    }
}
