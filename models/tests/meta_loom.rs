//! loom over the meta tracer swap model (`bpspec_models::meta::run_meta_swap`): two schedulers
//! hit the function with `META_TRACE`, the tracer answers `remove`, the winner of the NIL
//! compare-and-swap retires the cell, and the stager reclaims retired cells meanwhile. The
//! baseline holds and `meta-free-without-wait` is found. The replacement model (`meta-replace`)
//! runs under loom in `orderings_loom.rs`. Bound from `LOOM_MAX_PREEMPTIONS` (CI 2,
//! `make check` 3).
#![cfg(loom)]

use bpspec_models::harness::{assert_all_killed, loom_run};
use bpspec_models::meta::{expected_meta_kills, run_meta_reclaim_many, run_meta_swap};
use bpspec_reference::{Mutant, Qsbr};

fn explore(name: &'static str, mutant: Option<Mutant>, expected: &str) -> Option<String> {
    loom_run::explore_mutant(name, mutant, expected, usize::MAX, move || match name {
        "meta-swap" => run_meta_swap::<Qsbr>(mutant),
        "meta-reclaim-many" => run_meta_reclaim_many::<Qsbr>(mutant),
        other => panic!("loom runs meta-swap and meta-reclaim-many here, not {other}"),
    })
}

#[test]
fn meta_swap_holds() {
    let cx = explore("meta-swap", None, "hold");
    assert!(cx.is_none(), "loom: meta-swap violated: {}", cx.unwrap());
}

/// Several cells retired before and during one reclaim: the baseline holds.
#[test]
fn meta_reclaim_many_holds() {
    let cx = explore("meta-reclaim-many", None, "hold");
    assert!(
        cx.is_none(),
        "loom: meta-reclaim-many violated: {}",
        cx.unwrap()
    );
}

/// Every meta mutant in loom's column must produce a counterexample.
#[test]
fn meta_kill_matrix() {
    assert_all_killed("meta", "loom", expected_meta_kills("loom"), |m, name| {
        explore(name, Some(m), "killed").is_some()
    });
}

/// A meta scenario on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`, docs/nonblocking-load.md §7, "The static area"):
/// its row named `<scenario>@versions`.
fn explore_versions(name: &'static str, mutant: Option<Mutant>, expected: &str) -> Option<String> {
    let row = format!("{name}@versions");
    // `meta-reclaim-many` at bound 2 at most: at 3 it ran the static area's 193,053 executions
    // exactly (17 s of make check's loom part, docs/nonblocking-load.md §7).
    let cap = if name == "meta-reclaim-many" && mutant.is_none() {
        2
    } else {
        usize::MAX
    };
    loom_run::explore_mutant(&row, mutant, expected, cap, move || {
        bpspec_models::meta::run_meta_on::<Qsbr>(name, mutant, bpspec_models::Placement::Versions)
    })
}

/// Every meta scenario that runs on a placement holds on a version.
#[test]
fn meta_versions() {
    let failures: Vec<String> = bpspec_models::meta::META_PLACED_SCENARIOS
        .iter()
        .filter_map(|&name| explore_versions(name, None, "hold").map(|cx| format!("{name}: {cx}")))
        .collect();
    assert!(failures.is_empty(), "loom: on versions: {failures:?}");
}

/// Every meta kill of loom's column, and the meta plan scenarios' under ERTS's plan, on a
/// version.
#[test]
fn meta_versions_kill_matrix() {
    let kills: Vec<_> = expected_meta_kills("loom")
        .into_iter()
        .chain(bpspec_models::meta::expected_meta_plan_kills(
            "loom",
            bpspec_reference::WaitPlan::Erts,
        ))
        .collect();
    assert_all_killed("meta on versions", "loom", kills, |m, name| {
        explore_versions(name, Some(m), "killed").is_some()
    });
}
