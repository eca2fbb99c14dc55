//! `trace_pattern`: seize the permission, stage, then the finisher's sequence of steps with a
//! wait for thread progress between each (ERTS `erts_finish_breakpointing`, cases 0–4):
//!
//! ```text
//! stage ─W0→ install ─W1→ commit ─W2→ uninstall ─W3→ consolidate ─W4→ free     (5 waits)
//! stage ──────────────W1→ commit ─W2→ uninstall ─W3→ consolidate ─W4→ free     (false: 4 waits)
//! ```

use crate::bp::SessionId;
use crate::code::FuncId;
use crate::engine::Engine;
use crate::history::{self, Event};
use crate::mutant::{self, Mutant};
use crate::pattern::{FlagSet, Pattern, PatternError, PatternOp, TraceFlags};
use crate::progress::ThreadProgress;
use crate::{commit, consolidate, free, install, stage, uninstall};

impl<P: ThreadProgress> Engine<P> {
    /// `erlang:trace_pattern(Pattern, Op, Flags)` in `session`. Returns the number of matched
    /// functions, as ERTS does. Blocks while another stager holds the permission.
    pub fn trace_pattern(
        &self,
        session: SessionId,
        pattern: &Pattern,
        op: PatternOp,
        fl: TraceFlags,
    ) -> Result<usize, PatternError> {
        fl.check(op)?;
        self.trace_pattern_flags(session, pattern, op, fl.into())
    }

    /// `trace_pattern` with the full flag list, including call_time and call_memory.
    pub fn trace_pattern_flags(
        &self,
        session: SessionId,
        pattern: &Pattern,
        op: PatternOp,
        fl: FlagSet,
    ) -> Result<usize, PatternError> {
        fl.check(op)?;
        if session >= 64 {
            return Err(PatternError::BadArg(format!(
                "session {session} out of range (0..64)"
            )));
        }
        let mut st = self.seize();
        let matched: Vec<FuncId> = pattern.matching(self.code.funcs.iter().map(|h| &h.mfa));
        let staging = self.staging_ix();
        self.history
            .record(|| history::trace_pattern(session, &matched, op, fl));
        for &f in &matched {
            stage::stage(self, &mut st, f, session, staging, op, fl);
        }
        let install = op != PatternOp::False;
        if install {
            self.wait_unless(Mutant::SkipWaitBeforeInstall); // W0
            self.history.record(|| Event::Install);
            install::install(self, &mut st, &matched);
        }
        self.wait_unless(Mutant::SkipWaitBeforeCommit); // W1
        let reorder = mutant::is(self.mutant, Mutant::UninstallBeforeCommit);
        if reorder {
            self.history.record(|| Event::Uninstall);
            uninstall::uninstall(self, &mut st, &matched, staging);
        }
        self.history.record(|| Event::Commit);
        commit::commit(self, &mut st);
        self.wait_unless(Mutant::SkipWaitBeforeUninstall); // W2
        if !reorder {
            self.history.record(|| Event::Uninstall);
            uninstall::uninstall(self, &mut st, &matched, self.active_ix());
        }
        self.wait_unless(Mutant::SkipWaitBeforeConsolidate); // W3
        self.history.record(|| Event::Consolidate);
        consolidate::consolidate(self, &mut st, &matched);
        self.wait_unless(Mutant::SkipWaitBeforeFree); // W4
        self.history.record(|| Event::Free);
        free::free(&mut st);
        Ok(matched.len())
    }

    /// How many waits one `trace_pattern` makes in ERTS: 5 when it installs, 4 for `false`.
    pub const fn erts_waits(op: PatternOp) -> u64 {
        match op {
            PatternOp::False => 4,
            _ => 5,
        }
    }
}
