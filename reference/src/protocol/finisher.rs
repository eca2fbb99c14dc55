//! `trace_pattern`: seize the permission, stage, then the finisher's sequence of steps with a
//! wait for thread progress between each (ERTS `erts_finish_breakpointing`, cases 0–4):
//!
//! ```text
//! stage ─W0→ install ─W1→ commit ─W2→ uninstall ─W3→ consolidate ─W4→ free     (5 waits)
//! stage ──────────────W1→ commit ─W2→ uninstall ─W3→ consolidate ─W4→ free     (false: 4 waits)
//! ```
//!
//! Under `WaitPlan::Pipeline` a call stops after consolidate (4 waits, 3 for false) and the
//! next call frees what it unlinked after its own first wait (docs/fewer-waits.md §6).

use crate::bp::SessionId;
use crate::calltrace::TraceSpec;
use crate::code::FuncId;
use crate::engine::{Engine, Permission};
use crate::export::Area;
use crate::history::{self, Event};
use crate::mutant::{self, Mutant};
use crate::pattern::{FlagSet, Pattern, PatternError, PatternOp};
use crate::progress::ThreadProgress;
use crate::{commit, consolidate, free, install, stage, uninstall};

impl<P: ThreadProgress> Engine<P> {
    /// The permission for a `trace_pattern` in `session` (the single call and the batch), with
    /// the meta tracer cells retired so far reclaimed. A dead session is refused (badarg) before
    /// and again under the permission: a destroy that won the race is complete by then. The
    /// legacy session (0) is always alive: no state to check.
    pub(crate) fn seize_for(&self, session: SessionId) -> Result<Permission<'_>, PatternError> {
        self.session_arg(session)?;
        let st = self.seize();
        self.reclaim_meta(&st);
        self.session_arg(session)?;
        Ok(st)
    }

    /// `session` as a `trace_pattern` argument: a dead session is badarg; the legacy session
    /// (0) is always alive (no state to check).
    fn session_arg(&self, session: SessionId) -> Result<(), PatternError> {
        if session == 0 {
            return Ok(());
        }
        self.check_session(session).map_err(|e| {
            PatternError::BadArg(e.to_string().trim_start_matches("badarg: ").to_string())
        })
    }

    /// `trace_pattern`'s argument check without staging anything (no permission seized,
    /// nothing matched, no wait): the flags, `global`, match spec and meta against `op`
    /// ([`check_pattern_args`], the one check [`Engine::trace_pattern`] makes first), then the
    /// session (badarg if dead, as [`Engine::trace_pattern`] refuses it). For a caller that
    /// stages elsewhere, e.g. per module (`Engine::trace_pattern_funcs_op_in`), and must answer
    /// a pattern that matches nothing as `trace_pattern` does.
    pub fn check_trace_pattern(&self, op: PatternOp, spec: &TraceSpec) -> Result<(), PatternError> {
        check_pattern_args(op, spec)?;
        self.session_arg(spec.session)
    }

    /// `erlang:trace_pattern(Pattern, Op, Flags)` (`trace:function/4` with a session): the one
    /// entry. `spec` holds the session, the flag list (local, call_count, call_time,
    /// call_memory), `global`, the match spec and `{meta, Tracer}`. Returns the number of matched
    /// functions (for global patterns, of matched export entries), as ERTS does. Blocks while
    /// another stager holds the permission.
    ///
    /// Local and global exclude each other within one session, both ways (ERTS
    /// `erts_set_trace_pattern`): setting a breakpoint-type flag clears the session's global flag
    /// on the matched exports; setting `global` clears all of the session's flags on the matched
    /// functions' code. With op `false` the meta tracer is ignored (meta is cleared);
    /// `pause`/`restart` set meta as `true`. Meta with a match spec (`meta_match_spec`) or with
    /// `global` is refused (badarg).
    pub fn trace_pattern(
        &self,
        pattern: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        self.static_entry("trace_pattern");
        let session = spec.session;
        let meta = spec.meta.as_ref();
        let fl = spec.flags;
        check_pattern_args(op, spec)?;
        // Global `pause`/`restart` set global trace as `true` does: ERTS only asks whether the
        // op is `false` (`on && !flags.breakpoint`); checked on OTP 25, where they return the
        // number of matched exports (`spec/src/global.rs`).
        let op = if spec.global && op != PatternOp::False {
            PatternOp::True
        } else {
            op
        };
        let mut st = self.seize_for(session)?;
        let code: Vec<FuncId> = pattern.matching(self.code.funcs.iter().map(|h| &h.mfa));
        if spec.global && op != PatternOp::False {
            st.global_sessions |= 1u64 << session;
        }
        let matched_exps: Vec<usize> = pattern.matching(self.exports.funcs.iter().map(|h| &h.mfa));
        // A session that never set a global pattern has no export nodes: leave that area alone
        // (no loads of its words at all, so single-session schedules are as before sessions).
        let exps: &[usize] = if st.global_sessions & (1u64 << session) != 0 {
            &matched_exps
        } else {
            &[]
        };
        let staging = self.staging_ix();
        self.history
            .record(|| history::trace_pattern(session, &code, op, fl));
        let extra = stage::Extra {
            global: spec.global,
            ms: spec.ms.clone().map(std::sync::Arc::new),
            meta: meta.cloned(),
        };
        let on = op != PatternOp::False;
        // Stage in this session and half (stage_in with the call's fixed arguments bound).
        let stage_at = |st: &mut Permission<'_>, area, f, op, fl, extra: &stage::Extra| {
            stage::stage_in(self, st, area, f, session, staging, op, fl, extra)
        };
        let (area, n) = if spec.global {
            for &x in exps {
                stage_at(&mut st, Area::Export, x, op, fl, &extra);
            }
            if on {
                for &f in &code {
                    stage::clear_session(self, &mut st, Area::Code, f, session, staging);
                }
            }
            (Area::Export, matched_exps.len())
        } else {
            for &f in &code {
                stage_at(&mut st, Area::Code, f, op, fl, &extra);
            }
            if on {
                let global_only = stage::Extra {
                    global: true,
                    ms: None,
                    meta: None,
                };
                for &x in exps {
                    stage_at(
                        &mut st,
                        Area::Export,
                        x,
                        PatternOp::False,
                        FlagSet::default(),
                        &global_only,
                    );
                }
            }
            (Area::Code, code.len())
        };
        self.finish(&mut st, op, Some(area), &code, exps);
        Ok(n)
    }

    /// The finisher (`erts_finish_breakpointing`, cases 0-4) over both areas: install only in
    /// the area being set, uninstall and consolidate in both.
    pub(crate) fn finish(
        &self,
        st: &mut crate::engine::Permission<'_>,
        op: PatternOp,
        install_area: Option<Area>,
        code: &[FuncId],
        exps: &[usize],
    ) {
        let install = install_area.map(|a| (a, if a == Area::Code { code } else { exps }));
        let areas = [(Area::Code, code), (Area::Export, exps)];
        self.finish_in(st, op, install, &areas, &mut || {});
    }

    /// The one W0–W4 sequence (stage has run): install in `install` (the area being set and
    /// its matched entries), uninstall and consolidate in every entry of `areas`. `after_w2`
    /// runs right after W2, when every hit runs the committed half (G of W2): the module code
    /// makes its promise for a version there (`load.rs`). `finish` runs it over the engine's
    /// code and export areas, `load.rs` over a version's code area ([`Area::Version`]).
    pub(crate) fn finish_in(
        &self,
        st: &mut crate::engine::Permission<'_>,
        op: PatternOp,
        install: Option<(Area, &[FuncId])>,
        areas: &[(Area, &[FuncId])],
        after_w2: &mut dyn FnMut(),
    ) {
        let staging = self.staging_ix();
        let pipeline = self.wait_plan.pipelines();
        // Pipeline: what the previous call unlinked is on the free list (and nothing else:
        // this call's consolidate has not run). The first wait of this call began after that
        // consolidate ([lock]: it released the permission this call holds), so it is the
        // previous call's W4: free after it (docs/fewer-waits.md, proof P).
        let deferred = st.free_list.len();
        assert!(
            pipeline || deferred == 0,
            "free list not empty before consolidate"
        );
        let free_deferred = |st: &mut crate::engine::Permission<'_>| {
            if deferred > 0 {
                assert_eq!(st.free_list.len(), deferred, "only the deferred nodes");
                self.history.record(|| Event::Free);
                free::free(st);
            }
        };
        if let (true, Some((a, matched))) = (op != PatternOp::False, install) {
            self.wait_unless(Mutant::SkipWaitBeforeInstall); // W0
            free_deferred(st);
            self.history.record(|| Event::Install);
            install::install(self, st, a, matched);
        }
        self.wait_unless(Mutant::SkipWaitBeforeCommit); // W1
        if op == PatternOp::False || install.is_none() {
            free_deferred(st);
        }
        let reorder = mutant::is(self.mutant, Mutant::UninstallBeforeCommit);
        if reorder {
            self.history.record(|| Event::Uninstall);
            for &(a, m) in areas {
                uninstall::uninstall(self, st, a, m, staging);
            }
        }
        self.history.record(|| Event::Commit);
        commit::commit(self, st);
        self.wait_unless(Mutant::SkipWaitBeforeUninstall); // W2
        after_w2();
        if !reorder {
            self.history.record(|| Event::Uninstall);
            for &(a, m) in areas {
                uninstall::uninstall(self, st, a, m, self.active_ix());
            }
        }
        // W3 and W4 guard only what consolidate unlinks; when it will unlink nothing the
        // elide-idle plan skips both (docs/fewer-waits.md, proof EL). Proof EL covers the code
        // area without meta: a sequence that touches the export area or a meta tracer keeps
        // both waits (EL7).
        let elide_unlinking = mutant::is(self.mutant, Mutant::BatchElideUnlinking);
        let idle = self.wait_plan.elides_idle()
            && (elide_unlinking
                || (!crate::waitplan::beyond_proof_e(self, st, areas)
                    && !crate::waitplan::will_unlink(self, st, areas)));
        if !idle {
            self.wait_unless(Mutant::SkipWaitBeforeConsolidate); // W3
        }
        self.history.record(|| Event::Consolidate);
        for &(a, m) in areas {
            consolidate::consolidate(self, st, a, m);
        }
        assert!(
            !idle || elide_unlinking || st.free_list.is_empty(),
            "an idle consolidate unlinked a node"
        );
        if pipeline {
            // No W4: the list waits for the next call's first wait (or `settle`). The
            // skip-w4-before-free mutant removes that wait's role: it frees now.
            if mutant::is(self.mutant, Mutant::SkipWaitBeforeFree) {
                self.history.record(|| Event::Free);
                free::free(st);
            }
            return;
        }
        if !idle {
            self.wait_unless(Mutant::SkipWaitBeforeFree); // W4
        }
        self.history.record(|| Event::Free);
        free::free(st);
    }

    /// Nodes unlinked and not yet freed (under Pipeline, what the last call left for the next
    /// call's first wait; otherwise 0 between calls).
    pub fn pending_free(&self) -> usize {
        self.seize().free_list.len()
    }

    /// Pipeline: free what the last call left on the free list, after a wait that begins now
    /// (after its consolidate). Nothing to do under the other plans, or when the list is empty.
    /// Returns the number of waits made (0 or 1).
    pub fn settle(&self) -> u64 {
        let mut st = self.seize();
        if st.free_list.is_empty() {
            return 0;
        }
        assert!(self.wait_plan.pipelines(), "free list not empty at rest");
        self.wait_unless(Mutant::SkipWaitBeforeFree);
        self.history.record(|| Event::Free);
        free::free(&mut st);
        1
    }

    /// How many waits one `trace_pattern` makes in ERTS: 5 when it installs, 4 for `false`.
    pub const fn erts_waits(op: PatternOp) -> u64 {
        match op {
            PatternOp::False => 4,
            _ => 5,
        }
    }
}

/// `trace_pattern`'s check of its arguments, a function of the op and the spec only (flags,
/// `global`, match spec, meta): the one check [`Engine::trace_pattern`] and
/// [`Engine::check_trace_pattern`] make.
pub(crate) fn check_pattern_args(op: PatternOp, spec: &TraceSpec) -> Result<(), PatternError> {
    let meta = spec.meta.as_ref();
    let fl = spec.flags;
    if meta.is_some() && (spec.global || (spec.ms.is_some() && !fl.local)) {
        return Err(PatternError::BadArg(
            "meta cannot be combined with global, and its match spec is not implemented".into(),
        ));
    }
    if meta.is_some() && !fl.local && !fl.counters() {
        // Meta alone: nothing else to validate.
    } else if spec.global {
        if fl.local || fl.counters() {
            return Err(PatternError::BadArg(
                "global cannot be combined with local, call_count, call_time or call_memory".into(),
            ));
        }
    } else {
        fl.check(op)?;
        if spec.ms.is_some() && !fl.local {
            return Err(PatternError::BadArg(
                "a match spec needs local or global (not only call_count/time/memory)".into(),
            ));
        }
    }
    Ok(())
}
