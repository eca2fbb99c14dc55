//! The stateright model of loading a traced module (`bpspec_spec::load`): every baseline of the
//! default plan holds its properties exhaustively with every reachability property found, every
//! load mutant is killed by its property, and the index schemes compare as
//! docs/nonblocking-load.md §8 says (what the third code index buys).

use bpspec_reference::LoadProtocol;
use bpspec_spec::load::{
    CodeIx, LAction, LState, LoadModel, LoadRun, LoadSpecMutant, PurgeKind, TracedLoad,
};
use stateright::Model;

fn run(m: &LoadModel) -> LoadRun {
    let r = m.check_all();
    show(m, "", &r);
    r
}

/// Prints run `r` of `m` (its checker named by `how`): verdicts, states, depth, seconds.
fn show(m: &LoadModel, how: &str, r: &LoadRun) {
    eprintln!(
        "spec {} [{}] {}{how}: {:?} violated, reached={}, {} states, {} unique, depth {}, {:.2} s",
        m.name(),
        m.bound(),
        m.mutant.map_or("baseline", |mu| mu.name()),
        r.violated,
        r.reached,
        r.states,
        r.unique,
        r.depth,
        r.secs
    );
}

/// The most processes (schedulers times processes per scheduler) of a plan model that a build
/// with debug assertions (`make test`'s `cargo test`) runs (`LoadModel::three_procs`, 3 on one
/// scheduler, is 0.2 million unique states); the bigger one (`LoadModel::two_procs_two_scheds`,
/// 4 processes, 4.9 million unique states) runs in `make check`'s spec part (`bpspec check`)
/// and in `two_processes_on_two_schedulers` (`--ignored`).
const DEBUG_MAX_PROCS: u8 = 3;

#[test]
fn every_plan_model_holds() {
    for m in LoadModel::plan() {
        if cfg!(debug_assertions) && m.schedulers * m.procs > DEBUG_MAX_PROCS {
            eprintln!("{}: skipped in a build with debug assertions", m.name());
            continue;
        }
        let r = run(&m);
        assert!(
            r.violated.is_empty(),
            "{}: {:?} violated ({} states)",
            m.name(),
            r.violated,
            r.unique
        );
        assert!(
            r.reached,
            "{}: a reachability property was not found",
            m.name()
        );
    }
}

#[test]
fn the_plan_has_both_protocols_and_both_index_schemes() {
    let plan = LoadModel::plan();
    for protocol in LoadProtocol::ALL {
        assert!(plan.iter().any(|m| m.protocol == protocol));
    }
    assert!(plan
        .iter()
        .any(|m| m.code_ix == CodeIx::Three && m.purge == PurgeKind::Kill && m.loads >= 2));
    assert!(plan
        .iter()
        .any(|m| m.code_ix == CodeIx::Two && m.purge == PurgeKind::Kill && m.loads >= 2));
}

#[test]
fn every_load_mutant_is_killed() {
    for mu in LoadSpecMutant::ALL {
        let m = mu.model();
        assert_eq!(m.protocol, mu.protocol(), "{}", mu.name());
        let r = run(&m);
        assert!(
            r.violated.contains(&mu.killed_by()),
            "{} survived ({} states; found {:?})",
            mu.name(),
            r.unique,
            r.violated
        );
        if mu.in_engine() {
            assert!(
                bpspec_reference::Mutant::from_name(mu.name()).is_some(),
                "{}: the engine has a mutant of the same name",
                mu.name()
            );
        }
    }
}

/// What the third code index buys: with ERTS's waits (the code barrier before each commit, no
/// wait after it, the purge waiting before its check), two indices let the next load stage the
/// slot a scheduler that has not seen the last commit still reads (`no-uncommitted-call`), and
/// three do not; bpspec's two indices hold only with LW1 after each commit, the wait the third
/// index lets ERTS put before the commit instead. The first three are rows of the plan
/// (`every_plan_model_holds`, `every_load_mutant_is_killed`); the fourth is here.
#[test]
fn what_the_third_code_index_buys() {
    let plan = LoadModel::plan();
    assert!(plan.iter().any(|m| m.name() == LoadModel::erts().name()));
    assert!(plan.iter().any(|m| m.name() == LoadModel::kill().name()));
    assert_eq!(
        LoadSpecMutant::TwoCodeIx.model().name(),
        LoadModel::erts().name()
    );
    assert_eq!(LoadSpecMutant::TwoCodeIx.killed_by(), "no-uncommitted-call");
    let no_lw1 = run(&LoadModel::kill().with_mutant(LoadSpecMutant::SkipWaitAfterCommit));
    assert!(no_lw1.violated.contains(&"no-uncommitted-call"));
}

/// The killing purge needs its wait for the exits under ERTS's order (wait, check, kill, wait
/// for the exits, free) as under bpspec's (`every_load_mutant_is_killed` runs the mutant on
/// `LoadModel::kill`).
#[test]
fn the_kill_needs_its_wait_under_both_index_schemes() {
    assert_eq!(
        LoadSpecMutant::PurgeKillSkipDown.model().name(),
        LoadModel::kill().name()
    );
    let r = run(&LoadModel::erts().with_mutant(LoadSpecMutant::PurgeKillSkipDown));
    assert!(r.violated.contains(&"no-use-after-free"));
}

/// The sizes of the killing-purge models around the plan's bounds (`--ignored`; the figures
/// are in docs/nonblocking-load.md §8).
#[test]
#[ignore]
fn state_space_around_the_plan() {
    for base in [LoadModel::kill(), LoadModel::erts()] {
        for (calls, loads, schedulers) in [(3, 3, 1), (2, 2, 2), (2, 3, 2), (3, 2, 2), (3, 3, 2)] {
            let m = base.clone().with(|m| {
                m.calls = calls;
                m.loads = loads;
                m.fresh = true;
                m.schedulers = schedulers;
            });
            let r = run(&m);
            assert!(r.violated.is_empty());
        }
    }
}

/// call_time on the loaded versions: a process that stays in a version after running a patched
/// function is charged at schedule-out (its call_time state names that function: a read of the
/// slot, then a write to the node), across the load that makes the version old, the removal of
/// its breakpoints and the purge (refused, or the process killed and its state discarded).
/// The `-call-time` rows of the plan hold with a charge of old code reached
/// (`every_plan_model_holds`), and so do the first models with call_time (the Blocking one
/// without reaching it); the removal's wait covers the
/// charges: with no local calls, `load-clear-old-at-once` survives without call_time (nothing
/// else reads the old node) and is killed by a charge with it.
#[test]
fn call_time_charges_in_old_code() {
    assert_eq!(
        LoadModel::plan()
            .iter()
            .filter(|m| {
                m.call_time && m.sessions == 1 && m.traced_load == TracedLoad::Carry && m.procs == 1
            })
            .count(),
        2,
        "the plan has the -kill and -3ix-kill models with call_time"
    );
    for m in LoadProtocol::ALL.map(LoadModel::classic) {
        let blocking = m.protocol == LoadProtocol::Blocking;
        let r = run(&m.with(|m| m.call_time = true));
        assert!(r.violated.is_empty(), "{:?}", r.violated);
        // Blocking clears the old version's breakpoints under the block before the commit, so
        // no charge reads a linked node of a version that is no longer current.
        assert_eq!(r.reached, !blocking);
    }
    let no_locals = LoadModel::classic(LoadProtocol::NonBlocking)
        .with(|m| m.locals = 0)
        .with_mutant(LoadSpecMutant::ClearOldAtOnce);
    assert!(run(&no_locals).violated.is_empty());
    let r = run(&no_locals.with(|m| m.call_time = true));
    assert!(
        r.violated.contains(&"no-use-after-free"),
        "{:?}",
        r.violated
    );
}

/// Two sessions on the loaded versions (`LoadModel::sessions`): the load links both sessions'
/// nodes on the new version, the second session is destroyed (unlink, its grace period, free)
/// while a process is in old code (`destroy-in-old-code` reached), and every property holds;
/// freeing the destroyed session's nodes without the grace period
/// (`load-session-destroy-skip-grace`, a row of `every_load_mutant_is_killed`) is killed by
/// `no-use-after-free`, here also on the killing-purge models with their two schedulers.
#[test]
fn sessions_on_loaded_code() {
    let m = LoadModel::sessions();
    assert!(LoadModel::plan().iter().any(|p| p.name() == m.name()));
    for base in [LoadModel::kill(), LoadModel::erts()] {
        let m = base.with(|m| m.sessions = 2);
        let r = run(&m);
        assert!(r.violated.is_empty(), "{}: {:?}", m.name(), r.violated);
        assert!(r.reached, "{}", m.name());
        assert_killed(&m, LoadSpecMutant::SessionDestroySkipGrace);
    }
}

/// `m` holds with every reachability property found, and `mu` on it is killed by its property.
fn holds_and_kills(m: &LoadModel, mu: LoadSpecMutant) {
    assert_holds(m);
    assert_killed(m, mu);
}

/// `m` is a model of the default plan.
fn assert_in_plan(m: &LoadModel) {
    let plan = LoadModel::plan();
    assert!(plan.iter().any(|p| p.name() == m.name()), "{}", m.name());
}

/// `m` is a model of the default plan and the one `mu` runs on in the kill matrix.
fn assert_mutants_plan_model(m: &LoadModel, mu: LoadSpecMutant) {
    assert_in_plan(m);
    assert_eq!(mu.model().name(), m.name());
}

/// `m` holds with every reachability property found.
fn assert_holds(m: &LoadModel) {
    let r = run(m);
    assert!(r.violated.is_empty(), "{}: {:?}", m.name(), r.violated);
    assert!(r.reached, "{}", m.name());
}

/// `mu` on `m` is killed by its property.
fn assert_killed(m: &LoadModel, mu: LoadSpecMutant) {
    let r = run(&m.clone().with_mutant(mu));
    assert!(
        r.violated.contains(&mu.killed_by()),
        "{} on {}: {:?}",
        mu.name(),
        m.name(),
        r.violated
    );
}

/// The charges of call_time at return and at the next hit: every `-call-time` model reaches
/// a charge at return and a charge at a hit of a new version, each reading the linked slot of
/// an old version (`charge-at-return-in-old-code`, `charge-at-hit-in-old-code`, part of
/// `reached` in `every_plan_model_holds`). The removal's wait covers the charge at return:
/// `load-removal-skip-return-charge` is killed (`every_load_mutant_is_killed`), and with no
/// local calls too, where only the charges read the old node.
#[test]
fn call_time_charges_at_return_and_at_the_next_hit() {
    let m = LoadModel::classic(LoadProtocol::NonBlocking).with(|m| {
        m.call_time = true;
        m.locals = 0;
    });
    // Without local calls `local-call-in-old-code` is not reached; the rest of `reached` is
    // the plan's (`every_plan_model_holds`).
    let r = run(&m);
    assert!(r.violated.is_empty(), "{:?}", r.violated);
    assert_killed(&m, LoadSpecMutant::RemovalSkipReturnCharge);
}

/// The open question of docs/nonblocking-load.md §7: a process's call_time state (`pbt.ci`)
/// names a function of a version the process left by a tail call, so `check_process_code`
/// (which looks at the instruction pointer, the stack's continuation pointers and the saved
/// stack trace) does not find it there. As ERTS checks, the purge frees the version and a later
/// charge reads its slot (`no-use-after-free`), under both protocols (ERTS loads a traced
/// module with the blocking one), the soft purge and the killing one
/// (the kill goes to no process: none is found; one scheduler, 3 calls: the two-scheduler
/// model takes 9 s in release); a check that also looks at the call_time state (`check_pbt`)
/// holds.
#[test]
fn call_time_state_after_a_tail_call_out_of_old_code() {
    let one_sched_kill = LoadModel::kill().with(|m| {
        m.schedulers = 1;
        m.calls = 3;
    });
    for base in [
        LoadModel::classic(LoadProtocol::Blocking),
        LoadModel::classic(LoadProtocol::NonBlocking),
        one_sched_kill,
    ] {
        let m = base.with(|m| {
            m.call_time = true;
            m.tail_calls = true;
        });
        let r = run(&m);
        assert_eq!(r.violated, vec!["no-use-after-free"], "{}", m.name());
        let fixed = m.with(|m| m.check_pbt = true);
        let r = run(&fixed);
        assert!(r.violated.is_empty(), "{}: {:?}", fixed.name(), r.violated);
        // Blocking clears the old breakpoints before the commit: no charge finds an old
        // node linked, so its call_time reachability is not found (as without tail calls).
        assert_eq!(
            r.reached,
            fixed.protocol == LoadProtocol::NonBlocking,
            "{}",
            fixed.name()
        );
    }
}

/// ERTS's own treatment of a traced load (`TracedLoad::ClearErts`, docs/nonblocking-load.md
/// §8), next to the carried patterns: thread progress blocked, the current version's
/// breakpoints (every session's, call_time, meta) and its export breakpoint cleared and freed
/// under the block, the new version staged and committed under it with no pattern. It holds
/// with a process in the version when it is cleared (`clear-in-old-code`), a charge that then
/// finds the slot empty (`charge-finds-cleared-slot`) and a call that ran the export
/// breakpoint before the clear; clearing without the block (`load-clear-erts-without-block`)
/// is killed by `no-use-after-free`, on the plan's model and with no local calls, meta or
/// export breakpoint (then a charge in flight finds the freed node).
#[test]
fn erts_clears_a_traced_load_under_the_block() {
    let m = LoadModel::clear_erts();
    assert!(LoadModel::plan().iter().any(|p| p.name() == m.name()));
    let r = run(&m);
    assert!(r.violated.is_empty(), "{:?}", r.violated);
    assert!(r.reached);
    assert_killed(&m, LoadSpecMutant::ClearErtsWithoutBlock);
    let charges_only = m.with(|m| {
        m.locals = 0;
        m.meta = false;
        m.global = false;
    });
    let r = run(&charges_only);
    assert!(r.violated.is_empty(), "{:?}", r.violated);
    assert_killed(&charges_only, LoadSpecMutant::ClearErtsWithoutBlock);
    // The killing purge with two schedulers (a row of the plan, `every_plan_model_holds`).
    assert!(LoadModel::plan()
        .iter()
        .any(|p| p.name() == LoadModel::clear_erts_kill().name()));
}

/// Meta trace on a reloaded function (`LoadModel::meta`): a local call in the old version
/// reads the meta breakpoint's tracer cell through the node it found, as its own step; the
/// removal frees the cell with the node after its wait. It holds with that read reached on a
/// version no longer current (`meta-in-old-code`); freeing the cell with the uninstall
/// (`load-meta-cell-skip-grace`) is killed by `no-use-after-free`.
#[test]
fn meta_on_a_reloaded_function() {
    holds_and_kills(&LoadModel::meta(), LoadSpecMutant::MetaCellSkipGrace);
}

/// The export (global) breakpoint across a load (`LoadModel::global`): with the patterns
/// carried, the breakpoint stays on the export entry and only its one continuation address
/// (one field, not one per code index) moves to the new version, after the commit; calls
/// run the export breakpoint into the new version (`export-bp-to-new-version`). Moving it
/// with the staging (`load-export-retarget-before-commit`) sends a call through the active
/// index into a version no commit has published (`no-uncommitted-call`), under both index
/// schemes.
#[test]
fn export_breakpoint_across_a_load() {
    holds_and_kills(
        &LoadModel::global(),
        LoadSpecMutant::ExportRetargetBeforeCommit,
    );
}

/// The new variants on the killing-purge models with two schedulers (`--ignored`; figures in
/// docs/nonblocking-load.md §8): `ClearErts` with its mutant, meta, and the export breakpoint
/// with its mutant under both index schemes, LW1 folded with call_time (with both fold
/// mutants), and return trace frames with call_time.
#[test]
#[ignore]
fn load_variants_with_two_schedulers() {
    let m = LoadModel::clear_erts_kill();
    assert_killed(&m, LoadSpecMutant::ClearErtsWithoutBlock);
    holds_and_kills(
        &LoadModel::kill().with(|m| m.meta = true),
        LoadSpecMutant::MetaCellSkipGrace,
    );
    for base in [LoadModel::kill(), LoadModel::erts()] {
        holds_and_kills(
            &base.with(|m| m.global = true),
            LoadSpecMutant::ExportRetargetBeforeCommit,
        );
    }
    let fold_call_time = LoadModel::kill().with(|m| {
        m.fold_lw1 = true;
        m.call_time = true;
    });
    holds_and_kills(&fold_call_time, LoadSpecMutant::FoldLw1SkipW1);
    assert_killed(&fold_call_time, LoadSpecMutant::FoldLw1Untraced);
    let frames_call_time = LoadModel::kill().with(|m| {
        m.local_trace = true;
        m.call_time = true;
    });
    let r = run(&frames_call_time);
    assert!(r.violated.is_empty() && r.reached, "{:?}", r.violated);
}

/// The composition with the sequential oracle (`spec/src/code.rs`, CL1: a load over a current
/// version leaves no breakpoint on the module, old or new, global or local, and a charge of
/// old code finds nothing): `refines-cl1` says every breakpoint hit of a history (a read that
/// found a patched instruction, a linked slot or the export trampoline) is one the oracle
/// has, the load linearized at its commit. ERTS's treatment holds it on both plan models
/// (`every_plan_model_holds` counts it as a safety property of theirs); bpspec's carried
/// patterns violate it under both protocols, as they must: carrying is the oracle's own
/// mutant `load-keeps-breakpoints` (`CodeMutant::LoadKeepsBreakpoints`).
#[test]
fn only_erts_traced_load_refines_the_oracle() {
    for m in [LoadModel::clear_erts(), LoadModel::clear_erts_kill()] {
        assert!(m.refine_cl1, "{}", m.name());
    }
    let r = run(&LoadModel::clear_erts().with(|m| m.locals = 0));
    assert!(r.violated.is_empty(), "{:?}", r.violated);
    for m in [
        LoadModel::classic(LoadProtocol::Blocking),
        LoadModel::classic(LoadProtocol::NonBlocking),
        LoadModel::global(),
    ] {
        let r = run(&m.with(|m| m.refine_cl1 = true));
        assert_eq!(r.violated, vec![bpspec_spec::load::REFINES_CL1]);
    }
}

/// LW1 folded into the old version's removal (`fold_lw1`, docs/nonblocking-load.md §3 and §8):
/// after the commit of a load whose old version is traced, no LW1; the removal's W1 (a wait
/// of its own between its stage and its uninstall) stands for it, and LW1 stays where nothing
/// is removed (a fresh module's first load, an untraced old version). It holds with every
/// reachability property found and with `remote-calls-counted` (LP3), on the first
/// non-blocking model, with call_time, with two sessions, meta, the export breakpoint and on
/// the killing-purge model (two schedulers, three loads of a fresh module). Dropping LW1 where
/// nothing is removed too (`load-fold-lw1-untraced`) frees a version under a call that read
/// its address before the commit; dropping the removal's W1 as well (`load-fold-lw1-skip-w1`)
/// keeps every version alive (the removal's later wait also lies between the commit and the
/// purge's check) but lets that call run the old version after its breakpoints were removed:
/// an uncounted call.
#[test]
fn lw1_folds_into_the_removals_w1() {
    let fold = |m: LoadModel| m.with(|m| m.fold_lw1 = true);
    assert_in_plan(&LoadModel::fold_lw1());
    [
        LoadModel::fold_lw1(),
        fold(LoadModel::classic(LoadProtocol::NonBlocking).with(|m| m.call_time = true)),
        fold(LoadModel::sessions()),
        fold(LoadModel::meta()),
        fold(LoadModel::global()),
        fold(LoadModel::kill()),
        fold(LoadModel::clear_erts()),
    ]
    .iter()
    .for_each(assert_holds);
    assert_eq!(
        LoadSpecMutant::FoldLw1Untraced.model().name(),
        LoadModel::fold_lw1().name()
    );
    assert_killed(&fold(LoadModel::kill()), LoadSpecMutant::FoldLw1Untraced);
    let skip = run(&LoadModel::fold_lw1().with_mutant(LoadSpecMutant::FoldLw1SkipW1));
    assert_eq!(skip.violated, vec![bpspec_spec::load::REMOTE_CALLS_COUNTED]);
    let skip = run(&fold(LoadModel::kill()).with_mutant(LoadSpecMutant::FoldLw1SkipW1));
    assert_eq!(skip.violated, vec![bpspec_spec::load::REMOTE_CALLS_COUNTED]);
}

/// Local call trace with `return_trace` on versions (`local_trace`): a process in the old
/// version with a return trace frame naming an old version's function returns after the load
/// and the removal of its breakpoints (`return-frame-in-old-code`), and the frame's read of
/// the function's code info never touches a freed version, under both protocols and with the
/// killing purge; also after a tail call out of the version, since `check_process_code` finds
/// the frame on the stack (it holds a continuation pointer into the version's code area). A
/// check that does not see the frame (`load-purge-check-skips-return-frame`) frees the version
/// under it, with the soft purge and with the killing one.
#[test]
fn return_frames_in_old_code() {
    let tail = |m: LoadModel| m.with(|m| m.tail_calls = true);
    assert_in_plan(&LoadModel::local_trace());
    let one_sched_kill = LoadModel::kill().with(|m| {
        m.schedulers = 1;
        m.calls = 3;
        m.local_trace = true;
    });
    [
        LoadModel::classic(LoadProtocol::Blocking).with(|m| m.local_trace = true),
        LoadModel::local_trace().with(|m| m.tail_calls = false),
        LoadModel::kill().with(|m| m.local_trace = true),
        tail(LoadModel::classic(LoadProtocol::Blocking).with(|m| m.local_trace = true)),
        LoadModel::local_trace(),
        tail(one_sched_kill.clone()),
    ]
    .iter()
    .for_each(assert_holds);
    assert_eq!(
        LoadSpecMutant::PurgeCheckSkipsReturnFrame.model().name(),
        LoadModel::local_trace().name()
    );
    assert_killed(
        &tail(one_sched_kill),
        LoadSpecMutant::PurgeCheckSkipsReturnFrame,
    );
    assert_killed(
        &tail(LoadModel::classic(LoadProtocol::Blocking).with(|m| m.local_trace = true)),
        LoadSpecMutant::PurgeCheckSkipsReturnFrame,
    );
}

/// More than one process per scheduler (`procs` 2, docs/nonblocking-load.md §8): one
/// scheduler runs two processes, switched in and out (a process switch, not a thread progress
/// point), each with its own stay in a version, call_time state and local calls. The plan's
/// model (`LoadModel::two_procs`: the killing purge, call_time, a fresh module loaded twice)
/// holds with a process switched out in old code (`switched-out-in-old-code`) and one killed at
/// its switch-in (`purge-kills-switched-out`; `every_plan_model_holds`); a check that looks at
/// the running process only (`load-purge-check-skips-switched-out`) frees the version under
/// the switched-out one (`every_load_mutant_is_killed`). Only this shape kills it: with one
/// process per scheduler the mutant is the baseline. A charge at the switch-in of a killed
/// process, before its signals, touches nothing freed: the removal unlinked and freed the old
/// version's nodes before the check sent the kill, and the version is freed after the exit (an
/// experiment, not in `LoadSpecMutant::ALL`). ERTS's index scheme and the soft purge:
/// `two_processes_variants` (`--ignored`).
#[test]
fn two_processes_on_one_scheduler() {
    let m = LoadModel::two_procs();
    assert_mutants_plan_model(&m, LoadSpecMutant::PurgeCheckSkipsSwitchedOut);
    let one = m.clone().with(|m| m.procs = 1);
    let r = run(&one.with_mutant(LoadSpecMutant::PurgeCheckSkipsSwitchedOut));
    assert!(r.violated.is_empty() && r.reached, "{:?}", r.violated);
    assert!(!LoadSpecMutant::ALL.contains(&LoadSpecMutant::SwitchInChargesKilled));
    let r = run(&m.with_mutant(LoadSpecMutant::SwitchInChargesKilled));
    assert!(r.violated.is_empty() && r.reached, "{:?}", r.violated);
}

/// Two processes on one scheduler under ERTS's index scheme and with the soft purge (the first
/// non-blocking model with call_time, 2 calls per process), and the plan's model with three
/// loads (`--ignored`; figures in docs/nonblocking-load.md §8): each holds and kills
/// `load-purge-check-skips-switched-out`; the switch-in charge of a killed process survives
/// under `Three` too.
#[test]
#[ignore]
fn two_processes_variants() {
    let three = LoadModel::two_procs().with(|m| m.code_ix = CodeIx::Three);
    let soft = LoadModel::classic(LoadProtocol::NonBlocking).with(|m| {
        m.procs = 2;
        m.call_time = true;
        m.calls = 2;
    });
    let loads3 = LoadModel::two_procs().with(|m| m.loads = 3);
    for m in [&three, &soft, &loads3] {
        holds_and_kills(m, LoadSpecMutant::PurgeCheckSkipsSwitchedOut);
    }
    let r = run(&three.with_mutant(LoadSpecMutant::SwitchInChargesKilled));
    assert!(r.violated.is_empty() && r.reached, "{:?}", r.violated);
}

/// A version is made old at most once: a load never commits while an old version is still
/// unpurged (`one-old-version`, checked with two loads or more and soft purges), because a
/// refused soft purge stops the loader (ERTS refuses the next load with `not_purged`). It
/// holds on two loads of a loaded module (`LoadModel::reloads`), with one process per
/// scheduler and with two (2 calls each); a loader that goes on after the refusal (`load-over-not-purged`)
/// violates it.
#[test]
fn a_version_is_made_old_at_most_once() {
    let m = LoadModel::reloads();
    holds_and_kills(&m, LoadSpecMutant::LoadOverNotPurged);
    holds_and_kills(
        &m.with(|m| {
            m.procs = 2;
            m.calls = 2;
        }),
        LoadSpecMutant::LoadOverNotPurged,
    );
}

/// Patterns per function (`funcs` 2, docs/nonblocking-load.md §8): each function of the
/// module has its own pattern and promise bit; the stager's `trace_pattern` sets or clears
/// function 0's pattern (the other function keeps its own) on the current version before the
/// load and again after the load's removal, while a process may be in the old version. A
/// call of `f` in a version promised for `f` runs with f's breakpoints (`no-mix`, per
/// function) under both protocols, with a call of the changed function between the stager's
/// flip and its promise (`call-under-pattern-change`) and a call of an unpromised function in
/// a version promised for the other (`promise-per-function`). A promise withdrawn late (a
/// function losing its last pattern keeps its bit until the promise is made after W2:
/// `load-promise-withdrawn-late`) is killed by `no-mix` under both protocols.
#[test]
fn patterns_per_function() {
    let m = LoadModel::per_function();
    assert_mutants_plan_model(&m, LoadSpecMutant::PromiseWithdrawnLate);
    holds_and_kills(&m, LoadSpecMutant::PromiseWithdrawnLate);
    let blocking = LoadModel::classic(LoadProtocol::Blocking).with(|m| m.funcs = 2);
    holds_and_kills(&blocking, LoadSpecMutant::PromiseWithdrawnLate);
}

/// Two processes on each of two schedulers with the killing purge
/// (`LoadModel::two_procs_two_scheds`, a model of the plan; `--ignored`, figures in
/// docs/nonblocking-load.md §8): it holds with every reachability property found, a process
/// switched out in old code on either scheduler killed at its switch-in among them, and a check
/// that looks at each scheduler's running process only (`load-purge-check-skips-switched-out`)
/// is killed by `no-use-after-free` here too.
#[test]
#[ignore]
fn two_processes_on_two_schedulers() {
    let m = LoadModel::two_procs_two_scheds();
    assert_in_plan(&m);
    assert_eq!((m.schedulers, m.procs), (2, 2));
    holds_and_kills(&m, LoadSpecMutant::PurgeCheckSkipsSwitchedOut);
}

/// Patterns per function with the other switches (`--ignored`; figures in
/// docs/nonblocking-load.md §8): call_time, two sessions, meta, local call trace with tail
/// calls, the fold of LW1 (with `remote-calls-counted`, a call of the function being changed
/// exempt while the stager's `trace_pattern` runs) and the killing purge with two schedulers
/// and two loads of a loaded module each hold with every reachability property found and kill
/// `load-promise-withdrawn-late`.
#[test]
#[ignore]
fn patterns_per_function_variants() {
    let pf = LoadModel::per_function();
    [
        pf.clone().with(|m| m.call_time = true),
        pf.clone().with(|m| m.sessions = 2),
        pf.clone().with(|m| m.meta = true),
        pf.clone().with(|m| {
            m.local_trace = true;
            m.tail_calls = true;
        }),
        pf.clone().with(|m| m.fold_lw1 = true),
        LoadModel::kill().with(|m| {
            m.funcs = 2;
            m.fresh = false;
            m.loads = 2;
        }),
    ]
    .iter()
    .for_each(|m| holds_and_kills(m, LoadSpecMutant::PromiseWithdrawnLate));
}

/// Three processes on one scheduler (`procs` 3, docs/nonblocking-load.md §8): two processes
/// switched out at a time, switched in in turn (the engine's `switch_proc` rotation). The plan's
/// model (`LoadModel::three_procs`: the killing purge, a fresh module loaded twice, one call per
/// process, no call_time) holds with every reachability property found, among them a purge
/// whose check sends kills to two switched-out processes (`purge-kills-two-switched-out`;
/// `every_plan_model_holds`). A check that stops at the first switched-out process it finds on
/// a scheduler (`load-purge-check-stops-at-first-switched-out`) is killed by
/// `no-use-after-free` there (`every_load_mutant_is_killed`) and survives the plan's
/// two-process models, where a scheduler has one switched-out process: the third process is
/// what tells the two checks apart. With call_time and 2 calls per process:
/// `three_processes_with_call_time` (`--ignored`).
#[test]
fn three_processes_on_one_scheduler() {
    let mu = LoadSpecMutant::PurgeCheckStopsAtFirstSwitchedOut;
    let m = LoadModel::three_procs();
    assert_eq!((m.schedulers, m.procs), (1, 3));
    assert_mutants_plan_model(&m, mu);
    let two = LoadModel::two_procs();
    assert_in_plan(&two);
    let r = run(&two.with_mutant(mu));
    assert!(r.violated.is_empty() && r.reached, "{:?}", r.violated);
    let two = m.with(|m| m.procs = 2);
    let r = run(&two.with_mutant(mu));
    assert!(r.violated.is_empty() && r.reached, "{:?}", r.violated);
}

/// Three processes on one scheduler with call_time and 2 calls per process (the plan's
/// `LoadModel::two_procs` with a third process; `--ignored`: 10.7 million unique states, about
/// a minute; figures in docs/nonblocking-load.md §8): it holds with every reachability
/// property found and kills `load-purge-check-stops-at-first-switched-out` by
/// `no-use-after-free`.
#[test]
#[ignore]
fn three_processes_with_call_time() {
    let m = LoadModel::two_procs().with(|m| m.procs = 3);
    assert!(m.call_time && m.calls == 2);
    holds_and_kills(&m, LoadSpecMutant::PurgeCheckStopsAtFirstSwitchedOut);
}

/// Replay `actions` on `m` from its initial state `init` (0: traced, 1: untraced), each
/// enabled where it is taken; the state reached.
fn replay(m: &LoadModel, init: usize, actions: &[LAction]) -> LState {
    let mut s = m.init_states().swap_remove(init);
    for (k, &a) in actions.iter().enumerate() {
        let mut enabled = Vec::new();
        m.actions(&s, &mut enabled);
        assert!(
            enabled.contains(&a),
            "{}: step {k}, {a:?} not enabled (enabled: {enabled:?})",
            m.name()
        );
        s = m.next_state(&s, a).expect("a next state");
    }
    s
}

/// Two schedulers with three processes each: a purge's check whose list of switched-out
/// processes to kill has room for one scheduler's worth, two, for all schedulers together
/// (`load-purge-check-kills-two-switched-out`). It survives, exhaustively, the plan's
/// three-process model on one scheduler (`LoadModel::three_procs`, at most two switched-out
/// processes in all) and, in a build without debug assertions (`DEBUG_MAX_PROCS`), the plan's
/// two-by-two model (`LoadModel::two_procs_two_scheds`, one switched-out process per
/// scheduler): the list never overflows there. On two schedulers with three processes each
/// (`LoadModel::three_procs_two_scheds`), whose exhaustive run does not finish in 10 minutes
/// (`two_schedulers_three_processes`, docs/nonblocking-load.md §8), this counterexample kills
/// it by `no-use-after-free`: the module untraced, version 1 loaded; two processes of
/// scheduler 0 and one of scheduler 1 stay in it and are switched out; version 2 is loaded;
/// the check finds the three and kills the first two; after they exit, the purge's wait and
/// the free, scheduler 1 switches its third one in, which makes a local call into the freed
/// version. The same steps up to the check leave the baseline's purge waiting for that
/// process's exit (its `AwaitDown` not enabled). A random simulation finds the kill too.
#[test]
fn purge_check_kills_two_switched_out_needs_two_schedulers_with_three_processes() {
    use LAction::*;
    let mu = LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut;
    assert!(!LoadSpecMutant::ALL.contains(&mu));
    for m in [LoadModel::three_procs(), LoadModel::two_procs_two_scheds()] {
        assert_in_plan(&m);
        if cfg!(debug_assertions) && m.schedulers * m.procs > DEBUG_MAX_PROCS {
            eprintln!("{}: skipped in a build with debug assertions", m.name());
            continue;
        }
        let r = run(&m.with_mutant(mu));
        assert!(r.violated.is_empty() && r.reached, "{:?}", r.violated);
    }
    let m = LoadModel::three_procs_two_scheds();
    assert_eq!((m.schedulers, m.procs, m.calls), (2, 3, 1));
    assert_eq!(mu.model().name(), m.name());
    // Version 1 loaded and LW1 passed (loader steps 0 to 5).
    let mut to_check = vec![Loader(0), Loader(1), Loader(2), Loader(3), Loader(4)];
    to_check.extend([Progress(0), Progress(1), Loader(5)]);
    // Scheduler 0: two processes stay in version 1 and are switched out; scheduler 1: one.
    for _ in 0..2 {
        to_check.extend([ReadIx(0), ReadAddr(0), RunStay(0, 0), Switch(0)]);
    }
    to_check.extend([ReadIx(1), ReadAddr(1), RunStay(1, 0), Switch(1)]);
    // Version 2 loaded, LW1, nothing to remove (untraced), the purge's check.
    to_check.extend([Loader(6), Loader(7), Loader(8), Loader(9), Loader(10)]);
    to_check.extend([Progress(0), Progress(1), Loader(11), Loader(12), Loader(17)]);
    let s = replay(&m, 1, &to_check);
    assert_eq!(s.parked[1][1].map(|q| (q.held, q.kill)), Some((1, true)));
    // The baseline killed all three: its purge waits for the one on scheduler 1.
    let mut enabled = Vec::new();
    m.actions(&s, &mut enabled);
    assert!(!enabled.contains(&Loader(18)), "{enabled:?}");
    let mutant = m.clone().with_mutant(mu);
    let mut steps = to_check.clone();
    // The two killed ones exit at their switch-in; the purge's wait for their exit, PW, free.
    steps.extend([Switch(0), Switch(0), Loader(18), Loader(19)]);
    steps.extend([Progress(0), Progress(1), Loader(20), Loader(21)]);
    // Scheduler 1 switches in the one the check left: a local call into the freed version.
    steps.extend([Switch(1), Switch(1), LocalRead(1, 0)]);
    let s = replay(&mutant, 1, &steps);
    assert!(s.uaf, "no use after free at the end of the counterexample");
    let p = mutant
        .properties()
        .into_iter()
        .find(|p| p.name == "no-use-after-free")
        .expect("the property");
    assert!(!(p.condition)(&mutant, &s), "no-use-after-free holds");
    // The checker finds it too: stateright's random simulation (one thread, seed 1, at most
    // 10 million states; it found it at 2,190,447 states, a 62-step path, in a release build)
    // reports `no-use-after-free` on the mutant and nothing on the baseline with the same seed
    // and as many states.
    let sim = |m: &LoadModel, states: usize| {
        use stateright::{Checker, HasDiscoveries, UniformChooser};
        let uaf = ["no-use-after-free"].into_iter().collect();
        let c = m
            .clone()
            .checker()
            .finish_when(HasDiscoveries::AnyOf(uaf))
            .target_state_count(states)
            .spawn_simulation(1, UniformChooser)
            .join();
        let found = bpspec_spec::load::SAFETY.map(|p| c.discovery(p).is_some());
        (found, c.state_count())
    };
    let (found, states) = sim(&mutant, 10_000_000);
    assert_eq!(found, [false, true, false], "{states} states");
    let (found, _) = sim(&m, states);
    assert_eq!(found, [false; 3]);
}

/// Two schedulers with three processes each (`LoadModel::three_procs_two_scheds`: the killing
/// purge, a fresh module loaded twice, one call per process, no call_time), BFS on one thread
/// as `bpspec check --model load` runs the plan, for at most `BPSPEC_LOAD_2X3_SECS` seconds
/// (600 by default; `--ignored`, figures in docs/nonblocking-load.md §8): no safety property
/// violated in the states explored, and, if the run finishes, every reachability property
/// found. With the default bound it does not finish: the states, unique states and depth
/// reached are printed every 30 s. Release build, loaded machine (32% of a core): stopped
/// after 600.1 s at 129,875,258 states, 39,891,840 unique, depth 38, no violation, 11.7 GB peak
/// resident; by the plan's rows the model is about 700 million unique states, more than 23 GB
/// of memory holds at that rate. With `BPSPEC_LOAD_2X3_DFS=1`: DFS on `BPSPEC_LOAD_2X3_THREADS`
/// threads (1 by default) with the two schedulers sorted (`LState::schedulers_sorted`, the
/// rotation's symmetry), which keeps a fingerprint per unique state and no queue: it finishes
/// (release build, one thread, beside one other model run): 1,562.9 s, 1,110,881,971 states,
/// 286,049,645 unique, depth 238, every reachability property found, 5.0 GB peak resident.
#[test]
#[ignore]
fn two_schedulers_three_processes() {
    let secs = env_or("BPSPEC_LOAD_2X3_SECS", 600);
    let dfs = env_or("BPSPEC_LOAD_2X3_DFS", 0) == 1;
    let threads = env_or("BPSPEC_LOAD_2X3_THREADS", 1) as usize;
    let m = LoadModel::three_procs_two_scheds();
    let t = std::time::Instant::now();
    if dfs {
        let c = m
            .clone()
            .checker()
            .threads(threads)
            .symmetry_fn(LState::schedulers_sorted)
            .spawn_dfs();
        finish_2x3(&m, &c, "DFS with the schedulers sorted", t, secs);
    } else {
        let c = m.clone().checker().spawn_bfs();
        finish_2x3(&m, &c, "BFS", t, secs);
    }
}

/// `load-purge-check-kills-two-switched-out` on the rotation's 2×3 model (no `any_switch_in`):
/// DFS on one thread with the schedulers sorted (`LState::schedulers_sorted`), stopped at the
/// first violation, for at most `BPSPEC_LOAD_2X3_SECS` seconds (600 by default): killed by
/// `no-use-after-free` (figures in docs/nonblocking-load.md §8; 0.2 s in a release build).
#[test]
fn purge_check_kills_two_switched_out_killed_on_the_rotation_by_dfs() {
    use stateright::Checker;
    let secs = env_or("BPSPEC_LOAD_2X3_SECS", 600);
    let m = LoadModel::three_procs_two_scheds()
        .with_mutant(LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut);
    let t = std::time::Instant::now();
    let c = m
        .clone()
        .checker()
        .finish_when(stateright::HasDiscoveries::AnyFailures)
        .symmetry_fn(LState::schedulers_sorted)
        .spawn_dfs();
    watch(&c, &format!("{} [{}]", m.name(), m.bound()), t, secs, 30);
    eprintln!(
        "{} [{}] load-purge-check-kills-two-switched-out, DFS with the schedulers sorted: after {:.1} s, {} states, {} unique, depth {}",
        m.name(),
        m.bound(),
        t.elapsed().as_secs_f64(),
        c.state_count(),
        c.unique_state_count(),
        c.max_depth()
    );
    assert!(
        c.discovery("no-use-after-free").is_some(),
        "load-purge-check-kills-two-switched-out survived the rotation's 2x3"
    );
}

/// The number in the environment variable `k`, or `d` where it is unset or not a number.
fn env_or(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// Waits for the 2×3 run `c` of `m` (`how`: its checker) at most `secs` seconds after `t`, prints
/// its figures, and asserts no safety property violated and, if it finished, every
/// reachability property found.
fn finish_2x3(
    m: &LoadModel,
    c: &impl stateright::Checker<LoadModel>,
    how: &str,
    t: std::time::Instant,
    secs: u64,
) {
    watch(c, &format!("{} [{}]", m.name(), m.bound()), t, secs, 30);
    let done = c.is_done();
    eprintln!(
        "{} [{}] {how}: {} after {:.1} s: {} states, {} unique, depth {}",
        m.name(),
        m.bound(),
        if done { "done" } else { "stopped" },
        t.elapsed().as_secs_f64(),
        c.state_count(),
        c.unique_state_count(),
        c.max_depth()
    );
    for p in bpspec_spec::load::SAFETY {
        assert!(c.discovery(p).is_none(), "{p} violated");
    }
    if done {
        for p in m.reachability() {
            assert!(c.discovery(p).is_some(), "{p} not found");
        }
    }
}

/// Waits for checker `c` until it is done or `secs` seconds after `t`, printing its progress
/// (states, unique states, depth) under `label` every `every` seconds.
fn watch(
    c: &impl stateright::Checker<LoadModel>,
    label: &str,
    t: std::time::Instant,
    secs: u64,
    every: u64,
) {
    let mut next = every;
    while !c.is_done() && t.elapsed().as_secs() < secs {
        std::thread::sleep(std::time::Duration::from_millis(200));
        if t.elapsed().as_secs() >= next {
            eprintln!(
                "{label}: {:.0} s, {} states, {} unique, depth {}",
                t.elapsed().as_secs_f64(),
                c.state_count(),
                c.unique_state_count(),
                c.max_depth()
            );
            next += every;
        }
    }
}

/// A random walk of `steps` steps from each initial state of `m` (a fixed LCG, seed `seed`);
/// every state visited.
fn walk(m: &LoadModel, seed: u64, walks: usize, steps: usize) -> Vec<LState> {
    let mut x = seed;
    let mut next = |n: usize| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as usize % n
    };
    let mut seen = Vec::new();
    for w in 0..walks {
        let inits = m.init_states();
        let mut s = inits[w % inits.len()].clone();
        for _ in 0..steps {
            seen.push(s.clone());
            let mut enabled = Vec::new();
            m.actions(&s, &mut enabled);
            if enabled.is_empty() {
                break;
            }
            s = m
                .next_state(&s, enabled[next(enabled.len())])
                .expect("a next state");
        }
    }
    seen
}

/// The state with scheduler `i`'s switched-out processes at places 0 and 1 swapped, or the
/// two schedulers swapped: a member of the same class under `any_switch_in`.
fn permuted(s: &LState, swap_parked: Option<usize>, swap_scheds: bool) -> LState {
    let mut t = s.clone();
    if let Some(i) = swap_parked {
        t.parked[i].swap(0, 1);
    }
    if swap_scheds {
        t.procs.swap(0, 1);
        t.parked.swap(0, 1);
    }
    t
}

/// `LState::representative` (and `representative_scheds` with two schedulers) under
/// `any_switch_in`, on states of random walks of the 2×3 model and the 1×3 model (1,000
/// walks of at most 80 steps each in a release build, 200 with debug assertions, fixed seed): it changes nothing but the order of a
/// scheduler's switched-out processes (and of the schedulers): the same multiset of
/// processes, every other field equal (a representative that dropped or reset a field fails
/// here); it is idempotent and the same for every member of the class; and it is a symmetry
/// of the transition relation: the representatives of the successors of a state and of its
/// representative are the same set (a model step that depended on a switched-out process's
/// place or a scheduler's index would fail here). Three wrong representatives fail the same
/// check: one dropping a switched-out process's kill, one swapping the running processes
/// without their schedulers' switched-out ones, one merging processes that differ in their
/// calls left. On the rotation's 2×3 model (no `any_switch_in`), `LState::schedulers_sorted`
/// passes the same check with the switched-out processes' order kept, and
/// `representative_scheds` fails it.
#[test]
fn any_switch_in_representative_is_a_symmetry() {
    // 1,000 walks in a release build (69 s on the loaded machine), 200 with debug assertions.
    const WALKS: usize = if cfg!(debug_assertions) { 200 } else { 1000 };
    for (m, scheds) in [
        (LoadModel::three_procs_two_scheds(), true),
        (LoadModel::three_procs_two_scheds(), false),
        (LoadModel::three_procs(), false),
    ] {
        let m = m.with(|m| m.any_switch_in = true);
        let rep = if scheds {
            LState::representative_scheds
        } else {
            LState::representative
        };
        let states = walk(&m, 7, WALKS, 80);
        let moved =
            representative_faults(&m, rep, scheds, true, &states).unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "{} (scheduler symmetry {scheds}): {} states walked, {moved} not their own representative",
            m.name(),
            states.len()
        );
        assert!(
            moved > 0,
            "no state where the representative sorts anything"
        );
    }
    // Wrong representatives the check catches: one that drops a switched-out process's kill,
    // one that swaps the schedulers' running processes without their switched-out ones, one
    // that sorts the switched-out processes by a key that ignores their call left (two
    // processes that differ only there become one).
    fn drops_kill(s: &LState) -> LState {
        let mut r = s.representative_scheds();
        for q in r.parked.iter_mut().flatten().flatten() {
            q.kill = false;
        }
        r
    }
    fn swaps_running_only(s: &LState) -> LState {
        let mut r = s.representative();
        if r.procs[1] < r.procs[0] {
            r.procs.swap(0, 1);
        }
        r
    }
    fn merges_calls(s: &LState) -> LState {
        let mut r = s.representative_scheds();
        for q in r.parked.iter_mut().flatten().flatten() {
            q.calls_left = 0;
        }
        r
    }
    let m = LoadModel::three_procs_two_scheds().with(|m| m.any_switch_in = true);
    let states = walk(&m, 7, WALKS, 80);
    for (name, wrong) in [
        ("drops_kill", drops_kill as fn(&LState) -> LState),
        ("swaps_running_only", swaps_running_only),
        ("merges_calls", merges_calls),
    ] {
        let e = representative_faults(&m, wrong, true, true, &states).expect_err(name);
        eprintln!("{name} caught: {}", e.chars().take(60).collect::<String>());
    }
    // The rotation (no `any_switch_in`): the schedulers sorted, each keeping its switched-out
    // processes' order (`LState::schedulers_sorted`), is a symmetry of its transition relation;
    // sorting the switched-out processes too (`representative_scheds`) is not: it moves one.
    let m = LoadModel::three_procs_two_scheds();
    let states = walk(&m, 7, WALKS, 80);
    let moved = representative_faults(&m, LState::schedulers_sorted, true, false, &states)
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} (the rotation, schedulers sorted): {} states walked, {moved} not their own representative",
        m.name(),
        states.len()
    );
    assert!(moved > 0, "no state where the schedulers are swapped");
    let e = representative_faults(&m, LState::representative_scheds, true, false, &states)
        .expect_err("representative_scheds on the rotation");
    eprintln!(
        "representative_scheds on the rotation caught: {}",
        e.chars().take(60).collect::<String>()
    );
}

/// The faults of `rep` as a representative on `states` of `m` (with `scheds`, the schedulers
/// may be swapped; with `parked`, a scheduler's switched-out processes may be reordered, and
/// without it their order must be kept): the number of states that are not their own
/// representative, or the first fault found.
fn representative_faults(
    m: &LoadModel,
    rep: fn(&LState) -> LState,
    scheds: bool,
    parked: bool,
    states: &[LState],
) -> Result<usize, String> {
    let sorted = |mut v: Vec<bpspec_spec::load::Parked>| {
        v.sort();
        v
    };
    let succ = |s: &LState| {
        let mut enabled = Vec::new();
        m.actions(s, &mut enabled);
        let mut v: Vec<LState> = enabled
            .into_iter()
            .map(|a| rep(&m.next_state(s, a).expect("a next state")))
            .collect();
        v.sort_by_key(|t| format!("{t:?}"));
        v.dedup();
        v
    };
    let mut moved = 0;
    for s in states {
        let r = rep(s);
        moved += usize::from(r != *s);
        if rep(&r) != r {
            return Err(format!("not idempotent: {s:?}"));
        }
        // Every field but the processes' places equal.
        let mut t = r.clone();
        t.procs = s.procs;
        t.parked = s.parked;
        if t != *s {
            return Err(format!("a field other than the processes changed: {s:?}"));
        }
        // The same processes, per scheduler (or the schedulers swapped whole).
        let per = |x: &LState, i: usize| {
            (
                x.procs[i],
                sorted(x.parked[i].iter().flatten().copied().collect()),
            )
        };
        let same = (0..2).all(|i| per(&r, i) == per(s, i));
        let swapped = scheds && (0..2).all(|i| per(&r, i) == per(s, 1 - i));
        if !(same || swapped) {
            return Err(format!("the processes changed: {s:?} -> {r:?}"));
        }
        // Without the switched-out processes' symmetry, each keeps its place.
        let kept = |j: usize| (0..2).all(|i| r.parked[i] == s.parked[(i + j) % 2]);
        if !(parked || kept(0) || (scheds && kept(1))) {
            return Err(format!("a switched-out process moved: {s:?} -> {r:?}"));
        }
        for i in 0..m.schedulers as usize {
            if parked && s.parked[i][1].is_some() && rep(&permuted(s, Some(i), false)) != r {
                return Err(format!(
                    "a permuted state has another representative: {s:?}"
                ));
            }
        }
        if scheds && rep(&permuted(s, None, true)) != r {
            return Err(format!(
                "the swapped schedulers have another representative: {s:?}"
            ));
        }
        if succ(s) != succ(&r) {
            return Err(format!("successors differ: {s:?}"));
        }
    }
    Ok(moved)
}

fn run_symmetric(m: &LoadModel, scheds: bool) -> LoadRun {
    let r = m.check_symmetric(scheds, 1);
    let how = if scheds {
        " dfs+symmetry (schedulers too)"
    } else {
        " dfs+symmetry"
    };
    show(m, how, &r);
    r
}

/// `any_switch_in` on the plan's models with several processes per scheduler
/// (`LoadModel::three_procs`, 1×3; `LoadModel::two_procs_two_scheds`, 2×2; `--ignored`,
/// figures in docs/cutoff.md §8): the baselines hold with every reachability property found,
/// BFS without symmetry and DFS with it (one thread), and every load mutant of the plan on a
/// model with several processes is still killed by its property with the switch on (DFS with
/// symmetry); `load-purge-check-kills-two-switched-out` and `load-switch-in-charges-killed`
/// survive there as they do without the switch.
#[test]
#[ignore]
fn any_switch_in_on_the_plan_models() {
    for m in [LoadModel::three_procs(), LoadModel::two_procs_two_scheds()] {
        let on = m.clone().with(|m| m.any_switch_in = true);
        let scheds = m.schedulers == 2;
        for r in [run(&on), run_symmetric(&on, false)]
            .into_iter()
            .chain(scheds.then(|| run_symmetric(&on, true)))
        {
            assert!(r.violated.is_empty() && r.reached, "{:?}", r.violated);
        }
        // It survives, without symmetry too (the representative is not a symmetry of this
        // mutant: its list keeps the first found by place and by scheduler).
        let mu = on
            .clone()
            .with_mutant(LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut);
        for r in [run(&mu), run_symmetric(&mu, scheds)] {
            assert!(r.violated.is_empty(), "{:?}", r.violated);
        }
    }
    // The experiment that survives the rotation (not in `LoadSpecMutant::ALL`) survives the
    // switch too.
    let mu = LoadSpecMutant::SwitchInChargesKilled;
    let on = mu.model().with(|m| m.any_switch_in = true);
    let r = run_symmetric(&on.with_mutant(mu), false);
    assert!(r.violated.is_empty(), "{:?}", r.violated);
    for mu in LoadSpecMutant::ALL {
        let m = mu.model();
        if m.procs == 1 {
            continue;
        }
        let on = m.with(|m| m.any_switch_in = true);
        let r = run_symmetric(&on, on.schedulers == 2);
        assert!(
            r.violated.contains(&mu.killed_by()),
            "{} survived",
            mu.name()
        );
    }
}

/// Two schedulers with three processes each with `any_switch_in`, DFS with symmetry over the
/// switched-out processes and the schedulers, on `BPSPEC_LOAD_2X3_THREADS` threads (1 by
/// default) for at most `BPSPEC_LOAD_2X3_SECS` seconds (2,100 by default; `--ignored`,
/// figures in docs/cutoff.md §8), the baseline and then `load-purge-check-kills-two-switched-out`
/// (`BPSPEC_LOAD_2X3_MUTANT=1`, stopped at its first violation), with call_time
/// (`BPSPEC_LOAD_2X3_CALL_TIME=1`) or another number of calls per process
/// (`BPSPEC_LOAD_2X3_CALLS`): progress printed every 60 s; no safety property violated on the
/// baseline in the states explored. Release build, loaded
/// machine (42% of a core): the baseline finishes after 1,166.9 s, 460,614,319 states,
/// 93,070,068 unique, DFS depth 179, every reachability property found, 1.26 GB peak resident.
/// With `BPSPEC_LOAD_2X3_CALL_TIME=1` and `BPSPEC_LOAD_2X3_SECS=2700` it does not finish: stopped
/// at 2,046,217,730 states, 446,406,495 unique, depth 378, no violation, 5.0 GB peak resident.
#[test]
#[ignore]
fn two_schedulers_three_processes_any_switch_in() {
    use stateright::Checker;
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (secs, threads) = (
        env("BPSPEC_LOAD_2X3_SECS", 2100),
        env("BPSPEC_LOAD_2X3_THREADS", 1),
    );
    let mut m = LoadModel::three_procs_two_scheds().with(|m| m.any_switch_in = true);
    if env("BPSPEC_LOAD_2X3_CALL_TIME", 0) == 1 {
        m = m.with(|m| m.call_time = true);
    }
    if let Some(calls) = std::env::var("BPSPEC_LOAD_2X3_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        m = m.with(|m| m.calls = calls);
    }
    if env("BPSPEC_LOAD_2X3_MUTANT", 0) == 1 {
        m = m.with_mutant(LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut);
    }
    let t = std::time::Instant::now();
    let c = m
        .clone()
        .checker()
        .finish_when(if m.mutant.is_some() {
            stateright::HasDiscoveries::AnyFailures
        } else {
            stateright::HasDiscoveries::All
        })
        .threads(threads as usize)
        .symmetry_fn(LState::representative_scheds)
        .spawn_dfs();
    let label = format!(
        "{} [{}] {}",
        m.name(),
        m.bound(),
        m.mutant.map_or("baseline", |mu| mu.name())
    );
    watch(&c, &label, t, secs, 60);
    let violated: Vec<_> = bpspec_spec::load::SAFETY
        .into_iter()
        .filter(|p| c.discovery(p).is_some())
        .collect();
    let reached = m.reachability().iter().all(|p| c.discovery(p).is_some());
    eprintln!(
        "{} [{}] {}: done={} after {:.1} s, {} states, {} unique, depth {}, violated {violated:?}, reached={reached}",
        m.name(),
        m.bound(),
        m.mutant.map_or("baseline", |mu| mu.name()),
        c.is_done(),
        t.elapsed().as_secs_f64(),
        c.state_count(),
        c.unique_state_count(),
        c.max_depth()
    );
    if m.mutant.is_none() {
        assert!(violated.is_empty(), "{violated:?}");
        assert!(!c.is_done() || reached);
    }
}

/// `load-purge-check-kills-two-switched-out` on two schedulers with three processes each with
/// `any_switch_in`, DFS with symmetry over the switched-out processes and the schedulers (one
/// thread, stopped at the first violation): killed by `no-use-after-free` after 114,540
/// states, 33,094 unique (a release build; docs/cutoff.md §8), where the exhaustive run of the
/// baseline does not finish in `two_schedulers_three_processes_any_switch_in`.
#[test]
fn purge_check_kills_two_switched_out_killed_by_dfs_with_any_switch_in() {
    use stateright::{Checker, HasDiscoveries};
    let m = LoadModel::three_procs_two_scheds()
        .with(|m| m.any_switch_in = true)
        .with_mutant(LoadSpecMutant::PurgeCheckKillsTwoSwitchedOut);
    let c = m
        .clone()
        .checker()
        .finish_when(HasDiscoveries::AnyFailures)
        .symmetry_fn(LState::representative_scheds)
        .spawn_dfs()
        .join();
    let violated: Vec<_> = bpspec_spec::load::SAFETY
        .into_iter()
        .filter(|p| c.discovery(p).is_some())
        .collect();
    eprintln!(
        "{}: {violated:?} after {} states, {} unique",
        m.name(),
        c.state_count(),
        c.unique_state_count()
    );
    assert_eq!(violated, ["no-use-after-free"]);
    assert!(c.state_count() <= 200_000, "{} states", c.state_count());
}

/// The collection beside code loading (`collect`): the collector's prepare finds the current
/// version's node and its read uses it, with the code modification permission held between
/// them. Without the permission a load's removal, a session's destroy (`NonBlocking`) or the
/// clear under the block (`Blocking`) frees that node first: the mutant is killed under both
/// protocols, and the baselines find the collector reading the current version's node while a
/// process is still in old code (`collect-beside-old-code`).
#[test]
fn the_collection_needs_the_permission_beside_a_load() {
    for protocol in LoadProtocol::ALL {
        let m = LoadModel::collect(protocol);
        assert!(LoadModel::plan().iter().any(|p| p.name() == m.name()));
        assert!(m.reachability().contains(&"collect-beside-old-code"));
        let r = run(&m);
        assert!(r.violated.is_empty() && r.reached, "{}", m.name());
        let mu = run(&m
            .clone()
            .with_mutant(LoadSpecMutant::CollectWithoutPermission));
        assert!(
            mu.violated.contains(&"no-use-after-free"),
            "{}: load-collect-without-permission survived ({} states)",
            m.name(),
            mu.unique
        );
    }
}

/// The collector adds states only where it is on: the models without it keep their state
/// counts (the loader's permission is a function of its place in its script, no state of its
/// own), as the last `make check` recorded them (docs/spec.md's load table).
#[test]
fn the_collector_leaves_the_other_models_alone() {
    let r = run(&LoadModel::classic(LoadProtocol::NonBlocking));
    assert_eq!(r.unique, 4_837);
    let r = run(&LoadModel::sessions());
    assert_eq!(r.unique, 21_324);
}

/// `collect-current-only` can fail: without the permission the collector prepares inside a
/// load, between its commit and the removal of the old version's breakpoints, where the old
/// version still has its nodes linked.
#[test]
fn collect_current_only_fails_without_the_permission() {
    let m = LoadModel::collect(LoadProtocol::NonBlocking)
        .with_mutant(LoadSpecMutant::CollectWithoutPermission);
    let r = run(&m);
    assert!(
        r.violated
            .contains(&bpspec_spec::load::COLLECT_CURRENT_ONLY),
        "{:?}",
        r.violated
    );
}
