//! The book's generated parts (docs/, built with `make book`): tables rendered from committed
//! result files and two-lane timelines rendered from counterexample trace files.
//!
//! ```text
//! bpspec report --markdown KIND [OPTION...] FILE...   one Markdown block of KIND to stdout
//! bpspec report --timeline FILE           the same as --markdown timeline FILE
//! ```
//!
//! Kinds: `table` (a measured table kept as a TSV file with a header line), `timeline` (one
//! trace file, docs/traces/README.md has its format), `trace-index` (a table of trace files),
//! `spec-figures` (the stateright baselines' state counts), `spec-kill-matrix` (the stateright kill matrix, rows written by
//! `bpspec check --mutants --results DIR`), `kill-matrix` (loom/shuttle kill rows, one line per
//! mutant: where loom, shuttle PCT and shuttle random killed it, and the counterexample), `rows`
//! (any result rows, as `bpspec report` prints them), and two generic views of result rows that
//! take options beside the files: `select` (the rows that pass `FIELD=GLOB,...` filters, with
//! `columns=...` chosen from the fields and the bound's `KEY=VALUE` words) and `matrix` (one
//! line per mutant, one column per checker, each cell where the mutant was killed or survived;
//! `notes=FILE` adds the lines, columns and cells no run gives). docs/results.md lists the
//! options. A docs page holds the block between
//! `<!-- generated: KIND ARG... -->` and `<!-- end generated -->` (FILE relative to the page);
//! `cli/tests/docs.rs` fails when a block differs from what this module renders, and rewrites
//! it with `BPSPEC_BLESS=1`.
//!
//! Errors (exit code 2 in `bpspec report`): an unknown kind or option, an unreadable file, a
//! malformed line (the message names the file and line), or filters that leave no row.

use bpspec_spec::model::props::{LIVENESS, SAFETY};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The kinds `--markdown` knows.
pub const KINDS: [&str; 9] = [
    "timeline",
    "table",
    "spec-figures",
    "trace-index",
    "spec-kill-matrix",
    "kill-matrix",
    "rows",
    "select",
    "matrix",
];

/// A result row (docs/results.md: nine tab-separated columns).
pub struct Row {
    pub checker: String,
    pub progress: String,
    pub scenario: String,
    pub variant: String,
    pub bound: String,
    pub expected: String,
    pub observed: String,
    pub secs: String,
    pub detail: String,
}

pub fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The data lines of a tab-separated file: (line number, columns), skipping blank lines and
/// `#` comment lines. Result files (docs/results.md), measured tables and notes files share it.
pub fn tsv_lines(path: &Path) -> Result<Vec<(usize, Vec<String>)>, String> {
    Ok(read(path)?
        .lines()
        .enumerate()
        .filter(|(_, l)| !(l.trim().is_empty() || l.starts_with('#')))
        .map(|(i, l)| (i + 1, l.split('\t').map(str::to_string).collect()))
        .collect())
}

/// The nine columns of one result line, or an error naming the file and line.
pub fn result_columns(path: &Path, line: usize, cols: Vec<String>) -> Result<Vec<String>, String> {
    if cols.len() == 9 {
        Ok(cols)
    } else {
        Err(format!(
            "{}:{line}: expected 9 tab-separated columns, found {}",
            path.display(),
            cols.len()
        ))
    }
}

fn read_rows(files: &[PathBuf]) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for f in files {
        for (n, cols) in tsv_lines(f)? {
            let mut c = result_columns(f, n, cols)?.into_iter();
            let mut next = || c.next().unwrap_or_default();
            rows.push(Row {
                checker: next(),
                progress: next(),
                scenario: next(),
                variant: next(),
                bound: next(),
                expected: next(),
                observed: next(),
                secs: next(),
                detail: next(),
            });
        }
    }
    Ok(rows)
}

/// The rows of `files` that `keep` keeps; none is an error naming `what` was looked for.
fn rows_where(
    files: &[PathBuf],
    what: &str,
    keep: impl Fn(&Row) -> bool,
) -> Result<Vec<Row>, String> {
    let rows: Vec<Row> = read_rows(files)?.into_iter().filter(|r| keep(r)).collect();
    if rows.is_empty() {
        return Err(format!("no {what} in the given files"));
    }
    Ok(rows)
}

/// A Markdown table cell: no pipes, no newlines.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn bound_value<'a>(bound: &'a str, key: &str) -> Option<&'a str> {
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
    let rows = rows_where(files, "stateright spec-kill-matrix rows", |r| {
        r.checker == "stateright" && r.progress == "spec-kill-matrix"
    })?;
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
        "\n{} kill rows, BFS without symmetry, liveness on the explicit graph; {:.1} s of checking in all; depth = the number of actions in the counterexample to the designated property, a shortest one (each property reports its first violation, on one BFS thread) ({} to {} unique states per row).\n",
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
fn kill_matrix(opts: &[String], files: &[PathBuf]) -> Result<String, String> {
    let all = read_rows(files)?;
    let v = view_options("kill-matrix", opts)?;
    // One configuration counts once: two rows of the same checker, thread progress, scenario,
    // mutant, bound and verdict are the same deterministic run made by two tests (a finding's
    // own test and the kill matrix both run it), not two kills.
    let mut seen = HashSet::new();
    let rows: Vec<&Row> = filtered("kill-matrix", &v, &all)?
        .into_iter()
        .filter(|r| r.variant != "baseline")
        .filter(|r| {
            seen.insert((
                r.checker.as_str(),
                r.progress.as_str(),
                r.scenario.as_str(),
                r.variant.as_str(),
                r.bound.as_str(),
                r.observed.as_str(),
            ))
        })
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
                        && !w.starts_with("distinct=")
                        && !w.starts_with("last-new=")
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
    let shuttle: Vec<String> = [bounds(&is_pct), bounds(&is_random)]
        .into_iter()
        .filter(|b| !b.is_empty())
        .collect();
    let mut parts = vec![format!("loom {}", bounds(&is_loom))];
    if !shuttle.is_empty() {
        parts.push(format!("shuttle {}", shuttle.join(", ")));
    }
    let mut out = format!("Bounds: {}.\n\n", parts.join("; "));
    out.push_str("| mutant | loom | shuttle PCT | shuttle random | counterexample (first line) |\n|---|---|---|---|---|\n");
    for m in mutants {
        let of = |pick: &dyn Fn(&Row) -> bool| -> Vec<&Row> {
            rows.iter()
                .filter(|r| r.variant == m && pick(r))
                .copied()
                .collect()
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
    let rows = rows_where(files, "stateright baseline rows (progress spec)", |r| {
        r.checker == "stateright" && r.progress == "spec" && r.variant == "baseline"
    })?;
    let mut out = String::from(
        "| model | parameters | checker | states | unique | depth | time | verdict |\n|---|---|---|---:|---:|---:|---:|---|\n",
    );
    for r in &rows {
        let head = r.bound.split(" states=").next().unwrap_or("");
        let words: Vec<&str> = head.split_whitespace().collect();
        let split = words
            .iter()
            .position(|w| w.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or(words.len());
        let checker = words[..split].join(" ");
        let params = words[split..].join(" ");
        let v = |k: &str| group_digits(bound_value(&r.bound, k).unwrap_or(""));
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
        for (n, cols) in tsv_lines(f)? {
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
                        "{}:{n}: {} columns, the header has {w}",
                        f.display(),
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

/// Is this argument an option (`key=value` or `key!=value`, key in lower case letters and `-`)
/// rather than a file? File names of that shape are not supported as FILE.
fn is_option(arg: &Path) -> bool {
    let s = arg.to_string_lossy();
    match s.split_once('=') {
        Some((k, _)) => {
            let k = k.strip_suffix('!').unwrap_or(k);
            !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        }
        None => false,
    }
}

/// Render the block of `kind` from `args`: FILE... and, for `select` and `matrix`, options
/// `key=value` (docs/results.md "Result files in the book").
pub fn render(kind: &str, args: &[PathBuf]) -> Result<String, String> {
    let (opts, files): (Vec<&PathBuf>, Vec<&PathBuf>) = args.iter().partition(|a| is_option(a));
    let opts: Vec<String> = opts
        .iter()
        .map(|o| o.to_string_lossy().to_string())
        .collect();
    let files: Vec<PathBuf> = files.into_iter().cloned().collect();
    if !opts.is_empty() && !["select", "matrix", "kill-matrix"].contains(&kind) {
        return Err(format!(
            "--markdown {kind} takes no options ({}): only select, matrix and kill-matrix do",
            opts.join(" ")
        ));
    }
    render_files(kind, &opts, &files)
}

fn render_files(kind: &str, opts: &[String], files: &[PathBuf]) -> Result<String, String> {
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
        "kill-matrix" => kill_matrix(opts, files),
        "spec-figures" => spec_figures(files),
        "table" => plain_table(files),
        "rows" => rows_table(files),
        "select" => select(opts, &read_rows(files)?),
        "matrix" => matrix(opts, &read_rows(files)?),
        _ => Err(format!(
            "unknown kind {kind:?} (known: {})",
            KINDS.join(", ")
        )),
    }
}

/// A number in groups of three digits (`264670` → `264,670`); anything else as it is.
fn group_digits(n: &str) -> String {
    if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()) {
        return n.to_string();
    }
    let mut g = String::new();
    for (i, c) in n.chars().enumerate() {
        if i > 0 && (n.len() - i) % 3 == 0 {
            g.push(',');
        }
        g.push(c);
    }
    g
}

/// `*` matches any run of characters; the rest matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// The field of a row that a filter or a column names.
fn field<'a>(r: &'a Row, name: &str) -> Option<&'a str> {
    Some(match name {
        "checker" => &r.checker,
        "progress" => &r.progress,
        "scenario" => &r.scenario,
        "variant" => &r.variant,
        "bound" => &r.bound,
        "expected" => &r.expected,
        "observed" => &r.observed,
        "secs" => &r.secs,
        "counterexample" => &r.detail,
        _ => return None,
    })
}

/// The options of `select` and `matrix`: row filters (`FIELD=GLOB[,GLOB...]` keeps the rows
/// whose field matches one of the globs, `FIELD!=...` drops them), `columns=NAME[:LABEL],...`
/// (`_` in a label is a space) and, for `matrix`, `notes=FILE`.
struct ViewOptions {
    filters: Vec<(String, bool, Vec<String>)>,
    columns: Vec<(String, String)>,
    notes: Option<PathBuf>,
}

fn view_options(kind: &str, opts: &[String]) -> Result<ViewOptions, String> {
    let mut v = ViewOptions {
        filters: Vec::new(),
        columns: Vec::new(),
        notes: None,
    };
    for o in opts {
        let (key, value) = o.split_once('=').unwrap_or((o, ""));
        let (key, keep) = match key.strip_suffix('!') {
            Some(k) => (k, false),
            None => (key, true),
        };
        let list: Vec<String> = value
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        match key {
            "columns" if keep => {
                v.columns = list
                    .iter()
                    .map(|c| match c.split_once(':') {
                        Some((n, l)) => (n.to_string(), l.replace('_', " ")),
                        None => (c.clone(), c.clone()),
                    })
                    .collect()
            }
            "notes" if keep && kind == "matrix" => v.notes = Some(PathBuf::from(value)),
            k if field(&EMPTY_ROW, k).is_some() && k != "secs" && !list.is_empty() => {
                v.filters.push((k.to_string(), keep, list))
            }
            _ => {
                return Err(format!(
                    "--markdown {kind}: unknown option {o:?} (FIELD=GLOB,... or FIELD!=GLOB,... with FIELD checker, progress, scenario, variant, bound, expected, observed or counterexample; columns=NAME[:LABEL],...{})",
                    if kind == "matrix" { "; notes=FILE" } else { "" }
                ))
            }
        }
    }
    Ok(v)
}

const EMPTY_ROW: Row = Row {
    checker: String::new(),
    progress: String::new(),
    scenario: String::new(),
    variant: String::new(),
    bound: String::new(),
    expected: String::new(),
    observed: String::new(),
    secs: String::new(),
    detail: String::new(),
};

fn filtered<'a>(kind: &str, v: &ViewOptions, rows: &'a [Row]) -> Result<Vec<&'a Row>, String> {
    let kept: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            v.filters.iter().all(|(k, keep, globs)| {
                let f = field(r, k).unwrap_or("");
                globs.iter().any(|g| glob(g, f)) == *keep
            })
        })
        .collect();
    if kept.is_empty() {
        return Err(format!(
            "--markdown {kind}: no row of the given files passes the filters"
        ));
    }
    Ok(kept)
}

/// The verdict of a row: observed, and what was expected when that differs.
fn verdict(r: &Row) -> String {
    if r.expected == r.observed {
        r.observed.clone()
    } else {
        format!("{} (expected {})", r.observed, r.expected)
    }
}

/// The bound's words that are parameters, not counts (`key=value` words go).
fn params(bound: &str) -> String {
    bound
        .split_whitespace()
        .filter(|w| !w.contains('='))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The bound's settings: its words without the counts a run made (`COUNTS`) and without
/// rates such as `(687121/s)`.
fn settings(bound: &str) -> String {
    const COUNTS: [&str; 13] = [
        "executions",
        "first-killed-at",
        "margin",
        "distinct",
        "last-new",
        "hits",
        "trace_pattern",
        "collections",
        "states",
        "unique",
        "first-killed-at-depth",
        "breaks",
        "depth",
    ];
    let counted = bound.contains("states=");
    bound
        .split_whitespace()
        .filter(|w| {
            let k = w.split('=').next().unwrap_or("");
            !(w.starts_with('(')
                || w.contains('=') && COUNTS.contains(&k) && (k != "depth" || counted))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `select`: the rows that pass the filters, one line each, in the files' order, with the
/// columns chosen: a row field (checker, progress, scenario, variant, bound, expected,
/// observed, secs, counterexample), `verdict` (observed, and what was expected when that
/// differs), `time` (secs with a unit), `work` (`bpspec report`'s work column), `params` (the
/// bound's words without `=`), `settings` (the bound without the counts, `settings`) or any KEY
/// of the bound's `KEY=VALUE` words (digits grouped, but not in a `seed`).
/// Default columns: scenario, variant, bound, work, verdict, secs.
fn select(opts: &[String], rows: &[Row]) -> Result<String, String> {
    let mut v = view_options("select", opts)?;
    if v.columns.is_empty() {
        v.columns = ["scenario", "variant", "bound", "work", "verdict", "secs"]
            .iter()
            .map(|c| (c.to_string(), c.to_string()))
            .collect();
    }
    let rows = filtered("select", &v, rows)?;
    let mut numeric = vec![true; v.columns.len()];
    let mut body = String::new();
    for r in &rows {
        let cells: Vec<String> = v
            .columns
            .iter()
            .enumerate()
            .map(|(i, (name, _))| {
                let c = match name.as_str() {
                    "verdict" => verdict(r),
                    "time" => format!("{} s", r.secs),
                    "work" => crate::report::work_of(&r.bound)
                        .split(' ')
                        .map(group_digits)
                        .collect::<Vec<_>>()
                        .join(" "),
                    "params" => params(&r.bound),
                    "settings" => settings(&r.bound),
                    "scenario" | "variant" => format!("`{}`", field(r, name).unwrap_or("")),
                    n => match field(r, n) {
                        Some(f) => f.to_string(),
                        // A seed is a name, not a quantity.
                        None if n == "seed" => bound_value(&r.bound, n).unwrap_or("").to_string(),
                        None => group_digits(bound_value(&r.bound, n).unwrap_or("")),
                    },
                };
                let number = c
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.replace([',', '.'], "").parse::<u64>().is_ok());
                numeric[i] &= c.is_empty() || number;
                cell(&c)
            })
            .collect();
        body.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    let head: Vec<&str> = v.columns.iter().map(|(_, l)| l.as_str()).collect();
    let align: Vec<&str> = numeric
        .iter()
        .map(|n| if *n { "---:" } else { "---" })
        .collect();
    Ok(format!(
        "| {} |\n|{}|\n{body}",
        head.join(" | "),
        align.join("|")
    ))
}

/// The scenarios of one checker's runs of one mutant, grouped by verdict: `killed on `a`,
/// `b` (PCT); survives on `b` (random)`. A shuttle scenario is named once when PCT and random
/// agree; a stateright kill names the property its counterexample broke; a run at another
/// bound than most of its checker's (`usual`) names its bound.
fn matrix_cell(rows: &[&Row], usual: &str) -> String {
    let strategy = |r: &Row| -> &str {
        if r.checker != "shuttle" {
            ""
        } else if r.bound.starts_with("pct") {
            "PCT"
        } else if r.bound.starts_with("random") {
            "random"
        } else {
            ""
        }
    };
    let mut verdicts: Vec<String> = Vec::new();
    for r in rows {
        if !verdicts.contains(&r.observed) {
            verdicts.push(r.observed.clone());
        }
    }
    verdicts
        .iter()
        .map(|v| {
            let mut labels: Vec<String> = Vec::new();
            for r in rows.iter().filter(|r| &r.observed == v) {
                let same = rows
                    .iter()
                    .filter(|o| o.scenario == r.scenario)
                    .all(|o| o.observed == r.observed);
                let mut l = format!("`{}`", r.scenario);
                // A run at another bound than most of its checker's says so.
                if level(&r.bound) != usual {
                    l.push_str(&format!(" [{}]", level(&r.bound)));
                }
                if !same && !strategy(r).is_empty() {
                    l.push_str(&format!(" ({})", strategy(r)));
                }
                if r.checker == "stateright" && r.observed == "killed" {
                    let d = r.detail.trim_start_matches("violated: ");
                    let p = d.split(':').next().unwrap_or("").trim();
                    if !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
                        l.push_str(&format!(": {p}"));
                    }
                }
                let unexpected = r.expected != r.observed
                    && !(r.expected == "survives" && r.observed == "killed");
                if unexpected {
                    l.push_str(&format!(" (EXPECTED {})", r.expected));
                }
                if !labels.contains(&l) {
                    labels.push(l);
                }
            }
            format!("{v} on {}", labels.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The words of a bound that set how far a checker searched: `preemption=`, `branches=`,
/// `iterations=`, `calls=`.
fn level(bound: &str) -> String {
    bound
        .split_whitespace()
        .filter(|w| {
            let k = w.split('=').next().unwrap_or("");
            w.contains('=') && ["preemption", "branches", "iterations", "calls"].contains(&k)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The most common `level` of `rows`.
fn usual_level(rows: &[&Row]) -> String {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows {
        *count.entry(level(&r.bound)).or_default() += 1;
    }
    count
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(l, _)| l)
        .unwrap_or_default()
}

/// A notes file of `matrix`: a header line `mutant<TAB>COLUMN...`, then one line per row:
/// the mutant's names (comma-separated: one mutant can have other names under other
/// checkers), then a cell per column (empty: nothing to add).
type Notes = (Vec<String>, Vec<(Vec<String>, Vec<String>)>);

fn read_notes(path: &Path) -> Result<Notes, String> {
    let mut lines = tsv_lines(path)?.into_iter();
    let Some((_, head)) = lines.next() else {
        return Err(format!("{}: no header line", path.display()));
    };
    if head.first().map(String::as_str) != Some("mutant") {
        return Err(format!(
            "{}: the header line starts with {:?}, not \"mutant\"",
            path.display(),
            head.first().cloned().unwrap_or_default()
        ));
    }
    let mut rows = Vec::new();
    for (n, mut cols) in lines {
        if cols.len() > head.len() {
            return Err(format!(
                "{}:{n}: {} columns, the header has {}",
                path.display(),
                cols.len(),
                head.len()
            ));
        }
        cols.resize(head.len(), String::new());
        let names = cols[0].split(',').map(|s| s.trim().to_string()).collect();
        rows.push((names, cols[1..].to_vec()));
    }
    Ok((head[1..].to_vec(), rows))
}

/// `matrix`: one line per mutant, one column per checker, each cell the scenarios that
/// killed it or that it survived (`matrix_cell`). `columns=NAME[:LABEL],...` picks the
/// checkers (default: every checker of the rows) and may name columns of the notes file;
/// with `notes=FILE` (relative to the page) the lines are the notes file's mutants in its
/// order, and a note is shown after the cell of its column (alone where no run is). The column
/// `counterexample` shows the first counterexample of the mutant's rows.
fn matrix(opts: &[String], rows: &[Row]) -> Result<String, String> {
    let mut v = view_options("matrix", opts)?;
    let rows: Vec<&Row> = filtered("matrix", &v, rows)?
        .into_iter()
        .filter(|r| r.variant != "baseline")
        .collect();
    let (note_cols, mut note_rows) = match &v.notes {
        Some(p) => read_notes(p)?,
        None => (Vec::new(), Vec::new()),
    };
    if v.notes.is_none() {
        for r in &rows {
            if !note_rows.iter().any(|(n, _)| n.contains(&r.variant)) {
                note_rows.push((vec![r.variant.clone()], Vec::new()));
            }
        }
    }
    if v.columns.is_empty() {
        for r in &rows {
            if !v.columns.iter().any(|(n, _)| n == &r.checker) {
                v.columns.push((r.checker.clone(), r.checker.clone()));
            }
        }
    }
    for (name, _) in &v.columns {
        let known = name == "counterexample" || note_cols.contains(name);
        if !rows.iter().any(|r| &r.checker == name) && !known {
            return Err(format!(
                "--markdown matrix: column {name:?} is neither a checker of the rows nor a column of the notes"
            ));
        }
    }
    let head: Vec<&str> = v.columns.iter().map(|(_, l)| l.as_str()).collect();
    let mut out = format!(
        "| mutant | {} |\n|---|{}\n",
        head.join(" | "),
        "---|".repeat(head.len())
    );
    let (mut shown, mut secs): (Vec<&Row>, f64) = (Vec::new(), 0.0);
    for (names, notes) in &note_rows {
        let cells: Vec<String> = v
            .columns
            .iter()
            .map(|(name, _)| {
                if name == "counterexample" {
                    // stateright's is the property, already in its cell.
                    let with = |r: &&&Row| names.contains(&r.variant) && !r.detail.is_empty();
                    let first = rows
                        .iter()
                        .filter(with)
                        .find(|r| r.checker != "stateright")
                        .or_else(|| rows.iter().find(with));
                    return cell(first.map(|r| r.detail.as_str()).unwrap_or(""));
                }
                let runs: Vec<&Row> = rows
                    .iter()
                    .filter(|r| &r.checker == name && names.contains(&r.variant))
                    .copied()
                    .collect();
                shown.extend(runs.iter().copied());
                secs += runs
                    .iter()
                    .filter_map(|r| r.secs.parse::<f64>().ok())
                    .sum::<f64>();
                let note = note_cols
                    .iter()
                    .position(|c| c == name)
                    .and_then(|i| notes.get(i))
                    .map(String::as_str)
                    .unwrap_or("");
                let mine: Vec<&Row> = rows
                    .iter()
                    .filter(|r| &r.checker == name)
                    .copied()
                    .collect();
                let run = matrix_cell(&runs, &usual_level(&mine));
                match (run.is_empty(), note.is_empty()) {
                    (true, true) if rows.iter().any(|r| &r.checker == name) => "not run".into(),
                    (true, _) => note.to_string(),
                    (false, true) => run,
                    (false, false) => format!("{run}; {note}"),
                }
            })
            .collect();
        let label: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        out.push_str(&format!(
            "| {} | {} |\n",
            label.join(", "),
            cells.join(" | ")
        ));
    }
    let mut bounds = String::new();
    for (name, label) in &v.columns {
        let mut b: Vec<String> = Vec::new();
        for r in shown.iter().filter(|r| &r.checker == name) {
            let w = settings(&r.bound);
            if !b.contains(&w) {
                b.push(w);
            }
        }
        if !b.is_empty() {
            bounds.push_str(&format!("- {label}: {}\n", cell(&b.join("; "))));
        }
    }
    out.push_str(&format!(
        "\n{} mutant runs shown, {secs:.1} s of checking in them. Bounds:\n\n{bounds}",
        shown.len()
    ));
    Ok(out)
}
