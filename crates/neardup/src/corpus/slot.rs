//! Document indices in 32 bits, and the 4-byte optional index of per-document arrays.
//!
//! Documents are numbered with `u32`, so the library takes at most [`MAX_DOCUMENTS`]
//! (`u32::MAX`) of them: every document index is below `u32::MAX`, and so is anything
//! numbered by documents (rows of keys, groups, cluster entries) or by a set's shingles
//! in the exact join. That leaves `u32::MAX` free to mean "none" in a [`Slot`].
//!
//! The limit is checked with [`check_documents`] where documents enter the library
//! (returning [`Error::TooManyDocuments`]); past that point a `usize` index becomes a `u32`
//! through [`doc_id`], which checks the bound in debug builds only, so hot loops stay a
//! plain move.

use crate::error::{Error, Result};

/// The most documents the library takes: indices `0..MAX_DOCUMENTS` fit a `u32` and never
/// reach `u32::MAX`, which the library reserves to mean "none".
pub const MAX_DOCUMENTS: usize = u32::MAX as usize;

/// `Ok` if `documents` is within [`MAX_DOCUMENTS`].
pub(crate) fn check_documents(documents: usize) -> Result<()> {
    if documents > MAX_DOCUMENTS {
        return Err(Error::TooManyDocuments(documents));
    }
    Ok(())
}

/// A document index (or a number bounded by the document count) as a `u32`.
///
/// The caller holds at most [`MAX_DOCUMENTS`] documents, checked where they entered with
/// [`check_documents`]; this conversion only re-checks it in debug builds.
#[inline(always)]
pub(crate) fn doc_id(index: usize) -> u32 {
    debug_assert!(
        index < MAX_DOCUMENTS,
        "document index {index} past the limit"
    );
    index as u32
}

/// The indices of `count` documents, `0..count` as `u32` (see [`doc_id`]).
#[inline]
pub(crate) fn doc_ids(count: usize) -> std::ops::Range<u32> {
    debug_assert!(count <= MAX_DOCUMENTS, "{count} documents past the limit");
    0..count as u32
}

/// An optional index in 4 bytes (an `Option<u32>` takes 8): for arrays with one entry per
/// document or per set, where memory matters. `u32::MAX` stands for none and is never a
/// value (see the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Slot(u32);

impl Slot {
    /// No index.
    pub(crate) const NONE: Slot = Slot(u32::MAX);

    /// A slot holding `value`, which must be below `u32::MAX` (see the module; rejected in
    /// debug builds, since in release it would read back as [`Slot::NONE`]).
    #[inline(always)]
    pub(crate) fn new(value: u32) -> Slot {
        debug_assert_ne!(value, u32::MAX, "u32::MAX is no index: it means none");
        Slot(value)
    }

    /// The index held, if any.
    #[inline(always)]
    pub(crate) fn get(self) -> Option<u32> {
        (self.0 != u32::MAX).then_some(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_every_index_but_the_reserved_one() {
        assert_eq!(std::mem::size_of::<Slot>(), 4);
        assert_eq!(Slot::NONE.get(), None);
        for v in [0, 1, u32::MAX - 1] {
            assert_eq!(Slot::new(v).get(), Some(v));
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "it means none")]
    fn the_reserved_value_is_refused() {
        let _ = Slot::new(u32::MAX);
    }

    #[test]
    fn the_document_limit_is_u32_max() {
        assert_eq!(check_documents(0), Ok(()));
        assert_eq!(check_documents(MAX_DOCUMENTS), Ok(()));
        assert_eq!(
            check_documents(MAX_DOCUMENTS + 1),
            Err(Error::TooManyDocuments(MAX_DOCUMENTS + 1))
        );
        // The last document's index is below the value slots reserve.
        assert_eq!(doc_id(MAX_DOCUMENTS - 1), u32::MAX - 1);
        assert_eq!(doc_ids(3), 0..3);
    }
}
