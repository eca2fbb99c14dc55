//! The external-engine driver: runs any implementation as a command (docs/conformance-kit.md)
//! that reads one scenario (the JSON of docs/scenario.md) on stdin and writes its observations
//! on stdout, one JSON object per line (the format of `bpspec oracle run`), and exits 0; or exits
//! 3 when it does not implement a feature the scenario uses. Its output is compared line by line
//! with the sequential oracle's; every disagreement is shrunk ([`crate::shrink`]) to a minimal
//! scenario, saved with the oracle's observations as `expect`.

use crate::observe::{diff_lines, Observation};
use crate::run::{run, RunError};
use crate::scenario::{load, Loaded, Scenario};
use crate::target::SpecOracle;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// An implementation run as `sh -c CMD`.
#[derive(Clone, Debug)]
pub struct EngineCmd {
    pub cmd: String,
    /// Per scenario; a run that takes longer is killed and counts as failed.
    pub timeout: Duration,
}

/// What the command did with one scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineOut {
    /// Exit 0: its stdout lines.
    Ran(Vec<String>),
    /// Exit 3: a feature it does not implement (stderr says which).
    Unsupported(String),
    /// Any other exit, a signal, or the timeout: how, and its stderr.
    Failed(String),
}

/// The command could not be started at all (exit 4 of `bpspec oracle check`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CannotRun(pub String);

impl EngineCmd {
    /// Run the command on one scenario text. `Err` only if `sh` cannot be started or the command
    /// is not found (exit 126/127 from `sh`).
    pub fn run(&self, scenario_json: &str) -> Result<EngineOut, CannotRun> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| CannotRun(format!("cannot start sh -c {:?}: {e}", self.cmd)))?;
        let mut stdin = child.stdin.take().expect("piped");
        let text = scenario_json.to_string();
        // Written from a thread so a command that does not read stdin cannot block us.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let ereader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let start = Instant::now();
        // Bounded: the timeout ends the loop.
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if start.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => return Err(CannotRun(format!("waiting for {:?}: {e}", self.cmd))),
            }
        };
        let _ = writer.join();
        let stdout = reader.join().unwrap_or_default();
        let stderr = ereader.join().unwrap_or_default();
        let Some(status) = status else {
            return Ok(EngineOut::Failed(format!(
                "killed after the {:?} timeout",
                self.timeout
            )));
        };
        match status.code() {
            Some(0) => Ok(EngineOut::Ran(stdout.lines().map(str::to_string).collect())),
            Some(3) => Ok(EngineOut::Unsupported(stderr.trim().to_string())),
            Some(c @ (126 | 127)) => Err(CannotRun(format!(
                "sh -c {:?} exited {c} (command not found or not executable): {}",
                self.cmd,
                stderr.trim()
            ))),
            Some(c) => Ok(EngineOut::Failed(format!("exit {c}: {}", stderr.trim()))),
            None => Ok(EngineOut::Failed(format!(
                "killed by a signal: {}",
                stderr.trim()
            ))),
        }
    }
}

/// The verdict on one scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Agree,
    /// The engine's output differs from the oracle's (or it failed): the diff or the failure.
    Differ(String),
    /// Not compared: the engine (exit 3) or the oracle lacks a feature, or the oracle refused the
    /// scenario (bounds).
    Skipped(String),
}

/// The oracle's observation lines for a loaded scenario, or why it cannot run it.
pub fn oracle_lines(l: &Loaded) -> Result<Vec<String>, RunError> {
    let mut o = SpecOracle::boxed(l.funcs.clone());
    run(l, o.as_mut()).map(|obs| obs.iter().map(Observation::line).collect())
}

/// A line as the oracle would print it: parsed and re-serialized (so key order and spacing do
/// not matter); a line that is not an observation stays as it is (and so differs).
fn normal(line: &str) -> String {
    serde_json::from_str::<Observation>(line)
        .map(|o| o.line())
        .unwrap_or_else(|_| line.to_string())
}

/// Compare `engine` with the oracle on one scenario.
pub fn judge(engine: &EngineCmd, sc: &Scenario) -> Result<Verdict, CannotRun> {
    let mut raw = sc.clone();
    raw.expect = None;
    let text = serde_json::to_string(&raw).expect("scenarios serialize");
    let l = match load(&sc.name, &text) {
        Ok(l) => l,
        Err(e) => return Ok(Verdict::Skipped(format!("does not load: {e}"))),
    };
    let want = match oracle_lines(&l) {
        Ok(w) => w,
        Err(e) => return Ok(Verdict::Skipped(format!("sequential oracle: {e}"))),
    };
    Ok(match engine.run(&text)? {
        EngineOut::Unsupported(why) => Verdict::Skipped(format!("engine exit 3: {why}")),
        EngineOut::Failed(why) => Verdict::Differ(format!("engine failed: {why}")),
        EngineOut::Ran(lines) => {
            let got: Vec<String> = lines
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| normal(l))
                .collect();
            if got == want {
                Verdict::Agree
            } else {
                Verdict::Differ(diff_lines(&want, &got))
            }
        }
    })
}

/// A disagreement, shrunk and saved.
#[derive(Clone, Debug)]
pub struct Finding {
    /// Where the scenario came from (a file, or `generated seed S #i`).
    pub origin: String,
    pub diff: String,
    /// The saved minimal scenario (with the oracle's observations as `expect`).
    pub saved: PathBuf,
    pub size_before: usize,
    pub size_after: usize,
    /// Its diff (- oracle, + engine).
    pub minimal_diff: String,
    pub tried: usize,
}

/// Candidates the shrinker may try per disagreement.
pub const SHRINK_TRIES: usize = 400;

/// Shrink a scenario on which `engine` disagrees with the oracle and save the result in `out` as
/// `NAME.min.json`.
pub fn shrink_and_save(
    engine: &EngineCmd,
    origin: &str,
    sc: &Scenario,
    diff: &str,
    out: &Path,
    name: &str,
) -> Result<Finding, String> {
    let mut fatal = None;
    let s = crate::shrink::shrink(sc, SHRINK_TRIES, |c| {
        still_differs(judge(engine, c), &mut fatal)
    });
    if let Some(f) = fatal {
        return Err(f);
    }
    let mut min = s.scenario.clone();
    min.name = format!("{} (shrunk)", sc.name);
    let minimal_diff = match judge(engine, &min).map_err(|e| e.0)? {
        Verdict::Differ(d) => d,
        other => format!("(the shrunk scenario no longer differs: {other:?})"),
    };
    let text = serde_json::to_string(&min).expect("serialize");
    if let Ok(l) = load(name, &text) {
        if let Ok(obs) = run(&l, SpecOracle::boxed(l.funcs.clone()).as_mut()) {
            min.expect = Some(obs);
        }
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let saved = out.join(format!("{name}.min.json"));
    let body = serde_json::to_string_pretty(&min).expect("serialize") + "\n";
    std::fs::write(&saved, body).map_err(|e| format!("{}: {e}", saved.display()))?;
    Ok(Finding {
        origin: origin.to_string(),
        diff: diff.to_string(),
        saved,
        size_before: crate::shrink::size(sc),
        size_after: crate::shrink::size(&min),
        minimal_diff,
        tried: s.tried,
    })
}

/// A file name stem from a scenario name or path.
pub fn stem(s: &str) -> String {
    let base = Path::new(s)
        .file_stem()
        .map(|x| x.to_string_lossy().into_owned())
        .unwrap_or_else(|| s.to_string());
    base.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// seq_trace scenarios (docs/seq_trace_scenario.md): the command gets the seq_trace JSON on stdin
/// and prints `R Step Proc Result` and `E Label Kind Prev Curr From To Msg Ts` lines (the output
/// of `bpspec oracle run FILE`); compared with the seq_trace reference as `check` compares
/// (results in order; events as a set and in order per emitting process).
pub fn judge_seq(engine: &EngineCmd, sc: &crate::seq::SeqScenario) -> Result<Verdict, CannotRun> {
    use crate::seq;
    let mut raw = sc.clone();
    raw.expect = None;
    let text = serde_json::to_string(&raw).expect("scenarios serialize");
    let l = match seq::load(&sc.name, &text) {
        Ok(l) => l,
        Err(e) => return Ok(Verdict::Skipped(format!("does not load: {e}"))),
    };
    let want = seq::run(&l);
    Ok(match engine.run(&text)? {
        EngineOut::Unsupported(why) => Verdict::Skipped(format!("engine exit 3: {why}")),
        EngineOut::Failed(why) => Verdict::Differ(format!("engine failed: {why}")),
        EngineOut::Ran(lines) => {
            let mut got = bpspec_seqtrace::scenario::Outcome::default();
            let mut bad = Vec::new();
            for line in lines.iter().filter(|l| !l.trim().is_empty()) {
                match line.split_once(' ') {
                    Some(("R", r)) => got.results.push(r.to_string()),
                    Some(("E", e)) => got.events_in_order.push(e.to_string()),
                    _ => bad.push(line.clone()),
                }
            }
            got.events = got.events_in_order.clone();
            got.events.sort();
            let lines = |s: String| s.lines().map(str::to_string).collect::<Vec<_>>();
            match bpspec_seqtrace::scenario::first_difference(&want, &got) {
                _ if !bad.is_empty() => {
                    Verdict::Differ(format!("lines that are neither R nor E: {bad:?}"))
                }
                None => Verdict::Agree,
                Some(d) => Verdict::Differ(format!(
                    "{}\n{}",
                    d.replace("otp", "engine"),
                    diff_lines(&lines(seq::render(&want)), &lines(seq::render(&got)))
                )),
            }
        }
    })
}

/// The shrinker's test: does the candidate still differ? An engine that cannot run it does not
/// count as differing, and its first such error is kept in `fatal` (the shrink then fails).
fn still_differs(judged: Result<Verdict, CannotRun>, fatal: &mut Option<String>) -> bool {
    match judged {
        Ok(Verdict::Differ(_)) => true,
        Ok(_) => false,
        Err(e) => {
            fatal.get_or_insert(e.0);
            false
        }
    }
}

/// [`shrink_and_save`] for a seq_trace scenario.
pub fn shrink_and_save_seq(
    engine: &EngineCmd,
    origin: &str,
    sc: &crate::seq::SeqScenario,
    diff: &str,
    out: &Path,
    name: &str,
) -> Result<Finding, String> {
    use crate::seq;
    let mut fatal = None;
    let (mut min, tried) = crate::shrink::shrink_seq(sc, SHRINK_TRIES, |c| {
        still_differs(judge_seq(engine, c), &mut fatal)
    });
    if let Some(f) = fatal {
        return Err(f);
    }
    min.name = format!("{} (shrunk)", sc.name);
    let minimal_diff = match judge_seq(engine, &min).map_err(|e| e.0)? {
        Verdict::Differ(d) => d,
        other => format!("(the shrunk scenario no longer differs: {other:?})"),
    };
    let text = serde_json::to_string(&min).expect("serialize");
    if let Ok(l) = seq::load(name, &text) {
        min.expect = Some(seq::expect_of(&seq::run(&l)));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let saved = out.join(format!("{name}.min.json"));
    std::fs::write(&saved, seq::to_text(&min)).map_err(|e| format!("{}: {e}", saved.display()))?;
    Ok(Finding {
        origin: origin.to_string(),
        diff: diff.to_string(),
        saved,
        size_before: sc.seq_trace.len(),
        size_after: min.seq_trace.len(),
        minimal_diff,
        tried,
    })
}
