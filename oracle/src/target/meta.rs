//! Meta trace for [`RefEngine`]: the meta tracer is a mailbox (pid [`META_PID`], not a scenario
//! process); its messages `{trace, Pid, call, {M,F,Arity}}` are read back as (pid, function).

use super::RefEngine;
use bpspec_reference::{FuncId, Mailbox, ProcessTracer, Term, TracerSpec};

/// The meta tracer's pid in the engines (scenario processes are 1..=N).
pub const META_PID: u64 = 1 << 40;

/// The meta tracer the runner names in `TraceSpec::meta`: `{tracer, Pid}` with pid
/// [`META_PID`]. Its own mailbox is never delivered to: each engine meta-traces to its own
/// tracer of that pid, whose messages `BreakpointEngine::take_meta` reads.
pub fn meta_tracer() -> TracerSpec {
    ProcessTracer::spec(&Mailbox::new(META_PID))
}

impl RefEngine {
    /// Our meta tracer (the mailbox `meta_take` reads) for the runner's `named` one.
    pub(super) fn own_meta_tracer(&self, named: &TracerSpec) -> TracerSpec {
        assert_eq!(
            named.state,
            Term::Pid(META_PID),
            "meta tracer {named:?}: the runner's is {{tracer, Pid}} of META_PID"
        );
        ProcessTracer::spec(&self.meta_mb)
    }

    pub(super) fn meta_take(&mut self) -> Vec<(u64, FuncId)> {
        self.meta_mb
            .take()
            .into_iter()
            .map(|m| match &m {
                Term::Tuple(v) if v.len() == 4 => match (&v[1], &v[3]) {
                    (Term::Pid(p), Term::Tuple(mfa)) => match &mfa[..] {
                        [Term::Name(md), Term::Name(nm), Term::Int(a)] => {
                            // The scenario's function table (the runner's own).
                            let f = self
                                .code
                                .funcs
                                .iter()
                                .position(|h| {
                                    h.module == *md && h.name == *nm && i64::from(h.arity) == *a
                                })
                                .unwrap_or_else(|| panic!("meta message for unknown {m}"));
                            (*p, f)
                        }
                        _ => panic!("unexpected meta message {m}"),
                    },
                    _ => panic!("unexpected meta message {m}"),
                },
                _ => panic!("unexpected meta message {m}"),
            })
            .collect()
    }
}

impl super::WrongOracle {
    /// Keep the meta messages of earlier hits.
    pub(super) fn meta_before(&mut self) {
        let m = self.inner.0.take_meta();
        self.meta_keep.extend(m);
    }
    /// The meta messages of this hit: `MetaOnlyCallTraced` drops them for a process that is
    /// not call-traced in the legacy session.
    pub(super) fn meta_after(&mut self, call_traced: u64) {
        let m = self.inner.0.take_meta();
        if !(self.wrong == super::Wrong::MetaOnlyCallTraced && call_traced & 1 == 0) {
            self.meta_keep.extend(m);
        }
    }
}
