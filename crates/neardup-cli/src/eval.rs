//! `eval`: LSH and the exact join on the same input, side by side.
//!
//! [`evaluate`] computes an [`Evaluation`]; [`render`] prints it as tables, `--json` as one
//! JSON object, and `--missed` writes the pairs behind the numbers.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, Instant};

use anyhow::Result;
use neardup::verify::jaccard;
use neardup::{Corpus, Pair, Pipeline, Stage, Stats};
use serde::Serialize;

use crate::args::{EvalArgs, KeepArg, VerifyArg};
use crate::input::{BadRecord, DocId, Documents};
use crate::labels::{adjusted_rand_index, pair_metrics, read_labels, Grouping};
use crate::output::open_output;
use crate::progress::Bars;
use crate::report_run;
use crate::run::config;
use crate::summary::{self, secs, thousands, Summary};

/// Similarity bands in which recall is broken down.
const BANDS: [f64; 6] = [0.8, 0.85, 0.9, 0.95, 0.99, 1.0];

/// What `eval` measured.
#[derive(Debug, Serialize)]
pub struct Evaluation {
    pub threshold: f64,
    pub lsh: Method,
    pub exact: Method,
    /// Pairs both methods found.
    pub both: u64,
    /// LSH pairs found / exact pairs.
    pub recall: f64,
    /// LSH pairs that the exact join found too / LSH pairs.
    pub precision: f64,
    /// The exact join's time / LSH's time.
    pub speedup: f64,
    /// The same over pairs of distinct shingle sets (identical copies counted once).
    pub distinct: Distinct,
    /// Recall per band of exact similarity, against the S-curve's expectation.
    pub by_similarity: Vec<BandRecall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<LabelScores>,
}

/// One method's time (shingling included) and pairs.
#[derive(Debug, Serialize)]
pub struct Method {
    pub seconds: f64,
    pub pairs: u64,
}

/// Recall over pairs of distinct shingle sets.
#[derive(Debug, Serialize)]
pub struct Distinct {
    pub recall: f64,
    pub found: u64,
    pub pairs: u64,
    /// The mean S-curve over those pairs: what LSH is expected to find.
    pub expected: f64,
}

/// Recall in one band of exact similarity, `[low, high)` or, if `closed`, `[low, high]`
/// (the last band, which ends at 1).
#[derive(Debug, Serialize)]
pub struct BandRecall {
    pub low: f64,
    pub high: f64,
    pub closed: bool,
    pub pairs: u64,
    pub found: u64,
    pub recall: f64,
    pub expected: f64,
}

/// Both methods against the user's labels.
#[derive(Debug, Serialize)]
pub struct LabelScores {
    pub file: String,
    /// Distinct ids the labels name.
    pub ids: u64,
    /// Of those, ids that name no document of the input.
    pub unknown_ids: u64,
    pub methods: Vec<LabelScore>,
}

/// One method against the labels.
#[derive(Debug, Serialize)]
pub struct LabelScore {
    pub method: &'static str,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub adjusted_rand_index: f64,
}

fn stage_time(stats: &Stats, stages: &[Stage]) -> Duration {
    stats
        .timings
        .iter()
        .filter(|(s, _)| stages.contains(s))
        .map(|(_, d)| *d)
        .sum()
}

pub fn run(args: &EvalArgs) -> Result<String> {
    let config = config(&args.matching, VerifyArg::Exact, KeepArg::First)?;
    let quiet = args.runtime.quiet;
    if !quiet {
        summary::to_stderr(&summary::plan(&config, false));
    }
    let bars = Bars::new(quiet);
    let read_start = Instant::now();
    let docs = Documents::read(&args.input, false, &bars)?;
    let read_time = read_start.elapsed();
    let labels = args.labels.as_deref().map(read_labels).transpose()?;
    let pipeline = Pipeline::new(config.clone())?
        .with_progress(Box::new(bars))
        .record_similarities(args.report.is_some());

    let mut prepared = pipeline.shingle(&docs.texts);
    crate::plan::refuse_over_memory(prepared.corpus.len() as u64, &config)?;
    let (exact, exact_stats) = pipeline.exact_pairs(&prepared);
    pipeline.sketch(&mut prepared);
    let (lsh_set, lsh_stats) = pipeline.pair_set(&prepared);
    let lsh = lsh_set.to_vec();
    let run = Run {
        docs: &docs,
        corpus: &prepared.corpus,
        plan: config.plan(),
        threshold: config.threshold(),
        lsh: &lsh,
        exact: &exact,
    };
    let predicted = labels.as_ref().map(|_| run.predictions());
    let mut eval = run.evaluate(&lsh_stats, &exact_stats);
    if let (Some(labels), Some(predicted)) = (&labels, &predicted) {
        let path = args.labels.as_deref().unwrap_or(std::path::Path::new(""));
        let scores = run.score_labels(labels, predicted, path);
        if scores.unknown_ids > 0 && !args.allow_unknown_labels {
            return Err(BadRecord(format!(
                "{} of the {} ids in {} name no document of the input (e.g. {:?}); \
                 the labels must use the input's ids (the id field or column, else the \
                 line or record number), or pass --allow-unknown-labels",
                scores.unknown_ids,
                scores.ids,
                path.display(),
                run.unknown_ids(labels)
                    .first()
                    .map(String::as_str)
                    .unwrap_or("")
            ))
            .into());
        }
        eval.labels = Some(scores);
    }
    if let Some(path) = &args.missed {
        run.write_missed(path, labels.as_ref().zip(predicted.as_ref()))?;
    }
    if let Some(path) = &args.report {
        let title = report_run::title("eval", &args.input.inputs);
        let mut data = report_run::base(title, &config, false, &docs, &lsh_stats, read_time);
        let mut sample = report_run::PairSample::default();
        sample.add(&lsh);
        let totals = neardup::PairTotals {
            pairs: lsh_set.len(),
            documents: lsh_set.documents(),
            identical: lsh_set
                .identical_groups()
                .iter()
                .map(|g| (g.len() * (g.len() - 1) / 2) as u64)
                .sum(),
        };
        report_run::add_pairs(&mut data, &totals, Some(&sample), &docs);
        data.counts.push(("exact pairs".into(), exact.len() as u64));
        data.eval = Some(report_metrics(&eval));
        report_run::write(path, &data, &args.input.inputs)?;
    }
    if !quiet {
        let mut s = Summary::default();
        let skipped = docs.skip_counts(&[("empty", lsh_stats.empty)]);
        s.stages(
            docs.read_count(),
            docs.inputs.len(),
            read_time,
            &skipped,
            docs.lossy,
            &lsh_stats,
        );
        for w in &docs.warnings {
            s.line("warning", w);
        }
        s.short_documents(config.shingler().kind(), &lsh_stats);
        s.line(
            "exact",
            format!(
                "{} candidates, {} pairs in {}",
                thousands(exact_stats.candidates),
                thousands(exact.len() as u64),
                secs(stage_time(&exact_stats, &[Stage::ExactJoin]))
            ),
        );
        summary::to_stderr(&s.render());
    }
    Ok(if args.json {
        serde_json::to_string(&eval)? + "\n"
    } else {
        render(&eval)
    })
}

/// One evaluation's inputs.
struct Run<'a> {
    docs: &'a Documents,
    corpus: &'a Corpus,
    plan: neardup::BandPlan,
    threshold: f64,
    lsh: &'a [Pair],
    exact: &'a [Pair],
}

fn key(p: &Pair) -> (u32, u32) {
    (p.a, p.b)
}

impl Run<'_> {
    fn evaluate(&self, lsh_stats: &Stats, exact_stats: &Stats) -> Evaluation {
        let (lsh, exact) = (self.lsh, self.exact);
        let shingle = stage_time(lsh_stats, &[Stage::Shingle]);
        let lsh_time =
            shingle + stage_time(lsh_stats, &[Stage::Sketch, Stage::Group, Stage::Verify]);
        let exact_time = shingle + stage_time(exact_stats, &[Stage::ExactJoin]);
        let exact_keys: Vec<(u32, u32)> = exact.iter().map(key).collect();
        let both = lsh
            .iter()
            .filter(|p| exact_keys.binary_search(&key(p)).is_ok())
            .count();
        // Counted once per distinct pair of shingle sets: identical copies of a document
        // hit or miss together, so per-pair recall can swing with one miss.
        let corpus = self.corpus;
        let is_distinct =
            |p: &&Pair| corpus.representative(p.a) == p.a && corpus.representative(p.b) == p.b;
        let exact_distinct: Vec<&Pair> = exact.iter().filter(is_distinct).collect();
        let lsh_distinct: Vec<(u32, u32)> = lsh.iter().filter(is_distinct).map(key).collect();
        let distinct_found = exact_distinct
            .iter()
            .filter(|p| lsh_distinct.binary_search(&key(p)).is_ok())
            .count();
        Evaluation {
            threshold: self.threshold,
            lsh: Method {
                seconds: lsh_time.as_secs_f64(),
                pairs: lsh.len() as u64,
            },
            exact: Method {
                seconds: exact_time.as_secs_f64(),
                pairs: exact.len() as u64,
            },
            both: both as u64,
            recall: ratio(both, exact.len()),
            precision: ratio(both, lsh.len()),
            speedup: exact_time.as_secs_f64() / lsh_time.as_secs_f64().max(1e-9),
            distinct: Distinct {
                recall: ratio(distinct_found, exact_distinct.len()),
                found: distinct_found as u64,
                pairs: exact_distinct.len() as u64,
                expected: self.expected(&exact_distinct),
            },
            by_similarity: self.by_similarity(),
            labels: None,
        }
    }

    /// The mean S-curve over `pairs`; 0 for none.
    fn expected(&self, pairs: &[&Pair]) -> f64 {
        if pairs.is_empty() {
            return 0.0;
        }
        let sum: f64 = pairs
            .iter()
            .map(|p| self.plan.probability(p.similarity.jaccard.unwrap_or(0.0)))
            .sum();
        sum / pairs.len() as f64
    }

    fn by_similarity(&self) -> Vec<BandRecall> {
        let mut out = Vec::new();
        let mut low = self.threshold;
        for &high in BANDS
            .iter()
            .filter(|&&b| b > self.threshold)
            .chain(std::iter::once(&f64::INFINITY))
        {
            let in_band: Vec<&Pair> = self
                .exact
                .iter()
                .filter(|p| {
                    let j = p.similarity.jaccard.unwrap_or(0.0);
                    j >= low && (j < high || (high.is_infinite() && j <= 1.0))
                })
                .collect();
            if !in_band.is_empty() {
                let found = in_band
                    .iter()
                    .filter(|p| self.lsh.binary_search_by_key(&key(p), key).is_ok())
                    .count();
                out.push(BandRecall {
                    low,
                    high: high.min(1.0),
                    closed: high.is_infinite(),
                    pairs: in_band.len() as u64,
                    found: found as u64,
                    recall: ratio(found, in_band.len()),
                    expected: self.expected(&in_band),
                });
            }
            low = high;
        }
        out
    }

    fn id(&self, doc: u32) -> String {
        self.docs.ids[doc as usize].to_string()
    }

    /// Each method's pairs as a grouping by id.
    fn predictions(&self) -> [(&'static str, Grouping); 2] {
        let group = |pairs: &[Pair]| {
            let named: Vec<(String, String)> =
                pairs.iter().map(|p| (self.id(p.a), self.id(p.b))).collect();
            Grouping::from_pairs(named.iter().map(|(a, b)| (a.as_str(), b.as_str())))
        };
        [("lsh", group(self.lsh)), ("exact", group(self.exact))]
    }

    /// Label ids that name no document, sorted.
    fn unknown_ids(&self, labels: &Grouping) -> Vec<String> {
        let known: std::collections::HashSet<String> =
            self.docs.ids.iter().map(DocId::to_string).collect();
        let mut unknown: Vec<String> = labels
            .ids()
            .filter(|id| !known.contains(*id))
            .map(str::to_string)
            .collect();
        unknown.sort_unstable();
        unknown
    }

    fn score_labels(
        &self,
        labels: &Grouping,
        predicted: &[(&'static str, Grouping); 2],
        path: &std::path::Path,
    ) -> LabelScores {
        let documents = self.docs.ids.len() as u64;
        LabelScores {
            file: path.display().to_string(),
            ids: labels.documents() as u64,
            unknown_ids: self.unknown_ids(labels).len() as u64,
            methods: predicted
                .iter()
                .map(|(method, grouping)| {
                    let m = pair_metrics(grouping, labels);
                    LabelScore {
                        method,
                        precision: m.precision(),
                        recall: m.recall(),
                        f1: m.f1(),
                        adjusted_rand_index: adjusted_rand_index(grouping, labels, documents),
                    }
                })
                .collect(),
        }
    }

    /// `--missed`: LSH's misses against the exact join, then each method's missed and
    /// false pairs against the labels, each with the pair's exact Jaccard (absent when an
    /// id names no document).
    fn write_missed(
        &self,
        path: &std::path::Path,
        labels: Option<(&Grouping, &[(&'static str, Grouping); 2])>,
    ) -> Result<()> {
        #[derive(Serialize)]
        struct Line<'a> {
            kind: &'static str,
            method: &'static str,
            a: &'a str,
            b: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            jaccard: Option<f64>,
        }
        let inputs: Vec<_> = self.docs.inputs.iter().map(|i| i.path.clone()).collect();
        let mut out = open_output(Some(path), &inputs)?;
        let mut put = |kind, method, a: &str, b: &str, jaccard| -> Result<()> {
            let line = Line {
                kind,
                method,
                a,
                b,
                jaccard: crate::output::round(jaccard),
            };
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
            Ok(())
        };
        for p in self.exact {
            if self.lsh.binary_search_by_key(&key(p), key).is_err() {
                put(
                    "missed_by_lsh",
                    "lsh",
                    &self.id(p.a),
                    &self.id(p.b),
                    p.similarity.jaccard,
                )?;
            }
        }
        if let Some((labels, predicted)) = labels {
            let doc_of: HashMap<String, u32> = (0..self.docs.ids.len() as u32)
                .map(|d| (self.id(d), d))
                .collect();
            let similarity = |a: &str, b: &str| match (doc_of.get(a), doc_of.get(b)) {
                (Some(&x), Some(&y)) => Some(jaccard(self.corpus.set(x), self.corpus.set(y))),
                _ => None,
            };
            let labelled = labels.pair_ids();
            for (method, grouping) in predicted {
                for &(a, b) in &labelled {
                    if !grouping.together(a, b) {
                        put("missed_label", method, a, b, similarity(a, b))?;
                    }
                }
                for (a, b) in grouping.pair_ids() {
                    if !labels.together(a, b) {
                        put("false_pair", method, a, b, similarity(a, b))?;
                    }
                }
            }
        }
        crate::output::finish(out)
    }
}

/// The evaluation as tables.
pub fn render(e: &Evaluation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "method   time (incl. shingling)   pairs");
    for (name, m) in [("lsh", &e.lsh), ("exact", &e.exact)] {
        let _ = writeln!(
            out,
            "{name:<8} {:>22}   {}",
            secs(Duration::from_secs_f64(m.seconds)),
            thousands(m.pairs)
        );
    }
    let _ = writeln!(out, "both     {:>22}   {}", "", thousands(e.both));
    let _ = writeln!(
        out,
        "LSH recall {:.4}, precision {:.4}, {:.2}x the exact join's speed",
        e.recall, e.precision, e.speedup
    );
    let d = &e.distinct;
    let _ = writeln!(
        out,
        "LSH recall over distinct texts {:.4} ({} of {} pairs of distinct shingle sets; expected {:.4})",
        d.recall,
        thousands(d.found),
        thousands(d.pairs),
        d.expected
    );
    if let Some(l) = &e.labels {
        let _ = writeln!(out, "\nagainst the labels in {}:", l.file);
        if l.unknown_ids > 0 {
            let _ = writeln!(
                out,
                "({} of {} label ids name no document of the input)",
                thousands(l.unknown_ids),
                thousands(l.ids)
            );
        }
        let _ = writeln!(out, "method   precision   recall       F1      ARI");
        for m in &l.methods {
            let _ = writeln!(
                out,
                "{:<8} {:>9.4} {:>8.4} {:>8.4} {:>8.4}",
                m.method, m.precision, m.recall, m.f1, m.adjusted_rand_index
            );
        }
    }
    let _ = writeln!(
        out,
        "\nrecall by exact similarity (expected: mean S-curve over the pairs in the band)"
    );
    let _ = writeln!(out, "similarity      pairs     found   recall   expected");
    for b in &e.by_similarity {
        let label = if b.closed {
            format!("[{:.2}, {:.2}]", b.low, b.high)
        } else {
            format!("[{:.2}, {:.2})", b.low, b.high)
        };
        let _ = writeln!(
            out,
            "{label:<14} {:>7} {:>9}   {:.4}     {:.4}",
            thousands(b.pairs),
            thousands(b.found),
            b.recall,
            b.expected
        );
    }
    out
}

/// The metrics the HTML report lists.
fn report_metrics(e: &Evaluation) -> Vec<(String, String)> {
    let mut metrics = vec![
        ("LSH recall".to_string(), format!("{:.4}", e.recall)),
        ("LSH precision".to_string(), format!("{:.4}", e.precision)),
        (
            "LSH recall over distinct texts".to_string(),
            format!("{:.4}", e.distinct.recall),
        ),
        (
            "LSH time".to_string(),
            secs(Duration::from_secs_f64(e.lsh.seconds)),
        ),
        (
            "exact join time".to_string(),
            secs(Duration::from_secs_f64(e.exact.seconds)),
        ),
    ];
    if let Some(l) = &e.labels {
        for m in &l.methods {
            let name = m.method;
            metrics.extend([
                (
                    format!("{name} label precision"),
                    format!("{:.4}", m.precision),
                ),
                (format!("{name} label recall"), format!("{:.4}", m.recall)),
                (format!("{name} label F1"), format!("{:.4}", m.f1)),
                (
                    format!("{name} adjusted Rand index"),
                    format!("{:.4}", m.adjusted_rand_index),
                ),
            ]);
        }
    }
    metrics
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}
