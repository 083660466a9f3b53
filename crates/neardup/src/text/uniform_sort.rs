//! Sorting by a uniformly distributed 64-bit key (shingle hashes, band keys): values are
//! scattered by the key's top bits into n to 2n buckets (a counting pass and a placing
//! pass), which leaves each one at most a few places from where it belongs, and one
//! insertion pass finishes. Linear in expectation, against n log n for a comparison sort.

/// Buffers reused from one sort to the next.
#[derive(Debug)]
pub(crate) struct Scratch<T> {
    placed: Vec<T>,
    next: Vec<u32>,
}

impl<T> Default for Scratch<T> {
    fn default() -> Self {
        Scratch {
            placed: Vec::new(),
            next: Vec::new(),
        }
    }
}

/// Sorts `v` by `Ord`, where `key` is uniformly distributed and orders values as `Ord`
/// does in its top bits (`a < b` implies `key(a) <= key(b)`). Keys chosen to share
/// their top bits cost an `n log n` sort, never a quadratic one.
///
/// Uses 2^(⌊log2 n⌋ + 1) buckets, at most 2^24: n to 2n. Twice as many made the
/// insertion pass cheaper but the prefix sum over the counters dearer, and the shingle
/// set 13 % slower (criterion `shingle/char5_set/ascii_long`, 206 against 232 MiB/s).
pub(crate) fn sort<T: Copy + Ord + Default>(
    v: &mut Vec<T>,
    scratch: &mut Scratch<T>,
    key: impl Fn(&T) -> u64,
) {
    let n = v.len();
    if n < 2 {
        return;
    }
    assert!(u32::try_from(n).is_ok(), "at most 2^32 - 1 values");
    let Scratch { placed, next } = scratch;
    // Most values end up alone in their bucket or with one other, which the insertion
    // pass orders without a branch.
    let bits = (usize::BITS - n.leading_zeros()).min(24);
    let shift = 64 - bits;
    next.clear();
    next.resize(1 << bits, 0);
    for x in v.iter() {
        next[(key(x) >> shift) as usize] += 1;
    }
    let mut sum = 0u32;
    for c in next.iter_mut() {
        let count = *c;
        *c = sum;
        sum += count;
    }
    placed.clear();
    placed.resize(n, T::default());
    for x in v.iter() {
        let slot = &mut next[(key(x) >> shift) as usize];
        placed[*slot as usize] = *x;
        *slot += 1;
    }
    if !insertion_sort_within(placed, 8 * n) {
        placed.sort_unstable();
    }
    std::mem::swap(v, placed);
}

/// Insertion sort, linear when every element is a few places from where it belongs;
/// gives up (returning false, `v` permuted but unsorted) after `budget` moves (the
/// bubble steps below are free; only shifts past them count).
///
/// Each step first orders the new value against the largest so far without a branch
/// (a bubble step: the larger is carried on, the smaller written behind it). After the
/// buckets, values out of order are nearly all a pair sharing a bucket, which that step
/// swaps; only a value below two before it takes the branch that shifts it further left,
/// so the branch is predicted, where shifting every such pair was a misprediction each.
fn insertion_sort_within<T: Copy + Ord>(v: &mut [T], mut budget: usize) -> bool {
    let Some(&first) = v.first() else {
        return true;
    };
    // The largest value so far, not yet written, and the largest of those written.
    let mut carried = first;
    let mut written_max: Option<T> = None;
    for i in 1..v.len() {
        let x = v[i];
        let low = carried.min(x);
        carried = carried.max(x);
        v[i - 1] = low;
        match written_max {
            Some(m) if m > low => {
                // `v[..i - 1]` is sorted and ends above `low`: shift it in.
                let mut j = i - 1;
                while j > 0 && v[j - 1] > low {
                    v[j] = v[j - 1];
                    j -= 1;
                }
                v[j] = low;
                budget = match budget.checked_sub(i - 1 - j) {
                    Some(left) => left,
                    None => {
                        // Leaves `v` a permutation of what it was.
                        v[i] = carried;
                        return false;
                    }
                };
            }
            _ => written_max = Some(low),
        }
    }
    let last = v.len() - 1;
    v[last] = carried;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted<T: Copy + Ord + Default + std::fmt::Debug>(mut v: Vec<T>, key: impl Fn(&T) -> u64) {
        let mut expected = v.clone();
        expected.sort_unstable();
        sort(&mut v, &mut Scratch::default(), &key);
        assert_eq!(v, expected);
    }

    #[test]
    fn sorts_records_by_key_then_the_rest() {
        let mut rng = crate::rng::SplitMix64::new(7);
        // Few distinct keys, so buckets hold runs of equal keys ordered by document.
        let keys: Vec<u64> = (0..50).map(|_| rng.next_u64()).collect();
        let v: Vec<(u64, u32)> = (0..5000u32)
            .map(|d| {
                (
                    keys[rng.next_u64() as usize % keys.len()],
                    d.wrapping_mul(2654435761),
                )
            })
            .collect();
        sorted(v, |r| r.0);
    }

    #[test]
    fn keys_that_share_their_top_bits_still_sort() {
        sorted((0..5000u64).rev().collect(), |&x| x);
        sorted(
            (0..5000u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9) & 0xFFFF_FFFF)
                .collect(),
            |&x| x,
        );
    }

    /// Every arrangement of up to six values from three (repeats, pairs, reversed runs)
    /// under every budget: always a permutation of the input, sorted when it says so,
    /// and it says so when the budget is ample.
    #[test]
    fn insertion_sort_keeps_every_value_under_any_budget() {
        for len in 0..=6u32 {
            for code in 0..3usize.pow(len) {
                let input: Vec<u8> = (0..len).map(|i| (code / 3usize.pow(i) % 3) as u8).collect();
                let mut expected = input.clone();
                expected.sort_unstable();
                for budget in 0..=20 {
                    let mut v = input.clone();
                    let sorted = insertion_sort_within(&mut v, budget);
                    let mut permuted = v.clone();
                    permuted.sort_unstable();
                    assert_eq!(permuted, expected, "{input:?}, budget {budget}");
                    if sorted {
                        assert_eq!(v, expected, "{input:?}, budget {budget}");
                    }
                    if budget >= 15 {
                        assert!(sorted, "{input:?}, budget {budget}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn sorts_any_values(v in proptest::collection::vec(proptest::num::u64::ANY, 0..3000)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            let mut got = v;
            sort(&mut got, &mut Scratch::default(), |&x| x);
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
