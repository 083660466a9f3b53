//! SplitMix64: the one seeded generator of the crate, and its finalizer.
//!
//! Sketch permutations are drawn from it, so its sequence is part of the output: a seed
//! must give the same signatures, hence the same pairs, on every machine and version.

/// The SplitMix64 generator (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", 2014): a 64-bit counter stepped by the golden ratio, each value passed
/// through a mixing bijection. Small, fast and fully determined by its seed; not for
/// cryptography.
///
/// The crate draws sketch permutations from it; the `plan` command and the tests draw
/// samples and corpora from it, so they need no other generator.
///
/// ```
/// use neardup::sketch::SplitMix64;
/// let mut rng = SplitMix64::new(42);
/// let first = rng.next_u64();
/// assert_eq!(SplitMix64::new(42).next_u64(), first); // the seed fixes the sequence
/// assert!(rng.below(10) < 10);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 bits of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }

    /// The next value reduced modulo `n`, in `0..n` (biased by at most `n / 2⁶⁴`); 0 when
    /// `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64().checked_rem(n).unwrap_or(0)
    }
}

/// The SplitMix64 finalizer: a bijection on `u64` with full avalanche.
#[inline(always)]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first values for seed 1234567, computed apart from this code (Python, from
    /// Vigna's `splitmix64.c`): a changed constant would change every signature.
    #[test]
    fn matches_the_reference_sequence() {
        let mut rng = SplitMix64::new(1_234_567);
        let got: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
        assert_eq!(
            got,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821,
            ]
        );
    }

    #[test]
    fn below_stays_in_range_and_zero_is_safe() {
        let mut rng = SplitMix64::new(3);
        assert!((0..1000).all(|_| rng.below(7) < 7));
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below(1), 0);
    }
}
