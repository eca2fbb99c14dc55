//! `bpspec`: the command line.
//!
//! ```text
//! bpspec report DIR     print the results table from DIR/*.tsv (written by the model runs)
//! bpspec mutants        list the mutants and what each one breaks
//! bpspec check ...      run the spec's stateright models (cli/src/check.rs)
//! bpspec explore NAME   serve stateright's Explorer for one model (cli/src/explore.rs)
//! ```
//! Exit codes: 0 all verdicts as expected; 1 some verdict differs from its expectation (a
//! baseline violated, or a mutant expected to be killed survived); 2 bad usage or unreadable
//! input.

mod oracle;

use std::process::ExitCode;

mod check;
mod explore;
mod torture;

const USAGE: &str = "usage: bpspec report DIR | bpspec mutants | bpspec oracle run|check|erl FILE... | bpspec check ... | bpspec explore NAME ... | bpspec help";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["report", dir] => report(dir),
        ["oracle", rest @ ..] => oracle::main(rest),
        ["mutants"] => {
            for m in bpspec_reference::Mutant::ALL {
                println!("{m}");
            }
            for m in bpspec_reference::Mutant::COLLECTION {
                println!("{m}");
            }
            for m in bpspec_reference::Mutant::SESSIONS {
                println!("{m}");
            }
            ExitCode::SUCCESS
        }
        ["check", rest @ ..] => check::main(rest),
        ["torture", rest @ ..] => torture::run(rest),
        ["explore", rest @ ..] => explore::main(rest),
        ["help"] | ["--help"] | ["-h"] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("bpspec: bad usage: {:?}\n{USAGE}", args);
            ExitCode::from(2)
        }
    }
}

struct Row {
    cols: Vec<String>,
    source: String,
}

fn report(dir: &str) -> ExitCode {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("bpspec report: cannot read results directory {dir}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        eprintln!(
            "bpspec report: no *.tsv result files in {dir} (run make check or make test first)"
        );
        return ExitCode::from(2);
    }
    let mut rows = Vec::new();
    for p in &paths {
        let text = match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("bpspec report: cannot read {}: {e}", p.display());
                return ExitCode::from(2);
            }
        };
        for (n, line) in text.lines().enumerate() {
            let cols: Vec<String> = line.split('\t').map(str::to_string).collect();
            if cols.len() != 9 {
                eprintln!(
                    "bpspec report: {}:{}: expected 9 tab-separated columns, found {}",
                    p.display(),
                    n + 1,
                    cols.len()
                );
                return ExitCode::from(2);
            }
            rows.push(Row {
                cols,
                source: format!("{}:{}", p.display(), n + 1),
            });
        }
    }
    rows.sort_by(|a, b| {
        (
            &a.cols[0],
            &a.cols[1],
            a.cols[3] != "baseline",
            &a.cols[3],
            &a.cols[2],
        )
            .cmp(&(
                &b.cols[0],
                &b.cols[1],
                b.cols[3] != "baseline",
                &b.cols[3],
                &b.cols[2],
            ))
    });
    let header = [
        "checker",
        "progress",
        "scenario",
        "variant",
        "bound",
        "expected",
        "observed",
        "secs",
        "counterexample",
    ];
    let widths: Vec<usize> = (0..9)
        .map(|i| {
            if i == 8 {
                0
            } else {
                rows.iter()
                    .map(|r| r.cols[i].chars().count())
                    .chain([header[i].len()])
                    .max()
                    .unwrap_or(0)
            }
        })
        .collect();
    let line = |cols: &[&str]| {
        let mut s = String::new();
        for (i, c) in cols.iter().enumerate() {
            if i == 8 {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        println!("{}", s.trim_end());
    };
    line(&header);
    let mut bad = Vec::new();
    for r in &rows {
        let c: Vec<&str> = r.cols.iter().map(String::as_str).collect();
        line(&c);
        let ok = matches!(
            (c[5], c[6]),
            ("hold", "hold")
                | ("killed", "killed")
                | ("survives", "survives")
                | ("survives", "killed")
        );
        if !ok {
            bad.push(format!(
                "{}: {} {} {} on {}: expected {}, observed {}",
                r.source, c[0], c[1], c[3], c[2], c[5], c[6]
            ));
        }
    }
    let (holds, kills) = (
        rows.iter().filter(|r| r.cols[3] == "baseline").count(),
        rows.iter().filter(|r| r.cols[6] == "killed").count(),
    );
    println!();
    println!("{} passed, {} failed", rows.len() - bad.len(), bad.len());
    println!("({holds} baseline runs, {kills} mutant runs killed)");
    if bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        for b in &bad {
            eprintln!("UNEXPECTED: {b}");
        }
        ExitCode::from(1)
    }
}
