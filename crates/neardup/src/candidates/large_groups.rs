//! An exact search around the largest groups of identical documents.
//!
//! A representative stands for its whole group: when LSH misses a pair with it, every copy
//! misses with it, so one unlucky band draw costs thousands of pairs. For the few largest
//! groups the pairs are found exactly instead, by prefix filtering: a document meets the
//! groups whose prefixes share a hash with its own ([`prefix_len`]), and each is then
//! intersected with it exactly.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;

use crate::corpus::sets::Corpus;
use crate::text::ids::Shingle;
use crate::verify::jaccard::{intersection_at_least, required_overlap};

/// Groups of at least this many identical documents are searched exactly.
pub const MIN_COPIES: usize = 32;

/// At most this many groups, the largest first: bounds the per-shingle work.
pub const MAX_GROUPS: usize = 256;

// Groups are numbered with u16 in the shingle table.
const _: () = assert!(MAX_GROUPS <= 1 << 16);

/// Shingle hashes and ids are uniform already: the table uses a hash as it is, and spreads
/// an id over 64 bits with one multiply.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
    fn write_u32(&mut self, x: u32) {
        // The table takes its buckets from the low bits and its tags from the top ones.
        self.0 = u64::from(x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Bits in the filter of shingles owned by a large group: 2^18 (32 KiB), so with the
/// at most 256 groups of typically tens to hundreds of shingles each, few bits are set.
const OWNED_BITS: usize = 1 << 18;
const OWNED_WORDS: usize = OWNED_BITS / 64;

/// A shingle's bit in the filter: its top bits (the hashes and ids are uniform).
fn owned_bit<S: Shingle>(shingle: S) -> usize {
    (shingle.sketch_value() >> (64 - OWNED_BITS.trailing_zeros())) as usize
}

/// The sizes a set of `n` shingles can reach Jaccard `threshold` with, widened to whole
/// numbers: J ≤ min/max, so [t·n, n/t].
fn reachable_sizes(n: usize, threshold: f64) -> (usize, usize) {
    let n = n as f64;
    (
        (n * threshold).floor() as usize,
        (n / threshold).ceil() as usize,
    )
}

/// The largest groups of identical documents, ready to be compared with any set: each
/// group's representative and set size, and which groups own each shingle.
pub(crate) struct LargeGroups<S: Shingle> {
    reps: Vec<u32>,
    sizes: Vec<usize>,
    /// Each group's set, to count what a document shares with it.
    sets: Vec<Vec<S>>,
    owners: HashMap<S, Vec<u16>, BuildHasherDefault<Identity>>,
    /// Most shingles of most documents belong to no large group: a bit per hash bucket,
    /// small enough to stay in cache, answers them without touching the table.
    owned: Vec<u64>,
    threshold: f64,
    /// The set sizes that can reach some group: [t · smallest, largest / t].
    reach: (f64, f64),
}

/// What one thread reuses from document to document: counts per group, groups touched.
pub(crate) type Scratch = (Vec<u32>, Vec<u16>);

impl<S: Shingle> LargeGroups<S> {
    /// The groups to search of those given as `(size, representative)`: the
    /// [`MAX_GROUPS`] largest of at least [`MIN_COPIES`] (ties by document, so the choice
    /// does not depend on thread timing); `None` if there are none. `set(rep)` gives a
    /// representative's set.
    pub(crate) fn new<R: AsRef<[S]>>(
        mut groups: Vec<(usize, u32)>,
        threshold: f64,
        mut set: impl FnMut(u32) -> R,
    ) -> Option<Self> {
        groups.retain(|g| g.0 >= MIN_COPIES);
        groups.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        groups.truncate(MAX_GROUPS);
        if groups.is_empty() {
            return None;
        }
        let reps: Vec<u32> = groups.iter().map(|&(_, r)| r).collect();
        let mut owners: HashMap<S, Vec<u16>, BuildHasherDefault<Identity>> = HashMap::default();
        let mut sizes = Vec::with_capacity(reps.len());
        let mut sets = Vec::with_capacity(reps.len());
        for (i, &r) in reps.iter().enumerate() {
            let set = set(r);
            let set = set.as_ref();
            sizes.push(set.len());
            // A group is found through its prefix alone (see `near`).
            for &s in &set[..prefix_len(set.len(), threshold)] {
                owners.entry(s).or_default().push(i as u16);
            }
            sets.push(set.to_vec());
        }
        let mut owned = vec![0u64; OWNED_WORDS];
        for &s in owners.keys() {
            let bit = owned_bit(s);
            owned[bit / 64] |= 1 << (bit % 64);
        }
        // Common shingles belong to many groups; ordered by the group's size, a document
        // walks only the owners it could reach (below).
        for list in owners.values_mut() {
            list.sort_unstable_by_key(|&i| (sizes[i as usize], i));
        }
        let smallest = sizes.iter().copied().min().unwrap_or(0) as f64 * threshold;
        let largest = sizes.iter().copied().max().unwrap_or(0) as f64 / threshold;
        Some(LargeGroups {
            reps,
            sizes,
            sets,
            owners,
            owned,
            threshold,
            reach: (smallest.floor(), largest.ceil()),
        })
    }

    /// True if a set of `n` shingles can reach the threshold with some group (its size
    /// within [t·n, n/t] of the group's).
    pub(crate) fn reachable(&self, n: usize) -> bool {
        (self.reach.0..=self.reach.1).contains(&(n as f64))
    }

    /// The pairs `(a, b)`, `a < b`, of document `d` (a representative with set `set`,
    /// sorted) with the groups it reaches the threshold with.
    ///
    /// Prefix filtering in hash order: the groups are indexed by their prefixes, and only
    /// the prefix of `set` is looked up ([`prefix_len`]); the groups met there are then
    /// counted exactly.
    pub(crate) fn near(&self, d: u32, set: &[S], scratch: &mut Scratch) -> Vec<(u32, u32)> {
        let (seen, touched) = scratch;
        seen.resize(self.reps.len(), 0);
        let n = set.len();
        let (lo, hi) = reachable_sizes(n, self.threshold);
        let sizes = &self.sizes;
        for s in &set[..prefix_len(n, self.threshold)] {
            let bit = owned_bit(*s);
            if self.owned[bit / 64] & (1 << (bit % 64)) == 0 {
                continue;
            }
            let list = self.owners.get(s).map(Vec::as_slice).unwrap_or_default();
            let from = list.partition_point(|&i| sizes[i as usize] < lo);
            let to = list.partition_point(|&i| sizes[i as usize] <= hi);
            for &i in &list[from..to.max(from)] {
                if seen[i as usize] == 0 {
                    seen[i as usize] = 1;
                    touched.push(i);
                }
            }
        }
        let mut found = Vec::new();
        for &i in touched.iter() {
            seen[i as usize] = 0;
            let r = self.reps[i as usize];
            if r == d {
                continue;
            }
            // The merge stops once the overlap the threshold needs is out of reach.
            let need = required_overlap(n, sizes[i as usize], self.threshold);
            if intersection_at_least(set, &self.sets[i as usize], need).is_some() {
                found.push((d.min(r), d.max(r)));
            }
        }
        touched.clear();
        found
    }
}

/// The smallest hashes of a set of `n` that every set reaching Jaccard `threshold` with it
/// shares one of with its own: J ≥ t needs ⌈t·max(n, m)⌉ shared shingles, and two sorted
/// sets sharing α have a common element among their first n − α + 1 and m − α + 1 (the
/// classic prefix filter). ⌊t·n⌋ in place of ⌈t·n⌉ keeps one more, against rounding.
fn prefix_len(n: usize, threshold: f64) -> usize {
    (n - ((n as f64 * threshold).floor() as usize).min(n) + 1).min(n)
}

/// Pairs `(a, b)`, `a < b`, of representatives with Jaccard ≥ `threshold` where one of
/// them stands for one of the largest groups of identical documents; sorted.
pub(crate) fn pairs_near_large_groups(corpus: &Corpus, threshold: f64) -> Vec<(u32, u32)> {
    let groups = corpus
        .identical_groups()
        .iter()
        .map(|g| (g.len(), g[0]))
        .collect();
    let Some(large) = LargeGroups::new(groups, threshold, |r| corpus.set(r)) else {
        return Vec::new();
    };
    let mut out: Vec<(u32, u32)> = corpus
        .members()
        .into_par_iter()
        .filter(|&d| large.reachable(corpus.set(d).len()))
        .map_init(Scratch::default, |scratch, d| {
            large.near(d, corpus.set(d), scratch)
        })
        .flatten_iter()
        .collect();
    out.par_sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::shingle::{ShingleKind, Shingler};
    use crate::verify::jaccard::{jaccard, meets_threshold};

    #[test]
    fn finds_every_pair_with_a_large_group_and_only_those() {
        let copy = "add your description here for the package";
        let near = "add your description here for the packages";
        let far = "something else entirely, a different text";
        let small = "a small group of two copies only here";
        let mut texts = vec![near, far, small, small];
        texts.extend(std::iter::repeat_n(copy, MIN_COPIES));
        let c = Corpus::shingle(&Shingler::new(ShingleKind::Char(3)), &texts);
        let rep = c.representative(4);
        let t = 0.8;
        assert!(jaccard(c.set(0), c.set(rep)) >= t);
        // Only the large group is searched: the small one and the far text pair with nothing.
        assert_eq!(pairs_near_large_groups(&c, t), vec![(0, rep)]);
        // Brute force over representatives agrees for pairs that involve the large group.
        let brute: Vec<(u32, u32)> = c
            .members()
            .into_iter()
            .filter(|&d| d != rep && meets_threshold(jaccard(c.set(d), c.set(rep)), t))
            .map(|d| (d.min(rep), d.max(rep)))
            .collect();
        assert_eq!(brute, vec![(0, rep)]);
    }

    #[test]
    fn the_search_finds_exactly_the_brute_force_pairs_at_every_threshold() {
        use crate::rng::SplitMix64;
        let mut rng = SplitMix64::new(11);
        let words: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
        let text = |rng: &mut SplitMix64, len: usize| -> Vec<String> {
            (0..len)
                .map(|_| words[rng.below(words.len() as u64) as usize].clone())
                .collect()
        };
        let mut texts: Vec<String> = Vec::new();
        let mut bases = Vec::new();
        for g in 0..6 {
            let base = text(&mut rng, 6 + 3 * g);
            for _ in 0..MIN_COPIES + g {
                texts.push(base.join(" "));
            }
            bases.push(base);
        }
        // Edits of the groups' texts (a word or two replaced, added or dropped), and others.
        for _ in 0..600 {
            let mut t = bases[rng.below(bases.len() as u64) as usize].clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(t.len() as u64) as usize;
                match rng.below(3) {
                    0 => t[at] = text(&mut rng, 1).remove(0),
                    1 => t.insert(at, text(&mut rng, 1).remove(0)),
                    _ if t.len() > 2 => {
                        t.remove(at);
                    }
                    _ => {}
                }
            }
            texts.push(t.join(" "));
        }
        for _ in 0..200 {
            texts.push(text(&mut rng, 8).join(" "));
        }
        let c = Corpus::shingle(&Shingler::new(ShingleKind::Word(1)), &texts);
        let large: Vec<u32> = c
            .identical_groups()
            .iter()
            .filter(|g| g.len() >= MIN_COPIES)
            .map(|g| g[0])
            .collect();
        assert_eq!(large.len(), 6);
        for t in [0.5, 0.7, 0.8, 0.9] {
            let mut brute: Vec<(u32, u32)> = Vec::new();
            for d in c.members() {
                for &r in &large {
                    if d != r && meets_threshold(jaccard(c.set(d), c.set(r)), t) {
                        brute.push((d.min(r), d.max(r)));
                    }
                }
            }
            brute.sort_unstable();
            brute.dedup();
            assert!(brute.len() > 50, "t = {t}: {} pairs", brute.len());
            assert_eq!(pairs_near_large_groups(&c, t), brute, "t = {t}");
        }
    }

    #[test]
    fn nothing_to_do_without_large_groups() {
        let c = Corpus::shingle(
            &Shingler::new(ShingleKind::Char(3)),
            &["abcd", "abcd", "abce"],
        );
        assert!(pairs_near_large_groups(&c, 0.5).is_empty());
    }
}
