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

pub mod candidates;
pub mod cluster;
pub mod corpus;
mod error;
pub mod measure;
mod rng;
pub mod run;
pub mod shuffle;
pub mod sketch;
pub mod spill;
pub mod text;
pub mod verify;

pub use measure::{evaluation, metrics, plan};
pub use run::method;

pub use candidates::bands::BandPlan;
pub use candidates::containment::{
    contained, is_smaller, Contained, ContainmentJoin, EnsemblePlan, EnsembleRow, PartitionCount,
    TokenCounter, COMMON_TOKEN_SHARE, ENSEMBLE_RECALL, MAX_ONE_ROW_BUCKET,
};
pub use candidates::exact_join::{ExactJoin, JoinStats, ScoredPair};
pub use candidates::simhash::{
    hamming, simhash, simhash_probability, SimHashFound, SimHashTables, DEFAULT_HAMMING,
    MAX_HAMMING,
};
pub use cluster::clusters::{
    cluster, cluster_ranked, cluster_sets, Cluster, ClusterRef, Clusters, Duplicate, KeepPolicy,
    Similarity,
};
pub use cluster::ranks::KeepRanks;
pub use corpus::sets::{set_fingerprint, Corpus, WHOLE_NUM_PERM};
pub use corpus::slot::MAX_DOCUMENTS;
pub use corpus::stages::{ShingleBatches, Shingled, Sketched};
pub use error::{Error, Result};
pub use rng::SplitMix64;
pub use run::config::{defaults, Config, ConfigBuilder, MIN_THRESHOLD};
pub use run::measure::Measure;
pub use run::method::{Goal, Method, MethodChoice};
pub use run::observer::{Observer, Quiet};
pub use run::pairs::{Pair, PairSet};
pub use run::pipeline::Pipeline;
pub use run::stats::{Similarities, Stage, Stats, SIMILARITY_BINS};
pub use run::stream::{PairTotals, STREAM_CHUNK};
pub use run::{Engine, Held, Intake, Outcome, Ready, RunError, RunPlan, Sink, Why};
pub use sketch::classic::{ClassicMinHash, Sketch, MAX_NUM_PERM};
pub use sketch::document::{DocSet, DocSketch, FamilySketch};
pub use sketch::family::{FamilySet, SketchKind, MAX_FAMILIES};
pub use sketch::oph::OnePermutation;
pub use spill::spilled::{SpillBatches, Spilled};
pub use spill::SpillOptions;
pub use text::ids::{jaccard_of_ids, shingle_ids, Shingle, SketchInput};
pub use text::normalize::{normalize, Normalization};
pub use text::shingle::{
    ShingleInfo, ShingleKind, Shingler, DEFAULT_MAX_SHINGLES, MAX_MAX_SHINGLES, MAX_SHINGLE_SIZE,
};
pub use verify::jaccard::{
    estimate, estimate_std_dev, intersection_size, jaccard, jaccard_at_least, jaccard_from_counts,
    meets_threshold, Verification,
};
pub use verify::verifier::Verdict;

/// Internals exposed for the crate's own benchmarks only: not part of the API.
#[doc(hidden)]
pub mod bench_internals {
    pub use crate::candidates::band_index::{bucket_key, BandIndex};
}

/// The README's example of the library, run with the doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExample;
