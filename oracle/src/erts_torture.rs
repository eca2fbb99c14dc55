//! The ERTS torture (docs/torture.md): `erlang/bpspec_torture.erl` run on a real node, with
//! `+S N:N` schedulers, for a bounded time, on the Erlang/OTP on PATH or in an OTP root (run
//! through `chroot`, like [`crate::erlang::Erl::setup_root`]).
//!
//! The Erlang program prints `bpspec_torture ...` lines; the last one, `bpspec_torture result`,
//! carries every counter (`key=value`). A node that dies (a signal, a non-zero exit, or no result
//! line) is a crash; a non-zero `bad_*` counter is an observable inconsistency.

use crate::erlang::{inner_path, tool};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

const PROGRAM: &str = include_str!("../erlang/bpspec_torture.erl");

/// One run's parameters.
#[derive(Clone, Debug)]
pub struct ErtsTortureConfig {
    /// A Debian root with another Erlang/OTP (`chroot`), or `None` for erl on PATH.
    pub root: Option<PathBuf>,
    pub schedulers: usize,
    pub seconds: u64,
    pub seed: u64,
    /// Worker processes alive at any time.
    pub workers: usize,
    /// Whether the stager may reset call_time/call_memory counters: `Some(false)` keeps them
    /// out (the reset crash erlang/otp#8835, fixed by erlang/otp#8897), `None` lets the program
    /// decide from the release (`auto`: out before OTP 28).
    pub resets: Option<bool>,
}

impl ErtsTortureConfig {
    pub fn describe(&self) -> String {
        format!(
            "otp={} schedulers={} seconds={} seed={} workers={} resets={}",
            self.root
                .as_ref()
                .map_or("PATH".to_string(), |r| format!("chroot {}", r.display())),
            self.schedulers,
            self.seconds,
            self.seed,
            self.workers,
            self.resets_arg()
        )
    }

    /// The program's `Resets` argument.
    pub fn resets_arg(&self) -> &'static str {
        match self.resets {
            None => "auto",
            Some(true) => "on",
            Some(false) => "off",
        }
    }
}

/// What the node did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErtsVerdict {
    /// Every check held.
    Consistent,
    /// Some `bad_*` counter is non-zero.
    Inconsistent(Vec<String>),
    /// The node died or printed no result (its exit status and last lines).
    Crashed(String),
}

#[derive(Clone, Debug)]
pub struct ErtsTortureOutcome {
    pub verdict: ErtsVerdict,
    /// `result` line counters (calls, trace_patterns, queries, ...).
    pub counters: BTreeMap<String, u64>,
    /// Every `bpspec_torture` line the node printed.
    pub lines: Vec<String>,
    pub seconds: f64,
}

/// Compile and run the program; errors are setup failures (no erl, bad root, erlc failed).
pub fn run(cfg: &ErtsTortureConfig) -> Result<ErtsTortureOutcome, String> {
    let root = cfg.root.as_deref();
    if let Some(r) = root {
        crate::erlang::check_root(r)?;
    }
    if !(1..=64).contains(&cfg.schedulers) || cfg.workers == 0 || cfg.seconds == 0 {
        return Err(format!("bad ERTS torture parameters: {}", cfg.describe()));
    }
    let base = root.map_or_else(std::env::temp_dir, |r| r.join("tmp"));
    let dir = base.join(format!(
        "bpspec-torture-{}-{}",
        std::process::id(),
        cfg.seed
    ));
    crate::erlang::compile_fresh(
        root,
        &dir,
        "bpspec_torture.erl",
        PROGRAM,
        "the torture program",
        crate::erlang::INSTALL_HINT,
    )?;
    let log = dir.join("node.out");
    let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let start = Instant::now();
    let mut child = tool(root, "erl")
        .arg("+S")
        .arg(format!("{0}:{0}", cfg.schedulers))
        .args(["-noshell", "-pa"])
        .arg(inner_path(root, &dir))
        .arg("-eval")
        .arg(format!(
            "bpspec_torture:main({}, {}, {}, {})",
            cfg.seconds,
            cfg.seed,
            cfg.workers,
            cfg.resets_arg()
        ))
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("erl: {e}"))?;
    // The program stops itself after `seconds`, then waits at most two minutes for its
    // processes; past that the node is stuck.
    let limit = Duration::from_secs(cfg.seconds + 240);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => return Err(format!("waiting for erl: {e}")),
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("bpspec_torture"))
        .map(str::to_string)
        .collect();
    let result = lines
        .iter()
        .find(|l| l.starts_with("bpspec_torture result "));
    let counters: BTreeMap<String, u64> = result
        .map(|l| {
            l.split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_string(), v)))
                .collect()
        })
        .unwrap_or_default();
    let status_text = match status {
        None => format!("killed after {:.0}s without finishing", seconds),
        Some(s) => describe_status(s),
    };
    let ok_exit = status.is_some_and(|s| s.success());
    let verdict = if !ok_exit || result.is_none() {
        let tail: Vec<&str> = text.lines().rev().take(6).collect();
        ErtsVerdict::Crashed(format!(
            "{status_text}; last output: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ))
    } else {
        let bad: Vec<String> = counters
            .iter()
            .filter(|(k, v)| k.starts_with("bad_") && **v > 0)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if bad.is_empty() {
            ErtsVerdict::Consistent
        } else {
            ErtsVerdict::Inconsistent(bad)
        }
    };
    if verdict == ErtsVerdict::Consistent {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(ErtsTortureOutcome {
        verdict,
        counters,
        lines,
        seconds,
    })
}

#[cfg(unix)]
fn describe_status(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (_, Some(sig)) => format!("killed by signal {sig}"),
        (Some(c), _) => format!("exit {c}"),
        _ => format!("{s}"),
    }
}

#[cfg(not(unix))]
fn describe_status(s: std::process::ExitStatus) -> String {
    format!("{s}")
}
