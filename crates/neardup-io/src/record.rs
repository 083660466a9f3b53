//! What a reader yields: records, skipped records, and where each came from.

use std::fmt;

/// One document read from an input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// The user's id: the JSON id field (a string as is, a number as its source text),
    /// the CSV/TSV id column, the `ID` of an `ID<TAB>TEXT` line, or the path relative
    /// to the directory for a file in a tree. `None` means the input has none and the
    /// caller numbers the record (e.g. by [`Location::record`]). An empty id is kept
    /// as `Some("")`.
    pub id: Option<String>,
    /// The document text, decoded lossily if its bytes were not valid UTF-8 (see
    /// [`Record::lossy`]). May be empty: deciding what to do with empty documents is
    /// the caller's job.
    pub text: String,
    /// The record's exact bytes in the (decompressed) source, including its line
    /// terminator if it has one (JSONL, lines, CSV/TSV; a CSV record with quoted
    /// newlines spans several lines). Empty for a file of a directory tree, which is
    /// copied by path instead, for a Parquet row (rewritten by its row number), and for
    /// JSONL and lines read without
    /// [`ReadOptions::keep_raw`](crate::ReadOptions::keep_raw).
    pub raw: Vec<u8>,
    /// Where the record is.
    pub location: Location,
    /// True if invalid UTF-8 in the text or id was replaced by U+FFFD.
    pub lossy: bool,
    /// The value to order records by when choosing which one a cluster keeps, from the
    /// field or column named by [`ReadOptions::key_field`](crate::ReadOptions::key_field):
    /// JSONL: the top-level field's value (a string unescaped, a number as its source
    /// text, an array, object or boolean as its JSON text; absent or `null` is `None`);
    /// CSV/TSV: that column's value. Always `None` without a key field, and for the
    /// lines and dir formats.
    pub key: Option<String>,
    /// True if the id was a JSON number (JSONL; [`Record::id`] holds its source text,
    /// e.g. `8.50`), so it can be written back as a number. False for every other id.
    pub numeric_id: bool,
    /// For a file of a directory tree: its exact path (the directory as given joined
    /// with the relative path), which a non-UTF-8 file name keeps while [`Record::id`]
    /// and [`Location::source`] are lossy. `None` in every other format.
    pub path: Option<std::path::PathBuf>,
}

/// Where a record (or skipped record) is in its input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Location {
    /// The input as given, or `-` for standard input; for a file of a directory tree,
    /// the file's full path (the directory as given joined with the relative path).
    /// Shared: every record of an input points at the same name.
    pub source: std::sync::Arc<str>,
    /// The 1-based line of the record's first line in the (decompressed) source, counting
    /// `\n` line ends (CSV/TSV: also a lone `\r`, which ends a row there too); 1 for a
    /// file of a directory tree; the 1-based row for Parquet (as [`Location::record`]).
    /// Within a source, lines strictly increase.
    pub line: u64,
    /// The 1-based number of the entry within its source: every record and every
    /// skipped record counts, a CSV/TSV header does not.
    pub record: u64,
}

impl fmt::Display for Location {
    /// `source:line` (a file of a directory tree is line 1).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.source, self.line)
    }
}

/// One item of a reader: every record of the input yields exactly one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A document to deduplicate.
    Record(Record),
    /// A record that cannot be a document, with the reason.
    Skipped(Skipped),
}

impl Entry {
    /// Where the entry is in its input.
    pub fn location(&self) -> &Location {
        match self {
            Entry::Record(r) => &r.location,
            Entry::Skipped(s) => &s.location,
        }
    }

    /// The user's id, if the input gave one.
    pub fn id(&self) -> Option<&str> {
        match self {
            Entry::Record(r) => r.id.as_deref(),
            Entry::Skipped(s) => s.id.as_deref(),
        }
    }

    /// The record, if the entry is one.
    pub fn record(&self) -> Option<&Record> {
        match self {
            Entry::Record(r) => Some(r),
            Entry::Skipped(_) => None,
        }
    }

    /// The record, if the entry is one, by value.
    pub fn into_record(self) -> Option<Record> {
        match self {
            Entry::Record(r) => Some(r),
            Entry::Skipped(_) => None,
        }
    }
}

/// What [`Reader::read_into`](crate::Reader::read_into) read: a record, written into the
/// caller's [`Record`], or a skipped record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filled {
    /// The caller's record now holds the next record.
    Record,
    /// A record that cannot be a document, with the reason (the caller's record is left
    /// in an unspecified state).
    Skipped(Skipped),
}

/// A record of the input that is not a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Where it is.
    pub location: Location,
    /// Its id, when the reader could still find one (e.g. a JSON line with an id but no
    /// text, a file of a directory tree).
    pub id: Option<String>,
    /// Why it is not a document.
    pub reason: SkipReason,
}

/// Why a record was skipped. [`SkipReason::code`] gives a stable machine-readable name;
/// `Display` gives a short human-readable reason.
///
/// Readers give every reason but [`Empty`](SkipReason::Empty), which the caller gives a
/// record it read but found nothing to compare in, so that one list of reasons covers
/// everything an input holds that is not a document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The JSONL line is not a JSON object; holds the parser's message.
    MalformedJson(String),
    /// The JSON object has no text field; holds the field's name.
    MissingField(String),
    /// The JSON text field is not a string (a number, null, an array, ...); holds the
    /// field's name.
    FieldNotText(String),
    /// The CSV/TSV row has fewer fields than the columns it is read from need.
    MissingColumns {
        /// The number of fields in the header.
        expected: usize,
        /// The number of fields in the row.
        found: usize,
    },
    /// The file of a directory tree is binary: a NUL byte, or mostly control bytes and
    /// invalid UTF-8, in its first 8 KiB (see [`Format::Dir`](crate::Format::Dir)).
    Binary,
    /// The JSONL or CSV/TSV line is empty or only whitespace (JSONL) or only a line end
    /// (CSV/TSV). Blank lines of the lines format are records with empty text instead.
    BlankLine,
    /// The file of a directory tree (or a directory inside it) could not be read; holds
    /// the I/O error's message.
    Unreadable(String),
    /// The record (a line, a CSV/TSV row, a file of a directory tree) is longer than
    /// [`ReadOptions::max_record_bytes`](crate::ReadOptions::max_record_bytes); it was
    /// read past without being held in memory.
    TooLarge {
        /// The record's size in bytes, line end included.
        size: u64,
        /// The limit it exceeds.
        limit: u64,
    },
    /// CSV/TSV: a quoted field of the record is never closed, so the record runs from its
    /// first line to the end of the input. It is skipped rather than read as one huge
    /// field that silently swallows every later row.
    UnclosedQuote {
        /// The number of lines from the record's first line to the end of the input.
        lines: u64,
    },
    /// A symbolic link inside a directory tree, not followed (the walk follows links
    /// only when asked to, see [`ReadOptions::follow_links`](crate::ReadOptions::follow_links)).
    Symlink,
    /// A FIFO, socket or device inside a directory tree: never opened (opening a FIFO
    /// would wait for a writer forever).
    SpecialFile,
    /// The record's text has no shingles after normalization (e.g. it is empty or only
    /// whitespace), so there is nothing to compare it by. Readers yield such a record as
    /// a [`Record`]; the caller that shingles it skips it for this reason.
    Empty,
}

impl SkipReason {
    /// A stable snake_case name for reports: `malformed_json`, `missing_field`,
    /// `field_not_text`, `missing_columns`, `binary`, `blank_line`, `unreadable`,
    /// `too_large`, `unclosed_quote`, `symlink`, `special_file`, `empty`.
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::MalformedJson(_) => "malformed_json",
            SkipReason::MissingField(_) => "missing_field",
            SkipReason::FieldNotText(_) => "field_not_text",
            SkipReason::MissingColumns { .. } => "missing_columns",
            SkipReason::Binary => "binary",
            SkipReason::BlankLine => "blank_line",
            SkipReason::Unreadable(_) => "unreadable",
            SkipReason::TooLarge { .. } => "too_large",
            SkipReason::UnclosedQuote { .. } => "unclosed_quote",
            SkipReason::Symlink => "symlink",
            SkipReason::SpecialFile => "special_file",
            SkipReason::Empty => "empty",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::MalformedJson(msg) => write!(f, "malformed JSON: {msg}"),
            SkipReason::MissingField(field) => write!(f, "no {field:?} field"),
            SkipReason::FieldNotText(field) => write!(f, "field {field:?} is not a string"),
            SkipReason::MissingColumns { expected, found } => {
                write!(f, "row has {found} fields, header has {expected}")
            }
            SkipReason::Binary => f.write_str(
                "binary file (a NUL byte, or mostly control bytes and invalid UTF-8, in the \
                 first 8 KiB)",
            ),
            SkipReason::BlankLine => f.write_str("blank line"),
            SkipReason::Unreadable(msg) => write!(f, "unreadable: {msg}"),
            SkipReason::TooLarge { size, limit } => {
                write!(
                    f,
                    "record of {size} bytes is over the limit of {limit} bytes"
                )
            }
            SkipReason::UnclosedQuote { lines } => write!(
                f,
                "a quoted field is never closed: the record runs to the end of the input \
                 ({lines} lines)"
            ),
            SkipReason::Symlink => f.write_str("symbolic link, not followed (--follow reads it)"),
            SkipReason::SpecialFile => {
                f.write_str("not a regular file (a FIFO, socket or device), not opened")
            }
            SkipReason::Empty => f.write_str("no text to compare (empty after normalization)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_distinct() {
        let all = [
            SkipReason::MalformedJson("x".into()),
            SkipReason::MissingField("text".into()),
            SkipReason::FieldNotText("text".into()),
            SkipReason::MissingColumns {
                expected: 3,
                found: 1,
            },
            SkipReason::Binary,
            SkipReason::BlankLine,
            SkipReason::Unreadable("denied".into()),
            SkipReason::TooLarge { size: 9, limit: 8 },
            SkipReason::UnclosedQuote { lines: 3 },
            SkipReason::Symlink,
            SkipReason::SpecialFile,
            SkipReason::Empty,
        ];
        let codes: Vec<&str> = all.iter().map(SkipReason::code).collect();
        assert_eq!(
            codes,
            [
                "malformed_json",
                "missing_field",
                "field_not_text",
                "missing_columns",
                "binary",
                "blank_line",
                "unreadable",
                "too_large",
                "unclosed_quote",
                "symlink",
                "special_file",
                "empty"
            ]
        );
        for reason in &all {
            assert!(!reason.to_string().is_empty());
        }
    }

    #[test]
    fn display_is_readable() {
        assert_eq!(
            SkipReason::MissingField("body".into()).to_string(),
            r#"no "body" field"#
        );
        assert_eq!(
            SkipReason::MissingColumns {
                expected: 4,
                found: 2
            }
            .to_string(),
            "row has 2 fields, header has 4"
        );
        // The skipped list has said this of empty documents since before the variant.
        assert_eq!(
            SkipReason::Empty.to_string(),
            "no text to compare (empty after normalization)"
        );
        let loc = Location {
            source: "a.jsonl".into(),
            line: 3,
            record: 3,
        };
        assert_eq!(loc.to_string(), "a.jsonl:3");
    }

    #[test]
    fn entry_accessors() {
        let loc = Location {
            source: "s".into(),
            line: 1,
            record: 1,
        };
        let skipped = Entry::Skipped(Skipped {
            location: loc.clone(),
            id: Some("7".into()),
            reason: SkipReason::BlankLine,
        });
        assert_eq!(skipped.id(), Some("7"));
        assert!(skipped.record().is_none());
        assert_eq!(skipped.location(), &loc);
        let record = Entry::Record(Record {
            id: None,
            text: "t".into(),
            raw: b"t\n".to_vec(),
            location: loc,
            lossy: false,
            key: None,
            numeric_id: false,
            path: None,
        });
        assert_eq!(record.id(), None);
        assert_eq!(record.into_record().unwrap().text, "t");
    }
}
