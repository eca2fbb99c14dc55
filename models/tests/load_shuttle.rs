//! shuttle (PCT and random) over the load models (`bpspec_models::load`): the loom scenarios
//! with a second scheduler, and a churn of loads, deletes, purges and trace_patterns. Iterations
//! from `BPSPEC_SHUTTLE_ITERS` (make test 2,000, make check 50,000).
#![cfg(shuttle)]

use bpspec_models::harness::scenario_named;
use bpspec_models::harness::shuttle_run::{self, iters};
use bpspec_models::load::{expected_kills, run, shuttle_scenarios, LScenario};
use bpspec_reference::{LoadProtocol, Mutant, Qsbr};

fn explore(
    scn: &LScenario,
    proto: LoadProtocol,
    mutant: Option<Mutant>,
    pct: bool,
    expected: &str,
) -> bool {
    let scn2 = scn.clone();
    let name = format!("{}@{}", scn.name, proto.name());
    shuttle_run::explore_mutant(&name, mutant, pct, expected, iters(), move || {
        run::<Qsbr>(&scn2, proto, mutant)
    })
}

#[test]
fn load_baseline() {
    for proto in LoadProtocol::ALL {
        for scn in shuttle_scenarios() {
            for pct in [false, true] {
                explore(&scn, proto, None, pct, "hold");
            }
        }
    }
}

/// PCT must find every load mutant on its scenario (random is recorded, may miss).
#[test]
fn load_kill_matrix() {
    let mut survivors = Vec::new();
    for proto in LoadProtocol::ALL {
        for (m, name) in expected_kills("shuttle", proto) {
            let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
            if !explore(&scn, proto, Some(m), true, "killed") {
                survivors.push(format!("{m} on {name} under {proto:?}"));
            }
            explore(&scn, proto, Some(m), false, "survives");
        }
    }
    assert!(
        survivors.is_empty(),
        "load mutants shuttle PCT should kill survived: {survivors:?}"
    );
}
