//! `GenericBp`: one per traced function and trace session, two halves (generations) selected by
//! the global active index (ERTS `beam_bp.h`).

use crate::sync::{AtomicPtr, AtomicU64, UnsafeCell, CHECKED};
#[cfg(not(loom))]
use crate::sync::{AtomicU32, Ordering::Relaxed};
use crate::timem::BpTimemTrace;
use std::sync::Arc as Refc;

/// Number of halves (`ERTS_NUM_BP_IX`).
pub const ERTS_NUM_BP_IX: usize = 2;

/// A trace session's id. Session 0 is the legacy session, which always exists.
pub type SessionId = u32;

/// Breakpoint flag bits, with ERTS's values (`beam_bp.c`).
pub mod flags {
    pub const LOCAL_TRACE: u32 = 0x01;
    pub const META_TRACE: u32 = 0x02;
    pub const COUNT: u32 = 0x04;
    pub const COUNT_ACTIVE: u32 = 0x08;
    pub const DEBUG: u32 = 0x10;
    pub const TIME_TRACE: u32 = 0x20;
    pub const TIME_TRACE_ACTIVE: u32 = 0x40;
    pub const GLOBAL_TRACE: u32 = 0x80;
    pub const MEM_TRACE: u32 = 0x100;
    pub const MEM_TRACE_ACTIVE: u32 = 0x200;
    pub const ALL: u32 = 0x3FF;
}

const LIVE: u32 = 0x11FE_11FE;
const POISON: u32 = 0xDEAD_BEEF;

/// A liveness word written when its owner is freed. Readers assert on it. Under loom it is a
/// checked cell, so a read that is not ordered before the free is a causality violation even if
/// the poison is not seen; under shuttle and in debug builds the poison is seen and asserted on.
#[derive(Debug)]
pub struct Liveness(UnsafeCell<u32>);

// SAFETY: the word is shared: schedulers read it (`assert_live`) through the halves and chains
// they reach, the stager reads it (`is_live`) and the freer writes it once (`kill`). Reads may
// run concurrently with each other. The only write, `kill`, is an `unsafe fn` whose caller
// guarantees invariant I1 (docs/protocol.md): every other thread's last access is ordered before
// it by the wait before the free, so safe code cannot race on the word. The check: under loom
// the word is loom's cell and an access not ordered before the `kill` is a causality error;
// the mutants that drop that wait are caught so or by the poison (models/src expected_kills:
// skip-w4-before-free on remove-session, free-at-unlink on session-unlink-head,
// tracer-free-without-wait on tracer-remove, collect-free-before-last-wait on info; run by
// models/tests/{loom,shuttle,sessions_*,collection_*}.rs). Those mutants break the contract on
// purpose and run only under loom and shuttle, which run one thread at a time.
unsafe impl Sync for Liveness {}

impl Liveness {
    pub fn new() -> Self {
        Liveness(UnsafeCell::new(LIVE))
    }
    /// Panics with "read after free" if the owner was freed.
    #[inline]
    pub fn assert_live(&self, what: &dyn Fn() -> String) {
        if CHECKED {
            // SAFETY: the word is only written by `kill`, which the protocol orders after every
            // reader's last access (the W4 wait, docs/protocol.md I1); loom checks that order.
            let v = self.0.with(|p| unsafe { *p });
            assert!(v == LIVE, "read after free: {}", what());
        }
    }
    /// Poison. Called by whoever frees the owner (the stager, or a scheduler retiring its own
    /// pid table).
    ///
    /// # Safety
    /// No other thread may access the word concurrently: every other thread's last access is
    /// ordered before this call (I1, by the wait before the free), and none comes after it.
    pub unsafe fn kill(&self) {
        // SAFETY: the caller's contract excludes every concurrent access (I1).
        self.0.with_mut(|p| unsafe { *p = POISON });
    }
    pub fn is_live(&self) -> bool {
        // SAFETY: stager-side query under the permission; no concurrent writer.
        self.0.with(|p| unsafe { *p } == LIVE)
    }
}

impl Default for Liveness {
    fn default() -> Self {
        Self::new()
    }
}

/// `BpCount`: the call_count counter, shared by both halves and every scheduler, incremented
/// with relaxed atomics (ERTS `erts_atomic_inc_nob`). Reference counted by the halves that point
/// to it; only the stager changes the reference count.
#[derive(Debug)]
pub struct BpCount {
    pub acount: AtomicU64,
    pub live: Liveness,
    /// The session and function whose node the counter was made for (not in ERTS): count
    /// conservation at rest (`Engine::count_ledger`) attributes the counter's calls by it.
    pub owner: (SessionId, crate::code::FuncId),
}

impl BpCount {
    /// A fresh counter at zero for session `session`'s node on function `func`.
    pub fn new(session: SessionId, func: crate::code::FuncId) -> Refc<BpCount> {
        Refc::new(BpCount {
            acount: AtomicU64::new(0),
            live: Liveness::new(),
            owner: (session, func),
        })
    }
}

// The counters are shared by every scheduler that reads a half pointing to them (the `Refc`
// crosses threads inside the halves, behind raw pointers the compiler does not follow): assert
// at compile time that they are Send + Sync, so a field that is not fails the build.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<BpCount>();
    shared::<BpTimemTrace>();
};

/// `GenericBpData`: one half. `flags` says which actions run; the pointers are shared with the
/// other half (reference counted), so consolidation copies pointers, not counters.
#[derive(Clone, Debug, Default)]
pub struct GenericBpData {
    pub flags: u32,
    pub count: Option<Refc<BpCount>>,
    /// call_time counter (`BpTimemTrace *time`), shared by the halves like `count`.
    pub time: Option<Refc<BpTimemTrace>>,
    /// call_memory counter (`BpTimemTrace *memory`).
    pub memory: Option<Refc<BpTimemTrace>>,
    /// The local or global match spec (`local_ms`), shared by the halves like the counters.
    pub ms: Option<Refc<crate::calltrace::MatchSpec>>,
    /// The meta tracer (`BpMetaTracer *meta_tracer`), shared by the halves like the counters.
    pub meta: Option<Refc<crate::meta::BpMetaTracer>>,
}

impl GenericBpData {
    /// Equal flags and the very same objects (the at-rest invariant).
    pub fn same_as(&self, other: &GenericBpData) -> bool {
        fn same<T>(a: &Option<Refc<T>>, b: &Option<Refc<T>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => Refc::ptr_eq(a, b),
                _ => false,
            }
        }
        self.flags == other.flags
            && same(&self.count, &other.count)
            && same(&self.time, &other.time)
            && same(&self.memory, &other.memory)
            && same(&self.ms, &other.ms)
            && same(&self.meta, &other.meta)
    }
}

/// `GenericBp`: one breakpoint of one session on one function.
pub struct GenericBp {
    /// Serial number for messages ("GenericBp#3").
    pub id: u64,
    /// The session owning this node.
    pub session: SessionId,
    /// The instruction word the hit path runs after the breakpoint (immutable once allocated;
    /// a later session's node copies it from the head, as `set_function_break` does).
    pub orig_instr: usize,
    /// The two halves. Readers use `data[active]`, the stager writes `data[staging]`.
    data: [UnsafeCell<GenericBpData>; ERTS_NUM_BP_IX],
    /// Seqlock-style write marks per half (checked builds, not under loom whose cell already
    /// checks this): odd while the stager writes that half.
    #[cfg(not(loom))]
    writing: [AtomicU32; ERTS_NUM_BP_IX],
    /// The per-function chain, newest session first. Read with relaxed loads by schedulers.
    pub next: AtomicPtr<GenericBp>,
    /// A pending new head for another session, linked at install (stager only).
    pub to_insert: AtomicPtr<GenericBp>,
    pub live: Liveness,
}

impl GenericBp {
    /// A new node with both halves disabled (flags 0).
    pub fn new(id: u64, session: SessionId, orig_instr: usize) -> Box<GenericBp> {
        Box::new(GenericBp {
            id,
            session,
            orig_instr,
            data: [
                UnsafeCell::new(GenericBpData::default()),
                UnsafeCell::new(GenericBpData::default()),
            ],
            #[cfg(not(loom))]
            writing: [AtomicU32::new(0), AtomicU32::new(0)],
            next: AtomicPtr::new(std::ptr::null_mut()),
            to_insert: AtomicPtr::new(std::ptr::null_mut()),
            live: Liveness::new(),
        })
    }

    /// Reader side: use half `ix` (the active one) for the duration of `f`.
    #[inline]
    pub fn read_half<R>(&self, ix: usize, f: impl FnOnce(&GenericBpData) -> R) -> R {
        self.live
            .assert_live(&|| format!("GenericBp#{} (session {})", self.id, self.session));
        #[cfg(not(loom))]
        let before = if CHECKED {
            self.writing[ix].load(Relaxed)
        } else {
            0
        };
        // SAFETY: half `ix` was read from the active index. The stager writes only the staging
        // half, and writes a half that was active only after a wait that follows the flip away
        // from it (I2 in docs/protocol.md); loom's cell checks this, shuttle the marks below.
        let r = self.data[ix].with(|p| f(unsafe { &*p }));
        #[cfg(not(loom))]
        if CHECKED {
            let after = self.writing[ix].load(Relaxed);
            assert!(
                before % 2 == 0 && before == after,
                "GenericBp#{} half {ix} read while the stager was writing it",
                self.id
            );
        }
        r
    }

    /// Stager side: write half `ix` (the staging one).
    pub fn write_half<R>(&self, ix: usize, f: impl FnOnce(&mut GenericBpData) -> R) -> R {
        #[cfg(not(loom))]
        if CHECKED {
            self.writing[ix].fetch_add(1, Relaxed);
        }
        // SAFETY: only the stager writes, under the code modification permission; see read_half.
        let r = self.data[ix].with_mut(|p| f(unsafe { &mut *p }));
        #[cfg(not(loom))]
        if CHECKED {
            self.writing[ix].fetch_add(1, Relaxed);
        }
        r
    }

    /// Stager side: a copy of half `ix` (no reader can be writing; only the stager writes).
    pub fn snapshot_half(&self, ix: usize) -> GenericBpData {
        // SAFETY: the stager is the only writer and holds the permission.
        self.data[ix].with(|p| unsafe { (*p).clone() })
    }
}
