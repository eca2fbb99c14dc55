//! A small stateright model of loading a traced module (docs/nonblocking-load.md §8): the code
//! index, the export entry's two addresses, two versions of module `m` with their breakpoints,
//! one scheduler making calls between progress points (its process may stay in the version of a
//! call and make local calls into it, old code after the load), and the loader running one load
//! (with the old version's breakpoints removed behind a wait) and one soft purge (refused while
//! the process is in the old version, then a wait, then the free) under either protocol. Every step is atomic and sequentially consistent (the orderings
//! code-ix-commit / code-ix-load are loom's business, `models/tests/load_loom.rs`); what it
//! checks exhaustively is the order of the steps and the waits.
//!
//! Properties: `no-mix` (a call never runs a version whose patterns are promised without its
//! breakpoint), `no-use-after-free` (a call never enters a freed version or touches a freed
//! breakpoint node). Reachability: `calls-new-version`, `local-call-in-old-code`. Mutants: [`LoadSpecMutant`], each killed (spec/tests/spec_load.rs).

use bpspec_reference::LoadProtocol;
use stateright::{Model, Property};

/// A broken variant of the loader (the engine mutants of the same names, `Mutant::LOAD`;
/// `load-purge-skip-wait` is not here: with atomic, sequentially consistent steps a return is
/// never unordered with the free after it, so only loom sees that one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoadSpecMutant {
    /// `load-commit-before-breakpoints`.
    CommitBeforeBreakpoints,
    /// `load-skip-lw1-after-commit`.
    SkipWaitAfterCommit,
    /// `load-blocking-without-block`.
    BlockingWithoutBlock,
    /// `load-clear-old-at-once`.
    ClearOldAtOnce,
    /// `load-purge-skip-check`.
    PurgeSkipCheck,
}

impl LoadSpecMutant {
    pub const ALL: [LoadSpecMutant; 5] = [
        LoadSpecMutant::CommitBeforeBreakpoints,
        LoadSpecMutant::SkipWaitAfterCommit,
        LoadSpecMutant::BlockingWithoutBlock,
        LoadSpecMutant::ClearOldAtOnce,
        LoadSpecMutant::PurgeSkipCheck,
    ];
    pub fn name(self) -> &'static str {
        match self {
            LoadSpecMutant::CommitBeforeBreakpoints => "load-commit-before-breakpoints",
            LoadSpecMutant::SkipWaitAfterCommit => "load-skip-lw1-after-commit",
            LoadSpecMutant::BlockingWithoutBlock => "load-blocking-without-block",
            LoadSpecMutant::ClearOldAtOnce => "load-clear-old-at-once",
            LoadSpecMutant::PurgeSkipCheck => "load-purge-skip-check",
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
    /// Patched: its functions start with the breakpoint instruction.
    pub bp: bool,
    pub promised: bool,
    pub freed: bool,
    /// Its breakpoint node was freed.
    pub node_freed: bool,
}

/// Where the scheduler is in a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sched {
    Idle,
    /// Read the code index.
    HasIx(u8),
    /// Read the export address: inside this version.
    HasVer(u8),
    /// A local call into the version the process is in: read its first instruction (patched
    /// or not), about to run it (and its breakpoint node if patched).
    Local(u8, bool),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LState {
    /// The module is traced (version 1 loaded with call_count; the load sets the same pattern).
    pub traced: bool,
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
    /// The version the scheduler's process executes in across progress points (0: none);
    /// purge's `check_process_code` reads it.
    pub held: u8,
    /// The process may still stay in the version of one remote call.
    pub may_stay: bool,
    pub locals_left: u8,
    pub mix: bool,
    pub uaf: bool,
    pub ran_v2: bool,
    /// A local call ran version 1 after the commit (the process was in old code).
    pub ran_old_local: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LAction {
    Loader(u8),
    ReadIx,
    ReadAddr,
    Run,
    /// Run, and the process stays in the version.
    RunStay,
    LocalRead,
    LocalRun,
    Return,
    Progress,
}

/// Local calls the process makes from the version it stays in.
pub const LOCALS: u8 = 2;

/// The model: `calls` remote calls by one scheduler (the first of which may leave its process in
/// the version, for `LOCALS` local calls and a return) against one load and one purge, with
/// version 1 traced or not (two initial states).
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
            LoadProtocol::NonBlocking => 15,
            LoadProtocol::Blocking => 7,
        }
    }
    fn asleep(s: &LState) -> bool {
        s.sched == Sched::Idle && s.calls_left == 0 && (s.held == 0 || s.locals_left == 0)
    }
    /// Can the loader take step `pc` now?
    fn loader_enabled(&self, s: &LState) -> bool {
        let pc = s.loader;
        match self.protocol {
            LoadProtocol::NonBlocking => match pc {
                5 => self.is(LoadSpecMutant::SkipWaitAfterCommit) || s.passed,
                9 => self.is(LoadSpecMutant::ClearOldAtOnce) || s.passed,
                // PW: the purge's grace period (its mutant is loom's, see LoadSpecMutant).
                13 => s.passed,
                _ => true,
            },
            LoadProtocol::Blocking => match pc {
                0 => {
                    self.is(LoadSpecMutant::BlockingWithoutBlock) || matches!(s.sched, Sched::Idle)
                }
                _ => true,
            },
        }
    }
    fn wait_begin(s: &mut LState) {
        s.wait_open = true;
        s.passed = Self::asleep(s);
    }
    /// check_process_code: is a process in version 1? (The mutant does not look.)
    fn purge_refused(&self, s: &LState) -> bool {
        s.held == 1 && !self.is(LoadSpecMutant::PurgeSkipCheck)
    }
    fn loader_step(&self, s: &mut LState) {
        let staging = (s.ix ^ 1) as usize;
        match self.protocol {
            LoadProtocol::NonBlocking => match s.loader {
                // L1: the new version with its breakpoints and its promise.
                0 => {
                    s.ver[2] = Ver {
                        bp: s.traced && !self.is(LoadSpecMutant::CommitBeforeBreakpoints),
                        promised: s.traced,
                        ..Ver::default()
                    }
                }
                // L2: the staging export address.
                1 => s.addr[staging] = 2,
                // L3: commit.
                2 => s.ix ^= 1,
                // The mutant's late install (a no-op otherwise).
                3 => s.ver[2].bp = s.traced,
                // LW1 begins: a sleeping scheduler has passed already.
                4 => Self::wait_begin(s),
                // LW1 ends.
                5 => s.wait_open = false,
                // L4, the old version's breakpoints removed as by trace_pattern(false): stage
                // (promise withdrawn); W1, commit and W2 order flags that are sequentially
                // consistent here and are not modelled.
                6 => {
                    if !s.ver[1].bp && !s.ver[1].promised {
                        // Untraced: nothing to remove, no wait (as `remove_old_breakpoints`).
                        s.loader = 11;
                        return;
                    }
                    s.ver[1].promised = false;
                    if self.is(LoadSpecMutant::ClearOldAtOnce) {
                        s.ver[1].bp = false;
                        s.ver[1].node_freed = true;
                    }
                }
                // Uninstall.
                7 => s.ver[1].bp = false,
                // W3/W4 (one wait here): every local call that read the patched instruction
                // has finished with the node.
                8 => Self::wait_begin(s),
                9 => s.wait_open = false,
                // Free the node.
                10 => s.ver[1].node_freed = true,
                // L5, purge: check_process_code, refuse (soft purge) if the process is in it.
                11 => {
                    if self.purge_refused(s) {
                        s.loader = self.loader_steps();
                        return;
                    }
                }
                // PW, then free.
                12 => Self::wait_begin(s),
                13 => s.wait_open = false,
                14 => s.ver[1].freed = true,
                _ => unreachable!(),
            },
            LoadProtocol::Blocking => match s.loader {
                0 => s.blocked = !self.is(LoadSpecMutant::BlockingWithoutBlock),
                1 => {
                    s.ver[1].promised = false;
                    s.ver[1].bp = false;
                    s.ver[1].node_freed = true;
                }
                2 => {
                    s.ver[2] = Ver {
                        bp: s.traced,
                        promised: s.traced,
                        ..Ver::default()
                    }
                }
                3 => s.addr[staging] = 2,
                4 => s.ix ^= 1,
                5 => s.ver[1].freed = !self.purge_refused(s),
                6 => s.blocked = false,
                _ => unreachable!(),
            },
        }
        s.loader += 1;
    }
    /// A scheduler step that ends idle: if a wait is open and the scheduler now sleeps, it has
    /// passed.
    fn settle(s: &mut LState) {
        if s.wait_open && Self::asleep(s) {
            s.passed = true; // going to sleep
        }
    }
}

impl Model for LoadModel {
    type State = LState;
    type Action = LAction;

    fn init_states(&self) -> Vec<LState> {
        [true, false]
            .into_iter()
            .map(|traced| LState {
                traced,
                ix: 0,
                addr: [1, 1],
                ver: [
                    Ver::default(),
                    Ver {
                        bp: traced,
                        promised: traced,
                        ..Ver::default()
                    },
                    Ver::default(),
                ],
                loader: 0,
                blocked: false,
                wait_open: false,
                passed: false,
                sched: Sched::Idle,
                calls_left: self.calls,
                held: 0,
                may_stay: true,
                locals_left: LOCALS,
                mix: false,
                uaf: false,
                ran_v2: false,
                ran_old_local: false,
            })
            .collect()
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
                if s.held != 0 && s.locals_left > 0 && !s.blocked {
                    out.push(LAction::LocalRead);
                }
                if s.held != 0 && !s.blocked {
                    out.push(LAction::Return);
                }
                if s.wait_open && !s.passed {
                    out.push(LAction::Progress);
                }
            }
            Sched::HasIx(_) => out.push(LAction::ReadAddr),
            Sched::HasVer(_) => {
                out.push(LAction::Run);
                if s.may_stay && s.held == 0 {
                    out.push(LAction::RunStay);
                }
            }
            Sched::Local(..) => out.push(LAction::LocalRun),
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
                    Self::settle(&mut n);
                } else {
                    n.sched = Sched::HasVer(v);
                }
            }
            LAction::Run | LAction::RunStay => {
                let Sched::HasVer(v) = s.sched else {
                    unreachable!()
                };
                let ver = s.ver[v as usize];
                n.uaf |= ver.freed || (ver.bp && ver.node_freed);
                n.mix |= ver.promised && !ver.bp;
                n.ran_v2 |= v == 2;
                n.sched = Sched::Idle;
                n.calls_left -= 1;
                if a == LAction::RunStay {
                    n.held = v;
                    n.may_stay = false;
                }
                Self::settle(&mut n);
            }
            LAction::LocalRead => {
                let ver = s.ver[s.held as usize];
                n.uaf |= ver.freed;
                n.sched = Sched::Local(s.held, ver.bp);
            }
            LAction::LocalRun => {
                let Sched::Local(v, patched) = s.sched else {
                    unreachable!()
                };
                let ver = s.ver[v as usize];
                n.uaf |= ver.freed || (patched && ver.node_freed);
                n.mix |= ver.promised && !patched;
                n.ran_old_local |= v == 1 && s.loader > 2;
                n.sched = Sched::Idle;
                n.locals_left -= 1;
                Self::settle(&mut n);
            }
            LAction::Return => {
                n.held = 0;
                Self::settle(&mut n);
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
            Property::sometimes("local-call-in-old-code", |_, s: &LState| s.ran_old_local),
        ]
    }
}

/// The outcome of one exhaustive run of a [`LoadModel`].
#[derive(Clone, Debug)]
pub struct LoadRun {
    /// The safety properties violated (in the order of [`LoadModel::properties`]).
    pub violated: Vec<&'static str>,
    /// Whether a call reached the new version (`calls-new-version`) and a local call ran the old
    /// one after the commit (`local-call-in-old-code`).
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
        let m = self.clone();
        let c =
            bpspec_reference::watchdog::guard(&format!("stateright {}", self.name()), move || {
                m.checker().spawn_bfs().join()
            });
        LoadRun {
            violated: ["no-mix", "no-use-after-free"]
                .into_iter()
                .filter(|p| c.discovery(p).is_some())
                .collect(),
            reached: c.discovery("calls-new-version").is_some()
                && c.discovery("local-call-in-old-code").is_some(),
            states: c.state_count(),
            unique: c.unique_state_count(),
            depth: c.max_depth(),
            secs: t.elapsed().as_secs_f64(),
        }
    }
}
