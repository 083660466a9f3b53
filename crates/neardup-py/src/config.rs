//! The library's configuration behind the Python `Config`: every setting parsed and
//! validated by the library (`FromStr` of its option enums, `ConfigBuilder::build`), so a
//! refused value gets the library's message, and the pipeline built once per config.

use std::sync::Arc;

use neardup::{
    Config, KeepPolicy, Measure, Normalization, Pipeline, ShingleKind, SketchKind, Verification,
};
use pyo3::prelude::*;

use crate::errors::{core, refused};

/// A validated configuration and its pipeline. The public, picklable `neardup.Config`
/// (python/neardup/_config.py) holds the settings and builds one of these.
#[pyclass(frozen, name = "_Config", module = "neardup._neardup")]
pub struct NativeConfig {
    pipeline: Arc<Pipeline>,
}

/// An integer setting as the `usize` the library takes; a negative one is refused with
/// the library's range.
fn count(name: &str, value: i64, range: &str) -> PyResult<usize> {
    usize::try_from(value).map_err(|_| refused(format!("{name} must be in {range}, got {value}")))
}

impl NativeConfig {
    /// Refuses `what` (a run, a building block) with a measure that gives no clusters
    /// (containment): it finds pairs and answers index queries, nothing else; the message
    /// says what to use instead.
    pub fn refuse_containment(&self, what: &str) -> PyResult<()> {
        let measure = self.config().measure();
        if !measure.gives_clusters() {
            let name = measure.name();
            return Err(refused(format!(
                "{what} with measure='{name}': {name} finds pairs only \
                 (neardup.pairs(texts, measure='{name}'), or `neardup pairs --measure \
                 {name}`) and answers a {name} index's queries (neardup.Index)"
            )));
        }
        Ok(())
    }

    /// The pipeline of this configuration (shared, cheap to clone).
    pub fn pipeline(&self) -> Arc<Pipeline> {
        Arc::clone(&self.pipeline)
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        self.pipeline.config()
    }

    /// The configuration of an index's pipeline.
    pub fn from_pipeline(pipeline: Arc<Pipeline>) -> Self {
        NativeConfig { pipeline }
    }
}

#[pymethods]
impl NativeConfig {
    #[new]
    #[pyo3(signature = (*, shingle, normalize, threshold, num_perm, seed, sketch, bands, rows,
                        verify, keep, max_shingles, neighbours, allow_truncated, multiset,
                        measure, hamming = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        shingle: &str,
        normalize: &str,
        threshold: f64,
        num_perm: i64,
        seed: u64,
        sketch: &str,
        bands: Option<i64>,
        rows: Option<i64>,
        verify: &str,
        keep: &str,
        max_shingles: i64,
        neighbours: bool,
        allow_truncated: bool,
        multiset: bool,
        measure: &str,
        hamming: Option<i64>,
    ) -> PyResult<Self> {
        let shingle: ShingleKind = shingle.parse().map_err(core)?;
        let normalization: Normalization = normalize.parse().map_err(core)?;
        let sketch: SketchKind = sketch.parse().map_err(core)?;
        let verification: Verification = verify.parse().map_err(core)?;
        let keep: KeepPolicy = keep.parse().map_err(core)?;
        let measure: Measure = measure.parse().map_err(core)?;
        let num_perm = count("number of permutations", num_perm, "1..=65536")?;
        let max_shingles = count(
            "the cap on shingles per document",
            max_shingles,
            "1..=4294967296",
        )?;
        let bands = bands.map(|b| count("bands", b, "1..")).transpose()?;
        let rows = rows.map(|r| count("rows", r, "1..")).transpose()?;
        // A distance is passed only when given (the package leaves out the default): the
        // library refuses one given without SimHash.
        let hamming = hamming
            .map(|k| {
                u32::try_from(k).map_err(|_| {
                    refused(format!("the Hamming distance must be in 0..=16, got {k}"))
                })
            })
            .transpose()?;
        let builder = Config::builder()
            .shingle(shingle)
            .normalization(normalization)
            .threshold(threshold)
            .num_perm(num_perm)
            .seed(seed)
            .sketch(sketch)
            .bands(bands)
            .rows(rows)
            .verification(verification)
            .keep(keep)
            .max_shingles(max_shingles)
            .neighbours(neighbours)
            .allow_truncated(allow_truncated)
            .multiset(multiset)
            .measure(measure);
        let config = match hamming {
            Some(k) => builder.hamming(k),
            None => builder,
        }
        .build()
        .map_err(core)?;
        let pipeline = Pipeline::new(config).map_err(core)?;
        Ok(NativeConfig {
            pipeline: Arc::new(pipeline),
        })
    }

    /// Bands of the LSH plan (given, or chosen from the threshold).
    #[getter]
    fn bands(&self) -> usize {
        self.config().plan().bands()
    }

    /// Rows per band.
    #[getter]
    fn rows(&self) -> usize {
        self.config().plan().rows()
    }

    /// What the threshold is a threshold of: `jaccard` or `containment` (as parsed).
    #[getter]
    fn measure(&self) -> &'static str {
        self.config().measure().name()
    }

    /// Whether a pair is scored from its smaller document (containment): the pairs are
    /// `Contained`, `a` inside `b`.
    #[getter(from_smaller)]
    fn smaller_in_larger(&self) -> bool {
        self.config().measure().from_smaller()
    }

    /// Sketch families: 2 with the default sketch (classic below 64 shingles, one-permutation
    /// from 64), 1 with the classic sketch.
    #[getter]
    fn families(&self) -> usize {
        self.pipeline.families()
    }

    /// P(candidate | similarity s) of the band plan: 1 − (1 − sʳ)ᵇ.
    fn probability(&self, s: f64) -> f64 {
        self.config().candidate_curve().probability(s)
    }
}
