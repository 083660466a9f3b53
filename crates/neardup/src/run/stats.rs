//! What a run counts and times: its stages, counters, and the similarity histogram.

use std::time::{Duration, Instant};

/// A named stage of a run, for timings and progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Texts → shingle sets.
    Shingle,
    /// Shingle sets → signatures.
    Sketch,
    /// Signatures → band keys, grouped by sorting.
    Group,
    /// Candidates → verified pairs or links.
    Verify,
    /// Verified links → clusters.
    Cluster,
    /// The exact set-similarity join.
    ExactJoin,
}

impl Stage {
    /// The stage's name in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Shingle => "shingle",
            Stage::Sketch => "sketch",
            Stage::Group => "group",
            Stage::Verify => "verify",
            Stage::Cluster => "cluster",
            Stage::ExactJoin => "exact join",
        }
    }
}

/// Counters and timings of a run. Every counter is exact, not sampled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Documents given.
    pub documents: u64,
    /// Documents that took no part because they had no shingles (empty text).
    pub empty: u64,
    /// Distinct shingles, summed over documents.
    pub shingles: u64,
    /// Documents whose shingle set is identical to an earlier document's: reported as its
    /// duplicates without going through LSH.
    pub identical: u64,
    /// Documents with more shingle positions than the cap: their pairs are judged on the
    /// estimate of whole-document sketches, with no exact Jaccard.
    pub truncated: u64,
    /// Pairs mode: reported pairs with a truncated document (reported by estimate).
    pub truncated_pairs: u64,
    /// Documents with fewer than `k` tokens (words for `word:K`, characters for `char:K`),
    /// empty ones not counted: each is a single shingle, so it matches only exact copies.
    /// When most documents are such, `k` is too large for the corpus (or, for word
    /// shingles, its texts are not split into words).
    pub short_documents: u64,
    /// Buckets of two or more documents, over all bands.
    pub buckets: u64,
    /// The largest bucket.
    pub largest_bucket: u64,
    /// Containment runs: one-row buckets passed over for holding more than
    /// [`MAX_ONE_ROW_BUCKET`](crate::candidates::MAX_ONE_ROW_BUCKET) documents.
    pub skipped_buckets: u64,
    /// Distinct candidate pairs (pairs mode) or candidate links (clusters) checked.
    pub candidates: u64,
    /// Candidates that passed verification.
    pub verified: u64,
    /// Candidates rejected by the prefilter's 1-bit sketches, without merging their sets
    /// (long documents far below the threshold); included in `candidates`.
    pub prefiltered: u64,
    /// Shingles of the verified candidates handed to exact merges (each candidate's
    /// |A| + |B|, or the exact join's remaining tokens): verification's work.
    pub merged: u64,
    /// Exact join: prefix-index entries read to find candidates (its search work).
    pub postings: u64,
    /// Pairs mode: candidates found by the exact search around the largest groups of
    /// identical documents (not through a bucket), included in `candidates`. In clusters
    /// mode only the verified ones are counted, as links, not in `verified`.
    pub large_group_candidates: u64,
    /// Of those, the ones that passed verification, included in `verified`.
    pub large_group_verified: u64,
    /// Pairs mode: candidates found through a shared verified neighbour (not through a
    /// bucket), included in `candidates`.
    pub neighbour_candidates: u64,
    /// Of those, the ones that passed verification, included in `verified`.
    pub neighbour_verified: u64,
    /// Time spent per stage, in order.
    pub timings: Vec<(Stage, Duration)>,
}

/// Bins of [`Similarities`]: equal widths over [0, 1].
pub const SIMILARITY_BINS: usize = 1000;

/// The similarity (exact Jaccard, or the estimate when that is what verification used) of
/// every candidate, split by the verdict, counted in [`SIMILARITY_BINS`] bins: bin i holds
/// [i/1000, (i+1)/1000), the last one also 1. Counts, not values, so recording costs the
/// same however many candidates there are.
#[derive(Clone, Debug, PartialEq)]
pub struct Similarities {
    /// Candidates that passed verification, per bin.
    pub verified: Vec<u64>,
    /// Candidates that verification rejected, per bin.
    pub rejected: Vec<u64>,
}

impl Default for Similarities {
    fn default() -> Self {
        Similarities {
            verified: vec![0; SIMILARITY_BINS],
            rejected: vec![0; SIMILARITY_BINS],
        }
    }
}

impl Similarities {
    /// The bin of a similarity (clamped to [0, 1]); `None` for NaN. A value on a bin's
    /// lower edge computed as a ratio (0.58 = 29/50) lands in that bin.
    pub fn bin(value: f64) -> Option<usize> {
        (!value.is_nan()).then(|| {
            let i = (value.clamp(0.0, 1.0) * SIMILARITY_BINS as f64 + 1e-9).floor() as usize;
            i.min(SIMILARITY_BINS - 1)
        })
    }

    /// Counts one candidate.
    pub fn add(&mut self, value: f64, verified: bool) {
        if let Some(i) = Self::bin(value) {
            let counts = if verified {
                &mut self.verified
            } else {
                &mut self.rejected
            };
            counts[i] += 1;
        }
    }
}

impl Stats {
    /// Runs `f` and records its time as `stage`'s.
    pub(crate) fn time<T>(&mut self, stage: Stage, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        self.timings.push((stage, start.elapsed()));
        out
    }

    /// Adds `extra` to the time recorded for `stage`, if it was recorded.
    pub(crate) fn add_time(&mut self, stage: Stage, extra: Duration) {
        if let Some((_, t)) = self.timings.iter_mut().find(|(s, _)| *s == stage) {
            *t += extra;
        }
    }

    /// Adds `spent` to `stage`'s time, recording the stage if it was not yet.
    pub(crate) fn spend(&mut self, stage: Stage, spent: Duration) {
        match self.timings.iter_mut().find(|(s, _)| *s == stage) {
            Some((_, t)) => *t += spent,
            None => self.timings.push((stage, spent)),
        }
    }

    /// Takes `spent` off the time recorded for `stage` (time that was another's).
    pub(crate) fn remove_time(&mut self, stage: Stage, spent: Duration) {
        if let Some((_, t)) = self.timings.iter_mut().find(|(s, _)| *s == stage) {
            *t = t.saturating_sub(spent);
        }
    }
}
