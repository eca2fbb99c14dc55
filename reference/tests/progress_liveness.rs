//! A progress property for each thread-progress implementation: a wait for thread progress
//! ends while every awake scheduler keeps passing progress points. The bound is the number of
//! progress points each scheduler passes (not a timing): a scheduler that passed
//! `PROGRESS_BOUND` points while the wait is still pending reports a liveness failure, and then
//! sleeps, which lets the wait end so that the test fails with a message instead of hanging.
//! Under the watchdog (`bpspec_reference::watchdog`). The mutant `epoch-repin-while-pinned` (a progress
//! point that pins again while still pinned) must fail it.

use bpspec_reference::mutant::Mutant;
use bpspec_reference::progress::{EpochProgress, Qsbr, ThreadProgress};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

const SCHEDULERS: usize = 3;
/// Progress points each scheduler passes while the wait is pending before it calls the wait
/// stuck. A correct implementation ends the wait after two or three points per scheduler.
const PROGRESS_BOUND: u64 = 200_000;

/// Ok(most points any scheduler passed while the wait was pending) or Err(message).
fn wait_ends<P: ThreadProgress>(mutant: Option<Mutant>) -> Result<u64, String> {
    let tp = Arc::new(P::new(SCHEDULERS, mutant));
    let ended = Arc::new(AtomicBool::new(false));
    let stuck = Arc::new(AtomicU64::new(0));
    let started = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for i in 0..SCHEDULERS {
        let (tp, ended, stuck, started) =
            (tp.clone(), ended.clone(), stuck.clone(), started.clone());
        handles.push(std::thread::spawn(move || {
            let mut h = tp.register(i);
            tp.wake(&mut h);
            started.fetch_add(1, SeqCst);
            let mut passed = 0u64;
            while !ended.load(SeqCst) {
                if passed == PROGRESS_BOUND {
                    stuck.fetch_add(1, SeqCst);
                    break;
                }
                tp.progress(&mut h);
                passed += 1;
                std::thread::yield_now();
            }
            tp.sleep(&mut h);
            passed
        }));
    }
    // The wait begins once every scheduler is awake.
    let mut spins = 0u64;
    while started.load(SeqCst) < SCHEDULERS as u64 {
        spins += 1;
        assert!(spins < 1 << 32, "schedulers did not start");
        std::thread::yield_now();
    }
    tp.wait();
    ended.store(true, SeqCst);
    let most = handles
        .into_iter()
        .map(|h| h.join().expect("scheduler panicked"))
        .max()
        .unwrap_or(0);
    match stuck.load(SeqCst) {
        0 => Ok(most),
        n => Err(format!(
            "{}: liveness: the wait did not end while {n} of {SCHEDULERS} awake schedulers each \
             passed {PROGRESS_BOUND} progress points (it ended only once they slept)",
            P::name()
        )),
    }
}

fn guarded<P: ThreadProgress>(mutant: Option<Mutant>) -> Result<u64, String> {
    bpspec_reference::watchdog::guard(&format!("progress-liveness-{}", P::name()), move || {
        wait_ends::<P>(mutant)
    })
}

#[test]
fn a_qsbr_wait_ends_while_schedulers_pass_progress_points() {
    let most = guarded::<Qsbr>(None).unwrap_or_else(|e| panic!("{e}"));
    println!("qsbr: wait ended after at most {most} progress points per scheduler (bound {PROGRESS_BOUND})");
}

#[test]
fn an_epoch_wait_ends_while_schedulers_pass_progress_points() {
    let most = guarded::<EpochProgress>(None).unwrap_or_else(|e| panic!("{e}"));
    println!("epoch: wait ended after at most {most} progress points per scheduler (bound {PROGRESS_BOUND})");
}

#[test]
fn epoch_repin_while_pinned_fails_the_progress_property() {
    if !bpspec_reference::sync::CHECKED {
        println!("skipped: mutants are consulted only in checked builds");
        return;
    }
    let err = guarded::<EpochProgress>(Some(Mutant::EpochRepinWhilePinned))
        .expect_err("epoch-repin-while-pinned must fail the progress property");
    println!("killed: {err}");
    assert!(err.contains("liveness"), "{err}");
}
