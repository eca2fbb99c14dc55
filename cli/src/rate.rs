//! `bpspec rate [--rms N]`: the spec's checking rate side by side with a two-phase-commit model
//! (the commit protocol of Gray and Lamport's "Consensus on Transaction Commit", the model
//! stateright ships as its own example), in one run, under the same checker settings: states,
//! unique states, depth, seconds and states per second of `s2f2x1` and of 2PC with N resource
//! managers, their ratio, each DFS rate against the same model's DFS rate on one thread, and
//! the growth of the peak resident set per unique state; on BFS also `s2f2x1` with all 21
//! properties each on its own, on DFS also `s2f2x1` with its actions in `Config::enabled`'s
//! order (`BpModel::for_dfs` is what `bpspec check` runs), and both models on the checker of
//! our own (`own_bfs`). Each run is a child process of this
//! binary (`--one`), so its peak memory is its own. Every row runs `--rounds` times (5 by
//! default), once a round with the rows interleaved, and the table gives the medians over the
//! rounds, each ratio as the median of its per-round ratios with their spread (min..max): one
//! run lasts a fraction of a second, so one run's ratio moves with the machine. With `--out FILE` it also writes them as a
//! result table (docs/results/perf-rate.tsv, `make perf-doc`), which docs/perf.md renders; the
//! page says what limits them.

use bpspec_spec::model::model_config;
use stateright::{Checker, Model, Property};
use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

/// The labels of the calibration rows (no model, [`machine`]).
const MACHINE: &str = "no model: independent work per thread";
const MACHINE_SHARED: &str = "no model: the same, one shared counter";

/// The label of the rows checked by the checker of our own (cli/src/own_bfs.rs).
const OWN: &str = "our own BFS (parent fingerprints), 1 thread";

pub const USAGE: &str = "bpspec rate [--rms N] [--threads N] [--rounds N] [--out FILE]";

#[derive(clap::Args)]
pub struct Args {
    /// Resource managers in the two-phase-commit model.
    #[arg(long, default_value_t = 7)]
    rms: usize,
    /// Checker threads for the last DFS pair (the BFS runs use one, as `bpspec check` does for
    /// `s2f2x1`, and a DFS pair on one thread is run first).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Rounds: every row runs once a round (the rows interleaved), and the table gives the
    /// median over the rounds and the spread of the ratios.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Also write the figures as a tab-separated result table to FILE (docs/results/perf-rate.tsv
    /// in `make perf-doc`).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Internal: make one run (`2pc` or `s2f2x1`) in this process and print its figures (the
    /// parent runs each measurement as such a child).
    #[arg(long, hide = true)]
    one: Option<String>,
    /// Internal, with --one: DFS (otherwise BFS).
    #[arg(long, hide = true)]
    dfs: bool,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
enum Rm {
    Working,
    Prepared,
    Committed,
    Aborted,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
enum Tm {
    Init,
    Committed,
    Aborted,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
enum Msg {
    Prepared(usize),
    Commit,
    Abort,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct TwoPcState {
    rm: Vec<Rm>,
    tm: Tm,
    tm_prepared: Vec<bool>,
    msgs: BTreeSet<Msg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TwoPcAction {
    TmRcvPrepared(usize),
    TmCommit,
    TmAbort,
    RmPrepare(usize),
    RmChooseToAbort(usize),
    RmRcvCommit(usize),
    RmRcvAbort(usize),
}

struct TwoPc {
    rms: usize,
}

impl Model for TwoPc {
    type State = TwoPcState;
    type Action = TwoPcAction;

    fn init_states(&self) -> Vec<TwoPcState> {
        vec![TwoPcState {
            rm: vec![Rm::Working; self.rms],
            tm: Tm::Init,
            tm_prepared: vec![false; self.rms],
            msgs: BTreeSet::new(),
        }]
    }

    fn actions(&self, s: &TwoPcState, out: &mut Vec<TwoPcAction>) {
        if s.tm == Tm::Init {
            if s.tm_prepared.iter().all(|&p| p) {
                out.push(TwoPcAction::TmCommit);
            }
            out.push(TwoPcAction::TmAbort);
        }
        for i in 0..self.rms {
            if s.tm == Tm::Init && s.msgs.contains(&Msg::Prepared(i)) {
                out.push(TwoPcAction::TmRcvPrepared(i));
            }
            if s.rm[i] == Rm::Working {
                out.push(TwoPcAction::RmPrepare(i));
                out.push(TwoPcAction::RmChooseToAbort(i));
            }
            if s.msgs.contains(&Msg::Commit) {
                out.push(TwoPcAction::RmRcvCommit(i));
            }
            if s.msgs.contains(&Msg::Abort) {
                out.push(TwoPcAction::RmRcvAbort(i));
            }
        }
    }

    fn next_state(&self, s: &TwoPcState, a: TwoPcAction) -> Option<TwoPcState> {
        let mut n = s.clone();
        match a {
            TwoPcAction::TmRcvPrepared(i) => n.tm_prepared[i] = true,
            TwoPcAction::TmCommit => {
                n.tm = Tm::Committed;
                n.msgs.insert(Msg::Commit);
            }
            TwoPcAction::TmAbort => {
                n.tm = Tm::Aborted;
                n.msgs.insert(Msg::Abort);
            }
            TwoPcAction::RmPrepare(i) => {
                n.rm[i] = Rm::Prepared;
                n.msgs.insert(Msg::Prepared(i));
            }
            TwoPcAction::RmChooseToAbort(i) | TwoPcAction::RmRcvAbort(i) => n.rm[i] = Rm::Aborted,
            TwoPcAction::RmRcvCommit(i) => n.rm[i] = Rm::Committed,
        }
        Some(n)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::<Self>::sometimes("abort agreement", |_, s| {
                s.rm.iter().all(|r| *r == Rm::Aborted)
            }),
            Property::<Self>::sometimes("commit agreement", |_, s| {
                s.rm.iter().all(|r| *r == Rm::Committed)
            }),
            Property::<Self>::always("consistent", |_, s| {
                !s.rm.contains(&Rm::Aborted) || !s.rm.contains(&Rm::Committed)
            }),
        ]
    }
}

/// What one exhaustive run saw.
struct Seen {
    states: usize,
    unique: usize,
    depth: usize,
    secs: f64,
    /// CPU time of the process over the run, all threads (user + system; /proc/self/stat), or
    /// 0 where /proc is not there.
    cpu: f64,
    /// Growth of the process's peak resident set over the run (bytes; `VmHWM` at the end less
    /// `VmRSS` at the start, /proc/self/status), or 0 where /proc is not there.
    peak_bytes: u64,
}

/// One exhaustive run of `m` in this process.
fn measure<M>(m: M, dfs: bool, threads: usize) -> Seen
where
    M: Model + Send + Sync + 'static,
    M::State: std::hash::Hash + Send + Sync + Clone + std::fmt::Debug + PartialEq,
    M::Action: Send + Sync + Clone + std::fmt::Debug + PartialEq,
{
    let base = proc_status_kib("VmRSS:");
    let cpu0 = crate::procstat::own_cpu_secs();
    let t0 = Instant::now();
    let b = m.checker().threads(threads);
    let (states, unique, depth) = if dfs {
        let c = b.spawn_dfs().join();
        (c.state_count(), c.unique_state_count(), c.max_depth())
    } else {
        let c = b.spawn_bfs().join();
        (c.state_count(), c.unique_state_count(), c.max_depth())
    };
    let secs = t0.elapsed().as_secs_f64();
    let cpu = crate::procstat::own_cpu_secs() - cpu0;
    let peak = proc_status_kib("VmHWM:");
    Seen {
        states,
        unique,
        depth,
        secs,
        cpu,
        peak_bytes: peak.saturating_sub(base) * 1024,
    }
}

/// One run of `m` on the checker of our own (`own_bfs`), in this process.
fn measure_own<M>(m: M) -> Seen
where
    M: Model,
    M::State: std::hash::Hash,
    M::Action: Clone,
{
    let base = proc_status_kib("VmRSS:");
    let cpu0 = crate::procstat::own_cpu_secs();
    let t0 = Instant::now();
    let seen = crate::own_bfs::check(&m, 100_000_000).expect("a finite model");
    let always: Vec<&str> = m
        .properties()
        .iter()
        .filter(|p| p.expectation == stateright::Expectation::Always)
        .map(|p| p.name)
        .collect();
    for (name, path) in &seen.discoveries {
        if always.contains(name) {
            eprintln!(
                "bpspec rate: {name} violated on the checker of our own ({} steps)",
                path.len()
            );
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu = crate::procstat::own_cpu_secs() - cpu0;
    let peak = proc_status_kib("VmHWM:");
    Seen {
        states: seen.states,
        unique: seen.unique,
        depth: seen.depth,
        secs,
        cpu,
        peak_bytes: peak.saturating_sub(base) * 1024,
    }
}

/// Items each thread of a calibration run works through ([`machine`]).
const MACHINE_ITEMS: usize = 1 << 22;

/// A calibration of the machine, no model: each of `threads` threads works through
/// [`MACHINE_ITEMS`] items of its own, each a multiply-xorshift hash and a read-modify-write of
/// a random word of a 4 MiB table of its own (a checker's fingerprint and visited-map probe,
/// without the map); with `shared`, each item also adds 1 to one counter all threads share (as
/// stateright's checkers count every generated state, dfs.rs:307, bfs.rs:315). With no
/// shared write, two threads do twice the work of one in the time of one on two free cores:
/// what they do less is what the machine gives two threads; what the shared counter takes
/// on top is the price of one cache line moving between the cores per item.
fn machine(threads: usize, shared: bool) -> Seen {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let counter = AtomicUsize::new(0);
    let cpu0 = crate::procstat::own_cpu_secs();
    let t0 = Instant::now();
    let sum: u64 = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let counter = &counter;
                sc.spawn(move || {
                    let mut table = vec![0u64; 1 << 19];
                    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ t as u64;
                    for _ in 0..MACHINE_ITEMS {
                        x ^= x >> 29;
                        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
                        x ^= x >> 32;
                        let w = &mut table[(x as usize) & ((1 << 19) - 1)];
                        *w = w.wrapping_add(x);
                        x = x.wrapping_add(*w);
                        if shared {
                            // Relaxed: a count read after the join, as the checkers' is.
                            counter.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    table.iter().fold(x, |a, &b| a ^ b)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("no panic"))
            .fold(0, |a, b| a ^ b)
    });
    let secs = t0.elapsed().as_secs_f64();
    // Keep the work observable.
    std::hint::black_box(sum);
    Seen {
        states: threads * MACHINE_ITEMS,
        unique: 0,
        depth: 0,
        secs,
        cpu: crate::procstat::own_cpu_secs() - cpu0,
        peak_bytes: 0,
    }
}

/// A field of /proc/self/status in KiB (0 if absent).
fn proc_status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// `s2f2x1` on the state sized to it (`Small`), unfused.
fn small() -> bpspec_spec::model::BpModel<bpspec_spec::model::Small> {
    bpspec_spec::model::BpModel::with_caps(model_config("s2f2x1").expect("known model"))
}

/// The child's side of [`run_child`]: one run, its figures on stdout as one line.
fn one(a: &Args, which: &str) -> ExitCode {
    let seen = match which {
        "2pc" => measure(TwoPc { rms: a.rms }, a.dfs, a.threads),
        // The fused model, as `bpspec check` runs a baseline (run::run), and on DFS with its
        // actions in the order `bpspec check` gives DFS (`BpModel::for_dfs`). Every `s2f2x1`
        // row runs on the state sized to it (`Small`, spec/src/model/state.rs), as run::run
        // does for every model that fits it.
        "s2f2x1" => {
            let m = small().fuse();
            measure(if a.dfs { m.for_dfs() } else { m }, a.dfs, a.threads)
        }
        // The same, its actions in `Config::enabled`'s order on DFS too (as before
        // `BpModel::for_dfs`).
        "s2f2x1-fwd" => measure(small().fuse(), a.dfs, a.threads),
        // Every property on its own, reachable or not, none latched: the property work per
        // state as it was before props::reachable and the fused model.
        "s2f2x1-all" => measure(small().every_property(), a.dfs, a.threads),
        // The checker of our own (cli/src/own_bfs.rs), BFS on one thread.
        "2pc-own" => measure_own(TwoPc { rms: a.rms }),
        "s2f2x1-own" => measure_own(small()),
        // No model: the machine's own scaling from one thread to --threads ([`machine`]).
        "machine" => machine(a.threads, false),
        "machine-shared" => machine(a.threads, true),
        _ => {
            eprintln!(
                "bpspec rate: --one takes 2pc, s2f2x1, s2f2x1-fwd, s2f2x1-all, 2pc-own, \
                 s2f2x1-own, machine or machine-shared\n\
                 usage: {USAGE}"
            );
            return ExitCode::from(2);
        }
    };
    println!(
        "{} {} {} {} {} {}",
        seen.states, seen.unique, seen.depth, seen.secs, seen.cpu, seen.peak_bytes
    );
    ExitCode::SUCCESS
}

/// One run in a child process of this binary (`--one`), so each run's peak memory is its own
/// and no run inherits another's heap.
fn run_child(which: &str, rms: usize, dfs: bool, threads: usize) -> Result<Seen, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["rate", "--one", which, "--rms", &rms.to_string()])
        .args(["--threads", &threads.to_string()]);
    if dfs {
        cmd.arg("--dfs");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run a child: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = text.split_whitespace().collect();
    if !out.status.success() || f.len() != 6 {
        return Err(format!(
            "the run of {which} failed: {}{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let n = |i: usize| f[i].parse::<usize>().map_err(|e| format!("{}: {e}", f[i]));
    Ok(Seen {
        states: n(0)?,
        unique: n(1)?,
        depth: n(2)?,
        secs: f[3].parse().map_err(|e| format!("{}: {e}", f[3]))?,
        cpu: f[4].parse().map_err(|e| format!("{}: {e}", f[4]))?,
        peak_bytes: n(5)? as u64,
    })
}

/// One row of the table: a model on a checker, run once a round.
struct Row {
    model: String,
    checker: String,
    /// What `--one` runs.
    which: &'static str,
    dfs: bool,
    threads: usize,
    /// The checker's group (its rows run back to back in a round) and the row's place in it:
    /// 0 is 2PC, the ratios' reference.
    group: usize,
    k: usize,
}

/// The rows of a run: per checker 2PC, `s2f2x1` and (on stateright's checkers) the `s2f2x1`
/// row of an earlier state of the spec.
fn plan(a: &Args) -> Vec<Row> {
    let mut checkers = vec![
        ("BFS, 1 thread".to_string(), false, 1),
        (OWN.to_string(), false, 1),
        ("DFS, 1 thread".to_string(), true, 1),
    ];
    if a.threads > 1 {
        checkers.push((format!("DFS, {} threads", a.threads), true, a.threads));
    }
    let mut rows = Vec::new();
    for (group, (checker, dfs, threads)) in checkers.into_iter().enumerate() {
        let own = checker == OWN;
        let mut models = vec![
            (
                format!("2PC, {} resource managers", a.rms),
                if own { "2pc-own" } else { "2pc" },
            ),
            (
                "`s2f2x1`".to_string(),
                if own { "s2f2x1-own" } else { "s2f2x1" },
            ),
        ];
        // On BFS, one thread: also s2f2x1 with all 21 properties each on its own (the
        // property work as it was); on DFS, s2f2x1 with its actions in `Config::enabled`'s
        // order (as it was before `BpModel::for_dfs`).
        if !own && !dfs {
            models.push((
                "`s2f2x1`, all 21 properties each on its own".to_string(),
                "s2f2x1-all",
            ));
        } else if !own {
            models.push((
                "`s2f2x1`, actions in `Config::enabled`'s order".to_string(),
                "s2f2x1-fwd",
            ));
            // The machine's own scaling from one thread to --threads, next to the DFS pairs.
            models.push((MACHINE.to_string(), "machine"));
            models.push((MACHINE_SHARED.to_string(), "machine-shared"));
        }
        for (k, (model, which)) in models.into_iter().enumerate() {
            rows.push(Row {
                model,
                checker: checker.clone(),
                which,
                dfs,
                threads,
                group,
                k,
            });
        }
    }
    rows
}

/// The median of `v` (the mean of the middle two for an even count; 0 for none).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// `min..max` of `v` with `prec` decimals, or the one value if all are equal at that precision.
fn spread(v: &[f64], prec: usize) -> String {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (l, h) = (format!("{lo:.prec$}"), format!("{hi:.prec$}"));
    if l == h {
        l
    } else {
        format!("{l}..{h}")
    }
}

/// A count over the rounds: the one value, or `min..max` where the rounds differ (the depth of
/// a DFS on two threads does).
fn counts(v: &[usize]) -> String {
    let (lo, hi) = (v.iter().min(), v.iter().max());
    match (lo, hi) {
        (Some(&l), Some(&h)) if l == h => thousands(l),
        (Some(&l), Some(&h)) => format!("{}..{}", thousands(l), thousands(h)),
        _ => "-".into(),
    }
}

pub fn main(a: &Args) -> ExitCode {
    if a.rms == 0 || a.rms > 12 || a.threads == 0 || a.rounds == 0 || a.rounds > 99 {
        eprintln!(
            "bpspec rate: --rms must be 1..=12, --threads positive and --rounds 1..=99\n\
             usage: {USAGE}"
        );
        return ExitCode::from(2);
    }
    if let Some(which) = &a.one {
        return one(a, which);
    }
    let load_start = loadavg();
    let rows = plan(a);
    let groups = rows.iter().map(|r| r.group).max().map_or(0, |g| g + 1);
    // seen[row][round]
    let mut seen: Vec<Vec<Seen>> = rows.iter().map(|_| Vec::new()).collect();
    for round in 0..a.rounds {
        // Interleaved: every row once a round, the checkers' groups in an order rotated by
        // the round and the models of a group in turn forward and backward, so no row is
        // always the first after another or the first of the run.
        for g in (0..groups).map(|g| (g + round) % groups) {
            let mut members: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].group == g).collect();
            if round % 2 == 1 {
                members.reverse();
            }
            for i in members {
                let r = &rows[i];
                match run_child(r.which, a.rms, r.dfs, r.threads) {
                    Ok(s) => seen[i].push(s),
                    Err(e) => {
                        eprintln!("bpspec rate: {e}");
                        return ExitCode::from(1);
                    }
                }
            }
        }
        eprintln!("bpspec rate: round {} of {} done", round + 1, a.rounds);
    }
    let rate_of = |s: &Seen| s.states as f64 / s.secs.max(1e-9);
    let unique_rate_of = |s: &Seen| s.unique as f64 / s.secs.max(1e-9);
    // States per CPU second: what the run did with the core time it got, which a loaded
    // machine's waits do not dilute (the ticks are 10 ms).
    let cpu_rate_of = |s: &Seen| s.states as f64 / s.cpu.max(0.01);
    let reference = |r: &Row| {
        rows.iter()
            .position(|x| x.group == r.group && x.k == 0)
            .expect("every group has 2PC")
    };
    // A DFS row's own rate on one thread: the same model (k) in the DFS, 1 thread group.
    let one_thread = |r: &Row| {
        rows.iter()
            .position(|x| x.dfs && x.threads == 1 && x.k == r.k)
            .expect("a DFS, 1 thread group")
    };
    println!(
        "model                                            checker          rounds   states   unique  \
         depth   secs  cpu secs  states/s  unique/s  ratio (min..max)      by CPU  vs 1 thread (min..max)  bytes/unique"
    );
    let mut table: Vec<[String; 16]> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let s = &seen[i];
        let per_round = |f: &dyn Fn(usize) -> f64| (0..a.rounds).map(f).collect::<Vec<f64>>();
        let refs = &seen[reference(r)];
        let ratio = per_round(&|k| rate_of(&s[k]) / rate_of(&refs[k]));
        let cpu_ratio = per_round(&|k| cpu_rate_of(&s[k]) / cpu_rate_of(&refs[k]));
        let (speedup, speedup_spread) = if !r.dfs {
            ("-".to_string(), "-".to_string())
        } else if r.threads == 1 {
            ("1.00".to_string(), "-".to_string())
        } else {
            let ones = &seen[one_thread(r)];
            let v = per_round(&|k| rate_of(&s[k]) / rate_of(&ones[k]));
            (format!("{:.2}", median(&v)), spread(&v, 2))
        };
        let secs = median(&per_round(&|k| s[k].secs));
        let cpu = median(&per_round(&|k| s[k].cpu));
        let rate = median(&per_round(&|k| rate_of(&s[k])));
        let unique_rate = median(&per_round(&|k| unique_rate_of(&s[k])));
        let bytes = median(&per_round(&|k| {
            s[k].peak_bytes as f64 / s[k].unique.max(1) as f64
        }));
        let states = counts(&s.iter().map(|x| x.states).collect::<Vec<_>>());
        let unique = counts(&s.iter().map(|x| x.unique).collect::<Vec<_>>());
        let depth = counts(&s.iter().map(|x| x.depth).collect::<Vec<_>>());
        let mut ratio_spread = spread(&ratio, 2);
        let calibration = r.which.starts_with("machine");
        let (mut ratio_text, mut cpu_ratio_text) = (
            format!("{:.2}", median(&ratio)),
            format!("{:.2}", median(&cpu_ratio)),
        );
        let (mut unique, mut depth, mut unique_rate_text, mut bytes_text) = (
            unique,
            depth,
            format!("{:.2} M", unique_rate / 1e6),
            thousands(bytes.round() as usize),
        );
        if calibration {
            // Items, not states: no ratio to a model, no unique states, depth or memory.
            for t in [
                &mut ratio_text,
                &mut ratio_spread,
                &mut cpu_ratio_text,
                &mut unique,
                &mut depth,
                &mut unique_rate_text,
                &mut bytes_text,
            ] {
                *t = "-".into();
            }
        }
        println!(
            "{:<48} {:<16} {:>6} {states:>8} {unique:>8} {depth:>6} {secs:>6.2} {cpu:>9.2} \
             {rate:>9.0} {unique_rate_text:>9}  {ratio_text:>4} ({ratio_spread:<10})  \
             {cpu_ratio_text:>6}  {speedup:>5} ({speedup_spread:<10})  {bytes_text:>12}",
            r.model, r.checker, a.rounds,
        );
        table.push([
            r.model.clone(),
            r.checker.clone(),
            a.rounds.to_string(),
            states,
            unique,
            depth,
            format!("{secs:.2} s"),
            format!("{cpu:.2} s"),
            format!("{:.2} M", rate / 1e6),
            unique_rate_text,
            ratio_text,
            ratio_spread,
            cpu_ratio_text,
            speedup,
            speedup_spread,
            bytes_text,
        ]);
    }
    if let Some(out) = &a.out {
        let mut text = format!(
            "# written by cli/src/rate.rs, run as `bpspec rate --rms {} --threads {} --rounds {} \
             --out FILE` (make perf-doc); do not edit. Each run is a child process of its own; \
             every row ran once a round, the rows interleaved; a figure is the median over the \
             rounds, a ratio the median of the per-round ratios, min..max their spread.\n# {} \
             cores; load average (1, 5, 15 min) {load_start} at the start, {} at the end. \
             docs/perf.md shows it.\n\
             model\tchecker\trounds>\tstates>\tunique>\tdepth>\ttime>\tCPU time>\tstates/s>\t\
             unique states/s>\tratio to 2PC>\tmin..max>\tratio by CPU time>\t\
             DFS rate / its 1-thread rate>\tmin..max>\tpeak bytes per unique state>\n",
            a.rms,
            a.threads,
            a.rounds,
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            loadavg()
        );
        for r in &table {
            text.push_str(&r.join("\t"));
            text.push('\n');
        }
        if let Err(e) = std::fs::write(out, text) {
            eprintln!("bpspec rate: cannot write {}: {e}", out.display());
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// `n` with a comma every three digits, as the book's tables print counts.
pub(crate) fn thousands(n: usize) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first three fields of /proc/loadavg, or `unknown`.
pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
