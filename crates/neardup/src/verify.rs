//! Verification of candidate pairs: exact Jaccard on shingle sets, or the MinHash estimate.
//!
//! Every stage that decides "is this pair similar enough?" goes through [`meets_threshold`],
//! so the LSH pipeline and the exact join agree to the bit at the threshold.

use crate::error::{by_name, Error};

/// How candidate pairs are confirmed before they are reported.
///
/// Printed and parsed by its [name](Verification::name); with the `clap` feature it is a
/// `clap::ValueEnum` under the same names, its variants' first paragraphs as their help.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Verification {
    /// Exact Jaccard of the shingle sets (the default): every reported pair really is ≥ t.
    #[default]
    #[cfg_attr(feature = "clap", value(name = "exact"))]
    Exact,
    /// The MinHash estimate only: fast, but pairs near t may be on the wrong side.
    #[cfg_attr(feature = "clap", value(name = "estimate"))]
    Estimate,
    /// Accept or reject on the MinHash estimate when it is 3σ from t, exact Jaccard in
    /// between; pairs accepted on the estimate carry no exact Jaccard.
    ///
    /// Accepts at ≥ t + 3σ and rejects at ≤ t − 3σ, σ = √(t(1−t)/K): see
    /// [`triage_margin`].
    #[cfg_attr(feature = "clap", value(name = "triage"))]
    Triage,
    /// No verification: raw LSH candidates.
    #[cfg_attr(feature = "clap", value(name = "none"))]
    None,
}

impl Verification {
    /// Every policy, the default first.
    pub const ALL: [Verification; 4] = [
        Verification::Exact,
        Verification::Estimate,
        Verification::Triage,
        Verification::None,
    ];

    /// The policy's name: `exact`, `estimate`, `triage`, `none`.
    pub fn name(self) -> &'static str {
        match self {
            Verification::Exact => "exact",
            Verification::Estimate => "estimate",
            Verification::Triage => "triage",
            Verification::None => "none",
        }
    }
}

by_name!(Verification, Error::InvalidVerification);

/// Size of the intersection of two sets given as sorted, deduplicated slices.
pub fn intersection_size(a: &[u64], b: &[u64]) -> usize {
    // Galloping would help only for very unequal sizes; near-duplicates are of similar size.
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Jaccard similarity from an intersection size and the two set sizes; 0 for two empty sets.
///
/// The intersection cannot exceed either size; counts that break this give a meaningless
/// value, never a panic.
pub fn jaccard_from_counts(intersection: usize, len_a: usize, len_b: usize) -> f64 {
    let union = len_a.saturating_add(len_b).saturating_sub(intersection);
    if union == 0 {
        0.0
    } else {
        intersection as f64 / union as f64
    }
}

/// Exact Jaccard similarity of two sorted, deduplicated sets.
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    jaccard_from_counts(intersection_size(a, b), a.len(), b.len())
}

/// The one similarity test used everywhere: `jaccard >= threshold`.
pub fn meets_threshold(jaccard: f64, threshold: f64) -> bool {
    jaccard >= threshold
}

/// Standard deviation of the MinHash estimate of a pair whose Jaccard similarity is
/// `jaccard`, from `num_perm` positions: √(J(1 − J)/K), each position agreeing with
/// probability J.
pub fn estimate_std_dev(jaccard: f64, num_perm: usize) -> f64 {
    (jaccard * (1.0 - jaccard) / num_perm as f64).sqrt()
}

/// Margin of triage: three standard deviations of the estimate of a pair at `threshold`.
pub fn triage_margin(threshold: f64, num_perm: usize) -> f64 {
    3.0 * estimate_std_dev(threshold, num_perm)
}

/// MinHash estimate of Jaccard similarity: the share of signature positions that agree.
pub fn estimate<T: PartialEq>(sig_a: &[T], sig_b: &[T]) -> f64 {
    debug_assert_eq!(sig_a.len(), sig_b.len());
    if sig_a.is_empty() {
        return 0.0;
    }
    let equal = sig_a.iter().zip(sig_b).filter(|(x, y)| x == y).count();
    equal as f64 / sig_a.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersection_of_sorted_sets() {
        assert_eq!(intersection_size(&[1, 3, 5, 7], &[3, 4, 5, 8]), 2);
        assert_eq!(intersection_size(&[], &[1, 2]), 0);
        assert_eq!(intersection_size(&[1, 2], &[1, 2]), 2);
    }

    #[test]
    fn jaccard_matches_definition() {
        // {1,2,3,4} vs {3,4,5}: 2 shared of 5 distinct.
        assert_eq!(jaccard(&[1, 2, 3, 4], &[3, 4, 5]), 0.4);
        assert_eq!(jaccard(&[7], &[7]), 1.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
        assert_eq!(jaccard(&[1], &[2]), 0.0);
        // Impossible counts give a number, not an overflow.
        assert_eq!(jaccard_from_counts(5, 1, 1), 0.0);
        assert!(jaccard_from_counts(1, usize::MAX, usize::MAX) >= 0.0);
    }

    #[test]
    fn estimate_counts_agreeing_positions() {
        assert_eq!(estimate(&[1, 2, 3, 4], &[1, 9, 3, 9]), 0.5);
        assert_eq!(estimate::<u64>(&[], &[]), 0.0);
    }

    #[test]
    fn standard_deviation_of_the_estimate() {
        // J = 0.5, K = 100: √(0.25 / 100) = 0.05; none at J = 0 or 1.
        assert!((estimate_std_dev(0.5, 100) - 0.05).abs() < 1e-15);
        assert_eq!(estimate_std_dev(1.0, 128), 0.0);
        assert_eq!(estimate_std_dev(0.0, 128), 0.0);
        assert!((triage_margin(0.8, 128) - 3.0 * (0.16f64 / 128.0).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn policies_parse_and_print_by_name() {
        crate::error::assert_named(&Verification::ALL);
        let names = Verification::ALL.map(|v| v.to_string());
        assert_eq!(names, ["exact", "estimate", "triage", "none"]);
        assert_eq!(
            "Exact".parse::<Verification>(),
            Err(Error::InvalidVerification("Exact".into()))
        );
        assert_eq!(Verification::default(), Verification::Exact);
    }

    #[test]
    fn threshold_is_inclusive() {
        assert!(meets_threshold(0.8, 0.8));
        assert!(!meets_threshold(0.799_999, 0.8));
    }
}
