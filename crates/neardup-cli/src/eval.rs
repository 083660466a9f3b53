//! `eval`: LSH and the exact join on the same input, side by side.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::Result;
use neardup::{Pair, Pipeline, Stage, Stats};

use crate::args::{EvalArgs, KeepArg, VerifyArg};
use crate::input::Documents;
use crate::labels::{adjusted_rand_index, pair_metrics, read_labels, Grouping};
use crate::progress::Bars;
use crate::report_run;
use crate::run::config;
use crate::summary::{self, secs, thousands, Summary};

/// Similarity bands in which recall is broken down.
const BANDS: [f64; 6] = [0.8, 0.85, 0.9, 0.95, 0.99, 1.0];

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
        eprint!("{}", summary::plan(&config, false));
    }
    let t = config.threshold();
    let plan = config.plan();
    let bars = Bars::new(quiet);
    let read_start = Instant::now();
    let docs = Documents::read(&args.input, false, &bars)?;
    let read_time = read_start.elapsed();
    let pipeline = Pipeline::new(config.clone())?
        .with_progress(Box::new(bars))
        .record_similarities(args.report.is_some());

    let mut prepared = pipeline.shingle(&docs.texts);
    let (exact, exact_stats) = pipeline.exact_pairs(&prepared);
    pipeline.sketch(&mut prepared);
    let (lsh_set, lsh_stats) = pipeline.pair_set(&prepared);
    let lsh = lsh_set.to_vec();

    let shingle = stage_time(&lsh_stats, &[Stage::Shingle]);
    let lsh_time = shingle + stage_time(&lsh_stats, &[Stage::Sketch, Stage::Group, Stage::Verify]);
    let exact_time = shingle + stage_time(&exact_stats, &[Stage::ExactJoin]);
    let key = |p: &Pair| (p.a, p.b);
    let exact_keys: Vec<(u32, u32)> = exact.iter().map(key).collect();
    let both = lsh
        .iter()
        .filter(|p| exact_keys.binary_search(&key(p)).is_ok())
        .count();
    let recall = ratio(both, exact.len());
    let precision = ratio(both, lsh.len());
    // Counted once per distinct pair of shingle sets: identical copies of a document hit
    // or miss together, so per-pair recall can swing with one miss.
    let corpus = &prepared.corpus;
    let distinct = |pairs: &[Pair]| -> Vec<(u32, u32)> {
        pairs
            .iter()
            .filter(|p| corpus.representative(p.a) == p.a && corpus.representative(p.b) == p.b)
            .map(key)
            .collect()
    };
    let (exact_distinct, lsh_distinct) = (distinct(&exact), distinct(&lsh));
    // What the S-curve promises for them: independent of how copies cluster.
    let distinct_expected = exact
        .iter()
        .filter(|p| corpus.representative(p.a) == p.a && corpus.representative(p.b) == p.b)
        .map(|p| plan.probability(p.similarity.jaccard.unwrap_or(0.0)))
        .sum::<f64>()
        / exact_distinct.len().max(1) as f64;
    let distinct_recall = ratio(
        lsh_distinct
            .iter()
            .filter(|k| exact_distinct.binary_search(k).is_ok())
            .count(),
        exact_distinct.len(),
    );

    let mut out = String::new();
    let _ = writeln!(out, "method   time (incl. shingling)   pairs");
    let _ = writeln!(
        out,
        "lsh      {:>22}   {}",
        secs(lsh_time),
        thousands(lsh.len() as u64)
    );
    let _ = writeln!(
        out,
        "exact    {:>22}   {}",
        secs(exact_time),
        thousands(exact.len() as u64)
    );
    let _ = writeln!(out, "both     {:>22}   {}", "", thousands(both as u64));
    let _ = writeln!(
        out,
        "LSH recall {recall:.4}, precision {precision:.4}, {:.2}x the exact join's speed",
        exact_time.as_secs_f64() / lsh_time.as_secs_f64().max(1e-9)
    );
    let _ = writeln!(
        out,
        "LSH recall over distinct texts {distinct_recall:.4} ({} of {} pairs of distinct shingle sets; expected {distinct_expected:.4})",
        thousands(lsh_distinct.len() as u64),
        thousands(exact_distinct.len() as u64)
    );
    let mut metrics = vec![
        ("LSH recall".to_string(), format!("{recall:.4}")),
        ("LSH precision".to_string(), format!("{precision:.4}")),
        (
            "LSH recall over distinct texts".to_string(),
            format!("{distinct_recall:.4}"),
        ),
        ("LSH time".to_string(), secs(lsh_time)),
        ("exact join time".to_string(), secs(exact_time)),
    ];
    if let Some(path) = &args.labels {
        let labels = read_labels(path)?;
        let ids = |p: &Pair| {
            (
                docs.ids[p.a as usize].to_string(),
                docs.ids[p.b as usize].to_string(),
            )
        };
        let _ = writeln!(out, "\nagainst the labels in {}:", path.display());
        let _ = writeln!(out, "method   precision   recall       F1      ARI");
        for (name, pairs) in [("lsh", &lsh), ("exact", &exact)] {
            let named: Vec<(String, String)> = pairs.iter().map(ids).collect();
            let predicted =
                Grouping::from_pairs(named.iter().map(|(a, b)| (a.as_str(), b.as_str())));
            let m = pair_metrics(&predicted, &labels);
            let ari = adjusted_rand_index(&predicted, &labels, docs.texts.len() as u64);
            let _ = writeln!(
                out,
                "{name:<8} {:>9.4} {:>8.4} {:>8.4} {ari:>8.4}",
                m.precision(),
                m.recall(),
                m.f1()
            );
            metrics.extend([
                (
                    format!("{name} label precision"),
                    format!("{:.4}", m.precision()),
                ),
                (format!("{name} label recall"), format!("{:.4}", m.recall())),
                (format!("{name} label F1"), format!("{:.4}", m.f1())),
                (format!("{name} adjusted Rand index"), format!("{ari:.4}")),
            ]);
        }
    }
    if let Some(path) = &args.report {
        let title = report_run::title("eval", &args.input.inputs);
        let mut data = report_run::base(title, &config, false, &docs, &lsh_stats, read_time);
        report_run::add_pairs(&mut data, &lsh_set, &docs);
        data.counts.push(("exact pairs".into(), exact.len() as u64));
        data.eval = Some(metrics);
        report_run::write(path, &data)?;
    }
    let _ = writeln!(
        out,
        "\nrecall by exact similarity (expected: mean S-curve over the pairs in the band)"
    );
    let _ = writeln!(out, "similarity      pairs     found   recall   expected");
    let mut lo = t;
    for &hi in BANDS
        .iter()
        .filter(|&&b| b > t)
        .chain(std::iter::once(&f64::INFINITY))
    {
        let in_band: Vec<&Pair> = exact
            .iter()
            .filter(|p| {
                let j = p.similarity.jaccard.unwrap_or(0.0);
                j >= lo && (j < hi || (hi.is_infinite() && j <= 1.0))
            })
            .collect();
        if !in_band.is_empty() {
            let found = in_band
                .iter()
                .filter(|p| lsh.binary_search_by_key(&key(p), key).is_ok())
                .count();
            let expected = in_band
                .iter()
                .map(|p| plan.probability(p.similarity.jaccard.unwrap_or(0.0)))
                .sum::<f64>()
                / in_band.len() as f64;
            let label = if hi.is_infinite() {
                format!("[{lo:.2}, 1.00]")
            } else {
                format!("[{lo:.2}, {hi:.2})")
            };
            let _ = writeln!(
                out,
                "{label:<14} {:>7} {:>9}   {:.4}     {expected:.4}",
                thousands(in_band.len() as u64),
                thousands(found as u64),
                ratio(found, in_band.len())
            );
        }
        lo = hi;
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
        s.short_documents(config.shingler().kind(), &lsh_stats);
        let exact_line = stage_time(&exact_stats, &[Stage::ExactJoin]);
        s.line(
            "exact",
            format!(
                "{} candidates, {} pairs in {}",
                thousands(exact_stats.candidates),
                thousands(exact.len() as u64),
                secs(exact_line)
            ),
        );
        eprint!("{}", s.render());
    }
    Ok(out)
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}
