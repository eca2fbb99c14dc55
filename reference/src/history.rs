//! The engine's step history, for the refinement check against the spec
//! (`bpspec_spec::model::refine`). Off by default; a test turns it on with
//! [`History::start`] and takes it with [`History::take`].
//!
//! Zero cost outside checked builds: [`History::record`] tests [`CHECKED`] first, a constant
//! `false` in release builds, so the call and its closure compile away.
//!
//! The recorder deliberately bypasses the sync shim: it is instrumentation, not protocol, and it
//! must not add scheduling points. Under shuttle only one model thread runs at a time and a
//! context switch happens only at a shim operation, so an event recorded right after the atomic
//! access it describes (with no shim operation in between) is in the history exactly where that
//! access is in the execution. Under loom the history is not used.

use crate::bp::GenericBp;
use crate::sync::CHECKED;

/// One step of the engine, in the spec's vocabulary. Node ids are `GenericBp::id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The stager begins `trace_pattern` (before staging): session, matched functions (bit
    /// mask), operation (0 true, 1 false, 2 pause, 3 restart) and flags (bit 0 local, bit 1
    /// call_count).
    TracePattern {
        session: u32,
        funcs: u64,
        op: u8,
        flags: u8,
    },
    /// The stager begins a batch of `entries` `trace_pattern` entries under a batch plan
    /// (before staging): one stage step for all of them, then one sequence. The entries'
    /// [`Event::TracePattern`]s follow (they are the batch's script, no step of their own).
    /// `elide_idle`: under `batch-elide-idle`.
    Batch {
        entries: u32,
        elide_idle: bool,
    },
    /// The stager starts / completes a wait for thread progress.
    WaitBegin,
    WaitEnd,
    /// The stager starts a step (recorded before the step's first write).
    Install,
    Commit,
    Uninstall,
    Consolidate,
    Free,
    /// A scheduler passed a progress point / went to sleep / woke up (recorded after it).
    Progress(usize),
    Sleep(usize),
    Wake(usize),
    /// Hit path reads, each recorded right after the load, with the value read.
    Instr {
        sched: usize,
        func: usize,
        breakpoint: bool,
    },
    Slot {
        sched: usize,
        func: usize,
        node: Option<u64>,
    },
    Ix {
        sched: usize,
        ix: u32,
    },
    Half {
        sched: usize,
        node: u64,
        ix: u32,
    },
    Next {
        sched: usize,
        node: u64,
        next: Option<u64>,
    },
    Orig {
        sched: usize,
        node: u64,
    },
    /// A call_time/call_memory reader (`get_time_break`: a hit's previous-function charge, a
    /// return, an exception unwinding, a schedule-out) read the active index, with the value
    /// read; recorded right after the load. A hit's own read per node is [`Event::Ix`].
    TimemIx {
        sched: usize,
        ix: u32,
    },
    /// A call_time/call_memory reader loaded function `func`'s slot (whatever its instruction
    /// word says), with the value read; recorded right after the load.
    TimemSlot {
        sched: usize,
        func: usize,
        node: Option<u64>,
    },
    /// A call_time/call_memory reader loaded `next` of `node` (another session's node on its
    /// way to its own), with the value read; recorded right after the load.
    TimemNext {
        sched: usize,
        node: u64,
        next: Option<u64>,
    },
}

/// The recorder owned by an [`crate::Engine`].
#[derive(Debug, Default)]
pub struct History {
    events: std::sync::Mutex<Option<Vec<Event>>>,
    /// Whether recording is on: read before taking the lock, so that a run that never starts
    /// recording (every loom and shuttle model but the refinement's) pays one load per event,
    /// not a lock and an unlock (about 3 % of a shuttle profile of `timem_baselines`,
    /// docs/running.md, "Per-execution cost"). Plain std, as the lock: the recorder is the
    /// harness's, never a model object.
    on: std::sync::atomic::AtomicBool,
}

impl History {
    /// Start recording (checked builds only; a no-op otherwise).
    pub fn start(&self) {
        if CHECKED {
            *self.events.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
            // Relaxed: the flag only lets `record` skip the lock; the vector is published by the
            // lock, and `record` checks it under the lock. A thread that `start` happens before
            // reads `true` by coherence (read-after-write on one location) whatever the order.
            self.on.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Stop recording and return what was recorded.
    pub fn take(&self) -> Vec<Event> {
        // Relaxed: `record` checks the vector under the lock anyway; the flag only skips it.
        self.on.store(false, std::sync::atomic::Ordering::Relaxed);
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_default()
    }

    /// Record one event if recording is on.
    #[inline(always)]
    pub fn record(&self, ev: impl FnOnce() -> Event) {
        // Relaxed: see `start`; what the lock protects is read under the lock.
        if CHECKED && self.on.load(std::sync::atomic::Ordering::Relaxed) {
            if let Some(v) = self
                .events
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
            {
                assert!(v.len() < 1 << 24, "history longer than 2^24 events");
                v.push(ev());
            }
        }
    }
}

/// The id of the node `p` points to (`None` for null).
///
/// # Safety
/// `p` is null or was just loaded from a slot or `next` link by the hit path, which dereferences
/// it itself; in checked builds freed nodes are parked in the graveyard, not deallocated, so the
/// id stays readable even after a protocol bug frees the node (the engine's liveness assertion
/// reports that bug).
pub unsafe fn node_id(p: *const GenericBp) -> Option<u64> {
    // SAFETY: see the function's contract.
    (!p.is_null()).then(|| unsafe { (*p).id })
}

/// The [`Event::TracePattern`] of a call.
pub fn trace_pattern(
    session: crate::SessionId,
    matched: &[crate::FuncId],
    op: crate::PatternOp,
    fl: crate::pattern::FlagSet,
) -> Event {
    use crate::PatternOp::*;
    Event::TracePattern {
        session,
        funcs: matched.iter().fold(0, |m, &f| m | 1u64 << f.min(63)),
        op: match op {
            True => 0,
            False => 1,
            Pause => 2,
            Restart => 3,
        },
        // Bits 0-1 are what the spec models; call_time/call_memory (bits 2-3) it ignores.
        flags: fl.local as u8
            | (fl.call_count as u8) << 1
            | (fl.call_time as u8) << 2
            | (fl.call_memory as u8) << 3,
    }
}
