//! What stops reading documents into a table.

/// Why [`Documents::read_batches`](super::Documents::read_batches) (or a method of the
/// table) failed. Every message names the file, the option or the temporary file it is
/// about, as the command line prints it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentsError {
    /// An input could not be opened or read; the reader's message names the file and
    /// line.
    #[error(transparent)]
    Read(#[from] crate::Error),
    /// An input option does not apply to an input's format (a JSONL field on a CSV file,
    /// `delimiter` on TSV, a key on plain lines): a usage error of the caller.
    #[error("{0}")]
    OptionNotForFormat(String),
    /// The input's records are not what was asked for: every record skipped for one
    /// reason, a named id field in no record, or (with
    /// [`InputOptions::fail_on_error`](super::InputOptions::fail_on_error)) a malformed
    /// record.
    #[error("{0}")]
    BadRecord(String),
    /// More documents than a `u32` numbers (holds the number read).
    #[error("too many documents: {0} (at most 4294967295)")]
    TooManyDocuments(usize),
    /// A temporary file (records' bytes, the skipped list) could not be created, written
    /// or read back.
    #[error("{context}")]
    TempFile {
        /// What was being done, e.g. "cannot write records to a temporary file".
        context: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A temporary file read back is not what was written (or records were asked for
    /// out of order).
    #[error("{context}: {detail}")]
    TempFileMismatch {
        /// What was being done.
        context: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// Writing the skipped list to the caller's writer failed.
    #[error(transparent)]
    Write(std::io::Error),
}

impl DocumentsError {
    /// The I/O error underneath, if the failure is one (reading an input, a temporary
    /// file, writing the skipped list).
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            DocumentsError::Read(e) => e.io_error(),
            DocumentsError::TempFile { source, .. } | DocumentsError::Write(source) => Some(source),
            _ => None,
        }
    }

    /// True if writing stopped because the reader of the output went away.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            DocumentsError::Read(e) => e.is_broken_pipe(),
            DocumentsError::Write(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
            _ => false,
        }
    }
}

/// A temporary file's failure, with what was being done.
pub(super) fn temp_file(context: &'static str) -> impl FnOnce(std::io::Error) -> DocumentsError {
    move |source| DocumentsError::TempFile { context, source }
}
