//! The transition relation: which steps are enabled in a state, and what each does. Every step
//! can narrate itself in protocol words (`log`), which is what counterexamples print and what the
//! refinement checker names when it rejects an engine step.

use super::config::{bits, ChainMutant, Config, PatternKind, StagerOp};
use super::inline::Slots;
use super::state::*;
use bpspec_reference::Mutant;

/// One step of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// The stager's next step (deterministic given the state).
    Stager,
    /// Scheduler `s` passes a progress point (between processes): full barrier + report.
    Progress(u8),
    Sleep(u8),
    Wake(u8),
    /// Scheduler `s` calls function `f`: H1, read the instruction word (the stale value if
    /// `stale`).
    Call(u8, u8, bool),
    /// Scheduler `s` makes the next read of its hit or charge (the stale value if `stale`).
    Read(u8, bool),
    /// Scheduler `s` begins a call_time charge of the counted function (`collect.rs`).
    Charge(u8),
}

/// A narration sink: `None` in the checker's hot path.
pub type Log<'a> = Option<&'a mut Vec<String>>;

fn say(log: &mut Log<'_>, f: impl FnOnce() -> String) {
    if let Some(l) = log.as_deref_mut() {
        l.push(f());
    }
}

pub fn bp_name(g: u8) -> String {
    if g == NIL {
        "null".into()
    } else {
        format!("GenericBp#{}", g as u32 + 1)
    }
}

pub fn flags_name(fl: u8) -> String {
    let v = bits::names(fl, bits::HALF);
    if v.is_empty() {
        "none".into()
    } else {
        v.join("+")
    }
}

impl Config {
    pub(crate) fn all_scheds(&self) -> u8 {
        ((1u16 << self.schedulers) - 1) as u8
    }

    /// Which location the hit's next read loads, if it is a relaxed location.
    fn hit_loc<K: Caps>(&self, s: &StateOf<K>, h: &Hit) -> Option<Loc> {
        let _ = s;
        match h.step {
            HitStep::Slot => Some(Loc::Slot(h.func)),
            HitStep::Ix => Some(Loc::Ix),
            HitStep::Next => Some(Loc::Next(h.at)),
            HitStep::Tracer => Some(Loc::Tracer),
            HitStep::Half | HitStep::Orig | HitStep::Send => None,
        }
    }

    pub(crate) fn stale_choice<K: Caps>(&self, s: &StateOf<K>, sched: usize, l: Loc) -> bool {
        let i = l.index(self.functions);
        let v = s.scheds[sched].stale[i];
        v != FRESH && v != s.cur[i]
    }

    /// Can the stager take a step?
    pub fn stager_enabled<K: Caps>(&self, s: &StateOf<K>) -> bool {
        if s.done(self) {
            return false;
        }
        if !s.stager.waiting && !self.collect_enabled(s) {
            return false;
        }
        !s.stager.waiting || s.scheds.iter().all(|x| x.counted)
    }

    /// The enabled steps, in a fixed order.
    pub fn enabled<K: Caps>(&self, s: &StateOf<K>, out: &mut Vec<Action>) {
        if s.violation.is_some() {
            return;
        }
        if self.stager_enabled(s) {
            out.push(Action::Stager);
        }
        for (i, x) in s.scheds.iter().enumerate() {
            let id = i as u8;
            match x.mode {
                Mode::Asleep => out.push(Action::Wake(id)),
                Mode::Idle => {
                    out.push(Action::Progress(id));
                    out.push(Action::Sleep(id));
                    if self.charge_may_start(s, i) {
                        out.push(Action::Charge(id));
                    }
                    for f in 0..self.functions * self.calls as u8 {
                        out.push(Action::Call(id, f, false));
                        if self.stale_choice(s, i, Loc::Instr(f)) {
                            out.push(Action::Call(id, f, true));
                        }
                    }
                }
                Mode::Charge(c) => self.charge_enabled(s, i, c, out),
                Mode::Hit(h) => {
                    out.push(Action::Read(id, false));
                    if h.step == HitStep::Send && self.tracer() == Some(true) {
                        // The meta tracer answers `remove`.
                        out.push(Action::Read(id, true));
                    }
                    if let Some(l) = self.hit_loc(s, &h) {
                        if self.stale_choice(s, i, l) {
                            out.push(Action::Read(id, true));
                        }
                    }
                }
            }
        }
    }

    // ----- memory -----

    /// A relaxed store by the stager.
    pub(crate) fn write<K: Caps>(&self, s: &mut StateOf<K>, l: Loc, v: u8) {
        let i = l.index(self.functions);
        let old = s.cur[i];
        if old == v {
            return;
        }
        for x in s.scheds.iter_mut() {
            // A scheduler keeps at most one older value per location; if it already has one, it
            // keeps the oldest (see the header of model/mod.rs for why that loses nothing in
            // the baseline).
            if x.stale[i] == FRESH {
                x.stale[i] = old;
            }
        }
        if s.dirty & (1 << i) == 0 {
            s.published[i] = old;
        }
        s.cur[i] = v;
        s.dirty |= 1 << i;
    }

    /// A relaxed load by scheduler `sched`.
    pub(crate) fn read<K: Caps>(
        &self,
        s: &mut StateOf<K>,
        sched: usize,
        l: Loc,
        stale: bool,
    ) -> u8 {
        let i = l.index(self.functions);
        let x = &mut s.scheds[sched];
        if stale && x.stale[i] != FRESH {
            x.stale[i]
        } else {
            x.stale[i] = FRESH; // coherence: after reading the newest value, never an older one
            s.cur[i]
        }
    }

    /// The stager's write of the staging half of node `g` (its flags now `v`), logged.
    fn write_staged<K: Caps>(
        &self,
        s: &mut StateOf<K>,
        g: u8,
        staging: u8,
        v: u8,
        log: &mut Log<'_>,
    ) {
        self.write_node(s, g, staging as usize);
        say(log, || {
            format!(
                "stager: stage: {} half {staging} := {}",
                bp_name(g),
                flags_name(v)
            )
        });
    }

    /// A plain write of half `h` (or, `h == 2`, the allocation) of node `g` by the stager.
    pub(crate) fn write_node<K: Caps>(&self, s: &mut StateOf<K>, g: u8, h: usize) {
        let all = self.all_scheds();
        let n = &mut s.nodes[g as usize];
        n.unseen[h] = all;
        n.published[h] = false;
        n.released[h] = false;
    }

    /// Scheduler `sched`'s call_time reader loaded the pointer `g` from a slot or a link with an
    /// acquire load: if that value came from the release store of a fresh node (the baseline),
    /// it synchronizes with it and sees what the stager wrote to the node before that store.
    /// The hit path's loads stay relaxed (the engine's), so W0 still publishes a fresh node to
    /// hits.
    pub(crate) fn acquire<K: Caps>(&self, s: &mut StateOf<K>, sched: usize, g: u8) {
        if g == NIL {
            return;
        }
        let n = &mut s.nodes[g as usize];
        for h in 0..3 {
            if n.released[h] {
                n.unseen[h] &= !(1 << sched);
            }
        }
    }

    /// Free every call_time counter object no node's half refers to any more (the objects are
    /// reference counted: the last half to drop one frees it, at stage, consolidate or free).
    fn sweep_objs<K: Caps>(&self, s: &mut StateOf<K>, log: &mut Log<'_>) {
        for o in 0..s.objs.len() {
            if s.objs[o].temp || s.objs[o].freed {
                continue;
            }
            let o8 = o as u8;
            let used = s
                .nodes
                .iter()
                .any(|n| !n.freed && (n.tm[0] == o8 || n.tm[1] == o8));
            if !used {
                s.objs[o].freed = true;
                say(log, || {
                    format!("stager: free {}", super::collect::obj_name(s, o8))
                });
            }
        }
    }

    /// A full barrier of scheduler `sched` (progress point, wake-up): it now sees everything
    /// written before the latest wait began.
    fn barrier<K: Caps>(&self, s: &mut StateOf<K>, sched: usize) {
        let dirty = s.dirty;
        for (i, v) in s.scheds[sched].stale.iter_mut().enumerate() {
            if dirty & (1 << i) == 0 {
                *v = FRESH;
            } else if *v != FRESH {
                // Written since the wait began: it may still read the value from before that
                // write, but nothing older.
                *v = s.published[i];
            }
        }
        for n in s.nodes.iter_mut() {
            for k in 0..3 {
                if n.published[k] {
                    n.unseen[k] &= !(1 << sched);
                }
            }
        }
        for o in s.objs.iter_mut() {
            if o.read_published {
                o.read_unseen &= !(1 << sched);
            }
        }
    }

    // ----- the stager -----

    /// The `trace_pattern` entries of the current op: the op itself, or a batch's entries.
    fn entries<K: Caps>(&self, s: &StateOf<K>) -> &[StagerOp] {
        let i = s.stager.op as usize;
        match self.script[i] {
            StagerOp::TracePattern { .. } => &self.script[i..=i],
            StagerOp::Batch { len, .. } => &self.script[i + 1..=i + len as usize],
            StagerOp::Collect { .. } | StagerOp::SetTracer { .. } => {
                unreachable!("trace_pattern phases only")
            }
        }
    }

    /// The current op's matched functions (a batch: the union over its entries, docs/fewer-waits.md BA5) and
    /// whether it only removes (every entry `false`: no W0, no install, BA6 there).
    fn op<K: Caps>(&self, s: &StateOf<K>) -> (u8, bool) {
        self.entries(s)
            .iter()
            .fold((0, true), |(u, rm), e| match *e {
                StagerOp::TracePattern { funcs, kind, .. } => {
                    (u | funcs, rm && kind == PatternKind::False)
                }
                _ => unreachable!("validated: a batch holds trace_pattern entries"),
            })
    }

    /// Is the current op a batch under `batch-elide-idle`?
    fn elides_idle<K: Caps>(&self, s: &StateOf<K>) -> bool {
        matches!(
            self.script[s.stager.op as usize],
            StagerOp::Batch {
                elide_idle: true,
                ..
            }
        )
    }

    /// The engine's `will_unlink` (waitplan.rs): after the commit, some node on a chain of a
    /// matched function has its active flags all off, so consolidate will unlink it.
    fn will_unlink<K: Caps>(&self, s: &StateOf<K>, funcs: u8) -> bool {
        let active = s.active_ix(self) as usize;
        (0..self.functions)
            .filter(|f| funcs & (1 << f) != 0)
            .any(|f| {
                s.chain(self, f)
                    .iter()
                    .any(|&g| s.nodes[g as usize].half[active] == 0)
            })
    }

    /// The narration of the current op: a batch names its entries.
    fn op_text<K: Caps>(&self, s: &StateOf<K>) -> String {
        let i = s.stager.op as usize;
        match self.script[i] {
            StagerOp::Batch { .. } => {
                let v: Vec<String> = self.entries(s).iter().map(|e| e.to_string()).collect();
                format!("{} [{}]", self.script[i], v.join("; "))
            }
            op => op.to_string(),
        }
    }

    /// The phase after `p` for the current op, skipping waits removed by a mutant.
    fn next_phase<K: Caps>(&self, s: &StateOf<K>, p: Phase) -> Option<Phase> {
        if let StagerOp::Collect { .. } = self.script[s.stager.op as usize] {
            return self.collect_next_phase(s, p);
        }
        if let StagerOp::SetTracer { meta, .. } = self.script[s.stager.op as usize] {
            // Swap, wait, free; the tracer mutants (and skip-w4-before-free) drop the wait.
            let skip = self.skips(Phase::W4) || self.frees_tracer_without_wait(meta);
            return match p {
                Phase::Stage if !skip => Some(Phase::W4),
                Phase::Stage | Phase::W4 => Some(Phase::Free),
                _ => None,
            };
        }
        let (funcs, removal) = self.op(s);
        const SEQ: [Phase; 11] = [
            Phase::Stage,
            Phase::W0,
            Phase::Install,
            Phase::W1,
            Phase::Commit,
            Phase::W2,
            Phase::Uninstall,
            Phase::W3,
            Phase::Consolidate,
            Phase::W4,
            Phase::Free,
        ];
        // A removal (`false`) installs nothing: it has neither W0 nor Install.
        let pos = SEQ.iter().position(|&q| q == p).expect("phase in sequence");
        assert!(
            !(removal && matches!(p, Phase::W0 | Phase::Install)),
            "removal in phase {p:?}"
        );
        // A phase is left out if a mutant removes it or the op has none.
        // Under `batch-elide-idle` (Proof EL) W3 is left out when, after uninstall, consolidate
        // will unlink nothing, and W4 when consolidate unlinked nothing (the free list is
        // empty). The batch mutants: W2 too when idle (decided right after the commit, which is
        // where the stager is when W2 comes next), or W3 and W4 whatever the test says.
        let elide = self.elides_idle(s);
        let always = self.mutant == Some(super::SpecMutant::BatchElideUnlinking);
        let elided = |q: Phase| {
            elide
                && match q {
                    Phase::W2 => {
                        self.mutant == Some(super::SpecMutant::BatchIdleSkipW2)
                            && !self.will_unlink(s, funcs)
                    }
                    Phase::W3 => always || !self.will_unlink(s, funcs),
                    Phase::W4 => always || s.stager.free_list.is_empty(),
                    _ => false,
                }
        };
        // Pipeline: no W4; the next wait to complete frees the list (`stager_step`).
        let left_out = |q: Phase| {
            self.skips(q)
                || (removal && matches!(q, Phase::W0 | Phase::Install))
                || elided(q)
                || (self.pipeline && q == Phase::W4)
        };
        SEQ[pos + 1..].iter().copied().find(|&q| !left_out(q))
    }

    fn skips(&self, p: Phase) -> bool {
        match p {
            Phase::W0 => self.is(Mutant::SkipWaitBeforeInstall),
            Phase::W1 => self.is(Mutant::SkipWaitBeforeCommit),
            Phase::W2 => self.is(Mutant::SkipWaitBeforeUninstall),
            Phase::W3 => self.is(Mutant::SkipWaitBeforeConsolidate),
            Phase::W4 => self.is(Mutant::SkipWaitBeforeFree),
            _ => false,
        }
    }

    pub(crate) fn advance<K: Caps>(&self, s: &mut StateOf<K>) {
        match self.next_phase(s, s.stager.phase) {
            Some(p) => s.stager.phase = p,
            None => {
                // A batch's entries are its own: the next op follows them.
                let skip = match self.script[s.stager.op as usize] {
                    StagerOp::Batch { len, .. } => len,
                    _ => 0,
                };
                s.stager.op += 1 + skip;
                s.stager.phase = Phase::Stage;
            }
        }
    }

    /// The session's node on `f`, from the pending `to_insert` or the chain (`get_bp_session`).
    fn session_node<K: Caps>(&self, s: &StateOf<K>, f: u8, session: u8) -> u8 {
        let head = s.get(self, Loc::Slot(f));
        if head != NIL {
            let ti = s.nodes[head as usize].to_insert;
            if ti != NIL && s.nodes[ti as usize].session == session {
                return ti;
            }
        }
        s.chain(self, f)
            .into_iter()
            .find(|&g| s.nodes[g as usize].session == session)
            .unwrap_or(NIL)
    }

    fn chain_flags<K: Caps>(&self, s: &StateOf<K>, f: u8, ix: u8) -> u8 {
        s.chain(self, f)
            .iter()
            .fold(0, |acc, &g| acc | s.nodes[g as usize].half[ix as usize])
    }

    fn uninstall<K: Caps>(&self, s: &mut StateOf<K>, funcs: u8, judge: u8, log: &mut Log<'_>) {
        for f in 0..self.functions {
            if funcs & (1 << f) == 0 || s.get(self, Loc::Instr(f)) != BP {
                continue;
            }
            if self.chain_flags(s, f, judge) == 0 {
                self.write(s, Loc::Instr(f), ORIG);
                s.stager.restored |= 1 << f;
                say(log, || {
                    format!("stager: uninstall: f{f}'s instruction := original")
                });
            }
        }
    }

    fn stager_step<K: Caps>(&self, s: &mut StateOf<K>, log: &mut Log<'_>) {
        let phase = s.stager.phase;
        if let Some(_w) = phase.wait_number() {
            let w = phase.wait_name();
            if !s.stager.waiting {
                s.stager.waiting = true;
                s.dirty = 0;
                s.published.iter_mut().for_each(|v| *v = FRESH);
                for n in s.nodes.iter_mut() {
                    n.published = [true; 3];
                }
                for o in s.objs.iter_mut() {
                    o.read_published = true;
                }
                let new_period = !self.is(Mutant::WaitWithoutNewPeriod);
                let sleepers_count = self.mutant != Some(super::SpecMutant::WaitOnSleepers);
                for x in s.scheds.iter_mut() {
                    x.counted = (x.mode == Mode::Asleep && sleepers_count)
                        || (!new_period && x.point_since_begin);
                    x.point_since_begin = false;
                }
                say(log, || {
                    format!("stager: {w} begins (wait for thread progress)")
                });
            } else {
                s.stager.waiting = false;
                for x in s.scheds.iter_mut() {
                    x.counted = false;
                }
                say(log, || format!("stager: {w} completes"));
                if self.pipeline && !s.stager.free_list.is_empty() {
                    // No wait is under way when consolidate runs (a stager step), so this one
                    // began after the consolidate that unlinked these nodes: it is their W4.
                    for g in std::mem::take(&mut s.stager.free_list) {
                        s.nodes[g as usize].freed = true;
                        say(log, || format!("stager: free {} (pipelined)", bp_name(g)));
                    }
                }
                self.advance(s);
            }
            return;
        }
        if let StagerOp::Collect { session, func } = self.script[s.stager.op as usize] {
            self.collect_step(s, session, func, log);
            self.advance(s);
            return;
        }
        if let StagerOp::SetTracer { on, .. } = self.script[s.stager.op as usize] {
            self.tracer_step(s, on, log);
            self.advance(s);
            return;
        }
        let (funcs, _) = self.op(s);
        let staging = s.active_ix(self) ^ 1;
        match phase {
            Phase::Stage => {
                say(log, || {
                    format!(
                        "stager: {} begins; stage into half {staging}",
                        self.op_text(s)
                    )
                });
                s.stager.patched = 0;
                s.stager.restored = 0;
                s.stager.committed = false;
                for x in s.scheds.iter_mut() {
                    x.saw_new = false;
                }
                // A batch: each entry's T1 in order, each seeing the earlier ones' (docs/fewer-waits.md BA1-BA3).
                for e in self.entries(s).to_vec() {
                    let StagerOp::TracePattern {
                        session,
                        funcs,
                        kind,
                        flags,
                    } = e
                    else {
                        unreachable!("validated: a batch holds trace_pattern entries")
                    };
                    for f in 0..self.functions {
                        if funcs & (1 << f) != 0 {
                            self.stage(s, f, session, kind, flags, staging, log);
                        }
                    }
                }
            }
            Phase::Install => {
                for f in 0..self.functions {
                    if funcs & (1 << f) == 0 {
                        continue;
                    }
                    let head = s.get(self, Loc::Slot(f));
                    if head == NIL {
                        continue;
                    }
                    if s.get(self, Loc::Instr(f)) != BP {
                        self.write(s, Loc::Instr(f), BP);
                        s.stager.patched |= 1 << f;
                        say(log, || {
                            format!("stager: install: f{f}'s instruction := breakpoint")
                        });
                    }
                    let ti = s.nodes[head as usize].to_insert;
                    if ti != NIL {
                        s.nodes[head as usize].to_insert = NIL;
                        self.write(s, Loc::Slot(f), ti);
                        say(log, || {
                            format!("stager: install: slot of f{f} := {}", bp_name(ti))
                        });
                    }
                }
            }
            Phase::Commit => {
                if self.is(Mutant::UninstallBeforeCommit) {
                    self.uninstall(s, funcs, staging, log);
                }
                let a = s.active_ix(self);
                self.write(s, Loc::Ix, a ^ 1);
                s.stager.committed = true;
                for x in s.scheds.iter_mut() {
                    if let Mode::Hit(h) = &mut x.mode {
                        h.spans_flip = true;
                    }
                }
                say(log, || format!("stager: flip {a}->{}", a ^ 1));
            }
            Phase::Uninstall => {
                if !self.is(Mutant::UninstallBeforeCommit)
                    && self.mutant != Some(super::SpecMutant::SkipUninstall)
                {
                    let a = s.active_ix(self);
                    self.uninstall(s, funcs, a, log);
                }
            }
            Phase::Consolidate => {
                let active = s.active_ix(self) as usize;
                for f in 0..self.functions {
                    if funcs & (1 << f) == 0 {
                        continue;
                    }
                    let mut prev = Loc::Slot(f);
                    let mut g = s.get(self, prev);
                    let mut steps = 0;
                    while g != NIL {
                        steps += 1;
                        assert!(steps <= s.nodes.len(), "chain of f{f} too long");
                        let src = s.nodes[g as usize].half[active];
                        if !self.is(Mutant::SkipConsolidateCopy) {
                            s.nodes[g as usize].half[active ^ 1] = src;
                            s.nodes[g as usize].tm[active ^ 1] = s.nodes[g as usize].tm[active];
                            self.write_node(s, g, active ^ 1);
                        }
                        let next = s.get(self, Loc::Next(g));
                        if src == 0 {
                            self.write(s, prev, next);
                            s.nodes[g as usize].unlinked = true;
                            s.stager.free_list.push(g);
                            say(log, || {
                                format!("stager: consolidate: unlink {} from f{f}", bp_name(g))
                            });
                            if self.is_ch(ChainMutant::ClearNextOnUnlink) {
                                self.write(s, Loc::Next(g), NIL);
                                say(log, || {
                                    format!("stager: consolidate: next of {} := null", bp_name(g))
                                });
                            }
                            if self.is_ch(ChainMutant::FreeAtUnlink) {
                                s.nodes[g as usize].freed = true;
                                say(log, || format!("stager: free {} (at unlink)", bp_name(g)));
                            }
                        } else {
                            prev = Loc::Next(g);
                        }
                        g = next;
                    }
                }
                say(log, || {
                    "stager: consolidate: staging half := active half".into()
                });
            }
            Phase::Free if self.pipeline && !self.is(Mutant::SkipWaitBeforeFree) => {
                // The list waits for the next wait (skip-w4-before-free frees it now).
                say(log, || {
                    format!(
                        "stager: {} returns; its unlinked nodes wait for the next wait",
                        self.op_text(s)
                    )
                });
            }
            Phase::Free => {
                let list = std::mem::take(&mut s.stager.free_list);
                for &g in list.iter() {
                    s.nodes[g as usize].freed = true;
                    say(log, || format!("stager: free {}", bp_name(g)));
                }
                say(log, || format!("stager: {} returns", self.op_text(s)));
            }
            _ => unreachable!("waits handled above"),
        }
        if matches!(phase, Phase::Stage | Phase::Consolidate | Phase::Free) {
            self.sweep_objs(s, log);
        }
        self.advance(s);
    }

    /// `StagerOp::SetTracer`: at `Stage`, swap the tracer pointer (a Release swap: the fresh
    /// cell is written before it, and an Acquire load that returns it sees it, so the model
    /// does not track the cell's contents) and take the old cell and the retire list; at
    /// `Free` (after W4, which began after the swap), free them.
    fn tracer_step<K: Caps>(&self, s: &mut StateOf<K>, on: bool, log: &mut Log<'_>) {
        let op = self.script[s.stager.op as usize];
        let cell_name = |c: u8| {
            if c == NIL {
                "none".to_string()
            } else {
                format!("tracer cell #{}", c as u32 + 1)
            }
        };
        match s.stager.phase {
            Phase::Stage => {
                say(log, || format!("stager: {op} begins"));
                let old = s.get(self, Loc::Tracer);
                let new = if on {
                    s.cells.push(false);
                    (s.cells.len() - 1) as u8
                } else {
                    NIL
                };
                self.write(s, Loc::Tracer, new);
                say(log, || {
                    format!(
                        "stager: swap the tracer pointer: {} -> {}",
                        cell_name(old),
                        cell_name(new)
                    )
                });
                if old != NIL {
                    s.cell_free.push(old);
                }
                let taken = std::mem::take(&mut s.retired);
                if !taken.is_empty() {
                    say(log, || {
                        let v: Vec<String> = taken.iter().map(|&c| cell_name(c)).collect();
                        format!("stager: take the retire list: {}", v.join(", "))
                    });
                }
                s.cell_free.extend(taken);
            }
            Phase::Free => {
                for c in std::mem::take(&mut s.cell_free) {
                    s.cells[c as usize] = true;
                    say(log, || format!("stager: free {}", cell_name(c)));
                }
                say(log, || format!("stager: {op} returns"));
            }
            p => unreachable!("tracer op in phase {p:?}"),
        }
    }

    /// Does acting on a half with flags `fl` send to the model's tracer cell?
    fn sends_to_tracer(&self, fl: u8) -> bool {
        match self.tracer() {
            Some(true) => fl & bits::META != 0,
            Some(false) => fl & (bits::LOCAL | bits::GLOBAL) != 0,
            None => false,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn stage<K: Caps>(
        &self,
        s: &mut StateOf<K>,
        f: u8,
        session: u8,
        kind: PatternKind,
        fl: u8,
        staging: u8,
        log: &mut Log<'_>,
    ) {
        let mut g = self.session_node(s, f, session);
        if kind == PatternKind::False {
            if g != NIL {
                let h = &mut s.nodes[g as usize].half[staging as usize];
                if fl & bits::LOCAL != 0 {
                    *h &= !bits::LOCAL;
                }
                *h &= !(fl & (bits::GLOBAL | bits::META));
                if fl & bits::COUNT != 0 {
                    *h &= !(bits::COUNT | bits::COUNT_ACTIVE);
                }
                if fl & bits::TIME != 0 {
                    *h &= !(bits::TIME | bits::TIME_ACTIVE);
                }
                let v = *h;
                if fl & bits::TIME != 0 {
                    // The active half keeps its reference: the object is freed when consolidate
                    // drops the last one (after W3).
                    s.nodes[g as usize].tm[staging as usize] = NIL;
                }
                self.write_staged(s, g, staging, v, log);
            }
            return;
        }
        if g == NIL {
            if matches!(kind, PatternKind::Pause | PatternKind::Restart) {
                return;
            }
            g = s.nodes.len() as u8;
            let head = s.get(self, Loc::Slot(f));
            s.nodes.push(Node {
                func: f,
                session,
                half: [0, 0],
                tm: [NIL, NIL],
                to_insert: NIL,
                unlinked: false,
                freed: false,
                unseen: [0; 3],
                published: [true; 3],
                released: [false; 3],
            });
            for h in 0..3 {
                self.write_node(s, g, h);
            }
            if head == NIL {
                // The function has no node: its instruction is not patched, but call_time
                // readers (returns, schedule-outs) walk the slot anyway. A release store (the
                // baseline) publishes the node's initialisation to an acquire load of it.
                self.write(s, Loc::Slot(f), g);
                if self.mutant != Some(super::SpecMutant::FreshSlotStoreRelaxed) {
                    s.nodes[g as usize].released = [true; 3];
                }
                say(log, || {
                    format!(
                        "stager: stage: new {} for session {session}, slot of f{f} := it",
                        bp_name(g)
                    )
                });
            } else if self.is_ch(ChainMutant::LinkBeforeInstallWait) {
                let i = Loc::Next(g).index(self.functions);
                s.cur[i] = head;
                self.write(s, Loc::Slot(f), g);
                say(log, || {
                    format!(
                        "stager: stage: new {} for session {session}, next := {}, slot of f{f} := it",
                        bp_name(g),
                        bp_name(head)
                    )
                });
            } else {
                // The fresh node's `next` is written before anyone can reach the node.
                let i = Loc::Next(g).index(self.functions);
                s.cur[i] = head;
                s.nodes[head as usize].to_insert = g;
                say(log, || {
                    format!(
                        "stager: stage: new {} for session {session}, next := {}, pending on {}",
                        bp_name(g),
                        bp_name(head),
                        bp_name(head)
                    )
                });
            }
        }
        let h = &mut s.nodes[g as usize].half[staging as usize];
        if fl & bits::LOCAL != 0 {
            *h |= bits::LOCAL;
        }
        *h |= fl & (bits::GLOBAL | bits::META);
        if fl & bits::COUNT != 0 {
            let exists = *h & bits::COUNT != 0;
            match (kind, exists) {
                (PatternKind::Pause, true) => *h &= !bits::COUNT_ACTIVE,
                (_, true) => *h |= bits::COUNT_ACTIVE,
                (_, false) => *h |= bits::COUNT | bits::COUNT_ACTIVE,
            }
        }
        let mut new_obj = false;
        if fl & bits::TIME != 0 {
            let exists = *h & bits::TIME != 0;
            match (kind, exists) {
                (PatternKind::Pause, true) => *h &= !bits::TIME_ACTIVE,
                // true/restart on an existing counter: a fresh object in the staging half, the
                // old one stays in the active half until consolidate drops it (the fix of OTP
                // erlang/otp#8835, as the engine's stage.rs). A new counter, also for pause/restart on a
                // node without one (the ERTS fall-through), is created running.
                _ => {
                    *h |= bits::TIME | bits::TIME_ACTIVE;
                    new_obj = true;
                }
            }
        }
        let v = *h;
        if new_obj {
            let o = self.new_obj(s, false);
            s.nodes[g as usize].tm[staging as usize] = o;
        }
        self.write_staged(s, g, staging, v, log);
    }

    // ----- schedulers -----

    /// At the end of a hit, every node that was on the chain when it began and is still
    /// on it, with an active flag, was acted on.
    fn check_missed<K: Caps>(&self, s: &mut StateOf<K>, sched: usize, h: &Hit) {
        if self.sessions == 1 || s.violation.is_some() {
            return;
        }
        let ix = s.active_ix(self) as usize;
        for g in s.chain(self, h.func) {
            let bit = 1u8 << g;
            if h.linked & bit != 0 && h.visited & bit == 0 && s.nodes[g as usize].half[ix] != 0 {
                s.violation = Some(Violation::MissedNode {
                    sched: sched as u8,
                    func: h.func,
                    node: g,
                });
                return;
            }
        }
    }

    /// Scheduler `sched` reads the active index (`stale`: the older value its view holds, if
    /// any), narrated.
    pub(crate) fn read_ix<K: Caps>(
        &self,
        s: &mut StateOf<K>,
        sched: usize,
        stale: bool,
        log: &mut Log<'_>,
    ) -> u8 {
        let ix = self.read(s, sched, Loc::Ix, stale);
        let st = if stale { " (stale)" } else { "" };
        say(log, || {
            format!("scheduler {sched} reads the active index -> {ix}{st}")
        });
        ix
    }

    /// Scheduler `sched` reads half `ix` of node `g` (plain data): its flags and its call_time
    /// counter object. A read of a node whose allocation, or of a half whose last write, is not
    /// visible to it races with that write.
    pub(crate) fn read_half<K: Caps>(
        &self,
        s: &mut StateOf<K>,
        sched: usize,
        g: u8,
        ix: u8,
    ) -> (u8, u8) {
        self.check_node(s, sched, g);
        let n = &s.nodes[g as usize];
        let (half, torn) = (
            (n.half[ix as usize], n.tm[ix as usize]),
            n.unseen[ix as usize] & (1 << sched) != 0,
        );
        if torn && s.violation.is_none() {
            s.violation = Some(Violation::TornHalf {
                sched: sched as u8,
                node: g,
                half: ix,
            });
        }
        half
    }

    pub(crate) fn check_node<K: Caps>(&self, s: &mut StateOf<K>, sched: usize, g: u8) {
        if s.nodes[g as usize].unseen[2] & (1 << sched) != 0 && s.violation.is_none() {
            s.violation = Some(Violation::UnpublishedNode {
                sched: sched as u8,
                node: g,
            });
        }
    }

    fn old_after_new<K: Caps>(&self, s: &mut StateOf<K>, sched: usize, func: u8) {
        if s.scheds[sched].saw_new && s.violation.is_none() {
            s.violation = Some(Violation::OldAfterNew {
                sched: sched as u8,
                func,
            });
        }
    }

    fn sched_step<K: Caps>(&self, s: &mut StateOf<K>, a: Action, log: &mut Log<'_>) {
        match a {
            Action::Progress(id) => {
                let i = id as usize;
                if !self.is(Mutant::ProgressWithoutBarrier) {
                    self.barrier(s, i);
                }
                let x = &mut s.scheds[i];
                x.point_since_begin = true;
                if s.stager.waiting {
                    x.counted = true;
                }
                say(log, || format!("scheduler {id} passes a progress point"));
            }
            Action::Sleep(id) => {
                let x = &mut s.scheds[id as usize];
                x.mode = Mode::Asleep;
                if s.stager.waiting && self.mutant != Some(super::SpecMutant::WaitOnSleepers) {
                    x.counted = true;
                }
                say(log, || format!("scheduler {id} goes to sleep"));
            }
            Action::Wake(id) => {
                let i = id as usize;
                if !self.is(Mutant::WakeWithoutBarrier) {
                    self.barrier(s, i);
                }
                let x = &mut s.scheds[i];
                x.mode = Mode::Idle;
                if s.stager.waiting {
                    x.counted = true;
                }
                say(log, || format!("scheduler {id} wakes up"));
            }
            Action::Call(id, f, stale) => {
                let i = id as usize;
                let v = self.read(s, i, Loc::Instr(f), stale);
                let st = if stale { " (stale)" } else { "" };
                if v == ORIG {
                    let cur = s.get(self, Loc::Instr(f));
                    if cur == BP && s.stager.patched & (1 << f) != 0 {
                        self.old_after_new(s, i, f);
                    } else if cur == ORIG && s.stager.restored & (1 << f) != 0 {
                        s.scheds[i].saw_new = true;
                    }
                    say(log, || {
                        format!("scheduler {id} calls f{f}: instruction -> original{st}, runs it")
                    });
                } else {
                    let linked = if self.sessions > 1 {
                        s.chain(self, f).iter().fold(0u8, |m, &g| m | 1 << g)
                    } else {
                        0
                    };
                    s.scheds[i].mode = Mode::Hit(Hit {
                        func: f,
                        step: HitStep::Slot,
                        head: NIL,
                        at: NIL,
                        ix: 0,
                        spans_flip: false,
                        linked,
                        visited: 0,
                        cell: NIL,
                    });
                    say(log, || {
                        format!("scheduler {id} calls f{f}: instruction -> breakpoint{st}")
                    });
                }
            }
            Action::Charge(id) => self.charge_start(s, id as usize, log),
            Action::Read(id, stale) if matches!(s.scheds[id as usize].mode, Mode::Charge(_)) => {
                self.charge_step(s, id as usize, stale, log)
            }
            Action::Read(id, stale) => {
                let i = id as usize;
                let Mode::Hit(mut h) = s.scheds[i].mode else {
                    unreachable!("Read only when mid-hit")
                };
                let st = if stale { " (stale)" } else { "" };
                let f = h.func;
                match h.step {
                    HitStep::Slot => {
                        // A relaxed load, as the engine's hit path: the hit reaches a fresh
                        // node only through the breakpoint, patched after W0.
                        let g = self.read(s, i, Loc::Slot(f), stale);
                        say(log, || {
                            format!("scheduler {id} reads slot of f{f} -> {}{st}", bp_name(g))
                        });
                        if g == NIL {
                            s.violation = Some(Violation::EmptySlot { sched: id, func: f });
                            s.scheds[i].mode = Mode::Idle;
                            return;
                        }
                        h.head = g;
                        h.at = g;
                        h.step = HitStep::Ix;
                    }
                    HitStep::Ix => {
                        h.ix = self.read_ix(s, i, stale, log);
                        h.step = HitStep::Half;
                    }
                    HitStep::Half => {
                        let g = h.at;
                        let (fl, _) = self.read_half(s, i, g, h.ix);
                        let differ = s.nodes[g as usize].half[0] != s.nodes[g as usize].half[1];
                        if differ && s.stager.phase != Phase::Stage {
                            let cur = s.active_ix(self);
                            let new_ix = if s.stager.committed { cur } else { cur ^ 1 };
                            if h.ix == new_ix {
                                s.scheds[i].saw_new = true;
                            } else {
                                self.old_after_new(s, i, f);
                            }
                        }
                        say(log, || {
                            format!(
                                "scheduler {id} acts on half {} of {} ({})",
                                h.ix,
                                bp_name(g),
                                flags_name(fl)
                            )
                        });
                        if self.sessions > 1 {
                            h.visited |= 1 << g;
                        }
                        if fl & bits::TIME_ACTIVE != 0
                            && f == super::collect::COUNTED_FUNC
                            && s.nodes[g as usize].session == super::collect::COUNTED_SESSION
                        {
                            s.timem_entered = true;
                        }
                        h.step = if self.sends_to_tracer(fl) {
                            HitStep::Tracer
                        } else {
                            HitStep::Next
                        };
                    }
                    HitStep::Tracer => {
                        let c = self.read(s, i, Loc::Tracer, stale);
                        say(log, || {
                            if c == NIL {
                                format!("scheduler {id} reads the tracer pointer -> none{st}")
                            } else {
                                format!(
                                    "scheduler {id} reads the tracer pointer -> tracer cell #{}{st}",
                                    c as u32 + 1
                                )
                            }
                        });
                        h.cell = c;
                        h.step = if c == NIL {
                            HitStep::Next
                        } else {
                            HitStep::Send
                        };
                    }
                    HitStep::Send => {
                        let c = h.cell;
                        if s.cells[c as usize] && s.violation.is_none() {
                            s.violation = Some(Violation::FreedTracer { sched: id, cell: c });
                        }
                        // `stale` here: the meta tracer answered `remove`.
                        if stale {
                            let won = s.get(self, Loc::Tracer) == c;
                            if won {
                                self.write(s, Loc::Tracer, NIL);
                                // Its own write: it never reads an older value again.
                                s.scheds[i].stale[Loc::Tracer.index(self.functions)] = FRESH;
                                s.retired.push(c);
                            }
                            say(log, || {
                                format!(
                                    "scheduler {id} sends through tracer cell #{}; the tracer \
                                     answers remove: compare-and-swap it to none {}",
                                    c as u32 + 1,
                                    if won {
                                        "wins (the cell goes onto the retire list)"
                                    } else {
                                        "fails (the stager replaced it)"
                                    }
                                )
                            });
                        } else {
                            say(log, || {
                                format!(
                                    "scheduler {id} sends through tracer cell #{}",
                                    c as u32 + 1
                                )
                            });
                        }
                        h.cell = NIL;
                        h.step = HitStep::Next;
                    }
                    HitStep::Next => {
                        let g = h.at;
                        self.check_node(s, i, g);
                        let nx = self.read(s, i, Loc::Next(g), stale);
                        say(log, || {
                            format!(
                                "scheduler {id} reads next of {} -> {}{st}",
                                bp_name(g),
                                bp_name(nx)
                            )
                        });
                        if nx == NIL {
                            h.step = HitStep::Orig;
                        } else {
                            h.at = nx;
                            h.step = HitStep::Ix;
                        }
                    }
                    HitStep::Orig => {
                        self.check_node(s, i, h.head);
                        self.check_missed(s, i, &h);
                        say(log, || {
                            format!(
                                "scheduler {id} reads orig_instr of {}, runs f{f}",
                                bp_name(h.head)
                            )
                        });
                        s.scheds[i].mode = Mode::Idle;
                        return;
                    }
                }
                s.scheds[i].mode = Mode::Hit(h);
            }
            Action::Stager => unreachable!(),
        }
    }

    /// Apply `a` to `s` (which must have `a` enabled), narrating into `log`.
    pub fn apply<K: Caps>(&self, s: &mut StateOf<K>, a: Action, log: &mut Log<'_>) {
        match a {
            Action::Stager => self.stager_step(s, log),
            _ => self.sched_step(s, a, log),
        }
    }

    /// Is `a` enabled in `s`?
    pub fn is_enabled<K: Caps>(&self, s: &StateOf<K>, a: Action) -> bool {
        let mut v = Vec::new();
        self.enabled(s, &mut v);
        v.contains(&a)
    }
}
