//! The model's state: shared memory with per-scheduler stale views, `GenericBp` nodes, the
//! schedulers and the stager.
//!
//! Memory locations that schedulers read with relaxed loads (instruction word and breakpoint slot
//! of each function, the active index, each node's `next` link) hold a current value; each
//! scheduler may additionally still read one older value per location (its stale view) until its
//! next full barrier. A barrier refreshes every location that has not been written since the
//! latest wait began (the thread-progress guarantee G-seen: a barrier after a wait's start sees
//! everything written before that start, and nothing later is promised). The halves of a node
//! and its other fields are plain (non-atomic) data: a read of them races with a write unless the
//! write was published by a wait that began after it and the reader passed a barrier after that.

use super::config::Config;
use super::inline::InlineVec;

/// Capacities of the inline vectors of a [`State`] (`Config::validate` refuses models that
/// could outgrow them): schedulers, `GenericBp` nodes ever allocated, memory locations
/// (`2 * functions + 2 + nodes`), call_time counter objects and tracer cells.
pub const MAX_SCHEDS: usize = 4;
pub const MAX_NODES: usize = 6;
pub const MAX_LOCS: usize = 2 * 4 + 2 + MAX_NODES;
const _: () = assert!(
    MAX_LOCS <= 32,
    "a location is a bit of the 32-bit dirty mask"
);
pub const MAX_OBJS: usize = 6;
pub const MAX_CELLS: usize = 4;

/// One byte per memory location (current values, stale views, published values).
pub type Locs = InlineVec<u8, MAX_LOCS>;
/// Node indices (a chain, the free list).
pub type NodeList = InlineVec<u8, MAX_NODES>;
/// Tracer cell indices.
pub type CellList = InlineVec<u8, MAX_CELLS>;

/// Null pointer / no node.
pub const NIL: u8 = 0xFF;
/// "No stale value": the scheduler must read the current value.
pub const FRESH: u8 = 0xFE;
/// Instruction word values.
pub const ORIG: u8 = 0;
pub const BP: u8 = 1;

/// Where a location lives in `State::cur` and in each view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Instr(u8),
    Slot(u8),
    Ix,
    /// The tracer cell pointer hits send to (`Config::tracer`): a session's tracer slot or a
    /// `BpMetaTracer`'s `tracer`. Loaded with Acquire, replaced with a Release swap.
    Tracer,
    Next(u8),
}

impl Loc {
    pub fn index(self, functions: u8) -> usize {
        let f = functions as usize;
        match self {
            Loc::Instr(i) => i as usize,
            Loc::Slot(i) => f + i as usize,
            Loc::Ix => 2 * f,
            Loc::Tracer => 2 * f + 1,
            Loc::Next(g) => 2 * f + 2 + g as usize,
        }
    }
}

/// One `GenericBp`: one session's breakpoint on one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Node {
    pub func: u8,
    pub session: u8,
    /// The flags of each half (`config::bits`).
    pub half: [u8; 2],
    /// The call_time counter object (`BpTimemTrace`, an index into `State::objs`) of each half,
    /// or [`NIL`].
    pub tm: [u8; 2],
    /// Pending new chain head for another session (stager-only field).
    pub to_insert: u8,
    /// Unlinked at consolidate (on the free list, or freed).
    pub unlinked: bool,
    pub freed: bool,
    /// Per half, and for the node's allocation (index 2): schedulers (bit mask) that have not
    /// yet synchronized with the last write.
    pub unseen: [u8; 3],
    /// Per half / allocation: a wait began after the last write.
    pub published: [bool; 3],
    /// Per half / allocation: written before the release store that put this fresh node into an
    /// empty slot, and not since. A call_time reader whose acquire load of the slot or a link
    /// returns this node synchronizes with that store and sees these writes (see `step.rs`, the fresh
    /// node's slot store; `fresh-slot-store-relaxed` makes the store relaxed and sets none).
    pub released: [bool; 3],
}

/// Where a scheduler is in a breakpoint hit: the next read it makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HitStep {
    /// H2: read the breakpoint slot.
    Slot,
    /// H4: read the active index (once per node).
    Ix,
    /// H5: act on `data[ix]` of the current node.
    Half,
    /// H6: read the current node's `next`.
    Next,
    /// H7: read the head's `orig_instr` and run it.
    Orig,
    /// (Models with a tracer, after H5 on a half that sends to it.) Load the tracer cell
    /// pointer (`Loc::Tracer`, Acquire).
    Tracer,
    /// Use the loaded cell (send the trace message; for the meta tracer, optionally answer
    /// `remove`: compare-and-swap the pointer to NIL), then go on to H6.
    Send,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hit {
    pub func: u8,
    pub step: HitStep,
    pub head: u8,
    pub at: u8,
    pub ix: u8,
    /// A commit (flip) happened during this hit.
    pub spans_flip: bool,
    /// Nodes (bit mask) on the function's chain when the hit began (H1).
    pub linked: u8,
    /// Nodes (bit mask) the hit acted on (H5).
    pub visited: u8,
    /// The tracer cell it loaded ([`HitStep::Tracer`]), or [`NIL`].
    pub cell: u8,
}

/// Where a scheduler is in a call_time charge (a return, an exception unwinding, a
/// schedule-out, the previous-function charge of a hit: each is `get_time_break`, which walks
/// the function's slot and `next` links to the session's node whatever the instruction word
/// says, then reaches the counter through `data[active]` at that moment; `collect.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChargeStep {
    /// A dirty scheduler takes the dirty lock (`acquire_bp_sched_ix`).
    Lock,
    /// Read the charged function's breakpoint slot (a relaxed load; stale if its view holds an
    /// older value), then the node's session.
    Slot,
    /// Read `next` of the node it stands on (another session's), then the next node's session.
    Next,
    /// Read the active index.
    Ix,
    /// Read `data[ix]` of the charged function's node: its flags and counter object.
    Half,
    /// Add to the object's table (its own, or the shared slot under the lock).
    Write,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Charge {
    pub step: ChargeStep,
    /// The node it stands on ([`NIL`] before the slot read).
    pub at: u8,
    pub ix: u8,
    /// The object it writes (after [`ChargeStep::Half`]).
    pub obj: u8,
}

/// One `BpTimemTrace`: per-scheduler tables and the shared slot, as charge counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TmObj {
    /// A temporary of a collection.
    pub temp: bool,
    pub freed: bool,
    /// Charges per table: index `s` scheduler `s`'s table, the last one the shared slot.
    pub cnt: InlineVec<u8, { MAX_SCHEDS + 1 }>,
    /// Schedulers (bit mask) whose later writes are not ordered after the collector's last read
    /// of this object's tables (cleared like `Node::unseen`).
    pub read_unseen: u8,
    /// A wait began after that read.
    pub read_published: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// Asleep: holds nothing, never holds a wait back.
    #[default]
    Asleep,
    /// Awake between hits (between processes or between calls of one process).
    Idle,
    /// Inside a breakpoint hit.
    Hit(Hit),
    /// Inside a call_time charge.
    Charge(Charge),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sched {
    pub mode: Mode,
    /// Per location: an older value it may still read, or [`FRESH`].
    pub stale: Locs,
    /// Passed a progress point (or slept) since the current wait began.
    pub counted: bool,
    /// Passed a progress point since the latest wait began (for `wait-without-new-period`).
    pub point_since_begin: bool,
    /// Acted on the new settings of the current trace_pattern (I3).
    pub saw_new: bool,
}

/// The stager's position in the script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    Stage,
    W0,
    Install,
    W1,
    Commit,
    W2,
    Uninstall,
    W3,
    Consolidate,
    W4,
    Free,
    /// The collection (`StagerOp::Collect`; its C1, temporaries into the staging half, is its
    /// `Stage` step).
    Tw1,
    /// C2: flip (the temporaries become active).
    CFlip,
    Tw2,
    /// C3: read the real tables.
    CRead,
    /// The wait that fixes finding F2 (docs/collection.md §5).
    Tw2b,
    /// C4: flip back.
    CFlipBack,
    Tw3,
    /// C5: merge the temporaries into the real object's shared slot under the dirty lock.
    CMerge,
    /// C6: halves equal again, free the temporaries.
    CFree,
}

impl Phase {
    pub fn wait_number(self) -> Option<u8> {
        match self {
            Phase::W0 => Some(0),
            Phase::W1 => Some(1),
            Phase::W2 => Some(2),
            Phase::W3 => Some(3),
            Phase::W4 => Some(4),
            Phase::Tw1 => Some(5),
            Phase::Tw2 => Some(6),
            Phase::Tw2b => Some(7),
            Phase::Tw3 => Some(8),
            _ => None,
        }
    }

    /// The wait's name in narrations.
    pub fn wait_name(self) -> &'static str {
        match self {
            Phase::W0 => "W0",
            Phase::W1 => "W1",
            Phase::W2 => "W2",
            Phase::W3 => "W3",
            Phase::W4 => "W4",
            Phase::Tw1 => "TW1",
            Phase::Tw2 => "TW2",
            Phase::Tw2b => "TW2b",
            Phase::Tw3 => "TW3",
            _ => "?",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stager {
    /// Index of the current script op (`== script.len()` when done).
    pub op: u8,
    pub phase: Phase,
    /// Inside a wait (it began and has not completed).
    pub waiting: bool,
    pub free_list: NodeList,
    /// Functions whose instruction this op patched / restored (I3 classification).
    pub patched: u8,
    pub restored: u8,
    /// This op has flipped the active index.
    pub committed: bool,
    /// The collection's real and temporary objects ([`NIL`] outside a collection).
    pub real: u8,
    pub temp: u8,
}

/// A violation detected at a step (the state is then terminal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    /// I2: a scheduler read a half of a node that the stager wrote and that is not published to
    /// it (the read races with the write).
    TornHalf { sched: u8, node: u8, half: u8 },
    /// I2: a scheduler read a field of a node whose allocation is not published to it.
    UnpublishedNode { sched: u8, node: u8 },
    /// A scheduler executed the breakpoint instruction but read an empty slot.
    EmptySlot { sched: u8, func: u8 },
    /// I3: a scheduler acted on the old settings after acting on the new ones.
    OldAfterNew { sched: u8, func: u8 },
    /// CT1: the collector read a table its writer was writing (`during`), or a scheduler wrote a
    /// table with no order after the collector's read of it.
    TableRace { sched: u8, obj: u8, during: bool },
    /// CT1: the collector wrote the shared slot while a dirty scheduler was writing it.
    SharedSlotRace { sched: u8, obj: u8 },
    /// CT2: a scheduler charged a freed temporary.
    TempUseAfterFree { sched: u8, obj: u8 },
    /// A hit ended without acting on a node linked before it began and still linked
    /// and active when it ended.
    MissedNode { sched: u8, func: u8, node: u8 },
    /// A scheduler used (sent through, or compare-and-swapped) a tracer cell the stager has
    /// freed.
    FreedTracer { sched: u8, cell: u8 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    /// Current value per location.
    pub cur: Locs,
    /// Locations written since the latest wait began (bit per location index).
    pub dirty: u32,
    /// Per dirty location: its value when the latest wait began ([`FRESH`] when clean).
    pub published: Locs,
    pub nodes: InlineVec<Node, MAX_NODES>,
    pub scheds: InlineVec<Sched, MAX_SCHEDS>,
    pub stager: Stager,
    pub violation: Option<Violation>,
    /// call_time counter objects.
    pub objs: InlineVec<TmObj, MAX_OBJS>,
    /// Charges begun / landed in a table.
    pub started: u8,
    pub charged: u8,
    /// The scheduler holding the dirty lock, or [`NIL`].
    pub lock: u8,
    /// A hit acted on a running call_time counter of the counted function and session: from
    /// then on some process has a call_time frame or pbt naming it, so a return, an exception
    /// or a schedule-out may charge it (walk its slot) at any time (models with calls).
    pub timem_entered: bool,
    /// Tracer cells ever published (`Loc::Tracer`): freed or not.
    pub cells: InlineVec<bool, MAX_CELLS>,
    /// Cells a hit's compare-and-swap unpublished (the meta tracer's retire list), waiting for
    /// the stager to take them.
    pub retired: CellList,
    /// Cells the stager unpublished or took off the retire list, freed at its `Free` step.
    pub cell_free: CellList,
}

impl State {
    pub fn initial(cfg: &Config) -> State {
        let nlocs = 2 * cfg.functions as usize + 2 + cfg.max_nodes();
        let mut cur = Locs::filled(NIL, nlocs);
        // The meta tracer starts with a cell (the tracer given with the meta pattern, published
        // with the node's half by W0/W1); a session starts with no tracer.
        let mut cells = InlineVec::new();
        if cfg.tracer() == Some(true) {
            cur[Loc::Tracer.index(cfg.functions)] = 0;
            cells.push(false);
        }
        for f in 0..cfg.functions {
            cur[Loc::Instr(f).index(cfg.functions)] = ORIG;
        }
        cur[Loc::Ix.index(cfg.functions)] = 0;
        State {
            cur,
            dirty: 0,
            published: Locs::filled(FRESH, nlocs),
            nodes: InlineVec::new(),
            scheds: (0..cfg.schedulers)
                .map(|_| Sched {
                    mode: Mode::Idle,
                    stale: Locs::filled(FRESH, nlocs),
                    counted: false,
                    point_since_begin: false,
                    saw_new: false,
                })
                .collect(),
            stager: Stager {
                op: 0,
                phase: Phase::Stage,
                waiting: false,
                free_list: NodeList::new(),
                patched: 0,
                restored: 0,
                committed: false,
                real: NIL,
                temp: NIL,
            },
            violation: None,
            objs: InlineVec::new(),
            started: 0,
            charged: 0,
            lock: NIL,
            timem_entered: false,
            cells,
            retired: CellList::new(),
            cell_free: CellList::new(),
        }
    }

    pub fn get(&self, cfg: &Config, l: Loc) -> u8 {
        self.cur[l.index(cfg.functions)]
    }

    pub fn active_ix(&self, cfg: &Config) -> u8 {
        self.get(cfg, Loc::Ix)
    }

    /// The stager has finished its script.
    pub fn done(&self, cfg: &Config) -> bool {
        self.stager.op as usize == cfg.script.len()
    }

    /// Between two trace_pattern calls (or before the first, or after the last): "at rest".
    pub fn at_rest(&self) -> bool {
        self.stager.phase == Phase::Stage && !self.stager.waiting
    }

    /// The chain of function `f`, from the slot through `next` links.
    pub fn chain(&self, cfg: &Config, f: u8) -> NodeList {
        let mut v = NodeList::new();
        let mut g = self.get(cfg, Loc::Slot(f));
        while g != NIL {
            assert!(v.len() <= self.nodes.len(), "cycle in the chain of f{f}");
            v.push(g);
            g = self.get(cfg, Loc::Next(g));
        }
        v
    }

    /// Canonical representative under permutation of schedulers (symmetry reduction): sort the
    /// schedulers and renumber the scheduler bit masks of the nodes to match.
    pub fn representative(&self) -> State {
        let n = self.scheds.len();
        let mut perm = [0usize; MAX_SCHEDS];
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i;
        }
        let perm = &mut perm[..n];
        perm.sort_by(|&a, &b| self.scheds[a].cmp(&self.scheds[b]));
        let mut s = *self;
        for (j, &i) in perm.iter().enumerate() {
            s.scheds[j] = self.scheds[i];
        }
        let remap = |m: u8| -> u8 {
            let mut r = 0;
            for (j, &i) in perm.iter().enumerate() {
                if m & (1 << i) != 0 {
                    r |= 1 << j;
                }
            }
            r
        };
        for node in s.nodes.iter_mut() {
            for u in &mut node.unseen {
                *u = remap(*u);
            }
        }
        for (o, orig) in s.objs.iter_mut().zip(self.objs.iter()) {
            o.read_unseen = remap(o.read_unseen);
            // The tables are per scheduler: renumber them too (the shared slot stays last).
            for (j, &i) in perm.iter().enumerate() {
                o.cnt[j] = orig.cnt[i];
            }
        }
        if s.lock != NIL {
            s.lock = perm.iter().position(|&i| i == s.lock as usize).unwrap() as u8;
        }
        s
    }
}

/// A byte buffer the state is packed into for hashing (its live parts only; see [`State::pack`]).
pub struct Packed {
    len: usize,
    buf: [u8; PACKED_MAX],
}

/// Upper bound on a packed state's bytes (`State::pack` asserts it).
pub const PACKED_MAX: usize = 16
    + 2 * (1 + MAX_LOCS)
    + 1
    + MAX_NODES * 12
    + 1
    + MAX_SCHEDS * (12 + 1 + MAX_LOCS)
    + 10
    + 1
    + MAX_NODES
    + 4
    + 1
    + MAX_OBJS * (4 + MAX_SCHEDS + 1)
    + 3 * (1 + MAX_CELLS);

impl Default for Packed {
    fn default() -> Packed {
        Packed::new()
    }
}

impl Packed {
    pub const fn new() -> Packed {
        Packed {
            len: 0,
            buf: [0; PACKED_MAX],
        }
    }

    fn put(&mut self, b: &[u8]) {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }

    fn u8(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    /// A length-prefixed byte list.
    fn list(&mut self, b: &[u8]) {
        self.u8(b.len() as u8);
        self.put(b);
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

fn bools(b: &[bool]) -> u8 {
    b.iter()
        .enumerate()
        .fold(0, |m, (i, &x)| m | (x as u8) << i)
}

impl Mode {
    fn pack(&self, p: &mut Packed) {
        match *self {
            // The tag fixes the record's length (1, 1, 10 or 5 bytes): still injective.
            Mode::Asleep => p.u8(0),
            Mode::Idle => p.u8(1),
            Mode::Hit(h) => p.put(&[
                2,
                h.func,
                h.step as u8,
                h.head,
                h.at,
                h.ix,
                h.spans_flip as u8,
                h.linked,
                h.visited,
                h.cell,
            ]),
            Mode::Charge(c) => p.put(&[3, c.step as u8, c.at, c.ix, c.obj]),
        }
    }
}

impl Violation {
    fn pack(v: &Option<Violation>) -> [u8; 4] {
        use Violation::*;
        match *v {
            None => [0; 4],
            Some(TornHalf { sched, node, half }) => [1, sched, node, half],
            Some(UnpublishedNode { sched, node }) => [2, sched, node, 0],
            Some(EmptySlot { sched, func }) => [3, sched, func, 0],
            Some(OldAfterNew { sched, func }) => [4, sched, func, 0],
            Some(TableRace { sched, obj, during }) => [5, sched, obj, during as u8],
            Some(SharedSlotRace { sched, obj }) => [6, sched, obj, 0],
            Some(TempUseAfterFree { sched, obj }) => [7, sched, obj, 0],
            Some(MissedNode { sched, func, node }) => [8, sched, func, node],
            Some(FreedTracer { sched, cell }) => [9, sched, cell, 0],
        }
    }
}

impl State {
    /// Every live field, packed as bytes: fixed-size records and length-prefixed lists, so two
    /// states pack equal exactly when they are equal (`==`). Hashing the packed bytes in one
    /// call is what the checker's fingerprint costs (instead of a hasher call per field).
    pub fn pack(&self, p: &mut Packed) {
        p.put(&self.dirty.to_le_bytes());
        p.list(&self.cur);
        p.list(&self.published);
        p.u8(self.nodes.len() as u8);
        for n in self.nodes.iter() {
            p.put(&[
                n.func,
                n.session,
                n.half[0],
                n.half[1],
                n.tm[0],
                n.tm[1],
                n.to_insert,
                n.unlinked as u8 | (n.freed as u8) << 1,
                n.unseen[0],
                n.unseen[1],
                n.unseen[2],
                bools(&n.published) | bools(&n.released) << 3,
            ]);
        }
        p.u8(self.scheds.len() as u8);
        for x in self.scheds.iter() {
            x.mode.pack(p);
            p.u8(bools(&[x.counted, x.point_since_begin, x.saw_new]));
            p.list(&x.stale);
        }
        let st = &self.stager;
        p.put(&[
            st.op,
            st.phase as u8,
            bools(&[st.waiting, st.committed]),
            st.patched,
            st.restored,
            st.real,
            st.temp,
        ]);
        p.list(&st.free_list);
        // No violation is one byte (tag 0); a violation is its 4-byte record (tag 1..=9).
        match self.violation {
            None => p.u8(0),
            v => p.put(&Violation::pack(&v)),
        }
        p.u8(self.objs.len() as u8);
        for o in self.objs.iter() {
            p.put(&[bools(&[o.temp, o.freed, o.read_published]), o.read_unseen]);
            p.list(&o.cnt);
        }
        p.put(&[
            self.started,
            self.charged,
            self.lock,
            self.timem_entered as u8,
        ]);
        p.u8(self.cells.len() as u8);
        p.u8(bools(&self.cells));
        p.list(&self.retired);
        p.list(&self.cell_free);
    }

    /// The packed bytes.
    pub fn packed(&self) -> Vec<u8> {
        let mut p = Packed::new();
        self.pack(&mut p);
        p.bytes().to_vec()
    }
}

thread_local! {
    /// The buffer [`State`]'s `Hash` packs into, one per thread and reused: a fresh [`Packed`]
    /// per hash would zero its `PACKED_MAX` bytes each time (a `memset` call, 2.9 % of
    /// `s3f2x2`'s time in a profile). Only the first `len` bytes are ever read.
    static HASH_BUF: std::cell::RefCell<Packed> = const { std::cell::RefCell::new(Packed::new()) };
}

impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        HASH_BUF.with_borrow_mut(|p| {
            p.len = 0;
            self.pack(p);
            h.write(p.bytes());
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::named_models;

    /// Every named model fits the inline capacities, and packing tells its initial state from a
    /// step later.
    #[test]
    fn named_models_fit_the_packed_state() {
        for (name, _, cfg) in named_models() {
            cfg.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
            let s = State::initial(&cfg);
            let mut t = s;
            t.scheds[0].counted = true;
            assert_ne!(s.packed(), t.packed(), "{name}");
        }
        eprintln!("State: {} bytes", std::mem::size_of::<State>());
    }

    /// Packing is injective: over the first states (breadth first) of models with hits, two
    /// sessions, charges, collections and tracer cells, two states that pack to the same bytes
    /// are equal (so the checker's fingerprint of the packed bytes tells states apart as `==`
    /// does).
    #[test]
    fn packing_tells_states_apart() {
        use std::collections::{HashMap, VecDeque};
        for name in ["s2f2x1", "s2f1x2", "t2f1p", "c2f1", "m2f1"] {
            let cfg = crate::model::model_config(name).unwrap();
            let mut seen: HashMap<Vec<u8>, State> = HashMap::new();
            let mut queue = VecDeque::from([State::initial(&cfg)]);
            let mut actions = Vec::new();
            while let Some(s) = queue.pop_front() {
                if seen.len() >= 20_000 {
                    break;
                }
                match seen.get(&s.packed()) {
                    Some(t) => {
                        assert_eq!(*t, s, "{name}: two states pack equal");
                        continue;
                    }
                    None => seen.insert(s.packed(), s),
                };
                cfg.enabled(&s, &mut actions);
                for a in actions.drain(..) {
                    let mut n = s;
                    cfg.apply(&mut n, a, &mut None);
                    queue.push_back(n);
                }
            }
            assert!(seen.len() > 1_000, "{name}: {} states", seen.len());
        }
    }
}
