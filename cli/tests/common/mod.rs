//! Shared by the CLI's integration tests: run the `bpspec` binary, check its exit code and what
//! it printed, and make scratch directories.
//!
//! Each test binary uses part of this module only.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

/// Run the `bpspec` binary with `args`: (exit code, stdout, stderr).
pub fn bpspec<S: AsRef<OsStr>>(args: &[S]) -> (i32, String, String) {
    bpspec_env(args, &[])
}

/// [`bpspec`] with environment variables set (or replaced) for the run.
pub fn bpspec_env<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &OsStr)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bpspec"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run bpspec");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The arguments of a command line: `line` split at white space, each `{}` replaced by the next
/// of `slots` as one argument (a path, or an engine command with spaces in it).
pub fn argv(line: &str, slots: &[&str]) -> Vec<String> {
    let mut slots = slots.iter();
    let args: Vec<String> = line
        .split_whitespace()
        .map(|w| match w {
            "{}" => slots.next().expect("a slot for every {}").to_string(),
            _ => w.to_string(),
        })
        .collect();
    assert!(slots.next().is_none(), "more slots than {{}} in {line:?}");
    args
}

/// `args`, then the path `path` gives each of `names` (a corpus file's), as more arguments.
pub fn with_files(mut args: Vec<String>, names: &[&str], path: fn(&str) -> String) -> Vec<String> {
    args.extend(names.iter().map(|n| path(n)));
    args
}

/// Run `bpspec args`, assert that it exits with `code`, and return (stdout, stderr). A failure
/// names the arguments and shows both streams.
pub fn exits<S: AsRef<OsStr> + std::fmt::Debug>(code: i32, args: &[S]) -> (String, String) {
    let (got, out, err) = bpspec(args);
    assert_eq!(got, code, "bpspec {args:?}:\n{out}{err}");
    (out, err)
}

/// Assert that `text` holds every one of `needles`, showing `text` if not.
pub fn assert_has(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "{n:?} missing from:\n{text}");
    }
}

/// A scratch directory `bpspec-{tag}-{pid}-{name}` under the system's temporary directory,
/// emptied of what an earlier run left and created.
pub fn fresh_dir(tag: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bpspec-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
