//! Models of the reference engine, shared by the loom and shuttle harnesses (`tests/loom.rs`,
//! `tests/shuttle.rs`). One model = an engine, a stager thread running a short script of
//! `trace_pattern` calls, and scheduler threads calling functions between progress points. After
//! the run, the harness asserts the properties below; during the run the engine's own assertions
//! (read after free, empty slot, half read while written) fire, and under loom every access to a
//! half or a liveness word is checked for causality.
//!
//! Properties (docs/protocol.md numbers them):
//! - I1 no scheduler reads a `GenericBp` or counter after it is freed (engine assertion + loom);
//! - I2 no scheduler reads a half while the stager writes it (loom cell, shuttle write marks);
//! - I3 per scheduler, activation is atomic: once a scheduler has acted on the new settings of a
//!   `trace_pattern` it never again acts on the old ones, on any of the functions it changed;
//! - I4 once `trace_pattern` has returned, every later hit uses the new settings;
//! - I5 at rest: halves equal, nothing pending, instruction patched iff some flag is active, free
//!   list empty, nothing leaked;
//! - I6 a paused count is frozen; a restarted count starts from zero.

use bpspec_reference::sync::{spawn, Arc, AtomicU32, Ordering::*};
use bpspec_reference::TraceSpec;
use bpspec_reference::{
    flags, Engine, EngineConfig, InfoItem, InfoValue, LoadProtocol, Mutant, Pattern, PatternOp,
    Process, Scheduler, ThreadProgress, TraceFlags,
};

pub mod collection;
pub mod epoch;
pub mod exports;
pub mod harness;
pub mod load;
pub mod meta;
pub mod readers;
pub mod results;
pub mod sessions;
pub mod waits;

/// What a scheduler thread does, step by step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Call function `f`.
    Call(usize),
    /// A quiescent point (between processes).
    Progress,
    /// Sleep, then wake up again.
    Nap,
    /// Sleep, yield the thread `n` times while asleep, then wake up: a scheduler that sleeps
    /// through whatever the stager does in between. Under loom each yield hands the core to the
    /// stager until its next yield (a wait loop's spin) without a preemption, so the stager can
    /// run whole waits and steps while this scheduler sleeps; a yield also keeps this thread
    /// from re-reading any value it read before it while a newer one exists (docs/protocol.md
    /// §0.4), so a script calls a function only after its last yield.
    Doze(usize),
    /// Yield the thread (awake, between processes, no progress point), as in [`Step::Doze`].
    Yield,
}

/// One `trace_pattern` call.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    /// The trace session (0 = legacy).
    pub session: u32,
    /// `None` = every function.
    pub func: Option<usize>,
    pub op: PatternOp,
    pub flags: TraceFlags,
}

pub const COUNT: TraceFlags = TraceFlags::CALL_COUNT;
pub const LOCAL: TraceFlags = TraceFlags::LOCAL;
pub const BOTH: TraceFlags = TraceFlags::LOCAL_AND_COUNT;

/// A model configuration: the stager's `trace_pattern` calls (`O`: [`Op`] here, the export
/// models' `XOp`) racing one script of [`Step`]s per scheduler.
#[derive(Clone, Debug)]
pub struct Scenario<O = Op> {
    pub name: &'static str,
    pub functions: usize,
    /// Applied before any scheduler runs.
    pub setup: Vec<O>,
    /// Run by the stager while the schedulers run.
    pub ops: Vec<O>,
    /// One script per scheduler.
    pub schedulers: Vec<Vec<Step>>,
    /// Repeat `ops` this many times (shuttle stress).
    pub rounds: usize,
}

impl<O> Scenario<O> {
    /// A one-round scenario: `setup`, then `ops` racing one scheduler per script.
    pub fn new(
        name: &'static str,
        functions: usize,
        setup: Vec<O>,
        ops: Vec<O>,
        schedulers: Vec<Vec<Step>>,
    ) -> Self {
        Scenario {
            name,
            functions,
            setup,
            ops,
            schedulers,
            rounds: 1,
        }
    }
}

fn op(func: Option<usize>, op: PatternOp, flags: TraceFlags) -> Op {
    sop(0, func, op, flags)
}

fn sop(session: u32, func: Option<usize>, op: PatternOp, flags: TraceFlags) -> Op {
    Op {
        session,
        func,
        op,
        flags,
    }
}

/// Sessions the models use (acted flags are OR-ed over them, as one hit acts on every node).
const SESSIONS: u32 = 2;

/// The yields of `remove-doze`'s sleep: more than the stager yields in a removal's four waits
/// (two spins each under `EpochProgress`, none under `Qsbr` while the scheduler sleeps), so
/// without a preemption the scheduler wakes after the stager returned. The epoch baseline at
/// preemption bound 2: 46,433 executions with 8, 36,155 with 12 and with 16.
const DOZE: usize = 12;

/// The progress points (each followed by a yield) of `remove-yield` before its call: enough
/// for the scheduler to pass every wait of the removal before it calls. With 8,
/// `epoch-repin-without-fence` died after 13 and 126 executions at bounds 1 and 2; with 10 and
/// more at the first. Each pass costs executions (the epoch baseline at bound 2: 9,477 with
/// 8, 10,683 with 10, 21,634 with 12).
const PASSES: usize = 10;

/// The loom scenarios (one stager, one or two schedulers, two functions).
pub fn loom_scenarios() -> Vec<Scenario> {
    use PatternOp::*;
    use Step::*;
    let two = || vec![vec![Call(0), Call(1), Progress, Call(0), Call(1)]];
    let one = |script: &[Step]| vec![script.to_vec()];
    // Both functions get `fl`, then lose it.
    let on_off = |name, fl, schedulers| {
        let (on, off) = (op(None, True, fl), op(None, False, fl));
        Scenario::new(name, 2, vec![on], vec![off], schedulers)
    };
    // f0 counted, then `ops` racing one scheduler running `script`.
    let counted_f0 = |name, ops: &[Op], script| {
        Scenario::new(
            name,
            1,
            vec![op(Some(0), True, COUNT)],
            ops.to_vec(),
            one(script),
        )
    };
    let f0_off = op(Some(0), False, COUNT);
    // Sessions 0 and 1 chained on f0; `session`'s node is removed.
    let remove_sess = |name, session| {
        let setup = vec![sop(0, Some(0), True, COUNT), sop(1, Some(0), True, COUNT)];
        let ops = vec![sop(session, Some(0), False, COUNT)];
        Scenario::new(name, 1, setup, ops, one(&[Call(0), Progress, Call(0)]))
    };
    let update = (op(None, True, LOCAL), op(None, True, COUNT));
    let add_remove = vec![op(Some(0), True, COUNT), op(Some(1), False, COUNT)];
    let pause_restart = [op(Some(0), Pause, COUNT), op(Some(0), Restart, COUNT)];
    let pass_then_call: Vec<Step> = (0..PASSES)
        .flat_map(|_| [Progress, Yield])
        .chain([Call(0)])
        .collect();
    vec![
        Scenario::new("add", 2, vec![], vec![op(None, True, BOTH)], two()),
        Scenario::new("update", 2, vec![update.0], vec![update.1], two()),
        on_off("remove", BOTH, two()),
        on_off(
            "remove-2sched",
            COUNT,
            vec![vec![Call(0), Call(1)], vec![Call(1), Call(0)]],
        ),
        Scenario::new(
            "add-and-remove",
            2,
            vec![op(Some(1), True, COUNT)],
            add_remove,
            one(&[Call(0), Call(1), Progress, Call(1), Call(0)]),
        ),
        counted_f0(
            "pause-restart",
            &pause_restart,
            &[Call(0), Progress, Call(0), Progress, Call(0)],
        ),
        // Two sessions chained on one function; removing the newer one unlinks the head
        // while the function stays patched, so only W4 keeps a scheduler standing on it safe.
        remove_sess("remove-session", 1),
        // Removing the older session: a scheduler on the head walks `next` onto it.
        remove_sess("remove-old-session", 0),
        // A scheduler that keeps calling across as many progress points as the removal has
        // waits, so every wait is passed by a progress point rather than by the final sleep.
        counted_f0(
            "remove-long",
            &[f0_off],
            &[
                Call(0),
                Progress,
                Call(0),
                Progress,
                Call(0),
                Progress,
                Call(0),
                Progress,
                Call(0),
            ],
        ),
        counted_f0("remove-nap", &[f0_off], &[Call(0), Nap, Call(0)]),
        // A scheduler that starts awake, sleeps through the whole removal (its yields let the
        // stager run wait after wait), wakes up and only then calls the function: nothing but
        // the wake-up orders the call after the restore (T4) and the emptied slot (T5).
        counted_f0("remove-doze", &[f0_off], &[Doze(DOZE), Call(0)]),
        // A scheduler that stays awake and passes every wait with a progress point, yielding
        // after each, and calls the function only after the last one: nothing but its progress
        // points orders the call after T4 and T5 (kills `epoch-repin-without-fence`).
        counted_f0("remove-yield", &[f0_off], &pass_then_call),
    ]
}

/// The shuttle schedulers' script: `rounds` rounds, each calling every one of `fs` functions
/// once (starting one function further each round) and ending at a progress point, every
/// third at a nap instead. `call`, `progress` and `nap` are the model's steps.
pub(crate) fn rotating_calls<T: Copy>(
    fs: usize,
    rounds: usize,
    call: impl Fn(usize) -> T,
    progress: T,
    nap: T,
) -> Vec<T> {
    (0..rounds)
        .flat_map(|r| {
            let end = if r % 3 == 2 { nap } else { progress };
            (0..fs)
                .map(|f| call((f + r) % fs))
                .chain([end])
                .collect::<Vec<T>>()
        })
        .collect()
}

/// The shuttle scenarios: more functions, three or four schedulers, repeated loops.
pub fn shuttle_scenarios() -> Vec<Scenario> {
    use PatternOp::*;
    use Step::*;
    let script = |fs, rounds| rotating_calls(fs, rounds, Call, Progress, Nap);
    let mut out: Vec<Scenario> = loom_scenarios();
    for s in out.iter_mut() {
        s.schedulers.push(script(s.functions, 3));
    }
    out.push(Scenario {
        name: "churn-4sched",
        functions: 4,
        setup: vec![],
        ops: vec![
            op(None, True, BOTH),
            op(Some(1), Pause, COUNT),
            op(Some(1), Restart, COUNT),
            op(Some(2), False, BOTH),
            op(None, False, BOTH),
        ],
        schedulers: (0..4).map(|_| script(4, 6)).collect(),
        rounds: 3,
    });
    out.push(Scenario {
        name: "toggle-3sched",
        functions: 3,
        setup: vec![op(Some(0), True, COUNT)],
        ops: vec![
            op(Some(1), True, COUNT),
            op(Some(0), False, COUNT),
            op(Some(0), True, LOCAL),
            op(Some(1), False, COUNT),
            op(Some(0), False, LOCAL),
        ],
        schedulers: (0..3).map(|_| script(3, 5)).collect(),
        rounds: 2,
    });
    out
}

/// A scheduler's voluntary switch after a progress point: `yield_now` under shuttle and on real
/// threads, nothing under loom. In loom 0.7.2 a yield makes the thread's later loads skip every
/// store it had seen before it when a newer one exists (`rt/atomic.rs`, `match_load_to_stores`
/// and `is_seen_before_yield`), which would hide exactly the stale re-reads a progress point's
/// barrier exists to prevent; under loom the scheduler runs on when the stager's wait loop
/// yields, and any other switch is a preemption (docs/protocol.md §0.4). Shuttle runs every
/// access sequentially consistent, so its yield prunes nothing and keeps its schedules.
pub(crate) fn switch_after_progress() {
    #[cfg(not(loom))]
    bpspec_reference::sync::yield_now();
}

/// What a scheduler observed on one call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seen {
    pub(crate) func: usize,
    pub(crate) acted: u32,
    /// How many stager ops had returned before the call (Acquire-read).
    pub(crate) returned: u32,
    /// The sessions whose call_count counter the call counted on (`Hit::counted`).
    pub(crate) counted: u64,
}

/// Count conservation at rest: per (session, function), the calls the schedulers' hits counted
/// (`Hit::counted`, tallied on each scheduler thread and returned from it) equal the calls the
/// engine's counters hold, folded as the engine folds them (`Engine::count_ledger`: live
/// counters, counters released, calls a reset to zero discarded). A lost update, or a count
/// on a paused counter, breaks it. `counted` yields (function, sessions bit set) per hit.
pub(crate) fn check_count_conservation<P: ThreadProgress>(
    engine: &Engine<P>,
    counted: impl IntoIterator<Item = (usize, u64)>,
) {
    let mut hits = std::collections::BTreeMap::new();
    for (f, bits) in counted {
        for s in (0..64).filter(|s| bits & (1u64 << s) != 0) {
            *hits.entry((s as u32, f)).or_insert(0u64) += 1;
        }
    }
    let mut ledger = engine.count_ledger();
    ledger.retain(|_, n| *n != 0);
    assert!(
        ledger == hits,
        "count conservation violated: the counters hold (session, function) -> calls {ledger:?}, \
         the hits that counted were {hits:?}"
    );
}

/// The flags a hit acts on, for classification.
const ACTED: u32 = flags::LOCAL_TRACE | flags::COUNT_ACTIVE;

/// Walk a scheduler's script: `call(s, f)` for each `Call(f)` (its results, in order, are
/// returned), a progress point for each `Progress`, a sleep and wake-up for each `Nap`; then the
/// scheduler goes to sleep.
pub(crate) fn walk_script<P: ThreadProgress, T>(
    s: &mut Scheduler<P>,
    script: Vec<Step>,
    mut call: impl FnMut(&mut Scheduler<P>, usize) -> T,
) -> Vec<T> {
    let mut seen = Vec::new();
    for step in script {
        match step {
            Step::Call(f) => seen.push(call(s, f)),
            Step::Progress => {
                s.progress();
                switch_after_progress();
            }
            Step::Nap => {
                s.sleep();
                s.wake();
            }
            Step::Doze(n) => {
                s.sleep();
                for _ in 0..n {
                    bpspec_reference::sync::yield_now();
                }
                s.wake();
            }
            Step::Yield => bpspec_reference::sync::yield_now(),
        }
    }
    s.sleep();
    seen
}

/// The run shared by the session and export models: one scheduler thread per script, each on
/// its own process of `procs`, where `call` makes one call and says what it saw, given how many
/// stager ops had returned (an Acquire load pairing with the Release store after each op);
/// meanwhile the stager runs `op(i)` for each of the `ops` ops and records `acted()` after each.
/// Returns what each scheduler saw, and the generations (before any op, then after each).
pub(crate) fn schedulers_vs_stager<P: ThreadProgress, T: Send + 'static, G>(
    engine: &Arc<Engine<P>>,
    scripts: &[Vec<Step>],
    procs: Vec<bpspec_reference::Proc>,
    ops: usize,
    mut op: impl FnMut(usize),
    acted: impl Fn() -> G,
    call: impl Fn(&mut Scheduler<P>, usize, &mut bpspec_reference::Proc, u32) -> T
        + Clone
        + Send
        + 'static,
) -> (Vec<Vec<T>>, Vec<G>) {
    let mut gens = vec![acted()];
    let returned = Arc::new(AtomicU32::new(0));
    let handles: Vec<_> = scripts
        .iter()
        .zip(procs)
        .enumerate()
        .map(|(id, (script, mut proc))| {
            let (engine, returned, script) = (engine.clone(), returned.clone(), script.clone());
            let call = call.clone();
            spawn(move || {
                let mut s = Scheduler::start(engine, id);
                walk_script(&mut s, script, |s, f| {
                    // Acquire: pairs with the Release store after each stager op.
                    let r = returned.load(Acquire);
                    call(s, f, &mut proc, r)
                })
            })
        })
        .collect();
    for i in 0..ops {
        op(i);
        gens.push(acted());
        // Release: pairs with the Acquire load before each scheduler call.
        returned.store(i as u32 + 1, Release);
    }
    let per_sched = handles
        .into_iter()
        .map(|h| h.join().expect("scheduler panicked"))
        .collect();
    (per_sched, gens)
}

/// Where a scenario's functions live: the engine's static code area, or the current version
/// of a module that is never loaded (docs/nonblocking-load.md §7, "The static area").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The static area: [`Engine::trace_pattern`], [`Scheduler::call`], [`Engine::trace_info`].
    Static,
    /// Module `m`'s version 1 on an engine made `with_versions_only` (no static area: every
    /// static entry point panics), under `NonBlocking` (no world lock; nothing is loaded):
    /// `trace_pattern_funcs_op_in`, `Scheduler::call_version` (the active code index, the
    /// export entry's address for it, the version's first instruction, then the engine's one
    /// hit path), `trace_info_item_version_in`.
    Versions,
}

impl Placement {
    /// The suffix of a scenario's name in the results tables (`@versions`; none for the static
    /// area).
    pub fn suffix(self) -> &'static str {
        match self {
            Placement::Static => "",
            Placement::Versions => "@versions",
        }
    }
}

/// An engine of `functions` functions `m:f0/0 ..` at `placement`, `schedulers` schedulers,
/// `mutant`, room for `sessions` sessions: the static area's, or module `m`'s version 1 on an
/// engine with no static area (`Engine::with_versions_only`, `NonBlocking`, never loaded).
pub fn placed_engine<P: ThreadProgress>(
    functions: usize,
    schedulers: usize,
    mutant: Option<Mutant>,
    sessions: usize,
    placement: Placement,
) -> Engine<P> {
    let static_fns = match placement {
        Placement::Static => functions,
        Placement::Versions => 0,
    };
    let cfg = EngineConfig::simple(static_fns, schedulers).with_mutant(mutant);
    let e = Engine::<P>::new_with_sessions(cfg, sessions);
    match placement {
        Placement::Static => e,
        Placement::Versions => e
            .with_module(functions, LoadProtocol::NonBlocking, false)
            .with_versions_only(),
    }
}

/// Where `e`'s functions are: an engine of [`placed_engine`] with no static function has them
/// on module 0's versions.
pub fn placement_of<P: ThreadProgress>(e: &Engine<P>) -> Placement {
    if e.code.funcs.is_empty() {
        Placement::Versions
    } else {
        Placement::Static
    }
}

/// A call of function `f` by process `p` without a stack, wherever the scheduler's engine has
/// its functions: the static area's `Scheduler::call` (its hit record), or
/// `Scheduler::call_version` on module 0's current version. Returns the hit's acted flags and
/// the sessions it counted on (`Hit::flags`, `Hit::counted`).
pub(crate) fn call_at<P: ThreadProgress>(
    s: &mut Scheduler<P>,
    f: usize,
    p: &Process,
) -> (u32, u64) {
    match placement_of(s.engine()) {
        Placement::Static => {
            s.call(f, p);
            let h = s.hits.last().expect("call records a hit");
            (h.flags, h.counted)
        }
        Placement::Versions => {
            let seen = s.call_version(p, 0, f);
            assert_eq!(seen.version, 1, "f{f}: a call outside version 1");
            (seen.flags, seen.counted_in)
        }
    }
}

/// The active flags of `session`'s node on function `f`, wherever `e`'s functions are.
pub(crate) fn active_flags_at<P: ThreadProgress>(e: &Engine<P>, session: u32, f: usize) -> u32 {
    match placement_of(e) {
        Placement::Static => e.active_flags(session, f),
        Placement::Versions => e.active_flags_version_in(0, session, f),
    }
}

/// Run one execution of `scn` with progress implementation `P` and `mutant`. Panics on any
/// property violation (that is how loom and shuttle see it).
pub fn run<P: ThreadProgress>(scn: &Scenario, mutant: Option<Mutant>) {
    run_on::<P>(scn, mutant, Placement::Static)
}

/// [`run`] with the scenario's functions at `placement`: the same scripts, stager ops and
/// checks.
pub fn run_on<P: ThreadProgress>(scn: &Scenario, mutant: Option<Mutant>, placement: Placement) {
    // Room for the sessions the scenario names (each slot is model atomics in every execution).
    let room = scn
        .setup
        .iter()
        .chain(&scn.ops)
        .map(|o| o.session as usize + 1)
        .max();
    let engine = Arc::new(placed_engine::<P>(
        scn.functions,
        scn.schedulers.len(),
        mutant,
        room.unwrap_or(1),
        placement,
    ));
    let fns = scn.functions;
    for o in &scn.setup {
        apply(&engine, o);
    }
    // Expected acted flags per function after each stager op (index 0 = before any).
    let mut gens: Vec<Vec<u32>> = vec![acted_now(&engine, fns)];
    let returned = Arc::new(AtomicU32::new(0));
    let handles: Vec<_> = scn
        .schedulers
        .iter()
        .enumerate()
        .map(|(id, script)| {
            let (engine, returned, script) = (engine.clone(), returned.clone(), script.clone());
            spawn(move || {
                let mut s = Scheduler::start(engine, id);
                s.record = true;
                let p = Process {
                    pid: 100 + id as u64,
                    call_traced: u64::MAX,
                };
                walk_script(&mut s, script, |s, f| {
                    // Acquire: pairs with the Release store after trace_pattern returns,
                    // so this call is "later" than that return (property I4).
                    let r = returned.load(Acquire);
                    let (acted, counted) = call_at(s, f, &p);
                    Seen {
                        func: f,
                        acted: acted & ACTED,
                        returned: r,
                        counted,
                    }
                })
            })
        })
        .collect();
    // The counter the last op paused (session, function) and its count right after the pause.
    let mut paused_at: Option<(u32, usize, u64)> = None;
    for round in 0..scn.rounds {
        for (i, o) in scn.ops.iter().enumerate() {
            if let Some((s, f, c)) = paused_at.take() {
                // I6: nothing counts while paused, whatever the schedulers did meanwhile (the
                // paused counter itself, whatever function the next op names).
                let now = count(&engine, s, f);
                assert_eq!(
                    now,
                    Some(c),
                    "paused count of f{f} in session {s} changed from {c} to {now:?}"
                );
            }
            apply(&engine, o);
            if o.op == PatternOp::Pause {
                let f = o.func.unwrap_or(0);
                paused_at = count(&engine, o.session, f).map(|c| (o.session, f, c));
            }
            if round == 0 {
                gens.push(acted_now(&engine, fns));
            }
            // Release: pairs with the Acquire load before each scheduler call.
            returned.store((round * scn.ops.len() + i + 1) as u32, Release);
        }
    }
    let per_sched: Vec<Vec<Seen>> = handles
        .into_iter()
        .map(|h| h.join().expect("scheduler panicked"))
        .collect();
    if scn.rounds == 1 {
        for (id, seen) in per_sched.iter().enumerate() {
            check_generations(id, seen, &gens);
        }
    }
    if let Err(e) = engine.check_at_rest() {
        panic!("I5 at rest violated: {e}");
    }
    check_count_conservation(
        &engine,
        per_sched.iter().flatten().map(|c| (c.func, c.counted)),
    );
}

/// I3 and I4 over one scheduler's calls, for a single-round script of stager ops.
///
/// `gens[j]` is the acted-flag vector after `j` stager ops. A call on `f` that acted on `a` is
/// consistent with generations `G = { j : gens[j][f] == a }`. If activation is atomic per
/// scheduler (I3), the generation a scheduler acts on never goes back, so a later call's
/// `max G` can never be below an earlier call's `min G`; and if I4 holds, a call made after op
/// `k` returned acted on a generation `>= k`, so `max G >= k`. Neither test can fire on a correct
/// run (the real generation is in `G`), so every failure is a real violation.
pub(crate) fn check_generations(id: usize, seen: &[Seen], gens: &[Vec<u32>]) {
    let mut floor: Option<(usize, usize)> = None; // (min G, call index) of the newest evidence
    for (n, c) in seen.iter().enumerate() {
        let g: Vec<usize> = (0..gens.len())
            .filter(|&j| gens[j][c.func] == c.acted)
            .collect();
        let (Some(&lo), Some(&hi)) = (g.first(), g.last()) else {
            panic!(
                "scheduler {id}: call {n} of f{} acted on flags {:#x}, which no generation had",
                c.func, c.acted
            );
        };
        assert!(
            hi >= c.returned as usize,
            "I4 violated: scheduler {id}: call {n} of f{} acted on flags {:#x} of generation <= {hi} after trace_pattern #{} returned",
            c.func,
            c.acted,
            c.returned
        );
        if let Some((flo, fcall)) = floor {
            assert!(
                hi >= flo,
                "I3 violated: scheduler {id}: call {n} of f{} acted on generation <= {hi} after call {fcall} acted on generation >= {flo}",
                c.func
            );
        }
        if floor.is_none_or(|(flo, _)| lo > flo) {
            floor = Some((lo, n));
        }
    }
}

fn apply<P: ThreadProgress>(e: &Engine<P>, o: &Op) {
    let spec = TraceSpec::from(o.flags).session(o.session);
    trace_on(e, o.func, o.op, &spec);
}

/// `trace_pattern` on function `func` (`None`: every function) with `spec`; asserts that it
/// matched those functions. The stagers of every model family go through it: the static
/// area's `Engine::trace_pattern`, or on an engine of [`Placement::Versions`] the module's
/// `Engine::trace_pattern_funcs_op_in` (the same staging and W0–W4 sequence).
pub(crate) fn trace_on<P: ThreadProgress>(
    e: &Engine<P>,
    func: Option<usize>,
    op: PatternOp,
    spec: &TraceSpec,
) {
    if placement_of(e) == Placement::Versions {
        // Module 0's functions, in its current version ([`Placement::Versions`]).
        let fs: Vec<usize> = match func {
            Some(f) => vec![f],
            None => (0..e.code_mgmt().mods[0].functions()).collect(),
        };
        let n = e
            .trace_pattern_funcs_op_in(0, &fs, op, spec)
            .expect("valid trace_pattern");
        assert_eq!(
            n,
            fs.len(),
            "trace_pattern returns the number of matched functions"
        );
        return;
    }
    let pat = match func {
        None => Pattern::all(),
        Some(f) => Pattern::exact(&e.code.funcs[f].mfa),
    };
    let n = e
        .trace_pattern(&pat, op, spec)
        .expect("valid trace_pattern");
    assert_eq!(
        n,
        if func.is_some() { 1 } else { e.code.len() },
        "trace_pattern returns the number of matched functions"
    );
}

fn acted_now<P: ThreadProgress>(e: &Engine<P>, n: usize) -> Vec<u32> {
    (0..n)
        .map(|f| (0..SESSIONS).fold(0, |acc, s| acc | active_flags_at(e, s, f)) & ACTED)
        .collect()
}

fn count<P: ThreadProgress>(e: &Engine<P>, session: u32, f: usize) -> Option<u64> {
    let info = match placement_of(e) {
        Placement::Static => e.trace_info(session, &e.code.funcs[f].mfa, InfoItem::CallCount),
        Placement::Versions => e.trace_info_item_version_in(0, session, f, InfoItem::CallCount),
    };
    match info {
        InfoValue::Count(c) => Some(c),
        _ => None,
    }
}

/// Which checker kills which mutant on which scenario: the kill matrix the tests enforce. A
/// mutant absent from a checker's list is expected to survive that checker (docs/mutants.md says
/// why: shuttle runs every atomic as SeqCst, so it cannot see ordering bugs).
pub fn expected_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    match checker {
        "loom" => vec![
            (SkipWaitBeforeInstall, "add"),
            (SkipWaitBeforeCommit, "add"),
            (SkipWaitBeforeUninstall, "remove-2sched"),
            (SkipWaitBeforeConsolidate, "remove"),
            (SkipWaitBeforeFree, "remove-session"),
            (UninstallBeforeCommit, "remove-2sched"),
            (SkipConsolidateCopy, "update"),
            (ProgressWithoutBarrier, "remove-long"),
            (WaitWithoutNewPeriod, "remove"),
            (WakeWithoutBarrier, "remove-nap"),
        ],
        "shuttle" => vec![
            (SkipWaitBeforeConsolidate, "remove-long"),
            (SkipWaitBeforeFree, "remove-session"),
            (UninstallBeforeCommit, "remove-2sched"),
            (SkipConsolidateCopy, "update"),
            (WaitWithoutNewPeriod, "remove"),
        ],
        other => panic!("unknown checker {other}"),
    }
}

/// The [`bpspec_reference::EpochProgress`] mutants and the loom scenario (of
/// [`loom_scenarios`], run with the epoch grace period) that kills each.
/// `epoch-repin-without-fence` dies on `remove-yield` at the first execution, at bounds
/// 0 to 3 ("Causality violation: Concurrent read and write accesses.": the call's read of a
/// half, `GenericBp::read_half`, races the stager's `write_half` of it): the scheduler yields
/// after each progress point but calls the function only after the last one, so loom's yield
/// pruning (docs/protocol.md §0.4) leaves its stale reads alone. On `remove-long` it survived at bounds 1, 2 and 3 (before crossbeam-epoch was patched for loom) (222, 6,948 and
/// 57,387 executions).
pub const EPOCH_KILLS: &[(Mutant, &str)] = &[(Mutant::EpochRepinWithoutFence, "remove-yield")];

/// [`bpspec_reference::EpochProgress`] mutants loom does not kill, on the scenario tried, with
/// no argument that they are harmless (docs/thread-progress.md). None since `remove-yield`
/// kills `epoch-repin-without-fence`; `tests/loom.rs::epoch_survivors` asserts any entry
/// added here, so a kill shows up.
pub const EPOCH_SURVIVORS: &[(Mutant, &str)] = &[];

/// The QSBR fences kept at their release side only (`Mutant::FENCE_HALVES`), each killed by
/// loom under the QSBR grace period on a single-function trace_pattern scenario, where no
/// scheduler yields after a progress point (docs/protocol.md §0.4); the progress fence's at
/// the bound [`KILL_BOUND_FLOOR`] gives it.
pub const FENCE_HALF_KILLS: &[(Mutant, &str)] = &[
    (Mutant::ProgressFenceReleaseOnly, "remove-long"),
    (Mutant::WakeFenceReleaseOnly, "remove-nap"),
];

/// The call_count mutants (`Mutant::COUNTS`) and the trace_pattern scenario each checker
/// (`"loom"`, `"shuttle"`) kills each on, by count conservation at rest
/// ([`check_count_conservation`], in [`run`]'s end-of-run checks): `lost-count-update` on
/// `remove-2sched` (two schedulers count each function while the counters run),
/// `paused-counter-changes` on `pause-restart` (a hit between the pause and the restart).
pub fn count_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    match checker {
        "loom" | "shuttle" => vec![
            (Mutant::LostCountUpdate, "remove-2sched"),
            (Mutant::PausedCounterChanges, "pause-restart"),
        ],
        other => panic!("unknown checker {other}"),
    }
}

/// Kills that need a higher loom preemption bound than `make test`'s 2, now that no scheduler
/// yields after a progress point (docs/protocol.md §0.4): a scheduler that passes a wait with
/// a progress point and goes on reading needs one preemption per such point. Each entry runs
/// at `max(LOOM_MAX_PREEMPTIONS, floor)`, in `make test` too; every one survives at 2 on its
/// scenario (recorded in docs/protocol.md §0.4).
pub const KILL_BOUND_FLOOR: &[(Mutant, &str, usize)] = &[
    (Mutant::ProgressWithoutBarrier, "remove-long", 3),
    (Mutant::ProgressFenceReleaseOnly, "remove-long", 3),
    (
        Mutant::Weaken(bpspec_reference::Site::QsbrProgressFence),
        "remove-long",
        3,
    ),
    // The collection without its flip reads the real call_time object while a scheduler's
    // first hit adds its row there: under NonBlocking on load-collect loom finds it at bound 3
    // (529 executions) and not at 2 (20,301 executions, docs/nonblocking-load.md §7).
    (Mutant::CollectWithoutFlip, "load-collect", 3),
    // Its `-fold` twin likewise (survives at 2 with 16,459 executions, killed at 3 after 529).
    (Mutant::CollectWithoutFlip, "load-collect-fold", 3),
];

/// The preemption bound floor of `mutant` on `scenario` ([`KILL_BOUND_FLOOR`]), if any.
pub fn kill_bound_floor(mutant: Option<Mutant>, scenario: &str) -> Option<usize> {
    KILL_BOUND_FLOOR
        .iter()
        .find(|&&(m, s, _)| Some(m) == mutant && s == scenario)
        .map(|&(_, _, b)| b)
}

/// The shuttle builds' allocator (models/Cargo.toml; docs/perf.md, "The allocator"). The loom
/// builds keep the system's: loom's per-execution cost is its own bookkeeping, and mimalloc
/// measured no gain there.
#[cfg(shuttle)]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
