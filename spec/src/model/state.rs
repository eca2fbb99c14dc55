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
use super::inline::{InlineVec, Slots};

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

/// The capacities of a state's inline lists, as types ([`InlineVec`]s of the right lengths): a
/// state is [`StateOf<K>`], so a model whose script needs less than the largest model can run
/// on a smaller state ([`Small`]), which moves fewer bytes per successor (`next_state`'s copy,
/// the checker's queue). [`Full`] holds every model (`Config::validate`); the model's code is
/// generic over `K`, and [`State`] is `StateOf<Full>`.
pub trait Caps:
    Copy + Default + std::fmt::Debug + Eq + Ord + std::hash::Hash + Send + Sync + 'static
{
    /// One byte per memory location.
    type Locs: Slots<u8>;
    /// Node indices (a chain, the free list).
    type NodeList: Slots<u8>;
    /// Tracer cell indices.
    type CellList: Slots<u8>;
    type Nodes: Slots<Node>;
    type Scheds: Slots<Sched<Self>>;
    type Objs: Slots<TmObj>;
    type Cells: Slots<bool>;
}

/// Every model's capacities (`MAX_SCHEDS`, `MAX_NODES`, `MAX_LOCS`, `MAX_OBJS`, `MAX_CELLS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Full;

impl Caps for Full {
    type Locs = Locs;
    type NodeList = NodeList;
    type CellList = CellList;
    type Nodes = InlineVec<Node, MAX_NODES>;
    type Scheds = InlineVec<Sched<Full>, MAX_SCHEDS>;
    type Objs = InlineVec<TmObj, MAX_OBJS>;
    type Cells = InlineVec<bool, MAX_CELLS>;
}

/// The capacities of `s2f2x1` (`bpspec rate`): 2 schedulers, 5 nodes, 12 locations (2
/// functions), no counter object, no tracer cell. `Config::fits` says which models fit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Small;

impl Caps for Small {
    type Locs = InlineVec<u8, 12>;
    type NodeList = InlineVec<u8, 5>;
    type CellList = InlineVec<u8, 0>;
    type Nodes = InlineVec<Node, 5>;
    type Scheds = InlineVec<Sched<Small>, 2>;
    type Objs = InlineVec<TmObj, 0>;
    type Cells = InlineVec<bool, 0>;
}

impl Config {
    /// `K`'s capacities hold every state of this (valid) model: its schedulers, the nodes,
    /// locations, counter objects and tracer cells its script may need (the limits
    /// `Config::validate` checks against [`Full`]).
    pub fn fits<K: Caps>(&self) -> bool {
        let nodes = self.max_nodes();
        self.validate().is_ok()
            && self.schedulers as usize <= K::Scheds::CAP
            && nodes <= K::Nodes::CAP
            && nodes <= K::NodeList::CAP
            && 2 * self.functions as usize + 2 + nodes <= K::Locs::CAP
            && self.max_objs() <= K::Objs::CAP
            && self.max_cells() <= K::Cells::CAP
            && self.max_cells() <= K::CellList::CAP
    }
}

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

/// One `GenericBp`: one session's breakpoint on one function. Its fields are bytes in a fixed
/// order (`repr(C)`: no padding, alignment 1), so [`State::words`] reads its first eight as one
/// word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C)]
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
pub struct Sched<K: Caps = Full> {
    pub mode: Mode,
    /// Per location: an older value it may still read, or [`FRESH`].
    pub stale: K::Locs,
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
pub struct Stager<K: Caps = Full> {
    /// Index of the current script op (`== script.len()` when done).
    pub op: u8,
    pub phase: Phase,
    /// Inside a wait (it began and has not completed).
    pub waiting: bool,
    pub free_list: K::NodeList,
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
pub struct StateOf<K: Caps> {
    /// Current value per location.
    pub cur: K::Locs,
    /// Locations written since the latest wait began (bit per location index).
    pub dirty: u32,
    /// Per dirty location: its value when the latest wait began ([`FRESH`] when clean).
    pub published: K::Locs,
    pub nodes: K::Nodes,
    pub scheds: K::Scheds,
    pub stager: Stager<K>,
    pub violation: Option<Violation>,
    /// call_time counter objects.
    pub objs: K::Objs,
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
    pub cells: K::Cells,
    /// Cells a hit's compare-and-swap unpublished (the meta tracer's retire list), waiting for
    /// the stager to take them.
    pub retired: K::CellList,
    /// Cells the stager unpublished or took off the retire list, freed at its `Free` step.
    pub cell_free: K::CellList,
}

/// The state of every model (the capacities of [`Full`]).
pub type State = StateOf<Full>;

impl<K: Caps> StateOf<K> {
    pub fn initial(cfg: &Config) -> StateOf<K> {
        let nlocs = 2 * cfg.functions as usize + 2 + cfg.max_nodes();
        let mut cur = K::Locs::filled(NIL, nlocs);
        // The meta tracer starts with a cell (the tracer given with the meta pattern, published
        // with the node's half by W0/W1); a session starts with no tracer.
        let mut cells = K::Cells::new();
        if cfg.tracer() == Some(true) {
            cur[Loc::Tracer.index(cfg.functions)] = 0;
            cells.push(false);
        }
        for f in 0..cfg.functions {
            cur[Loc::Instr(f).index(cfg.functions)] = ORIG;
        }
        cur[Loc::Ix.index(cfg.functions)] = 0;
        StateOf {
            cur,
            dirty: 0,
            published: K::Locs::filled(FRESH, nlocs),
            nodes: K::Nodes::new(),
            scheds: (0..cfg.schedulers)
                .map(|_| Sched {
                    mode: Mode::Idle,
                    stale: K::Locs::filled(FRESH, nlocs),
                    counted: false,
                    point_since_begin: false,
                    saw_new: false,
                })
                .collect(),
            stager: Stager {
                op: 0,
                phase: Phase::Stage,
                waiting: false,
                free_list: K::NodeList::new(),
                patched: 0,
                restored: 0,
                committed: false,
                real: NIL,
                temp: NIL,
            },
            violation: None,
            objs: K::Objs::new(),
            started: 0,
            charged: 0,
            lock: NIL,
            timem_entered: false,
            cells,
            retired: K::CellList::new(),
            cell_free: K::CellList::new(),
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
    pub fn chain(&self, cfg: &Config, f: u8) -> K::NodeList {
        let mut v = K::NodeList::new();
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
    pub fn representative(&self) -> StateOf<K> {
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
            for u in node.unseen.iter_mut() {
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

/// Pairs of words a state is digested as at most (`State::words`; asserted in
/// `named_models_fit_the_packed_state`): five of fixed fields, one per node, two per scheduler,
/// one per two counter objects.
pub const MAX_PAIRS: usize = 5 + MAX_NODES + 2 * MAX_SCHEDS + MAX_OBJS.div_ceil(2);

/// The keys of the digest: one per word position (splitmix64 from a fixed seed, so the
/// fingerprints are the same in every build and run, as stateright's own hasher keys are).
const KEYS: [u64; 2 * MAX_PAIRS] = {
    let mut k = [0u64; 2 * MAX_PAIRS];
    let mut x: u64 = 0x6a09_e667_f3bc_c909;
    let mut i = 0;
    while i < k.len() {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        k[i] = z ^ (z >> 31);
        i += 1;
    }
    k
};

/// The folded multiply (the 128-bit product's halves xored): ahash's and wyhash's mixing step.
#[inline(always)]
fn mum(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// Little-endian bytes as a word (at most 8), shifted together in registers: bytes stored
/// one by one into a buffer and loaded back as a word stall the load (no store forwarding).
#[inline(always)]
fn word(b: &[u8]) -> u64 {
    b.iter()
        .take(8)
        .enumerate()
        .fold(0, |w, (i, &x)| w | (x as u64) << (8 * i))
}

/// Bytes as a word: one load where there are 8 of them, else [`word`].
#[inline(always)]
fn load(b: &[u8]) -> u64 {
    match b.first_chunk::<8>() {
        Some(w) => u64::from_le_bytes(*w),
        None => word(b),
    }
}

/// A location list (its `MAX_LOCS` slots, spare ones 0) as two words.
#[inline(always)]
fn locs<L: Slots<u8>>(l: &L) -> (u64, u64) {
    const { assert!(L::CAP <= 16, "a location list is two words") };
    let b = l.raw();
    let (lo, hi) = b.split_at(b.len().min(8));
    (load(lo), load(hi))
}

/// Booleans as the bits of a byte (at most 8).
#[inline(always)]
fn bools(b: &[bool]) -> u8 {
    b.iter()
        .enumerate()
        .fold(0, |m, (i, &x)| m | (x as u8) << i)
}

/// A short byte list (length and every slot) as one word.
#[inline(always)]
fn short<L: Slots<u8>>(l: &L) -> u64 {
    const { assert!(L::CAP < 8, "a short list is one word") };
    l.len() as u64 | word(l.raw()) << 8
}

impl Mode {
    /// The tag and its record, in two words.
    #[inline(always)]
    fn words(&self) -> (u64, u64) {
        match *self {
            Mode::Asleep => (0, 0),
            Mode::Idle => (1, 0),
            Mode::Hit(h) => (
                word(&[
                    2,
                    h.func,
                    h.step as u8,
                    h.head,
                    h.at,
                    h.ix,
                    h.spans_flip as u8,
                    h.cell,
                ]),
                word(&[h.linked, h.visited]),
            ),
            Mode::Charge(c) => (word(&[3, c.step as u8, c.at, c.ix, c.obj]), 0),
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

impl<K: Caps> StateOf<K> {
    /// Every field as pairs of 64-bit words, handed to `pair` in a fixed order: the fixed fields
    /// (their lists' lengths among them) first, then one pair per node, two per scheduler and
    /// one per two counter objects. Whole inline lists are read, spare slots included (always
    /// `T::default()`, inline.rs), so no byte is copied one at a time; with the lengths in the
    /// first pairs, two states give the same words exactly when they are equal (`==`;
    /// `tests::words_tell_states_apart`).
    #[inline(always)]
    pub fn words(&self, mut pair: impl FnMut(u64, u64)) {
        let (c0, c1) = locs(&self.cur);
        pair(c0, c1);
        let (p0, p1) = locs(&self.published);
        pair(p0, p1);
        let v = u32::from_le_bytes(Violation::pack(&self.violation));
        pair(
            self.dirty as u64 | (v as u64) << 32,
            word(&[
                self.started,
                self.charged,
                self.lock,
                self.timem_entered as u8,
                self.cells.len() as u8,
                bools(&self.cells),
                self.nodes.len() as u8,
                self.scheds.len() as u8,
            ]),
        );
        let st = &self.stager;
        pair(
            word(&[
                st.op,
                st.phase as u8,
                bools(&[st.waiting, st.committed]),
                st.patched,
                st.restored,
                st.real,
                st.temp,
                self.objs.len() as u8,
            ]),
            short(&st.free_list) | (self.cur.len() as u64) << 56,
        );
        pair(
            short(&self.retired) | (self.published.len() as u64) << 56,
            short(&self.cell_free),
        );
        for n in self.nodes.iter() {
            // The first eight fields in their order in memory (one load), then the rest.
            pair(
                word(&[
                    n.func,
                    n.session,
                    n.half[0],
                    n.half[1],
                    n.tm[0],
                    n.tm[1],
                    n.to_insert,
                    n.unlinked as u8,
                ]),
                word(&[n.freed as u8, n.unseen[0], n.unseen[1], n.unseen[2]])
                    | (bools(&[
                        n.published[0],
                        n.published[1],
                        n.published[2],
                        n.released[0],
                        n.released[1],
                        n.released[2],
                    ]) as u64)
                        << 32,
            );
        }
        for x in self.scheds.iter() {
            let (m0, m1) = x.mode.words();
            let flags = bools(&[x.counted, x.point_since_begin, x.saw_new]);
            pair(m0, m1 | (flags as u64) << 16 | (x.stale.len() as u64) << 24);
            let (s0, s1) = locs(&x.stale);
            pair(s0, s1);
        }
        let obj = |o: &TmObj| -> u64 {
            const { assert!(MAX_SCHEDS + 1 <= 5, "a counter object is one word") };
            word(&[
                bools(&[o.temp, o.freed, o.read_published]),
                o.read_unseen,
                o.cnt.len() as u8,
            ]) | word(o.cnt.raw()) << 24
        };
        for two in self.objs.chunks(2) {
            pair(obj(&two[0]), two.get(1).map_or(0, obj));
        }
    }

    /// The 64-bit digest the checker's fingerprint is taken of: the sum over the pairs of
    /// [`State::words`] of a folded multiply of each with its position's keys (the pairs are
    /// independent, so the multiplies run side by side). Equal states have equal digests; different ones collide with
    /// the odds of a 64-bit hash (the state counts of spec/tests/spec_counts.rs would move).
    #[inline]
    pub fn digest(&self) -> u64 {
        let mut acc = 0u64;
        let mut i = 0usize;
        self.words(|a, b| {
            acc = acc.wrapping_add(mum(a ^ KEYS[2 * i], b ^ KEYS[2 * i + 1]));
            i += 1;
        });
        debug_assert!(i <= MAX_PAIRS, "{i} pairs exceed MAX_PAIRS");
        // No finishing multiply of its own: the fingerprint hasher mixes the word
        // (`Hash for StateOf`), and the number of pairs follows from the lengths in the first.
        acc
    }

    /// The words of [`State::words`] in a vector (tests, `bpspec` diagnostics).
    pub fn word_list(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(2 * MAX_PAIRS);
        self.words(|a, b| v.extend([a, b]));
        v
    }
}

impl<K: Caps> std::hash::Hash for StateOf<K> {
    /// One word: the digest ([`State::digest`]). The fingerprint hasher gets a single
    /// `write_u64` instead of a fold over a packed byte buffer.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.digest());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::named_models;

    /// Every named model fits the inline capacities, and the words tell its initial state from a
    /// step later.
    #[test]
    fn named_models_fit_the_packed_state() {
        for (name, _, cfg) in named_models() {
            cfg.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
            let s = State::initial(&cfg);
            let mut t = s;
            t.scheds[0].counted = true;
            assert_ne!(s.word_list(), t.word_list(), "{name}");
            assert_ne!(s.digest(), t.digest(), "{name}");
        }
        eprintln!(
            "State: {} bytes, StateOf<Small>: {} bytes",
            std::mem::size_of::<State>(),
            std::mem::size_of::<StateOf<Small>>()
        );
        let s2 = crate::model::model_config("s2f2x1").unwrap();
        assert!(s2.fits::<Small>() && s2.fits::<Full>());
        let c2 = crate::model::model_config("c2f1").unwrap();
        assert!(!c2.fits::<Small>() && c2.fits::<Full>());
    }

    /// The words are injective: over the first states (breadth first) of models with hits, two
    /// sessions, charges, collections and tracer cells, two states with the same words are
    /// equal, no two different states share a digest, and no state has more than
    /// [`MAX_PAIRS`] pairs (so the checker's fingerprint of the digest tells states apart as
    /// `==` does, up to the odds of a 64-bit hash).
    #[test]
    fn words_tell_states_apart() {
        for name in ["s2f2x1", "s2f1x2", "t2f1p", "c2f1", "m2f1"] {
            words_apart::<Full>(name);
        }
        // The same on the smaller state, for the models that fit it.
        for name in ["s2f2x1", "s2f1x2"] {
            words_apart::<Small>(name);
        }
    }

    /// [`words_tell_states_apart`] for one model on `StateOf<K>`.
    fn words_apart<K: Caps>(name: &str) {
        use std::collections::{HashMap, VecDeque};
        let cfg = crate::model::model_config(name).unwrap();
        assert!(cfg.fits::<K>(), "{name}");
        let mut seen: HashMap<Vec<u64>, StateOf<K>> = HashMap::new();
        let mut digests: HashMap<u64, StateOf<K>> = HashMap::new();
        let mut queue = VecDeque::from([StateOf::<K>::initial(&cfg)]);
        let mut actions = Vec::new();
        while let Some(s) = queue.pop_front() {
            if seen.len() >= 20_000 {
                break;
            }
            let w = s.word_list();
            assert!(w.len() <= 2 * MAX_PAIRS, "{name}: {} words", w.len());
            match seen.get(&w) {
                Some(t) => {
                    assert_eq!(*t, s, "{name}: two states have the same words");
                    continue;
                }
                None => seen.insert(w, s),
            };
            let t = *digests.entry(s.digest()).or_insert(s);
            assert_eq!(t, s, "{name}: two states share a digest");
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
