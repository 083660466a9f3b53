//! The prefilter of exact verification: a 1-bit minwise sketch (Li & König, 2010) of each
//! long document, which rejects candidates far below the threshold before their sets are
//! merged.
//!
//! Each shingle is hashed once and falls into one of [`BINS`] bins by its high bits; a bin
//! keeps its smallest hash, of which only the lowest bit is stored (one-permutation
//! hashing without densification). In a bin that is filled in both documents, the two
//! smallest hashes are equal with probability J on average, and two different hashes
//! agree in their low bit with probability ½; a bin filled in one document only never
//! holds equal hashes. So each bin filled in either document agrees with probability
//! `p(J) = J + (1 − J)/2` on average over the bins, and bins empty in both always agree.
//!
//! A sketch also marks its empty bins, so a pair's `n` bins filled in either document are
//! known. A pair at or above the threshold has `p ≥ p(t)`, and the agreeing ones among its
//! `n` bins count at least as high as a binomial(n, p(t)) count would (bins hold disjoint
//! shingles, which only narrows the count). The prefilter rejects a pair when its agreeing
//! bins are so few that such a count falls that low with probability at most
//! [`WRONG_REJECTION`].

use std::sync::OnceLock;

use crate::rng::mix64;

/// Bins of the sketch: 4,096 bits and 4,096 empty marks, 1 KiB per long document. With
/// 1,024 the templated pages' candidates at Jaccard 0.65–0.75 mostly got through (2.6 of
/// 5.4 million rejected at 20 × 6); with 4,096, 5.0 million are.
pub const BINS: usize = 4096;
const WORDS: usize = BINS / 64;
/// Words stored per sketch: the bits, then the marks of the empty bins.
pub(crate) const SKETCH_WORDS: usize = 2 * WORDS;

/// Documents with fewer shingles get no sketch: merging them costs less than a sketch.
pub const MIN_SET: usize = 256;

/// Probability, per pair at or above the threshold, that the prefilter rejects it. Over
/// 10⁸ true pairs the expected number of wrong rejections is 0.1.
pub const WRONG_REJECTION: f64 = 1e-9;

/// Writes the sketch of a sorted set of 64-bit shingles into `out`
/// ([`SKETCH_WORDS`] words); `key` is the seed of the hash.
pub(crate) fn sketch(set: &[u64], key: u64, out: &mut [u64]) {
    let mut least = [u64::MAX; BINS];
    for &s in set {
        let h = mix64(s ^ key);
        let bin = (h >> (64 - BINS.trailing_zeros())) as usize;
        least[bin] = least[bin].min(h);
    }
    out.fill(0);
    let (bits, empty) = out.split_at_mut(WORDS);
    for (i, &v) in least.iter().enumerate() {
        if v == u64::MAX {
            empty[i / 64] |= 1 << (i % 64);
        } else {
            bits[i / 64] |= (v & 1) << (i % 64);
        }
    }
}

/// Bins filled in either sketch, and how many of them agree.
fn filled_and_agreeing(a: &[u64], b: &[u64]) -> (usize, usize) {
    let (mut filled, mut agreeing) = (0, 0);
    for w in 0..WORDS {
        let in_either = !(a[WORDS + w] & b[WORDS + w]);
        filled += in_either.count_ones() as usize;
        agreeing += (!(a[w] ^ b[w]) & in_either).count_ones() as usize;
    }
    (filled, agreeing)
}

/// When two sketches are far enough below the threshold to skip the exact check.
#[derive(Debug)]
pub(crate) struct Prefilter {
    /// Probability that a bin agrees for a pair exactly at the threshold.
    p: f64,
    /// `reject_at_most[n]`: with `n` bins filled in either document, the pair is rejected
    /// when at most this many bins agree (`None`: never). Computed when first needed:
    /// long documents fill nearly every bin, so few of the 1,025 are.
    reject_at_most: Vec<OnceLock<Option<usize>>>,
}

impl Prefilter {
    /// The prefilter at `threshold`.
    pub(crate) fn new(threshold: f64) -> Self {
        Prefilter {
            p: threshold + (1.0 - threshold) / 2.0,
            reject_at_most: (0..=BINS).map(|_| OnceLock::new()).collect(),
        }
    }

    /// True if the pair can be rejected without its exact Jaccard.
    pub(crate) fn rejects(&self, a: &[u64], b: &[u64]) -> bool {
        let (filled, agreeing) = filled_and_agreeing(a, b);
        let cut = self.reject_at_most[filled]
            .get_or_init(|| binomial_quantile(filled, self.p, WRONG_REJECTION));
        cut.is_some_and(|m| agreeing <= m)
    }
}

/// ln k! for k = 0 ..= [`BINS`], made once.
fn log_factorials() -> &'static [f64] {
    static TABLE: OnceLock<Vec<f64>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![0.0; BINS + 1];
        for k in 1..=BINS {
            t[k] = t[k - 1] + (k as f64).ln();
        }
        t
    })
}

/// The largest `m` with P(binomial(n, p) ≤ m) ≤ `epsilon`, if there is one (`n` at most
/// [`BINS`]).
///
/// The sum starts 12 standard deviations below the mean (at 0 if that is below it): what
/// lies further down adds less than e⁻⁷² to the tail (Chernoff), against an `epsilon` of
/// 10⁻⁹, and the walk takes a few hundred steps instead of the thousands from 0 that
/// made each of 4,096 sketch lengths cost milliseconds.
fn binomial_quantile(n: usize, p: f64, epsilon: f64) -> Option<usize> {
    if p >= 1.0 {
        // Every position agrees: any disagreement rules the pair out.
        return n.checked_sub(1);
    }
    // In logs: (1 − p)ⁿ underflows for long sketches.
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let lf = log_factorials();
    let log_pmf = |m: usize| lf[n] - lf[m] - lf[n - m] + m as f64 * lp + (n - m) as f64 * lq;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    let start = (n as f64 * p - 12.0 * sd).floor().max(0.0) as usize;
    let mut cdf = 0.0;
    let mut last = start.checked_sub(1);
    for m in start..=n {
        cdf += log_pmf(m).exp();
        if cdf > epsilon {
            break;
        }
        last = Some(m);
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn sketched(set: &[u64]) -> Vec<u64> {
        let mut out = vec![0; SKETCH_WORDS];
        sketch(set, 99, &mut out);
        out
    }

    #[test]
    fn identical_sets_agree_everywhere_and_empty_bins_are_marked() {
        let set: Vec<u64> = (0..300).collect();
        let s = sketched(&set);
        let (filled, agreeing) = filled_and_agreeing(&s, &s);
        assert_eq!(filled, agreeing);
        // 300 shingles in 4,096 bins fill about 4096·(1 − e^(−300/4096)) ≈ 289.
        assert!((220..=300).contains(&filled), "{filled} filled bins");
        // Against an empty set: the same bins filled, about half agreeing by chance.
        let (f, agreeing) = filled_and_agreeing(&sketched(&[]), &s);
        assert_eq!(f, filled);
        assert!(
            (filled / 4..filled * 3 / 4).contains(&agreeing),
            "{agreeing}"
        );
    }

    #[test]
    fn quantile_is_the_last_count_under_epsilon() {
        let cdf = |n: usize, p: f64, m: usize| -> f64 {
            // Direct sum with binomial coefficients, fine for n ≤ 60.
            let mut c = 1.0f64;
            let mut s = 0.0;
            for k in 0..=m {
                if k > 0 {
                    c = c * (n - k + 1) as f64 / k as f64;
                }
                s += c * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32);
            }
            s
        };
        for (n, p, eps) in [(60, 0.9, 1e-9), (60, 0.5, 1e-3), (40, 0.9, 1e-6)] {
            let m = binomial_quantile(n, p, eps).unwrap();
            assert!(cdf(n, p, m) <= eps && cdf(n, p, m + 1) > eps, "{n} {p}");
        }
        assert_eq!(binomial_quantile(128, 1.0, 1e-9), Some(127));
        // Too few positions to reject anything at this confidence.
        assert_eq!(binomial_quantile(4, 0.9, 1e-9), None);
        assert!(binomial_quantile(BINS, 0.9, 1e-9).is_some_and(|m| m > 800));
        // Summing from 0, as the quantile did before it started near the mean, gives the
        // same cut for every sketch length.
        let from_zero = |n: usize, p: f64, eps: f64| {
            let (lp, lq) = (p.ln(), (1.0 - p).ln());
            let (mut log_pmf, mut cdf, mut last) = (n as f64 * lq, 0.0, None);
            for m in 0..=n {
                if m > 0 {
                    log_pmf += ((n - m + 1) as f64).ln() - (m as f64).ln() + lp - lq;
                }
                cdf += log_pmf.exp();
                if cdf > eps {
                    break;
                }
                last = Some(m);
            }
            last
        };
        for n in (1..=BINS).step_by(37).chain([BINS]) {
            for p in [0.9, 0.85, 0.6] {
                assert_eq!(
                    binomial_quantile(n, p, 1e-9),
                    from_zero(n, p, 1e-9),
                    "{n} {p}"
                );
            }
        }
    }

    /// Random set pairs at chosen Jaccard similarities: at the threshold the rejection
    /// rate stays within the bound, and pairs far below it are rejected.
    fn rejected(jaccard: f64, size: usize, trials: usize) -> usize {
        let filter = Prefilter::new(0.8);
        let mut rng = SplitMix64::new(3);
        (0..trials)
            .filter(|_| {
                // |A ∩ B| = s, |A \ B| = |B \ A| = d: J = s / (s + 2d).
                let s = (size as f64 * 2.0 * jaccard / (1.0 + jaccard)).round() as usize;
                let draw = |rng: &mut SplitMix64, n: usize| -> Vec<u64> {
                    (0..n).map(|_| rng.next_u64()).collect()
                };
                let shared = draw(&mut rng, s);
                let mut a = [shared.clone(), draw(&mut rng, size - s)].concat();
                let mut b = [shared, draw(&mut rng, size - s)].concat();
                a.sort_unstable();
                b.sort_unstable();
                filter.rejects(&sketched(&a), &sketched(&b))
            })
            .count()
    }

    #[test]
    fn keeps_pairs_at_the_threshold() {
        // Each rejected with probability ≤ 1e-9: none of these. Small sets leave most bins
        // empty, which the bound accounts for.
        for size in [256, 1_000, 4_000, 20_000] {
            assert_eq!(rejected(0.8, size, 200), 0, "size {size}");
        }
    }

    #[test]
    fn rejects_pairs_far_below() {
        // 4,000 shingles a side fill about 2,980 bins in either sketch, which cut near
        // p = 0.867, J = 0.73: J = 0.65 (p = 0.825) is six standard deviations below, and
        // J = 0.5 far below. With 1,024 bins the cut was near J = 0.69, and about one pair
        // in sixteen at 0.65 got through.
        assert_eq!(rejected(0.65, 4_000, 100), 100);
        assert_eq!(rejected(0.5, 4_000, 100), 100);
        // With 256 shingles only ~300–400 bins are filled and the cut is lower; J = 0.3
        // is still out.
        assert_eq!(rejected(0.3, 256, 100), 100);
    }
}
