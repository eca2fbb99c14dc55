//! Step 3, commit (`erts_commit_staged_bp`): flip the global active index. A relaxed store;
//! thread progress (W1 before, W2 after) provides all the ordering.

use crate::engine::{Engine, Permission};
use crate::progress::ThreadProgress;
use crate::sync::Ordering::Relaxed;

pub(crate) fn commit<P: ThreadProgress>(e: &Engine<P>, _st: &mut Permission<'_>) {
    let active = e.active_bp_index.load(Relaxed);
    debug_assert!(active < 2, "active index {active} out of range");
    e.active_bp_index.store(active ^ 1, Relaxed);
}
