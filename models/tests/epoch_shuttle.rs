//! shuttle (PCT and random) over every model family under the epoch grace period
//! (`bpspec_models::epoch`): each family's shuttle scenarios hold, and each family's shuttle kill
//! claims die (by PCT or random, as the families' own kill columns accept), at
//! `shuttle_run::versions_iters` iterations (2,000 in `make test` and in `make check`). Rows are
//! recorded with progress `epoch`.
#![cfg(shuttle)]

use bpspec_models::epoch::{claims, rows, Row, SHUTTLE_MISSES};
use bpspec_models::harness::shuttle_run;
use bpspec_reference::Mutant;

/// Explore `row` under `mutant`, PCT or random; record; the counterexample, if any.
fn explore(row: &Row, mutant: Option<Mutant>, pct: bool, expected: &str) -> Option<String> {
    let model = row.model.clone();
    let variant = mutant.map_or("baseline", |m| m.name());
    let n = shuttle_run::versions_iters();
    shuttle_run::explore_row("epoch", &row.label, variant, expected, pct, n, move || {
        model(mutant)
    })
}

fn holds(family: &str) {
    let mut failures = Vec::new();
    for r in rows(family, "shuttle") {
        for pct in [false, true] {
            if let Some(cx) = explore(&r, None, pct, "hold") {
                failures.push(format!("{} (pct={pct}): {cx}", r.label));
            }
        }
    }
    assert!(failures.is_empty(), "shuttle epoch {family}: {failures:?}");
}

/// Every claim but those of `SHUTTLE_MISSES` is killed by PCT or random (PCT's row expects the
/// kill, random's may miss, as in the families' own kill columns); the misses run and are
/// recorded ("survives", a kill accepted). Each family has a claim that must die.
fn kills(family: &str) {
    let rows = rows(family, "shuttle");
    let mut survivors = Vec::new();
    let mut asserted = 0;
    for (m, label) in claims(family, "shuttle") {
        let row = rows
            .iter()
            .find(|r| r.label == label)
            .expect("claim on a row");
        let miss = SHUTTLE_MISSES.contains(&(m, label.as_str()));
        let by_pct = explore(row, Some(m), true, if miss { "survives" } else { "killed" });
        let by_random = explore(row, Some(m), false, "survives");
        if !miss {
            asserted += 1;
            if by_pct.is_none() && by_random.is_none() {
                survivors.push(format!("{m} on {label}"));
            }
        }
    }
    assert!(asserted > 0, "shuttle epoch {family}: no claim must die");
    assert!(
        survivors.is_empty(),
        "shuttle epoch {family}: claims survived: {survivors:?}"
    );
}

macro_rules! family {
    ($($hold:ident, $kill:ident => $f:literal),* $(,)?) => {$(
        #[test]
        fn $hold() {
            holds($f);
        }
        #[test]
        fn $kill() {
            kills($f);
        }
    )*};
}

family! {
    epoch_versions_baseline, epoch_versions_kills => "versions",
    epoch_sessions_baseline, epoch_sessions_kills => "sessions",
    epoch_readers_baseline, epoch_readers_kills => "readers",
    epoch_collection_baseline, epoch_collection_kills => "collection",
    epoch_exports_baseline, epoch_exports_kills => "exports",
    epoch_meta_baseline, epoch_meta_kills => "meta",
    epoch_waits_baseline, epoch_waits_kills => "waits",
    epoch_load_baseline, epoch_load_kills => "load",
}
