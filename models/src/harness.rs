//! The runner shared by the loom and shuttle harnesses (`tests/*loom.rs`, `tests/*shuttle.rs`):
//! explore one model under a checker, time it, describe its bound, and turn the outcome into the
//! `observed` column of the results table (`results::Verdict`). Also the completeness check
//! of the kill matrices (`tests/*matrix.rs`).

use bpspec_reference::Mutant;

/// The `observed` column: a run expected to hold shows "VIOLATED" or "hold"; any other run (a
/// mutant, or an ERTS variant expected to be caught) shows "killed" or "survives".
pub fn observed(expected: &str, found: bool) -> &'static str {
    match (expected == "hold", found) {
        (true, true) => "VIOLATED",
        (true, false) => "hold",
        (false, true) => "killed",
        (false, false) => "survives",
    }
}

/// A model's scenario, named in the results table. The generic explorations of
/// [`loom_run::explore_named`] and [`shuttle_run::explore_scenario`] take one.
pub trait NamedScenario: Clone + Send + Sync + 'static {
    fn name(&self) -> &'static str;
}

macro_rules! named_scenarios {
    ($($t:ty),*) => {$(
        impl NamedScenario for $t {
            fn name(&self) -> &'static str {
                self.name
            }
        }
    )*};
}
impl<O: Clone + Send + Sync + 'static> NamedScenario for crate::Scenario<O> {
    fn name(&self) -> &'static str {
        self.name
    }
}

named_scenarios!(
    crate::collection::CScenario,
    crate::load::LScenario,
    crate::readers::RScenario,
    crate::sessions::SessionScenario
);

/// A variant every scenario of a model family runs under (a load protocol, a wait plan); its
/// rows name the scenario `name@variant`.
pub trait Variant: Copy + std::fmt::Debug + Send + Sync + 'static {
    fn name(self) -> &'static str;
}

impl Variant for bpspec_reference::LoadProtocol {
    fn name(self) -> &'static str {
        bpspec_reference::LoadProtocol::name(self)
    }
}

impl Variant for bpspec_reference::WaitPlan {
    fn name(self) -> &'static str {
        bpspec_reference::WaitPlan::name(self)
    }
}

/// A model run under a variant: the scenario under a variant and a mutant (or none).
pub type VariantRun<S, V> = fn(&S, V, Option<Mutant>);

/// Runs each of `scenarios` `times` times on real threads with every one of `runs` and no
/// mutant: the scenarios hold outside a checker too (`tests/*_matrix.rs`).
pub fn hold_on_real_threads<S>(scenarios: Vec<S>, times: usize, runs: &[ModelRun<S>]) {
    for scn in scenarios {
        for _ in 0..times {
            for run in runs {
                run(&scn, None);
            }
        }
    }
}

/// A model run: the scenario under a mutant (or none). `run::<Qsbr>` of each model is one.
pub type ModelRun<S> = fn(&S, Option<Mutant>);

/// A family's run with its functions at a placement (`crate::Placement`): the rows on a
/// module's version (docs/nonblocking-load.md §7, "The static area").
pub type PlacedRun<S> = fn(&S, Option<Mutant>, crate::Placement);

/// The results-table name of `scenario` on a module's version.
pub fn on_versions(scenario: &str) -> String {
    format!("{scenario}{}", crate::Placement::Versions.suffix())
}

/// The figures of a model's reference run (`reference`: the scenario's scripts one after the
/// other with no stager and no mutant, on an engine of its own), which the run's end compares
/// with its own (CT4 in `collection.rs`, RD3 in `readers.rs`). `key` names everything the
/// reference run depends on (family, scenario, wait plan, session, grace period), never the
/// mutant or the schedule: the run is sequential, on one thread, so it comes out the same in
/// every execution.
///
/// Under loom it runs once per `key` and OS thread, in the first execution that needs it, and
/// later executions reuse its figures: it happens after every model thread has been joined,
/// on objects of its own, so it adds no branch with more than one choice and no dependency
/// between threads (the execution counts before and after are equal, docs/running.md,
/// "Per-execution cost"), yet it was a second engine's atomics, cells and steps in every
/// execution. Under shuttle and std it runs in every execution: shuttle's PCT scheduler draws
/// its priority change points from the longest execution's step count (shuttle-schedulers
/// 0.1.1, src/pct.rs, `new_execution` and `next_task`), so dropping the reference run's steps
/// would change which schedules PCT tries.
pub fn reference_run<T: Clone + 'static>(
    key: (&'static str, &str, &'static str),
    run: impl FnOnce() -> T,
) -> T {
    #[cfg(loom)]
    {
        use std::cell::RefCell;
        type Key = (&'static str, String, &'static str);
        thread_local!(static DONE: RefCell<Vec<(Key, Box<dyn std::any::Any>)>> = const { RefCell::new(Vec::new()) });
        let found = DONE.with(|d| {
            d.borrow()
                .iter()
                .find(|(k, _)| k.0 == key.0 && k.1 == key.1 && k.2 == key.2)
                .map(|(_, v)| v.downcast_ref::<T>().expect("one type per key").clone())
        });
        if let Some(v) = found {
            return v;
        }
        let v = run();
        DONE.with(|d| {
            let mut d = d.borrow_mut();
            // Bounded: one entry per key; a test binary has a few hundred scenarios at most.
            assert!(d.len() < 1 << 16, "reference-run cache over 65,536 keys");
            d.push(((key.0, key.1.to_string(), key.2), Box::new(v.clone())));
        });
        v
    }
    #[cfg(not(loom))]
    {
        let _ = key;
        run()
    }
}

/// The scenario called `name` in `scenarios`; panics naming it if there is none.
pub fn scenario_named<S>(scenarios: Vec<S>, name: &str, of: impl Fn(&S) -> &str) -> S {
    scenarios
        .into_iter()
        .find(|s| of(s) == name)
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

/// Asserts that a kill matrix is complete: every mutant in `mutants` has at least one expected
/// killer `(checker, scenario)` in `expected(checker)` for some checker of `scenarios`, each such
/// scenario is among that checker's `scenarios`, and every mutant's name round-trips. `family`
/// names the matrix in the messages ("collection mutant ... has no ...").
pub fn assert_matrix_complete(
    family: &str,
    mutants: &[Mutant],
    scenarios: &[(&str, Vec<&str>)],
    expected: impl Fn(&str) -> Vec<(Mutant, &'static str)>,
) {
    for &m in mutants {
        let mut killers = 0;
        for (c, names) in scenarios {
            for (_, s) in expected(c).into_iter().filter(|(k, _)| *k == m) {
                killers += 1;
                assert!(
                    names.contains(&s),
                    "{c} scenario {s} for {m} does not exist"
                );
            }
        }
        assert!(
            killers > 0,
            "{family} mutant {m} has no checker expected to kill it"
        );
        assert_eq!(Mutant::from_name(m.name()), Some(m));
    }
}

/// The names of `scenarios`, for [`assert_matrix_complete`].
pub fn names<S>(scenarios: Vec<S>, name: impl Fn(&S) -> &'static str) -> Vec<&'static str> {
    scenarios.iter().map(name).collect()
}

/// Asserts that every `(mutant, scenario)` in `kills` is killed: `killed(m, scenario)` runs the
/// checker on it and says whether it found a counterexample. `family` and `checker` name the
/// matrix in the message ("session mutants loom should kill survived: ...").
pub fn assert_all_killed(
    family: &str,
    checker: &str,
    kills: Vec<(Mutant, &'static str)>,
    mut killed: impl FnMut(Mutant, &'static str) -> bool,
) {
    let survivors: Vec<String> = kills
        .into_iter()
        .filter(|&(m, name)| !killed(m, name))
        .map(|(m, name)| format!("{m} on {name}"))
        .collect();
    assert!(
        survivors.is_empty(),
        "{family} mutants {checker} should kill survived: {survivors:?}"
    );
}

/// [`assert_all_killed`] under each of `variants`: `kills(v)` lists the expected kills under
/// variant `v`, `killed(m, scenario, v)` runs one; a survivor is named with its variant.
pub fn assert_all_killed_under<V: Variant>(
    family: &str,
    checker: &str,
    variants: &[V],
    kills: impl Fn(V) -> Vec<(Mutant, &'static str)>,
    mut killed: impl FnMut(Mutant, &'static str, V) -> bool,
) {
    let mut survivors = Vec::new();
    for &v in variants {
        for (m, name) in kills(v) {
            if !killed(m, name, v) {
                survivors.push(format!("{m} on {name} under {v:?}"));
            }
        }
    }
    assert!(
        survivors.is_empty(),
        "{family} mutants {checker} should kill survived: {survivors:?}"
    );
}

/// One `#[test]` a scenario that must hold: `$explore(scenario)` returns the counterexample
/// (`Option<String>`), which fails the test naming `$checker` and the scenario.
#[macro_export]
macro_rules! baselines {
    ($checker:literal, $explore:expr; $($test:ident => $scn:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let cx: Option<String> = ($explore)($scn);
            assert!(cx.is_none(), "{}: {} violated a property: {}", $checker, $scn, cx.unwrap());
        }
    )*};
}

/// A `tests/*_loom.rs` model family, `bpspec_models::$module` (its `loom_scenarios`, `run` and
/// `expected_kills`): `family()`, its `loom_run::Family` under the QSBR grace period; the test
/// `$kill_matrix`: every mutant of loom's column of `$family`'s kill matrix produces a
/// counterexample on its scenario; and one test a scenario that must hold, at the bound
/// `LOOM_MAX_PREEMPTIONS` gives, or at most `$cap` (`at most $cap`).
#[macro_export]
macro_rules! loom_family {
    (
        $module:ident: $family:literal, $kill_matrix:ident;
        $($test:ident => $scn:literal $(at most $cap:literal)?),* $(,)?
    ) => {
        /// The family every test here explores.
        fn family() -> $crate::harness::loom_run::Family<impl $crate::harness::NamedScenario> {
            $crate::harness::loom_run::Family {
                scenarios: $crate::$module::loom_scenarios,
                run: $crate::$module::run::<::bpspec_reference::Qsbr>,
            }
        }

        /// Every mutant in loom's column of the family's kill matrix produces a counterexample.
        #[test]
        fn $kill_matrix() {
            family().assert_kills($family, $crate::$module::expected_kills("loom"));
        }

        $(
            #[test]
            fn $test() {
                let cap: usize = [$($cap,)? usize::MAX][0];
                let cx = family().explore_capped($scn, None, "hold", cap);
                assert!(cx.is_none(), "loom: {} violated a property: {}", $scn, cx.unwrap());
            }
        )*
    };
}

/// loom: every interleaving and weak-memory outcome up to the preemption bound.
#[cfg(loom)]
pub mod loom_run {
    use crate::results::catch;
    use bpspec_reference::Mutant;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::Arc;
    use std::time::Instant;

    /// A builder with the bound from `LOOM_MAX_PREEMPTIONS`, or 2 if unset.
    pub fn builder() -> loom::model::Builder {
        let mut b = loom::model::Builder::new();
        if b.preemption_bound.is_none() {
            b.preemption_bound = Some(2);
        }
        b
    }

    /// What one exploration found.
    pub struct Outcome {
        /// First line of the counterexample's panic message.
        pub cx: Option<String>,
        pub executions: usize,
        pub seconds: f64,
        /// "preemption=.. branches=.." (without the execution count).
        pub bound: String,
    }

    /// Record one loom exploration's verdict in the results table.
    pub fn record_outcome(
        progress: &str,
        scenario: &str,
        variant: &str,
        expected: &str,
        o: &Outcome,
    ) {
        crate::results::record(&crate::results::Verdict {
            checker: "loom",
            progress,
            scenario,
            variant,
            bound: format!("{} executions={}", o.bound, o.executions),
            expected,
            observed: crate::harness::observed(expected, o.cx.is_some()),
            seconds: o.seconds,
            detail: o.cx.clone().unwrap_or_default(),
        });
    }

    /// The preemption bound of every loom run expected to kill its mutant, in `make test` and
    /// `make check` alike (raised to a kill's [`crate::KILL_BOUND_FLOOR`] where it has one): a
    /// kill needs one counterexample, and `make test` already finds each at this bound (loom's
    /// exploration is deterministic, so the same run in `make check` finds the same one). At
    /// `make check`'s bound 3 the same kills took up to 9 times the executions (`remove-2sched`
    /// `uninstall-before-commit`: 510,488 executions, 90 s, against 56,840 at bound 2). Baselines
    /// and the runs expected to survive keep `LOOM_MAX_PREEMPTIONS`: there the larger bound is
    /// the evidence.
    pub const KILL_BOUND: usize = 2;

    /// `b` for a run of `mutant` on `scenario` expected to come to `expected`: capped at
    /// [`KILL_BOUND`] if `expected` is "killed", then raised to the kill's floor, if any.
    pub fn for_expected(
        mut b: loom::model::Builder,
        mutant: Option<Mutant>,
        scenario: &str,
        expected: &str,
    ) -> loom::model::Builder {
        if expected == "killed" {
            b.preemption_bound = Some(b.preemption_bound.map_or(KILL_BOUND, |p| p.min(KILL_BOUND)));
        }
        if let Some(f) = crate::kill_bound_floor(mutant, scenario) {
            b.preemption_bound = Some(b.preemption_bound.map_or(f, |p| p.max(f)));
        }
        b
    }

    /// A builder at the bound of [`builder`] capped at `cap`.
    pub fn capped(cap: usize) -> loom::model::Builder {
        let mut b = builder();
        b.preemption_bound = b.preemption_bound.map(|p| p.min(cap));
        b
    }

    /// [`capped`]`(cap)` for `mutant` on `scenario`, raised to its kill's floor
    /// ([`crate::KILL_BOUND_FLOOR`]) when that is higher.
    fn capped_for(cap: usize, mutant: Option<Mutant>, scenario: &str) -> loom::model::Builder {
        let mut b = capped(cap);
        if let Some(f) = crate::kill_bound_floor(mutant, scenario) {
            b.preemption_bound = Some(b.preemption_bound.map_or(f, |p| p.max(f)));
        }
        b
    }

    /// Explore `model` at the bound of [`capped`]`(cap)`; record the verdict as (qsbr,
    /// `scenario`, `variant`); assert that it ran; return the counterexample.
    pub fn explore_variant(
        scenario: &str,
        variant: &str,
        expected: &str,
        cap: usize,
        model: impl Fn() + Sync + Send + 'static,
    ) -> Option<String> {
        let b = for_expected(capped(cap), None, scenario, expected);
        let o = explore(&format!("{scenario} {variant}"), &b, model);
        record_outcome("qsbr", scenario, variant, expected, &o);
        assert!(o.executions > 0, "loom ran no execution of {scenario}");
        o.cx
    }

    /// [`explore_variant`] of `model` built for `mutant`, the variant named by the mutant (or
    /// "baseline"). The shared body of the `tests/*_loom.rs` explorations.
    pub fn explore_mutant(
        scenario: &str,
        mutant: Option<Mutant>,
        expected: &str,
        cap: usize,
        model: impl Fn() + Sync + Send + 'static,
    ) -> Option<String> {
        let variant = mutant.map_or("baseline", |m| m.name());
        let b = for_expected(
            capped_for(cap, mutant, scenario),
            mutant,
            scenario,
            expected,
        );
        let o = explore(&format!("{scenario} {variant}"), &b, model);
        record_outcome("qsbr", scenario, variant, expected, &o);
        assert!(o.executions > 0, "loom ran no execution of {scenario}");
        o.cx
    }

    /// The counterexample of `o`, asserting that the exploration ran and that loom's branch
    /// limit did not cut it short (its panic would read as a kill; `what` names the run).
    pub fn conclusive(o: Outcome, what: &str) -> Option<String> {
        assert!(o.executions > 0, "loom ran no execution of {what}");
        if let Some(cx) = &o.cx {
            assert!(
                !cx.starts_with("Model exceeded maximum number of branches"),
                "{what}: inconclusive, loom's branch limit: {cx}"
            );
        }
        o.cx
    }

    /// One model family's loom runs: its scenarios and how one is run (`tests/*_loom.rs`).
    pub struct Family<S> {
        pub scenarios: fn() -> Vec<S>,
        pub run: crate::harness::ModelRun<S>,
    }

    impl<S: crate::harness::NamedScenario> Family<S> {
        /// [`explore_named`] on the scenario called `name`, at a preemption bound of at most
        /// `cap`: record the verdict, return the counterexample.
        pub fn explore_capped(
            &self,
            name: &str,
            mutant: Option<Mutant>,
            expected: &str,
            cap: usize,
        ) -> Option<String> {
            explore_named((self.scenarios)(), name, mutant, expected, cap, self.run)
        }

        /// Every mutant of `kills` (loom's column of `family`'s kill matrix) produces a
        /// counterexample on its scenario.
        pub fn assert_kills(&self, family: &str, kills: Vec<(Mutant, &'static str)>) {
            crate::harness::assert_all_killed(family, "loom", kills, |m, name| {
                self.explore(name, Some(m), "killed").is_some()
            });
        }

        /// As [`Family::explore_capped`], at the bound `LOOM_MAX_PREEMPTIONS` gives.
        pub fn explore(
            &self,
            name: &str,
            mutant: Option<Mutant>,
            expected: &str,
        ) -> Option<String> {
            self.explore_capped(name, mutant, expected, usize::MAX)
        }
    }

    /// [`explore_mutant`] on the scenario called `name` in `scenarios`, run by `run`.
    pub fn explore_named<S: crate::harness::NamedScenario>(
        scenarios: Vec<S>,
        name: &str,
        mutant: Option<Mutant>,
        expected: &str,
        cap: usize,
        run: crate::harness::ModelRun<S>,
    ) -> Option<String> {
        let scn = crate::harness::scenario_named(scenarios, name, |s| s.name());
        explore_mutant(name, mutant, expected, cap, move || run(&scn, mutant))
    }

    /// [`explore_mutant`] on the scenario called `name` of `scenarios` on a module's version
    /// (`run` with `crate::Placement::Versions`), its row named `<name>@versions`, at a
    /// preemption bound of at most `cap`.
    pub fn explore_on_versions<S: crate::harness::NamedScenario>(
        scenarios: Vec<S>,
        name: &str,
        mutant: Option<Mutant>,
        expected: &str,
        cap: usize,
        run: crate::harness::PlacedRun<S>,
    ) -> Option<String> {
        let scn = crate::harness::scenario_named(scenarios, name, |s| s.name());
        let row = crate::harness::on_versions(name);
        explore_mutant(&row, mutant, expected, cap, move || {
            run(&scn, mutant, crate::Placement::Versions)
        })
    }

    /// Every scenario of `scenarios` holds on a module's version ([`explore_on_versions`]),
    /// at most at bound 2 for those named in `capped`; fails naming each violation.
    pub fn assert_hold_on_versions<S: crate::harness::NamedScenario>(
        scenarios: fn() -> Vec<S>,
        capped: &[&str],
        run: crate::harness::PlacedRun<S>,
    ) {
        let failures: Vec<String> = scenarios()
            .iter()
            .filter_map(|s| {
                let cap = if capped.contains(&s.name()) {
                    2
                } else {
                    usize::MAX
                };
                explore_on_versions(scenarios(), s.name(), None, "hold", cap, run)
                    .map(|cx| format!("{}: {cx}", s.name()))
            })
            .collect();
        assert!(failures.is_empty(), "loom: on versions: {failures:?}");
    }

    /// The builder of the epoch grace period's rows: crossbeam-epoch's own atomics make its
    /// state space far larger, so it runs at the bound in `BPSPEC_EPOCH_LOOM_BOUND` (`make
    /// check`: 2), else at preemption bound 1, and never above `LOOM_MAX_PREEMPTIONS` (recorded
    /// in the table).
    pub fn epoch_builder() -> loom::model::Builder {
        let mut b = builder();
        let cap = std::env::var("BPSPEC_EPOCH_LOOM_BOUND")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        b.preemption_bound = Some(b.preemption_bound.unwrap_or(cap).min(cap));
        b.max_branches = b.max_branches.max(20_000);
        b
    }

    /// A copy of `b` (loom's `Builder` is not `Clone`), for the watchdog's thread.
    fn copy_builder(b: &loom::model::Builder) -> loom::model::Builder {
        let mut c = loom::model::Builder::new();
        c.max_threads = b.max_threads;
        c.max_branches = b.max_branches;
        c.max_permutations = b.max_permutations;
        c.max_duration = b.max_duration;
        c.preemption_bound = b.preemption_bound;
        c.checkpoint_file = b.checkpoint_file.clone();
        c.checkpoint_interval = b.checkpoint_interval;
        c.expect_explicit_explore = b.expect_explicit_explore;
        c.location = b.location;
        c.log = b.log;
        c
    }

    /// Explore `model` with `b`, counting executions, under the watchdog (`name` names the run
    /// if it hangs).
    pub fn explore(
        name: &str,
        b: &loom::model::Builder,
        model: impl Fn() + Sync + Send + 'static,
    ) -> Outcome {
        let execs = Arc::new(AtomicUsize::new(0));
        let execs2 = execs.clone();
        let start = Instant::now();
        let bound = format!(
            "preemption={} branches={}",
            b.preemption_bound.map_or("none".into(), |p| p.to_string()),
            b.max_branches
        );
        // loom has no progress callback: the closure counts executions, a reporter reads it.
        let progress =
            crate::results::Progress::start("loom", "executions", bound.clone(), execs.clone());
        // The watchdog (bpspec_reference::watchdog) names the run if it hangs; outside `catch`,
        // so that a hang is a failed test, never a counterexample.
        let b = copy_builder(b);
        let cx = bpspec_reference::watchdog::guard(&format!("loom {name} ({bound})"), move || {
            catch(|| {
                b.check(move || {
                    execs2.fetch_add(1, Relaxed);
                    model();
                })
            })
        });
        drop(progress);
        // On a kill, the count is the execution that found the counterexample.
        Outcome {
            cx,
            executions: execs.load(Relaxed),
            seconds: start.elapsed().as_secs_f64(),
            bound,
        }
    }
}

/// shuttle: randomized (random or PCT) schedules from a fixed seed.
#[cfg(shuttle)]
pub mod shuttle_run {
    use crate::harness::{ModelRun, NamedScenario, Variant, VariantRun};
    use crate::results::catch;
    use bpspec_reference::Mutant;
    use shuttle::scheduler::{PctScheduler, RandomScheduler, Schedule, Scheduler, Task, TaskId};
    use shuttle::{Config, Runner};
    use std::collections::HashSet;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    /// Fixed seed: a failure reproduces from (seed, scheduler, shuttle version, commit).
    pub const SEED: u64 = 0x6270_7370_6563; // "bpspec"
    pub const PCT_DEPTH: usize = 3;

    /// shuttle's configuration for every run: its defaults, but a failed execution stops at once.
    ///
    /// By default shuttle-engine 0.1.7 keeps scheduling the other tasks of an execution whose task
    /// panicked until that task has unwound its stack (`UngracefulShutdownConfig`, config.rs; the
    /// step loop of `Execution::run_to_completion`). Under a mutant those tasks run on the state
    /// the failure left: a loader unwinding out of a release frees an object a scheduler still
    /// charges, or a second task panics while the first unwinds on the same OS thread, and the
    /// process dies (SIGSEGV, or abort) instead of reporting the kill. With
    /// `immediately_return_on_panic` the execution ends at the panicking task's first scheduling
    /// point while it unwinds. Nothing before the failure changes: the same schedules, the same
    /// first killing iteration and counterexample.
    pub fn config() -> Config {
        let mut c = Config::new();
        c.ungraceful_shutdown_config.immediately_return_on_panic = true;
        c
    }

    /// What a run's iterations explored: how many distinct schedules they ran, and the last
    /// iteration that ran one not run before ([`Distinct`]).
    #[derive(Debug, Default)]
    pub struct Explored {
        seen: HashSet<u64>,
        /// Iterations whose schedule was counted (each one that ran to its end).
        pub iterations: usize,
        /// The last of those whose schedule was new (1-based; 0 before any).
        pub last_new: usize,
        /// The digest of the counted iterations' digests, in order: equal for two runs of the
        /// same scheduler and seed exactly when their iterations made the same decisions (up to
        /// a 64-bit collision).
        pub run: u64,
    }

    impl Explored {
        /// Distinct schedules among the counted iterations.
        pub fn distinct(&self) -> usize {
            self.seen.len()
        }

        /// The iteration that was running, its decisions' digest `digest`, ran to its end:
        /// count its schedule.
        fn close(&mut self, digest: u64) {
            self.iterations += 1;
            self.run = (self.run ^ digest).wrapping_mul(0x0100_0000_01b3);
            if self.seen.insert(digest) {
                self.last_new = self.iterations;
            }
        }
    }

    /// The digest of an iteration's decisions so far, `digest`, with the decision `word`
    /// appended: the word added to the digest, then SplitMix64's finalizer, a bijection of the
    /// 64-bit words in which every input bit reaches every output bit (64 bits: among 50,000
    /// schedules the chance of any two digests colliding is about 1e-10). Two multiplications
    /// a decision, where FNV-1a over the word's eight bytes took eight dependent ones: the
    /// digest runs at every scheduling decision of every iteration.
    #[inline]
    fn mix(digest: u64, word: u64) -> u64 {
        let mut z = digest
            .wrapping_add(word)
            .wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The digest of an iteration that made no decision yet (FNV-1a's offset basis, any
    /// constant would do).
    const DIGEST_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

    /// Run `model` for `n` iterations under PCT (`pct`) or the random scheduler from [`SEED`],
    /// recording no row, under the watchdog (`name` names the run if it hangs), and return what
    /// its iterations explored ([`Explored`]). Two models with equal [`Explored::run`] made the
    /// same decisions in every iteration. Panics if an iteration fails.
    pub fn explored(
        name: &str,
        pct: bool,
        n: usize,
        model: impl Fn() + Send + Sync + 'static,
    ) -> Explored {
        let explored = Arc::new(Mutex::new(Explored::default()));
        let e = explored.clone();
        bpspec_reference::watchdog::guard(&format!("shuttle {name} (explored)"), move || {
            run_recorded(pct, n, SEED, e, model)
        });
        let mut g = explored.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *g)
    }

    /// Run `model` for `n` iterations under PCT (`pct`) or the random scheduler from `seed`,
    /// its schedules recorded in `explored` ([`Distinct`]).
    fn run_recorded(
        pct: bool,
        n: usize,
        seed: u64,
        explored: Arc<Mutex<Explored>>,
        model: impl Fn() + Send + Sync + 'static,
    ) {
        if pct {
            let s = PctScheduler::new_from_seed(seed, PCT_DEPTH, n);
            Runner::new(Distinct::new(s, explored), config()).run(model);
        } else {
            let s = RandomScheduler::new_from_seed(seed, n);
            Runner::new(Distinct::new(s, explored), config()).run(model);
        }
    }

    /// A shuttle scheduler that hands every decision to `inner` unchanged and records the
    /// sequence of them: the task chosen at each scheduling point and each random number handed
    /// out. The models are deterministic given those decisions (their only nondeterminism is
    /// shuttle's), so two iterations with the same sequence ran the same execution, and
    /// [`Explored::distinct`] counts the executions a run explored. An iteration that fails
    /// ends the run before the next `new_execution`, so it is not counted.
    pub struct Distinct<S> {
        inner: S,
        explored: Arc<Mutex<Explored>>,
        /// The digest of the running iteration's decisions so far, `None` between iterations.
        /// Kept here, not in `explored`: a decision is the scheduler's hottest path, and the
        /// shared record is locked once per iteration, in `new_execution`.
        digest: Option<u64>,
    }

    impl<S: Scheduler> Distinct<S> {
        /// `inner`, its run's schedules recorded in `explored`.
        pub fn new(inner: S, explored: Arc<Mutex<Explored>>) -> Self {
            Distinct {
                inner,
                explored,
                digest: None,
            }
        }

        /// Append `word` to the running iteration's decisions.
        fn record(&mut self, word: u64) {
            // A decision outside an iteration (none is made: shuttle asks for the next
            // execution before its first decision) would be no schedule's.
            debug_assert!(self.digest.is_some(), "a decision outside an iteration");
            if let Some(d) = self.digest.as_mut() {
                *d = mix(*d, word);
            }
        }
    }

    impl<S: Scheduler> Scheduler for Distinct<S> {
        fn new_execution(&mut self) -> Option<Schedule> {
            let mut e = self.explored.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(d) = self.digest.take() {
                e.close(d);
            }
            let next = self.inner.new_execution();
            if next.is_some() {
                self.digest = Some(DIGEST_BASIS);
            }
            next
        }

        fn next_task(
            &mut self,
            runnable: &[&Task],
            current: Option<TaskId>,
            is_yielding: bool,
        ) -> Option<TaskId> {
            let t = self.inner.next_task(runnable, current, is_yielding);
            // `None` (stop exploring this schedule) is a word of its own.
            self.record(t.map_or(u64::MAX, |t| usize::from(t) as u64));
            t
        }

        fn next_u64(&mut self) -> u64 {
            let v = self.inner.next_u64();
            self.record(u64::MAX - 1);
            self.record(v);
            v
        }
    }

    /// The iterations of a row on a module's current version (`Placement::Versions`), baseline
    /// or kill: [`iters`], but no more than 2,000, `make test`'s count, in `make check` too.
    /// `make check` runs the static area's at 50,000; an iteration costs about as much on
    /// either placement, so this is make check's budget, not the placement's cost: at 10,000
    /// the six families' rows on versions took 109 CPU seconds, at 5,000 (their kill rows at
    /// 50,000) 111 row-seconds of `make check`'s shuttle part, which then took 31 min 11 s
    /// (docs/nonblocking-load.md §7, "The static area").
    pub fn versions_iters() -> usize {
        iters().min(2_000)
    }

    /// One row of `scn` on a module's version (`run` with `crate::Placement::Versions`), its
    /// row named `<scenario>@versions`, under `mutant`, PCT or random, at [`versions_iters`];
    /// the counterexample, if any.
    pub fn explore_on_versions<S: crate::harness::NamedScenario>(
        scn: &S,
        mutant: Option<Mutant>,
        pct: bool,
        expected: &str,
        run: crate::harness::PlacedRun<S>,
    ) -> Option<String> {
        let row = crate::harness::on_versions(scn.name());
        let variant = mutant.map_or("baseline", |m| m.name());
        let s = scn.clone();
        let model = move || run(&s, mutant, crate::Placement::Versions);
        explore_row(
            "qsbr",
            &row,
            variant,
            expected,
            pct,
            versions_iters(),
            model,
        )
    }

    /// Every scenario of `scenarios` holds on a module's version under PCT and random
    /// ([`explore_on_versions`]); fails naming each violation.
    pub fn assert_baselines_on_versions<S: crate::harness::NamedScenario>(
        scenarios: Vec<S>,
        run: crate::harness::PlacedRun<S>,
    ) {
        let mut failures = Vec::new();
        for scn in &scenarios {
            for pct in [false, true] {
                if let Some(c) = explore_on_versions(scn, None, pct, "hold", run) {
                    failures.push(format!("{}@versions (pct={pct}): {c}", scn.name()));
                }
            }
        }
        assert!(failures.is_empty(), "shuttle: on versions: {failures:?}");
    }

    /// Iterations from `BPSPEC_SHUTTLE_ITERS` (CI 2,000, `make check` 50,000), else 1,000.
    /// A PCT row runs at most [`pct_cap`] of them ([`budget`]).
    pub fn iters() -> usize {
        std::env::var("BPSPEC_SHUTTLE_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1000)
    }

    /// The most iterations a PCT row runs, from `BPSPEC_SHUTTLE_PCT_ITERS` (`make check`
    /// 20,000); unset, no cap. A cap that is not a number is refused by name (a panic in the
    /// row that reads it), never ignored.
    ///
    /// Why `make check` caps PCT and not random (docs/running.md, "The PCT budget"): PCT's
    /// iterations are a prefix of a longer run's (`PctScheduler` reads its iteration count
    /// only to stop), so a capped row is exactly the first `cap` iterations of the uncapped
    /// one. In `make check` at 50,000, every PCT kill came by iteration 3,220 and every
    /// claimed one by 789, while random's accepted kills came as late as 28,092; and PCT
    /// repeats schedules (a holding row at 50,000 ran 27,022 distinct ones in the longest
    /// row, random 50,000 in each).
    pub fn pct_cap() -> Option<usize> {
        let v = std::env::var("BPSPEC_SHUTTLE_PCT_ITERS").ok()?;
        match v.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => panic!("BPSPEC_SHUTTLE_PCT_ITERS={v:?}: not a positive number of iterations"),
        }
    }

    /// The iterations a row asked to run `n` runs: `n`, or under PCT (`pct`) at most `cap`.
    pub fn budget(pct: bool, n: usize, cap: Option<usize>) -> usize {
        match cap {
            Some(c) if pct => n.min(c),
            _ => n,
        }
    }

    /// The fewest iterations a claimed kill (a row expected "killed") runs before it is
    /// called a survivor, whatever the row's budget.
    ///
    /// A kill row stops at its first failing iteration, so in a run where every claim is
    /// killed the floor costs nothing and changes no row (a shuttle run is a prefix of a
    /// longer one from the same seed: the same first killing iteration). What it buys is a
    /// claim that does not hang on the seed: at `make test`'s 2,000 iterations, seven claim
    /// rows survived under at least one of the seeds 11 to 14 (twelve of the 289 claims'
    /// 1,156 runs; `SHUTTLE_RANDOM_SEED`, every kill test of bpspec-models), and two epoch
    /// wait-plan claims survived under three of the seeds 1 to 8 each, while the fixed seed
    /// killed every one. With a floor of 20,000 every claim row was killed under those seeds
    /// (11 to 14, every kill test; 1 to 8, the epoch wait-plan kills), the latest at
    /// iteration 11,469; 50,000 keeps a margin of four over that.
    /// docs/mutants.md, "Claims and the seed".
    pub const CLAIM_FLOOR: usize = 50_000;

    /// The iterations a row expected `expected` runs when asked for `n`: [`budget`], and for
    /// a claimed kill at least [`CLAIM_FLOOR`].
    pub fn row_budget(expected: &str, pct: bool, n: usize, cap: Option<usize>) -> usize {
        let n = budget(pct, n, cap);
        if expected == "killed" {
            n.max(CLAIM_FLOOR)
        } else {
            n
        }
    }

    /// Record one shuttle run's verdict in the results table (`bound` and `seconds` as
    /// [`explore`] returns them).
    pub fn record_outcome(
        progress: &str,
        scenario: &str,
        variant: &str,
        expected: &str,
        bound: String,
        seconds: f64,
        cx: &Option<String>,
    ) {
        crate::results::record(&crate::results::Verdict {
            checker: "shuttle",
            progress,
            scenario,
            variant,
            bound,
            expected,
            observed: crate::harness::observed(expected, cx.is_some()),
            seconds,
            detail: cx.clone().unwrap_or_default(),
        });
    }

    /// Run `model` for `n` iterations ([`row_budget`]: under PCT at most [`pct_cap`], a
    /// claimed kill at least [`CLAIM_FLOOR`]) under PCT (`pct`) or the random scheduler;
    /// record the verdict as (`progress`, `scenario`, `variant`); return the counterexample.
    pub fn explore_row(
        progress: &str,
        scenario: &str,
        variant: &str,
        expected: &str,
        pct: bool,
        n: usize,
        model: impl Fn() + Send + Sync + 'static,
    ) -> Option<String> {
        let n = row_budget(expected, pct, n, pct_cap());
        let (cx, seconds, bound) =
            run_exactly(&format!("{scenario} {variant}"), pct, n, SEED, model);
        record_outcome(progress, scenario, variant, expected, bound, seconds, &cx);
        cx
    }

    /// [`explore_row`] of `run` on `scn` under `mutant` at [`iters`] iterations, its row named
    /// (`progress`, the scenario's name, `variant`).
    pub fn explore_run<S: NamedScenario>(
        progress: &str,
        scn: &S,
        variant: &str,
        mutant: Option<Mutant>,
        pct: bool,
        expected: &str,
        run: ModelRun<S>,
    ) -> Option<String> {
        let scn2 = scn.clone();
        let model = move || run(&scn2, mutant);
        explore_row(progress, scn.name(), variant, expected, pct, iters(), model)
    }

    /// Run `model` (built for `mutant`) for `n` iterations under PCT (`pct`) or the random
    /// scheduler; record the verdict as (qsbr, `scenario`, the mutant's name or "baseline");
    /// panic if a baseline (`mutant` None) is violated; say whether a counterexample was found.
    /// The shared body of the `tests/*_shuttle.rs` explorations.
    pub fn explore_mutant(
        scenario: &str,
        mutant: Option<Mutant>,
        pct: bool,
        expected: &str,
        n: usize,
        model: impl Fn() + Send + Sync + 'static,
    ) -> bool {
        let variant = mutant.map_or("baseline", |m| m.name());
        let cx = explore_row("qsbr", scenario, variant, expected, pct, n, model);
        if let (None, Some(c)) = (mutant, &cx) {
            panic!("shuttle: {scenario} (pct={pct}) violated a property: {c}");
        }
        cx.is_some()
    }

    /// [`explore_mutant`] on `scn` under variant `v`, run by `run`, at [`iters`] iterations;
    /// the row's scenario is `name@variant`.
    pub fn explore_under<S: NamedScenario, V: Variant>(
        scn: &S,
        v: V,
        mutant: Option<Mutant>,
        pct: bool,
        expected: &str,
        run: VariantRun<S, V>,
    ) -> bool {
        let (scn2, label) = (scn.clone(), format!("{}@{}", scn.name(), v.name()));
        explore_mutant(&label, mutant, pct, expected, iters(), move || {
            run(&scn2, v, mutant)
        })
    }

    /// Every scenario holds under every variant and both schedulers (random, then PCT).
    pub fn assert_baselines_under<S: NamedScenario, V: Variant>(
        variants: &[V],
        scenarios: fn() -> Vec<S>,
        run: VariantRun<S, V>,
    ) {
        for &v in variants {
            for scn in scenarios() {
                for pct in [false, true] {
                    explore_under(&scn, v, None, pct, "hold", run);
                }
            }
        }
    }

    /// One row of shuttle's column of a kill matrix: a mutant, the scenario it runs on, and
    /// whether shuttle is expected to kill it there.
    pub type KillRow = (Mutant, &'static str, bool);

    /// The rows for `mutants`: each on the scenario `kills` names for it (expected killed), or,
    /// absent from `kills`, on `elsewhere(m)` (expected to survive: an ordering bug shuttle's
    /// sequentially consistent atomics cannot show).
    pub fn kill_rows(
        mutants: &[Mutant],
        kills: &[(Mutant, &'static str)],
        elsewhere: impl Fn(Mutant) -> &'static str,
    ) -> Vec<KillRow> {
        mutants
            .iter()
            .map(|&m| match kills.iter().find(|(k, _)| *k == m) {
                Some(&(_, s)) => (m, s, true),
                None => (m, elsewhere(m), false),
            })
            .collect()
    }

    /// Runs every row under PCT, then random: `explore(row, pct, expected)` runs and records
    /// it, expected "killed" on a killer row unless `may_miss(m, pct)` (then "survives", a kill
    /// accepted), "survives" on the others, and says whether the run counts as a kill. Asserts
    /// that a scheduler killed every killer row.
    pub fn assert_kill_column(
        family: &str,
        rows: Vec<KillRow>,
        may_miss: impl Fn(Mutant, bool) -> bool,
        mut explore: impl FnMut(KillRow, bool, &'static str) -> bool,
    ) {
        let mut survivors = Vec::new();
        for row @ (m, name, killer) in rows {
            let mut killed = false;
            for pct in [true, false] {
                let exp = if killer && !may_miss(m, pct) {
                    "killed"
                } else {
                    "survives"
                };
                killed |= explore(row, pct, exp);
            }
            if killer && !killed {
                survivors.push(format!("{m} on {name}"));
            }
        }
        assert!(
            survivors.is_empty(),
            "{family} mutants shuttle should kill survived: {survivors:?}"
        );
    }

    /// [`explore_mutant`] on `scn`, run by `run`, at [`iters`] iterations.
    pub fn explore_scenario<S: crate::harness::NamedScenario>(
        scn: &S,
        mutant: Option<Mutant>,
        pct: bool,
        expected: &str,
        run: crate::harness::ModelRun<S>,
    ) -> bool {
        let scn2 = scn.clone();
        explore_mutant(scn.name(), mutant, pct, expected, iters(), move || {
            run(&scn2, mutant)
        })
    }

    /// Every scenario holds under both schedulers (random, then PCT); a violation panics.
    pub fn assert_baselines<S: crate::harness::NamedScenario>(
        scenarios: Vec<S>,
        run: crate::harness::ModelRun<S>,
    ) {
        for scn in scenarios {
            for pct in [false, true] {
                explore_scenario(&scn, None, pct, "hold", run);
            }
        }
    }

    /// Run `model` for `n` iterations (under PCT at most [`pct_cap`], [`budget`]) under PCT
    /// (`pct`) or the random scheduler, under the watchdog (`name` names the run if it hangs);
    /// returns (counterexample, seconds, bound text).
    pub fn explore(
        name: &str,
        pct: bool,
        n: usize,
        model: impl Fn() + Send + Sync + 'static,
    ) -> (Option<String>, f64, String) {
        explore_seeded(name, pct, n, SEED, model)
    }

    /// [`explore`] from `seed` instead of [`SEED`].
    pub fn explore_seeded(
        name: &str,
        pct: bool,
        n: usize,
        seed: u64,
        model: impl Fn() + Send + Sync + 'static,
    ) -> (Option<String>, f64, String) {
        run_exactly(name, pct, budget(pct, n, pct_cap()), seed, model)
    }

    /// The seed shuttle's schedulers run from when handed `seed`: `SHUTTLE_RANDOM_SEED` if set
    /// (shuttle-engine's `seed_from_env`, which both schedulers call, takes it over the seed
    /// they are given and panics on one that is not a decimal u64), else `seed`. Without it a
    /// row run under `SHUTTLE_RANDOM_SEED` would name the seed it did not run.
    pub fn effective_seed(seed: u64) -> u64 {
        match std::env::var("SHUTTLE_RANDOM_SEED") {
            Ok(s) => s
                .parse()
                .unwrap_or_else(|e| panic!("SHUTTLE_RANDOM_SEED={s:?}: not a valid u64 seed: {e}")),
            Err(_) => seed,
        }
    }

    /// [`explore_seeded`] at exactly `n` iterations: no cap.
    fn run_exactly(
        name: &str,
        pct: bool,
        n: usize,
        seed: u64,
        model: impl Fn() + Send + Sync + 'static,
    ) -> (Option<String>, f64, String) {
        // The row's bound names the seed the schedulers will use: theirs, unless
        // `SHUTTLE_RANDOM_SEED` overrides it (`effective_seed`).
        let seed = effective_seed(seed);
        let start = Instant::now();
        let label = if pct { "pct" } else { "random" };
        let done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let progress = crate::results::Progress::start(
            "shuttle",
            "iterations",
            format!("{label} iterations={n}"),
            done.clone(),
        );
        let counted = done.clone();
        let model = move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            model();
        };
        // The watchdog names the run if it hangs; outside `catch`, so that a hang is a failed
        // test, never a counterexample.
        let explored = Arc::new(Mutex::new(Explored::default()));
        let explored_in = explored.clone();
        let cx =
            bpspec_reference::watchdog::guard(&format!("shuttle {name} ({label})"), move || {
                catch(|| run_recorded(pct, n, seed, explored_in, model))
            });
        drop(progress);
        let (distinct, last_new) = {
            let e = explored.lock().unwrap_or_else(|p| p.into_inner());
            (e.distinct(), e.last_new)
        };
        let mut bound = if pct {
            format!("pct depth={PCT_DEPTH} iterations={n} seed={seed:#x}")
        } else {
            format!("random iterations={n} seed={seed:#x}")
        };
        bound.push_str(&format!(" distinct={distinct} last-new={last_new}"));
        if cx.is_some() {
            // The bound at which this run first fails, and the margin to the bound it ran at.
            let k = done.load(std::sync::atomic::Ordering::Relaxed).max(1);
            bound.push_str(&format!(
                " first-killed-at={k} margin={:.0}x",
                n as f64 / k as f64
            ));
        }
        (cx, start.elapsed().as_secs_f64(), bound)
    }
}

#[cfg(test)]
mod tests {
    use super::assert_matrix_complete;
    use bpspec_reference::Mutant::{self, *};

    fn kills(c: &str) -> Vec<(Mutant, &'static str)> {
        match c {
            "loom" => vec![(SkipWaitBeforeFree, "a")],
            _ => vec![(FreeAtUnlink, "b")],
        }
    }

    #[test]
    fn a_complete_matrix_passes() {
        let ms = [SkipWaitBeforeFree, FreeAtUnlink];
        let sc = [("loom", vec!["a"]), ("shuttle", vec!["b"])];
        assert_matrix_complete("test", &ms, &sc, kills);
    }

    #[test]
    #[should_panic(expected = "test mutant free-at-unlink has no checker expected to kill it")]
    fn a_mutant_without_killer_fails() {
        let ms = [SkipWaitBeforeFree, FreeAtUnlink];
        assert_matrix_complete("test", &ms, &[("loom", vec!["a", "b"])], kills);
    }

    #[test]
    #[should_panic(expected = "shuttle scenario b for free-at-unlink does not exist")]
    fn a_killer_on_a_missing_scenario_fails() {
        let ms = [FreeAtUnlink];
        assert_matrix_complete("test", &ms, &[("shuttle", vec!["a"])], kills);
    }
}
