//! Sequential oracle (see oracle.rs).
