//! The `bpspec` binary: exit codes and error messages for bad input.

mod common;
use common::bpspec;

fn dir_with(name: &str, content: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("bpspec-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("loom.tsv"), content).unwrap();
    d
}

const ROW_OK: &str = "loom\tqsbr\tadd\tbaseline\tpreemption=2\thold\thold\t0.1\t\n";
const ROW_KILLED: &str =
    "loom\tqsbr\tadd\tskip-w1-before-commit\tpreemption=2\tkilled\tkilled\t0.2\tI3 violated\n";
const ROW_SURVIVED: &str =
    "loom\tqsbr\tadd\tskip-w1-before-commit\tpreemption=2\tkilled\tsurvives\t0.2\t\n";

#[test]
fn bad_usage_exits_2() {
    let (code, _, err) = bpspec(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad usage") && err.contains("usage: bpspec report DIR"),
        "{err}"
    );
}

#[test]
fn report_prints_the_table_and_exits_0_when_all_verdicts_are_as_expected() {
    let d = dir_with("ok", &format!("{ROW_OK}{ROW_KILLED}"));
    let (code, out, _) = bpspec(&["report", d.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("skip-w1-before-commit") && out.contains("2 passed, 0 failed"),
        "{out}"
    );
}

#[test]
fn a_surviving_mutant_exits_1_and_is_named() {
    let d = dir_with("survived", &format!("{ROW_OK}{ROW_SURVIVED}"));
    let (code, out, err) = bpspec(&["report", d.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("1 passed, 1 failed"), "{out}");
    assert!(
        err.contains("UNEXPECTED")
            && err.contains("loom.tsv:2")
            && err.contains("skip-w1-before-commit"),
        "{err}"
    );
}

#[test]
fn malformed_results_name_the_file_and_line_and_exit_2() {
    let d = dir_with("malformed", &format!("{ROW_OK}only\tthree\tcolumns\n"));
    let (code, _, err) = bpspec(&["report", d.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("loom.tsv:2") && err.contains("expected 9 tab-separated columns, found 3"),
        "{err}"
    );
}

#[test]
fn missing_or_empty_results_exit_2() {
    let (code, _, err) = bpspec(&["report", "/nonexistent/bpspec-results"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read results directory /nonexistent/bpspec-results"),
        "{err}"
    );
    let d = std::env::temp_dir().join(format!("bpspec-cli-{}-empty", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let (code, _, err) = bpspec(&["report", d.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no *.tsv result files"), "{err}");
}

#[test]
fn mutants_lists_every_mutant() {
    let (code, out, _) = bpspec(&["mutants"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.lines().count(),
        bpspec_reference::Mutant::ALL.len()
            + bpspec_reference::Mutant::COLLECTION.len()
            + bpspec_reference::Mutant::SESSIONS.len()
            + bpspec_reference::Mutant::READERS.len()
            + bpspec_reference::Mutant::LOAD.len()
    );
    assert!(out.contains("fresh-node-relaxed-store"));
    assert!(out.contains("clear-next-on-unlink"));
    assert!(out.contains("skip-w4-before-free"));
    assert!(out.contains("collect-skip-merge"));
}
