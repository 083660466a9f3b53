//! What can go wrong with an index.

use std::io;
use std::path::PathBuf;

/// An index error: every variant names the file or the parameter it is about.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// `create` was asked for a directory that holds files of its own: an index is only
    /// made in a new or empty directory, so that no file of the user's is ever taken for
    /// one of the index's (and removed with them).
    #[error("{path}: the directory is not empty and holds no index (it has {example:?}); an index is created only in a new or empty directory")]
    NotEmpty {
        /// The directory.
        path: PathBuf,
        /// One of the files in it that are not the index's.
        example: String,
    },
    /// Another writer (a server, another command) held the index's lock for longer than
    /// this writer was willing to wait.
    #[error("{}: another writer{} holds the index's lock; gave up after {:.1} s", path.display(), holder.map(|p| format!(" (process {p})")).unwrap_or_default(), waited.as_secs_f64())]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// The process id its holder wrote into it, if it could be read.
        holder: Option<u32>,
        /// How long this writer waited.
        waited: std::time::Duration,
    },
    /// A document id that is the empty string: it could not be fetched or removed by id.
    #[error("document {position} of the batch has an empty id")]
    EmptyId {
        /// Its 0-based position in the batch.
        position: usize,
    },
    /// [`IndexWriter::commit_unique`](crate::IndexWriter::commit_unique) was handed a
    /// batch judged against another commit than the writer's last.
    #[error("{}: the batch was judged against commit {judged}, the index is at {now}: judge it again", path.display())]
    StaleBatch {
        /// The index.
        path: PathBuf,
        /// The commit the batch was judged against.
        judged: u64,
        /// The writer's last commit.
        now: u64,
    },
    /// A counter in the manifest (commits, segment names) is at its largest value: the
    /// manifest was edited or damaged, and going on would reuse names.
    #[error("{0}: the manifest's commit or segment counter is exhausted (the manifest was edited or damaged)")]
    CounterExhausted(PathBuf),
    /// A merge met a segment whose bytes do not match its checksum, or whose layout does
    /// not add up, and refused to carry the damage into a new segment.
    #[error("{}: refusing to merge a damaged segment: {}; restore the index from a backup or rebuild it (`index check` lists every problem)", path.display(), problems.join("; "))]
    Damaged {
        /// The segment.
        path: PathBuf,
        /// What `check` says of it.
        problems: Vec<String>,
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
