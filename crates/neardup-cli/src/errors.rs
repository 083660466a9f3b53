//! Errors of the command line itself (a usage error, a bad record), each with its exit
//! code, and the one line a failed command prints.

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

/// Records that are not what the command asked for, found by the command itself (exit
/// code 3); the document table's own are `DocumentsError::BadRecord`.
#[derive(Debug)]
pub struct BadRecord(pub String);

impl fmt::Display for BadRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadRecord {}

/// Returns early with a [`Usage`] error.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err($crate::errors::Usage(format!($($arg)*)).into())
    };
}
pub(crate) use usage;

/// The error and its causes on one line, `error: cause: cause`, as anyhow's `{:#}` writes
/// them, less any cause whose text the line already ends with: a library error whose
/// message shows its cause and whose `source()` also returns it (`idx/MANIFEST: Not a
/// directory (os error 20)`) would print the cause twice.
///
/// `main` prints a failed command's error with it.
pub fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    /// An index that cannot be created under a file: the index error shows its I/O cause
    /// and returns it as its source; the message has it once.
    #[test]
    fn an_io_cause_is_printed_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let config = neardup::Config::builder().build().unwrap();
        let e = neardup_index::IndexWriter::create(file.join("idx"), &config)
            .map(|_| ())
            .unwrap_err();
        let e = anyhow::Error::from(e);
        let cause = std::io::Error::from_raw_os_error(20).to_string();
        assert_eq!(format!("{e:#}").matches(&cause).count(), 2, "{e:#}");
        let line = message(&e);
        assert_eq!(line.matches(&cause).count(), 1, "{line}");
        assert!(line.starts_with(&file.display().to_string()), "{line}");
        // Context and a cause not in the message yet are all kept, in order.
        let e = Err::<(), _>(std::io::Error::from_raw_os_error(2))
            .context("cannot write out.jsonl")
            .context("dedup failed")
            .unwrap_err();
        assert_eq!(
            message(&e),
            format!(
                "dedup failed: cannot write out.jsonl: {}",
                std::io::Error::from_raw_os_error(2)
            )
        );
    }
}
