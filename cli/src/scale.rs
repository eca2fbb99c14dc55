//! `bpspec scale [--max-secs S] [--threads N] [--out FILE]`: how the cost of checking the spec
//! grows with the instance. Three axes, each from the smallest instance up, one script shape per
//! axis so that only the size changes:
//!
//! - schedulers 1..=4 (1 function, 1 session: add local trace on f0, remove it);
//! - functions 1..=4 (2 schedulers, 1 session: add local trace on every function, remove it);
//! - sessions 1..=3 (2 schedulers, 1 function: every session adds local trace on f0, then
//!   session 0 removes its own).
//!
//! Each instance runs the checker `make check` uses for its large models (DFS with symmetry over
//! schedulers, `--threads` threads) with a time limit of `--max-secs`; an axis stops at its first
//! instance that does not finish (that row says so). With `--out FILE` the rows go to a result
//! table (docs/results/perf-scale.tsv, `make scale-doc`), which docs/perf.md renders beside
//! loom's executions against preemption bound (models/tests/loom_scale.rs).

use bpspec_spec::model::{bits, BpModel, Config, PatternKind, StagerOp, State};
use stateright::{Checker, Model};
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub const USAGE: &str = "bpspec scale [--max-secs S] [--threads N] [--out FILE]";

#[derive(clap::Args)]
pub struct Args {
    /// Time limit of one instance, in seconds; an axis stops at its first instance over it.
    #[arg(long, default_value_t = 300)]
    max_secs: u64,
    /// Checker threads (DFS with symmetry).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Also write the rows as a tab-separated result table to FILE.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

/// One instance of an axis: its name, (schedulers, functions, sessions) and its script.
struct Instance {
    axis: &'static str,
    size: (u8, u8, u8),
    script: Vec<StagerOp>,
}

/// The instances of the three axes, smallest first within each.
fn instances() -> Vec<Instance> {
    use PatternKind::{False, True};
    let tp = StagerOp::tp;
    let l = bits::LOCAL;
    let mut v = Vec::new();
    for s in 1..=4u8 {
        v.push(Instance {
            axis: "schedulers",
            size: (s, 1, 1),
            script: vec![tp(0, 0b1, True, l), tp(0, 0b1, False, l)],
        });
    }
    for f in 1..=4u8 {
        let all = (1u8 << f) - 1;
        v.push(Instance {
            axis: "functions",
            size: (2, f, 1),
            script: vec![tp(0, all, True, l), tp(0, all, False, l)],
        });
    }
    for x in 1..=3u8 {
        let mut script: Vec<StagerOp> = (0..x).map(|n| tp(n, 0b1, True, l)).collect();
        script.push(tp(0, 0b1, False, l));
        v.push(Instance {
            axis: "sessions",
            size: (2, 1, x),
            script,
        });
    }
    v
}

/// What one run saw: (states, unique, depth, seconds, finished, safety properties failing in
/// the last state of the fused safety property's counterexample).
struct Seen {
    states: usize,
    unique: usize,
    depth: usize,
    secs: f64,
    finished: bool,
    discoveries: usize,
}

fn measure(cfg: Config, threads: usize, limit: Duration) -> Seen {
    // Fused, as `bpspec check` runs a baseline (run::run): a violation counts its members.
    let m = BpModel::fused(cfg).for_dfs();
    let t0 = Instant::now();
    let c = m
        .clone()
        .checker()
        .threads(threads)
        .timeout(limit)
        .symmetry_fn(State::representative)
        .spawn_dfs()
        .join();
    let secs = t0.elapsed().as_secs_f64();
    let discoveries = c
        .discovery(bpspec_spec::model::props::FUSED_SAFETY)
        .map_or(0, |p| {
            bpspec_spec::model::props::failing(&m, p.last_state()).len()
        });
    Seen {
        states: c.state_count(),
        unique: c.unique_state_count(),
        depth: c.max_depth(),
        secs,
        // The checker stops at the limit without saying so: a run that reached it did not finish.
        finished: secs < limit.as_secs_f64(),
        discoveries,
    }
}

pub fn main(a: &Args) -> ExitCode {
    if a.max_secs == 0 || a.threads == 0 {
        eprintln!("bpspec scale: --max-secs and --threads must be positive\nusage: {USAGE}");
        return ExitCode::from(2);
    }
    let limit = Duration::from_secs(a.max_secs);
    let load_start = crate::rate::loadavg();
    let mut rows: Vec<String> = Vec::new();
    let mut stopped: Vec<&str> = Vec::new();
    let mut ok = true;
    println!("axis        s f x      states      unique  depth      secs  finished");
    for i in instances() {
        if stopped.contains(&i.axis) {
            continue;
        }
        let (s, f, x) = i.size;
        let threads = a.threads;
        let cfg = Config::hits(s, f, x, i.script);
        if let Err(e) = cfg.validate() {
            eprintln!("bpspec scale: {} instance s{s}f{f}x{x}: {e}", i.axis);
            return ExitCode::from(2);
        }
        let seen = bpspec_reference::watchdog::guard(
            &format!("bpspec scale {} s{s}f{f}x{x}", i.axis),
            move || measure(cfg, threads, limit),
        );
        println!(
            "{:<10} {s} {f} {x} {:>11} {:>11} {:>6} {:>9.2}  {}",
            i.axis, seen.states, seen.unique, seen.depth, seen.secs, seen.finished
        );
        if seen.discoveries > 0 {
            eprintln!(
                "bpspec scale: {} s{s}f{f}x{x}: {} safety properties violated by the engine's spec",
                i.axis, seen.discoveries
            );
            ok = false;
        }
        let finished = if seen.finished {
            "yes".to_string()
        } else {
            format!("no (stopped at {} s)", a.max_secs)
        };
        rows.push(format!(
            "{}\t{s}\t{f}\t{x}\t{}\t{}\t{}\t{:.2} s\t{finished}",
            i.axis,
            crate::rate::thousands(seen.states),
            crate::rate::thousands(seen.unique),
            seen.depth,
            seen.secs
        ));
        if !seen.finished {
            stopped.push(i.axis);
        }
    }
    if let Some(out) = &a.out {
        let mut text = format!(
            "# written by cli/src/scale.rs, run as `bpspec scale --max-secs {} --threads {} --out \
             FILE` (make scale-doc); do not edit.\n# DFS with symmetry over schedulers, {} checker \
             threads; {} cores; load average (1, 5, 15 min) {load_start} at the start, {} at the \
             end. docs/perf.md shows it.\n\
             axis\tschedulers>\tfunctions>\tsessions>\tstates>\tunique>\tdepth>\ttime>\tfinished\n",
            a.max_secs,
            a.threads,
            a.threads,
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            crate::rate::loadavg()
        );
        for r in &rows {
            text.push_str(r);
            text.push('\n');
        }
        if let Err(e) = std::fs::write(out, text) {
            eprintln!("bpspec scale: cannot write {}: {e}", out.display());
            return ExitCode::from(1);
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
