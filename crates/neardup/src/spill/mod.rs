//! Runs larger than memory: what an in-memory run holds per document (shingle sets, band
//! keys, fingerprints of sets, candidate pairs) goes to temporary files instead, written
//! in sorted runs and merged back in order. See
//! [`Pipeline::spill_batches`](crate::Pipeline::spill_batches).

pub(crate) mod bands;
pub(crate) mod runs;
pub(crate) mod spilled;
pub(crate) mod texts;

pub use spilled::{SpillBatches, Spilled};

use std::path::{Path, PathBuf};

use crate::error::Error;

/// Where a spilled run writes and how much it sorts in memory at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpillOptions {
    dir: PathBuf,
    memory: usize,
}

impl SpillOptions {
    /// Default memory for sorting: 256 MiB.
    pub const DEFAULT_MEMORY: usize = 256 << 20;

    /// Temporary files go into `dir` (they have no names and vanish when the run ends,
    /// even if it is killed); sorting holds [`SpillOptions::DEFAULT_MEMORY`].
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SpillOptions {
            dir: dir.into(),
            memory: Self::DEFAULT_MEMORY,
        }
    }

    /// Bytes of records sorted in memory at once, over all of a stage's sorts (records
    /// beyond it go to runs on disk). Smaller means more runs, not a different result.
    pub fn memory(mut self, bytes: usize) -> Self {
        self.memory = bytes;
        self
    }

    /// The folder the temporary files go into.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The memory for sorting, in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.memory
    }
}

/// The library's error for a failed read or write of a temporary file in `dir`.
pub(crate) fn spill_error(dir: &Path, e: std::io::Error) -> Error {
    Error::Spill {
        dir: dir.display().to_string(),
        message: e.to_string(),
    }
}
