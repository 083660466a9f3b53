//! Text to shingle sets: normalization, shingles and their 32-bit ids, and the sort of
//! uniform keys the sets are made with.

pub(crate) mod ids;
pub(crate) mod normalize;
pub(crate) mod shingle;
pub(crate) mod uniform_sort;
