//! The checks made on what an input yielded: an input that read nothing by mistake (a
//! wrong field name, the wrong format), a named id field in no record, and
//! `fail_on_error`'s malformed record.

use std::collections::BTreeMap;
use std::path::Path;

use crate::{Entry, Format, Record, SkipReason, Skipped};

use super::error::DocumentsError;
use super::options::InputOptions;

/// What one input yielded, to tell a run that read nothing by mistake from one that read
/// an input with nothing in it.
#[derive(Default)]
pub(super) struct InputTally {
    records: u64,
    with_id: u64,
    /// Records without an id whose text is blank (skipped as empty later).
    unnamed_blank: u64,
    /// Skipped entries by reason code: how many, and the first.
    skipped: BTreeMap<&'static str, (u64, Skipped)>,
}

impl InputTally {
    pub(super) fn record(&mut self, r: &Record) {
        self.records += 1;
        self.with_id += r.id.is_some() as u64;
        self.unnamed_blank += (r.id.is_none() && r.text.trim().is_empty()) as u64;
    }

    pub(super) fn skipped(&mut self, s: &Skipped) {
        let e = self
            .skipped
            .entry(s.reason.code())
            .or_insert_with(|| (0, s.clone()));
        e.0 += 1;
    }

    /// Fails when every record of the input was skipped for one reason (a wrong field
    /// name, the wrong format), or when a named id field is in no record; warns when it
    /// is in only some.
    pub(super) fn check(
        &self,
        path: &Path,
        format: Format,
        sniffed: bool,
        args: &InputOptions,
        fields: &[String],
        warnings: &mut Vec<String>,
    ) -> Result<(), DocumentsError> {
        let have = || {
            if fields.is_empty() {
                String::new()
            } else {
                let kind = if format == Format::Jsonl {
                    "fields"
                } else {
                    "columns"
                };
                format!("; the first records have the {kind}: {}", fields.join(", "))
            }
        };
        let skipped: u64 = self.skipped.values().map(|(n, _)| n).sum();
        let blank = self
            .skipped
            .get(SkipReason::BlankLine.code())
            .map_or(0, |(n, _)| *n);
        if self.records == 0 && skipped > blank {
            let reasons: Vec<_> = self
                .skipped
                .values()
                .filter(|(_, first)| first.reason != SkipReason::BlankLine)
                .collect();
            if let [(n, first)] = reasons.as_slice() {
                let message = match first.reason {
                    SkipReason::MissingField(_) => format!(
                        "no record of {} has the text field {:?} (all {n} skipped){}; \
                         name the text field with --text-field",
                        path.display(),
                        args.text_field.as_deref().unwrap_or("text"),
                        have()
                    ),
                    _ => format!(
                        "{} of {} {} skipped as {} (first: {}: {}); nothing to compare{}",
                        if *n == 1 {
                            "the only record".to_string()
                        } else {
                            format!("all {n} records")
                        },
                        path.display(),
                        are(*n, "was", "were"),
                        first.reason.code(),
                        first.location,
                        first.reason,
                        if sniffed && matches!(first.reason, SkipReason::MalformedJson(_)) {
                            " (it has no known extension and starts with '{', so it was read \
                             as JSONL; --format lines reads every line as text)"
                        } else {
                            ""
                        }
                    ),
                };
                return Err(DocumentsError::BadRecord(message));
            }
        }
        if format == Format::Jsonl {
            let field = args.id_field.as_deref().unwrap_or("id");
            if args.id_field.is_some() && self.records > 0 && self.with_id == 0 {
                return Err(DocumentsError::BadRecord(format!(
                    "no record of {} has the id field {field:?}{}",
                    path.display(),
                    have()
                )));
            }
            if self.with_id > 0 && self.with_id < self.records {
                warnings.push(format!(
                    "{} of {} of {} {} no id field {field:?}; {} named by line number",
                    self.records - self.with_id,
                    count(self.records, "record", "records"),
                    path.display(),
                    are(self.records - self.with_id, "has", "have"),
                    are(self.records - self.with_id, "it is", "they are"),
                ));
            }
        }
        // Blank lines are skipped as empty: their lack of an id does not matter.
        let unnamed = self.records - self.unnamed_blank - self.with_id;
        if format == Format::Lines && self.with_id > 0 && unnamed > 0 {
            warnings.push(format!(
                "{} of {} of {} {} no \"ID<TAB>\" before {} text; {} named by line number, the \
                 others by the id before their tab: ids of two kinds",
                unnamed,
                count(self.records - self.unnamed_blank, "line", "lines"),
                path.display(),
                are(unnamed, "has", "have"),
                are(unnamed, "its", "their"),
                are(unnamed, "it is", "they are"),
            ));
        }
        let malformed = self
            .skipped
            .get(SkipReason::MalformedJson(String::new()).code())
            .map_or(0, |(n, _)| *n);
        if sniffed && format == Format::Jsonl && malformed > 0 {
            warnings.push(format!(
                "{} was read as JSONL because its first non-blank byte is '{{', but {} of its \
                 lines {} not JSON; --format lines reads every line as text",
                path.display(),
                malformed,
                are(malformed, "is", "are")
            ));
        }
        Ok(())
    }
}

/// `one` if `n` is 1, else `many`: the verb or pronoun that agrees with a count.
fn are<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Under `--on-error fail`: an error for a malformed record (blank lines are not errors).
pub fn fail_on_bad(entry: &Entry) -> Result<(), DocumentsError> {
    match entry {
        Entry::Skipped(s) => fail_on_skipped(s),
        Entry::Record(r) => fail_on_lossy(r),
    }
}

/// [`fail_on_bad`] of a skipped record.
pub(super) fn fail_on_skipped(s: &Skipped) -> Result<(), DocumentsError> {
    if s.reason == SkipReason::BlankLine {
        return Ok(());
    }
    Err(DocumentsError::BadRecord(format!(
        "{}: {}",
        s.location, s.reason
    )))
}

/// [`fail_on_bad`] of a record.
pub(super) fn fail_on_lossy(r: &Record) -> Result<(), DocumentsError> {
    if !r.lossy {
        return Ok(());
    }
    Err(DocumentsError::BadRecord(format!(
        "{}: invalid UTF-8 (decoded lossily under --on-error skip)",
        r.location
    )))
}

/// `n` and the noun that agrees with it, digits grouped by thousands: "1,234 records".
fn count(n: u64, singular: &str, plural: &str) -> String {
    let digits = n.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{grouped} {}", if n == 1 { singular } else { plural })
}

#[cfg(test)]
mod tests {
    /// The summary's grouping (neardup-report's `thousands`), kept here without the
    /// dependency.
    #[test]
    fn counts_group_thousands() {
        assert_eq!(super::count(1, "record", "records"), "1 record");
        assert_eq!(super::count(999, "line", "lines"), "999 lines");
        assert_eq!(super::count(1000, "line", "lines"), "1,000 lines");
        assert_eq!(
            super::count(1_234_567, "record", "records"),
            "1,234,567 records"
        );
    }
}
