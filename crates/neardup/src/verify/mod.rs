//! Verification: the [`Verification`] policy, Jaccard and its estimate, the 1-bit prefilter
//! of long sets, and the [`Verdict`] on one candidate pair.

pub(crate) mod jaccard;
pub(crate) mod prefilter;
pub(crate) mod verifier;

pub use jaccard::{
    estimate, estimate_std_dev, intersection_size, jaccard, jaccard_at_least, jaccard_from_counts,
    meets_threshold, Verification,
};
pub use verifier::Verdict;
