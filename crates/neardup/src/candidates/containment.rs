//! Containment: how much of a smaller document lies inside a larger one, |A ∩ B| / |A|.
//!
//! A fragment copied into a long page (a quoted paragraph, a listing pasted into a digest)
//! has a high containment and a low Jaccard similarity: for |B| = ρ·|A|, containment c
//! means Jaccard c / (1 + ρ − c). Two ways to find every pair with containment ≥ t:
//!
//! - [`ContainmentJoin`], exact: prefix filtering with the rarest tokens first. A set A
//!   can only be contained at t in B if B holds k of A's |A| − ⌈t·|A|⌉ + k rarest
//!   tokens, so only those tokens are looked up, only the documents holding one of them
//!   are indexed under it, and only those holding k of them are compared.
//! - [`EnsemblePlan`], LSH Ensemble-style (Zhu, Nargesian, Pu and Miller 2016):
//!   documents are partitioned by set size (powers of two); for a query A and a partition
//!   whose largest set is u, a containment of t means a Jaccard of at least
//!   t·|A| / (|A| + u − t·|A|), and the rows per band are chosen for that Jaccard. Every
//!   candidate is verified exactly, so precision is 1 and recall is what the plan gives.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::candidates::exact_join::JoinStats;
use crate::text::ids::Shingle;
use crate::verify::jaccard::{intersection_at_least, jaccard_from_counts};

/// A document `a` contained in a document `b` at `containment` = |A ∩ B| / |A|, A being the
/// smaller set (on equal sizes, the lower document number).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contained {
    /// The contained (smaller) document.
    pub a: u32,
    /// The containing document.
    pub b: u32,
    /// |A ∩ B| / |A|.
    pub containment: f64,
    /// |A ∩ B| / |A ∪ B|.
    pub jaccard: f64,
}

/// Whether document `a` of `len_a` shingles is the smaller of the two: fewer shingles, or
/// as many and a lower number. Every pair is looked at from its smaller side.
pub fn is_smaller(len_a: usize, a: u32, len_b: usize, b: u32) -> bool {
    (len_a, a) < (len_b, b)
}

/// The least overlap with which a set of `len` shingles is contained at `threshold`:
/// ⌈t·len⌉ as the containment test itself computes it (at least 1).
pub(crate) fn required_containment(len: usize, threshold: f64) -> usize {
    let passes =
        |o: usize| crate::verify::jaccard::meets_threshold(o as f64 / len as f64, threshold);
    let mut o = ((threshold * len as f64).floor() as usize).clamp(1, len.max(1));
    while o > 1 && passes(o - 1) {
        o -= 1;
    }
    while o <= len && !passes(o) {
        o += 1;
    }
    o
}

/// The pair of `a` (the smaller) and `b` if A is contained in B at `threshold`.
pub fn contained<S: Shingle>(a: (u32, &[S]), b: (u32, &[S]), threshold: f64) -> Option<Contained> {
    let (sa, sb) = (a.1, b.1);
    if sa.is_empty() {
        return None;
    }
    let required = required_containment(sa.len(), threshold);
    let n = overlap_at_least(sa, sb, required)?;
    Some(Contained {
        a: a.0,
        b: b.0,
        containment: n as f64 / sa.len() as f64,
        jaccard: jaccard_from_counts(n, sa.len(), sb.len()),
    })
}

/// |A ∩ B| if at least `required`: by galloping through B when it is much larger than A
/// (|A| log |B| instead of |A| + |B|), else by the merge.
fn overlap_at_least<S: Shingle>(a: &[S], b: &[S], required: usize) -> Option<usize> {
    if b.len() < 16 * a.len() {
        return intersection_at_least(a, b, required);
    }
    let (mut n, mut from) = (0usize, 0usize);
    for (i, x) in a.iter().enumerate() {
        if n + (a.len() - i) < required {
            return None;
        }
        // Exponential search from where the last element was found.
        let rest = &b[from..];
        let mut step = 1;
        while step < rest.len() && rest[step] < *x {
            step *= 2;
        }
        let window = &rest[..(step + 1).min(rest.len())];
        match window.binary_search(x) {
            Ok(at) => {
                n += 1;
                from += at + 1;
            }
            Err(at) => from += at,
        }
    }
    (n >= required).then_some(n)
}

/// How many of `sets` hold each token.
pub(crate) fn token_counts<S: Shingle>(
    sets: &[&[S]],
) -> HashMap<S, u32, foldhash::fast::FixedState> {
    sets.par_iter()
        .fold(HashMap::default, |mut m: HashMap<S, u32, _>, s| {
            for &x in s.iter() {
                *m.entry(x).or_insert(0) += 1;
            }
            m
        })
        .reduce(HashMap::default, |a, b| {
            let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
            for (k, v) in small {
                *big.entry(k).or_insert(0) += v;
            }
            big
        })
}

/// Tokens of the prefix a containing set must share with A, at most: the prefix is that
/// many − 1 tokens longer than the least one, and sets sharing fewer are never merged.
/// On long pages full of boilerplate the least prefix holds common tokens, and one shared
/// token makes a candidate of most of the corpus.
const PREFIX_MATCHES: usize = 8;

/// The exact containment join: every pair of documents with containment ≥ t.
#[derive(Clone, Copy, Debug)]
pub struct ContainmentJoin {
    threshold: f64,
}

impl ContainmentJoin {
    /// A join at containment `threshold` (in `MIN_THRESHOLD..=1`, checked by `Config`).
    pub fn new(threshold: f64) -> Self {
        ContainmentJoin { threshold }
    }

    /// Every pair of `sets` (sorted, deduplicated; an empty set takes no part) with the
    /// smaller contained in the larger at the threshold, sorted by `(a, b)`.
    ///
    /// ```
    /// use neardup::Shingler;
    /// use neardup::candidates::ContainmentJoin;
    /// let s = Shingler::default();
    /// let brief = s.shingle_set("Markets closed higher on Friday after a quiet week");
    /// let digest = s.shingle_set(
    ///     "Weather: rain all weekend. Markets closed higher on Friday after a quiet week. Sport: ...",
    /// );
    /// let (pairs, _) = ContainmentJoin::new(0.9).join(&[&digest[..], &brief[..]]);
    /// assert_eq!((pairs[0].a, pairs[0].b, pairs[0].containment), (1, 0, 1.0));
    /// assert!(pairs[0].jaccard < 0.6);
    /// ```
    pub fn join<S: Shingle>(&self, sets: &[&[S]]) -> (Vec<Contained>, JoinStats) {
        let t = self.threshold;
        // How many sets hold each token: the rarest come first in every prefix.
        let counts = token_counts(sets);
        let rank = |x: S| (counts.get(&x).copied().unwrap_or(0), x);
        // Each set's prefix: its |A| − o + k rarest tokens, of which a set containing A
        // at t holds at least k (A's other o − k tokens can give it no more than o − k).
        let matches = |len: usize| required_containment(len, t).min(PREFIX_MATCHES);
        let prefixes: Vec<Vec<S>> = sets
            .par_iter()
            .map(|s| {
                if s.is_empty() {
                    return Vec::new();
                }
                let keep = s.len() - required_containment(s.len(), t) + matches(s.len());
                let mut ranked: Vec<(u32, S)> = s.iter().map(|&x| rank(x)).collect();
                if keep < ranked.len() {
                    ranked.select_nth_unstable(keep - 1);
                    ranked.truncate(keep);
                }
                ranked.into_iter().map(|(_, x)| x).collect()
            })
            .collect();
        drop(counts);
        let mut probed: Vec<S> = prefixes.iter().flatten().copied().collect();
        probed.par_sort_unstable();
        probed.dedup();
        // Postings of the probed tokens only: (token, document), grouped by token.
        let mut postings: Vec<(S, u32)> = sets
            .par_iter()
            .enumerate()
            .flat_map_iter(|(d, s)| {
                let probed = &probed;
                s.iter()
                    .filter(move |x| probed.binary_search(x).is_ok())
                    .map(move |&x| (x, d as u32))
            })
            .collect();
        postings.par_sort_unstable();
        let lookup = |x: S| {
            let lo = postings.partition_point(|p| p.0 < x);
            let hi = postings.partition_point(|p| p.0 <= x);
            &postings[lo..hi]
        };
        let per_doc: Vec<(Vec<Contained>, JoinStats)> = prefixes
            .par_iter()
            .enumerate()
            .map(|(a, prefix)| {
                let a = a as u32;
                let sa = sets[a as usize];
                let mut stats = JoinStats::default();
                let mut candidates: Vec<u32> = Vec::new();
                for &x in prefix {
                    let list = lookup(x);
                    stats.postings += list.len() as u64;
                    candidates.extend(
                        list.iter()
                            .map(|p| p.1)
                            .filter(|&b| is_smaller(sa.len(), a, sets[b as usize].len(), b)),
                    );
                }
                candidates.sort_unstable();
                // Only a set that holds k of the prefix's tokens can contain A.
                let k = matches(sa.len());
                let candidates: Vec<u32> = candidates
                    .chunk_by(|x, y| x == y)
                    .filter(|run| run.len() >= k)
                    .map(|run| run[0])
                    .collect();
                stats.candidates = candidates.len() as u64;
                let found: Vec<Contained> = candidates
                    .iter()
                    .filter_map(|&b| {
                        stats.merged += (sa.len() + sets[b as usize].len()) as u64;
                        contained((a, sa), (b, sets[b as usize]), t)
                    })
                    .collect();
                stats.verified = stats.candidates;
                stats.pairs = found.len() as u64;
                (found, stats)
            })
            .collect();
        let mut stats = JoinStats::default();
        let mut pairs = Vec::new();
        for (found, s) in per_doc {
            stats += s;
            pairs.extend(found);
        }
        pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
        (pairs, stats)
    }
}

/// The most documents a one-row bucket of a containment search may hold. A band of one
/// row keys a document by one minimum hash, so a shingle common to much of the corpus
/// (a word every page has) makes a bucket of most of it: comparing its members pairwise
/// would cost more than the exact join. Pairs are found in their other bands; the
/// evaluation against the exact join measures what this costs in recall.
pub const MAX_ONE_ROW_BUCKET: usize = 1024;

/// A token held by more than this share of the documents is left out of the containment
/// search's signatures (never out of verification): a word most pages have makes a bucket
/// of most of the corpus in a one-row band, where the rarer tokens tell which documents
/// share text.
pub const COMMON_TOKEN_SHARE: f64 = 0.01;

/// A token held by more than this many of `n` sets is common: [`COMMON_TOKEN_SHARE`] of
/// them, and at least 16 (in a small corpus no token is common).
pub(crate) fn common_floor(n: usize) -> u32 {
    ((n as f64 * COMMON_TOKEN_SHARE) as u32).max(16)
}

/// Counts, batch by batch, how many sets hold each token, to find the common ones: what a
/// containment search leaves out of its signatures.
/// Tokens are 64-bit hashes by default, or a corpus's 32-bit ids.
#[derive(Debug)]
pub struct TokenCounter<S: Shingle = u64> {
    counts: HashMap<S, u32, foldhash::fast::FixedState>,
    sets: usize,
}

impl<S: Shingle> Default for TokenCounter<S> {
    fn default() -> Self {
        TokenCounter {
            counts: HashMap::default(),
            sets: 0,
        }
    }
}

impl<S: Shingle> TokenCounter<S> {
    /// Counts nothing yet.
    pub fn new() -> Self {
        TokenCounter::default()
    }

    /// Counts the tokens of more sets (each sorted and without repeats).
    pub fn add(&mut self, sets: &[&[S]]) {
        let mut more = token_counts(sets);
        // The smaller map is added into the larger.
        if more.len() > self.counts.len() {
            std::mem::swap(&mut more, &mut self.counts);
        }
        for (k, v) in more {
            *self.counts.entry(k).or_insert(0) += v;
        }
        self.sets += sets.len();
    }

    /// The common tokens, sorted: held by more than `common_floor` of the sets counted.
    pub fn common(&self) -> Vec<S> {
        let floor = common_floor(self.sets);
        let mut out: Vec<S> = self
            .counts
            .iter()
            .filter(|&(_, &c)| c > floor)
            .map(|(&k, _)| k)
            .collect();
        out.sort_unstable();
        out
    }
}

/// What a containment search signs of a set: its tokens not in `common` (sorted), or the
/// whole set if every token is common.
pub(crate) fn without_common<'a, S: Shingle>(
    set: &'a [S],
    common: &[S],
) -> std::borrow::Cow<'a, [S]> {
    if common.is_empty() {
        return std::borrow::Cow::Borrowed(set);
    }
    let rare: Vec<S> = set
        .iter()
        .copied()
        .filter(|x| common.binary_search(x).is_err())
        .collect();
    if rare.is_empty() || rare.len() == set.len() {
        std::borrow::Cow::Borrowed(set)
    } else {
        std::borrow::Cow::Owned(rare)
    }
}

/// The rows per band a containment search may use: keys are kept for each one in use.
pub(crate) const ENSEMBLE_ROWS: [usize; 4] = [1, 2, 4, 8];

/// The recall at the partition's worst case that the rows per band are chosen for.
pub const ENSEMBLE_RECALL: f64 = 0.95;

/// The LSH Ensemble-style plan of a containment search: documents partitioned by set size
/// (partition j holds sizes 2ʲ ..= 2ʲ⁺¹ − 1), and for a query of size a against partition
/// j, the rows per band chosen for the least Jaccard a pair at containment t can have
/// there. A signature of K values gives K / r bands of r rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnsemblePlan {
    threshold: f64,
    num_perm: usize,
}

impl EnsemblePlan {
    /// The plan at containment `threshold` for signatures of `num_perm` values.
    pub fn new(threshold: f64, num_perm: usize) -> Self {
        EnsemblePlan {
            threshold,
            num_perm: num_perm.max(1),
        }
    }

    /// The partition of a set of `size` shingles (0 for the empty set).
    pub fn partition(size: usize) -> usize {
        size.max(1).ilog2() as usize
    }

    /// The largest set size in partition `j`.
    pub fn upper(j: usize) -> usize {
        (1usize << (j + 1).min(63)) - 1
    }

    /// The least Jaccard of a query of `a` shingles contained at the threshold in a set
    /// of partition `j` no smaller than it: t·a / (a + u − t·a), u the partition's largest
    /// size.
    pub fn jaccard_floor(&self, a: usize, j: usize) -> f64 {
        let (a, u) = (a as f64, Self::upper(j).max(a) as f64);
        let shared = self.threshold * a;
        shared / (a + u - shared)
    }

    /// Rows per band for a query of `a` shingles against partition `j`: the most rows of
    /// `ENSEMBLE_ROWS` (1, 2, 4, 8) whose K / r bands still find a pair at the partition's least
    /// Jaccard with probability [`ENSEMBLE_RECALL`], else one row (the most it can do).
    pub fn rows(&self, a: usize, j: usize) -> usize {
        let s = self.jaccard_floor(a, j);
        ENSEMBLE_ROWS
            .iter()
            .copied()
            .filter(|&r| r <= self.num_perm)
            .rfind(|&r| {
                crate::candidates::bands::s_curve(self.num_perm / r, r, s) >= ENSEMBLE_RECALL
            })
            .unwrap_or(1)
    }

    /// P(candidate) for a pair of Jaccard `s` between a query of `a` shingles and a set
    /// of partition `j`.
    pub fn probability(&self, a: usize, j: usize, s: f64) -> f64 {
        let r = self.rows(a, j);
        crate::candidates::bands::s_curve(self.num_perm / r, r, s)
    }

    /// The probability of finding a pair exactly at the threshold in the partition's
    /// worst case: a query of `a` shingles, the containing set as large as the
    /// partition allows.
    pub fn recall_at_threshold(&self, a: usize, j: usize) -> f64 {
        self.probability(a, j, self.jaccard_floor(a, j))
    }

    /// The signature length K.
    pub fn num_perm(&self) -> usize {
        self.num_perm
    }

    /// The row counts of the plan's tables, fewest first: those of `ENSEMBLE_ROWS` (1, 2, 4, 8)
    /// that fit in K.
    pub fn tables(&self) -> impl Iterator<Item = usize> {
        let k = self.num_perm;
        ENSEMBLE_ROWS.into_iter().filter(move |&r| r <= k)
    }

    /// The bands of every table back to back: Σ K / r over [`EnsemblePlan::tables`].
    pub fn table_bands(&self) -> usize {
        self.tables().map(|r| self.num_perm / r).sum()
    }

    /// The rows of band `band` of that sequence (`None` past its end).
    pub fn table_of(&self, band: usize) -> Option<usize> {
        let mut start = 0;
        self.tables().find(|&r| {
            start += self.num_perm / r;
            band < start
        })
    }

    /// The containment threshold t.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// What the plan does for a query of `a` shingles against partition `j`: the line
    /// `neardup plan --measure containment` prints and the report's table shows.
    pub fn row(&self, a: usize, j: usize) -> EnsembleRow {
        EnsembleRow {
            query: a,
            partition: j,
            jaccard_floor: self.jaccard_floor(a, j),
            rows: self.rows(a, j),
            recall: self.recall_at_threshold(a, j),
        }
    }

    /// The partitions that sets of `sizes` shingles fall in, smallest first, each with
    /// its number of sets and its smallest size (empty sets take no part).
    pub fn partitions_of(sizes: impl IntoIterator<Item = usize>) -> Vec<PartitionCount> {
        let mut by = std::collections::BTreeMap::<usize, PartitionCount>::new();
        for n in sizes.into_iter().filter(|&n| n > 0) {
            let j = Self::partition(n);
            let p = by.entry(j).or_insert(PartitionCount {
                partition: j,
                documents: 0,
                smallest: n,
            });
            p.documents += 1;
            p.smallest = p.smallest.min(n);
        }
        by.into_values().collect()
    }
}

/// A query size against a partition of an [`EnsemblePlan`] ([`EnsemblePlan::row`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnsembleRow {
    /// The query's size a, in shingles.
    pub query: usize,
    /// The partition j searched: sizes 2ʲ ..= [`EnsemblePlan::upper`]`(j)`.
    pub partition: usize,
    /// The least Jaccard of a pair at the threshold there ([`EnsemblePlan::jaccard_floor`]).
    pub jaccard_floor: f64,
    /// Rows per band ([`EnsemblePlan::rows`]).
    pub rows: usize,
    /// P(found) for a pair exactly at the threshold in the partition's worst case
    /// ([`EnsemblePlan::recall_at_threshold`]).
    pub recall: f64,
}

impl EnsembleRow {
    /// The smallest set size of the partition.
    pub fn lower(&self) -> usize {
        1 << self.partition
    }

    /// The largest set size of the partition.
    pub fn upper(&self) -> usize {
        EnsemblePlan::upper(self.partition)
    }
}

/// Sets of one size partition ([`EnsemblePlan::partitions_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionCount {
    /// The partition j: sizes 2ʲ ..= [`EnsemblePlan::upper`]`(j)`.
    pub partition: usize,
    /// Sets in it.
    pub documents: u64,
    /// The smallest of them, in shingles.
    pub smallest: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn brute(sets: &[Vec<u64>], t: f64) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for a in 0..sets.len() {
            for b in 0..sets.len() {
                let (x, y) = (&sets[a], &sets[b]);
                if a == b || x.is_empty() || !is_smaller(x.len(), a as u32, y.len(), b as u32) {
                    continue;
                }
                let n = crate::verify::jaccard::intersection_size(x, y);
                if crate::verify::jaccard::meets_threshold(n as f64 / x.len() as f64, t) {
                    out.push((a as u32, b as u32));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Long sets over a small vocabulary and fragments cut from them with some elements
    /// replaced, so that containments spread over the whole range.
    fn fragments(seed: u64) -> Vec<Vec<u64>> {
        let mut rng = SplitMix64::new(seed);
        let word = |rng: &mut SplitMix64| rng.below(3_000);
        let mut sets: Vec<Vec<u64>> = Vec::new();
        for _ in 0..40 {
            let len = 200 + rng.below(800) as usize;
            sets.push((0..len).map(|_| word(&mut rng)).collect());
        }
        for i in 0..60 {
            let host = sets[i % 40].clone();
            let len = 5 + rng.below(150) as usize;
            let start = rng.below((host.len() - len) as u64) as usize;
            let mut frag: Vec<u64> = host[start..start + len].to_vec();
            for _ in 0..rng.below(len as u64 / 3 + 1) {
                let at = rng.below(len as u64) as usize;
                frag[at] = word(&mut rng);
            }
            sets.push(frag);
        }
        sets.push(Vec::new());
        for s in &mut sets {
            s.sort_unstable();
            s.dedup();
        }
        sets
    }

    #[test]
    fn tables_lie_back_to_back() {
        let plan = EnsemblePlan::new(0.8, 128);
        assert_eq!(plan.tables().collect::<Vec<_>>(), [1, 2, 4, 8]);
        assert_eq!(plan.table_bands(), 128 + 64 + 32 + 16);
        assert_eq!(plan.table_of(0), Some(1));
        assert_eq!(plan.table_of(127), Some(1));
        assert_eq!(plan.table_of(128), Some(2));
        assert_eq!(plan.table_of(192), Some(4));
        assert_eq!(plan.table_of(239), Some(8));
        assert_eq!(plan.table_of(240), None);
        // Rows past K have no table.
        let short = EnsemblePlan::new(0.8, 3);
        assert_eq!(short.tables().collect::<Vec<_>>(), [1, 2]);
        assert_eq!(short.table_bands(), 3 + 1);
    }

    #[test]
    fn partitions_count_sizes_and_rows_repeat_the_plan() {
        let parts = EnsemblePlan::partitions_of([0, 3, 1, 2, 20, 17]);
        let got: Vec<(usize, u64, usize)> = parts
            .iter()
            .map(|p| (p.partition, p.documents, p.smallest))
            .collect();
        assert_eq!(got, [(0, 1, 1), (1, 2, 2), (4, 2, 17)]);
        let plan = EnsemblePlan::new(0.8, 128);
        let r = plan.row(17, 6);
        assert_eq!((r.query, r.lower(), r.upper()), (17, 64, 127));
        assert_eq!(r.rows, plan.rows(17, 6));
        assert_eq!(r.jaccard_floor, plan.jaccard_floor(17, 6));
        assert_eq!(r.recall, plan.recall_at_threshold(17, 6));
    }

    #[test]
    fn the_join_finds_exactly_the_brute_force_pairs() {
        for seed in [1, 2] {
            let sets = fragments(seed);
            let refs: Vec<&[u64]> = sets.iter().map(Vec::as_slice).collect();
            for t in [0.3, 0.5, 0.8, 0.95, 1.0] {
                let (pairs, stats) = ContainmentJoin::new(t).join(&refs);
                let got: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
                let want = brute(&sets, t);
                assert!(!want.is_empty(), "t = {t}");
                assert_eq!(got, want, "seed {seed}, t = {t}");
                assert!(stats.candidates >= stats.pairs);
                for p in &pairs {
                    let (x, y) = (&sets[p.a as usize], &sets[p.b as usize]);
                    let n = crate::verify::jaccard::intersection_size(x, y);
                    assert_eq!(p.containment, n as f64 / x.len() as f64);
                    assert_eq!(p.jaccard, crate::verify::jaccard::jaccard(x, y));
                }
            }
        }
    }

    #[test]
    fn galloping_counts_like_the_merge() {
        let mut rng = SplitMix64::new(5);
        for _ in 0..200 {
            let mut big: Vec<u64> = (0..2_000).map(|_| rng.below(10_000)).collect();
            big.sort_unstable();
            big.dedup();
            let mut small: Vec<u64> = (0..1 + rng.below(60)).map(|_| rng.below(10_000)).collect();
            small.sort_unstable();
            small.dedup();
            let n = crate::verify::jaccard::intersection_size(&small, &big);
            for required in [0, n, n + 1] {
                let want = (n >= required).then_some(n);
                assert_eq!(overlap_at_least(&small, &big, required), want);
            }
        }
    }

    #[test]
    fn required_overlap_is_the_least_that_passes() {
        for len in 1..300 {
            for t in [0.01, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0] {
                let o = required_containment(len, t);
                let passes =
                    |o: usize| crate::verify::jaccard::meets_threshold(o as f64 / len as f64, t);
                assert!(passes(o), "len {len}, t {t}");
                assert!(o == 1 || !passes(o - 1), "len {len}, t {t}");
            }
        }
    }

    #[test]
    fn rows_fall_as_the_partition_grows() {
        let plan = EnsemblePlan::new(0.8, 128);
        // A query of 100 shingles: its own partition allows 8 rows' worth of Jaccard...
        let near = plan.rows(100, EnsemblePlan::partition(100));
        // ...a partition of sets 40 times larger only one row.
        let far = plan.rows(100, EnsemblePlan::partition(4_000));
        assert!(near > far, "{near} {far}");
        assert_eq!(far, 1);
        for j in EnsemblePlan::partition(100)..20 {
            let r = plan.rows(100, j);
            let p = plan.recall_at_threshold(100, j);
            assert!(r == 1 || p >= ENSEMBLE_RECALL, "j {j}: r {r}, P {p}");
        }
        assert_eq!(EnsemblePlan::partition(1), 0);
        assert_eq!(EnsemblePlan::partition(1023), 9);
        assert_eq!(EnsemblePlan::upper(9), 1023);
        // The least Jaccard: 80 shared of a 100 in a set of 1023 → 80 / 1043.
        assert!((plan.jaccard_floor(100, 9) - 80.0 / 1043.0).abs() < 1e-12);
    }
}
