//! Trace sessions, global breakpoints, erl_tracer dispatch and trace frames against what OTP's
//! trace_session_SUITE (basic, call, destroy, negative, is_bif_traced) and call_trace_SUITE
//! assert, plus the erl_tracer behaviour's example message tracer and the Tracing.md `{caller}`
//! example.

use bpspec_reference::*;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

const FUNCS: [(&str, &str, u32); 6] = [
    ("m", "foo", 0),
    ("m", "lots", 0),
    ("m", "of", 0),
    ("m", "indirections", 0),
    ("m", "bar", 1),
    ("m", "helper", 0),
];
const FOO: usize = 0;
const LOTS: usize = 1;
const OF: usize = 2;
const INDIRECTIONS: usize = 3;
const BAR: usize = 4;
const HELPER: usize = 5;

fn mfa(f: usize) -> Mfa {
    let (m, n, a) = FUNCS[f];
    Mfa::new(m, n, a)
}

fn engine() -> Arc<Engine> {
    let cfg = EngineConfig {
        functions: FUNCS.iter().map(|&(m, n, a)| Mfa::new(m, n, a)).collect(),
        schedulers: 1,
        mutant: None,
    };
    // helper/0 is not exported: it can only be called locally.
    Arc::new(Engine::new(cfg).with_exports(&[FOO, LOTS, OF, INDIRECTIONS, BAR]))
}

/// A scheduler, awake for the whole test (every wait is passed by the stager's own thread only
/// when no scheduler holds it back, so it is put to sleep around stager work by `sleep`).
/// The usual start: an engine, the process <0.100.0>, and the mailbox of tracer process `tracer`.
fn start(tracer: u64) -> (Arc<Engine>, Proc, Arc<Mailbox>) {
    (engine(), Proc::new(Process::new(100)), Mailbox::new(tracer))
}

fn sched(e: &Arc<Engine>) -> Scheduler {
    let mut s = Scheduler::start(e.clone(), 0);
    s.sleep();
    s
}

/// Run `f` with the scheduler awake and the process scheduled in.
fn run(s: &mut Scheduler, p: &mut Proc, f: impl FnOnce(&mut Scheduler, &mut Proc)) {
    s.wake();
    s.schedule_in(p);
    f(s, p);
    s.schedule_out(p);
    s.sleep();
}

fn tp(e: &Engine, session: u32, f: usize, op: PatternOp, spec: &TraceSpec) -> usize {
    let n = e
        .trace_pattern(
            &Pattern::exact(&mfa(f)),
            op,
            &(*spec).clone().session(session),
        )
        .unwrap();
    e.check_at_rest().unwrap();
    n
}

/// Local trace with match spec `ms` on function `f` in the legacy session.
fn tp_ms(e: &Engine, f: usize, ms: MatchSpec) -> usize {
    tp(e, 0, f, PatternOp::True, &TraceSpec::local().ms(Some(ms)))
}

/// call_time on function `f` in `session`.
fn tp_call_time(e: &Engine, session: u32, f: usize) -> usize {
    tp(
        e,
        session,
        f,
        PatternOp::True,
        &TraceSpec::counters(FlagSet::CALL_TIME),
    )
}

fn traced(e: &Engine, p: &mut Proc, session: u32, mb: &Arc<Mailbox>) {
    let fl = ProcFlags {
        call: true,
        ..ProcFlags::default()
    };
    assert!(e
        .trace_process(p, session, true, fl, Some(ProcessTracer::spec(mb)))
        .unwrap());
}

fn call_msg(pid: u64, f: &str) -> String {
    format!("{{trace,<0.{pid}.0>,call,{{m,{f},0}}}}")
}

fn info(e: &Engine, s: u32, f: usize, key: InfoKey) -> String {
    e.session_trace_info(s, &mfa(f), key).unwrap().to_string()
}

// ---------------------------------------------------------------------------------------------
// trace_session_SUITE: basic / call

/// Two sessions (legacy 0 and a dynamic one) with their own tracers on the same function:
/// local in both, then global in one and local in the other, then a local-traced function called
/// remotely; enabled and disabled in either order. Each tracer gets exactly its own events.
#[test]
fn basic_two_sessions_each_tracer_gets_its_own_events() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::basic_two_sessions_each_tracer_gets_its_own_events",
    );
    let e = engine();
    let s1 = e.create_session("s1").unwrap();
    assert_ne!(s1, 0);
    let (t0, t1) = (Mailbox::new(900), Mailbox::new(901));
    let mut p = Proc::new(Process::new(100));
    traced(&e, &mut p, 0, &t0);
    traced(&e, &mut p, s1, &t1);
    let mut s = sched(&e);

    // Local in both sessions.
    assert_eq!(tp(&e, 0, FOO, PatternOp::True, &TraceSpec::local()), 1);
    assert_eq!(tp(&e, s1, FOO, PatternOp::True, &TraceSpec::local()), 1);
    run(&mut s, &mut p, |s, p| {
        s.call_proc(FOO, p);
        s.ret(p);
    });
    assert_eq!(t0.take_strings(), vec![call_msg(100, "foo")]);
    assert_eq!(t1.take_strings(), vec![call_msg(100, "foo")]);

    // Disable in the legacy session first: the dynamic session keeps tracing.
    tp(&e, 0, FOO, PatternOp::False, &TraceSpec::local());
    run(&mut s, &mut p, |s, p| {
        s.call_proc(FOO, p);
        s.ret(p);
    });
    assert!(t0.is_empty());
    assert_eq!(t1.take_strings(), vec![call_msg(100, "foo")]);

    // Global in session 0, local in s1: a local call reaches only s1, a remote call both.
    assert_eq!(tp(&e, 0, FOO, PatternOp::True, &TraceSpec::global()), 1);
    run(&mut s, &mut p, |s, p| {
        s.call_proc(FOO, p);
        s.ret(p);
    });
    assert!(t0.is_empty(), "global breakpoints see only remote calls");
    assert_eq!(t1.take_strings(), vec![call_msg(100, "foo")]);
    run(&mut s, &mut p, |s, p| {
        s.call_remote(FOO, p);
        s.ret(p);
    });
    assert_eq!(t0.take_strings(), vec![call_msg(100, "foo")]);
    assert_eq!(t1.take_strings(), vec![call_msg(100, "foo")]);

    // Disable s1 first this time; session 0's global stays.
    tp(&e, s1, FOO, PatternOp::False, &TraceSpec::local());
    run(&mut s, &mut p, |s, p| {
        s.call_remote(FOO, p);
        s.ret(p);
        s.call_proc(FOO, p);
        s.ret(p);
    });
    assert_eq!(t0.take_strings(), vec![call_msg(100, "foo")]);
    assert!(t1.is_empty());
    assert!(!e.is_patched(FOO));
    assert!(e.is_export_patched(FOO));
    tp(&e, 0, FOO, PatternOp::False, &TraceSpec::global());
    assert!(!e.is_export_patched(FOO));
}

/// Counters count only for their session, and enabling, pausing or disabling in one session
/// never changes another's.
#[test]
fn call_counters_are_isolated_per_session() {
    let _watchdog =
        bpspec_reference::watchdog::arm("sessions::call_counters_are_isolated_per_session");
    let e = engine();
    let s1 = e.create_session("s1").unwrap();
    let s2 = e.create_session("s2").unwrap();
    let cc = TraceSpec::counters(FlagSet {
        call_count: true,
        ..FlagSet::default()
    });
    let mut p = Proc::new(Process::new(100));
    let mut s = sched(&e);
    let calls = |s: &mut Scheduler, p: &mut Proc, n: usize| {
        run(s, p, |s, p| {
            for _ in 0..n {
                s.call_proc(BAR, p);
                s.ret(p);
            }
        })
    };
    tp(&e, s1, BAR, PatternOp::True, &cc);
    calls(&mut s, &mut p, 3);
    tp(&e, s2, BAR, PatternOp::True, &cc);
    calls(&mut s, &mut p, 2);
    assert_eq!(info(&e, s1, BAR, InfoKey::CallCount), "{call_count,5}");
    assert_eq!(info(&e, s2, BAR, InfoKey::CallCount), "{call_count,2}");
    assert_eq!(info(&e, 0, BAR, InfoKey::CallCount), "{call_count,false}");
    tp(&e, s1, BAR, PatternOp::Pause, &cc);
    calls(&mut s, &mut p, 4);
    assert_eq!(info(&e, s1, BAR, InfoKey::CallCount), "{call_count,5}");
    assert_eq!(info(&e, s2, BAR, InfoKey::CallCount), "{call_count,6}");
    tp(&e, s2, BAR, PatternOp::False, &cc);
    calls(&mut s, &mut p, 1);
    assert_eq!(info(&e, s1, BAR, InfoKey::CallCount), "{call_count,5}");
    assert_eq!(info(&e, s2, BAR, InfoKey::CallCount), "{call_count,false}");
    assert!(
        e.is_patched(BAR),
        "s1's paused counter keeps the breakpoint"
    );
}

/// OTP-19840 (#10349, `is_bif_traced`): a function traced by one to three sessions in every
/// global/local combination; removing one session's trace (by `false` or by destroying the
/// session) never stops the others' events.
#[test]
fn is_bif_traced_every_combination_of_sessions_and_kinds() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::is_bif_traced_every_combination_of_sessions_and_kinds",
    );
    for n in 1..=3usize {
        for kinds in 0..(1u32 << n) {
            for victim in 0..n {
                for by_destroy in [false, true] {
                    one_combination(n, kinds, victim, by_destroy);
                }
            }
        }
    }
}

fn one_combination(n: usize, kinds: u32, victim: usize, by_destroy: bool) {
    let e = engine();
    let ss: Vec<u32> = (0..n)
        .map(|i| e.create_session(&format!("s{i}")).unwrap())
        .collect();
    let boxes: Vec<Arc<Mailbox>> = (0..n).map(|i| Mailbox::new(900 + i as u64)).collect();
    let mut p = Proc::new(Process::new(100));
    for i in 0..n {
        traced(&e, &mut p, ss[i], &boxes[i]);
        let spec = if kinds & (1 << i) != 0 {
            TraceSpec::global()
        } else {
            TraceSpec::local()
        };
        tp(&e, ss[i], FOO, PatternOp::True, &spec);
    }
    let what = format!("n={n} kinds={kinds:#b} victim={victim} destroy={by_destroy}");
    if by_destroy {
        assert_eq!(e.destroy_session(ss[victim]), Ok(true), "{what}");
    } else {
        let spec = if kinds & (1 << victim) != 0 {
            TraceSpec::global()
        } else {
            TraceSpec::local()
        };
        tp(&e, ss[victim], FOO, PatternOp::False, &spec);
    }
    e.check_at_rest().unwrap();
    let mut s = sched(&e);
    run(&mut s, &mut p, |s, p| {
        s.call_remote(FOO, p);
        s.ret(p);
    });
    for (i, mb) in boxes.iter().enumerate() {
        let got = mb.take_strings();
        if i == victim {
            assert!(got.is_empty(), "{what}: removed session {i} still traced");
        } else {
            assert_eq!(got, vec![call_msg(100, "foo")], "{what}: session {i}");
        }
    }
    let any_local = (0..n).any(|i| i != victim && kinds & (1 << i) == 0);
    let any_global = (0..n).any(|i| i != victim && kinds & (1 << i) != 0);
    assert_eq!(e.is_patched(FOO), any_local, "{what}");
    assert_eq!(e.is_export_patched(FOO), any_global, "{what}");
}

// ---------------------------------------------------------------------------------------------
// trace_session_SUITE: destroy

#[test]
fn destroy_clears_patterns_and_every_later_query_fails() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::destroy_clears_patterns_and_every_later_query_fails",
    );
    let (e, mut p, t1) = start(901);
    let s1 = e.create_session("doomed").unwrap();
    traced(&e, &mut p, s1, &t1);
    let all3 = TraceSpec::counters(FlagSet {
        local: true,
        call_count: true,
        call_time: true,
        call_memory: false,
    });
    assert_eq!(
        e.trace_pattern(
            &Pattern::parse("{m,'_','_'}").unwrap(),
            PatternOp::True,
            &all3.clone().session(s1)
        )
        .unwrap(),
        6
    );
    tp(&e, s1, BAR, PatternOp::True, &TraceSpec::global());
    assert!(e
        .session_info()
        .iter()
        .any(|(id, n)| *id == s1 && n == "doomed"));
    assert_eq!(e.destroy_session(s1), Ok(true));
    e.check_at_rest().unwrap();
    for f in 0..FUNCS.len() {
        assert!(!e.is_patched(f), "{} still patched", mfa(f));
        assert!(!e.is_export_patched(f));
    }
    assert!(!e.session_info().iter().any(|(id, _)| *id == s1));
    let dead = SessionError::Destroyed { session: s1 };
    assert_eq!(
        e.session_trace_info(s1, &mfa(FOO), InfoKey::All),
        Err(dead.clone())
    );
    assert_eq!(
        e.trace_process(&mut p, s1, true, ProcFlags::default(), None),
        Err(dead.clone())
    );
    assert_eq!(e.set_session_tracer(s1, None), Err(dead.clone()));
    let err = e
        .trace_pattern(
            &Pattern::all(),
            PatternOp::True,
            &TraceSpec::local().session(s1),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("badarg: trace session {s1} has been destroyed")
    );
    assert_eq!(
        e.destroy_session(s1),
        Ok(false),
        "destroying twice answers false"
    );
    assert_eq!(e.destroy_session(0), Err(SessionError::Legacy));
    // Nothing reaches the tracer any more, and the process's old ref is harmless.
    let mut s = sched(&e);
    run(&mut s, &mut p, |s, p| {
        s.call_remote(BAR, p);
        s.ret(p);
    });
    assert!(t1.is_empty());
    // A new session gets a fresh id (ids are never reused).
    let s2 = e.create_session("next").unwrap();
    assert_ne!(s2, s1);
}

// ---------------------------------------------------------------------------------------------
// trace_session_SUITE: negative

#[test]
fn negative_undefined_false_and_tracer_conflict() {
    let _watchdog =
        bpspec_reference::watchdog::arm("sessions::negative_undefined_false_and_tracer_conflict");
    let e = engine();
    let s1 = e.create_session("neg").unwrap();
    for s in [0, s1] {
        for k in InfoKey::EVERY {
            let nope = e
                .session_trace_info(s, &Mfa::new("m", "nope", 0), k)
                .unwrap();
            assert_eq!(nope.to_string(), format!("{{{},undefined}}", k.atom()));
            assert_eq!(info(&e, s, FOO, k), format!("{{{},false}}", k.atom()));
        }
    }
    // A per-process tracer is not allowed in a session that has a session tracer.
    let mb = Mailbox::new(950);
    assert_eq!(
        e.set_session_tracer(s1, Some(ProcessTracer::spec(&mb))),
        Ok(true)
    );
    let mut p = Proc::new(Process::new(100));
    assert_eq!(
        e.trace_process(
            &mut p,
            s1,
            true,
            ProcFlags::default(),
            Some(ProcessTracer::spec(&Mailbox::new(951)))
        ),
        Err(SessionError::TracerConflict { session: s1 })
    );
    // Out-of-range ids and bad combinations are clear errors.
    assert_eq!(
        e.session_trace_info(64, &mfa(FOO), InfoKey::Traced),
        Err(SessionError::OutOfRange { session: 64 })
    );
    let bad = TraceSpec {
        flags: FlagSet {
            call_count: true,
            ..FlagSet::default()
        },
        global: true,
        ms: None,
        ..TraceSpec::default()
    };
    assert!(matches!(
        e.trace_pattern(&Pattern::all(), PatternOp::True, &bad),
        Err(PatternError::BadArg(_))
    ));
    let ms_counters = TraceSpec {
        flags: FlagSet::CALL_TIME,
        global: false,
        ms: Some(MatchSpec::RETURN_TRACE),
        ..TraceSpec::default()
    };
    assert!(matches!(
        e.trace_pattern(&Pattern::all(), PatternOp::True, &ms_counters),
        Err(PatternError::BadArg(_))
    ));
    e.check_at_rest().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Global breakpoints

#[test]
fn global_counts_exports_and_excludes_local_both_ways() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::global_counts_exports_and_excludes_local_both_ways",
    );
    let e = engine();
    // Five of the six functions are exported.
    assert_eq!(
        e.trace_pattern(
            &Pattern::parse("{m,'_','_'}").unwrap(),
            PatternOp::True,
            &TraceSpec::global()
        )
        .unwrap(),
        5
    );
    assert_eq!(info(&e, 0, FOO, InfoKey::Traced), "{traced,global}");
    assert_eq!(info(&e, 0, HELPER, InfoKey::Traced), "{traced,false}");
    assert_eq!(
        info(&e, 0, FOO, InfoKey::All),
        "{all,[{traced,global},{match_spec,[]},{meta,false},{meta_match_spec,false},\
         {call_memory,false},{call_time,false},{call_count,false}]}"
    );
    // Local on foo in the same session clears foo's global (and only foo's).
    tp(&e, 0, FOO, PatternOp::True, &TraceSpec::local());
    assert_eq!(info(&e, 0, FOO, InfoKey::Traced), "{traced,local}");
    assert!(!e.is_export_patched(FOO) && e.is_patched(FOO));
    assert_eq!(info(&e, 0, BAR, InfoKey::Traced), "{traced,global}");
    // A counter is a breakpoint-type flag too: it clears bar's global.
    let cc = TraceSpec::counters(FlagSet {
        call_count: true,
        ..FlagSet::default()
    });
    tp(&e, 0, BAR, PatternOp::True, &cc);
    assert_eq!(info(&e, 0, BAR, InfoKey::Traced), "{traced,false}");
    assert_eq!(info(&e, 0, BAR, InfoKey::CallCount), "{call_count,0}");
    assert!(!e.is_export_patched(BAR));
    // Global again clears every local flag of the session (local, call_count).
    tp(&e, 0, FOO, PatternOp::True, &TraceSpec::global());
    tp(&e, 0, BAR, PatternOp::True, &TraceSpec::global());
    assert_eq!(info(&e, 0, FOO, InfoKey::Traced), "{traced,global}");
    assert_eq!(info(&e, 0, BAR, InfoKey::CallCount), "{call_count,false}");
    assert!(!e.is_patched(FOO) && !e.is_patched(BAR));
    // Another session is not affected by either direction.
    let s1 = e.create_session("other").unwrap();
    // `false` with global counts the matched exports even where nothing is traced.
    assert_eq!(tp(&e, s1, FOO, PatternOp::False, &TraceSpec::global()), 1);
    tp(&e, s1, FOO, PatternOp::True, &TraceSpec::local());
    assert_eq!(info(&e, 0, FOO, InfoKey::Traced), "{traced,global}");
    assert_eq!(info(&e, s1, FOO, InfoKey::Traced), "{traced,local}");
    assert!(e.is_patched(FOO) && e.is_export_patched(FOO));
}

// ---------------------------------------------------------------------------------------------
// Trace frames

/// Trace `p`'s calls and return_to in `session`, to `mb`.
fn traced_with_return_to(e: &Engine, p: &mut Proc, session: u32, mb: &Arc<Mailbox>) {
    let fl = ProcFlags {
        call: true,
        return_to: true,
        ..ProcFlags::default()
    };
    e.trace_process(p, session, true, fl, Some(ProcessTracer::spec(mb)))
        .unwrap();
}

#[test]
fn return_trace_exception_trace_and_return_to_frames() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::return_trace_exception_trace_and_return_to_frames",
    );
    let (e, mut p, mb) = start(900);
    traced_with_return_to(&e, &mut p, 0, &mb);
    let rt = TraceSpec::local().ms(Some(MatchSpec::RETURN_TRACE));
    let et = TraceSpec::local().ms(Some(MatchSpec::EXCEPTION_TRACE));
    tp(&e, 0, LOTS, PatternOp::True, &rt);
    tp(&e, 0, OF, PatternOp::True, &et);
    assert_eq!(
        info(&e, 0, LOTS, InfoKey::MatchSpec),
        "{match_spec,[{'_',[],[{return_trace}]}]}"
    );
    let mut s = sched(&e);
    run(&mut s, &mut p, |s, p| {
        s.call_proc(FOO, p); // untraced
        s.call_proc(LOTS, p);
        s.ret_with(p, Term::Int(7));
        s.ret(p);
    });
    assert_eq!(
        mb.take_strings(),
        vec![
            "{trace,<0.100.0>,call,{m,lots,0}}",
            "{trace,<0.100.0>,return_from,{m,lots,0},7}",
            "{trace,<0.100.0>,return_to,{m,foo,0}}",
        ]
    );
    // exception_trace: exception_from when an exception unwinds through; return_trace frames
    // are dropped silently; the return_to frames passed give one return_to for the catcher.
    run(&mut s, &mut p, |s, p| {
        s.call_proc(FOO, p);
        s.call_proc(LOTS, p);
        s.call_proc(OF, p);
        s.raise(p, "error", Term::Atom("badarg"), 2); // out of 'of' and lots, caught in foo
        assert_eq!(p.current, Some(bpspec_reference::process::Ci::code(FOO)));
        s.ret(p);
    });
    assert_eq!(
        mb.take_strings(),
        vec![
            "{trace,<0.100.0>,call,{m,lots,0}}",
            "{trace,<0.100.0>,call,{m,'of',0}}",
            "{trace,<0.100.0>,exception_from,{m,'of',0},{error,badarg}}",
            "{trace,<0.100.0>,return_to,{m,foo,0}}",
        ]
    );
    assert!(p.stack.is_empty() && p.conts.is_empty());
}

/// Tracing.md: with `{caller}`, every call of bar/1 reports foo/0, because lots, 'of' and
/// indirections reach bar by tail calls and bar recurses by tail calls; only foo's body call
/// pushed a continuation. Tail calls push no frame; return_to is pushed once.
#[test]
fn caller_reports_where_the_call_returns_to() {
    let _watchdog =
        bpspec_reference::watchdog::arm("sessions::caller_reports_where_the_call_returns_to");
    let (e, mut p, mb) = start(900);
    traced_with_return_to(&e, &mut p, 0, &mb);
    tp_ms(&e, BAR, MatchSpec::CALLER);
    let mut s = sched(&e);
    run(&mut s, &mut p, |s, p| {
        s.call_proc(HELPER, p); // the process's entry function
        s.call_proc(FOO, p); // foo() -> lots(), ok.
        s.call_proc(LOTS, p); // body call from foo
        s.tail_call(OF, p); // lots() -> 'of'().
        s.tail_call(INDIRECTIONS, p); // 'of'() -> indirections().
        for _ in 0..=10 {
            s.tail_call(BAR, p); // indirections() -> bar(10); bar(N) -> bar(N-1).
        }
        assert_eq!(
            p.stack,
            vec![
                Frame::Code,
                Frame::Code,
                Frame::Code,
                Frame::ReturnToTrace { session: 0 }
            ],
            "tail calls push nothing; one return_to frame"
        );
        s.ret(p); // bar(0) returns `done` to foo
        assert_eq!(p.current, Some(bpspec_reference::process::Ci::code(FOO)));
        s.ret(p);
        s.ret(p);
    });
    let got = mb.take_strings();
    assert_eq!(got.len(), 12, "{got:?}");
    for m in &got[..11] {
        assert_eq!(m, "{trace,<0.100.0>,call,{m,bar,1},{m,foo,0}}");
    }
    assert_eq!(got[11], "{trace,<0.100.0>,return_to,{m,foo,0}}");
}

/// call_time pushes its frame only if the top frame is not already a trace frame.
#[test]
fn call_time_frame_only_without_a_trace_frame_on_top() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::call_time_frame_only_without_a_trace_frame_on_top",
    );
    let (e, mut p, mb) = start(900);
    traced(&e, &mut p, 0, &mb);
    let s1 = e.create_session("prof").unwrap();
    traced(&e, &mut p, s1, &Mailbox::new(901));
    // Session s1 (newest, walked first): call_time; session 0: return_trace.
    tp_ms(&e, LOTS, MatchSpec::RETURN_TRACE);
    tp_call_time(&e, s1, LOTS);
    tp_call_time(&e, s1, OF);
    let mut s = sched(&e);
    run(&mut s, &mut p, |s, p| {
        s.call_proc(LOTS, p);
        assert!(matches!(
            p.stack[..],
            [
                Frame::Code,
                Frame::CallTraceReturn { .. },
                Frame::ReturnTrace { .. }
            ]
        ));
        s.tail_call(OF, p); // top is a trace frame: no second call_time frame
        assert_eq!(p.stack.len(), 3);
        s.ret(p);
        assert!(p.stack.is_empty());
    });
    assert_eq!(mb.take().len(), 2, "call and return_from");
}

/// A frame outlives the breakpoint that pushed it and the session it belongs to.
#[test]
fn frames_outlive_their_breakpoint_and_session() {
    let _watchdog =
        bpspec_reference::watchdog::arm("sessions::frames_outlive_their_breakpoint_and_session");
    let e = engine();
    let s1 = e.create_session("short").unwrap();
    let (t0, t1) = (Mailbox::new(900), Mailbox::new(901));
    let mut p = Proc::new(Process::new(100));
    traced_with_return_to(&e, &mut p, 0, &t0);
    traced(&e, &mut p, s1, &t1);
    let rt = TraceSpec::local().ms(Some(MatchSpec::EXCEPTION_TRACE));
    tp(&e, 0, LOTS, PatternOp::True, &rt);
    tp(&e, s1, LOTS, PatternOp::True, &rt);
    tp_call_time(&e, s1, OF);
    let mut s = sched(&e);
    s.wake();
    s.schedule_in(&mut p);
    s.call_proc(FOO, &mut p);
    s.call_proc(LOTS, &mut p);
    s.call_proc(OF, &mut p);
    let depth = p.stack.len();
    assert!(depth >= 6, "{:?}", p.stack);
    s.sleep();
    // Remove session 0's breakpoint and destroy s1 while the frames are on the stack.
    tp(&e, 0, LOTS, PatternOp::False, &rt);
    assert_eq!(e.destroy_session(s1), Ok(true));
    e.check_at_rest().unwrap();
    s.wake();
    s.ret(&mut p); // 'of': its call_time frame belongs to a destroyed session: no charge, no crash
    s.ret(&mut p); // lots: session 0's frame still reports; s1's is silent
    s.ret(&mut p);
    s.schedule_out(&mut p);
    s.sleep();
    assert_eq!(
        t0.take_strings(),
        vec![
            "{trace,<0.100.0>,call,{m,lots,0}}",
            "{trace,<0.100.0>,return_from,{m,lots,0},ok}",
            "{trace,<0.100.0>,return_to,{m,foo,0}}",
        ]
    );
    assert_eq!(t1.take_strings(), vec!["{trace,<0.100.0>,call,{m,lots,0}}"]);
}

// ---------------------------------------------------------------------------------------------
// Tracers: erl_tracer dispatch

/// The behaviour's example: a send-only message tracer. State is the pid of the process that
/// gets `{trace, Tracee, Recipient}`; it discards when tracer == tracee and removes itself when
/// the tracer process is dead (asked with trace_status).
struct MsgTracer {
    registry: Vec<Arc<Mailbox>>,
}

impl MsgTracer {
    fn mailbox(&self, pid: &Term) -> Option<&Arc<Mailbox>> {
        let Term::Pid(pid) = pid else { return None };
        self.registry.iter().find(|m| m.pid == *pid)
    }
}

impl Tracer for MsgTracer {
    fn enabled(&self, tag: TraceTag, state: &Term, tracee: &Term) -> Enabled {
        if let Some(m) = self.mailbox(state) {
            if !m.is_alive() {
                return if tag == TraceTag::TraceStatus {
                    Enabled::Remove
                } else {
                    Enabled::Discard
                };
            }
        }
        if state == tracee {
            return Enabled::Discard;
        }
        match tag {
            TraceTag::Send | TraceTag::TraceStatus => Enabled::Trace,
            _ => Enabled::Discard,
        }
    }
    fn trace(&self, _tag: TraceTag, state: &Term, tracee: &Term, _msg: &Term, o: &TraceOpts) {
        if let (Some(m), Some(recipient)) = (self.mailbox(state), &o.extra) {
            m.deliver(Term::Tuple(vec![
                Term::Atom("trace"),
                tracee.clone(),
                recipient.clone(),
            ]));
        }
    }
}

#[test]
fn example_message_tracer_follows_the_dispatch_rules() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::example_message_tracer_follows_the_dispatch_rules",
    );
    let e = engine();
    let sink = Mailbox::new(500);
    let t = Arc::new(MsgTracer {
        registry: vec![sink.clone()],
    });
    let spec = TracerSpec::new(t, Term::Pid(500));
    let fl = ProcFlags {
        call: true,
        send: true,
        ..ProcFlags::default()
    };
    let mut a = Proc::new(Process::new(100));
    let mut sinkp = Proc::new(Process::new(500));
    assert_eq!(
        e.trace_process(&mut a, 0, true, fl, Some(spec.clone())),
        Ok(true)
    );
    assert_eq!(
        e.trace_process(&mut sinkp, 0, true, fl, Some(spec.clone())),
        Ok(true)
    );
    tp(&e, 0, FOO, PatternOp::True, &TraceSpec::local());
    let mut s = sched(&e);
    run(&mut s, &mut a, |s, p| {
        s.send(p, 200, Term::Atom("hello"));
        s.call_proc(FOO, p); // call events are discarded by this tracer
        s.ret(p);
    });
    run(&mut s, &mut sinkp, |s, p| {
        s.send(p, 200, Term::Atom("self"))
    }); // tracer == tracee
    assert_eq!(sink.take_strings(), vec!["{trace,<0.100.0>,<0.200.0>}"]);
    // The tracer process dies: events are discarded, and the next trace_status removes the
    // tracer from the tracee (its flags in the session go too).
    sink.kill();
    run(&mut s, &mut a, |s, p| s.send(p, 201, Term::Atom("lost")));
    assert!(a.tref(0).is_some(), "discard keeps the tracer");
    assert_eq!(e.process_tracer(&mut a, 0).unwrap().map(|_| ()), None);
    assert!(a.tref(0).is_none() && !a.p.is_call_traced(0));
    // Tracing cannot start with a tracer that answers remove to trace_status.
    assert_eq!(e.trace_process(&mut a, 0, true, fl, Some(spec)), Ok(false));
    assert!(a.tref(0).is_none());
}

/// A tracer that defines only some optional callbacks: the rest fall back to enabled/trace.
#[derive(Default)]
struct Counting {
    enabled: AtomicUsize,
    enabled_call: AtomicUsize,
    trace: AtomicUsize,
    trace_send: AtomicUsize,
    seen: std::sync::Mutex<Vec<(TraceTag, TraceOpts)>>,
}

impl Counting {
    /// An `enabled*` callback: counted in `calls`, always `trace`.
    fn enable(calls: &AtomicUsize) -> Enabled {
        calls.fetch_add(1, Relaxed);
        Enabled::Trace
    }

    /// A `trace*` callback: counted in `calls`, its tag and options kept.
    fn record(&self, calls: &AtomicUsize, tag: TraceTag, o: &TraceOpts) {
        calls.fetch_add(1, Relaxed);
        self.seen.lock().unwrap().push((tag, o.clone()));
    }
}

impl Tracer for Counting {
    fn enabled(&self, _: TraceTag, _: &Term, _: &Term) -> Enabled {
        Counting::enable(&self.enabled)
    }
    fn trace(&self, tag: TraceTag, _: &Term, _: &Term, _: &Term, o: &TraceOpts) {
        self.record(&self.trace, tag, o)
    }
    fn enabled_call(&self, _: TraceTag, _: &Term, _: &Term) -> Enabled {
        Counting::enable(&self.enabled_call)
    }
    fn trace_send(&self, tag: TraceTag, _: &Term, _: &Term, _: &Term, o: &TraceOpts) {
        self.record(&self.trace_send, tag, o)
    }
}

#[test]
fn optional_callbacks_fall_back_and_opts_carry_what_was_asked() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::optional_callbacks_fall_back_and_opts_carry_what_was_asked",
    );
    let e = engine();
    let c = Arc::new(Counting::default());
    let fl = ProcFlags {
        call: true,
        send: true,
        timestamp: Some("monotonic"),
        scheduler_id: true,
        return_to: false,
    };
    let mut p = Proc::new(Process::new(100));
    e.trace_process(
        &mut p,
        0,
        true,
        fl,
        Some(TracerSpec::new(c.clone(), Term::Atom("st"))),
    )
    .unwrap();
    assert_eq!(c.enabled.load(Relaxed), 1, "trace_status goes to enabled/3");
    tp_ms(&e, LOTS, MatchSpec::RETURN_TRACE);
    let mut s = sched(&e);
    run(&mut s, &mut p, |s, p| {
        s.call_proc(LOTS, p); // call: enabled_call (defined) + trace (fallback)
        s.ret(p); // return_from: call category too
        s.send(p, 7, Term::Atom("m")); // send: enabled (fallback) + trace_send (defined)
    });
    assert_eq!(c.enabled_call.load(Relaxed), 2);
    assert_eq!(c.enabled.load(Relaxed), 2);
    assert_eq!(c.trace.load(Relaxed), 2);
    assert_eq!(c.trace_send.load(Relaxed), 1);
    let seen = c.seen.lock().unwrap();
    let tags: Vec<TraceTag> = seen.iter().map(|x| x.0).collect();
    assert_eq!(tags, [TraceTag::Call, TraceTag::ReturnFrom, TraceTag::Send]);
    for (_, o) in seen.iter() {
        assert_eq!(o.timestamp, Some("monotonic"));
        assert_eq!(o.scheduler_id, Some(0));
    }
    assert_eq!(seen[0].1.extra, None);
    assert_eq!(seen[1].1.extra, Some(Term::Atom("ok")));
    assert_eq!(seen[2].1.extra, Some(Term::Pid(7)));
}

/// A session tracer: every traced process of the session reports to it, it is asked
/// trace_status when set, and it is removed (and freed after a wait) while others keep going.
#[test]
fn session_tracer_set_and_removed() {
    let _watchdog = bpspec_reference::watchdog::arm("sessions::session_tracer_set_and_removed");
    let e = engine();
    let s1 = e.create_session("with-tracer").unwrap();
    let mb = Mailbox::new(950);
    assert_eq!(
        e.set_session_tracer(s1, Some(ProcessTracer::spec(&mb))),
        Ok(true)
    );
    let mut p = Proc::new(Process::new(100));
    let mut q = Proc::new(Process::new(101));
    let fl = ProcFlags {
        call: true,
        ..ProcFlags::default()
    };
    e.trace_process(&mut p, s1, true, fl, None).unwrap();
    e.trace_process(&mut q, s1, true, fl, None).unwrap();
    tp(&e, s1, FOO, PatternOp::True, &TraceSpec::local());
    let mut s = sched(&e);
    for proc in [&mut p, &mut q] {
        run(&mut s, proc, |s, p| {
            s.call_proc(FOO, p);
            s.ret(p);
        });
    }
    assert_eq!(
        mb.take_strings(),
        vec![call_msg(100, "foo"), call_msg(101, "foo")]
    );
    assert_eq!(e.set_session_tracer(s1, None), Ok(true));
    run(&mut s, &mut p, |s, p| {
        s.call_proc(FOO, p);
        s.ret(p);
    });
    assert!(mb.is_empty());
    // A dead tracer process is refused when set (trace_status answers remove).
    mb.kill();
    assert_eq!(
        e.set_session_tracer(s1, Some(ProcessTracer::spec(&mb))),
        Ok(false)
    );
}

/// The process `call` flag is required per session for local and global call trace (and
/// call_time), not for call_count; a flag in one session does not count for another.
#[test]
fn call_flag_is_per_session_and_not_needed_for_call_count() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "sessions::call_flag_is_per_session_and_not_needed_for_call_count",
    );
    let (e, mut p, mb) = start(900);
    let s1 = e.create_session("s1").unwrap();
    // Tracer in session 0 but without the call flag; call flag in s1 only.
    let no_call = ProcFlags::default();
    e.trace_process(&mut p, 0, true, no_call, Some(ProcessTracer::spec(&mb)))
        .unwrap();
    traced(&e, &mut p, s1, &Mailbox::new(901));
    tp(&e, 0, FOO, PatternOp::True, &TraceSpec::global());
    tp(&e, 0, LOTS, PatternOp::True, &TraceSpec::local());
    let count_time = TraceSpec::counters(FlagSet {
        call_count: true,
        call_time: true,
        ..FlagSet::default()
    });
    tp(&e, 0, BAR, PatternOp::True, &count_time);
    let mut s = sched(&e);
    run(&mut s, &mut p, |s, p| {
        for f in [FOO, LOTS, BAR] {
            s.call_remote(f, p);
            s.ret(p);
        }
    });
    assert!(mb.is_empty(), "no call flag in session 0: no call trace");
    assert_eq!(info(&e, 0, BAR, InfoKey::CallCount), "{call_count,1}");
    assert_eq!(info(&e, 0, BAR, InfoKey::CallTime), "{call_time,[]}");
    // With the flag, the same calls are traced and timed.
    let call = ProcFlags {
        call: true,
        ..ProcFlags::default()
    };
    e.trace_process(&mut p, 0, true, call, None).unwrap();
    run(&mut s, &mut p, |s, p| {
        for f in [FOO, LOTS, BAR] {
            s.call_remote(f, p);
            s.ret(p);
        }
    });
    assert_eq!(
        mb.take_strings(),
        vec![call_msg(100, "foo"), call_msg(100, "lots")],
        "the tracer given earlier is kept when only the flags change"
    );
    assert_eq!(info(&e, 0, BAR, InfoKey::CallCount), "{call_count,2}");
    assert_eq!(
        info(&e, 0, BAR, InfoKey::CallTime),
        "{call_time,[{<0.100.0>,1,0,0}]}"
    );
}

// ---------------------------------------------------------------------------------------------
// Destroy: inert at once (the `destroy-inert` check of the session kill matrix)

/// Destroy the session on another thread while this scheduler is awake: the destroy stores
/// CLEARING and then blocks in its first wait (which needs this scheduler's progress point), so
/// a call made now is after DS1 and before the commit. Returns the messages the session's tracer
/// got from that call.
fn call_during_destroy(mutant: Option<Mutant>) -> Vec<String> {
    let cfg = EngineConfig {
        functions: FUNCS.iter().map(|&(m, n, a)| Mfa::new(m, n, a)).collect(),
        schedulers: 1,
        mutant,
    };
    let e: Arc<Engine> = Arc::new(Engine::new(cfg));
    let s1 = e.create_session("doomed").unwrap();
    let mb = Mailbox::new(900);
    let mut p = Proc::new(Process::new(100));
    traced(&e, &mut p, s1, &mb);
    tp(&e, s1, FOO, PatternOp::True, &TraceSpec::local());
    let mut s = Scheduler::start(e.clone(), 0); // awake: holds every wait back
    s.schedule_in(&mut p);
    let e2 = e.clone();
    let destroyer = std::thread::spawn(move || e2.destroy_session(s1));
    let mut spins = 0u64;
    while e.session_is_alive(s1) {
        spins += 1;
        assert!(spins < 1 << 32, "destroy never started");
        std::thread::yield_now();
    }
    assert!(
        e.is_patched(FOO),
        "still installed: the commit cannot have happened"
    );
    s.call_proc(FOO, &mut p);
    s.ret(&mut p);
    s.schedule_out(&mut p);
    s.sleep(); // lets the destroy's waits pass
    assert_eq!(destroyer.join().unwrap(), Ok(true));
    e.check_at_rest().unwrap();
    mb.take_strings()
}

#[test]
fn destroy_inert_mutant_is_caught() {
    let _watchdog = bpspec_reference::watchdog::arm("sessions::destroy_inert_mutant_is_caught");
    assert!(
        call_during_destroy(None).is_empty(),
        "a session being destroyed is inert at once"
    );
    assert_eq!(
        call_during_destroy(Some(Mutant::IgnoreSessionState)),
        vec![call_msg(100, "foo")],
        "the mutant (no state check on the hit path) must be caught"
    );
}
