//! Verified pairs, held compactly and expanded to document pairs on demand.
//!
//! A corpus full of copies has far more pairs than documents: 841,708 PyPI summaries give
//! 27.6 million pairs, 26.9 million of them between identical texts. Pairs are kept as
//! the pairs between representatives (one per group of identical sets) plus the groups,
//! and expanded in document order, a bounded chunk at a time, when they are written.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::cluster::clusters::Similarity;
use crate::corpus::sets::Corpus;
use crate::corpus::slot::{doc_id, doc_ids, Slot};
use crate::error::Error;

/// Totals of a streamed pairs run, known once the stream ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairTotals {
    /// Document pairs produced.
    pub pairs: u64,
    /// Documents in at least one pair.
    pub documents: u64,
    /// Of the pairs, those between documents with identical shingle sets.
    pub identical: u64,
}

/// A reported pair of documents `a < b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    /// The lower document index.
    pub a: u32,
    /// The higher document index.
    pub b: u32,
    /// How similar they are.
    pub similarity: Similarity,
}

/// Both directions of every edge `(a, b, value)`, grouped by node (compressed rows): node
/// `x`'s neighbours are `adjacent[start[x]..start[x + 1]]`, in edge order. Nodes are
/// numbered below `n`.
pub(crate) fn adjacency<T: Copy + Default>(
    n: usize,
    edges: impl Iterator<Item = (u32, u32, T)> + Clone,
) -> (Vec<usize>, Vec<(u32, T)>) {
    let mut start = vec![0usize; n + 1];
    for (a, b, _) in edges.clone() {
        start[a as usize + 1] += 1;
        start[b as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut adjacent = vec![(0u32, T::default()); start[n]];
    for (a, b, v) in edges {
        for (x, y) in [(a, b), (b, a)] {
            adjacent[fill[x as usize]] = (y, v);
            fill[x as usize] += 1;
        }
    }
    (start, adjacent)
}

/// Documents expanded per parallel task: small enough to balance, large enough to amortize.
const DOCS_PER_TASK: usize = 1 << 12;

/// The documents of each representative's group of identical sets (itself if alone).
#[derive(Default)]
pub(crate) struct Groups {
    /// For a representative, the index of its group in `groups`.
    of: HashMap<u32, usize>,
    groups: Vec<Vec<u32>>,
}

impl Groups {
    pub(crate) fn new(corpus: &Corpus) -> Self {
        Self::from_groups(corpus.identical_groups())
    }

    /// Groups of two or more, each sorted, in order of their first (representative).
    pub(crate) fn from_groups(groups: Vec<Vec<u32>>) -> Self {
        let of = groups.iter().enumerate().map(|(i, g)| (g[0], i)).collect();
        Groups { of, groups }
    }

    /// The sorted members of a representative's group.
    pub(crate) fn members<'a>(&'a self, rep: &'a u32) -> &'a [u32] {
        match self.of.get(rep) {
            Some(&i) => &self.groups[i],
            None => std::slice::from_ref(rep),
        }
    }

    /// Pairs inside the groups: C(n, 2) summed over groups of n identical documents.
    fn inner_pairs(&self) -> u64 {
        let pairs = |g: &Vec<u32>| g.len() as u64 * (g.len() as u64 - 1) / 2;
        self.groups.iter().map(pairs).sum()
    }

    /// Every group of two or more, representative first, in order of representatives.
    pub(crate) fn all(&self) -> &[Vec<u32>] {
        &self.groups
    }
}

/// All verified pairs of a corpus: pairs between representatives, and identical copies.
///
/// Every pair of documents from two paired groups is a pair, with the representatives'
/// similarity; every two documents of one group are a pair with similarity 1.
pub struct PairSet {
    groups: Groups,
    /// Each document's representative; none for a skipped document.
    rep: Vec<Slot>,
    /// For each representative, the representatives it is paired with (CSR).
    start: Vec<usize>,
    neighbours: Vec<(u32, Similarity)>,
    rep_pairs: Vec<Pair>,
    identical: Similarity,
    len: u64,
}

impl PairSet {
    /// The pairs from pairs between representatives (`a < b`, each once), with identical
    /// documents paired at `identical`.
    pub(crate) fn new(corpus: &Corpus, mut rep_pairs: Vec<Pair>, identical: Similarity) -> Self {
        rep_pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
        let groups = Groups::new(corpus);
        let n = corpus.len();
        let rep: Vec<Slot> = doc_ids(n)
            .map(|d| {
                if corpus.has_shingles(d) {
                    Slot::new(corpus.representative(d))
                } else {
                    Slot::NONE
                }
            })
            .collect();
        let (start, neighbours) = adjacency(n, rep_pairs.iter().map(|p| (p.a, p.b, p.similarity)));
        let size = |r: u32| groups.members(&r).len() as u64;
        let len =
            rep_pairs.iter().map(|p| size(p.a) * size(p.b)).sum::<u64>() + groups.inner_pairs();
        PairSet {
            groups,
            rep,
            start,
            neighbours,
            rep_pairs,
            identical,
            len,
        }
    }

    /// The pair set of a corpus from verified pairs of its documents, e.g. pairs found
    /// elsewhere (another process, a cluster job) for a corpus shingled here.
    ///
    /// A pair stands for its documents' groups of identical copies: it is taken as the pair
    /// of their representatives, and so pairs every copy of one with every copy of the
    /// other; the documents of a group are paired with each other at `identical` whether or
    /// not a pair names them. Pairs may come in any order and either way round; of several
    /// pairs between the same two groups the first is kept. A pair that names a document
    /// out of range, a document with no shingles, or one document twice is refused
    /// ([`Error::InvalidPair`]).
    ///
    /// ```
    /// use neardup::{Config, Pair, Pipeline, Quiet, Similarity};
    /// use neardup::run::PairSet;
    /// let pipeline = Pipeline::new(Config::builder().threshold(0.8).build()?)?;
    /// let texts = ["a red bicycle for sale", "a red bicycle for sale", "A red bicycle for sale!"];
    /// let corpus = pipeline.shingle(&texts)?;
    /// let found = Similarity { jaccard: Some(0.9), estimate: None, truncated: false, hamming: None };
    /// let identical = Similarity { jaccard: Some(1.0), ..found };
    /// let set = PairSet::from_pairs(corpus.corpus(), [Pair { a: 2, b: 0, similarity: found }], identical)?;
    /// let pairs: Vec<(u32, u32)> = set.to_vec().iter().map(|p| (p.a, p.b)).collect();
    /// assert_eq!(pairs, [(0, 1), (0, 2), (1, 2)]); // the copy 1 is paired too
    /// # Ok::<(), neardup::Error>(())
    /// ```
    pub fn from_pairs(
        corpus: &Corpus,
        pairs: impl IntoIterator<Item = Pair>,
        identical: Similarity,
    ) -> crate::Result<Self> {
        let n = corpus.len();
        let takes_part = |d: u32| (d as usize) < n && corpus.has_shingles(d);
        let mut reps = Vec::new();
        for p in pairs {
            if p.a == p.b || !takes_part(p.a) || !takes_part(p.b) {
                return Err(Error::InvalidPair {
                    a: p.a,
                    b: p.b,
                    documents: n,
                });
            }
            let (x, y) = (corpus.representative(p.a), corpus.representative(p.b));
            if x != y {
                let (a, b) = (x.min(y), x.max(y));
                reps.push(Pair { a, b, ..p });
            }
        }
        // Stable: of repeats, the first given stays.
        reps.sort_by_key(|p| (p.a, p.b));
        reps.dedup_by_key(|p| (p.a, p.b));
        Ok(PairSet::new(corpus, reps, identical))
    }

    /// The totals a stream of these pairs reports: pairs, documents in a pair, and pairs
    /// of identical documents.
    pub fn totals(&self) -> PairTotals {
        PairTotals {
            pairs: self.len,
            documents: self.documents(),
            identical: self.groups.inner_pairs(),
        }
    }

    /// Number of pairs.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True if there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pairs between representatives: one per pair of distinct shingle sets.
    pub fn distinct(&self) -> &[Pair] {
        &self.rep_pairs
    }

    /// Groups of two or more documents with identical shingle sets, representative first.
    pub fn identical_groups(&self) -> &[Vec<u32>] {
        &self.groups.groups
    }

    /// The similarity reported for two documents with identical shingle sets.
    pub fn identical_similarity(&self) -> Similarity {
        self.identical
    }

    /// Number of documents in at least one pair.
    pub fn documents(&self) -> u64 {
        self.rep
            .iter()
            .filter_map(|r| r.get())
            .filter(|&r| {
                self.groups.members(&r).len() > 1
                    || self.start[r as usize] < self.start[r as usize + 1]
            })
            .count() as u64
    }

    /// Appends the pairs whose lower document is `a`, sorted by `b`.
    fn pairs_of(&self, a: u32, out: &mut Vec<Pair>) {
        let Some(r) = self.rep[a as usize].get() else {
            return;
        };
        let from = out.len();
        let own = self.groups.members(&r);
        let mut push = |members: &[u32], similarity: Similarity| {
            let i = members.partition_point(|&d| d <= a);
            out.extend(members[i..].iter().map(|&b| Pair { a, b, similarity }));
        };
        push(own, self.identical);
        for &(other, similarity) in
            &self.neighbours[self.start[r as usize]..self.start[r as usize + 1]]
        {
            push(self.groups.members(&other), similarity);
        }
        out[from..].sort_unstable_by_key(|p| p.b);
    }

    /// The pairs whose lower document is in `docs`, sorted by `(a, b)`.
    fn pairs_in(&self, docs: std::ops::Range<usize>) -> Vec<Pair> {
        let mut out = Vec::new();
        for a in docs {
            self.pairs_of(doc_id(a), &mut out);
        }
        out
    }

    /// Calls `f` with every pair, sorted by `(a, b)`, in chunks of about `chunk` pairs
    /// (a chunk holds whole documents' pairs, so one may be larger). Chunks are expanded
    /// in parallel; only a few are held at a time.
    pub fn for_each_chunk<E>(
        &self,
        chunk: usize,
        mut f: impl FnMut(&[Pair]) -> Result<(), E>,
    ) -> Result<(), E> {
        let n = self.rep.len();
        let tasks: Vec<std::ops::Range<usize>> = (0..n)
            .step_by(DOCS_PER_TASK)
            .map(|s| s..(s + DOCS_PER_TASK).min(n))
            .collect();
        // Tasks per parallel round: one per thread's share, several for balance.
        let round = rayon::current_num_threads().max(1) * 4;
        let mut pending: Vec<Pair> = Vec::new();
        for batch in tasks.chunks(round) {
            let expanded: Vec<Vec<Pair>> =
                batch.par_iter().map(|r| self.pairs_in(r.clone())).collect();
            for part in expanded {
                pending.extend_from_slice(&part);
                if pending.len() >= chunk {
                    f(&pending)?;
                    pending.clear();
                }
            }
        }
        if !pending.is_empty() {
            f(&pending)?;
        }
        Ok(())
    }

    /// All pairs, sorted by `(a, b)`.
    pub fn to_vec(&self) -> Vec<Pair> {
        let mut all = Vec::with_capacity(self.len as usize);
        let _ = self.for_each_chunk(1 << 16, |c| {
            all.extend_from_slice(c);
            Ok::<(), std::convert::Infallible>(())
        });
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::shingle::{ShingleKind, Shingler};
    use crate::verify::jaccard::jaccard;

    /// Copies of three texts and a near-copy, interleaved, with an empty document.
    fn corpus() -> Corpus {
        let base = [
            "the cat sat on the mat and looked at the door",
            "the cat sat on the mat and looked at the doors",
            "a completely different sentence about the weather",
        ];
        let order = [0, 2, 1, 0, 9, 2, 0, 1, 2, 2, 0];
        let texts: Vec<&str> = order
            .iter()
            .map(|&i| base.get(i).copied().unwrap_or(""))
            .collect();
        Corpus::shingle(&Shingler::new(ShingleKind::Char(3)), &texts)
    }

    #[test]
    fn expands_to_every_pair_in_order_whatever_the_chunk() {
        let c = corpus();
        let sim = |j: f64| Similarity {
            jaccard: Some(j),
            estimate: None,
            truncated: false,
            hamming: None,
        };
        let members = c.members();
        let mut rep_pairs = Vec::new();
        for (i, &a) in members.iter().enumerate() {
            for &b in &members[i + 1..] {
                let j = jaccard(c.set(a), c.set(b));
                if j >= 0.5 {
                    rep_pairs.push(Pair {
                        a: b.min(a),
                        b: a.max(b),
                        similarity: sim(j),
                    });
                }
            }
        }
        assert_eq!(rep_pairs.len(), 1, "only the near-copy pairs across groups");
        // Brute force over all documents: every pair of non-empty documents ≥ 0.5.
        let n = c.len() as u32;
        let mut expected = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                if c.has_shingles(a) && c.has_shingles(b) {
                    let j = jaccard(c.set(a), c.set(b));
                    if j >= 0.5 {
                        expected.push(Pair {
                            a,
                            b,
                            similarity: sim(j),
                        });
                    }
                }
            }
        }
        let set = PairSet::new(&c, rep_pairs, sim(1.0));
        assert_eq!(set.to_vec(), expected);
        assert_eq!(set.len(), expected.len() as u64);
        let mut in_pairs: Vec<u32> = expected.iter().flat_map(|p| [p.a, p.b]).collect();
        in_pairs.sort_unstable();
        in_pairs.dedup();
        assert_eq!(set.documents(), in_pairs.len() as u64);
        for chunk in [1, 3, 1 << 20] {
            let mut seen = Vec::new();
            set.for_each_chunk(chunk, |c| {
                assert!(!c.is_empty());
                seen.extend_from_slice(c);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(seen, expected, "chunk {chunk}");
        }
        // A failing consumer stops the walk with its error.
        let mut calls = 0;
        let stopped = set.for_each_chunk(1, |_| {
            calls += 1;
            Err("full disk")
        });
        assert_eq!((stopped, calls), (Err("full disk"), 1));
    }
}
