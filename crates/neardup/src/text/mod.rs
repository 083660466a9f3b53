//! Text to shingle sets: normalization, shingles and their 32-bit ids, and the sort of
//! uniform keys the sets are made with.

pub(crate) mod ids;
pub(crate) mod normalize;
pub(crate) mod shingle;
pub(crate) mod uniform_sort;

pub use ids::{jaccard_of_ids, shingle_ids, Shingle, SketchInput};
pub use normalize::{normalize, Normalization};
pub use shingle::{
    ShingleInfo, ShingleKind, Shingler, DEFAULT_MAX_SHINGLES, MAX_MAX_SHINGLES, MAX_SHINGLE_SIZE,
};
