//! The validated settings of a run: what is shingled, how it is sketched and banded, how
//! candidates are verified and which document a cluster keeps.

use crate::candidates::bands::BandPlan;
use crate::cluster::clusters::KeepPolicy;
use crate::error::{Error, Result};
use crate::run::measure::Measure;
use crate::sketch::family::SketchKind;
use crate::text::normalize::Normalization;
use crate::text::shingle::{ShingleKind, Shingler};
use crate::verify::jaccard::Verification;

/// The smallest similarity threshold accepted. Below it the size windows (`n / t`), the
/// band plan and the triage margin lose precision, so a smaller threshold found fewer
/// pairs than a larger one; it is refused rather than mis-computed. At 0.01 the LSH
/// pipeline with exact verification and the exact join agree with brute force (tested).
pub const MIN_THRESHOLD: f64 = 0.01;

/// The defaults of a [`Config`], in one place: every front end (the command, Python,
/// Spark, the server) takes its defaults from here rather than restating them.
pub mod defaults {
    /// The similarity threshold t.
    pub const THRESHOLD: f64 = 0.8;
    /// The signature length K.
    pub const NUM_PERM: usize = 128;
    /// The seed of the sketches.
    pub const SEED: u64 = 1;
    /// The shingle kind and size, as [`ShingleKind`](crate::ShingleKind) parses it.
    pub const SHINGLE: &str = "char:5";
    /// The shingle kind and size.
    pub const SHINGLE_KIND: crate::ShingleKind = crate::ShingleKind::Char(5);
    /// The largest Hamming distance of two SimHash fingerprints that makes them candidates.
    pub const HAMMING: u32 = crate::candidates::simhash::DEFAULT_HAMMING;
    /// The cap on shingle positions compared exactly per document.
    pub const MAX_SHINGLES: usize = crate::text::shingle::DEFAULT_MAX_SHINGLES;
}

/// Why containment gives no clusters ([`Error::NotForContainment`]).
pub(crate) const NO_CONTAINMENT_CLUSTERS: &str = "it finds pairs, not clusters: a fragment \
     contained in two unrelated documents does not make them one cluster";

/// A validated configuration. Build one with [`Config::builder`].
#[derive(Clone, Debug)]
pub struct Config {
    shingler: Shingler,
    num_perm: usize,
    seed: u64,
    threshold: f64,
    plan: BandPlan,
    verification: Verification,
    keep: KeepPolicy,
    sketch: SketchKind,
    neighbours: bool,
    allow_truncated: bool,
    hamming: u32,
    measure: Measure,
    sketch_input: crate::text::ids::SketchInput,
}

impl Config {
    /// A builder with the defaults: `char:5`, NFKC-normalized, K = 128, seed 1, t = 0.8, exact
    /// verification, keep the first, one-permutation sketch.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder::default()
    }

    /// The shingler.
    pub fn shingler(&self) -> &Shingler {
        &self.shingler
    }
    /// Signature length K.
    pub fn num_perm(&self) -> usize {
        self.num_perm
    }
    /// Seed of the sketch's permutations.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Similarity threshold t, in the configured measure.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
    /// The threshold the engines test pairs against, in the score they compute
    /// ([`Measure::tested`]): what every engine, the band plan and the one-document
    /// checks read, so that a measure converts its threshold in one place.
    pub fn tested_threshold(&self) -> f64 {
        self.measure.tested(self.threshold)
    }
    /// The banding plan.
    pub fn plan(&self) -> BandPlan {
        self.plan
    }
    /// How candidates are verified.
    pub fn verification(&self) -> Verification {
        self.verification
    }
    /// Which document a cluster keeps.
    pub fn keep(&self) -> KeepPolicy {
        self.keep
    }
    /// Whether pairs and clusters also look beyond the buckets (see
    /// [`ConfigBuilder::neighbours`]).
    pub fn neighbours(&self) -> bool {
        self.neighbours
    }

    /// Whether a pair reported by estimate because a document was truncated may remove a
    /// document from a cluster.
    pub fn allow_truncated(&self) -> bool {
        self.allow_truncated
    }

    /// The sketch family kind.
    pub fn sketch(&self) -> SketchKind {
        self.sketch
    }

    /// How likely a pair is to become a candidate, by its Jaccard: the band plan's
    /// S-curve, or SimHash's.
    pub fn candidate_curve(&self) -> crate::candidates::bands::CandidateCurve {
        if self.measure.from_smaller() {
            return crate::candidates::bands::CandidateCurve::Containment;
        }
        match self.sketch {
            SketchKind::SimHash => crate::candidates::bands::CandidateCurve::SimHash(self.hamming),
            _ => self.plan.into(),
        }
    }

    /// The largest Hamming distance of two SimHash fingerprints that makes them
    /// candidates (used with [`SketchKind::SimHash`]).
    pub fn hamming(&self) -> u32 {
        self.hamming
    }

    /// What the threshold is a threshold of.
    pub fn measure(&self) -> Measure {
        self.measure
    }

    /// What sketches hash of each shingle of a single document (a corpus always sketches
    /// ids).
    pub fn sketch_input(&self) -> crate::text::ids::SketchInput {
        self.sketch_input
    }
}

/// Builds a [`Config`]; every setting has a sane default.
#[derive(Clone, Debug)]
pub struct ConfigBuilder {
    shingle: ShingleKind,
    normalization: Normalization,
    num_perm: usize,
    seed: u64,
    threshold: f64,
    bands: Option<usize>,
    rows: Option<usize>,
    verification: Verification,
    keep: KeepPolicy,
    sketch: SketchKind,
    max_shingles: usize,
    neighbours: bool,
    allow_truncated: bool,
    multiset: bool,
    /// `None` until given: a Hamming distance given without SimHash is refused, the
    /// default is not.
    hamming: Option<u32>,
    measure: Measure,
    sketch_input: crate::text::ids::SketchInput,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        ConfigBuilder {
            shingle: defaults::SHINGLE_KIND,
            normalization: Normalization::default(),
            num_perm: defaults::NUM_PERM,
            seed: defaults::SEED,
            threshold: defaults::THRESHOLD,
            bands: None,
            rows: None,
            verification: Verification::Exact,
            keep: KeepPolicy::First,
            sketch: SketchKind::OnePermutation,
            max_shingles: defaults::MAX_SHINGLES,
            neighbours: true,
            allow_truncated: false,
            multiset: false,
            hamming: None,
            measure: Measure::Jaccard,
            sketch_input: crate::text::ids::SketchInput::Ids,
        }
    }
}

impl ConfigBuilder {
    /// Shingle kind and size (default `char:5`).
    pub fn shingle(mut self, kind: ShingleKind) -> Self {
        self.shingle = kind;
        self
    }
    /// How text is normalized before shingling (default [`Normalization::Nfkc`]: Unicode
    /// NFKC, lowercase, whitespace collapsed).
    pub fn normalization(mut self, level: Normalization) -> Self {
        self.normalization = level;
        self
    }
    /// Count repeated shingles (default off): similarities are then the weighted Jaccard
    /// of the shingles' counts, see [`Shingler::multiset`].
    pub fn multiset(mut self, on: bool) -> Self {
        self.multiset = on;
        self
    }
    /// Normalization at the default level (`true`) or none (`false`); shorthand for
    /// [`ConfigBuilder::normalization`].
    pub fn normalize(self, on: bool) -> Self {
        self.normalization(Normalization::default_or_none(on))
    }
    /// Signature length K (default 128).
    pub fn num_perm(mut self, k: usize) -> Self {
        self.num_perm = k;
        self
    }
    /// Seed of the sketch (default 1).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// Similarity threshold in [`MIN_THRESHOLD`]..=1 (default 0.8).
    pub fn threshold(mut self, t: f64) -> Self {
        self.threshold = t;
        self
    }
    /// Explicit bands (give rows too); default: chosen from the threshold.
    pub fn bands(mut self, bands: Option<usize>) -> Self {
        self.bands = bands;
        self
    }
    /// Explicit rows per band (give bands too).
    pub fn rows(mut self, rows: Option<usize>) -> Self {
        self.rows = rows;
        self
    }
    /// Verification of candidates (default exact).
    pub fn verification(mut self, v: Verification) -> Self {
        self.verification = v;
        self
    }
    /// Keep policy of clusters (default first).
    pub fn keep(mut self, keep: KeepPolicy) -> Self {
        self.keep = keep;
        self
    }
    /// Cap on shingle positions compared exactly per document, in
    /// 1..=[`MAX_MAX_SHINGLES`](crate::text::shingle::MAX_MAX_SHINGLES) (default
    /// [`DEFAULT_MAX_SHINGLES`](crate::text::shingle::DEFAULT_MAX_SHINGLES)).
    pub fn max_shingles(mut self, n: usize) -> Self {
        self.max_shingles = n;
        self
    }
    /// Sketch (default: one-permutation hashing, classic for small documents).
    pub fn sketch(mut self, sketch: SketchKind) -> Self {
        self.sketch = sketch;
        self
    }

    /// With [`SketchKind::SimHash`], the largest Hamming distance of two fingerprints
    /// that makes them candidates, in 0..=[`MAX_HAMMING`](crate::candidates::MAX_HAMMING) (default
    /// [`DEFAULT_HAMMING`](crate::candidates::DEFAULT_HAMMING)). Given with another
    /// sketch, it is refused ([`Error::HammingWithoutSimHash`]).
    pub fn hamming(mut self, k: u32) -> Self {
        self.hamming = Some(k);
        self
    }

    /// What the threshold is a threshold of (default Jaccard): with
    /// [`Measure::Containment`](crate::Measure::Containment),
    /// [`Pipeline::containment_pairs`](crate::Pipeline::containment_pairs) finds the
    /// documents contained at the threshold in larger ones.
    pub fn measure(mut self, measure: Measure) -> Self {
        self.measure = measure;
        self
    }

    /// Whether pairs mode also looks beyond the buckets (default on): every pair with one
    /// of the largest groups of identical documents, found exactly, and two documents that
    /// are both verified near-duplicates of a third. Every pair it adds is verified like
    /// any candidate; it lifts recall above the S-curve where near-duplicates cluster.
    pub fn neighbours(mut self, on: bool) -> Self {
        self.neighbours = on;
        self
    }

    /// Whether clusters may remove a document on a pair with a truncated document (default
    /// off). Such a pair has no exact Jaccard: it is reported with the estimate of the whole
    /// documents' sketches and `truncated: true`, and by default keeps both documents.
    pub fn allow_truncated(mut self, on: bool) -> Self {
        self.allow_truncated = on;
        self
    }

    /// What the sketches of single documents hash of each shingle (default
    /// [`SketchInput::Ids`](crate::text::SketchInput::Ids), as a corpus does). An index keeps
    /// [`SketchInput::Hashes`](crate::text::SketchInput::Hashes), the band keys its on-disk format
    /// was defined with; a corpus run with it would not match its documents' own sketches.
    pub fn sketch_input(mut self, input: crate::text::ids::SketchInput) -> Self {
        self.sketch_input = input;
        self
    }

    /// Validates the settings.
    pub fn build(self) -> Result<Config> {
        // Settings of one sketch kind given with the other, first: a front end refuses
        // them before anything else it checks.
        if self.sketch == SketchKind::SimHash {
            if self.num_perm != defaults::NUM_PERM {
                return Err(Error::NumPermWithSimHash(self.num_perm));
            }
            if !self.neighbours {
                return Err(Error::NoNeighboursWithSimHash);
            }
        } else if self.hamming.is_some() {
            return Err(Error::HammingWithoutSimHash);
        }
        let hamming = self.hamming.unwrap_or(defaults::HAMMING);
        if !(MIN_THRESHOLD..=1.0).contains(&self.threshold) {
            return Err(Error::InvalidThreshold(self.threshold));
        }
        let k = self.shingle.size();
        if !(1..=crate::text::shingle::MAX_SHINGLE_SIZE).contains(&k) {
            return Err(Error::InvalidShingleSize(k));
        }
        if !(1..=crate::text::shingle::MAX_MAX_SHINGLES).contains(&self.max_shingles) {
            return Err(Error::InvalidMaxShingles(self.max_shingles));
        }
        if self.num_perm == 0 || self.num_perm > crate::sketch::classic::MAX_NUM_PERM {
            return Err(Error::InvalidNumPerm(self.num_perm));
        }
        if hamming > crate::candidates::simhash::MAX_HAMMING {
            return Err(Error::InvalidHamming(hamming));
        }
        if self.sketch == SketchKind::SimHash {
            if self.measure.from_smaller() {
                return Err(Error::NotForSimHash(self.measure.name()));
            }
            if self.bands.is_some() || self.rows.is_some() {
                return Err(Error::NotForSimHash("bands and rows"));
            }
            if matches!(
                self.verification,
                Verification::Estimate | Verification::Triage
            ) {
                return Err(Error::NotForSimHash(match self.verification {
                    Verification::Estimate => "--verify estimate",
                    _ => "--verify triage",
                }));
            }
        }
        if !self.measure.has_band_plan() && (self.bands.is_some() || self.rows.is_some()) {
            return Err(Error::NotForContainment(
                "bands and rows do not apply: the rows per band are chosen for each size \
                 partition",
            ));
        }
        if self.measure.from_smaller() {
            if !self.neighbours {
                return Err(Error::NotForContainment(
                    "the checks beyond the buckets cannot be turned off: it has no steps beyond the buckets",
                ));
            }
            if self.verification != Verification::Exact {
                return Err(Error::NotForContainment(
                    "it verifies every candidate exactly: leave verification exact",
                ));
            }
        }
        let plan = match (self.bands, self.rows) {
            (Some(b), Some(r)) => BandPlan::new(b, r, self.num_perm)?,
            (None, None) => {
                BandPlan::for_threshold(self.measure.tested(self.threshold), self.num_perm)?
            }
            _ => return Err(Error::IncompleteBands),
        };
        Ok(Config {
            shingler: Shingler::new(self.shingle)
                .normalization(self.normalization)
                .max_shingles(self.max_shingles)
                .multiset(self.multiset),
            num_perm: self.num_perm,
            seed: self.seed,
            threshold: self.threshold,
            plan,
            verification: self.verification,
            keep: self.keep,
            sketch: self.sketch,
            neighbours: self.neighbours,
            allow_truncated: self.allow_truncated,
            hamming,
            measure: self.measure,
            sketch_input: self.sketch_input,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_refuses_what_it_does_not_take() {
        let contained = || Config::builder().measure(Measure::Containment);
        assert!(contained().build().is_ok());
        for refused in [
            contained().bands(Some(4)).rows(Some(8)),
            contained().rows(Some(8)),
            contained().neighbours(false),
            contained().verification(Verification::Estimate),
            contained().verification(Verification::None),
        ] {
            assert!(matches!(refused.build(), Err(Error::NotForContainment(_))));
        }
        // The same settings are Jaccard's to take.
        assert!(Config::builder()
            .neighbours(false)
            .verification(Verification::None)
            .build()
            .is_ok());
    }

    #[test]
    fn simhash_refuses_minhash_settings_and_minhash_the_hamming_distance() {
        let simhash = || Config::builder().sketch(SketchKind::SimHash);
        assert_eq!(simhash().build().unwrap().hamming(), defaults::HAMMING);
        assert_eq!(simhash().hamming(5).build().unwrap().hamming(), 5);
        // The default signature length, or the checks left on, given or not, change nothing.
        assert!(simhash()
            .num_perm(defaults::NUM_PERM)
            .neighbours(true)
            .build()
            .is_ok());
        assert_eq!(
            simhash().num_perm(64).build().unwrap_err(),
            Error::NumPermWithSimHash(64)
        );
        assert_eq!(
            simhash().neighbours(false).build().unwrap_err(),
            Error::NoNeighboursWithSimHash
        );
        // A distance given without SimHash is refused, even the default one; not given,
        // a MinHash configuration keeps the default.
        for sketch in [SketchKind::OnePermutation, SketchKind::Classic] {
            let minhash = || Config::builder().sketch(sketch);
            assert_eq!(minhash().build().unwrap().hamming(), defaults::HAMMING);
            assert_eq!(
                minhash().hamming(defaults::HAMMING).build().unwrap_err(),
                Error::HammingWithoutSimHash
            );
            assert!(minhash().num_perm(64).neighbours(false).build().is_ok());
        }
        // Refused before the settings' own ranges (the threshold, the distance's), as the
        // command has always refused them; with SimHash, the signature length first.
        assert_eq!(
            Config::builder()
                .threshold(5.0)
                .hamming(3)
                .build()
                .unwrap_err(),
            Error::HammingWithoutSimHash
        );
        assert_eq!(
            simhash()
                .num_perm(64)
                .neighbours(false)
                .hamming(99)
                .build()
                .unwrap_err(),
            Error::NumPermWithSimHash(64)
        );
        assert_eq!(
            simhash().hamming(99).build().unwrap_err(),
            Error::InvalidHamming(99)
        );
    }

    #[test]
    fn the_default_shingle_parses_to_the_default_kind() {
        assert_eq!(
            defaults::SHINGLE.parse::<ShingleKind>().unwrap(),
            defaults::SHINGLE_KIND
        );
    }
}
