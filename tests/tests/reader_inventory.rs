//! The reader inventory (docs/readers.md) is complete: every function in `reference/src` that
//! loads a breakpoint slot (`gen_bp`), a chain link (`next`) or the active index
//! (`active_bp_index`, `active_ix()`, `staging_ix()`) is named in it by file and function, and
//! every function it names exists. A new reader of breakpoint memory fails this test until the
//! inventory (and, by the project's rules, a model scenario) covers it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What counts as a load of breakpoint memory, after whitespace is removed.
const LOADS: [&str; 7] = [
    "gen_bp.load(",
    "next.load(",
    "active_bp_index.load(",
    "active_ix()",
    "staging_ix()",
    // the load engine (load.rs, code_ix.rs): the code index and the export entries' addresses
    "erts_active_code_ix(",
    "addresses[",
];

/// A source line limit per file, so a runaway file is a failure, not a hang.
const MAX_LINES: usize = 20_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `.rs` files under `dir`, in path order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap_or_else(|err| panic!("read {}: {err}", dir.display())))
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect()
}

/// The function a `fn` line declares, if any (`pub(crate) fn name<..>(`, `unsafe fn name(`).
fn declared_fn(line: &str) -> Option<String> {
    let t = line.trim_start();
    let i = t.find("fn ")?;
    let before = &t[..i];
    let ok = before.is_empty()
        || before.ends_with(' ')
            && before
                .split_whitespace()
                .all(|w| w.starts_with("pub") || w == "unsafe" || w == "const" || w == "async");
    if !ok {
        return None;
    }
    let name: String = t[i + 3..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Code of a line without its `//` comment (the sources put no `//` inside strings).
fn code(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// `(file.rs, function)` for every function of `reference/src` (outside `#[cfg(test)]`
/// modules) that loads breakpoint memory, and every function declared there.
fn scan() -> (BTreeSet<String>, BTreeSet<String>) {
    let src = root().join("reference/src");
    let files = rust_files(&src);
    assert!(!files.is_empty(), "no sources under {}", src.display());
    let mut loaders = BTreeSet::new();
    let mut declared = BTreeSet::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read source");
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() < MAX_LINES, "{file} is too long to scan");
        let mut current: Option<String> = None;
        for (n, line) in lines.iter().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break; // unit tests follow; they are not readers
            }
            let c = code(line);
            if let Some(f) = declared_fn(c) {
                declared.insert(format!("{file}::{f}"));
                current = Some(f);
            }
            // A method chain may continue on the next lines (`.gen_bp\n.load(`).
            let mut joined: String = c.split_whitespace().collect();
            for next in lines.iter().skip(n + 1).take(3) {
                let t = code(next).trim();
                if !t.starts_with('.') {
                    break;
                }
                joined.extend(t.split_whitespace());
            }
            if LOADS.iter().any(|l| joined.contains(l)) {
                let f = current
                    .clone()
                    .unwrap_or_else(|| panic!("{file}:{}: a load outside any function", n + 1));
                loaders.insert(format!("{file}::{f}"));
            }
        }
    }
    (loaders, declared)
}

/// Every `` `file.rs::function` `` named in docs/readers.md.
fn inventory() -> BTreeSet<String> {
    let path = root().join("docs/readers.md");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            s.split_once(".rs::").is_some_and(|(f, n)| {
                !f.is_empty()
                    && !f.contains('/')
                    && !n.is_empty()
                    && n.chars().all(|c| c.is_alphanumeric() || c == '_')
            })
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn every_function_that_loads_breakpoint_memory_is_in_the_inventory() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "reader_inventory::every_function_that_loads_breakpoint_memory_is_in_the_inventory",
    );
    let (loaders, _) = scan();
    assert!(
        loaders.contains("calltime.rs::get_timem_break") && loaders.contains("hit.rs::hit_in"),
        "the scan no longer finds the known readers: {loaders:?}"
    );
    let listed = inventory();
    let missing: Vec<_> = loaders.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "functions that load gen_bp, a next link or the active index but are not in \
         docs/readers.md: {missing:?}"
    );
}

#[test]
fn every_function_the_inventory_names_exists() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "reader_inventory::every_function_the_inventory_names_exists",
    );
    let (_, declared) = scan();
    let stale: Vec<_> = inventory()
        .into_iter()
        .filter(|f| !declared.contains(f))
        .collect();
    assert!(
        stale.is_empty(),
        "docs/readers.md names functions that do not exist: {stale:?}"
    );
}

#[test]
fn the_scan_sees_a_load_split_over_lines() {
    let _watchdog =
        bpspec_reference::watchdog::arm("reader_inventory::the_scan_sees_a_load_split_over_lines");
    let lines = ["let g = h", "    .gen_bp", "    .load(Relaxed);"];
    let mut joined: String = lines[0].split_whitespace().collect();
    for t in &lines[1..] {
        joined.extend(t.split_whitespace());
    }
    assert!(LOADS.iter().any(|l| joined.contains(l)), "{joined}");
    assert_eq!(
        declared_fn("    pub(crate) fn get_timem_break<P: X>("),
        Some("get_timem_break".into())
    );
    assert_eq!(declared_fn("let f = |x| x; // fn not"), None);
}

/// The rows of the markdown table that follows the heading `heading` in docs/readers.md, as
/// cells (the header and the separator row left out).
fn table_rows(heading: &str) -> Vec<Vec<String>> {
    let path = root().join("docs/readers.md");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("docs/readers.md has no heading {heading:?}"));
    let rows: Vec<Vec<String>> = text[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert!(!rows.is_empty(), "no table under {heading:?}");
    rows
}

/// The backquoted words of a table cell.
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// Readers that the spec leaves out, each for the reason its row gives.
const NOT_IN_SPEC: [&str; 4] = [
    // reads no breakpoint memory
    "Scheduler::schedule_in calltime.rs",
    // reads no breakpoint memory
    "Scheduler::unwind calltrace.rs",
    // the session lifecycle is not in the spec (config::NOT_MODELLED: ignore-session-state)
    "Sessions::is_alive session.rs",
    // every scheduler is blocked while it reads
    "collect.rs::collect_stw",
];

/// Every reader class names the spec models that contain it, and those models exist.
#[test]
fn every_reader_names_its_spec_models() {
    let _watchdog =
        bpspec_reference::watchdog::arm("reader_inventory::every_reader_names_its_spec_models");
    let readers = table_rows("## Schedulers");
    let spec = table_rows("## Spec models per reader class");
    let key = |cell: &str| quoted(cell).join(" ");
    for r in &readers {
        let k = key(&r[0]);
        assert!(
            !k.is_empty(),
            "reader row without a backquoted name: {:?}",
            r[0]
        );
        let row = spec
            .iter()
            .find(|s| key(&s[0]) == k)
            .unwrap_or_else(|| panic!("reader {k:?} has no row in the spec models table"));
        let models = quoted(&row[1]);
        if NOT_IN_SPEC.contains(&k.as_str()) {
            assert!(
                row[1].starts_with("none: ") && row[1].len() > 30,
                "{k}: a reader the spec leaves out says why ({:?})",
                row[1]
            );
            if k.starts_with("Sessions::is_alive") {
                assert!(
                    bpspec_spec::model::config::NOT_MODELLED
                        .iter()
                        .any(|(m, _)| models.contains(m)),
                    "{k}: names the engine mutant the spec does not model"
                );
            }
            continue;
        }
        let known: Vec<&str> = models
            .iter()
            .copied()
            // `load` is `bpspec check --model load` (spec/src/load.rs)
            .filter(|m| *m == "load" || bpspec_spec::model::model_config(m).is_some())
            .collect();
        assert!(
            !known.is_empty(),
            "reader {k:?} names no spec model: {:?}",
            row[1]
        );
        assert_eq!(
            known, models,
            "reader {k:?} names models that `bpspec check --model` does not know"
        );
    }
    assert_eq!(
        spec.len(),
        readers.len(),
        "the spec models table has rows for readers the inventory does not list"
    );
}
