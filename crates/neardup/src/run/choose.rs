//! [`Pipeline::choose_method`]: LSH or the exact join, by their costs predicted on a
//! sample (see the `method` module).

use std::convert::Infallible;

use crate::candidates::exact_join::ExactJoin;
use crate::corpus::sets::Corpus;
use crate::corpus::slot::doc_ids;
use crate::corpus::stages::{Shingled, Sketched};
use crate::error::Result;
use crate::rng::SplitMix64;
use crate::run::method::{cost, sample_size, Goal, MethodChoice};
use crate::run::observer::Quiet;
use crate::run::pipeline::Pipeline;
use crate::run::stats::Stats;
use crate::verify::jaccard::Verification;
use crate::verify::prefilter;

/// Mixed into the seed for drawing the sample.
const SAMPLE_SEED: u64 = 0x6d65_7468_6f64_5f73;

impl Pipeline {
    /// Predicts what LSH and the exact join would cost on `shingled` from a seeded
    /// uniform sample of its distinct sets ([`sample_size`](crate::run::method::sample_size)),
    /// and picks the cheaper. Deterministic: the same corpus and configuration always
    /// choose the same way.
    pub fn choose_method(&self, shingled: &Shingled, goal: Goal) -> Result<MethodChoice> {
        let mut picked = shingled.corpus().members();
        let big_n = picked.len();
        // A seeded partial Fisher–Yates shuffle, then input order.
        let mut rng = SplitMix64::new(self.config.seed() ^ SAMPLE_SEED);
        let n = sample_size(big_n);
        for i in 0..n {
            let j = i + rng.below((big_n - i) as u64) as usize;
            picked.swap(i, j);
        }
        picked.truncate(n);
        picked.sort_unstable();
        self.predict(shingled.corpus(), &picked, big_n as f64, goal)
    }

    /// The same prediction when `sample` is itself a uniform sample of an input of
    /// `documents` documents (as `neardup plan` draws one): the whole input is taken to
    /// have the sample's share of distinct sets.
    pub fn choose_method_for_sample(
        &self,
        sample: &Shingled,
        documents: u64,
        goal: Goal,
    ) -> Result<MethodChoice> {
        let corpus = sample.corpus();
        let picked = corpus.members();
        let share = picked.len() as f64 / corpus.len().max(1) as f64;
        self.predict(corpus, &picked, documents as f64 * share, goal)
    }

    /// Runs both methods on the distinct sets `picked` of `corpus` and scales their work
    /// to `big_n` distinct sets.
    fn predict(
        &self,
        corpus: &Corpus,
        picked: &[u32],
        big_n: f64,
        goal: Goal,
    ) -> Result<MethodChoice> {
        let n = picked.len() as f64;
        let pair_scale = if n >= 2.0 {
            big_n * (big_n - 1.0).max(0.0) / (n * (n - 1.0))
        } else {
            0.0
        };
        let doc_scale = if n > 0.0 { big_n / n } else { 0.0 };

        let v = self.config.verification();
        let prefilter = matches!(v, Verification::Exact | Verification::Triage);
        // Work per document, scaled from the sample.
        let (mut hashes, mut shingles, mut long) = (0u64, 0u64, 0u64);
        for &d in picked {
            let len = corpus.set(d).len();
            shingles += len as u64;
            if prefilter && len >= prefilter::MIN_SET {
                long += len as u64;
            }
            for family in self.families.iter().filter(|f| f.takes(len)) {
                hashes += family.sketch.work(len);
            }
        }
        let band_records = big_n * (self.config.plan().bands() * self.families.len()) as f64;

        // LSH on the sample, as a run does it (prefilter and checks beyond the buckets).
        let mut sample = corpus.subset(picked);
        self.sketch_corpus(&mut sample);
        let sketched = Sketched(Shingled {
            corpus: sample,
            stats: Stats::default(),
            keep_ranks: None,
            reference: 0,
        });
        let lsh = match goal {
            Goal::Pairs => {
                let mut stats = Stats::default();
                let walked = self.walk(&sketched, &mut stats, &mut Quiet, |_| {
                    Ok::<(), Infallible>(())
                });
                walked.unwrap_or_else(|never| match never {});
                stats
            }
            Goal::Clusters => self.cluster_set(&sketched, &mut Quiet).1,
        };
        let lsh_ns = doc_scale * (hashes as f64 * cost::HASH + long as f64 * cost::PREFILTER)
            + band_records * cost::BAND_RECORD
            + pair_scale
                * (lsh.candidates as f64 * cost::CANDIDATE + lsh.merged as f64 * cost::MERGED);

        // The exact join ranks every shingle: if that alone costs more than LSH, its
        // search on the sample is not needed.
        let ranked_ns = doc_scale * shingles as f64 * cost::RANKED;
        if ranked_ns >= lsh_ns {
            return Ok(MethodChoice {
                exact_is_bound: true,
                ..MethodChoice::cheaper(lsh_ns * 1e-9, ranked_ns * 1e-9, picked.len())
            });
        }
        let sets: Vec<&[u32]> = doc_ids(picked.len())
            .map(|d| sketched.corpus().set(d))
            .collect();
        let (_, join) = ExactJoin::new(self.config.tested_threshold()).try_join(&sets)?;
        let exact_ns = ranked_ns
            + pair_scale
                * (join.postings as f64 * cost::POSTING
                    + join.merged as f64 * cost::MERGED
                    + join.candidates as f64 * cost::CANDIDATE);

        Ok(MethodChoice::cheaper(
            lsh_ns * 1e-9,
            exact_ns * 1e-9,
            picked.len(),
        ))
    }
}
