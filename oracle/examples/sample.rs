//! Print generated scenarios: `cargo run -p bpspec-oracle --example sample -- N SEED`.
fn main() {
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|s| s.parse().ok())
        .collect();
    let (n, seed) = (
        a.first().copied().unwrap_or(1) as usize,
        a.get(1).copied().unwrap_or(6),
    );
    for sc in bpspec_oracle::gen::sample(bpspec_oracle::gen::GenConfig::default(), n, seed) {
        println!("{}", serde_json::to_string_pretty(&sc).expect("serialize"));
    }
}
