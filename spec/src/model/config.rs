//! What a model is parameterised by: schedulers, functions, sessions, the stager's script, and
//! (optionally) one mutant. The script is a list of [`StagerOp`]s, an enum so other operations
//! (the trace_info collection) can be added next to `trace_pattern`.

use bpspec_reference::Mutant;
use std::fmt;

/// Breakpoint flag bits of the model's halves (a subset of ERTS's, renumbered to fit a byte).
pub mod bits {
    /// `ERTS_BPF_LOCAL_TRACE`.
    pub const LOCAL: u8 = 0x1;
    /// `ERTS_BPF_COUNT`: a counter exists.
    pub const COUNT: u8 = 0x2;
    /// `ERTS_BPF_COUNT_ACTIVE`: the counter runs.
    pub const COUNT_ACTIVE: u8 = 0x4;
}

/// The operation of a `trace_pattern` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatternKind {
    /// `true`: add or update.
    True,
    /// `false`: remove.
    False,
    /// `pause` (call_count only).
    Pause,
    /// `restart` (call_count only).
    Restart,
}

impl PatternKind {
    pub fn name(self) -> &'static str {
        match self {
            PatternKind::True => "true",
            PatternKind::False => "false",
            PatternKind::Pause => "pause",
            PatternKind::Restart => "restart",
        }
    }
}

/// One step of the stager's script.
///
/// To add an operation (the trace_info collection, say): add a variant here, give it its
/// sequence of phases in `step.rs` (`next_phase`, `stager_step`) and its narration, and extend
/// `Config::max_nodes` if it allocates; the schedulers' side changes only if the operation adds
/// something a hit reads. The `let StagerOp::TracePattern { .. } = ...` destructurings in
/// `step.rs` and `config.rs` then fail to compile until the new variant is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StagerOp {
    /// `erlang:trace_pattern` in `session` on the functions of `funcs` (a bit mask) with the
    /// trace flags `flags` ([`bits::LOCAL`] and/or [`bits::COUNT`] for call_count).
    TracePattern {
        session: u8,
        funcs: u8,
        kind: PatternKind,
        flags: u8,
    },
}

impl StagerOp {
    /// `trace_pattern(session, funcs, kind, flags)`.
    pub const fn tp(session: u8, funcs: u8, kind: PatternKind, flags: u8) -> StagerOp {
        StagerOp::TracePattern {
            session,
            funcs,
            kind,
            flags,
        }
    }
}

impl fmt::Display for StagerOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StagerOp::TracePattern {
                session,
                funcs,
                kind,
                flags,
            } => {
                let mut fl = Vec::new();
                if flags & bits::LOCAL != 0 {
                    fl.push("local");
                }
                if flags & bits::COUNT != 0 {
                    fl.push("call_count");
                }
                let fs: Vec<String> = (0..8)
                    .filter(|i| funcs & (1 << i) != 0)
                    .map(|i| format!("f{i}"))
                    .collect();
                write!(
                    f,
                    "trace_pattern(session {session}, {{{}}}, {}, [{}])",
                    fs.join(","),
                    kind.name(),
                    fl.join(",")
                )
            }
        }
    }
}

/// A broken variant of the protocol: the engine's mutants (same names, same meaning) and two
/// that only the spec has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpecMutant {
    /// One of the engine's mutants (`reference/src/mutant.rs`).
    Engine(Mutant),
    /// Uninstall never restores the original instruction (breaks "patched iff active flag").
    SkipUninstall,
    /// The wait does not count sleeping schedulers: a scheduler asleep forever blocks the stager
    /// (breaks liveness only).
    WaitOnSleepers,
}

impl SpecMutant {
    /// Every mutant: the engine's ten, then the spec-only ones.
    pub fn all() -> Vec<SpecMutant> {
        let mut v: Vec<SpecMutant> = Mutant::ALL.into_iter().map(SpecMutant::Engine).collect();
        v.push(SpecMutant::SkipUninstall);
        v.push(SpecMutant::WaitOnSleepers);
        v
    }

    pub fn name(self) -> &'static str {
        match self {
            SpecMutant::Engine(m) => m.name(),
            SpecMutant::SkipUninstall => "skip-uninstall",
            SpecMutant::WaitOnSleepers => "wait-on-sleepers",
        }
    }

    pub fn from_name(s: &str) -> Option<SpecMutant> {
        SpecMutant::all().into_iter().find(|m| m.name() == s)
    }
}

impl fmt::Display for SpecMutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A model's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub schedulers: u8,
    pub functions: u8,
    pub sessions: u8,
    pub script: Vec<StagerOp>,
    pub mutant: Option<SpecMutant>,
}

impl Config {
    /// Is `m` the active mutant?
    pub fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(SpecMutant::Engine(m))
    }

    /// Upper bound on nodes ever allocated (each installing op may add one per function).
    pub fn max_nodes(&self) -> usize {
        self.script
            .iter()
            .map(|op| match *op {
                StagerOp::TracePattern { funcs, kind, .. } => {
                    if kind == PatternKind::False {
                        0
                    } else {
                        funcs.count_ones() as usize
                    }
                }
            })
            .sum()
    }

    /// One line: "2 schedulers x 2 functions x 1 session, 5 ops".
    pub fn params(&self) -> String {
        format!(
            "{} scheduler{} x {} function{} x {} session{}, {} stager ops",
            self.schedulers,
            if self.schedulers == 1 { "" } else { "s" },
            self.functions,
            if self.functions == 1 { "" } else { "s" },
            self.sessions,
            if self.sessions == 1 { "" } else { "s" },
            self.script.len()
        )
    }

    pub fn with_mutant(mut self, m: Option<SpecMutant>) -> Config {
        self.mutant = m;
        self
    }

    /// Validate the limits the state encoding relies on.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=4).contains(&self.schedulers) {
            return Err(format!("schedulers {} not in 1..=4", self.schedulers));
        }
        if !(1..=4).contains(&self.functions) {
            return Err(format!("functions {} not in 1..=4", self.functions));
        }
        if !(1..=3).contains(&self.sessions) {
            return Err(format!("sessions {} not in 1..=3", self.sessions));
        }
        for (i, op) in self.script.iter().enumerate() {
            let StagerOp::TracePattern { session, funcs, .. } = *op;
            if session >= self.sessions || funcs == 0 || funcs >> self.functions != 0 {
                return Err(format!(
                    "script op {i} ({op}) outside the model's parameters"
                ));
            }
        }
        if 2 * self.functions as usize + 1 + self.max_nodes() > 64 {
            return Err("too many memory locations for the 64-bit dirty mask".into());
        }
        Ok(())
    }
}
