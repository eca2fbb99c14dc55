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
//! - both again with two sessions and call_time on ([`Setup::Sessions`]): the module traced with
//!   call_count in the legacy session and call_time in a second one (two breakpoint nodes per
//!   function, carried by every load), the busy schedulers' processes call-traced so that every
//!   call and progress point charges call_time; the old version's removal clears both sessions.
//!   The paired windows of both setups run in the same rounds (`perf-load_sessions.tsv` gives
//!   the per-round ratio of the sessions setup to the plain one).
//!
//! - every window and the criterion group also under `NonBlocking` with LW1 folded into the
//!   removal's W1 ([`Variant::Fold`], `Engine::with_lw1_fold`), in the same rounds: a third row
//!   and the per-round ratio of the fold to the default `NonBlocking`.
//!
//! Run with `cargo bench -p bpspec-reference --bench load`; with `BPSPEC_BENCH_RESULTS=DIR` it
//! writes `perf-load.tsv`, `perf-load_sessions.tsv` and `perf-load_purge.tsv` there
//! (benches/common/mod.rs).

mod common;

use bpspec_reference::{Engine, EngineConfig, FlagSet, LoadProtocol, Qsbr, Scheduler, TraceSpec};
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

/// What the module is traced with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Setup {
    /// call_count in the legacy session.
    Plain,
    /// call_count in the legacy session and call_time in a second session.
    Sessions,
}

impl Setup {
    const ALL: [Setup; 2] = [Setup::Plain, Setup::Sessions];
    /// The criterion id's suffix.
    fn suffix(self) -> &'static str {
        match self {
            Setup::Plain => "",
            Setup::Sessions => "-sessions",
        }
    }
}

/// The engines compared: the two protocols, and `NonBlocking` with LW1 folded into the removal's
/// W1 (`Engine::with_lw1_fold`: a load of the traced module waits four times, W1–W4).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variant {
    Blocking,
    NonBlocking,
    Fold,
}

impl Variant {
    const ALL: [Variant; 3] = [Variant::Blocking, Variant::NonBlocking, Variant::Fold];
    fn protocol(self) -> LoadProtocol {
        match self {
            Variant::Blocking => LoadProtocol::Blocking,
            _ => LoadProtocol::NonBlocking,
        }
    }
    /// The criterion id's and the table's name.
    fn name(self) -> &'static str {
        match self {
            Variant::Fold => "nonblocking-fold",
            v => v.protocol().name(),
        }
    }
    fn label(self) -> String {
        match self {
            Variant::Fold => "`NonBlocking` with the LW1 fold".to_string(),
            v => format!("`{:?}`", v.protocol()),
        }
    }
}

/// A busy scheduler of an [`Engine`] with a module: 4 calls (rotating over the module) and a progress point.
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

fn engine(v: Variant, setup: Setup) -> Arc<Engine<Qsbr>> {
    let e = Engine::new(EngineConfig::simple(0, BUSY)).with_module(FUNCS, v.protocol(), true);
    let e = if v == Variant::Fold {
        e.with_lw1_fold()
    } else {
        e
    };
    if setup == Setup::Sessions {
        let s = e.create_session("bench").expect("session");
        let call_time = TraceSpec::from(FlagSet {
            call_time: true,
            ..Default::default()
        })
        .session(s);
        let n = e
            .trace_pattern_module_spec(true, &call_time)
            .expect("call_time");
        assert_eq!(n, FUNCS);
    }
    Arc::new(e)
}

fn bench_load_purge(c: &mut Criterion) {
    let mut g = c.benchmark_group("load_purge");
    // A non-blocking load + purge makes six grace periods, each a time slice or more with 2
    // busy schedulers and the loader on 2 cores: few equal-sized samples.
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(3));
    for setup in Setup::ALL {
        for v in Variant::ALL {
            let e = engine(v, setup);
            let running = busy(&e);
            let id = BenchmarkId::new(format!("{}{}", v.name(), setup.suffix()), BUSY);
            g.bench_with_input(id, &v, |b, _| {
                b.iter(|| {
                    e.load().expect("load");
                    e.purge().expect("purge");
                })
            });
            running.stop();
            e.check_at_rest().unwrap();
        }
    }
    g.finish();
}

/// Hits/s of the busy schedulers over one window in mode `mode` (an index into `MODES`), and the
/// loads + purges made.
fn window(v: Variant, setup: Setup, mode: usize) -> (f64, u64) {
    let e = engine(v, setup);
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

/// One setup's measurements over the rounds.
#[derive(Default)]
struct Series {
    hps: [[Vec<f64>; 3]; 3], // [variant][mode]
    loads: [[Vec<f64>; 3]; 3],
    own: [[Vec<f64>; 3]; 3], // mode / idle, per variant
    cross: [Vec<f64>; 3],    // nonblocking / blocking, per mode
    fold: [Vec<f64>; 3],     // fold / nonblocking, per mode
}

impl Series {
    /// One round of this setup: every variant and mode; returns hits/s [variant][mode].
    fn round(&mut self, setup: Setup) -> [[f64; 3]; 3] {
        let mut r = [[0.0; 3]; 3];
        for (i, v) in Variant::ALL.into_iter().enumerate() {
            for (j, h) in r[i].iter_mut().enumerate() {
                let (hits, n) = window(v, setup, j);
                *h = hits;
                self.hps[i][j].push(hits);
                self.loads[i][j].push(n as f64);
            }
            for (j, own) in self.own[i].iter_mut().enumerate() {
                own.push(r[i][j] / r[i][0]);
            }
        }
        for (j, cross) in self.cross.iter_mut().enumerate() {
            cross.push(r[1][j] / r[0][j]);
        }
        for (j, fold) in self.fold.iter_mut().enumerate() {
            fold.push(r[2][j] / r[1][j]);
        }
        r
    }

    /// The table's rows: one per variant, then the per-round ratios of the protocols and of
    /// the fold to `NonBlocking`.
    fn rows(&self) -> Vec<Vec<String>> {
        let mut rows: Vec<Vec<String>> = Variant::ALL
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                vec![
                    v.label(),
                    rate(median(&self.hps[i][0])),
                    rate(median(&self.hps[i][1])),
                    rate(median(&self.hps[i][2])),
                    common::grouped(median(&self.loads[i][1])),
                    common::grouped(median(&self.loads[i][2])),
                    ratio(median(&self.own[i][1])),
                    ratio(median(&self.own[i][2])),
                ]
            })
            .collect();
        rows.push(ratio_row(
            "`NonBlocking` / `Blocking` (per round)",
            &self.cross,
        ));
        rows.push(ratio_row(
            "`NonBlocking` with the LW1 fold / `NonBlocking` (per round)",
            &self.fold,
        ));
        rows
    }
}

/// A row of per-round ratios, one per mode.
fn ratio_row(name: &str, r: &[Vec<f64>; 3]) -> Vec<String> {
    let mut row = vec![name.to_string()];
    row.extend(r.iter().map(|v| ratio(median(v))));
    row.extend(std::iter::repeat_n(String::new(), 4));
    row
}

const HEAD: [&str; 8] = [
    "protocol",
    "idle hits/s>",
    "paced hits/s>",
    "churn hits/s>",
    "loads + purges per paced window>",
    "loads + purges per churn window>",
    "paced / idle>",
    "churn / idle>",
];

/// The paired windows, written as perf-load.tsv (call_count only) and perf-load_sessions.tsv
/// (two sessions, call_time on), both setups in every round (nonblocking-load.md §6).
fn paired(run: &Run) {
    let mut plain = Series::default();
    let mut sessions = Series::default();
    // sessions / plain, per variant and mode.
    let mut vs: [[Vec<f64>; 3]; 3] = Default::default();
    let rounds = common::rounds(ROUNDS);
    for _ in 0..rounds {
        let a = plain.round(Setup::Plain);
        let b = sessions.round(Setup::Sessions);
        for i in 0..Variant::ALL.len() {
            for j in 0..MODES.len() {
                vs[i][j].push(b[i][j] / a[i][j]);
            }
        }
    }
    let window = |what: &str| {
        vec![
            format!(
                "paired windows: {rounds} rounds; per round, each protocol (and NonBlocking with the LW1 fold)"
            ),
            format!(
                "in turn, a fresh engine ({FUNCS} functions, {what}) and {BUSY} busy scheduler threads run for {} ms with the loader idle,",
                WINDOW.as_millis()
            ),
            format!(
                "doing {PACED} loads + purges from the window's start (paced), and loading + purging back"
            ),
            "to back (churn). Medians over the rounds; the ratios are medians of per-round ratios."
                .to_string(),
        ]
    };
    let mut about = window("all traced");
    about.push("docs/nonblocking-load.md §6 shows it.".to_string());
    run.write("load", &about, &HEAD, &plain.rows());
    let mut about = window("all traced");
    about.push(
        "Traced with call_count in the legacy session and call_time in a second one; the busy"
            .to_string(),
    );
    about.push(
        "processes call-traced (call_time charged at every call and progress point).".to_string(),
    );
    about.push(
        "The windows of perf-load.tsv (call_count only) run in the same rounds; the last rows are"
            .to_string(),
    );
    about.push(
        "the per-round ratios of these windows to those, per protocol. docs/nonblocking-load.md §6."
            .to_string(),
    );
    let mut rows = sessions.rows();
    for (i, v) in Variant::ALL.into_iter().enumerate() {
        rows.push(ratio_row(
            &format!(
                "{}: sessions + call_time / call_count only (per round)",
                v.label()
            ),
            &vs[i],
        ));
    }
    run.write("load_sessions", &about, &HEAD, &rows);
}

/// The criterion group's estimates, written as perf-load_purge.tsv.
fn criterion_table(run: &Run) {
    let rows: Vec<Vec<String>> = Setup::ALL
        .into_iter()
        .flat_map(|s| Variant::ALL.into_iter().map(move |v| (s, v)))
        .map(|(s, v)| {
            let id = format!("{}{}/{BUSY}", v.name(), s.suffix());
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
        "(`-sessions`: call_count in the legacy session and call_time in a second one)".to_string(),
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
