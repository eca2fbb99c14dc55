//! The worked example of docs/conformance.md (oracle/examples/other_engine.rs): an engine written
//! from the documented semantics alone passes every sequential conformance check.

#[path = "../examples/other_engine.rs"]
mod other_engine;

#[test]
fn a_naive_engine_written_from_the_docs_conforms() {
    other_engine::checks().unwrap_or_else(|e| panic!("{e}"));
}
