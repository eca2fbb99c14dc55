//! The trace token, its components and the serial update rules.
//!
//! The rules are free functions over [`Counters`] so that the reference node ([`crate::node`]) and
//! the stateright model ([`crate::model`]) run the same code, including its mutants.

use std::fmt;

/// A process identifier: the index of the process on its node, in spawn order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pid(pub u32);

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<0.{}.0>", self.0)
    }
}

/// The counter limit the manual names: `curr_cnt` is kept in 27 bits.
pub const COUNTER_BITS: u32 = 27;
/// The largest counter value; an update that would go past it is refused
/// ([`SeqTraceError::CounterLimit`]).
pub const COUNTER_MAX: u32 = (1 << COUNTER_BITS) - 1;

/// A trace token's label. Any term since OTP 21; we keep integers and atoms.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    Int(i64),
    Atom(String),
}

/// `Display` for an enum whose every variant wraps one displayable value: the value as it shows.
macro_rules! display_wrapped {
    ($ty:ident: $($variant:ident),+) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $($ty::$variant(v) => write!(f, "{v}"),)+
                }
            }
        }
    };
}

display_wrapped!(Label: Int, Atom);

/// One token flag. The discriminants are the bits ERTS uses in the token's flag word
/// (observed through `get_token/0` on OTP 25: send|receive|print = 7, print|timestamp|monotonic = 44).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flag {
    Send = 1,
    Receive = 2,
    Print = 4,
    Timestamp = 8,
    StrictMonotonicTimestamp = 16,
    MonotonicTimestamp = 32,
}

impl Flag {
    pub const ALL: [Flag; 6] = [
        Flag::Send,
        Flag::Receive,
        Flag::Print,
        Flag::Timestamp,
        Flag::StrictMonotonicTimestamp,
        Flag::MonotonicTimestamp,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Flag::Send => "send",
            Flag::Receive => "receive",
            Flag::Print => "print",
            Flag::Timestamp => "timestamp",
            Flag::StrictMonotonicTimestamp => "strict_monotonic_timestamp",
            Flag::MonotonicTimestamp => "monotonic_timestamp",
        }
    }
}

/// The flag word of a token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Flags(pub u8);

impl Flags {
    pub fn has(self, f: Flag) -> bool {
        self.0 & f as u8 != 0
    }
    pub fn set(&mut self, f: Flag, on: bool) {
        if on {
            self.0 |= f as u8;
        } else {
            self.0 &= !(f as u8);
        }
    }
    pub fn with(mut self, f: Flag) -> Self {
        self.set(f, true);
        self
    }
    /// Which timestamp an event gets. The manual: `timestamp` beats `strict_monotonic_timestamp`,
    /// which beats `monotonic_timestamp`; all three are remembered, so clearing the winner lets
    /// the next one show.
    pub fn timestamp_kind(self) -> Option<TimestampKind> {
        if self.has(Flag::Timestamp) {
            Some(TimestampKind::Now)
        } else if self.has(Flag::StrictMonotonicTimestamp) {
            Some(TimestampKind::StrictMonotonic)
        } else if self.has(Flag::MonotonicTimestamp) {
            Some(TimestampKind::Monotonic)
        } else {
            None
        }
    }
}

/// The timestamp formats: `{Mega, Sec, Micro}`, `{MonotonicNs, UniqueInteger}`, `MonotonicNs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimestampKind {
    Now,
    StrictMonotonic,
    Monotonic,
}

impl TimestampKind {
    /// The name the differential driver prints.
    pub fn name(self) -> &'static str {
        match self {
            TimestampKind::Now => "now",
            TimestampKind::StrictMonotonic => "strict",
            TimestampKind::Monotonic => "mono",
        }
    }
}

/// A token's serial `{Previous, Current}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Serial {
    pub prev: u32,
    pub curr: u32,
}

impl fmt::Display for Serial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{},{}}}", self.prev, self.curr)
    }
}

/// A non-empty trace token: `{Label, Flags, Serial, From}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token {
    pub label: Label,
    pub flags: Flags,
    pub serial: Serial,
    pub from: Pid,
}

impl Token {
    /// The token `set_token/2` creates in a process that has none: label 0, no flags, serial
    /// `{prev_cnt, 0}` (OTP keeps the process's `prev_cnt` as the token's Previous).
    pub fn fresh(owner: Pid, prev_cnt: u32) -> Token {
        Token {
            label: Label::Int(0),
            flags: Flags::default(),
            serial: Serial {
                prev: prev_cnt,
                curr: 0,
            },
            from: owner,
        }
    }
}

/// A component name for `set_token/2` and `get_token/1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    Label,
    Serial,
    Flag(Flag),
}

impl Component {
    /// Parse a component name as the Erlang atom would be written (`'receive'` or `receive`).
    pub fn parse(name: &str) -> Result<Component, SeqTraceError> {
        let bare = name.trim_matches('\'');
        match bare {
            "label" => Ok(Component::Label),
            "serial" => Ok(Component::Serial),
            _ => Flag::ALL
                .iter()
                .find(|f| f.name() == bare)
                .map(|f| Component::Flag(*f))
                .ok_or_else(|| SeqTraceError::BadComponent(name.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Component::Label => "label",
            Component::Serial => "serial",
            Component::Flag(f) => f.name(),
        }
    }
}

/// A component's value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Label(Label),
    Serial(Serial),
    Bool(bool),
}

display_wrapped!(Value: Label, Serial, Bool);

/// Everything the reference refuses, with what and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeqTraceError {
    /// `set_token/2` or `get_token/1` with a name that is not a component (OTP: `badarg`).
    BadComponent(String),
    /// A value of the wrong kind for its component (OTP: `badarg`).
    BadValue {
        component: &'static str,
        value: String,
    },
    /// `print/2` with a label that is not an integer (OTP: `badarg`).
    BadPrintLabel(Label),
    /// A serial or counter past the 27-bit limit.
    CounterLimit { pid: Pid, counter: u64 },
    /// An operation named a process that does not exist.
    NoSuchProcess(Pid),
    /// An operation named a process that has exited.
    DeadProcess(Pid),
    /// A receive found no matching message.
    NoMessage { pid: Pid, wanted: String },
    /// `set_system_tracer/1` with a process that does not exist or has exited.
    BadTracer(Pid),
    /// The node already has this many processes.
    ProcessLimit(usize),
}

impl fmt::Display for SeqTraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeqTraceError::BadComponent(c) => write!(
                f,
                "badarg: {c:?} is not a trace token component (label, serial, send, 'receive', \
                 print, timestamp, monotonic_timestamp, strict_monotonic_timestamp)"
            ),
            SeqTraceError::BadValue { component, value } => {
                write!(
                    f,
                    "badarg: {value:?} is not a valid value for component {component}"
                )
            }
            SeqTraceError::BadPrintLabel(l) => {
                write!(f, "badarg: print/2 needs an integer label, got {l}")
            }
            SeqTraceError::CounterLimit { pid, counter } => write!(
                f,
                "serial counter of {pid} would reach {counter}, past the {COUNTER_BITS}-bit limit; \
                 call reset_trace/0"
            ),
            SeqTraceError::NoSuchProcess(p) => write!(f, "no process {p}"),
            SeqTraceError::DeadProcess(p) => write!(f, "process {p} has exited"),
            SeqTraceError::NoMessage { pid, wanted } => {
                write!(
                    f,
                    "process {pid} has no message matching {wanted} in its queue"
                )
            }
            SeqTraceError::ProcessLimit(n) => {
                write!(f, "system_limit: the node has {n} processes")
            }
            SeqTraceError::BadTracer(p) => {
                write!(
                    f,
                    "badarg: system tracer {p} is not an existing local process"
                )
            }
        }
    }
}

impl std::error::Error for SeqTraceError {}

/// The per-process counters `prev_cnt` and `curr_cnt` of the manual.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Counters {
    pub prev: u32,
    pub curr: u32,
}

/// Deliberately broken variants of the serial rules. Each is caught by the stateright model
/// (`tests/model.rs`) and listed in docs/seq_trace.md.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mutant {
    #[default]
    None,
    /// On receive, `curr_cnt := tcurr` instead of `max(curr_cnt, tcurr)`.
    ForgetMax,
    /// On send/print, attach the old `curr_cnt` and increment afterwards.
    IncrementAfterAttach,
    /// On receiving a message with an empty token, keep the process's token.
    KeepTokenOnEmptyReceive,
    /// `reset_trace/0` empties the processes' tokens but not those of queued messages.
    ResetSkipsQueues,
    /// On receive, leave `prev_cnt` alone instead of `prev_cnt := tcurr`.
    SkipPrevUpdate,
    /// The receive event shows the receiver's counters after the update instead of the serial
    /// the message carried.
    ReceiveReportsCounters,
}

impl Mutant {
    pub const ALL: [Mutant; 6] = [
        Mutant::ForgetMax,
        Mutant::IncrementAfterAttach,
        Mutant::KeepTokenOnEmptyReceive,
        Mutant::ResetSkipsQueues,
        Mutant::SkipPrevUpdate,
        Mutant::ReceiveReportsCounters,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutant::None => "none",
            Mutant::ForgetMax => "forget-max",
            Mutant::IncrementAfterAttach => "increment-after-attach",
            Mutant::KeepTokenOnEmptyReceive => "keep-token-on-empty-receive",
            Mutant::ResetSkipsQueues => "reset-skips-queues",
            Mutant::SkipPrevUpdate => "skip-prev-update",
            Mutant::ReceiveReportsCounters => "receive-reports-counters",
        }
    }
}

/// Send and print (manual: "about to pass along information", and `print` "is the same"):
/// `curr_cnt := curr_cnt + 1; tprev := prev_cnt; tcurr := curr_cnt`. Returns the serial the
/// outgoing token carries.
pub fn on_send(c: &mut Counters, mutant: Mutant) -> Result<Serial, u64> {
    let next = u64::from(c.curr) + 1;
    if next > u64::from(COUNTER_MAX) {
        return Err(next);
    }
    // Step S1: increment first, then attach: the attached Current is strictly larger than every
    // serial this process attached or received before.
    let attached = match mutant {
        Mutant::IncrementAfterAttach => Serial {
            prev: c.prev,
            curr: c.curr,
        },
        _ => Serial {
            prev: c.prev,
            curr: next as u32,
        },
    };
    c.curr = next as u32;
    Ok(attached)
}

/// Receive of a non-empty token with serial `t`:
/// `if curr_cnt < tcurr then curr_cnt := tcurr; prev_cnt := tcurr`.
pub fn on_receive(c: &mut Counters, t: Serial, mutant: Mutant) {
    match mutant {
        Mutant::ForgetMax => c.curr = t.curr,
        _ => {
            if c.curr < t.curr {
                c.curr = t.curr;
            }
        }
    }
    if mutant != Mutant::SkipPrevUpdate {
        c.prev = t.curr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_names_parse_and_unknown_names_are_refused() {
        assert_eq!(Component::parse("label"), Ok(Component::Label));
        assert_eq!(
            Component::parse("'receive'"),
            Ok(Component::Flag(Flag::Receive))
        );
        assert_eq!(
            Component::parse("monotonic_timestamp"),
            Ok(Component::Flag(Flag::MonotonicTimestamp))
        );
        let e = Component::parse("bogus").unwrap_err();
        assert_eq!(e, SeqTraceError::BadComponent("bogus".into()));
        assert!(e.to_string().contains("not a trace token component"));
    }

    #[test]
    fn timestamp_precedence_is_timestamp_then_strict_then_monotonic() {
        let mut f = Flags::default();
        assert_eq!(f.timestamp_kind(), None);
        f.set(Flag::MonotonicTimestamp, true);
        assert_eq!(f.timestamp_kind(), Some(TimestampKind::Monotonic));
        f.set(Flag::StrictMonotonicTimestamp, true);
        assert_eq!(f.timestamp_kind(), Some(TimestampKind::StrictMonotonic));
        f.set(Flag::Timestamp, true);
        assert_eq!(f.timestamp_kind(), Some(TimestampKind::Now));
        // All are remembered: disabling the winner uncovers the next one.
        f.set(Flag::Timestamp, false);
        assert_eq!(f.timestamp_kind(), Some(TimestampKind::StrictMonotonic));
        f.set(Flag::StrictMonotonicTimestamp, false);
        assert_eq!(f.timestamp_kind(), Some(TimestampKind::Monotonic));
    }

    #[test]
    fn send_increments_before_attaching() {
        let mut c = Counters { prev: 3, curr: 7 };
        assert_eq!(
            on_send(&mut c, Mutant::None),
            Ok(Serial { prev: 3, curr: 8 })
        );
        assert_eq!(c, Counters { prev: 3, curr: 8 });
    }

    #[test]
    fn receive_takes_the_max_and_sets_prev_to_tcurr() {
        let mut c = Counters { prev: 1, curr: 9 };
        on_receive(&mut c, Serial { prev: 2, curr: 4 }, Mutant::None);
        assert_eq!(c, Counters { prev: 4, curr: 9 });
        on_receive(&mut c, Serial { prev: 2, curr: 12 }, Mutant::None);
        assert_eq!(c, Counters { prev: 12, curr: 12 });
    }

    #[test]
    fn counter_limit_is_27_bits() {
        assert_eq!(COUNTER_MAX, 134_217_727);
        let mut c = Counters {
            prev: 0,
            curr: COUNTER_MAX,
        };
        assert_eq!(on_send(&mut c, Mutant::None), Err(1 << 27));
        assert_eq!(
            c.curr, COUNTER_MAX,
            "a refused send leaves the counters alone"
        );
    }
}
