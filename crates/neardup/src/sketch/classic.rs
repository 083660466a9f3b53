//! Sets of shingle hashes → MinHash signatures whose agreement estimates Jaccard similarity.
//!
//! Every sketch implements [`Sketch`]; the pipeline only sees the trait, so a faster sketch
//! slots in beside the classic one without touching the stages around it.

use crate::error::{Error, Result};
use crate::rng::SplitMix64;

/// The largest signature length accepted.
pub const MAX_NUM_PERM: usize = 65_536;

/// A MinHash-style sketch: a fixed-length signature whose positions agree, for two sets,
/// with probability equal to their Jaccard similarity.
pub trait Sketch: Send + Sync {
    /// Signature length K.
    fn num_perm(&self) -> usize;

    /// Writes the signature of a set of shingle hashes into `out` (`out.len() == num_perm()`).
    ///
    /// `shingles` may hold repeats and need not be sorted: MinHash takes minima, which
    /// ignore both. An empty input gives a signature of `u64::MAX`.
    fn sketch_into(&self, shingles: &[u64], out: &mut [u64]);

    /// Hash evaluations to sketch a set of `shingles` shingles: what the cost model of
    /// [`Method::Auto`](crate::Method::Auto) counts. K per shingle unless a sketch says
    /// otherwise.
    fn work(&self, shingles: usize) -> u64 {
        shingles as u64 * self.num_perm() as u64
    }

    /// The signature of a set of shingle hashes, as a new vector.
    fn sketch(&self, shingles: &[u64]) -> Vec<u64> {
        let mut out = vec![0; self.num_perm()];
        self.sketch_into(shingles, &mut out);
        out
    }
}

/// The classic K-permutation MinHash: signature position i is min over the set of h_i(x).
///
/// h_i(x) = (x' ⊕ k_i) · m_i mod 2³², with x' the shingle hash folded to 32 bits, a key k_i
/// and an odd multiplier m_i drawn from the seed: a bijection of 32-bit words per position.
/// 32-bit lanes let the loop over positions run 8 wide with AVX2 and 16 wide with AVX-512
/// (chosen at run time), in blocks of positions kept in registers over every shingle.
/// Two distinct shingles meet in 32 bits with probability 2⁻³², far below the estimator's
/// own noise. Work is O(n·K) per document: it is the reference sketch, and the one small
/// documents get (see `family.rs`).
///
/// ```
/// use neardup::sketch::{ClassicMinHash, Sketch};
/// let sketch = ClassicMinHash::new(128, 42).unwrap();
/// let a = sketch.sketch(&[1, 2, 3, 4]);
/// let b = sketch.sketch(&[4, 3, 2, 1, 1]);
/// assert_eq!(a, b); // order and repeats don't matter
/// ```
#[derive(Clone, Debug)]
pub struct ClassicMinHash {
    keys: Vec<u32>,
    mults: Vec<u32>,
}

thread_local! {
    /// 32-bit minima of the signature being computed (reused across documents).
    static MINIMA: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl ClassicMinHash {
    /// A sketch of `num_perm` positions whose permutations are drawn from `seed`.
    pub fn new(num_perm: usize, seed: u64) -> Result<Self> {
        if num_perm == 0 || num_perm > MAX_NUM_PERM {
            return Err(Error::InvalidNumPerm(num_perm));
        }
        let mut rng = SplitMix64::new(seed);
        let (keys, mults) = (0..num_perm)
            .map(|_| {
                let r = rng.next_u64();
                (r as u32, (r >> 32) as u32 | 1)
            })
            .unzip();
        Ok(ClassicMinHash { keys, mults })
    }
}

/// Folds a 64-bit shingle hash to the 32 bits the permutations act on.
#[inline(always)]
fn fold(x: u64) -> u32 {
    (x ^ (x >> 32)) as u32
}

/// The minima over `shingles` of every lane's permutation `(x ^ key) * mult`, in blocks
/// of `WIDEST` lanes, then of half as many, and so on, down to single lanes.
#[inline(always)]
fn minima_blocks<const WIDEST: usize>(
    shingles: &[u64],
    keys: &[u32],
    mults: &[u32],
    minima: &mut [u32],
) {
    let mut done = 0;
    done += blocks::<WIDEST>(shingles, &keys[done..], &mults[done..], &mut minima[done..]);
    if WIDEST > 64 {
        done += blocks::<64>(shingles, &keys[done..], &mults[done..], &mut minima[done..]);
    }
    done += blocks::<32>(shingles, &keys[done..], &mults[done..], &mut minima[done..]);
    done += blocks::<16>(shingles, &keys[done..], &mults[done..], &mut minima[done..]);
    done += blocks::<8>(shingles, &keys[done..], &mults[done..], &mut minima[done..]);
    blocks::<1>(shingles, &keys[done..], &mults[done..], &mut minima[done..]);
}

/// The minima of the whole blocks of `LANES` lanes at the front of `minima`; returns how
/// many lanes that was. Each block stays in registers over every shingle: many
/// independent lanes hide the multiply's latency, and the minima are read and written
/// once per block, not once per shingle.
#[inline(always)]
fn blocks<const LANES: usize>(
    shingles: &[u64],
    keys: &[u32],
    mults: &[u32],
    minima: &mut [u32],
) -> usize {
    let whole = minima.len() / LANES * LANES;
    let lanes = minima[..whole]
        .chunks_exact_mut(LANES)
        .zip(keys.chunks_exact(LANES).zip(mults.chunks_exact(LANES)));
    for (block, (k, m)) in lanes {
        let mut acc = [u32::MAX; LANES];
        acc.copy_from_slice(block);
        for &x in shingles {
            let x = fold(x);
            for lane in 0..LANES {
                acc[lane] = acc[lane].min((x ^ k[lane]).wrapping_mul(m[lane]));
            }
        }
        block.copy_from_slice(&acc);
    }
    whole
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn minima_avx2(shingles: &[u64], keys: &[u32], mults: &[u32], minima: &mut [u32]) {
    // The same code, compiled for AVX2 (8 lanes of 32-bit multiplies per instruction).
    minima_blocks::<64>(shingles, keys, mults, minima)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn minima_avx512(shingles: &[u64], keys: &[u32], mults: &[u32], minima: &mut [u32]) {
    // Again for AVX-512 (16 lanes per instruction, 32 registers).
    minima_blocks::<128>(shingles, keys, mults, minima)
}

fn minima(shingles: &[u64], keys: &[u32], mults: &[u32], minima: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F, checked just above.
            unsafe { minima_avx512(shingles, keys, mults, minima) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { minima_avx2(shingles, keys, mults, minima) };
            return;
        }
    }
    minima_blocks::<64>(shingles, keys, mults, minima)
}

impl Sketch for ClassicMinHash {
    fn num_perm(&self) -> usize {
        self.keys.len()
    }

    fn sketch_into(&self, shingles: &[u64], out: &mut [u64]) {
        assert_eq!(out.len(), self.keys.len(), "signature buffer length");
        if shingles.is_empty() {
            out.fill(u64::MAX);
            return;
        }
        MINIMA.with(|cell| {
            let mut buf = cell.borrow_mut();
            buf.clear();
            buf.resize(self.keys.len(), u32::MAX);
            minima(shingles, &self.keys, &self.mults, &mut buf);
            for (o, &m) in out.iter_mut().zip(buf.iter()) {
                *o = m as u64;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::mix64;
    use crate::verify::jaccard::estimate;

    #[test]
    fn rejects_bad_lengths() {
        assert!(ClassicMinHash::new(0, 1).is_err());
        assert!(ClassicMinHash::new(MAX_NUM_PERM + 1, 1).is_err());
        assert_eq!(ClassicMinHash::new(7, 1).unwrap().num_perm(), 7);
    }

    #[test]
    fn identical_sets_agree_everywhere_and_disjoint_nowhere() {
        let s = ClassicMinHash::new(256, 9).unwrap();
        let a: Vec<u64> = (0..500).map(mix64).collect();
        let b: Vec<u64> = (500..1000).map(mix64).collect();
        assert_eq!(estimate(&s.sketch(&a), &s.sketch(&a)), 1.0);
        assert_eq!(estimate(&s.sketch(&a), &s.sketch(&b)), 0.0);
    }

    #[test]
    fn seed_changes_the_permutations() {
        let a: Vec<u64> = (0..50).collect();
        let s1 = ClassicMinHash::new(64, 1).unwrap().sketch(&a);
        let s2 = ClassicMinHash::new(64, 2).unwrap().sketch(&a);
        assert_ne!(s1, s2);
        assert_eq!(s1, ClassicMinHash::new(64, 1).unwrap().sketch(&a));
    }

    #[test]
    fn every_block_width_computes_each_lanes_minimum() {
        // Lengths that leave remainders at every block width, down to single lanes.
        for num_perm in [1, 7, 8, 9, 100, 128, 200, 255, 300] {
            let s = ClassicMinHash::new(num_perm, 11).unwrap();
            for n in [1u64, 3, 60, 500] {
                let set: Vec<u64> = (0..n).map(|i| mix64(i + num_perm as u64)).collect();
                let expected: Vec<u64> = s
                    .keys
                    .iter()
                    .zip(&s.mults)
                    .map(|(&k, &m)| {
                        let lane = set.iter().map(|&x| (fold(x) ^ k).wrapping_mul(m));
                        u64::from(lane.min().unwrap())
                    })
                    .collect();
                assert_eq!(s.sketch(&set), expected, "K {num_perm}, n {n}");
                let mut generic = vec![u32::MAX; num_perm];
                minima_blocks::<64>(&set, &s.keys, &s.mults, &mut generic);
                assert!(generic
                    .iter()
                    .zip(&expected)
                    .all(|(&g, &e)| u64::from(g) == e));
            }
        }
    }

    #[test]
    fn empty_input_is_all_max() {
        let s = ClassicMinHash::new(8, 1).unwrap();
        assert_eq!(s.sketch(&[]), vec![u64::MAX; 8]);
    }
}
