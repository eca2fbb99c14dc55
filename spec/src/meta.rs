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
use bpspec_reference::{FlagSet, InfoKey, Mfa, Pattern, PatternError, PatternOp, Term};
use std::collections::BTreeMap;

/// Meta-traced functions → the tracer's pid, and the messages sent so far.
#[derive(Clone, Debug, Default)]
pub struct MetaTable {
    tracer: BTreeMap<usize, u64>,
    msgs: Vec<(u64, usize)>,
}

impl Oracle {
    /// `trace_pattern` with `{meta, Pid}` added to `fl`. `false` clears meta; `pause`/`restart`
    /// set it as `true` (not checked against ERTS).
    pub fn trace_pattern_meta(
        &mut self,
        session: u32,
        pat: &Pattern,
        op: PatternOp,
        fl: FlagSet,
        tracer: u64,
    ) -> Result<usize, PatternError> {
        if session != 0 {
            return Err(PatternError::BadArg(
                "meta trace is implemented for the legacy session only".into(),
            ));
        }
        let n = if fl.local || fl.counters() {
            self.trace_pattern_flags(session, pat, op, fl)?
        } else {
            pat.matching(self.funcs.iter()).len()
        };
        for f in pat.matching(self.funcs.iter()) {
            if op == PatternOp::False {
                self.meta.tracer.remove(&f);
            } else {
                self.meta.tracer.insert(f, tracer);
            }
        }
        Ok(n)
    }

    /// A hit of `f` by `pid` (any process): the meta message, if meta traced.
    pub fn meta_hit(&mut self, f: usize, pid: u64) {
        if self.meta.tracer.contains_key(&f) {
            self.meta.msgs.push((pid, f));
        }
    }

    /// The meta messages since the last call, in order: (tracee pid, function).
    pub fn take_meta(&mut self) -> Vec<(u64, usize)> {
        std::mem::take(&mut self.meta.msgs)
    }

    /// `trace_info` with meta: the base answer (without meta) patched for the meta items.
    pub fn trace_info_meta(&self, session: u32, mfa: &Mfa, key: InfoKey) -> Term {
        let base = self.trace_info_term(session, mfa, key);
        let f = self.funcs.iter().position(|m| m == mfa);
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
