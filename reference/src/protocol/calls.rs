//! A scheduler's calls into loaded code (docs/nonblocking-load.md): on an engine with a module
//! ([`Engine::with_module`], `load.rs`), every [`Scheduler`] runs one process that calls the
//! module's functions. A remote call ([`Scheduler::call_ext`], ERTS's `call_ext` instruction)
//! reads the active code index and the export entry's address for it and runs that version; a
//! process may stay in the version it entered ([`Scheduler::call_and_stay`], a return address
//! into the version on its stack, what `check_process_code` finds) across progress points and
//! make local calls into it ([`Scheduler::local_call`], direct jumps within the version's code
//! area) until it returns out ([`Scheduler::return_out`]). Each call into a version runs the
//! engine's hit path on that version's code area (`hit.rs::hit_in`), with the process's
//! call_time/call_memory frames on its stack.
//!
//! Under the blocking protocol an awake scheduler holds the shared side of the engine's world
//! lock (`CodeMgmt::world`) from one progress point (or wake-up) to the next, so a loader's
//! exclusive side stops the world; [`Scheduler::progress`], [`Scheduler::sleep`] and
//! [`Scheduler::wake`] also schedule the process out and in (its running call_time charged to
//! the function it is in, in whichever version) and, on an engine made
//! [`Engine::with_kills`], deliver the exit signal of `code:purge/1`.
//!
//! The promise P-load (`load.rs`) is asserted here, in [`Scheduler::call_ext`]'s run of a
//! version: while the version's `promised` flag is set, the call executes the breakpoint.

use crate::bp::flags;
use crate::code_ix::{CodeVersion, ERTS_NUM_CODE_IX};
use crate::engine::Engine;
use crate::export::{Area, VersionArea};
use crate::hit::{Process, Scheduler};
use crate::load::{CallSeen, LoadProtocol};
use crate::process::Proc;
use crate::progress::ThreadProgress;
use crate::readers::{self, Reader};
use crate::sync::Ordering::Relaxed;
use crate::sync::{read, RwLockReadGuard};

/// The engine's name for version `ver`'s code area.
fn area_of(ver: &CodeVersion) -> Area {
    Area::Version(VersionArea(&ver.code))
}

/// A scheduler's process and its place in the module's code, on an engine with a module
/// ([`Scheduler::code`]).
pub(crate) struct InCode {
    /// Blocking protocol: the shared side of the world lock while awake (`CodeMgmt::world`).
    /// Released by `leave`, and by `Drop for Scheduler` before the scheduler's `Arc` of the
    /// engine goes: it borrows `engine.code_mgmt.world`.
    inside: Option<RwLockReadGuard<'static, ()>>,
    calls: u64,
    counted: u64,
    /// The version this scheduler's process executes in across progress points (null: none):
    /// entered by `call_and_stay`, left by `return_out`; `local_call` runs its functions.
    held: *const CodeVersion,
    /// The scheduler's process (pid = the scheduler's id), call-traced in every session: its
    /// pbts and stack carry call_time/call_memory frames naming the versions' functions
    /// (`process::Ci`), charged on return, at the next traced call and when it is scheduled out
    /// (at every progress point and nap).
    proc: Proc,
    /// Processes of this scheduler killed by `code:purge/1` (`take_signals`).
    killed: u64,
    /// The process was killed and no new one has started: its local calls and its return do
    /// nothing (the next remote call is a new process's).
    dead: bool,
    /// The scheduler's other processes ([`Scheduler::add_code_proc`]), scheduled out, in the
    /// order [`Scheduler::switch_proc`] runs them: `proc`, `held` and `dead` above are the
    /// current process's.
    parked: Vec<Parked>,
}

/// A process of the scheduler that is not current (scheduled out): its own frames, pbts and
/// place in the module's code, swapped with the current one's at a process switch.
struct Parked {
    proc: Proc,
    held: *const CodeVersion,
    dead: bool,
}

impl<P: ThreadProgress> Scheduler<P> {
    /// `Scheduler::start` on an engine with a module: the process, the world lock's shared
    /// side, the process scheduled in.
    pub(crate) fn start_in_code(&mut self) {
        let id = self.id;
        self.code = Some(Box::new(InCode {
            inside: None,
            calls: 0,
            counted: 0,
            held: std::ptr::null(),
            proc: Proc::new(Process {
                pid: id as u64,
                call_traced: u64::MAX,
            }),
            killed: 0,
            dead: false,
            parked: Vec::new(),
        }));
        self.with_code(|s, c| {
            s.enter(c);
            s.schedule_in(&mut c.proc);
        });
    }

    /// Run `f` on the scheduler and its code state (taken out for the call, so both can be
    /// borrowed).
    fn with_code<R>(&mut self, f: impl FnOnce(&mut Self, &mut InCode) -> R) -> R {
        let mut c = self
            .code
            .take()
            .expect("a scheduler of an engine with a module (Engine::with_module)");
        // Put back on unwind too: a check that fails panics inside `f`, and the caller (the load
        // torture) still reads the process's figures after it caught that panic.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self, &mut c)));
        self.code = Some(c);
        r.unwrap_or_else(|p| std::panic::resume_unwind(p))
    }

    fn code_ref(&self) -> &InCode {
        self.code
            .as_deref()
            .expect("a scheduler of an engine with a module (Engine::with_module)")
    }

    /// Calls this scheduler made into the module (remote and local).
    pub fn calls(&self) -> u64 {
        self.code_ref().calls
    }

    /// Calls of this scheduler that counted (call_count).
    pub fn counted(&self) -> u64 {
        self.code_ref().counted
    }

    /// Processes of this scheduler killed by `code:purge/1`.
    pub fn killed(&self) -> u64 {
        self.code_ref().killed
    }

    /// The scheduler's process (its call_time/call_memory frames and counts).
    pub fn code_proc(&self) -> &Proc {
        &self.code_ref().proc
    }

    /// The scheduler's process allocates `words` on its heap: call_memory's clock, what its next
    /// call_memory charge (call, return, schedule-out) adds to the function its pbt names.
    pub fn alloc_in_code(&mut self, words: i64) {
        self.code
            .as_deref_mut()
            .expect("a scheduler of an engine with a module (Engine::with_module)")
            .proc
            .alloc(words);
    }

    /// `erlang:trace(Pid, true | false, Flags)` in `session` on the scheduler's process (with a
    /// per-process tracer): what local call trace, its return frames and return_to need to
    /// send anything (the process is call-traced in every session from the start, so
    /// call_time and call_memory need no call).
    pub fn trace_code_proc(
        &mut self,
        session: crate::bp::SessionId,
        on: bool,
        flags: crate::process::ProcFlags,
        tracer: Option<crate::tracer::TracerSpec>,
    ) -> Result<bool, crate::session::SessionError> {
        self.with_code(|s, c| {
            let r = s
                .engine()
                .trace_process(&mut c.proc, session, on, flags, tracer);
            // Still call-traced in every session (call_time and call_memory frames).
            c.proc.p.call_traced = u64::MAX;
            r
        })
    }

    /// The scheduler's process, to replace (the load torture drops a failed scheduler's process
    /// unrun; the torture is not built under loom and shuttle).
    #[cfg(not(any(loom, shuttle)))]
    pub(crate) fn code_proc_mut(&mut self) -> &mut Proc {
        &mut self
            .code
            .as_deref_mut()
            .expect("a scheduler of an engine with a module (Engine::with_module)")
            .proc
    }

    /// Blocking protocol: take the shared side of the world lock (wait here while a loader
    /// holds the world stopped).
    fn enter(&mut self, c: &mut InCode) {
        assert!(c.inside.is_none(), "scheduler {} entered twice", self.id);
        let cm = self.engine().code_mgmt();
        if cm.protocol == LoadProtocol::Blocking {
            let g = read(&cm.world);
            // SAFETY: the guard borrows the world lock of the engine, which lives as long as the
            // Arc in `self.engine`; the guard is dropped by `leave` or by `Drop for Scheduler`,
            // always before that Arc (its body releases it first). Only the lifetime changes,
            // not the type.
            let g: RwLockReadGuard<'static, ()> = unsafe { std::mem::transmute(g) };
            c.inside = Some(g);
        }
    }

    /// Release the shared side (at a progress point, or going to sleep).
    fn leave(c: &mut InCode) {
        c.inside = None;
    }

    /// [`Scheduler::progress`] on an engine with a module: a progress point; under `Blocking`
    /// also the point where a stopped world holds it. The process is scheduled out before it
    /// and back in after.
    pub(crate) fn progress_in_code(&mut self) {
        self.with_code(|s, c| {
            s.schedule_out(&mut c.proc);
            s.thr_progress();
            Self::leave(c);
            s.enter(c);
            s.take_signals(c);
            s.schedule_in(&mut c.proc);
        });
    }

    /// Scheduled in: the process handles its signals first. An exit signal from `code:purge/1`
    /// (the version it is in is marked `kill`) kills it: its frames are dropped without
    /// returning (no return frame runs, no charge), its call_time and call_memory pbts are
    /// discarded (ERTS frees them with the process, `delete_process`), and it leaves the
    /// version (`in_code` decremented, what the purger waits for). Its earlier charges, made on
    /// this thread, are before that decrement.
    fn take_signals(&mut self, c: &mut InCode) {
        if c.held.is_null() || !self.engine().code_mgmt().kills {
            return;
        }
        // SAFETY: the process is in the version (`in_code` counts it), so purge has not freed it
        // (the purger waits for this decrement, then PW).
        let ver = unsafe { &*c.held };
        ver.live
            .assert_live(&|| format!("version {} of m (signal)", ver.number));
        if !ver.kill.load(Relaxed) {
            return;
        }
        let p = &mut c.proc;
        p.stack.clear();
        p.conts.clear();
        p.time.clear();
        p.memory.clear();
        p.current = None;
        let before = ver.in_code.fetch_sub(1, Relaxed);
        assert!(before > 0, "version {}: in_code underflow", ver.number);
        c.held = std::ptr::null();
        c.killed += 1;
        c.dead = true;
    }

    /// A second (third, ...) process on this scheduler, call-traced in every session as the
    /// first, scheduled out until [`Scheduler::switch_proc`] runs it (pid: the scheduler's id
    /// plus 1,000 per process added).
    pub fn add_code_proc(&mut self) {
        self.with_code(|s, c| {
            let n = c.parked.len() as u64 + 1;
            c.parked.push(Parked {
                proc: Proc::new(Process {
                    pid: s.id as u64 + 1_000 * n,
                    call_traced: u64::MAX,
                }),
                held: std::ptr::null(),
                dead: false,
            });
        });
    }

    /// A process switch (ERTS `erts_schedule`, not a thread progress point): the current
    /// process is scheduled out (its running call_time charged to the function it is in, in
    /// whichever version: it is still counted in that version's `in_code`) and parked last;
    /// the first parked process becomes current, handles its signals first (an exit signal of
    /// `code:purge/1` sent while it was parked kills it: frames and pbts dropped without a
    /// charge, it leaves the version, `take_signals`) and is scheduled in. No-op with one
    /// process.
    pub fn switch_proc(&mut self) {
        self.with_code(|s, c| {
            if c.parked.is_empty() {
                return;
            }
            s.schedule_out(&mut c.proc);
            Self::swap_current(c);
            s.take_signals(c);
            s.schedule_in(&mut c.proc);
        });
    }

    /// Make the first parked process current; the current one is parked last.
    fn swap_current(c: &mut InCode) {
        let mut next = c.parked.remove(0);
        std::mem::swap(&mut c.proc, &mut next.proc);
        std::mem::swap(&mut c.held, &mut next.held);
        std::mem::swap(&mut c.dead, &mut next.dead);
        c.parked.push(next);
    }

    /// The call_time/call_memory calls of every process of this scheduler (`Proc::timem_calls`,
    /// the current one's and the parked ones').
    pub fn code_procs_timem_calls(&self) -> u64 {
        let c = self.code_ref();
        c.proc.timem_calls + c.parked.iter().map(|p| p.proc.timem_calls).sum::<u64>()
    }

    /// [`Scheduler::sleep`] on an engine with a module: the process scheduled out first (its
    /// charges are reads of the versions it names, made while this scheduler is still awake).
    pub(crate) fn sleep_in_code(&mut self) {
        self.with_code(|s, c| {
            s.schedule_out(&mut c.proc);
            Self::leave(c);
            s.thr_sleep();
        });
    }

    /// [`Scheduler::wake`] on an engine with a module.
    pub(crate) fn wake_in_code(&mut self) {
        self.with_code(|s, c| {
            s.thr_wake();
            s.enter(c);
            s.take_signals(c);
            s.schedule_in(&mut c.proc);
        });
    }

    /// A remote call `m:f()` (ERTS `call_ext`): the active code index, the export entry's
    /// address for it, the version's code, its first instruction and, if patched, its
    /// breakpoint. (Named apart from [`Scheduler::call`], a hit on the static code area.)
    pub fn call_ext(&mut self, f: usize) -> CallSeen {
        self.call_ext_in(0, f)
    }

    /// [`Scheduler::call_ext`] of module `m`'s function `f`.
    pub fn call_ext_in(&mut self, m: usize, f: usize) -> CallSeen {
        self.with_code(|s, c| s.remote(c, m, f, false))
    }

    /// A remote call `m:f()` after which the process stays in the version it ran (it is
    /// suspended inside `m`, a return address into the version on its stack) across progress
    /// points, until `return_out`. `check_process_code` sees it (`CodeVersion::in_code`).
    pub fn call_and_stay(&mut self, f: usize) -> CallSeen {
        self.call_and_stay_in(0, f)
    }

    /// [`Scheduler::call_and_stay`] in module `m`'s function `f`.
    pub fn call_and_stay_in(&mut self, m: usize, f: usize) -> CallSeen {
        self.with_code(|s, c| {
            assert!(
                c.held.is_null(),
                "scheduler {}: its process is already in a version",
                s.id
            );
            s.remote(c, m, f, true)
        })
    }

    /// A local call `f()` from the version the process is in: it stays in that version (ERTS:
    /// local calls are direct jumps within the code area), current or old, whatever the code
    /// index says now.
    pub fn local_call(&mut self, f: usize) -> CallSeen {
        self.with_code(|s, c| {
            if c.dead {
                // Killed by code:purge/1: nothing left to call from.
                return CallSeen {
                    version: 0,
                    counted: false,
                    local: true,
                    flags: 0,
                    counted_in: 0,
                    export_hit: None,
                };
            }
            c.proc.push_cont();
            let seen = s.local_call_in(c, f);
            s.ret(&mut c.proc);
            seen
        })
    }

    fn local_call_in(&mut self, c: &mut InCode, f: usize) -> CallSeen {
        assert!(
            !c.held.is_null(),
            "scheduler {}: a local call from no version",
            self.id
        );
        assert!(
            self.engine().code_mgmt().protocol != LoadProtocol::Blocking || c.inside.is_some(),
            "scheduler {} called while asleep",
            self.id
        );
        c.calls += 1;
        let v = c.held;
        let mut seen = self.run_version(c, v, f, true, false);
        seen.local = true;
        seen
    }

    /// The process returns out of the version it is in (or exits): its frames from the call
    /// that entered it run first (a call_time return frame charges the version's function, the
    /// version still counted in `in_code`), then it leaves the version.
    pub fn return_out(&mut self) {
        self.with_code(|s, c| s.return_out_in(c, false));
    }

    /// The process raises an exception (`error:badarg`) out of the version it is in: the
    /// frames of the call that entered it unwind (`exception_trace` frames send
    /// `exception_from`, return_trace and call_time/call_memory return frames are dropped, as
    /// ERTS's `next_catch` does), the exception is caught outside the module, then it leaves the
    /// version.
    pub fn raise_out(&mut self) {
        self.with_code(|s, c| s.return_out_in(c, true));
    }

    fn return_out_in(&mut self, c: &mut InCode, raise: bool) {
        if std::mem::take(&mut c.dead) {
            return; // killed by code:purge/1: it already left the version
        }
        assert!(
            !c.held.is_null(),
            "scheduler {}: return from no version",
            self.id
        );
        if raise {
            let reason = crate::term::Term::Atom("badarg");
            self.raise(&mut c.proc, "error", reason, 1);
        } else {
            self.ret(&mut c.proc);
        }
        let v = std::mem::replace(&mut c.held, std::ptr::null());
        // SAFETY: a held version is freed only after purge saw `in_code == 0` (so after this
        // decrement) and waited for thread progress (PW), which this scheduler's next progress
        // point ends: this access happens before the free (docs/nonblocking-load.md §3).
        let ver = unsafe { &*v };
        ver.live
            .assert_live(&|| format!("version {} of m (return)", ver.number));
        let before = ver.in_code.fetch_sub(1, Relaxed);
        assert!(before > 0, "version {}: in_code underflow", ver.number);
    }

    fn remote(&mut self, c: &mut InCode, m: usize, f: usize, stay: bool) -> CallSeen {
        c.dead = false; // a killed process's successor
        c.proc.push_cont();
        let seen = self.remote_in(c, m, f, stay);
        if !stay || seen.version == 0 {
            // Returned (or `undef`): its frames run now. A call that stays keeps them on the
            // stack until `return_out`.
            self.ret(&mut c.proc);
        }
        seen
    }

    /// Process `p` (a caller's own, e.g. the scenario runner's: its pid, call-traced sessions,
    /// frames and pbts) calls module `m`'s function `f` in the version the active code index's
    /// export entry names (the current one), as [`Scheduler::call_proc`],
    /// [`Scheduler::tail_call`], [`Scheduler::call_remote`] and
    /// [`Scheduler::tail_call_remote`] do on the static area: a body call (`tail` false)
    /// pushes a continuation; a `remote` call goes through the export entry (its global
    /// breakpoint, on an engine made [`Engine::with_global_trace`]); then the engine's hit
    /// path on the version's code area, with `p`'s frames, and `p.current` names the version's
    /// function. `p` stays in the function (no return: [`Scheduler::ret`] with `p` returns).
    /// The same steps as the scheduler's own process's calls (`remote_in`, `run_version`):
    /// `p` takes that process's place for the call.
    pub fn call_version_proc(
        &mut self,
        p: &mut Proc,
        m: usize,
        f: usize,
        tail: bool,
        remote: bool,
    ) -> CallSeen {
        self.with_code(|s, c| {
            std::mem::swap(&mut c.proc, p);
            let held = std::mem::replace(&mut c.held, std::ptr::null());
            if !tail {
                c.proc.push_cont();
            }
            // On the caller's clock: its own steps advance it (no tick per call).
            let mut seen = s.version_call_in(c, m, f, false, remote, false, false);
            seen.local = !remote;
            c.held = held;
            std::mem::swap(&mut c.proc, p);
            seen
        })
    }

    /// Process `p` enters module `m`'s function `f` in its current version without a process
    /// stack: the versions' counterpart of [`Scheduler::call`] on the static area (a local call
    /// from the module's current code; the engine's hit path on the version's code area with no
    /// process: local trace and meta trace record their events and the counter counts, but
    /// nothing is charged, pushed or sent). Nothing stays in the version. The same steps as
    /// [`Scheduler::call_version_proc`] (`version_call_in`, `run_version`), on the caller's
    /// clock.
    pub fn call_version(&mut self, p: &Process, m: usize, f: usize) -> CallSeen {
        self.with_code(|s, c| {
            let mut bare = Proc::new(*p);
            std::mem::swap(&mut c.proc, &mut bare);
            let held = std::mem::replace(&mut c.held, std::ptr::null());
            let mut seen = s.version_call_in(c, m, f, false, false, false, true);
            seen.local = true;
            c.held = held;
            std::mem::swap(&mut c.proc, &mut bare);
            seen
        })
    }

    /// A caller's own process that entered module `m`'s current version `version` by
    /// [`Scheduler::call_version_proc`] (the scenario runner's, which learns only after the
    /// call that the process waits there: a receive) stays in it, represented on this
    /// scheduler: this scheduler's process takes the return address into the version (counted
    /// in the version's `in_code`, what `check_process_code` and the killing purge find), as
    /// [`Scheduler::call_and_stay_in`] leaves it, without a second call (no breakpoint runs),
    /// until [`Scheduler::return_out`] or a purge's exit signal. The version is the module
    /// table's current one, taken under the table's lock (stager-side: no scheduler read of a
    /// code index or export entry); `false` (nothing held) if `version` is not current.
    pub fn stay_in_version(&mut self, m: usize, version: u32) -> bool {
        self.with_code(|s, c| {
            assert!(
                c.held.is_null(),
                "scheduler {}: its process is already in a version",
                s.id
            );
            let e: &Engine<P> = s.engine();
            let st = crate::sync::lock(&e.code_mgmt().modules);
            let v = st.modules[m].curr;
            // SAFETY: the module's current version, live while the module table is held (a
            // purge frees only old versions, under the table).
            if v.is_null() || unsafe { &*v }.number != version {
                return false;
            }
            // SAFETY: as above.
            let ver = unsafe { &*v };
            ver.live
                .assert_live(&|| format!("version {} of m (stay)", ver.number));
            // Relaxed: made under the module table's lock, which the purge holds while it reads
            // `in_code` (`purge.rs`: `purge_locked`'s check, `purge_kill_in`'s wait): the lock
            // orders this increment before that read or after the purge.
            ver.in_code.fetch_add(1, Relaxed);
            c.dead = false;
            c.held = v;
            // The continuation `return_out` returns to (the caller's process has the frames).
            c.proc.push_cont();
            true
        })
    }

    fn remote_in(&mut self, c: &mut InCode, m: usize, f: usize, stay: bool) -> CallSeen {
        self.version_call_in(c, m, f, stay, true, true, false)
    }

    /// A call of module `m`'s function `f` in the version the active code index's export entry
    /// names: `remote` through the entry's global breakpoint (`call_ext`); else a call from
    /// the module's current code (ERTS jumps there directly: the same version). `bare`: the hit
    /// has no process ([`Scheduler::call_version`]).
    #[allow(clippy::too_many_arguments)]
    fn version_call_in(
        &mut self,
        c: &mut InCode,
        m: usize,
        f: usize,
        stay: bool,
        remote: bool,
        tick: bool,
        bare: bool,
    ) -> CallSeen {
        let e: &Engine<P> = self.engine();
        let cm = e.code_mgmt();
        assert!(
            cm.protocol != LoadProtocol::Blocking || c.inside.is_some(),
            "scheduler {} called while asleep",
            self.id
        );
        let ix = readers::code_ix(Reader::LoadRemote, &cm.code_ix, e.mutant);
        assert!(ix < ERTS_NUM_CODE_IX);
        let mc = &cm.mods[m];
        let v = readers::export_address(Reader::LoadRemote, &mc.exports[f].addresses[ix], Relaxed);
        c.calls += 1;
        if v.is_null() {
            return CallSeen {
                version: 0,
                counted: false,
                local: false,
                flags: 0,
                counted_in: 0,
                export_hit: None,
            };
        }
        let mut export_hit = None;
        if cm.globals && remote {
            // The export entry's breakpoint (ERTS: the address of the code index is the entry's
            // trampoline, `op_i_generic_breakpoint`, which then jumps on to the version's code):
            // the entry's dispatch word of the index this call read, then the engine's hit path
            // on the module's export area (global trace, its match spec). Relaxed, as the
            // address: the word a commit publishes was written by `start_staging` before that
            // commit (code-ix-commit / code-ix-load); the words install and uninstall patch in
            // place are ordered by the W0–W4 sequence, as a function's first instruction is.
            let d = readers::export_dispatch(
                Reader::LoadRemote,
                &cm.mods[m].exports[f].dispatch[ix],
                Relaxed,
            );
            let process = c.proc.p;
            let addr = self.hit_at(e.exp_area(m), f, f, &process, Some(&mut c.proc), d);
            export_hit = self.hits.pop();
            assert_eq!(
                addr,
                crate::export::EXPORT_BASE + f,
                "export entry of {}:f{f}/0 jumped to a foreign address",
                self.engine().code_mgmt().mods[m].name
            );
        }
        if stay {
            // SAFETY: as in `run_version` (read from the export entry of the active index).
            let ver = unsafe { &*v };
            ver.live
                .assert_live(&|| format!("version {} of m (entry)", ver.number));
            // Before this scheduler's next progress point: the purge's check reads it after
            // LW1 of the operation that made the version old (see `Engine::purge`).
            ver.in_code.fetch_add(1, Relaxed);
            c.held = v;
        }
        let mut seen = self.run_version(c, v, f, tick, bare);
        seen.export_hit = export_hit;
        seen
    }

    /// Run function `f` of version `v`: its code, its first instruction and, if patched, its
    /// breakpoint; the promise checked last. `tick`: the scheduler's logical clock advances by
    /// one first (its own process's calls; a caller's process, [`Scheduler::call_version_proc`],
    /// runs on the caller's clock). `bare`: the engine's hit path runs without the process (no
    /// call_time/call_memory, no trace frames, no message: [`Scheduler::call_version`]).
    fn run_version(
        &mut self,
        c: &mut InCode,
        v: *const CodeVersion,
        f: usize,
        tick: bool,
        bare: bool,
    ) -> CallSeen {
        // SAFETY: read from the export entry of the active code index: a version is freed only
        // after it left both indices and a grace period passed (LW1), or under the block, and
        // this call began after this scheduler's last progress point (docs/nonblocking-load.md);
        // or held by this scheduler's process, which purge checks (`in_code`) before it frees.
        let ver = unsafe { &*v };
        ver.live
            .assert_live(&|| format!("version {} of m (code)", ver.number));
        // SAFETY: the body is written once, before publication (ordered by code-ix-commit /
        // code-ix-load); loom checks it.
        let body = ver.body.with(|p| unsafe { *p });
        assert_eq!(
            body,
            CodeVersion::body_of(ver.number),
            "m:f{f}/0: version {} not fully loaded",
            ver.number
        );
        // The engine's hit path on the version's code area (`hit.rs::hit_in`): the instruction
        // word, the slot, the chain, the active index and half, the counter; it checks the
        // original instruction it goes on to run against the function's.
        // What `hit_in` dereferences is live: a node in the slot of a patched function is
        // freed only after it was unlinked and W4 passed, or, for a whole version, after LW1 /
        // under the block (invariant I1 of docs/protocol.md, docs/nonblocking-load.md §3).
        if tick {
            self.advance(1);
        }
        let process = c.proc.p;
        let proc = if bare { None } else { Some(&mut c.proc) };
        // The call reads the hit's flags and counters (its `CallSeen`), so the hit is recorded
        // even for a scheduler that records none of its own (`Scheduler::record` off, as the
        // engine torture's).
        let record = std::mem::replace(&mut self.record, true);
        let instr = self.hit_in(area_of(ver), f, f, &process, proc);
        self.record = record;
        c.proc.current = Some(crate::process::Ci {
            area: area_of(ver),
            f,
        });
        let hit = self.hits.pop().expect("hit_in records every hit");
        assert_eq!(
            instr, ver.code.funcs[f].original,
            "m:f{f}/0: a foreign instruction word in version {}",
            ver.number
        );
        let counted = hit.flags & flags::COUNT_ACTIVE != 0;
        let ran = hit.flags
            & (flags::COUNT_ACTIVE
                | flags::TIME_TRACE_ACTIVE
                | flags::MEM_TRACE_ACTIVE
                | flags::LOCAL_TRACE
                | flags::META_TRACE)
            != 0;
        // Read last: a withdrawn promise is stored before anything a call could see of the
        // withdrawal (trace_pattern T1 / the loader before its clear), a made one after every
        // hit can see the breakpoint (after W2 / before publication). Its premise: the process
        // is call-traced in every session (the scheduler's own processes are), so every pattern
        // acts; a caller's process ([`Scheduler::call_version_proc`]) traced in fewer is not
        // checked (local and call_time trace skip it where it is not call-traced).
        let checked = process.call_traced == u64::MAX;
        if checked && ver.promised.load(Relaxed) & crate::code_ix::fbit(f) != 0 && !ran {
            panic!(
                "a mix: scheduler {} ran version {} of m:f{f}/0 without its breakpoints",
                self.id, ver.number
            );
        }
        ver.live
            .assert_live(&|| format!("version {} of m (after the call)", ver.number));
        if counted {
            c.counted += 1;
        }
        CallSeen {
            version: ver.number,
            counted,
            local: false,
            flags: hit.flags,
            counted_in: hit.counted,
            export_hit: None,
        }
    }

    /// `Drop for Scheduler` on an engine with a module, before anything else: a process still
    /// in a version exits (its return frames charge), then the world lock's shared side goes.
    pub(crate) fn drop_in_code(&mut self) {
        let Some(mut c) = self.code.take() else {
            return;
        };
        let in_version =
            |c: &InCode| !c.held.is_null() || c.parked.iter().any(|p| !p.held.is_null());
        if in_version(&c) && !std::thread::panicking() {
            let asleep = !c.proc.running;
            self.code = Some(c);
            if asleep {
                // Dropped asleep (the scenario runner keeps its schedulers asleep between
                // steps): wake to run the process's exit, whose return frames charge.
                self.wake_in_code();
            }
            // The process exits (a no-op if the wake's signals killed it).
            if self.code_ref().held.is_null() && !self.code_ref().dead {
                // Not in a version (a parked one is): nothing to return from.
            } else {
                self.return_out();
            }
            // Then each parked process, switched in (its signals first), exits.
            for _ in 0..self.code_ref().parked.len() {
                self.switch_proc();
                if !self.code_ref().held.is_null() || self.code_ref().dead {
                    self.return_out();
                }
            }
            if asleep {
                // Asleep again: the engine's progress has no unregister, so a scheduler dropped
                // awake would hold every later wait for thread progress.
                self.sleep_in_code();
            }
            c = self.code.take().expect("put back by with_code");
        }
        Self::leave(&mut c); // before the engine's Arc (the guard borrows it)
    }
}
