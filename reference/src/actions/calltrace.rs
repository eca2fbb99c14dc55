//! Call tracing on the scheduler side (ERTS `do_call_trace`, `erts_call_trace`,
//! `erts_trace_return`, `erts_trace_exception`, the `return_to` trace): the call message, the
//! match-spec actions `return_trace`, `exception_trace` and `{message, {caller}}`, the trace
//! frames they push, and what each frame sends when the function returns or an exception
//! unwinds through it. Plus per-process trace flags (`erlang:trace/3`) and the send event the
//! message-tracer example needs.
//!
//! Which tracer gets an event of session S (docs/sessions.md, S3): S's session tracer if it has
//! one, else the tracee's own tracer in S. Nothing is sent when S is not ALIVE, or the tracee
//! has no call flag in S (for call-category events), or has no tracer.

use crate::bp::SessionId;
use crate::engine::Engine;
use crate::hit::Scheduler;
use crate::pattern::{FlagSet, TraceFlags};
use crate::process::{Ci, Frame, ProcFlags, TraceRef};
use crate::progress::ThreadProgress;
use crate::session::SessionError;
use crate::term::Term;
use crate::tracer::{Enabled, TraceOpts, TraceTag, TracerSpec};
use crate::Proc;

/// A match spec's body actions (the head always matches: `[{'_', [], Actions}]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchSpec {
    /// `{return_trace}`.
    pub return_trace: bool,
    /// `{exception_trace}` (implies return_trace).
    pub exception_trace: bool,
    /// `{message, {caller}}`: the call message carries where the call returns to.
    pub caller: bool,
}

impl MatchSpec {
    pub const RETURN_TRACE: MatchSpec = MatchSpec {
        return_trace: true,
        exception_trace: false,
        caller: false,
    };
    pub const EXCEPTION_TRACE: MatchSpec = MatchSpec {
        return_trace: false,
        exception_trace: true,
        caller: false,
    };
    pub const CALLER: MatchSpec = MatchSpec {
        return_trace: false,
        exception_trace: false,
        caller: true,
    };

    /// The match spec as a term, for `trace_info(_, match_spec)`.
    pub fn to_term(&self) -> Term {
        let mut body = Vec::new();
        if self.return_trace {
            body.push(Term::Tuple(vec![Term::Atom("return_trace")]));
        }
        if self.exception_trace {
            body.push(Term::Tuple(vec![Term::Atom("exception_trace")]));
        }
        if self.caller {
            body.push(Term::Tuple(vec![
                Term::Atom("message"),
                Term::Tuple(vec![Term::Atom("caller")]),
            ]));
        }
        Term::List(vec![Term::Tuple(vec![
            Term::Atom("'_'"),
            Term::List(vec![]),
            Term::List(body),
        ])])
    }
}

/// `trace_pattern`'s full argument besides the pattern and the op: the session, the flags,
/// `global` (export breakpoints instead of local ones), an optional match spec (for local /
/// global) and `{meta, Tracer}`. Built with a small builder, e.g.
/// `TraceSpec::local().call_count().session(s)`; `TraceSpec::default()` is the legacy session
/// with no flag.
#[derive(Clone, Debug, Default)]
pub struct TraceSpec {
    /// The trace session (0: the legacy session).
    pub session: SessionId,
    pub flags: FlagSet,
    pub global: bool,
    pub ms: Option<MatchSpec>,
    /// `{meta, Tracer}` added to the flag list (`meta.rs`).
    pub meta: Option<TracerSpec>,
}

impl TraceSpec {
    /// The flag `local`.
    pub fn local() -> TraceSpec {
        TraceSpec::counters(FlagSet {
            local: true,
            ..FlagSet::default()
        })
    }
    /// The flag `global`.
    pub fn global() -> TraceSpec {
        TraceSpec {
            global: true,
            ..TraceSpec::default()
        }
    }
    /// The flags `flags` (local and the counters), no match spec.
    pub fn counters(flags: FlagSet) -> TraceSpec {
        TraceSpec {
            flags,
            ..TraceSpec::default()
        }
    }
    /// In trace session `session` (0: the legacy session).
    pub fn session(self, session: SessionId) -> TraceSpec {
        TraceSpec { session, ..self }
    }
    /// With the match spec `ms` (or none).
    pub fn ms(self, ms: Option<MatchSpec>) -> TraceSpec {
        TraceSpec { ms, ..self }
    }
    /// With `{meta, Tracer}`.
    pub fn meta(self, tracer: TracerSpec) -> TraceSpec {
        TraceSpec {
            meta: Some(tracer),
            ..self
        }
    }
    /// The flag `call_count` added.
    pub fn call_count(mut self) -> TraceSpec {
        self.flags.call_count = true;
        self
    }
    /// The flag `call_time` added.
    pub fn call_time(mut self) -> TraceSpec {
        self.flags.call_time = true;
        self
    }
    /// The flag `call_memory` added.
    pub fn call_memory(mut self) -> TraceSpec {
        self.flags.call_memory = true;
        self
    }
}

impl From<FlagSet> for TraceSpec {
    fn from(flags: FlagSet) -> TraceSpec {
        TraceSpec::counters(flags)
    }
}

impl From<TraceFlags> for TraceSpec {
    fn from(flags: TraceFlags) -> TraceSpec {
        TraceSpec::counters(flags.into())
    }
}

fn tracee(p: &Proc) -> Term {
    Term::Pid(p.p.pid)
}

/// Send one event of `session` about `proc` (D1/D2). Returns whether it was traced.
pub(crate) fn emit<P: ThreadProgress>(
    e: &Engine<P>,
    sched: usize,
    session: SessionId,
    proc: &mut Proc,
    tag: TraceTag,
    term: Term,
    mut opts: TraceOpts,
) -> bool {
    if !e.sessions.is_alive(session)
        && !crate::mutant::is(e.mutant, crate::Mutant::IgnoreSessionState)
    {
        return false;
    }
    let Some(r) = proc.tref(session) else {
        return false;
    };
    let fl = r.flags;
    opts.timestamp = fl.timestamp;
    if fl.scheduler_id {
        opts.scheduler_id = Some(sched);
    }
    let who = tracee(proc);
    let answer = if let Some(c) = e.sessions.tracer(session) {
        // The session tracer is shared by every scheduler: it is used in place (no copy), and
        // its liveness is checked again after the call, so a removal that freed it during the
        // call is caught (ST2 in docs/sessions.md).
        let a = c.spec.emit(tag, &who, &term, &opts);
        c.live
            .assert_live(&|| format!("session {session} tracer (after the call)"));
        a
    } else if let Some(t) = proc.tref(session).and_then(|r| r.tracer.clone()) {
        t.emit(tag, &who, &term, &opts)
    } else {
        return false;
    };
    match answer {
        Enabled::Trace => true,
        Enabled::Discard => false,
        Enabled::Remove => {
            proc.detach(session);
            false
        }
    }
}

/// `do_call_trace` for one session's LOCAL or GLOBAL breakpoint on `f`. Only a `local` hit
/// pushes a return_to frame: a global (export entry) hit sends its call message and nothing
/// returns to it (ERTS documents return_to for local trace only; OTP 25 and 29 send no
/// `return_to` for a globally traced call, `oracle/corpus/return_to_global_sends_none.json`).
pub(crate) fn do_call_trace<P: ThreadProgress>(
    e: &Engine<P>,
    sched: usize,
    session: SessionId,
    f: Ci,
    ms: Option<&MatchSpec>,
    proc: &mut Proc,
    local: bool,
) {
    let mfa = Term::mfa(e.mfa_of(f));
    let mut opts = TraceOpts::default();
    let ms = ms.cloned().unwrap_or_default();
    if ms.caller {
        // fixup_cp_before_trace: skip trace frames; report where the call returns to.
        opts.match_spec_result = Some(match proc.return_target() {
            Some(g) => Term::mfa(e.mfa_of(g)),
            None => Term::Atom("undefined"),
        });
    }
    if !emit(e, sched, session, proc, TraceTag::Call, mfa, opts) {
        return; // not enabled / discarded / removed: no frames either
    }
    let return_to = local && proc.tref(session).is_some_and(|r| r.flags.return_to);
    if return_to {
        let already = proc
            .stack
            .iter()
            .rev()
            .take_while(|fr| fr.is_trace_frame())
            .any(|fr| *fr == Frame::ReturnToTrace { session });
        if !already {
            proc.push(Frame::ReturnToTrace { session });
        }
    }
    if ms.return_trace || ms.exception_trace {
        proc.push(Frame::ReturnTrace {
            func: f,
            session,
            exception: ms.exception_trace,
        });
    }
}

/// The return path of a call-trace frame.
pub(crate) fn frame_return<P: ThreadProgress>(
    e: &Engine<P>,
    sched: usize,
    fr: Frame,
    value: &Term,
    proc: &mut Proc,
) {
    match fr {
        Frame::ReturnTrace { func, session, .. } => {
            if call_traced(proc, session) {
                let opts = TraceOpts {
                    extra: Some(value.clone()),
                    ..TraceOpts::default()
                };
                let mfa = Term::mfa(e.mfa_of(func));
                emit(e, sched, session, proc, TraceTag::ReturnFrom, mfa, opts);
            }
        }
        Frame::ReturnToTrace { session } => {
            if call_traced(proc, session) {
                let to = match proc.return_target() {
                    Some(g) => Term::mfa(e.mfa_of(g)),
                    None => Term::Atom("undefined"),
                };
                emit(
                    e,
                    sched,
                    session,
                    proc,
                    TraceTag::ReturnTo,
                    to,
                    TraceOpts::default(),
                );
            }
        }
        _ => unreachable!("not a call-trace frame"),
    }
}

fn call_traced(proc: &Proc, session: SessionId) -> bool {
    proc.tref(session).is_some_and(|r| r.flags.call)
}

impl<P: ThreadProgress> Scheduler<P> {
    /// Return from the current function with `value` (rendered in `return_from`).
    pub fn ret_with(&mut self, proc: &mut Proc, value: Term) {
        self.unwind(proc, Unwind::Return(value));
    }

    /// Raise `{Class, Reason}` in the current function; it unwinds `through` functions and is
    /// caught in the function the last of them returns into. `exception_from` is sent by every
    /// exception_trace frame on the way; return_trace frames and call_time/call_memory return
    /// frames are dropped (not charged). If a return_to frame of a session was passed, that
    /// session gets one `return_to` for the catching function once the exception is caught
    /// (ERTS `next_catch` as of OTP 29; OTP 25 only for the outermost unwound call's frames,
    /// docs/deviations.md; checked against OTP 25 by `tests/tests/otp_frames.rs`, on OTP 25
    /// and 29 by the oracle's corpus).
    pub fn raise(&mut self, proc: &mut Proc, class: &'static str, reason: Term, through: usize) {
        assert!(
            through >= 1,
            "an exception unwinds at least the raising function"
        );
        let v = Term::Tuple(vec![Term::Atom(class), reason]);
        // Every return_to frame passed counts, also one passed before an untraced
        // continuation, as OTP 29 does; OTP 25's `next_catch` counted only the outermost
        // unwound call's (docs/deviations.md, "return_to after an exception";
        // `oracle/corpus/return_to_exception_through_untraced_caller*.json`).
        let mut passed: Vec<SessionId> = Vec::new();
        for _ in 0..through {
            for s in self.unwind(proc, Unwind::Exception(v.clone())) {
                if !passed.contains(&s) {
                    passed.push(s);
                }
            }
        }
        let id = self.id;
        let e = self.engine();
        for session in passed {
            if call_traced(proc, session) {
                let to = match proc.current {
                    Some(g) => Term::mfa(e.mfa_of(g)),
                    None => Term::Atom("undefined"),
                };
                emit(
                    e,
                    id,
                    session,
                    proc,
                    TraceTag::ReturnTo,
                    to,
                    TraceOpts::default(),
                );
            }
        }
    }

    /// Pop frames down to and including the next continuation. Returns the sessions whose
    /// return_to frames an exception passed.
    pub(crate) fn unwind(&mut self, proc: &mut Proc, how: Unwind) -> Vec<SessionId> {
        assert!(
            proc.running,
            "pid {} returned while not scheduled in",
            proc.p.pid
        );
        let id = self.id;
        let mut passed = Vec::new();
        let mut steps = 0;
        loop {
            steps += 1;
            assert!(steps <= crate::process::MAX_STACK, "return unwound too far");
            let Some(fr) = proc.stack.pop() else {
                panic!("pid {} returned with an empty stack", proc.p.pid)
            };
            match (fr, &how) {
                (Frame::Code, _) => {
                    proc.current = proc.conts.pop().expect("continuation without its function");
                    return passed;
                }
                // ERTS `next_catch` steps over a call_time/call_memory return frame without
                // charging it (`BeamIsReturnCallAccTrace`: skip): the raiser stays the charged
                // function (docs/deviations.md). Checked against the sequential oracle by
                // `oracle/tests/conformance.rs` (raises with call_time in flight).
                (Frame::CallTraceReturn { .. }, Unwind::Exception(_)) => {}
                (
                    Frame::CallTraceReturn {
                        prev,
                        prev_memory,
                        flags,
                        session,
                    },
                    _,
                ) => self.trace_return_frame([prev, prev_memory], flags, session, proc),
                (Frame::ReturnTrace { .. } | Frame::ReturnToTrace { .. }, Unwind::Return(v)) => {
                    frame_return(self.engine(), id, fr, v, proc)
                }
                (
                    Frame::ReturnTrace {
                        func,
                        session,
                        exception: true,
                    },
                    Unwind::Exception(v),
                ) => {
                    if call_traced(proc, session) {
                        let e = self.engine();
                        let opts = TraceOpts {
                            extra: Some(v.clone()),
                            ..TraceOpts::default()
                        };
                        let mfa = Term::mfa(e.mfa_of(func));
                        emit(e, id, session, proc, TraceTag::ExceptionFrom, mfa, opts);
                    }
                }
                (Frame::ReturnToTrace { session }, Unwind::Exception(_)) => passed.push(session),
                (Frame::ReturnTrace { .. }, Unwind::Exception(_)) => {}
            }
        }
    }

    /// `send` from `proc` to `to` (the send trace event; the message itself is not modelled).
    pub fn send(&mut self, proc: &mut Proc, to: u64, msg: Term) {
        let e = self.engine();
        let id = self.id;
        let sessions: Vec<SessionId> = proc
            .refs
            .iter()
            .filter(|r| r.flags.send)
            .map(|r| r.session)
            .collect();
        for s in sessions {
            let opts = TraceOpts {
                extra: Some(Term::Pid(to)),
                ..TraceOpts::default()
            };
            emit(e, id, s, proc, TraceTag::Send, msg.clone(), opts);
        }
    }
}

/// How a function is left.
pub(crate) enum Unwind {
    Return(Term),
    Exception(Term),
}

impl<P: ThreadProgress> Engine<P> {
    /// `erlang:trace(Pid, How, Flags)` in `session` with an optional per-process tracer.
    /// Turning on asks the tracer `trace_status` first (D3): `remove` means tracing does not
    /// start (`Ok(false)`). A per-process tracer is refused in a session with a session tracer.
    pub fn trace_process(
        &self,
        proc: &mut Proc,
        session: SessionId,
        on: bool,
        flags: ProcFlags,
        tracer: Option<TracerSpec>,
    ) -> Result<bool, SessionError> {
        self.check_session(session)?;
        if !on {
            proc.detach(session);
            return Ok(true);
        }
        if tracer.is_some() && self.sessions.tracer(session).is_some() {
            return Err(SessionError::TracerConflict { session });
        }
        let tracer = tracer.or_else(|| proc.tref(session).and_then(|r| r.tracer.clone()));
        let who = Term::Pid(proc.p.pid);
        let status = match (&tracer, self.sessions.tracer(session)) {
            (Some(t), _) => t.enabled(TraceTag::TraceStatus, &who),
            (None, Some(c)) => c.spec.enabled(TraceTag::TraceStatus, &who),
            (None, None) => Enabled::Trace, // no tracer yet: flags only (nothing is sent)
        };
        if status == Enabled::Remove {
            proc.detach(session);
            return Ok(false);
        }
        proc.refs.retain(|r| r.session != session);
        proc.refs.push(TraceRef {
            session,
            flags,
            tracer,
        });
        if flags.call {
            proc.p.call_traced |= 1u64 << session;
        } else {
            proc.p.call_traced &= !(1u64 << session);
        }
        Ok(true)
    }

    /// `trace_info(Pid, tracer)` in `session`: asks `trace_status` (D3), and detaches a tracer
    /// that answers `remove`. `Ok(None)` when the process has no tracer there.
    pub fn process_tracer(
        &self,
        proc: &mut Proc,
        session: SessionId,
    ) -> Result<Option<TracerSpec>, SessionError> {
        self.check_session(session)?;
        let Some(t) = proc.tref(session).and_then(|r| r.tracer.clone()) else {
            return Ok(None);
        };
        if t.enabled(TraceTag::TraceStatus, &Term::Pid(proc.p.pid)) == Enabled::Remove {
            proc.detach(session);
            return Ok(None);
        }
        Ok(Some(t))
    }
}
