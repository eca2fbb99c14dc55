//! The load torture: the code-loading engine (`load.rs`, docs/nonblocking-load.md) on real OS
//! threads, at scale, under both protocols (docs/torture.md §3).
//!
//! Threads:
//! - `schedulers` scheduler threads, each with one process that calls the module's functions
//!   (`call`), calls and stays in the version it reached (`call_and_stay`, a return address into
//!   it), makes local calls from the version it is in (`local_call`), returns out of it
//!   (`return_out`), passes progress points and naps (asleep, as a scheduler with no work);
//!   with `procs` above 1, each scheduler runs that many processes (`Scheduler::add_code_proc`),
//!   switched in turn at scheduling points (`Scheduler::switch_proc`: a switch step of its own,
//!   and every process in turn at each wake of the pace's naps), each switched-out process
//!   keeping its place in a version, its frames and its call_time pbts;
//! - one loader thread: load a new version (purge first when ERTS says `not_purged`), delete,
//!   purge; by the run's [`PurgeMode`], a soft purge (`code:soft_purge/1`: refused while a
//!   process is still in the old code, `OldCodeInUse`, and retried), a killing one
//!   (`code:purge/1`, `Engine::purge_kill`: the processes in the old code are killed and
//!   exit at their next scheduling point, their frames and call_time pbts discarded), or either
//!   at random;
//! - one stager thread: `trace_pattern` on and off on the module, call_count in the legacy
//!   session and call_time in a second session (two sessions chained on every function of a
//!   version while both are on), so processes carry call_time frames and pbts naming versions'
//!   functions across loads, removals and purges (charged at calls, returns and every
//!   schedule-out: progress points and naps).
//!
//! Checked at run time, on every call: what the engine asserts itself (the promise of
//! docs/nonblocking-load.md §2: a call into a version whose promise is made counts, its code and
//! its first instruction are that version's, its breakpoint is that function's; the liveness
//! words of versions and breakpoints: nothing read after its free, in checked builds where freed
//! memory is poisoned and kept), and here: a local call runs the version the process is in, a
//! counted call ran a version, a remote call's version was loaded. At the end, every thread
//! stopped: `check_at_rest` and the count conservation across versions, for call_count (the calls
//! the schedulers counted equal the module's live and retired counters) and for call_time (the
//! calls the processes counted into call_time objects equal the objects' counts, live and
//! folded in when released): no count lost or doubled.
//!
//! Every loop is bounded: the schedulers by their share of `hits` and `max_time`; the loader and
//! the stager by the schedulers' end and `max_time`; the purge retries and the pacing waits by
//! `max_time`.
//!
//! Liveness of the killing purge: the purger waits (holding the module's permission, so the
//! stager waits too) until every killed process has exited, which it does at its scheduler's
//! next scheduling point (a progress point or a wake, `take_signals`; a switched-out process at
//! its switch-in, `Scheduler::switch_proc`). A scheduler whose process
//! is in a version passes one at every progress step and nap, and its pacing nap is a sequence
//! of short naps (wake, sleep: a scheduling point each), as an ERTS scheduler woken by the exit
//! signal that makes its process runnable; so no pacing wait outlasts a kill. A scheduler that
//! failed a check never runs its process again: the run then waits for the loader and the
//! stager a bounded time and leaves them (detached, the engine leaked) if a killing purge still
//! waits for that process.

use super::{check_common, panic_message, per_second, shortfalls, Rng};
use crate::engine::{Engine, EngineConfig};
use crate::hit::Scheduler;
use crate::load::{LoadError, LoadProtocol};
use crate::mutant::Mutant;
use crate::progress::Qsbr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Parameters of one load torture run.
#[derive(Clone, Debug)]
pub struct LoadTortureConfig {
    pub protocol: LoadProtocol,
    /// Scheduler threads.
    pub schedulers: usize,
    /// Processes per scheduler (1: the scheduler's one process; more are added with
    /// `Scheduler::add_code_proc` and switched with `Scheduler::switch_proc`).
    pub procs: usize,
    /// Functions of the module `m`.
    pub functions: usize,
    /// Stop after this many calls (remote and local, over all schedulers).
    pub hits: u64,
    pub max_time: Duration,
    /// The schedulers make at most about this many calls per loader or stager operation, then
    /// nap until the next one (0: no pacing), so that oversubscribed schedulers cannot starve the
    /// loader.
    pub pace: u64,
    /// A baseline run with fewer loads (or purges, or trace_pattern calls) than this is short.
    pub min_loads: u64,
    pub min_trace_patterns: u64,
    pub seed: u64,
    pub mutant: Option<Mutant>,
    /// The engine's code index scheme (`Engine::with_code_ix`).
    pub scheme: crate::code_ix::CodeIxScheme,
    /// The loader's purges: soft, killing, or either at random.
    pub purge: PurgeMode,
    /// LW1 folded into the removal's W1 (`Engine::with_lw1_fold`; NonBlocking with two code
    /// indices only).
    pub fold_lw1: bool,
    /// The stager sets and clears its patterns on random subsets of the module's functions
    /// (`Engine::trace_pattern_funcs_spec_in`: each function its own patterns and promise bit)
    /// instead of the whole module.
    pub per_function: bool,
    /// A collector thread asks `trace_info` of call_time (the timed session) and of call_count
    /// (the legacy session) on a random function over and over
    /// (`Engine::trace_info_module_in`: OTP 29's collection, serialized with loads by the module
    /// table), while the loader and the stager churn.
    pub collect: bool,
}

/// The loader's purges (`bpspec torture --load --purge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PurgeMode {
    /// `code:soft_purge/1` only (`Engine::purge`): refused while a process is in the old
    /// code, retried.
    Soft,
    /// `code:purge/1` only (`Engine::purge_kill`): the processes in the old code are killed.
    Kill,
    /// Either, at random (half each).
    Mixed,
}

impl PurgeMode {
    pub const ALL: [PurgeMode; 3] = [PurgeMode::Soft, PurgeMode::Kill, PurgeMode::Mixed];
    pub fn name(self) -> &'static str {
        match self {
            PurgeMode::Soft => "soft",
            PurgeMode::Kill => "kill",
            PurgeMode::Mixed => "mixed",
        }
    }
    pub fn parse(s: &str) -> Option<PurgeMode> {
        PurgeMode::ALL.into_iter().find(|m| m.name() == s)
    }
    /// Whether the engine must be made `with_kills`.
    pub fn kills(self) -> bool {
        self != PurgeMode::Soft
    }
}

impl LoadTortureConfig {
    pub fn new(protocol: LoadProtocol, schedulers: usize, hits: u64, seed: u64) -> Self {
        let pace = 512;
        // A tenth of the operations the pace allows (the loader and the stager share them).
        let ops = hits / pace / 20;
        LoadTortureConfig {
            protocol,
            schedulers,
            procs: 1,
            functions: 8,
            hits,
            max_time: Duration::from_secs(600),
            pace,
            min_loads: ops,
            min_trace_patterns: ops,
            seed,
            mutant: None,
            scheme: crate::code_ix::CodeIxScheme::Two,
            purge: PurgeMode::Soft,
            fold_lw1: false,
            per_function: false,
            collect: false,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        check_common(self.schedulers, self.mutant)?;
        if !(1..=64).contains(&self.procs) {
            return Err(format!(
                "processes per scheduler must be 1..=64, got {}",
                self.procs
            ));
        }
        if !(1..=255).contains(&self.functions) {
            return Err(format!("functions must be 1..=255, got {}", self.functions));
        }
        if self.fold_lw1
            && (self.protocol != LoadProtocol::NonBlocking
                || self.scheme != crate::code_ix::CodeIxScheme::Two)
        {
            return Err("the LW1 fold is a switch of NonBlocking with two code indices".into());
        }
        Ok(())
    }

    /// The row's scenario: `load-s{schedulers}@{protocol}`, with `-3ix` under ERTS's three code
    /// indices, `-fold` with LW1 folded into the removal's W1, `-p{procs}` with more than one
    /// process per scheduler, and `-kill` or `-mixed` by the purges (nothing for soft purges).
    pub fn row_name(&self) -> String {
        let three = self.scheme == crate::code_ix::CodeIxScheme::Three;
        let purge = match self.purge {
            PurgeMode::Soft => String::new(),
            m => format!("-{}", m.name()),
        };
        let procs = if self.procs > 1 {
            format!("-p{}", self.procs)
        } else {
            String::new()
        };
        format!(
            "load-s{}@{}{}{}{procs}{purge}{}{}",
            self.schedulers,
            self.protocol.name(),
            if three { "-3ix" } else { "" },
            if self.fold_lw1 { "-fold" } else { "" },
            if self.per_function { "-perfn" } else { "" },
            if self.collect { "-collect" } else { "" }
        )
    }

    /// One line with every parameter.
    pub fn describe(&self) -> String {
        let c = self;
        let (protocol, variant) = (c.protocol.name(), c.mutant.map_or("baseline", |m| m.name()));
        let seconds = c.max_time.as_secs();
        let checked = crate::sync::CHECKED;
        format!(
            "load seed={:#x} protocol={protocol} schedulers={} procs={} functions={} hits={} pace={} min-loads={} min-trace-patterns={} max-time={seconds}s variant={variant} code-ix={} lw1-fold={} purge={} per-function={} collect={} checked={checked}",
            c.seed, c.schedulers, c.procs, c.functions, c.hits, c.pace, c.min_loads, c.min_trace_patterns,
            c.scheme.name(), c.fold_lw1, c.purge.name(), c.per_function, c.collect
        )
    }
}

/// What a load torture run did.
#[derive(Clone, Debug, Default)]
pub struct LoadTortureReport {
    /// Calls made (remote and local).
    pub hits: u64,
    pub counted: u64,
    pub local_calls: u64,
    pub undef_calls: u64,
    pub stays: u64,
    pub loads: u64,
    pub deletes: u64,
    pub purges: u64,
    /// Purges refused because a process was in the old code (each retried).
    pub purge_refusals: u64,
    /// Killing purges (`code:purge/1`) that freed an old version (counted in `purges` too).
    pub kill_purges: u64,
    /// Processes killed by them (each exited at its next scheduling point).
    pub kills: u64,
    /// Process switches (`Scheduler::switch_proc`; 0 with one process per scheduler).
    pub switches: u64,
    /// Of `kills`, those of a process killed while switched out, at its switch-in.
    pub switch_kills: u64,
    pub trace_patterns: u64,
    /// `trace_info` calls of the collector (`LoadTortureConfig::collect`; 0 without it).
    pub collections: u64,
    pub naps: u64,
    pub seconds: f64,
    pub timed_out: bool,
    /// After a failed check, the loader or the stager had not ended 2 s after the schedulers:
    /// left running (a killing purge waiting for the failed scheduler's process).
    pub left_running: bool,
    /// The calls counted by the schedulers and the module's counters at the end (equal, or a
    /// violation).
    pub total_count: u64,
    /// The calls counted into call_time objects by the processes and the objects' counts at the
    /// end, live and released (equal, or a violation).
    pub total_timed: u64,
    pub violation: Option<String>,
}

impl LoadTortureReport {
    /// What a run without a violation fell short of (empty when none): its hits (the time
    /// bound stopped it), loads or trace_pattern calls.
    pub fn shortfalls(&self, cfg: &LoadTortureConfig) -> Vec<String> {
        shortfalls(&[
            ("hits", self.hits, cfg.hits),
            ("loads", self.loads, cfg.min_loads),
            ("trace_pattern", self.trace_patterns, cfg.min_trace_patterns),
        ])
    }

    /// Calls per second.
    pub fn calls_per_second(&self) -> f64 {
        per_second(self.hits, self.seconds)
    }

    pub fn describe(&self) -> String {
        format!(
            "hits={} ({:.0}/s) counted={} local={} undef={} stays={} loads={} deletes={} purges={} purge_refusals={} kill_purges={} kills={} switches={} switch_kills={} trace_pattern={} collections={} naps={} total_count={} total_timed={} seconds={:.1}{}{}",
            self.hits,
            self.calls_per_second(),
            self.counted,
            self.local_calls,
            self.undef_calls,
            self.stays,
            self.loads,
            self.deletes,
            self.purges,
            self.purge_refusals,
            self.kill_purges,
            self.kills,
            self.switches,
            self.switch_kills,
            self.trace_patterns,
            self.collections,
            self.naps,
            self.total_count,
            self.total_timed,
            self.seconds,
            if self.timed_out { " (time bound reached)" } else { "" },
            if self.left_running {
                " (loader or stager left running)"
            } else {
                ""
            }
        )
    }
}

/// The loader and the stager make at most one operation per this many calls (plus one), so that
/// on a loaded machine they do not take the schedulers' time (the schedulers' pace, at least 64
/// calls per operation, is larger: the two never wait for each other).
const OPS_PACE: u64 = 16;

/// Index of the loader's count in `Shared::ops`.
const LOADER: usize = 0;
/// Index of the stager's count in `Shared::ops`.
const STAGER: usize = 1;

/// What the threads share.
struct Shared {
    deadline: Instant,
    /// Set when the schedulers are done, the time bound passed, or a check failed.
    stop: std::sync::atomic::AtomicBool,
    /// Calls published by the schedulers (in batches).
    hits: AtomicU64,
    /// Operations done by the loader (`[LOADER]`) and by the stager (`[STAGER]`), each paced
    /// on its own: with one shared count a fast loader could take the whole budget and leave
    /// the stager short of its minimum on a loaded machine ("trace_pattern 3 < 9").
    ops: [AtomicU64; 2],
    /// Set while the loader retries a refused soft purge: it waits for a scheduler's process to
    /// leave the old code, so the schedulers' pace must not wait for the loader then.
    loader_waits: std::sync::atomic::AtomicBool,
    /// The highest version number a load may have published (set before the load).
    announced: AtomicU64,
    violation: Mutex<Option<String>>,
}

impl Shared {
    fn fail(&self, thread: &str, msg: String) {
        let mut v = self.violation.lock().unwrap_or_else(|e| e.into_inner());
        if v.is_none() {
            *v = Some(format!("{thread}: {msg}"));
        }
        self.stop.store(true, Relaxed);
    }
    fn stopped(&self) -> bool {
        self.stop.load(Relaxed) || Instant::now() >= self.deadline
    }
    /// The pace of `who` ([`LOADER`] or [`STAGER`]): wait while it is ahead of the calls (half
    /// of one operation per `OPS_PACE` calls each, until the stop or the deadline), then count
    /// one operation.
    fn operation_done(&self, who: usize) {
        while self.ops[who].load(Relaxed) > self.hits.load(Relaxed) / (2 * OPS_PACE) + 1
            && !self.stopped()
        {
            std::thread::sleep(Duration::from_micros(20));
        }
        self.ops[who].fetch_add(1, Relaxed);
    }

    /// The operations the schedulers' pace counts: twice the slower of the loader and the
    /// stager, so that the schedulers wait for whichever is behind and each of them reaches
    /// its minimum however the two share the machine.
    /// While the loader retries a refused purge ([`Shared::loader_waits`]) only the stager's
    /// count: the loader waits for the schedulers then, and a pace that waited for it would
    /// hold the process in the old code.
    fn paced_ops(&self) -> u64 {
        let stager = self.ops[STAGER].load(Relaxed);
        if self.loader_waits.load(Relaxed) {
            2 * stager
        } else {
            2 * self.ops[LOADER].load(Relaxed).min(stager)
        }
    }
}

#[derive(Default)]
struct SchedStats {
    hits: u64,
    counted: u64,
    local: u64,
    undef: u64,
    stays: u64,
    naps: u64,
    /// Calls the process counted into call_time objects.
    timed: u64,
    /// Processes killed by `code:purge/1`.
    killed: u64,
    /// Process switches.
    switches: u64,
    /// Processes killed at their switch-in.
    switch_kills: u64,
}

/// What the loader did.
#[derive(Default)]
struct LoaderStats {
    loads: u64,
    deletes: u64,
    purges: u64,
    refusals: u64,
    kill_purges: u64,
}

/// Run the load torture. A violation is returned in the report, never a panic.
pub fn run(cfg: &LoadTortureConfig) -> Result<LoadTortureReport, String> {
    cfg.validate()?;
    let cfg = cfg.clone();
    let name = format!(
        "torture {} {}",
        cfg.row_name(),
        cfg.mutant.map_or("baseline", |m| m.name())
    );
    // The run's own time bound, then the watchdog's on top.
    let limit = cfg.max_time + crate::watchdog::bound();
    crate::watchdog::guard_for(&name, limit, move || run_unguarded(&cfg))
}

fn run_unguarded(cfg: &LoadTortureConfig) -> Result<LoadTortureReport, String> {
    let start = Instant::now();
    let engine =
        Engine::<Qsbr>::new(EngineConfig::simple(0, cfg.schedulers).with_mutant(cfg.mutant))
            .with_module(cfg.functions, cfg.protocol, true)
            .with_code_ix(cfg.scheme);
    let engine = if cfg.fold_lw1 {
        engine.with_lw1_fold()
    } else {
        engine
    };
    let e = Arc::new(if cfg.purge.kills() {
        engine.with_kills()
    } else {
        engine
    });
    // The second session, whose call_time the stager switches on and off.
    let timed = e
        .create_session("load-torture")
        .map_err(|er| format!("session: {er}"))?;
    let sh = Arc::new(Shared {
        deadline: start + cfg.max_time,
        stop: std::sync::atomic::AtomicBool::new(false),
        hits: AtomicU64::new(0),
        ops: [AtomicU64::new(0), AtomicU64::new(0)],
        loader_waits: std::sync::atomic::AtomicBool::new(false),
        announced: AtomicU64::new(1),
        violation: Mutex::new(None),
    });
    let n = cfg.schedulers as u64;
    let quota = cfg.hits.div_ceil(n);
    let scheds: Vec<_> = (0..cfg.schedulers)
        .map(|id| {
            let (e, sh, cfg) = (e.clone(), sh.clone(), cfg.clone());
            std::thread::spawn(move || scheduler(e, sh, &cfg, id, quota))
        })
        .collect();
    let loader = {
        let (e, sh, seed, mode) = (e.clone(), sh.clone(), cfg.seed, cfg.purge);
        std::thread::spawn(move || loader(&e, &sh, seed, mode))
    };
    let stager = {
        let (e, sh, seed) = (e.clone(), sh.clone(), cfg.seed);
        let subsets = cfg.per_function.then_some(cfg.functions);
        std::thread::spawn(move || stager(&e, &sh, seed, timed, subsets))
    };
    let collector = cfg.collect.then(|| {
        let (e, sh, seed, n) = (e.clone(), sh.clone(), cfg.seed, cfg.functions);
        std::thread::spawn(move || collector(&e, &sh, seed, timed, n))
    });
    let mut rep = LoadTortureReport::default();
    for (id, h) in scheds.into_iter().enumerate() {
        // Every panic of a scheduler's calls is caught in `scheduler`; one that escapes is a
        // violation too.
        let s = h.join().unwrap_or_else(|p| {
            sh.fail(&format!("scheduler {id}"), panic_message(&*p));
            SchedStats::default()
        });
        rep.hits += s.hits;
        rep.counted += s.counted;
        rep.local_calls += s.local;
        rep.undef_calls += s.undef;
        rep.stays += s.stays;
        rep.naps += s.naps;
        rep.total_timed += s.timed;
        rep.kills += s.killed;
        rep.switches += s.switches;
        rep.switch_kills += s.switch_kills;
    }
    sh.stop.store(true, Relaxed);
    // After a failed check a killing purge may wait for a process that never runs again (its
    // scheduler stopped): wait a bounded time, then leave the loader and the stager (below).
    let failed = sh
        .violation
        .lock()
        .unwrap_or_else(|er| er.into_inner())
        .is_some();
    let finished = |c: &Option<std::thread::JoinHandle<u64>>| {
        loader.is_finished() && stager.is_finished() && c.as_ref().is_none_or(|c| c.is_finished())
    };
    let joinable = !failed || {
        let until = Instant::now() + Duration::from_secs(2);
        // Bounded by `until`.
        while !finished(&collector) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        finished(&collector)
    };
    if joinable {
        let l = loader.join().unwrap_or_else(|p| {
            sh.fail("loader", panic_message(&*p));
            Default::default()
        });
        rep.trace_patterns = stager.join().unwrap_or_else(|p| {
            sh.fail("stager", panic_message(&*p));
            0
        });
        if let Some(c) = collector {
            rep.collections = c.join().unwrap_or_else(|p| {
                sh.fail("collector", panic_message(&*p));
                0
            });
        }
        rep.loads = l.loads;
        rep.deletes = l.deletes;
        rep.purges = l.purges;
        rep.purge_refusals = l.refusals;
        rep.kill_purges = l.kill_purges;
    } else {
        // Detached: the loader waits in `purge_kill` for the failed scheduler's process (its
        // spin limit ends it, or the process's exit); the engine is leaked below.
        drop((loader, stager, collector));
        rep.left_running = true;
    }
    rep.seconds = start.elapsed().as_secs_f64();
    let mut violation = sh
        .violation
        .lock()
        .unwrap_or_else(|er| er.into_inner())
        .take();
    if violation.is_none() {
        // At rest: every scheduler asleep, no process in any version.
        let end = catch_unwind(AssertUnwindSafe(|| {
            e.check_at_rest()?;
            let total = e.total_count();
            if total != rep.counted {
                return Err(format!(
                    "count conservation: the schedulers counted {} calls, the module's counters hold {total}",
                    rep.counted
                ));
            }
            let timed = e.total_timed();
            if timed != rep.total_timed as i64 {
                return Err(format!(
                    "call_time count conservation: the processes counted {} calls, the module's call_time objects hold {timed}",
                    rep.total_timed
                ));
            }
            Ok(total)
        }));
        match end {
            Ok(Ok(t)) => rep.total_count = t,
            Ok(Err(m)) => violation = Some(format!("at rest: {m}")),
            Err(p) => violation = Some(format!("at rest: {}", panic_message(&*p))),
        }
    }
    rep.timed_out = rep.hits < cfg.hits && violation.is_none();
    if let Some(v) = violation {
        rep.violation = Some(format!("{v} (seed {:#x})", cfg.seed));
        // A failed run may have left poisoned memory reachable: never free it.
        std::mem::forget(e);
    }
    Ok(rep)
}

/// A scheduler thread: its process calls, stays, makes local calls and returns, with progress
/// points and naps; bounded by `quota` calls and the deadline.
fn scheduler(
    e: Arc<Engine<Qsbr>>,
    sh: Arc<Shared>,
    cfg: &LoadTortureConfig,
    id: usize,
    quota: u64,
) -> SchedStats {
    let mut s = Scheduler::start(e, id);
    for _ in 1..cfg.procs {
        s.add_code_proc();
    }
    let mut st = SchedStats::default();
    let mut procs = Procs::new(&s, cfg.procs);
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        calls(&mut s, &sh, cfg, id, quota, &mut st, &mut procs)?;
        // Each process returns out of the version it is in (it exits), under the same watch: a
        // return that reads a freed version is a violation like any other. The others are
        // switched in for it in turn (their signals first: a kill ends one there).
        for k in 0..cfg.procs {
            if procs.held != 0 {
                s.return_out();
                procs.held = 0;
            }
            if k + 1 < cfg.procs {
                procs.switch(&mut s, &mut st)?;
            }
        }
        Ok(())
    }));
    let failed = match r {
        Ok(Ok(())) => false,
        Ok(Err(m)) => {
            sh.fail(&format!("scheduler {id}"), m);
            true
        }
        Err(p) => {
            sh.fail(&format!("scheduler {id}"), panic_message(&*p));
            true
        }
    };
    st.counted = s.counted();
    st.timed = s.code_procs_timem_calls();
    st.killed = s.killed();
    if failed {
        // Asleep so that the loader's waits end; never touch the (maybe freed) version again.
        // The process never runs again: its frames and pbts are dropped unrun (they may name
        // freed versions, and the check may have failed before it was scheduled in), so that
        // going to sleep charges nothing: an empty process in its place, marked running.
        let p = s.code_proc().p;
        *s.code_proc_mut() = crate::process::Proc::new(p);
        s.code_proc_mut().running = true;
        s.sleep();
        std::mem::forget(s);
    } else {
        s.sleep();
        // Dropping it only leaves (nothing held, asleep already).
        drop(s);
    }
    st
}

/// The versions a scheduler's processes are in, as the torture saw them (0: none), in the
/// engine's switching order (`Scheduler::switch_proc`: the current one is parked last, the first
/// parked one runs), and the kills seen.
struct Procs {
    /// The running process's version.
    held: u32,
    /// The switched-out processes' versions, the next to run first.
    parked: std::collections::VecDeque<u32>,
    /// The scheduler's kills seen: a scheduling point that raises `Scheduler::killed` killed
    /// the running process (it left its version: its local calls and its return are a dead
    /// process's).
    killed: u64,
}

impl Procs {
    fn new(s: &Scheduler<Qsbr>, procs: usize) -> Procs {
        Procs {
            held: 0,
            parked: std::iter::repeat_n(0, procs - 1).collect(),
            killed: s.killed(),
        }
    }

    /// After a scheduling point (a progress point, a wake, a switch-in): a kill there is the
    /// running process's, once at most, and only of a process in a version.
    fn exited(&mut self, s: &Scheduler<Qsbr>) -> Result<(), String> {
        if s.killed() != self.killed {
            if self.held == 0 || s.killed() != self.killed + 1 {
                return Err(format!(
                    "killed {} times at one scheduling point, in version {}",
                    s.killed() - self.killed,
                    self.held
                ));
            }
            self.killed = s.killed();
            self.held = 0;
        }
        Ok(())
    }

    /// A process switch (a no-op with one process): the running process parked last, the
    /// first parked one switched in (its signals first).
    fn switch(&mut self, s: &mut Scheduler<Qsbr>, st: &mut SchedStats) -> Result<(), String> {
        let Some(next) = self.parked.pop_front() else {
            return Ok(());
        };
        s.switch_proc();
        st.switches += 1;
        self.parked.push_back(self.held);
        self.held = next;
        let killed = self.killed;
        self.exited(s)?;
        st.switch_kills += u64::from(self.killed != killed);
        Ok(())
    }
}

/// The processes' calls: returns when the quota is made or the run stops; `procs` says which
/// process is in which version at that point.
fn calls(
    s: &mut Scheduler<Qsbr>,
    sh: &Shared,
    cfg: &LoadTortureConfig,
    id: usize,
    quota: u64,
    st: &mut SchedStats,
    procs: &mut Procs,
) -> Result<(), String> {
    let mut rng = Rng::new(cfg.seed ^ (0x5C4E_D000 + id as u64).wrapping_mul(0x9E37_79B9));
    let f = cfg.functions as u64;
    let mut unpublished = 0u64;
    // Bounded by the quota; each step is a call or one of at most `quota` other steps.
    for step in 0..quota.saturating_mul(4) {
        if st.hits >= quota {
            break;
        }
        if step % 64 == 0 {
            if sh.stopped() {
                break;
            }
            sh.hits.fetch_add(unpublished, Relaxed);
            unpublished = 0;
            pace(s, sh, cfg, st, procs)?;
        }
        let fx = rng.below(f) as usize;
        let r = rng.below(100);
        let held = procs.held;
        // In a version: local calls mostly; outside: remote calls mostly (module comment). With
        // more than one process per scheduler, half the progress steps are process switches.
        let step = match (held != 0, r) {
            (true, 0..=69) => Step::Local,
            (true, 70..=84) | (false, 0..=79) => Step::Remote,
            (true, 85..=89) => Step::Return,
            (false, 80..=84) => Step::Stay,
            (true, 90..=97) | (false, 85..=97) if cfg.procs > 1 && r % 2 == 0 => Step::Switch,
            (true, 90..=97) | (false, 85..=97) => Step::Progress,
            _ => Step::Nap,
        };
        let called = matches!(step, Step::Local | Step::Remote | Step::Stay);
        match step {
            Step::Local => {
                let c = s.local_call(fx);
                st.local += 1;
                if c.version != held || !c.local {
                    return Err(format!(
                        "a local call from version {held} ran version {} (local {})",
                        c.version, c.local
                    ));
                }
            }
            Step::Remote => remote_seen(sh, s.call_ext(fx), st)?,
            Step::Stay => {
                let c = s.call_and_stay(fx);
                remote_seen(sh, c, st)?;
                st.stays += 1;
                // undef: the process entered no code and holds nothing.
                procs.held = c.version;
            }
            Step::Return => {
                s.return_out();
                procs.held = 0;
            }
            Step::Progress => {
                s.progress();
                procs.exited(s)?;
            }
            Step::Switch => procs.switch(s, st)?,
            Step::Nap => {
                nap(s, st);
                procs.exited(s)?;
            }
        }
        if called {
            st.hits += 1;
            unpublished += 1;
        }
    }
    sh.hits.fetch_add(unpublished, Relaxed);
    Ok(())
}

/// One step of a scheduler's process.
enum Step {
    Local,
    Remote,
    Stay,
    Return,
    Progress,
    /// A process switch (more than one process per scheduler).
    Switch,
    Nap,
}

/// A remote call's outcome: counted only in a version, and only a version a load announced.
fn remote_seen(sh: &Shared, c: crate::load::CallSeen, st: &mut SchedStats) -> Result<(), String> {
    if c.local {
        return Err("a remote call reported local".into());
    }
    if c.version == 0 {
        st.undef += 1;
        if c.counted {
            return Err("a call to undef was counted".into());
        }
    }
    // The loader announces a version before its load publishes it; the call read the code index
    // the publication committed (Acquire, pairing with the commit's Release), so the announcement
    // happens before this read, which sees it or a later one ([coh]).
    let announced = sh.announced.load(Relaxed);
    if c.version as u64 > announced {
        return Err(format!(
            "a call ran version {} but only {announced} were loaded",
            c.version
        ));
    }
    Ok(())
}

/// Asleep for a moment (a scheduler with no work): the loader's waits pass it.
fn nap(s: &mut Scheduler<Qsbr>, st: &mut SchedStats) {
    s.sleep();
    std::thread::yield_now();
    s.wake();
    st.naps += 1;
}

/// The pace: at most `cfg.pace` calls (over all schedulers) per loader or stager operation;
/// beyond, nap until the next one, the stop, or the deadline. The nap is a sequence of short
/// ones, each a scheduling point (a wake, which handles the running process's signals, and a
/// switch to each other process in turn, which handles its signals at its switch-in, then
/// asleep again): a killing purge that waits for one of this scheduler's processes to exit, and
/// holds the loader and the stager meanwhile, is not waited for in turn (module comment).
fn pace(
    s: &mut Scheduler<Qsbr>,
    sh: &Shared,
    cfg: &LoadTortureConfig,
    st: &mut SchedStats,
    procs: &mut Procs,
) -> Result<(), String> {
    if cfg.pace == 0 {
        return Ok(());
    }
    let allowed = |ops: u64| (ops + 1).saturating_mul(cfg.pace);
    if sh.hits.load(Relaxed) <= allowed(sh.paced_ops()) {
        return Ok(());
    }
    s.sleep();
    st.naps += 1;
    let mut naps = 0u32;
    while !sh.stopped() && sh.hits.load(Relaxed) > allowed(sh.paced_ops()) {
        std::thread::sleep(Duration::from_micros(50));
        naps = naps.wrapping_add(1);
        if cfg.purge.kills() && naps.is_multiple_of(8) {
            s.wake();
            procs.exited(s)?;
            for _ in 1..cfg.procs {
                procs.switch(s, st)?;
            }
            s.sleep();
        }
    }
    s.wake();
    procs.exited(s)
}

/// The loader: load (purging first when needed), delete, purge; refused purges retried.
fn loader(e: &Engine<Qsbr>, sh: &Shared, seed: u64, mode: PurgeMode) -> LoaderStats {
    let mut out = LoaderStats::default();
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut rng = Rng::new(seed ^ 0x10AD_E500);
        let mut next = 2u64; // version 1 is loaded by `Engine::new`
        while !sh.stopped() {
            let r = rng.below(10);
            let kill = match mode {
                PurgeMode::Soft => false,
                PurgeMode::Kill => true,
                PurgeMode::Mixed => rng.chance(1, 2),
            };
            if r < 7 {
                sh.announced.store(next, Relaxed);
                match e.load() {
                    Ok(v) => {
                        if v as u64 != next {
                            return Err(format!("load returned version {v}, expected {next}"));
                        }
                        next += 1;
                        out.loads += 1;
                    }
                    Err(LoadError::NotPurged) => purge(e, sh, kill, &mut out)?,
                    Err(er) => return Err(format!("load: {er}")),
                }
            } else if r < 8 {
                match e.delete() {
                    Ok(()) => out.deletes += 1,
                    Err(LoadError::NotPurged) => purge(e, sh, kill, &mut out)?,
                    Err(LoadError::NotLoaded) => {}
                    Err(er) => return Err(format!("delete: {er}")),
                }
            } else {
                purge(e, sh, kill, &mut out)?;
            }
            sh.operation_done(LOADER);
        }
        Ok(())
    }));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(m)) => sh.fail("loader", m),
        Err(p) => sh.fail("loader", panic_message(&*p)),
    }
    out
}

/// Purge: `code:purge/1` (`kill`: never refused, its wait for the killed processes' exits is
/// bounded by the engine's spin limit) or `code:soft_purge/1`, retried while a process is in the
/// old code (bounded by the stop and the deadline).
fn purge(e: &Engine<Qsbr>, sh: &Shared, kill: bool, out: &mut LoaderStats) -> Result<(), String> {
    let r = purge_retried(e, sh, kill, out);
    sh.loader_waits.store(false, Relaxed);
    r
}

/// [`purge`]'s attempts: a refused soft purge is retried, with `loader_waits` set.
fn purge_retried(
    e: &Engine<Qsbr>,
    sh: &Shared,
    kill: bool,
    out: &mut LoaderStats,
) -> Result<(), String> {
    loop {
        let r = if kill { e.purge_kill() } else { e.purge() };
        match r {
            Ok(true) => {
                out.purges += 1;
                out.kill_purges += kill as u64;
                return Ok(());
            }
            Ok(false) => return Ok(()),
            Err(LoadError::OldCodeInUse) if kill => {
                return Err("code:purge refused: a process stayed in the old code".into())
            }
            Err(LoadError::OldCodeInUse) => {
                out.refusals += 1;
                sh.loader_waits.store(true, Relaxed);
                if sh.stopped() {
                    return Ok(());
                }
                std::thread::yield_now();
            }
            Err(er) => return Err(format!("purge: {er}")),
        }
    }
}

/// The collector: `trace_info` of call_time in session `timed` and of call_count in the legacy
/// session, on a random one of the module's `functions`, until the stop; each answer must be
/// one `trace_info` gives (a list of process rows or `false` for call_time, a count or `false`
/// for call_count, `undefined` while the module is deleted). Returns the calls made.
fn collector(
    e: &Engine<Qsbr>,
    sh: &Shared,
    seed: u64,
    timed: crate::bp::SessionId,
    functions: usize,
) -> u64 {
    use crate::term::InfoKey;
    let mut n = 0;
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut rng = Rng::new(seed ^ 0xC011_EC70);
        // Bounded by the stop and the deadline.
        while !sh.stopped() {
            let f = rng.below(functions as u64) as usize;
            let (session, key, item) = if rng.chance(1, 2) {
                (timed, InfoKey::CallTime, "call_time")
            } else {
                (0, InfoKey::CallCount, "call_count")
            };
            let t = e.trace_info_module_in(0, session, f, key).to_string();
            let v = t
                .strip_prefix(&format!("{{{item},"))
                .and_then(|v| v.strip_suffix('}'));
            let well_formed = v.is_some_and(|v| {
                matches!(v, "false" | "undefined")
                    || match key {
                        InfoKey::CallTime => v.starts_with('[') && v.ends_with(']'),
                        _ => v.parse::<u64>().is_ok(),
                    }
            });
            if !well_formed {
                sh.fail("collector", format!("trace_info of m:f{f}/0's {item}: {t}"));
                return;
            }
            n += 1;
            // As a process asking now and then: the loader and the stager wait for the module
            // table while a collection holds it.
            std::thread::sleep(Duration::from_micros(50));
        }
    }));
    if let Err(p) = r {
        sh.fail("collector", panic_message(&*p));
    }
    n
}

/// The stager: trace_pattern on and off on the module, call_count in the legacy session or
/// call_time in session `timed`; with `subsets` (the module's number of functions), on a
/// random nonempty subset of its functions each time. Returns the calls made.
fn stager(
    e: &Engine<Qsbr>,
    sh: &Shared,
    seed: u64,
    timed: crate::bp::SessionId,
    subsets: Option<usize>,
) -> u64 {
    let mut n = 0;
    let call_time = crate::calltrace::TraceSpec::from(crate::pattern::FlagSet {
        call_time: true,
        ..Default::default()
    })
    .session(timed);
    // The legacy session's call_count (`Engine::trace_pattern_module`).
    let call_count = crate::calltrace::TraceSpec::from(crate::pattern::FlagSet {
        call_count: true,
        ..Default::default()
    });
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut rng = Rng::new(seed ^ 0x57A6_E500);
        while !sh.stopped() {
            // Mostly on: a traced module is what the loads must keep traced.
            let on = rng.chance(3, 4);
            let spec = if rng.chance(1, 2) {
                call_count.clone()
            } else {
                call_time.clone()
            };
            let r = match subsets {
                None => e.trace_pattern_module_spec(on, &spec),
                Some(n) => {
                    // Each function in with probability 1/2; at least one.
                    let mut fs: Vec<usize> = (0..n).filter(|_| rng.chance(1, 2)).collect();
                    if fs.is_empty() {
                        fs.push(rng.below(n as u64) as usize);
                    }
                    e.trace_pattern_funcs_spec_in(0, &fs, on, &spec)
                }
            };
            if let Err(er) = r {
                sh.fail("stager", format!("trace_pattern: {er}"));
                return;
            }
            n += 1;
            sh.operation_done(STAGER);
            if rng.chance(1, 4) {
                std::thread::yield_now();
            }
        }
    }));
    if let Err(p) = r {
        sh.fail("stager", panic_message(&*p));
    }
    n
}
