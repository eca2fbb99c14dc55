//! loom models of the timem readers (`bpspec_models::readers`): processes inside call_time /
//! call_memory functions return, raise and are scheduled out and in while their patterns are
//! removed, paused, restarted and set again, in one session and in two. Bound from
//! `LOOM_MAX_PREEMPTIONS` (make test: 2, make check: 3).
#![cfg(loom)]

use bpspec_reference::Mutant;

// Every baseline here runs at the bound `LOOM_MAX_PREEMPTIONS` gives (make check: 3), none
// capped. The two largest at bound 3 (`--profile checked`, loaded 2-core machine):
// `timem-pause-restart` 1,423,778 executions, 133.6 s (bound 2: 196,943, 22.4 s);
// `timem-two-stagers` (three threads) 202,701 executions, 28.0 s (bound 2: 22,484, 3.0 s).
// The kill matrix runs at `loom_run::KILL_BOUND` as before.
bpspec_models::loom_family! { readers: "reader", readers_kill_matrix;
    readers_timem_remove => "timem-remove",
    readers_timem_remove_nap => "timem-remove-nap",
    readers_timem_pause_restart => "timem-pause-restart",
    readers_timem_remove_2sess => "timem-remove-2sess",
    readers_timem_remove_old_2sess => "timem-remove-old-2sess",
    readers_timem_raise => "timem-raise",
    readers_timem_fresh_node => "timem-fresh-node",
    readers_timem_two_stagers => "timem-two-stagers",
}

/// W4 is needed with one session (docs/protocol.md, I1): a timem reader (schedule-out, return)
/// loads the slot whatever the instruction says, so after W3 it may still stand on the node
/// consolidate unlinks. Without W4 the free is not ordered after its reads.
#[test]
fn finding_w4_needed_with_one_session() {
    for name in ["timem-remove-nap", "timem-raise"] {
        let cx = family().explore(name, Some(Mutant::SkipWaitBeforeFree), "killed");
        assert!(cx.is_some(), "skip-w4-before-free survived on {name}");
    }
}

/// Finding F3 (docs/erts-findings/F3-fresh-node-store.md): ERTS stores a fresh node into an
/// unpatched function's slot with a plain store; a timem reader of a process still charging that
/// function may find the node before its initialisation is visible. loom must find it.
#[test]
fn finding_f3_fresh_node_relaxed_store() {
    let cx = family().explore(
        "timem-fresh-node",
        Some(Mutant::FreshNodeRelaxedStore),
        "killed",
    );
    assert!(cx.is_some(), "loom no longer finds F3");
}

/// The scenarios capped at bound 2 on a version (below).
const CAPPED: &[&str] = &[
    "timem-remove",
    "timem-pause-restart",
    "timem-remove-2sess",
    "timem-remove-old-2sess",
    "timem-raise",
    "timem-two-stagers",
];

/// Every baseline of the family holds on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`, docs/nonblocking-load.md §7, "The static area"; rows
/// named `<scenario>@versions`), at make check's bound but for the six of `CAPPED`, at 2
/// there: at 3 they held with about 205 CPU seconds (docs/perf.md, "Where loom runs below make
/// check's bound 3"), more than make check's budget leaves.
#[test]
fn readers_versions() {
    bpspec_models::harness::loom_run::assert_hold_on_versions(
        bpspec_models::readers::loom_scenarios,
        CAPPED,
        bpspec_models::readers::run_on::<bpspec_reference::Qsbr>,
    );
}

/// Every kill of loom's column and of the findings above, on a version.
#[test]
fn readers_versions_kill_matrix() {
    use bpspec_models::harness::loom_run;
    let kills: Vec<(Mutant, &'static str)> = bpspec_models::readers::expected_kills("loom")
        .into_iter()
        .chain([
            (Mutant::SkipWaitBeforeFree, "timem-remove-nap"),
            (Mutant::SkipWaitBeforeFree, "timem-raise"),
        ])
        .collect();
    bpspec_models::harness::assert_all_killed("reader on versions", "loom", kills, |m, name| {
        let run = bpspec_models::readers::run_on::<bpspec_reference::Qsbr>;
        let scns = bpspec_models::readers::loom_scenarios();
        loom_run::explore_on_versions(scns, name, Some(m), "killed", usize::MAX, run).is_some()
    });
}
