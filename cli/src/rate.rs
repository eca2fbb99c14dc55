//! `bpspec rate [--rms N]`: the spec's checking rate side by side with a two-phase-commit model
//! (the commit protocol of Gray and Lamport's "Consensus on Transaction Commit", the model
//! stateright ships as its own example), in one run, under the same checker settings: states per
//! second of `s2f2x1` and of 2PC with N resource managers, and their ratio. docs/perf.md records
//! the figures and what limits them.

use bpspec_spec::model::model_config;
use stateright::{Checker, Model, Property};
use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

pub const USAGE: &str = "bpspec rate [--rms N] [--threads N]";

#[derive(clap::Args)]
pub struct Args {
    /// Resource managers in the two-phase-commit model.
    #[arg(long, default_value_t = 7)]
    rms: usize,
    /// Checker threads for the DFS runs (the BFS runs use one, as `bpspec check` does for
    /// `s2f2x1`).
    #[arg(long, default_value_t = 2)]
    threads: usize,
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
    let spec = || bpspec_spec::model::BpModel::new(model_config("s2f2x1").expect("known model"));
    println!("model             checker            states      secs   states/s  ratio");
    for (label, dfs, threads) in [("bfs, 1 thread", false, 1), ("dfs", true, a.threads)] {
        let (ns, ts) = measure(spec(), dfs, threads);
        let (nt, tt) = measure(TwoPc { rms: a.rms }, dfs, threads);
        let (rs, rt) = (ns as f64 / ts, nt as f64 / tt);
        let checker = if dfs {
            format!("{label}, {threads} threads")
        } else {
            label.to_string()
        };
        println!(
            "2pc {:<13} {checker:<18} {nt:>9} {tt:>8.2} {rt:>10.0}  1",
            format!("rms={}", a.rms)
        );
        println!(
            "s2f2x1            {checker:<18} {ns:>9} {ts:>8.2} {rs:>10.0}  {:.2}",
            rs / rt
        );
    }
    ExitCode::SUCCESS
}
