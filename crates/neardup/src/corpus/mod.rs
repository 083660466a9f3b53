//! What a run holds: the corpus of distinct shingle sets (band keys, signatures, copies),
//! the typed stages it goes through, and 32-bit document numbers.

pub(crate) mod sets;
pub(crate) mod slot;
pub(crate) mod stages;
