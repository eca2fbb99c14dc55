//! `bpspec oracle`: run scenarios (docs/scenario.md) and compare observations (docs/cli.md).
//!
//! ```text
//! bpspec oracle run FILE [--engine reference|oracle]     print the observations
//! bpspec oracle check FILE [--engine reference|oracle]   compare with the file's expect; diff
//! bpspec oracle torture [--otp-root DIR] [--schedulers N[,N...]] [--seconds S] [--seed N]
//!                                                        the ERTS torture (cli/src/torture.rs)
//! bpspec oracle erl [--otp-root DIR] FILE...             run on bpspec and on the installed Erlang/OTP
//!                                                        (or the OTP in the Debian root DIR)
//! ```
//! Exit codes: 0 agree (run: ran), 1 differ, 2 bad input or usage, 3 feature not implemented by
//! the engine, 4 engine invariant violated or Erlang/OTP missing or failing.

use bpspec_oracle::erlang::{self, Erl, Summary, Verdict};
use bpspec_oracle::observe::{diff, render};
use bpspec_oracle::run::{run, RunError};
use bpspec_oracle::scenario::load_file;
use bpspec_oracle::target::{BreakpointEngine, RefEngine, SpecOracle};
use bpspec_oracle::*;
use std::process::ExitCode;

pub const USAGE: &str = "bpspec oracle run FILE [--engine reference|oracle] | bpspec oracle check FILE [--engine reference|oracle] | bpspec oracle erl [--otp-root DIR] FILE...";

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

pub fn main(args: &[&str]) -> ExitCode {
    let (cmd, rest) = match args {
        [cmd, rest @ ..] => (*cmd, rest),
        [] => {
            eprintln!("bpspec oracle: bad usage\nusage: {USAGE}");
            return code(EXIT_BAD_INPUT);
        }
    };
    match (cmd, rest) {
        ("run" | "check", [file, opts @ ..]) => {
            let engine = match opts {
                [] | ["--engine", "reference"] => "reference",
                ["--engine", "oracle"] => "oracle",
                _ => {
                    eprintln!("bpspec oracle: bad options {opts:?}\nusage: {USAGE}");
                    return code(EXIT_BAD_INPUT);
                }
            };
            let sc = match load_file(file) {
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
            match diff(exp, &obs) {
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
        ("torture", opts) => crate::torture::oracle_run(opts),
        ("erl", ["--otp-root", dir, files @ ..]) if !files.is_empty() && !dir.is_empty() => {
            erl_main(files, Some(std::path::Path::new(dir)))
        }
        ("erl", ["--otp-root", ..]) => {
            eprintln!(
                "bpspec oracle: --otp-root needs a directory and at least one FILE\nusage: {USAGE}"
            );
            code(EXIT_BAD_INPUT)
        }
        ("erl", files) if !files.is_empty() => erl_main(files, None),
        _ => {
            eprintln!("bpspec oracle: bad usage: {args:?}\nusage: {USAGE}");
            code(EXIT_BAD_INPUT)
        }
    }
}

/// `bpspec oracle erl [--otp-root DIR] FILE...`: the OTP on PATH, or the one in the Debian root
/// `root` (scripts/otp-root.sh; run through chroot).
fn erl_main(files: &[&str], root: Option<&std::path::Path>) -> ExitCode {
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
