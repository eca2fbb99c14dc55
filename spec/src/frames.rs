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
//! - FR6. `return_to` (process flag, ERTS `beam_return_to_trace`): a hit of a local breakpoint
//!   that sends `call` in a session where the process also has `return_to` pushes a return_to
//!   frame for that session first (below the same hit's return_trace frame), unless the trace
//!   frames on top already hold one of that session (a chain of tail calls sends one
//!   `return_to`). A return through it sends `return_to` with the function the return lands in
//!   (`TOP` when it is the harness). An exception that passes one sends, once caught, one
//!   `return_to` per session with the catching function, after the `exception_from`s
//!   (`next_catch` as of OTP 29; OTP 25 sent it only for a return_to frame of the outermost
//!   unwound call, the one the catching function made: docs/deviations.md, "return_to after
//!   an exception").
//!   Global (export entry) hits push none. Checked on OTP 25 and 29 by
//!   `oracle/corpus/return_to_*.json`.
//! - FR7. `{message, {caller}}` in the match spec: the call message carries where the call
//!   returns to, the function of the topmost continuation (`TOP` for the harness); after a tail
//!   call that is the function that made the last body call, not the tail caller.

use crate::timem::{Frame, MAX_STACK};
use crate::Oracle;
use bpspec_reference::{MatchSpec, Pattern, PatternOp, Term};
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
    /// `{trace, Pid, return_to, {M,F,A}}`: `f` is the function returned into ([`TOP`] for the
    /// harness); `value` is `[]`.
    ReturnTo,
}

/// The function "returned into" (or "caller") when it is no scenario function: the harness that
/// makes the scenario's calls (the Erlang driver's `bpspec_driver:calls/5`; ERTS's
/// `undefined` if there were none).
pub const TOP: usize = usize::MAX;

/// A message a frame sent: `{trace, Pid, return_from, {M,F,A}, Value}` or
/// `{trace, Pid, exception_from, {M,F,A}, {Class, Reason}}` (`value` holds the fifth element).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameMsg {
    pub session: u32,
    pub event: FrameEvent,
    pub f: usize,
    pub value: Term,
}

/// An exception `{Class, Reason}` raised in a process's current function and caught once
/// `through` continuations have unwound (FR4): the argument of [`Oracle::raise`] and of the
/// oracle trait's `raise` (oracle/src/target.rs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raise {
    pub class: &'static str,
    pub reason: Term,
    /// Continuations unwound, at least the raiser's own.
    pub through: usize,
}

impl Raise {
    /// `erlang:error(Reason)`, caught `through` continuations up.
    pub fn error(reason: Term, through: usize) -> Raise {
        Raise {
            class: "error",
            reason,
            through,
        }
    }
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

    /// FR7: does a call message of `f`'s local breakpoint in `session` carry the caller?
    pub(crate) fn caller(&self, f: usize, session: u32) -> bool {
        self.ms.get(&(f, session)).is_some_and(|m| m.caller)
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

/// FR6: what a return_to frame of `session` sends on a return into `to`.
pub(crate) fn on_return_to(session: u32, call_traced: u64, to: Option<usize>) -> Option<FrameMsg> {
    (call_traced & (1 << session) != 0).then(|| FrameMsg {
        session,
        event: FrameEvent::ReturnTo,
        f: to.unwrap_or(TOP),
        value: Term::List(vec![]),
    })
}

impl Oracle {
    /// `erlang:trace/3` with `return_to` on or off: the sessions of `pid` that have it (FR6).
    pub fn set_return_to(&mut self, pid: u64, call_traced: u64, sessions: u64) {
        self.proc(pid, call_traced).return_to = sessions;
    }

    /// FR7: the caller a call message of `f` in `session` carries, if its match spec asks for
    /// it: `Some(TOP)` for the harness. Asked right after the hit.
    pub fn caller(&self, f: usize, session: u32, pid: u64) -> Option<usize> {
        // Only a local breakpoint's match spec (global trace clears local trace; the stale
        // match spec stays in `frames` until a local pattern replaces or drops it).
        let local = self.nodes.get(&(f, session)).is_some_and(|n| n.local);
        if !local || !self.frames.caller(f, session) {
            return None;
        }
        let p = self.procs.get(&pid).expect("entered first");
        Some(p.conts.last().copied().flatten().unwrap_or(TOP))
    }

    /// The match spec of a `trace_pattern` (its flags applied and checked by
    /// [`Oracle::trace_pattern`]) on every matched function that has local trace now (FR5).
    pub(crate) fn set_match_spec(
        &mut self,
        session: u32,
        pat: &Pattern,
        op: PatternOp,
        ms: &MatchSpec,
    ) {
        if op != PatternOp::False {
            for f in self.matching(pat) {
                if self.nodes.get(&(f, session)).is_some_and(|n| n.local) {
                    self.frames.ms.insert((f, session), ms.clone());
                }
            }
        }
    }

    /// Return from the current function with `value`: the frames' messages, in order (FR3).
    pub fn ret_value(&mut self, pid: u64, call_traced: u64, value: &Term) -> Vec<FrameMsg> {
        self.ret_frames(pid, call_traced, value)
    }

    /// `{class, reason}` raised in `pid`'s current function unwinds `through` continuations
    /// (FR4); the exception_trace frames' messages, innermost first.
    pub fn raise(&mut self, pid: u64, call_traced: u64, e: &Raise) -> Vec<FrameMsg> {
        let through = e.through;
        assert!(through >= 1, "an exception unwinds at least the raiser");
        let v = Term::Tuple(vec![Term::Atom(e.class), e.reason.clone()]);
        let p = self.proc(pid, call_traced);
        assert!(p.running, "pid {pid} raises while scheduled out");
        let mut left = through;
        let mut msgs = Vec::new();
        let mut passed: Vec<u32> = Vec::new();
        for _ in 0..=MAX_STACK {
            match p.stack.pop() {
                None => panic!("pid {pid}: exception unwound past the bottom of the stack"),
                Some(Frame::Code) => {
                    p.current = p.conts.pop().expect("a continuation has its function");
                    left -= 1;
                    if left == 0 {
                        // FR6: once caught, one return_to per session whose frame it passed.
                        let to = p.current;
                        for s in passed {
                            msgs.extend(on_return_to(s, call_traced, to));
                        }
                        return msgs;
                    }
                }
                Some(Frame::RetTo(s)) => {
                    if !passed.contains(&s) {
                        passed.push(s);
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

    /// FR6: push a return_to frame of `session` unless the trace frames on top hold one.
    pub(crate) fn push_ret_to(&mut self, pid: u64, session: u32) {
        let p = self.procs.get_mut(&pid).expect("entered first");
        let already = p
            .stack
            .iter()
            .rev()
            .take_while(|fr| !matches!(fr, Frame::Code))
            .any(|fr| *fr == Frame::RetTo(session));
        if !already {
            assert!(p.stack.len() < MAX_STACK, "stack overflow (pid {pid})");
            p.stack.push(Frame::RetTo(session));
        }
    }

    /// FR1: push `rx` on `pid`'s stack (the process exists: it is entering).
    pub(crate) fn push_rx(&mut self, pid: u64, rx: Rx) {
        let reuse = self.frames.reuse;
        let p = self.procs.get_mut(&pid).expect("entered first");
        if reuse
            && matches!(
                p.stack.last(),
                Some(Frame::Rx(_) | Frame::Trace { .. } | Frame::RetTo(_))
            )
        {
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
