//! Refinement in `cargo test`: deterministic engine histories (one OS thread driving the stager
//! and the schedulers in a fixed order) are accepted by the spec; broken ones are rejected at
//! the step that breaks the protocol, and the rejection names it. The shuttle runs (thousands of
//! random interleavings) are in models/tests/refine.rs.

use bpspec_reference::history::Event;
use bpspec_reference::TraceSpec;
use bpspec_reference::{
    Engine, EngineConfig, FlagSet, Mfa, Mutant, Pattern, PatternOp, Proc, Process, Qsbr, Scheduler,
    TraceFlags,
};
use bpspec_spec::model::refine::check;
use std::sync::Arc;

/// Histories are recorded only in checked builds (debug assertions, loom, shuttle): elsewhere
/// `History::start` records nothing and the mutants do not exist. A test that needs a history
/// calls this first and, outside a checked build, prints why it skips and passes.
fn checked(test: &str) -> bool {
    if !bpspec_reference::sync::CHECKED {
        eprintln!("{test}: skipped: histories and mutants exist only in checked builds (debug assertions)");
    }
    bpspec_reference::sync::CHECKED
}

const LOCAL: TraceFlags = TraceFlags::LOCAL;
const COUNT: TraceFlags = TraceFlags::CALL_COUNT;

/// One thread: schedulers sleep while the stager runs (so its waits pass), wake to call.
fn history(mutant: Option<Mutant>) -> Vec<Event> {
    let e = Arc::new(Engine::<Qsbr>::new(
        EngineConfig::simple(2, 2).with_mutant(mutant),
    ));
    e.history.start();
    let p = Process::call_traced_in(7, 0);
    let mut s: Vec<Scheduler> = (0..2).map(|i| Scheduler::start(e.clone(), i)).collect();
    let f0 = Pattern::exact(&Mfa::new("m", "f0", 0));
    let calls = |s: &mut Vec<Scheduler>| {
        for (i, x) in s.iter_mut().enumerate() {
            x.call(i % 2, &p);
            x.call((i + 1) % 2, &p);
            x.progress();
        }
    };
    calls(&mut s);
    for (pat, op, fl) in [
        (Pattern::all(), PatternOp::True, LOCAL),
        (f0.clone(), PatternOp::True, COUNT),
        (f0.clone(), PatternOp::Pause, COUNT),
        (Pattern::all(), PatternOp::False, LOCAL),
        (f0, PatternOp::False, COUNT),
    ] {
        s.iter_mut().for_each(|x| x.sleep());
        e.trace_pattern(&pat, op, &TraceSpec::from(fl)).unwrap();
        s.iter_mut().for_each(|x| x.wake());
        calls(&mut s);
    }
    e.history.take()
}

/// The indices of the events of `h` that match `is`.
fn positions(h: &[Event], is: impl Fn(&Event) -> bool) -> Vec<usize> {
    (0..h.len()).filter(|&i| is(&h[i])).collect()
}

#[test]
fn engine_history_is_accepted() {
    if !checked("engine_history_is_accepted") {
        return;
    }
    let h = history(None);
    assert!(h.len() > 100, "history has {} events", h.len());
    assert!(h.iter().any(|e| matches!(e, Event::Half { .. })));
    assert_eq!(check(&h, 2, 2).map_err(|r| r.to_string()), Ok(h.len()));
}

#[test]
fn history_without_w0_is_rejected_at_install() {
    if !checked("history_without_w0_is_rejected_at_install") {
        return;
    }
    let mut h = history(None);
    let w = h.iter().position(|e| *e == Event::WaitBegin).unwrap();
    assert_eq!(h[w + 1], Event::WaitEnd);
    h.drain(w..w + 2);
    let r = check(&h, 2, 2).unwrap_err();
    assert_eq!(r.index, w, "{r}");
    assert!(
        r.to_string().contains(
            "(stager: install) is not allowed by the spec: install, but the spec's stager is at W0"
        ),
        "{r}"
    );
}

#[test]
fn uninstall_before_commit_engine_is_rejected() {
    if !checked("uninstall_before_commit_engine_is_rejected") {
        return;
    }
    let h = history(Some(Mutant::UninstallBeforeCommit));
    let r = check(&h, 2, 2).unwrap_err();
    assert_eq!(h[r.index], Event::Uninstall, "{r}");
    assert!(r.reason.contains("at Commit"), "{r}");
}

#[test]
fn skip_w2_engine_is_rejected() {
    if !checked("skip_w2_engine_is_rejected") {
        return;
    }
    let h = history(Some(Mutant::SkipWaitBeforeUninstall));
    let r = check(&h, 2, 2).unwrap_err();
    assert!(
        r.reason
            .contains("uninstall, but the spec's stager is at W2"),
        "{r}"
    );
}

#[test]
fn a_read_the_spec_cannot_explain_is_rejected() {
    if !checked("a_read_the_spec_cannot_explain_is_rejected") {
        return;
    }
    let mut h = history(None);
    // Make a scheduler read an index value that was never written at that point: after the
    // first flip, claim a read of the old index once every view is fresh again.
    let i = h
        .iter()
        .rposition(|e| matches!(e, Event::Ix { .. }))
        .unwrap();
    let Event::Ix { sched, ix } = h[i] else {
        unreachable!()
    };
    h[i] = Event::Ix { sched, ix: ix ^ 1 };
    let r = check(&h, 2, 2).unwrap_err();
    assert_eq!(r.index, i, "{r}");
    assert!(
        r.reason
            .contains(&format!("scheduler {sched} cannot see {}", ix ^ 1)),
        "{r}"
    );
}

#[test]
fn a_wait_that_completes_too_early_is_rejected() {
    if !checked("a_wait_that_completes_too_early_is_rejected") {
        return;
    }
    let mut h = history(None);
    // Drop the sleeps before the second trace_pattern: the schedulers are then awake and have
    // passed no progress point when its first wait completes.
    let tp = positions(&h, |e| matches!(e, Event::TracePattern { .. }));
    let (a, b) = (tp[1] - 2, tp[1]);
    assert!(matches!(h[a], Event::Sleep(_)) && matches!(h[a + 1], Event::Sleep(_)));
    h.drain(a..b);
    // ... and the wakes after the first one.
    let w = h[a..]
        .iter()
        .position(|e| matches!(e, Event::Wake(_)))
        .unwrap()
        + a;
    h.drain(w..w + 2);
    let r = check(&h, 2, 2).unwrap_err();
    assert_eq!(h[r.index], Event::WaitEnd, "{r}");
    assert!(
        r.reason
            .contains("before scheduler 0 and scheduler 1 passed a progress point"),
        "{r}"
    );
}

/// Each engine mutant that changes the stager's step sequence is rejected at the step where the
/// sequence goes wrong; skip-consolidate-copy where a scheduler observes its consequence.
#[test]
fn engine_mutants_are_rejected_where_the_sequence_breaks() {
    if !checked("engine_mutants_are_rejected_where_the_sequence_breaks") {
        return;
    }
    for (m, want) in [
        (
            Mutant::SkipWaitBeforeInstall,
            "install, but the spec's stager is at W0",
        ),
        (
            Mutant::SkipWaitBeforeCommit,
            "flip, but the spec's stager is at W1",
        ),
        (
            Mutant::SkipWaitBeforeUninstall,
            "uninstall, but the spec's stager is at W2",
        ),
        (
            Mutant::SkipWaitBeforeConsolidate,
            "consolidate, but the spec's stager is at W3",
        ),
        (
            Mutant::SkipWaitBeforeFree,
            "free, but the spec's stager is at W4",
        ),
        (
            Mutant::UninstallBeforeCommit,
            "uninstall, but the spec's stager is at Commit",
        ),
    ] {
        let r = check(&history(Some(m)), 2, 2).unwrap_err();
        assert!(r.reason.contains(want), "{m}: {r}");
    }
    // skip-consolidate-copy keeps the step sequence but later decisions differ: the engine keeps
    // f0 patched where the spec restored it, and a scheduler's read shows it.
    let r = check(&history(Some(Mutant::SkipConsolidateCopy)), 2, 2).unwrap_err();
    assert!(
        r.reason
            .contains("cannot see breakpoint: the current value is original"),
        "{r}"
    );
}

/// call_time: a process calls f0 then f1 (the second hit charges f0 through get_time_break),
/// is scheduled out (charges f1), call_time on f1 is removed, and it returns twice. Every read
/// of the active index its scheduler makes, also the call_time readers' (`TimemIx`), is in the
/// history and checked against the spec's view of that scheduler.
fn call_time_history() -> Vec<Event> {
    let e = Arc::new(Engine::<Qsbr>::new(EngineConfig::simple(2, 1)));
    e.history.start();
    let mut p = Proc::new(Process::call_traced_in(7, 0));
    let mut s = Scheduler::start(e.clone(), 0);
    let f = |i: usize| Pattern::exact(&Mfa::new("m", &format!("f{i}"), 0));
    let time = FlagSet::CALL_TIME;
    s.sleep();
    e.trace_pattern(&f(0), PatternOp::True, &TraceSpec::from(time))
        .unwrap();
    e.trace_pattern(&f(1), PatternOp::True, &TraceSpec::from(time))
        .unwrap();
    s.wake();
    s.schedule_in(&mut p);
    s.call_proc(0, &mut p);
    s.call_proc(1, &mut p);
    s.schedule_out(&mut p);
    s.sleep();
    e.trace_pattern(&f(1), PatternOp::False, &TraceSpec::from(time))
        .unwrap();
    s.wake();
    s.schedule_in(&mut p);
    s.ret(&mut p);
    s.ret(&mut p);
    s.schedule_out(&mut p);
    s.sleep();
    e.history.take()
}

#[test]
fn call_time_history_checks_every_index_read() {
    if !checked("call_time_history_checks_every_index_read") {
        return;
    }
    let h = call_time_history();
    let timem = h
        .iter()
        .filter(|e| matches!(e, Event::TimemIx { .. }))
        .count();
    assert!(timem >= 2, "{timem} call_time index reads in {h:?}");
    assert_eq!(check(&h, 1, 2).map_err(|r| r.to_string()), Ok(h.len()));
}

/// A call_time reader's index read that the scheduler cannot see is rejected where it happens.
#[test]
fn impossible_call_time_index_read_is_rejected() {
    if !checked("impossible_call_time_index_read_is_rejected") {
        return;
    }
    let mut h = call_time_history();
    let i = h
        .iter()
        .position(|e| matches!(e, Event::TimemIx { .. }))
        .expect("a call_time index read");
    let Event::TimemIx { sched, ix } = h[i] else {
        unreachable!()
    };
    h[i] = Event::TimemIx { sched, ix: ix ^ 1 };
    let r = check(&h, 1, 2).unwrap_err();
    assert_eq!(r.index, i, "{r}");
    assert!(r.to_string().contains("cannot see the active index"), "{r}");
}

/// The call_time readers' slot and link loads (`TimemSlot`, `TimemNext`) are recorded and
/// checked: the history above is accepted with them, and a reader that loads f1's node after
/// the removal freed it (a value the spec's views no longer hold) is rejected at that load.
#[test]
fn call_time_slot_loads_are_checked() {
    if !checked("call_time_slot_loads_are_checked") {
        return;
    }
    let mut h = call_time_history();
    let slots = positions(&h, |e| matches!(e, Event::TimemSlot { .. }));
    assert!(
        slots.len() >= 3,
        "{} call_time slot loads in {h:?}",
        slots.len()
    );
    let node = h
        .iter()
        .find_map(|e| match *e {
            Event::TimemSlot {
                func: 1,
                node: Some(g),
                ..
            } => Some(g),
            _ => None,
        })
        .expect("a slot load of f1 while it had a node");
    let i = *slots
        .iter()
        .rev()
        .find(|&&i| {
            matches!(
                h[i],
                Event::TimemSlot {
                    func: 1,
                    node: None,
                    ..
                }
            )
        })
        .expect("a slot load of f1 after the removal");
    let Event::TimemSlot { sched, func, .. } = h[i] else {
        unreachable!()
    };
    h[i] = Event::TimemSlot {
        sched,
        func,
        node: Some(node),
    };
    let r = check(&h, 1, 2).unwrap_err();
    assert_eq!(r.index, i, "{r}");
    assert!(r.to_string().contains("has freed"), "{r}");
}
