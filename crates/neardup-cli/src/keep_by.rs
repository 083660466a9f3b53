//! `--keep-by FIELD[:asc|:desc]`: which document a cluster keeps, from a value of each record.

use anyhow::Result;
use neardup::cluster::KeepRanks;

use crate::errors::usage;

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

    /// One rank per document from each record's value (see [`KeepRanks::from_values`]).
    pub fn ranks(&self, values: &[Option<&str>]) -> KeepRanks {
        KeepRanks::from_values(values, self.descending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
