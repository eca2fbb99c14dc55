//! The scenario runner: plays a loaded scenario against a [`BreakpointEngine`], interpreting the
//! function bodies (calls, tail calls, returns, raises) and the processes' trace flags, and
//! records the observations. The engine only sees breakpoint hits, `trace_pattern` and
//! `trace_info`; everything else (what the code does) is the runner's, so every engine runs the
//! same program.

use crate::observe::{InfoObs, Observation, TraceMsg, What};
use crate::scenario::{Arg, Feature, LOp, LStep, Loaded, Spec, Val};
use crate::target::BreakpointEngine;
use bpspec_reference::{InfoItem, InfoValue, PatternError, PatternOp, TraceFlags};
use serde_json::Value;
use std::fmt;

/// Bounds on one run: calls made in total, and nesting depth of non-tail calls.
pub const MAX_CALLS: u64 = 1_000_000;
pub const MAX_DEPTH: usize = 500;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The engine lacks a feature the scenario uses (exit 3).
    Unsupported {
        file: String,
        feature: Feature,
        path: String,
        engine: String,
    },
    /// The scenario does not terminate within the bounds (exit 2).
    Limit {
        file: String,
        path: String,
        message: String,
    },
    /// The engine broke its own invariant (exit 4).
    Fault {
        file: String,
        path: String,
        message: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Unsupported { file, feature, path, engine } => write!(
                f,
                "{file}: at {path}: unsupported feature: {feature} is not implemented by the {engine} (ERTS has it since OTP {})",
                feature.otp()
            ),
            RunError::Limit { file, path, message } => write!(f, "{file}: at {path}: {message}"),
            RunError::Fault { file, path, message } => {
                write!(f, "{file}: at {path}: engine invariant violated: {message}")
            }
        }
    }
}

impl std::error::Error for RunError {}

/// Features this runner can drive (beyond local + call_count). None yet: call_time and
/// call_memory need return frames and scheduling in the runner (issue 4), global trace, match
/// specs and sessions need them in the engine (issue 5). A feature runs only if both the engine
/// and the runner have it.
pub fn runner_supports(_feature: &Feature) -> bool {
    false
}

/// The first feature the scenario uses that `engine` (or this runner) lacks.
pub fn unsupported(sc: &Loaded, engine: &dyn BreakpointEngine) -> Option<RunError> {
    sc.features
        .iter()
        .find(|(f, _)| !(engine.supports(f) && runner_supports(f)))
        .map(|(f, path)| RunError::Unsupported {
            file: sc.source.clone(),
            feature: f.clone(),
            path: path.clone(),
            engine: engine.name(),
        })
}

struct Exec<'a> {
    sc: &'a Loaded,
    engine: &'a mut dyn BreakpointEngine,
    obs: Vec<Observation>,
    calls: u64,
    op: usize,
    /// Per process, the bit set of sessions in which it is call-traced.
    traced: Vec<u64>,
}

enum Outcome {
    Return(Val),
    Raise(String),
}

/// Run `sc` on `engine`.
pub fn run(sc: &Loaded, engine: &mut dyn BreakpointEngine) -> Result<Vec<Observation>, RunError> {
    if let Some(e) = unsupported(sc, engine) {
        return Err(e);
    }
    let traced = sc
        .initial_flags
        .iter()
        .map(|m| {
            m.iter()
                .filter(|(_, fl)| fl.iter().any(|f| f == "call"))
                .fold(0u64, |acc, (s, _)| acc | (1 << s))
        })
        .collect();
    let mut ex = Exec {
        sc,
        engine,
        obs: Vec::new(),
        calls: 0,
        op: 0,
        traced,
    };
    for (i, op) in sc.ops.iter().enumerate() {
        ex.op = i;
        ex.step(op)?;
    }
    Ok(ex.obs)
}

fn info_json(v: &InfoValue) -> Value {
    match v {
        InfoValue::Undefined => Value::from("undefined"),
        InfoValue::False => Value::Bool(false),
        InfoValue::Local => Value::from("local"),
        InfoValue::Count(n) => Value::from(*n),
    }
}

impl Exec<'_> {
    fn push(&mut self, what: What) {
        self.obs.push(Observation { op: self.op, what });
    }

    fn path(&self) -> String {
        format!("$.ops[{}]", self.op)
    }

    fn step(&mut self, op: &LOp) -> Result<(), RunError> {
        match op {
            LOp::TracePattern {
                session,
                pattern,
                spec,
                flags,
            } => {
                let pop = match spec {
                    Spec::True => PatternOp::True,
                    Spec::False => PatternOp::False,
                    Spec::Pause => PatternOp::Pause,
                    Spec::Restart => PatternOp::Restart,
                    Spec::MatchSpec(_) => unreachable!("match specs are refused as unsupported"),
                };
                let fl = TraceFlags {
                    local: flags.local,
                    call_count: flags.call_count,
                };
                let r = match self.engine.trace_pattern(*session, pattern, pop, fl) {
                    Ok(n) => Value::from(n as u64),
                    Err(PatternError::BadArg(_)) => Value::from("badarg"),
                    Err(e) => {
                        return Err(RunError::Fault {
                            file: self.sc.source.clone(),
                            path: self.path(),
                            message: format!("trace_pattern on a validated pattern failed: {e}"),
                        })
                    }
                };
                self.push(What::TracePattern(r));
                if let Err(m) = self.engine.check_at_rest() {
                    return Err(RunError::Fault {
                        file: self.sc.source.clone(),
                        path: self.path(),
                        message: m,
                    });
                }
            }
            LOp::Call {
                process,
                f,
                args,
                times,
            } => {
                let mut last = None;
                for _ in 0..*times {
                    let o = self.exec(*process, *f, args.clone(), 0)?;
                    last = Some(o);
                }
                match last.expect("times >= 1") {
                    Outcome::Return(v) => self.push(What::Return(v.to_json())),
                    Outcome::Raise(r) => self.push(What::Raise(r)),
                }
            }
            LOp::TraceInfo { session, mfa, item } => {
                let it = match item.as_str() {
                    "traced" => InfoItem::Traced,
                    "call_count" => InfoItem::CallCount,
                    other => unreachable!("item {other} is refused as unsupported"),
                };
                let v = self.engine.trace_info(*session, mfa, it);
                self.push(What::TraceInfo(InfoObs {
                    item: item.clone(),
                    value: info_json(&v),
                }));
            }
            LOp::TraceFlags {
                process,
                session,
                on,
                flags,
            } => {
                if flags.iter().any(|f| f == "call") {
                    if *on {
                        self.traced[*process] |= 1 << session;
                    } else {
                        self.traced[*process] &= !(1 << session);
                    }
                }
                self.push(What::TraceFlags(1));
            }
            // Without call_time, being scheduled out is not observable; the loader already
            // refused calls by a scheduled-out process.
            LOp::ScheduleOut(_) | LOp::ScheduleIn(_) => {}
            LOp::SessionCreate(_) | LOp::SessionDestroy(_) => {
                unreachable!("sessions are refused as unsupported")
            }
        }
        Ok(())
    }

    /// Process `p` calls function `f` with `args`: hit the breakpoint, then run the body.
    /// Tail calls loop here (no Rust recursion), non-tail calls recurse up to MAX_DEPTH.
    fn exec(
        &mut self,
        p: usize,
        mut f: usize,
        mut args: Vec<i64>,
        depth: usize,
    ) -> Result<Outcome, RunError> {
        if depth > MAX_DEPTH {
            return Err(self.limit(format!("calls nest deeper than {MAX_DEPTH}")));
        }
        loop {
            self.calls += 1;
            if self.calls > MAX_CALLS {
                return Err(self.limit(format!(
                    "more than {MAX_CALLS} calls (does the scenario terminate?)"
                )));
            }
            let sessions = self.engine.call(f, p as u64 + 1, self.traced[p]);
            for s in sessions {
                assert!(
                    self.traced[p] & (1 << s) != 0,
                    "{}: trace message in session {s} for a process not traced there",
                    self.engine.name()
                );
                let mfa = &self.sc.funcs[f];
                self.push(What::Trace(TraceMsg {
                    session: self.sc.sessions[s as usize].clone(),
                    process: self.sc.processes[p].clone(),
                    event: "call".into(),
                    mfa: format!("{}:{}/{}", mfa.module, mfa.name, mfa.arity),
                    args: args.clone(),
                    value: None,
                }));
            }
            let code = &self.sc.code[f];
            assert_eq!(
                args.len(),
                code.arity as usize,
                "arity checked by the loader"
            );
            let steps = match &code.base {
                Some(b) if args[0] == 0 => b,
                _ => &code.body,
            };
            let n = args.first().copied().unwrap_or(0);
            let eval = |a: &[Arg]| -> Vec<i64> {
                a.iter()
                    .map(|a| match a {
                        Arg::Lit(i) => *i,
                        Arg::N(k) => n + k,
                    })
                    .collect()
            };
            let mut next = None;
            for s in steps {
                match s {
                    LStep::Call {
                        f: g,
                        args: a,
                        times,
                        ..
                    } => {
                        let a = eval(a);
                        for _ in 0..*times {
                            if let Outcome::Raise(r) = self.exec(p, *g, a.clone(), depth + 1)? {
                                return Ok(Outcome::Raise(r));
                            }
                        }
                    }
                    LStep::TailCall { f: g, args: a, .. } => next = Some((*g, eval(a))),
                    LStep::Return(v) => return Ok(Outcome::Return(v.clone())),
                    LStep::Raise(r) => return Ok(Outcome::Raise(r.clone())),
                    // Observable only through call_memory / call_time.
                    LStep::Allocate(_) | LStep::Advance(_) => {}
                }
            }
            match next {
                Some((g, a)) => {
                    f = g;
                    args = a;
                }
                None => return Ok(Outcome::Return(Val::Atom("ok".into()))),
            }
        }
    }

    fn limit(&self, message: String) -> RunError {
        RunError::Limit {
            file: self.sc.source.clone(),
            path: self.path(),
            message,
        }
    }
}
