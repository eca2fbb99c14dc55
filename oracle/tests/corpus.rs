//! The corpus without Erlang: every scenario's `expect` (recorded from OTP 25 and reviewed
//! against OTP's suites) holds on our engine and on the sequential oracle; the known deviation
//! still differs; scenarios using features the engine lacks are refused as unsupported.

use bpspec_oracle::observe::diff;
use bpspec_oracle::run::{run, RunError};
use bpspec_oracle::scenario::{load_file, Loaded};
use bpspec_oracle::target::{BreakpointEngine, RefEngine, SpecOracle};

fn corpus() -> Vec<Loaded> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| load_file(&p.display().to_string()).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

#[test]
fn corpus_expectations_hold_on_engine_and_oracle() {
    let (mut checked, mut deviations, mut unsupported) = (0, 0, 0);
    for sc in corpus() {
        let engines: [Box<dyn BreakpointEngine>; 2] = [
            RefEngine::boxed(sc.funcs.clone()),
            SpecOracle::boxed(sc.funcs.clone()),
        ];
        for mut e in engines {
            match run(&sc, e.as_mut()) {
                Err(RunError::Unsupported { .. }) => {
                    assert!(!sc.features.is_empty());
                    unsupported += 1;
                }
                Err(other) => panic!("{}: {other}", sc.source),
                Ok(obs) => {
                    let exp = sc.scenario.expect.as_ref().unwrap_or_else(|| {
                        panic!("{}: corpus scenarios that run have expect", sc.source)
                    });
                    let d = diff(exp, &obs);
                    if sc.scenario.known_deviation.is_some() {
                        assert!(
                            d.is_some(),
                            "{}: marked known_deviation but agrees with ERTS; remove the marker",
                            sc.source
                        );
                        deviations += 1;
                    } else if let Some(d) = d {
                        panic!("{} on the {}:\n{d}", sc.source, e.name());
                    } else {
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(
        checked >= 30 && deviations == 0 && unsupported >= 8,
        "{checked} checked, {deviations} deviations, {unsupported} unsupported"
    );
}

#[test]
fn check_corpus_accepts_both_engines_and_rejects_wrong_oracles() {
    use bpspec_oracle::conformance::check_corpus;
    use bpspec_oracle::target::{Wrong, WrongOracle};
    for f in [&RefEngine::boxed as &dyn Fn(_) -> _, &SpecOracle::boxed] {
        let r = check_corpus(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            r.agree >= 17 && r.known_deviation == 0 && r.unsupported == 5,
            "{r:?}"
        );
    }
    for w in [
        Wrong::PauseIgnored,
        Wrong::NoQuirk,
        Wrong::TimeRestartIgnored,
        Wrong::ScheduleOutUncharged,
    ] {
        let f = move |funcs| -> Box<dyn BreakpointEngine> { Box::new(WrongOracle::new(funcs, w)) };
        let e = check_corpus(&f).expect_err("the corpus must catch a wrong oracle");
        assert!(e.contains("expected (-) vs observed (+)"), "{e}");
    }
}
