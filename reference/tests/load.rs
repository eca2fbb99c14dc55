//! An engine with a module (`load.rs`, `calls.rs`) on real threads, sequentially and under busy schedulers: load,
//! delete and purge keep the promise of docs/nonblocking-load.md under both protocols and both
//! code index schemes.
#![cfg(not(any(loom, shuttle)))]

use bpspec_reference::code_ix::CodeIxScheme;
use bpspec_reference::{Engine, EngineConfig, LoadError, LoadProtocol, Qsbr, Scheduler};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Every protocol under both code index schemes (`CodeIxScheme`: two indices with LW1, ERTS's
/// three with the code barrier).
fn cases() -> impl Iterator<Item = (LoadProtocol, CodeIxScheme)> {
    CodeIxScheme::ALL
        .into_iter()
        .flat_map(|c| LoadProtocol::ALL.into_iter().map(move |p| (p, c)))
}

/// A stager op on the scheduler's own thread: the scheduler sleeps through it.
macro_rules! op {
    ($s:ident, $e:expr) => {{
        $s.sleep();
        let r = $e;
        $s.wake();
        r
    }};
}

#[test]
fn load_delete_purge_sequence_under_both_protocols() {
    let _watchdog =
        bpspec_reference::watchdog::arm("load::load_delete_purge_sequence_under_both_protocols");
    for (proto, scheme) in cases() {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
                .with_module(2, proto, true)
                .with_code_ix(scheme),
        );
        let mut s = Scheduler::start(e.clone(), 0);
        assert_eq!(s.call_ext(0).version, 1);
        assert!(s.call_ext(1).counted);
        s.progress();
        assert_eq!(op!(s, e.load()), Ok(2));
        assert_eq!(op!(s, e.load()), Err(LoadError::NotPurged), "{proto:?}");
        let c = s.call_ext(0);
        assert_eq!((c.version, c.counted), (2, true));
        assert_eq!(op!(s, e.purge()), Ok(true));
        assert_eq!(op!(s, e.purge()), Ok(false));
        e.check_at_rest().unwrap();
        assert_eq!(op!(s, e.trace_pattern_module(false)), 2);
        s.progress();
        let c = s.call_ext(1);
        assert_eq!((c.version, c.counted), (2, false));
        assert_eq!(op!(s, e.load()), Ok(3));
        assert!(
            !s.call_ext(1).counted,
            "the module's pattern is off: the new version is untraced"
        );
        assert_eq!(op!(s, e.trace_pattern_module(true)), 2);
        assert!(s.call_ext(1).counted);
        assert_eq!(op!(s, e.purge()), Ok(true));
        assert_eq!(op!(s, e.delete()), Ok(()));
        assert_eq!(op!(s, e.delete()), Err(LoadError::NotLoaded));
        assert_eq!(s.call_ext(0).version, 0, "undef after delete");
        assert_eq!(op!(s, e.purge()), Ok(true));
        e.check_at_rest().unwrap();
        assert_eq!(e.total_count(), s.counted(), "{proto:?}: no lost count");
        s.sleep();
    }
}

#[test]
fn loads_under_busy_schedulers_lose_no_count() {
    let _watchdog =
        bpspec_reference::watchdog::arm("load::loads_under_busy_schedulers_lose_no_count");
    // With LW1 folded into the removal's W1 too (`Engine::with_lw1_fold`): every remote call
    // is still counted (LP3).
    for ((proto, scheme), fold) in cases().flat_map(|c| [(c, false), (c, true)]) {
        let e = Engine::<Qsbr>::new(EngineConfig::simple(0, 2))
            .with_module(4, proto, true)
            .with_code_ix(scheme);
        let e = Arc::new(if fold { e.with_lw1_fold() } else { e });
        let stop = Arc::new(AtomicBool::new(false));
        let hs: Vec<_> = (0..2)
            .map(|id| {
                let (e, stop) = (e.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut s = Scheduler::start(e, id);
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let c = s.call_ext(i % 4);
                        assert!(c.version > 0 && c.counted);
                        i += 1;
                        if i % 8 == 0 {
                            s.progress();
                        }
                    }
                    s.sleep();
                    s.counted()
                })
            })
            .collect();
        for _ in 0..50 {
            e.load().unwrap();
            e.purge().expect("purge");
        }
        stop.store(true, Ordering::Relaxed);
        let counted: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        e.check_at_rest().unwrap();
        assert_eq!(e.total_count(), counted, "{proto:?} {scheme:?} fold {fold}");
    }
}

/// A process in old code: it keeps making local calls into version 1 after version 2 is loaded
/// (counted until the old breakpoints are removed, uncounted after, never a mix), and purge is
/// refused (soft purge, `check_process_code`) until it returns out of the old version.
#[test]
fn process_in_old_code_keeps_local_calls_and_blocks_purge() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "load::process_in_old_code_keeps_local_calls_and_blocks_purge",
    );
    for (proto, scheme) in cases() {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
                .with_module(2, proto, true)
                .with_code_ix(scheme),
        );
        let mut s = Scheduler::start(e.clone(), 0);
        let c = s.call_and_stay(0);
        assert_eq!((c.version, c.counted, c.local), (1, true, false));
        let c = s.local_call(1);
        assert_eq!((c.version, c.counted, c.local), (1, true, true));
        s.progress();
        assert_eq!(op!(s, e.load()), Ok(2));
        let c = s.local_call(1);
        assert_eq!(
            (c.version, c.counted),
            (1, false),
            "{proto:?}: the old version's breakpoints are removed"
        );
        assert_eq!(
            s.call_ext(0).version,
            2,
            "a remote call reaches the new version"
        );
        assert_eq!(op!(s, e.purge()), Err(LoadError::OldCodeInUse), "{proto:?}");
        assert_eq!(op!(s, e.load()), Err(LoadError::NotPurged));
        s.progress();
        assert_eq!(s.local_call(0).version, 1, "still in old code");
        s.return_out();
        assert_eq!(op!(s, e.purge()), Ok(true), "{proto:?}");
        e.check_at_rest().unwrap();
        assert_eq!(e.total_count(), s.counted(), "{proto:?}: no lost count");
        s.sleep();
    }
}

/// Purge succeeds, then at rest both conservations hold (call_count and call_time).
fn purged_and_conserved(e: &Engine<Qsbr>, s: &mut Scheduler<Qsbr>, proto: LoadProtocol) {
    assert_eq!(op!(s, e.purge()), Ok(true), "{proto:?}");
    conserved(e, s, proto);
}

/// At rest, counts conserved across versions: call_count and call_time.
fn conserved(e: &Engine<Qsbr>, s: &Scheduler<Qsbr>, proto: LoadProtocol) {
    e.check_at_rest().unwrap();
    assert_eq!(
        e.total_count(),
        s.counted(),
        "{proto:?}: call_count conserved"
    );
    assert_eq!(
        e.total_timed(),
        s.code_procs_timem_calls() as i64,
        "{proto:?}: call_time counts conserved across versions"
    );
}

/// call_time in a second session, call_count in the legacy one.
fn call_time_in(e: &Engine<Qsbr>) -> bpspec_reference::SessionId {
    timed_in(e, true)
}

/// call_time (`time`) or call_memory in a second session on the module.
fn timed_in(e: &Engine<Qsbr>, time: bool) -> bpspec_reference::SessionId {
    let s1 = e.create_session("t").unwrap();
    let spec = bpspec_reference::TraceSpec::from(bpspec_reference::FlagSet {
        call_time: time,
        call_memory: !time,
        ..Default::default()
    })
    .session(s1);
    assert_eq!(e.trace_pattern_module_spec(true, &spec), Ok(2));
    s1
}

/// A process in the old version with call_time frames on its stack (two sessions on the
/// module: call_count in the legacy one, call_time in a second): it is charged while it runs
/// version 1, scheduled out and in across the load and the removal of version 1's breakpoints,
/// makes a local call and returns there, its charges then dropped (the breakpoint was removed,
/// as ERTS drops them), never touching freed memory; purge waits for its return; counts are
/// conserved across versions (call_count and call_time), both protocols.
#[test]
fn call_time_frames_in_old_code_across_load_and_purge() {
    let _watchdog =
        bpspec_reference::watchdog::arm("load::call_time_frames_in_old_code_across_load_and_purge");
    for (proto, scheme) in cases() {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
                .with_module(2, proto, true)
                .with_code_ix(scheme),
        );
        let s1 = call_time_in(&e);
        let mut s = Scheduler::start(e.clone(), 0);
        let c = s.call_and_stay(0);
        assert_eq!((c.version, c.counted), (1, true));
        s.advance(10);
        s.progress(); // scheduled out: 10 charged to version 1's f0
        let t = e.current_timem(s1, 0, true).expect("f0 has call_time");
        assert_eq!(
            t.get(&0),
            Some(&(1, 10)),
            "{proto:?}: charged while in version 1"
        );
        assert_eq!(op!(s, e.load()), Ok(2));
        assert_eq!(
            e.current_timem(s1, 0, true),
            Some(Default::default()),
            "{proto:?}: version 2 has its own, empty call_time"
        );
        s.advance(5);
        // f0 in version 1, f1 in version 2.
        old_code_after_the_load(&e, &mut s, s1, proto, true, 2);
    }
}

/// The process in version 1 after the load, its session `s1` timing (`time`: call_time, else
/// call_memory) on the module: scheduled out and in (a call_time charge to version 1's f0, whose
/// breakpoint is gone: dropped), a local call in version 1 (uncounted, its charges dropped), a
/// remote call of f1 (version 2), purge refused until the return (its frame's charge dropped),
/// then purge, conservation, `calls` timed calls in all and f1 of version 2 timed once.
fn old_code_after_the_load(
    e: &Engine<Qsbr>,
    s: &mut Scheduler<Qsbr>,
    s1: bpspec_reference::SessionId,
    proto: LoadProtocol,
    time: bool,
    calls: u64,
) {
    s.progress();
    let c = s.local_call(1);
    assert_eq!((c.version, c.counted), (1, false), "{proto:?}");
    assert_eq!(s.call_ext(1).version, 2);
    assert_eq!(op!(s, e.purge()), Err(LoadError::OldCodeInUse), "{proto:?}");
    s.return_out();
    purged_and_conserved(e, s, proto);
    assert_eq!(s.code_proc().timem_calls, calls, "{proto:?}");
    assert_eq!(
        e.current_timem(s1, 1, time).unwrap().get(&0).map(|x| x.0),
        Some(1),
        "{proto:?}: f1 of version 2 timed once"
    );
    assert!(s.code_proc().stack.is_empty(), "{proto:?}: every frame ran");
    s.sleep();
}

/// call_memory in a second session on old code, as call_time above (the same nodes and charge
/// code, the process's heap as the clock): words allocated in version 1 are charged to version
/// 1's f0 at the local call that follows (call_memory charges at calls and returns, not at a
/// schedule-out); after the load version 2 has its own, empty call_memory; the
/// charges of version 1's functions after the removal of its breakpoints are dropped (the
/// local call, the return); purge waits for the return; counts conserved.
#[test]
fn call_memory_frames_in_old_code_across_load_and_purge() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "load::call_memory_frames_in_old_code_across_load_and_purge",
    );
    for (proto, scheme) in cases() {
        let e = traced_module(proto, scheme, |e| e);
        let s1 = timed_in(&e, false);
        let mut s = Scheduler::start(e.clone(), 0);
        let c = s.call_and_stay(0);
        assert_eq!((c.version, c.counted), (1, true));
        s.alloc_in_code(10);
        s.progress(); // no call_memory charge at a schedule-out (the heap does not grow there)
        let c = s.local_call(1); // 10 words charged to version 1's f0, the caller
        assert_eq!((c.version, c.counted), (1, true));
        assert_eq!(
            e.current_timem(s1, 0, false)
                .expect("f0 has call_memory")
                .get(&0),
            Some(&(1, 10)),
            "{proto:?}: charged while in version 1"
        );
        assert_eq!(e.current_timem(s1, 0, true), None, "no call_time");
        assert_eq!(op!(s, e.load()), Ok(2));
        assert_eq!(
            e.current_timem(s1, 0, false),
            Some(Default::default()),
            "{proto:?}: version 2 has its own, empty call_memory"
        );
        s.alloc_in_code(5);
        // f0 and f1 in version 1, f1 in version 2.
        old_code_after_the_load(&e, &mut s, s1, proto, false, 3);
    }
}

/// A session destroyed while a process is in old code with call_time frames of it: the
/// session's nodes leave the current version (the engine's one sequence over the version's
/// area), the module keeps its legacy pattern, the process's later charges in that session are
/// dropped, and purge, at rest and conservation hold. Then the last session destroyed: the
/// promise is withdrawn and the module is untraced.
#[test]
fn session_destroyed_while_a_process_is_in_old_code() {
    let _watchdog =
        bpspec_reference::watchdog::arm("load::session_destroyed_while_a_process_is_in_old_code");
    for (proto, scheme) in cases() {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
                .with_module(2, proto, true)
                .with_code_ix(scheme),
        );
        let s1 = call_time_in(&e);
        let mut s = Scheduler::start(e.clone(), 0);
        s.call_and_stay(0);
        assert_eq!(op!(s, e.load()), Ok(2));
        assert_eq!(op!(s, e.destroy_session(s1)), Ok(true), "{proto:?}");
        assert_eq!(op!(s, e.destroy_session(s1)), Ok(false));
        assert_eq!(e.current_timem(s1, 0, true), None, "{proto:?}");
        s.local_call(1);
        s.return_out();
        let c = s.call_ext(0);
        assert_eq!((c.version, c.counted), (2, true));
        purged_and_conserved(&e, &mut s, proto);
        // The module traced in one session only: destroying it untraces the module.
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
                .with_module(2, proto, false)
                .with_code_ix(scheme),
        );
        let s2 = call_time_in(&e);
        let mut s = Scheduler::start(e.clone(), 0);
        s.call_and_stay(1);
        assert_eq!(op!(s, e.destroy_session(s2)), Ok(true), "{proto:?}");
        let c = s.local_call(1);
        assert_eq!((c.version, c.counted), (1, false));
        s.return_out();
        conserved(&e, &s, proto);
        s.sleep();
    }
}

/// `code:purge/1` kills a process still in the old version: it exits at its next scheduling
/// point (its call_time frame dropped without returning, its pbt discarded: no charge after
/// the kill), the purger waits for that, then purges; both protocols. The purger runs on its own
/// thread while the scheduler naps in old code.
#[test]
fn purge_kill_kills_a_process_in_old_code() {
    let _watchdog = bpspec_reference::watchdog::arm("load::purge_kill_kills_a_process_in_old_code");
    for (proto, scheme) in cases() {
        let e = killing_module(proto, scheme);
        let s1 = call_time_in(&e);
        let mut s = Scheduler::start(e.clone(), 0);
        s.call_and_stay(0);
        assert_eq!(op!(s, e.load()), Ok(2));
        // Scheduled in at each wake-up: the kill is taken there.
        assert_eq!(purge_kill_while(&e, &mut s, |_| {}), Ok(true), "{proto:?}");
        s.wake();
        assert_eq!(s.killed(), 1, "{proto:?}");
        assert!(s.code_proc().stack.is_empty() && s.code_proc().time.is_empty());
        assert_eq!(s.local_call(0).version, 0, "a killed process calls nothing");
        s.return_out();
        let c = s.call_ext(1);
        assert_eq!((c.version, c.counted), (2, true), "a new process");
        conserved(&e, &s, proto);
        assert_eq!(
            e.current_timem(s1, 1, true).unwrap().get(&0).map(|x| x.0),
            Some(1)
        );
        s.sleep();
    }
}

/// A one-scheduler engine with module `m` of 2 functions traced with call_count, made
/// `with_kills` (`code:purge/1`).
fn killing_module(proto: LoadProtocol, scheme: CodeIxScheme) -> Arc<Engine<Qsbr>> {
    Arc::new(
        Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
            .with_module(2, proto, true)
            .with_kills()
            .with_code_ix(scheme),
    )
}

/// `code:purge/1` on its own thread while the scheduler `s` (asleep) wakes, runs `step` and
/// sleeps again until the purge returns; its result.
fn purge_kill_while(
    e: &Arc<Engine<Qsbr>>,
    s: &mut Scheduler<Qsbr>,
    step: fn(&mut Scheduler<Qsbr>),
) -> Result<bool, LoadError> {
    s.sleep();
    let purger = {
        let e = e.clone();
        std::thread::spawn(move || e.purge_kill())
    };
    while !purger.is_finished() {
        s.wake();
        step(s);
        s.sleep();
        std::thread::yield_now();
    }
    purger.join().unwrap()
}

/// `code:purge/1` with two processes on one scheduler, both in version 1 with call_time frames:
/// the one switched out when the purge kills (its pbt naming version 1's f0) exits when switched
/// in (`Scheduler::switch_proc`, its signals before its schedule-in: no charge), the current one
/// at its wake-up; the purger waits for both, then purges; both protocols.
#[test]
fn purge_kill_kills_a_switched_out_process() {
    let _watchdog =
        bpspec_reference::watchdog::arm("load::purge_kill_kills_a_switched_out_process");
    for (proto, scheme) in cases() {
        let e = killing_module(proto, scheme);
        let s1 = call_time_in(&e);
        let mut s = Scheduler::start(e.clone(), 0);
        s.add_code_proc();
        s.switch_proc(); // a process switch with the first not in the module yet
        assert_eq!(s.call_and_stay(0).version, 1);
        s.advance(3);
        s.switch_proc(); // the second switched out in version 1: 3 charged to its f0
        assert_eq!(s.call_and_stay(0).version, 1);
        s.switch_proc();
        s.switch_proc(); // the first current again, the second switched out in version 1
        let t = e.current_timem(s1, 0, true).expect("f0 has call_time");
        assert_eq!(
            t.get(&1_000),
            Some(&(1, 3)),
            "{proto:?}: charged at the switch"
        );
        assert_eq!(op!(s, e.load()), Ok(2));
        // The current process's signals at each wake-up, the switched-out one's at the switch,
        // before its schedule-in.
        let r = purge_kill_while(&e, &mut s, Scheduler::switch_proc);
        assert_eq!(r, Ok(true), "{proto:?}");
        s.wake();
        assert_eq!(s.killed(), 2, "{proto:?}: both processes killed");
        for _ in 0..2 {
            assert!(s.code_proc().stack.is_empty() && s.code_proc().time.is_empty());
            assert_eq!(s.local_call(0).version, 0, "a killed process calls nothing");
            s.return_out();
            s.switch_proc();
        }
        assert_eq!(s.call_ext(1).version, 2, "a new process");
        conserved(&e, &s, proto);
        s.sleep();
    }
}

/// A one-scheduler engine with module `m` of 2 functions traced with call_count, built further
/// by `more` (before the code index scheme is set).
fn traced_module(
    proto: LoadProtocol,
    scheme: CodeIxScheme,
    more: impl FnOnce(Engine<Qsbr>) -> Engine<Qsbr>,
) -> Arc<Engine<Qsbr>> {
    Arc::new(
        more(Engine::<Qsbr>::new(EngineConfig::simple(0, 1)).with_module(2, proto, true))
            .with_code_ix(scheme),
    )
}

/// A module engine with global trace on its export entries (`traced_module`, made
/// `with_global_trace`), a session `name` and the global spec with `return_trace` in it (not
/// set yet).
fn global_module(
    proto: LoadProtocol,
    scheme: CodeIxScheme,
    name: &str,
) -> (
    Arc<Engine<Qsbr>>,
    bpspec_reference::SessionId,
    bpspec_reference::TraceSpec,
) {
    use bpspec_reference::{MatchSpec, TraceSpec};
    let e = traced_module(proto, scheme, |e| e.with_global_trace());
    let s1 = e.create_session(name).unwrap();
    let global = TraceSpec::global()
        .ms(Some(MatchSpec::RETURN_TRACE))
        .session(s1);
    (e, s1, global)
}

/// `body` on a fresh `global_module` with session `name`, under every protocol and scheme,
/// with a watchdog named `test`.
fn each_global_module(
    test: &str,
    name: &str,
    mut body: impl FnMut(
        LoadProtocol,
        Arc<Engine<Qsbr>>,
        bpspec_reference::SessionId,
        bpspec_reference::TraceSpec,
    ),
) {
    let _watchdog = bpspec_reference::watchdog::arm(test);
    for (proto, scheme) in cases() {
        let (e, s1, global) = global_module(proto, scheme, name);
        body(proto, e, s1, global);
    }
}

/// The scheduler's process traced (`call`) in `session`, to a mailbox tracer.
fn traced_proc(
    s: &mut Scheduler<Qsbr>,
    session: bpspec_reference::SessionId,
) -> std::sync::Arc<bpspec_reference::tracer::Mailbox> {
    use bpspec_reference::tracer::{Mailbox, ProcessTracer};
    let mb = Mailbox::new(100);
    let flags = bpspec_reference::ProcFlags {
        call: true,
        ..Default::default()
    };
    assert_eq!(
        s.trace_code_proc(session, true, flags, Some(ProcessTracer::spec(&mb))),
        Ok(true)
    );
    mb
}

/// Local call trace with `exception_trace` (return and exception frames), meta and call_count
/// on a loaded module, one session for local and meta: a process enters version 1 and stays
/// (its `exception_trace` frame names version 1's f0), the module is reloaded (both protocols
/// give version 2 the module's patterns, the on_load patterns; version 1's breakpoints are
/// cleared under the block or removed by the engine's W0–W4 sequence), a local call in version
/// 1 is then untraced, a remote call runs version 2's breakpoints (call, meta call, return_from),
/// and the process's frame in version 1 still sends its `return_from` (or `exception_from`)
/// naming version 1's function before the purge. `trace_info` reads the current version.
#[test]
fn local_meta_and_return_frames_on_old_code_across_load_and_purge() {
    use bpspec_reference::tracer::{Mailbox, ProcessTracer};
    use bpspec_reference::{InfoKey, MatchSpec, TraceSpec};
    let _watchdog = bpspec_reference::watchdog::arm(
        "load::local_meta_and_return_frames_on_old_code_across_load_and_purge",
    );
    for (proto, scheme) in cases() {
        for raise in [false, true] {
            let e = traced_module(proto, scheme, |e| e);
            let s1 = e.create_session("local+meta").unwrap();
            let meta_mb = Mailbox::new(101);
            let spec = TraceSpec::local()
                .ms(Some(MatchSpec::EXCEPTION_TRACE))
                .meta(ProcessTracer::spec(&meta_mb))
                .session(s1);
            assert_eq!(e.trace_pattern_module_spec(true, &spec), Ok(2));
            assert!(
                matches!(
                    e.trace_pattern_module_spec(true, &TraceSpec::global().session(s1)),
                    Err(bpspec_reference::PatternError::BadArg(_))
                ),
                "global on a loaded module is refused"
            );
            let mut s = Scheduler::start(e.clone(), 0);
            let mb = traced_proc(&mut s, s1);
            let c = s.call_and_stay(0);
            assert_eq!((c.version, c.counted), (1, true));
            assert_eq!(
                mb.take_strings(),
                ["{trace,<0.0.0>,call,{m,f0,0}}"],
                "{proto:?}"
            );
            assert_eq!(meta_mb.take_strings(), ["{trace,<0.0.0>,call,{m,f0,0}}"]);
            assert_eq!(op!(s, e.load()), Ok(2));
            let c = s.local_call(1);
            assert_eq!((c.version, c.counted), (1, false), "{proto:?}");
            assert!(
                mb.is_empty() && meta_mb.is_empty(),
                "{proto:?}: version 1's breakpoints are gone"
            );
            let c = s.call_ext(1);
            assert_eq!((c.version, c.counted), (2, true));
            assert_eq!(
                mb.take_strings(),
                [
                    "{trace,<0.0.0>,call,{m,f1,0}}",
                    "{trace,<0.0.0>,return_from,{m,f1,0},ok}"
                ],
                "{proto:?}: the pattern carried to version 2"
            );
            assert_eq!(meta_mb.take_strings(), ["{trace,<0.0.0>,call,{m,f1,0}}"]);
            assert_eq!(op!(s, e.purge()), Err(LoadError::OldCodeInUse));
            if raise {
                s.raise_out();
                assert_eq!(
                    mb.take_strings(),
                    ["{trace,<0.0.0>,exception_from,{m,f0,0},{error,badarg}}"],
                    "{proto:?}: the exception frame in version 1"
                );
            } else {
                s.return_out();
                assert_eq!(
                    mb.take_strings(),
                    ["{trace,<0.0.0>,return_from,{m,f0,0},ok}"],
                    "{proto:?}: the return frame in version 1"
                );
            }
            purged_and_conserved(&e, &mut s, proto);
            let info = |k| e.trace_info_module(s1, 0, k).to_string();
            assert_eq!(info(InfoKey::Traced), "{traced,local}");
            assert_eq!(info(InfoKey::Meta), "{meta,<0.101.0>}");
            assert_eq!(info(InfoKey::CallCount), "{call_count,false}");
            assert_eq!(
                e.trace_info_module(0, 0, InfoKey::CallCount).to_string(),
                "{call_count,0}",
                "{proto:?}: version 2's f0 was not called (version 1's count is not reported)"
            );
            // Off again: local and meta cleared by the engine's sequence on version 2.
            assert_eq!(op!(s, e.trace_pattern_module_spec(false, &spec)), Ok(2));
            assert_eq!(info(InfoKey::Traced), "{traced,false}");
            s.call_ext(0);
            assert!(mb.is_empty() && meta_mb.is_empty());
            e.check_at_rest().unwrap();
            s.sleep();
        }
    }
}

/// Global (export) trace on a loaded module's entries, with `return_trace`: the entry's
/// breakpoint runs before the version's code on every remote call. Across a load, `Blocking`
/// clears it under the block as ERTS does (`erts_clear_export_break`; the module's global
/// pattern goes), `NonBlocking` keeps it (the entry is the same for every version); then
/// global set again and cleared by the engine's one sequence on the export area.
#[test]
fn global_trace_on_a_loaded_module_across_a_load() {
    each_global_module(
        "load::global_trace_on_a_loaded_module_across_a_load",
        "global",
        |proto, e, s1, global| {
            assert_eq!(e.trace_pattern_module_spec(true, &global), Ok(2));
            let mut s = Scheduler::start(e.clone(), 0);
            let mb = traced_proc(&mut s, s1);
            let c = s.call_ext(0);
            assert_eq!((c.version, c.counted), (1, true));
            assert_eq!(
                mb.take_strings(),
                [
                    "{trace,<0.0.0>,call,{m,f0,0}}",
                    "{trace,<0.0.0>,return_from,{m,f0,0},ok}"
                ],
                "{proto:?}"
            );
            assert_eq!(op!(s, e.load()), Ok(2));
            let c = s.call_ext(1);
            assert_eq!((c.version, c.counted), (2, true));
            let after: Vec<String> = mb.take_strings();
            match proto {
                LoadProtocol::Blocking => assert!(after.is_empty(), "{after:?}: cleared on load"),
                LoadProtocol::NonBlocking => assert_eq!(
                    after,
                    [
                        "{trace,<0.0.0>,call,{m,f1,0}}",
                        "{trace,<0.0.0>,return_from,{m,f1,0},ok}"
                    ],
                    "kept across the load"
                ),
            }
            purged_and_conserved(&e, &mut s, proto);
            assert_eq!(op!(s, e.trace_pattern_module_spec(true, &global)), Ok(2));
            s.call_ext(0);
            assert_eq!(mb.take_strings().len(), 2, "{proto:?}: set again");
            assert_eq!(op!(s, e.trace_pattern_module_spec(false, &global)), Ok(2));
            s.call_ext(0);
            assert!(mb.is_empty(), "{proto:?}: cleared");
            conserved(&e, &s, proto);
            s.sleep();
        },
    );
}

/// `trace_info_module` of a function whose export entry carries the session's global
/// breakpoint answers as ERTS's `function_is_traced` (erl_bif_trace.c) does: the export entry
/// first, `{traced, global}` with the global match spec and `false` for the other keys, while
/// the legacy session's call_count on the version's code answers for that session. Across a
/// load: `Blocking` clears the entry (ERTS), `NonBlocking` keeps it; global off, the entry
/// answers nothing and the function is untraced in that session.
#[test]
fn trace_info_module_answers_global_from_the_export_entry() {
    use bpspec_reference::term::InfoKey;
    each_global_module(
        "load::trace_info_module_answers_global_from_the_export_entry",
        "global",
        |proto, e, g, global| {
            let info = |s, k| e.trace_info_module(s, 0, k).to_string();
            assert_eq!(info(g, InfoKey::Traced), "{traced,false}", "{proto:?}");
            assert_eq!(e.trace_pattern_module_spec(true, &global), Ok(2));
            assert_eq!(info(g, InfoKey::Traced), "{traced,global}", "{proto:?}");
            let ms = info(g, InfoKey::MatchSpec);
            assert!(ms.contains("return_trace"), "{proto:?}: {ms}");
            assert_eq!(info(g, InfoKey::CallCount), "{call_count,false}");
            assert_eq!(info(g, InfoKey::CallTime), "{call_time,false}");
            let all = info(g, InfoKey::All);
            assert!(
                all.starts_with("{all,[{traced,global},{match_spec,[")
                    && all.ends_with("{call_memory,false},{call_time,false},{call_count,false}]}"),
                "{proto:?}: {all}"
            );
            // The legacy session: call_count on the version's code, no global.
            assert_eq!(info(0, InfoKey::Traced), "{traced,false}");
            assert_eq!(info(0, InfoKey::CallCount), "{call_count,0}");
            let mut s = Scheduler::start(e.clone(), 0);
            assert_eq!(s.call_ext(0).version, 1);
            assert_eq!(info(0, InfoKey::CallCount), "{call_count,1}");
            assert_eq!(op!(s, e.load()), Ok(2));
            let after = info(g, InfoKey::Traced);
            match proto {
                LoadProtocol::Blocking => assert_eq!(after, "{traced,false}", "cleared on load"),
                LoadProtocol::NonBlocking => assert_eq!(after, "{traced,global}", "kept"),
            }
            assert_eq!(
                info(0, InfoKey::CallCount),
                "{call_count,0}",
                "{proto:?}: v2"
            );
            purged_and_conserved(&e, &mut s, proto);
            assert_eq!(op!(s, e.trace_pattern_module_spec(false, &global)), Ok(2));
            assert_eq!(info(g, InfoKey::Traced), "{traced,false}", "{proto:?}");
            assert_eq!(info(g, InfoKey::MatchSpec), "{match_spec,false}");
            conserved(&e, &s, proto);
            s.sleep();
        },
    );
}

/// Local and global patterns of one session on the module exclude each other, as ERTS's
/// `erts_set_trace_pattern` (erl_bif_trace.c) has it: setting a breakpoint-type flag (here
/// local call trace and call_time) clears the session's global flag off the export entries
/// (`erts_clear_export_trace`); setting global clears every flag of the session off the
/// current version's functions (`erts_clear_all_breaks`: local, meta and the counters), each in
/// the one sequence of that call. The legacy session's call_count is untouched throughout; a
/// load in between gives version 2 only the local pattern the session still has; at rest and
/// conservation hold after each step.
#[test]
fn local_and_global_in_one_session_exclude_each_other() {
    use bpspec_reference::term::InfoKey;
    use bpspec_reference::{FlagSet, TraceSpec};
    each_global_module(
        "load::local_and_global_in_one_session_exclude_each_other",
        "both",
        |proto, e, s1, global| {
            let local = TraceSpec::counters(FlagSet {
                local: true,
                call_time: true,
                ..FlagSet::default()
            })
            .session(s1);
            let info = |k| e.trace_info_module(s1, 0, k).to_string();
            let mut s = Scheduler::start(e.clone(), 0);
            let mb = traced_proc(&mut s, s1);
            assert_eq!(op!(s, e.trace_pattern_module_spec(true, &global)), Ok(2));
            s.call_ext(0);
            assert_eq!(
                mb.take_strings().len(),
                2,
                "{proto:?}: global call and return_from"
            );
            // Local on: global goes.
            assert_eq!(op!(s, e.trace_pattern_module_spec(true, &local)), Ok(2));
            assert_eq!(info(InfoKey::Traced), "{traced,local}", "{proto:?}");
            // The collection waits for thread progress: the scheduler sleeps through it.
            assert_eq!(
                op!(s, info(InfoKey::CallTime)),
                "{call_time,[]}",
                "{proto:?}"
            );
            let c = s.call_ext(0);
            assert_eq!((c.version, c.counted), (1, true));
            assert_eq!(
                mb.take_strings(),
                ["{trace,<0.0.0>,call,{m,f0,0}}"],
                "{proto:?}: the local call message only, no global return_from"
            );
            let t = op!(s, info(InfoKey::CallTime));
            assert!(t.starts_with("{call_time,[{<0.0.0>,1,"), "{proto:?}: {t}");
            conserved(&e, &s, proto);
            // Across a load the session's local pattern goes to version 2.
            assert_eq!(op!(s, e.load()), Ok(2));
            purged_and_conserved(&e, &mut s, proto);
            assert_eq!(
                info(InfoKey::Traced),
                "{traced,local}",
                "{proto:?}: version 2"
            );
            s.call_ext(1);
            assert_eq!(mb.take_strings(), ["{trace,<0.0.0>,call,{m,f1,0}}"]);
            // Global on: the session's local flags and counter go off version 2.
            assert_eq!(op!(s, e.trace_pattern_module_spec(true, &global)), Ok(2));
            assert_eq!(info(InfoKey::Traced), "{traced,global}", "{proto:?}");
            assert_eq!(
                op!(s, e.trace_info_module(s1, 1, InfoKey::CallTime)).to_string(),
                "{call_time,false}"
            );
            let timed = s.code_proc().timem_calls;
            let c = s.call_ext(1);
            assert_eq!((c.version, c.counted), (2, true), "the legacy call_count");
            assert_eq!(
                mb.take_strings(),
                [
                    "{trace,<0.0.0>,call,{m,f1,0}}",
                    "{trace,<0.0.0>,return_from,{m,f1,0},ok}"
                ],
                "{proto:?}: global only"
            );
            assert_eq!(
                s.code_proc().timem_calls,
                timed,
                "{proto:?}: no call_time left"
            );
            assert_eq!(
                e.trace_info_module(0, 1, InfoKey::CallCount).to_string(),
                "{call_count,2}",
                "{proto:?}: the legacy session untouched"
            );
            conserved(&e, &s, proto);
            // Global off: the session has nothing on the module.
            assert_eq!(op!(s, e.trace_pattern_module_spec(false, &global)), Ok(2));
            assert_eq!(info(InfoKey::Traced), "{traced,false}", "{proto:?}");
            s.call_ext(0);
            assert!(mb.is_empty(), "{proto:?}");
            conserved(&e, &s, proto);
            s.sleep();
        },
    );
}

/// The export entries' dispatch words, one per code index, written where ERTS writes
/// `ep->dispatch.addresses[ix]` (docs/nonblocking-load.md §1 "Export entries", §3 DW1–DW4):
/// global on patches the active index's word only (`install_exp_breakpoints`); a load's
/// staging copies it into the new index (`export_start_staging`; NonBlocking keeps global
/// trace), or the blocking load writes the staging index's word back (`delete_code`); global
/// off restores the active index's word only (`uninstall_exp_breakpoints`), leaving the old
/// index's stale until the next staging into that index copies the active word over it.
#[test]
fn export_dispatch_words_one_per_code_index() {
    use bpspec_reference::code::OP_I_GENERIC_BREAKPOINT;
    use bpspec_reference::code_ix::ERTS_NUM_CODE_IX;
    each_global_module(
        "load::export_dispatch_words_one_per_code_index",
        "global",
        |proto, e, _s1, global| {
            let cm = e.code_mgmt();
            let patched = |ix: usize| {
                cm.mods[0]
                    .exports
                    .iter()
                    .all(|x| x.dispatch[ix].load(Ordering::Relaxed) == OP_I_GENERIC_BREAKPOINT)
            };
            let only = |ix: usize| (0..ERTS_NUM_CODE_IX).all(|i| patched(i) == (i == ix));
            let a0 = cm.code_ix.stager_active_ix();
            assert!((0..ERTS_NUM_CODE_IX).all(|i| !patched(i)), "{proto:?}");
            assert_eq!(e.trace_pattern_module_spec(true, &global), Ok(2));
            assert!(
                only(a0),
                "{proto:?}: global on patches the active index's word"
            );
            let mut s = Scheduler::start(e.clone(), 0);
            s.call_ext(0);
            assert_eq!(op!(s, e.load()), Ok(2));
            let a1 = cm.code_ix.stager_active_ix();
            assert_ne!(a0, a1);
            match proto {
                LoadProtocol::NonBlocking => {
                    assert!(patched(a0) && patched(a1), "the staging copied the word")
                }
                LoadProtocol::Blocking => {
                    assert!(!patched(a1), "cleared in the staging index under the block")
                }
            }
            s.call_ext(0);
            purged_and_conserved(&e, &mut s, proto);
            if proto == LoadProtocol::NonBlocking {
                assert_eq!(op!(s, e.trace_pattern_module_spec(false, &global)), Ok(2));
                assert!(
                    !patched(a1) && patched(a0),
                    "global off restores the active index's word; the old one stays stale"
                );
            }
            assert_eq!(op!(s, e.load()), Ok(3));
            let a2 = cm.code_ix.stager_active_ix();
            assert!(
                (0..ERTS_NUM_CODE_IX).all(|i| !patched(i) || i == a0 && a0 != a2),
                "{proto:?}: the staging into {a2} copied the active word over a stale one"
            );
            s.call_ext(0);
            purged_and_conserved(&e, &mut s, proto);
        },
    );
}

/// One engine, several modules (`Engine::with_modules`): one code index for all of them (a
/// load of one module commits the index for every module's export entries, and the staging
/// copies the others' addresses), each module its own versions, patterns, purges and counts;
/// the static code area beside them keeps its own breakpoints, and the at-rest check covers
/// both (while a process waits in a version: `check_at_rest_in_code`).
/// call_count alone, in the legacy session.
fn call_count() -> bpspec_reference::TraceSpec {
    bpspec_reference::TraceSpec::from(bpspec_reference::FlagSet {
        call_count: true,
        ..bpspec_reference::FlagSet::default()
    })
}

#[test]
fn several_modules_share_one_code_index() {
    use bpspec_reference::term::InfoKey;
    use bpspec_reference::{ModuleConfig, Pattern, PatternOp};
    let _watchdog = bpspec_reference::watchdog::arm("load::several_modules_share_one_code_index");
    let count = call_count();
    for (proto, scheme) in cases() {
        let ms = [
            ModuleConfig::numbered("a", 2, true),
            ModuleConfig::numbered("b", 3, false),
        ];
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(2, 1))
                .with_modules(&ms, proto)
                .with_code_ix(scheme),
        );
        let cm = e.code_mgmt();
        assert_eq!(
            (cm.module_index("a"), cm.module_index("b")),
            (Some(0), Some(1))
        );
        assert_eq!(cm.mods[1].mfas[2].to_string(), "b:f2/0");
        let mut s = Scheduler::start(e.clone(), 0);
        assert_eq!(s.call_ext_in(0, 1).version, 1);
        assert!(s.call_ext_in(0, 1).counted, "a is traced");
        let c = s.call_ext_in(1, 2);
        assert_eq!((c.version, c.counted), (1, false), "b is not");
        // The static area's own pattern, beside the modules.
        let all = Pattern::parse("m:_/_").unwrap();
        assert_eq!(
            op!(s, e.trace_pattern(&all, PatternOp::True, &count)),
            Ok(2)
        );
        // A process waits in b's version 1; loads of a and of b commit the one index.
        assert_eq!(s.call_and_stay_in(1, 0).version, 1);
        s.progress();
        assert_eq!(op!(s, e.load_in(0)), Ok(2));
        assert_eq!(
            (s.call_ext_in(0, 0).version, s.call_ext_in(1, 1).version),
            (2, 1),
            "{proto:?} {scheme:?}: a's load left b's entries on b's current version"
        );
        assert_eq!(op!(s, e.load_in(1)), Ok(2));
        assert_eq!((e.current_version_of(1), e.old_version_of(1)), (2, 1));
        assert_eq!((e.current_version(), e.old_version()), (2, 1));
        assert_eq!(
            s.local_call(1).version,
            1,
            "local calls stay in b's old version"
        );
        assert_eq!(s.call_ext_in(1, 1).version, 2);
        assert!(e.check_at_rest().is_err(), "a process is in b's version 1");
        e.check_at_rest_in_code().unwrap();
        assert_eq!(op!(s, e.purge_in(1)), Err(LoadError::OldCodeInUse));
        assert_eq!(op!(s, e.purge_in(0)), Ok(true), "a's old version is free");
        s.return_out();
        s.progress();
        assert_eq!(op!(s, e.purge_in(1)), Ok(true));
        e.check_at_rest().unwrap();
        // b's own pattern: its current version only, a's untouched.
        assert_eq!(
            op!(s, e.trace_pattern_module_spec_in(1, true, &count)),
            Ok(3)
        );
        s.progress();
        assert!(s.call_ext_in(1, 0).counted);
        assert_eq!(
            e.trace_info_module_in(1, 0, 0, InfoKey::CallCount)
                .to_string(),
            "{call_count,1}"
        );
        assert_eq!(
            e.trace_info_module_in(0, 0, 0, InfoKey::CallCount)
                .to_string(),
            "{call_count,1}",
            "a's version 2: one call"
        );
        // Delete a: its calls reach `undef`, b's do not.
        assert_eq!(op!(s, e.delete_in(0)), Ok(()));
        assert_eq!(s.call_ext_in(0, 0).version, 0);
        assert_eq!(s.call_ext_in(1, 0).version, 2);
        assert_eq!(op!(s, e.purge_in(0)), Ok(true));
        e.check_at_rest().unwrap();
        assert_eq!(
            e.total_count(),
            s.counted(),
            "{proto:?}: no lost count across modules"
        );
        s.sleep();
    }
}

/// Patterns per function on a module (`Engine::trace_pattern_funcs_spec_in`): each function
/// keeps its own pattern per session, its own promise bit and its own export entry's global
/// flag; a load gives the new version each function's own patterns; a session's global on one
/// function clears its local pattern there only; destroying a session withdraws the promise of
/// the functions it traced alone. The at-rest check (patterns, chains, promise per function)
/// holds after every step.
#[test]
fn patterns_per_function_on_a_module() {
    use bpspec_reference::{ModuleConfig, TraceSpec};
    let _watchdog = bpspec_reference::watchdog::arm("load::patterns_per_function_on_a_module");
    let count = call_count();
    for (proto, scheme) in cases() {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
                .with_modules(&[ModuleConfig::numbered("b", 3, false)], proto)
                .with_code_ix(scheme)
                .with_global_trace(),
        );
        let mut s = Scheduler::start(e.clone(), 0);
        let counted = |s: &mut Scheduler<Qsbr>| -> Vec<bool> {
            (0..3).map(|f| s.call_ext_in(0, f).counted).collect()
        };
        assert_eq!(
            op!(s, e.trace_pattern_funcs_spec_in(0, &[1], true, &count)),
            Ok(1)
        );
        e.check_at_rest_in_code().unwrap();
        assert_eq!(
            counted(&mut s),
            [false, true, false],
            "{proto:?} {scheme:?}"
        );
        let s2 = e.create_session("per-function").unwrap();
        let count2 = count.clone().session(s2);
        assert_eq!(
            op!(s, e.trace_pattern_funcs_spec_in(0, &[0, 2], true, &count2)),
            Ok(2)
        );
        e.check_at_rest_in_code().unwrap();
        assert_eq!(counted(&mut s), [true, true, true]);
        // The load gives version 2 each function's own patterns.
        assert_eq!(op!(s, e.load_in(0)), Ok(2));
        assert_eq!(op!(s, e.purge_in(0)), Ok(true));
        e.check_at_rest_in_code().unwrap();
        assert_eq!(counted(&mut s), [true, true, true]);
        // Off f1 only: f1's last pattern, its promise withdrawn.
        assert_eq!(
            op!(s, e.trace_pattern_funcs_spec_in(0, &[1], false, &count)),
            Ok(1)
        );
        e.check_at_rest_in_code().unwrap();
        assert_eq!(counted(&mut s), [true, false, true]);
        // Global on f2 in s2 clears s2's local pattern (call_count) on f2 only.
        let global2 = TraceSpec::global().session(s2);
        assert_eq!(
            op!(s, e.trace_pattern_funcs_spec_in(0, &[2], true, &global2)),
            Ok(1)
        );
        e.check_at_rest_in_code().unwrap();
        assert_eq!(counted(&mut s), [true, false, false]);
        // Destroying s2 withdraws f0's promise and clears f2's entry.
        assert_eq!(op!(s, e.destroy_session(s2)), Ok(true));
        e.check_at_rest_in_code().unwrap();
        assert_eq!(counted(&mut s), [false, false, false]);
        assert_eq!(
            e.total_count(),
            s.counted(),
            "{proto:?} {scheme:?}: no lost count across per-function patterns"
        );
        s.sleep();
    }
}

/// The load torture with the stager's patterns on random subsets of the module's functions
/// (`LoadTortureConfig::per_function`): loads, deletes, purges and per-function trace_pattern
/// under two busy schedulers, both protocols, without a violation (the promise per function
/// asserted by every call) and with the count conserved.
#[test]
fn load_torture_with_patterns_per_function() {
    let _watchdog =
        bpspec_reference::watchdog::arm("load::load_torture_with_patterns_per_function");
    load_torture_holds(0x7065_7266, |cfg| cfg.per_function = true);
}

/// An engine with one untraced module `b` of two functions, and its scheduler 0.
fn untraced_module(
    proto: LoadProtocol,
    scheme: CodeIxScheme,
) -> (Arc<Engine<Qsbr>>, Scheduler<Qsbr>) {
    let ms = [bpspec_reference::ModuleConfig::numbered("b", 2, false)];
    let e = Arc::new(
        Engine::<Qsbr>::new(EngineConfig::simple(1, 1))
            .with_modules(&ms, proto)
            .with_code_ix(scheme),
    );
    let s = Scheduler::start(e.clone(), 0);
    (e, s)
}

/// The module trace_pattern with every op of the static area's (`trace_pattern_funcs_op_in`):
/// `true` on a counter the session has resets it, `pause` stops it (the breakpoint stays, the
/// promise is withdrawn from a function whose only pattern is paused: a call then runs
/// nothing and the promise's check holds), `restart` resets and runs it, `pause` on a
/// function without the session's breakpoint does nothing, on a breakpoint without the
/// counter it creates a running one (the ERTS quirk); a load gives the new version the paused
/// counter as paused. The at-rest check (promise = running patterns, patched = all patterns)
/// holds after each step.
#[test]
fn module_trace_pattern_pauses_restarts_and_resets() {
    use bpspec_reference::term::InfoKey;
    use bpspec_reference::{FlagSet, PatternOp, TraceSpec};
    let _watchdog =
        bpspec_reference::watchdog::arm("load::module_trace_pattern_pauses_restarts_and_resets");
    let count = call_count();
    let time = TraceSpec::from(FlagSet {
        call_time: true,
        ..FlagSet::default()
    });
    let local = TraceSpec::from(FlagSet {
        local: true,
        ..FlagSet::default()
    });
    for (proto, scheme) in cases() {
        let (e, mut s) = untraced_module(proto, scheme);
        // Both read under the stager's locks (the collection waits for thread progress): the
        // scheduler sleeps through them.
        let info = |s: &mut Scheduler<Qsbr>, f, key| {
            op!(s, e.trace_info_module_in(0, 0, f, key).to_string())
        };
        let at_rest = |s: &mut Scheduler<Qsbr>| {
            op!(s, e.check_at_rest_in_code()).unwrap_or_else(|x| panic!("{proto:?}: {x}"))
        };
        let op = |s: &mut Scheduler<Qsbr>, fs: &[usize], o, spec: &TraceSpec| {
            op!(s, e.trace_pattern_funcs_op_in(0, fs, o, spec)).expect("accepted")
        };
        assert_eq!(op(&mut s, &[0], PatternOp::True, &count), 1);
        for _ in 0..3 {
            assert!(s.call_ext_in(0, 0).counted);
        }
        assert_eq!(info(&mut s, 0, InfoKey::CallCount), "{call_count,3}");
        // `true` again resets it.
        op(&mut s, &[0], PatternOp::True, &count);
        assert_eq!(info(&mut s, 0, InfoKey::CallCount), "{call_count,0}");
        assert!(s.call_ext_in(0, 0).counted);
        // `pause`: the counter stays at 1, calls run nothing (the promise withdrawn).
        op(&mut s, &[0], PatternOp::Pause, &count);
        at_rest(&mut s);
        assert!(!s.call_ext_in(0, 0).counted, "{proto:?}: paused");
        assert_eq!(info(&mut s, 0, InfoKey::CallCount), "{call_count,1}");
        // `pause` on f1, which has no breakpoint: nothing.
        op(&mut s, &[1], PatternOp::Pause, &count);
        assert_eq!(info(&mut s, 1, InfoKey::CallCount), "{call_count,false}");
        // A load gives the new version the paused counter, paused.
        s.progress();
        assert_eq!(op!(s, e.load_in(0)), Ok(2));
        at_rest(&mut s);
        assert!(
            !s.call_ext_in(0, 0).counted,
            "{proto:?}: paused after the load"
        );
        assert_eq!(info(&mut s, 0, InfoKey::CallCount), "{call_count,0}");
        // `restart`: reset and running.
        op(&mut s, &[0], PatternOp::Restart, &count);
        at_rest(&mut s);
        assert!(s.call_ext_in(0, 0).counted);
        assert_eq!(info(&mut s, 0, InfoKey::CallCount), "{call_count,1}");
        // The quirk: `pause` of call_count on f1's local-only breakpoint makes a running
        // counter.
        op(&mut s, &[1], PatternOp::True, &local);
        op(&mut s, &[1], PatternOp::Pause, &count);
        assert!(
            s.call_ext_in(0, 1).counted,
            "{proto:?}: the quirk's counter runs"
        );
        assert_eq!(info(&mut s, 1, InfoKey::CallCount), "{call_count,1}");
        // call_time: pause keeps the totals, restart clears them.
        op(&mut s, &[0], PatternOp::True, &time);
        s.call_ext_in(0, 0);
        let timed = info(&mut s, 0, InfoKey::CallTime);
        assert!(timed.contains(">,1,"), "{proto:?}: one call timed: {timed}");
        op(&mut s, &[0], PatternOp::Pause, &time);
        s.call_ext_in(0, 0);
        assert_eq!(
            info(&mut s, 0, InfoKey::CallTime),
            timed,
            "{proto:?}: paused call_time"
        );
        op(&mut s, &[0], PatternOp::Restart, &time);
        assert_eq!(info(&mut s, 0, InfoKey::CallTime), "{call_time,[]}");
        // Everything off.
        let all = TraceSpec::from(FlagSet {
            local: true,
            call_count: true,
            call_time: true,
            call_memory: false,
        });
        op(&mut s, &[0, 1], PatternOp::False, &all);
        at_rest(&mut s);
        assert_eq!(info(&mut s, 0, InfoKey::CallCount), "{call_count,false}");
        s.progress();
        assert_eq!(op!(s, e.purge_in(0)), Ok(true));
        drop(s);
        e.check_at_rest()
            .unwrap_or_else(|x| panic!("{proto:?}: {x}"));
    }
}

/// A caller's own process (`Scheduler::call_version_proc`, as the scenario runner's are)
/// calls into a module's current version: body, tail and remote calls run the version's
/// breakpoints with that process's frames (call_time charged to it on return, under its pid),
/// and the scheduler's own process is left as it was.
#[test]
fn a_callers_process_calls_into_the_current_version() {
    use bpspec_reference::term::InfoKey;
    use bpspec_reference::{FlagSet, PatternOp, Proc, Process, TraceSpec};
    let _watchdog =
        bpspec_reference::watchdog::arm("load::a_callers_process_calls_into_the_current_version");
    let spec = TraceSpec::from(FlagSet {
        call_count: true,
        call_time: true,
        ..FlagSet::default()
    });
    for (proto, scheme) in cases() {
        let (e, mut s) = untraced_module(proto, scheme);
        assert_eq!(
            op!(
                s,
                e.trace_pattern_funcs_op_in(0, &[0, 1], PatternOp::True, &spec)
            ),
            Ok(2)
        );
        let mut p = Proc::new(Process {
            pid: 7,
            call_traced: 1,
        });
        s.schedule_in(&mut p);
        let seen = s.call_version_proc(&mut p, 0, 0, false, false);
        assert_eq!((seen.version, seen.counted, seen.local), (1, true, true));
        let seen = s.call_version_proc(&mut p, 0, 1, true, true);
        assert_eq!((seen.version, seen.counted, seen.local), (1, true, false));
        let seen = s.call_version_proc(&mut p, 0, 0, false, true);
        assert!(seen.counted);
        s.advance(3);
        s.ret(&mut p);
        s.ret(&mut p);
        assert!(
            p.stack.is_empty() && p.conts.is_empty(),
            "{proto:?}: returned"
        );
        assert!(
            s.code_proc().stack.is_empty(),
            "the scheduler's own process"
        );
        let info = |s: &mut Scheduler<Qsbr>, f| {
            op!(
                s,
                e.trace_info_module_in(0, 0, f, InfoKey::CallTime)
                    .to_string()
            )
        };
        let t0 = info(&mut s, 0);
        assert!(t0.contains("<0.7.0>,2,"), "{proto:?}: {t0}");
        let t1 = info(&mut s, 1);
        assert!(t1.contains("<0.7.0>,1,"), "{proto:?}: {t1}");
        s.schedule_out(&mut p);
        drop(s);
        e.check_at_rest()
            .unwrap_or_else(|x| panic!("{proto:?}: {x}"));
    }
}

/// `pause` of a counter on a function where the session has no breakpoint on the version
/// stages nothing on the version, but (ERTS's exclusion, a breakpoint-type op) still clears the
/// session's global trace off the function's export entry: that clear is finished by the
/// engine's sequence, so the engine is at rest after it and the entry untraced. Before the
/// clear was finished on that path the at-rest check failed here (a staged export half left
/// behind).
#[test]
fn pause_without_a_breakpoint_finishes_the_export_clear() {
    use bpspec_reference::term::InfoKey;
    use bpspec_reference::{FlagSet, PatternOp, TraceSpec};
    each_global_module(
        "load::pause_without_a_breakpoint_finishes_the_export_clear",
        "both",
        |proto, e, s1, global| {
            let count = TraceSpec::counters(FlagSet {
                call_count: true,
                ..FlagSet::default()
            })
            .session(s1);
            let info = |f, k| e.trace_info_module_in(0, s1, f, k).to_string();
            let mut s = Scheduler::start(e.clone(), 0);
            assert_eq!(op!(s, e.trace_pattern_module_spec(true, &global)), Ok(2));
            assert_eq!(info(0, InfoKey::Traced), "{traced,global}", "{proto:?}");
            op!(
                s,
                e.trace_pattern_funcs_op_in(0, &[0], PatternOp::Pause, &count)
            )
            .expect("accepted");
            op!(s, e.check_at_rest_in_code()).unwrap_or_else(|x| panic!("{proto:?}: {x}"));
            assert_eq!(info(0, InfoKey::Traced), "{traced,false}", "{proto:?}");
            assert_eq!(info(1, InfoKey::Traced), "{traced,global}", "{proto:?}");
            let c = s.call_ext(0);
            assert_eq!(c.version, 1, "{proto:?}");
        },
    );
}

/// `Scheduler::stay_in_version` (the scenario runner's process that waits in a receive): the
/// scheduler's process holds the named version only while it is current, counted in its
/// `in_code`, so a purge after the next load is refused until the process returns out, and then
/// frees the version.
#[test]
fn stay_in_version_holds_the_version_against_its_purge() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "load::stay_in_version_holds_the_version_against_its_purge",
    );
    for (proto, scheme) in cases() {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
                .with_module(2, proto, true)
                .with_code_ix(scheme),
        );
        let mut s = Scheduler::start(e.clone(), 0);
        assert!(
            !s.stay_in_version(0, 2),
            "{proto:?}: not the current version"
        );
        assert!(s.stay_in_version(0, 1), "{proto:?}");
        s.progress();
        assert_eq!(op!(s, e.load()), Ok(2));
        assert_eq!(op!(s, e.purge()), Err(LoadError::OldCodeInUse), "{proto:?}");
        s.progress();
        s.return_out();
        assert_eq!(op!(s, e.purge()), Ok(true), "{proto:?}");
        e.check_at_rest().unwrap();
        s.sleep();
    }
}

/// The process-less call on a version (`Scheduler::call_version`, the versions' counterpart of
/// `Scheduler::call` on the static area) runs the version's breakpoints without a process: the
/// counter counts, local trace records its event (the process is call-traced) but sends
/// nothing (no process, no tracer reached, no frame); and `Engine::is_patched_in` /
/// `Engine::is_export_patched_in` read the current version's first instruction and the export
/// entry's dispatch word at the active code index.
#[test]
fn call_version_hits_without_a_process() {
    use bpspec_reference::{Process, TraceSpec};
    let _watchdog = bpspec_reference::watchdog::arm("load::call_version_hits_without_a_process");
    for (proto, scheme) in cases() {
        let (e, s1, global) = global_module(proto, scheme, "bare");
        let mut s = Scheduler::start(e.clone(), 0);
        s.record = true;
        let mb = traced_proc(&mut s, s1);
        // Version 1 is traced with call_count (legacy session); no global trace yet.
        assert_eq!(e.is_patched_in(0, 0), Some(true), "{proto:?}");
        assert!(!e.is_export_patched_in(0, 0), "{proto:?}");
        let local = TraceSpec::local().session(s1);
        assert_eq!(op!(s, e.trace_pattern_module_spec(true, &local)), Ok(2));
        let before = s.events.len();
        let p = Process {
            pid: 7,
            call_traced: 1 << s1,
        };
        let c = s.call_version(&p, 0, 1);
        assert_eq!(
            (c.version, c.counted, c.local),
            (1, true, true),
            "{proto:?}"
        );
        let evs: Vec<_> = s.events[before..]
            .iter()
            .map(|ev| (ev.session, ev.pid, ev.func))
            .collect();
        assert_eq!(evs, [(s1, 7, 1)], "{proto:?}: the local trace event");
        assert!(mb.is_empty(), "{proto:?}: nothing sent without a process");
        // Global trace patches the export entries' dispatch words at the active index.
        assert_eq!(op!(s, e.trace_pattern_module_spec(true, &global)), Ok(2));
        assert!(e.is_export_patched_in(0, 0), "{proto:?}");
        assert_eq!(op!(s, e.trace_pattern_module_spec(false, &global)), Ok(2));
        assert!(!e.is_export_patched_in(0, 0), "{proto:?}");
        // Deleted: no current version.
        assert_eq!(op!(s, e.delete()), Ok(()));
        assert_eq!(e.is_patched_in(0, 0), None, "{proto:?}");
        s.sleep();
    }
}

/// `Engine::check_trace_pattern` (`trace_pattern`'s argument check without staging) answers
/// as `trace_pattern` on a pattern that matches nothing, for every op and a spread of specs
/// (good ones, each badarg of the flags, `global`, match spec and meta, a dead session), and
/// does so without the code modification permission (it is held here while it runs).
#[test]
fn check_trace_pattern_answers_as_trace_pattern_on_nothing() {
    use bpspec_reference::tracer::{Mailbox, ProcessTracer};
    use bpspec_reference::{FlagSet, MatchSpec, Pattern, PatternOp, TraceSpec};
    let _watchdog = bpspec_reference::watchdog::arm(
        "load::check_trace_pattern_answers_as_trace_pattern_on_nothing",
    );
    let (proto, scheme) = cases().next().expect("a case");
    let e = traced_module(proto, scheme, |e| e);
    let live = e.create_session("live").unwrap();
    let dead = e.create_session("dead").unwrap();
    e.destroy_session(dead).unwrap();
    let mb = Mailbox::new(101);
    let meta = || ProcessTracer::spec(&mb);
    let specs = [
        TraceSpec::local(),
        TraceSpec::global(),
        TraceSpec::default().call_count(),
        TraceSpec::counters(FlagSet::default()),
        TraceSpec::global().call_count(),
        TraceSpec::local().call_time(),
        TraceSpec::default()
            .call_count()
            .ms(Some(MatchSpec::RETURN_TRACE)),
        TraceSpec::global().meta(meta()),
        TraceSpec::default().meta(meta()),
        TraceSpec::default()
            .call_count()
            .meta(meta())
            .ms(Some(MatchSpec::RETURN_TRACE)),
        TraceSpec::local().session(live),
        TraceSpec::local().session(dead),
        TraceSpec::global().session(dead),
    ];
    let nothing = Pattern {
        module: Some("no_such_module".into()),
        name: None,
        arity: None,
    };
    let (mut ok, mut bad) = (0, 0);
    for op in [
        PatternOp::True,
        PatternOp::False,
        PatternOp::Pause,
        PatternOp::Restart,
    ] {
        for spec in &specs {
            let checked = {
                let _held = e.seize();
                e.check_trace_pattern(op, spec)
            };
            let staged = e.trace_pattern(&nothing, op, spec).map(|n| {
                assert_eq!(n, 0, "{op:?} {spec:?}: nothing matched");
            });
            assert_eq!(checked, staged, "{op:?} {spec:?}");
            if checked.is_ok() {
                ok += 1;
            } else {
                bad += 1;
            }
        }
    }
    // Both answers occur: the comparison is not vacuous.
    assert!(ok > 0 && bad > 0, "ok {ok}, badarg {bad}");
}

/// A module's name of a function (`Ci::module`, `Area::Module`) outlives every version: its
/// MFA is the module table's, the same with a current version, after a load, and after a delete
/// and purge left the module without code (what the scenario runner keeps for a process whose
/// version became old, oracle/src/target/code.rs).
#[test]
fn module_name_outlives_its_versions() {
    use bpspec_reference::process::Ci;
    let _watchdog = bpspec_reference::watchdog::arm("load::module_name_outlives_its_versions");
    for (proto, scheme) in cases() {
        let e = traced_module(proto, scheme, |e| e);
        let name = Ci::module(0, 1);
        let want = bpspec_reference::Mfa::new("m", "f1", 0);
        assert_eq!(e.mfa_of(name), &want, "{proto:?}: version 1 current");
        let v1 = e.current_ci_of(0, 1).expect("version 1");
        assert_eq!(e.mfa_of(v1), &want, "{proto:?}: the version's own name");
        assert_ne!(v1, name, "{proto:?}: a name, not the version's code info");
        assert_eq!(e.load(), Ok(2));
        assert_eq!(e.purge(), Ok(true));
        assert_eq!(e.delete(), Ok(()));
        assert_eq!(e.purge(), Ok(true));
        assert_eq!(e.current_ci_of(0, 1), None, "{proto:?}: no current version");
        assert_eq!(
            e.mfa_of(name),
            &want,
            "{proto:?}: no version left, the name stays"
        );
    }
}

/// The charge code refuses a module's name (`calltime.rs::get_timem_break` asserts): a pbt
/// naming `Ci::module` charged at schedule-out panics instead of reading a code area.
#[test]
#[should_panic(expected = "not chargeable")]
fn charge_of_a_module_name_is_refused() {
    use bpspec_reference::process::{Ci, Pbt, Proc};
    let e = traced_module(LoadProtocol::NonBlocking, CodeIxScheme::Two, |e| e);
    let s1 = call_time_in(&e);
    let mut s = Scheduler::start(e.clone(), 0);
    let mut p = Proc::new(bpspec_reference::Process {
        pid: 9,
        call_traced: 1 << s1,
    });
    s.schedule_in(&mut p);
    p.time.push(Pbt {
        session: s1,
        ci: Some(Ci::module(0, 0)),
        accumulator: 0,
    });
    s.advance(3);
    s.schedule_out(&mut p);
}

/// An engine made `Engine::with_versions_only` (no static area, the scenario runner's on the
/// versions) runs a module's calls, patterns, trace_info and names, and refuses every
/// static-area entry point: each panics (`Engine::static_entry`), among them the name a
/// process would keep of the static area's function (`mfa_of` of `Ci::code`).
#[test]
fn versions_only_engine_refuses_the_static_area() {
    use bpspec_reference::process::Ci;
    use bpspec_reference::{InfoItem, InfoKey, Mfa, Pattern, PatternOp, Process, TraceSpec};
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let _watchdog =
        bpspec_reference::watchdog::arm("load::versions_only_engine_refuses_the_static_area");
    let e = traced_module(LoadProtocol::NonBlocking, CodeIxScheme::Two, |e| {
        e.with_versions_only()
    });
    let mut s = Scheduler::start(e.clone(), 0);
    // The versions work.
    let c = s.call_version(&Process::new(3), 0, 1);
    assert_eq!((c.version, c.counted), (1, true));
    assert_eq!(op!(s, e.trace_pattern_module(false)), 2);
    assert_eq!(e.mfa_of(Ci::module(0, 1)), &Mfa::new("m", "f1", 0));
    s.sleep();
    let mfa = Mfa::new("m", "f0", 0);
    let refused: [(&str, Box<dyn Fn()>); 6] = [
        (
            "trace_pattern",
            Box::new(|| {
                let _ = e.trace_pattern(
                    &Pattern::parse("m:_/_").unwrap(),
                    PatternOp::False,
                    &TraceSpec::local(),
                );
            }),
        ),
        (
            "trace_info",
            Box::new(|| {
                e.trace_info(0, &mfa, InfoItem::Traced);
            }),
        ),
        (
            "session_trace_info",
            Box::new(|| {
                let _ = e.session_trace_info(0, &mfa, InfoKey::Traced);
            }),
        ),
        (
            "is_patched",
            Box::new(|| {
                let _ = e.is_patched(0);
            }),
        ),
        (
            "is_export_patched",
            Box::new(|| {
                let _ = e.is_export_patched(0);
            }),
        ),
        ("mfa_of", Box::new(|| drop(e.mfa_of(Ci::code(0)).clone()))),
    ];
    for (what, f) in refused {
        let r = catch_unwind(AssertUnwindSafe(f));
        let msg = r.expect_err(what);
        let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.contains("made with_versions_only"),
            "{what}: panicked with {msg:?}"
        );
    }
    // A hit on the static area (`Scheduler::call`).
    s.wake();
    let r = catch_unwind(AssertUnwindSafe(|| s.call(0, &Process::new(4))));
    assert!(r.is_err(), "a static hit on a versions-only engine");
    s.sleep();
}

/// A trace_pattern on a module without current code (deleted) matches nothing and leaves the
/// module's patterns as they were, so the next load carries only what was set while there was
/// code (found by the linearization of load histories, models/tests/load_linearize.rs
/// `lin-delete-count`: the engine carried a pattern set after the delete, and answered 0).
#[test]
fn a_pattern_on_a_deleted_module_is_not_carried() {
    use bpspec_reference::PatternOp;
    let _watchdog =
        bpspec_reference::watchdog::arm("load::a_pattern_on_a_deleted_module_is_not_carried");
    let count = call_count();
    for (proto, scheme) in cases() {
        let e = Arc::new(
            Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
                .with_module(2, proto, false)
                .with_code_ix(scheme),
        );
        let mut s = Scheduler::start(e.clone(), 0);
        assert_eq!(
            op!(
                s,
                e.trace_pattern_funcs_op_in(0, &[0], PatternOp::True, &count)
            ),
            Ok(1)
        );
        assert_eq!(op!(s, e.delete()), Ok(()));
        assert_eq!(op!(s, e.purge()), Ok(true));
        // Deleted: both match nothing; f0's pattern (set with code) stays for the next load.
        assert_eq!(
            op!(
                s,
                e.trace_pattern_funcs_op_in(0, &[1], PatternOp::True, &count)
            ),
            Ok(0)
        );
        assert_eq!(
            op!(
                s,
                e.trace_pattern_funcs_op_in(0, &[0], PatternOp::False, &count)
            ),
            Ok(0)
        );
        assert_eq!(op!(s, e.load()), Ok(2));
        e.check_at_rest_in_code().unwrap();
        let counted: Vec<bool> = (0..2).map(|f| s.call_ext(f).counted).collect();
        assert_eq!(counted, [true, false], "{proto:?} {scheme:?}");
        s.sleep();
    }
}

/// The load torture with the collector (`LoadTortureConfig::collect`): trace_info of call_time
/// and call_count under loads, deletes, purges and trace_patterns, both protocols, with the
/// count conservation across versions at the end.
#[test]
fn load_torture_with_the_collection() {
    let _watchdog = bpspec_reference::watchdog::arm("load::load_torture_with_the_collection");
    load_torture_holds(0x636f_6c6c, |cfg| cfg.collect = true);
}

/// The load torture at 2 schedulers and 200,000 calls under each protocol, `with` applied: no
/// violation, some loads and trace_patterns (and collections with the collector), the count
/// conserved across versions.
fn load_torture_holds(
    seed: u64,
    with: impl Fn(&mut bpspec_reference::torture::load::LoadTortureConfig),
) {
    use bpspec_reference::torture::load::{run, LoadTortureConfig};
    for proto in LoadProtocol::ALL {
        let mut cfg = LoadTortureConfig::new(proto, 2, 200_000, seed);
        with(&mut cfg);
        cfg.max_time = std::time::Duration::from_secs(60);
        cfg.min_loads = 0;
        cfg.min_trace_patterns = 0;
        let rep = run(&cfg).unwrap();
        eprintln!("{}: {rep:?}", cfg.row_name());
        assert_eq!(rep.violation, None, "{}", cfg.row_name());
        assert!(
            rep.trace_patterns > 0 && rep.loads > 0 && (rep.collections > 0 || !cfg.collect),
            "{}: {rep:?}",
            cfg.row_name()
        );
        assert_eq!(rep.total_count, rep.counted, "{}", cfg.row_name());
    }
}

/// The collector makes the load torture fail under the collection's mutants it is claimed to
/// kill (`bpspec torture --load --collect`, cli/src/torture.rs `COLLECT_TORTURE_KILLS`): under
/// both protocols, at 2 schedulers and 1 million calls, each seed of six until one kills (the
/// kill is a race: `collect-skip-merge` under Blocking needed the second seed once).
#[test]
fn load_torture_collection_kills() {
    use bpspec_reference::torture::load::{run, LoadTortureConfig};
    use bpspec_reference::Mutant;
    let _watchdog = bpspec_reference::watchdog::arm("load::load_torture_collection_kills");
    for m in [
        Mutant::CollectWithoutFlip,
        Mutant::CollectFreeBeforeLastWait,
        Mutant::CollectSkipMerge,
    ] {
        for proto in LoadProtocol::ALL {
            let killed = (1..=6u64).find_map(|seed| {
                let mut cfg = LoadTortureConfig::new(proto, 2, 1_000_000, 0x636f_6c6c + seed);
                cfg.collect = true;
                cfg.mutant = Some(m);
                cfg.max_time = std::time::Duration::from_secs(20);
                cfg.min_loads = 0;
                cfg.min_trace_patterns = 0;
                run(&cfg).unwrap().violation
            });
            eprintln!("{} {proto:?}: {killed:?}", m.name());
            assert!(killed.is_some(), "{} survived under {proto:?}", m.name());
        }
    }
}

/// Proof EL reaches the code area only (docs/fewer-waits.md, EL0): a sequence that touches an
/// export area keeps W3 and W4 under the elide-idle plan even when consolidate unlinks nothing.
/// A module's export area counts as one: a global `true` again on a module's function (an idle
/// sequence on its export entry) makes all five waits, as on the static area's entries.
#[test]
fn elide_idle_keeps_w3_w4_on_a_modules_export_entries() {
    use bpspec_reference::{PatternOp, ThreadProgress, TraceSpec, WaitPlan};
    let _watchdog =
        bpspec_reference::watchdog::arm("load::elide_idle_keeps_w3_w4_on_a_modules_export_entries");
    let e = Arc::new(
        Engine::<Qsbr>::new(EngineConfig::simple(0, 1))
            .with_module(1, LoadProtocol::NonBlocking, false)
            .with_global_trace()
            .with_wait_plan(WaitPlan::BatchElideIdle),
    );
    let global = TraceSpec::global();
    assert_eq!(
        e.trace_pattern_funcs_op_in(0, &[0], PatternOp::True, &global),
        Ok(1)
    );
    let before = e.progress.completed_waits();
    assert_eq!(
        e.trace_pattern_funcs_op_in(0, &[0], PatternOp::True, &global),
        Ok(1)
    );
    assert_eq!(
        e.progress.completed_waits() - before,
        5,
        "W0-W4 on an idle sequence on the module's export entry"
    );
    e.check_at_rest_in_code().unwrap();
}
