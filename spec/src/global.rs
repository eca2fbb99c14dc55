//! Global call trace in the sequential oracle: export entries and their breakpoints.
//!
//! Only exported functions have an export entry, and only remote calls (`m:f()`, and the
//! driver's `apply`) go through it; a remote call then enters the code, so it hits the global
//! breakpoints of the entry first and the local ones of the code after. A global breakpoint only
//! sends call messages (to sessions whose process has the `call` flag); it has no counters.
//!
//! `trace_pattern`, as ERTS `erts_set_trace_pattern` does it (checked on OTP 25):
//! - `global`, or an empty flag list, is global trace. It returns the number of matched
//!   *exports* (a pattern matching only local functions returns 0). Combined with `local`,
//!   `meta` or a counter it is badarg.
//! - Any op but `false` sets global trace, `pause` and `restart` included (ERTS only asks
//!   `on != 0`), and clears every local flag of the session on *all* matched functions,
//!   exported or not (`erts_clear_all_breaks`): local, call_count, call_time, call_memory.
//! - `false` clears global trace on the matched exports and leaves the code alone.
//! - A local pattern with any op but `false` (also `pause`/`restart` of a counter) clears the
//!   session's global trace on the matched exports (`erts_clear_export_trace`); a local
//!   `false` leaves them alone.
//! - `trace_info`: a function with global trace in the session answers `{traced, global}`,
//!   `{match_spec, []}`, and `false` for the other items (local and global exclude each other,
//!   so there is nothing else on the code).

use crate::Oracle;
use bpspec_reference::{InfoKey, Mfa, Pattern, PatternOp, Term};
use std::collections::{BTreeMap, BTreeSet};

/// The export entries and their global breakpoints.
#[derive(Clone, Debug, Default)]
pub struct Exports {
    /// Functions with an export entry; `None` means every function (as the engine by default).
    exported: Option<BTreeSet<usize>>,
    /// `(function, session) -> creation order` of the global breakpoints (newest first on a hit).
    global: BTreeMap<(usize, u32), u64>,
}

impl Oracle {
    /// Only the functions in `exported` have export entries (before any global pattern).
    pub fn set_exports(&mut self, exported: &[usize]) {
        assert!(
            self.exports.global.is_empty(),
            "set_exports after global patterns were set"
        );
        assert!(
            exported.iter().all(|&f| f < self.funcs.len()),
            "export of a function out of range: {exported:?}"
        );
        self.exports.exported = Some(exported.iter().copied().collect());
    }

    /// Does `f` have an export entry?
    pub fn is_exported(&self, f: usize) -> bool {
        f < self.funcs.len()
            && self
                .exports
                .exported
                .as_ref()
                .is_none_or(|x| x.contains(&f))
    }

    /// `trace_pattern` with `global` alone (the flags were checked by
    /// [`Oracle::trace_pattern`]): the number of matched exports.
    pub(crate) fn pattern_global(&mut self, session: u32, pat: &Pattern, op: PatternOp) -> usize {
        let matched = self.matching(pat);
        let exps: Vec<usize> = matched
            .iter()
            .copied()
            .filter(|&f| self.is_exported(f))
            .collect();
        if op == PatternOp::False {
            for &f in &exps {
                self.exports.global.remove(&(f, session));
            }
        } else {
            for &f in &exps {
                if !self.exports.global.contains_key(&(f, session)) {
                    self.seq += 1;
                    self.exports.global.insert((f, session), self.seq);
                }
            }
            // Global excludes local: every local flag of the session goes, on every match, and
            // in the legacy session meta trace too (`erts_clear_all_breaks`; OTP 25 answers
            // `{meta, false}` after it, as the engine does).
            for &f in &matched {
                self.nodes.remove(&(f, session));
            }
            if session == 0 {
                self.clear_meta(&matched);
            }
        }
        exps.len()
    }

    /// Code loading clears the global trace of `fs` in every session
    /// (`erts_clear_all_export_break`; code.rs CL1, CL3).
    pub(crate) fn clear_export_break(&mut self, fs: &[usize]) {
        self.exports.global.retain(|(f, _), _| !fs.contains(f));
    }

    /// Local excludes global: a local `trace_pattern` with `op` on `matched` (called by
    /// [`Oracle::trace_pattern`] after it applied the local flags).
    pub(crate) fn local_clears_global(&mut self, session: u32, matched: &[usize], op: PatternOp) {
        if op != PatternOp::False {
            for f in matched {
                self.exports.global.remove(&(*f, session));
            }
        }
    }

    /// The call messages of `f`'s export entry: sessions with global trace on it whose bit is
    /// set in `call_traced`, newest breakpoint first.
    pub(crate) fn export_hit(
        &self,
        f: usize,
        pid: u64,
        call_traced: u64,
    ) -> Vec<(u32, u64, usize)> {
        assert!(
            self.is_exported(f),
            "remote call of unexported function #{f}"
        );
        let mut on_f: Vec<(u64, u32)> = self
            .exports
            .global
            .range((f, 0)..=(f, u32::MAX))
            .map(|(&(_, s), &seq)| (seq, s))
            .collect();
        on_f.sort_by_key(|&(seq, _)| std::cmp::Reverse(seq));
        on_f.into_iter()
            .filter(|&(_, s)| call_traced & (1 << s) != 0)
            .map(|(_, s)| (s, pid, f))
            .collect()
    }

    /// A remote call of `f` without a process stack: the export entry, then the code.
    pub fn call_remote(&mut self, f: usize, pid: u64, call_traced: u64) -> Vec<(u32, u64, usize)> {
        let mut events = self.export_hit(f, pid, call_traced);
        events.extend(self.call(f, pid, call_traced));
        events
    }

    /// `trace_info` of a function with global trace in `session`; `None` if it has none.
    pub fn global_info(&self, session: u32, mfa: &Mfa, key: InfoKey) -> Option<Term> {
        let f = self.position(mfa)?;
        self.exports.global.get(&(f, session))?;
        // Local and global exclude each other: nothing else is on the function.
        Some(crate::timem::all_or_one(key, |k| match k {
            InfoKey::Traced => Term::Atom("global"),
            InfoKey::MatchSpec => Term::List(vec![]),
            _ => Term::Atom("false"),
        }))
    }

    /// Does `session` have global trace on `f`'s export entry?
    pub fn global_on(&self, session: u32, f: usize) -> bool {
        self.exports.global.contains_key(&(f, session))
    }

    /// The export entries and their breakpoints (to snapshot for [`Oracle::restore_exports`]).
    pub fn exports(&self) -> &Exports {
        &self.exports
    }

    /// Put back a snapshot of the export entries. Only for deliberately wrong oracles (the
    /// conformance checks' mutants, `oracle/src/target.rs`): it can break the exclusion.
    pub fn restore_exports(&mut self, e: Exports) {
        self.exports = e;
    }

    /// Is `f`'s export entry redirected to the breakpoint? Iff some session has global trace
    /// on it.
    pub fn is_export_patched(&self, f: usize) -> bool {
        self.exports
            .global
            .range((f, 0)..=(f, u32::MAX))
            .next()
            .is_some()
    }
}
