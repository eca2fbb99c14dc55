//! Step 1, staging (`set_function_break` / `clear_function_break`): write the staging half of
//! the session's node on each matched function. No scheduler reads the staging half, and a new
//! node is not reachable through the instruction yet (it is reached via an unpatched function's
//! slot, published with Release for the timem readers, or the pending `to_insert`).

use crate::bp::{flags, BpCount, GenericBp, SessionId};
use crate::calltrace::MatchSpec;
use crate::code::FuncId;
use crate::engine::{Engine, Permission};
use crate::export::Area;
use crate::mutant::{self, Mutant};
use crate::ordering::Site;
use crate::pattern::{FlagSet, PatternOp};
use crate::progress::ThreadProgress;
use crate::sync::Ordering::{Relaxed, Release};
use crate::sync::{ord, CHECKED};
use crate::timem::BpTimemTrace;
use std::sync::Arc as Refc;

/// What one staging call sets besides the counter flags: `global` (export areas only) and the
/// match spec of local/global.
#[derive(Clone, Debug, Default)]
pub(crate) struct Extra {
    pub global: bool,
    pub ms: Option<Refc<MatchSpec>>,
    /// Meta trace: set this tracer (or, with op `false`, clear meta).
    pub meta: Option<crate::tracer::TracerSpec>,
}

/// Stage `op` with `fl` for `session` on entry `f` of `area`, in half `staging`, with the
/// global flag and match spec.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stage_in<P: ThreadProgress>(
    e: &Engine<P>,
    st: &mut Permission<'_>,
    area: Area,
    f: FuncId,
    session: SessionId,
    staging: usize,
    op: PatternOp,
    fl: FlagSet,
    extra: &Extra,
) {
    assert!(
        !extra.global || area != Area::Code,
        "a global breakpoint is set on an export entry (the engine's or a loaded module's)"
    );
    let h = &e.area(area).funcs[f];
    let mut g = e.session_node_in(st, area, f, session, true);
    if op == PatternOp::False {
        if !g.is_null() {
            // SAFETY: live node, stager holds the permission.
            clear(
                e,
                st,
                unsafe { &*g },
                staging,
                fl,
                extra.global,
                extra.meta.is_some(),
            );
        }
        return;
    }
    if g.is_null() {
        if matches!(op, PatternOp::Pause | PatternOp::Restart) && !fl.local && extra.meta.is_none()
        {
            // ERTS: pause/restart on a function with no breakpoint does nothing. With `local`
            // it does: ERTS sets local trace with a plain set (as `true`) before the counters
            // get pause/restart, so the node is created and a counter flag then falls through
            // to a new, running counter.
            return;
        }
        let head = h.gen_bp.load(Relaxed);
        // SAFETY: live node under the permission.
        let orig = if head.is_null() {
            h.original
        } else {
            unsafe { &*head }.orig_instr
        };
        let node = Box::into_raw(GenericBp::new(st.next_bp_id, session, orig));
        st.next_bp_id += 1;
        st.live_nodes += 1;
        if head.is_null() {
            // The function is not patched, so the hit path does not read the slot; but the timem
            // readers (`get_timem_break`: return, schedule-out, previous-function charge) of a
            // process still charging this function from an earlier breakpoint do, at any time.
            if mutant::is(e.mutant, Mutant::FreshNodeRelaxedStore) {
                // Mutant: ERTS's plain store (finding F3, docs/erts-findings/F3-fresh-node-store.md).
                h.gen_bp.store(node, Relaxed);
            } else {
                // Release: pairs with the Acquire load of the slot in `get_timem_break`, so the
                // node's initialisation (`GenericBp::new`: liveness word, session, `next`, both
                // halves empty) happens before any reader that finds it there. The staging half
                // written below, after this store, is not covered by it: a reader reads that half
                // only through the index T3 flips, hence after W1 (docs/protocol.md I2.13-I2.19).
                h.gen_bp
                    .store(node, ord(e.mutant, Site::FreshNodeStore, Release));
            }
        } else if mutant::is(e.mutant, Mutant::LinkAtStage) {
            // Mutant: link the new head now, before W0 (and before its halves are written).
            // SAFETY: as below.
            unsafe { &*node }.next.store(head, Relaxed);
            h.gen_bp.store(node, Relaxed);
        } else {
            // SAFETY: node is fresh and private; head is live under the permission.
            unsafe { &*node }.next.store(head, Relaxed);
            unsafe { &*head }.to_insert.store(node, Relaxed);
        }
        g = node;
    }
    // SAFETY: live node, stager holds the permission.
    let node = unsafe { &*g };
    let mut dead = None;
    let mut dead_timem: Vec<Refc<BpTimemTrace>> = Vec::new();
    // Fresh call_time / call_memory objects, allocated before the half is opened for writing.
    let fresh_time = fl.call_time.then(|| new_timem(e, st));
    let fresh_mem = fl.call_memory.then(|| new_timem(e, st));
    let mut dead_ms = None;
    let pause_keeps_running = crate::mutant::is(e.mutant, crate::Mutant::TimemPauseKeepsRunning);
    let restart_keeps = crate::mutant::is(e.mutant, crate::Mutant::TimemRestartKeepsCounter);
    let r16_reset = crate::mutant::is(e.mutant, crate::Mutant::ErtsR16Reset);
    let mut reset_in_place: Vec<Refc<BpTimemTrace>> = Vec::new();
    let mut dead_meta = None;
    let mut reset_lost = None;
    node.write_half(staging, |d| {
        if let Some(spec) = &extra.meta {
            dead_meta = crate::meta::stage_meta(e, d, Some(spec));
        }
        if fl.local {
            d.flags |= flags::LOCAL_TRACE;
        }
        if extra.global {
            d.flags |= flags::GLOBAL_TRACE;
        }
        if fl.local || extra.global {
            // A new match spec replaces the old one (ERTS unrefs the old, sets the new).
            dead_ms = std::mem::replace(&mut d.ms, extra.ms.clone());
        }
        if fl.call_count {
            let exists = d.flags & flags::COUNT != 0;
            match (op, exists) {
                (PatternOp::Pause, true) => d.flags &= !flags::COUNT_ACTIVE,
                (_, true) => {
                    d.flags |= flags::COUNT_ACTIVE;
                    // Shared with the active half: the reset is visible at once, before the
                    // commit (ERTS `erts_atomic_set_nob(&count->acount, 0)`). Checked builds
                    // swap instead, to keep the calls the reset discards for count
                    // conservation (`Engine::count_ledger`): the same place in the counter's
                    // modification order, and no load that could read an older value.
                    let c = d.count.as_ref().expect("COUNT without counter");
                    if CHECKED {
                        reset_lost = Some((c.owner, c.acount.swap(0, Relaxed)));
                    } else {
                        c.acount.store(0, Relaxed);
                    }
                }
                // A new counter, also for pause/restart on a node without one: ERTS falls
                // through to "initialize new" and creates an *active* counter (the quirk
                // documented in docs/deviations.md).
                (_, false) => {
                    dead = d.count.replace(BpCount::new(session, f));
                    d.flags |= flags::COUNT | flags::COUNT_ACTIVE;
                }
            }
        }
        for (fresh, x, xa, slot) in [
            (
                fresh_time,
                flags::TIME_TRACE,
                flags::TIME_TRACE_ACTIVE,
                &mut d.time,
            ),
            (
                fresh_mem,
                flags::MEM_TRACE,
                flags::MEM_TRACE_ACTIVE,
                &mut d.memory,
            ),
        ] {
            let Some(fresh) = fresh else { continue };
            if op == PatternOp::Pause && d.flags & x != 0 {
                // Pause keeps the object; only the ACTIVE bit goes (effective at commit).
                if !pause_keeps_running {
                    d.flags &= !xa;
                }
                dead_timem.push(fresh);
                continue;
            }
            if restart_keeps && d.flags & x != 0 {
                d.flags |= xa;
                dead_timem.push(fresh);
                continue;
            }
            if r16_reset && d.flags & x != 0 {
                // ERTS before erlang/otp#8897: keep the shared object, reset its tables in
                // place (below, after the half is closed).
                d.flags |= xa;
                reset_in_place.extend(slot.clone());
                dead_timem.push(fresh);
                continue;
            }
            // true/restart on an existing counter: a fresh object in the staging half only;
            // the active half keeps the old one until consolidate (`bp_hash_reset`, the fix of
            // erlang/otp#8835, erlang/otp#8897). A new counter (also pause/restart on a node without one, the ERTS
            // fall-through quirk) is created active.
            if let Some(old) = slot.replace(fresh) {
                dead_timem.push(old);
            }
            d.flags |= x | xa;
        }
    });
    for t in reset_in_place {
        t.reset_in_place();
    }
    if let Some((owner, n)) = reset_lost {
        *st.count_resets.entry(owner).or_insert(0) += n;
    }
    drop(dead_ms);
    release_dead(e, st, dead_meta, dead, dead_timem);
}

/// Drop the staging half's references to the objects a staging write took out of it (meta
/// tracer, call_count counter, call_time/call_memory counters): `release_meta` (meta.rs),
/// `release_count` and `release_timem` (free.rs); the last reference poisons the object. Only
/// the staging half held them, so no scheduler reaches them.
fn release_dead<P: ThreadProgress>(
    e: &Engine<P>,
    st: &mut Permission<'_>,
    meta: Option<Refc<crate::meta::BpMetaTracer>>,
    count: Option<Refc<BpCount>>,
    timem: Vec<Refc<BpTimemTrace>>,
) {
    if let Some(m) = meta {
        crate::meta::release_meta(e, m);
    }
    if let Some(c) = count {
        crate::free::release_count(st, c);
    }
    for t in timem {
        crate::free::release_timem(st, t);
    }
}

/// `bp_calltrace_alloc`: a counter with one (empty) slot per scheduler plus the shared one.
pub(crate) fn new_timem<P: ThreadProgress>(
    e: &Engine<P>,
    st: &mut Permission<'_>,
) -> Refc<BpTimemTrace> {
    let id = st.next_timem_id;
    st.next_timem_id += 1;
    st.live_timem += 1;
    BpTimemTrace::new(id, e.schedulers)
}

/// Clear every flag of `session` on entry `f` of `area` (`clear_function_break_session` with
/// `ERTS_BPF_ALL`): session destroy, and the local/global exclusion.
pub(crate) fn clear_session<P: ThreadProgress>(
    e: &Engine<P>,
    st: &mut Permission<'_>,
    area: Area,
    f: FuncId,
    session: SessionId,
    staging: usize,
) {
    let g = e.session_node_in(st, area, f, session, true);
    if g.is_null() {
        return;
    }
    let all = FlagSet {
        local: true,
        call_count: true,
        call_time: true,
        call_memory: true,
    };
    // SAFETY: live node, stager holds the permission.
    clear(e, st, unsafe { &*g }, staging, all, true, true);
}

fn clear<P: ThreadProgress>(
    e: &Engine<P>,
    st: &mut Permission<'_>,
    node: &GenericBp,
    staging: usize,
    fl: FlagSet,
    global: bool,
    meta: bool,
) {
    let mut dead = None;
    let mut dead_timem = Vec::new();
    let mut dead_meta = None;
    node.write_half(staging, |d| {
        if meta {
            dead_meta = crate::meta::stage_meta(e, d, None);
        }
        if global {
            d.flags &= !flags::GLOBAL_TRACE;
        }
        if d.flags & (flags::LOCAL_TRACE | flags::GLOBAL_TRACE) == 0 {
            d.ms = None; // shared with the active half (Arc): dropping this reference is safe
        }
        if fl.call_time {
            d.flags &= !(flags::TIME_TRACE | flags::TIME_TRACE_ACTIVE);
            dead_timem.extend(d.time.take());
        }
        if fl.call_memory {
            d.flags &= !(flags::MEM_TRACE | flags::MEM_TRACE_ACTIVE);
            dead_timem.extend(d.memory.take());
        }
        if fl.local {
            d.flags &= !flags::LOCAL_TRACE;
        }
        if fl.call_count {
            d.flags &= !(flags::COUNT | flags::COUNT_ACTIVE);
            dead = d.count.take();
        }
    });
    release_dead(e, st, dead_meta, dead, dead_timem);
}
