//! What can go wrong with an index.

use std::io;
use std::path::PathBuf;

/// An index error: every variant names the file or the parameter it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file of the index failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The directory holds no index (no manifest).
    #[error("{0}: no index here (no MANIFEST); create one with `index build`")]
    NotAnIndex(PathBuf),
    /// `create` was asked for a directory that already holds an index.
    #[error("{0}: an index already exists here")]
    AlreadyExists(PathBuf),
    /// A file of the index is not what it should be: truncated, a bad checksum, a layout
    /// that does not add up.
    #[error("{path}: corrupt index file: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The index was written by a format this version cannot read.
    #[error("{path}: index format {found}, this version reads formats {oldest} to {newest}")]
    UnsupportedFormat {
        /// The manifest.
        path: PathBuf,
        /// The format found.
        found: u32,
        /// The oldest format this version reads.
        oldest: u32,
        /// The format this version writes (and the newest it reads).
        newest: u32,
    },
    /// The index was opened with parameters other than those it was built with.
    #[error("{path}: the index was built with other parameters: {}", differences.join("; "))]
    ParameterMismatch {
        /// The index.
        path: PathBuf,
        /// One line per difference: the parameter, the index's value and the one asked for.
        differences: Vec<String>,
    },
    /// A query threshold below the one the index was built for (its buckets cannot find
    /// those pairs).
    #[error(
        "query threshold {asked} is below the index's threshold {built}: rebuild the index for it"
    )]
    ThresholdBelowIndex {
        /// The threshold asked for.
        asked: f64,
        /// The index's threshold.
        built: f64,
    },
    /// A query threshold that is not a number in (0, 1].
    #[error("query threshold {0} is not in (0, 1]")]
    InvalidThreshold(f64),
    /// A commit of this writer failed after its manifest was in place: the index is at
    /// that commit or the one before, and this writer can no longer tell which.
    #[error("{0}: a commit failed after its manifest was written; open the index again to go on")]
    WriterFailed(PathBuf),
    /// More documents in one segment than its 32-bit numbering holds.
    #[error("{0} documents in one batch: at most {max} per segment", max = u32::MAX)]
    TooManyDocuments(usize),
    /// Something a containment index does not do: it has no one band plan, and keeping
    /// only documents that are not inside others is not what it is for.
    #[error("{0} does not apply to a containment index (--measure containment)")]
    NotForContainment(&'static str),
    /// The core refused the parameters.
    #[error(transparent)]
    Core(#[from] neardup::Error),
}

/// The index's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps an I/O error with the file it was about.
pub(crate) fn io_at(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
