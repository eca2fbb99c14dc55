//! Shared by the CLI's integration tests.

use std::process::Command;

/// Run the `bpspec` binary with `args`: (exit code, stdout, stderr).
pub fn bpspec(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bpspec"))
        .args(args)
        .output()
        .expect("run bpspec");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}
