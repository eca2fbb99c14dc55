//! Loading, deleting and purging a traced module: the ERTS protocol (thread progress blocked)
//! and a non-blocking one, behind one switch ([`LoadProtocol`]). docs/nonblocking-load.md has
//! the design, the promise and its proof.
//!
//! The promise (P-load), for every call through an export entry:
//! - **no mix**: a call runs one version, the one whose address it read from the export entry
//!   of the active code index, and runs it with that version's breakpoints as the stager set
//!   them for it: while the version's `promised` flag is set, the call executes the breakpoint
//!   and counts (asserted in [`Scheduler::call_ext`](crate::hit::Scheduler::call_ext), `calls.rs`);
//! - **no lost event**: every counted call is in a counter that is either live or was folded
//!   into the module's retired total after the last call that could increment it
//!   ([`Engine::total_count`]);
//! - **nothing freed while reachable**: no version, breakpoint or counter is freed while a
//!   scheduler can still reach it (liveness words, asserted by every read; loom checks the
//!   order).
//!
//! `Blocking` (ERTS `beam_bif_load.c` with `erts_clear_module_break` and the on_load patterns
//! run with `erts_thr_progress_block`): the loader waits until no scheduler is inside a call
//! (an `RwLock` of the shim: a scheduler holds the shared side for the span of a call), clears
//! the old version's breakpoints, builds the new one with its patterns, swaps the export entries,
//! commits the code index, and lets the schedulers go.
//!
//! `NonBlocking`: the loader builds the new version with its breakpoints already set in both
//! halves (no scheduler can reach it, so there is nothing to stage in steps), points the staging
//! export addresses at it, commits the code index (Release), waits for thread progress (LW1), and
//! only then removes the old version's breakpoints: after LW1 no remote call reaches the old
//! version, but a process still executing in it (held across progress points) keeps making local
//! calls into it, so the removal is the full `trace_pattern(false)` sequence on the old version
//! (stage, W1, commit, W2, uninstall, W3, consolidate, W4, free). Purge is a soft purge
//! (`check_process_code`, then refuse): it fails while a process is in the old version; otherwise
//! it unlinks the version, waits for thread progress (PW: every process's return from it happens
//! before) and frees it. Delete is a load of "no version" (the `undef` stub).
//!
//! The code index scheme is a switch ([`CodeIxScheme`], `code_ix.rs`): the above is `Two`; under
//! `Three` (ERTS's three code indices) the NonBlocking wait of a load or delete is the code
//! barrier before the commit, nothing waits after it (a call that read the old address before
//! the commit may still enter the old version: the removal's W0/W1 wait for it while the old
//! version's active halves still count it), and a purge waits first, then checks, then PW.
//!
//! One engine: an [`Engine`] built [`Engine::with_modules`] (or [`Engine::with_module`], one
//! module, module 0) owns the code ([`CodeMgmt`]: the module table with one entry per module,
//! one code index for all of them, each module's export entries, the world lock and the
//! switches), and the
//! steps are its methods: this file has the load and delete steps, the module's trace_pattern
//! and the at-rest check; `purge.rs` the purges; `calls.rs` a scheduler's calls into the
//! module. The breakpoints are the engine's own: each version's code area holds `GenericBp`
//! chains (`code_ix.rs`), and every `trace_pattern` on a version, the removal of an old
//! version's breakpoints included, is `stage.rs` followed by the finisher's one sequence
//! (`finisher.rs::finish_in`, with its W0–W4 mutants) on that version's area
//! ([`Area::Version`]). A call into a version runs the engine's hit path (`hit.rs::hit_in`).
//! Lock order: the module table (`CodeMgmt::modules`), then the engine's code modification
//! permission.

use crate::bp::SessionId;
use crate::bp::{flags, BpCount, GenericBp, Liveness, ERTS_NUM_BP_IX};
use crate::calltrace::TraceSpec;
use crate::code::{CodeArea, FuncHeader, FuncId, Mfa};
use crate::code_ix::{
    fbit, CodeIndex, CodeIxScheme, CodeVersion, ExportEntry, ModPattern, Module,
    MAX_MODULE_FUNCTIONS, OP_I_GENERIC_BREAKPOINT,
};
use crate::engine::{Engine, Permission};
use crate::export::{Area, VersionArea};
use crate::mutant::{self, Mutant};
use crate::pattern::{FlagSet, PatternError, PatternOp};
use crate::progress::ThreadProgress;
use crate::session::SessionError;
use crate::sync::Ordering::Relaxed;
use crate::sync::{
    lock, write, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Mutex, RwLock,
    UnsafeCell,
};
use crate::timem::Totals;

/// call_count alone: the legacy pattern of [`Engine::trace_pattern_module`].
const CALL_COUNT: FlagSet = FlagSet {
    local: false,
    call_count: true,
    call_time: false,
    call_memory: false,
};

/// Which load protocol the engine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoadProtocol {
    /// ERTS: thread progress blocked during load, delete and purge of a traced module.
    Blocking,
    /// The variant: commit the code index, wait for thread progress, then clear the old
    /// version's breakpoints; no scheduler ever stops.
    NonBlocking,
}

impl LoadProtocol {
    pub const ALL: [LoadProtocol; 2] = [LoadProtocol::Blocking, LoadProtocol::NonBlocking];
    pub fn name(self) -> &'static str {
        match self {
            LoadProtocol::Blocking => "blocking",
            LoadProtocol::NonBlocking => "nonblocking",
        }
    }
}

/// Why a load, delete or purge was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// ERTS `not_purged`: the module has old code; purge it first.
    NotPurged,
    /// Delete of a module with no current code.
    NotLoaded,
    /// Purge refused (`code:soft_purge/1`): a process still executes the old version
    /// (`erlang:check_process_code/2` says true). ERTS's `code:purge/1` would kill it instead;
    /// the model refuses (docs/nonblocking-load.md §2).
    OldCodeInUse,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotPurged => {
                f.write_str("module m has old code: purge it first (not_purged)")
            }
            LoadError::NotLoaded => f.write_str("module m has no current code to delete"),
            LoadError::OldCodeInUse => {
                f.write_str("module m: a process still executes its old code (purge refused)")
            }
        }
    }
}

/// Stager-owned state of the module table (under its lock, `CodeMgmt::modules`, which every
/// operation takes before the engine's code modification permission).
pub struct ModuleTable {
    /// One entry per module (ERTS `module.c`: its current and old version, its patterns),
    /// indexed as `CodeMgmt::mods`.
    pub modules: Vec<Module>,
    /// Checked builds: freed versions, poisoned, never returned to the allocator.
    pub(crate) graveyard_versions: Vec<*mut CodeVersion>,
    /// Versions allocated minus freed (every module's).
    pub live_versions: u64,
}

// SAFETY: the raw pointers are owned by the stager state and dereferenced for writing only by the
// permission holder; schedulers read through them under the rules of docs/nonblocking-load.md
// (checked by the liveness words, loom and shuttle: models/tests/load_*.rs).
unsafe impl Send for ModuleTable {}

/// A module's fixed part (ERTS: its export entries; the functions every version has): set when
/// the module is added ([`Engine::with_module`], [`Engine::with_modules`]), before any
/// scheduler starts, and never changed.
pub struct ModCode {
    /// The module's name (`m` for [`Engine::with_module`]).
    pub name: String,
    /// Function `f` of every version is `mfas[f]`.
    pub mfas: Vec<Mfa>,
    /// The module's export entries, one address per code index (the static area's export
    /// entries are [`Engine::exports`]).
    pub exports: Vec<ExportEntry>,
    /// The export entries' breakpoints (ERTS `ep->info` and the trampoline, `global` trace):
    /// per function a dispatch word (`EXPORT_BASE + f`, or the breakpoint instruction) and a
    /// breakpoint slot, one per entry for every code index. Named [`Area::Version`] by the
    /// engine's steps (a code area the module owns, as a version's).
    pub(crate) exp_code: CodeArea,
}

impl ModCode {
    fn new(name: &str, mfas: Vec<Mfa>) -> ModCode {
        let n = mfas.len();
        ModCode {
            name: name.to_string(),
            exports: (0..n).map(ExportEntry::new).collect(),
            exp_code: CodeArea {
                funcs: mfas
                    .iter()
                    .enumerate()
                    .map(|(f, mfa)| FuncHeader {
                        mfa: mfa.clone(),
                        instr: AtomicUsize::new(crate::export::EXPORT_BASE + f),
                        gen_bp: AtomicPtr::new(std::ptr::null_mut()),
                        original: crate::export::EXPORT_BASE + f,
                    })
                    .collect(),
            },
            mfas,
        }
    }

    /// The number of functions of every version.
    pub fn functions(&self) -> usize {
        self.mfas.len()
    }
}

/// The engine's code management (ERTS `code_ix.c`, `export.c`, `module.c`, `beam_bif_load.c`):
/// a module table of modules, each with a fixed set of exported functions, whose versions carry
/// the engine's own breakpoints, and one code index for all of them. Present when the engine is
/// built with [`Engine::with_module`] (one module `m`, module 0, which the calls without a
/// module index name) or [`Engine::with_modules`]; engines without it have no module table and
/// make none of these loads.
pub struct CodeMgmt {
    pub code_ix: CodeIndex,
    /// The modules' fixed parts, by module index (the module table's entries are in the same
    /// order).
    pub mods: Vec<ModCode>,
    /// The module table (`module.c`), taken before the engine's code modification permission.
    pub(crate) modules: Mutex<ModuleTable>,
    /// The stop-the-world of the blocking protocol (`erts_thr_progress_block`): an awake
    /// scheduler holds the shared side from one progress point (or wake-up) to the next, so the
    /// loader's exclusive side is granted once every scheduler is at a progress point or asleep.
    pub(crate) world: RwLock<()>,
    pub protocol: LoadProtocol,
    /// Two code indices with LW1 after each commit, or ERTS's three with the code barrier
    /// before it ([`Engine::with_code_ix`]).
    pub scheme: CodeIxScheme,
    /// `code:purge/1` may kill processes ([`Engine::with_kills`]): only then do processes
    /// look for an exit signal at their scheduling points, so engines that never kill make no
    /// extra load (the models' state spaces stay as they were).
    pub(crate) kills: bool,
    /// Remote calls run the export entry's breakpoint ([`Engine::with_global_trace`]): only
    /// then do they read its dispatch word, so engines without global trace make no extra load.
    pub(crate) globals: bool,
    /// NonBlocking under `Two`: no LW1 after the commit of a load or delete whose old version
    /// has breakpoints; the W1 of their removal stands for it ([`Engine::with_lw1_fold`]).
    pub fold_lw1: bool,
    /// The engine's static area is not used ([`Engine::with_versions_only`]): every entry point
    /// of it asserts so ([`Engine::static_entry`]).
    pub(crate) versions_only: bool,
}

/// One module of [`Engine::with_modules`]: its name and its functions, loaded (version 1) at
/// once, traced with call_count in the legacy session if `traced`.
#[derive(Clone, Debug)]
pub struct ModuleConfig {
    pub name: String,
    pub mfas: Vec<Mfa>,
    pub traced: bool,
}

impl ModuleConfig {
    /// Module `name` with `functions` functions `f0/0`, `f1/0`, ...
    pub fn numbered(name: &str, functions: usize, traced: bool) -> ModuleConfig {
        ModuleConfig {
            name: name.to_string(),
            mfas: (0..functions)
                .map(|f| Mfa::new(name, &format!("f{f}"), 0))
                .collect(),
            traced,
        }
    }
}

impl CodeMgmt {
    pub(crate) fn new(ms: &[ModuleConfig], protocol: LoadProtocol) -> CodeMgmt {
        CodeMgmt {
            code_ix: CodeIndex::new(),
            mods: ms
                .iter()
                .map(|m| ModCode::new(&m.name, m.mfas.clone()))
                .collect(),
            modules: Mutex::new(ModuleTable {
                modules: ms
                    .iter()
                    .map(|m| {
                        assert!(
                            m.mfas.len() <= MAX_MODULE_FUNCTIONS,
                            "module {}: more than {MAX_MODULE_FUNCTIONS} functions",
                            m.name
                        );
                        let legacy = ModPattern {
                            flags: CALL_COUNT,
                            ..ModPattern::default()
                        };
                        Module {
                            next_version: 1,
                            curr: std::ptr::null_mut(),
                            old: std::ptr::null_mut(),
                            patterns: m
                                .mfas
                                .iter()
                                .map(|_| {
                                    if m.traced {
                                        vec![(0, legacy.clone())]
                                    } else {
                                        Vec::new()
                                    }
                                })
                                .collect(),
                            global: m.mfas.iter().map(|_| Vec::new()).collect(),
                        }
                    })
                    .collect(),
                graveyard_versions: Vec::new(),
                live_versions: 0,
            }),
            world: RwLock::new(()),
            protocol,
            scheme: CodeIxScheme::Two,
            kills: false,
            globals: false,
            fold_lw1: false,
            versions_only: false,
        }
    }

    /// The index of module `name`, if the engine has it.
    pub fn module_index(&self, name: &str) -> Option<usize> {
        self.mods.iter().position(|m| m.name == name)
    }
}

/// What one call saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallSeen {
    /// 0 = `undef` (no code: deleted or not loaded).
    pub version: u32,
    pub counted: bool,
    /// A local call (in the version the process is in), not through an export entry.
    pub local: bool,
    /// The flags the version's breakpoint acted on (`Hit::flags`; 0 for `undef`, an unpatched
    /// function or a killed process).
    pub flags: u32,
    /// The sessions whose counter this call counted on, a bit each (`Hit::counted`).
    pub counted_in: u64,
    /// A remote call through an export entry with global trace (an engine made
    /// [`Engine::with_global_trace`]): the entry's hit, before the version's.
    pub export_hit: Option<crate::hit::Hit>,
}

fn alloc_version(number: u32, module: usize, mc: &ModCode) -> *mut CodeVersion {
    let funcs = mc
        .mfas
        .iter()
        .enumerate()
        .map(|(f, mfa)| FuncHeader {
            mfa: mfa.clone(),
            instr: AtomicUsize::new(CodeVersion::instr_of(number, f)),
            gen_bp: AtomicPtr::new(std::ptr::null_mut()),
            original: CodeVersion::instr_of(number, f),
        })
        .collect();
    Box::into_raw(Box::new(CodeVersion {
        number,
        module,
        code: CodeArea { funcs },
        body: UnsafeCell::new(CodeVersion::body_of(number)),
        promised: AtomicU64::new(0),
        in_code: AtomicU32::new(0),
        kill: AtomicBool::new(false),
        live: Liveness::new(),
    }))
}

/// What a module trace_pattern changes on one function ([`Engine::trace_pattern_funcs_spec_in`]).
struct Change {
    f: FuncId,
    /// The flags staged on it (set or cleared).
    fl: FlagSet,
    /// Its meta tracer is staged (set or cleared).
    meta: bool,
}

/// What a module trace_pattern stages on every changed function of the current version.
struct Staging {
    session: SessionId,
    op: PatternOp,
    /// The match spec of local call trace (`true` only).
    ms: Option<std::sync::Arc<crate::calltrace::MatchSpec>>,
    meta: Option<crate::tracer::TracerSpec>,
    /// The module's traced functions before and after the call, one bit each.
    promise: (u64, u64),
}

/// What a module trace_pattern (`op` with `spec`, its match spec `ms`) changes on functions `fs`
/// of module `md`, computed per function from the pattern the session has on it; updates the
/// module's patterns (not without current code: `no_code`) and its entries' global sessions.
/// Returns the changes to stage on the current version and the functions whose export entry
/// loses the session's global flag. `reset`: `true` resets the counters the session has (ERTS),
/// else leaves them. Shared by [`Engine::trace_pattern_funcs_op_in`] and
/// [`Engine::trace_pattern_batch_in`].
fn plan_funcs(
    md: &mut Module,
    fs: &[FuncId],
    op: PatternOp,
    spec: &TraceSpec,
    ms: &Option<std::sync::Arc<crate::calltrace::MatchSpec>>,
    reset: bool,
    no_code: bool,
) -> (Vec<Change>, Vec<FuncId>) {
    let on = op != PatternOp::False;
    // Global `pause`/`restart` set global trace as `true` does (as `Engine::trace_pattern`).
    let counter_op = matches!(op, PatternOp::Pause | PatternOp::Restart) && !spec.global;
    let (session, fl) = (spec.session, spec.flags);
    let mut clear_global: Vec<FuncId> = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    for &f in fs {
        // Local excludes global in one session (ERTS `erts_set_trace_pattern`: `on` with a
        // breakpoint-type flag runs `erts_clear_export_trace` on the matched export
        // entries): the session's global flag is cleared off the function's entry in the
        // same sequence.
        let cg = on && md.global[f].contains(&session);
        if cg {
            md.global[f].retain(|&s| s != session);
            clear_global.push(f);
        }
        let had = md.patterns[f]
            .iter()
            .find(|(s, _)| *s == session)
            .map_or(ModPattern::default(), |(_, p)| p.clone());
        let hf = had.flags;
        // `pause`/`restart` on a function without the session's breakpoint: nothing,
        // unless local or meta is named (set as by `true`), `stage.rs` as ERTS.
        if counter_op && !had.is_set() && !fl.local && spec.meta.is_none() {
            continue;
        }
        // A counter named by `true` (with `reset`), `pause` or `restart` that the session
        // has is staged again (reset, paused or restarted); one it lacks is new (running)
        // for every op but `false`.
        let again = |named: bool, has: bool| named && has && (reset || counter_op);
        // The flags this call changes: new counters for `true`, set ones for `false`; local
        // and meta whenever named and set or being set.
        let change = FlagSet {
            local: fl.local && (on || hf.local),
            call_count: fl.call_count && (hf.call_count != on)
                || again(fl.call_count, hf.call_count),
            call_time: fl.call_time && (hf.call_time != on) || again(fl.call_time, hf.call_time),
            call_memory: fl.call_memory && (hf.call_memory != on)
                || again(fl.call_memory, hf.call_memory),
        };
        let meta_change = spec.meta.is_some() && (on || had.meta.is_some());
        let flags = FlagSet {
            local: if fl.local { on } else { hf.local },
            call_count: if fl.call_count { on } else { hf.call_count },
            call_time: if fl.call_time { on } else { hf.call_time },
            call_memory: if fl.call_memory { on } else { hf.call_memory },
        };
        // Paused: a named counter the session had, by `pause`; `true`, `restart` and
        // `false` run (or drop) the named ones; the others stay as they were.
        let pause = |named: bool, has: bool, was: bool| {
            if named {
                op == PatternOp::Pause && has
            } else {
                was
            }
        };
        let hp = had.paused;
        let now = ModPattern {
            flags,
            paused: FlagSet {
                local: false,
                call_count: pause(fl.call_count, hf.call_count, hp.call_count),
                call_time: pause(fl.call_time, hf.call_time, hp.call_time),
                call_memory: pause(fl.call_memory, hf.call_memory, hp.call_memory),
            },
            ms: match (fl.local, on) {
                (true, true) => ms.clone(),
                (true, false) => None,
                (false, _) => had.ms.clone(),
            },
            meta: match (&spec.meta, on) {
                (Some(t), true) => Some(t.clone()),
                (Some(_), false) => None,
                (None, _) => had.meta.clone(),
            },
        };
        // Without current code the call matches nothing (ERTS matches the loaded code):
        // the module's patterns stay as they were, so the next load does not carry what
        // this call named (the linearization of load histories against the oracle,
        // models/tests/load_linearize.rs, `lin-delete-count`).
        if no_code {
            continue;
        }
        // In place: the order of `patterns[f]` is the order the sessions' nodes were
        // chained in.
        match md.patterns[f].iter().position(|(s, _)| *s == session) {
            Some(i) if now.is_set() => md.patterns[f][i].1 = now,
            Some(i) => {
                md.patterns[f].remove(i);
            }
            None if now.is_set() => md.patterns[f].push((session, now)),
            None => {}
        }
        if change.local || change.counters() || meta_change || cg {
            changes.push(Change {
                f,
                fl: change,
                meta: meta_change,
            });
        }
    }
    (changes, clear_global)
}

/// The engine's name for version `ver`'s code area.
fn area_of(ver: &CodeVersion) -> Area {
    Area::Version(VersionArea(&ver.code))
}

impl<P: ThreadProgress> Engine<P> {
    /// The engine also owns module `m` of `functions` functions `f0/0`, `f1/0`, ... (module 0:
    /// its code index, versions, export entries and the load protocol `protocol`), version 1
    /// loaded at once and traced with call_count if `traced`; the static code area stays as
    /// configured (`EngineConfig::simple(0, schedulers)` leaves it empty, as the load models
    /// do). [`Engine::with_modules`] with that one module.
    pub fn with_module(self, functions: usize, protocol: LoadProtocol, traced: bool) -> Engine<P> {
        assert!(functions > 0 && functions < 256, "1..255 functions");
        self.with_modules(&[ModuleConfig::numbered("m", functions, traced)], protocol)
    }

    /// The engine also owns the modules `ms` (module `i` is `ms[i]`), each loaded (version 1,
    /// in this order) at once, under the load protocol `protocol`, with one code index for all
    /// of them (ERTS `code_ix.c`: a load of any module commits the index for every module's
    /// export entries). Call right after [`Engine::new`], before any scheduler starts or
    /// pattern is set. Every counter's total is folded in when its last half reference goes
    /// (count conservation across versions, `free.rs` `release_count`).
    pub fn with_modules(mut self, ms: &[ModuleConfig], protocol: LoadProtocol) -> Engine<P> {
        assert!(self.code_mgmt.is_none(), "one module table per engine");
        assert!(!ms.is_empty(), "at least one module");
        for (i, m) in ms.iter().enumerate() {
            assert!(
                !m.mfas.is_empty() && m.mfas.len() < 256,
                "module {}: 1..255 functions",
                m.name
            );
            assert!(
                ms[..i].iter().all(|x| x.name != m.name),
                "module {} twice",
                m.name
            );
        }
        {
            let bst = self.permission.get_mut().unwrap_or_else(|e| e.into_inner());
            bst.retired_counts = Some(0);
            bst.retired_timem = Some(0);
        }
        self.code_mgmt = Some(Box::new(CodeMgmt::new(ms, protocol)));
        for m in 0..ms.len() {
            self.load_in(m).expect("first load");
        }
        self
    }

    /// The engine's code management (panics on an engine built without a module).
    pub fn code_mgmt(&self) -> &CodeMgmt {
        self.code_mgmt
            .as_deref()
            .expect("an engine without a module (Engine::with_module)")
    }

    pub(crate) fn cm(&self) -> &CodeMgmt {
        self.code_mgmt()
    }

    /// Module `m`'s fixed part.
    pub(crate) fn modc(&self, m: usize) -> &ModCode {
        &self.cm().mods[m]
    }

    fn cm_mut(&mut self) -> &mut CodeMgmt {
        self.code_mgmt
            .as_deref_mut()
            .expect("an engine without a module (Engine::with_module)")
    }

    /// Let the module's export entries carry global breakpoints
    /// ([`Engine::trace_pattern_module_spec`] with `global`), run by every remote call
    /// ([`Scheduler::call_ext`](crate::hit::Scheduler::call_ext)) before the version's code
    /// (before the schedulers start).
    pub fn with_global_trace(mut self) -> Engine<P> {
        self.cm_mut().globals = true;
        self
    }

    /// Breakpoints and calls on the modules' versions only (before the schedulers start): the
    /// static area (`Area::Code`, `Area::Export`) has no function, and every entry point of it
    /// (`trace_pattern`, `trace_info`, `session_trace_info`, `is_patched`, `is_export_patched`,
    /// `mfa_of` of a static code info, a hit or a charge on it) panics
    /// ([`Engine::static_entry`]). The scenario runner's engine is made so (oracle/src/target.rs).
    pub fn with_versions_only(mut self) -> Engine<P> {
        assert!(
            self.code.funcs.is_empty() && self.exports.funcs.is_empty(),
            "with_versions_only on an engine with a static area of {} functions",
            self.code.funcs.len()
        );
        self.cm_mut().versions_only = true;
        self
    }

    /// An entry point of the static area (`what`): asserts the engine was not made
    /// [`Engine::with_versions_only`].
    pub(crate) fn static_entry(&self, what: &str) {
        assert!(
            !self.code_mgmt.as_deref().is_some_and(|c| c.versions_only),
            "{what}: the static area on an engine made with_versions_only"
        );
    }

    /// The engine's name for module `m`'s export entries' breakpoint area.
    pub(crate) fn exp_area(&self, m: usize) -> Area {
        Area::Version(VersionArea(&self.modc(m).exp_code))
    }

    /// The code index whose dispatch words install and uninstall patch on `area`, if `area` is
    /// the module's export area (`None` for every other area, whose first instruction words
    /// they patch), with the module whose area it is: the active index as the stager sees it, in place, as ERTS's
    /// `install_exp_breakpoints` and `uninstall_exp_breakpoints` (erlang/otp
    /// `erts/emulator/beam/erl_bif_trace.c`) patch `ep->dispatch.addresses[erts_active_code_ix()]`:
    /// a trace_pattern stages no code index and commits none. Install runs after W0, so a call
    /// that reads the breakpoint word finds the entry's new node with both halves written;
    /// uninstall after W2. The `global-dispatch-staging-ix` mutant patches the staging index's.
    pub(crate) fn export_dispatch_ix(&self, area: Area) -> Option<(usize, usize)> {
        let cm = self.code_mgmt.as_deref()?;
        let m = cm
            .mods
            .iter()
            .position(|mc| area == Area::Version(VersionArea(&mc.exp_code)))?;
        Some((
            m,
            if mutant::is(self.mutant, Mutant::GlobalDispatchStagingIx) {
                cm.code_ix.erts_staging_code_ix()
            } else {
                cm.code_ix.stager_active_ix()
            },
        ))
    }

    /// The word install and uninstall patch for entry `idx` of `area`: the export entry's
    /// dispatch word of code index `ix` of module `m` ([`Engine::export_dispatch_ix`]), or the
    /// function's first instruction.
    pub(crate) fn patch_word(
        &self,
        area: Area,
        idx: usize,
        ix: Option<(usize, usize)>,
    ) -> &AtomicUsize {
        match ix {
            Some((m, ix)) => &self.modc(m).exports[idx].dispatch[ix],
            None => &self.area(area).funcs[idx].instr,
        }
    }

    /// Let [`Engine::purge_kill`] kill processes in old code (before the schedulers start).
    pub fn with_kills(mut self) -> Engine<P> {
        self.cm_mut().kills = true;
        self
    }

    /// Fold LW1 into the removal's W1 (before the schedulers start): under NonBlocking with two
    /// code indices, a load or delete whose old version has breakpoints makes no LW1 after its
    /// commit; the removal's W1 (`finisher.rs::finish_in`), which begins after the commit, takes
    /// its roles (docs/nonblocking-load.md §3, "The fold"). LW1 stays where nothing is removed.
    pub fn with_lw1_fold(mut self) -> Engine<P> {
        self.cm_mut().fold_lw1 = true;
        self
    }

    /// Run loads, deletes and purges under the code index scheme `scheme` from now on (before
    /// the schedulers start; the first load, made by [`Engine::new`] with no scheduler
    /// running, is the same under both). The `load-two-code-ix` mutant keeps two indices under
    /// `Three`'s waits.
    pub fn with_code_ix(mut self, scheme: CodeIxScheme) -> Engine<P> {
        let three =
            scheme == CodeIxScheme::Three && !mutant::is(self.mutant, Mutant::LoadTwoCodeIx);
        let cm = self.cm_mut();
        cm.scheme = scheme;
        cm.code_ix.set_num(if three { 3 } else { 2 });
        self
    }

    /// NonBlocking: the wait for thread progress of a load or delete, before its commit under
    /// `Three` (the code barrier: every scheduler has passed a progress point since the last
    /// commit before this staging is published) or after it under `Two` (LW1). `before` says
    /// which place is asking. The `load-skip-code-barrier` mutant drops the code barrier alone
    /// (`load-skip-lw1-after-commit` drops it and the `Three` purge's first wait).
    fn code_wait(&self, before: bool) {
        if self.cm().protocol == LoadProtocol::NonBlocking
            && before == (self.cm().scheme == CodeIxScheme::Three)
            && !(before && mutant::is(self.mutant, Mutant::LoadSkipCodeBarrier))
        {
            self.wait_unless(Mutant::LoadSkipWaitAfterCommit);
        }
    }

    /// Build a version with the module's pattern set in both halves of every breakpoint (the
    /// version is unreachable: nothing to stage in steps). With `patterns == false` the
    /// breakpoints are left for later (the commit-before-breakpoints mutant).
    fn build_version(
        &self,
        st: &mut ModuleTable,
        bst: &mut Permission<'_>,
        m: usize,
        patterns: bool,
    ) -> *mut CodeVersion {
        let number = st.modules[m].next_version;
        st.modules[m].next_version += 1;
        let v = alloc_version(number, m, self.modc(m));
        st.live_versions += 1;
        // SAFETY: just allocated; not yet published.
        let ver = unsafe { &*v };
        if st.modules[m].traced() {
            if patterns {
                self.set_version_breakpoints(bst, ver, &st.modules[m].patterns);
            }
            ver.promised.store(st.modules[m].traced_mask(), Relaxed);
        }
        v
    }

    /// Set the module's patterns on the functions of `ver` that have some (`patterns[f]`, in
    /// the order the sessions set them): per session a node, chained newest
    /// first as staging chains them, both halves alike and sharing their objects (call_count,
    /// call_time, call_memory counters, the match spec of local call trace, the meta tracer),
    /// and the instruction patched: the state the finisher leaves after
    /// each session's `trace_pattern(true)`, written at once because no scheduler can reach
    /// `ver` (it is not published; the code index commit, Release, publishes it). The
    /// commit-before-breakpoints mutant calls it on a published version.
    fn set_version_breakpoints(
        &self,
        bst: &mut Permission<'_>,
        ver: &CodeVersion,
        patterns: &[Vec<(SessionId, ModPattern)>],
    ) {
        for (f, h) in ver.code.funcs.iter().enumerate() {
            if patterns[f].is_empty() {
                continue; // untraced function: no node, its instruction as loaded
            }
            assert!(
                h.gen_bp.load(Relaxed).is_null(),
                "version {} f{f} already has a breakpoint",
                ver.number
            );
            let mut head: *mut GenericBp = std::ptr::null_mut();
            for (session, pat) in &patterns[f] {
                let (session, fl) = (*session, pat.flags);
                let node = GenericBp::new(bst.next_bp_id, session, h.original);
                bst.next_bp_id += 1;
                bst.live_nodes += 1;
                let count = fl.call_count.then(|| BpCount::new(session, f));
                let time = fl.call_time.then(|| crate::stage::new_timem(self, bst));
                let memory = fl.call_memory.then(|| crate::stage::new_timem(self, bst));
                // The meta tracer is shared by both halves, as staging leaves it (M1 of meta.rs:
                // the half holding it is reached only through the commit that publishes `ver`).
                let meta = pat.meta.as_ref().map(crate::meta::BpMetaTracer::new);
                for ix in 0..ERTS_NUM_BP_IX {
                    node.write_half(ix, |d| {
                        if fl.local {
                            d.flags |= flags::LOCAL_TRACE;
                            d.ms = pat.ms.clone();
                        }
                        if meta.is_some() {
                            d.flags |= flags::META_TRACE;
                            d.meta = meta.clone();
                        }
                        // A paused counter without its ACTIVE bit, as `pause` leaves it.
                        let active = |paused: bool, a: u32| if paused { 0 } else { a };
                        let p = pat.paused;
                        if count.is_some() {
                            d.flags |= flags::COUNT | active(p.call_count, flags::COUNT_ACTIVE);
                        }
                        if time.is_some() {
                            d.flags |=
                                flags::TIME_TRACE | active(p.call_time, flags::TIME_TRACE_ACTIVE);
                        }
                        if memory.is_some() {
                            d.flags |=
                                flags::MEM_TRACE | active(p.call_memory, flags::MEM_TRACE_ACTIVE);
                        }
                        d.count = count.clone();
                        d.time = time.clone();
                        d.memory = memory.clone();
                    });
                }
                node.next.store(head, Relaxed);
                head = Box::into_raw(node);
            }
            h.gen_bp.store(head, Relaxed);
            h.instr.store(OP_I_GENERIC_BREAKPOINT, Relaxed);
        }
    }

    /// `erts_clear_module_break` on a version no scheduler can reach: promise withdrawn, original
    /// instructions back, breakpoints unlinked, their halves emptied (the counters' totals folded
    /// in) and freed (`free.rs`). The load-clear-old-at-once mutant runs it on a version a
    /// process still executes.
    pub(crate) fn clear_version_breakpoints(&self, bst: &mut Permission<'_>, v: *mut CodeVersion) {
        if v.is_null() {
            return;
        }
        // SAFETY: v is a live version owned by the module table; the permission is held.
        let ver = unsafe { &*v };
        ver.promised.store(0, Relaxed);
        self.clear_area_breakpoints(bst, &ver.code);
    }

    /// Every breakpoint of `code` cleared at once (no scheduler reaches them: under the block,
    /// or a version no call can reach): original instructions back, nodes unlinked, their
    /// halves emptied (counts folded in, meta released) and freed (`free.rs`).
    fn clear_area_breakpoints(&self, bst: &mut Permission<'_>, code: &CodeArea) {
        if !bst.free_list.is_empty() {
            // The pipeline plan only: the last sequence's unlinked nodes, waiting for a wait that
            // begins after its consolidate (docs/fewer-waits.md, proof P). Every caller runs
            // under the block (no scheduler is between two progress points: none holds a node)
            // or after the purge's PW, which began with this permission held, so after that
            // consolidate: either way they are free to go now, with this area's nodes.
            assert!(self.wait_plan().pipelines(), "free list not empty at rest");
            self.history.record(|| crate::history::Event::Free);
            crate::free::free(bst);
        }
        for h in &code.funcs {
            h.instr.store(h.original, Relaxed);
            let mut g = h.gen_bp.swap(std::ptr::null_mut(), Relaxed);
            let mut steps = 0;
            while !g.is_null() {
                crate::engine::chain_step(&mut steps, &h.mfa);
                // SAFETY: a node of the chain (one per session); permission held.
                let node = unsafe { &*g };
                for ix in 0..ERTS_NUM_BP_IX {
                    let old = node.write_half(ix, std::mem::take);
                    // The meta tracer's cell goes through the retire list and the next
                    // reclaim's wait.
                    crate::free::release_half(self, bst, old);
                }
                bst.free_list.push(g);
                g = node.next.load(Relaxed);
            }
        }
        crate::free::free(bst);
    }

    /// Blocking: ERTS clears the module's export breakpoints (global trace) on load and delete,
    /// under the block (`erts_clear_export_break`): the entries' chains cleared at once and the
    /// module's global patterns dropped. NonBlocking keeps them: the entry is the same for every
    /// version, and its breakpoint runs before the call reaches the version it read
    /// (docs/nonblocking-load.md §3).
    /// The dispatch words go back to the functions' addresses in the staging index `s`, which
    /// the commit makes active, as ERTS's `delete_code` (`beam_bif_load.c`, after
    /// `erts_clear_all_export_break`) writes `ep->dispatch.addresses[erts_staging_code_ix()]`;
    /// the other indices' words are written again by a later staging before a commit makes
    /// them active.
    fn clear_export_breakpoints(
        &self,
        st: &mut ModuleTable,
        bst: &mut Permission<'_>,
        m: usize,
        s: usize,
    ) {
        if !st.modules[m].any_global() {
            return;
        }
        self.clear_area_breakpoints(bst, &self.modc(m).exp_code);
        for (f, x) in self.modc(m).exports.iter().enumerate() {
            x.dispatch[s].store(crate::export::EXPORT_BASE + f, Relaxed);
        }
        for g in &mut st.modules[m].global {
            g.clear();
        }
    }

    /// `erts_start_staging_code_ix`: the staging export addresses of every module start as
    /// copies of the active ones (`export_start_staging`, `export.c`; the code index is one for
    /// all modules), and so do the dispatch words: a global breakpoint active at the active
    /// index is active at the staging one, and the commit keeps it. No scheduler reads the
    /// staging slots: under `Two` the previous commit was followed
    /// by LW1 (or ran under the block); under `Three` the staging slot was active two commits
    /// ago, and the code barrier before the last commit waited for every call that read it.
    /// On an engine without global trace no dispatch word is ever patched (all stay the
    /// functions' addresses), and none is copied. The `load-staging-skip-dispatch` mutant
    /// leaves the staging dispatch words as they were.
    fn start_staging(&self) -> usize {
        let (a, s) = (
            self.cm().code_ix.stager_active_ix(),
            self.cm().code_ix.erts_staging_code_ix(),
        );
        assert_ne!(a, s);
        let dispatch =
            self.cm().globals && !mutant::is(self.mutant, Mutant::LoadStagingSkipDispatch);
        for x in self.cm().mods.iter().flat_map(|mc| mc.exports.iter()) {
            x.addresses[s].store(x.addresses[a].load(Relaxed), Relaxed);
            if dispatch {
                x.dispatch[s].store(x.dispatch[a].load(Relaxed), Relaxed);
            }
        }
        s
    }

    /// Load a new version of module 0 ([`Engine::load_in`]).
    pub fn load(&self) -> Result<u32, LoadError> {
        self.load_in(0)
    }

    /// Load a new version of module `m` (`erlang:load_module/2` + `finish_loading`).
    /// `not_purged` only while both versions exist (ERTS `finish_loading`, beam_bif_load.c):
    /// after a delete (no current version) the old one stays old and the new one becomes current.
    pub fn load_in(&self, m: usize) -> Result<u32, LoadError> {
        let mut st = lock(&self.cm().modules);
        if !st.modules[m].old.is_null() && !st.modules[m].curr.is_null() {
            return Err(LoadError::NotPurged);
        }
        let blocking = self.cm().protocol == LoadProtocol::Blocking;
        let _world = (blocking && !mutant::is(self.mutant, Mutant::LoadBlockingWithoutBlock))
            .then(|| write(&self.cm().world));
        let mut bst = self.seize();
        let late_bps = !blocking && mutant::is(self.mutant, Mutant::LoadCommitBeforeBreakpoints);
        if blocking {
            // ERTS: the old code's breakpoints are cleared while thread progress is blocked.
            let curr = st.modules[m].curr;
            self.clear_version_breakpoints(&mut bst, curr);
        }
        let v = self.build_version(&mut st, &mut bst, m, !late_bps);
        let s = self.start_staging();
        if blocking {
            // ERTS: the export breakpoints too, under the block, in the staging index.
            self.clear_export_breakpoints(&mut st, &mut bst, m, s);
        }
        for x in &self.modc(m).exports {
            x.addresses[s].store(v, Relaxed);
        }
        self.code_wait(true);
        self.cm().code_ix.erts_commit_staging_code_ix(self.mutant);
        if late_bps {
            // The mutant: the on_load patterns set after the commit, as a later trace_pattern.
            // SAFETY: v is live (the module table is about to own it; permission held).
            self.set_version_breakpoints(&mut bst, unsafe { &*v }, &st.modules[m].patterns);
        }
        if !blocking {
            let curr = st.modules[m].curr;
            if !self.folds_lw1(curr) {
                self.code_wait(false);
            }
            self.remove_old_breakpoints(&mut bst, curr);
        }
        let md = &mut st.modules[m];
        if !md.curr.is_null() {
            md.old = md.curr;
        }
        md.curr = v;
        // SAFETY: v is live and owned by the module table.
        Ok(unsafe { (*v).number })
    }

    /// Delete module 0 ([`Engine::delete_in`]).
    pub fn delete(&self) -> Result<(), LoadError> {
        self.delete_in(0)
    }

    /// `erlang:delete_module/1` of module `m`: current code becomes old; calls reach `undef`.
    pub fn delete_in(&self, m: usize) -> Result<(), LoadError> {
        let mut st = lock(&self.cm().modules);
        if st.modules[m].curr.is_null() {
            return Err(LoadError::NotLoaded);
        }
        if !st.modules[m].old.is_null() {
            return Err(LoadError::NotPurged);
        }
        let blocking = self.cm().protocol == LoadProtocol::Blocking;
        let _world = (blocking && !mutant::is(self.mutant, Mutant::LoadBlockingWithoutBlock))
            .then(|| write(&self.cm().world));
        let mut bst = self.seize();
        if blocking {
            let curr = st.modules[m].curr;
            self.clear_version_breakpoints(&mut bst, curr);
        }
        let s = self.start_staging();
        if blocking {
            self.clear_export_breakpoints(&mut st, &mut bst, m, s);
        }
        for x in &self.modc(m).exports {
            x.addresses[s].store(std::ptr::null_mut(), Relaxed);
        }
        self.code_wait(true);
        self.cm().code_ix.erts_commit_staging_code_ix(self.mutant);
        if !blocking {
            let curr = st.modules[m].curr;
            if !self.folds_lw1(curr) {
                self.code_wait(false);
            }
            self.remove_old_breakpoints(&mut bst, curr);
        }
        st.modules[m].old = st.modules[m].curr;
        st.modules[m].curr = std::ptr::null_mut();
        Ok(())
    }

    /// [`Engine::with_lw1_fold`]: whether the removal of `v`'s breakpoints runs the engine's
    /// sequence (so its W1 stands for LW1): `v` has breakpoints or a promise.
    fn folds_lw1(&self, v: *mut CodeVersion) -> bool {
        if !self.cm().fold_lw1 || v.is_null() || mutant::is(self.mutant, Mutant::LoadClearOldAtOnce)
        {
            return false;
        }
        // SAFETY: v is live (still the module's current version; permission held).
        let ver = unsafe { &*v };
        ver.promised.load(Relaxed) != 0
            || ver
                .code
                .funcs
                .iter()
                .any(|h| !h.gen_bp.load(Relaxed).is_null())
    }

    /// NonBlocking, after LW1: remove the breakpoints of the version that is becoming old. No
    /// remote call reaches it any more, but a process executing in it makes local calls into it
    /// (a hit like any other), so this is `trace_pattern(false)` on that version, the engine's
    /// one sequence: stage (promise withdrawn, staging halves cleared), W1, commit, W2,
    /// uninstall, W3, consolidate, W4, free (docs/protocol.md §2). The mutant clears them at
    /// once, as if no process were left in it.
    fn remove_old_breakpoints(&self, bst: &mut Permission<'_>, v: *mut CodeVersion) {
        if v.is_null() {
            return;
        }
        if mutant::is(self.mutant, Mutant::LoadClearOldAtOnce) {
            self.clear_version_breakpoints(bst, v);
            return;
        }
        // SAFETY: v is live (still the module's current version; permission held).
        let ver = unsafe { &*v };
        let bare = ver
            .code
            .funcs
            .iter()
            .all(|h| h.gen_bp.load(Relaxed).is_null());
        if bare && ver.promised.load(Relaxed) == 0 {
            return; // untraced: nothing a local call could reach
        }
        self.clear_sessions_on(bst, v);
        assert!(
            ver.promised.load(Relaxed) == 0
                && ver.code.funcs.iter().all(
                    |h| h.gen_bp.load(Relaxed).is_null() && h.instr.load(Relaxed) == h.original
                ),
            "version {}: breakpoints left after their removal",
            ver.number
        );
    }

    /// `trace_pattern({m, '_', '_'}, true | false, [call_count])` in the legacy session on the
    /// module's current version ([`Engine::trace_pattern_module_spec`]). Returns the number of
    /// functions matched. (Named apart from [`Engine::trace_pattern`], which sets patterns on
    /// the engine's static code area.)
    pub fn trace_pattern_module(&self, on: bool) -> usize {
        self.trace_pattern_module_spec(on, &TraceSpec::from(CALL_COUNT))
            .expect("the legacy session with call_count is always accepted")
    }

    /// `trace:function(Session, {m, '_', '_'}, true | false, Flags)` on the current version:
    /// the engine's `stage.rs` in the session's node and the finisher's one sequence (W0–W4,
    /// with their mutants) on the version's code area. Flags: local (with a match spec:
    /// `return_trace`, `exception_trace`, `{caller}`), `{meta, Tracer}`, call_count, call_time
    /// and call_memory, as [`Engine::trace_pattern`] takes them on the static area (meta with a
    /// match spec, and a match spec without local, are refused: `BadArg`); `global` goes to the
    /// module's export entries (`trace_pattern_module_global`). `true` in a session that has
    /// global on the module clears that session's global flag off the entries in the same
    /// sequence (ERTS's exclusion, `erts_clear_export_trace`). `true` adds the counters the session does not have
    /// yet and changes nothing for those it has (ERTS resets their counters,
    /// `set_function_break`, which the count conservation across versions cannot follow); local
    /// and meta are staged again (a new match spec replaces the old one, a new meta tracer is
    /// swapped into the cell); `false` clears the given flags (and meta when the spec names a
    /// tracer). The pattern is recorded for the module, so the next load gives it to the new
    /// version. Returns the number of functions matched (0 when the module has no current
    /// code).
    pub fn trace_pattern_module_spec(
        &self,
        on: bool,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        self.trace_pattern_module_spec_in(0, on, spec)
    }

    /// [`Engine::trace_pattern_module_spec`] on module `m`: `{<m>, '_', '_'}`, every function
    /// of the module ([`Engine::trace_pattern_funcs_spec_in`] with all of them).
    pub fn trace_pattern_module_spec_in(
        &self,
        m: usize,
        on: bool,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        let funcs: Vec<FuncId> = (0..self.modc(m).functions()).collect();
        self.trace_pattern_funcs_spec_in(m, &funcs, on, spec)
    }

    /// [`Engine::trace_pattern_module_spec`] on functions `fs` of module `m` (indices into the
    /// module's functions, ascending, as a pattern `{<m>, F, A}` matches them): each function
    /// keeps its own pattern per session ([`Module::patterns`]), so what a call changes is
    /// computed per function, each changed function is staged with its own change, and the
    /// finisher's one sequence runs once over all of them. The promise follows per function
    /// ([`CodeVersion::promised`], one bit each). With every function, this is the module-wide
    /// call: every function has the same pattern, so the same steps run in the same order.
    /// Returns the number of functions matched (0 when the module has no current code).
    pub fn trace_pattern_funcs_spec_in(
        &self,
        m: usize,
        fs: &[FuncId],
        on: bool,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        let op = if on {
            PatternOp::True
        } else {
            PatternOp::False
        };
        self.trace_pattern_funcs_in(m, fs, op, spec, false)
    }

    /// [`Engine::trace_pattern_funcs_spec_in`] with every op of the static area's
    /// [`Engine::trace_pattern`], as ERTS's `set_function_break` has them: `true` on a counter
    /// the session has resets it (call_count zeroed in place, call_time/call_memory a fresh
    /// object in the staging half) and runs it if paused; `pause` stops the named counters
    /// (their breakpoints stay, without the ACTIVE bit, `ModPattern::paused`); `restart` resets
    /// and runs them; `pause`/`restart` on a function without the session's breakpoint do
    /// nothing unless `local` (or meta) is named, which is set as by `true`; on a breakpoint
    /// without the named counter they create a running one (the ERTS quirk of
    /// docs/deviations.md). Staging is `stage.rs`'s, the sequence the finisher's one W0–W4;
    /// the promise covers the functions whose pattern runs ([`Module::traced_mask`]).
    pub fn trace_pattern_funcs_op_in(
        &self,
        m: usize,
        fs: &[FuncId],
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        self.trace_pattern_funcs_in(m, fs, op, spec, true)
    }

    /// A batch of module trace_patterns in `session` on module `m` (the static area's
    /// [`Engine::trace_pattern_batch`] on a module's current version): each entry's pattern
    /// matches the module's functions, entries are checked as there, and under a batching wait
    /// plan every entry is staged (each function's change computed from the module's patterns
    /// in entry order, as [`Engine::trace_pattern_funcs_op_in`] computes it) before one run of
    /// the finisher's W0–W4 sequence over all of them, the promise withdrawn before the first
    /// staging for the functions that lose their last pattern and made after W2 for those that
    /// gain one. Under a plan that does not batch, each entry is its own
    /// [`Engine::trace_pattern_funcs_op_in`]. Returns the functions each entry matched (0 each
    /// when the module has no current code).
    pub fn trace_pattern_batch_in(
        &self,
        m: usize,
        session: SessionId,
        entries: &[crate::waitplan::BatchEntry],
    ) -> Result<Vec<usize>, PatternError> {
        crate::waitplan::check_batch(session, entries)?;
        let matched: Vec<Vec<FuncId>> = entries
            .iter()
            .map(|e| e.pattern.matching(self.modc(m).mfas.iter()))
            .collect();
        if !self.wait_plan.batches() {
            return entries
                .iter()
                .zip(&matched)
                .map(|(e, fs)| {
                    self.trace_pattern_funcs_op_in(m, fs, e.op, &e.spec.clone().session(session))
                })
                .collect();
        }
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let mut st = lock(&self.cm().modules);
        let mut bst = self.seize_for(session)?;
        let before = st.modules[m].traced_mask();
        let v = st.modules[m].curr;
        let no_code = v.is_null();
        // Every entry planned in order (the module's patterns updated as it goes).
        let mut planned = Vec::with_capacity(entries.len());
        let mut clear_global: Vec<FuncId> = Vec::new();
        for (e, fs) in entries.iter().zip(&matched) {
            let spec = e.spec.clone().session(session);
            let ms = spec.ms.clone().map(std::sync::Arc::new);
            let (changes, cg) = plan_funcs(&mut st.modules[m], fs, e.op, &spec, &ms, true, no_code);
            clear_global.extend(cg);
            let ms = if e.op != PatternOp::False { ms } else { None };
            planned.push((e.op, ms, changes));
        }
        clear_global.sort_unstable();
        clear_global.dedup();
        let counts = matched
            .iter()
            .map(|fs| if no_code { 0 } else { fs.len() })
            .collect();
        let staging = self.staging_ix();
        let exps = self.stage_global_clears(&mut bst, m, session, &clear_global);
        let mut funcs: Vec<FuncId> = planned
            .iter()
            .flat_map(|(_, _, cs)| cs.iter().map(|c| c.f))
            .collect();
        funcs.sort_unstable();
        funcs.dedup();
        if no_code || funcs.is_empty() {
            if !exps.is_empty() {
                self.finish_in(&mut bst, PatternOp::False, None, &exps, &mut || {});
            }
            return Ok(counts);
        }
        let after = st.modules[m].traced_mask();
        // SAFETY: v is live while the permission is held (the current version).
        let ver = unsafe { &*v };
        let area = area_of(ver);
        let changed = funcs.iter().fold(0u64, |b, &f| b | fbit(f));
        if changed & !after != 0 {
            ver.promised.store(before & after, Relaxed);
        }
        for (op, ms, changes) in &planned {
            for c in changes {
                let extra = crate::stage::Extra {
                    global: false,
                    ms: ms.clone(),
                    meta: None,
                };
                crate::stage::stage_in(
                    self, &mut bst, area, c.f, session, staging, *op, c.fl, &extra,
                );
            }
        }
        let installs = planned.iter().any(|(op, _, _)| *op != PatternOp::False);
        let op = if installs {
            PatternOp::True
        } else {
            PatternOp::False
        };
        let promised = &ver.promised;
        let install = installs.then_some((area, &funcs[..]));
        let mut areas: Vec<(Area, &[FuncId])> = vec![(area, &funcs[..])];
        areas.extend_from_slice(&exps);
        self.finish_in(&mut bst, op, install, &areas, &mut || {
            if changed & after != 0 {
                promised.store(after, Relaxed);
            }
        });
        Ok(counts)
    }

    /// Stage the session's global flag off the export entries of functions `fs` of module `m`
    /// (local excludes global in one session, [`plan_funcs`]); the export area and functions
    /// for the finisher's sequence (none when `fs` is empty). Shared by the module's
    /// trace_pattern and its batch.
    fn stage_global_clears<'a>(
        &'a self,
        bst: &mut Permission<'_>,
        m: usize,
        session: SessionId,
        fs: &'a [FuncId],
    ) -> Vec<(Area, &'a [FuncId])> {
        if fs.is_empty() {
            return Vec::new();
        }
        let global_only = crate::stage::Extra {
            global: true,
            ms: None,
            meta: None,
        };
        let staging = self.staging_ix();
        for &f in fs {
            crate::stage::stage_in(
                self,
                bst,
                self.exp_area(m),
                f,
                session,
                staging,
                PatternOp::False,
                FlagSet::default(),
                &global_only,
            );
        }
        vec![(self.exp_area(m), fs)]
    }

    /// The module trace_pattern: `op` on functions `fs` of module `m`; `reset`: `true` resets
    /// the counters the session has (ERTS), else leaves them (the load models' conservation).
    fn trace_pattern_funcs_in(
        &self,
        m: usize,
        fs: &[FuncId],
        op: PatternOp,
        spec: &TraceSpec,
        reset: bool,
    ) -> Result<usize, PatternError> {
        let on = op != PatternOp::False;
        let (session, fl) = (spec.session, spec.flags);
        let n = self.modc(m).functions();
        assert!(
            fs.windows(2).all(|w| w[0] < w[1]) && fs.iter().all(|&f| f < n),
            "functions {fs:?} of a module of {n}"
        );
        if spec.global {
            return self.trace_pattern_module_global(m, fs, on, spec);
        }
        if spec.meta.is_some() && spec.ms.is_some() && !fl.local {
            return Err(PatternError::BadArg(
                "meta cannot be combined with global, and its match spec is not implemented".into(),
            ));
        }
        if spec.ms.is_some() && !fl.local {
            return Err(PatternError::BadArg(
                "a match spec needs local or global (not only call_count/time/memory)".into(),
            ));
        }
        if !fl.local && !fl.counters() && spec.meta.is_none() {
            return Err(PatternError::BadArg("no flag".into()));
        }
        let mut st = lock(&self.cm().modules);
        let mut bst = self.seize_for(session)?;
        let before = st.modules[m].traced_mask();
        let no_code = st.modules[m].curr.is_null();
        let ms = spec.ms.clone().map(std::sync::Arc::new);
        let (changes, clear_global) =
            plan_funcs(&mut st.modules[m], fs, op, spec, &ms, reset, no_code);
        let v = st.modules[m].curr;
        let exps = self.stage_global_clears(&mut bst, m, session, &clear_global);
        if v.is_null() || changes.is_empty() {
            if !clear_global.is_empty() {
                // No current code, or nothing staged on it (`pause`/`restart` of a counter on
                // a function without the session's breakpoint, which still clears global
                // trace off its entry): only the export entries change.
                self.finish_in(&mut bst, PatternOp::False, None, &exps, &mut || {});
            }
            return Ok(if v.is_null() { 0 } else { fs.len() });
        }
        let after = st.modules[m].traced_mask();
        let how = Staging {
            session,
            op,
            ms: if on { ms } else { None },
            meta: spec.meta.clone(),
            promise: (before, after),
        };
        self.trace_pattern_on(&mut bst, v, &how, &changes, &exps);
        Ok(fs.len())
    }

    /// `trace:function(Session, {m, F, A}, true | false, [global])` (with an optional match
    /// spec) on the export entries of functions `fs` of module `m`, on an engine made
    /// [`Engine::with_global_trace`]: `stage.rs` on each entry's node (the global flag and
    /// match spec) and the finisher's one sequence on the export area (install patches the
    /// dispatch word to the breakpoint instruction, after W0; uninstall restores it after W2).
    /// The entries are the same for every version: a load leaves them under `NonBlocking` and
    /// clears them under `Blocking` (`clear_export_breakpoints`, as ERTS's
    /// `erts_clear_export_break`). Refused (`BadArg`) with local, the counters or meta. Global
    /// excludes local in one session (ERTS `erts_set_trace_pattern`: `on && !flags.breakpoint`
    /// runs `erts_clear_all_breaks` on the matched functions): setting it clears every flag of
    /// the session (local, meta and the counters) off the current version's matched functions
    /// and drops the session's pattern from them, in the same sequence (the promise of a
    /// function withdrawn first when that was its last pattern); the old version, which ERTS's
    /// match does not reach, keeps its nodes until its removal.
    fn trace_pattern_module_global(
        &self,
        m: usize,
        fs: &[FuncId],
        on: bool,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        let session = spec.session;
        if !self.cm().globals {
            return Err(PatternError::BadArg(
                "global on a loaded module needs an engine made with_global_trace".into(),
            ));
        }
        if spec.flags.local || spec.flags.counters() || spec.meta.is_some() {
            return Err(PatternError::BadArg(
                "global cannot be combined with local, call_count, call_time, call_memory or meta"
                    .into(),
            ));
        }
        let mut st = lock(&self.cm().modules);
        let mut bst = self.seize_for(session)?;
        let before = st.modules[m].traced_mask();
        let mut clear_local: Vec<FuncId> = Vec::new();
        let mut staged: Vec<FuncId> = Vec::new();
        for &f in fs {
            let md = &mut st.modules[m];
            if on && md.patterns[f].iter().any(|(s, _)| *s == session) {
                md.patterns[f].retain(|(s, _)| *s != session);
                clear_local.push(f);
            }
            let had = md.global[f].contains(&session);
            if on && !had {
                md.global[f].push(session);
            } else if !on {
                md.global[f].retain(|&s| s != session);
            }
            if on || had {
                staged.push(f);
            }
        }
        if staged.is_empty() {
            return Ok(fs.len());
        }
        let op = if on {
            PatternOp::True
        } else {
            PatternOp::False
        };
        let area = self.exp_area(m);
        let staging = self.staging_ix();
        let mut areas: Vec<(Area, &[FuncId])> = vec![(area, &staged[..])];
        let v = st.modules[m].curr;
        if !clear_local.is_empty() && !v.is_null() {
            // SAFETY: the current version, live while the module table is held.
            let ver = unsafe { &*v };
            let after = st.modules[m].traced_mask();
            if clear_local.iter().any(|&f| after & fbit(f) == 0) {
                ver.promised.store(before & after, Relaxed);
            }
            for &f in &clear_local {
                crate::stage::clear_session(self, &mut bst, area_of(ver), f, session, staging);
            }
            areas.push((area_of(ver), &clear_local[..]));
        }
        let extra = crate::stage::Extra {
            global: true,
            ms: spec.ms.clone().map(std::sync::Arc::new),
            meta: None,
        };
        for &f in &staged {
            crate::stage::stage_in(
                self,
                &mut bst,
                area,
                f,
                session,
                staging,
                op,
                FlagSet::default(),
                &extra,
            );
        }
        let install = on.then_some((area, &staged[..]));
        self.finish_in(&mut bst, op, install, &areas, &mut || {});
        Ok(fs.len())
    }

    /// `trace_pattern` in `how.session` on the changed functions of version `v` (the current
    /// one), each with its own flags: `stage.rs` in the staging half, then
    /// `finisher.rs::finish_in` on the version's area. The promise follows the module's
    /// patterns after this call (`how.promise`: the traced functions before and after, one bit
    /// each): the functions that lose their last pattern are withdrawn before staging, and the
    /// traced ones are promised right after W2, when every hit runs the new half, if a changed
    /// function is among them. `more`: areas the caller staged in too (the export entries whose
    /// global flag the local pattern clears), finished in the same sequence.
    fn trace_pattern_on(
        &self,
        bst: &mut Permission<'_>,
        v: *mut CodeVersion,
        how: &Staging,
        changes: &[Change],
        more: &[(Area, &[FuncId])],
    ) {
        // SAFETY: v is live while the permission is held (the current version).
        let ver = unsafe { &*v };
        let area = area_of(ver);
        let funcs: Vec<FuncId> = changes.iter().map(|c| c.f).collect();
        let changed = funcs.iter().fold(0u64, |m, &f| m | fbit(f));
        let (before, after) = how.promise;
        if changed & !after != 0 {
            ver.promised.store(before & after, Relaxed);
        }
        let staging = self.staging_ix();
        for c in changes {
            let extra = crate::stage::Extra {
                global: false,
                ms: how.ms.clone(),
                meta: if c.meta { how.meta.clone() } else { None },
            };
            crate::stage::stage_in(
                self,
                bst,
                area,
                c.f,
                how.session,
                staging,
                how.op,
                c.fl,
                &extra,
            );
        }
        let promised = &ver.promised;
        let install = (how.op != PatternOp::False).then_some((area, &funcs[..]));
        let mut areas: Vec<(Area, &[FuncId])> = vec![(area, &funcs[..])];
        areas.extend_from_slice(more);
        self.finish_in(bst, how.op, install, &areas, &mut || {
            if changed & after != 0 {
                promised.store(after, Relaxed);
            }
        });
    }

    /// Every session's breakpoints off version `v` in one sequence (`erts_clear_module_break`
    /// without the block: stage each session's clear, then the finisher's W1–W4 on the version's
    /// area), the promise withdrawn first. The NonBlocking removal of the old version's
    /// breakpoints after a load or delete.
    fn clear_sessions_on(&self, bst: &mut Permission<'_>, v: *mut CodeVersion) {
        // SAFETY: v is live while the permission is held (becoming old).
        let ver = unsafe { &*v };
        let area = area_of(ver);
        let funcs: Vec<FuncId> = (0..ver.code.funcs.len()).collect();
        ver.promised.store(0, Relaxed);
        let staging = self.staging_ix();
        for &f in &funcs {
            let sessions: Vec<SessionId> = crate::rest::chain(self, bst, area, f)
                .map(|n| n.session)
                .collect();
            for s in sessions {
                crate::stage::clear_session(self, bst, area, f, s, staging);
            }
        }
        self.finish_in(bst, PatternOp::False, None, &[(area, &funcs)], &mut || {});
    }

    /// `trace:session_destroy/1` ([`Engine::destroy_session`]) on an engine with a module: the session's breakpoints are
    /// inert at once and cleared off the module's versions (and the engine's areas) by the
    /// engine's one sequence; the module's pattern in that session is dropped. When the session
    /// held the module's last pattern, the current version's promise is withdrawn first, and a
    /// wait for thread progress lets every call that read the promise finish before the
    /// session turns inert (the promise's check reads it last).
    pub(crate) fn destroy_session_loaded(&self, s: SessionId) -> Result<bool, SessionError> {
        let mut st = lock(&self.cm().modules);
        let funcs: Vec<Vec<FuncId>> = self
            .cm()
            .mods
            .iter()
            .map(|mc| (0..mc.functions()).collect())
            .collect();
        let mut areas: Vec<(Area, &[FuncId])> = Vec::new();
        // The current versions with a function whose last pattern is the session's, and their
        // promise without those functions.
        let mut last: Vec<(*mut CodeVersion, u64)> = Vec::new();
        for (m, md) in st.modules.iter().enumerate() {
            for v in [md.curr, md.old].into_iter().filter(|v| !v.is_null()) {
                // SAFETY: live versions of the module table; its permission is held for the
                // call.
                areas.push((area_of(unsafe { &*v }), &funcs[m][..]));
            }
            if md.any_global() {
                areas.push((self.exp_area(m), &funcs[m][..]));
            }
            let after = md
                .patterns
                .iter()
                .enumerate()
                .filter(|(_, p)| p.iter().any(|(x, pat)| *x != s && pat.runs()))
                .fold(0u64, |a, (f, _)| a | fbit(f));
            if after != md.traced_mask() && !md.curr.is_null() {
                last.push((md.curr, after));
            }
        }
        let bp = self;
        let r = self.destroy_session_in(s, &areas, &mut || {
            if !last.is_empty() {
                for &(curr, after) in &last {
                    // SAFETY: the current version, live (module table held).
                    unsafe { &*curr }.promised.store(after, Relaxed);
                }
                bp.progress.wait();
            }
        })?;
        if r {
            for md in st.modules.iter_mut() {
                for p in &mut md.patterns {
                    p.retain(|(x, _)| *x != s);
                }
                for g in &mut md.global {
                    g.retain(|&x| x != s);
                }
            }
        }
        Ok(r)
    }

    /// Calls counted so far: the live counters of every version plus the totals folded in when
    /// counters were released. At rest (no call running), this is the number of counted calls
    /// (no lost event).
    pub fn total_count(&self) -> u64 {
        let st = lock(&self.cm().modules);
        let bst = self.seize();
        let mut n = bst
            .retired_counts
            .expect("an engine with a module folds its counters");
        self.each_node(&st, &bst, &mut |node| {
            let (a, s) = (node.snapshot_half(0).count, node.snapshot_half(1).count);
            let same = matches!((&a, &s), (Some(x), Some(y)) if std::sync::Arc::ptr_eq(x, y));
            for c in a.iter().chain(s.iter().filter(|_| !same)) {
                n += c.acount.load(Relaxed);
            }
        });
        n
    }

    /// Visit every breakpoint node of the module's live versions (under both permissions).
    fn each_node(&self, st: &ModuleTable, bst: &Permission<'_>, visit: &mut dyn FnMut(&GenericBp)) {
        for v in st.modules.iter().flat_map(|md| [md.curr, md.old]) {
            if v.is_null() {
                continue;
            }
            // SAFETY: live versions of the module table; permission held.
            for f in 0..unsafe { &*v }.code.funcs.len() {
                // SAFETY: live versions of the module table; permission held.
                for node in crate::rest::chain(self, bst, area_of(unsafe { &*v }), f) {
                    visit(node);
                }
            }
        }
    }

    /// Calls counted into call_time and call_memory objects so far: every pid's count in the
    /// live objects of every version plus the counts folded in when objects were released
    /// (`free.rs` `release_timem`). At rest (no call running), this is the sum of the
    /// processes' [`Proc::timem_calls`](crate::process::Proc) (count conservation across
    /// versions).
    pub fn total_timed(&self) -> i64 {
        let st = lock(&self.cm().modules);
        let bst = self.seize();
        let mut n = bst
            .retired_timem
            .expect("an engine with a module folds its call_time objects");
        let mut seen: Vec<*const crate::timem::BpTimemTrace> = Vec::new();
        self.each_node(&st, &bst, &mut |node| {
            for ix in 0..ERTS_NUM_BP_IX {
                let d = node.snapshot_half(ix);
                for t in [d.time, d.memory].into_iter().flatten() {
                    let p = std::sync::Arc::as_ptr(&t);
                    if !seen.contains(&p) {
                        seen.push(p);
                        // At rest: no scheduler charges (the caller's contract).
                        let mut tot = Totals::new();
                        t.read_into(&mut tot);
                        n += tot.values().map(|(c, _)| c).sum::<i64>();
                    }
                }
            }
        });
        n
    }

    /// At rest: `session`'s call_time (`time`) or call_memory object on function `f` of the
    /// current version, totals per pid, through the active half; `None` if it has none.
    pub fn current_timem(&self, session: SessionId, f: FuncId, time: bool) -> Option<Totals> {
        self.current_timem_in(0, session, f, time)
    }

    /// [`Engine::current_timem`] on module `m`.
    pub fn current_timem_in(
        &self,
        m: usize,
        session: SessionId,
        f: FuncId,
        time: bool,
    ) -> Option<Totals> {
        let st = lock(&self.cm().modules);
        let bst = self.seize();
        let v = st.modules[m].curr;
        if v.is_null() {
            return None;
        }
        // SAFETY: live version of the module table; permission held.
        let node = crate::rest::chain(self, &bst, area_of(unsafe { &*v }), f)
            .find(|n| n.session == session)?;
        let d = node.snapshot_half(self.active_ix());
        let t = if time { d.time } else { d.memory }?;
        let mut tot = Totals::new();
        // At rest: no scheduler charges (the caller's contract).
        t.read_into(&mut tot);
        Some(tot)
    }

    /// `trace_info(Session, {m, f<f>, 0}, Key)` on an engine with a module: the function of
    /// the current version, as ERTS looks it up (`erts_find_local_func` in `beam_bp.c`:
    /// `erts_get_module(.., erts_active_code_ix())` then `modp->curr`; an old version's
    /// breakpoints and rows are not reported), through the engine's one `trace_info` and its
    /// non-blocking collection (`collect.rs`, the temporaries, flips and waits) on the version's
    /// code area, while the module's processes run and charge. Under the module table and the
    /// permission, so a load, delete or purge is entirely before or after it. `undefined` when
    /// the module has no current code (deleted). A function whose export entry carries the
    /// session's global breakpoint answers `{traced, global}`, its match spec and `false` for
    /// the other keys (the entry first, as ERTS's `function_is_traced`: `global_half`).
    pub fn trace_info_module(
        &self,
        session: SessionId,
        f: FuncId,
        key: crate::term::InfoKey,
    ) -> crate::term::Term {
        self.trace_info_module_in(0, session, f, key)
    }

    /// [`Engine::trace_info_module`] on module `m`'s function `f`.
    pub fn trace_info_module_in(
        &self,
        m: usize,
        session: SessionId,
        f: FuncId,
        key: crate::term::InfoKey,
    ) -> crate::term::Term {
        self.trace_info_module_with(m, session, f, key, crate::term::Collection::NonBlocking)
    }

    /// [`Engine::trace_info_module_in`] with the chosen collection, as
    /// [`Engine::trace_info_with`] on the static area (`StopTheWorld` needs an engine made
    /// [`Engine::with_stop_the_world`]).
    pub fn trace_info_module_with(
        &self,
        m: usize,
        session: SessionId,
        f: FuncId,
        key: crate::term::InfoKey,
        how: crate::term::Collection,
    ) -> crate::term::Term {
        let st = lock(&self.cm().modules);
        let v = st.modules[m].curr;
        if v.is_null() || f >= self.modc(m).functions() {
            return crate::term::Term::Tuple(vec![
                crate::term::Term::Atom(key.atom()),
                crate::term::Term::Atom("undefined"),
            ]);
        }
        let mut bst = self.seize();
        if let Some(d) = self.global_half(&bst, m, f, session) {
            return crate::session::global_info(key, &d);
        }
        // SAFETY: the current version, live while the module table is held.
        let area = area_of(unsafe { &*v });
        let base = self.trace_info_in(&mut bst, area, f, session, key, how);
        match self.local_ms_half(&bst, area, f, session) {
            Some(d) => crate::session::local_ms_info(key, base, &d),
            None => base,
        }
    }

    /// The active half of `session`'s node on function `f` of `area` (the current version's)
    /// if it carries local trace with a match spec: what `trace_info`'s `match_spec` (and
    /// `all`) report, as [`Engine::session_trace_info`] on the static area.
    fn local_ms_half(
        &self,
        bst: &Permission<'_>,
        area: Area,
        f: FuncId,
        session: SessionId,
    ) -> Option<crate::bp::GenericBpData> {
        let g = self.session_node_in(bst, area, f, session, false);
        // SAFETY: live node under the permission.
        let d = unsafe { g.as_ref() }?.snapshot_half(self.active_ix());
        (d.flags & crate::bp::flags::LOCAL_TRACE != 0 && d.ms.is_some()).then_some(d)
    }

    /// The active half of `session`'s node on the export entry of function `f`, if that entry
    /// dispatches to its breakpoint and the half carries the global flag: what ERTS's
    /// `function_is_traced` (erl_bif_trace.c) looks at before the function's code,
    /// `erts_is_export_trampoline_active(ep, erts_active_code_ix())` then
    /// `erts_is_trace_break(session, &ep->info, ms, 0)`.
    fn global_half(
        &self,
        bst: &Permission<'_>,
        m: usize,
        f: FuncId,
        session: SessionId,
    ) -> Option<crate::bp::GenericBpData> {
        if !self.cm().globals {
            return None;
        }
        let a = self.cm().code_ix.stager_active_ix();
        let d = self.modc(m).exports[f].dispatch[a].load(Relaxed);
        if d != OP_I_GENERIC_BREAKPOINT {
            return None; // the trampoline is not active: calls go straight to the code
        }
        let g = self.session_node_in(bst, self.exp_area(m), f, session, false);
        // SAFETY: live node under the permission.
        let d = unsafe { g.as_ref() }?.snapshot_half(self.active_ix());
        (d.flags & crate::bp::flags::GLOBAL_TRACE != 0).then_some(d)
    }

    /// Module 0's current version's number (0 if deleted).
    pub fn current_version(&self) -> u32 {
        self.current_version_of(0)
    }

    /// Module 0's old version's number (0 if there is none).
    pub fn old_version(&self) -> u32 {
        self.old_version_of(0)
    }

    /// Module `m`'s current version's number (0 if deleted).
    pub fn current_version_of(&self, m: usize) -> u32 {
        let st = lock(&self.cm().modules);
        let v = st.modules[m].curr;
        if v.is_null() {
            0
        } else {
            // SAFETY: live version of the module table (held).
            unsafe { (*v).number }
        }
    }

    /// Is function `f`'s first instruction in module `m`'s current version the breakpoint
    /// instruction? `None` if the module has no current version. The versions' counterpart of
    /// [`Engine::is_patched`] on the static area (read under the module table's lock, which
    /// keeps the version live; Relaxed: a look at rest, between the runner's steps).
    pub fn is_patched_in(&self, m: usize, f: usize) -> Option<bool> {
        let st = lock(&self.cm().modules);
        let v = st.modules[m].curr;
        // SAFETY: live version of the module table (held).
        let ver = unsafe { v.as_ref() }?;
        Some(ver.code.funcs[f].instr.load(Relaxed) == OP_I_GENERIC_BREAKPOINT)
    }

    /// The active flags of `session`'s node on function `f` of module `m`'s current version (0
    /// if it has none, or the module no current version): the versions' counterpart of
    /// [`Engine::active_flags`] on the static area, under the module table's lock (which keeps
    /// the version live) and the permission.
    pub fn active_flags_version_in(&self, m: usize, session: SessionId, f: FuncId) -> u32 {
        let st = lock(&self.cm().modules);
        // SAFETY: live version of the module table (held).
        match unsafe { st.modules[m].curr.as_ref() } {
            Some(ver) => self.active_flags_in(area_of(ver), session, f),
            None => 0,
        }
    }

    /// [`Engine::trace_info`] (`traced`, `call_count`) of function `f` of module `m`'s current
    /// version (`Undefined` if the module has no current version): the versions' counterpart
    /// on the static area's item shapes, under the module table's lock and the permission.
    pub fn trace_info_item_version_in(
        &self,
        m: usize,
        session: SessionId,
        f: FuncId,
        item: crate::InfoItem,
    ) -> crate::InfoValue {
        let st = lock(&self.cm().modules);
        // SAFETY: live version of the module table (held).
        match unsafe { st.modules[m].curr.as_ref() } {
            Some(ver) => self.trace_info_item_in(area_of(ver), session, f, item),
            None => crate::InfoValue::Undefined,
        }
    }

    /// The active flags of `session`'s node on module `m`'s export entry of function `f` (0 if
    /// it has none): the versions' counterpart of [`Engine::active_flags_in`] on the static
    /// area's export entries (the entries are the module's fixed part: no version to keep
    /// live).
    pub fn active_flags_export_in(&self, m: usize, session: SessionId, f: FuncId) -> u32 {
        self.active_flags_in(self.exp_area(m), session, f)
    }

    /// The breakpoint areas of every module's current and old versions and export entries,
    /// for a caller holding the module table (`st`): what [`Engine::count_ledger`] walks
    /// besides the static area.
    pub(crate) fn module_areas(&self, st: &ModuleTable) -> Vec<Area> {
        let mut out = Vec::new();
        for (m, md) in st.modules.iter().enumerate() {
            for v in [md.curr, md.old] {
                // SAFETY: versions of the module table, live while the caller holds it.
                if let Some(ver) = unsafe { v.as_ref() } {
                    out.push(area_of(ver));
                }
            }
            out.push(self.exp_area(m));
        }
        out
    }

    /// Does module `m`'s export entry of function `f` dispatch to its breakpoint at the active
    /// code index (`erts_is_export_trampoline_active(ep, erts_active_code_ix())`)? The versions'
    /// counterpart of [`Engine::is_export_patched`] (Relaxed: a look at rest).
    pub fn is_export_patched_in(&self, m: usize, f: usize) -> bool {
        let a = self.cm().code_ix.stager_active_ix();
        self.modc(m).exports[f].dispatch[a].load(Relaxed) == OP_I_GENERIC_BREAKPOINT
    }

    /// Module `m`'s function `f` in its current version, as a process's code info names it
    /// (`process::Ci`), or `None` if the module has no current version. For a caller that
    /// renames what its processes hold to the current version (the scenario runner's
    /// `OldFramesCharge` code mutant): the name is valid while the version is current (the
    /// caller renames again before it becomes old).
    pub fn current_ci_of(&self, m: usize, f: usize) -> Option<crate::process::Ci> {
        let st = lock(&self.cm().modules);
        let v = st.modules[m].curr;
        // SAFETY: live version of the module table (held).
        let ver = unsafe { v.as_ref() }?;
        Some(crate::process::Ci {
            area: area_of(ver),
            f,
        })
    }

    /// Module `m`'s old version's number (0 if there is none).
    pub fn old_version_of(&self, m: usize) -> u32 {
        let st = lock(&self.cm().modules);
        let v = st.modules[m].old;
        if v.is_null() {
            0
        } else {
            // SAFETY: live version of the module table (held).
            unsafe { (*v).number }
        }
    }

    /// [`Engine::check_at_rest`] on an engine with a module: halves equal, instruction patched
    /// iff the pattern is set, promise as pattern, every export entry on the current version in
    /// both code indices' use, no process in a version unless `in_code_ok`. Returns the
    /// breakpoints and call_time/call_memory objects the modules hold, for the leak check
    /// (`rest.rs`, which adds the static area's); the versions' own leak check is here.
    pub(crate) fn check_modules(
        &self,
        st: &ModuleTable,
        bst: &Permission<'_>,
        in_code_ok: bool,
    ) -> Result<(u64, Vec<usize>), String> {
        let a = self.cm().code_ix.stager_active_ix();
        let mut bps = 0;
        let mut timem: Vec<usize> = Vec::new();
        let mut versions = 0u64;
        for (m, (md, mc)) in st.modules.iter().zip(self.cm().mods.iter()).enumerate() {
            let name = &mc.name;
            for (f, x) in mc.exports.iter().enumerate() {
                let p = x.addresses[a].load(Relaxed);
                if p != md.curr {
                    return Err(format!(
                        "export {name}:f{f}/0 at code index {a} is not the current version"
                    ));
                }
            }
            for v in [md.curr, md.old] {
                if v.is_null() {
                    continue;
                }
                versions += 1;
                // SAFETY: live versions; permission held.
                let ver = unsafe { &*v };
                if ver.module != m {
                    return Err(format!(
                        "version {} of {name} names module {}",
                        ver.number, ver.module
                    ));
                }
                if ver.in_code.load(Relaxed) != 0 && !in_code_ok {
                    return Err(format!("version {}: a process is still in it", ver.number));
                }
                let is_curr = v == md.curr;
                let mask = if is_curr { md.traced_mask() } else { 0 };
                if ver.promised.load(Relaxed) != mask {
                    return Err(format!("version {}: promise is not {mask:#x}", ver.number));
                }
                // Patched where a pattern is, running or paused.
                let patterned = if is_curr { md.pattern_mask() } else { 0 };
                for (f, h) in ver.code.funcs.iter().enumerate() {
                    let traced = patterned & fbit(f) != 0;
                    let g = h.gen_bp.load(Relaxed);
                    let patched = h.instr.load(Relaxed) == OP_I_GENERIC_BREAKPOINT;
                    if patched != traced || g.is_null() == traced {
                        return Err(format!(
                            "version {} f{f}: patched {patched}, slot {g:?}, pattern {traced}",
                            ver.number
                        ));
                    }
                    let sessions: Vec<SessionId> = crate::rest::chain(self, bst, area_of(ver), f)
                        .map(|n| n.session)
                        .collect();
                    let mut want: Vec<SessionId> = if traced {
                        md.patterns[f].iter().map(|(s, _)| *s).collect()
                    } else {
                        Vec::new()
                    };
                    want.reverse(); // chained newest first
                    if sessions != want {
                        return Err(format!(
                            "version {} f{f}: sessions {sessions:?} chained, patterns {want:?}",
                            ver.number
                        ));
                    }
                    for node in crate::rest::chain(self, bst, area_of(ver), f) {
                        bps += 1;
                        let d = node.snapshot_half(0);
                        for t in [&d.time, &d.memory].into_iter().flatten() {
                            let p = std::sync::Arc::as_ptr(t) as usize;
                            if !timem.contains(&p) {
                                timem.push(p);
                            }
                        }
                        if !node.snapshot_half(0).same_as(&node.snapshot_half(1)) {
                            return Err(format!(
                                "version {} f{f}: halves differ at rest",
                                ver.number
                            ));
                        }
                    }
                }
            }
            for (f, x) in mc.exports.iter().enumerate() {
                // The active index's dispatch word (the others are written again by a staging
                // before a commit makes them active).
                let patched = x.dispatch[a].load(Relaxed) == OP_I_GENERIC_BREAKPOINT;
                let sessions: Vec<SessionId> = crate::rest::chain(self, bst, self.exp_area(m), f)
                    .map(|n| n.session)
                    .collect();
                let mut want = md.global[f].clone();
                want.reverse(); // chained newest first
                if sessions != want || patched == want.is_empty() {
                    return Err(format!(
                        "export {name}:f{f}/0: patched {patched}, sessions {sessions:?} \
                         chained, global patterns {want:?}"
                    ));
                }
                for node in crate::rest::chain(self, bst, self.exp_area(m), f) {
                    bps += 1;
                    if !node.snapshot_half(0).same_as(&node.snapshot_half(1)) {
                        return Err(format!("export {name}:f{f}/0: halves differ at rest"));
                    }
                }
            }
        }
        if st.live_versions != versions {
            return Err(format!(
                "leak: {} versions live, {versions} reachable",
                st.live_versions
            ));
        }
        Ok((bps, timem))
    }

    /// [`Engine::check_at_rest`] on an engine whose only code is its modules' (the static area
    /// empty, as the load models build it): [`Engine::check_modules`] and the leak check of
    /// the breakpoints and objects against the modules' alone.
    pub(crate) fn check_modules_at_rest(&self, in_code_ok: bool) -> Result<(), String> {
        let st = lock(&self.cm().modules);
        let bst = self.seize();
        let (bps, timem) = self.check_modules(&st, &bst, in_code_ok)?;
        // Pipeline: the last call's unlinked nodes wait on the free list for the next call's
        // first wait (or `Engine::settle`), none of them on a chain (as on the static area,
        // `rest.rs`).
        let pending = self.pipeline_pending(&bst, &self.module_areas(&st))?;
        if bst.live_nodes != bps + pending
            || (pending == 0 && !bst.free_list.is_empty())
            || bst.live_timem != timem.len() as u64
        {
            return Err(format!(
                "leak: {} versions, {} breakpoints and {} call_time/call_memory objects live ({} \
                 on the free list), {bps} breakpoints and {} objects reachable",
                st.live_versions,
                bst.live_nodes,
                bst.live_timem,
                bst.free_list.len(),
                timem.len()
            ));
        }
        Ok(())
    }
}

impl<P: ThreadProgress> Engine<P> {
    /// `Drop for Engine`, first: the module's versions and the nodes in their slots (the
    /// caller has checked that no model run is unwinding).
    pub(crate) fn drop_versions(&mut self) {
        let Some(cm) = self.code_mgmt.as_deref_mut() else {
            return;
        };
        for h in cm.mods.iter().flat_map(|mc| mc.exp_code.funcs.iter()) {
            let mut g = h.gen_bp.swap(std::ptr::null_mut(), Relaxed);
            let mut steps = 0;
            while !g.is_null() {
                crate::engine::chain_step(&mut steps, &h.mfa);
                // SAFETY: from Box::into_raw; the entry's chain is its nodes' only owner (freed
                // nodes went through `free.rs` into the engine's graveyard); drop has exclusive
                // access.
                let node = unsafe { Box::from_raw(g) };
                g = node.next.load(Relaxed);
            }
        }
        let st = cm.modules.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut vs: Vec<*mut CodeVersion> = std::mem::take(&mut st.graveyard_versions);
        for v in st.modules.iter().flat_map(|md| [md.curr, md.old]) {
            if !v.is_null() {
                vs.push(v);
                // SAFETY: drop has exclusive access (no scheduler holds the engine); v is live.
                for h in unsafe { &*v }.code.funcs.iter() {
                    let g = h.gen_bp.swap(std::ptr::null_mut(), Relaxed);
                    if !g.is_null() {
                        // SAFETY: from Box::into_raw; a version's slot is its node's only owner
                        // (freed nodes went through `free.rs` into the engine's graveyard).
                        drop(unsafe { Box::from_raw(g) });
                    }
                }
            }
        }
        for v in vs {
            // SAFETY: from Box::into_raw, in exactly one of the lists.
            drop(unsafe { Box::from_raw(v) });
        }
    }
}
