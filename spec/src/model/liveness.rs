//! Liveness: "with every scheduler eventually passing progress points or sleeping, the stager
//! finishes its script".
//!
//! stateright's `eventually` cannot check this: it treats a path that ends in a cycle as not
//! terminating and reports nothing (a false negative), and it has no fairness. Our schedulers
//! loop forever, so every interesting path ends in a cycle. Instead this module builds the whole
//! reachable graph and looks for a *fair lasso*: a strongly connected component C, reachable from
//! the initial state, with the stager not finished, in which
//!
//! 1. every scheduler passes a progress point or goes to sleep on an edge inside C, or is asleep
//!    in a state of C (a scheduler asleep in C with no wake-up edge in C is asleep throughout,
//!    and one that wakes inside C must also fall asleep inside C to return);
//! 2. the stager is disabled in some state of C (weak fairness for the stager: a cycle on which
//!    it is always enabled is not fair, because stager steps never lie on a cycle; its program
//!    counter only moves forward).
//!
//! A cycle through every edge of C is then a fair infinite run on which the stager never
//! finishes, i.e. a counterexample. No such component means the property holds under the
//! fairness assumption. The check is exhaustive (no symmetry reduction) and so limited to the
//! small models.

use super::step::Action;
use super::{BpModel, State};
use stateright::Model;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// What the liveness check found.
#[derive(Debug)]
pub struct LivenessReport {
    pub states: usize,
    pub edges: usize,
    /// A fair lasso, if one exists: the steps to reach the cycle, and a description of it.
    pub counterexample: Option<(Vec<Action>, String)>,
}

fn fp(s: &State) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// Per state: stager finished, stager enabled, mask of asleep schedulers.
struct Info {
    done: bool,
    stager_enabled: bool,
    asleep: u8,
}

/// Build the reachable graph (up to `max_states`) and search for a fair lasso.
pub fn check(m: &BpModel, max_states: usize) -> Result<LivenessReport, String> {
    let cfg = &m.cfg;
    let init = m.init_states().remove(0);
    let mut index: HashMap<u64, u32> = HashMap::new();
    let mut parent: Vec<(u32, Option<Action>)> = vec![(0, None)];
    let mut info = Vec::new();
    let mut succ: Vec<Vec<(u32, u8)>> = Vec::new(); // (target, scheduler bit if progress/sleep)
    let mut queue = std::collections::VecDeque::new();
    index.insert(fp(&init), 0);
    queue.push_back(init);
    let mut actions = Vec::new();
    let mut edges = 0usize;
    let mut id = 0u32;
    while let Some(s) = queue.pop_front() {
        info.push(Info {
            done: s.done(cfg),
            stager_enabled: cfg.stager_enabled(&s),
            asleep: s
                .scheds
                .iter()
                .enumerate()
                .filter(|(_, x)| x.mode == super::state::Mode::Asleep)
                .fold(0, |a, (i, _)| a | 1 << i),
        });
        let mut out = Vec::new();
        actions.clear();
        m.actions(&s, &mut actions);
        for &a in &actions {
            let n = m.next_state(&s, a).expect("every action has a successor");
            let k = fp(&n);
            let t = match index.get(&k) {
                Some(&t) => t,
                None => {
                    let t = index.len() as u32;
                    if index.len() >= max_states {
                        return Err(format!(
                            "liveness: more than {max_states} states; use a smaller model"
                        ));
                    }
                    index.insert(k, t);
                    parent.push((id, Some(a)));
                    queue.push_back(n);
                    t
                }
            };
            let label = match a {
                Action::Progress(x) | Action::Sleep(x) => 1u8 << x,
                _ => 0,
            };
            out.push((t, label));
            edges += 1;
        }
        succ.push(out);
        id += 1;
    }
    let comp = tarjan(&succ);
    let ncomp = comp.iter().copied().max().map_or(0, |c| c as usize + 1);
    // Per component: has an internal edge, progress/sleep mask, asleep mask, stager disabled.
    let mut internal = vec![false; ncomp];
    let mut fair_mask = vec![0u8; ncomp];
    let mut disabled = vec![false; ncomp];
    let mut not_done = vec![false; ncomp];
    for (v, out) in succ.iter().enumerate() {
        let c = comp[v] as usize;
        fair_mask[c] |= info[v].asleep;
        disabled[c] |= !info[v].stager_enabled;
        not_done[c] |= !info[v].done;
        for &(t, label) in out {
            if comp[t as usize] as usize == c {
                internal[c] = true;
                fair_mask[c] |= label;
            }
        }
    }
    let all = ((1u16 << cfg.schedulers) - 1) as u8;
    let bad =
        (0..ncomp).find(|&c| internal[c] && not_done[c] && disabled[c] && fair_mask[c] == all);
    let counterexample = bad.map(|c| {
        let v = (0..succ.len()).find(|&v| comp[v] as usize == c).unwrap();
        let mut path = Vec::new();
        let mut u = v as u32;
        while let (p, Some(a)) = parent[u as usize] {
            path.push(a);
            u = p;
        }
        path.reverse();
        let members: Vec<usize> = (0..succ.len()).filter(|&w| comp[w] as usize == c).collect();
        let always_asleep = members.iter().fold(0xFF, |m, &w| m & info[w].asleep);
        let who: Vec<String> = (0..cfg.schedulers)
            .map(|i| {
                if always_asleep & (1 << i) != 0 {
                    format!("scheduler {i} stays asleep")
                } else {
                    format!("scheduler {i} keeps passing progress points")
                }
            })
            .collect();
        (
            path,
            format!(
                "from here a fair run cycles forever ({}) while the stager stays blocked in its \
                 wait",
                who.join(", ")
            ),
        )
    });
    Ok(LivenessReport {
        states: succ.len(),
        edges,
        counterexample,
    })
}

/// Iterative Tarjan: component number per vertex.
fn tarjan(succ: &[Vec<(u32, u8)>]) -> Vec<u32> {
    const UNSEEN: u32 = u32::MAX;
    let n = succ.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![UNSEEN; n];
    let mut stack = Vec::new();
    let mut next_index = 0u32;
    let mut next_comp = 0u32;
    let mut call: Vec<(u32, usize)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNSEEN {
            continue;
        }
        call.push((root, 0));
        while let Some(&(v, i)) = call.last() {
            let vu = v as usize;
            if i == 0 && index[vu] == UNSEEN {
                index[vu] = next_index;
                low[vu] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[vu] = true;
            }
            if i < succ[vu].len() {
                let w = succ[vu][i].0;
                call.last_mut().expect("non-empty").1 += 1;
                let wu = w as usize;
                if index[wu] == UNSEEN {
                    call.push((w, 0));
                } else if on_stack[wu] {
                    low[vu] = low[vu].min(index[wu]);
                }
                continue;
            }
            call.pop();
            if let Some(&(p, _)) = call.last() {
                low[p as usize] = low[p as usize].min(low[vu]);
            }
            if low[vu] == index[vu] {
                loop {
                    let w = stack.pop().expect("tarjan stack");
                    on_stack[w as usize] = false;
                    comp[w as usize] = next_comp;
                    if w == v {
                        break;
                    }
                }
                next_comp += 1;
            }
        }
    }
    comp
}
