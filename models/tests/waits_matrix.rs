//! The wait-plan models on real threads: the grace periods each scenario's batch makes under
//! every plan (docs/results/wait-plan-scenarios.tsv, shown by docs/fewer-waits.md §3), and the
//! claim that every scenario where the elide-idle plan makes fewer waits than the batch plan
//! carries the mutant that removes the wait the elision leans on (W2, proof EL5) in loom's and
//! shuttle's columns, so the elision is explored on each such scenario by a check that can fail.
//!
//! Regenerate the table: `BPSPEC_BLESS=1 cargo test -p bpspec-models --test waits_matrix`.
#![cfg(not(any(loom, shuttle)))]

use bpspec_models::readers::stager_waits;
use bpspec_models::waits::{expected_kills, loom_scenarios, PLANS};
use bpspec_reference::{Mutant, Qsbr, WaitPlan};
use std::path::PathBuf;

const TABLE: &str = "docs/results/wait-plan-scenarios.tsv";

fn table_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(TABLE)
}

/// Every plan the engine has, ERTS's first.
fn all_plans() -> Vec<WaitPlan> {
    std::iter::once(WaitPlan::Erts).chain(PLANS).collect()
}

/// (scenario, waits under each of `all_plans`).
fn measured() -> Vec<(&'static str, Vec<u64>)> {
    loom_scenarios()
        .iter()
        .map(|s| {
            let waits = all_plans()
                .into_iter()
                .map(|plan| stager_waits::<Qsbr>(s, plan))
                .collect();
            (s.name, waits)
        })
        .collect()
}

fn render(rows: &[(&'static str, Vec<u64>)]) -> String {
    let mut out = String::from(
        "# written by models/tests/waits_matrix.rs (BPSPEC_BLESS=1 cargo test -p bpspec-models \
         --test waits_matrix): the grace periods of each wait-plan scenario's stager ops, nothing \
         racing them; do not edit.\n",
    );
    out.push_str("scenario");
    for plan in all_plans() {
        out.push_str(&format!("\t{}", plan.name()));
    }
    out.push_str("\telides\n");
    for (name, waits) in rows {
        out.push_str(name);
        for w in waits {
            out.push_str(&format!("\t{w}"));
        }
        let elides = waits[2] < waits[1];
        out.push_str(if elides { "\tyes\n" } else { "\tno\n" });
    }
    out
}

#[test]
fn wait_plan_scenarios_table_is_fresh() {
    let _watchdog =
        bpspec_reference::watchdog::arm("waits_matrix::wait_plan_scenarios_table_is_fresh");
    let fresh = render(&measured());
    let path = table_path();
    if std::env::var_os("BPSPEC_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write the wait-plan scenario table");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == fresh,
        "{TABLE} is stale: regenerate it with BPSPEC_BLESS=1 cargo test -p bpspec-models --test \
         waits_matrix\nmeasured:\n{fresh}"
    );
}

/// The elision is checked where it happens: each scenario on which the elide-idle plan makes
/// fewer waits than the batch plan is one on which removing W2 under the elide-idle plan is
/// claimed killed by loom and by shuttle (`waits::expected_kills`); and the elision happens in
/// each of the three idle shapes of proof EL: a batch that replaces a call_time object and
/// installs (`batch-restart-set`), one that releases counters of nodes that stay
/// (`batch-drop-counters`), and one that pauses (`batch-pause`).
#[test]
fn every_scenario_the_elide_idle_plan_elides_in_claims_its_w2_kill() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "waits_matrix::every_scenario_the_elide_idle_plan_elides_in_claims_its_w2_kill",
    );
    let rows = measured();
    let eliding: Vec<&str> = rows
        .iter()
        .filter(|(_, w)| w[2] < w[1])
        .map(|(n, _)| *n)
        .collect();
    for name in ["batch-restart-set", "batch-drop-counters", "batch-pause"] {
        assert!(
            eliding.contains(&name),
            "the elide-idle plan elides on {eliding:?}, not on {name}"
        );
    }
    for checker in ["loom", "shuttle"] {
        let claims = expected_kills(checker, WaitPlan::BatchElideIdle);
        for name in &eliding {
            assert!(
                claims.contains(&(Mutant::SkipWaitBeforeUninstall, name)),
                "{checker} claims no W2 kill on {name}, where the elide-idle plan elides"
            );
        }
    }
    // An idle `false` makes W1 and W2 only; an idle batch that installs or pauses W0 to W2
    // (docs/fewer-waits.md, the plans' table).
    let waits = |n: &str| rows.iter().find(|r| r.0 == n).unwrap().1[2];
    assert_eq!(waits("batch-drop-counters"), 2);
    assert_eq!(waits("batch-restart-set"), 3);
    assert_eq!(waits("batch-pause"), 3);
}
