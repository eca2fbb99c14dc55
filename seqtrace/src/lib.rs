//! seq_trace: a reference implementation of sequential tracing (trace tokens, the serial
//! algorithm, the system tracer), a stateright actor model of the causal-order guarantee the
//! serials give, and a driver for differential tests against a real Erlang/OTP node.
//!
//! Read docs/seq_trace.md for the algorithm, its proof and the model's figures.

pub mod model;
pub mod node;
pub mod otp;
pub mod scenario;
pub mod token;

pub use node::{
    Collect, Dialect, Event, EventKind, Msg, Node, SetToken, SystemTracer, TracerModule,
};
pub use token::{
    Component, Counters, Flag, Flags, Label, Mutant, Pid, SeqTraceError, Serial, Token, Value,
};
