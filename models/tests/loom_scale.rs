//! loom's cost against its preemption bound: executions and seconds of the single-function
//! trace_pattern scenarios under `Qsbr`, at bounds 0, 1, 2, ... until a run reaches its time
//! limit or `BPSPEC_LOOM_SCALE_MAX_BOUND` (default 4). A generator, not a check (it is
//! `#[ignore]`d; `make scale-doc` runs it): every run is a baseline that must hold, and the rows
//! go to `$BPSPEC_SCALE_RESULTS/loom-scale.tsv`, which docs/perf.md renders next to the spec's
//! scaling table (`bpspec scale`).
//!
//! A run stops at `BPSPEC_LOOM_SCALE_SECS` (default 300) through loom's own `max_duration`
//! (loom 0.7.2 `src/model.rs`, `Builder::check`: it returns when the time is up, without an
//! error); such a row says it did not finish and the scenario goes no higher.
#![cfg(loom)]

use bpspec_models::harness::loom_run;
use bpspec_models::harness::scenario_named;
use bpspec_models::results::{record_in, Verdict};
use bpspec_models::{loom_scenarios, run};
use bpspec_reference::Qsbr;
use std::time::Duration;

/// The scenarios of the table: one stager op each on one function (remove, add, update), and
/// the removal that the progress fence's kill needs bound 3 for (`remove-long`).
const SCENARIOS: [&str; 4] = ["add", "update", "remove", "remove-long"];

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v}: not a whole number"))
        })
        .unwrap_or(default)
}

#[test]
#[ignore = "a generator for docs/perf.md: make scale-doc"]
fn executions_against_bound() {
    let dir = std::env::var("BPSPEC_SCALE_RESULTS")
        .expect("BPSPEC_SCALE_RESULTS names the directory for loom-scale.tsv");
    let max_bound = env_or("BPSPEC_LOOM_SCALE_MAX_BOUND", 4) as usize;
    let limit = Duration::from_secs(env_or("BPSPEC_LOOM_SCALE_SECS", 300));
    for name in SCENARIOS {
        for bound in 0..=max_bound {
            let scn = scenario_named(loom_scenarios(), name, |s| s.name);
            let mut b = loom::model::Builder::new();
            b.preemption_bound = Some(bound);
            b.max_branches = 20_000;
            b.max_duration = Some(limit);
            let o = loom_run::explore(&format!("scale {name} bound {bound}"), &b, move || {
                run::<Qsbr>(&scn, None)
            });
            assert!(o.cx.is_none(), "{name} at bound {bound}: {:?}", o.cx);
            assert!(o.executions > 0, "loom ran no execution of {name}");
            let finished = o.seconds < limit.as_secs_f64();
            println!(
                "{name}\tbound {bound}\t{} executions\t{:.2} s\t{}",
                o.executions,
                o.seconds,
                if finished { "finished" } else { "stopped" }
            );
            record_in(
                std::path::Path::new(&dir),
                &Verdict {
                    checker: "loom-scale",
                    progress: "qsbr",
                    scenario: name,
                    variant: "baseline",
                    bound: format!("{} executions={}", o.bound, o.executions),
                    expected: "hold",
                    observed: if finished { "hold" } else { "stopped" },
                    seconds: o.seconds,
                    detail: String::new(),
                },
            );
            if !finished {
                break;
            }
        }
    }
}
