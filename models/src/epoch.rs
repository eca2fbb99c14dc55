//! Every model family under the epoch grace period ([`EpochProgress`]), the variant of thread
//! progress built on crossbeam-epoch (docs/thread-progress.md). The families run under
//! [`bpspec_reference::Qsbr`] in their own test files; here each one's scenarios run again under
//! `EpochProgress`, and the family's kill claims with them, so the variant is checked on every
//! family the default runs, not only on the trace_pattern scenarios of `tests/loom.rs`.
//!
//! A row is a family's scenario under one of its switches (a wait plan, a load protocol, a
//! module's version), named as the family's own rows name it, and recorded with progress
//! `epoch`. [`LOOM_LEFT_OUT`] lists the loom scenarios that do not run here and why: each was
//! tried, and what was seen is next to it.

use crate::load::{runs_in_shuttle, LScenario};
use crate::{collection, exports, load, meta, readers, sessions, waits, Placement};
use bpspec_reference::{EpochProgress, LoadProtocol, Mutant};
use std::sync::Arc;

/// One family's scenario under one switch, as a model run under `EpochProgress`.
#[derive(Clone)]
pub struct Row {
    /// The row's name in the results table (`remove@versions`, `batch-remove@pipeline`,
    /// `old-code-purge@nonblocking`, or the scenario's own name).
    pub label: String,
    /// The scenario's name, as the family's kill claims name it.
    pub scenario: &'static str,
    /// The switch the family's claims are keyed by (plan or protocol), if any.
    pub switch: Option<&'static str>,
    pub model: Arc<dyn Fn(Option<Mutant>) + Send + Sync>,
}

/// The families, in the order the tests run them.
pub const FAMILIES: [&str; 8] = [
    "versions",
    "sessions",
    "readers",
    "collection",
    "exports",
    "meta",
    "waits",
    "load",
];

/// The families loom runs under `EpochProgress`: all of them (the code-loading twins left out,
/// `loom_twin`).
pub const LOOM_FAMILIES: [&str; 8] = FAMILIES;

/// The loom scenarios left out under `EpochProgress`, with what was seen (preemption bound 1,
/// `LOOM_MAX_BRANCHES` 20,000, `--profile checked`). Two schedulers each pinned in
/// crossbeam-epoch multiply loom's executions, and `meta-swap` and `meta-reclaim-many` wait
/// many times in one run.
pub const LOOM_LEFT_OUT: &[(&str, &str)] = &[
    ("remove-2sched", "878,983 executions at bound 1, 376 s"),
    (
        "session-unlink-2sched",
        "over 250,000 executions at bound 1 after 285 s, stopped",
    ),
    (
        "meta-swap",
        "over 79,999 executions at bound 1 after 20 s, stopped",
    ),
    (
        "meta-reclaim-many",
        "over 39,999 executions at bound 1 after 20 s, stopped",
    ),
];

fn left_out(r: &Row) -> bool {
    LOOM_LEFT_OUT.iter().any(|&(n, _)| n == r.scenario) || loom_twin(r.scenario)
}

/// A code-loading twin loom leaves out under `EpochProgress`: a `-fold`, `-pipeline` or `-3ix`
/// scenario whose base scenario (the name without the suffix) is in the family too. A twin
/// changes where the load's sequence waits (the LW1 fold, the pipeline wait plan, three code
/// indices), not how a wait is made, which is what `EpochProgress` changes; shuttle runs every
/// twin under it. With the twins, the family's 79 rows at bound 1 took 130 s; without them,
/// about half.
fn loom_twin(name: &str) -> bool {
    ["-fold", "-pipeline", "-3ix"].iter().any(|suffix| {
        name.strip_suffix(suffix)
            .is_some_and(|base| load::loom_scenarios().iter().any(|s| s.name == base))
    })
}

fn row(
    label: String,
    scenario: &'static str,
    switch: Option<&'static str>,
    model: impl Fn(Option<Mutant>) + Send + Sync + 'static,
) -> Row {
    Row {
        label,
        scenario,
        switch,
        model: Arc::new(model),
    }
}

/// The rows of `family` for `checker` ("loom" or "shuttle"): the family's scenarios for that
/// checker, under every switch its own tests run, but those of [`LOOM_LEFT_OUT`] under loom.
pub fn rows(family: &str, checker: &str) -> Vec<Row> {
    let loom = match checker {
        "loom" => true,
        "shuttle" => false,
        other => panic!("unknown checker {other}"),
    };
    let mut out = Vec::new();
    match family {
        "versions" => {
            let scns = if loom {
                crate::loom_scenarios()
            } else {
                crate::shuttle_scenarios()
            };
            for s in scns {
                let n = s.name;
                out.push(row(format!("{n}@versions"), n, None, move |m| {
                    crate::run_on::<EpochProgress>(&s, m, Placement::Versions)
                }));
            }
        }
        "sessions" => {
            let scns = if loom {
                sessions::loom_scenarios()
            } else {
                sessions::shuttle_scenarios()
            };
            for s in scns {
                let n = s.name;
                out.push(row(n.into(), n, None, move |m| {
                    sessions::run::<EpochProgress>(&s, m)
                }));
            }
        }
        "readers" => {
            let scns = if loom {
                readers::loom_scenarios()
            } else {
                readers::shuttle_scenarios()
            };
            for s in scns {
                let n = s.name;
                out.push(row(n.into(), n, None, move |m| {
                    readers::run::<EpochProgress>(&s, m)
                }));
            }
        }
        "collection" => {
            let scns = if loom {
                collection::loom_scenarios()
            } else {
                collection::shuttle_scenarios()
            };
            for s in scns {
                let n = s.name;
                out.push(row(n.into(), n, None, move |m| {
                    collection::run::<EpochProgress>(&s, m)
                }));
            }
        }
        "exports" => {
            let scns = if loom {
                exports::loom_scenarios()
            } else {
                exports::shuttle_scenarios()
            };
            for s in scns {
                let n = s.name;
                out.push(row(n.into(), n, None, move |m| {
                    exports::run::<EpochProgress>(&s, m)
                }));
            }
        }
        "meta" => {
            for n in meta::META_SCENARIOS {
                out.push(row(n.into(), n, None, move |m| {
                    meta::run_meta_on::<EpochProgress>(n, m, Placement::Static)
                }));
            }
        }
        "waits" => {
            let scns = if loom {
                waits::loom_scenarios()
            } else {
                waits::shuttle_scenarios()
            };
            for s in scns {
                for plan in waits::PLANS {
                    let (n, s) = (s.name, s.clone());
                    out.push(row(
                        format!("{n}@{}", plan.name()),
                        n,
                        Some(plan.name()),
                        move |m| readers::run_planned::<EpochProgress>(&s, m, plan),
                    ));
                }
            }
        }
        "load" => {
            let scns: Vec<LScenario> = if loom {
                load::loom_scenarios()
            } else {
                load::shuttle_scenarios()
            };
            for s in scns {
                for proto in LoadProtocol::ALL {
                    // As the family's own tests: loom runs a `-fold` twin under NonBlocking
                    // only, shuttle as `load::runs_in_shuttle` says.
                    let runs = if loom {
                        !(s.fold_lw1 && proto == LoadProtocol::Blocking)
                    } else {
                        runs_in_shuttle(s.name, s.fold_lw1, proto)
                    };
                    if !runs {
                        continue;
                    }
                    let (n, s) = (s.name, s.clone());
                    out.push(row(
                        format!("{n}@{}", proto.name()),
                        n,
                        Some(proto.name()),
                        move |m| load::run::<EpochProgress>(&s, proto, m),
                    ));
                }
            }
        }
        other => panic!("unknown family {other}"),
    }
    if loom {
        out.retain(|r| !left_out(r));
    }
    out
}

/// The kill claims of `family` for `checker`, as (mutant, row label): the family's own claims
/// for that checker (every switch), on the rows [`rows`] has.
pub fn claims(family: &str, checker: &str) -> Vec<(Mutant, String)> {
    let plain = |v: Vec<(Mutant, &'static str)>, suffix: &str| -> Vec<(Mutant, String)> {
        v.into_iter()
            .map(|(m, n)| (m, format!("{n}{suffix}")))
            .collect()
    };
    let mut out = match family {
        "versions" => plain(
            crate::expected_kills(checker)
                .into_iter()
                .chain(crate::count_kills(checker))
                .collect(),
            "@versions",
        ),
        "sessions" => plain(sessions::expected_kills(checker), ""),
        "readers" => plain(readers::expected_kills(checker), ""),
        "collection" => plain(collection::expected_kills(checker), ""),
        "exports" => plain(exports::expected_kills(checker), ""),
        "meta" => plain(meta::expected_meta_kills(checker), ""),
        "waits" => waits::PLANS
            .into_iter()
            .flat_map(|p| plain(waits::expected_kills(checker, p), &format!("@{}", p.name())))
            .collect(),
        "load" => LoadProtocol::ALL
            .into_iter()
            .flat_map(|p| plain(load::expected_kills(checker, p), &format!("@{}", p.name())))
            .collect(),
        other => panic!("unknown family {other}"),
    };
    if checker == "shuttle" {
        out.extend(
            SHUTTLE_EXTRA_CLAIMS
                .iter()
                .filter(|&&(f, _, _)| f == family)
                .map(|&(_, m, l)| (m, l.to_string())),
        );
    }
    let labels: Vec<String> = rows(family, checker).into_iter().map(|r| r.label).collect();
    out.retain(|(_, l)| labels.contains(l));
    out
}

/// shuttle claims under `EpochProgress` beyond the family's own: the timem readers' one claim
/// (`skip-w4-before-free` on `timem-remove`) was a miss there before the waiters shared one
/// participant, and PCT kills W3's removal on
/// `timem-remove` ("scheduler 1 executed the breakpoint instruction of m:f0/0 but its
/// breakpoint slot is empty"; also on `timem-remove-nap`, `timem-raise` and
/// `timem-two-stagers`, 2,000 iterations, seed 0x627073706563).
pub const SHUTTLE_EXTRA_CLAIMS: &[(&str, Mutant, &str)] =
    &[("readers", Mutant::SkipWaitBeforeConsolidate, "timem-remove")];

/// shuttle claims of [`claims`] that neither PCT nor random killed under `EpochProgress` at
/// 2,000 iterations (seed 0x627073706563) when the rows were made: their rows expect
/// "survives" (a kill accepted). Every other claim must die. Under `EpochProgress` a wait ends
/// only when crossbeam-epoch's global epoch has advanced twice past it, which needs every
/// pinned scheduler to pass a progress point at each advance, and shuttle cannot preempt inside
/// crossbeam-epoch (its atomics are not shuttle's), so a removed wait's window is narrower than
/// under `Qsbr`. `wait-without-new-period` is `Qsbr`'s own mutant, which `EpochProgress`
/// ignores.
pub const SHUTTLE_MISSES: &[(Mutant, &str)] = &[
    (
        Mutant::SkipWaitBeforeUninstall,
        "batch-pause@batch-elide-idle",
    ),
    (Mutant::SkipWaitBeforeFree, "batch-remove-2sess@batch"),
    (
        Mutant::SkipWaitBeforeFree,
        "batch-remove-2sess@batch-elide-idle",
    ),
    (Mutant::SkipWaitBeforeConsolidate, "batch-remove-hit@batch"),
    (
        Mutant::SkipWaitBeforeConsolidate,
        "batch-remove-hit@batch-elide-idle",
    ),
    (
        Mutant::SkipWaitBeforeConsolidate,
        "batch-remove-hit@pipeline",
    ),
    (
        Mutant::SkipWaitBeforeFree,
        "global-local-exclusion@blocking",
    ),
    (
        Mutant::SkipWaitBeforeFree,
        "global-local-exclusion@nonblocking",
    ),
    (Mutant::SkipWaitBeforeFree, "global-remove-2sess"),
    (Mutant::CollectFreeBeforeLastWait, "info"),
    (Mutant::CollectSkipWaitBeforeMerge, "info"),
    (Mutant::CollectMergeWithoutLock, "info-dirty"),
    (
        Mutant::LoadClearOldAtOnce,
        "old-code-call-memory@nonblocking",
    ),
    (
        Mutant::LoadPurgeSkipCheck,
        "old-code-call-memory@nonblocking",
    ),
    (
        Mutant::LoadClearOldAtOnce,
        "old-code-call-time-fold@nonblocking",
    ),
    (
        Mutant::LoadClearOldAtOnce,
        "old-code-call-time-pipeline@nonblocking",
    ),
    (Mutant::LoadClearOldAtOnce, "old-code-call-time@nonblocking"),
    (
        Mutant::LoadClearOldAtOnce,
        "old-code-local-calls-fold@nonblocking",
    ),
    (
        Mutant::LoadClearOldAtOnce,
        "old-code-local-calls@nonblocking",
    ),
    (
        Mutant::LoadClearOldAtOnce,
        "old-code-local-trace-fold@nonblocking",
    ),
    (
        Mutant::LoadPurgeSkipCheck,
        "old-code-local-trace-fold@nonblocking",
    ),
    (
        Mutant::LoadClearOldAtOnce,
        "old-code-local-trace@nonblocking",
    ),
    (
        Mutant::LoadPurgeSkipCheck,
        "old-code-local-trace@nonblocking",
    ),
    (Mutant::LoadClearOldAtOnce, "old-code-meta-fold@nonblocking"),
    (Mutant::LoadPurgeSkipCheck, "old-code-meta@blocking"),
    (Mutant::LoadClearOldAtOnce, "old-code-meta@nonblocking"),
    (Mutant::LoadPurgeSkipCheck, "old-code-purge-3ix@nonblocking"),
    (
        Mutant::LoadPurgeSkipCheck,
        "old-code-purge-fold@nonblocking",
    ),
    (
        Mutant::LoadClearOldAtOnce,
        "old-code-purge-kill-2procs@nonblocking",
    ),
    (
        Mutant::LoadPurgeSkipCheck,
        "old-code-purge-kill-2procs@nonblocking",
    ),
    (
        Mutant::LoadPurgeSkipCheck,
        "old-code-purge-kill-3ix@nonblocking",
    ),
    (
        Mutant::LoadPurgeSkipCheck,
        "old-code-purge-kill-fold@nonblocking",
    ),
    (
        Mutant::LoadPurgeSkipCheck,
        "old-code-purge-kill@nonblocking",
    ),
    (Mutant::LoadPurgeSkipCheck, "old-code-purge@nonblocking"),
    (
        Mutant::SkipWaitBeforeFree,
        "old-code-session-destroy-fold@nonblocking",
    ),
    (
        Mutant::SkipWaitBeforeFree,
        "old-code-session-destroy-pipeline@blocking",
    ),
    (
        Mutant::SkipWaitBeforeFree,
        "old-code-session-destroy-pipeline@nonblocking",
    ),
    (
        Mutant::SkipWaitBeforeFree,
        "old-code-session-destroy@blocking",
    ),
    (
        Mutant::SkipWaitBeforeFree,
        "old-code-session-destroy@nonblocking",
    ),
    (
        Mutant::LoadSkipWaitAfterCommit,
        "old-code-untraced-purge-3ix@nonblocking",
    ),
    (
        Mutant::LoadSkipWaitAfterCommit,
        "old-code-untraced-purge-fold@nonblocking",
    ),
    (
        Mutant::LoadSkipWaitAfterCommit,
        "old-code-untraced-purge@nonblocking",
    ),
    (Mutant::TimemPauseKeepsRunning, "pause-restart"),
    (Mutant::SkipWaitBeforeFree, "remove-session@versions"),
    (Mutant::WaitWithoutNewPeriod, "remove@versions"),
    (Mutant::ClearNextOnUnlink, "session-unlink-head"),
    (Mutant::FreeAtUnlink, "session-unlink-head"),
];

/// loom's kills under `EpochProgress`, by family: (family, mutant, row label), each at
/// preemption bound 2 ([`LOOM_KILL_BOUND`]), in `make test` and `make check`. At bound 1, the
/// bound of the baselines, loom killed none of the collection's and the exports' claims tried.
/// At bound 2 every family's claims were run once by hand (`--profile checked`, at most 30 to 40
/// s each), and these are among those that died, each with its executions to the kill in the
/// test (`make test`'s bounds, after the waiters shared one participant): `add@versions` 570;
/// `update@versions` 1; `session-insert` 1,317; `tracer-remove` and `tracer-replace` 1;
/// `timem-fresh-node` 1,949; `info` 1, 798, 1,612 and 756; `info-rehash` 1; `global-set`
/// 26,592; `meta-replace` 477; `batch-drop-counters@batch-elide-idle` 1,870; the load rows 1,
/// 46, 5,175, 7, 15,677, 904, 34,322 and 63,374 (about 16 s for the 22). Many more load claims
/// died (docs/thread-progress.md); these are quick ones, both protocols, load's own mutants
/// and waits. The rest held within their bound or the time: W1 to W4 and the
/// thread-progress mutants on the trace_pattern scenarios, `free-at-unlink` and
/// `clear-next-on-unlink`, W4 on the timem readers and the wait plans, W1 to W4 on the export
/// scenarios, `collect-skip-tw3-before-merge`, `collect-merge-without-lock` and
/// `collect-free-before-last-wait`, and the purge's check and wait and W0 to W4 on the
/// old-code scenarios under NonBlocking, whose kills under `Qsbr` are at bound 3. The meta
/// family's own claims are on `meta-swap` and `meta-reclaim-many` ([`LOOM_LEFT_OUT`]); on
/// `meta-replace` its weakened swap (M1) is killed.
pub const LOOM_KILLS: &[(&str, Mutant, &str)] = &[
    ("versions", Mutant::SkipWaitBeforeInstall, "add@versions"),
    ("versions", Mutant::SkipConsolidateCopy, "update@versions"),
    ("sessions", Mutant::LinkAtStage, "session-insert"),
    ("sessions", Mutant::TracerFreeWithoutWait, "tracer-remove"),
    ("sessions", Mutant::TracerFreeWithoutWait, "tracer-replace"),
    ("readers", Mutant::FreshNodeRelaxedStore, "timem-fresh-node"),
    ("collection", Mutant::CollectSkipWaitBeforeFlip, "info"),
    ("collection", Mutant::CollectSkipWaitBeforeRead, "info"),
    (
        "collection",
        Mutant::CollectSkipWaitBeforeRead,
        "info-rehash",
    ),
    ("collection", Mutant::CollectWithoutFlip, "info"),
    ("collection", Mutant::CollectSkipMerge, "info"),
    ("exports", Mutant::SkipWaitBeforeInstall, "global-set"),
    (
        "meta",
        Mutant::Weaken(bpspec_reference::Site::MetaTracerSwap),
        "meta-replace",
    ),
    (
        "waits",
        Mutant::SkipWaitBeforeUninstall,
        "batch-drop-counters@batch-elide-idle",
    ),
    (
        "load",
        Mutant::LoadBlockingWithoutBlock,
        "load-under-hits@blocking",
    ),
    (
        "load",
        Mutant::LoadPurgeSkipCheck,
        "old-code-purge-kill@blocking",
    ),
    (
        "load",
        Mutant::SkipWaitBeforeUninstall,
        "trace-pattern-then-load@blocking",
    ),
    (
        "load",
        Mutant::CollectSkipWaitBeforeRead,
        "load-collect@blocking",
    ),
    (
        "load",
        Mutant::LoadSkipWaitAfterCommit,
        "old-code-untraced-purge@nonblocking",
    ),
    (
        "load",
        Mutant::SkipWaitBeforeUninstall,
        "trace-pattern-then-load@nonblocking",
    ),
    (
        "load",
        Mutant::SkipWaitBeforeConsolidate,
        "trace-pattern-off-under-hits@nonblocking",
    ),
    (
        "load",
        Mutant::LoadClearOldAtOnce,
        "old-code-local-calls@nonblocking",
    ),
];

/// The bound of [`LOOM_KILLS`]' rows (`loom_run::KILL_BOUND`, the bound of the families' own
/// kill rows).
pub const LOOM_KILL_BOUND: usize = 2;
