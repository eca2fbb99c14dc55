//! The engine: code area, global active index, thread progress, and the code modification
//! permission that owns all stager-side state.

use crate::bp::{BpCount, GenericBp, SessionId};
use crate::code::{CodeArea, FuncId, Mfa};
use crate::mutant::{self, Mutant};
use crate::progress::{Qsbr, ThreadProgress};
use crate::sync::{
    lock, AtomicBool, AtomicU32, AtomicUsize, Mutex, MutexGuard, Ordering::Relaxed, CHECKED,
};
use crate::timem::{BpTimemTrace, DeadHashes};
use std::sync::Arc as Refc;

/// Stager-owned state, reachable only through the code modification permission.
pub struct Stager {
    /// `breakpoint_free_list`: nodes unlinked at consolidate, freed after the next wait.
    pub(crate) free_list: Vec<*mut GenericBp>,
    /// Checked builds: freed nodes and counters are poisoned and parked here, never returned to
    /// the allocator while the engine lives, so a late read is an assertion, not UB.
    pub(crate) graveyard: Vec<*mut GenericBp>,
    pub(crate) dead_counts: Vec<Refc<BpCount>>,
    pub(crate) next_bp_id: u64,
    /// Nodes allocated minus nodes freed (the leak check compares it with the chains).
    pub(crate) live_nodes: u64,
    /// Checked builds: call_time/call_memory objects whose last half reference went away,
    /// poisoned and parked (like `dead_counts`).
    pub(crate) dead_timem: Vec<Refc<BpTimemTrace>>,
    /// Checked builds: tables the stager replaced while merging into a shared slot.
    pub(crate) dead_hashes: DeadHashes,
    pub(crate) next_timem_id: u64,
    /// `BpTimemTrace` objects allocated minus freed (leak check).
    pub(crate) live_timem: u64,
    /// Sessions that have ever set a global pattern (bit per session). A local pattern of a
    /// session outside this set has no export node to clear, so its trace_pattern leaves the
    /// export area alone.
    pub(crate) global_sessions: u64,
    /// call_count totals of counters whose last half reference went away (`free.rs`
    /// `release_count`), kept only where a caller asks for them (an engine with a module: its count
    /// conservation, `load.rs` `total_count`): `None` elsewhere, so the other models make no
    /// extra load of a counter.
    pub(crate) retired_counts: Option<u64>,
    /// As `retired_counts`, for call_time/call_memory objects (`free.rs` `release_timem`): the
    /// calls counted in an object whose last half reference went away, over every pid and slot
    /// (an engine with a module: its count conservation across versions, `load.rs` `total_timed`).
    pub(crate) retired_timem: Option<i64>,
    /// Checked builds: per (session, function), the calls a `true`/`restart` on a running
    /// counter discarded when it set it back to zero (`stage.rs`), for count conservation
    /// (`Engine::count_ledger`).
    pub(crate) count_resets: std::collections::BTreeMap<(SessionId, FuncId), u64>,
}

// SAFETY: the raw pointers are owned by the stager state and only dereferenced by the thread
// holding the permission (or, for reading, by schedulers following I1 in docs/protocol.md).
// The parked pid tables (not Sync because of their bucket cells) are only touched by the
// permission holder once parked; schedulers that might still reach them are what the liveness
// words catch (docs/collection.md §3).
unsafe impl Send for Stager {}

/// The code modification permission, held for the whole of a `trace_pattern` (one stager at a
/// time, ERTS `erts_try_seize_code_mod_permission`).
pub type Permission<'a> = MutexGuard<'a, Stager>;

/// A real concurrent breakpoint engine, generic over its thread-progress implementation.
pub struct Engine<P: ThreadProgress = Qsbr> {
    pub code: CodeArea,
    /// Export entries (global breakpoints), one per exported function (`export.rs`).
    pub exports: CodeArea,
    /// The function of each export entry.
    pub(crate) exp_func: Vec<FuncId>,
    /// Trace sessions (`session.rs`).
    pub(crate) sessions: crate::session::Sessions,
    /// `erts_active_bp_index`: read relaxed by schedulers, written by the stager at commit.
    pub(crate) active_bp_index: AtomicU32,
    pub progress: P,
    pub(crate) permission: Mutex<Stager>,
    pub(crate) mutant: Option<Mutant>,
    pub schedulers: usize,
    /// Step history for the refinement check (off unless a test starts it; checked builds only).
    pub history: crate::history::History,
    /// `erts_dirty_bp_ix_mtx`: guards every object's shared slot (the last of `threads[]`).
    pub(crate) dirty_bp_mtx: Mutex<()>,
    /// Stop-the-world support (`erts_thr_progress_block`): schedulers look at `stw_block` at
    /// their progress points only when this is set ([`Engine::with_stop_the_world`]), so
    /// engines that never block pay nothing and the models' state spaces do not grow.
    pub(crate) stw_enabled: bool,
    pub(crate) stw_block: AtomicBool,
    /// Schedulers currently parked by a block (the unblock waits until they all left).
    pub(crate) stw_parked: AtomicUsize,
    /// Checked builds: tables freed by schedulers' rehashes, handed over when they stop.
    pub(crate) hash_graveyard: Mutex<DeadHashes>,
    /// Variant switch for the paused-counter collection (docs/collection.md, finding F1).
    pub(crate) paused_via_flip: bool,
    /// Meta tracer cells waiting for thread progress before they are freed (`meta.rs`, M3).
    pub(crate) meta: crate::meta::MetaState,
    /// Variant switch: an extra wait between reading the real tables and flipping back
    /// (docs/collection.md, finding F2).
    pub(crate) wait_before_flip_back: bool,
    /// Which waits `trace_pattern` makes (`waitplan.rs`, docs/fewer-waits.md); ERTS's by default.
    pub(crate) wait_plan: crate::waitplan::WaitPlan,
    /// Code loading (`load.rs`): the module table, the code index, the versioned export entries,
    /// the blocking protocol's world lock and the load switches; `None` unless the engine was
    /// built [`Engine::with_module`].
    pub(crate) code_mgmt: Option<Box<crate::load::CodeMgmt>>,
}

/// Configuration for [`Engine::new`].
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub functions: Vec<Mfa>,
    /// Number of managed scheduler threads.
    pub schedulers: usize,
    pub mutant: Option<Mutant>,
}

impl EngineConfig {
    /// `n` functions `m:f0/0 .. m:f{n-1}/0` and `schedulers` schedulers.
    pub fn simple(n: usize, schedulers: usize) -> EngineConfig {
        EngineConfig {
            functions: (0..n).map(|i| Mfa::new("m", &format!("f{i}"), 0)).collect(),
            schedulers,
            mutant: None,
        }
    }
    pub fn with_mutant(mut self, m: Option<Mutant>) -> EngineConfig {
        self.mutant = m;
        self
    }
}

impl<P: ThreadProgress> Engine<P> {
    /// An engine with room for every session id (`0..MAX_SESSIONS`).
    pub fn new(cfg: EngineConfig) -> Engine<P> {
        Engine::new_with_sessions(cfg, crate::session::MAX_SESSIONS)
    }

    /// An engine with room for the sessions `0..room` only: a model makes room for the sessions
    /// its scenario uses, since under loom and shuttle each slot is two model atomics that the
    /// checker creates in every execution and loom's acquire fences visit (docs/running.md,
    /// "Per-execution cost").
    pub fn new_with_sessions(cfg: EngineConfig, room: usize) -> Engine<P> {
        assert!(cfg.schedulers > 0, "an engine needs at least one scheduler");
        assert!(
            cfg.mutant.is_none() || CHECKED,
            "mutants exist only in checked builds (debug, loom, shuttle)"
        );
        let code = CodeArea::new(cfg.functions);
        let all: Vec<FuncId> = (0..code.len()).collect();
        let (exports, exp_func) = crate::export::export_area(&code, &all);
        Engine {
            code,
            exports,
            exp_func,
            sessions: crate::session::Sessions::new(cfg.mutant, room),
            active_bp_index: AtomicU32::new(0),
            progress: P::new(cfg.schedulers, cfg.mutant),
            permission: Mutex::new(Stager {
                free_list: Vec::new(),
                graveyard: Vec::new(),
                dead_counts: Vec::new(),
                next_bp_id: 1,
                live_nodes: 0,
                dead_timem: Vec::new(),
                dead_hashes: Vec::new(),
                next_timem_id: 1,
                live_timem: 0,
                global_sessions: 0,
                retired_counts: None,
                retired_timem: None,
                count_resets: std::collections::BTreeMap::new(),
            }),
            mutant: cfg.mutant,
            schedulers: cfg.schedulers,
            history: Default::default(),
            dirty_bp_mtx: Mutex::new(()),
            stw_enabled: false,
            stw_block: AtomicBool::new(false),
            stw_parked: AtomicUsize::new(0),
            hash_graveyard: Mutex::new(Vec::new()),
            paused_via_flip: false,
            meta: crate::meta::MetaState::new(),
            wait_before_flip_back: false,
            wait_plan: Default::default(),
            code_mgmt: None,
        }
    }

    /// Let [`Engine::trace_info_stop_the_world`] block the schedulers: each scheduler then
    /// checks the block request at every progress point and wake-up.
    pub fn with_stop_the_world(mut self) -> Engine<P> {
        self.stw_enabled = true;
        self
    }

    /// The fixed variant of the collection: paused counters are collected through the flip like
    /// active ones instead of directly (docs/collection.md, finding F1).
    pub fn with_paused_via_flip(mut self) -> Engine<P> {
        self.paused_via_flip = true;
        self
    }

    /// Only `exported` functions get export entries (the others can only be called locally).
    /// Call before any trace_pattern.
    pub fn with_exports(mut self, exported: &[FuncId]) -> Engine<P> {
        assert!(
            self.exports
                .funcs
                .iter()
                .all(|h| h.gen_bp.load(Relaxed).is_null()),
            "with_exports after global breakpoints were set"
        );
        let (exports, exp_func) = crate::export::export_area(&self.code, exported);
        self.exports = exports;
        self.exp_func = exp_func;
        self
    }

    /// The fixed variant of the collection's flip back: wait once more between reading the real
    /// tables and flipping back (docs/collection.md, finding F2).
    pub fn with_wait_before_flip_back(mut self) -> Engine<P> {
        self.wait_before_flip_back = true;
        self
    }

    /// Seize the code modification permission (blocks until the current stager is done).
    pub fn seize(&self) -> Permission<'_> {
        lock(&self.permission)
    }

    /// `erts_active_bp_ix()`.
    pub fn active_ix(&self) -> usize {
        self.active_bp_index.load(Relaxed) as usize
    }

    /// `erts_staging_bp_ix()`.
    pub fn staging_ix(&self) -> usize {
        self.active_ix() ^ 1
    }

    pub fn mutant(&self) -> Option<Mutant> {
        self.mutant
    }

    /// Wait for thread progress unless `skip` is the active mutant.
    pub(crate) fn wait_unless(&self, skip: Mutant) {
        if !mutant::is(self.mutant, skip) {
            self.history.record(|| crate::history::Event::WaitBegin);
            self.progress.wait();
            self.history.record(|| crate::history::Event::WaitEnd);
        }
    }

    /// Find a function by MFA.
    pub fn func(&self, mfa: &Mfa) -> Option<FuncId> {
        self.code.find(mfa)
    }

    /// The session's node on entry `f` of `area`, walking the chain from the head (or from the
    /// pending `to_insert` when `staging`), as `get_bp_session` does. Stager side.
    pub(crate) fn session_node_in(
        &self,
        _p: &Permission<'_>,
        area: crate::export::Area,
        f: FuncId,
        session: SessionId,
        staging: bool,
    ) -> *mut GenericBp {
        let code = self.area(area);
        let mut g = code.funcs[f].gen_bp.load(Relaxed);
        if staging && !g.is_null() {
            // SAFETY: g is a live chain node; the stager holds the permission, so nothing frees it.
            let ti = unsafe { &*g }.to_insert.load(Relaxed);
            if !ti.is_null() {
                g = ti;
            }
        }
        let mut steps = 0;
        while !g.is_null() {
            chain_step(&mut steps, &code.funcs[f].mfa);
            // SAFETY: as above.
            let node = unsafe { &*g };
            if node.session == session {
                return g;
            }
            g = node.next.load(Relaxed);
        }
        std::ptr::null_mut()
    }
}

/// One more node in a walk down the breakpoint chain of `mfa`: the walk's limit,
/// `crate::MAX_CHAIN` nodes.
#[inline]
pub(crate) fn chain_step(steps: &mut usize, mfa: &Mfa) {
    *steps += 1;
    assert!(
        *steps <= crate::MAX_CHAIN,
        "{mfa}: chain longer than {}",
        crate::MAX_CHAIN
    );
}

impl<P: ThreadProgress> Drop for Engine<P> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A model run that found a violation unwinds through here with the permission's
            // mutex possibly poisoned (loom's `get_mut` then panics again, and a panic during
            // unwinding aborts the whole test binary). Leak instead: the run is over.
            return;
        }
        self.drop_versions();
        let st = self.permission.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut owned: Vec<*mut GenericBp> = std::mem::take(&mut st.graveyard);
        owned.append(&mut st.free_list);
        for h in self.code.funcs.iter().chain(&self.exports.funcs) {
            let mut g = h.gen_bp.load(Relaxed);
            while !g.is_null() {
                // SAFETY: drop has exclusive access; every chain node is a live Box pointer.
                let node = unsafe { &*g };
                let ti = node.to_insert.load(Relaxed);
                if !ti.is_null() {
                    owned.push(ti);
                }
                owned.push(g);
                g = node.next.load(Relaxed);
            }
        }
        owned.sort();
        owned.dedup();
        for g in owned {
            // SAFETY: each pointer came from Box::into_raw and is released exactly once (dedup).
            drop(unsafe { Box::from_raw(g) });
        }
    }
}
