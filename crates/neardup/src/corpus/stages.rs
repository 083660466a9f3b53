//! A corpus at each stage of a run, as types: [`Shingled`] texts (all the exact join
//! needs), then [`Sketched`] ones (what LSH needs). Asking LSH for the pairs of a corpus
//! that was never sketched does not compile:
//!
//! ```compile_fail
//! use neardup::{Config, Pipeline, Quiet};
//! let pipeline = Pipeline::new(Config::builder().build()?)?;
//! let shingled = pipeline.shingle(&["the same listing, posted twice", "The same listing, posted twice!"])?;
//! pipeline.pairs(&shingled, &mut Quiet); // expected `&Sketched`, found `&Shingled`
//! # Ok::<(), neardup::Error>(())
//! ```
//!
//! while the exact join takes either:
//!
//! ```
//! use neardup::{Config, Pipeline, Quiet};
//! let pipeline = Pipeline::new(Config::builder().build()?)?;
//! let shingled = pipeline.shingle(&["the same listing, posted twice", "The same listing, posted twice!"])?;
//! assert_eq!(pipeline.exact_pairs(&shingled, &mut Quiet).unwrap().0.len(), 1);
//! let sketched = pipeline.sketch(shingled, &mut Quiet);
//! assert_eq!(pipeline.exact_pairs(&sketched, &mut Quiet).unwrap().0.len(), 1);
//! assert_eq!(pipeline.pairs(&sketched, &mut Quiet).0.len(), 1);
//! # Ok::<(), neardup::Error>(())
//! ```

use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use crate::corpus::sets::{Corpus, CorpusBuilder};
use crate::error::{Error, Result};
use crate::run::stats::{Stage, Stats};
use crate::text::shingle::Shingler;

/// A shingled corpus and the counters of shingling it. Made by
/// [`Pipeline::shingle`](crate::Pipeline::shingle) or [`ShingleBatches`]; the exact join
/// runs on it, and [`Pipeline::sketch`](crate::Pipeline::sketch) turns it into a
/// [`Sketched`] corpus for LSH.
#[derive(Clone, Debug)]
pub struct Shingled {
    pub(crate) corpus: Corpus,
    pub(crate) stats: Stats,
    /// The caller's keep order, if set: it replaces the keep policy.
    pub(crate) keep_ranks: Option<Vec<u32>>,
    /// Documents `0..reference` are a reference corpus ([`Shingled::set_reference`]).
    pub(crate) reference: u32,
}

impl Shingled {
    /// The documents' shingle sets and groups of identical sets.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The counters so far (documents, empty ones, copies, shingles, time spent).
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Sets which document each cluster keeps, overriding the configured keep policy:
    /// the one with the smallest rank (ties: the first in input order). One rank per
    /// document, e.g. each document's position when sorted by a timestamp.
    pub fn set_keep_ranks(&mut self, ranks: Vec<u32>) -> Result<()> {
        if ranks.len() != self.corpus.len() {
            return Err(Error::KeepRanks {
                ranks: ranks.len(),
                documents: self.corpus.len(),
            });
        }
        self.keep_ranks = Some(ranks);
        Ok(())
    }

    /// Makes documents `0..n` a reference corpus, as when new documents are deduplicated
    /// against ones already published: they come first in every keep order, are never
    /// removed and always head their clusters, so a later document is removed exactly
    /// when it is similar to a reference document or to an earlier kept one; clusters are
    /// made only for the others, and pairs of two reference documents are not reported.
    /// An error if `n` is past the corpus.
    pub fn set_reference(&mut self, n: u32) -> Result<()> {
        check_reference(n, self.corpus.len())?;
        self.reference = n;
        Ok(())
    }

    /// The number of reference documents ([`Shingled::set_reference`]).
    pub fn reference(&self) -> u32 {
        self.reference
    }
}

/// A reference of `n` documents in a corpus of `documents`: an error if past it.
pub(crate) fn check_reference(n: u32, documents: usize) -> Result<()> {
    if n as usize > documents {
        return Err(Error::Reference {
            reference: n,
            documents,
        });
    }
    Ok(())
}

/// A shingled corpus whose documents were also sketched and banded: what LSH runs on.
/// Everything a [`Shingled`] corpus offers is reachable through it.
#[derive(Clone, Debug)]
pub struct Sketched(pub(crate) Shingled);

impl Deref for Sketched {
    type Target = Shingled;
    fn deref(&self) -> &Shingled {
        &self.0
    }
}

impl DerefMut for Sketched {
    fn deref_mut(&mut self) -> &mut Shingled {
        &mut self.0
    }
}

/// Shingles a corpus batch by batch, so that reading the next batch can overlap
/// shingling this one. Made by [`Pipeline::shingle_batches`](crate::Pipeline::shingle_batches).
///
/// ```
/// use neardup::{Config, Pipeline, Quiet};
/// let pipeline = Pipeline::new(Config::builder().threshold(0.7).build()?)?;
/// let mut batches = pipeline.shingle_batches();
/// batches.add(&["the quick brown fox jumps over the lazy dog"])?;
/// batches.add(&["The quick brown fox jumps over the lazy dog!"])?;
/// let corpus = pipeline.sketch(batches.finish(), &mut Quiet);
/// assert_eq!(pipeline.pairs(&corpus, &mut Quiet).0.len(), 1);
/// # Ok::<(), neardup::Error>(())
/// ```
pub struct ShingleBatches {
    builder: CorpusBuilder,
    /// The configuration's sketches hash 64-bit hashes, which a corpus cannot: every
    /// batch is refused.
    refused: bool,
    /// Time spent shingling, not waiting for batches.
    elapsed: Duration,
}

impl ShingleBatches {
    /// Batches shingled by `shingler`, each set also given its SimHash under `simhash`'s
    /// seed if one is given.
    pub(crate) fn new(shingler: Shingler, simhash: Option<u64>, refused: bool) -> Self {
        ShingleBatches {
            builder: CorpusBuilder::new(shingler).simhash(simhash),
            refused,
            elapsed: Duration::ZERO,
        }
    }

    /// Shingles a batch of texts in parallel and appends them in order. A batch that
    /// would take the corpus past [`MAX_DOCUMENTS`](crate::corpus::MAX_DOCUMENTS) is refused
    /// whole ([`Error::TooManyDocuments`]), and so is every batch under a configuration
    /// whose sketches hash 64-bit hashes ([`Error::CorpusSketchesIds`]).
    pub fn add<T: AsRef<str> + Sync>(&mut self, texts: &[T]) -> Result<()> {
        if self.refused {
            return Err(Error::CorpusSketchesIds);
        }
        let start = Instant::now();
        let added = self.builder.add(texts);
        self.elapsed += start.elapsed();
        added
    }

    /// The shingled corpus, identical sets grouped, with its counters.
    pub fn finish(self) -> Shingled {
        let start = Instant::now();
        let corpus = self.builder.finish();
        let mut stats = Stats {
            documents: corpus.len() as u64,
            ..Stats::default()
        };
        stats
            .timings
            .push((Stage::Shingle, self.elapsed + start.elapsed()));
        stats.shingles = corpus.total_shingles();
        stats.empty = (0..corpus.len() as u32)
            .filter(|&d| !corpus.has_shingles(d))
            .count() as u64;
        stats.identical = corpus.identical_copies();
        stats.truncated = corpus.truncated();
        stats.short_documents = corpus.short_documents();
        Shingled {
            corpus,
            stats,
            keep_ranks: None,
            reference: 0,
        }
    }
}
