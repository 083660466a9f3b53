//! SimHash (Charikar 2002): a 64-bit fingerprint per document, whose bits agree between two
//! documents with probability 1 − θ/π, θ the angle between their shingle-count vectors;
//! near-duplicates are fingerprints within a small Hamming distance K.
//!
//! Candidates come from tables of permuted fingerprints (Manku, Jain and Das Sarma 2007):
//! the 64 bits are cut into `B > K` blocks; two fingerprints within distance K differ in at
//! most K blocks, so they agree exactly on at least `B − K` of them. Each table keys every
//! fingerprint by one choice of `B − K` blocks, and pairs that share a key are compared
//! by popcount. More blocks make longer keys (fewer chance collisions) at the cost of more
//! tables; [`SimHashTables::for_corpus`] picks the count that minimizes the expected work for the
//! corpus's size. Every pair within K is found: the method has no false negatives.

use rayon::prelude::*;

use crate::rng::mix64;

/// The largest Hamming distance accepted: beyond it, the tables' keys are too short to
/// cut the work below comparing every pair, and 16 of 64 bits apart is no near-duplicate.
pub const MAX_HAMMING: u32 = 16;

/// The default Hamming distance: 3, the value Manku, Jain and Das Sarma chose for 64-bit
/// fingerprints of 8 billion web pages.
pub const DEFAULT_HAMMING: u32 = 3;

/// Seed mixed into every shingle hash before it votes, so that the fingerprints' bits do not
/// depend on how the shingle hashes were built.
const SIMHASH_SEED: u64 = 0x7369_6d68_6173_6831;

/// The SimHash of sorted shingle hashes, each distinct hash weighted by how many times it
/// occurs: bit i is set when the weights of the hashes whose (seeded) bit i is set
/// outweigh the others. An empty input gives 0.
///
/// ```
/// use neardup::{ShingleKind, Shingler};
/// use neardup::candidates::simhash;
/// let words = Shingler::new(ShingleKind::Word(1));
/// let mut hashes = Vec::new();
/// words.hashes_into("buy now buy", &mut hashes);
/// hashes.sort_unstable();
/// let a = simhash(&hashes, 1);
/// assert_eq!(a, simhash(&hashes, 1)); // deterministic
/// assert_ne!(a, simhash(&hashes, 2)); // seeded
/// ```
pub fn simhash(sorted: &[u64], seed: u64) -> u64 {
    let mut votes = [0i64; 64];
    let key = mix64(seed ^ SIMHASH_SEED);
    let mut i = 0;
    while i < sorted.len() {
        let h = sorted[i];
        let mut j = i + 1;
        while j < sorted.len() && sorted[j] == h {
            j += 1;
        }
        let weight = (j - i) as i64;
        let bits = mix64(h ^ key);
        for (bit, vote) in votes.iter_mut().enumerate() {
            // +weight where the bit is set, −weight where it is not, without a branch.
            let sign = ((bits >> bit) & 1) as i64 * 2 - 1;
            *vote += sign * weight;
        }
        i = j;
    }
    votes
        .iter()
        .enumerate()
        .fold(0u64, |f, (bit, &v)| f | (u64::from(v > 0) << bit))
}

/// The probability that two documents with Jaccard `s` become candidates at distance `k`,
/// for sets of equal size whose shingles each occur once: their count vectors then meet at
/// cos θ = 2s / (1 + s), each bit differs with probability p = θ/π, and the distance is
/// Binomial(64, p). (Counts and unequal sizes move θ; this is the curve's shape, not a
/// promise for every pair.)
///
/// ```
/// use neardup::candidates::simhash_probability;
/// assert!((simhash_probability(1.0, 3) - 1.0).abs() < 1e-12);
/// assert!(simhash_probability(0.95, 3) < 0.5); // K = 3 wants very near copies
/// assert!(simhash_probability(0.95, 10) > 0.9);
/// ```
pub fn simhash_probability(s: f64, k: u32) -> f64 {
    let s = s.clamp(0.0, 1.0);
    let p = (2.0 * s / (1.0 + s)).clamp(-1.0, 1.0).acos() / std::f64::consts::PI;
    let mut term = (1.0 - p).powi(64); // P(d = 0)
    let mut total = 0.0;
    for i in 0..=k.min(64) {
        total += term;
        if p >= 1.0 {
            break;
        }
        // P(d = i + 1) from P(d = i).
        term *= f64::from(64 - i) / f64::from(i + 1) * p / (1.0 - p);
    }
    total.min(1.0)
}

/// Hamming distance of two fingerprints.
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The tables of one search: each a mask of the bits its key keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimHashTables {
    hamming: u32,
    blocks: u32,
    masks: Vec<u64>,
}

impl SimHashTables {
    /// The tables for distance `hamming` (at most [`MAX_HAMMING`]) with the 64 bits cut
    /// into `blocks` blocks (more than `hamming`, at most 64): one table per choice of
    /// `blocks − hamming` blocks as its key.
    pub fn new(hamming: u32, blocks: u32) -> SimHashTables {
        let hamming = hamming.min(MAX_HAMMING);
        let blocks = blocks.clamp(hamming + 1, 64);
        let block_mask = |i: u32| {
            // Blocks of ⌊64/B⌋ or ⌈64/B⌉ bits, back to back.
            let lo = 64 * i / blocks;
            let hi = 64 * (i + 1) / blocks;
            let width = hi - lo;
            let ones = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            ones << lo
        };
        let keep = blocks - hamming;
        let mut masks = Vec::new();
        // Every subset of `keep` blocks, in lexicographic order of block indices.
        let mut chosen: Vec<u32> = (0..keep).collect();
        loop {
            masks.push(chosen.iter().fold(0u64, |m, &i| m | block_mask(i)));
            let Some(pos) = (0..keep as usize)
                .rev()
                .find(|&p| chosen[p] < blocks - keep + p as u32)
            else {
                break;
            };
            chosen[pos] += 1;
            for p in pos + 1..keep as usize {
                chosen[p] = chosen[p - 1] + 1;
            }
        }
        SimHashTables {
            hamming,
            blocks,
            masks,
        }
    }

    /// The tables that minimize the expected work for `n` fingerprints: per table, n
    /// keys sorted and the chance pairs of a random key of `bits` bits, n²/2^(bits+1).
    /// Blocks range over K + 1 ..= K + 6 (beyond, the table count only grows).
    pub fn for_corpus(hamming: u32, n: usize) -> SimHashTables {
        let hamming = hamming.min(MAX_HAMMING);
        let n = n.max(2) as f64;
        let cost = |blocks: u32| {
            let keep = blocks - hamming;
            let tables = binomial(blocks, keep);
            let bits = 64.0 * f64::from(keep) / f64::from(blocks);
            tables * (n * n.log2() + n * n / 2f64.powf(bits + 1.0))
        };
        let best = (hamming + 1..=(hamming + 6).min(64))
            .min_by(|&x, &y| cost(x).total_cmp(&cost(y)))
            .unwrap_or(hamming + 1);
        SimHashTables::new(hamming, best)
    }

    /// The Hamming distance searched for.
    pub fn hamming(&self) -> u32 {
        self.hamming
    }

    /// Blocks the fingerprint is cut into.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Number of tables.
    pub fn len(&self) -> usize {
        self.masks.len()
    }

    /// Never true: there is at least one table.
    pub fn is_empty(&self) -> bool {
        self.masks.is_empty()
    }

    /// Bits of the shortest key.
    pub fn key_bits(&self) -> u32 {
        self.masks
            .iter()
            .map(|m| m.count_ones())
            .min()
            .unwrap_or(64)
    }

    /// Every pair `(a, b, distance)` of `docs` (document, fingerprint) whose fingerprints
    /// are within the distance, each once (in the first table whose key they share),
    /// sorted by `(a, b)` with `a < b`. Documents are compared by their numbers, so the
    /// output is the same for any order of `docs` and any number of threads.
    pub fn pairs(&self, docs: &[(u32, u64)]) -> Vec<(u32, u32, u32)> {
        self.search(docs).pairs
    }

    /// [`SimHashTables::pairs`], with the tables' bucket counts.
    pub fn search(&self, docs: &[(u32, u64)]) -> SimHashFound {
        let per_table: Vec<SimHashFound> = self
            .masks
            .par_iter()
            .enumerate()
            .map(|(t, &mask)| {
                let mut keyed: Vec<(u64, u32, u64)> =
                    docs.iter().map(|&(d, f)| (f & mask, d, f)).collect();
                keyed.sort_unstable();
                let earlier = &self.masks[..t];
                let mut out = Vec::new();
                let (mut buckets, mut largest) = (0u64, 0usize);
                for run in keyed.chunk_by(|x, y| x.0 == y.0) {
                    if run.len() > 1 {
                        buckets += 1;
                        largest = largest.max(run.len());
                    }
                    for (i, &(_, a, fa)) in run.iter().enumerate() {
                        for &(_, b, fb) in &run[i + 1..] {
                            let diff = fa ^ fb;
                            let d = diff.count_ones();
                            // The first table the pair agrees in reports it.
                            if d <= self.hamming && earlier.iter().all(|&m| diff & m != 0) {
                                out.push((a.min(b), a.max(b), d));
                            }
                        }
                    }
                }
                SimHashFound {
                    pairs: out,
                    buckets,
                    largest,
                }
            })
            .collect();
        let buckets = per_table.iter().map(|t| t.buckets).sum();
        let largest = per_table.iter().map(|t| t.largest).max().unwrap_or(0);
        let mut pairs: Vec<(u32, u32, u32)> = per_table.into_iter().flat_map(|t| t.pairs).collect();
        pairs.par_sort_unstable();
        SimHashFound {
            pairs,
            buckets,
            largest,
        }
    }
}

/// What a search of the tables found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimHashFound {
    /// Every pair `(a, b, distance)` within the distance, `a < b`, sorted.
    pub pairs: Vec<(u32, u32, u32)>,
    /// Keys shared by two or more documents, over all tables.
    pub buckets: u64,
    /// The most documents that share one key.
    pub largest: usize,
}

/// C(n, k) as a float (small arguments only).
fn binomial(n: u32, k: u32) -> f64 {
    (0..k).fold(1.0, |c, i| c * f64::from(n - i) / f64::from(i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn brute(docs: &[(u32, u64)], k: u32) -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        for (i, &(a, fa)) in docs.iter().enumerate() {
            for &(b, fb) in &docs[i + 1..] {
                let d = hamming(fa, fb);
                if d <= k {
                    out.push((a.min(b), a.max(b), d));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Fingerprints in clusters: a few centres, each with copies a few bits away, so that
    /// every distance up to K and beyond occurs.
    fn clustered(n: usize, seed: u64) -> Vec<(u32, u64)> {
        let mut rng = SplitMix64::new(seed);
        let mut out = Vec::new();
        let mut centre = rng.next_u64();
        for d in 0..n as u32 {
            if d % 8 == 0 {
                centre = rng.next_u64();
            }
            let mut f = centre;
            for _ in 0..(rng.next_u64() % 7) {
                f ^= 1 << (rng.next_u64() % 64);
            }
            out.push((d, f));
        }
        out
    }

    #[test]
    fn every_pair_within_the_distance_is_found_once() {
        let docs = clustered(600, 7);
        for k in 0..=6 {
            let want = brute(&docs, k);
            for blocks in k + 1..=k + 4 {
                let got = SimHashTables::new(k, blocks).pairs(&docs);
                assert_eq!(got, want, "k={k} blocks={blocks}");
            }
            assert_eq!(SimHashTables::for_corpus(k, docs.len()).pairs(&docs), want);
        }
    }

    #[test]
    fn table_count_is_the_binomial() {
        let t = SimHashTables::new(3, 5);
        assert_eq!(t.len(), 10); // C(5, 2)
        assert_eq!(t.key_bits(), 25); // two blocks of 12 or 13 bits
        let one = SimHashTables::new(0, 1);
        assert_eq!((one.len(), one.key_bits()), (1, 64));
        // Each mask keeps exactly `blocks - hamming` whole blocks: all bits are covered.
        let all = t.masks.iter().fold(0u64, |m, x| m | x);
        assert_eq!(all, u64::MAX);
    }

    #[test]
    fn larger_corpora_get_longer_keys() {
        let small = SimHashTables::for_corpus(3, 1_000);
        let large = SimHashTables::for_corpus(3, 100_000_000);
        assert!(large.key_bits() > small.key_bits());
        assert!(large.key_bits() >= 25, "{large:?}");
    }

    #[test]
    fn weights_are_counts() {
        // A hash repeated three times outvotes two others that disagree with it.
        let key = mix64(1 ^ SIMHASH_SEED);
        let x = 5u64;
        let fx = mix64(x ^ key);
        // Find two hashes whose seeded bits are the complement of x's on bit 0.
        let others: Vec<u64> = (100u64..)
            .filter(|&h| (mix64(h ^ key) & 1) != (fx & 1))
            .take(2)
            .collect();
        let mut counted = vec![x, x, x, others[0], others[1]];
        counted.sort_unstable();
        assert_eq!(simhash(&counted, 1) & 1, fx & 1);
        let mut once = vec![x, others[0], others[1]];
        once.sort_unstable();
        assert_ne!(simhash(&once, 1) & 1, fx & 1);
        assert_eq!(simhash(&[], 1), 0);
    }

    #[test]
    fn bits_agree_with_the_angle() {
        // Two sets of n elements sharing s of them: cos θ = s/n, and each bit differs with
        // probability θ/π (random ±1 votes are near enough to Gaussian at n = 401). Over
        // 200 trials the mean distance is within 4 standard errors of 64·θ/π.
        let mut rng = SplitMix64::new(3);
        let (n, shared) = (401usize, 301usize); // odd: no tied votes
        let trials = 200;
        let mut total = 0u64;
        for _ in 0..trials {
            let common: Vec<u64> = (0..shared).map(|_| rng.next_u64()).collect();
            let mut a = common.clone();
            let mut b = common;
            a.extend((0..n - shared).map(|_| rng.next_u64()));
            b.extend((0..n - shared).map(|_| rng.next_u64()));
            a.sort_unstable();
            b.sort_unstable();
            total += u64::from(hamming(simhash(&a, 9), simhash(&b, 9)));
        }
        let p = (shared as f64 / n as f64).acos() / std::f64::consts::PI;
        let mean = total as f64 / trials as f64;
        let expected = 64.0 * p;
        // Each bit votes with its own bit of every hash: the 64 bits are independent.
        let sd = (64.0 * p * (1.0 - p) / trials as f64).sqrt();
        assert!(
            (mean - expected).abs() < 4.0 * sd,
            "mean {mean}, expected {expected} ± {sd}"
        );
    }
}
