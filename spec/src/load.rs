//! A small stateright model of loading a traced module (docs/nonblocking-load.md §8): the code
//! index, the export entry's two addresses, two versions of module `m` with their breakpoints,
//! one scheduler making calls between progress points, and the loader running one load and one
//! purge under either protocol. Every step is atomic and sequentially consistent (the orderings
//! code-ix-commit / code-ix-load are loom's business, `models/tests/load_loom.rs`); what it
//! checks exhaustively is the order of the steps and the waits.
//!
//! Properties: `no-mix` (a call never runs a version whose patterns are promised without its
//! breakpoint), `no-use-after-free` (a call never enters a freed version). Reachability:
//! `calls-new-version`. Mutants: [`LoadSpecMutant`], each killed (spec/tests/spec_load.rs).

use bpspec_reference::LoadProtocol;
use stateright::{Model, Property};

/// A broken variant of the loader (the engine mutants of the same names, `Mutant::LOAD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoadSpecMutant {
    /// `load-commit-before-breakpoints`.
    CommitBeforeBreakpoints,
    /// `load-skip-lw1-after-commit`.
    SkipWaitAfterCommit,
    /// `load-blocking-without-block`.
    BlockingWithoutBlock,
}

impl LoadSpecMutant {
    pub const ALL: [LoadSpecMutant; 3] = [
        LoadSpecMutant::CommitBeforeBreakpoints,
        LoadSpecMutant::SkipWaitAfterCommit,
        LoadSpecMutant::BlockingWithoutBlock,
    ];
    pub fn name(self) -> &'static str {
        match self {
            LoadSpecMutant::CommitBeforeBreakpoints => "load-commit-before-breakpoints",
            LoadSpecMutant::SkipWaitAfterCommit => "load-skip-lw1-after-commit",
            LoadSpecMutant::BlockingWithoutBlock => "load-blocking-without-block",
        }
    }
    /// The protocol the mutant breaks.
    pub fn protocol(self) -> LoadProtocol {
        match self {
            LoadSpecMutant::BlockingWithoutBlock => LoadProtocol::Blocking,
            _ => LoadProtocol::NonBlocking,
        }
    }
    /// The property that kills it.
    pub fn killed_by(self) -> &'static str {
        match self {
            LoadSpecMutant::CommitBeforeBreakpoints => "no-mix",
            _ => "no-use-after-free",
        }
    }
}

/// One version of `m` (index 1 and 2; 0 is `undef`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ver {
    pub bp: bool,
    pub promised: bool,
    pub freed: bool,
}

/// Where the scheduler is in a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sched {
    Idle,
    /// Read the code index.
    HasIx(u8),
    /// Read the export address: inside this version.
    HasVer(u8),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LState {
    pub ix: u8,
    pub addr: [u8; 2],
    pub ver: [Ver; 3],
    pub loader: u8,
    pub blocked: bool,
    /// A wait is open and the scheduler has passed a progress point (or slept) since it began.
    pub wait_open: bool,
    pub passed: bool,
    pub sched: Sched,
    pub calls_left: u8,
    pub mix: bool,
    pub uaf: bool,
    pub ran_v2: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LAction {
    Loader(u8),
    ReadIx,
    ReadAddr,
    Run,
    Progress,
}

/// The model: `calls` calls by one scheduler against one load and one purge.
#[derive(Clone, Debug)]
pub struct LoadModel {
    pub protocol: LoadProtocol,
    pub mutant: Option<LoadSpecMutant>,
    pub calls: u8,
}

impl LoadModel {
    fn is(&self, m: LoadSpecMutant) -> bool {
        self.mutant == Some(m)
    }
    fn loader_steps(&self) -> u8 {
        match self.protocol {
            LoadProtocol::NonBlocking => 8,
            LoadProtocol::Blocking => 7,
        }
    }
    fn asleep(s: &LState) -> bool {
        s.sched == Sched::Idle && s.calls_left == 0
    }
    /// Can the loader take step `pc` now?
    fn loader_enabled(&self, s: &LState) -> bool {
        let pc = s.loader;
        match self.protocol {
            LoadProtocol::NonBlocking => match pc {
                5 => self.is(LoadSpecMutant::SkipWaitAfterCommit) || s.passed,
                _ => true,
            },
            LoadProtocol::Blocking => match pc {
                0 => self.is(LoadSpecMutant::BlockingWithoutBlock) || s.sched == Sched::Idle,
                _ => true,
            },
        }
    }
    fn loader_step(&self, s: &mut LState) {
        let staging = (s.ix ^ 1) as usize;
        match self.protocol {
            LoadProtocol::NonBlocking => match s.loader {
                // L1: the new version with its breakpoints and its promise.
                0 => {
                    s.ver[2] = Ver {
                        bp: !self.is(LoadSpecMutant::CommitBeforeBreakpoints),
                        promised: true,
                        freed: false,
                    }
                }
                // L2: the staging export address.
                1 => s.addr[staging] = 2,
                // L3: commit.
                2 => s.ix ^= 1,
                // The mutant's late install (a no-op otherwise).
                3 => s.ver[2].bp = true,
                // LW1 begins: a sleeping scheduler has passed already.
                4 => {
                    s.wait_open = true;
                    s.passed = Self::asleep(s);
                }
                // LW1 ends.
                5 => s.wait_open = false,
                // L4: the old version's breakpoints go.
                6 => {
                    s.ver[1].promised = false;
                    s.ver[1].bp = false;
                }
                // L5: purge.
                7 => s.ver[1].freed = true,
                _ => unreachable!(),
            },
            LoadProtocol::Blocking => match s.loader {
                0 => s.blocked = !self.is(LoadSpecMutant::BlockingWithoutBlock),
                1 => {
                    s.ver[1].promised = false;
                    s.ver[1].bp = false;
                }
                2 => {
                    s.ver[2] = Ver {
                        bp: true,
                        promised: true,
                        freed: false,
                    }
                }
                3 => s.addr[staging] = 2,
                4 => s.ix ^= 1,
                5 => s.ver[1].freed = true,
                6 => s.blocked = false,
                _ => unreachable!(),
            },
        }
        s.loader += 1;
    }
}

impl Model for LoadModel {
    type State = LState;
    type Action = LAction;

    fn init_states(&self) -> Vec<LState> {
        vec![LState {
            ix: 0,
            addr: [1, 1],
            ver: [
                Ver::default(),
                Ver {
                    bp: true,
                    promised: true,
                    freed: false,
                },
                Ver::default(),
            ],
            loader: 0,
            blocked: false,
            wait_open: false,
            passed: false,
            sched: Sched::Idle,
            calls_left: self.calls,
            mix: false,
            uaf: false,
            ran_v2: false,
        }]
    }

    fn actions(&self, s: &LState, out: &mut Vec<LAction>) {
        if s.mix || s.uaf {
            return; // a violation ends the run
        }
        if s.loader < self.loader_steps() && self.loader_enabled(s) {
            out.push(LAction::Loader(s.loader));
        }
        match s.sched {
            Sched::Idle => {
                if s.calls_left > 0 && !s.blocked {
                    out.push(LAction::ReadIx);
                }
                if s.wait_open && !s.passed {
                    out.push(LAction::Progress);
                }
            }
            Sched::HasIx(_) => out.push(LAction::ReadAddr),
            Sched::HasVer(_) => out.push(LAction::Run),
        }
    }

    fn next_state(&self, s: &LState, a: LAction) -> Option<LState> {
        let mut n = s.clone();
        match a {
            LAction::Loader(_) => self.loader_step(&mut n),
            LAction::ReadIx => n.sched = Sched::HasIx(s.ix),
            LAction::ReadAddr => {
                let Sched::HasIx(i) = s.sched else {
                    unreachable!()
                };
                let v = s.addr[i as usize];
                if v == 0 {
                    n.sched = Sched::Idle;
                    n.calls_left -= 1;
                } else {
                    n.sched = Sched::HasVer(v);
                }
            }
            LAction::Run => {
                let Sched::HasVer(v) = s.sched else {
                    unreachable!()
                };
                let ver = s.ver[v as usize];
                n.uaf |= ver.freed;
                n.mix |= ver.promised && !ver.bp;
                n.ran_v2 |= v == 2;
                n.sched = Sched::Idle;
                n.calls_left -= 1;
                if n.wait_open && n.calls_left == 0 {
                    n.passed = true; // going to sleep
                }
            }
            LAction::Progress => n.passed = true,
        }
        Some(n)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("no-mix", |_, s: &LState| !s.mix),
            Property::always("no-use-after-free", |_, s: &LState| !s.uaf),
            Property::sometimes("calls-new-version", |_, s: &LState| s.ran_v2),
        ]
    }
}

/// The outcome of one exhaustive run of a [`LoadModel`].
#[derive(Clone, Debug)]
pub struct LoadRun {
    /// The safety properties violated (in the order of [`LoadModel::properties`]).
    pub violated: Vec<&'static str>,
    /// Whether a call reached the new version (`calls-new-version`).
    pub reached: bool,
    pub states: usize,
    pub unique: usize,
    pub depth: usize,
    pub secs: f64,
}

impl LoadModel {
    /// The model's name in results rows and shard keys: `load-blocking` / `load-nonblocking`.
    pub fn name(&self) -> String {
        format!("load-{}", self.protocol.name())
    }

    /// Check the model exhaustively (BFS, one thread).
    pub fn check_all(&self) -> LoadRun {
        use stateright::Checker;
        let t = std::time::Instant::now();
        let c = self.clone().checker().spawn_bfs().join();
        LoadRun {
            violated: ["no-mix", "no-use-after-free"]
                .into_iter()
                .filter(|p| c.discovery(p).is_some())
                .collect(),
            reached: c.discovery("calls-new-version").is_some(),
            states: c.state_count(),
            unique: c.unique_state_count(),
            depth: c.max_depth(),
            secs: t.elapsed().as_secs_f64(),
        }
    }
}
