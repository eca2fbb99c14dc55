//! Models of call_time / call_memory and the OTP 29 `trace_info` collection, shared by
//! `tests/collection_loom.rs` and `tests/collection_shuttle.rs`.
//!
//! One model = an engine with call_time and call_memory set on some functions, scheduler threads
//! whose processes call, return, spend time and words, get scheduled out and in, and a stager
//! thread running `trace_info` (non-blocking or stop-the-world) and `trace_pattern` resets.
//!
//! Properties (docs/collection.md numbers them):
//! - CT1 no pid table is read while its writer writes it (loom cells; write marks elsewhere);
//! - CT2 no temporary object or table is used after it is freed, and no rehash frees a table that
//!   is being read (liveness words: loom causality, poison asserted in shuttle);
//! - CT3 each count a query reports for a pid lies between that pid's completed calls before
//!   the query and its started calls after it (OTP `trace_info_noblock`);
//! - CT4 conservation: at quiescence the final figures equal those of the same scripts run
//!   sequentially with no query at all (every call, time unit and word exactly once);
//! - CT5 a paused count is frozen; CT6 a restart starts from zero (a count after a restart is at
//!   most the calls started since the restart began);
//! - CT7 at rest afterwards (halves equal, no leaked counter, I5).
//!
//! Checked parameters (docs/collection.md §6 has every row): loom, one stager and one
//! scheduler (`info-dirty`: a dirty one), one function with call_time and call_memory, scripts
//! of 6-10 steps, preemption bound 2 (`make test`) and 3 (`make check`), `LOOM_MAX_BRANCHES`
//! 20,000. Bound 2: 231-4,937 executions per baseline in under 4 s each, except
//! `paused-inflight` (122,786 executions, 35 s). Bound 3: 2,134-39,519 executions, under 13 s
//! each, `paused-inflight` 1,679,701 executions in 414 s. Shuttle: the loom scenarios plus a second
//! scheduler with three pids (tables rehash), and `busy-3sched`, `pause-restart`,
//! `reset-churn` (two functions, two or three schedulers, one dirty, five to six stager
//! operations); 2,000 (`make test`) or 50,000 (`make check`, PCT at most 20,000) iterations
//! each of PCT (depth 3) and random, seed 0x627073706563; every baseline holds. Loom and shuttle explore executions,
//! not states: neither reports a state count or depth.

use crate::Placement;
use bpspec_reference::sync::{spawn, yield_now, Arc, AtomicU64, Ordering::*};
use bpspec_reference::term::Collection;
use bpspec_reference::TraceSpec;
use bpspec_reference::{
    Engine, FlagSet, InfoKey, Mutant, PatternOp, Proc, Process, Scheduler, Term, ThreadProgress,
};
use std::collections::BTreeMap;

/// What a scheduler does, step by step. The scheduler runs processes `pids[0..]` round-robin;
/// the current one is scheduled in at the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CStep {
    /// Body call of function `f` by the current process.
    Call(usize),
    /// Return from the current function.
    Ret,
    /// Spend `n` time units and `n` words in the current function.
    Work(i64),
    /// Schedule the current process out, pass a progress point, schedule the next one in.
    Switch,
    /// Schedule out, sleep, wake, schedule in (same process).
    Nap,
}

/// What the stager thread does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CStager {
    /// `trace_info(f, key)`, non-blocking; checks CT3 on every reported pid.
    Info(usize, InfoKey),
    /// The same through the stop-the-world collection.
    InfoStw(usize, InfoKey),
    /// `trace_pattern(f, op, flags)`.
    Pattern(usize, PatternOp, FlagSet),
    /// Two queries of `f`'s call_time with nothing but time in between: counts must be equal
    /// (CT5; only meaningful while `f` is paused).
    FrozenCheck(usize),
    /// Remember the calls started so far, restart call_time on `f`, and check CT6.
    RestartCheck(usize),
}

#[derive(Clone, Debug)]
pub struct CScenario {
    pub name: &'static str,
    pub functions: usize,
    /// `trace_pattern`s applied before anything runs.
    pub setup: Vec<(usize, PatternOp, FlagSet)>,
    pub stager: Vec<CStager>,
    /// A second stager thread's `trace_pattern`s, racing the first for the permission (a
    /// reset queued behind or ahead of a `trace_info`).
    pub resetter: Vec<(usize, PatternOp, FlagSet)>,
    /// Per scheduler: its processes (pids) and script.
    pub schedulers: Vec<(Vec<u64>, Vec<CStep>)>,
    /// Which schedulers are dirty (charge the shared slot under the lock).
    pub dirty: Vec<usize>,
    /// Check CT4 against a sequential replay (only when the stager changes no pattern).
    pub conserve: bool,
    /// Collect paused counters through the flip (the fix of finding F1) instead of directly.
    pub paused_via_flip: bool,
    /// Wait between reading the real tables and flipping back (the fix of finding F2).
    pub flip_back_wait: bool,
}

impl CScenario {
    /// `setup` on `functions` functions, then `stager` racing `schedulers` (none dirty, no
    /// resetter, no CT4 check), with the fixes of findings F1 and F2 on.
    pub fn new(
        name: &'static str,
        functions: usize,
        setup: Vec<(usize, PatternOp, FlagSet)>,
        stager: Vec<CStager>,
        schedulers: Vec<(Vec<u64>, Vec<CStep>)>,
    ) -> Self {
        CScenario {
            name,
            functions,
            setup,
            stager,
            resetter: vec![],
            schedulers,
            dirty: vec![],
            conserve: false,
            paused_via_flip: true,
            flip_back_wait: true,
        }
    }
}

pub const TIME_MEM: FlagSet = FlagSet {
    local: false,
    call_count: false,
    call_time: true,
    call_memory: true,
};
const TIME: FlagSet = FlagSet::CALL_TIME;

/// The loom scenarios (one stager, one or two schedulers, one or two functions, short scripts).
pub fn loom_scenarios() -> Vec<CScenario> {
    use CStep::*;
    let base = |name, schedulers, stager, conserve| CScenario {
        conserve,
        ..CScenario::new(
            name,
            1,
            vec![(0, PatternOp::True, TIME_MEM)],
            stager,
            schedulers,
        )
    };
    // One process (pid 100) running `script`.
    let pid100 = |script: &[CStep]| vec![(vec![100], script.to_vec())];
    // One process calling twice, with a switch between the calls.
    let two_calls = || pid100(&[Call(0), Work(1), Ret, Switch, Call(0), Ret]);
    // One query (`q`) racing pid 100's `script`, with CT4 checked.
    let query = |name, q, script: &[CStep]| base(name, pid100(script), vec![q], true);
    let (info, all) = (
        CStager::Info(0, InfoKey::CallTime),
        CStager::Info(0, InfoKey::All),
    );
    let stw = CStager::InfoStw(0, InfoKey::CallTime);
    let calls = [Call(0), Work(1), Ret, Switch, Call(0), Work(2), Ret];
    let inflight = [Call(0), Work(1), Switch, Work(2), Ret, Switch, Call(0)];
    let rehash = vec![(
        vec![100, 116, 132],
        vec![Call(0), Ret, Switch, Call(0), Ret, Switch, Call(0), Ret],
    )];
    let nap = [Call(0), Work(1), Ret, Nap, Call(0), Work(1), Ret];
    let paused = [&[Call(0), Work(1)][..], &[Switch; 6], &[Work(1), Ret]].concat();
    let then_info = |first| vec![first, info];
    vec![
        // One scheduler calling while one query runs: CT1-CT4.
        query("info", info, &calls),
        // A dirty scheduler charging the shared slot while the merge writes it.
        CScenario {
            dirty: vec![0],
            ..base("info-dirty", two_calls(), vec![info], true)
        },
        // A process in the middle of a call across the query, scheduled out and in.
        query("info-inflight", all, &inflight),
        // Rehash: three pids on one scheduler (the initial table holds two).
        base("info-rehash", rehash, vec![info], true),
        // true/restart racing with calls (erlang/otp#8835), then a query.
        base(
            "reset",
            two_calls(),
            then_info(CStager::Pattern(0, PatternOp::Restart, TIME)),
            false,
        ),
        // A second stager resets the counter while the first one queries (they take turns on the
        // permission, in either order).
        CScenario {
            resetter: vec![(0, PatternOp::Restart, TIME_MEM)],
            ..base("info-vs-reset", two_calls(), vec![all], false)
        },
        // Stop-the-world query: the baseline.
        base("info-stw", two_calls(), vec![stw], true),
        // Stop-the-world query while the scheduler naps: it may sleep through the whole block
        // and wake after it is lifted, then charge its tables (the block check's Acquire).
        query("info-stw-nap", stw, &nap),
        // Paused counter with a frame in flight (finding F1 without the fix).
        base(
            "paused-inflight",
            pid100(&paused),
            then_info(CStager::Pattern(0, PatternOp::Pause, TIME)),
            false,
        ),
    ]
}

/// The shuttle scenarios: the loom ones with an extra scheduler, plus larger loops.
pub fn shuttle_scenarios() -> Vec<CScenario> {
    use CStep::*;
    let mut out = loom_scenarios();
    // `n` rounds: a call of one function with work, every third round a nested call of the
    // next one, a return, then a switch (every fourth round a nap).
    let script = |n: usize, fs: usize| -> Vec<CStep> {
        (0..n)
            .flat_map(|r| {
                let nested = if r % 3 == 0 {
                    vec![Call((r + 1) % fs), Work(2), Ret]
                } else {
                    vec![]
                };
                let end = if r % 4 == 3 { Nap } else { Switch };
                [Call(r % fs), Work(1)]
                    .into_iter()
                    .chain(nested)
                    .chain([Ret, end])
            })
            .collect()
    };
    for s in out.iter_mut() {
        if s.functions == 1 {
            s.schedulers.push((vec![200, 216, 232], script(4, 1)));
            if !s.dirty.is_empty() {
                // Two dirty schedulers and two queries: the merge then competes with a longer
                // writer of the shared slot, twice.
                s.dirty.push(1);
                s.stager.push(CStager::Info(0, InfoKey::CallMemory));
            }
        }
    }
    let two = vec![
        (0, PatternOp::True, TIME_MEM),
        (1, PatternOp::True, TIME_MEM),
    ];
    let busy = vec![
        CStager::Info(0, InfoKey::All),
        CStager::Info(1, InfoKey::CallMemory),
        CStager::InfoStw(0, InfoKey::CallTime),
        CStager::Info(0, InfoKey::CallTime),
    ];
    let busy_schedulers = vec![
        (vec![100, 116, 132], script(6, 2)),
        (vec![300, 316], script(6, 2)),
        (vec![400], script(5, 2)),
    ];
    out.push(CScenario {
        dirty: vec![2],
        conserve: true,
        ..CScenario::new("busy-3sched", 2, two.clone(), busy, busy_schedulers)
    });
    let pause_restart = vec![
        CStager::Pattern(0, PatternOp::Pause, TIME),
        CStager::FrozenCheck(0),
        CStager::RestartCheck(0),
        CStager::Info(0, InfoKey::CallTime),
    ];
    let pr_schedulers = vec![(vec![100, 116], script(6, 2)), (vec![300], script(6, 2))];
    out.push(CScenario::new(
        "pause-restart",
        2,
        two.clone(),
        pause_restart,
        pr_schedulers,
    ));
    let churn = vec![
        CStager::Pattern(0, PatternOp::True, TIME),
        CStager::Info(0, InfoKey::All),
        CStager::Pattern(1, PatternOp::Restart, TIME_MEM),
        CStager::Pattern(0, PatternOp::False, TIME),
        CStager::Info(1, InfoKey::All),
        CStager::Pattern(0, PatternOp::True, TIME),
    ];
    let churn_schedulers = vec![
        (vec![100, 116, 132], script(6, 2)),
        (vec![300], script(6, 2)),
    ];
    out.push(CScenario {
        resetter: vec![
            (0, PatternOp::Restart, TIME_MEM),
            (1, PatternOp::True, TIME_MEM),
        ],
        dirty: vec![1],
        ..CScenario::new("reset-churn", 2, two, churn, churn_schedulers)
    });
    out
}

/// Per pid `(count, accumulator)` of a `{call_time | call_memory, List}` term (time in units).
pub fn per_pid(t: &Term) -> BTreeMap<u64, (i64, i64)> {
    let mut out = BTreeMap::new();
    let Term::Tuple(kv) = t else {
        panic!("not a {{Key, Value}} pair: {t}")
    };
    let Term::List(l) = &kv[1] else {
        return out;
    };
    for x in l {
        match x {
            Term::Tuple(f) => match f.as_slice() {
                [Term::Pid(p), Term::Int(c), Term::Int(s), Term::Int(us)] => {
                    out.insert(*p, (*c, s * 1_000_000 + us));
                }
                [Term::Pid(p), Term::Int(c), Term::Int(w)] => {
                    out.insert(*p, (*c, *w));
                }
                _ => panic!("bad entry in {t}"),
            },
            _ => panic!("bad entry in {t}"),
        }
    }
    out
}

/// The call_time and call_memory parts of any trace_info answer.
fn parts(t: &Term) -> Vec<Term> {
    let Term::Tuple(kv) = t else { panic!("{t}") };
    match (&kv[0], &kv[1]) {
        (Term::Atom("all"), Term::List(items)) => items
            .iter()
            .filter(|i| {
                matches!(i, Term::Tuple(p) if matches!(p[0], Term::Atom("call_time") | Term::Atom("call_memory")))
            })
            .cloned()
            .collect(),
        (Term::Atom("call_time" | "call_memory"), _) => vec![t.clone()],
        _ => vec![],
    }
}

/// Per-pid call checkpoints (OTP's `trace_info_noblock` workers).
struct Checkpoints {
    pids: Vec<u64>,
    started: Vec<AtomicU64>,
    done: Vec<AtomicU64>,
}

impl Checkpoints {
    fn ix(&self, pid: u64) -> usize {
        self.pids
            .iter()
            .position(|&p| p == pid)
            .unwrap_or_else(|| panic!("unknown pid {pid} in a result"))
    }
}

fn apply<P: ThreadProgress>(e: &Engine<P>, f: usize, op: PatternOp, fl: FlagSet) {
    crate::trace_on(e, Some(f), op, &TraceSpec::from(fl));
}

fn build<P: ThreadProgress>(
    s: &CScenario,
    mutant: Option<Mutant>,
    placement: Placement,
) -> Arc<Engine<P>> {
    let mut e = crate::placed_engine::<P>(s.functions, s.schedulers.len(), mutant, 1, placement)
        .with_stop_the_world();
    if s.paused_via_flip {
        e = e.with_paused_via_flip();
    }
    if s.flip_back_wait {
        e = e.with_wait_before_flip_back();
    }
    for &(f, op, fl) in &s.setup {
        apply(&e, f, op, fl);
    }
    Arc::new(e)
}

/// Run one scheduler's script; `cp` gets the checkpoints. Ends with every process back at the
/// bottom of its stack and scheduled out, so all time is charged, then sleeps.
fn run_script<P: ThreadProgress>(
    s: &mut Scheduler<P>,
    pids: &[u64],
    script: &[CStep],
    cp: Option<&Checkpoints>,
) {
    let mut procs: Vec<Proc> = pids
        .iter()
        .map(|&p| Proc::new(Process::call_traced_in(p, 0)))
        .collect();
    let mut cur = 0;
    s.schedule_in(&mut procs[cur]);
    for step in script {
        match *step {
            CStep::Call(f) => {
                let p = &mut procs[cur];
                if let Some(cp) = cp {
                    // Release: pairs with the stager's Acquire read after its query (CT3).
                    cp.started[cp.ix(p.p.pid)].fetch_add(1, Release);
                }
                match crate::placement_of(s.engine()) {
                    Placement::Static => {
                        s.call_proc(f, p);
                    }
                    Placement::Versions => {
                        let seen = s.call_version_proc(p, 0, f, false, false);
                        assert_eq!(seen.version, 1, "f{f}: a call outside version 1");
                    }
                }
                if let Some(cp) = cp {
                    // Release: pairs with the stager's Acquire read before its query (CT3).
                    cp.done[cp.ix(p.p.pid)].fetch_add(1, Release);
                }
            }
            CStep::Ret => s.ret(&mut procs[cur]),
            CStep::Work(n) => {
                s.advance(n);
                procs[cur].alloc(n);
            }
            CStep::Switch => {
                s.schedule_out(&mut procs[cur]);
                s.progress();
                // Still a yield under loom, unlike the other models' progress points
                // (`crate::switch_after_progress`): it prunes this scheduler's stale re-reads
                // after the point (docs/protocol.md §0.4), but without it loom loses finding F2
                // on `info-dirty` at preemption bounds 2, 3 and 4 (1,575, 7,522 and 32,404
                // executions), F1 on `paused-inflight` and `collect-merge-without-lock` on
                // `info-dirty` at bound 2.
                yield_now();
                cur = (cur + 1) % procs.len();
                s.schedule_in(&mut procs[cur]);
            }
            CStep::Nap => {
                s.schedule_out(&mut procs[cur]);
                s.sleep();
                s.wake();
                s.schedule_in(&mut procs[cur]);
            }
        }
    }
    // Finish: unwind every process (returns charge the rest), schedule it out.
    let n = procs.len();
    for i in 0..n {
        let p = &mut procs[(cur + i) % n];
        if i > 0 {
            s.schedule_in(p);
        }
        let mut guard = 0;
        while !p.stack.is_empty() {
            guard += 1;
            assert!(guard < 1000, "unwinding did not terminate");
            s.ret(p);
        }
        s.schedule_out(p);
    }
    s.sleep();
}

/// Final figures of every function and kind (non-blocking queries at quiescence), as terms:
/// compared as they are, and printed (`{:?}`) only in a counterexample.
fn final_figures<P: ThreadProgress>(e: &Engine<P>, n: usize) -> Vec<Term> {
    (0..n)
        .flat_map(|f| {
            [InfoKey::CallTime, InfoKey::CallMemory]
                .map(|k| info_with(e, f, k, Collection::NonBlocking))
        })
        .collect()
}

/// `trace_info(f, key)` in the legacy session with collection `how`, wherever `e`'s functions
/// are.
fn info_with<P: ThreadProgress>(e: &Engine<P>, f: usize, key: InfoKey, how: Collection) -> Term {
    match crate::placement_of(e) {
        Placement::Static => e.trace_info_with(0, &e.code.funcs[f].mfa, key, how),
        Placement::Versions => e.trace_info_module_with(0, 0, f, key, how),
    }
}

/// The same scripts run one scheduler after the other, with no query at all: the CT4 oracle.
fn sequential<P: ThreadProgress>(s: &CScenario, placement: Placement) -> Vec<Term> {
    let e = build::<P>(s, None, placement);
    for (id, (pids, script)) in s.schedulers.iter().enumerate() {
        let mut sch = if s.dirty.contains(&id) {
            Scheduler::start_dirty(e.clone(), id)
        } else {
            Scheduler::start(e.clone(), id)
        };
        // No hit records (nothing reads them); a version's call needs its own, which it pops.
        sch.record = crate::placement_of(sch.engine()) == Placement::Versions;
        run_script(&mut sch, pids, script, None);
    }
    final_figures(&*e, s.functions)
}

/// Run one execution of `s`. Panics on any violation.
pub fn run<P: ThreadProgress>(s: &CScenario, mutant: Option<Mutant>) {
    run_on::<P>(s, mutant, Placement::Static)
}

/// [`run`] with the functions at `placement` (the static area, or module `m`'s current
/// version, never loaded: its calls, patterns and collection through the module's entry
/// points).
pub fn run_on<P: ThreadProgress>(s: &CScenario, mutant: Option<Mutant>, placement: Placement) {
    let e = build::<P>(s, mutant, placement);
    let all_pids: Vec<u64> = s.schedulers.iter().flat_map(|(p, _)| p.clone()).collect();
    let cp = Arc::new(Checkpoints {
        started: all_pids.iter().map(|_| AtomicU64::new(0)).collect(),
        done: all_pids.iter().map(|_| AtomicU64::new(0)).collect(),
        pids: all_pids,
    });
    let handles: Vec<_> = s
        .schedulers
        .iter()
        .enumerate()
        .map(|(id, (pids, script))| {
            let (e, cp, pids, script) = (e.clone(), cp.clone(), pids.clone(), script.clone());
            let dirty = s.dirty.contains(&id);
            spawn(move || {
                let mut sch = if dirty {
                    Scheduler::start_dirty(e, id)
                } else {
                    Scheduler::start(e, id)
                };
                // As in `sequential`.
                sch.record = crate::placement_of(sch.engine()) == Placement::Versions;
                run_script(&mut sch, &pids, &script, Some(&cp));
            })
        })
        .collect();
    let snapshot = |v: &[AtomicU64]| -> Vec<i64> {
        // Acquire: pairs with the schedulers' Release increments.
        v.iter().map(|a| a.load(Acquire) as i64).collect()
    };
    let query = |f: usize, key: InfoKey, how: Collection| {
        let before = snapshot(&cp.done);
        let t = info_with(&e, f, key, how);
        let after = snapshot(&cp.started);
        for part in parts(&t) {
            let got = per_pid(&part);
            for (i, &pid) in cp.pids.iter().enumerate() {
                let count = got.get(&pid).map_or(0, |x| x.0);
                // CT3. The lower bound holds when nothing resets and the scripts call only `f`.
                let lower = if s.conserve && s.functions == 1 {
                    before[i]
                } else {
                    0
                };
                assert!(
                    lower <= count && count <= after[i],
                    "CT3 violated: pid {pid} reported {count} calls of f{f}, checkpoints {lower} .. {} ({t})",
                    after[i]
                );
            }
        }
        t
    };
    let resetter = (!s.resetter.is_empty()).then(|| {
        let (e, ops) = (e.clone(), s.resetter.clone());
        spawn(move || {
            for (f, op, fl) in ops {
                apply(&*e, f, op, fl);
            }
        })
    });
    for op in &s.stager {
        match *op {
            CStager::Info(f, k) => {
                query(f, k, Collection::NonBlocking);
            }
            CStager::InfoStw(f, k) => {
                query(f, k, Collection::StopTheWorld);
            }
            CStager::Pattern(f, op, fl) => apply(&*e, f, op, fl),
            CStager::FrozenCheck(f) => {
                // A pid may appear with count 0 (time charged by a frame in flight): compare the
                // nonzero counts.
                let counts = |t: &Term| -> Vec<(u64, i64)> {
                    per_pid(t)
                        .into_iter()
                        .map(|(p, (c, _))| (p, c))
                        .filter(|&(_, c)| c != 0)
                        .collect()
                };
                let a = counts(&query(f, InfoKey::CallTime, Collection::NonBlocking));
                yield_now();
                let b = counts(&query(f, InfoKey::CallTime, Collection::NonBlocking));
                assert_eq!(a, b, "CT5 violated: paused count changed");
            }
            CStager::RestartCheck(f) => {
                let before = snapshot(&cp.started);
                apply(&*e, f, PatternOp::Restart, TIME);
                let t = query(f, InfoKey::CallTime, Collection::NonBlocking);
                let after = snapshot(&cp.started);
                for (pid, (count, _)) in per_pid(&t) {
                    let i = cp.ix(pid);
                    assert!(
                        count <= after[i] - before[i],
                        "CT6 violated: pid {pid} has {count} calls after restart but started only {}",
                        after[i] - before[i]
                    );
                }
            }
        }
    }
    if let Some(h) = resetter {
        h.join().expect("resetter panicked");
    }
    for h in handles {
        h.join().expect("scheduler panicked");
    }
    if s.conserve {
        let got = final_figures(&*e, s.functions);
        let key = format!("{}{}", s.name, placement.suffix());
        let want = crate::harness::reference_run(("collection", &key, P::name()), || {
            sequential::<P>(s, placement)
        });
        assert_eq!(
            got, want,
            "CT4 violated: figures differ from the sequential run"
        );
    }
    if let Err(err) = e.check_at_rest() {
        panic!("CT7 at rest violated: {err}");
    }
}

/// Which collection mutant each checker kills on which scenario.
pub fn expected_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    // Killed by both checkers: a missing wait, lock, flip or merge of the collection.
    let both = [
        (CollectSkipWaitBeforeRead, "info"),
        (CollectSkipWaitBeforeRead, "info-rehash"),
        (CollectSkipWaitBeforeMerge, "info"),
        (CollectMergeWithoutLock, "info-dirty"),
        (CollectWithoutFlip, "info"),
        (CollectFreeBeforeLastWait, "info"),
        (CollectSkipMerge, "info"),
    ];
    match checker {
        "loom" => [(CollectSkipWaitBeforeFlip, "info")]
            .into_iter()
            .chain(both)
            .collect(),
        "shuttle" => [
            (TimemPauseKeepsRunning, "pause-restart"),
            (TimemRestartKeepsCounter, "pause-restart"),
        ]
        .into_iter()
        .chain(both)
        .collect(),
        other => panic!("unknown checker {other}"),
    }
}
