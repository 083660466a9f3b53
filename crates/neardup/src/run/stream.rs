//! Pairs as they are verified: the LSH walk hands each chunk of verified pairs on at once,
//! and keeps only what the checks beyond the buckets need, bounded per document.
//!
//! Order of the stream (the same whatever the number of threads): first every pair inside
//! each group of identical documents (groups by representative, pairs by `(a, b)`), then
//! the pairs between representatives in the order they are verified — band by band,
//! bucket by bucket, the large groups' pairs, the shared neighbours' pairs — each expanded
//! to the document pairs of the two groups (`group(a) × group(b)`, each pair `a < b`).

use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::cluster::clusters::Similarity;
use crate::corpus::slot::doc_ids;
use crate::corpus::stages::{Shingled, Sketched};
use crate::run::observer::Observer;
pub use crate::run::pairs::PairTotals;
use crate::run::pairs::{Groups, Pair};
use crate::run::pipeline::Pipeline;
use crate::run::stats::{Stage, Stats};

/// Document pairs handed to a consumer at a time, at most.
pub const STREAM_CHUNK: usize = 1 << 18;

/// Expands pairs of representatives into document pairs and hands them on in chunks.
pub(crate) struct Emitter<'a, F> {
    groups: &'a Groups,
    buf: Vec<Pair>,
    sink: F,
    pub(crate) totals: PairTotals,
    /// Time spent in the consumer, not counted as verification.
    pub(crate) sink_time: Duration,
}

impl<'a, E, F: FnMut(&[Pair]) -> Result<(), E>> Emitter<'a, F> {
    pub(crate) fn new(groups: &'a Groups, sink: F) -> Self {
        Emitter {
            groups,
            buf: Vec::with_capacity(STREAM_CHUNK),
            sink,
            totals: PairTotals::default(),
            sink_time: Duration::ZERO,
        }
    }

    fn push(&mut self, p: Pair) -> Result<(), E> {
        self.buf.push(p);
        self.totals.pairs += 1;
        if self.buf.len() >= STREAM_CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), E> {
        if !self.buf.is_empty() {
            let start = Instant::now();
            let out = (self.sink)(&self.buf);
            self.sink_time += start.elapsed();
            self.buf.clear();
            out?;
        }
        Ok(())
    }

    /// Every pair inside each group of identical documents.
    pub(crate) fn identical(&mut self, similarity: Similarity) -> Result<(), E> {
        for g in self.groups.all() {
            for (i, &a) in g.iter().enumerate() {
                for &b in &g[i + 1..] {
                    self.push(Pair { a, b, similarity })?;
                    self.totals.identical += 1;
                }
            }
        }
        self.flush()
    }

    /// The document pairs of verified representative pairs, then a flush.
    pub(crate) fn reps(&mut self, reps: &[Pair]) -> Result<(), E> {
        for p in reps {
            for &x in self.groups.members(&p.a) {
                for &y in self.groups.members(&p.b) {
                    let (a, b) = (x.min(y), x.max(y));
                    self.push(Pair { a, b, ..*p })?;
                }
            }
        }
        self.flush()
    }
}

impl Pipeline {
    /// Every similar pair found by LSH, handed to `sink` in chunks as soon as it is
    /// verified, in a deterministic order (see below); the pairs are not held. Needs a
    /// sketched corpus. Returns the totals and the same [`Stats`] as [`Pipeline::pairs`]
    /// (whose pairs are the same, each exactly once, sorted instead); the verify stage's
    /// time leaves out the time spent in `sink`. An error from `sink` stops the walk and
    /// is returned.
    ///
    /// Order: the pairs inside each group of identical documents first (groups in order of
    /// their first document, pairs by `(a, b)`), then, as LSH verifies them (band by band,
    /// bucket by bucket, then the checks beyond the buckets), each pair of distinct sets
    /// expanded to the pairs of their groups of copies. Every pair has `a < b`.
    ///
    /// Memory: what the checks beyond the buckets keep is bounded per document (at most
    /// 257 neighbours each), never by the number of pairs.
    ///
    /// ```
    /// use neardup::{Config, Pipeline, Quiet};
    /// let texts = ["the quick brown fox jumps", "the quick brown fox jumps", "the quick brown fox jumped"];
    /// let pipeline = Pipeline::new(Config::builder().threshold(0.5).build().unwrap()).unwrap();
    /// let corpus = pipeline.sketch_texts(&texts).unwrap();
    /// let mut seen = Vec::new();
    /// let (totals, _stats) = pipeline
    ///     .for_each_pair_chunk(&corpus, &mut Quiet, |chunk| {
    ///         seen.extend(chunk.iter().map(|p| (p.a, p.b)));
    ///         Ok::<(), ()>(())
    ///     })
    ///     .unwrap();
    /// assert_eq!(seen, [(0, 1), (0, 2), (1, 2)]); // the copies first
    /// assert_eq!((totals.pairs, totals.documents, totals.identical), (3, 3, 1));
    /// ```
    pub fn for_each_pair_chunk<E>(
        &self,
        sketched: &Sketched,
        observer: &mut dyn Observer,
        sink: impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<(PairTotals, Stats), E> {
        let corpus = &sketched.corpus;
        let groups = Groups::new(corpus);
        let mut stats = sketched.stats.clone();
        let mut emitter = Emitter::new(&groups, sink);
        emitter.identical(self.identical_similarity(corpus))?;
        let before = emitter.sink_time;
        let known = self.walk(sketched, &mut stats, observer, |reps| emitter.reps(reps))?;
        let mut totals = emitter.totals;
        totals.documents = documents_in_pairs(
            corpus.len(),
            |d| corpus.has_shingles(d),
            |d| corpus.representative(d),
            &groups,
            &known.paired,
        );
        // The consumer's time during the walk is its own (writing), not verification's.
        stats.remove_time(Stage::Verify, emitter.sink_time - before);
        Ok((totals, stats))
    }

    /// The exact join's pairs handed to `sink` like [`Pipeline::for_each_pair_chunk`]'s:
    /// the pairs inside groups of identical documents first, then those between distinct
    /// sets, by `(a, b)` of their representatives. The join itself holds the pairs between
    /// representatives (not their expansion to copies) before the first of them is handed
    /// on. The corpus need only be shingled (a [`Sketched`] one derefs to it).
    ///
    /// Two kinds of error, one inside the other: the outer one is the join's (a corpus past
    /// its 32-bit numbering, see [`Pipeline::exact_pairs`]), returned before any pair is
    /// handed on; the inner one is `sink`'s, which stops the stream.
    pub fn exact_for_each_pair_chunk<E>(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
        sink: impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> crate::Result<Result<(PairTotals, Stats), E>> {
        let corpus = &shingled.corpus;
        let groups = Groups::new(corpus);
        let mut stats = shingled.stats.clone();
        let mut reps = self.exact_rep_pairs(corpus, &mut stats, observer)?;
        reps.par_sort_unstable_by_key(|p| (p.a, p.b));
        stats.truncated_pairs = reps.iter().filter(|p| p.similarity.truncated).count() as u64;
        let mut emitter = Emitter::new(&groups, sink);
        let mut paired = vec![false; corpus.len()];
        let emitted = (|| {
            emitter.identical(self.exact_identical_similarity(corpus))?;
            for part in reps.chunks(STREAM_CHUNK) {
                for p in part {
                    paired[p.a as usize] = true;
                    paired[p.b as usize] = true;
                }
                emitter.reps(part)?;
            }
            Ok(())
        })();
        Ok(emitted.map(|()| {
            let mut totals = emitter.totals;
            totals.documents = documents_in_pairs(
                corpus.len(),
                |d| corpus.has_shingles(d),
                |d| corpus.representative(d),
                &groups,
                &paired,
            );
            (totals, stats)
        }))
    }
}

/// Documents in at least one pair: the members of a group of copies, and every document
/// whose representative is paired.
/// Documents in at least one pair: those with shingles whose representative is paired
/// or has copies.
pub(crate) fn documents_in_pairs(
    documents: usize,
    has_shingles: impl Fn(u32) -> bool,
    representative: impl Fn(u32) -> u32,
    groups: &Groups,
    paired: &[bool],
) -> u64 {
    doc_ids(documents)
        .filter(|&d| has_shingles(d))
        .filter(|&d| {
            let r = representative(d);
            paired[r as usize] || groups.members(&r).len() > 1
        })
        .count() as u64
}
