//! Benchmarks of the wait plans (docs/fewer-waits.md, docs/perf.md), ERTS's sequence side by
//! side with the variants in one run. Nothing here is asserted as a timing anywhere.
//!
//! - `waits_single` (criterion): the latency of one `trace_pattern` `true` and one `false`
//!   (call_count, 10 functions), timed separately (the opposite op runs untimed between
//!   iterations), with 1 and 2 schedulers busy on their own threads; plans `erts` and
//!   `batch-elide-idle` (a single pattern is a batch of one: `batch` makes the same waits as
//!   `erts`).
//! - `waits_100` (criterion): 100 patterns, one function each, as one batch `true` under every
//!   plan (100 consecutive calls under `erts` and `pipeline`, one sequence under the batch
//!   plans); an untimed `false` over all functions restores the engine; 1 busy scheduler.
//! - paired rounds (not a criterion group): the ERTS engine and a variant engine served by the
//!   same busy threads (1 and 2), one operation of each timed in turn per round; the medians, the
//!   median of the per-round ratios and the waits each made. Single `true` and `false` under
//!   `batch-elide-idle`; 100 calls against one batch of 100 (`batch`); under `pipeline` 100
//!   consecutive `true` calls on fresh functions and 100 consecutive calls alternating `true`
//!   and `false` on 10 functions. With 2 busy schedulers the 2 cores are oversubscribed and a
//!   wait lasts a time slice, so the 100-call cases run `HUNDRED_ROUNDS_2` rounds there.
//!
//! Run with `cargo bench -p bpspec-reference --bench waits`; with `BPSPEC_BENCH_RESULTS=DIR` it
//! writes `perf-waits.tsv`, `perf-pipeline.tsv` and `perf-waits_criterion.tsv` there
//! (benches/common/mod.rs).

mod common;

use bpspec_reference::*;
use common::{busy, estimate, interval, median, micros, ratio, time, Run};
use criterion::{BenchmarkId, Criterion, SamplingMode};
use std::sync::Arc;
use std::time::{Duration, Instant};

const COUNT: FlagSet = FlagSet {
    local: false,
    call_count: true,
    call_time: false,
    call_memory: false,
};

/// Paired rounds of the single-call cases with 1 and with 2 busy schedulers.
const SINGLE_ROUNDS: [usize; 2] = [200, 50];
/// Paired rounds of the 100-call cases with 1 and with 2 busy schedulers (each ERTS round takes
/// seconds with 2).
const HUNDRED_ROUNDS: [usize; 2] = [50, 5];

fn entry(pattern: &str, op: PatternOp) -> BatchEntry {
    BatchEntry::flags(Pattern::parse(pattern).unwrap(), op, COUNT)
}

/// 100 entries `op`, one function each.
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

/// One call over every function of module `m`.
fn all(op: PatternOp) -> Vec<BatchEntry> {
    vec![entry("{m,'_','_'}", op)]
}

/// Time `timed` on `e`, with `before` run untimed first and `after` untimed after; returns the
/// seconds and the waits `timed` made.
fn timed(
    e: &Engine,
    before: &[BatchEntry],
    timed: &[BatchEntry],
    after: &[BatchEntry],
) -> (f64, u64) {
    if !before.is_empty() {
        e.trace_pattern_batch(0, before).unwrap();
    }
    let w = e.progress.completed_waits();
    let t = Instant::now();
    e.trace_pattern_batch(0, timed).unwrap();
    let d = t.elapsed().as_secs_f64();
    let w = e.progress.completed_waits() - w;
    if !after.is_empty() {
        e.trace_pattern_batch(0, after).unwrap();
    }
    (d, w)
}

/// Criterion groups: one plan per engine and busy threads, one after the other.
fn bench_single(c: &mut Criterion) {
    let mut g = c.benchmark_group("waits_single");
    g.sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(3));
    let (on, off) = (all(PatternOp::True), all(PatternOp::False));
    for k in [1usize, 2] {
        for plan in [WaitPlan::Erts, WaitPlan::BatchElideIdle] {
            let e = Arc::new(Engine::new(EngineConfig::simple(10, k)).with_wait_plan(plan));
            let running = busy(&[&e], 0..k);
            for (name, before, op, after) in [
                ("true", &[][..], &on[..], &off[..]),
                ("false", &on, &off, &[]),
            ] {
                let id = BenchmarkId::new(format!("{name}_{}", plan.name()), format!("{k}_busy"));
                g.bench_function(id, |b| {
                    b.iter_custom(|iters| {
                        let secs: f64 = (0..iters).map(|_| timed(&e, before, op, after).0).sum();
                        Duration::from_secs_f64(secs)
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
    let (on, off) = (entries(100, PatternOp::True), all(PatternOp::False));
    for plan in WaitPlan::ALL {
        let e = Arc::new(Engine::new(EngineConfig::simple(100, 1)).with_wait_plan(plan));
        let running = busy(&[&e], 0..1);
        g.bench_function(BenchmarkId::new(hundred_name(plan), plan.name()), |b| {
            b.iter_custom(|iters| {
                let secs: f64 = (0..iters).map(|_| timed(&e, &[], &on, &off).0).sum();
                Duration::from_secs_f64(secs)
            })
        });
        drop(running);
        e.settle();
        e.check_at_rest().unwrap();
    }
    g.finish();
}

fn hundred_name(plan: WaitPlan) -> &'static str {
    if plan.batches() {
        "one_batch"
    } else {
        "100_calls"
    }
}

/// The paired cases' rows.
const SINGLE_TRUE: &str = "`true` (first set), elide-idle";
const SINGLE_FALSE: &str = "`false` (unlinks), elide-idle";
const HUNDRED_VS_BATCH: &str = "100 calls vs one batch of 100, batch";
const PIPELINE_TRUE: &str = "100 consecutive `true` calls, one fresh function each";
const PIPELINE_ALTERNATING: &str =
    "100 consecutive calls alternating `true`/`false` on 10 functions";

/// One paired case: the row's name, functions, untimed before, timed, untimed after, variant.
struct Case<'a> {
    what: &'a str,
    funcs: usize,
    before: &'a [BatchEntry],
    timed: &'a [BatchEntry],
    after: &'a [BatchEntry],
    variant: WaitPlan,
}

/// The result of one paired case: medians of each engine's times, of the per-round ratios, and
/// of the waits.
struct Paired {
    rounds: usize,
    erts: f64,
    var: f64,
    ratio: f64,
    waits: (f64, f64),
}

/// `rounds` rounds of `case` with `k` busy threads serving both engines.
fn paired(case: &Case, k: usize, rounds: usize) -> Paired {
    let erts = Arc::new(Engine::new(EngineConfig::simple(case.funcs, k)));
    let var =
        Arc::new(Engine::new(EngineConfig::simple(case.funcs, k)).with_wait_plan(case.variant));
    let running = busy(&[&erts, &var], 0..k);
    let (mut te, mut tv, mut r, mut we, mut wv) = (vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        let (a, wa) = timed(&erts, case.before, case.timed, case.after);
        let (b, wb) = timed(&var, case.before, case.timed, case.after);
        te.push(a);
        tv.push(b);
        r.push(b / a);
        we.push(wa as f64);
        wv.push(wb as f64);
    }
    drop(running);
    for e in [&erts, &var] {
        e.settle();
        e.check_at_rest().unwrap();
    }
    let p = Paired {
        rounds,
        erts: median(&te),
        var: median(&tv),
        ratio: median(&r),
        waits: (median(&we), median(&wv)),
    };
    println!(
        "paired {}, {k} busy, {rounds} rounds: erts {}, {} {}, median ratio {}, waits {} -> {}",
        case.what,
        micros(p.erts),
        case.variant.name(),
        micros(p.var),
        ratio(p.ratio),
        p.waits.0,
        p.waits.1
    );
    p
}

fn row(case: &Case, k: usize, p: &Paired) -> Vec<String> {
    vec![
        case.what.to_string(),
        k.to_string(),
        p.rounds.to_string(),
        micros(p.erts),
        micros(p.var),
        ratio(p.ratio),
        format!("{} → {}", p.waits.0, p.waits.1),
    ]
}

/// The paired cases, written as perf-waits.tsv (fewer-waits.md §5) and perf-pipeline.tsv (§6.2).
fn paired_tables(run: &Run) {
    let (on, off) = (all(PatternOp::True), all(PatternOp::False));
    let on100 = entries(100, PatternOp::True);
    // 100 calls alternating true and false over all 10 functions; ends where it began (the
    // last `false`'s nodes pending under pipeline, freed by the next round's first call).
    let alternating: Vec<BatchEntry> = (0..100)
        .map(|i| {
            all(if i % 2 == 0 {
                PatternOp::True
            } else {
                PatternOp::False
            })
            .remove(0)
        })
        .collect();
    let case = |what, funcs, before, timed, after, variant| Case {
        what,
        funcs,
        before,
        timed,
        after,
        variant,
    };
    let (nil, on, off, on100, alt): (&[BatchEntry], _, _, _, _) =
        (&[], &on[..], &off[..], &on100[..], &alternating[..]);
    let (elide, batch, pipe) = (
        WaitPlan::BatchElideIdle,
        WaitPlan::Batch,
        WaitPlan::Pipeline,
    );
    let waits_cases = [
        case(SINGLE_TRUE, 10, nil, on, off, elide),
        case(SINGLE_FALSE, 10, on, off, nil, elide),
        case(HUNDRED_VS_BATCH, 100, nil, on100, off, batch),
    ];
    let pipeline_cases = [
        case(PIPELINE_TRUE, 100, nil, on100, off, pipe),
        case(PIPELINE_ALTERNATING, 10, nil, alt, nil, pipe),
    ];
    let rounds = |c: &Case, k: usize| {
        common::rounds(if c.timed.len() == 100 {
            HUNDRED_ROUNDS[k - 1]
        } else {
            SINGLE_ROUNDS[k - 1]
        })
    };
    let head = [
        "case",
        "busy>",
        "rounds>",
        "ERTS median>",
        "variant median>",
        "median ratio variant / ERTS>",
        "waits ERTS → variant",
    ];
    let mut rows = Vec::new();
    for k in [1, 2] {
        for c in &waits_cases {
            rows.push(row(c, k, &paired(c, k, rounds(c, k))));
        }
    }
    let about = vec![
        "paired rounds: the ERTS engine and the variant engine served by the same busy threads"
            .to_string(),
        "(4 calls and a progress point each, in a loop), one operation of each timed in turn;"
            .to_string(),
        "medians of each engine's times, the median of the per-round ratios, the median waits."
            .to_string(),
        "docs/fewer-waits.md §5 shows it.".to_string(),
    ];
    run.write("waits", &about, &head, &rows);
    let mut rows = Vec::new();
    for c in &pipeline_cases {
        for k in [1, 2] {
            rows.push(row(c, k, &paired(c, k, rounds(c, k))));
        }
    }
    let head_p = [
        "case",
        "busy>",
        "rounds>",
        "ERTS median>",
        "pipeline median>",
        "median ratio pipeline / ERTS>",
        "waits ERTS → pipeline",
    ];
    let mut about_p = about.clone();
    about_p[3] = "docs/fewer-waits.md §6.2 shows it.".to_string();
    run.write("pipeline", &about_p, &head_p, &rows);
}

/// The criterion groups' estimates, written as perf-waits_criterion.tsv.
fn criterion_table(run: &Run) {
    let mut rows = Vec::new();
    let mut put = |group: &str, id: String| {
        let e = estimate(run, group, &id);
        rows.push(vec![
            format!("`{group}/{id}`"),
            time(e.median),
            interval(e.median, e.lo, e.hi),
        ]);
    };
    for k in [1, 2] {
        for plan in [WaitPlan::Erts, WaitPlan::BatchElideIdle] {
            for name in ["true", "false"] {
                put("waits_single", format!("{name}_{}/{k}_busy", plan.name()));
            }
        }
    }
    for plan in WaitPlan::ALL {
        put(
            "waits_100",
            format!("{}/{}", hundred_name(plan), plan.name()),
        );
    }
    let about = vec![
        "criterion groups waits_single and waits_100 (each plan on its own engine and busy"
            .to_string(),
        "threads, one after the other): median per iteration and its 95 % confidence interval"
            .to_string(),
        "from target/criterion/GROUP/ID/new/estimates.json of this run. docs/fewer-waits.md §5."
            .to_string(),
    ];
    run.write(
        "waits_criterion",
        &about,
        &["id", "median>", "95 % CI"],
        &rows,
    );
}

fn main() {
    let groups = |c: &mut Criterion| {
        bench_single(c);
        bench_hundred(c);
    };
    common::main(
        "waits",
        common::criterion(),
        groups,
        criterion_table,
        paired_tables,
    );
}
