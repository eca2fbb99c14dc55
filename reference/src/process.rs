//! A process with the state call_time and call_memory need (ERTS process-specific data and
//! stack): one `pbt` per session and kind (`process_breakpoint_trace_t`), a simulated call
//! stack, and a memory counter tests advance.
//!
//! The stack holds [`Frame`]s. Only the call-time/memory return frame
//! (`beam_call_trace_return`) exists today; return_trace, exception_trace and return_to frames
//! (issue 5) become further variants, and [`Frame::is_trace_frame`] is where the hit path asks
//! "is the top frame already a trace frame?".

use crate::bp::SessionId;
use crate::code::FuncId;
use crate::hit::Process;

/// `process_breakpoint_trace_t`: the function being charged and its baseline (a timestamp or
/// an allocated-words figure). Holds a function id, never a counter pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pbt {
    pub session: SessionId,
    pub ci: Option<FuncId>,
    pub accumulator: i64,
}

/// One stack frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A continuation pushed by a body call: returning lands here in the caller.
    Code,
    /// `beam_call_trace_return`, pushed by a call_time/call_memory breakpoint unless the top
    /// frame already is a trace frame: `E[1] = prev_info`, `E[2] = bp_flags`, `E[3] = session`.
    CallTraceReturn {
        prev: Option<FuncId>,
        flags: u32,
        session: SessionId,
    },
}

impl Frame {
    /// `BeamIsReturnTrace || BeamIsReturnToTrace || BeamIsReturnCallAccTrace`.
    pub fn is_trace_frame(&self) -> bool {
        match self {
            Frame::Code => false,
            Frame::CallTraceReturn { .. } => true,
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
        }
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
