//! A process with the state call_time and call_memory need (ERTS process-specific data and
//! stack): one `pbt` per session and kind (`process_breakpoint_trace_t`), a simulated call
//! stack, and a memory counter tests advance.
//!
//! The stack holds [`Frame`]s: continuations, the call-time/memory return frame
//! (`beam_call_trace_return`), and the call-trace frames (`beam_return_trace`,
//! `beam_exception_trace`, `beam_return_to_trace`). [`Frame::is_trace_frame`] is where the hit
//! path asks "is the top frame already a trace frame?". Trace frames hold a function id and a
//! session id, never a pointer into a breakpoint or a session, so a frame outlives the
//! breakpoint that pushed it and the session it belongs to (docs/sessions.md, S6).
//!
//! Per session the process also has a [`TraceRef`] (ERTS `ErtsTracerRef`): its trace flags and
//! its tracer.

use crate::bp::SessionId;
use crate::code::FuncId;
use crate::export::Area;
use crate::hit::Process;
use crate::tracer::TracerSpec;

/// `const ErtsCodeInfo *ci`: a function and the code area it lives in (the engine's code, or a
/// loaded version's code area, [`Area::Version`]). A charge looks the function's breakpoint up
/// again through it (`get_timem_break`), never through a counter pointer kept from the hit.
///
/// A `Ci` naming a version is held by a pbt or a return frame only while the process executes
/// in that version (`CodeVersion::in_code` counts it: a scheduler's process, `calls.rs`, enters the
/// version before its hit and runs its return frames before it leaves), so purge, which refuses
/// while `in_code` is not zero and then waits for thread progress, never frees a version that a
/// later charge reads (docs/readers.md, the timem readers across versions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ci {
    pub area: Area,
    pub f: FuncId,
}

impl Ci {
    /// Function `f` of the engine's own code area.
    pub fn code(f: FuncId) -> Ci {
        Ci {
            area: Area::Code,
            f,
        }
    }

    /// Function `f` of module `m` (its index in the engine's module table), whichever version
    /// ([`Area::Module`]): a name that outlives a version, for the messages' MFA only. The
    /// charge code never takes it (`calltime.rs::get_timem_break` asserts so).
    pub fn module(m: usize, f: FuncId) -> Ci {
        Ci {
            area: Area::Module(m),
            f,
        }
    }
}

/// `process_breakpoint_trace_t`: the function being charged and its baseline (a timestamp or
/// an allocated-words figure). Holds a code info, never a counter pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pbt {
    pub session: SessionId,
    pub ci: Option<Ci>,
    pub accumulator: i64,
}

/// One stack frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A continuation pushed by a body call: returning lands here in the caller.
    Code,
    /// `beam_call_trace_return`, pushed by a call_time/call_memory breakpoint unless the top
    /// frame already is a trace frame: `E[1] = prev_info`, `E[2] = bp_flags`, `E[3] = session`.
    /// ERTS keeps one `prev_info` for both kinds (`prev` and `prev_memory` are then equal); the
    /// `ctm-two-prev-slots` variant keeps one per kind (docs/erts-findings/ctm-segfault.md).
    CallTraceReturn {
        prev: Option<Ci>,
        prev_memory: Option<Ci>,
        flags: u32,
        session: SessionId,
    },
    /// `beam_return_trace` / `beam_exception_trace` (match-spec `return_trace` /
    /// `exception_trace`): `return_from` on return; with `exception`, also `exception_from` when
    /// an exception unwinds through it.
    ReturnTrace {
        /// The traced function, by its code info (a loaded version's function while the
        /// process is in that version, as a pbt's [`Ci`]).
        func: Ci,
        session: SessionId,
        exception: bool,
    },
    /// `beam_return_to_trace` (process flag `return_to`): `return_to` with the function returned
    /// into.
    ReturnToTrace { session: SessionId },
}

impl Frame {
    /// `BeamIsReturnTrace || BeamIsReturnToTrace || BeamIsReturnCallAccTrace`.
    pub fn is_trace_frame(&self) -> bool {
        match self {
            Frame::Code => false,
            Frame::CallTraceReturn { .. }
            | Frame::ReturnTrace { .. }
            | Frame::ReturnToTrace { .. } => true,
        }
    }
}

/// Limit on the simulated stack (TigerBeetle: every loop and structure bounded).
pub const MAX_STACK: usize = 1 << 16;

/// A process: identity and trace flags ([`Process`]), pbts, stack, and allocated words.
#[derive(Clone, Debug)]
pub struct Proc {
    pub p: Process,
    /// `ERTS_PSD_CALL_TIME_BP`: one pbt per session, newest first.
    pub time: Vec<Pbt>,
    /// `ERTS_PSD_CALL_MEMORY_BP`.
    pub memory: Vec<Pbt>,
    pub stack: Vec<Frame>,
    /// Words allocated so far (the call_memory clock); tests advance it with [`Proc::alloc`].
    pub allocated: i64,
    /// Is the process running on a scheduler (between schedule_in and schedule_out)?
    pub running: bool,
    /// The function executing now (`None` before the first call), by its code info.
    pub current: Option<Ci>,
    /// For each [`Frame::Code`] on the stack, bottom to top: the function it returns into.
    pub conts: Vec<Option<Ci>>,
    /// Per-session trace flags and tracer (`ErtsTracerRef`), one per session at most.
    pub refs: Vec<TraceRef>,
    /// Calls this process counted into call_time and call_memory objects (one per object per
    /// call, `erts_trace_call_acc`): what the count conservation checks compare the objects'
    /// counts with (`load.rs` `total_timed`). Not ERTS state.
    pub timem_calls: u64,
}

/// Per-process, per-session trace flags (`erlang:trace/3` flags this engine implements).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcFlags {
    /// `call`: required for local, global, call_time and call_memory (not for call_count or
    /// meta).
    pub call: bool,
    /// `return_to`.
    pub return_to: bool,
    /// `send`.
    pub send: bool,
    /// `timestamp` / `monotonic_timestamp` / `strict_monotonic_timestamp`: the opts key.
    pub timestamp: Option<&'static str>,
    /// `scheduler_id`.
    pub scheduler_id: bool,
}

/// `ErtsTracerRef`: one session's view of the process.
#[derive(Clone, Debug)]
pub struct TraceRef {
    pub session: SessionId,
    pub flags: ProcFlags,
    /// The per-process tracer; `None` in a session whose tracer is the session tracer.
    pub tracer: Option<TracerSpec>,
}

impl Proc {
    pub fn new(p: Process) -> Proc {
        Proc {
            p,
            time: Vec::new(),
            memory: Vec::new(),
            stack: Vec::new(),
            allocated: 0,
            running: false,
            current: None,
            conts: Vec::new(),
            refs: Vec::new(),
            timem_calls: 0,
        }
    }

    /// `get_tracer_ref`.
    pub fn tref(&self, session: SessionId) -> Option<&TraceRef> {
        self.refs.iter().find(|r| r.session == session)
    }

    /// Detach the process from `session` (flags and tracer), as `remove` does.
    pub fn detach(&mut self, session: SessionId) {
        self.refs.retain(|r| r.session != session);
        self.p.call_traced &= !(1u64 << session);
    }

    /// A body call's continuation: returning lands in the current function.
    pub fn push_cont(&mut self) {
        self.push(Frame::Code);
        self.conts.push(self.current);
    }

    /// Where the current function will return to (`{caller}`): the function of the topmost
    /// continuation, skipping trace frames. Not always the caller: tail calls reuse the
    /// continuation of the function that made the last body call.
    pub fn return_target(&self) -> Option<Ci> {
        self.conts.last().copied().flatten()
    }

    /// Allocate `words` on the heap (advances the memory clock).
    pub fn alloc(&mut self, words: i64) {
        assert!(words >= 0, "allocation of {words} words");
        self.allocated += words;
    }

    pub(crate) fn pbt(list: &mut [Pbt], session: SessionId) -> Option<&mut Pbt> {
        list.iter_mut().find(|b| b.session == session)
    }

    pub(crate) fn push(&mut self, f: Frame) {
        assert!(
            self.stack.len() < MAX_STACK,
            "stack overflow (pid {})",
            self.p.pid
        );
        self.stack.push(f);
    }
}
