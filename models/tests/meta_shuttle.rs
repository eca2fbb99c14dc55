//! shuttle (PCT and random) over the meta tracer models (`bpspec_models::meta`): the swap
//! model's baseline holds and `meta-free-without-wait` is found; the reclaim of several cells
//! retired before and during one reclaim (`meta-reclaim-many`) holds and
//! `meta-reclaim-wait-before-take` is found. Iterations from `BPSPEC_SHUTTLE_ITERS` (default
//! 1,000).
#![cfg(shuttle)]

use bpspec_models::harness::shuttle_run::{self, iters};
use bpspec_models::meta::{expected_meta_kills, run_meta_reclaim_many, run_meta_swap};
use bpspec_reference::{Mutant, Qsbr};

fn explore(name: &str, mutant: Option<Mutant>, pct: bool) -> Option<String> {
    let run: fn(Option<Mutant>) = match name {
        "meta-swap" => run_meta_swap::<Qsbr>,
        "meta-reclaim-many" => run_meta_reclaim_many::<Qsbr>,
        other => panic!("unknown meta scenario {other}"),
    };
    let (cx, seconds, bound) = shuttle_run::explore(name, pct, iters(), move || run(mutant));
    eprintln!(
        "shuttle {name} {} pct={pct} {bound}: {} ({seconds:.1} s)",
        mutant.map_or("baseline", |m| m.name()),
        if cx.is_some() { "violated" } else { "holds" }
    );
    cx
}

#[test]
fn meta_swap_baseline_holds() {
    for name in ["meta-swap", "meta-reclaim-many"] {
        for pct in [false, true] {
            if let Some(c) = explore(name, None, pct) {
                panic!("shuttle {name} (pct={pct}) violated a property: {c}");
            }
        }
    }
}

#[test]
fn meta_free_without_wait_is_found() {
    for (m, name) in expected_meta_kills("shuttle") {
        let found: Vec<String> = [true, false]
            .into_iter()
            .filter_map(|pct| explore(name, Some(m), pct))
            .collect();
        assert!(!found.is_empty(), "{m} survived shuttle on {name}");
        assert!(
            found
                .iter()
                .any(|c| c.contains("read after free: meta tracer cell")),
            "{m} on {name}: {found:?}"
        );
    }
}

/// A meta scenario on a module's current version, never loaded
/// (`bpspec_models::Placement::Versions`): its row named `<scenario>@versions`, at `n`
/// iterations.
fn explore_versions(
    name: &'static str,
    mutant: Option<Mutant>,
    pct: bool,
    expected: &str,
    n: usize,
) -> Option<String> {
    let row = format!("{name}@versions");
    let variant = mutant.map_or("baseline", |m| m.name());
    shuttle_run::explore_row("qsbr", &row, variant, expected, pct, n, move || {
        bpspec_models::meta::run_meta_on::<Qsbr>(name, mutant, bpspec_models::Placement::Versions)
    })
}

/// Every meta scenario that runs on a placement holds on a version, under PCT and random, at
/// most `shuttle_run::versions_iters` iterations.
#[test]
fn meta_versions_baseline() {
    let n = shuttle_run::versions_iters();
    for name in bpspec_models::meta::META_PLACED_SCENARIOS {
        for pct in [false, true] {
            if let Some(c) = explore_versions(name, None, pct, "hold", n) {
                panic!("shuttle {name}@versions (pct={pct}) violated a property: {c}");
            }
        }
    }
}

/// Every meta kill of shuttle's column, and the meta plan scenarios' under ERTS's plan, on a
/// version, by PCT (its row expects the kill; random runs too, a miss allowed: at 2,000
/// iterations it missed two of the three).
#[test]
fn meta_versions_kill_matrix() {
    let kills: Vec<_> = expected_meta_kills("shuttle")
        .into_iter()
        .chain(bpspec_models::meta::expected_meta_plan_kills(
            "shuttle",
            bpspec_reference::WaitPlan::Erts,
        ))
        .collect();
    for (m, name) in kills {
        let pct = explore_versions(name, Some(m), true, "killed", shuttle_run::versions_iters());
        explore_versions(
            name,
            Some(m),
            false,
            "survives",
            shuttle_run::versions_iters(),
        );
        assert!(
            pct.is_some(),
            "{m} survived shuttle's PCT on {name}@versions"
        );
    }
}
