//! `--keep-by FIELD[:asc|:desc]`: which document a cluster keeps, from a value of each record.

use std::cmp::Ordering;

use anyhow::Result;

use crate::usage::usage;

/// A parsed `--keep-by`: the field or column, and whether the largest value is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeepBy {
    pub field: String,
    pub descending: bool,
}

impl KeepBy {
    /// Parses `FIELD`, `FIELD:asc` or `FIELD:desc` (a field name may itself hold colons).
    pub fn parse(spec: &str) -> Result<KeepBy> {
        let (field, descending) = match spec.rsplit_once(':') {
            Some((field, "asc")) => (field, false),
            Some((field, "desc")) => (field, true),
            _ => (spec, false),
        };
        if field.is_empty() {
            usage!("--keep-by needs a field or column name, as in --keep-by Timestamp:desc");
        }
        Ok(KeepBy {
            field: field.to_string(),
            descending,
        })
    }

    /// One rank per document: the kept document of a cluster is its smallest rank.
    ///
    /// Values compare as numbers when every present value is one, else as text (byte
    /// order); documents without a value come last whatever the direction; ties go to
    /// the first in input order.
    pub fn ranks(&self, values: &[Option<&str>]) -> Ranks {
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
        let mut order: Vec<u32> = (0..values.len() as u32).collect();
        let directed = |o: Ordering| if self.descending { o.reverse() } else { o };
        match &numbers {
            Some(numbers) => order.sort_by(|&a, &b| {
                let (x, y) = (numbers[a as usize], numbers[b as usize]);
                match (x, y) {
                    (Some(x), Some(y)) => directed(x.total_cmp(&y)),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                }
                .then(a.cmp(&b))
            }),
            None => order.sort_by(|&a, &b| {
                match (&values[a as usize], &values[b as usize]) {
                    (Some(x), Some(y)) => directed(x.as_bytes().cmp(y.as_bytes())),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                }
                .then(a.cmp(&b))
            }),
        }
        let mut ranks = vec![0u32; values.len()];
        for (rank, &doc) in order.iter().enumerate() {
            ranks[doc as usize] = rank as u32;
        }
        Ranks {
            ranks,
            numeric: numbers.is_some(),
            missing: values.iter().filter(|v| v.is_none()).count() as u64,
        }
    }
}

/// The keep order of `--keep-by`, and how it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranks {
    /// One rank per document.
    pub ranks: Vec<u32>,
    /// True if the values were compared as numbers.
    pub numeric: bool,
    /// Documents without a value.
    pub missing: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values<'a>(v: &[Option<&'a str>]) -> Vec<Option<&'a str>> {
        v.to_vec()
    }

    #[test]
    fn parses_direction() {
        let k = KeepBy::parse("Timestamp:desc").unwrap();
        assert_eq!((k.field.as_str(), k.descending), ("Timestamp", true));
        let k = KeepBy::parse("Timestamp").unwrap();
        assert_eq!((k.field.as_str(), k.descending), ("Timestamp", false));
        let k = KeepBy::parse("a:b:asc").unwrap();
        assert_eq!((k.field.as_str(), k.descending), ("a:b", false));
        let k = KeepBy::parse("time:zone").unwrap();
        assert_eq!(k.field, "time:zone");
        assert!(KeepBy::parse(":desc").is_err());
    }

    #[test]
    fn numbers_compare_as_numbers() {
        // As text "10" < "9"; as numbers 9 < 10.
        let v = values(&[Some("10"), Some("9"), Some(" 100 ")]);
        let asc = KeepBy::parse("x").unwrap().ranks(&v);
        assert!(asc.numeric);
        assert_eq!(asc.ranks, vec![1, 0, 2]);
        let desc = KeepBy::parse("x:desc").unwrap().ranks(&v);
        assert_eq!(desc.ranks, vec![1, 2, 0]);
    }

    #[test]
    fn text_when_any_value_is_not_a_number_and_missing_last() {
        let v = values(&[
            Some("2024-05-01"),
            None,
            Some("2023-12-31"),
            Some("2024-05-01"),
        ]);
        let desc = KeepBy::parse("d:desc").unwrap().ranks(&v);
        assert!(!desc.numeric);
        assert_eq!(desc.missing, 1);
        // Newest first, ties in input order, the record without a date last.
        assert_eq!(desc.ranks, vec![0, 3, 2, 1]);
        let asc = KeepBy::parse("d").unwrap().ranks(&v);
        assert_eq!(asc.ranks, vec![1, 3, 0, 2]);
    }
}
