//! Running the model checkers on a named model and collecting what the CLI and the tests need:
//! figures, verdicts, counterexamples narrated in protocol words.

use super::liveness;
use super::props::{FUSED_SAFETY, LIVENESS, REACHABILITY, SAFETY};
use super::{BpModel, Caps, Config, Small, SpecMutant, State, StateOf};
use stateright::{Checker, Model};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How to run one model.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// DFS with symmetry over schedulers (otherwise BFS on one thread: shortest
    /// counterexamples, `BpModel::first_discovery`).
    pub symmetry: bool,
    pub threads: usize,
    /// Also run the liveness check (explicit graph, no symmetry).
    pub liveness: bool,
    /// Print progress (states, rate) to stderr when it is a terminal.
    pub progress: bool,
    /// Stop as soon as this property has a discovery (kill checks; figures are then partial).
    pub stop_at: Option<&'static str>,
}

impl RunOptions {
    /// Exhaustive BFS with the liveness check (the small models).
    pub fn small() -> RunOptions {
        RunOptions {
            symmetry: false,
            threads: 1,
            liveness: true,
            progress: false,
            stop_at: None,
        }
    }
}

/// A violated property with its counterexample.
#[derive(Clone, Debug)]
pub struct Violated {
    pub property: &'static str,
    /// Numbered steps in protocol words, then the reason.
    pub steps: Vec<String>,
    /// The number of actions in the counterexample (its path's length; a step may take
    /// several lines of `steps`).
    pub depth: usize,
}

/// The result of checking one model (baseline or mutant).
#[derive(Clone, Debug)]
pub struct RunResult {
    pub model: String,
    pub mutant: Option<SpecMutant>,
    pub checker: &'static str,
    pub params: String,
    pub states: usize,
    pub unique: usize,
    pub depth: usize,
    pub secs: f64,
    pub violated: Vec<Violated>,
    /// `sometimes` properties with no example (vacuity warnings; a failure for a baseline).
    pub unreached: Vec<&'static str>,
    /// Liveness: `None` if not run; `Some((states, edges))` with the graph size.
    pub liveness_graph: Option<(usize, usize)>,
}

impl RunResult {
    /// Every safety and liveness property holds and every reachability property has an example.
    pub fn holds(&self) -> bool {
        self.violated.is_empty() && self.unreached.is_empty()
    }
    pub fn violated_names(&self) -> Vec<&'static str> {
        self.violated.iter().map(|v| v.property).collect()
    }
    pub fn states_per_sec(&self) -> f64 {
        self.states as f64 / self.secs.max(1e-9)
    }
}

/// Narrate a path of actions from the initial state as numbered steps.
pub fn narrate_path(m: &BpModel, actions: &[super::Action]) -> Vec<String> {
    let mut s: State = m.init_states().remove(0);
    let mut out = Vec::new();
    for &a in actions {
        let (n, lines) = m.narrate(&s, a);
        for l in lines {
            out.push(format!("{}. {l}", out.len() + 1));
        }
        s = n;
    }
    out
}

/// Why `property` fails in the final state (the detail of the violation).
fn reason(m: &BpModel, property: &str, s: &State) -> String {
    use super::props::*;
    use super::state::Violation::*;
    let v = match s.violation {
        Some(TornHalf { sched, node, half }) => format!(
            "scheduler {sched} read half {half} of GenericBp#{} while the stager's write to it \
             is not visible to it (a data race)",
            node + 1
        ),
        Some(UnpublishedNode { sched, node }) => format!(
            "scheduler {sched} read GenericBp#{} before its allocation was visible to it",
            node + 1
        ),
        Some(EmptySlot { sched, func }) => format!(
            "scheduler {sched} executed the breakpoint instruction of f{func} but its breakpoint \
             slot is empty"
        ),
        Some(OldAfterNew { sched, func }) => format!(
            "scheduler {sched} acted on the old settings (f{func}) after acting on the new ones"
        ),
        Some(TableRace {
            sched,
            obj,
            during: true,
        }) => format!(
            "the collector read the tables of {} while scheduler {sched} was writing it",
            super::collect::obj_name(s, obj)
        ),
        Some(TableRace {
            sched,
            obj,
            during: false,
        }) => format!(
            "scheduler {sched} wrote {} with nothing ordering the write after the collector's \
             read of it (no wait began after the read and was passed by scheduler {sched})",
            super::collect::obj_name(s, obj)
        ),
        Some(SharedSlotRace { sched, obj }) => format!(
            "the collector wrote the shared slot of {} while dirty scheduler {sched} was writing it",
            super::collect::obj_name(s, obj)
        ),
        Some(TempUseAfterFree { sched, obj }) => format!(
            "scheduler {sched} charged {}, which has been freed",
            super::collect::obj_name(s, obj)
        ),
        Some(FreedTracer { sched, cell }) => format!(
            "scheduler {sched} used tracer cell #{}, which the stager has freed",
            cell as u32 + 1
        ),
        Some(MissedNode { sched, func, node }) => format!(
            "scheduler {sched}'s hit of f{func} ended without acting on GenericBp#{}, which was \
             linked before the hit began and is still linked and active",
            node + 1
        ),
        None => String::new(),
    };
    let r = match property {
        "no-use-after-free" => Err(holder_of_freed(s)),
        "at-rest-consistent" => at_rest_consistent(m, s),
        "patched-iff-active-flag" => patched_iff_active(m, s),
        "returns-settled" => returns_settled(m, s),
        "charges-conserved" => charges_conserved(m, s),
        FUSED_SAFETY => Err(format!("{} fail here", failing(m, s).join(", "))),
        "no-freed-tracer-use" if s.violation.is_none() => Err(holder_of_freed_cell(s)),
        _ => Err(v),
    };
    format!("violated: {property}: {}", r.err().unwrap_or_default())
}

/// Which scheduler holds which freed node.
fn holder_of_freed(s: &State) -> String {
    use super::state::{Mode, NIL};
    for (i, x) in s.scheds.iter().enumerate() {
        if let Mode::Hit(h) = x.mode {
            for (g, role) in [(h.at, "stands on"), (h.head, "started its hit from")] {
                if g != NIL && s.nodes[g as usize].freed {
                    return format!(
                        "scheduler {i} {role} GenericBp#{}, which the stager has freed",
                        g + 1
                    );
                }
            }
        }
        if let Mode::Charge(c) = x.mode {
            if c.at != NIL && s.nodes[c.at as usize].freed {
                return format!(
                    "scheduler {i}'s call_time charge (walking the slot) stands on GenericBp#{}, \
                     which the stager has freed",
                    c.at + 1
                );
            }
        }
    }
    "no scheduler holds a freed node".into()
}

/// Which scheduler is about to send through which freed tracer cell.
fn holder_of_freed_cell(s: &State) -> String {
    use super::state::Mode;
    for (i, x) in s.scheds.iter().enumerate() {
        if let Mode::Hit(h) = x.mode {
            if h.cell != super::state::NIL && s.cells[h.cell as usize] {
                return format!(
                    "scheduler {i} holds tracer cell #{} (loaded for a send), which the stager \
                     has freed",
                    h.cell as u32 + 1
                );
            }
        }
    }
    "no scheduler holds a freed tracer cell".into()
}

/// Check one configuration.
pub fn run(name: &str, cfg: Config, opts: RunOptions) -> RunResult {
    let label = format!(
        "stateright {name} {}",
        cfg.mutant.map_or("baseline", |m| m.name())
    );
    let name = name.to_string();
    bpspec_reference::watchdog::guard(&label, move || run_unguarded(&name, cfg, opts))
}

/// [`run`] without the watchdog.
///
/// A baseline run (no mutant, no `stop_at`) checks the `always` properties fused into one
/// (`BpModel::fused`: one discoveries lookup per state for all of them); if that one is
/// violated, the model is run again unfused, so the result names each violated property with
/// its own counterexample, exactly as an unfused run does. Mutant runs (the kill matrix) run
/// unfused. An unfused run reports each property's first violation
/// (`BpModel::first_discovery`): on BFS with one thread, a shortest counterexample.
fn run_unguarded(name: &str, cfg: Config, opts: RunOptions) -> RunResult {
    if cfg.mutant.is_none() && opts.stop_at.is_none() {
        let r = run_model(name, BpModel::fused(cfg.clone()), opts);
        if !r.violated.iter().any(|v| v.property == FUSED_SAFETY) {
            return r;
        }
    }
    run_model(name, BpModel::new(cfg).first_discovery(), opts)
}

/// Check `m` (fused or not) once.
fn run_model(name: &str, m: BpModel, opts: RunOptions) -> RunResult {
    let cfg = m.cfg.clone();
    let params = cfg.params();
    let t0 = Instant::now();
    // BFS single-threaded: shortest counterexamples (an unfused model reports each property's
    // first violation, `BpModel::first_discovery`), the same ones on every run. DFS on
    // `opts.threads` for symmetry, and for a fused baseline with no liveness check (a run that
    // is expected to hold: a violation of the fused property is run again unfused, on BFS, by
    // `run_unguarded`, so every counterexample reported is still BFS's). Without symmetry DFS
    // reaches the same states and unique states as BFS (every successor of every reachable
    // state, once), only its depth is the DFS tree's, not the shortest paths'.
    let dfs = opts.symmetry || (m.fused && !opts.liveness && opts.stop_at.is_none());
    let threads = if dfs { opts.threads.max(1) } else { 1 };
    // A model that fits the smaller state (`Small`: two schedulers, no counter objects, no
    // tracer cells) is checked on it: the same states and verdicts, fewer bytes per state.
    let (checker_name, fin) = if cfg.fits::<Small>() {
        explore(m.resized::<Small>(), opts, dfs, threads, t0)
    } else {
        explore(m.clone(), opts, dfs, threads, t0)
    };
    let secs = t0.elapsed().as_secs_f64();
    let mut violated = Vec::new();
    let mut unreached = Vec::new();
    for p in SAFETY.into_iter().chain(m.fused.then_some(FUSED_SAFETY)) {
        if let Some(path) = fin.discoveries.iter().find(|(n, _)| *n == p).map(|x| &x.1) {
            let mut steps = narrate_path(&m, path);
            let last = replay(&m, path);
            steps.push(reason(&m, p, &last));
            violated.push(Violated {
                property: p,
                steps,
                depth: path.len(),
            });
        }
    }
    // The fused model records its `sometimes` properties on itself (`props::properties`);
    // every clone the checker holds shares them.
    let reached = m.reached();
    for (i, p) in REACHABILITY.into_iter().enumerate() {
        let held = if m.fused {
            reached & (1 << i) != 0
        } else {
            fin.discoveries.iter().any(|(n, _)| *n == p)
        };
        if !held {
            unreached.push(p);
        }
    }
    let mut liveness_graph = None;
    if opts.liveness {
        match liveness::check(&m, 20_000_000) {
            Ok(rep) => {
                liveness_graph = Some((rep.states, rep.edges));
                if let Some((path, why)) = rep.counterexample {
                    let mut steps = narrate_path(&m, &path);
                    steps.push(format!("violated: {LIVENESS}: {why}"));
                    violated.push(Violated {
                        property: LIVENESS,
                        steps,
                        depth: path.len(),
                    });
                }
            }
            Err(e) => violated.push(Violated {
                property: LIVENESS,
                steps: vec![e],
                depth: 0,
            }),
        }
    }
    RunResult {
        model: name.to_string(),
        mutant: cfg.mutant,
        checker: checker_name,
        params,
        states: fin.states,
        unique: fin.unique,
        depth: fin.depth,
        secs,
        violated,
        unreached,
        liveness_graph,
    }
}

/// The checker's part of [`run_model`], on the state of capacities `K`.
fn explore<K: Caps>(
    m: BpModel<K>,
    opts: RunOptions,
    dfs: bool,
    threads: usize,
    t0: Instant,
) -> (&'static str, Finished) {
    // DFS takes the actions in the order that keeps its depth low (`BpModel::for_dfs`); BFS
    // keeps `Config::enabled`'s order (the same shortest counterexamples on every run).
    let checked = if dfs { m.for_dfs() } else { m };
    let mut builder = checked.checker().threads(threads);
    if let Some(p) = opts.stop_at {
        builder = builder.finish_when(stateright::HasDiscoveries::AnyOf([p].into_iter().collect()));
    }
    if opts.symmetry {
        let c = builder
            .symmetry_fn(StateOf::<K>::representative)
            .spawn_dfs();
        let f = finish(&c, opts.progress, t0);
        c.join();
        ("stateright dfs + symmetry", f)
    } else if dfs {
        let c = builder.spawn_dfs();
        let f = finish(&c, opts.progress, t0);
        c.join();
        ("stateright dfs", f)
    } else {
        let c = builder.spawn_bfs();
        let f = finish(&c, opts.progress, t0);
        c.join();
        ("stateright bfs", f)
    }
}

fn replay(m: &BpModel, path: &[super::Action]) -> State {
    let mut s = m.init_states().remove(0);
    for &a in path {
        s = m.next_state(&s, a).expect("successor");
    }
    s
}

struct Finished {
    states: usize,
    unique: usize,
    depth: usize,
    discoveries: Vec<(&'static str, Vec<super::Action>)>,
}

fn finish<K: Caps, C: Checker<BpModel<K>>>(c: &C, progress: bool, t0: Instant) -> Finished {
    let tty = progress && std::io::stderr().is_terminal();
    // Not a terminal: a plain `[progress]` line every BPSPEC_PROGRESS_SECS seconds (default 15).
    let every = std::env::var("BPSPEC_PROGRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(15);
    let mut next = every;
    while !c.is_done() {
        std::thread::sleep(Duration::from_millis(if tty { 500 } else { 20 }));
        if progress && !tty && every > 0 && t0.elapsed().as_secs() >= next {
            next += every;
            let n = c.state_count();
            eprintln!(
                "[progress] stateright: {n} states, {} unique, {:.0} states/s, {} s",
                c.unique_state_count(),
                n as f64 / t0.elapsed().as_secs_f64().max(1e-9),
                t0.elapsed().as_secs()
            );
        }
        if tty {
            let n = c.state_count();
            let secs = t0.elapsed().as_secs_f64();
            eprint!(
                "\r  {n} states, {} unique, {:.0} states/s   ",
                c.unique_state_count(),
                n as f64 / secs.max(1e-9)
            );
        }
    }
    if tty {
        eprint!("\r{:60}\r", "");
    }
    Finished {
        states: c.state_count(),
        unique: c.unique_state_count(),
        depth: c.max_depth(),
        discoveries: c
            .discoveries()
            .into_iter()
            .map(|(k, p)| (k, p.into_actions()))
            .collect(),
    }
}

/// The models `bpspec check` runs by default, with how: `(name, symmetry, liveness)`.
pub fn default_plan() -> Vec<(&'static str, bool, bool)> {
    vec![
        ("s2f2x1", false, true),
        ("s2f1x2", false, true),
        ("s3f2x2", true, false),
        ("s4f1x1", true, false),
        ("s2f1x3", false, true),
        ("s2f3x1", false, true),
        ("s2f1x2h", false, true),
        ("c2f1", false, true),
        ("c3f1", false, false),
        ("c2f1c3", false, true),
        ("c3f1d2", false, false),
        ("t2f1", false, true),
        ("t2f1p", false, true),
        ("t2f1x2", false, true),
        ("t2f1pc2", false, false),
        ("t2f1x2r", false, false),
        ("g2f1", false, true),
        ("m2f1", false, true),
        ("st2f1", false, true),
        ("b2f2", false, true),
        ("b2f2b", false, true),
        ("bt2f1", false, true),
        ("bc2f1", false, true),
        ("b2f1x2", false, true),
        ("bm2f1", false, true),
        ("p2f2", false, true),
        ("pt2f1", false, true),
        ("p2f1x2h", false, true),
    ]
}
