//! Conformance of two [`BreakpointEngine`]s (docs/conformance.md): the same operation sequences,
//! every observation compared. Two levels:
//!
//! * [`check_ops`]: a proptest state machine over the trait's own operations (breakpoint hits by
//!   processes traced in up to 3 sessions, `trace_info`, `trace_pattern` with every op/flag
//!   combination, including the ERTS quirk of `pause`/`restart` on a node without a counter),
//!   also comparing `is_patched` and each engine's at-rest check after every step;
//! * [`check_scenarios`]: random scenarios ([`crate::gen`]) run by the scenario runner on both.
//!
//! The op enum is ordered from simplest to most complex, so a failure shrinks to a few plain
//! steps. Runs use a fixed seed and no persistence file, so they are reproducible.

use crate::frames::Raise;
use crate::gen::{self, GenConfig};
use crate::observe::diff;
use crate::run::run;
use crate::scenario::{load, Loaded};
use crate::target::{BreakpointEngine, Entry, Factory};
use bpspec_reference::{
    FlagSet, InfoItem, InfoKey, Mfa, Pattern, PatternError, PatternOp, SessionId, TraceFlags,
    TraceSpec,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::collections::{BTreeMap, BTreeSet};

/// The function universe of [`check_ops`]: two modules with two functions each.
pub fn universe() -> Vec<Mfa> {
    vec![
        Mfa::new("m0", "f0", 0),
        Mfa::new("m0", "f1", 1),
        Mfa::new("m1", "f0", 0),
        Mfa::new("m1", "f1", 1),
    ]
}

const SESSIONS: u32 = 3;

/// What a `trace_pattern` step targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    One(usize),
    Module(usize),
    All,
}

/// One step, simplest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfOp {
    /// Process `pid`, call-traced in the sessions of bit set `traced`, enters function `f`.
    Call { f: usize, pid: u64, traced: u64 },
    /// `trace_info` (f == universe().len() is a function that does not exist).
    Info {
        session: SessionId,
        f: usize,
        count: bool,
    },
    Pattern {
        session: SessionId,
        target: Target,
        op: PatternOp,
        local: bool,
        count: bool,
    },
    /// The logical clock advances `dt` microseconds.
    Advance { dt: u64 },
    /// Process `pid` allocates `words`.
    Alloc { pid: u64, words: u64 },
    /// Process `pid` enters `f` by a body call or a tail call (with call_time/call_memory state).
    Enter {
        f: usize,
        pid: u64,
        traced: u64,
        tail: bool,
    },
    /// Process `pid` returns (skipped when it has no body call to return from).
    Ret { pid: u64, traced: u64 },
    /// An exception in `pid` is caught at the top.
    Unwind { pid: u64, traced: u64 },
    /// Process `pid` is scheduled out, or back in if it is out.
    Schedule { pid: u64, traced: u64 },
    /// `trace_info` for call_time (0), call_memory (1) or all (2).
    TimeInfo {
        session: SessionId,
        f: usize,
        key: u8,
    },
    /// `trace_pattern` with call_time / call_memory in the flag list.
    TimePattern {
        session: SessionId,
        target: Target,
        op: PatternOp,
        flags: FlagSet,
    },
    /// Process `pid` enters `f` by a remote call (through the export entry; a local entry if
    /// `f` is not exported). Global trace from here on.
    RemoteEnter {
        f: usize,
        pid: u64,
        traced: u64,
        tail: bool,
    },
    /// `trace_info` traced (0), match_spec (1) or all (2) as terms (`{traced, global}`).
    GlobalInfo {
        session: SessionId,
        f: usize,
        key: u8,
    },
    /// A global `trace_pattern` (no flags); `local` true adds the flag `local` (badarg).
    GlobalPattern {
        session: SessionId,
        target: Target,
        op: PatternOp,
        local: bool,
    },
    /// `trace_pattern` with a match spec: `actions` bit 0 return_trace, bit 1 exception_trace;
    /// flags `local` (without it: counters only, `badarg`), plus call_count / call_time.
    MsPattern {
        session: SessionId,
        target: Target,
        actions: u8,
        local: bool,
        count: bool,
        time: bool,
    },
    /// Process `pid` returns `value` (skipped without a body call to return from); the
    /// `return_from` messages are compared.
    RetValue { pid: u64, traced: u64, value: i64 },
    /// An exception unwinds 1 + `through` % depth body calls of `pid` (skipped without one); the
    /// `exception_from` messages are compared.
    Raise { pid: u64, traced: u64, through: u8 },
}

/// The functions of [`universe`] with an export entry in [`check_ops`] (`m0:f1/1` is local).
pub const EXPORTED: [usize; 3] = [0, 2, 3];

fn traced() -> impl Strategy<Value = u64> + Clone {
    prop_oneof![2 => Just((1u64 << SESSIONS) - 1), 1 => 0u64..(1 << SESSIONS)]
}

fn session() -> impl Strategy<Value = SessionId> + Clone {
    prop_oneof![2 => Just(0u32), 1 => 0..SESSIONS]
}

pub fn op_strategy() -> impl Strategy<Value = ConfOp> {
    let n = universe().len();
    let pop = prop_oneof![
        Just(PatternOp::True),
        Just(PatternOp::False),
        Just(PatternOp::Pause),
        Just(PatternOp::Restart)
    ];
    let target = prop_oneof![
        (0..n).prop_map(Target::One),
        (0..2usize).prop_map(Target::Module),
        Just(Target::All)
    ];
    prop_oneof![
        4 => (0..n, 1u64..4, 0u64..(1 << SESSIONS)).prop_map(|(f, pid, traced)| ConfOp::Call { f, pid, traced }),
        2 => (0..SESSIONS, 0..n + 1, any::<bool>()).prop_map(|(session, f, count)| ConfOp::Info { session, f, count }),
        3 => (0..SESSIONS, target.clone(), pop.clone(), any::<bool>(), any::<bool>())
            .prop_map(|(session, target, op, local, count)| ConfOp::Pattern { session, target, op, local, count }),
        // Processes traced in every session and session 0 are drawn more often, so that
        // call_time state (a timed call in flight, then a clock step, a schedule-out, an info)
        // comes together in a few steps.
        1 => (0u64..30).prop_map(|dt| ConfOp::Advance { dt }),
        1 => (1u64..4, 0u64..9).prop_map(|(pid, words)| ConfOp::Alloc { pid, words }),
        4 => (0..n, 1u64..4, traced(), any::<bool>()).prop_map(|(f, pid, traced, tail)| ConfOp::Enter { f, pid, traced, tail }),
        3 => (1u64..4, traced()).prop_map(|(pid, traced)| ConfOp::Ret { pid, traced }),
        1 => (1u64..4, traced()).prop_map(|(pid, traced)| ConfOp::Unwind { pid, traced }),
        1 => (1u64..4, traced()).prop_map(|(pid, traced)| ConfOp::Schedule { pid, traced }),
        2 => (session(), 0..n + 1, 0u8..3).prop_map(|(session, f, key)| ConfOp::TimeInfo { session, f, key }),
        3 => (session(), target.clone(), pop.clone(), 0u8..16).prop_map(|(session, target, op, b)| ConfOp::TimePattern {
            session, target, op,
            flags: FlagSet { local: b & 1 != 0, call_count: b & 2 != 0, call_time: b & 4 != 0 || b < 4, call_memory: b & 8 != 0 },
        }),
        4 => (0..n, 1u64..4, traced(), any::<bool>()).prop_map(|(f, pid, traced, tail)| ConfOp::RemoteEnter { f, pid, traced, tail }),
        2 => (session(), 0..n + 1, 0u8..3).prop_map(|(session, f, key)| ConfOp::GlobalInfo { session, f, key }),
        3 => (session(), target.clone(), pop, 0u8..8).prop_map(|(session, target, op, b)| ConfOp::GlobalPattern { session, target, op, local: b == 0 }),
        3 => (session(), target, 0u8..4, 0u8..8).prop_map(|(session, target, actions, b)| ConfOp::MsPattern {
            session, target, actions, local: b != 7, count: b & 1 != 0, time: b & 2 != 0,
        }),
        3 => (1u64..4, traced(), 0i64..3).prop_map(|(pid, traced, value)| ConfOp::RetValue { pid, traced, value }),
        2 => (1u64..4, traced(), any::<u8>()).prop_map(|(pid, traced, through)| ConfOp::Raise { pid, traced, through }),
    ]
}

/// Per process, what makes a process op valid: body calls to return from, scheduled out.
#[derive(Default)]
struct Procs {
    depth: BTreeMap<u64, usize>,
    out: BTreeSet<u64>,
}

/// A `trace_pattern` step on both engines: the two results as text, once both engines' at-rest
/// invariants hold (else which one broke it, and how).
fn both_at_rest(
    x: &mut Box<dyn BreakpointEngine>,
    y: &mut Box<dyn BreakpointEngine>,
    step: impl Fn(&mut dyn BreakpointEngine) -> Result<usize, PatternError>,
) -> Result<(String, String), String> {
    let out = (
        format!("{:?}", step(x.as_mut())),
        format!("{:?}", step(y.as_mut())),
    );
    for e in [x, y] {
        if let Err(m) = e.check_at_rest() {
            return Err(format!("{} is not at rest: {m}", e.name()));
        }
    }
    Ok(out)
}

/// Run `ops` on a fresh `a` and `b`; the first disagreement, described.
pub fn compare_ops(a: Factory, b: Factory, ops: &[ConfOp]) -> Result<(), String> {
    let u = universe();
    let (mut x, mut y) = (a(u.clone()), b(u.clone()));
    let who = format!("{} vs {}", x.name(), y.name());
    let mut ps = Procs::default();
    let pattern = |target: &Target| match target {
        Target::One(f) => Pattern::exact(&u[*f]),
        Target::Module(m) => Pattern {
            module: Some(format!("m{m}")),
            name: None,
            arity: None,
        },
        Target::All => Pattern::all(),
    };
    let none = || (String::new(), String::new());
    // The function `f` of the universe; a name that is in no engine past its end.
    let mfa_of = |f: usize| {
        u.get(f)
            .cloned()
            .unwrap_or_else(|| Mfa::new("m0", "missing", 0))
    };
    // call_time/call_memory steps only between engines that both have them.
    let timem = [&x, &y].iter().all(|e| {
        e.supports(&crate::scenario::Feature::CallTime)
            && e.supports(&crate::scenario::Feature::CallMemory)
            && e.supports(&crate::scenario::Feature::InfoItem("all".into()))
    });
    // Global trace steps only between engines that both have it (and the call_time state of
    // a process, for remote body calls): then only EXPORTED have export entries.
    let global = timem
        && [&x, &y]
            .iter()
            .all(|e| e.supports(&crate::scenario::Feature::GlobalTrace));
    if global {
        x.set_exports(&EXPORTED);
        y.set_exports(&EXPORTED);
    }
    // Trace-frame steps only between engines that both have match specs.
    let frames = [&x, &y]
        .iter()
        .all(|e| e.supports(&crate::scenario::Feature::MatchSpec));
    let show = |v: Vec<crate::frames::FrameMsg>| -> String {
        v.iter()
            .map(|m| format!("s{} {:?} {} {}; ", m.session, m.event, u[m.f], m.value))
            .collect()
    };
    for (i, op) in ops.iter().enumerate() {
        let is_timem = !matches!(
            op,
            ConfOp::Call { .. } | ConfOp::Info { .. } | ConfOp::Pattern { .. }
        );
        let is_global = matches!(
            op,
            ConfOp::RemoteEnter { .. } | ConfOp::GlobalInfo { .. } | ConfOp::GlobalPattern { .. }
        );
        let is_frames = matches!(
            op,
            ConfOp::MsPattern { .. } | ConfOp::RetValue { .. } | ConfOp::Raise { .. }
        );
        if (is_timem && !timem) || (is_global && !global) || (is_frames && !frames) {
            continue;
        }
        let (l, r) = match op {
            ConfOp::RemoteEnter {
                f,
                pid,
                traced,
                tail,
            }
            | ConfOp::Enter {
                f,
                pid,
                traced,
                tail,
            } => {
                if ps.out.contains(pid) {
                    none()
                } else {
                    if !*tail {
                        *ps.depth.entry(*pid).or_default() += 1;
                    }
                    // A remote call of a function without an export entry is a local one.
                    let remote = matches!(op, ConfOp::RemoteEnter { .. }) && EXPORTED.contains(f);
                    let how = Entry {
                        tail: *tail,
                        remote,
                        old: false,
                    };
                    let enter = |e: &mut Box<dyn BreakpointEngine>| e.enter(*f, *pid, *traced, how);
                    (
                        format!("{:?}", enter(&mut x)),
                        format!("{:?}", enter(&mut y)),
                    )
                }
            }
            ConfOp::GlobalInfo { session, f, key } => {
                let mfa = mfa_of(*f);
                let info = |e: &mut Box<dyn BreakpointEngine>| match key {
                    0 => e.trace_info_term(*session, &mfa, InfoKey::Traced),
                    1 => e.trace_info_term(*session, &mfa, InfoKey::MatchSpec),
                    _ => e.trace_info_term(*session, &mfa, InfoKey::All),
                };
                (info(&mut x).to_string(), info(&mut y).to_string())
            }
            ConfOp::GlobalPattern {
                session,
                target,
                op: pop,
                local,
            } => {
                let pat = pattern(target);
                let spec = TraceSpec {
                    flags: FlagSet {
                        local: *local,
                        ..FlagSet::default()
                    },
                    ..TraceSpec::global()
                };
                let spec = spec.session(*session);
                both_at_rest(&mut x, &mut y, |e| e.trace_pattern(&pat, *pop, &spec))
                    .map_err(|m| format!("step {i} {op:?}: {m}"))?
            }
            ConfOp::Advance { dt } => {
                x.advance(*dt);
                y.advance(*dt);
                none()
            }
            ConfOp::Alloc { pid, words } => {
                // The process's trace flags do not matter for allocation; keep them as they are
                // by passing the last ones seen (0 on first use).
                x.alloc(*pid, 0, *words);
                y.alloc(*pid, 0, *words);
                none()
            }
            ConfOp::Ret { pid, traced } => {
                let d = ps.depth.entry(*pid).or_default();
                if *d > 0 && !ps.out.contains(pid) {
                    *d -= 1;
                    x.ret(*pid, *traced);
                    y.ret(*pid, *traced);
                }
                none()
            }
            ConfOp::Unwind { pid, traced } => {
                ps.depth.insert(*pid, 0);
                x.unwind(*pid, *traced);
                y.unwind(*pid, *traced);
                none()
            }
            ConfOp::Schedule { pid, traced } => {
                let into = !ps.out.insert(*pid);
                if into {
                    ps.out.remove(pid);
                }
                x.schedule(*pid, *traced, into);
                y.schedule(*pid, *traced, into);
                none()
            }
            ConfOp::TimeInfo { session, f, key } => {
                let mfa = mfa_of(*f);
                let k = [InfoKey::CallTime, InfoKey::CallMemory, InfoKey::All][*key as usize];
                (
                    x.trace_info_term(*session, &mfa, k).to_string(),
                    y.trace_info_term(*session, &mfa, k).to_string(),
                )
            }
            ConfOp::TimePattern {
                session,
                target,
                op: pop,
                flags,
            } => {
                let pat = pattern(target);
                let spec = TraceSpec::from(*flags).session(*session);
                both_at_rest(&mut x, &mut y, |e| e.trace_pattern(&pat, *pop, &spec))
                    .map_err(|m| format!("step {i} {op:?}: {m}"))?
            }
            ConfOp::MsPattern {
                session,
                target,
                actions,
                local,
                count,
                time,
            } => {
                let pat = pattern(target);
                let fl = FlagSet {
                    local: *local,
                    call_count: *count || !*local,
                    call_time: *time,
                    call_memory: false,
                };
                let ms = bpspec_reference::MatchSpec {
                    return_trace: actions & 1 != 0,
                    exception_trace: actions & 2 != 0,
                    caller: false,
                };
                let spec = TraceSpec::from(fl).session(*session).ms(Some(ms));
                both_at_rest(&mut x, &mut y, |e| {
                    e.trace_pattern(&pat, PatternOp::True, &spec)
                })
                .map_err(|m| format!("step {i} {op:?}: {m}"))?
            }
            ConfOp::RetValue { pid, traced, value } => {
                let d = ps.depth.entry(*pid).or_default();
                if *d > 0 && !ps.out.contains(pid) {
                    *d -= 1;
                    let v = bpspec_reference::Term::Int(*value);
                    (
                        show(x.ret_value(*pid, *traced, &v)),
                        show(y.ret_value(*pid, *traced, &v)),
                    )
                } else {
                    none()
                }
            }
            ConfOp::Raise {
                pid,
                traced,
                through,
            } => {
                let d = ps.depth.entry(*pid).or_default();
                if *d > 0 && !ps.out.contains(pid) {
                    let n = 1 + *through as usize % *d;
                    *d -= n;
                    let r = bpspec_reference::Term::Name(format!("e{through}"));
                    (
                        show(x.raise(*pid, *traced, &Raise::error(r.clone(), n))),
                        show(y.raise(*pid, *traced, &Raise::error(r, n))),
                    )
                } else {
                    none()
                }
            }
            ConfOp::Call { f, pid, traced } => (
                format!("{:?}", x.call(*f, *pid, *traced)),
                format!("{:?}", y.call(*f, *pid, *traced)),
            ),
            ConfOp::Info { session, f, count } => {
                let mfa = mfa_of(*f);
                let item = if *count {
                    InfoItem::CallCount
                } else {
                    InfoItem::Traced
                };
                (
                    format!("{:?}", x.trace_info(*session, &mfa, item)),
                    format!("{:?}", y.trace_info(*session, &mfa, item)),
                )
            }
            ConfOp::Pattern {
                session,
                target,
                op: pop,
                local,
                count,
            } => {
                let pat = pattern(target);
                let fl = TraceFlags {
                    local: *local,
                    call_count: *count,
                };
                let spec = TraceSpec::from(fl).session(*session);
                both_at_rest(&mut x, &mut y, |e| e.trace_pattern(&pat, *pop, &spec))
                    .map_err(|m| format!("step {i} {op:?}: {m}"))?
            }
        };
        if l != r {
            return Err(format!("step {i} {op:?}: {who}: {l} != {r}"));
        }
        for f in 0..u.len() {
            if let (Some(p), Some(q)) = (x.is_patched(f), y.is_patched(f)) {
                if p != q {
                    return Err(format!(
                        "step {i} {op:?}: {who}: {} patched {p} != {q}",
                        u[f]
                    ));
                }
            }
            if let (Some(p), Some(q)) = (x.is_export_patched(f), y.is_export_patched(f)) {
                if p != q {
                    return Err(format!(
                        "step {i} {op:?}: {who}: export entry of {} patched {p} != {q}",
                        u[f]
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A proptest runner whose draws depend on `seed` only (no persisted failures).
pub(crate) fn runner(cases: u32, seed: u64) -> TestRunner {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &s),
    )
}

/// A conformance failure: the minimized input and what differed.
#[derive(Debug)]
pub struct Failure<T> {
    pub minimal: T,
    pub message: String,
}

/// `cases` random op sequences (1..max_len ops) on `a` and `b`.
pub fn check_ops(
    a: Factory,
    b: Factory,
    cases: u32,
    max_len: usize,
    seed: u64,
) -> Result<(), Failure<Vec<ConfOp>>> {
    let mut r = runner(cases, seed);
    let res = r.run(
        &proptest::collection::vec(op_strategy(), 1..max_len.max(2)),
        |ops| compare_ops(a, b, &ops).map_err(TestCaseError::fail),
    );
    match res {
        Ok(()) => Ok(()),
        Err(TestError::Fail(why, minimal)) => Err(Failure {
            minimal,
            message: why.to_string(),
        }),
        Err(TestError::Abort(why)) => panic!("conformance aborted: {why}"),
    }
}

/// Run one scenario (JSON) on `a` and `b`; the first disagreement, described.
pub fn compare_scenario(
    a: Factory,
    b: Factory,
    sc: &crate::scenario::Scenario,
) -> Result<(), String> {
    let text = serde_json::to_string_pretty(sc).expect("scenarios serialize");
    let l = load("generated", &text)
        .map_err(|e| format!("generator produced an invalid scenario: {e}\n{text}"))?;
    let (mut x, mut y) = (a(l.funcs.clone()), b(l.funcs.clone()));
    let (ox, oy) = (run(&l, x.as_mut()), run(&l, y.as_mut()));
    match (ox, oy) {
        (Ok(p), Ok(q)) => match diff(&p, &q) {
            None => Ok(()),
            Some(d) => Err(format!(
                "{} (-) and {} (+) differ:\n{d}",
                x.name(),
                y.name()
            )),
        },
        (p, q) if format!("{p:?}") == format!("{q:?}") => Ok(()),
        (p, q) => Err(format!("{}: {p:?}\n{}: {q:?}", x.name(), y.name())),
    }
}

/// `cases` random scenarios on `a` and `b`.
pub fn check_scenarios(
    a: Factory,
    b: Factory,
    cfg: GenConfig,
    cases: u32,
    seed: u64,
) -> Result<(), Failure<String>> {
    check_scenarios_of(a, b, gen::scenario(cfg), cases, seed)
}

/// [`check_scenarios`] over the scenarios `strat` draws: `gen_sessions::scenario(cfg)` for
/// random scenarios with sessions.
pub fn check_scenarios_of(
    a: Factory,
    b: Factory,
    strat: impl Strategy<Value = crate::scenario::Scenario>,
    cases: u32,
    seed: u64,
) -> Result<(), Failure<String>> {
    let mut r = runner(cases, seed);
    let res = r.run(&strat, |sc| {
        compare_scenario(a, b, &sc).map_err(TestCaseError::fail)
    });
    match res {
        Ok(()) => Ok(()),
        Err(TestError::Fail(why, minimal)) => Err(Failure {
            minimal: serde_json::to_string_pretty(&minimal).expect("serialize"),
            message: why.to_string(),
        }),
        Err(TestError::Abort(why)) => panic!("conformance aborted: {why}"),
    }
}

/// The corpus directory shipped with this crate (`oracle/corpus`).
pub fn corpus_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus"))
}

/// The `*.json` files directly in `dir`, sorted by path (scenario directories: the corpus, a
/// directory given to `bpspec oracle`).
pub fn json_files(dir: &std::path::Path) -> Result<Vec<String>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files.iter().map(|p| p.display().to_string()).collect())
}

/// Every corpus scenario (`oracle/corpus/*.json`), loaded, in path order; the first file that
/// does not load is the error (its message names the file).
pub fn load_corpus() -> Result<Vec<Loaded>, String> {
    json_files(&corpus_dir())?
        .iter()
        .map(|p| crate::scenario::load_file(p).map_err(|e| e.to_string()))
        .collect()
}

/// The corpus scenario whose path ends with `file` (e.g. `global_vs_local.json`), loaded.
pub fn corpus_file(file: &str) -> Result<Loaded, String> {
    load_corpus()?
        .into_iter()
        .find(|l| l.source.ends_with(file))
        .ok_or_else(|| format!("{file} is not in the corpus ({})", corpus_dir().display()))
}

/// Counts from [`check_corpus`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CorpusReport {
    /// Scenarios whose `expect` held.
    pub agree: usize,
    /// Scenarios marked `known_deviation` (bpspec's own deviations; another engine may agree
    /// with ERTS there, which is reported, not failed).
    pub known_deviation: usize,
    /// Scenarios using a feature the engine does not claim (see `BreakpointEngine::supports`).
    pub unsupported: usize,
}

/// Run every corpus scenario with an `expect` on the engine `a` builds; the first scenario whose
/// observations differ from what ERTS was recorded doing fails, with a diff.
pub fn check_corpus(a: Factory) -> Result<CorpusReport, String> {
    let mut rep = CorpusReport::default();
    for l in load_corpus()? {
        let mut e = a(l.funcs.clone());
        match run(&l, e.as_mut()) {
            Err(crate::run::RunError::Unsupported { .. }) => rep.unsupported += 1,
            Err(other) => return Err(other.to_string()),
            Ok(obs) => match (&l.scenario.expect, &l.scenario.known_deviation) {
                (_, Some(_)) => rep.known_deviation += 1,
                (None, None) => {
                    return Err(format!(
                        "{}: a corpus scenario that runs needs expect",
                        l.source
                    ))
                }
                (Some(exp), None) => match crate::observe::diff_expect(exp, &obs) {
                    None => rep.agree += 1,
                    Some(d) => {
                        return Err(format!(
                            "{} on the {}: expected (-) vs observed (+):\n{d}",
                            l.source,
                            e.name()
                        ))
                    }
                },
            },
        }
    }
    Ok(rep)
}
