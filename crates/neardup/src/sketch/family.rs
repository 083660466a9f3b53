//! Which sketch each document gets, by the size of its shingle set.
//!
//! One-permutation hashing is O(n + K) but, below about 64 shingles, its band collisions
//! fall measurably short of the S-curve (docs/design/05-sketches.md has the figures); the classic
//! sketch is exact there and cheap, since n is small. Documents are split by size into
//! *families*, each sketched and banded on its own. Two documents can only be compared
//! within a family they share, so the ranges overlap: a pair with Jaccard ≥ t has sizes
//! within a factor t, hence a document up to ⌈64 / t⌉ shingles gets the classic sketch
//! too, and any pair that straddles 64 still shares one family.

use crate::error::{by_name, Error, Result};
use crate::sketch::classic::{ClassicMinHash, Sketch};
use crate::sketch::oph::OnePermutation;

/// Below this many shingles a document is sketched with the classic sketch.
pub const SMALL_DOCUMENT: usize = 64;

/// Which sketch the user asked for.
///
/// Printed and parsed by its [name](SketchKind::name); with the `clap` feature it is a
/// `clap::ValueEnum` under the same names, its variants' first paragraphs as their help.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum SketchKind {
    /// One-permutation hashing with optimal densification; classic for small documents
    /// (the default).
    ///
    /// Documents under 64 shingles get the classic sketch, whose band
    /// collisions follow the S-curve there; the module explains the overlap.
    #[default]
    #[cfg_attr(feature = "clap", value(name = "oph"))]
    OnePermutation,
    /// The classic K-permutation sketch for every document (the reference).
    #[cfg_attr(feature = "clap", value(name = "classic"))]
    Classic,
    /// SimHash: one 64-bit fingerprint per document, candidates within `--hamming` bits.
    ///
    /// Charikar's fingerprint of the shingle counts, searched with permuted tables; no
    /// MinHash signature and no bands. Verified by exact Jaccard unless `--verify none`.
    #[cfg_attr(feature = "clap", value(name = "simhash"))]
    SimHash,
}

impl SketchKind {
    /// Every kind, the default first.
    pub const ALL: [SketchKind; 3] = [
        SketchKind::OnePermutation,
        SketchKind::Classic,
        SketchKind::SimHash,
    ];

    /// The kind's name: `oph`, `classic`, `simhash`.
    pub fn name(self) -> &'static str {
        match self {
            SketchKind::OnePermutation => "oph",
            SketchKind::Classic => "classic",
            SketchKind::SimHash => "simhash",
        }
    }

    /// True for the MinHash sketches (signatures and bands), false for SimHash.
    pub fn is_minhash(self) -> bool {
        self != SketchKind::SimHash
    }
}

by_name!(SketchKind, Error::InvalidSketch);

/// One sketch, applied to the documents whose set size lies in `min_size..max_size`.
pub struct Family {
    /// The sketch.
    pub sketch: Box<dyn Sketch>,
    /// Smallest set size (inclusive).
    pub min_size: usize,
    /// Largest set size (exclusive).
    pub max_size: usize,
}

impl Family {
    /// True if a document of `size` shingles belongs to this family.
    pub fn takes(&self, size: usize) -> bool {
        (self.min_size..self.max_size).contains(&size)
    }
}

/// The most families a configuration has (a [`FamilySet`] holds one bit each).
pub const MAX_FAMILIES: usize = 8;

/// The sketch families a document is in, one bit each; it holds the one rule of which
/// family two documents are compared in. The corpus, the spilled runs, the index and the
/// Python classes all ask it, so the rule cannot drift apart between them.
///
/// ```
/// use neardup::sketch::FamilySet;
/// let small = FamilySet::EMPTY.with(0);
/// let both = small.with(1);
/// assert_eq!(both.shared(small), Some(0));
/// assert_eq!(both.shared(both), Some(1));
/// assert_eq!(FamilySet::EMPTY.shared(both), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FamilySet(u8);

impl FamilySet {
    /// In no family: an empty document, or one not sketched.
    pub const EMPTY: FamilySet = FamilySet(0);

    /// The set with these bits (bit `f` for family `f`), as stored by [`FamilySet::bits`].
    #[inline]
    pub const fn from_bits(bits: u8) -> Self {
        FamilySet(bits)
    }

    /// One bit per family.
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The set with `family` added; families past [`MAX_FAMILIES`] are not held.
    #[must_use]
    pub fn with(self, family: usize) -> Self {
        debug_assert!(family < MAX_FAMILIES, "family {family} past {MAX_FAMILIES}");
        FamilySet(self.0 | 1u8.checked_shl(family as u32).unwrap_or(0))
    }

    /// True if `family` is in the set.
    #[inline]
    pub fn contains(self, family: usize) -> bool {
        family < MAX_FAMILIES && self.0 & (1 << family) != 0
    }

    /// The families a set of `size` shingles belongs to (none for an empty set).
    pub(crate) fn of_size(families: &[Family], size: usize) -> Self {
        if size == 0 {
            return FamilySet::EMPTY;
        }
        families
            .iter()
            .enumerate()
            .filter(|(_, f)| f.takes(size))
            .map(|(i, _)| i)
            .collect()
    }

    /// The family two documents are compared in: the last one both are in, so every pair
    /// is compared with exactly one sketch. Documents similar at the threshold always
    /// share one.
    #[inline]
    pub fn shared(self, other: FamilySet) -> Option<usize> {
        let both = self.0 & other.0;
        (both != 0).then(|| 7 - both.leading_zeros() as usize)
    }
}

impl FromIterator<usize> for FamilySet {
    fn from_iter<I: IntoIterator<Item = usize>>(families: I) -> Self {
        families.into_iter().fold(FamilySet::EMPTY, FamilySet::with)
    }
}

/// The families for a sketch kind, signature length, seed and threshold.
pub fn families(
    kind: SketchKind,
    num_perm: usize,
    seed: u64,
    threshold: f64,
) -> Result<Vec<Family>> {
    let classic = Box::new(ClassicMinHash::new(num_perm, seed)?);
    Ok(match kind {
        // One fingerprint per document, searched by its own tables: no MinHash family.
        SketchKind::SimHash => Vec::new(),
        SketchKind::Classic => vec![Family {
            sketch: classic,
            min_size: 0,
            max_size: usize::MAX,
        }],
        SketchKind::OnePermutation => {
            // Sizes within a factor t of each other must share a family.
            let overlap_end = (SMALL_DOCUMENT as f64 / threshold).ceil() as usize + 1;
            vec![
                Family {
                    sketch: classic,
                    min_size: 0,
                    max_size: overlap_end,
                },
                Family {
                    sketch: Box::new(OnePermutation::new(num_perm, seed)?),
                    min_size: SMALL_DOCUMENT,
                    max_size: usize::MAX,
                },
            ]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_above_the_threshold_shares_a_family() {
        for &t in &[0.3, 0.5, 0.8, 0.95, 1.0] {
            let fams = families(SketchKind::OnePermutation, 16, 1, t).unwrap();
            for small in 1..400usize {
                // The largest partner a set of `small` shingles can have at Jaccard ≥ t.
                let large_max = (small as f64 / t).floor() as usize;
                for large in small..=large_max {
                    assert!(
                        fams.iter().any(|f| f.takes(small) && f.takes(large)),
                        "t={t}: sizes {small} and {large} share no family"
                    );
                }
            }
        }
    }

    #[test]
    fn the_shared_family_is_the_last_one_both_are_in() {
        let fams = families(SketchKind::OnePermutation, 16, 1, 0.8).unwrap();
        let of = |n| FamilySet::of_size(&fams, n);
        assert_eq!(of(0), FamilySet::EMPTY);
        assert_eq!(of(10), FamilySet::from_bits(0b01));
        assert_eq!(of(70), FamilySet::from_bits(0b11));
        assert_eq!(of(1000), FamilySet::from_bits(0b10));
        assert_eq!(of(10).shared(of(70)), Some(0));
        assert_eq!(of(70).shared(of(75)), Some(1));
        assert_eq!(of(10).shared(of(1000)), None);
        assert_eq!(of(0).shared(of(10)), None);
        // Every bit pattern: the highest common bit, or none.
        for a in 0..=u8::MAX {
            for b in 0..=u8::MAX {
                let want = (0..8).rev().find(|&f| a & b & (1 << f) != 0);
                assert_eq!(
                    FamilySet::from_bits(a).shared(FamilySet::from_bits(b)),
                    want
                );
            }
        }
        assert_eq!(
            [0usize, 3].into_iter().collect::<FamilySet>().bits(),
            0b1001
        );
        assert!(FamilySet::from_bits(0b100).contains(2) && !FamilySet::EMPTY.contains(2));
    }

    #[test]
    fn classic_is_one_family() {
        let fams = families(SketchKind::Classic, 16, 1, 0.8).unwrap();
        assert_eq!(fams.len(), 1);
        assert!(fams[0].takes(0) && fams[0].takes(1 << 40));
    }

    #[test]
    fn kinds_parse_and_print_by_name() {
        crate::error::assert_named(&SketchKind::ALL);
        assert_eq!(
            SketchKind::ALL.map(|k| k.to_string()),
            ["oph", "classic", "simhash"]
        );
        assert_eq!(
            "fast".parse::<SketchKind>(),
            Err(Error::InvalidSketch("fast".into()))
        );
        assert_eq!(SketchKind::default(), SketchKind::OnePermutation);
    }
}
