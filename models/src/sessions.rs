//! Models of trace sessions on one function's chain and of the session tracer, shared by the
//! loom and shuttle harnesses (`tests/sessions_loom.rs`, `tests/sessions_shuttle.rs`).
//!
//! One model = an engine with sessions 0, 1 (and 2), a stager thread running a short script
//! (trace_pattern in a session, destroy a session, remove the session tracer) and scheduler
//! threads calling functions as a process traced in every session, between progress points.
//!
//! Properties (docs/sessions.md numbers them):
//! - S1 nobody walks onto a freed node (engine liveness assertion + loom's cells);
//! - S2 nobody misses a node that was linked before their hit began and is still active when it
//!   ended: every hit acts on flags some generation had, generations only move forward per
//!   scheduler, and after an op returned no hit acts on an older generation (the I3/I4 check of
//!   `crate::run`, over all sessions of the chain);
//! - S3 isolation: session 1's tracer receives exactly one call message per hit that acted on
//!   session 1's local flag (when the tracer stays and the session lives);
//! - S4 a removed tracer is never called after it was freed (liveness word checked after the
//!   call, loom's cells);
//! - at rest (I5) after the run, and a destroyed session refuses queries.

use bpspec_reference::sync::Arc;
use bpspec_reference::{
    flags, Engine, FlagSet, Mailbox, Mutant, PatternOp, Proc, ProcFlags, Process, ProcessTracer,
    SessionError, ThreadProgress, TraceSpec,
};

use crate::{placed_engine, schedulers_vs_stager, trace_on, Placement, Step};

/// One stager operation.
#[derive(Clone, Copy, Debug)]
pub enum SOp {
    /// trace_pattern on function 0 in `session`.
    Pattern {
        session: u32,
        op: PatternOp,
        local: bool,
        count: bool,
    },
    /// Destroy `session`.
    Destroy(u32),
    /// Remove `session`'s session tracer.
    RemoveTracer(u32),
    /// Replace `session`'s session tracer by another one (a second mailbox).
    ReplaceTracer(u32),
}

/// A session model configuration.
#[derive(Clone, Debug)]
pub struct SessionScenario {
    pub name: &'static str,
    pub setup: Vec<SOp>,
    pub ops: Vec<SOp>,
    pub schedulers: Vec<Vec<Step>>,
    /// Session 1 has a session tracer (a mailbox) from the start.
    pub tracer: bool,
}

const fn count(session: u32, op: PatternOp) -> SOp {
    SOp::Pattern {
        session,
        op,
        local: false,
        count: true,
    }
}

const fn local(session: u32, op: PatternOp) -> SOp {
    SOp::Pattern {
        session,
        op,
        local: true,
        count: false,
    }
}

/// The loom scenarios: one stager, one scheduler, one function.
pub fn loom_scenarios() -> Vec<SessionScenario> {
    use PatternOp::*;
    use Step::*;
    // One scheduler calling f0 on both sides of a progress point; session 1 has a tracer or not.
    let scn = |tracer| {
        move |name, setup: &[SOp], ops: &[SOp]| SessionScenario {
            name,
            setup: setup.to_vec(),
            ops: ops.to_vec(),
            schedulers: vec![vec![Call(0), Progress, Call(0)]],
            tracer,
        }
    };
    let (traced, untraced) = (scn(true), scn(false));
    let chain = [count(0, True), count(1, True)];
    vec![
        // A second session's node enters a patched function's chain through to_insert.
        traced("session-insert", &[count(0, True)], &[local(1, True)]),
        // The newer session's node (the head) is unlinked while the function stays patched
        // by the older one: a scheduler standing on it must walk on to the older node.
        untraced("session-unlink-head", &chain, &[count(1, False)]),
        // Destroying a session: inert at once, then its patterns go through the sequence.
        traced(
            "session-destroy",
            &[count(0, True), local(1, True)],
            &[SOp::Destroy(1)],
        ),
        // Two schedulers on the chain while the head is unlinked and a third session's node
        // is linked: insertion and removal in one trace_pattern each.
        SessionScenario {
            schedulers: vec![vec![Call(0), Call(0)], vec![Call(0), Call(0)]],
            ..untraced(
                "session-unlink-2sched",
                &chain,
                &[count(1, False), count(2, True)],
            )
        },
        // The session tracer is removed while the scheduler may be inside it.
        traced("tracer-remove", &[local(1, True)], &[SOp::RemoveTracer(1)]),
        // The session tracer is replaced while the scheduler may be inside the old one:
        // every local hit reaches exactly one of the two (S3 over both mailboxes).
        traced(
            "tracer-replace",
            &[local(1, True)],
            &[SOp::ReplaceTracer(1)],
        ),
    ]
}

/// The shuttle scenarios: the loom ones with two more schedulers, and a churn of three sessions.
pub fn shuttle_scenarios() -> Vec<SessionScenario> {
    use PatternOp::*;
    use Step::*;
    let script = |rounds: usize| -> Vec<Step> {
        (0..rounds)
            .flat_map(|r| [Call(0), Call(0), if r % 3 == 2 { Nap } else { Progress }])
            .collect()
    };
    let mut out = loom_scenarios();
    for s in out.iter_mut() {
        s.schedulers.push(script(3));
        s.schedulers.push(script(4));
    }
    out.push(SessionScenario {
        name: "session-churn",
        setup: vec![count(0, True)],
        ops: vec![
            local(1, True),
            count(2, True),
            local(1, False),
            count(1, True),
            count(0, False),
            SOp::Destroy(2),
            SOp::RemoveTracer(1),
            count(1, False),
        ],
        schedulers: (0..3).map(|_| script(6)).collect(),
        tracer: true,
    });
    out
}

const ACTED: u32 = flags::LOCAL_TRACE | flags::COUNT_ACTIVE;

fn apply<P: ThreadProgress>(e: &Engine<P>, o: &SOp, next: &std::sync::Arc<Mailbox>) {
    match *o {
        SOp::Pattern {
            session,
            op,
            local,
            count,
        } => {
            let spec = TraceSpec::counters(FlagSet {
                local,
                call_count: count,
                ..FlagSet::default()
            });
            trace_on(e, None, op, &spec.session(session));
        }
        SOp::Destroy(s) => {
            assert_eq!(e.destroy_session(s), Ok(true), "destroy session {s}");
            assert_eq!(
                e.check_session(s),
                Err(SessionError::Destroyed { session: s }),
                "a destroyed session refuses queries"
            );
        }
        SOp::ReplaceTracer(s) => {
            assert_eq!(
                e.set_session_tracer(s, Some(ProcessTracer::spec(next))),
                Ok(true)
            );
        }
        SOp::RemoveTracer(s) => {
            assert_eq!(e.set_session_tracer(s, None), Ok(true));
        }
    }
}

/// The acted flags (over every session's node) a hit on f0 would have now.
fn acted_now<P: ThreadProgress>(e: &Engine<P>) -> u32 {
    (0..3u32).fold(0, |acc, s| {
        let alive = e.session_is_alive(s);
        acc | if alive {
            crate::active_flags_at(e, s, 0)
        } else {
            0
        }
    }) & ACTED
}

/// Hit records of one scheduler.
#[derive(Clone, Copy, Debug)]
struct Seen {
    func: usize,
    acted: u32,
    returned: u32,
    /// The sessions whose call_count counter the call counted on (`Hit::counted`).
    counted: u64,
}

/// Run one execution of `scn`. Panics on any violation.
pub fn run<P: ThreadProgress>(scn: &SessionScenario, mutant: Option<Mutant>) {
    run_on::<P>(scn, mutant, Placement::Static)
}

/// [`run`] with function 0 at `placement` (the static area, or module `m`'s current version,
/// never loaded: its chain, calls and queries through the module's entry points).
pub fn run_on<P: ThreadProgress>(
    scn: &SessionScenario,
    mutant: Option<Mutant>,
    placement: Placement,
) {
    let engine = Arc::new(placed_engine::<P>(
        1,
        scn.schedulers.len(),
        mutant,
        3,
        placement,
    ));
    for s in 1..3 {
        assert_eq!(engine.create_session(&format!("s{s}")), Ok(s));
    }
    let mailbox = Mailbox::new(999);
    let replacement = Mailbox::new(998);
    if scn.tracer {
        assert_eq!(
            engine.set_session_tracer(1, Some(ProcessTracer::spec(&mailbox))),
            Ok(true)
        );
    }
    for o in &scn.setup {
        apply(&engine, o, &replacement);
    }
    // The processes are traced in every session before any op runs (a destroyed session would
    // refuse trace_process).
    let procs = call_traced_procs(&engine, scn.schedulers.len(), 3);
    let (per_sched, gens) = schedulers_vs_stager(
        &engine,
        &scn.schedulers,
        procs,
        scn.ops.len(),
        |i| apply(&engine, &scn.ops[i], &replacement),
        || acted_now(&engine),
        move |s, f, proc, returned| {
            let (acted, counted) = match placement {
                Placement::Static => {
                    s.tail_call(f, proc);
                    let h = s.hits.last().expect("call records a hit");
                    (h.flags & ACTED, h.counted)
                }
                Placement::Versions => {
                    let seen = s.call_version_proc(proc, 0, f, true, false);
                    assert_eq!(seen.version, 1, "f{f}: a call outside version 1");
                    (seen.flags & ACTED, seen.counted_in)
                }
            };
            Seen {
                func: f,
                acted,
                returned,
                counted,
            }
        },
    );
    for (id, seen) in per_sched.iter().enumerate() {
        check(id, seen, &gens);
    }
    // S3: with the tracer and session 1 in place throughout, session 1's tracer got exactly one
    // call message per hit that acted on its local flag (only session 1 sets local here); a
    // replaced tracer counts with its replacement (each hit reaches exactly one of them).
    let stays = scn.tracer
        && !scn
            .ops
            .iter()
            .any(|o| matches!(o, SOp::Destroy(1) | SOp::RemoveTracer(1)));
    if stays {
        let local_hits = per_sched
            .iter()
            .flatten()
            .filter(|c| c.acted & flags::LOCAL_TRACE != 0)
            .count();
        let mut msgs = mailbox.take();
        msgs.extend(replacement.take());
        assert_eq!(
            msgs.len(),
            local_hits,
            "S3: session 1's tracer got {} messages for {local_hits} local hits",
            msgs.len()
        );
    }
    if let Err(e) = engine.check_at_rest() {
        panic!("I5 at rest violated: {e}");
    }
    let counted = per_sched.iter().flatten().map(|c| (c.func, c.counted));
    crate::check_count_conservation(&engine, counted);
}

/// One process per scheduler (pids 100, 101, ...), call traced in sessions `0..sessions`.
pub(crate) fn call_traced_procs<P: ThreadProgress>(
    engine: &Engine<P>,
    schedulers: usize,
    sessions: u32,
) -> Vec<Proc> {
    let fl = ProcFlags {
        call: true,
        ..ProcFlags::default()
    };
    (0..schedulers)
        .map(|id| {
            let mut proc = Proc::new(Process::new(100 + id as u64));
            for sess in 0..sessions {
                engine
                    .trace_process(&mut proc, sess, true, fl, None)
                    .expect("trace_process");
            }
            proc
        })
        .collect()
}

/// S2 over one scheduler's hits (the generation argument of `crate::run`'s I3/I4 check).
fn check(id: usize, seen: &[Seen], gens: &[u32]) {
    let mut floor: Option<(usize, usize)> = None;
    for (n, c) in seen.iter().enumerate() {
        let g: Vec<usize> = (0..gens.len()).filter(|&j| gens[j] == c.acted).collect();
        let (Some(&lo), Some(&hi)) = (g.first(), g.last()) else {
            panic!(
                "S2 violated: scheduler {id}: hit {n} acted on flags {:#x}, which no generation had (generations {gens:x?})",
                c.acted
            );
        };
        assert!(
            hi >= c.returned as usize,
            "S2 violated: scheduler {id}: hit {n} acted on generation <= {hi} after op #{} returned",
            c.returned
        );
        if let Some((flo, fcall)) = floor {
            assert!(
                hi >= flo,
                "S2 violated: scheduler {id}: hit {n} acted on generation <= {hi} after hit {fcall} acted on generation >= {flo}"
            );
        }
        if floor.is_none_or(|(flo, _)| lo > flo) {
            floor = Some((lo, n));
        }
    }
}

/// Which checker kills which session mutant on which scenario.
pub fn expected_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    match checker {
        "loom" => vec![
            (LinkAtStage, "session-insert"),
            (FreeAtUnlink, "session-unlink-head"),
            (ClearNextOnUnlink, "session-unlink-head"),
            (TracerFreeWithoutWait, "tracer-remove"),
            (TracerFreeWithoutWait, "tracer-replace"),
        ],
        "shuttle" => vec![
            (FreeAtUnlink, "session-unlink-head"),
            (ClearNextOnUnlink, "session-unlink-head"),
            (TracerFreeWithoutWait, "tracer-remove"),
        ],
        // Behaviour tests on real threads (tests/tests/sessions.rs), named here so the matrix
        // is complete: the hit path's state check is a semantic property (inert at once), not
        // a memory-safety one, and the models' generation check allows the old view until W1.
        "std" => vec![(IgnoreSessionState, "destroy-inert")],
        other => panic!("unknown checker {other}"),
    }
}
