//! The readers' API: every access a scheduler makes to breakpoint memory goes through one of
//! these functions, and each takes the [`Reader`] class that makes it as its first argument. The
//! reader inventory of docs/readers.md is therefore the set of their call sites, and
//! `tests/tests/reader_inventory.rs` compares that set with the inventory's table row for row
//! (file, function, class) and fails on a raw access to a slot (`gen_bp`), a `next` link, the
//! active breakpoint index, a half, the active code index or an export address outside this
//! module and outside the stager-side functions that docs/readers.md lists.
//!
//! Each function is the one access it replaces, nothing more: the same atomic of the sync shim
//! (`crate::sync`), the same ordering (the caller passes it, with its `ord(..)` ordering-site
//! where there is one, so the ordering mutants reach the same sites), no fence added, no
//! history event added. The reader class is not read at run time.

use crate::bp::{GenericBp, GenericBpData};
use crate::code_ix::CodeIndex;
use crate::mutant::Mutant;
use crate::sync::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// Who reads: one class per row of the reader inventory (docs/readers.md, "Reader call sites").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// The hit path (`hit.rs::hit_in`): the slot, then every node's `next`.
    HitIn,
    /// One session's node inside a hit (`hit.rs::do_session_breakpoint`): the active index and
    /// the active half.
    DoSessionBreakpoint,
    /// The call_time / call_memory charge (`calltime.rs::get_timem_break`): the slot (Acquire,
    /// finding F3), `next`, the active index and the active half.
    TimemCharge,
    /// A remote call into the engine's module (`calls.rs::remote`): the active code index, the
    /// export entry's address for it and, with global trace, its dispatch word for it.
    LoadRemote,
}

/// Load a function's breakpoint slot (`ErtsCodeInfo.gen_bp`).
#[inline]
#[track_caller]
pub fn load_slot<T>(_r: Reader, slot: &AtomicPtr<T>, o: Ordering) -> *mut T {
    slot.load(o)
}

/// Load a node's `next` link.
#[inline]
#[track_caller]
pub fn load_next<T>(_r: Reader, next: &AtomicPtr<T>, o: Ordering) -> *mut T {
    next.load(o)
}

/// Load the active breakpoint index (`erts_active_bp_index`).
#[inline]
#[track_caller]
pub fn active_ix(_r: Reader, index: &AtomicU32, o: Ordering) -> u32 {
    index.load(o)
}

/// Use half `ix` of `node` for the duration of `f` ([`GenericBp::read_half`]).
#[inline]
#[track_caller]
pub fn read_half<R>(
    _r: Reader,
    node: &GenericBp,
    ix: usize,
    f: impl FnOnce(&GenericBpData) -> R,
) -> R {
    node.read_half(ix, f)
}

/// Read the active code index ([`CodeIndex::erts_active_code_ix`], its ordering site inside).
#[inline]
#[track_caller]
pub fn code_ix(_r: Reader, c: &CodeIndex, m: Option<Mutant>) -> usize {
    c.erts_active_code_ix(m)
}

/// Load an export entry's address for one code index.
#[inline]
#[track_caller]
pub fn export_address<T>(_r: Reader, address: &AtomicPtr<T>, o: Ordering) -> *mut T {
    address.load(o)
}

/// Load an export entry's dispatch word for one code index (`ep->dispatch.addresses[ix]` as
/// the trampoline's switch: `code_ix.rs::ExportEntry::dispatch`).
#[inline]
#[track_caller]
pub fn export_dispatch(_r: Reader, word: &AtomicUsize, o: Ordering) -> usize {
    word.load(o)
}
