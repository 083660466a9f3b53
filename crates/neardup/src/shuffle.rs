//! The shuffle of a distributed run (Spark): band rows encoded in blocks, the walk over a
//! sorted partition of them, and the clustering of the verified edges. Pure Rust, so the
//! same code the Python bindings call is tested here.
