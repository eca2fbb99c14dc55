//! The call_time / call_memory collection of `trace_info` (ERTS `erts_prepare_timem_trace_info`,
//! `trace_info_finisher`, `erts_timem_info_collect`, `erts_timem_info_consolidate`), and the
//! stop-the-world collection it replaced. docs/collection.md proves the steps:
//!
//! ```text
//! C0  (caller holds the code modification permission throughout)
//! C1  paused counters: read now; active counters: fresh temporary objects into the staging half
//! TW1 wait
//! C2  flip: the temporaries become active, the real objects inactive
//! TW2 wait
//! C3  read the real objects (nobody writes them now)
//! C4  flip back
//! TW3 wait
//! C5  under the dirty lock, merge each temporary into its real object's shared slot
//! C6  free the temporaries; staging half := active half (halves equal again)
//! ```
//!
//! Stop-the-world: B1 request the block, wait (every scheduler parks at its next progress
//! point or stays asleep), B2 read every counter, B3 lift the block.

use crate::bp::GenericBp;
use crate::calltime::Kind;
use crate::engine::{Engine, Permission};
use crate::mutant::{self, Mutant};
use crate::ordering::Site;
use crate::progress::ThreadProgress;
use crate::sync::{lock, ord, Ordering::Relaxed, Ordering::Release};
use crate::timem::{BpTimemTrace, Totals};
use std::sync::Arc as Refc;

/// What a collection found: `Some(totals)` for each wanted kind whose counter exists.
#[derive(Default, Debug)]
pub(crate) struct Collected {
    pub time: Option<Totals>,
    pub mem: Option<Totals>,
}

impl Collected {
    fn slot(&mut self, k: Kind) -> &mut Option<Totals> {
        match k {
            Kind::Time => &mut self.time,
            Kind::Memory => &mut self.mem,
        }
    }
}

fn obj(d: &crate::bp::GenericBpData, k: Kind) -> Option<&Refc<BpTimemTrace>> {
    match k {
        Kind::Time => d.time.as_ref(),
        Kind::Memory => d.memory.as_ref(),
    }
}

fn obj_mut(d: &mut crate::bp::GenericBpData, k: Kind) -> &mut Option<Refc<BpTimemTrace>> {
    match k {
        Kind::Time => &mut d.time,
        Kind::Memory => &mut d.memory,
    }
}

impl<P: ThreadProgress> Engine<P> {
    fn wanted(want_time: bool, want_mem: bool) -> Vec<Kind> {
        let mut v = Vec::new();
        if want_time {
            v.push(Kind::Time);
        }
        if want_mem {
            v.push(Kind::Memory);
        }
        v
    }

    /// The non-blocking collection (OTP 29).
    pub(crate) fn collect_nonblocking(
        &self,
        st: &mut Permission<'_>,
        g: *mut GenericBp,
        want_time: bool,
        want_mem: bool,
    ) -> Collected {
        // SAFETY: g is a live chain node; we hold the permission, so nothing unlinks or frees it.
        let node = unsafe { &*g };
        let mut out = Collected::default();
        // C1. At rest the staging half equals the active one (I5), so it shows the real objects.
        let staging = self.staging_ix();
        let bp = node.snapshot_half(staging);
        let mut flip_kinds: Vec<(Kind, Refc<BpTimemTrace>)> = Vec::new();
        for k in Self::wanted(want_time, want_mem) {
            let fl = bp.flags & (k.flag() | k.active_flag());
            if fl == 0 {
                continue;
            }
            let real = obj(&bp, k).expect("counter flag without a counter").clone();
            let tot = out.slot(k).insert(Totals::new());
            if fl == k.flag() && !self.paused_via_flip {
                // Paused: ERTS reads it right here, without a flip (docs/collection.md, F1).
                real.read_into(tot);
            } else {
                flip_kinds.push((k, real));
            }
        }
        if flip_kinds.is_empty() {
            return out;
        }
        let temps: Vec<Refc<BpTimemTrace>> = flip_kinds
            .iter()
            .map(|_| crate::stage::new_timem(self, st))
            .collect();
        node.write_half(staging, |d| {
            for ((k, _), t) in flip_kinds.iter().zip(&temps) {
                // The staging half's reference to the real object goes (refc 2 -> 1); the active
                // half and our `flip_kinds` keep it.
                *obj_mut(d, *k) = Some(t.clone());
            }
        });
        let no_flip = mutant::is(self.mutant, Mutant::CollectWithoutFlip);
        self.wait_unless(Mutant::CollectSkipWaitBeforeFlip); // TW1
        if !no_flip {
            self.flip(st); // C2
        }
        self.wait_unless(Mutant::CollectSkipWaitBeforeRead); // TW2
        for (k, real) in &flip_kinds {
            // C3. The real objects are inactive: no scheduler reaches them any more.
            real.read_into(out.slot(*k).as_mut().expect("slot set in C1"));
        }
        if !no_flip {
            if self.wait_before_flip_back {
                // Fix of finding F2: order C3's reads before any scheduler write that follows
                // a read of the flipped-back index.
                self.wait(); // TW2b
            }
            self.flip(st); // C4
        }
        let early_free = mutant::is(self.mutant, Mutant::CollectFreeBeforeLastWait);
        if early_free {
            self.merge_and_free(st, node, &flip_kinds, temps);
            self.wait(); // TW3, too late
            return out;
        }
        self.wait_unless(Mutant::CollectSkipWaitBeforeMerge); // TW3
        self.merge_and_free(st, node, &flip_kinds, temps);
        out
    }

    fn flip(&self, st: &mut Permission<'_>) {
        crate::commit::commit(self, st);
    }

    fn wait(&self) {
        self.progress.wait();
    }

    /// C5 + C6.
    fn merge_and_free(
        &self,
        st: &mut Permission<'_>,
        node: &GenericBp,
        flip_kinds: &[(Kind, Refc<BpTimemTrace>)],
        temps: Vec<Refc<BpTimemTrace>>,
    ) {
        // C5. Into the real object's shared slot, which dirty schedulers write under this lock.
        if !mutant::is(self.mutant, Mutant::CollectSkipMerge) {
            let _guard = if mutant::is(self.mutant, Mutant::CollectMergeWithoutLock) {
                None
            } else {
                Some(lock(&self.dirty_bp_mtx))
            };
            for ((_, real), temp) in flip_kinds.iter().zip(&temps) {
                let mut t = Totals::new();
                temp.read_into(&mut t);
                let shared = real.shared_slot();
                for (pid, (count, acc)) in t {
                    real.accum(shared, pid, count, acc, &mut st.dead_hashes);
                }
            }
        }
        // C6. Halves equal again; the temporaries lose their last reference.
        let active = self.active_ix();
        let staging = active ^ 1;
        let src = node.snapshot_half(active);
        node.write_half(staging, |d| {
            for (k, _) in flip_kinds {
                *obj_mut(d, *k) = obj(&src, *k).cloned();
            }
        });
        for t in temps {
            crate::free::release_temp_timem(st, t);
        }
    }

    /// Stop-the-world collection: block every scheduler, read, unblock.
    pub(crate) fn collect_stw(
        &self,
        _st: &mut Permission<'_>,
        g: *mut GenericBp,
        want_time: bool,
        want_mem: bool,
    ) -> Collected {
        assert!(
            self.stw_enabled,
            "stop-the-world collection on an engine built without with_stop_the_world()"
        );
        // SAFETY: live node under the permission.
        let node = unsafe { &*g };
        // B1. Relaxed: the wait's first full fence orders this store before the wait's reads
        // of the schedulers' progress words; a scheduler that passes a progress point in the
        // new period reads it after its own full fence (docs/collection.md, B1).
        self.stw_block.store(true, Relaxed);
        self.progress.wait();
        // B2.
        let mut out = Collected::default();
        let bp = node.snapshot_half(self.active_ix());
        {
            let _guard = lock(&self.dirty_bp_mtx);
            for k in Self::wanted(want_time, want_mem) {
                if bp.flags & k.flag() == 0 {
                    continue;
                }
                let tot = out.slot(k).insert(Totals::new());
                obj(&bp, k).expect("counter").read_into(tot);
            }
        }
        // B3. Release: pairs with the Acquire loads in hit.rs (stw-block-check, stw-block-park).
        self.stw_block
            .store(false, ord(self.mutant, Site::StwUnblock, Release));
        // B4 (liveness, not safety): let every parked scheduler leave its park before the
        // permission goes, so back-to-back blocks cannot starve them (ERTS wakes blocked
        // threads on unblock). Relaxed: see the counter's comment in hit.rs.
        crate::progress::spin_while(
            || self.stw_parked.load(Relaxed) != 0,
            "parked schedulers never left after unblock",
        );
        out
    }
}
