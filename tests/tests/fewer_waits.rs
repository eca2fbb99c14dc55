//! The wait plans (docs/fewer-waits.md): how many grace periods a batch of `trace_pattern`s
//! costs under each plan, whatever the number of functions and of patterns, and that every plan
//! ends in the state the ERTS sequence gives (same trace_info, at rest).

use bpspec_reference::*;
use std::sync::Arc;

const COUNT: FlagSet = FlagSet {
    local: false,
    call_count: true,
    call_time: false,
    call_memory: false,
};
const LOCAL: FlagSet = FlagSet {
    local: true,
    call_count: false,
    call_time: false,
    call_memory: false,
};

fn engine(n: usize, plan: WaitPlan) -> Arc<Engine> {
    Arc::new(Engine::new(EngineConfig::simple(n, 1)).with_wait_plan(plan))
}

fn entry(pat: &str, op: PatternOp, fl: FlagSet) -> BatchEntry {
    BatchEntry::flags(Pattern::parse(pat).unwrap(), op, fl)
}

/// Run `batch` and return the waits it made, checking the at-rest invariant after it.
fn waits_of(e: &Engine, batch: &[BatchEntry]) -> u64 {
    let before = e.progress.completed_waits();
    e.trace_pattern_batch(0, batch).unwrap();
    e.check_at_rest().unwrap();
    e.progress.completed_waits() - before
}

#[test]
fn grace_periods_per_batch_for_each_plan_whatever_the_number_of_functions_and_patterns() {
    use PatternOp::*;
    for plan in WaitPlan::ALL {
        for n in [1usize, 10, 300] {
            for k in [1usize, 2, 10] {
                let e = engine(n, plan);
                let all = |op| vec![entry("{m,'_','_'}", op, COUNT); k];
                // (batch, consolidate unlinks a node, waits under Erts, Batch, BatchElideIdle)
                let cases: [(Vec<BatchEntry>, bool, [u64; 3]); 5] = [
                    (all(True), false, [5 * k as u64, 5, 3]),
                    (all(Restart), false, [5 * k as u64, 5, 3]),
                    (all(Pause), false, [5 * k as u64, 5, 3]),
                    (all(False), true, [4 * k as u64, 4, 4]),
                    (all(False), false, [4 * k as u64, 4, 2]),
                ];
                for (batch, unlinks, want) in cases {
                    let ops: Vec<PatternOp> = batch.iter().map(|b| b.op).collect();
                    let got = waits_of(&e, &batch);
                    let want = want[WaitPlan::ALL.iter().position(|&p| p == plan).unwrap()];
                    assert_eq!(got, want, "{plan:?}, {ops:?}, {n} functions");
                    assert_eq!(Engine::<Qsbr>::planned_waits(plan, &ops, unlinks), want);
                }
            }
        }
    }
}

#[test]
fn a_mixed_batch_costs_one_sequence() {
    use PatternOp::*;
    for plan in WaitPlan::ALL {
        let e = engine(4, plan);
        let batch = vec![
            entry("m:f0/0", True, COUNT),
            entry("m:f1/0", True, FlagSet::CALL_TIME),
            entry("m:f2/0", True, COUNT),
            entry("m:f2/0", False, COUNT),
        ];
        let ops: Vec<PatternOp> = batch.iter().map(|b| b.op).collect();
        let want = match plan {
            WaitPlan::Erts => 5 + 5 + 5 + 4,
            WaitPlan::Batch => 5,
            // f2's node is created and disabled within the batch: consolidate unlinks it.
            WaitPlan::BatchElideIdle => 5,
        };
        assert_eq!(waits_of(&e, &batch), want, "{plan:?}");
        assert_eq!(Engine::<Qsbr>::planned_waits(plan, &ops, true), want);
    }
}

fn snapshot(e: &Engine, n: usize) -> Vec<String> {
    (0..n)
        .flat_map(|f| {
            let mfa = Mfa::new("m", &format!("f{f}"), 0);
            [
                InfoKey::Traced,
                InfoKey::CallCount,
                InfoKey::CallTime,
                InfoKey::CallMemory,
            ]
            .map(|k| format!("f{f} {}: {}", k.atom(), e.trace_info_term(0, &mfa, k)))
        })
        .collect()
}

#[test]
fn every_plan_ends_where_the_erts_sequence_ends() {
    use PatternOp::*;
    let fls = [
        COUNT,
        FlagSet::CALL_TIME,
        LOCAL,
        FlagSet {
            call_count: true,
            call_memory: true,
            ..FlagSet::default()
        },
    ];
    let ops = [True, False, Pause, Restart];
    let pats = ["m:f0/0", "m:f1/0", "m:f2/0", "{m,'_','_'}"];
    // A deterministic walk over batches of one to four entries (an LCG picks them).
    let mut x: u64 = 0x627073706563;
    let mut next = |m: usize| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) as usize) % m
    };
    let batches: Vec<Vec<BatchEntry>> = (0..60)
        .map(|_| {
            (0..1 + next(4))
                .map(|_| {
                    let (op, fl) = (ops[next(4)], fls[next(4)]);
                    let fl = if fl.local && matches!(op, Pause | Restart) {
                        COUNT
                    } else {
                        fl
                    };
                    entry(pats[next(4)], op, fl)
                })
                .collect()
        })
        .collect();
    let engines: Vec<Arc<Engine>> = WaitPlan::ALL.iter().map(|&p| engine(3, p)).collect();
    let p = Process::new(7);
    let mut scheds: Vec<Scheduler> = engines
        .iter()
        .map(|e| {
            let mut s = Scheduler::start(e.clone(), 0);
            s.sleep();
            s
        })
        .collect();
    for (i, b) in batches.iter().enumerate() {
        let mut want = None;
        for (e, s) in engines.iter().zip(scheds.iter_mut()) {
            let n = e.trace_pattern_batch(0, b).unwrap();
            e.check_at_rest()
                .unwrap_or_else(|err| panic!("{:?} batch {i}: {err}", e.wait_plan()));
            s.wake();
            for f in 0..3 {
                for _ in 0..=f {
                    s.call(f, &p);
                }
            }
            s.sleep();
            let got = (n, snapshot(e, 3));
            match &want {
                None => want = Some(got),
                Some(w) => assert_eq!(&got, w, "{:?} after batch {i}: {b:?}", e.wait_plan()),
            }
        }
    }
}

#[test]
fn bad_batch_entries_are_errors_naming_the_entry_and_change_nothing() {
    for plan in WaitPlan::ALL {
        let e = engine(2, plan);
        let before = e.progress.completed_waits();
        let global = BatchEntry {
            pattern: Pattern::all(),
            op: PatternOp::True,
            spec: TraceSpec {
                flags: FlagSet::default(),
                global: true,
                ms: None,
                ..TraceSpec::default()
            },
        };
        let err = e
            .trace_pattern_batch(0, &[entry("m:f0/0", PatternOp::True, COUNT), global])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("batch entry 1") && err.contains("global"),
            "{err}"
        );
        assert_eq!(e.progress.completed_waits(), before, "{plan:?}");
        assert_eq!(
            e.trace_info(0, &Mfa::new("m", "f0", 0), InfoItem::CallCount),
            InfoValue::False
        );
        assert_eq!(e.trace_pattern_batch(0, &[]), Ok(vec![]));
        assert_eq!(e.progress.completed_waits(), before, "{plan:?}");
        // A TraceSpec can carry a meta tracer and a session; a batch takes neither.
        let mb = Mailbox::new(99);
        let bad = [
            (
                TraceSpec::local().meta(ProcessTracer::spec(&mb)),
                "meta patterns cannot be batched",
            ),
            (
                TraceSpec::local().session(3),
                "the entry names another session than the batch",
            ),
        ];
        for (spec, what) in bad {
            let entry = BatchEntry {
                pattern: Pattern::all(),
                op: PatternOp::True,
                spec,
            };
            let err = e.trace_pattern_batch(0, &[entry]).unwrap_err().to_string();
            assert!(err.contains("batch entry 0") && err.contains(what), "{err}");
            assert_eq!(e.progress.completed_waits(), before, "{plan:?}");
        }
    }
}
