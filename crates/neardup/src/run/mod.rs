//! One run, its engine chosen once.
//!
//! Every front end (the command, Python, evaluation) runs the same four steps, and none
//! of them branches on the mode:
//!
//! 1. [`Intake`]: texts go in batch by batch, shingled in memory or spilled to disk
//!    ([`Pipeline::intake`]); it ends in a [`Held`] corpus.
//! 2. [`RunPlan`]: the [`Engine`] that finds the candidates — band buckets, SimHash tables,
//!    the exact join, the LSH Ensemble or exact containment join, or the spilled bands —
//!    chosen once from the configuration, the method asked for and the corpus, with the
//!    reason ([`Why`]) a summary can print.
//! 3. [`Pipeline::prepare`]: the corpus as far as the engine needs it (sketched for the
//!    band and SimHash engines), a [`Ready`] run.
//! 4. [`Pipeline::run`]: pairs handed to a [`Sink`] in bounded chunks as they are
//!    verified, or clusters, as the plan's [`Goal`] asks.
//!
//! ```
//! use neardup::{Config, Goal, Method, Outcome, Pipeline, Quiet, RunPlan, Sink};
//!
//! let texts = [
//!     "Fast near-duplicate detection for large text corpora",
//!     "Fast near-duplicate detection for large text corpora.",
//!     "A library for parsing command line arguments",
//! ];
//! let pipeline = Pipeline::new(Config::builder().threshold(0.8).build()?)?;
//! let mut intake = pipeline.intake(None)?;
//! intake.add(&texts)?;
//! let held = intake.finish()?;
//! let plan = RunPlan::choose(&pipeline, &held, Method::Lsh, Goal::Pairs)?;
//!
//! // A sink that collects the pairs.
//! struct Collect(Vec<(u32, u32)>);
//! impl Sink for Collect {
//!     type Error = std::convert::Infallible;
//!     fn pairs(&mut self, chunk: &[neardup::Pair]) -> Result<(), Self::Error> {
//!         self.0.extend(chunk.iter().map(|p| (p.a, p.b)));
//!         Ok(())
//!     }
//!     fn contained(&mut self, chunk: &[neardup::Contained]) -> Result<(), Self::Error> {
//!         self.0.extend(chunk.iter().map(|p| (p.a, p.b)));
//!         Ok(())
//!     }
//! }
//! let mut sink = Collect(Vec::new());
//! let mut ready = pipeline.prepare(held, &plan, &mut Quiet)?;
//! let (outcome, _stats) = pipeline.run(&mut ready, &mut Quiet, &mut sink).unwrap();
//! assert_eq!(sink.0, [(0, 1)]);
//! assert!(matches!(outcome, Outcome::Pairs(t) if t.pairs == 1));
//! # Ok::<(), neardup::Error>(())
//! ```
//!
//! [`Pipeline::intake`]: crate::Pipeline::intake
//! [`Pipeline::prepare`]: crate::Pipeline::prepare
//! [`Pipeline::run`]: crate::Pipeline::run

pub(crate) mod choose;
pub(crate) mod config;
mod execute;
mod intake;
pub(crate) mod measure;
pub mod method;
pub(crate) mod observer;
pub(crate) mod pairs;
pub(crate) mod pipeline;
mod plan;
pub(crate) mod stats;
pub(crate) mod stream;

pub use config::{defaults, Config, ConfigBuilder, MIN_THRESHOLD};
pub use execute::{Outcome, RunError, Sink};
pub use intake::{Held, Intake, Ready};
pub use measure::Measure;
pub use method::{Goal, Method, MethodChoice};
pub use observer::{Observer, Quiet};
pub use pairs::{Pair, PairSet};
pub use pipeline::Pipeline;
pub use plan::{Engine, RunPlan, Why};
pub use stats::{Similarities, Stage, Stats, SIMILARITY_BINS};
pub use stream::{PairTotals, STREAM_CHUNK};
