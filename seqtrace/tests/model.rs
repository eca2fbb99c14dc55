//! The stateright model: the baseline satisfies every always-property and reaches every
//! sometimes-property; each mutant breaks the property it is aimed at.

use std::time::Instant;

use bpspec_seqtrace::model::{
    happened_before, merge_key, model, token_before, ModelCfg, SeqModel, ALWAYS, SOMETIMES,
    S_RECEIVE_EARLY, S_UNTRACED_LINK,
};
use bpspec_seqtrace::node::EventKind;
use bpspec_seqtrace::Mutant;
use stateright::{Checker, Model};

struct Run {
    states: usize,
    unique: usize,
    depth: usize,
    secs: f64,
    found: Vec<&'static str>,
}

fn run(cfg: ModelCfg) -> Run {
    run_until(cfg, None)
}

/// [`run`], stopped once `aim` (a property) is discovered, if it is given: BFS then checks
/// only the states up to the depth of the first counterexample to `aim`.
fn run_until(cfg: ModelCfg, aim: Option<&'static str>) -> Run {
    let t = Instant::now();
    let mut b = model(cfg).checker().threads(1);
    if let Some(p) = aim {
        b = b.finish_when(stateright::HasDiscoveries::AnyOf([p].into_iter().collect()));
    }
    let c = b.spawn_bfs().join();
    let secs = t.elapsed().as_secs_f64();
    let found = c.discoveries().keys().copied().collect();
    Run {
        states: c.state_count(),
        unique: c.unique_state_count(),
        depth: c.max_depth(),
        secs,
        found,
    }
}

/// [`run`], its bounds printed, asserting that it violates no always-property (`what` names the
/// run in the message) and reaches every sometimes-property.
fn run_clean(cfg: ModelCfg, what: &str) -> Run {
    let r = run(cfg);
    println!(
        "seq_trace model {cfg:?}: states {} unique {} depth {} time {:.2}s",
        r.states, r.unique, r.depth, r.secs
    );
    for (p, _) in ALWAYS {
        assert!(!r.found.contains(&p), "{what} violates: {p}");
    }
    for s in SOMETIMES {
        assert!(r.found.contains(&s), "never reached: {s}");
    }
    r
}

/// The last state of the path BFS found to `prop`, its events printed per process under
/// `label`.
fn discovery(cfg: ModelCfg, prop: &'static str, label: &str) -> <SeqModel as Model>::State {
    let c = model(cfg).checker().threads(1).spawn_bfs().join();
    let path = c.discovery(prop).expect("reached above");
    let last = path.last_state().clone();
    println!(
        "{label}: {} steps; events per process:",
        path.into_actions().len()
    );
    for (i, a) in last.actor_states.iter().enumerate() {
        let evs: Vec<_> = a
            .events
            .iter()
            .map(|e| (e.kind.name(), e.serial.prev, e.serial.curr))
            .collect();
        println!("  process {i} events in order: {evs:?}");
    }
    last
}

#[test]
fn baseline_holds_and_is_not_vacuous() {
    let cfg = ModelCfg::small();
    let r = run_clean(cfg, "baseline");
    // The finding: the merge rule cannot place receive events safely (docs/seq_trace.md).
    assert!(r.found.contains(&S_RECEIVE_EARLY));
    discovery(cfg, S_RECEIVE_EARLY, "finding");
}

/// A process clears its token (`set_token([])`) and then sends: the message passes causality on
/// but no serial. The merge order still respects `→tok` (every always-property holds), and the
/// model shows a send or print that sorts before an event that happened before it only through
/// that message, so the order cannot be promised for `→all` (docs/seq_trace.md §2).
#[test]
fn clear_then_send_orders_token_chains_only() {
    let cfg = ModelCfg::clear_send();
    let r = run_clean(cfg, "clear-then-send");
    assert!(
        r.found.contains(&S_UNTRACED_LINK),
        "never reached: {S_UNTRACED_LINK}"
    );
    let last = discovery(cfg, S_UNTRACED_LINK, "untraced link");
    let evs: Vec<_> = last
        .actor_states
        .iter()
        .flat_map(|a| a.events.iter())
        .collect();
    let pair = evs.iter().find_map(|e| {
        evs.iter()
            .find(|f| {
                e.tok_epoch == f.tok_epoch
                    && happened_before(e, f)
                    && !token_before(e, f)
                    && f.kind != EventKind::Receive
                    && merge_key(f) <= merge_key(e)
            })
            .map(|f| (e, f))
    });
    let (e, f) = pair.expect("the discovery's last state holds the pair");
    println!(
        "  e = process {} {} {:?} happened before f = process {} {} {:?} through a message without a token",
        e.proc,
        e.kind.name(),
        (e.serial.prev, e.serial.curr),
        f.proc,
        f.kind.name(),
        (f.serial.prev, f.serial.curr)
    );
    // Without the clear-then-send the finding is out of reach: the only message without a token
    // in the base model is sent before its sender has any event.
    assert!(!run(ModelCfg::small()).found.contains(&S_UNTRACED_LINK));
}

#[test]
fn every_mutant_is_caught_by_its_property() {
    for (prop, mutant) in ALWAYS {
        let cfg = ModelCfg {
            mutant,
            ..ModelCfg::small()
        };
        let r = run(cfg);
        let violated: Vec<_> = ALWAYS
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| r.found.contains(p))
            .collect();
        println!(
            "mutant {}: violates {:?} (states {} unique {} depth {} time {:.2}s)",
            mutant.name(),
            violated,
            r.states,
            r.unique,
            r.depth,
            r.secs
        );
        assert!(
            r.found.contains(&prop),
            "mutant {} survives {prop}",
            mutant.name()
        );
    }
    assert_eq!(
        ALWAYS.len(),
        Mutant::ALL.len(),
        "every mutant has a property"
    );
}

/// The larger bound for `make check` (`make check-seqtrace`): baseline and every mutant at
/// BPSPEC_SEQTRACE_PROCS processes (default 4) and BPSPEC_SEQTRACE_HOPS hops (default 2).
#[test]
#[ignore = "larger bound; run by make check-seqtrace"]
fn larger_bound() {
    let env = |k: &str, d: u8| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let base = ModelCfg {
        procs: env("BPSPEC_SEQTRACE_PROCS", 4) as usize,
        hops: env("BPSPEC_SEQTRACE_HOPS", 2),
        ..ModelCfg::small()
    };
    run_clean(base, "baseline");
    // Each mutant's run stops at the first counterexample to the property it is aimed at: the
    // kill is that discovery, and the states past it add nothing to it.
    for (prop, mutant) in ALWAYS {
        let r = run_until(ModelCfg { mutant, ..base }, Some(prop));
        println!(
            "mutant {}: caught {} (states {} unique {} depth {} time {:.2}s)",
            mutant.name(),
            r.found.contains(&prop),
            r.states,
            r.unique,
            r.depth,
            r.secs
        );
        assert!(
            r.found.contains(&prop),
            "mutant {} survives {prop}",
            mutant.name()
        );
    }
}
