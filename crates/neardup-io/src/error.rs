//! The crate's error type: hard failures that stop a read or a write.
//!
//! A problem with one record (a malformed JSON line, a short CSV row, a binary file) is
//! not an error: the reader reports it as [`Entry::Skipped`](crate::Entry::Skipped) and
//! goes on. An [`Error`] means the input or output as a whole cannot be trusted any more.
//!
//! Every variant's message names the file it is about (`-` for standard input or
//! output) and, where it applies, the 1-based line. The underlying [`std::io::Error`]'s
//! message is part of that text, so it is kept in a public field rather than repeated
//! through [`std::error::Error::source`].

use std::fmt;
use std::io;

/// Everything that can go wrong while opening, reading or writing documents.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the input failed (file missing, permission denied, a read error, ...).
    #[error("{}: {error}", At(.path, *.line))]
    Read {
        /// The input as given (`-` for standard input).
        path: String,
        /// The line being read when the error happened, if reading had started.
        line: Option<u64>,
        /// The underlying error.
        error: io::Error,
    },
    /// A `.gz` input (or gzip data on standard input) is truncated or corrupt.
    #[error("{}: corrupt or truncated gzip stream: {error}", At(.path, *.line))]
    Gzip {
        /// The input as given.
        path: String,
        /// The line of the decompressed text being read when the stream broke.
        line: Option<u64>,
        /// The decoder's error.
        error: io::Error,
    },
    /// A `.gz` input (or gzip data on standard input) has bytes after its last gzip
    /// member that do not start another member (`gzip -d` calls them trailing garbage).
    /// The records before them were read.
    #[error("{path}: trailing bytes after the gzip stream at byte {offset}")]
    GzipTrailingBytes {
        /// The input as given.
        path: String,
        /// The offset in the compressed input of the first trailing byte (0-based), i.e.
        /// the length of the gzip stream.
        offset: u64,
    },
    /// A `.zst` input (or zstd data on standard input) is truncated or corrupt (a frame
    /// cut short, bytes after the last frame that do not start another).
    #[error("{}: corrupt or truncated zstd stream: {error}", At(.path, *.line))]
    Zstd {
        /// The input as given.
        path: String,
        /// The line of the decompressed text being read when the stream broke.
        line: Option<u64>,
        /// The decoder's error.
        error: io::Error,
    },
    /// A Parquet input cannot be read: not a Parquet file, truncated (no footer), a
    /// damaged footer, or damaged data in a row group (`row`: the first row of the batch
    /// being decoded).
    #[error("{}: {reason}", At(.path, *.row))]
    Parquet {
        /// The input as given.
        path: String,
        /// The 1-based row being read, once rows are read.
        row: Option<u64>,
        /// What is wrong, with the Parquet decoder's message.
        reason: String,
    },
    /// A Parquet column asked for (text, id or key) is not in the file. The message lists
    /// the file's columns (a struct's fields as dotted paths) and a near miss: a column
    /// that differs only in case or surrounding spaces, or a struct field of that name.
    #[error(
        "{path}: column {column:?} is not in the Parquet file (its columns: {}){}",
        Quoted(.available),
        NearMiss(.column, .available)
    )]
    MissingParquetColumn {
        /// The input as given.
        path: String,
        /// The column that was asked for.
        column: String,
        /// The file's columns, in order, a struct's fields as dotted paths.
        available: Vec<String>,
    },
    /// A Parquet column asked for has a type it cannot be read as: a text column that
    /// is not a string (`string`, `large_string`, `string_view` or a dictionary of
    /// strings), an id or key column of a type with no text form here (a list, ...).
    #[error("{path}: column {column:?} is {found}; {wanted}")]
    ParquetColumnType {
        /// The input as given.
        path: String,
        /// The column.
        column: String,
        /// Its type, as Arrow names it.
        found: String,
        /// What it must be instead.
        wanted: &'static str,
    },
    /// Parquet was asked of standard input: the format's footer is at the end of the
    /// file, so it is read from a file, which can be read at any offset.
    #[error("{path}: Parquet is read from a file (its footer is at the end), not from standard input; save it to a file first")]
    ParquetNeedsFile {
        /// The input as given (`-`).
        path: String,
    },
    /// A CSV/TSV column asked for (`text_columns`, `id_column` or `key_field`) is not in
    /// the header. The message lists the header's columns; if the header is one column
    /// holding tabs or semicolons (a file with another delimiter read as CSV), it says so
    /// and lists the names it would have: `looks tab-separated; try --format tsv`, `looks
    /// semicolon-separated; try --delimiter ';'`; if a column differs only in case or
    /// surrounding spaces, it names it: `did you mean "Text"?`.
    #[error(
        "{path}: column {column:?} is not in the header (available columns: {}){}",
        Quoted(.available),
        HeaderHint(.column, .available)
    )]
    MissingColumn {
        /// The input as given.
        path: String,
        /// The column that was asked for.
        column: String,
        /// The columns the header does have, in order.
        available: Vec<String>,
    },
    /// The CSV/TSV header row cannot be read as a header: a quoted column name is never
    /// closed (the "header" would be the whole input), the row is over the record-size
    /// limit, or it has more than 2²⁰ columns.
    #[error("{path}:{line}: bad header: {reason}")]
    BadHeader {
        /// The input as given.
        path: String,
        /// The header's first line.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// [`Format::Dir`](crate::Format::Dir) was asked for, but the input is not a
    /// directory (standard input never is).
    #[error("{path}: not a directory (the dir format reads a directory tree)")]
    NotADirectory {
        /// The input as given.
        path: String,
    },
    /// A file format was asked for, but the input is a directory.
    #[error("{path}: is a directory (use the dir format to read a directory tree)")]
    IsADirectory {
        /// The input as given.
        path: String,
    },
    /// The [`ReadOptions`](crate::ReadOptions) cannot work (e.g. no text column).
    #[error("invalid read options: {0}")]
    InvalidOptions(String),
    /// A format name given to [`Format::from_str`](std::str::FromStr::from_str) is unknown.
    #[error("unknown format {0:?} (expected one of: jsonl, csv, tsv, lines, dir, parquet)")]
    UnknownFormat(String),
    /// The dir format copies files into a directory, so it cannot write to standard output.
    #[error("the dir format needs an output directory; it cannot write to standard output")]
    DirNeedsOutput,
    /// The output directory for the dir format exists and is not empty (or is not a
    /// directory); it is left untouched rather than mixed with the new files.
    #[error("{path}: output directory exists and is not empty (or is not a directory)")]
    OutputDirNotEmpty {
        /// The output directory as given.
        path: String,
    },
    /// A record's id cannot be used as a relative path under the output directory
    /// (it is empty, absolute, or contains `..`).
    #[error("record id {id:?} cannot be used as a file path under the output directory")]
    UnsafeId {
        /// The offending id.
        id: String,
    },
    /// Writing the output failed (disk full, permission denied, ...).
    #[error("{path}: cannot write output: {error}")]
    Write {
        /// The output as given (`-` for standard output).
        path: String,
        /// The underlying error.
        error: io::Error,
    },
    /// Copying a kept file into the output directory failed.
    #[error("cannot copy {from} to {to}: {error}")]
    Copy {
        /// The source file.
        from: String,
        /// The destination file.
        to: String,
        /// The underlying error.
        error: io::Error,
    },
    /// An output path names an input (the same device and inode, whatever the name):
    /// writing it would destroy the input.
    #[error("{path}: is the input {input}; refusing to overwrite it")]
    OutputIsInput {
        /// The output as given.
        path: String,
        /// The input it is.
        input: String,
    },
    /// An output path that must be a file is a directory.
    #[error("{path}: is a directory; an output file is needed here")]
    OutputIsDirectory {
        /// The output as given.
        path: String,
    },
    /// An output path is a symbolic link to nothing; it is not replaced by a file.
    #[error("{path}: is a dangling symbolic link; refusing to write through it")]
    DanglingSymlink {
        /// The output as given.
        path: String,
    },
    /// An output path is a socket, a block device or another special file that is
    /// neither written in place (character devices, FIFOs) nor replaced.
    #[error("{path}: is a {kind}; refusing to write to it")]
    UnsupportedOutput {
        /// The output as given.
        path: String,
        /// What it is (`socket`, `block device`, ...).
        kind: &'static str,
    },
    /// Standard output was closed by the reader (e.g. `neardup ... | head`). A command
    /// line program usually ends quietly on this one: see [`Error::is_broken_pipe`].
    #[error("broken pipe: standard output was closed")]
    BrokenPipe,
}

impl Error {
    /// True if this error means the consumer of standard output went away, which a
    /// command-line program should treat as a quiet, successful end.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            Error::BrokenPipe => true,
            Error::Write { error, .. } => error.kind() == io::ErrorKind::BrokenPipe,
            _ => false,
        }
    }

    /// The underlying I/O error, for the variants that have one.
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            Error::Read { error, .. }
            | Error::Gzip { error, .. }
            | Error::Zstd { error, .. }
            | Error::Write { error, .. }
            | Error::Copy { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The crate's result alias.
pub type Result<T> = std::result::Result<T, Error>;

/// Displays `path` or `path:line`.
struct At<'a>(&'a str, Option<u64>);

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(line) => write!(f, "{}:{}", self.0, line),
            None => f.write_str(self.0),
        }
    }
}

/// The hint for a missing column: a header of a single column (no delimiter found) that
/// holds tabs or semicolons, or a column that differs from the one asked for only in case
/// or surrounding spaces.
struct HeaderHint<'a>(&'a str, &'a [String]);

impl fmt::Display for HeaderHint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (column, available) = (self.0, self.1);
        let split =
            |sep: char| -> Vec<String> { available[0].split(sep).map(str::to_string).collect() };
        match available {
            [only] if only.contains('\t') => write!(
                f,
                "; the header looks tab-separated ({}); try --format tsv",
                Quoted(&split('\t'))
            ),
            [only] if only.contains(';') => write!(
                f,
                "; the header looks semicolon-separated ({}); try --delimiter ';'",
                Quoted(&split(';'))
            ),
            _ => NearMiss(column, available).fmt(f),
        }
    }
}

/// "; did you mean "Text"?" for a column that differs from the one asked for only in
/// case or surrounding spaces, or (Parquet) a struct field of that name (`url` for
/// `meta.url`); nothing otherwise.
struct NearMiss<'a>(&'a str, &'a [String]);

impl fmt::Display for NearMiss<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (column, available) = (self.0.trim(), self.1);
        let same = |c: &str| c.trim().eq_ignore_ascii_case(column) || c.trim() == column;
        let near = available.iter().find(|c| same(c)).or_else(|| {
            available
                .iter()
                .find(|c| c.rsplit_once('.').is_some_and(|(_, leaf)| same(leaf)))
        });
        match near {
            Some(near) => write!(f, "; did you mean {near:?}?"),
            None => Ok(()),
        }
    }
}

/// Displays a list of names as `"a", "b"`.
struct Quoted<'a>(&'a [String]);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name:?}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_error_names_file_and_line() {
        let e = Error::Read {
            path: "a.jsonl".into(),
            line: Some(7),
            error: io::Error::other("boom"),
        };
        assert_eq!(e.to_string(), "a.jsonl:7: boom");
        let e = Error::Read {
            path: "a.jsonl".into(),
            line: None,
            error: io::Error::other("boom"),
        };
        assert_eq!(e.to_string(), "a.jsonl: boom");
        assert!(e.io_error().is_some());
    }

    #[test]
    fn missing_column_lists_available() {
        let e = Error::MissingColumn {
            path: "x.csv".into(),
            column: "body".into(),
            available: vec!["id".into(), "text".into()],
        };
        assert_eq!(
            e.to_string(),
            r#"x.csv: column "body" is not in the header (available columns: "id", "text")"#
        );
    }

    #[test]
    fn missing_column_hints_at_semicolons_and_case() {
        let e = Error::MissingColumn {
            path: "x.csv".into(),
            column: "text".into(),
            available: vec!["id;text".into()],
        };
        assert!(
            e.to_string().ends_with(
                r#"; the header looks semicolon-separated ("id", "text"); try --delimiter ';'"#
            ),
            "{e}"
        );
        let e = Error::MissingColumn {
            path: "x.csv".into(),
            column: "text".into(),
            available: vec!["id".into(), " Text".into()],
        };
        assert!(e.to_string().ends_with(r#"; did you mean " Text"?"#), "{e}");
    }

    #[test]
    fn missing_column_in_a_tab_separated_header_hints_at_tsv() {
        let e = Error::MissingColumn {
            path: "x.csv".into(),
            column: "text".into(),
            available: vec!["id\ttext".into()],
        };
        assert_eq!(
            e.to_string(),
            r#"x.csv: column "text" is not in the header (available columns: "id\ttext"); the header looks tab-separated ("id", "text"); try --format tsv"#
        );
    }

    #[test]
    fn missing_parquet_column_lists_columns_and_a_struct_field() {
        let e = Error::MissingParquetColumn {
            path: "x.parquet".into(),
            column: "url".into(),
            available: vec!["text".into(), "meta.url".into()],
        };
        assert_eq!(
            e.to_string(),
            r#"x.parquet: column "url" is not in the Parquet file (its columns: "text", "meta.url"); did you mean "meta.url"?"#
        );
        let e = Error::MissingParquetColumn {
            path: "x.parquet".into(),
            column: "body".into(),
            available: vec!["Body".into()],
        };
        assert!(e.to_string().ends_with(r#"; did you mean "Body"?"#), "{e}");
    }

    #[test]
    fn broken_pipe_is_recognised() {
        assert!(Error::BrokenPipe.is_broken_pipe());
        let e = Error::Write {
            path: "-".into(),
            error: io::Error::from(io::ErrorKind::BrokenPipe),
        };
        assert!(e.is_broken_pipe());
        let e = Error::Write {
            path: "-".into(),
            error: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert!(!e.is_broken_pipe());
    }

    #[test]
    fn error_is_send_and_sync() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Error>();
    }
}
