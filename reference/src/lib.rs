//! bpspec reference engine: ERTS's non-blocking breakpoints with real atomics and threads.
//!
//! One module per protocol step, in the order `trace_pattern` runs them:
//! [`stage`](crate::protocol::stage) → W0 → [`install`](crate::protocol::install) → W1 →
//! [`commit`](crate::protocol::commit) → W2 → [`uninstall`](crate::protocol::uninstall) → W3 →
//! [`consolidate`](crate::protocol::consolidate) → W4 → [`free`](crate::protocol::free), driven
//! by [`finisher`](crate::protocol::finisher). The scheduler side is [`hit`]. Grace periods come
//! from [`progress`]. Every atomic goes through [`sync`].
//!
//! The files are grouped by what they are: [`protocol`] (the core above), [`actions`] (what a
//! breakpoint does), [`sessions`] (sessions and export entries), [`readback`] (`trace_info` and
//! the collection); docs/protocol.md §6 has the layout and the import circle between them.
//!
//! docs/protocol.md states the invariants (I1–I6) and why each wait is needed.

pub mod history;
pub mod mutant;
pub mod pattern;
#[cfg(not(any(loom, shuttle)))]
pub mod torture;
pub mod watchdog;

// The files grouped by what they are (docs/protocol.md §6); every module is re-exported
// at the root, so `crate::stage` and `bpspec_reference::sync` name what they named.
pub mod actions;
pub mod protocol;
pub mod readback;
pub mod sessions;

use actions::calltime;
pub use actions::calltrace;
pub use actions::meta;
pub use actions::process;
pub use actions::timem;
pub use actions::tracer;
pub use protocol::bp;
use protocol::calls;
pub use protocol::code;
pub use protocol::code_ix;
use protocol::commit;
use protocol::consolidate;
pub use protocol::engine;
use protocol::free;
pub use protocol::hit;
use protocol::install;
pub use protocol::load;
pub use protocol::ordering;
pub use protocol::progress;
pub use protocol::readers;
use protocol::rest;
use protocol::stage;
pub use protocol::sync;
use protocol::uninstall;
pub use protocol::waitplan;
pub use readback::info;
pub use readback::term;
pub use sessions::export;
pub use sessions::session;

pub use bp::{flags, SessionId};
pub use calltrace::{MatchSpec, TraceSpec};
pub use code::{FuncId, Mfa};
pub use engine::{Engine, EngineConfig};
pub use export::Area;
pub use hit::{Hit, Process, Scheduler, TraceEvent};
pub use info::{InfoItem, InfoValue};
pub use load::{CallSeen, CodeMgmt, LoadError, LoadProtocol, ModCode, ModuleConfig};
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
