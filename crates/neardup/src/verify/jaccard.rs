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
    /// Accepts at ≥ t + 3σ and rejects at ≤ t − 3σ, σ = √(t(1−t)/K).
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
pub fn intersection_size<T: Ord + Copy>(a: &[T], b: &[T]) -> usize {
    intersection_size_by(a, b, |x| x)
}

/// [`intersection_size`] of the keys of two slices, each sorted by a key that no two of
/// its elements share.
pub(crate) fn intersection_size_by<T: Copy, K: Ord>(
    a: &[T],
    b: &[T],
    key: impl Fn(T) -> K,
) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    // Without branches on the comparison: near-duplicates interleave their elements at
    // random, so a branch would be mispredicted about every other step.
    while i < a.len() && j < b.len() {
        let (x, y) = (key(a[i]), key(b[j]));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
        n += usize::from(x == y);
    }
    n
}

/// Elements merged between two checks of [`intersection_at_least`]'s bound.
const EXIT_CHECK: usize = 64;

/// The size of the intersection of two sorted, deduplicated sets if it is at least
/// `required`, else `None`, found without merging to the end when it cannot be reached:
/// the merge stops once the matches so far plus the elements left in the shorter remainder
/// fall below `required` (the exact join's positional bound).
pub(crate) fn intersection_at_least<T: Ord + Copy>(
    a: &[T],
    b: &[T],
    required: usize,
) -> Option<usize> {
    let (mut i, mut j, mut n) = (0, 0, 0);
    loop {
        let reachable = n + (a.len() - i).min(b.len() - j);
        if reachable < required {
            return None;
        }
        // Every step moves i or j, so EXIT_CHECK steps are at most EXIT_CHECK elements
        // of the two sets; the inner loop needs no bounds on i and j beyond these.
        let steps = EXIT_CHECK.min(a.len() - i).min(b.len() - j);
        if steps == 0 {
            return Some(n);
        }
        let (sa, sb) = (&a[i..], &b[j..]);
        let (mut x, mut y) = (0, 0);
        for _ in 0..steps {
            let (p, q) = (sa[x], sb[y]);
            x += usize::from(p <= q);
            y += usize::from(q <= p);
            n += usize::from(p == q);
        }
        i += x;
        j += y;
    }
}

/// The least intersection with which two sets of sizes `len_a` and `len_b` meet the
/// threshold under [`meets_threshold`] and [`jaccard_from_counts`] (found with that very
/// test, so it agrees to the bit); more than either size when none does. For a threshold
/// above 0 it is at least 1: sets with nothing in common never meet it.
pub(crate) fn required_overlap(len_a: usize, len_b: usize, threshold: f64) -> usize {
    let passes = |o: usize| meets_threshold(jaccard_from_counts(o, len_a, len_b), threshold);
    let most = len_a.min(len_b);
    if !passes(most) {
        return most + 1;
    }
    // J = o / (s − o) ≥ t ⇔ o ≥ t·s / (1 + t): start there, then settle on the float test.
    let sum = len_a.saturating_add(len_b) as f64;
    let mut o = ((threshold * sum / (1.0 + threshold)).ceil().max(0.0) as usize).min(most);
    while o > 0 && passes(o - 1) {
        o -= 1;
    }
    while !passes(o) {
        o += 1;
    }
    o
}

/// Exact Jaccard of two sorted, deduplicated sets if it meets `threshold`, else `None`,
/// stopping the merge as soon as the threshold is out of reach.
pub fn jaccard_at_least<T: Ord + Copy>(a: &[T], b: &[T], threshold: f64) -> Option<f64> {
    let required = required_overlap(a.len(), b.len(), threshold);
    let n = intersection_at_least(a, b, required)?;
    Some(jaccard_from_counts(n, a.len(), b.len()))
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
pub fn jaccard<T: Ord + Copy>(a: &[T], b: &[T]) -> f64 {
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
pub(crate) fn triage_margin(threshold: f64, num_perm: usize) -> f64 {
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
    fn early_exit_agrees_with_the_full_merge() {
        let mut rng = crate::rng::SplitMix64::new(11);
        for round in 0..2_000 {
            // Sets from a small universe, so overlaps span 0..=1, sizes 0..300.
            let universe = 50 + round % 400;
            let mut draw = |n: usize| {
                let mut s: Vec<u64> = (0..n).map(|_| rng.next_u64() % universe as u64).collect();
                s.sort_unstable();
                s.dedup();
                s
            };
            let (la, lb) = (round % 300, (round * 7) % 300);
            let (a, b) = (draw(la), draw(lb));
            let full = intersection_size(&a, &b);
            for t in [0.01, 0.3, 0.5, 0.8, 0.95, 1.0] {
                let required = required_overlap(a.len(), b.len(), t);
                let passes = meets_threshold(jaccard(&a, &b), t);
                assert_eq!(
                    intersection_at_least(&a, &b, required),
                    (full >= required).then_some(full)
                );
                assert_eq!(jaccard_at_least(&a, &b, t).is_some(), passes, "t {t}");
                if let Some(j) = jaccard_at_least(&a, &b, t) {
                    assert_eq!(j, jaccard(&a, &b));
                }
            }
        }
    }

    #[test]
    fn required_overlap_is_the_least_passing_one() {
        for t in [0.1, 0.5, 0.7, 0.8, 0.9, 0.99, 1.0] {
            for la in 0..60 {
                for lb in 0..60 {
                    let o = required_overlap(la, lb, t);
                    let passes = |o: usize| meets_threshold(jaccard_from_counts(o, la, lb), t);
                    if o <= la.min(lb) {
                        assert!(passes(o) && o >= 1, "t {t} {la} {lb} {o}");
                        assert!(o == 1 || !passes(o - 1), "t {t} {la} {lb} {o}");
                    } else {
                        assert!((0..=la.min(lb)).all(|o| !passes(o)));
                    }
                }
            }
        }
    }

    #[test]
    fn jaccard_matches_definition() {
        // {1,2,3,4} vs {3,4,5}: 2 shared of 5 distinct.
        assert_eq!(jaccard(&[1, 2, 3, 4], &[3, 4, 5]), 0.4);
        assert_eq!(jaccard(&[7], &[7]), 1.0);
        assert_eq!(jaccard::<u64>(&[], &[]), 0.0);
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
