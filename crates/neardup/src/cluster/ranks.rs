//! A keep order from a value of each document (a timestamp, a price, a score), for
//! [`Shingled::set_keep_ranks`](crate::corpus::Shingled::set_keep_ranks).

use std::cmp::Ordering;

use crate::corpus::slot::doc_id;

/// One rank per document, made from a value of each: a cluster keeps its document with
/// the smallest rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeepRanks {
    /// One rank per document, in document order.
    pub ranks: Vec<u32>,
    /// True if the values were compared as numbers.
    pub numeric: bool,
    /// Documents without a value.
    pub missing: u64,
}

impl KeepRanks {
    /// Ranks documents by their values, the smallest first (the largest if `descending`).
    ///
    /// Values compare as numbers when every present value is one, else as text (byte
    /// order); documents without a value come last whatever the direction; ties go to
    /// the first in input order.
    ///
    /// ```
    /// use neardup::cluster::KeepRanks;
    /// // Keep the newest: "10" is larger than "9" as a number, and a missing value is last.
    /// let newest = KeepRanks::from_values(&[Some("9"), None, Some("10")], true);
    /// assert_eq!(newest.ranks, [1, 2, 0]);
    /// assert!(newest.numeric && newest.missing == 1);
    /// ```
    pub fn from_values(values: &[Option<&str>], descending: bool) -> KeepRanks {
        let numbers: Option<Vec<Option<f64>>> = values
            .iter()
            .map(|v| match v {
                None => Some(None),
                Some(v) => v
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(Some),
            })
            .collect();
        let directed = |o: Ordering| if descending { o.reverse() } else { o };
        // Present values in the chosen direction, then the missing ones; ties in input order.
        fn by<T>(x: Option<T>, y: Option<T>, cmp: impl Fn(T, T) -> Ordering) -> Ordering {
            match (x, y) {
                (Some(x), Some(y)) => cmp(x, y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
        }
        let mut order: Vec<usize> = (0..values.len()).collect();
        match &numbers {
            Some(numbers) => order.sort_by(|&a, &b| {
                by(numbers[a], numbers[b], |x, y| directed(x.total_cmp(&y))).then(a.cmp(&b))
            }),
            None => order.sort_by(|&a, &b| {
                by(values[a], values[b], |x, y| {
                    directed(x.as_bytes().cmp(y.as_bytes()))
                })
                .then(a.cmp(&b))
            }),
        }
        let mut ranks = vec![0u32; values.len()];
        for (rank, &doc) in order.iter().enumerate() {
            ranks[doc] = doc_id(rank);
        }
        KeepRanks {
            ranks,
            numeric: numbers.is_some(),
            missing: values.iter().filter(|v| v.is_none()).count() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_as_numbers() {
        // As text "10" < "9"; as numbers 9 < 10.
        let v = [Some("10"), Some("9"), Some(" 100 ")];
        let asc = KeepRanks::from_values(&v, false);
        assert!(asc.numeric);
        assert_eq!(asc.ranks, vec![1, 0, 2]);
        let desc = KeepRanks::from_values(&v, true);
        assert_eq!(desc.ranks, vec![1, 2, 0]);
    }

    #[test]
    fn text_when_any_value_is_not_a_number_and_missing_last() {
        let v = [
            Some("2024-05-01"),
            None,
            Some("2023-12-31"),
            Some("2024-05-01"),
        ];
        let desc = KeepRanks::from_values(&v, true);
        assert!(!desc.numeric);
        assert_eq!(desc.missing, 1);
        // Newest first, ties in input order, the record without a date last.
        assert_eq!(desc.ranks, vec![0, 3, 2, 1]);
        let asc = KeepRanks::from_values(&v, false);
        assert_eq!(asc.ranks, vec![1, 3, 0, 2]);
    }
}
