//! Clusters: union-find and the star cover in keep order, and the keep ranks of a value per
//! document.

pub(crate) mod clusters;
pub(crate) mod ranks;

pub use clusters::{cluster, Cluster, ClusterRef, Clusters, Duplicate, KeepPolicy, Similarity};
pub use ranks::KeepRanks;
