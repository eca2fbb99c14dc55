//! `bpspec check` and `bpspec explore`: exit codes, messages, counterexamples, JSON, and the
//! Explorer's status API on loopback.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{argv, assert_has, exits};

#[test]
fn check_unknown_model_exits_2_and_lists_known_models() {
    let (_, err) = exits(2, &["check", "--model", "nope"]);
    assert_has(
        &err,
        &["unknown model name \"nope\"", "s2f2x1", "s3f2x2", "tiny"],
    );
}

#[test]
fn check_bad_arguments_exit_2() {
    for args in [
        &["check", "--frob"][..],
        &["check", "--model"],
        &["check", "--mutant", "skip-everything"],
        &["check", "--threads", "0"],
    ] {
        let (_, err) = exits(2, args);
        assert_has(&err, &["usage: bpspec check"]);
    }
}

#[test]
fn check_baseline_holds_exit_0() {
    let (out, _) = exits(0, &["check", "--model", "tiny"]);
    assert_has(
        &out,
        &[
            "tiny",
            "stateright bfs",
            "hold",
            "1 scheduler x 1 function x 1 session",
        ],
    );
}

#[test]
fn check_mutant_prints_numbered_counterexample_exit_1() {
    let mutant = argv(
        "check --model tiny --mutant skip-w3-before-consolidate",
        &[],
    );
    let (out, _) = exits(1, &mutant);
    assert_has(
        &out,
        &[
            "VIOLATED",
            "counterexample to slot-set-behind-breakpoint",
            "1. stager: trace_pattern(session 0, {f0}, true, [local]) begins",
            "stager: flip 1->0",
            "scheduler 0 reads slot of f0 -> null",
        ],
    );
}

#[test]
fn check_json_is_machine_readable() {
    let (out, _) = exits(0, &["check", "--model", "tiny", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["ok"], true);
    let r = &v["models"][0];
    assert_eq!(r["model"], "tiny");
    assert_eq!(r["verdict"], "hold");
    assert!(r["unique_states"].as_u64().unwrap() > 100);
    assert!(r["states"].as_u64().unwrap() >= r["unique_states"].as_u64().unwrap());
}

#[test]
fn check_mutants_prints_the_matrix_rows_of_the_selected_model() {
    // s2f1x2 hosts the wait-on-sleepers row (liveness), among others.
    let (out, _) = exits(0, &["check", "--model", "tiny", "--mutants"]);
    // No matrix row lives on tiny: only the baseline runs.
    assert_has(&out, &["kill matrix"]);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    Some(buf)
}

#[test]
fn explore_serves_the_status_api_on_loopback() {
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bpspec"))
        .args(["explore", "tiny", "--addr", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start explorer");
    let t0 = Instant::now();
    let resp = loop {
        if let Some(r) = get(port, "/.status") {
            break r;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "explorer did not come up"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    child.kill().expect("stop explorer");
    child.wait().unwrap();
    assert!(resp.starts_with("HTTP/1."), "{resp}");
    let body = &resp[resp.find("\r\n\r\n").expect("headers end") + 4..];
    let v: serde_json::Value = serde_json::from_str(body).expect("status JSON");
    assert!(v["model"].as_str().unwrap().contains("BpModel"), "{v}");
    let names: Vec<&str> = v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_str().unwrap_or(""))
        .collect();
    assert!(v.to_string().contains("no-use-after-free"), "{v} {names:?}");
}

#[test]
fn explore_unknown_model_or_busy_address_exits_2() {
    let (_, err) = exits(2, &["explore", "nope"]);
    assert_has(&err, &["unknown model name \"nope\""]);
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let (_, err) = exits(2, &["explore", "tiny", "--addr", &addr]);
    assert_has(&err, &["cannot listen on"]);
}
