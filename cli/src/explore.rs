//! `bpspec explore NAME [--mutant M] [--addr 127.0.0.1:PORT]`: serve stateright's Explorer for
//! one model, so a person can step through it (and a mutant's counterexample) in a browser. The
//! Explorer's JSON status is at `GET /.status`. Runs until killed.

use bpspec_spec::model::{model_config, named_models, BpModel, SpecMutant};
use stateright::Model;
use std::process::ExitCode;

pub const USAGE: &str = "bpspec explore NAME [--mutant M] [--addr 127.0.0.1:PORT]";

fn bad(msg: String) -> ExitCode {
    eprintln!("bpspec explore: {msg}\nusage: {USAGE}");
    ExitCode::from(2)
}

pub fn main(args: &[&str]) -> ExitCode {
    let mut name = None;
    let mut addr = "127.0.0.1:3000".to_string();
    let mut mutant = None;
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        match a {
            "--addr" => match it.next() {
                Some(v) => addr = v.to_string(),
                None => return bad("--addr needs HOST:PORT".into()),
            },
            "--mutant" => match it.next().map(|n| (n, SpecMutant::from_name(n))) {
                Some((_, Some(m))) => mutant = Some(m),
                Some((n, None)) => return bad(format!("unknown mutant name {n:?}")),
                None => return bad("--mutant needs a NAME".into()),
            },
            n if !n.starts_with('-') && name.is_none() => name = Some(n),
            other => return bad(format!("unknown argument {other:?}")),
        }
    }
    let Some(name) = name else {
        return bad("missing model NAME".into());
    };
    let Some(cfg) = model_config(name) else {
        let known: Vec<_> = named_models().iter().map(|m| m.0).collect();
        return bad(format!(
            "unknown model name {name:?} (known models: {})",
            known.join(", ")
        ));
    };
    // Check the address first: the Explorer itself panics on a bind failure.
    match std::net::TcpListener::bind(&addr) {
        Ok(l) => drop(l),
        Err(e) => return bad(format!("cannot listen on {addr}: {e}")),
    }
    let m = BpModel::new(cfg.with_mutant(mutant));
    eprintln!(
        "bpspec explore: serving model {name} ({}{}) on http://{addr}/ (JSON status: /.status)",
        m.cfg.params(),
        mutant.map_or(String::new(), |m| format!(", mutant {m}"))
    );
    m.checker().serve(addr.as_str());
    ExitCode::SUCCESS
}
