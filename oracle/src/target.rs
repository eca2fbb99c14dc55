//! [`BreakpointEngine`]: what another breakpoint implementation provides to be run by bpspec's
//! scenario runner and conformance checks (docs/conformance.md), and its implementations:
//! [`RefEngine`] (our concurrent engine, driven by one scheduler thread), [`SpecOracle`] (the
//! sequential oracle in `bpspec-spec`), and [`WrongOracle`] (deliberately broken oracles that
//! the conformance check must reject).

use crate::frames::{FrameMsg, Raise, Tracers};
use crate::scenario::Feature;
use bpspec_reference::{
    Engine, EngineConfig, FlagSet, FuncId, InfoItem, InfoKey, InfoValue, Mfa, Pattern,
    PatternError, PatternOp, Proc, Process, Qsbr, Scheduler, SessionId, Term, TraceFlags,
    TraceSpec,
};
use bpspec_spec::code::CodeMutant;
/// How the runner enters a function (`BreakpointEngine::enter`): the sequential oracle's.
pub use bpspec_spec::Entry;
use bpspec_spec::Oracle;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The features our engine and the sequential oracle implement beyond local + call_count.
pub fn timem_feature(feature: &Feature) -> bool {
    match feature {
        Feature::CallTime | Feature::CallMemory => true,
        Feature::InfoItem(i) => matches!(
            i.as_str(),
            "call_time" | "call_memory" | "all" | "match_spec" | "meta" | "meta_match_spec"
        ),
        _ => false,
    }
}

/// A breakpoint implementation, seen sequentially. The function universe is fixed when it is
/// built (see [`Factory`]); functions are named by their index in it.
pub trait BreakpointEngine {
    /// A short name for messages.
    fn name(&self) -> String;
    /// Does it implement `feature` (beyond local + call_count)? Scenarios using a feature it
    /// lacks are refused with exit code 3 rather than run.
    fn supports(&self, _feature: &Feature) -> bool {
        false
    }
    /// `erlang:trace_pattern/3` (`trace:function/4` in `spec.session`): the engine's own
    /// argument, [`TraceSpec`], with the flag list (local, call_count, call_time, call_memory),
    /// `global`, a match spec `[{'_', [], Actions}]` (op `true`) and `{meta, Tracer}` (the
    /// runner's meta tracer, [`meta_tracer`]: the engine sends to its own, read by
    /// `take_meta`). Returns the number of matched functions (for `global`, of matched export
    /// entries), or the error. The runner asks for call_time/call_memory, `global`, a match
    /// spec or meta only if `supports` claims `Feature::CallTime`/`CallMemory`, `GlobalTrace`,
    /// `MatchSpec` (`GlobalMatchSpec` with `global`) or `MetaTrace`; an engine with local +
    /// call_count only can take its flags with [`local_flags`].
    fn trace_pattern(
        &mut self,
        pattern: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError>;
    /// Process `pid`, call-traced in the sessions whose bits are set in `call_traced`, enters
    /// function `f` without a process stack (no call_time/call_memory, no frames). Returns the
    /// sessions that deliver a local `call` trace message, in delivery order.
    fn call(&mut self, f: FuncId, pid: u64, call_traced: u64) -> Vec<SessionId>;
    /// Process `pid` enters `f` by a body call (`how.tail` false: a continuation is pushed) or
    /// a tail call, local or remote (`how.remote`: through the export entry, where global
    /// breakpoints sit). Returns the sessions' call trace messages, as
    /// [`BreakpointEngine::call`]. The default is an engine without process stacks and without
    /// global trace (a remote call is a local entry).
    fn enter(&mut self, f: FuncId, pid: u64, call_traced: u64, how: Entry) -> Vec<SessionId> {
        let _ = how;
        self.call(f, pid, call_traced)
    }
    /// `trace_info/2` (or `/3` with a session) for traced and call_count.
    fn trace_info(&mut self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue;

    // ---- global trace, call_time / call_memory (Feature::GlobalTrace, Feature::CallTime,
    // Feature::CallMemory). The defaults are what an engine without them does; the runner uses
    // them only if `supports` says yes.

    /// Only the functions in `exported` have export entries (called once, before any
    /// trace_pattern). Engines without global trace ignore it.
    fn set_exports(&mut self, _exported: &[FuncId]) {}
    /// Process `pid` returns from its current function.
    fn ret(&mut self, _pid: u64, _call_traced: u64) {}
    /// An exception raised in `pid` is caught at the top (trace frames skipped, not charged).
    fn unwind(&mut self, _pid: u64, _call_traced: u64) {}
    /// Process `pid` is scheduled in (`into`) or out.
    fn schedule(&mut self, _pid: u64, _call_traced: u64, _into: bool) {}
    /// Advance the logical clock by `dt` microseconds.
    fn advance(&mut self, _dt: u64) {}
    /// Process `pid` allocates `words` words.
    fn alloc(&mut self, _pid: u64, _call_traced: u64, _words: u64) {}
    /// `trace_info` as an Erlang term, for the items beyond traced/call_count.
    fn trace_info_term(&mut self, _session: SessionId, mfa: &Mfa, key: InfoKey) -> Term {
        panic!(
            "{}: trace_info({mfa}, {}) is not supported",
            self.name(),
            key.atom()
        )
    }
    // ---- return_trace / exception_trace (Feature::MatchSpec, Feature::GlobalMatchSpec;
    // frames.rs). The defaults are what an engine without trace frames does.

    /// Process `pid` returns `value` from its current function: the messages of the
    /// return_trace/exception_trace frames on top of its continuation (`return_from`), in the
    /// order they are sent.
    fn ret_value(&mut self, pid: u64, call_traced: u64, value: &Term) -> Vec<FrameMsg> {
        let _ = value;
        self.ret(pid, call_traced);
        Vec::new()
    }
    /// `erlang:error`-style `{class, reason}` raised in `pid`'s current function unwinds
    /// `through` continuations (the runner passes all of them: caught at the top). The
    /// `exception_from` messages of the exception_trace frames passed, innermost first;
    /// return_trace and call_time/call_memory frames are dropped without a message or a charge.
    fn raise(&mut self, pid: u64, call_traced: u64, e: &Raise) -> Vec<FrameMsg> {
        let _ = e;
        self.unwind(pid, call_traced);
        Vec::new()
    }

    /// Is `f`'s first instruction the breakpoint? `None` if the engine does not say.
    fn is_patched(&mut self, _f: FuncId) -> Option<bool> {
        None
    }
    /// The engine's own at-rest invariant (checked after every trace_pattern).
    fn check_at_rest(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Is `f`'s export entry redirected to the global breakpoint? `None` if the engine does not
    /// say (or has no global trace).
    fn is_export_patched(&mut self, _f: FuncId) -> Option<bool> {
        None
    }

    // ---- trace sessions (Feature::Sessions, OTP 27; oracle/src/sessions.rs). Called only if
    // `supports(&Feature::Sessions)`.

    /// `trace:session_create/3`: a new alive session without breakpoints; returns its id, which
    /// the runner then passes to every other method (1..64, never 0, never reused).
    fn session_create(&mut self, _name: &str) -> SessionId {
        panic!("{}: trace sessions are not supported", self.name())
    }
    /// `trace:session_destroy/1` of a live session: its breakpoints (local, global, counters)
    /// go away; other sessions' breakpoints on the same functions stay, in their order. The
    /// runner clears the session's bit in every process's `call_traced` itself.
    fn session_destroy(&mut self, _session: SessionId) {
        panic!("{}: trace sessions are not supported", self.name())
    }
    /// The meta tracer's messages since the last call, in order: (tracee pid, function).
    fn take_meta(&mut self) -> Vec<(u64, FuncId)> {
        Vec::new()
    }

    // ---- return_to and {message, {caller}} (`Feature::ProcessFlag("return_to")`,
    // `Feature::Caller`; frames.rs). Used only if `supports` says yes.

    /// `erlang:trace/3` turned `return_to` on or off for `pid`: `sessions` is the bit set of
    /// sessions in which it has the flag now (it sends only where the process is also
    /// call-traced). The return_to frames and messages then come from `ret_value` / `raise`
    /// as [`FrameMsg`]s with `FrameEvent::ReturnTo` (`f` the function returned into,
    /// [`crate::frames::TOP`] for the harness).
    fn set_return_to(&mut self, _pid: u64, _call_traced: u64, _sessions: u64) {}
    /// Right after `enter` of `f` returned `sessions`: for each of them, in
    /// order, the caller its call message carries when the match spec has `{message, {caller}}`
    /// (`Some(TOP)` for the harness), else `None`.
    fn callers(&mut self, _f: FuncId, _pid: u64, sessions: &[SessionId]) -> Vec<Option<FuncId>> {
        vec![None; sessions.len()]
    }

    // ---- code loading (`Feature::CodeLoading`; spec/src/code.rs). Called only if `supports`
    // says yes. Our engine (`RefEngine`): `target/code.rs`.

    /// `code:load_binary/3` (a new version of the same code), `code:delete/1`, `code:purge/1`
    /// or `code:soft_purge/1` of `module`: its answer as a boolean (`load`: `{module, M}`).
    /// A load or delete removes every breakpoint of the module's functions in every session
    /// (local, global, meta, counters, call_time/call_memory rows, match specs).
    fn code_op(&mut self, _op: crate::scenario::CodeOp, _module: &str) -> bool {
        panic!("{}: code loading is not supported", self.name())
    }
    /// `erlang:trace_pattern(on_load, ...)` (`trace:function/4` in `spec.session`;
    /// `Feature::OnLoadPattern`, spec/src/code.rs CL8): sets or clears the session's pattern
    /// for modules loaded later, `true` or `false` with local, the counters, `global` and a
    /// match spec as in [`BreakpointEngine::trace_pattern`] (never meta, pause or restart).
    /// Answers 0, or the `badarg` of any pattern. Every later `load` first clears the module
    /// (as `code_op` says) and then applies each live session's pattern to the new version's
    /// functions, as `trace_pattern({M, '_', '_'}, true, ...)` would: the legacy session first,
    /// then the others newest first ([`bpspec_spec::code::on_load_order`]).
    fn on_load_pattern(
        &mut self,
        _op: PatternOp,
        _spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        panic!("{}: the on_load pattern is not supported", self.name())
    }
    /// `erlang:trace_info(on_load, Key)` (`trace:info/3` in `session`; `Feature::OnLoadPattern`,
    /// spec/src/code.rs CL8): `{Key, Value}` from the session's on_load pattern, as ERTS's
    /// `trace_info_on_load` builds it (`false` while the pattern is off; `true`/`false` for the
    /// counters; `all` lists traced, match_spec, meta, meta_match_spec and call_count).
    fn on_load_info(&mut self, _session: SessionId, key: InfoKey) -> Term {
        panic!(
            "{}: trace_info(on_load, {}) is not supported",
            self.name(),
            key.atom()
        )
    }
    /// Does `f`'s module have a current version (false after `delete` until the next load)?
    fn is_loaded(&mut self, _f: FuncId) -> bool {
        true
    }
    /// Process `pid` entered `f` (a receive function) and waits there, in `f`'s module's
    /// current version. Its stack stays as the entry left it.
    fn wait_in(&mut self, _pid: u64, _f: FuncId) {
        panic!("{}: code loading is not supported", self.name())
    }
    /// The waiting process `pid` goes on: `Some(true)` if its version is old now (its body
    /// then runs with `Entry::old` for local calls), `Some(false)` if current, `None` if a
    /// purge killed it.
    fn resume(&mut self, _pid: u64) -> Option<bool> {
        panic!("{}: code loading is not supported", self.name())
    }
    /// Was `pid` killed by a purge of the version it waited in?
    fn killed(&self, _pid: u64) -> bool {
        false
    }
    /// Which code a call of `f` by `pid` runs (spec/src/code.rs CL7): 0 the module's first
    /// code, 1 its second (the `changed_body`s). `old`: made in the old version `pid` was
    /// resumed in. Engines without code loading run the first code.
    fn variant(&mut self, _f: FuncId, _pid: u64, _old: bool) -> u8 {
        0
    }
}

/// For an engine with local + call_count only: the flags of `spec`, checked as the engines
/// check them. Panics on the parts of `spec` the runner asks for only after `supports` claimed
/// them (call_time/call_memory, `global`, a match spec, meta).
pub fn local_flags(
    name: &str,
    op: PatternOp,
    spec: &TraceSpec,
) -> Result<TraceFlags, PatternError> {
    let fl = spec.flags;
    assert!(
        !fl.call_time && !fl.call_memory,
        "{name}: asked for call_time/call_memory, which it does not support"
    );
    assert!(
        !spec.global,
        "{name}: global trace_pattern is not supported"
    );
    assert!(spec.ms.is_none(), "{name}: match specs are not supported");
    assert!(spec.meta.is_none(), "{name}: meta trace is not supported");
    fl.check(op)?;
    Ok(TraceFlags {
        local: fl.local,
        call_count: fl.call_count,
    })
}

/// Writes [`BreakpointEngine`] methods that only pass their arguments on to the method of the
/// same name (or the one named after `=>`) of `self.$to`: the sequential oracle for
/// [`SpecOracle`], the [`SpecOracle`] for [`WrongOracle`]; exported for engines that wrap
/// another (oracle/tests/corpus.rs). Methods that do more are written out.
#[macro_export]
macro_rules! delegate {
    ($to:tt { $( fn $name:ident(&mut self $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)? $(=> $target:ident)?; )* }) => {
        $(
            fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? {
                $crate::delegate!(@call (self.$to) $name $($target)? ($($arg),*))
            }
        )*
    };
    (@call ($($recv:tt)*) $name:ident $target:ident ($($a:expr),*)) => { $($recv)*.$target($($a),*) };
    (@call ($($recv:tt)*) $name:ident ($($a:expr),*)) => { $($recv)*.$name($($a),*) };
}

mod code;
mod meta;
pub use meta::{meta_tracer, META_PID};

/// Builds an engine over a function universe.
pub type Factory<'a> = &'a dyn Fn(Vec<Mfa>) -> Box<dyn BreakpointEngine>;

/// Our engine, with one managed scheduler that sleeps between calls (so `trace_pattern`'s waits
/// never wait for it).
pub struct RefEngine {
    engine: Arc<Engine<Qsbr>>,
    sched: Scheduler<Qsbr>,
    /// Processes with call_time/call_memory state, by pid (created scheduled in).
    procs: BTreeMap<u64, Proc>,
    /// Each traced process's tracer in each session (for return/exception trace frames).
    tracers: Tracers,
    /// The meta tracer's mailbox (`target/meta.rs`).
    meta_mb: Arc<bpspec_reference::Mailbox>,
    /// Per pid, the sessions where it has the `return_to` flag.
    return_to: BTreeMap<u64, u64>,
    /// The `{caller}` of each call message of the last hit (see `callers`).
    last_callers: Vec<Option<FuncId>>,
    /// Code loading: the modules' versions (`target/code.rs`).
    code: code::Code,
}

impl RefEngine {
    pub fn new(funcs: Vec<Mfa>) -> RefEngine {
        RefEngine::over(
            RefEngine::config(funcs.clone()),
            funcs,
            None,
            bpspec_reference::LoadProtocol::NonBlocking,
        )
    }

    /// The scenario's functions `funcs` (the module table's, [`RefEngine::over`]: the static
    /// area gets none); one scheduler for the runner's calls and one per scenario process for
    /// its place in the modules' code (`target/code.rs`).
    fn config(funcs: Vec<Mfa>) -> EngineConfig {
        EngineConfig {
            functions: funcs,
            schedulers: 1 + code::SCHEDULERS,
            mutant: None,
        }
    }

    /// Our engine built from `cfg`, owning every module of its functions under the load
    /// protocol `protocol` (`target/code.rs`; only `exported` with export entries in the
    /// scenario), with its scheduler for the runner's calls started and asleep. The breakpoints
    /// and calls are on the modules' versions and export entries (which carry global trace,
    /// `Engine::with_global_trace`); the engine's static area has no function and the engine is
    /// made `Engine::with_versions_only` (every static-area entry point panics: the runner
    /// makes no static-area call).
    fn over(
        mut cfg: EngineConfig,
        funcs: Vec<Mfa>,
        exported: Option<&[FuncId]>,
        protocol: bpspec_reference::LoadProtocol,
    ) -> RefEngine {
        let (modules, code) = code::Code::modules_of(&funcs, exported, protocol);
        cfg.functions.clear();
        let engine = Engine::<Qsbr>::new(cfg);
        // A scenario without functions has no module: the engine owns no code then (a module
        // table needs at least one module, `Engine::with_modules`), and nothing is called.
        let engine = Arc::new(if modules.is_empty() {
            engine
        } else {
            engine
                .with_modules(&modules, protocol)
                .with_kills()
                .with_global_trace()
                .with_versions_only()
        });
        let mut sched = Scheduler::start(engine.clone(), 0);
        // A call into a version pops the hit it records (`calls.rs::run_version`).
        sched.record = true;
        sched.sleep();
        RefEngine {
            engine,
            sched,
            procs: BTreeMap::new(),
            tracers: Tracers::default(),
            meta_mb: bpspec_reference::Mailbox::new(meta::META_PID),
            return_to: BTreeMap::new(),
            last_callers: Vec::new(),
            code,
        }
    }

    /// Run `op` on process `pid` with the scheduler awake.
    fn on_proc<R>(
        &mut self,
        pid: u64,
        call_traced: u64,
        op: impl FnOnce(&mut Scheduler<Qsbr>, &mut Proc) -> R,
    ) -> R {
        self.sched.wake();
        let sched = &mut self.sched;
        let p = self.procs.entry(pid).or_insert_with(|| {
            let mut p = Proc::new(Process {
                pid,
                call_traced: 0,
            });
            sched.schedule_in(&mut p);
            p
        });
        // The call flag and a tracer in each traced session (erlang:trace/3), so that trace
        // frames have a tracer to send to.
        let rt = self.return_to.get(&pid).copied().unwrap_or(0);
        self.tracers.sync(&self.engine, p, call_traced, rt);
        let r = op(sched, p);
        self.sched.sleep();
        r
    }
    pub fn boxed(funcs: Vec<Mfa>) -> Box<dyn BreakpointEngine> {
        Box::new(RefEngine::new(funcs))
    }

    /// The engine under one of its variants (`bpspec_reference::Mutant`; in checked builds only,
    /// elsewhere the variant is ignored), e.g. a fix proposed for an ERTS crash.
    pub fn with_mutant(funcs: Vec<Mfa>, m: bpspec_reference::Mutant) -> RefEngine {
        let mut cfg = RefEngine::config(funcs.clone());
        cfg.mutant = Some(m);
        RefEngine::over(
            cfg,
            funcs,
            None,
            bpspec_reference::LoadProtocol::NonBlocking,
        )
    }

    /// The scenario's function table (the runner's own: `Code::funcs`).
    fn funcs(&self) -> Vec<Mfa> {
        self.code.funcs.clone()
    }

    /// The sessions of the call messages of the hit that produced events from `before` on: the
    /// engine's events, cross-checked with what the tracers received (one `call` each, same
    /// order; the plain `call` path has no process and sends nothing). The events name `f` by
    /// `ev_f`: its index in the area hit (the static area's `f`, or its module's function).
    fn entered(&mut self, before: usize, f: FuncId, ev_f: usize, pid: u64) -> Vec<SessionId> {
        self.sched.hits.clear();
        let evs = self.sched.events.split_off(before);
        let sessions: Vec<SessionId> = evs
            .iter()
            .map(|e| {
                assert!(
                    e.pid == pid && e.func == ev_f,
                    "event for another call: {e:?}"
                );
                e.session
            })
            .collect();
        let mfa = Term::mfa(&self.code.funcs[f]);
        let funcs = self.funcs();
        let (sent, callers): (Vec<SessionId>, Vec<Option<FuncId>>) = self
            .tracers
            .take()
            .into_iter()
            .map(|(s, tag, who, term, extra)| {
                assert!(
                    tag == bpspec_reference::TraceTag::Call && who == Term::Pid(pid) && term == mfa,
                    "entering {mfa}: unexpected message {} {term} in session {s}",
                    tag.atom()
                );
                // `{message, {caller}}`: the fifth element.
                (s, extra.map(|c| crate::frames::func_of_term(&funcs, &c)))
            })
            .unzip();
        assert_eq!(sent, sessions, "{mfa}: call messages vs breakpoint events");
        self.last_callers = callers;
        sessions
    }

    /// Our engine where only `exported` functions have export entries.
    pub fn with_exports(funcs: Vec<Mfa>, exported: &[FuncId]) -> RefEngine {
        RefEngine::with_exports_under(funcs, exported, bpspec_reference::LoadProtocol::NonBlocking)
    }

    /// [`RefEngine::with_exports`] under the load protocol `protocol`.
    fn with_exports_under(
        funcs: Vec<Mfa>,
        exported: &[FuncId],
        protocol: bpspec_reference::LoadProtocol,
    ) -> RefEngine {
        RefEngine::over(
            RefEngine::config(funcs.clone()),
            funcs,
            Some(exported),
            protocol,
        )
    }
}

impl BreakpointEngine for RefEngine {
    fn set_return_to(&mut self, pid: u64, _call_traced: u64, sessions: u64) {
        self.return_to.insert(pid, sessions);
    }
    fn callers(&mut self, _f: FuncId, _pid: u64, sessions: &[SessionId]) -> Vec<Option<FuncId>> {
        assert_eq!(
            self.last_callers.len(),
            sessions.len(),
            "callers of the last hit"
        );
        std::mem::take(&mut self.last_callers)
    }
    fn name(&self) -> String {
        "reference engine".into()
    }
    fn trace_pattern(
        &mut self,
        pattern: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        match &spec.meta {
            // The runner's meta tracer stands for our mailbox (`target/meta.rs`).
            Some(t) => {
                let ours = self.own_meta_tracer(t);
                self.pattern_on_loaded(pattern, op, &spec.clone().meta(ours))
            }
            None => self.pattern_on_loaded(pattern, op, spec),
        }
    }
    fn call(&mut self, f: FuncId, pid: u64, call_traced: u64) -> Vec<SessionId> {
        assert!(f < self.code.funcs.len(), "function {f} out of range");
        let before = self.sched.events.len();
        let p = Process { pid, call_traced };
        self.sched.wake();
        // The events name the function by its index in the area hit.
        // The hit without a process on the module's current version
        // (`Scheduler::call_version`: no stack, nothing charged or sent).
        let (m, i) = self.in_module(f);
        let seen = self.sched.call_version(&p, m, i);
        assert!(seen.version != 0, "{f}: called while its module is deleted");
        let ev_f = i;
        self.sched.sleep();
        let evs = self.sched.events.split_off(before);
        evs.iter()
            .map(|e| {
                assert!(
                    e.pid == pid && e.func == ev_f,
                    "event for another call: {e:?}"
                );
                e.session
            })
            .collect()
    }
    fn trace_info(&mut self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        self.info_loaded(session, mfa, item)
    }
    fn supports(&self, feature: &Feature) -> bool {
        // Our engine has everything the runner drives, code loading with its modules'
        // versions (`target/code.rs`).
        crate::run::runner_supports(feature)
    }
    fn code_op(&mut self, op: crate::scenario::CodeOp, module: &str) -> bool {
        self.code_op_impl(op, module)
    }
    fn on_load_pattern(&mut self, op: PatternOp, spec: &TraceSpec) -> Result<usize, PatternError> {
        self.on_load_pattern_impl(op, spec)
    }
    fn on_load_info(&mut self, session: SessionId, key: InfoKey) -> Term {
        bpspec_spec::code::on_load_info(&self.code.on_load, session, key, self.code.mutant)
    }
    fn is_loaded(&mut self, f: FuncId) -> bool {
        self.code.is_loaded(f)
    }
    fn wait_in(&mut self, pid: u64, f: FuncId) {
        self.wait_in_impl(pid, f)
    }
    fn resume(&mut self, pid: u64) -> Option<bool> {
        self.resume_impl(pid)
    }
    fn killed(&self, pid: u64) -> bool {
        self.code.killed(pid)
    }
    fn variant(&mut self, f: FuncId, pid: u64, old: bool) -> u8 {
        self.variant_impl(f, pid, old)
    }
    fn take_meta(&mut self) -> Vec<(u64, FuncId)> {
        self.meta_take()
    }
    fn enter(&mut self, f: FuncId, pid: u64, call_traced: u64, how: Entry) -> Vec<SessionId> {
        assert!(f < self.code.funcs.len(), "function {f} out of range");
        if how.old {
            // spec/src/code.rs CL6: the old version has no breakpoints.
            self.enter_old(f, pid, call_traced, how.tail);
            return Vec::new();
        }
        let before = self.sched.events.len();
        // The module's current version, through its export entry if remote
        // (`calls.rs`: the same steps as the engine's own processes' calls).
        let (m, i) = self.in_module(f);
        let seen = self.on_proc(pid, call_traced, |s, p| {
            s.call_version_proc(p, m, i, how.tail, how.remote)
        });
        // The runner raises `undef` before calling a deleted module; only a code mutant
        // (deleted functions kept callable, old code run as current) comes here (`undef`:
        // nothing hit, no message).
        assert!(
            seen.version != 0 || self.code.mutant.is_some(),
            "{f}: called while its module is deleted"
        );
        self.entered(before, f, i, pid)
    }
    fn set_exports(&mut self, exported: &[FuncId]) {
        assert!(self.procs.is_empty(), "set_exports after processes ran");
        assert!(self.code.untouched(), "set_exports after code operations");
        // The code mutant is kept: nothing ran yet.
        let mutant = self.code.mutant;
        *self = RefEngine::with_exports_under(self.funcs(), exported, self.code.protocol);
        self.code.mutant = mutant;
    }
    fn ret(&mut self, pid: u64, call_traced: u64) {
        self.on_proc(pid, call_traced, |s, p| s.ret(p));
        self.tracers.take(); // `ret` promises no messages
    }
    fn unwind(&mut self, pid: u64, call_traced: u64) {
        // ERTS `next_catch` steps over call-trace return frames without charging them.
        self.on_proc(pid, call_traced, |_, p| {
            p.stack.clear();
            p.conts.clear();
            p.current = None;
        });
    }
    fn ret_value(&mut self, pid: u64, call_traced: u64, value: &Term) -> Vec<FrameMsg> {
        self.on_proc(pid, call_traced, |s, p| s.ret_with(p, value.clone()));
        self.tracers.take_frames(&self.funcs(), pid)
    }
    fn raise(&mut self, pid: u64, call_traced: u64, e: &Raise) -> Vec<FrameMsg> {
        self.on_proc(pid, call_traced, |s, p| {
            s.raise(p, e.class, e.reason.clone(), e.through)
        });
        self.tracers.take_frames(&self.funcs(), pid)
    }
    fn schedule(&mut self, pid: u64, call_traced: u64, into: bool) {
        self.on_proc(pid, call_traced, |s, p| {
            if into {
                s.schedule_in(p)
            } else {
                s.schedule_out(p)
            }
        });
    }
    fn advance(&mut self, dt: u64) {
        self.sched.advance(dt as i64);
    }
    fn alloc(&mut self, pid: u64, call_traced: u64, words: u64) {
        self.on_proc(pid, call_traced, |_, p| p.alloc(words as i64));
    }
    fn trace_info_term(&mut self, session: SessionId, mfa: &Mfa, key: InfoKey) -> Term {
        // The session-aware form also reports global breakpoints (`{traced, global}`).
        // The runner asks only about live sessions (the loader refuses the others).
        self.info_term_loaded(session, mfa, key)
    }
    fn is_patched(&mut self, f: FuncId) -> Option<bool> {
        // The first instruction of the function in its module's current version (`None`
        // while the module is deleted).
        let (m, i) = self.in_module(f);
        self.engine.is_patched_in(m, i)
    }
    fn check_at_rest(&mut self) -> Result<(), String> {
        // Processes waiting in a `receive` are in a version of their module: at rest otherwise.
        self.engine.check_at_rest_in_code()
    }
    fn is_export_patched(&mut self, f: FuncId) -> Option<bool> {
        // The export entry's dispatch word at the active code index (a function without
        // an export entry in the scenario has an unpatched one).
        let (m, i) = self.in_module(f);
        Some(self.code.is_exported(f) && self.engine.is_export_patched_in(m, i))
    }
    fn session_create(&mut self, name: &str) -> SessionId {
        self.engine
            .create_session(name)
            .unwrap_or_else(|e| panic!("create_session({name}): {e}"))
    }
    fn session_destroy(&mut self, session: SessionId) {
        let r = self.engine.destroy_session(session);
        assert_eq!(r, Ok(true), "destroy_session({session}) of a live session");
        self.code.on_load.remove(&session);
    }
}

/// The sessions of the oracle's call trace events `(session, pid, f)`, in order.
fn sessions_of(events: Vec<(SessionId, u64, FuncId)>) -> Vec<SessionId> {
    events.into_iter().map(|(s, _, _)| s).collect()
}

/// The sequential oracle (`bpspec_spec::Oracle`).
pub struct SpecOracle(pub Oracle);

impl SpecOracle {
    pub fn boxed(funcs: Vec<Mfa>) -> Box<dyn BreakpointEngine> {
        Box::new(SpecOracle(Oracle::new(funcs)))
    }
}

impl BreakpointEngine for SpecOracle {
    delegate!(0 {
        fn trace_pattern(&mut self, pattern: &Pattern, op: PatternOp, spec: &TraceSpec) -> Result<usize, PatternError>;
        fn on_load_pattern(&mut self, op: PatternOp, spec: &TraceSpec) -> Result<usize, PatternError>;
        fn on_load_info(&mut self, session: SessionId, key: InfoKey) -> Term;
        fn trace_info(&mut self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue;
        fn trace_info_term(&mut self, session: SessionId, mfa: &Mfa, key: InfoKey) -> Term;
        fn take_meta(&mut self) -> Vec<(u64, FuncId)>;
        fn set_exports(&mut self, exported: &[FuncId]);
        fn ret_value(&mut self, pid: u64, call_traced: u64, value: &Term) -> Vec<FrameMsg>;
        fn raise(&mut self, pid: u64, call_traced: u64, e: &Raise) -> Vec<FrameMsg>;
        fn ret(&mut self, pid: u64, call_traced: u64);
        fn unwind(&mut self, pid: u64, call_traced: u64);
    });
    fn name(&self) -> String {
        "sequential oracle".into()
    }
    fn call(&mut self, f: FuncId, pid: u64, call_traced: u64) -> Vec<SessionId> {
        sessions_of(self.0.call(f, pid, call_traced))
    }
    fn enter(&mut self, f: FuncId, pid: u64, call_traced: u64, how: Entry) -> Vec<SessionId> {
        sessions_of(self.0.enter(f, pid, call_traced, how))
    }
    fn supports(&self, feature: &Feature) -> bool {
        // Global trace (`spec/src/global.rs`); match specs (frames.rs); sessions
        // (sessions.rs); meta trace (meta.rs).
        timem_feature(feature)
            || *feature == Feature::GlobalTrace
            || *feature == Feature::MatchSpec
            || *feature == Feature::MetaTrace
            || matches!(feature, Feature::ProcessFlag(f) if f == "arity" || f == "return_to")
            || *feature == Feature::Caller
            || *feature == Feature::CodeLoading
            || *feature == Feature::OnLoadPattern
            || crate::sessions::sessions_feature(feature)
    }
    fn code_op(&mut self, op: crate::scenario::CodeOp, module: &str) -> bool {
        self.0.code_op(op, module)
    }
    fn is_loaded(&mut self, f: FuncId) -> bool {
        self.0.is_loaded(f)
    }
    fn wait_in(&mut self, pid: u64, f: FuncId) {
        self.0.wait_in(pid, f)
    }
    fn resume(&mut self, pid: u64) -> Option<bool> {
        self.0.resume(pid)
    }
    fn killed(&self, pid: u64) -> bool {
        self.0.killed(pid)
    }
    fn variant(&mut self, f: FuncId, pid: u64, old: bool) -> u8 {
        self.0.variant(f, pid, old)
    }
    fn set_return_to(&mut self, pid: u64, call_traced: u64, sessions: u64) {
        self.0.set_return_to(pid, call_traced, sessions)
    }
    fn callers(&mut self, f: FuncId, pid: u64, sessions: &[SessionId]) -> Vec<Option<FuncId>> {
        sessions.iter().map(|&s| self.0.caller(f, s, pid)).collect()
    }
    fn is_export_patched(&mut self, f: FuncId) -> Option<bool> {
        Some(self.0.is_export_patched(f))
    }
    fn schedule(&mut self, pid: u64, call_traced: u64, into: bool) {
        if into {
            self.0.schedule_in(pid, call_traced)
        } else {
            self.0.schedule_out(pid, call_traced)
        }
    }
    fn advance(&mut self, dt: u64) {
        self.0.advance(dt as i64)
    }
    fn alloc(&mut self, pid: u64, call_traced: u64, words: u64) {
        self.0.alloc(pid, call_traced, words as i64)
    }
    fn is_patched(&mut self, f: FuncId) -> Option<bool> {
        Some(self.0.is_patched(f))
    }
    fn session_create(&mut self, _name: &str) -> SessionId {
        self.0.create_session()
    }
    fn session_destroy(&mut self, session: SessionId) {
        assert!(
            self.0.destroy_session(session),
            "destroy_session({session}) of a live session"
        );
    }
}

/// Deliberately wrong oracles: each breaks one rule of the semantics. The conformance check
/// must tell each of them from the engine (tests/mutant_oracles.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrong {
    /// `pause` with call_count does nothing (the counter keeps running).
    PauseIgnored,
    /// Drops the ERTS quirk: `pause`/`restart` on a function whose node has no counter leave it
    /// without one, instead of creating a running counter.
    NoQuirk,
    /// Trace messages of several sessions come oldest session first.
    SessionOrderReversed,
    /// `restart` with call_time leaves the call_time counter as it is (no reset, not started).
    TimeRestartIgnored,
    /// Schedule-out does not charge the running time slice to the function being timed
    /// (visible only in durations).
    ScheduleOutUncharged,
    /// `restart` with call_memory leaves the call_memory counter as it is (no reset, not
    /// started): visible in counts, so a real OTP 26+ node catches it (not in [`Wrong::ALL`]:
    /// the op-level and scenario conformance runs of `ALL` draw no call_memory restarts).
    MemoryRestartIgnored,
    /// Global breakpoints also fire on local calls: every call of an exported function goes
    /// through its export entry.
    GlobalOnLocalCalls,
    /// A local pattern leaves the session's global trace on the matched exports in place (no
    /// local/global exclusion in that direction).
    LocalKeepsGlobal,
    /// A return_trace/exception_trace frame is not pushed when the top of the stack already is
    /// a trace frame (the call_time rule applied to return_trace): a function tail-called from
    /// a return-traced one sends no `return_from`.
    TailCallReusesReturnFrame,
    /// An exception passing an exception_trace frame sends no `exception_from` (the frame acts
    /// as a return_trace frame).
    ExceptionFromLost,
    /// `trace_info` (traced, call_count) in a session without a breakpoint on the function
    /// answers with the legacy session's breakpoint: one session's pattern leaks into another's
    /// trace_info.
    SessionInfoLeak,
    /// `session_destroy` also clears the other live sessions' breakpoints on every function
    /// where the destroyed session had one.
    DestroyClearsOthers,
    /// Meta trace messages only for call-traced processes (ERTS sends them for every process).
    MetaOnlyCallTraced,
    /// No `return_to` messages (the return_to frames are pushed but send nothing); not in
    /// [`Wrong::ALL`]: caught by the return_to corpus (oracle/tests/corpus.rs).
    ReturnToLost,
    /// `{message, {caller}}` always names the harness ("top"), not the function the call
    /// returns to; not in [`Wrong::ALL`]: caught by `caller_message.json`.
    CallerAlwaysTop,
    /// A `load` keeps the module's breakpoints on the new version (spec/src/code.rs CL1).
    LoadKeepsBreakpoints,
    /// A `delete` leaves the module's functions defined and callable (code.rs CL3).
    DeleteKeepsFunctions,
    /// A process resumed in an old version runs the current one (code.rs CL6).
    OldCodeIsCurrent,
    /// `load_changed` loads the first code: the changed bodies never run (code.rs CL7).
    ChangedBodiesIgnored,
    /// call_time/call_memory frames of a process in old code charge the new version (code.rs
    /// CL6).
    OldFramesCharge,
    /// `trace_info(on_load, all)` lists call_time and call_memory too (code.rs CL8).
    OnLoadInfoAllItems,
}

impl Wrong {
    pub const ALL: [Wrong; 9] = [
        Wrong::PauseIgnored,
        Wrong::NoQuirk,
        Wrong::SessionOrderReversed,
        Wrong::TimeRestartIgnored,
        Wrong::ScheduleOutUncharged,
        Wrong::GlobalOnLocalCalls,
        Wrong::LocalKeepsGlobal,
        Wrong::TailCallReusesReturnFrame,
        Wrong::ExceptionFromLost,
    ];
    /// The trace-frame mutants (need match specs, returns and raises to be caught).
    pub const FRAMES: [Wrong; 2] = [Wrong::TailCallReusesReturnFrame, Wrong::ExceptionFromLost];
    /// The call_time mutants (need call_time ops to be caught).
    pub const CALL_TIME: [Wrong; 2] = [Wrong::TimeRestartIgnored, Wrong::ScheduleOutUncharged];
    /// The call_memory mutants (caught by the call_memory corpus and by OTP 26+).
    pub const CALL_MEMORY: [Wrong; 1] = [Wrong::MemoryRestartIgnored];
    /// The return_to / `{caller}` mutants (caught by the corpus: oracle/tests/corpus.rs).
    pub const RETURN_TO: [Wrong; 2] = [Wrong::ReturnToLost, Wrong::CallerAlwaysTop];
    /// The global-trace mutants (need global patterns and remote calls to be caught).
    pub const GLOBAL: [Wrong; 2] = [Wrong::GlobalOnLocalCalls, Wrong::LocalKeepsGlobal];
    /// The session mutants: caught at scenario level, by scenarios with
    /// session_create/session_destroy ops (oracle/tests/sessions.rs); not in [`Wrong::ALL`],
    /// whose op-level check has no create/destroy step.
    pub const SESSIONS: [Wrong; 2] = [Wrong::SessionInfoLeak, Wrong::DestroyClearsOthers];
    /// The meta trace mutants (caught by `oracle/corpus/meta_untraced_process.json`).
    pub const META: [Wrong; 1] = [Wrong::MetaOnlyCallTraced];
    /// The code-loading mutants (caught by the corpus's code_*.json: oracle/tests/corpus.rs).
    pub const CODE: [Wrong; 6] = [
        Wrong::LoadKeepsBreakpoints,
        Wrong::DeleteKeepsFunctions,
        Wrong::OldCodeIsCurrent,
        Wrong::ChangedBodiesIgnored,
        Wrong::OldFramesCharge,
        Wrong::OnLoadInfoAllItems,
    ];
}

pub struct WrongOracle {
    inner: SpecOracle,
    funcs: Vec<Mfa>,
    wrong: Wrong,
    /// Meta messages kept so far (`Wrong::MetaOnlyCallTraced` drops some).
    meta_keep: Vec<(u64, FuncId)>,
}

impl WrongOracle {
    /// A [`Factory`] of `wrong` oracles.
    pub fn factory(wrong: Wrong) -> impl Fn(Vec<Mfa>) -> Box<dyn BreakpointEngine> {
        move |funcs| Box::new(WrongOracle::new(funcs, wrong))
    }

    pub fn new(funcs: Vec<Mfa>, wrong: Wrong) -> WrongOracle {
        let mut o = Oracle::new(funcs.clone());
        if wrong == Wrong::TailCallReusesReturnFrame {
            o.mutant_reuse_trace_frame();
        }
        match wrong {
            Wrong::LoadKeepsBreakpoints => o.mutant_code(CodeMutant::LoadKeepsBreakpoints),
            Wrong::DeleteKeepsFunctions => o.mutant_code(CodeMutant::DeleteKeepsFunctions),
            Wrong::OldCodeIsCurrent => o.mutant_code(CodeMutant::OldCodeIsCurrent),
            Wrong::ChangedBodiesIgnored => o.mutant_code(CodeMutant::ChangedBodiesIgnored),
            Wrong::OldFramesCharge => o.mutant_code(CodeMutant::OldFramesCharge),
            Wrong::OnLoadInfoAllItems => o.mutant_code(CodeMutant::OnLoadInfoAllItems),
            _ => {}
        }
        WrongOracle {
            inner: SpecOracle(o),
            funcs,
            wrong,
            meta_keep: Vec::new(),
        }
    }

    /// `spec`'s pattern with only the flags `rest` (the mutant dropped one; the others of the
    /// list still apply): with none left, it only matches.
    fn pattern_keeping(
        &mut self,
        pattern: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
        rest: FlagSet,
    ) -> Result<usize, PatternError> {
        if rest == FlagSet::default() {
            return Ok(pattern.matching(&self.funcs).len());
        }
        let spec = TraceSpec::counters(rest).session(spec.session);
        self.inner.trace_pattern(pattern, op, &spec)
    }
}

impl BreakpointEngine for WrongOracle {
    delegate!(inner {
        fn trace_info_term(&mut self, session: SessionId, mfa: &Mfa, key: InfoKey) -> Term;
        fn set_exports(&mut self, exported: &[FuncId]);
        fn is_patched(&mut self, f: FuncId) -> Option<bool>;
        fn is_export_patched(&mut self, f: FuncId) -> Option<bool>;
        fn ret(&mut self, pid: u64, call_traced: u64);
        fn unwind(&mut self, pid: u64, call_traced: u64);
        fn advance(&mut self, dt: u64);
        fn alloc(&mut self, pid: u64, call_traced: u64, words: u64);
        fn session_create(&mut self, name: &str) -> SessionId;
        fn on_load_pattern(&mut self, op: PatternOp, spec: &TraceSpec) -> Result<usize, PatternError>;
        fn on_load_info(&mut self, session: SessionId, key: InfoKey) -> Term;
    });
    fn supports(&self, feature: &Feature) -> bool {
        self.inner.supports(feature)
    }
    fn code_op(&mut self, op: crate::scenario::CodeOp, module: &str) -> bool {
        self.inner.code_op(op, module)
    }
    fn is_loaded(&mut self, f: FuncId) -> bool {
        self.inner.is_loaded(f)
    }
    fn wait_in(&mut self, pid: u64, f: FuncId) {
        self.inner.wait_in(pid, f)
    }
    fn resume(&mut self, pid: u64) -> Option<bool> {
        self.inner.resume(pid)
    }
    fn killed(&self, pid: u64) -> bool {
        self.inner.killed(pid)
    }
    fn variant(&mut self, f: FuncId, pid: u64, old: bool) -> u8 {
        self.inner.variant(f, pid, old)
    }
    fn name(&self) -> String {
        format!("wrong oracle ({:?})", self.wrong)
    }
    fn trace_pattern(
        &mut self,
        pattern: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        // The mutants act on local flag lists; global, match-spec and meta patterns pass.
        if spec.global || spec.ms.is_some() || spec.meta.is_some() {
            return self.inner.trace_pattern(pattern, op, spec);
        }
        let flags = spec.flags;
        flags.check(op)?;
        let restart = op == PatternOp::Restart;
        if self.wrong == Wrong::MemoryRestartIgnored && restart && flags.call_memory {
            let rest = FlagSet {
                call_memory: false,
                ..flags
            };
            return self.pattern_keeping(pattern, op, spec, rest);
        }
        if self.wrong == Wrong::LocalKeepsGlobal {
            let keep = self.inner.0.exports().clone();
            let r = self.inner.trace_pattern(pattern, op, spec);
            self.inner.0.restore_exports(keep);
            return r;
        }
        if self.wrong == Wrong::TimeRestartIgnored && restart && flags.call_time {
            let rest = FlagSet {
                call_time: false,
                ..flags
            };
            return self.pattern_keeping(pattern, op, spec, rest);
        }
        let counter_op = flags.call_count && matches!(op, PatternOp::Pause | PatternOp::Restart);
        match self.wrong {
            Wrong::PauseIgnored if flags.call_count && op == PatternOp::Pause => {
                // The other flags of the list still apply.
                let rest = FlagSet {
                    call_count: false,
                    ..flags
                };
                self.pattern_keeping(pattern, op, spec, rest)
            }
            Wrong::NoQuirk if counter_op => {
                let session = spec.session;
                let matched = pattern.matching(&self.funcs);
                for &f in &matched {
                    let mfa = self.funcs[f].clone();
                    let node_without_counter =
                        self.inner.trace_info(session, &mfa, InfoItem::CallCount)
                            == InfoValue::False
                            && self.inner.trace_info(session, &mfa, InfoItem::Traced)
                                != InfoValue::False;
                    if !node_without_counter {
                        self.inner.trace_pattern(&Pattern::exact(&mfa), op, spec)?;
                    }
                }
                Ok(matched.len())
            }
            _ => self.inner.trace_pattern(pattern, op, spec),
        }
    }
    fn set_return_to(&mut self, pid: u64, call_traced: u64, sessions: u64) {
        self.inner.set_return_to(pid, call_traced, sessions)
    }
    fn callers(&mut self, f: FuncId, pid: u64, sessions: &[SessionId]) -> Vec<Option<FuncId>> {
        let mut v = self.inner.callers(f, pid, sessions);
        if self.wrong == Wrong::CallerAlwaysTop {
            v.iter_mut().flatten().for_each(|c| *c = crate::frames::TOP);
        }
        v
    }
    fn take_meta(&mut self) -> Vec<(u64, FuncId)> {
        self.meta_before();
        std::mem::take(&mut self.meta_keep)
    }
    fn ret_value(&mut self, pid: u64, call_traced: u64, value: &Term) -> Vec<FrameMsg> {
        let mut v = self.inner.ret_value(pid, call_traced, value);
        if self.wrong == Wrong::ReturnToLost {
            v.retain(|m| m.event != crate::frames::FrameEvent::ReturnTo);
        }
        v
    }
    fn raise(&mut self, pid: u64, call_traced: u64, e: &Raise) -> Vec<FrameMsg> {
        let mut v = self.inner.raise(pid, call_traced, e);
        if self.wrong == Wrong::ExceptionFromLost {
            v.retain(|m| m.event != crate::frames::FrameEvent::ExceptionFrom);
        }
        if self.wrong == Wrong::ReturnToLost {
            v.retain(|m| m.event != crate::frames::FrameEvent::ReturnTo);
        }
        v
    }
    fn enter(&mut self, f: FuncId, pid: u64, call_traced: u64, how: Entry) -> Vec<SessionId> {
        let how = if self.wrong == Wrong::GlobalOnLocalCalls && self.inner.0.is_exported(f) {
            how.remote()
        } else {
            how
        };
        self.meta_before();
        let mut v = self.inner.enter(f, pid, call_traced, how);
        self.meta_after(call_traced);
        if self.wrong == Wrong::SessionOrderReversed && !how.remote {
            v.reverse();
        }
        v
    }
    fn schedule(&mut self, pid: u64, call_traced: u64, into: bool) {
        // The oracle charges on schedule-out only for a call-traced process: hide the flag.
        let ct = if self.wrong == Wrong::ScheduleOutUncharged && !into {
            0
        } else {
            call_traced
        };
        self.inner.schedule(pid, ct, into)
    }
    fn call(&mut self, f: FuncId, pid: u64, call_traced: u64) -> Vec<SessionId> {
        if self.wrong == Wrong::GlobalOnLocalCalls && self.inner.0.is_exported(f) {
            return sessions_of(self.inner.0.call_remote(f, pid, call_traced));
        }
        let mut v = self.inner.call(f, pid, call_traced);
        if self.wrong == Wrong::SessionOrderReversed {
            v.reverse();
        }
        v
    }
    fn trace_info(&mut self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        if self.wrong == Wrong::SessionInfoLeak
            && session != 0
            && !crate::sessions::has_node(&mut self.inner, session, mfa)
        {
            return self.inner.trace_info(0, mfa, item);
        }
        self.inner.trace_info(session, mfa, item)
    }
    fn session_destroy(&mut self, session: SessionId) {
        let had: Vec<Mfa> = self
            .funcs
            .iter()
            .filter(|m| crate::sessions::has_node(&mut self.inner, session, m))
            .cloned()
            .collect();
        self.inner.session_destroy(session);
        if self.wrong == Wrong::DestroyClearsOthers {
            crate::sessions::clear_all_sessions(&mut self.inner, &had);
        }
    }
}
