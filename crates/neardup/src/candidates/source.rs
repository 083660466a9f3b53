//! The seam between finding candidates and judging them.
//!
//! Every engine finds its pairs the same way: one or more [`CandidateSource`]s propose
//! candidate pairs a batch at a time, and [`verify_from`] judges each batch with the
//! measure's [`Judge`], counts it and hands on what passed. The sources are the band
//! buckets ([`BandBuckets`]), the large groups of copies and the shared neighbours
//! (`neighbours`), SimHash tables and star links (a [`Listed`] batch), the LSH Ensemble's
//! bands (`containment_search`), the exact joins (their scored pairs, [`Listed`]) and the
//! spilled bands (`spill::spilled`, read back from disk). The judges are the corpus's
//! [`Verifier`] (Jaccard under the configured verification), the containment check, the
//! exact joins' policy on their own scores, and the spilled run's verifier, which reads
//! the sets from disk.
//!
//! A source or judge that can fail on its own (reading a temporary file) names its error;
//! those in memory cannot ([`Infallible`]), and [`Halt::into_stopped`] says so without a
//! panic.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::candidates::band_index::{BandIndex, Candidate};
use crate::candidates::containment::Contained;
use crate::candidates::exact_join::ScoredPair;
use crate::corpus::sets::Corpus;
use crate::run::observer::Observer;
use crate::run::pairs::Pair;
use crate::run::pipeline::PAIR_CHUNK;
use crate::verify::verifier::{Policy, Tally, Verifier};

/// A pair of documents by number: a candidate before it is judged.
pub(crate) type Link = (u32, u32);

/// What a source hands its batches to: it judges them and hands on what passed.
pub(crate) type Take<'t, C, G> = dyn FnMut(&[C]) -> Result<(), G> + 't;

/// One way of finding candidate pairs.
pub(crate) trait CandidateSource {
    /// What a candidate is: a pair of documents, or a pair with a score already known.
    type Candidate: Sync;
    /// What proposing can fail with on its own ([`Infallible`] in memory).
    type Error;

    /// Hands every candidate once, a batch at a time, to `take`, and stops at its first
    /// error, which it returns (a source's own failure is turned into the same type).
    fn propose<G: From<Self::Error>>(
        &mut self,
        take: &mut Take<'_, Self::Candidate, G>,
    ) -> Result<(), G>;
}

/// How a measure judges a batch of candidates.
pub(crate) trait Judge<C> {
    /// A pair that passed.
    type Found;
    /// What judging can fail with on its own ([`Infallible`] in memory).
    type Error;

    /// The candidates that pass, in their order; each verdict is counted in `tally` and,
    /// if the observer wants scores, handed to it.
    fn judge(
        &self,
        batch: &[C],
        tally: &mut Tally,
        observer: &mut dyn Observer,
    ) -> Result<Vec<Self::Found>, Self::Error>;
}

/// Why [`verify_from`] stopped: a source or judge failed, or the consumer stopped it.
pub(crate) enum Halt<X, F> {
    /// The source's or the judge's own error.
    Failed(X),
    /// The consumer's error.
    Stopped(F),
}

impl<X, F> From<X> for Halt<X, F> {
    fn from(x: X) -> Self {
        Halt::Failed(x)
    }
}

impl<F> Halt<Infallible, F> {
    /// The consumer's error: nothing in memory fails on its own.
    pub(crate) fn into_stopped(self) -> F {
        match self {
            Halt::Failed(never) => match never {},
            Halt::Stopped(f) => f,
        }
    }
}

/// What one source gave once judged.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Judged {
    pub(crate) tally: Tally,
    /// Time in the judge, the rest of the walk being the source's search.
    pub(crate) judging: Duration,
}

/// Judges every candidate of `source` with `judge`, batch by batch, and hands each
/// batch's passes to `out` as soon as they are known: nothing but one batch is held.
pub(crate) fn verify_from<S, J, F>(
    source: &mut S,
    judge: &J,
    observer: &mut dyn Observer,
    mut out: impl FnMut(&[J::Found]) -> Result<(), F>,
) -> Result<Judged, Halt<S::Error, F>>
where
    S: CandidateSource,
    J: Judge<S::Candidate, Error = S::Error>,
{
    let mut judged = Judged::default();
    source.propose(&mut |batch: &[S::Candidate]| {
        let start = Instant::now();
        let passed = judge.judge(batch, &mut judged.tally, observer);
        judged.judging += start.elapsed();
        observer.advance(batch.len() as u64);
        out(&passed.map_err(Halt::Failed)?).map_err(Halt::Stopped)
    })?;
    Ok(judged)
}

/// A list of candidates held already, proposed [`PAIR_CHUNK`] at a time.
pub(crate) struct Listed<'a, C>(pub(crate) &'a [C]);

impl<C: Sync> CandidateSource for Listed<'_, C> {
    type Candidate = C;
    type Error = Infallible;

    fn propose<G: From<Infallible>>(&mut self, take: &mut Take<'_, C, G>) -> Result<(), G> {
        self.0.chunks(PAIR_CHUNK).try_for_each(take)
    }
}

/// The band buckets: every pair of representatives that shares a bucket in a band of the
/// family both are compared in, proposed in the first band where it collides.
pub(crate) struct BandBuckets<'a> {
    pub(crate) index: &'a BandIndex<'a>,
    pub(crate) corpus: &'a Corpus,
}

impl CandidateSource for BandBuckets<'_> {
    type Candidate = Link;
    type Error = Infallible;

    fn propose<G: From<Infallible>>(&mut self, take: &mut Take<'_, Link, G>) -> Result<(), G> {
        let (index, corpus) = (self.index, self.corpus);
        index.for_each_pair_chunk(PAIR_CHUNK, |chunk: &[Candidate]| {
            let firsts: Vec<Link> = chunk
                .par_iter()
                .filter(|c| {
                    Some(index.family_of(c.band)) == corpus.shared_family(c.a, c.b)
                        && !index.collided_earlier(c.a, c.b, c.band)
                })
                .map(|c| (c.a, c.b))
                .collect();
            take(&firsts)
        })
    }
}

/// Jaccard under the configured verification, on the sets in memory.
impl Judge<Link> for Verifier<'_> {
    type Found = Pair;
    type Error = Infallible;

    fn judge(
        &self,
        batch: &[Link],
        tally: &mut Tally,
        observer: &mut dyn Observer,
    ) -> Result<Vec<Pair>, Infallible> {
        Ok(self.judge_all(batch, tally, observer))
    }
}

/// The exact join's pairs, each scored by the join: the exact policy on that Jaccard
/// (a truncated document's prefix is not the document: the whole documents' estimate is
/// judged instead). Every pair the join found is reported to the observer as verified.
pub(crate) struct JoinScores<'a> {
    pub(crate) corpus: &'a Corpus,
    pub(crate) verifier: Verifier<'a>,
    pub(crate) policy: Policy,
}

impl Judge<ScoredPair> for JoinScores<'_> {
    type Found = Pair;
    type Error = Infallible;

    fn judge(
        &self,
        batch: &[ScoredPair],
        tally: &mut Tally,
        observer: &mut dyn Observer,
    ) -> Result<Vec<Pair>, Infallible> {
        if observer.wants_scores() {
            batch.iter().for_each(|p| observer.scored(p.jaccard, true));
        }
        let passed: Vec<Pair> = batch
            .iter()
            .filter_map(|p| {
                let truncated = self.corpus.truncated_estimate(p.a, p.b);
                let estimate = self.verifier.estimate(p.a, p.b);
                let verdict = self.policy.judge(|_| Some(p.jaccard), estimate, truncated);
                Some(Pair {
                    a: p.a,
                    b: p.b,
                    similarity: verdict.passed()?,
                })
            })
            .collect();
        tally.candidates += batch.len() as u64;
        tally.verified += passed.len() as u64;
        Ok(passed)
    }
}

/// The exact containment join's pairs: the join measured each containment exactly, so
/// every one it gives passes.
pub(crate) struct JoinedContainment;

impl Judge<Contained> for JoinedContainment {
    type Found = Contained;
    type Error = Infallible;

    fn judge(
        &self,
        batch: &[Contained],
        tally: &mut Tally,
        _: &mut dyn Observer,
    ) -> Result<Vec<Contained>, Infallible> {
        tally.candidates += batch.len() as u64;
        tally.verified += batch.len() as u64;
        Ok(batch.to_vec())
    }
}

/// Every pass of a source that cannot fail, gathered.
pub(crate) fn gather<S, J>(
    source: &mut S,
    judge: &J,
    observer: &mut dyn Observer,
) -> (Vec<J::Found>, Judged)
where
    S: CandidateSource<Error = Infallible>,
    J: Judge<S::Candidate, Error = Infallible>,
    J::Found: Clone,
{
    let mut found = Vec::new();
    let judged = verify_from(source, judge, observer, |passed| {
        found.extend_from_slice(passed);
        Ok::<(), Infallible>(())
    });
    let judged = judged
        .map_err(Halt::into_stopped)
        .unwrap_or_else(|never| match never {});
    (found, judged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::observer::Quiet;

    /// Proposes 0..n in batches of `size`, failing at `fail` if given.
    struct Counting {
        n: u32,
        size: usize,
        fail: Option<u32>,
    }

    impl CandidateSource for Counting {
        type Candidate = u32;
        type Error = String;

        fn propose<G: From<String>>(&mut self, take: &mut Take<'_, u32, G>) -> Result<(), G> {
            let all: Vec<u32> = (0..self.n).collect();
            for batch in all.chunks(self.size) {
                if let Some(f) = self.fail.filter(|f| batch.contains(f)) {
                    return Err(G::from(format!("failed at {f}")));
                }
                take(batch)?;
            }
            Ok(())
        }
    }

    /// Passes the even numbers.
    struct Even;

    impl Judge<u32> for Even {
        type Found = u32;
        type Error = String;

        fn judge(
            &self,
            batch: &[u32],
            tally: &mut Tally,
            _: &mut dyn Observer,
        ) -> Result<Vec<u32>, String> {
            tally.candidates += batch.len() as u64;
            let passed: Vec<u32> = batch.iter().copied().filter(|x| x % 2 == 0).collect();
            tally.verified += passed.len() as u64;
            Ok(passed)
        }
    }

    #[test]
    fn every_batch_is_judged_and_its_passes_handed_on_in_order() {
        let mut got = Vec::new();
        let mut batches = 0;
        let mut source = Counting {
            n: 10,
            size: 4,
            fail: None,
        };
        let judged = verify_from(&mut source, &Even, &mut Quiet, |passed: &[u32]| {
            batches += 1;
            got.extend_from_slice(passed);
            Ok::<(), ()>(())
        });
        let judged = judged.ok().expect("nothing fails");
        assert_eq!(got, [0, 2, 4, 6, 8]);
        assert_eq!(batches, 3);
        assert_eq!((judged.tally.candidates, judged.tally.verified), (10, 5));
    }

    #[test]
    fn a_source_failure_and_a_consumer_stop_are_told_apart() {
        let mut source = Counting {
            n: 10,
            size: 4,
            fail: Some(9),
        };
        let mut seen = 0;
        let failed = verify_from(&mut source, &Even, &mut Quiet, |p: &[u32]| {
            seen += p.len();
            Ok::<(), ()>(())
        });
        assert!(matches!(failed, Err(Halt::Failed(ref e)) if e == "failed at 9"));
        assert_eq!(seen, 4, "the two batches before the failure were handed on");

        let mut source = Counting {
            n: 10,
            size: 4,
            fail: None,
        };
        let stopped = verify_from(&mut source, &Even, &mut Quiet, |_: &[u32]| Err("full"));
        assert!(matches!(stopped, Err(Halt::Stopped("full"))));
    }

    #[test]
    fn a_listed_source_proposes_in_bounded_chunks() {
        let pairs: Vec<Link> = (0..(PAIR_CHUNK as u32 + 5)).map(|i| (i, i + 1)).collect();
        let mut sizes = Vec::new();
        Listed(&pairs)
            .propose(&mut |b: &[Link]| {
                sizes.push(b.len());
                Ok::<(), Infallible>(())
            })
            .unwrap_or_else(|never| match never {});
        assert_eq!(sizes, [PAIR_CHUNK, 5]);
    }
}
