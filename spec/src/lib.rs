//! The observable semantics of `trace_pattern`, calls and `trace_info` for `local` and
//! `call_count`, as a small sequential oracle: maps and lists, no concurrency, no generations.
//! The engine must agree with it on every observation when driven by one thread
//! (`tests/tests/conformance.rs`). Quirks of ERTS are reproduced and named.
//! call_time and call_memory (processes, return frames, the logical clock) are in [`timem`];
//! `oracle/tests/conformance.rs` compares them with the engine op by op.

use bpspec_reference::{
    FlagSet, InfoItem, InfoValue, Mfa, Pattern, PatternError, PatternOp, TraceSpec,
};
use std::collections::BTreeMap;

/// call_time and call_memory: counters, processes, the logical clock.
pub mod timem;

/// Code loading in scenarios: load, delete, purge, soft_purge of a module.
pub mod code;
/// How a process enters a function ([`Oracle::enter`]).
pub mod entry;
/// return_trace / exception_trace frames.
pub mod frames;
/// Global call trace: export entries, remote calls, the local/global exclusion.
pub mod global;
/// Loading a traced module: the code index and the two load protocols (docs/nonblocking-load.md).
pub mod load;
/// Meta trace: `{meta, Pid}`.
pub mod meta;

pub use entry::Entry;

/// One session's breakpoint on one function.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Node {
    /// Creation order; chains are walked newest first.
    seq: u64,
    local: bool,
    /// `(value, running)`.
    count: Option<(u64, bool)>,
    /// call_time / call_memory counters.
    time: Option<timem::Counter>,
    memory: Option<timem::Counter>,
}

impl Node {
    fn empty(&self) -> bool {
        !self.local && self.count.is_none() && self.time.is_none() && self.memory.is_none()
    }
}

/// The oracle's whole state.
#[derive(Clone, Debug, Default)]
pub struct Oracle {
    funcs: Vec<Mfa>,
    nodes: BTreeMap<(usize, u32), Node>,
    seq: u64,
    /// Processes seen by call_time/call_memory ops, by pid.
    procs: BTreeMap<u64, timem::OProc>,
    /// The logical clock (microseconds).
    now: i64,
    /// Export entries and their global breakpoints ([`global`]).
    exports: global::Exports,
    /// Match specs of local breakpoints (return_trace / exception_trace).
    frames: frames::Frames,
    /// Trace sessions created and destroyed (sessions.rs).
    sessions: sessions::SessionTable,
    /// Meta-traced functions and the meta tracer's messages ([`meta`]).
    meta: meta::MetaTable,
    /// Module versions: deleted modules ([`code`]).
    code: code::CodeTable,
}

impl Oracle {
    pub fn new(funcs: Vec<Mfa>) -> Oracle {
        Oracle {
            funcs,
            ..Oracle::default()
        }
    }

    /// `erlang:trace_pattern/3` (`trace:function/4` in a session): the one entry, with the
    /// engine's argument (`Engine::trace_pattern`). Returns the number of matched functions
    /// (for global trace, of matched export entries). `spec` names the session, the flag list,
    /// `global` ([`global`]), a match spec ([`frames`]) and `{meta, Pid}` ([`meta`]: only the
    /// pid of the tracer's `{tracer, Pid}` state is kept). The oracle has no global match
    /// specs (it does not claim them; asked for one, it panics).
    pub fn trace_pattern(
        &mut self,
        pat: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        let (session, fl) = (spec.session, spec.flags);
        if let Some(tracer) = &spec.meta {
            if session != 0 {
                return Err(PatternError::BadArg(
                    "meta trace is implemented for the legacy session only".into(),
                ));
            }
            if spec.global {
                return Err(PatternError::BadArg(
                    "meta cannot be combined with global".into(),
                ));
            }
            // With meta alone, only the count of matches; the other flags first, as ERTS.
            let n = if fl.local || fl.counters() {
                self.pattern_local(session, pat, op, fl, false)?
            } else {
                self.matching(pat).len()
            };
            self.set_meta(pat, op, tracer);
            return Ok(n);
        }
        if spec.global {
            assert!(
                spec.ms.is_none(),
                "the sequential oracle has no global match specs"
            );
            if fl != FlagSet::default() {
                return Err(PatternError::BadArg(
                    "global cannot be combined with local, call_count, call_time or call_memory"
                        .into(),
                ));
            }
            return Ok(self.pattern_global(session, pat, op));
        }
        let n = self.pattern_local(session, pat, op, fl, spec.ms.is_some())?;
        if let Some(ms) = &spec.ms {
            self.set_match_spec(session, pat, op, ms);
        }
        Ok(n)
    }

    /// The local flags of `trace_pattern` (call_time and call_memory too); with `ms`, a match
    /// spec comes with them, which needs `local` (frames.rs FR5).
    fn pattern_local(
        &mut self,
        session: u32,
        pat: &Pattern,
        op: PatternOp,
        fl: FlagSet,
        ms: bool,
    ) -> Result<usize, PatternError> {
        fl.check(op)?;
        if ms && !fl.local {
            return Err(PatternError::BadArg(
                "a match spec needs local or global (not only call_count/time/memory)".into(),
            ));
        }
        let matched = self.matching(pat);
        for &f in &matched {
            let key = (f, session);
            if fl.local {
                self.frames.forget(f, session); // frames.rs FR5
            }
            if op == PatternOp::False {
                if let Some(n) = self.nodes.get_mut(&key) {
                    n.local &= !fl.local;
                    if fl.call_count {
                        n.count = None;
                    }
                    if fl.call_time {
                        n.time = None;
                    }
                    if fl.call_memory {
                        n.memory = None;
                    }
                }
            } else if self.nodes.contains_key(&key) || op == PatternOp::True || fl.local {
                // `local` with pause/restart sets local trace as `true` does (ERTS).
                self.seq += 1;
                let seq = self.seq;
                let n = self.nodes.entry(key).or_insert(Node {
                    seq,
                    local: false,
                    count: None,
                    time: None,
                    memory: None,
                });
                n.local |= fl.local;
                if fl.call_count {
                    n.count = match (op, n.count) {
                        (PatternOp::Pause, Some((v, _))) => Some((v, false)),
                        // true/restart on a counter reset it; a node without a counter gets a
                        // running one even for pause/restart (the ERTS quirk).
                        _ => Some((0, true)),
                    };
                }
                // The same rule for call_time/call_memory: pause stops an existing counter,
                // anything else starts a fresh one (also pause on a node without one).
                for (on, c) in [(fl.call_time, &mut n.time), (fl.call_memory, &mut n.memory)] {
                    if on {
                        *c = match (op, c.take()) {
                            (PatternOp::Pause, Some(mut c)) => {
                                c.running = false;
                                Some(c)
                            }
                            _ => Some(timem::Counter::running()),
                        };
                    }
                }
            }
            // Consolidate drops a node whose flags are all off.
            if self.nodes.get(&key).is_some_and(Node::empty) {
                self.nodes.remove(&key);
            }
        }
        self.local_clears_global(session, &matched, op);
        Ok(matched.len())
    }

    /// A call of `f` by `pid`, call-traced in the sessions of `call_traced`, without a process
    /// stack (no call_time/call_memory, no frames: see [`Oracle::enter`]). Returns the local
    /// call trace events `(session, pid, f)` in delivery order (newest session first).
    pub fn call(&mut self, f: usize, pid: u64, call_traced: u64) -> Vec<(u32, u64, usize)> {
        self.hit(f, pid, call_traced, false)
    }

    /// The breakpoint of `f` hit by `pid`; with `timem`, call_time/call_memory act on the
    /// process (timem.rs), in chain order, after each node's local trace and count.
    fn hit(&mut self, f: usize, pid: u64, call_traced: u64, timem: bool) -> Vec<(u32, u64, usize)> {
        let mut on_f: Vec<(&(usize, u32), &mut Node)> =
            self.nodes.range_mut((f, 0)..=(f, u32::MAX)).collect();
        on_f.sort_by_key(|(_, n)| std::cmp::Reverse(n.seq));
        let mut events = Vec::new();
        let mut acts = Vec::new();
        for ((_, s), n) in on_f {
            if n.local && call_traced & (1 << s) != 0 {
                events.push((*s, pid, f));
            }
            if let Some((v, true)) = &mut n.count {
                *v += 1;
            }
            let traced = call_traced & (1 << s) != 0;
            let run = |c: &Option<timem::Counter>| traced && c.as_ref().is_some_and(|c| c.running);
            // The return_trace frame of this node comes before its call_time step (frames.rs).
            let rx = (timem && traced && n.local)
                .then(|| self.frames.rx(f, *s))
                .flatten();
            // FR6: a local hit that sends `call` pushes the return_to frame first.
            let ret_to = timem
                && traced
                && n.local
                && self
                    .procs
                    .get(&pid)
                    .is_some_and(|p| p.return_to & (1 << s) != 0);
            if timem && (ret_to || rx.is_some() || run(&n.time) || run(&n.memory)) {
                acts.push((*s, ret_to, rx, run(&n.time), run(&n.memory)));
            }
        }
        for (s, ret_to, rx, t, m) in acts {
            if ret_to {
                self.push_ret_to(pid, s);
            }
            if let Some(rx) = rx {
                self.push_rx(pid, rx);
            }
            if t || m {
                self.timem_breakpoint(s, f, pid, t, m);
            }
        }
        events
    }

    pub fn trace_info(&self, session: u32, mfa: &Mfa, item: InfoItem) -> InfoValue {
        let Some(f) = self.position(mfa) else {
            return InfoValue::Undefined;
        };
        let Some(n) = self.nodes.get(&(f, session)) else {
            return InfoValue::False;
        };
        match item {
            InfoItem::Traced if n.local => InfoValue::Local,
            InfoItem::Traced => InfoValue::False,
            InfoItem::CallCount => n
                .count
                .map_or(InfoValue::False, |(v, _)| InfoValue::Count(v)),
        }
    }

    /// Is `f`'s instruction patched? Iff some session has any flag on it: a paused counter
    /// (COUNT without COUNT_ACTIVE) keeps the breakpoint installed.
    pub fn is_patched(&self, f: usize) -> bool {
        self.nodes.range((f, 0)..=(f, u32::MAX)).next().is_some()
    }

    /// `session`'s call_time counter on `f`: whether it runs (not paused).
    pub fn time_counter(&self, session: u32, f: usize) -> Option<bool> {
        self.nodes
            .get(&(f, session))
            .and_then(|n| n.time.as_ref().map(|c| c.running))
    }

    /// `session`'s call_memory counter on `f`: whether it runs (not paused).
    pub fn memory_counter(&self, session: u32, f: usize) -> Option<bool> {
        self.nodes
            .get(&(f, session))
            .and_then(|n| n.memory.as_ref().map(|c| c.running))
    }

    /// `session`'s call_count counter on `f`: its value and whether it runs (not paused).
    pub fn counter(&self, session: u32, f: usize) -> Option<(u64, bool)> {
        self.nodes.get(&(f, session)).and_then(|n| n.count)
    }
}
pub mod model;

/// Linearizability of concurrent histories with code loading against the oracle.
pub mod linearize;

/// Trace sessions: create, destroy.
pub mod sessions;
