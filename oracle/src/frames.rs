//! return_trace / exception_trace through the trait and the scenario runner: the
//! scenario's match spec as the engine's [`MatchSpec`], the messages frames send
//! ([`FrameMsg`], shared with the sequential oracle), how they become observations, and the
//! tracer [`RefEngine`](crate::target::RefEngine) gives each traced process so that its frames
//! have somewhere to send (a log of every call-category event with its session, in delivery
//! order across sessions).

use crate::observe::TraceMsg;
pub use bpspec_reference::MatchSpec;
use bpspec_reference::{
    Enabled, Engine, FuncId, Mfa, Proc, ProcFlags, Qsbr, SessionId, Term, TraceOpts, TraceTag,
    Tracer, TracerSpec,
};
pub use bpspec_spec::frames::{FrameEvent, FrameMsg, Raise, TOP};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// `[{'_', [], Actions}]` from the scenario's action names (validated by the loader:
/// `return_trace`, `exception_trace`, `caller` (`{message, {caller}}`), each at most once, in
/// that order).
pub fn match_spec(actions: &[String]) -> MatchSpec {
    MatchSpec {
        return_trace: actions.iter().any(|a| a == "return_trace"),
        exception_trace: actions.iter().any(|a| a == "exception_trace"),
        caller: actions.iter().any(|a| a == "caller"),
    }
}

/// A function as an observation names it: `"M:F/A"`, or `"top"` for [`TOP`] (the harness that
/// makes the scenario's calls: a `return_to` into it, or a `{caller}` that is it).
pub fn mfa_name(funcs: &[Mfa], f: usize) -> String {
    if f == TOP {
        return "top".into();
    }
    let m = &funcs[f];
    format!("{}:{}/{}", m.module, m.name, m.arity)
}

/// The function a `return_to` message or a `{caller}` names: `{M,F,A}` of the universe, or
/// `undefined` (no function: [`TOP`]).
pub fn func_of_term(funcs: &[Mfa], t: &Term) -> usize {
    if *t == Term::Atom("undefined") {
        return TOP;
    }
    funcs
        .iter()
        .position(|m| Term::mfa(m) == *t)
        .unwrap_or_else(|| panic!("{t} is not a function of the universe"))
}

/// `trace_info(_, match_spec)`'s term as an observation value: `[]`, or `{"actions": [...]}` for
/// `[{'_', [], [{A}, ...]}]`. `None` for any other shape.
pub fn ms_json(t: &Term) -> Option<Value> {
    let Term::List(clauses) = t else { return None };
    match clauses.as_slice() {
        [] => Some(Value::Array(vec![])),
        [Term::Tuple(c)] if c.len() == 3 && c[1] == Term::List(vec![]) => {
            let Term::List(body) = &c[2] else { return None };
            let caller = Term::Tuple(vec![
                Term::Atom("message"),
                Term::Tuple(vec![Term::Atom("caller")]),
            ]);
            let acts: Option<Vec<Value>> = body
                .iter()
                .map(|a| match a {
                    a if *a == caller => Some(Value::from("caller")),
                    Term::Tuple(x) if x.len() == 1 => match &x[0] {
                        Term::Atom(n) => Some(Value::from(*n)),
                        Term::Name(n) => Some(Value::from(n.clone())),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            let mut o = serde_json::Map::new();
            o.insert("actions".into(), Value::Array(acts?));
            Some(Value::Object(o))
        }
        _ => None,
    }
}

/// A returned value or an exception's `{Class, Reason}` as an observation value: an integer, an
/// atom (string), or `"class:reason"`.
pub fn value_json(t: &Term) -> Value {
    match t {
        Term::Int(i) => Value::from(*i),
        Term::Atom(a) => Value::from(*a),
        Term::Name(a) => Value::from(a.clone()),
        Term::Tuple(x) if x.len() == 2 => Value::from(format!("{}:{}", raw(&x[0]), raw(&x[1]))),
        other => Value::from(other.to_string()),
    }
}

/// An atom's name unquoted (as the Erlang driver's `~s`); other terms as `~w`.
fn raw(t: &Term) -> String {
    match t {
        Term::Atom(a) => a.to_string(),
        Term::Name(a) => a.clone(),
        other => other.to_string(),
    }
}

/// A frame's message as the runner's trace observation (`funcs`: the scenario's functions).
pub fn trace_msg(session: &str, process: &str, funcs: &[Mfa], m: &FrameMsg) -> TraceMsg {
    TraceMsg {
        session: session.into(),
        process: process.into(),
        event: match m.event {
            FrameEvent::ReturnFrom => "return_from",
            FrameEvent::ExceptionFrom => "exception_from",
            FrameEvent::ReturnTo => "return_to",
        }
        .into(),
        mfa: mfa_name(funcs, m.f),
        args: Value::Array(vec![]),
        value: match m.event {
            FrameEvent::ReturnFrom => Some(term_value(&m.value)),
            FrameEvent::ExceptionFrom => Some(value_json(&m.value)),
            FrameEvent::ReturnTo => None,
        },
    }
}

/// One delivered event: session, tag, tracee, term, fifth element.
pub type Logged = (SessionId, TraceTag, Term, Term, Option<Term>);

/// A tracer whose state is its session: every event goes to one shared log, so messages of
/// several sessions keep their delivery order.
struct SessionLog {
    log: Arc<Mutex<Vec<Logged>>>,
}

impl Tracer for SessionLog {
    fn enabled(&self, _tag: TraceTag, _state: &Term, _tracee: &Term) -> Enabled {
        Enabled::Trace
    }
    fn trace(&self, tag: TraceTag, state: &Term, tracee: &Term, term: &Term, o: &TraceOpts) {
        let Term::Int(s) = state else {
            panic!("SessionLog state is the session, got {state}")
        };
        let extra = o.extra.clone().or_else(|| o.match_spec_result.clone());
        self.log.lock().expect("log lock").push((
            *s as SessionId,
            tag,
            tracee.clone(),
            term.clone(),
            extra,
        ));
    }
}

/// The tracers of [`RefEngine`](crate::target::RefEngine): one log, a tracer per session.
#[derive(Clone, Default)]
pub struct Tracers {
    log: Arc<Mutex<Vec<Logged>>>,
}

impl Tracers {
    fn spec(&self, session: SessionId) -> TracerSpec {
        TracerSpec::new(
            Arc::new(SessionLog {
                log: self.log.clone(),
            }),
            Term::Int(session as i64),
        )
    }

    /// Give `proc` the call flag (and `return_to` where `return_to` says) and a tracer in each
    /// session of `call_traced`, and take them away elsewhere (`erlang:trace/3` with
    /// `{tracer, ...}`), so the engine's frames send.
    pub fn sync(&self, e: &Engine<Qsbr>, proc: &mut Proc, call_traced: u64, return_to: u64) {
        for s in 0..64u32 {
            let want = call_traced & (1u64 << s) != 0;
            let rt = return_to & (1u64 << s) != 0;
            let has = proc
                .tref(s)
                .is_some_and(|r| r.flags.call && r.flags.return_to == rt);
            if want && !has {
                let fl = ProcFlags {
                    call: true,
                    return_to: rt,
                    ..ProcFlags::default()
                };
                let ok = e
                    .trace_process(proc, s, true, fl, Some(self.spec(s)))
                    .unwrap_or_else(|err| panic!("trace_process in session {s}: {err}"));
                assert!(ok, "the session log tracer never answers remove");
            } else if !want && proc.tref(s).is_some() && !e.session_is_alive(s) {
                // The session was destroyed (sessions.rs): ERTS drops a process's reference to a
                // dead session when it next meets it; turning its flags off would be badarg.
                proc.detach(s);
            } else if !want && proc.tref(s).is_some() {
                e.trace_process(proc, s, false, ProcFlags::default(), None)
                    .unwrap_or_else(|err| panic!("trace_process off in session {s}: {err}"));
            }
        }
        assert_eq!(proc.p.call_traced, call_traced, "trace flags out of sync");
    }

    /// Everything delivered since the last take, in order.
    pub fn take(&self) -> Vec<Logged> {
        std::mem::take(&mut *self.log.lock().expect("log lock"))
    }

    /// The frames' messages delivered since the last take (`call` messages are counted by the
    /// caller from the engine's events and dropped here). `pid` must be the only tracee.
    pub fn take_frames(&self, funcs: &[Mfa], pid: u64) -> Vec<FrameMsg> {
        self.take()
            .into_iter()
            .filter(|l| l.1 != TraceTag::Call)
            .map(|(session, tag, tracee, term, extra)| {
                assert_eq!(tracee, Term::Pid(pid), "message about another process");
                let event = match tag {
                    TraceTag::ReturnFrom => FrameEvent::ReturnFrom,
                    TraceTag::ExceptionFrom => FrameEvent::ExceptionFrom,
                    TraceTag::ReturnTo => FrameEvent::ReturnTo,
                    other => panic!("unexpected trace message {} {term}", other.atom()),
                };
                let f: FuncId = func_of_term(funcs, &term);
                let value = match event {
                    FrameEvent::ReturnTo => Term::List(vec![]),
                    _ => extra.expect("return_from/exception_from carry a value"),
                };
                FrameMsg {
                    session,
                    event,
                    f,
                    value,
                }
            })
            .collect()
    }
}

/// A scenario term as the engine's term.
pub fn val_term(v: &crate::scenario::Val) -> Term {
    use crate::scenario::Val;
    match v {
        Val::Int(i) => Term::Int(*i),
        Val::Atom(a) => Term::Name(a.clone()),
        Val::Tuple(x) => Term::Tuple(x.iter().map(val_term).collect()),
        Val::List(x) => Term::List(x.iter().map(val_term).collect()),
    }
}

/// The engine's term as an observation value (docs/scenario.md, "Terms"): integers, atoms,
/// lists, `{"tuple": [...]}`.
pub fn term_value(t: &Term) -> Value {
    match t {
        Term::Int(i) => Value::from(*i),
        Term::Atom(a) => Value::from(*a),
        Term::Name(a) => Value::from(a.clone()),
        Term::List(x) => Value::Array(x.iter().map(term_value).collect()),
        Term::Tuple(x) => {
            let mut o = serde_json::Map::new();
            o.insert(
                "tuple".into(),
                Value::Array(x.iter().map(term_value).collect()),
            );
            Value::Object(o)
        }
        other => Value::from(other.to_string()),
    }
}
