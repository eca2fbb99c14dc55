//! What several oracle test files share (each includes it with `mod common;`).
#![allow(dead_code)]

use bpspec_oracle::erlang::Erl;

/// The node of the OTP root in `BPSPEC_OTP_ROOT`, or `None` after saying that the test is
/// skipped because it is unset.
pub fn otp_root() -> Option<Erl> {
    let Some(root) = Erl::env_root() else {
        eprintln!("skipped: BPSPEC_OTP_ROOT is not set (scripts/otp-root.sh builds one)");
        return None;
    };
    Some(Erl::setup_root(&root).unwrap_or_else(|m| panic!("{m}")))
}
