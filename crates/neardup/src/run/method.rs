//! Which way a run finds its pairs: LSH, the exact join, or whichever a sample predicts to
//! be cheaper.
//!
//! Both ways start from the same shingle sets and report exact similarities; the exact
//! join finds every pair, LSH those its bands make candidates. Which costs less depends on
//! the corpus: on short texts the exact join's prefix filter leaves few candidates, while
//! LSH still sketches every shingle K times; on long documents that share boilerplate the
//! prefix filter meets frequent tokens and LSH wins. [`Pipeline::choose_method`] runs both
//! on a seeded uniform sample of the distinct sets, counts their work (shingles hashed,
//! band records sorted, index entries read, shingles merged), scales what grows with the
//! number of pairs by N(N − 1)/(n(n − 1)) and what grows with the documents by N/n, and
//! prices the work with per-unit costs measured on the benchmark machine. Counting work
//! rather than timing the sample makes the choice the same on every run and machine.
//!
//! [`Pipeline::choose_method`]: crate::Pipeline::choose_method

use crate::error::{by_name, Error};

/// How a run finds its pairs.
///
/// Printed and parsed by its [name](Method::name); with the `clap` feature it is a
/// `clap::ValueEnum` under the same names, its variants' first paragraphs as their help.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Method {
    /// Whichever of the two a sample of the corpus predicts to be faster (the default).
    #[default]
    #[cfg_attr(feature = "clap", value(name = "auto"))]
    Auto,
    /// MinHash LSH: candidates from shared band keys, each verified.
    #[cfg_attr(feature = "clap", value(name = "lsh"))]
    Lsh,
    /// The exact set-similarity join: every pair at or above the threshold.
    #[cfg_attr(feature = "clap", value(name = "exact"))]
    Exact,
}

impl Method {
    /// Every method, the default first.
    pub const ALL: [Method; 3] = [Method::Auto, Method::Lsh, Method::Exact];

    /// The method's name: `auto`, `lsh`, `exact`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Lsh => "lsh",
            Method::Exact => "exact",
        }
    }
}

by_name!(Method, Error::InvalidMethod);

/// Most distinct sets in the sample that predicts the costs.
pub const SAMPLE: usize = 5_000;
/// Least distinct sets in the sample (all of them in a smaller corpus).
pub const MIN_SAMPLE: usize = 300;

/// Sample size for `documents` distinct sets: a twentieth of them, within
/// [`MIN_SAMPLE`]..=[`SAMPLE`], so that the sample costs a small share of the run
/// (a twentieth of the work that grows with the documents, a four-hundredth of the work
/// that grows with the pairs).
pub fn sample_size(documents: usize) -> usize {
    (documents / 20).clamp(MIN_SAMPLE, SAMPLE).min(documents)
}

/// Nanoseconds per unit of work on one core of the benchmark machine, fitted on single-
/// threaded runs of the benchmark corpora (docs/design/12-exact-join-and-method-choice.md has
/// the runs and how far the predictions fall from them). Only their ratios matter.
pub(crate) mod cost {
    /// One unit of [`Sketch::work`](crate::sketch::Sketch::work): a hash of the classic sketch
    /// (refitted when it became vectorized in blocks of lanes).
    pub const HASH: f64 = 0.09;
    /// One shingle of a long set sketched for the prefilter.
    pub const PREFILTER: f64 = 1.5;
    /// One (band key, document) record sorted and grouped.
    pub const BAND_RECORD: f64 = 45.0;
    /// One candidate pair judged: fetching two sets from memory, the prefilter, the
    /// verdict, the bookkeeping around it.
    pub const CANDIDATE: f64 = 400.0;
    /// One shingle handed to a merge.
    pub const MERGED: f64 = 0.6;
    /// One shingle of the corpus ranked by the exact join (counted, sorted, renumbered).
    pub const RANKED: f64 = 75.0;
    /// One prefix-index entry read by the exact join.
    pub const POSTING: f64 = 10.0;
}

/// What a run makes of the pairs it finds, which decides how much LSH verifies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// Every pair: each candidate is verified.
    Pairs,
    /// Clusters: a document is linked to one kept document, so fewer are.
    Clusters,
}

/// What [`Pipeline::choose_method`](crate::Pipeline::choose_method) decided and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MethodChoice {
    /// [`Method::Lsh`] or [`Method::Exact`].
    pub method: Method,
    /// Predicted seconds on one core for what LSH does after shingling (sketch, group,
    /// verify).
    pub lsh_secs: f64,
    /// Predicted seconds on one core for the exact join, or a lower bound of them if
    /// `exact_is_bound`.
    pub exact_secs: f64,
    /// True if the exact join was not tried on the sample: ranking the corpus's shingles,
    /// its first step, was predicted to cost more than all of LSH.
    pub exact_is_bound: bool,
    /// Distinct sets in the sample the prediction scaled up.
    pub sample: usize,
}

impl MethodChoice {
    /// The choice for predicted costs: the cheaper method, LSH on a tie.
    pub(crate) fn cheaper(lsh_secs: f64, exact_secs: f64, sample: usize) -> Self {
        MethodChoice {
            method: if exact_secs < lsh_secs {
                Method::Exact
            } else {
                Method::Lsh
            },
            lsh_secs,
            exact_secs,
            exact_is_bound: false,
            sample,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse_and_print_by_name() {
        crate::error::assert_named(&Method::ALL);
        assert_eq!(Method::default(), Method::Auto);
        assert_eq!(
            "LSH".parse::<Method>(),
            Err(Error::InvalidMethod("LSH".into()))
        );
    }

    #[test]
    fn samples_are_a_twentieth_within_bounds() {
        assert_eq!(sample_size(9), 9);
        assert_eq!(sample_size(3_000), 300);
        assert_eq!(sample_size(20_000), 1_000);
        assert_eq!(sample_size(842_000), 5_000);
    }

    #[test]
    fn the_cheaper_method_is_chosen() {
        assert_eq!(MethodChoice::cheaper(2.0, 1.0, 10).method, Method::Exact);
        assert_eq!(MethodChoice::cheaper(1.0, 2.0, 10).method, Method::Lsh);
        assert_eq!(MethodChoice::cheaper(1.0, 1.0, 10).method, Method::Lsh);
    }
}
