//! What to read and how: [`InputOptions`], each option as given (one left out is `None`,
//! so an option that does not fit an input's format can be refused rather than ignored),
//! and the refusals made before and after opening an input.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Format, ReadOptions};

use super::error::DocumentsError;

/// A test of a record's text: true if the text has nothing to compare, so the record is
/// skipped as [`SkipReason::Empty`](crate::SkipReason::Empty) while reading.
pub type EmptyText = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Where documents come from and how they are read, for
/// [`Documents::read_batches`](super::Documents::read_batches).
///
/// Build with [`InputOptions::new`] and the `with_*` methods; the fields can be read (and
/// set) directly.
#[derive(Clone)]
#[non_exhaustive]
pub struct InputOptions {
    /// Input files or directories, read in this order; `-` is standard input.
    pub inputs: Vec<PathBuf>,
    /// Reference files or directories (`--reference`), read before `inputs` with the same
    /// options: their documents come first ([`Documents::reference_docs`]), to deduplicate
    /// the inputs against them.
    ///
    /// [`Documents::reference_docs`]: super::Documents::reference_docs
    pub reference: Vec<PathBuf>,
    /// The format of every input (`None`: from each file's name, else its content).
    pub format: Option<Format>,
    /// JSONL: the text field (`None`: `text`).
    pub text_field: Option<String>,
    /// JSONL: the id field (`None`: `id`, if present). A field named must be in the
    /// records.
    pub id_field: Option<String>,
    /// CSV/TSV: the text columns, comma-separated (`None`: `text`).
    pub text_columns: Option<String>,
    /// CSV/TSV: the id column (`None`: `id`, if the header has it).
    pub id_column: Option<String>,
    /// Records longer than this many bytes are skipped as too large.
    pub max_record_bytes: usize,
    /// A malformed record (or invalid UTF-8) stops reading with
    /// [`DocumentsError::BadRecord`] instead of being skipped.
    pub fail_on_error: bool,
    /// TSV: decode `\t`, `\n`, `\r` and `\\`.
    pub tsv_escapes: bool,
    /// TSV: the quote character, if fields are quoted.
    pub quote: Option<u8>,
    /// CSV: the field delimiter (`None`: `,`).
    pub delimiter: Option<u8>,
    /// Directories: include hidden entries.
    pub hidden: bool,
    /// Directories: read only the files matching these globs.
    pub globs: Vec<String>,
    /// Directories: follow symbolic links.
    pub follow: bool,
    /// The field (JSONL) or column (CSV/TSV) each record carries as its key
    /// ([`Documents::keys`](super::Documents::keys)).
    pub key_field: Option<String>,
    /// Records whose text this says is empty are skipped while reading, as
    /// [`SkipReason::Empty`](crate::SkipReason::Empty); only a text without a letter or
    /// digit is asked.
    pub empty_text: Option<EmptyText>,
    /// Keep each document's exact source bytes (spilled to a temporary file), for
    /// [`Documents::record`](super::Documents::record).
    pub keep_raw: bool,
    /// Keep the skipped records for [`Documents::write_skipped`](super::Documents::write_skipped)
    /// (in a temporary file).
    pub list_skipped: bool,
}

impl fmt::Debug for InputOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputOptions")
            .field("inputs", &self.inputs)
            .field("reference", &self.reference)
            .field("format", &self.format)
            .field("text_field", &self.text_field)
            .field("id_field", &self.id_field)
            .field("text_columns", &self.text_columns)
            .field("id_column", &self.id_column)
            .field("max_record_bytes", &self.max_record_bytes)
            .field("fail_on_error", &self.fail_on_error)
            .field("tsv_escapes", &self.tsv_escapes)
            .field("quote", &self.quote)
            .field("delimiter", &self.delimiter)
            .field("hidden", &self.hidden)
            .field("globs", &self.globs)
            .field("follow", &self.follow)
            .field("key_field", &self.key_field)
            .field("empty_text", &self.empty_text.is_some())
            .field("keep_raw", &self.keep_raw)
            .field("list_skipped", &self.list_skipped)
            .finish()
    }
}

impl InputOptions {
    /// The inputs with every option at its default.
    pub fn new(inputs: Vec<PathBuf>) -> Self {
        InputOptions {
            inputs,
            reference: Vec::new(),
            format: None,
            text_field: None,
            id_field: None,
            text_columns: None,
            id_column: None,
            max_record_bytes: crate::DEFAULT_MAX_RECORD_BYTES,
            fail_on_error: false,
            tsv_escapes: false,
            quote: None,
            delimiter: None,
            hidden: false,
            globs: Vec::new(),
            follow: false,
            key_field: None,
            empty_text: None,
            keep_raw: false,
            list_skipped: false,
        }
    }

    /// Reads `reference` first, as the reference the inputs are deduplicated against.
    pub fn with_reference(mut self, reference: Vec<PathBuf>) -> Self {
        self.reference = reference;
        self
    }

    /// Reads every input as `format`.
    pub fn with_format(mut self, format: Format) -> Self {
        self.format = Some(format);
        self
    }

    /// JSONL: the text field.
    pub fn with_text_field(mut self, field: impl Into<String>) -> Self {
        self.text_field = Some(field.into());
        self
    }

    /// JSONL: the id field.
    pub fn with_id_field(mut self, field: impl Into<String>) -> Self {
        self.id_field = Some(field.into());
        self
    }

    /// CSV/TSV: the text columns, comma-separated.
    pub fn with_text_columns(mut self, columns: impl Into<String>) -> Self {
        self.text_columns = Some(columns.into());
        self
    }

    /// CSV/TSV: the id column.
    pub fn with_id_column(mut self, column: impl Into<String>) -> Self {
        self.id_column = Some(column.into());
        self
    }

    /// The key field or column ([`Documents::keys`](super::Documents::keys)).
    pub fn with_key_field(mut self, field: impl Into<String>) -> Self {
        self.key_field = Some(field.into());
        self
    }

    /// Skips as empty, while reading, the records whose text `empty` says has nothing
    /// to compare (asked only of a text without a letter or digit).
    pub fn with_empty_text(mut self, empty: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.empty_text = Some(Arc::new(empty));
        self
    }

    /// Keeps each document's exact source bytes.
    pub fn with_raw(mut self, on: bool) -> Self {
        self.keep_raw = on;
        self
    }

    /// Keeps the skipped records for the skipped list.
    pub fn with_skipped_list(mut self, on: bool) -> Self {
        self.list_skipped = on;
        self
    }

    /// A malformed record stops reading.
    pub fn with_fail_on_error(mut self, on: bool) -> Self {
        self.fail_on_error = on;
        self
    }

    /// True if the record's text has nothing to compare under
    /// [`InputOptions::empty_text`].
    pub fn skips_as_empty(&self, text: &str) -> bool {
        self.empty_text
            .as_ref()
            .is_some_and(|empty| !text.chars().any(char::is_alphanumeric) && empty(text))
    }

    /// The readers' options (each input is opened with these).
    pub fn read_options(&self) -> ReadOptions {
        let args = self;
        let defaults = ReadOptions::default();
        let mut opts = ReadOptions::default()
            .with_text_field(args.text_field.clone().unwrap_or(defaults.text_field))
            .with_id_field(args.id_field.clone().unwrap_or(defaults.id_field))
            .with_max_record_bytes(args.max_record_bytes);
        if let Some(columns) = &args.text_columns {
            opts = opts.with_text_columns(columns.split(',').map(str::trim));
        }
        if let Some(col) = &args.id_column {
            opts = opts.with_id_column(col.clone());
        }
        opts.tsv_escapes = args.tsv_escapes;
        opts.quote = args.quote;
        if let Some(d) = args.delimiter {
            opts.delimiter = d;
        }
        opts.hidden = args.hidden;
        opts.globs = args.globs.clone();
        opts.follow_links = args.follow;
        opts.key_field = args.key_field.clone();
        if let Some(format) = args.format {
            opts = opts.with_format(format);
        }
        opts
    }
}

/// The format of an input as known without reading it: `forced` (`--format`), a
/// directory, or a known extension; `None` for one the reader tells from its content
/// (standard input, a file named otherwise).
pub fn known_format(path: &Path, forced: Option<Format>) -> Option<Format> {
    match forced {
        Some(format) => Some(format),
        None if path == Path::new("-") => None,
        None if path.is_dir() => Some(Format::Dir),
        None => Format::from_extension(path),
    }
}

/// Refuses input options that do not apply to an input's format: a JSONL field option on
/// a CSV file, a CSV column option on JSONL, either on plain lines or a directory.
/// `sniffed`: the format was told from the content, which the message says.
pub fn refuse_options_for(
    format: Format,
    sniffed: bool,
    path: &Path,
    args: &InputOptions,
) -> Result<(), DocumentsError> {
    let how = match (sniffed, format) {
        (true, Format::Jsonl) => " (by its content: its first non-blank byte is '{')",
        (true, Format::Parquet) => " (by its content: it starts with PAR1)",
        (true, _) => " (by its content: it has no known extension and does not start with '{')",
        (false, _) => "",
    };
    let jsonl = [
        ("--text-field", args.text_field.is_some()),
        ("--id-field", args.id_field.is_some()),
    ];
    let delimited = [
        ("--text-columns", args.text_columns.is_some()),
        ("--id-column", args.id_column.is_some()),
    ];
    let (refused, instead): (&[(&str, bool)], &str) = match format {
        Format::Jsonl => (&delimited, "; JSONL takes --text-field and --id-field"),
        Format::Csv | Format::Tsv => (&jsonl, "; CSV/TSV take --text-columns and --id-column"),
        Format::Parquet => (
            &delimited,
            "; Parquet takes --text-field and --id-field (column names; a dotted path reaches into a struct)",
        ),
        Format::Lines => (
            &[jsonl, delimited].concat(),
            ": each line is a document, \"ID<TAB>TEXT\" gives its id (--format jsonl|csv|tsv for other layouts)",
        ),
        Format::Dir => (
            &[jsonl, delimited].concat(),
            ": each file is a document, named by its path",
        ),
    };
    if args.key_field.is_some() && matches!(format, Format::Lines | Format::Dir) {
        return Err(DocumentsError::OptionNotForFormat(format!(
            "--keep-by needs a JSONL field or a CSV/TSV column, but {} is read as {}{how}",
            path.display(),
            format.name()
        )));
    }
    if args.delimiter.is_some() && format != Format::Csv {
        return Err(DocumentsError::OptionNotForFormat(format!(
            "--delimiter is for CSV, but {} is read as {}{how}{}",
            path.display(),
            format.name(),
            if format == Format::Tsv {
                " (TSV is tab-separated by definition)"
            } else {
                ""
            }
        )));
    }
    if let Some((flag, _)) = refused.iter().find(|(_, given)| *given) {
        return Err(DocumentsError::OptionNotForFormat(format!(
            "{flag} does not apply to {}, read as {}{how}{instead}",
            path.display(),
            format.name()
        )));
    }
    Ok(())
}
