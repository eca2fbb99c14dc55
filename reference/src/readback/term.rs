//! `trace_info/2` results as Erlang terms, with ERTS's shapes (`trace_info_func_epilogue`):
//! `{Key, undefined}`, `{Key, false}`, `{call_count, N}`, `{call_time, [{Pid, Count, S, Us}]}`,
//! `{call_memory, [{Pid, Count, Words}]}`, and `all` in ERTS's key order. The rendering
//! (`Display`) is Erlang's `~w`, so results compare textually with a real node's.

use crate::bp::{flags, SessionId};
use crate::code::Mfa;
use crate::engine::Engine;
use crate::progress::ThreadProgress;
use crate::sync::Ordering::Relaxed;
use crate::timem::Totals;
use std::fmt;

/// An Erlang term (the subset trace_info returns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    Atom(&'static str),
    /// An atom made at run time (module and function names); rendered like `Atom`, quoted when
    /// Erlang would quote it (`'of'`).
    Name(String),
    Int(i64),
    /// `<0.N.0>`.
    Pid(u64),
    List(Vec<Term>),
    Tuple(Vec<Term>),
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seq = |f: &mut fmt::Formatter<'_>, v: &[Term]| -> fmt::Result {
            for (i, t) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{t}")?;
            }
            Ok(())
        };
        match self {
            Term::Atom(a) => f.write_str(a),
            Term::Name(a) => write_atom(f, a),
            Term::Int(n) => write!(f, "{n}"),
            Term::Pid(p) => write!(f, "<0.{p}.0>"),
            Term::List(v) => {
                f.write_str("[")?;
                seq(f, v)?;
                f.write_str("]")
            }
            Term::Tuple(v) => {
                f.write_str("{")?;
                seq(f, v)?;
                f.write_str("}")
            }
        }
    }
}

/// `~w` of an atom: bare if it is a lower-case identifier and not a reserved word.
fn write_atom(f: &mut fmt::Formatter<'_>, a: &str) -> fmt::Result {
    const RESERVED: [&str; 29] = [
        "after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor", "case",
        "catch", "cond", "div", "end", "fun", "if", "let", "not", "of", "or", "orelse", "receive",
        "rem", "try", "when", "xor", "maybe", "else",
    ];
    let bare = a.starts_with(|c: char| c.is_ascii_lowercase())
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
        && !RESERVED.contains(&a);
    if bare {
        f.write_str(a)
    } else {
        write!(f, "'{}'", a.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

impl Term {
    /// `{M, F, A}` of a function.
    pub fn mfa(m: &crate::code::Mfa) -> Term {
        Term::Tuple(vec![
            Term::Name(m.module.clone()),
            Term::Name(m.name.clone()),
            Term::Int(m.arity as i64),
        ])
    }
}

/// The `Item` argument of `trace_info/2` for functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoKey {
    Traced,
    MatchSpec,
    Meta,
    MetaMatchSpec,
    CallCount,
    CallTime,
    CallMemory,
    All,
}

impl InfoKey {
    pub fn atom(self) -> &'static str {
        match self {
            InfoKey::Traced => "traced",
            InfoKey::MatchSpec => "match_spec",
            InfoKey::Meta => "meta",
            InfoKey::MetaMatchSpec => "meta_match_spec",
            InfoKey::CallCount => "call_count",
            InfoKey::CallTime => "call_time",
            InfoKey::CallMemory => "call_memory",
            InfoKey::All => "all",
        }
    }

    /// Every item `trace_info/2` takes, `all` last.
    pub const EVERY: [InfoKey; 8] = [
        InfoKey::Traced,
        InfoKey::MatchSpec,
        InfoKey::Meta,
        InfoKey::MetaMatchSpec,
        InfoKey::CallCount,
        InfoKey::CallTime,
        InfoKey::CallMemory,
        InfoKey::All,
    ];

    /// Parse the atom; `None` for anything else (ERTS: badarg).
    pub fn parse(s: &str) -> Option<InfoKey> {
        InfoKey::EVERY.into_iter().find(|k| k.atom() == s.trim())
    }

    fn wants(self) -> (bool, bool) {
        match self {
            InfoKey::CallTime => (true, false),
            InfoKey::CallMemory => (false, true),
            InfoKey::All => (true, true),
            _ => (false, false),
        }
    }
}

/// How trace_info collects call_time / call_memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collection {
    /// OTP 29: temporary tables, flips and waits, no scheduler stops.
    NonBlocking,
    /// Before OTP 29: block every scheduler, read, unblock.
    StopTheWorld,
}

/// One unit of the logical clock is a microsecond.
fn time_list(t: &Totals) -> Term {
    Term::List(
        t.iter()
            .map(|(&pid, &(count, acc))| {
                Term::Tuple(vec![
                    Term::Pid(pid),
                    Term::Int(count),
                    Term::Int(acc / 1_000_000),
                    Term::Int(acc % 1_000_000),
                ])
            })
            .collect(),
    )
}

fn mem_list(t: &Totals) -> Term {
    Term::List(
        t.iter()
            .map(|(&pid, &(count, acc))| {
                Term::Tuple(vec![Term::Pid(pid), Term::Int(count), Term::Int(acc)])
            })
            .collect(),
    )
}

impl<P: ThreadProgress> Engine<P> {
    /// `trace_info(Session, MFA, Key)` with the non-blocking collection (OTP 29).
    pub fn trace_info_term(&self, session: SessionId, mfa: &Mfa, key: InfoKey) -> Term {
        self.trace_info_with(session, mfa, key, Collection::NonBlocking)
    }

    /// `trace_info` with the chosen collection. Holds the code modification permission from
    /// the start to the result, as ERTS does.
    pub fn trace_info_with(
        &self,
        session: SessionId,
        mfa: &Mfa,
        key: InfoKey,
        how: Collection,
    ) -> Term {
        let pair = |v: Term| Term::Tuple(vec![Term::Atom(key.atom()), v]);
        let Some(f) = self.func(mfa) else {
            return pair(Term::Atom("undefined"));
        };
        let mut st = self.seize();
        self.trace_info_in(&mut st, crate::export::Area::Code, f, session, key, how)
    }

    /// `trace_info` of function `f` of `area` (the engine's code, or a loaded version's code
    /// area: `load.rs` `trace_info_module`) under the permission the caller holds: the one
    /// collection (`collect.rs`) and the one rendering of every item.
    pub(crate) fn trace_info_in(
        &self,
        st: &mut crate::engine::Permission<'_>,
        area: crate::export::Area,
        f: crate::code::FuncId,
        session: SessionId,
        key: InfoKey,
        how: Collection,
    ) -> Term {
        let pair = |v: Term| Term::Tuple(vec![Term::Atom(key.atom()), v]);
        let st = &mut *st;
        let g = self.session_node_in(st, area, f, session, false);
        if g.is_null() {
            return pair(Term::Atom("false"));
        }
        let (want_time, want_mem) = key.wants();
        let got = if want_time || want_mem {
            match how {
                Collection::NonBlocking => self.collect_nonblocking(st, g, want_time, want_mem),
                Collection::StopTheWorld => self.collect_stw(st, g, want_time, want_mem),
            }
        } else {
            Default::default()
        };
        // SAFETY: live node under the permission (nothing can free it while we hold it).
        let d = unsafe { &*g }.snapshot_half(self.active_ix());
        let fl = d.flags;
        let traced = || {
            Term::Atom(if fl & flags::LOCAL_TRACE != 0 {
                "local"
            } else if fl & flags::GLOBAL_TRACE != 0 {
                "global"
            } else {
                "false"
            })
        };
        let match_spec = || {
            if fl & (flags::LOCAL_TRACE | flags::GLOBAL_TRACE) != 0 {
                Term::List(vec![])
            } else {
                Term::Atom("false")
            }
        };
        let count = || match (&d.count, fl & flags::COUNT != 0) {
            (Some(c), true) => Term::Int(c.acount.load(Relaxed) as i64),
            _ => Term::Atom("false"),
        };
        let meta = || {
            d.meta
                .as_deref()
                .filter(|_| fl & flags::META_TRACE != 0)
                .map(|mt| self.meta_term(mt))
        };
        let meta_ms = || {
            if fl & flags::META_TRACE != 0 {
                Term::List(vec![])
            } else {
                Term::Atom("false")
            }
        };
        let time = || got.time.as_ref().map_or(Term::Atom("false"), time_list);
        let mem = || got.mem.as_ref().map_or(Term::Atom("false"), mem_list);
        let v = match key {
            InfoKey::Traced => traced(),
            InfoKey::MatchSpec => match_spec(),
            // Not meta traced: `false` (OTP 29; OTP 25 answers `[]` when the function is traced
            // otherwise, docs/deviations.md). A removed meta tracer (NIL) shows as `[]`.
            InfoKey::Meta => meta().unwrap_or(Term::Atom("false")),
            InfoKey::MetaMatchSpec => meta_ms(),
            InfoKey::CallCount => count(),
            InfoKey::CallTime => time(),
            InfoKey::CallMemory => mem(),
            InfoKey::All if fl & flags::ALL == 0 => Term::Atom("false"),
            InfoKey::All => Term::List(vec![
                Term::Tuple(vec![Term::Atom("traced"), traced()]),
                Term::Tuple(vec![Term::Atom("match_spec"), match_spec()]),
                Term::Tuple(vec![
                    Term::Atom("meta"),
                    meta().unwrap_or(Term::Atom("false")),
                ]),
                Term::Tuple(vec![Term::Atom("meta_match_spec"), meta_ms()]),
                Term::Tuple(vec![Term::Atom("call_memory"), mem()]),
                Term::Tuple(vec![Term::Atom("call_time"), time()]),
                Term::Tuple(vec![Term::Atom("call_count"), count()]),
            ]),
        };
        pair(v)
    }
}
