//! Helpers shared by the oracle's integration tests (`mod common;` in each test file that uses
//! them; not every file uses every helper).
#![allow(dead_code)]

use bpspec_oracle::conformance::{ConfOp, Target};
use bpspec_oracle::erlang::Erl;
use bpspec_reference::{FlagSet, PatternOp};
use serde_json::Value;
use std::collections::BTreeSet;

/// The scenario on which OTP 27.3 and 29.1 segfault (a call_time-only caller `g` calls `f`,
/// traced with call_time + call_memory; docs/erts-findings/ctm-segfault.md).
pub const OTP29_CRASH: &str = r#"{"name": "call_time caller, call_time + call_memory callee",
    "modules": [{"name": "bpcrash", "functions": [
      {"name": "f", "arity": 1, "exported": true, "body": [{"return": "r"}]},
      {"name": "g", "exported": true, "body": [{"call": "f/1", "args": [0]}, {"return": "ok"}]}]}],
    "processes": [{"name": "p1", "trace": {"legacy": ["call"]}}],
    "ops": [
      {"trace_pattern": {"pattern": "bpcrash:g/0", "spec": true, "flags": ["call_time"]}},
      {"trace_pattern": {"pattern": "bpcrash:f/1", "spec": true, "flags": ["call_time", "call_memory"]}},
      {"call": {"process": "p1", "mfa": "bpcrash:g/0"}},
      {"trace_info": {"mfa": "bpcrash:f/1", "item": "all"}}]}"#;

/// Every property name a JSON schema declares (the keys of each `properties` object, at any
/// depth): what the loader must accept, no more and no less.
pub fn schema_properties(schema: &Value) -> BTreeSet<String> {
    fn props(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(p)) = o.get("properties") {
                    out.extend(p.keys().cloned());
                }
                o.values().for_each(|x| props(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| props(x, out)),
            _ => {}
        }
    }
    let mut declared = BTreeSet::new();
    props(schema, &mut declared);
    declared
}

/// The start of the call_time op sequences: call_time on `target` in the legacy session,
/// process 1 (call-traced) enters f0, 5 µs pass.
pub fn timed_entry(target: Target) -> Vec<ConfOp> {
    vec![
        ConfOp::TimePattern {
            session: 0,
            target,
            op: PatternOp::True,
            flags: FlagSet::CALL_TIME,
        },
        ConfOp::Enter {
            f: 0,
            pid: 1,
            traced: 1,
            tail: false,
        },
        ConfOp::Advance { dt: 5 },
    ]
}

/// The node of the OTP root in `BPSPEC_OTP_ROOT`, or `None` after saying that the test is
/// skipped because it is unset.
pub fn otp_root() -> Option<Erl> {
    let Some(root) = Erl::env_root() else {
        eprintln!("skipped: BPSPEC_OTP_ROOT is not set (scripts/otp-root.sh builds one)");
        return None;
    };
    Some(Erl::setup_root(&root).unwrap_or_else(|m| panic!("{m}")))
}
