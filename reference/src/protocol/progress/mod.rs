//! Thread progress: the grace period the whole protocol rests on (ERTS `erl_thr_progress.c`,
//! `ThreadProgress.md`).
//!
//! The guarantee the engine relies on: when [`ThreadProgress::wait`] returns, every managed
//! thread has, at least once since the wait began, (1) been at a quiescent point (between
//! breakpoint hits) and (2) executed a full memory barrier there, or it was asleep (a sleeping
//! thread issues its barrier on wake-up). Readers therefore need no barrier on the hit path.
//!
//! Two implementations of one interface. Every loom and shuttle model runs under [`Qsbr`];
//! `EpochProgress` is checked on 9 scenarios only: loom's trace_pattern `add`, `remove`,
//! `remove-nap`, `remove-session`, `remove-long`, `remove-doze`, `remove-yield` and shuttle's
//! `churn-4sched`, `toggle-3sched` (docs/thread-progress.md, "Check"); its two fences are killed
//! (on crossbeam-epoch patched so that its loom build's `compiler_fence` is the no-op it is
//! between threads, vendor/README.md), its two done-flag orderings are not.
//!
//! - [`Qsbr`]: ERTS's scheme, a global period counter and one local counter per managed thread;
//! - [`EpochProgress`]: a grace period built from crossbeam-epoch's `defer` + `flush`, with each
//!   scheduler pinned between its progress points (QSBR on top of EBR).

mod epoch;
mod qsbr;

pub use epoch::EpochProgress;
pub use qsbr::Qsbr;

use crate::mutant::Mutant;

/// The interface the engine uses. Managed threads report progress; the stager waits.
pub trait ThreadProgress: Send + Sync + Sized + 'static {
    /// A managed thread's registration. Created on the thread that uses it.
    type Handle;

    /// Build for `managed` managed threads (the schedulers), optionally broken by a mutant.
    fn new(managed: usize, mutant: Option<Mutant>) -> Self {
        assert!(
            managed > 0,
            "thread progress needs at least one managed thread"
        );
        Self::with_managed(managed, mutant)
    }

    /// [`ThreadProgress::new`] once it has checked that `managed` is at least 1.
    fn with_managed(managed: usize, mutant: Option<Mutant>) -> Self;

    /// Register managed thread `index` (0-based). The thread starts asleep: call
    /// [`ThreadProgress::wake`] before its first breakpoint hit.
    fn register(&self, index: usize) -> Self::Handle;

    /// A quiescent point: the thread holds no reference to breakpoint data. Issues the full
    /// barrier (ERTS `erts_thr_progress_update`).
    fn progress(&self, h: &mut Self::Handle);

    /// Go to sleep: a sleeping thread never holds a wait back.
    fn sleep(&self, h: &mut Self::Handle);

    /// Wake up, with the full barrier, before touching breakpoint data again.
    fn wake(&self, h: &mut Self::Handle);

    /// Block until every managed thread has passed a progress point that began after this call
    /// (or slept). Called by the stager, which is not a managed thread.
    fn wait(&self);

    /// How many waits have completed (the wait-count test reads it).
    fn completed_waits(&self) -> u64;

    /// Short name for tables ("qsbr", "epoch").
    fn name() -> &'static str;
}

/// Upper bound on spins in any wait loop (TigerBeetle: a limit on every loop). Reached only if a
/// managed thread stops reporting progress without going to sleep, which is a bug in the caller.
pub const WAIT_SPIN_LIMIT: u64 = 1 << 34;

/// Yield while `busy()` holds, at most [`WAIT_SPIN_LIMIT`] times (then panic with `what`): the
/// bounded spin of a thread that waits for other threads to leave a state (parked schedulers
/// after an unblock, killed processes before a purge).
pub(crate) fn spin_while(mut busy: impl FnMut() -> bool, what: &str) {
    let mut spins: u64 = 0;
    while busy() {
        spins += 1;
        assert!(spins < WAIT_SPIN_LIMIT, "{what} ({spins} spins)");
        crate::sync::yield_now();
    }
}
