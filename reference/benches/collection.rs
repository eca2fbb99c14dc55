//! Scheduler throughput while `trace_info` collects call_time (docs/perf.md, "collection").
//!
//! Two scheduler threads call a call_time-traced function (`call_proc`, one clock unit, `ret`;
//! eight calls between progress points, with the process scheduled out and in around each
//! progress point) while a third thread runs `trace_info(f, call_time)` back to back, with the
//! non-blocking collection (OTP 29) or the stop-the-world one, or does nothing. One criterion
//! group, so the figures are side by side from one run. Also a "paced" pair where the querier
//! sleeps 1 ms between queries (the machine has two cores, so a back-to-back querier also takes
//! CPU away from the schedulers; the paced runs separate that from the protocol's cost).
//!
//! Each iteration is 64 calls per scheduler; throughput is reported in calls (both schedulers).
//! Nothing here is asserted as a timing; the run asserts states: the workers really were timed
//! (trace_info reports every call at the end) and the engine is at rest.
//!
//! Run with `cargo bench -p bpspec-reference --bench collection`; with
//! `BPSPEC_BENCH_RESULTS=DIR` it writes `perf-collection.tsv` (interleaved rounds) and
//! `perf-collection_criterion.tsv` there (benches/common/mod.rs).

mod common;

use bpspec_reference::term::Collection;
use bpspec_reference::*;
use common::{estimate, median, range, ratio, Run};
use criterion::{Criterion, Throughput};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const CALLS_PER_ITER: u64 = 64;
const WORKERS: usize = 2;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    None,
    NonBlocking,
    StopTheWorld,
}

fn engine() -> Arc<Engine> {
    let e = Engine::new(EngineConfig::simple(4, WORKERS)).with_stop_the_world();
    e.trace_pattern(
        &Pattern::exact(&Mfa::new("m", "f0", 0)),
        PatternOp::True,
        &TraceSpec::from(FlagSet::CALL_TIME),
    )
    .unwrap();
    Arc::new(e)
}

/// One sample: both workers make `calls` calls each while the querier runs; returns the wall
/// time from the common start until both workers are done.
fn sample(
    e: &Arc<Engine>,
    mode: Mode,
    pace: Option<Duration>,
    calls: u64,
    total: &[AtomicU64; 2],
) -> Duration {
    let start = Arc::new(Barrier::new(WORKERS + 2));
    let done = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..WORKERS)
        .map(|id| {
            let (e, start) = (e.clone(), start.clone());
            std::thread::spawn(move || {
                let mut s = Scheduler::start(e, id);
                s.record = false;
                let mut p = Proc::new(Process::call_traced_in(1000 + id as u64, 0));
                start.wait();
                s.schedule_in(&mut p);
                let mut n = 0;
                while n < calls {
                    for _ in 0..8 {
                        black_box(s.call_proc(0, &mut p));
                        s.advance(1);
                        s.ret(&mut p);
                    }
                    n += 8;
                    s.schedule_out(&mut p);
                    s.progress();
                    s.schedule_in(&mut p);
                }
                s.schedule_out(&mut p);
                s.sleep();
                n
            })
        })
        .collect();
    let querier = {
        let (e, start, done) = (e.clone(), start.clone(), done.clone());
        std::thread::spawn(move || {
            start.wait();
            let mfa = Mfa::new("m", "f0", 0);
            let mut q = 0u64;
            while !done.load(Relaxed) {
                match mode {
                    Mode::None => {
                        std::thread::sleep(Duration::from_micros(200));
                        continue;
                    }
                    Mode::NonBlocking => {
                        black_box(e.trace_info_with(
                            0,
                            &mfa,
                            InfoKey::CallTime,
                            Collection::NonBlocking,
                        ));
                    }
                    Mode::StopTheWorld => {
                        black_box(e.trace_info_with(
                            0,
                            &mfa,
                            InfoKey::CallTime,
                            Collection::StopTheWorld,
                        ));
                    }
                }
                q += 1;
                if let Some(d) = pace {
                    std::thread::sleep(d);
                }
            }
            q
        })
    };
    start.wait();
    let t0 = Instant::now();
    let mut made = 0;
    for w in workers {
        made += w.join().expect("worker panicked");
    }
    let dt = t0.elapsed();
    done.store(true, Relaxed);
    let q = querier.join().expect("querier panicked");
    total[0].fetch_add(made, Relaxed);
    total[1].fetch_add(q, Relaxed);
    dt
}

/// The five cases, by name: no query, non-blocking or stop-the-world queries back to back, and
/// both paced at one query per millisecond.
const CASES: [(&str, Mode, Option<Duration>); 5] = [
    ("none", Mode::None, None),
    ("nonblocking", Mode::NonBlocking, None),
    ("stop_the_world", Mode::StopTheWorld, None),
    (
        "nonblocking_paced_1ms",
        Mode::NonBlocking,
        Some(Duration::from_millis(1)),
    ),
    (
        "stop_the_world_paced_1ms",
        Mode::StopTheWorld,
        Some(Duration::from_millis(1)),
    ),
];

fn bench_collection(c: &mut Criterion) {
    let mut g = c.benchmark_group("collection");
    g.throughput(Throughput::Elements(WORKERS as u64 * CALLS_PER_ITER));
    g.measurement_time(Duration::from_secs(4));
    g.sample_size(20);
    let cases = CASES;
    for (name, mode, pace) in cases {
        let e = engine();
        let total = [AtomicU64::new(0), AtomicU64::new(0)];
        g.bench_function(name, |b| {
            b.iter_custom(|iters| sample(&e, mode, pace, iters * CALLS_PER_ITER, &total))
        });
        // The state the benchmark claims: every call was timed, nothing lost, engine at rest.
        let t = e.trace_info_term(0, &Mfa::new("m", "f0", 0), InfoKey::CallTime);
        let counted: i64 = match &t {
            Term::Tuple(kv) => match &kv[1] {
                Term::List(l) => l
                    .iter()
                    .map(|x| match x {
                        Term::Tuple(f) => match f[1] {
                            Term::Int(n) => n,
                            _ => panic!("{t}"),
                        },
                        _ => panic!("{t}"),
                    })
                    .sum(),
                _ => panic!("{t}"),
            },
            _ => panic!("{t}"),
        };
        assert_eq!(
            counted as u64,
            total[0].load(Relaxed),
            "{name}: calls lost or double counted"
        );
        let queries = total[1].load(Relaxed);
        assert!(
            mode == Mode::None || queries > 0,
            "{name}: the querier never queried"
        );
        eprintln!(
            "{name}: {queries} queries during {} calls",
            total[0].load(Relaxed)
        );
        e.check_at_rest().unwrap();
    }
    g.finish();
}

/// Calls/s of both schedulers from a time per iteration in nanoseconds.
fn calls_per_sec(ns: f64) -> f64 {
    (WORKERS as u64 * CALLS_PER_ITER) as f64 / (ns * 1e-9)
}

fn mcalls(x: f64) -> String {
    format!("{:.2} M", x / 1e6)
}

/// The criterion group's estimates, written as perf-collection_criterion.tsv.
fn criterion_table(run: &Run) {
    let none = calls_per_sec(estimate(run, "collection", "none").median);
    let rows: Vec<Vec<String>> = CASES
        .iter()
        .map(|(name, _, _)| {
            let e = estimate(run, "collection", name);
            // A longer time per iteration is fewer calls per second: the interval turns round.
            vec![
                format!("`{name}`"),
                mcalls(calls_per_sec(e.median)),
                format!(
                    "{} – {}",
                    mcalls(calls_per_sec(e.hi)),
                    mcalls(calls_per_sec(e.lo))
                ),
                ratio(calls_per_sec(e.median) / none),
            ]
        })
        .collect();
    let about = vec![
        "criterion group collection (the cases one after the other): calls/s of both schedulers"
            .to_string(),
        "from criterion's median time per iteration and its 95 % confidence interval".to_string(),
        "(target/criterion/collection/CASE/new/estimates.json of this run). docs/perf.md."
            .to_string(),
    ];
    let head = ["case", "median calls/s>", "95 % CI", "ratio to none>"];
    run.write("collection_criterion", &about, &head, &rows);
}

/// The same five cases, interleaved: each round runs every case once (in a rotated order) for a
/// fixed number of calls, and the ratio to `none` is taken within the round, so slow drifts in
/// the machine's load (docs/perf.md: the machine is shared) cancel out. Printed as a table;
/// criterion's own figures above are sequential per case. Written as perf-collection.tsv.
fn interleaved(run: &Run) {
    let rounds: usize = std::env::var("BPSPEC_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(common::rounds(11));
    let calls: u64 = 1 << 20;
    let cases = CASES;
    let engines: Vec<Arc<Engine>> = cases.iter().map(|_| engine()).collect();
    let mut rate = vec![Vec::new(); cases.len()];
    let mut ratio_of = vec![Vec::new(); cases.len()];
    let mut queries = vec![0u64; cases.len()];
    for r in 0..rounds {
        let mut this = vec![0.0f64; cases.len()];
        for k in 0..cases.len() {
            let i = (r + k) % cases.len();
            let (_, mode, pace) = cases[i];
            let total = [AtomicU64::new(0), AtomicU64::new(0)];
            let dt = sample(&engines[i], mode, pace, calls, &total);
            assert_eq!(total[0].load(Relaxed), calls * WORKERS as u64);
            queries[i] += total[1].load(Relaxed);
            this[i] = (calls * WORKERS as u64) as f64 / dt.as_secs_f64();
        }
        for i in 0..cases.len() {
            rate[i].push(this[i]);
            ratio_of[i].push(this[i] / this[0]);
        }
    }
    let rows: Vec<Vec<String>> = (0..cases.len())
        .map(|i| {
            let (lo, hi) = range(&ratio_of[i]);
            vec![
                format!("`{}`", cases[i].0),
                mcalls(median(&rate[i])),
                ratio(median(&ratio_of[i])),
                if i == 0 {
                    String::new()
                } else {
                    format!("{:.2}..{:.2}", lo, hi)
                },
                common::grouped(queries[i] as f64),
            ]
        })
        .collect();
    let about = vec![
        format!(
            "interleaved rounds: {rounds} rounds, each running every case once (rotated order)"
        ),
        format!("for {calls} calls per scheduler; the ratio to none is taken within the round."),
        "docs/perf.md shows it.".to_string(),
    ];
    let head = [
        "case",
        "median calls/s>",
        "median ratio to none (per round)>",
        "min..max ratio>",
        "queries>",
    ];
    run.write("collection", &about, &head, &rows);
    for e in engines {
        e.check_at_rest().unwrap();
    }
}

fn main() {
    // `BPSPEC_INTERLEAVED_ONLY=1` skips criterion's group.
    let all = std::env::var("BPSPEC_INTERLEAVED_ONLY").is_err();
    common::main(
        "collection",
        common::criterion(),
        |c| {
            if all {
                bench_collection(c)
            }
        },
        |run| {
            if all {
                criterion_table(run)
            }
        },
        interleaved,
    );
}
