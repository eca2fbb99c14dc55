//! The scenario format (docs/scenario.md, docs/scenario.schema.json): the raw serde types, and
//! [`load`], which parses and validates a file into a [`Loaded`] scenario whose names are
//! resolved to indices. Every error names the file and either the line and column (JSON syntax
//! and types) or the JSON path (contradictions), and maps to exit code 2.

use bpspec_reference::{Mfa, Pattern};
pub use bpspec_spec::code::CodeOp;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The legacy session (id 0), which always exists.
pub const LEGACY: &str = "legacy";
/// Limits that keep every scenario small and every run finite.
pub const MAX_MODULES: usize = 16;
pub const MAX_FUNCTIONS: usize = 64;
pub const MAX_STEPS: usize = 64;
pub const MAX_TIMES: u32 = 10_000;
pub const MAX_OPS: usize = 10_000;
pub const MAX_PROCESSES: usize = 16;
/// Sessions besides the legacy one (the engine's session ids are bits of a u64).
pub const MAX_SESSIONS: usize = 31;
pub const MAX_ARITY: u32 = 8;

// ---------------------------------------------------------------------------------------------
// Raw format (what serde reads and writes).

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The lowest OTP release that has every feature used (defaults to what the features need).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_otp: Option<u32>,
    /// The newest OTP release whose behaviour `expect` records (none: every release from
    /// `requires_otp` on). A differential run on a newer release skips the scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_otp: Option<u32>,
    /// Set when bpspec knowingly differs from ERTS on this scenario; names the section of
    /// docs/deviations.md. The differential run then requires the two to *differ*.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_deviation: Option<String>,
    pub modules: Vec<Module>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessDecl>,
    pub ops: Vec<Op>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Vec<crate::observe::Observation>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Module {
    pub name: String,
    pub functions: Vec<Function>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Function {
    pub name: String,
    #[serde(default)]
    pub arity: u32,
    #[serde(default, skip_serializing_if = "is_false")]
    pub exported: bool,
    /// Runs when argument `base_arg` (default 1) is `base_match` (default 0); only with
    /// arity >= 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Vec<Step>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_arg: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_match: Option<serde_json::Value>,
    /// Runs otherwise (always, without `base`).
    #[serde(default)]
    pub body: Vec<Step>,
    /// The body runs after a `receive`: a call op leaves the process waiting in the function
    /// until a `resume` op (docs/scenario.md, "Code loading"). Exported, without `base`, and
    /// called by call ops only.
    #[serde(default, skip_serializing_if = "is_false")]
    pub receive: bool,
    /// The body in the module's second code, which a `load_changed` op loads (docs/scenario.md,
    /// "Code loading"; without it the second code has `body`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_body: Option<Vec<Step>>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One step of a body: exactly one of the kind keys (`call`, `tail_call`, `return`, `raise`,
/// `allocate`, `advance`), plus `args`/`times` for calls.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_call: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#return: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raise: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advance: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// A `call` step inside `catch`: an exception it raises stops there (`_ = (catch g(...))`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub catch: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessDecl {
    pub name: String,
    /// Per session, the process trace flags set at the start (e.g. `{"legacy": ["call"]}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub trace: BTreeMap<String, Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    TracePattern(TracePatternOp),
    Call(CallOp),
    TraceInfo(TraceInfoOp),
    TraceFlags(TraceFlagsOp),
    ScheduleOut(String),
    ScheduleIn(String),
    SessionCreate(String),
    SessionDestroy(String),
    /// `code:load_binary/3` of a new version of the module (the same code).
    Load(String),
    /// `code:load_binary/3` of a new version compiled from the second code (the functions'
    /// `changed_body`).
    LoadChanged(String),
    /// `code:delete/1`.
    Delete(String),
    /// `code:purge/1`.
    Purge(String),
    /// `code:soft_purge/1`.
    SoftPurge(String),
    /// The process waiting in a `receive` function gets its message and goes on.
    Resume(String),
}

fn legacy() -> String {
    LEGACY.to_string()
}
fn is_legacy(s: &str) -> bool {
    s == LEGACY
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracePatternOp {
    #[serde(default = "legacy", skip_serializing_if = "is_legacy")]
    pub session: String,
    /// `M:F/A` with `_` wildcards (or `{M,F,A}`).
    pub pattern: String,
    /// `true`, `false`, `"pause"`, `"restart"`, or a match spec `{"actions": [...]}`.
    pub spec: serde_json::Value,
    pub flags: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallOp {
    pub process: String,
    pub mfa: String,
    /// Erlang terms (docs/scenario.md, "Terms").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceInfoOp {
    #[serde(default = "legacy", skip_serializing_if = "is_legacy")]
    pub session: String,
    pub mfa: String,
    pub item: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceFlagsOp {
    pub process: String,
    #[serde(default = "legacy", skip_serializing_if = "is_legacy")]
    pub session: String,
    pub on: bool,
    pub flags: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Features beyond the baseline (local + call_count), with the OTP release that has them.

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    GlobalTrace,
    MetaTrace,
    CallTime,
    CallMemory,
    MatchSpec,
    Sessions,
    InfoItem(String),
    ProcessFlag(String),
    /// A match spec on global (export-entry) breakpoints.
    GlobalMatchSpec,
    /// A match spec on a meta breakpoint (meta match specs: not implemented anywhere).
    MetaMatchSpec,
    /// The match-spec action `{message, {caller}}`: call messages carry the caller.
    Caller,
    /// The ops `load`, `delete`, `purge` and `soft_purge` (spec/src/code.rs).
    CodeLoading,
    /// `trace_pattern` with the pattern `on_load`, and `trace_info` of `on_load`
    /// (spec/src/code.rs CL8).
    OnLoadPattern,
}

impl Feature {
    /// The first OTP release with this feature.
    pub fn otp(&self) -> u32 {
        match self {
            Feature::CallMemory => 26,
            Feature::InfoItem(i) if i == "call_memory" => 26,
            Feature::Sessions => 27,
            _ => 25,
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Feature::GlobalTrace => write!(f, "global call trace (flag global or no flags)"),
            Feature::MetaTrace => write!(f, "meta trace"),
            Feature::CallTime => write!(f, "call_time"),
            Feature::CallMemory => write!(f, "call_memory"),
            Feature::MatchSpec => write!(f, "match specs (return_trace, exception_trace)"),
            Feature::Sessions => write!(f, "trace sessions (session_create/destroy)"),
            Feature::InfoItem(i) => write!(f, "trace_info item {i}"),
            Feature::ProcessFlag(p) => write!(f, "process trace flag {p}"),
            Feature::GlobalMatchSpec => write!(f, "match specs on global breakpoints"),
            Feature::MetaMatchSpec => write!(f, "match specs on meta breakpoints"),
            Feature::Caller => write!(f, "the match-spec action {{message, {{caller}}}}"),
            Feature::CodeLoading => write!(f, "code loading (load, delete, purge, soft_purge)"),
            Feature::OnLoadPattern => write!(f, "the on_load trace pattern"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Loaded (validated, resolved) form.

/// An Erlang term of a scenario: an atom, an integer, a tuple or a proper list. In JSON an
/// integer is a number, an atom a string, a list an array, a tuple `{"tuple": [...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    Atom(String),
    Int(i64),
    Tuple(Vec<Val>),
    List(Vec<Val>),
}

impl Val {
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Val::Atom(a) => serde_json::Value::String(a.clone()),
            Val::Int(i) => serde_json::Value::from(*i),
            Val::Tuple(v) => {
                let mut o = serde_json::Map::new();
                o.insert(
                    "tuple".into(),
                    serde_json::Value::Array(v.iter().map(Val::to_json).collect()),
                );
                serde_json::Value::Object(o)
            }
            Val::List(v) => serde_json::Value::Array(v.iter().map(Val::to_json).collect()),
        }
    }

    /// The term in Erlang source syntax.
    pub fn erl(&self) -> String {
        let seq = |v: &[Val]| v.iter().map(Val::erl).collect::<Vec<_>>().join(", ");
        match self {
            Val::Atom(a) => format!("'{a}'"),
            Val::Int(i) => format!("({i})"),
            Val::Tuple(v) => format!("{{{}}}", seq(v)),
            Val::List(v) => format!("[{}]", seq(v)),
        }
    }

    /// The number of nodes (atoms, integers, tuples, lists) in the term.
    pub fn size(&self) -> usize {
        match self {
            Val::Atom(_) | Val::Int(_) => 1,
            Val::Tuple(v) | Val::List(v) => 1 + v.iter().map(Val::size).sum::<usize>(),
        }
    }
}

/// The largest term a scenario run builds (nodes); a larger one ends the run with exit 2.
pub const MAX_TERM_SIZE: usize = 10_000;
/// The deepest nesting of a literal or an expression in a scenario file.
pub const MAX_EXPR_DEPTH: usize = 16;

/// An expression: an argument of a call step, a returned value or a raise reason. `N(k)` is the
/// calling function's first argument plus `k` (`"n"`, `"n-1"`, `"n+2"` in `args`); `Param(i)`
/// is argument `i` (1-based, `{"arg": i}`); `Add` is `+`, `Cons` is `[H|T]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    Lit(i64),
    N(i64),
    Atom(String),
    Param(u32),
    Add(Box<Arg>, Box<Arg>),
    Cons(Box<Arg>, Box<Arg>),
    Tuple(Vec<Arg>),
    List(Vec<Arg>),
}

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// Erlang raises `error:Reason` (`badarith` for `+` on a non-integer).
    Raise(Val),
    /// Outside what bpspec models (an improper list, an integer beyond i64, a huge term).
    Unsupported(String),
}

impl Arg {
    /// The value of the expression with the function's arguments `params`.
    pub fn eval(&self, params: &[Val]) -> Result<Val, EvalError> {
        let int = |v: Val| match v {
            Val::Int(i) => Ok(i),
            _ => Err(EvalError::Raise(Val::Atom("badarith".into()))),
        };
        let add = |a: i64, b: i64| {
            a.checked_add(b).map(Val::Int).ok_or_else(|| {
                EvalError::Unsupported(format!("{a} + {b} is beyond 64-bit integers"))
            })
        };
        let v = match self {
            Arg::Lit(i) => Val::Int(*i),
            Arg::Atom(a) => Val::Atom(a.clone()),
            // `"n"` is `A1` itself (no addition, so any term); `"n+K"` is `A1 + K`.
            Arg::N(0) => params[0].clone(),
            Arg::N(k) => add(int(params[0].clone())?, *k)?,
            Arg::Param(i) => params[*i as usize - 1].clone(),
            Arg::Add(a, b) => {
                let (x, y) = (a.eval(params)?, b.eval(params)?);
                add(int(x)?, int(y)?)?
            }
            Arg::Cons(h, t) => {
                let (h, t) = (h.eval(params)?, t.eval(params)?);
                match t {
                    Val::List(mut l) => {
                        l.insert(0, h);
                        Val::List(l)
                    }
                    other => {
                        return Err(EvalError::Unsupported(format!(
                            "[_|{}] is an improper list (not modelled)",
                            other.erl()
                        )))
                    }
                }
            }
            Arg::Tuple(v) => {
                Val::Tuple(v.iter().map(|a| a.eval(params)).collect::<Result<_, _>>()?)
            }
            Arg::List(v) => Val::List(v.iter().map(|a| a.eval(params)).collect::<Result<_, _>>()?),
        };
        if v.size() > MAX_TERM_SIZE {
            return Err(EvalError::Unsupported(format!(
                "a term of more than {MAX_TERM_SIZE} nodes"
            )));
        }
        Ok(v)
    }

    /// The expression in Erlang source syntax (the parameters are `A1`, `A2`, ...).
    pub fn erl(&self) -> String {
        let seq = |v: &[Arg]| v.iter().map(Arg::erl).collect::<Vec<_>>().join(", ");
        match self {
            Arg::Lit(i) => format!("({i})"),
            Arg::N(0) => "A1".into(),
            Arg::N(k) => format!("(A1 + ({k}))"),
            Arg::Atom(a) => format!("'{a}'"),
            Arg::Param(i) => format!("A{i}"),
            Arg::Add(a, b) => format!("({} + {})", a.erl(), b.erl()),
            Arg::Cons(h, t) => format!("[{} | {}]", h.erl(), t.erl()),
            Arg::Tuple(v) => format!("{{{}}}", seq(v)),
            Arg::List(v) => format!("[{}]", seq(v)),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LStep {
    Call {
        f: usize,
        remote: bool,
        args: Vec<Arg>,
        times: u32,
        /// Inside `catch`: an exception (from the call or its arguments) ends here.
        catch: bool,
    },
    TailCall {
        f: usize,
        remote: bool,
        args: Vec<Arg>,
    },
    Return(Arg),
    Raise(Arg),
    Allocate(u64),
    Advance(u64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Code {
    pub arity: u32,
    pub exported: bool,
    /// `base` runs when argument `base_arg` (1-based) equals `base_match`.
    pub base_arg: u32,
    pub base_match: Val,
    pub base: Option<Vec<LStep>>,
    pub body: Vec<LStep>,
    /// The body runs after a `receive` (the process waits there for a `resume` op).
    pub receive: bool,
}

/// What `trace_pattern`'s second argument says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    True,
    False,
    Pause,
    Restart,
    /// `[{'_', [], Actions}]`.
    MatchSpec(Vec<String>),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatternFlags {
    pub local: bool,
    pub global: bool,
    pub meta: bool,
    pub call_count: bool,
    pub call_time: bool,
    pub call_memory: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LOp {
    TracePattern {
        session: u32,
        pattern: Pattern,
        spec: Spec,
        flags: PatternFlags,
    },
    Call {
        process: usize,
        f: usize,
        args: Vec<Val>,
        times: u32,
    },
    TraceInfo {
        session: u32,
        mfa: Mfa,
        item: String,
    },
    TraceFlags {
        process: usize,
        session: u32,
        on: bool,
        flags: Vec<String>,
    },
    ScheduleOut(usize),
    ScheduleIn(usize),
    SessionCreate(u32),
    SessionDestroy(u32),
    /// `trace_pattern(on_load, ...)`: the session's pattern for modules loaded later
    /// (spec/src/code.rs CL8; never `pause`/`restart`, never meta).
    OnLoadPattern {
        session: u32,
        spec: Spec,
        flags: PatternFlags,
    },
    /// `trace_info(on_load, Item)` (`trace:info(S, on_load, Item)`): the session's on_load
    /// pattern as ERTS's `trace_info_on_load` answers (spec/src/code.rs CL8, `OnLoad::info`).
    OnLoadInfo {
        session: u32,
        item: String,
    },
    /// load, delete, purge or soft_purge of a module (spec/src/code.rs).
    Code(CodeOp, String),
    /// The process waiting in a `receive` function goes on (spec/src/code.rs CL6).
    Resume(usize),
}

/// The largest `allocate` / `advance` of one step: with the runner's call limit the logical
/// clock and the allocation counter then stay far from overflowing an `i64`.
pub const MAX_STEP_AMOUNT: u64 = 1 << 24;

/// A validated scenario: the loaded functions (the ones the compiler keeps: exported or reachable
/// from an exported one, plus `module_info/0,1` in every module), bodies, sessions, processes.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub source: String,
    pub scenario: Scenario,
    pub funcs: Vec<Mfa>,
    pub code: Vec<Code>,
    /// Session names; index = session id (0 = legacy).
    pub sessions: Vec<String>,
    pub processes: Vec<String>,
    /// Initial process trace flags: per process, per session id, the flags.
    pub initial_flags: Vec<BTreeMap<u32, Vec<String>>>,
    pub ops: Vec<LOp>,
    /// Features beyond local + call_count, each with the JSON path of its first use.
    pub features: BTreeMap<Feature, String>,
    /// Every declared function in declaration order, with callees as indices into this list
    /// (what the Erlang driver compiles; the compiler then drops the unreachable ones).
    pub declared: Vec<(Mfa, Code)>,
    /// The second code (every `changed_body` in place of its `body`), loaded as a scenario of
    /// its own; its `funcs` are these `funcs`. `None` without a `changed_body`.
    pub changed: Option<Box<Loaded>>,
}

impl Loaded {
    /// Function `f`'s code in the module's first (`variant` 0) or second code.
    pub fn code_of(&self, f: usize, variant: u8) -> &Code {
        match (&self.changed, variant) {
            (Some(c), 1) => &c.code[f],
            _ => &self.code[f],
        }
    }

    /// The OTP release this scenario needs.
    pub fn requires_otp(&self) -> u32 {
        self.features
            .keys()
            .map(Feature::otp)
            .chain(self.scenario.requires_otp)
            .chain([25])
            .max()
            .unwrap_or(25)
    }

    /// The newest OTP release this scenario's `expect` is for (`max_otp`; `None`: no limit).
    pub fn max_otp(&self) -> Option<u32> {
        self.scenario.max_otp
    }
}

// ---------------------------------------------------------------------------------------------
// Errors.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    Io {
        file: String,
        message: String,
    },
    /// JSON syntax or type error, at a line and column (1-based).
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A contradiction, at a JSON path such as `$.ops[3].call.mfa`.
    Invalid {
        file: String,
        path: String,
        message: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { file, message } => write!(f, "{file}: cannot read: {message}"),
            LoadError::Syntax {
                file,
                line,
                column,
                message,
            } => write!(f, "{file}:{line}:{column}: {message}"),
            LoadError::Invalid {
                file,
                path,
                message,
            } => write!(f, "{file}: at {path}: {message}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Read and validate a scenario file.
pub fn load_file(path: &str) -> Result<Loaded, LoadError> {
    let bytes = std::fs::read(path).map_err(|e| LoadError::Io {
        file: path.to_string(),
        message: e.to_string(),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| LoadError::Io {
        file: path.to_string(),
        message: format!("not UTF-8: {e}"),
    })?;
    load(path, &text)
}

/// Parse and validate scenario text; `file` names it in errors.
impl Scenario {
    /// The scenario through the loader (as a file named after it would load): what the
    /// generators' scenarios go through before they run.
    pub fn loaded(&self) -> Result<Loaded, LoadError> {
        load(
            &self.name,
            &serde_json::to_string(self).expect("scenarios serialize"),
        )
    }
}

pub fn load(file: &str, text: &str) -> Result<Loaded, LoadError> {
    let sc: Scenario = serde_json::from_str(text).map_err(|e| LoadError::Syntax {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    validate(file, sc)
}

/// serde_json appends " at line L column C"; we print the position first instead.
pub(crate) fn strip_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some('a'..='z'))
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 64
}

/// Iterates `step` from `start` until it returns its argument, at most `rounds` + 1 times (the
/// loop's limit: below the fixpoint each round raises one of `rounds` entries of a finite
/// lattice); the least fixpoint.
fn least_fixpoint<T: PartialEq>(start: T, rounds: usize, step: impl Fn(&T) -> T) -> T {
    let mut cur = start;
    for _ in 0..=rounds {
        let next = step(&cur);
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

/// Every clause of `code`: the base clause, if any, then the body.
fn clauses_mut(code: &mut [Code]) -> impl Iterator<Item = &mut Vec<LStep>> {
    code.iter_mut()
        .flat_map(|c| c.base.iter_mut().chain(std::iter::once(&mut c.body)))
}

/// Cuts `clause` after its first local call (not in a catch) of a function that `never`
/// returns, and makes that call, last now, a tail call (`call_only` / `call_last`): the caller's
/// frame is gone, so `{caller}` and `return_to` name the function below it (seen on OTP 25 and
/// 29, `caller_message.json`). Whether it cut.
fn end_at_call_that_never_returns(clause: &mut Vec<LStep>, never: impl Fn(usize) -> bool) -> bool {
    let Some(k) = clause
        .iter()
        .position(|s| matches!(s, LStep::Call { f, remote: false, catch: false, .. } if never(*f)))
    else {
        return false;
    };
    clause.truncate(k + 1);
    if let Some(LStep::Call { f, args, .. }) = clause.pop() {
        clause.push(LStep::TailCall {
            f,
            remote: false,
            args,
        });
    }
    true
}

/// Parse `M:F/A` (or `F/A` for a local call inside `module`).
fn parse_mfa(s: &str, module: Option<&str>) -> Option<(Mfa, bool)> {
    let (m, rest, remote) = match s.split_once(':') {
        Some((m, rest)) => (m, rest, true),
        None => (module?, s, false),
    };
    let (f, a) = rest.split_once('/')?;
    let a: u32 = a.parse().ok().filter(|a| *a <= 255)?;
    (is_name(m) && is_name(f)).then(|| (Mfa::new(m, f, a), remote))
}

struct V<'a> {
    file: &'a str,
}

impl V<'_> {
    fn err<T>(&self, path: impl Into<String>, message: impl Into<String>) -> Result<T, LoadError> {
        Err(LoadError::Invalid {
            file: self.file.to_string(),
            path: path.into(),
            message: message.into(),
        })
    }

    /// A call of `mfa` with `given` arguments, whose list is at `path`: `given` must be its arity.
    fn arity(&self, path: String, mfa: &Mfa, given: usize) -> Result<(), LoadError> {
        if given != mfa.arity as usize {
            return self.err(
                path,
                format!("{mfa} takes {} arguments, {given} given", mfa.arity),
            );
        }
        Ok(())
    }

    /// The `times` of a call at `path`: 1 when absent, else it must be in 1..=MAX_TIMES.
    fn times(&self, path: String, times: Option<u32>) -> Result<u32, LoadError> {
        let times = times.unwrap_or(1);
        if times == 0 || times > MAX_TIMES {
            return self.err(path, format!("times must be in 1..={MAX_TIMES}"));
        }
        Ok(times)
    }
}

fn validate(file: &str, sc: Scenario) -> Result<Loaded, LoadError> {
    let v = V { file };
    let mut features: BTreeMap<Feature, String> = BTreeMap::new();
    let mut feature = |f: Feature, path: String| {
        features.entry(f).or_insert(path);
    };
    if let Some(r) = sc.requires_otp {
        if !(17..=99).contains(&r) {
            return v.err("$.requires_otp", format!("{r} is not an OTP release"));
        }
    }
    if sc.modules.len() > MAX_MODULES {
        return v.err("$.modules", format!("more than {MAX_MODULES} modules"));
    }
    // Declared functions, in order; module_info/0,1 are added by the compiler.
    let mut declared: Vec<(Mfa, String)> = Vec::new();
    let mut seen_mod = BTreeSet::new();
    let mut nfuncs = 0;
    for (mi, m) in sc.modules.iter().enumerate() {
        let mp = format!("$.modules[{mi}]");
        if !is_name(&m.name) {
            return v.err(
                format!("{mp}.name"),
                format!(
                    "{:?} is not a module name ([a-z][A-Za-z0-9_]*, at most 64 characters)",
                    m.name
                ),
            );
        }
        if !seen_mod.insert(m.name.clone()) {
            return v.err(
                format!("{mp}.name"),
                format!("module {} declared twice", m.name),
            );
        }
        for (fi, f) in m.functions.iter().enumerate() {
            let fp = format!("{mp}.functions[{fi}]");
            nfuncs += 1;
            if nfuncs > MAX_FUNCTIONS {
                return v.err(fp, format!("more than {MAX_FUNCTIONS} functions"));
            }
            if !is_name(&f.name) {
                return v.err(
                    format!("{fp}.name"),
                    format!("{:?} is not a function name", f.name),
                );
            }
            if f.arity > MAX_ARITY {
                return v.err(
                    format!("{fp}.arity"),
                    format!("arity {} above {MAX_ARITY}", f.arity),
                );
            }
            if f.name == "module_info" && f.arity <= 1 {
                return v.err(
                    format!("{fp}.name"),
                    "module_info/0 and module_info/1 are generated by the compiler in every module",
                );
            }
            let mfa = Mfa::new(&m.name, &f.name, f.arity);
            if declared.iter().any(|(d, _)| *d == mfa) {
                return v.err(
                    format!("{fp}.name"),
                    format!("function {mfa} declared twice"),
                );
            }
            declared.push((mfa, fp));
        }
    }
    let declared_index = |mfa: &Mfa| declared.iter().position(|(d, _)| d == mfa);
    // Resolve bodies against declared functions.
    let mut dcode: Vec<Code> = Vec::new();
    for (mi, m) in sc.modules.iter().enumerate() {
        for (fi, f) in m.functions.iter().enumerate() {
            let fp = format!("$.modules[{mi}].functions[{fi}]");
            if f.base.is_some() && f.arity == 0 {
                return v.err(
                    format!("{fp}.base"),
                    "base runs when an argument matches base_match, so the function needs arity >= 1",
                );
            }
            if f.base.is_none() && (f.base_arg.is_some() || f.base_match.is_some()) {
                return v.err(
                    fp.clone(),
                    "base_arg and base_match belong to a function with base",
                );
            }
            let base_arg = f.base_arg.unwrap_or(1);
            if !(1..=f.arity.max(1)).contains(&base_arg) {
                return v.err(
                    format!("{fp}.base_arg"),
                    format!("an argument number in 1..={}", f.arity.max(1)),
                );
            }
            let base_match = match &f.base_match {
                Some(j) => literal(&v, j, &format!("{fp}.base_match"), 0)?,
                None => Val::Int(0),
            };
            let steps = |list: &[Step], lp: String| -> Result<Vec<LStep>, LoadError> {
                if list.len() > MAX_STEPS {
                    return v.err(lp, format!("more than {MAX_STEPS} steps"));
                }
                let mut out = Vec::new();
                for (si, s) in list.iter().enumerate() {
                    let sp = format!("{lp}[{si}]");
                    let kinds = [
                        s.call.is_some(),
                        s.tail_call.is_some(),
                        s.r#return.is_some(),
                        s.raise.is_some(),
                        s.allocate.is_some(),
                        s.advance.is_some(),
                    ];
                    let n = kinds.iter().filter(|k| **k).count();
                    if n != 1 {
                        return v.err(sp, format!("a step has exactly one of call, tail_call, return, raise, allocate, advance (found {n})"));
                    }
                    let is_call = s.call.is_some() || s.tail_call.is_some();
                    if !is_call && (!s.args.is_empty() || s.times.is_some()) {
                        return v.err(sp, "args and times belong to call steps");
                    }
                    if s.catch && s.call.is_none() {
                        return v.err(format!("{sp}.catch"), "catch belongs to call steps");
                    }
                    if s.tail_call.is_some() && s.times.is_some() {
                        return v.err(format!("{sp}.times"), "a tail call has no times");
                    }
                    let terminal =
                        s.tail_call.is_some() || s.r#return.is_some() || s.raise.is_some();
                    if terminal && si + 1 != list.len() {
                        return v.err(sp, "tail_call, return and raise must be the last step");
                    }
                    let ls = if let Some(target) = s.call.as_ref().or(s.tail_call.as_ref()) {
                        let key = if s.call.is_some() {
                            "call"
                        } else {
                            "tail_call"
                        };
                        let Some((mfa, remote)) = parse_mfa(target, Some(&m.name)) else {
                            return v.err(
                                format!("{sp}.{key}"),
                                format!("{target:?} is not F/A (local) or M:F/A (remote)"),
                            );
                        };
                        let Some(callee) = declared_index(&mfa) else {
                            return v.err(
                                format!("{sp}.{key}"),
                                format!("{mfa} is not declared in the scenario"),
                            );
                        };
                        if remote
                            && !sc
                                .modules
                                .iter()
                                .flat_map(|mm| mm.functions.iter().map(move |ff| (mm, ff)))
                                .any(|(mm, ff)| {
                                    mm.name == mfa.module
                                        && ff.name == mfa.name
                                        && ff.arity == mfa.arity
                                        && ff.exported
                                })
                        {
                            return v.err(format!("{sp}.{key}"), format!("remote call to {mfa}, which is not exported (would raise undef)"));
                        }
                        if !remote && mfa.module != m.name {
                            return v
                                .err(format!("{sp}.{key}"), "a local call stays in its module");
                        }
                        v.arity(format!("{sp}.args"), &mfa, s.args.len())?;
                        let mut args = Vec::new();
                        for (ai, a) in s.args.iter().enumerate() {
                            let ap = format!("{sp}.args[{ai}]");
                            args.push(expr(&v, a, &ap, true, f.arity, 0)?);
                        }
                        let times = v.times(format!("{sp}.times"), s.times)?;
                        if s.call.is_some() {
                            LStep::Call {
                                f: callee,
                                remote,
                                args,
                                times,
                                catch: s.catch,
                            }
                        } else {
                            LStep::TailCall {
                                f: callee,
                                remote,
                                args,
                            }
                        }
                    } else if let Some(r) = &s.r#return {
                        LStep::Return(expr(&v, r, &format!("{sp}.return"), false, f.arity, 0)?)
                    } else if let Some(r) = &s.raise {
                        LStep::Raise(expr(&v, r, &format!("{sp}.raise"), false, f.arity, 0)?)
                    } else if let Some(w) = s.allocate {
                        if w > MAX_STEP_AMOUNT {
                            return v.err(
                                format!("{sp}.allocate"),
                                format!("{w} words in one step (at most {MAX_STEP_AMOUNT})"),
                            );
                        }
                        LStep::Allocate(w)
                    } else {
                        let dt = s.advance.unwrap_or(0);
                        if dt > MAX_STEP_AMOUNT {
                            return v.err(
                                format!("{sp}.advance"),
                                format!(
                                    "{dt} microseconds in one step (at most {MAX_STEP_AMOUNT})"
                                ),
                            );
                        }
                        LStep::Advance(dt)
                    };
                    out.push(ls);
                }
                Ok(out)
            };
            let base = match &f.base {
                Some(b) => Some(steps(b, format!("{fp}.base"))?),
                None => None,
            };
            let body = steps(&f.body, format!("{fp}.body"))?;
            if f.receive {
                if !f.exported || f.base.is_some() {
                    return v.err(
                        format!("{fp}.receive"),
                        "a function with receive must be exported and have no base (call ops call it)",
                    );
                }
                feature(Feature::CodeLoading, format!("{fp}.receive"));
            }
            dcode.push(Code {
                arity: f.arity,
                exported: f.exported,
                base_arg,
                base_match,
                base,
                body,
                receive: f.receive,
            });
        }
    }
    // A process waits in a receive function only as the call op's own call (the runner and the
    // driver resume it there): no step calls one.
    for (i, c) in dcode.iter().enumerate() {
        for (key, steps) in [("base", c.base.as_deref()), ("body", Some(&c.body[..]))] {
            for s in steps.into_iter().flatten() {
                if let LStep::Call { f, .. } | LStep::TailCall { f, .. } = s {
                    if dcode[*f].receive {
                        return v.err(
                            format!("{}.{key}", declared[i].1),
                            format!("{} has receive: only call ops may call it", declared[*f].0),
                        );
                    }
                }
            }
        }
    }
    // Which functions can return? The compiler's type analysis knows that a local call to a
    // function that never returns (every clause raises, or calls such a function locally)
    // does not return either, and drops the code after it. Least fixpoint from "none returns";
    // remote calls may always return (another module version could answer).
    let clause_returns = |steps: &[LStep], returns: &[bool]| -> bool {
        for s in steps {
            match s {
                LStep::Raise(_) => return false,
                LStep::Call {
                    f,
                    remote: false,
                    catch: false,
                    ..
                } if !returns[*f] => return false,
                LStep::TailCall {
                    f, remote: false, ..
                } => return returns[*f],
                LStep::TailCall { .. } | LStep::Return(_) => return true,
                _ => {}
            }
        }
        true
    };
    let returns = least_fixpoint(vec![false; declared.len()], declared.len(), |returns| {
        dcode
            .iter()
            .map(|c| {
                c.base
                    .as_deref()
                    .is_some_and(|b| clause_returns(b, returns))
                    || clause_returns(&c.body, returns)
            })
            .collect()
    });
    // The compiler drops the code after a local call that never returns; the runner never gets
    // there either, so drop it here too.
    for clause in clauses_mut(&mut dcode) {
        end_at_call_that_never_returns(clause, |f| !returns[f]);
    }
    // The compiler's type analysis also knows a local function's return value when it is
    // always the same literal (an atom, an integer, `[]`, or a tuple of those; not a
    // non-empty list): `_ = g(...), L` where g always returns L becomes the tail call
    // `g(...)` (`call_only`/`call_last`; seen on OTP 25 and 29 with exported and local g,
    // self-recursive g, `ok` as the implicit return, `caller_message.json`). `{caller}` and
    // `return_to` show it. Least fixpoint from "returns nothing" (a clause that raises).
    // The analysis also knows the arguments of a local function only called locally: with
    // every call passing a literal as the base argument, the clauses those literals cannot
    // match are dead (`f(0, _) -> {base, A1}; f(A1, A2) -> ok` called only as `f(1, 2)`
    // always returns `ok`; seen on OTP 25 and 29, found by the differential run, seed 25
    // #2021), and in the base clause the base argument is the literal it matched.
    let reach: Vec<(bool, bool)> = (0..dcode.len())
        .map(|g| {
            let c = &dcode[g];
            if c.exported || c.base.is_none() {
                return (c.base.is_some(), true);
            }
            let (mut base, mut body) = (false, false);
            let clauses = dcode
                .iter()
                .flat_map(|h| h.base.iter().chain(std::iter::once(&h.body)));
            for st in clauses.flatten() {
                let args = match st {
                    LStep::Call {
                        f,
                        remote: false,
                        args,
                        ..
                    }
                    | LStep::TailCall {
                        f,
                        remote: false,
                        args,
                    } if *f == g => args,
                    _ => continue,
                };
                match folded(&args[c.base_arg as usize - 1], None) {
                    Some(v) if v == c.base_match => base = true,
                    Some(_) => body = true,
                    None => (base, body) = (true, true),
                }
            }
            (base, body)
        })
        .collect();
    let ret = least_fixpoint(vec![Ret::None; declared.len()], declared.len(), |ret| {
        dcode
            .iter()
            .zip(&reach)
            .map(|(c, &(rb, rbody))| {
                let bind = Some((c.base_arg, &c.base_match));
                let b = match c.base.as_deref() {
                    Some(b) if rb => clause_ret(b, ret, bind),
                    _ => Ret::None,
                };
                let body = if rbody {
                    clause_ret(&c.body, ret, None)
                } else {
                    Ret::None
                };
                b.join(body)
            })
            .collect()
    });
    for clause in clauses_mut(&mut dcode) {
        // A call that never returns with the narrowed clauses either (every reachable
        // clause raises) ends the clause as a tail call, as above (seed 25 #2021 on OTP 29).
        if end_at_call_that_never_returns(clause, |f| ret[f] == Ret::None) {
            continue;
        }
        // The literal the clause returns after its last call: a final `return` of a
        // literal, or the implicit `ok`. `allocate`/`advance` steps have no Erlang code:
        // between the call and the return they move before the call.
        let (lit, end) = match clause.last() {
            Some(LStep::Return(a)) => match folded(a, None) {
                Some(v) => (v, clause.len() - 1),
                None => continue,
            },
            _ => (Val::Atom("ok".into()), clause.len()),
        };
        let Some(k) = clause[..end]
            .iter()
            .rposition(|s| !matches!(s, LStep::Allocate(_) | LStep::Advance(_)))
        else {
            continue;
        };
        let LStep::Call {
            f,
            remote: false,
            catch: false,
            times,
            args,
        } = &clause[k]
        else {
            continue;
        };
        if ret[*f] != Ret::Lit(lit) {
            continue;
        }
        let (f, times, args) = (*f, *times, args.clone());
        let logical: Vec<LStep> = clause[k + 1..end].to_vec();
        clause.truncate(k);
        if times > 1 {
            clause.push(LStep::Call {
                f,
                remote: false,
                args: args.clone(),
                times: times - 1,
                catch: false,
            });
        }
        clause.extend(logical);
        clause.push(LStep::TailCall {
            f,
            remote: false,
            args,
        });
    }
    // Reachability: the compiler drops local functions nothing reaches.
    let mut keep = vec![false; declared.len()];
    let mut stack: Vec<usize> = (0..declared.len()).filter(|i| dcode[*i].exported).collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut keep[i], true) {
            continue;
        }
        for s in dcode[i].base.iter().flatten().chain(&dcode[i].body) {
            if let LStep::Call { f, .. } | LStep::TailCall { f, .. } = s {
                if !keep[*f] {
                    stack.push(*f);
                }
            }
        }
    }
    let declared_code: Vec<(Mfa, Code)> = declared
        .iter()
        .map(|(m, _)| m.clone())
        .zip(dcode.iter().cloned())
        .collect();
    let mut remap = vec![usize::MAX; declared.len()];
    let mut funcs = Vec::new();
    let mut code = Vec::new();
    for m in &sc.modules {
        for (i, (mfa, _)) in declared.iter().enumerate() {
            if mfa.module == m.name && keep[i] {
                remap[i] = funcs.len();
                funcs.push(mfa.clone());
                code.push(dcode[i].clone());
            }
        }
        for a in 0..2 {
            funcs.push(Mfa::new(&m.name, "module_info", a));
            code.push(Code {
                arity: a,
                exported: true,
                base_arg: 1,
                base_match: Val::Int(0),
                base: None,
                body: vec![LStep::Return(Arg::Atom("module_info".into()))],
                receive: false,
            });
        }
    }
    for c in &mut code {
        for s in c.base.iter_mut().flatten().chain(c.body.iter_mut()) {
            if let LStep::Call { f, .. } | LStep::TailCall { f, .. } = s {
                *f = remap[*f];
                debug_assert!(*f != usize::MAX, "a kept function calls a dropped one");
            }
        }
    }
    // Sessions and processes.
    let mut sessions = vec![LEGACY.to_string()];
    for (i, s) in sc.sessions.iter().enumerate() {
        if !is_name(s) || sessions.contains(s) {
            return v.err(
                format!("$.sessions[{i}]"),
                format!("{s:?} is not a fresh session name (legacy is predeclared)"),
            );
        }
        if sessions.len() > MAX_SESSIONS {
            return v.err(
                format!("$.sessions[{i}]"),
                format!("more than {MAX_SESSIONS} sessions"),
            );
        }
        sessions.push(s.clone());
    }
    if sc.processes.len() > MAX_PROCESSES {
        return v.err(
            "$.processes",
            format!("more than {MAX_PROCESSES} processes"),
        );
    }
    let mut processes = Vec::new();
    let mut initial_flags = Vec::new();
    for (pi, p) in sc.processes.iter().enumerate() {
        let pp = format!("$.processes[{pi}]");
        if !is_name(&p.name) || processes.contains(&p.name) {
            return v.err(
                format!("{pp}.name"),
                format!("{:?} is not a fresh process name", p.name),
            );
        }
        processes.push(p.name.clone());
        let mut fl = BTreeMap::new();
        for (s, flags) in &p.trace {
            let sp = format!("{pp}.trace.{s}");
            if s != LEGACY {
                return v.err(sp, "only the legacy session exists before the first op; set flags of other sessions with a trace_flags op after session_create");
            }
            check_proc_flags(&v, flags, &sp, &mut feature)?;
            fl.insert(0u32, flags.clone());
        }
        initial_flags.push(fl);
    }
    let proc_ix = |name: &str, path: String| -> Result<usize, LoadError> {
        match processes.iter().position(|p| p == name) {
            Some(i) => Ok(i),
            None => v.err(path, format!("no process named {name:?}")),
        }
    };
    // Ops, tracking which sessions are alive and which processes are scheduled out.
    if sc.ops.len() > MAX_OPS {
        return v.err("$.ops", format!("more than {MAX_OPS} ops"));
    }
    let mut alive = vec![false; sessions.len()];
    alive[0] = true;
    let mut created = vec![false; sessions.len()];
    let mut out_now = vec![false; processes.len()];
    // Processes waiting in a receive function (until a resume op).
    let mut waiting = vec![false; processes.len()];
    let mut ops = Vec::new();
    for (oi, op) in sc.ops.iter().enumerate() {
        let op_path = format!("$.ops[{oi}]");
        let session_ix = |name: &str, path: String, alive: &[bool]| -> Result<u32, LoadError> {
            match sessions.iter().position(|s| s == name) {
                Some(i) if alive[i] => Ok(i as u32),
                Some(_) => v.err(path, format!("session {name} is not alive here (create it first; destroyed sessions stay dead)")),
                None => v.err(path, format!("no session named {name:?} (declare it in $.sessions)")),
            }
        };
        let lop = match op {
            Op::TracePattern(t) => {
                let p = format!("{op_path}.trace_pattern");
                let session = session_ix(&t.session, format!("{p}.session"), &alive)?;
                // `on_load`: the pattern for modules loaded later (spec/src/code.rs CL8).
                let on_load = t.pattern == "on_load";
                let pattern = if on_load {
                    Pattern::all()
                } else {
                    Pattern::parse(&t.pattern)
                        .or_else(|e| v.err(format!("{p}.pattern"), e.to_string()))?
                };
                let spec = match &t.spec {
                    serde_json::Value::Bool(true) => Spec::True,
                    serde_json::Value::Bool(false) => Spec::False,
                    serde_json::Value::String(s) if s == "pause" => Spec::Pause,
                    serde_json::Value::String(s) if s == "restart" => Spec::Restart,
                    serde_json::Value::Object(o) if o.len() == 1 && o.contains_key("actions") => {
                        let Some(acts) = o["actions"].as_array() else {
                            return v.err(format!("{p}.spec.actions"), "a list of action names");
                        };
                        let mut names: Vec<String> = Vec::new();
                        // Each action once, in the order ERTS's trace_info shows them as
                        // bpspec's engines write them: return_trace, exception_trace, caller
                        // (`{message, {caller}}`).
                        const ORDER: [&str; 3] = ["return_trace", "exception_trace", "caller"];
                        for (ai, a) in acts.iter().enumerate() {
                            let Some(k) =
                                a.as_str().and_then(|n| ORDER.iter().position(|o| *o == n))
                            else {
                                return v.err(
                                    format!("{p}.spec.actions[{ai}]"),
                                    "an action is \"return_trace\", \"exception_trace\" or \"caller\"",
                                );
                            };
                            if let Some(last) = names.last() {
                                let lk = ORDER.iter().position(|o| o == last).expect("known");
                                if lk >= k {
                                    return v.err(
                                        format!("{p}.spec.actions[{ai}]"),
                                        format!("{:?} after {last:?}: each action at most once, in the order return_trace, exception_trace, caller", ORDER[k]),
                                    );
                                }
                            }
                            if k == 2 {
                                feature(Feature::Caller, format!("{p}.spec.actions[{ai}]"));
                            }
                            names.push(ORDER[k].to_string());
                        }
                        feature(Feature::MatchSpec, format!("{p}.spec"));
                        Spec::MatchSpec(names)
                    }
                    _ => {
                        return v.err(
                            format!("{p}.spec"),
                            "spec is true, false, \"pause\", \"restart\" or {\"actions\": [...]}",
                        )
                    }
                };
                let mut flags = PatternFlags::default();
                for (fi, f) in t.flags.iter().enumerate() {
                    let fp = format!("{p}.flags[{fi}]");
                    match f.as_str() {
                        "local" => flags.local = true,
                        "global" => flags.global = true,
                        "meta" => flags.meta = true,
                        "call_count" => flags.call_count = true,
                        "call_time" => flags.call_time = true,
                        "call_memory" => flags.call_memory = true,
                        _ => return v.err(fp, format!("unknown trace_pattern flag {f:?} (local, global, meta, call_count, call_time, call_memory)")),
                    }
                }
                if flags.global
                    || !(flags.local
                        || flags.meta
                        || flags.call_count
                        || flags.call_time
                        || flags.call_memory)
                {
                    feature(Feature::GlobalTrace, format!("{p}.flags"));
                }
                if flags.meta {
                    feature(Feature::MetaTrace, format!("{p}.flags"));
                    if matches!(spec, Spec::MatchSpec(_)) {
                        feature(Feature::MetaMatchSpec, format!("{p}.spec"));
                    }
                }
                if matches!(spec, Spec::MatchSpec(_))
                    && (flags.global
                        || !(flags.local
                            || flags.meta
                            || flags.call_count
                            || flags.call_time
                            || flags.call_memory))
                {
                    feature(Feature::GlobalMatchSpec, format!("{p}.spec"));
                }
                if flags.call_time {
                    feature(Feature::CallTime, format!("{p}.flags"));
                }
                if flags.call_memory {
                    feature(Feature::CallMemory, format!("{p}.flags"));
                }
                if on_load {
                    if matches!(spec, Spec::Pause | Spec::Restart) {
                        return v.err(
                            format!("{p}.spec"),
                            "the on_load pattern takes true, false or a match spec here (pause and restart are not modelled for it)",
                        );
                    }
                    if flags.meta {
                        return v.err(
                            format!("{p}.flags"),
                            "the on_load pattern takes local, global, call_count, call_time and call_memory here (meta is not modelled for it)",
                        );
                    }
                    feature(Feature::OnLoadPattern, format!("{p}.pattern"));
                    LOp::OnLoadPattern {
                        session,
                        spec,
                        flags,
                    }
                } else {
                    LOp::TracePattern {
                        session,
                        pattern,
                        spec,
                        flags,
                    }
                }
            }
            Op::Call(c) => {
                let p = format!("{op_path}.call");
                let process = proc_ix(&c.process, format!("{p}.process"))?;
                if out_now[process] {
                    return v.err(
                        format!("{p}.process"),
                        format!("process {} is scheduled out here", c.process),
                    );
                }
                let Some((mfa, true)) = parse_mfa(&c.mfa, None) else {
                    return v.err(format!("{p}.mfa"), format!("{:?} is not M:F/A", c.mfa));
                };
                let Some(f) = funcs
                    .iter()
                    .position(|m| *m == mfa)
                    .filter(|f| code[*f].exported && mfa.name != "module_info")
                else {
                    return v.err(
                        format!("{p}.mfa"),
                        format!("{mfa} is not an exported function of the scenario"),
                    );
                };
                v.arity(format!("{p}.args"), &mfa, c.args.len())?;
                let mut args = Vec::new();
                for (ai, a) in c.args.iter().enumerate() {
                    args.push(literal(&v, a, &format!("{p}.args[{ai}]"), 0)?);
                }
                let times = v.times(format!("{p}.times"), c.times)?;
                if waiting[process] {
                    return v.err(
                        format!("{p}.process"),
                        format!(
                            "process {} waits in a receive here (resume it first)",
                            c.process
                        ),
                    );
                }
                if code[f].receive {
                    if times != 1 {
                        return v.err(
                            format!("{p}.times"),
                            "a call of a receive function waits: times must be 1",
                        );
                    }
                    waiting[process] = true;
                }
                LOp::Call {
                    process,
                    f,
                    args,
                    times,
                }
            }
            Op::TraceInfo(t) => {
                let p = format!("{op_path}.trace_info");
                let session = session_ix(&t.session, format!("{p}.session"), &alive)?;
                // `on_load`: the session's pattern for modules loaded later (spec/src/code.rs
                // CL8): every item, `true`/`false` for the counters.
                let on_load = t.mfa == "on_load";
                let mfa = if on_load {
                    None
                } else {
                    let Some((mfa, true)) = parse_mfa(&t.mfa, None) else {
                        return v.err(
                            format!("{p}.mfa"),
                            format!("{:?} is not M:F/A (or on_load)", t.mfa),
                        );
                    };
                    Some(mfa)
                };
                match t.item.as_str() {
                    "traced" | "call_count" => {}
                    "match_spec" | "meta" | "meta_match_spec" | "call_time" | "call_memory"
                    | "all" => feature(Feature::InfoItem(t.item.clone()), format!("{p}.item")),
                    other => {
                        return v.err(
                            format!("{p}.item"),
                            format!("unknown trace_info item {other:?}"),
                        )
                    }
                }
                match mfa {
                    None => {
                        feature(Feature::OnLoadPattern, format!("{p}.mfa"));
                        LOp::OnLoadInfo {
                            session,
                            item: t.item.clone(),
                        }
                    }
                    Some(mfa) => LOp::TraceInfo {
                        session,
                        mfa,
                        item: t.item.clone(),
                    },
                }
            }
            Op::TraceFlags(t) => {
                let p = format!("{op_path}.trace_flags");
                let process = proc_ix(&t.process, format!("{p}.process"))?;
                let session = session_ix(&t.session, format!("{p}.session"), &alive)?;
                check_proc_flags(&v, &t.flags, &format!("{p}.flags"), &mut feature)?;
                LOp::TraceFlags {
                    process,
                    session,
                    on: t.on,
                    flags: t.flags.clone(),
                }
            }
            Op::ScheduleOut(n) | Op::ScheduleIn(n) => {
                let out = matches!(op, Op::ScheduleOut(_));
                let key = if out { "schedule_out" } else { "schedule_in" };
                let process = proc_ix(n, format!("{op_path}.{key}"))?;
                if out_now[process] == out {
                    return v.err(
                        format!("{op_path}.{key}"),
                        format!(
                            "process {n} is already scheduled {}",
                            if out { "out" } else { "in" }
                        ),
                    );
                }
                out_now[process] = out;
                if out {
                    LOp::ScheduleOut(process)
                } else {
                    LOp::ScheduleIn(process)
                }
            }
            Op::SessionCreate(n) | Op::SessionDestroy(n) => {
                let create = matches!(op, Op::SessionCreate(_));
                let key = if create {
                    "session_create"
                } else {
                    "session_destroy"
                };
                let p = format!("{op_path}.{key}");
                let Some(s) = sessions.iter().position(|x| x == n) else {
                    return v.err(
                        p,
                        format!("no session named {n:?} (declare it in $.sessions)"),
                    );
                };
                if s == 0 {
                    return v.err(p, "the legacy session cannot be created or destroyed");
                }
                if create && created[s] {
                    return v.err(p, format!("session {n} is created twice"));
                }
                if !create && !alive[s] {
                    return v.err(p, format!("session {n} is not alive here"));
                }
                created[s] = true;
                alive[s] = create;
                feature(Feature::Sessions, p);
                if create {
                    LOp::SessionCreate(s as u32)
                } else {
                    LOp::SessionDestroy(s as u32)
                }
            }
            Op::Resume(n) => {
                let p = format!("{op_path}.resume");
                let process = proc_ix(n, p.clone())?;
                if !waiting[process] {
                    return v.err(p, format!("process {n} does not wait in a receive here"));
                }
                if out_now[process] {
                    return v.err(p, format!("process {n} is scheduled out here"));
                }
                waiting[process] = false;
                feature(Feature::CodeLoading, p);
                LOp::Resume(process)
            }
            Op::Load(m) | Op::LoadChanged(m) | Op::Delete(m) | Op::Purge(m) | Op::SoftPurge(m) => {
                let kind = match op {
                    Op::Load(_) => CodeOp::Load,
                    Op::LoadChanged(_) => CodeOp::LoadChanged,
                    Op::Delete(_) => CodeOp::Delete,
                    Op::Purge(_) => CodeOp::Purge,
                    _ => CodeOp::SoftPurge,
                };
                let p = format!("{op_path}.{}", kind.name());
                if !sc.modules.iter().any(|d| d.name == *m) {
                    return v.err(p, format!("no module named {m:?} in $.modules"));
                }
                feature(Feature::CodeLoading, p);
                LOp::Code(kind, m.clone())
            }
        };
        ops.push(lop);
    }
    // Processes in old code with call_time/call_memory, return_trace, exception_trace and
    // return_to frames and `{caller}` run (spec/src/code.rs CL6); global match specs with a
    // receive function are not modelled yet (the sequential oracle has no global match specs).
    if let Some(path) = sc.modules.iter().enumerate().find_map(|(mi, m)| {
        m.functions
            .iter()
            .position(|f| f.receive)
            .map(|fi| format!("$.modules[{mi}].functions[{fi}].receive"))
    }) {
        if let Some(f) = features
            .keys()
            .find(|f| matches!(f, Feature::GlobalMatchSpec))
        {
            return v.err(
                path,
                format!("receive together with {f} is not supported yet"),
            );
        }
    }
    if let Some(m) = sc.max_otp {
        let min = features
            .keys()
            .map(Feature::otp)
            .chain(sc.requires_otp)
            .chain([25])
            .max()
            .unwrap_or(25);
        if !(17..=99).contains(&m) {
            return v.err("$.max_otp", format!("{m} is not an OTP release"));
        }
        if m < min {
            return v.err(
                "$.max_otp",
                format!("max_otp {m} is older than the OTP {min} the scenario needs"),
            );
        }
    }
    if let Some(exp) = &sc.expect {
        for (i, o) in exp.iter().enumerate() {
            if o.op >= ops.len() {
                return v.err(
                    format!("$.expect[{i}].op"),
                    format!("op {} does not exist ({} ops)", o.op, ops.len()),
                );
            }
        }
    }
    // The second code: the same scenario with every `changed_body` as its body, compiled (and
    // checked) as the first; it must keep the same functions.
    let has_changed = sc
        .modules
        .iter()
        .any(|m| m.functions.iter().any(|f| f.changed_body.is_some()));
    let changed = if has_changed {
        let mut sc2 = sc.clone();
        for (mi, m) in sc2.modules.iter_mut().enumerate() {
            for (fi, f) in m.functions.iter_mut().enumerate() {
                if let Some(b) = f.changed_body.take() {
                    if f.base.is_some() {
                        return v.err(
                            format!("$.modules[{mi}].functions[{fi}].changed_body"),
                            "a function with base has no changed_body",
                        );
                    }
                    f.body = b;
                }
            }
        }
        sc2.expect = None;
        let l2 = validate(file, sc2).map_err(|e| match e {
            LoadError::Invalid {
                file,
                path,
                message,
            } => LoadError::Invalid {
                file,
                path: path.replacen(".body", ".changed_body", 1),
                message: format!("in the second code: {message}"),
            },
            e => e,
        })?;
        if l2.funcs != funcs {
            return v.err(
                "$.modules",
                "the changed bodies must keep the module's functions (the compiler keeps the \
                 exported and the reachable ones: the second code reaches others)",
            );
        }
        for (f, p) in &l2.features {
            features.entry(f.clone()).or_insert_with(|| p.clone());
        }
        Some(Box::new(l2))
    } else {
        None
    };
    Ok(Loaded {
        source: file.to_string(),
        scenario: sc,
        funcs,
        code,
        sessions,
        processes,
        initial_flags,
        ops,
        features,
        declared: declared_code,
        changed,
    })
}

fn parse_n(t: &str) -> Option<i64> {
    let rest = t.trim().strip_prefix('n')?.trim();
    if rest.is_empty() {
        return Some(0);
    }
    let (sign, num) = match rest.split_at(1) {
        ("+", n) => (1, n),
        ("-", n) => (-1, n),
        _ => return None,
    };
    let k: i64 = num.trim().parse().ok().filter(|k| *k <= 1_000_000)?;
    Some(sign * k)
}

/// A literal term (docs/scenario.md, "Terms"): an integer, an atom (string), a list (array), a
/// tuple (`{"tuple": [...]}`).
fn literal(v: &V<'_>, j: &serde_json::Value, path: &str, depth: usize) -> Result<Val, LoadError> {
    match expr(v, j, path, false, 0, depth)?.eval(&[]) {
        Ok(t) => Ok(t),
        Err(_) => v.err(path, "a literal term has no expressions"),
    }
}

/// An expression (docs/scenario.md, "Terms"). `n_short`: the strings `n`, `n-K`, `n+K` are the
/// first argument (in `args`); elsewhere strings are atoms. `arity`: the function's, for `n`
/// and `{"arg": I}` (0 for a literal, where neither exists).
fn expr(
    v: &V<'_>,
    j: &serde_json::Value,
    path: &str,
    n_short: bool,
    arity: u32,
    depth: usize,
) -> Result<Arg, LoadError> {
    use serde_json::Value as J;
    if depth > MAX_EXPR_DEPTH {
        return v.err(path, format!("nested deeper than {MAX_EXPR_DEPTH}"));
    }
    let sub = |j: &J, p: String| expr(v, j, &p, n_short, arity, depth + 1);
    let pair = |x: &J, key: &str| -> Result<(Arg, Arg), LoadError> {
        match x.as_array().map(Vec::as_slice) {
            Some([a, b]) => Ok((
                sub(a, format!("{path}.{key}[0]"))?,
                sub(b, format!("{path}.{key}[1]"))?,
            )),
            _ => v.err(
                format!("{path}.{key}"),
                format!("{key} takes a list of two expressions"),
            ),
        }
    };
    match j {
        J::Number(n) => match n.as_i64() {
            Some(i) if i.abs() <= 1_000_000 => Ok(Arg::Lit(i)),
            _ => v.err(path, "an integer literal is in -1000000..=1000000"),
        },
        J::String(t) if n_short && parse_n(t).is_some() => {
            if arity == 0 {
                return v.err(
                    path,
                    "\"n\" is the first argument, but this function has arity 0",
                );
            }
            Ok(Arg::N(parse_n(t).expect("checked")))
        }
        J::String(t) if is_name(t) => Ok(Arg::Atom(t.clone())),
        J::String(t) => v.err(
            path,
            format!(
                "{t:?} is not an atom ([a-z][A-Za-z0-9_]*){}",
                if n_short { " nor n, n-K, n+K" } else { "" }
            ),
        ),
        J::Array(a) => Ok(Arg::List(
            a.iter()
                .enumerate()
                .map(|(i, x)| sub(x, format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        )),
        J::Object(o) if o.len() == 1 => {
            let (key, x) = o.iter().next().expect("one key");
            match key.as_str() {
                "tuple" => match x.as_array() {
                    Some(a) => Ok(Arg::Tuple(
                        a.iter()
                            .enumerate()
                            .map(|(i, x)| sub(x, format!("{path}.tuple[{i}]")))
                            .collect::<Result<_, _>>()?,
                    )),
                    None => v.err(format!("{path}.tuple"), "a tuple is a list of its elements"),
                },
                "arg" if arity > 0 => match x.as_u64() {
                    Some(i) if (1..=arity as u64).contains(&i) => Ok(Arg::Param(i as u32)),
                    _ => v.err(
                        format!("{path}.arg"),
                        format!("an argument number in 1..={arity}"),
                    ),
                },
                "add" => pair(x, "add").map(|(a, b)| Arg::Add(Box::new(a), Box::new(b))),
                "cons" => pair(x, "cons").map(|(a, b)| Arg::Cons(Box::new(a), Box::new(b))),
                _ => v.err(
                    path,
                    format!(
                        "unknown term form {key:?} (tuple{})",
                        if arity > 0 { ", arg, add, cons" } else { "" }
                    ),
                ),
            }
        }
        _ => v.err(
            path,
            "a term is an integer, an atom (string), a list (array) or {\"tuple\": [...]}",
        ),
    }
}

/// What the compiler's type analysis knows a function returns (see `validate`): nothing (it
/// never returns), always the same literal, or anything.
#[derive(Clone, Debug, PartialEq)]
enum Ret {
    None,
    Lit(Val),
    Any,
}

impl Ret {
    fn join(self, o: Ret) -> Ret {
        match (self, o) {
            (Ret::None, x) | (x, Ret::None) => x,
            (Ret::Lit(a), Ret::Lit(b)) if a == b => Ret::Lit(a),
            _ => Ret::Any,
        }
    }
}

/// The literal an expression always is, as the compiler folds it: integers (sums of integers
/// too), atoms, `[]`, tuples of those, and argument `I` when `bind` is `(I, literal)` (the base
/// clause's matched argument). `None` for anything else (other arguments, non-empty lists).
fn folded(a: &Arg, bind: Option<(u32, &Val)>) -> Option<Val> {
    match a {
        Arg::Lit(i) => Some(Val::Int(*i)),
        Arg::Atom(x) => Some(Val::Atom(x.clone())),
        Arg::Param(i) => bind
            .filter(|(b, v)| b == i && !has_list(v))
            .map(|(_, v)| v.clone()),
        Arg::List(x) if x.is_empty() => Some(Val::List(vec![])),
        Arg::Tuple(x) => x
            .iter()
            .map(|e| folded(e, bind))
            .collect::<Option<Vec<_>>>()
            .map(Val::Tuple),
        Arg::Add(x, y) => match (folded(x, bind)?, folded(y, bind)?) {
            (Val::Int(x), Val::Int(y)) => x.checked_add(y).map(Val::Int),
            _ => None,
        },
        _ => None,
    }
}

/// Does the term hold a non-empty list (which the type analysis does not know as a literal)?
fn has_list(v: &Val) -> bool {
    match v {
        Val::List(x) => !x.is_empty(),
        Val::Tuple(x) => x.iter().any(has_list),
        _ => false,
    }
}

/// What one clause returns, given what each function returns (`ret`); `bind` as in
/// [`folded`].
fn clause_ret(steps: &[LStep], ret: &[Ret], bind: Option<(u32, &Val)>) -> Ret {
    for s in steps {
        match s {
            LStep::Raise(_) => return Ret::None,
            LStep::Call {
                f,
                remote: false,
                catch: false,
                ..
            } if ret[*f] == Ret::None => return Ret::None,
            LStep::TailCall {
                f, remote: false, ..
            } => return ret[*f].clone(),
            LStep::TailCall { .. } => return Ret::Any,
            LStep::Return(a) => return folded(a, bind).map_or(Ret::Any, Ret::Lit),
            _ => {}
        }
    }
    Ret::Lit(Val::Atom("ok".into()))
}

/// Process trace flags: `call` is implemented; the other real flags are features; anything else
/// is bad input.
fn check_proc_flags(
    v: &V<'_>,
    flags: &[String],
    path: &str,
    feature: &mut impl FnMut(Feature, String),
) -> Result<(), LoadError> {
    for (i, f) in flags.iter().enumerate() {
        match f.as_str() {
            "call" => {}
            "return_to" | "arity" | "timestamp" | "silent" | "running" | "procs" | "send"
            | "receive" | "garbage_collection" | "set_on_spawn" | "set_on_link" => {
                feature(Feature::ProcessFlag(f.clone()), format!("{path}[{i}]"))
            }
            _ => {
                return v.err(
                    format!("{path}[{i}]"),
                    format!("unknown process trace flag {f:?}"),
                )
            }
        }
    }
    Ok(())
}
