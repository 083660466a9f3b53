//! [`Pipeline::run`]: a ready corpus through its engine, into a [`Sink`] or clusters.

use crate::candidates::containment::Contained;
use crate::candidates::containment_search::for_each_expanded;
use crate::cluster::clusters::Clusters;
use crate::error::Error;
use crate::run::method::Goal;
use crate::run::observer::Observer;
use crate::run::pairs::Pair;
use crate::run::pipeline::Pipeline;
use crate::run::stats::Stats;
use crate::run::stream::PairTotals;

use super::intake::{Prepared, Ready};
use super::plan::Engine;

/// Where a pairs run hands its pairs, in chunks of at most
/// [`STREAM_CHUNK`](crate::run::STREAM_CHUNK) as they are verified; the run holds none of
/// them. An error from the sink stops the run and is returned as [`RunError::Sink`].
pub trait Sink {
    /// What the sink can fail with (writing, a stopped consumer).
    type Error;
    /// Pairs by similarity, `a < b`.
    fn pairs(&mut self, chunk: &[Pair]) -> Result<(), Self::Error>;
    /// Containment pairs, `a` contained in the larger `b`, by `(a, b)`.
    fn contained(&mut self, chunk: &[Contained]) -> Result<(), Self::Error>;
}

/// What a run gives, by its plan's goal.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// A pairs run: its totals (the pairs went to the sink).
    Pairs(PairTotals),
    /// A clusters run: the clusters, held compactly.
    Clusters(Clusters),
}

/// Why a run stopped: the library's error, or the sink's.
#[derive(Debug)]
pub enum RunError<E> {
    /// The library's: a corpus past the exact join's numbering, a temporary file that
    /// could not be written or read, a plan that does not fit the corpus.
    Run(Error),
    /// The sink's, which stopped the run.
    Sink(E),
}

impl<E: std::fmt::Display> std::fmt::Display for RunError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Run(e) => e.fmt(f),
            RunError::Sink(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for RunError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Run(e) => Some(e),
            RunError::Sink(e) => Some(e),
        }
    }
}

impl<E> From<Error> for RunError<E> {
    fn from(e: Error) -> Self {
        RunError::Run(e)
    }
}

impl Pipeline {
    /// Runs `ready` through its plan's engine: a pairs run hands every pair to `sink` and
    /// returns its totals; a clusters run returns the clusters. The order of the pairs is
    /// each engine's (see [`Pipeline::for_each_pair_chunk`]); the pairs themselves are the
    /// same whatever the thread count. A corpus on disk runs once (its files are
    /// consumed); a corpus in memory can run again.
    ///
    /// With a reference corpus ([`Held::set_reference`](crate::Held::set_reference)),
    /// pairs of two reference documents are left out, of the pairs and of the totals.
    pub fn run<S: Sink>(
        &self,
        ready: &mut Ready<'_>,
        observer: &mut dyn Observer,
        sink: &mut S,
    ) -> Result<(Outcome, Stats), RunError<S::Error>> {
        let reference = ready.reference();
        if reference == 0 || ready.plan.goal() != Goal::Pairs {
            return self.run_engine(ready, observer, sink);
        }
        let mut outside = OutsideReference {
            sink,
            reference,
            totals: PairTotals::default(),
            in_pairs: vec![0; ready_len(ready).div_ceil(64)],
        };
        let (outcome, stats) = self.run_engine(ready, observer, &mut outside)?;
        let mut totals = outside.totals;
        totals.documents = outside
            .in_pairs
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum();
        Ok(match outcome {
            Outcome::Pairs(_) => (Outcome::Pairs(totals), stats),
            other => (other, stats),
        })
    }

    /// [`Pipeline::run`] without a reference to leave out.
    fn run_engine<S: Sink>(
        &self,
        ready: &mut Ready<'_>,
        observer: &mut dyn Observer,
        sink: &mut S,
    ) -> Result<(Outcome, Stats), RunError<S::Error>> {
        let engine = ready.plan.engine();
        match (ready.plan.goal(), &mut ready.corpus) {
            (Goal::Pairs, Prepared::Sketched(c)) => {
                let streamed = self.for_each_pair_chunk(c, observer, |x| sink.pairs(x));
                pairs_outcome(Ok(streamed))
            }
            (Goal::Pairs, Prepared::Shingled(c)) if engine == Engine::ExactJoin => {
                let streamed = self.exact_for_each_pair_chunk(c, observer, |x| sink.pairs(x));
                pairs_outcome(streamed)
            }
            (Goal::Pairs, Prepared::Shingled(c)) => {
                // The pairs of representatives are held; their copies are streamed.
                let (found, stats) = if engine == Engine::ExactContainment {
                    self.containment_join_found(c, observer)
                } else {
                    self.ensemble_found(c, observer)?
                };
                let mut pairs = 0u64;
                let documents = for_each_expanded(c.corpus(), &found, |chunk| {
                    pairs += chunk.len() as u64;
                    sink.contained(chunk)
                })
                .map_err(RunError::Sink)?;
                let totals = PairTotals {
                    pairs,
                    documents,
                    identical: 0,
                };
                Ok((Outcome::Pairs(totals), stats))
            }
            (Goal::Pairs, Prepared::Disk(spilled, _)) => {
                let spilled = spilled.take().ok_or(Error::CorpusSpent)?;
                pairs_outcome(spilled.for_each_pair_chunk(observer, |x| sink.pairs(x)))
            }
            (Goal::Clusters, Prepared::Sketched(c)) => {
                let (clusters, stats) = self.cluster_set(c, observer);
                Ok((Outcome::Clusters(clusters), stats))
            }
            (Goal::Clusters, Prepared::Shingled(c)) => {
                let (clusters, stats) = self.exact_cluster_set(c, observer)?;
                Ok((Outcome::Clusters(clusters), stats))
            }
            (Goal::Clusters, Prepared::Disk(spilled, ranks)) => {
                let spilled = spilled.take().ok_or(Error::CorpusSpent)?;
                let (clusters, stats) = spilled.cluster_set(ranks.as_deref(), observer)?;
                Ok((Outcome::Clusters(clusters), stats))
            }
        }
    }
}

/// A streamed pairs run's result: the library's error outside, the sink's inside.
fn pairs_outcome<E>(
    streamed: crate::Result<Result<(PairTotals, Stats), E>>,
) -> Result<(Outcome, Stats), RunError<E>> {
    let (totals, stats) = streamed?.map_err(RunError::Sink)?;
    Ok((Outcome::Pairs(totals), stats))
}

/// The documents a ready corpus holds.
fn ready_len(ready: &Ready<'_>) -> usize {
    match &ready.corpus {
        Prepared::Shingled(s) => s.corpus().len(),
        Prepared::Sketched(s) => s.corpus().len(),
        Prepared::Disk(s, _) => s.as_ref().map_or(0, |s| s.len()),
    }
}

/// A sink that hands on the pairs with a document past the reference, and counts them.
struct OutsideReference<'s, S> {
    sink: &'s mut S,
    reference: u32,
    totals: PairTotals,
    /// The documents in a pair handed on, as bits.
    in_pairs: Vec<u64>,
}

impl<S> OutsideReference<'_, S> {
    /// Counts a pair handed on.
    fn count(&mut self, a: u32, b: u32, identical: bool) {
        self.totals.pairs += 1;
        self.totals.identical += u64::from(identical);
        for d in [a, b] {
            self.in_pairs[d as usize / 64] |= 1 << (d % 64);
        }
    }
}

impl<S: Sink> Sink for OutsideReference<'_, S> {
    type Error = S::Error;

    fn pairs(&mut self, chunk: &[Pair]) -> Result<(), Self::Error> {
        // Pairs come `a < b`: one past the reference is `b`.
        let kept: Vec<Pair> = chunk
            .iter()
            .filter(|p| p.b >= self.reference)
            .copied()
            .collect();
        for p in &kept {
            let identical = p.similarity.jaccard == Some(1.0);
            self.count(p.a, p.b, identical);
        }
        self.sink.pairs(&kept)
    }

    fn contained(&mut self, chunk: &[Contained]) -> Result<(), Self::Error> {
        let kept: Vec<Contained> = chunk
            .iter()
            .filter(|p| p.a.max(p.b) >= self.reference)
            .copied()
            .collect();
        for p in &kept {
            self.count(p.a, p.b, false);
        }
        self.sink.contained(&kept)
    }
}
