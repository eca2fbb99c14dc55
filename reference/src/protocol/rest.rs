//! The at-rest invariant (between operations) and stager-side queries over chains.

use crate::bp::{flags, GenericBp, SessionId};
use crate::code::{FuncId, OP_I_GENERIC_BREAKPOINT};
use crate::engine::{Engine, Permission};
use crate::export::Area;
use crate::progress::ThreadProgress;
use crate::sync::Ordering::Relaxed;

/// The nodes of `f`'s chain in `area`, head first, read by the stager: under the permission
/// (`_st`) nothing links, unlinks or frees a node, so the references live as long as it is held.
/// Each `next` is loaded only when the walk goes on (as the hand-written walks did).
pub(crate) fn chain<'p, P: ThreadProgress>(
    e: &'p Engine<P>,
    _st: &'p Permission<'_>,
    area: Area,
    f: FuncId,
) -> impl Iterator<Item = &'p GenericBp> + 'p {
    let head = &e.area(area).funcs[f].gen_bp;
    let mut prev: Option<&'p GenericBp> = None;
    let mut steps = 0;
    std::iter::from_fn(move || {
        let g = match prev {
            None => head.load(Relaxed),
            Some(n) => n.next.load(Relaxed),
        };
        if g.is_null() {
            return None;
        }
        steps += 1;
        assert!(steps <= crate::MAX_CHAIN, "chain too long");
        // SAFETY: a live chain node: the stager holds the permission (`_st`, borrowed for 'p),
        // so nothing unlinks or frees it meanwhile.
        let node = unsafe { &*g };
        prev = Some(node);
        Some(node)
    })
}

/// OR of half `ix`'s flags over the whole chain of `f` (`erts_sum_all_session_flags`).
pub(crate) fn sum_all_session_flags<P: ThreadProgress>(
    e: &Engine<P>,
    st: &Permission<'_>,
    area: Area,
    f: FuncId,
    ix: usize,
) -> u32 {
    chain(e, st, area, f).fold(0, |sum, node| sum | node.snapshot_half(ix).flags)
}

impl<P: ThreadProgress> Engine<P> {
    /// Pipeline: the last call's unlinked nodes wait on the free list for the next call's first
    /// wait (or `Engine::settle`), and none of them may be on a chain of `areas`; how many wait
    /// (0 under every other plan). The static area's and the modules' at-rest checks share it.
    pub(crate) fn pipeline_pending(
        &self,
        st: &Permission<'_>,
        areas: &[Area],
    ) -> Result<u64, String> {
        if !self.wait_plan.pipelines() {
            return Ok(0);
        }
        let linked: std::collections::HashSet<usize> = areas
            .iter()
            .flat_map(|&area| {
                (0..self.area(area).funcs.len()).flat_map(move |f| {
                    chain(self, st, area, f).map(|node| node as *const GenericBp as usize)
                })
            })
            .collect();
        if let Some(g) = st
            .free_list
            .iter()
            .find(|&&g| linked.contains(&(g as usize)))
        {
            return Err(format!("node {g:p} on the free list is still on a chain"));
        }
        Ok(st.free_list.len() as u64)
    }

    /// Check the at-rest invariant (docs/protocol.md I4): for every function, both halves of
    /// every node are equal, no `to_insert` is pending, no node is disabled, the instruction is
    /// patched iff some session has an active flag, the free list is empty, and every allocated
    /// node is on a chain (nothing leaked). Takes the permission, so it waits for any stager.
    /// On an engine with modules (`load.rs`) the modules' versions and export entries are
    /// checked too (`load.rs` `check_modules`), and no process may be in a version; an engine
    /// whose static area is empty (the load models') checks its modules only
    /// (`check_modules_at_rest`).
    pub fn check_at_rest(&self) -> Result<(), String> {
        self.check_at_rest_in(false)
    }

    /// [`Engine::check_at_rest`] while processes wait in versions of the engine's modules (the
    /// scenario runner's processes in a `receive`): everything else as at rest.
    pub fn check_at_rest_in_code(&self) -> Result<(), String> {
        self.check_at_rest_in(true)
    }

    fn check_at_rest_in(&self, in_code_ok: bool) -> Result<(), String> {
        let static_empty = self.code.funcs.is_empty() && self.exports.funcs.is_empty();
        if self.code_mgmt.is_some() && static_empty {
            return self.check_modules_at_rest(in_code_ok);
        }
        // The modules' breakpoints and objects, counted in the leak check below.
        let (mod_nodes, mod_timem) = match self.code_mgmt.as_deref() {
            Some(cm) => {
                let mt = crate::sync::lock(&cm.modules);
                let st = self.seize();
                self.check_modules(&mt, &st, in_code_ok)?
            }
            None => (0, Vec::new()),
        };
        let st = self.seize();
        let active = self.active_ix();
        let mut on_chains = mod_nodes;
        let mut timem_on_chains: std::collections::BTreeSet<usize> =
            mod_timem.into_iter().collect();
        for (area, f, h) in self
            .code
            .funcs
            .iter()
            .enumerate()
            .map(|(f, h)| (Area::Code, f, h))
            .chain(
                self.exports
                    .funcs
                    .iter()
                    .enumerate()
                    .map(|(f, h)| (Area::Export, f, h)),
            )
        {
            let mut g = h.gen_bp.load(Relaxed);
            let mut steps = 0;
            while !g.is_null() {
                steps += 1;
                if steps > crate::MAX_CHAIN {
                    return Err(format!("{}: chain longer than {}", h.mfa, crate::MAX_CHAIN));
                }
                // SAFETY: live chain node under the permission.
                let node = unsafe { &*g };
                if !node.live.is_live() {
                    return Err(format!(
                        "{}: freed GenericBp#{} still on the chain",
                        h.mfa, node.id
                    ));
                }
                let (a, s) = (node.snapshot_half(active), node.snapshot_half(active ^ 1));
                if !a.same_as(&s) {
                    return Err(format!(
                        "{}: GenericBp#{} halves differ at rest (active flags {:#x}, staging flags {:#x})",
                        h.mfa, node.id, a.flags, s.flags
                    ));
                }
                if a.flags == 0 {
                    return Err(format!(
                        "{}: disabled GenericBp#{} left on the chain",
                        h.mfa, node.id
                    ));
                }
                if (a.flags & flags::COUNT != 0) != a.count.is_some() {
                    return Err(format!(
                        "{}: GenericBp#{} COUNT flag and counter disagree",
                        h.mfa, node.id
                    ));
                }
                for (flag, obj, what) in [
                    (flags::TIME_TRACE, &a.time, "TIME_TRACE"),
                    (flags::MEM_TRACE, &a.memory, "MEM_TRACE"),
                ] {
                    if (a.flags & flag != 0) != obj.is_some() {
                        return Err(format!(
                            "{}: GenericBp#{} {what} flag and counter disagree",
                            h.mfa, node.id
                        ));
                    }
                    if let Some(t) = obj {
                        if !t.live.is_live() {
                            return Err(format!(
                                "{}: GenericBp#{} holds freed {t:?}",
                                h.mfa, node.id
                            ));
                        }
                        timem_on_chains.insert(std::sync::Arc::as_ptr(t) as usize);
                    }
                }
                if !node.to_insert.load(Relaxed).is_null() {
                    return Err(format!(
                        "{}: GenericBp#{} has a pending to_insert at rest",
                        h.mfa, node.id
                    ));
                }
                if !self.session_is_alive(node.session) {
                    return Err(format!(
                        "{}: GenericBp#{} belongs to session {}, which is not alive",
                        h.mfa, node.id, node.session
                    ));
                }
                if area == Area::Export && a.flags & !flags::GLOBAL_TRACE != 0 {
                    return Err(format!(
                        "{}: export GenericBp#{} has non-global flags {:#x}",
                        h.mfa, node.id, a.flags
                    ));
                }
                if area == Area::Code && a.flags & flags::GLOBAL_TRACE != 0 {
                    return Err(format!(
                        "{}: code GenericBp#{} has the global flag",
                        h.mfa, node.id
                    ));
                }
                if area == Area::Export {
                    // Local and global exclude each other within a session (both directions).
                    let f_code = self.exp_func[f];
                    let c = self.session_node_in(&st, Area::Code, f_code, node.session, false);
                    // SAFETY: live node under the permission.
                    if let Some(cn) = unsafe { c.as_ref() } {
                        if cn.snapshot_half(active).flags != 0 {
                            return Err(format!(
                                "{}: session {} has both global and local breakpoints",
                                h.mfa, node.session
                            ));
                        }
                    }
                }
                on_chains += 1;
                g = node.next.load(Relaxed);
            }
            let patched = h.instr.load(Relaxed) == OP_I_GENERIC_BREAKPOINT;
            let any_active = sum_all_session_flags(self, &st, area, f, active) != 0;
            if patched != any_active {
                return Err(format!(
                    "{}: instruction {} but {} session has an active flag",
                    h.mfa,
                    if patched { "patched" } else { "original" },
                    if any_active { "some" } else { "no" }
                ));
            }
            if !patched && h.instr.load(Relaxed) != h.original {
                return Err(format!(
                    "{}: instruction word is neither the breakpoint nor the original",
                    h.mfa
                ));
            }
        }
        let pending = self.pipeline_pending(&st, &[Area::Code, Area::Export])?;
        if pending == 0 && !st.free_list.is_empty() {
            return Err(format!(
                "free list holds {} nodes at rest",
                st.free_list.len()
            ));
        }
        if st.live_nodes != on_chains + pending {
            return Err(format!(
                "{} nodes allocated and not freed, but {} on chains (leak)",
                st.live_nodes, on_chains
            ));
        }
        if st.live_timem != timem_on_chains.len() as u64 {
            return Err(format!(
                "{} call_time/call_memory objects allocated and not freed, but {} on chains (leak)",
                st.live_timem,
                timem_on_chains.len()
            ));
        }
        Ok(())
    }

    /// Count conservation (checked builds only): per (session, function), every call a
    /// call_count counter of that node ever counted, folded the way the engine folds counters:
    /// the counters still on a half of a chain node (each once, though both halves share it),
    /// plus those whose last half reference went away (`free.rs` `release_count` parks them in
    /// checked builds), plus what each `true`/`restart` on a running counter discarded when it
    /// set it to zero (`stage.rs`). At rest (no scheduler running), each entry equals the hits
    /// that counted on that node's counter (`Hit::counted`); the models compare them.
    pub fn count_ledger(&self) -> std::collections::BTreeMap<(SessionId, FuncId), u64> {
        assert!(
            crate::sync::CHECKED,
            "count conservation needs a checked build (parked counters)"
        );
        // The modules' versions and export entries too (module table first, then the
        // permission, as everywhere).
        let mt = self
            .code_mgmt
            .as_deref()
            .map(|cm| crate::sync::lock(&cm.modules));
        let mut areas = vec![Area::Code, Area::Export];
        if let Some(mt) = &mt {
            areas.extend(self.module_areas(mt));
        }
        let st = self.seize();
        assert!(
            st.dead_counts.len() < crate::free::QUARANTINE,
            "count conservation: released counters outgrew the quarantine"
        );
        let mut seen: Vec<*const crate::bp::BpCount> = Vec::new();
        let mut ledger = st.count_resets.clone();
        let mut add = |c: &std::sync::Arc<crate::bp::BpCount>| {
            let p = std::sync::Arc::as_ptr(c);
            if !seen.contains(&p) {
                seen.push(p);
                *ledger.entry(c.owner).or_insert(0) += c.acount.load(Relaxed);
            }
        };
        for area in areas {
            for f in 0..self.area(area).funcs.len() {
                for node in chain(self, &st, area, f) {
                    for ix in 0..crate::bp::ERTS_NUM_BP_IX {
                        if let Some(c) = &node.snapshot_half(ix).count {
                            add(c);
                        }
                    }
                }
            }
        }
        for c in &st.dead_counts {
            add(c);
        }
        ledger
    }

    /// The active flags of `session`'s node on `f` (0 if none). Takes the permission.
    pub fn active_flags(&self, session: SessionId, f: FuncId) -> u32 {
        self.active_flags_in(crate::export::Area::Code, session, f)
    }

    /// The active flags of `session`'s node on entry `idx` of `area` (a function's code or its
    /// export entry; 0 if none). Takes the permission.
    pub fn active_flags_in(
        &self,
        area: crate::export::Area,
        session: SessionId,
        idx: usize,
    ) -> u32 {
        let st = self.seize();
        let g = self.session_node_in(&st, area, idx, session, false);
        if g.is_null() {
            0
        } else {
            // SAFETY: live node under the permission.
            unsafe { &*g }.snapshot_half(self.active_ix()).flags
        }
    }

    /// Is `f`'s first instruction the breakpoint instruction?
    pub fn is_patched(&self, f: FuncId) -> bool {
        self.static_entry("is_patched");
        self.code.funcs[f].instr.load(Relaxed) == OP_I_GENERIC_BREAKPOINT
    }
}
