//! The engine torture (docs/torture.md) at `make test` size: one million hits on real threads
//! under pattern churn, with every conservation, paused-counter, at-rest and liveness check, and
//! zero violations. `BPSPEC_TORTURE_HITS` / `BPSPEC_TORTURE_SCHEDULERS` / `BPSPEC_TORTURE_SEED`
//! change the size.

use bpspec_reference::torture::{run, TortureConfig};
use std::time::Duration;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn torture_one_million_hits_without_a_violation() {
    let _watchdog =
        bpspec_reference::watchdog::arm("torture::torture_one_million_hits_without_a_violation");
    holds(sized());
}

/// `make test`'s size from the environment (4 schedulers, one million hits by default).
fn sized() -> TortureConfig {
    TortureConfig::new(
        env("BPSPEC_TORTURE_SCHEDULERS", 4) as usize,
        env("BPSPEC_TORTURE_HITS", 1_000_000),
        env("BPSPEC_TORTURE_SEED", 0x746f_7274),
    )
}

/// Run `cfg` with its churn minimums: no violation, its hits and churn reached, at least two
/// conservation checks and a paused-counter check.
fn holds(cfg: TortureConfig) {
    let mut cfg = cfg.with_churn_minimums();
    cfg.max_time = Duration::from_secs(env("BPSPEC_TORTURE_SECONDS", 300));
    println!("torture: {}", cfg.describe());
    let rep = run(&cfg).expect("valid parameters");
    println!("torture: {}", rep.describe());
    if let Some(v) = &rep.violation {
        panic!("{v} ({})", cfg.describe());
    }
    assert!(
        !rep.timed_out,
        "time bound reached before the hits: {}",
        rep.describe()
    );
    assert!(
        rep.shortfalls(&cfg).is_empty(),
        "short of its targets ({}): {}",
        rep.shortfalls(&cfg).join(", "),
        rep.describe()
    );
    assert!(rep.conservation_checks >= 2, "{}", rep.describe());
    assert!(rep.paused_checks > 0, "{}", rep.describe());
}

/// `wait-without-new-period` under the torture, paced, within 60 s: must be killed.
fn kills_wait_without_new_period(versions: bool) {
    let mut cfg = TortureConfig::new(4, u64::MAX / 2, env("BPSPEC_TORTURE_SEED", 0x746f_7274));
    cfg.phase_hits = 100_000;
    // Paced as the CLI's mutant runs are (`bpspec torture --mutant`, 32 hits per churn
    // operation): the schedulers wait for the stager, so the number of trace_pattern calls does
    // not depend on the machine's load. Unpaced, four schedulers on a loaded 2-core machine
    // (make test's other parts beside it) left the stager 709 calls in 125 s, and it survived.
    cfg.pace = 32;
    cfg.versions = versions;
    cfg.max_time = Duration::from_secs(60);
    cfg.mutant = Some(bpspec_reference::Mutant::WaitWithoutNewPeriod);
    println!("torture: {}", cfg.describe());
    let rep = run(&cfg).expect("valid parameters");
    println!("torture: {}", rep.describe());
    let v = rep
        .violation
        .expect("wait-without-new-period survived the torture");
    println!("torture: killed: {v}");
}

/// The torture can fail: with the grace period broken (a wait for thread progress that does not
/// start a new period), the checked build catches a read of freed or half-written breakpoint
/// memory, or a paused counter that still changes, within seconds.
#[cfg(debug_assertions)]
#[test]
fn torture_kills_wait_without_new_period() {
    let _watchdog =
        bpspec_reference::watchdog::arm("torture::torture_kills_wait_without_new_period");
    kills_wait_without_new_period(false);
}

/// The churn minimums can fail: a run whose stager makes no churn operation (`idle_stager`: the
/// pace still advances, so the run reaches its hits) is short of trace_pattern calls,
/// collections and paused-counter checks.
#[test]
fn a_torture_that_does_not_churn_is_short() {
    let _watchdog =
        bpspec_reference::watchdog::arm("torture::a_torture_that_does_not_churn_is_short");
    let mut cfg = TortureConfig::new(2, 200_000, env("BPSPEC_TORTURE_SEED", 0x746f_7274));
    cfg = cfg.with_churn_minimums();
    cfg.idle_stager = true;
    cfg.max_time = Duration::from_secs(env("BPSPEC_TORTURE_SECONDS", 300));
    let rep = run(&cfg).expect("valid parameters");
    println!("torture: {}", rep.describe());
    assert!(rep.violation.is_none(), "{:?}", rep.violation);
    let short = rep.shortfalls(&cfg).join(", ");
    for what in ["trace_pattern", "collections"] {
        assert!(short.contains(what), "{what} not short: {short}");
    }
    // The paused-check minimum counts the operations drawn while a counter was paused (an idle
    // stager pauses none): the same report with 500 such operations and no check is short.
    let mut r = rep.clone();
    r.paused_chances = 500;
    r.paused_checks = 0;
    let short = r.shortfalls(&cfg).join(", ");
    assert!(
        short.contains("paused_checks 0 < 10"),
        "paused_checks not short: {short}"
    );
    // Under a batching wait plan a run without batches is short of them; under ERTS's plan the
    // batch minimum does not apply.
    assert!(!short.contains("batches"), "{short}");
    let mut batching = cfg.clone();
    batching.wait_plan = bpspec_reference::WaitPlan::Batch;
    let short = r.shortfalls(&batching).join(", ");
    assert!(short.contains("batches 0 <"), "batches not short: {short}");
}

/// The churn minimums can fail on the pace: a report whose stager made fewer operations than the
/// pacing guarantees for its hits is short of churn operations.
#[test]
fn a_torture_below_the_pacing_bound_is_short() {
    let _watchdog =
        bpspec_reference::watchdog::arm("torture::a_torture_below_the_pacing_bound_is_short");
    let cfg = TortureConfig::new(8, 1_000_000, 1).with_churn_minimums();
    let bound = cfg.pacing_bound(1_000_000, 40);
    assert!(bound > 800, "{bound}");
    // The unpaced start that once let 8 schedulers make every hit before the first window
    // opened left a run of 8 phases with a handful of operations: far below.
    assert!(cfg.pacing_bound(1_000_000, 8) > 900);
    let rep = bpspec_reference::torture::TortureReport {
        hits: 1_000_000,
        phases: 40,
        churn_ops: bound - 1,
        churn_trace_patterns: bound,
        churn_collections: bound,
        paused_checks: bound,
        ..Default::default()
    };
    let short = rep.shortfalls(&cfg);
    assert_eq!(
        short,
        vec![format!("churn operations {} < {bound}", bound - 1)]
    );
    let at = bpspec_reference::torture::TortureReport {
        churn_ops: bound,
        ..rep
    };
    assert!(at.shortfalls(&cfg).is_empty(), "{:?}", at.shortfalls(&cfg));
}

/// The engine torture on a module's version (`TortureConfig::versions`): the same churn, calls,
/// collections and checks, the functions in module `m`'s version 1, never loaded.
#[test]
fn torture_on_a_modules_version_without_a_violation() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "torture::torture_on_a_modules_version_without_a_violation",
    );
    let mut cfg = sized();
    cfg.versions = true;
    holds(cfg);
}

/// The torture on a version can fail: `wait-without-new-period` as above.
#[cfg(debug_assertions)]
#[test]
fn torture_on_a_modules_version_kills_wait_without_new_period() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "torture::torture_on_a_modules_version_kills_wait_without_new_period",
    );
    kills_wait_without_new_period(true);
}
