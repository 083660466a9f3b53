#![deny(missing_docs)]
//! neardup finds near-duplicate documents without comparing every pair.
//!
//! The method is chapter 3 of *Mining of Massive Datasets*: documents become sets of
//! k-shingles ([`Shingler`]), sets become MinHash signatures whose agreement estimates
//! Jaccard similarity ([`Sketch`](sketch::Sketch)), signatures are cut into bands whose keys
//! group likely pairs ([`BandPlan`](candidates::BandPlan)), and candidates are verified by
//! exact Jaccard ([`Verification`]) before they are reported as [`Pair`]s or joined into
//! [`Clusters`]. An exact set-similarity join ([`ExactJoin`](candidates::ExactJoin)) finds
//! every pair above the threshold without LSH: the ground truth that LSH's recall is
//! measured against.
//!
//! A [`Pipeline`] runs a [`Config`] over a whole corpus. A run is four steps, each a type at
//! the root: an [`Intake`] takes the texts and ends in a [`Held`] corpus; a [`RunPlan`]
//! picks its [`Engine`] once; [`Pipeline::prepare`] makes it [`Ready`]; and
//! [`Pipeline::run`] hands pairs to a [`Sink`] or returns [`Clusters`], as the [`Goal`]
//! asks, reporting its progress to the [`Observer`] it is given. The same pieces work one
//! document at a time ([`Pipeline::shingle_doc`], [`Pipeline::sketch_doc`],
//! [`Pipeline::verify_docs`]), and give the same answers as a corpus run.
//!
//! The root holds what a run needs. The stages, in the order a run goes through them, are
//! namespaces:
//!
//! - [`text`]: normalization, shingles and their ids;
//! - [`sketch`]: MinHash signatures, one-permutation hashing, sketch families;
//! - [`candidates`]: every way of finding pairs to verify (band buckets, SimHash, the LSH
//!   Ensemble for containment, the exact join);
//! - [`verify`]: Jaccard, its estimate, and the verdict on a candidate;
//! - [`cluster`]: pairs joined into clusters, and which document each keeps;
//! - [`corpus`]: what a run holds, and its typed stages ([`Shingled`](corpus::Shingled),
//!   [`Sketched`](corpus::Sketched));
//! - [`run`]: the run itself, its configuration, statistics and pair sets;
//! - [`spill`]: runs larger than memory, on temporary files;
//! - [`decontaminate`]: benchmark items found inside documents by word n-grams, verified;
//! - [`units`]: paragraphs, lines and sentence spans removed where they repeat;
//! - [`shuffle`]: the band rows and bucket walk of a distributed (Spark) run;
//! - [`measure`]: what a band plan will find and cost before a run
//!   ([`measure::plan`]), and how a run measures against the exact join or labels
//!   ([`measure::metrics`], [`measure::evaluation`]).
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
pub mod decontaminate;
mod error;
pub mod measure;
mod rng;
pub mod run;
pub mod shuffle;
pub mod sketch;
pub mod spill;
pub mod text;
pub mod units;
pub mod verify;

// What a run needs, shown at the root in full (each also under its stage's namespace).
#[doc(inline)]
pub use candidates::Contained;
#[doc(inline)]
pub use cluster::{Cluster, Clusters, Duplicate, KeepPolicy, Similarity};
pub use error::{Error, Result};
#[doc(inline)]
pub use run::{
    defaults, Config, ConfigBuilder, Engine, Goal, Held, Intake, Measure, Method, Observer,
    Outcome, Pair, Pipeline, Quiet, Ready, RunError, RunPlan, Sink, Stats,
};
#[doc(inline)]
pub use sketch::SketchKind;
#[doc(inline)]
pub use spill::SpillOptions;
#[doc(inline)]
pub use text::{Normalization, ShingleKind, Shingler};
#[doc(inline)]
pub use verify::Verification;

/// Internals exposed for the crate's own benchmarks only: not part of the API.
#[doc(hidden)]
pub mod bench_internals {
    pub use crate::candidates::band_index::{bucket_key, BandIndex};
}

/// The README's example of the library, run with the doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExample;
