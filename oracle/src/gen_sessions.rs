//! Random scenarios with trace sessions: a scenario from [`crate::gen::scenario`]
//! rewritten so that its `trace_pattern`, `trace_info` and `trace_flags` ops go to the legacy
//! session or to one of two dynamic sessions, with `session_create` (plus `trace_flags` on for
//! some processes in the new session) and `session_destroy` ops in between. Valid by
//! construction (a session is used only while alive, created once); they need OTP 27, so a
//! differential run skips them on an older node.
//!
//! Session events are a short list of `(position, kind, arg)` draws, sorted by position (the
//! index of the base op they precede; past the last op they are dropped): create the next session (and turn `call` tracing on in it
//! for the first process and for others by `arg`'s bits), destroy a live one, or switch the
//! "current" session, the one the following session-carrying ops go to. Every scenario starts
//! by creating s1 and making it current. Removing a base op or an event moves the others by at
//! most one place, so counterexamples shrink.

use crate::gen::{self, GenConfig};
use crate::scenario::{Op, Scenario, TraceFlagsOp};
use proptest::prelude::*;

/// The dynamic sessions a generated scenario declares.
pub const SESSION_NAMES: [&str; 2] = ["s1", "s2"];

/// One session event: `(position, kind, arg)`.
type Event = (u8, u8, u8);

/// A random valid scenario with sessions.
pub fn scenario(cfg: GenConfig) -> impl Strategy<Value = Scenario> {
    (
        gen::scenario(cfg),
        proptest::collection::vec(
            (0..cfg.max_ops.clamp(2, 255) as u8, 0u8..4, any::<u8>()),
            0..6,
        ),
    )
        .prop_map(|(sc, events)| with_sessions(sc, &events))
}

/// Rewrite `sc` (legacy-only) to use sessions, as the module header says.
pub fn with_sessions(mut sc: Scenario, events: &[Event]) -> Scenario {
    assert!(sc.sessions.is_empty(), "the base scenario has no sessions");
    sc.sessions = SESSION_NAMES.iter().map(|s| s.to_string()).collect();
    let procs: Vec<String> = sc.processes.iter().map(|p| p.name.clone()).collect();
    let base = std::mem::take(&mut sc.ops);
    // (op index before which it happens, kind, arg); past the last op: no effect, dropped.
    let mut events: Vec<(usize, u8, u8)> = events
        .iter()
        .map(|&(pos, kind, arg)| (pos as usize, kind, arg))
        .filter(|e| e.0 < base.len())
        .collect();
    events.sort_by_key(|e| e.0);
    let mut created = 0usize;
    // Live sessions, oldest first; "legacy" is always there.
    let mut live: Vec<String> = vec!["legacy".into()];
    let mut current = "legacy".to_string();
    let mut ops = Vec::new();
    let create = |created: &mut usize, live: &mut Vec<String>, ops: &mut Vec<Op>, arg: u8| {
        if *created == SESSION_NAMES.len() {
            return None;
        }
        let name = SESSION_NAMES[*created].to_string();
        *created += 1;
        ops.push(Op::SessionCreate(name.clone()));
        for (i, p) in procs.iter().enumerate() {
            if i == 0 || (arg >> i) & 1 == 1 {
                ops.push(Op::TraceFlags(TraceFlagsOp {
                    process: p.clone(),
                    session: name.clone(),
                    on: true,
                    flags: vec!["call".into()],
                }));
            }
        }
        live.push(name.clone());
        Some(name)
    };
    current = create(&mut created, &mut live, &mut ops, 0).unwrap_or(current);
    let mut ev = events.iter().peekable();
    for (i, op) in base.into_iter().enumerate() {
        while let Some(&(_, kind, arg)) = ev.next_if(|e| e.0 <= i) {
            match kind {
                0 => {
                    if let Some(n) = create(&mut created, &mut live, &mut ops, arg) {
                        current = n;
                    }
                }
                1 if live.len() > 1 => {
                    let gone = live.remove(1 + arg as usize % (live.len() - 1));
                    ops.push(Op::SessionDestroy(gone.clone()));
                    if current == gone {
                        current = "legacy".into();
                    }
                }
                _ => current = live[arg as usize % live.len()].clone(),
            }
        }
        let s = current.clone();
        ops.push(match op {
            Op::TracePattern(mut t) => {
                t.session = s;
                Op::TracePattern(t)
            }
            Op::TraceInfo(mut t) => {
                t.session = s;
                Op::TraceInfo(t)
            }
            Op::TraceFlags(mut t) => {
                t.session = s;
                Op::TraceFlags(t)
            }
            other => other,
        });
    }
    sc.ops = ops;
    sc.name = format!("{} (sessions)", sc.name);
    sc
}

/// `n` scenarios with sessions from a fixed seed, for batch differential runs.
pub fn sample(cfg: GenConfig, n: usize, seed: u64) -> Vec<Scenario> {
    gen::sample_of(scenario(cfg), n, seed, |i| {
        format!("generated with sessions, seed {seed} #{i}")
    })
}
