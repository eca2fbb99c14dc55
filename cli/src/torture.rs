//! `bpspec torture`: the engine torture on real threads (docs/torture.md).
//!
//! ```text
//! bpspec torture [--schedulers N[,N...]] [--hits N] [--seconds S] [--pace N] [--seed N]
//!                [--wait-plan P[,P...]] [--erts-collection] [--mutant NAME | --mutants]
//!                [--mutant-seconds S]
//! ```
//! One run per scheduler count, each to `--hits` hits or `--seconds`, whichever comes first; a
//! run the time bound stops short of its hits, or that churned less than its minimums (measured
//! against its hits and churn operations: `TortureReport::shortfalls`), is a failed row (`short-of-hits`,
//! `short-of-churn`). `--mutant NAME` runs that mutant instead, on each scheduler count;
//! `--mutants` then runs every wait-removal mutant under the torture for `--mutant-seconds`
//! each (checked builds only). With `BPSPEC_RESULTS` set, every run appends a row to
//! `$BPSPEC_RESULTS/torture.tsv` (`bpspec report`).
//!
//! Exit codes: 0 every run as expected (baselines without a violation and at their targets,
//! mutants killed or allowed to survive); 1 a violation or a shortfall in a baseline (the seed
//! and parameters are printed), or a mutant expected to be killed survived; 2 bad usage.

use bpspec_models::results::{record, Verdict};
use bpspec_reference::code_ix::CodeIxScheme;
use bpspec_reference::torture::load::{
    run as load_torture, LoadTortureConfig, LoadTortureReport, PurgeMode,
};
use bpspec_reference::torture::{run as torture, TortureConfig, TortureReport};
use bpspec_reference::{LoadProtocol, Mutant, WaitPlan};
use std::process::ExitCode;
use std::time::Duration;

pub const USAGE: &str = "bpspec torture [--schedulers N[,N...]] [--hits N] [--seconds S] [--pace N] [--seed N] [--wait-plan P[,P...]] [--versions] [--erts-collection | --load [--protocols P[,P]] [--code-ix C[,C]] [--lw1-fold] [--purge M[,M]] [--procs N] [--collect]] [--mutant NAME | --mutants] [--mutant-seconds S]";

/// The mutants that remove a wait for thread progress (or break the grace period itself), in
/// the order `--mutants` runs them (docs/mutants.md).
pub const WAIT_MUTANTS: [Mutant; 15] = [
    Mutant::SkipWaitBeforeInstall,
    Mutant::SkipWaitBeforeCommit,
    Mutant::SkipWaitBeforeUninstall,
    Mutant::SkipWaitBeforeConsolidate,
    Mutant::SkipWaitBeforeFree,
    Mutant::WaitWithoutNewPeriod,
    Mutant::ProgressWithoutBarrier,
    Mutant::WakeWithoutBarrier,
    Mutant::CollectSkipWaitBeforeFlip,
    Mutant::CollectSkipWaitBeforeRead,
    Mutant::CollectSkipWaitBeforeMerge,
    Mutant::CollectFreeBeforeLastWait,
    Mutant::FreeAtUnlink,
    Mutant::TracerFreeWithoutWait,
    Mutant::MetaFreeWithoutWait,
];

/// The wait-removal mutants the torture is expected to kill on this machine (x86-64) within
/// its time bound. A mutant the torture does not catch is an expected outcome, recorded as "not
/// caught on x86 in N s" with the checker of `covered_by` named: docs/torture.md says why
/// x86-TSO and a short window hide it.
const TORTURE_KILLS: [Mutant; 1] = [Mutant::WaitWithoutNewPeriod];

/// The checker that kills a wait-removal mutant where the torture may not (docs/mutants.md).
fn covered_by(m: Mutant) -> &'static str {
    match m {
        Mutant::SkipWaitBeforeInstall | Mutant::SkipWaitBeforeCommit => "loom add",
        Mutant::SkipWaitBeforeUninstall => "loom remove-2sched",
        Mutant::SkipWaitBeforeConsolidate => "loom remove, shuttle remove-long",
        Mutant::SkipWaitBeforeFree => "loom and shuttle remove-session",
        Mutant::WaitWithoutNewPeriod => "loom and shuttle remove",
        Mutant::ProgressWithoutBarrier => "loom remove-long",
        Mutant::WakeWithoutBarrier => "loom remove-nap",
        Mutant::CollectSkipWaitBeforeFlip
        | Mutant::CollectSkipWaitBeforeRead
        | Mutant::CollectSkipWaitBeforeMerge
        | Mutant::CollectFreeBeforeLastWait => "collection models",
        Mutant::FreeAtUnlink | Mutant::TracerFreeWithoutWait => "sessions models",
        Mutant::MetaFreeWithoutWait => "reference/tests/meta.rs, meta models",
        _ => "docs/mutants.md",
    }
}

/// Hits per churn operation in the mutant runs.
const MUTANT_PACE: u64 = 32;

/// A mutant's expectation: killed by the torture, and the checker that covers it.
fn expectation(m: Mutant) -> (bool, &'static str) {
    (TORTURE_KILLS.contains(&m), covered_by(m))
}

/// Arguments of `bpspec torture`.
#[derive(clap::Args)]
pub struct Args {
    /// Scheduler counts, one run each (1..=64, comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "4", value_parser = schedulers)]
    schedulers: Vec<usize>,
    /// Hits per run.
    #[arg(long, default_value = "1000000", value_parser = number)]
    hits: u64,
    /// Time bound per run, in seconds (a baseline it stops short of its hits fails).
    #[arg(long, default_value = "600", value_parser = number)]
    seconds: u64,
    /// Hits the schedulers may make per churn operation before they wait for the stager.
    #[arg(long, default_value = "256", value_parser = number)]
    pace: u64,
    /// The seed (decimal or 0x hex).
    #[arg(long, default_value = "0x746f7274", value_parser = number)]
    seed: u64,
    /// Run the ERTS collection (without the F1 and F2 fixes).
    #[arg(long = "erts-collection")]
    erts: bool,
    /// Wait plans (docs/fewer-waits.md: erts, batch, batch-elide-idle, pipeline), one run each
    /// per scheduler count (mutant runs too); rows `churn-sN@PLAN` for the plans other than
    /// erts. Under a batching plan half the stager's trace_pattern operations are batches.
    #[arg(long = "wait-plan", value_delimiter = ',', default_value = "erts", value_parser = wait_plan, conflicts_with = "load")]
    wait_plans: Vec<WaitPlan>,
    /// Run one mutant under the torture (checked builds).
    #[arg(long, value_name = "NAME", value_parser = mutant, conflicts_with = "mutants")]
    mutant: Option<Mutant>,
    /// Then run every wait-removal mutant (checked builds).
    #[arg(long)]
    mutants: bool,
    /// Set by `--mutants` on each mutant run's child process (hidden): the run is part of the
    /// sweep, whose expectations `SWEEP_MAY_MISS` relaxes.
    #[arg(long, hide = true, requires = "mutant")]
    in_sweep: bool,
    /// Time bound per mutant run, in seconds.
    #[arg(long, default_value = "20", value_parser = number)]
    mutant_seconds: u64,
    /// The engine torture with its functions on a module's version (module `m`'s version 1,
    /// never loaded) instead of the static area; rows `churn-sN[@PLAN]@versions`.
    #[arg(long, conflicts_with = "load")]
    versions: bool,
    /// Torture the code-loading engine instead (loads, deletes, purges and trace_pattern under
    /// calls; `--mutant`/`--mutants` then take the load mutants).
    #[arg(long, conflicts_with = "erts")]
    load: bool,
    /// Load protocols, one run each per scheduler count (with `--load`).
    #[arg(long, value_delimiter = ',', default_value = "blocking,nonblocking", value_parser = protocol, requires = "load")]
    protocols: Vec<LoadProtocol>,
    /// Code index schemes (with `--load`): `2ix` (two indices, LW1 after each commit) and/or
    /// `3ix` (ERTS's three, the code barrier before each commit); one run each.
    #[arg(long, value_delimiter = ',', default_value = "2ix", value_parser = code_ix_scheme, requires = "load")]
    code_ix: Vec<CodeIxScheme>,
    /// LW1 folded into the removal's W1 (`Engine::with_lw1_fold`, with `--load`; NonBlocking
    /// with `2ix` only): every run and mutant run of the command takes it, rows `...-fold`.
    #[arg(long, requires = "load")]
    lw1_fold: bool,
    /// The loader's purges (with `--load`): `soft` (`code:soft_purge/1`, refused while a process
    /// is in the old code), `kill` (`code:purge/1`, which kills those processes) and/or `mixed`
    /// (either at random); one run each.
    #[arg(long, value_delimiter = ',', default_value = "soft", value_parser = purge_mode, requires = "load")]
    purge: Vec<PurgeMode>,
    /// Processes per scheduler (with `--load`, 1..=64): more than one are switched at
    /// scheduling points (`Scheduler::switch_proc`); rows `...-pN`.
    #[arg(long, default_value = "1", value_parser = procs, requires = "load")]
    procs: usize,
    /// A collector thread asks trace_info of call_time and call_count under the churn (with
    /// `--load`; rows `...-collect`); `--mutant`/`--mutants` then take the collection's
    /// mutants too.
    #[arg(long, requires = "load")]
    collect: bool,
}

/// Processes per scheduler, 1..=64.
fn procs(v: &str) -> Result<usize, String> {
    v.parse::<usize>()
        .ok()
        .filter(|n| (1..=64).contains(n))
        .ok_or_else(|| format!("--procs {v}: must be 1..=64"))
}

fn wait_plan(v: &str) -> Result<WaitPlan, String> {
    WaitPlan::ALL
        .into_iter()
        .find(|p| p.name() == v)
        .ok_or_else(|| format!("--wait-plan {v}: erts, batch, batch-elide-idle or pipeline"))
}

fn purge_mode(v: &str) -> Result<PurgeMode, String> {
    PurgeMode::parse(v).ok_or_else(|| format!("--purge {v}: soft, kill or mixed"))
}

fn code_ix_scheme(v: &str) -> Result<CodeIxScheme, String> {
    CodeIxScheme::parse(v).ok_or_else(|| format!("--code-ix {v}: 2ix or 3ix"))
}

fn protocol(v: &str) -> Result<LoadProtocol, String> {
    LoadProtocol::ALL
        .into_iter()
        .find(|p| p.name() == v)
        .ok_or_else(|| format!("--protocols {v}: blocking or nonblocking"))
}

/// A number, decimal or 0x hex, `_` allowed.
pub fn number(v: &str) -> Result<u64, String> {
    let v = v.replace('_', "");
    let r = match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse(),
    };
    r.map_err(|e| format!("{v}: {e}"))
}

/// One scheduler count, 1..=64.
pub fn schedulers(v: &str) -> Result<usize, String> {
    v.parse::<usize>()
        .ok()
        .filter(|n| (1..=64).contains(n))
        .ok_or_else(|| format!("--schedulers {v}: each must be 1..=64"))
}

fn mutant(v: &str) -> Result<Mutant, String> {
    Mutant::from_name(v).ok_or_else(|| format!("--mutant {v}: no such mutant"))
}

/// Entry point: returns the exit code.
pub fn run(a: &Args) -> ExitCode {
    if (a.mutant.is_some() || a.mutants) && !bpspec_reference::sync::CHECKED {
        eprintln!(
            "bpspec torture: mutants exist only in checked builds (debug assertions)\nusage: {USAGE}"
        );
        return ExitCode::from(2);
    }
    if a.load {
        return load_run(a);
    }
    let mut ok = true;
    for &plan in &a.wait_plans {
        if let Some(m) = a.mutant {
            for &n in &a.schedulers {
                ok &= isolated_mutant(a, n, m, plan);
            }
        } else {
            for &n in &a.schedulers {
                let mut cfg = TortureConfig::new(n, a.hits, a.seed);
                cfg.pace = a.pace;
                cfg = cfg.with_churn_minimums();
                cfg.max_time = Duration::from_secs(a.seconds);
                cfg.erts_collection = a.erts;
                cfg.wait_plan = plan;
                cfg.versions = a.versions;
                ok &= one(&cfg, "hold");
            }
        }
        if a.mutants {
            let n = *a.schedulers.iter().max().unwrap_or(&4);
            for m in WAIT_MUTANTS {
                ok &= isolated_mutant(a, n, m, plan);
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// [`one_mutant`] in a child process of its own ([`isolated`]).
fn isolated_mutant(a: &Args, n: usize, m: Mutant, plan: WaitPlan) -> bool {
    let mut args = vec![
        format!("--schedulers={n}"),
        format!("--mutant={}", m.name()),
        format!("--mutant-seconds={}", a.mutant_seconds),
        format!("--seed={}", a.seed),
        format!("--wait-plan={}", plan.name()),
    ];
    if a.erts {
        args.push("--erts-collection".into());
    }
    if a.versions {
        args.push("--versions".into());
    }
    let expected = if expectation(m).0 {
        "killed"
    } else {
        "survives"
    };
    let scenario = churn_scenario(n, a.erts, plan, a.versions);
    isolated(
        &args,
        &Fallback {
            scenario: &scenario,
            mutant: m,
            expected,
            seed: a.seed,
            seconds: a.mutant_seconds,
        },
        || one_mutant(a, n, m, plan),
    )
}

/// The row's scenario: `churn-sN`, `-erts` with ERTS's collection, `@PLAN` under a wait plan
/// other than ERTS's, `@versions` on a module's version.
fn churn_scenario(n: usize, erts: bool, plan: WaitPlan, versions: bool) -> String {
    format!(
        "churn-s{n}{}{}{}",
        if erts { "-erts" } else { "" },
        if plan == WaitPlan::Erts {
            String::new()
        } else {
            format!("@{}", plan.name())
        },
        if versions { "@versions" } else { "" }
    )
}

/// One mutant under the torture on `n` schedulers, bounded by `--mutant-seconds` (not by hits),
/// against its expectation (`TORTURE_KILLS`, `covered_by`).
fn one_mutant(a: &Args, n: usize, m: Mutant, plan: WaitPlan) -> bool {
    let mut cfg = TortureConfig::new(n, u64::MAX / 2, a.seed);
    cfg.phase_hits = 100_000;
    // A short pace: many trace_pattern calls against the hits (each removed wait is a window
    // that only churn opens), and a stager that oversubscribed schedulers cannot starve. Unpaced,
    // 8 schedulers left the stager 533 trace_pattern calls in 32 s, overran a 15 s bound by 17 s,
    // and the process grew by about 90 MB/s (the meta tracers' mailboxes, which only the stager
    // drains, fill with every hit): a mutant run of several minutes reached 20 GB.
    cfg.pace = MUTANT_PACE;
    cfg.max_time = Duration::from_secs(a.mutant_seconds);
    cfg.erts_collection = a.erts;
    cfg.wait_plan = plan;
    cfg.versions = a.versions;
    cfg.mutant = Some(m);
    one(
        &cfg,
        if expectation(m).0 {
            "killed"
        } else {
            "survives"
        },
    )
}

/// One run: print, record, and say whether it went as expected.
fn one(cfg: &TortureConfig, expected: &str) -> bool {
    println!("torture: {}", cfg.describe());
    finish(
        torture(cfg),
        &Expect {
            mutant: cfg.mutant,
            covered_by: cfg.mutant.map_or("", |m| expectation(m).1),
            hits: cfg.hits,
            expected,
        },
        |rep| rep.shortfalls(cfg),
        &churn_scenario(
            cfg.schedulers,
            cfg.erts_collection,
            cfg.wait_plan,
            cfg.versions,
        ),
        |rep| {
            format!(
                "hits={} ({:.0}/s) trace_pattern={}{} grace_periods={} collections={} churn_ops={} (pacing bound {}) paused_checks={} seed={:#x}",
                rep.hits,
                rep.hits_per_second(),
                rep.trace_patterns,
                if cfg.wait_plan.batches() {
                    format!(" batches={} (entries {})", rep.batches, rep.batch_entries)
                } else {
                    String::new()
                },
                rep.grace_periods,
                rep.collections,
                rep.churn_ops,
                cfg.pacing_bound(rep.hits, rep.phases),
                rep.paused_checks,
                cfg.seed
            )
        },
    )
}

/// What the row of a torture run needs from its report (engine or load torture).
trait Report {
    fn describe(&self) -> String;
    fn violation(&self) -> Option<String>;
    fn hits(&self) -> u64;
    fn seconds(&self) -> f64;
}

impl Report for TortureReport {
    fn describe(&self) -> String {
        TortureReport::describe(self)
    }
    fn violation(&self) -> Option<String> {
        self.violation.as_ref().map(|v| v.to_string())
    }
    fn hits(&self) -> u64 {
        self.hits
    }
    fn seconds(&self) -> f64 {
        self.seconds
    }
}

impl Report for LoadTortureReport {
    fn describe(&self) -> String {
        LoadTortureReport::describe(self)
    }
    fn violation(&self) -> Option<String> {
        self.violation.clone()
    }
    fn hits(&self) -> u64 {
        self.hits
    }
    fn seconds(&self) -> f64 {
        self.seconds
    }
}

/// What a run is expected to come to.
struct Expect<'a> {
    mutant: Option<Mutant>,
    /// The checker that kills the mutant where the torture may not.
    covered_by: &'static str,
    /// The baseline's hits.
    hits: u64,
    expected: &'a str,
}

/// Print a run's report, violation or shortfall, record its row, and say whether it went as
/// expected.
fn finish<R: Report>(
    run: Result<R, String>,
    x: &Expect,
    shortfalls: impl FnOnce(&R) -> Vec<String>,
    scenario: &str,
    bound: impl FnOnce(&R) -> String,
) -> bool {
    let rep = match run {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bpspec torture: {e}");
            return false;
        }
    };
    println!("  {}", rep.describe());
    let short = if x.mutant.is_none() {
        shortfalls(&rep)
    } else {
        Vec::new()
    };
    let violation = rep.violation();
    let observed = match (&violation, x.mutant) {
        (None, None) if rep.hits() < x.hits => "short-of-hits",
        (None, None) if !short.is_empty() => "short-of-churn",
        (None, None) => "hold",
        (Some(_), None) => "violated",
        (None, Some(_)) => "survives",
        (Some(_), Some(_)) => "killed",
    };
    if let Some(v) = &violation {
        println!("  {v}");
    }
    if !short.is_empty() {
        println!("  short: {}", short.join(", "));
    }
    record(&Verdict {
        checker: "torture",
        progress: "qsbr",
        scenario,
        variant: x.mutant.map_or("baseline", |m| m.name()),
        bound: bound(&rep),
        expected: x.expected,
        observed,
        seconds: rep.seconds(),
        detail: match (&violation, x.mutant) {
            (Some(v), _) => v.clone(),
            (None, Some(_)) => format!(
                "not caught on x86 in {:.0} s; covered by {}",
                rep.seconds(),
                x.covered_by
            ),
            (None, None) if !short.is_empty() => format!("short: {}", short.join(", ")),
            (None, None) => String::new(),
        },
    });
    matches!(
        (x.expected, observed),
        ("hold", "hold") | ("killed", "killed") | ("survives", _)
    )
}

/// The protocols a load mutant changes (the others run it as the baseline).
fn load_mutant_protocols(m: Mutant) -> &'static [LoadProtocol] {
    match m {
        Mutant::LoadBlockingWithoutBlock => &[LoadProtocol::Blocking],
        Mutant::LoadPurgeSkipCheck | Mutant::GlobalDispatchStagingIx => &LoadProtocol::ALL,
        // The collection's steps are the same under both protocols (`--collect`).
        m if Mutant::COLLECTION.contains(&m) => &LoadProtocol::ALL,
        _ => &[LoadProtocol::NonBlocking],
    }
}

/// The load mutants the load torture is expected to kill (on every protocol the mutant changes)
/// within `--mutant-seconds` at the sweep's scheduler count (x86-64); the others may survive, and the row names
/// the checker that kills them (docs/nonblocking-load.md §5, docs/torture.md §3).
/// Measured: each killed within 0.2 s at 2 and 4 schedulers, seeds 1 to 3 (docs/torture.md §3).
/// `load-skip-lw1-after-commit` and `load-purge-skip-wait` survive: x86-TSO and the width of
/// their windows (the free races a read of the same thread's last progress span).
const LOAD_TORTURE_KILLS: [Mutant; 4] = [
    Mutant::LoadCommitBeforeBreakpoints,
    Mutant::LoadBlockingWithoutBlock,
    Mutant::LoadClearOldAtOnce,
    Mutant::LoadPurgeSkipCheck,
];

/// Killed when run alone (`--mutant`, as `make test` runs it for 60 s: within 0.2 s at 2
/// schedulers, seeds 1, 2 and 0x746f7274), but once missed in the sweep of `make check` (10 s, 2
/// schedulers, NonBlocking, default seed: 21 million calls and 276 thousand loads with no
/// violation, while two other parts ran beside it): in the sweep its row may survive and names the
/// checkers that kill it, so the sweep's verdict does not depend on the machine's load.
const SWEEP_MAY_MISS: [Mutant; 1] = [Mutant::LoadClearOldAtOnce];

/// The load mutants of the purge's steps, which `code:purge/1` (`purge_kill`) runs too: the
/// sweep runs them under every `--purge` mode, the others under soft purges only (whatever
/// `--purge` says, so that `make check`'s `--purge mixed` sweeps every load mutant).
const PURGE_MUTANTS: [Mutant; 2] = [Mutant::LoadPurgeSkipCheck, Mutant::LoadPurgeSkipWait];

/// The checker that kills a load mutant under the LW1 fold (`--lw1-fold`): the `-fold` twins
/// of the scenarios [`load_covered_by`] names (docs/nonblocking-load.md §5, "Under the LW1 fold";
/// `models/src/load.rs::fold_kills`).
fn load_fold_covered_by(m: Mutant) -> &'static str {
    match m {
        Mutant::LoadCommitBeforeBreakpoints => "loom and shuttle load-under-hits-fold",
        Mutant::LoadSkipWaitAfterCommit => "loom and shuttle old-code-untraced-purge-fold",
        Mutant::LoadClearOldAtOnce => "loom and shuttle old-code-local-calls-fold",
        Mutant::LoadPurgeSkipCheck => {
            "loom and shuttle old-code-purge-fold, old-code-purge-kill-fold"
        }
        Mutant::LoadPurgeSkipWait => "loom old-code-purge-fold, old-code-purge-kill-fold",
        other => load_covered_by(other),
    }
}

/// The load mutants the sweep does not run (see `load_run`).
const LOAD_SWEEP_SKIPS: [Mutant; 4] = [
    Mutant::LoadTwoCodeIx,
    Mutant::LoadSkipCodeBarrier,
    Mutant::LoadStagingSkipDispatch,
    Mutant::GlobalDispatchStagingIx,
];

/// The checker that kills a load mutant (docs/nonblocking-load.md §5).
fn load_covered_by(m: Mutant) -> &'static str {
    match m {
        Mutant::LoadCommitBeforeBreakpoints => "loom and shuttle load-under-hits",
        Mutant::LoadSkipWaitAfterCommit => "loom old-code-untraced-purge, shuttle",
        Mutant::LoadBlockingWithoutBlock => "loom and shuttle load-under-hits",
        Mutant::LoadClearOldAtOnce => "loom and shuttle old-code-local-calls",
        Mutant::LoadPurgeSkipCheck => "loom and shuttle old-code-purge, old-code-purge-kill",
        Mutant::LoadPurgeSkipWait => "loom old-code-purge, old-code-purge-kill",
        Mutant::LoadTwoCodeIx => "loom delete-load-under-hits-3ix",
        Mutant::LoadSkipCodeBarrier => "loom delete-load-other-load-3ix",
        Mutant::LoadStagingSkipDispatch => "loom and shuttle load-global",
        Mutant::GlobalDispatchStagingIx => "loom and shuttle global-off-under-hits, load-global",
        m if Mutant::COLLECTION.contains(&m) => "collection models",
        _ => "docs/mutants.md",
    }
}

/// The collection's mutants the load torture with `--collect` is expected to kill within
/// `--mutant-seconds` at 2 schedulers under both protocols (the engine's torn-read check on the
/// pid hashes, or the call_time count conservation at rest). Measured (checked build, 1 million
/// calls or 10 s, seed 0x636f6c6c): each killed under both protocols after 27 to 225
/// collections; `collect-skip-tw2-before-read` and `collect-skip-tw3-before-merge` only under
/// Blocking, the others of `Mutant::COLLECTION` in neither (the collection models kill them).
const COLLECT_TORTURE_KILLS: [Mutant; 3] = [
    Mutant::CollectWithoutFlip,
    Mutant::CollectFreeBeforeLastWait,
    Mutant::CollectSkipMerge,
];

/// `bpspec torture --load`: the load torture per protocol and scheduler count, or its mutants.
fn load_run(a: &Args) -> ExitCode {
    if let Some(m) = a.mutant {
        let collection = a.collect && Mutant::COLLECTION.contains(&m);
        if !Mutant::LOAD.contains(&m) && !collection {
            eprintln!(
                "bpspec torture: --load --mutant {}: not a load mutant (load-...), nor with --collect a collection one (collect-..., timem-...)\nusage: {USAGE}",
                m.name()
            );
            return ExitCode::from(2);
        }
    }
    let folds_only_two = a.protocols.iter().any(|&p| p != LoadProtocol::NonBlocking)
        || a.code_ix.iter().any(|&c| c != CodeIxScheme::Two)
        || matches!(
            a.mutant,
            Some(Mutant::LoadTwoCodeIx | Mutant::LoadSkipCodeBarrier)
        );
    if a.lw1_fold && folds_only_two {
        eprintln!(
            "bpspec torture: --lw1-fold: LW1 is folded only under NonBlocking with two code indices (--protocols nonblocking --code-ix 2ix)\nusage: {USAGE}"
        );
        return ExitCode::from(2);
    }
    let mut ok = true;
    let mutants: Vec<Mutant> = match (a.mutant, a.mutants) {
        (Some(m), _) => vec![m],
        // `load-two-code-ix` stays out of the sweep: a call into the staged, uncommitted version
        // finds its code fully written (the loader writes it before it publishes the address,
        // and x86-TSO keeps that order), so the torture has nothing to see (10 s at 2
        // schedulers: survives); loom kills it (`delete-load-under-hits-3ix`). So does
        // `load-skip-code-barrier`: the torture loads one module, so a purge (and its first
        // wait) lies between the first and the third of any three commits; loom kills it with
        // a second module (`delete-load-other-load-3ix`). So do the two
        // mutants of the export entries' dispatch words: the load torture sets no global trace,
        // so they change nothing it runs; loom and shuttle kill them (`load-global`,
        // `global-off-under-hits`).
        (None, true) => Mutant::LOAD
            .into_iter()
            .filter(|&m| !LOAD_SWEEP_SKIPS.contains(&m))
            .chain(Mutant::COLLECTION.into_iter().filter(|_| a.collect))
            .collect(),
        (None, false) => Vec::new(),
    };
    if a.mutant.is_none() {
        for &purge in &a.purge {
            for &c in &a.code_ix {
                for &p in &a.protocols {
                    for &n in &a.schedulers {
                        let mut cfg = LoadTortureConfig::new(p, n, a.hits, a.seed);
                        cfg.max_time = Duration::from_secs(a.seconds);
                        cfg.scheme = c;
                        cfg.purge = purge;
                        cfg.fold_lw1 = a.lw1_fold;
                        cfg.procs = a.procs;
                        cfg.collect = a.collect;
                        ok &= load_one(&cfg, "hold");
                    }
                }
            }
        }
    }
    // The sweep runs each mutant at the smallest scheduler count given: the kills are measured
    // there (each within 0.6 s at 2 schedulers, docs/torture.md §3), while at 8 schedulers on 2
    // cores `load-clear-old-at-once` needed 148 million calls (8.8 s) once and was missed in 10 s
    // the next run: an expectation that held only on an idle machine.
    let counts: Vec<usize> = if a.mutant.is_some() {
        a.schedulers.clone()
    } else {
        vec![*a.schedulers.iter().min().unwrap_or(&2)]
    };
    for m in mutants {
        // The mutants of the purge's own steps under every `--purge` mode, the others under
        // soft purges whatever `--purge` says (`--mutant` runs any under every mode given).
        let purges = if a.mutant.is_some() || PURGE_MUTANTS.contains(&m) {
            a.purge.clone()
        } else {
            vec![PurgeMode::Soft]
        };
        for purge in purges {
            for &p in load_mutant_protocols(m) {
                if !a.protocols.contains(&p) {
                    continue;
                }
                for &n in &counts {
                    let mut cfg = LoadTortureConfig::new(p, n, u64::MAX / 2, a.seed);
                    cfg.max_time = Duration::from_secs(a.mutant_seconds);
                    cfg.pace = 64;
                    cfg.mutant = Some(m);
                    cfg.purge = purge;
                    cfg.fold_lw1 = a.lw1_fold;
                    cfg.procs = a.procs;
                    cfg.collect = a.collect;
                    if matches!(m, Mutant::LoadTwoCodeIx | Mutant::LoadSkipCodeBarrier) {
                        // They change only ERTS's three-index scheme.
                        cfg.scheme = CodeIxScheme::Three;
                    }
                    let sweep_may_miss =
                        (a.mutant.is_none() || a.in_sweep) && SWEEP_MAY_MISS.contains(&m);
                    let kills = LOAD_TORTURE_KILLS.contains(&m)
                        || (a.collect && COLLECT_TORTURE_KILLS.contains(&m));
                    let expected = if kills && !sweep_may_miss {
                        "killed"
                    } else {
                        "survives"
                    };
                    let mut args = vec![
                        "--load".to_string(),
                        format!("--protocols={}", p.name()),
                        format!("--schedulers={n}"),
                        format!("--purge={}", purge.name()),
                        format!("--mutant={}", m.name()),
                        format!("--mutant-seconds={}", a.mutant_seconds),
                        format!("--seed={}", a.seed),
                        format!("--procs={}", a.procs),
                        "--in-sweep".to_string(),
                    ];
                    if a.lw1_fold {
                        args.push("--lw1-fold".to_string());
                    }
                    if a.collect {
                        args.push("--collect".to_string());
                    }
                    ok &= isolated(
                        &args,
                        &Fallback {
                            scenario: &cfg.row_name(),
                            mutant: m,
                            expected,
                            seed: a.seed,
                            seconds: a.mutant_seconds,
                        },
                        || load_one(&cfg, expected),
                    );
                }
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// One load torture run: print, record, and say whether it went as expected.
fn load_one(cfg: &LoadTortureConfig, expected: &str) -> bool {
    println!("torture: {}", cfg.describe());
    finish(
        load_torture(cfg),
        &Expect {
            expected,
            hits: cfg.hits,
            covered_by: cfg.mutant.map_or("", |m| {
                if cfg.fold_lw1 {
                    load_fold_covered_by(m)
                } else {
                    load_covered_by(m)
                }
            }),
            mutant: cfg.mutant,
        },
        |rep| rep.shortfalls(cfg),
        &cfg.row_name(),
        |rep| {
            format!(
                "hits={} ({:.0}/s) loads={} deletes={} purges={} purge_refusals={} kill_purges={} kills={}{} trace_pattern={}{} seed={:#x}",
                rep.hits,
                rep.calls_per_second(),
                rep.loads,
                rep.deletes,
                rep.purges,
                rep.purge_refusals,
                rep.kill_purges,
                rep.kills,
                // Only with more than one process per scheduler (the other rows keep their form).
                if cfg.procs > 1 {
                    format!(
                        " procs={} switches={} switch_kills={}",
                        cfg.procs, rep.switches, rep.switch_kills
                    )
                } else {
                    String::new()
                },
                rep.trace_patterns,
                // Only with the collector (the other rows keep their form).
                if cfg.collect {
                    format!(" collections={}", rep.collections)
                } else {
                    String::new()
                },
                cfg.seed
            )
        },
    )
}

/// Arguments of `bpspec oracle torture`.
#[derive(clap::Args)]
pub struct OracleArgs {
    /// Run ERTS from the Debian root DIR (scripts/otp-root.sh) through chroot.
    #[arg(long, value_name = "DIR")]
    otp_root: Option<std::path::PathBuf>,
    /// Scheduler counts (+S), one node each (1..=64, comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "4", value_parser = schedulers)]
    schedulers: Vec<usize>,
    /// Seconds per node.
    #[arg(long, default_value = "60", value_parser = number)]
    seconds: u64,
    /// The seed (decimal or 0x hex).
    #[arg(long, default_value = "0x746f7274", value_parser = number)]
    seed: u64,
    /// Erlang worker processes.
    #[arg(long, default_value = "32", value_parser = number)]
    workers: u64,
    /// call_time/call_memory resets by the stager: on, off, or auto (off before OTP 28, which
    /// may predate the fix of the reset crash, erlang/otp#8835).
    #[arg(long, default_value = "auto", value_parser = ["auto", "on", "off"])]
    resets: String,
}

/// `bpspec oracle torture`: the ERTS torture (oracle/erlang/bpspec_torture.erl) on a real node,
/// once per scheduler count. Exit codes: 0 every run consistent; 1 an inconsistency or a crash
/// (reported, with the seed); 2 bad usage; 4 Erlang/OTP missing or the root unusable.
pub fn oracle_run(a: &OracleArgs) -> ExitCode {
    use bpspec_oracle::erts_torture::{run as erts, ErtsTortureConfig, ErtsVerdict};
    let root = a.otp_root.clone();
    let schedulers = a.schedulers.clone();
    let (seconds, seed, workers) = (a.seconds.max(1), a.seed, a.workers.clamp(1, 10_000));
    let mut ok = true;
    for n in schedulers {
        let cfg = ErtsTortureConfig {
            root: root.clone(),
            schedulers: n,
            seconds,
            seed,
            workers: workers as usize,
            resets: match a.resets.as_str() {
                "on" => Some(true),
                "off" => Some(false),
                _ => None,
            },
        };
        println!("erts torture: {}", cfg.describe());
        let out = match erts(&cfg) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("bpspec oracle torture: {e}");
                return ExitCode::from(4);
            }
        };
        for l in &out.lines {
            println!("  {l}");
        }
        let (observed, detail) = match &out.verdict {
            ErtsVerdict::Consistent => ("consistent", String::new()),
            ErtsVerdict::Inconsistent(b) => ("inconsistent", b.join(" ")),
            ErtsVerdict::Crashed(w) => ("crashed", w.clone()),
        };
        println!("  verdict: {observed} {detail} ({:.0}s)", out.seconds);
        let c = |k: &str| out.counters.get(k).copied().unwrap_or(0);
        let otp = out
            .lines
            .first()
            .and_then(|l| l.split_whitespace().find_map(|kv| kv.strip_prefix("otp=")))
            .unwrap_or("?")
            .to_string();
        record(&Verdict {
            checker: "erts-torture",
            progress: "erts",
            scenario: &format!("otp{otp}-s{n}"),
            variant: "baseline",
            bound: format!(
                "{}s calls={} trace_pattern={} queries={} paused_checks={} sessions={} seed={seed}",
                seconds,
                c("calls"),
                c("trace_patterns"),
                c("queries"),
                c("paused_checks"),
                c("sessions_created")
            ),
            // The ERTS torture looks for ERTS problems: an inconsistency or a crash is a
            // finding, reported, not a failure of bpspec.
            expected: "survives",
            observed: if observed == "consistent" {
                "survives"
            } else {
                "killed"
            },
            seconds: out.seconds,
            detail: format!(
                "{observed}{}{detail}; paused_time_grew={} paused_row_appeared={}",
                if detail.is_empty() { "" } else { ": " },
                c("paused_time_grew"),
                c("paused_row_appeared")
            ),
        });
        ok &= observed == "consistent";
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every wait-removal mutant names the checker that covers it; what the torture kills is
    /// one of them.
    #[test]
    fn every_wait_mutant_names_its_checker() {
        for m in WAIT_MUTANTS {
            assert_ne!(covered_by(m), "docs/mutants.md", "{}", m.name());
        }
        assert!(TORTURE_KILLS.iter().all(|m| WAIT_MUTANTS.contains(m)));
    }

    /// Every load mutant names the checker that kills it and a protocol it changes; what the
    /// load torture kills is a load mutant.
    #[test]
    fn every_load_mutant_names_its_checker() {
        for m in Mutant::LOAD {
            assert_ne!(load_covered_by(m), "docs/mutants.md", "{}", m.name());
            assert_ne!(load_fold_covered_by(m), "docs/mutants.md", "{}", m.name());
            assert!(!load_mutant_protocols(m).is_empty(), "{}", m.name());
        }
        assert!(LOAD_TORTURE_KILLS.iter().all(|m| Mutant::LOAD.contains(m)));
    }
}

/// The environment variable that makes a `bpspec torture` process a mutant run's child: it holds
/// the path of the file the child writes its verdict to (`1` as expected, `0` not).
const CHILD_ENV: &str = "BPSPEC_TORTURE_CHILD";

/// Set in a child's environment, it aborts before its run (the parent's handling of a child that
/// dies is tested with it: cli/tests/torture.rs).
const TEST_ABORT_ENV: &str = "BPSPEC_TORTURE_TEST_ABORT";

/// How long past its own time bound a child may take before the parent kills it: the run's
/// watchdog (reference/src/watchdog.rs) fires well before this.
const CHILD_GRACE: Duration = Duration::from_secs(240);

/// The row a parent records for a child that died before it recorded its own.
struct Fallback<'a> {
    scenario: &'a str,
    mutant: Mutant,
    expected: &'a str,
    seed: u64,
    seconds: u64,
}

/// Run one mutant run in a child process of its own (`bpspec torture ARGS`), so that the memory
/// a mutant corrupts cannot take the rest of the sweep with it. Checked builds keep freed objects
/// in a bounded quarantine only (reference/src/protocol/free.rs): a mutant that frees too early
/// writes, once its objects have left the quarantine, into memory the allocator reuses, and
/// glibc may then abort the process ("malloc(): unaligned tcache chunk detected") before the
/// run can record its verdict.
///
/// The child records its own row and writes its verdict to the file named by [`CHILD_ENV`]. If
/// it dies first, the parent records the row: a mutant whose run the allocator or a signal
/// stopped is killed (the heap check is the detection; the row's detail says so and quotes the
/// child's last lines of stderr), and a child that outlives its bound by [`CHILD_GRACE`] is
/// killed by the parent and its row is `hang`. Inside a child, `run` is called directly.
fn isolated(args: &[String], fb: &Fallback, run: impl FnOnce() -> bool) -> bool {
    if let Some(path) = std::env::var_os(CHILD_ENV) {
        // The test hook of cli/tests/torture.rs: a child that dies before its verdict.
        if std::env::var_os(TEST_ABORT_ENV).is_some() {
            eprintln!("bpspec torture: {TEST_ABORT_ENV} is set: aborting");
            std::process::abort();
        }
        let ok = run();
        if let Err(e) = std::fs::write(&path, if ok { "1" } else { "0" }) {
            eprintln!(
                "bpspec torture: cannot write the verdict file {}: {e}",
                std::path::Path::new(&path).display()
            );
            return false;
        }
        return ok;
    }
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let verdict =
        std::env::temp_dir().join(format!("bpspec-torture-{}-{n}.verdict", std::process::id()));
    let _ = std::fs::remove_file(&verdict);
    let started = std::time::Instant::now();
    let outcome = child(
        args,
        &verdict,
        Duration::from_secs(fb.seconds) + CHILD_GRACE,
    );
    let written = std::fs::read_to_string(&verdict).ok();
    let _ = std::fs::remove_file(&verdict);
    match (written.as_deref(), outcome) {
        (Some("1"), _) => true,
        (Some(_), _) => false,
        (None, Err(e)) => {
            eprintln!("bpspec torture: {e}");
            false
        }
        (
            None,
            Ok(Child {
                status,
                stderr_tail,
                timed_out,
            }),
        ) => {
            let (observed, what) = if timed_out {
                (
                    "hang",
                    format!("no verdict within {} s", fb.seconds + CHILD_GRACE.as_secs()),
                )
            } else {
                (
                    "killed",
                    format!("the run died before its verdict ({status})"),
                )
            };
            let detail = format!("{what}: {}", stderr_tail.join(" | "));
            println!("  {observed}: {detail}");
            record(&Verdict {
                checker: "torture",
                progress: "qsbr",
                scenario: fb.scenario,
                variant: fb.mutant.name(),
                bound: format!("isolated child, seed={:#x}", fb.seed),
                expected: fb.expected,
                observed,
                seconds: started.elapsed().as_secs_f64(),
                detail,
            });
            matches!(
                (fb.expected, observed),
                ("killed", "killed") | ("survives", "killed")
            )
        }
    }
}

/// What a child process came to.
struct Child {
    status: std::process::ExitStatus,
    /// Its last lines of stderr (every line is also passed through to ours).
    stderr_tail: Vec<String>,
    timed_out: bool,
}

/// Run `bpspec torture ARGS` with [`CHILD_ENV`] set to `verdict`, killing it after `bound`.
fn child(args: &[String], verdict: &std::path::Path, bound: Duration) -> Result<Child, String> {
    use std::io::BufRead;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let mut c = std::process::Command::new(&exe)
        .arg("torture")
        .args(args)
        .env(CHILD_ENV, verdict)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {} torture {}: {e}",
                exe.display(),
                args.join(" ")
            )
        })?;
    let err = c.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut tail: std::collections::VecDeque<String> = std::collections::VecDeque::new();
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("{line}");
            if tail.len() == 8 {
                tail.pop_front();
            }
            tail.push_back(line);
        }
        tail.into_iter().collect::<Vec<_>>()
    });
    let deadline = std::time::Instant::now() + bound;
    let mut timed_out = false;
    // Bounded: the deadline ends the loop (the child is killed, then reaped).
    let status = loop {
        match c.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if std::time::Instant::now() >= deadline => {
                timed_out = true;
                let _ = c.kill();
                break c
                    .wait()
                    .map_err(|e| format!("cannot reap the child: {e}"))?;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("cannot wait for the child: {e}")),
        }
    };
    let stderr_tail = reader.join().unwrap_or_default();
    Ok(Child {
        status,
        stderr_tail,
        timed_out,
    })
}
