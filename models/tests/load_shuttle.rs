//! shuttle (PCT and random) over the load models (`bpspec_models::load`): the loom scenarios
//! with a second scheduler, and a churn of loads, deletes, purges and trace_patterns. Iterations
//! from `BPSPEC_SHUTTLE_ITERS` (make test 2,000, make check 50,000, PCT at most 20,000).
#![cfg(shuttle)]

use bpspec_models::harness::shuttle_run::{assert_baselines_under, explore_seeded, explore_under};
use bpspec_models::harness::{assert_all_killed_under, scenario_named};
use bpspec_models::load::{expected_kills, runs_in_shuttle, shuttle_scenarios, LScenario};
use bpspec_reference::{LoadProtocol, Mutant, Qsbr};

fn run(scn: &LScenario, proto: LoadProtocol, mutant: Option<Mutant>) {
    bpspec_models::load::run::<Qsbr>(scn, proto, mutant)
}

/// The scenarios shuttle runs under `Blocking` (`load::runs_in_shuttle`): not the `-fold` ones
/// (`Blocking` has no LW1, so the fold leaves its sequence as the scenario without `-fold` runs
/// it) and not the `-3ix` twins (the three-index scheme has no step under the block).
fn under_blocking() -> Vec<LScenario> {
    let mut out = shuttle_scenarios();
    out.retain(|s| runs_in_shuttle(s.name, s.fold_lw1, LoadProtocol::Blocking));
    out
}

#[test]
fn load_baseline() {
    assert_baselines_under(&[LoadProtocol::Blocking], under_blocking, run);
    assert_baselines_under(&[LoadProtocol::NonBlocking], shuttle_scenarios, run);
}

/// PCT must find every load mutant on its scenario (random is recorded, may miss).
#[test]
fn load_kill_matrix() {
    let kills = |proto| expected_kills("shuttle", proto);
    assert_all_killed_under(
        "load",
        "shuttle PCT",
        &LoadProtocol::ALL,
        kills,
        |m, name, proto| {
            let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
            let by_pct = explore_under(&scn, proto, Some(m), true, "killed", run);
            explore_under(&scn, proto, Some(m), false, "survives", run);
            by_pct
        },
    );
}

/// A failed execution ends at once (`shuttle_run::config`). From seed 0x627252d82563 the random
/// scheduler's seventh execution of `old-code-call-time-fold` under NonBlocking with
/// `load-clear-old-at-once` fails in one scheduler task; with shuttle's default the other tasks
/// then went on on the broken state and a second task panicked while the first unwound, and the
/// test process aborted (found while varying the seed: with shuttle's default, this seed ended the
/// process and seeds 1 to 40 did not). The test reproduces only while the schedule does (this shuttle, this scenario, this
/// engine); it then passes without asserting much, and its kill is the harness's kill rows' job.
#[test]
fn a_failed_execution_stops_at_once() {
    let scn = scenario_named(shuttle_scenarios(), "old-code-call-time-fold", |s| s.name);
    let model = move || {
        run(
            &scn,
            LoadProtocol::NonBlocking,
            Some(Mutant::LoadClearOldAtOnce),
        )
    };
    let (cx, _, bound) = explore_seeded(
        "failed-execution-stops",
        false,
        2000,
        0x6272_52d8_2563,
        model,
    );
    assert!(cx.is_some(), "the mutant survived {bound}");
}

/// Each twin of a load scenario (`-3ix`: ERTS's three code indices; `-pipeline`: the pipeline
/// wait plan; `-fold`: LW1 folded into W1) makes decisions of its own, so its rows check
/// something its base's do not, except where the switch has no step: under `Blocking` the
/// three-index scheme's waits do not run (`Engine::code_wait`, `Engine::purge_grace`: only
/// `NonBlocking`), so the `-3ix` twins make their base's decisions there (docs/mutants.md,
/// "What the iterations explore"). Compared by the digest of every decision of 300 PCT
/// iterations from the same seed (`shuttle_run::explored`). A twin that stops differing (its
/// switch no longer reached), or a `-3ix` twin under `Blocking` that starts to, fails it.
#[test]
fn twins_make_decisions_of_their_own() {
    use bpspec_models::harness::shuttle_run::explored;
    use bpspec_models::load::{PIPELINE_TWINS, THREE_TWINS};
    let digest = |name: &str, proto: LoadProtocol| {
        let scn = scenario_named(shuttle_scenarios(), name, |s| s.name);
        explored(name, true, 300, move || run(&scn, proto, None)).run
    };
    let folds: Vec<(&str, String)> = shuttle_scenarios()
        .iter()
        .filter(|s| s.fold_lw1)
        .map(|s| {
            (
                s.name.strip_suffix("-fold").expect("a -fold name"),
                s.name.to_string(),
            )
        })
        .collect();
    let mut pairs: Vec<(&str, String, &[LoadProtocol])> = Vec::new();
    for &(base, twin) in THREE_TWINS.iter().chain(PIPELINE_TWINS) {
        pairs.push((base, twin.to_string(), &LoadProtocol::ALL));
    }
    for (base, twin) in folds {
        pairs.push((base, twin, &[LoadProtocol::NonBlocking]));
    }
    let mut wrong = Vec::new();
    for (base, twin, protos) in &pairs {
        for &proto in *protos {
            let same = digest(base, proto) == digest(twin, proto);
            let no_step = proto == LoadProtocol::Blocking && twin.ends_with("-3ix");
            if same != no_step {
                wrong.push(format!(
                    "{twin} under {proto:?}: {} its base {base}",
                    if same {
                        "the same decisions as"
                    } else {
                        "decisions other than"
                    }
                ));
            }
        }
    }
    assert!(pairs.len() >= 12, "too few twins: {}", pairs.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The scenarios shuttle runs under both protocols make decisions of their own under each: no
/// `Blocking` row runs the `NonBlocking` row's executions again. Even with no load in the
/// scenario (`trace-pattern-off-under-hits`, `global-off-under-hits`) the schedulers differ:
/// under `Blocking` each takes the shared side of the world lock at its progress points
/// (`calls.rs`, `enter`). Digests of every decision of 300 PCT iterations from one seed.
#[test]
fn protocols_make_decisions_of_their_own() {
    use bpspec_models::harness::shuttle_run::explored;
    let digest = |scn: &LScenario, proto: LoadProtocol| {
        let s = scn.clone();
        let label = format!("{}@{}", scn.name, proto.name());
        explored(&label, true, 300, move || run(&s, proto, None)).run
    };
    let both = under_blocking();
    let same: Vec<&str> = both
        .iter()
        .filter(|s| digest(s, LoadProtocol::Blocking) == digest(s, LoadProtocol::NonBlocking))
        .map(|s| s.name)
        .collect();
    assert!(both.len() >= 20, "only {} scenarios", both.len());
    assert!(
        same.is_empty(),
        "the same decisions under both protocols: {same:?}"
    );
}
