//! The stateright model of the protocol: baselines hold exhaustively, every mutant is killed by
//! the property it is meant to break, and (with `--ignored`, run by `make check`) the exact kill
//! matrix of `bpspec_spec::model::matrix`.

use bpspec_reference::Mutant;
use bpspec_spec::model::matrix::{expected_unreached, kills};
use bpspec_spec::model::props::{LIVENESS, SAFETY};
use bpspec_spec::model::run::{run, RunOptions, RunResult};
use bpspec_spec::model::*;

mod common;
use common::{assert_says, baseline, counterexample};

/// The named model with `mutant` (`None`: its baseline), safety only (no liveness), with or
/// without symmetry reduction over schedulers.
fn safety(name: &str, mutant: Option<SpecMutant>, symmetry: bool) -> RunResult {
    let cfg = model_config(name).unwrap().with_mutant(mutant);
    let opts = RunOptions {
        symmetry,
        liveness: false,
        ..RunOptions::small()
    };
    run(name, cfg, opts)
}

/// 2 schedulers x 2 functions x 1 session, exhaustive (BFS), plus liveness on the full graph.
#[test]
fn s2f2x1_exhaustive_holds() {
    let r = baseline("s2f2x1", RunOptions::small());
    let (ls, _) = r.liveness_graph.expect("liveness ran");
    assert_eq!(
        ls, r.unique,
        "liveness graph covers the same reachable states"
    );
}

#[test]
fn s2f1x2_exhaustive_holds() {
    baseline("s2f1x2", RunOptions::small());
}

/// Symmetry reduction over schedulers keeps the verdicts and shrinks the state space.
#[test]
fn symmetry_keeps_verdicts() {
    let plain = safety("s2f1x2", None, false);
    let sym = safety("s2f1x2", None, true);
    for r in [&sym, &plain] {
        assert!(r.violated.is_empty(), "{:?}", r.violated_names());
        assert_eq!(r.unreached, expected_unreached("s2f1x2"));
    }
    assert!(
        sym.unique < plain.unique,
        "{} !< {}",
        sym.unique,
        plain.unique
    );
    let m = SpecMutant::Engine(Mutant::SkipWaitBeforeFree);
    let symm = safety("s2f1x2", Some(m), true);
    assert!(symm.violated_names().contains(&"no-use-after-free"));
}

/// Every mutant is killed by its designated property (stopping at the first counterexample).
#[test]
fn every_mutant_killed_by_its_property() {
    let mut rows: Vec<SpecMutant> = kills().iter().map(|k| k.mutant).collect();
    rows.sort();
    rows.dedup();
    let mut all = SpecMutant::all();
    all.sort();
    assert_eq!(rows, all, "every mutant has a row");
    for k in kills() {
        let live = k.designated == LIVENESS;
        let opts = RunOptions {
            liveness: live,
            stop_at: if live { None } else { Some(k.designated) },
            ..RunOptions::small()
        };
        let r = run(
            k.model,
            model_config(k.model).unwrap().with_mutant(Some(k.mutant)),
            opts,
        );
        let v = r.violated.iter().find(|v| v.property == k.designated);
        let v =
            v.unwrap_or_else(|| panic!("{} survives {} on {}", k.mutant, k.designated, k.model));
        assert!(v.steps.len() > 2 && v.steps.last().unwrap().starts_with("violated: "));
    }
}

/// The counterexamples speak protocol words (skip-w3-before-consolidate on s2f2x1).
#[test]
fn counterexamples_are_narrated() {
    let text = counterexample("skip-w3-before-consolidate");
    assert_says(
        &text,
        &[
            "1. stager: trace_pattern(session 0, {f0,f1}, true, [local]) begins",
            "stager: flip 0->1",
            "reads slot of f",
            "breakpoint slot is empty",
        ],
    );
}

/// skip-w4-before-free with one session: the hit path alone never stands on the freed node (W3
/// keeps it off, s2f2x1), but a call_time reader walking the slot (a return, a schedule-out)
/// does (t2f1): W4 is needed with one session too.
#[test]
fn finding_w4_needed_with_one_session() {
    let m = Some(SpecMutant::Engine(Mutant::SkipWaitBeforeFree));
    let hits = safety("s2f2x1", m, false);
    assert_eq!(hits.violated_names(), vec!["returns-settled"]);
    let readers = safety("t2f1", m, false);
    let v = readers
        .violated
        .iter()
        .find(|v| v.property == "no-use-after-free")
        .expect("t2f1 kills skip-w4-before-free");
    assert_says(
        &v.steps.join("\n"),
        &[
            "trace_pattern(session 0, {f0}, false, [call_time])",
            "begins a call_time charge of f0",
            "reads slot of f0 -> GenericBp#1 (stale)",
            "call_time charge (walking the slot) stands on GenericBp#1",
        ],
    );
}

/// The call_time reader model holds with every reader walking the slot while call_time is
/// added, removed and added again, and its readers do reach a function through its slot while
/// its instruction is the original one.
#[test]
fn t2f1_call_time_readers_hold() {
    let r = baseline("t2f1", RunOptions::small());
    assert!(!r.unreached.contains(&"charge-walks-unpatched-function"));
}

/// The fresh node stored into an empty slot with a relaxed store (ERTS, the engine): a
/// call_time reader loads the pointer before the node's initialisation is visible to it.
#[test]
fn finding_fresh_slot_store_needs_release() {
    assert_says(
        &counterexample("fresh-slot-store-relaxed"),
        &[
            "new GenericBp#2 for session 0, slot of f0 := it",
            "reads slot of f0 -> GenericBp#2",
            "before its allocation was visible",
        ],
    );
}

/// The exact matrix (every property each mutant breaks). Slow in debug: `make check` runs it.
#[test]
#[ignore]
fn exact_kill_matrix() {
    for k in kills() {
        let r = run(
            k.model,
            model_config(k.model).unwrap().with_mutant(Some(k.mutant)),
            RunOptions {
                threads: 2,
                ..RunOptions::small()
            },
        );
        let mut got = r.violated_names();
        got.sort();
        let mut want = k.breaks.to_vec();
        want.sort();
        assert_eq!(got, want, "{} on {}", k.mutant, k.model);
        assert!(want.iter().all(|p| SAFETY.contains(p) || *p == LIVENESS));
    }
}

/// `props::reachable` leaves out only vacuous properties: with every property registered
/// (`BpModel::with_every_property`), no left-out `always` property is violated and no left-out
/// `sometimes` property has an example, on every kill-matrix row and every baseline of the
/// default plan below a million states (BFS, one thread). Slow in debug: `make check` runs it.
#[test]
#[ignore]
fn left_out_properties_are_vacuous() {
    use bpspec_spec::model::props::{reachable, REACHABILITY};
    use stateright::{Checker, Model};
    let big = [
        "s3f2x2", "s4f1x1", "c3f1", "c3f1d2", "t2f1pc2", "t2f1x2r", "t2f1x2", "t2f1p",
    ];
    let mut runs: Vec<(&str, Option<SpecMutant>)> = run::default_plan()
        .into_iter()
        .filter(|(n, _, _)| !big.contains(n))
        .map(|(n, _, _)| (n, None))
        .collect();
    runs.extend(kills().into_iter().map(|k| (k.model, Some(k.mutant))));
    for (name, mutant) in runs {
        let cfg = model_config(name).unwrap().with_mutant(mutant);
        let (safety, reach) = reachable(&cfg);
        let c = BpModel::with_every_property(cfg)
            .checker()
            .spawn_bfs()
            .join();
        for (i, p) in SAFETY.iter().enumerate() {
            if safety & (1 << i) == 0 {
                assert!(c.discovery(p).is_none(), "{name} {mutant:?}: {p} violated");
            }
        }
        for (i, p) in REACHABILITY.iter().enumerate() {
            if reach & (1 << i) == 0 {
                assert!(c.discovery(p).is_none(), "{name} {mutant:?}: {p} reached");
            }
        }
    }
}

/// The fused safety property (`BpModel::fused`, the baseline runs of `run::run`) is violated
/// when a member is, and `props::failing` names, on its counterexample's last state, only
/// properties the kill matrix has the mutant break; a baseline's fused run holds.
#[test]
fn fused_safety_names_its_members() {
    use bpspec_spec::model::props::{failing, FUSED_SAFETY};
    use stateright::{Checker, Model};
    let mut seen = std::collections::BTreeSet::new();
    for k in kills() {
        // One row per model (the first), and a safety kill.
        if !seen.insert(k.model) || k.designated == LIVENESS {
            continue;
        }
        let m = BpModel::fused(model_config(k.model).unwrap().with_mutant(Some(k.mutant)));
        let c = m.clone().checker().spawn_bfs().join();
        let path = c
            .discovery(FUSED_SAFETY)
            .unwrap_or_else(|| panic!("{} on {}: fused property holds", k.mutant, k.model));
        let names = failing(&m, path.last_state());
        assert!(!names.is_empty(), "{} on {}", k.mutant, k.model);
        assert!(
            names.iter().all(|p| k.breaks.contains(p)),
            "{} on {}: {names:?} not within {:?}",
            k.mutant,
            k.model,
            k.breaks
        );
    }
    let r = run(
        "s2f1x2",
        model_config("s2f1x2").unwrap(),
        RunOptions::small(),
    );
    assert!(r.violated.is_empty() && r.unreached == expected_unreached("s2f1x2"));
}

/// Export entries (global trace, `g2f1`): the same protocol on the entry's slot holds, and it
/// is the same state space as the code area's `s2f1x2` (same script with `local`): the model
/// treats an export entry as one more slot, whose only difference (no frames, so no call_time
/// readers) the configuration enforces.
#[test]
fn g2f1_export_entries_hold() {
    let g = baseline("g2f1", RunOptions::small());
    let s = safety("s2f1x2", None, false);
    assert_eq!((g.states, g.unique), (s.states, s.unique));
    let bad = Config {
        charges: 1,
        ..model_config("g2f1").unwrap()
    };
    assert!(
        bad.validate().is_err(),
        "call_time readers on an export entry"
    );
}

/// The tracer cells (`m2f1`: meta tracer, `st2f1`: session tracer) hold while the stager
/// replaces or removes the cell and hits send through it, and a hit does hold a cell the
/// stager has already unpublished (`tracer-replaced-while-held`).
#[test]
fn tracer_models_hold() {
    for m in ["m2f1", "st2f1"] {
        let r = baseline(m, RunOptions::small());
        assert!(!r.unreached.contains(&"tracer-replaced-while-held"), "{m}");
    }
}

/// meta-free-without-wait: the replaced meta tracer cell is freed right after the swap while a
/// hit that loaded it is about to send through it.
#[test]
fn meta_free_without_wait_uses_a_freed_cell() {
    let text = counterexample("meta-free-without-wait");
    assert_says(&text, &["reads the tracer pointer -> tracer cell #1"]);
    assert_says(
        &text,
        &["stager: free tracer cell #1", "which the stager has freed"],
    );
}

/// The batch (`StagerOp::Batch`, docs/fewer-waits.md): several patterns staged in one step and
/// finished by one sequence, under `batch-elide-idle` (W3 and W4 left out when consolidate
/// unlinks nothing) and `batch`, with every reader class of the model: the hit path (`b2f2`,
/// `b2f2b`, two sessions `b2f1x2`), the call_time readers walking the slot (`bt2f1`), the
/// collection (`bc2f1`) and the meta tracer (`bm2f1`). All hold exhaustively, liveness too.
#[test]
fn batch_models_hold() {
    for name in ["b2f2", "b2f2b", "bt2f1", "bc2f1", "b2f1x2", "bm2f1"] {
        baseline(name, RunOptions::small());
    }
}

/// The waits of each stager op of the named model, read from the narration of a run in which
/// only the stager moves (schedulers fall asleep so that every wait completes).
fn batch_waits(name: &str) -> Vec<Vec<String>> {
    let cfg = model_config(name).unwrap();
    let m = BpModel::new(cfg.clone());
    let mut s = State::initial(&cfg);
    let mut waits: Vec<Vec<String>> = vec![Vec::new()];
    let mut steps = 0;
    while !s.done(&cfg) {
        steps += 1;
        assert!(steps < 1000, "the stager finishes alone");
        // Only the stager moves: every scheduler counts for a wait once it slept.
        let a = if cfg.is_enabled(&s, Action::Stager) {
            Action::Stager
        } else {
            let i = s
                .scheds
                .iter()
                .position(|x| x.mode != state::Mode::Asleep)
                .expect("someone holds the wait");
            Action::Sleep(i as u8)
        };
        let (next, lines) = m.narrate(&s, a);
        for l in lines {
            if let Some(w) = l
                .strip_prefix("stager: ")
                .and_then(|r| r.strip_suffix(" begins (wait for thread progress)"))
            {
                waits.last_mut().unwrap().push(w.to_string());
            }
            if l.ends_with(" returns") {
                waits.push(Vec::new());
            }
        }
        s = next;
    }
    waits.pop();
    waits
}

/// Under batch-elide-idle the idle batches of b2f2 leave W3 and W4 out and the unlinking one
/// keeps them (a removal has no W0); under batch (b2f2b) every batch keeps them.
#[test]
fn batch_elide_idle_leaves_out_w3_w4_only_when_idle() {
    assert_eq!(
        batch_waits("b2f2b"),
        vec![
            vec!["W0", "W1", "W2", "W3", "W4"],
            vec!["W0", "W1", "W2", "W3", "W4"],
            vec!["W1", "W2", "W3", "W4"],
        ]
    );
    assert_eq!(
        batch_waits("b2f2"),
        vec![
            vec!["W0", "W1", "W2"],
            vec!["W0", "W1", "W2"],
            vec!["W1", "W2", "W3", "W4"],
        ]
    );
}

/// Pipelining (`Config::pipeline`, docs/fewer-waits.md §6): no W4, the unlinked nodes freed
/// after the next wait. The models hold (with `returns-settled` in its weak form for slots and
/// links, proof P7); freeing at return instead (skip-w4-before-free) is a use after free for a
/// call_time reader walking the slot (`pt2f1`) and for a hit standing on an unlinked head
/// (`p2f1x2h`), and, as in ERTS's `s2f2x1`, harmless for the hit path alone with one session
/// (`p2f2`), where W3 keeps every hit off the unlinked node.
#[test]
fn pipeline_models_hold_and_need_the_next_wait() {
    for name in ["p2f2", "pt2f1", "p2f1x2h"] {
        baseline(name, RunOptions::small());
    }
    let m = Some(SpecMutant::Engine(Mutant::SkipWaitBeforeFree));
    let hits = safety("p2f2", m, false);
    assert!(hits.violated.is_empty(), "{:?}", hits.violated_names());
    let v = safety("pt2f1", m, false);
    let text = v.violated[0].steps.join("\n");
    assert_eq!(v.violated_names(), vec!["no-use-after-free"]);
    assert!(text.contains("stager: free GenericBp#1"), "{text}");
    assert!(!text.contains("(pipelined)"), "{text}");
}

/// The fewest actions from the initial state of `m` to a state where its `always` property
/// `name` fails: plain BFS by layers over the model's own successors and conditions, apart
/// from stateright (`None`: it holds on every reachable state).
fn min_violation_depth(m: &BpModel, name: &str) -> Option<usize> {
    use stateright::Model;
    let props = m.properties();
    let p = props.iter().find(|p| p.name == name).expect("registered");
    let mut seen = std::collections::HashSet::new();
    let mut layer = m.init_states();
    let mut actions = Vec::new();
    for depth in 0..10_000 {
        if layer.is_empty() {
            return None;
        }
        if layer.iter().any(|s| !(p.condition)(m, s)) {
            return Some(depth);
        }
        let mut next = Vec::new();
        for s in &layer {
            seen.insert(*s);
            m.actions(s, &mut actions);
            for a in actions.drain(..) {
                if let Some(n) = m.next_state(s, a) {
                    if seen.insert(n) {
                        next.push(n);
                    }
                }
            }
        }
        layer = next;
    }
    panic!("{name}: no fixed point within 10,000 layers");
}

/// A BFS run reports each violated property's first violation (`BpModel::first_discovery`),
/// so the counterexample of a kill row (`run`, as `bpspec check --mutants` runs it: to the end,
/// and as the kill tests do: stopping at the designated property) has the fewest actions of
/// any path to a violation, computed apart by [`min_violation_depth`]. Without the latch
/// stateright reports the last violating state it pops (bfs.rs:246-262): longer paths here.
#[test]
fn bfs_counterexamples_are_shortest() {
    for (model, mutant) in [
        ("c2f1", "collect-without-flip"),
        ("s2f1x2h", "link-before-install-wait"),
        ("s2f2x1", "skip-w0-before-install"),
    ] {
        let k = kills()
            .into_iter()
            .find(|k| k.model == model && k.mutant.name() == mutant)
            .expect("a kill row");
        let cfg = model_config(model).unwrap().with_mutant(Some(k.mutant));
        let want = min_violation_depth(&BpModel::new(cfg.clone()), k.designated)
            .unwrap_or_else(|| panic!("{mutant} survives {} on {model}", k.designated));
        for stop_at in [None, Some(k.designated)] {
            let opts = RunOptions {
                liveness: false,
                stop_at,
                ..RunOptions::small()
            };
            let r = run(model, cfg.clone(), opts);
            let v = r.violated.iter().find(|v| v.property == k.designated);
            let v = v.unwrap_or_else(|| panic!("{mutant} survives on {model}"));
            assert_eq!(
                v.depth, want,
                "{model} {mutant} (stop_at {stop_at:?}): a counterexample of {} actions to {}, \
                 the shortest has {want}",
                v.depth, k.designated
            );
        }
    }
}
