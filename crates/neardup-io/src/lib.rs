//! Reading documents for near-duplicate detection, and writing the deduplicated output
//! byte for byte in the input's own format.
//!
//! This crate knows nothing about shingles or MinHash: it turns the user's files into a
//! stream of [`Entry`] values and writes kept [`Record`]s back.
//!
//! # Reading
//!
//! [`open`] takes a path (`-` for standard input) and [`ReadOptions`], and returns a
//! [`Reader`]: a streaming iterator of `Result<Entry>`. Every record of the input yields
//! exactly one entry, either a [`Record`] (a document: id, text, exact source bytes,
//! location) or a [`Skipped`] record with a [`SkipReason`] (a malformed JSON line, a short
//! CSV row, a binary file, ...). Empty documents are records: the caller decides what to
//! do with them. A hard error (unreadable file, broken gzip stream, a CSV column that is
//! not in the header) is an `Err` naming the file and line, and ends the iteration.
//!
//! | [`Format`] | a record is | text | id |
//! |---|---|---|---|
//! | [`Jsonl`](Format::Jsonl) | a line holding a JSON object | the `text` field (a string) | the `id` field (string or number) |
//! | [`Csv`](Format::Csv) | a row after the header (quoted fields may span lines) | the `text` columns joined by a space | the id column named, else the column `id` if there is one |
//! | [`Tsv`](Format::Tsv) | a line after the header (no quoting, unless a quote byte is given) | the `text` columns joined by a space | the id column named, else the column `id` if there is one |
//! | [`Lines`](Format::Lines) | a line | the line, or what follows the first tab | what precedes the first tab |
//! | [`Dir`](Format::Dir) | a regular file of a directory tree (hidden ones and those not matching the globs left out and counted) | the file's content (`.gz`, `.zst` decompressed) | the relative path |
//! | [`Parquet`](Format::Parquet) | a row (row groups in file order) | the `text` column (a string; a dotted path reaches into a struct) | the `id` column (any string, number or boolean), else the row number |
//!
//! The format is guessed from the file name's extension ([`Format::from_extension`]) or,
//! for standard input and a file without a known extension (`batch_aa` from `split`),
//! from the first non-whitespace byte after any UTF-8 BOM (`{` means JSONL, anything else
//! lines; [`Reader::sniffed`] says so). `.gz` and `.zst` files are decompressed (and
//! standard input that starts with gzip's or zstd's magic bytes). Text that is not
//! valid UTF-8 is decoded lossily and the record is marked [`Record::lossy`].
//!
//! # Dirty input
//!
//! Whatever the bytes, a reader does not panic, yields one entry per record (per line
//! for JSONL and lines, per row for CSV/TSV, per file for a directory), numbers them 1,
//! 2, 3, ... and gives them strictly increasing lines. In particular:
//!
//! - **Size.** A record longer than [`ReadOptions::max_record_bytes`] (default
//!   [`DEFAULT_MAX_RECORD_BYTES`], 64 MiB) is skipped as [`SkipReason::TooLarge`]: it is
//!   read past, and memory stays bounded by the limit (a few times it, at the peak),
//!   never by the size of the input. Reading a record of `n` bytes takes about 3–4 `n`
//!   at the peak (its raw bytes, its text, the buffer they are built in).
//! - **Encodings.** A UTF-8 BOM at the start of the input is ignored (kept in `raw`);
//!   invalid UTF-8 is replaced and the record marked lossy; a directory file in UTF-16
//!   with a BOM is decoded; what counts as a binary file is said at [`Format::Dir`].
//! - **Line ends.** `\n` and `\r\n` everywhere; CSV (and quoted TSV) also end a row at
//!   a lone `\r` and count it as a line end. A line of only `\r` (or only whitespace) is
//!   a blank line in JSONL, a record with that text in the lines format.
//! - **Quotes.** TSV has none (unless [`ReadOptions::quote`] is given): a field that
//!   starts with `"` is text, and every line is its own row. In CSV, a quoted field
//!   still open at the end of the input is skipped as [`SkipReason::UnclosedQuote`]
//!   (its first line is where the stray quote is) rather than read as one field holding
//!   the rest of the file; in the header it is [`Error::BadHeader`]. A quoted field
//!   spanning more than [`LONG_QUOTED_FIELD_LINES`] lines, or never closed, is also a
//!   [`Warning`] ([`Reader::take_warnings`]) naming the line where the quote opened.
//! - **Directories.** Symbolic links (unless followed) and FIFOs, sockets, devices are
//!   skipped with a reason, never opened; hidden entries and files not matching
//!   [`ReadOptions::globs`] are left out and counted ([`Reader::excluded`]).
//! - **Truncated gzip** is [`Error::Gzip`] naming the file and the line reached, after
//!   the intact records; a `.gz` file of zero bytes is an error too, as for `gzip -d`.
//!   Bytes after the last gzip member are [`Error::GzipTrailingBytes`], with their offset.
//!   A truncated or corrupt zstd frame is [`Error::Zstd`], the same way.
//! - **Parquet** that is not Parquet, is cut short or has a damaged footer is
//!   [`Error::Parquet`] naming the file; a column asked for that is not there
//!   [`Error::MissingParquetColumn`] (listing the file's columns); a text column that is
//!   not a string [`Error::ParquetColumnType`]; a null text is skipped as
//!   [`SkipReason::FieldNotText`], as JSONL's `"text": null` is.
//! - **Closed standard input** (descriptor 0 closed, `<&-`) is [`Error::Read`], not an
//!   empty input.
//! - **Lone surrogates** (`"\ud800"`) in a JSON id are replaced by U+FFFD and the record
//!   marked lossy.
//! - **Empty input** (an empty file, an empty standard input) has no entries and no error.
//! - **Duplicate ids** are not the reader's business: every record is yielded.
//!
//! `testdata/dirty/` holds a fixture of each kind with the expected result
//! (`tests/dirty.rs` checks them), and `fuzz/` fuzz targets for every reader.
//!
//! # The document table
//!
//! [`documents::Documents`] reads every input of [`documents::InputOptions`] into
//! documents numbered in input order, a few bytes each (ids, places, exact bytes spilled
//! to a temporary file, skip accounting), handing the texts on in batches as they are
//! read: how every front end reads documents.
//!
//! # Writing
//!
//! [`DedupWriter`] writes the CSV/TSV header ([`Reader::header_raw`]) and then each kept
//! record's exact bytes ([`Record::raw`]), to standard output or atomically to a file; for
//! the dir format it copies the kept files into an output directory. Writing back every
//! record of an input reproduces the input byte for byte.
//!
//! [`OutputFile::create`] is the one way every output path is opened (the dedup writer's
//! and any other a program writes): standard output, devices and FIFOs in place, regular
//! files atomically through a temporary file beside them, links followed, `.gz` names
//! compressed, inputs refused by device and inode ([`OutputOptions::refuse_inputs`]).
//! [`abandon_outputs`] deletes unfinished temporary files for a signal handler.
//!
//! # Example
//!
//! ```
//! use neardup_io::{open, DedupWriter, Entry, ReadOptions, SkipReason};
//! use std::io::Write;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut input = tempfile::Builder::new().suffix(".jsonl").tempfile()?;
//! input.write_all(b"{\"id\": 1, \"text\": \"red bike\"}\n\
//!                   {\"id\": \"b\", \"text\": \"red bike!\"}\r\n\
//!                   {\"id\": 3}\n")?;
//!
//! let reader = open(input.path(), &ReadOptions::default())?;
//! let mut records = Vec::new();
//! for entry in reader {
//!     match entry? {
//!         Entry::Record(record) => records.push(record),
//!         Entry::Skipped(skipped) => {
//!             assert_eq!(skipped.reason, SkipReason::MissingField("text".into()));
//!             assert_eq!(skipped.location.line, 3);
//!         }
//!     }
//! }
//! assert_eq!(records.len(), 2);
//! assert_eq!(records[0].id.as_deref(), Some("1"));
//! assert_eq!(records[1].text, "red bike!");
//! assert_eq!(records[1].raw, b"{\"id\": \"b\", \"text\": \"red bike!\"}\r\n");
//!
//! // Keep the first record only, exactly as it was.
//! let out_dir = tempfile::tempdir()?;
//! let out = out_dir.path().join("kept.jsonl");
//! let mut writer = DedupWriter::create(Some(&out), neardup_io::Format::Jsonl, None)?;
//! writer.write(&records[0])?;
//! writer.finish()?;
//! assert_eq!(std::fs::read(&out)?, b"{\"id\": 1, \"text\": \"red bike\"}\n");
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod annotate;
mod dedup_writer;
mod delimited;
mod dir;
pub mod documents;
mod error;
mod format;
mod jsonl;
pub mod labels;
mod line_source;
mod lines;
mod open;
mod options;
mod output;
mod output_dir;
mod output_thread;
pub mod parquet;
mod reader;
mod record;
mod text;
mod warning;

pub use dedup_writer::{root_folders, DedupWriter};
pub use dir::Excluded;
pub use error::{Error, Result};
pub use format::Format;
pub use open::{is_gzip_name, is_zstd_name};
pub use options::{ReadOptions, DEFAULT_ID_COLUMN, DEFAULT_MAX_RECORD_BYTES};
pub use output::{abandon_outputs, same_file, OutputFile, OutputKind, OutputOptions};
pub use output_dir::OutputDir;
pub use reader::{open, Reader};
pub use record::{Entry, Filled, Location, Record, SkipReason, Skipped};
pub use warning::{Warning, WarningKind, LONG_QUOTED_FIELD_LINES};
