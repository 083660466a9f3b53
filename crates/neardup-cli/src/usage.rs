//! Errors of the command line itself, each with its exit code.

use std::fmt;

/// The command line asks for something that cannot be done as given: options that do not
/// apply, an output that would replace an input (exit code 2).
#[derive(Debug)]
pub struct Usage(pub String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Returns early with a [`Usage`] error.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err($crate::usage::Usage(format!($($arg)*)).into())
    };
}
pub(crate) use usage;
