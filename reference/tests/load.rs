//! The load engine (`load.rs`) on real threads, sequentially and under busy schedulers: load,
//! delete and purge keep the promise of docs/nonblocking-load.md under both protocols.
#![cfg(not(any(loom, shuttle)))]

use bpspec_reference::{LoadEngine, LoadError, LoadProtocol, LoadScheduler, Qsbr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    for proto in LoadProtocol::ALL {
        let e = Arc::new(LoadEngine::<Qsbr>::new(2, 1, proto, true, None));
        let mut s = LoadScheduler::start(e.clone(), 0);
        assert_eq!(s.call(0).version, 1);
        assert!(s.call(1).counted);
        s.progress();
        assert_eq!(op!(s, e.load()), Ok(2));
        assert_eq!(op!(s, e.load()), Err(LoadError::NotPurged), "{proto:?}");
        let c = s.call(0);
        assert_eq!((c.version, c.counted), (2, true));
        assert_eq!(op!(s, e.purge()), Ok(true));
        assert_eq!(op!(s, e.purge()), Ok(false));
        e.check_at_rest().unwrap();
        assert_eq!(op!(s, e.trace_pattern(false)), 2);
        s.progress();
        let c = s.call(1);
        assert_eq!((c.version, c.counted), (2, false));
        assert_eq!(op!(s, e.load()), Ok(3));
        assert!(
            !s.call(1).counted,
            "the module's pattern is off: the new version is untraced"
        );
        assert_eq!(op!(s, e.trace_pattern(true)), 2);
        assert!(s.call(1).counted);
        assert_eq!(op!(s, e.purge()), Ok(true));
        assert_eq!(op!(s, e.delete()), Ok(()));
        assert_eq!(op!(s, e.delete()), Err(LoadError::NotLoaded));
        assert_eq!(s.call(0).version, 0, "undef after delete");
        assert_eq!(op!(s, e.purge()), Ok(true));
        e.check_at_rest().unwrap();
        assert_eq!(e.total_count(), s.counted, "{proto:?}: no lost count");
        s.sleep();
    }
}

#[test]
fn loads_under_busy_schedulers_lose_no_count() {
    let _watchdog =
        bpspec_reference::watchdog::arm("load::loads_under_busy_schedulers_lose_no_count");
    for proto in LoadProtocol::ALL {
        let e = Arc::new(LoadEngine::<Qsbr>::new(4, 2, proto, true, None));
        let stop = Arc::new(AtomicBool::new(false));
        let hs: Vec<_> = (0..2)
            .map(|id| {
                let (e, stop) = (e.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut s = LoadScheduler::start(e, id);
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let c = s.call(i % 4);
                        assert!(c.version > 0 && c.counted);
                        i += 1;
                        if i % 8 == 0 {
                            s.progress();
                        }
                    }
                    s.sleep();
                    s.counted
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
        assert_eq!(e.total_count(), counted, "{proto:?}");
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
    for proto in LoadProtocol::ALL {
        let e = Arc::new(LoadEngine::<Qsbr>::new(2, 1, proto, true, None));
        let mut s = LoadScheduler::start(e.clone(), 0);
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
            s.call(0).version,
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
        assert_eq!(e.total_count(), s.counted, "{proto:?}: no lost count");
        s.sleep();
    }
}
