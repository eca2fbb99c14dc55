//! shuttle (PCT and random) over the session models, three schedulers, plus a churn of three
//! sessions. Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000, `make check` 50,000).
#![cfg(shuttle)]

use bpspec_models::results::{catch, record, Verdict};
use bpspec_models::sessions::{
    expected_session_kills, run_sessions, shuttle_session_scenarios, SessionScenario,
};
use bpspec_reference::{Mutant, Qsbr};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};
use std::time::Instant;

const SEED: u64 = 0x6270_7370_6563; // "bpspec"
const PCT_DEPTH: usize = 3;

fn iters() -> usize {
    std::env::var("BPSPEC_SHUTTLE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000)
}

fn explore(scn: &SessionScenario, mutant: Option<Mutant>, pct: bool, expected: &str) -> bool {
    let n = iters();
    let scn2 = scn.clone();
    let start = Instant::now();
    let f = move || run_sessions::<Qsbr>(&scn2, mutant);
    let cx = catch(|| {
        if pct {
            Runner::new(
                PctScheduler::new_from_seed(SEED, PCT_DEPTH, n),
                Config::new(),
            )
            .run(f);
        } else {
            Runner::new(RandomScheduler::new_from_seed(SEED, n), Config::new()).run(f);
        }
    });
    let bound = if pct {
        format!("pct depth={PCT_DEPTH} iterations={n} seed={SEED:#x}")
    } else {
        format!("random iterations={n} seed={SEED:#x}")
    };
    let observed = match (mutant, cx.is_some()) {
        (None, true) => "VIOLATED",
        (None, false) => "hold",
        (Some(_), true) => "killed",
        (Some(_), false) => "survives",
    };
    record(&Verdict {
        checker: "shuttle",
        progress: "qsbr",
        scenario: scn.name,
        variant: mutant.map_or("baseline", |m| m.name()),
        bound,
        expected,
        observed,
        seconds: start.elapsed().as_secs_f64(),
        detail: cx.clone().unwrap_or_default(),
    });
    if let (None, Some(c)) = (mutant, &cx) {
        panic!("shuttle: {} (pct={pct}) violated a property: {c}", scn.name);
    }
    cx.is_some()
}

#[test]
fn sessions_baseline() {
    for scn in shuttle_session_scenarios() {
        for pct in [false, true] {
            explore(&scn, None, pct, "hold");
        }
    }
}

/// Every session mutant in shuttle's column is found by PCT or random; the others are run and
/// recorded as surviving (ordering bugs shuttle cannot see).
#[test]
fn sessions_kill_matrix() {
    let kills = expected_session_kills("shuttle");
    let mut survivors = Vec::new();
    for m in Mutant::SESSIONS {
        let expected = kills.iter().find(|(k, _)| *k == m).map(|(_, s)| *s);
        let name = expected.unwrap_or("session-insert");
        let scn = shuttle_session_scenarios()
            .into_iter()
            .find(|s| s.name == name)
            .expect("scenario");
        let exp = if expected.is_some() {
            "killed"
        } else {
            "survives"
        };
        let mut killed = false;
        for pct in [true, false] {
            killed |= explore(&scn, Some(m), pct, exp);
        }
        if expected.is_some() && !killed {
            survivors.push(m.name());
        }
    }
    assert!(
        survivors.is_empty(),
        "session mutants shuttle should kill survived: {survivors:?}"
    );
}
