#![cfg(loom)]
use bpspec_models::epoch::{claims, rows, LOOM_FAMILIES};
use bpspec_models::harness::loom_run;
#[test]
fn scratch() {
    for fam in LOOM_FAMILIES {
        let rs = rows(fam, "loom");
        for (m, label) in claims(fam, "loom") {
            let r = rs.iter().find(|r| r.label == label).unwrap();
            let mut b = loom_run::epoch_builder();
            b.preemption_bound = Some(2);
            b.max_duration = Some(std::time::Duration::from_secs(40));
            let model = r.model.clone();
            let o = loom_run::explore(&label, &b, move || model(Some(m)));
            eprintln!(
                "SCR\t{fam}\t{label}\t{m}\t{}\t{:.1}\t{:?}",
                o.executions,
                o.seconds,
                o.cx.map(|c| c.chars().take(70).collect::<String>())
            );
        }
    }
}
