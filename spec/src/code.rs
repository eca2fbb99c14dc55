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
//! - CL8 (the `on_load` pattern): `trace_pattern(on_load, Spec, Flags)` (`trace:function/4` in
//!   a session) answers 0 and changes only the session's pattern for modules loaded later
//!   ([`OnLoad::change`], ERTS's `change_on_load_trace_pattern` in erl_bif_trace.c); the
//!   breakpoints already set stay as they are, and clearing it leaves them too. After every
//!   load (CL1 first clears the module), each live session whose pattern is on applies it to
//!   the module's functions as a `trace_pattern({M, '_', '_'}, ...)` with `true` would
//!   (beam_bif_load.c `set_default_trace_pattern`, called by `staging_epilogue` after the
//!   commit: one `erts_set_trace_pattern` per session): the legacy session first, then the
//!   sessions newest first, each putting its node at the head of the function's chain, so on
//!   the new version the oldest session's messages come first and the legacy session's last.
//!   A delete loads nothing and applies nothing. `trace_info(on_load, Item)`
//!   (`trace:info(S, on_load, Item)`) reads the session's pattern, not any function
//!   ([`OnLoad::info`], ERTS's `trace_info_on_load`): `false` for every item while it is off;
//!   `true`/`false` for the counters (a flag, not a count); `all` without call_time and
//!   call_memory. Measured on OTP 25 and OTP 29.1.2 (sessions on 29): docs/scenario.md, "Code
//!   loading".

use crate::Oracle;
use bpspec_reference::{
    FlagSet, InfoKey, MatchSpec, Mfa, Pattern, PatternError, PatternOp, SessionId, Term, TraceSpec,
};
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

/// A session's `on_load` pattern (CL8): what ERTS keeps per session in
/// `on_load_trace_pattern_is_on`, `on_load_trace_pattern_flags` and `on_load_match_spec`. Meta
/// trace and `pause`/`restart` are not modelled for it (the scenario loader refuses them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OnLoad {
    /// The pattern is on (ERTS's `is_on`).
    pub on: bool,
    /// Breakpoint mode (local trace or counters) rather than global trace (ERTS's
    /// `flags.breakpoint`).
    pub breakpoint: bool,
    /// The breakpoint flags (all off in global mode).
    pub flags: FlagSet,
    /// The match spec of local or global trace (`None`: `true`).
    pub ms: Option<MatchSpec>,
}

impl OnLoad {
    /// `trace_pattern(on_load, Spec, Flags)`: `true` or a match spec (`on`) or `false`, with
    /// `spec`'s flags and match spec (`global`, or no flag at all, is global mode). First checks
    /// the arguments as for any other pattern (`badarg`); then ERTS's
    /// `change_on_load_trace_pattern`: the match spec is replaced by a call with `local` or in
    /// global mode; within breakpoint mode `true` adds flags and `false` removes them (the
    /// pattern goes off when none is left); within global mode the call turns it on or off; a
    /// `true` in the other mode replaces the whole pattern, a `false` there changes nothing.
    pub fn change(&mut self, op: PatternOp, spec: &TraceSpec) -> Result<(), PatternError> {
        let fl = spec.flags;
        let bp = fl.local || fl.counters();
        if spec.meta.is_some() {
            return Err(PatternError::BadArg(
                "meta trace is not modelled for the on_load pattern".into(),
            ));
        }
        if spec.global && bp {
            return Err(PatternError::BadArg(
                "global cannot be combined with local, call_count, call_time or call_memory".into(),
            ));
        }
        let on = match op {
            PatternOp::True => true,
            PatternOp::False => false,
            PatternOp::Pause | PatternOp::Restart => {
                return Err(PatternError::BadArg(
                    "pause and restart are not modelled for the on_load pattern".into(),
                ))
            }
        };
        if spec.ms.is_some() && bp && !fl.local {
            return Err(PatternError::BadArg(
                "a match spec needs local or global (not only call_count/time/memory)".into(),
            ));
        }
        if fl.local || !bp {
            self.ms = spec.ms.clone();
        }
        match (self.breakpoint, bp) {
            (true, true) if on => {
                let f = &mut self.flags;
                f.local |= fl.local;
                f.call_count |= fl.call_count;
                f.call_time |= fl.call_time;
                f.call_memory |= fl.call_memory;
            }
            (true, true) => {
                let f = &mut self.flags;
                f.local &= !fl.local;
                f.call_count &= !fl.call_count;
                f.call_time &= !fl.call_time;
                f.call_memory &= !fl.call_memory;
                if !(f.local || f.counters()) {
                    self.breakpoint = false;
                    self.on = false;
                }
            }
            (false, false) => self.on = on,
            (true, false) | (false, true) if on => {
                self.breakpoint = bp;
                self.flags = fl;
                self.on = true;
            }
            _ => {}
        }
        Ok(())
    }

    /// What a load applies in `session`: the `trace_pattern({M, '_', '_'}, true, ...)` this
    /// pattern stands for (`None` while it is off). The match spec goes with local or global
    /// trace only (a counters-only pattern keeps it stored, unused, as ERTS does).
    pub fn applied(&self, session: SessionId) -> Option<TraceSpec> {
        if !self.on {
            return None;
        }
        let spec = if self.breakpoint {
            let ms = if self.flags.local {
                self.ms.clone()
            } else {
                None
            };
            TraceSpec::counters(self.flags).ms(ms)
        } else {
            TraceSpec::global().ms(self.ms.clone())
        };
        Some(spec.session(session))
    }
}

impl OnLoad {
    /// `trace_info(on_load, Key)` (`trace:info(S, on_load, Key)` in a session): the
    /// `{Key, Value}` ERTS's `trace_info_on_load` (erl_bif_trace.c) builds from the pattern
    /// (CL8). Off: `false` for every key, `all` too. On: `traced` is `global` in global mode,
    /// `local` with local, else `false`; `match_spec` is the match spec (`[]` for `true`) with
    /// global or local trace, else `false`; `meta` and `meta_match_spec` are `false` (meta is
    /// not modelled for the pattern); `call_count`, `call_time` and `call_memory` are `true` or
    /// `false` (the flag, not a count); `all` lists traced, match_spec, meta, meta_match_spec
    /// and call_count only, and its match_spec shows a stored match spec even in counters-only
    /// mode (where the `match_spec` item says `false`), as ERTS's code does.
    pub fn info(&self, key: InfoKey) -> Term {
        let pair = |k: &'static str, v: Term| Term::Tuple(vec![Term::Atom(k), v]);
        let flag = |b: bool| Term::Atom(if b { "true" } else { "false" });
        let f = Term::Atom("false");
        if !self.on {
            return pair(key.atom(), f);
        }
        let traced_ms = !self.breakpoint || self.flags.local;
        let traced = if !self.breakpoint {
            Term::Atom("global")
        } else if self.flags.local {
            Term::Atom("local")
        } else {
            Term::Atom("false")
        };
        let ms = || {
            self.ms
                .as_ref()
                .map_or(Term::List(vec![]), MatchSpec::to_term)
        };
        let v = match key {
            InfoKey::Traced => traced,
            InfoKey::MatchSpec if traced_ms => ms(),
            InfoKey::MatchSpec | InfoKey::Meta | InfoKey::MetaMatchSpec => f,
            InfoKey::CallCount => flag(self.flags.call_count),
            InfoKey::CallTime => flag(self.flags.call_time),
            InfoKey::CallMemory => flag(self.flags.call_memory),
            InfoKey::All => {
                let all_ms = if self.ms.is_some() || traced_ms {
                    ms()
                } else {
                    f.clone()
                };
                Term::List(vec![
                    pair("traced", traced),
                    pair("match_spec", all_ms),
                    pair("meta", f.clone()),
                    pair("meta_match_spec", f),
                    pair("call_count", flag(self.flags.call_count)),
                ])
            }
        };
        pair(key.atom(), v)
    }
}

/// `trace_info(on_load, Key)` in `session` on a map of the sessions' on_load patterns (CL8):
/// [`OnLoad::info`] of the session's pattern (a session that never set one, or a destroyed
/// one, answers as a pattern that is off).
pub fn on_load_info(
    patterns: &BTreeMap<SessionId, OnLoad>,
    session: SessionId,
    key: InfoKey,
    mutant: Option<CodeMutant>,
) -> Term {
    let p = patterns.get(&session).cloned().unwrap_or_default();
    let answer = p.info(key);
    match (mutant, key, answer) {
        (Some(CodeMutant::OnLoadInfoAllItems), InfoKey::All, Term::Tuple(mut kv)) => {
            if let Some(Term::List(items)) = kv.get_mut(1) {
                for k in [InfoKey::CallTime, InfoKey::CallMemory] {
                    items.push(p.info(k));
                }
            }
            Term::Tuple(kv)
        }
        (_, _, answer) => answer,
    }
}

/// `trace_pattern(on_load, ...)` on a map of the sessions' on_load patterns (CL8): the session's
/// pattern changed by `op` and `spec` ([`OnLoad::change`]); answers 0 (or `badarg`, as for any
/// pattern). The sequential oracle and the reference-engine target (oracle/src/target/code.rs)
/// keep such a map each.
pub fn change_on_load(
    patterns: &mut BTreeMap<SessionId, OnLoad>,
    op: PatternOp,
    spec: &TraceSpec,
) -> Result<usize, PatternError> {
    let mut p = patterns.get(&spec.session).cloned().unwrap_or_default();
    p.change(op, spec)?;
    patterns.insert(spec.session, p);
    Ok(0)
}

/// The order in which a load applies the sessions' `on_load` patterns (CL8): the legacy session
/// first, then the others newest (highest id) first.
pub fn on_load_order(sessions: impl IntoIterator<Item = SessionId>) -> Vec<SessionId> {
    let mut v: Vec<SessionId> = sessions.into_iter().collect();
    v.sort_by_key(|&s| (s != 0, std::cmp::Reverse(s)));
    v
}

/// The pattern `{module, '_', '_'}`.
pub fn module_pattern(module: &str) -> Pattern {
    Pattern::parse(&format!("{module}:_/_")).expect("a module name is a pattern")
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
    /// `trace_info(on_load, all)` lists `call_time` and `call_memory` too, as a function's `all`
    /// does (ERTS's `trace_info_on_load` lists five items: CL8).
    OnLoadInfoAllItems,
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
    /// Each session's `on_load` pattern (CL8), by session id.
    on_load: BTreeMap<SessionId, OnLoad>,
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
        if load {
            self.apply_on_load(module);
        }
        answer
    }

    /// `trace_pattern(on_load, ...)` in `spec.session` (CL8): changes the session's pattern for
    /// later loads; answers 0 (or `badarg`, as for any pattern).
    pub fn on_load_pattern(
        &mut self,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        change_on_load(&mut self.code.on_load, op, spec)
    }

    /// `trace_info(on_load, Key)` in `session` (CL8, [`OnLoad::info`]): `{Key, Value}`.
    pub fn on_load_info(&self, session: SessionId, key: InfoKey) -> Term {
        on_load_info(&self.code.on_load, session, key, self.code.mutant)
    }

    /// A destroyed session's `on_load` pattern goes with it (ERTS's
    /// `clear_on_load_trace_pattern`).
    pub(crate) fn forget_on_load(&mut self, session: SessionId) {
        self.code.on_load.remove(&session);
    }

    /// The new version of `module` gets the live sessions' `on_load` patterns (CL8).
    fn apply_on_load(&mut self, module: &str) {
        let order = on_load_order(self.code.on_load.keys().copied());
        let pat = module_pattern(module);
        for s in order {
            if let Some(spec) = self.code.on_load[&s].applied(s) {
                self.trace_pattern(&pat, PatternOp::True, &spec)
                    .unwrap_or_else(|e| panic!("on_load pattern of session {s}: {e}"));
            }
        }
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

    /// The version of its module that `pid` waits in ([`Oracle::wait_in`]), if it waits.
    pub fn waiting_version(&self, pid: u64) -> Option<u64> {
        self.code.waiting.get(&pid).map(|&(_, v)| v)
    }

    /// `pid` returns out of the version it waited in (no message taken: it leaves the module,
    /// and a soft purge no longer finds it). Whether it was waiting.
    pub fn leave(&mut self, pid: u64) -> bool {
        self.code.waiting.remove(&pid).is_some()
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

    /// `module`'s current version (0 the first, one more each load), `None` while deleted.
    pub fn current_version(&self, module: &str) -> Option<u64> {
        self.code.modules.get(module).map_or(Some(0), |v| v.current)
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

#[cfg(test)]
mod tests {
    use super::*;
    use bpspec_reference::{InfoItem, InfoValue};

    fn local_count(s: SessionId) -> TraceSpec {
        TraceSpec::local().call_count().session(s)
    }

    /// `change_on_load_trace_pattern`'s modes, as measured on OTP 25 and 29 (CL8).
    #[test]
    fn on_load_changes_as_erts_does() {
        let mut p = OnLoad::default();
        p.change(PatternOp::True, &local_count(0)).unwrap();
        assert!(p.on && p.breakpoint && p.flags.local && p.flags.call_count);
        // `false` with call_count only: local stays.
        p.change(
            PatternOp::False,
            &TraceSpec::counters(FlagSet {
                call_count: true,
                ..FlagSet::default()
            }),
        )
        .unwrap();
        assert_eq!(
            p.applied(0).map(|s| s.flags),
            Some(FlagSet {
                local: true,
                ..FlagSet::default()
            })
        );
        // `false` in global mode does nothing while in breakpoint mode.
        p.change(PatternOp::False, &TraceSpec::global()).unwrap();
        assert!(p.on && p.flags.local);
        // The last flag removed: off.
        p.change(PatternOp::False, &TraceSpec::local()).unwrap();
        assert_eq!(p.applied(0).map(|s| s.flags), None);
        // Global mode, and `true` with local replaces it.
        p.change(PatternOp::True, &TraceSpec::global()).unwrap();
        assert!(p.applied(0).is_some_and(|s| s.global));
        p.change(PatternOp::False, &TraceSpec::local()).unwrap();
        assert!(
            p.applied(0).is_some_and(|s| s.global),
            "false in the other mode changes nothing"
        );
        p.change(PatternOp::True, &TraceSpec::local()).unwrap();
        assert!(p.applied(0).is_some_and(|s| !s.global && s.flags.local));
        // The argument checks of any pattern.
        assert!(p
            .change(
                PatternOp::True,
                &TraceSpec {
                    global: true,
                    ..TraceSpec::local()
                }
            )
            .is_err());
        assert!(p
            .change(
                PatternOp::Pause,
                &TraceSpec::counters(FlagSet {
                    call_count: true,
                    ..FlagSet::default()
                })
            )
            .is_err());
        assert!(
            p.applied(0).is_some_and(|s| s.flags.local),
            "a refused change changes nothing"
        );
    }

    /// `trace_info(on_load, Item)` as measured on OTP 25 and 29 (CL8, `trace_info_on_load`).
    #[test]
    fn on_load_info_as_erts_answers() {
        let info = |p: &OnLoad, k: InfoKey| match p.info(k) {
            Term::Tuple(v) if v.len() == 2 && v[0] == Term::Atom(k.atom()) => v[1].to_string(),
            t => panic!("{t}"),
        };
        let mut p = OnLoad::default();
        for k in InfoKey::EVERY {
            assert_eq!(info(&p, k), "false", "off: {}", k.atom());
        }
        let rt = TraceSpec::local()
            .call_count()
            .ms(Some(MatchSpec::RETURN_TRACE));
        p.change(PatternOp::True, &rt).unwrap();
        assert_eq!(info(&p, InfoKey::Traced), "local");
        assert_eq!(info(&p, InfoKey::MatchSpec), "[{'_',[],[{return_trace}]}]");
        assert_eq!(info(&p, InfoKey::CallCount), "true");
        assert_eq!(info(&p, InfoKey::CallTime), "false");
        assert_eq!(info(&p, InfoKey::Meta), "false");
        assert_eq!(
            info(&p, InfoKey::All),
            "[{traced,local},{match_spec,[{'_',[],[{return_trace}]}]},{meta,false},{meta_match_spec,false},{call_count,true}]"
        );
        // Global mode with a match spec, then counters only: the match spec stays stored;
        // only `all` shows it.
        let mut g = OnLoad::default();
        g.change(
            PatternOp::True,
            &TraceSpec::global().ms(Some(MatchSpec::RETURN_TRACE)),
        )
        .unwrap();
        assert_eq!(info(&g, InfoKey::Traced), "global");
        let cc = TraceSpec::counters(FlagSet {
            call_count: true,
            ..FlagSet::default()
        });
        g.change(PatternOp::True, &cc).unwrap();
        assert_eq!(info(&g, InfoKey::Traced), "false");
        assert_eq!(info(&g, InfoKey::MatchSpec), "false");
        assert_eq!(
            info(&g, InfoKey::All),
            "[{traced,false},{match_spec,[{'_',[],[{return_trace}]}]},{meta,false},{meta_match_spec,false},{call_count,true}]"
        );
        g.change(PatternOp::False, &cc).unwrap();
        assert_eq!(info(&g, InfoKey::All), "false");
    }

    /// A load applies the on_load pattern to the new version; clearing the pattern keeps the
    /// breakpoints it set; the next load then gets nothing; sessions apply oldest-first in the
    /// chain (CL8).
    #[test]
    fn a_load_applies_the_on_load_pattern_and_clearing_it_keeps_breakpoints() {
        let f = Mfa::new("m", "f", 0);
        let mut o = Oracle::new(vec![f.clone(), Mfa::new("n", "g", 0)]);
        assert_eq!(o.on_load_pattern(PatternOp::True, &local_count(0)), Ok(0));
        assert_eq!(
            o.trace_info(0, &f, InfoItem::Traced),
            InfoValue::False,
            "nothing before a load"
        );
        assert!(o.code_op(CodeOp::Load, "m"));
        assert_eq!(
            o.trace_info(0, &f, InfoItem::CallCount),
            InfoValue::Count(0)
        );
        let g = Mfa::new("n", "g", 0);
        assert_eq!(
            o.trace_info(0, &g, InfoItem::Traced),
            InfoValue::False,
            "only the loaded module"
        );
        o.call(0, 1, 1);
        assert_eq!(o.on_load_pattern(PatternOp::False, &local_count(0)), Ok(0));
        assert_eq!(
            o.trace_info(0, &f, InfoItem::CallCount),
            InfoValue::Count(1)
        );
        assert!(o.code_op(CodeOp::Load, "m"));
        assert_eq!(o.trace_info(0, &f, InfoItem::Traced), InfoValue::False);
        // Sessions: legacy applied first, then newest first: the oldest session's node heads
        // the chain.
        let s1 = o.create_session();
        let s2 = o.create_session();
        for s in [0, s1, s2] {
            o.on_load_pattern(PatternOp::True, &TraceSpec::local().session(s))
                .unwrap();
        }
        assert!(o.code_op(CodeOp::Load, "m"));
        let order: Vec<u32> = o.call(0, 1, 0b111).into_iter().map(|e| e.0).collect();
        assert_eq!(order, vec![s1, s2, 0]);
        assert!(o.destroy_session(s1));
        assert!(o.code_op(CodeOp::Load, "m"));
        let order: Vec<u32> = o.call(0, 1, 0b111).into_iter().map(|e| e.0).collect();
        assert_eq!(order, vec![s2, 0]);
        // A delete (after the purge of the old version) applies nothing.
        assert!(!o.code_op(CodeOp::Purge, "m"));
        assert!(o.code_op(CodeOp::Delete, "m"));
        assert_eq!(o.trace_info(0, &f, InfoItem::Traced), InfoValue::Undefined);
    }
}
