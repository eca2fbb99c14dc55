//! A small stateright model of loading a traced module (docs/nonblocking-load.md §8): the code
//! index, the export entry's addresses (one per code index), the versions of module `m` with their
//! breakpoints, schedulers making calls between progress points (each scheduler's process may
//! stay in the version of a call and make local calls into it, old code after a load), and the
//! loader running one or more loads, each followed by the removal of the old version's
//! breakpoints behind a wait and by a purge of the old version, under either protocol. Every step
//! is atomic and sequentially consistent (the orderings code-ix-commit / code-ix-load are loom's
//! business, `models/tests/load_loom.rs`); what it checks exhaustively is the order of the steps
//! and the waits.
//!
//! Switches on the one model ([`LoadModel`]):
//! - [`CodeIx`]: `Two` (bpspec's engine, `code_ix.rs`: two indices and LW1, a wait for thread
//!   progress after each commit before the old active slot is staged again; the purge checks,
//!   then waits (PW), then frees) or `Three` (ERTS, `code_ix.c` with `ERTS_NUM_CODE_IX` 3: the
//!   wait sits between the end of staging and the commit, the code barrier of
//!   `staging_epilogue`, and there is no wait after the commit, so the next staging may begin
//!   before every scheduler has seen the last commit; the purge waits first, as
//!   `erts_internal:purge_module(M, prepare)` does, then checks, then frees).
//! - [`PurgeKind`]: `Soft` (`code:soft_purge/1`: refused while a process is in the old version)
//!   or `Kill` (`code:purge/1`: such processes are sent a kill and the purger waits for them to
//!   exit, their frames dropped without returning, before the free).
//! - `call_time`: the module is traced with call_time as well; a process that stays in a
//!   version after running a patched function is charged at schedule-out (a read of that
//!   function's slot, whatever its instruction says, then a write to the node), until it
//!   returns or is killed (its call_time state discarded uncharged).
//!   The state is also charged at return and at the next hit of a patched function (ERTS's
//!   three charge points: `erts_schedule_time_break`, `erts_call_trace_return`,
//!   `erts_trace_call_acc`).
//! - `sessions` (1 or 2): each traced version's slot chains a node per session; with 2 the
//!   load links both sessions' nodes, and the second session is destroyed (unlink, grace
//!   period, free) after the first load that makes a version old.
//! - `tail_calls` (with `call_time`): a process may tail-call out of the version it stays in,
//!   its call_time state still naming the function it left; `check_pbt`: the purge's
//!   `check_process_code` also finds such a process (ERTS's does not).
//! - [`TracedLoad`]: `Carry` (bpspec's: the new version carries the patterns, the old version's
//!   breakpoints are removed behind a wait) or `ClearErts` (ERTS's `finish_loading_1`: thread
//!   progress blocked, the current version's breakpoints and its export breakpoint cleared and
//!   freed, the new version staged and committed under the block with no pattern).
//! - `meta`: a traced version's node holds a meta tracer cell, read by a local call as its own
//!   step and freed with the node; `global`: the exported function has an export breakpoint (a
//!   trampoline per code index, one continuation for all of them).
//! - `refine_cl1`: check `refines-cl1` (no breakpoint hit after a load's commit: the sequential
//!   oracle's CL1, `spec/src/code.rs`).
//! - `procs` (1 to 3 processes per scheduler): with 2 or 3, each scheduler also has one or two
//!   processes switched out, each with its own stay in a version, call_time state and return
//!   trace frame, switched in and out by process switches (not thread progress points) that
//!   rotate through them (the engine's `Scheduler::switch_proc`: the first switched-out process
//!   in, the running one out last); the purge's check finds a switched-out process too, and its
//!   kill is handled at its switch-in, before it runs.
//! - `any_switch_in` (`procs` 2 or 3): a process switch may bring in any switched-out process
//!   of its scheduler, not only the first ([`LAction::SwitchIn`]); a superset of the rotation's
//!   paths, whose switched-out processes [`LState::representative`] sorts (docs/cutoff.md §8).
//! - `funcs` (1 or 2 functions): with 2, each function has its own pattern and promise bit
//!   and the active half's pattern per function, a call calls one of them, and the stager runs
//!   a `trace_pattern` on function 0 alone (set or cleared) before the load and after its
//!   removal: withdraw the promise of a function losing its last pattern, patch, flip, W2,
//!   make the promise, unpatch (`trace_pattern_on`).
//! - `loads`, `fresh` (the module is not loaded at first: the first load makes nothing old),
//!   `schedulers` (1 or 2), `calls`, `locals`.
//!
//! Properties: `no-mix` (a call of `f` never runs a version promised for `f` without f's
//! breakpoint), `no-use-after-free` (a call never enters a freed version or touches a freed
//! breakpoint node), `no-uncommitted-call` (a call never enters a version that no commit has
//! published: the staging slot is the loader's alone); with two loads or more and soft purges
//! `one-old-version` (no load commits while an old version is unpurged). Reachability:
//! `calls-new-version`,
//! `local-call-in-old-code`, with `Kill` `purge-kills`, and with `call_time`
//! `charge-in-old-code`, `charge-at-return-in-old-code`, `charge-at-hit-in-old-code` (a charge
//! at schedule-out, at return, at the next hit read the linked slot of a version no longer
//! current), with 2 sessions `destroy-in-old-code`, and those of the new switches
//! ([`LoadModel::reachability`]). Mutants: [`LoadSpecMutant`], each killed
//! (spec/tests/spec_load.rs).

use bpspec_reference::LoadProtocol;
use stateright::{Model, Property};

/// A broken variant of the loader. The first five are the engine mutants of the same names
/// (`Mutant::LOAD`; `load-purge-skip-wait` is not here: in the `Two` order its wait follows the
/// check, and with atomic, sequentially consistent steps a return is never unordered with the
/// free after it, so only loom sees that one). `TwoCodeIx` is the engine's `load-two-code-ix`
/// too (on its `CodeIxScheme::Three`); the rest exist in the spec only (the purge's orders, a
/// destroyed session's grace period, the removal's wait for a charge at return, ERTS's block,
/// the meta cell's grace period, the export breakpoint's continuation, the fold of LW1, the
/// purge's check of return frames and of switched-out processes, the `not_purged` refusal, the
/// promise's withdrawal per function).
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
    /// `load-two-code-ix`: ERTS's waits (the code barrier before the commit, none after it) with
    /// two code indices instead of three.
    TwoCodeIx,
    /// `load-purge-skip-grace`: the `Three` purge without its wait (the thread progress that
    /// `purge_module(M, prepare)` waits for before the processes are checked).
    PurgeSkipGrace,
    /// `load-purge-kill-skip-down`: the killing purge frees the old version right after sending
    /// the kills, without waiting for the killed processes to exit (`'DOWN'`).
    PurgeKillSkipDown,
    /// `load-session-destroy-skip-grace`: a session's destroy frees its nodes (the old
    /// version's among them) right after unlinking them, without the grace period.
    SessionDestroySkipGrace,
    /// `load-removal-skip-return-charge`: the removal's wait does not wait for a charge at
    /// return in flight (a scheduler between the read of the slot and the write to the node
    /// counts as passed).
    RemovalSkipReturnCharge,
    /// `load-clear-erts-without-block` (`TracedLoad::ClearErts`): the load clears the current
    /// version's breakpoints (and its export breakpoint) and frees them without blocking
    /// thread progress first.
    ClearErtsWithoutBlock,
    /// `load-export-retarget-before-commit` (`global`, `TracedLoad::Carry`): the export
    /// breakpoint's one continuation address is moved to the new version with the staging,
    /// before the commit.
    ExportRetargetBeforeCommit,
    /// `load-meta-cell-skip-grace` (`meta`): the removal frees the old version's meta tracer
    /// cell with the uninstall, before its wait.
    MetaCellSkipGrace,
    /// `load-fold-lw1-untraced` (`fold_lw1`): LW1 is dropped after every commit, also where the
    /// removal that would stand in for it has nothing to remove (an untraced old version, or
    /// no old version: a fresh module's first load).
    FoldLw1Untraced,
    /// `load-fold-lw1-skip-w1` (`fold_lw1`): LW1 is dropped for a traced old version and the
    /// removal does not wait in its W1 either (the removal as without the fold: stage,
    /// uninstall, its one later wait, free); LW1 stays where nothing is removed.
    FoldLw1SkipW1,
    /// `load-purge-check-skips-return-frame` (`local_trace`): `check_process_code` does not
    /// see a return trace frame on the stack (it looks at the instruction pointer and the
    /// return addresses only).
    PurgeCheckSkipsReturnFrame,
    /// `load-purge-check-skips-switched-out` (`procs` 2 or 3): `check_process_code` looks at each
    /// scheduler's running process only, not at the processes switched out on it (the kill
    /// check of a purge that sees only the running process).
    PurgeCheckSkipsSwitchedOut,
    /// `load-purge-check-stops-at-first-switched-out` (`procs` 3): `check_process_code` looks
    /// at each scheduler's running process and at its switched-out processes only up to the
    /// first one it finds in the version (the kill check of a purge that stops its scan of a
    /// scheduler's switched-out processes at the first match). With 2 processes per scheduler
    /// there is one switched-out process, so it is the baseline there.
    PurgeCheckStopsAtFirstSwitchedOut,
    /// `load-purge-check-kills-two-switched-out` (`procs` 3, `schedulers` 2): `check_process_code`
    /// collects the switched-out processes it finds into one list with room for two
    /// ([`MAX_PARKED`], one scheduler's worth) for all schedulers together: those found past
    /// it (in the order of the schedulers, then of the switch) are not killed. With one
    /// scheduler, or two switched-out processes in all (`procs` 2 on two schedulers), the list
    /// never overflows, so it is the baseline there: only two schedulers with three processes
    /// each can tell it apart. Not in [`LoadSpecMutant::ALL`] (the kill matrix runs each
    /// mutant exhaustively, and the two-by-three model is too large for that,
    /// docs/nonblocking-load.md §8): its kill is a replayed counterexample and a random
    /// simulation, its survivals are exhaustive runs (spec/tests/spec_load.rs).
    PurgeCheckKillsTwoSwitchedOut,
    /// `load-over-not-purged`: a soft purge refused (a process still in the old version) does
    /// not stop the loader: its next load commits over the old version, which ERTS refuses
    /// with `not_purged` (`finish_loading_1`), so a version would be made old twice.
    LoadOverNotPurged,
    /// `load-switch-in-charges-killed` (`procs` 2 or 3): a process killed while switched out is
    /// charged at its switch-in (its call_time state's slot read and its nodes written) before
    /// it handles the kill. Not in [`LoadSpecMutant::ALL`]: it survives (an experiment,
    /// docs/nonblocking-load.md §8), since the old version's breakpoints are unlinked and freed
    /// by the removal before the purge's check sends the kill, and the version itself is freed
    /// only after the exit.
    SwitchInChargesKilled,
    /// `load-promise-withdrawn-late` (`funcs` 2): the stager's `trace_pattern` does not
    /// withdraw the promise of a function that loses its last pattern before staging
    /// (`store(before)` for `store(before & after)` in `trace_pattern_on`); the function
    /// keeps its bit until the promise is made after W2.
    PromiseWithdrawnLate,
    /// `load-collect-without-permission` (`collect`): the collector does not hold the code
    /// modification permission from its prepare to its last read (ERTS's `trace:info` holds it
    /// from `erts_prepare_timem_trace_info` to `trace_info_func_epilogue`; the engine's
    /// `trace_info_module_with` holds the module table and the permission): a load, the
    /// removal of the old version's breakpoints or a session's destroy may run between the
    /// collector's prepare, which found the current version's node, and its read of that node.
    CollectWithoutPermission,
}

impl LoadSpecMutant {
    pub const ALL: [LoadSpecMutant; 21] = [
        LoadSpecMutant::CommitBeforeBreakpoints,
        LoadSpecMutant::SkipWaitAfterCommit,
        LoadSpecMutant::BlockingWithoutBlock,
        LoadSpecMutant::ClearOldAtOnce,
        LoadSpecMutant::PurgeSkipCheck,
        LoadSpecMutant::TwoCodeIx,
        LoadSpecMutant::PurgeSkipGrace,
        LoadSpecMutant::PurgeKillSkipDown,
        LoadSpecMutant::SessionDestroySkipGrace,
        LoadSpecMutant::RemovalSkipReturnCharge,
        LoadSpecMutant::ClearErtsWithoutBlock,
        LoadSpecMutant::ExportRetargetBeforeCommit,
        LoadSpecMutant::MetaCellSkipGrace,
        LoadSpecMutant::FoldLw1Untraced,
        LoadSpecMutant::FoldLw1SkipW1,
        LoadSpecMutant::PurgeCheckSkipsReturnFrame,
        LoadSpecMutant::PurgeCheckSkipsSwitchedOut,
        LoadSpecMutant::PurgeCheckStopsAtFirstSwitchedOut,
        LoadSpecMutant::LoadOverNotPurged,
        LoadSpecMutant::PromiseWithdrawnLate,
        LoadSpecMutant::CollectWithoutPermission,
    ];
    pub fn name(self) -> &'static str {
        match self {
            LoadSpecMutant::CommitBeforeBreakpoints => "load-commit-before-breakpoints",
            LoadSpecMutant::SkipWaitAfterCommit => "load-skip-lw1-after-commit",
            LoadSpecMutant::BlockingWithoutBlock => "load-blocking-without-block",
            LoadSpecMutant::ClearOldAtOnce => "load-clear-old-at-once",
            LoadSpecMutant::PurgeSkipCheck => "load-purge-skip-check",
            LoadSpecMutant::TwoCodeIx => "load-two-code-ix",
            LoadSpecMutant::PurgeSkipGrace => "load-purge-skip-grace",
            LoadSpecMutant::PurgeKillSkipDown => "load-purge-kill-skip-down",
            LoadSpecMutant::SessionDestroySkipGrace => "load-session-destroy-skip-grace",
            LoadSpecMutant::RemovalSkipReturnCharge => "load-removal-skip-return-charge",
            LoadSpecMutant::ClearErtsWithoutBlock => "load-clear-erts-without-block",
            LoadSpecMutant::ExportRetargetBeforeCommit => "load-export-retarget-before-commit",
            LoadSpecMutant::MetaCellSkipGrace => "load-meta-cell-skip-grace",
            LoadSpecMutant::FoldLw1Untraced => "load-fold-lw1-untraced",
            LoadSpecMutant::FoldLw1SkipW1 => "load-fold-lw1-skip-w1",
            LoadSpecMutant::PurgeCheckSkipsReturnFrame => "load-purge-check-skips-return-frame",
            LoadSpecMutant::PurgeCheckSkipsSwitchedOut => "load-purge-check-skips-switched-out",
            LoadSpecMutant::PurgeCheckStopsAtFirstSwitchedOut => {
                "load-purge-check-stops-at-first-switched-out"
            }
            LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut => {
                "load-purge-check-kills-two-switched-out"
            }
            LoadSpecMutant::LoadOverNotPurged => "load-over-not-purged",
            LoadSpecMutant::SwitchInChargesKilled => "load-switch-in-charges-killed",
            LoadSpecMutant::PromiseWithdrawnLate => "load-promise-withdrawn-late",
            LoadSpecMutant::CollectWithoutPermission => "load-collect-without-permission",
        }
    }
    /// Whether the engine has a mutant of the same name (`bpspec_reference::Mutant`).
    pub fn in_engine(self) -> bool {
        !matches!(
            self,
            LoadSpecMutant::TwoCodeIx
                | LoadSpecMutant::PurgeSkipGrace
                | LoadSpecMutant::PurgeKillSkipDown
                | LoadSpecMutant::SessionDestroySkipGrace
                | LoadSpecMutant::RemovalSkipReturnCharge
                | LoadSpecMutant::ClearErtsWithoutBlock
                | LoadSpecMutant::ExportRetargetBeforeCommit
                | LoadSpecMutant::MetaCellSkipGrace
                | LoadSpecMutant::FoldLw1Untraced
                | LoadSpecMutant::FoldLw1SkipW1
                | LoadSpecMutant::PurgeCheckSkipsReturnFrame
                | LoadSpecMutant::PurgeCheckSkipsSwitchedOut
                | LoadSpecMutant::PurgeCheckStopsAtFirstSwitchedOut
                | LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut
                | LoadSpecMutant::LoadOverNotPurged
                | LoadSpecMutant::SwitchInChargesKilled
                | LoadSpecMutant::PromiseWithdrawnLate
                | LoadSpecMutant::CollectWithoutPermission
        )
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
            LoadSpecMutant::CommitBeforeBreakpoints | LoadSpecMutant::PromiseWithdrawnLate => {
                "no-mix"
            }
            LoadSpecMutant::TwoCodeIx | LoadSpecMutant::ExportRetargetBeforeCommit => {
                "no-uncommitted-call"
            }
            LoadSpecMutant::FoldLw1SkipW1 => "remote-calls-counted",
            LoadSpecMutant::LoadOverNotPurged => ONE_OLD_VERSION,
            _ => "no-use-after-free",
        }
    }
    /// The model (of the default plan, [`LoadModel::plan`]) the mutant runs on, with the mutant.
    pub fn model(self) -> LoadModel {
        let base = match self {
            LoadSpecMutant::TwoCodeIx | LoadSpecMutant::PurgeSkipGrace => LoadModel::erts(),
            LoadSpecMutant::PurgeKillSkipDown => LoadModel::kill(),
            LoadSpecMutant::SessionDestroySkipGrace => LoadModel::sessions(),
            LoadSpecMutant::RemovalSkipReturnCharge => {
                LoadModel::classic(LoadProtocol::NonBlocking).with(|m| m.call_time = true)
            }
            LoadSpecMutant::ClearErtsWithoutBlock => LoadModel::clear_erts(),
            LoadSpecMutant::ExportRetargetBeforeCommit => LoadModel::global(),
            LoadSpecMutant::MetaCellSkipGrace => LoadModel::meta(),
            LoadSpecMutant::FoldLw1Untraced | LoadSpecMutant::FoldLw1SkipW1 => {
                LoadModel::fold_lw1()
            }
            LoadSpecMutant::PurgeCheckSkipsReturnFrame => LoadModel::local_trace(),
            LoadSpecMutant::PurgeCheckSkipsSwitchedOut | LoadSpecMutant::SwitchInChargesKilled => {
                LoadModel::two_procs()
            }
            LoadSpecMutant::PurgeCheckStopsAtFirstSwitchedOut => LoadModel::three_procs(),
            LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut => LoadModel::three_procs_two_scheds(),
            LoadSpecMutant::LoadOverNotPurged => LoadModel::reloads(),
            LoadSpecMutant::PromiseWithdrawnLate => LoadModel::per_function(),
            LoadSpecMutant::CollectWithoutPermission => {
                LoadModel::collect(LoadProtocol::NonBlocking)
            }
            _ => LoadModel::classic(self.protocol()),
        };
        base.with_mutant(self)
    }
}

/// The code index scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeIx {
    /// bpspec's engine: two indices, LW1 after each commit; purge: check, PW, free.
    Two,
    /// ERTS: three indices, the code barrier between staging and commit, no wait after it;
    /// purge: wait, check, free.
    Three,
}

impl CodeIx {
    pub fn name(self) -> &'static str {
        match self {
            CodeIx::Two => "2ix",
            CodeIx::Three => "3ix",
        }
    }
}

/// How the old version is purged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PurgeKind {
    /// `code:soft_purge/1`: refused while a process is in the old version (the loader stops:
    /// a later load would be refused with `not_purged`).
    Soft,
    /// `code:purge/1`: processes in the old version are killed; the purger waits for them to
    /// exit, then frees.
    Kill,
}

/// What a load of a traced module does with the current version's breakpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TracedLoad {
    /// bpspec's engine: the new version carries the module's patterns (every session's, meta,
    /// the export breakpoint stays on the export entry), and the old version's breakpoints
    /// are removed after the commit behind a wait.
    Carry,
    /// ERTS's `finish_loading_1`: when the current version has breakpoints or traced exports,
    /// thread progress is blocked, every session's breakpoints of it are cleared and freed
    /// (`erts_clear_module_break`) and its export breakpoint too (`delete_code`), the new
    /// version is staged and committed under the block (`staging_epilogue`), and it gets only
    /// the `on_load` patterns (none here).
    ClearErts,
}

/// The most versions of `m` (index 0 is `undef`).
pub const MAX_VERS: usize = 5;
/// The most schedulers.
pub const MAX_SCHEDS: usize = 2;
/// The most processes switched out on a scheduler (`procs` 3).
pub const MAX_PARKED: usize = 2;

/// One version of `m` (index 1 up; 0 is `undef`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ver {
    /// Patched: the functions (one bit each) that start with the breakpoint instruction.
    pub bp: u8,
    /// The functions (one bit each) whose breakpoints a call of them must run
    /// (`CodeVersion::promised`).
    pub promised: u8,
    /// `funcs` 2: the functions (one bit each) whose pattern the active half of their
    /// breakpoint holds (a call runs a function's breakpoints when its instruction is patched
    /// and the active half has its pattern); 0 with one function, where a patched function is
    /// always active (the trace_pattern's flip is not modelled apart there).
    pub on: u8,
    pub freed: bool,
    /// Its breakpoint nodes that were freed, one bit per session (bit 0: the first session,
    /// bit 1: the second).
    pub node_freed: u8,
    /// A commit has made it active (a staged version is the loader's until then).
    pub published: bool,
    /// The sessions whose node its breakpoint slot holds, one bit per session (a charge
    /// reads the slot whatever the instruction says; the removal unlinks them with the
    /// uninstall, before its wait; a session's destroy unlinks that session's).
    pub linked: u8,
    /// `meta`: its meta breakpoint's tracer cell (`bp->meta_tracer`) was freed.
    pub cell_freed: bool,
    /// `ClearErts`: a load cleared its breakpoints under the block.
    pub cleared: bool,
}

/// Where a scheduler is in a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sched {
    Idle,
    /// Read the code index.
    HasIx(u8),
    /// Read the export address: inside this version.
    HasVer(u8),
    /// A local call into the version the process is in: read its first instruction and, if
    /// patched, the chain of nodes it found (a session mask, 0: unpatched), about to run it
    /// and its nodes; the third field is the function called (0 with one function).
    Local(u8, u8, u8),
    /// A call_time charge at schedule-out or at the next hit of a patched function
    /// (`call_time`): read the slot of the function its call_time state names, in this
    /// version (the session mask of the nodes linked there), about to add to the nodes.
    Charge(u8, u8),
    /// A call_time charge at return (`call_time`): as `Charge`; the process leaves the
    /// version and its call_time state is cleared after the write.
    Ret(u8, u8),
    /// `meta`: a local call that read the patched instruction and its chain, about to read
    /// the meta breakpoint's tracer cell through the node (its own step), then run.
    Meta(u8, u8, u8),
    /// `global`: the call read the export address of its code index and found the export
    /// breakpoint's trampoline, about to run the export entry's breakpoint node and read its
    /// one continuation address.
    Tramp,
}

/// A scheduler and its one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Proc {
    pub sched: Sched,
    pub calls_left: u8,
    /// The version the process executes in across progress points (0: none); purge's
    /// `check_process_code` reads it.
    pub held: u8,
    /// The process may still stay in the version of one remote call.
    pub may_stay: bool,
    pub locals_left: u8,
    /// A wait is open and this scheduler has passed a progress point (or slept) since it began.
    pub passed: bool,
    /// A kill (exit signal) sent by the purge is pending: the process handles it at its next
    /// step boundary.
    pub kill: bool,
    /// `call_time`: the version of the function the process's call_time state (`pbt.ci`)
    /// names (0: none). Set when the process runs a patched function and stays in the
    /// version; cleared by its return and by its kill (the frames are discarded uncharged).
    pub pbt: u8,
    /// `local_trace`: the version of the function a return trace frame on the process's stack
    /// names (0: none). Pushed by a hit of a patched function (local call trace with
    /// `return_trace`), run at the process's return (it reads the function's code info, in
    /// the version's code area), dropped by a kill; a tail call out of the version leaves it
    /// on the stack, where `check_process_code` still finds it (the frame holds the code
    /// info's address, a continuation pointer into the version's code area).
    pub frame: u8,
}

/// A process switched out on its scheduler (`procs` 2 or 3): its own stack, call_time state
/// and place in the code, as [`Proc`] has them for the running one; the first switched-out
/// process is switched in at a process switch ([`LAction::Switch`]) and the running one is
/// switched out last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Parked {
    pub calls_left: u8,
    pub held: u8,
    pub may_stay: bool,
    pub locals_left: u8,
    /// A kill sent while switched out: handled at its switch-in, before it runs.
    pub kill: bool,
    pub pbt: u8,
    pub frame: u8,
}

impl Parked {
    /// Nothing left to do: no call, no local call from a version it is in, no call_time state
    /// or return trace frame left, no kill to handle.
    fn done(&self) -> bool {
        self.calls_left == 0
            && (self.held == 0 || self.locals_left == 0)
            && self.pbt == 0
            && self.frame == 0
            && !self.kill
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LState {
    /// The module's patterns, one bit per function (its versions get call_count on them; a load
    /// sets the same patterns).
    pub traced: u8,
    pub ix: u8,
    pub addr: [u8; 3],
    pub ver: [Ver; MAX_VERS],
    /// The current version (0: not loaded).
    pub cur: u8,
    pub loader: u8,
    pub blocked: bool,
    pub wait_open: bool,
    pub procs: [Proc; MAX_SCHEDS],
    /// `procs` 2 or 3: each scheduler's processes switched out, in the order they are switched
    /// in (`procs` - 1 of them, the rest `None`; all `None` with one process per scheduler).
    pub parked: [[Option<Parked>; MAX_PARKED]; MAX_SCHEDS],
    pub mix: bool,
    pub uaf: bool,
    /// A call entered a version no commit has published.
    pub early: bool,
    /// A call ran the version of the last load.
    pub ran_last: bool,
    /// A local call ran a version after it stopped being current (the process was in old code).
    pub ran_old_local: bool,
    /// A process was killed by a purge.
    pub killed: bool,
    /// A call_time charge read the linked slot of a version that is no longer current.
    pub charged_old: bool,
    /// A charge at return did.
    pub charged_ret: bool,
    /// A charge at the next hit did.
    pub charged_hit: bool,
    /// The sessions alive (bit mask); a load links the nodes of these.
    pub live: u8,
    /// A session was destroyed while a process was in a version no longer current.
    pub destroyed_old: bool,
    /// `global`: the export entry of the traced function has its breakpoint (the trampoline in
    /// the addresses marked in `exp_tramp`).
    pub exp_traced: bool,
    /// Per code index: the export address is the trampoline (the breakpoint instruction).
    pub exp_tramp: [bool; 3],
    /// The trampoline's continuation: one field, not one per code index (ERTS
    /// `trampoline.breakpoint.address`).
    pub exp_target: u8,
    /// The export entry's breakpoint node was freed.
    pub exp_node_freed: bool,
    /// A call ran the export breakpoint and continued to the version of the last load.
    pub exp_to_new: bool,
    /// A call ran the export breakpoint before a load cleared it (`ClearErts`).
    pub exp_ran: bool,
    pub exp_cleared_after_run: bool,
    /// A local call read the meta tracer cell of a version no longer current.
    pub meta_old: bool,
    /// `ClearErts`: a load cleared the breakpoints of a version a process was in.
    pub cleared_held: bool,
    /// `ClearErts` with `call_time`: a charge read the slot of a version whose breakpoints a
    /// load cleared (it finds no node: ERTS's "the breakpoint was removed").
    pub charged_cleared: bool,
    /// The sequential oracle's state (`spec/src/code.rs`, CL1): a load over a current version
    /// was linearized (its commit), after which the oracle has no breakpoint on `m`.
    pub oracle_cleared: bool,
    /// A breakpoint was hit (a read that found a patched instruction, a linked slot or the
    /// export trampoline) after the oracle cleared them: a history the oracle does not have.
    pub oracle_diff: bool,
    /// `fold_lw1`: a remote call of the traced module (`Carry`) ran a version without its
    /// breakpoints (an uncounted call: LP3).
    pub lost_call: bool,
    /// `local_trace`: a return trace frame ran naming a version no longer current, whose
    /// breakpoints were removed.
    pub frame_old: bool,
    /// `procs` 2 or 3: a process was switched out while in, or with a call_time state naming, a
    /// version no longer current.
    pub switched_old: bool,
    /// `procs` 2 or 3 with `Kill`: a process the purge's check found while it was switched out was
    /// killed at its switch-in.
    pub killed_switched_out: bool,
    /// `procs` 3 with `Kill`: the purge's check sent kills to two processes switched out on
    /// one scheduler.
    pub killed_two_switched_out: bool,
    /// A load committed while an old version was still unpurged (a version made old twice).
    pub old_twice: bool,
    /// `funcs` 2: the stager's `trace_pattern` has flipped the active half and not yet made
    /// the promise (the window between its W1 and its W2).
    pub tp_flipped: bool,
    /// `funcs` 2: a call of a function whose pattern the stager changes ran the current
    /// version in that window.
    pub tp_window_call: bool,
    /// `funcs` 2: a call of a function without a promise bit ran a version promised for
    /// another function (it ran unpatched or patched, as the module's patterns say).
    pub per_fn_promise: bool,
    /// `collect`: the collector's place (0: not begun, 1: prepared, holding the permission, 2:
    /// done), the version whose node its prepare found and that node (a session mask).
    pub col: u8,
    pub col_ver: u8,
    pub col_nodes: u8,
    /// `collect`: the collector read the current version's node while a process was in, or
    /// had a call_time state naming, a version no longer current.
    pub collected_old: bool,
    /// `collect`: at the collector's prepare a version other than the current one still had a
    /// node linked (the collection's flip would reach a breakpoint of old code).
    pub col_saw_old: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LAction {
    Loader(u8),
    ReadIx(u8),
    ReadAddr(u8),
    /// Run function `f` (the second field) of the version the call read.
    Run(u8, u8),
    /// Run, and the process stays in the version.
    RunStay(u8, u8),
    /// A local call of function `f` (the second field).
    LocalRead(u8, u8),
    LocalRun(u8),
    /// A call_time charge: read the slot, then add to the node (`call_time`).
    ChargeRead(u8),
    ChargeRun(u8),
    /// Return (with a call_time state, `call_time`: the read of the charge at return).
    Return(u8),
    /// The write of the charge at return.
    ReturnRun(u8),
    /// `tail_calls`: the process tail-calls out of the version (it leaves it; its call_time
    /// state still names the function it left).
    TailOut(u8),
    Progress(u8),
    /// The process handles the purge's kill: its frames are dropped without returning.
    Exit(u8),
    /// `meta`: read the meta tracer cell through the node the local call found.
    MetaRead(u8),
    /// `global`: run the export breakpoint node and read its continuation.
    TrampRun(u8),
    /// `procs` 2 or 3: a process switch (ERTS `erts_schedule`, not a thread progress point):
    /// the running process is switched out last with its stack and call_time state (its
    /// schedule-out
    /// charge is the `ChargeRead`/`ChargeRun` pair, which it may make at any step boundary
    /// before), the first switched-out one is switched in and handles its signals before it
    /// runs: a kill sent meanwhile ends it there, without a charge (schedule-in reads no
    /// breakpoint).
    Switch(u8),
    /// `any_switch_in`: a process switch that brings in the switched-out process at place `k`
    /// (the second field, 1 or more; place 0 is [`LAction::Switch`]) instead of the first; the
    /// others keep their order and the running one is switched out last.
    SwitchIn(u8, u8),
    /// `collect`: the collector's prepare (ERTS `erts_prepare_timem_trace_info`, the engine's
    /// `trace_info_module_with` up to `trace_info_in`): it seizes the permission (the loader
    /// between two of its operations) and finds the legacy session's node in the slot of the
    /// current version's function (none: the answer is `false` or `undefined`, nothing more).
    Collect,
    /// `collect`: the collector reads the node it found (its real call_time object after its
    /// first wait, the merge after its second: both touch the node) and releases the
    /// permission.
    CollectRead,
}

/// Local calls a process makes from the version it stays in.
pub const LOCALS: u8 = 2;
/// The functions whose pattern the stager's `trace_pattern` toggles (`funcs` 2): function 0.
pub const TP_FUNCS: u8 = 1;

/// One step of the loader's program ([`LoadModel::script`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// L1: the new version with its breakpoints and its promise.
    Build(u8),
    /// L2: the staging export address.
    Stage(u8),
    /// A wait begins: a sleeping scheduler has passed already.
    WaitBegin,
    /// The code barrier (`Three`) ends: every scheduler passed since the end of staging.
    BarrierEnd,
    /// L3: commit (the staging index becomes active).
    Commit(u8),
    /// The late install of `load-commit-before-breakpoints` (a no-op otherwise).
    LateInstall(u8),
    /// LW1 (`Two`) ends.
    Lw1End,
    /// L4, the old version's breakpoints removed as by trace_pattern(false): stage (promise
    /// withdrawn); W1, commit and W2 order flags that are sequentially consistent here and are
    /// not modelled. An untraced version has nothing to remove: the next 4 steps are skipped.
    RemoveStage(u8),
    Uninstall(u8),
    /// W3/W4 (one wait here) ends: every local call that read the patched instruction has
    /// finished with the node.
    RemWaitEnd,
    FreeNode(u8),
    /// L5, purge: `check_process_code` on every process; `Soft` refuses (the loader stops),
    /// `Kill` sends a kill to each process in the version.
    Check(u8),
    /// `Kill`: every killed process has exited (its `'DOWN'`).
    AwaitDown,
    /// PW, the purge's wait, ends.
    PwEnd,
    Free(u8),
    /// `Blocking`: the stop-the-world begins (every scheduler between calls).
    BlockOn,
    /// `Blocking`: the old version's breakpoints cleared under the block.
    ClearOld(u8),
    /// `Blocking`: the new version, its breakpoints set under the block.
    BuildBlocked(u8),
    /// `Blocking`: purge under the block (soft: refused while a process is in it).
    PurgeBlocked(u8),
    BlockOff,
    /// `sessions` 2: the second session is destroyed (`trace:session_destroy/1`): its nodes
    /// unlinked from every version's slot.
    DestroyUnlink,
    /// The destroy's wait (the grace period before the free) ends.
    DestroyWaitEnd,
    /// The destroyed session's nodes freed, in every version.
    DestroyFree,
    /// `ClearErts`: thread progress blocked (every scheduler between calls) if the current
    /// version has breakpoints or a traced export; else nothing.
    EBlockOn(u8),
    /// `ClearErts`: under the block, the current version's breakpoints, meta cells and export
    /// breakpoint cleared and freed (`erts_clear_module_break`, `delete_code`).
    EClear(u8),
    /// `ClearErts`: the block ends (after the commit, as `staging_epilogue`).
    EBlockOff,
    /// `global`, `Carry`: the trampoline's continuation moved to the new version (after the
    /// commit).
    Retarget(u8),
    /// `fold_lw1`: the removal's W1 ends (it began after the removal's stage). It stands for
    /// LW1 too: if the old version had nothing to remove, the rest of the removal (4 steps)
    /// is skipped, and this wait was LW1.
    W1End(u8),
    /// `funcs` 2: the stager's `trace_pattern` on a subset of the module's functions (function
    /// 0's pattern toggled: set where it had none, cleared where it had one) on the current
    /// version, as `Engine::trace_pattern_funcs_spec_in` runs it. T1: the module's patterns
    /// changed, the staging half written (the stager's own until the flip), and the promise
    /// of every function that loses its last pattern withdrawn (`store(before & after)`).
    TpStage,
    /// The functions gaining a pattern patched (after W0, which orders the staging half's
    /// writes before the patch: sequentially consistent here, not modelled).
    TpInstall,
    /// The breakpoint index flipped (after W1): the active half has the new patterns.
    TpFlip,
    /// W2 ends: every call that read the old half has finished.
    TpW2End,
    /// The promise made after W2 (`promised.store(after)` if a changed function is traced).
    TpPromise,
    /// The functions that lost their pattern unpatched (their nodes freed after W3/W4, not
    /// modelled: a node per session and version here).
    TpUninstall,
}

/// The model: `calls` remote calls by each of `schedulers` schedulers (the first of which may
/// leave its process in the version, for `LOCALS` local calls and a return) against `loads`
/// loads, each followed by the removal of the old version's breakpoints and its purge, with the
/// module traced or not (two initial states). Build it with [`LoadModel::classic`],
/// [`LoadModel::erts`], [`LoadModel::kill`] and [`LoadModel::with`].
#[derive(Clone, Debug)]
pub struct LoadModel {
    pub protocol: LoadProtocol,
    pub mutant: Option<LoadSpecMutant>,
    pub calls: u8,
    pub code_ix: CodeIx,
    pub purge: PurgeKind,
    pub loads: u8,
    /// The module is not loaded at first (the first load makes nothing old).
    pub fresh: bool,
    pub schedulers: u8,
    /// Local calls each process may make from the version it stays in.
    pub locals: u8,
    /// The module is traced with call_time as well: a process that stays in a version after
    /// running a patched function is charged at schedule-out (a read of that function's slot
    /// and a write to its node), until it returns or is killed.
    pub call_time: bool,
    /// Trace sessions (1 or 2) whose breakpoints are chained on each traced version's
    /// function; with 2 a load links both sessions' nodes on the new version, and the second
    /// session is destroyed once, after the first load that makes a version old.
    pub sessions: u8,
    /// `call_time`: a process in a version may tail-call out of it (`TailOut`): it leaves the
    /// version while its call_time state still names the function it left.
    pub tail_calls: bool,
    /// `check_process_code` also finds a process whose call_time state names a function of
    /// the version (ERTS's does not: it looks at the instruction pointer, the stack's
    /// continuation pointers and the saved stack trace).
    pub check_pbt: bool,
    /// What a load of a traced module does with its patterns ([`TracedLoad`]).
    pub traced_load: TracedLoad,
    /// The traced versions have a meta breakpoint too, with its tracer cell, read by a local
    /// call as its own step.
    pub meta: bool,
    /// The module's exported function has an export (global) breakpoint when traced.
    pub global: bool,
    /// Check `refines-cl1`: every breakpoint hit of a history is one the sequential oracle
    /// has (CL1: a load over a current version leaves no breakpoint on the module).
    pub refine_cl1: bool,
    /// `NonBlocking`, `Two`: LW1 folded into the removal's W1 when the old version is traced
    /// (LW1 stays after a first load and before the removal of an untraced version); the
    /// removal's W1 is modelled as a wait of its own between its stage and its uninstall.
    /// Checks `remote-calls-counted` too.
    pub fold_lw1: bool,
    /// The traced versions have local call trace with `return_trace`: a hit pushes a return
    /// trace frame naming the version's function, run at the process's return.
    pub local_trace: bool,
    /// Processes per scheduler (1 to 3): with 2 or 3, each scheduler also has one or two
    /// processes switched out, each with its own calls, stay, local calls, call_time state and
    /// return trace frame, run in turn by process switches (`LAction::Switch`, rotating
    /// through them as `Scheduler::switch_proc` does); the purge's check finds a switched-out
    /// process too, and a kill reaches it at its switch-in.
    pub procs: u8,
    /// `procs` 2 or 3: a process switch may bring in any switched-out process of its scheduler
    /// ([`LAction::SwitchIn`] besides [`LAction::Switch`]), not only the first: ERTS's run
    /// queue fixes no order among them. Its reachable states include the rotation's
    /// (docs/cutoff.md §8), and its switched-out processes are interchangeable, so
    /// [`LState::representative`] sorts them (DFS with symmetry, [`LoadModel::check_symmetric`]).
    pub any_switch_in: bool,
    /// Functions of the module (1 or 2), each with its own pattern and promise bit
    /// (`Module::patterns`, `CodeVersion::promised`); a call (remote or local) calls one of
    /// them. With 2 the module starts with every function traced or none, and the stager runs
    /// a `trace_pattern` toggling function 0's pattern on the current version before the first
    /// load and again after the first load's removal ([`Step::TpStage`] ..
    /// [`Step::TpUninstall`]).
    pub funcs: u8,
    /// A collector asks `trace_info` of call_time of the legacy session's node on the
    /// module's function (OTP 29's collection, the engine's `trace_info_module_with`): its
    /// prepare and its read are two steps, between which it holds the code modification
    /// permission, so it runs only between the loader's operations (a load with its removal
    /// and the session's destroy, a purge, the stager's `trace_pattern`). The collection's
    /// flips and its temporary objects are the main model's (`spec/src/model/collect.rs`):
    /// here the question is which node it may read while versions come and go.
    pub collect: bool,
    script: Vec<Step>,
    /// Per position of the loader in its script (one more than its steps): the permission is
    /// free there (the loader is between two operations, or done).
    perm_free: Vec<bool>,
}

/// Calls each scheduler makes in the load models of the default plan.
pub const LOAD_CALLS: u8 = 3;

impl LoadModel {
    /// The model of the first load rows (`load-blocking`, `load-nonblocking`): bpspec's two
    /// indices with LW1, version 1 loaded, one load and one soft purge, one scheduler.
    pub fn classic(protocol: LoadProtocol) -> LoadModel {
        LoadModel {
            protocol,
            mutant: None,
            calls: LOAD_CALLS,
            code_ix: CodeIx::Two,
            purge: PurgeKind::Soft,
            loads: 1,
            fresh: false,
            schedulers: 1,
            locals: LOCALS,
            call_time: false,
            sessions: 1,
            tail_calls: false,
            check_pbt: false,
            traced_load: TracedLoad::Carry,
            meta: false,
            global: false,
            refine_cl1: false,
            fold_lw1: false,
            local_trace: false,
            procs: 1,
            any_switch_in: false,
            funcs: 1,
            collect: false,
            script: Vec::new(),
            perm_free: Vec::new(),
        }
        .rebuilt()
    }
    /// ERTS's index scheme (`Three`) with the killing purge: a fresh module loaded three times
    /// (two purges) under two schedulers, each making 2 calls.
    pub fn erts() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| {
            m.code_ix = CodeIx::Three;
            m.purge = PurgeKind::Kill;
            m.loads = 3;
            m.fresh = true;
            m.schedulers = 2;
            m.calls = 2;
        })
    }
    /// bpspec's index scheme (`Two`, LW1) with the killing purge, otherwise as [`LoadModel::erts`].
    pub fn kill() -> LoadModel {
        LoadModel::erts().with(|m| m.code_ix = CodeIx::Two)
    }
    /// Two sessions and call_time on the first non-blocking model: the load carries both
    /// sessions' patterns to the new version, and the second session is destroyed while a
    /// process may be in old code.
    pub fn sessions() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| {
            m.sessions = 2;
            m.call_time = true;
        })
    }
    /// ERTS's treatment of a traced load ([`TracedLoad::ClearErts`]) on the first
    /// non-blocking model, with call_time, meta and the export breakpoint.
    pub fn clear_erts() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| {
            m.traced_load = TracedLoad::ClearErts;
            m.refine_cl1 = true;
            m.call_time = true;
            m.meta = true;
            m.global = true;
        })
    }
    /// ERTS's treatment of a traced load on the killing-purge model ([`LoadModel::kill`]) of a
    /// loaded module loaded twice (the first load clears, the second loads an untraced one).
    pub fn clear_erts_kill() -> LoadModel {
        LoadModel::kill().with(|m| {
            m.traced_load = TracedLoad::ClearErts;
            m.refine_cl1 = true;
            m.fresh = false;
            m.loads = 2;
        })
    }
    /// The meta breakpoint on the first non-blocking model (patterns carried).
    pub fn meta() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| m.meta = true)
    }
    /// The export breakpoint on the first non-blocking model (patterns carried).
    pub fn global() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| m.global = true)
    }
    /// LW1 folded into the removal's W1 on the first non-blocking model.
    pub fn fold_lw1() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| m.fold_lw1 = true)
    }
    /// Local call trace with `return_trace` on the first non-blocking model, whose process may
    /// tail-call out of the version and leave its return trace frame on the stack.
    pub fn local_trace() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| {
            m.local_trace = true;
            m.tail_calls = true;
        })
    }
    /// Two processes on one scheduler (`procs` 2) with the killing purge and call_time: a fresh
    /// module loaded twice (one purge) under one scheduler whose two processes each make 2
    /// calls, may stay in a version with a call_time state naming it and are switched in and
    /// out; a process switched out in the old version is killed at its switch-in.
    pub fn two_procs() -> LoadModel {
        LoadModel::kill().with(|m| {
            m.schedulers = 1;
            m.procs = 2;
            m.call_time = true;
            m.loads = 2;
        })
    }
    /// Two processes on each of two schedulers (`procs` 2, `schedulers` 2) with the killing
    /// purge: a fresh module loaded twice (one purge), one call per process, no call_time (the
    /// model with call_time is 25.6 million unique states, docs/nonblocking-load.md §8). The
    /// purge's check finds processes running and switched out on both schedulers, and kills
    /// them; each switched-out one handles its kill at its switch-in.
    pub fn two_procs_two_scheds() -> LoadModel {
        LoadModel::two_procs().with(|m| {
            m.schedulers = 2;
            m.calls = 1;
            m.call_time = false;
        })
    }
    /// Three processes on one scheduler (`procs` 3) with the killing purge: a fresh module
    /// loaded twice (one purge), one call per process, no call_time (with call_time and 2
    /// calls per process, [`LoadModel::two_procs`] with a third process, it is 10.7 million
    /// unique states, docs/nonblocking-load.md §8). Two processes are switched out at a time
    /// and switched in in turn; the purge's check finds (and kills) every process in the old
    /// version, two switched out among them.
    pub fn three_procs() -> LoadModel {
        LoadModel::two_procs().with(|m| {
            m.procs = 3;
            m.calls = 1;
            m.call_time = false;
        })
    }
    /// Three processes on each of two schedulers (`procs` 3, `schedulers` 2) with the killing
    /// purge: [`LoadModel::three_procs`] with a second scheduler, or
    /// [`LoadModel::two_procs_two_scheds`] with a third process per scheduler. Not in the plan:
    /// its exhaustive run did not finish within 10 minutes (docs/nonblocking-load.md §8);
    /// `load-purge-check-kills-two-switched-out` is killed on it by a replayed counterexample
    /// and a random simulation.
    pub fn three_procs_two_scheds() -> LoadModel {
        LoadModel::three_procs().with(|m| m.schedulers = 2)
    }
    /// Two loads of a loaded module with soft purges on the first non-blocking model: a
    /// refused purge stops the loader, so the second load never commits over an unpurged old
    /// version (`one-old-version`).
    pub fn reloads() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| m.loads = 2)
    }
    /// Patterns per function (`funcs` 2) on the first non-blocking model: the stager sets or
    /// clears function 0's pattern (the other keeps its own) before the load and after its
    /// removal; the load carries each function's pattern and promise bit.
    pub fn per_function() -> LoadModel {
        LoadModel::classic(LoadProtocol::NonBlocking).with(|m| m.funcs = 2)
    }
    /// The collector ([`LoadModel::collect`]) beside a load: under `NonBlocking` on the model
    /// with two sessions and call_time ([`LoadModel::sessions`]: the load carries both
    /// sessions, the second is destroyed while a process may be in old code), under
    /// `Blocking` on its first model.
    pub fn collect(protocol: LoadProtocol) -> LoadModel {
        let base = match protocol {
            LoadProtocol::NonBlocking => LoadModel::sessions(),
            LoadProtocol::Blocking => LoadModel::classic(LoadProtocol::Blocking),
        };
        base.with(|m| m.collect = true)
    }
    /// The baseline models of `bpspec check`'s default plan.
    pub fn plan() -> Vec<LoadModel> {
        let mut v: Vec<LoadModel> = LoadProtocol::ALL
            .into_iter()
            .map(LoadModel::classic)
            .collect();
        for m in [LoadModel::kill(), LoadModel::erts()] {
            v.push(m.clone());
            v.push(m.with(|m| m.call_time = true));
        }
        v.push(LoadModel::sessions());
        v.extend([
            LoadModel::clear_erts(),
            LoadModel::clear_erts_kill(),
            LoadModel::meta(),
            LoadModel::global(),
            LoadModel::fold_lw1(),
            LoadModel::local_trace(),
            LoadModel::two_procs(),
            LoadModel::two_procs_two_scheds(),
            LoadModel::three_procs(),
            LoadModel::per_function(),
            LoadModel::collect(LoadProtocol::Blocking),
            LoadModel::collect(LoadProtocol::NonBlocking),
        ]);
        v
    }
    /// The model with its switches changed by `f` (the loader's program rebuilt).
    pub fn with(mut self, f: impl FnOnce(&mut LoadModel)) -> LoadModel {
        f(&mut self);
        self.rebuilt()
    }
    pub fn with_mutant(self, mu: LoadSpecMutant) -> LoadModel {
        self.with(|m| m.mutant = Some(mu))
    }
    fn rebuilt(mut self) -> LoadModel {
        assert!(self.loads >= 1 && (self.loads as usize) < MAX_VERS - usize::from(!self.fresh));
        assert!(self.schedulers >= 1 && self.schedulers as usize <= MAX_SCHEDS);
        assert!(self.sessions == 1 || self.sessions == 2);
        assert!(self.procs >= 1 && self.procs as usize <= MAX_PARKED + 1);
        assert!(self.funcs == 1 || self.funcs == 2);
        assert!(
            self.funcs == 1 || (!self.fresh && self.traced_load == TracedLoad::Carry),
            "the stager's trace_pattern needs a current version and the module's patterns"
        );
        assert!(
            !self.tail_calls || self.call_time || self.local_trace,
            "a tail call out matters with call_time or a return trace frame"
        );
        assert!(
            !self.fold_lw1
                || (self.protocol == LoadProtocol::NonBlocking && self.code_ix == CodeIx::Two),
            "LW1 exists only under NonBlocking with two code indices"
        );
        if self.protocol == LoadProtocol::Blocking {
            assert!(
                self.loads == 1 && self.purge == PurgeKind::Soft && self.code_ix == CodeIx::Two,
                "the Blocking model is the one soft-purged load"
            );
            assert!(self.sessions == 1, "sessions are modelled on NonBlocking");
            assert!(
                self.traced_load == TracedLoad::Carry && !self.meta && !self.global,
                "the Blocking model is the first one"
            );
        }
        if self.traced_load == TracedLoad::ClearErts {
            assert!(
                !self.fresh && self.sessions == 1 && !self.tail_calls,
                "ClearErts is modelled on a loaded module with one session"
            );
        }
        assert!(
            !self.collect || (self.funcs == 1 && self.traced_load == TracedLoad::Carry),
            "the collector is modelled on one function, with the patterns carried"
        );
        (self.script, self.perm_free) = self.build_script();
        self
    }
    /// The loader's program, one step per loader action.
    pub fn script(&self) -> &[Step] {
        &self.script
    }
    /// The loader's program and, per position in it, whether the permission is free there
    /// ([`LoadModel::perm_free`]): before each operation and at the end. The destroy of the
    /// second session sits inside a load, between its commit and its removal (the window it
    /// is there for), so no position inside a load is free.
    fn build_script(&self) -> (Vec<Step>, Vec<bool>) {
        let first = if self.fresh { 1 } else { 2 };
        let mut s = Vec::new();
        let mut starts = vec![0];
        let mut destroy = self.sessions == 2;
        // The stager's trace_pattern on a subset of the functions (`funcs` 2).
        let tp: &[Step] = if self.funcs > 1 {
            &[
                Step::TpStage,
                Step::TpInstall,
                Step::TpFlip,
                Step::WaitBegin,
                Step::TpW2End,
                Step::TpPromise,
                Step::TpUninstall,
            ]
        } else {
            &[]
        };
        s.extend_from_slice(tp);
        for k in 0..self.loads {
            let v = first + k;
            let o = v - 1; // 0: nothing current before this load
            match self.protocol {
                LoadProtocol::Blocking => {
                    starts.push(s.len());
                    s.push(Step::BlockOn);
                    if o != 0 {
                        s.push(Step::ClearOld(o));
                    }
                    s.extend([Step::BuildBlocked(v), Step::Stage(v), Step::Commit(v)]);
                    if o != 0 {
                        s.push(Step::PurgeBlocked(o));
                    }
                    s.push(Step::BlockOff);
                    starts.push(s.len());
                    if k == 0 {
                        s.extend_from_slice(tp);
                    }
                }
                LoadProtocol::NonBlocking => {
                    starts.push(s.len());
                    let clear = self.traced_load == TracedLoad::ClearErts && o != 0;
                    if clear {
                        s.extend([Step::EBlockOn(o), Step::EClear(o)]);
                    }
                    s.extend([Step::Build(v), Step::Stage(v)]);
                    let retarget = self.global && self.traced_load == TracedLoad::Carry;
                    if retarget && self.is(LoadSpecMutant::ExportRetargetBeforeCommit) {
                        s.push(Step::Retarget(v));
                    }
                    if self.code_ix == CodeIx::Three {
                        s.extend([Step::WaitBegin, Step::BarrierEnd]);
                    }
                    s.extend([Step::Commit(v), Step::LateInstall(v)]);
                    if retarget && !self.is(LoadSpecMutant::ExportRetargetBeforeCommit) {
                        s.push(Step::Retarget(v));
                    }
                    if clear {
                        s.push(Step::EBlockOff);
                    }
                    // The fold keeps LW1 where no removal follows (a fresh module's first load);
                    // its mutant drops it there too.
                    let fold =
                        self.fold_lw1 && (o != 0 || self.is(LoadSpecMutant::FoldLw1Untraced));
                    if self.code_ix == CodeIx::Two && !fold {
                        s.extend([Step::WaitBegin, Step::Lw1End]);
                    }
                    if o == 0 {
                        starts.push(s.len());
                        continue;
                    }
                    if destroy {
                        // The destroy, serialized with the loads by the code modification
                        // permission, while a process may still be in version `o`.
                        s.extend([
                            Step::DestroyUnlink,
                            Step::WaitBegin,
                            Step::DestroyWaitEnd,
                            Step::DestroyFree,
                        ]);
                        destroy = false;
                    }
                    s.push(Step::RemoveStage(o));
                    if fold {
                        s.extend([Step::WaitBegin, Step::W1End(o)]);
                    }
                    s.extend([
                        Step::Uninstall(o),
                        Step::WaitBegin,
                        Step::RemWaitEnd,
                        Step::FreeNode(o),
                    ]);
                    starts.push(s.len());
                    if k == 0 {
                        // After the removal (an untraced old version's skip lands here), while
                        // a process may still be in version `o`.
                        s.extend_from_slice(tp);
                    }
                    starts.push(s.len());
                    let down: &[Step] = match self.purge {
                        PurgeKind::Soft => &[],
                        PurgeKind::Kill => &[Step::AwaitDown],
                    };
                    match self.code_ix {
                        CodeIx::Two => {
                            s.push(Step::Check(o));
                            s.extend_from_slice(down);
                            s.extend([Step::WaitBegin, Step::PwEnd, Step::Free(o)]);
                        }
                        CodeIx::Three => {
                            s.extend([Step::WaitBegin, Step::PwEnd, Step::Check(o)]);
                            s.extend_from_slice(down);
                            s.push(Step::Free(o));
                        }
                    }
                }
            }
        }
        assert!(s.len() < u8::MAX as usize);
        starts.push(s.len());
        let mut free = vec![false; s.len() + 1];
        for k in starts {
            free[k] = true;
        }
        (s, free)
    }
    /// Whether the loader may take its next step with respect to the collector: not while the
    /// collector holds the permission (the loader is then between two operations), unless the
    /// mutant takes no permission.
    fn collector_lets_loader(&self, s: &LState) -> bool {
        s.col != 1 || self.is(LoadSpecMutant::CollectWithoutPermission)
    }

    fn is(&self, m: LoadSpecMutant) -> bool {
        self.mutant == Some(m)
    }
    /// The number of code indices the loader cycles through.
    fn num_code_ix(&self) -> u8 {
        match self.code_ix {
            CodeIx::Three if !self.is(LoadSpecMutant::TwoCodeIx) => 3,
            _ => 2,
        }
    }
    fn procs(&self) -> std::ops::Range<usize> {
        0..self.schedulers as usize
    }
    /// Scheduler `i`'s switched-out processes, in the order they are switched in.
    fn parked(s: &LState, i: usize) -> impl Iterator<Item = &Parked> {
        s.parked[i].iter().flatten()
    }
    /// A scheduler with no more to do: between calls, with no call left, no local call left
    /// from a version it stays in, and no call_time state left to charge.
    fn asleep(p: &Proc) -> bool {
        p.sched == Sched::Idle
            && p.calls_left == 0
            && (p.held == 0 || p.locals_left == 0)
            && p.pbt == 0
            && p.frame == 0
    }
    /// A scheduler with no more to do: its running process asleep ([`LoadModel::asleep`]) and
    /// its switched-out ones, if any, done.
    fn sched_asleep(s: &LState, i: usize) -> bool {
        Self::asleep(&s.procs[i]) && Self::parked(s, i).all(|q| q.done())
    }
    fn all_passed(&self, s: &LState) -> bool {
        self.procs().all(|i| s.procs[i].passed)
    }
    /// The session mask of every session.
    fn all_sessions(&self) -> u8 {
        (1u8 << self.sessions) - 1
    }
    /// Can the loader take its next step now?
    fn loader_enabled(&self, s: &LState) -> bool {
        match self.script[s.loader as usize] {
            Step::Lw1End => self.is(LoadSpecMutant::SkipWaitAfterCommit) || self.all_passed(s),
            Step::RemWaitEnd => {
                self.is(LoadSpecMutant::ClearOldAtOnce)
                    || self.procs().all(|i| {
                        s.procs[i].passed
                            || (self.is(LoadSpecMutant::RemovalSkipReturnCharge)
                                && matches!(s.procs[i].sched, Sched::Ret(..)))
                    })
            }
            Step::DestroyWaitEnd => {
                self.is(LoadSpecMutant::SessionDestroySkipGrace) || self.all_passed(s)
            }
            // PW: in the `Two` order its mutant is loom's (see LoadSpecMutant).
            Step::PwEnd => self.is(LoadSpecMutant::PurgeSkipGrace) || self.all_passed(s),
            Step::BarrierEnd | Step::TpW2End => self.all_passed(s),
            // The mutant ends W1 at once where it stands for LW1 (the old version traced);
            // where nothing is removed, the wait is LW1 and stays.
            Step::W1End(o) => {
                (self.is(LoadSpecMutant::FoldLw1SkipW1) && s.ver[o as usize].bp != 0)
                    || self.all_passed(s)
            }
            Step::AwaitDown => {
                self.is(LoadSpecMutant::PurgeKillSkipDown)
                    || self
                        .procs()
                        .all(|i| !s.procs[i].kill && Self::parked(s, i).all(|q| !q.kill))
            }
            Step::BlockOn => {
                self.is(LoadSpecMutant::BlockingWithoutBlock)
                    || self.procs().all(|i| s.procs[i].sched == Sched::Idle)
            }
            Step::EBlockOn(o) => {
                self.is(LoadSpecMutant::ClearErtsWithoutBlock)
                    || !Self::traced_now(s, o)
                    || self.procs().all(|i| s.procs[i].sched == Sched::Idle)
            }
            _ => true,
        }
    }
    /// `ClearErts`: the current version `o` has breakpoints or its export is traced (ERTS:
    /// `curr.num_breakpoints > 0 || curr.num_traced_exports > 0`).
    fn traced_now(s: &LState, o: u8) -> bool {
        s.ver[o as usize].bp != 0 || s.exp_traced
    }
    fn wait_begin(&self, s: &mut LState) {
        s.wait_open = true;
        for i in self.procs() {
            s.procs[i].passed = Self::sched_asleep(s, i);
        }
    }
    /// check_process_code: the processes in version `o` (the mutant does not look); with
    /// `check_pbt` also those whose call_time state names a function of it. Each as
    /// (scheduler, its place among the switched-out ones or `None` for the running one): the
    /// switched-out processes too (`procs` 2 or 3), none with
    /// `load-purge-check-skips-switched-out`, the first found per scheduler only with
    /// `load-purge-check-stops-at-first-switched-out`, the first two found on all schedulers
    /// together with `load-purge-check-kills-two-switched-out`.
    fn in_version(&self, s: &LState, o: u8) -> Vec<(usize, Option<usize>)> {
        if self.is(LoadSpecMutant::PurgeSkipCheck) {
            return Vec::new();
        }
        let finds = |held: u8, pbt: u8, frame: u8| {
            held == o
                || (self.check_pbt && pbt == o)
                || (frame == o && !self.is(LoadSpecMutant::PurgeCheckSkipsReturnFrame))
        };
        let mut v: Vec<(usize, Option<usize>)> = self
            .procs()
            .filter(|&i| {
                let p = &s.procs[i];
                finds(p.held, p.pbt, p.frame)
            })
            .map(|i| (i, None))
            .collect();
        if !self.is(LoadSpecMutant::PurgeCheckSkipsSwitchedOut) {
            let first = self.is(LoadSpecMutant::PurgeCheckStopsAtFirstSwitchedOut);
            for i in self.procs() {
                let found = Self::parked(s, i)
                    .enumerate()
                    .filter(|(_, q)| finds(q.held, q.pbt, q.frame))
                    .map(|(k, _)| (i, Some(k)));
                v.extend(found.take(if first { 1 } else { MAX_PARKED }));
            }
            if self.is(LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut) {
                // One list for all schedulers, with room for one scheduler's worth.
                let mut room = MAX_PARKED;
                v.retain(|&(_, k)| {
                    k.is_none() || {
                        let kept = room > 0;
                        room = room.saturating_sub(1);
                        kept
                    }
                });
            }
        }
        v
    }
    fn loader_step(&self, s: &mut LState) {
        let staging = ((s.ix + 1) % self.num_code_ix()) as usize;
        match self.script[s.loader as usize] {
            Step::Build(v) => {
                s.ver[v as usize] = Ver {
                    bp: if self.is(LoadSpecMutant::CommitBeforeBreakpoints) {
                        0
                    } else {
                        s.traced
                    },
                    promised: s.traced,
                    on: self.active(s.traced),
                    linked: if s.traced != 0 { s.live } else { 0 },
                    ..Ver::default()
                }
            }
            Step::BuildBlocked(v) => {
                s.ver[v as usize] = Ver {
                    bp: s.traced,
                    promised: s.traced,
                    on: self.active(s.traced),
                    linked: if s.traced != 0 { s.live } else { 0 },
                    ..Ver::default()
                }
            }
            Step::Stage(v) => s.addr[staging] = v,
            Step::WaitBegin => self.wait_begin(s),
            Step::BarrierEnd
            | Step::Lw1End
            | Step::RemWaitEnd
            | Step::PwEnd
            | Step::DestroyWaitEnd
            | Step::TpW2End => s.wait_open = false,
            Step::W1End(o) => {
                s.wait_open = false;
                if s.ver[o as usize].bp == 0 {
                    // Nothing to remove: this wait was LW1.
                    s.loader += 5;
                    return;
                }
            }
            Step::Commit(v) => {
                // An old version still unpurged (published, not freed, not current): this
                // commit makes the current one old beside it.
                let (cur, ver) = (s.cur, &s.ver);
                s.old_twice |=
                    (1..MAX_VERS).any(|w| w != cur as usize && ver[w].published && !ver[w].freed);
                s.ix = staging as u8;
                s.ver[v as usize].published = true;
                // Tracked only when checked, so that the other models keep their state counts.
                s.oracle_cleared |= self.refine_cl1 && s.cur != 0;
                s.cur = v;
            }
            Step::LateInstall(v) => s.ver[v as usize].bp = s.traced,
            Step::RemoveStage(o) => {
                let ver = &mut s.ver[o as usize];
                if ver.bp == 0 && ver.promised == 0 {
                    // Untraced: nothing to remove, no wait (as `remove_old_breakpoints`); with
                    // the fold, its W1 runs as LW1 (and skips the rest), unless the mutant
                    // drops it.
                    let w1 = matches!(self.script.get(s.loader as usize + 2), Some(Step::W1End(_)));
                    if !w1 || self.is(LoadSpecMutant::FoldLw1Untraced) {
                        s.loader += if w1 { 7 } else { 5 };
                        return;
                    }
                    s.loader += 1;
                    return;
                }
                ver.promised = 0;
                if self.is(LoadSpecMutant::ClearOldAtOnce) {
                    ver.bp = 0;
                    ver.on = 0;
                    ver.linked = 0;
                    ver.node_freed = self.all_sessions();
                    ver.cell_freed = true;
                }
            }
            Step::Uninstall(o) => {
                s.ver[o as usize].bp = 0;
                s.ver[o as usize].on = 0;
                s.ver[o as usize].linked = 0;
                if self.is(LoadSpecMutant::MetaCellSkipGrace) {
                    s.ver[o as usize].cell_freed = true;
                }
            }
            Step::FreeNode(o) => {
                s.ver[o as usize].node_freed = self.all_sessions();
                s.ver[o as usize].cell_freed = true;
            }
            Step::DestroyUnlink => {
                s.live &= !2;
                for ver in s.ver.iter_mut() {
                    ver.linked &= !2;
                }
                let cur = s.cur;
                let old = |held: u8| held != 0 && held != cur;
                s.destroyed_old |= self
                    .procs()
                    .any(|i| old(s.procs[i].held) || Self::parked(s, i).any(|q| old(q.held)));
            }
            Step::DestroyFree => {
                for ver in s.ver.iter_mut() {
                    ver.node_freed |= 2;
                }
            }
            Step::Check(o) => {
                let found = self.in_version(s, o);
                match self.purge {
                    PurgeKind::Soft if !found.is_empty() => {
                        if self.is(LoadSpecMutant::LoadOverNotPurged) {
                            // Refused, and the loader goes on with its next load: past this
                            // purge's free.
                            let rest = &self.script[s.loader as usize..];
                            let free = rest.iter().position(|&t| t == Step::Free(o));
                            s.loader += free.expect("a purge ends with its free") as u8 + 1;
                            return;
                        }
                        s.loader = self.script.len() as u8; // refused: the loader stops
                        return;
                    }
                    PurgeKind::Soft => {}
                    PurgeKind::Kill => {
                        let mut parked_found = [0u8; MAX_SCHEDS];
                        for (i, k) in found {
                            match k {
                                Some(k) => {
                                    s.parked[i][k].as_mut().expect("switched out").kill = true;
                                    parked_found[i] += 1;
                                }
                                None => s.procs[i].kill = true,
                            }
                        }
                        s.killed_two_switched_out |= parked_found.iter().any(|&c| c >= 2);
                    }
                }
            }
            Step::AwaitDown => {}
            Step::Free(o) => s.ver[o as usize].freed = true,
            Step::BlockOn => s.blocked = !self.is(LoadSpecMutant::BlockingWithoutBlock),
            Step::ClearOld(o) => {
                let ver = &mut s.ver[o as usize];
                ver.promised = 0;
                ver.bp = 0;
                ver.on = 0;
                ver.linked = 0;
                ver.node_freed = self.all_sessions();
                ver.cell_freed = true;
            }
            Step::PurgeBlocked(o) => {
                s.ver[o as usize].freed = self.in_version(s, o).is_empty();
            }
            Step::BlockOff | Step::EBlockOff => s.blocked = false,
            Step::EBlockOn(o) => {
                s.blocked =
                    Self::traced_now(s, o) && !self.is(LoadSpecMutant::ClearErtsWithoutBlock);
            }
            Step::EClear(o) => {
                if Self::traced_now(s, o) {
                    let all = self.all_sessions();
                    let ver = &mut s.ver[o as usize];
                    if ver.bp != 0 {
                        ver.promised = 0;
                        ver.bp = 0;
                        ver.on = 0;
                        ver.linked = 0;
                        ver.node_freed = all;
                        ver.cell_freed = true;
                        ver.cleared = true;
                    }
                    if s.exp_traced {
                        // `delete_code`: the export breakpoint cleared (`erts_clear_all_export_break`)
                        // and the addresses no longer the trampoline.
                        s.exp_traced = false;
                        s.exp_tramp = [false; 3];
                        s.exp_node_freed = true;
                        s.exp_cleared_after_run |= s.exp_ran;
                    }
                    // The new version gets the `on_load` patterns only: none here.
                    s.traced = 0;
                    s.cleared_held |= self.procs().any(|i| {
                        s.procs[i].held == o
                            || s.procs[i].pbt == o
                            || Self::parked(s, i).any(|q| q.held == o || q.pbt == o)
                    });
                }
            }
            Step::Retarget(v) => {
                if s.exp_traced {
                    s.exp_target = v;
                }
            }
            Step::TpStage => {
                // `trace_pattern_on`: the promise of a function losing its last pattern is
                // withdrawn before anything a call could see of the change.
                let (before, after) = (s.traced, s.traced ^ TP_FUNCS);
                s.traced = after;
                let live = s.live;
                let ver = &mut s.ver[s.cur as usize];
                if before == 0 {
                    // The first pattern on the version: the session's node linked in the slot
                    // (staged, inert until the flip).
                    ver.linked = live;
                }
                if TP_FUNCS & !after != 0 && !self.is(LoadSpecMutant::PromiseWithdrawnLate) {
                    ver.promised = before & after;
                }
            }
            Step::TpInstall => s.ver[s.cur as usize].bp |= s.traced,
            Step::TpFlip => {
                s.ver[s.cur as usize].on = s.traced;
                s.tp_flipped = true;
            }
            Step::TpPromise => {
                let after = s.traced;
                if TP_FUNCS & after != 0 || self.is(LoadSpecMutant::PromiseWithdrawnLate) {
                    s.ver[s.cur as usize].promised = after;
                }
                s.tp_flipped = false;
            }
            Step::TpUninstall => s.ver[s.cur as usize].bp &= s.traced,
        }
        s.loader += 1;
    }
    /// The stager's `trace_pattern` has begun (`TpStage` taken) and not ended (`TpUninstall`
    /// not taken): the loader's next step is inside its block (a function of the loader's
    /// position, so no state of its own).
    fn in_tp(&self, s: &LState) -> bool {
        let l = s.loader as usize;
        (1..=6).any(|d| l >= d && self.script[l - d] == Step::TpStage)
    }
    /// The active half's patterns of a version built with `traced` (tracked with more than
    /// one function only, [`Ver::on`]).
    fn active(&self, traced: u8) -> u8 {
        if self.funcs > 1 {
            traced
        } else {
            0
        }
    }
    /// A call of function `f` in `ver` runs its breakpoints: its instruction is patched and
    /// (with more than one function) the active half holds its pattern.
    fn runs(&self, ver: &Ver, f: u8) -> bool {
        let b = 1u8 << f;
        ver.bp & b != 0 && (self.funcs == 1 || ver.on & b != 0)
    }
    /// The first step of a local call or a charge: a read in version `v`'s code area (its
    /// first instruction or its slot), a use after free if the version was freed.
    fn read(s: &LState, n: &mut LState, v: u8) -> Ver {
        let ver = s.ver[v as usize];
        n.uaf |= ver.freed;
        ver
    }
    /// The second step of a local call or a charge (the scheduler is idle after it): the
    /// version and the nodes the first step found (the patched instruction's chain, the
    /// linked slot). Touching a freed version, or a found node freed since, is a use after
    /// free.
    fn touch(s: &LState, n: &mut LState, i: usize) -> (u8, u8) {
        let (Sched::Local(v, found, _) | Sched::Charge(v, found) | Sched::Ret(v, found)) =
            s.procs[i].sched
        else {
            unreachable!()
        };
        let ver = s.ver[v as usize];
        n.uaf |= ver.freed || (found & ver.node_freed) != 0;
        n.procs[i].sched = Sched::Idle;
        (v, found)
    }
    /// The kill of scheduler `i`'s running process: its frames are dropped without returning,
    /// and it makes no more calls.
    fn exit(n: &mut LState, i: usize) {
        let p = &mut n.procs[i];
        p.kill = false;
        p.held = 0;
        p.calls_left = 0;
        p.locals_left = 0;
        p.may_stay = false;
        p.pbt = 0;
        p.frame = 0;
        n.killed = true;
    }
    /// A scheduler step that ends idle: if a wait is open and the scheduler now sleeps, it has
    /// passed.
    fn settle(s: &mut LState, i: usize) {
        if s.wait_open && Self::sched_asleep(s, i) {
            s.procs[i].passed = true; // going to sleep
        }
    }
}

impl Model for LoadModel {
    type State = LState;
    type Action = LAction;

    fn init_states(&self) -> Vec<LState> {
        [(1u8 << self.funcs) - 1, 0]
            .into_iter()
            .map(|traced| {
                let mut ver = [Ver::default(); MAX_VERS];
                let (cur, a) = if self.fresh {
                    (0, 0)
                } else {
                    ver[1] = Ver {
                        bp: traced,
                        promised: traced,
                        on: self.active(traced),
                        published: true,
                        linked: if traced != 0 { self.all_sessions() } else { 0 },
                        ..Ver::default()
                    };
                    (1, 1)
                };
                let mut procs = [Proc {
                    sched: Sched::Idle,
                    calls_left: 0,
                    held: 0,
                    may_stay: false,
                    locals_left: 0,
                    passed: false,
                    kill: false,
                    pbt: 0,
                    frame: 0,
                }; MAX_SCHEDS];
                let mut parked = [[None; MAX_PARKED]; MAX_SCHEDS];
                for i in self.procs() {
                    procs[i].calls_left = self.calls;
                    procs[i].may_stay = true;
                    procs[i].locals_left = self.locals;
                    for q in parked[i].iter_mut().take(self.procs as usize - 1) {
                        *q = Some(Parked {
                            calls_left: self.calls,
                            held: 0,
                            may_stay: true,
                            locals_left: self.locals,
                            kill: false,
                            pbt: 0,
                            frame: 0,
                        });
                    }
                }
                LState {
                    traced,
                    ix: 0,
                    addr: [a, a, if self.code_ix == CodeIx::Three { a } else { 0 }],
                    ver,
                    cur,
                    loader: 0,
                    blocked: false,
                    wait_open: false,
                    procs,
                    parked,
                    mix: false,
                    uaf: false,
                    early: false,
                    ran_last: false,
                    ran_old_local: false,
                    killed: false,
                    charged_old: false,
                    charged_ret: false,
                    charged_hit: false,
                    live: self.all_sessions(),
                    destroyed_old: false,
                    exp_traced: traced != 0 && self.global,
                    exp_tramp: [traced != 0 && self.global; 3],
                    exp_target: a,
                    exp_node_freed: false,
                    exp_to_new: false,
                    exp_ran: false,
                    exp_cleared_after_run: false,
                    meta_old: false,
                    cleared_held: false,
                    charged_cleared: false,
                    oracle_cleared: false,
                    oracle_diff: false,
                    lost_call: false,
                    frame_old: false,
                    switched_old: false,
                    killed_switched_out: false,
                    killed_two_switched_out: false,
                    old_twice: false,
                    tp_flipped: false,
                    tp_window_call: false,
                    per_fn_promise: false,
                    col: 0,
                    col_ver: 0,
                    col_nodes: 0,
                    collected_old: false,
                    col_saw_old: false,
                }
            })
            .collect()
    }

    fn actions(&self, s: &LState, out: &mut Vec<LAction>) {
        if s.mix || s.uaf || s.early {
            return; // a violation ends the run
        }
        if (s.loader as usize) < self.script.len()
            && self.loader_enabled(s)
            && self.collector_lets_loader(s)
        {
            out.push(LAction::Loader(s.loader));
        }
        // The collector is a process: it does not run while thread progress is blocked.
        if self.collect && !s.blocked {
            let may_seize = self.perm_free[s.loader as usize]
                || self.is(LoadSpecMutant::CollectWithoutPermission);
            match s.col {
                0 if may_seize => out.push(LAction::Collect),
                1 => out.push(LAction::CollectRead),
                _ => {}
            }
        }
        for i in self.procs() {
            let p = &s.procs[i];
            let n = i as u8;
            match p.sched {
                Sched::Idle => {
                    if p.calls_left > 0 && !s.blocked {
                        out.push(LAction::ReadIx(n));
                    }
                    if p.held != 0 && p.locals_left > 0 && !s.blocked {
                        out.extend((0..self.funcs).map(|f| LAction::LocalRead(n, f)));
                    }
                    if (p.held != 0 || p.pbt != 0 || p.frame != 0) && !s.blocked {
                        out.push(LAction::Return(n));
                    }
                    if self.tail_calls && p.held != 0 && (p.pbt != 0 || p.frame != 0) && !s.blocked
                    {
                        out.push(LAction::TailOut(n));
                    }
                    if s.wait_open && !p.passed {
                        out.push(LAction::Progress(n));
                    }
                    if p.kill {
                        out.push(LAction::Exit(n));
                    }
                    if p.pbt != 0 && !s.blocked && !Self::asleep(p) {
                        out.push(LAction::ChargeRead(n));
                    }
                    if self.procs > 1 && !s.blocked && !Self::sched_asleep(s, i) {
                        out.push(LAction::Switch(n));
                        if self.any_switch_in {
                            out.extend((1..self.procs - 1).map(|k| LAction::SwitchIn(n, k)));
                        }
                    }
                }
                Sched::HasIx(_) => out.push(LAction::ReadAddr(n)),
                Sched::HasVer(_) => {
                    for f in 0..self.funcs {
                        out.push(LAction::Run(n, f));
                        if p.may_stay && p.held == 0 {
                            out.push(LAction::RunStay(n, f));
                        }
                    }
                }
                Sched::Local(..) => out.push(LAction::LocalRun(n)),
                Sched::Meta(..) => out.push(LAction::MetaRead(n)),
                Sched::Tramp => out.push(LAction::TrampRun(n)),
                Sched::Charge(..) => out.push(LAction::ChargeRun(n)),
                Sched::Ret(..) => out.push(LAction::ReturnRun(n)),
            }
        }
    }

    fn next_state(&self, s: &LState, a: LAction) -> Option<LState> {
        let mut n = s.clone();
        let last = if self.fresh {
            self.loads
        } else {
            self.loads + 1
        };
        match a {
            LAction::Loader(_) => self.loader_step(&mut n),
            LAction::ReadIx(i) => n.procs[i as usize].sched = Sched::HasIx(s.ix),
            LAction::ReadAddr(i) => {
                let i = i as usize;
                let Sched::HasIx(x) = s.procs[i].sched else {
                    unreachable!()
                };
                if s.exp_tramp[x as usize] {
                    n.procs[i].sched = Sched::Tramp;
                    return Some(n);
                }
                let v = s.addr[x as usize];
                let p = &mut n.procs[i];
                if v == 0 {
                    p.sched = Sched::Idle;
                    p.calls_left -= 1;
                    Self::settle(&mut n, i);
                } else {
                    p.sched = Sched::HasVer(v);
                }
            }
            LAction::Run(i, f) | LAction::RunStay(i, f) => {
                let i = i as usize;
                let Sched::HasVer(v) = s.procs[i].sched else {
                    unreachable!()
                };
                let ver = s.ver[v as usize];
                let hit = self.runs(&ver, f);
                let fb = 1u8 << f;
                n.uaf |= ver.freed || (hit && (ver.linked & ver.node_freed) != 0);
                n.oracle_diff |= hit && s.oracle_cleared;
                n.mix |= ver.promised & fb != 0 && !hit;
                n.early |= !ver.published;
                n.ran_last |= v == last;
                // A call of a function whose pattern the stager is changing may run either way.
                n.lost_call |= self.fold_lw1
                    && s.traced & fb != 0
                    && self.traced_load == TracedLoad::Carry
                    && !hit
                    && !(fb & TP_FUNCS != 0 && self.in_tp(s));
                n.tp_window_call |= s.tp_flipped && fb & TP_FUNCS != 0 && v == s.cur;
                n.per_fn_promise |= ver.promised != 0 && ver.promised & fb == 0;
                let pbt = s.procs[i].pbt;
                let p = &mut n.procs[i];
                p.sched = Sched::Idle;
                p.calls_left -= 1;
                if matches!(a, LAction::RunStay(..)) {
                    p.held = v;
                    p.may_stay = false;
                    if self.local_trace && hit {
                        p.frame = v;
                    }
                    if self.call_time && hit {
                        p.pbt = v;
                    }
                }
                if self.call_time && hit && pbt != 0 {
                    // The next hit charges the function the call_time state names (read its
                    // slot now, add to its nodes next); the call's return sets the state back
                    // to it (`erts_call_trace_return`'s `pbt->ci = prev_info`).
                    let linked = Self::read(s, &mut n, pbt).linked;
                    n.oracle_diff |= linked != 0 && s.oracle_cleared;
                    n.charged_hit |= linked != 0 && pbt != s.cur;
                    n.charged_cleared |= s.ver[pbt as usize].cleared;
                    n.procs[i].sched = Sched::Charge(pbt, linked);
                    return Some(n);
                }
                Self::settle(&mut n, i);
            }
            LAction::LocalRead(i, f) => {
                let v = s.procs[i as usize].held;
                let ver = Self::read(s, &mut n, v);
                // The patched instruction's chain: the nodes linked (0: not patched).
                let chain = if self.runs(&ver, f) {
                    ver.linked.max(1)
                } else {
                    0
                };
                n.oracle_diff |= chain != 0 && s.oracle_cleared;
                n.procs[i as usize].sched = if self.meta && chain != 0 {
                    Sched::Meta(v, chain, f)
                } else {
                    Sched::Local(v, chain, f)
                };
            }
            LAction::LocalRun(i) => {
                let i = i as usize;
                let Sched::Local(_, _, f) = s.procs[i].sched else {
                    unreachable!()
                };
                let (v, chain) = Self::touch(s, &mut n, i);
                let patched = chain != 0;
                n.mix |= s.ver[v as usize].promised & (1u8 << f) != 0 && !patched;
                n.ran_old_local |= v != s.cur;
                let p = &mut n.procs[i];
                p.locals_left -= 1;
                if self.call_time && patched {
                    p.pbt = v;
                }
                if self.local_trace && patched {
                    // `do_call_trace` pushes a `beam_return_trace` frame (the caller's, in
                    // the same version, is below it: one frame stands for both here).
                    p.frame = v;
                }
                Self::settle(&mut n, i);
            }
            LAction::MetaRead(i) => {
                // `do_meta_trace`: the tracer read from the node's `meta_tracer` cell.
                let Sched::Meta(v, chain, f) = s.procs[i as usize].sched else {
                    unreachable!()
                };
                let ver = s.ver[v as usize];
                n.uaf |= ver.freed || (chain & ver.node_freed) != 0 || ver.cell_freed;
                n.meta_old |= v != s.cur;
                n.procs[i as usize].sched = Sched::Local(v, chain, f);
            }
            LAction::TrampRun(i) => {
                // `i_generic_breakpoint` in the export entry: its breakpoint node, then the
                // continuation (one field for every code index).
                n.uaf |= s.exp_node_freed;
                n.exp_ran = true;
                n.oracle_diff |= s.oracle_cleared;
                let v = s.exp_target;
                n.exp_to_new |= v == last;
                let p = &mut n.procs[i as usize];
                if v == 0 {
                    p.sched = Sched::Idle;
                    p.calls_left -= 1;
                    Self::settle(&mut n, i as usize);
                } else {
                    p.sched = Sched::HasVer(v);
                }
            }
            LAction::ChargeRead(i) => {
                let v = s.procs[i as usize].pbt;
                let linked = Self::read(s, &mut n, v).linked;
                n.oracle_diff |= linked != 0 && s.oracle_cleared;
                n.charged_cleared |= s.ver[v as usize].cleared;
                n.charged_old |= linked != 0 && v != s.cur;
                n.procs[i as usize].sched = Sched::Charge(v, linked);
            }
            LAction::ChargeRun(i) => {
                Self::touch(s, &mut n, i as usize);
                Self::settle(&mut n, i as usize);
            }
            LAction::Return(i) => {
                let frame = s.procs[i as usize].frame;
                if frame != 0 {
                    // The return trace frame runs: it reads the function's code info (its
                    // name) in the version's code area, then is popped.
                    Self::read(s, &mut n, frame);
                    n.frame_old |= frame != s.cur && s.ver[frame as usize].bp == 0;
                    n.procs[i as usize].frame = 0;
                }
                let pbt = s.procs[i as usize].pbt;
                if self.call_time && pbt != 0 {
                    // The charge at return (`erts_call_trace_return`): read the slot of the
                    // function the state names, then (ReturnRun) add to its nodes.
                    let linked = Self::read(s, &mut n, pbt).linked;
                    n.oracle_diff |= linked != 0 && s.oracle_cleared;
                    n.charged_ret |= linked != 0 && pbt != s.cur;
                    n.charged_cleared |= s.ver[pbt as usize].cleared;
                    n.procs[i as usize].sched = Sched::Ret(pbt, linked);
                } else {
                    n.procs[i as usize].held = 0;
                    n.procs[i as usize].pbt = 0;
                    Self::settle(&mut n, i as usize);
                }
            }
            LAction::ReturnRun(i) => {
                Self::touch(s, &mut n, i as usize);
                n.procs[i as usize].held = 0;
                n.procs[i as usize].pbt = 0;
                Self::settle(&mut n, i as usize);
            }
            LAction::TailOut(i) => {
                // The tail call leaves the version: no frame of it stays on the stack, so
                // `check_process_code` no longer finds the process there by its return
                // addresses; the call_time state (and the charge at return of the frame
                // below) still names it, and a return trace frame stays on the stack.
                let p = &mut n.procs[i as usize];
                p.held = 0;
                p.locals_left = 0;
            }
            LAction::Progress(i) => n.procs[i as usize].passed = true,
            LAction::Switch(i) | LAction::SwitchIn(i, _) => {
                let i = i as usize;
                // The first switched-out process in (`any_switch_in`: the one at place `k`), the
                // others keep their order, the running one out last (`Scheduler::swap_current`).
                let k = match a {
                    LAction::SwitchIn(_, k) => k as usize,
                    _ => 0,
                };
                let q = s.parked[i][k].expect("a switched-out process");
                let p = &mut n.procs[i];
                let out = Parked {
                    calls_left: p.calls_left,
                    held: p.held,
                    may_stay: p.may_stay,
                    locals_left: p.locals_left,
                    kill: p.kill,
                    pbt: p.pbt,
                    frame: p.frame,
                };
                (p.calls_left, p.held, p.may_stay, p.locals_left) =
                    (q.calls_left, q.held, q.may_stay, q.locals_left);
                (p.kill, p.pbt, p.frame) = (q.kill, q.pbt, q.frame);
                let old = |v: u8| v != 0 && v != s.cur;
                n.switched_old |= old(out.held) || old(out.pbt);
                let last = self.procs as usize - 2;
                n.parked[i].copy_within(k + 1..=last, k);
                n.parked[i][last] = Some(out);
                if q.kill && q.pbt != 0 && self.is(LoadSpecMutant::SwitchInChargesKilled) {
                    // The mutant: charged before its signals (the kill stays pending).
                    let linked = Self::read(s, &mut n, q.pbt).linked;
                    n.procs[i].sched = Sched::Charge(q.pbt, linked);
                    return Some(n);
                }
                if q.kill {
                    // Its signals first: the kill ends it before it runs (no charge: it was
                    // charged when switched out, and schedule-in reads no breakpoint).
                    Self::exit(&mut n, i);
                    n.killed_switched_out = true;
                }
                Self::settle(&mut n, i);
            }
            LAction::Exit(i) => {
                Self::exit(&mut n, i as usize);
                Self::settle(&mut n, i as usize);
            }
            LAction::Collect => {
                // The legacy session's node in the current version's slot (the bit of the
                // first session).
                let v = s.cur;
                let nodes = if v == 0 {
                    0
                } else {
                    Self::read(s, &mut n, v).linked & 1
                };
                // ERTS's flip at the prepare reaches every breakpoint: are any of old code?
                n.col_saw_old |= (1..MAX_VERS)
                    .any(|w| w != v as usize && s.ver[w].linked != 0 && !s.ver[w].freed);
                if nodes == 0 {
                    n.col = 2; // `undefined` or `false`: nothing to collect
                } else {
                    (n.col, n.col_ver, n.col_nodes) = (1, v, nodes);
                }
            }
            LAction::CollectRead => {
                let ver = s.ver[s.col_ver as usize];
                n.uaf |= ver.freed || (s.col_nodes & ver.node_freed) != 0;
                let cur = s.cur;
                let old = |v: u8| v != 0 && v != cur;
                n.collected_old |= self.procs().any(|i| {
                    let p = &s.procs[i];
                    old(p.held)
                        || old(p.pbt)
                        || Self::parked(s, i).any(|q| old(q.held) || old(q.pbt))
                });
                n.col = 2;
            }
        }
        Some(n)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut v = vec![
            Property::always("no-mix", |_, s: &LState| !s.mix),
            Property::always("no-use-after-free", |_, s: &LState| !s.uaf),
            Property::always("no-uncommitted-call", |_, s: &LState| !s.early),
        ];
        if self.refine_cl1 {
            v.push(Property::always("refines-cl1", |_, s: &LState| {
                !s.oracle_diff
            }));
        }
        if self.fold_lw1 {
            v.push(Property::always(REMOTE_CALLS_COUNTED, |_, s: &LState| {
                !s.lost_call
            }));
        }
        if self.checks_old_once() {
            v.push(Property::always(ONE_OLD_VERSION, |_, s: &LState| {
                !s.old_twice
            }));
        }
        if self.collect {
            v.push(Property::always(COLLECT_CURRENT_ONLY, |_, s: &LState| {
                !s.col_saw_old
            }));
        }
        for name in self.reachability() {
            v.push(Property::sometimes(name, reached_fn(name)));
        }
        v
    }
}

/// The condition of a reachability property ([`LoadModel::reachability`]).
fn reached_fn(name: &'static str) -> fn(&LoadModel, &LState) -> bool {
    match name {
        "calls-new-version" => |_, s| s.ran_last,
        "local-call-in-old-code" => |_, s| s.ran_old_local,
        "purge-kills" => |_, s| s.killed,
        "charge-in-old-code" => |_, s| s.charged_old,
        "charge-at-return-in-old-code" => |_, s| s.charged_ret,
        "charge-at-hit-in-old-code" => |_, s| s.charged_hit,
        "destroy-in-old-code" => |_, s| s.destroyed_old,
        "clear-in-old-code" => |_, s| s.cleared_held,
        "charge-finds-cleared-slot" => |_, s| s.charged_cleared,
        "export-bp-cleared-after-a-call" => |_, s| s.exp_cleared_after_run,
        "export-bp-to-new-version" => |_, s| s.exp_to_new,
        "meta-in-old-code" => |_, s| s.meta_old,
        "return-frame-in-old-code" => |_, s| s.frame_old,
        "switched-out-in-old-code" => |_, s| s.switched_old,
        "purge-kills-switched-out" => |_, s| s.killed_switched_out,
        "purge-kills-two-switched-out" => |_, s| s.killed_two_switched_out,
        "call-under-pattern-change" => |_, s| s.tp_window_call,
        "promise-per-function" => |_, s| s.per_fn_promise,
        "collect-beside-old-code" => |_, s| s.collected_old,
        _ => unreachable!("no reachability property {name}"),
    }
}

impl LoadModel {
    /// The reachability properties of the model (each must be found, else the baseline is
    /// vacuous): a call reached the version of the last load (`calls-new-version`), a local
    /// call ran a version after it became old (`local-call-in-old-code`), with `Kill` a purge
    /// killed a process (`purge-kills`); with `call_time` and `Carry` a charge at
    /// schedule-out, at return and at the next hit each read the linked slot of an old
    /// version (`charge-in-old-code`, `charge-at-return-in-old-code`,
    /// `charge-at-hit-in-old-code`), with `ClearErts` a charge read the slot the load cleared
    /// (`charge-finds-cleared-slot`); with 2 sessions a destroy began while a process was in
    /// old code (`destroy-in-old-code`); with `ClearErts` the clear found a process in the
    /// version (`clear-in-old-code`), and with `global` too a call had run the export
    /// breakpoint before the clear (`export-bp-cleared-after-a-call`); with `global` and
    /// `Carry` a call ran the export breakpoint into the version of the last load
    /// (`export-bp-to-new-version`); with `meta` and `Carry` a local call read the meta cell of
    /// a version no longer current (`meta-in-old-code`).
    pub fn reachability(&self) -> Vec<&'static str> {
        let carry = self.traced_load == TracedLoad::Carry;
        let mut v = vec!["calls-new-version", "local-call-in-old-code"];
        if self.purge == PurgeKind::Kill {
            v.push("purge-kills");
        }
        if self.call_time && carry {
            v.extend([
                "charge-in-old-code",
                "charge-at-return-in-old-code",
                "charge-at-hit-in-old-code",
            ]);
        }
        if self.sessions == 2 {
            v.push("destroy-in-old-code");
        }
        if !carry {
            v.push("clear-in-old-code");
            if self.call_time {
                v.push("charge-finds-cleared-slot");
            }
            if self.global {
                v.push("export-bp-cleared-after-a-call");
            }
        }
        if carry && self.global {
            v.push("export-bp-to-new-version");
        }
        if carry && self.meta {
            v.push("meta-in-old-code");
        }
        if self.local_trace {
            v.push("return-frame-in-old-code");
        }
        if self.funcs > 1 {
            v.extend(["call-under-pattern-change", "promise-per-function"]);
        }
        if self.procs >= 2 {
            v.push("switched-out-in-old-code");
            if self.purge == PurgeKind::Kill {
                v.push("purge-kills-switched-out");
            }
        }
        if self.procs >= 3 && self.purge == PurgeKind::Kill {
            v.push("purge-kills-two-switched-out");
        }
        if self.collect {
            v.push("collect-beside-old-code");
        }
        v
    }
    /// Whether `one-old-version` is checked: with two loads or more and soft purges (with
    /// killing purges every purge frees the old version before the next load, by the script).
    fn checks_old_once(&self) -> bool {
        self.loads >= 2 && self.purge == PurgeKind::Soft
    }
}

/// The safety properties of every load model.
pub const SAFETY: [&str; 3] = ["no-mix", "no-use-after-free", "no-uncommitted-call"];
/// The refinement property of the models with `refine_cl1` (after [`SAFETY`] in
/// [`LoadRun::violated`]).
pub const REFINES_CL1: &str = "refines-cl1";
/// The count property of the models with `fold_lw1` (after [`REFINES_CL1`] in
/// [`LoadRun::violated`]): every remote call of the traced module (`Carry`) ran a version with
/// its breakpoints (LP3, docs/nonblocking-load.md §2).
pub const REMOTE_CALLS_COUNTED: &str = "remote-calls-counted";
/// The property of the models with two loads or more and soft purges (after
/// [`REMOTE_CALLS_COUNTED`] in [`LoadRun::violated`]): no load commits while an old version of
/// the module is still unpurged, so a version is made old at most once (ERTS refuses such a
/// load with `not_purged`).
pub const ONE_OLD_VERSION: &str = "one-old-version";

/// The property of the models with `collect` (after [`ONE_OLD_VERSION`] in
/// [`LoadRun::violated`]): when the collector prepares, no version but the current one has a
/// breakpoint node linked, so the collection's flip, which reaches every breakpoint, reaches
/// none of old code, and its temporary objects are the current version's only (what the main
/// model's collection checks, `spec/src/model/collect.rs`).
pub const COLLECT_CURRENT_ONLY: &str = "collect-current-only";

/// The outcome of one exhaustive run of a [`LoadModel`].
#[derive(Clone, Debug)]
pub struct LoadRun {
    /// The safety properties violated (in the order of [`SAFETY`]).
    pub violated: Vec<&'static str>,
    /// Whether every reachability property of the model was found: a call reached the version
    /// of the last load (`calls-new-version`), a local call ran a version after it became old
    /// (`local-call-in-old-code`), with `Kill` a purge killed a process (`purge-kills`), and
    /// with `call_time` a charge at schedule-out, at return and at the next hit each read the
    /// linked slot of an old version (`charge-in-old-code`, `charge-at-return-in-old-code`,
    /// `charge-at-hit-in-old-code`), and with 2 sessions a destroy began while a process was in
    /// old code (`destroy-in-old-code`).
    pub reached: bool,
    pub states: usize,
    pub unique: usize,
    pub depth: usize,
    pub secs: f64,
}

impl LState {
    /// The representative of the state's class under `any_switch_in` (docs/cutoff.md §8): each
    /// scheduler's switched-out processes sorted (any of them may switch in next, and nothing
    /// else in the state names one by its place: the purge's check marks a kill on the process
    /// itself, `Parked::kill`). Schedulers are not sorted here (see
    /// [`LState::representative_scheds`]). Sound only with `any_switch_in` on: under the
    /// rotation the order is the order they switch in.
    pub fn representative(&self) -> LState {
        let mut s = self.clone();
        for parked in s.parked.iter_mut() {
            // `None` sorts first: keep the switched-out ones in front, as the model has them.
            let n = parked.iter().flatten().count();
            parked[..n].sort();
        }
        s
    }
    /// [`LState::representative`] with the two schedulers sorted too (each with its running
    /// process and its switched-out ones: the state names a scheduler only by its index in
    /// `procs` and `parked`; the wait's `passed` and the kill flags are in them, the
    /// violation and reachability flags are per state). For a model with 2 schedulers only:
    /// with one, the unused second slot would move.
    pub fn representative_scheds(&self) -> LState {
        self.representative().schedulers_sorted()
    }
    /// The two schedulers sorted, each keeping the order of its switched-out processes: the
    /// symmetry of the rotation (a switch brings in the first switched-out process only, so
    /// their order is part of the state, docs/cutoff.md §8), for a model with 2 schedulers
    /// without `any_switch_in`.
    pub fn schedulers_sorted(&self) -> LState {
        let mut s = self.clone();
        let key = |s: &LState, i: usize| (s.procs[i], s.parked[i]);
        if key(&s, 1) < key(&s, 0) {
            s.procs.swap(0, 1);
            s.parked.swap(0, 1);
        }
        s
    }
}

impl LoadModel {
    /// The model's name in results rows and shard keys: `load-blocking` / `load-nonblocking`
    /// for [`LoadModel::classic`], and `load-nonblocking-kill` / `load-nonblocking-3ix-kill`
    /// for the others (the index scheme when `Three`, the purge when `Kill`), with
    /// `-sessions` for 2 sessions, `-call-time` when `call_time`, `-tail-call` when
    /// `tail_calls`, `-check-pbt` when `check_pbt`, then the other switches' suffixes, last
    /// `-procs2` / `-procs3` with two / three processes per scheduler (the loads are in the
    /// bound, not the name).
    pub fn name(&self) -> String {
        let mut n = format!("load-{}", self.protocol.name());
        if self.code_ix == CodeIx::Three {
            n.push_str("-3ix");
        }
        if self.purge == PurgeKind::Kill {
            n.push_str("-kill");
        }
        if self.sessions == 2 {
            n.push_str("-sessions");
        }
        if self.call_time {
            n.push_str("-call-time");
        }
        if self.tail_calls {
            n.push_str("-tail-call");
        }
        if self.check_pbt {
            n.push_str("-check-pbt");
        }
        if self.traced_load == TracedLoad::ClearErts {
            n.push_str("-clear-erts");
        }
        if self.meta {
            n.push_str("-meta");
        }
        if self.global {
            n.push_str("-global");
        }
        if self.fold_lw1 {
            n.push_str("-fold-lw1");
        }
        if self.local_trace {
            n.push_str("-local-trace");
        }
        if self.procs > 1 {
            n.push_str(&format!("-procs{}", self.procs));
        }
        if self.any_switch_in {
            n.push_str("-any-switch-in");
        }
        if self.funcs > 1 {
            n.push_str("-perfn");
        }
        if self.collect {
            n.push_str("-collect");
        }
        n
    }

    /// The bounds of the model, as recorded next to its verdict.
    pub fn bound(&self) -> String {
        format!(
            "calls={} loads={}{} schedulers={}{}{}{}",
            self.calls,
            self.loads,
            if self.fresh { " fresh" } else { "" },
            self.schedulers,
            if self.procs == 1 {
                String::new()
            } else {
                format!(" procs={}", self.procs)
            },
            if self.locals == LOCALS {
                String::new()
            } else {
                format!(" locals={}", self.locals)
            },
            if self.funcs == 1 {
                String::new()
            } else {
                format!(" funcs={}", self.funcs)
            }
        )
    }

    /// Check the model exhaustively with DFS and symmetry (`any_switch_in` on:
    /// [`LState::representative`], and with 2 schedulers [`LState::representative_scheds`]
    /// when `scheds` is set), on `threads` threads. stateright 0.31 applies a `symmetry_fn` in
    /// its DFS and simulation checkers only (`checker/dfs.rs`: the representative's
    /// fingerprint is what is deduplicated, the path goes on with the state itself, so a
    /// counterexample is a path of the model); its BFS ignores it.
    pub fn check_symmetric(&self, scheds: bool, threads: usize) -> LoadRun {
        use stateright::Checker;
        assert!(
            self.any_switch_in,
            "the representative is a symmetry only with any_switch_in"
        );
        assert!(!scheds || self.schedulers == 2);
        let t = std::time::Instant::now();
        let m = self.clone();
        let reach = self.reachability();
        let f = if scheds {
            LState::representative_scheds
        } else {
            LState::representative
        };
        let c = m
            .checker()
            .threads(threads)
            .symmetry_fn(f)
            .spawn_dfs()
            .join();
        self.load_run(&c, &reach, t)
    }

    /// Check the model exhaustively (BFS, one thread).
    pub fn check_all(&self) -> LoadRun {
        use stateright::Checker;
        let t = std::time::Instant::now();
        let m = self.clone();
        let reach = self.reachability();
        let c =
            bpspec_reference::watchdog::guard(&format!("stateright {}", self.name()), move || {
                m.checker().spawn_bfs().join()
            });
        self.load_run(&c, &reach, t)
    }
    fn load_run(
        &self,
        c: &impl stateright::Checker<LoadModel>,
        reach: &[&'static str],
        t: std::time::Instant,
    ) -> LoadRun {
        LoadRun {
            violated: SAFETY
                .into_iter()
                .chain(self.refine_cl1.then_some(REFINES_CL1))
                .chain(self.fold_lw1.then_some(REMOTE_CALLS_COUNTED))
                .chain(self.checks_old_once().then_some(ONE_OLD_VERSION))
                .chain(self.collect.then_some(COLLECT_CURRENT_ONLY))
                .filter(|p| c.discovery(p).is_some())
                .collect(),
            reached: reach.iter().all(|p| c.discovery(p).is_some()),
            states: c.state_count(),
            unique: c.unique_state_count(),
            depth: c.max_depth(),
            secs: t.elapsed().as_secs_f64(),
        }
    }
}
