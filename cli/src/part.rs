//! `bpspec part NAME --checker C [options] -- CMD...`: run one part of `make check` or
//! `make test` (a command, usually `cargo test ...`), keep its output in a log file, show its
//! progress, and record one row for it in the results directory (docs/results.md). Parts whose
//! checkers record their own rows (loom, shuttle, the spec models) are run with `--no-row`: they
//! get a row of their own only if the command fails.
//!
//! Progress: lines the part prints that start with `[progress]` (bpspec_models::results::Progress,
//! the loom and shuttle harnesses) are shown as they come, prefixed with the part's name, on a
//! spinner (indicatif) when stderr is a terminal and as plain lines otherwise; a part that prints
//! none gets a line with its elapsed time every `BPSPEC_PROGRESS_SECS` seconds (default 15).
//!
//! Exit codes: 0 the part ran and its row is recorded, whatever its verdict (the table's verdict
//! is `bpspec report`'s exit status); 2 bad usage or no results directory.

use bpspec_models::results::{record_in, Shard, Verdict};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const USAGE: &str = "bpspec part NAME --checker C [--progress P] [--scenario S] [--bound B] [--results DIR] [--shard i/N] [--skip REASON] [--no-row] -- CMD...";

#[derive(clap::Args)]
pub struct Args {
    /// The part's name: its log is DIR/logs/NAME.log, and its shard key.
    name: String,
    /// The checker column of its row.
    #[arg(long)]
    checker: String,
    /// The progress column (the engine's progress implementation, or "-").
    #[arg(long, default_value = "-")]
    progress: String,
    /// The scenario column (default: NAME).
    #[arg(long)]
    scenario: Option<String>,
    /// The bound column: what the part was run with (cases, seeds, OTP release).
    #[arg(long, default_value = "-")]
    bound: String,
    /// Results directory (default: $BPSPEC_RESULTS).
    #[arg(long)]
    results: Option<PathBuf>,
    /// Run only if NAME belongs to this shard (i/N).
    #[arg(long, value_parser = crate::shard::parse_shard)]
    shard: Option<Shard>,
    /// Record the part as skipped, with this reason, and do not run it (for a part that
    /// cannot run on this machine, e.g. no OTP root).
    #[arg(long, value_name = "REASON")]
    skip: Option<String>,
    /// Record a row only if the command fails (the checker records its own rows, but a part
    /// that fails before it could still shows in the table).
    #[arg(long)]
    no_row: bool,
    /// The command to run.
    #[arg(last = true, required = true)]
    cmd: Vec<String>,
}

pub fn main(a: &Args) -> ExitCode {
    let Some(dir) = a
        .results
        .clone()
        .or_else(|| std::env::var_os("BPSPEC_RESULTS").map(PathBuf::from))
    else {
        eprintln!(
            "bpspec part: no results directory (--results DIR or BPSPEC_RESULTS)\nusage: {USAGE}"
        );
        return ExitCode::from(2);
    };
    if let Some(s) = a.shard {
        if !s.contains(&a.name) {
            println!("[part] {}: not in shard {s}", a.name);
            return ExitCode::SUCCESS;
        }
    }
    let scenario = a.scenario.clone().unwrap_or_else(|| a.name.clone());
    let row = |bound: &str, observed: &str, secs: f64, detail: String| {
        if !a.no_row || observed != "hold" {
            record_in(
                &dir,
                &Verdict {
                    checker: &a.checker,
                    progress: &a.progress,
                    scenario: &scenario,
                    variant: "baseline",
                    bound: bound.to_string(),
                    expected: "hold",
                    observed,
                    seconds: secs,
                    detail,
                },
            );
        }
    };
    if let Some(why) = a.skip.as_deref().filter(|w| !w.is_empty()) {
        println!("[part] {}: skipped ({why})", a.name);
        row(&a.bound, "skipped", 0.0, why.to_string());
        return ExitCode::SUCCESS;
    }
    let logs = dir.join("logs");
    let log_path = logs.join(format!("{}.log", a.name));
    let log = match std::fs::create_dir_all(&logs).and_then(|()| std::fs::File::create(&log_path)) {
        Ok(f) => Arc::new(Mutex::new(f)),
        Err(e) => {
            eprintln!("bpspec part: cannot write {}: {e}", log_path.display());
            return ExitCode::from(2);
        }
    };
    let t0 = Instant::now();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let cpu0 = crate::procstat::children_cpu_secs();
    println!("[part] {}: started, log {}", a.name, log_path.display());
    let mut child = match Command::new(&a.cmd[0])
        .args(&a.cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            row(
                &a.bound,
                "VIOLATED",
                0.0,
                format!("cannot run {}: {e}", a.cmd[0]),
            );
            eprintln!("bpspec part: {}: cannot run {}: {e}", a.name, a.cmd[0]);
            return ExitCode::SUCCESS;
        }
    };
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let b = indicatif::ProgressBar::new_spinner();
        b.enable_steady_tick(Duration::from_millis(250));
        b.set_message(format!("{}: running", a.name));
        Some(b)
    } else {
        None
    };
    let bar = Arc::new(bar);
    let last = Arc::new(Mutex::new(Instant::now()));
    let tests = Arc::new(Mutex::new((0u64, None::<String>)));
    let mut readers = Vec::new();
    let streams: Vec<Box<dyn std::io::Read + Send>> = vec![
        Box::new(child.stdout.take().expect("piped")),
        Box::new(child.stderr.take().expect("piped")),
    ];
    for stream in streams {
        let (log, bar, last, tests, name) = (
            log.clone(),
            bar.clone(),
            last.clone(),
            tests.clone(),
            a.name.clone(),
        );
        readers.push(std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if let Ok(mut f) = log.lock() {
                    let _ = writeln!(f, "{line}");
                }
                note(&line, &tests);
                if let Some(p) = line.strip_prefix("[progress] ") {
                    if let Ok(mut l) = last.lock() {
                        *l = Instant::now();
                    }
                    match bar.as_ref() {
                        Some(b) => b.set_message(format!("{name}: {p}")),
                        None => eprintln!("[progress] {name}: {p}"),
                    }
                }
            }
        }));
    }
    let every = std::env::var("BPSPEC_PROGRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(15);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        std::thread::sleep(Duration::from_millis(200));
        let quiet = last.lock().map(|l| l.elapsed().as_secs()).unwrap_or(0);
        if every > 0 && quiet >= every {
            if let Ok(mut l) = last.lock() {
                *l = Instant::now();
            }
            let msg = format!(
                "{}: {} s, bound {}",
                a.name,
                t0.elapsed().as_secs(),
                a.bound
            );
            match bar.as_ref() {
                Some(b) => b.set_message(msg),
                None => eprintln!("[progress] {msg}"),
            }
        }
    };
    for r in readers {
        let _ = r.join();
    }
    if let Some(b) = bar.as_ref() {
        b.finish_and_clear();
    }
    let secs = t0.elapsed().as_secs_f64();
    let (n, failure) = tests.lock().map(|t| t.clone()).unwrap_or_default();
    let bound = if n > 0 {
        format!("{} tests={n}", a.bound)
    } else {
        a.bound.clone()
    };
    let (observed, detail) = match status {
        Ok(s) if s.success() => ("hold", String::new()),
        Ok(s) => (
            "VIOLATED",
            failure.unwrap_or_else(|| format!("{s}; see {}", log_path.display())),
        ),
        Err(e) => ("VIOLATED", format!("cannot wait for the part: {e}")),
    };
    // The part's CPU seconds: everything its command ran and waited for (cargo, the test
    // binaries, erl), which the part waited for in turn.
    let cpu = cpu0
        .zip(crate::procstat::children_cpu_secs())
        .map(|((u0, s0), (u1, s1))| (u1 - u0, s1 - s0));
    match cpu {
        Some((u, sys)) => {
            println!(
                "[part] {}: {observed} in {secs:.0} s (CPU: user {u:.0} s, system {sys:.0} s)",
                a.name
            );
            record_times(&dir, &a.name, started, secs, u, sys);
        }
        None => println!("[part] {}: {observed} in {secs:.0} s", a.name),
    }
    if observed != "hold" {
        // The end of the log, so that a failing CI run shows why without the artefacts.
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        eprintln!("[part] {}: last lines of {}:", a.name, log_path.display());
        for l in &lines[lines.len().saturating_sub(40)..] {
            eprintln!("  {l}");
        }
    }
    row(&bound, observed, secs, detail);
    ExitCode::SUCCESS
}

/// The file of the parts' times in a results directory: one line per part that ran, `NAME`,
/// its start (seconds since the Unix epoch), wall, user and system seconds, tab-separated, in the
/// order the parts ended. Not a `*.tsv` of the directory itself, which `bpspec report` reads as
/// result rows; `make docs-results` makes docs/results/check-parts.tsv from it.
pub const TIMES: &str = "parts/times.tsv";

/// Appends the part's line to [`TIMES`] in one write on a file opened for appending, so the lines
/// of parts that end at once (`make -j`) do not interleave. A failure is reported, not fatal: the
/// row is what counts.
fn record_times(dir: &std::path::Path, name: &str, started: f64, wall: f64, user: f64, sys: f64) {
    let path = dir.join(TIMES);
    let line = format!("{name}\t{started:.1}\t{wall:.1}\t{user:.1}\t{sys:.1}\n");
    let r = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
        })
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = r {
        eprintln!("bpspec part: cannot append to {}: {e}", path.display());
    }
}

/// Counts passed tests (`test result: ok. N passed`) and keeps the first failure line.
fn note(line: &str, tests: &Mutex<(u64, Option<String>)>) {
    let Ok(mut t) = tests.lock() else { return };
    if let Some(rest) = line.strip_prefix("test result: ") {
        if let Some(n) = rest
            .split(['.', ';'])
            .find_map(|p| p.trim().strip_suffix(" passed"))
            .and_then(|n| n.trim().parse::<u64>().ok())
        {
            t.0 += n;
        }
    }
    if t.1.is_none() && (line.contains("panicked at") || line.starts_with("error")) {
        t.1 = Some(line.trim().to_string());
    }
}
