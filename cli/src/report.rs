//! `bpspec report DIR... [--json FILE] [--junit FILE]`: read every `*.tsv` result file in each
//! DIR (one DIR per shard, or one for an unsharded run), print one table, and write the same rows
//! as JSON and as JUnit XML (by default `report.json` and `report.xml` in the first DIR). The
//! format of a result file is in docs/results.md; blank lines and `#` comment lines are skipped
//! (the copies under docs/results/ start with one).
//!
//! Exit codes: 0 every verdict as expected; 1 some verdict not as expected; 2 unreadable or
//! malformed input, or one row in two shards' directories (the shards overlap).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub const USAGE: &str = "bpspec report DIR... [--json FILE] [--junit FILE] | bpspec report --markdown KIND [KEY=VALUE...] FILE... | bpspec report --timeline FILE";

#[derive(clap::Args)]
pub struct Args {
    /// Result directories (each holds *.tsv files); several are merged (shards). With
    /// --markdown or --timeline: the result or trace files to render.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Print one generated Markdown block of KIND (timeline, trace-index, spec-kill-matrix,
    /// kill-matrix, spec-figures, table, rows, select, matrix) from the files given,
    /// with the KEY=VALUE options of select, matrix and kill-matrix among them (cli/src/docgen.rs,
    /// docs/results.md; the book's tables).
    #[arg(long, value_name = "KIND", conflicts_with = "timeline")]
    markdown: Option<String>,
    /// Print a counterexample trace file as a two-lane timeline (stager | scheduler) in Markdown.
    #[arg(long)]
    timeline: bool,
    /// Where to write the JSON results (default: DIR/report.json of the first DIR).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Where to write the JUnit XML results (default: DIR/report.xml of the first DIR).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

const HEADER: [&str; 10] = [
    "checker",
    "progress",
    "scenario",
    "variant",
    "bound",
    "expected",
    "observed",
    "secs",
    "work",
    "counterexample",
];

struct Row {
    /// The nine columns of the file, then the work column (derived).
    cols: Vec<String>,
    source: String,
}

/// The work a row did: the first of `executions=`, `states=`, `iterations=`, `cases=`,
/// `scenarios=`, `tests=` in its bound (docs/results.md), as "N unit"; for a run stopped by its
/// first counterexample (`first-killed-at=K`), "K of N unit".
pub fn work_of(bound: &str) -> String {
    let first = bound
        .split_whitespace()
        .find_map(|t| t.strip_prefix("first-killed-at="));
    for key in [
        "executions",
        "states",
        "iterations",
        "cases",
        "scenarios",
        "tests",
    ] {
        let pat = format!("{key}=");
        for tok in bound.split_whitespace() {
            if let Some(v) = tok.strip_prefix(&pat) {
                return match first {
                    Some(k) => format!("{k} of {v} {key}"),
                    None => format!("{v} {key}"),
                };
            }
        }
    }
    String::new()
}

/// A verdict is as expected, not as expected, or skipped (a part that could not run here).
fn judge(expected: &str, observed: &str) -> Option<bool> {
    match (expected, observed) {
        (_, "skipped") => None,
        ("hold", "hold")
        | ("killed", "killed")
        | ("survives", "survives")
        | ("survives", "killed") => Some(true),
        _ => Some(false),
    }
}

fn read_rows(dirs: &[PathBuf]) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    let mut first_dir: BTreeMap<Vec<String>, PathBuf> = BTreeMap::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read results directory {}: {e}", dir.display()))?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
            .collect();
        paths.sort();
        for p in &paths {
            for (n, cols) in crate::docgen::tsv_lines(p)? {
                let mut cols = crate::docgen::result_columns(p, n, cols)?;
                let key = cols[..5].to_vec();
                match first_dir.get(&key) {
                    Some(d) if d != dir => {
                        return Err(format!(
                            "{}:{}: the same run ({}) is also in {}: the shards overlap",
                            p.display(),
                            n,
                            key.join(" "),
                            d.display()
                        ))
                    }
                    _ => {
                        first_dir.insert(key, dir.clone());
                    }
                }
                let work = work_of(&cols[4]);
                let detail = cols.pop().unwrap_or_default();
                cols.push(work);
                cols.push(detail);
                rows.push(Row {
                    cols,
                    source: format!("{}:{n}", p.display()),
                });
            }
        }
    }
    Ok(rows)
}

pub fn main(a: &Args) -> ExitCode {
    let kind = if a.timeline {
        Some("timeline")
    } else {
        a.markdown.as_deref()
    };
    if let Some(kind) = kind {
        return match crate::docgen::render(kind, &a.dirs) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("bpspec report: {e}");
                ExitCode::from(2)
            }
        };
    }
    let mut rows = match read_rows(&a.dirs) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bpspec report: {e}");
            return ExitCode::from(2);
        }
    };
    if rows.is_empty() {
        let dirs: Vec<_> = a.dirs.iter().map(|d| d.display().to_string()).collect();
        eprintln!(
            "bpspec report: no *.tsv result files in {} (run make check or make test first)",
            dirs.join(" ")
        );
        return ExitCode::from(2);
    }
    rows.sort_by(|a, b| {
        let k = |r: &Row| {
            (
                r.cols[0].clone(),
                r.cols[1].clone(),
                r.cols[3] != "baseline",
                r.cols[3].clone(),
                r.cols[2].clone(),
                r.cols[4].clone(),
            )
        };
        k(a).cmp(&k(b))
    });
    print_table(&rows);
    let verdicts: Vec<Option<bool>> = rows.iter().map(|r| judge(&r.cols[5], &r.cols[6])).collect();
    let bad: Vec<String> = rows
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| **v == Some(false))
        .map(|(r, _)| {
            let c = &r.cols;
            format!(
                "{}: {} {} {} on {}: expected {}, observed {}",
                r.source, c[0], c[1], c[3], c[2], c[5], c[6]
            )
        })
        .collect();
    let skipped = verdicts.iter().filter(|v| v.is_none()).count();
    let passed = rows.len() - bad.len() - skipped;
    let (holds, kills) = (
        rows.iter().filter(|r| r.cols[3] == "baseline").count(),
        rows.iter().filter(|r| r.cols[6] == "killed").count(),
    );
    let secs: f64 = rows
        .iter()
        .filter_map(|r| r.cols[7].parse::<f64>().ok())
        .sum();
    let json_path = a
        .json
        .clone()
        .unwrap_or_else(|| a.dirs[0].join("report.json"));
    let junit_path = a
        .junit
        .clone()
        .unwrap_or_else(|| a.dirs[0].join("report.xml"));
    if let Err(e) = write_json(&json_path, &rows, &verdicts, bad.is_empty()) {
        eprintln!("bpspec report: cannot write {}: {e}", json_path.display());
        return ExitCode::from(2);
    }
    if let Err(e) = write_junit(&junit_path, &rows, &verdicts) {
        eprintln!("bpspec report: cannot write {}: {e}", junit_path.display());
        return ExitCode::from(2);
    }
    println!();
    println!(
        "({holds} baseline runs, {kills} mutant runs killed, {secs:.0} s of checking; {} and {})",
        json_path.display(),
        junit_path.display()
    );
    if skipped > 0 {
        println!("{passed} passed, {} failed, {skipped} skipped", bad.len());
    } else {
        println!("{passed} passed, {} failed", bad.len());
    }
    if bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        for b in &bad {
            eprintln!("UNEXPECTED: {b}");
        }
        ExitCode::from(1)
    }
}

fn print_table(rows: &[Row]) {
    let last = HEADER.len() - 1;
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.cols[i].chars().count())
                .chain([HEADER[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cols: &[&str]| {
        let mut s = String::new();
        for (i, c) in cols.iter().enumerate() {
            if i == last {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        println!("{}", s.trim_end());
    };
    line(&HEADER);
    for r in rows {
        let c: Vec<&str> = r.cols.iter().map(String::as_str).collect();
        line(&c);
    }
}

fn write_json(
    path: &Path,
    rows: &[Row],
    verdicts: &[Option<bool>],
    ok: bool,
) -> std::io::Result<()> {
    let items: Vec<serde_json::Value> = rows
        .iter()
        .zip(verdicts)
        .map(|(r, v)| {
            let mut o = serde_json::Map::new();
            for (h, c) in HEADER.iter().zip(&r.cols) {
                o.insert((*h).to_string(), serde_json::Value::String(c.clone()));
            }
            o.insert(
                "verdict".into(),
                match v {
                    Some(true) => "as expected",
                    Some(false) => "UNEXPECTED",
                    None => "skipped",
                }
                .into(),
            );
            o.insert("source".into(), r.source.clone().into());
            serde_json::Value::Object(o)
        })
        .collect();
    let doc = serde_json::json!({
        "ok": ok,
        "passed": verdicts.iter().filter(|v| **v == Some(true)).count(),
        "failed": verdicts.iter().filter(|v| **v == Some(false)).count(),
        "skipped": verdicts.iter().filter(|v| v.is_none()).count(),
        "rows": items,
    });
    std::fs::write(
        path,
        serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)? + "\n",
    )
}

fn write_junit(path: &Path, rows: &[Row], verdicts: &[Option<bool>]) -> std::io::Result<()> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("bpspec");
    let mut suites: BTreeMap<String, TestSuite> = BTreeMap::new();
    for (r, v) in rows.iter().zip(verdicts) {
        let c = &r.cols;
        let status = match v {
            Some(true) => TestCaseStatus::success(),
            Some(false) => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(format!("expected {}, observed {}: {}", c[5], c[6], c[9]));
                s
            }
            None => TestCaseStatus::skipped(),
        };
        let mut tc = TestCase::new(format!("{} {} [{}]", c[2], c[3], c[4]), status);
        tc.set_classname(format!("{}.{}", c[0], c[1]));
        if let Ok(s) = c[7].parse::<f64>() {
            tc.set_time(std::time::Duration::from_secs_f64(s.max(0.0)));
        }
        suites
            .entry(c[0].clone())
            .or_insert_with(|| TestSuite::new(c[0].clone()))
            .add_test_case(tc);
    }
    report.add_test_suites(suites.into_values());
    let xml = report.to_string().map_err(std::io::Error::other)?;
    std::fs::write(path, xml)
}
