//! A stateright actor model of sequential tracing: does sorting a trace by its serials respect
//! causality?
//!
//! What it models: `procs` Erlang processes on one node, actors on an unordered,
//! non-duplicating network (any queued message can be matched next, as a selective receive
//! can). Process 0 starts a trace (token with send, 'receive' and print set), prints, and sends
//! one message to every other process. A process that receives a message prints and, while the
//! message's hop budget lasts, forwards it to the next process. The last process also sends one
//! message with an empty token to process 1. With `reset` on, process 0 may at any moment call
//! `reset_trace/0`, then start a second trace with one more message. With `clear_send` on, a
//! process that receives a message at the end of its hop budget then calls `set_token([])`
//! (its counters stay) and sends one message, now without a token, to the next process: a
//! causal link that carries no serial. Serial updates are
//! [`crate::token::on_send`] / [`crate::token::on_receive`], the reference's own code, with the
//! configured [`Mutant`].
//!
//! `reset_trace/0` is node-global in ERTS; an actor model has no global step, so the model
//! delivers it as a signal to every process and lets a process that receives a message from
//! after the reset apply the reset first (it is causally before the message). A message from
//! before the reset that is received after it loses its token, as the manual's "tokens in
//! message queues are set to empty" requires.
//!
//! Ghost state: two vector clocks per process, carried by messages and stamped on every event:
//! `vc` joins at every receive (happened-before over all messages, `→all`) and `tvc` joins only
//! at a receive whose message carries a token of the trace (`→tok`, the order the serials
//! promise; docs/seq_trace.md §2); the epoch (number of resets) each token was created
//! in; the serial each send event had, carried to the receive event; a flag set if `curr_cnt`
//! ever went down; the token presence the manual prescribes after the last transfer.
//!
//! Checked (stateright 0.31 BFS, one thread, `--release`, 2-core machine shared with other
//! jobs; the tests print these figures on every run):
//!
//! | parameters | where | states | unique states | max depth | time |
//! |---|---|---|---|---|---|
//! | 3 processes, 2 hops, reset | `make test` | 11,101 | 4,927 | 12 | 0.05 s |
//! | 3 processes, 2 hops, reset, clear_send | `make test` | 35,462 | 14,460 | 14 | 0.7 s |
//! | 4 processes, 2 hops, reset | | 419,641 | 139,949 | 16 | 1.6 s |
//! | 4 processes, 3 hops, reset | `make check-seqtrace` | 5,587,395 | 1,852,597 | 19 | 31.7 s |
//!
//! Every always-property holds for the baseline at each bound, every sometimes-property is
//! reached, and each mutant in [`ALWAYS`] is caught at each bound.

use std::borrow::Cow;

use stateright::actor::{model_timeout, Actor, ActorModel, ActorModelState, Id, Network, Out};
use stateright::Expectation;

use crate::node::EventKind;
use crate::token::{on_receive, on_send, Counters, Mutant, Serial};

/// Largest number of processes the model supports (vector clocks are fixed arrays).
pub const MAX_PROCS: usize = 4;

pub type VClock = [u8; MAX_PROCS];

/// Model parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelCfg {
    pub procs: usize,
    /// How many times a message is forwarded.
    pub hops: u8,
    /// Whether process 0 may call reset_trace/0.
    pub reset: bool,
    /// Whether a process at the end of its hop budget clears its token and sends once more.
    pub clear_send: bool,
    pub mutant: Mutant,
}

impl ModelCfg {
    /// What `make test` checks.
    pub fn small() -> ModelCfg {
        ModelCfg {
            procs: 3,
            hops: 2,
            reset: true,
            clear_send: false,
            mutant: Mutant::None,
        }
    }

    /// The clear-then-send case: [`ModelCfg::small`] plus `clear_send`.
    pub fn clear_send() -> ModelCfg {
        ModelCfg {
            clear_send: true,
            ..ModelCfg::small()
        }
    }
}

/// A token in the model: all flags set, one label; `epoch` is ghost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MTok {
    pub serial: Serial,
    pub epoch: u8,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PMsg {
    User {
        token: Option<MTok>,
        hops: u8,
        /// Ghost: the sender's vector clock at the send.
        vc: VClock,
        /// Ghost: the sender's token-chain clock at the send.
        tvc: VClock,
        /// Ghost: the sender's epoch at the send.
        epoch: u8,
        /// Ghost: the serial the send event recorded.
        sent: Option<Serial>,
    },
    Reset {
        epoch: u8,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PTimer {
    Reset,
}

/// One traced event with its ghost data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MEvent {
    pub proc: u8,
    pub kind: EventKind,
    pub serial: Serial,
    pub vc: VClock,
    /// Token-chain clock: joined only through messages that carry a token.
    pub tvc: VClock,
    /// The epoch of the token the event carries.
    pub tok_epoch: u8,
    /// The emitting process's epoch.
    pub proc_epoch: u8,
    /// For receives: the serial its send event had.
    pub sent: Option<Serial>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PState {
    pub token: Option<MTok>,
    pub counters: Counters,
    pub epoch: u8,
    pub vc: VClock,
    pub tvc: VClock,
    pub events: Vec<MEvent>,
    /// Ghost: curr_cnt went down at some step other than a reset.
    pub decreased: bool,
    /// Ghost: whether the process should have a token (manual: the last transfer decides).
    pub expect_token: bool,
    /// Ghost: a receive found curr_cnt above the message's Current (two branches met).
    pub met_lower: bool,
    /// Ghost: a message with an empty token reached the process while it had a token.
    pub emptied: bool,
    /// Ghost: the process has done its clear-then-send (at most once, to bound the model).
    pub cleared: bool,
}

#[derive(Clone, Debug)]
pub struct SeqProc {
    pub cfg: ModelCfg,
}

impl SeqProc {
    fn me(id: Id) -> usize {
        usize::from(id)
    }

    fn tick(s: &mut PState, me: usize) {
        s.vc[me] = s.vc[me].saturating_add(1);
        s.tvc[me] = s.tvc[me].saturating_add(1);
    }

    fn record(
        &self,
        s: &mut PState,
        me: usize,
        kind: EventKind,
        serial: Serial,
        tok: MTok,
        sent: Option<Serial>,
    ) {
        s.events.push(MEvent {
            proc: me as u8,
            kind,
            serial,
            vc: s.vc,
            tvc: s.tvc,
            tok_epoch: tok.epoch,
            proc_epoch: s.epoch,
            sent,
        });
    }

    /// Send (or forward) one message; returns it.
    fn send(&self, s: &mut PState, me: usize, hops: u8) -> PMsg {
        Self::tick(s, me);
        let mut sent = None;
        let token = match s.token {
            None => None,
            Some(mut t) => {
                let serial =
                    on_send(&mut s.counters, self.cfg.mutant).expect("model counters stay small");
                t.serial = serial;
                s.token = Some(t);
                self.record(s, me, EventKind::Send, serial, t, None);
                sent = Some(serial);
                Some(t)
            }
        };
        PMsg::User {
            token,
            hops,
            vc: s.vc,
            tvc: s.tvc,
            epoch: s.epoch,
            sent,
        }
    }

    fn print(&self, s: &mut PState, me: usize) {
        if let Some(mut t) = s.token {
            Self::tick(s, me);
            let serial =
                on_send(&mut s.counters, self.cfg.mutant).expect("model counters stay small");
            t.serial = serial;
            s.token = Some(t);
            self.record(s, me, EventKind::Print, serial, t, None);
        }
    }

    fn reset(&self, s: &mut PState, epoch: u8) {
        if epoch > s.epoch {
            s.epoch = epoch;
            s.token = None;
            s.counters = Counters::default();
            s.expect_token = false;
        }
    }

    fn start_trace(&self, s: &mut PState) {
        s.token = Some(MTok {
            serial: Serial {
                prev: s.counters.prev,
                curr: s.counters.curr,
            },
            epoch: s.epoch,
        });
        s.expect_token = true;
    }
}

impl Actor for SeqProc {
    type Msg = PMsg;
    type Timer = PTimer;
    type State = PState;
    type Storage = ();
    type Random = ();

    fn on_start(&self, id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> PState {
        let me = Self::me(id);
        let n = self.cfg.procs;
        let mut s = PState {
            token: None,
            counters: Counters::default(),
            epoch: 0,
            vc: [0; MAX_PROCS],
            tvc: [0; MAX_PROCS],
            events: Vec::new(),
            decreased: false,
            expect_token: false,
            met_lower: false,
            emptied: false,
            cleared: false,
        };
        if me == 0 {
            self.start_trace(&mut s);
            self.print(&mut s, me);
            for to in 1..n {
                let m = self.send(&mut s, me, self.cfg.hops);
                o.send(Id::from(to), m);
            }
            if self.cfg.reset {
                o.set_timer(PTimer::Reset, model_timeout());
            }
        } else if me == n - 1 && n > 2 {
            // An untraced message into the trace: receiving it must empty process 1's token.
            let m = self.send(&mut s, me, 0);
            o.send(Id::from(1), m);
        }
        s
    }

    fn on_msg(&self, id: Id, state: &mut Cow<PState>, _src: Id, msg: PMsg, o: &mut Out<Self>) {
        let me = Self::me(id);
        let n = self.cfg.procs;
        let s = state.to_mut();
        match msg {
            PMsg::Reset { epoch } => self.reset(s, epoch),
            PMsg::User {
                token,
                hops,
                vc,
                tvc,
                epoch,
                sent,
            } => {
                // A message from after a reset this process has not seen: the reset comes first.
                self.reset(s, epoch);
                // A message from before a reset the process has seen lost its token in the queue.
                let token = if epoch < s.epoch && self.cfg.mutant != Mutant::ResetSkipsQueues {
                    None
                } else {
                    token
                };
                for (mine, theirs) in s.vc.iter_mut().zip(vc.iter()) {
                    *mine = (*mine).max(*theirs);
                }
                if token.is_some() {
                    for (mine, theirs) in s.tvc.iter_mut().zip(tvc.iter()) {
                        *mine = (*mine).max(*theirs);
                    }
                }
                Self::tick(s, me);
                match token {
                    None => {
                        if s.token.is_some() {
                            s.emptied = true;
                        }
                        if self.cfg.mutant != Mutant::KeepTokenOnEmptyReceive {
                            s.token = None;
                        }
                        s.expect_token = false;
                    }
                    Some(t) => {
                        let before = s.counters.curr;
                        if before > t.serial.curr {
                            s.met_lower = true;
                        }
                        on_receive(&mut s.counters, t.serial, self.cfg.mutant);
                        if s.counters.curr < before {
                            s.decreased = true;
                        }
                        s.token = Some(t);
                        s.expect_token = true;
                        let shown = if self.cfg.mutant == Mutant::ReceiveReportsCounters {
                            Serial {
                                prev: s.counters.prev,
                                curr: s.counters.curr,
                            }
                        } else {
                            t.serial
                        };
                        self.record(s, me, EventKind::Receive, shown, t, sent);
                    }
                }
                self.print(s, me);
                if hops > 0 {
                    let m = self.send(s, me, hops - 1);
                    o.send(Id::from((me + 1) % n), m);
                } else if self.cfg.clear_send && s.token.is_some() && !s.cleared {
                    // set_token([]): the token goes, the counters stay; then one more send,
                    // which carries no token but does carry causality.
                    s.cleared = true;
                    s.token = None;
                    s.expect_token = false;
                    let m = self.send(s, me, 0);
                    o.send(Id::from((me + 1) % n), m);
                }
            }
        }
    }

    fn on_timeout(&self, id: Id, state: &mut Cow<PState>, _timer: &PTimer, o: &mut Out<Self>) {
        let me = Self::me(id);
        let s = state.to_mut();
        let epoch = s.epoch + 1;
        self.reset(s, epoch);
        for to in 1..self.cfg.procs {
            o.send(Id::from(to), PMsg::Reset { epoch });
        }
        // A second trace after the reset.
        self.start_trace(s);
        let m = self.send(s, me, 0);
        o.send(Id::from(1), m);
    }
}

pub type SeqModel = ActorModel<SeqProc, ModelCfg, ()>;
pub type SeqState = ActorModelState<SeqProc, ()>;

/// The merge rule: by Current, and for equal Current the send (or print) before the receive.
pub fn merge_key(e: &MEvent) -> (u32, bool) {
    (e.serial.curr, e.kind == EventKind::Receive)
}

/// Vector-clock order over every message: `a →all b`.
pub fn happened_before(a: &MEvent, b: &MEvent) -> bool {
    a.vc != b.vc && a.vc.iter().zip(b.vc.iter()).all(|(x, y)| x <= y)
}

/// Token-chain order: `a →tok b`, happened-before through messages that carry a token only.
pub fn token_before(a: &MEvent, b: &MEvent) -> bool {
    a.tvc != b.tvc && a.tvc.iter().zip(b.tvc.iter()).all(|(x, y)| x <= y)
}

fn all_events(s: &SeqState) -> impl Iterator<Item = &MEvent> {
    s.actor_states.iter().flat_map(|a| a.events.iter())
}

/// Pairs (e, f) of one trace (same token epoch) with `e →tok f`.
fn causal_pairs(s: &SeqState) -> impl Iterator<Item = (&MEvent, &MEvent)> {
    all_events(s).flat_map(move |e| {
        all_events(s).filter_map(move |f| {
            (e.tok_epoch == f.tok_epoch && token_before(e, f)).then_some((e, f))
        })
    })
}

/// Pairs (e, f) of one trace with `e →all f` but not `e →tok f`: ordered only through a
/// message that carried no token.
fn untraced_pairs(s: &SeqState) -> impl Iterator<Item = (&MEvent, &MEvent)> {
    all_events(s).flat_map(move |e| {
        all_events(s).filter_map(move |f| {
            (e.tok_epoch == f.tok_epoch && happened_before(e, f) && !token_before(e, f))
                .then_some((e, f))
        })
    })
}

// ---- properties ------------------------------------------------------------------------------

pub const P_MERGE: &str =
    "merge order never puts a send or print before an event that happened before it through token-carrying transfers";
pub const P_RECEIVE_SERIAL: &str = "every receive event carries the serial its send had";
pub const P_MONOTONE: &str = "curr_cnt never decreases in a process";
pub const P_RESET: &str = "after reset_trace no event carries an old token";
pub const P_TOKEN: &str = "a receive sets the process token, empty or not";
pub const P_PREV: &str = "a send's or print's Previous is the Current of the last traced receive";
pub const S_MEET: &str = "two branches meet: a receive finds curr_cnt above the message's Current";
pub const S_EMPTY: &str = "a message with an empty token reaches a traced process";
pub const S_AFTER_RESET: &str = "an event of the trace started after a reset";
pub const S_RECEIVE: &str = "a receive event is traced";
pub const S_RECEIVE_EARLY: &str =
    "finding: a receive sorts before an event of its own process that happened before it";
/// Reached only with `clear_send`: why the merge order is promised for `→tok`, not `→all`.
pub const S_UNTRACED_LINK: &str =
    "finding: a send or print sorts before an event that happened before it through a message without a token";

fn untraced_link(_: &SeqModel, s: &SeqState) -> bool {
    untraced_pairs(s).any(|(e, f)| f.kind != EventKind::Receive && merge_key(f) <= merge_key(e))
}

fn merge_ok(_: &SeqModel, s: &SeqState) -> bool {
    causal_pairs(s).all(|(e, f)| f.kind == EventKind::Receive || merge_key(e) < merge_key(f))
}

fn receive_serial_ok(_: &SeqModel, s: &SeqState) -> bool {
    all_events(s).all(|e| e.kind != EventKind::Receive || e.sent == Some(e.serial))
}

fn monotone_ok(_: &SeqModel, s: &SeqState) -> bool {
    s.actor_states.iter().all(|a| !a.decreased)
}

fn reset_ok(_: &SeqModel, s: &SeqState) -> bool {
    all_events(s).all(|e| e.tok_epoch == e.proc_epoch)
}

fn token_ok(_: &SeqModel, s: &SeqState) -> bool {
    s.actor_states
        .iter()
        .all(|a| a.token.is_some() == a.expect_token)
}

fn prev_ok(_: &SeqModel, s: &SeqState) -> bool {
    s.actor_states.iter().all(|a| {
        let mut last = 0;
        let mut epoch = 0;
        a.events.iter().all(|e| {
            if e.proc_epoch != epoch {
                epoch = e.proc_epoch;
                last = 0;
            }
            match e.kind {
                EventKind::Receive => {
                    last = e.serial.curr;
                    true
                }
                _ => e.serial.prev == last,
            }
        })
    })
}

fn meet(_: &SeqModel, s: &SeqState) -> bool {
    s.actor_states.iter().any(|a| a.met_lower)
}

fn emptied(_: &SeqModel, s: &SeqState) -> bool {
    s.actor_states.iter().any(|a| a.emptied)
}

fn after_reset(_: &SeqModel, s: &SeqState) -> bool {
    all_events(s).any(|e| e.tok_epoch > 0)
}

fn receive_traced(_: &SeqModel, s: &SeqState) -> bool {
    all_events(s).any(|e| e.kind == EventKind::Receive)
}

fn receive_early(_: &SeqModel, s: &SeqState) -> bool {
    causal_pairs(s).any(|(e, f)| {
        f.kind == EventKind::Receive && e.proc == f.proc && merge_key(f) < merge_key(e)
    })
}

/// The always-properties, each with the mutant that is expected to break it.
pub const ALWAYS: [(&str, Mutant); 6] = [
    (P_MERGE, Mutant::IncrementAfterAttach),
    (P_RECEIVE_SERIAL, Mutant::ReceiveReportsCounters),
    (P_MONOTONE, Mutant::ForgetMax),
    (P_RESET, Mutant::ResetSkipsQueues),
    (P_TOKEN, Mutant::KeepTokenOnEmptyReceive),
    (P_PREV, Mutant::SkipPrevUpdate),
];

pub const SOMETIMES: [&str; 5] = [S_MEET, S_EMPTY, S_AFTER_RESET, S_RECEIVE, S_RECEIVE_EARLY];

/// The model with every property.
pub fn model(cfg: ModelCfg) -> SeqModel {
    assert!(
        (2..=MAX_PROCS).contains(&cfg.procs),
        "procs must be 2..={MAX_PROCS}"
    );
    ActorModel::new(cfg, ())
        .actors((0..cfg.procs).map(|_| SeqProc { cfg }))
        .init_network(Network::new_unordered_nonduplicating([]))
        .property(Expectation::Always, P_MERGE, merge_ok)
        .property(Expectation::Always, P_RECEIVE_SERIAL, receive_serial_ok)
        .property(Expectation::Always, P_MONOTONE, monotone_ok)
        .property(Expectation::Always, P_RESET, reset_ok)
        .property(Expectation::Always, P_TOKEN, token_ok)
        .property(Expectation::Always, P_PREV, prev_ok)
        .property(Expectation::Sometimes, S_MEET, meet)
        .property(Expectation::Sometimes, S_EMPTY, emptied)
        .property(Expectation::Sometimes, S_AFTER_RESET, after_reset)
        .property(Expectation::Sometimes, S_RECEIVE, receive_traced)
        .property(Expectation::Sometimes, S_RECEIVE_EARLY, receive_early)
        .property(Expectation::Sometimes, S_UNTRACED_LINK, untraced_link)
}
