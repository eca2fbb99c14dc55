//! `bpspec report` over several shards' directories (merge, overlap, JSON, JUnit), `bpspec part`,
//! the shard split of `bpspec check` and `bpspec shard`, and clap's `--help` / `--version`.

mod common;
use common::{argv, assert_has, bpspec, exits, fresh_dir};
use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

const LOOM: &str =
    "loom\tqsbr\tadd\tbaseline\tpreemption=2 branches=20000 executions=1234\thold\thold\t0.5\t\n";
const SPEC: &str =
    "stateright\tspec\ts2f2x1\tbaseline\tbfs states=99 unique=50 depth=9\thold\thold\t1.0\t\n";
const SKIP: &str = "oracle\t-\tdifferential on OTP root\tbaseline\totp-root=\thold\tskipped\t0.000\tBPSPEC_OTP_ROOT is not set\n";

#[test]
fn report_merges_shards_and_writes_json_and_junit() {
    let (a, b) = (fresh_dir("report", "shard1"), fresh_dir("report", "shard2"));
    std::fs::write(a.join("loom.tsv"), LOOM).unwrap();
    std::fs::write(b.join("stateright.tsv"), SPEC).unwrap();
    std::fs::write(b.join("oracle.tsv"), SKIP).unwrap();
    let json = a.join("merged.json");
    let junit = a.join("merged.xml");
    let (code, out, err) = bpspec(&[
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("1234 executions") && out.contains("99 states"),
        "{out}"
    );
    assert!(
        out.trim_end().ends_with("2 passed, 0 failed, 1 skipped"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["passed"], 2);
    assert_eq!(v["skipped"], 1);
    assert_eq!(v["rows"].as_array().unwrap().len(), 3);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuites") && xml.contains("tests=\"3\"") && xml.contains("<skipped"),
        "{xml}"
    );
}

#[test]
fn report_fails_on_a_row_in_two_shards() {
    let (a, b) = (
        fresh_dir("report", "overlap1"),
        fresh_dir("report", "overlap2"),
    );
    std::fs::write(a.join("loom.tsv"), LOOM).unwrap();
    std::fs::write(b.join("loom.tsv"), LOOM).unwrap();
    let (_, err) = exits(2, &["report", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_has(&err, &["the shards overlap"]);
}

#[test]
fn a_failed_row_fails_the_junit_case() {
    let d = fresh_dir("report", "failed");
    std::fs::write(
        d.join("loom.tsv"),
        "loom\tqsbr\tadd\tbaseline\tpreemption=2\thold\tVIOLATED\t0.5\tI3 violated\n",
    )
    .unwrap();
    exits(1, &["report", d.to_str().unwrap()]);
    let xml = std::fs::read_to_string(d.join("report.xml")).unwrap();
    assert_has(&xml, &["<failure", "I3 violated"]);
}

#[test]
fn part_records_a_row_and_keeps_the_log() {
    let d = fresh_dir("report", "part");
    let dir = d.to_str().unwrap();
    // `bpspec part NAME --checker demo OPTIONS --results DIR -- COMMAND...`
    let part = |name: &str, options: &[&str], command: &[&str]| {
        let mut args = argv("part {} --checker demo", &[name]);
        args.extend(options.iter().map(|o| o.to_string()));
        args.extend(argv("--results {} --", &[dir]));
        args.extend(command.iter().map(|c| c.to_string()));
        bpspec(&args)
    };
    let echo = ["echo", "test result: ok. 3 passed; 0 failed"];
    let (code, out, err) = part("ok", &["--bound", "n=1"], &echo);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, _) = part("bad", &[], &["false"]);
    assert_eq!(code, 0, "the table, not the part, gives the verdict");
    let (code, _, _) = part("quiet", &["--no-row"], &["true"]);
    assert_eq!(code, 0);
    let (code, _, _) = part("later", &["--skip", "no OTP root"], &["false"]);
    assert_eq!(code, 0);
    let rows = std::fs::read_to_string(d.join("demo.tsv")).unwrap();
    let rows: Vec<Vec<&str>> = rows.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(
        (rows[0][2], rows[0][4], rows[0][6]),
        ("ok", "n=1 tests=3", "hold")
    );
    assert_eq!((rows[1][2], rows[1][6]), ("bad", "VIOLATED"));
    assert_eq!(
        (rows[2][2], rows[2][6], rows[2][8]),
        ("later", "skipped", "no OTP root")
    );
    let log = std::fs::read_to_string(d.join("logs/ok.log")).unwrap();
    assert!(log.contains("3 passed"), "{log}");
    // Every part that ran has a line of times (NAME, start, wall, user, system), in the order
    // they ended; a skipped part has none. The report does not take the file for rows.
    let times = std::fs::read_to_string(d.join("parts/times.tsv")).unwrap();
    let times: Vec<Vec<&str>> = times.lines().map(|l| l.split('\t').collect()).collect();
    let names: Vec<&str> = times.iter().map(|t| t[0]).collect();
    assert_eq!(names, ["ok", "bad", "quiet"], "{times:?}");
    for t in &times {
        assert_eq!(t.len(), 5, "{t:?}");
        assert!(
            t[1..]
                .iter()
                .all(|v| v.parse::<f64>().is_ok_and(|x| x >= 0.0)),
            "{t:?}"
        );
    }
    assert!(
        out.contains("[part] ok: hold in") && out.contains("(CPU: user"),
        "{out}"
    );
    let (code, out, _) = bpspec(&["report", dir]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("1 passed, 1 failed, 1 skipped"), "{out}");
}

fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

/// The union of the shards of `bpspec check --mutants` is exactly its unsharded plan, without
/// overlap, for several shard counts.
#[test]
fn check_shards_partition_the_plan() {
    let (code, all, err) = bpspec(&["check", "--mutants", "--list"]);
    assert_eq!(code, 0, "{err}");
    let all = lines(&all);
    assert!(
        all.len() > 6 && all.iter().any(|k| k.starts_with("spec-kill:")),
        "{all:?}"
    );
    for n in [2, 3, 5] {
        let mut union = Vec::new();
        for i in 1..=n {
            let (code, out, err) = bpspec(&[
                "check",
                "--mutants",
                "--list",
                "--shard",
                &format!("{i}/{n}"),
            ]);
            assert_eq!(code, 0, "{err}");
            union.extend(lines(&out));
        }
        let set: BTreeSet<_> = union.iter().cloned().collect();
        assert_eq!(
            set.len(),
            union.len(),
            "N={n}: a run is in two shards: {union:?}"
        );
        assert_eq!(set, all.iter().cloned().collect(), "N={n}");
    }
}

fn shard_of(input: &str, shard: &str) -> Vec<String> {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bpspec"))
        .args(["shard", shard, "--prefix=--test=loom::"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success());
    lines(&String::from_utf8(out.stdout).unwrap())
}

/// `bpspec shard` (the split of the loom and shuttle tests, scripts/cargo-test-shard.sh): every
/// test name lands in exactly one shard.
#[test]
fn test_name_shards_partition_the_tests() {
    let names: Vec<String> = (0..200).map(|i| format!("baseline_{i}")).collect();
    let input = names.join("\n") + "\n";
    assert_eq!(shard_of(&input, "1/1"), names);
    for n in [2, 4, 7] {
        let mut union = Vec::new();
        for i in 1..=n {
            union.extend(shard_of(&input, &format!("{i}/{n}")));
        }
        union.sort();
        let mut want = names.clone();
        want.sort();
        assert_eq!(union, want, "N={n}");
    }
    let (_, err) = exits(2, &["shard", "3/2"]);
    assert_has(&err, &["need 1 <= i <= N"]);
}

#[test]
fn help_and_version() {
    let (out, _) = exits(0, &["--version"]);
    assert!(out.starts_with("bpspec "), "{out}");
    for sub in [
        &["--help"][..],
        &["check", "--help"],
        &["report", "--help"],
        &["explore", "--help"],
        &["oracle", "--help"],
        &["oracle", "erl", "--help"],
        &["part", "--help"],
        &["shard", "--help"],
        &["rate", "--help"],
        &["mutants", "--help"],
    ] {
        let (out, _) = exits(0, sub);
        assert_has(&out, &["Usage: bpspec"]);
    }
    let (out, _) = exits(0, &["help"]);
    assert_has(&out, &["usage: bpspec report DIR"]);
}

const KILLS: &str = "loom\tqsbr\tadd\tskip-w0-before-install\tpreemption=2 branches=20000 executions=7\tkilled\tkilled\t0.1\tCausality violation\n\
shuttle\tqsbr\tadd\tskip-w0-before-install\tpct depth=3 iterations=2000 seed=0x1 first-killed-at=5\tkilled\tkilled\t0.1\tread after free\n\
shuttle\tqsbr\tadd\tskip-w0-before-install\trandom iterations=2000 seed=0x1\tkilled\tsurvives\t0.2\t\n";

/// `bpspec report --markdown ARGS` (ARGS split at spaces).
fn markdown(args: &str) -> (i32, String, String) {
    let mut all = vec!["report", "--markdown"];
    all.extend(args.split_whitespace());
    bpspec(&all)
}

#[test]
fn markdown_select_filters_rows_and_picks_columns() {
    let d = fresh_dir("report", "select");
    let f = d.join("rows.tsv");
    std::fs::write(&f, format!("# a comment line\n{LOOM}{SPEC}{KILLS}")).unwrap();
    let f = f.to_str().unwrap();
    let (code, out, err) = markdown(&format!("select checker=loom,stateright variant=baseline columns=scenario:model,executions,states,verdict {f}"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "| model | executions | states | verdict |\n|---|---:|---:|---|\n| `add` | 1,234 |  | hold |\n| `s2f2x1` |  | 99 | hold |\n"
    );
    // A filter that leaves nothing, and an unknown option, are errors (exit 2).
    let (code, _, err) = markdown(&format!("select scenario=nope* {f}"));
    assert_eq!(code, 2);
    assert!(err.contains("no row"), "{err}");
    let (code, _, err) = markdown(&format!("select colour=red {f}"));
    assert_eq!(code, 2);
    assert!(err.contains("unknown option"), "{err}");
    let (code, _, err) = markdown(&format!("rows checker=loom {f}"));
    assert_eq!(code, 2);
    assert!(err.contains("takes no options"), "{err}");
}

#[test]
fn markdown_matrix_pivots_mutants_by_checker_with_notes() {
    let d = fresh_dir("report", "matrix");
    let f = d.join("rows.tsv");
    std::fs::write(&f, format!("{LOOM}{KILLS}")).unwrap();
    let notes = d.join("notes.tsv");
    std::fs::write(
        &notes,
        "# notes\nmutant\tshuttle\trefinement\nskip-w0-before-install\tan ordering bug\trejected\nskip-uninstall\t(no engine mutant)\t\n",
    )
    .unwrap();
    let (code, out, err) = markdown(&format!(
        "matrix notes={} columns=loom,shuttle,refinement:refinement_(histories) {}",
        notes.display(),
        f.display()
    ));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("| mutant | loom | shuttle | refinement (histories) |\n|---|---|---|---|\n| `skip-w0-before-install` | killed on `add` | killed on `add` (PCT); survives on `add` (random) (EXPECTED killed); an ordering bug | rejected |\n| `skip-uninstall` | not run | (no engine mutant) |  |\n"),
        "{out}"
    );
    assert!(out.contains("3 mutant runs shown"), "{out}");
    let (code, _, err) = markdown(&format!("matrix columns=loom,tla {}", f.display()));
    assert_eq!(code, 2);
    assert!(err.contains("neither a checker"), "{err}");
}
