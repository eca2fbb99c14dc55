//! Meta trace (`{meta, Tracer}`) without Erlang: the two meta scenarios of the corpus (recorded
//! on OTP 25, checked on OTP 29.1.2 too) hold on our engine and the sequential oracle, and the
//! wrong oracle that sends meta messages only for call-traced processes is caught.

use bpspec_oracle::conformance::check_corpus;
use bpspec_oracle::observe::diff_expect as diff;
use bpspec_oracle::run::run;
use bpspec_oracle::scenario::load_file;
use bpspec_oracle::target::{BreakpointEngine, RefEngine, SpecOracle, Wrong, WrongOracle};

fn scenario(name: &str) -> bpspec_oracle::scenario::Loaded {
    let p = format!("{}/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    load_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn meta_scenarios_hold_on_engine_and_oracle() {
    for name in ["call_count_combo_meta.json", "meta_untraced_process.json"] {
        let sc = scenario(name);
        let exp = sc.scenario.expect.as_ref().expect("recorded on OTP 25");
        assert!(
            exp.iter()
                .any(|o| o.line().contains("\"session\":\"meta\"")),
            "{name}: records meta messages"
        );
        let engines: [Box<dyn BreakpointEngine>; 2] = [
            RefEngine::boxed(sc.funcs.clone()),
            SpecOracle::boxed(sc.funcs.clone()),
        ];
        for mut e in engines {
            let obs = run(&sc, e.as_mut()).unwrap_or_else(|err| panic!("{name}: {err}"));
            assert_eq!(diff(exp, &obs), None, "{name} on the {}", e.name());
        }
    }
}

#[test]
fn wrong_oracle_meta_only_for_call_traced_is_caught() {
    let sc = scenario("meta_untraced_process.json");
    let exp = sc.scenario.expect.as_ref().expect("recorded on OTP 25");
    for w in Wrong::META {
        let obs =
            run(&sc, &mut WrongOracle::new(sc.funcs.clone(), w)).unwrap_or_else(|e| panic!("{e}"));
        let d = diff(exp, &obs).unwrap_or_else(|| panic!("{w:?} must disagree with OTP 25"));
        // p1 has no trace flags: its meta messages are the ones missing.
        assert!(
            d.lines()
                .any(|l| l.starts_with("- ")
                    && l.contains("\"session\":\"meta\",\"process\":\"p1\"")),
            "{w:?}: {d}"
        );
        assert!(
            !d.lines()
                .any(|l| l.starts_with("- ") && l.contains("\"process\":\"p2\"")),
            "{w:?}: p2 is call-traced, its meta messages stay: {d}"
        );
        let f = WrongOracle::factory(w);
        let e = check_corpus(&f).expect_err("the corpus must catch the meta mutant");
        assert!(e.contains("meta_untraced_process"), "{e}");
    }
}
