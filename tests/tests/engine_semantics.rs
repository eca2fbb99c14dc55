//! Sequential behaviour of the engine against what OTP's trace_call_count_SUITE asserts, plus the
//! at-rest invariant after every operation and the number of thread-progress waits.

use bpspec_reference::*;
use std::sync::Arc;

fn engine(n: usize) -> Arc<Engine> {
    Arc::new(Engine::new(EngineConfig::simple(n, 1)))
}

const COUNT: TraceFlags = TraceFlags::CALL_COUNT;
const LOCAL: TraceFlags = TraceFlags::LOCAL;

fn mfa(i: usize) -> Mfa {
    Mfa::new("m", &format!("f{i}"), 0)
}

fn tp(e: &Engine, pat: &str, op: PatternOp, fl: TraceFlags) -> usize {
    let n = e
        .trace_pattern(&Pattern::parse(pat).unwrap(), op, &TraceSpec::from(fl))
        .unwrap();
    e.check_at_rest().unwrap();
    n
}

/// Run `f` with the scheduler awake; it sleeps again afterwards, so the stager (this same
/// thread) can complete its waits, as ERTS suspends the process that calls trace_pattern.
fn awake(s: &mut Scheduler, f: impl FnOnce(&mut Scheduler)) {
    s.wake();
    f(s);
    s.sleep();
}

fn sched(e: &Arc<Engine>) -> Scheduler {
    let mut s = Scheduler::start(e.clone(), 0);
    s.sleep();
    s
}

fn count(e: &Engine, i: usize) -> InfoValue {
    e.trace_info(0, &mfa(i), InfoItem::CallCount)
}

#[test]
fn call_count_basic_counts_every_call_without_process_flags() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::call_count_basic_counts_every_call_without_process_flags",
    );
    let e = engine(3);
    let mut s = sched(&e);
    assert_eq!(tp(&e, "m:f1/0", PatternOp::True, COUNT), 1);
    assert_eq!(count(&e, 1), InfoValue::Count(0));
    let p = Process::new(7); // not call-traced: call_count needs no process flag
    awake(&mut s, |s| {
        for _ in 0..13 {
            assert_eq!(s.call(1, &p), code::ORIG_INSTR_BASE + 1);
            s.call(0, &p);
        }
    });
    assert_eq!(count(&e, 1), InfoValue::Count(13));
    assert_eq!(count(&e, 0), InfoValue::False);
    assert_eq!(
        e.trace_info(0, &Mfa::new("m", "nope", 0), InfoItem::CallCount),
        InfoValue::Undefined
    );
}

#[test]
fn pause_keeps_restart_resets_true_resets_false_removes() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::pause_keeps_restart_resets_true_resets_false_removes",
    );
    let e = engine(2);
    let mut s = sched(&e);
    let p = Process::new(1);
    tp(&e, "m:f0/0", PatternOp::True, COUNT);
    awake(&mut s, |s| (0..5).for_each(|_| _ = s.call(0, &p)));
    tp(&e, "m:f0/0", PatternOp::Pause, COUNT);
    awake(&mut s, |s| (0..5).for_each(|_| _ = s.call(0, &p)));
    assert_eq!(
        count(&e, 0),
        InfoValue::Count(5),
        "a paused count is frozen"
    );
    assert!(
        e.is_patched(0),
        "a paused counter keeps the breakpoint installed"
    );
    tp(&e, "m:f0/0", PatternOp::Restart, COUNT);
    assert_eq!(count(&e, 0), InfoValue::Count(0), "restart resets");
    awake(&mut s, |s| (0..2).for_each(|_| _ = s.call(0, &p)));
    assert_eq!(count(&e, 0), InfoValue::Count(2));
    tp(&e, "m:f0/0", PatternOp::True, COUNT);
    assert_eq!(
        count(&e, 0),
        InfoValue::Count(0),
        "true on a traced function restarts the counter"
    );
    tp(&e, "m:f0/0", PatternOp::False, COUNT);
    assert_eq!(count(&e, 0), InfoValue::False);
    assert!(!e.is_patched(0), "false restores the original instruction");
    awake(&mut s, |s| _ = s.call(0, &p));
    assert!(!s.hits.last().unwrap().patched);
}

#[test]
fn pause_or_restart_without_breakpoint_does_nothing() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::pause_or_restart_without_breakpoint_does_nothing",
    );
    let e = engine(2);
    assert_eq!(
        tp(&e, "m:f0/0", PatternOp::Pause, COUNT),
        1,
        "matched count is still returned"
    );
    assert_eq!(count(&e, 0), InfoValue::False);
    assert_eq!(tp(&e, "m:f0/0", PatternOp::Restart, COUNT), 1);
    assert_eq!(count(&e, 0), InfoValue::False);
    assert!(!e.is_patched(0));
}

#[test]
fn quirk_pause_on_node_without_counter_creates_an_active_counter() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::quirk_pause_on_node_without_counter_creates_an_active_counter",
    );
    // beam_bp.c falls through to "initialize new" (docs/deviations.md): we keep the quirk.
    let e = engine(1);
    let mut s = sched(&e);
    tp(&e, "m:f0/0", PatternOp::True, LOCAL);
    tp(&e, "m:f0/0", PatternOp::Pause, COUNT);
    assert_eq!(count(&e, 0), InfoValue::Count(0));
    awake(&mut s, |s| _ = s.call(0, &Process::new(3)));
    assert_eq!(
        count(&e, 0),
        InfoValue::Count(1),
        "the new counter is active, not paused"
    );
}

#[test]
fn wildcard_patterns_return_the_same_number_on_and_off() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::wildcard_patterns_return_the_same_number_on_and_off",
    );
    let e = Arc::new(Engine::<Qsbr>::new(EngineConfig {
        functions: vec![
            Mfa::new("a", "x", 0),
            Mfa::new("a", "x", 1),
            Mfa::new("a", "y", 0),
            Mfa::new("b", "x", 0),
        ],
        schedulers: 1,
        mutant: None,
    }));
    assert_eq!(tp(&e, "{a, x, '_'}", PatternOp::True, COUNT), 2);
    assert_eq!(tp(&e, "{a, '_', '_'}", PatternOp::True, COUNT), 3);
    assert_eq!(tp(&e, "{'_', '_', '_'}", PatternOp::True, COUNT), 4);
    assert_eq!(tp(&e, "{'_', '_', '_'}", PatternOp::False, COUNT), 4);
    assert_eq!(tp(&e, "{c, '_', '_'}", PatternOp::True, COUNT), 0);
}

#[test]
fn local_trace_needs_the_call_flag_and_call_count_does_not() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::local_trace_needs_the_call_flag_and_call_count_does_not",
    );
    let e = engine(1);
    let mut s = sched(&e);
    tp(
        &e,
        "m:f0/0",
        PatternOp::True,
        TraceFlags {
            local: true,
            call_count: true,
        },
    );
    awake(&mut s, |s| {
        s.call(0, &Process::new(1));
        s.call(0, &Process::call_traced_in(2, 0));
        s.call(0, &Process::call_traced_in(3, 1)); // traced in another session only
    });
    assert_eq!(
        s.events,
        vec![TraceEvent {
            session: 0,
            pid: 2,
            func: 0
        }]
    );
    assert_eq!(count(&e, 0), InfoValue::Count(3));
    assert_eq!(e.trace_info(0, &mfa(0), InfoItem::Traced), InfoValue::Local);
    tp(&e, "m:f0/0", PatternOp::False, LOCAL);
    assert_eq!(e.trace_info(0, &mfa(0), InfoItem::Traced), InfoValue::False);
    assert!(e.is_patched(0), "call_count still active");
}

#[test]
fn waits_per_trace_pattern_match_erts_whatever_the_number_of_functions() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::waits_per_trace_pattern_match_erts_whatever_the_number_of_functions",
    );
    for n in [1usize, 10, 1000] {
        let e = engine(n);
        for (op, want) in [
            (PatternOp::True, 5),
            (PatternOp::Pause, 5),
            (PatternOp::Restart, 5),
            (PatternOp::False, 4),
        ] {
            let before = e.progress.completed_waits();
            tp(&e, "{m,'_','_'}", op, COUNT);
            assert_eq!(
                e.progress.completed_waits() - before,
                want,
                "{op:?} over {n} functions"
            );
            assert_eq!(Engine::<Qsbr>::erts_waits(op), want);
        }
    }
}

#[test]
fn bad_patterns_are_errors_naming_what_and_where() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::bad_patterns_are_errors_naming_what_and_where",
    );
    let e = engine(1);
    for (bad, needle) in [
        ("{'_', f0, 0}", "wildcard"),
        ("m:f0", "missing '/Arity'"),
        ("{m, f0, x}", "column 9"),
        ("{m, f0, 0", "missing '}'"),
        ("{m, f0}", "expected 3 parts"),
    ] {
        let err = Pattern::parse(bad).unwrap_err().to_string();
        assert!(err.contains(needle), "{bad:?}: {err}");
    }
    // ERTS accepts pause/restart with local and sets local trace (docs/deviations.md).
    assert_eq!(
        e.trace_pattern(&Pattern::all(), PatternOp::Pause, &TraceSpec::from(LOCAL)),
        Ok(1)
    );
    assert_eq!(
        e.trace_info(0, &e.code.funcs[0].mfa, InfoItem::Traced),
        InfoValue::Local
    );
    let err = e
        .trace_pattern(
            &Pattern::all(),
            PatternOp::Pause,
            &TraceSpec::from(TraceFlags::default()),
        )
        .unwrap_err();
    assert!(err.to_string().contains("no trace flag given"), "{err}");
    assert!(TraceFlags::parse("[local, bogus]")
        .unwrap_err()
        .to_string()
        .contains("column 9"));
    assert_eq!(
        TraceFlags::parse("[local, call_count]").unwrap(),
        TraceFlags {
            local: true,
            call_count: true
        }
    );
}

#[test]
fn concurrent_schedulers_with_epoch_and_qsbr_progress() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "engine_semantics::concurrent_schedulers_with_epoch_and_qsbr_progress",
    );
    fn run<P: ThreadProgress>() {
        let e = Arc::new(Engine::<P>::new(EngineConfig::simple(4, 2)));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let workers: Vec<_> = (0..2)
            .map(|id| {
                let (e, stop) = (e.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut s = Scheduler::start(e, id);
                    s.record = false;
                    let p = Process::call_traced_in(id as u64, 0);
                    let mut rounds = 0u64;
                    while rounds < 2_000
                        || (!stop.load(std::sync::atomic::Ordering::Relaxed) && rounds < 5_000_000)
                    {
                        for f in 0..4 {
                            s.call(f, &p);
                        }
                        s.progress();
                        rounds += 1;
                    }
                    s.sleep();
                    rounds
                })
            })
            .collect();
        for round in 0..40 {
            let op = [
                PatternOp::True,
                PatternOp::Pause,
                PatternOp::Restart,
                PatternOp::False,
            ][round % 4];
            let pat = if round % 3 == 0 {
                "{m,'_','_'}"
            } else {
                "m:f1/0"
            };
            e.trace_pattern(&Pattern::parse(pat).unwrap(), op, &TraceSpec::from(COUNT))
                .unwrap();
            e.check_at_rest().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for w in workers {
            assert!(w.join().unwrap() > 0);
        }
        e.check_at_rest().unwrap();
    }
    run::<Qsbr>();
    run::<EpochProgress>();
}
