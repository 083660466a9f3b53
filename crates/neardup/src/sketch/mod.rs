//! Shingle sets to sketches: the `Sketch` trait and the classic sketch, one-permutation
//! hashing, the families a set size gets (with `FamilySet`, the one "last shared family"
//! rule), and one document's set and sketch on its own.

pub(crate) mod classic;
pub(crate) mod document;
pub(crate) mod family;
pub(crate) mod oph;
