//! Verification: Jaccard and its estimate, and the 1-bit prefilter of long sets.

pub(crate) mod jaccard;
pub(crate) mod prefilter;
pub(crate) mod verifier;
