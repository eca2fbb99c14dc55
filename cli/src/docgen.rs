//! The book's generated parts (docs/, built with `make book`): tables rendered from committed
//! result files and two-lane timelines rendered from counterexample trace files.
//!
//! ```text
//! bpspec report --markdown KIND FILE...   one Markdown block of KIND from FILE... to stdout
//! bpspec report --timeline FILE           the same as --markdown timeline FILE
//! ```
//!
//! Kinds: `table` (a measured table kept as a TSV file with a header line), `timeline` (one
//! trace file, docs/traces/README.md has its format), `trace-index` (a
//! table of trace files), `baselines` (the baseline rows of result files), `spec-figures` (the stateright baselines' state counts), `spec-kill-matrix` (the stateright kill matrix, rows written by
//! `bpspec check --mutants --results DIR`), `kill-matrix` (loom/shuttle kill rows, one line per
//! mutant: where loom, shuttle PCT and shuttle random killed it, and the counterexample) and `rows` (any result
//! rows, as `bpspec report` prints them). A docs page holds the block between
//! `<!-- generated: KIND FILE... -->` and `<!-- end generated -->` (FILE relative to the page);
//! `cli/tests/docs.rs` fails when a block differs from what this module renders, and rewrites
//! it with `BPSPEC_BLESS=1`.
//!
//! Errors (exit code 2 in `bpspec report`): an unknown kind, an unreadable file, or a malformed
//! line; the message names the file and line.

use bpspec_spec::model::props::{LIVENESS, SAFETY};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The kinds `--markdown` knows.
pub const KINDS: [&str; 8] = [
    "timeline",
    "baselines",
    "table",
    "spec-figures",
    "trace-index",
    "spec-kill-matrix",
    "kill-matrix",
    "rows",
];

/// A result row (docs/results.md: nine tab-separated columns).
struct Row {
    checker: String,
    progress: String,
    scenario: String,
    variant: String,
    bound: String,
    expected: String,
    observed: String,
    secs: String,
    detail: String,
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn read_rows(files: &[PathBuf]) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for f in files {
        let text = read(f)?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let c: Vec<&str> = line.split('\t').collect();
            if c.len() != 9 {
                return Err(format!(
                    "{}:{}: expected 9 tab-separated columns, found {}",
                    f.display(),
                    i + 1,
                    c.len()
                ));
            }
            rows.push(Row {
                checker: c[0].into(),
                progress: c[1].into(),
                scenario: c[2].into(),
                variant: c[3].into(),
                bound: c[4].into(),
                expected: c[5].into(),
                observed: c[6].into(),
                secs: c[7].into(),
                detail: c[8].into(),
            });
        }
    }
    Ok(rows)
}

/// A Markdown table cell: no pipes, no newlines.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn bound_value<'a>(bound: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("{key}=");
    bound
        .split_whitespace()
        .find_map(|t| t.strip_prefix(pat.as_str()))
}

/// One counterexample trace file.
pub struct Trace {
    pub meta: BTreeMap<String, String>,
    /// (step number, lane, text): lane is `stager`, `scheduler N` or `note`.
    pub steps: Vec<(usize, String, String)>,
    pub violated: Option<String>,
}

/// Parse a trace file: `key<TAB>value` header lines, then `step<TAB>LANE<TAB>TEXT` lines and at
/// most one `violated<TAB>TEXT`; `#` starts a comment line.
pub fn parse_trace(path: &Path) -> Result<Trace, String> {
    let text = read(path)?;
    let mut t = Trace {
        meta: BTreeMap::new(),
        steps: Vec::new(),
        violated: None,
    };
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(3, '\t');
        let key = parts.next().unwrap_or("");
        match key {
            "step" => {
                let (Some(lane), Some(text)) = (parts.next(), parts.next()) else {
                    return Err(format!("{}: a step needs a lane and a text", at()));
                };
                if !(lane == "stager" || lane == "note" || lane.starts_with("scheduler ")) {
                    return Err(format!(
                        "{}: unknown lane {lane:?} (stager, scheduler N or note)",
                        at()
                    ));
                }
                let n = t.steps.len() + 1;
                t.steps.push((n, lane.to_string(), text.to_string()));
            }
            "violated" => {
                let v: Vec<&str> = parts.collect();
                if t.violated.is_some() {
                    return Err(format!("{}: a second violated line", at()));
                }
                t.violated = Some(v.join("\t"));
            }
            k if !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '-') => {
                let v: Vec<&str> = parts.collect();
                if v.is_empty() {
                    return Err(format!("{}: header line {k:?} has no value", at()));
                }
                t.meta.insert(k.to_string(), v.join("\t"));
            }
            _ => return Err(format!("{}: unknown line {line:?}", at())),
        }
    }
    if t.steps.is_empty() {
        return Err(format!("{}: no steps", path.display()));
    }
    Ok(t)
}

pub use bpspec_spec::model::lane_of;

/// The lines of a trace file for a stateright counterexample (the steps as `check` prints them,
/// the last one `violated: PROPERTY: why`).
pub fn trace_file(meta: &[(&str, String)], steps: &[String]) -> String {
    let mut out = String::from(
        "# bpspec counterexample trace: header lines, then one step a line (docs/traces/README.md)\n",
    );
    for (k, v) in meta {
        out.push_str(&format!("{k}\t{}\n", v.replace(['\t', '\n'], " ")));
    }
    for s in steps {
        let body = s.trim();
        let body = match body.split_once(". ") {
            Some((n, rest)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => rest,
            _ => body,
        };
        if let Some(v) = body.strip_prefix("violated: ") {
            out.push_str(&format!("violated\t{v}\n"));
        } else {
            let (lane, text) = lane_of(body);
            out.push_str(&format!("step\t{lane}\t{}\n", text.replace('\t', " ")));
        }
    }
    out
}

fn timeline(path: &Path) -> Result<String, String> {
    let t = parse_trace(path)?;
    let m = |k: &str| t.meta.get(k).cloned().unwrap_or_default();
    let mut out = String::new();
    out.push_str(&format!(
        "Checker: {} on `{}`, mutant `{}`, {} steps; property broken: `{}`.\n",
        m("checker"),
        m("model"),
        m("mutant"),
        t.steps.len(),
        m("property")
    ));
    if !m("bound").is_empty() {
        out.push_str(&format!("Bound: {}.\n", m("bound")));
    }
    if !m("command").is_empty() {
        out.push_str(&format!("Reproduce: `{}`.\n", m("command")));
    }
    out.push('\n');
    out.push_str("| # | stager | scheduler |\n|---:|---|---|\n");
    for (n, lane, text) in &t.steps {
        let text = cell(text);
        match lane.as_str() {
            "stager" => out.push_str(&format!("| {n} | {text} | |\n")),
            "note" => out.push_str(&format!("| {n} | *{text}* | *{text}* |\n")),
            s => {
                let who = s.trim_start_matches("scheduler ");
                out.push_str(&format!("| {n} | | **{who}**: {text} |\n"));
            }
        }
    }
    if let Some(v) = &t.violated {
        out.push_str(&format!("\n**Violated:** {}\n", cell(v)));
    }
    Ok(out)
}

fn trace_index(files: &[PathBuf]) -> Result<String, String> {
    let mut out = String::from("| mutant | model | checker | property broken | steps | timeline |\n|---|---|---|---|---:|---|\n");
    for f in files {
        let t = parse_trace(f)?;
        let m = |k: &str| t.meta.get(k).cloned().unwrap_or_default();
        let page = f.with_extension("md");
        let name = page
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        out.push_str(&format!(
            "| `{}` | `{}` | {} | `{}` | {} | [{name}]({name}) |\n",
            m("mutant"),
            m("model"),
            m("checker"),
            m("property"),
            t.steps.len()
        ));
    }
    Ok(out)
}

/// The stateright kill matrix: K = the designated property, x = also broken.
fn spec_kill_matrix(files: &[PathBuf], trace_dir: Option<&Path>) -> Result<String, String> {
    let rows: Vec<Row> = read_rows(files)?
        .into_iter()
        .filter(|r| r.checker == "stateright" && r.progress == "spec-kill-matrix")
        .collect();
    if rows.is_empty() {
        return Err("no stateright spec-kill-matrix rows in the given files".into());
    }
    let mut columns: Vec<&str> = SAFETY.to_vec();
    columns.push(LIVENESS);
    let mut out = String::from("Columns: ");
    out.push_str(
        &columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let label = if i + 1 == columns.len() {
                    "L".to_string()
                } else {
                    (i + 1).to_string()
                };
                format!("{label} `{c}`")
            })
            .collect::<Vec<_>>()
            .join(", "),
    );
    out.push_str(".\n\n| mutant | model | ");
    for i in 1..columns.len() {
        out.push_str(&format!("{i} | "));
    }
    out.push_str("L | depth | verdict | trace |\n|---|---|");
    for _ in 0..columns.len() {
        out.push_str("---|");
    }
    out.push_str("---:|---|---|\n");
    for r in &rows {
        let breaks: Vec<&str> = bound_value(&r.bound, "breaks")
            .unwrap_or("")
            .split(',')
            .filter(|s| !s.is_empty())
            .collect();
        let designated = r.detail.split(':').next().unwrap_or("").trim();
        out.push_str(&format!("| `{}` | {} | ", r.variant, r.scenario));
        for c in &columns {
            let mark = if *c == designated && breaks.contains(c) {
                "K"
            } else if breaks.contains(c) {
                "x"
            } else {
                ""
            };
            out.push_str(&format!("{mark} | "));
        }
        let depth = bound_value(&r.bound, "first-killed-at-depth").unwrap_or("");
        let name = format!("{}-{}.md", r.scenario, r.variant);
        let link = match trace_dir {
            Some(d) if d.join(&name).exists() => format!("[timeline](traces/{name})"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "{depth} | {} | {link} |\n",
            if r.observed == r.expected {
                r.observed.clone()
            } else {
                format!("{} (expected {})", r.observed, r.expected)
            }
        ));
    }
    let unique: Vec<&str> = rows
        .iter()
        .filter_map(|r| bound_value(&r.bound, "unique"))
        .collect();
    let secs: f64 = rows.iter().filter_map(|r| r.secs.parse::<f64>().ok()).sum();
    out.push_str(&format!(
        "\n{} kill rows, BFS without symmetry, liveness on the explicit graph; {:.1} s of checking in all; depth = the length of the shortest counterexample to the designated property ({} to {} unique states per row).\n",
        rows.len(),
        secs,
        unique.iter().filter_map(|u| u.parse::<u64>().ok()).min().unwrap_or(0),
        unique.iter().filter_map(|u| u.parse::<u64>().ok()).max().unwrap_or(0),
    ));
    Ok(out)
}

/// One cell of a kill matrix: where each run of one mutant under one checker ended.
fn kill_cell(rows: &[&Row]) -> String {
    if rows.is_empty() {
        return "not run".into();
    }
    rows.iter()
        .map(|r| {
            let at = if let Some(k) = bound_value(&r.bound, "first-killed-at") {
                format!(" at iteration {k}")
            } else if let (Some(e), "loom") =
                (bound_value(&r.bound, "executions"), r.checker.as_str())
            {
                if r.observed == "killed" && e == "1" {
                    " at the first execution".to_string()
                } else if r.observed == "killed" {
                    format!(" after {e} executions")
                } else {
                    format!(" ({e} executions)")
                }
            } else {
                String::new()
            };
            let progress = if r.progress == "qsbr" {
                String::new()
            } else {
                format!(" ({})", r.progress)
            };
            let note = match (r.expected.as_str(), r.observed.as_str()) {
                (e, o) if e == o => String::new(),
                ("survives", "killed") => " (a miss was allowed)".into(),
                (e, _) => format!(" (EXPECTED {e})"),
            };
            format!("{}{note} on `{}`{progress}{at}", r.observed, r.scenario)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Loom and shuttle kill rows, one line per mutant: loom, shuttle PCT, shuttle random, and the
/// first line of the first counterexample (loom's if there is one).
fn kill_matrix(files: &[PathBuf]) -> Result<String, String> {
    let rows: Vec<Row> = read_rows(files)?
        .into_iter()
        .filter(|r| r.variant != "baseline")
        .collect();
    let mut mutants: Vec<&str> = Vec::new();
    for r in &rows {
        if !mutants.contains(&r.variant.as_str()) {
            mutants.push(&r.variant);
        }
    }
    let bounds = |pick: &dyn Fn(&Row) -> bool| -> String {
        let mut b: Vec<String> = Vec::new();
        for r in rows.iter().filter(|r| pick(r)) {
            let words: Vec<&str> = r
                .bound
                .split_whitespace()
                .filter(|w| {
                    !w.starts_with("executions=")
                        && !w.starts_with("first-killed-at=")
                        && !w.starts_with("margin=")
                })
                .collect();
            let w = words.join(" ");
            if !b.contains(&w) {
                b.push(w);
            }
        }
        b.join("; ")
    };
    let is_loom = |r: &Row| r.checker == "loom";
    let is_pct = |r: &Row| r.checker == "shuttle" && r.bound.starts_with("pct");
    let is_random = |r: &Row| r.checker == "shuttle" && r.bound.starts_with("random");
    let mut out = format!(
        "Bounds: loom {}; shuttle {}, {}.\n\n",
        bounds(&is_loom),
        bounds(&is_pct),
        bounds(&is_random)
    );
    out.push_str("| mutant | loom | shuttle PCT | shuttle random | counterexample (first line) |\n|---|---|---|---|---|\n");
    for m in mutants {
        let of = |pick: &dyn Fn(&Row) -> bool| -> Vec<&Row> {
            rows.iter().filter(|r| r.variant == m && pick(r)).collect()
        };
        let (l, p, q) = (of(&is_loom), of(&is_pct), of(&is_random));
        let cx = l
            .iter()
            .chain(p.iter())
            .chain(q.iter())
            .find(|r| !r.detail.is_empty())
            .map(|r| r.detail.clone())
            .unwrap_or_default();
        out.push_str(&format!(
            "| `{m}` | {} | {} | {} | {} |\n",
            kill_cell(&l),
            kill_cell(&p),
            kill_cell(&q),
            cell(&cx)
        ));
    }
    let secs: f64 = rows.iter().filter_map(|r| r.secs.parse::<f64>().ok()).sum();
    out.push_str(&format!(
        "\n{} mutant runs, {secs:.1} s of checking in all; a loom run stops at its first counterexample, a shuttle run at its first failing iteration.\n",
        rows.len()
    ));
    Ok(out)
}

/// The stateright baselines (`bpspec check --results DIR`, progress `spec`): model, parameters,
/// checker, states, unique states, depth, seconds, verdict.
fn spec_figures(files: &[PathBuf]) -> Result<String, String> {
    let rows: Vec<Row> = read_rows(files)?
        .into_iter()
        .filter(|r| r.checker == "stateright" && r.progress == "spec" && r.variant == "baseline")
        .collect();
    if rows.is_empty() {
        return Err("no stateright baseline rows (progress spec) in the given files".into());
    }
    let mut out = String::from(
        "| model | parameters | checker | states | unique | depth | time | verdict |\n|---|---|---|---:|---:|---:|---:|---|\n",
    );
    let group = |n: &str| -> String {
        let digits: Vec<char> = n.chars().collect();
        let mut g = String::new();
        for (i, c) in digits.iter().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                g.push(',');
            }
            g.push(*c);
        }
        g
    };
    for r in &rows {
        let head = r.bound.split(" states=").next().unwrap_or("");
        let words: Vec<&str> = head.split_whitespace().collect();
        let split = words
            .iter()
            .position(|w| w.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or(words.len());
        let checker = words[..split].join(" ");
        let params = words[split..].join(" ");
        let v = |k: &str| group(bound_value(&r.bound, k).unwrap_or(""));
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} s | {} |\n",
            r.scenario,
            cell(&params),
            cell(checker.trim_start_matches("stateright ")),
            v("states"),
            v("unique"),
            v("depth"),
            r.secs,
            r.observed
        ));
    }
    Ok(out)
}

/// A measured table kept as a TSV file: `#` comment lines, then a header line, then one line
/// per row, all with the same number of tab-separated columns. A header cell ending in `>` is
/// right-aligned (numbers); the `>` is not shown.
fn plain_table(files: &[PathBuf]) -> Result<String, String> {
    let mut out = String::new();
    let mut width = None;
    for f in files {
        let text = read(f)?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            match width {
                None => {
                    width = Some(cols.len());
                    let head: Vec<String> =
                        cols.iter().map(|c| cell(c.trim_end_matches('>'))).collect();
                    let align: Vec<&str> = cols
                        .iter()
                        .map(|c| if c.ends_with('>') { "---:" } else { "---" })
                        .collect();
                    out.push_str(&format!(
                        "| {} |\n|{}|\n",
                        head.join(" | "),
                        align.join("|")
                    ));
                }
                Some(w) if w != cols.len() => {
                    return Err(format!(
                        "{}:{}: {} columns, the header has {w}",
                        f.display(),
                        i + 1,
                        cols.len()
                    ));
                }
                Some(_) => {
                    let row: Vec<String> = cols.iter().map(|c| cell(c)).collect();
                    out.push_str(&format!("| {} |\n", row.join(" | ")));
                }
            }
        }
        // Every file of one block continues the first file's header.
    }
    if width.is_none() {
        return Err("no header line in the given files".into());
    }
    Ok(out)
}

/// The baseline rows of loom/shuttle/other runs: checker, progress, scenario, bound, work,
/// verdict, seconds (one line per run).
fn baselines(files: &[PathBuf]) -> Result<String, String> {
    let rows: Vec<Row> = read_rows(files)?
        .into_iter()
        .filter(|r| r.variant == "baseline")
        .collect();
    if rows.is_empty() {
        return Err("no baseline rows in the given files".into());
    }
    let mut out = String::from(
        "| checker | progress | scenario | bound | work | verdict | secs |\n|---|---|---|---|---:|---|---:|\n",
    );
    for r in &rows {
        let bound: Vec<&str> = r
            .bound
            .split_whitespace()
            .filter(|w| !w.starts_with("executions=") && !w.starts_with("iterations="))
            .collect();
        let work = crate::report::work_of(&r.bound);
        let verdict = if r.expected == r.observed {
            r.observed.clone()
        } else {
            format!("{} (expected {})", r.observed, r.expected)
        };
        out.push_str(&format!(
            "| {} | {} | `{}` | {} | {} | {verdict} | {} |\n",
            r.checker,
            r.progress,
            r.scenario,
            cell(&bound.join(" ")),
            work,
            r.secs
        ));
    }
    Ok(out)
}

fn rows_table(files: &[PathBuf]) -> Result<String, String> {
    let rows = read_rows(files)?;
    let mut out = String::from(
        "| checker | progress | scenario | variant | bound | expected | observed | secs | counterexample |\n|---|---|---|---|---|---|---|---:|---|\n",
    );
    for r in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.checker,
            r.progress,
            r.scenario,
            r.variant,
            cell(&r.bound),
            r.expected,
            r.observed,
            r.secs,
            cell(&r.detail)
        ));
    }
    Ok(out)
}

/// Render the block of `kind` from `files`.
pub fn render(kind: &str, files: &[PathBuf]) -> Result<String, String> {
    if files.is_empty() {
        return Err(format!("--markdown {kind} needs at least one FILE"));
    }
    match kind {
        "timeline" => {
            if files.len() != 1 {
                return Err("--markdown timeline takes one trace FILE".into());
            }
            timeline(&files[0])
        }
        "trace-index" => trace_index(files),
        "spec-kill-matrix" => {
            // Timelines are linked when docs/traces/MODEL-MUTANT.md exists beside the results.
            let traces = files[0]
                .parent()
                .and_then(Path::parent)
                .map(|d| d.join("traces"));
            spec_kill_matrix(files, traces.as_deref())
        }
        "kill-matrix" => kill_matrix(files),
        "spec-figures" => spec_figures(files),
        "table" => plain_table(files),
        "baselines" => baselines(files),
        "rows" => rows_table(files),
        _ => Err(format!(
            "unknown kind {kind:?} (known: {})",
            KINDS.join(", ")
        )),
    }
}
