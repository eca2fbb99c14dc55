//! How a process enters a function, for the oracle's one `enter` (timem.rs) and the
//! `BreakpointEngine::enter` of oracle/src/target.rs.

/// A body call pushes a continuation, a tail call does not; a remote call (`m:f()`) goes through
/// the export entry (and its global breakpoints, global.rs) before the code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub tail: bool,
    pub remote: bool,
    /// A local call made in an old version of a module (code.rs CL6): the old version has no
    /// breakpoints, so the entry hits nothing; the process's stack grows as for any entry.
    pub old: bool,
}

impl Entry {
    /// A local body call.
    pub const BODY: Entry = Entry::local(false);
    /// A local tail call.
    pub const TAIL: Entry = Entry::local(true);

    /// A local call, tail or body.
    pub const fn local(tail: bool) -> Entry {
        Entry {
            tail,
            remote: false,
            old: false,
        }
    }
    /// The same entry, through the export entry.
    pub fn remote(self) -> Entry {
        Entry {
            remote: true,
            ..self
        }
    }
}
