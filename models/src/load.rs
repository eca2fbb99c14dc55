//! Models of loading, deleting and purging a traced module (`bpspec_reference::load`,
//! docs/nonblocking-load.md), under both protocols: stager threads run scripts of loads,
//! deletes, purges and `trace_pattern`s (a second stager thread is the concurrent
//! `trace_pattern`), schedulers call `m:f()` through the export entries between progress points.
//!
//! During a run the engine asserts the promise (no mix, no read after free, the version's code
//! fully loaded) and loom checks every liveness word and code body for causality. After it:
//! - LP1 no lost event: the counted calls equal the counters (live and retired);
//! - LP2 per scheduler, the versions its remote calls ran never go back (the code index is read
//!   coherently; `undef` after a delete is skipped; local calls stay in the version their
//!   process is in and are not ordered);
//! - LP3 in scenarios where the module stays traced, every remote call that reached code counted
//!   (a local call in old code is uncounted once the old version's breakpoints are removed);
//! - at rest: halves equal, patched iff traced, promise as pattern, nothing leaked.

use bpspec_reference::code_ix::CodeIxScheme;
use bpspec_reference::sync::{spawn, Arc};
use bpspec_reference::{
    Engine, EngineConfig, LoadProtocol, Mutant, Scheduler, ThreadProgress, WaitPlan,
};

/// A stager op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LOp {
    Load,
    /// A load of module `i` of the engine (`Engine::load_in`; module 0 is `m`, module 1 is the
    /// second module `n` of `LScenario::second_module`): the code index is one for all modules,
    /// so its staging and commit move every module's export entries.
    LoadIn(usize),
    Delete,
    Purge,
    /// `trace_pattern({m,'_','_'}, true | false, [call_count])`.
    TracePattern(bool),
    /// `trace:session_destroy/1` of the call_time session (`LScenario::call_time`).
    DestroySession,
    /// `code:purge/1`: processes still in the old version are killed, then it is purged
    /// (`Engine::purge_kill`; the engine is made `with_kills`).
    PurgeKill,
    /// `trace_info(S, {m, f0, 0}, call_time)` in the call_time session (`LScenario::call_time`):
    /// the engine's one collection (temporaries, flips, waits) on the current version
    /// (`Engine::trace_info_module`), while the module's processes charge.
    Collect,
    /// `Engine::reclaim_meta_tracers`: free the meta tracer cells retired so far, after a wait
    /// (meta.rs M3; what the next `trace_pattern` does first).
    Reclaim,
    /// `trace:function(G, {m,'_','_'}, false, [global])`: the export breakpoints of the global
    /// session (`LScenario::global`) off, by the engine's one sequence on the export area.
    GlobalOff,
    /// `trace_info(G, {m, f0, 0}, traced)` in the global session (`Engine::trace_info_module`):
    /// `{traced, global}` while the export entry carries the session's breakpoint (kept across a
    /// load by `NonBlocking`, cleared by `Blocking`'s load and by `GlobalOff`), else
    /// `{traced, false}`; asserted against what this stager's earlier ops left.
    GlobalInfo,
    /// `trace:function(G, {m,'_','_'}, true, [local, call_time])` in the global session
    /// (`LScenario::global`): local excludes global in one session (ERTS
    /// `erts_set_trace_pattern`), so the session's global flag leaves the export entries in the
    /// same sequence that sets its local breakpoints on the current version.
    LocalInGlobal,
    /// `trace:function(G, {m,'_','_'}, true, [global])`: global on again, which clears every
    /// flag of the session off the current version (`erts_clear_all_breaks`) in the same
    /// sequence that sets the export entries' breakpoints.
    GlobalOn,
}

/// A scheduler step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LStep {
    Call(usize),
    /// A remote call after which the scheduler's process stays in the version (across progress
    /// points) until `Return`.
    Enter(usize),
    /// A local call into the version the process is in (old code after a load).
    Local(usize),
    /// The process returns out of the version it is in.
    Return,
    Progress,
    Nap,
    /// A process switch (`Scheduler::switch_proc`): the current process scheduled out, the
    /// scheduler's next one in. A script with a switch runs a second process.
    Switch,
}

#[derive(Clone, Debug)]
pub struct LScenario {
    pub name: &'static str,
    pub functions: usize,
    /// Version 1 loaded with call_count set.
    pub traced: bool,
    /// One script per stager thread (the second is the concurrent trace_pattern).
    pub stagers: Vec<Vec<LOp>>,
    pub schedulers: Vec<Vec<LStep>>,
    /// LP3 applies (no trace_pattern false, traced from the start).
    pub always_traced: bool,
    /// A second session traces the module with call_time from the start (set before the
    /// schedulers start): every process carries call_time frames and a pbt naming the version
    /// it called, charged at its calls, returns, progress points and naps. Checked after the
    /// run: the call_time count conservation across versions (`Engine::total_timed`).
    pub call_time: bool,
    /// The same second session with call_memory (beside call_time when both are set): every
    /// scheduler's process allocates a word after each step (its heap is call_memory's clock),
    /// charged at its calls and returns (not at schedule-outs, where ERTS's heap does not grow),
    /// counted in the same conservation.
    pub call_memory: bool,
    /// The engine's code index scheme (`Engine::with_code_ix`): the `-3ix` scenarios run
    /// ERTS's three indices.
    pub scheme: CodeIxScheme,
    /// Meta trace in the legacy session (beside its call_count), set before the schedulers
    /// start: every hit on a traced version reads the node's meta tracer object and its cell
    /// (`meta.rs` M2), a load carries it to the new version, the old version's removal releases
    /// it (consolidate, after W3) and retires its cell.
    pub meta: bool,
    /// Local call trace with `exception_trace` in the legacy session, and every scheduler's
    /// process traced (`call`, a mailbox tracer): a traced call pushes a return frame naming
    /// the version's function (`process::Ci`), which runs at the process's return, in old code
    /// after a load. Checked after the run: every `call` message has its `return_from`.
    pub local_trace: bool,
    /// Global trace on the module's export entries in a session of its own (the engine made
    /// `with_global_trace`), every scheduler's process traced there (`call`, a mailbox
    /// tracer): every remote call runs the entry's breakpoint before the version's code.
    /// Checked after the run, when no stager turns it off: under `NonBlocking` (which keeps
    /// it across loads) every remote call that reached code sent its `call` message.
    pub global: bool,
    /// LW1 folded into the removal's W1 (`Engine::with_lw1_fold`): the `-fold` scenarios.
    pub fold_lw1: bool,
    /// The engine owns a second module `n` (module 1, one function, untraced) beside `m`
    /// (`Engine::with_modules`); the stagers load it with `LOp::LoadIn(1)`.
    pub second_module: bool,
    /// The engine's wait plan (`Engine::with_wait_plan`, docs/fewer-waits.md): ERTS's, or the
    /// pipeline plan on the `-pipeline` scenarios ([`PIPELINE_TWINS`]), whose trace_pattern
    /// calls, session destroys and removals of an old version's breakpoints leave their
    /// unlinked nodes to the next sequence's first wait, the purge's PW or the block.
    pub plan: WaitPlan,
}

impl LScenario {
    /// `stagers` racing `schedulers` on `functions` functions of a module loaded `traced` or
    /// not; LP3 applies when it is traced and no stager runs `trace_pattern` false.
    pub fn new(
        name: &'static str,
        functions: usize,
        traced: bool,
        stagers: Vec<Vec<LOp>>,
        schedulers: Vec<Vec<LStep>>,
    ) -> Self {
        let removed = stagers
            .iter()
            .flatten()
            .any(|&o| o == LOp::TracePattern(false));
        LScenario {
            name,
            functions,
            traced,
            stagers,
            schedulers,
            always_traced: traced && !removed,
            call_time: false,
            call_memory: false,
            scheme: CodeIxScheme::Two,
            meta: false,
            local_trace: false,
            global: false,
            fold_lw1: false,
            second_module: false,
            plan: WaitPlan::Erts,
        }
    }

    /// The same scenario named `name` under the pipeline wait plan.
    pub fn pipelined(mut self, name: &'static str) -> Self {
        self.name = name;
        self.plan = WaitPlan::Pipeline;
        self
    }

    /// The same scenario named `name` with LW1 folded into the removal's W1.
    pub fn folded(mut self, name: &'static str) -> Self {
        self.name = name;
        self.fold_lw1 = true;
        self
    }

    /// With global trace on the export entries (see [`LScenario::global`]).
    pub fn with_global(mut self) -> Self {
        self.global = true;
        self
    }

    /// With a second module `n` (see [`LScenario::second_module`]).
    pub fn with_second_module(mut self) -> Self {
        self.second_module = true;
        self
    }

    /// With meta trace in the legacy session (see [`LScenario::meta`]).
    pub fn with_meta(mut self) -> Self {
        self.meta = true;
        self
    }

    /// With local call trace and return frames (see [`LScenario::local_trace`]).
    pub fn with_local_trace(mut self) -> Self {
        self.local_trace = true;
        self
    }

    /// The same scenario named `name` under ERTS's three code indices.
    pub fn three(mut self, name: &'static str) -> Self {
        self.name = name;
        self.scheme = CodeIxScheme::Three;
        self
    }

    /// With call_time in a second session (see [`LScenario::call_time`]).
    pub fn with_call_time(mut self) -> Self {
        self.call_time = true;
        self
    }

    /// With call_memory in a second session (see [`LScenario::call_memory`]).
    pub fn with_call_memory(mut self) -> Self {
        self.call_memory = true;
        self
    }
}

pub fn loom_scenarios() -> Vec<LScenario> {
    use LOp::*;
    use LStep::*;
    // One function, one scheduler running `script`.
    let one = |name, traced, stagers: &[&[LOp]], script: &[LStep]| {
        let stagers = stagers.iter().map(|ops| ops.to_vec()).collect();
        LScenario::new(name, 1, traced, stagers, vec![script.to_vec()])
    };
    let load: &[LOp] = &[Load, Purge];
    let hits = [Call(0), Progress, Call(0)];
    let nap_in_old = [Enter(0), Nap, Local(0), Return];
    let mut out = vec![
        one("load-under-hits", true, &[load], &hits),
        one("delete-purge-under-hits", true, &[&[Delete, Purge]], &hits),
        one(
            "load-vs-trace-pattern",
            true,
            &[load, &[TracePattern(false)]],
            &hits,
        ),
        one(
            "trace-pattern-then-load",
            false,
            &[&[TracePattern(true), Load, Purge]],
            &[Call(0), Nap, Call(0)],
        ),
        // The engine's W0–W4 sequence (`finisher.rs::finish_in`, the one that also removes an
        // old version's breakpoints after a load) removing call_count from the traced module
        // while a scheduler calls across a progress point: W1 and W3 each needed here.
        one(
            "trace-pattern-off-under-hits",
            true,
            &[&[TracePattern(false)]],
            &[Call(0), Progress, Call(0)],
        ),
        // A process in old code: after LW1 it still makes a local call into version 1 while the
        // loader removes version 1's breakpoints (W1–W4) and purge checks it.
        one(
            "old-code-local-calls",
            true,
            &[load],
            &[Enter(0), Progress, Local(0), Return],
        ),
        // The load and the removal may pass while the scheduler naps in old code; purge runs
        // while the process is in version 1, or after it returned without a progress point since.
        one("old-code-purge", true, &[load], &nap_in_old),
        // As old-code-purge, untraced: the old version has no breakpoints to remove, so LW1 is
        // the only wait between the commit and purge's check of the process that entered it.
        one("old-code-untraced-purge", false, &[load], &nap_in_old),
        // Two sessions chained on the module (call_count in the legacy one, call_time in a
        // second): a load gives version 2 both, the old version's removal clears both in one
        // sequence, under calls whose process carries call_time frames (charged at each return
        // and at the progress point).
        one("two-sessions-load", true, &[load], &hits).with_call_time(),
        // A process in version 1 with a call_time frame and pbt naming it: scheduled out (the
        // nap) and in across the load and the removal of version 1's breakpoints, a local call
        // and a return there (charges of version 1's functions after the removal are dropped),
        // purge refused until it returned, then the free: no charge touches freed memory.
        one("old-code-call-time", true, &[load], &nap_in_old).with_call_time(),
        // As old-code-call-time with call_memory instead: the process allocates in version 1,
        // naps across the load and the removal, and its local call there charges version 1's f0
        // (the previous function), its return the local callee: the charges at calls and
        // returns read version 1's slots (no charge at the nap, unlike call_time).
        one("old-code-call-memory", true, &[load], &nap_in_old).with_call_memory(),
        // As old-code-call-time, the call_time session destroyed after the load, before the
        // purge: its nodes leave version 2 by the engine's one sequence while the process in
        // version 1 still holds its frame of that session.
        one(
            "old-code-session-destroy",
            true,
            &[&[Load, DestroySession, Purge]],
            &nap_in_old,
        )
        .with_call_time(),
        // code:purge/1 kills the process napping in version 1 with a call_time frame: the
        // purger signals it and waits while its charge at the nap (schedule-out, on the
        // scheduler's thread) may be in flight; the process exits at its wake-up (frames
        // dropped, no charge), then the version is freed after PW. Its local call and return
        // then do nothing.
        one(
            "old-code-purge-kill",
            true,
            &[&[Load, PurgeKill]],
            &nap_in_old,
        )
        .with_call_time(),
        // As old-code-purge-kill with two processes on the scheduler, both entering version 1
        // with call_time frames (a process switch between them): the purge may kill the first
        // while it is switched out, its pbt naming version 1's f0; it exits when switched in
        // again (no charge), and the purge waits for both.
        one(
            "old-code-purge-kill-2procs",
            true,
            &[&[Load, PurgeKill]],
            &[
                Enter(0),
                Switch,
                Enter(0),
                Nap,
                Switch,
                Local(0),
                Return,
                Switch,
                Return,
            ],
        )
        .with_call_time(),
        // Meta on a reloaded function: the process in version 1 makes a local call there after
        // the load, reading version 1's meta tracer object and cell while the removal of
        // version 1's breakpoints releases the object (consolidate) and retires the cell.
        // The cell is freed by the reclaim after the load (meta.rs M3, its wait).
        one(
            "old-code-meta",
            true,
            &[&[Load, Reclaim, Purge]],
            &nap_in_old,
        )
        .with_meta(),
        // Local call trace with return frames in old code: the process enters version 1 (a
        // call message, a return frame naming version 1's f0), naps across the load and the
        // removal, makes a local call there, and returns: its frame sends return_from before
        // the purge frees version 1.
        one("old-code-local-trace", true, &[load], &nap_in_old).with_local_trace(),
        // The collection (trace_info of call_time, `Engine::trace_info_module`) racing a load
        // while a process calls, progresses and calls again, charging call_time (no purge: its
        // wait would multiply the interleavings of the collection's three waits by loom's).
        one(
            "load-collect",
            true,
            &[&[Load], &[Collect]],
            &[Call(0), Call(0)],
        )
        .with_call_time(),
        // Global (export) trace on the module's entries across a load: Blocking clears it under
        // the block (ERTS), NonBlocking keeps it; the calls run the entry's breakpoint, then
        // the version they read.
        // After the load the stager asks trace_info (the export entry first, as ERTS): global
        // under NonBlocking, false under Blocking.
        one("load-global", true, &[&[Load, GlobalInfo, Purge]], &hits).with_global(),
        // The engine's one sequence on the export area: global trace off under calls.
        one(
            "global-off-under-hits",
            true,
            &[&[GlobalInfo, GlobalOff, GlobalInfo]],
            &hits,
        )
        .with_global(),
        // Local and global in one session exclude each other (ERTS `erts_set_trace_pattern`):
        // local call trace and call_time set in the global session take its global flag off the
        // export entries in the same sequence, then global set again takes the session's nodes
        // off version 1's functions, while a process calls through the entries.
        one(
            "global-local-exclusion",
            true,
            &[&[LocalInGlobal, GlobalInfo, GlobalOn, GlobalInfo]],
            &hits,
        )
        .with_global(),
        // The export entries' dispatch words, one per code index (`code_ix.rs::ExportEntry`):
        // global trace off between two loads of the untraced module. Under NonBlocking the
        // first load copies the active index's word (the breakpoint) into the new index, global
        // off restores only the new active index's word and frees the entry's node, so the old
        // index keeps a stale breakpoint word until the second load's staging copies over it
        // (a call through that index after the second commit would otherwise dispatch to the
        // emptied entry).
        one(
            "global-off-reload",
            false,
            &[&[Load, GlobalOff, Purge, Load, GlobalInfo, Purge]],
            &hits,
        )
        .with_global(),
    ];
    // ERTS's three code indices (`CodeIxScheme::Three`): the code barrier before each commit,
    // no wait after it, the purge's wait before its check.
    // Variants of `Two` scenarios, each (from, to) renamed `to` by `f`.
    let variants = |out: &[LScenario],
                    pairs: &[(&str, &'static str)],
                    f: fn(LScenario, &'static str) -> LScenario| {
        pairs
            .iter()
            .map(|&(from, to)| {
                let s = out.iter().find(|s| s.name == from).expect("a Two scenario");
                f(s.clone(), to)
            })
            .collect::<Vec<LScenario>>()
    };
    let three = variants(&out, THREE_TWINS, LScenario::three);
    let pipelined = variants(&out, PIPELINE_TWINS, LScenario::pipelined);
    // LW1 folded into the removal's W1 (`Engine::with_lw1_fold`, docs/nonblocking-load.md §3):
    // every `Two` scenario whose load or delete finds a traced old version (LP3 and the purge
    // rest on the removal's W1), and old-code-untraced-purge (LW1 stays there). Not folded: the
    // two with no load (trace-pattern-off-under-hits, global-off-under-hits), where the
    // sequence is the default's, and the `-3ix` ones (`Three` has no LW1).
    let folded = variants(
        &out,
        &[
            ("load-under-hits", "load-under-hits-fold"),
            ("delete-purge-under-hits", "delete-purge-under-hits-fold"),
            ("load-vs-trace-pattern", "load-vs-trace-pattern-fold"),
            ("trace-pattern-then-load", "trace-pattern-then-load-fold"),
            ("old-code-local-calls", "old-code-local-calls-fold"),
            ("old-code-purge", "old-code-purge-fold"),
            ("old-code-untraced-purge", "old-code-untraced-purge-fold"),
            ("two-sessions-load", "two-sessions-load-fold"),
            ("old-code-call-time", "old-code-call-time-fold"),
            ("old-code-session-destroy", "old-code-session-destroy-fold"),
            ("old-code-purge-kill", "old-code-purge-kill-fold"),
            ("old-code-meta", "old-code-meta-fold"),
            ("old-code-local-trace", "old-code-local-trace-fold"),
            ("load-collect", "load-collect-fold"),
            ("load-global", "load-global-fold"),
        ],
        LScenario::folded,
    );
    out.extend(three);
    out.extend(folded);
    out.extend(pipelined);
    // Two commits with no wait between the first's commit and the second's staging: a delete
    // of the untraced module (no breakpoints to remove) and a load right after it (the module
    // has no current code, so no purge is needed first), while a call reads the code index
    // between the delete's code barrier and its commit and the export entry after the load
    // staged: with two indices (`load-two-code-ix`) it reads the staged, uncommitted version.
    out.push(
        one(
            "delete-load-under-hits-3ix",
            false,
            &[&[Delete, Load, Purge]],
            &[Nap, Call(0), Nap],
        )
        .three("delete-load-under-hits-3ix"),
    );
    // The code barrier's own part (docs/nonblocking-load.md §3 LN6'–LN8'): three commits with
    // no other wait between the first's commit and the third's staging, which needs a second
    // module (the code index is one for all). A delete of the untraced `m` (no breakpoints to
    // remove), a load of `n`, and a load of `m` again (after a delete no purge is needed first:
    // ERTS's `finish_loading` refuses only while both versions exist), while a call of `m:f0`
    // reads the code index between the delete's code barrier and its commit, and then `m`'s
    // export entry: the third load stages the slot that call read. The load of `n`'s code barrier
    // is the one wait that begins after the delete's commit and ends before that staging
    // (`load-skip-code-barrier`); with one module a purge of `m` must come between two loads
    // of `m`, and its first wait does the same.
    out.push(
        one(
            "delete-load-other-load-3ix",
            false,
            &[&[Delete, LoadIn(1), Load]],
            &[Nap, Call(0)],
        )
        .three("delete-load-other-load-3ix")
        .with_second_module(),
    );
    out
}

/// The loom scenarios with a second scheduler (but the old-code ones), plus a churn of every op
/// on three functions, also with the LW1 fold (`load-churn-fold`).
pub fn shuttle_scenarios() -> Vec<LScenario> {
    use LOp::*;
    use LStep::*;
    let script = |fs, rounds| crate::rotating_calls(fs, rounds, Call, Progress, Nap);
    let mut out = loom_scenarios();
    for s in out.iter_mut() {
        // The old-code scenarios keep their one scheduler: a second one that must pass a
        // progress point for each of the load's five waits would keep their kills out of
        // reach of 2,000 iterations.
        if !s.name.starts_with("old-code") {
            s.schedulers.push(script(s.functions, 3));
        }
        // Three local calls after a nap rather than one after a progress point (which yields,
        // and PCT then runs the loader's clear to its end first): PCT kills
        // load-clear-old-at-once here within 2,000 iterations, on the loom script it did not.
        if s.name.starts_with("old-code-local-calls") {
            s.schedulers[0] = vec![Enter(0), Nap, Local(0), Local(0), Local(0), Return];
        }
    }
    let churn = vec![
        vec![Load, Purge, Load, Purge, Delete, Purge, Load, Purge],
        vec![TracePattern(false), TracePattern(true)],
    ];
    let schedulers = (0..3).map(|_| script(3, 5)).collect();
    let churn = LScenario::new("load-churn", 3, true, churn, schedulers);
    out.push(churn.clone());
    out.push(churn.folded("load-churn-fold"));
    out
}

/// Run one execution. Panics on any violation.
pub fn run<P: ThreadProgress>(scn: &LScenario, proto: LoadProtocol, mutant: Option<Mutant>) {
    // Room for the legacy session and the call_time session `t`.
    let cfg = EngineConfig::simple(0, scn.schedulers.len()).with_mutant(mutant);
    let e = Engine::<P>::new_with_sessions(cfg, 2);
    let mut e = if scn.second_module {
        use bpspec_reference::ModuleConfig;
        let ms = [
            ModuleConfig::numbered("m", scn.functions, scn.traced),
            ModuleConfig::numbered("n", 1, false),
        ];
        e.with_modules(&ms, proto)
    } else {
        e.with_module(scn.functions, proto, scn.traced)
    };
    if scn.stagers.iter().flatten().any(|&o| o == LOp::PurgeKill) {
        e = e.with_kills();
    }
    e = e.with_code_ix(scn.scheme);
    e = e.with_wait_plan(scn.plan);
    if scn.fold_lw1 {
        e = e.with_lw1_fold();
    }
    if scn.global {
        e = e.with_global_trace();
    }
    let e = Arc::new(e);
    let global = scn.global.then(|| {
        let g = e.create_session("g").expect("a global session");
        let spec = bpspec_reference::TraceSpec::global().session(g);
        e.trace_pattern_module_spec(true, &spec)
            .expect("global on m");
        (g, bpspec_reference::Mailbox::new(1_002))
    });
    let gsess = global.as_ref().map(|(g, _)| *g);
    let meta_box = scn.meta.then(|| bpspec_reference::Mailbox::new(1_000));
    if let Some(mb) = &meta_box {
        let spec =
            bpspec_reference::TraceSpec::default().meta(bpspec_reference::ProcessTracer::spec(mb));
        e.trace_pattern_module_spec(true, &spec).expect("meta on m");
    }
    let trace_box = scn
        .local_trace
        .then(|| bpspec_reference::Mailbox::new(1_001));
    if trace_box.is_some() {
        let spec = bpspec_reference::TraceSpec::local()
            .ms(Some(bpspec_reference::MatchSpec::EXCEPTION_TRACE));
        e.trace_pattern_module_spec(true, &spec)
            .expect("local call trace on m");
    }
    let timed = (scn.call_time || scn.call_memory).then(|| {
        let s1 = e.create_session("t").expect("a second session");
        let spec = bpspec_reference::TraceSpec::from(bpspec_reference::FlagSet {
            call_time: scn.call_time,
            call_memory: scn.call_memory,
            ..Default::default()
        })
        .session(s1);
        e.trace_pattern_module_spec(true, &spec)
            .expect("call_time or call_memory on m");
        s1
    });
    let stagers: Vec<_> = scn
        .stagers
        .iter()
        .map(|ops| {
            let (e, ops) = (e.clone(), ops.clone());
            spawn(move || {
                // This stager's view of the global session's export breakpoints.
                let mut global_on = gsess.is_some();
                // ... and of its local pattern on the module (carried by loads).
                let mut local_on = false;
                for o in ops {
                    match o {
                        LOp::Load => {
                            let _ = e.load();
                            global_on &= proto == LoadProtocol::NonBlocking;
                        }
                        LOp::LoadIn(m) => {
                            let _ = e.load_in(m);
                        }
                        LOp::Delete => {
                            let _ = e.delete();
                        }
                        LOp::Purge => {
                            let _ = e.purge();
                        }
                        LOp::TracePattern(on) => {
                            e.trace_pattern_module(on);
                        }
                        LOp::PurgeKill => {
                            let _ = e.purge_kill();
                        }
                        LOp::DestroySession => {
                            let s1 = timed.expect("DestroySession needs the call_time session");
                            assert_eq!(e.destroy_session(s1), Ok(true));
                        }
                        LOp::GlobalOff => {
                            let g = gsess.expect("GlobalOff needs global trace");
                            let spec = bpspec_reference::TraceSpec::global().session(g);
                            e.trace_pattern_module_spec(false, &spec)
                                .expect("global off");
                            global_on = false;
                        }
                        LOp::LocalInGlobal => {
                            let g = gsess.expect("LocalInGlobal needs global trace");
                            let spec =
                                bpspec_reference::TraceSpec::from(bpspec_reference::FlagSet {
                                    local: true,
                                    call_time: true,
                                    ..Default::default()
                                })
                                .session(g);
                            e.trace_pattern_module_spec(true, &spec)
                                .expect("local and call_time in the global session");
                            global_on = false;
                            local_on = true;
                        }
                        LOp::GlobalOn => {
                            let g = gsess.expect("GlobalOn needs global trace");
                            let spec = bpspec_reference::TraceSpec::global().session(g);
                            e.trace_pattern_module_spec(true, &spec).expect("global on");
                            global_on = true;
                            local_on = false;
                        }
                        LOp::GlobalInfo => {
                            let g = gsess.expect("GlobalInfo needs global trace");
                            let t = e
                                .trace_info_module(g, 0, bpspec_reference::InfoKey::Traced)
                                .to_string();
                            let want = match (global_on, local_on) {
                                (true, _) => "global",
                                (false, true) => "local",
                                (false, false) => "false",
                            };
                            assert_eq!(t, format!("{{traced,{want}}}"), "trace_info of m:f0/0");
                        }
                        LOp::Reclaim => {
                            e.reclaim_meta_tracers();
                        }
                        LOp::Collect => {
                            let s1 = timed.expect("Collect needs the call_time session");
                            let t = e
                                .trace_info_module(s1, 0, bpspec_reference::InfoKey::CallTime)
                                .to_string();
                            assert!(
                                t.starts_with("{call_time,["),
                                "trace_info of m:f0/0's call_time: {t}"
                            );
                        }
                    }
                }
            })
        })
        .collect();
    let scheds: Vec<_> = scn
        .schedulers
        .iter()
        .enumerate()
        .map(|(id, script)| {
            let (e, script) = (e.clone(), script.clone());
            let words = i64::from(scn.call_memory);
            let tracer = trace_box
                .as_ref()
                .map(bpspec_reference::ProcessTracer::spec);
            let gtracer = global
                .as_ref()
                .map(|(g, mb)| (*g, bpspec_reference::ProcessTracer::spec(mb)));
            spawn(move || {
                let mut s = Scheduler::start(e, id);
                if let Some((g, t)) = gtracer {
                    let flags = bpspec_reference::ProcFlags {
                        call: true,
                        ..Default::default()
                    };
                    assert_eq!(s.trace_code_proc(g, true, flags, Some(t)), Ok(true));
                }
                if let Some(t) = tracer {
                    let flags = bpspec_reference::ProcFlags {
                        call: true,
                        ..Default::default()
                    };
                    assert_eq!(s.trace_code_proc(0, true, flags, Some(t)), Ok(true));
                }
                if script.contains(&LStep::Switch) {
                    s.add_code_proc();
                }
                let mut seen = Vec::new();
                for st in script {
                    match st {
                        LStep::Call(f) => seen.push(s.call_ext(f)),
                        LStep::Enter(f) => seen.push(s.call_and_stay(f)),
                        LStep::Local(f) => seen.push(s.local_call(f)),
                        LStep::Return => s.return_out(),
                        LStep::Progress => {
                            s.progress();
                            crate::switch_after_progress();
                        }
                        LStep::Nap => {
                            s.sleep();
                            s.wake();
                        }
                        LStep::Switch => s.switch_proc(),
                    }
                    s.alloc_in_code(words);
                }
                s.sleep();
                (seen, s.counted(), s.code_procs_timem_calls())
            })
        })
        .collect();
    for h in stagers {
        h.join().expect("stager panicked");
    }
    let mut counted = 0;
    let mut timem_calls = 0;
    let mut remote_runs = 0;
    for (id, h) in scheds.into_iter().enumerate() {
        let (seen, c, t) = h.join().expect("scheduler panicked");
        counted += c;
        timem_calls += t;
        remote_runs += seen.iter().filter(|c| c.version != 0 && !c.local).count();
        let mut last = 0;
        for (n, call) in seen.iter().enumerate() {
            if call.version == 0 || call.local {
                continue;
            }
            assert!(
                call.version >= last,
                "LP2 violated: scheduler {id} call {n} ran version {} after version {last}",
                call.version
            );
            last = call.version;
            if scn.always_traced {
                assert!(
                    call.counted,
                    "LP3 violated: scheduler {id} call {n} ran version {} uncounted",
                    call.version
                );
            }
        }
    }
    assert_eq!(
        e.total_count(),
        counted,
        "LP1 violated: a counted call was lost"
    );
    assert_eq!(
        e.total_timed(),
        timem_calls as i64,
        "call_time count conservation violated: a call_time count was lost across versions"
    );
    if let Some((_, mb)) = &global {
        let calls = mb
            .take_strings()
            .iter()
            .filter(|m| m.contains(",call,"))
            .count();
        let kept = proto == LoadProtocol::NonBlocking
            && !scn
                .stagers
                .iter()
                .flatten()
                .any(|&o| matches!(o, LOp::GlobalOff | LOp::LocalInGlobal));
        // With local call trace in the global session (`LocalInGlobal`) the session's call
        // messages come from both breakpoints: a call that reads the export entry's half before
        // the commit and the version's after it runs both (each breakpoint reads the active
        // index at its hit, as ERTS's `erts_generic_breakpoint` does at the trampoline and again
        // at the function's code), so up to two messages per call.
        let per_call = if scn
            .stagers
            .iter()
            .flatten()
            .any(|&o| o == LOp::LocalInGlobal)
        {
            2
        } else {
            1
        };
        assert!(
            calls <= per_call * remote_runs && (!kept || calls == remote_runs),
            "global trace: {calls} call messages for {remote_runs} remote calls that ran code"
        );
    }
    if let Some(mb) = &trace_box {
        // Every traced call's return frame ran (none was lost or ran twice), in whichever
        // version it named.
        let msgs = mb.take_strings();
        let calls = msgs.iter().filter(|m| m.contains(",call,")).count();
        let returns = msgs.iter().filter(|m| m.contains(",return_from,")).count();
        assert_eq!(
            calls, returns,
            "a traced call without its return frame: {msgs:?}"
        );
    }
    // The pipeline plan leaves the last sequence's unlinked nodes for the next one's first wait:
    // settle them before the at-rest check (no other plan has any, and makes no call here).
    if e.wait_plan().pipelines() {
        e.settle();
    }
    if let Err(m) = e.check_at_rest() {
        panic!("at rest: {m}");
    }
}

/// Which mutant each checker kills on which scenario, per protocol (a mutant of the other
/// protocol changes nothing there).
pub fn expected_kills(checker: &str, proto: LoadProtocol) -> Vec<(Mutant, &'static str)> {
    let mut claims = claimed_kills(checker, proto);
    // ERTS's three code indices run the same W0–W4 sequence and load steps, so every claim on a
    // scenario with a `-3ix` twin is claimed on the twin too: loom at the base claim's bound
    // (the W0–W4 mutants on the `old-code-*` twins at 3), shuttle PCT at 2,000 iterations
    // (first kills 1 to 655, the latest `load-skip-lw1-after-commit` on
    // `old-code-untraced-purge-3ix`, as on its `Two` twin); the kill matrices of
    // models/tests/load_loom.rs and load_shuttle.rs run them. None needs an exception. The
    // pipeline plan's twins likewise (`skip-w4-before-free` there frees at once what the plan
    // would leave to the next wait). Not shuttle's `-3ix` twins under `Blocking`, which shuttle
    // does not run ([`runs_in_shuttle`]).
    let three = !(checker == "shuttle" && proto == LoadProtocol::Blocking);
    for twins in [three.then_some(THREE_TWINS), Some(PIPELINE_TWINS)]
        .into_iter()
        .flatten()
    {
        for twin in twin_claims(&claims, twins) {
            if !claims.contains(&twin) {
                claims.push(twin);
            }
        }
    }
    claims
}

/// The claims of [`expected_kills`] before their `-3ix` twins are added.
fn claimed_kills(checker: &str, proto: LoadProtocol) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    // The waits of the engine's one W0–W4 sequence (`finisher.rs::finish_in`), which runs the
    // module's trace_pattern and a NonBlocking load's removal of the old version's
    // breakpoints, each removed, under both protocols (trace_pattern is the same under both).
    // W0 and W1 by loom only: removed, they are stale reads (a slot or a half read before the
    // write a wait orders), which shuttle's sequentially consistent atomics do not show (2,000
    // iterations, PCT and random: both survive). W4 only where a process carries call_time
    // frames (below): with call_count alone no scheduler reaches an unlinked node after W3, but
    // a charge reads the slot whatever the instruction says (docs/readers.md, the timem readers
    // across versions).
    let waits = [
        (SkipWaitBeforeUninstall, "trace-pattern-then-load"),
        (SkipWaitBeforeConsolidate, "trace-pattern-off-under-hits"),
    ]
    .into_iter()
    .chain(
        [
            (SkipWaitBeforeInstall, "trace-pattern-then-load"),
            (SkipWaitBeforeCommit, "trace-pattern-off-under-hits"),
        ]
        .into_iter()
        .filter(|_| checker == "loom"),
    );
    match (checker, proto) {
        ("loom" | "shuttle", LoadProtocol::NonBlocking) => vec![
            (LoadCommitBeforeBreakpoints, "load-under-hits"),
            // With the old version traced, its removal (W1–W4) and purge's PW stand in for
            // LW1; untraced, LW1 alone orders a process's entry before purge's check.
            (LoadSkipWaitAfterCommit, "old-code-untraced-purge"),
            (LoadClearOldAtOnce, "old-code-local-calls"),
            (LoadPurgeSkipCheck, "old-code-purge"),
        ]
        .into_iter()
        // shuttle is sequentially consistent: a free unordered after the last return is only a
        // causality violation, which loom alone sees.
        .chain((checker == "loom").then_some((LoadPurgeSkipWait, "old-code-purge")))
        .chain(waits)
        // The same sequence removing the old version's breakpoints after a load, under a
        // process that naps in the old version and then calls into it: W1 and W3 each needed
        // there. Loom only, at preemption bound 3 at least (`models/tests/load_loom.rs`): the
        // loader must be switched to while the scheduler naps and away right after the commit
        // (W1) or the uninstall (W3); shuttle (2,000 iterations) and loom at bound 2 miss both.
        .chain(
            [
                (SkipWaitBeforeCommit, "old-code-purge"),
                (SkipWaitBeforeConsolidate, "old-code-purge"),
            ]
            .into_iter()
            .filter(|_| checker == "loom"),
        )
        // call_time frames and a second session on loaded versions, loom (the W0–W4 mutants at
        // bound 3 on the old-code scenarios, `models/tests/load_loom.rs`): W4 of the old
        // version's removal, the process's charge at its schedule-out or return reading the
        // slot of version 1 and then a node freed without W4 (old-code-call-time); W4 of the
        // session destroy's sequence on version 2 (old-code-session-destroy, the process
        // entered version 2; shuttle PCT too, below); the free without PW under a charge.
        // loom only: shuttle PCT (2,000 iterations) misses the first and the last.
        .chain(
            [
                (SkipWaitBeforeFree, "old-code-call-time"),
                (LoadPurgeSkipWait, "old-code-call-time"),
                // code:purge/1 without PW: the killed process's exit (its signal check, its
                // decrement) unordered with the free.
                (LoadPurgeSkipWait, "old-code-purge-kill"),
            ]
            .into_iter()
            .filter(|_| checker == "loom"),
        )
        // Both checkers: the two-session version built after its commit (a mix); the old
        // version's breakpoints cleared at once under a process with a call_time frame.
        // code:purge/1 without the check and its wait for the killed process's exit: the
        // version freed under the process (its charge at the nap, its signal check).
        // ERTS's waits with two code indices: the call reads the slot the load staged after
        // the delete's commit (an uncommitted version; loom: its liveness word, the call's
        // first read of it, not ordered after its creation by the loader).
        .chain((checker == "loom").then_some((LoadTwoCodeIx, "delete-load-under-hits-3ix")))
        // ERTS's three indices without the code barrier (the purge's first wait kept): with a
        // load of the second module `n` between two loads of `m`, no other wait lies between
        // the first commit and the third staging, which rewrites the slot a call read before
        // the first commit (loom: that call reads `m`'s staged version 2, whose liveness word
        // has no edge from its creation). It survives every one-module `-3ix` scenario, where
        // a purge's first wait or a removal's W1 stands between (docs/nonblocking-load.md §5).
        .chain((checker == "loom").then_some((LoadSkipCodeBarrier, "delete-load-other-load-3ix")))
        // Each wait of the `Three` scheme's purge is needed: its first wait (removed, with the
        // code barrier, by load-skip-lw1-after-commit under `Three`), for a call that read the
        // old address before the commit and enters the untraced old version after the check;
        // PW, which `Three` keeps because `in_code` is relaxed (the last return's reads not
        // ordered before the free). loom only, as under `Two`.
        .chain(
            [
                (LoadSkipWaitAfterCommit, "old-code-untraced-purge-3ix"),
                (LoadPurgeSkipWait, "old-code-purge-3ix"),
            ]
            .into_iter()
            .filter(|_| checker == "loom"),
        )
        .chain(fold_kills(checker))
        // Meta and local call trace with return frames in old code (loom, W1 and W3 at bound 3,
        // as on old-code-purge): the removal's W1 and W3 each needed for a local call in version
        // 1 reading its node, meta object and match spec; cleared at once, the node freed under
        // that call. The meta mutants survive there (docs/nonblocking-load.md §3).
        .chain(loom_only(
            checker,
            ["old-code-meta", "old-code-local-trace"]
                .into_iter()
                .flat_map(|s| [SkipWaitBeforeCommit, SkipWaitBeforeConsolidate].map(|m| (m, s)))
                .collect(),
        ))
        .chain(collect_kills(checker, proto))
        .chain(global_kills(checker))
        .chain(dispatch_kills(proto))
        .chain(memory_kills(checker, proto))
        .chain(two_procs_kills(checker, proto))
        // The last four, on meta, local call trace and global trace (shuttle PCT, 2,000
        // iterations: first kills at iterations 2, 3, 83 and 10): the old version's breakpoints
        // cleared at once under the local call that reads its meta object or pushes its return
        // frame; the purge without its check under the process's return frame; the global
        // scenario's version 2 built after its commit.
        .chain([
            (LoadCommitBeforeBreakpoints, "two-sessions-load"),
            (LoadClearOldAtOnce, "old-code-call-time"),
            (SkipWaitBeforeFree, "old-code-session-destroy"),
            (LoadPurgeSkipCheck, "old-code-purge-kill"),
            (LoadClearOldAtOnce, "old-code-meta"),
            (LoadClearOldAtOnce, "old-code-local-trace"),
            (LoadPurgeSkipCheck, "old-code-local-trace"),
            (LoadCommitBeforeBreakpoints, "load-global"),
        ])
        .collect(),
        ("loom" | "shuttle", LoadProtocol::Blocking) => vec![
            (LoadBlockingWithoutBlock, "load-under-hits"),
            (LoadBlockingWithoutBlock, "delete-purge-under-hits"),
            (LoadPurgeSkipCheck, "old-code-purge"),
        ]
        .into_iter()
        // Under Blocking by loom only: shuttle PCT kills W2 and W3 here too, but W3 only at
        // iteration 1,484 of 2,000 (trace-pattern-off-under-hits@blocking), too near the bound
        // to claim; the NonBlocking rows carry shuttle's column.
        .chain(waits.filter(|_| checker == "loom"))
        // The session destroy is not under the block: its sequence's W4 on version 2, under a
        // process in version 2 with call_time frames of that session (loom at bound 3, shuttle
        // PCT: a hit on the unlinked node); W1 there by loom only. The last three, on meta, local
        // call trace and global trace: shuttle PCT's first kills at iterations 10, 12 and 2 of
        // 2,000.
        .chain([
            (LoadBlockingWithoutBlock, "two-sessions-load"),
            (LoadPurgeSkipCheck, "old-code-call-time"),
            (SkipWaitBeforeFree, "old-code-session-destroy"),
            (LoadPurgeSkipCheck, "old-code-purge-kill"),
            (LoadPurgeSkipCheck, "old-code-meta"),
            (LoadPurgeSkipCheck, "old-code-local-trace"),
            (LoadBlockingWithoutBlock, "load-global"),
        ])
        .chain(loom_only(
            checker,
            vec![(SkipWaitBeforeCommit, "old-code-session-destroy")],
        ))
        .chain(collect_kills(checker, proto))
        .chain(global_kills(checker))
        .chain(dispatch_kills(proto))
        .chain(memory_kills(checker, proto))
        .chain(two_procs_kills(checker, proto))
        .collect(),
        (other, _) => panic!("unknown checker {other}"),
    }
}

/// The `Two` scenarios run again under ERTS's three code indices (`CodeIxScheme::Three`: the
/// code barrier before each commit, no wait after it, the purge's wait before its check), each
/// (from, its `-3ix` twin). Two more `-3ix` scenarios have no `Two` twin
/// (`delete-load-under-hits-3ix`, `delete-load-other-load-3ix`).
pub const THREE_TWINS: &[(&str, &str)] = &[
    ("load-under-hits", "load-under-hits-3ix"),
    ("old-code-purge", "old-code-purge-3ix"),
    ("old-code-untraced-purge", "old-code-untraced-purge-3ix"),
    ("old-code-call-time", "old-code-call-time-3ix"),
    ("old-code-purge-kill", "old-code-purge-kill-3ix"),
    // A call may read the previous index after the commit (no wait after it under `Three`): it
    // dispatches through that index's word.
    ("load-global", "load-global-3ix"),
];

/// Whether shuttle runs scenario `name` under `proto`. Not the `-fold` twins under `Blocking`,
/// which has no LW1 to fold, and not the `-3ix` twins of [`THREE_TWINS`] under `Blocking`: the
/// three-index scheme's steps (the code barrier, `Engine::code_wait`; the purge's first wait,
/// `Engine::purge_grace`) run under `NonBlocking` only, so under the block a twin makes exactly
/// its base's decisions (`twins_make_decisions_of_their_own`, tests/load_shuttle.rs, compares
/// them and fails if one starts to differ). The two `-3ix` scenarios without a `Two` twin run
/// under both. loom runs every scenario under both protocols but the `-fold` ones: its
/// executions also depend on the orderings of the operations, which the decisions do not show,
/// and its `-3ix@blocking` rows cost a fraction of a second.
pub fn runs_in_shuttle(name: &str, fold_lw1: bool, proto: LoadProtocol) -> bool {
    proto == LoadProtocol::NonBlocking
        || !(fold_lw1 || THREE_TWINS.iter().any(|&(_, twin)| twin == name))
}

/// The `Two` scenarios run again under the pipeline wait plan, each (from, its `-pipeline`
/// twin): a trace_pattern then a load (a pipelined call's unlinked nodes meet the load's block or
/// removal), a removal under a process with call_time frames followed by a purge (the removal's
/// nodes freed after the purge's PW), and a session destroyed while a process is in old code.
pub const PIPELINE_TWINS: &[(&str, &str)] = &[
    (
        "trace-pattern-then-load",
        "trace-pattern-then-load-pipeline",
    ),
    ("old-code-call-time", "old-code-call-time-pipeline"),
    (
        "old-code-session-destroy",
        "old-code-session-destroy-pipeline",
    ),
];

/// Each claim of `claims` on a scenario with a twin in `twins` ([`THREE_TWINS`],
/// [`PIPELINE_TWINS`]), claimed on the twin too.
pub fn twin_claims(
    claims: &[(Mutant, &'static str)],
    twins: &[(&str, &'static str)],
) -> Vec<(Mutant, &'static str)> {
    claims
        .iter()
        .filter_map(|&(m, s)| twins.iter().find(|t| t.0 == s).map(|&(_, twin)| (m, twin)))
        .collect()
}

/// LW1 folded into the removal's W1 (the `-fold` scenarios, `Engine::with_lw1_fold`,
/// `NonBlocking` only). That W1 now orders the stage's half writes before the half reads of a
/// call that read the old version's address before the commit (loom: a causality violation;
/// W1 survives load-under-hits, delete-purge-under-hits, load-collect and load-global, where LW1
/// does it) and keeps that call counted (LP3, `remote-calls-counted` in the stateright model:
/// shuttle sees it too, "ran version 1 uncounted", where without the fold W1 is loom's alone);
/// LW1 stays where nothing is removed (old-code-untraced-purge-fold). Every other load mutant,
/// each wait of W0–W4, the collection's mutants and the export entry's copy are killed under the
/// fold too, each on the `-fold` twin of a scenario that kills it without the fold.
///
/// Both checkers; shuttle PCT's first killing iteration of 2,000 (fixed seed) in brackets, each
/// at most a third of the bound (the margin of the claims without the fold: 655 claimed, 694,
/// 759 and 898 not). loom at bound 2 (the W0–W4 mutants on the `old-code-*` scenarios at bound 3,
/// `collect-without-flip` at its floor 3, `KILL_BOUND_FLOOR`).
fn fold_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    let both = [
        (LoadCommitBeforeBreakpoints, "load-under-hits-fold"), // [6]
        (SkipWaitBeforeCommit, "load-under-hits-fold"),        // [56]
        (SkipWaitBeforeCommit, "delete-purge-under-hits-fold"), // [3]
        (LoadSkipWaitAfterCommit, "old-code-untraced-purge-fold"), // [189]
        (LoadPurgeSkipCheck, "old-code-purge-fold"),           // [179]
        (LoadClearOldAtOnce, "old-code-local-calls-fold"),     // [85]
        (SkipWaitBeforeUninstall, "trace-pattern-then-load-fold"), // [392]
        (SkipWaitBeforeCommit, "old-code-meta-fold"),          // [46]
        (SkipWaitBeforeFree, "old-code-session-destroy-fold"), // [258]
        (LoadCommitBeforeBreakpoints, "two-sessions-load-fold"), // [7]
        (LoadClearOldAtOnce, "old-code-call-time-fold"),       // [3]
        (LoadPurgeSkipCheck, "old-code-purge-kill-fold"),      // [101]
        (LoadClearOldAtOnce, "old-code-meta-fold"),            // [2]
        (LoadClearOldAtOnce, "old-code-local-trace-fold"),     // [3]
        (LoadPurgeSkipCheck, "old-code-local-trace-fold"),     // [83]
        // The export area: version 2 built after its commit; the removal's W1 (the export
        // entry's call read version 1's address before the commit); the removal's flip of the
        // breakpoint index making the export entry's uncopied half active (I5).
        (LoadCommitBeforeBreakpoints, "load-global-fold"), // [23]
        (SkipWaitBeforeCommit, "load-global-fold"),        // [14]
        (SkipConsolidateCopy, "load-global-fold"),         // [1]
        // The collection on the current version racing the load: the skipped merge (a
        // call_time count lost), the early free, TW2; and the removal's W1.
        (CollectSkipMerge, "load-collect-fold"), // [11]
        (CollectFreeBeforeLastWait, "load-collect-fold"), // [135]
        (CollectSkipWaitBeforeRead, "load-collect-fold"), // [139]
        (SkipWaitBeforeCommit, "load-collect-fold"), // [2]
    ];
    // loom alone: stale reads and frees unordered after a read, which shuttle's sequentially
    // consistent atomics do not show (each survives shuttle's 2,000 iterations, PCT and random,
    // on its scenario), and TW1, TW3 and the collection without its flip (shuttle PCT: TW1
    // survives, TW3 at 969, no flip at 777, too near the bound to claim).
    let loom = [
        (LoadPurgeSkipWait, "old-code-purge-fold"),
        (LoadPurgeSkipWait, "old-code-purge-kill-fold"),
        (SkipWaitBeforeInstall, "trace-pattern-then-load-fold"),
        (SkipWaitBeforeConsolidate, "old-code-purge-fold"),
        (SkipWaitBeforeConsolidate, "old-code-local-trace-fold"),
        (SkipWaitBeforeFree, "old-code-call-time-fold"),
        (CollectSkipWaitBeforeFlip, "load-collect-fold"),
        (CollectSkipWaitBeforeMerge, "load-collect-fold"),
        (CollectWithoutFlip, "load-collect-fold"),
    ];
    // shuttle alone: W3 on the churn (a shuttle scenario; loom's W3 rows are above), the
    // dispatch word still the breakpoint instruction over a consolidated slot.
    let shuttle = [(SkipWaitBeforeConsolidate, "load-churn-fold")]; // [47]
    let mut out = both.to_vec();
    if checker == "loom" {
        out.extend(loom);
    } else {
        out.extend(shuttle);
    }
    out
}

/// The engine's one W0–W4 sequence on the module's export area (global trace off under calls,
/// `global-off-under-hits`), both protocols, loom at bound 2: W1 (the export entry's staging
/// half read through the new index without the wait's edge) and W3 (the dispatch word still
/// the breakpoint instruction, its slot emptied). W0, W2 and W4 survive there, as on
/// `trace-pattern-off-under-hits` (a removal installs nothing; W2 and W4 guard nothing a hit
/// still reads after W3 with no charge on the export area).
///
/// Local and global in one session (`global-local-exclusion`: one sequence over the version's
/// area and the export area each time, installing in one and removing in the other), both
/// protocols, loom at bound 2: W0 (3,849 executions: version 1's f0 patched before its slot
/// holds the session's new node), W3 (4,757: the export entry's dispatch word still the
/// breakpoint, its slot emptied by the consolidate) and W4 (1 execution: the session's call_time
/// node on version 1 freed at once by global's clear, under the process's charge); shuttle PCT
/// (2,000 iterations) W4 (first kills at iterations 97 and 166, Blocking / NonBlocking). W1 and
/// W2 survive there (loom bound 2, shuttle 2,000 PCT and random); W3 is killed by shuttle PCT
/// under NonBlocking only at iteration 759, too near the bound to claim.
fn global_kills(checker: &str) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    let mut out = loom_only(
        checker,
        vec![
            (SkipWaitBeforeCommit, "global-off-under-hits"),
            (SkipWaitBeforeConsolidate, "global-off-under-hits"),
            (SkipWaitBeforeInstall, "global-local-exclusion"),
            (SkipWaitBeforeConsolidate, "global-local-exclusion"),
        ],
    );
    out.push((SkipWaitBeforeFree, "global-local-exclusion"));
    out
}

/// The export entries' dispatch words, one per code index (`code_ix.rs::ExportEntry`), loom
/// and shuttle (each at its first execution or iteration: a sequential bug).
/// `global-dispatch-staging-ix` (install and uninstall patch the staging index's word), both
/// protocols, on `global-off-under-hits`: the global breakpoint set before the schedulers
/// start is not at the active index, so `trace_info` answers `false` where the stager set
/// global. `load-staging-skip-dispatch` (the staging copies the addresses but not the
/// dispatch words), NonBlocking only (Blocking clears global trace at a load and writes the
/// staging word itself), on `load-global`: after the commit the active index's word is the
/// function's address, so `trace_info` answers `false` and calls skip the entry's breakpoint;
/// and on `global-off-reload`, where the second load leaves the stale breakpoint word of the
/// index it stages (global was turned off after the first load, its node freed), so a call
/// after the second commit executes the breakpoint of an entry whose slot is empty.
fn dispatch_kills(proto: LoadProtocol) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    let mut out = vec![(GlobalDispatchStagingIx, "global-off-under-hits")];
    if proto == LoadProtocol::NonBlocking {
        out.push((LoadStagingSkipDispatch, "load-global"));
        out.push((LoadStagingSkipDispatch, "global-off-reload"));
    }
    out
}

/// call_memory on old code (`old-code-call-memory`): the charges at the process's local call and
/// return in version 1 (`get_timem_break` reading version 1's slot, then the node's half and its
/// call_memory object) across the load, the removal and the purge. Loom kills, NonBlocking: W1
/// and W3 of the removal (bound 3, as on old-code-purge), W4 (already at bound 2, where
/// old-code-call-time needs 3: no charge at the nap), the purge without PW; shuttle PCT too
/// (2,000 iterations, first kills at 59, 142 and 6): the removal at once, the purge without its
/// check, version 2 built after its commit. Blocking, both checkers (PCT at 40 and 2): the purge
/// without its check, the load without the block. The pause/restart mutants of call_memory
/// (`timem-pause-keeps-running`, `timem-restart-keeps-counter`, `erts-r16-reset`) are not
/// reached (the module's trace_pattern has no pause or restart), nor `ctm-two-prev-slots` (one
/// kind) or `fresh-node-relaxed-store` (no node staged into an unpatched slot a charge reads):
/// each survives here (loom bound 2).
fn memory_kills(checker: &str, proto: LoadProtocol) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    let scn = "old-code-call-memory";
    let (both, loom): (&[Mutant], &[Mutant]) = match proto {
        LoadProtocol::NonBlocking => (
            &[
                LoadClearOldAtOnce,
                LoadPurgeSkipCheck,
                LoadCommitBeforeBreakpoints,
            ],
            &[
                SkipWaitBeforeCommit,
                SkipWaitBeforeConsolidate,
                SkipWaitBeforeFree,
                LoadPurgeSkipWait,
            ],
        ),
        LoadProtocol::Blocking => (&[LoadPurgeSkipCheck, LoadBlockingWithoutBlock], &[]),
    };
    kills_on(scn, checker, both, loom)
}

/// code:purge/1 with two processes on one scheduler (`old-code-purge-kill-2procs`, one switched
/// out in version 1 when the purge kills). NonBlocking, loom: the purge without PW (bound 2,
/// 4,510 executions), W1, W3 and W4 of the old version's removal (the matrix runs every W mutant
/// on an old-code scenario at bound 3: 25,108, 30,862 and 27,414; W1 and W4 already at bound 2,
/// 4,395 and 4,510, where the one-process scenarios need 3); both checkers (shuttle PCT, 2,000
/// iterations, first kills at 412, 3 and 8): the purge without its check and its wait (the
/// switched-in process's signal check reads the freed version), the removal at once, version 2
/// built after its commit. Blocking, both (PCT at 25 and 2): the purge without its check, the
/// load without the block. W0, W2 and load-skip-lw1-after-commit survive here (loom bound 3,
/// shuttle 2,000 PCT and random).
fn two_procs_kills(checker: &str, proto: LoadProtocol) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    let scn = "old-code-purge-kill-2procs";
    let (both, loom): (&[Mutant], &[Mutant]) = match proto {
        LoadProtocol::NonBlocking => (
            &[
                LoadPurgeSkipCheck,
                LoadClearOldAtOnce,
                LoadCommitBeforeBreakpoints,
            ],
            &[
                LoadPurgeSkipWait,
                SkipWaitBeforeCommit,
                SkipWaitBeforeConsolidate,
                SkipWaitBeforeFree,
            ],
        ),
        LoadProtocol::Blocking => (&[LoadPurgeSkipCheck, LoadBlockingWithoutBlock], &[]),
    };
    kills_on(scn, checker, both, loom)
}

/// `both` on `scn` for every checker, `loom` for loom only.
fn kills_on(
    scn: &'static str,
    checker: &str,
    both: &[Mutant],
    loom: &[Mutant],
) -> Vec<(Mutant, &'static str)> {
    let loom: &[Mutant] = if checker == "loom" { loom } else { &[] };
    both.iter().chain(loom).map(|&m| (m, scn)).collect()
}

/// `rows` for loom, none for shuttle.
fn loom_only(checker: &str, rows: Vec<(Mutant, &'static str)>) -> Vec<(Mutant, &'static str)> {
    if checker == "loom" {
        rows
    } else {
        Vec::new()
    }
}

/// The collection's mutants on `load-collect` (the one collection, `collect.rs`, on the current
/// version racing a load while a process charges call_time), both protocols, loom at bound 2
/// (the scenario's cap): each of its waits, the flip and the early free a causality violation,
/// the skipped merge a call_time count lost across versions. `collect-merge-without-lock`
/// survives (no dirty scheduler in the load models); `collect-without-flip` runs at bound 3
/// (its floor in `KILL_BOUND_FLOOR`): under `NonBlocking` loom does not find it at 2.
fn collect_kills(checker: &str, proto: LoadProtocol) -> Vec<(Mutant, &'static str)> {
    use Mutant::*;
    // shuttle PCT too (2,000 iterations): the skipped merge (a count lost, first at iteration 4
    // under NonBlocking, 2 under Blocking) and, under NonBlocking, the early free (iteration 77).
    let shuttle = |m: Mutant| {
        m == CollectSkipMerge
            || (m == CollectFreeBeforeLastWait && proto == LoadProtocol::NonBlocking)
    };
    [
        CollectSkipWaitBeforeFlip,
        CollectSkipWaitBeforeRead,
        CollectSkipWaitBeforeMerge,
        CollectWithoutFlip,
        CollectFreeBeforeLastWait,
        CollectSkipMerge,
    ]
    .into_iter()
    .filter(|&m| checker == "loom" || shuttle(m))
    .map(|m| (m, "load-collect"))
    .collect()
}
