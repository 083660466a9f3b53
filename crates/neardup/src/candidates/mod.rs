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
