//! The code side of loading (ERTS `code_ix.c`, `export.c`, `module.c`): a staging and an active
//! code index, modules with a current and an old version, each version its own code area of
//! functions with breakpoint slots, and export entries with one address per code index.
//! Schedulers call through the export entry of the active code index.
//!
//! The load protocols that change this state are in `load.rs` (docs/nonblocking-load.md): a
//! module table of modules with fixed sets of functions (one code index for all, as ERTS's),
//! whose versions' breakpoints are the breakpoint
//! engine's own (`GenericBp` chains in each version's code area, set and removed by the engine's
//! one W0–W4 sequence, `finisher.rs`), traced with call_count, call_time and call_memory in any
//! number of sessions.
//!
//! ERTS has three code indices (`ERTS_NUM_CODE_IX`) so that the next staging can start before
//! the previous commit has been seen by every scheduler. The engine has both schemes behind one
//! switch ([`CodeIxScheme`], docs/nonblocking-load.md §1): `Two` (the default) stages the other
//! of two slots and waits for thread progress after each commit (LW1 in `load.rs`) before that
//! slot is written again; `Three` is ERTS's (`code_ix.c`): the staging index is
//! `(active + 1) % 3`, the wait (the code barrier) comes before the commit and none after it.

use crate::bp::{Liveness, SessionId};
use crate::calltrace::MatchSpec;
use crate::code::CodeArea;
use crate::mutant::Mutant;
use crate::ordering::Site;
use crate::pattern::FlagSet;
use crate::sync::Ordering::{Acquire, Release};
use crate::sync::{ord, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, UnsafeCell};
use crate::tracer::TracerSpec;

/// Code index slots of every export entry: ERTS's three (`code_ix.h`); the `Two` scheme uses
/// the first two.
pub const ERTS_NUM_CODE_IX: usize = 3;

/// How many code indices an engine with a module cycles through, and where its wait for thread progress
/// stands (docs/nonblocking-load.md §1, §3 and §8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CodeIxScheme {
    /// Two indices; after each commit a wait for thread progress (LW1) before anything else, so
    /// the slot that was active is not staged again while a call may still read it; the purge
    /// checks, then waits (PW), then frees.
    #[default]
    Two,
    /// ERTS (`ERTS_NUM_CODE_IX` 3, `erts_commit_staging_code_ix`): the staging index is
    /// `(active + 1) % 3`; the wait is before the commit (the code barrier, `beam_bif_load.c`
    /// `staging_epilogue` / `erts_schedule_code_barrier`), none after it; the purge waits first
    /// (`erts_internal:purge_module(M, prepare)`), then checks, then waits (PW: the engine's
    /// `in_code` is relaxed where ERTS's check reads each process under its lock) and frees.
    Three,
}

impl CodeIxScheme {
    pub const ALL: [CodeIxScheme; 2] = [CodeIxScheme::Two, CodeIxScheme::Three];
    pub fn name(self) -> &'static str {
        match self {
            CodeIxScheme::Two => "2ix",
            CodeIxScheme::Three => "3ix",
        }
    }
    pub fn parse(s: &str) -> Option<CodeIxScheme> {
        CodeIxScheme::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// The instruction word of a patched function (as `code::OP_I_GENERIC_BREAKPOINT`).
pub use crate::code::OP_I_GENERIC_BREAKPOINT;

/// Base of the original first instructions of version `v`: function `i` of version `v` starts
/// with `VERSION_INSTR_BASE + (v << 8) + i`, so a call can check it runs the code of the version
/// its export entry gave it.
pub const VERSION_INSTR_BASE: usize = 0x2000_0000;

/// The global active and staging code index (`erts_active_code_ix`, `erts_staging_code_ix`).
pub struct CodeIndex {
    active: AtomicU32,
    /// Indices in use (2 or 3): set before any scheduler runs, read by the stager only.
    num: usize,
}

impl CodeIndex {
    pub fn new() -> CodeIndex {
        CodeIndex {
            active: AtomicU32::new(0),
            num: 2,
        }
    }

    /// Cycle through `num` indices from now on (2 or 3; before any scheduler runs).
    pub fn set_num(&mut self, num: usize) {
        assert!((2..=ERTS_NUM_CODE_IX).contains(&num), "2 or 3 code indices");
        self.num = num;
    }

    /// `erts_active_code_ix()`, as a scheduler reads it at the start of a call.
    pub fn erts_active_code_ix(&self, m: Option<Mutant>) -> usize {
        // Acquire: pairs with the Release store of `erts_commit_staging_code_ix` (code-ix-commit),
        // so a call that reads the new index sees the new version fully written (its code, its
        // slots, its breakpoints) and the staging export addresses.
        self.active.load(ord(m, Site::CodeIxLoad, Acquire)) as usize
    }

    /// `erts_staging_code_ix()`: the stager's view (it is the only writer).
    pub fn erts_staging_code_ix(&self) -> usize {
        (self.active.load(crate::sync::Ordering::Relaxed) as usize + 1) % self.num
    }

    /// The stager's view of the active index.
    pub fn stager_active_ix(&self) -> usize {
        self.active.load(crate::sync::Ordering::Relaxed) as usize
    }

    /// `erts_commit_staging_code_ix()`: the staging index becomes the active one.
    pub fn erts_commit_staging_code_ix(&self, m: Option<Mutant>) {
        let next = self.erts_staging_code_ix() as u32;
        // Release: pairs with the Acquire load of `erts_active_code_ix` (code-ix-load): every
        // write of the staged version and of the staging export addresses and dispatch words
        // happens before a call that reads the new index.
        self.active.store(next, ord(m, Site::CodeIxCommit, Release));
    }
}

impl Default for CodeIndex {
    fn default() -> Self {
        Self::new()
    }
}

/// One loaded version of a module (`struct erl_module_instance`): its code area.
pub struct CodeVersion {
    /// 1, 2, ... per load of its module.
    pub number: u32,
    /// Its module's index in the engine's module table (`CodeMgmt::mods`).
    pub module: usize,
    /// The version's code area: per function its first instruction word and breakpoint slot,
    /// the slot holding the engine's own `GenericBp` chain, so the engine's steps (stage,
    /// install, commit, uninstall, consolidate, free) and hit path run on it as on the engine's
    /// code area ([`crate::export::Area::Version`]).
    pub code: CodeArea,
    /// The loaded code proper: written once by the loader before the version is published,
    /// read by every call into it (a loom cell: a call not ordered after the loader's write is a
    /// causality violation).
    pub body: UnsafeCell<u64>,
    /// The promise made for this version's calls, one bit per function (bit `f`: function
    /// `f`; a module has at most 64 functions, [`MAX_MODULE_FUNCTIONS`]): while `f`'s bit is
    /// set, a call of `f` runs its breakpoints (the call is counted). Set before publication
    /// for the functions the version is loaded with patterns on, or by `trace_pattern` after
    /// its commit and W2; cleared by `trace_pattern` at staging and by the loader before it
    /// removes the breakpoints. One word for the version, so a pattern on every function
    /// makes the same single store as a module-wide flag would.
    pub promised: AtomicU64,
    /// Processes executing in this version (a return address or the program counter in its
    /// code area, what `erlang:check_process_code/2` looks for): incremented by a remote call
    /// that stays in the version, decremented when the process returns out of it (relaxed: the
    /// loader reads it after a grace period that follows every increment, LW1, and frees only
    /// after a second one that follows every decrement, PW; docs/nonblocking-load.md §3).
    pub in_code: AtomicU32,
    /// `code:purge/1` sent every process in this version an exit signal (kill): a process still
    /// in it exits at its next scheduling point, its frames dropped without returning
    /// (`calls.rs` `take_signals`). Set by the purger, which then waits for
    /// `in_code` to reach zero (relaxed: it publishes nothing; the exit's decrement is ordered
    /// before the free by PW, as a return's is).
    pub kill: AtomicBool,
    pub live: Liveness,
}

impl CodeVersion {
    pub fn body_of(number: u32) -> u64 {
        0xC0DE_0000 + number as u64
    }
    pub fn instr_of(number: u32, f: usize) -> usize {
        VERSION_INSTR_BASE + ((number as usize) << 8) + f
    }
}

/// An export entry (`Export`, erlang/otp `erts/emulator/beam/export.h`): per code index an
/// address and a dispatch word; null is the `undef` stub of a deleted or never-loaded module.
///
/// ERTS has one word per code index, `ep->dispatch.addresses[ix]`: the function's code, or the
/// entry's trampoline (`erts_activate_export_trampoline(ep, ix)`), whose
/// `op_i_generic_breakpoint` runs the entry's breakpoint (`ep->info.gen_bp`, one per entry)
/// and jumps on to `ep->trampoline.breakpoint.address`. The engine splits that word in two:
/// `addresses[ix]`, the version a call through index `ix` runs, and `dispatch[ix]`, whether
/// it runs the entry's breakpoint first (`OP_I_GENERIC_BREAKPOINT`, the trampoline active
/// at `ix`) or not (`EXPORT_BASE + f`, the function's address), so the continuation is per
/// index where ERTS's trampoline holds one (which its load clears under the block). The
/// steps write the dispatch words as ERTS writes the addresses: `start_staging` copies the
/// active index's into the staging index's (`export_start_staging`), trace_pattern's install
/// and uninstall patch the active index's in place (`install_exp_breakpoints`,
/// `uninstall_exp_breakpoints` in `erl_bif_trace.c`), and the blocking load's clear writes the
/// staging index's (`delete_code` in `beam_bif_load.c`), which the commit makes active.
pub struct ExportEntry {
    pub addresses: [AtomicPtr<CodeVersion>; ERTS_NUM_CODE_IX],
    /// Per code index: `OP_I_GENERIC_BREAKPOINT` or `EXPORT_BASE + f` (see above).
    pub dispatch: [AtomicUsize; ERTS_NUM_CODE_IX],
}

impl ExportEntry {
    /// The entry of function `f`: no code, dispatch words on the function's address.
    pub fn new(f: usize) -> ExportEntry {
        ExportEntry {
            addresses: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            dispatch: std::array::from_fn(|_| AtomicUsize::new(crate::export::EXPORT_BASE + f)),
        }
    }
}

/// The module table entry (stager-owned: read and written only under the permission).
pub struct Module {
    /// The number of the module's next version.
    pub next_version: u32,
    pub curr: *mut CodeVersion,
    pub old: *mut CodeVersion,
    /// The module's patterns per function (`patterns[f]`), one per session that traces `f`,
    /// in the order they were set: what a `trace_pattern` on the function set last in that
    /// session (local call trace with its match spec, meta, call_count, call_time,
    /// call_memory). A load gives the new version these patterns, chained as the engine chains
    /// sessions (they stand for ERTS's on_load/default patterns).
    pub patterns: Vec<Vec<(SessionId, ModPattern)>>,
    /// Per function, the sessions with a global (export) pattern on its entry (the module's
    /// `ModCode` export area, on an engine made `Engine::with_global_trace`).
    pub global: Vec<Vec<SessionId>>,
}

/// The most functions a module of the engine has (one bit each in [`CodeVersion::promised`]).
pub const MAX_MODULE_FUNCTIONS: usize = 64;

/// One session's pattern on the module ([`Module::patterns`]).
#[derive(Clone, Debug, Default)]
pub struct ModPattern {
    /// local and the counters.
    pub flags: FlagSet,
    /// The match spec of local call trace (`return_trace`, `exception_trace`, `{caller}`).
    pub ms: Option<std::sync::Arc<MatchSpec>>,
    /// `{meta, Tracer}`.
    pub meta: Option<TracerSpec>,
    /// The counters of `flags` that `pause` stopped (their breakpoints stay, without the
    /// ACTIVE bit: `Engine::trace_pattern_funcs_op_in`); a `true` or `restart` runs them again.
    pub paused: FlagSet,
}

impl ModPattern {
    /// Anything set?
    pub fn is_set(&self) -> bool {
        self.flags.local || self.flags.counters() || self.meta.is_some()
    }

    /// Does a call of the function run something of this pattern (local or meta trace, or a
    /// counter that is not paused)? What the promise is made of ([`Module::traced_mask`]).
    pub fn runs(&self) -> bool {
        let f = self.flags;
        let p = self.paused;
        f.local
            || self.meta.is_some()
            || (f.call_count && !p.call_count)
            || (f.call_time && !p.call_time)
            || (f.call_memory && !p.call_memory)
    }
}

impl Module {
    /// Is any session's pattern set on any function?
    pub fn traced(&self) -> bool {
        self.patterns.iter().any(|p| !p.is_empty())
    }

    /// The functions with a pattern that runs (`ModPattern::runs`: not only paused counters),
    /// one bit each ([`CodeVersion::promised`]).
    pub fn traced_mask(&self) -> u64 {
        self.patterns
            .iter()
            .enumerate()
            .filter(|(_, p)| p.iter().any(|(_, x)| x.runs()))
            .fold(0, |m, (f, _)| m | (1u64 << f))
    }

    /// The functions with a pattern, running or not (their versions' nodes and patched
    /// instructions), one bit each.
    pub fn pattern_mask(&self) -> u64 {
        self.patterns
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_empty())
            .fold(0, |m, (f, _)| m | (1u64 << f))
    }

    /// Has any function a global pattern?
    pub fn any_global(&self) -> bool {
        self.global.iter().any(|g| !g.is_empty())
    }
}

/// Bit `f` of a [`CodeVersion::promised`] word.
pub fn fbit(f: usize) -> u64 {
    1u64 << f
}
