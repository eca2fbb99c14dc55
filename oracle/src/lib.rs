//! bpspec's oracle: a language-neutral scenario format (docs/scenario.md), a runner that plays a
//! scenario against any [`BreakpointEngine`](target::BreakpointEngine) (our engine, the
//! sequential oracle, or another implementation), the conformance harness that compares two
//! engines op by op, a random scenario generator, and the differential driver that runs
//! scenarios on a real Erlang/OTP node.
//!
//! Exit codes of `bpspec oracle` (docs/cli.md): [`EXIT_AGREE`], [`EXIT_DIFFER`],
//! [`EXIT_BAD_INPUT`], [`EXIT_UNSUPPORTED`], [`EXIT_FAULT`].

pub mod conformance;
pub mod coverage;
pub mod erlang;
pub mod erts_torture;
pub mod external;
pub mod frames;
pub mod gen;
pub mod gen_sessions;
pub mod observe;
pub mod run;
pub mod scenario;
pub mod seq;
pub mod sessions;
pub mod shrink;
pub mod target;

/// Observations agree with the expected ones (or `run` succeeded).
pub const EXIT_AGREE: u8 = 0;
/// Observations differ from the expected ones (a diff is printed).
pub const EXIT_DIFFER: u8 = 1;
/// Malformed or contradictory scenario, or bad usage.
pub const EXIT_BAD_INPUT: u8 = 2;
/// The scenario uses a feature the chosen engine does not implement (yet).
pub const EXIT_UNSUPPORTED: u8 = 3;
/// The engine broke one of its own invariants, or the Erlang node failed.
pub const EXIT_FAULT: u8 = 4;
