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
