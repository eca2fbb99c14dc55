//! Export entries and global breakpoints (ERTS `Export`, `ep->info`, the export trampoline).
//!
//! Every exported function has an export entry with its own breakpoint chain, separate from the
//! function's code. Only remote calls (`m:f()`) go through the entry: its dispatch word is the
//! function's address until a global breakpoint is installed, which redirects it to the
//! trampoline (`op_i_generic_breakpoint`); the trampoline runs the chain and then jumps to the
//! function's address saved as the node's `orig_instr`. Local calls go straight to the code.
//!
//! The export area reuses [`CodeArea`]: an entry's `instr` word is the dispatch word and its
//! `original` is the function's address, `EXPORT_BASE + FuncId`. The steps (stage, install,
//! commit, uninstall, consolidate, free) and their waits are the same for both areas; they take
//! the area as a parameter.

use crate::code::{CodeArea, FuncHeader, FuncId, Mfa};
use crate::hit::Scheduler;
use crate::process::Proc;
use crate::progress::ThreadProgress;
use crate::sync::{AtomicPtr, AtomicUsize};

/// Base of function addresses as export entries hold them (distinct from instruction words).
pub const EXPORT_BASE: usize = 0x4000_0000;

/// Which breakpoint chains a step works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Area {
    /// Function code: local breakpoints (local, meta, call_count/time/memory).
    Code,
    /// Export entries: global breakpoints.
    Export,
    /// The code area of one loaded version of a module (`code_ix.rs::CodeVersion::code`): local
    /// breakpoints on code that a load made or will make old (`load.rs`).
    Version(VersionArea),
    /// No code area: the name of module `m`'s functions (the engine's module table,
    /// `load.rs` `ModCode::mfas`), whichever version, for what a process keeps once its
    /// module's version becomes old (the function it is in, its continuations, its
    /// return_trace frames: names for messages only). Never dereferenced: [`Engine::area`] and
    /// the charge code (`calltime.rs::get_timem_break`) reject it.
    ///
    /// [`Engine::area`]: crate::engine::Engine::area
    Module(usize),
}

/// A version's code area as [`Area::Version`] names it. Made only by `load.rs`, for a version the
/// module table owns; the version is freed only by a purge (under the permission, after PW), so
/// the area outlives every step and hit that is given it (docs/nonblocking-load.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VersionArea(pub(crate) *const CodeArea);

// SAFETY: a `VersionArea` only names a `CodeArea`, whose words are atomics (`FuncHeader`) shared
// by every scheduler; it is dereferenced under the rules of its type (above), on whichever
// thread holds it (a process's pbt or return frame, `process::Ci`, moves with the process).
unsafe impl Send for VersionArea {}
// SAFETY: as above: shared reads of atomics only.
unsafe impl Sync for VersionArea {}

/// Build the export area for `exported` functions of `code`.
pub(crate) fn export_area(code: &CodeArea, exported: &[FuncId]) -> (CodeArea, Vec<FuncId>) {
    let funcs = exported
        .iter()
        .map(|&f| {
            let mfa: Mfa = code.funcs[f].mfa.clone();
            FuncHeader {
                mfa,
                instr: AtomicUsize::new(EXPORT_BASE + f),
                gen_bp: AtomicPtr::new(std::ptr::null_mut()),
                original: EXPORT_BASE + f,
            }
        })
        .collect();
    (CodeArea { funcs }, exported.to_vec())
}

impl<P: ThreadProgress> crate::engine::Engine<P> {
    /// The chains of `a`.
    pub fn area(&self, a: Area) -> &CodeArea {
        match a {
            Area::Code => &self.code,
            Area::Export => &self.exports,
            // SAFETY: a `VersionArea` names the code area of a live version (see its type): the
            // stager passes it under the permission while the module table owns the version, a
            // scheduler while its call is ordered before the version's free (LW1 / PW).
            Area::Version(v) => unsafe { &*v.0 },
            Area::Module(m) => panic!("module {m}'s name (Area::Module) names no code area"),
        }
    }

    /// The export entry of function `f`, if it is exported.
    pub fn export_of(&self, f: FuncId) -> Option<usize> {
        self.exp_func.iter().position(|&g| g == f)
    }

    /// The function an export entry belongs to.
    pub fn func_of_export(&self, x: usize) -> FuncId {
        self.exp_func[x]
    }

    /// The name of the function `ci` names: a loaded version's own (its code area's), or the
    /// engine's code area's for [`Area::Code`] and [`Area::Export`] (an export entry's `f` is
    /// the function it belongs to), the module table's for [`Area::Module`]. A version's name is read while the process that holds the
    /// code info is in the version (`process::Ci`'s contract), or by the stager under the
    /// permission.
    pub fn mfa_of(&self, ci: crate::process::Ci) -> &Mfa {
        match ci.area {
            Area::Version(_) => &self.area(ci.area).funcs[ci.f].mfa,
            Area::Code | Area::Export => {
                self.static_entry("mfa_of");
                &self.code.funcs[ci.f].mfa
            }
            // The module table's names, fixed when the module was added.
            Area::Module(m) => &self.code_mgmt().mods[m].mfas[ci.f],
        }
    }

    /// Is the export entry of `f` redirected to the trampoline?
    pub fn is_export_patched(&self, f: FuncId) -> bool {
        self.static_entry("is_export_patched");
        self.export_of(f).is_some_and(|x| {
            self.exports.funcs[x]
                .instr
                .load(crate::sync::Ordering::Relaxed)
                == crate::code::OP_I_GENERIC_BREAKPOINT
        })
    }
}

impl<P: ThreadProgress> Scheduler<P> {
    /// A remote body call `m:f()`: push the continuation, go through the export entry (global
    /// breakpoints), then enter the code (local breakpoints).
    pub fn call_remote(&mut self, f: FuncId, proc: &mut Proc) -> usize {
        proc.push_cont();
        self.tail_call_remote(f, proc)
    }

    /// A remote tail call: through the export entry, no continuation pushed.
    pub fn tail_call_remote(&mut self, f: FuncId, proc: &mut Proc) -> usize {
        let x = self
            .engine()
            .export_of(f)
            .unwrap_or_else(|| panic!("remote call of unexported function #{f}"));
        let p = proc.p;
        let addr = self.hit_in(Area::Export, x, f, &p, Some(proc));
        assert_eq!(
            addr,
            EXPORT_BASE + f,
            "export entry of #{f} jumped to a foreign address"
        );
        let r = self.hit_in(Area::Code, f, f, &p, Some(proc));
        proc.current = Some(crate::process::Ci::code(f));
        r
    }

    /// A remote call by a bare [`crate::Process`] (no stack): global then local breakpoints.
    pub fn call_remote_plain(&mut self, f: FuncId, p: &crate::Process) -> usize {
        let x = self
            .engine()
            .export_of(f)
            .unwrap_or_else(|| panic!("remote call of unexported function #{f}"));
        let addr = self.hit_in(Area::Export, x, f, p, None);
        assert_eq!(addr, EXPORT_BASE + f);
        self.hit_in(Area::Code, f, f, p, None)
    }
}
