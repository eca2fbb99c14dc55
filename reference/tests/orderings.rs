//! Barrier removal, kept honest:
//! - every fence and non-Relaxed ordering in reference/src is a named site (`ord(m, Site::X, o)`
//!   or `fence_at(m, Site::X, o)`), and every site has exactly one row in
//!   `bpspec_reference::ordering::SITES` and one place in the source;
//! - docs/orderings.md is the table generated from those rows, the source's line numbers and the
//!   last loom sweep (models/tests/orderings_loom.rs): the test fails when the copy is stale.
//!
//! Regenerate: `BPSPEC_BLESS=1 cargo test -p bpspec-reference --test orderings`, with
//! `BPSPEC_ORDERINGS_RESULTS=<results>/loom.tsv` to take the measured column from a loom run
//! (`make orderings-doc`); without it the measured column of the current copy is kept.

use bpspec_reference::ordering::{Site, Verdict, SITES};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const ORDERING_WORDS: [&str; 4] = ["Release", "Acquire", "AcqRel", "SeqCst"];
/// A line whose fence only passes on its caller's site (the shim's `fence_at`).
const PASS_THROUGH: &str = "// ordering: pass-through";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The `.rs` files under `dir`, in path order. The torture harness (src/torture/) is left out:
/// it is test scaffolding on real threads, not a protocol path, and its orderings coordinate the
/// harness's own phases and counters.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !(e.file_type().is_dir() && e.file_name() == "torture"))
        .map(|e| e.unwrap_or_else(|err| panic!("read {}: {err}", dir.display())))
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect()
}

/// An ordering or fence found in the source.
#[derive(Debug)]
struct Found {
    file: String,
    line: usize,
    /// The `Site::X` it is written with, if any.
    site: Option<String>,
    what: String,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Scan one file's text: the code lines (comments, `use` items and the trailing `#[cfg(test)]`
/// module left out) for ordering words and `fence(` calls.
/// `text` with the contents of comments, string and char literals blanked (newlines kept).
fn blank_non_code(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            while i < c.len() && !(c[i] == '*' && c.get(i + 1) == Some(&'/')) {
                out.push(blank(c[i]));
                i += 1;
            }
            out.push_str("  ");
            i += 2;
        } else if c[i] == '"' {
            out.push('"');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            let end = (i + 2..c.len())
                .find(|&j| c[j] == '\'')
                .unwrap_or(c.len() - 1);
            out.push('\'');
            out.extend(std::iter::repeat_n(' ', end - i - 1));
            out.push('\'');
            i = end + 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn scan(file: &str, text: &str) -> Vec<Found> {
    // Code only, one entry per line (so offsets map back to lines).
    let mut code: Vec<String> = Vec::new();
    let mut in_use = false;
    let pass: Vec<bool> = text.lines().map(|l| l.contains(PASS_THROUGH)).collect();
    let blanked = blank_non_code(text);
    let lines: Vec<&str> = blanked.lines().collect();
    for (i, raw) in lines.iter().enumerate() {
        let t = raw.trim_start();
        if (t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test"))
            && lines[i + 1..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_start().starts_with("mod "))
        {
            break; // the unit tests (std atomics of the test harness, not the engine)
        }
        let mut l = raw.to_string();
        if pass.get(i).copied().unwrap_or(false) {
            l.clear();
        }
        let lt = l.trim_start();
        if lt.starts_with("use ") || lt.starts_with("pub use ") || lt.starts_with("pub(crate) use ")
        {
            in_use = true;
        }
        if in_use {
            if l.contains(';') {
                in_use = false;
            }
            l.clear();
        }
        code.push(l);
    }
    let joined = code.join("\n");
    let line_of = |off: usize| joined[..off].matches('\n').count() + 1;
    let mut out = Vec::new();
    for w in ORDERING_WORDS {
        for (off, _) in joined.match_indices(w) {
            let before = &joined[..off];
            let after = &joined[off + w.len()..];
            if before.chars().last().is_some_and(is_ident)
                || after.chars().next().is_some_and(is_ident)
            {
                continue;
            }
            // Expect `Site::X, [Ordering::]WORD` just before.
            let b = before.trim_end_matches("Ordering::").trim_end();
            let site = b.strip_suffix(',').and_then(|b| {
                let b = b.trim_end();
                let id_start = b.rfind(|c: char| !is_ident(c)).map_or(0, |i| i + 1);
                let id = &b[id_start..];
                b[..id_start]
                    .ends_with("Site::")
                    .then(|| id.to_string())
                    .filter(|id| !id.is_empty())
            });
            out.push(Found {
                file: file.to_string(),
                line: line_of(off),
                site,
                what: w.to_string(),
            });
        }
    }
    for (off, _) in joined.match_indices("fence(") {
        if joined[..off].chars().last().is_some_and(is_ident) {
            continue;
        }
        out.push(Found {
            file: file.to_string(),
            line: line_of(off),
            site: None,
            what: "fence(".into(),
        });
    }
    out.sort_by_key(|f| f.line);
    out
}

/// Every ordering and fence of reference/src, by file (relative to reference/src).
fn scan_source() -> Vec<Found> {
    let src = root().join("src");
    let files = rust_files(&src);
    let mut out = Vec::new();
    for p in files {
        let rel = p
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&p).expect("read source");
        out.extend(scan(&rel, &text));
    }
    out
}

/// Site → (file, line), asserting that every ordering in the source is a site with a row and
/// every row's site is in the source exactly once, in the file the row names.
fn site_lines() -> BTreeMap<Site, (String, usize)> {
    let found = scan_source();
    let unnamed: Vec<String> = found
        .iter()
        .filter(|f| f.site.is_none())
        .map(|f| format!("{}:{} {}", f.file, f.line, f.what))
        .collect();
    assert!(
        unnamed.is_empty(),
        "orderings or fences without a site (write them as ord(mutant, Site::X, o) or \
         fence_at(mutant, Site::X, o) and give Site::X a row in reference/src/protocol/ordering.rs): \
         {unnamed:#?}"
    );
    let mut at: BTreeMap<Site, (String, usize)> = BTreeMap::new();
    for f in &found {
        let id = f.site.as_deref().expect("checked above");
        let site = Site::ALL
            .iter()
            .copied()
            .find(|s| s.ident() == id)
            .unwrap_or_else(|| panic!("{}:{}: Site::{id} is not a site", f.file, f.line));
        if let Some((file, line)) = at.insert(site, (f.file.clone(), f.line)) {
            panic!(
                "site {site} is written twice ({file}:{line} and {}:{}): one site, one place",
                f.file, f.line
            );
        }
    }
    for s in Site::ALL {
        let Some((file, _)) = at.get(s) else {
            panic!("site {s} has a row but is not in the source");
        };
        assert_eq!(
            file,
            s.row().file,
            "site {s}: its row names {}, the source has it in {file}",
            s.row().file
        );
    }
    at
}

#[test]
fn every_ordering_in_the_source_has_a_row() {
    let _watchdog =
        bpspec_reference::watchdog::arm("orderings::every_ordering_in_the_source_has_a_row");
    let at = site_lines();
    assert_eq!(at.len(), Site::ALL.len());
    assert_eq!(SITES.len(), Site::ALL.len(), "one row per site");
    for s in Site::ALL {
        assert_eq!(SITES.iter().filter(|r| r.site == *s).count(), 1, "{s}");
        assert_eq!(
            bpspec_reference::Mutant::from_name(s.mutant_name()),
            Some(bpspec_reference::Mutant::Weaken(*s))
        );
    }
}

#[test]
fn the_scanner_sees_an_unnamed_ordering() {
    let _watchdog =
        bpspec_reference::watchdog::arm("orderings::the_scanner_sees_an_unnamed_ordering");
    let text = "use crate::sync::Ordering::{Acquire, Release};\n\
                fn f() {\n    // fence(SeqCst) in a comment\n    let _ = \"Release\";\n    x.store(1, Release);\n\
                \n    y.load(ord(m, Site::StwUnblock, Acquire));\n    fence(SeqCst);\n}\n\
                #[cfg(test)]\nmod tests {\n    fn g() { z.load(SeqCst); }\n}\n";
    let f = scan("x.rs", text);
    let got: Vec<(usize, Option<&str>, &str)> = f
        .iter()
        .map(|f| (f.line, f.site.as_deref(), f.what.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (5, None, "Release"),
            (7, Some("StwUnblock"), "Acquire"),
            (8, None, "SeqCst"),
            (8, None, "fence("),
        ]
    );
}

/// The measured column per site mutant, from a results file (`loom.tsv`): one entry per
/// scenario run, in the order run.
fn measured_from_results(path: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read results {path}: {e}"));
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 9 || !c[3].starts_with("weaken-") {
            continue;
        }
        // checker progress scenario variant bound expected observed seconds detail
        let mut cell = format!(
            "{} {} ({}): {}, {}, {} s",
            c[0], c[2], c[1], c[6], c[4], c[7]
        );
        if !c[8].is_empty() {
            let d: String = c[8].chars().take(110).collect();
            cell.push_str(&format!(", `{}`", d.replace('|', "/").replace('`', "'")));
        }
        by.entry(c[3].to_string()).or_default().push(cell);
    }
    by.into_iter().map(|(k, v)| (k, v.join("; "))).collect()
}

const DOC: &str = "docs/orderings.md";

/// The measured column of the current docs/orderings.md, by mutant name.
fn measured_from_doc(doc: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        let name = cells[0].trim().trim_matches('`');
        if let (Some(s), Some(last)) = (
            Site::ALL.iter().find(|s| s.name() == name),
            cells.last().filter(|_| cells.len() == 7),
        ) {
            m.insert(s.mutant_name().to_string(), last.trim().to_string());
        }
    }
    m
}

fn verdict_text(v: &Verdict) -> String {
    match v {
        Verdict::Killed {
            family,
            progress,
            scenario,
        } => format!("**killed** by loom, {family} scenario `{scenario}` ({progress})"),
        Verdict::Harmless(why) => format!("survives; **harmless**: {why}"),
        Verdict::NotCaught(why) => format!("survives; **not caught**: {why}"),
    }
}

fn render(measured: &BTreeMap<String, String>) -> String {
    let at = site_lines();
    let mut s = String::new();
    s.push_str(
        "# Orderings: every fence and non-Relaxed ordering, weakened one at a time\n\n\
         Generated; do not edit. The rows come from `SITES` in reference/src/protocol/ordering.rs (what each \
         site protects, its partner, its verdict and the argument for a survivor), the file:line \
         from the source, and the last column from a loom run of models/tests/orderings_loom.rs \
         (`make orderings-doc` runs it and regenerates this file). `cargo test -p \
         bpspec-reference --test orderings` fails when this copy is stale or when the source holds \
         a fence or non-Relaxed ordering without a row.\n\n\
         Each site's mutant (`weaken-<site>`, `Mutant::Weaken`) turns that one ordering into \
         Relaxed or removes that one fence, in checked builds only. The memory model is C11/C++20 \
         atomics plus ERTS's full-barrier assumption (docs/protocol.md). loom models C11 \
         orderings with a stronger SeqCst fence, so a weakened fence that loom kills is needed \
         under the stated model too; a survivor proves nothing by itself and needs the argument \
         in its row. shuttle (sequentially consistent) and the stateright spec (stale views, not \
         orderings) cannot see these mutants and are not run on them.\n\n\
         The measured column: checker, scenario (thread progress): observed, bound and \
         executions, seconds, and the first line of the counterexample.\n\n",
    );
    s.push_str(
        "| site | file:line | ordering | partner | protects | verdict | measured |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in SITES {
        let (file, line) = &at[&r.site];
        let m = measured
            .get(r.site.mutant_name())
            .cloned()
            .unwrap_or_else(|| "not run".into());
        s.push_str(&format!(
            "| `{}` | reference/src/{file}:{line} | {} | {} | {} | {} | {} |\n",
            r.site.name(),
            r.ordering,
            r.partner,
            r.protects.split_whitespace().collect::<Vec<_>>().join(" "),
            verdict_text(&r.verdict)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            m
        ));
    }
    s
}

/// The measured column agrees with each row's verdict: a killed row was killed on its
/// scenario; a survivor survived every scenario it was tried on.
fn check_measured(measured: &BTreeMap<String, String>) {
    for r in SITES {
        let Some(m) = measured.get(r.site.mutant_name()) else {
            assert!(
                r.tried.is_empty(),
                "{}: tried on scenarios but not run",
                r.site
            );
            continue;
        };
        match r.verdict {
            Verdict::Killed { scenario, .. } => assert!(
                m.contains(&format!(" {scenario} (")) && m.contains("killed"),
                "{}: the row says killed on {scenario}; the run says {m}",
                r.site
            ),
            _ => assert!(
                !m.contains("killed"),
                "{}: the row says it survives; the run says {m}",
                r.site
            ),
        }
    }
}

#[test]
fn docs_orderings_md_is_fresh() {
    let _watchdog = bpspec_reference::watchdog::arm("orderings::docs_orderings_md_is_fresh");
    let path = root().join("..").join(DOC);
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let measured = match std::env::var("BPSPEC_ORDERINGS_RESULTS") {
        Ok(p) => measured_from_results(&p),
        Err(_) => measured_from_doc(&current),
    };
    check_measured(&measured);
    let fresh = render(&measured);
    if std::env::var_os("BPSPEC_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write docs/orderings.md");
        return;
    }
    assert!(
        current == fresh,
        "{DOC} is stale: regenerate it with `make orderings-doc` (or BPSPEC_BLESS=1 cargo test \
         -p bpspec-reference --test orderings to keep the measured column)"
    );
}
