//! Random scenarios (proptest strategies). Everything generated is valid by construction: the
//! generator draws small numbers and a builder maps them onto a well-formed scenario (calls only
//! go to functions declared earlier, self-recursion only counts `n` down to a `base` clause), so
//! shrinking the numbers shrinks the scenario and every scenario terminates.

use crate::scenario::{
    CallOp, Function, Module, Op, ProcessDecl, Scenario, Step, TraceFlagsOp, TraceInfoOp,
    TracePatternOp,
};
use proptest::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// What the generator may produce.
#[derive(Clone, Copy, Debug)]
pub struct GenConfig {
    /// Also call_time: `trace_pattern` with call_time, `trace_info` call_time/all, `advance`
    /// steps, and processes scheduled out while others run.
    pub call_time: bool,
    /// Also match specs with return_trace / exception_trace on local breakpoints (so calls,
    /// returns and raises produce `return_from` / `exception_from`).
    pub frames: bool,
    pub max_ops: usize,
    /// Also call_memory (OTP 26+): `trace_pattern` with call_memory (alone or with call_time /
    /// call_count), `trace_info` call_memory. Off by default, so the OTP 25 runs draw exactly
    /// the scenarios they drew before it existed (same seed, same scenarios).
    pub call_memory: bool,
    /// Also global call trace: patterns with `[]` or `[global]`. They reuse the
    /// draws of `[local, call_count]` with an even `f`, so the other draws stay as they were.
    pub global: bool,
    /// Only `call_count` patterns and `trace_info` call_count (a small subset for a first
    /// external engine; `bpspec oracle gen --features call_count`). Off by default.
    pub call_count_only: bool,
    /// Also pattern pairs: an exact-function `trace_pattern` draw becomes two patterns on that
    /// function with the same flags (the second spec from the draw), a call of it and a
    /// `trace_info` on it, so every spec pair of every flag kind is reached
    /// (oracle/src/coverage.rs). Off by default (the other runs keep their draws).
    pub pairs: bool,
    /// Also Erlang terms (docs/scenario.md, "Terms"): some call arguments become tuples (so
    /// `n-1` on them raises badarith) and base clauses return `{base, A1}`. They reuse the
    /// existing draws, so the other runs keep theirs. Off by default.
    pub terms: bool,
    /// Also the newer scenario features, on existing draws (so the other runs keep theirs):
    /// `catch` on some body calls, returns of expressions (`[A1]`, `A1 + 1`), trace_pattern
    /// draws that are badarg with a cause (`call_count`: a match spec with counters only;
    /// `badopt`: global with local), the match-spec action `caller`, and the process flags
    /// `arity` and (with frames, not call_time) `return_to`, initially and in `trace_flags`
    /// ops. Off by default.
    pub extras: bool,
    /// With `extras`: `return_to` also in scenarios that can raise (a `raise` step, or
    /// `terms`, whose tuples make `n-1` raise). Off for OTP releases before 29, whose
    /// `next_catch` sends return_to after an exception in fewer cases (docs/deviations.md,
    /// "return_to after an exception (OTP 25)"). On by default.
    pub return_to_with_raises: bool,
    /// Also code loading (docs/scenario.md, "Code loading"): half of the scheduling draws
    /// become a `load` or `load_changed` (most), `delete`, `purge` or `soft_purge` of a module,
    /// or (rarely) an `on_load` pattern set or cleared, so later calls run on a new version or
    /// raise `undef` (and, as rarely, a `trace_info` asks the on_load pattern instead of a
    /// missing function); every function without `base`
    /// gets a `changed_body` (its steps before the last reversed, another return value), unless
    /// the second code would reach other functions. Off by default (the other runs keep their
    /// draws).
    pub code: bool,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            call_time: true,
            frames: true,
            max_ops: 32,
            call_memory: false,
            global: true,
            call_count_only: false,
            pairs: false,
            terms: false,
            extras: false,
            return_to_with_raises: true,
            code: false,
        }
    }
}

/// Raw draws for one function.
#[derive(Clone, Debug)]
struct FDraw {
    arity: u32,
    exported: bool,
    base: bool,
    /// (kind, target, arg, times)
    steps: Vec<(u8, u8, u8, u8)>,
}

fn fdraw() -> impl Strategy<Value = FDraw> {
    (
        0u32..3,
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec((0u8..7, any::<u8>(), any::<u8>(), 0u8..4), 0..3),
    )
        .prop_map(|(arity, exported, base, steps)| FDraw {
            arity,
            exported,
            base,
            steps,
        })
}

/// Raw draws for one op, ordered simplest to most complex (proptest shrinks toward the first).
#[derive(Clone, Debug)]
enum ODraw {
    Call {
        p: u8,
        f: u8,
        args: [u8; 3],
        times: u8,
    },
    Info {
        f: u8,
        item: u8,
    },
    Flags {
        p: u8,
        on: bool,
    },
    Pattern {
        target: u8,
        f: u8,
        spec: u8,
        flags: u8,
    },
    /// Process `p` is scheduled out while another process calls, then back in.
    Sched {
        p: u8,
        f: u8,
    },
}

fn odraw(cfg: GenConfig) -> impl Strategy<Value = ODraw> {
    // call_memory widens two ranges (items: + call_memory; flag sets: + 3 with call_memory);
    // without it the ranges, and so the draws, are the ones from before call_memory.
    let (items, flag_sets) = if cfg.call_memory { (5, 9) } else { (4, 6) };
    let specs = if cfg.frames { 8 } else { 5 };
    prop_oneof![
        4 => (any::<u8>(), any::<u8>(), any::<[u8; 3]>(), 0u8..8).prop_map(|(p, f, args, times)| ODraw::Call { p, f, args, times }),
        2 => (any::<u8>(), 0u8..items).prop_map(|(f, item)| ODraw::Info { f, item }),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(p, on)| ODraw::Flags { p, on }),
        3 => (0u8..10, any::<u8>(), 0u8..specs, 0u8..flag_sets).prop_map(|(target, f, spec, flags)| ODraw::Pattern { target, f, spec, flags }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(p, f)| ODraw::Sched { p, f }),
    ]
}

/// A random valid scenario.
pub fn scenario(cfg: GenConfig) -> impl Strategy<Value = Scenario> {
    (
        proptest::collection::vec(proptest::collection::vec(fdraw(), 1..4), 1..3),
        proptest::collection::vec(any::<bool>(), 1..3),
        proptest::collection::vec(odraw(cfg), 1..cfg.max_ops.max(2)),
        any::<bool>(),
    )
        .prop_map(move |(mods, procs, ops, frames_not_time)| {
            // Match specs and call_time are not combined in one scenario: a function with both
            // stays charged after it returns (frames.rs F2), and the runner keeps a process
            // scheduled in between ops where ERTS's waits in `receive` (docs/deviations.md,
            // "return_trace / exception_trace in the oracle runner").
            let cfg = match (cfg.frames && cfg.call_time, frames_not_time) {
                (false, _) => cfg,
                (true, true) => GenConfig {
                    call_time: false,
                    ..cfg
                },
                (true, false) => GenConfig {
                    frames: false,
                    ..cfg
                },
            };
            build(cfg, mods, procs, ops)
        })
}

fn build(cfg: GenConfig, mods: Vec<Vec<FDraw>>, procs: Vec<bool>, ops: Vec<ODraw>) -> Scenario {
    // Declared functions: (module, name, arity, exported), in order.
    let mut decl: Vec<(String, String, u32, bool)> = Vec::new();
    let mut modules = Vec::new();
    for (mi, fs) in mods.iter().enumerate() {
        let mname = format!("bpm{mi}");
        let mut functions = Vec::new();
        for (fi, d) in fs.iter().enumerate() {
            let g = decl.len();
            let name = format!("f{fi}");
            // The first function of every module is exported, so there is something to call.
            let exported = d.exported || fi == 0;
            let mut body = Vec::new();
            let mut terminal = false;
            for &(kind, target, arg, times) in &d.steps {
                if terminal {
                    break;
                }
                match kind {
                    0..=2 if g > 0 => {
                        let (cm, cn, ca, cexp) = decl[target as usize % g].clone();
                        let local = cm == mname;
                        let remote = !local || (cexp && arg % 2 == 1);
                        if remote && !cexp {
                            continue;
                        }
                        let call = if remote {
                            format!("{cm}:{cn}/{ca}")
                        } else {
                            format!("{cn}/{ca}")
                        };
                        let args = (0..ca)
                            .map(|i| {
                                if d.arity > 0 && (arg as u32 + i) % 3 == 0 {
                                    Value::from("n")
                                } else {
                                    Value::from(((arg as u32 + i) % 3) as i64)
                                }
                            })
                            .collect();
                        let tail = kind == 2;
                        body.push(Step {
                            call: (!tail).then(|| call.clone()),
                            tail_call: tail.then_some(call),
                            args,
                            times: (!tail && times == 3).then_some(2),
                            catch: cfg.extras && !tail && times == 1,
                            ..Step::default()
                        });
                        terminal = tail;
                    }
                    3 => {
                        let v = if cfg.extras && d.arity > 0 && arg % 8 == 5 {
                            serde_json::json!({"cons": [{"arg": 1}, []]})
                        } else if cfg.extras && d.arity > 0 && arg % 8 == 7 {
                            serde_json::json!({"add": [{"arg": 1}, 1]})
                        } else if arg % 2 == 0 {
                            Value::from("r")
                        } else {
                            Value::from(format!("v{}", arg % 4))
                        };
                        body.push(Step {
                            r#return: Some(v),
                            ..Step::default()
                        });
                        terminal = true;
                    }
                    4 => {
                        body.push(Step {
                            raise: Some(format!("e{}", arg % 3).into()),
                            ..Step::default()
                        });
                        terminal = true;
                    }
                    6 if cfg.call_time => body.push(Step {
                        advance: Some(arg as u64 % 16),
                        ..Step::default()
                    }),
                    _ => body.push(Step {
                        allocate: Some(arg as u64 % 8),
                        ..Step::default()
                    }),
                }
            }
            let base = d.base && d.arity > 0;
            if base && !terminal {
                // Count n down to the base clause.
                let mut args = vec![Value::from("n-1")];
                args.extend((1..d.arity).map(|_| Value::from(0)));
                body.push(Step {
                    tail_call: Some(format!("{name}/{}", d.arity)),
                    args,
                    ..Step::default()
                });
            }
            functions.push(Function {
                name: name.clone(),
                arity: d.arity,
                exported,
                base: base.then(|| {
                    vec![Step {
                        r#return: Some(if cfg.terms {
                            serde_json::json!({"tuple": ["base", {"arg": 1}]})
                        } else {
                            Value::from("base")
                        }),
                        ..Step::default()
                    }]
                }),
                base_arg: None,
                base_match: None,
                changed_body: (cfg.code && !base).then(|| changed_body(&body)),
                body,
                receive: false,
            });
            decl.push((mname.clone(), name, d.arity, exported));
        }
        modules.push(Module {
            name: mname,
            functions,
        });
    }
    // `return_to` drawn at all (see `GenConfig::return_to_with_raises`).
    let can_raise = cfg.terms
        || modules
            .iter()
            .flat_map(|m: &Module| m.functions.iter())
            .any(|f| f.body.iter().any(|s| s.raise.is_some()));
    let return_to =
        cfg.extras && cfg.frames && !cfg.call_time && (cfg.return_to_with_raises || !can_raise);
    let processes: Vec<ProcessDecl> = procs
        .iter()
        .enumerate()
        .map(|(i, traced)| ProcessDecl {
            name: format!("p{}", i + 1),
            trace: if *traced {
                let mut fl = vec!["call".to_string()];
                // extras: p1 with return_to (frames only), p2 with arity.
                if return_to && i == 0 {
                    fl.push("return_to".into());
                }
                if cfg.extras && i == 1 {
                    fl.push("arity".into());
                }
                BTreeMap::from([("legacy".to_string(), fl)])
            } else {
                BTreeMap::new()
            },
        })
        .collect();
    let exported: Vec<&(String, String, u32, bool)> = decl.iter().filter(|d| d.3).collect();
    let nmods = modules.len();
    let call = |p: usize, f: u8, args: [u8; 3], times: u8| {
        let (m, n, a, _) = exported[f as usize % exported.len()];
        Op::Call(CallOp {
            process: format!("p{}", p % processes.len() + 1),
            mfa: format!("{m}:{n}/{a}"),
            args: (0..*a as usize)
                .map(|i| {
                    let v = Value::from((args[i] % 4) as i64);
                    if cfg.terms && args[i] >= 0xc0 {
                        serde_json::json!({ "tuple": [v] })
                    } else {
                        v
                    }
                })
                .collect(),
            times: (times >= 6).then(|| times as u32 - 4),
        })
    };
    let ops = ops
        .into_iter()
        .flat_map(|o| match o {
            ODraw::Sched { p, f } if cfg.code && p % 2 == 1 => {
                let m = format!("bpm{}", (f / 8) as usize % nmods);
                // After an on_load pattern op: its trace_info(on_load, Item), the item from the
                // bits that name the module of the other code ops (no other draw changes).
                let info_item = match (f / 8) % 8 {
                    _ if cfg.call_count_only => "call_count",
                    0 | 6 => "traced",
                    1 => "call_count",
                    2 => "match_spec",
                    4 if cfg.call_time => "call_time",
                    5 if cfg.call_memory => "call_memory",
                    _ => "all",
                };
                let on_load_info = Op::TraceInfo(TraceInfoOp {
                    session: "legacy".into(),
                    mfa: "on_load".into(),
                    item: info_item.into(),
                });
                let mut v = vec![match f % 8 {
                    0 | 1 => Op::Load(m),
                    2 | 3 => Op::LoadChanged(m),
                    4 | 5 => Op::Delete(m),
                    6 => Op::Purge(m),
                    // Half the soft purges become an on_load pattern (docs/scenario.md,
                    // "Code loading"): set or cleared, for the loads that follow.
                    _ if (f / 64) % 2 == 1 => Op::TracePattern(TracePatternOp {
                        session: "legacy".into(),
                        pattern: "on_load".into(),
                        spec: Value::Bool(p % 4 != 3),
                        flags: vec![match (p / 4) % 3 {
                            _ if cfg.call_count_only => "call_count",
                            0 => "local",
                            1 if cfg.call_time => "call_time",
                            _ => "call_count",
                        }
                        .to_string()],
                    }),
                    _ => Op::SoftPurge(m),
                }];
                if matches!(&v[0], Op::TracePattern(_)) {
                    v.push(on_load_info);
                }
                v
            }
            ODraw::Sched { p, f } if cfg.call_time => {
                let p = p as usize % processes.len();
                let name = format!("p{}", p + 1);
                let mut v = vec![Op::ScheduleOut(name.clone())];
                if processes.len() > 1 {
                    v.push(call(p + 1, f, [f, f / 4, f / 16], 0));
                }
                v.push(Op::ScheduleIn(name));
                v
            }
            ODraw::Sched { p, f } => vec![call(p as usize, f, [f; 3], 0)],
            ODraw::Call { p, f, args, times } => vec![call(p as usize, f, args, times)],
            ODraw::Info { f, item } => {
                // Mostly exported functions (the ones calls reach), sometimes anything else.
                let mfa = match f % 16 {
                    0..=11 => {
                        let (m, n, a, _) = exported[(f / 16) as usize % exported.len()];
                        format!("{m}:{n}/{a}")
                    }
                    12 | 13 => {
                        let d = &decl[(f / 16) as usize % decl.len()];
                        format!("{}:{}/{}", d.0, d.1, d.2)
                    }
                    14 => "bpm0:module_info/1".to_string(),
                    // With code loading, half the missing functions become the on_load
                    // pattern's trace_info (spec/src/code.rs CL8; no other draw changes).
                    _ if cfg.code && (f / 16) % 2 == 1 => "on_load".to_string(),
                    _ => "bpm0:missing/0".to_string(),
                };
                // With frames and without call_time: match_spec and all instead of call_time.
                let item = match item {
                    _ if cfg.call_time => item,
                    4 if cfg.call_memory => item,
                    2 if cfg.frames => 5,
                    _ if cfg.frames => item,
                    _ => item % 2,
                };
                let item = if cfg.call_count_only { 1 } else { item };
                vec![Op::TraceInfo(TraceInfoOp {
                    session: "legacy".into(),
                    mfa,
                    item: [
                        "traced",
                        "call_count",
                        "call_time",
                        "all",
                        "call_memory",
                        "match_spec",
                    ][item as usize]
                        .into(),
                })]
            }
            ODraw::Flags { p, on } => {
                let flags = match (p / 64) % 4 {
                    1 if return_to => vec!["call", "return_to"],
                    2 if cfg.extras => vec!["call", "arity"],
                    3 if return_to => vec!["return_to"],
                    _ => vec!["call"],
                };
                vec![Op::TraceFlags(TraceFlagsOp {
                    process: format!("p{}", p as usize % processes.len() + 1),
                    session: "legacy".into(),
                    on,
                    flags: flags.into_iter().map(String::from).collect(),
                })]
            }
            ODraw::Pattern {
                target,
                f,
                spec,
                flags,
            } => {
                let d = &decl[f as usize % decl.len()];
                let pattern = match target {
                    0..=2 => format!("{}:{}/{}", d.0, d.1, d.2),
                    3 => format!("{}:{}/_", d.0, d.1),
                    4..=6 => format!("bpm{}:_/_", f as usize % nmods),
                    7 | 8 => "_:_/_".to_string(),
                    _ => "nomod:_/_".to_string(),
                };
                let actions = |a: &[&str]| serde_json::json!({ "actions": a });
                // Without frames, a match-spec draw is `true`.
                let spec = if cfg.frames || spec < 5 { spec } else { 0 };
                let spec_v = match spec {
                    0 | 1 => Value::Bool(true),
                    2 => Value::Bool(false),
                    3 => Value::from("pause"),
                    4 => Value::from("restart"),
                    5 if cfg.extras && f % 4 == 1 => actions(&["caller"]),
                    5 => actions(&["return_trace"]),
                    6 if cfg.extras && f % 4 == 1 => actions(&["exception_trace", "caller"]),
                    6 => actions(&["exception_trace"]),
                    _ if cfg.extras && f % 4 == 1 => {
                        actions(&["return_trace", "exception_trace", "caller"])
                    }
                    _ => actions(&["return_trace", "exception_trace"]),
                };
                let flags = match flags {
                    _ if cfg.call_time => flags,
                    6 | 8 if cfg.call_memory => flags,
                    _ => flags % 4,
                };
                // A match spec mostly with local (call_count alone is badarg in ERTS).
                let flags = match (spec >= 5, flags) {
                    (true, 1) => 0,
                    (true, 4) => 9,
                    (true, 5) => 1,
                    _ => flags,
                };
                let mut fl = match flags {
                    0 => vec!["local"],
                    1 => vec!["call_count"],
                    4 => vec!["call_time"],
                    5 => vec!["call_time", "call_count"],
                    6 => vec!["call_memory"],
                    7 => vec!["call_memory", "call_time"],
                    8 => vec!["call_memory", "call_count", "local"],
                    9 => vec!["local", "call_time"],
                    _ => vec!["local", "call_count"],
                };
                if flags == 3 && spec == 2 {
                    fl = vec!["call_count"];
                }
                // (Not with a match spec: match specs on global breakpoints are a feature of their
                // own, which the sequential oracle lacks.)
                if flags == 3 && cfg.global && f % 2 == 0 && spec < 5 {
                    // Global trace: an empty flag list or `global` (any spec; pause and
                    // restart set it as true does).
                    fl = if f % 4 == 0 { vec![] } else { vec!["global"] };
                }
                // extras: badarg with a cause, on draws the pairs mode does not use.
                if cfg.extras && f % 16 == 15 {
                    if spec >= 5 {
                        fl = vec!["call_count"]; // a match spec with counters only
                    } else if target > 2 {
                        fl = vec!["global", "local"]; // badopt
                    }
                }
                if cfg.call_count_only {
                    fl = vec!["call_count"];
                }
                let op = |spec: Value| {
                    Op::TracePattern(TracePatternOp {
                        session: "legacy".into(),
                        pattern: pattern.clone(),
                        spec,
                        flags: fl.iter().map(|f| f.to_string()).collect(),
                    })
                };
                let mut v = vec![op(spec_v)];
                if cfg.pairs && target <= 2 && spec < 5 {
                    let second = match (f / 8) % 4 {
                        0 => Value::Bool(true),
                        1 => Value::Bool(false),
                        2 => Value::from("pause"),
                        _ => Value::from("restart"),
                    };
                    v.push(op(second));
                    if d.3 {
                        v.push(Op::Call(CallOp {
                            process: "p1".into(),
                            mfa: pattern.clone(),
                            args: vec![0.into(); d.2 as usize],
                            times: None,
                        }));
                    }
                    v.push(Op::TraceInfo(TraceInfoOp {
                        session: "legacy".into(),
                        mfa: pattern.clone(),
                        item: "call_count".into(),
                    }));
                }
                v
            }
        })
        .collect();
    let mut sc = Scenario {
        name: "generated".into(),
        description: String::new(),
        requires_otp: None,
        max_otp: None,
        known_deviation: None,
        modules,
        sessions: Vec::new(),
        processes,
        ops,
        expect: None,
    };
    if cfg.code && sc.loaded().is_err() {
        // The second code reaches other functions than the first (a reordered call that never
        // returns): keep the first code only.
        for f in sc.modules.iter_mut().flat_map(|m| m.functions.iter_mut()) {
            f.changed_body = None;
        }
    }
    sc
}

/// The second code of a generated body (`GenConfig::code`): the steps before its last one in
/// reverse order (so the function now calls another first), and a different return value.
fn changed_body(body: &[Step]) -> Vec<Step> {
    let terminal = body
        .last()
        .filter(|s| s.r#return.is_some() || s.raise.is_some() || s.tail_call.is_some());
    let n = body.len() - usize::from(terminal.is_some());
    let mut out: Vec<Step> = body[..n].iter().rev().cloned().collect();
    match terminal {
        Some(t) if t.r#return.is_none() => out.push(t.clone()),
        _ => out.push(Step {
            r#return: Some(Value::from("changed")),
            ..Step::default()
        }),
    }
    out
}

/// `n` scenarios from a fixed seed (deterministic across runs), for batch differential runs.
pub fn sample(cfg: GenConfig, n: usize, seed: u64) -> Vec<Scenario> {
    sample_of(scenario(cfg), n, seed, |i| {
        format!("generated seed {seed} #{i}")
    })
}

/// `n` values of `strat` from a fixed seed (the runner of [`crate::conformance`]), the `i`th
/// named `name(i)`.
pub(crate) fn sample_of(
    strat: impl Strategy<Value = Scenario>,
    n: usize,
    seed: u64,
    name: impl Fn(usize) -> String,
) -> Vec<Scenario> {
    use proptest::strategy::ValueTree;
    let mut runner = crate::conformance::runner(1, seed);
    (0..n)
        .map(|i| {
            let mut s = strat
                .new_tree(&mut runner)
                .expect("strategy never rejects")
                .current();
            s.name = name(i);
            s
        })
        .collect()
}
