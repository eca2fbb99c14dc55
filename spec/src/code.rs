//! Code loading in the sequential oracle: `code:load_binary/3`, `code:delete/1`,
//! `code:purge/1` and `code:soft_purge/1` on a module, as their effect on breakpoints and on
//! what `trace_pattern` and `trace_info` see (docs/scenario.md, "Code loading").
//!
//! Measured on OTP 25 and OTP 29.1.2, the same on both (docs/scenario.md lists the programs):
//! - CL1 (load): the new version has no breakpoints: every session's local trace, match specs,
//!   counters, call_time/call_memory rows and meta trace of the module's functions are gone, and
//!   so is global (export entry) trace: `trace_info` answers `false` for every item. ERTS's
//!   `finish_loading` (beam_bif_load.c) blocks thread progress when the current version has
//!   breakpoints and runs `erts_clear_module_break` on it, so the version that becomes old is
//!   cleared too: a call-traced process still in the old version sends no call messages for
//!   its local calls there. A new version is not traced by earlier patterns: only a later
//!   `trace_pattern` (which matches the current version only) traces it.
//! - CL2 (load over old code): `code:load_binary/3` always answers `{module, M}`. With a
//!   current version, the module's old version is purged first (the code server does; a
//!   process in it would be killed) and the current one becomes old; after a delete (no current
//!   version) the old version stays old, so a `delete` right after answers `false` (found by
//!   the differential run, `GenConfig::code`, seed 25 #261, OTP 25).
//! - CL3 (delete): the current version becomes old with its breakpoints cleared, as in CL1; the
//!   module's functions then do not exist for `trace_pattern` (not matched) or `trace_info`
//!   (`undefined`), and a remote call raises `error:undef`. `false` (nothing changes) when the
//!   module already has an old version; `true` (nothing changes) when it has neither version.
//! - CL4 (purge): removes the old version; answers `true` only if it killed a process
//!   running there (CL6).
//! - CL5 (soft_purge): removes the old version unless a process runs there (then `false`);
//!   `true` otherwise, also without old code.
//! - CL6 (processes in old code): a process waiting in a `receive` of a function stays in the
//!   version it entered. Resumed after a load or delete, its local calls run the old version,
//!   which has no breakpoints (no call message, no count, no meta); its remote calls run the
//!   current version (or raise `undef` after a delete). A purge of its version (`purge`, or a
//!   `load` over a current version) kills it: its frames go without returning, no message.
//!   Its frames stay what they were: a return_trace or exception_trace frame pushed on entry
//!   still sends `return_from` / `exception_from` when the old function returns; a
//!   call_time/call_memory frame and the function being charged (`process_breakpoint_trace_t`)
//!   name the old version's code, whose breakpoints are gone, so they charge nothing, even
//!   after a later `trace_pattern` on the new version (ERTS keys them by `ErtsCodeInfo`, one
//!   per version; here the load forgets them: `OProc::forget_code`).
//! - CL7 (changed bodies): `load_changed` loads a version compiled from the scenario's second
//!   code of the module (each function's `changed_body`, else its `body`), `load` one from the
//!   first; otherwise both are CL1/CL2 loads. A call runs the code of the version it runs in: a
//!   remote call (and the local calls of a process in current code) the current version's, a
//!   process resumed in an old version (and its local calls there, CL6) the code of the
//!   version it waited in. Breakpoints do not depend on the code (CL1 clears them either way).

use crate::Oracle;
use bpspec_reference::{Mfa, Pattern};
use std::collections::{BTreeMap, BTreeSet};

/// One of the four code operations of a scenario op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CodeOp {
    /// `code:load_binary/3` of a new version (CL1, CL2), compiled from the first code.
    Load,
    /// The same with the second code (the functions' changed bodies; CL7).
    LoadChanged,
    /// `code:delete/1` (CL3).
    Delete,
    /// `code:purge/1` (CL4).
    Purge,
    /// `code:soft_purge/1` (CL5).
    SoftPurge,
}

impl CodeOp {
    /// The op's key in a scenario and the Erlang function's name.
    pub fn name(self) -> &'static str {
        match self {
            CodeOp::Load => "load",
            CodeOp::LoadChanged => "load_changed",
            CodeOp::Delete => "delete",
            CodeOp::Purge => "purge",
            CodeOp::SoftPurge => "soft_purge",
        }
    }
}

/// Which versions of a module exist: a current one (loaded, not deleted) and an old one, by
/// their load number.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Versions {
    current: Option<u64>,
    old: Option<u64>,
    /// Load number of the newest version.
    loads: u64,
    /// The versions loaded from the second code (CL7), by load number.
    changed: BTreeSet<u64>,
}

/// Deliberately wrong code loading, for the checks that must catch it
/// (`Wrong::LoadKeepsBreakpoints`, `Wrong::DeleteKeepsFunctions` in oracle/src/target.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeMutant {
    /// A load leaves the breakpoints in place (the new version inherits the old one's).
    LoadKeepsBreakpoints,
    /// A delete leaves the functions defined and callable (only the breakpoints go).
    DeleteKeepsFunctions,
    /// A process resumed in an old version runs the current one (its local calls hit the
    /// current breakpoints).
    OldCodeIsCurrent,
    /// `load_changed` loads the first code (CL7: the changed bodies never run).
    ChangedBodiesIgnored,
    /// A load or delete keeps what processes charge to the module's functions: call_time /
    /// call_memory frames pushed in the version that becomes old charge the new version's
    /// rows (CL6).
    OldFramesCharge,
}

/// The modules' versions. A module not in the map has only its first, current version.
#[derive(Clone, Debug, Default)]
pub struct CodeTable {
    modules: BTreeMap<String, Versions>,
    /// Functions whose module has no current version (deleted).
    unloaded: BTreeSet<usize>,
    mutant: Option<CodeMutant>,
    /// Processes waiting in a `receive` of a function: pid -> (module, version).
    waiting: BTreeMap<u64, (String, u64)>,
    /// Processes killed by a purge of the version they waited in.
    killed: BTreeSet<u64>,
    /// Processes resumed: pid -> (module, version) of the version they run in (CL7).
    running: BTreeMap<u64, (String, u64)>,
}

/// The processes of `waiting` (pid -> (module, version)) that wait in version `v` of `module`.
pub fn waiting_in<V: PartialEq>(
    waiting: &BTreeMap<u64, (String, V)>,
    module: &str,
    v: V,
) -> Vec<u64> {
    waiting
        .iter()
        .filter(|(_, (m, w))| m == module && *w == v)
        .map(|(&pid, _)| pid)
        .collect()
}

impl Oracle {
    fn versions(&mut self, module: &str) -> &mut Versions {
        self.code
            .modules
            .entry(module.to_string())
            .or_insert(Versions {
                current: Some(0),
                old: None,
                loads: 0,
                changed: BTreeSet::new(),
            })
    }

    /// Remove `module`'s old version: kills the processes waiting in it (CL4); their stacks
    /// go without returning (no trace message, no charge). Returns whether it killed any.
    fn purge_old(&mut self, module: &str) -> bool {
        let Some(old) = self.versions(module).old.take() else {
            return false;
        };
        let dead = waiting_in(&self.code.waiting, module, old);
        for pid in &dead {
            self.code.waiting.remove(pid);
            self.code.killed.insert(*pid);
            self.procs.remove(pid);
        }
        !dead.is_empty()
    }

    /// Run `op` on `module`; returns what the Erlang call answers as a boolean (`load`: `true`
    /// for `{module, M}`; the others their boolean result). CL1 to CL6 in the module docs.
    pub fn code_op(&mut self, op: CodeOp, module: &str) -> bool {
        let fs: Vec<usize> = (0..self.funcs.len())
            .filter(|&f| self.funcs[f].module == module)
            .collect();
        let answer = match op {
            CodeOp::Load | CodeOp::LoadChanged => {
                // CL2: with a current version, the old one is purged first and the current one
                // becomes old (CL1); without one (deleted), the old version stays.
                if self.versions(module).current.is_some() {
                    self.purge_old(module);
                }
                let v = self.versions(module);
                if v.current.is_some() {
                    v.old = v.current;
                }
                v.loads += 1;
                v.current = Some(v.loads);
                if op == CodeOp::LoadChanged {
                    v.changed.insert(v.loads);
                }
                for f in &fs {
                    self.code.unloaded.remove(f);
                }
                true
            }
            CodeOp::Delete => {
                let v = self.versions(module);
                if v.old.is_some() {
                    return false;
                }
                if v.current.is_some() {
                    v.old = v.current.take();
                    if self.code.mutant != Some(CodeMutant::DeleteKeepsFunctions) {
                        self.code.unloaded.extend(fs.iter().copied());
                    }
                }
                true
            }
            CodeOp::Purge => self.purge_old(module),
            CodeOp::SoftPurge => {
                let old = self.versions(module).old;
                if old.is_some()
                    && self
                        .code
                        .waiting
                        .values()
                        .any(|(m, v)| m == module && Some(*v) == old)
                {
                    return false;
                }
                self.versions(module).old = None;
                true
            }
        };
        let load = matches!(op, CodeOp::Load | CodeOp::LoadChanged);
        let keep = load && self.code.mutant == Some(CodeMutant::LoadKeepsBreakpoints);
        if (load || op == CodeOp::Delete) && !keep {
            self.clear_module_break(&fs);
        }
        answer
    }

    /// Process `pid` waits in a `receive` of `f` (its entry was made): it is in `f`'s module's
    /// current version now (CL6).
    pub fn wait_in(&mut self, pid: u64, f: usize) {
        let module = self.funcs[f].module.clone();
        let v = self
            .versions(&module)
            .current
            .expect("a process enters only a current version");
        self.code.waiting.insert(pid, (module, v));
    }

    /// Process `pid` gets its message and goes on: `Some(true)` if its version is old now (a
    /// load or delete came since it entered), `Some(false)` if still current, `None` if a
    /// purge killed it (CL6).
    pub fn resume(&mut self, pid: u64) -> Option<bool> {
        let (module, v) = self.code.waiting.remove(&pid)?;
        let old = self.versions(&module).current != Some(v);
        self.code.running.insert(pid, (module.clone(), v));
        Some(old && self.code.mutant != Some(CodeMutant::OldCodeIsCurrent))
    }

    /// Which code a call of `f` by `pid` runs (CL7): 1 for the second code (`changed_body`), 0
    /// for the first. `old`: the call is made in the old version `pid` was resumed in (CL6).
    pub fn variant(&mut self, f: usize, pid: u64, old: bool) -> u8 {
        let module = self.funcs[f].module.clone();
        let v = if old {
            match self.code.running.get(&pid) {
                Some((m, v)) if *m == module => Some(*v),
                _ => panic!("pid {pid} runs no old version of {module}"),
            }
        } else {
            self.versions(&module).current
        };
        let changed = v.is_some_and(|v| self.versions(&module).changed.contains(&v));
        u8::from(changed && self.code.mutant != Some(CodeMutant::ChangedBodiesIgnored))
    }

    /// Was `pid` killed by a purge?
    pub fn killed(&self, pid: u64) -> bool {
        self.code.killed.contains(&pid)
    }

    /// Make code loading wrong in the way `m` says (a mutant oracle).
    pub fn mutant_code(&mut self, m: CodeMutant) {
        self.code.mutant = Some(m);
    }

    /// ERTS's `erts_clear_module_break` and `erts_clear_all_export_break` on the functions
    /// `fs` of one module, in every session: nothing of the breakpoint machinery is left on them.
    fn clear_module_break(&mut self, fs: &[usize]) {
        let sessions: Vec<(usize, u32)> = self
            .nodes
            .keys()
            .copied()
            .filter(|(f, _)| fs.contains(f))
            .collect();
        for key in sessions {
            self.nodes.remove(&key);
        }
        for &f in fs {
            for s in 0..u32::BITS {
                self.frames.forget(f, s);
            }
        }
        self.clear_export_break(fs);
        self.clear_meta(fs);
        if self.code.mutant != Some(CodeMutant::OldFramesCharge) {
            for p in self.procs.values_mut() {
                p.forget_code(fs);
            }
        }
    }

    /// Does `f`'s module have a current version (not deleted)?
    pub fn is_loaded(&self, f: usize) -> bool {
        !self.code.unloaded.contains(&f)
    }

    /// The functions of the current code that `pat` matches (deleted modules have none).
    pub(crate) fn matching(&self, pat: &Pattern) -> Vec<usize> {
        pat.matching(&self.funcs)
            .into_iter()
            .filter(|&f| self.is_loaded(f))
            .collect()
    }

    /// The index of `mfa` in the current code (`None`: no such function, or deleted).
    pub(crate) fn position(&self, mfa: &Mfa) -> Option<usize> {
        self.funcs
            .iter()
            .position(|m| m == mfa)
            .filter(|&f| self.is_loaded(f))
    }
}
