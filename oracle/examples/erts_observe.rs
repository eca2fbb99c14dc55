//! Print what a real Erlang/OTP observes for scenario files, one JSON array per file (used to
//! write a corpus file's `expect`, which is then reviewed by hand against OTP's suites):
//! `cargo run -p bpspec-oracle --example erts_observe -- FILE...`.
fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let scs: Vec<_> = files
        .iter()
        .map(|f| bpspec_oracle::scenario::load_file(f).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let erl = bpspec_oracle::erlang::Erl::setup().unwrap_or_else(|e| panic!("{e}"));
    let refs: Vec<_> = scs.iter().collect();
    for (f, r) in files.iter().zip(erl.run_batch(&refs).expect("erl batch")) {
        let obs = r.unwrap_or_else(|e| panic!("{f}: {e}"));
        println!("{f}\t{}", serde_json::to_string(&obs).expect("serialize"));
    }
}
