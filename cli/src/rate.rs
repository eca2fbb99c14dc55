//! `bpspec rate [--rms N]`: the spec's checking rate side by side with a two-phase-commit model
//! (the commit protocol of Gray and Lamport's "Consensus on Transaction Commit", the model
//! stateright ships as its own example), in one run, under the same checker settings: states per
//! second of `s2f2x1` and of 2PC with N resource managers, and their ratio. With `--out FILE` it
//! also writes them as a result table (docs/results/perf-rate.tsv, `make perf-doc`), which
//! docs/perf.md renders; the page says what limits them.

use bpspec_spec::model::model_config;
use stateright::{Checker, Model, Property};
use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

pub const USAGE: &str = "bpspec rate [--rms N] [--threads N] [--out FILE]";

#[derive(clap::Args)]
pub struct Args {
    /// Resource managers in the two-phase-commit model.
    #[arg(long, default_value_t = 7)]
    rms: usize,
    /// Checker threads for the DFS runs (the BFS runs use one, as `bpspec check` does for
    /// `s2f2x1`).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Also write the figures as a tab-separated result table to FILE (docs/results/perf-rate.tsv
    /// in `make perf-doc`).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
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

/// (states, seconds) of one exhaustive run.
fn measure<M>(m: M, dfs: bool, threads: usize) -> (usize, f64)
where
    M: Model + Send + Sync + 'static,
    M::State: std::hash::Hash + Send + Sync + Clone + std::fmt::Debug + PartialEq,
    M::Action: Send + Sync + Clone + std::fmt::Debug + PartialEq,
{
    let t0 = Instant::now();
    let b = m.checker().threads(threads);
    let n = if dfs {
        let c = b.spawn_dfs();
        c.join().state_count()
    } else {
        let c = b.spawn_bfs();
        c.join().state_count()
    };
    (n, t0.elapsed().as_secs_f64())
}

pub fn main(a: &Args) -> ExitCode {
    if a.rms == 0 || a.rms > 12 || a.threads == 0 {
        eprintln!("bpspec rate: --rms must be 1..=12 and --threads positive\nusage: {USAGE}");
        return ExitCode::from(2);
    }
    let load_start = loadavg();
    let spec = || bpspec_spec::model::BpModel::fused(model_config("s2f2x1").expect("known model"));
    println!("model             checker            states      secs   states/s  ratio");
    let mut rows: Vec<[String; 6]> = Vec::new();
    for (label, dfs, threads) in [("BFS, 1 thread", false, 1), ("DFS", true, a.threads)] {
        let (ns, ts) = measure(spec(), dfs, threads);
        let (nt, tt) = measure(TwoPc { rms: a.rms }, dfs, threads);
        let (rs, rt) = (ns as f64 / ts, nt as f64 / tt);
        let checker = if dfs {
            format!("{label}, {threads} threads")
        } else {
            label.to_string()
        };
        let two_pc = format!("2PC, {} resource managers", a.rms);
        for (model, n, t, r, ratio) in [
            (two_pc, nt, tt, rt, 1.0),
            ("`s2f2x1`".to_string(), ns, ts, rs, rs / rt),
        ] {
            println!("{model:<28} {checker:<18} {n:>9} {t:>8.2} {r:>10.0}  {ratio:.2}");
            rows.push([
                model,
                checker.clone(),
                thousands(n),
                format!("{t:.2} s"),
                format!("{:.2} M", r / 1e6),
                format!("{ratio:.2}"),
            ]);
        }
    }
    if let Some(out) = &a.out {
        let mut text = format!(
            "# written by cli/src/rate.rs, run as `bpspec rate --rms {} --threads {} --out FILE` \
             (make perf-doc); do not edit.\n# {} cores; load average (1, 5, 15 min) {load_start} at \
             the start, {} at the end. docs/perf.md shows it.\n\
             model\tchecker\tstates>\ttime>\tstates/s>\tratio to 2PC>\n",
            a.rms,
            a.threads,
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            loadavg()
        );
        for r in &rows {
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
