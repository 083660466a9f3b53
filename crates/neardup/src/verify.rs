//! Verification of candidate pairs: exact Jaccard on shingle sets, or the MinHash estimate.
//!
//! Every stage that decides "is this pair similar enough?" goes through [`meets_threshold`],
//! so the LSH pipeline and the exact join agree to the bit at the threshold.

/// How candidate pairs are confirmed before they are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Verification {
    /// Exact Jaccard of the shingle sets (the default): every reported pair really is ≥ t.
    #[default]
    Exact,
    /// The signature estimate only: fast, but pairs near t may be on the wrong side.
    Estimate,
    /// Decide on the signature when the estimate is far from t (accept at ≥ t + 3σ,
    /// reject at ≤ t − 3σ, σ = √(t(1−t)/K)), exact Jaccard in between. Pairs accepted on
    /// the signature carry no exact Jaccard.
    Triage,
    /// No verification: raw LSH candidates.
    None,
}

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

/// Margin of triage: three standard deviations of the estimate of a pair at `threshold`.
pub fn triage_margin(threshold: f64, num_perm: usize) -> f64 {
    3.0 * (threshold * (1.0 - threshold) / num_perm as f64).sqrt()
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
    fn threshold_is_inclusive() {
        assert!(meets_threshold(0.8, 0.8));
        assert!(!meets_threshold(0.799_999, 0.8));
    }
}
