use bpspec_spec::model::run::{run, RunOptions};
use bpspec_spec::model::*;

#[test]
#[ignore]
fn measure() {
    let name = std::env::var("M").unwrap_or("s2f2x1".into());
    let sym = std::env::var("SYM").is_ok();
    let live = std::env::var("LIVE").is_ok();
    let mutant = std::env::var("MUT")
        .ok()
        .map(|m| SpecMutant::from_name(&m).unwrap());
    let cfg = model_config(&name).unwrap().with_mutant(mutant);
    let r = run(
        &name,
        cfg,
        RunOptions {
            symmetry: sym,
            threads: 2,
            liveness: live,
            progress: true,
        },
    );
    println!(
        "{} {:?} {} states {} unique {} depth {} {:.2}s {:.0}/s live {:?}",
        r.model,
        r.mutant,
        r.checker,
        r.states,
        r.unique,
        r.depth,
        r.secs,
        r.states_per_sec(),
        r.liveness_graph
    );
    println!("unreached {:?}", r.unreached);
    for v in &r.violated {
        println!("VIOLATED {}", v.property);
        for s in &v.steps {
            println!("   {s}");
        }
    }
}
