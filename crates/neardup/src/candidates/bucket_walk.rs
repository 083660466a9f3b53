//! The bucket walk: band keys grouped by sorting, then every pair of representatives that
//! shares a bucket verified once, in the first band where it collides, chunk by chunk.

use std::time::Instant;

use crate::candidates::band_index::BandIndex;
use crate::candidates::bands::BandPlan;
use crate::candidates::neighbours::{self as beyond, Known};
use crate::candidates::source::{verify_from, BandBuckets, Halt};
use crate::corpus::sets::Corpus;
use crate::corpus::stages::Sketched;
use crate::run::observer::Observer;
use crate::run::pairs::Pair;
use crate::run::pipeline::Pipeline;
use crate::run::stats::{Stage, Stats};
use crate::verify::verifier::{Policy, Tally, Verifier};

/// Band keys of every sketched document, grouped by sorting; records bucket counters.
///
/// Each sketch family has its own bands (family f owns bands f·b .. (f+1)·b), so
/// signatures of different sketches are never compared.
pub(crate) fn band_index<'a>(
    plan: BandPlan,
    corpus: &'a Corpus,
    stats: &mut Stats,
) -> BandIndex<'a> {
    let (index, (buckets, largest)) = stats.time(Stage::Group, || {
        let b = plan.bands();
        let families = corpus.num_families().max(1);
        let members = corpus.members();
        let per_family: Vec<Vec<u32>> = (0..families)
            .map(|f| {
                members
                    .iter()
                    .copied()
                    .filter(|&d| corpus.in_family(f, d))
                    .collect()
            })
            .collect();
        let per_band: Vec<&[u32]> = (0..b * families)
            .map(|band| per_family[band / b].as_slice())
            .collect();
        // The corpus's own rows of keys: a copy would cost 8 bytes per band and document.
        let index = BandIndex::over(b * families, b, corpus, &per_band);
        let counts = index.bucket_stats();
        (index, counts)
    });
    stats.buckets = buckets;
    stats.largest_bucket = largest as u64;
    index
}

impl Pipeline {
    /// The LSH walk: verifies bucket candidates chunk by chunk, then (if configured) the
    /// candidates beyond the buckets, handing each batch of verified pairs of
    /// representatives to `out`; fills the counters of `stats`.
    pub(crate) fn walk<E>(
        &self,
        sketched: &Sketched,
        stats: &mut Stats,
        observer: &mut dyn Observer,
        mut out: impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<Known, E> {
        if !self.config.sketch().is_minhash() {
            return self.simhash_walk(sketched, stats, observer, out);
        }
        let corpus = &sketched.corpus;
        let index = band_index(self.config.plan(), corpus, stats);
        let verifier = Verifier::new(corpus, Policy::new(&self.config));
        let mut known = Known::new(corpus.len(), self.config.neighbours());
        observer.start(Stage::Verify, 0);
        let start = Instant::now();
        let mut buckets = BandBuckets {
            index: &index,
            corpus,
        };
        let walked = verify_from(&mut buckets, &verifier, observer, |passed| {
            passed.iter().for_each(|p| known.note(p));
            out(passed)
        })
        .map_err(Halt::into_stopped)
        .and_then(|judged| {
            let beyond = if self.config.neighbours() {
                let beyond = beyond::Beyond {
                    corpus,
                    index: &index,
                    threshold: self.config.tested_threshold(),
                };
                beyond.walk(&verifier, &mut known, observer, &mut out)?
            } else {
                Default::default()
            };
            Ok((judged.tally, beyond))
        });
        stats.timings.push((Stage::Verify, start.elapsed()));
        observer.finish();
        let (tally, through) = walked?;
        record(stats, tally, through);
        Ok(known)
    }
}

/// The counters of a walk: `tally` of the buckets', `large` and `near` of the steps beyond.
pub(crate) fn record(stats: &mut Stats, tally: Tally, [large, near]: [Tally; 2]) {
    let mut all = tally;
    all += large;
    all += near;
    stats.candidates = all.candidates;
    stats.verified = all.verified;
    stats.prefiltered = all.prefiltered;
    stats.merged = all.merged;
    stats.truncated_pairs = all.truncated;
    (stats.large_group_candidates, stats.large_group_verified) = (large.candidates, large.verified);
    (stats.neighbour_candidates, stats.neighbour_verified) = (near.candidates, near.verified);
}
