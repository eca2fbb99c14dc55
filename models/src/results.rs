//! Result lines for `make check` / `make test`: each model run appends one tab-separated line to
//! `$BPSPEC_RESULTS/<checker>.tsv`, and `bpspec report` prints them as one table.
//!
//! Columns: checker, progress, scenario, variant, bound, expected, observed, seconds, detail.

use std::io::Write;

/// One verdict with its bound.
pub struct Verdict<'a> {
    pub checker: &'a str,
    pub progress: &'a str,
    pub scenario: &'a str,
    /// "baseline" or a mutant name.
    pub variant: &'a str,
    /// e.g. "preemption=2" or "pct depth=3 iters=2000 seed=..".
    pub bound: String,
    /// "hold" or "killed".
    pub expected: &'a str,
    pub observed: &'a str,
    pub seconds: f64,
    /// First line of the counterexample's panic message, if any.
    pub detail: String,
}

pub fn record(v: &Verdict<'_>) {
    let Ok(dir) = std::env::var("BPSPEC_RESULTS") else {
        return;
    };
    record_in(std::path::Path::new(&dir), v);
}

/// Append `v` to `dir/<checker>.tsv` (one line; appends of one line from parallel runs do not
/// interleave).
pub fn record_in(dir: &std::path::Path, v: &Verdict<'_>) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let clean = |s: &str| s.replace(['\t', '\n'], " ");
    let line = format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.3}\t{}\n",
        v.checker,
        v.progress,
        v.scenario,
        v.variant,
        clean(&v.bound),
        v.expected,
        v.observed,
        v.seconds,
        clean(&v.detail).chars().take(160).collect::<String>()
    );
    let path = dir.join(format!("{}.tsv", v.checker));
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Run `f`, catching a panic; returns the first line of the panic message if it panicked.
/// A hook records the message on the panicking thread (loom and shuttle run every model thread
/// on the test's OS thread).
pub fn catch(f: impl FnOnce()) -> Option<String> {
    use std::cell::RefCell;
    thread_local!(static LAST: RefCell<Option<String>> = const { RefCell::new(None) });
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let first = LAST.with(|l| l.borrow().is_none());
            if first {
                LAST.with(|l| *l.borrow_mut() = Some(msg));
            }
            if std::env::var_os("BPSPEC_SHOW_PANICS").is_some() {
                prev(info);
            }
        }));
    });
    LAST.with(|l| *l.borrow_mut() = None);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    let msg = LAST.with(|l| l.borrow_mut().take());
    match r {
        Ok(()) => None,
        Err(_) => Some(
            msg.unwrap_or_else(|| "panic without message".into())
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
        ),
    }
}

/// One shard of a sharded run (`make check SHARD=i/N`): shard `index` (1-based) of `count`.
/// A unit of work (a test, a model, a part) belongs to exactly one shard, chosen by a stable
/// hash of its key, so every machine computes the same split without talking to the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The whole run: one shard.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Parses `i/N` with 1 <= i <= N; an empty string is the whole run.
    pub fn parse(s: &str) -> Result<Shard, String> {
        if s.trim().is_empty() {
            return Ok(Shard::ALL);
        }
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("shard {s:?} is not of the form i/N"))?;
        let (i, n): (u32, u32) = match (i.trim().parse(), n.trim().parse()) {
            (Ok(i), Ok(n)) => (i, n),
            _ => return Err(format!("shard {s:?} is not of the form i/N (two numbers)")),
        };
        if n == 0 || i == 0 || i > n {
            return Err(format!("shard {s:?}: need 1 <= i <= N"));
        }
        Ok(Shard { index: i, count: n })
    }

    /// Whether the unit named `key` runs in this shard.
    pub fn contains(&self, key: &str) -> bool {
        // FNV-1a, 64 bits: stable across platforms, Rust releases and runs.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Live progress of one long exploration: a plain status line on stderr every
/// `BPSPEC_PROGRESS_SECS` seconds (default 15; 0 turns it off) with the work done so far, the
/// rate, the elapsed time and the bound. It writes to the stderr handle directly, which the test
/// harness does not capture, so the lines show during `cargo test` too. The label is the test's
/// thread name (the test function). Dropping it stops the reporter.
pub struct Progress {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Report `counter` (in `unit`s, e.g. "executions") for a run of `checker` under `bound`.
    pub fn start(
        checker: &str,
        unit: &'static str,
        bound: String,
        counter: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) -> Progress {
        use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let every = std::env::var("BPSPEC_PROGRESS_SECS")
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(15);
        if every == 0 {
            return Progress { done, thread: None };
        }
        let label = format!(
            "{checker} {}",
            std::thread::current().name().unwrap_or("model")
        );
        let done2 = done.clone();
        let t0 = std::time::Instant::now();
        let thread = std::thread::spawn(move || {
            let mut next = every;
            // Bounded: one tick per 100 ms until the run ends. Parked, not asleep, so that the
            // run's end (`Drop`, which unparks) does not wait out the tick.
            while !done2.load(Relaxed) {
                std::thread::park_timeout(std::time::Duration::from_millis(100));
                if done2.load(Relaxed) {
                    break;
                }
                let secs = t0.elapsed().as_secs();
                if secs >= next {
                    next += every;
                    let n = counter.load(Relaxed);
                    let line = format!(
                        "[progress] {label}: {n} {unit}, {:.0}/s, {secs} s, bound {bound}\n",
                        n as f64 / t0.elapsed().as_secs_f64()
                    );
                    let _ = std::io::stderr().write_all(line.as_bytes());
                }
            }
        });
        Progress {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_partition_the_keys() {
        let keys: Vec<String> = (0..500).map(|i| format!("unit-{i}")).collect();
        for n in 1..=5 {
            let mut seen = vec![0; keys.len()];
            for i in 1..=n {
                let s = Shard::parse(&format!("{i}/{n}")).unwrap();
                for (k, key) in keys.iter().enumerate() {
                    if s.contains(key) {
                        seen[k] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "N={n}");
        }
    }

    #[test]
    fn bad_shards_are_errors() {
        for s in ["0/2", "3/2", "1/0", "x", "1/x"] {
            assert!(Shard::parse(s).is_err(), "{s}");
        }
        assert_eq!(Shard::parse("").unwrap(), Shard::ALL);
    }
}
