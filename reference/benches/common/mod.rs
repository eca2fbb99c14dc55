//! Shared by the benches in reference/benches/: busy scheduler threads, medians of paired
//! rounds, criterion's own estimates, and the result files (docs/perf.md, "How the tables are
//! made").
//!
//! With `BPSPEC_BENCH_RESULTS=DIR` (relative to the workspace root unless absolute) a bench
//! writes its tables as `DIR/perf-NAME.tsv` for the docs generator (cli/src/docgen.rs, kind
//! `table`): `#` lines stating the command, the date, the machine and the load average at the
//! start and the end of the run, then a header line (a cell ending in `>` is right-aligned), then
//! the rows. `make perf-doc` runs every bench so and regenerates the book's blocks.
#![allow(dead_code)] // each bench uses a part

use criterion::Criterion;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bpspec_reference::{Engine, Process, Scheduler, ThreadProgress};

/// Functions a busy scheduler calls between two progress points.
pub const BUSY_CALLS: usize = 4;

/// The workspace root (the benches run with `reference/` as their working directory).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("reference/ has a parent")
        .to_path_buf()
}

/// Where criterion keeps its estimates: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`,
/// else the workspace's `target/criterion`. [`criterion`] sets the same directory explicitly,
/// so the reader and the writer never disagree.
pub fn criterion_dir() -> PathBuf {
    let resolve = |p: PathBuf| {
        if p.is_absolute() {
            p
        } else {
            std::env::current_dir().expect("working directory").join(p)
        }
    };
    if let Some(h) = std::env::var_os("CRITERION_HOME") {
        resolve(PathBuf::from(h))
    } else if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        resolve(PathBuf::from(t)).join("criterion")
    } else {
        workspace().join("target").join("criterion")
    }
}

/// Criterion with the settings every bench shares: warm-up 1 s and the estimates in
/// [`criterion_dir`].
pub fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .output_directory(&criterion_dir())
}

// ---------------------------------------------------------------------------------------------
// Busy threads

/// What a busy thread runs: one round of calls and a progress point, until stopped.
pub trait Spinner {
    /// One round; returns the calls it made.
    fn round(&mut self) -> u64;
    /// Go to sleep on the way out, so no wait can hang on this thread.
    fn park(&mut self);
}

/// Threads that each build a [`Spinner`] on themselves and run its rounds until stopped.
pub struct Busy {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<(u64, u64)>>,
}

impl Busy {
    /// Start `n` threads; thread `id` builds its spinner with `make(id)()` and the call returns
    /// once every thread is ready.
    pub fn start<S, G>(n: usize, make: impl Fn(usize) -> G) -> Busy
    where
        S: Spinner,
        G: FnOnce() -> S + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(Barrier::new(n + 1));
        let threads = (0..n)
            .map(|id| {
                let (build, stop, ready) = (make(id), stop.clone(), ready.clone());
                std::thread::spawn(move || {
                    let mut s = build();
                    ready.wait();
                    let (mut rounds, mut calls) = (0u64, 0u64);
                    while !stop.load(Relaxed) {
                        calls += s.round();
                        rounds += 1;
                    }
                    s.park();
                    (rounds, calls)
                })
            })
            .collect();
        ready.wait();
        Busy { stop, threads }
    }

    /// Stop every thread; returns the calls they made.
    pub fn stop(mut self) -> u64 {
        self.join()
    }

    fn join(&mut self) -> u64 {
        self.stop.store(true, Relaxed);
        let mut calls = 0;
        for t in self.threads.drain(..) {
            let (rounds, c) = t.join().expect("busy scheduler panicked");
            assert!(
                rounds > 0,
                "a busy scheduler never reached a progress point"
            );
            calls += c;
        }
        calls
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.join();
        }
    }
}

/// Scheduler `id` of each engine on one thread: per round, on each engine in turn,
/// `BUSY_CALLS` calls and a progress point. Two engines served by the same threads see the
/// same thread activity, so their operations can be timed alternately.
pub struct Schedulers<P: ThreadProgress> {
    ss: Vec<Scheduler<P>>,
    p: Process,
}

impl<P: ThreadProgress> Spinner for Schedulers<P> {
    fn round(&mut self) -> u64 {
        for s in self.ss.iter_mut() {
            for f in 0..BUSY_CALLS {
                black_box(s.call(f, &self.p));
            }
            s.progress();
        }
        (BUSY_CALLS * self.ss.len()) as u64
    }
    fn park(&mut self) {
        for s in self.ss.iter_mut() {
            s.sleep();
        }
    }
}

/// Busy schedulers `ids` of every engine in `engines` (without hit recording).
pub fn busy<P: ThreadProgress + 'static>(
    engines: &[&Arc<Engine<P>>],
    ids: std::ops::Range<usize>,
) -> Busy {
    let engines: Vec<Arc<Engine<P>>> = engines.iter().map(|e| (*e).clone()).collect();
    let base = ids.start;
    Busy::start(ids.len(), move |k| {
        let (engines, id) = (engines.clone(), base + k);
        move || Schedulers {
            ss: engines
                .into_iter()
                .map(|e| {
                    let mut s = Scheduler::start(e, id);
                    s.record = false;
                    s
                })
                .collect(),
            p: Process::new(id as u64),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Statistics

/// `n` rounds, or 3 when `BPSPEC_BENCH_QUICK` is set (a smoke run of the paired rounds; every
/// table states its rounds).
pub fn rounds(n: usize) -> usize {
    if std::env::var_os("BPSPEC_BENCH_QUICK").is_some() {
        n.min(3)
    } else {
        n
    }
}

/// The median (the upper one of an even count).
pub fn median(v: &[f64]) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    s[s.len() / 2]
}

/// The smallest and the largest value.
pub fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)))
}

/// One criterion estimate, in nanoseconds per iteration: the median and its 95 % interval.
pub struct Estimate {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Criterion's estimate of `GROUP/ID` (the id as criterion prints it, e.g. `asleep/10`), read
/// from its `new/estimates.json`, which must have been written during this run.
pub fn estimate(run: &Run, group: &str, id: &str) -> Estimate {
    let mut path = criterion_dir().join(safe(group));
    for part in id.splitn(2, '/') {
        path.push(safe(part));
    }
    let path = path.join("new").join("estimates.json");
    let fail = |why: String| -> ! {
        panic!(
            "{}: {why} (run the bench without a filter, e.g. `make perf-doc`)",
            path.display()
        )
    };
    let meta = std::fs::metadata(&path).unwrap_or_else(|e| fail(e.to_string()));
    let written = meta.modified().unwrap_or_else(|e| fail(e.to_string()));
    if written < run.started {
        fail("not measured in this run".into());
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail(e.to_string()));
    let json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| fail(e.to_string()));
    let m = &json["median"];
    let num = |v: &serde_json::Value| {
        v.as_f64()
            .unwrap_or_else(|| fail(format!("no number at {v}")))
    };
    Estimate {
        median: num(&m["point_estimate"]),
        lo: num(&m["confidence_interval"]["lower_bound"]),
        hi: num(&m["confidence_interval"]["upper_bound"]),
    }
}

/// Criterion's directory name for one part of an id (its `make_filename_safe`).
fn safe(s: &str) -> String {
    s.replace(['?', '"', '/', '\\', '*', '<', '>', ':', '|', '^'], "_")
}

// ---------------------------------------------------------------------------------------------
// Formatting

/// `1234567.8` → `1,234,568`.
pub fn grouped(x: f64) -> String {
    let s = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// `digits` significant digits, at most 3 decimals; grouped from `10^digits` on.
fn sig(x: f64, digits: i32) -> String {
    if x >= 10f64.powi(digits) {
        return grouped(x);
    }
    let magnitude = if x > 0.0 { x.log10().floor() as i32 } else { 0 };
    let decimals = (digits - 1 - magnitude).clamp(0, 3) as usize;
    format!("{x:.decimals$}")
}

/// Four significant digits.
fn sig4(x: f64) -> String {
    sig(x, 4)
}

/// The unit that shows `ns` nanoseconds with 1 to 3 digits before the point.
fn unit(ns: f64) -> (f64, &'static str) {
    if ns >= 1e6 {
        (1e6, "ms")
    } else if ns >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

/// A time in nanoseconds, e.g. `4.540 ns`, `209.9 µs`, `41.20 ms`.
pub fn time(ns: f64) -> String {
    let (d, u) = unit(ns);
    format!("{} {u}", sig4(ns / d))
}

/// A time in microseconds, grouped (`20,079 µs`), for columns read side by side.
pub fn micros(secs: f64) -> String {
    format!("{} µs", sig4(secs * 1e6))
}

/// An interval in the unit of `mid`: `4.370 – 4.910 ns`.
pub fn interval(mid: f64, lo: f64, hi: f64) -> String {
    let (d, u) = unit(mid);
    format!("{} – {} {u}", sig4(lo / d), sig4(hi / d))
}

/// A ratio: three decimals below 10, then three significant digits.
pub fn ratio(x: f64) -> String {
    if x < 10.0 {
        format!("{x:.3}")
    } else {
        sig(x, 3)
    }
}

/// A rate per second: `34.1 M`.
pub fn rate(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else {
        grouped(x)
    }
}

// ---------------------------------------------------------------------------------------------
// Result files

/// The main of a bench: criterion's `groups`, then (with `BPSPEC_BENCH_RESULTS`) the tables of
/// their `estimates`, then, when measuring (not in criterion's test mode, `cargo test
/// --benches`, which runs each benchmark once), the bench's `own` rounds, which take minutes.
pub fn main(
    bench: &'static str,
    c: Criterion,
    groups: impl FnOnce(&mut Criterion),
    estimates: impl FnOnce(&Run),
    own: impl FnOnce(&Run),
) {
    let run = Run::start(bench);
    let mut c = c.configure_from_args();
    groups(&mut c);
    c.final_summary();
    if Run::writes() {
        estimates(&run);
    }
    if std::env::args().any(|a| a == "--bench") {
        own(&run);
    }
}

/// One bench run: when it started and the load average then; writes the result files.
pub struct Run {
    bench: &'static str,
    started: SystemTime,
    load_start: String,
}

impl Run {
    pub fn start(bench: &'static str) -> Run {
        Run {
            bench,
            started: SystemTime::now(),
            load_start: loadavg(),
        }
    }

    /// The directory named by `BPSPEC_BENCH_RESULTS`, if set.
    pub fn results_dir() -> Option<PathBuf> {
        let d = PathBuf::from(std::env::var_os("BPSPEC_BENCH_RESULTS")?);
        Some(if d.is_absolute() {
            d
        } else {
            workspace().join(d)
        })
    }

    /// Whether the run writes result files; criterion's test mode (`cargo test --benches`)
    /// measures nothing, so it writes none.
    pub fn writes() -> bool {
        Run::results_dir().is_some() && std::env::args().any(|a| a == "--bench")
    }

    /// Write `DIR/perf-NAME.tsv` (when [`Run::writes`]): the run's header, the `about` lines as
    /// comments, then `header` and `rows` (every row as wide as the header).
    pub fn write(&self, name: &str, about: &[String], header: &[&str], rows: &[Vec<String>]) {
        for r in rows {
            assert_eq!(r.len(), header.len(), "perf-{name}.tsv: row {r:?}");
        }
        let mut out = String::new();
        let args: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| a != "--bench")
            .collect();
        out.push_str(&format!(
            "# written by reference/benches/{}.rs, run as `BPSPEC_BENCH_RESULTS=… cargo bench -p \
             bpspec-reference --bench {}{}` (make perf-doc); do not edit.\n",
            self.bench,
            self.bench,
            if args.is_empty() {
                String::new()
            } else {
                format!(" -- {}", args.join(" "))
            }
        ));
        let took = self.started.elapsed().map(|d| d.as_secs()).unwrap_or(0);
        out.push_str(&format!(
            "# started {} UTC, {took} s to this table; machine: {}, {} cores; load average \
             (1, 5, 15 min) {} at the start, {} here.\n",
            utc(self.started),
            cpu_model(),
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            self.load_start,
            loadavg()
        ));
        for a in about {
            out.push_str(&format!("# {a}\n"));
        }
        out.push_str(&header.join("\t"));
        out.push('\n');
        for r in rows {
            for c in r {
                assert!(!c.contains(['\t', '\n']), "perf-{name}.tsv: cell {c:?}");
            }
            out.push_str(&r.join("\t"));
            out.push('\n');
        }
        print!("\nperf-{name}.tsv\n{out}");
        if !Run::writes() {
            return;
        }
        let dir = Run::results_dir().expect("checked by writes");
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("BPSPEC_BENCH_RESULTS {}: {e}", dir.display()));
        let path = dir.join(format!("perf-{name}.tsv"));
        std::fs::write(&path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("wrote {}", path.display());
    }
}

/// The first three fields of /proc/loadavg, or `unknown`.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// The CPU's model name from /proc/cpuinfo, or `unknown CPU`.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// `YYYY-MM-DD HH:MM` (UTC) of a time.
fn utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60
    )
}
