//! The wait plans (docs/fewer-waits.md): how many grace periods a batch of `trace_pattern`s
//! costs under each plan, whatever the number of functions and of patterns, and that every plan
//! ends in the state the ERTS sequence gives (same trace_info, at rest).

use bpspec_reference::*;
use std::sync::Arc;

const COUNT: FlagSet = FlagSet::CALL_COUNT;
const LOCAL: FlagSet = FlagSet::LOCAL;

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
    let _watchdog = bpspec_reference::watchdog::arm("fewer_waits::grace_periods_per_batch_for_each_plan_whatever_the_number_of_functions_and_patterns");
    use PatternOp::*;
    for plan in WaitPlan::ALL {
        for n in [1usize, 10, 300] {
            for k in [1usize, 2, 10] {
                let e = engine(n, plan);
                let all = |op| vec![entry("{m,'_','_'}", op, COUNT); k];
                let k64 = k as u64;
                // (batch, consolidate unlinks a node, waits under Erts, Batch, BatchElideIdle,
                // Pipeline)
                let cases: [(Vec<BatchEntry>, bool, [u64; 4]); 5] = [
                    (all(True), false, [5 * k64, 5, 3, 4 * k64]),
                    (all(Restart), false, [5 * k64, 5, 3, 4 * k64]),
                    (all(Pause), false, [5 * k64, 5, 3, 4 * k64]),
                    (all(False), true, [4 * k64, 4, 4, 3 * k64]),
                    (all(False), false, [4 * k64, 4, 2, 3 * k64]),
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
    let _watchdog =
        bpspec_reference::watchdog::arm("fewer_waits::a_mixed_batch_costs_one_sequence");
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
            // Consecutive calls without W4.
            WaitPlan::Pipeline => 4 + 4 + 4 + 3,
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
    let _watchdog = bpspec_reference::watchdog::arm(
        "fewer_waits::every_plan_ends_where_the_erts_sequence_ends",
    );
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
    let _watchdog = bpspec_reference::watchdog::arm(
        "fewer_waits::bad_batch_entries_are_errors_naming_the_entry_and_change_nothing",
    );
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

/// Pipelining (docs/fewer-waits.md §6): a sequence of N calls costs 4 waits per installing call
/// and 3 per `false`, against ERTS's 5 and 4; what a call unlinks is freed after the next
/// call's first wait, so at most one call's nodes wait on the free list, and `settle` frees
/// them after one wait of its own.
#[test]
fn pipeline_waits_per_call_in_a_sequence_of_n_calls() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "fewer_waits::pipeline_waits_per_call_in_a_sequence_of_n_calls",
    );
    use PatternOp::*;
    for n in [1usize, 10, 100] {
        for plan in [WaitPlan::Erts, WaitPlan::Pipeline] {
            let e = engine(4, plan);
            let mut per_call = Vec::new();
            for i in 0..n {
                // Alternate: set call_count on f0..f3, remove it (unlinks all four nodes).
                let op = if i % 2 == 0 { True } else { False };
                let before = e.progress.completed_waits();
                e.trace_pattern(
                    &Pattern::parse("{m,'_','_'}").unwrap(),
                    op,
                    &TraceSpec::from(COUNT),
                )
                .unwrap();
                per_call.push(e.progress.completed_waits() - before);
                // At rest between calls, with the last call's nodes pending under Pipeline.
                e.check_at_rest().unwrap();
            }
            let want: Vec<u64> = (0..n)
                .map(|i| match (plan, i % 2 == 0) {
                    (WaitPlan::Erts, true) => 5,
                    (WaitPlan::Erts, false) => 4,
                    (_, true) => 4,
                    (_, false) => 3,
                })
                .collect();
            assert_eq!(per_call, want, "{plan:?}, {n} calls");
            let settle = e.settle();
            // The last call unlinked when it was a `false` (n even).
            let pending = plan == WaitPlan::Pipeline && n % 2 == 0;
            assert_eq!(settle, u64::from(pending), "{plan:?}, {n} calls");
            assert_eq!(e.settle(), 0, "settled");
            e.check_at_rest().unwrap();
            let total: u64 = per_call.iter().sum::<u64>() + settle;
            let ops: Vec<PatternOp> = (0..n)
                .map(|i| if i % 2 == 0 { True } else { False })
                .collect();
            assert_eq!(
                total - settle,
                Engine::<Qsbr>::planned_waits(plan, &ops, true)
            );
        }
    }
}

/// Under Pipeline the deferred nodes are really freed by the next call (after its first wait),
/// not at the end of the call that unlinked them, and the skip-w4-before-free mutant frees them
/// at once.
#[test]
fn pipeline_frees_the_previous_calls_nodes_after_the_next_calls_first_wait() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "fewer_waits::pipeline_frees_the_previous_calls_nodes_after_the_next_calls_first_wait",
    );
    use PatternOp::*;
    for mutant in [None, Some(Mutant::SkipWaitBeforeFree)] {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(2, 1).with_mutant(mutant))
                .with_wait_plan(WaitPlan::Pipeline),
        );
        let f0 = Pattern::parse("m:f0/0").unwrap();
        let f1 = Pattern::parse("m:f1/0").unwrap();
        e.trace_pattern(&f0, True, &TraceSpec::from(COUNT)).unwrap();
        assert_eq!(e.pending_free(), 0);
        e.trace_pattern(&f0, False, &TraceSpec::from(COUNT))
            .unwrap();
        // Unlinked; freed only after the next wait (or at once by the mutant).
        assert_eq!(e.pending_free(), if mutant.is_some() { 0 } else { 1 });
        e.check_at_rest().unwrap();
        let before = e.progress.completed_waits();
        e.trace_pattern(&f1, True, &TraceSpec::from(COUNT)).unwrap();
        assert_eq!(e.progress.completed_waits() - before, 4);
        assert_eq!(e.pending_free(), 0, "f0's node freed by the next call");
        e.check_at_rest().unwrap();
    }
}
