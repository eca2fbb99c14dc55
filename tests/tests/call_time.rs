//! call_time and call_memory against what OTP's trace_call_time_SUITE, trace_call_memory_SUITE
//! and trace_session_SUITE assert, with the logical clock so every figure is exact; and the
//! OTP 29 collection under concurrent schedulers (`trace_info_noblock`, `reset` / #8835).

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

#[test]
fn info_shapes_follow_erts() {
    let e = engine(2, 1);
    assert_eq!(info(&e, 0, InfoKey::CallTime), "{call_time,false}");
    assert_eq!(info(&e, 0, InfoKey::All), "{all,false}");
    assert_eq!(
        e.trace_info_term(0, &Mfa::new("m", "nope", 0), InfoKey::CallTime)
            .to_string(),
        "{call_time,undefined}"
    );
    assert_eq!(tp(&e, 0, PatternOp::True, ALL3), 1);
    assert_eq!(info(&e, 0, InfoKey::CallTime), "{call_time,[]}");
    assert_eq!(info(&e, 0, InfoKey::CallMemory), "{call_memory,[]}");
    assert_eq!(
        info(&e, 0, InfoKey::All),
        "{all,[{traced,false},{match_spec,false},{meta,false},{meta_match_spec,false},\
         {call_memory,[]},{call_time,[]},{call_count,0}]}"
    );
    tp(&e, 0, PatternOp::Pause, TIME);
    assert_eq!(info(&e, 0, InfoKey::CallTime), "{call_time,[]}");
    tp(&e, 0, PatternOp::Restart, TIME);
    assert_eq!(info(&e, 0, InfoKey::CallTime), "{call_time,[]}");
    tp(&e, 0, PatternOp::False, ALL3);
    assert_eq!(info(&e, 0, InfoKey::CallTime), "{call_time,false}");
    assert_eq!(info(&e, 0, InfoKey::All), "{all,false}");
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
    assert_eq!(
        info(&e, 1, InfoKey::All),
        "{all,[{traced,local},{match_spec,[]},{meta,false},{meta_match_spec,false},\
         {call_memory,false},{call_time,[]},{call_count,false}]}"
    );
}

#[test]
fn basic_time_and_memory_are_exact() {
    let e = engine(2, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, ALL3);
    let mut p = traced(9);
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        for _ in 0..5 {
            s.call_proc(0, &mut p);
            s.advance(3);
            p.alloc(3); // a 2-tuple
            s.ret(&mut p);
            s.advance(100); // outside any traced function: charged to nobody
        }
        s.schedule_out(&mut p);
    });
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.9.0>,5,0,15}]}"
    );
    assert_eq!(
        info(&e, 0, InfoKey::CallMemory),
        "{call_memory,[{<0.9.0>,5,15}]}"
    );
    assert_eq!(info(&e, 0, InfoKey::CallCount), "{call_count,5}");
    // Reading adds nothing (trace_session_SUITE timem_basic: identical results).
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.9.0>,5,0,15}]}"
    );
    // Seconds and microseconds.
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        s.call_proc(0, &mut p);
        s.advance(2_000_000);
        s.ret(&mut p);
        s.schedule_out(&mut p);
    });
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.9.0>,6,2,15}]}"
    );
}

#[test]
fn process_without_call_flag_is_not_timed_but_counted() {
    let e = engine(1, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, ALL3);
    let mut p = Proc::new(Process::new(4));
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        s.call_proc(0, &mut p);
        s.advance(7);
        s.ret(&mut p);
        s.schedule_out(&mut p);
    });
    assert_eq!(info(&e, 0, InfoKey::CallTime), "{call_time,[]}");
    assert_eq!(info(&e, 0, InfoKey::CallCount), "{call_count,1}");
    assert!(p.stack.is_empty() && p.time.is_empty());
}

#[test]
fn called_function_gets_its_own_time_and_caller_excludes_it() {
    let e = engine(3, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, TIME);
    tp(&e, 1, PatternOp::True, TIME);
    let mut p = traced(5);
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        s.call_proc(0, &mut p); // f0
        s.advance(10);
        s.call_proc(1, &mut p); //   f1
        s.advance(4);
        s.call_proc(2, &mut p); //     f2 untraced: its time goes to f1
        s.advance(6);
        s.ret(&mut p);
        s.ret(&mut p); //   back in f0
        s.advance(1);
        s.ret(&mut p);
        s.advance(50);
        s.schedule_out(&mut p);
    });
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.5.0>,1,0,11}]}"
    );
    assert_eq!(
        info(&e, 1, InfoKey::CallTime),
        "{call_time,[{<0.5.0>,1,0,10}]}"
    );
}

#[test]
fn tail_call_reuses_the_trace_frame() {
    let e = engine(2, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, TIME);
    tp(&e, 1, PatternOp::True, TIME);
    let mut p = traced(6);
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        s.call_proc(0, &mut p);
        s.advance(2);
        s.tail_call(1, &mut p);
        assert_eq!(p.stack.len(), 2, "one continuation and one trace frame");
        s.advance(5);
        s.ret(&mut p);
        assert!(p.stack.is_empty());
        assert_eq!(
            p.time[0].ci, None,
            "the outermost frame restored 'no function'"
        );
        s.schedule_out(&mut p);
    });
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.6.0>,1,0,2}]}"
    );
    assert_eq!(
        info(&e, 1, InfoKey::CallTime),
        "{call_time,[{<0.6.0>,1,0,5}]}"
    );
}

#[test]
fn time_scheduled_out_is_not_charged() {
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
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.8.0>,1,0,7}]}"
    );
}

#[test]
fn pause_freezes_the_count_and_restart_starts_from_zero() {
    let e = engine(1, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, TIME);
    let mut p = traced(3);
    let call = |s: &mut Scheduler, p: &mut Proc, dt| {
        s.call_proc(0, p);
        s.advance(dt);
        s.ret(p);
    };
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        call(s, &mut p, 2);
        call(s, &mut p, 2);
        s.schedule_out(&mut p);
    });
    tp(&e, 0, PatternOp::Pause, TIME);
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        call(s, &mut p, 2);
        s.schedule_out(&mut p);
    });
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.3.0>,2,0,4}]}"
    );
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.3.0>,2,0,4}]}"
    );
    tp(&e, 0, PatternOp::Restart, TIME);
    assert_eq!(info(&e, 0, InfoKey::CallTime), "{call_time,[]}");
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        call(s, &mut p, 1);
        s.schedule_out(&mut p);
    });
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.3.0>,1,0,1}]}"
    );
}

#[test]
fn paused_time_still_grows_from_frames_in_flight() {
    // Notes §4: only the count of a paused counter is frozen.
    let e = engine(1, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, TIME);
    let mut p = traced(3);
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        s.call_proc(0, &mut p);
        s.advance(2);
        s.schedule_out(&mut p);
    });
    tp(&e, 0, PatternOp::Pause, TIME);
    awake(&mut s, |s| {
        s.schedule_in(&mut p);
        s.advance(5);
        s.ret(&mut p);
        s.schedule_out(&mut p);
    });
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.3.0>,1,0,7}]}"
    );
}

#[test]
fn call_time_off_keeps_call_memory() {
    let e = engine(1, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, TIME);
    tp(&e, 0, PatternOp::True, MEM);
    let mut p = traced(2);
    let run = |s: &mut Scheduler, p: &mut Proc| {
        s.schedule_in(p);
        s.call_proc(0, p);
        p.alloc(3);
        s.advance(1);
        s.ret(p);
        s.schedule_out(p);
    };
    awake(&mut s, |s| run(s, &mut p));
    tp(&e, 0, PatternOp::False, TIME);
    awake(&mut s, |s| run(s, &mut p));
    tp(&e, 0, PatternOp::True, TIME);
    awake(&mut s, |s| run(s, &mut p));
    assert_eq!(
        info(&e, 0, InfoKey::CallMemory),
        "{call_memory,[{<0.2.0>,3,9}]}"
    );
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.2.0>,1,0,1}]}"
    );
}

#[test]
fn stop_the_world_reports_the_same_figures() {
    let e = engine(1, 2);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, ALL3);
    let mut p = traced(11);
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
    assert_eq!(
        info(&e, 0, InfoKey::CallTime),
        "{call_time,[{<0.11.0>,1,0,3},{<0.12.0>,1,0,4}]}"
    );
}

#[test]
fn many_pids_rehash_and_lose_nothing() {
    let e = engine(1, 1);
    let mut s = sched(&e, 0);
    tp(&e, 0, PatternOp::True, TIME);
    awake(&mut s, |s| {
        for pid in 0..200u64 {
            let mut p = traced(pid * 16 + 1); // collide on (pid >> 4) % n less than sequential
            s.schedule_in(&mut p);
            s.call_proc(0, &mut p);
            s.advance(pid as i64);
            s.ret(&mut p);
            s.schedule_out(&mut p);
        }
    });
    let t = e.trace_info_term(0, &mfa(0), InfoKey::CallTime);
    let Term::Tuple(v) = t else { panic!() };
    let Term::List(l) = &v[1] else { panic!() };
    assert_eq!(l.len(), 200);
    let total: i64 = l
        .iter()
        .map(|x| match x {
            Term::Tuple(f) => match (&f[2], &f[3]) {
                (Term::Int(s), Term::Int(us)) => s * 1_000_000 + us,
                _ => panic!(),
            },
            _ => panic!(),
        })
        .sum();
    assert_eq!(total, (0..200).sum::<i64>());
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

/// Workers on two schedulers call f0 (1 time unit inside each call); the main thread queries.
/// Returns (stop flag, calls started, calls done, handles).
#[allow(clippy::type_complexity)]
fn workers(
    e: &Arc<Engine>,
    n: usize,
) -> (
    Arc<AtomicBool>,
    Arc<AtomicU64>,
    Arc<AtomicU64>,
    Vec<std::thread::JoinHandle<()>>,
) {
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
                        s.call_proc(0, &mut p);
                        s.advance(1);
                        s.ret(&mut p);
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
    (stop, started, done, hs)
}

#[test]
fn trace_info_noblock_counts_between_checkpoints_and_conserve() {
    let e = engine(1, 2);
    tp(&e, 0, PatternOp::True, TIME);
    let (stop, started, done, hs) = workers(&e, 2);
    let mut last = 0;
    for _ in 0..200 {
        // Acquire: pairs with the workers' Release increments.
        let before = done.load(Acquire) as i64;
        let (count, time) = totals(&e.trace_info_term(0, &mfa(0), InfoKey::CallTime));
        let after = started.load(Acquire) as i64;
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
    stop.store(true, Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    // Conservation at quiescence: every call and every time unit exactly once.
    let (count, time) = totals(&e.trace_info_term(0, &mfa(0), InfoKey::CallTime));
    let calls = done.load(Acquire) as i64;
    assert_eq!(count, calls);
    assert_eq!(time, calls);
    e.check_at_rest().unwrap();
}

#[test]
fn trace_info_noblock_paused_queries_are_identical() {
    let e = engine(1, 2);
    tp(&e, 0, PatternOp::True, TIME);
    let (stop, _started, _done, hs) = workers(&e, 2);
    std::thread::sleep(std::time::Duration::from_millis(20));
    tp(&e, 0, PatternOp::Pause, TIME);
    let a = totals(&e.trace_info_term(0, &mfa(0), InfoKey::CallTime)).0;
    std::thread::sleep(std::time::Duration::from_millis(20));
    let b = totals(&e.trace_info_term(0, &mfa(0), InfoKey::CallTime)).0;
    assert_eq!(a, b, "paused count changed");
    tp(&e, 0, PatternOp::Restart, TIME);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let c = totals(&e.trace_info_term(0, &mfa(0), InfoKey::CallTime)).0;
    stop.store(true, Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    assert!(c > 0, "restart counts again");
    e.check_at_rest().unwrap();
}

#[test]
fn reset_racing_calls_is_safe_8835() {
    for fl in [TIME, MEM] {
        let e = engine(1, 2);
        tp(&e, 0, PatternOp::True, fl);
        let (stop, _s, _d, hs) = workers(&e, 2);
        for i in 0..100 {
            let op = if i % 2 == 0 {
                PatternOp::True
            } else {
                PatternOp::Restart
            };
            tp(&e, 0, op, fl);
            let _ = e.trace_info_term(0, &mfa(0), InfoKey::All);
        }
        stop.store(true, Relaxed);
        for h in hs {
            h.join().unwrap();
        }
        e.check_at_rest().unwrap();
    }
}

#[test]
fn stop_the_world_under_load_conserves() {
    let e = engine(1, 2);
    tp(&e, 0, PatternOp::True, TIME);
    let (stop, started, done, hs) = workers(&e, 2);
    for _ in 0..100 {
        let before = done.load(Acquire) as i64;
        let t = e.trace_info_with(
            0,
            &mfa(0),
            InfoKey::CallTime,
            term::Collection::StopTheWorld,
        );
        let after = started.load(Acquire) as i64;
        let (count, _) = totals(&t);
        assert!(
            before <= count && count <= after,
            "{before} <= {count} <= {after}"
        );
    }
    stop.store(true, Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    let (count, time) = totals(&e.trace_info_term(0, &mfa(0), InfoKey::CallTime));
    assert_eq!(
        (count, time),
        (done.load(Acquire) as i64, done.load(Acquire) as i64)
    );
}

#[test]
fn flag_list_parses_and_rejects() {
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
    let e = engine(1, 2);
    tp(
        &e,
        0,
        PatternOp::True,
        FlagSet {
            call_time: true,
            call_memory: true,
            ..Default::default()
        },
    );
    let (stop, _started, _done, hs) = workers(&e, 2);
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
    stop.store(true, Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    e.check_at_rest().unwrap();
}

/// The pause/restart semantics checked above fail on their mutants (debug builds only: mutants
/// exist in checked builds).
#[test]
#[cfg(debug_assertions)]
fn pause_and_restart_checks_catch_their_mutants() {
    let run = |m: Option<Mutant>| -> (String, String) {
        let e =
            Arc::new(Engine::new(EngineConfig::simple(1, 1).with_mutant(m)).with_stop_the_world());
        let mut s = sched(&e, 0);
        tp(&e, 0, PatternOp::True, TIME);
        let mut p = traced(3);
        let call = |s: &mut Scheduler, p: &mut Proc| {
            s.schedule_in(p);
            s.call_proc(0, p);
            s.advance(1);
            s.ret(p);
            s.schedule_out(p);
        };
        awake(&mut s, |s| call(s, &mut p));
        tp(&e, 0, PatternOp::Pause, TIME);
        awake(&mut s, |s| call(s, &mut p));
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
