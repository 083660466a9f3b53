//! LSH against the exact join on the same corpus: recall, precision, recall by similarity
//! band against the S-curve's expectation, and both methods against ground-truth labels.
//!
//! [`Comparison::evaluate`] turns the two methods' pairs into an [`Evaluation`], a plain
//! struct (serializable with the `serde` feature) that a program prints as it likes.
//!
//! ```
//! use neardup::measure::evaluation::Comparison;
//! use neardup::{Config, Pipeline, Quiet};
//!
//! let texts = [
//!     "the quick brown fox jumps over the lazy dog",
//!     "the quick brown fox jumps over the lazy dog!",
//!     "an entirely different sentence about something else",
//! ];
//! let config = Config::builder().threshold(0.8).build()?;
//! let pipeline = Pipeline::new(config.clone())?;
//! let corpus = pipeline.sketch_texts(&texts)?;
//! let (lsh, _) = pipeline.pairs(&corpus, &mut Quiet);
//! let (exact, _) = pipeline.exact_pairs(&corpus, &mut Quiet).unwrap();
//! let eval = Comparison {
//!     lsh: &lsh,
//!     exact: &exact,
//!     corpus: corpus.corpus(),
//!     curve: config.candidate_curve(),
//!     threshold: config.threshold(),
//!     lsh_seconds: 0.5,
//!     exact_seconds: 1.0,
//! }
//! .evaluate();
//! assert_eq!((eval.lsh.pairs, eval.exact.pairs, eval.both), (1, 1, 1));
//! assert_eq!((eval.recall, eval.precision, eval.speedup), (1.0, 1.0, 2.0));
//! # Ok::<(), neardup::Error>(())
//! ```

use crate::corpus::sets::Corpus;
use crate::measure::metrics::{
    adjusted_rand_index, expected, pair_metrics, recall_by_similarity, CandidateCurve,
};
use crate::measure::metrics::{BandRecall, Grouping};
use crate::run::pairs::Pair;

/// What an evaluation measured.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Evaluation {
    /// The similarity threshold.
    pub threshold: f64,
    /// LSH's time and pairs.
    pub lsh: Method,
    /// The exact join's time and pairs.
    pub exact: Method,
    /// Pairs both methods found.
    pub both: u64,
    /// LSH pairs found / exact pairs.
    pub recall: f64,
    /// LSH pairs that the exact join found too / LSH pairs.
    pub precision: f64,
    /// The exact join's time / LSH's time.
    pub speedup: f64,
    /// The same over pairs of distinct shingle sets (identical copies counted once).
    pub distinct: Distinct,
    /// Recall per band of exact similarity, against the S-curve's expectation.
    pub by_similarity: Vec<BandRecall>,
    /// Both methods against ground-truth labels, if there are any.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub labels: Option<LabelScores>,
}

/// One method's time (shingling included) and pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Method {
    /// Seconds, shingling included.
    pub seconds: f64,
    /// Pairs found.
    pub pairs: u64,
}

/// Recall over pairs of distinct shingle sets.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Distinct {
    /// found / pairs (1 when there are none).
    pub recall: f64,
    /// Pairs of distinct sets LSH found.
    pub found: u64,
    /// Pairs of distinct sets the exact join found.
    pub pairs: u64,
    /// The mean S-curve over those pairs: what LSH is expected to find.
    pub expected: f64,
}

/// Both methods against the user's labels.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LabelScores {
    /// The labels' file, as the user named it.
    pub file: String,
    /// Distinct ids the labels name.
    pub ids: u64,
    /// Of those, ids that name no document of the input.
    pub unknown_ids: u64,
    /// One score per method.
    pub methods: Vec<LabelScore>,
}

/// One method against the labels.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LabelScore {
    /// "lsh" or "exact".
    pub method: &'static str,
    /// Pair precision.
    pub precision: f64,
    /// Pair recall.
    pub recall: f64,
    /// Pair F1.
    pub f1: f64,
    /// Adjusted Rand index of the clusterings (pairs count as connected components).
    pub adjusted_rand_index: f64,
}

impl LabelScore {
    /// Scores `predicted` against `labels` over `documents` documents (for the ARI).
    pub fn new(
        method: &'static str,
        predicted: &Grouping,
        labels: &Grouping,
        documents: u64,
    ) -> LabelScore {
        let m = pair_metrics(predicted, labels);
        LabelScore {
            method,
            precision: m.precision(),
            recall: m.recall(),
            f1: m.f1(),
            adjusted_rand_index: adjusted_rand_index(predicted, labels, documents),
        }
    }
}

/// The inputs of an evaluation: both methods' pairs over one corpus.
#[derive(Clone, Copy, Debug)]
pub struct Comparison<'a> {
    /// LSH's pairs, sorted by (a, b).
    pub lsh: &'a [Pair],
    /// The exact join's pairs, sorted by (a, b), each with its exact Jaccard.
    pub exact: &'a [Pair],
    /// The corpus both ran on (it tells which documents are identical copies).
    pub corpus: &'a Corpus,
    /// How the method under test finds candidates (LSH's band plan, or SimHash's
    /// distance): what the expected recall is computed from.
    pub curve: CandidateCurve,
    /// The similarity threshold.
    pub threshold: f64,
    /// LSH's seconds, shingling included.
    pub lsh_seconds: f64,
    /// The exact join's seconds, shingling included.
    pub exact_seconds: f64,
}

fn key(p: &Pair) -> (u32, u32) {
    (p.a, p.b)
}

/// a / b; 1 when b = 0 (nothing to find, nothing missed).
fn ratio(a: usize, b: usize) -> f64 {
    crate::measure::metrics::ratio_of_counts(a as u128, b as u128)
}

impl Comparison<'_> {
    /// Recall, precision, speed-up, recall over distinct shingle sets and by similarity
    /// band. `labels` is left `None`.
    pub fn evaluate(&self) -> Evaluation {
        let (lsh, exact) = (self.lsh, self.exact);
        let exact_keys: Vec<(u32, u32)> = exact.iter().map(key).collect();
        let both = lsh
            .iter()
            .filter(|p| exact_keys.binary_search(&key(p)).is_ok())
            .count();
        // Counted once per distinct pair of shingle sets: identical copies of a document
        // hit or miss together, so per-pair recall can swing with one miss.
        let corpus = self.corpus;
        let is_distinct =
            |p: &&Pair| corpus.representative(p.a) == p.a && corpus.representative(p.b) == p.b;
        let exact_distinct: Vec<&Pair> = exact.iter().filter(is_distinct).collect();
        let lsh_distinct: Vec<(u32, u32)> = lsh.iter().filter(is_distinct).map(key).collect();
        let distinct_found = exact_distinct
            .iter()
            .filter(|p| lsh_distinct.binary_search(&key(p)).is_ok())
            .count();
        Evaluation {
            threshold: self.threshold,
            lsh: Method {
                seconds: self.lsh_seconds,
                pairs: lsh.len() as u64,
            },
            exact: Method {
                seconds: self.exact_seconds,
                pairs: exact.len() as u64,
            },
            both: both as u64,
            recall: ratio(both, exact.len()),
            precision: ratio(both, lsh.len()),
            speedup: self.exact_seconds / self.lsh_seconds.max(1e-9),
            distinct: Distinct {
                recall: ratio(distinct_found, exact_distinct.len()),
                found: distinct_found as u64,
                pairs: exact_distinct.len() as u64,
                expected: expected(self.curve, &exact_distinct),
            },
            by_similarity: recall_by_similarity(self.exact, self.lsh, self.curve, self.threshold),
            labels: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Pipeline};

    #[test]
    fn evaluation_counts_identical_copies_once_in_distinct_recall() {
        // Documents 0 and 1 are identical, 2 is a near copy of both, 3 stands alone.
        let texts = [
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu",
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu",
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu",
            "something with no relation to the others at all, really none",
        ];
        let config = Config::builder().threshold(0.7).build().unwrap();
        let pipeline = Pipeline::new(config.clone()).unwrap();
        let corpus = pipeline.sketch_texts(&texts).unwrap();
        let (exact, _) = pipeline.exact_pairs(&corpus, &mut crate::Quiet).unwrap();
        assert_eq!(exact.len(), 3);
        // Pretend LSH missed the pair (1, 2) of a copy and found nothing else.
        let lsh: Vec<Pair> = exact.iter().filter(|p| key(p) != (1, 2)).copied().collect();
        let e = Comparison {
            lsh: &lsh,
            exact: &exact,
            corpus: corpus.corpus(),
            curve: config.candidate_curve(),
            threshold: 0.7,
            lsh_seconds: 0.0,
            exact_seconds: 2.0,
        }
        .evaluate();
        assert_eq!((e.lsh.pairs, e.exact.pairs, e.both), (2, 3, 2));
        assert!((e.recall - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(e.precision, 1.0);
        // Distinct sets: only (0, 2); (0, 1) is a pair of copies and (1, 2) repeats (0, 2).
        assert_eq!((e.distinct.found, e.distinct.pairs), (1, 1));
        assert_eq!(e.distinct.recall, 1.0);
        // No time for LSH: the speed-up is bounded, not infinite.
        assert_eq!(e.speedup, 2.0 / 1e-9);
        assert!(e.labels.is_none());
    }

    #[test]
    fn label_scores() {
        let labels = Grouping::from_pairs([("a", "b"), ("c", "d")]);
        let predicted = Grouping::from_pairs([("a", "b"), ("a", "c")]);
        let s = LabelScore::new("lsh", &predicted, &labels, 4);
        assert_eq!((s.precision, s.recall, s.f1), (0.5, 0.5, 0.5));
        let perfect = LabelScore::new("exact", &labels, &labels, 4);
        assert_eq!(perfect.adjusted_rand_index, 1.0);
    }
}
