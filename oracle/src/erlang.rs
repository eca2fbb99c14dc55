//! Differential runs against a real Erlang/OTP node: each scenario's modules become Erlang source
//! files, a batch of scenarios becomes one term file, and one `erl -noshell` runs them all with
//! `erlang/bpspec_driver.erl` (compiled with `erlc`), which compiles the modules with the same
//! compiler `erlc` uses (`compile:file/2`), loads them, plays the ops and prints observations in
//! our format. One erl start-up per batch keeps hundreds of scenarios within seconds.

use crate::observe::Observation;
use crate::run;
use crate::scenario::{Arg, Code, LOp, LStep, Loaded, Scenario, Spec, Val};
use crate::target::{Factory, RefEngine, SpecOracle};
pub(crate) use bpspec_seqtrace::otp::tool;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const DRIVER: &str = include_str!("../erlang/bpspec_driver.erl");

/// What to install when Erlang/OTP is missing.
pub const INSTALL_HINT: &str =
    "Erlang/OTP is needed for the differential tests: install it with `apt-get install erlang-nox` (Debian/Ubuntu; OTP 25 or later), or put erl and erlc on PATH";

/// What to do when an OTP root (`BPSPEC_OTP_ROOT`) is unusable.
pub const ROOT_HINT: &str = "build it with `scripts/otp-root.sh DIR` (as root: debootstrap of Debian sid with erlang-base, OTP 29 as of 2026-11), or unset BPSPEC_OTP_ROOT (tests) / leave out --otp-root (`bpspec oracle erl`)";

/// A ready Erlang installation: the compiled driver and the OTP release.
pub struct Erl {
    /// The driver's directory, as a path on this host.
    dir: PathBuf,
    pub otp: u32,
    batches: std::cell::Cell<u32>,
    /// A Debian root holding another Erlang/OTP, run through `chroot` (scripts/otp-root.sh);
    /// `None`: erl/erlc on PATH.
    root: Option<PathBuf>,
}

fn tool_ok(root: Option<&Path>, name: &str) -> bool {
    tool(root, name)
        .arg("-version")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| root.is_none() || o.status.success())
}

impl Erl {
    /// Find erl/erlc on PATH, compile the driver into a fresh directory, read the OTP release.
    pub fn setup() -> Result<Erl, String> {
        Erl::setup_in(None)
    }

    /// The OTP in the Debian root `root` (run with `chroot`, so as root), or on PATH if `None`.
    pub fn setup_root(root: &Path) -> Result<Erl, String> {
        Erl::setup_in(Some(root))
    }

    /// The OTP root named by `BPSPEC_OTP_ROOT`, if set (an empty value counts as unset).
    pub fn env_root() -> Option<PathBuf> {
        std::env::var_os("BPSPEC_OTP_ROOT")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }

    /// Where this installation comes from, for messages.
    pub fn origin(&self) -> String {
        match &self.root {
            None => format!("OTP {} (erl on PATH)", self.otp),
            Some(r) => format!("OTP {} (chroot {})", self.otp, r.display()),
        }
    }

    /// `p` (a host path inside the root, or any path without a root) as erl sees it.
    fn inner(&self, p: &Path) -> PathBuf {
        inner_path(self.root.as_deref(), p)
    }

    fn setup_in(root: Option<&Path>) -> Result<Erl, String> {
        let hint = if root.is_some() {
            ROOT_HINT
        } else {
            INSTALL_HINT
        };
        if let Some(r) = root {
            check_root(r)?;
        }
        if !tool_ok(root, "erl") || tool(root, "erlc").output().is_err() {
            return Err(hint.to_string());
        }
        let base = match root {
            None => std::env::temp_dir(),
            Some(r) => r.join("tmp"),
        };
        let dir = base.join(format!(
            "bpspec-erl-{}-{}",
            std::process::id(),
            SETUP_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        compile_fresh(root, &dir, "bpspec_driver.erl", DRIVER, "the driver", hint)?;
        let out = tool(root, "erl")
            .args([
                "-noshell",
                "-eval",
                "io:format(\"~s~n\", [erlang:system_info(otp_release)]), halt().",
            ])
            .output()
            .map_err(|e| format!("erl: {e}; {hint}"))?;
        let otp: u32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| format!("cannot read the OTP release from erl: {:?}", out))?;
        Ok(Erl {
            dir,
            otp,
            batches: std::cell::Cell::new(0),
            root: root.map(Path::to_path_buf),
        })
    }

    /// Run scenarios on the node: per scenario, its observations or the driver's error text.
    /// Scenarios must need at most [`Erl::otp`] and use only what the driver supports
    /// (local + call_count; see [`driver_supports`]).
    pub fn run_batch(
        &self,
        scs: &[&Loaded],
    ) -> Result<Vec<Result<Vec<Observation>, String>>, String> {
        let b = self.batches.get();
        self.batches.set(b + 1);
        let bdir = self.dir.join(format!("batch{b}"));
        let _ = std::fs::remove_dir_all(&bdir);
        std::fs::create_dir_all(&bdir).map_err(|e| format!("{}: {e}", bdir.display()))?;
        let mut terms = String::new();
        for (id, sc) in scs.iter().enumerate() {
            let sdir = bdir.join(format!("s{id}"));
            std::fs::create_dir_all(&sdir).map_err(|e| format!("{}: {e}", sdir.display()))?;
            let mut mods = Vec::new();
            for m in &sc.scenario.modules {
                let path = sdir.join(format!("{}.erl", m.name));
                std::fs::write(&path, module_source(sc, &m.name))
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                let load_changed = sc
                    .ops
                    .iter()
                    .any(|o| matches!(o, LOp::Code(crate::scenario::CodeOp::LoadChanged, _)));
                if load_changed {
                    // The second code, for `load_changed` (bpspec_driver.erl's code_op); the
                    // first again without any `changed_body`.
                    let c = sc.changed.as_deref().unwrap_or(sc);
                    let cdir = sdir.join("changed");
                    let cpath = cdir.join(format!("{}.erl", m.name));
                    std::fs::create_dir_all(&cdir)
                        .and_then(|()| std::fs::write(&cpath, module_source(c, &m.name)))
                        .map_err(|e| format!("{}: {e}", cpath.display()))?;
                }
                mods.push(format!(
                    "{{'{}', {}}}",
                    m.name,
                    erl_string(&self.inner(&path))
                ));
            }
            let procs: Vec<String> = sc
                .processes
                .iter()
                .zip(&sc.initial_flags)
                .map(|(p, fl)| {
                    let flags: Vec<String> = fl.get(&0).into_iter().flatten().cloned().collect();
                    format!("{{'{p}', [{}]}}", flags.join(","))
                })
                .collect();
            let ops: Vec<String> = sc
                .ops
                .iter()
                .map(|o| crate::sessions::erl_in_session(sc, o, op_term(sc, o)))
                .collect();
            writeln!(
                terms,
                "{{scenario, {id}, [{}], [{}], [\n  {}]}}.",
                mods.join(", "),
                procs.join(", "),
                ops.join(",\n  ")
            )
            .expect("write to string");
        }
        let tf = bdir.join("batch.terms");
        std::fs::write(&tf, terms).map_err(|e| format!("{}: {e}", tf.display()))?;
        let hint = if self.root.is_some() {
            ROOT_HINT
        } else {
            INSTALL_HINT
        };
        let names: Vec<&str> = scs.iter().map(|s| s.scenario.name.as_str()).collect();
        let _watchdog = bpspec_reference::watchdog::arm(&format!(
            "oracle erl batch{b} ({} scenarios: {})",
            scs.len(),
            names.join(" ")
        ));
        let out = tool(self.root.as_deref(), "erl")
            .arg("-noshell")
            .arg("-pa")
            .arg(self.inner(&self.dir))
            .arg("-run")
            .arg("bpspec_driver")
            .arg("main")
            .arg(self.inner(&tf))
            .current_dir(&bdir)
            // A crash dump lands in the batch directory (chroot starts erl in the root's /).
            .env("ERL_CRASH_DUMP", self.inner(&bdir.join("erl_crash.dump")))
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("erl: {e}; {hint}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut res: Vec<Option<Result<Vec<Observation>, String>>> = vec![None; scs.len()];
        let mut obs: BTreeMap<usize, Vec<Observation>> = BTreeMap::new();
        let mut done = false;
        for line in stdout.lines() {
            let Some(rest) = line.strip_prefix("BPSPEC ") else {
                continue;
            };
            let mut parts = rest.splitn(3, ' ');
            let kind = parts.next().unwrap_or("");
            let id: Option<usize> = parts.next().and_then(|s| s.parse().ok());
            let text = parts.next().unwrap_or("");
            match (kind, id) {
                ("DONE", _) => done = true,
                ("OBS", Some(id)) if id < scs.len() => {
                    let o: Observation = serde_json::from_str(text)
                        .map_err(|e| format!("driver printed a bad observation {text:?}: {e}"))?;
                    obs.entry(id).or_default().push(o);
                }
                ("END", Some(id)) if id < scs.len() => {
                    res[id] = Some(Ok(obs.remove(&id).unwrap_or_default()))
                }
                ("ERROR", Some(id)) if id < scs.len() => res[id] = Some(Err(text.to_string())),
                _ => return Err(format!("driver printed an unexpected line: {line:?}")),
            }
        }
        if !done {
            if let Some(r) = self.after_node_crash(scs, &out.status, &stdout, &mut res) {
                return r;
            }
            return Err(format!(
                "erl did not finish the batch (exit {:?}); stderr: {}; last output: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr),
                stdout.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
            ));
        }
        if std::env::var_os("BPSPEC_KEEP_ERL").is_none() {
            let _ = std::fs::remove_dir_all(&bdir);
        }
        Ok(res
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err("no result from the driver".into())))
            .collect())
    }
}

impl Drop for Erl {
    fn drop(&mut self) {
        if std::env::var_os("BPSPEC_KEEP_ERL").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// How a node-crash result starts (see [`Erl::after_node_crash`]); judged [`Verdict::ErtsCrash`].
pub const NODE_CRASHED: &str = "the Erlang node crashed";

impl Erl {
    /// The node died of a signal (a VM crash: the driver's own errors are Erlang exceptions,
    /// reported per scenario) before the batch was done: the first scenario without a result is
    /// the one that crashed it. It gets a [`NODE_CRASHED`] error, and the scenarios after it run
    /// again in a fresh node (each rerun is shorter, so at most `scs.len()` of them).
    /// `None`: the node did not die of a signal, or nothing is left to blame.
    fn after_node_crash(
        &self,
        scs: &[&Loaded],
        status: &std::process::ExitStatus,
        stdout: &str,
        res: &mut [Option<Result<Vec<Observation>, String>>],
    ) -> Option<Result<Vec<Result<Vec<Observation>, String>>, String>> {
        use std::os::unix::process::ExitStatusExt;
        let sig = status.signal()?;
        let crashed = res.iter().position(Option::is_none)?;
        let tag = format!("BPSPEC OBS {crashed} ");
        let last: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&tag))
            .collect();
        res[crashed] = Some(Err(format!(
            "{NODE_CRASHED} (signal {sig}) running this scenario; last observation: {}",
            last.last().copied().unwrap_or("none")
        )));
        let rest = &scs[crashed + 1..];
        assert!(rest.len() < scs.len(), "each rerun is shorter");
        if !rest.is_empty() {
            match self.run_batch(rest) {
                Ok(rs) => {
                    for (slot, r) in res[crashed + 1..].iter_mut().zip(rs) {
                        *slot = Some(r);
                    }
                }
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(res
            .iter_mut()
            .map(|r| {
                r.take()
                    .unwrap_or_else(|| Err("no result from the driver".into()))
            })
            .collect()))
    }
}

/// Why the OTP root `r` cannot be used, naming it: missing, not a directory, no `usr/bin/erl`,
/// or `chroot` failing (not root, or a broken root), with chroot's own message.
pub fn check_root(r: &Path) -> Result<(), String> {
    let at = r.display();
    let meta = std::fs::metadata(r).map_err(|e| format!("OTP root {at}: {e}; {ROOT_HINT}"))?;
    if !meta.is_dir() {
        return Err(format!("OTP root {at}: not a directory; {ROOT_HINT}"));
    }
    if !r.join("usr/bin/erl").exists() {
        return Err(format!(
            "OTP root {at}: no usr/bin/erl in this OTP root; {ROOT_HINT}"
        ));
    }
    let out = tool(Some(r), "erl")
        .args(["-noshell", "-eval", "halt()."])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("OTP root {at}: cannot run chroot: {e}; {ROOT_HINT}"))?;
    if !out.status.success() {
        return Err(format!(
            "OTP root {at}: `chroot {at} erl` failed (exit {:?}: {}); chroot needs root; {ROOT_HINT}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// Write `source` as `dir/name` in a fresh `dir` (inside `root`, if any) and compile it there
/// with erlc; `what` names the program in the error, `hint` says what to install.
pub(crate) fn compile_fresh(
    root: Option<&Path>,
    dir: &Path,
    name: &str,
    source: &str,
    what: &str,
    hint: &str,
) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let src = dir.join(name);
    std::fs::write(&src, source).map_err(|e| format!("{}: {e}", src.display()))?;
    let out = tool(root, "erlc")
        .arg("-o")
        .arg(inner_path(root, dir))
        .arg(inner_path(root, &src))
        .output()
        .map_err(|e| format!("erlc: {e}; {hint}"))?;
    if !out.status.success() {
        return Err(format!(
            "erlc failed on {what}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// A host path inside `root` as seen from inside it.
pub(crate) fn inner_path(root: Option<&Path>, p: &Path) -> PathBuf {
    match root {
        None => p.to_path_buf(),
        Some(r) => {
            let rel = p.strip_prefix(r).unwrap_or_else(|_| {
                panic!("{} is not inside the OTP root {}", p.display(), r.display())
            });
            Path::new("/").join(rel)
        }
    }
}

static SETUP_SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn erl_string(p: &Path) -> String {
    let s = p.display().to_string();
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The first feature `sc` uses that the Erlang driver does not run: meta trace (needs a meta
/// tracer), process flags other than `call` (their messages name the driver's own functions).
/// Global trace, match specs with return_trace / exception_trace, call_time (counts; durations
/// left out), call_memory (OTP 26+; counts, words left out), sessions (OTP 27+, the trace
/// module) and the other trace_info items run.
pub fn driver_supports(sc: &Loaded) -> Option<String> {
    use crate::scenario::Feature;
    sc.features
        .keys()
        .find(|f| match f {
            Feature::GlobalTrace | Feature::MatchSpec | Feature::CallTime => false,
            // `{meta, Collector}`: the driver's meta collector (meta6).
            Feature::MetaTrace => false,
            // OTP 26+ (the caller skips scenarios needing a newer OTP than the node's).
            Feature::CallMemory => false,
            Feature::GlobalMatchSpec => false,
            // OTP 27+ (the run skips older nodes by `requires_otp`): the trace module.
            Feature::Sessions => false,
            // `arity` and `return_to` are passed to erlang:trace/3; call messages with an
            // integer, with a caller, and return_to messages are read.
            Feature::ProcessFlag(p) if p == "arity" || p == "return_to" => false,
            Feature::Caller => false,
            // code:load_binary/3, code:delete/1, code:purge/1, code:soft_purge/1.
            // (with receive functions and the resume op: bpspec_driver.erl's call_wait; the
            // second code of `load_changed` compiled from changed/M.erl.)
            Feature::CodeLoading => false,
            // erlang:trace_pattern(on_load, ...) and trace:function(S, on_load, ...); the
            // driver's cleanup turns it off after each scenario. erlang:trace_info(on_load, I)
            // and trace:info(S, on_load, I) (`true` is rendered as JSON true).
            Feature::OnLoadPattern => false,
            Feature::InfoItem(i) => !matches!(
                i.as_str(),
                "match_spec" | "meta" | "meta_match_spec" | "call_time" | "call_memory" | "all"
            ),
            _ => true,
        })
        .map(|f| format!("{f}"))
}

/// The Erlang source of module `m` of the scenario: every declared function (the compiler
/// drops the unreachable local ones, as it would for a real module).
pub fn module_source(sc: &Loaded, m: &str) -> String {
    let mut s = format!(
        "%% generated by bpspec from scenario {:?}\n-module('{m}').\n-compile([nowarn_unused_function, nowarn_unused_vars, nowarn_shadow_vars]).\n",
        sc.scenario.name
    );
    let exports: Vec<String> = sc
        .declared
        .iter()
        .filter(|(f, c)| f.module == m && c.exported)
        .map(|(f, _)| format!("'{}'/{}", f.name, f.arity))
        .collect();
    writeln!(s, "-export([{}]).", exports.join(", ")).expect("string");
    for (f, c) in sc.declared.iter().filter(|(f, _)| f.module == m) {
        let params: Vec<String> = (1..=c.arity).map(|i| format!("A{i}")).collect();
        if let Some(base) = &c.base {
            let mut bp = params.clone();
            // `Match = AK`: the base clause's steps may still name the argument.
            let k = c.base_arg as usize - 1;
            bp[k] = format!("{} = {}", c.base_match.erl(), params[k]);
            writeln!(
                s,
                "'{}'({}) ->\n    {};",
                f.name,
                bp.join(", "),
                body(sc, m, c, base)
            )
            .expect("string");
        }
        // A receive function waits for the driver's `bpspec_resume` (a `resume` op).
        let (pre, post) = if c.receive {
            ("receive bpspec_resume ->\n    ", "\n    end")
        } else {
            ("", "")
        };
        writeln!(
            s,
            "'{}'({}) ->\n    {pre}{}{post}.",
            f.name,
            params.join(", "),
            body(sc, m, c, &c.body)
        )
        .expect("string");
    }
    s
}

fn arg(a: &Arg) -> String {
    a.erl()
}

fn body(sc: &Loaded, m: &str, _c: &Code, steps: &[LStep]) -> String {
    let call = |f: usize, remote: bool, args: &[Arg]| {
        let (mfa, _) = &sc.declared[f];
        let a: Vec<String> = args.iter().map(arg).collect();
        if remote {
            format!("'{}':'{}'({})", mfa.module, mfa.name, a.join(", "))
        } else {
            debug_assert_eq!(mfa.module, m);
            format!("'{}'({})", mfa.name, a.join(", "))
        }
    };
    let mut exprs = Vec::new();
    let mut terminal = false;
    for st in steps {
        match st {
            LStep::Call {
                f,
                remote,
                args,
                times,
                catch,
            } => {
                for _ in 0..*times {
                    if *catch {
                        exprs.push(format!("_ = (catch {})", call(*f, *remote, args)));
                    } else {
                        exprs.push(format!("_ = {}", call(*f, *remote, args)));
                    }
                }
            }
            LStep::TailCall { f, remote, args } => {
                exprs.push(call(*f, *remote, args));
                terminal = true;
            }
            LStep::Return(v) => {
                exprs.push(v.erl());
                terminal = true;
            }
            LStep::Raise(r) => {
                exprs.push(format!("erlang:error({})", r.erl()));
                terminal = true;
            }
            // Not reproduced: durations and words are not compared with a real node (`erts_view`).
            LStep::Allocate(_) | LStep::Advance(_) => {}
        }
    }
    if !terminal {
        exprs.push("ok".into());
    }
    exprs.join(",\n    ")
}

/// A `trace_pattern` op's second argument as Erlang source.
fn erl_spec(spec: &Spec) -> String {
    match spec {
        Spec::True => "true".into(),
        Spec::False => "false".into(),
        Spec::Pause => "pause".into(),
        Spec::Restart => "restart".into(),
        Spec::MatchSpec(acts) => {
            let a: Vec<String> = acts
                .iter()
                .map(|a| match a.as_str() {
                    "caller" => "{message, {caller}}".to_string(),
                    a => format!("{{{a}}}"),
                })
                .collect();
            format!("[{{'_', [], [{}]}}]", a.join(", "))
        }
    }
}

/// A `trace_pattern` op's flag list as Erlang source (`meta`: the driver's meta collector).
fn erl_flags(flags: &crate::scenario::PatternFlags) -> String {
    let mut fl = Vec::new();
    for (on, name) in [
        (flags.local, "local"),
        (flags.global, "global"),
        (flags.meta, "meta"),
        (flags.call_count, "call_count"),
        (flags.call_time, "call_time"),
        (flags.call_memory, "call_memory"),
    ] {
        if on {
            fl.push(name);
        }
    }
    fl.join(", ")
}

fn op_term(sc: &Loaded, op: &LOp) -> String {
    let atom_or_wild =
        |o: &Option<String>| o.as_ref().map_or("'_'".to_string(), |s| format!("'{s}'"));
    match op {
        LOp::TracePattern {
            pattern,
            spec,
            flags,
            ..
        } => {
            let mfas: Vec<String> = match &pattern.module {
                Some(m) => vec![format!(
                    "{{'{m}', {}, {}}}",
                    atom_or_wild(&pattern.name),
                    pattern.arity.map_or("'_'".into(), |a| a.to_string())
                )],
                // Our function universe is the scenario's modules (docs/deviations.md).
                None if sc.scenario.modules.is_empty() => {
                    vec!["{bpspec_no_such_module, '_', '_'}".into()]
                }
                None => sc
                    .scenario
                    .modules
                    .iter()
                    .map(|m| format!("{{'{}', '_', '_'}}", m.name))
                    .collect(),
            };
            format!(
                "{{trace_pattern, [{}], {}, [{}]}}",
                mfas.join(", "),
                erl_spec(spec),
                erl_flags(flags)
            )
        }
        LOp::Call {
            process,
            f,
            args,
            times,
        } => {
            let mfa = &sc.funcs[*f];
            let a: Vec<String> = args.iter().map(Val::erl).collect();
            // A receive function: the driver waits until the process waits in it.
            let tag = if sc.code[*f].receive {
                "call_wait"
            } else {
                "call"
            };
            format!(
                "{{{tag}, '{}', '{}', '{}', [{}], {times}}}",
                sc.processes[*process],
                mfa.module,
                mfa.name,
                a.join(", ")
            )
        }
        LOp::Resume(p) => format!("{{resume, '{}'}}", sc.processes[*p]),
        LOp::TraceInfo { mfa, item, .. } => {
            format!(
                "{{trace_info, {{'{}', '{}', {}}}, {item}}}",
                mfa.module, mfa.name, mfa.arity
            )
        }
        // erlang:trace_info(on_load, Item) (trace:info/3 in a session).
        LOp::OnLoadInfo { item, .. } => format!("{{trace_info, on_load, {item}}}"),
        LOp::TraceFlags {
            process, on, flags, ..
        } => {
            format!(
                "{{trace_flags, '{}', {on}, [{}]}}",
                sc.processes[*process],
                flags.join(", ")
            )
        }
        LOp::ScheduleOut(_) | LOp::ScheduleIn(_) => "nop".into(),
        LOp::SessionCreate(_) | LOp::SessionDestroy(_) => crate::sessions::erl_session_op(sc, op),
        LOp::OnLoadPattern { spec, flags, .. } => {
            format!(
                "{{trace_pattern, [on_load], {}, [{}]}}",
                erl_spec(spec),
                erl_flags(flags)
            )
        }
        LOp::Code(kind, m) => format!("{{code, {}, '{m}'}}", kind.name()),
    }
}

/// The verdict of one scenario in a differential run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Engine, sequential oracle and ERTS agree (and match `expect`, if given).
    Agree,
    /// Something differs; the text says what, with a diff.
    Differ(String),
    /// Marked `known_deviation` and still differs from ERTS in the documented way.
    KnownDeviation,
    /// Marked `known_deviation` but now agrees: the marker is stale.
    StaleDeviation,
    /// Needs a newer OTP than the installed one.
    SkippedOtp(u32),
    /// Records the behaviour of releases up to `max_otp` (this), older than the installed one.
    SkippedMaxOtp(u32),
    /// Uses a feature our engine or the driver does not implement yet.
    SkippedFeature(String),
    /// bpspec lacks the feature, but ERTS ran the scenario and agrees with its `expect` (so the
    /// expectation is ready for when the engine has the feature).
    ErtsOnly(String),
    /// The scenario is bad (does not terminate) or the driver failed on it.
    Error(String),
    /// The Erlang node died of a signal running this scenario (an ERTS bug, not a verdict on
    /// bpspec: docs/conformance.md lists the ones found).
    ErtsCrash(String),
}

/// Summary counts of a differential run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub agree: usize,
    pub differ: usize,
    pub known_deviation: usize,
    pub stale_deviation: usize,
    pub skipped_otp: usize,
    pub skipped_feature: usize,
    pub erts_only: usize,
    pub error: usize,
    /// Scenarios for older releases only (`max_otp` below the node's release).
    pub skipped_max_otp: usize,
    /// Scenarios that crashed the Erlang node.
    pub erts_crash: usize,
}

impl Summary {
    pub fn of(vs: &[Verdict]) -> Summary {
        let mut s = Summary::default();
        for v in vs {
            match v {
                Verdict::Agree => s.agree += 1,
                Verdict::Differ(_) => s.differ += 1,
                Verdict::KnownDeviation => s.known_deviation += 1,
                Verdict::StaleDeviation => s.stale_deviation += 1,
                Verdict::SkippedOtp(_) => s.skipped_otp += 1,
                Verdict::SkippedMaxOtp(_) => s.skipped_max_otp += 1,
                Verdict::ErtsCrash(_) => s.erts_crash += 1,
                Verdict::SkippedFeature(_) => s.skipped_feature += 1,
                Verdict::ErtsOnly(_) => s.erts_only += 1,
                Verdict::Error(_) => s.error += 1,
            }
        }
        s
    }
    pub fn ok(&self) -> bool {
        self.differ == 0 && self.stale_deviation == 0 && self.error == 0
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} agree, {} differ, {} known deviations, {} stale deviation markers, {} skipped (need a newer OTP), {} skipped (feature not implemented yet), {} checked on ERTS only (feature not in bpspec yet), {} errors",
            self.agree, self.differ, self.known_deviation, self.stale_deviation, self.skipped_otp, self.skipped_feature, self.erts_only, self.error
        )?;
        if self.skipped_max_otp > 0 {
            write!(
                f,
                ", {} skipped (for older OTP releases only: max_otp)",
                self.skipped_max_otp
            )?;
        }
        if self.erts_crash > 0 {
            write!(f, ", {} crashed the Erlang node", self.erts_crash)?;
        }
        Ok(())
    }
}

/// What of our observations a real node can reproduce: call_time durations and call_memory
/// words are wall-clock / real heap figures on ERTS (the driver leaves them out), so they are
/// dropped from the rows; before OTP 26 `trace_info(MFA, all)` has no call_memory item.
pub fn erts_view(obs: &[Observation], otp: u32) -> Vec<Observation> {
    use crate::observe::What;
    fn strip(key: &str, v: &mut serde_json::Value, otp: u32) {
        match v {
            serde_json::Value::Array(rows) if key == "call_time" || key == "call_memory" => {
                for r in rows.iter_mut() {
                    if let Some(o) = r.as_object_mut() {
                        o.remove("time");
                        o.remove("words");
                    }
                }
            }
            serde_json::Value::Array(items) if key == "all" => {
                if otp < 26 {
                    items.retain(|kv| kv.get(0).and_then(|k| k.as_str()) != Some("call_memory"));
                }
                for kv in items.iter_mut() {
                    if let Some(arr) = kv.as_array_mut() {
                        if let [k, v] = arr.as_mut_slice() {
                            let k = k.as_str().unwrap_or("").to_string();
                            strip(&k, v, otp);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    obs.iter()
        .map(|o| {
            let mut o = o.clone();
            if let What::TraceInfo(i) = &mut o.what {
                strip(&i.item, &mut i.value, otp);
            }
            o
        })
        .collect()
}

/// Run `sc` on `ours` and on the sequential oracle; both must agree (else `Differ`).
/// (`with_oracle` false, or a feature the oracle lacks: `ours` alone.)
pub fn run_ours(
    sc: &Loaded,
    ours: Factory,
    with_oracle: bool,
) -> Result<Vec<Observation>, Verdict> {
    let mut eng = ours(sc.funcs.clone());
    let mut orc = SpecOracle::boxed(sc.funcs.clone());
    let a = match run::run(sc, eng.as_mut()) {
        Ok(a) => a,
        // An engine without code loading (our engine has it: oracle/src/target/code.rs): ERTS
        // is then compared with the sequential oracle alone (spec/src/code.rs).
        Err(run::RunError::Unsupported { feature, .. })
            if with_oracle && feature == crate::scenario::Feature::CodeLoading =>
        {
            return run::run(sc, orc.as_mut()).map_err(|e| match e {
                run::RunError::Unsupported { feature, .. } => {
                    Verdict::SkippedFeature(feature.to_string())
                }
                e => Verdict::Error(e.to_string()),
            });
        }
        Err(run::RunError::Unsupported { feature, .. }) => {
            return Err(Verdict::SkippedFeature(feature.to_string()))
        }
        Err(e) => return Err(Verdict::Error(e.to_string())),
    };
    if !with_oracle {
        return Ok(a);
    }
    // A feature the sequential oracle does not model (none today besides what the runner
    // refuses anyway; global trace is in `spec/src/global.rs`): then `ours` is compared with
    // ERTS alone.
    let b = match run::run(sc, orc.as_mut()) {
        Err(run::RunError::Unsupported { .. }) => return Ok(a),
        r => r.map_err(|e| Verdict::Error(e.to_string()))?,
    };
    if let Some(d) = crate::observe::diff(&a, &b) {
        return Err(Verdict::Differ(format!(
            "{}: {} (-) and sequential oracle (+) differ:\n{d}",
            sc.scenario.name,
            eng.name()
        )));
    }
    Ok(a)
}

/// Differential run of many scenarios on our engine, with one erl start-up.
pub fn differential(erl: &Erl, scs: &[Loaded]) -> Result<Vec<Verdict>, String> {
    differential_of(erl, scs, &RefEngine::boxed, true)
}

/// Differential run of many scenarios on the engine `engine` builds (and, `with_oracle`, the
/// sequential oracle, which must agree with it) against ERTS, with one erl start-up.
pub fn differential_of(
    erl: &Erl,
    scs: &[Loaded],
    engine: Factory,
    with_oracle: bool,
) -> Result<Vec<Verdict>, String> {
    let mut verdicts: Vec<Option<Verdict>> = vec![None; scs.len()];
    // None: bpspec lacks a feature, so ERTS is checked against `expect` alone.
    let mut ours: Vec<Option<Vec<Observation>>> = vec![None; scs.len()];
    let mut batch = Vec::new();
    for (i, sc) in scs.iter().enumerate() {
        if sc.requires_otp() > erl.otp {
            verdicts[i] = Some(Verdict::SkippedOtp(sc.requires_otp()));
            continue;
        }
        if let Some(m) = sc.max_otp().filter(|&m| m < erl.otp) {
            verdicts[i] = Some(Verdict::SkippedMaxOtp(m));
            continue;
        }
        if let Some(f) = driver_supports(sc) {
            verdicts[i] = Some(Verdict::SkippedFeature(f));
            continue;
        }
        match run_ours(sc, engine, with_oracle) {
            Ok(o) => ours[i] = Some(o),
            Err(Verdict::SkippedFeature(f)) if sc.scenario.expect.is_some() => {
                verdicts[i] = Some(Verdict::ErtsOnly(f))
            }
            Err(v) => {
                verdicts[i] = Some(v);
                continue;
            }
        }
        batch.push(i);
    }
    let refs: Vec<&Loaded> = batch.iter().map(|&i| &scs[i]).collect();
    let results = if refs.is_empty() {
        Vec::new()
    } else {
        erl.run_batch(&refs)?
    };
    for (&i, r) in batch.iter().zip(results) {
        let sc = &scs[i];
        verdicts[i] = Some(match r {
            Err(e) if e.starts_with(NODE_CRASHED) => {
                Verdict::ErtsCrash(format!("{}: {e}", sc.scenario.name))
            }
            Err(e) => Verdict::Error(format!(
                "{}: the Erlang driver failed: {e}",
                sc.scenario.name
            )),
            Ok(theirs) if ours[i].is_none() => {
                let exp = sc
                    .scenario
                    .expect
                    .as_ref()
                    .expect("only scenarios with expect");
                match crate::observe::diff_expect(&erts_view(exp, erl.otp), &theirs) {
                    None => verdicts[i].take().expect("ErtsOnly set above"),
                    Some(d) => Verdict::Differ(format!(
                        "{}: expect (-) and ERTS (+) differ:\n{d}",
                        sc.scenario.name
                    )),
                }
            }
            Ok(theirs) => {
                let ours = ours[i].as_ref().expect("ran on bpspec");
                let mut problems = String::new();
                let ours = &erts_view(ours, erl.otp);
                if let Some(d) = crate::observe::diff(&theirs, ours) {
                    problems += &format!("ERTS (-) and bpspec (+) differ:\n{d}");
                }
                let erts_agrees = problems.is_empty();
                if let Some(exp) = &sc.scenario.expect {
                    if let Some(d) = crate::observe::diff_expect(&erts_view(exp, erl.otp), &theirs)
                    {
                        problems += &format!("expect (-) and ERTS (+) differ:\n{d}");
                    }
                }
                match (
                    &sc.scenario.known_deviation,
                    erts_agrees,
                    problems.is_empty(),
                ) {
                    (None, _, true) => Verdict::Agree,
                    (None, _, false) => {
                        Verdict::Differ(format!("{}: {problems}", sc.scenario.name))
                    }
                    (Some(_), true, _) => Verdict::StaleDeviation,
                    // With a known deviation, `expect` records what ERTS does.
                    (Some(_), false, _) => match &sc.scenario.expect {
                        Some(exp) if erts_view(exp, erl.otp) != theirs => {
                            Verdict::Differ(format!("{}: {problems}", sc.scenario.name))
                        }
                        _ => Verdict::KnownDeviation,
                    },
                }
            }
        });
    }
    Ok(verdicts
        .into_iter()
        .map(|v| v.expect("every scenario judged"))
        .collect())
}

/// Greedy minimization of a scenario on which ERTS and bpspec disagree: repeatedly make one cut
/// ([`crate::shrink::candidates`]) while the disagreement stays, trying all candidates of a
/// round in one erl batch. At most `rounds` rounds.
pub fn minimize(erl: &Erl, sc: &Scenario, rounds: usize, ours: Factory) -> Scenario {
    let still_differs = |cands: &[Scenario]| -> Option<usize> {
        let loaded: Vec<(usize, Loaded)> = cands
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                crate::scenario::load("candidate", &serde_json::to_string(c).ok()?)
                    .ok()
                    .map(|l| (i, l))
            })
            .collect();
        let ls: Vec<Loaded> = loaded.iter().map(|(_, l)| l.clone()).collect();
        let vs = differential_of(erl, &ls, ours, false).ok()?;
        vs.iter()
            .position(|v| matches!(v, Verdict::Differ(_)))
            .map(|p| loaded[p].0)
    };
    let mut cur = sc.clone();
    for _ in 0..rounds {
        let mut cands = crate::shrink::candidates(&cur);
        match still_differs(&cands) {
            Some(i) => cur = cands.swap_remove(i),
            None => break,
        }
    }
    cur
}
