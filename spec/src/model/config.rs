//! What a model is parameterised by: schedulers, functions, sessions, the stager's script, and
//! (optionally) one mutant. The script is a list of [`StagerOp`]s, an enum so other operations
//! (the trace_info collection) can be added next to `trace_pattern`.

use bpspec_reference::Mutant;
use std::fmt;

/// Breakpoint flag bits of the model's halves (a subset of ERTS's, renumbered to fit a byte).
pub mod bits {
    /// `ERTS_BPF_LOCAL_TRACE`.
    pub const LOCAL: u8 = 0x1;
    /// `ERTS_BPF_COUNT`: a counter exists.
    pub const COUNT: u8 = 0x2;
    /// `ERTS_BPF_COUNT_ACTIVE`: the counter runs.
    pub const COUNT_ACTIVE: u8 = 0x4;
    /// `ERTS_BPF_TIME_TRACE`: a call_time counter (`BpTimemTrace`) exists. call_memory has the
    /// same protocol, so the model has one kind (see `collect.rs`).
    pub const TIME: u8 = 0x8;
    /// `ERTS_BPF_TIME_TRACE_ACTIVE`: the call_time counter runs.
    pub const TIME_ACTIVE: u8 = 0x10;
    /// `ERTS_BPF_GLOBAL_TRACE`: a global breakpoint, set on a function's *export entry*. An
    /// export entry is one more breakpoint slot with its own dispatch word (the model's
    /// instruction word: the trampoline or the function's address) and its own chain, changed
    /// by the same six steps (engine: `Area::Export`, reference/src/sessions/export.rs). The model
    /// treats a slot that carries `GLOBAL` as an export entry: no frames (no call_time
    /// readers), so `validate` rejects other flags and charges beside it (docs/spec.md §10).
    pub const GLOBAL: u8 = 0x20;
    /// `ERTS_BPF_META_TRACE`: a hit sends to the node's meta tracer (`BpMetaTracer`), whose
    /// tracer cell the model keeps in one location (`Loc::Tracer`, docs/spec.md §11).
    pub const META: u8 = 0x40;

    /// Names of flag sets, one a row `(mask, value, name)`: the name stands for flags `fl` when
    /// `fl & mask == value`.
    pub type Names = [(u8, u8, &'static str)];

    /// A `trace_pattern` call's flags, as its flag list names them.
    pub const PATTERN: &Names = &[
        (LOCAL, LOCAL, "local"),
        (COUNT, COUNT, "call_count"),
        (TIME, TIME, "call_time"),
        (GLOBAL, GLOBAL, "global"),
        (META, META, "meta"),
    ];

    /// A half's flags in the narration, a paused counter marked.
    pub const HALF: &Names = &[
        (LOCAL, LOCAL, "local"),
        (GLOBAL, GLOBAL, "global"),
        (META, META, "meta"),
        (COUNT | COUNT_ACTIVE, COUNT | COUNT_ACTIVE, "count"),
        (COUNT | COUNT_ACTIVE, COUNT, "count(paused)"),
        (TIME | TIME_ACTIVE, TIME | TIME_ACTIVE, "time"),
        (TIME | TIME_ACTIVE, TIME, "time(paused)"),
    ];

    /// The names in `table` that stand for `fl`, in the table's order.
    pub fn names(fl: u8, table: &Names) -> Vec<&'static str> {
        table
            .iter()
            .filter(|&&(mask, value, _)| fl & mask == value)
            .map(|&(_, _, name)| name)
            .collect()
    }
}

/// The operation of a `trace_pattern` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatternKind {
    /// `true`: add or update.
    True,
    /// `false`: remove.
    False,
    /// `pause` (call_count only).
    Pause,
    /// `restart` (call_count only).
    Restart,
}

impl PatternKind {
    pub fn name(self) -> &'static str {
        match self {
            PatternKind::True => "true",
            PatternKind::False => "false",
            PatternKind::Pause => "pause",
            PatternKind::Restart => "restart",
        }
    }
}

/// One step of the stager's script.
///
/// To add an operation (the trace_info collection, say): add a variant here, give it its
/// sequence of phases in `step.rs` (`next_phase`, `stager_step`) and its narration, and extend
/// `Config::max_nodes` if it allocates; the schedulers' side changes only if the operation adds
/// something a hit reads. The `let StagerOp::TracePattern { .. } = ...` destructurings in
/// `step.rs` and `config.rs` then fail to compile until the new variant is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StagerOp {
    /// `erlang:trace_pattern` in `session` on the functions of `funcs` (a bit mask) with the
    /// trace flags `flags` ([`bits::LOCAL`] and/or [`bits::COUNT`] for call_count).
    TracePattern {
        session: u8,
        funcs: u8,
        kind: PatternKind,
        flags: u8,
    },
    /// `trace_info({f, ...}, call_time)` in `session` (OTP 29's non-blocking collection,
    /// `erts_prepare_timem_trace_info` … `erts_timem_info_consolidate`; see `collect.rs`).
    Collect { session: u8, func: u8 },
    /// Replace the tracer cell that hits send to (`Loc::Tracer`): with a fresh cell (`on`) or
    /// with none (remove). `meta`: the meta tracer of the traced node (ERTS swaps it in
    /// `set_function_break` when `trace_pattern(.., [{meta, NewTracer}])` stages; a hit whose
    /// tracer answers `remove` swaps it to NIL with a compare-and-swap); otherwise the session
    /// tracer (`set_session_tracer`). Either way the old cell is unpublished by one swap and
    /// freed after a wait that began after the swap (docs/spec.md §11): steps Stage (swap,
    /// take the retire list), W4, Free.
    SetTracer { meta: bool, on: bool },
    /// A batch (docs/fewer-waits.md, the engine's `WaitPlan::Batch` and `BatchElideIdle`): the
    /// next `len` script ops, all `TracePattern` in one session with no global or meta flag (the
    /// engine refuses those in a batch), are staged one after another in one `Stage` step (T1
    /// of entry 1, …, T1 of entry `len`), then one sequence W0…W4 finishes them over the union
    /// of their functions (W0 and install left out if every entry is `false`). `elide_idle`: W3
    /// and W4 are left out when consolidate will unlink no node (Proof EL).
    Batch { len: u8, elide_idle: bool },
}

impl StagerOp {
    /// `trace_pattern(session, funcs, kind, flags)`.
    pub const fn tp(session: u8, funcs: u8, kind: PatternKind, flags: u8) -> StagerOp {
        StagerOp::TracePattern {
            session,
            funcs,
            kind,
            flags,
        }
    }

    /// A batch of the next `len` ops, under `batch-elide-idle` (`elide_idle`) or `batch`.
    pub const fn batch(len: u8, elide_idle: bool) -> StagerOp {
        StagerOp::Batch { len, elide_idle }
    }
}

impl fmt::Display for StagerOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StagerOp::TracePattern {
                session,
                funcs,
                kind,
                flags,
            } => {
                let fl = bits::names(flags, bits::PATTERN);
                let fs: Vec<String> = (0..8)
                    .filter(|i| funcs & (1 << i) != 0)
                    .map(|i| format!("f{i}"))
                    .collect();
                write!(
                    f,
                    "trace_pattern(session {session}, {{{}}}, {}, [{}])",
                    fs.join(","),
                    kind.name(),
                    fl.join(",")
                )
            }
            StagerOp::Collect { session, func } => {
                write!(f, "trace_info(session {session}, f{func}, call_time)")
            }
            StagerOp::SetTracer { meta, on } => {
                let what = if meta {
                    "meta tracer (trace_pattern meta, new tracer)"
                } else {
                    "session tracer (set_session_tracer)"
                };
                let to = if on { "a fresh cell" } else { "none" };
                write!(f, "replace the {what} with {to}")
            }
            StagerOp::Batch { len, elide_idle } => write!(
                f,
                "batch of {len} (plan {})",
                if elide_idle {
                    "batch-elide-idle"
                } else {
                    "batch"
                }
            ),
        }
    }
}

/// A broken variant of the protocol: the engine's mutants (same names, same meaning) and two
/// that only the spec has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpecMutant {
    /// One of the engine's mutants (`reference/src/mutant.rs`).
    Engine(Mutant),
    /// Uninstall never restores the original instruction (breaks "patched iff active flag").
    SkipUninstall,
    /// The wait does not count sleeping schedulers: a scheduler asleep forever blocks the stager
    /// (breaks liveness only).
    WaitOnSleepers,
    /// A collection mutant, named as the engine's (`Mutant::COLLECTION`; see
    /// [`CollectMutant::engine`]).
    Collect(CollectMutant),
    /// A chain mutant: named as the engine's.
    Chain(ChainMutant),
    /// The fresh node's store into an empty slot is relaxed, as in ERTS (a plain store) and the
    /// engine (`stage.rs`): a call_time reader that walks the slot (a return, a schedule-out)
    /// may load the pointer without seeing the node's initialisation. The baseline makes it a
    /// release store read by acquire loads.
    FreshSlotStoreRelaxed,
    /// A batch under `batch-elide-idle` that will unlink no node also leaves out W2 (one wait
    /// more than the plan elides; the idle test is the same, made right after the commit).
    BatchIdleSkipW2,
    /// The idle test of `batch-elide-idle` always answers "idle": W3 and W4 are left out even
    /// when consolidate unlinks a node.
    BatchElideUnlinking,
}

/// The collection's mutants, plus ERTS's own behaviour where the checkers found it wrong
/// (findings F1 and F2 of docs/collection.md; the spec's baseline runs with both fixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollectMutant {
    /// TW1 removed: flip right after the temporaries went into the staging half.
    SkipTw1,
    /// TW2 removed: read the real tables right after the flip.
    SkipTw2,
    /// TW3 removed: merge and free the temporaries right after the flip back.
    SkipTw3,
    /// Merge the temporaries into the shared slot without the dirty lock.
    MergeWithoutLock,
    /// No flips: read the real tables where they are, still active.
    WithoutFlip,
    /// Merge and free the temporaries before the last wait (then wait).
    FreeBeforeLastWait,
    /// Free the temporaries without merging them.
    SkipMerge,
    /// C6 frees the temporaries but leaves them in the staging half (spec only).
    SkipEqualize,
    /// ERTS as it is (finding F1): a paused counter is read in place, without flipping.
    ErtsPausedReadInPlace,
    /// ERTS as it is (finding F2): the index is flipped back right after the read (no TW2b).
    ErtsFlipBackWithoutWait,
}

impl CollectMutant {
    pub const ALL: [CollectMutant; 10] = [
        CollectMutant::SkipTw1,
        CollectMutant::SkipTw2,
        CollectMutant::SkipTw3,
        CollectMutant::MergeWithoutLock,
        CollectMutant::WithoutFlip,
        CollectMutant::FreeBeforeLastWait,
        CollectMutant::SkipMerge,
        CollectMutant::SkipEqualize,
        CollectMutant::ErtsPausedReadInPlace,
        CollectMutant::ErtsFlipBackWithoutWait,
    ];

    /// The engine's mutant of the same name and meaning (`reference/src/mutant.rs`), if any.
    pub fn engine(self) -> Option<Mutant> {
        match self {
            CollectMutant::SkipTw1 => Some(Mutant::CollectSkipWaitBeforeFlip),
            CollectMutant::SkipTw2 => Some(Mutant::CollectSkipWaitBeforeRead),
            CollectMutant::SkipTw3 => Some(Mutant::CollectSkipWaitBeforeMerge),
            CollectMutant::MergeWithoutLock => Some(Mutant::CollectMergeWithoutLock),
            CollectMutant::WithoutFlip => Some(Mutant::CollectWithoutFlip),
            CollectMutant::FreeBeforeLastWait => Some(Mutant::CollectFreeBeforeLastWait),
            CollectMutant::SkipMerge => Some(Mutant::CollectSkipMerge),
            // The engine switches these behaviours with `Engine::with_paused_via_flip` and
            // `with_wait_before_flip_back` (default: as ERTS), not with mutants.
            CollectMutant::SkipEqualize
            | CollectMutant::ErtsPausedReadInPlace
            | CollectMutant::ErtsFlipBackWithoutWait => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CollectMutant::SkipTw1 => "collect-skip-tw1-before-flip",
            CollectMutant::SkipTw2 => "collect-skip-tw2-before-read",
            CollectMutant::SkipTw3 => "collect-skip-tw3-before-merge",
            CollectMutant::MergeWithoutLock => "collect-merge-without-lock",
            CollectMutant::WithoutFlip => "collect-without-flip",
            CollectMutant::FreeBeforeLastWait => "collect-free-before-last-wait",
            CollectMutant::SkipMerge => "collect-skip-merge",
            CollectMutant::SkipEqualize => "collect-skip-equalize",
            CollectMutant::ErtsPausedReadInPlace => "erts-f1-paused-read-in-place",
            CollectMutant::ErtsFlipBackWithoutWait => "erts-f2-flip-back-without-wait",
        }
    }
}

/// Chain insertion and removal while schedulers walk the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChainMutant {
    /// A new session's node becomes the chain head at staging (before W0), not at install.
    LinkBeforeInstallWait,
    /// An unlinked node is freed at consolidate, when it is unlinked (no W4).
    FreeAtUnlink,
    /// Unlinking a node also clears its `next`.
    ClearNextOnUnlink,
}

impl ChainMutant {
    pub const ALL: [ChainMutant; 3] = [
        ChainMutant::LinkBeforeInstallWait,
        ChainMutant::FreeAtUnlink,
        ChainMutant::ClearNextOnUnlink,
    ];

    /// The engine's mutant of the same meaning (`Mutant::SESSIONS`). The engine calls the first
    /// one `link-at-stage`; `SpecMutant::from_name` accepts that name too.
    pub fn engine(self) -> Mutant {
        match self {
            ChainMutant::LinkBeforeInstallWait => Mutant::LinkAtStage,
            ChainMutant::FreeAtUnlink => Mutant::FreeAtUnlink,
            ChainMutant::ClearNextOnUnlink => Mutant::ClearNextOnUnlink,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ChainMutant::LinkBeforeInstallWait => "link-before-install-wait",
            ChainMutant::FreeAtUnlink => "free-at-unlink",
            ChainMutant::ClearNextOnUnlink => "clear-next-on-unlink",
        }
    }
}

/// Engine mutants the spec does not model, and why (asserted complete by
/// `spec/tests/spec_collect.rs`).
pub const NOT_MODELLED: [(&str, &str); 3] = [
    (
        "ignore-session-state",
        "the spec has no session lifecycle (destroy makes a session's breakpoints inert at once \
         through a state the hit reads); killed by the engine's real-thread destroy test \
         (docs/sessions.md)",
    ),
    (
        "timem-pause-keeps-running",
        "pause changes what a charge counts (a hit's count is frozen, a return's time is not), \
         a counter value (I6); the spec's charges are abstract and the protocol (who may write \
         which table when) is the same paused or running; killed by the engine's shuttle \
         pause-restart run and the call_time behaviour tests",
    ),
    (
        "timem-restart-keeps-counter",
        "restart's effect is a value (counts start from zero, erlang/otp#8835); the spec models restart \
         of a call_time counter as a fresh object in the staging half (the old one freed at \
         consolidate), and a kept object is protocol-wise a counter with no new allocation; \
         killed by the engine's RestartCheck and behaviour tests",
    ),
];

impl SpecMutant {
    /// Every mutant: the engine's ten, then the spec-only ones, then the collection's and the
    /// chain's.
    pub fn all() -> Vec<SpecMutant> {
        let mut v: Vec<SpecMutant> = Mutant::ALL.into_iter().map(SpecMutant::Engine).collect();
        v.push(SpecMutant::SkipUninstall);
        v.push(SpecMutant::WaitOnSleepers);
        v.extend(CollectMutant::ALL.into_iter().map(SpecMutant::Collect));
        v.extend(ChainMutant::ALL.into_iter().map(SpecMutant::Chain));
        v.push(SpecMutant::FreshSlotStoreRelaxed);
        // The tracer cells' mutants (`StagerOp::SetTracer`): the engine's, same names.
        v.push(SpecMutant::Engine(Mutant::TracerFreeWithoutWait));
        v.push(SpecMutant::Engine(Mutant::MetaFreeWithoutWait));
        // The batch's (`StagerOp::Batch`): spec only.
        v.push(SpecMutant::BatchIdleSkipW2);
        v.push(SpecMutant::BatchElideUnlinking);
        v
    }

    pub fn name(self) -> &'static str {
        match self {
            SpecMutant::Engine(m) => m.name(),
            SpecMutant::SkipUninstall => "skip-uninstall",
            SpecMutant::WaitOnSleepers => "wait-on-sleepers",
            SpecMutant::Collect(m) => m.name(),
            SpecMutant::Chain(m) => m.name(),
            SpecMutant::FreshSlotStoreRelaxed => "fresh-slot-store-relaxed",
            SpecMutant::BatchIdleSkipW2 => "batch-idle-skip-w2",
            SpecMutant::BatchElideUnlinking => "batch-elide-unlinking",
        }
    }

    pub fn from_name(s: &str) -> Option<SpecMutant> {
        if s == Mutant::LinkAtStage.name() {
            return Some(SpecMutant::Chain(ChainMutant::LinkBeforeInstallWait));
        }
        SpecMutant::all().into_iter().find(|m| m.name() == s)
    }
}

impl fmt::Display for SpecMutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A model's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub schedulers: u8,
    pub functions: u8,
    pub sessions: u8,
    pub script: Vec<StagerOp>,
    pub mutant: Option<SpecMutant>,
    /// How many call_time charges schedulers make in a run (0: none; bounds the counters, so the
    /// state space stays finite).
    pub charges: u8,
    /// Schedulers (bit mask) whose charges go to the shared slot under the dirty lock (dirty
    /// schedulers in ERTS), instead of to their own table.
    pub dirty: u8,
    /// Schedulers call the functions (breakpoint hits). The collection models turn this off:
    /// their charges stand for the hits' step 7, returns and schedule-outs, and the hit path is
    /// checked by the other models.
    pub calls: bool,
    /// The engine's `WaitPlan::Pipeline` (docs/fewer-waits.md §6): a `trace_pattern` (or batch)
    /// makes no W4 and leaves its unlinked nodes on the free list; the next wait to complete,
    /// whoever makes it (the next call's W0 or W1, a collection's TW1, a tracer op's wait),
    /// began after that consolidate and frees them.
    pub pipeline: bool,
}

impl Config {
    /// A model whose schedulers call the functions, with no call_time charges and no mutant.
    pub fn hits(schedulers: u8, functions: u8, sessions: u8, script: Vec<StagerOp>) -> Config {
        Config {
            schedulers,
            functions,
            sessions,
            script,
            mutant: None,
            charges: 0,
            dirty: 0,
            calls: true,
            pipeline: false,
        }
    }

    /// Is `m` the active mutant?
    pub fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(SpecMutant::Engine(m))
    }

    /// Is `m` the active collection mutant?
    pub fn is_c(&self, m: CollectMutant) -> bool {
        self.mutant == Some(SpecMutant::Collect(m))
    }

    /// Is `m` the active chain mutant?
    pub fn is_ch(&self, m: ChainMutant) -> bool {
        self.mutant == Some(SpecMutant::Chain(m))
    }

    /// Upper bound on nodes ever allocated (each installing op may add one per function).
    pub fn max_nodes(&self) -> usize {
        self.script
            .iter()
            .map(|op| match *op {
                StagerOp::TracePattern { funcs, kind, .. } => {
                    if kind == PatternKind::False {
                        0
                    } else {
                        funcs.count_ones() as usize
                    }
                }
                StagerOp::Collect { .. } | StagerOp::SetTracer { .. } | StagerOp::Batch { .. } => 0,
            })
            .sum()
    }

    /// Upper bound on call_time counter objects ever allocated: one per function of each op
    /// that sets call_time (a fresh object in the staging half), one temporary per collection.
    pub fn max_objs(&self) -> usize {
        self.script
            .iter()
            .map(|op| match *op {
                StagerOp::TracePattern { funcs, flags, .. } if flags & bits::TIME != 0 => {
                    funcs.count_ones() as usize
                }
                StagerOp::Collect { .. } => 1,
                _ => 0,
            })
            .sum()
    }

    /// Upper bound on tracer cells ever published: the meta tracer's first one, one per
    /// `SetTracer` that sets a cell.
    pub fn max_cells(&self) -> usize {
        let set = self
            .script
            .iter()
            .filter(|op| matches!(op, StagerOp::SetTracer { on: true, .. }))
            .count();
        set + usize::from(self.tracer() == Some(true))
    }

    /// The tracer cell the model's hits send to: `Some(true)` the meta tracer (hits on a half
    /// with `META`), `Some(false)` the session tracer (hits on a half with `LOCAL` or
    /// `GLOBAL`), `None` no tracer op in the script (hits send to nothing the model tracks).
    pub fn tracer(&self) -> Option<bool> {
        self.script.iter().find_map(|op| match *op {
            StagerOp::SetTracer { meta, .. } => Some(meta),
            _ => None,
        })
    }

    /// Is the active mutant one that frees a replaced tracer cell without a wait?
    pub fn frees_tracer_without_wait(&self, meta: bool) -> bool {
        if meta {
            self.is(Mutant::MetaFreeWithoutWait)
        } else {
            self.is(Mutant::TracerFreeWithoutWait)
        }
    }

    /// One line: "2 schedulers x 2 functions x 1 session, 5 ops".
    pub fn params(&self) -> String {
        format!(
            "{} scheduler{} x {} function{} x {} session{}, {} stager ops",
            self.schedulers,
            if self.schedulers == 1 { "" } else { "s" },
            self.functions,
            if self.functions == 1 { "" } else { "s" },
            self.sessions,
            if self.sessions == 1 { "" } else { "s" },
            self.script.len()
        )
    }

    pub fn with_mutant(mut self, m: Option<SpecMutant>) -> Config {
        self.mutant = m;
        self
    }

    /// Validate the limits the state encoding relies on.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=4).contains(&self.schedulers) {
            return Err(format!("schedulers {} not in 1..=4", self.schedulers));
        }
        if !(1..=4).contains(&self.functions) {
            return Err(format!("functions {} not in 1..=4", self.functions));
        }
        if !(1..=3).contains(&self.sessions) {
            return Err(format!("sessions {} not in 1..=3", self.sessions));
        }
        if self.charges > 3 {
            return Err(format!("charges {} not in 0..=3", self.charges));
        }
        if self.dirty >> self.schedulers != 0 {
            return Err(format!("dirty mask {:#b} names no scheduler", self.dirty));
        }
        let mut global = 0u8;
        let mut other = 0u8;
        let mut tracer = None;
        for (i, op) in self.script.iter().enumerate() {
            let (session, funcs) = match *op {
                StagerOp::TracePattern {
                    session,
                    funcs,
                    flags,
                    ..
                } => {
                    if flags & bits::GLOBAL != 0 {
                        global |= funcs;
                    }
                    if flags & !bits::GLOBAL != 0 {
                        other |= funcs;
                    }
                    (session, funcs)
                }
                StagerOp::Collect { session, func } => {
                    (session, 1u8.checked_shl(func as u32).unwrap_or(0))
                }
                StagerOp::Batch { len, .. } => {
                    let entries = self.script.get(i + 1..i + 1 + len as usize);
                    let Some(entries) = entries.filter(|_| len >= 1) else {
                        return Err(format!(
                            "script op {i} ({op}): a batch needs {len} >= 1 entries after it"
                        ));
                    };
                    let mut sessions = entries.iter().map(|e| match *e {
                        StagerOp::TracePattern { session, flags, .. }
                            if flags & (bits::GLOBAL | bits::META) == 0 =>
                        {
                            Some(session)
                        }
                        _ => None,
                    });
                    let first = sessions.next().flatten();
                    if first.is_none() || sessions.any(|x| x != first) {
                        return Err(format!(
                            "script op {i} ({op}): a batch's entries are trace_pattern calls in \
                             one session without global or meta flags"
                        ));
                    }
                    continue;
                }
                StagerOp::SetTracer { meta, .. } => {
                    if tracer.replace(meta).is_some_and(|m| m != meta) {
                        return Err(format!(
                            "script op {i} ({op}): one model has one kind of tracer cell"
                        ));
                    }
                    continue;
                }
            };
            if session >= self.sessions || funcs == 0 || funcs >> self.functions != 0 {
                return Err(format!(
                    "script op {i} ({op}) outside the model's parameters"
                ));
            }
        }
        if global & other != 0 || (global != 0 && self.charges != 0) {
            return Err(
                "a slot with global trace is an export entry: no local, meta, call_count or \
                 call_time flags on it, and no call_time charges in the model"
                    .into(),
            );
        }
        // The state's inline capacities (`state.rs`); the 32-bit dirty mask holds MAX_LOCS.
        use super::state::{MAX_CELLS, MAX_NODES, MAX_OBJS};
        if self.max_nodes() > MAX_NODES {
            return Err(format!(
                "the script may allocate {} GenericBp nodes, more than the state's {MAX_NODES}",
                self.max_nodes()
            ));
        }
        if self.max_objs() > MAX_OBJS {
            return Err(format!(
                "the script may allocate {} call_time counter objects, more than the state's \
                 {MAX_OBJS}",
                self.max_objs()
            ));
        }
        if self.max_cells() > MAX_CELLS {
            return Err(format!(
                "the script may publish {} tracer cells, more than the state's {MAX_CELLS}",
                self.max_cells()
            ));
        }
        Ok(())
    }
}
