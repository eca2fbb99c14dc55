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

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = bench_single, bench_hundred
}
criterion_main!(benches);
