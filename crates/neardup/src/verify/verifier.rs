//! Verification: one policy that judges a pair, and the one place where verdicts on a
//! batch of candidates are judged, counted and reported.

use rayon::prelude::*;

use crate::cluster::clusters::Similarity;
use crate::corpus::sets::Corpus;
use crate::run::config::Config;
use crate::run::observer::Observer;
use crate::run::pairs::Pair;
use crate::verify::jaccard::{
    estimate, jaccard, jaccard_at_least, meets_threshold, triage_margin, Verification,
};
use crate::verify::prefilter::Prefilter;

/// The verdict on one candidate pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// How similar the pair is, as far as verification looked.
    pub similarity: Similarity,
    /// Whether the pair passed.
    pub verified: bool,
}

impl Verdict {
    /// The similarity the verdict was made on: the exact Jaccard when it was computed,
    /// else the estimate, else 1 (no verification and no signatures).
    pub fn judged_on(&self) -> f64 {
        self.similarity.value().unwrap_or(1.0)
    }

    /// The similarity, if the pair passed.
    pub fn passed(&self) -> Option<Similarity> {
        self.verified.then_some(self.similarity)
    }
}

/// How a pair is judged: the threshold and the configured verification.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Policy {
    threshold: f64,
    verification: Verification,
    num_perm: usize,
    /// In a SimHash run, the largest distance of a pair's fingerprints.
    hamming: Option<u32>,
}

impl Policy {
    /// The configured policy.
    pub(crate) fn new(config: &Config) -> Self {
        Policy {
            threshold: config.tested_threshold(),
            verification: config.verification(),
            num_perm: config.num_perm(),
            hamming: (!config.sketch().is_minhash()).then_some(config.hamming()),
        }
    }

    /// Exact Jaccard against `threshold`, whatever was configured (the exact join's).
    pub(crate) fn exact(threshold: f64) -> Self {
        Policy {
            threshold,
            verification: Verification::Exact,
            num_perm: 1,
            hamming: None,
        }
    }

    /// The verdict on a pair, given what is known of it: `jaccard(t)` gives the exact
    /// Jaccard (called only when the policy needs it), or `None` if it found the pair
    /// below the threshold `t` without computing it to the end; `estimate` is the
    /// signatures' estimate if they were kept, and `whole` the estimate of the whole
    /// documents when either was truncated, which is then all the verdict rests on.
    pub(crate) fn judge(
        &self,
        jaccard: impl FnOnce(f64) -> Option<f64>,
        estimate: Option<f64>,
        whole: Option<f64>,
    ) -> Verdict {
        let t = self.threshold;
        if let Some(e) = whole {
            return Verdict {
                similarity: Similarity {
                    jaccard: None,
                    estimate: Some(e),
                    truncated: true,
                    hamming: None,
                },
                verified: meets_threshold(e, t),
            };
        }
        let verdict = |jaccard: Option<f64>, verified: bool| Verdict {
            similarity: Similarity {
                jaccard,
                estimate,
                truncated: false,
                hamming: None,
            },
            verified,
        };
        let exactly = |jaccard: Option<f64>| match jaccard {
            Some(j) => verdict(Some(j), meets_threshold(j, t)),
            None => verdict(None, false),
        };
        match self.verification {
            Verification::Exact => exactly(jaccard(t)),
            Verification::Estimate => {
                verdict(None, estimate.is_some_and(|e| meets_threshold(e, t)))
            }
            Verification::Triage => {
                let margin = triage_margin(t, self.num_perm);
                match estimate {
                    Some(e) if e >= t + margin => verdict(None, true),
                    Some(e) if e <= t - margin => verdict(None, false),
                    _ => exactly(jaccard(t)),
                }
            }
            Verification::None => verdict(None, true),
        }
    }
}

/// Counts of judged candidates.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    pub(crate) candidates: u64,
    pub(crate) verified: u64,
    /// Candidates rejected by the prefilter.
    pub(crate) prefiltered: u64,
    /// Shingles of the candidates whose sets were merged.
    pub(crate) merged: u64,
    /// Verified pairs with a truncated document (judged on the whole documents' estimate).
    pub(crate) truncated: u64,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, other: Tally) {
        self.candidates += other.candidates;
        self.verified += other.verified;
        self.prefiltered += other.prefiltered;
        self.merged += other.merged;
        self.truncated += other.truncated;
    }
}

/// What judging one candidate cost.
#[derive(Clone, Copy, Debug, Default)]
struct Work {
    /// 1 if the prefilter rejected it.
    prefiltered: u64,
    /// Shingles handed to the merge.
    merged: u64,
}

/// Judges pairs of a corpus's documents under a policy.
pub(crate) struct Verifier<'a> {
    corpus: &'a Corpus,
    policy: Policy,
    /// Whether similarities carry the signatures' estimate when the corpus kept them.
    estimates: bool,
    /// The prefilter, if the corpus has its sketches.
    prefilter: Option<Prefilter>,
}

impl<'a> Verifier<'a> {
    pub(crate) fn new(corpus: &'a Corpus, policy: Policy) -> Self {
        Verifier {
            corpus,
            policy,
            estimates: true,
            prefilter: corpus
                .has_prefilter()
                .then(|| Prefilter::new(policy.threshold)),
        }
    }

    /// Similarities without the signatures' estimate (the exact join's clusters).
    pub(crate) fn without_estimates(mut self) -> Self {
        self.estimates = false;
        self
    }

    /// The verdict on documents `a` and `b`.
    pub(crate) fn verdict(&self, a: u32, b: u32) -> Verdict {
        let c = self.corpus;
        let verdict = self.policy.judge(
            |_| Some(jaccard(c.set(a), c.set(b))),
            self.estimate(a, b),
            c.truncated_estimate(a, b),
        );
        self.fingerprints(a, b, verdict)
    }

    /// In a SimHash run, the verdict with the pair's Hamming distance, failed if the
    /// fingerprints are too far apart (clusters check each member against the kept
    /// document, which need not be one of its candidates).
    fn fingerprints(&self, a: u32, b: u32, mut verdict: Verdict) -> Verdict {
        if let Some(limit) = self.policy.hamming {
            let distance = self.corpus.hamming(a, b);
            verdict.similarity.hamming = distance;
            verdict.verified &= distance.is_some_and(|d| d <= limit);
        }
        verdict
    }

    /// The verdict on `a` and `b` with what it cost. Unless `full`, a rejected pair's
    /// exact Jaccard is not wanted: the prefilter may reject it on the 1-bit sketches,
    /// and the merge of the sets stops once the threshold is out of reach.
    fn judged(&self, a: u32, b: u32, full: bool) -> (Verdict, Work) {
        let c = self.corpus;
        let mut work = Work::default();
        let verdict = self.policy.judge(
            |t| {
                let (x, y) = (c.set(a), c.set(b));
                if full {
                    work.merged = (x.len() + y.len()) as u64;
                    return Some(jaccard(x, y));
                }
                if let (Some(filter), Some((p, q))) = (&self.prefilter, c.prefilter_pair(a, b)) {
                    if filter.rejects(p, q) {
                        work.prefiltered = 1;
                        return None;
                    }
                }
                work.merged = (x.len() + y.len()) as u64;
                jaccard_at_least(x, y, t)
            },
            self.estimate(a, b),
            c.truncated_estimate(a, b),
        );
        (self.fingerprints(a, b, verdict), work)
    }

    /// The estimate of the signatures `a` and `b` are compared in, if kept (and wanted).
    pub(crate) fn estimate(&self, a: u32, b: u32) -> Option<f64> {
        let (x, y) = self
            .corpus
            .signature_pair(a, b)
            .filter(|_| self.estimates)?;
        Some(estimate(x, y))
    }

    /// The similarity of `a` and `b` if they pass.
    pub(crate) fn check(&self, a: u32, b: u32) -> Option<Similarity> {
        self.verdict(a, b).passed()
    }

    /// Judges candidates in parallel and returns those that pass, in the candidates'
    /// order. Each verdict is counted in `tally` and its score handed to `observer`;
    /// when the observer wants no scores, rejected pairs are not scored to the end
    /// ([`Verifier::judged`]).
    pub(crate) fn judge_all(
        &self,
        candidates: &[(u32, u32)],
        tally: &mut Tally,
        observer: &mut dyn Observer,
    ) -> Vec<Pair> {
        let full = observer.wants_scores();
        let (verdicts, work): (Vec<Verdict>, Vec<Work>) = candidates
            .par_iter()
            .map(|&(a, b)| self.judged(a, b, full))
            .unzip();
        for w in work {
            tally.prefiltered += w.prefiltered;
            tally.merged += w.merged;
        }
        passed(candidates, verdicts, tally, observer)
    }
}

/// The candidates whose verdict passed, as pairs; every verdict is counted in `tally` and,
/// if the observer wants scores, handed to it.
pub(crate) fn passed(
    candidates: &[(u32, u32)],
    verdicts: Vec<Verdict>,
    tally: &mut Tally,
    observer: &mut dyn Observer,
) -> Vec<Pair> {
    if observer.wants_scores() {
        for v in &verdicts {
            observer.scored(v.judged_on(), v.verified);
        }
    }
    tally.candidates += candidates.len() as u64;
    let verified: Vec<Pair> = candidates
        .iter()
        .zip(verdicts)
        .filter_map(|(&(a, b), v)| {
            Some(Pair {
                a,
                b,
                similarity: v.passed()?,
            })
        })
        .collect();
    tally.verified += verified.len() as u64;
    tally.truncated += verified.iter().filter(|p| p.similarity.truncated).count() as u64;
    verified
}
