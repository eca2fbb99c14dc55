//! A breadth-first checker of our own, for `bpspec rate`'s side-by-side rows only (docs/perf.md,
//! "A checker of our own"): the exploration of stateright's BFS (the same initial states,
//! actions and successors, so the same state counts) without its per-state costs that
//! docs/perf.md names. Each unique state keeps its parent's fingerprint and the index of the
//! action that reached it instead of the whole action path (a counterexample is rebuilt by
//! walking the parents back and replaying), and the properties are a vector of flags instead
//! of a map looked up by name: a property with its discovery is not evaluated again. One
//! thread; no `eventually` properties, no boundary, no symmetry. It does not replace
//! stateright: `bpspec check` runs stateright.

use nohash_hasher::BuildNoHashHasher;
use stateright::{Expectation, Model};
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};

/// What a run saw: states (every generated successor, as stateright's `state_count`), unique
/// states, maximum depth, and the properties with a discovery, each with its path of actions.
pub struct Seen<A> {
    pub states: usize,
    pub unique: usize,
    pub depth: usize,
    pub discoveries: Vec<(&'static str, Vec<A>)>,
}

/// A state's fingerprint (ahash with fixed keys, as stateright's own).
fn fingerprint<S: Hash>(s: &S) -> u64 {
    let mut h = ahash::AHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// Check `m` exhaustively, breadth first, stopping after `max_states` unique states.
pub fn check<M>(m: &M, max_states: usize) -> Result<Seen<M::Action>, String>
where
    M: Model,
    M::State: Hash,
    M::Action: Clone,
{
    let props = m.properties();
    if props
        .iter()
        .any(|p| p.expectation == Expectation::Eventually)
    {
        return Err("the checker of our own takes no eventually property".into());
    }
    // Per unique state: (parent's fingerprint, index of the action from it); roots have none.
    let mut parent: HashMap<u64, Option<(u64, u32)>, BuildNoHashHasher<u64>> = HashMap::default();
    let mut pending: VecDeque<(M::State, u64, usize)> = VecDeque::new();
    let inits: Vec<M::State> = m
        .init_states()
        .into_iter()
        .filter(|s| m.within_boundary(s))
        .collect();
    let mut states = inits.len();
    for s in inits {
        let fp = fingerprint(&s);
        if parent.insert(fp, None).is_none() {
            pending.push_back((s, fp, 1));
        }
    }
    let mut found: Vec<Option<u64>> = vec![None; props.len()];
    let mut depth = 0;
    let mut actions = Vec::new();
    while let Some((s, fp, d)) = pending.pop_front() {
        depth = depth.max(d);
        for (i, p) in props.iter().enumerate() {
            if found[i].is_some() {
                continue;
            }
            let holds = (p.condition)(m, &s);
            let discovered = match p.expectation {
                Expectation::Always => !holds,
                _ => holds,
            };
            if discovered {
                found[i] = Some(fp);
            }
        }
        m.actions(&s, &mut actions);
        for (i, a) in actions.drain(..).enumerate() {
            let Some(next) = m.next_state(&s, a) else {
                continue;
            };
            if !m.within_boundary(&next) {
                continue;
            }
            states += 1;
            let nfp = fingerprint(&next);
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(nfp) {
                e.insert(Some((fp, i as u32)));
                pending.push_back((next, nfp, d + 1));
            }
        }
        if parent.len() > max_states {
            return Err(format!("more than {max_states} unique states"));
        }
    }
    let mut discoveries = Vec::new();
    for (p, fp) in props.iter().zip(found) {
        if let Some(fp) = fp {
            discoveries.push((p.name, path_to(m, &parent, fp)?));
        }
    }
    Ok(Seen {
        states,
        unique: parent.len(),
        depth,
        discoveries,
    })
}

/// The actions from an initial state to the state of fingerprint `fp`: the parents walked
/// back, then replayed forward to turn action indices into actions.
fn path_to<M>(
    m: &M,
    parent: &HashMap<u64, Option<(u64, u32)>, BuildNoHashHasher<u64>>,
    mut fp: u64,
) -> Result<Vec<M::Action>, String>
where
    M: Model,
    M::State: Hash,
    M::Action: Clone,
{
    let mut idx = Vec::new();
    // Each step goes one level up; there are at most as many levels as states.
    for _ in 0..=parent.len() {
        match parent.get(&fp) {
            Some(Some((p, i))) => {
                idx.push(*i);
                fp = *p;
            }
            Some(None) => break,
            None => return Err("a parent is missing".into()),
        }
    }
    idx.reverse();
    let mut s = m
        .init_states()
        .into_iter()
        .find(|s| fingerprint(s) == fp)
        .ok_or("no initial state has the root's fingerprint")?;
    let mut path = Vec::new();
    let mut actions = Vec::new();
    for i in idx {
        actions.clear();
        m.actions(&s, &mut actions);
        let a = actions
            .get(i as usize)
            .cloned()
            .ok_or("an action index out of range")?;
        s = m
            .next_state(&s, a.clone())
            .ok_or("an action without a successor")?;
        path.push(a);
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::check;
    use bpspec_spec::model::{model_config, BpModel, SpecMutant};
    use stateright::{Checker, Expectation, Model};

    /// On a mutant, the checker of our own reaches the same states as stateright's BFS and
    /// discovers the same properties, and each discovery's path replays to a state that shows
    /// it.
    #[test]
    fn finds_what_stateright_finds() {
        let mutant = SpecMutant::from_name("skip-w3-before-consolidate");
        let m = BpModel::new(model_config("s2f2x1").unwrap().with_mutant(mutant));
        let own = check(&m, 10_000_000).unwrap();
        let sr = m.clone().checker().spawn_bfs().join();
        assert_eq!(
            (own.states, own.unique),
            (sr.state_count(), sr.unique_state_count())
        );
        let mut a: Vec<&str> = own.discoveries.iter().map(|d| d.0).collect();
        let mut b: Vec<&str> = sr.discoveries().keys().copied().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        assert!(a.contains(&"slot-set-behind-breakpoint"), "{a:?}");
        let props = m.properties();
        for (name, path) in &own.discoveries {
            let mut s = m.init_states().remove(0);
            for &x in path {
                s = m.next_state(&s, x).unwrap();
            }
            let p = props.iter().find(|p| p.name == *name).unwrap();
            let holds = (p.condition)(&m, &s);
            assert_eq!(holds, p.expectation != Expectation::Always, "{name}");
        }
    }
}
