//! `bpspec shard i/N [--prefix P]`: print the lines of stdin (unit names: test names, model
//! names, part names) that belong to shard i of N. A line's key is `P` followed by the line; the
//! split is bpspec_models::results::Shard's stable hash, the same one the other parts use.

use bpspec_models::results::Shard;
use std::io::BufRead;
use std::process::ExitCode;

pub const USAGE: &str = "bpspec shard i/N [--prefix P] < NAMES";

#[derive(clap::Args)]
pub struct Args {
    /// The shard, i/N with 1 <= i <= N (empty: every line).
    #[arg(value_name = "i/N", value_parser = parse_shard)]
    shard: Shard,
    /// Prepended to each line to form its key (e.g. the test binary's name).
    #[arg(long, default_value = "")]
    prefix: String,
}

pub fn parse_shard(s: &str) -> Result<Shard, String> {
    Shard::parse(s)
}

pub fn main(a: &Args) -> ExitCode {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else {
            eprintln!("bpspec shard: cannot read stdin");
            return ExitCode::from(2);
        };
        let name = line.trim();
        if !name.is_empty() && a.shard.contains(&format!("{}{name}", a.prefix)) {
            println!("{name}");
        }
    }
    ExitCode::SUCCESS
}
