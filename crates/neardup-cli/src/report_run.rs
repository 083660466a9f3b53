//! Builds the `--report` HTML of a run from what the run already holds.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use neardup::candidates::EnsemblePlan;
use neardup::run::{PairTotals, Similarities};
use neardup::{Clusters, Config, Contained, Pair, Similarity, Stats};

use neardup_report::{
    self as report, ClusterView, ContainmentData, Count, DocView, DuplicateView, PairView,
    Parameter, ReportData, Timing,
};

use neardup_io::documents::{Accounts, Documents};

/// Pairs shown side by side, spread over the similarity range.
const SAMPLE_PAIRS: usize = 50;
/// Largest clusters listed.
const LARGEST_CLUSTERS: usize = 10;

/// The report's title: the command and its inputs as the user gave them.
pub fn title(command: &str, inputs: &[std::path::PathBuf]) -> String {
    let inputs: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    format!("neardup {command} {}", inputs.join(" "))
}

/// What every report shows: parameters, plan, counts, timings, similarity histograms.
pub fn base(
    title: String,
    config: &Config,
    exact: bool,
    docs: &Documents,
    stats: &Stats,
    similarities: Option<&Similarities>,
    read_time: Duration,
) -> ReportData {
    let plan = config.plan();
    let mut parameters = vec![
        Parameter::new("shingles", config.shingler().kind().to_string()),
        Parameter::new(
            "normalize",
            config.shingler().normalization_level().to_string(),
        ),
        Parameter::new("threshold", config.threshold().to_string()),
    ];
    if config.shingler().is_multiset() {
        parameters.push(Parameter::new(
            "multiset",
            "repeated shingles counted (weighted Jaccard)",
        ));
    }
    let simhash = !exact && !config.sketch().is_minhash();
    let containment = config.measure().from_smaller();
    if containment {
        parameters.push(Parameter::new("measure", "containment |A ∩ B| / |A|"));
    }
    if exact && containment {
        parameters.push(Parameter::new("method", "exact containment join"));
    } else if exact {
        parameters.push(Parameter::new("method", "exact set-similarity join"));
    } else if containment {
        parameters.extend([
            Parameter::new("method", "LSH Ensemble"),
            Parameter::new("sketch", config.sketch().to_string()),
            Parameter::new("permutations", config.num_perm().to_string()),
            Parameter::new("seed", config.seed().to_string()),
            Parameter::new("rows per band", "1, 2, 4 or 8 by size partition"),
            Parameter::new("verify", "exact"),
        ]);
    } else if simhash {
        parameters.extend([
            Parameter::new("sketch", "simhash"),
            Parameter::new("hamming", config.hamming().to_string()),
            Parameter::new("seed", config.seed().to_string()),
            Parameter::new("verify", config.verification().to_string()),
        ]);
    } else {
        parameters.extend([
            Parameter::new("sketch", config.sketch().to_string()),
            Parameter::new("permutations", config.num_perm().to_string()),
            Parameter::new("seed", config.seed().to_string()),
            Parameter::new(
                "bands x rows",
                format!("{} x {}", plan.bands(), plan.rows()),
            ),
            Parameter::new("verify", config.verification().to_string()),
        ]);
    }
    if !containment {
        // Containment has no clusters, so nothing is kept or removed.
        parameters.push(Parameter::new("keep", config.keep().to_string()));
    }
    parameters.push(Parameter::new(
        "threads",
        rayon::current_num_threads().to_string(),
    ));
    let mut timings = vec![Timing::new("read", read_time.as_secs_f64())];
    timings.extend(
        stats
            .timings
            .iter()
            .map(|(s, d)| Timing::new(s.name(), d.as_secs_f64())),
    );
    let sims = similarities.cloned().unwrap_or_default();
    ReportData {
        title,
        generated: format!("neardup {}", env!("CARGO_PKG_VERSION")),
        parameters,
        threshold: Some(config.threshold()),
        plan: (!exact && !simhash && !containment).then(|| plan.into()),
        simhash: simhash.then(|| config.hamming()),
        counts: vec![
            Count::new("records read", docs.read_count()),
            Count::new("documents", docs.texts.len() as u64),
            Count::new("identical to an earlier document", stats.identical),
            Count::new("candidates", stats.candidates),
            Count::new("verified", stats.verified),
        ],
        skipped: docs
            .skip_counts(stats.empty)
            .into_iter()
            .map(|(k, v)| Count::new(k, v))
            .collect(),
        timings,
        verified_similarities: sims.verified,
        // Clusters link each identical copy to its representative; pairs mode counts its
        // pairs of copies in `add_pairs`.
        identical_pairs: stats.identical,
        rejected_similarities: sims.rejected,
        multiset: config.shingler().is_multiset(),
        ..ReportData::default()
    }
}

fn doc(docs: &Documents, d: u32) -> DocView {
    DocView {
        id: docs.id(d).to_string(),
        text: docs.texts[d as usize].clone(),
    }
}

/// `n` items spread evenly over a list sorted by similarity: its quantiles.
fn spread<T: Clone>(sorted: &[T], n: usize) -> Vec<T> {
    if sorted.len() <= n {
        return sorted.to_vec();
    }
    (0..n)
        .map(|i| sorted[i * (sorted.len() - 1) / (n - 1)].clone())
        .collect()
}

fn value(p: &Pair) -> f64 {
    p.similarity.value().unwrap_or(0.0)
}

/// About [`SAMPLE_PAIRS`] pairs spread evenly over the similarity range.
fn sample_pairs(mut pairs: Vec<Pair>, docs: &Documents) -> Vec<PairView> {
    pairs.sort_by(|x, y| {
        value(x)
            .total_cmp(&value(y))
            .then((x.a, x.b).cmp(&(y.a, y.b)))
    });
    spread(&pairs, SAMPLE_PAIRS)
        .into_iter()
        .map(|p| PairView {
            a: doc(docs, p.a),
            b: doc(docs, p.b),
            jaccard: p.similarity.jaccard,
            estimate: p.similarity.estimate,
            containment: None,
        })
        .collect()
}

/// The first pair met in each of [`neardup::run::SIMILARITY_BINS`] similarity bins, gathered
/// while pairs stream past: a sample spread over the similarity range in bounded memory.
pub struct PairSample {
    first: Vec<Option<Pair>>,
    /// Pairs by the distance of their SimHash fingerprints (a SimHash run's).
    hamming: Vec<u64>,
}

impl Default for PairSample {
    fn default() -> Self {
        PairSample {
            first: vec![None; neardup::run::SIMILARITY_BINS],
            hamming: Vec::new(),
        }
    }
}

impl PairSample {
    /// Looks at a chunk of pairs.
    pub fn add(&mut self, chunk: &[Pair]) {
        for p in chunk {
            if let Some(i) = neardup::run::Similarities::bin(value(p)) {
                self.first[i].get_or_insert(*p);
            }
        }
        count_distances(&mut self.hamming, chunk.iter().map(|p| p.similarity));
    }
}

/// Adds each similarity's SimHash distance, if it has one, to `counts` (by distance).
fn count_distances(counts: &mut Vec<u64>, similarities: impl Iterator<Item = Similarity>) {
    for d in similarities.filter_map(|s| s.hamming) {
        let d = d as usize;
        if counts.len() <= d {
            counts.resize(d + 1, 0);
        }
        counts[d] += 1;
    }
}

/// Adds the pairs' count and about [`SAMPLE_PAIRS`] pairs spread over the similarity
/// range (from the first pair of each fine similarity bin, so the millions of identical
/// pairs a corpus of copies has fill one bin and do not crowd out the rest).
pub fn add_pairs(
    data: &mut ReportData,
    totals: &PairTotals,
    sample: Option<&PairSample>,
    docs: &Documents,
) {
    data.counts.push(Count::new("pairs", totals.pairs));
    data.identical_pairs = totals.identical;
    let pool: Vec<Pair> = sample
        .map(|s| s.first.iter().flatten().copied().collect())
        .unwrap_or_default();
    data.sample_pairs = sample_pairs(pool, docs);
    data.hamming = sample.map(|s| s.hamming.clone()).unwrap_or_default();
}

/// Adds a containment run's pairs: their count, their containment and Jaccard binned,
/// the plan (`plan`, None for the exact join) over the run's set `sizes`, and about
/// [`SAMPLE_PAIRS`] pairs spread over the containment range, the contained document first.
pub fn add_containment(
    data: &mut ReportData,
    pairs: &[Contained],
    stats: &Stats,
    plan: Option<EnsemblePlan>,
    sizes: impl Iterator<Item = usize>,
    docs: &Documents,
) {
    data.counts.extend([
        Count::new("pairs", pairs.len() as u64),
        Count::new(
            "documents in a pair",
            crate::containment::documents(pairs, docs.len()),
        ),
    ]);
    if stats.skipped_buckets > 0 {
        data.counts.push(Count::new(
            "oversized buckets passed over",
            stats.skipped_buckets,
        ));
    }
    let t = data.threshold.unwrap_or(1.0);
    let binned = |value: fn(&Contained) -> f64| {
        let values: Vec<f64> = pairs.iter().map(value).collect();
        report::histogram::similarity_bins(&values, neardup::run::SIMILARITY_BINS)
    };
    data.containment = Some(ContainmentData {
        plan,
        partitions: EnsemblePlan::partitions_of(sizes),
        containments: binned(|p| p.containment),
        jaccards: binned(|p| p.jaccard),
        below_jaccard_threshold: pairs
            .iter()
            .filter(|p| !neardup::verify::meets_threshold(p.jaccard, t))
            .count() as u64,
        skipped_buckets: stats.skipped_buckets,
    });
    let mut sorted = pairs.to_vec();
    sorted.sort_by(|x, y| {
        x.containment
            .total_cmp(&y.containment)
            .then((x.a, x.b).cmp(&(y.a, y.b)))
    });
    data.sample_pairs = spread(&sorted, SAMPLE_PAIRS)
        .into_iter()
        .map(|p| PairView {
            a: doc(docs, p.a),
            b: doc(docs, p.b),
            jaccard: Some(p.jaccard),
            estimate: None,
            containment: Some(p.containment),
        })
        .collect();
}

/// Adds cluster counts, sizes, the largest clusters and a sample of kept–removed pairs.
pub fn add_clusters(
    data: &mut ReportData,
    clusters: &Clusters,
    docs: &Documents,
    accounts: &Accounts,
) {
    data.counts.extend([
        Count::new("clusters", clusters.len() as u64),
        Count::new("removed", accounts.removed),
        Count::new("skipped", accounts.skipped),
        Count::new("kept", accounts.kept),
    ]);
    data.cluster_sizes = clusters.iter().map(|c| c.len()).collect();
    let mut largest: Vec<_> = clusters.iter().collect();
    largest.sort_by_key(|c| (std::cmp::Reverse(c.len()), c.kept()));
    data.largest_clusters = largest
        .into_iter()
        .take(LARGEST_CLUSTERS)
        .map(|c| ClusterView {
            kept: doc(docs, c.kept()),
            duplicates: c
                .duplicates()
                .take(report::MAX_DUPLICATES)
                .map(|d| DuplicateView {
                    doc: doc(docs, d.doc),
                    jaccard: d.similarity.jaccard,
                })
                .collect(),
            size: c.len(),
        })
        .collect();
    let links: Vec<Pair> = clusters
        .iter()
        .flat_map(|c| {
            c.duplicates().map(move |d| Pair {
                a: c.kept(),
                b: d.doc,
                similarity: d.similarity,
            })
        })
        .collect();
    count_distances(&mut data.hamming, links.iter().map(|p| p.similarity));
    data.sample_pairs = sample_pairs(links, docs);
}

/// Writes the report.
pub fn write(path: &Path, data: &ReportData, inputs: &[std::path::PathBuf]) -> Result<()> {
    let mut out = crate::output::open_output(Some(path), inputs)?;
    std::io::Write::write_all(&mut out, report::render(data).as_bytes())
        .map_err(|e| out.error(e))?;
    crate::output::finish(out)
}
