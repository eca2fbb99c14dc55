//! return_trace / exception_trace through the trait: the pieces the random checks reach
//! only by chance, spelled out.

use bpspec_oracle::conformance::{compare_ops, universe, ConfOp, Target};
use bpspec_oracle::frames::{FrameMsg, Raise};
use bpspec_oracle::scenario::{load, LoadError};
use bpspec_oracle::target::{Entry, RefEngine, SpecOracle};
use bpspec_reference::{FlagSet, MatchSpec, Mfa, Pattern, PatternOp, Term, TraceSpec};

mod common;

/// An exception skips a call_time return frame without charging it (ERTS `next_catch`), so the
/// raiser stays the charged function until the next timed call: the engine's `raise` and the
/// oracle agree on 10 µs for f0 (5 before the raise, 5 after). The engine's `raise` charged the
/// frame once and would show 5.
#[test]
fn raise_leaves_the_raiser_charged_on_both() {
    let mut ops = common::timed_entry(Target::All);
    ops.extend([
        ConfOp::Raise {
            pid: 1,
            traced: 1,
            through: 0,
        },
        ConfOp::Advance { dt: 5 },
        ConfOp::Enter {
            f: 1,
            pid: 1,
            traced: 1,
            tail: false,
        },
        ConfOp::TimeInfo {
            session: 0,
            f: 0,
            key: 0,
        },
    ]);
    compare_ops(&RefEngine::boxed, &SpecOracle::boxed, &ops).unwrap();
    let u = universe();
    for mut e in [RefEngine::boxed(u.clone()), SpecOracle::boxed(u.clone())] {
        e.trace_pattern(&Pattern::all(), PatternOp::True, &FlagSet::CALL_TIME.into())
            .unwrap();
        e.enter(0, 1, 1, Entry::BODY);
        e.advance(5);
        assert!(e.raise(1, 1, &Raise::error(Term::Atom("x"), 1)).is_empty());
        e.advance(5);
        e.enter(1, 1, 1, Entry::BODY);
        let t = e
            .trace_info_term(0, &u[0], bpspec_reference::InfoKey::CallTime)
            .to_string();
        assert_eq!(t, "{call_time,[{<0.1.0>,1,0,10}]}", "{}", e.name());
    }
}

/// Frame messages as `Event m:f/a value`, in order.
fn shown(v: &[FrameMsg], u: &[Mfa]) -> Vec<String> {
    v.iter()
        .map(|m| format!("{:?} {} {}", m.event, u[m.f], m.value))
        .collect()
}

/// Tail calls push frames too (F1), return_from comes top frame first with the callee's value,
/// and exception_from only from exception_trace frames, innermost first, on both engines.
#[test]
fn frame_messages_in_order_on_both() {
    let u = universe();
    let rt = MatchSpec::RETURN_TRACE;
    let ex = MatchSpec::EXCEPTION_TRACE;
    let local = |ms: &MatchSpec| TraceSpec::local().ms(Some(ms.clone()));
    for mut e in [RefEngine::boxed(u.clone()), SpecOracle::boxed(u.clone())] {
        let name = e.name();
        let pat = |f: usize| Pattern::exact(&u[f]);
        assert_eq!(
            e.trace_pattern(&pat(0), PatternOp::True, &local(&rt)),
            Ok(1)
        );
        assert_eq!(
            e.trace_pattern(&pat(1), PatternOp::True, &local(&ex)),
            Ok(1)
        );
        // Counters only with a match spec: badarg.
        let time_rt = TraceSpec::from(FlagSet::CALL_TIME).ms(Some(rt.clone()));
        assert!(e.trace_pattern(&pat(2), PatternOp::True, &time_rt).is_err());
        // f0 tail-calls f1: both frames stay; both return 7, f1's first.
        assert_eq!(e.enter(0, 1, 1, Entry::BODY), vec![0]);
        assert_eq!(e.enter(1, 1, 1, Entry::TAIL), vec![0]);
        let v = e.ret_value(1, 1, &Term::Int(7));
        let got = shown(&v, &u);
        assert_eq!(
            got,
            ["ReturnFrom m0:f1/1 7", "ReturnFrom m0:f0/0 7"],
            "{name}"
        );
        // f1 calls f0 calls f1, which raises through all three: exception_from only from f1's
        // two exception_trace frames; f0's return_trace frame is silent.
        e.enter(1, 1, 1, Entry::BODY);
        e.enter(0, 1, 1, Entry::BODY);
        e.enter(1, 1, 1, Entry::BODY);
        let v = e.raise(1, 1, &Raise::error(Term::Name("boom".into()), 3));
        let got = shown(&v, &u);
        assert_eq!(
            got,
            [
                "ExceptionFrom m0:f1/1 {error,boom}",
                "ExceptionFrom m0:f1/1 {error,boom}"
            ],
            "{name}"
        );
        // A process not call-traced gets no frames and no messages.
        e.enter(0, 2, 0, Entry::BODY);
        assert!(e.ret_value(2, 0, &Term::Int(1)).is_empty(), "{name}");
    }
}

/// The scenario format's match spec: each action at most once, return_trace first (exit 2 with
/// the JSON path otherwise).
#[test]
fn match_spec_actions_are_validated() {
    let sc = |acts: &str| {
        format!(
            r#"{{"name": "x", "modules": [{{"name": "m", "functions": [{{"name": "f", "exported": true}}]}}],
                "ops": [{{"trace_pattern": {{"pattern": "m:f/0", "spec": {{"actions": {acts}}}, "flags": ["local"]}}}}]}}"#
        )
    };
    for ok in [
        "[]",
        r#"["return_trace"]"#,
        r#"["exception_trace"]"#,
        r#"["return_trace", "exception_trace"]"#,
    ] {
        load("ok.json", &sc(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for (bad, at) in [
        (r#"["exception_trace", "return_trace"]"#, 1),
        (r#"["return_trace", "return_trace"]"#, 1),
        (r#"["exception_trace", "exception_trace"]"#, 1),
        (r#"["message"]"#, 0),
    ] {
        match load("bad.json", &sc(bad)) {
            Err(LoadError::Invalid { path, .. }) => assert_eq!(
                path,
                format!("$.ops[0].trace_pattern.spec.actions[{at}]"),
                "{bad}"
            ),
            other => panic!("{bad}: {other:?}"),
        }
    }
}
