//! Procedural test scenes, written to glTF by `cargo run --example gen_fixtures` and used
//! directly by tests and benchmarks.
