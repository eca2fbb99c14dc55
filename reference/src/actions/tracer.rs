//! Tracers with `erl_tracer` semantics (the behaviour's callbacks, their fall-back rules, and
//! the answers `trace | discard | remove`), the default mailbox tracer, and the session-wide
//! tracer cell that is removed safely while other schedulers may be about to call it.
//!
//! Dispatch rules (erl_tracer, "enabled_*/trace_* fall back to enabled/trace"):
//! D1. Before any event, the tracer is asked `enabled_<category>(Tag, State, Tracee)`; a tracer
//!     that does not define the per-category callback answers with `enabled/3` (the trait's
//!     default methods are the fall-back).
//! D2. `trace` → the event is built and `trace_<category>/5` (falling back to `trace/5`) is
//!     called with the opts the tracee asked for; `discard` → nothing happens; `remove` → the
//!     tracer is detached from the tracee (its flags in that session go too) and nothing is
//!     traced.
//! D3. `trace_status` goes to the generic `enabled/3` only. It is asked when tracing starts
//!     (a `remove` answer means tracing does not start) and when the tracer's liveness matters
//!     (`Proc::tracer_status`, a session tracer being set).

use crate::bp::Liveness;
use crate::sync::{lock, Mutex};
use crate::term::Term;
use std::fmt;
use std::sync::Arc as Refc;

/// `trace_tag()` plus `trace_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceTag {
    Call,
    ReturnTo,
    ReturnFrom,
    ExceptionFrom,
    Send,
    SendToNonExistingProcess,
    Receive,
    Spawn,
    Exit,
    In,
    Out,
    GcMajorStart,
    GcMajorEnd,
    /// Not an event: "is this tracer still to be active?"
    TraceStatus,
}

/// The callback family a tag belongs to (which optional `enabled_*`/`trace_*` pair applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Call,
    Send,
    Receive,
    Procs,
    RunningProcs,
    GarbageCollection,
    /// `trace_status`: only the generic callback.
    Status,
}

impl TraceTag {
    pub fn atom(self) -> &'static str {
        match self {
            TraceTag::Call => "call",
            TraceTag::ReturnTo => "return_to",
            TraceTag::ReturnFrom => "return_from",
            TraceTag::ExceptionFrom => "exception_from",
            TraceTag::Send => "send",
            TraceTag::SendToNonExistingProcess => "send_to_non_existing_process",
            TraceTag::Receive => "receive",
            TraceTag::Spawn => "spawn",
            TraceTag::Exit => "exit",
            TraceTag::In => "in",
            TraceTag::Out => "out",
            TraceTag::GcMajorStart => "gc_major_start",
            TraceTag::GcMajorEnd => "gc_major_end",
            TraceTag::TraceStatus => "trace_status",
        }
    }

    pub fn category(self) -> Category {
        match self {
            TraceTag::Call
            | TraceTag::ReturnTo
            | TraceTag::ReturnFrom
            | TraceTag::ExceptionFrom => Category::Call,
            TraceTag::Send | TraceTag::SendToNonExistingProcess => Category::Send,
            TraceTag::Receive => Category::Receive,
            TraceTag::Spawn | TraceTag::Exit => Category::Procs,
            TraceTag::In | TraceTag::Out => Category::RunningProcs,
            TraceTag::GcMajorStart | TraceTag::GcMajorEnd => Category::GarbageCollection,
            TraceTag::TraceStatus => Category::Status,
        }
    }
}

/// What `enabled` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enabled {
    Trace,
    Discard,
    Remove,
}

/// `trace_opts()`: each key present only when the tracee asked for it (or, for `extra` and
/// `match_spec_result`, when the event has one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceOpts {
    /// `timestamp => monotonic | strict_monotonic | timestamp | cpu_timestamp` (the kind
    /// requested; this engine has no wall clock, the tracer stamps it).
    pub timestamp: Option<&'static str>,
    /// The fifth element of the legacy trace tuple (e.g. `return_from`'s value, `send`'s
    /// recipient).
    pub extra: Option<Term>,
    /// The output of a match spec's `{message, ...}` action (e.g. `{caller}`).
    pub match_spec_result: Option<Term>,
    pub scheduler_id: Option<usize>,
}

/// Declares `erl_tracer`'s optional per-category callbacks (`enabled_<category>/3`,
/// `trace_<category>/5`), each defaulting to the generic `enabled/3` or `trace/5`.
macro_rules! fallback_callbacks {
    ($($enabled:ident, $trace:ident;)*) => {$(
        #[doc = concat!("`", stringify!($enabled), "/3`; defaults to `enabled/3`.")]
        fn $enabled(&self, tag: TraceTag, state: &Term, tracee: &Term) -> Enabled {
            self.enabled(tag, state, tracee)
        }
        #[doc = concat!("`", stringify!($trace), "/5`; defaults to `trace/5`.")]
        fn $trace(&self, tag: TraceTag, state: &Term, tracee: &Term, term: &Term, o: &TraceOpts) {
            self.trace(tag, state, tracee, term, o)
        }
    )*};
}

/// The `erl_tracer` behaviour. `state` is the immutable TracerState given when tracing started;
/// `tracee` is the pid (or `undefined`). Callbacks run in the tracee's scheduler and must be fast
/// and side-effect free (`enabled`) — they may be called several times per trace point.
pub trait Tracer: Send + Sync {
    fn enabled(&self, tag: TraceTag, state: &Term, tracee: &Term) -> Enabled;
    fn trace(&self, tag: TraceTag, state: &Term, tracee: &Term, term: &Term, opts: &TraceOpts);

    // Optional callbacks: the defaults are the behaviour's fall-back to the generic ones.
    fallback_callbacks! {
        enabled_call, trace_call;
        enabled_send, trace_send;
        enabled_receive, trace_receive;
        enabled_procs, trace_procs;
        enabled_running_procs, trace_running_procs;
        enabled_garbage_collection, trace_garbage_collection;
    }
}

/// D1/D3: route `enabled` by the tag's category.
pub fn dispatch_enabled(t: &dyn Tracer, tag: TraceTag, state: &Term, tracee: &Term) -> Enabled {
    match tag.category() {
        Category::Call => t.enabled_call(tag, state, tracee),
        Category::Send => t.enabled_send(tag, state, tracee),
        Category::Receive => t.enabled_receive(tag, state, tracee),
        Category::Procs => t.enabled_procs(tag, state, tracee),
        Category::RunningProcs => t.enabled_running_procs(tag, state, tracee),
        Category::GarbageCollection => t.enabled_garbage_collection(tag, state, tracee),
        Category::Status => t.enabled(tag, state, tracee),
    }
}

/// D2: route `trace` by the tag's category.
pub fn dispatch_trace(
    t: &dyn Tracer,
    tag: TraceTag,
    state: &Term,
    tracee: &Term,
    term: &Term,
    o: &TraceOpts,
) {
    assert!(
        tag != TraceTag::TraceStatus,
        "trace_status is a question, never an event"
    );
    match tag.category() {
        Category::Call => t.trace_call(tag, state, tracee, term, o),
        Category::Send => t.trace_send(tag, state, tracee, term, o),
        Category::Receive => t.trace_receive(tag, state, tracee, term, o),
        Category::Procs => t.trace_procs(tag, state, tracee, term, o),
        Category::RunningProcs => t.trace_running_procs(tag, state, tracee, term, o),
        Category::GarbageCollection => t.trace_garbage_collection(tag, state, tracee, term, o),
        Category::Status => unreachable!(),
    }
}

/// A tracer module plus its state: `{tracer, Module, State}`.
#[derive(Clone)]
pub struct TracerSpec {
    pub module: Refc<dyn Tracer>,
    pub state: Term,
}

impl fmt::Debug for TracerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{tracer,_,{}}}", self.state)
    }
}

impl TracerSpec {
    pub fn new(module: Refc<dyn Tracer>, state: Term) -> TracerSpec {
        TracerSpec { module, state }
    }
    pub fn enabled(&self, tag: TraceTag, tracee: &Term) -> Enabled {
        dispatch_enabled(&*self.module, tag, &self.state, tracee)
    }
    pub fn trace(&self, tag: TraceTag, tracee: &Term, term: &Term, o: &TraceOpts) {
        dispatch_trace(&*self.module, tag, &self.state, tracee, term, o)
    }
    /// The whole event: ask (D1), then trace, discard or report removal (D2).
    pub fn emit(&self, tag: TraceTag, tracee: &Term, term: &Term, o: &TraceOpts) -> Enabled {
        let a = self.enabled(tag, tracee);
        if a == Enabled::Trace {
            self.trace(tag, tracee, term, o);
        }
        a
    }
}

/// A process's message queue, as the default tracer delivers to it: `{trace, Tracee, Tag,
/// Term}` or, with extra / a match-spec result, `{trace, Tracee, Tag, Term, Extra}`.
pub struct Mailbox {
    pub pid: u64,
    alive: crate::sync::AtomicBool,
    msgs: Mutex<Vec<Term>>,
}

impl Mailbox {
    pub fn new(pid: u64) -> Refc<Mailbox> {
        Refc::new(Mailbox {
            pid,
            alive: crate::sync::AtomicBool::new(true),
            msgs: Mutex::new(Vec::new()),
        })
    }
    pub fn deliver(&self, m: Term) {
        if self.is_alive() {
            lock(&self.msgs).push(m);
        }
    }
    /// All messages so far, removed from the queue.
    pub fn take(&self) -> Vec<Term> {
        std::mem::take(&mut *lock(&self.msgs))
    }
    /// Messages rendered with `~w`.
    pub fn take_strings(&self) -> Vec<String> {
        self.take().iter().map(|t| t.to_string()).collect()
    }
    pub fn len(&self) -> usize {
        lock(&self.msgs).len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn kill(&self) {
        // Relaxed: liveness is advisory (erl_tracer's `enif_is_process_alive`); the test that
        // kills also observes from the same thread.
        self.alive.store(false, crate::sync::Ordering::Relaxed);
    }
    pub fn is_alive(&self) -> bool {
        self.alive.load(crate::sync::Ordering::Relaxed)
    }
}

/// The default process tracer: trace messages go to the tracer process's mailbox.
pub struct ProcessTracer {
    pub mailbox: Refc<Mailbox>,
}

impl ProcessTracer {
    /// `{tracer, Pid}` as a spec: state is the pid.
    pub fn spec(mailbox: &Refc<Mailbox>) -> TracerSpec {
        TracerSpec::new(
            Refc::new(ProcessTracer {
                mailbox: mailbox.clone(),
            }),
            Term::Pid(mailbox.pid),
        )
    }
}

impl Tracer for ProcessTracer {
    fn enabled(&self, tag: TraceTag, _state: &Term, _tracee: &Term) -> Enabled {
        match (self.mailbox.is_alive(), tag) {
            (true, _) => Enabled::Trace,
            (false, TraceTag::TraceStatus) => Enabled::Remove,
            (false, _) => Enabled::Discard,
        }
    }
    fn trace(&self, tag: TraceTag, _state: &Term, tracee: &Term, term: &Term, o: &TraceOpts) {
        let mut v = vec![
            Term::Atom("trace"),
            tracee.clone(),
            Term::Atom(tag.atom()),
            term.clone(),
        ];
        if let Some(x) = o.extra.as_ref().or(o.match_spec_result.as_ref()) {
            v.push(x.clone());
        }
        self.mailbox.deliver(Term::Tuple(v));
    }
}

/// A session-wide tracer published to schedulers: allocated, written, then published with a
/// Release store; removed by unpublishing, waiting for thread progress, then freeing (the
/// protocol of docs/sessions.md, ST1-ST3). The liveness word makes a late call an assertion.
pub struct TracerCell {
    pub spec: TracerSpec,
    pub live: Liveness,
}
