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

use super::{band_index, Pipeline, Prepared, Similarities, Stage, Stats, PAIR_CHUNK};
use crate::cluster::Similarity;
use crate::corpus::Corpus;
use crate::group::{BandIndex, Candidate};
use crate::pairs::{Groups, Pair};

/// A document's verified neighbours are paired with each other only up to this many:
/// beyond it, a hub of near-duplicates would make C(d, 2) candidates. A list stops
/// growing one past it, so memory per document is bounded whatever the number of pairs.
const MAX_NEIGHBOURS: usize = 256;

/// Candidates of the shared-neighbour step sorted and verified at a time (bounds memory).
const NEIGHBOUR_BATCH: u64 = 1 << 22;

/// Document pairs handed to a consumer at a time, at most.
pub const STREAM_CHUNK: usize = 1 << 18;

/// Totals of a streamed pairs run, known once the stream ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairTotals {
    /// Document pairs produced.
    pub pairs: u64,
    /// Documents in at least one pair.
    pub documents: u64,
    /// Of the pairs, those between documents with identical shingle sets.
    pub identical: u64,
}

/// What the walk keeps while it streams: per representative, whether it is in a pair and
/// (for the shared-neighbour step) its first `MAX_NEIGHBOURS + 1` verified neighbours.
pub(super) struct Known {
    paired: Vec<bool>,
    neighbours: Option<Vec<Vec<u32>>>,
}

impl Known {
    fn note(&mut self, p: &Pair) {
        self.paired[p.a as usize] = true;
        self.paired[p.b as usize] = true;
        if let Some(lists) = &mut self.neighbours {
            for (x, y) in [(p.a, p.b), (p.b, p.a)] {
                let list = &mut lists[x as usize];
                if list.len() <= MAX_NEIGHBOURS {
                    list.push(y);
                }
            }
        }
    }
}

/// Counters of the walk, as [`Stats`] reports them.
#[derive(Default)]
struct Counts {
    candidates: u64,
    verified: u64,
    truncated: u64,
    through: [(u64, u64); 2],
}

/// Expands pairs of representatives into document pairs and hands them on in chunks.
struct Emitter<'a, F> {
    groups: &'a Groups,
    buf: Vec<Pair>,
    sink: F,
    totals: PairTotals,
    /// Time spent in the consumer, not counted as verification.
    sink_time: Duration,
}

impl<'a, E, F: FnMut(&[Pair]) -> Result<(), E>> Emitter<'a, F> {
    fn new(groups: &'a Groups, sink: F) -> Self {
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
    fn identical(&mut self, similarity: Similarity) -> Result<(), E> {
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
    fn reps(&mut self, reps: &[Pair]) -> Result<(), E> {
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
    /// use neardup::{Config, Pipeline};
    /// let texts = ["the quick brown fox jumps", "the quick brown fox jumps", "the quick brown fox jumped"];
    /// let pipeline = Pipeline::new(Config::builder().threshold(0.5).build().unwrap()).unwrap();
    /// let prepared = pipeline.prepare(&texts);
    /// let mut seen = Vec::new();
    /// let (totals, _stats) = pipeline
    ///     .for_each_pair_chunk(&prepared, |chunk| {
    ///         seen.extend(chunk.iter().map(|p| (p.a, p.b)));
    ///         Ok::<(), ()>(())
    ///     })
    ///     .unwrap();
    /// assert_eq!(seen, [(0, 1), (0, 2), (1, 2)]); // the copies first
    /// assert_eq!((totals.pairs, totals.documents, totals.identical), (3, 3, 1));
    /// ```
    pub fn for_each_pair_chunk<E>(
        &self,
        prepared: &Prepared,
        sink: impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<(PairTotals, Stats), E> {
        let corpus = &prepared.corpus;
        let groups = Groups::new(corpus);
        let mut stats = prepared.stats.clone();
        let mut emitter = Emitter::new(&groups, sink);
        emitter.identical(self.identical_similarity(corpus))?;
        let before = emitter.sink_time;
        let known = self.walk(prepared, &mut stats, |reps| emitter.reps(reps))?;
        let mut totals = emitter.totals;
        totals.documents = documents_in_pairs(corpus, &groups, &known.paired);
        // The consumer's time during the walk is its own (writing), not verification's.
        let consumer = emitter.sink_time - before;
        if let Some((_, t)) = stats.timings.iter_mut().find(|(s, _)| *s == Stage::Verify) {
            *t = t.saturating_sub(consumer);
        }
        Ok((totals, stats))
    }

    /// The exact join's pairs handed to `sink` like [`Pipeline::for_each_pair_chunk`]'s:
    /// the pairs inside groups of identical documents first, then those between distinct
    /// sets, by `(a, b)` of their representatives. The join itself holds the pairs between
    /// representatives (not their expansion to copies) before the first of them is handed
    /// on. The corpus need only be shingled.
    pub fn exact_for_each_pair_chunk<E>(
        &self,
        prepared: &Prepared,
        sink: impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<(PairTotals, Stats), E> {
        let corpus = &prepared.corpus;
        let groups = Groups::new(corpus);
        let mut stats = prepared.stats.clone();
        let mut reps = self.exact_rep_pairs(corpus, &mut stats);
        reps.par_sort_unstable_by_key(|p| (p.a, p.b));
        stats.truncated_pairs = reps.iter().filter(|p| p.similarity.truncated).count() as u64;
        let mut emitter = Emitter::new(&groups, sink);
        emitter.identical(self.exact_identical_similarity(corpus))?;
        let mut paired = vec![false; corpus.len()];
        for part in reps.chunks(STREAM_CHUNK) {
            for p in part {
                paired[p.a as usize] = true;
                paired[p.b as usize] = true;
            }
            emitter.reps(part)?;
        }
        let mut totals = emitter.totals;
        totals.documents = documents_in_pairs(corpus, &groups, &paired);
        Ok((totals, stats))
    }

    /// The LSH walk: verifies bucket candidates chunk by chunk, then the checks beyond the
    /// buckets, handing each batch of verified pairs of representatives to `out`; fills
    /// the counters of `stats`.
    pub(super) fn walk<E>(
        &self,
        prepared: &Prepared,
        stats: &mut Stats,
        mut out: impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<Known, E> {
        let index = band_index(self.config.plan, &prepared.corpus, stats);
        let corpus = &prepared.corpus;
        let mut known = Known {
            paired: vec![false; corpus.len()],
            neighbours: self
                .config
                .neighbours
                .then(|| vec![Vec::new(); corpus.len()]),
        };
        let mut counts = Counts::default();
        let mut recorded = self.record_similarities.then(Similarities::default);
        self.progress.start(Stage::Verify, 0);
        let start = Instant::now();
        let walked = (|| {
            index.for_each_pair_chunk(PAIR_CHUNK, |chunk: &[Candidate]| {
                let firsts: Vec<(u32, u32)> = chunk
                    .par_iter()
                    .filter(|c| {
                        index.family_of(c.band) == corpus.shared_family(c.a, c.b)
                            && !index.collided_earlier(c.a, c.b, c.band)
                    })
                    .map(|c| (c.a, c.b))
                    .collect();
                let verified = self.verify(corpus, &firsts, &mut counts, recorded.as_mut());
                for p in &verified {
                    known.note(p);
                }
                self.progress.advance(chunk.len() as u64);
                out(&verified)
            })?;
            if self.config.neighbours {
                self.beyond_buckets(
                    corpus,
                    &index,
                    &mut known,
                    &mut counts,
                    &mut recorded,
                    &mut out,
                )?;
            }
            Ok(())
        })();
        stats.timings.push((Stage::Verify, start.elapsed()));
        self.progress.finish();
        walked?;
        stats.candidates = counts.candidates;
        stats.verified = counts.verified;
        stats.truncated_pairs = counts.truncated;
        (stats.large_group_candidates, stats.large_group_verified) = counts.through[0];
        (stats.neighbour_candidates, stats.neighbour_verified) = counts.through[1];
        stats.similarities = recorded;
        Ok(known)
    }

    /// Scores candidate pairs in parallel (order kept); returns those that pass.
    fn verify(
        &self,
        corpus: &Corpus,
        candidates: &[(u32, u32)],
        counts: &mut Counts,
        recorded: Option<&mut Similarities>,
    ) -> Vec<Pair> {
        let scored: Vec<(Option<Similarity>, f64)> = candidates
            .par_iter()
            .map(|&(a, b)| self.score(corpus, a, b))
            .collect();
        if let Some(rec) = recorded {
            for (verdict, value) in &scored {
                rec.add(*value, verdict.is_some());
            }
        }
        counts.candidates += candidates.len() as u64;
        let verified: Vec<Pair> = candidates
            .iter()
            .zip(scored)
            .filter_map(|(&(a, b), (verdict, _))| {
                Some(Pair {
                    a,
                    b,
                    similarity: verdict?,
                })
            })
            .collect();
        counts.verified += verified.len() as u64;
        counts.truncated += verified.iter().filter(|p| p.similarity.truncated).count() as u64;
        verified
    }

    /// Candidates beyond the buckets, checked like any other: first every pair with one of
    /// the largest groups of copies (found exactly, see [`crate::heavy`]), then pairs of
    /// representatives that are both verified near-duplicates of a third (with at most
    /// [`MAX_NEIGHBOURS`] neighbours). A document that misses one member of a family of
    /// near-duplicates in every band often hits another; the second finds the pair anyway.
    /// Pairs that collided in a band were candidates already and are skipped.
    fn beyond_buckets<E>(
        &self,
        corpus: &Corpus,
        index: &BandIndex,
        known: &mut Known,
        counts: &mut Counts,
        recorded: &mut Option<Similarities>,
        out: &mut impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<(), E> {
        let fresh = |a: u32, b: u32| {
            let family = corpus.shared_family(a, b);
            family != usize::MAX && !index.collide_in_family(a, b, family)
        };
        let before = (counts.candidates, counts.verified);
        let proposed = crate::heavy::pairs_near_large_groups(corpus, self.config.threshold);
        let proposed: Vec<(u32, u32)> = proposed
            .into_par_iter()
            .filter(|&(a, b)| fresh(a, b))
            .collect();
        let large = self.verify(corpus, &proposed, counts, recorded.as_mut());
        counts.through[0] = (counts.candidates - before.0, counts.verified - before.1);
        for p in &large {
            known.note(p);
        }
        for part in large.chunks(PAIR_CHUNK) {
            out(part)?;
        }
        // Known pairs that did not collide: the large groups' (sorted, as proposed).
        let large: Vec<(u32, u32)> = large.iter().map(|p| (p.a, p.b)).collect();
        let before = (counts.candidates, counts.verified);
        let Some(mut lists) = known.neighbours.take() else {
            return Ok(());
        };
        lists.par_iter_mut().for_each(|l| l.sort_unstable());
        let eligible = lists
            .iter()
            .filter(|l| (2..=MAX_NEIGHBOURS).contains(&l.len()));
        // How many pairs each document proposes as the lower one: cuts the work into
        // batches of about NEIGHBOUR_BATCH, each sorted and deduplicated on its own.
        let mut lower = vec![0u64; corpus.len()];
        for l in eligible {
            for (i, &x) in l.iter().enumerate() {
                lower[x as usize] += (l.len() - 1 - i) as u64;
            }
        }
        for range in batches(&lower, NEIGHBOUR_BATCH) {
            let range = range.start as u32..range.end as u32;
            let mut proposed: Vec<(u32, u32)> = lists
                .par_iter()
                .filter(|l| (2..=MAX_NEIGHBOURS).contains(&l.len()))
                .flat_map_iter(|l| {
                    let range = range.clone();
                    l.iter()
                        .enumerate()
                        .filter(move |(_, x)| range.contains(x))
                        .flat_map(move |(i, &x)| l[i + 1..].iter().map(move |&y| (x, y)))
                })
                .collect();
            proposed.par_sort_unstable();
            proposed.dedup();
            proposed.retain(|&(a, b)| large.binary_search(&(a, b)).is_err());
            let proposed: Vec<(u32, u32)> = proposed
                .into_par_iter()
                .filter(|&(a, b)| fresh(a, b))
                .collect();
            let near = self.verify(corpus, &proposed, counts, recorded.as_mut());
            for p in &near {
                known.paired[p.a as usize] = true;
                known.paired[p.b as usize] = true;
            }
            out(&near)?;
        }
        counts.through[1] = (counts.candidates - before.0, counts.verified - before.1);
        Ok(())
    }
}

/// Consecutive ranges of documents, each with at most `limit` in total of `counts` (or a
/// single document over it), leaving out ranges with nothing.
fn batches(counts: &[u64], limit: u64) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while from < counts.len() {
        let (mut to, mut size) = (from, 0u64);
        while to < counts.len() && (to == from || size + counts[to] <= limit) {
            size += counts[to];
            to += 1;
        }
        if size > 0 {
            out.push(from..to);
        }
        from = to;
    }
    out
}

/// Documents in at least one pair: the members of a group of copies, and every document
/// whose representative is paired.
fn documents_in_pairs(corpus: &Corpus, groups: &Groups, paired: &[bool]) -> u64 {
    (0..corpus.len() as u32)
        .filter(|&d| corpus.skip_reason(d).is_none())
        .filter(|&d| {
            let r = corpus.representative(d);
            paired[r as usize] || groups.members(&r).len() > 1
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_count_within_the_limit() {
        let counts = [3, 0, 4, 9, 1, 1, 0, 0, 2];
        let got = batches(&counts, 5);
        assert_eq!(got, vec![0..2, 2..3, 3..4, 4..9]);
        let covered: u64 = got
            .iter()
            .map(|r| counts[r.clone()].iter().sum::<u64>())
            .sum();
        assert_eq!(covered, counts.iter().sum());
        assert!(batches(&[0, 0], 5).is_empty());
        assert_eq!(batches(&[1, 1, 1], 100), vec![0..3]);
    }

    #[test]
    fn neighbour_lists_stop_one_past_the_cap() {
        let mut known = Known {
            paired: vec![false; 400],
            neighbours: Some(vec![Vec::new(); 400]),
        };
        let sim = Similarity {
            jaccard: Some(0.9),
            estimate: None,
            truncated: false,
        };
        for b in 1..400 {
            known.note(&Pair {
                a: 0,
                b,
                similarity: sim,
            });
        }
        let lists = known.neighbours.unwrap();
        assert_eq!(lists[0].len(), MAX_NEIGHBOURS + 1);
        assert_eq!(lists[399], vec![0]);
        assert!(known.paired.iter().all(|&p| p));
    }
}
