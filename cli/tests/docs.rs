//! The book (docs/, built by `make book`) and README.md, checked as part of `make test`:
//!
//! - every page under docs/ is in docs/SUMMARY.md, and every SUMMARY entry exists;
//! - every relative link (file and `#anchor`) resolves;
//! - every `something.rs` path, `file.rs::name`, `fn name` and `Type::name` cited in backticks
//!   exists in the tree;
//! - no page or source file refers to work items by number ("issue" and a number);
//! - every generated block (`<!-- generated: KIND FILE... -->` ... `<!-- end generated -->`,
//!   rendered by `bpspec report --markdown KIND FILE...`, cli/src/docgen.rs) is what its files
//!   give now, and every trace file under docs/traces/ has its timeline page.
//!
//! `BPSPEC_BLESS=1 cargo test -p bpspec --test docs` rewrites stale generated blocks and creates
//! missing timeline pages.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn bless() -> bool {
    std::env::var_os("BPSPEC_BLESS").is_some()
}

/// Files under `dir` (recursively) whose name ends with `ext`, skipping build and VCS folders.
fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if p.is_dir() {
            let top = dir == root() && (name == "results" || name == "target");
            if [".git", "node_modules"].contains(&name.as_str()) || top {
                continue;
            }
            walk(&p, ext, out);
        } else if name.ends_with(ext) {
            out.push(p);
        }
    }
}

/// The pages of the book and README.md.
fn pages() -> Vec<PathBuf> {
    let mut v = Vec::new();
    walk(&root().join("docs"), ".md", &mut v);
    v.push(root().join("README.md"));
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .to_string()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

/// The text of a page with fenced code blocks blanked (line numbers kept).
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if !fence {
            out.push((i + 1, line.to_string()));
        }
    }
    out
}

/// Consume the backticks that follow one just read: how many there were.
fn more_backticks(chars: &mut std::iter::Peekable<std::str::Chars>) -> usize {
    let mut n = 0;
    while chars.next_if_eq(&'`').is_some() {
        n += 1;
    }
    n
}

/// Split a line into (code spans, the rest with code spans removed).
fn code_spans(line: &str) -> (Vec<String>, String) {
    let mut spans = Vec::new();
    let mut rest = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`' {
            let n = 1 + more_backticks(&mut chars);
            let mut span = String::new();
            let mut closed = false;
            while let Some(d) = chars.next() {
                if d == '`' {
                    let m = 1 + more_backticks(&mut chars);
                    if m == n {
                        closed = true;
                        break;
                    }
                    span.push_str(&"`".repeat(m));
                } else {
                    span.push(d);
                }
            }
            if closed {
                spans.push(span.trim().to_string());
                rest.push_str("CODE");
            } else {
                rest.push_str(&"`".repeat(n));
                rest.push_str(&span);
            }
        } else {
            rest.push(c);
        }
    }
    (spans, rest)
}

/// The anchor mdbook (and GitHub) gives a heading.
fn anchor_of(heading: &str) -> String {
    let text: String = heading.replace('`', "").replace("**", "").chars().collect();
    // A link in a heading keeps only its text.
    let mut plain = String::new();
    let mut skip = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ']' && chars.peek() == Some(&'(') {
            skip = 1;
            chars.next();
            continue;
        }
        if skip > 0 {
            if c == '(' {
                skip += 1;
            } else if c == ')' {
                skip -= 1;
            }
            continue;
        }
        if c != '[' {
            plain.push(c);
        }
    }
    plain
        .trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

fn anchors(page: &Path) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(&read(page)) {
        let t = line.trim_start();
        if t.starts_with('#') {
            let h = t.trim_start_matches('#').trim();
            if h.is_empty() {
                continue;
            }
            let a = anchor_of(h);
            let n = seen.entry(a.clone()).or_insert(0);
            out.insert(if *n == 0 {
                a.clone()
            } else {
                format!("{a}-{n}")
            });
            *n += 1;
        }
        // Explicit anchors: <a name="x"> or id="x".
        for key in ["name=\"", "id=\""] {
            let mut s = t;
            while let Some(i) = s.find(key) {
                let after = &s[i + key.len()..];
                if let Some(j) = after.find('"') {
                    out.insert(after[..j].to_string());
                }
                s = &s[i + key.len()..];
            }
        }
    }
    out
}

/// Inline link targets `[text](target)` of a line (code spans removed).
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b']' && b[i + 1] == b'(' {
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            while j < b.len() {
                match b[j] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if j < b.len() {
                let t = line[start..j].split_whitespace().next().unwrap_or("");
                out.push(t.trim_matches(|c| c == '<' || c == '>').to_string());
            }
            i = j;
        }
        i += 1;
    }
    out
}

#[test]
fn every_page_is_in_the_summary_and_every_entry_exists() {
    let docs = root().join("docs");
    let summary = read(&docs.join("SUMMARY.md"));
    let mut listed = BTreeSet::new();
    let mut bad = Vec::new();
    for (n, line) in prose_lines(&summary) {
        for t in link_targets(&code_spans(&line).1) {
            if t.is_empty() {
                continue; // a draft chapter: mdbook shows it without a page
            }
            if !docs.join(&t).is_file() {
                bad.push(format!("docs/SUMMARY.md:{n}: {t} does not exist"));
            }
            listed.insert(t);
        }
    }
    let mut all = Vec::new();
    walk(&docs, ".md", &mut all);
    for p in all {
        let r = p
            .strip_prefix(&docs)
            .expect("under docs")
            .to_string_lossy()
            .to_string();
        if r != "SUMMARY.md" && !listed.contains(&r) {
            bad.push(format!("docs/{r} is not in docs/SUMMARY.md"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut bad = Vec::new();
    for page in pages() {
        let dir = page.parent().expect("a page has a folder").to_path_buf();
        for (n, line) in prose_lines(&read(&page)) {
            let (_, rest) = code_spans(&line);
            let mut targets = link_targets(&rest);
            // Reference definitions: [label]: target
            let t = rest.trim_start();
            if t.starts_with('[') {
                if let Some(i) = t.find("]: ") {
                    targets.push(t[i + 3..].split_whitespace().next().unwrap_or("").into());
                }
            }
            for target in targets {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, anchor) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target.as_str(), None),
                };
                let path = if file.is_empty() {
                    page.clone()
                } else {
                    dir.join(file)
                };
                if !path.exists() {
                    bad.push(format!("{}:{n}: {target}: no such file", rel(&page)));
                    continue;
                }
                if let Some(a) = anchor {
                    if path.extension().is_some_and(|e| e == "md") && !anchors(&path).contains(a) {
                        bad.push(format!(
                            "{}:{n}: {target}: no heading with anchor #{a} in {}",
                            rel(&page),
                            rel(&path)
                        ));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} broken links:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// What the Rust sources of the tree define and mention.
struct Tree {
    files: Vec<String>,
    fns: HashSet<String>,
    types: HashSet<String>,
    words: HashSet<String>,
    text: BTreeMap<String, String>,
}

fn tree() -> Tree {
    let mut rs = Vec::new();
    walk(&root(), ".rs", &mut rs);
    let mut all = Vec::new();
    walk(&root(), "", &mut all);
    let mut t = Tree {
        files: all.iter().map(|p| rel(p)).collect(),
        fns: HashSet::new(),
        types: HashSet::new(),
        words: HashSet::new(),
        text: BTreeMap::new(),
    };
    for p in rs {
        let text = read(&p);
        let words: Vec<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        for w in words.windows(2) {
            match w[0] {
                "fn" => {
                    t.fns.insert(w[1].to_string());
                }
                "struct" | "enum" | "trait" | "type" | "mod" | "union" => {
                    t.types.insert(w[1].to_string());
                }
                _ => {}
            }
        }
        t.words.extend(words.iter().map(|w| w.to_string()));
        t.text.insert(rel(&p), text);
    }
    t
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// Path roots that are not in this tree (other crates), whose items are not checked.
const EXTERNAL: [&str; 22] = [
    "std",
    "core",
    "alloc",
    "loom",
    "shuttle",
    "crossbeam",
    "crossbeam_epoch",
    "stateright",
    "serde",
    "serde_json",
    "proptest",
    "criterion",
    "clap",
    "Ordering",
    "Guard",
    "Arc",
    "AtomicUsize",
    "AtomicU64",
    "AtomicPtr",
    "UnsafeCell",
    "Vec",
    "Option",
];

fn check_name(span: &str, t: &Tree) -> Result<(), String> {
    let s = span.trim_end_matches("()").trim_end_matches(',');
    if s.contains(['{', '*', ' ', '<']) && !s.starts_with("fn ") {
        return Ok(());
    }
    if let Some(name) = s.strip_prefix("fn ") {
        let name = name.split(['(', '<', ' ']).next().unwrap_or("");
        return if t.fns.contains(name) {
            Ok(())
        } else {
            Err(format!("no `fn {name}` in the tree"))
        };
    }
    if let Some(i) = s.find(".rs") {
        let (path, item) = (&s[..i + 3], s[i + 3..].strip_prefix("::"));
        if s.len() > i + 3 && item.is_none() {
            return Ok(()); // e.g. `foo.rs:12` or prose
        }
        if path.starts_with('/') || path.contains("..") || path.contains(':') {
            return Ok(());
        }
        let hits: Vec<&String> = t
            .files
            .iter()
            .filter(|f| {
                *f == path
                    || f.ends_with(&format!("/{path}"))
                    || (!path.contains('/') && f.rsplit('/').next() == Some(path))
            })
            .collect();
        if hits.is_empty() {
            return Err(format!("no file {path} in the tree"));
        }
        if let Some(item) = item {
            let item = item.split("::").last().unwrap_or(item);
            let found = hits.iter().any(|h| {
                t.text.get(*h).is_some_and(|text| {
                    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .any(|w| w == item)
                })
            });
            if !found {
                return Err(format!("{path} has no `{item}`"));
            }
        }
        return Ok(());
    }
    if s.contains("::") {
        let segs: Vec<&str> = s.split("::").collect();
        if !segs.iter().all(|x| is_ident(x)) {
            return Ok(());
        }
        // A placeholder such as `TARGET::NAME`.
        if segs
            .iter()
            .all(|x| x.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        {
            return Ok(());
        }
        let first = segs[0];
        if EXTERNAL.contains(&first) {
            return Ok(());
        }
        let ours = first.starts_with("bpspec") || t.types.contains(first) || first == "crate";
        if !ours {
            return Err(format!("no type or module `{first}` in the tree"));
        }
        let last = segs[segs.len() - 1];
        if !t.words.contains(last) {
            return Err(format!("no `{last}` in the tree"));
        }
    }
    Ok(())
}

#[test]
fn cited_files_functions_and_items_exist() {
    let t = tree();
    let mut bad = Vec::new();
    for page in pages() {
        for (n, line) in prose_lines(&read(&page)) {
            for span in code_spans(&line).0 {
                if let Err(e) = check_name(&span, &t) {
                    bad.push(format!("{}:{n}: `{span}`: {e}", rel(&page)));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} stale names:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Does `line` refer to a work item by number (the word for one, or "pull request", then a
/// number, with `#` or not)?
/// An upstream citation names its repository (`erlang/otp#8835`) and is not one.
fn names_a_work_item(line: &str) -> bool {
    let lower = line.to_lowercase();
    let words = [["is", "sue"].concat(), "pull request".to_string()];
    words.iter().any(|word| {
        let mut s = lower.as_str();
        while let Some(i) = s.find(word.as_str()) {
            let after = s[i + word.len()..].trim_start_matches('s');
            let after = after.trim_start_matches([' ', '#', '-', '_']);
            if after.starts_with(|c: char| c.is_ascii_digit()) {
                return true;
            }
            s = &s[i + word.len()..];
        }
        false
    })
}

#[test]
fn work_item_numbers_are_told_from_upstream_citations() {
    let word = ["is", "sue"].concat();
    for bad in [
        format!("see {word} 26"),
        format!("{word} #26"),
        format!("{word}s 3"),
        ["pull", " request #8"].concat(),
    ] {
        assert!(names_a_work_item(&bad), "not caught: {bad}");
    }
    for good in [
        "known: erlang/otp#8835, fix erlang/otp#8897",
        "seed 7 #764",
        "node #1",
    ] {
        assert!(!names_a_work_item(good), "wrongly caught: {good}");
    }
}

#[test]
fn no_references_to_work_items_by_number() {
    let mut files = pages();
    for ext in [".rs", ".toml", ".sh", ".erl", ".json", ".tsv", "Makefile"] {
        walk(&root(), ext, &mut files);
    }
    let mut bad = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if names_a_work_item(line) {
                bad.push(format!("{}:{}: {}", rel(&f), n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "name the feature or the file, not a work item's number:\n{}",
        bad.join("\n")
    );
}

/// docs/erts-findings/findings.tsv, the findings table: every row states its upstream status
/// ("known" with an `erlang/otp#N` citation, or "new: " with what was searched), and every
/// variant, scenario and test its last two columns name exists (an engine variant,
/// `Mutant::from_name`, or a name under models/, tests/ or oracle/tests/).
#[test]
fn erts_findings_table_is_complete() {
    let path = root().join("docs/erts-findings/findings.tsv");
    let text = read(&path);
    let mut models = String::new();
    let mut tests = Vec::new();
    walk(&root().join("models"), ".rs", &mut tests);
    walk(&root().join("tests"), ".rs", &mut tests);
    walk(&root().join("oracle/tests"), ".rs", &mut tests);
    for t in &tests {
        models.push_str(&read(t));
    }
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(rows.len() >= 2, "findings.tsv has no rows");
    for r in rows {
        assert_eq!(r.len(), 6, "findings.tsv: six columns: {r:?}");
        let upstream = r[3];
        let cites = upstream.contains("erlang/otp#");
        assert!(
            (upstream.starts_with("known") && cites) || upstream.starts_with("new: "),
            "findings.tsv: upstream status of {:?} is neither known (with an erlang/otp# \
             citation) nor new: {upstream}",
            r[0]
        );
        for (col, what) in [(4, "variant"), (5, "check")] {
            let (spans, _) = code_spans(r[col]);
            for name in spans.iter().filter(|s| !s.ends_with(".rs")) {
                let known = bpspec_reference::Mutant::from_name(name).is_some()
                    || models.contains(&format!("\"{name}\""))
                    || models.contains(&format!("fn {name}("));
                assert!(
                    known,
                    "findings.tsv: {what} `{name}` of {:?} is no engine variant and no model \
                     scenario or test under models/, tests/ or oracle/tests/",
                    r[0]
                );
            }
        }
    }
}

/// Expand the file arguments of a marker (relative to the page; `DIR/*.EXT` globs); options
/// (`key=value`, cli/src/docgen.rs) pass as they are.
fn marker_files(dir: &Path, args: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for a in args {
        if a.contains('=') {
            out.push(PathBuf::from(a));
        } else if let Some((d, ext)) = a.split_once("/*") {
            let mut v = Vec::new();
            walk(&dir.join(d), ext, &mut v);
            out.extend(v);
        } else {
            out.push(dir.join(a));
        }
    }
    out
}

/// Render a block from its page's folder (options such as `notes=FILE` name files relative to it).
fn render(dir: &Path, kind: &str, files: &[PathBuf]) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_bpspec"))
        .current_dir(dir)
        .arg("report")
        .arg("--markdown")
        .arg(kind)
        .args(files)
        .output()
        .expect("run bpspec");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into())
    }
}

const BEGIN: &str = "<!-- generated: ";
const END: &str = "<!-- end generated -->";

/// Regenerate every block of a page; returns the new text, or an error naming the line.
fn regenerate(page: &Path, text: &str) -> Result<String, String> {
    let dir = page.parent().expect("folder");
    let mut out = String::new();
    let mut lines = text.split_inclusive('\n').enumerate();
    while let Some((n, line)) = lines.next() {
        out.push_str(line);
        let Some(spec) = line
            .trim()
            .strip_prefix(BEGIN)
            .and_then(|s| s.strip_suffix("-->"))
        else {
            continue;
        };
        let words: Vec<&str> = spec.split_whitespace().collect();
        let Some((kind, args)) = words.split_first() else {
            return Err(format!("{}:{}: a marker without a kind", rel(page), n + 1));
        };
        let files = marker_files(dir, args);
        let body = render(dir, kind, &files).map_err(|e| {
            format!(
                "{}:{}: bpspec report --markdown {kind}: {e}",
                rel(page),
                n + 1
            )
        })?;
        out.push_str(&body);
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            if l.trim() == END {
                out.push_str(l);
                closed = true;
                break;
            }
        }
        if !closed {
            return Err(format!(
                "{}:{}: no {END} after the marker",
                rel(page),
                n + 1
            ));
        }
    }
    Ok(out)
}

#[test]
fn generated_blocks_and_timelines_are_fresh() {
    let traces = root().join("docs/traces");
    let mut bad = Vec::new();
    // Every trace file has its page.
    let mut tfiles = Vec::new();
    walk(&traces, ".trace", &mut tfiles);
    for tf in &tfiles {
        let page = tf.with_extension("md");
        if !page.exists() {
            let name = tf.file_name().expect("name").to_string_lossy().to_string();
            let header = |key: &str| {
                read(tf)
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("{key}\t")).map(str::to_string))
                    .unwrap_or_default()
            };
            let (model, mutant) = (header("model"), header("mutant"));
            let text = format!(
                "# `{mutant}` on `{model}`\n\n{BEGIN}timeline {name} -->\n{END}\n\nAll traces: [the index](README.md).\n"
            );
            if bless() {
                std::fs::write(&page, text).expect("write a timeline page");
            } else {
                bad.push(format!("{} has no page {}", rel(tf), rel(&page)));
            }
        }
    }
    for page in pages() {
        let text = read(&page);
        if !text.contains(BEGIN) {
            continue;
        }
        match regenerate(&page, &text) {
            Ok(new) if new == text => {}
            Ok(new) => {
                if bless() {
                    std::fs::write(&page, new).expect("write the page");
                } else {
                    bad.push(format!("{} has a stale generated block", rel(&page)));
                }
            }
            Err(e) => bad.push(e),
        }
    }
    assert!(
        bad.is_empty(),
        "{}\nregenerate with BPSPEC_BLESS=1 cargo test -p bpspec --test docs",
        bad.join("\n")
    );
}

/// The label register, docs/labels.md: the labels of its "Labels" table (ranges expanded) and
/// the words of label shape its "Not labels" table lets through, with the file each applies to
/// (`*`: every file).
struct Register {
    labels: BTreeMap<String, usize>,
    not_labels: Vec<(String, String)>,
}

/// `X1–X9`, `L5a–L5c` or one label: the labels a register entry names.
fn expand(entry: &str) -> Vec<String> {
    let entry = entry.trim().trim_matches('`');
    let Some((a, b)) = entry.split_once('–') else {
        return vec![entry.to_string()];
    };
    let split = |s: &str| {
        let i = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
        (s[..i].to_string(), s[i..].to_string())
    };
    let ((pa, na), (pb, nb)) = (split(a), split(b));
    assert_eq!(pa, pb, "docs/labels.md: a range over two prefixes: {entry}");
    if let (Ok(x), Ok(y)) = (na.parse::<u32>(), nb.parse::<u32>()) {
        return (x..=y).map(|k| format!("{pa}{k}")).collect();
    }
    // A letter range on one number: L5a–L5c.
    let (da, la) = na.split_at(na.len() - 1);
    let (db, lb) = nb.split_at(nb.len() - 1);
    assert_eq!(da, db, "docs/labels.md: a range over two numbers: {entry}");
    let (x, y) = (la.as_bytes()[0], lb.as_bytes()[0]);
    (x..=y).map(|c| format!("{pa}{da}{}", c as char)).collect()
}

fn register() -> Register {
    let text = read(&root().join("docs/labels.md"));
    let mut labels = BTreeMap::new();
    let mut not_labels = Vec::new();
    let mut section = "";
    let mut dup = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("## ") {
            section = if h.starts_with("Labels") {
                "labels"
            } else if h.starts_with("Not labels") {
                "not"
            } else {
                ""
            };
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !line.starts_with('|') || cells[1].starts_with("---") {
            continue;
        }
        match section {
            "labels" if cells[1] != "labels" => {
                for e in cells[1].split(',') {
                    for l in expand(e) {
                        if labels.insert(l.clone(), n + 1).is_some() {
                            dup.push(l);
                        }
                    }
                }
            }
            "not" if cells[1] != "word" => {
                not_labels.push((cells[1].trim_matches('`').to_string(), cells[2].to_string()))
            }
            _ => {}
        }
    }
    assert!(
        dup.is_empty(),
        "docs/labels.md lists these labels twice (one label, one meaning): {dup:?}"
    );
    Register { labels, not_labels }
}

/// Whether `w` has the shape of a label: 1–3 capitals, 1–2 digits, an optional lowercase letter
/// and an optional proof step `.k` (T1, QW2b, L5a, I2.13); or 1–2 capitals, a hyphen and 2–5
/// lowercase letters (G-done, P-load, S-fr).
fn label_shape(w: &str) -> bool {
    let b = w.as_bytes();
    let caps = b.iter().take_while(|c| c.is_ascii_uppercase()).count();
    let rest = &b[caps..];
    if (1..=2).contains(&caps) && rest.first() == Some(&b'-') {
        let low = &rest[1..];
        return (2..=5).contains(&low.len()) && low.iter().all(u8::is_ascii_lowercase);
    }
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut rest = &rest[digits..];
    if !(1..=3).contains(&caps) || !(1..=2).contains(&digits) {
        return false;
    }
    if rest.first().is_some_and(u8::is_ascii_lowercase) {
        rest = &rest[1..];
    }
    if let Some(step) = rest.strip_prefix(b".") {
        return (1..=2).contains(&step.len()) && step.iter().all(u8::is_ascii_digit);
    }
    rest.is_empty()
}

/// The words of label shape in a piece of text (inline code spans left out: they quote code,
/// arguments and Erlang terms). A word is a run of letters, digits, `_`, `.` and `-`; a word
/// that is not a label as a whole is tried part by part around its hyphens (`S1-S5`).
fn labels_in(text: &str) -> Vec<String> {
    let (_, rest) = code_spans(text);
    let mut out = Vec::new();
    let is_word = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    for w in rest.split(|c: char| !is_word(c)) {
        let w = w.trim_end_matches(['.', '-']);
        if w.contains('_') {
            continue;
        }
        if label_shape(w) {
            out.push(w.to_string());
        } else {
            out.extend(w.split('-').filter(|p| label_shape(p)).map(str::to_string));
        }
    }
    out
}

#[test]
fn every_label_is_in_the_register() {
    let reg = register();
    let mut files = Vec::new();
    walk(&root().join("docs"), ".md", &mut files);
    let mut bad = BTreeMap::<String, Vec<String>>::new();
    let mut check = |f: &Path, n: usize, text: &str| {
        let file = rel(f);
        for w in labels_in(text) {
            let base = w.split_once('.').map_or(w.as_str(), |(b, _)| b);
            let allowed = reg
                .not_labels
                .iter()
                .any(|(nw, nf)| *nw == w && (nf == "*" || file.ends_with(nf.as_str())));
            if !allowed && !reg.labels.contains_key(base) {
                bad.entry(w).or_default().push(format!("{file}:{n}"));
            }
        }
    };
    for f in &files {
        // Object names of the spec's counterexamples ("temporary T1", "BpTimemTrace R0") are
        // names, not labels: drop them with the word that introduces them.
        let text = read(f);
        let mut prev = "";
        for (i, line) in text.lines().enumerate() {
            let mut l = line.to_string();
            for intro in ["temporary ", "BpTimemTrace "] {
                while let Some(k) = l.find(intro) {
                    let end = l[k + intro.len()..]
                        .find(|c: char| !c.is_ascii_alphanumeric())
                        .map_or(l.len(), |e| k + intro.len() + e);
                    l.replace_range(k..end, "");
                }
            }
            if prev.trim_end().ends_with("BpTimemTrace") || prev.trim_end().ends_with("temporary") {
                l = l
                    .trim_start()
                    .split_once(' ')
                    .map_or(String::new(), |(_, r)| r.to_string());
            }
            check(f, i + 1, &l);
            prev = line;
        }
    }
    let mut sources = Vec::new();
    for dir in ["reference/src", "spec/src", "models/src"] {
        walk(&root().join(dir), ".rs", &mut sources);
    }
    for f in &sources {
        for (i, line) in read(f).lines().enumerate() {
            if let Some(k) = line.find("//") {
                check(f, i + 1, &line[k..]);
            }
        }
    }
    let list: Vec<String> = bad
        .iter()
        .map(|(w, at)| format!("{w}: {}", at[..at.len().min(4)].join(", ")))
        .collect();
    assert!(
        list.is_empty(),
        "labels not in the register docs/labels.md (add them, with their meaning and where \
         they are defined, or rename them to a registered family):\n{}",
        list.join("\n")
    );
}
