//! Criterion benchmark of loading a traced module (docs/nonblocking-load.md, `load.rs`):
//! scheduler throughput while a loader loads and purges new versions of a traced module, ERTS's
//! blocking protocol and the non-blocking one side by side in one run. Nothing here is asserted
//! as a timing anywhere.
//!
//! - `load_purge`: the latency of one load + purge of a traced 10-function module with 2 busy
//!   schedulers, per protocol (criterion).
//! - `paired`: printed, not a criterion group. Per round, for each protocol in turn, 2 busy
//!   scheduler threads call the module (4 calls, then a progress point) for a window of
//!   `WINDOW` while the loader loads and purges in a loop ("churn"), and for the same window
//!   with the loader idle ("idle"); hits/s of the schedulers. Prints the medians over `ROUNDS`
//!   rounds and the median of the per-round ratios non-blocking / blocking.
//!
//! Run with `cargo bench -p bpspec-reference --bench load`.

use bpspec_reference::{LoadEngine, LoadProtocol, LoadScheduler, Qsbr};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const FUNCS: usize = 10;
const BUSY: usize = 2;
const BUSY_CALLS: usize = 4;
const ROUNDS: usize = 21;
const WINDOW: Duration = Duration::from_millis(100);
const PACED: u64 = 2;

struct Busy {
    stop: Arc<AtomicBool>,
    hits: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
}

impl Busy {
    fn start(e: &Arc<LoadEngine<Qsbr>>) -> Busy {
        let stop = Arc::new(AtomicBool::new(false));
        let hits = Arc::new(AtomicU64::new(0));
        let ready = Arc::new(Barrier::new(BUSY + 1));
        let threads = (0..BUSY)
            .map(|id| {
                let (e, stop, hits, ready) = (e.clone(), stop.clone(), hits.clone(), ready.clone());
                std::thread::spawn(move || {
                    let mut s = LoadScheduler::start(e, id);
                    ready.wait();
                    let mut n = 0u64;
                    let mut f = id;
                    while !stop.load(Relaxed) {
                        for _ in 0..BUSY_CALLS {
                            black_box(s.call(f % FUNCS));
                            f += 1;
                        }
                        n += BUSY_CALLS as u64;
                        s.progress();
                    }
                    hits.fetch_add(n, Relaxed);
                    s.sleep();
                })
            })
            .collect();
        ready.wait();
        Busy {
            stop,
            hits,
            threads,
        }
    }
    fn stop(self) -> u64 {
        self.stop.store(true, Relaxed);
        for t in self.threads {
            t.join().expect("busy scheduler");
        }
        self.hits.load(Relaxed)
    }
}

fn engine(p: LoadProtocol) -> Arc<LoadEngine<Qsbr>> {
    Arc::new(LoadEngine::new(FUNCS, BUSY, p, true, None))
}

fn bench_load_purge(c: &mut Criterion) {
    let mut g = c.benchmark_group("load_purge");
    for p in LoadProtocol::ALL {
        let e = engine(p);
        let busy = Busy::start(&e);
        g.bench_with_input(BenchmarkId::new(p.name(), BUSY), &p, |b, _| {
            b.iter(|| {
                e.load().expect("load");
                e.purge().expect("purge");
            })
        });
        busy.stop();
    }
    g.finish();
}

/// Hits/s of the busy schedulers over one window: loader idle (mode 0), `PACED` loads + purges
/// at the start of the window (mode 1, the same work for both protocols), or loads + purges back
/// to back for the whole window (mode 2).
fn window(p: LoadProtocol, mode: usize) -> (f64, u64) {
    let e = engine(p);
    let busy = Busy::start(&e);
    let t = Instant::now();
    let mut loads = 0;
    while t.elapsed() < WINDOW {
        if mode == 2 || (mode == 1 && loads < PACED) {
            e.load().expect("load");
            e.purge().expect("purge");
            loads += 1;
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let hits = busy.stop();
    (hits as f64 / t.elapsed().as_secs_f64(), loads)
}

fn paired() {
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    const MODES: [&str; 3] = ["idle", "paced", "churn"];
    let mut rate: [[Vec<f64>; 3]; 2] = Default::default(); // [protocol][mode]
    let mut loads: [[Vec<f64>; 3]; 2] = Default::default();
    let mut ratio: [Vec<f64>; 3] = Default::default(); // nonblocking / blocking per mode
    let mut own: [[Vec<f64>; 3]; 2] = Default::default(); // mode / idle, per protocol
    for _ in 0..ROUNDS {
        let mut r = [[0.0; 3]; 2];
        for (i, p) in LoadProtocol::ALL.into_iter().enumerate() {
            for (j, _) in MODES.iter().enumerate() {
                let (hps, n) = window(p, j);
                r[i][j] = hps;
                rate[i][j].push(hps);
                loads[i][j].push(n as f64);
            }
            for j in 0..3 {
                own[i][j].push(r[i][j] / r[i][0]);
            }
        }
        for j in 0..3 {
            ratio[j].push(r[1][j] / r[0][j]);
        }
    }
    println!(
        "load paired: {ROUNDS} rounds, {BUSY} busy schedulers, {FUNCS} functions traced, \
         window {} ms, paced = {PACED} loads+purges per window",
        WINDOW.as_millis()
    );
    for (i, p) in LoadProtocol::ALL.into_iter().enumerate() {
        for (j, m) in MODES.iter().enumerate() {
            println!(
                "load paired: {:<12} {:<6} {:>12.0} hits/s, {:>8.0} loads+purges per window, \
                 median per-round {m}/idle {:.3}",
                p.name(),
                m,
                median(&mut rate[i][j]),
                median(&mut loads[i][j]),
                median(&mut own[i][j]),
            );
        }
    }
    for (j, m) in MODES.iter().enumerate() {
        println!(
            "load paired: median per-round ratio nonblocking/blocking, {m}: {:.3}",
            median(&mut ratio[j])
        );
    }
}

fn bench_paired(_c: &mut Criterion) {
    paired();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench_load_purge, bench_paired
}
criterion_main!(benches);
