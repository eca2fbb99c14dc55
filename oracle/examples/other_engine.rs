//! How another implementation plugs into bpspec's conformance checks (docs/conformance.md).
//!
//! `MyEngine` here is a deliberately naive sequential engine written from the documented
//! semantics alone (no chains, no halves): one map from (function, session) to flags and a
//! counter. Run it with `cargo run -p bpspec-oracle --example other_engine`; it prints the verdict
//! of each check. (The test `oracle/tests/other_engine.rs` runs the same checks.)

use bpspec_oracle::conformance::{check_corpus, check_ops, check_scenarios};
use bpspec_oracle::gen::GenConfig;
use bpspec_oracle::target::{local_flags, BreakpointEngine, RefEngine};
use bpspec_reference::{
    FuncId, InfoItem, InfoValue, Mfa, Pattern, PatternError, PatternOp, SessionId, TraceSpec,
};
use std::collections::BTreeMap;

#[derive(Default)]
struct Bp {
    local: bool,
    /// (count, running)
    counter: Option<(u64, bool)>,
    created: u64,
}

struct MyEngine {
    funcs: Vec<Mfa>,
    bps: BTreeMap<(FuncId, SessionId), Bp>,
    clock: u64,
}

impl BreakpointEngine for MyEngine {
    fn name(&self) -> String {
        "naive example engine".into()
    }
    fn trace_pattern(
        &mut self,
        pat: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        // Local + call_count only: the runner asks for nothing else of this engine.
        let fl = local_flags(&self.name(), op, spec)?;
        let s = spec.session;
        let hits = pat.matching(&self.funcs);
        for &f in &hits {
            let exists = self.bps.contains_key(&(f, s));
            if op == PatternOp::False {
                if let Some(b) = self.bps.get_mut(&(f, s)) {
                    b.local &= !fl.local;
                    if fl.call_count {
                        b.counter = None;
                    }
                }
            } else if exists || op == PatternOp::True || fl.local {
                self.clock += 1;
                let clock = self.clock;
                let b = self.bps.entry((f, s)).or_insert_with(|| Bp {
                    created: clock,
                    ..Bp::default()
                });
                b.local |= fl.local;
                if fl.call_count {
                    b.counter = match (op, b.counter) {
                        (PatternOp::Pause, Some((n, _))) => Some((n, false)),
                        _ => Some((0, true)),
                    };
                }
            }
            if self
                .bps
                .get(&(f, s))
                .is_some_and(|b| !b.local && b.counter.is_none())
            {
                self.bps.remove(&(f, s));
            }
        }
        Ok(hits.len())
    }
    fn call(&mut self, f: FuncId, _pid: u64, traced: u64) -> Vec<SessionId> {
        let mut on: Vec<(&(FuncId, SessionId), &mut Bp)> =
            self.bps.iter_mut().filter(|((g, _), _)| *g == f).collect();
        on.sort_by_key(|(_, b)| std::cmp::Reverse(b.created));
        let mut out = Vec::new();
        for ((_, s), b) in on {
            if b.local && traced & (1 << s) != 0 {
                out.push(*s);
            }
            if let Some((n, true)) = &mut b.counter {
                *n += 1;
            }
        }
        out
    }
    fn trace_info(&mut self, s: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        let Some(f) = self.funcs.iter().position(|m| m == mfa) else {
            return InfoValue::Undefined;
        };
        match (self.bps.get(&(f, s)), item) {
            (Some(b), InfoItem::Traced) if b.local => InfoValue::Local,
            (
                Some(Bp {
                    counter: Some((n, _)),
                    ..
                }),
                InfoItem::CallCount,
            ) => InfoValue::Count(*n),
            _ => InfoValue::False,
        }
    }
    fn is_patched(&mut self, f: FuncId) -> Option<bool> {
        Some(self.bps.keys().any(|(g, _)| *g == f))
    }
}

fn my_engine(funcs: Vec<Mfa>) -> Box<dyn BreakpointEngine> {
    Box::new(MyEngine {
        funcs,
        bps: BTreeMap::new(),
        clock: 0,
    })
}

/// Every conformance check bpspec has for a sequential engine, against our engine.
pub fn checks() -> Result<(), String> {
    check_ops(&my_engine, &RefEngine::boxed, 512, 40, 1).map_err(|f| {
        format!(
            "op-level conformance (512 cases, up to 40 ops): {}: {:?}",
            f.message, f.minimal
        )
    })?;
    println!("op-level conformance (512 cases, up to 40 ops): ok");
    // This engine has no call_time and no global trace: generate scenarios without them.
    let cfg = GenConfig {
        call_time: false,
        global: false,
        frames: false,
        ..GenConfig::default()
    };
    check_scenarios(&my_engine, &RefEngine::boxed, cfg, 512, 1).map_err(|f| {
        format!(
            "scenario-level conformance (512 scenarios): {}:\n{}",
            f.message, f.minimal
        )
    })?;
    println!("scenario-level conformance (512 scenarios): ok");
    let r = check_corpus(&my_engine)?;
    println!("corpus: {r:?}");
    Ok(())
}

#[allow(dead_code)]
fn main() {
    if let Err(e) = checks() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
