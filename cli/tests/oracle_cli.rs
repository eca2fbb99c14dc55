//! `bpspec oracle`: one test per exit code (docs/cli.md).

mod common;
use common::{argv, assert_has, bpspec, bpspec_env, exits, with_files};
use std::path::PathBuf;

fn corpus(name: &str) -> String {
    format!("{}/../oracle/corpus/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str, content: &str) -> String {
    let d: PathBuf = std::env::temp_dir().join(format!("bpspec-oracle-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, content).unwrap();
    p.display().to_string()
}

/// `bpspec oracle check` on the corpus file `file` (on `engine`, else the default one) exits 0
/// with `n` observations agreeing.
fn agrees(file: &str, engine: Option<&str>, n: usize) {
    let mut args = argv("oracle check {}", &[&corpus(file)]);
    args.extend(
        engine
            .map(|e| argv("--engine {}", &[e]))
            .unwrap_or_default(),
    );
    let (out, _) = exits(0, &args);
    assert_has(&out, &[&format!("{n} observations agree")]);
}

/// `bpspec oracle CMD FILE --engine ENGINE` exits 3 naming the feature `what` no engine has at
/// `$.ops[0].trace_pattern.spec`.
fn unsupported(cmd: &str, file: &str, engine: &str, what: &str) {
    let (_, err) = exits(3, &argv("oracle {} {} --engine {}", &[cmd, file, engine]));
    assert_has(
        &err,
        &[&format!(
            "$.ops[0].trace_pattern.spec: unsupported feature: {what}"
        )],
    );
}

#[test]
fn run_prints_observations_and_exits_0() {
    let f = corpus("call_count_basic.json");
    let (out, _) = exits(0, &["oracle", "run", &f]);
    assert_eq!(out.lines().count(), 11, "{out}");
    assert_has(
        &out,
        &[r#"{"op":3,"trace_info":{"item":"call_count","value":5}}"#],
    );
    let (code, out2, _) = bpspec(&argv("oracle run {} --engine oracle", &[&f]));
    assert_eq!((code, &out2), (0, &out));
}

#[test]
fn check_agreeing_exits_0() {
    agrees("local_call_trace_order.json", None, 41);
}

#[test]
fn check_differing_exits_1_with_a_diff() {
    let text = std::fs::read_to_string(corpus("call_count_pause_and_restart.json")).unwrap();
    let bad = text.replacen(
        r#"{"op": 6, "trace_info": {"item": "call_count", "value": 4}}"#,
        r#"{"op": 6, "trace_info": {"item": "call_count", "value": 8}}"#,
        1,
    );
    assert_ne!(bad, text);
    let f = temp("differ.json", &bad);
    let (out, _) = exits(1, &["oracle", "check", &f]);
    assert_has(
        &out,
        &[
            r#"- {"op":6,"trace_info":{"item":"call_count","value":8}}"#,
            r#"+ {"op":6,"trace_info":{"item":"call_count","value":4}}"#,
        ],
    );
}

#[test]
fn malformed_contradictory_or_incomplete_input_exits_2() {
    let malformed = temp("malformed.json", "{\n \"name\": \"x\",\n \"modules\": [}\n");
    let contradictory = temp(
        "contradictory.json",
        r#"{"name": "x", "modules": [], "ops": [{"schedule_in": "p"}], "processes": [{"name": "p"}]}"#,
    );
    let noexpect = temp(
        "noexpect.json",
        r#"{"name": "x", "modules": [], "ops": []}"#,
    );
    for (args, says) in [
        (&["oracle", "run", &malformed][..], "malformed.json:3:"),
        (
            &["oracle", "check", &contradictory],
            "at $.ops[0].schedule_in: process p is already scheduled in",
        ),
        (&["oracle", "check", &noexpect], "at $.expect"),
        (
            &["oracle", "run", "/nonexistent/x.json"],
            "/nonexistent/x.json: cannot read",
        ),
        (&["oracle", "frob"], "usage: bpspec oracle run FILE"),
    ] {
        let (_, err) = exits(2, args);
        assert_has(&err, &[says]);
    }
}

#[test]
fn unsupported_features_exit_3_naming_feature_and_place() {
    // Every corpus feature runs on the engine; what no engine has: match specs on
    // meta breakpoints.
    let meta_ms = std::env::temp_dir().join(format!("bpspec-meta-ms-{}.json", std::process::id()));
    std::fs::write(
        &meta_ms,
        r#"{"name": "meta with a match spec", "modules": [{"name": "m", "functions": [{"name": "f", "exported": true, "body": []}]}],
            "processes": [{"name": "p1"}],
            "ops": [{"trace_pattern": {"pattern": "m:f/0", "spec": {"actions": ["return_trace"]}, "flags": ["meta"]}}]}"#,
    )
    .unwrap();
    for engine in ["reference", "oracle"] {
        let f = meta_ms.to_str().unwrap();
        unsupported("run", f, engine, "match specs on meta breakpoints");
    }
    let _ = std::fs::remove_file(&meta_ms);
    // Trace sessions run on the engine.
    agrees("needs_sessions.json", None, 8);
    // Meta trace runs on the engine since meta6.
    agrees("call_count_combo_meta.json", None, 6);
    // Global trace runs on the engine.
    agrees("global_vs_local.json", None, 23);
    // return_trace / exception_trace run on both; the sequential oracle has global
    // trace but refuses match specs on global breakpoints.
    for engine in ["reference", "oracle"] {
        for (file, n) in [
            ("return_trace_order.json", 20),
            ("exception_trace_order.json", 12),
        ] {
            agrees(file, Some(engine), n);
        }
    }
    let f = corpus("global_match_spec.json");
    unsupported("check", &f, "oracle", "match specs on global breakpoints");
}

#[test]
fn erl_missing_exits_4_saying_what_to_install() {
    let f = corpus("call_count_basic.json");
    let path = std::ffi::OsStr::new("/nonexistent");
    let (code, _, err) = bpspec_env(&["oracle", "erl", &f], &[("PATH", path)]);
    assert_eq!(code, 4);
    assert_has(&err, &["apt-get install erlang-nox"]);
}

#[test]
fn erl_runs_the_corpus_and_counts_skips() {
    let files = [
        "call_count_basic.json",
        "needs_call_memory.json",
        "call_time_info.json",
        "call_count_combo_meta.json",
        "pause_restart_with_local.json",
    ];
    let (out, _) = exits(0, &with_files(argv("oracle erl", &[]), &files, corpus));
    // call_count_combo_meta runs on ERTS since meta6 (it was the feature skip).
    assert_has(&out, &["4 agree, 0 differ, 0 known deviations, 0 stale deviation markers, 1 skipped (need a newer OTP), 0 skipped (feature not implemented yet), 0 checked on ERTS only (feature not in bpspec yet), 0 errors"]);
}

/// `--otp-root DIR`: an unusable root is exit 4 naming the root and why; a missing directory
/// or missing files is exit 2.
#[test]
fn erl_otp_root_unusable_exits_4_naming_the_root() {
    let f = corpus("call_count_basic.json");
    let empty = std::env::temp_dir().join(format!("bpspec-otp-root-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    // A root whose usr/bin/erl cannot run (an empty, non-executable file): chroot fails.
    let broken =
        std::env::temp_dir().join(format!("bpspec-otp-root-broken-{}", std::process::id()));
    std::fs::create_dir_all(broken.join("usr/bin")).unwrap();
    std::fs::write(broken.join("usr/bin/erl"), "").unwrap();
    let plain = temp("not_a_dir", "x");
    let cases: [(&str, &str); 4] = [
        ("/nonexistent/otp", "No such file or directory"),
        (&plain, "not a directory"),
        (empty.to_str().unwrap(), "no usr/bin/erl in this OTP root"),
        (broken.to_str().unwrap(), "erl` failed"),
    ];
    for (root, why) in cases {
        let (_, err) = exits(4, &argv("oracle erl --otp-root {} {}", &[root, &f]));
        let names_root = format!("OTP root {root}: ");
        assert_has(&err, &[&names_root, why, "scripts/otp-root.sh"]);
    }
    for args in [
        &["oracle", "erl", "--otp-root"][..],
        &["oracle", "erl", "--otp-root", "/opt/otp29"],
        &["oracle", "erl", "--otp-root", "", &f],
    ] {
        let (_, err) = exits(2, args);
        assert_has(&err, &["--otp-root needs a directory"]);
    }
    let _ = std::fs::remove_dir_all(&empty);
    let _ = std::fs::remove_dir_all(&broken);
}

/// `--otp-root` on a real root (`BPSPEC_OTP_ROOT`, e.g. CI's /opt/otp29): call_memory runs
/// there (needs OTP 26) and the summary names the root. Skipped, and says so, when it is unset.
#[test]
fn erl_otp_root_runs_call_memory() {
    let Some(root) = std::env::var_os("BPSPEC_OTP_ROOT").filter(|v| !v.is_empty()) else {
        eprintln!("skipped: BPSPEC_OTP_ROOT is not set (scripts/otp-root.sh builds one)");
        return;
    };
    let root = root.to_string_lossy().to_string();
    let files = [
        "call_count_basic.json",
        "needs_call_memory.json",
        "call_memory_info.json",
    ];
    let erl = argv("oracle erl --otp-root {}", &[&root]);
    let (out, _) = exits(0, &with_files(erl, &files, corpus));
    let summary = format!("(chroot {root}): 3 agree, 0 differ");
    assert_has(&out, &[&summary, "0 skipped (need a newer OTP)"]);
}
