//! The parameters an index is pinned to: everything that decides a document's shingle set
//! and band keys. They are written into the manifest when the index is created, and every
//! later open is checked against them.

use neardup::text::SketchInput;
use neardup::{Config, Measure, Normalization, ShingleKind, SketchKind, Verification};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The pinned parameters of an index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Shingle kind and size, as `char:5` or `word:3`.
    pub shingle: String,
    /// Normalization level, by name.
    pub normalization: String,
    /// Shingle positions kept per document before it counts as truncated.
    pub max_shingles: usize,
    /// Signature length K.
    pub num_perm: usize,
    /// Sketch family kind, by name.
    pub sketch: String,
    /// Seed of the permutations.
    pub seed: u64,
    /// The similarity threshold the band plan was chosen for: queries may ask for more,
    /// never less.
    pub threshold: f64,
    /// Bands of the plan; in a containment index, of all its tables (one per row count).
    pub bands: usize,
    /// Rows per band; 0 in a containment index, whose rows depend on the sizes compared.
    pub rows: usize,
    /// Repeated shingles counted (weighted Jaccard); absent in indexes made before it
    /// existed, which counted none.
    #[serde(default)]
    pub multiset: bool,
    /// What the threshold is of, by name: `jaccard`, or `containment` (documents inside
    /// others, looked up by the LSH Ensemble-style tables); absent in indexes made before
    /// it existed, which were all Jaccard.
    #[serde(default = "jaccard")]
    pub measure: String,
    /// What the band keys hash of each shingle: `ids` (its 32-bit id, as a batch run
    /// does, since format 3) or `hashes` (its whole 64-bit hash); absent in indexes made
    /// before ids existed, which hashed the hashes and keep doing so.
    #[serde(default = "hashes")]
    pub sketch_input: String,
}

fn jaccard() -> String {
    Measure::Jaccard.name().to_string()
}

fn hashes() -> String {
    input_name(SketchInput::Hashes).to_string()
}

fn input_name(input: SketchInput) -> &'static str {
    match input {
        SketchInput::Ids => "ids",
        SketchInput::Hashes => "hashes",
    }
}

fn parse_input(name: &str) -> Result<SketchInput> {
    [SketchInput::Ids, SketchInput::Hashes]
        .into_iter()
        .find(|&i| input_name(i) == name)
        .ok_or_else(|| crate::error::Error::Corrupt {
            path: "MANIFEST".into(),
            reason: format!("unknown sketch input {name:?} (this version knows ids and hashes)"),
        })
}

impl Params {
    /// The parameters of a configuration.
    pub fn of(config: &Config) -> Params {
        let shingler = config.shingler();
        // A search by size keeps the ensemble's tables: no one band plan.
        let by_size = !config.measure().has_band_plan();
        let ensemble =
            neardup::candidates::EnsemblePlan::new(config.threshold(), config.num_perm());
        Params {
            shingle: shingler.kind().to_string(),
            normalization: shingler.normalization_level().name().to_string(),
            max_shingles: shingler.shingle_cap(),
            num_perm: config.num_perm(),
            sketch: config.sketch().name().to_string(),
            seed: config.seed(),
            threshold: config.threshold(),
            bands: if by_size {
                ensemble.table_bands()
            } else {
                config.plan().bands()
            },
            rows: if by_size { 0 } else { config.plan().rows() },
            multiset: shingler.is_multiset(),
            measure: config.measure().name().to_string(),
            sketch_input: input_name(config.sketch_input()).to_string(),
        }
    }

    /// The configuration these parameters describe: the buckets alone, verified exactly
    /// (an index keeps shingle sets, not signatures).
    pub fn config(&self) -> Result<Config> {
        let shingle: ShingleKind = self.shingle.parse()?;
        let normalization: Normalization = self.normalization.parse()?;
        let sketch: SketchKind = self.sketch.parse()?;
        let measure: Measure = self.measure.parse()?;
        // A containment index chooses its rows per pair of sizes: no one band plan.
        let (bands, rows) = if measure.has_band_plan() {
            (Some(self.bands), Some(self.rows))
        } else {
            (None, None)
        };
        let builder = Config::builder()
            .shingle(shingle)
            .normalization(normalization)
            .max_shingles(self.max_shingles)
            .num_perm(self.num_perm)
            .sketch(sketch)
            .seed(self.seed)
            .threshold(self.threshold)
            .bands(bands)
            .rows(rows)
            .measure(measure)
            .verification(Verification::Exact)
            .multiset(self.multiset)
            .sketch_input(parse_input(&self.sketch_input)?);
        // Queries come one at a time: no checks beyond the buckets (containment has none
        // to turn off).
        Ok(if measure.from_smaller() {
            builder
        } else {
            builder.neighbours(false)
        }
        .build()?)
    }

    /// Each parameter that differs, as `seed: the index has 1, asked for 2`.
    pub fn differences(&self, asked: &Params) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |name: &str, have: String, want: String| {
            if have != want {
                out.push(format!("{name}: the index has {have}, asked for {want}"));
            }
        };
        differ("shingle", self.shingle.clone(), asked.shingle.clone());
        differ(
            "normalization",
            self.normalization.clone(),
            asked.normalization.clone(),
        );
        differ(
            "max-shingles",
            self.max_shingles.to_string(),
            asked.max_shingles.to_string(),
        );
        differ(
            "num-perm",
            self.num_perm.to_string(),
            asked.num_perm.to_string(),
        );
        differ("sketch", self.sketch.clone(), asked.sketch.clone());
        differ("seed", self.seed.to_string(), asked.seed.to_string());
        differ(
            "threshold",
            self.threshold.to_string(),
            asked.threshold.to_string(),
        );
        differ(
            "bands x rows",
            format!("{} x {}", self.bands, self.rows),
            format!("{} x {}", asked.bands, asked.rows),
        );
        differ("measure", self.measure.clone(), asked.measure.clone());
        differ(
            "multiset",
            self.multiset.to_string(),
            asked.multiset.to_string(),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_survive_the_round_trip_through_a_config() {
        let config = Config::builder()
            .shingle(ShingleKind::Word(3))
            .normalization(Normalization::None)
            .seed(7)
            .threshold(0.7)
            .sketch(SketchKind::Classic)
            .multiset(true)
            .build()
            .unwrap();
        let params = Params::of(&config);
        assert!(params.multiset);
        assert_eq!(Params::of(&params.config().unwrap()), params);
        assert!(params.differences(&params).is_empty());
    }

    #[test]
    fn a_containment_index_pins_its_tables_and_no_rows() {
        let config = Config::builder()
            .measure(Measure::Containment)
            .threshold(0.8)
            .build()
            .unwrap();
        let params = Params::of(&config);
        assert_eq!(params.measure, "containment");
        assert_eq!((params.bands, params.rows), (128 + 64 + 32 + 16, 0));
        let back = params.config().unwrap();
        assert_eq!(back.measure(), Measure::Containment);
        assert_eq!(Params::of(&back), params);
        // A manifest written before the measure existed reads as Jaccard.
        let mut json =
            serde_json::to_value(Params::of(&Config::builder().build().unwrap())).unwrap();
        json.as_object_mut().unwrap().remove("measure");
        let old: Params = serde_json::from_value(json).unwrap();
        assert_eq!(old.measure, "jaccard");
        assert!(old
            .differences(&params)
            .contains(&"measure: the index has jaccard, asked for containment".to_string()));
    }

    #[test]
    fn a_new_index_sketches_ids_and_an_older_one_its_hashes() {
        let params = Params::of(&Config::builder().build().unwrap());
        assert_eq!(params.sketch_input, "ids");
        assert_eq!(params.config().unwrap().sketch_input(), SketchInput::Ids);
        let mut json = serde_json::to_value(&params).unwrap();
        json.as_object_mut().unwrap().remove("sketch_input");
        let old: Params = serde_json::from_value(json).unwrap();
        assert_eq!(old.config().unwrap().sketch_input(), SketchInput::Hashes);
        // Not a difference a caller could ask about: the index keeps its own.
        assert!(old.differences(&params).is_empty());
        let mut bad = params;
        bad.sketch_input = "words".into();
        assert!(bad.config().is_err());
    }

    #[test]
    fn every_difference_is_named_with_both_values() {
        let a = Params::of(&Config::builder().build().unwrap());
        let b = Params::of(&Config::builder().seed(2).num_perm(64).build().unwrap());
        let d = a.differences(&b);
        assert!(
            d.contains(&"seed: the index has 1, asked for 2".to_string()),
            "{d:?}"
        );
        assert!(
            d.iter()
                .any(|l| l.starts_with("num-perm: the index has 128")),
            "{d:?}"
        );
    }
}
