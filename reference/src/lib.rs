//! bpspec reference engine: ERTS's non-blocking breakpoints with real atomics and threads.
//!
//! One module per protocol step, in the order `trace_pattern` runs them:
//! [`stage`](crate::stage) → W0 → [`install`](crate::install) → W1 → [`commit`](crate::commit) →
//! W2 → [`uninstall`](crate::uninstall) → W3 → [`consolidate`](crate::consolidate) → W4 →
//! [`free`](crate::free), driven by [`finisher`](crate::finisher). The scheduler side is
//! [`hit`]. Grace periods come from [`progress`]. Every atomic goes through [`sync`].
//!
//! docs/protocol.md states the invariants (I1–I6) and why each wait is needed.

pub mod bp;
mod calltime;
pub mod calltrace;
pub mod code;
pub mod code_ix;
mod collect;
mod commit;
mod consolidate;
pub mod engine;
pub mod export;
mod finisher;
mod free;
pub mod history;
pub mod hit;
pub mod info;
mod install;
pub mod load;
pub mod meta;
pub mod mutant;
pub mod ordering;
pub mod pattern;
pub mod process;
pub mod progress;
mod rest;
pub mod session;
mod stage;
pub mod sync;
pub mod term;
pub mod timem;
#[cfg(not(any(loom, shuttle)))]
pub mod torture;
pub mod tracer;
mod uninstall;
pub mod waitplan;

pub use bp::{flags, SessionId};
pub use calltrace::{MatchSpec, TraceSpec};
pub use code::{FuncId, Mfa};
pub use engine::{Engine, EngineConfig};
pub use export::Area;
pub use hit::{Hit, Process, Scheduler, TraceEvent};
pub use info::{InfoItem, InfoValue};
pub use load::{CallSeen, LoadEngine, LoadError, LoadProtocol, LoadScheduler};
pub use mutant::Mutant;
pub use ordering::Site;
pub use pattern::{FlagSet, Pattern, PatternError, PatternOp, TraceFlags};
pub use process::{Frame, Proc};
pub use process::{ProcFlags, TraceRef};
pub use progress::{EpochProgress, Qsbr, ThreadProgress};
pub use session::SessionError;
pub use term::{InfoKey, Term};
pub use timem::Totals;
pub use tracer::{Enabled, Mailbox, ProcessTracer, TraceOpts, TraceTag, Tracer, TracerSpec};
pub use waitplan::{BatchEntry, WaitPlan};

/// Upper bound on a chain's length (one node per session; ERTS has no hard limit, we assert one).
pub const MAX_CHAIN: usize = 64;
