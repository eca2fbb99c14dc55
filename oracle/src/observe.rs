//! Observations: what a scenario run prints, one JSON object per line, in order, each tagged
//! with the index of the op that produced it. The same format comes out of our engine, the
//! sequential oracle and the Erlang driver, so they compare line by line.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// Index into the scenario's `ops`.
    pub op: usize,
    #[serde(flatten)]
    pub what: What,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    /// `trace_pattern`'s result: the number of matched functions, `{"badarg": Cause}` (the
    /// cause of ERTS's error_info), or `"badarg"` (no cause).
    TracePattern(Value),
    /// A trace message received by the session's tracer.
    Trace(TraceMsg),
    /// A call op returned (the value of its last call, with `times`).
    Return(Value),
    /// A call op raised (`error:Reason`); the reason, a term.
    Raise(Value),
    /// `trace_info`'s `{Item, Value}`.
    TraceInfo(InfoObs),
    /// `erlang:trace/3`'s result: the number of processes changed.
    TraceFlags(Value),
    /// The boolean answer of `load` (`{module, M}`), `delete`, `purge` or `soft_purge`.
    Code(Value),
    /// The call op's call waits in a receive function (`true`) until a `resume` op.
    Waiting(bool),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceMsg {
    pub session: String,
    pub process: String,
    /// `call` (later: `return_from`, `return_to`, `exception_from`).
    pub event: String,
    pub mfa: String,
    /// The call's arguments: a list of terms (docs/scenario.md, "Terms"); `[]` for
    /// return_from and exception_from. In `expect` it may be the wildcard `"_"`.
    pub args: Value,
    /// `return_from`: the value returned; `exception_from`: `"error:Reason"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InfoObs {
    pub item: String,
    /// `"undefined"`, `false`, `"local"`, `"global"`, an integer (call_count), `[]` or
    /// `{"actions": [...]}` (match_spec), `[{"process", "count"}]` sorted by process
    /// (call_time, durations left out), `[[Item, Value], ...]` (all).
    pub value: Value,
}

impl Observation {
    /// One line of the output format.
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("observations serialize")
    }
}

/// Print observations, one per line.
pub fn render(obs: &[Observation]) -> String {
    obs.iter().map(|o| o.line() + "\n").collect()
}

/// A line diff (longest common subsequence) of expected vs observed; `None` if equal.
/// Lines are prefixed `  ` (both), `- ` (expected only) or `+ ` (observed only).
pub fn diff(expected: &[Observation], observed: &[Observation]) -> Option<String> {
    if expected == observed {
        return None;
    }
    let a: Vec<String> = expected.iter().map(Observation::line).collect();
    let b: Vec<String> = observed.iter().map(Observation::line).collect();
    Some(diff_lines(&a, &b))
}

/// The wildcard of `expect`: the string `"_"` stands for any value (docs/scenario.md,
/// "Observations"). No atom is spelled `_`, so it never stands for itself.
pub const ANY: &str = "_";

/// Does the expected JSON value match the observed one? `"_"` matches anything, at any depth;
/// everything else must be equal (objects with the same keys, arrays of the same length).
pub fn matches(expected: &Value, observed: &Value) -> bool {
    match (expected, observed) {
        (Value::String(w), _) if w == ANY => true,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| matches(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, x)| b.get(k).is_some_and(|y| matches(x, y)))
        }
        _ => expected == observed,
    }
}

/// Does an expected observation (possibly with wildcards) match an observed one?
pub fn matches_obs(expected: &Observation, observed: &Observation) -> bool {
    let j = |o: &Observation| serde_json::to_value(o).expect("observations serialize");
    matches(&j(expected), &j(observed))
}

/// A line diff of `expect` (which may hold `"_"` wildcards) vs observed; `None` if every
/// observation matches its expectation, in order.
pub fn diff_expect(expected: &[Observation], observed: &[Observation]) -> Option<String> {
    if expected.len() == observed.len()
        && expected
            .iter()
            .zip(observed)
            .all(|(e, o)| matches_obs(e, o))
    {
        return None;
    }
    let a: Vec<String> = expected.iter().map(Observation::line).collect();
    let b: Vec<String> = observed.iter().map(Observation::line).collect();
    Some(diff_lines_by(&a, &b, |i, j| {
        matches_obs(&expected[i], &observed[j])
    }))
}

pub fn diff_lines(a: &[String], b: &[String]) -> String {
    diff_lines_by(a, b, |i, j| a[i] == b[j])
}

/// [`diff_lines`] with line `i` of `a` and line `j` of `b` the same when `same(i, j)`.
fn diff_lines_by(a: &[String], b: &[String], same: impl Fn(usize, usize) -> bool) -> String {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j] = LCS length of a[i..] and b[j..]. Scenarios are small; cap the table.
    if n.saturating_mul(m) > 4_000_000 {
        let mut s = String::new();
        for l in a {
            s += &format!("- {l}\n");
        }
        for l in b {
            s += &format!("+ {l}\n");
        }
        return s;
    }
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if same(i, j) {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut s) = (0, 0, String::new());
    while i < n || j < m {
        if i < n && j < m && lcs[i][j] == lcs[i + 1][j + 1] + 1 && same(i, j) {
            s += &format!("  {}\n", a[i]);
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            s += &format!("+ {}\n", b[j]);
            j += 1;
        } else {
            s += &format!("- {}\n", a[i]);
            i += 1;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(line: &str) -> Observation {
        serde_json::from_str(line).expect("observation")
    }

    #[test]
    fn the_wildcard_matches_any_value_and_nothing_else_is_loosened() {
        let seen = obs(
            r#"{"op":1,"trace":{"session":"legacy","process":"p1","event":"call","mfa":"m:f/2","args":[3,{"tuple":["a",[1]]}]}}"#,
        );
        for (exp, ok) in [
            (
                r#"{"op":1,"trace":{"session":"legacy","process":"p1","event":"call","mfa":"m:f/2","args":"_"}}"#,
                true,
            ),
            (
                r#"{"op":1,"trace":{"session":"legacy","process":"p1","event":"call","mfa":"m:f/2","args":["_",{"tuple":["a","_"]}]}}"#,
                true,
            ),
            (
                r#"{"op":1,"trace":{"session":"_","process":"_","event":"_","mfa":"_","args":"_"}}"#,
                true,
            ),
            // A wrong value next to a wildcard still differs.
            (
                r#"{"op":1,"trace":{"session":"legacy","process":"p1","event":"call","mfa":"m:f/2","args":[4,"_"]}}"#,
                false,
            ),
            (
                r#"{"op":1,"trace":{"session":"legacy","process":"p1","event":"call","mfa":"m:f/2","args":["_"]}}"#,
                false,
            ),
            (
                r#"{"op":1,"trace":{"session":"legacy","process":"p1","event":"call","mfa":"m:g/2","args":"_"}}"#,
                false,
            ),
            (
                r#"{"op":2,"trace":{"session":"legacy","process":"p1","event":"call","mfa":"m:f/2","args":"_"}}"#,
                false,
            ),
            (r#"{"op":1,"return":"_"}"#, false),
        ] {
            assert_eq!(matches_obs(&obs(exp), &seen), ok, "{exp}");
            assert_eq!(
                diff_expect(&[obs(exp)], &[seen.clone()]).is_none(),
                ok,
                "{exp}"
            );
        }
        // The wildcard is for `expect` only: an observed "_" is an ordinary string.
        assert!(!matches_obs(
            &obs(r#"{"op":1,"return":3}"#),
            &obs(r#"{"op":1,"return":"_"}"#)
        ));
        // Whole lists: a missing or extra observation is a difference.
        let r = obs(r#"{"op":1,"return":"_"}"#);
        assert!(diff_expect(&[r.clone()], &[]).is_some());
        assert!(diff_expect(
            &[r.clone()],
            &[obs(r#"{"op":1,"return":1}"#), obs(r#"{"op":1,"return":2}"#)]
        )
        .is_some());
        assert!(diff_expect(&[r], &[obs(r#"{"op":1,"return":{"tuple":[1]}}"#)]).is_none());
    }
}
