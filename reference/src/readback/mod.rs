//! Reading the stats back: `trace_info` items and answers ([`info`]), their Erlang terms
//! ([`term`]), and the OTP 29 call_time/call_memory collection ([`collect`]).

pub(crate) mod collect;
pub mod info;
pub mod term;
