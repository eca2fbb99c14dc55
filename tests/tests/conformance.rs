//! Conformance: the engine, driven by one thread, agrees with the sequential oracle
//! (`bpspec-spec`) on every observation: return values, trace_info results, trace events in
//! order, and whether each function is patched. The operation enum is ordered from simplest to
//! most complex, so proptest shrinks failures toward a few plain calls.

use bpspec_reference::*;
use bpspec_spec::Oracle;
use proptest::prelude::*;
use std::sync::Arc;

const FUNCS: usize = 3;

#[derive(Clone, Debug)]
enum Op {
    Call {
        f: usize,
        pid: u64,
        traced: u64,
    },
    Info {
        session: u32,
        f: usize,
        count: bool,
    },
    Pattern {
        session: u32,
        f: Option<usize>,
        op: PatternOp,
        local: bool,
        count: bool,
    },
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let pop = prop_oneof![
        Just(PatternOp::True),
        Just(PatternOp::False),
        Just(PatternOp::Pause),
        Just(PatternOp::Restart)
    ];
    prop_oneof![
        4 => (0..FUNCS, 1u64..4, 0u64..4).prop_map(|(f, pid, traced)| Op::Call { f, pid, traced }),
        1 => (0u32..2, 0..FUNCS + 1, any::<bool>()).prop_map(|(session, f, count)| Op::Info { session, f, count }),
        3 => (0u32..2, proptest::option::of(0..FUNCS), pop, any::<bool>(), any::<bool>())
            .prop_map(|(session, f, op, local, count)| Op::Pattern { session, f, op, local, count }),
    ]
}

fn mfas() -> Vec<Mfa> {
    (0..FUNCS)
        .map(|i| Mfa::new("m", &format!("f{i}"), 0))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn engine_agrees_with_the_oracle(ops in proptest::collection::vec(op_strategy(), 1..40)) {
        let _watchdog = bpspec_reference::watchdog::arm("conformance::engine_agrees_with_the_oracle");
        let e = Arc::new(Engine::<Qsbr>::new(EngineConfig { functions: mfas(), schedulers: 1, mutant: None }));
        let mut o = Oracle::new(mfas());
        let mut s = Scheduler::start(e.clone(), 0);
        s.sleep();
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Call { f, pid, traced } => {
                    let before = s.events.len();
                    s.wake();
                    s.call(f, &Process { pid, call_traced: traced });
                    s.sleep();
                    let got: Vec<_> = s.events[before..].iter().map(|ev| (ev.session, ev.pid, ev.func)).collect();
                    prop_assert_eq!(got, o.call(f, pid, traced), "step {}: events of {:?}", i, op);
                }
                Op::Info { session, f, count } => {
                    let mfa = if f < FUNCS { mfas()[f].clone() } else { Mfa::new("m", "missing", 0) };
                    let item = if count { InfoItem::CallCount } else { InfoItem::Traced };
                    prop_assert_eq!(e.trace_info(session, &mfa, item), o.trace_info(session, &mfa, item), "step {}: {:?}", i, op);
                }
                Op::Pattern { session, f, op: pop, local, count } => {
                    let pat = f.map_or(Pattern::all(), |f| Pattern::exact(&mfas()[f]));
                    let fl = TraceFlags { local, call_count: count };
                    let spec = TraceSpec::from(fl).session(session);
                    prop_assert_eq!(e.trace_pattern(&pat, pop, &spec), o.trace_pattern(&pat, pop, &spec), "step {}: {:?}", i, op);
                    prop_assert_eq!(e.check_at_rest(), Ok(()));
                }
            }
            for f in 0..FUNCS {
                prop_assert_eq!(e.is_patched(f), o.is_patched(f), "step {}: patched f{} after {:?}", i, f, op);
            }
        }
    }
}
