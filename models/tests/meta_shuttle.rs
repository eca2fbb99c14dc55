//! shuttle (PCT and random) over the meta tracer swap model (`bpspec_models::meta`): the
//! baseline holds, and `meta-free-without-wait` is found. Iterations from
//! `BPSPEC_SHUTTLE_ITERS` (default 1,000).
#![cfg(shuttle)]

use bpspec_models::harness::shuttle_run::{self, iters};
use bpspec_models::meta::run_meta_swap;
use bpspec_reference::{Mutant, Qsbr};

fn explore(mutant: Option<Mutant>, pct: bool) -> Option<String> {
    let (cx, seconds, bound) = shuttle_run::explore("meta-swap", pct, iters(), move || {
        run_meta_swap::<Qsbr>(mutant)
    });
    eprintln!(
        "shuttle meta-swap {} pct={pct} {bound}: {} ({seconds:.1} s)",
        mutant.map_or("baseline", |m| m.name()),
        if cx.is_some() { "violated" } else { "holds" }
    );
    cx
}

#[test]
fn meta_swap_baseline_holds() {
    for pct in [false, true] {
        if let Some(c) = explore(None, pct) {
            panic!("shuttle meta-swap (pct={pct}) violated a property: {c}");
        }
    }
}

#[test]
fn meta_free_without_wait_is_found() {
    for m in Mutant::META {
        let found: Vec<String> = [true, false]
            .into_iter()
            .filter_map(|pct| explore(Some(m), pct))
            .collect();
        assert!(!found.is_empty(), "{m} survived shuttle");
        assert!(
            found
                .iter()
                .any(|c| c.contains("read after free: meta tracer cell")),
            "{m}: {found:?}"
        );
    }
}
