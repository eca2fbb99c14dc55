//! Thread progress on crossbeam-epoch: a grace period built from `defer` + `flush`.
//!
//! Each scheduler stays pinned while it runs and re-pins at each progress point, so a pinned
//! interval plays the role of "the time between two ERTS progress points" (QSBR on top of EBR).
//! `wait` defers a closure that sets a flag and flushes until the flag is set: crossbeam runs a
//! deferred closure only after the global epoch has advanced twice past the epoch it was deferred
//! in, and the epoch advances only when every pinned participant has observed the current epoch,
//! so every scheduler pinned when the wait began has re-pinned (passed a progress point) or
//! unpinned (slept). The waits pin and flush with one participant of their own, registered at
//! the first wait and kept (`Waiter`).
//!
//! A progress point is a full unpin + pin followed by our own `fence(SeqCst)`, not
//! `Guard::repin`: crossbeam-epoch 0.9.21's `repin` only stores the new local epoch with Release
//! and deliberately skips the SeqCst fence ("safe for memory accesses from the new epoch to be
//! executed before updating the local epoch"). That is enough for crossbeam's own reclamation,
//! but the breakpoint hit path reads with relaxed loads and relies on the progress point's full
//! barrier to see the stager's writes (G-seen in docs/protocol.md §3). On x86 `pin` ends with a
//! SeqCst CAS and a compiler fence, no fence between threads in C++20. (crossbeam-epoch as
//! published runs a real fence(SeqCst) for that compiler fence under loom, which hid this fence's
//! absence; vendor/crossbeam-epoch-0.9.21 makes it a no-op, and loom kills the weakening on
//! `remove-yield`: docs/orderings.md, epoch-progress-fence.)
//!
//! Mutants: the thread-progress mutants are specific to [`super::Qsbr`]'s code; this
//! implementation ignores them (the mutant matrix records that), except the site mutants of its
//! own orderings (`crate::ordering`) and [`Mutant::EpochRepinWithoutFence`], which makes
//! `progress` the `Guard::repin` it once was (killed by the epoch loom model on `remove-yield`,
//! `models/tests/loom.rs`).

use super::{ThreadProgress, WAIT_SPIN_LIMIT};
use crate::mutant::Mutant;
use crate::ordering::Site;
use crate::sync::{fence_at, lock, ord, yield_now, Arc, AtomicBool, AtomicU64, Mutex, Ordering::*};
use crossbeam_epoch::{Collector, Guard, LocalHandle};

/// Grace periods from a dedicated crossbeam-epoch collector.
pub struct EpochProgress {
    collector: Collector,
    /// The waiters' participant: registered at the first wait and kept, so that a wait
    /// registers and frees no participant (see [`Waiter`]).
    waiter: Mutex<Option<Waiter>>,
    managed: usize,
    waits: AtomicU64,
    mutant: Option<Mutant>,
    /// `progress` by `Guard::repin` (the mutant).
    repin: bool,
}

/// The participant every wait pins and flushes with, one wait at a time (the lock around it).
///
/// A participant registered per wait and dropped at its end was freed and its memory handed to
/// a later participant of the same execution, so crossbeam-epoch's list of participants
/// (`List::insert`'s compare-exchange of the head) compared a pointer read from an older store
/// with one at a reused address: whether it matched depended on where the allocator put the
/// new participant, which loom does not control, and loom reported the model nondeterministic
/// (docs/thread-progress.md, "Every family under the epoch grace period").
struct Waiter(LocalHandle);

// SAFETY: a `LocalHandle` is not `Send` because its participant's state is not thread-safe:
// its guard, handle and pin counts are plain `Cell`s and its bag of deferred closures an
// `UnsafeCell`. A `Waiter` lives in `EpochProgress::waiter`'s mutex, so one thread at a time uses
// it, and the lock's release and acquire order one thread's uses before the next's. No guard of
// it outlives a wait (each `pin` is dropped before `wait` unlocks), so the participant is never
// pinned when another thread takes it. Checked: under `crossbeam_loom` the bag is a loom cell,
// and loom's causality check covers its accesses in every epoch row whose waits come from two
// threads (`timem-two-stagers`, `info-vs-reset`: models/tests/epoch_loom.rs); the counts are
// plain cells no checker sees, ordered by the same lock.
unsafe impl Send for Waiter {}

/// A managed thread's registration: its local handle and, while awake, its pin.
pub struct EpochHandle {
    index: usize,
    local: LocalHandle,
    guard: Option<Guard>,
}

impl ThreadProgress for EpochProgress {
    type Handle = EpochHandle;

    fn with_managed(managed: usize, mutant: Option<Mutant>) -> Self {
        EpochProgress {
            collector: Collector::new(),
            waiter: Mutex::new(None),
            managed,
            waits: AtomicU64::new(0),
            mutant,
            repin: crate::mutant::is(mutant, Mutant::EpochRepinWithoutFence),
        }
    }

    fn register(&self, index: usize) -> EpochHandle {
        assert!(index < self.managed, "managed thread {index} out of range");
        EpochHandle {
            index,
            local: self.collector.register(),
            guard: None,
        }
    }

    fn progress(&self, h: &mut EpochHandle) {
        let g = h
            .guard
            .as_mut()
            .unwrap_or_else(|| panic!("progress by sleeping thread {}", h.index));
        if self.repin {
            // Mutant: a Release store of the local epoch, no fence (see the header).
            g.repin();
            return;
        }
        // Unpin and pin again: the quiescent point.
        if !crate::mutant::is(self.mutant, Mutant::EpochRepinWhilePinned) {
            h.guard = None;
        }
        // (Mutant: the new pin is taken while the old guard still holds the thread pinned.)
        h.guard = Some(h.local.pin());
        // Full barrier, as in `wake`: pairs with the stager's wait (its flush and the Acquire
        // load of the deferred flag) so that the stager's writes before the wait are visible to
        // this thread's reads after the progress point (G-seen in docs/protocol.md).
        fence_at(self.mutant, Site::EpochProgressFence, SeqCst);
    }

    fn sleep(&self, h: &mut EpochHandle) {
        assert!(h.guard.is_some(), "thread {} is already asleep", h.index);
        h.guard = None;
    }

    fn wake(&self, h: &mut EpochHandle) {
        assert!(h.guard.is_none(), "thread {} is already awake", h.index);
        h.guard = Some(h.local.pin());
        // Full barrier on wake-up, as in `progress`. Partner: the fences of crossbeam's pin and of
        // the stager's flush (the epoch advance it waits for).
        fence_at(self.mutant, Site::EpochWakeFence, SeqCst);
    }

    fn wait(&self) {
        let done = Arc::new(AtomicBool::new(false));
        let mut waiter = lock(&self.waiter);
        let stager = &waiter
            .get_or_insert_with(|| Waiter(self.collector.register()))
            .0;
        {
            let guard = stager.pin();
            let flag = done.clone();
            // Release: pairs with the Acquire load below (epoch-done-load).
            let m = self.mutant;
            guard.defer(move || flag.store(true, ord(m, Site::EpochDoneStore, Release)));
            guard.flush();
        }
        let mut spins: u64 = 0;
        // Acquire: pairs with the Release store in the deferred closure, so what the schedulers
        // did before their last unpin happens before what the stager does next.
        while !done.load(ord(self.mutant, Site::EpochDoneLoad, Acquire)) {
            spins += 1;
            assert!(
                spins < WAIT_SPIN_LIMIT,
                "epoch grace period made no progress in {spins} spins"
            );
            // The stager must not stay pinned while it waits, or it holds the epoch back.
            stager.pin().flush();
            yield_now();
        }
        drop(waiter);
        self.waits.fetch_add(1, Relaxed);
    }

    fn completed_waits(&self) -> u64 {
        self.waits.load(Relaxed)
    }

    fn name() -> &'static str {
        "epoch"
    }
}
