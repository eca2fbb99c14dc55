//! `BpTimemTrace`: the call_time / call_memory counter of one function in one session (ERTS
//! `beam_bp.c`, `bp_pid_timem_hash_t` and friends).
//!
//! One open-addressing pid hash per normal scheduler, written only by that scheduler and
//! allocated on demand, plus one shared slot (the last) for work that is not on a normal
//! scheduler (ERTS: dirty schedulers), written only under [`crate::Engine`]'s `dirty_bp_mtx`.
//! A hash that gets too full (load > 0.7) is rehashed into a new table of twice the size and the
//! old table is freed at once by its owner, so a slot's table address changes under it. That is
//! safe only because nobody else reads a table that its owner may still write: the collection
//! (`collect.rs`) reads an object's tables only after a flip and a wait took every scheduler off
//! it, and the checks (liveness words, write marks, loom's cells) fire if it does not.

use crate::bp::Liveness;
#[cfg(not(loom))]
use crate::sync::AtomicU32;
use crate::sync::{AtomicPtr, Ordering::Relaxed, UnsafeCell, CHECKED};
use std::collections::BTreeMap;
use std::sync::Arc as Refc;

/// ERTS's initial table size is 32. Checked builds start at 2, so that the models and tests
/// rehash (and free a table) after the second distinct pid (docs/deviations.md).
pub const BP_HASH_INITIAL: usize = if CHECKED { 2 } else { 32 };

/// An empty bucket's pid (ERTS `NIL`).
const NIL: u64 = u64::MAX;

/// `bp_pid_timem_bucket_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub pid: u64,
    pub count: i64,
    pub acc: i64,
}

struct Body {
    used: usize,
    buckets: Vec<Bucket>,
}

/// `bp_pid_timem_hash_t`: open addressing, linear probing, hash `(pid >> 4) % n` as in ERTS.
pub struct PidHash {
    body: UnsafeCell<Body>,
    /// Checked builds outside loom: odd while the owner writes (loom's cell checks this itself).
    #[cfg(not(loom))]
    writing: AtomicU32,
    pub live: Liveness,
}

/// Totals per pid: `pid -> (count, accumulator)`. Ordered, so results are reproducible.
pub type Totals = BTreeMap<u64, (i64, i64)>;

impl PidHash {
    fn new(n: usize) -> Box<PidHash> {
        assert!(n.is_power_of_two() && n >= 2, "hash size {n}");
        Box::new(PidHash {
            body: UnsafeCell::new(Body {
                used: 0,
                buckets: vec![
                    Bucket {
                        pid: NIL,
                        count: 0,
                        acc: 0
                    };
                    n
                ],
            }),
            #[cfg(not(loom))]
            writing: AtomicU32::new(0),
            live: Liveness::new(),
        })
    }

    fn slot_of(pid: u64, n: usize) -> usize {
        ((pid >> 4) % n as u64) as usize
    }

    /// Reader side: every used bucket, added into `tot`. The caller guarantees that the owner is
    /// not writing (the collection's flip + wait, or the stop-the-world block).
    pub(crate) fn read_into(&self, tot: &mut Totals) {
        self.live
            .assert_live(&|| "pid hash (read by the collector)".into());
        #[cfg(not(loom))]
        let before = if CHECKED {
            self.writing.load(Relaxed)
        } else {
            0
        };
        // SAFETY: only the owning scheduler (or the holder of the dirty lock for the shared
        // slot) writes; the caller's protocol step makes this read happen after its last write
        // and before its next one (docs/collection.md, C2/C3). loom checks it on the cell,
        // shuttle and debug builds on the write marks below.
        self.body.with(|b| {
            let b = unsafe { &*b };
            for k in b.buckets.iter().filter(|k| k.pid != NIL) {
                let e = tot.entry(k.pid).or_insert((0, 0));
                e.0 += k.count;
                e.1 += k.acc;
            }
        });
        #[cfg(not(loom))]
        if CHECKED {
            let after = self.writing.load(Relaxed);
            assert!(
                before % 2 == 0 && before == after,
                "pid hash read while its owner was writing it"
            );
        }
    }

    /// Owner side: add `(count, acc)` to `pid`. Returns the replacement table when the insert
    /// needed a rehash (ERTS `bp_hash_put`: load > 0.7 doubles the table).
    fn accum(&self, pid: u64, count: i64, acc: i64) -> Option<Box<PidHash>> {
        assert!(pid != NIL, "pid {pid:#x} is the empty marker");
        self.live
            .assert_live(&|| "pid hash (written by its owner)".into());
        #[cfg(not(loom))]
        if CHECKED {
            let prev = self.writing.fetch_add(1, Relaxed);
            assert!(
                prev.is_multiple_of(2),
                "pid hash written by two writers at once (shared slot without the dirty lock?)"
            );
        }
        // SAFETY: the caller is the table's only writer (its scheduler, or the dirty-lock holder
        // for the shared slot); readers are excluded by the collection protocol (see read_into).
        let r = self.body.with_mut(|b| {
            let b = unsafe { &mut *b };
            let n = b.buckets.len();
            let mut i = Self::slot_of(pid, n);
            for _ in 0..n {
                let k = &mut b.buckets[i];
                if k.pid == pid {
                    k.count += count;
                    k.acc += acc;
                    return None;
                }
                if k.pid == NIL {
                    break;
                }
                i = (i + 1) % n;
            }
            // Not found: insert, rehashing first if the load exceeds 0.7.
            if b.used * 10 > n * 7 {
                let bigger = PidHash::new(n * 2);
                bigger.body.with_mut(|nb| {
                    // SAFETY: `bigger` is private to this thread until published.
                    let nb = unsafe { &mut *nb };
                    for k in b.buckets.iter().filter(|k| k.pid != NIL) {
                        insert(nb, *k);
                    }
                    insert(nb, Bucket { pid, count, acc });
                });
                return Some(bigger);
            }
            insert(b, Bucket { pid, count, acc });
            None
        });
        #[cfg(not(loom))]
        if CHECKED {
            self.writing.fetch_add(1, Relaxed);
        }
        r
    }

    /// Number of pids in the table (owner or quiescent reader).
    pub fn used(&self) -> usize {
        // SAFETY: called only where read_into would be safe.
        self.body.with(|b| unsafe { &*b }.used)
    }
}

fn insert(b: &mut Body, k: Bucket) {
    let n = b.buckets.len();
    assert!(b.used < n, "pid hash full ({n} buckets)");
    let mut i = PidHash::slot_of(k.pid, n);
    for _ in 0..n {
        if b.buckets[i].pid == NIL {
            b.buckets[i] = k;
            b.used += 1;
            return;
        }
        i = (i + 1) % n;
    }
    unreachable!("a free bucket exists (used < n)");
}

/// `BpTimemTrace`: `threads[i]` for normal scheduler `i`, `threads[nthreads-1]` shared.
pub struct BpTimemTrace {
    pub id: u64,
    threads: Box<[AtomicPtr<PidHash>]>,
    pub live: Liveness,
}

/// Tables freed by rehashing in checked builds: poisoned and kept (never returned to the
/// allocator while a racing reader might still look), owned by whoever rehashed.
pub type DeadHashes = Vec<Box<PidHash>>;

impl BpTimemTrace {
    /// `bp_calltrace_alloc`: every slot empty (allocated on demand).
    pub fn new(id: u64, schedulers: usize) -> Refc<BpTimemTrace> {
        Refc::new(BpTimemTrace {
            id,
            threads: (0..=schedulers)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            live: Liveness::new(),
        })
    }

    pub fn nthreads(&self) -> usize {
        self.threads.len()
    }

    /// Index of the shared slot.
    pub fn shared_slot(&self) -> usize {
        self.threads.len() - 1
    }

    /// Owner side (`bp_hash_accum`): add to `pid` in slot `six`. Slot `six < shared_slot()` may
    /// only be written by scheduler `six`; the shared slot only under the dirty lock.
    pub(crate) fn accum(&self, six: usize, pid: u64, count: i64, acc: i64, dead: &mut DeadHashes) {
        self.live
            .assert_live(&|| format!("BpTimemTrace#{} (charged)", self.id));
        let slot = &self.threads[six];
        // Relaxed: the slot is written only by its owner (this thread); other readers are
        // ordered by thread progress.
        let mut h = slot.load(Relaxed);
        if h.is_null() {
            h = Box::into_raw(PidHash::new(BP_HASH_INITIAL));
            slot.store(h, Relaxed);
        }
        // SAFETY: h is this slot's live table; only its owner (us) replaces or frees it.
        if let Some(bigger) = unsafe { &*h }.accum(pid, count, acc) {
            // A swap, not a store, so that a second writer (a broken protocol: two writers on
            // one slot) is an assertion here rather than a double free of `h` below.
            let was = slot.swap(Box::into_raw(bigger), Relaxed);
            assert!(
                was == h,
                "pid hash slot {six} of BpTimemTrace#{} changed under its writer (two writers)",
                self.id
            );
            retire(h, dead);
        }
    }

    /// Reader side: add every slot's table into `tot` (`collect_timem_info`). The caller
    /// guarantees nobody writes this object meanwhile (see [`PidHash::read_into`]; the
    /// stop-the-world collection also holds the dirty lock).
    pub(crate) fn read_into(&self, tot: &mut Totals) {
        self.live
            .assert_live(&|| format!("BpTimemTrace#{} (collected)", self.id));
        for slot in self.threads.iter() {
            let h = slot.load(Relaxed);
            if !h.is_null() {
                // SAFETY: a table is freed only by its owner's rehash, which the protocol keeps
                // from running concurrently with this read (docs/collection.md, C3).
                unsafe { &*h }.read_into(tot);
            }
        }
    }

    /// ERTS before erlang/otp#8897, `bp_hash_reset` on the object the active half shares: every
    /// slot's table is emptied in place (`bp_hash_delete`: no buckets, size 0), then given
    /// [`BP_HASH_INITIAL`] empty buckets again (`bp_hash_init`), by the stager, while the
    /// slot's owner may be charging it. Only the `erts-r16-reset` variant calls this; a charge
    /// that lands between the two writes computes its bucket modulo 0 (the SIGFPE of the crash).
    pub(crate) fn reset_in_place(&self) {
        for slot in self.threads.iter() {
            let h = slot.load(Relaxed);
            if h.is_null() {
                continue;
            }
            // SAFETY: none; this is the broken step being modelled. The table stays allocated
            // (only its body is rewritten), so the model's race is on the body, as in ERTS.
            let table = unsafe { &*h };
            table.body.with_mut(|b| {
                // SAFETY: as above; the owner's charges are not excluded (the crash).
                let b = unsafe { &mut *b };
                b.buckets = Vec::new();
                b.used = 0;
            });
            // The gap between ERTS's free and its new allocation: a step the checker may
            // schedule the owner into (a Relaxed load, a yield point under shuttle).
            let _ = slot.load(Relaxed);
            table.body.with_mut(|b| {
                // SAFETY: as above.
                let b = unsafe { &mut *b };
                b.buckets = vec![
                    Bucket {
                        pid: NIL,
                        count: 0,
                        acc: 0
                    };
                    BP_HASH_INITIAL
                ];
            });
        }
    }

    /// Quick emptiness test (stager side, quiescent object).
    pub fn is_empty(&self) -> bool {
        let mut t = Totals::new();
        self.read_into(&mut t);
        t.is_empty()
    }
}

fn retire(h: *mut PidHash, dead: &mut DeadHashes) {
    // SAFETY: h was this slot's table and is now unreachable from the slot; only its owner held
    // it. In checked builds it is poisoned and parked, so a reader that should not be there
    // asserts instead of reading freed memory.
    let b = unsafe { Box::from_raw(h) };
    // SAFETY: the owner is the table's only accessor except a collection reader, which the
    // protocol keeps off a table its owner may write (C3), hence off this one too.
    unsafe { b.live.kill() };
    if CHECKED {
        dead.push(b);
    }
}

impl Drop for BpTimemTrace {
    fn drop(&mut self) {
        for slot in self.threads.iter() {
            let h = slot.load(Relaxed);
            if !h.is_null() {
                // SAFETY: the object is being dropped: no half references it (last Refc), so
                // no scheduler reaches its tables; each came from Box::into_raw exactly once.
                drop(unsafe { Box::from_raw(h) });
            }
        }
    }
}

impl std::fmt::Debug for BpTimemTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BpTimemTrace#{}", self.id)
    }
}
