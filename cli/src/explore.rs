//! `bpspec explore NAME [--mutant M] [--addr 127.0.0.1:PORT]`: serve stateright's Explorer for
//! one model, so a person can step through it (and a mutant's counterexample) in a browser. The
//! Explorer's JSON status is at `GET /.status`. Runs until killed.

use bpspec_spec::model::{model_config, named_models, BpModel, SpecMutant};
use stateright::Model;
use std::process::ExitCode;

pub const USAGE: &str = "bpspec explore NAME [--mutant M] [--addr 127.0.0.1:PORT]";

#[derive(clap::Args)]
pub struct Args {
    /// The model to serve.
    name: String,
    /// Serve the model with this mutant.
    #[arg(long, value_name = "M")]
    mutant: Option<String>,
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:3000", value_name = "HOST:PORT")]
    addr: String,
}

fn bad(msg: String) -> ExitCode {
    eprintln!("bpspec explore: {msg}\nusage: {USAGE}");
    ExitCode::from(2)
}

pub fn main(a: &Args) -> ExitCode {
    let (name, addr) = (a.name.as_str(), &a.addr);
    let mutant = match a.mutant.as_deref().map(|n| (n, SpecMutant::from_name(n))) {
        Some((_, Some(m))) => Some(m),
        Some((n, None)) => return bad(format!("unknown mutant name {n:?}")),
        None => None,
    };
    let Some(cfg) = model_config(name) else {
        let known: Vec<_> = named_models().iter().map(|m| m.0).collect();
        return bad(format!(
            "unknown model name {name:?} (known models: {})",
            known.join(", ")
        ));
    };
    // Check the address first: the Explorer itself panics on a bind failure.
    match std::net::TcpListener::bind(addr) {
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
