//! Run scenarios on a real Erlang/OTP node through `seqtrace/erl/seqtrace_driver.erl`.
//!
//! One `erl` run executes a whole batch (an emulator start costs far more than a scenario).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::scenario::{Outcome, Scenario};

/// The driver's source, shipped with the crate.
pub fn driver_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("erl/seqtrace_driver.erl")
}

#[derive(Debug)]
pub enum OtpError {
    /// `erl` or `erlc` is not on PATH.
    Missing(&'static str),
    /// A command ran but failed.
    Failed { what: String, output: String },
    /// The driver printed something we cannot read.
    Parse { line: usize, text: String },
}

impl fmt::Display for OtpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OtpError::Missing(tool) => write!(
                f,
                "`{tool}` not found on PATH: the seq_trace differential tests need Erlang/OTP \
                 (Debian/Ubuntu: `apt-get install erlang-nox`; .ci/run installs it)"
            ),
            OtpError::Failed { what, output } => write!(f, "{what} failed:\n{output}"),
            OtpError::Parse { line, text } => {
                write!(f, "driver output line {line} is malformed: {text:?}")
            }
        }
    }
}

impl std::error::Error for OtpError {}

/// Whether `tool` runs; [`OtpError::Missing`] says what to install if not.
pub fn have(tool: &'static str) -> Result<(), OtpError> {
    match Command::new(tool).arg("-version").output() {
        Ok(_) => Ok(()),
        Err(_) => Err(OtpError::Missing(tool)),
    }
}

/// What one driver run produced.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// The node's OTP version, e.g. `25.2.3`.
    pub otp_version: String,
    pub outcomes: BTreeMap<u32, Outcome>,
}

/// Compile the driver into `work` and run `scenarios` there; outcomes by scenario id.
pub fn run_batch(work: &Path, scenarios: &[Scenario]) -> Result<Batch, OtpError> {
    run_batch_in(work, scenarios, None)
}

/// `name` on PATH, or `chroot ROOT name` for the Erlang/OTP in the Debian root `root` (chroot
/// changes the working directory to the root's /). The oracle's Erlang runs use it too.
pub fn tool(root: Option<&Path>, name: &str) -> Command {
    match root {
        None => Command::new(name),
        Some(r) => {
            let mut c = Command::new("chroot");
            c.arg(r).arg(name);
            c
        }
    }
}

/// `p` as a process inside `root` sees it (`p` must lie under `root`).
fn inner(root: Option<&Path>, p: &Path) -> PathBuf {
    match root.and_then(|r| p.strip_prefix(r).ok()) {
        Some(rest) => Path::new("/").join(rest),
        None => p.to_path_buf(),
    }
}

/// [`run_batch`] on the Erlang/OTP of the Debian root `root` (through `chroot`, so as root;
/// `work` must then lie inside `root`), or on the one on PATH for `None`.
pub fn run_batch_in(
    work: &Path,
    scenarios: &[Scenario],
    root: Option<&Path>,
) -> Result<Batch, OtpError> {
    if root.is_none() {
        have("erlc")?;
        have("erl")?;
    }
    if let Some(r) = root {
        if !work.starts_with(r) {
            return Err(OtpError::Failed {
                what: format!("work directory {}", work.display()),
                output: format!("not inside the OTP root {}", r.display()),
            });
        }
    }
    std::fs::create_dir_all(work).map_err(|e| OtpError::Failed {
        what: format!("creating {}", work.display()),
        output: e.to_string(),
    })?;
    let src = work.join("seqtrace_driver.erl");
    std::fs::copy(driver_source(), &src).map_err(|e| OtpError::Failed {
        what: format!("copying the driver to {}", src.display()),
        output: e.to_string(),
    })?;
    let out = tool(root, "erlc")
        .arg("-o")
        .arg(inner(root, work))
        .arg(inner(root, &src))
        .output()
        .map_err(|_| OtpError::Missing("erlc"))?;
    if !out.status.success() {
        return Err(OtpError::Failed {
            what: "erlc seqtrace_driver.erl".into(),
            output: String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout),
        });
    }
    let file = work.join("scenarios.terms");
    let text: String = scenarios.iter().map(Scenario::to_erl).collect();
    std::fs::write(&file, text).map_err(|e| OtpError::Failed {
        what: format!("writing {}", file.display()),
        output: e.to_string(),
    })?;
    let out = tool(root, "erl")
        .args(["-noshell", "-pa"])
        .arg(inner(root, work))
        .args(["-run", "seqtrace_driver", "main"])
        .arg(inner(root, &file))
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|_| OtpError::Missing("erl"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || !stdout.contains("\nDONE") {
        return Err(OtpError::Failed {
            what: "erl -run seqtrace_driver main".into(),
            output: stdout + &String::from_utf8_lossy(&out.stderr),
        });
    }
    parse(&stdout)
}

/// Parse the driver's output.
pub fn parse(stdout: &str) -> Result<Batch, OtpError> {
    let mut all: BTreeMap<u32, Outcome> = BTreeMap::new();
    let mut otp_version = String::new();
    for (n, line) in stdout.lines().enumerate() {
        let bad = || OtpError::Parse {
            line: n + 1,
            text: line.to_string(),
        };
        let mut it = line.splitn(3, ' ');
        let tag = it.next().unwrap_or("");
        if tag == "DONE" {
            continue;
        }
        if tag == "OTP" {
            otp_version = line[4..].to_string();
            continue;
        }
        let id: u32 = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let rest = it.next().unwrap_or("").to_string();
        let o = all.entry(id).or_default();
        match tag {
            "BEGIN" | "END" => {}
            "R" => o.results.push(rest),
            "E" => {
                o.events.push(rest.clone());
                o.events_in_order.push(rest);
            }
            "FAIL" => o.fail = Some(rest),
            _ => return Err(bad()),
        }
    }
    for o in all.values_mut() {
        o.events.sort();
    }
    Ok(Batch {
        otp_version,
        outcomes: all,
    })
}
