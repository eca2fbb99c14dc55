//! Meta trace in the sequential oracle (ERTS `{meta, Tracer}`; the engine's `reference/src/actions/meta.rs`):
//! a set of meta-traced functions with their tracer, and the messages it received. Kept beside
//! the node table rather than in it: meta does not depend on any other flag, and every hit of a
//! meta-traced function sends one `call` message to the meta tracer, whatever the calling
//! process's trace flags (OTP 25, checked by `oracle/corpus/call_count_combo_meta.json`).
//!
//! `trace_info`: `meta` is the tracer while meta traced, else `false` (OTP 29; OTP 25 answers
//! `[]` for a function traced otherwise); `meta_match_spec` is `[]` while meta traced.
//! The legacy session only; no meta match specs.

use crate::Oracle;
use bpspec_reference::{InfoKey, Mfa, Pattern, PatternOp, Term, TracerSpec};
use std::collections::BTreeMap;

/// Meta-traced functions → the tracer's pid, and the messages sent so far.
#[derive(Clone, Debug, Default)]
pub struct MetaTable {
    tracer: BTreeMap<usize, u64>,
    msgs: Vec<(u64, usize)>,
}

impl Oracle {
    /// `{meta, Tracer}` of a `trace_pattern` (its other flags applied by
    /// [`Oracle::trace_pattern`]) on every matched function: `false` clears meta;
    /// `pause`/`restart` set it as `true` (not checked against ERTS). The oracle keeps only the
    /// tracer's pid (`{tracer, Pid}`: its state).
    pub(crate) fn set_meta(&mut self, pat: &Pattern, op: PatternOp, tracer: &TracerSpec) {
        let Term::Pid(pid) = tracer.state else {
            panic!("meta tracer {tracer:?}: the oracle knows only {{tracer, Pid}}")
        };
        for f in self.matching(pat) {
            if op == PatternOp::False {
                self.meta.tracer.remove(&f);
            } else {
                self.meta.tracer.insert(f, pid);
            }
        }
    }

    /// Code loading (code.rs CL1, CL3) and a global pattern (global.rs) clear meta trace of `fs`.
    pub(crate) fn clear_meta(&mut self, fs: &[usize]) {
        self.meta.tracer.retain(|f, _| !fs.contains(f));
    }

    /// A hit of `f` by `pid` (any process): the meta message, if meta traced.
    pub(crate) fn meta_hit(&mut self, f: usize, pid: u64) {
        if self.meta.tracer.contains_key(&f) {
            self.meta.msgs.push((pid, f));
        }
    }

    /// Is `f` meta traced?
    pub fn meta_on(&self, f: usize) -> bool {
        self.meta.tracer.contains_key(&f)
    }

    /// The meta messages since the last call, in order: (tracee pid, function).
    pub fn take_meta(&mut self) -> Vec<(u64, usize)> {
        std::mem::take(&mut self.meta.msgs)
    }

    /// `trace_info(Session, MFA, Key)` as an Erlang term, in ERTS's shapes (OTP 26+ `all`): the
    /// answer without meta (timem.rs, global.rs) patched for the meta items.
    pub fn trace_info_term(&self, session: u32, mfa: &Mfa, key: InfoKey) -> Term {
        let base = self.info_without_meta(session, mfa, key);
        let f = self.position(mfa);
        let tracer = f
            .and_then(|f| self.meta.tracer.get(&f))
            .filter(|_| session == 0);
        let pair = |v: Term| Term::Tuple(vec![Term::Atom(key.atom()), v]);
        match (key, tracer) {
            (_, None) if f.is_none() => base,
            (InfoKey::Meta, Some(&p)) => pair(Term::Pid(p)),
            (InfoKey::MetaMatchSpec, Some(_)) => pair(Term::List(vec![])),
            (InfoKey::All, Some(&p)) => match base {
                Term::Tuple(v) if matches!(v[1], Term::List(_)) => {
                    let Term::List(items) = &v[1] else {
                        unreachable!()
                    };
                    let items = items
                        .iter()
                        .map(|it| match it {
                            Term::Tuple(kv) if kv[0] == Term::Atom("meta") => {
                                Term::Tuple(vec![kv[0].clone(), Term::Pid(p)])
                            }
                            Term::Tuple(kv) if kv[0] == Term::Atom("meta_match_spec") => {
                                Term::Tuple(vec![kv[0].clone(), Term::List(vec![])])
                            }
                            other => other.clone(),
                        })
                        .collect();
                    pair(Term::List(items))
                }
                // Meta alone: not modelled (the engine answers with every item; see
                // docs/conformance.md).
                other => other,
            },
            _ => base,
        }
    }
}
