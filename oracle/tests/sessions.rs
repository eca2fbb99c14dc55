//! Trace sessions in scenarios: the engine and the sequential oracle agree on random
//! scenarios with session_create/destroy and per-session patterns, flags and trace_info; the
//! session mutants of the oracle are caught at scenario level (random scenarios and the corpus);
//! the runner refuses an engine that hands out a bad session id; scenarios with sessions are
//! skipped (and counted) on OTP < 27 and agree with ERTS on the OTP root (BPSPEC_OTP_ROOT).

use bpspec_oracle::conformance::{check_corpus, check_scenarios_of, corpus_file, load_corpus};
use bpspec_oracle::erlang::{differential, differential_of, Erl, Summary, Verdict};
use bpspec_oracle::gen::GenConfig;
use bpspec_oracle::gen_sessions;
use bpspec_oracle::run::{run, RunError};
use bpspec_oracle::scenario::{Feature, Loaded};
use bpspec_oracle::target::{BreakpointEngine, RefEngine, SpecOracle, Wrong, WrongOracle};
use bpspec_reference::{
    InfoItem, InfoValue, Mfa, Pattern, PatternError, PatternOp, SessionId, TraceSpec,
};

mod common;

fn wrong(w: Wrong) -> impl Fn(Vec<Mfa>) -> Box<dyn BreakpointEngine> {
    WrongOracle::factory(w)
}

/// The session mutants, and the message-order one that only scenarios with sessions reach.
const MUTANTS: [Wrong; 3] = [
    Wrong::SessionInfoLeak,
    Wrong::DestroyClearsOthers,
    Wrong::SessionOrderReversed,
];

fn session_corpus() -> Vec<Loaded> {
    let mut c = load_corpus().unwrap_or_else(|e| panic!("{e}"));
    c.retain(|l| l.features.contains_key(&Feature::Sessions));
    c
}

/// Uses call_time and has a function that raises.
fn timed_raiser(l: &Loaded) -> bool {
    use bpspec_oracle::scenario::LStep;
    l.features.contains_key(&Feature::CallTime)
        && l.code.iter().any(|c| {
            c.body
                .iter()
                .chain(c.base.iter().flatten())
                .any(|s| matches!(s, LStep::Raise(_)))
        })
}

fn random(n: usize, seed: u64) -> Vec<Loaded> {
    gen_sessions::sample(GenConfig::default(), n, seed)
        .iter()
        .map(|s| s.loaded().unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

#[test]
fn engine_and_oracle_agree_on_random_session_scenarios() {
    let sc = gen_sessions::scenario(GenConfig::default());
    let r = check_scenarios_of(&RefEngine::boxed, &SpecOracle::boxed, sc, 256, 27);
    if let Err(f) = r {
        panic!("{}\nminimal:\n{}", f.message, f.minimal);
    }
    // The generated scenarios do use sessions: creates, destroys, and ops in dynamic sessions.
    let scs = gen_sessions::sample(GenConfig::default(), 100, 27);
    let text: Vec<String> = scs
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
    let destroys = text
        .iter()
        .filter(|t| t.contains("session_destroy"))
        .count();
    let in_s2 = text
        .iter()
        .filter(|t| t.contains("\"session\":\"s2\""))
        .count();
    assert!(
        destroys >= 20 && in_s2 >= 20,
        "{destroys} with a destroy, {in_s2} using s2 (of 100)"
    );
}

#[test]
fn session_mutants_are_caught_at_scenario_level() {
    for w in MUTANTS {
        let f = wrong(w);
        let sc = gen_sessions::scenario(GenConfig::default());
        match check_scenarios_of(&RefEngine::boxed, &f, sc, 512, 27) {
            Ok(()) => panic!("random session scenarios did not catch {w:?}"),
            Err(fail) => {
                let min: serde_json::Value = serde_json::from_str(&fail.minimal).unwrap();
                let ops = min["ops"].as_array().map_or(0, |v| v.len());
                eprintln!(
                    "{w:?} caught by a random scenario, shrunk to {ops} ops: {}",
                    fail.message.lines().next().unwrap_or("")
                );
                // Event positions are absolute, so shrinking stops early: 15 and 28 ops (seed 27)
                // since the generator also draws global patterns and match specs.
                assert!(
                    ops <= 32,
                    "{w:?}: counterexample did not shrink ({ops} ops):\n{}",
                    fail.minimal
                );
            }
        }
        let e = check_corpus(&f).expect_err("the corpus must catch a session mutant");
        assert!(
            e.contains("expected (-) vs observed (+)") && e.contains("sessions"),
            "{w:?}: {e}"
        );
        eprintln!(
            "{w:?} caught by the corpus: {}",
            e.lines().next().unwrap_or("")
        );
    }
}

/// An engine whose `session_create` answers with the legacy session's id.
struct ZeroId(SpecOracle);

impl BreakpointEngine for ZeroId {
    fn name(&self) -> String {
        "zero-id engine".into()
    }
    fn supports(&self, f: &Feature) -> bool {
        self.0.supports(f)
    }
    fn trace_pattern(
        &mut self,
        p: &Pattern,
        op: PatternOp,
        spec: &TraceSpec,
    ) -> Result<usize, PatternError> {
        self.0.trace_pattern(p, op, spec)
    }
    fn call(&mut self, f: usize, pid: u64, traced: u64) -> Vec<SessionId> {
        self.0.call(f, pid, traced)
    }
    fn trace_info(&mut self, s: SessionId, mfa: &Mfa, item: InfoItem) -> InfoValue {
        self.0.trace_info(s, mfa, item)
    }
    fn session_create(&mut self, _name: &str) -> SessionId {
        0
    }
}

#[test]
fn runner_refuses_an_engine_that_reuses_a_session_id() {
    let sc = corpus_file("needs_sessions.json").unwrap_or_else(|e| panic!("{e}"));
    let mut e = ZeroId(SpecOracle(bpspec_spec::Oracle::new(sc.funcs.clone())));
    match run(&sc, &mut e) {
        Err(RunError::Fault { path, message, .. }) => {
            assert_eq!(path, "$.ops[0]");
            assert!(message.contains("returned id 0"), "{message}");
        }
        other => panic!("expected a fault, got {other:?}"),
    }
}

#[test]
fn session_scenarios_are_skipped_and_counted_before_otp_27() {
    let erl = Erl::setup().unwrap_or_else(|m| panic!("{m}"));
    if erl.otp >= 27 {
        eprintln!("skipped: {} has sessions", erl.origin());
        return;
    }
    let mut scs = session_corpus();
    scs.extend(random(20, 27));
    let vs = differential(&erl, &scs).unwrap_or_else(|e| panic!("{e}"));
    let s = Summary::of(&vs);
    eprintln!("session scenarios on {}: {s}", erl.origin());
    assert!(vs.iter().all(|v| *v == Verdict::SkippedOtp(27)), "{s}");
    assert_eq!(s.skipped_otp, scs.len());
}

/// On the OTP root (BPSPEC_OTP_ROOT, OTP >= 27): the session corpus and random scenarios with
/// sessions agree with ERTS exactly, and ERTS tells every session mutant apart.
#[test]
fn sessions_agree_with_erts_on_the_otp_root() {
    let Some(erl) = common::otp_root() else {
        return;
    };
    assert!(erl.otp >= 27, "{} has no trace sessions", erl.origin());
    let corpus = session_corpus();
    let n = std::env::var("BPSPEC_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    let mut scs = corpus.clone();
    // Every random scenario runs, call_time with a function that raises included: since the
    // runner schedules a process out after each call op, as ERTS's idle driver process is, the
    // raiser's pending time lands in the same counter on both (it used to be left out).
    let random = random(n, 27);
    let timed_raise = random.iter().filter(|l| timed_raiser(l)).count();
    scs.extend(random);
    let vs = differential(&erl, &scs).unwrap_or_else(|e| panic!("{e}"));
    let s = Summary::of(&vs);
    eprintln!(
        "{} session corpus files + {} random scenarios with sessions ({timed_raise} with call_time and a raise) on {}: {s}",
        corpus.len(),
        scs.len() - corpus.len(),
        erl.origin(),
    );
    assert!(
        timed_raise >= 1,
        "no random session scenario has call_time and a raise"
    );
    for (sc, v) in scs.iter().zip(&vs) {
        assert_eq!(*v, Verdict::Agree, "{}: {v:?}", sc.scenario.name);
    }
    assert!(corpus.len() >= 5, "{} session corpus files", corpus.len());
    for w in MUTANTS {
        let vs = differential_of(&erl, &scs, &wrong(w), false).unwrap_or_else(|e| panic!("{e}"));
        let s = Summary::of(&vs);
        eprintln!("{w:?} against ERTS: {s}");
        assert!(s.differ >= 1, "ERTS did not catch {w:?}: {s}");
    }
}
