//! `bpspec oracle` for implementers (docs/conformance-kit.md): seq_trace scenario files in
//! `run | check | erl`, `check --engine-cmd` (any implementation as a command, compared with the
//! sequential oracle, disagreements shrunk and saved) and `gen` (random scenario files, and the
//! generator's coverage table). The logic is in bpspec-oracle (seq.rs, external.rs, shrink.rs,
//! coverage.rs); this file only reads arguments and prints.

use bpspec_oracle::coverage::{Coverage, KINDS};
use bpspec_oracle::external::{self, EngineCmd, Verdict};
use bpspec_oracle::gen::{sample, GenConfig};
use bpspec_oracle::scenario::{load, Scenario};
use bpspec_oracle::seq;
use bpspec_oracle::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A scenario file's text; `-` is stdin (so `bpspec oracle run -` is itself an engine command).
pub fn read_text(file: &str) -> Result<String, String> {
    if file == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| format!("<stdin>: cannot read: {e}"))?;
        return Ok(s);
    }
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: cannot read: {e}"))?;
    String::from_utf8(bytes).map_err(|e| format!("{file}: cannot read: not UTF-8: {e}"))
}

/// `run` / `check` of a seq_trace scenario: one engine (the sequential seq_trace reference).
pub fn seq_run_check(cmd: &str, file: &str, text: &str) -> u8 {
    let sc = match seq::load(file, text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bpspec oracle: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let out = seq::run(&sc);
    if cmd == "run" {
        print!("{}", seq::render(&out));
        return EXIT_AGREE;
    }
    let Some(exp) = &sc.raw.expect else {
        eprintln!("bpspec oracle: {file}: at $.expect: check needs the expected observations (the scenario has no expect)");
        return EXIT_BAD_INPUT;
    };
    match seq::compare(exp, &out) {
        None => {
            println!(
                "{file}: {} results and {} events agree",
                out.results.len(),
                out.events.len()
            );
            EXIT_AGREE
        }
        Some(d) => {
            let want = seq::render(&seq::outcome_of(exp));
            let got = seq::render(&out);
            let lines = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
            println!(
                "{file}: observations differ: {d}\n(- expected, + observed; events from different processes may come in any order)\n{}",
                bpspec_oracle::observe::diff_lines(&lines(&want), &lines(&got))
            );
            EXIT_DIFFER
        }
    }
}

/// `erl` for seq_trace files: each on the reference and on Erlang/OTP; prints a line per file
/// and a summary; the exit code.
pub fn seq_erl(files: &[(&str, String)], root: Option<&Path>) -> u8 {
    let mut scs = Vec::new();
    for (f, text) in files {
        match seq::load(f, text) {
            Ok(s) => scs.push(s),
            Err(e) => {
                eprintln!("bpspec oracle: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    if let Some(r) = root {
        if let Err(e) = bpspec_oracle::erlang::check_root(r) {
            eprintln!("bpspec oracle: {e}");
            return EXIT_FAULT;
        }
    }
    let (version, diffs) = match seq::differential(&scs, root) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("bpspec oracle: {e}");
            return EXIT_FAULT;
        }
    };
    let mut differ = 0;
    for ((f, _), d) in files.iter().zip(&diffs) {
        match d {
            None => println!("Agree {f}"),
            Some(d) => {
                differ += 1;
                println!("DIFFER {f}\n{d}");
            }
        }
    }
    let origin = root.map_or("erl on PATH".to_string(), |r| {
        format!("chroot {}", r.display())
    });
    println!(
        "seq_trace on OTP {version} ({origin}): {} agree, {differ} differ",
        scs.len() - differ
    );
    if differ > 0 {
        EXIT_DIFFER
    } else {
        EXIT_AGREE
    }
}

/// `--features a,b,...` for the generator (docs/conformance-kit.md).
pub const DEFAULT_FEATURES: &str = "local,global,call_time,frames,pairs";

pub fn gen_config(features: &str) -> Result<GenConfig, String> {
    let names: Vec<&str> = features
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    for n in &names {
        if ![
            "call_count",
            "local",
            "global",
            "call_time",
            "call_memory",
            "frames",
            "pairs",
            "terms",
            "extras",
            "code",
        ]
        .contains(n)
        {
            return Err(format!("unknown generator feature {n:?} (call_count, local, global, call_time, call_memory, frames, pairs, terms, extras, code)"));
        }
    }
    let has = |n: &str| names.contains(&n);
    let cfg = GenConfig {
        call_time: has("call_time"),
        frames: has("frames"),
        call_memory: has("call_memory"),
        global: has("global"),
        pairs: has("pairs"),
        terms: has("terms"),
        extras: has("extras"),
        code: has("code"),
        call_count_only: !has("local"),
        ..GenConfig::default()
    };
    if cfg.call_count_only && (cfg.call_time || cfg.frames || cfg.call_memory || cfg.global) {
        return Err("global, call_time, call_memory and frames need local in --features (without local: call_count patterns only)".into());
    }
    Ok(cfg)
}

/// Options of `gen` and `check --engine-cmd` (the clap front end in oracle.rs fills these and
/// calls [`gen_run`] / [`engine_run`]).
pub struct Opts {
    /// Scenario files or directories (check --engine-cmd).
    pub files: Vec<String>,
    pub engine_cmd: Option<String>,
    /// `--seed`, default 1.
    pub seed: u64,
    /// `--count`, default 0 (at most 100,000).
    pub count: usize,
    /// `--features`, default [`DEFAULT_FEATURES`].
    pub features: String,
    /// `--out`; default `generated` (gen) or `bpspec-shrunk` (check --engine-cmd).
    pub out: Option<PathBuf>,
    /// `--timeout` in seconds per scenario, default 10.
    pub timeout: u64,
    /// `--coverage` (gen).
    pub coverage: bool,
    /// `--shrink-max`, default unlimited.
    pub shrink_max: usize,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            files: Vec::new(),
            engine_cmd: None,
            seed: 1,
            count: 0,
            features: DEFAULT_FEATURES.into(),
            out: None,
            timeout: 10,
            coverage: false,
            shrink_max: usize::MAX,
        }
    }
}

fn generated(o: &Opts) -> Result<Vec<Scenario>, String> {
    if o.count > 100_000 {
        return Err("--count is at most 100000".into());
    }
    let cfg = gen_config(&o.features)?;
    let mut v = sample(cfg, o.count, o.seed);
    for (i, s) in v.iter_mut().enumerate() {
        s.name = format!("gen-{}-{i}", o.seed);
    }
    Ok(v)
}

/// `bpspec oracle gen --seed S --count N [--features ...] [--out DIR] [--coverage]`.
pub fn gen_run(o: &Opts) -> u8 {
    if !o.files.is_empty() || o.engine_cmd.is_some() || o.count == 0 {
        eprintln!(
            "bpspec oracle: gen needs --count N (N > 0) and takes no files\nusage: {}",
            super::USAGE
        );
        return EXIT_BAD_INPUT;
    }
    let scs = match generated(o) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("bpspec oracle: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    if o.coverage {
        print!("{}", Coverage::of(&scs).table(&KINDS));
    }
    if o.out.is_none() && o.coverage {
        return EXIT_AGREE;
    }
    let out = o.out.clone().unwrap_or_else(|| PathBuf::from("generated"));
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("bpspec oracle: {}: {e}", out.display());
        return EXIT_FAULT;
    }
    let mut with_expect = 0;
    for s in &scs {
        let mut s = s.clone();
        let text = serde_json::to_string(&s).expect("serialize");
        if let Ok(l) = load(&s.name, &text) {
            if let Ok(obs) = bpspec_oracle::run::run(
                &l,
                bpspec_oracle::target::SpecOracle::boxed(l.funcs.clone()).as_mut(),
            ) {
                s.expect = Some(obs);
                with_expect += 1;
            }
        }
        let path = out.join(format!("{}.json", s.name));
        let body = serde_json::to_string_pretty(&s).expect("serialize") + "\n";
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("bpspec oracle: {}: {e}", path.display());
            return EXIT_FAULT;
        }
    }
    println!(
        "wrote {} scenarios to {} ({with_expect} with the sequential oracle's observations as expect)",
        scs.len(),
        out.display()
    );
    EXIT_AGREE
}

/// A scenario for the engine command: a breakpoint scenario or a seq_trace one.
enum Work {
    Bp(Scenario),
    Seq(seq::SeqScenario),
}

/// `bpspec oracle check --engine-cmd CMD [FILE|DIR...] [--count N --seed S --features ...]
/// [--out DIR] [--timeout SECS] [--shrink-max K]`.
pub fn engine_run(o: &Opts) -> u8 {
    if o.engine_cmd.is_none() || (o.count == 0 && o.files.is_empty()) {
        eprintln!("bpspec oracle: check --engine-cmd CMD needs scenario files or directories, or --count N\nusage: {}", super::USAGE);
        return EXIT_BAD_INPUT;
    }
    let engine = EngineCmd {
        cmd: o.engine_cmd.clone().expect("checked"),
        timeout: Duration::from_secs(o.timeout),
    };
    // (origin, scenario): files first (directories: their *.json), then generated ones.
    let mut work: Vec<(String, Work)> = Vec::new();
    let mut paths = Vec::new();
    for f in &o.files {
        let p = Path::new(f);
        if p.is_dir() {
            match bpspec_oracle::conformance::json_files(p) {
                Ok(v) => paths.extend(v),
                Err(e) => {
                    eprintln!("bpspec oracle: {e}");
                    return EXIT_BAD_INPUT;
                }
            }
        } else {
            paths.push(f.clone());
        }
    }
    for f in &paths {
        let text = match read_text(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("bpspec oracle: {e}");
                return EXIT_BAD_INPUT;
            }
        };
        let w = if seq::is_seq_trace(&text) {
            seq::load(f, &text).map(|l| Work::Seq(l.raw))
        } else {
            load(f, &text).map(|l| Work::Bp(l.scenario))
        };
        match w {
            Ok(w) => work.push((f.clone(), w)),
            Err(e) => {
                eprintln!("bpspec oracle: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    match generated(o) {
        Ok(v) => work.extend(v.into_iter().map(|s| (s.name.clone(), Work::Bp(s)))),
        Err(e) => {
            eprintln!("bpspec oracle: {e}");
            return EXIT_BAD_INPUT;
        }
    }
    let out = o
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("bpspec-shrunk"));
    let (mut agree, mut differ, mut skipped, mut shrunk) = (0, 0, 0, 0);
    for (origin, w) in &work {
        let judged = match w {
            Work::Bp(sc) => external::judge(&engine, sc),
            Work::Seq(sc) => external::judge_seq(&engine, sc),
        };
        let v = match judged {
            Ok(v) => v,
            Err(e) => {
                eprintln!("bpspec oracle: {}", e.0);
                return EXIT_FAULT;
            }
        };
        match v {
            Verdict::Agree => {
                agree += 1;
                println!("AGREE {origin}");
            }
            Verdict::Skipped(why) => {
                skipped += 1;
                println!("SKIP {origin}: {why}");
            }
            Verdict::Differ(d) => {
                differ += 1;
                println!("DIFFER {origin} (- sequential oracle, + engine):\n{d}");
                if shrunk >= o.shrink_max {
                    continue;
                }
                shrunk += 1;
                let name = external::stem(origin);
                let r = match w {
                    Work::Bp(sc) => external::shrink_and_save(&engine, origin, sc, &d, &out, &name),
                    Work::Seq(sc) => {
                        external::shrink_and_save_seq(&engine, origin, sc, &d, &out, &name)
                    }
                };
                match r {
                    Ok(f) => println!(
                        "SHRUNK {origin}: size {} -> {} ({} candidates tried), saved {}\n{}",
                        f.size_before,
                        f.size_after,
                        f.tried,
                        f.saved.display(),
                        f.minimal_diff
                    ),
                    Err(e) => {
                        eprintln!("bpspec oracle: {e}");
                        return EXIT_FAULT;
                    }
                }
            }
        }
    }
    println!(
        "engine `{}`: {agree} agree, {differ} differ ({shrunk} shrunk into {}), {skipped} skipped",
        engine.cmd,
        out.display()
    );
    if differ > 0 {
        EXIT_DIFFER
    } else if agree == 0 && skipped > 0 {
        EXIT_UNSUPPORTED
    } else {
        EXIT_AGREE
    }
}
