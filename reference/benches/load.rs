//! Benchmark of loading a traced module (docs/nonblocking-load.md, `load.rs`): scheduler
//! throughput while a loader loads and purges new versions of a traced module, ERTS's blocking
//! protocol and the non-blocking one side by side in one run. Nothing here is asserted as a
//! timing anywhere.
//!
//! - `load_purge` (criterion): the latency of one load + purge of a traced 10-function module
//!   with 2 busy schedulers, per protocol. A non-blocking load of a traced module waits LW1 and
//!   W1–W4 (the old breakpoints' removal), its purge PW.
//! - paired windows (not a criterion group): per round, for each protocol in turn, 2 busy
//!   scheduler threads call the module (4 calls, then a progress point) for a window of
//!   `WINDOW` with the loader idle ("idle"), doing `PACED` loads + purges from the start of the
//!   window ("paced": the same work under both protocols) and loading and purging back to back
//!   ("churn"); hits/s of the schedulers. The medians over `ROUNDS` rounds, the medians of the
//!   per-round ratios, and the loads + purges per window.
//!
//! Run with `cargo bench -p bpspec-reference --bench load`; with `BPSPEC_BENCH_RESULTS=DIR` it
//! writes `perf-load.tsv` and `perf-load_purge.tsv` there (benches/common/mod.rs).

mod common;

use bpspec_reference::{Engine, EngineConfig, LoadProtocol, Qsbr, Scheduler};
use common::{estimate, interval, median, rate, ratio, time, Busy, Run, Spinner, BUSY_CALLS};
use criterion::{BenchmarkId, Criterion, SamplingMode};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

const FUNCS: usize = 10;
const BUSY: usize = 2;
const ROUNDS: usize = 21;
/// Long enough for `PACED` non-blocking loads + purges (six grace periods each) on the loaded
/// 2-core machine.
const WINDOW: Duration = Duration::from_millis(300);
const PACED: u64 = 2;
const MODES: [&str; 3] = ["idle", "paced", "churn"];

/// A busy scheduler of a [`Engine`] with a module: 4 calls (rotating over the module) and a progress point.
struct LoadSpin {
    s: Scheduler<Qsbr>,
    f: usize,
}

impl Spinner for LoadSpin {
    fn round(&mut self) -> u64 {
        for _ in 0..BUSY_CALLS {
            black_box(self.s.call_ext(self.f % FUNCS));
            self.f += 1;
        }
        self.s.progress();
        BUSY_CALLS as u64
    }
    fn park(&mut self) {
        self.s.sleep();
    }
}

fn busy(e: &Arc<Engine<Qsbr>>) -> Busy {
    Busy::start(BUSY, |id| {
        let e = e.clone();
        move || LoadSpin {
            s: Scheduler::start(e, id),
            f: id,
        }
    })
}

fn engine(p: LoadProtocol) -> Arc<Engine<Qsbr>> {
    Arc::new(Engine::new(EngineConfig::simple(0, BUSY)).with_module(FUNCS, p, true))
}

fn bench_load_purge(c: &mut Criterion) {
    let mut g = c.benchmark_group("load_purge");
    // A non-blocking load + purge makes six grace periods, each a time slice or more with 2
    // busy schedulers and the loader on 2 cores: few equal-sized samples.
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(3));
    for p in LoadProtocol::ALL {
        let e = engine(p);
        let running = busy(&e);
        g.bench_with_input(BenchmarkId::new(p.name(), BUSY), &p, |b, _| {
            b.iter(|| {
                e.load().expect("load");
                e.purge().expect("purge");
            })
        });
        running.stop();
        e.check_at_rest().unwrap();
    }
    g.finish();
}

/// Hits/s of the busy schedulers over one window in mode `mode` (an index into `MODES`), and the
/// loads + purges made.
fn window(p: LoadProtocol, mode: usize) -> (f64, u64) {
    let e = engine(p);
    let running = busy(&e);
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
    let hits = running.stop();
    (hits as f64 / t.elapsed().as_secs_f64(), loads)
}

/// The paired windows, written as perf-load.tsv (nonblocking-load.md §6).
fn paired(run: &Run) {
    let mut hps: [[Vec<f64>; 3]; 2] = Default::default(); // [protocol][mode]
    let mut loads: [[Vec<f64>; 3]; 2] = Default::default();
    let mut own: [[Vec<f64>; 3]; 2] = Default::default(); // mode / idle, per protocol
    let mut cross: [Vec<f64>; 3] = Default::default(); // nonblocking / blocking, per mode
    let rounds = common::rounds(ROUNDS);
    for _ in 0..rounds {
        let mut r = [[0.0; 3]; 2];
        for (i, p) in LoadProtocol::ALL.into_iter().enumerate() {
            for j in 0..MODES.len() {
                let (h, n) = window(p, j);
                r[i][j] = h;
                hps[i][j].push(h);
                loads[i][j].push(n as f64);
            }
            for j in 0..MODES.len() {
                own[i][j].push(r[i][j] / r[i][0]);
            }
        }
        for j in 0..MODES.len() {
            cross[j].push(r[1][j] / r[0][j]);
        }
    }
    let head = [
        "protocol",
        "idle hits/s>",
        "paced hits/s>",
        "churn hits/s>",
        "loads + purges per paced window>",
        "loads + purges per churn window>",
        "paced / idle>",
        "churn / idle>",
    ];
    let mut rows: Vec<Vec<String>> = LoadProtocol::ALL
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            vec![
                format!("`{p:?}`"),
                rate(median(&hps[i][0])),
                rate(median(&hps[i][1])),
                rate(median(&hps[i][2])),
                common::grouped(median(&loads[i][1])),
                common::grouped(median(&loads[i][2])),
                ratio(median(&own[i][1])),
                ratio(median(&own[i][2])),
            ]
        })
        .collect();
    rows.push(vec![
        "`NonBlocking` / `Blocking` (per round)".to_string(),
        ratio(median(&cross[0])),
        ratio(median(&cross[1])),
        ratio(median(&cross[2])),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]);
    let about = vec![
        format!(
            "paired windows: {rounds} rounds; per round, each protocol in turn, a fresh engine ({FUNCS}"
        ),
        format!(
            "functions, all traced) and {BUSY} busy scheduler threads run for {} ms with the loader idle,",
            WINDOW.as_millis()
        ),
        format!(
            "doing {PACED} loads + purges from the window's start (paced), and loading + purging back"
        ),
        "to back (churn). Medians over the rounds; the ratios are medians of per-round ratios."
            .to_string(),
        "docs/nonblocking-load.md §6 shows it.".to_string(),
    ];
    run.write("load", &about, &head, &rows);
}

/// The criterion group's estimates, written as perf-load_purge.tsv.
fn criterion_table(run: &Run) {
    let rows: Vec<Vec<String>> = LoadProtocol::ALL
        .into_iter()
        .map(|p| {
            let id = format!("{}/{BUSY}", p.name());
            let e = estimate(run, "load_purge", &id);
            vec![
                format!("`load_purge/{id}`"),
                time(e.median),
                interval(e.median, e.lo, e.hi),
            ]
        })
        .collect();
    let about = vec![
        format!("criterion group load_purge: one load + purge of a traced {FUNCS}-function module"),
        format!(
            "with {BUSY} busy schedulers; median per iteration and its 95 % confidence interval"
        ),
        "(target/criterion/load_purge/ID/new/estimates.json of this run). nonblocking-load.md §6."
            .to_string(),
    ];
    run.write("load_purge", &about, &["id", "median>", "95 % CI"], &rows);
}

fn main() {
    let c = common::criterion().measurement_time(Duration::from_secs(3));
    common::main("load", c, bench_load_purge, criterion_table, paired);
}
