//! [`open`] and the [`Reader`] it returns: one iterator over every format.

use std::fs;
use std::path::Path;

use crate::delimited::DelimitedReader;
use crate::dir::{DirReader, Excluded};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::jsonl::JsonlReader;
use crate::line_source::LineSource;
use crate::lines::LinesReader;
use crate::open::{open_file, open_stdin, Input};
use crate::options::ReadOptions;
use crate::parquet::read::ParquetReader;
use crate::record::{Entry, Filled, Record};
use crate::warning::Warning;

/// Opens `input` for reading documents; `-` is standard input.
///
/// The format is `opts.format`, or else guessed: a directory is [`Format::Dir`]; a file
/// with a known extension ([`Format::from_extension`]) is read as it says; standard input
/// and any other file are read by their content: JSONL if the first byte that is not
/// whitespace (after a UTF-8 BOM, and within the first MiB) is `{`, lines otherwise
/// ([`Reader::sniffed`] tells which inputs were).
/// A file whose name ends in `.gz` or `.zst` is decompressed, and so is standard input
/// that starts with the gzip or zstd magic bytes. A Parquet file is read from its
/// path (standard input is [`Error::ParquetNeedsFile`]).
///
/// For CSV/TSV the header is read here, so a column of `opts` that the header lacks is
/// reported at once ([`Error::MissingColumn`]), and [`Reader::header_raw`] is ready.
///
/// # Errors
///
/// [`Error::Read`] if the input cannot be opened or read, [`Error::Gzip`] if its gzip
/// stream is broken, [`Error::NotADirectory`] / [`Error::IsADirectory`] if the format and
/// the kind of input disagree, [`Error::MissingColumn`] and [`Error::InvalidOptions`] for
/// CSV/TSV columns that cannot be read, [`Error::BadHeader`] for a CSV/TSV header that
/// cannot be one, [`Error::InvalidOptions`] for a record-size limit of 0.
pub fn open(input: &Path, opts: &ReadOptions) -> Result<Reader> {
    let source = input.display().to_string();
    if input == Path::new("-") {
        match opts.format {
            Some(Format::Dir) => return Err(Error::NotADirectory { path: source }),
            Some(Format::Parquet) => return Err(Error::ParquetNeedsFile { path: source }),
            _ => {}
        }
        let stdin = open_stdin()?;
        return match opts.format {
            Some(format) => Reader::from_input(stdin, format, opts),
            None => Reader::sniffing(stdin, opts),
        };
    }
    let meta = fs::metadata(input).map_err(|error| Error::Read {
        path: source.clone(),
        line: None,
        error,
    })?;
    let format = match opts.format {
        Some(format) => format,
        None if meta.is_dir() => Format::Dir,
        None => match Format::from_extension(input) {
            Some(format) => format,
            None => {
                check_options(opts)?;
                // Parquet is read from the file, not a stream (its footer is at the end).
                if crate::parquet::read::starts_with_magic(input) {
                    let mut reader = Reader::parquet(input, opts)?;
                    reader.sniffed = true;
                    return Ok(reader);
                }
                return Reader::sniffing(open_file(input)?, opts);
            }
        },
    };
    check_options(opts)?;
    match (format, meta.is_dir()) {
        (Format::Dir, true) => Ok(Reader {
            inner: Inner::Dir(DirReader::new(input, opts)?),
            format,
            source,
            failed: false,
            sniffed: false,
        }),
        (Format::Dir, false) => Err(Error::NotADirectory { path: source }),
        (_, true) => Err(Error::IsADirectory { path: source }),
        (Format::Parquet, false) => Reader::parquet(input, opts),
        (_, false) => Reader::from_input(open_file(input)?, format, opts),
    }
}

/// Rejects options no reader can work with.
fn check_options(opts: &ReadOptions) -> Result<()> {
    if opts.max_record_bytes == 0 {
        return Err(Error::InvalidOptions(
            "the record-size limit must be at least 1 byte".to_string(),
        ));
    }
    Ok(())
}

/// Streams the entries of one input: `Ok(Entry)` for every record (a document or a
/// skipped record), then `None`. A hard error is an `Err` naming the input (and line,
/// where it applies), after which the iterator ends.
///
/// ```
/// use neardup_io::{open, Entry, ReadOptions};
/// use std::io::Write;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut file = tempfile::Builder::new().suffix(".csv").tempfile()?;
/// file.write_all(b"id,text\n1,\"hello,\nworld\"\n")?;
/// let mut reader = open(file.path(), &ReadOptions::default().with_id_column("id"))?;
/// assert_eq!(reader.header_raw(), Some(&b"id,text\n"[..]));
/// let record = reader.next().unwrap()?.into_record().unwrap();
/// assert_eq!(record.text, "hello,\nworld");
/// assert_eq!(record.raw, b"1,\"hello,\nworld\"\n");
/// assert!(reader.next().is_none());
/// # Ok(())
/// # }
/// ```
pub struct Reader {
    inner: Inner,
    format: Format,
    source: String,
    failed: bool,
    /// The format was guessed from the content (see [`Reader::sniffed`]).
    sniffed: bool,
}

/// The format-specific reader.
enum Inner {
    Jsonl(JsonlReader),
    Lines(LinesReader),
    Delimited(Box<DelimitedReader>),
    Dir(DirReader),
    Parquet(Box<ParquetReader>),
}

impl Reader {
    fn from_input(input: Input, format: Format, opts: &ReadOptions) -> Result<Reader> {
        check_options(opts)?;
        let source = input.ctx.source.to_string();
        let limit = opts.max_record_bytes;
        let inner = match format {
            Format::Jsonl => Inner::Jsonl(JsonlReader::new(
                LineSource::new(input, limit).keep_raw(opts.keep_raw),
                &opts.text_field,
                &opts.id_field,
                opts.key_field.as_deref(),
            )),
            Format::Lines => Inner::Lines(LinesReader::new(
                LineSource::new(input, limit).keep_raw(opts.keep_raw),
            )),
            Format::Csv => {
                if let Some(q) = opts.quote.filter(|&q| q != b'"') {
                    return Err(Error::InvalidOptions(format!(
                        "CSV quotes with '\"' only; the quote {:?} applies to TSV",
                        q as char
                    )));
                }
                let reader = DelimitedReader::new(input, opts.delimiter, Some(b'"'), opts)?;
                Inner::Delimited(Box::new(reader))
            }
            Format::Tsv => {
                if opts.tsv_escapes && opts.quote.is_some() {
                    return Err(Error::InvalidOptions(
                        "TSV escapes and a quote byte do not go together: quoted TSV is \
                         read as CSV is, without escapes"
                            .to_string(),
                    ));
                }
                let reader = DelimitedReader::new(input, b'\t', opts.quote, opts)?;
                Inner::Delimited(Box::new(reader))
            }
            Format::Dir => return Err(Error::NotADirectory { path: source }),
            Format::Parquet => return Err(Error::ParquetNeedsFile { path: source }),
        };
        Ok(Reader {
            inner,
            format,
            source,
            failed: false,
            sniffed: false,
        })
    }

    /// Reads the Parquet file at `path`.
    fn parquet(path: &Path, opts: &ReadOptions) -> Result<Reader> {
        Ok(Reader {
            inner: Inner::Parquet(Box::new(ParquetReader::open(path, opts)?)),
            format: Format::Parquet,
            source: path.display().to_string(),
            failed: false,
            sniffed: false,
        })
    }

    /// Reads `input` in the format its content suggests.
    fn sniffing(input: Input, opts: &ReadOptions) -> Result<Reader> {
        let (input, format) = input.sniff_format()?;
        let mut reader = Reader::from_input(input, format, opts)?;
        reader.sniffed = true;
        Ok(reader)
    }

    /// Reads documents from any byte stream, as if it were standard input named
    /// `source`: decompressed if it starts with the gzip magic bytes, and its format
    /// sniffed if `opts.format` is `None`. Useful for tests and for embedding.
    ///
    /// # Errors
    ///
    /// As [`open`], except that [`Format::Dir`] is always [`Error::NotADirectory`].
    pub fn from_reader(
        reader: impl std::io::Read + Send + 'static,
        source: &str,
        opts: &ReadOptions,
    ) -> Result<Reader> {
        let buffered = Box::new(std::io::BufReader::new(reader));
        let input = crate::open::open_stream(buffered, source)?;
        match opts.format {
            Some(format) => Reader::from_input(input, format, opts),
            None => Reader::sniffing(input, opts),
        }
    }

    /// The format being read.
    pub fn format(&self) -> Format {
        self.format
    }

    /// True if the format was guessed from the content (standard input, a file without a
    /// known extension, no format asked for) rather than named by an option or an
    /// extension, so that a caller can say how it read the input.
    pub fn sniffed(&self) -> bool {
        self.sniffed
    }

    /// The input as given (`-` for standard input).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The exact bytes of the CSV/TSV header line (with any BOM and its line end), for
    /// writing it back; `None` for other formats and for an empty CSV/TSV input.
    pub fn header_raw(&self) -> Option<&[u8]> {
        match &self.inner {
            Inner::Delimited(r) => r.header_raw(),
            _ => None,
        }
    }

    /// The CSV/TSV column names (BOM removed); empty for other formats.
    pub fn columns(&self) -> &[String] {
        match &self.inner {
            Inner::Delimited(r) => r.columns(),
            _ => &[],
        }
    }

    /// The field names the input has, for telling the user what is there when a field
    /// asked for is not: for JSONL the top-level keys of the first 10 JSON objects read
    /// so far, in first-seen order (only those objects pay for it); for CSV/TSV the
    /// header's columns; for Parquet the file's columns (a struct's fields as dotted
    /// paths); empty for the lines and dir formats.
    pub fn fields_seen(&self) -> Vec<String> {
        match &self.inner {
            Inner::Jsonl(r) => r.fields_seen().to_vec(),
            Inner::Delimited(r) => r.columns().to_vec(),
            Inner::Parquet(r) => r.columns().to_vec(),
            _ => Vec::new(),
        }
    }

    /// The [`Warning`]s collected since the last call (so far: quoted fields that span
    /// more than [`LONG_QUOTED_FIELD_LINES`](crate::LONG_QUOTED_FIELD_LINES) lines or
    /// never close, in CSV and quoted TSV), in input order. Call it after reading (or
    /// now and then while reading); they are not repeated.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        match &mut self.inner {
            Inner::Delimited(r) => r.take_warnings(),
            _ => Vec::new(),
        }
    }

    /// The files of a directory tree left out so far, by reason ([`Excluded`]), as
    /// (reason, count) with a nonzero count. These are not records: they were never asked
    /// for. Empty for other formats.
    pub fn excluded(&self) -> Vec<(Excluded, u64)> {
        match &self.inner {
            Inner::Dir(r) => r.excluded(),
            _ => Vec::new(),
        }
    }
}

impl Reader {
    /// The next entry as [`Iterator::next`] gives it, with a record written into `record`
    /// instead of returned: a reader that can reuses the record's buffers (Parquet: the
    /// text and id are copied from the decoded column into them), so a loop over one
    /// record allocates nothing per record and moves none. `None` at the end, and after
    /// an error.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("in.jsonl");
    /// # std::fs::write(&path, "{\"id\": \"a\", \"text\": \"one\"}\n{\"id\": \"b\", \"text\": \"two\"}\n")?;
    /// use neardup_io::{Filled, ReadOptions, Record};
    /// let mut reader = neardup_io::open(&path, &ReadOptions::default())?;
    /// let mut record = Record::default();
    /// let mut texts = Vec::new();
    /// while let Some(filled) = reader.read_into(&mut record) {
    ///     if let Filled::Record = filled? {
    ///         texts.push(record.text.clone());
    ///     }
    /// }
    /// assert_eq!(texts, ["one", "two"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_into(&mut self, record: &mut Record) -> Option<Result<Filled>> {
        if self.failed {
            return None;
        }
        let next = match &mut self.inner {
            Inner::Parquet(r) => r.read_into(record),
            _ => self.next_entry().map(|entry| {
                entry.map(|entry| match entry {
                    Entry::Record(r) => {
                        *record = r;
                        Filled::Record
                    }
                    Entry::Skipped(s) => Filled::Skipped(s),
                })
            }),
        };
        self.failing(next)
    }

    /// The next entry of the reader's format.
    fn next_entry(&mut self) -> Result<Option<Entry>> {
        match &mut self.inner {
            Inner::Jsonl(r) => r.next_entry(),
            Inner::Lines(r) => r.next_entry(),
            Inner::Delimited(r) => r.next_entry(),
            Inner::Dir(r) => r.next_entry(),
            Inner::Parquet(r) => r.next_entry(),
        }
    }

    /// `next` as an iterator's item; after an error the reader yields nothing more.
    fn failing<T>(&mut self, next: Result<Option<T>>) -> Option<Result<T>> {
        match next {
            Ok(entry) => entry.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

impl Iterator for Reader {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        if self.failed {
            return None;
        }
        let next = self.next_entry();
        self.failing(next)
    }
}

impl std::iter::FusedIterator for Reader {}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("format", &self.format)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A file without a known extension is read by its content, as standard input is;
    /// a known extension decides whatever the content.
    #[test]
    fn a_file_without_a_known_extension_is_sniffed() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = b"\n  {\"id\": \"a\", \"text\": \"x\"}\n";
        let read = |name: &str, bytes: &[u8], opts: &ReadOptions| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let reader = open(&path, opts).unwrap();
            let (format, sniffed) = (reader.format(), reader.sniffed());
            let ids: Vec<Option<String>> = reader
                .filter_map(|e| e.unwrap().into_record())
                .map(|r| r.id)
                .collect();
            (format, sniffed, ids)
        };
        let opts = ReadOptions::default();
        assert_eq!(
            read("batch_aa", jsonl, &opts),
            (Format::Jsonl, true, vec![Some("a".to_string())])
        );
        assert_eq!(
            read("notes.md", b"text\n", &opts),
            (Format::Lines, true, vec![None])
        );
        let gz = {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(jsonl).unwrap();
            e.finish().unwrap()
        };
        assert_eq!(read("batch_ab.gz", &gz, &opts).0, Format::Jsonl);
        assert_eq!(read("batch.txt", jsonl, &opts).0, Format::Lines);
        assert!(!read("batch.jsonl", jsonl, &opts).1);
        let lines = opts.clone().with_format(Format::Lines);
        assert_eq!(
            read("batch_ac", jsonl, &lines),
            (Format::Lines, false, vec![None, None])
        );
    }

    #[test]
    fn reader_is_send() {
        fn check<T: Send>() {}
        check::<Reader>();
    }

    #[test]
    fn from_reader_sniffs_and_reads() {
        let data = b"\n{\"text\":\"a\",\"id\":1}\n";
        let r =
            Reader::from_reader(Cursor::new(data.to_vec()), "-", &ReadOptions::default()).unwrap();
        assert_eq!(r.format(), Format::Jsonl);
        assert_eq!(r.source(), "-");
        let entries: Vec<Entry> = r.map(|e| e.unwrap()).collect();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].id(), Some("1"));

        let r = Reader::from_reader(
            Cursor::new(b"x\ty\n".to_vec()),
            "-",
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(r.format(), Format::Lines);
        assert_eq!(r.count(), 1);
    }

    #[test]
    fn format_and_input_kind_must_agree() {
        let dir = tempfile::tempdir().unwrap();
        let err = open(
            dir.path(),
            &ReadOptions::default().with_format(Format::Jsonl),
        )
        .unwrap_err();
        assert!(matches!(err, Error::IsADirectory { .. }), "{err:?}");
        let file = dir.path().join("a.txt");
        fs::write(&file, "x\n").unwrap();
        let err = open(&file, &ReadOptions::default().with_format(Format::Dir)).unwrap_err();
        assert!(matches!(err, Error::NotADirectory { .. }), "{err:?}");
        let r = open(dir.path(), &ReadOptions::default()).unwrap();
        assert_eq!(r.format(), Format::Dir);
        let err = Reader::from_reader(
            Cursor::new(Vec::new()),
            "-",
            &ReadOptions::default().with_format(Format::Dir),
        )
        .unwrap_err();
        assert!(matches!(err, Error::NotADirectory { .. }));
    }

    #[test]
    fn missing_file_is_a_read_error_naming_it() {
        let err = open(Path::new("/nonexistent/x.jsonl"), &ReadOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Read { .. }));
        assert!(
            err.to_string().starts_with("/nonexistent/x.jsonl: "),
            "{err}"
        );
    }
}
