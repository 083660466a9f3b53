//! Representative report data (deterministic), for tests and demonstrations: the unit
//! tests, the size test and the headless-browser rendering test build their reports from
//! it. [`data`] is a clusters run with near-duplicate texts and hostile ids and texts.
//!
//! ```
//! let data = neardup_report::example::data(1_000, 10);
//! assert_eq!(data.verified_similarities.iter().sum::<u64>(), 1_000);
//! assert!(neardup_report::render(&data).contains("id=\"clusters\""));
//! ```

use neardup::measure::evaluation::{Distinct, Evaluation, LabelScore, LabelScores, Method};
use neardup::measure::metrics::BandRecall;
use neardup::measure::plan::Plan;

use super::histogram::similarity_bins;
use super::{ClusterView, Count, DocView, DuplicateView, PairView, Parameter, ReportData, Timing};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const BASES: [&str; 6] = [
    "A Python client library for the Example Cloud storage API with async support, retries \
     and streaming uploads of large objects",
    "Fast and simple command line tool to convert Markdown documents into beautiful static \
     HTML websites with themes and live reload",
    "Utilities for reading and writing climate model output in NetCDF format, regridding \
     and computing seasonal means",
    "Django app that adds two factor authentication with one time passwords, backup codes \
     and hardware security keys to your project",
    "Tiny dependency free library for parsing and validating semantic version strings and \
     comparing version ranges",
    "A pytest plugin that reports slow tests, flaky tests and test durations as a readable \
     summary at the end of the session",
];

const WORDS: [&str; 16] = [
    "simple",
    "modern",
    "robust",
    "typed",
    "minimal",
    "plugin",
    "toolkit",
    "wrapper",
    "package",
    "framework",
    "helpers",
    "bindings",
    "easy",
    "quick",
    "secure",
    "small",
];

/// `base` with about `rate` of its words replaced, dropped or followed by a new word.
fn variant(rng: &mut Rng, base: &str, rate: f64) -> String {
    let mut out: Vec<&str> = Vec::new();
    for w in base.split_whitespace() {
        if rng.unit() < rate {
            match rng.below(3) {
                0 => out.push(WORDS[rng.below(WORDS.len())]),
                1 => {}
                _ => {
                    out.push(w);
                    out.push(WORDS[rng.below(WORDS.len())]);
                }
            }
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

/// A long text (hundreds of words) made of the bases.
fn long_text(rng: &mut Rng, words: usize) -> String {
    let mut out = String::new();
    while out.split_whitespace().count() < words {
        out.push_str(BASES[rng.below(BASES.len())]);
        out.push_str(". ");
    }
    out
}

/// Text of a hostile document: markup that would run or mark the page if it were not escaped.
pub const HOSTILE_TEXT: &str = "<script>document.documentElement.setAttribute('data-injected','1')\
     </script><img src=x onerror=alert(1)> Ignore & \"quote\" 'apostrophe' </p></div></details>";

/// A clusters run with `similarities` verified similarities (and as many rejected ones)
/// and `pairs` sample pairs.
pub fn data(similarities: usize, pairs: usize) -> ReportData {
    // One generator for every part, drawn in this order: the data stay what they were.
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let verified: Vec<f64> = (0..similarities)
        .map(|_| {
            if rng.unit() < 0.25 {
                1.0
            } else {
                0.8 + 0.2 * rng.unit().powi(2)
            }
        })
        .collect();
    let rejected: Vec<f64> = (0..similarities)
        .map(|_| (0.2 + 0.6 * (rng.unit() + rng.unit() + rng.unit()) / 3.0).min(0.7999))
        .collect();
    let cluster_sizes: Vec<usize> = (0..(similarities / 3).max(12))
        .map(|_| (2.0 / (1.0 - rng.unit()).powf(0.8)).min(5_000.0) as usize)
        .collect();
    let largest_clusters = largest_clusters(&mut rng, &cluster_sizes);
    let sample_pairs: Vec<PairView> = (0..pairs)
        .map(|i| sample_pair(&mut rng, i, pairs))
        .collect();
    let clusters = cluster_sizes.len() as u64;
    let in_clusters: u64 = cluster_sizes.iter().map(|&s| s as u64).sum();
    ReportData {
        title: "neardup clusters testdata/pypi-summaries.jsonl </title><script>alert(1)</script>"
            .to_string(),
        generated: "neardup 0.1.0 · 2025-01-01 12:00:00 UTC".to_string(),
        parameters: parameters(),
        threshold: Some(0.8),
        plan: Some(Plan::new(16, 8)),
        counts: vec![
            Count::new("read", in_clusters * 3 + 6),
            Count::new("kept", in_clusters * 2 + clusters),
            Count::new("removed", in_clusters - clusters),
            Count::new("skipped", 6),
            Count::new("candidates", 2 * similarities as u64),
            Count::new("verified", similarities as u64),
            Count::new("clusters", clusters),
        ],
        skipped: vec![
            Count::new("blank_line", 3),
            Count::new("empty", 2),
            Count::new("malformed_json", 1),
        ],
        timings: timings(),
        verified_similarities: similarity_bins(&verified, neardup::run::SIMILARITY_BINS),
        identical_pairs: similarities as u64 / 10,
        rejected_similarities: similarity_bins(&rejected, neardup::run::SIMILARITY_BINS),
        cluster_sizes,
        largest_clusters,
        sample_pairs,
        eval: Some(evaluation()),
        simhash: None,
        multiset: false,
        hamming: Vec::new(),
        containment: None,
    }
}

/// The ten largest clusters, at most 40 duplicates shown of each: variants of a base text,
/// one hostile text (cluster 1) and one long kept text (cluster 2).
fn largest_clusters(rng: &mut Rng, cluster_sizes: &[usize]) -> Vec<ClusterView> {
    let mut largest = cluster_sizes.to_vec();
    largest.sort_unstable_by(|a, b| b.cmp(a));
    largest
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, &size)| {
            let base = BASES[i % BASES.len()];
            let duplicates = (1..size.min(41))
                .map(|j| {
                    let text = if i == 1 && j == 1 {
                        HOSTILE_TEXT.to_string()
                    } else {
                        variant(rng, base, 0.15)
                    };
                    let id = format!("pkg-{i}-{j}");
                    DuplicateView {
                        doc: DocView { id, text },
                        jaccard: Some(0.8 + 0.2 * rng.unit()),
                    }
                })
                .collect();
            ClusterView {
                kept: DocView {
                    id: format!("pkg-{i}"),
                    text: if i == 2 {
                        long_text(rng, 2_000)
                    } else {
                        base.to_string()
                    },
                },
                duplicates,
                size,
            }
        })
        .collect()
}

/// Sample pair `i` of `pairs`, less alike as `i` grows: two variants of a base text (a
/// long one every seventh), except pair 1 (hostile ids and texts) and pair 2 (unspaced
/// Chinese text, exact verification only).
fn sample_pair(rng: &mut Rng, i: usize, pairs: usize) -> PairView {
    let rate = 0.5 * (1.0 - i as f64 / pairs.max(1) as f64);
    let base = if i % 7 == 3 {
        long_text(rng, 3_000)
    } else {
        BASES[i % BASES.len()].to_string()
    };
    // Drawn for every pair, the special ones too, so later pairs stay the same.
    let (a_text, b_text) = (variant(rng, &base, rate / 2.0), variant(rng, &base, rate));
    let j = (1.0 - rate).clamp(0.0, 1.0);
    if i == 2 {
        // Unspaced text (diffed by character), exact verification: no estimate.
        return PairView {
            a: DocView {
                id: "zh-1".to_string(),
                text: "今天天气很好，我们一起去公园散步，然后在湖边喝咖啡。".to_string(),
            },
            b: DocView {
                id: "zh-2".to_string(),
                text: "今天天气很好，我们一起去河边散步，然后在湖边喝咖啡。".to_string(),
            },
            jaccard: Some(0.81),
            estimate: None,
            containment: None,
        };
    }
    let (a, b) = if i == 1 {
        (
            DocView {
                id: "\"><script>alert('id')</script>".to_string(),
                text: HOSTILE_TEXT.to_string(),
            },
            DocView {
                id: "hostile-2".to_string(),
                text: format!("{HOSTILE_TEXT} and more"),
            },
        )
    } else {
        (
            DocView {
                id: format!("{}", 1000 + 2 * i),
                text: a_text,
            },
            DocView {
                id: format!("{}", 1001 + 2 * i),
                text: b_text,
            },
        )
    };
    PairView {
        a,
        b,
        jaccard: Some(j),
        estimate: Some((j + 0.05 * (rng.unit() - 0.5)).clamp(0.0, 1.0)),
        containment: None,
    }
}

/// The run's parameters as the CLI lists them.
fn parameters() -> Vec<Parameter> {
    [
        ("shingle", "char:5"),
        ("normalize", "nfkc"),
        ("num_perm", "128"),
        ("seed", "1"),
        ("threshold", "0.8"),
        ("bands", "16"),
        ("rows", "8"),
        ("verify", "exact"),
        ("keep", "first"),
        ("exact", "no"),
        ("threads", "2"),
    ]
    .iter()
    .map(|(k, v)| Parameter::new(*k, *v))
    .collect()
}

/// The stages' times of a clusters run.
fn timings() -> Vec<Timing> {
    vec![
        Timing::new("read", 0.412),
        Timing::new("shingle", 0.93),
        Timing::new("sketch", 4.1),
        Timing::new("group", 0.38),
        Timing::new("verify", 1.27),
        Timing::new("cluster", 0.05),
        Timing::new("write", 0.11),
    ]
}

/// An evaluation with labels: LSH finds 1,203 of the exact join's 1,226 pairs.
fn evaluation() -> Evaluation {
    let label_score = |method, precision, recall| LabelScore {
        method,
        precision,
        recall,
        f1: 2.0 * precision * recall / (precision + recall),
        adjusted_rand_index: 0.9,
    };
    Evaluation {
        threshold: 0.8,
        lsh: Method {
            seconds: 1.4,
            pairs: 1_203,
        },
        exact: Method {
            seconds: 4.76,
            pairs: 1_226,
        },
        both: 1_203,
        recall: 1_203.0 / 1_226.0,
        precision: 1.0,
        speedup: 3.4,
        distinct: Distinct {
            recall: 0.97,
            found: 970,
            pairs: 1_000,
            expected: 0.975,
        },
        by_similarity: vec![BandRecall {
            low: 0.8,
            high: 1.0,
            closed: true,
            pairs: 1_226,
            found: 1_203,
            recall: 1_203.0 / 1_226.0,
            expected: 0.98,
        }],
        labels: Some(LabelScores {
            file: "labels.jsonl".to_string(),
            ids: 2_000,
            unknown_ids: 0,
            methods: vec![
                label_score("lsh", 0.99, 0.95),
                label_score("exact", 0.99, 0.97),
            ],
        }),
    }
}
