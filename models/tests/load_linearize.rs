//! The one engine's histories with code loading, linearized against the sequential oracle with
//! its functions, patterns and counts (`bpspec_spec::linearize`), under shuttle (PCT and random).
//!
//! Each run has a loader (load, delete, soft purge of module `m`), a stager (call_count,
//! call_time or call_memory `trace_pattern` on one function at a time and `trace_info` of its
//! count or of call_time's or call_memory's calls, in the legacy session or a second one, which it may destroy) and schedulers making remote calls
//! (`call_ext`), staying in the version of a call (`call_and_stay`), making local calls from
//! it, current or old (`local_call`), and returning out of it (`return_out`), a progress point
//! after each. The replay's rule follows the protocol (`rule_of`): `NonBlocking` removes the
//! old version's breakpoints after its commit, inside the load, so a local call in old code
//! may count in that window (`LoadRule::CarryRemovedLater`). Every
//! operation is recorded with its begin and end on one clock and what it observed: the version a
//! call ran and whether it counted, what `trace_pattern`, `trace_info` and the code operation
//! answered. The history must linearize (`LoadRule::Carry` or its later removal: the engine carries the module's
//! patterns into a new version with fresh counters). So every count the engine gives is one the
//! oracle gives for some order of the operations consistent with what the threads saw, across
//! loads and deletes: what the load model's `refines-cl1` (breakpoint hits only) and the count
//! conservation LP1 (totals only) do not say.
//!
//! The recorder bypasses the sync shim, as `bpspec_reference::history` does: shuttle runs one
//! thread at a time and switches only at a shim operation, so a clock read is in the execution
//! exactly where it is in the thread, and adds no scheduling point. On real threads (the std
//! test below) the clock is one atomic counter read and incremented with acquire-release
//! read-modify-writes: their modification order is total, and an end stamp below a begin stamp
//! means the begin's RMW read from a release sequence that the end's RMW heads, so the first
//! operation happens before the second, as real-time order requires.
#![cfg(not(loom))]

#[cfg(shuttle)]
use bpspec_models::harness::shuttle_run::{explore_row, versions_iters};
use bpspec_reference::sync::{spawn, Arc};
use bpspec_reference::{
    Engine, EngineConfig, FlagSet, InfoKey, LoadProtocol, Mutant, PatternOp, Qsbr, Scheduler,
    TraceSpec,
};
use bpspec_spec::linearize::{check, time_calls, traced_of, LinObs, LinOp, LinRecord, LoadRule};
use std::sync::atomic::{AtomicU64, Ordering::AcqRel};
use std::sync::Mutex;

#[derive(Clone)]
struct Lin {
    name: &'static str,
    functions: usize,
    /// Sessions created besides the legacy one (1 to `sessions`).
    sessions: u32,
    /// The module's export entries carry global trace (`Engine::with_global_trace`).
    globals: bool,
    loader: Vec<LinOp>,
    stager: Vec<LinOp>,
    /// Each scheduler's steps: a call of function `f` (`Sched::Call`) or a look at whether a
    /// session is alive (`Sched::Alive`).
    schedulers: Vec<Vec<Sched>>,
}

#[derive(Clone, Copy)]
enum Sched {
    Call(usize),
    Alive(u32),
    /// `call_and_stay` of function `f`: the process stays in the version it ran (skipped with
    /// the local calls and the return after it when the call found no version, `undef`).
    Stay(usize),
    /// A local call of `f` from the version the process stays in.
    Local(usize),
    /// `return_out` of that version.
    Return,
}

/// Calls only, by function.
fn calls(fs: &[usize]) -> Vec<Sched> {
    fs.iter().map(|&f| Sched::Call(f)).collect()
}

fn scenarios() -> Vec<Lin> {
    use LinOp::*;
    let pat = |f, op| Pattern { session: 0, f, op };
    let info = |f| Info { session: 0, f };
    let time = |session, op| TimePattern { session, f: 0, op };
    let time_info = |session| TimeInfo { session, f: 0 };
    let mem = |op| MemPattern {
        session: 0,
        f: 0,
        op,
    };
    let mem_info = MemInfo { session: 0, f: 0 };
    // A stay in the version, two local calls from it, the return, a remote call.
    let stays = || {
        vec![
            Sched::Stay(0),
            Sched::Local(0),
            Sched::Local(0),
            Sched::Return,
            Sched::Call(0),
        ]
    };
    vec![
        // Counts across two loads and a pause: the count a trace_info gives after a load is
        // the new version's, from zero.
        Lin {
            name: "lin-load-count",
            functions: 1,
            sessions: 0,
            globals: false,
            loader: vec![Load, SoftPurge, Load],
            stager: vec![
                pat(0, PatternOp::True),
                info(0),
                pat(0, PatternOp::Pause),
                info(0),
                pat(0, PatternOp::Restart),
                info(0),
            ],
            schedulers: vec![calls(&[0, 0]), calls(&[0, 0])],
        },
        // A delete under calls and patterns (calls reach `undef`), its patterns carried by the
        // load after it.
        Lin {
            name: "lin-delete-count",
            functions: 1,
            sessions: 0,
            globals: false,
            loader: vec![Delete, SoftPurge, Load],
            stager: vec![pat(0, PatternOp::True), info(0), pat(0, PatternOp::False)],
            schedulers: vec![calls(&[0, 0]), calls(&[0])],
        },
        // Patterns per function across a load: each function's count its own.
        Lin {
            name: "lin-two-functions",
            functions: 2,
            sessions: 0,
            globals: false,
            loader: vec![Load],
            stager: vec![
                pat(0, PatternOp::True),
                pat(1, PatternOp::True),
                info(1),
                pat(0, PatternOp::False),
                info(0),
            ],
            schedulers: vec![calls(&[0, 1]), calls(&[1, 0])],
        },
        // Two sessions counting one function across loads, the second destroyed under the
        // calls: each call counts in the sessions alive and tracing when it is linearized.
        Lin {
            name: "lin-two-sessions",
            functions: 1,
            sessions: 1,
            globals: false,
            loader: vec![Load, SoftPurge, Load],
            stager: vec![
                pat(0, PatternOp::True),
                Pattern {
                    session: 1,
                    f: 0,
                    op: PatternOp::True,
                },
                Info { session: 1, f: 0 },
                DestroySession { session: 1 },
                info(0),
            ],
            schedulers: vec![calls(&[0, 0]), calls(&[0, 0])],
        },
        // A session seen dead while its destruction runs: a scheduler looks whether session 1
        // is alive, then calls, twice. A call after a look that saw it dead counts in the legacy
        // session only, though the destruction may not have returned (the hit path's step 1,
        // ERTS's `erts_is_trace_session_alive`).
        Lin {
            name: "lin-destroy-inert",
            functions: 1,
            sessions: 1,
            globals: false,
            loader: vec![Load],
            stager: vec![
                pat(0, PatternOp::True),
                Pattern {
                    session: 1,
                    f: 0,
                    op: PatternOp::True,
                },
                DestroySession { session: 1 },
            ],
            schedulers: vec![
                vec![
                    Sched::Alive(1),
                    Sched::Call(0),
                    Sched::Alive(1),
                    Sched::Call(0),
                ],
                calls(&[0]),
            ],
        },
        // A process stays in the version across a load and makes local calls from it: those
        // after the load count nothing (the old version's breakpoints are removed inside the
        // load, as ERTS clears them), the soft purge is refused until it returns, and the
        // module's counter is the new version's.
        Lin {
            name: "lin-old-code-local",
            functions: 1,
            sessions: 0,
            globals: false,
            loader: vec![Load, SoftPurge],
            stager: vec![
                pat(0, PatternOp::True),
                time(0, PatternOp::True),
                info(0),
                pat(0, PatternOp::Pause),
                info(0),
                time_info(0),
            ],
            schedulers: vec![stays(), calls(&[0, 0])],
        },
        // call_time beside call_count across two loads, set, paused and restarted, its calls
        // asked after each (the collection of OTP 29 on the current version).
        Lin {
            name: "lin-load-call-time",
            functions: 1,
            sessions: 0,
            globals: false,
            loader: vec![Load, SoftPurge, Load],
            stager: vec![
                pat(0, PatternOp::True),
                time(0, PatternOp::True),
                time_info(0),
                time(0, PatternOp::Pause),
                info(0),
                time_info(0),
                time(0, PatternOp::Restart),
                time_info(0),
            ],
            schedulers: vec![calls(&[0, 0]), calls(&[0, 0])],
        },
        // Global call trace on the export entry in a second session across a load, a delete
        // and the load after it, beside call_count in the legacy session: a counter set in the
        // second session takes its global trace away, global set again takes the counter
        // away; `Blocking` clears it at a load (as ERTS), `NonBlocking` keeps it on the entry.
        Lin {
            name: "lin-global",
            functions: 1,
            sessions: 1,
            globals: true,
            loader: vec![Load, Delete, SoftPurge, Load],
            stager: vec![
                GlobalPattern {
                    session: 1,
                    f: 0,
                    op: PatternOp::True,
                },
                pat(0, PatternOp::True),
                Traced { session: 1, f: 0 },
                Pattern {
                    session: 1,
                    f: 0,
                    op: PatternOp::True,
                },
                Traced { session: 1, f: 0 },
                GlobalPattern {
                    session: 1,
                    f: 0,
                    op: PatternOp::True,
                },
                Info { session: 1, f: 0 },
                Traced { session: 1, f: 0 },
            ],
            schedulers: vec![calls(&[0, 0, 0]), calls(&[0, 0])],
        },
        // Meta trace beside call_count across a load, a process staying in the version with
        // local calls from it (meta in old code until the removal), meta cleared at the end.
        Lin {
            name: "lin-meta",
            functions: 1,
            sessions: 0,
            globals: false,
            loader: vec![Load, SoftPurge],
            stager: vec![
                MetaPattern {
                    f: 0,
                    op: PatternOp::True,
                },
                pat(0, PatternOp::True),
                info(0),
                MetaPattern {
                    f: 0,
                    op: PatternOp::False,
                },
                info(0),
            ],
            schedulers: vec![stays(), calls(&[0, 0])],
        },
        // Three sessions on one function across two loads: call_count in the legacy session
        // and the first, call_time in the second; the first destroyed, then the second, under
        // the calls.
        Lin {
            name: "lin-three-sessions",
            functions: 1,
            sessions: 2,
            globals: false,
            loader: vec![Load, SoftPurge, Load],
            stager: vec![
                pat(0, PatternOp::True),
                Pattern {
                    session: 1,
                    f: 0,
                    op: PatternOp::True,
                },
                time(2, PatternOp::True),
                DestroySession { session: 1 },
                info(0),
                time_info(2),
                DestroySession { session: 2 },
                info(0),
            ],
            schedulers: vec![calls(&[0, 0]), calls(&[0, 0])],
        },
        // call_memory as call_time: its calls across two loads, paused and restarted.
        Lin {
            name: "lin-load-call-memory",
            functions: 1,
            sessions: 0,
            globals: false,
            loader: vec![Load, SoftPurge, Load],
            stager: vec![
                mem(PatternOp::True),
                mem_info,
                mem(PatternOp::Pause),
                mem_info,
                mem(PatternOp::Restart),
                mem_info,
            ],
            schedulers: vec![calls(&[0, 0]), calls(&[0, 0])],
        },
        // The same across a delete and the load after it: a process in the deleted version
        // calls locally into it, calls from outside reach `undef`, and a second stay may find
        // no version or the new one.
        Lin {
            name: "lin-old-code-delete",
            functions: 1,
            sessions: 0,
            globals: false,
            loader: vec![Delete, SoftPurge, Load],
            stager: vec![pat(0, PatternOp::True), info(0)],
            schedulers: vec![
                vec![
                    Sched::Stay(0),
                    Sched::Local(0),
                    Sched::Return,
                    Sched::Stay(0),
                    Sched::Local(0),
                    Sched::Return,
                ],
                calls(&[0]),
            ],
        },
    ]
}

type Log = std::sync::Arc<(AtomicU64, Mutex<Vec<LinRecord>>)>;

/// Run `op` on thread `thread`, recording it with its observation.
fn record(log: &Log, thread: usize, op: LinOp, run: impl FnOnce() -> LinObs) {
    // AcqRel: pairs with the other threads' stamps (the module docs: real-time order on real
    // threads); under shuttle any ordering would do.
    let begin = log.0.fetch_add(1, AcqRel);
    let obs = run();
    let end = log.0.fetch_add(1, AcqRel);
    let rec = LinRecord {
        thread,
        op,
        obs,
        begin,
        end,
    };
    log.1.lock().expect("the history's lock").push(rec);
}

fn count_spec(session: u32) -> TraceSpec {
    TraceSpec::from(FlagSet {
        call_count: true,
        ..FlagSet::default()
    })
    .session(session)
}

/// `{call_count,N}` / `{call_count,false}` / `{call_count,undefined}` as the oracle's answer.
fn count_obs(term: &str) -> LinObs {
    let v = term
        .strip_prefix("{call_count,")
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or_else(|| panic!("trace_info of call_count answered {term}"));
    LinObs::Count(match v {
        "undefined" => None,
        "false" => Some(None),
        n => Some(Some(
            n.parse().unwrap_or_else(|_| panic!("a count: {term}")),
        )),
    })
}

fn engine_op(e: &Engine<Qsbr>, meta: &bpspec_reference::TracerSpec, op: LinOp) -> LinObs {
    let lop = op;
    match op {
        LinOp::Load => LinObs::Answer(e.load().is_ok()),
        LinOp::Delete => LinObs::Answer(e.delete().is_ok()),
        LinOp::SoftPurge => LinObs::Answer(e.purge().is_ok()),
        LinOp::Pattern { session, f, op } => LinObs::Matched(
            e.trace_pattern_funcs_op_in(0, &[f], op, &count_spec(session))
                .expect("a call_count pattern"),
        ),
        LinOp::Info { session, f } => count_obs(
            &e.trace_info_module(session, f, InfoKey::CallCount)
                .to_string(),
        ),
        LinOp::TimePattern { session, f, op } | LinOp::MemPattern { session, f, op } => {
            let time = matches!(lop, LinOp::TimePattern { .. });
            let spec = TraceSpec::from(FlagSet {
                call_time: time,
                call_memory: !time,
                ..FlagSet::default()
            })
            .session(session);
            LinObs::Matched(
                e.trace_pattern_funcs_op_in(0, &[f], op, &spec)
                    .expect("a call_time or call_memory pattern"),
            )
        }
        LinOp::TimeInfo { session, f } | LinOp::MemInfo { session, f } => {
            let key = match lop {
                LinOp::TimeInfo { .. } => InfoKey::CallTime,
                _ => InfoKey::CallMemory,
            };
            LinObs::Count(time_calls(&e.trace_info_module(session, f, key)))
        }
        LinOp::GlobalPattern { session, f, op } => LinObs::Matched(
            e.trace_pattern_funcs_op_in(0, &[f], op, &TraceSpec::global().session(session))
                .expect("a global pattern"),
        ),
        LinOp::MetaPattern { f, op } => LinObs::Matched(
            e.trace_pattern_funcs_op_in(0, &[f], op, &TraceSpec::default().meta(meta.clone()))
                .expect("a meta pattern"),
        ),
        LinOp::Traced { session, f } => {
            traced_of(&e.trace_info_module(session, f, InfoKey::Traced))
        }
        LinOp::DestroySession { session } => {
            LinObs::Answer(e.destroy_session(session).expect("a session to destroy"))
        }
        LinOp::Call { .. }
        | LinOp::SessionAlive { .. }
        | LinOp::Stay { .. }
        | LinOp::Local { .. }
        | LinOp::Return => unreachable!("a scheduler's step"),
    }
}

/// The replay's rule for the engine's `proto`: `Blocking` clears the old version's breakpoints
/// under its block before the commit, `NonBlocking` removes them after the commit, inside the
/// same load or delete (`LoadRule::CarryRemovedLater`).
fn rule_of(proto: LoadProtocol) -> LoadRule {
    match proto {
        LoadProtocol::Blocking => LoadRule::Carry,
        LoadProtocol::NonBlocking => LoadRule::CarryRemovedLater,
    }
}

fn run(scn: &Lin, proto: LoadProtocol, mutant: Option<Mutant>) {
    run_with(scn, proto, mutant, rule_of(proto))
}

fn run_with(scn: &Lin, proto: LoadProtocol, mutant: Option<Mutant>, rule: LoadRule) {
    let cfg = EngineConfig::simple(0, scn.schedulers.len()).with_mutant(mutant);
    let e = Engine::<Qsbr>::new_with_sessions(cfg, 1 + scn.sessions as usize).with_module(
        scn.functions,
        proto,
        false,
    );
    let e = if scn.globals {
        e.with_global_trace()
    } else {
        e
    };
    for s in 1..=scn.sessions {
        assert_eq!(e.create_session(&format!("s{s}")), Ok(s));
    }
    let e = Arc::new(e);
    let log: Log = std::sync::Arc::new((AtomicU64::new(0), Mutex::new(Vec::new())));
    // The meta tracer: a process's mailbox (the messages are not read: a call observes
    // whether its hit acted on meta).
    let meta = bpspec_reference::ProcessTracer::spec(&bpspec_reference::Mailbox::new(900));
    let ops = |thread: usize, script: Vec<LinOp>| {
        let (e, log, meta) = (e.clone(), log.clone(), meta.clone());
        spawn(move || {
            for op in script {
                record(&log, thread, op, || engine_op(&e, &meta, op));
            }
        })
    };
    let loader = ops(0, scn.loader.clone());
    let stager = ops(1, scn.stager.clone());
    let scheds: Vec<_> = scn
        .schedulers
        .iter()
        .enumerate()
        .map(|(id, steps)| {
            let (e, log, steps) = (e.clone(), log.clone(), steps.clone());
            spawn(move || {
                let mut s = Scheduler::start(e.clone(), id);
                let obs = |seen: bpspec_reference::CallSeen| LinObs::Call {
                    version: u64::from(seen.version),
                    counted: seen.counted_in,
                    global: seen
                        .export_hit
                        .is_some_and(|h| h.flags & bpspec_reference::flags::GLOBAL_TRACE != 0),
                    meta: seen.flags & bpspec_reference::flags::META_TRACE != 0,
                };
                // The process stays in a version (a stay that found one, not yet returned).
                let mut stays = false;
                for step in steps {
                    let t = 2 + id;
                    match step {
                        Sched::Call(f) => {
                            record(&log, t, LinOp::Call { f }, || obs(s.call_ext(f)));
                        }
                        Sched::Alive(session) => {
                            let op = LinOp::SessionAlive { session };
                            record(&log, t, op, || LinObs::Answer(e.session_is_alive(session)));
                            continue;
                        }
                        Sched::Stay(f) => record(&log, t, LinOp::Stay { f }, || {
                            let seen = s.call_and_stay(f);
                            stays = seen.version != 0;
                            obs(seen)
                        }),
                        Sched::Local(f) if stays => {
                            record(&log, t, LinOp::Local { f }, || obs(s.local_call(f)));
                        }
                        Sched::Return if stays => {
                            record(&log, t, LinOp::Return, || {
                                s.return_out();
                                LinObs::Answer(true)
                            });
                            stays = false;
                        }
                        Sched::Local(_) | Sched::Return => continue,
                    }
                    s.progress();
                }
                s.sleep();
            })
        })
        .collect();
    loader.join().expect("loader panicked");
    stager.join().expect("stager panicked");
    for h in scheds {
        h.join().expect("scheduler panicked");
    }
    let history = log.1.lock().expect("the history's lock").clone();
    let funcs: Vec<_> = (0..scn.functions)
        .map(|f| bpspec_reference::Mfa::new("m", &format!("f{f}"), 0))
        .collect();
    if let Err(r) = check("m", &funcs, scn.sessions, &history, rule) {
        panic!("{}: {r}", scn.name);
    }
}

#[cfg(shuttle)]
fn row(scn: &Lin, proto: LoadProtocol, mutant: Option<Mutant>, pct: bool, expected: &str) -> bool {
    let label = format!("{}@{}", scn.name, proto.name());
    let variant = mutant.map_or("baseline", |m| m.name());
    let s = scn.clone();
    let model = move || run(&s, proto, mutant);
    explore_row(
        "qsbr",
        &label,
        variant,
        expected,
        pct,
        versions_iters(),
        model,
    )
    .is_some()
}

#[cfg(shuttle)]
#[test]
fn load_histories_linearize() {
    let mut failures = Vec::new();
    for proto in LoadProtocol::ALL {
        for scn in scenarios() {
            for pct in [false, true] {
                if row(&scn, proto, None, pct, "hold") {
                    failures.push(format!("{}@{} pct={pct}", scn.name, proto.name()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "histories that did not linearize: {failures:?}"
    );
}

/// The mutants this check kills through the counts, each on the scenario and protocol where
/// PCT finds it, at `versions_iters` (first kills at 2,000 PCT iterations, seed of
/// `shuttle_run`: 70 and 44, 7 and 7, 11 and 31, 255, 11 and 387, 20, 139 and 443, then on
/// `lin-old-code-local` 160, 12 and 23, on `lin-load-call-time` 159, 1 and 1, 34 and 63, 22
/// and 35, 9 and 17, on `lin-load-call-memory` 100 and 79, 96 and 51, 16 and 14, and on
/// `lin-three-sessions` 405 and 372, on `lin-global` 1 and 1, 3, 4, and on `lin-meta` 26;
/// docs/nonblocking-load.md §8). Each
/// must be killed by the linearization (its message), not by an assertion of the engine's.
#[cfg(shuttle)]
const LIN_KILLS: [(Mutant, &str, LoadProtocol); 37] = [
    (
        Mutant::IgnoreSessionState,
        "lin-destroy-inert",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::IgnoreSessionState,
        "lin-destroy-inert",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::SkipConsolidateCopy,
        "lin-load-count",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::SkipConsolidateCopy,
        "lin-load-count",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::PausedCounterChanges,
        "lin-load-count",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::PausedCounterChanges,
        "lin-load-count",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-two-functions",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-load-count",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-delete-count",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::LoadBlockingWithoutBlock,
        "lin-two-functions",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-two-sessions",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-two-sessions",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-old-code-local",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::PausedCounterChanges,
        "lin-old-code-local",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::PausedCounterChanges,
        "lin-old-code-local",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-load-call-time",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::SkipConsolidateCopy,
        "lin-load-call-time",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::SkipConsolidateCopy,
        "lin-load-call-time",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::CollectSkipMerge,
        "lin-load-call-time",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::CollectSkipMerge,
        "lin-load-call-time",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::TimemPauseKeepsRunning,
        "lin-load-call-time",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::TimemPauseKeepsRunning,
        "lin-load-call-time",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::TimemRestartKeepsCounter,
        "lin-load-call-time",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::TimemRestartKeepsCounter,
        "lin-load-call-time",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::CollectSkipMerge,
        "lin-load-call-memory",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::CollectSkipMerge,
        "lin-load-call-memory",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::TimemPauseKeepsRunning,
        "lin-load-call-memory",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::TimemPauseKeepsRunning,
        "lin-load-call-memory",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::TimemRestartKeepsCounter,
        "lin-load-call-memory",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::TimemRestartKeepsCounter,
        "lin-load-call-memory",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-three-sessions",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::LostCountUpdate,
        "lin-three-sessions",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::GlobalDispatchStagingIx,
        "lin-global",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::GlobalDispatchStagingIx,
        "lin-global",
        LoadProtocol::NonBlocking,
    ),
    (
        Mutant::LoadBlockingWithoutBlock,
        "lin-global",
        LoadProtocol::Blocking,
    ),
    (
        Mutant::LoadStagingSkipDispatch,
        "lin-global",
        LoadProtocol::NonBlocking,
    ),
    (Mutant::LostCountUpdate, "lin-meta", LoadProtocol::Blocking),
];

#[cfg(shuttle)]
#[test]
fn load_linearize_kill_matrix() {
    let mut survivors = Vec::new();
    for (m, name, proto) in LIN_KILLS {
        let scn = scenarios()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no scenario {name}"));
        let label = format!("{name}@{}", proto.name());
        let s = scn.clone();
        let model = move || run(&s, proto, Some(m));
        let cx = explore_row(
            "qsbr",
            &label,
            m.name(),
            "killed",
            true,
            versions_iters(),
            model,
        );
        match cx {
            Some(c) if c.contains("no linearization") => {}
            other => survivors.push(format!("{} on {label}: {other:?}", m.name())),
        }
    }
    assert!(
        survivors.is_empty(),
        "mutants the linearization should kill were not killed by it: {survivors:?}"
    );
}

/// On real threads (`make test`'s workspace tests): every scenario under both protocols, 200
/// runs each; every history must linearize. What real threads add is the machine's own
/// interleavings and memory order, which shuttle (sequentially consistent) does not have.
#[cfg(not(shuttle))]
#[test]
fn load_histories_linearize_on_real_threads() {
    let _watchdog =
        bpspec_reference::watchdog::arm("load_linearize::load_histories_linearize_on_real_threads");
    for proto in LoadProtocol::ALL {
        for scn in scenarios() {
            for _ in 0..200 {
                run(&scn, proto, None);
            }
        }
    }
}

/// What `LoadRule::CarryRemovedLater` is for: under `NonBlocking` the old version's breakpoints
/// are removed after the load's (or delete's) commit, so a local call in old code may count
/// after a remote call has seen the new version. Replayed with the stricter `LoadRule::Carry`
/// (the breakpoints gone at the load's point, as `Blocking` and ERTS have it), PCT finds such a
/// history on `lin-old-code-delete` (the row `strict-carry`); `Blocking`'s baselines run under
/// the strict rule already (`load_histories_linearize`).
#[cfg(shuttle)]
#[test]
fn nonblocking_local_calls_count_until_the_removal() {
    let scn = scenarios()
        .into_iter()
        .find(|s| s.name == "lin-old-code-delete")
        .expect("the scenario");
    let proto = LoadProtocol::NonBlocking;
    let label = format!("{}@{}", scn.name, proto.name());
    let model = move || run_with(&scn, proto, None, LoadRule::Carry);
    let cx = explore_row(
        "qsbr",
        &label,
        "strict-carry",
        "killed",
        true,
        versions_iters(),
        model,
    );
    assert!(
        cx.as_deref()
            .is_some_and(|c| c.contains("no linearization")),
        "the strict rule accepted every NonBlocking history: {cx:?}"
    );
}
