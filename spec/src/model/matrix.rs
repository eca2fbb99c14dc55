//! The spec's kill matrix: for each mutant, the model it runs on, the property it is meant to
//! break, and the exact set of properties the exhaustive check finds violated (measured; asserted
//! by `spec/tests/spec_model.rs` and by `bpspec check --mutants`).

use super::config::{ChainMutant, SpecMutant};
use super::props::{LIVENESS, SAFETY};
use bpspec_reference::Mutant;

/// One row of the matrix.
#[derive(Clone, Debug)]
pub struct Kill {
    pub mutant: SpecMutant,
    pub model: &'static str,
    /// The property the mutant is meant to break (its designated killer).
    pub designated: &'static str,
    /// Every property the exhaustive check finds violated on `model`.
    pub breaks: Vec<&'static str>,
}

/// `sometimes` properties that have no example in a baseline model, on purpose.
pub fn expected_unreached(model: &str) -> &'static [&'static str] {
    match model {
        // With one session a node is unlinked exactly when its function's instruction was
        // restored, and W3 keeps every scheduler off it: nobody stands on an unlinked node.
        // Models without call_time make no charges.
        "s2f2x1" | "tiny" | "b2f2" | "b2f2b" | "p2f2" | "s2f3x1" | "s4f1x1" => &[
            "stands-on-unlinked-node",
            "charge-lands-in-temp",
            "charges-old-table-after-flip",
            "charge-walks-unpatched-function",
            "tracer-replaced-while-held",
        ],
        // The tracer models: one session, no node is ever unlinked, no call_time.
        "m2f1" | "st2f1" | "bm2f1" => &[
            "stands-on-unlinked-node",
            "charge-lands-in-temp",
            "charges-old-table-after-flip",
            "charge-walks-unpatched-function",
        ],
        // The call_time reader models with one session: no collection (no temporaries), and
        // the single-session reason above for unlinked nodes.
        "t2f1" | "t2f1p" | "t2f1pc2" | "bt2f1" | "pt2f1" => &[
            "stands-on-unlinked-node",
            "charge-lands-in-temp",
            "tracer-replaced-while-held",
        ],
        // With two sessions session 1's local trace keeps f0 patched throughout.
        "t2f1x2" | "t2f1x2r" => &[
            "charge-lands-in-temp",
            "charge-walks-unpatched-function",
            "tracer-replaced-while-held",
        ],
        // The collection models: one session and no removal (no node is unlinked), and no
        // calls (the charges stand for them), so no hit reads a half or spans a flip.
        "c2f1" | "c2f1c3" | "c3f1" | "c3f1d2" | "bc2f1" => &[
            "old-half-after-flip",
            "stands-on-unlinked-node",
            "hit-spans-flip",
            "tracer-replaced-while-held",
        ],
        // Models without a tracer op have no tracer cell to replace.
        _ => &[
            "charge-lands-in-temp",
            "charges-old-table-after-flip",
            "charge-walks-unpatched-function",
            "tracer-replaced-while-held",
        ],
    }
}

/// The matrix, one row a line: the mutant, the model it runs on, and every property the
/// exhaustive check finds violated there, its designated killer marked `*`. Lines beginning
/// with `#` say why a row breaks what it breaks.
const ROWS: &str = "
skip-w0-before-install          s2f2x1   *no-torn-half slot-set-behind-breakpoint
skip-w1-before-commit           s2f2x1   no-torn-half *activation-atomic-per-scheduler
skip-w2-before-uninstall        s2f2x1   *activation-atomic-per-scheduler
skip-w3-before-consolidate      s2f2x1   *slot-set-behind-breakpoint
skip-w4-before-free             s2f1x2   *no-use-after-free returns-settled
uninstall-before-commit         s2f2x1   *activation-atomic-per-scheduler
skip-consolidate-copy           s2f2x1   *at-rest-consistent patched-iff-active-flag
# The thread-progress mutants on s2f1x2: a scheduler's reads are no longer ordered before the
# stager's next step, so every property about what a late reader sees fails.
progress-without-barrier        s2f1x2   *no-use-after-free no-torn-half slot-set-behind-breakpoint returns-settled no-missed-node
wait-without-new-period         s2f1x2   *no-use-after-free no-torn-half slot-set-behind-breakpoint returns-settled no-missed-node
wake-without-barrier            s2f1x2   *no-use-after-free no-torn-half slot-set-behind-breakpoint returns-settled no-missed-node
skip-uninstall                  s2f2x1   slot-set-behind-breakpoint *patched-iff-active-flag
wait-on-sleepers                s2f1x2   *stager-finishes-under-fair-progress
collect-skip-tw1-before-flip    c2f1     *no-torn-half
collect-skip-tw2-before-read    c2f1     *collector-reads-quiet-table
collect-skip-tw3-before-merge   c2f1     no-torn-half returns-settled *collector-reads-quiet-table no-temp-use-after-free charges-conserved
collect-merge-without-lock      c2f1     *shared-slot-under-lock
collect-without-flip            c2f1     *collector-reads-quiet-table
collect-free-before-last-wait   c2f1     no-torn-half collector-reads-quiet-table *no-temp-use-after-free charges-conserved
collect-skip-merge              c2f1     *charges-conserved
collect-skip-equalize           c2f1     *at-rest-consistent no-temp-use-after-free charges-conserved
erts-f1-paused-read-in-place    c2f1     *collector-reads-quiet-table
erts-f2-flip-back-without-wait  c2f1     *collector-reads-quiet-table
link-before-install-wait        s2f1x2h  *no-torn-half
free-at-unlink                  s2f1x2h  *no-use-after-free
clear-next-on-unlink            s2f1x2h  *no-missed-node
# The call_time readers that walk the slot whatever the instruction word says (a return, an
# exception, a schedule-out): with one session, W4 is needed too (a reader that loaded the slot
# before the unlink may still stand on the node), and the fresh node's store into an empty slot
# must publish its initialisation.
skip-w4-before-free             t2f1     *no-use-after-free returns-settled
fresh-slot-store-relaxed        t2f1     *no-torn-half
# Export entries (global trace): the same protocol on the entry's slot; with two sessions W4
# keeps a remote call's hit off the unlinked node, as on s2f1x2.
skip-w4-before-free             g2f1     *no-use-after-free returns-settled
# The tracer cells: a replaced (or removed) cell is freed only after a wait. The session
# tracer's swap is the stager's write: without the wait, a scheduler may still read the old
# pointer after the call returned (returns-settled) too.
meta-free-without-wait          m2f1     *no-freed-tracer-use
tracer-free-without-wait        st2f1    returns-settled *no-freed-tracer-use
# The batch (`StagerOp::Batch`, docs/fewer-waits.md): one more wait left out of an idle batch
# under batch-elide-idle. Without W2, consolidate writes the old active half while a hit that
# read the old index may still act on it (b2f2), and the counter a restart replaced is freed at
# consolidate while a charge that read the old index still holds it (bt2f1; the property is
# named for temporaries but catches any freed object).
batch-idle-skip-w2              b2f2     *no-torn-half returns-settled
batch-idle-skip-w2              bt2f1    no-torn-half returns-settled *no-temp-use-after-free
# The idle test answering \"idle\" when consolidate unlinks: W3 and W4 are gone from a batch
# that restores an instruction and frees nodes.
batch-elide-unlinking           b2f2     no-use-after-free *slot-set-behind-breakpoint returns-settled
batch-elide-unlinking           b2f1x2   *no-use-after-free returns-settled
# The waits a batch keeps, each removed from the batch models: W2 under batch-elide-idle guards
# the half consolidate writes (no W3 behind it), under batch only I3; W3 the restored
# instruction; W4 the freed node under a call_time reader.
skip-w2-before-uninstall        b2f2     *no-torn-half activation-atomic-per-scheduler returns-settled
skip-w2-before-uninstall        b2f2b    *activation-atomic-per-scheduler
skip-w3-before-consolidate      b2f2     *slot-set-behind-breakpoint
skip-w4-before-free             bt2f1    *no-use-after-free returns-settled
# Pipelining (`Config::pipeline`, docs/fewer-waits.md §6): skip-w4-before-free there frees a
# call's unlinked nodes when it returns instead of after the next wait.
skip-w4-before-free             pt2f1    *no-use-after-free
skip-w4-before-free             p2f1x2h  *no-use-after-free
";

/// The rows of [`ROWS`].
pub fn kills() -> Vec<Kill> {
    parse(ROWS)
}

/// The rows of a matrix table, checked: a known mutant and model, known properties, exactly
/// one designated.
fn parse(table: &'static str) -> Vec<Kill> {
    table
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let mut words = line.split_whitespace();
            let (Some(mutant), Some(model)) = (words.next(), words.next()) else {
                panic!("kill matrix row {line:?}: no mutant and model");
            };
            let mutant = SpecMutant::from_name(mutant)
                .unwrap_or_else(|| panic!("kill matrix row {line:?}: unknown mutant"));
            assert!(
                super::model_config(model).is_some(),
                "kill matrix row {line:?}: unknown model"
            );
            let marked: Vec<&'static str> = words.collect();
            let breaks: Vec<&'static str> =
                marked.iter().map(|w| w.trim_start_matches('*')).collect();
            let designated: Vec<&'static str> =
                marked.iter().filter_map(|w| w.strip_prefix('*')).collect();
            assert_eq!(
                designated.len(),
                1,
                "kill matrix row {line:?}: one designated property"
            );
            assert!(
                breaks.iter().all(|p| SAFETY.contains(p) || *p == LIVENESS),
                "kill matrix row {line:?}: unknown property"
            );
            Kill {
                mutant,
                model,
                designated: designated[0],
                breaks,
            }
        })
        .collect()
}

/// Findings the matrix also pins down: mutants that survive a model on purpose.
pub fn survivals() -> Vec<(SpecMutant, &'static str, &'static str)> {
    vec![
        (
            SpecMutant::Chain(ChainMutant::ClearNextOnUnlink),
            "s2f1x2",
            "the unlinked node is the chain's tail there: its next is null already, so clearing \
             it changes nothing (s2f1x2h unlinks the head and kills it)",
        ),
        (
            SpecMutant::Engine(Mutant::SkipWaitBeforeFree),
            "s2f2x1",
            "s2f2x1 has only the hit path, which W3 keeps off an unlinked node with one session \
             (only returns-settled breaks); it has no call_time reader walking the slot, and \
             with one (t2f1) the same mutant is a use after free: W4 is needed with one session",
        ),
        (
            SpecMutant::Engine(Mutant::SkipWaitBeforeFree),
            "p2f2",
            "the pipelined s2f2x1: as there, W3 keeps the hit path off an unlinked node with one \
             session, and returns-settled is weak for slots and links under pipelining (pt2f1 \
             and p2f1x2h kill it)",
        ),
        (
            SpecMutant::BatchIdleSkipW2,
            "b2f2b",
            "the batch plan makes no idle test: the mutant changes nothing there",
        ),
        (
            SpecMutant::BatchElideUnlinking,
            "bc2f1",
            "no batch of bc2f1 unlinks a node (call_time on, pause): the idle test answers idle \
             anyway",
        ),
        (
            SpecMutant::Engine(Mutant::SkipWaitBeforeConsolidate),
            "b2f1x2",
            "session 0's local trace keeps f0 patched: no instruction is restored, and W3 \
             guards only a restored one (the chain mutants' s2f1x2h shows the same)",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn a_row_parses_to_its_kill() {
        let k = parse("\n# why\nskip-uninstall  s2f2x1  slot-set-behind-breakpoint *patched-iff-active-flag\n");
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].mutant.name(), "skip-uninstall");
        assert_eq!(k[0].model, "s2f2x1");
        assert_eq!(k[0].designated, "patched-iff-active-flag");
        assert_eq!(
            k[0].breaks,
            ["slot-set-behind-breakpoint", "patched-iff-active-flag"]
        );
    }

    #[test]
    fn bad_rows_are_refused() {
        for (row, why) in [
            ("no-such-mutant s2f2x1 *no-torn-half", "unknown mutant"),
            (
                "skip-uninstall no-such-model *no-torn-half",
                "unknown model",
            ),
            ("skip-uninstall s2f2x1 no-torn-half", "one designated"),
            (
                "skip-uninstall s2f2x1 *no-torn-half *returns-settled",
                "one designated",
            ),
            (
                "skip-uninstall s2f2x1 *no-such-property",
                "unknown property",
            ),
            ("skip-uninstall", "no mutant and model"),
        ] {
            let err = std::panic::catch_unwind(|| parse(row)).expect_err(row);
            let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(msg.contains(why), "{row}: {msg}");
        }
    }
}
