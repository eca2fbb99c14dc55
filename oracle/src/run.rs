//! The scenario runner: plays a loaded scenario against a [`BreakpointEngine`], interpreting the
//! function bodies (calls, tail calls, returns, raises) and the processes' trace flags, and
//! records the observations. The engine only sees breakpoint hits, `trace_pattern` and
//! `trace_info`; everything else (what the code does) is the runner's, so every engine runs the
//! same program.

use crate::frames::Raise;
use crate::observe::{InfoObs, Observation, TraceMsg, What};
use crate::scenario::{Arg, EvalError, Feature, LOp, LStep, Loaded, Spec, Val};
use crate::target::{BreakpointEngine, Entry};
use bpspec_reference::{
    FlagSet, InfoItem, InfoKey, InfoValue, PatternError, PatternOp, Term, TraceSpec,
};
use serde_json::Value;
use std::fmt;

/// Bounds on one run: calls made in total, and nesting depth of non-tail calls.
pub const MAX_CALLS: u64 = 1_000_000;
pub const MAX_DEPTH: usize = 500;
/// In a scenario with match specs: at most this many function entries on a process's stack at
/// once (body calls and the tail calls of each, since every entry of a return-traced function
/// pushes a frame that stays until the chain returns). With up to 32 sessions' frames per
/// entry and a return_to frame per session and body call, it keeps the engines' stacks under
/// their bound (`MAX_STACK`, 65,536 frames). ERTS has no such bound (the stack grows).
pub const MAX_FRAMED_ENTRIES: usize = 1_500;

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

/// Features this runner can drive (beyond local + call_count): call_time and call_memory (with
/// returns, tail calls, exceptions, scheduling, the logical clock and allocation) and the
/// trace_info items that come with them, and global trace (remote calls go through the export
/// entry), match specs with return_trace / exception_trace (frames.rs), and
/// trace sessions (session_create/destroy, patterns, flags, trace_info and call messages per
/// session; sessions.rs), and meta trace (target/meta.rs). Match specs on meta breakpoints stay
/// unsupported. A feature runs only if both the engine and the runner have it.
pub fn runner_supports(feature: &Feature) -> bool {
    crate::target::timem_feature(feature)
        || matches!(
            feature,
            Feature::GlobalTrace
                | Feature::MatchSpec
                | Feature::GlobalMatchSpec
                | Feature::MetaTrace
                | Feature::CodeLoading
                | Feature::OnLoadPattern
        )
        || matches!(feature, Feature::ProcessFlag(f) if f == "arity" || f == "return_to")
        || *feature == Feature::Caller
        || crate::sessions::sessions_feature(feature)
}

/// A `trace_pattern` op's second and third arguments as the engine's: the op and the
/// [`TraceSpec`] (without the session).
fn engine_spec(spec: &Spec, flags: &crate::scenario::PatternFlags) -> (PatternOp, TraceSpec) {
    let pop = match spec {
        Spec::True | Spec::MatchSpec(_) => PatternOp::True,
        Spec::False => PatternOp::False,
        Spec::Pause => PatternOp::Pause,
        Spec::Restart => PatternOp::Restart,
    };
    let fl = FlagSet {
        local: flags.local,
        call_count: flags.call_count,
        call_time: flags.call_time,
        call_memory: flags.call_memory,
    };
    // An empty flag list is global trace (ERTS `erlang:trace_pattern/3`).
    let global = flags.global || (fl == FlagSet::default() && !flags.meta);
    let ts = if flags.meta && !flags.global {
        // `{meta, Pid}` (docs/scenario.md): the runner's meta tracer. (A match spec with meta
        // is refused at load: Feature::MetaMatchSpec.)
        TraceSpec::from(fl).meta(crate::target::meta_tracer())
    } else {
        let ms = match spec {
            Spec::MatchSpec(acts) => Some(crate::frames::match_spec(acts)),
            _ => None,
        };
        TraceSpec {
            flags: fl,
            global,
            ms,
            ..TraceSpec::default()
        }
    };
    (pop, ts)
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
    /// Per process, the bit set of sessions in which it has the `arity` flag: its call
    /// messages carry `{M, F, Arity}` instead of `{M, F, Args}`.
    arity: Vec<u64>,
    /// Per process, the bit set of sessions in which it has the `return_to` flag (passed to
    /// the engine by `set_return_to` whenever it changes).
    return_to: Vec<u64>,
    /// Per process: waiting for its next call, scheduled out (see [`Exec::rest`]).
    idle: Vec<bool>,
    /// The call depth of the last `raise` step (the exception unwinds depth + 1 body calls).
    raised_at: usize,
    /// The scenario's sessions and the engine's ids for them (sessions.rs).
    sessions: crate::sessions::SessionMap,
    /// Meta trace messages of the current call op, observed at its end.
    meta_pending: Vec<TraceMsg>,
    /// Function entries on the current call path (see [`MAX_FRAMED_ENTRIES`]).
    entries: usize,
    /// Does the scenario have match specs (so that entries push frames)?
    framed: bool,
    /// Per process, the receive function (and its arguments) it waits in, if any.
    waiting: Vec<Option<(usize, Vec<Val>)>>,
}

enum Outcome {
    Return(Val),
    /// `error:Reason`.
    Raise(Val),
    /// The call op's call of a receive function entered it and waits there (a `resume` op
    /// runs its body).
    Wait,
}

/// Run `sc` on `engine`, under the watchdog (`bpspec_reference::watchdog::arm`: a run that
/// hangs ends the process naming the scenario and the engine).
pub fn run(sc: &Loaded, engine: &mut dyn BreakpointEngine) -> Result<Vec<Observation>, RunError> {
    let _watchdog = bpspec_reference::watchdog::arm(&format!(
        "oracle scenario {} on {}",
        sc.scenario.name,
        engine.name()
    ));
    if let Some(e) = unsupported(sc, engine) {
        return Err(e);
    }
    let initial = |flag: &str| -> Vec<u64> {
        sc.initial_flags
            .iter()
            .map(|m| {
                m.iter()
                    .filter(|(_, fl)| fl.iter().any(|f| f == flag))
                    .fold(0u64, |acc, (s, _)| acc | (1 << s))
            })
            .collect()
    };
    let (traced, arity, return_to) = (initial("call"), initial("arity"), initial("return_to"));
    let exported: Vec<usize> = (0..sc.code.len())
        .filter(|&f| sc.code[f].exported)
        .collect();
    engine.set_exports(&exported);
    for (p, &rt) in return_to.iter().enumerate() {
        if rt != 0 {
            engine.set_return_to(p as u64 + 1, traced[p], rt);
        }
    }
    let mut ex = Exec {
        sc,
        engine,
        obs: Vec::new(),
        calls: 0,
        op: 0,
        traced,
        arity,
        return_to,
        idle: vec![false; sc.processes.len()],
        raised_at: 0,
        entries: 0,
        framed: sc.features.contains_key(&Feature::MatchSpec)
            || sc.features.contains_key(&Feature::GlobalMatchSpec)
            || sc
                .features
                .contains_key(&Feature::ProcessFlag("return_to".into())),
        sessions: crate::sessions::SessionMap::new(sc),
        meta_pending: Vec::new(),
        waiting: vec![None; sc.processes.len()],
    };
    for (i, op) in sc.ops.iter().enumerate() {
        ex.op = i;
        ex.step(op)?;
    }
    Ok(ex.obs)
}

/// `trace_pattern`'s badarg as an observation: `{"badarg": Cause}` with the cause ERTS puts in
/// the exception's `error_info` (measured on OTP 25 and 29.1.2, the same on both): `badopt`
/// when `global` comes with any other flag, `call_count` for a match spec with only counters
/// (also with `call_time` or `call_memory` alone); `"badarg"` for any other badarg.
fn badarg_json(spec: &Spec, flags: &crate::scenario::PatternFlags) -> Value {
    let others =
        flags.local || flags.meta || flags.call_count || flags.call_time || flags.call_memory;
    let cause = if flags.global && others {
        "badopt"
    } else if matches!(spec, Spec::MatchSpec(_))
        && !flags.global
        && !flags.local
        && !flags.meta
        && others
    {
        "call_count"
    } else {
        return Value::from("badarg");
    };
    serde_json::json!({ "badarg": cause })
}

/// A `trace_info` term as an observation value (docs/scenario.md, "Observations"): call_time
/// rows `{"process", "count", "time"}` (microseconds of the logical clock), call_memory rows
/// `{"process", "count", "words"}`, each sorted by process; `all` as `[[Item, Value], ...]`.
fn term_json(sc: &Loaded, key: &str, t: &Term) -> Value {
    let name = |pid: u64| Value::from(sc.processes[(pid - 1) as usize].clone());
    match t {
        Term::Atom("false") => Value::Bool(false),
        // Only `trace_info(on_load, _)` answers `true` (a counter flag is on).
        Term::Atom("true") => Value::Bool(true),
        Term::Atom(a) => Value::from(*a),
        Term::Name(a) => Value::from(a.clone()),
        Term::Int(n) => Value::from(*n),
        // The meta tracer (docs/scenario.md: `meta` shows as "meta").
        Term::Pid(p) if *p == crate::target::META_PID => Value::from("meta"),
        Term::Pid(p) => name(*p),
        Term::List(v) if key == "all" => Value::Array(
            v.iter()
                .map(|kv| match kv {
                    Term::Tuple(p) if p.len() == 2 => {
                        let Term::Atom(k) = p[0] else {
                            panic!("all: key {}", p[0])
                        };
                        Value::Array(vec![Value::from(k), term_json(sc, k, &p[1])])
                    }
                    other => panic!("all: item {other}"),
                })
                .collect(),
        ),
        Term::List(_) if key == "match_spec" => {
            crate::frames::ms_json(t).unwrap_or_else(|| panic!("match_spec: {t}"))
        }
        Term::List(v) if key == "call_time" || key == "call_memory" => {
            let mut rows: Vec<(String, Value)> = v
                .iter()
                .map(|r| match r {
                    Term::Tuple(x) => {
                        let (Term::Pid(p), Term::Int(c)) = (&x[0], &x[1]) else {
                            panic!("{key}: row {r}")
                        };
                        let ints: Vec<i64> = x[2..]
                            .iter()
                            .map(|t| match t {
                                Term::Int(i) => *i,
                                other => panic!("{key}: {other}"),
                            })
                            .collect();
                        let mut o = serde_json::Map::new();
                        o.insert("process".into(), name(*p));
                        o.insert("count".into(), Value::from(*c));
                        if key == "call_time" {
                            o.insert("time".into(), Value::from(ints[0] * 1_000_000 + ints[1]));
                        } else {
                            o.insert("words".into(), Value::from(ints[0]));
                        }
                        (sc.processes[(*p - 1) as usize].clone(), Value::Object(o))
                    }
                    other => panic!("{key}: row {other}"),
                })
                .collect();
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Array(rows.into_iter().map(|r| r.1).collect())
        }
        Term::List(v) => Value::Array(v.iter().map(|x| term_json(sc, key, x)).collect()),
        Term::Tuple(_) => Value::from(t.to_string()),
    }
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

    /// The observation of a `trace_pattern` op (its count or badarg), then the engine's at-rest
    /// check.
    fn pattern_result(
        &mut self,
        r: Result<usize, PatternError>,
        spec: &Spec,
        flags: &crate::scenario::PatternFlags,
    ) -> Result<(), RunError> {
        let r = match r {
            Ok(n) => Value::from(n as u64),
            Err(PatternError::BadArg(_)) => badarg_json(spec, flags),
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
        Ok(())
    }

    fn step(&mut self, op: &LOp) -> Result<(), RunError> {
        match op {
            LOp::TracePattern {
                session,
                pattern,
                spec,
                flags,
            } => {
                // The engine's id for the scenario's session (sessions.rs).
                let session = &self.sessions.id(*session);
                let (pop, ts) = engine_spec(spec, flags);
                let r = self
                    .engine
                    .trace_pattern(pattern, pop, &ts.session(*session));
                self.pattern_result(r, spec, flags)?;
            }
            LOp::OnLoadPattern {
                session,
                spec,
                flags,
            } => {
                // The session's pattern for later loads (spec/src/code.rs CL8): 0 or badarg.
                let session = &self.sessions.id(*session);
                let (pop, ts) = engine_spec(spec, flags);
                let r = self.engine.on_load_pattern(pop, &ts.session(*session));
                self.pattern_result(r, spec, flags)?;
            }
            LOp::Call {
                process,
                f,
                args,
                times,
            } => {
                self.check_alive(*process)?;
                self.wake(*process);
                let mut last = None;
                for _ in 0..*times {
                    if !self.engine.is_loaded(*f) {
                        // A deleted module (spec/src/code.rs CL3): `error:undef` before any
                        // entry, caught by the driver's `try`; nothing unwinds.
                        last = Some(Outcome::Raise(Val::Atom("undef".into())));
                        continue;
                    }
                    // The driver calls `M:F(Args)`: remote, through the export entry.
                    let o = self.exec(*process, *f, args.clone(), 0, true, false, false)?;
                    self.caught_at_top(*process, &o);
                    if let Outcome::Wait = o {
                        // spec/src/code.rs CL6: it stays in this version of the function.
                        self.engine.wait_in(*process as u64 + 1, *f);
                        self.waiting[*process] = Some((*f, args.clone()));
                    }
                    last = Some(o);
                }
                self.end_call(*process, last.expect("times >= 1"));
            }
            LOp::Resume(process) => {
                let p = *process;
                self.check_alive(p)?;
                let (f, args) = self.waiting[p]
                    .take()
                    .expect("validated: the process waits");
                let old = self
                    .engine
                    .resume(p as u64 + 1)
                    .expect("checked alive: a waiting process that was not killed");
                self.wake(p);
                let o = self.exec(p, f, args, 0, true, old, true)?;
                self.caught_at_top(p, &o);
                self.end_call(p, o);
            }
            LOp::TraceInfo { session, mfa, item } => {
                let session = &self.sessions.id(*session);
                let value = match item.as_str() {
                    "traced" if self.sc.features.contains_key(&Feature::GlobalTrace) => {
                        let t = self.engine.trace_info_term(*session, mfa, InfoKey::Traced);
                        match &t {
                            Term::Tuple(p) if p.len() == 2 && p[0] == Term::Atom("traced") => {
                                term_json(self.sc, "traced", &p[1])
                            }
                            // `undefined` comes bare.
                            _ => term_json(self.sc, "traced", &t),
                        }
                    }
                    "traced" => info_json(&self.engine.trace_info(*session, mfa, InfoItem::Traced)),
                    "call_count" => {
                        info_json(&self.engine.trace_info(*session, mfa, InfoItem::CallCount))
                    }
                    other => {
                        let key = InfoKey::parse(other).expect("item validated by the loader");
                        let t = self.engine.trace_info_term(*session, mfa, key);
                        let v = match &t {
                            Term::Tuple(p) if p.len() == 2 && p[0] == Term::Atom(key.atom()) => {
                                &p[1]
                            }
                            _ => panic!("trace_info({mfa}, {other}) gave {t}"),
                        };
                        term_json(self.sc, other, v)
                    }
                };
                self.push(What::TraceInfo(InfoObs {
                    item: item.clone(),
                    value,
                }));
            }
            LOp::OnLoadInfo { session, item } => {
                // The session's on_load pattern (spec/src/code.rs CL8): `{Item, Value}`.
                let session = &self.sessions.id(*session);
                let key = InfoKey::parse(item).expect("item validated by the loader");
                let t = self.engine.on_load_info(*session, key);
                let value = match &t {
                    Term::Tuple(p) if p.len() == 2 && p[0] == Term::Atom(key.atom()) => {
                        term_json(self.sc, item, &p[1])
                    }
                    _ => panic!("trace_info(on_load, {item}) gave {t}"),
                };
                self.push(What::TraceInfo(InfoObs {
                    item: item.clone(),
                    value,
                }));
            }
            LOp::TraceFlags {
                process,
                session,
                on,
                flags,
            } => {
                self.check_alive(*process)?;
                let session = &self.sessions.id(*session);
                let before = self.return_to[*process];
                for (flag, bits) in [
                    ("call", &mut self.traced),
                    ("arity", &mut self.arity),
                    ("return_to", &mut self.return_to),
                ] {
                    if flags.iter().any(|f| f == flag) {
                        if *on {
                            bits[*process] |= 1 << session;
                        } else {
                            bits[*process] &= !(1 << session);
                        }
                    }
                }
                if self.return_to[*process] != before {
                    let p = *process;
                    self.engine
                        .set_return_to(p as u64 + 1, self.traced[p], self.return_to[p]);
                }
                self.push(What::TraceFlags(Value::from(1)));
            }
            // Observable through call_time only; the loader already refused calls by a
            // scheduled-out process.
            // Between its calls a process already is scheduled out (`rest`), as on ERTS, where
            // the driver turns these ops into nops.
            LOp::ScheduleOut(p) => self.rest(*p),
            LOp::ScheduleIn(_) => {}
            LOp::Code(kind, module) => {
                let r = self.engine.code_op(*kind, module);
                self.push(What::Code(Value::Bool(r)));
            }
            LOp::SessionCreate(s) => {
                if let Err(message) = self.sessions.create(self.sc, self.engine, *s) {
                    return Err(RunError::Fault {
                        file: self.sc.source.clone(),
                        path: self.path(),
                        message,
                    });
                }
            }
            LOp::SessionDestroy(s) => {
                let id = self.sessions.id(*s);
                self.arity.iter_mut().for_each(|a| *a &= !(1 << id));
                self.return_to.iter_mut().for_each(|a| *a &= !(1 << id));
                self.sessions.destroy(self.engine, *s, &mut self.traced);
                if let Err(m) = self.engine.check_at_rest() {
                    return Err(RunError::Fault {
                        file: self.sc.source.clone(),
                        path: self.path(),
                        message: m,
                    });
                }
            }
        }
        Ok(())
    }

    /// After its call op, process `p` waits in `receive` for the next one: on ERTS it is
    /// scheduled out then (the driver waits for that), which charges the pending time of the
    /// function it is charged to (after an exception: the raiser, whose return frame was
    /// skipped) and can create a count-0 row. Idempotent.
    fn rest(&mut self, p: usize) {
        if !self.idle[p] {
            self.engine.schedule(p as u64 + 1, self.traced[p], false);
            self.idle[p] = true;
        }
    }

    /// A purge killed process `p` (spec/src/code.rs CL6): naming it again is a contradiction.
    fn check_alive(&self, p: usize) -> Result<(), RunError> {
        if self.engine.killed(p as u64 + 1) {
            return Err(self.limit(format!(
                "process {} was killed by a purge of the code it waited in",
                self.sc.processes[p]
            )));
        }
        Ok(())
    }

    /// An exception of a call op's call is caught at the top (the driver's `try`): every body
    /// call unwinds.
    fn caught_at_top(&mut self, p: usize, o: &Outcome) {
        if let Outcome::Raise(r) = o {
            let e = Raise::error(crate::frames::val_term(r), self.raised_at + 1);
            let msgs = self.engine.raise(p as u64 + 1, self.traced[p], &e);
            self.frame_msgs(p, msgs);
        }
    }

    /// The end of a call op (or a resume): the process waits for its next call, the meta
    /// messages, then the last call's outcome.
    fn end_call(&mut self, p: usize, last: Outcome) {
        self.rest(p);
        for m in std::mem::take(&mut self.meta_pending) {
            self.push(What::Trace(m));
        }
        match last {
            Outcome::Return(v) => self.push(What::Return(v.to_json())),
            Outcome::Raise(r) => self.push(What::Raise(r.to_json())),
            Outcome::Wait => self.push(What::Waiting(true)),
        }
    }

    /// Process `p` gets its next call: scheduled in (its time baselines restart now).
    fn wake(&mut self, p: usize) {
        if self.idle[p] {
            self.engine.schedule(p as u64 + 1, self.traced[p], true);
            self.idle[p] = false;
        }
    }

    /// Process `p` calls function `f` with `args`: hit the breakpoint, then run the body.
    /// Tail calls loop here (no Rust recursion), non-tail calls recurse up to MAX_DEPTH.
    /// `old`: the call is made in an old version of `f`'s module (a local call there, or the
    /// resumed body of a receive function whose version was replaced): no breakpoint is hit
    /// (spec/src/code.rs CL6). `resume`: `f` was entered already (a receive function); run its
    /// body.
    #[allow(clippy::too_many_arguments)]
    fn exec(
        &mut self,
        p: usize,
        f: usize,
        args: Vec<Val>,
        depth: usize,
        remote: bool,
        old: bool,
        resume: bool,
    ) -> Result<Outcome, RunError> {
        // The entries of this call (and its tail calls) leave the stack with it.
        let before = self.entries;
        let r = self.exec_entries(p, f, args, depth, remote, old, resume);
        self.entries = before;
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_entries(
        &mut self,
        p: usize,
        mut f: usize,
        mut args: Vec<Val>,
        depth: usize,
        mut remote: bool,
        mut old: bool,
        mut resume: bool,
    ) -> Result<Outcome, RunError> {
        if depth > MAX_DEPTH {
            return Err(self.limit(format!("calls nest deeper than {MAX_DEPTH}")));
        }
        let pid = p as u64 + 1;
        let mut tail = false;
        loop {
            self.calls += 1;
            if self.calls > MAX_CALLS {
                return Err(self.limit(format!(
                    "more than {MAX_CALLS} calls (does the scenario terminate?)"
                )));
            }
            self.entries += 1;
            if self.framed && self.entries > MAX_FRAMED_ENTRIES {
                return Err(self.limit(format!(
                    "more than {MAX_FRAMED_ENTRIES} function entries on the stack with match specs or return_to (each keeps its trace frames until it returns)"
                )));
            }
            let how = Entry {
                tail,
                remote: remote && self.sc.code[f].exported,
                old,
            };
            // A resumed receive function was entered by its call op already.
            let sessions = if resume {
                Vec::new()
            } else {
                self.engine.enter(f, pid, self.traced[p], how)
            };
            tail = true;
            // Meta messages go to their own receiver; they are observed after the call op's
            // other messages (ERTS orders messages per receiver only).
            for (mpid, mf) in self.engine.take_meta() {
                let m = &self.sc.funcs[mf];
                self.meta_pending.push(TraceMsg {
                    session: "meta".into(),
                    process: self.sc.processes[(mpid - 1) as usize].clone(),
                    event: "call".into(),
                    mfa: format!("{}:{}/{}", m.module, m.name, m.arity),
                    args: Value::Array(args.iter().map(Val::to_json).collect()),
                    value: None,
                });
            }
            let callers = self.engine.callers(f, pid, &sessions);
            assert_eq!(
                callers.len(),
                sessions.len(),
                "{}: one caller entry per call message",
                self.engine.name()
            );
            for (s, caller) in sessions.into_iter().zip(callers) {
                assert!(
                    self.traced[p] & (1 << s) != 0,
                    "{}: trace message in session {s} for a process not traced there",
                    self.engine.name()
                );
                let mfa = &self.sc.funcs[f];
                // ERTS's `{M, F, Args}`, or `{M, F, Arity}` with the `arity` flag.
                let args = if self.arity[p] & (1 << s) != 0 {
                    Value::from(mfa.arity)
                } else {
                    Value::Array(args.iter().map(Val::to_json).collect())
                };
                self.push(What::Trace(TraceMsg {
                    session: self.sessions.name(self.sc, s).to_string(),
                    process: self.sc.processes[p].clone(),
                    event: "call".into(),
                    mfa: format!("{}:{}/{}", mfa.module, mfa.name, mfa.arity),
                    args,
                    // `{message, {caller}}`: the fifth element, where the call returns to.
                    value: caller.map(|c| Value::from(crate::frames::mfa_name(&self.sc.funcs, c))),
                }));
            }
            // The code of the version the call runs in (spec/src/code.rs CL7).
            let variant = match &self.sc.changed {
                Some(_) => self.engine.variant(f, pid, old),
                None => 0,
            };
            let code = self.sc.code_of(f, variant);
            if code.receive && !resume {
                // Only call ops call it (validated): the process waits here.
                return Ok(Outcome::Wait);
            }
            resume = false;
            assert_eq!(
                args.len(),
                code.arity as usize,
                "arity checked by the loader"
            );
            let steps = match &code.base {
                Some(b) if args[code.base_arg as usize - 1] == code.base_match => b,
                _ => &code.body,
            };
            // An expression that raises (badarith) raises in this function's body.
            let eval = |a: &[Arg]| -> Result<Result<Vec<Val>, Val>, String> {
                let mut out = Vec::with_capacity(a.len());
                for x in a {
                    match x.eval(&args) {
                        Ok(v) => out.push(v),
                        Err(EvalError::Raise(r)) => return Ok(Err(r)),
                        Err(EvalError::Unsupported(m)) => return Err(m),
                    }
                }
                Ok(Ok(out))
            };
            let mut next = None;
            for s in steps {
                let one =
                    |a: &Arg| eval(std::slice::from_ref(a)).map(|r| r.map(|mut v| v.remove(0)));
                let value = match s {
                    LStep::Call { args: a, .. } | LStep::TailCall { args: a, .. } => {
                        eval(a).map_err(|m| self.limit(m))?
                    }
                    LStep::Return(a) | LStep::Raise(a) => {
                        one(a).map_err(|m| self.limit(m))?.map(|v| vec![v])
                    }
                    LStep::Allocate(_) | LStep::Advance(_) => Ok(vec![]),
                };
                // A remote call into a deleted module raises `error:undef` here, before any
                // entry (spec/src/code.rs CL3), as an argument that fails does.
                let value = match (s, value) {
                    (
                        LStep::Call {
                            f: g, remote: true, ..
                        }
                        | LStep::TailCall {
                            f: g, remote: true, ..
                        },
                        Ok(_),
                    ) if !self.engine.is_loaded(*g) => Err(Val::Atom("undef".into())),
                    (_, v) => v,
                };
                let a = match value {
                    Ok(a) => a,
                    // `catch g(Args)` catches the arguments' exception too: nothing was
                    // entered, so nothing unwinds, and every repetition fails the same way.
                    Err(_) if matches!(s, LStep::Call { catch: true, .. }) => continue,
                    Err(reason) => {
                        self.raised_at = depth;
                        return Ok(Outcome::Raise(reason));
                    }
                };
                match s {
                    LStep::Call {
                        f: g,
                        remote: rem,
                        times,
                        catch,
                        ..
                    } => {
                        for _ in 0..*times {
                            if let Outcome::Raise(r) =
                                self.exec(p, *g, a.clone(), depth + 1, *rem, old && !*rem, false)?
                            {
                                if !*catch {
                                    return Ok(Outcome::Raise(r));
                                }
                                // Caught here: the frames from the raiser up to the callee
                                // unwind (exception_from for traced ones, call_time frames
                                // skipped), and this function goes on.
                                let through = self.raised_at - depth;
                                let e = Raise::error(crate::frames::val_term(&r), through);
                                let msgs = self.engine.raise(pid, self.traced[p], &e);
                                self.frame_msgs(p, msgs);
                            }
                        }
                    }
                    LStep::TailCall {
                        f: g, remote: r, ..
                    } => next = Some((*g, a, *r)),
                    LStep::Return(_) => {
                        let v = a.into_iter().next().expect("one value");
                        let msgs = self.engine.ret_value(
                            pid,
                            self.traced[p],
                            &crate::frames::val_term(&v),
                        );
                        self.frame_msgs(p, msgs);
                        return Ok(Outcome::Return(v));
                    }
                    LStep::Raise(_) => {
                        self.raised_at = depth;
                        return Ok(Outcome::Raise(a.into_iter().next().expect("one value")));
                    }
                    // Observable only through call_memory / call_time.
                    LStep::Allocate(w) => self.engine.alloc(pid, self.traced[p], *w),
                    LStep::Advance(dt) => self.engine.advance(*dt),
                }
            }
            match next {
                Some((g, a, r)) => {
                    f = g;
                    args = a;
                    remote = r;
                    // A local tail call stays in the version it is made in.
                    old = old && !r;
                }
                None => {
                    let ok = Val::Atom("ok".into());
                    let msgs =
                        self.engine
                            .ret_value(pid, self.traced[p], &crate::frames::val_term(&ok));
                    self.frame_msgs(p, msgs);
                    return Ok(Outcome::Return(ok));
                }
            }
        }
    }

    /// The messages of trace frames (return_from / exception_from) as observations.
    fn frame_msgs(&mut self, p: usize, msgs: Vec<crate::frames::FrameMsg>) {
        for m in msgs {
            assert!(
                self.traced[p] & (1 << m.session) != 0,
                "{}: frame message in session {} for a process not traced there",
                self.engine.name(),
                m.session
            );
            let t = crate::frames::trace_msg(
                &self.sc.sessions[m.session as usize],
                &self.sc.processes[p],
                &self.sc.funcs,
                &m,
            );
            self.push(What::Trace(t));
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
