//! call_time and call_memory against what OTP's trace_call_time_SUITE, trace_call_memory_SUITE
//! and trace_session_SUITE assert, with the logical clock so every figure is exact; and the
//! OTP 29 collection under concurrent schedulers (`trace_info_noblock`, `reset` / erlang/otp#8835).

use bpspec_reference::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;

fn mfa(i: usize) -> Mfa {
    Mfa::new("m", &format!("f{i}"), 0)
}

fn engine(n: usize, schedulers: usize) -> Arc<Engine> {
    Arc::new(Engine::new(EngineConfig::simple(n, schedulers)).with_stop_the_world())
}

fn tp(e: &Engine, f: usize, op: PatternOp, fl: FlagSet) -> usize {
    let n = e
        .trace_pattern(&Pattern::exact(&mfa(f)), op, &TraceSpec::from(fl))
        .unwrap();
    e.check_at_rest().unwrap();
    n
}

fn info(e: &Engine, f: usize, key: InfoKey) -> String {
    let t = e.trace_info_term(0, &mfa(f), key);
    e.check_at_rest().unwrap();
    t.to_string()
}

const TIME: FlagSet = FlagSet::CALL_TIME;
const MEM: FlagSet = FlagSet::CALL_MEMORY;
const ALL3: FlagSet = FlagSet {
    local: false,
    call_count: true,
    call_time: true,
    call_memory: true,
};

/// A scheduler that is asleep except inside `awake`, so the stager (this thread) never waits
/// for it forever.
fn sched(e: &Arc<Engine>, id: usize) -> Scheduler {
    let mut s = Scheduler::start(e.clone(), id);
    s.sleep();
    s
}

fn awake(s: &mut Scheduler, f: impl FnOnce(&mut Scheduler)) {
    s.wake();
    f(s);
    s.sleep();
}

fn traced(pid: u64) -> Proc {
    Proc::new(Process::call_traced_in(pid, 0))
}

/// The usual fixture: `fns` traced with their flags (`PatternOp::True`, in order), scheduler 0
/// asleep, and the process `pid` with the call-trace flag.
fn one_proc_on(e: &Arc<Engine>, fns: &[(usize, FlagSet)], pid: u64) -> (Scheduler, Proc) {
    let s = sched(e, 0);
    for &(f, fl) in fns {
        tp(e, f, PatternOp::True, fl);
    }
    (s, traced(pid))
}

/// `one_proc_on` an engine of `n` functions and one scheduler.
fn one_proc(n: usize, fns: &[(usize, FlagSet)], pid: u64) -> (Arc<Engine>, Scheduler, Proc) {
    let e = engine(n, 1);
    let (s, p) = one_proc_on(&e, fns, pid);
    (e, s, p)
}

/// The rendered `trace:info` of f under `key` is `want`.
#[track_caller]
fn expect(e: &Engine, f: usize, key: InfoKey, want: &str) {
    assert_eq!(info(e, f, key), want);
}

/// `expect`, read twice: reading adds nothing (trace_session_SUITE timem_basic: identical
/// results).
#[track_caller]
fn expect_stable(e: &Engine, f: usize, key: InfoKey, want: &str) {
    expect(e, f, key, want);
    expect(e, f, key, want);
}

/// One slice of `p` on the asleep scheduler `s`: woken, `p` scheduled in, `body`, `p`
/// scheduled out, asleep again.
fn slice(s: &mut Scheduler, p: &mut Proc, body: impl FnOnce(&mut Scheduler, &mut Proc)) {
    awake(s, |s| {
        s.schedule_in(p);
        body(s, p);
        s.schedule_out(p);
    });
}

/// One call of f that lasts `dt` inside it.
fn call(s: &mut Scheduler, p: &mut Proc, f: usize, dt: i64) {
    s.call_proc(f, p);
    s.advance(dt);
    s.ret(p);
}

#[test]
fn info_shapes_follow_erts() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::info_shapes_follow_erts");
    let e = engine(2, 1);
    expect(&e, 0, InfoKey::CallTime, "{call_time,false}");
    expect(&e, 0, InfoKey::All, "{all,false}");
    assert_eq!(
        e.trace_info_term(0, &Mfa::new("m", "nope", 0), InfoKey::CallTime)
            .to_string(),
        "{call_time,undefined}"
    );
    assert_eq!(tp(&e, 0, PatternOp::True, ALL3), 1);
    expect(&e, 0, InfoKey::CallTime, "{call_time,[]}");
    expect(&e, 0, InfoKey::CallMemory, "{call_memory,[]}");
    expect(
        &e,
        0,
        InfoKey::All,
        "{all,[{traced,false},{match_spec,false},{meta,false},{meta_match_spec,false},\
         {call_memory,[]},{call_time,[]},{call_count,0}]}",
    );
    tp(&e, 0, PatternOp::Pause, TIME);
    expect(&e, 0, InfoKey::CallTime, "{call_time,[]}");
    tp(&e, 0, PatternOp::Restart, TIME);
    expect(&e, 0, InfoKey::CallTime, "{call_time,[]}");
    tp(&e, 0, PatternOp::False, ALL3);
    expect(&e, 0, InfoKey::CallTime, "{call_time,false}");
    expect(&e, 0, InfoKey::All, "{all,false}");
    // The ERTS quirk seen on OTP 25 too: pause on a node without the counter creates it.
    tp(
        &e,
        1,
        PatternOp::True,
        FlagSet::from(TraceFlags {
            local: true,
            call_count: false,
        }),
    );
    tp(&e, 1, PatternOp::Pause, TIME);
    expect(
        &e,
        1,
        InfoKey::All,
        "{all,[{traced,local},{match_spec,[]},{meta,false},{meta_match_spec,false},\
         {call_memory,false},{call_time,[]},{call_count,false}]}",
    );
}

#[test]
fn basic_time_and_memory_are_exact() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::basic_time_and_memory_are_exact");
    let (e, mut s, mut p) = one_proc(2, &[(0, ALL3)], 9);
    slice(&mut s, &mut p, |s, p| {
        for _ in 0..5 {
            s.call_proc(0, p);
            s.advance(3);
            p.alloc(3); // a 2-tuple
            s.ret(p);
            s.advance(100); // outside any traced function: charged to nobody
        }
    });
    expect_stable(&e, 0, InfoKey::CallTime, "{call_time,[{<0.9.0>,5,0,15}]}");
    expect(&e, 0, InfoKey::CallMemory, "{call_memory,[{<0.9.0>,5,15}]}");
    expect(&e, 0, InfoKey::CallCount, "{call_count,5}");
    // Seconds and microseconds.
    slice(&mut s, &mut p, |s, p| call(s, p, 0, 2_000_000));
    expect(&e, 0, InfoKey::CallTime, "{call_time,[{<0.9.0>,6,2,15}]}");
}

#[test]
fn process_without_call_flag_is_not_timed_but_counted() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "call_time::process_without_call_flag_is_not_timed_but_counted",
    );
    let e = engine(1, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, ALL3);
    let mut p = Proc::new(Process::new(4));
    slice(&mut s, &mut p, |s, p| call(s, p, 0, 7));
    expect(&e, 0, InfoKey::CallTime, "{call_time,[]}");
    expect(&e, 0, InfoKey::CallCount, "{call_count,1}");
    assert!(p.stack.is_empty() && p.time.is_empty());
}

#[test]
fn called_function_gets_its_own_time_and_caller_excludes_it() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "call_time::called_function_gets_its_own_time_and_caller_excludes_it",
    );
    let (e, mut s, mut p) = one_proc(3, &[(0, TIME), (1, TIME)], 5);
    slice(&mut s, &mut p, |s, p| {
        s.call_proc(0, p); // f0
        s.advance(10);
        s.call_proc(1, p); //   f1
        s.advance(4);
        call(s, p, 2, 6); //     f2 untraced: its time goes to f1
        s.ret(p); //   back in f0
        s.advance(1);
        s.ret(p);
        s.advance(50);
    });
    expect(&e, 0, InfoKey::CallTime, "{call_time,[{<0.5.0>,1,0,11}]}");
    expect(&e, 1, InfoKey::CallTime, "{call_time,[{<0.5.0>,1,0,10}]}");
}

#[test]
fn tail_call_reuses_the_trace_frame() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::tail_call_reuses_the_trace_frame");
    let (e, mut s, mut p) = one_proc(2, &[(0, TIME), (1, TIME)], 6);
    slice(&mut s, &mut p, |s, p| {
        s.call_proc(0, p);
        s.advance(2);
        s.tail_call(1, p);
        assert_eq!(p.stack.len(), 2, "one continuation and one trace frame");
        s.advance(5);
        s.ret(p);
        assert!(p.stack.is_empty());
        assert_eq!(
            p.time[0].ci, None,
            "the outermost frame restored 'no function'"
        );
    });
    expect(&e, 0, InfoKey::CallTime, "{call_time,[{<0.6.0>,1,0,2}]}");
    expect(&e, 1, InfoKey::CallTime, "{call_time,[{<0.6.0>,1,0,5}]}");
}

#[test]
fn time_scheduled_out_is_not_charged() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::time_scheduled_out_is_not_charged");
    let e = engine(1, 2);
    let mut s0 = sched(&e, 0);
    let mut s1 = sched(&e, 1);
    tp(&e, 0, PatternOp::True, TIME);
    let mut p = traced(8);
    awake(&mut s0, |s| {
        s.schedule_in(&mut p);
        s.call_proc(0, &mut p);
        s.advance(3);
        s.schedule_out(&mut p);
        s.advance(1000);
    });
    // Migrates to scheduler 1 (another slot of the same object), whose clock is elsewhere.
    awake(&mut s1, |s| {
        s.advance(500);
        s.schedule_in(&mut p);
        s.advance(4);
        s.ret(&mut p);
        s.schedule_out(&mut p);
    });
    expect(&e, 0, InfoKey::CallTime, "{call_time,[{<0.8.0>,1,0,7}]}");
}

#[test]
fn pause_freezes_the_count_and_restart_starts_from_zero() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "call_time::pause_freezes_the_count_and_restart_starts_from_zero",
    );
    let (e, mut s, mut p) = one_proc(1, &[(0, TIME)], 3);
    slice(&mut s, &mut p, |s, p| {
        call(s, p, 0, 2);
        call(s, p, 0, 2);
    });
    tp(&e, 0, PatternOp::Pause, TIME);
    slice(&mut s, &mut p, |s, p| call(s, p, 0, 2));
    expect_stable(&e, 0, InfoKey::CallTime, "{call_time,[{<0.3.0>,2,0,4}]}");
    tp(&e, 0, PatternOp::Restart, TIME);
    expect(&e, 0, InfoKey::CallTime, "{call_time,[]}");
    slice(&mut s, &mut p, |s, p| call(s, p, 0, 1));
    expect(&e, 0, InfoKey::CallTime, "{call_time,[{<0.3.0>,1,0,1}]}");
}

#[test]
fn paused_time_still_grows_from_frames_in_flight() {
    let _watchdog =
        bpspec_reference::watchdog::arm("call_time::paused_time_still_grows_from_frames_in_flight");
    // Notes §4: only the count of a paused counter is frozen.
    let (e, mut s, mut p) = one_proc(1, &[(0, TIME)], 3);
    slice(&mut s, &mut p, |s, p| {
        s.call_proc(0, p);
        s.advance(2);
    });
    tp(&e, 0, PatternOp::Pause, TIME);
    slice(&mut s, &mut p, |s, p| {
        s.advance(5);
        s.ret(p);
    });
    expect(&e, 0, InfoKey::CallTime, "{call_time,[{<0.3.0>,1,0,7}]}");
}

#[test]
fn call_time_off_keeps_call_memory() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::call_time_off_keeps_call_memory");
    let (e, mut s, mut p) = one_proc(1, &[(0, TIME), (0, MEM)], 2);
    let run = |s: &mut Scheduler, p: &mut Proc| {
        s.call_proc(0, p);
        p.alloc(3);
        s.advance(1);
        s.ret(p);
    };
    slice(&mut s, &mut p, run);
    tp(&e, 0, PatternOp::False, TIME);
    slice(&mut s, &mut p, run);
    tp(&e, 0, PatternOp::True, TIME);
    slice(&mut s, &mut p, run);
    expect(&e, 0, InfoKey::CallMemory, "{call_memory,[{<0.2.0>,3,9}]}");
    expect(&e, 0, InfoKey::CallTime, "{call_time,[{<0.2.0>,1,0,1}]}");
}

#[test]
fn stop_the_world_reports_the_same_figures() {
    let _watchdog =
        bpspec_reference::watchdog::arm("call_time::stop_the_world_reports_the_same_figures");
    let e = engine(1, 2);
    let (mut s, mut p) = one_proc_on(&e, &[(0, ALL3)], 11);
    let mut q = traced(12);
    awake(&mut s, |s| {
        for (proc, dt) in [(&mut p, 3), (&mut q, 4)] {
            s.schedule_in(proc);
            s.call_proc(0, proc);
            s.advance(dt);
            proc.alloc(dt);
            s.ret(proc);
            s.schedule_out(proc);
        }
    });
    for key in [InfoKey::CallTime, InfoKey::CallMemory, InfoKey::All] {
        let nb = e.trace_info_with(0, &mfa(0), key, term::Collection::NonBlocking);
        let stw = e.trace_info_with(0, &mfa(0), key, term::Collection::StopTheWorld);
        assert_eq!(nb, stw);
    }
    expect(
        &e,
        0,
        InfoKey::CallTime,
        "{call_time,[{<0.11.0>,1,0,3},{<0.12.0>,1,0,4}]}",
    );
}

#[test]
fn many_pids_rehash_and_lose_nothing() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::many_pids_rehash_and_lose_nothing");
    let e = engine(1, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, TIME);
    awake(&mut s, |s| {
        for pid in 0..200u64 {
            let mut p = traced(pid * 16 + 1); // collide on (pid >> 4) % n less than sequential
            s.schedule_in(&mut p);
            call(s, &mut p, 0, pid as i64);
            s.schedule_out(&mut p);
        }
    });
    let t = e.trace_info_term(0, &mfa(0), InfoKey::CallTime);
    let Term::Tuple(v) = &t else { panic!() };
    let Term::List(l) = &v[1] else { panic!() };
    assert_eq!(l.len(), 200);
    assert_eq!(totals(&t).1, (0..200).sum::<i64>());
}

/// Totals over all pids: (count, time) from a call_time result.
fn totals(t: &Term) -> (i64, i64) {
    let Term::Tuple(v) = t else { panic!("{t}") };
    let Term::List(l) = &v[1] else { panic!("{t}") };
    l.iter().fold((0, 0), |(c, a), x| match x {
        Term::Tuple(f) => match (&f[1], &f[2], &f[3]) {
            (Term::Int(n), Term::Int(s), Term::Int(us)) => (c + n, a + s * 1_000_000 + us),
            _ => panic!("{t}"),
        },
        _ => panic!("{t}"),
    })
}

/// Workers on `n` schedulers call f0 (1 time unit inside each call); the main thread queries.
struct Workers {
    stop: Arc<AtomicBool>,
    /// Calls started and calls done.
    started: Arc<AtomicU64>,
    done: Arc<AtomicU64>,
    hs: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    /// Calls (started, done) so far, `done` read first: done <= started.
    fn done_started(&self) -> (i64, i64) {
        // Acquire: pairs with the workers' Release increments.
        let done = self.done.load(Acquire) as i64;
        (done, self.started.load(Acquire) as i64)
    }

    /// Stops and joins every worker; returns the calls done.
    fn stop(self) -> i64 {
        self.stop.store(true, Relaxed);
        for h in self.hs {
            h.join().unwrap();
        }
        // Acquire: pairs with the workers' Release increments (joined: all of them).
        self.done.load(Acquire) as i64
    }
}

fn workers(e: &Arc<Engine>, n: usize) -> Workers {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let hs = (0..n)
        .map(|id| {
            let (e, stop, started, done) = (e.clone(), stop.clone(), started.clone(), done.clone());
            std::thread::spawn(move || {
                let mut s = Scheduler::start(e, id);
                s.record = false;
                let mut p = traced(100 + id as u64);
                let mut k = 0u64;
                while !stop.load(Relaxed) {
                    s.schedule_in(&mut p);
                    for _ in 0..8 {
                        // Release/Acquire: the checkpoints pair with the main thread's loads.
                        started.fetch_add(1, Release);
                        call(&mut s, &mut p, 0, 1);
                        done.fetch_add(1, Release);
                    }
                    s.schedule_out(&mut p);
                    s.progress();
                    k += 1;
                    if k.is_multiple_of(64) {
                        std::thread::yield_now();
                    }
                }
                s.sleep();
            })
        })
        .collect();
    Workers {
        stop,
        started,
        done,
        hs,
    }
}

/// Call totals of f0 under `collection`.
fn totals_with(e: &Engine, collection: term::Collection) -> (i64, i64) {
    totals(&e.trace_info_with(0, &mfa(0), InfoKey::CallTime, collection))
}

/// f0 traced with `fl` on a two-scheduler engine while two workers call it: `body` runs against
/// them, then they stop and the engine is checked at rest. Returns the engine and the calls done.
fn under_load(fl: FlagSet, body: impl FnOnce(&Engine, &Workers)) -> (Arc<Engine>, i64) {
    let e = engine(1, 2);
    tp(&e, 0, PatternOp::True, fl);
    let w = workers(&e, 2);
    body(&e, &w);
    let calls = w.stop();
    e.check_at_rest().unwrap();
    (e, calls)
}

/// Queries f0 `rounds` times under `collection` while the workers run: every count lies between
/// the calls done before the query and the calls started after it, and never goes back; each
/// call lasts one unit, so time <= count.  Then conservation at quiescence: every call and every
/// time unit exactly once.
fn conserves_under_load(rounds: usize, collection: term::Collection) {
    let (e, calls) = under_load(TIME, |e, w| {
        let mut last = 0;
        for _ in 0..rounds {
            let before = w.done_started().0;
            let (count, time) = totals_with(e, collection);
            let after = w.done_started().1;
            assert!(
                before <= count && count <= after,
                "{before} <= {count} <= {after}"
            );
            assert!(count >= last, "count went back from {last} to {count}");
            assert!(
                time <= count,
                "each call lasts one unit: time {time} > count {count}"
            );
            last = count;
        }
    });
    assert_eq!(
        totals_with(&e, term::Collection::NonBlocking),
        (calls, calls)
    );
}

#[test]
fn trace_info_noblock_counts_between_checkpoints_and_conserve() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "call_time::trace_info_noblock_counts_between_checkpoints_and_conserve",
    );
    conserves_under_load(200, term::Collection::NonBlocking);
}

#[test]
fn trace_info_noblock_paused_queries_are_identical() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "call_time::trace_info_noblock_paused_queries_are_identical",
    );
    let mut c = 0;
    under_load(TIME, |e, _| {
        let count = || totals(&e.trace_info_term(0, &mfa(0), InfoKey::CallTime)).0;
        std::thread::sleep(std::time::Duration::from_millis(20));
        tp(e, 0, PatternOp::Pause, TIME);
        let a = count();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(a, count(), "paused count changed");
        tp(e, 0, PatternOp::Restart, TIME);
        std::thread::sleep(std::time::Duration::from_millis(20));
        c = count();
    });
    assert!(c > 0, "restart counts again");
}

#[test]
fn reset_racing_calls_is_safe_8835() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::reset_racing_calls_is_safe_8835");
    for fl in [TIME, MEM] {
        under_load(fl, |e, _| {
            for i in 0..100 {
                let op = if i % 2 == 0 {
                    PatternOp::True
                } else {
                    PatternOp::Restart
                };
                tp(e, 0, op, fl);
                let _ = e.trace_info_term(0, &mfa(0), InfoKey::All);
            }
        });
    }
}

#[test]
fn stop_the_world_under_load_conserves() {
    let _watchdog =
        bpspec_reference::watchdog::arm("call_time::stop_the_world_under_load_conserves");
    conserves_under_load(100, term::Collection::StopTheWorld);
}

#[test]
fn flag_list_parses_and_rejects() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::flag_list_parses_and_rejects");
    assert_eq!(
        FlagSet::parse("[call_time, call_memory]").unwrap(),
        FlagSet {
            call_time: true,
            call_memory: true,
            ..Default::default()
        }
    );
    let err = FlagSet::parse("[call_time, bogus]")
        .unwrap_err()
        .to_string();
    assert!(err.contains("column 13") && err.contains("bogus"), "{err}");
    let e = engine(1, 1);
    assert!(e
        .trace_pattern(
            &Pattern::all(),
            PatternOp::True,
            &TraceSpec::from(FlagSet::default())
        )
        .is_err());
    assert_eq!(InfoKey::parse("call_memory"), Some(InfoKey::CallMemory));
    assert_eq!(InfoKey::parse("calltime"), None);
}

#[test]
fn trace_info_noblock_all_reports_identical_time_and_memory_counts() {
    let _watchdog = bpspec_reference::watchdog::arm(
        "call_time::trace_info_noblock_all_reports_identical_time_and_memory_counts",
    );
    let time_mem = FlagSet {
        call_time: true,
        call_memory: true,
        ..Default::default()
    };
    under_load(time_mem, |e, _| {
        for _ in 0..100 {
            let t = e.trace_info_term(0, &mfa(0), InfoKey::All);
            let Term::Tuple(kv) = &t else { panic!("{t}") };
            let Term::List(items) = &kv[1] else {
                panic!("{t}")
            };
            let counts = |key: &str| -> Vec<(u64, i64)> {
                let item = items
                .iter()
                .find(|i| matches!(i, Term::Tuple(p) if p[0] == Term::Atom(if key == "t" { "call_time" } else { "call_memory" })))
                .expect("key present");
                let Term::Tuple(p) = item else { unreachable!() };
                let Term::List(l) = &p[1] else { panic!("{t}") };
                l.iter()
                    .map(|x| match x {
                        Term::Tuple(f) => match (&f[0], &f[1]) {
                            (Term::Pid(p), Term::Int(c)) => (*p, *c),
                            _ => panic!("{t}"),
                        },
                        _ => panic!("{t}"),
                    })
                    .collect()
            };
            assert_eq!(counts("t"), counts("m"), "{t}");
        }
    });
}

/// The pause/restart semantics checked above fail on their mutants (debug builds only: mutants
/// exist in checked builds).
#[test]
#[cfg(debug_assertions)]
fn pause_and_restart_checks_catch_their_mutants() {
    let _watchdog =
        bpspec_reference::watchdog::arm("call_time::pause_and_restart_checks_catch_their_mutants");
    let run = |m: Option<Mutant>| -> (String, String) {
        let e =
            Arc::new(Engine::new(EngineConfig::simple(1, 1).with_mutant(m)).with_stop_the_world());
        let (mut s, mut p) = one_proc_on(&e, &[(0, TIME)], 3);
        slice(&mut s, &mut p, |s, p| call(s, p, 0, 1));
        tp(&e, 0, PatternOp::Pause, TIME);
        slice(&mut s, &mut p, |s, p| call(s, p, 0, 1));
        let paused = info(&e, 0, InfoKey::CallTime);
        tp(&e, 0, PatternOp::Restart, TIME);
        let restarted = info(&e, 0, InfoKey::CallTime);
        (paused, restarted)
    };
    let good = (
        "{call_time,[{<0.3.0>,1,0,1}]}".to_string(),
        "{call_time,[]}".to_string(),
    );
    assert_eq!(run(None), good);
    assert_ne!(run(Some(Mutant::TimemPauseKeepsRunning)).0, good.0);
    assert_ne!(run(Some(Mutant::TimemRestartKeepsCounter)).1, good.1);
}

/// The example in docs/collection.md §8, verbatim in behaviour.
#[test]
fn docs_example_runs() {
    let _watchdog = bpspec_reference::watchdog::arm("call_time::docs_example_runs");
    let e = Arc::new(Engine::<Qsbr>::new(EngineConfig::simple(2, 1)).with_stop_the_world());
    let n = e
        .trace_pattern(
            &Pattern::parse("m:f0/0").unwrap(),
            PatternOp::True,
            &TraceSpec::from(FlagSet::parse("[call_time, call_memory]").unwrap()),
        )
        .unwrap();
    assert_eq!(n, 1);
    let mut s = Scheduler::start(e.clone(), 0);
    let mut p = Proc::new(Process::call_traced_in(7, 0));
    s.schedule_in(&mut p);
    s.call_proc(0, &mut p);
    s.advance(3);
    p.alloc(3);
    s.ret(&mut p);
    s.schedule_out(&mut p);
    s.sleep();
    assert_eq!(
        e.trace_info_term(0, &Mfa::new("m", "f0", 0), InfoKey::All)
            .to_string(),
        "{all,[{traced,false},{match_spec,false},{meta,false},{meta_match_spec,false},\
         {call_memory,[{<0.7.0>,1,3}]},{call_time,[{<0.7.0>,1,0,3}]},{call_count,false}]}"
    );
}

/// The call_time + call_memory segfault (docs/erts-findings/ctm-segfault.md): a call_time-only
/// caller `f0` calls `f1`, traced with call_time (+ call_memory). The crash-free semantics is
/// that `f0`'s call_time does not depend on whether `f1` also has call_memory: 3 before the
/// call and 5 after the return. The proposed fix (`ctm-two-prev-slots`, one prev slot per kind)
/// agrees with it; the engine as it is (ERTS's single `prev_info`, where ERTS then dereferences
/// NULL and the engine charges nothing) loses the 5, which is how this check fails.
#[test]
#[cfg(debug_assertions)]
fn ctm_two_prev_slots_agrees_with_call_time_alone() {
    let run = |callee: FlagSet, m: Option<Mutant>| -> (String, String) {
        let e =
            Arc::new(Engine::new(EngineConfig::simple(2, 1).with_mutant(m)).with_stop_the_world());
        let (mut s, mut p) = one_proc_on(&e, &[(0, TIME), (1, callee)], 7);
        slice(&mut s, &mut p, |s, p| {
            s.call_proc(0, p);
            s.advance(3);
            call(s, p, 1, 4);
            s.advance(5);
            s.ret(p);
        });
        (
            info(&e, 0, InfoKey::CallTime),
            info(&e, 1, InfoKey::CallTime),
        )
    };
    let both = FlagSet {
        call_time: true,
        call_memory: true,
        ..Default::default()
    };
    let alone = run(TIME, None);
    assert_eq!(
        alone,
        (
            "{call_time,[{<0.7.0>,1,0,8}]}".to_string(),
            "{call_time,[{<0.7.0>,1,0,4}]}".to_string()
        )
    );
    assert_eq!(run(TIME, Some(Mutant::CtmTwoPrevSlots)), alone);
    assert_eq!(run(both, Some(Mutant::CtmTwoPrevSlots)), alone);
    let single = run(both, None);
    assert_eq!(single.1, alone.1);
    assert_eq!(
        single.0, "{call_time,[{<0.7.0>,1,0,3}]}",
        "ERTS's single prev_info"
    );
}
