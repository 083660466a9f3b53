//! `neardup plan`: the S-curve before anything heavy runs, and, given an input, what a run
//! of it will find and cost, extrapolated from a uniform sample.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Context, Result};
use neardup::run::Stage;
use neardup::sketch::SplitMix64;
use neardup::{Config, Goal, KeepPolicy, Pipeline, Quiet, Verification};
use neardup_io::documents::{fail_on_bad, refuse_options_for};

use crate::settings::PlanSettings;
use neardup::measure::plan::{alternatives, estimate, Plan, SampleStats, Throughput};

use crate::plan;
use crate::run::config;
use crate::summary;

/// plan's configuration, resolved right after parsing (`main.rs`): its refusals come
/// before the sample is read.
pub fn resolve(args: &PlanSettings) -> Result<Config> {
    config(&args.matching, Verification::Exact, KeepPolicy::First)
}

pub fn run(args: &PlanSettings, config: &Config) -> Result<String> {
    if config.measure().from_smaller() {
        return containment(args, config);
    }
    if !config.sketch().is_minhash() {
        return simhash(args, config);
    }
    let t = config.threshold();
    let k = config.num_perm();
    let chosen = Plan::from(config.plan());
    let plans = alternatives(chosen, t, k);
    let mut out = format!(
        "S-curves at threshold {t}, {k} permutations. Each column is a band plan written \
         bands × rows: {} × {} is {} bands of {} rows, and a pair becomes a candidate when \
         its signatures agree on every row of at least one band.\n\n",
        chosen.bands, chosen.rows, chosen.bands, chosen.rows
    );
    out.push_str(&plan::curve_table(&plans, t));
    if let Some(svg) = &args.svg {
        std::fs::write(svg, plan::curve_svg_file(&plans, t))
            .with_context(|| format!("cannot write the S-curve plot {}", svg.display()))?;
        let _ = writeln!(out, "\nS-curve plot written to {}", svg.display());
    }
    if args.inputs().is_empty() {
        return Ok(out);
    }

    let read_start = Instant::now();
    let (sample, seen, bytes) = read_sample(args)?;
    let read_secs = read_start.elapsed().as_secs_f64();

    let pipeline = Pipeline::new(config.clone())?;
    let sketched = pipeline.sketch_texts(&sample)?;
    let (_, stats) = pipeline.pairs(&sketched, &mut Quiet);
    let (exact, _) = pipeline.exact_pairs(&sketched, &mut Quiet)?;
    let secs = |stage: Stage| {
        stats
            .timings
            .iter()
            .filter(|(s, _)| *s == stage)
            .map(|(_, d)| d.as_secs_f64())
            .sum::<f64>()
            .max(1e-6)
    };
    // The sample holds at most 10⁶ documents (`--sample`): indices fit a u32.
    let set_sizes: Vec<u64> = (0..sample.len() as u32)
        .map(|d| sketched.corpus().set(d).len() as u64)
        .collect();
    let sample_bytes: u64 = sample.iter().map(|s| s.len() as u64).sum();
    let shingles: u64 = set_sizes.iter().sum();
    let stats_sample = SampleStats {
        documents: seen,
        sample_documents: sample.len() as u64,
        set_sizes,
        text_bytes: sample_bytes,
        raw_bytes: 0,
        collisions: stats.candidates + identical_pairs(sketched.corpus()),
        similar_pairs: exact.iter().filter_map(|p| p.similarity.jaccard).collect(),
    };
    let throughput = Throughput {
        read_bytes: bytes as f64 / read_secs.max(1e-6),
        shingle_bytes: sample_bytes as f64 / secs(Stage::Shingle),
        sketch_hashes: (shingles * k as u64) as f64 / secs(Stage::Sketch),
        group_records: (sample.len() * config.plan().bands()) as f64 / secs(Stage::Group),
        verify_shingles: verify_rate(sketched.corpus()),
    };
    // plan assumes exact verification: no signatures are kept.
    let estimate = estimate(&stats_sample, chosen, k, false, t, &throughput);
    let _ = writeln!(
        out,
        "\nFrom a uniform sample of {} of the {} read:\n",
        sample.len(),
        summary::count(seen, "document", "documents")
    );
    out.push_str(&plan::render_estimate(&estimate));
    if let Some(over) = crate::spill::over_limit(
        args.inputs(),
        &args.input.read_options(),
        args.matching.memory,
    ) {
        let _ = writeln!(
            out,
            "memory fit  spills: the input ({}) may need up to {} in memory, more than {}; \
             pairs, clusters and dedup with LSH would spill to disk (--tmp), the exact join \
             and eval would stop before sketching",
            plan::bytes(over.input),
            plan::bytes(over.need),
            over.named
        );
    } else if let Some((limit, named)) = plan::memory_limit(args.matching.memory) {
        let total = estimate.memory.total();
        let verdict = if total > limit {
            format!(
                "refused: ≈ {} is more than {named}; a run would stop before sketching",
                plan::bytes(total)
            )
        } else {
            format!("fits: ≈ {} is within {named}", plan::bytes(total))
        };
        let _ = writeln!(out, "memory fit  {verdict}");
    }
    for (goal, name) in [(Goal::Pairs, "pairs"), (Goal::Clusters, "clusters, dedup")] {
        let choice = pipeline.choose_method_for_sample(&sketched, seen, goal)?;
        let _ = writeln!(out, "method    {name}: {}", summary::method_choice(&choice));
    }
    let non_empty = sketched.stats().documents - sketched.stats().empty;
    let short = sketched.stats().short_documents;
    if let Some(w) = summary::short_documents_warning(config.shingler().kind(), short, non_empty) {
        let _ = writeln!(out, "\nwarning   {w} (in the sample)");
    }
    Ok(out)
}

/// A uniform sample of the input (reservoir sampling, Algorithm R, seeded so that it is
/// the same every run), with the number of records and text bytes read.
fn read_sample(args: &PlanSettings) -> Result<(Vec<String>, u64, u64)> {
    let input = args.input.clone();
    let opts = input.read_options();
    let (mut seen, mut bytes) = (0u64, 0u64);
    let mut sample: Vec<String> = Vec::with_capacity(args.sample);
    let mut rng = SplitMix64::new(args.matching.seed);
    // A folder of shards is read file by file, as a run reads it.
    let mut files = Vec::new();
    for path in args.inputs() {
        let shards = match path.is_dir() {
            true => neardup_io::documents::shards(path, &opts)?,
            false => None,
        };
        match shards {
            Some(shards) => files.extend(shards.files),
            None => files.push(path.clone()),
        }
    }
    for path in &files {
        let reader = neardup_io::open(path, &opts)?;
        refuse_options_for(reader.format(), reader.sniffed(), path, &input)?;
        for entry in reader {
            let entry = entry?;
            if input.fail_on_error {
                fail_on_bad(&entry)?;
            }
            let Some(record) = entry.into_record() else {
                continue;
            };
            seen += 1;
            bytes += record.text.len() as u64;
            if sample.len() < args.sample {
                sample.push(record.text);
            } else {
                let j = rng.below(seen) as usize;
                if j < args.sample {
                    sample[j] = record.text;
                }
            }
        }
    }
    Ok((sample, seen, bytes))
}

/// `plan --sketch simhash`: SimHash's candidate curve. Its costs are not estimated from a
/// sample (the estimate models bands); `eval` measures a SimHash run on the input.
fn simhash(args: &PlanSettings, config: &neardup::Config) -> Result<String> {
    if !args.inputs().is_empty() {
        crate::errors::usage!(
            "plan estimates what a MinHash run finds and costs from a sample; for --sketch \
             simhash, `neardup eval --sketch simhash` measures recall and time on the input"
        );
    }
    let (t, k) = (config.threshold(), config.hamming());
    let mut out = format!(
        "SimHash at threshold {t}: 64-bit fingerprints of the shingle counts, candidates \
         within {k} bits. P(candidate | s) for sets of equal size whose shingles occur once \
         (each bit differs with probability arccos(2s / (1 + s)) / π):\n\n"
    );
    for (s, at_t) in plan::with_threshold(&summary::CURVE_POINTS, t) {
        let mark = if at_t { " (threshold)" } else { "" };
        let _ = writeln!(
            out,
            "  s = {s:<5} {:.3}{mark}",
            neardup::candidates::simhash_probability(s, k)
        );
    }
    Ok(out)
}

/// Query sizes (shingles) the containment plan is tabulated for without an input.
const QUERY_SIZES: [usize; 5] = [16, 64, 256, 1_024, 4_096];

/// `plan --measure containment`: the size partitions and, for queries of each size, the
/// rows per band and the chance of finding a pair at exactly the threshold in the
/// partition's worst case; with an input, the partitions of a sample and the recall the
/// search has on it against the exact containment join.
fn containment(args: &PlanSettings, config: &neardup::Config) -> Result<String> {
    use neardup::candidates::EnsemblePlan;
    let pipeline = Pipeline::new(config.clone())?;
    let plan = pipeline.ensemble_plan();
    let t = config.threshold();
    let mut out = format!(
        "Containment at threshold {t} (|A ∩ B| / |A|, A the smaller), {} permutations: \
         documents are partitioned by set size (powers of two); a query of a shingles looks \
         in partition j with the rows per band that find a pair at containment t there with \
         probability {} when one of 1, 2, 4 or 8 rows can (its least Jaccard is \
         t·a / (a + u − t·a), u the partition's largest size).\n\n",
        plan.num_perm(),
        neardup::candidates::ENSEMBLE_RECALL
    );
    let row = |out: &mut String, a: usize, j: usize| {
        let r = plan.row(a, j);
        let _ = writeln!(
            out,
            "  query {a:>6} in {:>7}–{:<7}  least Jaccard {:.4}  rows {}  P(found at t) {:.3}",
            r.lower(),
            r.upper(),
            r.jaccard_floor,
            r.rows,
            r.recall
        );
    };
    if args.inputs().is_empty() {
        for a in QUERY_SIZES {
            let own = EnsemblePlan::partition(a);
            for j in [own, own + 2, own + 4, own + 6] {
                row(&mut out, a, j);
            }
        }
        return Ok(out);
    }
    let (sample, seen, _) = read_sample(args)?;
    let shingled = pipeline.shingle(&sample)?;
    let partitions = EnsemblePlan::partitions_of(crate::containment::set_sizes(shingled.corpus()));
    let documents: u64 = partitions.iter().map(|p| p.documents).sum();
    let _ = writeln!(
        out,
        "From a uniform sample of {} of the {} read, by partition: its share of the \
         documents, and its worst case for the smallest query size in the sample:\n",
        sample.len(),
        summary::count(seen, "document", "documents")
    );
    let smallest = partitions.first().map_or(1, |p| p.smallest);
    for p in &partitions {
        let j = p.partition;
        let _ = write!(
            out,
            "partition {:>7}–{:<7} {:>6.1} %",
            1usize << j,
            EnsemblePlan::upper(j),
            100.0 * p.documents as f64 / documents.max(1) as f64
        );
        row(&mut out, smallest.min(EnsemblePlan::upper(j)), j);
    }
    let (found, _) = pipeline.containment_pairs(&shingled, &mut Quiet)?;
    let (truth, _) = pipeline.exact_containment_pairs(&shingled, &mut Quiet);
    let recall = if truth.is_empty() {
        1.0
    } else {
        found.len() as f64 / truth.len() as f64
    };
    let _ = writeln!(
        out,
        "\nOn the sample: {} contained at {t}, {} found by the search: recall {recall:.4} \
         (precision 1: every candidate is verified).",
        summary::count(truth.len() as u64, "pair", "pairs"),
        found.len()
    );
    Ok(out)
}

/// Pairs among identical copies: LSH never sees them as candidates, but they are pairs.
fn identical_pairs(corpus: &neardup::corpus::Corpus) -> u64 {
    corpus
        .identical_groups()
        .iter()
        .map(|g| (g.len() * (g.len() - 1) / 2) as u64)
        .sum()
}

/// Shingles per second of exact Jaccard, timed on neighbouring documents of the sample.
/// A sample's own verify stage is too short to time: it has a few hundred candidates, and
/// fixed costs would dominate.
fn verify_rate(corpus: &neardup::corpus::Corpus) -> f64 {
    /// Shingles compared at least, so the timing is well above the clock's resolution.
    const WORK: usize = 20_000_000;
    let n = corpus.len() as u32; // a sample: at most 10⁶ documents
    if n < 2 {
        return 0.0;
    }
    let (mut compared, mut sum) = (0usize, 0.0);
    let start = Instant::now();
    while compared < WORK {
        for d in 0..n - 1 {
            let (a, b) = (corpus.set(d), corpus.set(d + 1));
            sum += neardup::verify::jaccard(a, b);
            compared += a.len() + b.len();
        }
        if compared == 0 {
            return 0.0;
        }
    }
    std::hint::black_box(sum);
    compared as f64 / start.elapsed().as_secs_f64().max(1e-9)
}
