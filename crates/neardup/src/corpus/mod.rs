//! What a run holds: the corpus of distinct shingle sets (band keys, signatures, copies),
//! the typed stages it goes through, and 32-bit document numbers.

pub(crate) mod sets;
pub(crate) mod slot;
pub(crate) mod stages;

pub use sets::{set_fingerprint, Corpus, WHOLE_NUM_PERM};
pub use slot::MAX_DOCUMENTS;
pub use stages::{ShingleBatches, Shingled, Sketched};
