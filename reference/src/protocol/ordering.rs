//! Every fence and every non-Relaxed ordering of the engine, as a named site (barrier removal,
//! as liburcu's `formal-model/` does it).
//!
//! Each site is written in the source as `ord(mutant, Site::X, Release)` or
//! `fence_at(mutant, Site::X, SeqCst)` (reference/src/protocol/sync.rs). The mutant
//! [`crate::Mutant::Weaken`]`(Site::X)` turns that one ordering into `Relaxed`, or removes that
//! one fence; like every mutant it is consulted only when [`crate::sync::CHECKED`], so release
//! builds keep the ordering as written at no cost.
//!
//! [`SITES`] is the table: for each site, what it protects, its partner, and the verdict: the
//! checker and scenario that kill its weakening (models/tests/orderings_loom.rs asserts it), the
//! argument why the weakening is harmless under the stated memory model (C11/C++20 atomics plus
//! ERTS's full-barrier assumption, docs/protocol.md), or an honest "not caught". docs/orderings.md
//! is generated from it and from a loom run (reference/tests/orderings.rs checks the copy is
//! fresh and that every ordering in the source has a row).

use std::fmt;

/// What checks a weakened site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// loom kills the weakening on this scenario of this model family ("trace_pattern",
    /// "collection", "sessions", "meta", "readers") with this thread progress ("qsbr", "epoch").
    Killed {
        family: &'static str,
        progress: &'static str,
        scenario: &'static str,
    },
    /// The weakening survives; the argument why it is harmless under the stated model.
    Harmless(&'static str),
    /// The weakening survives the scenarios tried, and no argument covers it: a scenario is
    /// missing.
    NotCaught(&'static str),
}

/// The row's verdict when loom kills the weakening on `scenario` of `family` with `progress`.
const fn killed(family: &'static str, progress: &'static str, scenario: &'static str) -> Verdict {
    Verdict::Killed {
        family,
        progress,
        scenario,
    }
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct SiteRow {
    pub site: Site,
    /// File under reference/src.
    pub file: &'static str,
    /// The ordering as written ("fence(SeqCst)", "load Acquire", "swap Release", ...).
    pub ordering: &'static str,
    /// The sites or steps it pairs with.
    pub partner: &'static str,
    /// What it protects.
    pub protects: &'static str,
    /// The loom scenarios the sweep tries (family, progress, scenario), in order.
    pub tried: &'static [(&'static str, &'static str, &'static str)],
    pub verdict: Verdict,
}

macro_rules! sites {
    ($($(#[$doc:meta])* $v:ident = $name:literal),* $(,)?) => {
        /// A fence or non-Relaxed ordering of the engine.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Site { $($(#[$doc])* $v),* }
        impl Site {
            /// Every site, in declaration order.
            pub const ALL: &'static [Site] = &[$(Site::$v),*];
            /// Stable kebab-case name.
            pub fn name(self) -> &'static str {
                match self { $(Site::$v => $name),* }
            }
            /// The name of the mutant that weakens it ("weaken-" + name).
            pub fn mutant_name(self) -> &'static str {
                match self { $(Site::$v => concat!("weaken-", $name)),* }
            }
            /// The `Site::X` spelling used in the source (the scanner's key).
            pub fn ident(self) -> &'static str {
                match self { $(Site::$v => stringify!($v)),* }
            }
        }
    };
}

sites! {
    /// qsbr.rs QP2: the progress point's full barrier.
    QsbrProgressFence = "qsbr-progress-fence",
    /// qsbr.rs QS1: the barrier before going to sleep.
    QsbrSleepFence = "qsbr-sleep-fence",
    /// qsbr.rs QK3: the barrier on wake-up.
    QsbrWakeFence = "qsbr-wake-fence",
    /// qsbr.rs W1: the stager's barrier before it starts a new period.
    QsbrWaitEnterFence = "qsbr-wait-enter-fence",
    /// qsbr.rs W4: the stager's barrier after every thread was seen past the period.
    QsbrWaitExitFence = "qsbr-wait-exit-fence",
    /// epoch.rs: the barrier after unpinning and pinning again at a progress point.
    EpochProgressFence = "epoch-progress-fence",
    /// epoch.rs: the barrier after pinning on wake-up.
    EpochWakeFence = "epoch-wake-fence",
    /// epoch.rs: the deferred closure's Release store of the grace-period flag.
    EpochDoneStore = "epoch-done-store",
    /// epoch.rs: the stager's Acquire load of the grace-period flag.
    EpochDoneLoad = "epoch-done-load",
    /// hit.rs: a scheduler's Acquire check of the stop-the-world request at a quiescent point.
    StwBlockCheck = "stw-block-check",
    /// hit.rs: a parked scheduler's Acquire load until the block is lifted.
    StwBlockPark = "stw-block-park",
    /// collect.rs B3: the collector's Release store that lifts the block.
    StwUnblock = "stw-unblock",
    /// meta.rs M1: the stager's Release swap of a new meta tracer cell.
    MetaTracerSwap = "meta-tracer-swap",
    /// meta.rs M2: the hit path's Acquire load of the meta tracer cell.
    MetaTracerHitLoad = "meta-tracer-hit-load",
    /// meta.rs: `trace_info(MFA, meta)`'s Acquire load of the meta tracer cell.
    MetaTracerInfoLoad = "meta-tracer-info-load",
    /// session.rs ST1: the hit path's Acquire load of the session tracer cell.
    SessionTracerLoad = "session-tracer-load",
    /// session.rs ST1: the stager's Release swap of a new session tracer cell.
    SessionTracerSwap = "session-tracer-swap",
    /// stage.rs: the Release store of a fresh node into an unpatched function's slot (F3).
    FreshNodeStore = "fresh-node-store",
    /// calltime.rs: a timem reader's Acquire load of the slot (`get_timem_break`, F3).
    TimemSlotLoad = "timem-slot-load",
    /// code_ix.rs: the loader's Release store that commits the staging code index.
    CodeIxCommit = "code-ix-commit",
    /// code_ix.rs: a call's Acquire load of the active code index.
    CodeIxLoad = "code-ix-load",
}

impl Site {
    /// Parse a name produced by [`Site::mutant_name`].
    pub fn from_mutant_name(name: &str) -> Option<Site> {
        Site::ALL.iter().copied().find(|s| s.mutant_name() == name)
    }

    /// This site's row.
    pub fn row(self) -> &'static SiteRow {
        SITES
            .iter()
            .find(|r| r.site == self)
            .expect("every site has a row (tests/orderings.rs)")
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const TP: &str = "trace_pattern";
const QSBR: &str = "qsbr";
const EPOCH: &str = "epoch";
const READERS: &str = "readers";
const LOAD: &str = "load";

/// The table. The order is the table's order; every [`Site`] has exactly one row.
pub const SITES: &[SiteRow] = &[
    SiteRow {
        site: Site::QsbrProgressFence,
        file: "protocol/progress/qsbr.rs",
        ordering: "fence(SeqCst)",
        partner: "qsbr-wait-enter-fence (QW1), qsbr-wait-exit-fence (QW4)",
        protects: "G: a scheduler's reads before a progress point happen before the stager's \
                   step after the wait; its hits after it see the stager's writes before W1",
        tried: &[(TP, QSBR, "remove-long")],
        verdict: killed(TP, QSBR, "remove-long"),
    },
    SiteRow {
        site: Site::QsbrSleepFence,
        file: "protocol/progress/qsbr.rs",
        ordering: "fence(SeqCst)",
        partner: "qsbr-wait-exit-fence (QW4)",
        protects: "G for a sleeping thread: its reads before sleeping happen before the \
                   stager's step after a wait that read SLEEPING",
        tried: &[(TP, QSBR, "remove")],
        verdict: killed(TP, QSBR, "remove"),
    },
    SiteRow {
        site: Site::QsbrWakeFence,
        file: "protocol/progress/qsbr.rs",
        ordering: "fence(SeqCst)",
        partner: "qsbr-wait-enter-fence (QW1), store buffering",
        protects: "G for a waking thread: either the wait sees its new local period or its \
                   hits see the stager's writes before W1",
        tried: &[(TP, QSBR, "remove-nap")],
        verdict: killed(TP, QSBR, "remove-nap"),
    },
    SiteRow {
        site: Site::QsbrWaitEnterFence,
        file: "protocol/progress/qsbr.rs",
        ordering: "fence(SeqCst)",
        partner: "qsbr-progress-fence (QP2), qsbr-wake-fence (QK3)",
        protects: "G-seen: the stager's writes before the wait are visible to every hit after \
                   the progress point that reads the new period",
        tried: &[(TP, QSBR, "add")],
        verdict: killed(TP, QSBR, "add"),
    },
    SiteRow {
        site: Site::QsbrWaitExitFence,
        file: "protocol/progress/qsbr.rs",
        ordering: "fence(SeqCst)",
        partner: "qsbr-progress-fence (QP2), qsbr-sleep-fence (QS1)",
        protects: "G-done: every read a scheduler made before its progress point or sleep \
                   happens before the stager's next step (restore, unlink, free)",
        tried: &[(TP, QSBR, "remove-session")],
        verdict: killed(TP, QSBR, "remove-session"),
    },
    SiteRow {
        site: Site::EpochProgressFence,
        file: "protocol/progress/epoch.rs",
        ordering: "fence(SeqCst)",
        partner: "crossbeam-epoch's fences in pin and in the stager's flush",
        protects: "G under EpochProgress: a scheduler's hits after a progress point see the \
                   stager's writes before the wait (the fence `Guard::repin` lacks)",
        tried: &[(TP, EPOCH, "remove-yield")],
        verdict: killed(TP, EPOCH, "remove-yield"),
    },
    SiteRow {
        site: Site::EpochWakeFence,
        file: "protocol/progress/epoch.rs",
        ordering: "fence(SeqCst)",
        partner: "crossbeam-epoch's fences in pin and in the stager's flush",
        protects: "G-seen for a waking thread under EpochProgress: on x86-64 `pin` is a Relaxed \
                   load of the global epoch, a SeqCst compare-exchange of the local one and a \
                   compiler fence, so this fence is the woken scheduler's only acquire step \
                   ([sw-af]); loom sees it since crossbeam-epoch's loom build keeps the compiler \
                   fence a no-op (vendor/crossbeam-epoch-0.9.21)",
        tried: &[(TP, EPOCH, "remove-doze")],
        verdict: killed(TP, EPOCH, "remove-doze"),
    },
    SiteRow {
        site: Site::EpochDoneStore,
        file: "protocol/progress/epoch.rs",
        ordering: "store Release",
        partner: "epoch-done-load",
        protects: "the grace period's end: what the schedulers did before their last unpin \
                   happens before the stager's next step",
        tried: &[
            (TP, EPOCH, "remove"),
            (TP, EPOCH, "remove-session"),
            (TP, EPOCH, "remove-nap"),
        ],
        verdict: Verdict::NotCaught(
            "not harmless when another thread runs the closure: crossbeam runs deferred \
             closures in `collect`, from the stager's flush and from a participant's pin whose \
             pin count is a multiple of 128, i.e. also a scheduler's first pin (its start). Then \
             the chain is: a scheduler's unpin (Release) synchronizes with the collector's \
             acquire fence in `try_advance` ([sw-af]), the collector stores the flag, the \
             stager loads it and goes on (free, half write) with no fence in between; with \
             either side Relaxed the last link has no synchronizes-with, in C++20 or in M. \
             Survives remove, remove-session and remove-nap, where the closure runs in the \
             stager's own flush (store and load on one thread); on remove-2sched, where a \
             second scheduler's first pin can run it, no kill in 112,549 executions at \
             preemption bound 1 (510 s, stopped before the end): too slow for a check",
        ),
    },
    SiteRow {
        site: Site::EpochDoneLoad,
        file: "protocol/progress/epoch.rs",
        ordering: "load Acquire",
        partner: "epoch-done-store",
        protects: "as epoch-done-store",
        tried: &[
            (TP, EPOCH, "remove"),
            (TP, EPOCH, "remove-session"),
            (TP, EPOCH, "remove-nap"),
        ],
        verdict: Verdict::NotCaught(
            "as epoch-done-store: not harmless when a scheduler's pin runs the closure (the \
             stager issues no acquire fence after this load before its next step); in the \
             models the closure runs in the stager's own flush, and remove-2sched, where a \
             scheduler's first pin can run it, gave no kill in 112,549 executions at preemption \
             bound 1 (510 s, stopped before the end)",
        ),
    },
    SiteRow {
        site: Site::StwBlockCheck,
        file: "protocol/hit.rs",
        ordering: "load Acquire",
        partner: "stw-unblock (B3)",
        protects: "a scheduler that slept through a whole block and sees it lifted is \
                   ordered after the collector's reads",
        tried: &[("collection", QSBR, "info-stw-nap")],
        verdict: killed("collection", QSBR, "info-stw-nap"),
    },
    SiteRow {
        site: Site::StwBlockPark,
        file: "protocol/hit.rs",
        ordering: "load Acquire",
        partner: "stw-unblock (B3)",
        protects: "the collector's reads of the real tables happen before a parked \
                   scheduler's next writes",
        tried: &[
            ("collection", QSBR, "info-stw"),
            ("collection", QSBR, "info-stw-nap"),
        ],
        verdict: Verdict::Harmless(
            "the park loop is followed at once by the wake-up (thread progress `wake`), whose \
             full fence comes before any breakpoint access. C11 fence synchronization: the \
             release store B3 synchronizes with that acquire fence, because the relaxed load \
             that read B3's value is sequenced before it; so the collector's reads happen before \
             the scheduler's next writes without the Acquire (Qsbr's QK3; EpochProgress's \
             epoch-wake-fence).",
        ),
    },
    SiteRow {
        site: Site::StwUnblock,
        file: "readback/collect.rs",
        ordering: "store Release",
        partner: "stw-block-check, stw-block-park",
        protects: "as stw-block-park (B3)",
        tried: &[("collection", QSBR, "info-stw")],
        verdict: killed("collection", QSBR, "info-stw"),
    },
    SiteRow {
        site: Site::MetaTracerSwap,
        file: "actions/meta.rs",
        ordering: "swap Release",
        partner: "meta-tracer-hit-load (M2), meta-tracer-info-load",
        protects: "M1: a new meta tracer cell is written before a scheduler can load it",
        tried: &[("meta", QSBR, "meta-replace")],
        verdict: killed("meta", QSBR, "meta-replace"),
    },
    SiteRow {
        site: Site::MetaTracerHitLoad,
        file: "actions/meta.rs",
        ordering: "load Acquire",
        partner: "meta-tracer-swap (M1)",
        protects: "M2: the hit path sees the meta tracer cell's contents",
        tried: &[("meta", QSBR, "meta-replace")],
        verdict: killed("meta", QSBR, "meta-replace"),
    },
    SiteRow {
        site: Site::MetaTracerInfoLoad,
        file: "actions/meta.rs",
        ordering: "load Acquire",
        partner: "meta-tracer-swap (M1)",
        protects: "trace_info(MFA, meta) reads the cell's tracer term",
        tried: &[],
        verdict: Verdict::Harmless(
            "the load runs on the stager under the code modification permission, and every \
             swap of the slot runs under the same permission (stage_meta) or installs NIL \
             (the hit path's compare-exchange, which publishes no data): the permission's \
             mutex unlock/lock gives the happens-before edge, so Relaxed reads the same cell \
             with the same contents",
        ),
    },
    SiteRow {
        site: Site::SessionTracerLoad,
        file: "sessions/session.rs",
        ordering: "load Acquire",
        partner: "session-tracer-swap (ST1)",
        protects: "ST1: the hit path sees a published session tracer cell's contents",
        tried: &[("sessions", QSBR, "tracer-replace")],
        verdict: killed("sessions", QSBR, "tracer-replace"),
    },
    SiteRow {
        site: Site::SessionTracerSwap,
        file: "sessions/session.rs",
        ordering: "swap Release",
        partner: "session-tracer-load (ST1)",
        protects: "ST1: a new session tracer cell is written before a scheduler can load it",
        tried: &[("sessions", QSBR, "tracer-replace")],
        verdict: killed("sessions", QSBR, "tracer-replace"),
    },
    SiteRow {
        site: Site::FreshNodeStore,
        file: "protocol/stage.rs",
        ordering: "store Release",
        partner: "timem-slot-load",
        protects: "F3: a fresh node's initialisation happens before a timem reader (return, \
                   schedule-out, previous-function charge) that finds it in an unpatched \
                   function's slot, which no wait orders",
        tried: &[(READERS, QSBR, "timem-fresh-node")],
        verdict: killed(READERS, QSBR, "timem-fresh-node"),
    },
    SiteRow {
        site: Site::TimemSlotLoad,
        file: "actions/calltime.rs",
        ordering: "load Acquire",
        partner: "fresh-node-store",
        protects: "F3: the reader side of the fresh node's publication",
        tried: &[(READERS, QSBR, "timem-fresh-node")],
        verdict: killed(READERS, QSBR, "timem-fresh-node"),
    },
    SiteRow {
        site: Site::CodeIxCommit,
        file: "protocol/code_ix.rs",
        ordering: "store Release",
        partner: "code-ix-load",
        protects: "a call that reads the new code index sees the new version fully written \
                   (code, slots, breakpoints in both halves) and the staging export addresses and \
                   dispatch words",
        tried: &[(LOAD, QSBR, "load-under-hits")],
        verdict: killed(LOAD, QSBR, "load-under-hits"),
    },
    SiteRow {
        site: Site::CodeIxLoad,
        file: "protocol/code_ix.rs",
        ordering: "load Acquire",
        partner: "code-ix-commit",
        protects: "as code-ix-commit, on the reader's side",
        tried: &[(LOAD, QSBR, "load-under-hits")],
        verdict: killed(LOAD, QSBR, "load-under-hits"),
    },
];
