//! Trace sessions in the sequential oracle (ERTS `trace:session_create/3`,
//! `trace:session_destroy/1`, OTP 27+): which ids are handed out, and what a destroy removes.
//!
//! * Session 0 (legacy) always exists. [`Oracle::create_session`] hands out 1, 2, ... in
//!   order; ids are never reused (ERTS guards reuse with weak ids).
//! * [`Oracle::destroy_session`] removes every breakpoint node of the session, and only of that
//!   session: other sessions' nodes on the same functions, their counters and their order on
//!   the chain stay as they were (trace_session_SUITE: destroying one session leaves the
//!   others' tracing). Counters and call_time/call_memory data of the session go with it.
//! * Process trace flags are the caller's (the runner clears the session's bit in every
//!   process); pbts a process keeps for a destroyed session are charged to nothing, since
//!   `timem::charge` skips a missing node, as ERTS skips a breakpoint that is gone.
//!
//! The op-level conformance (`oracle/src/conformance.rs`) uses session ids 1..3 without creating
//! them, as the engine's numeric API allows; an oracle run must not mix that with
//! [`Oracle::create_session`] (checked: creating an id that already has nodes panics).

use crate::Oracle;
use std::collections::BTreeSet;

/// Bound on session ids: processes keep one call-traced bit per session in a `u64`.
pub const MAX_SESSIONS: u32 = 64;

/// The oracle's session bookkeeping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionTable {
    /// Ids handed out by `create_session` so far (1..=created).
    created: u32,
    /// Destroyed ids.
    dead: BTreeSet<u32>,
}

impl Oracle {
    /// `trace:session_create/3`: a fresh, alive session without breakpoints.
    pub fn create_session(&mut self) -> u32 {
        let id = self.sessions.created + 1;
        assert!(
            id < MAX_SESSIONS,
            "sequential oracle: more than {} sessions",
            MAX_SESSIONS - 1
        );
        assert!(
            !self.nodes.keys().any(|&(_, s)| s == id),
            "sequential oracle: session {id} was used before it was created"
        );
        self.sessions.created = id;
        id
    }

    /// Is `s` alive (legacy, or created and not destroyed)?
    pub fn session_alive(&self, s: u32) -> bool {
        s == 0 || (s <= self.sessions.created && !self.sessions.dead.contains(&s))
    }

    /// `trace:session_destroy/1`: `false` if `s` is not alive (ERTS returns false for a
    /// destroyed session), else removes the session's breakpoints and returns `true`.
    /// The legacy session cannot be destroyed (panics: the loader refuses it).
    pub fn destroy_session(&mut self, s: u32) -> bool {
        assert!(
            s != 0,
            "sequential oracle: the legacy session cannot be destroyed"
        );
        if !self.session_alive(s) {
            return false;
        }
        let before = self.nodes.len();
        self.nodes.retain(|&(_, sess), _| sess != s);
        debug_assert!(self.nodes.len() <= before);
        debug_assert!(self.nodes.keys().all(|&(_, sess)| sess != s));
        self.sessions.dead.insert(s);
        self.forget_on_load(s);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bpspec_reference::{InfoItem, InfoValue, Mfa, Pattern, PatternOp, TraceSpec};

    fn spec(s: u32) -> TraceSpec {
        TraceSpec::local().call_count().session(s)
    }

    #[test]
    fn destroy_removes_only_that_sessions_breakpoints() {
        let f = Mfa::new("m", "f", 0);
        let mut o = Oracle::new(vec![f.clone()]);
        let s1 = o.create_session();
        let s2 = o.create_session();
        assert_eq!((s1, s2), (1, 2));
        let p = Pattern::exact(&f);
        for s in [0, s1, s2] {
            assert_eq!(o.trace_pattern(&p, PatternOp::True, &spec(s)), Ok(1));
        }
        // Traced in every session: newest node first.
        let order: Vec<u32> = o.call(0, 1, 0b111).into_iter().map(|e| e.0).collect();
        assert_eq!(order, vec![s2, s1, 0]);
        assert!(o.destroy_session(s1));
        assert!(!o.destroy_session(s1), "a second destroy is false");
        assert!(!o.session_alive(s1) && o.session_alive(s2) && o.session_alive(0));
        let order: Vec<u32> = o.call(0, 1, 0b101).into_iter().map(|e| e.0).collect();
        assert_eq!(order, vec![s2, 0]);
        assert_eq!(
            o.trace_info(0, &f, InfoItem::CallCount),
            InfoValue::Count(2)
        );
        assert_eq!(
            o.trace_info(s2, &f, InfoItem::CallCount),
            InfoValue::Count(2)
        );
        assert_eq!(o.trace_info(s1, &f, InfoItem::Traced), InfoValue::False);
        // Ids are not reused.
        assert_eq!(o.create_session(), 3);
    }
}
