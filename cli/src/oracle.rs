//! `bpspec oracle`: run scenarios (docs/scenario.md) and compare observations (docs/cli.md).
//!
//! ```text
//! bpspec oracle run FILE [--engine reference|oracle]     print the observations
//! bpspec oracle check FILE [--engine reference|oracle]   compare with the file's expect; diff
//! bpspec oracle torture [--otp-root DIR] [--schedulers N[,N...]] [--seconds S] [--seed N]
//!                                                        the ERTS torture (cli/src/torture.rs)
//! bpspec oracle erl [--otp-root DIR] FILE...             run on bpspec and on the installed Erlang/OTP
//!                                                        (or the OTP in the Debian root DIR)
//! bpspec oracle check --engine-cmd CMD [FILE|DIR...] [--count N] [--seed S] [--features F,..]
//!                     [--out DIR] [--timeout SECS] [--shrink-max K]   another engine vs the oracle
//! bpspec oracle gen --count N [--seed S] [--features F,..] [--out DIR] [--coverage]
//! ```
//! FILE may be a seq_trace scenario (docs/seq_trace_scenario.md) or `-` (stdin) for run/check.
//! Exit codes: 0 agree (run: ran), 1 differ, 2 bad input or usage, 3 feature not implemented by
//! the engine, 4 engine invariant violated or Erlang/OTP missing or failing.

use bpspec_oracle::erlang::{self, Erl, Summary, Verdict};
use bpspec_oracle::observe::{diff_expect, render};
use bpspec_oracle::run::{run, RunError};
use bpspec_oracle::scenario::{load, load_file};
use bpspec_oracle::target::{BreakpointEngine, RefEngine, SpecOracle};
use bpspec_oracle::*;
use std::process::ExitCode;

mod kit;

pub const USAGE: &str = "bpspec oracle run FILE [--engine reference|oracle] | bpspec oracle check FILE [--engine reference|oracle] | bpspec oracle erl [--otp-root DIR] FILE... | bpspec oracle check --engine-cmd CMD [FILE|DIR...] [--count N] [--seed S] [--features F,..] [--out DIR] [--timeout SECS] [--shrink-max K] | bpspec oracle gen --count N [--seed S] [--features F,..] [--out DIR] [--coverage] | bpspec oracle torture [--otp-root DIR] [--schedulers N[,N...]] [--seconds S] [--seed N] [--workers N] [--resets auto|on|off]";

fn code(c: u8) -> ExitCode {
    ExitCode::from(c)
}

fn run_error(e: &RunError) -> ExitCode {
    eprintln!("bpspec oracle: {e}");
    code(match e {
        RunError::Unsupported { .. } => EXIT_UNSUPPORTED,
        RunError::Limit { .. } => EXIT_BAD_INPUT,
        RunError::Fault { .. } => EXIT_FAULT,
    })
}

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    cmd: OracleCmd,
}

#[derive(clap::Subcommand)]
enum OracleCmd {
    /// Print the observations, one JSON object per line.
    Run(RunArgs),
    /// Compare the observations with the file's expect and print a diff; with --engine-cmd, run
    /// another engine over files, directories and generated scenarios against the oracle.
    Check(CheckArgs),
    /// Run each file on bpspec and on the installed Erlang/OTP (or the one in a Debian root).
    Erl(ErlArgs),
    /// Write N generated scenario files (the random generator, oracle/src/gen.rs).
    Gen(GenArgs),
    /// The ERTS torture: pattern churn, collections and sessions on a real node (docs/torture.md).
    Torture(crate::torture::OracleArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The scenario file; with --engine-cmd, any number of files and directories.
    files: Vec<String>,
    /// The engine: bpspec's concurrent engine (reference) or the sequential oracle.
    #[arg(long, default_value = "reference", value_parser = ["reference", "oracle"])]
    engine: String,
    /// An external engine: reads a scenario on stdin, prints observations (docs/conformance-kit.md).
    #[arg(long, value_name = "CMD")]
    engine_cmd: Option<String>,
    #[command(flatten)]
    gen: GenOpts,
    /// Seconds per scenario before the external engine counts as failing.
    #[arg(long, default_value_t = 10, requires = "engine_cmd")]
    timeout: u64,
    /// Shrinking candidates tried per disagreement at most.
    #[arg(long, requires = "engine_cmd")]
    shrink_max: Option<usize>,
}

#[derive(clap::Args)]
struct GenOpts {
    /// Generated scenarios to run (check --engine-cmd) or write (gen); at most 100000.
    #[arg(long, default_value_t = 0)]
    count: usize,
    /// The generator's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Features the generator may draw, comma-separated.
    #[arg(long, default_value = kit::DEFAULT_FEATURES)]
    features: String,
    /// Where to write files (gen: generated; check --engine-cmd: bpspec-shrunk).
    #[arg(long, value_name = "DIR")]
    out: Option<String>,
}

#[derive(clap::Args)]
struct GenArgs {
    #[command(flatten)]
    gen: GenOpts,
    /// Print which two-pattern sequences were drawn, and name those never drawn.
    #[arg(long)]
    coverage: bool,
}

fn kit_opts(g: &GenOpts) -> kit::Opts {
    kit::Opts {
        seed: g.seed,
        count: g.count,
        features: g.features.clone(),
        out: g.out.as_ref().map(std::path::PathBuf::from),
        ..kit::Opts::default()
    }
}

#[derive(clap::Args)]
struct RunArgs {
    /// The scenario file (docs/scenario.md).
    file: String,
    /// The engine: bpspec's concurrent engine (reference) or the sequential oracle.
    #[arg(long, default_value = "reference", value_parser = ["reference", "oracle"])]
    engine: String,
}

#[derive(clap::Args)]
struct ErlArgs {
    /// Run ERTS from the Debian root DIR (scripts/otp-root.sh) through chroot.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    otp_root: Option<Option<String>>,
    /// Scenario files.
    files: Vec<String>,
}

pub fn main(a: &Args) -> ExitCode {
    match &a.cmd {
        OracleCmd::Run(r) => run_or_check("run", &r.file, &r.engine),
        OracleCmd::Check(c) if c.engine_cmd.is_some() => {
            let o = kit::Opts {
                files: c.files.clone(),
                engine_cmd: c.engine_cmd.clone(),
                timeout: c.timeout.max(1),
                shrink_max: c.shrink_max.unwrap_or(usize::MAX),
                ..kit_opts(&c.gen)
            };
            code(kit::engine_run(&o))
        }
        OracleCmd::Check(c) => match c.files.as_slice() {
            [file] => run_or_check("check", file, &c.engine),
            _ => {
                eprintln!("bpspec oracle: check needs one FILE (or --engine-cmd)\nusage: {USAGE}");
                code(EXIT_BAD_INPUT)
            }
        },
        OracleCmd::Torture(t) => crate::torture::oracle_run(t),
        OracleCmd::Gen(g) => code(kit::gen_run(&kit::Opts {
            coverage: g.coverage,
            ..kit_opts(&g.gen)
        })),
        OracleCmd::Erl(e) => {
            let files: Vec<&str> = e.files.iter().map(String::as_str).collect();
            match &e.otp_root {
                Some(Some(dir)) if !files.is_empty() && !dir.is_empty() => {
                    erl_main(&files, Some(std::path::Path::new(dir)))
                }
                Some(_) => {
                    eprintln!(
                        "bpspec oracle: --otp-root needs a directory and at least one FILE\nusage: {USAGE}"
                    );
                    code(EXIT_BAD_INPUT)
                }
                None if !files.is_empty() => erl_main(&files, None),
                None => {
                    eprintln!("bpspec oracle: erl needs at least one FILE\nusage: {USAGE}");
                    code(EXIT_BAD_INPUT)
                }
            }
        }
    }
}

fn run_or_check(cmd: &str, file: &str, engine: &str) -> ExitCode {
    let text = match kit::read_text(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("bpspec oracle: {e}");
            return code(EXIT_BAD_INPUT);
        }
    };
    if bpspec_oracle::seq::is_seq_trace(&text) {
        return code(kit::seq_run_check(cmd, file, &text));
    }
    let name = if file == "-" { "<stdin>" } else { file };
    let sc = match load(name, &text) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("bpspec oracle: {e}");
            return code(EXIT_BAD_INPUT);
        }
    };
    let mut eng: Box<dyn BreakpointEngine> = if engine == "reference" {
        Box::new(RefEngine::new(sc.funcs.clone()))
    } else {
        SpecOracle::boxed(sc.funcs.clone())
    };
    let obs = match run(&sc, eng.as_mut()) {
        Ok(o) => o,
        Err(e) => return run_error(&e),
    };
    if cmd == "run" {
        print!("{}", render(&obs));
        return code(EXIT_AGREE);
    }
    let Some(exp) = sc.scenario.expect.as_ref() else {
        eprintln!("bpspec oracle: {file}: at $.expect: check needs the expected observations (the scenario has no expect)");
        return code(EXIT_BAD_INPUT);
    };
    match diff_expect(exp, &obs) {
        None => {
            println!("{file}: {} observations agree", obs.len());
            code(EXIT_AGREE)
        }
        Some(d) => {
            println!("{file}: observations differ (- expected, + observed):\n{d}");
            code(EXIT_DIFFER)
        }
    }
}

/// `bpspec oracle erl [--otp-root DIR] FILE...`: the OTP on PATH, or the one in the Debian root
/// `root` (scripts/otp-root.sh; run through chroot).
fn erl_main(files: &[&str], root: Option<&std::path::Path>) -> ExitCode {
    // seq_trace files run through their own driver (oracle/src/seq.rs); the worse exit wins.
    let mut seq_files = Vec::new();
    let mut bp_files = Vec::new();
    for f in files {
        match kit::read_text(f) {
            Ok(t) if bpspec_oracle::seq::is_seq_trace(&t) => seq_files.push((*f, t)),
            _ => bp_files.push(*f),
        }
    }
    if !seq_files.is_empty() {
        let c = kit::seq_erl(&seq_files, root);
        if bp_files.is_empty() || c == EXIT_BAD_INPUT || c == EXIT_FAULT {
            return code(c);
        }
        let b = erl_bp(&bp_files, root);
        return code(if b == EXIT_AGREE { c } else { b });
    }
    code(erl_bp(files, root))
}

fn erl_bp(files: &[&str], root: Option<&std::path::Path>) -> u8 {
    let code = |c: u8| c;
    let mut scs = Vec::new();
    for f in files {
        match load_file(f) {
            Ok(sc) => scs.push(sc),
            Err(e) => {
                eprintln!("bpspec oracle: {e}");
                return code(EXIT_BAD_INPUT);
            }
        }
    }
    let erl = match root.map_or_else(Erl::setup, Erl::setup_root) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("bpspec oracle: {e}");
            return code(EXIT_FAULT);
        }
    };
    let vs = match erlang::differential(&erl, &scs) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("bpspec oracle: {e}");
            return code(EXIT_FAULT);
        }
    };
    for (f, v) in files.iter().zip(&vs) {
        match v {
            Verdict::Differ(d) => println!("DIFFER {f}\n{d}"),
            Verdict::Error(e) => println!("ERROR {f}: {e}"),
            other => println!("{other:?} {f}"),
        }
    }
    let s = Summary::of(&vs);
    println!("{}: {s}", erl.origin());
    // A crashed node (ERTS bug) is a failing Erlang/OTP, as is a failing driver.
    if s.error > 0 || s.erts_crash > 0 {
        code(EXIT_FAULT)
    } else if s.ok() {
        code(EXIT_AGREE)
    } else {
        code(EXIT_DIFFER)
    }
}
