//! Shingle sets to sketches: the `Sketch` trait and the classic sketch, one-permutation
//! hashing, the families a set size gets (with `FamilySet`, the one "last shared family"
//! rule), and one document's set and sketch on its own.

pub(crate) mod classic;
pub(crate) mod document;
pub(crate) mod family;
pub(crate) mod oph;

pub use crate::rng::SplitMix64;
pub use classic::{ClassicMinHash, Sketch, MAX_NUM_PERM};
pub use document::{DocSet, DocSketch, FamilySketch};
pub use family::{FamilySet, SketchKind, MAX_FAMILIES};
pub use oph::OnePermutation;
