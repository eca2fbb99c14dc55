//! The conformance kit (docs/conformance-kit.md): seq_trace scenario files through `bpspec oracle
//! run | check | erl`, `bpspec oracle gen`, and `bpspec oracle check --engine-cmd` with external
//! engines: a deliberately wrong Python engine (the disagreement is found and shrunk to a small
//! scenario file), the same script's correct mode, and bpspec's own engine as a command.

mod common;
use common::bpspec;
use std::path::PathBuf;

fn root() -> String {
    format!("{}/..", env!("CARGO_MANIFEST_DIR"))
}

fn seq_file(name: &str) -> String {
    format!("{}/oracle/corpus/seq_trace/{name}", root())
}

fn py(mode: &str) -> String {
    format!(
        "python3 {}/oracle/tests/engines/call_count_engine.py {mode}",
        root()
    )
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bpspec-kit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn seq_trace_run_and_check() {
    let f = seq_file("manual_example.json");
    let (code, out, err) = bpspec(&["oracle", "run", &f]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("E 17 print 0 1 0 [] started none"), "{out}");
    assert!(out.contains("R 11 0 token tok 6 17 2 4 1"), "{out}");
    let (code, out, err) = bpspec(&["oracle", "check", &f]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("7 results and 4 events agree"), "{out}");
}

#[test]
fn seq_trace_check_exit_codes() {
    let d = tmp("seqcheck");
    std::fs::create_dir_all(&d).unwrap();
    let text = std::fs::read_to_string(seq_file("manual_example.json")).unwrap();
    // A wrong expectation: exit 1 with the difference.
    let wrong = d.join("wrong.json");
    std::fs::write(
        &wrong,
        text.replace(
            "\"17 print 2 3 1 [] here none\"",
            "\"17 print 2 4 1 [] here none\"",
        ),
    )
    .unwrap();
    let (code, out, err) = bpspec(&["oracle", "check", wrong.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("observations differ: events differ"), "{out}");
    // No expect: exit 2.
    let bare = d.join("bare.json");
    std::fs::write(
        &bare,
        r#"{"name": "x", "seq_trace": [{"get_token": {"p": 0}}]}"#,
    )
    .unwrap();
    let (code, _, err) = bpspec(&["oracle", "check", bare.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("at $.expect: check needs"), "{err}");
    // A contradiction: exit 2 naming the path.
    let bad = d.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"name": "x", "seq_trace": [{"recv": {"p": 3, "msg": "a"}}]}"#,
    )
    .unwrap();
    let (code, _, err) = bpspec(&["oracle", "run", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("bad.json: at $.seq_trace[0].recv.p: process 3 is not spawned yet"),
        "{err}"
    );
}

#[test]
fn seq_trace_erl_agrees_with_otp() {
    let files: Vec<String> = [
        "manual_example.json",
        "spawn_with_token.json",
        "exit_signal.json",
    ]
    .iter()
    .map(|f| seq_file(f))
    .collect();
    let mut args = vec!["oracle", "erl"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = bpspec(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("seq_trace on OTP ") && out.contains("3 agree, 0 differ"),
        "{out}"
    );
}

#[test]
fn gen_writes_files_with_expect_and_prints_coverage() {
    let d = tmp("gen");
    let (code, out, err) = bpspec(&[
        "oracle",
        "gen",
        "--seed",
        "3",
        "--count",
        "5",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote 5 scenarios"), "{out}");
    let f = d.join("gen-3-0.json");
    let (code, out, err) = bpspec(&["oracle", "check", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = bpspec(&[
        "oracle",
        "gen",
        "--count",
        "3000",
        "--features",
        "local,global,call_time,call_memory,frames,pairs",
        "--coverage",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("80 of 80 sequences drawn"), "{out}");
    let (code, _, err) = bpspec(&["oracle", "gen", "--count", "3", "--features", "bogus"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown generator feature \"bogus\""), "{err}");
}

/// The wrong Python engine (restart keeps the count): the 14th generated scenario of seed 7
/// shows it; shrinking leaves one function and four ops (set, call, restart, trace_info), saved
/// with the oracle's observations as `expect`.
#[test]
fn wrong_python_engine_is_caught_and_shrunk() {
    let d = tmp("shrunk");
    let (code, out, err) = bpspec(&[
        "oracle",
        "check",
        "--engine-cmd",
        &py("wrong"),
        "--count",
        "14",
        "--seed",
        "7",
        "--features",
        "call_count",
        "--out",
        d.to_str().unwrap(),
        "--shrink-max",
        "1",
    ]);
    println!("{out}");
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("DIFFER gen-7-13"), "{out}");
    assert!(out.contains("SHRUNK gen-7-13: size 15 -> 5"), "{out}");
    let saved = d.join("gen-7-13.min.json");
    let text = std::fs::read_to_string(&saved).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ops = v["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 4, "{text}");
    assert_eq!(ops[2]["trace_pattern"]["spec"], "restart", "{text}");
    // The saved file reproduces: the oracle agrees with its expect, the wrong engine does not.
    let (code, _, err) = bpspec(&[
        "oracle",
        "check",
        saved.to_str().unwrap(),
        "--engine",
        "oracle",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = bpspec(&[
        "oracle",
        "check",
        "--engine-cmd",
        &py("wrong"),
        saved.to_str().unwrap(),
        "--out",
        d.join("again").to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn correct_python_engine_agrees() {
    let (code, out, err) = bpspec(&[
        "oracle",
        "check",
        "--engine-cmd",
        &py("correct"),
        "--count",
        "30",
        "--seed",
        "7",
        "--features",
        "call_count",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(": 30 agree, 0 differ"), "{out}");
}

/// bpspec's own engine as an external command (`bpspec oracle run -`) over the breakpoint
/// corpus and generated scenarios: no disagreement; what it does not implement is skipped.
#[test]
fn own_engine_as_a_command_agrees() {
    let cmd = format!("{} oracle run -", env!("CARGO_BIN_EXE_bpspec"));
    let corpus = format!("{}/oracle/corpus", root());
    let (code, out, err) = bpspec(&[
        "oracle",
        "check",
        "--engine-cmd",
        &cmd,
        &corpus,
        "--count",
        "20",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(", 0 differ"), "{out}");
    assert!(!out.contains("DIFFER"), "{out}");
}

#[test]
fn engine_cmd_exit_codes() {
    // A command that does not exist: exit 4.
    let (code, _, err) = bpspec(&[
        "oracle",
        "check",
        "--engine-cmd",
        "no-such-engine-here",
        "--count",
        "1",
    ]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("command not found"), "{err}");
    // An engine that implements nothing (exit 3 everywhere): exit 3.
    let (code, out, err) = bpspec(&["oracle", "check", "--engine-cmd", "exit 3", "--count", "2"]);
    assert_eq!(code, 3, "{out}{err}");
    // No scenarios: exit 2.
    let (code, _, err) = bpspec(&["oracle", "check", "--engine-cmd", "cat"]);
    assert_eq!(code, 2, "{err}");
}

/// seq_trace scenarios through `--engine-cmd`: bpspec's own `run -` agrees on the whole
/// seq_trace corpus; the same with one event's serial changed (a wrong engine, by `sed`) is
/// found on the manual's example and shrunk to the 7 steps that still show it.
#[test]
fn seq_trace_through_engine_cmd() {
    let own = format!("{} oracle run -", env!("CARGO_BIN_EXE_bpspec"));
    let dir = format!("{}/oracle/corpus/seq_trace", root());
    let (code, out, err) = bpspec(&["oracle", "check", "--engine-cmd", &own, &dir]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(": 12 agree, 0 differ"), "{out}");
    let wrong = format!("{own} | sed 's/^E 17 print 2 3 /E 17 print 2 4 /'");
    let d = tmp("seqshrunk");
    let (code, out, err) = bpspec(&[
        "oracle",
        "check",
        "--engine-cmd",
        &wrong,
        &seq_file("manual_example.json"),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("SHRUNK") && out.contains("size 12 -> 7"),
        "{out}"
    );
    let saved = d.join("manual_example.min.json");
    let (code, out, err) = bpspec(&["oracle", "check", saved.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}

/// `erl` on a seq_trace file without Erlang/OTP on PATH: exit 4, saying what to install.
#[test]
fn seq_trace_erl_without_erlang_exits_4() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bpspec"))
        .args(["oracle", "erl", &seq_file("empty_token.json")])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("apt-get install erlang-nox"), "{err}");
}
