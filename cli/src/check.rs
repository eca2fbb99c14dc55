//! `bpspec check [--model NAME]... [--mutant NAME]... [--mutants] [--json] [--threads N]`:
//! run the spec's stateright models.
//!
//! Without `--model`, every model of the default plan (`s2f2x1`, `s2f1x2`, `s2f1x2h`, `c2f1`
//! exhaustive BFS with the liveness check, `s3f2x2` DFS with symmetry over schedulers, `c3f1` DFS
//! without symmetry or liveness, on `--threads`; a violated baseline is run again on BFS). `--mutant NAME` runs the selected
//! models with that mutant (its counterexamples are printed). `--mutants` runs the kill matrix
//! (each mutant on its model, exhaustively) and compares it with the expected one.
//!
//! Exit codes: 0 every property holds (and, with `--mutants`, every mutant breaks exactly the
//! expected properties); 1 a violation (or an unexpected matrix entry); 2 bad usage.

use bpspec_models::results::{record_in, Shard, Verdict};
use bpspec_spec::load::{LoadModel, LoadSpecMutant};
use bpspec_spec::model::matrix::{expected_unreached, kills};
use bpspec_spec::model::props::{LIVENESS, SAFETY};
use bpspec_spec::model::run::{default_plan, run, RunOptions, RunResult};
use bpspec_spec::model::{model_config, named_models, SpecMutant};
use serde_json::json;
use std::process::ExitCode;

pub const USAGE: &str = "bpspec check [--model NAME]... [--mutant NAME]... [--mutants] [--json] [--threads N] [--shard i/N] [--list] [--results DIR] [--traces DIR]";

#[derive(clap::Args)]
pub struct Args {
    /// Run this model (repeatable; default: the default plan).
    #[arg(long = "model", value_name = "NAME", value_parser = parse_model)]
    models: Vec<String>,
    /// Run the selected models with this mutant (repeatable); its counterexamples are printed.
    #[arg(long = "mutant", value_name = "NAME", value_parser = parse_mutant)]
    mutants: Vec<SpecMutant>,
    /// Also run the kill matrix and compare it with the expected one.
    #[arg(long = "mutants")]
    matrix: bool,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// Checker threads.
    #[arg(long, default_value_t = 2, value_parser = parse_threads)]
    threads: usize,
    /// Run only the runs (models, kill-matrix rows) of this shard, i/N.
    #[arg(long, value_parser = crate::shard::parse_shard)]
    shard: Option<Shard>,
    /// Print the runs this command would make (one key a line), and run nothing.
    #[arg(long)]
    list: bool,
    /// Record one row per run in DIR (docs/results.md; default: $BPSPEC_RESULTS if set).
    #[arg(long, value_name = "DIR")]
    results: Option<std::path::PathBuf>,
    /// With --mutants: write each kill row's counterexample to its designated property as a
    /// trace file DIR/MODEL-MUTANT.trace (docs/traces/README.md; `bpspec report --timeline`).
    #[arg(long, value_name = "DIR", requires = "matrix")]
    traces: Option<std::path::PathBuf>,
}

/// The name that selects the code-loading models (`bpspec_spec::load`, docs/nonblocking-load.md):
/// the baselines of `LoadModel::plan`, and with `--mutants` each load mutant on its model.
const LOAD_MODEL: &str = "load";

fn known_models() -> String {
    named_models()
        .iter()
        .map(|(n, _, _)| *n)
        .chain([LOAD_MODEL])
        .collect::<Vec<_>>()
        .join(", ")
}

/// The load runs this invocation makes, as (shard key, model, expected verdict): each
/// baseline of `LoadModel::plan` (the two protocols' first models, the killing purge under
/// bpspec's two code indices and under ERTS's three), and with `--mutants` each load mutant on
/// its model.
fn load_runs(matrix: bool) -> Vec<(String, LoadModel, &'static str)> {
    let mut v: Vec<(String, LoadModel, &'static str)> = LoadModel::plan()
        .into_iter()
        .map(|m| (format!("spec:{}", m.name()), m, "hold"))
        .collect();
    if matrix {
        for mutant in LoadSpecMutant::ALL {
            let m = mutant.model();
            v.push((
                format!("spec-kill:{}@{}", mutant.name(), m.name()),
                m,
                "killed",
            ));
        }
    }
    v
}

/// Run the load models of this shard; print a line each, record a row each; false when one
/// is not as expected.
fn run_load(a: &Args, shard: Shard, results: Option<&std::path::Path>) -> bool {
    let mut ok = true;
    for (key, m, expected) in load_runs(a.matrix) {
        if !shard.contains(&key) {
            continue;
        }
        let r = m.check_all();
        let observed = match (m.mutant, r.violated.is_empty()) {
            (None, true) if r.reached => "hold",
            (None, true) => "vacuous",
            (None, false) => "VIOLATED",
            (Some(mu), false) if r.violated.contains(&mu.killed_by()) => "killed",
            (Some(_), _) => "survives",
        };
        ok &= observed == expected;
        let variant = m.mutant.map_or("baseline", |mu| mu.name());
        if !a.json {
            println!(
                "{:<7} {:<26} {:<31} {:>10} {:>10} {:>6} {:>9.2}s {:>10}  {observed}",
                m.name(),
                variant,
                "bfs",
                r.states,
                r.unique,
                r.depth,
                r.secs,
                ""
            );
        }
        if let Some(dir) = results {
            record_in(
                dir,
                &Verdict {
                    checker: "stateright",
                    progress: "spec",
                    scenario: &m.name(),
                    variant,
                    bound: format!(
                        "bfs {} states={} unique={} depth={}",
                        m.bound(),
                        r.states,
                        r.unique,
                        r.depth
                    ),
                    expected,
                    observed,
                    seconds: r.secs,
                    detail: if r.violated.is_empty() {
                        String::new()
                    } else {
                        format!("violated: {}", r.violated.join(", "))
                    },
                },
            );
        }
    }
    ok
}

fn parse_model(n: &str) -> Result<String, String> {
    if n != LOAD_MODEL && model_config(n).is_none() {
        return Err(format!(
            "unknown model name {n:?} (known models: {})",
            known_models()
        ));
    }
    Ok(n.to_string())
}

fn parse_mutant(n: &str) -> Result<SpecMutant, String> {
    SpecMutant::from_name(n).ok_or_else(|| {
        format!(
            "unknown mutant name {n:?} (known mutants: {})",
            SpecMutant::all()
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

fn parse_threads(n: &str) -> Result<usize, String> {
    n.parse()
        .ok()
        .filter(|&t| t > 0)
        .ok_or_else(|| format!("{n:?} is not a positive number"))
}

/// The shard key of a model run and of a kill-matrix row.
fn run_key(model: &str, mutant: Option<SpecMutant>) -> String {
    match mutant {
        None => format!("spec:{model}"),
        Some(m) => format!("spec:{model}+{}", m.name()),
    }
}

fn kill_key(model: &str, mutant: SpecMutant) -> String {
    format!("spec-kill:{}@{model}", mutant.name())
}

fn plan_for(name: &str) -> (bool, bool) {
    default_plan()
        .into_iter()
        .find(|(n, _, _)| *n == name)
        .map_or((false, true), |(_, sym, live)| (sym, live))
}

fn result_json(r: &RunResult, verdict: &str) -> serde_json::Value {
    json!({
        "model": r.model,
        "mutant": r.mutant.map(|m| m.name()),
        "checker": r.checker,
        "parameters": r.params,
        "states": r.states,
        "unique_states": r.unique,
        "depth": r.depth,
        "seconds": r.secs,
        "states_per_second": r.states_per_sec(),
        "liveness_graph_states": r.liveness_graph.map(|g| g.0),
        "verdict": verdict,
        "violated": r.violated.iter().map(|v| json!({"property": v.property, "steps": v.steps})).collect::<Vec<_>>(),
        "unreached": r.unreached,
    })
}

fn print_result(r: &RunResult, verdict: &str) {
    let variant = r
        .mutant
        .map_or("baseline".to_string(), |m| m.name().to_string());
    println!(
        "{:<7} {:<26} {:<26} {:>11} {:>10} {:>6} {:>8.2}s {:>10.0}/s  {}",
        r.model,
        variant,
        r.checker,
        r.states,
        r.unique,
        r.depth,
        r.secs,
        r.states_per_sec(),
        verdict
    );
    println!("        {}", r.params);
    if let Some((s, e)) = r.liveness_graph {
        println!("        liveness ({LIVENESS}): fair-cycle search over {s} states, {e} edges");
    }
    for v in &r.violated {
        println!("        counterexample to {}:", v.property);
        for s in &v.steps {
            println!("          {s}");
        }
    }
    if r.mutant.is_none() {
        for u in &r.unreached {
            let why = if expected_unreached(&r.model).contains(u) {
                "expected for this model, see docs/spec.md"
            } else {
                "VACUOUS"
            };
            println!("        no example of sometimes-property {u} ({why})");
        }
    }
}

const HEADER: &str = "model   variant                    checker                         states     unique  depth      time       rate  verdict";

pub fn main(a: &Args) -> ExitCode {
    let shard = a.shard.unwrap_or(Shard::ALL);
    let results = a
        .results
        .clone()
        .or_else(|| std::env::var_os("BPSPEC_RESULTS").map(std::path::PathBuf::from));
    let models: Vec<String> = if a.models.is_empty() {
        default_plan().iter().map(|p| p.0.to_string()).collect()
    } else {
        a.models
            .iter()
            .filter(|m| *m != LOAD_MODEL)
            .cloned()
            .collect()
    };
    // The load models run with the default plan and with `--model load`, not with a mutant of
    // the protocol models (`--mutant`).
    let with_load =
        a.mutants.is_empty() && (a.models.is_empty() || a.models.iter().any(|m| m == LOAD_MODEL));
    let mut failed = false;
    let mut out_json = Vec::new();
    let mut kill_matrix: Option<Vec<serde_json::Value>> = None;
    let variants: Vec<Option<SpecMutant>> = if a.mutants.is_empty() {
        vec![None]
    } else {
        a.mutants.iter().copied().map(Some).collect()
    };
    let kill_rows: Vec<_> = if a.matrix {
        kills()
            .into_iter()
            .filter(|k| a.models.is_empty() || a.models.iter().any(|m| m == k.model))
            .filter(|k| shard.contains(&kill_key(k.model, k.mutant)))
            .collect()
    } else {
        Vec::new()
    };
    if a.list {
        for name in &models {
            for &mutant in &variants {
                let key = run_key(name, mutant);
                if shard.contains(&key) {
                    println!("{key}");
                }
            }
        }
        for k in &kill_rows {
            println!("{}", kill_key(k.model, k.mutant));
        }
        if with_load {
            for (key, _, _) in load_runs(a.matrix) {
                if shard.contains(&key) {
                    println!("{key}");
                }
            }
        }
        return ExitCode::SUCCESS;
    }
    if !a.json {
        println!("{HEADER}");
    }
    for name in &models {
        for &mutant in &variants {
            if !shard.contains(&run_key(name, mutant)) {
                continue;
            }
            let (symmetry, liveness) = plan_for(name);
            let cfg = model_config(name).expect("validated").with_mutant(mutant);
            let r = run(
                name,
                cfg,
                RunOptions {
                    symmetry,
                    threads: a.threads,
                    liveness,
                    progress: !a.json,
                    stop_at: None,
                },
            );
            let unexpected_unreached: Vec<_> = r
                .unreached
                .iter()
                .filter(|u| mutant.is_some() || !expected_unreached(name).contains(u))
                .collect();
            let ok = r.violated.is_empty() && (mutant.is_some() || unexpected_unreached.is_empty());
            let verdict = if r.violated.is_empty() {
                if ok {
                    "hold"
                } else {
                    "vacuous"
                }
            } else {
                "VIOLATED"
            };
            failed |= !ok;
            if let Some(dir) = &results {
                let expected = if mutant.is_some() { "killed" } else { "hold" };
                let observed = match (mutant.is_some(), ok) {
                    (false, _) => verdict,
                    (true, _) if !r.violated.is_empty() => "killed",
                    (true, _) => "survives",
                };
                record_in(
                    dir,
                    &Verdict {
                        checker: "stateright",
                        progress: "spec",
                        scenario: name,
                        variant: mutant.map_or("baseline", |m| m.name()),
                        bound: format!(
                            "{} {} states={} unique={} depth={}",
                            r.checker, r.params, r.states, r.unique, r.depth
                        ),
                        expected,
                        observed,
                        seconds: r.secs,
                        detail: r
                            .violated
                            .first()
                            .map(|v| {
                                format!(
                                    "{}: {}",
                                    v.property,
                                    v.steps.first().cloned().unwrap_or_default()
                                )
                            })
                            .unwrap_or_default(),
                    },
                );
            }
            if a.json {
                out_json.push(result_json(&r, verdict));
            } else {
                print_result(&r, verdict);
            }
        }
    }
    if with_load {
        failed |= !run_load(a, shard, results.as_deref());
    }
    if a.matrix {
        let rows = kill_rows;
        let mut columns: Vec<&str> = SAFETY.to_vec();
        columns.push(LIVENESS);
        let mut matrix_json = Vec::new();
        let mut lines = Vec::new();
        for k in &rows {
            let r = run(
                k.model,
                model_config(k.model)
                    .expect("known")
                    .with_mutant(Some(k.mutant)),
                RunOptions {
                    symmetry: false,
                    threads: a.threads,
                    liveness: true,
                    progress: !a.json,
                    stop_at: None,
                },
            );
            let got = r.violated_names();
            let mut want = k.breaks.to_vec();
            want.sort();
            let mut g = got.clone();
            g.sort();
            let as_expected = g == want && got.contains(&k.designated);
            failed |= !as_expected;
            if let Some(dir) = &results {
                // BFS on one thread, each property reporting its first violation
                // (`BpModel::first_discovery`): the counterexample is a shortest one, so its
                // number of actions is the depth at which the mutant is first killed
                // (spec/tests/spec_model.rs, bfs_counterexamples_are_shortest); the margin is
                // the model's full depth over it.
                let cx = r.violated.iter().find(|v| v.property == k.designated);
                let steps = cx.map_or(0, |v| v.depth);
                record_in(
                    dir,
                    &Verdict {
                        checker: "stateright",
                        progress: "spec-kill-matrix",
                        scenario: k.model,
                        variant: k.mutant.name(),
                        bound: format!(
                            "bfs states={} unique={} depth={} first-killed-at-depth={steps} breaks={}",
                            r.states,
                            r.unique,
                            r.depth,
                            got.join(",")
                        ),
                        expected: "killed",
                        observed: if as_expected { "killed" } else { "UNEXPECTED" },
                        seconds: r.secs,
                        detail: if as_expected {
                            format!("{}: {}", k.designated, cx.and_then(|v| v.steps.last().cloned()).unwrap_or_default())
                        } else {
                            format!("breaks {got:?}, expected {:?}", k.breaks)
                        },
                    },
                );
            }
            if let (Some(dir), Some(cx)) = (
                &a.traces,
                r.violated.iter().find(|v| v.property == k.designated),
            ) {
                let path = dir.join(format!("{}-{}.trace", k.model, k.mutant.name()));
                let text = crate::docgen::trace_file(
                    &[
                        ("checker", "stateright (BFS)".to_string()),
                        ("model", k.model.to_string()),
                        ("mutant", k.mutant.name().to_string()),
                        ("property", k.designated.to_string()),
                        (
                            "bound",
                            format!(
                                "{}, {} unique states, depth {}",
                                r.params, r.unique, r.depth
                            ),
                        ),
                        (
                            "command",
                            format!(
                                "bpspec check --model {} --mutant {} --threads {}",
                                k.model,
                                k.mutant.name(),
                                a.threads
                            ),
                        ),
                    ],
                    &cx.steps,
                );
                if let Err(e) =
                    std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text))
                {
                    eprintln!("bpspec check: cannot write {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
            let cells: String = columns
                .iter()
                .map(|c| {
                    if *c == k.designated && got.contains(c) {
                        " K "
                    } else if got.contains(c) {
                        " x "
                    } else {
                        " . "
                    }
                })
                .collect();
            lines.push(format!(
                "{:<32} {:<7} {} {:>9} {:>6.2}s  {}",
                k.mutant.name(),
                k.model,
                cells,
                r.unique,
                r.secs,
                if as_expected {
                    "as expected".to_string()
                } else {
                    format!("UNEXPECTED (expected {:?})", k.breaks)
                }
            ));
            matrix_json.push(json!({
                "mutant": k.mutant.name(),
                "model": k.model,
                "designated": k.designated,
                "breaks": got,
                "expected": k.breaks,
                "as_expected": as_expected,
                "unique_states": r.unique,
                "seconds": r.secs,
                "first_counterexample": r.violated.iter().find(|v| v.property == k.designated).map(|v| v.steps.clone()),
            }));
        }
        if a.json {
            kill_matrix = Some(matrix_json);
        } else {
            println!();
            println!(
                "kill matrix (K = killed by its designated property, x = also broken, . = holds)"
            );
            for (i, c) in columns.iter().enumerate() {
                println!("  column {}: {c}", i + 1);
            }
            println!(
                "{:<32} {:<7} {} {:>9} {:>7}",
                "mutant",
                "model",
                (1..=columns.len())
                    .map(|i| format!(" {i} "))
                    .collect::<String>(),
                "unique",
                "time"
            );
            for l in lines {
                println!("{l}");
            }
        }
    }
    if a.json {
        let mut doc = json!({ "ok": !failed, "models": out_json });
        if let Some(k) = kill_matrix {
            doc["kill_matrix"] = serde_json::Value::Array(k);
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serialisable")
        );
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
