//! `bpspec`: the command line (clap). One subcommand enum, [`Cmd`]; each subcommand's arguments
//! live in its own module, so a new subcommand is one variant plus one module.
//!
//! ```text
//! bpspec report DIR...  merge the result files of DIR... (shards) into one table, JSON and JUnit
//!                       (--markdown KIND FILE..., --timeline FILE: the book's generated blocks)
//! bpspec mutants        list the mutants and what each one breaks
//! bpspec check ...      run the spec's stateright models (cli/src/check.rs)
//! bpspec explore NAME   serve stateright's Explorer for one model (cli/src/explore.rs)
//! bpspec oracle ...     run scenarios and compare observations (cli/src/oracle.rs)
//! bpspec part ...       run one part of make check and record its row (cli/src/part.rs)
//! bpspec shard i/N      keep the lines of stdin that belong to shard i of N (cli/src/shard.rs)
//! bpspec rate           the spec's checking rate next to a 2PC model (cli/src/rate.rs)
//! bpspec scale          states and time against schedulers, functions, sessions (cli/src/scale.rs)
//! bpspec torture ...    the engine torture on real threads (cli/src/torture.rs)
//! ```
//! Exit codes: 0 all verdicts as expected; 1 some verdict differs from its expectation (a
//! baseline violated, or a mutant expected to be killed survived); 2 bad usage or unreadable
//! input. `bpspec oracle` adds 3 and 4 (docs/cli.md). `--help` and `--version` exit 0.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The allocator of the `bpspec` binary (cli/Cargo.toml; docs/perf.md, "The allocator"); a
/// shuttle build of the workspace takes bpspec-models' instead.
#[cfg(not(shuttle))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod check;
mod docgen;
mod explore;
mod oracle;
mod own_bfs;
mod part;
mod procstat;
mod rate;
mod report;
mod scale;
mod shard;
mod torture;

const USAGE: &str = "usage: bpspec report DIR... | bpspec mutants | bpspec oracle run|check|erl FILE... | bpspec check ... | bpspec explore NAME ... | bpspec part ... -- CMD... | bpspec shard i/N | bpspec torture ... | bpspec help";

/// Model checks, reference engine and oracle for how ERTS changes breakpoints while every
/// scheduler keeps running.
#[derive(Parser)]
#[command(name = "bpspec", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Merge result files (one DIR per shard) into one table; write it as JSON and JUnit XML.
    Report(report::Args),
    /// List the reference engine's mutants.
    Mutants,
    /// Run the spec's stateright models (and, with --mutants, the kill matrix).
    Check(check::Args),
    /// Serve stateright's Explorer for one model.
    Explore(explore::Args),
    /// Run scenarios on an engine and compare observations (docs/cli.md).
    Oracle(oracle::Args),
    /// Run one part of make check (a command), show its progress and record its row.
    Part(part::Args),
    /// Print the lines of stdin (unit names) that belong to one shard.
    Shard(shard::Args),
    /// The spec's checking rate side by side with a two-phase-commit model (docs/perf.md).
    Rate(rate::Args),
    /// States and time of the spec against schedulers, functions and sessions (docs/perf.md).
    Scale(scale::Args),
    /// The engine torture on real scheduler threads under pattern churn (docs/torture.md).
    Torture(torture::Args),
}

/// The usage line printed with a parse error, by subcommand (the messages the tests check).
fn usage_for(sub: Option<&str>) -> String {
    match sub {
        Some("check") => format!("usage: {}", check::USAGE),
        Some("explore") => format!("usage: {}", explore::USAGE),
        Some("oracle") => format!("usage: {}", oracle::USAGE),
        Some("report") => format!("usage: {}", report::USAGE),
        Some("part") => format!("usage: {}", part::USAGE),
        Some("shard") => format!("usage: {}", shard::USAGE),
        Some("torture") => format!("usage: {}", torture::USAGE),
        _ => USAGE.to_string(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("help") && args.len() == 2 {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if matches!(e.kind(), DisplayHelp | DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let sub = args.get(1).map(String::as_str).filter(|s| {
                [
                    "check", "explore", "oracle", "report", "part", "shard", "mutants",
                ]
                .contains(s)
            });
            let who = sub.map_or("bpspec".to_string(), |s| format!("bpspec {s}"));
            let msg = e.render().to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            eprintln!(
                "{who}: bad usage: {first} (arguments: {:?})\n{}",
                &args[1..],
                usage_for(sub)
            );
            return ExitCode::from(2);
        }
    };
    match cli.cmd {
        Cmd::Report(a) => report::main(&a),
        Cmd::Mutants => {
            for m in bpspec_reference::Mutant::ALL {
                println!("{m}");
            }
            for m in bpspec_reference::Mutant::COLLECTION {
                println!("{m}");
            }
            for m in bpspec_reference::Mutant::SESSIONS {
                println!("{m}");
            }
            for m in bpspec_reference::Mutant::READERS {
                println!("{m}");
            }
            for m in bpspec_reference::Mutant::LOAD {
                println!("{m}");
            }
            for m in bpspec_reference::Mutant::FENCE_HALVES {
                println!("{m}");
            }
            for m in bpspec_reference::Mutant::COUNTS {
                println!("{m}");
            }
            ExitCode::SUCCESS
        }
        Cmd::Check(a) => check::main(&a),
        Cmd::Explore(a) => explore::main(&a),
        Cmd::Oracle(a) => oracle::main(&a),
        Cmd::Part(a) => part::main(&a),
        Cmd::Shard(a) => shard::main(&a),
        Cmd::Rate(a) => rate::main(&a),
        Cmd::Scale(a) => scale::main(&a),
        Cmd::Torture(a) => torture::run(&a),
    }
}
