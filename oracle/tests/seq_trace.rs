//! seq_trace scenarios in JSON (oracle/src/seq.rs): the corpus in oracle/corpus/seq_trace/
//! loads, the reference agrees with every file's `expect` (recorded on Erlang/OTP 25), OTP 25 on
//! PATH and the OTP in BPSPEC_OTP_ROOT agree with the reference, and bad files get errors that
//! name the file and the place.

use bpspec_oracle::conformance::json_files;

mod common;
use bpspec_oracle::scenario::LoadError;
use bpspec_oracle::seq::{self, load, SeqScenario};

fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/seq_trace")
}

fn corpus() -> Vec<seq::SeqLoaded> {
    let files = json_files(&corpus_dir()).unwrap_or_else(|e| panic!("{e}"));
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            assert!(seq::is_seq_trace(&text), "{p}");
            load(p, &text).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect()
}

/// Writes the corpus from the seq_trace crate's built-in scenarios, with `expect` as Erlang/OTP
/// (on PATH) produced it. Run by hand: `cargo test -p bpspec-oracle --test seq_trace
/// record_corpus -- --ignored`.
#[test]
#[ignore]
fn record_corpus() {
    let scs: Vec<seq::SeqLoaded> = bpspec_seqtrace::scenario::corpus()
        .iter()
        .map(|sc| {
            let raw = SeqScenario {
                name: sc.name.clone(),
                description: String::new(),
                seq_trace: sc.steps.iter().map(seq::to_json_step).collect(),
                expect: None,
            };
            let text = serde_json::to_string(&raw).unwrap();
            load(&sc.name, &text).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let (version, otp) = seq::record(&scs, None).unwrap();
    println!("recorded on OTP {version}");
    for (i, sc) in scs.iter().enumerate() {
        let o = &otp[&i];
        assert_eq!(o.fail, None, "{}", sc.raw.name);
        let mut raw = sc.raw.clone();
        raw.expect = Some(seq::expect_of(o));
        let file = corpus_dir().join(format!("{}.json", sc.raw.name.replace(' ', "_")));
        let text = seq::to_text(&raw);
        std::fs::write(&file, text).unwrap();
    }
}

#[test]
fn corpus_agrees_with_its_expect() {
    let scs = corpus();
    assert!(scs.len() >= 12, "{} files", scs.len());
    let mut events = 0;
    for sc in &scs {
        let exp = sc
            .raw
            .expect
            .as_ref()
            .expect("every corpus file has expect");
        events += exp.events.len();
        let got = seq::run(sc);
        assert_eq!(seq::compare(exp, &got), None, "{}", sc.source);
    }
    println!(
        "seq_trace corpus: {} files, {events} expected events",
        scs.len()
    );
    assert!(events > 0);
}

/// The check can fail: each mutant of the serial rules disagrees with some file's `expect`.
#[test]
fn every_serial_mutant_disagrees_with_the_corpus() {
    let scs = corpus();
    for m in bpspec_seqtrace::Mutant::ALL {
        let bad = scs
            .iter()
            .filter(|sc| {
                let got =
                    bpspec_seqtrace::scenario::run_reference_with(&sc.scenario, seq::DIALECT, m);
                seq::compare(sc.raw.expect.as_ref().unwrap(), &got).is_some()
            })
            .count();
        println!("mutant {}: {bad} of {} files disagree", m.name(), scs.len());
        assert!(bad > 0, "mutant {} agrees with the whole corpus", m.name());
    }
}

fn otp_agrees(root: Option<&std::path::Path>) {
    let scs = corpus();
    let (version, diffs) = seq::differential(&scs, root).unwrap_or_else(|e| panic!("{e}"));
    let bad: Vec<String> = scs
        .iter()
        .zip(&diffs)
        .filter_map(|(sc, d)| d.as_ref().map(|d| format!("{}: {d}", sc.source)))
        .collect();
    println!(
        "OTP {version}: {} of {} seq_trace corpus files differ",
        bad.len(),
        scs.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn corpus_agrees_with_otp_on_path() {
    otp_agrees(None);
}

#[test]
fn corpus_agrees_with_otp_root() {
    match bpspec_oracle::erlang::Erl::env_root() {
        Some(r) => otp_agrees(Some(&r)),
        None => println!("BPSPEC_OTP_ROOT not set: the second OTP is not checked"),
    }
}

fn err(text: &str) -> String {
    match load("bad.json", text) {
        Ok(_) => panic!("loaded: {text}"),
        Err(e) => {
            assert!(matches!(
                e,
                LoadError::Syntax { .. } | LoadError::Invalid { .. }
            ));
            e.to_string()
        }
    }
}

#[test]
fn bad_files_name_the_place() {
    assert_eq!(
        err("{\"name\": \"x\",\n \"seq_trace\": [\n  {\"sned\": {\"p\": 0}}]}"),
        "bad.json:3:9: unknown variant `sned`, expected one of `spawn`, `spawn_link`, `send`, `recv`, `recv_exit`, `trap_exit`, `exit`, `set_token`, `set_token_empty`, `save`, `restore`, `get_token`, `print`, `reset`"
    );
    assert!(err("{\"name\": \"x\", \"seq_trace\": [{\"send\": {\"p\": 0, \"to\": \"one\", \"msg\": \"a\"}}]}")
        .starts_with("bad.json:1:"));
    assert_eq!(
        err(r#"{"name": "x", "seq_trace": [{"send": {"p": 0, "to": 1, "msg": "a"}}]}"#),
        "bad.json: at $.seq_trace[0].send.to: process 1 is not spawned yet"
    );
    assert_eq!(
        err(r#"{"name": "x", "seq_trace": [{"recv": {"p": 2, "msg": "a"}}]}"#),
        "bad.json: at $.seq_trace[0].recv.p: process 2 is not spawned yet (0 is the first process; spawn the others)"
    );
    assert_eq!(
        err(r#"{"name": "x", "seq_trace": [{"set_token": {"p": 0, "component": "receive", "value": "true"}}]}"#),
        "bad.json: at $.seq_trace[0].set_token.component: receive is a reserved word in Erlang: write 'receive' (quoted)"
    );
    assert!(err(r#"{"name": "x", "seq_trace": [{"set_token": {"p": 0, "component": "label", "value": "}}"}}]}"#)
        .starts_with("bad.json: at $.seq_trace[0].set_token.value: \"}}\" is not an Erlang term"));
    assert_eq!(
        err(r#"{"name": "x", "seq_trace": [{"restore": {"p": 0, "slot": 1}}]}"#),
        "bad.json: at $.seq_trace[0].restore.slot: slot 1 is restored before any save to it"
    );
    assert_eq!(
        err(
            r#"{"name": "x", "seq_trace": [{"spawn": {"p": 0, "child": 1}}, {"exit": {"p": 1, "reason": "bye"}}, {"print": {"p": 1, "info": "x"}}]}"#
        ),
        "bad.json: at $.seq_trace[2].print.p: process 1 has exited"
    );
    assert_eq!(
        err(r#"{"name": "x", "seq_trace": [{"spawn": {"p": 0, "child": 0}}]}"#),
        "bad.json: at $.seq_trace[0].spawn.child: process 0 is already spawned (each index once)"
    );
}

/// docs/seq_trace.schema.json names exactly the keys the loader accepts: every key of a scenario
/// using every step kind and field (serialized by the loader's own types) is a property in the
/// schema, and every property the schema declares is one of them.
#[test]
fn the_json_schema_and_the_loader_know_the_same_keys() {
    use serde_json::Value;
    use std::collections::BTreeSet;
    fn keys(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(o) => o.iter().for_each(|(k, x)| {
                out.insert(k.clone());
                keys(x, out)
            }),
            Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
            _ => {}
        }
    }
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/seq_trace.schema.json")).unwrap();
    let declared = common::schema_properties(&schema);
    let full = r#"{"name": "all", "description": "d", "seq_trace": [
        {"trap_exit": {"p": 0}}, {"spawn": {"p": 0, "child": 1}}, {"spawn_link": {"p": 0, "child": 2}},
        {"send": {"p": 0, "to": 1, "msg": "a"}}, {"recv": {"p": 1, "msg": "a"}},
        {"set_token": {"p": 0, "component": "label", "value": "3"}}, {"set_token_empty": {"p": 0}},
        {"save": {"p": 0, "slot": 1}}, {"restore": {"p": 0, "slot": 1}},
        {"get_token": {"p": 0}}, {"get_token": {"p": 0, "component": "serial"}},
        {"print": {"p": 0, "info": "i"}}, {"print": {"p": 0, "label": "3", "info": "i"}},
        {"exit": {"p": 2, "reason": "bye"}}, {"recv_exit": {"p": 0, "from": 2}}, {"reset": {"p": 0}}],
      "expect": {"results": [], "events": []}}"#;
    let l = load("full.json", full).unwrap_or_else(|e| panic!("{e}"));
    let mut used = BTreeSet::new();
    keys(&serde_json::to_value(&l.raw).unwrap(), &mut used);
    assert_eq!(
        used, declared,
        "loader keys (left) vs schema properties (right)"
    );
}
