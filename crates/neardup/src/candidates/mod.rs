//! Every way of finding pairs to verify: band keys and the bucket index, the search
//! around large groups of copies, SimHash tables, the containment search and join, and the
//! exact set-similarity join.

pub(crate) mod band_index;
pub(crate) mod bands;
pub(crate) mod bucket_walk;
pub(crate) mod containment;
pub(crate) mod containment_search;
pub(crate) mod exact_join;
pub(crate) mod fingerprints;
pub(crate) mod large_groups;
pub(crate) mod neighbours;
pub(crate) mod simhash;
pub(crate) mod source;

pub use bands::BandPlan;
pub use containment::{
    contained, is_smaller, Contained, ContainmentJoin, EnsemblePlan, EnsembleRow, PartitionCount,
    TokenCounter, COMMON_TOKEN_SHARE, ENSEMBLE_RECALL, MAX_ONE_ROW_BUCKET,
};
pub use exact_join::{ExactJoin, JoinStats, ScoredPair};
pub use simhash::{
    hamming, simhash, simhash_probability, SimHashFound, SimHashTables, DEFAULT_HAMMING,
    MAX_HAMMING,
};
