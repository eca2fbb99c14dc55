//! Step 6, free (`erts_free_breakpoints`): release the nodes unlinked at consolidate. Runs after
//! W4 (under the pipeline plan, after the next call's first wait, which began after that
//! consolidate; under the elide-idle plan W4 is skipped only when the free list is empty), so no
//! scheduler still stands on them. Also the release of counters whose last half
//! reference went away.

use crate::bp::{BpCount, GenericBp};
use crate::engine::Permission;
use crate::sync::CHECKED;
use crate::timem::BpTimemTrace;
use std::sync::Arc as Refc;

/// Checked builds keep at most this many freed nodes poisoned before really freeing them in
/// std debug builds; loom and shuttle runs keep all of them (they are small).
pub(crate) const QUARANTINE: usize = 1 << 16;

pub(crate) fn free(st: &mut Permission<'_>) {
    let list = std::mem::take(&mut st.free_list);
    for g in list {
        // SAFETY: g was unlinked at consolidate and is referenced by nothing but the free list;
        // `kill` runs after W4, so no scheduler still reads its liveness word (I1; the
        // skip-w4-before-free mutant breaks this on purpose, under loom and shuttle only).
        unsafe { (*g).live.kill() };
        st.live_nodes -= 1;
        if CHECKED {
            st.graveyard.push(g);
        } else {
            // SAFETY: g came from Box::into_raw; no scheduler can reach it (W4, invariant I1).
            drop(unsafe { Box::from_raw(g) });
        }
    }
    if cfg!(not(any(loom, shuttle))) && st.graveyard.len() > QUARANTINE {
        let old: Vec<*mut GenericBp> = st.graveyard.drain(..QUARANTINE / 2).collect();
        for g in old {
            // SAFETY: quarantined long ago; poisoned, unreachable.
            drop(unsafe { Box::from_raw(g) });
        }
    }
}

/// Drop every reference a half's old contents held: its counter, its call_time and call_memory
/// objects and its meta tracer (each object's last reference poisons it; the meta tracer's cell
/// goes through the retire list). The one release of a half, for consolidate's copy over the
/// staging half (after W3, or W2 in an idle sequence) and for the blocking load's clear of both
/// halves under the block (`load.rs`).
pub(crate) fn release_half<P: crate::progress::ThreadProgress>(
    e: &crate::engine::Engine<P>,
    st: &mut Permission<'_>,
    old: crate::bp::GenericBpData,
) {
    if let Some(c) = old.count {
        release_count(st, c);
    }
    for t in [old.time, old.memory].into_iter().flatten() {
        release_timem(st, t);
    }
    if let Some(m) = old.meta {
        crate::meta::release_meta(e, m);
    }
}

/// Drop one half's reference to a counter; the last reference poisons it.
pub(crate) fn release_count(st: &mut Permission<'_>, c: Refc<BpCount>) {
    if Refc::strong_count(&c) == 1 {
        if let Some(n) = st.retired_counts.as_mut() {
            // No scheduler reaches the counter any more (below): its count is final.
            *n += c.acount.load(crate::sync::Ordering::Relaxed);
        }
        // SAFETY: the last half reference went away at consolidate (after W3, or in an idle
        // sequence of the elide-idle plan after W2: proof EL5 of docs/fewer-waits.md) or when the
        // staging half that alone held it was rewritten, so no scheduler reaches the counter.
        unsafe { c.live.kill() };
        if CHECKED && st.dead_counts.len() < QUARANTINE {
            st.dead_counts.push(c);
        }
    }
}

/// Drop one reference to a call_time/call_memory object (`bp_calltrace_unref`); the last one
/// frees it. Every caller runs at a point where no scheduler can reach the object any more
/// through a half it still reads (consolidate after W3, or after W2 in an idle sequence of the
/// elide-idle plan, proof EL5; the collection after its last wait; staging on an object only the
/// staging half held).
pub(crate) fn release_timem(st: &mut Permission<'_>, t: Refc<BpTimemTrace>) {
    release_timem_as(st, t, true);
}

/// [`release_timem`] of the collection's temporary objects (`collect.rs` C6): their counts were
/// merged into the real objects (C5), which hold them from then on, so they are not folded into
/// the retired total a second time (count conservation across versions, `load.rs`
/// `total_timed`).
pub(crate) fn release_temp_timem(st: &mut Permission<'_>, t: Refc<BpTimemTrace>) {
    release_timem_as(st, t, false);
}

fn release_timem_as(st: &mut Permission<'_>, t: Refc<BpTimemTrace>, fold: bool) {
    if Refc::strong_count(&t) == 1 {
        if let Some(n) = st.retired_timem.as_mut().filter(|_| fold) {
            // No scheduler reaches the object any more (below), so none writes its tables: the
            // read is the collection's quiescent read (`BpTimemTrace::read_into`).
            let mut tot = crate::timem::Totals::new();
            t.read_into(&mut tot);
            *n += tot.values().map(|(count, _)| count).sum::<i64>();
        }
        // SAFETY: every caller runs where no scheduler can reach `t` any more (see above; the
        // collect-free-before-last-wait mutant breaks this on purpose, under loom and shuttle).
        unsafe { t.live.kill() };
        st.live_timem -= 1;
        if CHECKED && st.dead_timem.len() < QUARANTINE {
            st.dead_timem.push(t);
        }
    }
}
