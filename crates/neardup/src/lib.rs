//! neardup finds near-duplicate documents without comparing every pair.
//!
//! The method is chapter 3 of *Mining of Massive Datasets*: documents become sets of
//! k-shingles ([`shingle`]), sets become MinHash signatures whose agreement estimates
//! Jaccard similarity ([`sketch`]), signatures are cut into bands whose keys group likely
//! pairs ([`lsh`], [`group`]), and candidates are verified by exact Jaccard ([`verify`])
//! before they are reported as pairs or joined into clusters ([`cluster`]). An exact
//! set-similarity join ([`exact`]) finds every pair above the threshold without LSH: the
//! ground truth that LSH's recall is measured against.
//!
//! This crate does no I/O; it works on texts in memory and reports documents by index.
//!
//! ```
//! use neardup::{Config, Pipeline};
//!
//! let texts = [
//!     "Fast near-duplicate detection for large text corpora",
//!     "Fast near-duplicate detection for large text corpora.",
//!     "A library for parsing command line arguments",
//!     "",
//! ];
//! let pipeline = Pipeline::new(Config::builder().threshold(0.8).build()?)?;
//! let prepared = pipeline.prepare(&texts);
//! let (clusters, stats) = pipeline.clusters(&prepared);
//! assert_eq!(clusters.len(), 1);
//! assert_eq!(clusters[0].kept, 0);
//! assert_eq!(clusters[0].duplicates[0].doc, 1);
//! assert_eq!(stats.empty, 1); // the empty text takes no part, and is counted
//! # Ok::<(), neardup::Error>(())
//! ```

pub mod cluster;
pub mod corpus;
pub mod error;
pub mod evaluation;
pub mod exact;
pub mod family;
pub mod group;
pub mod heavy;
pub mod lsh;
pub mod metrics;
pub mod normalize;
pub mod oph;
pub mod pairs;
pub mod pipeline;
pub mod plan;
mod rng;
pub mod shingle;
pub mod sketch;
mod slot;
pub mod verify;

pub use cluster::{Cluster, ClusterRef, Clusters, Duplicate, KeepPolicy, Similarity};
pub use corpus::{Corpus, SkipReason};
pub use error::{Error, Result};
pub use family::SketchKind;
pub use lsh::BandPlan;
pub use normalize::Normalization;
pub use pairs::{Pair, PairSet};
pub use pipeline::{
    Config, ConfigBuilder, NoProgress, PairTotals, Pipeline, Prepared, Preparer, Progress,
    Similarities, Stage, Stats, SIMILARITY_BINS,
};
pub use rng::SplitMix64;
pub use shingle::{ShingleKind, Shingler};
pub use sketch::{ClassicMinHash, Sketch};
pub use verify::Verification;
