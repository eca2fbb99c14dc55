//! loom over the model families under the epoch grace period (`bpspec_models::epoch`,
//! `LOOM_FAMILIES`): each family's loom scenarios (but `epoch::LOOM_LEFT_OUT`) hold, at
//! preemption bound 1 in `make test` and in `make check` ([`FAMILY_BOUND`]). Rows are recorded
//! with progress `epoch`. Each family's checks can fail under it: `epoch::LOOM_KILLS` are killed
//! at bound 2 (and shuttle kills each family's claims, `tests/epoch_shuttle.rs`).
#![cfg(loom)]

use bpspec_models::epoch::{rows, Row, LOOM_FAMILIES, LOOM_KILLS, LOOM_KILL_BOUND};
use bpspec_models::harness::loom_run;
use bpspec_reference::Mutant;

/// Explore `row` under `mutant` at preemption bound `bound` at most; record; the
/// counterexample, if any.
fn explore(row: &Row, mutant: Option<Mutant>, expected: &str, bound: usize) -> Option<String> {
    let mut b = loom_run::epoch_builder();
    b.preemption_bound = Some(bound);
    let model = row.model.clone();
    let variant = mutant.map_or("baseline", |m| m.name());
    let o = loom_run::explore(&format!("{} {variant}", row.label), &b, move || {
        model(mutant)
    });
    loom_run::record_outcome("epoch", &row.label, variant, expected, &o);
    loom_run::conclusive(o, &row.label)
}

fn holds(family: &str) {
    let failures: Vec<String> = rows(family, "loom")
        .iter()
        .filter_map(|r| {
            let bound = loom_run::epoch_builder()
                .preemption_bound
                .map_or(FAMILY_BOUND, |p| p.min(FAMILY_BOUND));
            explore(r, None, "hold", bound).map(|cx| format!("{}: {cx}", r.label))
        })
        .collect();
    assert!(failures.is_empty(), "loom epoch {family}: {failures:?}");
}

/// The bound of these rows, in `make check` too (where the trace_pattern epoch rows run at 2):
/// at bound 1 the seven families' rows took about 23 s (`--profile checked`, the shared
/// machine); at 2 each row's executions grow many times over, as the epoch baselines of
/// `tests/loom.rs` do (`add` 221 at bound 1 on a version, 31,214 at bound 2 on the static area).
const FAMILY_BOUND: usize = 1;

#[test]
fn epoch_versions_baseline() {
    holds("versions");
}

#[test]
fn epoch_sessions_baseline() {
    holds("sessions");
}

#[test]
fn epoch_readers_baseline() {
    holds("readers");
}

#[test]
fn epoch_collection_baseline() {
    holds("collection");
}

#[test]
fn epoch_exports_baseline() {
    holds("exports");
}

#[test]
fn epoch_meta_baseline() {
    holds("meta");
}

#[test]
fn epoch_waits_baseline() {
    holds("waits");
}

#[test]
fn epoch_load_baseline() {
    holds("load");
}

/// Every family loom runs has a kill under `EpochProgress`, and each of `epoch::LOOM_KILLS` is
/// killed at `LOOM_KILL_BOUND`.
#[test]
fn epoch_family_kills() {
    for f in LOOM_FAMILIES {
        assert!(
            LOOM_KILLS.iter().any(|&(k, _, _)| k == f),
            "no loom kill under EpochProgress for the {f} family"
        );
    }
    let mut survivors = Vec::new();
    for &(family, m, label) in LOOM_KILLS {
        let rows = rows(family, "loom");
        let row = rows
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("no row {label} in the {family} family"));
        if explore(row, Some(m), "killed", LOOM_KILL_BOUND).is_none() {
            survivors.push(format!("{m} on {label}"));
        }
    }
    assert!(
        survivors.is_empty(),
        "loom epoch kills survived: {survivors:?}"
    );
}
