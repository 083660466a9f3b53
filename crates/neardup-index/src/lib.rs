#![deny(missing_docs)]
//! A persistent, incremental near-duplicate index: add documents today, ask tomorrow.
//!
//! Documents are shingled and sketched exactly as the `neardup` batch pipeline does it
//! (same shingles, same band keys for the same parameters), and stored with their shingle
//! sets, so every answer is verified by exact Jaccard: an index built from a corpus and
//! queried with each of its documents finds the pairs the batch run finds in its buckets.
//!
//! On disk an index is a directory of immutable, memory-mapped **segments** (each holds
//! documents, their shingle sets, and per band the documents sorted by band key), small
//! **deletion** bitsets, and a **manifest** naming the live ones and the parameters the
//! index is pinned to. A change writes new files and then replaces the manifest
//! atomically and durably: that is the commit. So there is one [`IndexWriter`] at a
//! time (a lock, across processes), any number of [`Searcher`]s in any thread or
//! process, and a reader sees the last committed state, never a partial one. Segments of
//! a similar size are merged as they pile up; [`IndexWriter::compact`] merges them all.
//!
//! An index created with a containment configuration (`Measure::Containment`) keeps the
//! LSH Ensemble-style tables instead of one band plan, and answers the documents a query
//! is inside of and those inside it ([`Neighbour::containment`]), each verified exactly.
//!
//! ```
//! use neardup_index::{check, IndexWriter, Query, Searcher};
//!
//! let dir = tempfile::tempdir()?;
//! let config = neardup::Config::builder().threshold(0.8).build()?;
//! let mut writer = IndexWriter::create(dir.path(), &config)?;
//! writer.add(&[
//!     ("bike-1", "Vintage road bike, 56 cm steel frame, new tyres, collection only"),
//!     ("sofa-7", "Three-seater sofa in grey velvet, barely used, smoke-free home"),
//! ])?;
//! writer.remove(&["sofa-7"])?;
//!
//! // Later, perhaps in another process:
//! let searcher = Searcher::open(dir.path())?;
//! let found = searcher.query(
//!     "Vintage road bike, 56 cm steel frame, new tyres, collection only!",
//!     &Query::new().top(5),
//! )?;
//! assert_eq!(found.len(), 1);
//! assert_eq!(found[0].id, "bike-1");
//! assert!(found[0].similarity.jaccard.unwrap() >= 0.8);
//! assert!(check(dir.path())?.is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod check;
mod common;
mod deletes;
mod error;
mod files;
mod json;
mod manifest;
mod parallel;
mod params;
mod query;
mod searcher;
mod segment;
mod state;
mod writer;

pub use check::{check, CheckReport};
pub use error::{Error, Result};
pub use json::{OutcomeJson, StatsJson};
pub use manifest::{FORMAT_VERSION, OLDEST_FORMAT};
pub use params::Params;
pub use query::{Answer, Kind, Query};
pub use searcher::{Containment, IndexStats, Inside, Neighbour, Searcher};
pub use writer::{AddReport, IndexWriter, Outcome, RemoveReport, COMMON_SAMPLE};

#[cfg(not(target_endian = "little"))]
compile_error!("the index's segments are read in place as little-endian arrays");
