//! Criterion benchmarks of the reference engine. docs/perf.md explains each group and reports
//! the figures; nothing here is asserted as a timing anywhere in the test suite.
//!
//! - `hit_path`: the cost of one `Scheduler::call` with no breakpoint, with a breakpoint whose
//!   flags are all off for the calling process, and with call_count on.
//! - `trace_pattern`: one `true` + one `false` (call_count) over 10, 1,000 and 100,000 functions,
//!   with the only scheduler asleep (pure stager cost) or busy on another thread.
//! - `grace_period`: one `ThreadProgress::wait`, QSBR and crossbeam-epoch, with 0, 1 or 2 busy
//!   schedulers.
//!
//! Run with `cargo bench -p bpspec-reference --bench engine`; the bench profile has no debug
//! assertions, so the engine is not in its checked mode (freed nodes go back to the allocator).
//! With `BPSPEC_BENCH_RESULTS=DIR` it writes `perf-hit_path.tsv`, `perf-trace_pattern.tsv`,
//! `perf-grace_period.tsv` and `perf-ratios.tsv` there from criterion's estimates of the run
//! (benches/common/mod.rs).

mod common;

use bpspec_reference::*;
use common::{busy, estimate, interval, ratio, time, Run, BUSY_CALLS};
use criterion::measurement::WallTime;
use criterion::SamplingMode;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const LOCAL: TraceFlags = TraceFlags::LOCAL;
const COUNT: TraceFlags = TraceFlags::CALL_COUNT;

/// Settings shared by every group (groups override some): short, so the whole run takes a little
/// over a minute on the two-core machine of docs/perf.md.
fn config() -> Criterion {
    common::criterion()
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

fn mfa(i: usize) -> Mfa {
    Mfa::new("m", &format!("f{i}"), 0)
}

/// Start scheduler `id` on the current thread, without hit recording (it would push to a Vec).
fn scheduler<P: ThreadProgress>(e: &Arc<Engine<P>>, id: usize) -> Scheduler<P> {
    let mut s = Scheduler::start(e.clone(), id);
    s.record = false;
    s
}

// ---------------------------------------------------------------------------------------------
// hit_path

/// The function the hit-path benchmarks call.
const HIT_FUNC: FuncId = 0;

/// An engine with one scheduler, awake on this thread, and function `HIT_FUNC` set up with
/// `trace_pattern(true, fl)` if `fl` is given.
fn hit_setup(fl: Option<TraceFlags>) -> (Arc<Engine>, Scheduler) {
    let e = Arc::new(Engine::new(EngineConfig::simple(8, 1)));
    let mut s = scheduler(&e, 0);
    if let Some(fl) = fl {
        // The stager runs on this thread: its waits would never end with this scheduler awake.
        s.sleep();
        let pat = Pattern::exact(&mfa(HIT_FUNC));
        e.trace_pattern(&pat, PatternOp::True, &TraceSpec::from(fl))
            .unwrap();
        s.wake();
    }
    (e, s)
}

/// One recorded call, to check the state the benchmark claims to measure.
fn probe(s: &mut Scheduler, p: &Process) -> Hit {
    s.record = true;
    s.call(HIT_FUNC, p);
    s.record = false;
    s.hits.pop().expect("a recorded hit")
}

/// Measure `Scheduler::call` on `HIT_FUNC` by a process that is not call-traced in any session,
/// after `hit_setup(fl)`; `check` must accept one recorded hit first, so the benchmark measures
/// the state its name says. Returns the engine (scheduler asleep) for further checks.
fn bench_hit_case(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    fl: Option<TraceFlags>,
    check: fn(&Hit) -> bool,
) -> Arc<Engine> {
    let (e, mut s) = hit_setup(fl);
    let p = Process::new(1);
    let h = probe(&mut s, &p);
    assert!(check(&h), "{name}: unexpected hit {h:?}");
    g.bench_function(name, |b| {
        b.iter(|| s.call(black_box(HIT_FUNC), black_box(&p)))
    });
    assert!(s.events.is_empty(), "{name}: the process is not traced");
    s.sleep();
    e
}

fn bench_hit(c: &mut Criterion) {
    let mut g = c.benchmark_group("hit_path");
    g.measurement_time(Duration::from_secs(3));

    // (a) The function's original instruction: no breakpoint at all.
    bench_hit_case(&mut g, "no_bp", None, |h| !h.patched);

    // (b) Breakpoint installed, flags off for this process: `local` trace is on, but the process
    // is not call-traced, so the process filter clears LOCAL_TRACE and the hit acts on nothing.
    // The instruction check, slot load, chain walk, active-index read and half read all happen.
    bench_hit_case(&mut g, "bp_flags_off", Some(LOCAL), |h| {
        h.patched && h.flags == 0
    });

    // (c) call_count on: the same walk plus one relaxed fetch_add on the shared counter.
    let e = bench_hit_case(&mut g, "call_count", Some(COUNT), |h| {
        h.patched && h.flags & flags::COUNT_ACTIVE != 0
    });
    let n = e.trace_info(0, &mfa(HIT_FUNC), InfoItem::CallCount);
    assert!(
        matches!(n, InfoValue::Count(k) if k >= 1),
        "call_count did not count: {n:?}"
    );
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// trace_pattern

/// One `true` then one `false` with call_count over every function: 5 + 4 waits, and the engine
/// is back at rest after each pair.
fn tp_pair(e: &Engine, all: &Pattern) {
    let n = e.code.len();
    assert_eq!(
        e.trace_pattern(all, PatternOp::True, &TraceSpec::from(COUNT)),
        Ok(n)
    );
    assert_eq!(
        e.trace_pattern(all, PatternOp::False, &TraceSpec::from(COUNT)),
        Ok(n)
    );
}

fn tp_group_settings(g: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    if n >= 100_000 {
        // A pair takes tens of milliseconds: few equal-sized samples.
        g.sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .measurement_time(Duration::from_secs(3));
    } else {
        g.sample_size(20)
            .sampling_mode(SamplingMode::Auto)
            .measurement_time(Duration::from_secs(2));
    }
}

fn bench_trace_pattern(c: &mut Criterion) {
    let mut g = c.benchmark_group("trace_pattern");
    let all = Pattern::parse("{m,'_','_'}").unwrap();
    for n in [10usize, 1_000, 100_000] {
        tp_group_settings(&mut g, n);
        let e = Arc::new(Engine::new(EngineConfig::simple(n, 1)));

        // The one scheduler is registered and asleep: the waits return at once, so this is the
        // stager's own work (match, stage, install, commit, uninstall, consolidate, free).
        let mut s = scheduler(&e, 0);
        s.sleep();
        g.bench_with_input(BenchmarkId::new("asleep", n), &n, |b, _| {
            b.iter(|| tp_pair(&e, &all))
        });
        drop(s);
        e.check_at_rest().unwrap();

        // The same with the scheduler busy on another thread (calls + progress in a loop), so
        // each of the 9 waits lasts until it passes a progress point.
        let running = busy(&[&e], 0..1);
        g.bench_with_input(BenchmarkId::new("busy1", n), &n, |b, _| {
            b.iter(|| tp_pair(&e, &all))
        });
        drop(running);
        e.check_at_rest().unwrap();
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// grace_period

/// Schedulers registered in the engines of the grace-period group.
const GP_SCHEDULERS: usize = 2;

/// Latency of one `wait` with `busy` of the `GP_SCHEDULERS` schedulers busy on their own
/// threads; the others are registered and asleep (held on this thread).
fn bench_wait<P: ThreadProgress + 'static>(g: &mut BenchmarkGroup<'_, WallTime>, busy: usize) {
    let e = Arc::new(Engine::<P>::new(EngineConfig::simple(
        BUSY_CALLS,
        GP_SCHEDULERS,
    )));
    let asleep: Vec<Scheduler<P>> = (busy..GP_SCHEDULERS)
        .map(|id| {
            let mut s = scheduler(&e, id);
            s.sleep();
            s
        })
        .collect();
    let running = common::busy(&[&e], 0..busy);
    let id = BenchmarkId::new(P::name(), format!("{busy}_busy"));
    g.bench_function(id, |b| b.iter(|| e.progress.wait()));
    drop(running);
    drop(asleep);
}

fn bench_grace_period(c: &mut Criterion) {
    let mut g = c.benchmark_group("grace_period");
    // With 2 busy schedulers a wait takes milliseconds (see docs/perf.md): 20 samples in 3 s.
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    for busy in 0..=GP_SCHEDULERS {
        bench_wait::<Qsbr>(&mut g, busy);
        bench_wait::<EpochProgress>(&mut g, busy);
    }
    g.finish();
}

/// The tables of docs/perf.md, from criterion's estimates of this run.
fn tables(run: &Run) {
    let about = |what: &str| {
        vec![
            format!("{what}: criterion's median per iteration and its 95 % confidence interval"),
            "(target/criterion/GROUP/ID/new/estimates.json of this run). docs/perf.md shows it."
                .to_string(),
        ]
    };
    let head = ["id", "median>", "95 % CI"];
    let row = |group: &str, id: &str, label: String| {
        let e = estimate(run, group, id);
        vec![label, time(e.median), interval(e.median, e.lo, e.hi)]
    };
    let hit = ["no_bp", "bp_flags_off", "call_count"];
    let rows: Vec<Vec<String>> = hit
        .iter()
        .map(|id| row("hit_path", id, format!("`{id}`")))
        .collect();
    run.write("hit_path", &about("hit_path, per call"), &head, &rows);

    let sizes = [10usize, 1_000, 100_000];
    let mut rows = Vec::new();
    for who in ["asleep", "busy1"] {
        for n in sizes {
            let id = format!("{who}/{n}");
            rows.push(row("trace_pattern", &id, format!("`{id}`")));
        }
    }
    let about_tp = about("trace_pattern, per `true` + `false` pair");
    run.write("trace_pattern", &about_tp, &head, &rows);

    let mut rows = Vec::new();
    for p in ["qsbr", "epoch"] {
        for k in 0..=GP_SCHEDULERS {
            let id = format!("{p}/{k}_busy");
            let over = if k == GP_SCHEDULERS {
                " (oversubscribed)"
            } else {
                ""
            };
            rows.push(row("grace_period", &id, format!("`{id}`{over}")));
        }
    }
    run.write(
        "grace_period",
        &about("grace_period, per wait"),
        &head,
        &rows,
    );

    let m = |group: &str, id: &str| estimate(run, group, id).median;
    let mut rows = Vec::new();
    let mut put = |what: String, x: f64| rows.push(vec![what, ratio(x)]);
    for (a, b) in [
        ("bp_flags_off", "no_bp"),
        ("call_count", "no_bp"),
        ("call_count", "bp_flags_off"),
    ] {
        put(
            format!("hit: `{a}` / `{b}`"),
            m("hit_path", a) / m("hit_path", b),
        );
    }
    for (a, b) in [(1_000, 10), (100_000, 1_000), (100_000, 10)] {
        let (x, y) = (
            m("trace_pattern", &format!("asleep/{a}")),
            m("trace_pattern", &format!("asleep/{b}")),
        );
        put(
            format!(
                "trace_pattern asleep: {} / {} functions",
                common::grouped(a as f64),
                common::grouped(b as f64)
            ),
            x / y,
        );
    }
    for n in sizes {
        put(
            format!(
                "trace_pattern: `busy1` / `asleep`, {} functions",
                common::grouped(n as f64)
            ),
            m("trace_pattern", &format!("busy1/{n}")) / m("trace_pattern", &format!("asleep/{n}")),
        );
    }
    for k in 0..=GP_SCHEDULERS {
        let over = if k == GP_SCHEDULERS {
            " (oversubscribed)"
        } else {
            ""
        };
        put(
            format!("wait, {k} busy{over}: epoch / qsbr"),
            m("grace_period", &format!("epoch/{k}_busy"))
                / m("grace_period", &format!("qsbr/{k}_busy")),
        );
    }
    let about_r = vec![
        "ratios of the criterion medians of perf-hit_path, perf-trace_pattern and".to_string(),
        "perf-grace_period.tsv (this run). docs/perf.md shows it.".to_string(),
    ];
    run.write("ratios", &about_r, &["ratio", "this run>"], &rows);
}

fn main() {
    let groups = |c: &mut Criterion| {
        bench_hit(c);
        bench_trace_pattern(c);
        bench_grace_period(c);
    };
    common::main("engine", config(), groups, tables, |_| {});
}
