//! The scenario parser under fuzzing (proptest over arbitrary bytes, arbitrary JSON trees and
//! mutations of the corpus): it never panics, every error names the file, and whatever loads
//! also runs without panicking on the engine and the sequential oracle, which agree. Crashers
//! found are kept below as plain tests, and proptest keeps its seeds in
//! parser.proptest-regressions.

use bpspec_oracle::conformance::{compare_scenario, corpus_dir, json_files};
use bpspec_oracle::run::{run, RunError};
use bpspec_oracle::scenario::{load, Feature, LoadError};
use bpspec_oracle::target::{RefEngine, SpecOracle};
use proptest::prelude::*;

mod common;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

fn corpus_texts() -> Vec<String> {
    let files = json_files(&corpus_dir()).unwrap_or_else(|e| panic!("{e}"));
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// Load; on success run on the engine and the oracle (must agree); on error, the message names
/// the file.
fn survive(text: &str) {
    match load("fuzz.json", text) {
        Err(e) => assert!(e.to_string().starts_with("fuzz.json"), "{e}"),
        Ok(l) => {
            let mut e = RefEngine::new(l.funcs.clone());
            let a = run(&l, &mut e);
            let b = run(&l, SpecOracle::boxed(l.funcs.clone()).as_mut());
            match (a, b) {
                // The oracle has no match specs on global breakpoints: the engine ran
                // it (or refused it cleanly) without panicking, which is what this checks.
                (
                    _,
                    Err(RunError::Unsupported {
                        feature: Feature::GlobalMatchSpec,
                        ..
                    }),
                ) => {}
                (Ok(x), Ok(y)) => assert_eq!(x, y, "engine and oracle differ on\n{text}"),
                (Err(x), Err(y)) => assert_eq!(
                    x.to_string(),
                    y.to_string()
                        .replace("sequential oracle", "reference engine")
                ),
                (x, y) => panic!("engine {x:?} vs oracle {y:?} on\n{text}"),
            }
        }
    }
}

/// Cases per fuzz property: BPSPEC_FUZZ_CASES, default `d`.
fn fuzz_cases(d: u32) -> u32 {
    std::env::var("BPSPEC_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(d)
}

fn json_tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-3i64..300).prop_map(Value::from),
        prop_oneof![
            Just("legacy"),
            Just("n-1"),
            Just("n"),
            Just("m:f/0"),
            Just("cc:seq/1"),
            Just("cc:_/_"),
            Just("_:_/_"),
            Just("pause"),
            Just("restart"),
            Just("local"),
            Just("call_count"),
            Just("call"),
            Just("p1"),
            Just("traced"),
            Just("seq/1"),
            Just("{cc,'_',1}"),
            Just("")
        ]
        .prop_map(Value::from),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let key = prop_oneof![
            Just("name"),
            Just("modules"),
            Just("functions"),
            Just("arity"),
            Just("exported"),
            Just("base"),
            Just("body"),
            Just("call"),
            Just("tail_call"),
            Just("return"),
            Just("raise"),
            Just("args"),
            Just("times"),
            Just("ops"),
            Just("processes"),
            Just("trace"),
            Just("trace_pattern"),
            Just("pattern"),
            Just("spec"),
            Just("flags"),
            Just("trace_info"),
            Just("mfa"),
            Just("item"),
            Just("process"),
            Just("expect"),
            Just("op"),
            Just("sessions"),
            Just("session_create"),
            Just("schedule_out"),
            Just("on"),
            Just("trace_flags")
        ]
        .prop_map(String::from);
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(key, inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Replace the node at pre-order position `k` of `v` with `new`.
fn replace_nth(v: &mut Value, k: &mut usize, new: &Value) -> bool {
    if *k == 0 {
        *v = new.clone();
        return true;
    }
    *k -= 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|x| replace_nth(x, k, new)),
        Value::Object(o) => o.values_mut().any(|x| replace_nth(x, k, new)),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: fuzz_cases(512),
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        survive(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_json_never_panics(v in json_tree()) {
        survive(&v.to_string());
    }

    #[test]
    fn mutated_corpus_files_never_panic(file in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), len in 0usize..12, ins in "[\\[\\]{}\",:0-9a-z_ -]{0,6}") {
        let texts = corpus_texts();
        let t = &texts[file.index(texts.len())];
        let i = at.index(t.len());
        let mut b: Vec<u8> = t.as_bytes().to_vec();
        let end = (i + len).min(b.len());
        b.splice(i..end, ins.bytes());
        survive(&String::from_utf8_lossy(&b));
    }

}

/// Replacing one node of a corpus file with a random JSON tree: no panic, and a good share of
/// the mutants still load and run (so the runner is fuzzed too, not only the parser).
#[test]
fn corpus_with_a_node_replaced_never_panics_and_often_still_runs() {
    use proptest::test_runner::{Config, TestRunner};
    static LOADED: AtomicUsize = AtomicUsize::new(0);
    let texts = corpus_texts();
    let n = fuzz_cases(1024);
    let mut r = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    });
    r.run(
        &(any::<prop::sample::Index>(), 0usize..400, json_tree()),
        |(file, node, new)| {
            let mut v: Value = serde_json::from_str(&texts[file.index(texts.len())]).unwrap();
            let mut k = node;
            replace_nth(&mut v, &mut k, &new);
            let t = v.to_string();
            if load("x", &t).is_ok() {
                LOADED.fetch_add(1, Relaxed);
            }
            survive(&t);
            Ok(())
        },
    )
    .unwrap();
    let loaded = LOADED.load(Relaxed);
    assert!(
        loaded as u32 >= n / 20,
        "only {loaded} of {n} mutated corpus files loaded"
    );
    eprintln!("{loaded} of {n} mutated corpus files loaded and ran");
}

fn err(text: &str) -> String {
    match load("f.json", text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

const MODS: &str = r#""modules": [{"name": "m", "functions": [{"name": "f", "arity": 0, "exported": true, "body": []}]}]"#;

#[test]
fn syntax_errors_name_file_line_and_column() {
    let e = err("{\n  \"name\": \"x\",\n  \"modules\": [,]\n}");
    assert!(e.starts_with("f.json:3:15: "), "{e}");
    let e = err("{\"name\": \"x\", \"modulez\": []}");
    assert!(
        e.starts_with("f.json:1:") && e.contains("unknown field `modulez`"),
        "{e}"
    );
    let e = err(&format!(
        "{{\"name\": \"x\", {MODS}, \"ops\": [{{\"frobnicate\": 1}}]}}"
    ));
    assert!(e.contains("unknown variant `frobnicate`"), "{e}");
    assert!(matches!(
        load("f.json", "[1"),
        Err(LoadError::Syntax { line: 1, .. })
    ));
}

#[test]
fn contradictions_name_the_json_path() {
    let cases: &[(&str, &str)] = &[
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "body": [{"call": "g/0"}]}]}], "ops": []"#,
            "at $.modules[0].functions[0].body[0].call: m:g/0 is not declared",
        ),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "body": [{"return": "x"}, {"call": "f/0"}]}]}], "ops": []"#,
            "at $.modules[0].functions[0].body[0]: tail_call, return and raise must be the last step",
        ),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "body": [{"call": "f/0", "raise": "x"}]}]}], "ops": []"#,
            "exactly one of call",
        ),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f"}, {"name": "g", "body": [{"call": "m:f/0"}]}]}], "ops": []"#,
            "at $.modules[0].functions[1].body[0].call: remote call to m:f/0, which is not exported",
        ),
        (&format!(r#"{MODS}, "ops": [{{"call": {{"process": "p9", "mfa": "m:f/0"}}}}]"#), "at $.ops[0].call.process: no process named \"p9\""),
        (
            &format!(r#"{MODS}, "processes": [{{"name": "p"}}], "ops": [{{"schedule_out": "p"}}, {{"call": {{"process": "p", "mfa": "m:f/0"}}}}]"#),
            "at $.ops[1].call.process: process p is scheduled out here",
        ),
        (
            &format!(r#"{MODS}, "sessions": ["s"], "ops": [{{"trace_pattern": {{"session": "s", "pattern": "m:f/0", "spec": true, "flags": ["local"]}}}}]"#),
            "at $.ops[0].trace_pattern.session: session s is not alive here",
        ),
        (
            &format!(r#"{MODS}, "ops": [{{"trace_pattern": {{"pattern": "{{'_',f,0}}", "spec": true, "flags": ["local"]}}}}]"#),
            "at $.ops[0].trace_pattern.pattern: invalid pattern",
        ),
        (&format!(r#"{MODS}, "ops": [], "expect": [{{"op": 3, "return": "ok"}}]"#), "at $.expect[0].op: op 3 does not exist"),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "arity": 2, "body": [{"return": {"tuple": [1, {"arg": 3}]}}]}]}], "ops": []"#,
            "at $.modules[0].functions[0].body[0].return.tuple[1].arg: an argument number in 1..=2",
        ),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "arity": 1, "body": [{"raise": {"add": [1]}}]}]}], "ops": []"#,
            "at $.modules[0].functions[0].body[0].raise.add: add takes a list of two expressions",
        ),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "arity": 1, "body": [{"tail_call": "f/1", "args": [["a", "B"]]}]}]}], "ops": []"#,
            "at $.modules[0].functions[0].body[0].args[0][1]: \"B\" is not an atom",
        ),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "arity": 1, "base_arg": 2, "base": [], "body": []}]}], "ops": []"#,
            "at $.modules[0].functions[0].base_arg: an argument number in 1..=1",
        ),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "arity": 1, "base_match": {"arg": 1}, "base": [], "body": []}]}], "ops": []"#,
            "at $.modules[0].functions[0].base_match: unknown term form \"arg\"",
        ),
        (
            r#""modules": [{"name": "m", "functions": [{"name": "f", "arity": 1, "exported": true}]}], "processes": [{"name": "p"}], "ops": [{"call": {"process": "p", "mfa": "m:f/1", "args": [{"tuple": [true, 1.5]}]}}]"#,
            "at $.ops[0].call.args[0].tuple[0]: a term is an integer",
        ),
        (
            &format!(r#"{MODS}, "ops": [{{"trace_pattern": {{"pattern": "m:f/0", "spec": true, "flags": ["locl"]}}}}]"#),
            "at $.ops[0].trace_pattern.flags[0]: unknown trace_pattern flag \"locl\"",
        ),
        (&format!(r#"{MODS}, "ops": [{{"call": {{"process": "p", "mfa": "m:module_info/0"}}}}], "processes": [{{"name": "p"}}]"#), "not an exported function"),
        (
            &format!(r#"{MODS}, "max_otp": 25, "ops": [{{"trace_pattern": {{"pattern": "m:f/0", "spec": true, "flags": ["call_memory"]}}}}]"#),
            "at $.max_otp: max_otp 25 is older than the OTP 26 the scenario needs",
        ),
        (&format!(r#"{MODS}, "max_otp": 7, "ops": []"#), "at $.max_otp: 7 is not an OTP release"),
    ];
    for (body, want) in cases {
        let e = err(&format!("{{\"name\": \"t\", {body}}}"));
        assert!(
            e.starts_with("f.json: at $.") && e.contains(want),
            "want {want:?}\ngot  {e}"
        );
    }
}

#[test]
fn non_terminating_scenarios_stop_at_the_bound() {
    let t = r#"{"name": "loop", "modules": [{"name": "m", "functions": [{"name": "f", "arity": 1, "exported": true, "base": [], "body": [{"tail_call": "f/1", "args": ["n+1"]}]}]}],
               "processes": [{"name": "p"}], "ops": [{"call": {"process": "p", "mfa": "m:f/1", "args": [1]}}]}"#;
    let l = load("loop.json", t).unwrap();
    let e = run(&l, &mut RefEngine::new(l.funcs.clone())).unwrap_err();
    assert!(
        e.to_string()
            .contains("at $.ops[0]: more than 1000000 calls"),
        "{e}"
    );
}

/// A tail loop of a return-traced function piles up one trace frame per entry: the run stops at
/// the entries bound (exit 2) on both engines instead of overflowing their stacks (found by
/// `corpus_with_a_node_replaced_never_panics_and_often_still_runs`).
#[test]
fn return_traced_tail_loops_stop_at_the_entries_bound() {
    let t = r#"{"name": "loop", "modules": [{"name": "m", "functions": [{"name": "f", "arity": 1, "exported": true, "base": [], "body": [{"tail_call": "f/1", "args": [1]}]}]}],
               "processes": [{"name": "p", "trace": {"legacy": ["call"]}}],
               "ops": [{"trace_pattern": {"pattern": "m:f/1", "spec": {"actions": ["return_trace"]}, "flags": ["local"]}},
                       {"call": {"process": "p", "mfa": "m:f/1", "args": [1]}}]}"#;
    let l = load("loop.json", t).unwrap();
    for mut e in [
        RefEngine::boxed(l.funcs.clone()),
        SpecOracle::boxed(l.funcs.clone()),
    ] {
        let err = run(&l, e.as_mut()).unwrap_err();
        assert!(
            err.to_string()
                .contains("at $.ops[1]: more than 1500 function entries"),
            "{err}"
        );
    }
}

/// Generated scenarios round-trip through JSON and load (the generator's output is valid input).
#[test]
fn generated_scenarios_load_and_agree() {
    for sc in bpspec_oracle::gen::sample(Default::default(), 64, 1) {
        compare_scenario(&RefEngine::boxed, &SpecOracle::boxed, &sc).unwrap();
    }
}

/// docs/scenario.schema.json names exactly the keys the loader accepts: every key of a scenario
/// that uses every field (serialized by the loader's own types) is in the schema, and every
/// property the schema declares is one of them (or an observation key).
#[test]
fn the_json_schema_and_the_loader_know_the_same_keys() {
    fn keys(v: &Value, out: &mut std::collections::BTreeSet<String>, skip_values_of: &[&str]) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    out.insert(k.clone());
                    if !skip_values_of.contains(&k.as_str()) {
                        keys(x, out, skip_values_of);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| keys(x, out, skip_values_of)),
            _ => {}
        }
    }
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/scenario.schema.json")).unwrap();
    let declared = common::schema_properties(&schema);
    let full = r#"{"name": "all", "description": "d", "requires_otp": 27, "max_otp": 29, "known_deviation": "x",
      "modules": [{"name": "m", "functions": [{"name": "f", "arity": 1, "exported": true,
         "base_arg": 1, "base_match": {"tuple": []},
         "base": [{"allocate": 3}, {"advance": 5}, {"raise": "r"}],
         "body": [{"call": "f/1", "args": ["n-1"], "times": 2}, {"call": "f/1", "args": [{"add": [{"arg": 1}, -1]}], "catch": true}, {"tail_call": "g/0"}]},
         {"name": "g", "body": [{"return": {"cons": [1, []]}}]}]}],
      "sessions": ["s"], "processes": [{"name": "p", "trace": {"legacy": ["call"]}}],
      "ops": [{"session_create": "s"}, {"trace_pattern": {"session": "s", "pattern": "m:f/1", "spec": {"actions": ["return_trace"]}, "flags": ["local"]}},
              {"call": {"process": "p", "mfa": "m:f/1", "args": [1], "times": 2}}, {"trace_info": {"session": "s", "mfa": "m:f/1", "item": "all"}},
              {"trace_flags": {"process": "p", "session": "s", "on": true, "flags": ["call"]}}, {"schedule_out": "p"}, {"schedule_in": "p"},
              {"session_destroy": "s"}, {"load": "m"}, {"delete": "m"}, {"purge": "m"}, {"soft_purge": "m"}],
      "expect": [{"op": 2, "trace": {"session": "s", "process": "p", "event": "call", "mfa": "m:f/1", "args": [1]}},
                 {"op": 2, "return": "x"}, {"op": 2, "raise": "r"}, {"op": 1, "trace_pattern": 1}, {"op": 1, "trace_pattern": {"badarg": "badopt"}},
                 {"op": 3, "trace_info": {"item": "all", "value": false}}, {"op": 4, "trace_flags": 1}, {"op": 8, "code": true},
                 {"op": 3, "trace_info": {"item": "call_time", "value": [{"process": "p", "count": 1, "time": 5}]}},
                 {"op": 3, "trace_info": {"item": "call_memory", "value": [{"process": "p", "count": 1, "words": 3}]}}]}"#;
    let l = load("full.json", full).unwrap_or_else(|e| panic!("{e}"));
    let v = serde_json::to_value(&l.scenario).unwrap();
    let mut used = std::collections::BTreeSet::new();
    keys(&v, &mut used, &[]);
    // Receive functions go without match specs and call_time: a scenario of their own.
    let waits = r#"{"name": "w", "modules": [{"name": "m", "functions": [{"name": "w", "exported": true, "receive": true, "body": [], "changed_body": [{"return": 2}]}]}],
      "processes": [{"name": "p"}], "ops": [{"call": {"process": "p", "mfa": "m:w/0", "args": []}}, {"resume": "p"}, {"load_changed": "m"}],
      "expect": [{"op": 0, "waiting": true}, {"op": 1, "return": "ok"}]}"#;
    let w = load("waits.json", waits).unwrap_or_else(|e| panic!("{e}"));
    keys(&serde_json::to_value(&w.scenario).unwrap(), &mut used, &[]);
    // Process trace maps are keyed by session name, not by schema keys.
    used.remove("legacy");
    for k in &used {
        assert!(
            declared.contains(k),
            "key {k:?} accepted by the loader is missing from the schema"
        );
    }
    for k in &declared {
        assert!(
            used.contains(k) || ["trace"].contains(&k.as_str()),
            "schema declares {k:?}, which the loader never produces"
        );
    }
}

/// A step's `advance` / `allocate` is bounded (a fuzz case with 2^63 made both engines panic on
/// a clock that "went back"): a clear error at load.
#[test]
fn huge_advance_and_allocate_are_load_errors() {
    for (key, v) in [("advance", u64::MAX), ("allocate", 1u64 << 25)] {
        let text = format!(
            "{{\"name\": \"x\", \"modules\": [{{\"name\": \"m\", \"functions\": [{{\"name\": \"f\", \"arity\": 0, \"exported\": true, \"body\": [{{\"{key}\": {v}}}]}}]}}], \"ops\": []}}"
        );
        let e = err(&text);
        assert!(
            e.contains(&format!("body[0].{key}")) && e.contains("at most 16777216"),
            "{e}"
        );
    }
}

/// The second code (`changed_body`) is compiled as the first: it must keep the module's
/// functions (the compiler keeps the exported and reachable ones), and its errors name the
/// `changed_body` path.
#[test]
fn a_changed_body_that_reaches_other_functions_is_refused() {
    let reaches = r#"{"name": "c", "modules": [{"name": "m", "functions": [
        {"name": "f", "exported": true, "body": [], "changed_body": [{"call": "h/0"}]},
        {"name": "h", "body": []}]}], "processes": [], "ops": [{"load_changed": "m"}]}"#;
    let e = load("c.json", reaches).unwrap_err().to_string();
    assert!(
        e.starts_with("c.json: at $.modules:") && e.contains("keep the module's functions"),
        "{e}"
    );
    let undeclared = r#"{"name": "c", "modules": [{"name": "m", "functions": [
        {"name": "f", "exported": true, "body": [], "changed_body": [{"call": "nope/0"}]}]}],
        "processes": [], "ops": []}"#;
    let e = load("c.json", undeclared).unwrap_err().to_string();
    assert!(
        e.contains("$.modules[0].functions[0].changed_body[0]") && e.contains("second code"),
        "{e}"
    );
}

/// `trace_pattern` with the pattern `on_load` (spec/src/code.rs CL8): `true`, `false` or a match
/// spec with local, global and the counters load as an op of its own; `pause`, `restart` and
/// `meta`, which the model does not have for it, are refused with the op's path; bad flags
/// are refused as for any pattern.
#[test]
fn on_load_patterns_load_and_bad_ones_name_the_op() {
    let sc = |spec: &str, flags: &str| {
        format!(
            r#"{{"name": "o", {MODS}, "ops": [{{"load": "m"}}, {{"trace_pattern": {{"pattern": "on_load", "spec": {spec}, "flags": {flags}}}}}]}}"#
        )
    };
    for (spec, flags) in [
        ("true", r#"["local", "call_count"]"#),
        ("false", r#"["call_time"]"#),
        ("true", "[]"),
        (r#"{"actions": ["return_trace"]}"#, r#"["local"]"#),
    ] {
        let l = load("o.json", &sc(spec, flags)).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            matches!(
                l.ops[1],
                bpspec_oracle::scenario::LOp::OnLoadPattern { session: 0, .. }
            ),
            "{:?}",
            l.ops[1]
        );
        assert_eq!(
            l.features.get(&Feature::OnLoadPattern).map(String::as_str),
            Some("$.ops[1].trace_pattern.pattern")
        );
    }
    for (spec, flags, path, says) in [
        (
            r#""pause""#,
            r#"["call_count"]"#,
            "spec",
            "pause and restart",
        ),
        (
            r#""restart""#,
            r#"["call_count"]"#,
            "spec",
            "pause and restart",
        ),
        ("true", r#"["meta"]"#, "flags", "meta is not modelled"),
        (
            "true",
            r#"["bogus"]"#,
            "flags[0]",
            "unknown trace_pattern flag",
        ),
    ] {
        let e = load("f.json", &sc(spec, flags)).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("f.json: at $.ops[1].trace_pattern.{path}: "))
                && e.contains(says),
            "{spec} {flags}: {e}"
        );
    }
}

/// `trace_info` of `on_load` (spec/src/code.rs CL8): every item loads as an op of its own that
/// needs the on_load feature (OTP 25; call_memory 26, as for a function; in a session 27);
/// an unknown item, or an `mfa` that is neither M:F/A nor on_load, is refused with the op's
/// path.
#[test]
fn on_load_trace_info_loads_and_bad_ones_name_the_op() {
    use bpspec_oracle::scenario::LOp;
    let sc = |item: &str| {
        format!(
            r#"{{"name": "o", {MODS}, "ops": [{{"trace_info": {{"mfa": "on_load", "item": "{item}"}}}}]}}"#
        )
    };
    for item in [
        "traced",
        "match_spec",
        "meta",
        "meta_match_spec",
        "call_count",
        "call_time",
        "call_memory",
        "all",
    ] {
        let l = load("o.json", &sc(item)).unwrap_or_else(|e| panic!("{item}: {e}"));
        assert!(
            matches!(&l.ops[0], LOp::OnLoadInfo { session: 0, item: i } if i == item),
            "{:?}",
            l.ops[0]
        );
        assert_eq!(
            l.features.get(&Feature::OnLoadPattern).map(String::as_str),
            Some("$.ops[0].trace_info.mfa")
        );
        let otp = if item == "call_memory" { 26 } else { 25 };
        assert_eq!(l.requires_otp(), otp, "{item}");
    }
    // In a session: trace:info(S, on_load, Item), OTP 27.
    let l = load(
        "s.json",
        &format!(
            r#"{{"name": "s", "sessions": ["s1"], {MODS}, "ops": [{{"session_create": "s1"}}, {{"trace_info": {{"session": "s1", "mfa": "on_load", "item": "call_count"}}}}]}}"#
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(&l.ops[1], LOp::OnLoadInfo { session: 1, .. }),
        "{:?}",
        l.ops[1]
    );
    assert_eq!(l.requires_otp(), 27);
    for (mfa, item, path, says) in [
        ("on_load", "bogus", "item", "unknown trace_info item"),
        ("on_lod", "traced", "mfa", "is not M:F/A (or on_load)"),
        ("m:on_load", "traced", "mfa", "is not M:F/A (or on_load)"),
    ] {
        let text = format!(
            r#"{{"name": "o", {MODS}, "ops": [{{"trace_info": {{"mfa": "{mfa}", "item": "{item}"}}}}]}}"#
        );
        let e = load("f.json", &text).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("f.json: at $.ops[0].trace_info.{path}: ")) && e.contains(says),
            "{mfa} {item}: {e}"
        );
    }
}
