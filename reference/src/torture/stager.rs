//! The torture's stager: phases, churn, collections, sessions, and the checks between phases.

use super::worker::{self, Published, Shared, WorkerCfg, OPEN, STOP};
use super::{panic_message, Rng, TortureConfig, TortureReport};
use crate::bp::SessionId;
use crate::calltrace::TraceSpec;
use crate::code::{FuncId, Mfa};
use crate::engine::{Engine, EngineConfig};
use crate::pattern::{FlagSet, Pattern, PatternOp};
use crate::progress::Qsbr;
use crate::term::{InfoKey, Term};
use crate::tracer::{Mailbox, ProcessTracer};
use crate::BatchEntry;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the stager waits for every scheduler to acknowledge a close, and for hits to move
/// while a window is open, before it reports a liveness violation.
const LIVENESS: Duration = Duration::from_secs(120);

/// Longest the stager gives the schedulers to use the hits one churn operation allowed.
const PACE_SLICE: Duration = Duration::from_millis(2);

/// Most sessions the run creates (session ids are not reused; the engine has 63).
const MAX_CREATED: u64 = 56;

const COUNTERS: FlagSet = FlagSet::of(false, true, true, true);
const EVERYTHING: FlagSet = FlagSet::ALL;

/// A failed check, as a message (the caller records it with the thread name and phase).
type Check = Result<(), String>;

/// call_count (as a term), and the sums of the call_time and call_memory counts.
type Counts = (String, Option<i64>, Option<i64>);

struct Stager {
    cfg: TortureConfig,
    e: Arc<Engine<Qsbr>>,
    sh: Arc<Shared>,
    rng: Rng,
    mfas: Vec<Mfa>,
    s1: SessionId,
    ephemeral: Vec<SessionId>,
    /// Meta tracer mailboxes in use, by (session, function); drained after every operation.
    meta: BTreeMap<(SessionId, FuncId), Arc<Mailbox>>,
    /// Paused counters: (session, function) → (call_count term, call_time count, call_memory
    /// count) read right after the pause.
    paused: BTreeMap<(SessionId, FuncId), (FlagSet, Counts)>,
    next_pid: u64,
    /// Session creates and destroys in this phase (at most two, so ids last the run).
    phase_sessions: u32,
    rep: TortureReport,
    /// Cumulative call_time / call_memory charged to stable functions (session 0).
    stable_time: i64,
    stable_words: i64,
}

pub(super) fn run(cfg: &TortureConfig) -> TortureReport {
    let static_fns = if cfg.versions { 0 } else { cfg.functions };
    let mut e = Engine::<Qsbr>::new(
        EngineConfig::simple(static_fns, cfg.schedulers).with_mutant(cfg.mutant),
    )
    .with_wait_plan(cfg.wait_plan);
    if cfg.versions {
        e = e
            .with_module(cfg.functions, crate::load::LoadProtocol::NonBlocking, false)
            .with_versions_only();
    }
    if !cfg.erts_collection {
        e = e.with_paused_via_flip().with_wait_before_flip_back();
    }
    let e = Arc::new(e);
    let sh = Arc::new(Shared::new(
        cfg.schedulers,
        cfg.functions,
        cfg.seed,
        cfg.pace,
    ));
    let mut seeds = Rng::new(cfg.seed);
    let stager_seed = seeds.next();
    let workers: Vec<_> = (0..cfg.schedulers)
        .map(|id| {
            let (e, sh) = (e.clone(), sh.clone());
            let w = WorkerCfg {
                id,
                functions: cfg.functions,
                procs: cfg.procs,
                dirty: cfg.schedulers >= 3 && id == cfg.schedulers - 1,
                versions: cfg.versions,
                seed: seeds.next(),
            };
            std::thread::Builder::new()
                .name(format!("torture-sched-{id}"))
                .spawn(move || worker::worker(e, sh, w))
                .expect("spawn a scheduler thread")
        })
        .collect();
    let start = Instant::now();
    let mut st = Stager {
        cfg: cfg.clone(),
        mfas: if cfg.versions {
            e.code_mgmt().mods[0].mfas.clone()
        } else {
            (0..cfg.functions)
                .map(|f| e.code.funcs[f].mfa.clone())
                .collect()
        },
        e: e.clone(),
        sh: sh.clone(),
        rng: Rng::new(stager_seed),
        s1: 0,
        ephemeral: Vec::new(),
        meta: BTreeMap::new(),
        paused: BTreeMap::new(),
        next_pid: 5000,
        phase_sessions: 0,
        rep: TortureReport::default(),
        stable_time: 0,
        stable_words: 0,
    };
    let r = catch_unwind(AssertUnwindSafe(|| st.phases(start)));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(m)) => sh.fail("stager".into(), m),
        Err(p) => sh.fail("stager".into(), panic_message(&*p)),
    }
    sh.ctl.fetch_or(STOP, Release);
    for w in workers {
        if w.join().is_err() {
            sh.fail(
                "scheduler".into(),
                "thread ended with a panic outside its body".into(),
            );
        }
    }
    if !sh.failed.load(Relaxed) {
        // Charged time and memory never exceed what the processes spent. Checked once every
        // thread stopped: until then a process whose pbt still names a stable function (a raise
        // leaves the raiser charged) may be charged for time its scheduler has not published.
        let pubs = sh
            .published
            .iter()
            .map(|p| p.lock().unwrap_or_else(|e| e.into_inner()));
        let (clock, words) = pubs.fold((0, 0), |(c, w), p| (c + p.clock, w + p.words));
        if st.stable_time > clock || st.stable_words > words {
            sh.fail(
                "stager".into(),
                format!(
                    "conservation: stable functions were charged {} time units and {} words, but only {clock} and {words} passed",
                    st.stable_time, st.stable_words
                ),
            );
        }
    }
    if !sh.failed.load(Relaxed) {
        st.rep.at_rest_checks += 1;
        if let Err(m) = e.check_at_rest() {
            sh.fail("stager".into(), format!("at rest after the run: {m}"));
        }
    }
    let mut rep = st.rep;
    rep.hits = sh.hits.load(Relaxed);
    rep.raises = sh.raises.load(Relaxed);
    rep.scheduler_waits = sh.waits.load(Relaxed);
    rep.schedule_outs = sh.schedule_outs.load(Relaxed);
    rep.grace_periods = crate::progress::ThreadProgress::completed_waits(&e.progress);
    rep.seconds = start.elapsed().as_secs_f64();
    rep.violation = sh
        .violation
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    rep
}

impl Stager {
    fn phases(&mut self, start: Instant) -> Check {
        self.s1 = self
            .e
            .create_session("torture-s1")
            .map_err(|e| format!("create the counting session: {e}"))?;
        self.rep.sessions_created += 1;
        let first = self.choose_stable();
        self.sh.masks[1].store(first, Relaxed);
        let mut phase = 1u64;
        loop {
            // The window of `phase` is closed (ctl = phase << 2): wait for every scheduler.
            self.wait_acks(phase)?;
            if phase > 1 {
                self.check_conservation(phase - 1)?;
            }
            self.at_rest()?;
            let done = self.sh.hits.load(Relaxed) >= self.cfg.hits
                && self.rep.phases >= self.cfg.min_phases;
            let late = start.elapsed() >= self.cfg.max_time;
            if done || late || self.sh.failed.load(Relaxed) {
                self.rep.timed_out = late && !done;
                return Ok(());
            }
            let stable = self.sh.masks[(phase & 1) as usize].load(Relaxed);
            self.set_stable(stable)?;
            // Release: pairs with the schedulers' Acquire load of `ctl` (the patterns above are
            // committed and every wait passed before any scheduler counts a call).
            self.sh.ctl.store(phase << 2 | OPEN, Release);
            self.churn(phase, stable, start)?;
            let next = self.choose_stable();
            self.sh.masks[((phase + 1) & 1) as usize].store(next, Relaxed);
            // Release: the next mask is written before the close is seen.
            self.sh.ctl.store((phase + 1) << 2, Release);
            self.rep.phases += 1;
            phase += 1;
        }
    }

    fn choose_stable(&mut self) -> u64 {
        let mut m = 0u64;
        while (m.count_ones() as usize) < self.cfg.stable {
            m |= 1 << self.rng.below(self.cfg.functions as u64);
        }
        m
    }

    fn wait_acks(&mut self, phase: u64) -> Check {
        let t = Instant::now();
        for (i, a) in self.sh.acked.iter().enumerate() {
            // Acquire: pairs with the scheduler's Release store after it published its counts.
            while a.load(Acquire) < phase {
                if self.sh.failed.load(Relaxed) {
                    return Ok(());
                }
                if t.elapsed() > LIVENESS {
                    return Err(format!(
                        "liveness: scheduler {i} did not acknowledge the close of phase {} within {}s",
                        phase - 1,
                        LIVENESS.as_secs()
                    ));
                }
                std::thread::yield_now();
            }
        }
        Ok(())
    }

    fn at_rest(&mut self) -> Check {
        self.rep.at_rest_checks += 1;
        self.e
            .check_at_rest()
            .map_err(|m| format!("at-rest invariant: {m}"))
    }

    fn tp(&mut self, s: SessionId, f: FuncId, op: PatternOp, fl: FlagSet) -> bool {
        self.rep.trace_patterns += 1;
        self.paused.remove(&(s, f));
        self.pattern(f, op, &TraceSpec::from(fl).session(s)).is_ok()
    }

    /// `trace_pattern` of `spec` on function `f` alone: the static area's, or the module's on
    /// its version ([`TortureConfig::versions`]).
    fn pattern(
        &self,
        f: FuncId,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, crate::pattern::PatternError> {
        if self.cfg.versions {
            self.e.trace_pattern_funcs_op_in(0, &[f], op, spec)
        } else {
            self.e
                .trace_pattern(&Pattern::exact(&self.mfas[f]), op, spec)
        }
    }

    /// `trace_info` of `key` on function `f` in session `s`, wherever the functions are.
    fn info(&self, s: SessionId, f: FuncId, key: InfoKey) -> Term {
        if self.cfg.versions {
            self.e.trace_info_module_in(0, s, f, key)
        } else {
            self.e.trace_info_term(s, &self.mfas[f], key)
        }
    }

    /// One `trace_pattern_batch` of `entries` in session `s` (a batching wait plan: one staging,
    /// one sequence). Each entry names one existing function, so each must match exactly one.
    fn batch(&mut self, s: SessionId, entries: &[(FuncId, PatternOp, FlagSet)]) -> Check {
        self.rep.trace_patterns += 1;
        self.rep.batches += 1;
        self.rep.batch_entries += entries.len() as u64;
        let batch: Vec<BatchEntry> = entries
            .iter()
            .map(|&(f, op, fl)| {
                self.paused.remove(&(s, f));
                BatchEntry::flags(Pattern::exact(&self.mfas[f]), op, fl)
            })
            .collect();
        let r = if self.cfg.versions {
            self.e.trace_pattern_batch_in(0, s, &batch)
        } else {
            self.e.trace_pattern_batch(s, &batch)
        };
        match r {
            Ok(n) if n.iter().all(|&m| m == 1) => Ok(()),
            Ok(n) => Err(format!("a batch of {} entries matched {n:?}", batch.len())),
            Err(err) => Err(format!("a batch of {} entries refused: {err}", batch.len())),
        }
    }

    /// Fresh counters on the stable functions in sessions 0 and s1 (window closed).
    fn set_stable(&mut self, stable: u64) -> Check {
        for f in 0..self.cfg.functions {
            if stable & (1 << f) == 0 {
                continue;
            }
            for s in [0, self.s1] {
                self.tp(s, f, PatternOp::False, EVERYTHING);
                if !self.tp(s, f, PatternOp::True, COUNTERS) {
                    return Err(format!(
                        "trace_pattern true on stable {} refused",
                        self.mfas[f]
                    ));
                }
            }
        }
        Ok(())
    }

    /// The open window: churn until the phase's hits are made.
    fn churn(&mut self, phase: u64, stable: u64, start: Instant) -> Check {
        let begin = self.sh.hits.load(Relaxed);
        let target = (begin + self.cfg.phase_hits).min(self.cfg.hits.max(begin + 1));
        let mut ops = 0u64;
        self.phase_sessions = 0;
        let (tp0, coll0) = (self.rep.trace_patterns, self.rep.collections);
        self.allow(begin);
        let r = self.churn_ops(phase, stable, start, begin, target, &mut ops);
        self.rep.churn_ops += ops;
        self.rep.churn_trace_patterns += self.rep.trace_patterns - tp0;
        self.rep.churn_collections += self.rep.collections - coll0;
        r
    }

    fn churn_ops(
        &mut self,
        phase: u64,
        stable: u64,
        start: Instant,
        begin: u64,
        target: u64,
        ops: &mut u64,
    ) -> Check {
        let mut last = (begin, Instant::now());
        loop {
            if self.sh.failed.load(Relaxed) || start.elapsed() >= self.cfg.max_time {
                return Ok(());
            }
            let h = self.sh.hits.load(Relaxed);
            if h >= target {
                return Ok(());
            }
            if h != last.0 {
                last = (h, Instant::now());
            } else if last.1.elapsed() > LIVENESS {
                return Err(format!(
                    "liveness: no hit for {}s in phase {phase}",
                    LIVENESS.as_secs()
                ));
            }
            if !self.cfg.idle_stager {
                if !self.paused.is_empty() {
                    self.rep.paused_chances += 1;
                }
                self.op(stable)?;
            }
            self.allow(self.sh.hits.load(Relaxed));
            self.let_schedulers_run();
            *ops += 1;
            if *ops & 31 == 0 {
                self.at_rest()?;
            }
            for mb in self.meta.values() {
                drop(mb.take());
            }
        }
    }

    /// Let the schedulers make `pace` more hits from `h` on (they wait for the stager, not the
    /// other way round: docs/torture.md).
    fn allow(&self, h: u64) {
        if self.cfg.pace > 0 {
            self.sh
                .allow
                .store(h.saturating_add(self.cfg.pace), Relaxed);
        }
    }

    /// After an operation, give the schedulers the cores until they used the hits it allowed
    /// (they then wait, asleep, for the next operation) or `PACE_SLICE` passed, whichever comes
    /// first: without this the stager, whose grace periods pass at once while the schedulers
    /// sleep, would make many operations per hit. The stager never waits longer than
    /// `PACE_SLICE` for the schedulers; they wait for it.
    fn let_schedulers_run(&self) {
        if self.cfg.pace == 0 {
            return;
        }
        let t = Instant::now();
        while self.sh.hits.load(Relaxed) < self.sh.allow.load(Relaxed)
            && !self.sh.failed.load(Relaxed)
            && t.elapsed() < PACE_SLICE
        {
            std::thread::yield_now();
        }
    }

    fn session(&mut self, with_counting: bool) -> SessionId {
        let n = self.ephemeral.len() as u64 + if with_counting { 2 } else { 0 };
        if n == 0 {
            return 0;
        }
        let k = self.rng.below(n) as usize;
        if k < self.ephemeral.len() {
            self.ephemeral[k]
        } else if k == self.ephemeral.len() {
            0
        } else {
            self.s1
        }
    }

    fn churn_fn(&mut self, stable: u64) -> FuncId {
        loop {
            let f = self.rng.below(self.cfg.functions as u64) as usize;
            if stable & (1 << f) == 0 {
                return f;
            }
        }
    }

    fn flags(&mut self, local: bool) -> FlagSet {
        loop {
            let b = self.rng.below(16);
            let fl = FlagSet {
                local: local && b & 1 != 0,
                call_count: b & 2 != 0,
                call_time: b & 4 != 0,
                call_memory: b & 8 != 0,
            };
            if fl != FlagSet::default() {
                return fl;
            }
        }
    }

    /// One churn operation. Sessions 0 and s1 only touch non-stable functions with
    /// trace_pattern; ephemeral sessions touch any function.
    fn op(&mut self, stable: u64) -> Check {
        let r = self.rng.below(100);
        match r {
            0..=34 => {
                let s = self.session(true);
                // Under a batching wait plan, half of these are batches of two to four entries
                // on distinct functions of the session, each entry drawn as a single call is.
                let n = if self.cfg.wait_plan.batches() && self.rng.chance(1, 2) {
                    2 + self.rng.below(3) as usize
                } else {
                    1
                };
                let mut entries: Vec<(FuncId, PatternOp, FlagSet)> = Vec::with_capacity(n);
                let mut tries = 0;
                while entries.len() < n && tries < 64 {
                    tries += 1;
                    let f = if s == 0 || s == self.s1 {
                        self.churn_fn(stable)
                    } else {
                        self.rng.below(self.cfg.functions as u64) as usize
                    };
                    if entries.iter().any(|e| e.0 == f) {
                        continue;
                    }
                    let (op, fl) = match self.rng.below(4) {
                        0 => (PatternOp::True, self.flags(true)),
                        1 => (PatternOp::False, self.flags(true)),
                        2 => (PatternOp::Pause, self.flags(false)),
                        _ => (PatternOp::Restart, self.flags(false)),
                    };
                    entries.push((f, op, fl));
                }
                // ERTS's quirk: pausing a counter that does not exist creates a running one
                // (docs/deviations.md), so only the kinds that existed are expected to stop.
                let pre: Vec<_> = entries
                    .iter()
                    .map(|&(f, op, _)| (op == PatternOp::Pause).then(|| self.counts(s, f)))
                    .collect();
                if n == 1 {
                    let (f, op, fl) = entries[0];
                    self.tp(s, f, op, fl);
                } else {
                    self.batch(s, &entries)?;
                }
                for (&(f, _, fl), pre) in entries.iter().zip(pre) {
                    if let Some(pre) = pre {
                        let existed = FlagSet {
                            local: false,
                            call_count: fl.call_count && pre.0 != "{call_count,false}",
                            call_time: fl.call_time && pre.1.is_some(),
                            call_memory: fl.call_memory && pre.2.is_some(),
                        };
                        if existed != FlagSet::default() {
                            self.note_paused(s, f, existed);
                        }
                    }
                }
            }
            35..=44 => self.meta_swap(stable),
            45..=69 => {
                // A collection on a stable function while it is hit (sessions 0 and s1).
                let s = if self.rng.chance(1, 2) { 0 } else { self.s1 };
                let f = loop {
                    let f = self.rng.below(self.cfg.functions as u64) as usize;
                    if stable & (1 << f) != 0 {
                        break f;
                    }
                };
                self.collect(s, f)?;
            }
            70..=79 => {
                let s = self.session(true);
                let f = self.rng.below(self.cfg.functions as u64) as usize;
                self.collect(s, f)?;
            }
            80..=91 => self.check_paused()?,
            _ => self.session_churn(),
        }
        Ok(())
    }

    fn meta_swap(&mut self, stable: u64) {
        let s = self.session(false);
        let f = if s == 0 {
            self.churn_fn(stable)
        } else {
            self.rng.below(self.cfg.functions as u64) as usize
        };
        let on = self.rng.chance(3, 4);
        let mb = Mailbox::new(self.next_pid);
        self.next_pid += 1;
        self.rep.trace_patterns += 1;
        self.rep.meta_swaps += 1;
        self.paused.remove(&(s, f));
        let spec = ProcessTracer::spec(&mb);
        let op = if on {
            PatternOp::True
        } else {
            PatternOp::False
        };
        let meta = TraceSpec::counters(FlagSet::default())
            .session(s)
            .meta(spec.clone());
        let ok = self.pattern(f, op, &meta).is_ok();
        // The tracer that was replaced dies (its late messages are dropped).
        if let Some(old) = self.meta.remove(&(s, f)) {
            old.kill();
        }
        if ok && on {
            self.meta.insert((s, f), mb);
        }
    }

    fn session_churn(&mut self) {
        if self.phase_sessions >= 2 {
            return;
        }
        self.phase_sessions += 1;
        if self.ephemeral.len() < 2 && self.rep.sessions_created < MAX_CREATED {
            if let Ok(s) = self.e.create_session("torture-ephemeral") {
                self.rep.sessions_created += 1;
                self.ephemeral.push(s);
            }
        } else if !self.ephemeral.is_empty() {
            let k = self.rng.below(self.ephemeral.len() as u64) as usize;
            let s = self.ephemeral.swap_remove(k);
            if self.e.destroy_session(s) == Ok(true) {
                self.rep.sessions_destroyed += 1;
            }
            self.paused.retain(|k, _| k.0 != s);
            let gone: Vec<_> = self.meta.keys().filter(|k| k.0 == s).copied().collect();
            for k in gone {
                if let Some(mb) = self.meta.remove(&k) {
                    mb.kill();
                }
            }
        }
    }

    /// `trace_info` of call_time and call_memory (and now and then call_count and all); checks
    /// the result's shape: non-negative counts and figures, each pid once.
    fn collect(&mut self, s: SessionId, f: FuncId) -> Check {
        let key = match self.rng.below(8) {
            0..=2 => InfoKey::CallTime,
            3..=5 => InfoKey::CallMemory,
            6 => InfoKey::CallCount,
            _ => InfoKey::All,
        };
        self.rep.collections += 1;
        let t = self.info(s, f, key);
        shape(&t).map_err(|m| {
            format!(
                "trace_info({s}, {}, {}): {m}: {t}",
                self.mfas[f],
                key.atom()
            )
        })
    }

    /// call_count, the sum of call_time counts and the sum of call_memory counts of `f` in `s`.
    fn counts(&mut self, s: SessionId, f: FuncId) -> Counts {
        self.rep.collections += 3;
        let cc = self.info(s, f, InfoKey::CallCount).to_string();
        let t = rows(&self.info(s, f, InfoKey::CallTime));
        let m = rows(&self.info(s, f, InfoKey::CallMemory));
        (
            cc,
            t.map(|r| r.iter().map(|x| x.1).sum()),
            m.map(|r| r.iter().map(|x| x.1).sum()),
        )
    }

    /// Only the kinds in `fl` were paused (the others may still be active).
    fn note_paused(&mut self, s: SessionId, f: FuncId, fl: FlagSet) {
        let c = self.counts(s, f);
        self.paused.insert((s, f), (fl, c));
    }

    /// A paused counter's calls do not change until the stager touches it again.
    fn check_paused(&mut self) -> Check {
        let Some((&(s, f), _)) = self
            .paused
            .iter()
            .nth(self.rng.below(self.paused.len().max(1) as u64) as usize)
        else {
            return Ok(());
        };
        let (fl, before) = self.paused[&(s, f)].clone();
        let now = self.counts(s, f);
        self.rep.paused_checks += 1;
        let changed = fl.call_count && now.0 != before.0
            || fl.call_time && now.1 != before.1
            || fl.call_memory && now.2 != before.2;
        if changed {
            return Err(format!(
                "paused counter of {} in session {s} changed: {before:?} then {now:?} (paused {fl:?})",
                self.mfas[f]
            ));
        }
        Ok(())
    }

    /// Every call the schedulers made to a stable function in `phase`'s window is counted
    /// exactly once in call_count, call_time and call_memory, in session 0 and in s1.
    fn check_conservation(&mut self, phase: u64) -> Check {
        let pubs: Vec<Published> = self
            .sh
            .published
            .iter()
            .map(|p| p.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .collect();
        for (i, p) in pubs.iter().enumerate() {
            if p.phase != phase {
                return Err(format!(
                    "scheduler {i} published phase {} for phase {phase}",
                    p.phase
                ));
            }
        }
        let stable = self.sh.masks[(phase & 1) as usize].load(Relaxed);
        for f in 0..self.cfg.functions {
            if stable & (1 << f) == 0 {
                continue;
            }
            let made: u64 = pubs.iter().map(|p| p.calls[f]).sum();
            for s in [0, self.s1] {
                let mfa = self.mfas[f].clone();
                let cc = self.info(s, f, InfoKey::CallCount);
                let t = rows(&self.info(s, f, InfoKey::CallTime));
                let m = rows(&self.info(s, f, InfoKey::CallMemory));
                self.rep.collections += 3;
                let want = Term::Tuple(vec![Term::Atom("call_count"), Term::Int(made as i64)]);
                let tc: Option<i64> = t.as_ref().map(|r| r.iter().map(|x| x.1).sum());
                let mc: Option<i64> = m.as_ref().map(|r| r.iter().map(|x| x.1).sum());
                if cc != want || tc != Some(made as i64) || mc != Some(made as i64) {
                    return Err(format!(
                        "conservation: {mfa} in session {s}, phase {phase}: {made} calls made, counted {cc}, call_time count {tc:?}, call_memory count {mc:?}"
                    ));
                }
                if s == 0 {
                    self.stable_time += t.iter().flatten().map(|x| x.2).sum::<i64>();
                    self.stable_words += m.iter().flatten().map(|x| x.2).sum::<i64>();
                }
            }
        }
        self.rep.conservation_checks += 1;
        Ok(())
    }
}

/// `{Key, [{Pid, Count, S, Us}]}` or `{Key, [{Pid, Count, Words}]}` as (pid, count, figure);
/// `None` for `false` and other shapes.
fn rows(t: &Term) -> Option<Vec<(u64, i64, i64)>> {
    let Term::Tuple(kv) = t else { return None };
    let Some(Term::List(v)) = kv.get(1) else {
        return None;
    };
    v.iter()
        .map(|r| match r {
            Term::Tuple(x) => match x.as_slice() {
                [Term::Pid(p), Term::Int(c), Term::Int(s), Term::Int(us)] => {
                    Some((*p, *c, s * 1_000_000 + us))
                }
                [Term::Pid(p), Term::Int(c), Term::Int(w)] => Some((*p, *c, *w)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Non-negative counts and figures, each pid at most once, in every list inside `t`.
fn shape(t: &Term) -> Check {
    match t {
        Term::Tuple(kv) if kv.len() == 2 => match &kv[1] {
            Term::List(items) if matches!(kv[0], Term::Atom("call_time" | "call_memory")) => {
                let r = rows(t).ok_or("a row of the wrong shape")?;
                let mut pids: Vec<u64> = r.iter().map(|x| x.0).collect();
                pids.sort_unstable();
                pids.dedup();
                if pids.len() != items.len() {
                    return Err("a pid appears twice".into());
                }
                if r.iter().any(|x| x.1 < 0 || x.2 < 0) {
                    return Err("a negative count or figure".into());
                }
                Ok(())
            }
            Term::List(items) => items.iter().try_for_each(shape),
            Term::Int(n) if *n < 0 => Err("a negative call count".into()),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}
