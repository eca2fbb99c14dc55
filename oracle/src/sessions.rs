//! Trace sessions in scenarios (the engine's sessions: docs/sessions.md):
//! the runner's map from a scenario's sessions to the engine's session ids, the helpers of the
//! session mutants of [`crate::target::WrongOracle`], and the Erlang driver's op terms for
//! sessions (`trace:session_create/3`, `trace:function/4`, `trace:process/4`, `trace:info/3`,
//! `trace:session_destroy/1`, OTP 27+).
//!
//! The engine chooses its session ids ([`BreakpointEngine::session_create`]); the runner names
//! sessions by their index in `$.sessions` (0 = legacy) and translates both ways, so another
//! implementation may number its sessions as it likes (below 64: a process's call-traced
//! sessions are the bits of a `u64`).

use crate::scenario::{Feature, LOp, Loaded};
use crate::target::{BreakpointEngine, SpecOracle};
use bpspec_reference::{
    FlagSet, InfoItem, InfoKey, InfoValue, Mfa, Pattern, PatternOp, SessionId, Term, TraceSpec,
};

/// Sessions are run by the runner, our engine and the sequential oracle.
pub fn sessions_feature(feature: &Feature) -> bool {
    *feature == Feature::Sessions
}

/// Per scenario session (index in [`Loaded::sessions`]), its engine id while it is alive.
#[derive(Clone, Debug)]
pub struct SessionMap {
    ids: Vec<Option<SessionId>>,
}

impl SessionMap {
    /// Only the legacy session (engine id 0) exists at the start.
    pub fn new(sc: &Loaded) -> SessionMap {
        let mut ids = vec![None; sc.sessions.len()];
        ids[0] = Some(0);
        SessionMap { ids }
    }

    /// The engine id of live scenario session `s` (the loader refuses ops on dead sessions).
    pub fn id(&self, s: u32) -> SessionId {
        self.ids[s as usize]
            .unwrap_or_else(|| panic!("session {s} is not alive (the loader checks this)"))
    }

    /// The scenario's name of the live session with engine id `id`.
    pub fn name<'a>(&self, sc: &'a Loaded, id: SessionId) -> &'a str {
        let ix = self
            .ids
            .iter()
            .position(|x| *x == Some(id))
            .unwrap_or_else(|| panic!("engine session {id} is not a live session of the scenario"));
        &sc.sessions[ix]
    }

    /// `session_create` op: ask the engine for a fresh id; it must be new among the live ones,
    /// fit in a process's bit set, and not be the legacy session's.
    pub fn create(
        &mut self,
        sc: &Loaded,
        engine: &mut dyn BreakpointEngine,
        s: u32,
    ) -> Result<(), String> {
        assert!(
            self.ids[s as usize].is_none(),
            "session {s} created twice (the loader checks this)"
        );
        let id = engine.session_create(&sc.sessions[s as usize]);
        if id == 0 || id >= 64 || self.ids.contains(&Some(id)) {
            return Err(format!(
                "{}: session_create({}) returned id {id}, which is 0, not below 64 or already in use",
                engine.name(),
                sc.sessions[s as usize]
            ));
        }
        self.ids[s as usize] = Some(id);
        Ok(())
    }

    /// `session_destroy` op: the engine clears the session's breakpoints; every process loses
    /// its trace flags in it (ERTS removes the session's tracer refs from the processes).
    pub fn destroy(&mut self, engine: &mut dyn BreakpointEngine, s: u32, traced: &mut [u64]) {
        let id = self.id(s);
        assert!(
            id != 0,
            "the legacy session is never destroyed (the loader checks this)"
        );
        engine.session_destroy(id);
        for t in traced.iter_mut() {
            *t &= !(1u64 << id);
        }
        self.ids[s as usize] = None;
    }
}

/// Does `session` have a breakpoint node on `mfa` in the sequential oracle (any flag)?
pub fn has_node(o: &mut SpecOracle, session: SessionId, mfa: &Mfa) -> bool {
    let f = Term::Atom("false");
    let off = |t: Term| matches!(&t, Term::Tuple(p) if p.len() == 2 && p[1] == f);
    o.0.trace_info(session, mfa, InfoItem::Traced) != InfoValue::False
        || o.0.trace_info(session, mfa, InfoItem::CallCount) != InfoValue::False
        || !off(o.0.trace_info_term(session, mfa, InfoKey::CallTime))
        || !off(o.0.trace_info_term(session, mfa, InfoKey::CallMemory))
}

/// Clear every live session's breakpoints on `funcs` (the `DestroyClearsOthers` mutant).
pub fn clear_all_sessions(o: &mut SpecOracle, funcs: &[Mfa]) {
    let all = FlagSet {
        local: true,
        call_count: true,
        call_time: true,
        call_memory: true,
    };
    let alive: Vec<SessionId> = (0..64).filter(|&s| o.0.session_alive(s)).collect();
    for s in alive {
        for m in funcs {
            let spec = TraceSpec::from(all).session(s);
            o.0.trace_pattern(&Pattern::exact(m), PatternOp::False, &spec)
                .expect("false with every flag is valid");
        }
    }
}

// ---- The Erlang driver (oracle/erlang/bpspec_driver.erl, "Sessions").

/// The driver's term for a session op: `{session_create, Name}`, `{session_destroy, Name}`.
pub fn erl_session_op(sc: &Loaded, op: &LOp) -> String {
    match op {
        LOp::SessionCreate(s) => format!("{{session_create, '{}'}}", sc.sessions[*s as usize]),
        LOp::SessionDestroy(s) => format!("{{session_destroy, '{}'}}", sc.sessions[*s as usize]),
        other => panic!("not a session op: {other:?}"),
    }
}

/// `inner` (the driver term of `op`) run in a session: ops naming a session other than the
/// legacy one become `{in_session, Name, Inner}` (the driver then uses the `trace` module).
pub fn erl_in_session(sc: &Loaded, op: &LOp, inner: String) -> String {
    let session = match op {
        LOp::TracePattern { session, .. }
        | LOp::OnLoadPattern { session, .. }
        | LOp::OnLoadInfo { session, .. }
        | LOp::TraceInfo { session, .. }
        | LOp::TraceFlags { session, .. } => *session,
        _ => 0,
    };
    if session == 0 {
        inner
    } else {
        format!(
            "{{in_session, '{}', {inner}}}",
            sc.sessions[session as usize]
        )
    }
}
