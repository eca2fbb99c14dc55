//! Trace sessions (ERTS `ErtsTraceSession`, OTP 27+): create, destroy, the state the hit path
//! checks, and the session-wide tracer.
//!
//! * Session 0 is the legacy session; it always exists and cannot be destroyed.
//! * [`Engine::create_session`] hands out a fresh id. Ids are never reused (ERTS guards reuse
//!   with `weak_id`s; a never-reused id gives the same guarantee to frames and pbts that keep a
//!   session id after the session is gone). For the numeric API of the first issues, an id that
//!   was never created is created on first use (docs/deviations.md).
//! * [`Engine::destroy_session`]: state ALIVE → CLEARING (its breakpoints are inert from the
//!   next hit that sees the store, and from W1 on for every hit), then every pattern of the
//!   session is cleared through the normal sequence (commit, uninstall, consolidate, free),
//!   the session tracer is unpublished and freed after a wait, and the state becomes DEAD.
//!   Every later query about the session fails with [`SessionError::Destroyed`].

use crate::bp::SessionId;
use crate::code::FuncId;
use crate::engine::Engine;
use crate::export::Area;
use crate::mutant::{self, Mutant};
use crate::ordering::Site;
use crate::pattern::PatternOp;
use crate::progress::ThreadProgress;
use crate::sync::{
    lock, ord, AtomicPtr, AtomicU32, Mutex,
    Ordering::{Acquire, Relaxed, Release},
    CHECKED,
};
use crate::term::Term;
use crate::tracer::{Enabled, TraceTag, TracerCell, TracerSpec};
use std::fmt;

/// Room for sessions: process flags keep one bit per session (`Process::call_traced`).
pub const MAX_SESSIONS: usize = 64;

/// `erts_atomic_t state` values (UNUSED is this engine's "never created").
pub mod state {
    pub const UNUSED: u32 = 0;
    pub const ALIVE: u32 = 1;
    pub const CLEARING: u32 = 2;
    pub const DEAD: u32 = 3;
}

/// Why a session operation was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// The id is outside the engine's sessions (`0..MAX_SESSIONS`; a model's engine may have
    /// room for fewer, [`Engine::new_with_sessions`]).
    OutOfRange { session: SessionId },
    /// The session was destroyed (or is being destroyed): ERTS answers `badarg`.
    Destroyed { session: SessionId },
    /// Session 0 cannot be destroyed.
    Legacy,
    /// Every id has been used.
    Exhausted,
    /// A per-process tracer in a session that has a session tracer (ERTS: badarg).
    TracerConflict { session: SessionId },
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::OutOfRange { session } => {
                write!(f, "badarg: session {session} out of range (0..{MAX_SESSIONS})")
            }
            SessionError::Destroyed { session } => {
                write!(f, "badarg: trace session {session} has been destroyed")
            }
            SessionError::Legacy => write!(f, "badarg: the legacy session 0 cannot be destroyed"),
            SessionError::Exhausted => {
                write!(f, "system_limit: all {MAX_SESSIONS} session ids are used")
            }
            SessionError::TracerConflict { session } => write!(
                f,
                "badarg: session {session} has a session tracer; a per-process tracer is not allowed"
            ),
        }
    }
}

impl std::error::Error for SessionError {}

/// One session.
pub struct SessionSlot {
    /// Read relaxed on the hit path (ERTS `erts_is_trace_session_alive`).
    pub(crate) state: AtomicU32,
    /// The session tracer, or null. Acquire on the hit path, Release when published.
    pub(crate) tracer: AtomicPtr<TracerCell>,
}

/// All sessions.
pub struct Sessions {
    pub(crate) slots: Vec<SessionSlot>,
    /// `erts_trace_session_list_lock`: names, and creation (stager-independent).
    names: Mutex<Vec<Option<String>>>,
    /// Checked builds: freed tracer cells, poisoned, kept until the engine goes. Boxed so each
    /// stays at the address a late reader would use.
    #[allow(clippy::vec_box)]
    graveyard: Mutex<Vec<Box<TracerCell>>>,
    /// The engine's mutant (for the site mutants of the tracer orderings).
    mutant: Option<crate::Mutant>,
}

impl Sessions {
    /// Room for the sessions `0..room` (`room` at most [`MAX_SESSIONS`]; ids from `room` on are
    /// out of range). [`Engine::new`] makes room for all; a model makes room for the sessions
    /// its scenario uses ([`Engine::new_with_sessions`]), because under loom and shuttle every
    /// slot's two atomics are model objects the checker keeps and visits in every execution.
    pub(crate) fn new(mutant: Option<crate::Mutant>, room: usize) -> Sessions {
        assert!(
            (1..=MAX_SESSIONS).contains(&room),
            "room for 1 to {MAX_SESSIONS} sessions, not {room}"
        );
        let slots = (0..room)
            .map(|i| SessionSlot {
                state: AtomicU32::new(if i == 0 { state::ALIVE } else { state::UNUSED }),
                tracer: AtomicPtr::new(std::ptr::null_mut()),
            })
            .collect();
        let mut names = vec![None; room];
        names[0] = Some("legacy".to_string());
        Sessions {
            slots,
            names: Mutex::new(names),
            graveyard: Mutex::new(Vec::new()),
            mutant,
        }
    }

    /// Hit path: is the session alive? (Relaxed: a destroy's CLEARING store reaches every
    /// scheduler by the next wait's fence at the latest; until then the old, still-consistent
    /// view is used, as in ERTS.)
    /// The legacy session 0 cannot be destroyed, so its state is not even loaded (which also
    /// keeps the single-session models' schedules as they were before sessions existed).
    #[inline]
    pub(crate) fn is_alive(&self, s: SessionId) -> bool {
        s == 0 || self.slots[s as usize].state.load(Relaxed) == state::ALIVE
    }

    pub fn state(&self, s: SessionId) -> u32 {
        self.slots
            .get(s as usize)
            .map_or(state::DEAD, |x| x.state.load(Relaxed))
    }

    /// Hit path: the session tracer, valid until this scheduler's next progress point.
    pub(crate) fn tracer(&self, s: SessionId) -> Option<&TracerCell> {
        // Acquire: pairs with the Release store in `set_session_tracer`, so the cell's contents
        // (written before publication) are visible.
        let p =
            self.slots[s as usize]
                .tracer
                .load(ord(self.mutant, Site::SessionTracerLoad, Acquire));
        // SAFETY: a published cell is freed only after it was unpublished and a wait let every
        // scheduler pass a progress point (ST2 in docs/sessions.md); this hit began after our last
        // one. The liveness word catches a violation (the mutant `tracer-free-without-wait`).
        let c = unsafe { p.as_ref() }?;
        c.live.assert_live(&|| format!("session {s} tracer"));
        Some(c)
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        for s in &self.slots {
            let p = s.tracer.swap(std::ptr::null_mut(), Relaxed);
            if !p.is_null() {
                // SAFETY: exclusive access at drop; p came from Box::into_raw.
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}

impl<P: ThreadProgress> Engine<P> {
    /// `trace:session_create/3`: a new session, alive, with no patterns and no tracer.
    pub fn create_session(&self, name: &str) -> Result<SessionId, SessionError> {
        let mut names = lock(&self.sessions.names);
        for (i, slot) in self.sessions.slots.iter().enumerate().skip(1) {
            if slot.state.load(Relaxed) == state::UNUSED {
                slot.state.store(state::ALIVE, Relaxed);
                names[i] = Some(name.to_string());
                return Ok(i as SessionId);
            }
        }
        Err(SessionError::Exhausted)
    }

    /// Check that `s` may be used (creating a never-used id implicitly).
    pub fn check_session(&self, s: SessionId) -> Result<(), SessionError> {
        let slot = self
            .sessions
            .slots
            .get(s as usize)
            .ok_or(SessionError::OutOfRange { session: s })?;
        match slot.state.load(Relaxed) {
            state::ALIVE => Ok(()),
            state::UNUSED => {
                let mut names = lock(&self.sessions.names);
                if slot
                    .state
                    .compare_exchange(state::UNUSED, state::ALIVE, Relaxed, Relaxed)
                    .is_ok()
                {
                    names[s as usize] = Some(format!("session{s}"));
                    return Ok(());
                }
                drop(names);
                self.check_session(s)
            }
            _ => Err(SessionError::Destroyed { session: s }),
        }
    }

    /// Is `s` alive (no implicit creation)?
    pub fn session_is_alive(&self, s: SessionId) -> bool {
        self.sessions.state(s) == state::ALIVE
    }

    /// `trace:session_info/1`-like: the live sessions (id, name), oldest first.
    pub fn session_info(&self) -> Vec<(SessionId, String)> {
        let names = lock(&self.sessions.names);
        (0..self.sessions.slots.len())
            .filter(|&i| self.sessions.slots[i].state.load(Relaxed) == state::ALIVE)
            .map(|i| (i as SessionId, names[i].clone().unwrap_or_default()))
            .collect()
    }

    /// Set (or with `None` remove) the session tracer. The candidate is asked `trace_status`
    /// first (D3); `remove` means it is not installed (`Ok(false)`). The old tracer is
    /// unpublished at once and freed only after a wait for thread progress (ST2).
    pub fn set_session_tracer(
        &self,
        s: SessionId,
        tracer: Option<TracerSpec>,
    ) -> Result<bool, SessionError> {
        self.check_session(s)?;
        let _st = self.seize();
        self.check_session(s)?;
        let fresh = match tracer {
            Some(spec) => {
                if spec.enabled(TraceTag::TraceStatus, &Term::Atom("undefined")) == Enabled::Remove
                {
                    return Ok(false);
                }
                Box::into_raw(Box::new(TracerCell {
                    spec,
                    live: crate::bp::Liveness::new(),
                }))
            }
            None => std::ptr::null_mut(),
        };
        // Release: pairs with the Acquire load in `Sessions::tracer` (ST1: the cell is written
        // before any scheduler can reach it).
        let old = self.sessions.slots[s as usize]
            .tracer
            .swap(fresh, ord(self.mutant, Site::SessionTracerSwap, Release));
        self.retire_tracer(old);
        Ok(true)
    }

    /// ST2/ST3: wait until no scheduler can still hold `old`, then free it.
    fn retire_tracer(&self, old: *mut TracerCell) {
        if old.is_null() {
            return;
        }
        if !mutant::is(self.mutant, Mutant::TracerFreeWithoutWait) {
            self.progress.wait();
        }
        // SAFETY: `old` was unpublished by the swap before the wait; every scheduler has since
        // passed a progress point, and schedulers hold a cell only between progress points.
        let b = unsafe { Box::from_raw(old) };
        // SAFETY: as above: no scheduler holds the cell any more (ST2; the
        // tracer-free-without-wait mutant breaks this on purpose, under loom and shuttle only).
        unsafe { b.live.kill() };
        if CHECKED {
            lock(&self.sessions.graveyard).push(b);
        }
    }

    /// `trace:session_destroy/1`. Returns `Ok(false)` if the session was already destroyed
    /// (ERTS returns false when it is not alive).
    /// On an engine with a module (`load.rs`) the session's breakpoints on the module's
    /// versions go in the same sequence (`load.rs` `destroy_session_loaded`).
    pub fn destroy_session(&self, s: SessionId) -> Result<bool, SessionError> {
        if self.code_mgmt.is_some() {
            return self.destroy_session_loaded(s);
        }
        self.destroy_session_in(s, &[], &mut || {})
    }

    /// [`Engine::destroy_session`], also clearing the session's breakpoints on the entries of
    /// `more` (the code areas of loaded versions, `load.rs`: the caller holds the module table,
    /// so the versions outlive the call) in the same sequence. `before` runs under the
    /// permission before the session turns inert (the module's `destroy_session_loaded` withdraws a version's promise
    /// there when the session held its last pattern).
    pub(crate) fn destroy_session_in(
        &self,
        s: SessionId,
        more: &[(Area, &[FuncId])],
        before: &mut dyn FnMut(),
    ) -> Result<bool, SessionError> {
        if s == 0 {
            return Err(SessionError::Legacy);
        }
        let slot = self
            .sessions
            .slots
            .get(s as usize)
            .ok_or(SessionError::OutOfRange { session: s })?;
        let mut st = self.seize();
        if slot.state.load(Relaxed) != state::ALIVE {
            return Ok(false);
        }
        before();
        // cmpxchg(ALIVE → CLEARING): from here its breakpoints are inert (hit path step 1).
        if slot
            .state
            .compare_exchange(state::ALIVE, state::CLEARING, Relaxed, Relaxed)
            .is_err()
        {
            return Ok(false);
        }
        let staging = self.staging_ix();
        let code: Vec<usize> = (0..self.code.len()).collect();
        let exps: Vec<usize> = (0..self.exports.len()).collect();
        for &f in &code {
            crate::stage::clear_session(self, &mut st, Area::Code, f, s, staging);
        }
        for &x in &exps {
            crate::stage::clear_session(self, &mut st, Area::Export, x, s, staging);
        }
        for &(area, fs) in more {
            for &f in fs {
                crate::stage::clear_session(self, &mut st, area, f, s, staging);
            }
        }
        let old = slot.tracer.swap(std::ptr::null_mut(), Relaxed);
        // `finish` over the engine's two areas and the versions' (the same one sequence).
        let mut areas: Vec<(Area, &[FuncId])> = vec![(Area::Code, &code), (Area::Export, &exps)];
        areas.extend_from_slice(more);
        self.finish_in(&mut st, PatternOp::False, None, &areas, &mut || {});
        drop(st);
        self.retire_tracer(old);
        slot.state.store(state::DEAD, Relaxed);
        lock(&self.sessions.names)[s as usize] = None;
        Ok(true)
    }
}

impl<P: ThreadProgress> Engine<P> {
    /// `trace:info(Session, MFA, Item)`: like [`Engine::trace_info_term`], but a destroyed
    /// session is an error, and global breakpoints (on the export entry) are reported:
    /// `{traced, global}` and the global match spec.
    pub fn session_trace_info(
        &self,
        s: SessionId,
        mfa: &crate::code::Mfa,
        key: crate::term::InfoKey,
    ) -> Result<Term, SessionError> {
        self.static_entry("session_trace_info");
        use crate::bp::flags;
        self.check_session(s)?;
        let base = self.trace_info_term(s, mfa, key);
        let Some(f) = self.func(mfa) else {
            return Ok(base);
        };
        // The active halves of the session's code node and export node.
        let (code, exp) = {
            let st = self.seize();
            let ix = self.active_ix();
            let half = |a: Area, i: Option<usize>| {
                let g = i.map_or(std::ptr::null_mut(), |i| {
                    self.session_node_in(&st, a, i, s, false)
                });
                // SAFETY: live node under the permission.
                unsafe { g.as_ref() }.map(|n| n.snapshot_half(ix))
            };
            (
                half(Area::Code, Some(f)),
                half(Area::Export, self.export_of(f)),
            )
        };
        if let Some(d) = exp.filter(|d| d.flags & flags::GLOBAL_TRACE != 0) {
            return Ok(global_info(key, &d));
        }
        if let Some(d) = code.filter(|d| d.flags & flags::LOCAL_TRACE != 0 && d.ms.is_some()) {
            return Ok(local_ms_info(key, base, &d));
        }
        Ok(base)
    }
}

/// `trace_info` answer `base` of a function whose code carries `d`, the session's local
/// breakpoint with a match spec: the match spec in it (`match_spec`, and `all`'s second item);
/// the static area's ([`Engine::session_trace_info`]) and a loaded module's current version
/// (`load.rs::Engine::trace_info_module_in`) alike.
pub(crate) fn local_ms_info(
    key: crate::term::InfoKey,
    base: Term,
    d: &crate::bp::GenericBpData,
) -> Term {
    use crate::term::InfoKey;
    let ms_term = d.ms.as_deref().map_or(Term::List(vec![]), |m| m.to_term());
    match (key, base) {
        (InfoKey::MatchSpec, _) => Term::Tuple(vec![Term::Atom(key.atom()), ms_term]),
        (InfoKey::All, Term::Tuple(mut v)) => {
            if let Some(Term::List(items)) = v.get_mut(1) {
                items[1] = Term::Tuple(vec![Term::Atom("match_spec"), ms_term]);
            }
            Term::Tuple(v)
        }
        (_, b) => b,
    }
}

/// `trace_info` of a function whose export entry carries `d`, the session's global breakpoint
/// (ERTS `function_is_traced` in erl_bif_trace.c: the export entry first, and when
/// `erts_is_trace_break(session, &ep->info, ms, 0)` finds the global flag, `{traced, global}`,
/// its match spec, and `false` for every other key; the static area's and the module's export
/// entries alike).
pub(crate) fn global_info(key: crate::term::InfoKey, d: &crate::bp::GenericBpData) -> Term {
    use crate::term::InfoKey;
    let pair = |v: Term| Term::Tuple(vec![Term::Atom(key.atom()), v]);
    let ms = || d.ms.as_deref().map_or(Term::List(vec![]), |m| m.to_term());
    let f = || Term::Atom("false");
    let kv = |k: &'static str, v: Term| Term::Tuple(vec![Term::Atom(k), v]);
    pair(match key {
        InfoKey::Traced => Term::Atom("global"),
        InfoKey::MatchSpec => ms(),
        InfoKey::All => Term::List(vec![
            kv("traced", Term::Atom("global")),
            kv("match_spec", ms()),
            kv("meta", f()),
            kv("meta_match_spec", f()),
            kv("call_memory", f()),
            kv("call_time", f()),
            kv("call_count", f()),
        ]),
        _ => f(),
    })
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::{EngineConfig, FlagSet, Pattern, Process, Scheduler, TraceSpec};
    use std::sync::Arc;

    /// Destroy makes a session's breakpoints inert at once: with the state CLEARING and the
    /// breakpoint still installed and committed, a hit acts on nothing of that session and the
    /// other session's node still runs.
    #[test]
    fn clearing_session_is_inert_before_its_patterns_are_cleared() {
        let e = Arc::new(crate::Engine::<crate::Qsbr>::new(EngineConfig::simple(
            1, 1,
        )));
        let s1 = e.create_session("x").unwrap();
        let both = FlagSet {
            local: true,
            call_count: true,
            ..FlagSet::default()
        };
        for s in [0, s1] {
            e.trace_pattern(
                &Pattern::all(),
                PatternOp::True,
                &TraceSpec::from(both).session(s),
            )
            .unwrap();
        }
        e.sessions.slots[s1 as usize]
            .state
            .store(state::CLEARING, Relaxed);
        let mut s = Scheduler::start(e.clone(), 0);
        let p = Process {
            pid: 7,
            call_traced: u64::MAX,
        };
        s.call(0, &p);
        s.sleep();
        assert!(e.is_patched(0));
        assert_eq!(
            s.events.iter().map(|ev| ev.session).collect::<Vec<_>>(),
            vec![0],
            "only the live session traced"
        );
        let count = |sess| e.trace_info(sess, &e.code.funcs[0].mfa, crate::InfoItem::CallCount);
        assert_eq!(count(0), crate::InfoValue::Count(1));
        assert_eq!(count(s1), crate::InfoValue::Count(0));
        assert_eq!(
            e.check_session(s1),
            Err(SessionError::Destroyed { session: s1 })
        );
    }
}
