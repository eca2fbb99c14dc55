//! seq_trace scenarios in JSON (docs/seq_trace_scenario.md, docs/seq_trace.schema.json): the
//! raw serde types, [`load`] (parse and validate into a [`bpspec_seqtrace::scenario::Scenario`]),
//! the observation lines, and the comparison with `expect` and with a real Erlang/OTP.
//!
//! A file is a seq_trace scenario when its top-level object has the key `seq_trace` (the steps);
//! a breakpoint scenario has `modules` and `ops` instead. Errors are [`LoadError`]s: JSON syntax
//! and type errors with line and column, contradictions with a JSON path such as
//! `$.seq_trace[3].send.to`; all map to exit code 2.

use crate::scenario::LoadError;
use bpspec_seqtrace::scenario::{self as st, first_difference, run_reference, Outcome, Step};
use bpspec_seqtrace::Dialect;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// At most this many steps and processes per scenario.
pub const MAX_SEQ_STEPS: usize = 1_000;
pub const MAX_SEQ_PROCS: u32 = 64;

/// The dialect the reference runs in: Erlang/OTP as measured (25 and 29 behave the same on the
/// corpus; docs/seq_trace.md lists where OTP differs from the manual).
pub const DIALECT: Dialect = Dialect::Otp25;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeqScenario {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub seq_trace: Vec<SeqStep>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<SeqExpect>,
}

/// The expected observations: step results in step order, and events in the order the
/// reference generates them (compared as a set, and in order per emitting process).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeqExpect {
    pub results: Vec<String>,
    pub events: Vec<String>,
}

/// One step: exactly one key naming the kind. `p` is the process that runs it (0 is spawned by
/// the driver; others by `spawn`/`spawn_link`). Erlang values (`value`, `label`, `component`) are
/// Erlang source text, passed unchanged to the reference and to OTP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SeqStep {
    Spawn(SpawnS),
    SpawnLink(SpawnS),
    Send(SendS),
    Recv(RecvS),
    RecvExit(RecvExitS),
    TrapExit(ProcS),
    Exit(ExitS),
    SetToken(SetS),
    SetTokenEmpty(ProcS),
    Save(SlotS),
    Restore(SlotS),
    GetToken(GetS),
    Print(PrintS),
    Reset(ProcS),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcS {
    pub p: u32,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnS {
    pub p: u32,
    pub child: u32,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendS {
    pub p: u32,
    pub to: u32,
    pub msg: String,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecvS {
    pub p: u32,
    pub msg: String,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecvExitS {
    pub p: u32,
    pub from: u32,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitS {
    pub p: u32,
    pub reason: String,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetS {
    pub p: u32,
    pub component: String,
    pub value: String,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotS {
    pub p: u32,
    pub slot: u32,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetS {
    pub p: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
}
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrintS {
    pub p: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub info: String,
}

/// A validated seq_trace scenario.
#[derive(Clone, Debug)]
pub struct SeqLoaded {
    pub source: String,
    pub raw: SeqScenario,
    pub scenario: st::Scenario,
}

/// Whether `text` is a seq_trace scenario (a JSON object with the key `seq_trace`). Text that is
/// not JSON is not one (the breakpoint loader then reports the syntax error).
pub fn is_seq_trace(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.contains_key("seq_trace")))
        .unwrap_or(false)
}

/// Parse and validate seq_trace scenario text; `file` names it in errors.
pub fn load(file: &str, text: &str) -> Result<SeqLoaded, LoadError> {
    let raw: SeqScenario = serde_json::from_str(text).map_err(|e| LoadError::Syntax {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        message: crate::scenario::strip_position(&e.to_string()),
    })?;
    validate(file, raw)
}

const RESERVED: [&str; 29] = [
    "after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor", "case",
    "catch", "cond", "div", "end", "fun", "if", "let", "not", "of", "or", "orelse", "receive",
    "rem", "try", "when", "xor", "maybe", "else",
];

fn is_plain_atom(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some('a'..='z'))
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 64
}

fn is_int(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    !d.is_empty() && d.len() <= 18 && d.chars().all(|c| c.is_ascii_digit())
}

/// The Erlang terms a scenario may carry as text: an atom (reserved words quoted), a quoted atom,
/// an integer, `{I,J}` of integers or atoms, a string without quotes or backslashes, `[]`.
/// `Err` says what is wrong.
fn check_term(s: &str) -> Result<(), String> {
    let s = s.trim();
    if is_plain_atom(s) {
        if RESERVED.contains(&s) {
            return Err(format!(
                "{s} is a reserved word in Erlang: write '{s}' (quoted)"
            ));
        }
        return Ok(());
    }
    let quoted = |q: char| {
        s.len() >= 2
            && s.starts_with(q)
            && s.ends_with(q)
            && s.len() <= 66
            && s[1..s.len() - 1]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ')
    };
    if is_int(s) || quoted('\'') || quoted('"') || s == "[]" {
        return Ok(());
    }
    if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        if let Some((a, b)) = inner.split_once(',') {
            let simple = |x: &str| is_int(x.trim()) || is_plain_atom(x.trim());
            if simple(a) && simple(b) {
                return Ok(());
            }
        }
    }
    Err(format!(
        "{s:?} is not an Erlang term a scenario may carry (an atom, a 'quoted atom', an \
         integer, {{I,J}} of integers or atoms, a \"string\" of letters, digits, _ and spaces, or [])"
    ))
}

struct V<'a> {
    file: &'a str,
}

impl V<'_> {
    fn err<T>(&self, path: String, message: impl Into<String>) -> Result<T, LoadError> {
        Err(LoadError::Invalid {
            file: self.file.to_string(),
            path,
            message: message.into(),
        })
    }
}

fn validate(file: &str, raw: SeqScenario) -> Result<SeqLoaded, LoadError> {
    let v = V { file };
    if raw.seq_trace.len() > MAX_SEQ_STEPS {
        return v.err(
            "$.seq_trace".into(),
            format!("more than {MAX_SEQ_STEPS} steps"),
        );
    }
    // Processes alive (running), ever spawned, and saved slots, as the steps go.
    let mut alive: BTreeSet<u32> = BTreeSet::from([0]);
    let mut spawned: BTreeSet<u32> = BTreeSet::from([0]);
    let mut slots: BTreeSet<u32> = BTreeSet::new();
    let mut steps = Vec::new();
    for (i, s) in raw.seq_trace.iter().enumerate() {
        let (key, p) = kind(s);
        let sp = format!("$.seq_trace[{i}].{key}");
        if !alive.contains(&p) {
            let why = if spawned.contains(&p) {
                "has exited"
            } else {
                "is not spawned yet (0 is the first process; spawn the others)"
            };
            return v.err(format!("{sp}.p"), format!("process {p} {why}"));
        }
        let other = |q: u32, field: &str| -> Result<(), LoadError> {
            if spawned.contains(&q) {
                Ok(())
            } else {
                v.err(
                    format!("{sp}.{field}"),
                    format!("process {q} is not spawned yet"),
                )
            }
        };
        let term = |t: &str, field: &str| -> Result<String, LoadError> {
            check_term(t).or_else(|m| v.err(format!("{sp}.{field}"), m))?;
            Ok(t.trim().to_string())
        };
        let atom = |t: &str, field: &str| -> Result<String, LoadError> {
            if is_plain_atom(t) && !RESERVED.contains(&t) {
                Ok(t.to_string())
            } else {
                v.err(
                    format!("{sp}.{field}"),
                    format!("{t:?} is not a plain atom ([a-z][A-Za-z0-9_]*, not a reserved word)"),
                )
            }
        };
        let step = match s {
            SeqStep::Spawn(x) | SeqStep::SpawnLink(x) => {
                if spawned.contains(&x.child) {
                    return v.err(
                        format!("{sp}.child"),
                        format!("process {} is already spawned (each index once)", x.child),
                    );
                }
                if x.child >= MAX_SEQ_PROCS {
                    return v.err(
                        format!("{sp}.child"),
                        format!("process indices are below {MAX_SEQ_PROCS}"),
                    );
                }
                spawned.insert(x.child);
                alive.insert(x.child);
                if matches!(s, SeqStep::Spawn(_)) {
                    Step::Spawn { p, child: x.child }
                } else {
                    Step::SpawnLink { p, child: x.child }
                }
            }
            SeqStep::Send(x) => {
                other(x.to, "to")?;
                Step::Send {
                    p,
                    to: x.to,
                    tag: atom(&x.msg, "msg")?,
                }
            }
            SeqStep::Recv(x) => Step::Recv {
                p,
                tag: atom(&x.msg, "msg")?,
            },
            SeqStep::RecvExit(x) => {
                other(x.from, "from")?;
                Step::RecvExit { p, from: x.from }
            }
            SeqStep::TrapExit(_) => Step::TrapExit { p },
            SeqStep::Exit(x) => {
                let reason = atom(&x.reason, "reason")?;
                alive.remove(&p);
                Step::Exit { p, reason }
            }
            SeqStep::SetToken(x) => Step::Set {
                p,
                component: term(&x.component, "component")?,
                value: term(&x.value, "value")?,
            },
            SeqStep::SetTokenEmpty(_) => Step::SetEmpty { p },
            SeqStep::Save(x) => {
                slots.insert(x.slot);
                Step::Save { p, slot: x.slot }
            }
            SeqStep::Restore(x) => {
                if !slots.contains(&x.slot) {
                    return v.err(
                        format!("{sp}.slot"),
                        format!("slot {} is restored before any save to it", x.slot),
                    );
                }
                Step::Restore { p, slot: x.slot }
            }
            SeqStep::GetToken(x) => match &x.component {
                None => Step::Get { p },
                Some(c) => Step::GetComponent {
                    p,
                    component: term(c, "component")?,
                },
            },
            SeqStep::Print(x) => {
                let info = atom(&x.info, "info")?;
                match &x.label {
                    None => Step::Print { p, info },
                    Some(l) => Step::PrintLabel {
                        p,
                        label: term(l, "label")?,
                        info,
                    },
                }
            }
            SeqStep::Reset(_) => Step::Reset { p },
        };
        steps.push(step);
    }
    let scenario = st::Scenario {
        id: 1,
        name: raw.name.clone(),
        steps,
    };
    Ok(SeqLoaded {
        source: file.to_string(),
        raw,
        scenario,
    })
}

fn kind(s: &SeqStep) -> (&'static str, u32) {
    match s {
        SeqStep::Spawn(x) => ("spawn", x.p),
        SeqStep::SpawnLink(x) => ("spawn_link", x.p),
        SeqStep::Send(x) => ("send", x.p),
        SeqStep::Recv(x) => ("recv", x.p),
        SeqStep::RecvExit(x) => ("recv_exit", x.p),
        SeqStep::TrapExit(x) => ("trap_exit", x.p),
        SeqStep::Exit(x) => ("exit", x.p),
        SeqStep::SetToken(x) => ("set_token", x.p),
        SeqStep::SetTokenEmpty(x) => ("set_token_empty", x.p),
        SeqStep::Save(x) => ("save", x.p),
        SeqStep::Restore(x) => ("restore", x.p),
        SeqStep::GetToken(x) => ("get_token", x.p),
        SeqStep::Print(x) => ("print", x.p),
        SeqStep::Reset(x) => ("reset", x.p),
    }
}

/// The JSON step for a seqtrace [`Step`] (to write scenarios built in Rust as files).
pub fn to_json_step(s: &Step) -> SeqStep {
    match s.clone() {
        Step::Spawn { p, child } => SeqStep::Spawn(SpawnS { p, child }),
        Step::SpawnLink { p, child } => SeqStep::SpawnLink(SpawnS { p, child }),
        Step::Send { p, to, tag } => SeqStep::Send(SendS { p, to, msg: tag }),
        Step::Recv { p, tag } => SeqStep::Recv(RecvS { p, msg: tag }),
        Step::RecvExit { p, from } => SeqStep::RecvExit(RecvExitS { p, from }),
        Step::TrapExit { p } => SeqStep::TrapExit(ProcS { p }),
        Step::Exit { p, reason } => SeqStep::Exit(ExitS { p, reason }),
        Step::Set {
            p,
            component,
            value,
        } => SeqStep::SetToken(SetS {
            p,
            component,
            value,
        }),
        Step::SetEmpty { p } => SeqStep::SetTokenEmpty(ProcS { p }),
        Step::Save { p, slot } => SeqStep::Save(SlotS { p, slot }),
        Step::Restore { p, slot } => SeqStep::Restore(SlotS { p, slot }),
        Step::Get { p } => SeqStep::GetToken(GetS { p, component: None }),
        Step::GetComponent { p, component } => SeqStep::GetToken(GetS {
            p,
            component: Some(component),
        }),
        Step::Print { p, info } => SeqStep::Print(PrintS {
            p,
            label: None,
            info,
        }),
        Step::PrintLabel { p, label, info } => SeqStep::Print(PrintS {
            p,
            label: Some(label),
            info,
        }),
        Step::Reset { p } => SeqStep::Reset(ProcS { p }),
    }
}

/// Run on the reference (the sequential seq_trace implementation, OTP's dialect).
pub fn run(sc: &SeqLoaded) -> Outcome {
    run_reference(&sc.scenario, DIALECT)
}

/// The observation lines: `R Step Proc Result` in step order, then `E Label Kind Prev Curr From
/// To Msg Ts` in the order the events were generated (docs/seq_trace_scenario.md).
pub fn render(o: &Outcome) -> String {
    let mut s = String::new();
    for r in &o.results {
        s += &format!("R {r}\n");
    }
    for e in &o.events_in_order {
        s += &format!("E {e}\n");
    }
    if let Some(f) = &o.fail {
        s += &format!("FAIL {f}\n");
    }
    s
}

/// The expectation recorded from an outcome.
pub fn expect_of(o: &Outcome) -> SeqExpect {
    SeqExpect {
        results: o.results.clone(),
        events: o.events_in_order.clone(),
    }
}

/// An outcome from an expectation (events in their recorded order).
pub fn outcome_of(e: &SeqExpect) -> Outcome {
    let mut events = e.events.clone();
    events.sort();
    Outcome {
        results: e.results.clone(),
        events,
        events_in_order: e.events.clone(),
        fail: None,
    }
}

/// Compare an outcome with the expectation: `None` if they agree (results equal in order,
/// events equal as sets and in order per emitting process), else what differs.
pub fn compare(expected: &SeqExpect, got: &Outcome) -> Option<String> {
    first_difference(&outcome_of(expected), got).map(|d| {
        d.replacen("reference", "expected", 1)
            .replacen("otp", "observed", 1)
    })
}

/// Run seq_trace scenarios on an Erlang/OTP (on PATH, or in the Debian root `root`) and on the
/// reference; per scenario, `None` if they agree (and the file's `expect`, if any, agrees with
/// OTP too), else the difference. Also the OTP version.
pub fn differential(
    scs: &[SeqLoaded],
    root: Option<&std::path::Path>,
) -> Result<(String, Vec<Option<String>>), String> {
    let (version, otp) = record(scs, root)?;
    let empty = Outcome::default();
    let v = scs
        .iter()
        .enumerate()
        .map(|(i, sc)| {
            let o = otp.get(&i).unwrap_or(&empty);
            first_difference(&run(sc), o)
                .map(|d| d.replace("otp", "ERTS"))
                .or_else(|| {
                    let e = sc.raw.expect.as_ref()?;
                    first_difference(&outcome_of(e), o).map(|d| {
                        format!(
                            "expect: {}",
                            d.replacen("reference", "expect", 1).replace("otp", "ERTS")
                        )
                    })
                })
        })
        .collect();
    Ok((version, v))
}

static WORK_SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The results and events of a batch run on OTP, per scenario (for recording `expect`).
pub fn record(
    scs: &[SeqLoaded],
    root: Option<&std::path::Path>,
) -> Result<(String, BTreeMap<usize, Outcome>), String> {
    let batch: Vec<st::Scenario> = scs
        .iter()
        .enumerate()
        .map(|(i, s)| st::Scenario {
            id: i as u32 + 1,
            ..s.scenario.clone()
        })
        .collect();
    let base = match root {
        Some(r) => r.join("tmp"),
        None => std::env::temp_dir(),
    };
    let work = base.join(format!(
        "bpspec-seqtrace-{}-{}",
        std::process::id(),
        WORK_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let b = bpspec_seqtrace::otp::run_batch_in(&work, &batch, root).map_err(|e| e.to_string());
    let _ = std::fs::remove_dir_all(&work);
    let b = b?;
    let m = b
        .outcomes
        .into_iter()
        .map(|(id, o)| (id as usize - 1, o))
        .collect();
    Ok((b.otp_version, m))
}

/// A scenario as file text: one step and one expected line per line.
pub fn to_text(raw: &SeqScenario) -> String {
    let j = |v: &dyn erased::Ser| v.json();
    let lines = |v: Vec<String>| v.join(",\n    ");
    let mut s = format!("{{\n  \"name\": {}", j(&raw.name));
    if !raw.description.is_empty() {
        s += &format!(",\n  \"description\": {}", j(&raw.description));
    }
    s += &format!(
        ",\n  \"seq_trace\": [\n    {}\n  ]",
        lines(raw.seq_trace.iter().map(|x| j(x)).collect())
    );
    if let Some(e) = &raw.expect {
        let list = |v: &[String]| {
            if v.is_empty() {
                "[]".to_string()
            } else {
                let items: Vec<String> = v.iter().map(|x| j(x)).collect();
                format!("[\n      {}\n    ]", items.join(",\n      "))
            }
        };
        s += &format!(
            ",\n  \"expect\": {{\n    \"results\": {},\n    \"events\": {}\n  }}",
            list(&e.results),
            list(&e.events)
        );
    }
    s + "\n}\n"
}

mod erased {
    pub trait Ser {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> String {
            serde_json::to_string(self).expect("scenario parts serialize")
        }
    }
}
