//! The SimHash walk: candidates are the pairs of representatives whose fingerprints lie
//! within the configured Hamming distance, found by the permuted tables; each is verified
//! like an LSH candidate (exact Jaccard, or nothing with `Verification::None`).

use std::time::Instant;

use crate::candidates::bucket_walk::record;
use crate::candidates::neighbours::Known;
use crate::candidates::simhash::SimHashTables;
use crate::candidates::source::{verify_from, Halt, Listed};
use crate::corpus::sets::Corpus;
use crate::corpus::stages::Sketched;
use crate::run::observer::Observer;
use crate::run::pairs::Pair;
use crate::run::pipeline::Pipeline;
use crate::run::stats::{Stage, Stats};
use crate::verify::verifier::{Policy, Verifier};

impl Pipeline {
    /// Every pair of representatives `a < b` whose fingerprints are within the distance,
    /// sorted; the search's time is the group stage's.
    pub(crate) fn simhash_links(&self, corpus: &Corpus, stats: &mut Stats) -> Vec<(u32, u32)> {
        let (links, buckets, largest) = stats.time(Stage::Group, || {
            let docs: Vec<(u32, u64)> = corpus
                .members()
                .into_iter()
                .filter_map(|d| Some((d, corpus.simhash(d)?)))
                .collect();
            let tables = SimHashTables::for_corpus(self.config.hamming(), docs.len());
            let found = tables.search(&docs);
            let links = found.pairs.into_iter().map(|(a, b, _)| (a, b)).collect();
            (links, found.buckets, found.largest)
        });
        stats.buckets = buckets;
        stats.largest_bucket = largest as u64;
        links
    }

    /// The walk of a SimHash run: its candidates verified chunk by chunk and handed to
    /// `out`. Nothing is looked for beyond the candidates: every pair within the distance
    /// is one already.
    pub(crate) fn simhash_walk<E>(
        &self,
        sketched: &Sketched,
        stats: &mut Stats,
        observer: &mut dyn Observer,
        mut out: impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<Known, E> {
        let corpus = &sketched.corpus;
        let links = self.simhash_links(corpus, stats);
        let verifier = Verifier::new(corpus, Policy::new(&self.config));
        let mut known = Known::new(corpus.len(), false);
        observer.start(Stage::Verify, links.len() as u64);
        let start = Instant::now();
        let walked = verify_from(&mut Listed(&links), &verifier, observer, |passed| {
            passed.iter().for_each(|p| known.note(p));
            out(passed)
        });
        stats.timings.push((Stage::Verify, start.elapsed()));
        observer.finish();
        let tally = walked.map_err(Halt::into_stopped)?.tally;
        record(stats, tally, Default::default());
        Ok(known)
    }
}
