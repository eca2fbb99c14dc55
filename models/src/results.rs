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
    if std::fs::create_dir_all(&dir).is_err() {
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
    let path = format!("{dir}/{}.tsv", v.checker);
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
