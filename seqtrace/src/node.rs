//! The reference: one Erlang node's processes, their trace tokens and counters, message queues,
//! links and exit signals, spawns, and the system tracer.
//!
//! Every operation is a method on [`Node`] naming the calling process. Operations run one at a
//! time (the node is sequential); the interleaving is the caller's. Bad input returns
//! [`SeqTraceError`]; nothing panics on user input.

use std::collections::VecDeque;

use crate::token::{
    on_receive, on_send, Component, Counters, Flag, Label, Mutant, Pid, SeqTraceError, Serial,
    TimestampKind, Token, Value, COUNTER_MAX,
};

/// What a transfer carried, as far as the trace shows it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Msg {
    /// An ordinary message `{Tag}`.
    User(String),
    /// An exit signal turned into `{'EXIT', From, Reason}`.
    Exit { from: Pid, reason: String },
    /// The spawn request a parent sends its child.
    SpawnRequest,
    /// The reply the child sends back.
    SpawnReply,
    /// `print/1,2`'s TraceInfo.
    Info(String),
}

/// The kind of a seq_trace event (`SeqTraceInfo`'s first element).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    Send,
    Receive,
    Print,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Send => "send",
            EventKind::Receive => "'receive'",
            EventKind::Print => "print",
        }
    }
}

/// One seq_trace event: `{seq_trace, Label, {Kind, Serial, From, To, Message}[, Timestamp]}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    pub label: Label,
    pub kind: EventKind,
    pub serial: Serial,
    pub from: Pid,
    /// `[]` for print.
    pub to: Option<Pid>,
    pub msg: Msg,
    pub timestamp: Option<Timestamp>,
}

/// A timestamp: its format and a node-local tick (the reference has no wall clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timestamp {
    pub kind: TimestampKind,
    pub tick: u64,
}

/// The options map the tracer behaviour passes to `trace/5` for seq_trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOpts {
    pub timestamp: Option<Timestamp>,
}

/// What `enabled/3` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enabled {
    Trace,
    Discard,
}

/// A tracer module (erl_tracer): `enabled(seq_trace, State, Label)` then
/// `trace(seq_trace, State, Label, SeqTraceInfo, Opts)`. There is no tracee for seq_trace; the
/// label takes its place.
pub trait TracerModule {
    fn enabled(&mut self, label: &Label) -> Enabled {
        let _ = label;
        Enabled::Trace
    }
    fn trace(&mut self, label: &Label, info: &Event, opts: TraceOpts);
}

/// A tracer module that keeps every event; what the tests use.
#[derive(Default)]
pub struct Collect {
    pub events: Vec<Event>,
}

impl TracerModule for Collect {
    fn trace(&mut self, _label: &Label, info: &Event, _opts: TraceOpts) {
        self.events.push(info.clone());
    }
}

/// The node's system tracer.
pub enum SystemTracer {
    None,
    /// Events become messages `{seq_trace, ...}` in this process's queue (without a token).
    Process(Pid),
    Module(Box<dyn TracerModule>),
}

/// A queued message with the token it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub from: Pid,
    pub msg: Msg,
    pub token: Option<Token>,
    /// Set for trace messages delivered to a tracer process.
    pub trace: Option<Event>,
}

/// One process.
#[derive(Clone, Debug)]
pub struct Proc {
    pub token: Option<Token>,
    pub counters: Counters,
    pub queue: VecDeque<Envelope>,
    pub alive: bool,
    pub trap_exit: bool,
    pub links: Vec<Pid>,
}

impl Proc {
    fn new() -> Proc {
        Proc {
            token: None,
            counters: Counters::default(),
            queue: VecDeque::new(),
            alive: true,
            trap_exit: false,
            links: Vec::new(),
        }
    }
}

/// Which behaviour to follow where OTP 25 and the manual disagree (both found by the
/// differential test; docs/seq_trace.md lists them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// The manual.
    /// - A spawn's reply is a receive like any other: token := reply token, counters by the
    ///   receive rule.
    /// - `print` moves the serial only when it outputs (print flag set, label matches).
    #[default]
    Manual,
    /// Erlang/OTP 25 as measured.
    /// - Spawn reply: the parent's token is left alone and both counters become the reply's
    ///   Current *as a tagged small integer* (`16 * tcurr + 15` on a 64-bit emulator), so 2
    ///   becomes 47.
    /// - `print` moves the serial whenever the process has a token and the label matches,
    ///   even with the print flag off.
    Otp25,
}

/// What `set_token/1` returns: the previous token for `[]`, `ok` for a token (OTP applies a
/// token as `set_token/2` calls for label, serial and every flag).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetToken {
    Previous(Option<Token>),
    Ok,
}

/// Limits on loops over processes and queues (TigerBeetle style).
pub const MAX_PROCS: usize = 1 << 16;
pub const MAX_QUEUE: usize = 1 << 20;

/// One node.
pub struct Node {
    procs: Vec<Proc>,
    tracer: SystemTracer,
    mutant: Mutant,
    dialect: Dialect,
    tick: u64,
    /// Every event generated, in generation order, whether or not a tracer took it.
    log: Vec<Event>,
}

impl Default for Node {
    fn default() -> Self {
        Node::new()
    }
}

impl Node {
    pub fn new() -> Node {
        Node {
            procs: Vec::new(),
            tracer: SystemTracer::None,
            mutant: Mutant::None,
            dialect: Dialect::Manual,
            tick: 0,
            log: Vec::new(),
        }
    }

    pub fn with_mutant(mut self, m: Mutant) -> Node {
        self.mutant = m;
        self
    }

    pub fn with_dialect(mut self, d: Dialect) -> Node {
        self.dialect = d;
        self
    }

    /// A process created outside any trace sequence: empty token, counters 0.
    pub fn spawn_root(&mut self) -> Result<Pid, SeqTraceError> {
        if self.procs.len() >= MAX_PROCS {
            return Err(SeqTraceError::ProcessLimit(MAX_PROCS));
        }
        self.procs.push(Proc::new());
        Ok(Pid((self.procs.len() - 1) as u32))
    }

    pub fn proc(&self, p: Pid) -> Result<&Proc, SeqTraceError> {
        self.procs
            .get(p.0 as usize)
            .ok_or(SeqTraceError::NoSuchProcess(p))
    }

    fn live(&mut self, p: Pid) -> Result<&mut Proc, SeqTraceError> {
        let pr = self
            .procs
            .get_mut(p.0 as usize)
            .ok_or(SeqTraceError::NoSuchProcess(p))?;
        if !pr.alive {
            return Err(SeqTraceError::DeadProcess(p));
        }
        Ok(pr)
    }

    /// Every event generated so far, in generation order.
    pub fn log(&self) -> &[Event] {
        &self.log
    }

    pub fn counters(&self, p: Pid) -> Result<Counters, SeqTraceError> {
        Ok(self.proc(p)?.counters)
    }

    // ---- the system tracer -----------------------------------------------------------------

    /// `set_system_tracer/1`; returns a description of the previous tracer.
    pub fn set_system_tracer(&mut self, t: SystemTracer) -> Result<SystemTracer, SeqTraceError> {
        if let SystemTracer::Process(p) = t {
            match self.procs.get(p.0 as usize) {
                Some(pr) if pr.alive => {}
                _ => return Err(SeqTraceError::BadTracer(p)),
            }
        }
        Ok(std::mem::replace(&mut self.tracer, t))
    }

    /// `get_system_tracer/0` for a tracer process (None for no tracer or a module).
    pub fn system_tracer_pid(&self) -> Option<Pid> {
        match self.tracer {
            SystemTracer::Process(p) => Some(p),
            _ => None,
        }
    }

    fn emit(
        &mut self,
        token: &Token,
        kind: EventKind,
        serial: Serial,
        from: Pid,
        to: Option<Pid>,
        msg: Msg,
    ) {
        self.tick += 1;
        let ev = Event {
            label: token.label.clone(),
            kind,
            serial,
            from,
            to,
            msg,
            timestamp: token.flags.timestamp_kind().map(|kind| Timestamp {
                kind,
                tick: self.tick,
            }),
        };
        self.log.push(ev.clone());
        match &mut self.tracer {
            SystemTracer::None => {}
            SystemTracer::Module(m) => {
                if m.enabled(&ev.label) == Enabled::Trace {
                    let opts = TraceOpts {
                        timestamp: ev.timestamp,
                    };
                    m.trace(&ev.label.clone(), &ev, opts);
                }
            }
            SystemTracer::Process(t) => {
                let t = *t;
                if let Some(tp) = self.procs.get_mut(t.0 as usize) {
                    if tp.alive && tp.queue.len() < MAX_QUEUE {
                        tp.queue.push_back(Envelope {
                            from,
                            msg: Msg::Info("seq_trace".into()),
                            token: None,
                            trace: Some(ev),
                        });
                    }
                }
            }
        }
    }

    /// The send half of an information transfer from `from` (message, exit signal, spawn
    /// request or reply): update the serial if the token is non-empty, emit the send event if
    /// the token's send flag is set, and return the token the transfer carries.
    fn pass_along(
        &mut self,
        from: Pid,
        to: Pid,
        msg: &Msg,
    ) -> Result<Option<Token>, SeqTraceError> {
        let mutant = self.mutant;
        let pr = self.live(from)?;
        let Some(mut tok) = pr.token.clone() else {
            return Ok(None);
        };
        let serial = on_send(&mut pr.counters, mutant)
            .map_err(|counter| SeqTraceError::CounterLimit { pid: from, counter })?;
        // The process's own token records the serial and sender of its last transfer
        // (get_token/0 after a send shows it).
        tok.serial = serial;
        tok.from = from;
        pr.token = Some(tok.clone());
        if tok.flags.has(Flag::Send) {
            self.emit(&tok, EventKind::Send, serial, from, Some(to), msg.clone());
        }
        Ok(Some(tok))
    }

    /// The receive half: the process's token becomes the transfer's (empty or not), counters
    /// follow the receive rule, and the receive event is emitted if the carried token's
    /// 'receive' flag is set.
    fn take_in(
        &mut self,
        to: Pid,
        from: Pid,
        msg: Msg,
        token: Option<Token>,
    ) -> Result<(), SeqTraceError> {
        let mutant = self.mutant;
        let pr = self.live(to)?;
        match token {
            None => {
                if mutant != Mutant::KeepTokenOnEmptyReceive {
                    pr.token = None;
                }
                Ok(())
            }
            Some(tok) => {
                on_receive(&mut pr.counters, tok.serial, mutant);
                pr.token = Some(tok.clone());
                let shown = if mutant == Mutant::ReceiveReportsCounters {
                    Serial {
                        prev: pr.counters.prev,
                        curr: pr.counters.curr,
                    }
                } else {
                    tok.serial
                };
                if tok.flags.has(Flag::Receive) {
                    self.emit(&tok, EventKind::Receive, shown, from, Some(to), msg);
                }
                Ok(())
            }
        }
    }

    // ---- transfers ----------------------------------------------------------------------------

    /// `To ! {Tag}`.
    pub fn send(&mut self, from: Pid, to: Pid, tag: &str) -> Result<(), SeqTraceError> {
        self.proc(to)?;
        let msg = Msg::User(tag.to_string());
        let token = self.pass_along(from, to, &msg)?;
        let dest = &mut self.procs[to.0 as usize];
        // A message to a dead process is dropped (its send event has happened).
        if dest.alive && dest.queue.len() < MAX_QUEUE {
            dest.queue.push_back(Envelope {
                from,
                msg,
                token,
                trace: None,
            });
        }
        Ok(())
    }

    /// `receive {Tag} -> ... end`: take the first queued message `{Tag}`.
    pub fn receive(&mut self, p: Pid, tag: &str) -> Result<(), SeqTraceError> {
        self.receive_matching(p, tag, |m| matches!(m, Msg::User(t) if t == tag))
    }

    /// `receive {'EXIT', From, _} -> ... end`.
    pub fn receive_exit(&mut self, p: Pid, from: Pid) -> Result<(), SeqTraceError> {
        self.receive_matching(
            p,
            &format!("{{'EXIT', {from}, _}}"),
            |m| matches!(m, Msg::Exit { from: f, .. } if *f == from),
        )
    }

    fn receive_matching(
        &mut self,
        p: Pid,
        wanted: &str,
        pred: impl Fn(&Msg) -> bool,
    ) -> Result<(), SeqTraceError> {
        let pr = self.live(p)?;
        let pos = pr
            .queue
            .iter()
            .take(MAX_QUEUE)
            .position(|e| e.trace.is_none() && pred(&e.msg))
            .ok_or_else(|| SeqTraceError::NoMessage {
                pid: p,
                wanted: wanted.to_string(),
            })?;
        let env = pr.queue.remove(pos).expect("position is in the queue");
        self.take_in(p, env.from, env.msg, env.token)
    }

    /// The trace messages a tracer process has received, removed from its queue.
    pub fn drain_trace_messages(&mut self, tracer: Pid) -> Result<Vec<Event>, SeqTraceError> {
        let pr = self.live(tracer)?;
        let mut out = Vec::new();
        pr.queue.retain(|e| match &e.trace {
            Some(ev) => {
                out.push(ev.clone());
                false
            }
            None => true,
        });
        Ok(out)
    }

    /// `spawn/1` (or `spawn_link/1` with `link`): a spawn request to the child and a spawn reply
    /// back, each a traced transfer when the parent has a token.
    pub fn spawn(&mut self, parent: Pid, link: bool) -> Result<Pid, SeqTraceError> {
        let pp = self.live(parent)?;
        // Check the parent's counter before creating anything, so a refusal changes nothing.
        if pp.token.is_some() && pp.counters.curr >= COUNTER_MAX {
            return Err(SeqTraceError::CounterLimit {
                pid: parent,
                counter: u64::from(pp.counters.curr) + 1,
            });
        }
        let child = self.spawn_root()?;
        if link {
            self.procs[parent.0 as usize].links.push(child);
            self.procs[child.0 as usize].links.push(parent);
        }
        let req = self.pass_along(parent, child, &Msg::SpawnRequest)?;
        if req.is_none() {
            return Ok(child);
        }
        self.take_in(child, parent, Msg::SpawnRequest, req)?;
        let reply = self.pass_along(child, parent, &Msg::SpawnReply)?;
        match self.dialect {
            Dialect::Manual => self.take_in(parent, child, Msg::SpawnReply, reply)?,
            Dialect::Otp25 => {
                let tok = reply.expect("the child has the parent's token");
                let tagged = u64::from(tok.serial.curr) * 16 + 15;
                let tagged = u32::try_from(tagged).map_err(|_| SeqTraceError::CounterLimit {
                    pid: parent,
                    counter: tagged,
                })?;
                let pr = self.live(parent)?;
                if pr.counters.curr < tagged {
                    pr.counters.curr = tagged;
                }
                pr.counters.prev = tagged;
                if tok.flags.has(Flag::Receive) {
                    self.emit(
                        &tok,
                        EventKind::Receive,
                        tok.serial,
                        child,
                        Some(parent),
                        Msg::SpawnReply,
                    );
                }
            }
        }
        Ok(child)
    }

    /// `process_flag(trap_exit, true)`.
    pub fn trap_exit(&mut self, p: Pid, on: bool) -> Result<(), SeqTraceError> {
        self.live(p)?.trap_exit = on;
        Ok(())
    }

    /// `exit(Reason)` in process `p`: it dies and sends an exit signal (a traced transfer) to
    /// each linked process. A trapping process gets `{'EXIT', P, Reason}` in its queue; a
    /// non-trapping one dies too unless the reason is `normal` (without a receive event).
    pub fn exit(&mut self, p: Pid, reason: &str) -> Result<(), SeqTraceError> {
        let links = std::mem::take(&mut self.live(p)?.links);
        for q in links.into_iter().take(MAX_PROCS) {
            let msg = Msg::Exit {
                from: p,
                reason: reason.to_string(),
            };
            let token = self.pass_along(p, q, &msg)?;
            let Some(qp) = self.procs.get_mut(q.0 as usize) else {
                continue;
            };
            qp.links.retain(|l| *l != p);
            if !qp.alive {
                continue;
            }
            if qp.trap_exit {
                if qp.queue.len() < MAX_QUEUE {
                    qp.queue.push_back(Envelope {
                        from: p,
                        msg,
                        token,
                        trace: None,
                    });
                }
            } else if reason != "normal" {
                // Killed by the signal: it exits with the same reason (one level; its own links
                // are not followed by the reference).
                qp.alive = false;
            }
        }
        let pr = self.live(p)?;
        pr.alive = false;
        pr.queue.clear();
        Ok(())
    }

    // ---- the seq_trace API ---------------------------------------------------------------------

    /// `seq_trace:print(Info)`.
    pub fn print(&mut self, p: Pid, info: &str) -> Result<(), SeqTraceError> {
        self.print_if(p, None, info)
    }

    /// `seq_trace:print(Label, Info)`: only an integer label is accepted; it prints only when it
    /// equals the token's label.
    pub fn print_label(&mut self, p: Pid, label: &Label, info: &str) -> Result<(), SeqTraceError> {
        if !matches!(label, Label::Int(_)) {
            return Err(SeqTraceError::BadPrintLabel(label.clone()));
        }
        self.print_if(p, Some(label), info)
    }

    fn print_if(&mut self, p: Pid, label: Option<&Label>, info: &str) -> Result<(), SeqTraceError> {
        let mutant = self.mutant;
        let dialect = self.dialect;
        let pr = self.live(p)?;
        let Some(mut tok) = pr.token.clone() else {
            return Ok(());
        };
        if label.is_some_and(|l| *l != tok.label) {
            return Ok(());
        }
        let prints = tok.flags.has(Flag::Print);
        if !prints && dialect == Dialect::Manual {
            return Ok(());
        }
        let serial = on_send(&mut pr.counters, mutant)
            .map_err(|counter| SeqTraceError::CounterLimit { pid: p, counter })?;
        tok.serial = serial;
        tok.from = p;
        pr.token = Some(tok.clone());
        if prints {
            self.emit(
                &tok,
                EventKind::Print,
                serial,
                p,
                None,
                Msg::Info(info.to_string()),
            );
        }
        Ok(())
    }

    /// `get_token/0`.
    pub fn get_token(&self, p: Pid) -> Result<Option<Token>, SeqTraceError> {
        Ok(self.proc(p)?.token.clone())
    }

    /// `get_token/1`: the component's value. For an empty token OTP answers `[]` for label and
    /// serial and `false` for a flag.
    pub fn get_token_component(
        &self,
        p: Pid,
        c: Component,
    ) -> Result<Option<Value>, SeqTraceError> {
        let pr = self.proc(p)?;
        Ok(match (&pr.token, c) {
            (Some(t), c) => Some(component_value(t, c)),
            (None, Component::Flag(_)) => Some(Value::Bool(false)),
            (None, _) => None,
        })
    }

    /// `set_token/1`. `[]` (None) empties the token, leaves the counters alone and returns the
    /// previous token. A token is applied component by component as OTP does: label, serial
    /// (which sets the counters: `prev_cnt := Previous`, `curr_cnt := Current`) and every flag;
    /// its From is not copied (a fresh token names the caller). Returns `ok`.
    pub fn set_token(&mut self, p: Pid, token: Option<Token>) -> Result<SetToken, SeqTraceError> {
        let Some(t) = token else {
            let pr = self.live(p)?;
            return Ok(SetToken::Previous(pr.token.take()));
        };
        check_serial(t.serial)?;
        self.live(p)?;
        self.set_token_component(p, Component::Label, Value::Label(t.label.clone()))?;
        self.set_token_component(p, Component::Serial, Value::Serial(t.serial))?;
        for f in Flag::ALL {
            self.set_token_component(p, Component::Flag(f), Value::Bool(t.flags.has(f)))?;
        }
        Ok(SetToken::Ok)
    }

    /// `set_token/2`: set one component, creating a fresh token if the process has none, and
    /// return the old value (the default when the token was empty). Setting `serial` also sets
    /// the counters.
    pub fn set_token_component(
        &mut self,
        p: Pid,
        c: Component,
        v: Value,
    ) -> Result<Value, SeqTraceError> {
        match (c, &v) {
            (Component::Label, Value::Label(_)) | (Component::Flag(_), Value::Bool(_)) => {}
            (Component::Serial, Value::Serial(s)) => check_serial(*s)?,
            _ => {
                return Err(SeqTraceError::BadValue {
                    component: c.name(),
                    value: v.to_string(),
                })
            }
        }
        let pr = self.live(p)?;
        let mut tok = pr
            .token
            .take()
            .unwrap_or_else(|| Token::fresh(p, pr.counters.prev));
        let old = component_value(&tok, c);
        match (c, v) {
            (Component::Label, Value::Label(l)) => tok.label = l,
            (Component::Flag(f), Value::Bool(b)) => tok.flags.set(f, b),
            (Component::Serial, Value::Serial(s)) => {
                tok.serial = s;
                pr.counters = Counters {
                    prev: s.prev,
                    curr: s.curr,
                };
            }
            _ => unreachable!("checked above"),
        }
        pr.token = Some(tok);
        Ok(old)
    }

    /// `reset_trace/0`: every token empty, in processes and in queued messages; every counter 0.
    pub fn reset_trace(&mut self) {
        let skip_queues = self.mutant == Mutant::ResetSkipsQueues;
        for pr in self.procs.iter_mut().take(MAX_PROCS) {
            pr.token = None;
            pr.counters = Counters::default();
            if !skip_queues {
                for e in pr.queue.iter_mut().take(MAX_QUEUE) {
                    e.token = None;
                }
            }
        }
    }
}

fn check_serial(s: Serial) -> Result<(), SeqTraceError> {
    if s.prev > COUNTER_MAX || s.curr > COUNTER_MAX {
        return Err(SeqTraceError::BadValue {
            component: "serial",
            value: s.to_string(),
        });
    }
    Ok(())
}

fn component_value(t: &Token, c: Component) -> Value {
    match c {
        Component::Label => Value::Label(t.label.clone()),
        Component::Serial => Value::Serial(t.serial),
        Component::Flag(f) => Value::Bool(t.flags.has(f)),
    }
}

/// The merge rule for a label's events (the manual: serials "order the messages
/// chronologically"): sort by Current, a receive after the send of the same serial, which this
/// crate's proof (docs/seq_trace.md) shows respects happened-before.
pub fn merge_order(events: &mut [Event]) {
    events.sort_by_key(|e| (e.serial.curr, e.kind != EventKind::Send));
}
