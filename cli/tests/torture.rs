//! `bpspec torture` and `bpspec oracle torture`: usage errors exit 2 naming the argument; a small
//! engine torture exits 0 and writes its row to the results table.

mod common;
use common::{argv, assert_has, bpspec, bpspec_env};

#[test]
fn torture_bad_arguments_exit_2_naming_them() {
    let (code, _, err) = bpspec(&["torture", "--schedulers", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--schedulers 0"), "{err}");
    let (code, _, err) = bpspec(&["torture", "--mutant", "no-such"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-such"), "{err}");
    let (code, _, err) = bpspec(&["torture", "--load", "--code-ix", "4ix"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("4ix"), "{err}");
    let (code, _, err) = bpspec(&["torture", "--load", "--purge", "hard"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--purge hard"), "{err}");
    let (code, _, err) = bpspec(&["torture", "--load", "--procs", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--procs 0"), "{err}");
    let (code, _, err) = bpspec(&["torture", "--wait-plan", "lazy"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--wait-plan lazy"), "{err}");
    let (code, _, err) = bpspec(&["torture", "--load", "--wait-plan", "batch"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--wait-plan"), "{err}");
    let (code, _, err) = bpspec(&["oracle", "torture", "--frob"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--frob"), "{err}");
}

/// Run `bpspec torture ARGS` (`args` split at white space) with a fresh results directory: exit
/// code, stdout, torture.tsv.
fn torture_run(tag: &str, args: &str) -> (i32, String, String) {
    torture_run_env(tag, args, &[])
}

/// [`torture_run`] with more environment.
fn torture_run_env(
    tag: &str,
    args: &str,
    env: &[(&str, &std::ffi::OsStr)],
) -> (i32, String, String) {
    let d = std::env::temp_dir().join(format!("bpspec-cli-torture-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let args = argv(&format!("torture {args}"), &[]);
    let mut env = env.to_vec();
    env.push(("BPSPEC_RESULTS", d.as_os_str()));
    let (code, text, _) = bpspec_env(&args, &env);
    let rows = std::fs::read_to_string(d.join("torture.tsv")).expect("torture.tsv written");
    (code, text, rows)
}

/// Each mutant run is a child process: one that dies before its verdict (here by the test hook
/// `BPSPEC_TORTURE_TEST_ABORT`; in a sweep by a heap the mutant corrupted) cannot end the sweep,
/// and its parent records the row (killed, with the cause).
#[test]
fn a_mutant_run_that_dies_is_recorded_by_its_parent() {
    let (code, text, rows) = torture_run_env(
        "abort",
        "--load --protocols nonblocking --schedulers 2 --mutant load-clear-old-at-once --mutant-seconds 5",
        &[("BPSPEC_TORTURE_TEST_ABORT", std::ffi::OsStr::new("1"))],
    );
    assert_eq!(code, 0, "{text}");
    assert_has(
        &rows,
        &[
            "torture\tqsbr\tload-s2@nonblocking\tload-clear-old-at-once\tisolated child",
            "\tkilled\tkilled\t",
            "the run died before its verdict",
            "aborting",
        ],
    );
    assert_eq!(rows.lines().count(), 1, "{rows}");
}

#[test]
fn small_torture_holds_and_records_its_row() {
    let (code, text, rows) = torture_run("small", "--schedulers 2 --hits 50000 --seed 7");
    assert_eq!(code, 0, "{text}");
    assert_has(&text, &["seed=0x7", "hits="]);
    assert!(
        rows.starts_with("torture\tqsbr\tchurn-s2\tbaseline\t") && rows.contains("\thold\thold\t"),
        "{rows}"
    );
}

/// Under every wait plan other than ERTS's the torture holds, records a row `churn-sN@PLAN`, and
/// under the batching plans its stager made batches (a run without one is short of churn).
#[test]
fn small_torture_holds_under_every_wait_plan() {
    let (code, text, rows) = torture_run(
        "plans",
        "--schedulers 2 --hits 200000 --seed 7 --wait-plan batch,batch-elide-idle,pipeline",
    );
    assert_eq!(code, 0, "{text}");
    for plan in ["batch", "batch-elide-idle", "pipeline"] {
        let row = rows
            .lines()
            .find(|r| r.starts_with(&format!("torture\tqsbr\tchurn-s2@{plan}\tbaseline\t")))
            .unwrap_or_else(|| panic!("no row for {plan}: {rows}"));
        assert!(row.contains("\thold\thold\t"), "{row}");
        let batches = row.contains(" batches=") && !row.contains(" batches=0 ");
        assert_eq!(batches, plan != "pipeline", "{row}");
        assert!(text.contains(&format!("wait-plan={plan}")), "{text}");
    }
}

#[test]
fn a_run_the_time_bound_stops_short_of_its_hits_is_a_failed_row() {
    let (code, text, rows) =
        torture_run("short", "--schedulers 2 --hits 1000000000000 --seconds 1");
    assert_eq!(code, 1, "{text}");
    assert_has(&text, &["short: hits "]);
    assert_has(&rows, &["\thold\tshort-of-hits\t"]);
}

#[test]
fn small_load_torture_holds_under_both_protocols_and_records_its_rows() {
    let (code, text, rows) = torture_run(
        "load",
        "--load --schedulers 2 --hits 100000 --seed 7 --code-ix 2ix,3ix",
    );
    assert_eq!(code, 0, "{text}");
    assert_has(
        &text,
        &[
            "protocol=blocking",
            "protocol=nonblocking",
            "loads=",
            "code-ix=2ix",
            "code-ix=3ix",
        ],
    );
    for p in ["blocking", "nonblocking", "blocking-3ix", "nonblocking-3ix"] {
        assert_row(&rows, &format!("load-s2@{p}"), "baseline", "hold");
    }
}

#[test]
fn load_torture_takes_the_lw1_fold_under_nonblocking_only() {
    let (code, text, rows) = torture_run(
        "loadfold",
        "--load --protocols nonblocking --lw1-fold --schedulers 2 --hits 100000 --seed 7",
    );
    assert_eq!(code, 0, "{text}");
    assert_has(&text, &["protocol=nonblocking", "lw1-fold=true"]);
    assert_row(&rows, "load-s2@nonblocking-fold", "baseline", "hold");
    for bad in [
        &["--load", "--lw1-fold"][..],
        &[
            "--load",
            "--protocols",
            "nonblocking",
            "--code-ix",
            "3ix",
            "--lw1-fold",
        ],
    ] {
        let mut args = vec!["torture"];
        args.extend_from_slice(bad);
        let (code, _, err) = bpspec(&args);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--lw1-fold"), "{err}");
    }
}

#[test]
fn load_torture_kills_a_mutant_and_refuses_a_non_load_one() {
    let (code, text, rows) = torture_run(
        "loadmut",
        "--load --schedulers 2 --mutant load-purge-skip-check --mutant-seconds 20",
    );
    assert_eq!(code, 0, "{text}");
    assert_has(
        &rows,
        &[
            "load-s2@blocking\tload-purge-skip-check\t",
            "\tkilled\tkilled\t",
        ],
    );
    assert_has(&rows, &["load-s2@nonblocking\tload-purge-skip-check\t"]);
    let (code, _, err) = bpspec(&["torture", "--load", "--mutant", "wait-without-new-period"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a load mutant"), "{err}");
    let (code, _, err) = bpspec(&["torture", "--protocols", "blocking"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("required arguments"), "{err}");
}

#[test]
fn load_torture_with_killing_purges_holds_and_kills_the_unchecked_purge() {
    let args = "--load --schedulers 2 --hits 100000 --seed 7 --purge kill,mixed";
    let (text, rows) = torture_ok("loadkill", args);
    for want in ["purge=kill", "purge=mixed", "kill_purges=", "kills="] {
        assert!(text.contains(want), "{want}: {text}");
    }
    for p in ["blocking", "nonblocking"] {
        for m in ["kill", "mixed"] {
            assert_row(&rows, &format!("load-s2@{p}-{m}"), "baseline", "hold");
        }
    }
    // code:purge/1 without its check and its wait for the killed processes' exits.
    let args =
        "--load --schedulers 2 --purge kill --mutant load-purge-skip-check --mutant-seconds 20";
    let (_, rows) = torture_ok("loadkillmut", args);
    for p in ["blocking", "nonblocking"] {
        let scenario = format!("load-s2@{p}-kill");
        assert_row(&rows, &scenario, "load-purge-skip-check", "killed");
    }
}

/// More than one process per scheduler (`--procs`): processes switched at scheduling points,
/// switched-out ones killed at their switch-in by killing purges; the baseline holds with both
/// conservations, and `code:purge/1` without its check and wait is killed.
#[test]
fn load_torture_with_two_processes_per_scheduler_holds_and_kills_the_unchecked_purge() {
    let args = "--load --protocols nonblocking --schedulers 2 --procs 2 --hits 100000 --seed 7 --purge kill";
    let (text, rows) = torture_ok("loadprocs", args);
    for want in ["procs=2", "switches=", "switch_kills="] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert_row(&rows, "load-s2@nonblocking-p2-kill", "baseline", "hold");
    let args = "--load --protocols nonblocking --schedulers 2 --procs 2 --purge kill --mutant load-purge-skip-check --mutant-seconds 20";
    let (_, rows) = torture_ok("loadprocsmut", args);
    assert_row(
        &rows,
        "load-s2@nonblocking-p2-kill",
        "load-purge-skip-check",
        "killed",
    );
}

/// [`torture_run`] that must exit 0: stdout and torture.tsv.
fn torture_ok(tag: &str, args: &str) -> (String, String) {
    let (code, text, rows) = torture_run(tag, args);
    assert_eq!(code, 0, "{text}");
    (text, rows)
}

/// `rows` has a torture row of `scenario` and `variant` whose expected and observed verdicts are
/// both `verdict`.
fn assert_row(rows: &str, scenario: &str, variant: &str, verdict: &str) {
    let start = format!("torture\tqsbr\t{scenario}\t{variant}\t");
    let verdicts = format!("\t{verdict}\t{verdict}\t");
    assert!(
        rows.lines()
            .any(|r| r.starts_with(&start) && r.contains(&verdicts)),
        "{scenario} {variant} {verdict}: {rows}"
    );
}

/// The collector (`--collect`): the baseline holds under both protocols with collections
/// counted, a collection mutant is killed with it and refused without it, and `--collect`
/// needs `--load`.
#[test]
fn load_torture_with_the_collector_holds_and_kills_a_collection_mutant() {
    let args = "--load --collect --schedulers 2 --hits 100000 --seed 7";
    let (text, rows) = torture_ok("loadcollect", args);
    assert!(text.contains("collect=true"), "{text}");
    assert!(text.contains("collections="), "{text}");
    for p in ["blocking", "nonblocking"] {
        assert_row(&rows, &format!("load-s2@{p}-collect"), "baseline", "hold");
    }
    let args =
        "--load --collect --schedulers 2 --mutant collect-free-before-last-wait --mutant-seconds 20";
    let (_, rows) = torture_ok("loadcollectmut", args);
    for p in ["blocking", "nonblocking"] {
        let scenario = format!("load-s2@{p}-collect");
        assert_row(&rows, &scenario, "collect-free-before-last-wait", "killed");
    }
    let (code, _, err) = bpspec(&["torture", "--load", "--mutant", "collect-without-flip"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--collect"), "{err}");
    let (code, _, err) = bpspec(&["torture", "--collect"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("required arguments"), "{err}");
}

/// The engine torture on a module's version (`--versions`): holds and records its row; not with
/// `--load`.
#[test]
fn torture_on_a_modules_version_holds_and_records_its_row() {
    let (text, rows) = torture_ok(
        "versions",
        "--versions --schedulers 2 --hits 100000 --seed 7",
    );
    assert!(text.contains("placement=versions"), "{text}");
    assert_row(&rows, "churn-s2@versions", "baseline", "hold");
    let (code, _, err) = bpspec(&["torture", "--versions", "--load"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}
