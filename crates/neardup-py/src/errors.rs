//! The exceptions the package raises, and the library's errors mapped onto them with the
//! library's own messages.
//!
//! One rule for callers: a value neardup refuses is a `NeardupError` (a `ValueError`), a
//! value of the wrong type a `TypeError`, and trouble with an index's files an
//! `IndexFileError` (an `OSError`).

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::PyErr;

create_exception!(
    neardup,
    NeardupError,
    PyValueError,
    "A setting or an argument neardup refuses. The message is the library's own, naming \
     the value and what is accepted."
);

create_exception!(
    neardup,
    IndexFileError,
    PyOSError,
    "An index's files could not be used: none at the path, a corrupt or unreadable file, \
     a format this version does not read, or a commit that failed half way; or an index \
     cannot be created where asked: a directory that is not empty and holds no index."
);

/// A refusal of the core library.
pub fn core(e: neardup::Error) -> PyErr {
    NeardupError::new_err(e.to_string())
}

/// A refusal of the Python layer itself (an argument the library never sees).
pub fn refused(message: impl Into<String>) -> PyErr {
    NeardupError::new_err(message.into())
}

/// An index error: parameters, thresholds and ids are refused values, the rest is about
/// files (a directory that is not empty and holds no index among them).
pub fn index(e: neardup_index::Error) -> PyErr {
    use neardup_index::Error as E;
    match e {
        E::ParameterMismatch { .. }
        | E::ThresholdBelowIndex { .. }
        | E::InvalidThreshold(_)
        | E::TooManyDocuments(_)
        | E::NotForContainment(_)
        | E::EmptyId { .. }
        | E::Core(_) => NeardupError::new_err(e.to_string()),
        _ => IndexFileError::new_err(e.to_string()),
    }
}
