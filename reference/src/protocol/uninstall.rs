//! Step 4, uninstall (`uninstall_breakpoint`): restore the original first instruction of each
//! matched function on which no session has an active flag left. Runs after W2, so no scheduler
//! still acts on the old (enabled) half when the instruction goes away. The chain stays.

use crate::code::{FuncId, OP_I_GENERIC_BREAKPOINT};
use crate::engine::{Engine, Permission};
use crate::export::Area;
use crate::progress::ThreadProgress;
use crate::sync::Ordering::Relaxed;

/// `judge_ix` is the half whose flags decide (the active one; the staging one for the
/// uninstall-before-commit mutant).
pub(crate) fn uninstall<P: ThreadProgress>(
    e: &Engine<P>,
    st: &mut Permission<'_>,
    area: Area,
    matched: &[FuncId],
    judge_ix: usize,
) {
    // On the module's export entries, the dispatch word of the active code index
    // (`load.rs::Engine::export_dispatch_ix`, ERTS's `uninstall_exp_breakpoints`).
    let ix = e.export_dispatch_ix(area);
    for &f in matched {
        let h = &e.area(area).funcs[f];
        let word = e.patch_word(area, f, ix);
        if word.load(Relaxed) != OP_I_GENERIC_BREAKPOINT {
            continue;
        }
        if crate::rest::sum_all_session_flags(e, st, area, f, judge_ix) == 0 {
            let head = h.gen_bp.load(Relaxed);
            assert!(
                !head.is_null(),
                "{} is patched but has no breakpoint",
                h.mfa
            );
            // SAFETY: live chain node under the permission.
            word.store(unsafe { &*head }.orig_instr, Relaxed);
        }
    }
}
