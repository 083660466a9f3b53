//! 32-bit shingle ids: how a corpus holds its shingle sets.
//!
//! A shingle's id is the top half of its 64-bit hash. A corpus stores ids, half the memory
//! of the hashes (on 841,708 PyPI summaries, 39M stored shingles: 149 MiB instead of 298),
//! and every sketch is of the ids, wherever the set came from, so a document's band keys
//! are the same whether it was sketched in a corpus or on its own.
//!
//! The cost is collisions. Two different shingles share an id with probability 2⁻³²: a set
//! of n shingles loses about n²/2³³ of them (0.3 for 50,000), and a pair whose sets differ
//! in d shingles on each side gains a false common shingle with probability about d²/2³²
//! (10⁻⁷ for d = 20), which raises its Jaccard by one part in the union.
//!
//! ```
//! use neardup::text::Shingle;
//! let hash = 0x0123_4567_89ab_cdef_u64;
//! let id = (hash >> 32) as u32; // the top half
//! // A hash and its id feed a sketch the same value.
//! assert_eq!(hash.sketch_value(), id.sketch_value());
//! ```

use std::fmt::Debug;
use std::hash::Hash;

/// The 32-bit id of a shingle whose 64-bit hash is `hash`: its top half. Ids of a sorted
/// set of hashes come out sorted (equal neighbours are collisions, kept once).
#[inline(always)]
pub(crate) fn shingle_id(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// A shingle as the set functions take it: a 64-bit hash ([`DocSet`](crate::sketch::DocSet),
/// [`Shingler::shingle_set`](crate::Shingler::shingle_set)) or a 32-bit id (a
/// [`Corpus`](crate::corpus::Corpus)).
pub trait Shingle: Copy + Ord + Hash + Debug + Send + Sync + Into<u64> + 'static {
    /// What a sketch hashes for this shingle: its id, spread over 64 bits.
    fn sketch_value(self) -> u64;
}

/// Odd, so the id's spread ([`spread`]) is a bijection.
const SPREAD: u64 = 0xbf58_476d_1ce4_e5b9;

/// A 32-bit id spread over all 64 bits by an odd multiply: the sketches take bins from the
/// top bits and keep the low 32 bits of their minima, and both must vary with the id.
#[inline(always)]
fn spread(id: u32) -> u64 {
    u64::from(id).wrapping_mul(SPREAD)
}

impl Shingle for u64 {
    #[inline(always)]
    fn sketch_value(self) -> u64 {
        spread(shingle_id(self))
    }
}

impl Shingle for u32 {
    #[inline(always)]
    fn sketch_value(self) -> u64 {
        spread(self)
    }
}

/// What a sketch hashes of each shingle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SketchInput {
    /// Its 32-bit id ([`Shingle::sketch_value`]), the default: a document gets the same
    /// sketch from a corpus as on its own.
    #[default]
    Ids,
    /// Its whole 64-bit hash: how an index keeps the band keys its on-disk format was
    /// defined with. Only for sets of hashes: a corpus always sketches ids.
    Hashes,
}

impl SketchInput {
    /// The values a sketch hashes for `set`, into `out` (cleared first).
    pub(crate) fn values_into<S: Shingle>(self, set: &[S], out: &mut Vec<u64>) {
        out.clear();
        match self {
            SketchInput::Ids => out.extend(set.iter().map(|s| s.sketch_value())),
            SketchInput::Hashes => out.extend(set.iter().map(|&s| s.into())),
        }
    }

    /// Replaces each hash of `hashes` with the value a sketch hashes for it.
    pub(crate) fn to_values(self, hashes: &mut [u64]) {
        if self == SketchInput::Ids {
            for h in hashes {
                *h = h.sketch_value();
            }
        }
    }

    /// The size of a sorted, deduplicated set of hashes as this input counts it: its ids,
    /// as a corpus holds them, or its hashes.
    pub fn size(self, hashes: &[u64]) -> usize {
        match self {
            SketchInput::Ids => distinct_ids(hashes),
            SketchInput::Hashes => hashes.len(),
        }
    }

    /// The exact Jaccard of two sorted, deduplicated sets of hashes as this input compares
    /// them: by their ids, as a corpus does, or by the hashes.
    pub fn jaccard(self, a: &[u64], b: &[u64]) -> f64 {
        match self {
            SketchInput::Ids => jaccard_of_ids(a, b),
            SketchInput::Hashes => crate::verify::jaccard::jaccard(a, b),
        }
    }

    /// The values a sketch hashes for `set`.
    pub(crate) fn values<S: Shingle>(self, set: &[S]) -> Vec<u64> {
        let mut out = Vec::with_capacity(set.len());
        self.values_into(set, &mut out);
        out
    }
}

/// The ids of a sorted, deduplicated set of hashes, in order, each once.
struct Ids<'a> {
    hashes: std::slice::Iter<'a, u64>,
    last: Option<u32>,
}

impl<'a> Ids<'a> {
    fn of(hashes: &'a [u64]) -> Self {
        Ids {
            hashes: hashes.iter(),
            last: None,
        }
    }
}

impl Iterator for Ids<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        for &h in self.hashes.by_ref() {
            let id = shingle_id(h);
            // Sorted hashes give sorted ids: a collision is the previous one again.
            if self.last != Some(id) {
                self.last = Some(id);
                return Some(id);
            }
        }
        None
    }
}

/// The ids of a sorted, deduplicated set of hashes, appended to `out`: sorted and
/// deduplicated too.
pub(crate) fn extend_ids(hashes: &[u64], out: &mut Vec<u32>) {
    out.reserve(hashes.len());
    out.extend(Ids::of(hashes));
}

/// The number of distinct ids of a sorted, deduplicated set of hashes: its size as a
/// corpus holds it.
pub(crate) fn distinct_ids(hashes: &[u64]) -> usize {
    Ids::of(hashes).count()
}

/// The exact Jaccard of the id sets of two sorted, deduplicated sets of hashes: what a
/// corpus gives the same two documents, without building the id sets.
///
/// ```
/// use neardup::Shingler;
/// use neardup::text::jaccard_of_ids;
/// let s = Shingler::default();
/// let (a, b) = (s.shingle_set("a bike for sale"), s.shingle_set("a bike for sale!"));
/// assert!(jaccard_of_ids(&a, &b) > 0.8);
/// ```
pub fn jaccard_of_ids(a: &[u64], b: &[u64]) -> f64 {
    let distinct = |s: &[u64]| s.windows(2).all(|w| shingle_id(w[0]) != shingle_id(w[1]));
    if distinct(a) && distinct(b) {
        // Every hash its own id (all but always): the branchless merge on the top halves.
        let common = crate::verify::jaccard::intersection_size_by(a, b, shingle_id);
        return crate::verify::jaccard::jaccard_from_counts(common, a.len(), b.len());
    }
    // A set with two hashes of one id: rare enough to build the id sets.
    crate::verify::jaccard::jaccard(&shingle_ids(a), &shingle_ids(b))
}

/// The ids of a sorted, deduplicated set of hashes.
pub fn shingle_ids(hashes: &[u64]) -> Vec<u32> {
    let mut out = Vec::new();
    extend_ids(hashes, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::mix64;

    #[test]
    fn ids_of_a_sorted_set_are_sorted_and_distinct() {
        let mut hashes: Vec<u64> = (0..10_000).map(mix64).collect();
        // Two hashes that differ only in their low half: one id.
        hashes.push(0x7777_7777_0000_0001);
        hashes.push(0x7777_7777_ffff_0000);
        hashes.sort_unstable();
        hashes.dedup();
        let ids = shingle_ids(&hashes);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ids.len(), hashes.len() - 1);
        assert_eq!(distinct_ids(&hashes), ids.len());
        assert_eq!(distinct_ids(&[]), 0);
        for h in &hashes {
            assert!(ids.binary_search(&shingle_id(*h)).is_ok(), "{h:x}");
        }
    }

    proptest::proptest! {
        /// Few ids, each with a few low halves: ids shared and repeated within a set.
        #[test]
        fn the_jaccard_of_ids_is_that_of_the_id_sets(
            a in proptest::collection::vec((0u64..64, 0u64..4), 0..40),
            b in proptest::collection::vec((0u64..64, 0u64..4), 0..40),
        ) {
            let hashes = |v: &[(u64, u64)]| {
                let mut h: Vec<u64> = v.iter().map(|&(id, low)| (id << 32) | low).collect();
                h.sort_unstable();
                h.dedup();
                h
            };
            let (a, b) = (hashes(&a), hashes(&b));
            let expected = crate::verify::jaccard::jaccard(&shingle_ids(&a), &shingle_ids(&b));
            proptest::prop_assert_eq!(jaccard_of_ids(&a, &b), expected);
            proptest::prop_assert_eq!(distinct_ids(&a), shingle_ids(&a).len());
        }
    }

    #[test]
    fn a_corpus_refuses_to_sketch_hashes() {
        let config = crate::Config::builder()
            .sketch_input(SketchInput::Hashes)
            .build()
            .unwrap();
        let p = crate::Pipeline::new(config).unwrap();
        assert_eq!(
            p.shingle(&["a text"]).unwrap_err(),
            crate::Error::CorpusSketchesIds
        );
        let dir = tempfile::tempdir().unwrap();
        let spilled = p.spill_batches(crate::SpillOptions::new(dir.path()));
        assert!(matches!(spilled, Err(crate::Error::CorpusSketchesIds)));
        // Single documents are what such a configuration is for.
        let doc = p.shingle_doc("a text long enough for a few shingles");
        assert!(p.sketch_doc_keys(&doc).band_keys(0).is_some());
    }

    #[test]
    fn a_hash_and_its_id_give_a_sketch_the_same_value() {
        for x in (0..1000).map(mix64) {
            assert_eq!(x.sketch_value(), shingle_id(x).sketch_value());
            // Different ids, different values.
            assert_ne!(x.sketch_value(), (x ^ (1 << 32)).sketch_value());
            // The low 32 bits vary with the id, not only the top ones.
            assert_ne!(
                x.sketch_value() as u32,
                (x ^ (1 << 40)).sketch_value() as u32
            );
        }
    }
}
