//! What a breakpoint does when a scheduler hits it: call_count and the call_time/call_memory
//! charges ([`timem`], [`calltime`]), local call trace with match specs and trace frames
//! ([`calltrace`], [`process`]), meta trace ([`meta`]) and the tracers messages go to
//! ([`tracer`]). They are set up by the protocol's steps and run from the hit path
//! ([`crate::protocol`], which explains the circle between the two groups).

pub(crate) mod calltime;
pub mod calltrace;
pub mod meta;
pub mod process;
pub mod timem;
pub mod tracer;
