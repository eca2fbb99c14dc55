//! The `bpspec` binary: exit codes and error messages for bad input.

mod common;
use common::{assert_has, exits, fresh_dir};

/// `bpspec report` over a fresh directory whose loom.tsv holds `rows`: assert the exit code and
/// return (stdout, stderr).
fn report(name: &str, rows: &str, code: i32) -> (String, String) {
    let d = fresh_dir("cli", name);
    std::fs::write(d.join("loom.tsv"), rows).unwrap();
    exits(code, &["report", d.to_str().unwrap()])
}

const ROW_OK: &str = "loom\tqsbr\tadd\tbaseline\tpreemption=2\thold\thold\t0.1\t\n";
const ROW_KILLED: &str =
    "loom\tqsbr\tadd\tskip-w1-before-commit\tpreemption=2\tkilled\tkilled\t0.2\tI3 violated\n";
const ROW_SURVIVED: &str =
    "loom\tqsbr\tadd\tskip-w1-before-commit\tpreemption=2\tkilled\tsurvives\t0.2\t\n";

#[test]
fn bad_usage_exits_2() {
    let (_, err) = exits(2, &["frobnicate"]);
    assert_has(&err, &["bad usage", "usage: bpspec report DIR"]);
}

#[test]
fn report_prints_the_table_and_exits_0_when_all_verdicts_are_as_expected() {
    let (out, _) = report("ok", &format!("{ROW_OK}{ROW_KILLED}"), 0);
    assert_has(&out, &["skip-w1-before-commit", "2 passed, 0 failed"]);
}

#[test]
fn a_surviving_mutant_exits_1_and_is_named() {
    let (out, err) = report("survived", &format!("{ROW_OK}{ROW_SURVIVED}"), 1);
    assert_has(&out, &["1 passed, 1 failed"]);
    assert_has(&err, &["UNEXPECTED", "loom.tsv:2", "skip-w1-before-commit"]);
}

#[test]
fn malformed_results_name_the_file_and_line_and_exit_2() {
    let (_, err) = report("malformed", &format!("{ROW_OK}only\tthree\tcolumns\n"), 2);
    assert_has(
        &err,
        &["loom.tsv:2", "expected 9 tab-separated columns, found 3"],
    );
}

#[test]
fn missing_or_empty_results_exit_2() {
    let (_, err) = exits(2, &["report", "/nonexistent/bpspec-results"]);
    assert_has(
        &err,
        &["cannot read results directory /nonexistent/bpspec-results"],
    );
    let d = fresh_dir("cli", "empty");
    let (_, err) = exits(2, &["report", d.to_str().unwrap()]);
    assert_has(&err, &["no *.tsv result files"]);
}

#[test]
fn mutants_lists_every_mutant() {
    let (out, _) = exits(0, &["mutants"]);
    assert_eq!(
        out.lines().count(),
        bpspec_reference::Mutant::ALL.len()
            + bpspec_reference::Mutant::COLLECTION.len()
            + bpspec_reference::Mutant::SESSIONS.len()
            + bpspec_reference::Mutant::READERS.len()
            + bpspec_reference::Mutant::LOAD.len()
            + bpspec_reference::Mutant::FENCE_HALVES.len()
            + bpspec_reference::Mutant::COUNTS.len()
    );
    assert_has(
        &out,
        &[
            "fresh-node-relaxed-store",
            "clear-next-on-unlink",
            "skip-w4-before-free",
            "collect-skip-merge",
        ],
    );
}

#[test]
fn scale_writes_its_result_table_and_refuses_bad_input() {
    let (_, err) = exits(2, &["scale", "--max-secs", "0"]);
    assert_has(&err, &["--max-secs and --threads must be positive"]);
    let d = fresh_dir("cli", "scale");
    let out = d.join("perf-scale.tsv");
    // One second per instance: each axis runs until its first instance over the limit.
    exits(
        0,
        &["scale", "--max-secs", "1", "--out", out.to_str().unwrap()],
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(rows[0].starts_with("axis\tschedulers>"), "{text}");
    for axis in [
        "schedulers\t1\t1\t1\t1,682\t763\t",
        "functions\t2\t1\t1\t",
        "sessions\t2\t1\t1\t",
    ] {
        assert!(text.contains(axis), "no row {axis:?}: {text}");
    }
    // An axis goes on only after an instance that finished.
    for w in rows[1..].windows(2) {
        let axis = |r: &str| r.split('\t').next().unwrap().to_string();
        if axis(w[0]) == axis(w[1]) {
            assert!(
                w[0].ends_with("\tyes"),
                "an axis went on after a stop: {text}"
            );
        }
    }
}

#[test]
fn rate_writes_its_result_table_and_refuses_bad_input() {
    let (_, err) = exits(2, &["rate", "--rms", "0"]);
    assert_has(&err, &["--rms must be 1..=12"]);
    let (_, err) = exits(2, &["rate", "--rounds", "0"]);
    assert_has(&err, &["--rounds 1..=99"]);
    let d = fresh_dir("cli", "rate");
    let (_, err) = exits(
        1,
        &[
            "rate",
            "--rms",
            "2",
            "--out",
            d.join("no/such/dir.tsv").to_str().unwrap(),
        ],
    );
    assert_has(&err, &["cannot write", "no/such/dir.tsv"]);
    let out = d.join("perf-rate.tsv");
    exits(
        0,
        &[
            "rate",
            "--rms",
            "2",
            "--rounds",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 16, "header and fifteen rows: {text}");
    assert!(
        rows[0].starts_with("model\tchecker\trounds>\tstates>\tunique>"),
        "{text}"
    );
    assert_has(
        &text,
        &[
            "2PC, 2 resource managers\tBFS, 1 thread",
            "`s2f2x1`\tDFS, 1 thread\t1\t861,126\t264,670",
            "`s2f2x1`\tour own BFS (parent fingerprints), 1 thread\t1\t861,126\t264,670",
            "`s2f2x1`\tDFS, 2 threads\t1\t861,126\t264,670",
            "no model: independent work per thread\tDFS, 2 threads\t1\t8,388,608\t-",
            "no model: the same, one shared counter\tDFS, 1 thread\t1\t4,194,304\t-",
        ],
    );
}
