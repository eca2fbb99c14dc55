//! Models of the timem readers: the scheduler code that reaches breakpoint memory from a
//! function's slot whatever its instruction word says (`calltime.rs`, `get_timem_break`, as
//! ERTS's `get_time_break`/`get_memory_break`). Shared by `tests/readers_loom.rs` and
//! `tests/readers_shuttle.rs`; docs/readers.md lists every reader and the scenario here that
//! covers it.
//!
//! One model = an engine with call_time and call_memory on some functions in one or two
//! sessions; a process that a prelude put *inside* a traced function (its pbt charges that
//! function, its stack holds the call_time return frame); scheduler threads that go on with it
//! (return, raise, schedule-out and in, calls whose breakpoint charges the previous function);
//! and a stager that removes (`false`), pauses, restarts and sets the patterns again meanwhile.
//!
//! Properties:
//! - RD1 no reader reads a freed node or counter (liveness words: loom causality, poison asserted
//!   under shuttle) and no reader reads a half while it is written (loom cells, write marks);
//! - RD2 no reader reads a node it found in a slot before the node's initialisation is visible
//!   (loom: a cell read not ordered after the cell's creation is a causality error);
//! - RD3 conservation where it applies: a session the stager does not touch ends with the same
//!   figures as the same scripts run sequentially with no stager at all;
//! - at rest afterwards (I5).
//!
//! Checked parameters (loom, one stager (two in `timem-two-stagers`), one scheduler, one or two
//! functions, one or two sessions, `LOOM_MAX_BRANCHES` 20,000; executions per baseline):
//! bound 3 (`make check`; docs/results/check-loom.tsv, the two last measured alone on the loaded
//! 2-core machine): `timem-remove` 250,261, `timem-remove-nap` 11,418, `timem-remove-2sess`
//! 301,324, `timem-remove-old-2sess` 273,956, `timem-raise` 248,459, `timem-fresh-node` 8,306,
//! `timem-pause-restart` 1,423,778 (133.6 s; bound 2: 196,943, 22.4 s), `timem-two-stagers`
//! 202,701 (28.0 s; bound 2: 22,484, 3.0 s); none capped (`make test` runs all at bound 2). Every
//! baseline holds. Shuttle: the loom scenarios plus a second scheduler (calls, raises, naps),
//! and `timem-churn-2sess` (three schedulers, seven stager operations over two sessions and two
//! functions); PCT (depth 3) and random, 2,000 (`make test`) or 50,000 (`make check`, PCT at
//! most 20,000) iterations each, seed 0x627073706563. Loom and shuttle explore executions, not states.

use crate::Placement;
use bpspec_reference::sync::{spawn, Arc};
use bpspec_reference::term::Term;
use bpspec_reference::TraceSpec;
use bpspec_reference::{
    BatchEntry, Engine, FlagSet, InfoKey, Mutant, Pattern, PatternOp, Proc, Process, Scheduler,
    ThreadProgress, WaitPlan,
};

/// A scheduler step for the current process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RStep {
    /// Body call of `f` (its breakpoint charges the previous function: `erts_trace_call_acc`).
    Call(usize),
    /// Return from the current function (the call_time return frame charges it).
    Ret,
    /// Raise out of the current function and `n - 1` callers (`next_catch` drops the return
    /// frames; the raiser stays the charged function).
    Raise(usize),
    /// Spend `n` time units and words.
    Work(i64),
    /// Schedule out (charges every pbt), pass a progress point, schedule in.
    Switch,
    /// Schedule out, sleep, wake, schedule in.
    Nap,
}

/// One stager `trace_pattern(session, f, op, flags)`.
pub type ROp = (u32, usize, PatternOp, FlagSet);

#[derive(Clone, Debug)]
pub struct RScenario {
    pub name: &'static str,
    pub functions: usize,
    /// Sessions 0..sessions exist; the processes are call-traced in all of them.
    pub sessions: u32,
    /// Applied before anything runs.
    pub setup: Vec<ROp>,
    /// Run on the main thread by scheduler 0 for scheduler 0's process, before the threads
    /// start: puts the process inside a traced function.
    pub prelude: Vec<RStep>,
    /// Applied after the prelude, before the threads start.
    pub after_prelude: Vec<ROp>,
    /// One script per stager, racing the schedulers: the first on the calling thread (as one
    /// batch under a batching wait plan), each other one on its own thread, contending with the
    /// first for the code modification permission.
    pub stagers: Vec<Vec<ROp>>,
    /// One script per scheduler (scheduler `i` runs pid `100 + 16 i`).
    pub schedulers: Vec<Vec<RStep>>,
    /// RD3: this session's final figures must equal a sequential run without the stager.
    pub conserve: Option<u32>,
}

impl RScenario {
    /// `setup` in sessions `0..sessions` on `functions` functions, `prelude` (nothing after
    /// it), then one stager running `ops` racing `schedulers`; no conservation check.
    pub fn new(
        name: &'static str,
        functions: usize,
        sessions: u32,
        setup: Vec<ROp>,
        prelude: Vec<RStep>,
        ops: Vec<ROp>,
        schedulers: Vec<Vec<RStep>>,
    ) -> Self {
        RScenario {
            name,
            functions,
            sessions,
            setup,
            prelude,
            after_prelude: vec![],
            stagers: vec![ops],
            schedulers,
            conserve: None,
        }
    }
}

pub const TIME_MEM: FlagSet = FlagSet {
    local: false,
    call_count: false,
    call_time: true,
    call_memory: true,
};
pub const TIME: FlagSet = FlagSet::CALL_TIME;

fn set(s: u32, f: usize, op: PatternOp, fl: FlagSet) -> ROp {
    (s, f, op, fl)
}

/// The loom scenarios: one stager, one scheduler, short scripts.
pub fn loom_scenarios() -> Vec<RScenario> {
    use PatternOp::*;
    use RStep::*;
    let inside = vec![Call(0), Work(1)];
    // Four schedule-outs and a return: every read of the slot may fall in any period of the
    // removal's sequence, including the one in which consolidate unlinks the node.
    let leave = vec![Switch, Work(1), Switch, Switch, Switch, Work(1), Ret];
    let base = |name, sessions, ops: Vec<ROp>| {
        let setup = (0..sessions).map(|s| set(s, 0, True, TIME_MEM)).collect();
        RScenario::new(
            name,
            1,
            sessions,
            setup,
            inside.clone(),
            ops,
            vec![leave.clone()],
        )
    };
    vec![
        // One session: call_time and call_memory removed while the process is inside f0 and
        // goes on charging it on schedule-out and return. The W4 question (docs/protocol.md).
        base("timem-remove", 1, vec![set(0, 0, False, TIME_MEM)]),
        // The same with a nap: the removal's waits pass while the scheduler sleeps, so its
        // reads on waking fall right beside consolidate.
        RScenario {
            schedulers: vec![vec![Nap, Work(1), Ret]],
            ..base("timem-remove-nap", 1, vec![set(0, 0, False, TIME_MEM)])
        },
        // One session, pause then restart while the process is inside: the node stays.
        base(
            "timem-pause-restart",
            1,
            vec![set(0, 0, Pause, TIME), set(0, 0, Restart, TIME)],
        ),
        // Two sessions: session 1's counters removed (its node, the head, is unlinked while
        // session 0 keeps f0 patched). Session 0's figures are conserved.
        RScenario {
            conserve: Some(0),
            ..base("timem-remove-2sess", 2, vec![set(1, 0, False, TIME_MEM)])
        },
        // Two sessions: the older session's node is unlinked; readers of session 1 stand on the
        // head and walk `next` over it.
        RScenario {
            conserve: Some(1),
            ..base(
                "timem-remove-old-2sess",
                2,
                vec![set(0, 0, False, TIME_MEM)],
            )
        },
        // A raise out of f1 into f0 while f1's counters are removed: the raiser stays the
        // charged function (pbt -> f1), and the catcher's schedule-out and return charge f1
        // and f0 through their slots.
        RScenario {
            functions: 2,
            setup: vec![set(0, 0, True, TIME), set(0, 1, True, TIME)],
            prelude: vec![Call(0), Call(1), Work(1)],
            schedulers: vec![vec![Raise(1), Switch, Switch, Switch, Switch, Ret]],
            ..base("timem-raise", 1, vec![set(0, 1, False, TIME)])
        },
        // The fresh-node store: the process is inside f0 when f0's breakpoint is removed (the
        // whole sequence, before the threads start), so its pbt charges a function whose slot
        // is empty and whose code is unpatched. The stager then sets call_time on f0 again: a
        // fresh node goes into the slot, which the scheduler reads on schedule-out and return.
        RScenario {
            after_prelude: vec![set(0, 0, False, TIME_MEM)],
            schedulers: vec![vec![Switch, Work(1), Ret]],
            ..base("timem-fresh-node", 1, vec![set(0, 0, True, TIME)])
        },
        // Two stagers contend for the permission: one removes f0's counters while the other
        // sets call_time on f0 again (before the removal: a restart; after it: a fresh node in
        // the emptied slot), while the process inside f0 is scheduled out and returns.
        RScenario {
            stagers: vec![
                vec![set(0, 0, False, TIME_MEM)],
                vec![set(0, 0, True, TIME)],
            ],
            schedulers: vec![vec![Switch, Work(1), Ret]],
            ..base("timem-two-stagers", 1, vec![])
        },
    ]
}

/// The shuttle scenarios: the loom ones with a second scheduler whose process calls, returns
/// and switches in a loop, and a churn of both sessions over two functions.
pub fn shuttle_scenarios() -> Vec<RScenario> {
    use PatternOp::*;
    use RStep::*;
    let script = |n: usize, fs: usize| -> Vec<RStep> {
        let mut v = Vec::new();
        for r in 0..n {
            v.push(Call(r % fs));
            v.push(Work(1));
            if r % 2 == 0 {
                v.push(Call((r + 1) % fs));
                v.push(Work(1));
                v.push(if r % 4 == 0 { Raise(1) } else { Ret });
            }
            v.push(if r % 3 == 2 { Nap } else { Switch });
            v.push(Ret);
        }
        v
    };
    let mut out = loom_scenarios();
    for s in out.iter_mut() {
        s.schedulers.push(script(4, s.functions));
        // RD3 only with the loom script: a process that *calls* f0 while the other session's
        // node is removed gets session 0's own return frame after the removal (one frame per
        // hit, pushed by the first session that acts), so its session 0 figures differ from a
        // run without the stager (seen under shuttle; docs/readers.md).
        s.conserve = None;
    }
    let setup = vec![
        set(0, 0, True, TIME_MEM),
        set(0, 1, True, TIME_MEM),
        set(1, 0, True, TIME),
    ];
    let ops = vec![
        set(1, 0, False, TIME),
        set(0, 1, Pause, TIME_MEM),
        set(1, 1, True, TIME_MEM),
        set(0, 0, False, TIME_MEM),
        set(0, 1, Restart, TIME_MEM),
        set(0, 0, True, TIME),
        set(1, 1, False, TIME_MEM),
    ];
    let schedulers = vec![
        vec![Switch, Work(1), Ret, Switch, Work(1), Ret],
        script(6, 2),
        script(5, 2),
    ];
    let prelude = vec![Call(0), Call(1), Work(1)];
    out.push(RScenario::new(
        "timem-churn-2sess",
        2,
        2,
        setup,
        prelude,
        ops,
        schedulers,
    ));
    out
}

fn apply<P: ThreadProgress>(e: &Engine<P>, o: &ROp) {
    let (s, f, op, fl) = *o;
    crate::trace_on(e, Some(f), op, &TraceSpec::from(fl).session(s));
}

/// The stager's ops: one call each, or one batch under a batching wait plan (models/src/waits.rs).
fn apply_ops<P: ThreadProgress>(e: &Engine<P>, ops: &[ROp]) {
    if !e.wait_plan().batches() || ops.is_empty() {
        ops.iter().for_each(|o| apply(e, o));
        return;
    }
    let session = ops[0].0;
    assert!(
        ops.iter().all(|o| o.0 == session),
        "a batch is one session's"
    );
    let versions = crate::placement_of(e) == Placement::Versions;
    let mfa = |f: usize| {
        if versions {
            // Module 0's function, in its current version ([`Placement::Versions`]).
            &e.code_mgmt().mods[0].mfas[f]
        } else {
            &e.code.funcs[f].mfa
        }
    };
    let batch: Vec<BatchEntry> = ops
        .iter()
        .map(|&(_, f, op, fl)| BatchEntry::flags(Pattern::exact(mfa(f)), op, fl))
        .collect();
    let n = if versions {
        e.trace_pattern_batch_in(0, session, &batch)
    } else {
        e.trace_pattern_batch(session, &batch)
    }
    .expect("valid batch");
    assert!(n.iter().all(|&m| m == 1), "each entry matches one function");
}

fn build<P: ThreadProgress>(
    s: &RScenario,
    mutant: Option<Mutant>,
    plan: WaitPlan,
    placement: Placement,
) -> Arc<Engine<P>> {
    let e = crate::placed_engine::<P>(
        s.functions,
        s.schedulers.len(),
        mutant,
        s.sessions as usize,
        placement,
    )
    .with_wait_plan(plan);
    for sess in 1..s.sessions {
        assert_eq!(e.create_session(&format!("s{sess}")), Ok(sess));
    }
    for o in &s.setup {
        apply(&e, o);
    }
    Arc::new(e)
}

/// One step of a script. A call on a module's version records what it counted in `hits` (its
/// hit record is the version call's, not the scheduler's `hits`).
fn step<P: ThreadProgress>(s: &mut Scheduler<P>, p: &mut Proc, st: RStep, hits: &mut Vec<Counted>) {
    match st {
        RStep::Call(f) => match crate::placement_of(s.engine()) {
            Placement::Static => {
                s.call_proc(f, p);
            }
            Placement::Versions => {
                let seen = s.call_version_proc(p, 0, f, false, false);
                assert_eq!(seen.version, 1, "f{f}: a call outside version 1");
                hits.push((f, seen.counted_in));
            }
        },
        RStep::Ret => s.ret(p),
        RStep::Raise(n) => s.raise(p, "error", Term::Atom("boom"), n),
        RStep::Work(n) => {
            s.advance(n);
            p.alloc(n);
        }
        RStep::Switch => {
            s.schedule_out(p);
            s.progress();
            crate::switch_after_progress();
            s.schedule_in(p);
        }
        RStep::Nap => {
            s.schedule_out(p);
            s.sleep();
            s.wake();
            s.schedule_in(p);
        }
    }
}

fn new_proc(id: usize, sessions: u32) -> Proc {
    Proc::new(Process {
        pid: 100 + 16 * id as u64,
        call_traced: (1u64 << sessions) - 1,
    })
}

/// The prelude, on the calling thread as scheduler 0: returns scheduler 0's process, scheduled
/// out, with the scheduler asleep (so the stager's waits do not wait for it).
fn prelude<P: ThreadProgress>(e: &Arc<Engine<P>>, s: &RScenario) -> (Proc, Vec<Counted>) {
    let mut p = new_proc(0, s.sessions);
    let mut sch = Scheduler::start(e.clone(), 0);
    let mut hits = Vec::new();
    sch.schedule_in(&mut p);
    for &st in &s.prelude {
        step(&mut sch, &mut p, st, &mut hits);
    }
    sch.schedule_out(&mut p);
    sch.sleep();
    hits.extend(counted(&sch));
    (p, hits)
}

/// What each hit of a scheduler counted on: (function, `Hit::counted`), for count conservation
/// (`crate::check_count_conservation`); the hit records are thread-local, no atomic access.
type Counted = (usize, u64);

fn counted<P: ThreadProgress>(s: &Scheduler<P>) -> Vec<Counted> {
    s.hits.iter().map(|h| (h.func, h.counted)).collect()
}

/// Scheduler `id`'s script, then unwind every frame (returns charge the rest), schedule out,
/// sleep.
fn run_script<P: ThreadProgress>(
    e: Arc<Engine<P>>,
    id: usize,
    mut p: Proc,
    script: &[RStep],
    now: i64,
) -> Vec<Counted> {
    let mut s = Scheduler::start(e, id);
    let mut hits = Vec::new();
    s.advance(now);
    s.schedule_in(&mut p);
    for &st in script {
        step(&mut s, &mut p, st, &mut hits);
    }
    let mut guard = 0;
    while !p.stack.is_empty() {
        guard += 1;
        assert!(guard < 100, "unwinding did not terminate");
        s.ret(&mut p);
    }
    s.schedule_out(&mut p);
    s.sleep();
    hits.extend(counted(&s));
    hits
}

/// Session `session`'s final figures (call_time and call_memory of every function).
/// As terms: compared as they are, printed (`{:?}`) only in a counterexample.
fn figures<P: ThreadProgress>(e: &Engine<P>, s: &RScenario, session: u32) -> Vec<Term> {
    (0..s.functions)
        .flat_map(|f| {
            [InfoKey::CallTime, InfoKey::CallMemory].map(|k| match crate::placement_of(e) {
                Placement::Static => e.trace_info_term(session, &e.code.funcs[f].mfa, k),
                Placement::Versions => e.trace_info_module_in(0, session, f, k),
            })
        })
        .collect()
}

/// Run the scenario's threads (`stager` = run the stager's ops on this thread meanwhile).
fn execute<P: ThreadProgress>(
    s: &RScenario,
    mutant: Option<Mutant>,
    stager: bool,
    threads: bool,
    plan: WaitPlan,
    placement: Placement,
) -> (Arc<Engine<P>>, Vec<Counted>) {
    let e = build::<P>(s, mutant, plan, placement);
    let (p0, mut hits) = prelude(&e, s);
    for o in &s.after_prelude {
        apply(&*e, o);
    }
    // The prelude's clock: scheduler 0 continues from it, so durations stay non-negative.
    let now: i64 = s
        .prelude
        .iter()
        .map(|st| match st {
            RStep::Work(n) => *n,
            _ => 0,
        })
        .sum();
    let mut procs = vec![p0];
    procs.extend((1..s.schedulers.len()).map(|id| new_proc(id, s.sessions)));
    let jobs: Vec<_> = s
        .schedulers
        .iter()
        .cloned()
        .zip(procs)
        .enumerate()
        .collect();
    if threads {
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|(id, (script, p))| {
                let e = e.clone();
                let at = if id == 0 { now } else { 0 };
                spawn(move || run_script(e, id, p, &script, at))
            })
            .collect();
        // The second and later stagers, each on its own thread (none without the stager).
        let rivals: &[Vec<ROp>] = if stager { &s.stagers[1..] } else { &[] };
        let rivals: Vec<_> = rivals
            .iter()
            .map(|ops| {
                let (e, ops) = (e.clone(), ops.clone());
                spawn(move || {
                    for o in &ops {
                        apply(&*e, o);
                    }
                })
            })
            .collect();
        if stager {
            apply_ops(&*e, &s.stagers[0]);
        }
        for h in rivals {
            h.join().expect("second stager panicked");
        }
        for h in handles {
            hits.extend(h.join().expect("scheduler panicked"));
        }
    } else {
        for (id, (script, p)) in jobs {
            let at = if id == 0 { now } else { 0 };
            hits.extend(run_script(e.clone(), id, p, &script, at));
        }
    }
    (e, hits)
}

/// Run one execution of `s`. Panics on any violation.
pub fn run<P: ThreadProgress>(s: &RScenario, mutant: Option<Mutant>) {
    run_planned::<P>(s, mutant, WaitPlan::Erts);
}

/// [`run`] under a wait plan: the stager's ops run as one batch when the plan batches.
pub fn run_planned<P: ThreadProgress>(s: &RScenario, mutant: Option<Mutant>, plan: WaitPlan) {
    run_placed::<P>(s, mutant, plan, Placement::Static);
}

/// [`run`] with the functions at `placement` (the static area, or module `m`'s current version,
/// never loaded).
pub fn run_on<P: ThreadProgress>(s: &RScenario, mutant: Option<Mutant>, placement: Placement) {
    run_placed::<P>(s, mutant, WaitPlan::Erts, placement);
}

/// [`run_planned`] with the functions at `placement`: on a module's version a batch is
/// `Engine::trace_pattern_batch_in` (docs/nonblocking-load.md §7, "The static area").
pub fn run_placed<P: ThreadProgress>(
    s: &RScenario,
    mutant: Option<Mutant>,
    plan: WaitPlan,
    placement: Placement,
) {
    let (e, hits) = execute::<P>(s, mutant, true, true, plan, placement);
    if let Some(session) = s.conserve {
        let got = figures(&*e, s, session);
        let key = format!(
            "{}@{}{} session {session}",
            s.name,
            plan.name(),
            placement.suffix()
        );
        let want = crate::harness::reference_run(("readers", &key, P::name()), || {
            figures(
                &*execute::<P>(s, None, false, false, plan, placement).0,
                s,
                session,
            )
        });
        assert_eq!(
            got, want,
            "RD3 violated: session {session}'s figures differ from the run without the stager"
        );
    }
    if let Err(err) = e.check_at_rest() {
        panic!("I5 at rest violated: {err}");
    }
    crate::check_count_conservation(&*e, hits);
}

/// The grace periods the first stager's ops make under `plan` when nothing races them: the
/// setup, the prelude (scheduler 0 asleep afterwards, so no wait waits for it), then the ops
/// (one batch under a batching plan), counted by `ThreadProgress::completed_waits`. Tells which
/// wait-plan scenarios the elide-idle plan elides in (models/tests/waits_matrix.rs). On real
/// threads only: loom and shuttle need a model around it.
#[cfg(not(any(loom, shuttle)))]
pub fn stager_waits<P: ThreadProgress>(s: &RScenario, plan: WaitPlan) -> u64 {
    let e = build::<P>(s, None, plan, Placement::Static);
    let _ = prelude(&e, s);
    for o in &s.after_prelude {
        apply(&*e, o);
    }
    let before = e.progress.completed_waits();
    apply_ops(&*e, &s.stagers[0]);
    e.progress.completed_waits() - before
}

/// Which checker kills which mutant on which reader scenario.
pub fn expected_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    match checker {
        "loom" => vec![
            (SkipWaitBeforeFree, "timem-remove"),
            (SkipWaitBeforeFree, "timem-remove-2sess"),
            (FreshNodeRelaxedStore, "timem-fresh-node"),
            (FreshNodeRelaxedStore, "timem-two-stagers"),
        ],
        "shuttle" => vec![(SkipWaitBeforeFree, "timem-remove")],
        other => panic!("unknown checker {other}"),
    }
}
