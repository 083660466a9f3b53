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
//! | [`Csv`](Format::Csv), [`Tsv`](Format::Tsv) | a row after the header (quoted fields may span lines) | the `text` columns joined by a space | the id column, if one is named |
//! | [`Lines`](Format::Lines) | a line | the line, or what follows the first tab | what precedes the first tab |
//! | [`Dir`](Format::Dir) | a regular file of a directory tree | the file's content | the relative path |
//!
//! The format is guessed from the file name ([`Format::detect`]) or, for standard input,
//! from the first non-whitespace byte (`{` means JSONL, anything else lines). `.gz` files
//! are decompressed. Text that is not valid UTF-8 is decoded lossily and the record is
//! marked [`Record::lossy`].
//!
//! # Writing
//!
//! [`DedupWriter`] writes the CSV/TSV header ([`Reader::header_raw`]) and then each kept
//! record's exact bytes ([`Record::raw`]), to standard output or atomically to a file; for
//! the dir format it copies the kept files into an output directory. Writing back every
//! record of an input reproduces the input byte for byte.
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

mod dedup_writer;
mod delimited;
mod dir;
mod error;
mod format;
mod jsonl;
mod line_source;
mod lines;
mod open;
mod options;
mod reader;
mod record;
mod recorder;
mod text;

pub use dedup_writer::{same_file, DedupWriter};
pub use error::{Error, Result};
pub use format::Format;
pub use options::ReadOptions;
pub use reader::{open, Reader};
pub use record::{Entry, Location, Record, SkipReason, Skipped};
