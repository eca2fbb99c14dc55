//! The breakpoint hit path, run by scheduler threads (ERTS `erts_generic_breakpoint` and
//! `do_session_breakpoint`): instruction word → slot → chain → active index → `data[ix]` → act →
//! run the original instruction. Every load is relaxed: no reader-side barrier.

use crate::bp::{flags, GenericBp, SessionId};
use crate::code::{FuncId, OP_I_GENERIC_BREAKPOINT};
use crate::engine::{chain_step, Engine};
use crate::history::{node_id, Event};
use crate::ordering::Site;
use crate::process::Proc;
use crate::progress::{Qsbr, ThreadProgress};
use crate::readers::{self, Reader};
use crate::sync::{ord, yield_now, Arc, Ordering::Acquire, Ordering::Relaxed};
use crate::timem::{BpTimemTrace, DeadHashes};
use std::sync::Arc as Refc;

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
    /// Bit `s`: this hit counted the call on session `s`'s call_count counter (it read
    /// `COUNT_ACTIVE` in that node's active half). `flags` is an OR over the sessions, so the
    /// models attribute counts by this (count conservation, `Engine::count_ledger`).
    pub counted: u64,
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
    /// The logical clock call_time reads (`get_mtime`); tests advance it, so figures are exact.
    pub now: i64,
    /// A scheduler that is not a normal scheduler (ERTS: dirty). It charges into every object's
    /// shared slot under the dirty lock instead of a slot of its own. It is still managed by
    /// thread progress (ERTS holds progress back around such updates with
    /// `erts_thr_progress_unmanaged_delay`).
    pub dirty: bool,
    /// Tables this scheduler freed by rehashing (checked builds keep them poisoned).
    pub(crate) dead_hashes: DeadHashes,
    /// On an engine with a module (`Engine::with_module`): the scheduler's process and its
    /// place in the module's code (`calls.rs`); `None` otherwise.
    pub(crate) code: Option<Box<crate::calls::InCode>>,
}

impl<P: ThreadProgress> Scheduler<P> {
    /// Register scheduler `id` and wake it (with the full barrier). Call on its own thread.
    pub fn start(engine: Arc<Engine<P>>, id: usize) -> Scheduler<P> {
        let mut handle = engine.progress.register(id);
        engine.progress.wake(&mut handle);
        engine.history.record(|| Event::Wake(id));
        let mut s = Scheduler {
            engine,
            id,
            handle,
            events: Vec::new(),
            hits: Vec::new(),
            record: true,
            now: 0,
            dirty: false,
            dead_hashes: Vec::new(),
            code: None,
        };
        if s.engine.stw_enabled {
            s.blocked_check();
        }
        if s.engine.code_mgmt.is_some() {
            s.start_in_code();
        }
        s
    }

    /// A scheduler that charges the shared slots under the dirty lock (see [`Scheduler::dirty`]).
    pub fn start_dirty(engine: Arc<Engine<P>>, id: usize) -> Scheduler<P> {
        let mut s = Scheduler::start(engine, id);
        s.dirty = true;
        s
    }

    /// Advance the logical clock by `dt` time units (microseconds in trace_info results).
    pub fn advance(&mut self, dt: i64) {
        assert!(dt >= 0, "the clock never goes back ({dt})");
        self.now += dt;
    }

    pub fn engine(&self) -> &Engine<P> {
        &self.engine
    }

    pub(crate) fn parts(&mut self) -> (&Engine<P>, &mut DeadHashes) {
        (&self.engine, &mut self.dead_hashes)
    }

    /// A quiescent point between processes (`erts_thr_progress_update`). On an engine with a
    /// module the scheduler's process is scheduled out before it and back in after, and under
    /// the blocking protocol a stopped world holds the scheduler here (`calls.rs`).
    pub fn progress(&mut self) {
        if self.code.is_some() {
            self.progress_in_code();
        } else {
            self.thr_progress();
        }
    }

    /// Go to sleep (on an engine with a module, its process scheduled out first: `calls.rs`).
    pub fn sleep(&mut self) {
        if self.code.is_some() {
            self.sleep_in_code();
        } else {
            self.thr_sleep();
        }
    }

    /// Wake up (on an engine with a module, its process scheduled in after: `calls.rs`).
    pub fn wake(&mut self) {
        if self.code.is_some() {
            self.wake_in_code();
        } else {
            self.thr_wake();
        }
    }

    /// The progress point itself.
    pub(crate) fn thr_progress(&mut self) {
        self.engine.progress.progress(&mut self.handle);
        self.engine.history.record(|| Event::Progress(self.id));
        if self.engine.stw_enabled {
            self.blocked_check();
        }
    }

    pub(crate) fn thr_sleep(&mut self) {
        self.engine.progress.sleep(&mut self.handle);
        self.engine.history.record(|| Event::Sleep(self.id));
    }

    pub(crate) fn thr_wake(&mut self) {
        self.engine.progress.wake(&mut self.handle);
        self.engine.history.record(|| Event::Wake(self.id));
        if self.engine.stw_enabled {
            self.blocked_check();
        }
    }

    /// Stop-the-world: at a quiescent point, stay asleep while a block is requested
    /// (`erts_thr_progress_block`). See `collect.rs` for the argument.
    fn blocked_check(&mut self) {
        // Acquire: pairs with the Release store that lifts a block (B3), so a scheduler that
        // slept through a whole block and sees it lifted is ordered after the collector's reads.
        // Seeing a request that is set is ordered by the progress point's / wake-up's full fence
        // just before (the stager stores it before its wait's first fence; docs/collection.md).
        let m = self.engine.mutant;
        if !self
            .engine
            .stw_block
            .load(ord(m, Site::StwBlockCheck, Acquire))
        {
            return;
        }
        // Relaxed: the count is for the collector's liveness handshake only (it waits for every
        // parked scheduler to leave before it may block again, so back-to-back blocks cannot
        // starve the schedulers); no data is published through it.
        self.engine.stw_parked.fetch_add(1, Relaxed);
        self.engine.progress.sleep(&mut self.handle);
        let mut spins: u64 = 0;
        // Acquire: pairs with the Release store that lifts the block, so the collector's reads
        // happen before this scheduler's next writes.
        while self
            .engine
            .stw_block
            .load(ord(m, Site::StwBlockPark, Acquire))
        {
            spins += 1;
            assert!(
                spins < crate::progress::WAIT_SPIN_LIMIT,
                "scheduler {} blocked for {spins} spins",
                self.id
            );
            yield_now();
        }
        self.engine.progress.wake(&mut self.handle);
        self.engine.stw_parked.fetch_sub(1, Relaxed);
    }

    /// Call function `f` as process `p`; returns the instruction word the scheduler goes on to
    /// execute (the function's original first instruction).
    pub fn call(&mut self, f: FuncId, p: &Process) -> usize {
        self.hit(f, p, None)
    }

    /// The hit path; with `proc`, call_time/call_memory act on its pbts and stack.
    pub(crate) fn hit(&mut self, f: FuncId, p: &Process, proc: Option<&mut Proc>) -> usize {
        self.hit_in(crate::export::Area::Code, f, f, p, proc)
    }

    /// The hit path on entry `idx` of `area` (a function's code or its export entry) of
    /// function `f`: its instruction word, then [`Scheduler::hit_at`].
    pub(crate) fn hit_in(
        &mut self,
        area: crate::export::Area,
        idx: usize,
        f: FuncId,
        p: &Process,
        proc: Option<&mut Proc>,
    ) -> usize {
        if matches!(
            area,
            crate::export::Area::Code | crate::export::Area::Export
        ) {
            self.engine().static_entry("a hit");
        }
        let instr = self.engine().area(area).funcs[idx].instr.load(Relaxed);
        self.hit_at(area, idx, f, p, proc, instr)
    }

    /// The hit path from an instruction word `instr` already read: the slot only if it is the
    /// breakpoint instruction. A remote call into a loaded module (`calls.rs::remote_in`) passes
    /// the export entry's dispatch word of the code index it read (`ExportEntry::dispatch`).
    pub(crate) fn hit_at(
        &mut self,
        area: crate::export::Area,
        idx: usize,
        f: FuncId,
        p: &Process,
        mut proc: Option<&mut Proc>,
        instr: usize,
    ) -> usize {
        if matches!(
            area,
            crate::export::Area::Code | crate::export::Area::Export
        ) {
            self.engine().static_entry("a hit");
        }
        let (now, dirty) = (self.now, self.dirty);
        let Scheduler {
            engine,
            id,
            events,
            hits,
            record,
            dead_hashes,
            ..
        } = self;
        let (engine, id, record) = (&**engine, *id, *record);
        let mut cx = crate::calltime::Charger {
            engine,
            id,
            six: if dirty { engine.schedulers } else { id },
            dirty,
            now,
            dead: dead_hashes,
        };
        let h = &engine.area(area).funcs[idx];
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
                    counted: 0,
                });
            }
            return instr;
        }
        let head = readers::load_slot(Reader::HitIn, &h.gen_bp, Relaxed);
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
        let mut counted = 0u64;
        let mut last_ix = u32::MAX;
        let mut g = head;
        let mut steps = 0;
        while !g.is_null() {
            chain_step(&mut steps, &h.mfa);
            // SAFETY: g was read from the slot or a `next` link. A node is freed only after it
            // was unlinked and a wait (W4) let every scheduler pass a progress point, and this
            // hit began after our last one (invariant I1, docs/protocol.md; loom + shuttle check).
            let node = unsafe { &*g };
            let (f_acted, ix) = do_session_breakpoint(
                engine,
                id,
                events,
                node,
                crate::process::Ci { area, f },
                p,
                proc.as_deref_mut(),
                &mut cx,
            );
            engine.history.record(|| Event::Half {
                sched: id,
                node: node.id,
                ix,
            });
            acted |= f_acted;
            if f_acted & flags::COUNT_ACTIVE != 0 {
                counted |= 1u64 << node.session;
            }
            last_ix = ix;
            node.live
                .assert_live(&|| format!("GenericBp#{} (next link)", node.id));
            g = readers::load_next(Reader::HitIn, &node.next, Relaxed);
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
                counted,
            });
        }
        orig
    }
}

/// One session's node: read the active index, then act on `data[ix]` (ERTS
/// `do_session_breakpoint`). The index is read per node, so one hit may straddle a flip.
#[allow(clippy::too_many_arguments)]
fn do_session_breakpoint<P: ThreadProgress>(
    engine: &Engine<P>,
    sched: usize,
    events: &mut Vec<TraceEvent>,
    g: &GenericBp,
    ci: crate::process::Ci,
    p: &Process,
    proc: Option<&mut Proc>,
    cx: &mut crate::calltime::Charger<'_, P>,
) -> (u32, u32) {
    let f = ci.f;
    {
        let ix = readers::active_ix(
            Reader::DoSessionBreakpoint,
            &engine.active_bp_index,
            Relaxed,
        );
        engine.history.record(|| Event::Ix { sched, ix });
        // Step 1: a session being destroyed is inert at once (ERTS `erts_is_trace_session_alive`).
        if !engine.sessions.is_alive(g.session)
            && !crate::mutant::is(engine.mutant, crate::Mutant::IgnoreSessionState)
        {
            return (0, ix);
        }
        let mut ms: Option<crate::calltrace::MatchSpec> = None;
        let mut proc = proc;
        let mut objs: (*const BpTimemTrace, *const BpTimemTrace) =
            (std::ptr::null(), std::ptr::null());
        let acted = readers::read_half(Reader::DoSessionBreakpoint, g, ix as usize, |bp| {
            let mut fl = bp.flags;
            let needs_call_flag = flags::LOCAL_TRACE
                | flags::GLOBAL_TRACE
                | flags::TIME_TRACE_ACTIVE
                | flags::MEM_TRACE_ACTIVE;
            if fl & needs_call_flag != 0 && !p.is_call_traced(g.session) {
                fl &= !(needs_call_flag | flags::TIME_TRACE | flags::MEM_TRACE);
            }
            if fl & (flags::LOCAL_TRACE | flags::GLOBAL_TRACE) != 0 {
                ms = bp.ms.as_deref().cloned();
                events.push(TraceEvent {
                    session: g.session,
                    pid: p.pid,
                    func: f,
                });
            }
            if fl & flags::META_TRACE != 0 {
                // Step 5 (ERTS order: after local/global, before the count). Needs no process
                // trace flag.
                let mt = bp.meta.as_ref().expect("META_TRACE without a BpMetaTracer");
                crate::meta::meta_hit(engine, g.id, mt, p.pid, engine.mfa_of(ci));
            }
            // The paused-counter-changes mutant counts on a paused counter too (COUNT set,
            // COUNT_ACTIVE clear).
            let paused = crate::mutant::is(engine.mutant, crate::Mutant::PausedCounterChanges);
            if fl & flags::COUNT_ACTIVE != 0 || (paused && fl & flags::COUNT != 0) {
                let c = bp.count.as_ref().expect("COUNT_ACTIVE without a counter");
                c.live
                    .assert_live(&|| format!("BpCount of GenericBp#{}", g.id));
                if crate::mutant::is(engine.mutant, crate::Mutant::LostCountUpdate) {
                    // Mutant: a load then a store, so a concurrent increment can be lost.
                    c.acount.store(c.acount.load(Relaxed) + 1, Relaxed);
                } else {
                    c.acount.fetch_add(1, Relaxed);
                }
            }
            if fl & flags::TIME_TRACE_ACTIVE != 0 {
                objs.0 = Refc::as_ptr(bp.time.as_ref().expect("TIME_TRACE without a counter"));
            }
            if fl & flags::MEM_TRACE_ACTIVE != 0 {
                objs.1 = Refc::as_ptr(bp.memory.as_ref().expect("MEM_TRACE without a counter"));
            }
            fl
        });
        if acted & (flags::LOCAL_TRACE | flags::GLOBAL_TRACE) != 0 {
            if let Some(proc) = proc.as_deref_mut() {
                let local = acted & flags::LOCAL_TRACE != 0;
                crate::calltrace::do_call_trace(
                    engine,
                    sched,
                    g.session,
                    ci,
                    ms.as_ref(),
                    proc,
                    local,
                );
            }
        }
        if let Some(proc) = proc {
            if acted & (flags::TIME_TRACE_ACTIVE | flags::MEM_TRACE_ACTIVE) != 0 {
                // SAFETY: the objects were read from the active half during this hit; an object
                // is freed only at consolidate (after W3) or at the collection's last step
                // (after its last wait), both after every scheduler passed a progress point
                // that follows this hit (docs/collection.md §3).
                let (time, mem) = unsafe { (objs.0.as_ref(), objs.1.as_ref()) };
                cx.breakpoint(g.session, ci, acted, time, mem, proc);
            }
        }
        (acted, ix)
    }
}

impl<P: ThreadProgress> Drop for Scheduler<P> {
    fn drop(&mut self) {
        // First: a process still in a version exits, and the world lock's guard (which borrows
        // the engine) goes before the engine's Arc.
        self.drop_in_code();
        if !self.dead_hashes.is_empty() {
            // Checked builds: keep the poisoned tables until the engine goes (a late reader
            // asserts instead of touching freed memory).
            crate::sync::lock(&self.engine.hash_graveyard).append(&mut self.dead_hashes);
        }
    }
}
