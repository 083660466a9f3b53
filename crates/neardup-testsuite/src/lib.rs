//! The tests-as-data suite of neardup (not published).
//!
//! Every case in `testdata/cases/*.toml` is a small corpus with the pairs and clusters
//! expected at its settings ([`case`] reads them and checks them against brute force);
//! `tests/cases.rs` runs each against every [`engine`]: the LSH sketch variants
//! (one-permutation, classic, triage), the exact join, the per-document building blocks,
//! the persistent index (`neardup-index`) and the server over HTTP (`neardup-server` on
//! tokio). The engines live here rather than in the core's tests so that
//! `cargo test -p neardup` builds neither the index, the server nor their runtime
//! (`scripts/check-layers` keeps it so).
//!
//! ```no_run
//! use neardup_testsuite::{case, engine::Engine};
//!
//! for (name, case) in case::load_cases() {
//!     for engine in Engine::for_case(&case) {
//!         let answer = engine.run(&case);
//!         println!("{name} [{}]: {} pairs", engine.name(), answer.pairs.len());
//!     }
//! }
//! ```
//!
//! Run the suite with `cargo test -p neardup-testsuite`.

pub mod case;
pub mod engine;
