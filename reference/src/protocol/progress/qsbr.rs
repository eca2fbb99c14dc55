//! ERTS-style thread progress (quiescent-state-based reclamation).
//!
//! Labelled steps (docs/protocol.md §3 proves the guarantee G from them, in the memory model of
//! §0 there):
//!
//! ```text
//! progress():  QP1  g := global            (relaxed)
//!              QP2  fence(SeqCst)          full barrier
//!              QP3  local[i] := g          (relaxed)
//! sleep():     QS1  fence(SeqCst)
//!              QS2  local[i] := SLEEPING
//! wake():      QK1  g := global
//!              QK2  local[i] := g
//!              QK3  fence(SeqCst)
//! wait():      QW1  fence(SeqCst)
//!              QW2  target := global.fetch_add(1) + 1
//!              QW3  for each i: spin until local[i] == SLEEPING or local[i] >= target
//!              QW4  fence(SeqCst)
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

    fn with_managed(managed: usize, mutant: Option<Mutant>) -> Self {
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
        // QP1. Relaxed: ordered by QP2.
        let g = self.global.load(Relaxed);
        if !mutant::is(self.mutant, Mutant::ProgressWithoutBarrier) {
            // QP2. Full barrier. Acquire side: pairs with the fence at QW1 of the wait whose
            // period bump QP1 read, so this thread's later hits see every write the stager made
            // before QW1. Release side: pairs with the fence at QW4 of a wait that reads QP3, so
            // every read this thread made before QP2 happens before what the stager does after QW4.
            fence_at(self.mutant, Site::QsbrProgressFence, SeqCst);
        }
        // QP3. Relaxed: ordered by QP2 (release side).
        self.locals[h.index].store(g, Relaxed);
    }

    fn sleep(&self, h: &mut QsbrHandle) {
        assert!(h.awake, "thread {} is already asleep", h.index);
        // QS1. Release side pairs with QW4 of a wait that reads QS2: everything this thread read
        // before sleeping happens before what the stager does after that wait.
        fence_at(self.mutant, Site::QsbrSleepFence, SeqCst);
        // QS2.
        self.locals[h.index].store(SLEEPING, Relaxed);
        h.awake = false;
    }

    fn wake(&self, h: &mut QsbrHandle) {
        assert!(!h.awake, "thread {} is already awake", h.index);
        // QK1, QK2.
        let g = self.global.load(Relaxed);
        self.locals[h.index].store(g, Relaxed);
        if !mutant::is(self.mutant, Mutant::WakeWithoutBarrier) {
            // QK3. Acquire side pairs with QW1 when QK1 already read the bump. Otherwise
            // store-buffering with QW1: either the wait's QW3 reads QK2 (and waits for our next
            // progress point) or QW1 precedes QK3 in the SC order and our accesses after QK3 see
            // every write the stager made before QW1; for plain data that step is the
            // full-barrier rule [FB] of docs/protocol.md §0, not C++20 (§3, case C).
            fence_at(self.mutant, Site::QsbrWakeFence, SeqCst);
        }
        h.awake = true;
    }

    fn wait(&self) {
        // QW1. Release side pairs with QP2/QK3 (see there); SB partner of QK3.
        fence_at(self.mutant, Site::QsbrWaitEnterFence, SeqCst);
        // QW2. Relaxed: ordered by QW1 and QP2.
        let target = if mutant::is(self.mutant, Mutant::WaitWithoutNewPeriod) {
            self.global.load(Relaxed)
        } else {
            self.global.fetch_add(1, Relaxed) + 1
        };
        // QW3.
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
        // QW4. Acquire side: pairs with the release fence before each store QW3 read: QP2
        // before QP3, QS1 before QS2, and the last sleep's QS1 before a wake-up's QK2.
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
