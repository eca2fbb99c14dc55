//! A torture scheduler thread: its processes call, tail-call, return, raise, allocate and are
//! scheduled out and in (sometimes in the middle of a call), with a progress point after every
//! slice and now and then a sleep. It counts the calls it makes to the phase's stable functions
//! while the window is open, and at each close returns every frame and publishes the counts.

use super::{panic_message, Rng, Violation};
use crate::code::FuncId;
use crate::engine::Engine;
use crate::hit::{Process, Scheduler};
use crate::process::Proc;
use crate::progress::{Qsbr, ThreadProgress};
use crate::term::Term;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `ctl`: `phase << 2 | OPEN | STOP`.
pub(crate) const OPEN: u64 = 1;
pub(crate) const STOP: u64 = 2;

/// Deepest call stack a torture process builds.
const MAX_DEPTH: usize = 4;

/// Most actions (so most hits) in one slice.
const SLICE_ACTIONS: u64 = 6;

/// Slices a scheduler runs between two publications of its hits (and checks of the pace).
const BATCH_SLICES: u64 = 16;

/// Most hits a scheduler makes between two checks of the pace: the most it can overshoot the
/// stager's allowance by (the pacing bound of `TortureReport::shortfalls`).
pub(crate) const MAX_BATCH_HITS: u64 = SLICE_ACTIONS * BATCH_SLICES;

/// What a scheduler publishes when it acknowledges a close.
#[derive(Clone, Debug, Default)]
pub(crate) struct Published {
    /// The phase whose window the counts are from.
    pub phase: u64,
    /// Calls per function made while that phase's window was open (stable functions only).
    pub calls: Vec<u64>,
    /// Clock units advanced and words allocated by this scheduler's processes, since the start.
    pub clock: i64,
    pub words: i64,
}

/// State shared by the stager and the schedulers (plain std atomics: this is the harness, not
/// the engine, and it never runs under loom or shuttle).
pub(crate) struct Shared {
    /// Release by the stager (after it wrote the masks and set the phase's patterns), Acquire
    /// by the schedulers at the start of every slice.
    pub ctl: AtomicU64,
    /// Stable function sets (bit per function) of phase `p` in `masks[p & 1]`.
    pub masks: [AtomicU64; 2],
    /// Per scheduler: the last phase whose close it acknowledged (Release, after `published`).
    pub acked: Vec<AtomicU64>,
    pub published: Vec<Mutex<Published>>,
    pub hits: AtomicU64,
    /// The schedulers wait (asleep, so the stager's grace periods do not wait for them) once
    /// `hits` reached `allow`; the stager raises it by the pace after every churn operation, so
    /// that oversubscribed schedulers cannot starve it (`u64::MAX`: no pacing). Paced, it starts
    /// at 0: before the first window opens the schedulers make one batch each and wait, so
    /// that no hits are made while the stager sets up (on a loaded machine they once made every
    /// hit of the run there, and the run churned only its minimum phases).
    pub allow: AtomicU64,
    /// Times a scheduler waited for the stager.
    pub waits: AtomicU64,
    pub raises: AtomicU64,
    pub schedule_outs: AtomicU64,
    pub failed: AtomicBool,
    pub violation: Mutex<Option<Violation>>,
    pub seed: u64,
}

impl Shared {
    pub(crate) fn new(schedulers: usize, functions: usize, seed: u64, pace: u64) -> Shared {
        Shared {
            ctl: AtomicU64::new(1 << 2),
            masks: [AtomicU64::new(0), AtomicU64::new(0)],
            acked: (0..schedulers).map(|_| AtomicU64::new(0)).collect(),
            published: (0..schedulers)
                .map(|_| {
                    Mutex::new(Published {
                        phase: 0,
                        calls: vec![0; functions],
                        clock: 0,
                        words: 0,
                    })
                })
                .collect(),
            hits: AtomicU64::new(0),
            allow: AtomicU64::new(if pace > 0 { 0 } else { u64::MAX }),
            waits: AtomicU64::new(0),
            raises: AtomicU64::new(0),
            schedule_outs: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            violation: Mutex::new(None),
            seed,
        }
    }

    /// Record the first violation and tell every thread to stop.
    pub(crate) fn fail(&self, thread: String, message: String) {
        let phase = self.ctl.load(Relaxed) >> 2;
        let mut v = self.violation.lock().unwrap_or_else(|e| e.into_inner());
        if v.is_none() {
            *v = Some(Violation {
                thread,
                message,
                seed: self.seed,
                phase,
            });
        }
        self.failed.store(true, Relaxed);
    }
}

/// Parameters a scheduler thread needs.
pub(crate) struct WorkerCfg {
    pub id: usize,
    pub functions: usize,
    pub procs: usize,
    pub dirty: bool,
    pub seed: u64,
    /// The functions are module `m`'s version's ([`super::TortureConfig::versions`]).
    pub versions: bool,
}

/// The thread body: run until STOP or a failure; a panic becomes the run's violation.
pub(crate) fn worker(e: Arc<Engine<Qsbr>>, sh: Arc<Shared>, w: WorkerCfg) {
    let id = w.id;
    let r = catch_unwind(AssertUnwindSafe(|| slices(&e, &sh, &w)));
    if let Err(p) = r {
        sh.fail(format!("scheduler {id}"), panic_message(&*p));
        // The panicking scheduler's registration is gone with its stack frame: mark its
        // progress slot asleep so that the stager's waits (and the other threads) can finish.
        let mut h = e.progress.register(id);
        e.progress.wake(&mut h);
        e.progress.sleep(&mut h);
    }
}

struct Local {
    rng: Rng,
    calls: Vec<u64>,
    clock: i64,
    words: i64,
    hits: u64,
    raises: u64,
    outs: u64,
    /// The functions are module `m`'s version's ([`WorkerCfg::versions`]).
    versions: bool,
}

fn slices(e: &Arc<Engine<Qsbr>>, sh: &Shared, w: &WorkerCfg) {
    let mut s = if w.dirty {
        Scheduler::start_dirty(e.clone(), w.id)
    } else {
        Scheduler::start(e.clone(), w.id)
    };
    s.record = false;
    // Every process is call-traced in every session (bit per session id).
    let mut procs: Vec<Proc> = (0..w.procs)
        .map(|k| {
            let pid = 1000 + 37 * (w.id * w.procs + k) as u64;
            Proc::new(Process {
                pid,
                call_traced: u64::MAX,
            })
        })
        .collect();
    let mut l = Local {
        rng: Rng::new(w.seed),
        calls: vec![0; w.functions],
        clock: 0,
        words: 0,
        hits: 0,
        raises: 0,
        outs: 0,
        versions: w.versions,
    };
    let mut my_phase = 0u64;
    let mut n: u64 = 0;
    loop {
        if sh.failed.load(Relaxed) {
            break;
        }
        // Acquire: pairs with the stager's Release store of `ctl`, so the masks and the
        // phase's patterns (committed, every wait passed) are visible before this slice's calls.
        let c = sh.ctl.load(Acquire);
        if c & STOP != 0 {
            break;
        }
        let phase = c >> 2;
        if phase != my_phase {
            // A close: return every frame (nothing stays inside a stable function), then
            // publish this window's counts.
            for p in procs.iter_mut() {
                drain(&mut s, p, &mut l);
            }
            {
                let mut pb = sh.published[w.id].lock().unwrap_or_else(|e| e.into_inner());
                pb.phase = my_phase;
                pb.calls.copy_from_slice(&l.calls);
                pb.clock = l.clock;
                pb.words = l.words;
            }
            l.calls.iter_mut().for_each(|c| *c = 0);
            // Release: pairs with the stager's Acquire load; `published` is written before.
            sh.acked[w.id].store(phase, Release);
            my_phase = phase;
        }
        let open = c & OPEN != 0;
        let cur = sh.masks[(phase & 1) as usize].load(Relaxed);
        let other = sh.masks[((phase + 1) & 1) as usize].load(Relaxed);
        // Open: the stable functions are counted. Closed: the next phase's stable functions are
        // being set and the last phase's are being read, so neither is called.
        let (counted, avoid) = if open { (cur, 0) } else { (0, cur | other) };
        let k = l.rng.below(procs.len() as u64) as usize;
        slice(&mut s, &mut procs[k], &mut l, w.functions, counted, avoid);
        s.events.clear();
        s.progress();
        n += 1;
        if n % BATCH_SLICES == 0 {
            let h = sh.hits.fetch_add(l.hits, Relaxed) + l.hits;
            sh.raises.fetch_add(l.raises, Relaxed);
            sh.schedule_outs.fetch_add(l.outs, Relaxed);
            (l.hits, l.raises, l.outs) = (0, 0, 0);
            if h >= sh.allow.load(Relaxed) {
                wait_for_stager(&mut s, sh, c, w.id);
                continue;
            }
        }
        if l.rng.chance(1, 512) {
            s.sleep();
            std::thread::yield_now();
            s.wake();
        }
    }
    sh.hits.fetch_add(l.hits, Relaxed);
    sh.raises.fetch_add(l.raises, Relaxed);
    sh.schedule_outs.fetch_add(l.outs, Relaxed);
    // The final clock and words, for the end-of-run bound (the phase and counts stay).
    {
        let mut pb = sh.published[w.id].lock().unwrap_or_else(|e| e.into_inner());
        pb.clock = l.clock;
        pb.words = l.words;
    }
    s.sleep();
}

/// How long a scheduler waits for the stager to make its next churn operation before it reports
/// a liveness violation.
const STAGER_LIVENESS: Duration = Duration::from_secs(120);

/// The schedulers made the hits the stager's last churn operation allowed: wait, asleep (outside
/// thread progress, as an ERTS scheduler with no work), until the stager allows more, the window
/// opens or closes, or the run stops. Bounded by `STAGER_LIVENESS`.
fn wait_for_stager(s: &mut Scheduler<Qsbr>, sh: &Shared, c: u64, id: usize) {
    sh.waits.fetch_add(1, Relaxed);
    s.sleep();
    let t = Instant::now();
    let mut spins = 0u32;
    loop {
        if sh.failed.load(Relaxed)
            || sh.ctl.load(Relaxed) != c
            || sh.hits.load(Relaxed) < sh.allow.load(Relaxed)
        {
            break;
        }
        if t.elapsed() > STAGER_LIVENESS {
            sh.fail(
                format!("scheduler {id}"),
                format!(
                    "liveness: the stager allowed no more hits for {}s",
                    STAGER_LIVENESS.as_secs()
                ),
            );
            break;
        }
        spins += 1;
        if spins < 8 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    s.wake();
}

/// A function to call: not in `avoid` (bounded retries; the stager keeps two functions out of
/// every stable set, so the fallback scan finds one).
fn pick(rng: &mut Rng, functions: usize, avoid: u64) -> FuncId {
    for _ in 0..8 {
        let f = rng.below(functions as u64) as usize;
        if avoid & (1 << f) == 0 {
            return f;
        }
    }
    (0..functions)
        .find(|&f| avoid & (1 << f) == 0)
        .expect("every function avoided")
}

/// One time slice of process `p`: scheduled in, a few actions, scheduled out.
fn slice(
    s: &mut Scheduler<Qsbr>,
    p: &mut Proc,
    l: &mut Local,
    functions: usize,
    counted: u64,
    avoid: u64,
) {
    s.schedule_in(p);
    let actions = 1 + l.rng.below(SLICE_ACTIONS);
    for _ in 0..actions {
        let depth = p.conts.len();
        let r = l.rng.below(100);
        if r < 45 && depth < MAX_DEPTH || depth == 0 && r < 85 {
            let f = pick(&mut l.rng, functions, avoid);
            if l.versions {
                s.call_version_proc(p, 0, f, false, false);
            } else {
                s.call_proc(f, p);
            }
            count(l, f, counted);
            step(s, p, l);
        } else if r < 52 {
            let f = pick(&mut l.rng, functions, avoid);
            if l.versions {
                s.call_version_proc(p, 0, f, true, false);
            } else {
                s.tail_call(f, p);
            }
            count(l, f, counted);
            step(s, p, l);
        } else if r < 88 && depth > 0 {
            s.ret(p);
        } else if r < 93 && depth > 0 {
            let through = 1 + l.rng.below(depth as u64) as usize;
            s.raise(p, "error", Term::Atom("torture"), through);
            l.raises += 1;
        } else {
            step(s, p, l);
        }
    }
    s.schedule_out(p);
    l.outs += 1;
}

fn count(l: &mut Local, f: FuncId, counted: u64) {
    l.hits += 1;
    if counted & (1 << f) != 0 {
        l.calls[f] += 1;
    }
}

/// Time passes and the process allocates.
fn step(s: &mut Scheduler<Qsbr>, p: &mut Proc, l: &mut Local) {
    let dt = l.rng.below(5) as i64;
    let words = l.rng.below(9) as i64;
    s.advance(dt);
    p.alloc(words);
    l.clock += dt;
    l.words += words;
}

/// Return every frame of `p` (scheduled in for it).
fn drain(s: &mut Scheduler<Qsbr>, p: &mut Proc, l: &mut Local) {
    if p.conts.is_empty() {
        return;
    }
    s.schedule_in(p);
    let mut steps = 0;
    while !p.conts.is_empty() {
        steps += 1;
        assert!(
            steps <= MAX_DEPTH + 1,
            "pid {} deeper than {MAX_DEPTH}",
            p.p.pid
        );
        step(s, p, l);
        s.ret(p);
    }
    s.schedule_out(p);
    l.outs += 1;
}
