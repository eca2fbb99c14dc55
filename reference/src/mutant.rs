//! Deliberately broken variants of the protocol. Each one removes or reorders exactly one step,
//! so a check that claims to protect that step must catch it (docs/mutants.md lists which check
//! kills which mutant, and the counterexample it produces).
//!
//! The switch lives in [`crate::Engine`] and in [`crate::progress::Qsbr`]. It is only consulted
//! when [`crate::sync::CHECKED`] is true (debug builds, loom, shuttle); release builds compile
//! the test out of the hot path.

use std::fmt;

/// One broken variant of the trace_pattern sequence or of thread progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutant {
    /// W0 removed: install (patch instruction, set slot, link `to_insert`) right after staging.
    SkipWaitBeforeInstall,
    /// W1 removed: flip the active index right after install.
    SkipWaitBeforeCommit,
    /// W2 removed: restore original instructions right after the flip.
    SkipWaitBeforeUninstall,
    /// W3 removed: consolidate (copy active → staging, unlink disabled nodes) right after
    /// uninstall.
    SkipWaitBeforeConsolidate,
    /// W4 removed: free unlinked breakpoints right after consolidate.
    SkipWaitBeforeFree,
    /// Reordering: uninstall (judged on the *staging* flags) before the flip.
    UninstallBeforeCommit,
    /// Step omitted: consolidate does not copy active → staging.
    SkipConsolidateCopy,
    /// Thread progress: a progress point without its full memory barrier.
    ProgressWithoutBarrier,
    /// Thread progress: `wait` does not start a new period, so it accepts progress points that
    /// began before it.
    WaitWithoutNewPeriod,
    /// Thread progress: waking up without the full memory barrier.
    WakeWithoutBarrier,
    /// Collection: TW1 removed (flip right after the temporaries went into the staging half).
    CollectSkipWaitBeforeFlip,
    /// Collection: TW2 removed (read the real tables right after the flip).
    CollectSkipWaitBeforeRead,
    /// Collection: TW3 removed (merge and free the temporaries right after the flip back).
    CollectSkipWaitBeforeMerge,
    /// Collection: merge the temporaries into the shared slot without the dirty lock.
    CollectMergeWithoutLock,
    /// Collection: no flips; read the real tables where they are, still active.
    CollectWithoutFlip,
    /// Collection: merge and free the temporaries before the last wait (then wait).
    CollectFreeBeforeLastWait,
    /// Collection: free the temporaries without merging them (calls made during the query
    /// are lost).
    CollectSkipMerge,
    /// call_time/call_memory: `pause` leaves the counter running (does not clear `_ACTIVE`).
    TimemPauseKeepsRunning,
    /// call_time/call_memory: `true`/`restart` on an existing counter keeps the old object
    /// instead of a fresh one in the staging half.
    TimemRestartKeepsCounter,
    /// Sessions: link a new session's node as the chain head at staging, before W0, instead of
    /// through `to_insert` at install.
    LinkAtStage,
    /// Sessions: free a node at consolidate, when it is unlinked, instead of after W4.
    FreeAtUnlink,
    /// Sessions: clear an unlinked node's `next`, so a scheduler standing on it loses the rest
    /// of the chain.
    ClearNextOnUnlink,
    /// Tracers: free a removed session tracer at once, without waiting for thread progress.
    TracerFreeWithoutWait,
    /// Sessions: the hit path does not check the session's state, so a session being destroyed
    /// keeps acting until its patterns are committed away.
    IgnoreSessionState,
    /// Meta trace: free a meta tracer cell retired by a swap at once, without waiting for
    /// thread progress (`meta.rs`, M3).
    MetaFreeWithoutWait,
    /// Barrier removal: the ordering at this site becomes `Relaxed`, or its fence goes
    /// (`crate::ordering`, docs/orderings.md).
    Weaken(crate::ordering::Site),
    /// Staging: store a fresh node into an unpatched function's slot with a relaxed store (as
    /// ERTS does), so a timem reader that finds it there may see it uninitialised (finding F3).
    FreshNodeRelaxedStore,
    /// Thread progress ([`crate::EpochProgress`]): a progress point by `Guard::repin`, a Release
    /// store of the local epoch without the full fence.
    EpochRepinWithoutFence,
    /// Non-blocking load (`load.rs`): the new version is published (code index committed) before
    /// its breakpoints are set; they are set after the commit, as a later trace_pattern would.
    LoadCommitBeforeBreakpoints,
    /// Non-blocking load, delete: LW1 removed; the old version's breakpoints are cleared (and a
    /// purge may free it) right after the code index commit. Under `CodeIxScheme::Three` it
    /// removes that scheme's waits instead: the code barrier and the purge's first wait.
    LoadSkipWaitAfterCommit,
    /// Blocking load, delete, purge: the loader does not stop the schedulers.
    LoadBlockingWithoutBlock,
    /// Non-blocking load, delete: the old version's breakpoints are cleared at once after LW1
    /// (no W1–W4), although a process still in the old code reaches them by local calls.
    LoadClearOldAtOnce,
    /// Purge: no `check_process_code`: the old version is freed while a process still runs in it.
    LoadPurgeSkipCheck,
    /// Non-blocking purge: the old version is freed right after the check, without the grace
    /// period (PW) that orders the last process's return before the free.
    LoadPurgeSkipWait,
    /// Non-blocking load, delete under the `Three` code index scheme (`code_ix.rs`): ERTS's
    /// waits (the code barrier before the commit, none after it) with two code indices instead
    /// of three, so a load stages the slot that was active before the last commit.
    LoadTwoCodeIx,
    /// Non-blocking load, delete under the `Three` code index scheme: the code barrier before
    /// the commit (`load.rs::code_wait`) removed, the purge's first wait kept, so a call that
    /// read the index before the last commit may still be reading the slot that the commit
    /// after the next stages (docs/nonblocking-load.md §3 LN7'; only a load of another module
    /// between two of `m` has no purge between them).
    LoadSkipCodeBarrier,
    /// Non-blocking load, delete (`load.rs::start_staging`): the staging export entries get the
    /// active index's addresses but keep their own dispatch words (ERTS's
    /// `export_start_staging` copies the whole word, the trampoline with it), so after the
    /// commit a call through the new index skips the entry's global breakpoint.
    LoadStagingSkipDispatch,
    /// Global trace on the module's export entries (`load.rs::Engine::export_dispatch_ix`):
    /// install and uninstall patch the staging code index's dispatch word instead of the
    /// active one's (ERTS's `install_exp_breakpoints` patches the active index in place; no
    /// commit of the code index follows a trace_pattern), so calls miss the breakpoint, and
    /// after a clear the active word still dispatches to the emptied entry.
    GlobalDispatchStagingIx,
    /// ERTS from R16 until erlang/otp#8897 (OTP 26.2.5.4, 27.2): `true`/`restart` on an
    /// existing call_time/call_memory counter keeps the object the active half shares and
    /// resets its per-scheduler tables in place at T1 (`bp_hash_reset`: each table deleted, its
    /// size 0, then initialised again), while schedulers charge them with no wait in between
    /// (docs/erts-findings/README.md, the reset crash).
    ErtsR16Reset,
    /// The proposed fix of the call_time + call_memory segfault (docs/erts-findings/ctm-segfault.md):
    /// the call_time/call_memory return frame keeps the previous function per kind, not ERTS's
    /// single `prev_info`. Not a broken variant: with it, call_time behaves the same whether or
    /// not call_memory is on too.
    CtmTwoPrevSlots,
    /// Batch plans (`waitplan.rs`): a batched `false` also clears the session's global trace on
    /// the matched export entries (the local-excludes-global clearing made for every op, not
    /// only for those that set), which consecutive calls do not do.
    BatchFalseClearsGlobal,
    /// Batch plans (`finisher.rs`): the elide-idle plan skips W3 and W4 whatever consolidate
    /// will unlink (the spec's mutant of the same name); caught by the refinement of batch
    /// histories (`models/tests/refine.rs`).
    BatchElideUnlinking,
    /// Meta trace (`meta.rs`, M3): the reclaim waits first and takes the retired list after, so
    /// a cell retired during the wait is freed without a wait that began after its retirement.
    MetaReclaimWaitBeforeTake,
    /// Thread progress ([`crate::Qsbr`]): the progress point's full fence (QP2) becomes
    /// `fence(Release)`: its release side stays, its acquire side goes, so the scheduler's reads
    /// after the progress point need not see the stager's writes before the wait's QW1.
    ProgressFenceReleaseOnly,
    /// Thread progress ([`crate::Qsbr`]): the wake-up's full fence (QK3) becomes
    /// `fence(Release)` (release side kept, acquire side gone).
    WakeFenceReleaseOnly,
    /// Thread progress ([`crate::EpochProgress`]): the progress point pins again while still
    /// pinned (the new pin taken before the old guard drops), so the scheduler never unpins
    /// and no grace period ends while it is awake (a liveness bug, killed by
    /// `reference/tests/progress_liveness.rs`).
    EpochRepinWhilePinned,
    /// call_count (`hit.rs`): the hit's increment of the counter is a relaxed load then a
    /// relaxed store instead of one `fetch_add`, so two schedulers counting one call each at
    /// once may leave the counter one short (a lost update).
    LostCountUpdate,
    /// call_count (`hit.rs`): a hit on a paused counter (`COUNT` set, `COUNT_ACTIVE` clear)
    /// still increments it.
    PausedCounterChanges,
}

impl Mutant {
    /// Every mutant, in declaration order.
    pub const ALL: [Mutant; 10] = [
        Mutant::SkipWaitBeforeInstall,
        Mutant::SkipWaitBeforeCommit,
        Mutant::SkipWaitBeforeUninstall,
        Mutant::SkipWaitBeforeConsolidate,
        Mutant::SkipWaitBeforeFree,
        Mutant::UninstallBeforeCommit,
        Mutant::SkipConsolidateCopy,
        Mutant::ProgressWithoutBarrier,
        Mutant::WaitWithoutNewPeriod,
        Mutant::WakeWithoutBarrier,
    ];

    /// The call_time/call_memory collection's mutants, killed by the collection
    /// models (`bpspec_models::collection`), not by the trace_pattern kill matrix.
    pub const COLLECTION: [Mutant; 9] = [
        Mutant::CollectSkipWaitBeforeFlip,
        Mutant::CollectSkipWaitBeforeRead,
        Mutant::CollectSkipWaitBeforeMerge,
        Mutant::CollectMergeWithoutLock,
        Mutant::CollectWithoutFlip,
        Mutant::CollectFreeBeforeLastWait,
        Mutant::CollectSkipMerge,
        Mutant::TimemPauseKeepsRunning,
        Mutant::TimemRestartKeepsCounter,
    ];

    /// The sessions and tracer mutants, killed by `bpspec_models::sessions`.
    pub const SESSIONS: [Mutant; 5] = [
        Mutant::LinkAtStage,
        Mutant::FreeAtUnlink,
        Mutant::ClearNextOnUnlink,
        Mutant::TracerFreeWithoutWait,
        Mutant::IgnoreSessionState,
    ];

    /// The meta trace mutants, killed by `reference/tests/meta.rs` (and the meta models).
    pub const META: [Mutant; 1] = [Mutant::MetaFreeWithoutWait];

    /// The timem readers' mutants, killed by `bpspec_models::readers` (the epoch one by the
    /// epoch loom model).
    pub const READERS: [Mutant; 2] = [
        Mutant::FreshNodeRelaxedStore,
        Mutant::EpochRepinWithoutFence,
    ];

    /// The load protocols' mutants, killed by `bpspec_models::load`.
    pub const LOAD: [Mutant; 10] = [
        Mutant::LoadCommitBeforeBreakpoints,
        Mutant::LoadSkipWaitAfterCommit,
        Mutant::LoadBlockingWithoutBlock,
        Mutant::LoadClearOldAtOnce,
        Mutant::LoadPurgeSkipCheck,
        Mutant::LoadPurgeSkipWait,
        Mutant::LoadTwoCodeIx,
        Mutant::LoadSkipCodeBarrier,
        Mutant::LoadStagingSkipDispatch,
        Mutant::GlobalDispatchStagingIx,
    ];

    /// Variants that model ERTS's code where it differs from the engine: a released ERTS's
    /// bug, or a fix proposed for one (docs/erts-findings/findings.tsv).
    pub const ERTS: [Mutant; 2] = [Mutant::ErtsR16Reset, Mutant::CtmTwoPrevSlots];

    /// The wait plans' mutant, killed by `tests/tests/fewer_waits.rs` (every plan compared with
    /// the ERTS sequence on sessions that hold global, meta and call_time patterns).
    /// `batch-elide-unlinking` by the refinement of batch histories (`models/tests/refine.rs`).
    pub const WAIT_PLANS: [Mutant; 2] =
        [Mutant::BatchFalseClearsGlobal, Mutant::BatchElideUnlinking];

    /// The meta reclaim's ordering mutant, killed by the meta models on several cells retired
    /// before and during one reclaim (`bpspec_models::meta`, scenario `meta-reclaim-many`).
    pub const META_RECLAIM: [Mutant; 1] = [Mutant::MetaReclaimWaitBeforeTake];
    /// The thread-progress fences weakened to their release side only, killed by the
    /// single-function trace_pattern loom scenarios (`bpspec_models::FENCE_HALF_KILLS`).
    pub const FENCE_HALVES: [Mutant; 2] = [
        Mutant::ProgressFenceReleaseOnly,
        Mutant::WakeFenceReleaseOnly,
    ];
    /// The thread-progress liveness mutant, killed by the bounded std test that a wait ends
    /// while every awake scheduler keeps passing progress points
    /// (`reference/tests/progress_liveness.rs`).
    pub const LIVENESS: [Mutant; 1] = [Mutant::EpochRepinWhilePinned];
    /// The call_count mutants, killed by count conservation at rest in the trace_pattern loom
    /// and shuttle models (`bpspec_models::COUNT_KILLS`): every counter equals the calls that
    /// counted on it.
    pub const COUNTS: [Mutant; 2] = [Mutant::LostCountUpdate, Mutant::PausedCounterChanges];

    /// Stable kebab-case name, used by the CLI, the result table and docs/mutants.md.
    pub fn name(self) -> &'static str {
        match self {
            Mutant::SkipWaitBeforeInstall => "skip-w0-before-install",
            Mutant::SkipWaitBeforeCommit => "skip-w1-before-commit",
            Mutant::SkipWaitBeforeUninstall => "skip-w2-before-uninstall",
            Mutant::SkipWaitBeforeConsolidate => "skip-w3-before-consolidate",
            Mutant::SkipWaitBeforeFree => "skip-w4-before-free",
            Mutant::UninstallBeforeCommit => "uninstall-before-commit",
            Mutant::SkipConsolidateCopy => "skip-consolidate-copy",
            Mutant::ProgressWithoutBarrier => "progress-without-barrier",
            Mutant::WaitWithoutNewPeriod => "wait-without-new-period",
            Mutant::WakeWithoutBarrier => "wake-without-barrier",
            Mutant::CollectSkipWaitBeforeFlip => "collect-skip-tw1-before-flip",
            Mutant::CollectSkipWaitBeforeRead => "collect-skip-tw2-before-read",
            Mutant::CollectSkipWaitBeforeMerge => "collect-skip-tw3-before-merge",
            Mutant::CollectMergeWithoutLock => "collect-merge-without-lock",
            Mutant::CollectWithoutFlip => "collect-without-flip",
            Mutant::CollectFreeBeforeLastWait => "collect-free-before-last-wait",
            Mutant::CollectSkipMerge => "collect-skip-merge",
            Mutant::TimemPauseKeepsRunning => "timem-pause-keeps-running",
            Mutant::TimemRestartKeepsCounter => "timem-restart-keeps-counter",
            Mutant::LinkAtStage => "link-at-stage",
            Mutant::FreeAtUnlink => "free-at-unlink",
            Mutant::ClearNextOnUnlink => "clear-next-on-unlink",
            Mutant::TracerFreeWithoutWait => "tracer-free-without-wait",
            Mutant::IgnoreSessionState => "ignore-session-state",
            Mutant::MetaFreeWithoutWait => "meta-free-without-wait",
            Mutant::Weaken(s) => s.mutant_name(),
            Mutant::FreshNodeRelaxedStore => "fresh-node-relaxed-store",
            Mutant::EpochRepinWithoutFence => "epoch-repin-without-fence",
            Mutant::LoadCommitBeforeBreakpoints => "load-commit-before-breakpoints",
            Mutant::LoadSkipWaitAfterCommit => "load-skip-lw1-after-commit",
            Mutant::LoadBlockingWithoutBlock => "load-blocking-without-block",
            Mutant::LoadClearOldAtOnce => "load-clear-old-at-once",
            Mutant::LoadPurgeSkipCheck => "load-purge-skip-check",
            Mutant::LoadPurgeSkipWait => "load-purge-skip-wait",
            Mutant::LoadTwoCodeIx => "load-two-code-ix",
            Mutant::LoadSkipCodeBarrier => "load-skip-code-barrier",
            Mutant::LoadStagingSkipDispatch => "load-staging-skip-dispatch",
            Mutant::GlobalDispatchStagingIx => "global-dispatch-staging-ix",
            Mutant::ErtsR16Reset => "erts-r16-reset",
            Mutant::CtmTwoPrevSlots => "ctm-two-prev-slots",
            Mutant::BatchFalseClearsGlobal => "batch-false-clears-global",
            Mutant::BatchElideUnlinking => "batch-elide-unlinking",
            Mutant::MetaReclaimWaitBeforeTake => "meta-reclaim-wait-before-take",
            Mutant::ProgressFenceReleaseOnly => "progress-fence-release-only",
            Mutant::WakeFenceReleaseOnly => "wake-fence-release-only",
            Mutant::EpochRepinWhilePinned => "epoch-repin-while-pinned",
            Mutant::LostCountUpdate => "lost-count-update",
            Mutant::PausedCounterChanges => "paused-counter-changes",
        }
    }

    /// Parse a name produced by [`Mutant::name`].
    pub fn from_name(name: &str) -> Option<Mutant> {
        Mutant::ALL
            .into_iter()
            .chain(Mutant::COLLECTION)
            .chain(Mutant::SESSIONS)
            .chain(Mutant::META)
            .chain(Mutant::READERS)
            .chain(Mutant::LOAD)
            .chain(Mutant::ERTS)
            .chain(Mutant::WAIT_PLANS)
            .chain(Mutant::META_RECLAIM)
            .chain(Mutant::FENCE_HALVES)
            .chain(Mutant::LIVENESS)
            .chain(Mutant::COUNTS)
            .find(|m| m.name() == name)
            .or_else(|| crate::ordering::Site::from_mutant_name(name).map(Mutant::Weaken))
    }

    /// The fence site whose fence this mutant keeps only the release side of.
    pub fn release_only_site(self) -> Option<crate::ordering::Site> {
        match self {
            Mutant::ProgressFenceReleaseOnly => Some(crate::ordering::Site::QsbrProgressFence),
            Mutant::WakeFenceReleaseOnly => Some(crate::ordering::Site::QsbrWakeFence),
            _ => None,
        }
    }

    /// Is this mutant about the grace period itself rather than the trace_pattern sequence?
    pub fn is_thread_progress(self) -> bool {
        matches!(
            self,
            Mutant::ProgressWithoutBarrier
                | Mutant::WaitWithoutNewPeriod
                | Mutant::WakeWithoutBarrier
                | Mutant::ProgressFenceReleaseOnly
                | Mutant::WakeFenceReleaseOnly
        )
    }
}

impl fmt::Display for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `Some(m) == mutant`, but constant-false in release builds so the test leaves the hot path.
#[inline(always)]
pub(crate) fn is(mutant: Option<Mutant>, m: Mutant) -> bool {
    crate::sync::CHECKED && mutant == Some(m)
}
