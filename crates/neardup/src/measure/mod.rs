//! What a plan will find and cost, and how a run measures against the truth: the S-curve
//! and plan estimates, pair and cluster metrics, the comparison of LSH with the exact join.

pub mod evaluation;
pub mod metrics;
pub mod plan;
