//! # The OTP 29 non-blocking call_time collection (`trace_info`), as a stager operation
//!
//! **What it models** (docs/collection.md §2, erts-notes §4). `StagerOp::Collect` runs, with the
//! code modification permission held (it is one op of the script, so no `trace_pattern` runs
//! meanwhile):
//!
//! ```text
//! C1   (its Stage step) g := the session's node on f; R := data[staging].tm (== active, I5);
//!      data[staging].tm := T, a fresh temporary with empty tables        [plain write]
//! TW1  wait
//! C2   flip                                      (T active, R not)
//! TW2  wait
//! C3   read every table of R                     (must not race with any writer)
//! TW2b wait                                      (the fix of F2; ERTS has none)
//! C4   flip back                                 (R active again)
//! TW3  wait
//! C5   under the dirty lock: add every table of T into R's shared slot
//! C6   data[staging].tm := data[active].tm (halves equal); free T
//! ```
//!
//! A paused counter (TIME without TIME_ACTIVE) goes through the same steps (the fix of F1);
//! ERTS reads it in place at C1 and stops there (spec mutant `erts-f1-paused-read-in-place`).
//!
//! **Charges.** A scheduler charges the counted function (function 0, session 0's node) in a
//! *charge*: step 7 of a hit, a return, or a schedule-out, each between two of its progress
//! points. A charge is its own steps, so a flip, a read, a merge or a free can fall between
//! any two: (dirty schedulers only: take the dirty lock), walk from the function's slot through
//! `next` links to the session's node (`get_time_break`: relaxed loads, stale values allowed;
//! acquire loads for the fresh node's release store, see `step.rs`), read the active index (a
//! stale value if its view still holds one), read `data[ix]` (flags and object; a plain read, checked like a
//! hit's read of a half), add one to its table of that object (a dirty scheduler: to the shared
//! slot, then release the lock). A charge needs only TIME, not TIME_ACTIVE (the return path's
//! `get_time_break`), so a paused counter is still charged by frames in flight. At most
//! `Config::charges` charges happen per run, and a table holds a count of charges, so the state
//! stays finite: per-scheduler table ownership is modelled abstractly, by which object a charge
//! writes and which table of it (its own or the shared slot).
//!
//! **Races.** The collector's reads (C3 of R, C5 of T) race with a charge that is between its
//! `data[ix]` read and its write of that object (`TableRace`, during), and with a later charge
//! write by a scheduler that has not passed a barrier after a wait that began after the read
//! (`TableRace`, after: nothing orders the read before the write; that is F2). C5's write of the
//! shared slot races with a dirty charge holding the same object (`SharedSlotRace`; the lock
//! prevents it). A charge write into a freed temporary is `TempUseAfterFree`.
//!
//! **Checked** (release, 2-core machine shared with other jobs; `bpspec check --model c2f1`):
//! see the header of `mod.rs` and docs/spec.md §7 for the figures.

use super::config::{bits, CollectMutant, Config};
use super::inline::InlineVec;
use super::inline::Slots;
use super::state::*;
use super::step::{Action, Log};

fn say(log: &mut Log<'_>, f: impl FnOnce() -> String) {
    if let Some(l) = log.as_deref_mut() {
        l.push(f());
    }
}

pub fn obj_name<K: Caps>(s: &StateOf<K>, o: u8) -> String {
    if o == NIL {
        "none".into()
    } else if s.objs[o as usize].temp {
        format!("temporary T{}", o)
    } else {
        format!("BpTimemTrace R{}", o)
    }
}

/// The function and session every charge counts.
pub const COUNTED_FUNC: u8 = 0;
pub const COUNTED_SESSION: u8 = 0;

impl Config {
    /// Allocate a counter object with empty tables.
    pub(crate) fn new_obj<K: Caps>(&self, s: &mut StateOf<K>, temp: bool) -> u8 {
        let o = s.objs.len() as u8;
        s.objs.push(TmObj {
            temp,
            freed: false,
            cnt: InlineVec::filled(0, self.schedulers as usize + 1),
            read_unseen: 0,
            read_published: true,
        });
        o
    }

    /// The counted node (session 0 on function 0) if it is on the chain.
    fn counted_node<K: Caps>(&self, s: &StateOf<K>) -> u8 {
        s.chain(self, COUNTED_FUNC)
            .into_iter()
            .find(|&g| s.nodes[g as usize].session == COUNTED_SESSION)
            .unwrap_or(NIL)
    }

    /// The phase after `p` in a collection.
    pub(crate) fn collect_next_phase<K: Caps>(&self, s: &StateOf<K>, p: Phase) -> Option<Phase> {
        use CollectMutant::*;
        use Phase::*;
        let seq: &[Phase] = if self.is_c(WithoutFlip) {
            &[Stage, CRead]
        } else if self.is_c(FreeBeforeLastWait) {
            &[
                Stage, Tw1, CFlip, Tw2, CRead, Tw2b, CFlipBack, CMerge, CFree, Tw3,
            ]
        } else {
            &[
                Stage, Tw1, CFlip, Tw2, CRead, Tw2b, CFlipBack, Tw3, CMerge, CFree,
            ]
        };
        if p == Stage && s.stager.real == NIL {
            return None; // nothing to collect, or a paused counter read in place (ERTS)
        }
        let skip = |q: Phase| match q {
            Tw1 => self.is_c(SkipTw1),
            Tw2 => self.is_c(SkipTw2),
            Tw2b => self.is_c(ErtsFlipBackWithoutWait),
            Tw3 => self.is_c(SkipTw3),
            CMerge => self.is_c(SkipMerge),
            _ => false,
        };
        let pos = seq.iter().position(|&q| q == p).expect("phase in sequence");
        seq[pos + 1..].iter().copied().find(|&q| !skip(q))
    }

    /// The merge takes the dirty lock: it waits while a dirty scheduler holds it.
    pub(crate) fn collect_enabled<K: Caps>(&self, s: &StateOf<K>) -> bool {
        !(s.stager.phase == Phase::CMerge
            && s.lock != NIL
            && !self.is_c(CollectMutant::MergeWithoutLock))
    }

    /// The collector reads every table of `o`.
    fn collector_reads<K: Caps>(&self, s: &mut StateOf<K>, o: u8) {
        for (i, x) in s.scheds.iter().enumerate() {
            if let Mode::Charge(c) = x.mode {
                if c.step == ChargeStep::Write && c.obj == o && s.violation.is_none() {
                    s.violation = Some(Violation::TableRace {
                        sched: i as u8,
                        obj: o,
                        during: true,
                    });
                }
            }
        }
        let all = self.all_scheds();
        let ob = &mut s.objs[o as usize];
        ob.read_unseen = all;
        ob.read_published = false;
    }

    /// One step of the collection (not a wait).
    pub(crate) fn collect_step<K: Caps>(
        &self,
        s: &mut StateOf<K>,
        session: u8,
        func: u8,
        log: &mut Log<'_>,
    ) {
        let staging = (s.active_ix(self) ^ 1) as usize;
        let active = staging ^ 1;
        let op = self.script[s.stager.op as usize];
        match s.stager.phase {
            Phase::Stage => {
                say(log, || format!("stager: {op} begins"));
                s.stager.real = NIL;
                s.stager.temp = NIL;
                let g = s
                    .chain(self, func)
                    .into_iter()
                    .find(|&g| s.nodes[g as usize].session == session)
                    .unwrap_or(NIL);
                if g == NIL {
                    say(log, || {
                        format!("stager: no node of session {session} on f{func}")
                    });
                    return;
                }
                let fl = s.nodes[g as usize].half[staging];
                let r = s.nodes[g as usize].tm[staging];
                if fl & bits::TIME == 0 || r == NIL {
                    say(log, || "stager: no call_time counter".into());
                    return;
                }
                if fl & bits::TIME_ACTIVE == 0 && self.is_c(CollectMutant::ErtsPausedReadInPlace) {
                    self.collector_reads(s, r);
                    say(log, || {
                        format!(
                            "stager: C1: {} is paused: read its tables in place; {op} returns",
                            obj_name(s, r)
                        )
                    });
                    return;
                }
                s.stager.real = r;
                if self.is_c(CollectMutant::WithoutFlip) {
                    return;
                }
                let t = self.new_obj(s, true);
                s.stager.temp = t;
                s.nodes[g as usize].tm[staging] = t;
                self.write_node(s, g, staging);
                say(log, || {
                    format!(
                        "stager: C1: {} half {staging} counter := {} (real: {})",
                        super::step::bp_name(g),
                        obj_name(s, t),
                        obj_name(s, r)
                    )
                });
            }
            Phase::CFlip | Phase::CFlipBack => {
                let a = active as u8;
                self.write(s, Loc::Ix, a ^ 1);
                for x in s.scheds.iter_mut() {
                    if let Mode::Hit(h) = &mut x.mode {
                        h.spans_flip = true;
                    }
                }
                let which = if s.stager.phase == Phase::CFlip {
                    "C2"
                } else {
                    "C4"
                };
                say(log, || format!("stager: {which}: flip {a}->{}", a ^ 1));
            }
            Phase::CRead => {
                let r = s.stager.real;
                self.collector_reads(s, r);
                say(log, || {
                    format!("stager: C3: read the tables of {}", obj_name(s, r))
                });
            }
            Phase::CMerge => {
                let (r, t) = (s.stager.real, s.stager.temp);
                self.collector_reads(s, t);
                for (i, x) in s.scheds.iter().enumerate() {
                    if let Mode::Charge(c) = x.mode {
                        if c.step == ChargeStep::Write
                            && c.obj == r
                            && self.dirty & (1 << i) != 0
                            && s.violation.is_none()
                        {
                            s.violation = Some(Violation::SharedSlotRace {
                                sched: i as u8,
                                obj: r,
                            });
                        }
                    }
                }
                let sum: u8 = s.objs[t as usize].cnt.iter().sum();
                s.objs[t as usize].cnt.iter_mut().for_each(|c| *c = 0);
                let shared = self.schedulers as usize;
                s.objs[r as usize].cnt[shared] += sum;
                let lock = if self.is_c(CollectMutant::MergeWithoutLock) {
                    "without the dirty lock"
                } else {
                    "under the dirty lock"
                };
                say(log, || {
                    format!(
                        "stager: C5: {lock}, merge {} ({sum} charges) into the shared slot of {}",
                        obj_name(s, t),
                        obj_name(s, r)
                    )
                });
            }
            Phase::CFree => {
                let t = s.stager.temp;
                let g = self.counted_node_of(s, session, func);
                if !self.is_c(CollectMutant::SkipEqualize) {
                    s.nodes[g as usize].tm[staging] = s.nodes[g as usize].tm[active];
                    self.write_node(s, g, staging);
                }
                s.objs[t as usize].freed = true;
                let eq = if self.is_c(CollectMutant::SkipEqualize) {
                    format!("half {staging} keeps its counter")
                } else {
                    format!("half {staging} counter := half {active}'s")
                };
                say(log, || {
                    format!("stager: C6: {eq}; free {}; {op} returns", obj_name(s, t))
                });
            }
            p => unreachable!("{p:?} is not a collection step"),
        }
    }

    fn counted_node_of<K: Caps>(&self, s: &StateOf<K>, session: u8, func: u8) -> u8 {
        s.chain(self, func)
            .into_iter()
            .find(|&g| s.nodes[g as usize].session == session)
            .expect("the permission keeps the node linked during a collection")
    }

    // ----- charges -----

    /// An idle scheduler may begin a charge if charges are left and some process may be inside
    /// the counted function with a call_time frame: with calls, once a hit acted on its running
    /// counter (the charge may then come at any later time, whatever the instruction word
    /// says); without calls (the collection models, whose charges stand for the hits), while
    /// the counted node is on the chain with its allocation visible to it.
    pub(crate) fn charge_may_start<K: Caps>(&self, s: &StateOf<K>, sched: usize) -> bool {
        if s.started >= self.charges {
            return false;
        }
        if self.calls {
            return s.timem_entered;
        }
        let g = self.counted_node(s);
        g != NIL && s.nodes[g as usize].unseen[2] & (1 << sched) == 0
    }

    pub(crate) fn charge_enabled<K: Caps>(
        &self,
        s: &StateOf<K>,
        sched: usize,
        c: Charge,
        out: &mut Vec<Action>,
    ) {
        let id = sched as u8;
        match c.step {
            ChargeStep::Lock => {
                if s.lock == NIL {
                    out.push(Action::Read(id, false));
                }
            }
            ChargeStep::Slot | ChargeStep::Next | ChargeStep::Ix => {
                let l = match c.step {
                    ChargeStep::Slot => Loc::Slot(COUNTED_FUNC),
                    ChargeStep::Next => Loc::Next(c.at),
                    _ => Loc::Ix,
                };
                out.push(Action::Read(id, false));
                if self.stale_choice(s, sched, l) {
                    out.push(Action::Read(id, true));
                }
            }
            ChargeStep::Half | ChargeStep::Write => out.push(Action::Read(id, false)),
        }
    }

    pub(crate) fn charge_start<K: Caps>(
        &self,
        s: &mut StateOf<K>,
        sched: usize,
        log: &mut Log<'_>,
    ) {
        s.started += 1;
        let dirty = self.dirty & (1 << sched) != 0;
        s.scheds[sched].mode = Mode::Charge(Charge {
            step: if dirty {
                ChargeStep::Lock
            } else {
                ChargeStep::Slot
            },
            at: NIL,
            ix: 0,
            obj: NIL,
        });
        say(log, || {
            format!(
                "scheduler {sched} begins a call_time charge of f{COUNTED_FUNC}{} (a return, \
                 an exception, a schedule-out: get_time_break walks the slot)",
                if dirty { " (dirty)" } else { "" }
            )
        });
    }

    pub(crate) fn charge_step<K: Caps>(
        &self,
        s: &mut StateOf<K>,
        sched: usize,
        stale: bool,
        log: &mut Log<'_>,
    ) {
        let Mode::Charge(mut c) = s.scheds[sched].mode else {
            unreachable!("charge step only mid-charge")
        };
        let dirty = self.dirty & (1 << sched) != 0;
        let st = if stale { " (stale)" } else { "" };
        match c.step {
            ChargeStep::Lock => {
                s.lock = sched as u8;
                say(log, || format!("scheduler {sched} takes the dirty lock"));
                c.step = ChargeStep::Slot;
            }
            ChargeStep::Slot | ChargeStep::Next => {
                let (l, what) = if c.step == ChargeStep::Slot {
                    let l = Loc::Slot(COUNTED_FUNC);
                    (l, format!("slot of f{COUNTED_FUNC}"))
                } else {
                    (
                        Loc::Next(c.at),
                        format!("next of {}", super::step::bp_name(c.at)),
                    )
                };
                let g = self.read(s, sched, l, stale);
                self.acquire(s, sched, g);
                say(log, || {
                    format!(
                        "scheduler {sched} reads {what} -> {}{st}",
                        super::step::bp_name(g)
                    )
                });
                if g == NIL {
                    say(log, || {
                        format!(
                            "scheduler {sched}: no node of session {COUNTED_SESSION}: no charge"
                        )
                    });
                    self.charge_end(s, sched, dirty);
                    return;
                }
                // Reads the node's session (plain data of the node).
                self.check_node(s, sched, g);
                c.at = g;
                c.step = if s.nodes[g as usize].session == COUNTED_SESSION {
                    ChargeStep::Ix
                } else {
                    ChargeStep::Next
                };
            }
            ChargeStep::Ix => {
                c.ix = self.read_ix(s, sched, stale, log);
                c.step = ChargeStep::Half;
            }
            ChargeStep::Half => {
                let (fl, o) = self.read_half(s, sched, c.at, c.ix);
                let counter = fl & bits::TIME != 0 && o != NIL;
                say(log, || {
                    format!(
                        "scheduler {sched} reads half {} of {}: {}",
                        c.ix,
                        super::step::bp_name(c.at),
                        if counter {
                            format!("counter {}", obj_name(s, o))
                        } else {
                            "no call_time counter".into()
                        }
                    )
                });
                if !counter {
                    self.charge_end(s, sched, dirty);
                    return;
                }
                c.obj = o;
                c.step = ChargeStep::Write;
            }
            ChargeStep::Write => {
                let o = c.obj;
                let ob = &s.objs[o as usize];
                if ob.freed && s.violation.is_none() {
                    s.violation = Some(Violation::TempUseAfterFree {
                        sched: sched as u8,
                        obj: o,
                    });
                } else if ob.read_unseen & (1 << sched) != 0 && s.violation.is_none() {
                    s.violation = Some(Violation::TableRace {
                        sched: sched as u8,
                        obj: o,
                        during: false,
                    });
                }
                let table = if dirty {
                    self.schedulers as usize
                } else {
                    sched
                };
                s.objs[o as usize].cnt[table] += 1;
                s.charged += 1;
                say(log, || {
                    format!(
                        "scheduler {sched} adds a charge to {} of {}",
                        if dirty {
                            "the shared slot".to_string()
                        } else {
                            format!("its table (scheduler {sched})")
                        },
                        obj_name(s, o)
                    )
                });
                self.charge_end(s, sched, dirty);
                return;
            }
        }
        s.scheds[sched].mode = Mode::Charge(c);
    }

    fn charge_end<K: Caps>(&self, s: &mut StateOf<K>, sched: usize, dirty: bool) {
        if dirty {
            debug_assert_eq!(s.lock, sched as u8);
            s.lock = NIL;
        }
        s.scheds[sched].mode = Mode::Idle;
    }
}
