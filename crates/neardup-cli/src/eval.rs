//! `eval`: LSH and the exact join on the same input, side by side.
//!
//! The core's `neardup::measure::evaluation` computes an [`Evaluation`]; [`render`] prints it as
//! tables, `--json` serializes it as one JSON object, and `--missed` writes the pairs
//! behind the numbers.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use neardup::corpus::Corpus;
use neardup::measure::evaluation::{Comparison, Evaluation, LabelScore, LabelScores};
use neardup::measure::metrics::{CandidateCurve, Grouping};
use neardup::run::{Similarities, Stage};
use neardup::verify::jaccard;
use neardup::{
    Config, Goal, Held, KeepPolicy, Method, Pair, Pipeline, Ready, RunError, RunPlan, Stats,
};
use neardup_io::documents::Documents;
use rayon::slice::ParallelSliceMut;
use serde::Serialize;

use crate::errors::BadRecord;
use crate::labels::read_labels;
use crate::output::open_output;
use crate::progress::Bars;
use crate::report_run;
use crate::run::config;
use crate::settings::EvalSettings;
use crate::summary::{self, secs, thousands, Summary};

fn stage_time(stats: &Stats, stages: &[Stage]) -> Duration {
    stats
        .timings
        .iter()
        .filter(|(s, _)| stages.contains(s))
        .map(|(_, d)| *d)
        .sum()
}

/// eval's configuration, resolved right after parsing (`main.rs`): its refusals come
/// before any input is read.
pub fn resolve(args: &EvalSettings) -> Result<Config> {
    config(&args.matching, args.verify, KeepPolicy::First)
}

pub fn run(args: &EvalSettings, config: &Config) -> Result<String> {
    let quiet = args.runtime.quiet;
    if !quiet {
        summary::to_stderr(&summary::plan(config, false));
    }
    let bars = Bars::new(quiet);
    let read_start = Instant::now();
    let docs = crate::ready::read_all(&args.input, &bars)?;
    let read_time = read_start.elapsed();
    let labels = args.labels.as_deref().map(read_labels).transpose()?;
    let pipeline = Pipeline::new(config.clone())?;
    let mut bars = bars;
    // The report's histograms are of LSH's candidates.
    let mut recorded = args.report.is_some().then(Similarities::default);

    let mut intake = pipeline.intake(None)?;
    intake.add(&docs.texts)?;
    let held = intake.finish()?;
    if let Some(shingled) = held.shingled() {
        // Band keys are held per distinct set: copies cost none.
        crate::plan::refuse_over_memory(
            shingled.corpus().distinct_sets() as u64,
            config,
            args.matching.memory,
        )?;
    }
    // The same corpus through both engines: the exact one first, then LSH (or the LSH
    // Ensemble), each chosen by the run seam, never by a branch here.
    let (exact_run, exact_stats, ready) = found(&pipeline, held, Method::Exact, &mut bars)?;
    let held = ready.into_held().context("the corpus is held in memory")?;
    let (lsh_run, lsh_stats, ready) = found(
        &pipeline,
        held,
        Method::Lsh,
        &mut (&mut bars, &mut recorded),
    )?;
    let exact = exact_run.pairs;
    let lsh = lsh_run.pairs;
    let contained = lsh_run.contained;
    let corpus = ready
        .shingled()
        .context("the corpus is held in memory")?
        .corpus();
    let run = Run {
        docs: &docs,
        corpus,
        plan: config.candidate_curve(),
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
        let mut data = report_run::base(
            title,
            config,
            false,
            &docs,
            &lsh_stats,
            recorded.as_ref(),
            read_time,
        );
        match lsh_run.totals {
            Some(totals) => {
                let mut sample = report_run::PairSample::default();
                sample.add(&lsh);
                report_run::add_pairs(&mut data, &totals, Some(&sample), &docs);
            }
            None => report_run::add_containment(
                &mut data,
                &contained,
                &lsh_stats,
                Some(pipeline.ensemble_plan()),
                crate::containment::set_sizes(corpus),
                &docs,
            ),
        }
        data.counts.push(neardup_report::Count::new(
            "exact pairs",
            exact.len() as u64,
        ));
        data.eval = Some(eval.clone());
        report_run::write(path, &data, &args.input.inputs)?;
    }
    {
        // Built under --quiet too: its warnings are about the data, and print either way.
        let mut s = Summary::default();
        let skipped = docs.skip_counts(lsh_stats.empty);
        for line in docs.sniffed_formats() {
            s.line("format", line);
        }
        s.stages(
            docs.read_count(),
            docs.inputs.len(),
            read_time,
            &skipped,
            docs.lossy,
            &lsh_stats,
        );
        for w in &docs.warnings {
            s.warning(w);
        }
        s.short_documents(config.shingler().kind(), &lsh_stats);
        s.line(
            "exact",
            format!(
                "{}, {} in {}",
                summary::count(exact_stats.candidates, "candidate", "candidates"),
                summary::count(exact.len() as u64, "pair", "pairs"),
                secs(stage_time(&exact_stats, &[Stage::ExactJoin]))
            ),
        );
        s.print(quiet);
    }
    Ok(if args.json {
        serde_json::to_string(&eval)? + "\n"
    } else {
        render(&eval, &Names::of(config))
    })
}

/// One evaluation's inputs.
struct Run<'a> {
    docs: &'a Documents,
    corpus: &'a Corpus,
    plan: neardup::measure::metrics::CandidateCurve,
    threshold: f64,
    lsh: &'a [Pair],
    exact: &'a [Pair],
}

fn key(p: &Pair) -> (u32, u32) {
    (p.a, p.b)
}

impl Run<'_> {
    fn evaluate(&self, lsh_stats: &Stats, exact_stats: &Stats) -> Evaluation {
        let shingle = stage_time(lsh_stats, &[Stage::Shingle]);
        let lsh_time =
            shingle + stage_time(lsh_stats, &[Stage::Sketch, Stage::Group, Stage::Verify]);
        let exact_time = shingle + stage_time(exact_stats, &[Stage::ExactJoin]);
        Comparison {
            lsh: self.lsh,
            exact: self.exact,
            corpus: self.corpus,
            curve: self.plan,
            threshold: self.threshold,
            lsh_seconds: lsh_time.as_secs_f64(),
            exact_seconds: exact_time.as_secs_f64(),
        }
        .evaluate()
    }

    fn id(&self, doc: u32) -> String {
        self.docs.id(doc).to_string()
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
        let known: std::collections::HashSet<String> = (0..self.docs.len() as u32)
            .map(|d| self.docs.id(d).to_string())
            .collect();
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
        let documents = self.docs.len() as u64;
        LabelScores {
            file: path.display().to_string(),
            ids: labels.documents() as u64,
            unknown_ids: self.unknown_ids(labels).len() as u64,
            methods: predicted
                .iter()
                .map(|(method, grouping)| LabelScore::new(method, grouping, labels, documents))
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
            /// A containment run's: what the pair was judged on (`a` contained in `b`).
            #[serde(skip_serializing_if = "Option::is_none")]
            containment: Option<f64>,
        }
        let inputs: Vec<_> = self.docs.inputs.iter().map(|i| i.path.clone()).collect();
        let mut out = open_output(Some(path), &inputs)?;
        // Containment pairs carry their containment where the Jaccard goes.
        let contained = matches!(self.plan, CandidateCurve::Containment);
        let mut put = |kind, method, a: &str, b: &str, value| -> Result<()> {
            let value = crate::output::round(value);
            let line = Line {
                kind,
                method,
                a,
                b,
                jaccard: value.filter(|_| !contained),
                containment: value.filter(|_| contained),
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
            let doc_of: HashMap<String, u32> = (0..self.docs.len() as u32)
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

/// One engine's pairs, sorted by `(a, b)`: by similarity, or (containment) in the
/// evaluation's form, `a` the contained document and the containment where the Jaccard
/// goes (what the recall is broken down by), with the pairs as found for the report.
#[derive(Default)]
struct Found {
    pairs: Vec<Pair>,
    contained: Vec<neardup::Contained>,
    /// A run by similarity: its totals (for the report).
    totals: Option<neardup::run::PairTotals>,
}

impl neardup::Sink for Found {
    type Error = std::convert::Infallible;
    fn pairs(&mut self, chunk: &[Pair]) -> Result<(), Self::Error> {
        self.pairs.extend_from_slice(chunk);
        Ok(())
    }
    fn contained(&mut self, chunk: &[neardup::Contained]) -> Result<(), Self::Error> {
        self.contained.extend_from_slice(chunk);
        self.pairs.extend(chunk.iter().map(|c| Pair {
            a: c.a,
            b: c.b,
            similarity: neardup::Similarity {
                jaccard: Some(c.containment),
                ..Default::default()
            },
        }));
        Ok(())
    }
}

/// Runs `held` through the engine the run seam chooses for `method`; the corpus comes
/// back ready, to run again or to read.
fn found<'p>(
    pipeline: &'p Pipeline,
    held: Held<'p>,
    method: Method,
    observer: &mut dyn neardup::Observer,
) -> Result<(Found, Stats, Ready<'p>)> {
    let plan = RunPlan::choose(pipeline, &held, method, Goal::Pairs)?;
    let mut ready = pipeline.prepare(held, &plan, observer)?;
    let mut found = Found::default();
    let (outcome, stats) = match pipeline.run(&mut ready, observer, &mut found) {
        Ok(done) => done,
        Err(RunError::Run(e)) => return Err(e.into()),
        Err(RunError::Sink(never)) => match never {},
    };
    if let neardup::Outcome::Pairs(totals) = outcome {
        found.totals = (!plan.engine().is_containment()).then_some(totals);
    }
    found.pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
    Ok((found, stats, ready))
}

/// How the approximate method and the measure are named in the tables.
pub struct Names {
    /// The method's row: `lsh`, `simhash`, `ensemble`.
    row: &'static str,
    /// The method in sentences.
    label: &'static str,
    /// What the recall is broken down by.
    measure: &'static str,
}

impl Names {
    /// The names for a configuration.
    pub fn of(config: &neardup::Config) -> Names {
        if config.measure().from_smaller() {
            Names {
                row: "ensemble",
                label: "LSH Ensemble",
                measure: "containment",
            }
        } else if config.sketch().is_minhash() {
            Names {
                row: "lsh",
                label: "LSH",
                measure: "similarity",
            }
        } else {
            Names {
                row: "simhash",
                label: "SimHash",
                measure: "similarity",
            }
        }
    }
}

/// The shortest run whose time the speed ratio is printed without a warning: below it,
/// fixed costs, page faults and the clock's grain decide the ratio (one input gave 17× to
/// 21× on first runs, 2× on reruns).
const MIN_TIMED_SECS: f64 = 0.1;

/// An expected recall, or `—` where the method has no curve to give one.
fn expected(x: f64) -> String {
    if x.is_nan() {
        "—".to_string()
    } else {
        format!("{x:.4}")
    }
}

/// The evaluation as tables, the methods and measure named by `names`.
pub fn render(e: &Evaluation, names: &Names) -> String {
    let (row, label) = (names.row, names.label);
    let mut out = String::new();
    let _ = writeln!(out, "method   time (incl. shingling)   pairs");
    for (name, m) in [(row, &e.lsh), ("exact", &e.exact)] {
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
        "{label} recall {:.4}, precision {:.4}, {:.2}x the exact join's speed ({} against {}, \
         one run each)",
        e.recall,
        e.precision,
        e.speedup,
        secs(Duration::from_secs_f64(e.lsh.seconds)),
        secs(Duration::from_secs_f64(e.exact.seconds))
    );
    let shortest = e.lsh.seconds.min(e.exact.seconds);
    if shortest < MIN_TIMED_SECS {
        let _ = writeln!(
            out,
            "warning: a run of {} is too short to time (under {MIN_TIMED_SECS} s): the \
             speed ratio is mostly noise and fixed costs; compare speeds on a larger input",
            secs(Duration::from_secs_f64(shortest))
        );
    }
    let d = &e.distinct;
    let _ = writeln!(
        out,
        "{label} recall over distinct texts {:.4} ({} of {} of distinct shingle sets; expected {})",
        d.recall,
        thousands(d.found),
        summary::count(d.pairs, "pair", "pairs"),
        expected(d.expected)
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
        "\nrecall by exact {} (expected: mean S-curve over the pairs in the band)",
        names.measure
    );
    let _ = writeln!(
        out,
        "{:<14}  pairs     found   recall   expected",
        names.measure
    );
    for b in &e.by_similarity {
        let label = if b.closed {
            format!("[{:.2}, {:.2}]", b.low, b.high)
        } else {
            format!("[{:.2}, {:.2})", b.low, b.high)
        };
        let _ = writeln!(
            out,
            "{label:<14} {:>7} {:>9}   {:.4}     {}",
            thousands(b.pairs),
            thousands(b.found),
            b.recall,
            expected(b.expected)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup::measure::evaluation::{Distinct, Method};
    use neardup::measure::metrics::BandRecall;

    fn evaluation() -> Evaluation {
        Evaluation {
            threshold: 0.8,
            lsh: Method {
                seconds: 0.25,
                pairs: 1_203,
            },
            exact: Method {
                seconds: 12.5,
                pairs: 1_226,
            },
            both: 1_203,
            recall: 0.98124,
            precision: 1.0,
            speedup: 50.0,
            distinct: Distinct {
                recall: 0.5,
                found: 1,
                pairs: 2,
                expected: 0.75,
            },
            by_similarity: vec![BandRecall {
                low: 0.99,
                high: 1.0,
                closed: true,
                pairs: 1_226,
                found: 1_203,
                recall: 0.98124,
                expected: 0.99999,
            }],
            labels: Some(LabelScores {
                file: "l.csv".into(),
                ids: 5,
                unknown_ids: 1,
                methods: vec![LabelScore {
                    method: "lsh",
                    precision: 0.5,
                    recall: 0.25,
                    f1: 1.0 / 3.0,
                    adjusted_rand_index: -0.125,
                }],
            }),
        }
    }

    #[test]
    fn evaluation_as_tables() {
        let text = render(
            &evaluation(),
            &Names::of(&neardup::Config::builder().build().unwrap()),
        );
        let want = "\
method   time (incl. shingling)   pairs
lsh                      0.250s   1,203
exact                     12.5s   1,226
both                              1,203
LSH recall 0.9812, precision 1.0000, 50.00x the exact join's speed (0.250s against 12.5s, one run each)
LSH recall over distinct texts 0.5000 (1 of 2 pairs of distinct shingle sets; expected 0.7500)

against the labels in l.csv:
(1 of 5 label ids name no document of the input)
method   precision   recall       F1      ARI
lsh         0.5000   0.2500   0.3333  -0.1250

recall by exact similarity (expected: mean S-curve over the pairs in the band)
similarity      pairs     found   recall   expected
[0.99, 1.00]     1,226     1,203   0.9812     1.0000
";
        assert_eq!(text, want);
    }

    /// A ratio of times too short to mean much says so, with both times.
    #[test]
    fn a_speed_ratio_of_short_runs_is_flagged() {
        let mut e = evaluation();
        e.lsh.seconds = 0.004;
        e.exact.seconds = 0.08;
        e.speedup = 20.0;
        let text = render(&e, &Names::of(&neardup::Config::builder().build().unwrap()));
        assert!(
            text.contains(
                "20.00x the exact join's speed (0.004s against 0.080s, one run each)\n\
                 warning: a run of 0.004s is too short to time (under 0.1 s)"
            ),
            "{text}"
        );
        e.lsh.seconds = 0.1;
        e.exact.seconds = 2.0;
        let text = render(&e, &Names::of(&neardup::Config::builder().build().unwrap()));
        assert!(!text.contains("warning"), "{text}");
    }

    #[test]
    fn evaluation_as_json() {
        // The field order and names are `eval --json`'s format.
        let json = serde_json::to_string(&evaluation()).unwrap();
        assert_eq!(
            json,
            r#"{"threshold":0.8,"lsh":{"seconds":0.25,"pairs":1203},"exact":{"seconds":12.5,"pairs":1226},"both":1203,"recall":0.98124,"precision":1.0,"speedup":50.0,"distinct":{"recall":0.5,"found":1,"pairs":2,"expected":0.75},"by_similarity":[{"low":0.99,"high":1.0,"closed":true,"pairs":1226,"found":1203,"recall":0.98124,"expected":0.99999}],"labels":{"file":"l.csv","ids":5,"unknown_ids":1,"methods":[{"method":"lsh","precision":0.5,"recall":0.25,"f1":0.3333333333333333,"adjusted_rand_index":-0.125}]}}"#
        );
        let mut none = evaluation();
        none.labels = None;
        let json = serde_json::to_string(&none).unwrap();
        assert!(!json.contains("labels"), "{json}");
    }
}
