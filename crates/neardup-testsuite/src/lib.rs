//! The tests-as-data suite of neardup, and nothing else (not published).
//!
//! Every case in `testdata/cases/*.toml` is a small corpus with the pairs and clusters
//! expected at its settings; `tests/cases.rs` runs each against every engine: the LSH
//! sketch variants (one-permutation, classic, triage), the exact join, the per-document
//! building blocks, the persistent index (`neardup-index`) and the server over HTTP
//! (`neardup-server` on tokio). The engines live here rather than in the core's tests so
//! that `cargo test -p neardup` builds neither the index, the server nor their runtime.
//!
//! Run it with `cargo test -p neardup-testsuite`.
