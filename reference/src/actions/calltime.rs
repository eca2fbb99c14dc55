//! The scheduler side of call_time and call_memory (ERTS `erts_trace_call_acc`,
//! `erts_call_trace_return`, `erts_schedule_time_break`): charge the function a process is in,
//! switch the pbt to the next one, push / pop the return frame, and charge on schedule-out.
//!
//! Every counter is reached through `g->data[active]` at the moment of the charge
//! ([`get_timem_break`]), never through a pointer kept across a progress point: pbts and frames
//! hold function ids only.

use crate::bp::{flags, SessionId};
use crate::code::FuncId;
use crate::engine::Engine;
use crate::hit::Scheduler;
use crate::ordering::Site;
use crate::process::{Ci, Frame, Pbt, Proc};
use crate::progress::ThreadProgress;
use crate::readers::{self, Reader};
use crate::sync::{
    lock, ord,
    Ordering::{Acquire, Relaxed},
};
use crate::timem::{BpTimemTrace, DeadHashes};
use crate::Mutant;

/// Which counter of a breakpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Time,
    Memory,
}

impl Kind {
    /// The "exists" bit (`check_break` needs only this, not `_ACTIVE`).
    pub fn flag(self) -> u32 {
        match self {
            Kind::Time => flags::TIME_TRACE,
            Kind::Memory => flags::MEM_TRACE,
        }
    }
    pub fn active_flag(self) -> u32 {
        match self {
            Kind::Time => flags::TIME_TRACE_ACTIVE,
            Kind::Memory => flags::MEM_TRACE_ACTIVE,
        }
    }
}

/// What one scheduler needs to charge: its slot (`acquire_bp_sched_ix`), its clock, and where
/// its rehashed tables go.
pub(crate) struct Charger<'a, P: ThreadProgress> {
    pub engine: &'a Engine<P>,
    /// The scheduler's id (for the history).
    pub id: usize,
    pub six: usize,
    pub dirty: bool,
    pub now: i64,
    pub dead: &'a mut DeadHashes,
}

/// `get_time_break` / `get_memory_break`: `session`'s counter on `ci` through the active half,
/// or null if the function has no such counter any more ("breakpoint was removed"). The pointer
/// is valid until this scheduler's next progress point. `ci` names the engine's code area or a
/// loaded version's: the version is live because the process is in it (`Ci`'s contract).
pub(crate) fn get_timem_break<P: ThreadProgress>(
    e: &Engine<P>,
    sched: usize,
    session: SessionId,
    ci: Ci,
    kind: Kind,
) -> *const BpTimemTrace {
    // A module's name (`Ci::module`) names no breakpoint: what a process charges names a code
    // area (the static area or a live version), never a name kept past a version.
    assert!(
        !matches!(ci.area, crate::export::Area::Module(_)),
        "charge of {ci:?}: a module's name (Area::Module) is not chargeable"
    );
    if matches!(
        ci.area,
        crate::export::Area::Code | crate::export::Area::Export
    ) {
        e.static_entry("a charge");
    }
    let f = ci.f;
    // Acquire: pairs with the Release store of a fresh node into an unpatched function's slot
    // (`stage.rs`): this reader does not go through the instruction word, so no wait orders the
    // node's initialisation before it (finding F3). The node's staging half, written after the
    // Release store, is read here only once `active_bp_index` names it, after T3, so after W1
    // (G-seen; docs/protocol.md I2.13-I2.19). Nodes reached through `next` were linked at
    // install, after W0, and are ordered by thread progress (G).
    let mut g = readers::load_slot(
        Reader::TimemCharge,
        &e.area(ci.area).funcs[f].gen_bp,
        ord(e.mutant, Site::TimemSlotLoad, Acquire),
    );
    // SAFETY: just loaded from the slot (history::node_id's contract).
    e.history.record(|| crate::history::Event::TimemSlot {
        sched,
        func: f,
        node: unsafe { crate::history::node_id(g) },
    });
    let mut steps = 0;
    while !g.is_null() {
        steps += 1;
        assert!(steps <= crate::MAX_CHAIN, "chain too long");
        // SAFETY: read from the slot or a `next` link while this scheduler is between progress
        // points; a node is freed only after W4 (I1, docs/protocol.md).
        let node = unsafe { &*g };
        if node.session == session {
            let ix = readers::active_ix(Reader::TimemCharge, &e.active_bp_index, Relaxed);
            e.history
                .record(|| crate::history::Event::TimemIx { sched, ix });
            let ix = ix as usize;
            return readers::read_half(Reader::TimemCharge, node, ix, |bp| {
                let o = match kind {
                    Kind::Time => &bp.time,
                    Kind::Memory => &bp.memory,
                };
                match o {
                    Some(t) if bp.flags & kind.flag() != 0 => std::sync::Arc::as_ptr(t),
                    _ => std::ptr::null(),
                }
            });
        }
        g = readers::load_next(Reader::TimemCharge, &node.next, Relaxed);
        // SAFETY: just loaded from a `next` link (history::node_id's contract).
        e.history.record(|| crate::history::Event::TimemNext {
            sched,
            node: node.id,
            next: unsafe { crate::history::node_id(g) },
        });
    }
    std::ptr::null()
}

impl<P: ThreadProgress> Charger<'_, P> {
    /// Add `(count, acc)` for `pid` to `t` in this scheduler's slot (the shared slot under the
    /// dirty lock for a dirty scheduler).
    fn add(&mut self, t: &BpTimemTrace, pid: u64, count: i64, acc: i64) {
        if self.dirty {
            let _g = lock(&self.engine.dirty_bp_mtx);
            t.accum(self.six, pid, count, acc, self.dead);
        } else {
            t.accum(self.six, pid, count, acc, self.dead);
        }
    }

    fn add_to_break(&mut self, session: SessionId, f: Ci, kind: Kind, pid: u64, acc: i64) {
        let t = get_timem_break(self.engine, self.id, session, f, kind);
        // SAFETY: see get_timem_break; used before this scheduler's next progress point.
        if let Some(t) = unsafe { t.as_ref() } {
            self.add(t, pid, 0, acc);
        }
    }

    /// `erts_trace_call_acc` for one kind: charge the previous function, count this call,
    /// switch the pbt to `f`. Returns the previous function.
    fn call_acc(
        &mut self,
        kind: Kind,
        session: SessionId,
        f: Ci,
        accum: i64,
        t: &BpTimemTrace,
        proc: &mut Proc,
    ) -> Option<Ci> {
        let pid = proc.p.pid;
        let list = match kind {
            Kind::Time => &mut proc.time,
            Kind::Memory => &mut proc.memory,
        };
        let prev = match Proc::pbt(list, session) {
            None => {
                list.insert(
                    0,
                    Pbt {
                        session,
                        ci: None,
                        accumulator: accum,
                    },
                );
                None
            }
            Some(b) => b.ci.map(|ci| (ci, accum - b.accumulator)),
        };
        if let Some((ci, delta)) = prev {
            self.add_to_break(session, ci, kind, pid, delta);
        }
        self.add(t, pid, 1, 0);
        proc.timem_calls += 1;
        let list = match kind {
            Kind::Time => &mut proc.time,
            Kind::Memory => &mut proc.memory,
        };
        let b = Proc::pbt(list, session).expect("pbt exists");
        let old = b.ci;
        b.ci = Some(f);
        b.accumulator = accum;
        old
    }

    /// Step 7 of `do_session_breakpoint`: time then memory, then the return frame unless the top
    /// frame already is a trace frame (ERTS keeps the memory call's `prev_info` when both run).
    pub(crate) fn breakpoint(
        &mut self,
        session: SessionId,
        f: Ci,
        bp_flags: u32,
        time: Option<&BpTimemTrace>,
        mem: Option<&BpTimemTrace>,
        proc: &mut Proc,
    ) {
        assert!(
            proc.running,
            "pid {} hit a breakpoint while not scheduled in",
            proc.p.pid
        );
        // ERTS: one `prev_info`, the memory call's result overwriting the time call's.
        let mut prev = None;
        let mut prev_time = None;
        let mut prev_memory = None;
        if let Some(t) = time {
            prev_time = self.call_acc(Kind::Time, session, f, self.now, t, proc);
            prev = prev_time;
        }
        if let Some(m) = mem {
            let words = proc.allocated;
            prev_memory = self.call_acc(Kind::Memory, session, f, words, m, proc);
            prev = prev_memory;
        }
        // The proposed fix of the call_time + call_memory segfault: one prev slot per kind.
        let (prev, prev_memory) = if crate::mutant::is(self.engine.mutant, Mutant::CtmTwoPrevSlots)
        {
            (prev_time, prev_memory)
        } else {
            (prev, prev)
        };
        if !proc.stack.last().is_some_and(Frame::is_trace_frame) {
            proc.push(Frame::CallTraceReturn {
                prev,
                prev_memory,
                flags: bp_flags,
                session,
            });
        }
    }

    /// `erts_call_trace_return`: charge the function being charged and restore the caller
    /// (`prev[0]` for call_time, `prev[1]` for call_memory; equal except under
    /// `ctm-two-prev-slots`).
    pub(crate) fn trace_return(
        &mut self,
        prev: [Option<Ci>; 2],
        bp_flags: u32,
        session: SessionId,
        proc: &mut Proc,
    ) {
        let pid = proc.p.pid;
        for kind in [Kind::Time, Kind::Memory] {
            if bp_flags & kind.active_flag() == 0 {
                continue;
            }
            let accum = match kind {
                Kind::Time => self.now,
                Kind::Memory => proc.allocated,
            };
            let list = match kind {
                Kind::Time => &mut proc.time,
                Kind::Memory => &mut proc.memory,
            };
            let Some(b) = Proc::pbt(list, session) else {
                continue;
            };
            let charge = b.ci.map(|ci| (ci, accum - b.accumulator));
            b.ci = prev[kind as usize];
            b.accumulator = accum;
            if let Some((ci, delta)) = charge {
                self.add_to_break(session, ci, kind, pid, delta);
            }
        }
    }

    /// `erts_schedule_time_break(ERTS_BP_CALL_TIME_SCHEDULE_OUT)`.
    pub(crate) fn schedule_out(&mut self, proc: &mut Proc) {
        let pid = proc.p.pid;
        let charges: Vec<(SessionId, Ci, i64)> = proc
            .time
            .iter()
            .filter_map(|b| b.ci.map(|ci| (b.session, ci, self.now - b.accumulator)))
            .collect();
        for (session, ci, delta) in charges {
            self.add_to_break(session, ci, Kind::Time, pid, delta);
        }
    }
}

impl<P: ThreadProgress> Scheduler<P> {
    fn charger(&mut self) -> Charger<'_, P> {
        let six = if self.dirty {
            self.engine().schedulers
        } else {
            self.id
        };
        let (now, dirty) = (self.now, self.dirty);
        let id = self.id;
        let (engine, dead) = self.parts();
        Charger {
            engine,
            id,
            six,
            dirty,
            now,
            dead,
        }
    }

    /// A body call of `f` by `proc`: push the continuation, then enter `f` (its breakpoint runs).
    pub fn call_proc(&mut self, f: FuncId, proc: &mut Proc) -> usize {
        proc.push_cont();
        self.tail_call(f, proc)
    }

    /// A tail call of `f`: no continuation is pushed, so the caller's frames (and a trace frame
    /// on top of them) are reused.
    pub fn tail_call(&mut self, f: FuncId, proc: &mut Proc) -> usize {
        let p = proc.p;
        let r = self.hit(f, &p, Some(proc));
        proc.current = Some(Ci::code(f));
        r
    }

    /// Return from the current function: run every trace frame on top of the stack
    /// (`i_call_trace_return`, `return_trace`, `return_to`), then pop the continuation.
    pub fn ret(&mut self, proc: &mut Proc) {
        self.ret_with(proc, crate::term::Term::Atom("ok"));
    }

    /// The call_time/call_memory return frame.
    pub(crate) fn trace_return_frame(
        &mut self,
        prev: [Option<Ci>; 2],
        flags: u32,
        session: SessionId,
        proc: &mut Proc,
    ) {
        self.charger().trace_return(prev, flags, session, proc)
    }

    /// `trace_schedule_in`: every call_time baseline restarts now (time scheduled out is not
    /// charged).
    pub fn schedule_in(&mut self, proc: &mut Proc) {
        assert!(!proc.running, "pid {} scheduled in twice", proc.p.pid);
        proc.running = true;
        if proc.p.call_traced != 0 {
            for b in proc.time.iter_mut() {
                b.accumulator = self.now;
            }
        }
    }

    /// `trace_schedule_out`: charge the running time slice to each function being charged.
    pub fn schedule_out(&mut self, proc: &mut Proc) {
        assert!(
            proc.running,
            "pid {} scheduled out while not running",
            proc.p.pid
        );
        if proc.p.call_traced != 0 {
            self.charger().schedule_out(proc);
        }
        proc.running = false;
    }
}
