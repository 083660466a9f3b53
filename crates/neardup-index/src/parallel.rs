//! Parallel work that stays on the calling thread when it is small.
//!
//! A server commits a few documents at a time, hundreds of times a second. Handing such
//! a batch to the thread pool wakes its threads, which then spin looking for more work:
//! under that load a fifth of the server's time went to context switches and yields.

use rayon::prelude::*;

/// Below this many items a map runs on the calling thread.
const PARALLEL_MIN: usize = 64;

/// `items.map(f).collect()`, in parallel only for many items.
pub(crate) fn map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync + Send) -> Vec<U> {
    if items.len() < PARALLEL_MIN {
        items.iter().map(f).collect()
    } else {
        items.par_iter().map(f).collect()
    }
}

/// Sorts each list, in parallel only when they hold many items between them.
pub(crate) fn sort_each<T: Ord + Send>(lists: &mut [Vec<T>]) {
    if lists.iter().map(Vec::len).sum::<usize>() < PARALLEL_MIN * lists.len() {
        lists.iter_mut().for_each(|l| l.sort_unstable());
    } else {
        lists.par_iter_mut().for_each(|l| l.sort_unstable());
    }
}

/// `items.sort_unstable_by(cmp)`, in parallel only for many items.
pub(crate) fn sort_by<T: Send>(items: &mut [T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering + Sync) {
    if items.len() < PARALLEL_MIN {
        items.sort_unstable_by(cmp);
    } else {
        items.par_sort_unstable_by(cmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_inputs_give_the_same_answers() {
        for n in [0, 1, PARALLEL_MIN - 1, PARALLEL_MIN, 10 * PARALLEL_MIN] {
            let items: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            assert_eq!(
                map(&items, |x| x ^ 1),
                items.iter().map(|x| x ^ 1).collect::<Vec<_>>()
            );
            let mut sorted = items.clone();
            sort_by(&mut sorted, |a, b| b.cmp(a));
            let mut want = items.clone();
            want.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(sorted, want);
            let mut lists = vec![items.clone(), items.clone()];
            sort_each(&mut lists);
            want.reverse();
            assert_eq!(lists, vec![want.clone(), want]);
        }
    }
}
