//! ERTS-style thread progress (quiescent-state-based reclamation).
//!
//! Labelled steps (docs/protocol.md, "Thread progress", proves the guarantee from them):
//!
//! ```text
//! progress():  P1  g := global            (relaxed)
//!              P2  fence(SeqCst)          full barrier
//!              P3  local[i] := g          (relaxed)
//! sleep():     S1  fence(SeqCst)
//!              S2  local[i] := SLEEPING
//! wake():      K1  g := global
//!              K2  local[i] := g
//!              K3  fence(SeqCst)
//! wait():      W1  fence(SeqCst)
//!              W2  target := global.fetch_add(1) + 1
//!              W3  for each i: spin until local[i] == SLEEPING or local[i] >= target
//!              W4  fence(SeqCst)
//! ```

use super::{ThreadProgress, WAIT_SPIN_LIMIT};
use crate::mutant::{self, Mutant};
use crate::ordering::Site;
use crate::sync::{fence_at, yield_now, AtomicU64, Ordering::*};

const SLEEPING: u64 = u64::MAX;

/// ERTS's scheme: one global period, one local period per managed thread.
pub struct Qsbr {
    global: AtomicU64,
    locals: Box<[AtomicU64]>,
    waits: AtomicU64,
    mutant: Option<Mutant>,
}

/// A managed thread's slot in [`Qsbr`].
#[derive(Debug)]
pub struct QsbrHandle {
    index: usize,
    awake: bool,
}

impl ThreadProgress for Qsbr {
    type Handle = QsbrHandle;

    fn new(managed: usize, mutant: Option<Mutant>) -> Self {
        assert!(
            managed > 0,
            "thread progress needs at least one managed thread"
        );
        Qsbr {
            global: AtomicU64::new(0),
            locals: (0..managed).map(|_| AtomicU64::new(SLEEPING)).collect(),
            waits: AtomicU64::new(0),
            mutant,
        }
    }

    fn register(&self, index: usize) -> QsbrHandle {
        assert!(
            index < self.locals.len(),
            "managed thread {index} out of range"
        );
        QsbrHandle {
            index,
            awake: false,
        }
    }

    fn progress(&self, h: &mut QsbrHandle) {
        assert!(h.awake, "progress reported by sleeping thread {}", h.index);
        // P1. Relaxed: ordered by P2.
        let g = self.global.load(Relaxed);
        if !mutant::is(self.mutant, Mutant::ProgressWithoutBarrier) {
            // P2. Full barrier. Acquire side: pairs with the fence at W1 of the wait whose
            // period bump P1 read, so this thread's later hits see every write the stager made
            // before W1. Release side: pairs with the fence at W4 of a wait that reads P3, so
            // every read this thread made before P2 happens before what the stager does after W4.
            fence_at(self.mutant, Site::QsbrProgressFence, SeqCst);
        }
        // P3. Relaxed: ordered by P2 (release side).
        self.locals[h.index].store(g, Relaxed);
    }

    fn sleep(&self, h: &mut QsbrHandle) {
        assert!(h.awake, "thread {} is already asleep", h.index);
        // S1. Release side pairs with W4 of a wait that reads S2: everything this thread read
        // before sleeping happens before what the stager does after that wait. Partner: W4.
        fence_at(self.mutant, Site::QsbrSleepFence, SeqCst);
        // S2.
        self.locals[h.index].store(SLEEPING, Relaxed);
        h.awake = false;
    }

    fn wake(&self, h: &mut QsbrHandle) {
        assert!(!h.awake, "thread {} is already awake", h.index);
        // K1, K2.
        let g = self.global.load(Relaxed);
        self.locals[h.index].store(g, Relaxed);
        if !mutant::is(self.mutant, Mutant::WakeWithoutBarrier) {
            // K3. Store-buffering with W1: either the wait's W3 reads K2 (and waits for our next
            // progress point) or our reads after K3 see every write the stager made before W1.
            // Acquire side also pairs with W1 when K1 already read the bump.
            fence_at(self.mutant, Site::QsbrWakeFence, SeqCst);
        }
        h.awake = true;
    }

    fn wait(&self) {
        // W1. Release side pairs with P2/K3 (see there); SB partner of K3.
        fence_at(self.mutant, Site::QsbrWaitEnterFence, SeqCst);
        // W2. Relaxed: ordered by W1 and P2.
        let target = if mutant::is(self.mutant, Mutant::WaitWithoutNewPeriod) {
            self.global.load(Relaxed)
        } else {
            self.global.fetch_add(1, Relaxed) + 1
        };
        // W3.
        for (i, local) in self.locals.iter().enumerate() {
            let mut spins: u64 = 0;
            loop {
                let l = local.load(Relaxed);
                if l == SLEEPING || l >= target {
                    break;
                }
                spins += 1;
                assert!(
                    spins < WAIT_SPIN_LIMIT,
                    "thread progress: managed thread {i} made no progress in {spins} spins"
                );
                yield_now();
            }
        }
        // W4. Acquire side: pairs with the P2/S1 fence that preceded each P3/S2 store read in W3.
        fence_at(self.mutant, Site::QsbrWaitExitFence, SeqCst);
        self.waits.fetch_add(1, Relaxed);
    }

    fn completed_waits(&self) -> u64 {
        self.waits.load(Relaxed)
    }

    fn name() -> &'static str {
        "qsbr"
    }
}
