//! Purging a module's old version (ERTS `beam_bif_load.c`: `erts_internal:purge_module/2`,
//! `erts_code_purger`'s `check_process_code`), on an engine with a module (`load.rs`,
//! docs/nonblocking-load.md §1–§3): `code:soft_purge/1` ([`Engine::purge`]) refuses while a
//! process still executes the old version; `code:purge/1` ([`Engine::purge_kill`]) kills such
//! processes first. Either then unlinks the version, waits for thread progress (PW,
//! NonBlocking) and frees it with its breakpoints (`load.rs` `clear_version_breakpoints`).

use crate::code_ix::{CodeIxScheme, CodeVersion};
use crate::engine::{Engine, Permission};
use crate::load::{LoadError, LoadProtocol, ModuleTable};
use crate::mutant::{self, Mutant};
use crate::progress::ThreadProgress;
use crate::sync::Ordering::Relaxed;
use crate::sync::{lock, write, MutexGuard, CHECKED};

impl<P: ThreadProgress> Engine<P> {
    /// NonBlocking, `Three`: the purge's first wait, before its check
    /// (`erts_internal:purge_module(M, prepare)` suspends the purger until thread progress):
    /// a call that read the old version's address before the commit that made it old has
    /// entered it (`in_code`) or returned by then.
    pub(crate) fn purge_grace(&self) {
        if self.cm().protocol == LoadProtocol::NonBlocking
            && self.cm().scheme == CodeIxScheme::Three
        {
            self.wait_unless(Mutant::LoadSkipWaitAfterCommit);
        }
    }

    fn free_version(&self, st: &mut ModuleTable, bst: &mut Permission<'_>, v: *mut CodeVersion) {
        self.clear_version_breakpoints(bst, v);
        st.live_versions -= 1;
        if CHECKED {
            // SAFETY: v is unreachable from every export entry since the LW1 (or the block) of
            // the operation that made it old; purge found no process in it (`in_code`, after
            // every entry: LW1) and then waited (PW) or runs under the block, so every access
            // of a process that was in it happens before this (docs/nonblocking-load.md §3,
            // O1–O7; loom: old-code-purge).
            unsafe { (*v).live.kill() };
            st.graveyard_versions.push(v);
        } else {
            // SAFETY: from Box::into_raw; the module table held the only reference.
            drop(unsafe { Box::from_raw(v) });
        }
    }

    /// `erts_internal:purge_module/2` as `code:soft_purge/1` does it: if a process still executes
    /// the old version (`check_process_code`), refuse; otherwise unlink it, wait for thread
    /// progress (PW, NonBlocking: the last return out of it happens before the free) and free it.
    /// Returns whether there was old code.
    pub fn purge(&self) -> Result<bool, LoadError> {
        self.purge_in(0)
    }

    /// [`Engine::purge`] of module `m`.
    pub fn purge_in(&self, m: usize) -> Result<bool, LoadError> {
        let st = lock(&self.cm().modules);
        if !st.modules[m].old.is_null() {
            self.purge_grace();
        }
        self.purge_locked(st, m)
    }

    /// `code:purge/1`: the processes still in the old version are killed, then it is purged.
    /// The purger's `check_process_code` finds them (`in_code`), sends each an exit signal
    /// (`CodeVersion::kill`) and waits until every one has exited (at its next scheduling point
    /// it drops its frames without returning and discards its call_time pbts,
    /// `calls.rs` `take_signals`); then the soft purge's steps run (the check now passes,
    /// unlink, PW, free). The wait is outside the block (under `Blocking` a process exits at a
    /// progress point, where the world lock lets it run). No process can enter the version
    /// meanwhile: it is old (no export entry of the active index holds it since the LW1 or the
    /// block of the operation that made it old), and a local call needs a process in it. The
    /// load-purge-skip-check mutant skips the check and the wait: the version is freed under
    /// a process still in it, whose charge may be in flight. Returns whether there was old code.
    pub fn purge_kill(&self) -> Result<bool, LoadError> {
        self.purge_kill_in(0)
    }

    /// [`Engine::purge_kill`] of module `m`.
    pub fn purge_kill_in(&self, m: usize) -> Result<bool, LoadError> {
        assert!(
            self.cm().kills,
            "purge_kill on an engine made without with_kills"
        );
        let st = lock(&self.cm().modules);
        let old = st.modules[m].old;
        if old.is_null() {
            return Ok(false);
        }
        self.purge_grace();
        // SAFETY: old is live (module table; permission held until the free).
        let ver = unsafe { &*old };
        if !mutant::is(self.mutant, Mutant::LoadPurgeSkipCheck) && ver.in_code.load(Relaxed) != 0 {
            ver.kill.store(true, Relaxed);
            crate::progress::spin_while(
                || ver.in_code.load(Relaxed) != 0,
                "code:purge of m: a killed process did not exit",
            );
        }
        self.purge_locked(st, m)
    }

    /// The soft purge's steps under the module table's lock `st`.
    fn purge_locked(
        &self,
        mut st: MutexGuard<'_, ModuleTable>,
        m: usize,
    ) -> Result<bool, LoadError> {
        let old = st.modules[m].old;
        if old.is_null() {
            return Ok(false);
        }
        let blocking = self.cm().protocol == LoadProtocol::Blocking;
        let _world = (blocking && !mutant::is(self.mutant, Mutant::LoadBlockingWithoutBlock))
            .then(|| write(&self.cm().world));
        let mut bst = self.seize();
        // check_process_code. Every increment of `in_code` happens before this read: it is made
        // by a remote call that read the version from an export entry, before its scheduler's
        // next progress point, and the operation that made the version old waited for that
        // point (LW1) or ran under the block; [coh] gives the last value or a later decrement.
        // SAFETY: old is live (module table; permission held).
        let users = unsafe { &*old }.in_code.load(Relaxed);
        if users != 0 && !mutant::is(self.mutant, Mutant::LoadPurgeSkipCheck) {
            return Err(LoadError::OldCodeInUse);
        }
        st.modules[m].old = std::ptr::null_mut();
        if !blocking {
            // PW: no process is in the version and none can enter it (no export entry points
            // at it; a local call needs a process already in it). A process that returned out
            // of it did so before its next progress point: after this wait, all its reads of
            // the version happen before the free (G-done).
            self.wait_unless(Mutant::LoadPurgeSkipWait);
        }
        self.free_version(&mut st, &mut bst, old);
        Ok(true)
    }
}
