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
        s
    }
}
