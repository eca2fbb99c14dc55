//! The watchdog every model, torture and oracle run goes through: the run's body on its own
//! thread, and a panic that names the run if the body has not finished within a bound. A hang
//! (a wait loop that never ends, a model that never finishes, a node that never answers) then
//! fails the run that hung, with its name, instead of the whole `make test` timing out.
//!
//! The bound is `BPSPEC_WATCHDOG_SECS` seconds, 1200 by default: more than six times the
//! longest run `make check` records (docs/results/check-*.tsv: about 190 s, the oracle's), so a
//! loaded 2-core machine does not trip it. A run that has its own time bound (the torture's
//! `max_time`) gets the watchdog's bound on top of its own ([`guard_for`]).
//!
//! Two ways in, one mechanism (a timer thread waiting on a channel):
//! - [`guard`]: the body (`'static`, `Send`) on its own thread; a hang panics on the caller's
//!   thread naming the run, so a test fails and the other tests go on. The model runs (loom,
//!   shuttle, stateright) and the tortures use it.
//! - [`arm`]: for a body that borrows (the oracle's runs of a scenario on an engine, an `erl`
//!   batch): the body runs on the caller's thread, and a hang ends the process, after printing
//!   the run's name, with exit status [`HUNG`]. Dropping the returned [`Armed`] disarms it.
//!
//! The watchdog is plain std (threads and a channel), also in loom and shuttle builds: it is
//! the harness around a model, never part of one. A run that hangs under [`guard`] keeps its
//! thread (a thread cannot be stopped from outside); the panic ends the test or the command
//! that waited for it.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

/// The environment variable that sets the bound, in seconds.
pub const ENV: &str = "BPSPEC_WATCHDOG_SECS";

/// The bound when [`ENV`] is unset or not a positive number.
pub const DEFAULT_SECS: u64 = 1200;

/// Stack of the thread that runs the body (the main thread's size: the stateright checks and
/// the models recurse as deeply as they would on it).
const STACK: usize = 16 << 20;

/// The bound: [`ENV`] seconds, or [`DEFAULT_SECS`].
pub fn bound() -> Duration {
    let secs = std::env::var(ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(DEFAULT_SECS);
    Duration::from_secs(secs)
}

/// Run `body` under the watchdog at [`bound`]: its value, or its panic resumed on this thread,
/// or, if it has not finished within the bound, a panic naming `name`.
pub fn guard<T: Send + 'static>(name: &str, body: impl FnOnce() -> T + Send + 'static) -> T {
    guard_for(name, bound(), body)
}

/// [`guard`] with the bound `limit`.
pub fn guard_for<T: Send + 'static>(
    name: &str,
    limit: Duration,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = channel();
    let h = std::thread::Builder::new()
        .name(format!("watchdog {name}"))
        .stack_size(STACK)
        .spawn(move || {
            // A send fails only when the watchdog already gave up on this run.
            let _ = tx.send(catch_unwind(AssertUnwindSafe(body)));
        })
        .expect("spawn the watchdog's run thread");
    match rx.recv_timeout(limit) {
        Ok(r) => {
            let _ = h.join();
            r.unwrap_or_else(|p| resume_unwind(p))
        }
        Err(RecvTimeoutError::Timeout) => {
            let msg = format!(
                "watchdog: {name} did not finish within {} s ({ENV})",
                limit.as_secs_f64()
            );
            // Printed as well: the model harness's panic hook keeps panics quiet.
            eprintln!("{msg}");
            panic!("{msg}")
        }
        Err(RecvTimeoutError::Disconnected) => {
            panic!("watchdog: {name}: the run's thread ended without a result")
        }
    }
}

/// The exit status of a process that [`arm`]'s watchdog ended (a panic's status in tests).
pub const HUNG: i32 = 101;

/// An armed watchdog ([`arm`]); dropping it disarms it.
#[must_use = "the watchdog is disarmed when this is dropped"]
pub struct Armed {
    _disarm: std::sync::mpsc::Sender<()>,
}

/// Arm a watchdog for a run named `name` that runs on this thread, at [`bound`]: if it is not
/// disarmed (the [`Armed`] dropped) within the bound, print the name and end the process with
/// status [`HUNG`].
pub fn arm(name: &str) -> Armed {
    arm_for(name, bound())
}

/// [`arm`] with the bound `limit`.
pub fn arm_for(name: &str, limit: Duration) -> Armed {
    let (tx, rx) = channel::<()>();
    let name = name.to_string();
    std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            // Disarmed: the sender dropped (Disconnected) before the bound.
            if let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                eprintln!(
                    "watchdog: {name} did not finish within {} s ({ENV}); ending the process",
                    limit.as_secs_f64()
                );
                std::process::exit(HUNG);
            }
        })
        .expect("spawn the watchdog thread");
    Armed { _disarm: tx }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A run that hangs fails with its name within the bound (and not much later).
    #[test]
    fn a_hanging_run_fails_with_its_name_within_the_bound() {
        let t = Instant::now();
        let r = catch_unwind(|| {
            guard_for("scenario hang-forever", Duration::from_millis(200), || {
                std::thread::sleep(Duration::from_secs(600))
            })
        });
        let waited = t.elapsed();
        let p = r.expect_err("the watchdog let a hang pass");
        let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("scenario hang-forever"), "{msg}");
        assert!(msg.contains("did not finish within"), "{msg}");
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(30), "{waited:?}");
    }

    /// A run that finishes returns its value; a run that panics panics with its own message.
    #[test]
    fn a_finished_run_passes_through() {
        assert_eq!(guard("sum", || 2 + 2), 4);
        let p = catch_unwind(|| guard("boom", || -> () { panic!("boom inside") }))
            .expect_err("the panic was lost");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"boom inside"));
    }

    /// A run under [`arm`] that hangs ends the process with [`HUNG`], its name printed, within
    /// the bound (the test runs itself as the hanging child).
    #[test]
    fn an_armed_hang_ends_the_process_with_its_name() {
        const TEST: &str = "watchdog::tests::an_armed_hang_ends_the_process_with_its_name";
        if std::env::var_os("BPSPEC_WATCHDOG_CHILD").is_some() {
            let _w = arm_for("scenario armed-hang", Duration::from_millis(200));
            std::thread::sleep(Duration::from_secs(600));
            return;
        }
        let t = Instant::now();
        let out = std::process::Command::new(std::env::current_exe().expect("this test binary"))
            .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
            .env("BPSPEC_WATCHDOG_CHILD", "1")
            .output()
            .expect("run the child");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(HUNG), "{err}");
        assert!(
            err.contains("watchdog: scenario armed-hang did not finish"),
            "{err}"
        );
        assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    }

    #[test]
    fn the_bound_is_generous_by_default() {
        if std::env::var_os(ENV).is_none() {
            assert_eq!(bound(), Duration::from_secs(DEFAULT_SECS));
        }
    }
}
