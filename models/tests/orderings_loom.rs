//! Barrier removal under loom: each site of `bpspec_reference::ordering::SITES` weakened to
//! Relaxed (or its fence removed), on the scenarios its row lists, at the bound `make test` uses
//! (`LOOM_MAX_PREEMPTIONS`; the epoch rows at most 1, as the epoch baselines). Every run is
//! recorded (variant `weaken-<site>`); docs/orderings.md is generated from those records
//! (`make orderings-doc`).
//!
//! - `orderings_kill_matrix`: every site the table says is killed is killed on its scenario;
//! - `orderings_survivors`: every other site survives every scenario its row lists (so the
//!   table's "harmless" and "not caught" rows are what loom sees, and a new kill shows up).
#![cfg(loom)]

use bpspec_models::harness::loom_run::{self, builder};
use bpspec_models::harness::scenario_named;
use bpspec_models::{collection, load, loom_scenarios, meta, readers, run, sessions};
use bpspec_reference::ordering::{Verdict as Row, SITES};
use bpspec_reference::{EpochProgress, Mutant, Qsbr, Site};

/// Explore `site`'s weakening on one (family, progress, scenario); record; return the
/// counterexample.
fn weakened(
    site: Site,
    family: &str,
    progress: &'static str,
    name: &'static str,
    expected: &str,
) -> Option<String> {
    let m = Some(Mutant::Weaken(site));
    let mut b = loom_run::for_expected(loom_run::builder(), m, name, expected);
    // The bound make test uses for branches too, whatever the environment says (loom's default,
    // 1,000, cuts the longer scenarios short with a panic that would read as a kill).
    b.max_branches = b.max_branches.max(20_000);
    let model: Box<dyn Fn() + Sync + Send> = match (family, progress) {
        ("trace_pattern", "qsbr") => {
            let s = scenario_named(loom_scenarios(), name, |s| s.name);
            Box::new(move || run::<Qsbr>(&s, m))
        }
        ("trace_pattern", "epoch") => {
            b.preemption_bound = Some(b.preemption_bound.unwrap_or(1).min(1));
            let s = scenario_named(loom_scenarios(), name, |s| s.name);
            Box::new(move || run::<EpochProgress>(&s, m))
        }
        ("collection", "qsbr") => {
            let s = scenario_named(collection::loom_scenarios(), name, |s| s.name);
            Box::new(move || collection::run::<Qsbr>(&s, m))
        }
        ("sessions", "qsbr") => {
            let s = scenario_named(sessions::loom_scenarios(), name, |s| s.name);
            Box::new(move || sessions::run::<Qsbr>(&s, m))
        }
        ("readers", "qsbr") => {
            let s = scenario_named(readers::loom_scenarios(), name, |s| s.name);
            Box::new(move || readers::run::<Qsbr>(&s, m))
        }
        ("meta", "qsbr") => {
            assert_eq!(name, "meta-replace", "the meta family has one scenario");
            Box::new(move || meta::run_meta_replace::<Qsbr>(m))
        }
        ("load", "qsbr") => {
            let s = scenario_named(load::loom_scenarios(), name, |s| s.name);
            Box::new(move || load::run::<Qsbr>(&s, bpspec_reference::LoadProtocol::NonBlocking, m))
        }
        other => panic!("{site}: no loom family {other:?}"),
    };
    let o = loom_run::explore(&format!("{site} on {name}"), &b, model);
    loom_run::record_outcome(progress, name, site.mutant_name(), expected, &o);
    loom_run::conclusive(o, &format!("{site} on {name}"))
}

/// The meta-replace model (models/src/meta.rs) holds unweakened.
#[test]
fn meta_replace_baseline() {
    let o = loom_run::explore("meta-replace baseline", &builder(), || {
        meta::run_meta_replace::<Qsbr>(None)
    });
    loom_run::record_outcome("qsbr", "meta-replace", "baseline", "hold", &o);
    assert!(
        o.cx.is_none(),
        "loom: meta-replace violated: {}",
        o.cx.unwrap()
    );
}

#[test]
fn orderings_kill_matrix() {
    let mut survivors = Vec::new();
    for r in SITES {
        if let Row::Killed {
            family,
            progress,
            scenario,
        } = r.verdict
        {
            if weakened(r.site, family, progress, scenario, "killed").is_none() {
                survivors.push(format!("{} on {scenario}", r.site.mutant_name()));
            }
        }
    }
    assert!(
        survivors.is_empty(),
        "site mutants the table says loom kills survived: {survivors:?}"
    );
}

#[test]
fn orderings_survivors() {
    let mut killed = Vec::new();
    for r in SITES {
        if matches!(r.verdict, Row::Killed { .. }) {
            continue;
        }
        for &(family, progress, scenario) in r.tried {
            if let Some(cx) = weakened(r.site, family, progress, scenario, "survives") {
                killed.push(format!("{} on {scenario}: {cx}", r.site.mutant_name()));
            }
        }
    }
    assert!(
        killed.is_empty(),
        "site mutants the table says survive were killed (update reference/src/protocol/ordering.rs): \
         {killed:#?}"
    );
}

/// [`weakened`] on a module's version, never loaded (`Placement::Versions`), row
/// `<scenario>@versions`: the families that run on a placement (not the load family, which is
/// on versions already). The epoch rows at bound 1 at most, as on the static area.
fn weakened_on_versions(
    site: Site,
    family: &str,
    progress: &'static str,
    name: &'static str,
    expected: &str,
) -> Option<Option<String>> {
    let m = Some(Mutant::Weaken(site));
    let v = bpspec_models::Placement::Versions;
    let mut b = loom_run::for_expected(loom_run::builder(), m, name, expected);
    b.max_branches = b.max_branches.max(20_000);
    let model: Box<dyn Fn() + Sync + Send> = match (family, progress) {
        (_, "qsbr") => return weakened_qsbr_on_versions(site, family, name, expected, b),
        ("trace_pattern", "epoch") => {
            b.preemption_bound = Some(b.preemption_bound.unwrap_or(1).min(1));
            let s = scenario_named(loom_scenarios(), name, |s| s.name);
            Box::new(move || bpspec_models::run_on::<EpochProgress>(&s, m, v))
        }
        _ => return None,
    };
    let row = bpspec_models::harness::on_versions(name);
    let o = loom_run::explore(&format!("{site} on {row}"), &b, model);
    loom_run::record_outcome(progress, &row, site.mutant_name(), expected, &o);
    Some(loom_run::conclusive(o, &format!("{site} on {row}")))
}

/// [`weakened_on_versions`] under `Qsbr`, with the builder `b`.
fn weakened_qsbr_on_versions(
    site: Site,
    family: &str,
    name: &'static str,
    expected: &str,
    b: loom::model::Builder,
) -> Option<Option<String>> {
    let m = Some(Mutant::Weaken(site));
    let v = bpspec_models::Placement::Versions;
    let model: Box<dyn Fn() + Sync + Send> = match family {
        "trace_pattern" => {
            let s = scenario_named(loom_scenarios(), name, |s| s.name);
            Box::new(move || bpspec_models::run_on::<Qsbr>(&s, m, v))
        }
        "collection" => {
            let s = scenario_named(collection::loom_scenarios(), name, |s| s.name);
            Box::new(move || collection::run_on::<Qsbr>(&s, m, v))
        }
        "sessions" => {
            let s = scenario_named(sessions::loom_scenarios(), name, |s| s.name);
            Box::new(move || sessions::run_on::<Qsbr>(&s, m, v))
        }
        "readers" => {
            let s = scenario_named(readers::loom_scenarios(), name, |s| s.name);
            Box::new(move || readers::run_on::<Qsbr>(&s, m, v))
        }
        "meta" => Box::new(move || meta::run_meta_on::<Qsbr>(name, m, v)),
        _ => return None,
    };
    let row = bpspec_models::harness::on_versions(name);
    let o = loom_run::explore(&format!("{site} on {row}"), &b, model);
    loom_run::record_outcome("qsbr", &row, site.mutant_name(), expected, &o);
    Some(loom_run::conclusive(o, &format!("{site} on {row}")))
}

/// Every site the table says loom kills on a family that runs on a placement is killed on the
/// same scenario on a module's version too.
#[test]
fn orderings_kill_matrix_on_versions() {
    let mut survivors = Vec::new();
    for r in SITES {
        if let Row::Killed {
            family,
            progress,
            scenario,
        } = r.verdict
        {
            if let Some(None) = weakened_on_versions(r.site, family, progress, scenario, "killed") {
                survivors.push(format!("{} on {scenario}@versions", r.site.mutant_name()));
            }
        }
    }
    assert!(
        survivors.is_empty(),
        "site mutants the table says loom kills survived on a version: {survivors:?}"
    );
}

/// Every site the table says survives, on each scenario its row lists whose family runs on a
/// placement, survives on the same scenario on a module's version too (the load family's rows
/// are on versions already): so the table's "harmless" and "not caught" verdicts hold on a
/// version as loom sees it, and a new kill there shows up.
#[test]
fn orderings_survivors_on_versions() {
    let mut killed = Vec::new();
    let mut ran = 0;
    for r in SITES {
        if matches!(r.verdict, Row::Killed { .. }) {
            continue;
        }
        for &(family, progress, scenario) in r.tried {
            match weakened_on_versions(r.site, family, progress, scenario, "survives") {
                Some(Some(cx)) => killed.push(format!(
                    "{} on {scenario}@versions: {cx}",
                    r.site.mutant_name()
                )),
                Some(None) => ran += 1,
                None => {}
            }
        }
    }
    assert!(ran > 0, "no surviving site ran on a version");
    assert!(
        killed.is_empty(),
        "site mutants the table says survive were killed on a version: {killed:#?}"
    );
}
