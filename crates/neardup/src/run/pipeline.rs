//! The pipeline over one configuration: the stages in order, in parallel: shingle →
//! sketch → band → group → verify → cluster. The engines' own rooms hold their `impl
//! Pipeline` blocks: `candidates::bucket_walk`, `candidates::neighbours`,
//! `candidates::fingerprints`, `candidates::containment_search`, `spill::spilled`;
//! `verify::verifier` judges pairs, `run::stream` hands them on as they are verified, and
//! `run` chooses the engine once (`RunPlan`) and runs it (`Pipeline::run`).

use std::time::Instant;

use crate::candidates::exact_join::ExactJoin;
use crate::cluster::clusters::{cluster_sets, Cluster, Clusters, Similarity};
use crate::corpus::sets::{sketch_one, whole_estimate, whole_signature_of, Corpus, Kept};
use crate::corpus::stages::{ShingleBatches, Shingled, Sketched};
use crate::error::Result;
use crate::run::config::Config;
use crate::run::observer::Observer;
use crate::run::pairs::{Pair, PairSet};
use crate::run::stats::{Stage, Stats};
use crate::sketch::document::{DocSet, DocSketch, FamilySketch};
use crate::sketch::family::{families, Family};
use crate::text::ids::SketchInput;
use crate::verify::jaccard::Verification;

/// Mixed into the seed for the prefilter's hash, so its bins are independent of the
/// sketches'.
const PREFILTER_SEED: u64 = 0x7072_6566_696c_7465;

use crate::candidates::bucket_walk;
use crate::candidates::source::{gather, verify_from, Halt, JoinScores, Listed};
use crate::verify::verifier::{Policy, Verdict, Verifier};
use std::convert::Infallible;

/// Candidate pairs verified per chunk: bounds memory for huge buckets.
pub(crate) const PAIR_CHUNK: usize = 1 << 20;

/// The pipeline over one configuration. It holds no state of its runs (progress goes to
/// the [`Observer`] given to each call), so one pipeline can serve many threads.
///
/// ```
/// use neardup::{Config, Pipeline, Quiet};
/// let texts = [
///     "the quick brown fox jumps over the lazy dog",
///     "The quick brown fox jumps over the lazy dog!",
///     "an entirely different sentence about cats",
/// ];
/// let pipeline = Pipeline::new(Config::builder().threshold(0.7).build()?)?;
/// let corpus = pipeline.sketch_texts(&texts)?;
/// let (pairs, stats) = pipeline.pairs(&corpus, &mut Quiet);
/// assert_eq!(pairs.len(), 1);
/// assert_eq!((pairs[0].a, pairs[0].b), (0, 1));
/// assert!(pairs[0].similarity.jaccard.unwrap() >= 0.7);
/// assert_eq!(stats.documents, 3);
/// # Ok::<(), neardup::Error>(())
/// ```
pub struct Pipeline {
    pub(crate) config: Config,
    pub(crate) families: Vec<Family>,
}

impl Pipeline {
    /// A pipeline for a configuration.
    pub fn new(config: Config) -> Result<Self> {
        let families = families(
            config.sketch(),
            config.num_perm(),
            config.seed(),
            config.tested_threshold(),
        )?;
        Ok(Pipeline { config, families })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Shingles and sketches the texts: what LSH needs.
    pub fn sketch_texts<T: AsRef<str> + Sync>(&self, texts: &[T]) -> Result<Sketched> {
        Ok(self.sketch(self.shingle(texts)?, &mut crate::Quiet))
    }

    /// Shingles the texts only: all the exact join needs. More than
    /// [`MAX_DOCUMENTS`](crate::corpus::MAX_DOCUMENTS) texts are refused.
    pub fn shingle<T: AsRef<str> + Sync>(&self, texts: &[T]) -> Result<Shingled> {
        let mut batches = self.shingle_batches();
        batches.add(texts)?;
        Ok(batches.finish())
    }

    /// Shingles texts batch by batch as they arrive (see [`ShingleBatches`]).
    pub fn shingle_batches(&self) -> ShingleBatches {
        let simhash = (!self.config.sketch().is_minhash()).then_some(self.config.seed());
        let hashes = self.config.sketch_input() != SketchInput::Ids;
        ShingleBatches::new(*self.config.shingler(), simhash, hashes)
    }

    /// Sketches a shingled corpus and keeps each signature's band keys: what LSH needs.
    pub fn sketch(&self, shingled: Shingled, observer: &mut dyn Observer) -> Sketched {
        let mut shingled = shingled;
        observer.start(Stage::Sketch, 0);
        let Shingled { corpus, stats, .. } = &mut shingled;
        // SimHash fingerprints were taken while shingling: they need the shingles' counts.
        if self.config.sketch().is_minhash() {
            stats.time(Stage::Sketch, || self.sketch_corpus(corpus));
        }
        observer.finish();
        Sketched(shingled)
    }

    /// Sketches every set of `corpus` for this configuration. Exact verification needs no
    /// signatures, only their band keys and its prefilter's sketches.
    pub(crate) fn sketch_corpus(&self, corpus: &mut Corpus) {
        let v = self.config.verification();
        let keep = Kept {
            signatures: v != Verification::Exact,
            prefilter: matches!(v, Verification::Exact | Verification::Triage),
        };
        let key = crate::rng::mix64(self.config.seed() ^ PREFILTER_SEED);
        corpus.sketch(&self.families, self.config.plan(), keep, key);
    }

    /// One text shingled on its own, exactly as a corpus shingles it.
    pub fn shingle_doc(&self, text: &str) -> DocSet {
        let shingler = self.config.shingler();
        let mut set = Vec::new();
        let info = shingler.shingle_info(text, &mut set);
        let whole = info
            .truncated
            .then(|| whole_signature_of(shingler, text, self.config.sketch_input()));
        DocSet::new(set, whole, info.short)
    }

    /// One document's sketch: in every family its size belongs to, its band keys (equal
    /// to those a corpus gives the same set) and its signature.
    pub fn sketch_doc(&self, doc: &DocSet) -> DocSketch {
        self.sketch_parts(doc, true)
    }

    /// One document's band keys in every family its size belongs to, without its
    /// signatures (for a caller that verifies exactly and only needs the buckets, such as
    /// an index): [`DocSketch::signature`] is then empty and [`DocSketch::estimate`] `None`.
    pub fn sketch_doc_keys(&self, doc: &DocSet) -> DocSketch {
        self.sketch_parts(doc, false)
    }

    fn sketch_parts(&self, doc: &DocSet, signatures: bool) -> DocSketch {
        let plan = self.config.plan();
        let input = self.config.sketch_input();
        let values = input.values(doc.set());
        let size = input.size(doc.set());
        let parts = self
            .families
            .iter()
            .enumerate()
            .filter(|(_, family)| size > 0 && family.takes(size))
            .map(|(index, family)| {
                let k = family.sketch.num_perm();
                let mut sig = vec![0u64; k];
                let mut signature = vec![0u32; if signatures { k } else { 0 }];
                let mut band_keys = vec![0u64; plan.bands()];
                sketch_one(
                    family,
                    plan,
                    &values,
                    &mut sig,
                    &mut band_keys,
                    signatures.then_some(&mut signature[..]),
                );
                FamilySketch::new(index, band_keys, signature)
            })
            .collect();
        DocSketch::new(parts)
    }

    /// The verdict on two documents under the configured verification, the same as a
    /// corpus run gives them. Estimates need both sketches; without them, estimate
    /// verification rejects and triage computes the exact Jaccard.
    pub fn verify_docs(
        &self,
        a: &DocSet,
        b: &DocSet,
        sketches: Option<(&DocSketch, &DocSketch)>,
    ) -> Verdict {
        let estimate = sketches.and_then(|(x, y)| x.estimate(y));
        // Exact verification keeps no signatures in a corpus: no estimate either.
        let estimate = estimate.filter(|_| self.config.verification() != Verification::Exact);
        self.judge(
            (a.set(), a.whole_signature()),
            (b.set(), b.whole_signature()),
            estimate,
        )
    }

    /// The verdict on two shingle sets, each with its whole-document sketch if it was
    /// truncated ([`DocSet::whole_signature`]): what [`Pipeline::verify_docs`] gives the
    /// two documents without their sketches. For callers that keep the sets themselves
    /// (an index's memory-mapped segments) and would rather not copy them into a
    /// [`DocSet`].
    pub fn verify_sets(&self, a: (&[u64], Option<&[u64]>), b: (&[u64], Option<&[u64]>)) -> Verdict {
        self.judge(a, b, None)
    }

    fn judge(
        &self,
        a: (&[u64], Option<&[u64]>),
        b: (&[u64], Option<&[u64]>),
        estimate: Option<f64>,
    ) -> Verdict {
        let input = self.config.sketch_input();
        let whole = whole_estimate(a, b, input);
        // Compared as a corpus compares them: by their ids, unless the sketches are of
        // the hashes.
        let exact = |_| Some(input.jaccard(a.0, b.0));
        Policy::new(&self.config).judge(exact, estimate, whole)
    }

    /// The number of sketch families: a document's [`DocSketch::families`] are numbered
    /// below it.
    pub fn families(&self) -> usize {
        self.families.len()
    }

    /// All similar pairs found by LSH, sorted by `(a, b)`.
    ///
    /// Documents with identical shingle sets are paired with each other directly and
    /// share their representative's pairs. [`Pipeline::pair_set`] holds them compactly;
    /// [`Pipeline::for_each_pair_chunk`] streams them without holding them.
    pub fn pairs(&self, sketched: &Sketched, observer: &mut dyn Observer) -> (Vec<Pair>, Stats) {
        let (set, stats) = self.pair_set(sketched, observer);
        (set.to_vec(), stats)
    }

    /// All similar pairs found by LSH, held compactly: the pairs between
    /// representatives, and the groups of copies.
    pub fn pair_set(&self, sketched: &Sketched, observer: &mut dyn Observer) -> (PairSet, Stats) {
        let mut stats = sketched.stats.clone();
        let mut rep_pairs = Vec::new();
        let walked = self.walk(sketched, &mut stats, observer, |reps| {
            rep_pairs.extend_from_slice(reps);
            Ok::<(), std::convert::Infallible>(())
        });
        walked.unwrap_or_else(|never| match never {});
        let corpus = &sketched.corpus;
        let start = Instant::now();
        let set = PairSet::new(corpus, rep_pairs, self.identical_similarity(corpus));
        stats.add_time(Stage::Verify, start.elapsed());
        (set, stats)
    }

    /// How identical documents are reported: Jaccard 1 (exactly known) under exact
    /// verification, estimate 1 when signatures exist.
    pub(crate) fn identical_similarity(&self, corpus: &Corpus) -> Similarity {
        Similarity {
            jaccard: (self.config.verification() == Verification::Exact).then_some(1.0),
            estimate: corpus.has_signatures().then_some(1.0),
            truncated: false,
            hamming: (!self.config.sketch().is_minhash()).then_some(0),
        }
    }

    /// Clusters found by LSH, sorted by kept document.
    ///
    /// One [`Duplicate`](crate::Duplicate) per removed document; [`Pipeline::cluster_set`]
    /// gives the same clusters held compactly.
    pub fn clusters(
        &self,
        sketched: &Sketched,
        observer: &mut dyn Observer,
    ) -> (Vec<Cluster>, Stats) {
        let (clusters, stats) = self.cluster_set(sketched, observer);
        (clusters.to_vec(), stats)
    }

    /// Clusters found by LSH, held compactly (a few bytes per document).
    pub fn cluster_set(
        &self,
        sketched: &Sketched,
        observer: &mut dyn Observer,
    ) -> (Clusters, Stats) {
        let mut stats = sketched.stats.clone();
        let corpus = &sketched.corpus;
        let links = if self.config.sketch().is_minhash() {
            let index = bucket_walk::band_index(self.config.plan(), corpus, &mut stats);
            index.links(|a, b, band| Some(index.family_of(band)) == corpus.shared_family(a, b))
        } else {
            self.simhash_links(corpus, &mut stats)
        };
        let verifier = Verifier::new(corpus, Policy::new(&self.config));
        observer.start(Stage::Verify, 0);
        let mut verified: Vec<(u32, u32)> = Vec::new();
        let judged = stats.time(Stage::Verify, || {
            verify_from(&mut Listed(&links), &verifier, observer, |passed| {
                verified.extend(passed.iter().map(|p| (p.a, p.b)));
                Ok::<(), Infallible>(())
            })
        });
        let tally = judged
            .map_err(Halt::into_stopped)
            .unwrap_or_else(|never| match never {})
            .tally;
        observer.finish();
        stats.candidates = tally.candidates;
        stats.verified = tally.verified;
        stats.prefiltered = tally.prefiltered;
        stats.merged = tally.merged;
        if self.config.neighbours() && self.config.sketch().is_minhash() {
            // Shared neighbours end up in one cluster anyway; a near-copy of a large group
            // of copies that LSH missed would stay alone.
            use rayon::prelude::*;
            // Verification beyond the buckets: timed and counted with the verify stage.
            let start = Instant::now();
            verified.sort_unstable();
            let proposed: Vec<(u32, u32)> =
                crate::candidates::large_groups::pairs_near_large_groups(
                    corpus,
                    self.config.tested_threshold(),
                )
                .into_par_iter()
                .filter(|l| verified.binary_search(l).is_err())
                .collect();
            let large: Vec<(u32, u32)> = proposed
                .par_iter()
                .copied()
                .filter(|&(a, b)| verifier.check(a, b).is_some())
                .collect();
            stats.large_group_candidates = proposed.len() as u64;
            stats.large_group_verified = large.len() as u64;
            verified.extend(large);
            stats.spend(Stage::Verify, start.elapsed());
        }
        let ranks = sketched.keep_ranks.as_deref();
        let clusters = self.cluster_links(
            corpus,
            (ranks, sketched.reference),
            &verified,
            &mut stats,
            observer,
            |kept, doc| verifier.check(kept.min(doc), kept.max(doc)),
        );
        (clusters, stats)
    }

    fn cluster_links(
        &self,
        corpus: &Corpus,
        order: (Option<&[u32]>, u32),
        links: &[(u32, u32)],
        stats: &mut Stats,
        observer: &mut dyn Observer,
        similar: impl Fn(u32, u32) -> Option<Similarity> + Sync,
    ) -> Clusters {
        let groups = (corpus.set_index(), corpus.distinct_sets());
        let len = |d: u32| corpus.text_len(d);
        self.cluster_groups(groups, len, order, links, stats, observer, similar)
    }

    /// Clusters of documents in groups of identical sets (`set_of`, `sets`), joined by
    /// `links`, kept in the order of `ranks` or else of the keep policy on `len`, the
    /// first `reference` documents first and never removed.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cluster_groups(
        &self,
        (set_of, sets): (&[u32], usize),
        len: impl Fn(u32) -> usize + Sync,
        (ranks, reference): (Option<&[u32]>, u32),
        links: &[(u32, u32)],
        stats: &mut Stats,
        observer: &mut dyn Observer,
        similar: impl Fn(u32, u32) -> Option<Similarity> + Sync,
    ) -> Clusters {
        observer.start(Stage::Cluster, 0);
        let keep = self.config.keep();
        // A pair known only by estimate (a truncated document) removes nothing unless allowed.
        let allow = self.config.allow_truncated();
        let similar = |kept: u32, doc: u32| similar(kept, doc).filter(|s| allow || !s.truncated);
        // Identical documents are clustered as groups: a copy costs no link.
        let out = stats.time(Stage::Cluster, || match ranks {
            Some(ranks) => cluster_sets(
                set_of,
                sets,
                links,
                reference,
                |d| (i128::from(ranks[d as usize]), d),
                similar,
            ),
            None => cluster_sets(
                set_of,
                sets,
                links,
                reference,
                |d| keep.rank(d, len(d)),
                similar,
            ),
        });
        observer.finish();
        out
    }

    /// Pairs of representatives with Jaccard ≥ t, by the exact join; an error if the
    /// corpus is past what the join's 32-bit numbering holds.
    pub(crate) fn exact_rep_pairs(
        &self,
        corpus: &Corpus,
        stats: &mut Stats,
        observer: &mut dyn Observer,
    ) -> Result<Vec<Pair>> {
        observer.start(Stage::ExactJoin, 0);
        let joined = stats.time(Stage::ExactJoin, || {
            let sets = corpus.representative_sets();
            ExactJoin::new(self.config.tested_threshold()).try_join(&sets)
        });
        observer.finish();
        let (found, join) = joined?;
        stats.candidates = join.candidates;
        stats.merged = join.merged;
        stats.postings = join.postings;
        stats.verified = found.len() as u64;
        let policy = Policy::exact(self.config.tested_threshold());
        let judge = JoinScores {
            corpus,
            verifier: Verifier::new(corpus, policy),
            policy,
        };
        // The join counted its own candidates: the judge's tally is not the run's.
        let (passed, _) = gather(&mut Listed(&found), &judge, observer);
        Ok(passed)
    }

    /// All pairs with Jaccard ≥ t, found by the exact join (no LSH), sorted by `(a, b)`.
    ///
    /// The corpus need only be shingled (a [`Sketched`] one derefs to it); estimates are
    /// given if it was also sketched. The join numbers documents and shingles in 32 bits:
    /// a corpus past that is refused ([`Error::TooManyDocuments`],
    /// [`Error::TooManyShingles`]).
    ///
    /// [`Error::TooManyDocuments`]: crate::Error::TooManyDocuments
    /// [`Error::TooManyShingles`]: crate::Error::TooManyShingles
    pub fn exact_pairs(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
    ) -> Result<(Vec<Pair>, Stats)> {
        let (set, stats) = self.exact_pair_set(shingled, observer)?;
        Ok((set.to_vec(), stats))
    }

    /// The exact join's pairs, held compactly.
    pub fn exact_pair_set(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
    ) -> Result<(PairSet, Stats)> {
        let mut stats = shingled.stats.clone();
        let corpus = &shingled.corpus;
        let rep_pairs = self.exact_rep_pairs(corpus, &mut stats, observer)?;
        stats.truncated_pairs = rep_pairs.iter().filter(|p| p.similarity.truncated).count() as u64;
        let identical = self.exact_identical_similarity(corpus);
        Ok((PairSet::new(corpus, rep_pairs, identical), stats))
    }

    /// How the exact join reports identical documents: Jaccard 1, estimate 1 if sketched.
    pub(crate) fn exact_identical_similarity(&self, corpus: &Corpus) -> Similarity {
        Similarity {
            jaccard: Some(1.0),
            estimate: corpus.has_signatures().then_some(1.0),
            truncated: false,
            hamming: None,
        }
    }

    /// Clusters from the exact join's pairs, verified exactly against each kept document.
    pub fn exact_clusters(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
    ) -> Result<(Vec<Cluster>, Stats)> {
        let (clusters, stats) = self.exact_cluster_set(shingled, observer)?;
        Ok((clusters.to_vec(), stats))
    }

    /// The exact join's clusters, held compactly.
    pub fn exact_cluster_set(
        &self,
        shingled: &Shingled,
        observer: &mut dyn Observer,
    ) -> Result<(Clusters, Stats)> {
        let mut stats = shingled.stats.clone();
        let corpus = &shingled.corpus;
        let links: Vec<(u32, u32)> = self
            .exact_rep_pairs(corpus, &mut stats, observer)?
            .iter()
            .map(|p| (p.a, p.b))
            .collect();
        let verifier = Verifier::new(corpus, Policy::exact(self.config.tested_threshold()))
            .without_estimates();
        let order = (shingled.keep_ranks.as_deref(), shingled.reference);
        let clusters =
            self.cluster_links(corpus, order, &links, &mut stats, observer, |kept, doc| {
                verifier.check(kept, doc)
            });
        Ok((clusters, stats))
    }
}
