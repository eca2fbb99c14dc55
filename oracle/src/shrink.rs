//! Shrinking a breakpoint scenario on which two implementations disagree: candidates that are
//! one cut smaller (chunks of ops, single ops, body steps, functions, modules, processes, process
//! flags, `times`, arguments), kept while the disagreement stays. Used by the differential run
//! against ERTS ([`crate::erlang::minimize`]) and by the external-engine driver
//! ([`crate::external`]).

use crate::scenario::{load, Op, Scenario};

/// The scenarios one cut smaller than `cur`, big cuts first. Not all of them load (a cut may
/// remove a function still called); callers skip those. `expect` is dropped where op indices
/// move.
pub fn candidates(cur: &Scenario) -> Vec<Scenario> {
    let mut cands = Vec::new();
    // One candidate: `cur` with `edit` applied.
    let mut cut = |edit: &dyn Fn(&mut Scenario)| {
        let mut c = cur.clone();
        edit(&mut c);
        cands.push(c);
    };
    let mut k = cur.ops.len() / 2;
    while k >= 2 {
        for start in (0..cur.ops.len()).step_by(k) {
            cut(&|c| {
                c.ops.drain(start..(start + k).min(c.ops.len()));
                c.expect = None;
            });
        }
        k /= 2;
    }
    for i in 0..cur.ops.len() {
        cut(&|c| {
            c.ops.remove(i);
            c.expect = None;
        });
    }
    for mi in 0..cur.modules.len() {
        if cur.modules.len() > 1 {
            cut(&|c| drop(c.modules.remove(mi)));
        }
        for fi in 0..cur.modules[mi].functions.len() {
            if cur.modules[mi].functions.len() > 1 {
                cut(&|c| drop(c.modules[mi].functions.remove(fi)));
            }
            let f = &cur.modules[mi].functions[fi];
            if f.base.is_some() {
                cut(&|c| c.modules[mi].functions[fi].base = None);
            }
            for si in 0..f.body.len() {
                cut(&|c| drop(c.modules[mi].functions[fi].body.remove(si)));
                if f.body[si].times.is_some() {
                    cut(&|c| c.modules[mi].functions[fi].body[si].times = None);
                }
            }
        }
    }
    for pi in 0..cur.processes.len() {
        if cur.processes.len() > 1 {
            cut(&|c| drop(c.processes.remove(pi)));
        }
        if !cur.processes[pi].trace.is_empty() {
            cut(&|c| c.processes[pi].trace.clear());
        }
    }
    for (oi, op) in cur.ops.iter().enumerate() {
        if let Op::Call(call) = op {
            if call.times.is_some() {
                cut(&|c| {
                    if let Op::Call(x) = &mut c.ops[oi] {
                        x.times = None;
                    }
                });
            }
            if call.args.iter().any(|a| *a != 0) {
                cut(&|c| {
                    if let Op::Call(x) = &mut c.ops[oi] {
                        x.args.iter_mut().for_each(|a| *a = 0.into());
                    }
                });
            }
        }
    }
    cands
}

/// What a shrink did: the smallest failing scenario found and the effort.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub scenario: Scenario,
    /// Candidates tried (each one predicate call if it loaded).
    pub tried: usize,
    /// Cuts kept.
    pub steps: usize,
}

/// Greedy shrink: take the first candidate that loads and on which `fails` holds, repeat until
/// no candidate fails or `max_tries` candidates were tried. `fails(sc)` must hold on `sc`.
pub fn shrink(sc: &Scenario, max_tries: usize, mut fails: impl FnMut(&Scenario) -> bool) -> Shrunk {
    let mut cur = sc.clone();
    cur.expect = None;
    let (mut tried, mut steps) = (0, 0);
    'rounds: while tried < max_tries {
        for c in candidates(&cur) {
            let Ok(text) = serde_json::to_string(&c) else {
                continue;
            };
            if load("candidate", &text).is_err() {
                continue;
            }
            tried += 1;
            if fails(&c) {
                cur = c;
                steps += 1;
                continue 'rounds;
            }
            if tried >= max_tries {
                break 'rounds;
            }
        }
        break;
    }
    Shrunk {
        scenario: cur,
        tried,
        steps,
    }
}

/// A size for reports: ops plus body steps plus functions.
pub fn size(sc: &Scenario) -> usize {
    sc.ops.len()
        + sc.modules
            .iter()
            .flat_map(|m| &m.functions)
            .map(|f| 1 + f.body.len() + f.base.as_ref().map_or(0, Vec::len))
            .sum::<usize>()
}

/// Greedy shrink of a seq_trace scenario: drop chunks of steps, then single steps, while the
/// result loads and `fails` holds; at most `max_tries` candidates. `fails(sc)` must hold on `sc`.
pub fn shrink_seq(
    sc: &crate::seq::SeqScenario,
    max_tries: usize,
    mut fails: impl FnMut(&crate::seq::SeqScenario) -> bool,
) -> (crate::seq::SeqScenario, usize) {
    let mut cur = sc.clone();
    cur.expect = None;
    let mut tried = 0;
    'rounds: while tried < max_tries {
        let n = cur.seq_trace.len();
        let mut cuts: Vec<(usize, usize)> = Vec::new();
        let mut k = n / 2;
        while k >= 2 {
            cuts.extend((0..n).step_by(k).map(|s| (s, (s + k).min(n))));
            k /= 2;
        }
        cuts.extend((0..n).map(|i| (i, i + 1)));
        for (a, b) in cuts {
            let mut c = cur.clone();
            c.seq_trace.drain(a..b);
            let Ok(text) = serde_json::to_string(&c) else {
                continue;
            };
            if crate::seq::load("candidate", &text).is_err() {
                continue;
            }
            tried += 1;
            if fails(&c) {
                cur = c;
                continue 'rounds;
            }
            if tried >= max_tries {
                break 'rounds;
            }
        }
        break;
    }
    (cur, tried)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{sample, GenConfig};
    use crate::observe::What;

    /// "Some call_count reads 2 or more" on the sequential oracle.
    fn counts_two(sc: &Scenario) -> bool {
        let Ok(l) = load("t", &serde_json::to_string(sc).unwrap()) else {
            return false;
        };
        let mut o = crate::target::SpecOracle::boxed(l.funcs.clone());
        crate::run::run(&l, o.as_mut()).is_ok_and(|obs| {
            obs.iter().any(|x| {
                matches!(&x.what, What::TraceInfo(i) if i.value.as_i64().is_some_and(|v| v >= 2))
            })
        })
    }

    /// The shrinker keeps the property and cuts a generated scenario down to a pattern, a call
    /// and a trace_info (seed 5, call_count only: the first of 200 scenarios with the property).
    #[test]
    fn shrinks_to_the_ops_the_property_needs() {
        let cfg = GenConfig {
            call_count_only: true,
            call_time: false,
            frames: false,
            global: false,
            ..GenConfig::default()
        };
        let sc = sample(cfg, 200, 5)
            .into_iter()
            .find(counts_two)
            .expect("some scenario counts to 2");
        let s = shrink(&sc, 2000, counts_two);
        assert!(counts_two(&s.scenario));
        assert!(
            s.scenario.ops.len() <= 3 && size(&s.scenario) < size(&sc),
            "{} ops left of {}: {}",
            s.scenario.ops.len(),
            sc.ops.len(),
            serde_json::to_string_pretty(&s.scenario).unwrap()
        );
    }
}
