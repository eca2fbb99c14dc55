//! The breakpoint hit path, run by scheduler threads (ERTS `erts_generic_breakpoint` and
//! `do_session_breakpoint`): instruction word → slot → chain → active index → `data[ix]` → act →
//! run the original instruction. Every load is relaxed: no reader-side barrier.

use crate::bp::{flags, GenericBp, SessionId};
use crate::code::{FuncId, OP_I_GENERIC_BREAKPOINT};
use crate::engine::Engine;
use crate::history::{node_id, Event};
use crate::progress::{Qsbr, ThreadProgress};
use crate::sync::{Arc, Ordering::Relaxed};

/// A process as the hit path sees it: its pid and, per session, whether it is call-traced
/// (bit `s` of `call_traced` for session `s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Process {
    pub pid: u64,
    pub call_traced: u64,
}

impl Process {
    pub fn new(pid: u64) -> Process {
        Process {
            pid,
            call_traced: 0,
        }
    }
    pub fn call_traced_in(pid: u64, session: SessionId) -> Process {
        Process {
            pid,
            call_traced: 1 << session,
        }
    }
    pub fn is_call_traced(&self, session: SessionId) -> bool {
        self.call_traced & (1u64 << session) != 0
    }
}

/// A trace event delivered to the session's tracer (here: the scheduler's buffer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    pub session: SessionId,
    pub pid: u64,
    pub func: FuncId,
}

/// What one hit did, for the models' assertions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    pub func: FuncId,
    /// The scheduler saw the breakpoint instruction.
    pub patched: bool,
    /// OR over the chain of the flags it acted on (after the process filter).
    pub flags: u32,
    /// The active index of the last node visited (or `u32::MAX` if none).
    pub ix: u32,
}

/// A managed scheduler thread's view of the engine.
pub struct Scheduler<P: ThreadProgress = Qsbr> {
    engine: Arc<Engine<P>>,
    pub id: usize,
    handle: P::Handle,
    /// Local call trace events, in order.
    pub events: Vec<TraceEvent>,
    /// Hit records (only when `record` is set).
    pub hits: Vec<Hit>,
    pub record: bool,
}

impl<P: ThreadProgress> Scheduler<P> {
    /// Register scheduler `id` and wake it (with the full barrier). Call on its own thread.
    pub fn start(engine: Arc<Engine<P>>, id: usize) -> Scheduler<P> {
        let mut handle = engine.progress.register(id);
        engine.progress.wake(&mut handle);
        engine.history.record(|| Event::Wake(id));
        Scheduler {
            engine,
            id,
            handle,
            events: Vec::new(),
            hits: Vec::new(),
            record: true,
        }
    }

    pub fn engine(&self) -> &Engine<P> {
        &self.engine
    }

    /// A quiescent point between processes (`erts_thr_progress_update`).
    pub fn progress(&mut self) {
        self.engine.progress.progress(&mut self.handle);
        self.engine.history.record(|| Event::Progress(self.id));
    }

    pub fn sleep(&mut self) {
        self.engine.progress.sleep(&mut self.handle);
        self.engine.history.record(|| Event::Sleep(self.id));
    }

    pub fn wake(&mut self) {
        self.engine.progress.wake(&mut self.handle);
        self.engine.history.record(|| Event::Wake(self.id));
    }

    /// Call function `f` as process `p`; returns the instruction word the scheduler goes on to
    /// execute (the function's original first instruction).
    pub fn call(&mut self, f: FuncId, p: &Process) -> usize {
        let Scheduler {
            engine,
            id,
            events,
            hits,
            record,
            ..
        } = self;
        let (engine, id, record) = (&**engine, *id, *record);
        let h = &engine.code.funcs[f];
        let instr = h.instr.load(Relaxed);
        let bp = instr == OP_I_GENERIC_BREAKPOINT;
        engine.history.record(|| Event::Instr {
            sched: id,
            func: f,
            breakpoint: bp,
        });
        if instr != OP_I_GENERIC_BREAKPOINT {
            assert_eq!(
                instr, h.original,
                "{}: scheduler {} read a foreign instruction word",
                h.mfa, id
            );
            if record {
                hits.push(Hit {
                    func: f,
                    patched: false,
                    flags: 0,
                    ix: u32::MAX,
                });
            }
            return instr;
        }
        let head = h.gen_bp.load(Relaxed);
        // SAFETY: just loaded from the slot (history::node_id's contract).
        engine.history.record(|| Event::Slot {
            sched: id,
            func: f,
            node: unsafe { node_id(head) },
        });
        assert!(
            !head.is_null(),
            "scheduler {} executed the breakpoint instruction of {} but its breakpoint slot is empty",
            id,
            h.mfa
        );
        let mut acted = 0;
        let mut last_ix = u32::MAX;
        let mut g = head;
        let mut steps = 0;
        while !g.is_null() {
            steps += 1;
            assert!(
                steps <= crate::MAX_CHAIN,
                "{}: chain longer than {}",
                h.mfa,
                crate::MAX_CHAIN
            );
            // SAFETY: g was read from the slot or a `next` link. A node is freed only after it
            // was unlinked and a wait (W4) let every scheduler pass a progress point, and this
            // hit began after our last one (invariant I1, docs/protocol.md; loom + shuttle check).
            let node = unsafe { &*g };
            let (f_acted, ix) = do_session_breakpoint(engine, events, node, f, p);
            engine.history.record(|| Event::Ix { sched: id, ix });
            engine.history.record(|| Event::Half {
                sched: id,
                node: node.id,
                ix,
            });
            acted |= f_acted;
            last_ix = ix;
            node.live
                .assert_live(&|| format!("GenericBp#{} (next link)", node.id));
            g = node.next.load(Relaxed);
            // SAFETY: just loaded from a `next` link (history::node_id's contract).
            engine.history.record(|| Event::Next {
                sched: id,
                node: node.id,
                next: unsafe { node_id(g) },
            });
        }
        // SAFETY: as above; `head` is the node we started from.
        let head = unsafe { &*head };
        head.live
            .assert_live(&|| format!("GenericBp#{} (orig_instr)", head.id));
        let orig = head.orig_instr;
        engine.history.record(|| Event::Orig {
            sched: id,
            node: head.id,
        });
        assert_eq!(
            orig, h.original,
            "{}: breakpoint saved a wrong original instruction",
            h.mfa
        );
        if record {
            hits.push(Hit {
                func: f,
                patched: true,
                flags: acted,
                ix: last_ix,
            });
        }
        orig
    }
}

/// One session's node: read the active index, then act on `data[ix]` (ERTS
/// `do_session_breakpoint`). The index is read per node, so one hit may straddle a flip.
fn do_session_breakpoint<P: ThreadProgress>(
    engine: &Engine<P>,
    events: &mut Vec<TraceEvent>,
    g: &GenericBp,
    f: FuncId,
    p: &Process,
) -> (u32, u32) {
    {
        let ix = engine.active_bp_index.load(Relaxed);
        let acted = g.read_half(ix as usize, |bp| {
            let mut fl = bp.flags;
            let needs_call_flag = flags::LOCAL_TRACE
                | flags::GLOBAL_TRACE
                | flags::TIME_TRACE_ACTIVE
                | flags::MEM_TRACE_ACTIVE;
            if fl & needs_call_flag != 0 && !p.is_call_traced(g.session) {
                fl &= !(needs_call_flag | flags::TIME_TRACE | flags::MEM_TRACE);
            }
            if fl & flags::LOCAL_TRACE != 0 {
                events.push(TraceEvent {
                    session: g.session,
                    pid: p.pid,
                    func: f,
                });
            }
            if fl & flags::COUNT_ACTIVE != 0 {
                let c = bp.count.as_ref().expect("COUNT_ACTIVE without a counter");
                c.live
                    .assert_live(&|| format!("BpCount of GenericBp#{}", g.id));
                c.acount.fetch_add(1, Relaxed);
            }
            fl
        });
        (acted, ix)
    }
}
