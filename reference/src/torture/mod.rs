//! The engine torture: the real engine on real OS threads, for millions of hits, under continuous
//! pattern churn (docs/torture.md). loom and shuttle explore small configurations exhaustively or
//! at random; this runs the same code as fast as the machine allows, for as long as it is told,
//! with every checked-build assertion armed.
//!
//! Threads: `schedulers` scheduler threads (each with its own processes, which call, tail-call,
//! return, raise, allocate, and are scheduled out and in, sometimes in the middle of a call), and
//! one stager thread (this module's caller) that runs phases:
//!
//! ```text
//! phase p:  window closed ─ set the stable functions' counters afresh in sessions 0 and S1
//!           window open   ─ schedulers may call the stable functions; the stager churns
//!                           (trace_pattern true/false/pause/restart, meta swaps, collections,
//!                           session create/destroy) on everything else, and collects the
//!                           stable functions' call_time/call_memory while they are hit
//!           window closed ─ every scheduler returns all its processes' frames and publishes
//!                           its call counts; the stager checks conservation and the at-rest
//!                           invariant
//! ```
//!
//! Conservation is decidable because a stable function's counting pattern (in sessions 0 and
//! S1) is set before the window opens and is not touched until every scheduler acknowledged the
//! close: every call a scheduler counted in the window must then be counted exactly once in
//! call_count, in the call_time rows' counts and in the call_memory rows' counts, in both
//! sessions, whatever the collections did meanwhile. Paused counters are checked too: a counter
//! the stager paused must report the same call count until the stager touches it again.
//!
//! Checked builds (debug assertions) add what the engine itself asserts: poisoned freed nodes,
//! counters, tables and tracer cells (`Liveness`), the owner-writes marks on pid tables, the
//! bounded wait loops. Any panic on any thread, and any failed check, ends the run with a
//! [`Violation`] that names the seed.

pub mod load;
mod stager;
mod worker;

use crate::mutant::Mutant;
use crate::WaitPlan;
use std::time::Duration;

/// Parameters of one torture run (all printed with the result).
#[derive(Clone, Debug)]
pub struct TortureConfig {
    /// Scheduler threads (2 to 8; more than the machine's cores oversubscribes it).
    pub schedulers: usize,
    /// Functions in the code area (`m:f0/0` ..).
    pub functions: usize,
    /// Functions whose counts are checked in each phase (chosen anew per phase).
    pub stable: usize,
    /// Processes per scheduler.
    pub procs: usize,
    /// Stop after this many hits (calls through the hit path, patched or not).
    pub hits: u64,
    /// Stop after this long even if `hits` was not reached.
    pub max_time: Duration,
    /// Hits per phase (each phase ends with a conservation check).
    pub phase_hits: u64,
    /// Do not stop on `hits` before this many phases ran: on an idle machine the schedulers can
    /// make every hit while the stager runs one `trace_pattern`, which would leave one phase and
    /// one conservation check. (`max_time` still stops the run.)
    pub min_phases: u64,
    /// The schedulers make at most about this many hits per churn operation of the stager and
    /// then wait for its next one, so that oversubscribed schedulers cannot starve the stager
    /// (0: no pacing; each scheduler may overshoot by the hits of 16 slices).
    pub pace: u64,
    /// Check the churn against what the run did (`TortureReport::shortfalls`): a baseline run
    /// that churned less is reported short (a failed row), like a run the time bound stopped
    /// before its hits.
    pub churn_minimums: bool,
    /// A test knob: the stager's churn operations do nothing (the pace still advances), so the
    /// run does not churn; with `churn_minimums` it must be reported short.
    pub idle_stager: bool,
    pub seed: u64,
    pub mutant: Option<Mutant>,
    /// Run ERTS's collection as it is (paused counters read in place, relaxed flip back: F1 and
    /// F2 of docs/collection.md) instead of the fixed variants.
    pub erts_collection: bool,
    /// The engine's wait plan (docs/fewer-waits.md). Under a batching plan half of the stager's
    /// `trace_pattern` operations are batches of two to four entries (`trace_pattern_batch`).
    pub wait_plan: WaitPlan,
    /// The functions on a module's version instead of the static area: module `m`'s version 1,
    /// never loaded, on an engine made `Engine::with_versions_only` (`NonBlocking`); the
    /// stager's trace_pattern, batch and trace_info are the module's
    /// (`Engine::trace_pattern_funcs_op_in`, `trace_pattern_batch_in`, `trace_info_module_in`),
    /// the schedulers' calls `Scheduler::call_version_proc` (docs/torture.md §1, "On a
    /// module's version").
    pub versions: bool,
}

impl TortureConfig {
    /// The defaults for `hits` hits on `schedulers` schedulers.
    pub fn new(schedulers: usize, hits: u64, seed: u64) -> TortureConfig {
        TortureConfig {
            schedulers,
            functions: 24,
            stable: 6,
            procs: 4,
            hits,
            max_time: Duration::from_secs(600),
            phase_hits: (hits / 40).max(20_000),
            min_phases: 8,
            pace: 256,
            churn_minimums: false,
            idle_stager: false,
            seed,
            mutant: None,
            erts_collection: false,
            wait_plan: WaitPlan::Erts,
            versions: false,
        }
    }

    /// Check the churn against what the run did (`TortureReport::shortfalls`).
    pub fn with_churn_minimums(mut self) -> TortureConfig {
        self.churn_minimums = true;
        self
    }

    /// The least number of churn operations the stager makes while the schedulers make `hits`
    /// hits over `phases` phases, when the run is paced. By construction, whatever the
    /// machine's load: the stager allows `pace` hits more than it has seen after each operation
    /// (and none while a window is closed), and a scheduler checks the allowance after every
    /// batch of at most `MAX_BATCH_HITS` hits, so with `B = MAX_BATCH_HITS * schedulers`:
    /// - between two operations the schedulers make at most `pace + B` hits;
    /// - an open window adds at most `pace + 2B` (the hits before its first and after its last
    ///   operation, and one batch per scheduler when it opens), and a closed window at most
    ///   `pace + 2B` (what was left of the allowance, and one batch per scheduler when it
    ///   closes); there are `phases` open windows and `phases + 1` closed ones.
    ///
    /// Hence `ops >= (hits - (2 phases + 1)(pace + 2B)) / (pace + B)`: a run below it was not
    /// paced, and a stager that the schedulers outran fails it. 0 without pacing.
    pub fn pacing_bound(&self, hits: u64, phases: u64) -> u64 {
        if self.pace == 0 {
            return 0;
        }
        let b = worker::MAX_BATCH_HITS.saturating_mul(self.schedulers as u64);
        let windows = phases.saturating_mul(2).saturating_add(1);
        let slack = windows.saturating_mul(self.pace.saturating_add(2 * b));
        hits.saturating_sub(slack) / self.pace.saturating_add(b)
    }

    /// Check the parameters; the error names the bad one.
    pub fn validate(&self) -> Result<(), String> {
        check_common(self.schedulers, self.mutant)?;
        if self.stable < 1 || self.stable + 2 > self.functions {
            return Err(format!(
                "stable must be at least 1 and leave two churn functions (functions {}, stable {})",
                self.functions, self.stable
            ));
        }
        if self.procs < 1 || self.procs > 64 {
            return Err(format!("procs must be 1..=64, got {}", self.procs));
        }
        if self.phase_hits == 0 {
            return Err("phase hits must be positive".into());
        }
        Ok(())
    }

    /// One line with every parameter (printed before and after the run).
    pub fn describe(&self) -> String {
        format!(
            "seed={:#x} schedulers={} functions={} stable={} procs={} hits={} phase-hits={} min-phases={} pace={} churn-minimums={}{} max-time={}s variant={} collection={} wait-plan={} placement={} checked={}",
            self.seed,
            self.schedulers,
            self.functions,
            self.stable,
            self.procs,
            self.hits,
            self.phase_hits,
            self.min_phases,
            self.pace,
            if self.churn_minimums { "on" } else { "off" },
            if self.idle_stager { " idle-stager" } else { "" },
            self.max_time.as_secs(),
            self.mutant.map_or("baseline", |m| m.name()),
            if self.erts_collection { "erts" } else { "fixed" },
            self.wait_plan.name(),
            if self.versions { "versions" } else { "static" },
            crate::sync::CHECKED
        )
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct TortureReport {
    pub hits: u64,
    pub phases: u64,
    pub trace_patterns: u64,
    pub collections: u64,
    pub meta_swaps: u64,
    pub sessions_created: u64,
    pub sessions_destroyed: u64,
    pub conservation_checks: u64,
    pub paused_checks: u64,
    /// Churn operations drawn while some counter was paused (only those can check one).
    pub paused_chances: u64,
    pub at_rest_checks: u64,
    pub raises: u64,
    pub schedule_outs: u64,
    /// Times a scheduler waited for the stager's next churn operation (pacing).
    pub scheduler_waits: u64,
    /// Churn operations the stager made in open windows.
    pub churn_ops: u64,
    /// The `trace_pattern` calls and collections of those operations (without the stable
    /// functions' set-up and conservation checks between windows).
    pub churn_trace_patterns: u64,
    pub churn_collections: u64,
    /// Of the `trace_pattern` calls, those made as batches (`trace_pattern_batch`, two to four
    /// entries; a batching wait plan only), and their entries.
    pub batches: u64,
    pub batch_entries: u64,
    /// Grace periods the run's waits made (`ThreadProgress::completed_waits`): how many the
    /// wait plan spent on its trace_pattern calls, batches, collections and session destroys.
    pub grace_periods: u64,
    pub seconds: f64,
    /// The run stopped at `max_time` before `hits` were reached.
    pub timed_out: bool,
    pub violation: Option<Violation>,
}

impl TortureReport {
    pub fn hits_per_second(&self) -> f64 {
        per_second(self.hits, self.seconds)
    }

    /// What a run without a violation fell short of: its hits (the time bound stopped it) or,
    /// with `churn_minimums`, the churn measured against what the run did. Empty when the run
    /// reached every target. The churn minimums do not depend on the machine's load:
    /// - churn operations: at least `cfg.pacing_bound(open_hits, phases)`, which the pacing
    ///   guarantees for the hits the run made (a run below it was not paced);
    /// - of those operations, a tenth at least called `trace_pattern` and a tenth collected
    ///   (the stager's mix draws 45 % and 35 %); and of the operations drawn while a counter
    ///   was paused (`paused_chances`), one in fifty checked a paused counter (the mix draws
    ///   12 % then). Whether a counter is paused at all depends on how the threads ran: a
    ///   50,000-hit run once made 186 operations with none paused, so the minimum counts
    ///   only the operations that could check one. The mix is drawn from the seed: at
    ///   the pacing bound of `make test`'s runs (about 830 operations at 8 schedulers) a count
    ///   below these is more than 10 standard deviations under its mean.
    pub fn shortfalls(&self, cfg: &TortureConfig) -> Vec<String> {
        let mut t = vec![("hits", self.hits, cfg.hits)];
        if cfg.churn_minimums {
            let ops = self.churn_ops;
            t.extend([
                (
                    "churn operations",
                    ops,
                    cfg.pacing_bound(self.hits, self.phases),
                ),
                ("trace_pattern", self.churn_trace_patterns, ops / 10),
                ("collections", self.churn_collections, ops / 10),
                (
                    "paused_checks",
                    self.paused_checks,
                    self.paused_chances / 50,
                ),
            ]);
            // Under a batching plan, a batch is drawn by about one operation in six (half of the
            // 35 % that call trace_pattern on a pattern's session).
            if cfg.wait_plan.batches() {
                t.push(("batches", self.batches, ops / 20));
            }
        }
        shortfalls(&t)
    }

    /// One line of figures.
    pub fn describe(&self) -> String {
        format!(
            "hits={} ({:.0}/s) phases={} churn_ops={} trace_pattern={} (churn {}) batches={} (entries {}) grace_periods={} collections={} (churn {}) meta_swaps={} sessions_created={} sessions_destroyed={} conservation_checks={} paused_checks={} (of {} chances) at_rest_checks={} raises={} schedule_outs={} scheduler_waits={} seconds={:.1}{}",
            self.hits,
            self.hits_per_second(),
            self.phases,
            self.churn_ops,
            self.trace_patterns,
            self.churn_trace_patterns,
            self.batches,
            self.batch_entries,
            self.grace_periods,
            self.collections,
            self.churn_collections,
            self.meta_swaps,
            self.sessions_created,
            self.sessions_destroyed,
            self.conservation_checks,
            self.paused_checks,
            self.paused_chances,
            self.at_rest_checks,
            self.raises,
            self.schedule_outs,
            self.scheduler_waits,
            self.seconds,
            if self.timed_out { " (time bound reached)" } else { "" }
        )
    }
}

/// A failed check or a panic on some thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// "scheduler 3", "stager".
    pub thread: String,
    pub message: String,
    pub seed: u64,
    pub phase: u64,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "violation on {} in phase {} (seed {:#x}): {}",
            self.thread, self.phase, self.seed, self.message
        )
    }
}

/// Run the torture. Never panics on a violation: it is returned in the report.
pub fn run(cfg: &TortureConfig) -> Result<TortureReport, String> {
    cfg.validate()?;
    let cfg = cfg.clone();
    let name = format!(
        "torture churn-s{} {}",
        cfg.schedulers,
        cfg.mutant.map_or("baseline", |m| m.name())
    );
    // The run's own time bound, then the watchdog's on top.
    let limit = cfg.max_time + crate::watchdog::bound();
    Ok(crate::watchdog::guard_for(&name, limit, move || {
        stager::run(&cfg)
    }))
}

/// The checks every torture's parameters share: 1 to 64 schedulers; a mutant only in a checked
/// build.
pub(crate) fn check_common(schedulers: usize, mutant: Option<Mutant>) -> Result<(), String> {
    if !(1..=64).contains(&schedulers) {
        return Err(format!("schedulers must be 1..=64, got {schedulers}"));
    }
    if mutant.is_some() && !crate::sync::CHECKED {
        return Err("mutants exist only in checked builds (debug assertions)".into());
    }
    Ok(())
}

/// `n` per second over `seconds` (0 for no time).
pub(crate) fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// "what got < want" for every (what, got, want) that fell short.
pub(crate) fn shortfalls(targets: &[(&str, u64, u64)]) -> Vec<String> {
    targets
        .iter()
        .filter(|(_, got, want)| got < want)
        .map(|(what, got, want)| format!("{what} {got} < {want}"))
        .collect()
}

/// splitmix64: a small deterministic generator (one per thread, seeded from the run's seed).
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        self.next() % n
    }
    /// True with probability `num/den`.
    pub(crate) fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

/// The first line of a panic payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic with a non-string payload".into())
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}
