//! Trace sessions ([`session`]: one `GenericBp` per session chained on a function) and export
//! entries ([`export`]: global breakpoints, the same steps on an entry's dispatch word).

pub mod export;
pub mod session;
