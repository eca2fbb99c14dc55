//! return_trace and exception_trace in the sequential oracle: the match spec of each local
//! breakpoint (`[{'_', [], Actions}]`, only its actions matter), the trace frame a hit pushes,
//! and the `return_from` / `exception_from` messages the frames send when the function returns or
//! an exception passes. The frames live on the process's stack beside the call_time/call_memory
//! return frames (timem.rs), because ERTS decides from the top of that one stack.
//!
//! The rules, in ERTS's terms (`do_call_trace`, `erts_trace_return`, `erts_trace_exception`,
//! `next_catch`; erts-notes §3, checked on OTP 25 by `oracle/corpus/return_trace_order.json` and
//! `exception_trace_order.json`):
//! - FR1. A hit of a local breakpoint whose match spec has `return_trace` or `exception_trace`,
//!   by a process call-traced in that session, sends `call` and pushes one frame
//!   `{f, session, exception}` (`beam_return_trace` / `beam_exception_trace`). Every entry
//!   pushes, tail calls included: a tail call from a return-traced function keeps the caller's
//!   frame below the callee's, so both send `return_from` with the callee's value (the match spec
//!   makes the function body non-tail-recursive, as ERTS documents).
//! - FR2. The frame is pushed before the call_time/call_memory step of the same breakpoint, so
//!   that step finds a trace frame on top and pushes no return frame of its own (the
//!   "top is already a trace frame" test of `erts_generic_breakpoint`).
//! - FR3. A return runs the frames on top of the continuation, top first: each sends
//!   `return_from {M,F,A} Value` if the process is still call-traced in the frame's session.
//! - FR4. An exception unwinds `through` continuations: an `exception_trace` frame sends
//!   `exception_from {M,F,A} {Class,Reason}` (same condition); a `return_trace` frame and a
//!   call_time/call_memory frame are dropped silently (`next_catch`).
//! - FR5. A `trace_pattern` with `local` and no match spec (`true`, `pause`, `restart`) drops the
//!   function's match spec; one with a match spec replaces it. A match spec needs `local` (or
//!   `global`, not modelled here): with only counter flags it is `badarg`.

use crate::timem::{Frame, MAX_STACK};
use crate::Oracle;
use bpspec_reference::{FlagSet, MatchSpec, Pattern, PatternError, PatternOp, Term};
use std::collections::BTreeMap;

/// One trace frame on a process's stack (FR1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rx {
    pub f: usize,
    pub session: u32,
    /// `beam_exception_trace` (else `beam_return_trace`).
    pub exception: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameEvent {
    ReturnFrom,
    ExceptionFrom,
}

/// A message a frame sent: `{trace, Pid, return_from, {M,F,A}, Value}` or
/// `{trace, Pid, exception_from, {M,F,A}, {Class, Reason}}` (`value` holds the fifth element).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameMsg {
    pub session: u32,
    pub event: FrameEvent,
    pub f: usize,
    pub value: Term,
}

/// The match specs of local breakpoints, per `(function, session)`.
#[derive(Clone, Debug, Default)]
pub struct Frames {
    ms: BTreeMap<(usize, u32), MatchSpec>,
    /// The mutant of `Wrong::TailCallReusesReturnFrame` (oracle/src/target.rs): no frame is
    /// pushed when the top of the stack already is a trace frame.
    reuse: bool,
}

impl Frames {
    /// FR5: a `local` trace_pattern without a match spec.
    pub(crate) fn forget(&mut self, f: usize, session: u32) {
        self.ms.remove(&(f, session));
    }

    /// The frame a hit of `f`'s local breakpoint in `session` pushes, if any (FR1).
    pub(crate) fn rx(&self, f: usize, session: u32) -> Option<Rx> {
        let m = self.ms.get(&(f, session))?;
        (m.return_trace || m.exception_trace).then_some(Rx {
            f,
            session,
            exception: m.exception_trace,
        })
    }

    /// `trace_info(_, match_spec)` of a locally traced function.
    pub(crate) fn ms_term(&self, f: usize, session: u32) -> Term {
        self.ms
            .get(&(f, session))
            .map_or(Term::List(vec![]), MatchSpec::to_term)
    }
}

/// FR3: what frame `rx` sends on a return with `value`.
pub(crate) fn on_return(rx: Rx, call_traced: u64, value: &Term) -> Option<FrameMsg> {
    (call_traced & (1 << rx.session) != 0).then(|| FrameMsg {
        session: rx.session,
        event: FrameEvent::ReturnFrom,
        f: rx.f,
        value: value.clone(),
    })
}

impl Oracle {
    /// `trace_pattern` with a match spec (op `true`): the flags as `trace_pattern_flags`, then
    /// the match spec on every matched function that has local trace now (FR5).
    pub fn trace_pattern_ms(
        &mut self,
        session: u32,
        pat: &Pattern,
        op: PatternOp,
        fl: FlagSet,
        ms: &MatchSpec,
    ) -> Result<usize, PatternError> {
        assert!(
            !ms.caller,
            "{{message, {{caller}}}} is not modelled by the oracle"
        );
        fl.check(op)?;
        if !fl.local {
            return Err(PatternError::BadArg(
                "a match spec needs local or global (not only call_count/time/memory)".into(),
            ));
        }
        let n = self.trace_pattern_flags(session, pat, op, fl)?;
        if op != PatternOp::False {
            for f in pat.matching(&self.funcs) {
                if self.nodes.get(&(f, session)).is_some_and(|n| n.local) {
                    self.frames.ms.insert((f, session), ms.clone());
                }
            }
        }
        Ok(n)
    }

    /// Return from the current function with `value`: the frames' messages, in order (FR3).
    pub fn ret_value(&mut self, pid: u64, call_traced: u64, value: &Term) -> Vec<FrameMsg> {
        self.ret_frames(pid, call_traced, value)
    }

    /// `{class, reason}` raised in `pid`'s current function unwinds `through` continuations
    /// (FR4); the exception_trace frames' messages, innermost first.
    pub fn raise(
        &mut self,
        pid: u64,
        call_traced: u64,
        class: &'static str,
        reason: &Term,
        through: usize,
    ) -> Vec<FrameMsg> {
        assert!(through >= 1, "an exception unwinds at least the raiser");
        let v = Term::Tuple(vec![Term::Atom(class), reason.clone()]);
        let p = self.proc(pid, call_traced);
        assert!(p.running, "pid {pid} raises while scheduled out");
        let mut left = through;
        let mut msgs = Vec::new();
        for _ in 0..=MAX_STACK {
            match p.stack.pop() {
                None => panic!("pid {pid}: exception unwound past the bottom of the stack"),
                Some(Frame::Code) => {
                    left -= 1;
                    if left == 0 {
                        return msgs;
                    }
                }
                // `next_catch`: call_time/call_memory frames are skipped, not charged.
                Some(Frame::Trace { .. }) => {}
                Some(Frame::Rx(rx)) => {
                    if rx.exception && call_traced & (1 << rx.session) != 0 {
                        msgs.push(FrameMsg {
                            session: rx.session,
                            event: FrameEvent::ExceptionFrom,
                            f: rx.f,
                            value: v.clone(),
                        });
                    }
                }
            }
        }
        panic!("pid {pid}: exception unwound more than {MAX_STACK} frames");
    }

    /// FR1: push `rx` on `pid`'s stack (the process exists: it is entering).
    pub(crate) fn push_rx(&mut self, pid: u64, rx: Rx) {
        let reuse = self.frames.reuse;
        let p = self.procs.get_mut(&pid).expect("entered first");
        if reuse && matches!(p.stack.last(), Some(Frame::Rx(_) | Frame::Trace { .. })) {
            return; // the mutant: a tail call "reuses" the frame below
        }
        assert!(p.stack.len() < MAX_STACK, "stack overflow (pid {pid})");
        p.stack.push(Frame::Rx(rx));
    }

    /// Deliberately wrong (for the conformance harness's mutant oracle only): a tail call
    /// into a return-traced function pushes no frame when one is already on top, as the
    /// call_time frame does. Violates FR1.
    pub fn mutant_reuse_trace_frame(&mut self) {
        self.frames.reuse = true;
    }
}
