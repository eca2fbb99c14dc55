//! Scenarios for the differential test: a global sequence of steps, each run by one process.
//! The same scenario runs on the reference ([`run_reference`]) and on a real OTP node
//! (`seqtrace/erl/seqtrace_driver.erl` through [`crate::otp`]); both produce the same line
//! format, compared line by line.
//!
//! Processes are named by index: 0 is spawned by the driver without a token, every other
//! index by a `Spawn` step. Components and values are kept as Erlang source text so that bad
//! input reaches both sides unchanged.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::node::{Dialect, Event, Msg, Node, SetToken};
use crate::token::{Component, Label, Mutant, Pid, SeqTraceError, Serial, Token, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Spawn {
        p: u32,
        child: u32,
    },
    SpawnLink {
        p: u32,
        child: u32,
    },
    Send {
        p: u32,
        to: u32,
        tag: String,
    },
    Recv {
        p: u32,
        tag: String,
    },
    RecvExit {
        p: u32,
        from: u32,
    },
    TrapExit {
        p: u32,
    },
    Exit {
        p: u32,
        reason: String,
    },
    /// `set_token(Component, Value)`, both as Erlang text.
    Set {
        p: u32,
        component: String,
        value: String,
    },
    SetEmpty {
        p: u32,
    },
    Save {
        p: u32,
        slot: u32,
    },
    Restore {
        p: u32,
        slot: u32,
    },
    Get {
        p: u32,
    },
    GetComponent {
        p: u32,
        component: String,
    },
    Print {
        p: u32,
        info: String,
    },
    PrintLabel {
        p: u32,
        label: String,
        info: String,
    },
    Reset {
        p: u32,
    },
}

impl Step {
    pub fn proc(&self) -> u32 {
        match self {
            Step::Spawn { p, .. }
            | Step::SpawnLink { p, .. }
            | Step::Send { p, .. }
            | Step::Recv { p, .. }
            | Step::RecvExit { p, .. }
            | Step::TrapExit { p }
            | Step::Exit { p, .. }
            | Step::Set { p, .. }
            | Step::SetEmpty { p }
            | Step::Save { p, .. }
            | Step::Restore { p, .. }
            | Step::Get { p }
            | Step::GetComponent { p, .. }
            | Step::Print { p, .. }
            | Step::PrintLabel { p, .. }
            | Step::Reset { p } => *p,
        }
    }

    /// The step as the driver's Erlang term.
    pub fn to_erl(&self) -> String {
        match self {
            Step::Spawn { p, child } => format!("{{spawn,{p},{child}}}"),
            Step::SpawnLink { p, child } => format!("{{spawn_link,{p},{child}}}"),
            Step::Send { p, to, tag } => format!("{{send,{p},{to},{tag}}}"),
            Step::Recv { p, tag } => format!("{{recv,{p},{tag}}}"),
            Step::RecvExit { p, from } => format!("{{recv_exit,{p},{from}}}"),
            Step::TrapExit { p } => format!("{{trap_exit,{p}}}"),
            Step::Exit { p, reason } => format!("{{exit,{p},{reason}}}"),
            Step::Set {
                p,
                component,
                value,
            } => format!("{{set,{p},{component},{value}}}"),
            Step::SetEmpty { p } => format!("{{set_empty,{p}}}"),
            Step::Save { p, slot } => format!("{{save,{p},{slot}}}"),
            Step::Restore { p, slot } => format!("{{restore,{p},{slot}}}"),
            Step::Get { p } => format!("{{get,{p}}}"),
            Step::GetComponent { p, component } => format!("{{get,{p},{component}}}"),
            Step::Print { p, info } => format!("{{print,{p},{info}}}"),
            Step::PrintLabel { p, label, info } => format!("{{print,{p},{label},{info}}}"),
            Step::Reset { p } => format!("{{reset,{p}}}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub id: u32,
    pub name: String,
    pub steps: Vec<Step>,
}

impl Scenario {
    pub fn to_erl(&self) -> String {
        let steps: Vec<String> = self.steps.iter().map(Step::to_erl).collect();
        format!("{{scenario, {}, [{}]}}.\n", self.id, steps.join(",\n  "))
    }
}

/// What one scenario produced: `R` lines in step order, `E` lines sorted (the tracer receives
/// events from several processes, so arrival order is not part of the contract), and a failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub results: Vec<String>,
    pub events: Vec<String>,
    /// The events in the order they were generated (reference) or arrived (OTP).
    pub events_in_order: Vec<String>,
    pub fail: Option<String>,
}

// ---- parsing Erlang text for the reference ---------------------------------------------------

fn is_atom(s: &str) -> bool {
    let mut ch = s.chars();
    matches!(ch.next(), Some(c) if c.is_ascii_lowercase())
        && ch.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A label term: an integer or an atom.
pub fn parse_label(s: &str) -> Option<Label> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(Label::Int(i));
    }
    is_atom(s).then(|| Label::Atom(s.to_string()))
}

/// The value for `component` from its Erlang text, or `badarg`.
fn parse_value(c: Component, s: &str) -> Option<Value> {
    match c {
        Component::Label => parse_label(s).map(Value::Label),
        Component::Flag(_) => match s {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        Component::Serial => {
            let inner = s.strip_prefix('{')?.strip_suffix('}')?;
            let (a, b) = inner.split_once(',')?;
            Some(Value::Serial(Serial {
                prev: a.trim().parse().ok()?,
                curr: b.trim().parse().ok()?,
            }))
        }
    }
}

// ---- rendering, in the driver's format ----------------------------------------------------

struct Names(BTreeMap<Pid, u32>);

impl Names {
    fn name(&self, p: Pid) -> String {
        self.0.get(&p).map_or("x".to_string(), |i| i.to_string())
    }
}

fn render_token(t: &Option<Token>, names: &Names) -> String {
    match t {
        None => "empty".into(),
        Some(t) => format!(
            "tok {} {} {} {} {}",
            t.flags.0,
            t.label,
            t.serial.prev,
            t.serial.curr,
            names.name(t.from)
        ),
    }
}

fn render_set_token(r: &SetToken, names: &Names) -> String {
    match r {
        SetToken::Previous(t) => format!("old {}", render_token(t, names)),
        SetToken::Ok => "old ok".into(),
    }
}

fn render_value(v: &Value) -> String {
    match v {
        Value::Label(l) => l.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Serial(s) => format!("pair {} {}", s.prev, s.curr),
    }
}

fn render_component(c: Component, v: &Option<Value>) -> String {
    match (c, v) {
        (_, None) => "empty".into(),
        (Component::Serial, Some(Value::Serial(s))) => format!("serial {} {}", s.prev, s.curr),
        (Component::Flag(crate::token::Flag::Receive), Some(v)) => {
            format!("'receive' {}", render_value(v))
        }
        (c, Some(v)) => format!("{} {}", c.name(), render_value(v)),
    }
}

fn render_event(e: &Event, names: &Names) -> String {
    let msg = match &e.msg {
        Msg::User(t) => t.clone(),
        Msg::Exit { from, reason } => format!("EXIT:{}:{}", names.name(*from), reason),
        Msg::SpawnRequest => "tuple:spawn_request".into(),
        Msg::SpawnReply => "tuple:spawn_reply".into(),
        Msg::Info(i) => i.clone(),
    };
    format!(
        "{} {} {} {} {} {} {} {}",
        e.label,
        e.kind.name(),
        e.serial.prev,
        e.serial.curr,
        names.name(e.from),
        e.to.map_or("[]".to_string(), |p| names.name(p)),
        msg,
        e.timestamp.map_or("none", |t| t.kind.name())
    )
}

fn badarg(e: &SeqTraceError) -> String {
    match e {
        SeqTraceError::NoMessage { .. } => "error no_message".into(),
        _ => "error badarg".into(),
    }
}

fn lookup(pids: &BTreeMap<u32, Pid>, i: u32) -> Result<Pid, SeqTraceError> {
    pids.get(&i)
        .copied()
        .ok_or(SeqTraceError::NoSuchProcess(Pid(i)))
}

/// Run a scenario on the reference in the given dialect ([`Dialect::Otp25`] to compare with OTP).
pub fn run_reference(sc: &Scenario, dialect: Dialect) -> Outcome {
    run_reference_with(sc, dialect, Mutant::None)
}

/// [`run_reference`] with a mutant of the serial rules (to show the differential test fails).
pub fn run_reference_with(sc: &Scenario, dialect: Dialect, mutant: Mutant) -> Outcome {
    let mut node = Node::new().with_dialect(dialect).with_mutant(mutant);
    let mut pids: BTreeMap<u32, Pid> = BTreeMap::new();
    let mut slots: BTreeMap<u32, Option<Token>> = BTreeMap::new();
    let mut out = Outcome::default();
    match node.spawn_root() {
        Ok(p) => pids.insert(0, p),
        Err(e) => {
            out.fail = Some(e.to_string());
            return out;
        }
    };
    for (k, step) in sc.steps.iter().enumerate().take(10_000) {
        let k = k + 1;
        let Some(&me) = pids.get(&step.proc()) else {
            out.fail = Some(format!("step {k}: process {} does not exist", step.proc()));
            break;
        };
        let names = Names(pids.iter().map(|(i, p)| (*p, *i)).collect());
        let r: Result<Option<String>, SeqTraceError> = (|| match step {
            Step::Spawn { child, .. } | Step::SpawnLink { child, .. } => {
                let c = node.spawn(me, matches!(step, Step::SpawnLink { .. }))?;
                pids.insert(*child, c);
                Ok(None)
            }
            Step::Send { to, tag, .. } => node.send(me, lookup(&pids, *to)?, tag).map(|_| None),
            Step::Recv { tag, .. } => node.receive(me, tag).map(|_| None),
            Step::RecvExit { from, .. } => {
                node.receive_exit(me, lookup(&pids, *from)?).map(|_| None)
            }
            Step::TrapExit { .. } => node.trap_exit(me, true).map(|_| None),
            Step::Exit { reason, .. } => node.exit(me, reason).map(|_| None),
            Step::Set {
                component, value, ..
            } => {
                let c = Component::parse(component)?;
                let v = parse_value(c, value).ok_or(SeqTraceError::BadValue {
                    component: c.name(),
                    value: value.clone(),
                })?;
                let old = node.set_token_component(me, c, v)?;
                Ok(Some(format!("old {}", render_value(&old))))
            }
            Step::SetEmpty { .. } => {
                let old = node.set_token(me, None)?;
                Ok(Some(render_set_token(&old, &names)))
            }
            Step::Save { slot, .. } => {
                slots.insert(*slot, node.get_token(me)?);
                Ok(None)
            }
            Step::Restore { slot, .. } => {
                let t = slots.get(slot).cloned().flatten();
                let old = node.set_token(me, t)?;
                Ok(Some(render_set_token(&old, &names)))
            }
            Step::Get { .. } => Ok(Some(format!(
                "token {}",
                render_token(&node.get_token(me)?, &names)
            ))),
            Step::GetComponent { component, .. } => {
                let c = Component::parse(component)?;
                let v = node.get_token_component(me, c)?;
                Ok(Some(format!("component {}", render_component(c, &v))))
            }
            Step::Print { info, .. } => node.print(me, info).map(|_| Some("printed ok".into())),
            Step::PrintLabel { label, info, .. } => {
                let l = parse_label(label).ok_or(SeqTraceError::BadValue {
                    component: "label",
                    value: label.clone(),
                })?;
                node.print_label(me, &l, info)
                    .map(|_| Some("printed ok".into()))
            }
            Step::Reset { .. } => {
                node.reset_trace();
                Ok(Some("reset true".into()))
            }
        })();
        let line = match r {
            Ok(None) => None,
            Ok(Some(s)) => Some(s),
            Err(e) => Some(badarg(&e)),
        };
        if let Some(l) = line {
            out.results.push(format!("{k} {} {l}", step.proc()));
        }
    }
    let names = Names(pids.iter().map(|(i, p)| (*p, *i)).collect());
    out.events_in_order = node.log().iter().map(|e| render_event(e, &names)).collect();
    out.events = out.events_in_order.clone();
    out.events.sort();
    out
}

/// The fixed corpus: one scenario per behaviour the manual describes.
pub fn corpus() -> Vec<Scenario> {
    use Step::*;
    let set = |p: u32, c: &str, v: &str| Set {
        p,
        component: c.into(),
        value: v.into(),
    };
    let trace = |p: u32| {
        vec![
            set(p, "label", "17"),
            set(p, "send", "true"),
            set(p, "'receive'", "true"),
            set(p, "print", "true"),
        ]
    };
    let send = |p: u32, to: u32, tag: &str| Send {
        p,
        to,
        tag: tag.into(),
    };
    let recv = |p: u32, tag: &str| Recv { p, tag: tag.into() };
    let print = |p: u32, info: &str| Print {
        p,
        info: info.into(),
    };
    let print_label = |p: u32, label: &str, info: &str| PrintLabel {
        p,
        label: label.into(),
        info: info.into(),
    };
    let component = |p: u32, c: &str| GetComponent {
        p,
        component: c.into(),
    };
    let cat = |parts: Vec<Vec<Step>>| parts.concat();
    // Process 0 traced with label 17, then `steps`; the same after spawning process 1.
    let traced = |steps: Vec<Step>| cat(vec![trace(0), steps]);
    let spawned_traced =
        |steps: Vec<Step>| cat(vec![vec![Spawn { p: 0, child: 1 }], trace(0), steps]);
    let v: Vec<(&str, Vec<Step>)> = vec![
        (
            "empty token",
            vec![
                Get { p: 0 },
                component(0, "serial"),
                send(0, 0, "a"),
                recv(0, "a"),
            ],
        ),
        (
            "manual example",
            vec![
                Spawn { p: 0, child: 1 },
                set(0, "label", "17"),
                set(0, "'receive'", "true"),
                set(0, "print", "true"),
                print_label(0, "17", "started"),
                send(0, 1, "the_message"),
                recv(1, "the_message"),
                print_label(1, "17", "here"),
                send(1, 0, "ack"),
                recv(0, "ack"),
                Get { p: 0 },
                Get { p: 1 },
            ],
        ),
        (
            "max on receive",
            cat(vec![
                vec![Spawn { p: 0, child: 1 }],
                trace(0),
                vec![send(0, 1, "m")],
                trace(1),
                vec![print(1, "x"); 6],
                vec![
                    recv(1, "m"),
                    Get { p: 1 },
                    send(1, 0, "r"),
                    recv(0, "r"),
                    Get { p: 0 },
                ],
            ]),
        ),
        (
            "spawn with token",
            traced(vec![
                Spawn { p: 0, child: 1 },
                Get { p: 0 },
                Get { p: 1 },
                send(0, 1, "a"),
                recv(1, "a"),
                Get { p: 1 },
            ]),
        ),
        (
            "exit signal",
            traced(vec![
                TrapExit { p: 0 },
                SpawnLink { p: 0, child: 1 },
                send(0, 1, "a"),
                recv(1, "a"),
                Exit {
                    p: 1,
                    reason: "bye".into(),
                },
                RecvExit { p: 0, from: 1 },
                Get { p: 0 },
            ]),
        ),
        (
            "empty receive empties",
            spawned_traced(vec![
                send(1, 0, "plain"),
                send(0, 0, "self"),
                recv(0, "self"),
                recv(0, "plain"),
                Get { p: 0 },
                component(0, "label"),
                set(0, "label", "3"),
                Get { p: 0 },
            ]),
        ),
        (
            "set serial and restore",
            traced(vec![
                set(0, "serial", "{5,9}"),
                Get { p: 0 },
                send(0, 0, "x"),
                recv(0, "x"),
                Save { p: 0, slot: 1 },
                SetEmpty { p: 0 },
                send(0, 0, "plain"),
                recv(0, "plain"),
                print(0, "hidden"),
                Restore { p: 0, slot: 1 },
                Get { p: 0 },
                send(0, 0, "y"),
                recv(0, "y"),
                Get { p: 0 },
            ]),
        ),
        (
            "fresh token keeps prev_cnt",
            spawned_traced(vec![
                send(0, 1, "m"),
                recv(1, "m"),
                send(1, 1, "n"),
                SetEmpty { p: 1 },
                set(1, "label", "4"),
                Get { p: 1 },
                component(1, "serial"),
            ]),
        ),
        (
            "reset empties queues",
            spawned_traced(vec![
                send(0, 1, "a"),
                send(0, 1, "b"),
                Reset { p: 0 },
                Get { p: 0 },
                recv(1, "a"),
                Get { p: 1 },
                set(1, "label", "7"),
                Get { p: 1 },
                recv(1, "b"),
                Get { p: 1 },
            ]),
        ),
        (
            "print labels and bad input",
            vec![
                set(0, "bogus", "true"),
                set(0, "send", "1"),
                set(0, "serial", "{a,1}"),
                set(0, "label", "foo"),
                set(0, "print", "true"),
                print_label(0, "foo", "x"),
                print_label(0, "1", "y"),
                print(0, "z"),
                component(0, "bogus"),
                component(0, "label"),
                component(0, "'receive'"),
            ],
        ),
        (
            "timestamp precedence",
            traced(vec![
                set(0, "timestamp", "true"),
                set(0, "monotonic_timestamp", "true"),
                print(0, "t1"),
                set(0, "timestamp", "false"),
                print(0, "t2"),
                set(0, "strict_monotonic_timestamp", "true"),
                print(0, "t3"),
                set(0, "monotonic_timestamp", "false"),
                send(0, 0, "t4"),
                recv(0, "t4"),
                Get { p: 0 },
            ]),
        ),
        (
            "no send flag still counts",
            vec![
                Spawn { p: 0, child: 1 },
                set(0, "label", "2"),
                set(0, "'receive'", "true"),
                send(0, 1, "a"),
                send(0, 1, "b"),
                recv(1, "b"),
                recv(1, "a"),
                Get { p: 1 },
            ],
        ),
    ];
    v.into_iter()
        .enumerate()
        .map(|(i, (name, steps))| Scenario {
            id: i as u32 + 1,
            name: name.into(),
            steps,
        })
        .collect()
}

// ---- the seeded random generator -----------------------------------------------------------

/// splitmix64: small, seedable, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A random, valid scenario: every receive has a message waiting, exits only happen to a
/// linked child whose parent traps exits and are received at once.
pub fn random_scenario(id: u32, seed: u64, len: usize) -> Scenario {
    const MAX_PROCS: u32 = 4;
    let mut rng = Rng::new(seed);
    let mut steps = Vec::new();
    let mut alive: Vec<u32> = vec![0];
    let mut next_child = 1;
    let mut queues: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut trapping: Vec<u32> = Vec::new();
    let mut linked_child: Vec<(u32, u32)> = Vec::new(); // (parent, child), child has no other link
    let mut saved = false;
    let mut tags = 0;
    let flags = [
        "send",
        "'receive'",
        "print",
        "timestamp",
        "monotonic_timestamp",
        "strict_monotonic_timestamp",
    ];
    steps.push(Step::Set {
        p: 0,
        component: "label".into(),
        value: (1 + rng.below(3)).to_string(),
    });
    for f in &flags[..3] {
        if rng.below(4) != 0 {
            steps.push(Step::Set {
                p: 0,
                component: (*f).into(),
                value: "true".into(),
            });
        }
    }
    let mut guard = 0;
    while steps.len() < len && guard < 10 * len {
        guard += 1;
        let p = alive[rng.below(alive.len())];
        match rng.below(20) {
            0..=4 => {
                let to = alive[rng.below(alive.len())];
                tags += 1;
                let tag = format!("m{tags}");
                queues.entry(to).or_default().push(tag.clone());
                steps.push(Step::Send { p, to, tag });
            }
            5..=8 => {
                let q = queues.entry(p).or_default();
                if !q.is_empty() {
                    let tag = q.remove(rng.below(q.len()));
                    steps.push(Step::Recv { p, tag });
                }
            }
            9 | 10 => steps.push(if rng.below(2) == 0 {
                Step::Print {
                    p,
                    info: "info".into(),
                }
            } else {
                Step::PrintLabel {
                    p,
                    label: (1 + rng.below(3)).to_string(),
                    info: "labelled".into(),
                }
            }),
            11 => steps.push(Step::Set {
                p,
                component: flags[rng.below(flags.len())].into(),
                value: if rng.below(3) == 0 { "false" } else { "true" }.into(),
            }),
            12 => steps.push(Step::Set {
                p,
                component: "label".into(),
                value: (1 + rng.below(3)).to_string(),
            }),
            13 => steps.push(if rng.below(2) == 0 {
                Step::Get { p }
            } else {
                Step::GetComponent {
                    p,
                    component: ["serial", "label", "send"][rng.below(3)].into(),
                }
            }),
            14 => {
                if next_child < MAX_PROCS {
                    let child = next_child;
                    next_child += 1;
                    if rng.below(2) == 0 {
                        steps.push(Step::Spawn { p, child });
                    } else {
                        if !trapping.contains(&p) {
                            trapping.push(p);
                            steps.push(Step::TrapExit { p });
                        }
                        steps.push(Step::SpawnLink { p, child });
                        linked_child.push((p, child));
                    }
                    alive.push(child);
                }
            }
            15 => {
                if let Some(i) = (!linked_child.is_empty()).then(|| rng.below(linked_child.len())) {
                    let (parent, child) = linked_child[i];
                    let child_has_children = linked_child.iter().any(|(pp, _)| *pp == child);
                    if alive.contains(&parent) && !child_has_children {
                        linked_child.remove(i);
                        alive.retain(|x| *x != child);
                        queues.remove(&child);
                        steps.push(Step::Exit {
                            p: child,
                            reason: "bye".into(),
                        });
                        steps.push(Step::RecvExit {
                            p: parent,
                            from: child,
                        });
                    }
                }
            }
            16 => {
                if saved {
                    steps.push(Step::Restore { p, slot: 1 });
                } else {
                    steps.push(Step::Save { p, slot: 1 });
                    saved = true;
                }
            }
            17 => steps.push(Step::SetEmpty { p }),
            18 => {
                if rng.below(3) == 0 {
                    steps.push(Step::Reset { p });
                }
            }
            _ => steps.push(Step::Print {
                p,
                info: "info".into(),
            }),
        }
    }
    Scenario {
        id,
        name: format!("random seed {seed:#x}"),
        steps,
    }
}

/// A rendered event's emitting process: the receiver of a receive, else the sender.
fn emitter(line: &str) -> String {
    let f: Vec<&str> = line.split(' ').collect();
    match (f.get(1), f.get(4), f.get(5)) {
        (Some(&"'receive'"), _, Some(to)) => (*to).to_string(),
        (_, Some(from), _) => (*from).to_string(),
        _ => String::new(),
    }
}

/// Events grouped by emitting process, each group in order.
pub fn per_emitter(events: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in events {
        m.entry(emitter(e)).or_default().push(e.clone());
    }
    m
}

/// Lines for the differential report: the first difference between two outcomes.
pub fn first_difference(reference: &Outcome, otp: &Outcome) -> Option<String> {
    let mut s = String::new();
    if reference.fail.is_some() || otp.fail.is_some() {
        let _ = write!(
            s,
            "failure: reference {:?}, otp {:?}",
            reference.fail, otp.fail
        );
        return Some(s);
    }
    for (i, (r, o)) in reference.results.iter().zip(otp.results.iter()).enumerate() {
        if r != o {
            return Some(format!("result #{i}: reference `{r}`, otp `{o}`"));
        }
    }
    if reference.results.len() != otp.results.len() {
        return Some(format!(
            "result count: reference {}, otp {}",
            reference.results.len(),
            otp.results.len()
        ));
    }
    if reference.events == otp.events {
        // Same events; each process's own events must also come in the same order (the tracer
        // receives a process's events in the order the process generated them).
        let (r, o) = (
            per_emitter(&reference.events_in_order),
            per_emitter(&otp.events_in_order),
        );
        if r != o {
            return Some(format!("event order differs: reference {r:?}, otp {o:?}"));
        }
    } else {
        let only_ref: Vec<_> = reference
            .events
            .iter()
            .filter(|e| !otp.events.contains(e))
            .collect();
        let only_otp: Vec<_> = otp
            .events
            .iter()
            .filter(|e| !reference.events.contains(e))
            .collect();
        return Some(format!(
            "events differ: only in reference {only_ref:?}; only in otp {only_otp:?}"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default differential run (200 scenarios from seed 0x5e9) exercises every step kind,
    /// and every generated scenario runs on the reference without a failure.
    #[test]
    fn random_scenarios_cover_every_step_kind() {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..200u64 {
            let sc = random_scenario(100 + i as u32, 0x5e9 + i, 24);
            assert_eq!(
                run_reference(&sc, Dialect::Otp25).fail,
                None,
                "{}",
                sc.to_erl()
            );
            for st in &sc.steps {
                let erl = st.to_erl();
                let kind = erl[1..].split(',').next().unwrap_or("").to_string();
                seen.insert(if matches!(st, Step::GetComponent { .. }) {
                    "get/1".into()
                } else if matches!(st, Step::PrintLabel { .. }) {
                    "print/2".into()
                } else {
                    kind
                });
            }
        }
        let want = [
            "spawn",
            "spawn_link",
            "send",
            "recv",
            "recv_exit",
            "trap_exit",
            "exit",
            "set",
            "set_empty",
            "save",
            "restore",
            "get",
            "get/1",
            "print",
            "print/2",
            "reset",
        ];
        for k in want {
            assert!(
                seen.contains(k),
                "no {k} step in 200 random scenarios: {seen:?}"
            );
        }
    }

    #[test]
    fn bad_values_are_badarg_on_the_reference() {
        let sc = Scenario {
            id: 1,
            name: "bad".into(),
            steps: vec![
                Step::Set {
                    p: 0,
                    component: "bogus".into(),
                    value: "true".into(),
                },
                Step::Set {
                    p: 0,
                    component: "serial".into(),
                    value: "{a,1}".into(),
                },
                Step::Set {
                    p: 0,
                    component: "label".into(),
                    value: "\"str\"".into(),
                },
                Step::Send {
                    p: 0,
                    to: 7,
                    tag: "m".into(),
                },
            ],
        };
        let out = run_reference(&sc, Dialect::Manual);
        assert_eq!(
            out.results,
            vec![
                "1 0 error badarg",
                "2 0 error badarg",
                "3 0 error badarg",
                "4 0 error badarg"
            ]
        );
    }

    #[test]
    fn order_within_a_process_counts_across_processes_not() {
        let a = "1 send 0 1 0 1 m none".to_string();
        let b = "1 print 0 2 0 [] i none".to_string();
        let c = "1 'receive' 0 1 0 1 m none".to_string();
        let mk = |v: Vec<&String>| {
            let in_order: Vec<String> = v.into_iter().cloned().collect();
            let mut sorted = in_order.clone();
            sorted.sort();
            Outcome {
                results: vec![],
                events: sorted,
                events_in_order: in_order,
                fail: None,
            }
        };
        let r = mk(vec![&a, &c, &b]);
        assert_eq!(
            first_difference(&r, &mk(vec![&a, &b, &c])),
            None,
            "c is process 1's, a and b process 0's"
        );
        assert!(
            first_difference(&r, &mk(vec![&b, &c, &a])).is_some(),
            "process 0's a and b swapped"
        );
    }
}
