//! Step 5, consolidate (`consolidate_bp_data`): make the staging half equal to the active half
//! again, and unlink nodes whose active flags are all off onto the free list. Runs after W3 under
//! every wait plan, except an idle sequence of the elide-idle plan (docs/fewer-waits.md, proof EL:
//! nothing to unlink, uninstall restored nothing, code area only, no meta tracer on the chains),
//! where it runs after W2 and uninstall. Either way no scheduler reads the staging half (the old
//! active one: G-done of W2, and W3 where it is made) or reaches a function whose instruction
//! uninstall restored (there is none in an idle sequence, EL2). An unlinked node keeps its
//! `next`, so a scheduler standing on it can walk on.

use crate::code::FuncId;
use crate::engine::{Engine, Permission};
use crate::export::Area;
use crate::mutant::{self, Mutant};
use crate::progress::ThreadProgress;
use crate::sync::{AtomicPtr, Ordering::Relaxed};

pub(crate) fn consolidate<P: ThreadProgress>(
    e: &Engine<P>,
    st: &mut Permission<'_>,
    area: Area,
    matched: &[FuncId],
) {
    let active = e.active_ix();
    let staging = active ^ 1;
    for &f in matched {
        let h = &e.area(area).funcs[f];
        let mut prev: &AtomicPtr<_> = &h.gen_bp;
        let mut g = prev.load(Relaxed);
        let mut steps = 0;
        while !g.is_null() {
            steps += 1;
            assert!(steps <= crate::MAX_CHAIN, "chain of {} too long", h.mfa);
            // SAFETY: live chain node; the stager holds the permission.
            let node = unsafe { &*g };
            let src = node.snapshot_half(active);
            if !mutant::is(e.mutant, Mutant::SkipConsolidateCopy) {
                let old = node.write_half(staging, |dst| std::mem::replace(dst, src.clone()));
                crate::free::release_half(e, st, old);
            }
            let next = node.next.load(Relaxed);
            if src.flags == 0 {
                prev.store(next, Relaxed); // unlink; node.next stays intact
                if mutant::is(e.mutant, Mutant::ClearNextOnUnlink) {
                    // Mutant: a scheduler standing on the node loses the rest of the chain.
                    node.next.store(std::ptr::null_mut(), Relaxed);
                }
                if mutant::is(e.mutant, Mutant::FreeAtUnlink) {
                    // Mutant: free now instead of after W4.
                    // SAFETY: none; this mutant breaks `kill`'s contract (I1) on purpose, and
                    // runs only under loom and shuttle, whose checks are meant to catch it.
                    unsafe { node.live.kill() };
                    st.live_nodes -= 1;
                    st.graveyard.push(g);
                    g = next;
                    continue;
                }
                st.free_list.push(g);
            } else {
                prev = &node.next;
            }
            g = next;
        }
    }
}
