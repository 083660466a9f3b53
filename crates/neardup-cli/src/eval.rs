//! `eval`: LSH and the exact join on the same input, side by side.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::Result;
use neardup::{Pair, Pipeline, Stage, Stats};

use crate::args::{EvalArgs, KeepArg, VerifyArg};
use crate::input::Documents;
use crate::progress::Bars;
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
    let pipeline = Pipeline::new(config)?.with_progress(Box::new(bars));

    let mut prepared = pipeline.shingle(&docs.texts);
    let (exact, exact_stats) = pipeline.exact_pairs(&prepared);
    pipeline.sketch(&mut prepared);
    let (lsh, lsh_stats) = pipeline.pairs(&prepared);

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
