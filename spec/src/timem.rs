//! call_time and call_memory in the sequential oracle: per function and session a counter
//! (`pid -> (count, accumulated)`) that runs or is paused, and per process the state ERTS keeps
//! for them (one "pbt" per session and kind: the function being charged and its baseline), a
//! stack of continuation and trace-return frames, the words allocated so far, and whether it is
//! scheduled in. One logical clock (`now`, microseconds) for everything.
//!
//! The rules, in ERTS's terms (`erts_trace_call_acc`, `erts_call_trace_return`,
//! `erts_schedule_time_break`, `next_catch`):
//! - A hit of a running counter by a call-traced process charges the function the pbt names with
//!   the time (words) since its baseline, counts the call, makes `f` the charged function, and
//!   pushes a trace-return frame unless the top frame already is one (tail calls reuse it).
//! - A return through a trace frame charges the charged function and restores the caller saved
//!   in the frame. An exception skips trace frames without charging.
//! - Charges go to the counter that exists *now* on the charged function, running or paused:
//!   pause freezes the count but not the time of calls in flight; after `false` there is nothing
//!   to charge; after `true`/`restart` the fresh counter gets the rest of the in-flight time.
//! - Schedule-out charges the running slice to each charged function; schedule-in restarts the
//!   time baselines (only for processes with the call trace flag, as ERTS).

use crate::{Entry, Oracle};
use bpspec_reference::{InfoKey, Mfa, Term};
use std::collections::BTreeMap;

/// A call_time or call_memory counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counter {
    pub running: bool,
    /// `pid -> (count, accumulated)`.
    pub per_pid: BTreeMap<u64, (i64, i64)>,
}

impl Counter {
    pub fn running() -> Counter {
        Counter {
            running: true,
            per_pid: BTreeMap::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Time,
    Memory,
}

/// `process_breakpoint_trace_t`: the function being charged and its baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pbt {
    session: u32,
    ci: Option<usize>,
    acc: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    Code,
    Trace {
        prev: Option<usize>,
        time: bool,
        memory: bool,
        session: u32,
    },
    /// A return_trace / exception_trace frame (frames.rs).
    Rx(crate::frames::Rx),
    /// A return_to frame of a session (frames.rs FR6).
    RetTo(u32),
}

/// A process as call_time/call_memory see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OProc {
    call_traced: u64,
    pub(crate) running: bool,
    time: Vec<Pbt>,
    memory: Vec<Pbt>,
    pub(crate) stack: Vec<Frame>,
    allocated: i64,
    /// The function executing now (`None` at the top: the harness that makes the calls).
    pub(crate) current: Option<usize>,
    /// For each `Frame::Code` on the stack, bottom to top: the function it returns into.
    pub(crate) conts: Vec<Option<usize>>,
    /// The sessions in which the process has the `return_to` flag (frames.rs FR6).
    pub(crate) return_to: u64,
}

/// Bound on the simulated stack.
pub(crate) const MAX_STACK: usize = 1 << 16;

type Nodes = BTreeMap<(usize, u32), crate::Node>;

/// Add `(count, acc)` for `pid` to `session`'s counter of `kind` on `f`, if it exists (running
/// or paused); otherwise nothing ("breakpoint was removed").
fn charge(nodes: &mut Nodes, session: u32, f: usize, kind: Kind, pid: u64, count: i64, acc: i64) {
    let Some(n) = nodes.get_mut(&(f, session)) else {
        return;
    };
    let c = match kind {
        Kind::Time => &mut n.time,
        Kind::Memory => &mut n.memory,
    };
    if let Some(c) = c {
        let e = c.per_pid.entry(pid).or_insert((0, 0));
        e.0 += count;
        e.1 += acc;
    }
}

impl OProc {
    /// The functions `fs` became old code (code.rs CL6): what this process charges to them
    /// (the function being charged, the call_time/call_memory frames' functions to return
    /// into) names code whose breakpoints are gone, so it charges nothing from now on.
    pub(crate) fn forget_code(&mut self, fs: &[usize]) {
        let old = |f: &mut Option<usize>| {
            if f.is_some_and(|g| fs.contains(&g)) {
                *f = None;
            }
        };
        for b in self.time.iter_mut().chain(self.memory.iter_mut()) {
            old(&mut b.ci);
        }
        for fr in &mut self.stack {
            if let Frame::Trace { prev, .. } = fr {
                old(prev);
            }
        }
    }

    fn list(&mut self, kind: Kind) -> &mut Vec<Pbt> {
        match kind {
            Kind::Time => &mut self.time,
            Kind::Memory => &mut self.memory,
        }
    }
    fn clock(&self, kind: Kind, now: i64) -> i64 {
        match kind {
            Kind::Time => now,
            Kind::Memory => self.allocated,
        }
    }
}

impl Oracle {
    pub(crate) fn proc(&mut self, pid: u64, call_traced: u64) -> &mut OProc {
        let p = self.procs.entry(pid).or_insert(OProc {
            call_traced,
            running: true,
            time: Vec::new(),
            memory: Vec::new(),
            stack: Vec::new(),
            allocated: 0,
            current: None,
            conts: Vec::new(),
            return_to: 0,
        });
        p.call_traced = call_traced;
        p
    }

    /// Process `pid` enters `f` by a body call (a continuation is pushed) or a tail call, local
    /// or remote (the export entry's global breakpoints first, global.rs). Returns the call
    /// trace events, as [`Oracle::call`]; the meta tracer gets its message (meta.rs).
    pub fn enter(
        &mut self,
        f: usize,
        pid: u64,
        call_traced: u64,
        how: Entry,
    ) -> Vec<(u32, u64, usize)> {
        if !how.old {
            self.meta_hit(f, pid);
        }
        let mut events = if how.remote && !how.old {
            self.export_hit(f, pid, call_traced)
        } else {
            Vec::new()
        };
        let p = self.proc(pid, call_traced);
        assert!(p.running, "pid {pid} calls while scheduled out");
        if !how.tail {
            assert!(p.stack.len() < MAX_STACK, "stack overflow (pid {pid})");
            p.stack.push(Frame::Code);
            let cur = p.current;
            p.conts.push(cur);
        }
        p.current = Some(f);
        if !how.old {
            events.extend(self.hit(f, pid, call_traced, true));
        }
        events
    }

    /// `erts_trace_call_acc` for both kinds, then the trace-return frame.
    pub(crate) fn timem_breakpoint(&mut self, s: u32, f: usize, pid: u64, time: bool, mem: bool) {
        let now = self.now;
        let p = self.procs.get_mut(&pid).expect("entered first");
        let mut prev = None;
        for (on, kind) in [(time, Kind::Time), (mem, Kind::Memory)] {
            if !on {
                continue;
            }
            let accum = p.clock(kind, now);
            let list = p.list(kind);
            let last = match list.iter_mut().find(|b| b.session == s) {
                None => {
                    list.insert(
                        0,
                        Pbt {
                            session: s,
                            ci: None,
                            acc: accum,
                        },
                    );
                    None
                }
                Some(b) => {
                    let old = b.ci;
                    if let Some(ci) = old {
                        charge(&mut self.nodes, s, ci, kind, pid, 0, accum - b.acc);
                    }
                    old
                }
            };
            charge(&mut self.nodes, s, f, kind, pid, 1, 0);
            let b = list.iter_mut().find(|b| b.session == s).expect("pbt");
            b.ci = Some(f);
            b.acc = accum;
            prev = last;
        }
        // Any trace frame on top (also a return_trace or return_to frame this hit just pushed,
        // frames.rs FR2).
        if !matches!(
            p.stack.last(),
            Some(Frame::Trace { .. } | Frame::Rx(_) | Frame::RetTo(_))
        ) {
            assert!(p.stack.len() < MAX_STACK, "stack overflow (pid {pid})");
            p.stack.push(Frame::Trace {
                prev,
                time,
                memory: mem,
                session: s,
            });
        }
    }

    /// Return from the current function: every trace frame on top charges, then the
    /// continuation pops.
    pub fn ret(&mut self, pid: u64, call_traced: u64) {
        self.ret_frames(pid, call_traced, &Term::Atom("ok"));
    }

    /// [`Oracle::ret`] with the value the function returns; the messages of the
    /// return_trace/exception_trace frames passed (frames.rs FR3), in order.
    pub(crate) fn ret_frames(
        &mut self,
        pid: u64,
        call_traced: u64,
        value: &Term,
    ) -> Vec<crate::frames::FrameMsg> {
        let now = self.now;
        let p = self.proc(pid, call_traced);
        assert!(p.running, "pid {pid} returns while scheduled out");
        let mut msgs = Vec::new();
        for _ in 0..=MAX_STACK {
            let p = self.procs.get_mut(&pid).expect("exists");
            match p.stack.pop() {
                None => panic!("pid {pid} returned with an empty stack"),
                Some(Frame::Code) => {
                    p.current = p.conts.pop().expect("a continuation has its function");
                    return msgs;
                }
                Some(Frame::Rx(rx)) => {
                    msgs.extend(crate::frames::on_return(rx, call_traced, value));
                }
                Some(Frame::RetTo(s)) => {
                    let to = p.conts.last().copied().flatten();
                    msgs.extend(crate::frames::on_return_to(s, call_traced, to));
                }
                Some(Frame::Trace {
                    prev,
                    time,
                    memory,
                    session,
                }) => {
                    for (on, kind) in [(time, Kind::Time), (memory, Kind::Memory)] {
                        if !on {
                            continue;
                        }
                        let accum = p.clock(kind, now);
                        let Some(b) = p.list(kind).iter_mut().find(|b| b.session == session) else {
                            continue;
                        };
                        let charged = b.ci.map(|ci| (ci, accum - b.acc));
                        b.ci = prev;
                        b.acc = accum;
                        if let Some((ci, d)) = charged {
                            charge(&mut self.nodes, session, ci, kind, pid, 0, d);
                        }
                    }
                }
            }
        }
        panic!("pid {pid}: return unwound more than {MAX_STACK} frames");
    }

    /// An exception caught at the top: trace frames are skipped without charging (`next_catch`).
    pub fn unwind(&mut self, pid: u64, call_traced: u64) {
        let p = self.proc(pid, call_traced);
        p.stack.clear();
        p.conts.clear();
        p.current = None;
    }

    pub fn schedule_out(&mut self, pid: u64, call_traced: u64) {
        let now = self.now;
        let p = self.proc(pid, call_traced);
        assert!(p.running, "pid {pid} scheduled out twice");
        p.running = false;
        if call_traced != 0 {
            let charges: Vec<(u32, usize, i64)> = p
                .time
                .iter()
                .filter_map(|b| b.ci.map(|ci| (b.session, ci, now - b.acc)))
                .collect();
            for (s, ci, d) in charges {
                charge(&mut self.nodes, s, ci, Kind::Time, pid, 0, d);
            }
        }
    }

    pub fn schedule_in(&mut self, pid: u64, call_traced: u64) {
        let now = self.now;
        let p = self.proc(pid, call_traced);
        assert!(!p.running, "pid {pid} scheduled in twice");
        p.running = true;
        if call_traced != 0 {
            for b in &mut p.time {
                b.acc = now;
            }
        }
    }

    /// Advance the logical clock by `dt` microseconds.
    pub fn advance(&mut self, dt: i64) {
        assert!(dt >= 0, "the clock never goes back ({dt})");
        self.now += dt;
    }

    /// Process `pid` allocates `words` (the call_memory clock).
    pub fn alloc(&mut self, pid: u64, call_traced: u64, words: i64) {
        assert!(words >= 0, "allocation of {words} words");
        self.proc(pid, call_traced).allocated += words;
    }

    /// `trace_info(Session, MFA, Key)` as an Erlang term, in ERTS's shapes (OTP 26+ `all`),
    /// before meta trace patches it ([`Oracle::trace_info_term`], meta.rs).
    pub(crate) fn info_without_meta(&self, session: u32, mfa: &Mfa, key: InfoKey) -> Term {
        if let Some(t) = self.global_info(session, mfa, key) {
            return t;
        }
        let pair = |v: Term| Term::Tuple(vec![Term::Atom(key.atom()), v]);
        let Some(f) = self.position(mfa) else {
            return pair(Term::Atom("undefined"));
        };
        let Some(n) = self.nodes.get(&(f, session)) else {
            return pair(Term::Atom("false"));
        };
        let no = || Term::Atom("false");
        let traced = Term::Atom(if n.local { "local" } else { "false" });
        let ms = if n.local {
            self.frames.ms_term(f, session)
        } else {
            no()
        };
        let count = n.count.map_or(no(), |(v, _)| Term::Int(v as i64));
        let rows = |c: &Option<Counter>, time: bool| {
            c.as_ref().map_or(no(), |c| {
                Term::List(
                    c.per_pid
                        .iter()
                        .map(|(&pid, &(k, a))| {
                            let mut t = vec![Term::Pid(pid), Term::Int(k)];
                            if time {
                                t.extend([Term::Int(a / 1_000_000), Term::Int(a % 1_000_000)]);
                            } else {
                                t.push(Term::Int(a));
                            }
                            Term::Tuple(t)
                        })
                        .collect(),
                )
            })
        };
        let one = |k: InfoKey| match k {
            InfoKey::Traced => traced.clone(),
            InfoKey::MatchSpec => ms.clone(),
            InfoKey::Meta | InfoKey::MetaMatchSpec => no(),
            InfoKey::CallCount => count.clone(),
            InfoKey::CallTime => rows(&n.time, true),
            InfoKey::CallMemory => rows(&n.memory, false),
            InfoKey::All => unreachable!("`all` is not an item of `all`"),
        };
        all_or_one(key, one)
    }
}

/// The items of `trace_info(_, all)`, in OTP 26+'s order.
const ALL_ITEMS: [InfoKey; 7] = [
    InfoKey::Traced,
    InfoKey::MatchSpec,
    InfoKey::Meta,
    InfoKey::MetaMatchSpec,
    InfoKey::CallMemory,
    InfoKey::CallTime,
    InfoKey::CallCount,
];

/// `{Key, Value}` with `one`'s value of `key`; for `all`, `{all, [{Item, Value}, ...]}`.
pub(crate) fn all_or_one(key: InfoKey, one: impl Fn(InfoKey) -> Term) -> Term {
    let kv = |k: InfoKey, v: Term| Term::Tuple(vec![Term::Atom(k.atom()), v]);
    match key {
        InfoKey::All => kv(key, Term::List(ALL_ITEMS.map(|k| kv(k, one(k))).to_vec())),
        _ => kv(key, one(key)),
    }
}
