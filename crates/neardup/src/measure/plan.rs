//! What a band plan finds and costs, before running it: the S-curve, its integrals, the
//! choice of b × r, and estimates for a whole input from a sample of it.
//!
//! [`s_curve`] is the one S-curve formula of the crate: [`BandPlan::probability`], the
//! tables of `neardup plan` and the charts of the report all call it. A [`Plan`] is any
//! b × r shape (unchecked, for what-if questions such as [`integral_optimal`] and
//! [`alternatives`]); a [`BandPlan`] is the validated one a pipeline runs with.
//!
//! ```
//! use neardup::measure::plan::{alternatives, integral_optimal, Plan};
//!
//! let chosen = Plan::new(16, 8);
//! assert!((chosen.probability(0.8) - 0.947).abs() < 5e-4);
//! // Pairs spread evenly over [0.8, 1] are found more often than those at 0.8.
//! assert!(chosen.recall_above(0.8) > chosen.recall_at(0.8));
//! // datasketch's integral criterion picks 9 × 13, which finds 40 % of pairs at 0.8.
//! assert_eq!(integral_optimal(0.8, 128, 0.5, 0.5), Plan::new(9, 13));
//! let names: Vec<String> = alternatives(chosen, 0.8, 128).into_iter().map(|p| p.name).collect();
//! assert_eq!(names, ["chosen", "r − 1", "r + 1", "integral"]);
//! ```

use crate::candidates::bands::BandPlan;
use crate::run::config::Config;
use crate::verify::jaccard::Verification;
use crate::SketchKind;

pub use crate::candidates::bands::s_curve;

/// ∫ f over [lo, hi] by composite Simpson's rule with 2,000 intervals (exact for
/// polynomials up to degree 3; the S-curve is smooth).
fn integrate(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    const N: usize = 2_000;
    let h = (hi - lo) / N as f64;
    let mut sum = f(lo) + f(hi);
    for i in 1..N {
        sum += f(lo + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    sum * h / 3.0
}

/// A band plan: `bands` bands of `rows` rows. Unlike [`BandPlan`] it is not checked
/// against a signature length: it is for computing what a plan would do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    /// Number of bands b.
    pub bands: usize,
    /// Rows per band r.
    pub rows: usize,
}

impl From<BandPlan> for Plan {
    fn from(p: BandPlan) -> Plan {
        Plan::new(p.bands(), p.rows())
    }
}

impl Plan {
    /// `bands` × `rows`.
    pub fn new(bands: usize, rows: usize) -> Plan {
        Plan { bands, rows }
    }

    /// P(candidate | s) = 1 − (1 − sʳ)ᵇ ([`s_curve`]).
    pub fn probability(&self, s: f64) -> f64 {
        s_curve(self.bands, self.rows, s)
    }

    /// Expected recall of pairs at similarity exactly `t`: P(t).
    pub fn recall_at(&self, t: f64) -> f64 {
        self.probability(t)
    }

    /// The mean of P(s) over s uniform in [lo, hi]: the expected recall of pairs spread
    /// evenly over that range. For lo ≥ hi it is P(lo).
    pub fn mean_probability(&self, lo: f64, hi: f64) -> f64 {
        if hi - lo <= 0.0 {
            return self.probability(lo);
        }
        integrate(|s| self.probability(s), lo, hi) / (hi - lo)
    }

    /// Expected recall of pairs whose similarities are spread uniformly over [t, 1]:
    /// (1 / (1 − t)) ∫ₜ¹ P(s) ds (P(1) = 1 for t = 1).
    pub fn recall_above(&self, t: f64) -> f64 {
        self.mean_probability(t.clamp(0.0, 1.0), 1.0)
    }

    /// The false-positive area ∫₀ᵗ P(s) ds: how much of the curve lies below the threshold.
    pub fn false_positive_area(&self, t: f64) -> f64 {
        integrate(|s| self.probability(s), 0.0, t.clamp(0.0, 1.0))
    }

    /// The false-negative area ∫ₜ¹ (1 − P(s)) ds: how much recall is missing above it.
    pub fn false_negative_area(&self, t: f64) -> f64 {
        integrate(|s| 1.0 - self.probability(s), t.clamp(0.0, 1.0), 1.0)
    }

    /// "16 × 8".
    pub fn label(&self) -> String {
        format!("{} × {}", self.bands, self.rows)
    }
}

/// The plan with b·r ≤ `num_perm` minimizing `fp_weight`·FP + `fn_weight`·FN (areas as in
/// [`Plan::false_positive_area`] and [`Plan::false_negative_area`]), searched like
/// datasketch's `_optimal_param`: b from 1 up, r from 1 up, the first minimum kept.
/// At t = 0.8, K = 128 and equal weights it is 9 × 13, which finds only about 40 % of the
/// pairs sitting at 0.8: minimizing areas treats a missed pair and a false candidate alike,
/// although verification removes false candidates and nothing brings a missed pair back.
pub fn integral_optimal(t: f64, num_perm: usize, fp_weight: f64, fn_weight: f64) -> Plan {
    let mut best = Plan::new(1, 1);
    let mut least = f64::INFINITY;
    for bands in 1..=num_perm.max(1) {
        for rows in 1..=(num_perm / bands) {
            let p = Plan::new(bands, rows);
            let error = fp_weight * p.false_positive_area(t) + fn_weight * p.false_negative_area(t);
            if error < least {
                least = error;
                best = p;
            }
        }
    }
    best
}

/// A plan with a name for tables and legends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedPlan {
    /// "chosen", "r − 1", "r + 1", "integral", or several joined by " = ".
    pub name: String,
    /// The plan.
    pub plan: Plan,
}

/// The chosen plan and its alternatives within `num_perm` positions: one row fewer and one
/// more per band (as many bands as fit), and the integral-criterion plan (equal weights).
/// Plans that coincide are listed once, their names joined ("chosen = integral").
pub fn alternatives(chosen: Plan, t: f64, num_perm: usize) -> Vec<NamedPlan> {
    let mut all = vec![("chosen", chosen)];
    let fit =
        |rows: usize| (rows >= 1 && rows <= num_perm).then(|| Plan::new(num_perm / rows, rows));
    if let Some(p) = chosen.rows.checked_sub(1).and_then(fit) {
        all.push(("r − 1", p));
    }
    if let Some(p) = fit(chosen.rows + 1) {
        all.push(("r + 1", p));
    }
    all.push(("integral", integral_optimal(t, num_perm, 0.5, 0.5)));
    let mut out: Vec<NamedPlan> = Vec::new();
    for (name, plan) in all {
        match out.iter_mut().find(|n| n.plan == plan) {
            Some(n) => {
                n.name.push_str(" = ");
                n.name.push_str(name);
            }
            None => out.push(NamedPlan {
                name: name.to_string(),
                plan,
            }),
        }
    }
    out
}

/// What a sample of the input tells about the whole.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleStats {
    /// Documents in the whole input (N), counted or estimated from the input's size.
    pub documents: u64,
    /// Documents in the sample (n), drawn uniformly at random without replacement.
    pub sample_documents: u64,
    /// Shingle-set size of each sampled document.
    pub set_sizes: Vec<u64>,
    /// Bytes of text of the sampled documents, in all.
    pub text_bytes: u64,
    /// Bytes of raw records held for the output (dedup keeps them; else 0), in all.
    pub raw_bytes: u64,
    /// Candidate pairs among the sampled documents (distinct pairs sharing a band, and
    /// pairs of identical copies).
    pub collisions: u64,
    /// Exact Jaccard of every pair of sampled documents at or above the threshold (the
    /// exact join over the sample); values below the threshold are ignored.
    pub similar_pairs: Vec<f64>,
}

/// Throughputs of the stages, per second, with all threads (measured on the sample or
/// taken from a benchmark of the machine).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throughput {
    /// Bytes of text read and decoded.
    pub read_bytes: f64,
    /// Bytes of text normalized and shingled.
    pub shingle_bytes: f64,
    /// Shingle × permutation hash evaluations (a set of m shingles costs m·K).
    pub sketch_hashes: f64,
    /// (band key, document) records sorted and grouped.
    pub group_records: f64,
    /// Shingles merged by exact verification (a candidate costs |A| + |B|).
    pub verify_shingles: f64,
}

/// Bytes the sketch and group stages hold per document, band and sketch family, at most:
/// its 32-bit bucket key in the corpus (4) and the sorted (key, doc) record (8).
const BAND_BYTES: u64 = 12;

/// Memory the sketch and group stages need for `documents` under `config`, predicted before
/// sketching: documents × bands × families × 12 bytes (a bucket key in the corpus, the
/// sorted (key, doc) record), plus K × 4 bytes of signature per document
/// and family when verification uses estimates. Constant time; saturates, never overflows.
pub fn sketch_memory(documents: u64, config: &Config) -> u64 {
    let families: u64 = match config.sketch() {
        SketchKind::OnePermutation => 2,
        SketchKind::Classic => 1,
        SketchKind::SimHash => 0,
    };
    let signatures = if config.verification() == Verification::Exact {
        0
    } else {
        config.num_perm() as u64 * 4
    };
    let per_doc = (config.plan().bands() as u64)
        .saturating_mul(BAND_BYTES)
        .saturating_add(signatures);
    documents.saturating_mul(families).saturating_mul(per_doc)
}

/// Approximate bytes of one reported pair held in memory (two u32 and two optional f64).
pub const PAIR_BYTES: u64 = 40;

/// Estimated memory, bytes per component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Memory {
    /// N · K · 4 when verification uses estimates; 0 under exact verification, which
    /// keeps only each signature's band keys.
    pub signatures: u64,
    /// N · b · 4 (32-bit bucket keys).
    pub band_keys: u64,
    /// N · b · 8 ((key, doc) records, sorted one band at a time or all at once).
    pub sort_records: u64,
    /// Σ |set| · 4 (32-bit shingle ids).
    pub shingle_sets: u64,
    /// The documents' texts.
    pub texts: u64,
    /// Raw records kept for dedup.
    pub raw: u64,
    /// The pairs found between distinct shingle sets, [`PAIR_BYTES`] each (pairs of
    /// identical copies are expanded as they are written, never held).
    pub results: u64,
}

impl Memory {
    /// All components together.
    pub fn total(&self) -> u64 {
        self.signatures
            + self.band_keys
            + self.sort_records
            + self.shingle_sets
            + self.texts
            + self.raw
            + self.results
    }

    /// (name, bytes) in display order.
    pub fn parts(&self) -> [(&'static str, u64); 7] {
        [
            ("signatures", self.signatures),
            ("band keys", self.band_keys),
            ("sort records", self.sort_records),
            ("shingle sets", self.shingle_sets),
            ("texts", self.texts),
            ("raw records", self.raw),
            ("results", self.results),
        ]
    }
}

/// Estimated seconds per stage.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Time {
    /// Reading and decoding the input.
    pub read: f64,
    /// Normalizing and shingling.
    pub shingle: f64,
    /// Sketching and band keys.
    pub sketch: f64,
    /// Grouping band keys into buckets.
    pub group: f64,
    /// Exact verification of the candidates.
    pub verify: f64,
}

impl Time {
    /// All stages together.
    pub fn total(&self) -> f64 {
        self.read + self.shingle + self.sketch + self.group + self.verify
    }

    /// (stage, seconds) in pipeline order.
    pub fn parts(&self) -> [(&'static str, f64); 5] {
        [
            ("read", self.read),
            ("shingle", self.shingle),
            ("sketch", self.sketch),
            ("group", self.group),
            ("verify", self.verify),
        ]
    }
}

/// What a run of the whole input is expected to do and cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Pairs of the input per pair of the sample: N(N − 1) / (n(n − 1)) ≈ (N/n)².
    pub pair_scale: f64,
    /// Expected candidates (distinct pairs sharing a band) = collisions × pair_scale.
    pub candidates: f64,
    /// Expected pairs at or above the threshold = similar pairs in the sample × pair_scale.
    pub similar_pairs: f64,
    /// Expected similar pairs LSH finds: Σ P(s) over the sample's similar pairs × scale.
    pub found_pairs: f64,
    /// Expected share of the similar pairs that LSH misses, from the sample's pairs
    /// (mean of 1 − P(s)); None when the sample has no similar pair.
    pub missed_share: Option<f64>,
    /// The share missed if similar pairs were spread evenly over [t, 1].
    pub missed_share_uniform: f64,
    /// Collisions the sample had: the evidence of `candidates` (an estimate from k events
    /// has a relative error of about 1/√k at best).
    pub sample_collisions: u64,
    /// Similar pairs the sample had: the evidence of `similar_pairs`.
    pub sample_similar_pairs: usize,
    /// Memory per component.
    pub memory: Memory,
    /// Time per stage.
    pub time: Time,
}

/// Extrapolates a sample to the whole input for `plan` with signatures of `num_perm`,
/// kept in memory only if `keep_signatures` (verification by estimate).
/// Pairs scale with the number of pairs, N(N − 1) / (n(n − 1)), which is unbiased for a
/// uniform sample without replacement; per-document quantities scale with N / n.
pub fn estimate(
    sample: &SampleStats,
    plan: Plan,
    num_perm: usize,
    keep_signatures: bool,
    t: f64,
    throughput: &Throughput,
) -> Estimate {
    let big_n = sample.documents as f64;
    let n = sample.sample_documents as f64;
    let pair_scale = if n >= 2.0 {
        big_n * (big_n - 1.0).max(0.0) / (n * (n - 1.0))
    } else {
        0.0
    };
    let doc_scale = if n > 0.0 { big_n / n } else { 0.0 };
    let similar: Vec<f64> = sample
        .similar_pairs
        .iter()
        .copied()
        .filter(|&s| s >= t)
        .collect();
    let found_in_sample: f64 = similar.iter().map(|&s| plan.probability(s)).sum();
    let missed_share = (!similar.is_empty()).then(|| 1.0 - found_in_sample / similar.len() as f64);
    let candidates = sample.collisions as f64 * pair_scale;
    let similar_pairs = similar.len() as f64 * pair_scale;
    let found_pairs = found_in_sample * pair_scale;
    let found_distinct: f64 = similar
        .iter()
        .filter(|&&s| s < 1.0)
        .map(|&s| plan.probability(s))
        .sum::<f64>()
        * pair_scale;

    let set_total: u64 = sample.set_sizes.iter().sum();
    let mean_set = if sample.set_sizes.is_empty() {
        0.0
    } else {
        set_total as f64 / sample.set_sizes.len() as f64
    };
    let texts = sample.text_bytes as f64 * doc_scale;
    let shingles = mean_set * big_n;
    let records = big_n * plan.bands as f64;
    let memory = Memory {
        signatures: if keep_signatures {
            (big_n * num_perm as f64 * 4.0) as u64
        } else {
            0
        },
        band_keys: (records * 4.0) as u64,
        sort_records: (records * 8.0) as u64,
        shingle_sets: (shingles * 4.0) as u64,
        texts: texts as u64,
        raw: (sample.raw_bytes as f64 * doc_scale) as u64,
        results: (found_distinct * PAIR_BYTES as f64) as u64,
    };
    let per = |work: f64, rate: f64| if rate > 0.0 { work / rate } else { 0.0 };
    let time = Time {
        read: per(texts, throughput.read_bytes),
        shingle: per(texts, throughput.shingle_bytes),
        sketch: per(shingles * num_perm as f64, throughput.sketch_hashes),
        group: per(records, throughput.group_records),
        verify: per(candidates * 2.0 * mean_set, throughput.verify_shingles),
    };
    Estimate {
        pair_scale,
        candidates,
        similar_pairs,
        found_pairs,
        missed_share,
        missed_share_uniform: 1.0 - plan.recall_above(t),
        sample_collisions: sample.collisions,
        sample_similar_pairs: similar.len(),
        memory,
        time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn s_curve_values() {
        assert_eq!(s_curve(16, 8, 0.0), 0.0);
        assert_eq!(s_curve(16, 8, 1.0), 1.0);
        // 1 − (1 − 0.8⁸)¹⁶ = 1 − (1 − 0.16777216)¹⁶ = 0.94700…
        assert!(close(s_curve(16, 8, 0.8), 0.947, 5e-4));
        // Clamped outside [0, 1].
        assert_eq!(s_curve(16, 8, -0.5), 0.0);
        assert_eq!(s_curve(16, 8, 1.5), 1.0);
        // The validated plan gives the very same values.
        let p = BandPlan::new(16, 8, 128).unwrap();
        assert_eq!(p.probability(0.73), s_curve(16, 8, 0.73));
        assert_eq!(Plan::from(p), Plan::new(16, 8));
        // Sizes past i32 saturate instead of wrapping to negative powers.
        assert_eq!(s_curve(1, usize::MAX, 0.5), 0.0);
        assert_eq!(s_curve(usize::MAX, 1, 0.5), 1.0);
        assert_eq!(s_curve(usize::MAX, usize::MAX, 1.0), 1.0);
    }

    #[test]
    fn integrals() {
        assert!(close(integrate(|x| x * x, 0.0, 1.0), 1.0 / 3.0, 1e-12));
        // b = r = 1: P(s) = s, mean over [0.5, 1] = 0.75.
        assert!(close(
            Plan::new(1, 1).mean_probability(0.5, 1.0),
            0.75,
            1e-12
        ));
        let p = Plan::new(16, 8);
        assert_eq!(p.mean_probability(0.8, 0.8), p.probability(0.8));
    }

    #[test]
    fn areas_of_a_linear_curve() {
        // b = r = 1: P(s) = s. FP = ∫₀ᵗ s ds = t²/2; FN = ∫ₜ¹ (1 − s) ds = (1 − t)²/2;
        // recall over [t, 1] = (1 − t²)/2 / (1 − t) = (1 + t)/2.
        let p = Plan::new(1, 1);
        assert!(close(p.false_positive_area(0.8), 0.32, 1e-12));
        assert!(close(p.false_negative_area(0.8), 0.02, 1e-12));
        assert!(close(p.recall_above(0.8), 0.9, 1e-12));
        assert_eq!(p.recall_at(0.8), 0.8);
        assert_eq!(p.recall_above(1.0), 1.0);
        assert_eq!(p.label(), "1 × 1");
    }

    #[test]
    fn recall_of_the_default_plan() {
        let p = Plan::new(16, 8);
        assert!(close(p.recall_at(0.8), 0.947, 5e-4));
        assert!(p.recall_above(0.8) > p.recall_at(0.8));
        assert!(p.recall_above(0.8) < 1.0);
    }

    #[test]
    fn integral_criterion_gives_nine_by_thirteen_at_point_eight() {
        let p = integral_optimal(0.8, 128, 0.5, 0.5);
        assert_eq!(p, Plan::new(9, 13));
        // Which finds only about 40 % of the pairs sitting at the threshold.
        assert!(close(p.recall_at(0.8), 0.40, 0.03), "{}", p.recall_at(0.8));
        // Weighting misses heavily moves the optimum to more bands of fewer rows.
        let q = integral_optimal(0.8, 128, 0.1, 0.9);
        assert!(q.recall_at(0.8) > p.recall_at(0.8));
        assert!(q.bands * q.rows <= 128);
    }

    #[test]
    fn alternatives_around_the_chosen_plan() {
        let alts = alternatives(Plan::new(16, 8), 0.8, 128);
        let got: Vec<(&str, usize, usize)> = alts
            .iter()
            .map(|a| (a.name.as_str(), a.plan.bands, a.plan.rows))
            .collect();
        assert_eq!(
            got,
            [
                ("chosen", 16, 8),
                ("r − 1", 18, 7),
                ("r + 1", 14, 9),
                ("integral", 9, 13)
            ]
        );
        // Coinciding plans are merged; r − 1 does not exist for r = 1.
        let alts = alternatives(Plan::new(9, 13), 0.8, 128);
        assert_eq!(alts[0].name, "chosen = integral");
        let alts = alternatives(Plan::new(4, 1), 0.5, 4);
        assert!(alts.iter().all(|a| a.plan.rows >= 1));
        assert!(!alts.iter().any(|a| a.name.contains("r − 1")));
    }

    #[test]
    fn memory_of_the_sketch_stages() {
        // One-permutation default: two families, 16 bands × 12 bytes, no signatures.
        let config = Config::builder().threshold(0.8).build().unwrap();
        assert_eq!(sketch_memory(1_000, &config), 1_000 * 2 * 16 * 12);
        let estimate = Config::builder()
            .threshold(0.8)
            .sketch(SketchKind::Classic)
            .verification(Verification::Estimate)
            .build()
            .unwrap();
        assert_eq!(sketch_memory(1_000, &estimate), 1_000 * (16 * 12 + 128 * 4));
        assert_eq!(sketch_memory(u64::MAX, &config), u64::MAX);
    }

    #[test]
    fn estimates_from_a_sample() {
        // N = 1,000,000 documents, a sample of n = 1,000: pair scale
        // 10⁶(10⁶ − 1) / (1000 · 999) = 1,000,999.999…
        let sample = SampleStats {
            documents: 1_000_000,
            sample_documents: 1_000,
            set_sizes: vec![100; 1_000],
            text_bytes: 120_000,
            raw_bytes: 0,
            collisions: 3,
            similar_pairs: vec![0.8, 1.0, 0.5],
        };
        let plan = Plan::new(16, 8);
        let tp = Throughput {
            read_bytes: 1e8,
            shingle_bytes: 5e7,
            sketch_hashes: 1e9,
            group_records: 1e7,
            verify_shingles: 1e8,
        };
        let e = estimate(&sample, plan, 128, false, 0.8, &tp);
        let scale = 1e6 * (1e6 - 1.0) / (1000.0 * 999.0);
        assert!(close(e.pair_scale, scale, 1e-6));
        assert!(close(e.candidates, 3.0 * scale, 1e-3));
        // 0.5 is below t: two similar pairs, found with P(0.8) + P(1.0) = 0.947 + 1.
        assert_eq!(e.sample_similar_pairs, 2);
        assert!(close(e.similar_pairs, 2.0 * scale, 1e-3));
        let found = plan.probability(0.8) + 1.0;
        assert!(close(e.found_pairs, found * scale, 1e-3));
        assert!(close(e.missed_share.unwrap(), 1.0 - found / 2.0, 1e-12));
        assert!(close(
            e.missed_share_uniform,
            1.0 - plan.recall_above(0.8),
            1e-12
        ));
        // Memory: no signatures under exact verification, 10⁶·16·4, 10⁶·16·8,
        // 10⁶·100·4, 10⁶·120; with signatures kept, 10⁶·128·4.
        assert_eq!(e.memory.signatures, 0);
        let kept = estimate(&sample, plan, 128, true, 0.8, &tp);
        assert_eq!(kept.memory.signatures, 512_000_000);
        assert_eq!(e.memory.band_keys, 64_000_000);
        assert_eq!(e.memory.sort_records, 128_000_000);
        assert_eq!(e.memory.shingle_sets, 400_000_000);
        assert_eq!(e.memory.texts, 120_000_000);
        assert_eq!(e.memory.raw, 0);
        // Only the pair at 0.8 is held; the one at 1.0 is between identical sets.
        let held = plan.probability(0.8) * scale * PAIR_BYTES as f64;
        assert_eq!(e.memory.results, held as u64);
        assert_eq!(e.memory.total(), e.memory.parts().iter().map(|p| p.1).sum());
        // Time: 1.2e8 B / 1e8, / 5e7; 1e8 shingles × 128 / 1e9; 1.6e7 / 1e7;
        // candidates × 200 / 1e8.
        assert!(close(e.time.read, 1.2, 1e-9));
        assert!(close(e.time.shingle, 2.4, 1e-9));
        assert!(close(e.time.sketch, 12.8, 1e-9));
        assert!(close(e.time.group, 1.6, 1e-9));
        assert!(close(e.time.verify, 3.0 * scale * 200.0 / 1e8, 1e-6));
        assert!(close(
            e.time.total(),
            e.time.parts().iter().map(|p| p.1).sum(),
            1e-9
        ));
    }

    #[test]
    fn estimates_degenerate_samples() {
        let e = estimate(
            &SampleStats::default(),
            Plan::new(16, 8),
            128,
            false,
            0.8,
            &Throughput {
                read_bytes: 0.0,
                shingle_bytes: 0.0,
                sketch_hashes: 0.0,
                group_records: 0.0,
                verify_shingles: 0.0,
            },
        );
        assert_eq!(e.candidates, 0.0);
        assert_eq!(e.missed_share, None);
        assert_eq!(e.time.total(), 0.0);
        assert_eq!(e.memory.total(), 0);
    }
}
