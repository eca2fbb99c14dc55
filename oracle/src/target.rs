//! [`BreakpointEngine`]: what another breakpoint implementation provides to be run by bpspec's
//! scenario runner and conformance checks (docs/conformance.md), and its implementations:
//! [`RefEngine`] (our concurrent engine, driven by one scheduler thread), [`SpecOracle`] (the
//! sequential oracle in `bpspec-spec`), and [`WrongOracle`] (deliberately broken oracles that
//! the conformance check must reject).

use crate::scenario::Feature;
use bpspec_reference::{
    Engine, EngineConfig, FuncId, InfoItem, InfoValue, Mfa, Pattern, PatternError, PatternOp,
    Process, Qsbr, Scheduler, SessionId, TraceFlags,
};
use bpspec_spec::Oracle;
use std::sync::Arc;

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
    /// `erlang:trace_pattern/3` in `session`: the number of matched functions, or the error.
    fn trace_pattern(
        &mut self,
        session: SessionId,
        pattern: &Pattern,
        op: PatternOp,
        flags: TraceFlags,
    ) -> Result<usize, PatternError>;
    /// Process `pid`, call-traced in the sessions whose bits are set in `call_traced`, enters
    /// function `f`. Returns the sessions that deliver a local `call` trace message, in
    /// delivery order.
    fn call(&mut self, f: FuncId, pid: u64, call_traced: u64) -> Vec<SessionId>;
    /// `trace_info/2` (or `/3` with a session).
    fn trace_info(&mut self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue;
    /// Is `f`'s first instruction the breakpoint? `None` if the engine does not say.
    fn is_patched(&mut self, _f: FuncId) -> Option<bool> {
        None
    }
    /// The engine's own at-rest invariant (checked after every trace_pattern).
    fn check_at_rest(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// Builds an engine over a function universe.
pub type Factory<'a> = &'a dyn Fn(Vec<Mfa>) -> Box<dyn BreakpointEngine>;

/// Our engine, with one managed scheduler that sleeps between calls (so `trace_pattern`'s waits
/// never wait for it).
pub struct RefEngine {
    engine: Arc<Engine<Qsbr>>,
    sched: Scheduler<Qsbr>,
}

impl RefEngine {
    pub fn new(funcs: Vec<Mfa>) -> RefEngine {
        let engine = Arc::new(Engine::<Qsbr>::new(EngineConfig {
            functions: funcs,
            schedulers: 1,
            mutant: None,
        }));
        let mut sched = Scheduler::start(engine.clone(), 0);
        sched.record = false;
        sched.sleep();
        RefEngine { engine, sched }
    }
    pub fn boxed(funcs: Vec<Mfa>) -> Box<dyn BreakpointEngine> {
        Box::new(RefEngine::new(funcs))
    }
}

impl BreakpointEngine for RefEngine {
    fn name(&self) -> String {
        "reference engine".into()
    }
    fn trace_pattern(
        &mut self,
        session: SessionId,
        pattern: &Pattern,
        op: PatternOp,
        flags: TraceFlags,
    ) -> Result<usize, PatternError> {
        self.engine.trace_pattern(session, pattern, op, flags)
    }
    fn call(&mut self, f: FuncId, pid: u64, call_traced: u64) -> Vec<SessionId> {
        assert!(f < self.engine.code.len(), "function {f} out of range");
        let before = self.sched.events.len();
        self.sched.wake();
        self.sched.call(f, &Process { pid, call_traced });
        self.sched.sleep();
        let evs = self.sched.events.split_off(before);
        evs.iter()
            .map(|e| {
                assert!(e.pid == pid && e.func == f, "event for another call: {e:?}");
                e.session
            })
            .collect()
    }
    fn trace_info(&mut self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        self.engine.trace_info(session, mfa, item)
    }
    fn is_patched(&mut self, f: FuncId) -> Option<bool> {
        Some(self.engine.is_patched(f))
    }
    fn check_at_rest(&mut self) -> Result<(), String> {
        self.engine.check_at_rest()
    }
}

/// The sequential oracle (`bpspec_spec::Oracle`).
pub struct SpecOracle(pub Oracle);

impl SpecOracle {
    pub fn boxed(funcs: Vec<Mfa>) -> Box<dyn BreakpointEngine> {
        Box::new(SpecOracle(Oracle::new(funcs)))
    }
}

impl BreakpointEngine for SpecOracle {
    fn name(&self) -> String {
        "sequential oracle".into()
    }
    fn trace_pattern(
        &mut self,
        session: SessionId,
        pattern: &Pattern,
        op: PatternOp,
        flags: TraceFlags,
    ) -> Result<usize, PatternError> {
        self.0.trace_pattern(session, pattern, op, flags)
    }
    fn call(&mut self, f: FuncId, pid: u64, call_traced: u64) -> Vec<SessionId> {
        self.0
            .call(f, pid, call_traced)
            .into_iter()
            .map(|(s, _, _)| s)
            .collect()
    }
    fn trace_info(&mut self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        self.0.trace_info(session, mfa, item)
    }
    fn is_patched(&mut self, f: FuncId) -> Option<bool> {
        Some(self.0.is_patched(f))
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
}

impl Wrong {
    pub const ALL: [Wrong; 3] = [
        Wrong::PauseIgnored,
        Wrong::NoQuirk,
        Wrong::SessionOrderReversed,
    ];
}

pub struct WrongOracle {
    inner: SpecOracle,
    funcs: Vec<Mfa>,
    wrong: Wrong,
}

impl WrongOracle {
    pub fn new(funcs: Vec<Mfa>, wrong: Wrong) -> WrongOracle {
        WrongOracle {
            inner: SpecOracle(Oracle::new(funcs.clone())),
            funcs,
            wrong,
        }
    }
}

impl BreakpointEngine for WrongOracle {
    fn name(&self) -> String {
        format!("wrong oracle ({:?})", self.wrong)
    }
    fn trace_pattern(
        &mut self,
        session: SessionId,
        pattern: &Pattern,
        op: PatternOp,
        flags: TraceFlags,
    ) -> Result<usize, PatternError> {
        flags.check(op)?;
        let counter_op = flags.call_count && matches!(op, PatternOp::Pause | PatternOp::Restart);
        match self.wrong {
            Wrong::PauseIgnored if flags.call_count && op == PatternOp::Pause => {
                Ok(pattern.matching(&self.funcs).len())
            }
            Wrong::NoQuirk if counter_op => {
                let matched = pattern.matching(&self.funcs);
                for &f in &matched {
                    let mfa = self.funcs[f].clone();
                    let node_without_counter =
                        self.inner.trace_info(session, &mfa, InfoItem::CallCount)
                            == InfoValue::False
                            && self.inner.trace_info(session, &mfa, InfoItem::Traced)
                                != InfoValue::False;
                    if !node_without_counter {
                        self.inner
                            .trace_pattern(session, &Pattern::exact(&mfa), op, flags)?;
                    }
                }
                Ok(matched.len())
            }
            _ => self.inner.trace_pattern(session, pattern, op, flags),
        }
    }
    fn call(&mut self, f: FuncId, pid: u64, call_traced: u64) -> Vec<SessionId> {
        let mut v = self.inner.call(f, pid, call_traced);
        if self.wrong == Wrong::SessionOrderReversed {
            v.reverse();
        }
        v
    }
    fn trace_info(&mut self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        self.inner.trace_info(session, mfa, item)
    }
    fn is_patched(&mut self, f: FuncId) -> Option<bool> {
        self.inner.is_patched(f)
    }
}
