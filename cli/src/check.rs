//! `bpspec check [--model NAME]... [--mutant NAME]... [--mutants] [--json] [--threads N]`:
//! run the spec's stateright models.
//!
//! Without `--model`, every model of the default plan (`s2f2x1`, `s2f1x2`, `s2f1x2h`, `c2f1`
//! exhaustive BFS with the liveness check, `s3f2x2` DFS with symmetry over schedulers, `c3f1` BFS
//! without liveness). `--mutant NAME` runs the selected
//! models with that mutant (its counterexamples are printed). `--mutants` runs the kill matrix
//! (each mutant on its model, exhaustively) and compares it with the expected one.
//!
//! Exit codes: 0 every property holds (and, with `--mutants`, every mutant breaks exactly the
//! expected properties); 1 a violation (or an unexpected matrix entry); 2 bad usage.

use bpspec_spec::model::matrix::{expected_unreached, kills};
use bpspec_spec::model::props::{LIVENESS, SAFETY};
use bpspec_spec::model::run::{default_plan, run, RunOptions, RunResult};
use bpspec_spec::model::{model_config, named_models, SpecMutant};
use serde_json::json;
use std::process::ExitCode;

pub const USAGE: &str =
    "bpspec check [--model NAME]... [--mutant NAME]... [--mutants] [--json] [--threads N]";

struct Args {
    models: Vec<String>,
    mutants: Vec<SpecMutant>,
    matrix: bool,
    json: bool,
    threads: usize,
}

fn bad(msg: String) -> ExitCode {
    eprintln!("bpspec check: {msg}\nusage: {USAGE}");
    ExitCode::from(2)
}

fn known_models() -> String {
    named_models()
        .iter()
        .map(|(n, _, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse(args: &[&str]) -> Result<Args, String> {
    let mut a = Args {
        models: Vec::new(),
        mutants: Vec::new(),
        matrix: false,
        json: false,
        threads: 2,
    };
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        match arg {
            "--model" => {
                let n = it.next().ok_or("--model needs a NAME")?;
                if model_config(n).is_none() {
                    return Err(format!(
                        "unknown model name {n:?} (known models: {})",
                        known_models()
                    ));
                }
                a.models.push(n.to_string());
            }
            "--mutant" => {
                let n = it.next().ok_or("--mutant needs a NAME")?;
                let m = SpecMutant::from_name(n).ok_or_else(|| {
                    format!(
                        "unknown mutant name {n:?} (known mutants: {})",
                        SpecMutant::all()
                            .iter()
                            .map(|m| m.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })?;
                a.mutants.push(m);
            }
            "--threads" => {
                let n = it.next().ok_or("--threads needs a number")?;
                a.threads = n
                    .parse()
                    .ok()
                    .filter(|&t| t > 0)
                    .ok_or_else(|| format!("--threads: {n:?} is not a positive number"))?;
            }
            "--mutants" => a.matrix = true,
            "--json" => a.json = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(a)
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

pub fn main(args: &[&str]) -> ExitCode {
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => return bad(e),
    };
    let models: Vec<String> = if a.models.is_empty() {
        default_plan().iter().map(|p| p.0.to_string()).collect()
    } else {
        a.models.clone()
    };
    let mut failed = false;
    let mut out_json = Vec::new();
    let mut kill_matrix: Option<Vec<serde_json::Value>> = None;
    if !a.json {
        println!("{HEADER}");
    }
    let variants: Vec<Option<SpecMutant>> = if a.mutants.is_empty() {
        vec![None]
    } else {
        a.mutants.iter().copied().map(Some).collect()
    };
    for name in &models {
        for &mutant in &variants {
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
            if a.json {
                out_json.push(result_json(&r, verdict));
            } else {
                print_result(&r, verdict);
            }
        }
    }
    if a.matrix {
        let rows: Vec<_> = kills()
            .into_iter()
            .filter(|k| a.models.is_empty() || a.models.iter().any(|m| m == k.model))
            .collect();
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
