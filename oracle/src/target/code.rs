//! Code loading for [`RefEngine`] (`Feature::CodeLoading`; docs/scenario.md, "Code loading"):
//! `load`, `delete`, `purge`, `soft_purge`, processes waiting in a receive function and their
//! `resume`, on the one reference engine (`bpspec_reference::Engine`):
//!
//! - the **versions**: every module of the scenario's functions is a module of the engine
//!   (`Engine::with_modules`, load.rs: its module table, one code index for all of them, the
//!   export entries, each module's current and old version), under `LoadProtocol::NonBlocking`
//!   (or `Blocking`: [`RefEngine::with_load_protocol`]). Loads, deletes and purges are the
//!   engine's steps (`load_in`, `delete_in`, `purge_in`); their answers are the ops' answers
//!   (`not_purged`, `OldCodeInUse` = `check_process_code`). A waiting process is a
//!   `Scheduler` of the engine (id = pid) that holds its module's version
//!   (`Scheduler::stay_in_version`, counted in the version's `in_code`), and a local call made
//!   in an old version (`Entry::old`) is that scheduler's `local_call`, which asserts it runs
//!   the version the process is in.
//! - the **breakpoints**: the modules' versions and export entries (`pattern_on_versions`:
//!   `Engine::trace_pattern_funcs_op_in` per module; `Engine::trace_info_module_in`; the
//!   runner's calls `Scheduler::call_version_proc` with its processes, in `target.rs`); a load
//!   or delete first clears the module's patterns (`clear_module_patterns`). What a process
//!   keeps once its version is old is named by its module's name (`Ci::module`), never the
//!   engine's static area, which the runner's engine does not have
//!   (`Engine::with_versions_only`).
//!
//! `purge` (`code:purge/1`) is the engine's killing purge (`Engine::purge_kill_in`, the engine
//! made `with_kills`), run on a thread of its own while the runner schedules the processes in
//! the old version: each takes the exit signal when woken (its frames in the version dropped
//! without returning, `in_code` decremented), its scheduler is dropped and its stack on the
//! static area too (no message, no charge); the purge then frees the version. A `load` over a
//! current version with old code purges first, as the code server does.

use super::RefEngine;
use crate::scenario::CodeOp;
use bpspec_reference::{
    Engine, FlagSet, FuncId, InfoItem, InfoKey, InfoValue, LoadError, LoadProtocol, Mfa,
    ModuleConfig, Pattern, PatternError, PatternOp, Qsbr, Scheduler, SessionId, Term, TraceSpec,
};
use bpspec_spec::code::{module_pattern, on_load_order, CodeMutant, OnLoad};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The purge's kill: at most this many rounds of scheduling the processes in the old version
/// before the runner gives up (each round yields to the purge's thread).
const KILL_ROUNDS: u64 = 1_000_000;

/// One scheduler per scenario process (pids 1..=16: `scenario::MAX_PROCESSES`), ids 1..=16 of
/// the engine (id 0 is the runner's).
pub(super) const SCHEDULERS: usize = crate::scenario::MAX_PROCESSES;

/// A module of the engine: its index in the engine's module table and the scenario's functions
/// in it (the module's function `i` is `funcs[i]`).
struct ModuleCode {
    m: usize,
    funcs: Vec<FuncId>,
}

/// The code state of a [`RefEngine`].
pub(super) struct Code {
    pub(super) protocol: LoadProtocol,
    /// Deliberately wrong code loading (the same three as the sequential oracle's), for the
    /// check that the corpus catches them on our engine (oracle/tests/corpus.rs).
    pub(super) mutant: Option<CodeMutant>,
    /// The scenario's function table: function `f` is `funcs[f]` (the runner's own, as the
    /// module table's `ModCode::mfas` name them; not the engine's static area).
    pub(super) funcs: Vec<Mfa>,
    /// The scenario's export set: the functions with an export entry in the scenario (`None`:
    /// all). The runner's own: the modules' export entries exist for every function, a
    /// `global` pattern matches only these (`pattern_on_versions`, `is_export_patched`).
    pub(super) exported: Option<BTreeSet<FuncId>>,
    /// The engine's modules by name.
    modules: BTreeMap<String, ModuleCode>,
    /// Per pid, the process's scheduler (asleep between the runner's steps).
    scheds: BTreeMap<u64, Scheduler<Qsbr>>,
    /// A code op, wait or resume has run.
    touched: bool,
    /// Functions whose module has no current version (deleted).
    unloaded: BTreeSet<FuncId>,
    /// Processes killed by a purge.
    killed: BTreeSet<u64>,
    /// The versions loaded from the second code (`load_changed`): (module, version).
    changed: BTreeSet<(String, u32)>,
    /// Processes waiting in a receive function: pid -> (module, version).
    waiting: BTreeMap<u64, (String, u32)>,
    /// Processes resumed and still in the version they waited in (until the next code op,
    /// wait or resume: the resume op runs the whole body).
    running: BTreeMap<u64, (String, u32)>,
    /// Each session's `on_load` pattern (spec/src/code.rs CL8): the sequential oracle's state
    /// (`OnLoad::change`), applied after a load by the engine's own `trace_pattern` on the new
    /// version (`apply_on_load`).
    pub(super) on_load: BTreeMap<SessionId, OnLoad>,
}

impl Code {
    /// The modules of the scenario's functions `funcs` (exported: `exported`, `None`: all), in
    /// the order their first function comes (each loaded, version 1, untraced), and the code
    /// state over them.
    pub(super) fn modules_of(
        funcs: &[Mfa],
        exported: Option<&[FuncId]>,
        protocol: LoadProtocol,
    ) -> (Vec<ModuleConfig>, Code) {
        let mut configs: Vec<ModuleConfig> = Vec::new();
        let mut modules: BTreeMap<String, ModuleCode> = BTreeMap::new();
        for (f, mfa) in funcs.iter().enumerate() {
            let name = &mfa.module;
            let mc = modules.entry(name.clone()).or_insert_with(|| {
                configs.push(ModuleConfig {
                    name: name.clone(),
                    mfas: Vec::new(),
                    traced: false,
                });
                ModuleCode {
                    m: configs.len() - 1,
                    funcs: Vec::new(),
                }
            });
            mc.funcs.push(f);
            configs[mc.m].mfas.push(mfa.clone());
        }
        let mut code = Code::new(protocol);
        code.modules = modules;
        code.funcs = funcs.to_vec();
        code.exported = exported.map(|x| x.iter().copied().collect());
        (configs, code)
    }

    fn new(protocol: LoadProtocol) -> Code {
        Code {
            protocol,
            mutant: None,
            funcs: Vec::new(),
            exported: None,
            modules: BTreeMap::new(),
            scheds: BTreeMap::new(),
            touched: false,
            unloaded: BTreeSet::new(),
            killed: BTreeSet::new(),
            changed: BTreeSet::new(),
            waiting: BTreeMap::new(),
            running: BTreeMap::new(),
            on_load: BTreeMap::new(),
        }
    }

    /// Has `f` an export entry in the scenario?
    pub(super) fn is_exported(&self, f: FuncId) -> bool {
        self.exported.as_ref().is_none_or(|x| x.contains(&f))
    }

    pub(super) fn is_loaded(&self, f: FuncId) -> bool {
        !self.unloaded.contains(&f)
    }

    pub(super) fn killed(&self, pid: u64) -> bool {
        self.killed.contains(&pid)
    }

    /// No code op, wait or resume has run.
    pub(super) fn untouched(&self) -> bool {
        !self.touched
    }

    /// Process `pid`'s scheduler, made on first use and asleep between the runner's steps.
    fn sched(&mut self, engine: &Arc<Engine<Qsbr>>, pid: u64) -> &mut Scheduler<Qsbr> {
        assert!(
            (1..=SCHEDULERS as u64).contains(&pid),
            "pid {pid} out of range"
        );
        self.scheds.entry(pid).or_insert_with(|| {
            let mut s = Scheduler::start(engine.clone(), pid as usize);
            s.sleep();
            s
        })
    }

    /// The resumed processes return out of their versions.
    fn settle(&mut self, engine: &Arc<Engine<Qsbr>>) {
        self.touched = true;
        for (pid, _) in std::mem::take(&mut self.running) {
            // Its scheduler sleeps between the runner's steps (`sched`): it is woken for the
            // return, as for every other step of a process (the return runs its frames).
            let s = self.sched(engine, pid);
            s.wake();
            s.return_out();
            s.sleep();
        }
    }
}

impl RefEngine {
    /// Our engine with code loading under `protocol` (docs/nonblocking-load.md).
    pub fn with_load_protocol(funcs: Vec<Mfa>, protocol: LoadProtocol) -> RefEngine {
        RefEngine::over(RefEngine::config(funcs.clone()), funcs, None, protocol)
    }

    /// Our engine with code loading wrong in the way `m` says (spec/src/code.rs's mutants).
    /// `OldFramesCharge` keeps what the processes charge through `clear_module_patterns` (under
    /// the module's name, `Ci::module`) and renames it to the current version after the load or
    /// delete (`old_frames_charge`).
    pub fn with_code_mutant(funcs: Vec<Mfa>, m: CodeMutant) -> RefEngine {
        let mut e = RefEngine::with_load_protocol(funcs, LoadProtocol::NonBlocking);
        e.code.mutant = Some(m);
        e
    }

    /// The engine's module `module` (every module of the scenario's functions is one).
    fn module_code(&self, module: &str) -> &ModuleCode {
        self.code
            .modules
            .get(module)
            .unwrap_or_else(|| panic!("module {module}: none of the scenario's functions"))
    }

    /// `f`'s module (its index in the engine's module table) and its index in the module.
    pub(super) fn in_module(&self, f: FuncId) -> (usize, usize) {
        let module = &self.code.funcs[f].module;
        let mc = self.module_code(module);
        let i = mc
            .funcs
            .iter()
            .position(|&g| g == f)
            .expect("a function of its module");
        (mc.m, i)
    }

    /// What a clear of a module's breakpoints stages, session by session: `false` of local
    /// trace and the counters, of global trace and of meta trace, in every live session
    /// (`clear_module_patterns`).
    fn clear_specs(&mut self) -> Vec<(SessionId, TraceSpec)> {
        let all = FlagSet::parse("[local, call_count, call_time, call_memory]").expect("flags");
        let meta = self.own_meta_tracer(&super::meta_tracer());
        let mut specs = Vec::new();
        for (s, _) in self.engine.session_info() {
            for spec in [
                TraceSpec::counters(all),
                TraceSpec::global(),
                TraceSpec::default().meta(meta.clone()),
            ] {
                specs.push((s, spec.session(s)));
            }
        }
        specs
    }

    /// `code:purge/1` on the engine's module: the engine's killing purge
    /// (`Engine::purge_kill_in`, `purge.rs`), run on a thread of its own while this thread
    /// schedules the processes in the old version: the purge marks the version `kill` and
    /// waits for them to exit; each, woken (scheduled in), takes the exit signal
    /// (`calls.rs` `take_signals`: its frames dropped without returning, no charge, `in_code`
    /// decremented) and sleeps again; then the purge frees the version after its grace period.
    /// Their stacks on the static area go too (no message, no charge). `true` only if it
    /// killed one (spec/src/code.rs CL4).
    fn purge_killing(&mut self, module: &str) -> bool {
        let m = self.module_code(module).m;
        let old = self.engine.old_version_of(m);
        let dead = bpspec_spec::code::waiting_in(&self.code.waiting, module, old);
        let e = self.engine.clone();
        let scheds = &mut self.code.scheds;
        let purged = std::thread::scope(|sc| {
            let purge = sc.spawn(|| e.purge_kill_in(m));
            let mut pending = dead.clone();
            let mut rounds: u64 = 0;
            // Until every process in the old version took its exit, or the purge ended without
            // waiting for them (an engine mutant that skips the check: then `pending` stays).
            while !pending.is_empty() && !purge.is_finished() {
                rounds += 1;
                assert!(
                    rounds < KILL_ROUNDS,
                    "{module}: the purge killed none of {pending:?}"
                );
                pending.retain(|pid| {
                    let s = scheds.get_mut(pid).expect("a waiting process's scheduler");
                    let before = s.killed();
                    // Scheduled in: its signals first (the exit, once the purge marked the
                    // version); asleep again, so the purge's waits never wait for it.
                    s.wake();
                    let killed = s.killed() > before;
                    s.sleep();
                    !killed
                });
                std::thread::yield_now();
            }
            (purge.join().expect("the purge's thread"), pending)
        });
        let (purged, pending) = purged;
        assert!(
            pending.is_empty(),
            "{module}: the purge freed version {old} with {pending:?} in it"
        );
        match purged {
            Ok(had) => assert_eq!(had, old != 0, "{module}: purge of version {old}"),
            Err(x) => panic!("purge of {module}: {x}"),
        }
        for &pid in &dead {
            drop(self.code.scheds.remove(&pid)); // dead, asleep
            self.code.waiting.remove(&pid);
            self.code.killed.insert(pid);
            // Its stack goes without returning: no message, no charge.
            self.procs.remove(&pid);
        }
        !dead.is_empty()
    }

    pub(super) fn code_op_impl(&mut self, op: CodeOp, module: &str) -> bool {
        self.code.settle(&self.engine);
        let e = self.engine.clone();
        let m = self.module_code(module).m;
        let fs = self.module_code(module).funcs.clone();
        let answer = match op {
            CodeOp::Load | CodeOp::LoadChanged => {
                if e.current_version_of(m) != 0
                    && self.code.mutant != Some(CodeMutant::LoadKeepsBreakpoints)
                {
                    self.clear_module_patterns(module);
                }
                let v = match e.load_in(m) {
                    Ok(v) => v,
                    Err(LoadError::NotPurged) => {
                        // The code server purges first (CL2).
                        self.purge_killing(module);
                        e.load_in(m)
                            .unwrap_or_else(|x| panic!("load of {module} after purge: {x}"))
                    }
                    Err(x) => panic!("load of {module}: {x}"),
                };
                assert_eq!(e.current_version_of(m), v);
                if self.code.mutant == Some(CodeMutant::OldFramesCharge) {
                    self.old_frames_charge(module);
                }
                if op == CodeOp::LoadChanged {
                    self.code.changed.insert((module.to_string(), v));
                }
                for f in &fs {
                    self.code.unloaded.remove(f);
                }
                self.apply_on_load(module);
                true
            }
            CodeOp::Delete => {
                if e.current_version_of(m) != 0 && e.old_version_of(m) == 0 {
                    self.clear_module_patterns(module);
                }
                let deleted = e.delete_in(m);
                if self.code.mutant == Some(CodeMutant::OldFramesCharge) {
                    self.old_frames_charge(module);
                }
                match deleted {
                    Ok(()) if self.code.mutant == Some(CodeMutant::DeleteKeepsFunctions) => true,
                    Ok(()) => {
                        self.code.unloaded.extend(fs.iter().copied());
                        true
                    }
                    Err(LoadError::NotPurged) => false,
                    // No current version: `false` while old code exists (CL3).
                    Err(LoadError::NotLoaded) => e.old_version_of(m) == 0,
                    Err(x) => panic!("delete of {module}: {x}"),
                }
            }
            CodeOp::Purge => self.purge_killing(module),
            CodeOp::SoftPurge => match e.purge_in(m) {
                Ok(_) => true,
                Err(LoadError::OldCodeInUse) => false,
                Err(x) => panic!("soft_purge of {module}: {x}"),
            },
        };
        // The engine at rest, but for the processes waiting in versions.
        if let Err(x) = e.check_at_rest_in_code() {
            panic!("{module} after {}: {x}", op.name());
        }
        answer
    }

    /// `trace_pattern(on_load, ...)`: the arguments checked as the engine checks any pattern
    /// (`Engine::check_trace_pattern`), then the session's pattern changed as the sequential
    /// oracle changes it (spec/src/code.rs CL8). Nothing of the engine changes until a load.
    pub(super) fn on_load_pattern_impl(
        &mut self,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        self.engine.check_trace_pattern(op, spec)?;
        bpspec_spec::code::change_on_load(&mut self.code.on_load, op, spec)
    }

    /// Right after a load of `module` (its patterns cleared, the new version current): each
    /// live session's `on_load` pattern on the new version, by the engine's `trace_pattern`
    /// on the module's functions (ERTS sets them by `erts_set_trace_pattern` right after the
    /// commit, under the same block; the runner makes no call in between).
    fn apply_on_load(&mut self, module: &str) {
        let pat = module_pattern(module);
        for s in on_load_order(self.code.on_load.keys().copied()) {
            if let Some(spec) = self.code.on_load[&s].applied(s) {
                self.pattern_on_versions(&pat, PatternOp::True, &spec)
                    .unwrap_or_else(|e| panic!("on_load pattern of session {s} on {module}: {e}"));
            }
        }
    }

    pub(super) fn wait_in_impl(&mut self, pid: u64, f: FuncId) {
        self.code.settle(&self.engine);
        let module = self.code.funcs[f].module.clone();
        let (m, _) = self.in_module(f);
        // The runner's process entered the current version (`enter`, its breakpoints run
        // there) and waits in it: its scheduler holds the version for it, without a second
        // call (`Scheduler::stay_in_version`).
        let v = self.engine.current_version_of(m);
        let s = self.code.sched(&self.engine, pid);
        s.wake();
        let held = s.stay_in_version(m, v);
        s.sleep();
        assert!(held && v != 0, "{pid} waits in {module} version {v}");
        self.code.waiting.insert(pid, (module, v));
    }

    pub(super) fn resume_impl(&mut self, pid: u64) -> Option<bool> {
        self.code.settle(&self.engine);
        let (module, v) = self.code.waiting.remove(&pid)?;
        let old = self.engine.current_version_of(self.module_code(&module).m) != v;
        self.code.running.insert(pid, (module, v));
        Some(old && self.code.mutant != Some(CodeMutant::OldCodeIsCurrent))
    }

    /// Which code a call of `f` by `pid` runs (spec/src/code.rs CL7): the code of the
    /// module's version it runs in, the one `pid` was resumed in if `old`, else the current
    /// one.
    pub(super) fn variant_impl(&mut self, f: FuncId, pid: u64, old: bool) -> u8 {
        let module = self.code.funcs[f].module.clone();
        let v = if old {
            match self.code.running.get(&pid) {
                Some((m, v)) if *m == module => *v,
                _ => panic!("pid {pid} runs no old version of {module}"),
            }
        } else {
            self.engine.current_version_of(self.module_code(&module).m)
        };
        let ignored = self.code.mutant == Some(CodeMutant::ChangedBodiesIgnored);
        u8::from(self.code.changed.contains(&(module, v)) && !ignored)
    }

    /// A local call to `f` made in the old version process `pid` runs in: the engine's
    /// `local_call` in that version (no breakpoint), and on the static area only the stack (a
    /// continuation for a body call).
    pub(super) fn enter_old(&mut self, f: FuncId, pid: u64, call_traced: u64, tail: bool) {
        let module = self.code.funcs[f].module.clone();
        let (mi, i) = self.in_module(f);
        // What the process is in now: the module's name of the function (the version it runs
        // may be purged under the name).
        let name = bpspec_reference::process::Ci::module(mi, i);
        let (m, v) = self
            .code
            .running
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| panic!("pid {pid} makes a call in old code it is not in"));
        assert_eq!(m, module, "a local call stays in its module");
        let s = self.code.sched(&self.engine, pid);
        s.wake();
        let seen = s.local_call(i);
        s.sleep();
        assert!(
            seen.version == v && seen.local && !seen.counted,
            "old-code call of {module} f{i}: {seen:?}, in version {v}"
        );
        self.on_proc(pid, call_traced, |_, p| {
            if !tail {
                p.push_cont();
            }
            p.current = Some(name);
        });
        self.last_callers.clear();
    }

    /// `trace_pattern` over current code (deleted functions are not matched: CL3).
    pub(super) fn pattern_on_loaded(
        &mut self,
        pattern: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        self.pattern_on_versions(pattern, op, spec)
    }

    /// `trace_info` of traced / call_count over current code.
    pub(super) fn info_loaded(&self, session: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        let Some((m, i)) = self.in_table(mfa) else {
            // A module the engine does not have: no code, as ERTS answers.
            return InfoValue::Undefined;
        };
        let key = match item {
            InfoItem::Traced => InfoKey::Traced,
            InfoItem::CallCount => InfoKey::CallCount,
        };
        let t = self.engine.trace_info_module_in(m, session, i, key);
        match &t {
            Term::Tuple(p) if p.len() == 2 => match &p[1] {
                Term::Atom("local") => InfoValue::Local,
                // `{traced, global}` is not local trace (the item's answers).
                Term::Atom("false") | Term::Atom("global") => InfoValue::False,
                Term::Atom("undefined") => InfoValue::Undefined,
                Term::Int(n) if *n >= 0 => InfoValue::Count(*n as u64),
                _ => panic!("trace_info({mfa}) on the versions gave {t}"),
            },
            _ => panic!("trace_info({mfa}) on the versions gave {t}"),
        }
    }

    /// `mfa`'s module in the engine's
    /// module table and its index there (`None`: a module the engine does not have). A
    /// function the module does not have gets the index one past its last, for which the
    /// module table answers `undefined`, as it does for every function of a module without a
    /// current version (deleted): `Engine::trace_info_module_in`.
    fn in_table(&self, mfa: &Mfa) -> Option<(usize, usize)> {
        let mc = self.code.modules.get(&mfa.module)?;
        let i = mc
            .funcs
            .iter()
            .position(|&g| self.code.funcs[g] == *mfa)
            .unwrap_or(mc.funcs.len());
        Some((mc.m, i))
    }

    /// `trace_info` as a term over current code.
    pub(super) fn info_term_loaded(&self, session: SessionId, mfa: &Mfa, key: InfoKey) -> Term {
        if let Err(e) = self.engine.check_session(session) {
            panic!("trace_info in session {session}: {e}");
        }
        match self.in_table(mfa) {
            Some((m, i)) => self.engine.trace_info_module_in(m, session, i, key),
            // A module the engine does not have: no code, as ERTS answers.
            None => Term::Tuple(vec![Term::Atom(key.atom()), Term::Atom("undefined")]),
        }
    }
}

impl RefEngine {
    /// `trace_pattern` on the modules' versions: the
    /// arguments checked as the engine checks them (`Engine::check_trace_pattern`: the check
    /// `Engine::trace_pattern` makes, without staging), then, per module with matched
    /// functions of current code (deleted ones are not matched: CL3; for `global`, exported
    /// ones only: the scenario's export entries), `Engine::trace_pattern_funcs_op_in`, one
    /// W0–W4 sequence each. Returns the number matched.
    fn pattern_on_versions(
        &mut self,
        pattern: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        self.engine.check_trace_pattern(op, spec)?;
        let funcs = self.funcs();
        // Per module: the matched functions of current code with an export entry in the
        // scenario (for `global`), and those without one.
        let mut by: BTreeMap<usize, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
        for f in pattern.matching(&funcs) {
            if !self.code.is_loaded(f) {
                continue;
            }
            let (m, i) = self.in_module(f);
            let e = by.entry(m).or_default();
            if spec.global && !self.code.is_exported(f) {
                e.1.push(i);
            } else {
                e.0.push(i);
            }
        }
        let mut n = 0;
        for (m, (mut fs, mut local)) in by {
            fs.sort_unstable();
            local.sort_unstable();
            if !fs.is_empty() {
                n += self.engine.trace_pattern_funcs_op_in(m, &fs, op, spec)?;
            }
            if op != PatternOp::False && !local.is_empty() {
                // `global` on a function without an export entry matches no entry (not
                // counted) but still clears the session's local flags off its code (ERTS's
                // exclusion): the module's functions all have entries, so that clear is its
                // own `false` of local trace, the counters and meta in the session.
                let all =
                    FlagSet::parse("[local, call_count, call_time, call_memory]").expect("flags");
                let meta = self.own_meta_tracer(&super::meta_tracer());
                for clear in [
                    TraceSpec::counters(all),
                    TraceSpec::default().meta(meta.clone()),
                ] {
                    let clear = clear.session(spec.session);
                    self.engine
                        .trace_pattern_funcs_op_in(m, &local, PatternOp::False, &clear)?;
                }
            }
        }
        if let Err(e) = self.engine.check_at_rest_in_code() {
            panic!("after trace_pattern {pattern:?}: {e}");
        }
        Ok(n)
    }

    /// ERTS's `erts_clear_module_break` and `erts_clear_all_export_break` on `module` on the
    /// versions: the module's patterns cleared (`trace_pattern_funcs_op_in` with `false` of
    /// local trace and the counters, of global trace and of meta trace, in every live session)
    /// before the load or delete, so the new version gets none (ERTS's `finish_loading` carries
    /// no pattern: CL1). Then what the runner's processes charge to the module's version (their
    /// pbts and call_time/call_memory return frames) names nothing any more (CL6: the version
    /// becoming old has no breakpoints), and the functions they are in or return into, and their
    /// return_trace frames, name the function by its module's name (`Ci::module`, the module
    /// table's: names for messages only, never charged), so nothing of theirs names a version a
    /// purge may free.
    fn clear_module_patterns(&mut self, module: &str) {
        let m = self.module_code(module).m;
        let n = self.module_code(module).funcs.len();
        let all_fs: Vec<usize> = (0..n).collect();
        for (s, spec) in self.clear_specs() {
            if let Err(e) =
                self.engine
                    .trace_pattern_funcs_op_in(m, &all_fs, PatternOp::False, &spec)
            {
                panic!("clearing {module}'s patterns in session {s}: {e}");
            }
        }
        if let Err(e) = self.engine.check_at_rest_in_code() {
            panic!("after clearing {module}'s patterns: {e}");
        }
        let e = self.engine.clone();
        // Module `module`'s function of a version's area, by its module's name
        // (`Ci::module`: the module table's, whichever version).
        let ours = |g: &bpspec_reference::process::Ci| -> Option<bpspec_reference::process::Ci> {
            if !matches!(g.area, bpspec_reference::Area::Version(_)) {
                return None;
            }
            (e.mfa_of(*g).module == module).then(|| bpspec_reference::process::Ci::module(m, g.f))
        };
        let to_name = |c: &mut Option<bpspec_reference::process::Ci>| {
            if let Some(g) = c.as_ref().and_then(ours) {
                *c = Some(g);
            }
        };
        // The `OldFramesCharge` mutant keeps what they charge, under the module's name for now
        // and the current version's after the load or delete (`old_frames_charge`).
        let keep = self.code.mutant == Some(CodeMutant::OldFramesCharge);
        let gone = |c: &mut Option<bpspec_reference::process::Ci>| {
            if let Some(g) = c.as_ref().and_then(ours) {
                *c = keep.then_some(g);
            }
        };
        for p in self.procs.values_mut() {
            for b in p.time.iter_mut().chain(p.memory.iter_mut()) {
                gone(&mut b.ci);
            }
            to_name(&mut p.current);
            p.conts.iter_mut().for_each(to_name);
            for fr in &mut p.stack {
                match fr {
                    bpspec_reference::Frame::CallTraceReturn {
                        prev, prev_memory, ..
                    } => {
                        gone(prev);
                        gone(prev_memory);
                    }
                    bpspec_reference::Frame::ReturnTrace { func, .. } => {
                        if let Some(g) = ours(func) {
                            *func = g;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

impl RefEngine {
    /// The `OldFramesCharge` code mutant on the versions, after a load or delete of `module`:
    /// what the runner's processes charge to the module's functions (their pbts and
    /// call_time/call_memory return frames), kept by `clear_module_patterns` under the module's
    /// names (`Ci::module`, which the charge code refuses), names the current version's
    /// functions, so frames pushed in the version that became old charge the new version's rows
    /// (spec/src/code.rs CL6, violated); after a delete (no current version) they charge
    /// nothing. The names stay valid: the next load or delete renames them again before this
    /// version becomes old.
    fn old_frames_charge(&mut self, module: &str) {
        let m = self.module_code(module).m;
        let e = self.engine.clone();
        let rename = |c: &mut Option<bpspec_reference::process::Ci>| {
            if c.is_some_and(|g| g.area == bpspec_reference::Area::Module(m)) {
                // After a delete there is no current version: they charge nothing.
                *c = e.current_ci_of(m, c.expect("a name").f);
            }
        };
        for_each_charge_name(self.procs.values_mut(), rename);
    }
}

/// Every name a process's charges carry (its call_time and call_memory objects, and the previous
/// ones its call trace return frames keep), each given to `f`: the walk of `old_frames_charge`
/// (the mutant's renaming).
fn for_each_charge_name<'a>(
    procs: impl Iterator<Item = &'a mut super::Proc>,
    mut f: impl FnMut(&mut Option<bpspec_reference::process::Ci>),
) {
    for p in procs {
        for b in p.time.iter_mut().chain(p.memory.iter_mut()) {
            f(&mut b.ci);
        }
        for fr in &mut p.stack {
            if let bpspec_reference::Frame::CallTraceReturn {
                prev, prev_memory, ..
            } = fr
            {
                f(prev);
                f(prev_memory);
            }
        }
    }
}
