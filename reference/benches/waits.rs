//! Criterion benchmarks of the wait plans (docs/fewer-waits.md, docs/perf.md), ERTS's sequence
//! side by side with the variants in one run. Nothing here is asserted as a timing anywhere.
//!
//! - `waits_single`: the latency of one `trace_pattern` `true` and one `false` (call_count, 10
//!   functions), timed separately (the opposite op runs untimed between iterations), with 1 and
//!   2 schedulers busy on their own threads; plans `erts` and `batch-elide-idle` (a single
//!   pattern is a batch of one: `batch` makes the same waits as `erts`).
//! - `waits_100`: 100 consecutive `trace_pattern(true)` calls, one function each, against one
//!   batch of the same 100 patterns (then an untimed batch `false` restores the engine), with
//!   1 busy scheduler; plans `erts`, `batch`, `batch-elide-idle`.
//!
//!   Under `pipeline` the 100 patterns run as 100 consecutive calls, each without W4.
//! - `paired`: printed, not a criterion group: the ERTS engine and a variant engine served by
//!   the same busy threads (1 and 2), timed alternately for 200 rounds (the 100-pattern cases:
//!   50 rounds, 1 busy only); prints each median and the median of the per-round ratios. The
//!   pipeline cases: 100 consecutive `true` calls on fresh functions (500 waits under ERTS, 400
//!   pipelined), and 100 consecutive calls alternating `true` and `false` on 10 functions (each
//!   `false` unlinks 10 nodes: 450 waits against 350).
//!
//! Run with `cargo bench -p bpspec-reference --bench waits`.

use bpspec_reference::*;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const COUNT: FlagSet = FlagSet {
    local: false,
    call_count: true,
    call_time: false,
    call_memory: false,
};

/// Functions a busy scheduler calls between two progress points.
const BUSY_CALLS: usize = 4;

struct Busy {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Busy {
    fn start(e: &Arc<Engine>, n: usize) -> Busy {
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(Barrier::new(n + 1));
        let threads = (0..n)
            .map(|id| {
                let (e, stop, ready) = (e.clone(), stop.clone(), ready.clone());
                std::thread::spawn(move || {
                    let mut s = Scheduler::start(e, id);
                    s.record = false;
                    let p = Process::new(id as u64);
                    ready.wait();
                    while !stop.load(Relaxed) {
                        for f in 0..BUSY_CALLS {
                            black_box(s.call(f, &p));
                        }
                        s.progress();
                    }
                    s.sleep();
                })
            })
            .collect();
        ready.wait();
        Busy { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        for t in self.threads.drain(..) {
            t.join().expect("busy scheduler panicked");
        }
    }
}

fn entries(n: usize, op: PatternOp) -> Vec<BatchEntry> {
    (0..n)
        .map(|i| {
            BatchEntry::flags(
                Pattern::exact(&Mfa::new("m", &format!("f{i}"), 0)),
                op,
                COUNT,
            )
        })
        .collect()
}

fn bench_single(c: &mut Criterion) {
    let mut g = c.benchmark_group("waits_single");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    let all = vec![BatchEntry::flags(
        Pattern::parse("{m,'_','_'}").unwrap(),
        PatternOp::True,
        COUNT,
    )];
    let off = vec![BatchEntry {
        op: PatternOp::False,
        ..all[0].clone()
    }];
    for busy in [1usize, 2] {
        for plan in [WaitPlan::Erts, WaitPlan::BatchElideIdle] {
            let e = Arc::new(Engine::new(EngineConfig::simple(10, busy)).with_wait_plan(plan));
            let running = Busy::start(&e, busy);
            for (name, timed, untimed) in [("true", &all, &off), ("false", &off, &all)] {
                let id =
                    BenchmarkId::new(format!("{name}/{}", plan.name()), format!("{busy}_busy"));
                g.bench_function(id, |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            if name == "false" {
                                e.trace_pattern_batch(0, untimed).unwrap();
                            }
                            let t = Instant::now();
                            e.trace_pattern_batch(0, timed).unwrap();
                            total += t.elapsed();
                            if name == "true" {
                                e.trace_pattern_batch(0, untimed).unwrap();
                            }
                        }
                        total
                    })
                });
            }
            drop(running);
            e.check_at_rest().unwrap();
        }
    }
    g.finish();
}

fn bench_hundred(c: &mut Criterion) {
    let mut g = c.benchmark_group("waits_100");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(5));
    let on = entries(100, PatternOp::True);
    let off = entries(100, PatternOp::False);
    for plan in WaitPlan::ALL {
        let e = Arc::new(Engine::new(EngineConfig::simple(100, 1)).with_wait_plan(plan));
        let running = Busy::start(&e, 1);
        let what = if plan.batches() {
            "one_batch"
        } else {
            "100_calls"
        };
        g.bench_function(BenchmarkId::new(what, plan.name()), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    e.trace_pattern_batch(0, &on).unwrap();
                    total += t.elapsed();
                    e.trace_pattern_batch(0, &off).unwrap();
                }
                total
            })
        });
        drop(running);
        e.check_at_rest().unwrap();
    }
    g.finish();
}

/// Busy schedulers that serve two engines at once: each thread holds scheduler `id` of both and
/// loops over calls and a progress point on one, then on the other. A wait of either engine
/// then sees the same thread activity, so the two plans can be timed alternately.
struct BusyPair {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl BusyPair {
    fn start(a: &Arc<Engine>, b: &Arc<Engine>, n: usize) -> BusyPair {
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(Barrier::new(n + 1));
        let threads = (0..n)
            .map(|id| {
                let (a, b, stop, ready) = (a.clone(), b.clone(), stop.clone(), ready.clone());
                std::thread::spawn(move || {
                    let mut ss = [Scheduler::start(a, id), Scheduler::start(b, id)];
                    let p = Process::new(id as u64);
                    for s in ss.iter_mut() {
                        s.record = false;
                    }
                    ready.wait();
                    while !stop.load(Relaxed) {
                        for s in ss.iter_mut() {
                            for f in 0..BUSY_CALLS {
                                black_box(s.call(f, &p));
                            }
                            s.progress();
                        }
                    }
                    for s in ss.iter_mut() {
                        s.sleep();
                    }
                })
            })
            .collect();
        ready.wait();
        BusyPair { stop, threads }
    }
}

impl Drop for BusyPair {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        for t in self.threads.drain(..) {
            t.join().expect("busy scheduler panicked");
        }
    }
}

/// One paired case: name, functions, timed batch, untimed undo batch, variant plan.
type PairedCase<'a> = (&'a str, usize, &'a [BatchEntry], &'a [BatchEntry], WaitPlan);

/// Paired rounds (printed, not a criterion group): the ERTS engine and the elide-idle engine,
/// served by the same busy threads, timed alternately; prints the median of each and the median
/// of the per-round ratios, which the machine's load drift affects least.
fn paired_ratios() {
    const ROUNDS: usize = 200;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let all = |op| {
        vec![BatchEntry::flags(
            Pattern::parse("{m,'_','_'}").unwrap(),
            op,
            COUNT,
        )]
    };
    let (on, off) = (all(PatternOp::True), all(PatternOp::False));
    let (on100, off100) = (
        entries(100, PatternOp::True),
        entries(100, PatternOp::False),
    );
    // 100 calls alternating true and false over all 10 functions; ends where it began (the
    // last `false`'s nodes pending under pipeline, freed by the next round's first call).
    let alternating: Vec<BatchEntry> = (0..100)
        .map(|i| {
            let op = if i % 2 == 0 {
                PatternOp::True
            } else {
                PatternOp::False
            };
            BatchEntry::flags(Pattern::parse("{m,'_','_'}").unwrap(), op, COUNT)
        })
        .collect();
    for busy in [1usize, 2] {
        let cases: [PairedCase; 5] = [
            ("true", 10, &on, &off, WaitPlan::BatchElideIdle),
            ("false", 10, &off, &on, WaitPlan::BatchElideIdle),
            (
                "100 calls vs one batch of 100",
                100,
                &on100,
                &off100,
                WaitPlan::Batch,
            ),
            (
                "100 consecutive true calls, pipelined",
                100,
                &on100,
                &off100,
                WaitPlan::Pipeline,
            ),
            (
                "100 consecutive calls alternating true/false, pipelined",
                10,
                &alternating,
                &[],
                WaitPlan::Pipeline,
            ),
        ];
        for (what, n, timed, undo, variant) in cases {
            let erts = Arc::new(Engine::new(EngineConfig::simple(n, busy)));
            let var = Arc::new(Engine::new(EngineConfig::simple(n, busy)).with_wait_plan(variant));
            let _busy = BusyPair::start(&erts, &var, busy);
            // 100 ERTS calls with 2 busy schedulers on the 2-core machine take seconds (each
            // wait lasts a time slice): that case is left to the 1-busy run.
            let long = timed.len() == 100;
            if long && busy > 1 {
                continue;
            }
            let rounds = if long { ROUNDS / 4 } else { ROUNDS };
            let (mut te, mut tv, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..rounds {
                let one = |e: &Engine| {
                    if what == "false" {
                        e.trace_pattern_batch(0, undo).unwrap();
                    }
                    let t = Instant::now();
                    e.trace_pattern_batch(0, timed).unwrap();
                    let d = t.elapsed().as_secs_f64();
                    if what != "false" {
                        e.trace_pattern_batch(0, undo).unwrap();
                    }
                    d
                };
                let (a, b) = (one(&erts), one(&var));
                te.push(a);
                tv.push(b);
                ratio.push(b / a);
            }
            println!(
                "paired {what}, {busy} busy, {rounds} rounds: erts median {:.1} us, {} median {:.1} us, median ratio {:.3}",
                median(&mut te) * 1e6,
                variant.name(),
                median(&mut tv) * 1e6,
                median(&mut ratio)
            );
        }
    }
}

fn bench_paired(_c: &mut Criterion) {
    paired_ratios();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = bench_single, bench_hundred, bench_paired
}
criterion_main!(benches);
