//! `bpspec oracle`: one test per exit code (docs/cli.md).

use std::path::PathBuf;
use std::process::Command;

fn bpspec(args: &[&str], path_env: Option<&str>) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bpspec"));
    c.args(args);
    if let Some(p) = path_env {
        c.env("PATH", p);
    }
    let out = c.output().expect("run bpspec");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

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

#[test]
fn run_prints_observations_and_exits_0() {
    let (code, out, err) = bpspec(&["oracle", "run", &corpus("call_count_basic.json")], None);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines().count() == 11
            && out.contains(r#"{"op":3,"trace_info":{"item":"call_count","value":5}}"#),
        "{out}"
    );
    let (code, out2, _) = bpspec(
        &[
            "oracle",
            "run",
            &corpus("call_count_basic.json"),
            "--engine",
            "oracle",
        ],
        None,
    );
    assert_eq!((code, &out2), (0, &out));
}

#[test]
fn check_agreeing_exits_0() {
    let (code, out, err) = bpspec(
        &["oracle", "check", &corpus("local_call_trace_order.json")],
        None,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("41 observations agree"), "{out}");
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
    let (code, out, _) = bpspec(&["oracle", "check", &f], None);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(r#"- {"op":6,"trace_info":{"item":"call_count","value":8}}"#)
            && out.contains(r#"+ {"op":6,"trace_info":{"item":"call_count","value":4}}"#),
        "{out}"
    );
}

#[test]
fn malformed_contradictory_or_incomplete_input_exits_2() {
    let f = temp("malformed.json", "{\n \"name\": \"x\",\n \"modules\": [}\n");
    let (code, _, err) = bpspec(&["oracle", "run", &f], None);
    assert_eq!(code, 2);
    assert!(err.contains("malformed.json:3:"), "{err}");
    let f = temp(
        "contradictory.json",
        r#"{"name": "x", "modules": [], "ops": [{"schedule_in": "p"}], "processes": [{"name": "p"}]}"#,
    );
    let (code, _, err) = bpspec(&["oracle", "check", &f], None);
    assert_eq!(code, 2);
    assert!(
        err.contains("at $.ops[0].schedule_in: process p is already scheduled in"),
        "{err}"
    );
    let f = temp(
        "noexpect.json",
        r#"{"name": "x", "modules": [], "ops": []}"#,
    );
    let (code, _, err) = bpspec(&["oracle", "check", &f], None);
    assert_eq!(code, 2);
    assert!(err.contains("at $.expect"), "{err}");
    let (code, _, err) = bpspec(&["oracle", "run", "/nonexistent/x.json"], None);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/x.json: cannot read"), "{err}");
    let (code, _, err) = bpspec(&["oracle", "frob"], None);
    assert_eq!(code, 2);
    assert!(err.contains("usage: bpspec oracle run FILE"), "{err}");
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
        let (code, out, err) = bpspec(
            &[
                "oracle",
                "run",
                meta_ms.to_str().unwrap(),
                "--engine",
                engine,
            ],
            None,
        );
        assert_eq!(code, 3, "{engine}: {out}{err}");
        assert!(
            err.contains(
                "$.ops[0].trace_pattern.spec: unsupported feature: match specs on meta breakpoints"
            ),
            "{err}"
        );
    }
    let _ = std::fs::remove_file(&meta_ms);
    // Trace sessions run on the engine.
    let (code, out, err) = bpspec(&["oracle", "check", &corpus("needs_sessions.json")], None);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("8 observations agree"), "{out}");
    // Meta trace runs on the engine since meta6.
    let (code, out, err) = bpspec(
        &["oracle", "check", &corpus("call_count_combo_meta.json")],
        None,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("6 observations agree"), "{out}");
    // Global trace runs on the engine.
    let (code, out, err) = bpspec(&["oracle", "check", &corpus("global_vs_local.json")], None);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("23 observations agree"), "{out}");
    // return_trace / exception_trace run on both; the sequential oracle has global
    // trace but refuses match specs on global breakpoints.
    for engine in ["reference", "oracle"] {
        for (file, n) in [
            ("return_trace_order.json", 20),
            ("exception_trace_order.json", 12),
        ] {
            let (code, out, err) = bpspec(
                &["oracle", "check", &corpus(file), "--engine", engine],
                None,
            );
            assert_eq!(code, 0, "{file} on {engine}: {out}{err}");
            assert!(out.contains(&format!("{n} observations agree")), "{out}");
        }
    }
    let (code, out, err) = bpspec(
        &[
            "oracle",
            "check",
            &corpus("global_match_spec.json"),
            "--engine",
            "oracle",
        ],
        None,
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains(
            "$.ops[0].trace_pattern.spec: unsupported feature: match specs on global breakpoints"
        ),
        "{err}"
    );
}

#[test]
fn erl_missing_exits_4_saying_what_to_install() {
    let (code, _, err) = bpspec(
        &["oracle", "erl", &corpus("call_count_basic.json")],
        Some("/nonexistent"),
    );
    assert_eq!(code, 4);
    assert!(err.contains("apt-get install erlang-nox"), "{err}");
}

#[test]
fn erl_runs_the_corpus_and_counts_skips() {
    let files: Vec<String> = [
        "call_count_basic.json",
        "needs_call_memory.json",
        "call_time_info.json",
        "call_count_combo_meta.json",
        "pause_restart_with_local.json",
    ]
    .iter()
    .map(|f| corpus(f))
    .collect();
    let mut args = vec!["oracle", "erl"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = bpspec(&args, None);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        // call_count_combo_meta runs on ERTS since meta6 (it was the feature skip).
        out.contains("4 agree, 0 differ, 0 known deviations, 0 stale deviation markers, 1 skipped (need a newer OTP), 0 skipped (feature not implemented yet), 0 checked on ERTS only (feature not in bpspec yet), 0 errors"),
        "{out}"
    );
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
        let (code, out, err) = bpspec(&["oracle", "erl", "--otp-root", root, &f], None);
        assert_eq!(code, 4, "{root}: {out}{err}");
        assert!(
            err.contains(&format!("OTP root {root}: "))
                && err.contains(why)
                && err.contains("scripts/otp-root.sh"),
            "{root}: {err}"
        );
    }
    for args in [
        &["oracle", "erl", "--otp-root"][..],
        &["oracle", "erl", "--otp-root", "/opt/otp29"],
        &["oracle", "erl", "--otp-root", "", &f],
    ] {
        let (code, _, err) = bpspec(args, None);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("--otp-root needs a directory"), "{err}");
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
        corpus("call_count_basic.json"),
        corpus("needs_call_memory.json"),
        corpus("call_memory_info.json"),
    ];
    let mut args = vec!["oracle", "erl", "--otp-root", &root];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = bpspec(&args, None);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("(chroot {root}): 3 agree, 0 differ"))
            && out.contains("0 skipped (need a newer OTP)"),
        "{out}"
    );
}
