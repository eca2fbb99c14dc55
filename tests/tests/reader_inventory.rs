//! The reader inventory (docs/readers.md) is the set of call sites of the readers' API
//! (`reference/src/protocol/readers.rs`): every function that reads breakpoint memory from a
//! scheduler calls `readers::load_slot`, `load_next`, `active_ix`, `read_half`, `code_ix` or
//! `export_address` or `export_dispatch` with its `Reader` class as the first
//! argument. This test parses `reference/src` with `syn` and
//! - compares the set of (file, function, class) of those calls with the table under
//!   "## Reader call sites" in docs/readers.md, row for row;
//! - finds every raw access to breakpoint memory outside the API module: a field access to a
//!   slot (`gen_bp`), a chain link (`next`), the active index (`active_bp_index`), an export
//!   entry's `addresses` or `dispatch` words, or a call of `read_half`,
//!   `snapshot_half`, `active_ix()`, `staging_ix()`, `erts_active_code_ix`, `stager_active_ix`
//!   (any use at all, so an alias `let s = &h.gen_bp; s.load(..)` or a `swap` counts), and
//!   compares the set of (file, function) that make one with the stager-side table under
//!   "## Stager side" in docs/readers.md, row for row. A scheduler that reads raw fails here
//!   until it goes through the API (or is wrongly declared stager-side, which review sees).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The API module: the only place where raw accesses are the point.
const API_FILE: &str = "reference/src/protocol/readers.rs";
/// The API's functions; each takes the reader class first.
const API_FNS: [&str; 7] = [
    "load_slot",
    "load_next",
    "active_ix",
    "read_half",
    "code_ix",
    "export_address",
    "export_dispatch",
];
/// Fields whose every use is an access to breakpoint memory.
const RAW_FIELDS: [&str; 5] = ["gen_bp", "next", "active_bp_index", "addresses", "dispatch"];
/// Methods whose every call reads breakpoint memory (a half, the active index, the code index).
const RAW_METHODS: [&str; 6] = [
    "read_half",
    "snapshot_half",
    "active_ix",
    "staging_ix",
    "erts_active_code_ix",
    "stager_active_ix",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// What the scanner found: API call sites `(path, function, class)` and raw accesses
/// `(path, function)`.
#[derive(Default, Debug)]
struct Found {
    api: BTreeSet<(String, String, String)>,
    raw: BTreeSet<(String, String)>,
}

struct Scanner<'a> {
    file: &'a str,
    /// The enclosing `impl`'s type and function.
    impl_ty: Vec<Option<String>>,
    func: Vec<String>,
    found: &'a mut Found,
}

/// `#[cfg(test)]`: unit tests follow; they are not readers.
fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

impl Scanner<'_> {
    fn current(&self) -> String {
        let f = self.func.last().cloned().unwrap_or_else(|| "<item>".into());
        match self.impl_ty.last() {
            Some(Some(t)) if self.func.len() == 1 => format!("{t}::{f}"),
            _ => f,
        }
    }
    /// Walk a function's body as `name` (a free function leaves any enclosing `impl`).
    fn in_fn(
        &mut self,
        attrs: &[syn::Attribute],
        name: &syn::Ident,
        free: bool,
        walk: impl FnOnce(&mut Self),
    ) {
        if is_cfg_test(attrs) {
            return;
        }
        self.func.push(name.to_string());
        let ty = if free {
            std::mem::take(&mut self.impl_ty)
        } else {
            Vec::new()
        };
        walk(self);
        if free {
            self.impl_ty = ty;
        }
        self.func.pop();
    }
    fn raw(&mut self) {
        if self.file != API_FILE {
            let k = (self.file.to_string(), self.current());
            self.found.raw.insert(k);
        }
    }
    /// An argument of an API call: the word it names (`&x.gen_bp`, `&x.addresses[i]`) is
    /// the access the call makes, not a raw one; its base and indices are scanned.
    fn api_arg(&mut self, e: &syn::Expr) {
        let mut e = e;
        let mut indices = Vec::new();
        loop {
            match e {
                syn::Expr::Reference(r) => e = &r.expr,
                syn::Expr::Paren(p) => e = &p.expr,
                syn::Expr::Index(i) => {
                    indices.push(&*i.index);
                    e = &i.expr
                }
                _ => break,
            }
        }
        match e {
            syn::Expr::Field(f) if matches!(&f.member, syn::Member::Named(n) if RAW_FIELDS.contains(&n.to_string().as_str())) => {
                self.visit_expr(&f.base)
            }
            other => self.visit_expr(other),
        }
        for i in indices {
            self.visit_expr(i);
        }
    }
}

/// `Reader::X` (or `readers::Reader::X`) as `X`.
fn reader_class(e: &syn::Expr) -> Option<String> {
    let syn::Expr::Path(p) = e else { return None };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    (segs.len() >= 2 && segs[segs.len() - 2] == "Reader").then(|| segs[segs.len() - 1].clone())
}

impl<'ast> Visit<'ast> for Scanner<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m)
        }
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if is_cfg_test(&i.attrs) {
            return;
        }
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.impl_ty.push(ty);
        let outer = std::mem::take(&mut self.func);
        syn::visit::visit_item_impl(self, i);
        self.func = outer;
        self.impl_ty.pop();
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.in_fn(&f.attrs, &f.sig.ident, true, |s| {
            syn::visit::visit_item_fn(s, f)
        })
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.in_fn(&f.attrs, &f.sig.ident, false, |s| {
            syn::visit::visit_impl_item_fn(s, f)
        })
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        self.in_fn(&f.attrs, &f.sig.ident, false, |s| {
            syn::visit::visit_trait_item_fn(s, f)
        })
    }
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let api = match &*c.func {
            syn::Expr::Path(p) => p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .filter(|n| API_FNS.contains(&n.as_str()) && p.path.segments.len() >= 2)
                .filter(|_| p.path.segments[p.path.segments.len() - 2].ident == "readers"),
            _ => None,
        };
        if api.is_some() && self.file != API_FILE {
            let class = c
                .args
                .first()
                .and_then(reader_class)
                .unwrap_or_else(|| "<not a literal Reader::X>".into());
            let k = (self.file.to_string(), self.current(), class);
            self.found.api.insert(k);
            for a in c.args.iter().skip(1) {
                self.api_arg(a);
            }
            return;
        }
        syn::visit::visit_expr_call(self, c)
    }
    fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
        if let syn::Member::Named(n) = &f.member {
            if RAW_FIELDS.contains(&n.to_string().as_str()) {
                self.raw();
            }
        }
        syn::visit::visit_expr_field(self, f)
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if RAW_METHODS.contains(&m.method.to_string().as_str()) {
            self.raw();
        }
        syn::visit::visit_expr_method_call(self, m)
    }
}

/// Scan one file's text (`file` is its path relative to the repository).
fn scan_text(file: &str, text: &str, found: &mut Found) {
    let ast = syn::parse_file(text).unwrap_or_else(|e| panic!("parse {file}: {e}"));
    let mut s = Scanner {
        file,
        impl_ty: Vec::new(),
        func: Vec::new(),
        found,
    };
    s.visit_file(&ast);
}

/// Scan every `.rs` file under `reference/src`.
fn scan() -> Found {
    let root = root();
    let src = root.join("reference/src");
    let mut found = Found::default();
    let mut n = 0;
    for e in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let p = e
            .unwrap_or_else(|err| panic!("read {}: {err}", src.display()))
            .into_path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = p
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&p).expect("read source");
        scan_text(&rel, &text, &mut found);
        n += 1;
    }
    assert!(n > 10, "only {n} sources under {}", src.display());
    found
}

/// The strict table under `heading`: the header must be exactly `header`, every cell of the
/// first `keys` columns one backquoted value; rows in sorted order, no duplicates.
fn strict_table(heading: &str, header: &str, keys: usize) -> Vec<Vec<String>> {
    let rows = table_rows_with_header(heading);
    assert_eq!(rows.0, header, "docs/readers.md {heading:?}: the header");
    let mut out = Vec::new();
    for r in rows.1 {
        let cells: Vec<String> = r.iter().take(keys).map(|c| {
            let v = c.strip_prefix('`').and_then(|c| c.strip_suffix('`'));
            match v {
                Some(v) if !v.is_empty() && !v.contains('`') && !v.contains(' ') => v.to_string(),
                _ => panic!("docs/readers.md {heading:?}: a key cell is not one backquoted value: {c:?}"),
            }
        }).collect();
        assert_eq!(
            cells.len(),
            keys,
            "docs/readers.md {heading:?}: short row {r:?}"
        );
        out.push(cells);
    }
    let mut sorted = out.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        out, sorted,
        "docs/readers.md {heading:?}: rows must be sorted and unique"
    );
    out
}

/// The header line and the cells of the rows (the separator row left out) of the first table
/// after the line that starts with `heading`.
fn table_rows_with_header(heading: &str) -> (String, Vec<Vec<String>>) {
    let path = root().join("docs/readers.md");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let start = text
        .lines()
        .position(|l| l.starts_with(heading))
        .unwrap_or_else(|| panic!("docs/readers.md has no heading line {heading:?}"));
    let lines: Vec<&str> = text
        .lines()
        .skip(start)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(lines.len() >= 2, "no table under {heading:?}");
    let rows = lines[2..]
        .iter()
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    (lines[0].to_string(), rows)
}

const CALL_SITES: &str = "## Reader call sites";
const CALL_SITES_HEADER: &str = "| path | function | class |";
const STAGER: &str = "## Stager side (holds the code modification permission)";
const STAGER_HEADER: &str = "| path | function | what it loads | why |";

#[test]
fn the_call_sites_of_the_readers_api_are_the_inventory() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "reader_inventory::the_call_sites_of_the_readers_api_are_the_inventory",
    );
    let found = scan();
    assert!(
        found.api.contains(&(
            "reference/src/actions/calltime.rs".into(),
            "get_timem_break".into(),
            "TimemCharge".into()
        )) && found.api.contains(&(
            "reference/src/protocol/hit.rs".into(),
            "Scheduler::hit_at".into(),
            "HitIn".into()
        )),
        "the scan no longer finds the known readers: {:?}",
        found.api
    );
    let listed: BTreeSet<(String, String, String)> = strict_table(CALL_SITES, CALL_SITES_HEADER, 3)
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
        .collect();
    let missing: Vec<_> = found.api.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found.api).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/readers.md {CALL_SITES:?} differs from the readers' API call sites in \
         reference/src: calls not listed {missing:?}; rows with no such call {stale:?}"
    );
}

#[test]
fn raw_accesses_are_only_in_the_stager_side_functions_listed() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "reader_inventory::raw_accesses_are_only_in_the_stager_side_functions_listed",
    );
    let found = scan();
    let listed: BTreeSet<(String, String)> = strict_table(STAGER, STAGER_HEADER, 2)
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    let missing: Vec<_> = found.raw.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found.raw).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "raw accesses to breakpoint memory (gen_bp, next, active_bp_index, addresses, dispatch, \
         read_half, snapshot_half, active_ix(), staging_ix(), erts_active_code_ix, \
         stager_active_ix) outside {API_FILE} and outside the stager side of docs/readers.md: \
         {missing:?}; stager-side rows that make no raw access {stale:?}"
    );
    let readers: BTreeSet<(String, String)> = found
        .api
        .iter()
        .map(|(p, f, _)| (p.clone(), f.clone()))
        .collect();
    let both: Vec<_> = readers.intersection(&listed).collect();
    assert!(
        both.is_empty(),
        "functions both readers and stager-side: {both:?}"
    );
}

fn scan_fixture(text: &str) -> Found {
    let mut found = Found::default();
    scan_text("reference/src/fixture.rs", text, &mut found);
    found
}

fn raw_in(found: &Found, f: &str) -> bool {
    found
        .raw
        .contains(&("reference/src/fixture.rs".into(), f.into()))
}

/// Each evasion of a substring match is a raw access to the scanner.
#[test]
fn the_scanner_catches_each_evasion() {
    let _watchdog =
        bpspec_reference::watchdog::arm("reader_inventory::the_scanner_catches_each_evasion");
    let evasions = [
        (
            "an alias of the slot",
            "f",
            "fn f(h: &H) { let s = &h.gen_bp; let g = s.load(Relaxed); }",
        ),
        (
            "a swap of the slot",
            "L::clear",
            "impl L { fn clear(&self, vf: &V) { let g = vf.gen_bp.swap(null_mut(), Relaxed); } }",
        ),
        (
            "a next link over lines",
            "f",
            "fn f(n: &N) { let p = &n\n    .next; p.load(Relaxed); }",
        ),
        (
            "read_half outside the API",
            "f",
            "fn f(n: &B, ix: usize) { n.read_half(ix, |d| d.flags); }",
        ),
        (
            "snapshot_half",
            "f",
            "fn f(n: &GenericBp) { let d = n.snapshot_half(1); }",
        ),
        (
            "another atomic op on the index",
            "f",
            "fn f(e: &E) { e.active_bp_index.fetch_add(0, Relaxed); }",
        ),
        (
            "an export address",
            "f",
            "fn f(e: &E) { let a = e.exports[0].addresses[1].load(Relaxed); }",
        ),
        (
            "an export dispatch word",
            "f",
            "fn f(e: &E) { let d = e.exports[0].dispatch[1].load(Relaxed); }",
        ),
    ];
    for (what, func, text) in evasions {
        let found = scan_fixture(text);
        assert!(raw_in(&found, func), "{what}: {found:?}");
    }
    // Through the API: a call site, not a raw access; a class that is not a literal is flagged.
    let api = scan_fixture(
        "fn f(h: &H, n: &N) { let g = readers::load_slot(Reader::HitIn, &h.gen_bp, Relaxed);\n\
         let a = readers::export_address(Reader::LoadRemote, &e.exports[f].addresses[ix], Relaxed);\n\
         let d = readers::export_dispatch(Reader::LoadRemote, &e.exports[f].dispatch[ix], Relaxed);\n\
         let c = readers::load_next(r, &n.next, Relaxed); }",
    );
    assert!(
        !raw_in(&api, "f"),
        "an API call is not a raw access: {api:?}"
    );
    assert!(api.api.contains(&(
        "reference/src/fixture.rs".into(),
        "f".into(),
        "HitIn".into()
    )));
    assert!(
        api.api.iter().any(|(_, _, c)| c.starts_with("<not")),
        "{api:?}"
    );
    // A raw access hidden inside an API call's index is still raw.
    let inner = scan_fixture(
        "fn f(e: &E) { readers::export_address(Reader::LoadRemote, &x.addresses[e.active_bp_index.load(Relaxed) as usize], Relaxed); }",
    );
    assert!(raw_in(&inner, "f"), "{inner:?}");
    // Unit tests are not readers.
    let t = scan_fixture("#[cfg(test)] mod tests { fn f(h: &H) { h.gen_bp.load(Relaxed); } }");
    assert!(t.raw.is_empty(), "{t:?}");
}

/// The rows of the markdown table that follows the heading `heading` in docs/readers.md, as
/// cells (the header and the separator row left out).
fn table_rows(heading: &str) -> Vec<Vec<String>> {
    let (_, rows) = table_rows_with_header(heading);
    assert!(!rows.is_empty(), "no rows under {heading:?}");
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
