//! Candidates beyond the buckets, checked like any other: every pair with one of the
//! largest groups of copies (found exactly, see [`crate::candidates::large_groups`]), then pairs of
//! representatives that are both verified near-duplicates of a third. A document that
//! misses one member of a family of near-duplicates in every band often hits another; the
//! second step finds the pair anyway. Pairs that collided in a band were candidates
//! already and are skipped.

use std::convert::Infallible;

use rayon::prelude::*;

use crate::candidates::band_index::BandIndex;
use crate::candidates::source::{verify_from, CandidateSource, Halt, Link, Listed, Take};
use crate::corpus::sets::Corpus;
use crate::run::observer::Observer;
use crate::run::pairs::Pair;
use crate::run::pipeline::PAIR_CHUNK;
use crate::verify::verifier::{Tally, Verifier};

/// A document's verified neighbours are paired with each other only up to this many:
/// beyond it, a hub of near-duplicates would make C(d, 2) candidates. A list stops
/// growing one past it, so memory per document is bounded whatever the number of pairs.
pub(crate) const MAX_NEIGHBOURS: usize = 256;

/// Candidates of the shared-neighbour step sorted and verified at a time (bounds memory).
const NEIGHBOUR_BATCH: u64 = 1 << 22;

/// What the walk keeps while it streams: per representative, whether it is in a pair and
/// (for the shared-neighbour step) its first `MAX_NEIGHBOURS + 1` verified neighbours.
pub(crate) struct Known {
    pub(crate) paired: Vec<bool>,
    neighbours: Option<Vec<Vec<u32>>>,
}

impl Known {
    /// Nothing known of `documents` documents; neighbours are kept if `neighbours`.
    pub(crate) fn new(documents: usize, neighbours: bool) -> Self {
        Known {
            paired: vec![false; documents],
            neighbours: neighbours.then(|| vec![Vec::new(); documents]),
        }
    }

    pub(crate) fn note(&mut self, p: &Pair) {
        self.paired[p.a as usize] = true;
        self.paired[p.b as usize] = true;
        if let Some(lists) = &mut self.neighbours {
            for (x, y) in [(p.a, p.b), (p.b, p.a)] {
                let list = &mut lists[x as usize];
                if list.len() <= MAX_NEIGHBOURS {
                    list.push(y);
                }
            }
        }
    }
}

/// The steps beyond the buckets of one walk.
pub(crate) struct Beyond<'a> {
    pub(crate) corpus: &'a Corpus,
    pub(crate) index: &'a BandIndex<'a>,
    pub(crate) threshold: f64,
}

impl Beyond<'_> {
    /// Whether a proposed pair is new: compared in a family and never collided there
    /// (those that collided were candidates already).
    fn fresh(&self, (a, b): Link) -> bool {
        self.corpus
            .shared_family(a, b)
            .is_some_and(|family| !self.index.collide_in_family(a, b, family))
    }

    /// Verifies the large groups' candidates, then the shared neighbours', handing the
    /// verified pairs to `out`; returns the tally of each step.
    pub(crate) fn walk<E>(
        &self,
        verifier: &Verifier<'_>,
        known: &mut Known,
        observer: &mut dyn Observer,
        out: &mut impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<[Tally; 2], E> {
        let proposed: Vec<Link> =
            crate::candidates::large_groups::pairs_near_large_groups(self.corpus, self.threshold)
                .into_par_iter()
                .filter(|&l| self.fresh(l))
                .collect();
        // Known pairs that did not collide: the large groups' (sorted, as proposed).
        let mut large: Vec<Link> = Vec::new();
        let large_tally = verify_from(&mut Listed(&proposed), verifier, observer, |passed| {
            passed.iter().for_each(|p| known.note(p));
            large.extend(passed.iter().map(|p| (p.a, p.b)));
            out(passed)
        })
        .map_err(Halt::into_stopped)?
        .tally;
        let Some(lists) = known.neighbours.take() else {
            return Ok([large_tally, Tally::default()]);
        };
        let mut shared = SharedNeighbours {
            beyond: self,
            lists,
            large: &large,
        };
        let near_tally = verify_from(&mut shared, verifier, observer, |passed| {
            for p in passed {
                known.paired[p.a as usize] = true;
                known.paired[p.b as usize] = true;
            }
            out(passed)
        })
        .map_err(Halt::into_stopped)?
        .tally;
        Ok([large_tally, near_tally])
    }
}

/// Pairs of representatives that are both verified neighbours of a third (one with 2 to
/// [`MAX_NEIGHBOURS`] of them), new to the walk, in batches of about `NEIGHBOUR_BATCH`.
struct SharedNeighbours<'a> {
    beyond: &'a Beyond<'a>,
    lists: Vec<Vec<u32>>,
    /// The large groups' verified pairs, sorted: known already.
    large: &'a [Link],
}

impl CandidateSource for SharedNeighbours<'_> {
    type Candidate = Link;
    type Error = Infallible;

    fn propose<G: From<Infallible>>(&mut self, take: &mut Take<'_, Link, G>) -> Result<(), G> {
        let lists = &mut self.lists;
        lists.par_iter_mut().for_each(|l| l.sort_unstable());
        let eligible = |l: &&Vec<u32>| (2..=MAX_NEIGHBOURS).contains(&l.len());
        // How many pairs each document proposes as the lower one: cuts the work into
        // batches of about NEIGHBOUR_BATCH, each sorted and deduplicated on its own.
        let mut lower = vec![0u64; self.beyond.corpus.len()];
        for l in lists.iter().filter(eligible) {
            for (i, &x) in l.iter().enumerate() {
                lower[x as usize] += (l.len() - 1 - i) as u64;
            }
        }
        for range in batches(&lower, NEIGHBOUR_BATCH) {
            let range = range.start as u32..range.end as u32;
            let mut proposed: Vec<Link> = lists
                .par_iter()
                .filter(eligible)
                .flat_map_iter(|l| {
                    let range = range.clone();
                    l.iter()
                        .enumerate()
                        .filter(move |(_, x)| range.contains(x))
                        .flat_map(move |(i, &x)| l[i + 1..].iter().map(move |&y| (x, y)))
                })
                .collect();
            proposed.par_sort_unstable();
            proposed.dedup();
            proposed.retain(|&l| self.large.binary_search(&l).is_err());
            let fresh: Vec<Link> = proposed
                .into_par_iter()
                .filter(|&l| self.beyond.fresh(l))
                .collect();
            fresh.chunks(PAIR_CHUNK).try_for_each(&mut *take)?;
        }
        Ok(())
    }
}

/// Consecutive ranges of documents, each with at most `limit` in total of `counts` (or a
/// single document over it), leaving out ranges with nothing.
fn batches(counts: &[u64], limit: u64) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while from < counts.len() {
        let (mut to, mut size) = (from, 0u64);
        while to < counts.len() && (to == from || size + counts[to] <= limit) {
            size += counts[to];
            to += 1;
        }
        if size > 0 {
            out.push(from..to);
        }
        from = to;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::clusters::Similarity;

    #[test]
    fn batches_cover_every_count_within_the_limit() {
        let counts = [3, 0, 4, 9, 1, 1, 0, 0, 2];
        let got = batches(&counts, 5);
        assert_eq!(got, vec![0..2, 2..3, 3..4, 4..9]);
        let covered: u64 = got
            .iter()
            .map(|r| counts[r.clone()].iter().sum::<u64>())
            .sum();
        assert_eq!(covered, counts.iter().sum::<u64>());
        assert!(batches(&[0, 0], 5).is_empty());
        assert_eq!(batches(&[1, 1, 1], 100), vec![0..3]);
    }

    #[test]
    fn neighbour_lists_stop_one_past_the_cap() {
        let mut known = Known::new(400, true);
        let sim = Similarity {
            jaccard: Some(0.9),
            estimate: None,
            truncated: false,
            hamming: None,
        };
        for b in 1..400 {
            known.note(&Pair {
                a: 0,
                b,
                similarity: sim,
            });
        }
        let lists = known.neighbours.unwrap();
        assert_eq!(lists[0].len(), MAX_NEIGHBOURS + 1);
        assert_eq!(lists[399], vec![0]);
        assert!(known.paired.iter().all(|&p| p));
    }
}
