//! Which sketch each document gets, by the size of its shingle set.
//!
//! One-permutation hashing is O(n + K) but, below about 64 shingles, its band collisions
//! fall measurably short of the S-curve (ARCHITECTURE.md has the figures); the classic
//! sketch is exact there and cheap, since n is small. Documents are split by size into
//! *families*, each sketched and banded on its own. Two documents can only be compared
//! within a family they share, so the ranges overlap: a pair with Jaccard ≥ t has sizes
//! within a factor t, hence a document up to ⌈64 / t⌉ shingles gets the classic sketch
//! too, and any pair that straddles 64 still shares one family.

use crate::error::{by_name, Error, Result};
use crate::oph::OnePermutation;
use crate::sketch::{ClassicMinHash, Sketch};

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
