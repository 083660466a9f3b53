//! One-permutation hashing with optimal densification: a MinHash signature in O(n + K).
//!
//! Each shingle is hashed once; the hash picks one of K bins (by its high bits) and each
//! bin keeps its smallest hash (Li, Owen & Zhang 2012). A bin that no shingle fell into
//! borrows the value of another bin, found by probing a sequence of bins that depends only
//! on the bin's index and the seed, never on the data (Shrivastava 2017, "optimal
//! densification"). Two documents therefore borrow from the same place, and a bin agrees
//! with probability equal to their Jaccard similarity.
//!
//! Values keep all 64 bits of the hash. The bin is a function of the hash, so a borrowed
//! value still says which bin it came from and can never be mistaken for a value that
//! fell into the borrowing bin itself.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::rng::{mix64, SplitMix64};
use crate::sketch::classic::{Sketch, MAX_NUM_PERM};

const EMPTY: u64 = u64::MAX;

/// The one-permutation sketch with data-independent optimal densification.
///
/// ```
/// use neardup::sketch::OnePermutation;
/// use neardup::sketch::Sketch;
/// let sketch = OnePermutation::new(128, 7).unwrap();
/// let a: Vec<u64> = (0..300).collect();
/// let b: Vec<u64> = (100..400).collect(); // Jaccard 0.5
/// let (sa, sb) = (sketch.sketch(&a), sketch.sketch(&b));
/// let agree = sa.iter().zip(&sb).filter(|(x, y)| x == y).count() as f64 / 128.0;
/// assert!((agree - 0.5).abs() < 0.2);
/// ```
#[derive(Clone)]
pub struct OnePermutation {
    num_perm: usize,
    key: u64,
    probe_key: u64,
    /// The first [`PROBES`] bins each bin looks at when it is empty, `PROBES` per bin:
    /// the sequence is data-independent, so densifying reads a table instead of hashing.
    /// Built at the first densification (a sketch made per document, or that only ever
    /// sees long documents, never pays for it) and shared by clones.
    probes: Arc<OnceLock<Box<[u16]>>>,
}

impl std::fmt::Debug for OnePermutation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnePermutation")
            .field("num_perm", &self.num_perm)
            .field("key", &self.key)
            .field("probe_key", &self.probe_key)
            .finish_non_exhaustive()
    }
}

/// Probes per bin held in the table; an empty bin whose first `PROBES` probes are all
/// empty too (rare unless most bins are) goes on hashing from there.
const PROBES: usize = 8;

thread_local! {
    /// Empty bins of the signature being densified and the values they borrow (reused:
    /// no allocation per document).
    static BORROWED: RefCell<(Vec<u32>, Vec<u64>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl OnePermutation {
    /// A sketch of `num_perm` bins whose hash is drawn from `seed`.
    pub fn new(num_perm: usize, seed: u64) -> Result<Self> {
        if num_perm == 0 || num_perm > MAX_NUM_PERM {
            return Err(Error::InvalidNumPerm(num_perm));
        }
        // Distinct from the classic sketch's keys for the same seed.
        let mut rng = SplitMix64::new(seed ^ 0x6f70_6864_656e_7369);
        Ok(OnePermutation {
            num_perm,
            key: rng.next_u64(),
            probe_key: rng.next_u64(),
            probes: Arc::default(),
        })
    }

    /// The probe table (see `probes`).
    fn probe_table(&self) -> &[u16] {
        self.probes.get_or_init(|| {
            // Bins are below MAX_NUM_PERM = 2^16.
            (0..self.num_perm)
                .flat_map(|i| (0..PROBES as u64).map(move |a| (i, a)))
                .map(|(i, a)| self.probe(i, a) as u16)
                .collect()
        })
    }

    #[inline(always)]
    fn bin(&self, h: u64) -> usize {
        ((h as u128 * self.num_perm as u128) >> 64) as usize
    }

    /// The `attempt`-th bin that bin `i` looks at when it is empty.
    #[inline]
    fn probe(&self, i: usize, attempt: u64) -> usize {
        self.bin(mix64(self.probe_key ^ ((i as u64) << 32) ^ attempt))
    }

    /// The value empty bin `i` borrows from the filled bins of `out`: that of the first
    /// filled bin in its probe sequence.
    #[inline]
    fn borrowed(&self, table: &[u16], out: &[u64], i: usize) -> u64 {
        let table = &table[i * PROBES..(i + 1) * PROBES];
        // Which of the first probes are filled, without a branch per probe: whether a
        // bin is filled is a coin toss the predictor cannot learn.
        let mut filled = 0u32;
        for (a, &j) in table.iter().enumerate() {
            filled |= u32::from(out[j as usize] != EMPTY) << a;
        }
        if filled != 0 {
            return out[table[filled.trailing_zeros() as usize] as usize];
        }
        (PROBES as u64..)
            .map(|attempt| out[self.probe(i, attempt)])
            .find(|&v| v != EMPTY)
            .expect("a non-empty set fills some bin, and every bin is probed in time")
    }
}

impl Sketch for OnePermutation {
    /// One 64-bit hash and bin update per shingle, priced at ten units of the cost model's
    /// hash, plus a step per bin to densify (checked against the sketch stage on long
    /// pages, where one-permutation hashing does nearly all the work: docs/design/12-exact-join-and-method-choice.md,
    /// "Choosing the method").
    fn work(&self, shingles: usize) -> u64 {
        (10 * shingles + self.num_perm) as u64
    }

    fn num_perm(&self) -> usize {
        self.num_perm
    }

    fn sketch_into(&self, shingles: &[u64], out: &mut [u64]) {
        assert_eq!(out.len(), self.num_perm, "signature buffer length");
        out.fill(EMPTY);
        for &x in shingles {
            // Shingle hashes are already uniform: an odd multiply after the keyed xor is a
            // bijection that makes the seed matter, at one multiply per shingle.
            let h = (x ^ self.key).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let slot = &mut out[self.bin(h)];
            // Branch-free: whether a hash lowers its bin is a coin toss the predictor
            // cannot learn, and a conditional move is cheaper than its misses.
            *slot = (*slot).min(h);
        }
        // Long documents fill every bin.
        if shingles.is_empty() || !out.contains(&EMPTY) {
            return;
        }
        BORROWED.with(|cell| {
            let (empty, values) = &mut *cell.borrow_mut();
            // The empty bins, listed without a branch per bin.
            empty.clear();
            empty.resize(self.num_perm, 0);
            let mut n = 0;
            for (i, &v) in out.iter().enumerate() {
                empty[n] = i as u32;
                n += usize::from(v == EMPTY);
            }
            empty.truncate(n);
            if n == self.num_perm {
                // Every shingle hashed to the empty mark itself (a set of the one shingle
                // that does): nothing to borrow from, and probing would never end.
                out.fill(EMPTY - 1);
                return;
            }
            // Borrow only from bins the data filled: read them all before writing any.
            values.clear();
            let table = self.probe_table();
            values.extend(empty.iter().map(|&i| self.borrowed(table, out, i as usize)));
            for (&i, &v) in empty.iter().zip(values.iter()) {
                out[i as usize] = v;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::jaccard::estimate;

    #[test]
    fn rejects_bad_lengths() {
        assert!(OnePermutation::new(0, 1).is_err());
        assert!(OnePermutation::new(MAX_NUM_PERM + 1, 1).is_err());
    }

    #[test]
    fn fills_every_bin_even_for_one_shingle() {
        let s = OnePermutation::new(128, 3).unwrap();
        let sig = s.sketch(&[42]);
        assert!(sig.iter().all(|&v| v != EMPTY));
        // One shingle: every bin holds its one hash.
        assert!(sig.iter().all(|&v| v == sig[0]));
    }

    #[test]
    fn order_and_repeats_do_not_matter() {
        let s = OnePermutation::new(64, 5).unwrap();
        assert_eq!(s.sketch(&[1, 2, 3, 4, 5]), s.sketch(&[5, 4, 4, 3, 2, 1, 1]));
    }

    #[test]
    fn identical_sets_agree_and_disjoint_sets_do_not() {
        let s = OnePermutation::new(256, 9).unwrap();
        let a: Vec<u64> = (0..40).map(mix64).collect();
        let b: Vec<u64> = (40..80).map(mix64).collect();
        assert_eq!(estimate(&s.sketch(&a), &s.sketch(&a)), 1.0);
        // Disjoint sets can agree only where both borrowed... from bins holding different
        // hashes: never.
        assert_eq!(estimate(&s.sketch(&a), &s.sketch(&b)), 0.0);
    }

    /// Densification as first written: every probe hashed, one at a time.
    fn reference(s: &OnePermutation, shingles: &[u64]) -> Vec<u64> {
        let mut out = vec![EMPTY; s.num_perm];
        for &x in shingles {
            let h = (x ^ s.key).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let slot = &mut out[s.bin(h)];
            *slot = (*slot).min(h);
        }
        if out.iter().all(|&v| v == EMPTY) {
            return vec![EMPTY - 1; s.num_perm];
        }
        let filled = out.clone();
        for (i, v) in out.iter_mut().enumerate() {
            if *v == EMPTY {
                *v = (0..)
                    .map(|a| filled[s.probe(i, a)])
                    .find(|&v| v != EMPTY)
                    .unwrap();
            }
        }
        out
    }

    #[test]
    fn the_probe_table_borrows_what_hashing_each_probe_would() {
        // From one shingle (most probes past the table) to more than the bins.
        for (num_perm, seed) in [(128, 1), (64, 7), (200, 3), (1, 5)] {
            let s = OnePermutation::new(num_perm, seed).unwrap();
            for n in [1usize, 2, 5, 20, 64, 90, 130, 400] {
                let set: Vec<u64> = (0..n as u64).map(|i| mix64(i ^ (seed << 20))).collect();
                assert_eq!(s.sketch(&set), reference(&s, &set), "K {num_perm}, n {n}");
            }
        }
    }

    #[test]
    fn a_shingle_that_hashes_to_the_empty_mark_still_fills_the_sketch() {
        let s = OnePermutation::new(128, 3).unwrap();
        // The shingle whose keyed hash is u64::MAX: the multiplier's inverse undoes it.
        let inverse = (0..6).fold(0x9e37_79b9_7f4a_7c15u64, |y, _| {
            y.wrapping_mul(2u64.wrapping_sub(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(y)))
        });
        let x = u64::MAX.wrapping_mul(inverse) ^ s.key;
        assert_eq!((x ^ s.key).wrapping_mul(0x9e37_79b9_7f4a_7c15), u64::MAX);
        let sig = s.sketch(&[x]);
        assert!(sig.iter().all(|&v| v == EMPTY - 1));
    }

    #[test]
    fn empty_input_is_all_empty() {
        let s = OnePermutation::new(8, 1).unwrap();
        assert_eq!(s.sketch(&[]), vec![EMPTY; 8]);
    }
}
