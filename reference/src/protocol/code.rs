//! The code area: functions `{Module, Name, Arity}`, each with a header holding its first
//! instruction word and the breakpoint slot (ERTS keeps the slot at `-sizeof(UWord)` from the
//! first instruction, in `ErtsCodeInfo.gen_bp`).

use crate::bp::GenericBp;
use crate::sync::{AtomicPtr, AtomicUsize};
use std::fmt;

/// The instruction word that makes a function run its breakpoint (`op_i_generic_breakpoint`).
pub const OP_I_GENERIC_BREAKPOINT: usize = 0xB9EA_0001;
/// Base of the original first-instruction words: function `i` starts with `ORIG_INSTR_BASE + i`,
/// so the hit path can check that it runs exactly the instruction the breakpoint saved.
pub const ORIG_INSTR_BASE: usize = 0x1000_0000;

/// Index of a function in the code area.
pub type FuncId = usize;

/// `{Module, Name, Arity}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mfa {
    pub module: String,
    pub name: String,
    pub arity: u32,
}

impl Mfa {
    pub fn new(module: &str, name: &str, arity: u32) -> Mfa {
        Mfa {
            module: module.to_string(),
            name: name.to_string(),
            arity,
        }
    }
}

impl fmt::Display for Mfa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}/{}", self.module, self.name, self.arity)
    }
}

/// `ErtsCodeInfo` plus the first instruction word.
pub struct FuncHeader {
    pub mfa: Mfa,
    /// The first instruction word. Schedulers read it with a relaxed load (ERTS uses a plain
    /// load; an aligned word write is seen whole).
    pub instr: AtomicUsize,
    /// The breakpoint slot: head of the per-session chain. Relaxed loads.
    pub gen_bp: AtomicPtr<GenericBp>,
    /// The function's real first instruction, for assertions (never changes).
    pub original: usize,
}

/// All loaded functions. Fixed after construction (code loading is out of scope).
pub struct CodeArea {
    pub funcs: Vec<FuncHeader>,
}

impl CodeArea {
    pub fn new(mfas: Vec<Mfa>) -> CodeArea {
        let funcs = mfas
            .into_iter()
            .enumerate()
            .map(|(i, mfa)| FuncHeader {
                mfa,
                instr: AtomicUsize::new(ORIG_INSTR_BASE + i),
                gen_bp: AtomicPtr::new(std::ptr::null_mut()),
                original: ORIG_INSTR_BASE + i,
            })
            .collect();
        CodeArea { funcs }
    }

    pub fn len(&self) -> usize {
        self.funcs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.funcs.is_empty()
    }

    pub fn find(&self, mfa: &Mfa) -> Option<FuncId> {
        self.funcs.iter().position(|f| &f.mfa == mfa)
    }
}
