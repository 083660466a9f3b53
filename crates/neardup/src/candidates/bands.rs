//! Signatures → band keys: the b × r banding of locality-sensitive hashing.
//!
//! A signature of K positions is cut into `bands` bands of `rows` positions; two documents
//! become candidates when all rows of at least one band agree. For Jaccard similarity s,
//! P(candidate | s) = 1 − (1 − s^r)^b: the S-curve.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::{Error, Result};

/// The fixed seed of band-key hashes (stable across machines and versions).
pub const BAND_SEED: u64 = 0x6261_6e64_6b65_7931;

/// The recall at the threshold that [`BandPlan::for_threshold`] aims for.
pub const TARGET_RECALL: f64 = 0.9;

/// How a signature is cut into bands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandPlan {
    bands: usize,
    rows: usize,
}

impl BandPlan {
    /// An explicit plan of `bands` × `rows`, which must fit a signature of `num_perm`.
    pub fn new(bands: usize, rows: usize, num_perm: usize) -> Result<Self> {
        if bands == 0 || rows == 0 || bands.saturating_mul(rows) > num_perm {
            return Err(Error::InvalidBands {
                bands,
                rows,
                num_perm,
            });
        }
        Ok(BandPlan { bands, rows })
    }

    /// The plan for a similarity threshold: the most rows per band (fewest false candidates)
    /// that still finds at least 90% of the pairs sitting exactly at the
    /// threshold, with as many bands as fit. Pairs above the threshold are found more often.
    ///
    /// Exact verification removes the false candidates a generous plan lets in, so the
    /// plan leans to recall: at K = 128 and t = 0.8 it is 16 × 8 (0.947 at s = 0.8).
    ///
    /// ```
    /// use neardup::candidates::BandPlan;
    /// let plan = BandPlan::for_threshold(0.8, 128).unwrap();
    /// assert_eq!((plan.bands(), plan.rows()), (16, 8));
    /// assert!(plan.probability(0.8) > 0.94);
    /// ```
    pub fn for_threshold(threshold: f64, num_perm: usize) -> Result<Self> {
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(Error::InvalidThreshold(threshold));
        }
        if num_perm == 0 {
            return Err(Error::InvalidNumPerm(num_perm));
        }
        let mut best = BandPlan {
            bands: num_perm,
            rows: 1,
        };
        for rows in 1..=num_perm {
            let plan = BandPlan {
                bands: num_perm / rows,
                rows,
            };
            if plan.probability(threshold) >= TARGET_RECALL {
                best = plan;
            } else {
                // P(t) falls as rows grow (bands = K / rows shrinks too): stop at the first miss.
                break;
            }
        }
        Ok(best)
    }

    /// Number of bands b.
    pub fn bands(&self) -> usize {
        self.bands
    }

    /// Rows per band r.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// P(candidate | s) = 1 − (1 − s^r)^b ([`s_curve`]).
    pub fn probability(&self, similarity: f64) -> f64 {
        s_curve(self.bands, self.rows, similarity)
    }

    /// Writes one 64-bit key per band of `signature` into `out` (`out.len() == bands`).
    pub fn band_keys_into(&self, signature: &[u64], out: &mut [u64]) {
        assert!(
            signature.len() >= self.bands * self.rows,
            "signature too short"
        );
        assert_eq!(out.len(), self.bands, "band key buffer length");
        // On the stack for the usual band widths: this runs once per document and family.
        let mut stack = [0u8; 256];
        let mut heap = Vec::new();
        let bytes = if self.rows * 8 <= stack.len() {
            &mut stack[..self.rows * 8]
        } else {
            heap.resize(self.rows * 8, 0);
            &mut heap[..]
        };
        for (band, key) in out.iter_mut().enumerate() {
            let rows = &signature[band * self.rows..(band + 1) * self.rows];
            for (chunk, v) in bytes.chunks_exact_mut(8).zip(rows) {
                chunk.copy_from_slice(&v.to_le_bytes());
            }
            *key = xxh3_64_with_seed(bytes, BAND_SEED);
        }
    }
}

/// P(candidate | s) = 1 − (1 − sʳ)ᵇ for `bands` × `rows`: the probability that two
/// documents of Jaccard similarity `s` (clamped to [0, 1]) share at least one band key.
pub fn s_curve(bands: usize, rows: usize, s: f64) -> f64 {
    let s = s.clamp(0.0, 1.0);
    // Past i32::MAX the powers are 0 or 1 either way: saturate rather than wrap.
    let power = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    let miss = (1.0 - s.powi(power(rows))).powi(power(bands));
    1.0 - miss
}

/// How likely a pair of a given Jaccard is to become a candidate: by LSH's bands, or by
/// SimHash fingerprints within a Hamming distance (see
/// [`simhash_probability`](crate::candidates::simhash_probability) for the assumption it rests on).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CandidateCurve {
    /// LSH with this band plan.
    Bands(BandPlan),
    /// SimHash with this Hamming distance.
    SimHash(u32),
    /// A containment search: whether a pair is found depends on both documents' sizes,
    /// not on one similarity, so there is no curve (NaN).
    Containment,
}

impl CandidateCurve {
    /// P(candidate | Jaccard s).
    pub fn probability(&self, s: f64) -> f64 {
        match *self {
            CandidateCurve::Bands(plan) => plan.probability(s),
            CandidateCurve::SimHash(k) => crate::candidates::simhash::simhash_probability(s, k),
            CandidateCurve::Containment => f64::NAN,
        }
    }
}

impl From<BandPlan> for CandidateCurve {
    fn from(plan: BandPlan) -> Self {
        CandidateCurve::Bands(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_for_common_thresholds() {
        let p = BandPlan::for_threshold(0.8, 128).unwrap();
        assert_eq!((p.bands, p.rows), (16, 8));
        for &(t, k) in &[
            (0.5, 128),
            (0.7, 128),
            (0.9, 128),
            (0.8, 256),
            (0.95, 64),
            (1.0, 128),
        ] {
            let p = BandPlan::for_threshold(t, k).unwrap();
            assert!(p.bands * p.rows <= k);
            assert!(p.probability(t) >= TARGET_RECALL, "t={t} k={k} {p:?}");
            // One more row would fall below the target.
            let tighter = BandPlan {
                bands: k / (p.rows + 1),
                rows: p.rows + 1,
            };
            assert!(tighter.bands == 0 || tighter.probability(t) < TARGET_RECALL || p.rows == k);
        }
    }

    #[test]
    fn rejects_bad_plans() {
        assert!(BandPlan::new(0, 4, 128).is_err());
        assert!(BandPlan::new(17, 8, 128).is_err());
        assert!(BandPlan::new(16, 8, 128).is_ok());
        assert!(BandPlan::for_threshold(0.0, 128).is_err());
        assert!(BandPlan::for_threshold(1.5, 128).is_err());
        assert!(BandPlan::for_threshold(f64::NAN, 128).is_err());
    }

    #[test]
    fn s_curve_values() {
        let p = BandPlan::new(16, 8, 128).unwrap();
        assert!((p.probability(0.8) - 0.9470).abs() < 1e-3);
        assert_eq!(p.probability(0.0), 0.0);
        assert_eq!(p.probability(1.0), 1.0);
    }

    #[test]
    fn band_keys_depend_only_on_their_rows() {
        let p = BandPlan::new(4, 2, 8).unwrap();
        let a = [1, 2, 3, 4, 5, 6, 7, 8];
        let b = [1, 2, 0, 4, 5, 6, 7, 9];
        let (mut ka, mut kb) = ([0; 4], [0; 4]);
        p.band_keys_into(&a, &mut ka);
        p.band_keys_into(&b, &mut kb);
        assert_eq!(ka[0], kb[0]);
        assert_ne!(ka[1], kb[1]);
        assert_eq!(ka[2], kb[2]);
        assert_ne!(ka[3], kb[3]);
    }
}
