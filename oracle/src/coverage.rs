//! Which operation sequences the random generator ([`crate::gen`]) produced: for each flag kind
//! (local, global, call_count, call_time, call_memory) and each pair of specs (true, false,
//! pause, restart), whether some generated scenario has, on one function F, a `trace_pattern`
//! with the first spec, then one with the second (no other `trace_pattern` touching F between),
//! then a call of F, then a `trace_info` on F (no `trace_pattern` touching F after the second
//! one). Both patterns must carry the flag kind and match F (exactly or through wildcards).

use crate::scenario::{Op, Scenario};
use bpspec_reference::{Mfa, Pattern};
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub const SPECS: [&str; 4] = ["true", "false", "pause", "restart"];
pub const KINDS: [&str; 5] = ["local", "global", "call_count", "call_time", "call_memory"];

/// The scenario features counted besides the sequences (one row of the table): a `catch` call
/// step, the `arity` process flag, a `return` of an expression (not a plain term), a
/// `trace_pattern` that is badarg with a cause (a match spec with counters only; `global` with
/// another flag), the match-spec action `caller`, the `return_to` process flag.
pub const FEATURES: [&str; 6] = [
    "catch",
    "arity",
    "return_expr",
    "badarg_cause",
    "caller",
    "return_to",
];

/// The [`FEATURES`] one scenario uses (each once), read from its JSON form.
pub fn features(sc: &Scenario) -> Vec<&'static str> {
    let mut found = Vec::new();
    let mut add = |f: &'static str| {
        if !found.contains(&f) {
            found.push(f);
        }
    };
    fn is_expr(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(o) => {
                o.contains_key("arg")
                    || o.contains_key("add")
                    || o.contains_key("cons")
                    || o.values().any(is_expr)
            }
            serde_json::Value::Array(a) => a.iter().any(is_expr),
            _ => false,
        }
    }
    for m in &sc.modules {
        for f in &m.functions {
            for st in f.body.iter().chain(f.base.iter().flatten()) {
                if st.catch {
                    add("catch");
                }
                if st.r#return.as_ref().is_some_and(is_expr) {
                    add("return_expr");
                }
            }
        }
    }
    let mut flag = |fl: &[String]| {
        for (name, key) in [("arity", "arity"), ("return_to", "return_to")] {
            if fl.iter().any(|f| f == name) {
                add(key);
            }
        }
    };
    for p in &sc.processes {
        for fl in p.trace.values() {
            flag(fl);
        }
    }
    let mut pattern_feats = Vec::new();
    for op in &sc.ops {
        match op {
            Op::TraceFlags(t) if t.on => flag(&t.flags),
            Op::TracePattern(t) => {
                let ms = t.spec.get("actions");
                if ms
                    .and_then(|a| a.as_array())
                    .is_some_and(|a| a.iter().any(|x| x == "caller"))
                {
                    pattern_feats.push("caller");
                }
                let has = |n: &str| t.flags.iter().any(|f| f == n);
                let counters = has("call_count") || has("call_time") || has("call_memory");
                let ms_counters_only = ms.is_some() && !has("local") && !has("global") && counters;
                let badopt = has("global") && t.flags.len() > 1;
                if ms_counters_only || badopt {
                    pattern_feats.push("badarg_cause");
                }
            }
            _ => {}
        }
    }
    pattern_feats.into_iter().for_each(&mut add);
    found
}

/// One sequence: (flag kind, first spec, second spec).
pub type Seq = (&'static str, &'static str, &'static str);

/// Every sequence of `kinds`.
pub fn all(kinds: &[&'static str]) -> Vec<Seq> {
    let mut v = Vec::new();
    for k in kinds {
        for a in SPECS {
            for b in SPECS {
                v.push((*k, a, b));
            }
        }
    }
    v
}

fn spec_name(v: &serde_json::Value) -> Option<&'static str> {
    match v {
        serde_json::Value::Bool(true) => Some("true"),
        serde_json::Value::Bool(false) => Some("false"),
        serde_json::Value::String(s) if s == "pause" => Some("pause"),
        serde_json::Value::String(s) if s == "restart" => Some("restart"),
        _ => None,
    }
}

fn kinds_of(flags: &[String]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = KINDS
        .iter()
        .copied()
        .filter(|k| flags.iter().any(|f| f == k))
        .collect();
    if flags.is_empty() {
        v.push("global");
    }
    v
}

/// The sequences one scenario contains (each once).
pub fn sequences(sc: &Scenario) -> Vec<Seq> {
    let mut found = Vec::new();
    let funcs: Vec<Mfa> = sc
        .modules
        .iter()
        .flat_map(|m| {
            m.functions
                .iter()
                .map(move |f| Mfa::new(&m.name, &f.name, f.arity))
        })
        .collect();
    for f in &funcs {
        let name = f.to_string();
        // The ops touching f: patterns matching it, calls of it, trace_info on it.
        let mut last_two: Vec<(Option<&'static str>, Vec<&'static str>)> = Vec::new();
        let mut called = false;
        for op in &sc.ops {
            match op {
                Op::TracePattern(t) => {
                    let Ok(p) = Pattern::parse(&t.pattern) else {
                        continue;
                    };
                    if !p.matches(f) {
                        continue;
                    }
                    last_two.push((spec_name(&t.spec), kinds_of(&t.flags)));
                    if last_two.len() > 2 {
                        last_two.remove(0);
                    }
                    called = false;
                }
                Op::Call(c) if c.mfa == name && last_two.len() == 2 => called = true,
                Op::TraceInfo(t) if t.mfa == name && called => {
                    if let [(Some(a), ka), (Some(b), kb)] = &last_two[..] {
                        for k in ka.iter().filter(|k| kb.contains(k)) {
                            let s = (*k, *a, *b);
                            if !found.contains(&s) {
                                found.push(s);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// Counts of scenarios per sequence over a sample.
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    pub scenarios: usize,
    pub counts: BTreeMap<Seq, usize>,
    /// For each sequence, the index of the first scenario that has it.
    pub first: BTreeMap<Seq, usize>,
    /// Per [`FEATURES`] entry, the number of scenarios using it.
    pub features: BTreeMap<&'static str, usize>,
}

impl Coverage {
    pub fn of(scs: &[Scenario]) -> Coverage {
        let mut c = Coverage {
            scenarios: scs.len(),
            ..Coverage::default()
        };
        for (i, sc) in scs.iter().enumerate() {
            for s in sequences(sc) {
                *c.counts.entry(s).or_default() += 1;
                c.first.entry(s).or_insert(i);
            }
            for f in features(sc) {
                *c.features.entry(f).or_default() += 1;
            }
        }
        c
    }

    /// The sequences of `kinds` never drawn.
    pub fn gaps(&self, kinds: &[&'static str]) -> Vec<Seq> {
        all(kinds)
            .into_iter()
            .filter(|s| !self.counts.contains_key(s))
            .collect()
    }

    /// The table: one row per flag kind, one column per spec pair, the number of scenarios with
    /// that sequence (`-` never drawn), then the gaps by name.
    pub fn table(&self, kinds: &[&'static str]) -> String {
        let mut s = format!(
            "generator coverage: {} scenarios; trace_pattern A then B on one function, a call, a trace_info\n",
            self.scenarios
        );
        let _ = write!(s, "{:<12}", "kind \\ A>B");
        for a in SPECS {
            for b in SPECS {
                let _ = write!(s, " {:>7}", format!("{}>{}", &a[..2], &b[..2]));
            }
        }
        s.push('\n');
        for k in kinds {
            let _ = write!(s, "{k:<12}");
            for a in SPECS {
                for b in SPECS {
                    match self.counts.get(&(*k, a, b)) {
                        Some(n) => {
                            let _ = write!(s, " {n:>7}");
                        }
                        None => {
                            let _ = write!(s, " {:>7}", "-");
                        }
                    }
                }
            }
            s.push('\n');
        }
        let gaps = self.gaps(kinds);
        let _ = writeln!(
            s,
            "{} of {} sequences drawn",
            all(kinds).len() - gaps.len(),
            all(kinds).len()
        );
        for (k, a, b) in &gaps {
            let _ = writeln!(s, "never drawn: {k} {a} then {b}");
        }
        let _ = write!(s, "{:<12}", "features");
        for f in FEATURES {
            let _ = write!(s, " {f}");
        }
        s.push('\n');
        let _ = write!(s, "{:<12}", "scenarios");
        for f in FEATURES {
            let n = self.features.get(f).copied().unwrap_or(0);
            let cell = if n == 0 {
                "-".to_string()
            } else {
                n.to_string()
            };
            let _ = write!(s, " {cell:>w$}", w = f.len());
        }
        s.push('\n');
        s
    }

    /// The [`FEATURES`] never drawn.
    pub fn feature_gaps(&self) -> Vec<&'static str> {
        FEATURES
            .into_iter()
            .filter(|f| !self.features.contains_key(f))
            .collect()
    }
}
