//! # The breakpoint protocol as a stateright model
//!
//! **What it models.** ERTS's non-blocking breakpoints (docs/protocol.md): a stager running a
//! script of `trace_pattern` calls through stage → W0 → install → W1 → commit → W2 → uninstall →
//! W3 → consolidate → W4 → free, and schedulers that, while it runs, call functions (each read of
//! the hit path H1–H7 one step), pass progress points, sleep and wake.
//!
//! - *Stale views.* A scheduler may keep reading the old instruction word, breakpoint slot,
//!   active index and `next` links until its next full barrier (progress point, wake-up), which
//!   refreshes everything written before the latest wait began (G-seen of docs/protocol.md §3).
//!   Per location a scheduler may hold one older value; in the baseline no location is written
//!   twice between two waits while a scheduler still holds an older value of it, except that
//!   consolidate may unlink two nodes of one chain in one step (the intermediate value is a node
//!   the older value also leads to), so one older value loses no behaviour there.
//! - *Plain data.* The halves and a node's allocation are non-atomic: a read races with the last
//!   write unless a wait began after the write and the reader passed a barrier after that. Only
//!   the read side is checked: if a read comes before an unordered write, the execution where the
//!   same read comes after the write (nothing of the reader in between) is also explored.
//! - *Grace periods.* A wait completes when every scheduler passed a progress point after it
//!   began, or slept (a sleeper counts at once); waking up is a barrier.
//! - *Chains*: a hit records the nodes on its function's chain when it begins and the
//!   nodes it acts on; when it ends, every node linked at its start and still linked and active
//!   must have been acted on (`no-missed-node`; two-session models only).
//! - *call_time* (`collect.rs`): counter objects with per-scheduler tables and a shared
//!   slot, abstract charges (counted, at most `Config::charges` per run), and `trace_info` as a
//!   stager operation (`StagerOp::Collect`).
//! - *call_time readers* (`collect.rs`, docs/spec.md §9): a charge (a return, an exception, a
//!   schedule-out, a hit's previous-function charge) walks the function's slot and links
//!   whatever the instruction word says; the fresh node's store into an empty slot is a release
//!   store that those readers acquire (`fresh-slot-store-relaxed` is ERTS and the engine).
//! - *Export entries* (docs/spec.md §10): a slot whose halves carry `GLOBAL` is an export entry
//!   (same steps, no call_time readers).
//! - *Tracer cells* (docs/spec.md §11): the session tracer and the meta tracer, one pointer
//!   location swapped by `StagerOp::SetTracer`, loaded and used by hits, freed after a wait.
//! - Not modelled: call_count values (I6; the sequential oracle and the engine tests cover them),
//!   the call_count object's identity, other trace flags, code loading.
//!
//! **Properties.** See [`props`]; liveness in [`liveness`].
//!
//! **Checked** (release build, 2-core machine shared with other jobs, so times are upper bounds;
//! `bpspec check` prints the same figures on every run). All hold: no safety property violated,
//! every `sometimes` property has an example (except `stands-on-unlinked-node` with one session,
//! on purpose), no fair cycle blocks the stager.
//!
//! | model | parameters | checker | states | unique | depth | time |
//! |---|---|---|---|---|---|---|
//! | `tiny` | 1 scheduler x 1 function x 1 session; add, remove | BFS | 1,682 | 763 | 39 | 0.03 s |
//! | `s2f2x1` | 2 x 2 x 1; add, update (call_count), pause, restart, remove | BFS, 1 thread | 861,126 | 264,670 | 96 | 1.0-3.1 s |
//! | `s2f1x2` | 2 x 1 x 2 sessions; add s0, add s1, remove s0 | BFS, 1 thread | 341,311 | 108,157 | 87 | 0.4-0.8 s |
//! | `s3f2x2` | 3 x 2 x 2 sessions; add s0, add s1 on f0, remove s0 | DFS + symmetry, 2 threads | 15,330,515 | 3,535,726 | 10,745 | 84 s |
//! | `s2f1x2h` | 2 x 1 x 2 sessions; add s0, add s1, remove s1 (the head) | BFS, 1 thread | 353,949 | 112,110 | 83 | 0.6 s |
//! | `c2f1` | 2 x 1 x 1 (scheduler 1 dirty), 2 charges, no calls; call_time on, trace_info, pause, trace_info | BFS, 1 thread | 383,999 | 113,354 | 78 | 0.7 s |
//! | `c3f1` | 3 x 1 x 1 (scheduler 2 dirty), 3 charges, no calls; the same script | BFS, 1 thread | 29,894,756 | 6,498,993 | 87 | 49-103 s |
//! | `t2f1` | 2 x 1 x 1, 1 call_time charge walking the slot; call_time on, remove, on again | BFS, 1 thread | 819,869 | 247,847 | 89 | 1.5-11 s |
//! | `t2f1p` | 2 x 1 x 1, 1 charge; call_time on, pause, restart, remove, on again | BFS, 1 thread | 1,747,848 | 529,354 | 121 | 3.1-32 s |
//! | `t2f1pc2` | `t2f1p` with 2 charges | BFS, 1 thread | 6,053,486 | 1,835,232 | 128 | 11-170 s |
//! | `t2f1x2` | 2 x 1 x 2 sessions, 1 charge; s0 call_time on, s1 local on, s0 removes | BFS, 1 thread | 1,713,718 | 542,583 | 100 | 3.1-10 s |
//! | `t2f1x2r` | 2 x 1 x 2, 1 charge; s0 on, s1 local on, s0 restart, remove, on again | BFS, 1 thread | 3,744,615 | 1,193,549 | 136 | 6.4-117 s |
//! | `g2f1` | 2 x 1 export entry x 2 sessions; global s0, global s1, remove s0 (`s2f1x2` on an export entry) | BFS, 1 thread | 341,311 | 108,157 | 87 | 0.63 s |
//! | `m2f1` | 2 x 1 x 1; meta on, replace the meta tracer twice (hits may answer remove) | BFS, 1 thread | 726,802 | 219,645 | 78 | 1.59 s |
//! | `st2f1` | 2 x 1 x 1; local on, set, replace, remove the session tracer | BFS, 1 thread | 202,250 | 62,866 | 72 | 0.56 s |
//!
//! One size up on each axis (docs/cutoff.md §8; figures in docs/results/check-stateright.tsv):
//! `s4f1x1` (4 schedulers, DFS + symmetry), `s2f3x1` (3 functions), `s2f1x3` (3 sessions, a
//! middle unlink), `c2f1c3` (3 charges on 2 schedulers), `c3f1d2` (two dirty schedulers).
//!
//! The wait plans (docs/spec.md §12, docs/fewer-waits.md): the batch models `b2f2`, `b2f2b`,
//! `bt2f1`, `bc2f1`, `b2f1x2`, `bm2f1` (`StagerOp::Batch`; 98,605 to 364,258 unique states) and
//! the pipelined `p2f2`, `pt2f1`, `p2f1x2h` (`Config::pipeline`; 120,410 to 221,100), all BFS
//! with liveness, all hold.
//!
//! Liveness (explicit graph, no symmetry): `s2f2x1` 264,670 states / 861,125 edges, `s2f1x2`
//! 108,157 / 341,310, `s2f1x2h` 112,110 / 353,948, `c2f1` 113,354 / 383,998 (`c3f1`: 6,498,993 /
//! 29,894,755 in a one-off run; `bpspec check` runs it without). The figures of the two-session
//! models grew when `no-missed-node` added the chain masks to a hit (`s2f1x2` had
//! 94,861 unique states, `s3f2x2` 3,192,399). The call_time collection is `collect.rs`; the
//! kill matrix (`matrix.rs`) is in docs/spec.md.

pub mod collect;
pub mod config;
pub mod inline;
pub mod liveness;
pub mod matrix;
pub mod props;
pub mod refine;
pub mod run;
pub mod state;
pub mod step;

/// Split a described step, a stateright one ("12. scheduler 0 reads slot of f1 -> null") or a
/// refinement run's, into its lane (`stager`, `scheduler N` or `note`) and text, as the trace
/// files of docs/traces/README.md have them (`bpspec` docgen and models/tests/refine.rs).
pub fn lane_of(step: &str) -> (String, String) {
    let s = step.trim();
    let s = match s.split_once(". ") {
        Some((n, rest)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => rest,
        _ => s,
    };
    if let Some(rest) = s.strip_prefix("stager: ") {
        return ("stager".into(), rest.into());
    }
    if let Some(rest) = s.strip_prefix("scheduler ") {
        let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if !n.is_empty() {
            // "scheduler 0 reads ..." or "scheduler 0's call_time reader reads ..."
            let text = rest[n.len()..].trim_start_matches("'s").trim_start();
            return (format!("scheduler {n}"), text.into());
        }
    }
    ("note".into(), s.into())
}

pub use config::{bits, ChainMutant, CollectMutant, Config, PatternKind, SpecMutant, StagerOp};
pub use state::{Caps, Full, Small, State, StateOf};
pub use step::Action;

use stateright::{Model, Property};

/// The stateright model of one configuration.
#[derive(Clone, Debug)]
pub struct BpModel<K: Caps = Full> {
    pub cfg: Config,
    /// Check the `always` properties as one (`props::FUSED_SAFETY`): one discoveries lookup
    /// per state instead of one each (`BpModel::fused`).
    pub fused: bool,
    /// The `always` and `sometimes` properties the configuration can reach, bit masks over
    /// `props::SAFETY` and `props::REACHABILITY` (`props::reachable`).
    safety: u16,
    reach: u8,
    /// The `sometimes` properties that held in some state of this run (a bit each of
    /// `props::REACHABILITY`; only the fused model sets them, `props::properties`).
    reached: std::sync::Arc<std::sync::atomic::AtomicU8>,
    /// Offer the actions of a state in reverse (`BpModel::for_dfs`).
    reversed: bool,
    /// Per `props::SAFETY` property, the fingerprint of the first state the checker found
    /// violating it (0: none yet), when the `always` properties report only their first
    /// violation (`BpModel::first_discovery`, `props::properties`).
    first: Option<std::sync::Arc<[std::sync::atomic::AtomicU64; props::SAFETY.len()]>>,
    /// The capacities of its state, `StateOf<K>` (`BpModel::with_caps`).
    caps: std::marker::PhantomData<K>,
}

impl BpModel {
    /// The model of `cfg` with every reachable property on its own (each violated one has its
    /// own counterexample; with [`BpModel::first_discovery`] on BFS, a shortest one).
    pub fn new(cfg: Config) -> BpModel {
        BpModel::with_caps(cfg)
    }

    /// The model of `cfg` with every property registered, reachable or not
    /// (spec/tests/spec_model.rs checks `props::reachable` against it).
    pub fn with_every_property(cfg: Config) -> BpModel {
        BpModel::new(cfg).every_property()
    }

    /// The model of `cfg` with its `always` properties fused into one
    /// (`props::FUSED_SAFETY`), for runs that expect them to hold: a violation is found by the
    /// same states, but names no member (`props::failing` on its last state does; `run::run`
    /// runs the unfused model again to report each member's own counterexample). Its
    /// `sometimes` properties are evaluated inside the fused condition and recorded on the
    /// model ([`BpModel::reached`]), not as stateright discoveries (`props::properties`).
    pub fn fused(cfg: Config) -> BpModel {
        BpModel::new(cfg).fuse()
    }
}

impl<K: Caps> BpModel<K> {
    /// [`BpModel::new`] on the state of capacities `K` (`StateOf<K>`, which `cfg` must fit:
    /// `Config::fits`). The same states, transitions and properties as on [`State`]; a smaller
    /// `K` only moves fewer bytes per state (`bpspec rate` checks `s2f2x1` on [`Small`]).
    pub fn with_caps(cfg: Config) -> BpModel<K> {
        cfg.validate().expect("valid model configuration");
        assert!(
            cfg.fits::<K>(),
            "the model does not fit the state's capacities {:?}",
            K::default()
        );
        let (safety, reach) = props::reachable(&cfg);
        BpModel {
            cfg,
            fused: false,
            safety,
            reach,
            reached: Default::default(),
            reversed: false,
            first: None,
            caps: std::marker::PhantomData,
        }
    }

    /// The same model on the state of capacities `K2` (which its configuration must fit:
    /// `Config::fits`), sharing the record of reached `sometimes` properties
    /// ([`BpModel::reached`]) with this one.
    pub fn resized<K2: Caps>(&self) -> BpModel<K2> {
        assert!(
            self.cfg.fits::<K2>(),
            "the model does not fit {:?}",
            K2::default()
        );
        BpModel {
            cfg: self.cfg.clone(),
            fused: self.fused,
            safety: self.safety,
            reach: self.reach,
            reached: self.reached.clone(),
            reversed: self.reversed,
            first: self.first.clone(),
            caps: std::marker::PhantomData,
        }
    }

    /// The same model with every property registered ([`BpModel::with_every_property`]).
    pub fn every_property(self) -> BpModel<K> {
        BpModel {
            safety: u16::MAX >> (16 - props::SAFETY.len()),
            reach: u8::MAX,
            ..self
        }
    }

    /// The same model with its `always` properties fused ([`BpModel::fused`]).
    pub fn fuse(self) -> BpModel<K> {
        BpModel {
            fused: true,
            ..self
        }
    }

    /// The same model with each `always` property reporting only its first violation (a fresh
    /// record per call): its condition fails on the first state the checker finds violating it
    /// and holds on every later one, so stateright 0.31, which evaluates every `always`
    /// property on every state it pops, also after a discovery, and overwrites the recorded
    /// path with each later violating state's (bfs.rs:246-262, `discoveries.insert`;
    /// dfs.rs:240-290 the same), keeps the first path it found. BFS on one thread pops the
    /// states in the order of their depth, so that path is a shortest counterexample.
    ///
    /// The states explored stay the same: stateright's only use of the conditions besides
    /// `discoveries` is `is_awaiting_discoveries` (bfs.rs:245-296), which ends a block without
    /// expanding a state when no property awaits a discovery there: every `always` condition
    /// fails and every `sometimes` one holds. On such a state a later violation is reported
    /// as before (`props::properties`), so that flag, and with it every expansion, is what it
    /// is without the latch; the set of discovered names is the same at every step (the first
    /// discovery of each is unchanged), so `finish_when` and `is_done` are too. The fused
    /// model's single property ends its run at its first violation anyway and is not latched.
    pub fn first_discovery(self) -> BpModel<K> {
        BpModel {
            first: Some(Default::default()),
            ..self
        }
    }

    /// With [`BpModel::first_discovery`]: whether a violation of `props::SAFETY[i]` in `s` is
    /// reported (the first one found, again on the same state, or on a state where no
    /// property awaits a discovery); without it, every violation is.
    pub(crate) fn reports_violation(&self, i: usize, s: &StateOf<K>) -> bool {
        use std::hash::{Hash, Hasher};
        let Some(first) = &self.first else {
            return true;
        };
        // SipHash with fixed keys: the same fingerprint for the same state in every run.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        s.hash(&mut h);
        let fp = h.finish().max(1);
        // Relaxed: the record is only compared with itself; with one BFS thread there is no
        // race, and with more the first writer's state is the one reported.
        match first[i].compare_exchange(
            0,
            fp,
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
        ) {
            Ok(_) => true,
            Err(cur) => cur == fp || props::awaits_nothing(self, s),
        }
    }

    /// The `sometimes` properties of `props::REACHABILITY` (a bit each) that held in some state
    /// the checker explored with this model or a clone of it (the fused model only; the others
    /// report theirs as stateright discoveries).
    pub fn reached(&self) -> u8 {
        // Relaxed: read after the checker's threads are joined (the join orders their writes).
        self.reached.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The same model with the actions of each state offered in reverse, for stateright's
    /// depth-first checker. It explores the same states (the same successors of every state,
    /// so the same states, unique states and verdicts) in another order: stateright 0.31's DFS
    /// pushes the successors in the order of the actions and takes the last pushed first
    /// (dfs.rs:296-357, `pending.pop`), so in reverse it takes the stager's step first
    /// (`Config::enabled` offers it first) and the scheduler with the highest number before
    /// the others. The order matters for cost, not for what is found: every new state copies
    /// its whole action path, one index at a time (dfs.rs:346-350), so the work and the memory
    /// of a DFS grow with its depth, and taking the stager's step first keeps the depth low
    /// (`s2f2x1` on one thread: depth 239 instead of 3,361; `s3f2x2` with symmetry: 1,258
    /// instead of 11,232; docs/perf.md, "The order of the actions").
    pub fn for_dfs(self) -> BpModel<K> {
        BpModel {
            reversed: true,
            ..self
        }
    }

    /// The step `a` from `s` narrated in protocol words (one line per effect).
    pub fn narrate(&self, s: &StateOf<K>, a: Action) -> (StateOf<K>, Vec<String>) {
        let mut next = *s;
        let mut lines = Vec::new();
        self.cfg.apply(&mut next, a, &mut Some(&mut lines));
        (next, lines)
    }
}

impl<K: Caps> Model for BpModel<K> {
    type State = StateOf<K>;
    type Action = Action;

    fn init_states(&self) -> Vec<StateOf<K>> {
        vec![StateOf::initial(&self.cfg)]
    }

    fn actions(&self, state: &StateOf<K>, actions: &mut Vec<Action>) {
        self.cfg.enabled(state, actions);
        if self.reversed {
            actions.reverse();
        }
    }

    fn next_state(&self, last: &StateOf<K>, action: Action) -> Option<StateOf<K>> {
        let mut s = *last;
        self.cfg.apply(&mut s, action, &mut None);
        Some(s)
    }

    fn format_step(&self, last: &StateOf<K>, action: Action) -> Option<String> {
        Some(self.narrate(last, action).1.join("; "))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        props::properties(self)
    }
}

/// `(name, what it is, configuration)` for every named model. The names are what
/// `bpspec check --model` and `bpspec explore` accept.
pub fn named_models() -> Vec<(&'static str, &'static str, Config)> {
    use PatternKind::*;
    const L: u8 = bits::LOCAL;
    const C: u8 = bits::COUNT;
    const G: u8 = bits::GLOBAL;
    const M: u8 = bits::META;
    // `(schedulers, functions, sessions)` and the stager's script.
    let hits = |(s, f, n), script| Config::hits(s, f, n, script);
    let tp = StagerOp::tp;
    // Set (`on`) or remove the meta tracer (`meta`) or the session tracer.
    let tracer = |meta, on| StagerOp::SetTracer { meta, on };
    // A batch of the next `len` ops under batch-elide-idle.
    let batch = |len| StagerOp::batch(len, true);
    // Scripts that the pipeline-plan models (p2f2, p2f1x2h) run again.
    let s2f2x1 = vec![
        tp(0, 0b11, True, L),
        tp(0, 0b01, True, C),
        tp(0, 0b01, Pause, C),
        tp(0, 0b01, Restart, C),
        tp(0, 0b11, False, L | C),
    ];
    // Two sessions on f0 with the trace flag `fl`: session 0 adds, session 1 adds, session
    // `rm` removes (`s2f1x2`, `g2f1`: the tail; `s2f1x2h`: the head).
    let two_sessions = |fl, rm| {
        vec![
            tp(0, 0b1, True, fl),
            tp(1, 0b1, True, fl),
            tp(rm, 0b1, False, fl),
        ]
    };
    vec![
        (
            "tiny",
            "1 scheduler, 1 function, 1 session: add local, remove it (for quick runs and tests)",
            hits((1, 1, 1), vec![tp(0, 0b1, True, L), tp(0, 0b1, False, L)]),
        ),
        (
            "s2f2x1",
            "2 schedulers, 2 functions, 1 session: add local, update with call_count, pause, \
             restart, remove everything",
            hits((2, 2, 1), s2f2x1.clone()),
        ),
        (
            "s2f1x2",
            "2 schedulers, 1 function, 2 sessions: session 0 adds, session 1 adds, session 0 \
             removes (its node is unlinked while session 1's node still leads to it)",
            hits((2, 1, 2), two_sessions(L, 0)),
        ),
        (
            "s3f2x2",
            "3 schedulers, 2 functions, 2 sessions: session 0 adds on both, session 1 adds on \
             f0, session 0 removes both",
            hits(
                (3, 2, 2),
                vec![
                    tp(0, 0b11, True, L),
                    tp(1, 0b01, True, L),
                    tp(0, 0b11, False, L),
                ],
            ),
        ),
        (
            "s2f1x2h",
            "2 schedulers, 1 function, 2 sessions: session 0 adds, session 1 adds, session 1 \
             removes (the chain's head is unlinked while schedulers may stand on it and walk on)",
            hits((2, 1, 2), two_sessions(L, 1)),
        ),
        (
            "c2f1",
            "2 schedulers (scheduler 1 dirty), 1 function, 1 session, 2 call_time charges: \
             call_time on, trace_info(call_time), pause, trace_info(call_time)",
            collection_model(2),
        ),
        (
            "s4f1x1",
            "4 schedulers, 1 function, 1 session: add local with call_count, pause it, remove \
             everything (DFS with symmetry; the scheduler axis of docs/cutoff.md one size up)",
            hits(
                (4, 1, 1),
                vec![
                    tp(0, 0b1, True, L | C),
                    tp(0, 0b1, Pause, C),
                    tp(0, 0b1, False, L | C),
                ],
            ),
        ),
        (
            "s2f1x3",
            "2 schedulers, 1 function, 3 sessions: sessions 0, 1 and 2 add local, session 1 \
             removes (its node is unlinked from the middle of the chain)",
            hits(
                (2, 1, 3),
                vec![
                    tp(0, 0b1, True, L),
                    tp(1, 0b1, True, L),
                    tp(2, 0b1, True, L),
                    tp(1, 0b1, False, L),
                ],
            ),
        ),
        (
            "s2f3x1",
            "2 schedulers, 3 functions, 1 session: add local on all three, update f1 with \
             call_count, remove everything",
            hits(
                (2, 3, 1),
                vec![
                    tp(0, 0b111, True, L),
                    tp(0, 0b010, True, C),
                    tp(0, 0b111, False, L | C),
                ],
            ),
        ),
        (
            "c2f1c3",
            "c2f1 with 3 call_time charges (a scheduler charges twice)",
            Config {
                charges: 3,
                ..collection_model(2)
            },
        ),
        (
            "c3f1d2",
            "c3f1 with schedulers 1 and 2 dirty (two chargers share the dirty lock)",
            Config {
                dirty: 0b110,
                ..collection_model(3)
            },
        ),
        (
            "c3f1",
            "3 schedulers (scheduler 2 dirty), 1 function, 1 session, 3 call_time charges: \
             call_time on, trace_info(call_time), pause, trace_info(call_time) (make check)",
            collection_model(3),
        ),
        (
            "t2f1",
            "2 schedulers, 1 function, 1 session, 1 call_time charge walking the slot: \
             call_time on, remove, on again",
            reader_model(2, 1, 1, reader_script_one_session(false)),
        ),
        (
            "t2f1p",
            "2 schedulers, 1 function, 1 session, 1 call_time charge walking the slot: \
             call_time on, pause, restart, remove, on again",
            reader_model(2, 1, 1, reader_script_one_session(true)),
        ),
        (
            "t2f1x2",
            "2 schedulers, 1 function, 2 sessions, 1 call_time charge walking the slot: session \
             0 call_time on, session 1 local on, session 0 removes call_time",
            reader_model(2, 2, 1, reader_script_two_sessions(false)),
        ),
        (
            "t2f1x2r",
            "2 schedulers, 1 function, 2 sessions, 1 call_time charge walking the slot: session \
             0 call_time on, session 1 local on, session 0 restart, remove, on again (make check)",
            reader_model(2, 2, 1, reader_script_two_sessions(true)),
        ),
        (
            "t2f1pc2",
            "t2f1p with 2 call_time charges (make check)",
            reader_model(2, 1, 2, reader_script_one_session(true)),
        ),
        (
            "g2f1",
            "2 schedulers, 1 export entry, 2 sessions: session 0 sets global trace, session 1 \
             sets global trace, session 0 removes it (the export entry's chain: the same six \
             steps on the entry's dispatch word and slot)",
            hits((2, 1, 2), two_sessions(G, 0)),
        ),
        (
            "m2f1",
            "2 schedulers, 1 function, 1 session: meta trace on (with a tracer cell), replace \
             the meta tracer twice while hits send through it and may answer remove",
            hits(
                (2, 1, 1),
                vec![tp(0, 0b1, True, M), tracer(true, true), tracer(true, true)],
            ),
        ),
        (
            "st2f1",
            "2 schedulers, 1 function, 1 session: local trace on, then set the session tracer \
             (there was none), replace it, remove it, while hits send through it",
            hits(
                (2, 1, 1),
                vec![
                    tp(0, 0b1, True, L),
                    tracer(false, true),
                    tracer(false, true),
                    tracer(false, false),
                ],
            ),
        ),
        (
            "b2f2",
            "2 schedulers, 2 functions, 1 session, batches under batch-elide-idle: [local on f0, \
             call_count on f1] (fresh nodes, idle: 3 waits), [call_count on f0, pause f1, local \
             on f1 set and cleared again in the same batch] (idle: 3 waits), [remove local \
             from f0, remove call_count from both] (unlinks: 4 waits)",
            hits((2, 2, 1), batch_script_hits(true)),
        ),
        (
            "b2f2b",
            "b2f2 under the batch plan (every batch 5 waits, 4 for the removal)",
            hits((2, 2, 1), batch_script_hits(false)),
        ),
        (
            "bt2f1",
            "2 schedulers, 1 function, 1 session, 1 call_time charge walking the slot, batches \
             under batch-elide-idle: [call_time on, local on], [pause], [restart] (each idle: \
             the restarted counter is dropped at consolidate behind W2 alone), [remove \
             call_time, remove local] (unlinks), [call_time on again]",
            reader_model(2, 1, 1, batch_script_timem()),
        ),
        (
            "bc2f1",
            "c2f1 with its trace_pattern calls as batches under batch-elide-idle: [call_time \
             on], trace_info(call_time), [pause] (idle: 3 waits), trace_info(call_time)",
            Config {
                script: batch_script_collect(),
                ..collection_model(2)
            },
        ),
        (
            "b2f1x2",
            "2 schedulers, 1 function, 2 sessions, batches under batch-elide-idle: session 0 \
             local on, session 1 [local on, call_count on] (pending to_insert, idle), session \
             1 [remove both] (the head is unlinked while schedulers stand on it)",
            hits(
                (2, 1, 2),
                [
                    vec![tp(0, 0b1, True, L)],
                    batched(
                        true,
                        &[
                            &[tp(1, 0b1, True, L), tp(1, 0b1, True, C)],
                            &[tp(1, 0b1, False, L), tp(1, 0b1, False, C)],
                        ],
                    ),
                ]
                .concat(),
            ),
        ),
        (
            "bm2f1",
            "2 schedulers, 1 function, 1 session: meta trace on (with a tracer cell), then a \
             batch under batch-elide-idle [call_count on] updates the meta node (idle: 3 waits) \
             while hits send through the meta tracer and may answer remove, then the meta \
             tracer is replaced",
            hits(
                (2, 1, 1),
                vec![
                    tp(0, 0b1, True, M),
                    batch(1),
                    tp(0, 0b1, True, C),
                    tracer(true, true),
                ],
            ),
        ),
        (
            "p2f2",
            "s2f2x1 under the pipeline plan: no W4, the unlinked nodes freed after the next \
             call's first wait",
            Config {
                pipeline: true,
                ..hits((2, 2, 1), s2f2x1)
            },
        ),
        (
            "pt2f1",
            "t2f1 under the pipeline plan (call_time on, remove, on again: the removed node \
             is freed after the third call's W0 while a charge may walk the slot)",
            Config {
                pipeline: true,
                ..reader_model(2, 1, 1, reader_script_one_session(false))
            },
        ),
        (
            "p2f1x2h",
            "s2f1x2h under the pipeline plan, with session 0 removing its node after \
             (the head unlinked by one call is freed after the next call's W1 while \
             schedulers may stand on it)",
            Config {
                pipeline: true,
                ..hits(
                    (2, 1, 2),
                    [two_sessions(L, 1), vec![tp(0, 0b1, False, L)]].concat(),
                )
            },
        ),
    ]
}

/// The script of `batches`, each a list of `trace_pattern` calls in one session: per batch its
/// `StagerOp::Batch` (under `batch-elide-idle` if `elide`, else `batch`), then its calls.
fn batched(elide: bool, batches: &[&[StagerOp]]) -> Vec<StagerOp> {
    let mut v = Vec::new();
    for calls in batches {
        let len = u8::try_from(calls.len()).expect("a batch of at most 255 calls");
        v.push(StagerOp::batch(len, elide));
        v.extend_from_slice(calls);
    }
    v
}

/// The hit-path batch script (`b2f2`, `b2f2b`), one batch a line, under `batch-elide-idle`
/// (`elide`) or `batch`.
#[rustfmt::skip]
fn batch_script_hits(elide: bool) -> Vec<StagerOp> {
    use PatternKind::*;
    use StagerOp as Op;
    const L: u8 = bits::LOCAL;
    const C: u8 = bits::COUNT;
    batched(elide, &[
        &[Op::tp(0, 0b01, True, L), Op::tp(0, 0b10, True, C)],
        &[Op::tp(0, 0b01, True, C), Op::tp(0, 0b10, Pause, C), Op::tp(0, 0b10, True, L), Op::tp(0, 0b10, False, L)],
        &[Op::tp(0, 0b01, False, L), Op::tp(0, 0b11, False, C)],
    ])
}

/// The call_time reader batch script (`bt2f1`), one batch a line, every batch under
/// `batch-elide-idle`.
#[rustfmt::skip]
fn batch_script_timem() -> Vec<StagerOp> {
    use PatternKind::*;
    use StagerOp as Op;
    const T: u8 = bits::TIME;
    const L: u8 = bits::LOCAL;
    batched(true, &[
        &[Op::tp(0, 0b1, True, T), Op::tp(0, 0b1, True, L)],
        &[Op::tp(0, 0b1, Pause, T)],
        &[Op::tp(0, 0b1, Restart, T)],
        &[Op::tp(0, 0b1, False, T), Op::tp(0, 0b1, False, L)],
        &[Op::tp(0, 0b1, True, T)],
    ])
}

/// The collection batch script (`bc2f1`): `collection_model`'s with its trace_pattern calls as
/// batches of one under `batch-elide-idle`.
fn batch_script_collect() -> Vec<StagerOp> {
    use PatternKind::*;
    const T: u8 = bits::TIME;
    let b = StagerOp::batch(1, true);
    let collect = StagerOp::Collect {
        session: 0,
        func: 0,
    };
    vec![
        b,
        StagerOp::tp(0, 0b1, True, T),
        collect,
        b,
        StagerOp::tp(0, 0b1, Pause, T),
        collect,
    ]
}

/// A call_time reader model: `schedulers` schedulers that call the functions and make up to
/// `charges` call_time charges (returns, exceptions, schedule-outs: each walks f0's slot), one
/// function, `sessions` sessions, and `script`.
fn reader_model(schedulers: u8, sessions: u8, charges: u8, script: Vec<StagerOp>) -> Config {
    Config {
        charges,
        ..Config::hits(schedulers, 1, sessions, script)
    }
}

/// call_time in session 0 on f0: on, (`full`: pause, restart,) remove, on again (a fresh node
/// into the empty slot of a function whose call_time readers still run).
fn reader_script_one_session(full: bool) -> Vec<StagerOp> {
    use PatternKind::*;
    const T: u8 = bits::TIME;
    let mut v = vec![StagerOp::tp(0, 0b1, True, T)];
    if full {
        v.push(StagerOp::tp(0, 0b1, Pause, T));
        v.push(StagerOp::tp(0, 0b1, Restart, T));
    }
    v.push(StagerOp::tp(0, 0b1, False, T));
    v.push(StagerOp::tp(0, 0b1, True, T));
    v
}

/// Two sessions on f0: session 0 call_time on, session 1 local trace on (its node becomes the
/// head), session 0 removes call_time (its node, the tail, is unlinked while the reader walks
/// past session 1's node to reach it); `full`: session 0 restarts first and sets call_time
/// again after (a fresh node pending behind the head).
fn reader_script_two_sessions(full: bool) -> Vec<StagerOp> {
    use PatternKind::*;
    const T: u8 = bits::TIME;
    const L: u8 = bits::LOCAL;
    let mut v = vec![StagerOp::tp(0, 0b1, True, T), StagerOp::tp(1, 0b1, True, L)];
    if full {
        v.push(StagerOp::tp(0, 0b1, Restart, T));
    }
    v.push(StagerOp::tp(0, 0b1, False, T));
    if full {
        v.push(StagerOp::tp(0, 0b1, True, T));
    }
    v
}

/// A collection model: `schedulers` schedulers, the last one dirty, one charge each, no calls;
/// the stager turns call_time on in session 0 for f0, collects, pauses, collects.
fn collection_model(schedulers: u8) -> Config {
    use PatternKind::*;
    const T: u8 = bits::TIME;
    let collect = StagerOp::Collect {
        session: 0,
        func: 0,
    };
    Config {
        schedulers,
        functions: 1,
        sessions: 1,
        script: vec![
            StagerOp::tp(0, 0b1, True, T),
            collect,
            StagerOp::tp(0, 0b1, Pause, T),
            collect,
        ],
        mutant: None,
        charges: schedulers,
        dirty: 1 << (schedulers - 1),
        calls: false,
        pipeline: false,
    }
}

/// Look up a named model.
pub fn model_config(name: &str) -> Option<Config> {
    named_models()
        .into_iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, c)| c)
}
