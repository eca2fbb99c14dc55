//! Meta trace (ERTS `ERTS_BPF_META_TRACE`, `BpMetaTracer`, step 5 of `do_session_breakpoint`):
//! a breakpoint kind that sends a `call` message to the pattern's own tracer (the meta tracer)
//! on every hit, whatever the trace flags of the calling process.
//!
//! Objects: each node half may point to one [`BpMetaTracer`] (shared by both halves, like
//! `BpCount`), which holds the current tracer as an atomic pointer to a [`TracerCell`]. The
//! cell, not the `BpMetaTracer`, is what changes while schedulers run:
//!
//! M1. Publish. The stager writes a fresh cell and then stores it with Release (a new
//!     `BpMetaTracer` is reached by schedulers only through a half made active by the W0/W1
//!     waits; an existing one is swapped in place, as ERTS's `erts_atomic_xchg_nob` in
//!     `set_function_break`, and seen at once, before the commit).
//! M2. Hit. A scheduler loads the cell with Acquire (pairs with M1's Release), calls the tracer,
//!     and if the tracer answers `remove` installs NIL (null) with a compare-and-swap against
//!     the cell it loaded (ERTS `erts_atomic_cmpxchg_acqb`). Only the winner retires the old
//!     cell; a loser (the stager swapped in a new tracer meanwhile) leaves the new one alone.
//! M3. Retire and free. A cell unpublished by M1's swap or M2's compare-and-swap goes onto the
//!     retire list (under a mutex). The stager frees retired cells only after a wait for thread
//!     progress that began after it took them off the list ([`Engine::reclaim_meta_tracers`],
//!     run at the start of every `trace_pattern`); schedulers hold a cell only within one hit,
//!     between progress points, so no scheduler can still hold it (the ERTS
//!     `erts_schedule_thr_prgr_later_cleanup_op` of a tracer). The mutant
//!     [`Mutant::MetaFreeWithoutWait`] frees without that wait.
//!
//! Proof of M3, in the memory model of docs/protocol.md §0 (one rule a line). Cell C is
//! unpublished by U (the stager's swap in M1, or a scheduler's compare-and-swap in M2), retired
//! under the retire-list mutex, taken off the list by the stager, and freed after a wait W that
//! began after the take. Let S be a scheduler that loads C in a hit H, and p(W) the point of S
//! counted by W (docs/protocol.md §3). H lies on one side of p(W) ([sb]: a hit spans no
//! progress point).
//!   U →hb the take                     [sb] (stager's U) or [lock] (retire by the winner of
//!                                      M2, unlock, then the stager's lock)
//!   the take →sb the start of W        [sb]
//! (a) H →sb p(W): every access of H to C →hb the free          G-done of W
//! (b) p(W) →sb H: U →hb H's load of the tracer slot             G-seen of W, [hb]
//!     so the load reads U's store or a later one                [coh] (U is one RMW on the slot)
//!     and no later store writes C again (a swap installs a fresh cell, a compare-and-swap
//!     installs null)                                            program text
//!     so H does not load C: case (b) is impossible.
//! Every access to C therefore happens before the free ([race]).

use crate::bp::Liveness;
use crate::code::Mfa;
use crate::engine::Engine;
use crate::mutant::{self, Mutant};
use crate::ordering::Site;
use crate::progress::ThreadProgress;
use crate::sync::{
    lock, ord, AtomicPtr, Mutex,
    Ordering::{Acquire, Relaxed, Release},
    CHECKED,
};
use crate::term::Term;
use crate::tracer::{Enabled, TraceOpts, TraceTag, TracerCell, TracerSpec};
use std::sync::Arc as Refc;

/// `BpMetaTracer`: the meta tracer of one node, shared by its halves.
pub struct BpMetaTracer {
    /// The current tracer; null is NIL (removed).
    pub tracer: AtomicPtr<TracerCell>,
    pub live: Liveness,
}

impl BpMetaTracer {
    pub(crate) fn new(spec: &TracerSpec) -> Refc<BpMetaTracer> {
        Refc::new(BpMetaTracer {
            // The node half holding this object becomes reachable only after W0/W1 (M1).
            tracer: AtomicPtr::new(new_cell(spec)),
            live: Liveness::new(),
        })
    }
}

impl std::fmt::Debug for BpMetaTracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BpMetaTracer")
    }
}

fn new_cell(spec: &TracerSpec) -> *mut TracerCell {
    Box::into_raw(Box::new(TracerCell {
        spec: spec.clone(),
        live: Liveness::new(),
    }))
}

struct Retired(*mut TracerCell);
// SAFETY: a retired cell is owned by the retire list alone (unpublished by M1/M2); only the
// stager takes it off, under the list's mutex.
unsafe impl Send for Retired {}

/// The engine's meta tracer bookkeeping: the retire list and, in checked builds, the poisoned
/// cells and objects kept instead of freed.
pub(crate) struct MetaState {
    retired: Mutex<Vec<Retired>>,
    graveyard: Mutex<Vec<Retired>>,
    dead: Mutex<Vec<Dead>>,
}

/// A poisoned `BpMetaTracer` kept (checked builds) so a late reader asserts instead of reading
/// freed memory.
struct Dead(#[allow(dead_code)] Refc<BpMetaTracer>);
// SAFETY: no thread accesses a dead object except to assert on its poisoned liveness word,
// which is the race the checkers are meant to report; the stager alone drops it.
unsafe impl Send for Dead {}

impl MetaState {
    pub(crate) fn new() -> MetaState {
        MetaState {
            retired: Mutex::new(Vec::new()),
            graveyard: Mutex::new(Vec::new()),
            dead: Mutex::new(Vec::new()),
        }
    }

    fn retire(&self, c: *mut TracerCell) {
        if !c.is_null() {
            lock(&self.retired).push(Retired(c));
        }
    }
}

impl Drop for MetaState {
    fn drop(&mut self) {
        let all = std::mem::take(&mut *lock(&self.retired))
            .into_iter()
            .chain(std::mem::take(&mut *lock(&self.graveyard)));
        for Retired(c) in all {
            // SAFETY: the engine is going away: no scheduler can hold a cell any more.
            drop(unsafe { Box::from_raw(c) });
        }
    }
}

/// Stage meta on half `d` (the staging one): `set` installs `spec` (a new `BpMetaTracer`, or
/// the tracer of the existing one swapped in place, M1); `None` clears the flag.
pub(crate) fn stage_meta<P: ThreadProgress>(
    e: &Engine<P>,
    d: &mut crate::bp::GenericBpData,
    spec: Option<&TracerSpec>,
) -> Option<Refc<BpMetaTracer>> {
    use crate::bp::flags::META_TRACE;
    match spec {
        Some(spec) if d.flags & META_TRACE != 0 => {
            let mt = d.meta.as_ref().expect("META_TRACE without a BpMetaTracer");
            // Release: pairs with the Acquire load in `meta_hit` (M2): the cell's contents are
            // written before a scheduler can load the pointer.
            let old = mt
                .tracer
                .swap(new_cell(spec), ord(e.mutant, Site::MetaTracerSwap, Release));
            e.meta.retire(old);
            None
        }
        Some(spec) => {
            d.flags |= META_TRACE;
            d.meta.replace(BpMetaTracer::new(spec))
        }
        None => {
            d.flags &= !META_TRACE;
            d.meta.take()
        }
    }
}

/// Drop one half's reference; the last one unpublishes the tracer (M3) and poisons the object.
/// Called by the stager only where no scheduler reads a half holding `mt` any more (consolidate
/// after W3, staging on an object only the staging half held). Consolidate runs after W3 under
/// every wait plan when a chain holds a meta tracer: the elide-idle plan keeps W3 and W4 then
/// (`waitplan::beyond_proof_e`, docs/fewer-waits.md proof EL, EL7).
pub(crate) fn release_meta<P: ThreadProgress>(e: &Engine<P>, mt: Refc<BpMetaTracer>) {
    if Refc::strong_count(&mt) == 1 {
        // Relaxed: no scheduler reaches `mt` any more (see above); the cell goes through the
        // retire list and its wait anyway.
        let c = mt.tracer.swap(std::ptr::null_mut(), Relaxed);
        e.meta.retire(c);
        // SAFETY (`Liveness::kill`'s contract, I1): `mt` is held by no half any scheduler still
        // reads (the caller's precondition: consolidate after W3, under every wait plan, or an
        // object only the staging half held), so every scheduler's last `live` check is ordered before this; the
        // meta-swap shuttle model and `mutant_meta_free_without_wait_is_caught` check the wait.
        unsafe { mt.live.kill() };
        if CHECKED {
            lock(&e.meta.dead).push(Dead(mt));
        }
    }
}

/// Step 5 of the hit path: send `{trace, Pid, call, {M,F,Arity}}` to the meta tracer (M2).
/// Returns whether a message was traced.
pub(crate) fn meta_hit<P: ThreadProgress>(
    e: &Engine<P>,
    node_id: u64,
    mt: &BpMetaTracer,
    pid: u64,
    mfa: &Mfa,
) -> bool {
    mt.live
        .assert_live(&|| format!("BpMetaTracer of GenericBp#{node_id}"));
    // Acquire: pairs with the Release swap in `stage_meta` (M1), so the cell is fully written.
    let old = mt
        .tracer
        .load(ord(e.mutant, Site::MetaTracerHitLoad, Acquire));
    if old.is_null() {
        return false; // NIL: the meta tracer was removed
    }
    // SAFETY: `old` was loaded from the slot during this hit; it is freed only after a wait
    // that began after it was unpublished and retired, so this hit lies before the point of this
    // scheduler that the wait counted (M3, case a; case b cannot load it).
    let cell = unsafe { &*old };
    cell.live
        .assert_live(&|| format!("meta tracer cell of GenericBp#{node_id}"));
    let term = Term::Tuple(vec![
        Term::Name(mfa.module.clone()),
        Term::Name(mfa.name.clone()),
        Term::Int(mfa.arity as i64),
    ]);
    let a = cell.spec.emit(
        TraceTag::Call,
        &Term::Pid(pid),
        &term,
        &TraceOpts::default(),
    );
    cell.live
        .assert_live(&|| format!("meta tracer cell of GenericBp#{node_id} (after the call)"));
    if a == Enabled::Remove {
        // Relaxed both ways: the winner hands `old` to the retire list under its mutex (which
        // orders it before the stager's take), and installs NIL, which carries no data. ERTS
        // uses an acquire-barrier cmpxchg; see docs/deviations.md.
        if mt
            .tracer
            .compare_exchange(old, std::ptr::null_mut(), Relaxed, Relaxed)
            .is_ok()
        {
            e.meta.retire(old);
        }
    }
    a == Enabled::Trace
}

impl<P: ThreadProgress> Engine<P> {
    /// M3: free the meta tracer cells retired so far, after a wait for thread progress. The
    /// stager calls it under the permission at the start of every `trace_pattern`; tests call
    /// it directly. Returns how many cells it freed.
    pub fn reclaim_meta_tracers(&self) -> usize {
        let st = self.seize();
        self.reclaim_meta(&st)
    }

    /// [`Engine::reclaim_meta_tracers`] for a caller that holds the permission.
    pub(crate) fn reclaim_meta(&self, _st: &crate::engine::Permission<'_>) -> usize {
        let batch = if mutant::is(self.mutant, Mutant::MetaReclaimWaitBeforeTake) {
            // Mutant: wait, then take; a cell retired during the wait is freed without a wait
            // that began after its retirement (M3's "the take →sb the start of W" fails).
            if lock(&self.meta.retired).is_empty() {
                return 0;
            }
            self.progress.wait();
            std::mem::take(&mut *lock(&self.meta.retired))
        } else {
            let batch = std::mem::take(&mut *lock(&self.meta.retired));
            if batch.is_empty() {
                return 0;
            }
            if !mutant::is(self.mutant, Mutant::MetaFreeWithoutWait) {
                self.progress.wait();
            }
            batch
        };
        let n = batch.len();
        for Retired(c) in batch {
            // SAFETY: unpublished before it was retired, and the wait above began after we took
            // it off the list (M3), so every scheduler's last access to the cell, and to its
            // liveness word (`Liveness::kill`'s contract, I1), is ordered before this.
            unsafe { (*c).live.kill() };
            if CHECKED {
                lock(&self.meta.graveyard).push(Retired(c));
            } else {
                // SAFETY: as above; nothing else owns it.
                drop(unsafe { Box::from_raw(c) });
            }
        }
        n
    }

    /// The meta tracer's state as `trace_info(MFA, meta)` shows it: the tracer's term, or `[]`
    /// once it was removed (NIL). Stager side, under the permission.
    pub(crate) fn meta_term(&self, mt: &BpMetaTracer) -> Term {
        // Acquire: pairs with the Release swap in `stage_meta` (M1).
        let c = mt
            .tracer
            .load(ord(self.mutant, Site::MetaTracerInfoLoad, Acquire));
        // SAFETY: the caller holds the permission; cells are freed only by the stager.
        match unsafe { c.as_ref() } {
            Some(cell) => cell.spec.state.clone(),
            None => Term::List(vec![]),
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use crate::tracer::{Mailbox, ProcessTracer, Tracer};
    use crate::{
        Enabled, Engine, EngineConfig, FlagSet, InfoKey, Mutant, Pattern, PatternOp, Process, Qsbr,
        Scheduler, Term, TraceOpts, TraceSpec, TraceTag,
    };
    use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    use std::sync::{Arc, Barrier};
    use std::time::{Duration, Instant};

    fn engine(schedulers: usize, m: Option<Mutant>) -> Arc<Engine<Qsbr>> {
        Arc::new(Engine::new(
            EngineConfig::simple(1, schedulers).with_mutant(m),
        ))
    }
    fn f0() -> Pattern {
        Pattern::exact(&crate::Mfa::new("m", "f0", 0))
    }
    fn info(e: &Engine<Qsbr>, k: InfoKey) -> String {
        e.trace_info_term(0, &crate::Mfa::new("m", "f0", 0), k)
            .to_string()
    }
    fn combo() -> TraceSpec {
        TraceSpec::counters(FlagSet {
            local: true,
            call_count: true,
            ..FlagSet::default()
        })
    }

    /// trace_call_count_SUITE combo: local + meta + call_count. The meta tracer gets a message
    /// from every process, call-traced or not; trace_info shows the tracer.
    #[test]
    fn meta_on_every_hit_and_trace_info() {
        let e = engine(1, None);
        let mb = Mailbox::new(99);
        let spec = ProcessTracer::spec(&mb);
        assert_eq!(
            e.trace_pattern(&f0(), PatternOp::True, &combo().meta(spec.clone())),
            Ok(1)
        );
        assert_eq!(
            info(&e, InfoKey::Meta),
            "{meta,<0.99.0>}".replace("<0.99.0>", &Term::Pid(99).to_string())
        );
        assert_eq!(info(&e, InfoKey::MetaMatchSpec), "{meta_match_spec,[]}");
        let mut s = Scheduler::start(e.clone(), 0);
        s.call(0, &Process::new(1)); // not call-traced
        s.call(0, &Process::call_traced_in(2, 0));
        assert_eq!(
            s.events.len(),
            1,
            "local trace only for the call-traced process"
        );
        assert_eq!(
            mb.take_strings(),
            vec![
                format!("{{trace,{},call,{{m,f0,0}}}}", Term::Pid(1)),
                format!("{{trace,{},call,{{m,f0,0}}}}", Term::Pid(2)),
            ]
        );
        assert_eq!(info(&e, InfoKey::CallCount), "{call_count,2}");
        s.sleep();
        // meta off: the function stays traced; meta is false (OTP 29; OTP 25 says []).
        assert_eq!(
            e.trace_pattern(
                &f0(),
                PatternOp::False,
                &TraceSpec::default().meta(spec.clone())
            ),
            Ok(1)
        );
        assert_eq!(info(&e, InfoKey::Meta), "{meta,false}");
        assert!(info(&e, InfoKey::All).contains("{meta,false},{meta_match_spec,false}"));
        s.wake();
        s.call(0, &Process::new(1));
        assert!(
            mb.take().is_empty(),
            "no meta message after meta was cleared"
        );
    }

    /// A tracer answering `remove`: the hit installs NIL (trace_info meta → []), and the old
    /// cell is freed by the next reclaim, after a wait.
    #[test]
    fn remove_installs_nil_and_retires_the_cell() {
        struct Gone;
        impl Tracer for Gone {
            fn enabled(&self, _: TraceTag, _: &Term, _: &Term) -> Enabled {
                Enabled::Remove
            }
            fn trace(&self, _: TraceTag, _: &Term, _: &Term, _: &Term, _: &TraceOpts) {
                panic!("a removed tracer is not called")
            }
        }
        let e = engine(1, None);
        let spec = crate::TracerSpec::new(Arc::new(Gone), Term::Pid(7));
        let only_meta = TraceSpec::default();
        assert_eq!(
            e.trace_pattern(
                &f0(),
                PatternOp::True,
                &only_meta.clone().meta(spec.clone())
            ),
            Ok(1)
        );
        let mut s = Scheduler::start(e.clone(), 0);
        s.call(0, &Process::new(1));
        s.sleep();
        assert_eq!(info(&e, InfoKey::Meta), "{meta,[]}");
        let waits = crate::ThreadProgress::completed_waits(&e.progress);
        assert_eq!(e.reclaim_meta_tracers(), 1);
        assert_eq!(
            crate::ThreadProgress::completed_waits(&e.progress),
            waits + 1
        );
        assert_eq!(e.reclaim_meta_tracers(), 0);
    }

    /// The meta tracer swap race (M3): scheduler B is inside the meta tracer's callback (it
    /// holds the cell) when scheduler A's hit removes the tracer and the stager reclaims. The
    /// reclaim must wait for B. Returns (did the reclaim finish while B was inside, B's panic).
    fn swap_race(m: Option<Mutant>) -> (bool, Option<String>) {
        // Calls: 1st (B) traces and blocks inside `trace`; 2nd (A) answers remove.
        struct Gate {
            calls: AtomicU32,
            inside: Barrier,
            release: Barrier,
        }
        impl Tracer for Arc<Gate> {
            fn enabled(&self, _: TraceTag, _: &Term, _: &Term) -> Enabled {
                if self.calls.fetch_add(1, SeqCst) == 0 {
                    Enabled::Trace
                } else {
                    Enabled::Remove
                }
            }
            fn trace(&self, _: TraceTag, _: &Term, _: &Term, _: &Term, _: &TraceOpts) {
                self.inside.wait();
                self.release.wait();
            }
        }
        let gate = Arc::new(Gate {
            calls: AtomicU32::new(0),
            inside: Barrier::new(2),
            release: Barrier::new(2),
        });
        let e = engine(2, m);
        let spec = crate::TracerSpec::new(Arc::new(gate.clone()), Term::Pid(7));
        let r = e.trace_pattern(
            &f0(),
            PatternOp::True,
            &TraceSpec::default().meta(spec.clone()),
        );
        assert_eq!(r, Ok(1));
        let eb = e.clone();
        let b = std::thread::spawn(move || {
            let mut s = Scheduler::start(eb, 1);
            s.call(0, &Process::new(2));
            s.sleep();
        });
        gate.inside.wait(); // B holds the cell
        let mut a = Scheduler::start(e.clone(), 0);
        a.call(0, &Process::new(1)); // remove → NIL, old cell retired
        a.sleep();
        let done = Arc::new(AtomicU32::new(0));
        let (es, ds) = (e.clone(), done.clone());
        let stager = std::thread::spawn(move || {
            es.reclaim_meta_tracers();
            ds.store(1, SeqCst);
        });
        let t0 = Instant::now();
        while done.load(SeqCst) == 0 && t0.elapsed() < Duration::from_millis(300) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let early = done.load(SeqCst) == 1;
        gate.release.wait();
        let panic = b.join().err().map(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| "non-string panic".into())
        });
        stager.join().expect("stager");
        (early, panic)
    }

    #[test]
    fn reclaim_waits_for_a_scheduler_inside_the_meta_tracer() {
        let (early, panic) = swap_race(None);
        assert!(
            !early,
            "the reclaim finished while a scheduler held the cell"
        );
        assert_eq!(panic, None);
    }

    #[test]
    fn mutant_meta_free_without_wait_is_caught() {
        let (early, panic) = swap_race(Some(Mutant::MetaFreeWithoutWait));
        assert!(early, "the mutant frees at once");
        let p = panic.expect("the scheduler must see the freed cell");
        assert!(p.contains("read after free: meta tracer cell"), "{p}");
    }
}
