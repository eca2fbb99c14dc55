//! Fewer waits (docs/fewer-waits.md): the wait plans beside the ERTS-faithful sequence, and the
//! batched `trace_pattern` that stages several patterns under one permission and runs one
//! finisher sequence for all of them.
//!
//! ```text
//! Erts            every pattern its own sequence: 5 waits (4 for false) per pattern
//! Batch           one sequence per batch: 5 waits (4 if no entry installs), any number of patterns
//! BatchElideIdle  Batch, and W3 and W4 skipped when consolidate will unlink no node
//! Pipeline        every pattern its own sequence without W4: the nodes its consolidate
//!                 unlinks are freed after the next call's first wait (4 waits, 3 for false)
//! ```

use crate::bp::SessionId;
use crate::calltrace::TraceSpec;
use crate::code::FuncId;
use crate::engine::Engine;
use crate::export::Area;
use crate::pattern::{FlagSet, Pattern, PatternError, PatternOp};
use crate::progress::ThreadProgress;
use crate::stage;

/// Which waits `trace_pattern` makes. The default is ERTS's sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WaitPlan {
    /// ERTS `erts_finish_breakpointing`: a batch runs as consecutive calls, one sequence each.
    #[default]
    Erts,
    /// A batch runs one stage phase for all its entries, then one sequence.
    Batch,
    /// [`WaitPlan::Batch`], and W3 and W4 are skipped when consolidate will unlink no node (no
    /// node on a matched function has its active flags all off after the commit).
    BatchElideIdle,
    /// Pipelining (docs/fewer-waits.md §6): each call runs ERTS's sequence up to consolidate
    /// and returns without W4; the nodes it unlinked stay on the free list and are freed after
    /// the first wait of the next call (W0, or W1 for `false`), which began after that
    /// consolidate: one wait serves as this call's W4 and the next call's W0. Batches run as
    /// consecutive calls, as under [`WaitPlan::Erts`]. [`Engine::settle`] frees what the last
    /// call left after a wait of its own.
    Pipeline,
}

impl WaitPlan {
    pub const ALL: [WaitPlan; 4] = [
        WaitPlan::Erts,
        WaitPlan::Batch,
        WaitPlan::BatchElideIdle,
        WaitPlan::Pipeline,
    ];

    /// Short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            WaitPlan::Erts => "erts",
            WaitPlan::Batch => "batch",
            WaitPlan::BatchElideIdle => "batch-elide-idle",
            WaitPlan::Pipeline => "pipeline",
        }
    }

    /// Whether a batch runs one sequence.
    pub fn batches(self) -> bool {
        matches!(self, WaitPlan::Batch | WaitPlan::BatchElideIdle)
    }

    /// Whether a call leaves its unlinked nodes to be freed after the next call's first wait.
    pub fn pipelines(self) -> bool {
        self == WaitPlan::Pipeline
    }

    /// Whether W3 and W4 are skipped when consolidate will unlink nothing.
    pub fn elides_idle(self) -> bool {
        self == WaitPlan::BatchElideIdle
    }
}

/// One pattern of a batch: local breakpoints and counters on the code area, as
/// [`Engine::trace_pattern`] takes them (global and meta patterns are refused in a batch).
#[derive(Clone, Debug)]
pub struct BatchEntry {
    pub pattern: Pattern,
    pub op: PatternOp,
    pub spec: TraceSpec,
}

impl BatchEntry {
    /// An entry with counter and local flags only.
    pub fn flags(pattern: Pattern, op: PatternOp, fl: FlagSet) -> BatchEntry {
        BatchEntry {
            pattern,
            op,
            spec: TraceSpec::counters(fl),
        }
    }
}

impl<P: ThreadProgress> Engine<P> {
    /// Choose the wait plan (default [`WaitPlan::Erts`]). Call before any trace_pattern.
    pub fn with_wait_plan(mut self, plan: WaitPlan) -> Engine<P> {
        self.wait_plan = plan;
        self
    }

    pub fn wait_plan(&self) -> WaitPlan {
        self.wait_plan
    }

    /// `trace_pattern` for every entry, in order, in `session`; returns each entry's number of
    /// matched functions. The final state is the one the entries give run one after another.
    /// Under [`WaitPlan::Erts`] they are run one after another (a sequence each); under the
    /// batch plans all entries are staged under one permission and one sequence finishes them.
    /// Every entry is validated before anything is staged: a bad entry changes nothing.
    pub fn trace_pattern_batch(
        &self,
        session: SessionId,
        entries: &[BatchEntry],
    ) -> Result<Vec<usize>, PatternError> {
        check_batch(session, entries)?;
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        if !self.wait_plan.batches() {
            return entries
                .iter()
                .map(|e| self.trace_pattern(&e.pattern, e.op, &e.spec.clone().session(session)))
                .collect();
        }
        let mut st = self.seize_for(session)?;
        let staging = self.staging_ix();
        self.history.record(|| crate::history::Event::Batch {
            entries: entries.len() as u32,
            elide_idle: self.wait_plan.elides_idle(),
        });
        let mut counts = Vec::with_capacity(entries.len());
        let mut all_code: Vec<FuncId> = Vec::new();
        let mut all_exps: Vec<usize> = Vec::new();
        let mut installs = false;
        for e in entries {
            let code: Vec<FuncId> = e.pattern.matching(self.code.funcs.iter().map(|h| &h.mfa));
            let on = e.op != PatternOp::False;
            installs |= on;
            self.history
                .record(|| crate::history::trace_pattern(session, &code, e.op, e.spec.flags));
            let extra = stage::Extra {
                global: false,
                ms: e.spec.ms.clone().map(std::sync::Arc::new),
                meta: None,
            };
            for &f in &code {
                stage::stage_in(
                    self,
                    &mut st,
                    Area::Code,
                    f,
                    session,
                    staging,
                    e.op,
                    e.spec.flags,
                    &extra,
                );
            }
            // Local excludes global within a session, as in `trace_pattern` (only for an op
            // that sets: a `false` leaves the global trace alone).
            let clears_global =
                on || crate::mutant::is(self.mutant, crate::Mutant::BatchFalseClearsGlobal);
            if clears_global && st.global_sessions & (1u64 << session) != 0 {
                let exps: Vec<usize> = e
                    .pattern
                    .matching(self.exports.funcs.iter().map(|h| &h.mfa));
                let global_only = stage::Extra {
                    global: true,
                    ms: None,
                    meta: None,
                };
                for &x in &exps {
                    stage::stage_in(
                        self,
                        &mut st,
                        Area::Export,
                        x,
                        session,
                        staging,
                        PatternOp::False,
                        FlagSet::default(),
                        &global_only,
                    );
                }
                all_exps.extend(exps);
            }
            counts.push(code.len());
            all_code.extend(code);
        }
        all_code.sort_unstable();
        all_code.dedup();
        all_exps.sort_unstable();
        all_exps.dedup();
        let op = if installs {
            PatternOp::True
        } else {
            PatternOp::False
        };
        self.finish(&mut st, op, Some(Area::Code), &all_code, &all_exps);
        Ok(counts)
    }

    /// How many waits a batch of `entries` makes under `plan`, given how many of them install
    /// (op other than `false`) and whether its consolidate unlinks a node.
    pub fn planned_waits(plan: WaitPlan, ops: &[PatternOp], unlinks: bool) -> u64 {
        let w34 = |unl: bool| 2 * u64::from(!plan.elides_idle() || unl);
        match plan {
            WaitPlan::Erts => ops.iter().map(|&op| Self::erts_waits(op)).sum(),
            // No W4 in any call (the next call's first wait stands for it).
            WaitPlan::Pipeline => ops.iter().map(|&op| Self::erts_waits(op) - 1).sum(),
            _ if ops.is_empty() => 0,
            _ => {
                let w0 = u64::from(ops.iter().any(|&op| op != PatternOp::False));
                w0 + 2 + w34(unlinks)
            }
        }
    }
}

/// The entries of a batch in `session`, checked before anything is staged (the static area's
/// [`Engine::trace_pattern_batch`] and a module's [`Engine::trace_pattern_batch_in`]): no
/// global or meta entry, none naming another session, each entry's flags valid for its op, a
/// match spec only with local.
pub(crate) fn check_batch(session: SessionId, entries: &[BatchEntry]) -> Result<(), PatternError> {
    for (i, e) in entries.iter().enumerate() {
        let bad = |what: &str| PatternError::BadArg(format!("batch entry {i}: {what}"));
        if e.spec.global {
            return Err(bad("global patterns cannot be batched"));
        }
        if e.spec.meta.is_some() {
            return Err(bad("meta patterns cannot be batched"));
        }
        if e.spec.session != 0 && e.spec.session != session {
            return Err(bad("the entry names another session than the batch"));
        }
        e.spec
            .flags
            .check(e.op)
            .map_err(|err| bad(&err.to_string()))?;
        if e.spec.ms.is_some() && !e.spec.flags.local {
            return Err(bad(
                "a match spec needs local (not only call_count/time/memory)",
            ));
        }
    }
    Ok(())
}

/// Whether the sequence lies outside proof EL (docs/fewer-waits.md), so the elide-idle plan makes
/// W3 and W4 whatever consolidate unlinks: it touches an export area (the static area's or a
/// module's: a global pattern, or a local one in a session that holds global patterns), or a node on a chain of the matched
/// functions holds a meta tracer in either half (consolidate may release it). Stager side,
/// under the permission, before consolidate.
pub(crate) fn beyond_proof_e<P: ThreadProgress>(
    e: &Engine<P>,
    st: &crate::engine::Permission<'_>,
    areas: &[(Area, &[FuncId])],
) -> bool {
    areas.iter().any(|&(area, funcs)| {
        // The static area's export entries, and a module's (its export area, whose words are
        // the entries' dispatch words: `Engine::export_dispatch_ix`).
        ((area == Area::Export || e.export_dispatch_ix(area).is_some()) && !funcs.is_empty())
            || funcs.iter().any(|&f| {
                crate::rest::chain(e, st, area, f)
                    .any(|node| (0..2).any(|ix| node.snapshot_half(ix).meta.is_some()))
            })
    })
}

/// Whether consolidate, run now (after the commit), would unlink a node: some node on a chain
/// of the matched entries has its active flags all off. Stager side, under the permission;
/// consolidate's own test (`src.flags == 0` on the active half) on the same chains.
pub(crate) fn will_unlink<P: ThreadProgress>(
    e: &Engine<P>,
    st: &crate::engine::Permission<'_>,
    areas: &[(Area, &[FuncId])],
) -> bool {
    let active = e.active_ix();
    areas.iter().any(|&(area, funcs)| {
        funcs.iter().any(|&f| {
            crate::rest::chain(e, st, area, f).any(|node| node.snapshot_half(active).flags == 0)
        })
    })
}
