#![deny(missing_docs)]
//! neardup finds near-duplicate documents without comparing every pair.
//!
//! The method is chapter 3 of *Mining of Massive Datasets*: documents become sets of
//! k-shingles ([`Shingler`]), sets become MinHash signatures whose agreement estimates
//! Jaccard similarity ([`Sketch`]), signatures are cut into bands whose keys group likely
//! pairs ([`BandPlan`]), and candidates are verified by exact Jaccard ([`Verification`])
//! before they are reported as [`Pair`]s or joined into [`Clusters`]. An exact
//! set-similarity join ([`ExactJoin`]) finds every pair above the threshold without LSH:
//! the ground truth that LSH's recall is measured against.
//!
//! A [`Pipeline`] runs a [`Config`] over a whole corpus, in stages that are types: texts are
//! [`Shingled`] (all the exact join needs), then [`Sketched`] (what LSH needs). Each run
//! reports its progress to the [`Observer`] it is given. The same pieces work one document
//! at a time ([`Pipeline::shingle_doc`], [`Pipeline::sketch_doc`], [`set_fingerprint`],
//! [`Pipeline::verify_docs`]), and give the same answers as a corpus run. [`plan`] says
//! what a band plan will find and cost before a run; [`metrics`] and [`evaluation`]
//! measure a run against the exact join or against labels.
//!
//! This crate does no I/O; it works on texts in memory and reports documents by index.
//!
//! ```
//! use neardup::{Config, Pipeline, Quiet};
//!
//! let texts = [
//!     "Fast near-duplicate detection for large text corpora",
//!     "Fast near-duplicate detection for large text corpora.",
//!     "A library for parsing command line arguments",
//!     "",
//! ];
//! let pipeline = Pipeline::new(Config::builder().threshold(0.8).build()?)?;
//! let corpus = pipeline.sketch_texts(&texts)?;
//! let (clusters, stats) = pipeline.clusters(&corpus, &mut Quiet);
//! assert_eq!(clusters.len(), 1);
//! assert_eq!(clusters[0].kept, 0);
//! assert_eq!(clusters[0].duplicates[0].doc, 1);
//! assert_eq!(stats.empty, 1); // the empty text takes no part, and is counted
//! # Ok::<(), neardup::Error>(())
//! ```

mod bbit;
mod cluster;
mod config;
mod containment;
mod corpus;
mod document;
mod error;
pub mod evaluation;
mod exact;
mod family;
mod group;
mod heavy;
mod ids;
mod lsh;
pub mod method;
pub mod metrics;
mod normalize;
mod observer;
mod oph;
mod pairs;
mod pipeline;
pub mod plan;
mod ranks;
mod rng;
mod run;
mod shingle;
pub mod shuffle;
mod simhash;
mod sketch;
mod slot;
pub mod spill;
mod stages;
mod stats;
mod uniform_sort;
mod verify;

pub use cluster::{
    cluster, cluster_ranked, cluster_sets, Cluster, ClusterRef, Clusters, Duplicate, KeepPolicy,
    Similarity,
};
pub use config::{defaults, Config, ConfigBuilder, MIN_THRESHOLD};
pub use containment::{
    contained, is_smaller, Contained, ContainmentJoin, EnsemblePlan, EnsembleRow, Measure,
    PartitionCount, TokenCounter, COMMON_TOKEN_SHARE, ENSEMBLE_RECALL, MAX_ONE_ROW_BUCKET,
};
pub use corpus::{set_fingerprint, Corpus, WHOLE_NUM_PERM};
pub use document::{DocSet, DocSketch, FamilySketch};
pub use error::{Error, Result};
pub use exact::{ExactJoin, JoinStats, ScoredPair};
pub use family::{FamilySet, SketchKind, MAX_FAMILIES};
pub use ids::{jaccard_of_ids, shingle_ids, Shingle, SketchInput};
pub use lsh::BandPlan;
pub use method::{Goal, Method, MethodChoice};
pub use normalize::{normalize, Normalization};
pub use observer::{Observer, Quiet};
pub use oph::OnePermutation;
pub use pairs::{Pair, PairSet};
pub use pipeline::{PairTotals, Pipeline, Verdict, STREAM_CHUNK};
pub use pipeline::{SpillBatches, Spilled};
pub use ranks::KeepRanks;
pub use rng::SplitMix64;
pub use run::{Engine, Held, Intake, Outcome, Ready, RunError, RunPlan, Sink, Why};
pub use shingle::{
    ShingleInfo, ShingleKind, Shingler, DEFAULT_MAX_SHINGLES, MAX_MAX_SHINGLES, MAX_SHINGLE_SIZE,
};
pub use simhash::{
    hamming, simhash, simhash_probability, SimHashFound, SimHashTables, DEFAULT_HAMMING,
    MAX_HAMMING,
};
pub use sketch::{ClassicMinHash, Sketch, MAX_NUM_PERM};
pub use slot::MAX_DOCUMENTS;
pub use spill::SpillOptions;
pub use stages::{ShingleBatches, Shingled, Sketched};
pub use stats::{Similarities, Stage, Stats, SIMILARITY_BINS};
pub use verify::{
    estimate, estimate_std_dev, intersection_size, jaccard, jaccard_at_least, jaccard_from_counts,
    meets_threshold, Verification,
};

/// Internals exposed for the crate's own benchmarks only: not part of the API.
#[doc(hidden)]
pub mod bench_internals {
    pub use crate::group::{bucket_key, BandIndex};
}

/// The README's example of the library, run with the doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExample;
