//! The stages run in order, in parallel: shingle → sketch → band → group → verify → cluster.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::cluster::{cluster_sets, Cluster, Clusters, KeepPolicy, Similarity};
use crate::corpus::{Corpus, CorpusBuilder};
use crate::error::{Error, Result};
use crate::exact::ExactJoin;
use crate::family::{families, Family, SketchKind};
use crate::group::{absent_key, BandIndex};
use crate::lsh::BandPlan;
use crate::normalize::Normalization;
use crate::pairs::{Pair, PairSet};
use crate::shingle::{ShingleKind, Shingler};
use crate::verify::{estimate, jaccard, meets_threshold, triage_margin, Verification};

mod stream;
pub use stream::{PairTotals, STREAM_CHUNK};

/// Candidate pairs verified per chunk in pairs mode: bounds memory for huge buckets.
const PAIR_CHUNK: usize = 1 << 20;

/// The smallest similarity threshold accepted. Below it the size windows (`n / t`), the
/// band plan and the triage margin lose precision, so a smaller threshold found fewer
/// pairs than a larger one; it is refused rather than mis-computed. At 0.01 the LSH
/// pipeline with exact verification and the exact join agree with brute force (tested).
pub const MIN_THRESHOLD: f64 = 0.01;

/// A validated configuration. Build one with [`Config::builder`].
#[derive(Clone, Debug)]
pub struct Config {
    shingler: Shingler,
    num_perm: usize,
    seed: u64,
    threshold: f64,
    plan: BandPlan,
    verification: Verification,
    keep: KeepPolicy,
    sketch: SketchKind,
    neighbours: bool,
    allow_truncated: bool,
}

impl Config {
    /// A builder with the defaults: `char:5`, NFKC-normalized, K = 128, seed 1, t = 0.8, exact
    /// verification, keep the first, one-permutation sketch.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder::default()
    }

    /// The shingler.
    pub fn shingler(&self) -> &Shingler {
        &self.shingler
    }
    /// Signature length K.
    pub fn num_perm(&self) -> usize {
        self.num_perm
    }
    /// Seed of the sketch's permutations.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Similarity threshold t.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
    /// The banding plan.
    pub fn plan(&self) -> BandPlan {
        self.plan
    }
    /// How candidates are verified.
    pub fn verification(&self) -> Verification {
        self.verification
    }
    /// Which document a cluster keeps.
    pub fn keep(&self) -> KeepPolicy {
        self.keep
    }
    /// Which sketch signatures are made with.
    pub fn neighbours(&self) -> bool {
        self.neighbours
    }

    /// Whether a pair reported by estimate because a document was truncated may remove a
    /// document from a cluster.
    pub fn allow_truncated(&self) -> bool {
        self.allow_truncated
    }

    /// The sketch family kind.
    pub fn sketch(&self) -> SketchKind {
        self.sketch
    }
}

/// Builds a [`Config`]; every setting has a sane default.
#[derive(Clone, Debug)]
pub struct ConfigBuilder {
    shingle: ShingleKind,
    normalization: Normalization,
    num_perm: usize,
    seed: u64,
    threshold: f64,
    bands: Option<usize>,
    rows: Option<usize>,
    verification: Verification,
    keep: KeepPolicy,
    sketch: SketchKind,
    max_shingles: usize,
    neighbours: bool,
    allow_truncated: bool,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        ConfigBuilder {
            shingle: ShingleKind::Char(5),
            normalization: Normalization::default(),
            num_perm: 128,
            seed: 1,
            threshold: 0.8,
            bands: None,
            rows: None,
            verification: Verification::Exact,
            keep: KeepPolicy::First,
            sketch: SketchKind::OnePermutation,
            max_shingles: crate::shingle::DEFAULT_MAX_SHINGLES,
            neighbours: true,
            allow_truncated: false,
        }
    }
}

impl ConfigBuilder {
    /// Shingle kind and size (default `char:5`).
    pub fn shingle(mut self, kind: ShingleKind) -> Self {
        self.shingle = kind;
        self
    }
    /// How text is normalized before shingling (default [`Normalization::Nfkc`]: Unicode
    /// NFKC, lowercase, whitespace collapsed).
    pub fn normalization(mut self, level: Normalization) -> Self {
        self.normalization = level;
        self
    }
    /// Normalization at the default level (`true`) or none (`false`); shorthand for
    /// [`ConfigBuilder::normalization`].
    pub fn normalize(self, on: bool) -> Self {
        self.normalization(if on {
            Normalization::default()
        } else {
            Normalization::None
        })
    }
    /// Signature length K (default 128).
    pub fn num_perm(mut self, k: usize) -> Self {
        self.num_perm = k;
        self
    }
    /// Seed of the sketch (default 1).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// Similarity threshold in [`MIN_THRESHOLD`]..=1 (default 0.8).
    pub fn threshold(mut self, t: f64) -> Self {
        self.threshold = t;
        self
    }
    /// Explicit bands (give rows too); default: chosen from the threshold.
    pub fn bands(mut self, bands: Option<usize>) -> Self {
        self.bands = bands;
        self
    }
    /// Explicit rows per band (give bands too).
    pub fn rows(mut self, rows: Option<usize>) -> Self {
        self.rows = rows;
        self
    }
    /// Verification of candidates (default exact).
    pub fn verification(mut self, v: Verification) -> Self {
        self.verification = v;
        self
    }
    /// Keep policy of clusters (default first).
    pub fn keep(mut self, keep: KeepPolicy) -> Self {
        self.keep = keep;
        self
    }
    /// Cap on shingle positions compared exactly per document, in
    /// 1..=[`MAX_MAX_SHINGLES`](crate::shingle::MAX_MAX_SHINGLES) (default
    /// [`DEFAULT_MAX_SHINGLES`](crate::shingle::DEFAULT_MAX_SHINGLES)).
    pub fn max_shingles(mut self, n: usize) -> Self {
        self.max_shingles = n;
        self
    }
    /// Sketch (default: one-permutation hashing, classic for small documents).
    pub fn sketch(mut self, sketch: SketchKind) -> Self {
        self.sketch = sketch;
        self
    }

    /// Whether pairs mode also looks beyond the buckets (default on): every pair with one
    /// of the largest groups of identical documents, found exactly, and two documents that
    /// are both verified near-duplicates of a third. Every pair it adds is verified like
    /// any candidate; it lifts recall above the S-curve where near-duplicates cluster.
    pub fn neighbours(mut self, on: bool) -> Self {
        self.neighbours = on;
        self
    }

    /// Whether clusters may remove a document on a pair with a truncated document (default
    /// off). Such a pair has no exact Jaccard: it is reported with the estimate of the whole
    /// documents' sketches and `truncated: true`, and by default keeps both documents.
    pub fn allow_truncated(mut self, on: bool) -> Self {
        self.allow_truncated = on;
        self
    }

    /// Validates the settings.
    pub fn build(self) -> Result<Config> {
        if !(MIN_THRESHOLD..=1.0).contains(&self.threshold) {
            return Err(Error::InvalidThreshold(self.threshold));
        }
        let k = self.shingle.size();
        if !(1..=crate::shingle::MAX_SHINGLE_SIZE).contains(&k) {
            return Err(Error::InvalidShingleSize(k));
        }
        if !(1..=crate::shingle::MAX_MAX_SHINGLES).contains(&self.max_shingles) {
            return Err(Error::InvalidMaxShingles(self.max_shingles));
        }
        if self.num_perm == 0 || self.num_perm > crate::sketch::MAX_NUM_PERM {
            return Err(Error::InvalidNumPerm(self.num_perm));
        }
        let plan = match (self.bands, self.rows) {
            (Some(b), Some(r)) => BandPlan::new(b, r, self.num_perm)?,
            (None, None) => BandPlan::for_threshold(self.threshold, self.num_perm)?,
            _ => return Err(Error::IncompleteBands),
        };
        Ok(Config {
            shingler: Shingler::new(self.shingle)
                .normalization(self.normalization)
                .max_shingles(self.max_shingles),
            num_perm: self.num_perm,
            seed: self.seed,
            threshold: self.threshold,
            plan,
            verification: self.verification,
            keep: self.keep,
            sketch: self.sketch,
            neighbours: self.neighbours,
            allow_truncated: self.allow_truncated,
        })
    }
}

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

/// Receives progress of long stages; the CLI draws bars with it. All methods default to
/// doing nothing.
pub trait Progress: Sync {
    /// A stage starts with `total` units of work (0 if unknown).
    fn start(&self, _stage: Stage, _total: u64) {}
    /// `n` more units of the current stage are done.
    fn advance(&self, _n: u64) {}
    /// The current stage is over.
    fn finish(&self) {}
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

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
    /// Distinct candidate pairs (pairs mode) or candidate links (clusters) checked.
    pub candidates: u64,
    /// Candidates that passed verification.
    pub verified: u64,
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
    /// Similarities of verified and rejected candidates, when the pipeline records them
    /// ([`Pipeline::record_similarities`]); for the report's histograms.
    pub similarities: Option<Similarities>,
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
    fn time<T>(&mut self, stage: Stage, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        self.timings.push((stage, start.elapsed()));
        out
    }
}

/// The pipeline over one configuration.
///
/// ```
/// use neardup::{Config, Pipeline};
/// let texts = [
///     "the quick brown fox jumps over the lazy dog",
///     "The quick brown fox jumps over the lazy dog!",
///     "an entirely different sentence about cats",
/// ];
/// let pipeline = Pipeline::new(Config::builder().threshold(0.7).build().unwrap()).unwrap();
/// let corpus = pipeline.prepare(&texts);
/// let (pairs, stats) = pipeline.pairs(&corpus);
/// assert_eq!(pairs.len(), 1);
/// assert_eq!((pairs[0].a, pairs[0].b), (0, 1));
/// assert!(pairs[0].similarity.jaccard.unwrap() >= 0.7);
/// assert_eq!(stats.documents, 3);
/// ```
pub struct Pipeline {
    config: Config,
    families: Vec<Family>,
    progress: Box<dyn Progress>,
    record_similarities: bool,
}

/// A prepared corpus and the counters of preparing it.
pub struct Prepared {
    /// Shingle sets and signatures.
    pub corpus: Corpus,
    /// Counters so far.
    pub stats: Stats,
    /// The caller's keep order, if set: it replaces the keep policy.
    keep_ranks: Option<Vec<u32>>,
}

impl Prepared {
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
}

impl Pipeline {
    /// A pipeline for a configuration.
    pub fn new(config: Config) -> Result<Self> {
        let families = families(
            config.sketch,
            config.num_perm,
            config.seed,
            config.threshold,
        )?;
        Ok(Pipeline {
            config,
            families,
            progress: Box::new(NoProgress),
            record_similarities: false,
        })
    }

    /// Records the similarity of every candidate in [`Stats::similarities`] (off by
    /// default: it holds one number per candidate).
    pub fn record_similarities(mut self, on: bool) -> Self {
        self.record_similarities = on;
        self
    }

    /// Reports progress to `progress`.
    pub fn with_progress(mut self, progress: Box<dyn Progress>) -> Self {
        self.progress = progress;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Shingles and sketches the texts.
    pub fn prepare<T: AsRef<str> + Sync>(&self, texts: &[T]) -> Prepared {
        let mut prepared = self.shingle(texts);
        self.sketch(&mut prepared);
        prepared
    }

    /// Shingles the texts only (all the exact join needs).
    pub fn shingle<T: AsRef<str> + Sync>(&self, texts: &[T]) -> Prepared {
        let mut preparer = self.preparer();
        preparer.add(texts);
        preparer.finish()
    }

    /// Shingles texts batch by batch as they arrive (see [`Preparer`]).
    pub fn preparer(&self) -> Preparer {
        Preparer {
            builder: CorpusBuilder::new(self.config.shingler),
            elapsed: Duration::ZERO,
        }
    }

    /// Adds signatures to a shingled corpus.
    pub fn sketch(&self, prepared: &mut Prepared) {
        self.progress.start(Stage::Sketch, 0);
        let Prepared { corpus, stats, .. } = prepared;
        // Exact verification needs no signatures, only their band keys.
        let keep = self.config.verification != Verification::Exact;
        stats.time(Stage::Sketch, || {
            corpus.sketch(&self.families, self.config.plan, keep)
        });
        self.progress.finish();
    }

    /// Checks one pair under the configured verification.
    pub fn check(&self, corpus: &Corpus, a: u32, b: u32) -> Option<Similarity> {
        self.score(corpus, a, b).0
    }

    /// The verdict on a pair and the similarity it was judged on (Jaccard under exact
    /// verification, else the estimate; 1 under no verification without signatures).
    fn score(&self, corpus: &Corpus, a: u32, b: u32) -> (Option<Similarity>, f64) {
        let verdict = self.verdict(corpus, a, b);
        let value = match &verdict {
            Ok(s) | Err(s) => s.jaccard.or(s.estimate).unwrap_or(1.0),
        };
        (verdict.ok(), value)
    }

    fn verdict(
        &self,
        corpus: &Corpus,
        a: u32,
        b: u32,
    ) -> std::result::Result<Similarity, Similarity> {
        let t = self.config.threshold;
        let pass = |ok: bool, s: Similarity| if ok { Ok(s) } else { Err(s) };
        if let Some(e) = corpus.truncated_estimate(a, b) {
            return truncated_verdict(e, t);
        }
        let est = corpus.signature_pair(a, b).map(|(x, y)| estimate(x, y));
        match self.config.verification {
            Verification::Exact => {
                let j = jaccard(corpus.set(a), corpus.set(b));
                let s = Similarity {
                    jaccard: Some(j),
                    estimate: est,
                    truncated: false,
                };
                pass(meets_threshold(j, t), s)
            }
            Verification::Estimate => {
                let s = Similarity {
                    jaccard: None,
                    estimate: est,
                    truncated: false,
                };
                pass(est.is_some_and(|e| meets_threshold(e, t)), s)
            }
            Verification::Triage => {
                let margin = triage_margin(t, self.config.num_perm);
                match est {
                    Some(e) if e >= t + margin => Ok(Similarity {
                        jaccard: None,
                        estimate: est,
                        truncated: false,
                    }),
                    Some(e) if e <= t - margin => Err(Similarity {
                        jaccard: None,
                        estimate: est,
                        truncated: false,
                    }),
                    _ => {
                        let j = jaccard(corpus.set(a), corpus.set(b));
                        let s = Similarity {
                            jaccard: Some(j),
                            estimate: est,
                            truncated: false,
                        };
                        pass(meets_threshold(j, t), s)
                    }
                }
            }
            Verification::None => Ok(Similarity {
                jaccard: None,
                estimate: est,
                truncated: false,
            }),
        }
    }

    /// All similar pairs found by LSH, sorted by `(a, b)`. Needs a sketched corpus.
    ///
    /// Documents with identical shingle sets are paired with each other directly and
    /// share their representative's pairs. [`Pipeline::pair_set`] holds them compactly;
    /// [`Pipeline::for_each_pair_chunk`] streams them without holding them.
    pub fn pairs(&self, prepared: &Prepared) -> (Vec<Pair>, Stats) {
        let (set, stats) = self.pair_set(prepared);
        (set.to_vec(), stats)
    }

    /// All similar pairs found by LSH, held compactly. Needs a sketched corpus. Holds the
    /// pairs between representatives; [`Pipeline::for_each_pair_chunk`] streams them
    /// instead.
    pub fn pair_set(&self, prepared: &Prepared) -> (PairSet, Stats) {
        let mut stats = prepared.stats.clone();
        let mut rep_pairs = Vec::new();
        let walked = self.walk(prepared, &mut stats, |reps| {
            rep_pairs.extend_from_slice(reps);
            Ok::<(), std::convert::Infallible>(())
        });
        walked.unwrap_or_else(|never| match never {});
        let corpus = &prepared.corpus;
        let start = Instant::now();
        let set = PairSet::new(corpus, rep_pairs, self.identical_similarity(corpus));
        if let Some((_, t)) = stats.timings.iter_mut().find(|(s, _)| *s == Stage::Verify) {
            *t += start.elapsed();
        }
        (set, stats)
    }

    /// How identical documents are reported: Jaccard 1 (exactly known) under exact
    /// verification, estimate 1 when signatures exist.
    fn identical_similarity(&self, corpus: &Corpus) -> Similarity {
        Similarity {
            jaccard: (self.config.verification == Verification::Exact).then_some(1.0),
            estimate: corpus.has_signatures().then_some(1.0),
            truncated: false,
        }
    }

    /// Clusters found by LSH, sorted by kept document. Needs a sketched corpus.
    ///
    /// One [`Duplicate`](crate::Duplicate) per removed document; [`Pipeline::cluster_set`]
    /// gives the same clusters held compactly.
    pub fn clusters(&self, prepared: &Prepared) -> (Vec<Cluster>, Stats) {
        let (clusters, stats) = self.cluster_set(prepared);
        (clusters.to_vec(), stats)
    }

    /// Clusters found by LSH, held compactly (a few bytes per document).
    pub fn cluster_set(&self, prepared: &Prepared) -> (Clusters, Stats) {
        let mut stats = prepared.stats.clone();
        let index = band_index(self.config.plan, &prepared.corpus, &mut stats);
        let corpus = &prepared.corpus;
        let links = index.links(|a, b, band| index.family_of(band) == corpus.shared_family(a, b));
        drop(index);
        self.progress.start(Stage::Verify, 0);
        let scored: Vec<(bool, f64)> = stats.time(Stage::Verify, || {
            links
                .par_iter()
                .map(|&(a, b)| {
                    let (verdict, value) = self.score(corpus, a, b);
                    (verdict.is_some(), value)
                })
                .collect()
        });
        self.progress.finish();
        let mut verified: Vec<(u32, u32)> = links
            .iter()
            .zip(&scored)
            .filter(|(_, (ok, _))| *ok)
            .map(|(&l, _)| l)
            .collect();
        if self.record_similarities {
            let mut recorded = Similarities::default();
            for &(ok, value) in &scored {
                recorded.add(value, ok);
            }
            stats.similarities = Some(recorded);
        }
        stats.candidates = links.len() as u64;
        stats.verified = verified.len() as u64;
        if self.config.neighbours {
            // Shared neighbours end up in one cluster anyway; a near-copy of a large group
            // of copies that LSH missed would stay alone.
            verified.sort_unstable();
            let large: Vec<(u32, u32)> =
                crate::heavy::pairs_near_large_groups(corpus, self.config.threshold)
                    .into_par_iter()
                    .filter(|l| verified.binary_search(l).is_err())
                    .filter(|&(a, b)| self.check(corpus, a, b).is_some())
                    .collect();
            stats.large_group_verified = large.len() as u64;
            verified.extend(large);
        }
        let ranks = prepared.keep_ranks.as_deref();
        let clusters = self.cluster_links(corpus, ranks, &verified, &mut stats, |kept, doc| {
            self.check(corpus, kept.min(doc), kept.max(doc))
        });
        (clusters, stats)
    }

    fn cluster_links(
        &self,
        corpus: &Corpus,
        ranks: Option<&[u32]>,
        links: &[(u32, u32)],
        stats: &mut Stats,
        similar: impl Fn(u32, u32) -> Option<Similarity> + Sync,
    ) -> Clusters {
        self.progress.start(Stage::Cluster, 0);
        let keep = self.config.keep;
        // A pair known only by estimate (a truncated document) removes nothing unless allowed.
        let allow = self.config.allow_truncated;
        let similar = |kept: u32, doc: u32| similar(kept, doc).filter(|s| allow || !s.truncated);
        // Identical documents are clustered as groups: a copy costs no link.
        let (set_of, sets) = (corpus.set_index(), corpus.distinct_sets());
        let out = stats.time(Stage::Cluster, || match ranks {
            Some(ranks) => cluster_sets(
                set_of,
                sets,
                links,
                |d| (i128::from(ranks[d as usize]), d),
                similar,
            ),
            None => cluster_sets(
                set_of,
                sets,
                links,
                |d| keep.rank(d, corpus.text_len(d)),
                similar,
            ),
        });
        self.progress.finish();
        out
    }

    /// Pairs of representatives with Jaccard ≥ t, by the exact join.
    fn exact_rep_pairs(&self, corpus: &Corpus, stats: &mut Stats) -> Vec<Pair> {
        self.progress.start(Stage::ExactJoin, 0);
        let (found, join) = stats.time(Stage::ExactJoin, || {
            // Copies take no part (an empty set never pairs): their representative does.
            let sets: Vec<&[u64]> = (0..corpus.len() as u32)
                .map(|d| {
                    if corpus.representative(d) == d {
                        corpus.set(d)
                    } else {
                        &[]
                    }
                })
                .collect();
            ExactJoin::new(self.config.threshold).join(&sets)
        });
        self.progress.finish();
        stats.candidates = join.candidates;
        stats.verified = found.len() as u64;
        if self.record_similarities {
            let mut recorded = Similarities::default();
            for p in &found {
                recorded.add(p.jaccard, true);
            }
            stats.similarities = Some(recorded);
        }
        let t = self.config.threshold;
        found
            .into_iter()
            .filter_map(|p| {
                let similarity = match corpus.truncated_estimate(p.a, p.b) {
                    // A truncated document's prefix is not the document: judge the estimate.
                    Some(e) => truncated_verdict(e, t).ok()?,
                    None => Similarity {
                        jaccard: Some(p.jaccard),
                        estimate: corpus.signature_pair(p.a, p.b).map(|(x, y)| estimate(x, y)),
                        truncated: false,
                    },
                };
                Some(Pair {
                    a: p.a,
                    b: p.b,
                    similarity,
                })
            })
            .collect()
    }

    /// All pairs with Jaccard ≥ t, found by the exact join (no LSH), sorted by `(a, b)`.
    ///
    /// The corpus need only be shingled; estimates are given if it was also sketched.
    pub fn exact_pairs(&self, prepared: &Prepared) -> (Vec<Pair>, Stats) {
        let (set, stats) = self.exact_pair_set(prepared);
        (set.to_vec(), stats)
    }

    /// The exact join's pairs, held compactly.
    pub fn exact_pair_set(&self, prepared: &Prepared) -> (PairSet, Stats) {
        let mut stats = prepared.stats.clone();
        let corpus = &prepared.corpus;
        let rep_pairs = self.exact_rep_pairs(corpus, &mut stats);
        stats.truncated_pairs = rep_pairs.iter().filter(|p| p.similarity.truncated).count() as u64;
        let identical = self.exact_identical_similarity(corpus);
        (PairSet::new(corpus, rep_pairs, identical), stats)
    }

    /// How the exact join reports identical documents: Jaccard 1, estimate 1 if sketched.
    fn exact_identical_similarity(&self, corpus: &Corpus) -> Similarity {
        Similarity {
            jaccard: Some(1.0),
            estimate: corpus.has_signatures().then_some(1.0),
            truncated: false,
        }
    }

    /// Clusters from the exact join's pairs, verified exactly against each kept document.
    pub fn exact_clusters(&self, prepared: &Prepared) -> (Vec<Cluster>, Stats) {
        let (clusters, stats) = self.exact_cluster_set(prepared);
        (clusters.to_vec(), stats)
    }

    /// The exact join's clusters, held compactly.
    pub fn exact_cluster_set(&self, prepared: &Prepared) -> (Clusters, Stats) {
        let mut stats = prepared.stats.clone();
        let corpus = &prepared.corpus;
        let links: Vec<(u32, u32)> = self
            .exact_rep_pairs(corpus, &mut stats)
            .iter()
            .map(|p| (p.a, p.b))
            .collect();
        let t = self.config.threshold;
        let ranks = prepared.keep_ranks.as_deref();
        let clusters = self.cluster_links(corpus, ranks, &links, &mut stats, |kept, doc| {
            if let Some(e) = corpus.truncated_estimate(kept, doc) {
                return truncated_verdict(e, t).ok();
            }
            let j = jaccard(corpus.set(kept), corpus.set(doc));
            meets_threshold(j, t).then_some(Similarity {
                jaccard: Some(j),
                estimate: None,
                truncated: false,
            })
        });
        (clusters, stats)
    }
}

/// Shingles a corpus batch by batch, so that reading the next batch can overlap
/// shingling this one. [`Preparer::finish`] groups identical sets.
///
/// ```
/// use neardup::{Config, Pipeline};
/// let pipeline = Pipeline::new(Config::builder().threshold(0.7).build().unwrap()).unwrap();
/// let mut preparer = pipeline.preparer();
/// preparer.add(&["the quick brown fox jumps over the lazy dog"]);
/// preparer.add(&["The quick brown fox jumps over the lazy dog!"]);
/// let mut prepared = preparer.finish();
/// pipeline.sketch(&mut prepared);
/// assert_eq!(pipeline.pairs(&prepared).0.len(), 1);
/// ```
pub struct Preparer {
    builder: CorpusBuilder,
    /// Time spent shingling, not waiting for batches.
    elapsed: Duration,
}

impl Preparer {
    /// Shingles a batch of texts in parallel and appends them in order.
    pub fn add<T: AsRef<str> + Sync>(&mut self, texts: &[T]) {
        let start = Instant::now();
        self.builder.add(texts);
        self.elapsed += start.elapsed();
    }

    /// The shingled corpus, identical sets grouped, with its counters.
    pub fn finish(self) -> Prepared {
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
            .filter(|&d| corpus.skip_reason(d).is_some())
            .count() as u64;
        stats.identical = corpus.identical_copies();
        stats.truncated = corpus.truncated();
        stats.short_documents = corpus.short_documents();
        Prepared {
            corpus,
            stats,
            keep_ranks: None,
        }
    }
}

/// Band keys of every sketched document, grouped by sorting; records bucket counters.
///
/// Each sketch family has its own bands (family f owns bands f·b .. (f+1)·b), so
/// signatures of different sketches are never compared.
fn band_index(plan: BandPlan, corpus: &Corpus, stats: &mut Stats) -> BandIndex {
    let (index, (buckets, largest)) = stats.time(Stage::Group, || {
        let b = plan.bands();
        let families = corpus.num_families().max(1);
        let width = b * families;
        // Rows of keys for the documents that take part only: copies have none.
        let members = corpus.members();
        let mut keys = vec![0u64; members.len() * width];
        keys.par_chunks_mut(width)
            .zip(members.par_iter())
            .for_each(|(out, &d)| {
                for (f, out) in out.chunks_mut(b).enumerate() {
                    match corpus.band_keys_in(f, d) {
                        Some(keys) => out.copy_from_slice(keys),
                        None => out.fill(absent_key(d)),
                    }
                }
            });
        let per_family: Vec<Vec<u32>> = (0..families)
            .map(|f| {
                members
                    .iter()
                    .copied()
                    .filter(|&d| corpus.in_family(f, d))
                    .collect()
            })
            .collect();
        let per_band: Vec<&[u32]> = (0..width)
            .map(|band| per_family[band / b].as_slice())
            .collect();
        let index = BandIndex::build(width, b, keys, &members, &per_band);
        let counts = index.bucket_stats();
        (index, counts)
    });
    stats.buckets = buckets;
    stats.largest_bucket = largest as u64;
    index
}

/// The verdict on a pair with a truncated document: the estimate of the whole documents'
/// sketches against the threshold, with no exact Jaccard.
fn truncated_verdict(e: f64, t: f64) -> std::result::Result<Similarity, Similarity> {
    let s = Similarity {
        jaccard: None,
        estimate: Some(e),
        truncated: true,
    };
    if meets_threshold(e, t) {
        Ok(s)
    } else {
        Err(s)
    }
}
