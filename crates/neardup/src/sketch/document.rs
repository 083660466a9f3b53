//! One document at a time: its shingle set (the 64-bit hashes, whose top halves a corpus
//! holds as ids), its fingerprint and its sketch (of the ids, as a corpus sketches them),
//! for callers that meet documents one by one (an index answering queries, a worker of a
//! cluster run).
//!
//! ```
//! use neardup::{Config, Pipeline};
//! let pipeline = Pipeline::new(Config::builder().threshold(0.8).build()?)?;
//! let a = pipeline.shingle_doc("Vintage road bike, 56 cm steel frame, new tyres, collection only");
//! let b = pipeline.shingle_doc("Vintage road bike, 56 cm steel frame, new tyres. Collection only!");
//! let (sa, sb) = (pipeline.sketch_doc(&a), pipeline.sketch_doc(&b));
//! let family = sa.shared_family(&sb).expect("similar sizes share a family");
//! let collide = sa.band_keys(family).unwrap().iter().zip(sb.band_keys(family).unwrap()).any(|(x, y)| x == y);
//! let verdict = pipeline.verify_docs(&a, &b, Some((&sa, &sb)));
//! assert!(verdict.verified, "{verdict:?}");
//! assert!(collide);
//! # Ok::<(), neardup::Error>(())
//! ```

use crate::corpus::sets::set_fingerprint;
use crate::sketch::family::FamilySet;

/// One document's shingle set: sorted, deduplicated hashes of its first
/// `max_shingles` positions, and, for a longer (truncated) document, the sketch of all its
/// shingles that its pairs are judged on. Made by
/// [`Pipeline::shingle_doc`](crate::Pipeline::shingle_doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocSet {
    set: Vec<u64>,
    whole: Option<Vec<u64>>,
    short: bool,
}

impl DocSet {
    pub(crate) fn new(set: Vec<u64>, whole: Option<Vec<u64>>, short: bool) -> Self {
        DocSet { set, whole, short }
    }

    /// A set made earlier by [`Pipeline::shingle_doc`](crate::Pipeline::shingle_doc) and
    /// kept (an index stores sets, not texts): `set` sorted and deduplicated, `whole` the
    /// whole-document sketch of a truncated document. Whether the text was shorter than one
    /// shingle is not kept, so [`DocSet::is_short`] is false.
    pub fn from_parts(set: Vec<u64>, whole: Option<Vec<u64>>) -> Self {
        DocSet::new(set, whole, false)
    }

    /// The shingle set (empty for a text with no shingles, which matches nothing).
    pub fn set(&self) -> &[u64] {
        &self.set
    }

    /// True if the document had more shingle positions than the cap.
    pub fn is_truncated(&self) -> bool {
        self.whole.is_some()
    }

    /// For a truncated document, the sketch of all its shingles.
    pub fn whole_signature(&self) -> Option<&[u64]> {
        self.whole.as_deref()
    }

    /// True if the text is not empty but shorter than one shingle: it is a single shingle
    /// and matches only exact copies.
    pub fn is_short(&self) -> bool {
        self.short
    }

    /// The fingerprint ([`set_fingerprint`]) that groups identical documents, as a corpus
    /// groups them: `None` for an empty document and for a truncated one (equal prefixes
    /// say nothing about the rest).
    pub fn fingerprint(&self) -> Option<u128> {
        (!self.set.is_empty() && self.whole.is_none()).then(|| set_fingerprint(&self.set))
    }
}

/// A document's sketch in one family: its band keys and its signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilySketch {
    family: usize,
    band_keys: Vec<u64>,
    signature: Vec<u32>,
}

impl FamilySketch {
    pub(crate) fn new(family: usize, band_keys: Vec<u64>, signature: Vec<u32>) -> Self {
        FamilySketch {
            family,
            band_keys,
            signature,
        }
    }

    /// The family's number: families are numbered from 0 in the configuration's order
    /// (with the default sketch, 0 is the classic sketch of small documents and 1 the
    /// one-permutation sketch of the others).
    pub fn family(&self) -> usize {
        self.family
    }

    /// One key per band: two documents are candidates when a key agrees in some band of
    /// the family they are compared in.
    pub fn band_keys(&self) -> &[u64] {
        &self.band_keys
    }

    /// The signature's values, each the low 32 bits of the MinHash value.
    pub fn signature(&self) -> &[u32] {
        &self.signature
    }
}

/// One document's sketch in every family its size belongs to (one, or two where the
/// families' ranges of sizes overlap). Made by
/// [`Pipeline::sketch_doc`](crate::Pipeline::sketch_doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocSketch {
    parts: Vec<FamilySketch>,
}

impl DocSketch {
    pub(crate) fn new(parts: Vec<FamilySketch>) -> Self {
        DocSketch { parts }
    }

    /// The document's sketch in each of its families, in family order (none for an empty
    /// document).
    pub fn families(&self) -> &[FamilySketch] {
        &self.parts
    }

    fn part(&self, family: usize) -> Option<&FamilySketch> {
        self.parts.iter().find(|p| p.family == family)
    }

    /// The band keys in a family, if the document is in it.
    pub fn band_keys(&self, family: usize) -> Option<&[u64]> {
        self.part(family).map(FamilySketch::band_keys)
    }

    /// The signature in a family, if the document is in it.
    pub fn signature(&self, family: usize) -> Option<&[u32]> {
        self.part(family).map(FamilySketch::signature)
    }

    /// The families the document is in.
    pub fn family_set(&self) -> FamilySet {
        self.parts.iter().map(|p| p.family).collect()
    }

    /// The family two documents are compared in ([`FamilySet::shared`]).
    pub fn shared_family(&self, other: &DocSketch) -> Option<usize> {
        self.family_set().shared(other.family_set())
    }

    /// The MinHash estimate of the two documents' Jaccard, in their shared family; `None`
    /// without signatures ([`Pipeline::sketch_doc_keys`](crate::Pipeline::sketch_doc_keys)).
    pub fn estimate(&self, other: &DocSketch) -> Option<f64> {
        let f = self.shared_family(other)?;
        let (a, b) = (self.signature(f)?, other.signature(f)?);
        (!a.is_empty() && a.len() == b.len()).then(|| crate::verify::jaccard::estimate(a, b))
    }
}
