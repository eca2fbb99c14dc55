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

const PATS: [&str; 4] = ["m:f0/0", "m:f1/0", "m:f2/0", "{m,'_','_'}"];

/// A deterministic walk (an LCG picks each choice) over batches of one to four entries:
/// true/false/pause/restart over call_count, call_time, local and call_count+call_memory, on
/// one function or all.
struct Walk(u64);

impl Walk {
    fn new() -> Walk {
        Walk(0x627073706563)
    }

    /// A number below `m`.
    fn next(&mut self, m: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % m
    }

    fn batch(&mut self) -> Vec<BatchEntry> {
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
        (0..1 + self.next(4))
            .map(|_| {
                let (op, fl) = (ops[self.next(4)], fls[self.next(4)]);
                let fl = if fl.local && matches!(op, Pause | Restart) {
                    COUNT
                } else {
                    fl
                };
                entry(PATS[self.next(4)], op, fl)
            })
            .collect()
    }
}

#[test]
fn every_plan_ends_where_the_erts_sequence_ends() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "fewer_waits::every_plan_ends_where_the_erts_sequence_ends",
    );
    let mut walk = Walk::new();
    let batches: Vec<Vec<BatchEntry>> = (0..60).map(|_| walk.batch()).collect();
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

/// One step of [`walk_with_global_meta_and_call_time`].
#[derive(Clone, Debug)]
enum Step {
    /// A batch of local and counter entries (call_time among them) in a session.
    Batch(SessionId, Vec<BatchEntry>),
    /// `trace_pattern(Pattern, Op, [global])` in a session (a single call: not batchable).
    Global(SessionId, &'static str, PatternOp),
    /// `trace_pattern(Pattern, Op, [{meta, Tracer}])` in session 0 (a single call).
    Meta(&'static str, PatternOp),
}

/// What one engine shows after a step: the step's returned counts, `trace_info` of every
/// function for every key in both sessions (end state), and the history the step's calls saw
/// (each hit's function and the flags it acted on, and the meta tracer's messages).
type Seen = (Vec<usize>, Vec<String>, Vec<String>);

/// Every wait plan against the ERTS sequence, end states and histories, on sessions that hold
/// global, meta and call_time patterns: a deterministic walk of 80 steps over two sessions
/// (batches of local, call_count, call_time and call_memory entries; single global and meta
/// calls), with a process traced in both sessions making a remote call of each function (the
/// export entry's hit, then the code's) after every step. Returns the first difference.
fn walk_with_global_meta_and_call_time(mutant: Option<Mutant>) -> Result<(), String> {
    use PatternOp::*;
    let mut walk = Walk::new();
    // Global in both sessions first, so every batch runs in a session holding global patterns.
    let mut steps = vec![
        Step::Global(0, "{m,'_','_'}", True),
        Step::Global(1, "{m,'_','_'}", True),
        Step::Meta("m:f1/0", True),
    ];
    for _ in 0..80 {
        let s = walk.next(2) as SessionId;
        steps.push(match walk.next(6) {
            0 => Step::Global(s, PATS[walk.next(4)], [True, False][walk.next(2)]),
            1 => Step::Meta(PATS[walk.next(4)], [True, False][walk.next(2)]),
            _ => Step::Batch(s, walk.batch()),
        });
    }
    let mut want: Vec<Seen> = Vec::new();
    for (k, plan) in WaitPlan::ALL.into_iter().enumerate() {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(3, 1).with_mutant(mutant))
                .with_wait_plan(plan),
        );
        assert_eq!(e.create_session("s1"), Ok(1));
        let mb = Mailbox::new(99);
        let mut proc = Proc::new(Process::new(7));
        let call = ProcFlags {
            call: true,
            ..ProcFlags::default()
        };
        for sess in 0..2 {
            e.trace_process(&mut proc, sess, true, call, None).unwrap();
        }
        let mut s = Scheduler::start(e.clone(), 0);
        s.sleep();
        for (i, step) in steps.iter().enumerate() {
            let pat = |p: &str| Pattern::parse(p).unwrap();
            let n = match step {
                Step::Batch(sess, b) => e.trace_pattern_batch(*sess, b).unwrap(),
                Step::Global(sess, p, op) => {
                    let spec = TraceSpec::global().session(*sess);
                    vec![e.trace_pattern(&pat(p), *op, &spec).unwrap()]
                }
                Step::Meta(p, op) => {
                    let spec =
                        TraceSpec::counters(FlagSet::default()).meta(ProcessTracer::spec(&mb));
                    vec![e.trace_pattern(&pat(p), *op, &spec).unwrap()]
                }
            };
            e.check_at_rest()
                .unwrap_or_else(|err| panic!("{plan:?} step {i}: {err}"));
            s.wake();
            s.schedule_in(&mut proc);
            for f in 0..3 {
                s.tail_call_remote(f, &mut proc);
                s.advance(1);
            }
            s.schedule_out(&mut proc);
            s.sleep();
            let mut history: Vec<String> = std::mem::take(&mut s.hits)
                .iter()
                .map(|h| format!("f{} acted {:#x}", h.func, h.flags))
                .collect();
            history.extend(mb.take_strings());
            let mut state = snapshot(&e, 3);
            for f in 0..3 {
                let mfa = Mfa::new("m", &format!("f{f}"), 0);
                for sess in 0..2 {
                    for key in [InfoKey::Traced, InfoKey::Meta, InfoKey::CallTime] {
                        let v = e.trace_info_term(sess, &mfa, key);
                        state.push(format!("s{sess} f{f} {}: {v}", key.atom()));
                    }
                }
            }
            let got = (n, state, history);
            if k == 0 {
                want.push(got);
            } else if got != want[i] {
                return Err(format!(
                    "{plan:?} differs from the ERTS sequence after step {i} ({step:?}):\n\
                     {got:?}\nERTS: {:?}",
                    want[i]
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_plan_matches_the_erts_sequence_with_global_meta_and_call_time() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "fewer_waits::every_plan_matches_the_erts_sequence_with_global_meta_and_call_time",
    );
    walk_with_global_meta_and_call_time(None).unwrap();
}

/// The mutant `batch-false-clears-global` (a batched `false` also clears the session's global
/// trace) makes a batch plan differ from the ERTS sequence on that walk.
#[test]
fn mutant_batch_false_clears_global_is_caught() {
    let _watchdog =
        bpspec_reference::watchdog::arm("fewer_waits::mutant_batch_false_clears_global_is_caught");
    for m in [Mutant::BatchFalseClearsGlobal] {
        let err = walk_with_global_meta_and_call_time(Some(m))
            .expect_err("the mutant ends where the ERTS sequence ends");
        assert!(err.contains("Batch"), "{m}: {err}");
        eprintln!("{m}: {}", err.lines().next().unwrap_or(""));
    }
}

/// The elide-idle plan skips W3 and W4 only where proof EL reaches (docs/fewer-waits.md, EL7):
/// a sequence on the code area with no meta tracer on its chains. A global pattern, a local one
/// in a session that holds global patterns, and a meta pattern keep all five waits (four for
/// `false`) even when consolidate unlinks nothing.
#[test]
fn elide_idle_keeps_w3_and_w4_for_global_and_meta() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "fewer_waits::elide_idle_keeps_w3_and_w4_for_global_and_meta",
    );
    use PatternOp::*;
    let e = engine(2, WaitPlan::BatchElideIdle);
    let f0 = Pattern::parse("m:f0/0").unwrap();
    let f1 = Pattern::parse("m:f1/0").unwrap();
    let waits = |pat: &Pattern, op, spec: &TraceSpec| {
        let before = e.progress.completed_waits();
        e.trace_pattern(pat, op, spec).unwrap();
        e.check_at_rest().unwrap();
        e.progress.completed_waits() - before
    };
    // Within proof EL: a first call_count on f0 unlinks nothing.
    assert_eq!(waits(&f0, True, &TraceSpec::from(COUNT)), 3);
    // Meta on f1 (a fresh node, nothing unlinked), then restarted call_count beside it.
    let mb = Mailbox::new(99);
    let meta = TraceSpec::counters(FlagSet::default()).meta(ProcessTracer::spec(&mb));
    assert_eq!(waits(&f1, True, &meta), 5);
    assert_eq!(waits(&f1, True, &TraceSpec::from(COUNT)), 5);
    assert_eq!(waits(&f1, Restart, &TraceSpec::from(COUNT)), 5);
    // Meta cleared while call_count keeps the node: nothing unlinked, W3 and W4 kept.
    assert_eq!(waits(&f1, False, &meta), 4);
    // Now f1 holds no meta tracer: within proof EL again (3 waits), after the one wait of the
    // reclaim of the meta tracer cell that consolidate retired (M3).
    assert_eq!(waits(&f1, Restart, &TraceSpec::from(COUNT)), 1 + 3);
    // Global on f0's export entry (nothing unlinked), and local in that session afterwards.
    assert_eq!(waits(&f0, True, &TraceSpec::global()), 5);
    assert_eq!(waits(&f0, Restart, &TraceSpec::from(COUNT)), 5);
}
