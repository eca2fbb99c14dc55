//! `trace_pattern` arguments: the MFA pattern with `'_'` wildcards, the operation
//! (`true | false | pause | restart`) and the flag list.

use crate::code::Mfa;
use std::fmt;

/// `{Module, Name, Arity}` where any trailing part may be the wildcard `'_'`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub module: Option<String>,
    pub name: Option<String>,
    pub arity: Option<u32>,
}

/// What `trace_pattern` does to the matched functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatternOp {
    /// `true` (or a match spec): enable; on an existing counter, reset it and run it.
    True,
    /// `false`: disable.
    False,
    /// `pause`: stop a counter, keep its value (counters only).
    Pause,
    /// `restart`: reset a counter and run it (counters only).
    Restart,
}

/// The flag list. This engine implements `local` and `call_count`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceFlags {
    pub local: bool,
    pub call_count: bool,
}

/// Bad input to `trace_pattern` (ERTS answers `badarg`). Each says what and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternError {
    /// The pattern text could not be parsed; `column` is 1-based.
    Syntax {
        input: String,
        column: usize,
        message: String,
    },
    /// A wildcard followed by a concrete part, e.g. `{'_', foo, 1}`.
    WildcardOrder { input: String },
    /// An operation/flag combination ERTS rejects.
    BadArg(String),
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Syntax {
                input,
                column,
                message,
            } => {
                write!(f, "invalid pattern {input:?} at column {column}: {message}")
            }
            PatternError::WildcardOrder { input } => write!(
                f,
                "invalid pattern {input:?}: after a '_' wildcard every later part must be '_' too"
            ),
            PatternError::BadArg(m) => write!(f, "badarg: {m}"),
        }
    }
}

impl std::error::Error for PatternError {}

impl Pattern {
    /// Every function: `{'_','_','_'}`.
    pub fn all() -> Pattern {
        Pattern {
            module: None,
            name: None,
            arity: None,
        }
    }

    /// Exactly one function.
    pub fn exact(mfa: &Mfa) -> Pattern {
        Pattern {
            module: Some(mfa.module.clone()),
            name: Some(mfa.name.clone()),
            arity: Some(mfa.arity),
        }
    }

    /// Parse `{M, F, A}` (Erlang tuple syntax) or `M:F/A`, where each part may be `'_'` or `_`.
    pub fn parse(input: &str) -> Result<Pattern, PatternError> {
        let syntax = |column: usize, message: &str| PatternError::Syntax {
            input: input.to_string(),
            column,
            message: message.to_string(),
        };
        let trimmed = input.trim();
        let offset = input.len() - input.trim_start().len();
        let parts: Vec<(usize, &str)> = if let Some(inner) = trimmed.strip_prefix('{') {
            let inner = inner
                .strip_suffix('}')
                .ok_or_else(|| syntax(offset + trimmed.len(), "missing '}'"))?;
            let mut col = offset + 2;
            let mut v = Vec::new();
            for p in inner.split(',') {
                v.push((col + (p.len() - p.trim_start().len()), p.trim()));
                col += p.len() + 1;
            }
            v
        } else {
            let (m, rest) = trimmed
                .split_once(':')
                .ok_or_else(|| syntax(offset + 1, "expected {M,F,A} or M:F/A"))?;
            let (n, a) = rest
                .split_once('/')
                .ok_or_else(|| syntax(offset + m.len() + 2, "missing '/Arity'"))?;
            vec![
                (offset + 1, m.trim()),
                (offset + m.len() + 2, n.trim()),
                (offset + m.len() + n.len() + 3, a.trim()),
            ]
        };
        if parts.len() != 3 {
            return Err(syntax(
                offset + 1,
                &format!("expected 3 parts, found {}", parts.len()),
            ));
        }
        let wild = |s: &str| s == "'_'" || s == "_";
        let atom = |(col, s): (usize, &str)| -> Result<Option<String>, PatternError> {
            if wild(s) {
                return Ok(None);
            }
            let bare = s
                .strip_prefix('\'')
                .and_then(|x| x.strip_suffix('\''))
                .unwrap_or(s);
            if bare.is_empty()
                || bare
                    .chars()
                    .any(|c| c.is_whitespace() || "{},:/'".contains(c))
            {
                return Err(syntax(col, &format!("{s:?} is not an atom")));
            }
            Ok(Some(bare.to_string()))
        };
        let module = atom(parts[0])?;
        let name = atom(parts[1])?;
        let (acol, a) = parts[2];
        let arity = if wild(a) {
            None
        } else {
            Some(
                a.parse::<u32>()
                    .ok()
                    .filter(|n| *n <= 255)
                    .ok_or_else(|| syntax(acol, &format!("{a:?} is not an arity (0..=255)")))?,
            )
        };
        let p = Pattern {
            module,
            name,
            arity,
        };
        if (p.module.is_none() && (p.name.is_some() || p.arity.is_some()))
            || (p.name.is_none() && p.arity.is_some())
        {
            return Err(PatternError::WildcardOrder {
                input: input.to_string(),
            });
        }
        Ok(p)
    }

    /// Indices of the functions in `funcs` this pattern matches, in order.
    pub fn matching<'a>(&self, funcs: impl IntoIterator<Item = &'a Mfa>) -> Vec<usize> {
        funcs
            .into_iter()
            .enumerate()
            .filter(|(_, m)| self.matches(m))
            .map(|(i, _)| i)
            .collect()
    }

    pub fn matches(&self, mfa: &Mfa) -> bool {
        self.module.as_ref().is_none_or(|m| *m == mfa.module)
            && self.name.as_ref().is_none_or(|n| *n == mfa.name)
            && self.arity.is_none_or(|a| a == mfa.arity)
    }
}

impl TraceFlags {
    /// `[local]`.
    pub const LOCAL: TraceFlags = TraceFlags {
        local: true,
        call_count: false,
    };
    /// `[call_count]`.
    pub const CALL_COUNT: TraceFlags = TraceFlags {
        local: false,
        call_count: true,
    };
    /// `[local, call_count]`.
    pub const LOCAL_AND_COUNT: TraceFlags = TraceFlags {
        local: true,
        call_count: true,
    };

    /// The flags this subset accepts, in the order error messages list them.
    const NAMES: [&'static str; 2] = ["local", "call_count"];

    /// Validate the operation against the flags as `erlang:trace_pattern/3` does.
    pub fn check(&self, op: PatternOp) -> Result<(), PatternError> {
        // `pause`/`restart` with `local` is accepted, as ERTS does: local trace is set as by
        // `true`, and the counters get pause/restart (docs/deviations.md).
        check_flags(FlagSet::from(*self), op, &Self::NAMES)
    }

    /// Parse an Erlang-style flag list such as `[local, call_count]`.
    pub fn parse(input: &str) -> Result<TraceFlags, PatternError> {
        let f = parse_flags(input, &Self::NAMES)?;
        Ok(TraceFlags {
            local: f.local,
            call_count: f.call_count,
        })
    }
}

/// The full flag list with the profiling counters: `local`, `call_count`, `call_time`,
/// `call_memory`. [`TraceFlags`] is the subset the original engine took; it converts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlagSet {
    pub local: bool,
    pub call_count: bool,
    pub call_time: bool,
    pub call_memory: bool,
}

impl From<TraceFlags> for FlagSet {
    fn from(f: TraceFlags) -> FlagSet {
        FlagSet {
            local: f.local,
            call_count: f.call_count,
            call_time: false,
            call_memory: false,
        }
    }
}

impl FlagSet {
    /// No flag (the empty list; `FlagSet::default()` where a constant is needed).
    pub const NONE: FlagSet = FlagSet::of(false, false, false, false);
    /// Every flag: `[local, call_count, call_time, call_memory]`.
    pub const ALL: FlagSet = FlagSet::of(true, true, true, true);
    pub const LOCAL: FlagSet = FlagSet::of(true, false, false, false);
    pub const CALL_COUNT: FlagSet = FlagSet::of(false, true, false, false);
    pub const CALL_TIME: FlagSet = FlagSet::of(false, false, true, false);
    pub const CALL_MEMORY: FlagSet = FlagSet::of(false, false, false, true);

    /// The flag list with `local`, `call_count`, `call_time`, `call_memory` as given.
    pub const fn of(local: bool, call_count: bool, call_time: bool, call_memory: bool) -> FlagSet {
        FlagSet {
            local,
            call_count,
            call_time,
            call_memory,
        }
    }

    /// Any counter flag?
    pub fn counters(&self) -> bool {
        self.call_count || self.call_time || self.call_memory
    }

    /// Every flag, in the order error messages list them.
    const NAMES: [&'static str; 4] = ["local", "call_count", "call_time", "call_memory"];

    /// Validate against the operation as `erlang:trace_pattern/3` does.
    pub fn check(&self, op: PatternOp) -> Result<(), PatternError> {
        // As ERTS: `pause`/`restart` with `local` sets local trace (as `true`) and applies to
        // the counters only.
        check_flags(*self, op, &Self::NAMES)
    }

    /// Parse an Erlang-style flag list such as `[call_time, call_memory]`.
    pub fn parse(input: &str) -> Result<FlagSet, PatternError> {
        parse_flags(input, &Self::NAMES)
    }
}

/// The check shared by [`TraceFlags::check`] and [`FlagSet::check`]: at least one flag is set.
/// `names` are the flags the caller accepts (for the message). Every operation is accepted.
fn check_flags(f: FlagSet, _op: PatternOp, names: &[&str]) -> Result<(), PatternError> {
    if f.local || f.counters() {
        return Ok(());
    }
    let (last, rest) = names.split_last().expect("at least one flag name");
    Err(PatternError::BadArg(format!(
        "no trace flag given (expected {} and/or {last})",
        rest.join(", ")
    )))
}

/// Parse an Erlang-style flag list (`[local, call_count]`), accepting only the flags in `names`
/// (a subset of [`FlagSet::NAMES`]). An error names the bad word and its 1-based column.
fn parse_flags(input: &str, names: &[&str]) -> Result<FlagSet, PatternError> {
    let t = input.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .ok_or_else(|| PatternError::Syntax {
            input: input.to_string(),
            column: 1,
            message: "expected a list [flag, ...]".into(),
        })?;
    let mut f = FlagSet::default();
    if inner.trim().is_empty() {
        return Ok(f); // `[]`
    }
    let mut col = input.len() - input.trim_start().len() + 2;
    for part in inner.split(',') {
        let w = part.trim();
        match w {
            "local" if names.contains(&w) => f.local = true,
            "call_count" if names.contains(&w) => f.call_count = true,
            "call_time" if names.contains(&w) => f.call_time = true,
            "call_memory" if names.contains(&w) => f.call_memory = true,
            _ => {
                return Err(PatternError::Syntax {
                    input: input.to_string(),
                    column: col + (part.len() - part.trim_start().len()),
                    message: format!(
                        "unknown or unsupported trace flag {w:?} (supported: {})",
                        names.join(", ")
                    ),
                })
            }
        }
        col += part.len() + 1;
    }
    Ok(f)
}
