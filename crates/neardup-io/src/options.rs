//! How to read an input: its format and where the id and text are.

use crate::format::Format;

/// Options for [`open`](crate::open). Every field has a default; set fields directly
/// or chain the `with_*` methods.
///
/// ```
/// use neardup_io::{Format, ReadOptions};
///
/// let opts = ReadOptions::default()
///     .with_format(Format::Tsv)
///     .with_text_columns(["Title", "Short Description"])
///     .with_id_column("id");
/// assert_eq!(opts.text_field, "text");
/// assert_eq!(opts.text_columns, ["Title", "Short Description"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// The input's format; `None` guesses it (see [`open`](crate::open): from a known
    /// extension, else from the content). Default `None`.
    pub format: Option<Format>,
    /// JSONL: the field holding the text, which must be a JSON string. Default `"text"`.
    /// Empty, no text is read: every JSON object is a record with empty text, for files
    /// that hold only ids (read with the id rule of [`ReadOptions::id_field`] and
    /// [`ReadOptions::key_field`]).
    pub text_field: String,
    /// JSONL: the field holding the id, if present (a string, or a number kept as its
    /// source text). Default `"id"`.
    pub id_field: String,
    /// CSV/TSV: the columns whose values, joined with a single space, make the text.
    /// Each must be in the header. Default `["text"]`.
    pub text_columns: Vec<String>,
    /// CSV/TSV: the column holding the id, which must be in the header. `None` (the
    /// default) reads the ids from the column named [`DEFAULT_ID_COLUMN`] (`id`, in any
    /// ASCII case, an exact `id` first) when the header has one, as JSONL reads the field `id`, and leaves the records unnamed when
    /// it has none.
    pub id_column: Option<String>,
    /// The largest record, in bytes of the (decompressed) source, that is read: a longer
    /// line, CSV/TSV row or file of a directory tree is skipped as
    /// [`SkipReason::TooLarge`](crate::SkipReason::TooLarge) without being held in
    /// memory. Default [`DEFAULT_MAX_RECORD_BYTES`] (64 MiB).
    pub max_record_bytes: usize,
    /// The field (JSONL) or column (CSV/TSV) whose value becomes [`Record::key`], for
    /// choosing which record of a cluster to keep. A CSV/TSV column not in the header is
    /// an [`Error::MissingColumn`](crate::Error::MissingColumn); ignored by the lines and
    /// dir formats. Default `None`.
    ///
    /// [`Record::key`]: crate::Record::key
    pub key_field: Option<String>,
    /// TSV: the quote byte that turns on CSV-style quoting (a field that starts with it
    /// may hold tabs and line ends, and a doubled quote stands for one). `None`, the
    /// default, reads TSV as the format is defined: no quoting at all, a field ends at a
    /// tab or a line end. CSV always quotes with `"`: any other byte is an
    /// [`Error::InvalidOptions`](crate::Error::InvalidOptions) for CSV.
    pub quote: Option<u8>,
    /// CSV: the byte between fields. Default `b','`; `b';'` reads the semicolon-separated
    /// CSV that spreadsheets write where the comma is the decimal mark. It cannot be the
    /// quote or a line end ([`Error::InvalidOptions`](crate::Error::InvalidOptions)).
    pub delimiter: u8,
    /// TSV without quoting: decode the escapes `\t`, `\n`, `\r` and `\\` in field values
    /// (a backslash before any other byte is kept as is). Default `false`: fields are
    /// taken verbatim. Together with a [`ReadOptions::quote`] it is an
    /// [`Error::InvalidOptions`](crate::Error::InvalidOptions).
    pub tsv_escapes: bool,
    /// Dir: include hidden files and folders (whose name starts with `.`). Default
    /// `false`: they are left out and counted ([`Reader::excluded`](crate::Reader::excluded)).
    pub hidden: bool,
    /// Dir: glob patterns (as `globset` reads them) selecting the files read by their
    /// path relative to the directory; a pattern without `/` matches the file name.
    /// Empty, the default, reads every file. Files not matched are left out and counted.
    pub globs: Vec<String>,
    /// Dir: follow symbolic links (loops are detected and skipped as unreadable).
    /// Default `false`: a link is skipped as [`SkipReason::Symlink`](crate::SkipReason::Symlink).
    pub follow_links: bool,
    /// Whether each record carries its exact source bytes in
    /// [`Record::raw`](crate::Record::raw), as writing the deduplicated input back needs.
    /// Default `true`; a caller that only compares texts turns it off and saves a copy of
    /// every line (JSONL and lines; a CSV/TSV row's bytes come with its parse anyway).
    pub keep_raw: bool,
}

/// The default of [`ReadOptions::max_record_bytes`]: 64 MiB. A record is held in memory
/// a few times over while it is read (its raw bytes, its text, the parser's buffers), so
/// this keeps one absurd line from exhausting memory, while far exceeding any real
/// document (a whole novel is well under 5 MiB).
pub const DEFAULT_MAX_RECORD_BYTES: usize = 64 << 20;

/// The CSV/TSV column the ids are read from when [`ReadOptions::id_column`] names none
/// and the header has it: `id`, the name of JSONL's default id field.
pub const DEFAULT_ID_COLUMN: &str = "id";

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            text_field: "text".to_string(),
            id_field: "id".to_string(),
            text_columns: vec!["text".to_string()],
            id_column: None,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            key_field: None,
            quote: None,
            delimiter: b',',
            tsv_escapes: false,
            hidden: false,
            globs: Vec::new(),
            follow_links: false,
            keep_raw: true,
        }
    }
}

impl ReadOptions {
    /// The defaults (same as [`ReadOptions::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the format instead of guessing it.
    pub fn with_format(mut self, format: Format) -> Self {
        self.format = Some(format);
        self
    }

    /// Sets the JSONL text field.
    pub fn with_text_field(mut self, field: impl Into<String>) -> Self {
        self.text_field = field.into();
        self
    }

    /// Sets the JSONL id field.
    pub fn with_id_field(mut self, field: impl Into<String>) -> Self {
        self.id_field = field.into();
        self
    }

    /// Sets the CSV/TSV text columns.
    pub fn with_text_columns<I, S>(mut self, columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.text_columns = columns.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the CSV/TSV id column.
    pub fn with_id_column(mut self, column: impl Into<String>) -> Self {
        self.id_column = Some(column.into());
        self
    }

    /// Sets the largest record that is read, in bytes (at least 1).
    pub fn with_max_record_bytes(mut self, bytes: usize) -> Self {
        self.max_record_bytes = bytes;
        self
    }

    /// Sets the field (JSONL) or column (CSV/TSV) that gives [`Record::key`](crate::Record::key).
    pub fn with_key_field(mut self, field: impl Into<String>) -> Self {
        self.key_field = Some(field.into());
        self
    }

    /// Sets the CSV field delimiter (default `,`).
    pub fn with_delimiter(mut self, delimiter: u8) -> Self {
        self.delimiter = delimiter;
        self
    }

    /// Sets the TSV quote byte (CSV-style quoting for TSV).
    pub fn with_quote(mut self, quote: u8) -> Self {
        self.quote = Some(quote);
        self
    }

    /// Decodes `\t`, `\n`, `\r`, `\\` in TSV fields.
    pub fn with_tsv_escapes(mut self, on: bool) -> Self {
        self.tsv_escapes = on;
        self
    }

    /// Includes hidden files and folders of a directory tree.
    pub fn with_hidden(mut self, on: bool) -> Self {
        self.hidden = on;
        self
    }

    /// Adds a glob pattern selecting the files of a directory tree.
    pub fn with_glob(mut self, pattern: impl Into<String>) -> Self {
        self.globs.push(pattern.into());
        self
    }

    /// Follows symbolic links in a directory tree.
    pub fn with_follow_links(mut self, on: bool) -> Self {
        self.follow_links = on;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documentation() {
        let o = ReadOptions::new();
        assert_eq!(o.format, None);
        assert_eq!(o.text_field, "text");
        assert_eq!(o.id_field, "id");
        assert_eq!(o.text_columns, vec!["text".to_string()]);
        assert_eq!(o.id_column, None);
    }

    #[test]
    fn builder_sets_fields() {
        let o = ReadOptions::new()
            .with_format(Format::Jsonl)
            .with_text_field("body")
            .with_id_field("key")
            .with_text_columns(vec!["a".to_string()])
            .with_id_column("k");
        assert_eq!(o.format, Some(Format::Jsonl));
        assert_eq!(o.text_field, "body");
        assert_eq!(o.id_field, "key");
        assert_eq!(o.text_columns, ["a"]);
        assert_eq!(o.id_column.as_deref(), Some("k"));
    }
}
