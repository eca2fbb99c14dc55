//! Step 2, install (`erts_install_breakpoints` + `erts_install_additional_session_bp`): patch the
//! first instruction of each matched function that has a breakpoint, and link a pending
//! `to_insert` node as the new chain head. Runs after W0, so a scheduler that reaches the node
//! through the new instruction or head already sees its fully written halves.

use crate::code::{FuncId, OP_I_GENERIC_BREAKPOINT};
use crate::engine::{Engine, Permission};
use crate::export::Area;
use crate::progress::ThreadProgress;
use crate::sync::Ordering::Relaxed;

pub(crate) fn install<P: ThreadProgress>(
    e: &Engine<P>,
    _st: &mut Permission<'_>,
    area: Area,
    matched: &[FuncId],
) {
    // On the module's export entries, the dispatch word of the active code index
    // (`load.rs::Engine::export_dispatch_ix`, ERTS's `install_exp_breakpoints`).
    let ix = e.export_dispatch_ix(area);
    for &f in matched {
        let h = &e.area(area).funcs[f];
        let head = h.gen_bp.load(Relaxed);
        if head.is_null() {
            continue;
        }
        let word = e.patch_word(area, f, ix);
        if word.load(Relaxed) != OP_I_GENERIC_BREAKPOINT {
            // One aligned word, seen whole ("atomicity without atomic operations").
            word.store(OP_I_GENERIC_BREAKPOINT, Relaxed);
        }
        // SAFETY: head is a live chain node; the stager holds the permission.
        let ti = unsafe { &*head }
            .to_insert
            .swap(std::ptr::null_mut(), Relaxed);
        if !ti.is_null() {
            // The new node's active half is disabled and its `next` is the old head.
            h.gen_bp.store(ti, Relaxed);
        }
    }
}
