//! The reference against the seq_trace manual's statements, one test per statement.

use std::cell::RefCell;
use std::rc::Rc;

use bpspec_seqtrace::node::{Enabled, TraceOpts};
use bpspec_seqtrace::token::{TimestampKind, COUNTER_MAX};
use bpspec_seqtrace::*;

fn traced(node: &mut Node, p: Pid, label: i64, flags: &[Flag]) {
    node.set_token_component(p, Component::Label, Value::Label(Label::Int(label)))
        .unwrap();
    for f in flags {
        node.set_token_component(p, Component::Flag(*f), Value::Bool(true))
            .unwrap();
    }
}

/// `n` with one root process spawned.
fn one_root(mut n: Node) -> (Node, Pid) {
    let a = n.spawn_root().unwrap();
    (n, a)
}

/// A node with two root processes.
fn two_roots() -> (Node, Pid, Pid) {
    let (mut n, a) = one_root(Node::new());
    let b = n.spawn_root().unwrap();
    (n, a, b)
}

/// `two_roots`, the first traced with `label` and every flag.
fn traced_pair(label: i64) -> (Node, Pid, Pid) {
    let (mut n, a, b) = two_roots();
    traced(&mut n, a, label, &ALL);
    (n, a, b)
}

const ALL: [Flag; 3] = [Flag::Send, Flag::Receive, Flag::Print];

fn ser(prev: u32, curr: u32) -> Serial {
    Serial { prev, curr }
}

/// The manual's example: Info {0,1}, Received {0,2}, Info {2,3}, Received {2,4}.
#[test]
fn manual_example_serials() {
    let (mut n, a, b) = two_roots();
    traced(&mut n, a, 17, &[Flag::Receive, Flag::Print]);
    n.print_label(a, &Label::Int(17), "**** Trace Started ****")
        .unwrap();
    n.send(a, b, "the_message").unwrap();
    n.receive(b, "the_message").unwrap();
    n.print_label(b, &Label::Int(17), "We are here now")
        .unwrap();
    n.send(b, a, "ack").unwrap();
    n.receive(a, "ack").unwrap();
    let got: Vec<_> = n.log().iter().map(|e| (e.kind, e.serial)).collect();
    assert_eq!(
        got,
        vec![
            (EventKind::Print, ser(0, 1)),
            (EventKind::Receive, ser(0, 2)),
            (EventKind::Print, ser(2, 3)),
            (EventKind::Receive, ser(2, 4)),
        ]
    );
}

#[test]
fn receive_takes_max_and_sets_prev() {
    let (mut n, a, b) = traced_pair(1);
    for _ in 0..5 {
        n.print(a, "x").unwrap();
    }
    n.send(a, b, "m").unwrap(); // {0,6}
    traced(&mut n, b, 1, &ALL);
    for _ in 0..9 {
        n.print(b, "y").unwrap();
    } // b: curr 9
    n.receive(b, "m").unwrap();
    assert_eq!(n.counters(b).unwrap(), Counters { prev: 6, curr: 9 });
    n.send(b, a, "r").unwrap();
    assert_eq!(n.log().last().unwrap().serial, ser(6, 10));
    n.receive(a, "r").unwrap();
    assert_eq!(n.counters(a).unwrap(), Counters { prev: 10, curr: 10 });
}

#[test]
fn counters_move_without_send_flag_but_no_event() {
    let (mut n, a, b) = two_roots();
    traced(&mut n, a, 3, &[]);
    n.send(a, b, "m").unwrap();
    assert!(n.log().is_empty(), "no flag, no event");
    assert_eq!(n.counters(a).unwrap().curr, 1, "but the serial moved");
    n.receive(b, "m").unwrap();
    assert_eq!(n.get_token(b).unwrap().unwrap().serial, ser(0, 1));
}

#[test]
fn empty_token_receive_empties_the_token_and_keeps_counters() {
    let (mut n, a, b) = traced_pair(3);
    n.send(b, a, "plain").unwrap();
    n.print(a, "p").unwrap();
    n.receive(a, "plain").unwrap();
    assert_eq!(n.get_token(a).unwrap(), None);
    assert_eq!(n.counters(a).unwrap().curr, 1);
    n.send(a, b, "untraced").unwrap();
    assert_eq!(n.log().len(), 1, "only the print");
    assert_eq!(
        n.get_token_component(a, Component::Serial).unwrap(),
        None,
        "get_token/1 of an empty token is [] for serial"
    );
    assert_eq!(
        n.get_token_component(a, Component::Flag(Flag::Send))
            .unwrap(),
        Some(Value::Bool(false)),
        "and false for a flag"
    );
}

#[test]
fn otp25_print_moves_the_serial_without_the_print_flag() {
    let (mut n, a) = one_root(Node::new().with_dialect(Dialect::Otp25));
    traced(&mut n, a, 17, &[]);
    n.print(a, "counted, not output").unwrap();
    n.print_label(a, &Label::Int(18), "other label: neither")
        .unwrap();
    assert!(n.log().is_empty());
    assert_eq!(n.counters(a).unwrap().curr, 1);
}

#[test]
fn print_needs_flag_and_matching_integer_label() {
    let (mut n, a) = one_root(Node::new());
    n.print(a, "no token").unwrap();
    traced(&mut n, a, 17, &[]);
    n.print(a, "no print flag").unwrap();
    n.set_token_component(a, Component::Flag(Flag::Print), Value::Bool(true))
        .unwrap();
    n.print_label(a, &Label::Int(18), "other label").unwrap();
    assert!(n.log().is_empty());
    assert_eq!(
        n.counters(a).unwrap().curr,
        0,
        "a suppressed print does not count"
    );
    n.print_label(a, &Label::Int(17), "yes").unwrap();
    assert_eq!(n.log()[0].serial, ser(0, 1));
    assert_eq!(n.log()[0].to, None);
    let e = n
        .print_label(a, &Label::Atom("foo".into()), "x")
        .unwrap_err();
    assert_eq!(e, SeqTraceError::BadPrintLabel(Label::Atom("foo".into())));
    assert!(e.to_string().contains("integer label"));
}

#[test]
fn token_travels_with_spawn_and_exit_signals() {
    let (mut n, a) = one_root(Node::new());
    traced(&mut n, a, 5, &ALL);
    n.trap_exit(a, true).unwrap();
    let c = n.spawn(a, true).unwrap();
    let kinds: Vec<_> = n
        .log()
        .iter()
        .map(|e| (e.kind, e.msg.clone(), e.serial))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (EventKind::Send, Msg::SpawnRequest, ser(0, 1)),
            (EventKind::Receive, Msg::SpawnRequest, ser(0, 1)),
            (EventKind::Send, Msg::SpawnReply, ser(1, 2)),
            (EventKind::Receive, Msg::SpawnReply, ser(1, 2)),
        ]
    );
    assert_eq!(n.get_token(c).unwrap().unwrap().label, Label::Int(5));
    n.exit(c, "bye").unwrap();
    n.receive_exit(a, c).unwrap();
    let last = &n.log()[n.log().len() - 2..];
    assert_eq!(last[0].kind, EventKind::Send);
    assert_eq!(last[0].serial, ser(1, 3));
    assert_eq!(last[1].kind, EventKind::Receive);
    assert_eq!(
        last[1].msg,
        Msg::Exit {
            from: c,
            reason: "bye".into()
        }
    );
}

#[test]
fn spawn_without_token_is_untraced_and_child_starts_at_zero() {
    let (mut n, a) = one_root(Node::new());
    let c = n.spawn(a, false).unwrap();
    assert_eq!(n.get_token(c).unwrap(), None);
    assert_eq!(n.counters(c).unwrap(), Counters::default());
    assert!(n.log().is_empty());
}

#[test]
fn otp25_spawn_reply_uses_tagged_counter() {
    let (mut n, a) = one_root(Node::new().with_dialect(Dialect::Otp25));
    traced(&mut n, a, 5, &ALL);
    n.spawn(a, false).unwrap();
    assert_eq!(n.counters(a).unwrap(), Counters { prev: 47, curr: 47 });
    assert_eq!(n.get_token(a).unwrap().unwrap().serial, ser(0, 1));
}

#[test]
fn reset_empties_tokens_everywhere_and_zeroes_counters() {
    let (mut n, a, b) = traced_pair(5);
    n.send(a, b, "m").unwrap();
    n.reset_trace();
    assert_eq!(n.get_token(a).unwrap(), None);
    assert_eq!(n.counters(a).unwrap(), Counters::default());
    n.receive(b, "m").unwrap();
    assert_eq!(n.get_token(b).unwrap(), None, "queued token was emptied");
    assert_eq!(n.log().len(), 1, "only the send before the reset");
    n.set_token_component(b, Component::Label, Value::Label(Label::Int(7)))
        .unwrap();
    assert_eq!(n.get_token(b).unwrap().unwrap().serial, ser(0, 0));
}

#[test]
fn set_token_returns_old_values_and_sets_counters() {
    let (mut n, a) = one_root(Node::new());
    let old = n
        .set_token_component(a, Component::Label, Value::Label(Label::Int(3)))
        .unwrap();
    assert_eq!(old, Value::Label(Label::Int(0)), "default label is 0");
    let old = n
        .set_token_component(a, Component::Serial, Value::Serial(ser(5, 9)))
        .unwrap();
    assert_eq!(old, Value::Serial(ser(0, 0)));
    assert_eq!(n.counters(a).unwrap(), Counters { prev: 5, curr: 9 });
    let SetToken::Previous(saved) = n.set_token(a, None).unwrap() else {
        panic!("set_token([]) returns the previous token")
    };
    assert!(saved.is_some());
    assert_eq!(n.get_token(a).unwrap(), None);
    assert_eq!(
        n.counters(a).unwrap(),
        Counters { prev: 5, curr: 9 },
        "[] keeps counters"
    );
    n.print(a, "moves nothing without a token").unwrap();
    let r = n.set_token(a, saved.clone()).unwrap();
    assert_eq!(r, SetToken::Ok, "set_token(Token) returns ok");
    assert_eq!(n.get_token(a).unwrap(), saved);
    assert_eq!(n.counters(a).unwrap(), Counters { prev: 5, curr: 9 });
}

#[test]
fn bad_input_is_refused_with_a_clear_error() {
    let (mut n, a) = one_root(Node::new());
    assert!(matches!(
        Component::parse("bogus"),
        Err(SeqTraceError::BadComponent(_))
    ));
    let e = n
        .set_token_component(a, Component::Flag(Flag::Send), Value::Label(Label::Int(1)))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("not a valid value for component send"),
        "{e}"
    );
    let e = n
        .set_token_component(a, Component::Serial, Value::Serial(ser(0, COUNTER_MAX + 1)))
        .unwrap_err();
    assert!(matches!(
        e,
        SeqTraceError::BadValue {
            component: "serial",
            ..
        }
    ));
    assert_eq!(
        n.get_token(a).unwrap(),
        None,
        "a refused set changes nothing"
    );
    assert_eq!(
        n.receive(a, "none"),
        Err(SeqTraceError::NoMessage {
            pid: a,
            wanted: "none".into()
        })
    );
    assert_eq!(
        n.send(a, Pid(9), "x"),
        Err(SeqTraceError::NoSuchProcess(Pid(9)))
    );
    assert!(matches!(
        n.set_system_tracer(SystemTracer::Process(Pid(9))),
        Err(SeqTraceError::BadTracer(_))
    ));
}

#[test]
fn counter_limit_refuses_the_send() {
    let (mut n, a, b) = traced_pair(1);
    n.set_token_component(a, Component::Serial, Value::Serial(ser(0, COUNTER_MAX)))
        .unwrap();
    let e = n.send(a, b, "m").unwrap_err();
    assert!(matches!(e, SeqTraceError::CounterLimit { .. }));
    assert!(e.to_string().contains("27-bit"));
    assert!(n.proc(b).unwrap().queue.is_empty());
    n.reset_trace();
    traced(&mut n, a, 1, &ALL);
    n.send(a, b, "m").unwrap();
}

#[test]
fn timestamps_follow_precedence() {
    let (mut n, a) = one_root(Node::new());
    traced(
        &mut n,
        a,
        1,
        &[Flag::Print, Flag::Timestamp, Flag::MonotonicTimestamp],
    );
    n.print(a, "1").unwrap();
    n.set_token_component(a, Component::Flag(Flag::Timestamp), Value::Bool(false))
        .unwrap();
    n.print(a, "2").unwrap();
    n.set_token_component(
        a,
        Component::Flag(Flag::StrictMonotonicTimestamp),
        Value::Bool(true),
    )
    .unwrap();
    n.print(a, "3").unwrap();
    let kinds: Vec<_> = n
        .log()
        .iter()
        .map(|e| e.timestamp.map(|t| t.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            Some(TimestampKind::Now),
            Some(TimestampKind::Monotonic),
            Some(TimestampKind::StrictMonotonic)
        ]
    );
}

type Seen = Rc<RefCell<Vec<(Label, EventKind, Option<TimestampKind>)>>>;

struct Shared(Seen, i64);
impl TracerModule for Shared {
    fn enabled(&mut self, label: &Label) -> Enabled {
        if *label == Label::Int(self.1) {
            Enabled::Discard
        } else {
            Enabled::Trace
        }
    }
    fn trace(&mut self, label: &Label, info: &Event, opts: TraceOpts) {
        self.0
            .borrow_mut()
            .push((label.clone(), info.kind, opts.timestamp.map(|t| t.kind)));
    }
}

#[test]
fn system_tracer_module_and_process() {
    let (mut n, a) = one_root(Node::new());
    let t = n.spawn_root().unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    n.set_system_tracer(SystemTracer::Module(Box::new(Shared(seen.clone(), 9))))
        .unwrap();
    traced(&mut n, a, 1, &[Flag::Print, Flag::Timestamp]);
    n.print(a, "to module").unwrap();
    n.set_token_component(a, Component::Label, Value::Label(Label::Int(9)))
        .unwrap();
    n.print(a, "discarded by enabled/3").unwrap();
    assert_eq!(
        *seen.borrow(),
        vec![(Label::Int(1), EventKind::Print, Some(TimestampKind::Now))]
    );
    n.set_system_tracer(SystemTracer::Process(t)).unwrap();
    n.print(a, "to process").unwrap();
    let got = n.drain_trace_messages(t).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].msg, Msg::Info("to process".into()));
    assert_eq!(
        n.get_token(t).unwrap(),
        None,
        "trace messages carry no token"
    );
    assert_eq!(n.log().len(), 3, "the log keeps every event");
}
