//! The protocol core, in the order a reader holds it next to ERTS `beam_bp.c`: the sync shim
//! every atomic goes through ([`sync`], its sites in [`ordering`]), thread progress
//! ([`progress`]), the code area ([`code`]), `GenericBp` ([`bp`]), the engine's global state
//! ([`engine`]), one file per protocol step (`stage` → W0 → `install` → W1 → `commit` → W2 →
//! `uninstall` → W3 → `consolidate` → W4 → `free`), the `finisher` that runs them (and the batch
//! plans of `waitplan`), the at-rest check (`rest`), and the scheduler's walk of a hit ([`hit`]).
//!
//! The groups are not layered: the steps and the hit path call what a breakpoint does
//! ([`crate::actions`]: stage builds call_time/meta/tracer state, the hit walk dispatches to
//! the actions, free releases their counters), the engine holds the sessions and export
//! entries ([`crate::sessions`]), and the actions and readback use the engine and `GenericBp`
//! back. That circle is ERTS's own (`beam_bp.c` does all of it over one `GenericBp`); breaking
//! it would need a trait between the steps and each action, with a dynamic call on the hit path
//! that ERTS does not make. docs/protocol.md (layout) says the same.

pub mod bp;
pub(crate) mod calls;
pub mod code;
pub mod code_ix;
pub(crate) mod commit;
pub(crate) mod consolidate;
pub mod engine;
pub(crate) mod finisher;
pub(crate) mod free;
pub mod hit;
pub(crate) mod install;
pub mod load;
pub mod ordering;
pub mod progress;
pub(crate) mod purge;
pub mod readers;
pub(crate) mod rest;
pub(crate) mod stage;
pub mod sync;
pub(crate) mod uninstall;
pub mod waitplan;
