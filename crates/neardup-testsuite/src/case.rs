//! The cases: `testdata/cases/*.toml`, each a small corpus with the pairs and clusters
//! expected at its settings, and the brute force that keeps a case honest.
//!
//! A case file holds:
//!
//! ```toml
//! description = "what the case is about"
//! shingle = "char:5"          # optional, as `--shingle`
//! normalize = "nfkc"          # optional, as `--normalize`
//! multiset = false            # optional, as `--multiset`
//! threshold = 0.5
//! num_perm = 128              # optional
//! engines = ["exact"]         # optional: only these engines (default: all); names:
//!                             # lsh-oph, lsh-classic, triage, exact, documents, index,
//!                             # server, spark (run by crates/neardup-py/spark-tests)
//! lsh_may_miss = false        # optional: true if the S-curve allows a miss
//! docs = ["first text", "second text"]
//! pairs = [[0, 1]]            # every pair (a < b) with Jaccard ≥ threshold
//! clusters = [[0, 1]]         # kept document first, then its duplicates in input order
//!
//! [containment]               # optional: what `--measure containment` finds (exact join,
//!                             # ensemble search, containment index alike)
//! pairs = [[1, 0]]            # (a, b): a, the smaller, contained in b at ≥ threshold
//!
//! [simhash]                   # optional: what `--sketch simhash --hamming K` finds
//! hamming = 3                 # K
//! pairs = [[0, 1]]            # every pair with Jaccard ≥ threshold and fingerprints ≤ K apart
//! clusters = [[0, 1]]
//! ```
//!
//! Unless a case says `lsh_may_miss`, every expected pair must have a miss probability
//! under [`MAX_MISS`] on the case's S-curve, so the LSH engines cannot fail it by chance.

use std::path::{Path, PathBuf};

use neardup::verify::jaccard;
use neardup::{
    Cluster, Config, KeepPolicy, Measure, Normalization, ShingleKind, SketchKind, Verification,
};
use serde::Deserialize;

/// The largest chance of an LSH miss an expected pair may have.
pub const MAX_MISS: f64 = 1e-6;

/// One case file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub description: String,
    #[serde(default = "default_shingle")]
    pub shingle: String,
    #[serde(default = "default_normalize")]
    pub normalize: String,
    #[serde(default)]
    pub multiset: bool,
    pub threshold: f64,
    #[serde(default = "default_num_perm")]
    pub num_perm: usize,
    /// The engines' names (see [`crate::engine::Engine::name`]); `None`: all of them.
    pub engines: Option<Vec<String>>,
    #[serde(default)]
    pub lsh_may_miss: bool,
    pub docs: Vec<String>,
    pub pairs: Vec<[u32; 2]>,
    pub clusters: Vec<Vec<u32>>,
    pub simhash: Option<SimHashCase>,
    pub containment: Option<ContainmentCase>,
}

/// What a containment run of a case finds, the exact join and the ensemble search alike.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainmentCase {
    pub pairs: Vec<[u32; 2]>,
}

/// What a SimHash run of a case finds: it has no S-curve to lean on, so its own answer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimHashCase {
    pub hamming: u32,
    pub pairs: Vec<[u32; 2]>,
    pub clusters: Vec<Vec<u32>>,
}

fn default_shingle() -> String {
    "char:5".into()
}

fn default_normalize() -> String {
    "nfkc".into()
}

fn default_num_perm() -> usize {
    128
}

impl Case {
    /// The case's configuration with this sketch and verification, the threshold of this
    /// measure, and the first document of a cluster kept.
    pub fn config(
        &self,
        sketch: SketchKind,
        verification: Verification,
        measure: Measure,
    ) -> Config {
        let shingle: ShingleKind = self.shingle.parse().expect("shingle");
        let normalize: Normalization = self.normalize.parse().expect("normalize");
        Config::builder()
            .shingle(shingle)
            .normalization(normalize)
            .threshold(self.threshold)
            .num_perm(self.num_perm)
            .sketch(sketch)
            .verification(verification)
            .keep(KeepPolicy::First)
            .multiset(self.multiset)
            .measure(measure)
            .build()
            .expect("a valid configuration")
    }

    /// The documents' shingle sets under the case's settings.
    pub fn sets(&self) -> Vec<Vec<u64>> {
        let config = self.config(
            SketchKind::OnePermutation,
            Verification::Exact,
            Measure::Jaccard,
        );
        self.docs
            .iter()
            .map(|d| config.shingler().shingle_set(d))
            .collect()
    }
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cases")
}

/// Every case, by file name without `.toml`, in name order.
pub fn load_cases() -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("testdata/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable case");
            let case: Case =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            (name, case)
        })
        .collect()
}

/// The pairs ≥ threshold by brute force over the shingle sets, with their Jaccard.
pub fn brute_force(case: &Case) -> Vec<(u32, u32, f64)> {
    let sets = case.sets();
    let mut out = Vec::new();
    for a in 0..sets.len() {
        for b in a + 1..sets.len() {
            if sets[a].is_empty() || sets[b].is_empty() {
                continue;
            }
            let j = jaccard(&sets[a], &sets[b]);
            if j >= case.threshold {
                out.push((a as u32, b as u32, j));
            }
        }
    }
    out
}

/// Each cluster's documents as a case lists them: the kept one, then its duplicates.
pub fn members(clusters: &[Cluster]) -> Vec<Vec<u32>> {
    clusters
        .iter()
        .map(|c| {
            std::iter::once(c.kept)
                .chain(c.duplicates.iter().map(|d| d.doc))
                .collect()
        })
        .collect()
}
