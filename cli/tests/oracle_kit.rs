//! The conformance kit (docs/conformance-kit.md): seq_trace scenario files through `bpspec oracle
//! run | check | erl`, `bpspec oracle gen`, and `bpspec oracle check --engine-cmd` with external
//! engines: a deliberately wrong Python engine (the disagreement is found and shrunk to a small
//! scenario file), the same script's correct mode, and bpspec's own engine as a command.

mod common;
use common::{argv, assert_has, bpspec_env, exits, fresh_dir, with_files};

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

/// A fresh scratch directory and its path as an argument.
fn tmp(name: &str) -> (std::path::PathBuf, String) {
    let d = fresh_dir("kit", name);
    let s = d.to_str().unwrap().to_string();
    (d, s)
}

/// Write `text` to `d/name` and return the path as an argument.
fn write(d: &std::path::Path, name: &str, text: &str) -> String {
    let f = d.join(name);
    std::fs::write(&f, text).unwrap();
    f.to_str().unwrap().to_string()
}

#[test]
fn seq_trace_run_and_check() {
    let f = seq_file("manual_example.json");
    let (out, _) = exits(0, &["oracle", "run", &f]);
    assert_has(
        &out,
        &[
            "E 17 print 0 1 0 [] started none",
            "R 11 0 token tok 6 17 2 4 1",
        ],
    );
    let (out, _) = exits(0, &["oracle", "check", &f]);
    assert_has(&out, &["7 results and 4 events agree"]);
}

#[test]
fn seq_trace_check_exit_codes() {
    let (d, _) = tmp("seqcheck");
    let text = std::fs::read_to_string(seq_file("manual_example.json")).unwrap();
    let cases = [
        // A wrong expectation: exit 1 with the difference.
        (
            "check",
            "wrong.json",
            text.replace(
                "\"17 print 2 3 1 [] here none\"",
                "\"17 print 2 4 1 [] here none\"",
            ),
            1,
            "observations differ: events differ",
        ),
        // No expect: exit 2.
        (
            "check",
            "bare.json",
            r#"{"name": "x", "seq_trace": [{"get_token": {"p": 0}}]}"#.to_string(),
            2,
            "at $.expect: check needs",
        ),
        // A contradiction: exit 2 naming the path.
        (
            "run",
            "bad.json",
            r#"{"name": "x", "seq_trace": [{"recv": {"p": 3, "msg": "a"}}]}"#.to_string(),
            2,
            "bad.json: at $.seq_trace[0].recv.p: process 3 is not spawned yet",
        ),
    ];
    for (cmd, name, text, code, says) in cases {
        let f = write(&d, name, &text);
        let (out, err) = exits(code, &["oracle", cmd, &f]);
        // The difference is on stdout, an error on stderr.
        assert_has(if code == 1 { &out } else { &err }, &[says]);
    }
}

#[test]
fn seq_trace_erl_agrees_with_otp() {
    let files = [
        "manual_example.json",
        "spawn_with_token.json",
        "exit_signal.json",
    ];
    let (out, _) = exits(0, &with_files(argv("oracle erl", &[]), &files, seq_file));
    assert_has(&out, &["seq_trace on OTP ", "3 agree, 0 differ"]);
}

#[test]
fn gen_writes_files_with_expect_and_prints_coverage() {
    let (d, dir) = tmp("gen");
    let (out, _) = exits(0, &argv("oracle gen --seed 3 --count 5 --out {}", &[&dir]));
    assert_has(&out, &["wrote 5 scenarios"]);
    let f = d.join("gen-3-0.json");
    exits(0, &["oracle", "check", f.to_str().unwrap()]);
    let features = "local,global,call_time,call_memory,frames,pairs";
    let gen = argv(
        "oracle gen --count 3000 --features {} --coverage",
        &[features],
    );
    let (out, _) = exits(0, &gen);
    assert_has(&out, &["80 of 80 sequences drawn"]);
    let (_, err) = exits(2, &argv("oracle gen --count 3 --features bogus", &[]));
    assert_has(&err, &["unknown generator feature \"bogus\""]);
}

/// The wrong Python engine (restart keeps the count): the 14th generated scenario of seed 7
/// shows it; shrinking leaves one function and four ops (set, call, restart, trace_info), saved
/// with the oracle's observations as `expect`.
#[test]
fn wrong_python_engine_is_caught_and_shrunk() {
    let (d, dir) = tmp("shrunk");
    let wrong = py("wrong");
    let (out, _) = exits(
        1,
        &argv(
            "oracle check --engine-cmd {} --count 14 --seed 7 --features call_count --out {} \
             --shrink-max 1",
            &[&wrong, &dir],
        ),
    );
    println!("{out}");
    assert_has(&out, &["DIFFER gen-7-13", "SHRUNK gen-7-13: size 15 -> 5"]);
    let saved = d.join("gen-7-13.min.json");
    let text = std::fs::read_to_string(&saved).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ops = v["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 4, "{text}");
    assert_eq!(ops[2]["trace_pattern"]["spec"], "restart", "{text}");
    // The saved file reproduces: the oracle agrees with its expect, the wrong engine does not.
    let saved = saved.to_str().unwrap();
    exits(0, &argv("oracle check {} --engine oracle", &[saved]));
    let again = d.join("again");
    let again = again.to_str().unwrap();
    exits(
        1,
        &argv(
            "oracle check --engine-cmd {} {} --out {}",
            &[&wrong, saved, again],
        ),
    );
}

#[test]
fn correct_python_engine_agrees() {
    let (out, _) = exits(
        0,
        &argv(
            "oracle check --engine-cmd {} --count 30 --seed 7 --features call_count",
            &[&py("correct")],
        ),
    );
    assert_has(&out, &[": 30 agree, 0 differ"]);
}

/// bpspec's own engine as an external command (`bpspec oracle run -`) over the breakpoint
/// corpus and generated scenarios: no disagreement; what it does not implement is skipped.
#[test]
fn own_engine_as_a_command_agrees() {
    let cmd = format!("{} oracle run -", env!("CARGO_BIN_EXE_bpspec"));
    let corpus = format!("{}/oracle/corpus", root());
    let (out, _) = exits(
        0,
        &argv(
            "oracle check --engine-cmd {} {} --count 20",
            &[&cmd, &corpus],
        ),
    );
    assert_has(&out, &[", 0 differ"]);
    assert!(!out.contains("DIFFER"), "{out}");
}

#[test]
fn engine_cmd_exit_codes() {
    // A command that does not exist: exit 4.
    let (_, err) = exits(
        4,
        &argv(
            "oracle check --engine-cmd no-such-engine-here --count 1",
            &[],
        ),
    );
    assert_has(&err, &["command not found"]);
    // An engine that implements nothing (exit 3 everywhere): exit 3.
    exits(
        3,
        &argv("oracle check --engine-cmd {} --count 2", &["exit 3"]),
    );
    // No scenarios: exit 2.
    exits(2, &argv("oracle check --engine-cmd cat", &[]));
}

/// seq_trace scenarios through `--engine-cmd`: bpspec's own `run -` agrees on the whole
/// seq_trace corpus; the same with one event's serial changed (a wrong engine, by `sed`) is
/// found on the manual's example and shrunk to the 7 steps that still show it.
#[test]
fn seq_trace_through_engine_cmd() {
    let own = format!("{} oracle run -", env!("CARGO_BIN_EXE_bpspec"));
    let dir = format!("{}/oracle/corpus/seq_trace", root());
    let (out, _) = exits(0, &argv("oracle check --engine-cmd {} {}", &[&own, &dir]));
    assert_has(&out, &[": 12 agree, 0 differ"]);
    let wrong = format!("{own} | sed 's/^E 17 print 2 3 /E 17 print 2 4 /'");
    let (d, out_dir) = tmp("seqshrunk");
    let example = seq_file("manual_example.json");
    let (out, _) = exits(
        1,
        &argv(
            "oracle check --engine-cmd {} {} --out {}",
            &[&wrong, &example, &out_dir],
        ),
    );
    assert_has(&out, &["SHRUNK", "size 12 -> 7"]);
    let saved = d.join("manual_example.min.json");
    exits(0, &["oracle", "check", saved.to_str().unwrap()]);
}

/// `erl` on a seq_trace file without Erlang/OTP on PATH: exit 4, saying what to install.
#[test]
fn seq_trace_erl_without_erlang_exits_4() {
    let path = std::ffi::OsStr::new("/nonexistent");
    let f = seq_file("empty_token.json");
    let (code, _, err) = bpspec_env(&["oracle", "erl", &f], &[("PATH", path)]);
    assert_eq!(code, 4, "{err}");
    assert_has(&err, &["apt-get install erlang-nox"]);
}
