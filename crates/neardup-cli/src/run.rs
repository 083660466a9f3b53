//! `pairs`, `clusters` and `dedup`: read, match, write, summarize.

use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use neardup::{
    Cluster, Config, Corpus, KeepPolicy, Normalization, Pipeline, ShingleKind, SketchKind,
    Verification,
};
use neardup_io::{DedupWriter, Format};

use crate::args::{
    KeepArg, MatchArgs, NormalizeArg, OutputFormatArg, RunArgs, SketchArg, VerifyArg,
};
use crate::input::Documents;
use crate::output::{open_output, write_clusters, write_pairs, OutputFormat};
use crate::progress::Bars;
use crate::report_run;
use crate::summary::{self, secs, thousands, Summary};

/// What a run produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pairs,
    Clusters,
    Dedup,
}

/// A validated configuration from the matching options.
pub fn config(m: &MatchArgs, verify: VerifyArg, keep: KeepArg) -> Result<Config> {
    let shingle: ShingleKind = m.shingle.parse()?;
    Ok(Config::builder()
        .shingle(shingle)
        .normalization(match (m.no_normalize, m.normalize) {
            (true, _) | (_, NormalizeArg::None) => Normalization::None,
            (_, NormalizeArg::Basic) => Normalization::Basic,
            (_, NormalizeArg::Nfkc) => Normalization::Nfkc,
            (_, NormalizeArg::Aggressive) => Normalization::Aggressive,
        })
        .num_perm(m.num_perm)
        .seed(m.seed)
        .max_shingles(m.max_shingles)
        .neighbours(!m.no_neighbours)
        .sketch(match m.sketch {
            SketchArg::Oph => SketchKind::OnePermutation,
            SketchArg::Classic => SketchKind::Classic,
        })
        .threshold(m.threshold)
        .bands(m.bands)
        .rows(m.rows)
        .verification(match verify {
            VerifyArg::Exact => Verification::Exact,
            VerifyArg::Estimate => Verification::Estimate,
            VerifyArg::Triage => Verification::Triage,
            VerifyArg::None => Verification::None,
        })
        .keep(match keep {
            KeepArg::First => KeepPolicy::First,
            KeepArg::Longest => KeepPolicy::Longest,
            KeepArg::Shortest => KeepPolicy::Shortest,
        })
        .build()?)
}

/// Runs one of the three matching commands.
pub fn run(mode: Mode, args: &RunArgs) -> Result<()> {
    let started = Instant::now();
    let config = config(&args.matching, args.verify, args.keep)?;
    let format = match args.output_format {
        Some(_) if mode == Mode::Dedup => {
            bail!("--output-format is for pairs and clusters; dedup writes the input's format")
        }
        Some(OutputFormatArg::Tsv) => OutputFormat::Tsv,
        Some(OutputFormatArg::Jsonl) | None => OutputFormat::Jsonl,
    };
    let quiet = args.runtime.quiet;
    if !quiet {
        eprint!("{}", summary::plan(&config, args.exact));
    }
    let bars = Bars::new(quiet);
    let pipeline = Pipeline::new(config.clone())?
        .with_progress(Box::new(bars.clone()))
        .record_similarities(args.report.is_some());
    let read_start = Instant::now();
    let (docs, mut prepared) = read_and_shingle(args, mode, &pipeline, &bars)?;
    let read_time = read_start.elapsed();
    if let Some(out) = &args.output {
        if docs.is_input(out) {
            bail!(
                "refusing to overwrite input {} with the output",
                out.display()
            );
        }
    }
    if !args.exact {
        pipeline.sketch(&mut prepared);
    }
    if let Some(path) = &args.skipped {
        write_skipped(path, &docs.all_skipped(&prepared.corpus))?;
    }
    let mut summary = Summary::default();
    // Writes the report if asked, with what is common to every mode plus `add`.
    let report_time = std::cell::Cell::new(None);
    let report =
        |stats: &neardup::Stats, add: &dyn Fn(&mut crate::report::ReportData)| -> Result<()> {
            if let Some(path) = &args.report {
                let start = Instant::now();
                let mut data = report_run::base(
                    report_run::title(name(mode), &args.input.inputs),
                    &config,
                    args.exact,
                    &docs,
                    stats,
                    read_time,
                );
                add(&mut data);
                report_run::write(path, &data)?;
                report_time.set(Some(start.elapsed()));
            }
            Ok(())
        };
    let write_start;
    let (stats, result_line) = match mode {
        Mode::Pairs => {
            let (pairs, stats) = if args.exact {
                pipeline.exact_pair_set(&prepared)
            } else {
                pipeline.pair_set(&prepared)
            };
            write_start = Instant::now();
            let mut out = open_output(args.output.as_deref())?;
            write_pairs(&mut out, &pairs, &docs.ids, format)?;
            let line = format!(
                "{} pairs among {} documents",
                thousands(pairs.len()),
                thousands(pairs.documents())
            );
            report(&stats, &|data| report_run::add_pairs(data, &pairs, &docs))?;
            (stats, line)
        }
        Mode::Clusters | Mode::Dedup => {
            let (clusters, stats) = if args.exact {
                pipeline.exact_clusters(&prepared)
            } else {
                pipeline.clusters(&prepared)
            };
            write_start = Instant::now();
            if mode == Mode::Clusters {
                let mut out = open_output(args.output.as_deref())?;
                write_clusters(&mut out, &clusters, &docs.ids, format)?;
            } else {
                write_survivors(&docs, &clusters, &prepared.corpus, args)?;
            }
            let removed: usize = clusters.iter().map(|c| c.duplicates.len()).sum();
            let empty = stats.empty;
            let skipped = docs.skipped.len() as u64 + empty;
            report(&stats, &|data| {
                report_run::add_clusters(data, &clusters, &docs, skipped)
            })?;
            let kept = docs.read_count() - removed as u64 - skipped;
            let line = format!(
                "{} clusters | read {} = kept {} + removed {} + skipped {}",
                thousands(clusters.len() as u64),
                thousands(docs.read_count()),
                thousands(kept),
                thousands(removed as u64),
                thousands(skipped)
            );
            (stats, line)
        }
    };
    if !quiet {
        let skipped = docs.skip_counts(&[("empty", stats.empty)]);
        summary.stages(
            docs.read_count(),
            docs.inputs.len(),
            read_time,
            &skipped,
            docs.lossy,
            &stats,
        );
        summary.short_documents(config.shingler().kind(), &stats);
        let (dup_ids, first) = docs.duplicate_ids();
        if let Some(first) = first {
            summary.line(
                "warning",
                format!(
                    "{dup_ids} ids belong to more than one record (first: {first:?}); \
                     the records stay apart, but the output names them alike"
                ),
            );
        }
        summary.line("write", secs(write_start.elapsed()));
        if let Some(t) = report_time.get() {
            summary.line("report", secs(t));
        }
        summary.line("result", result_line);
        summary.line("total", secs(started.elapsed()));
        eprint!("{}", summary.render());
    }
    Ok(())
}

/// Documents handed from the reading thread to shingling at a time.
const READ_BATCH: usize = 1 << 14;

/// Reads the inputs on one thread while the documents read so far are shingled on the
/// others, so neither waits for the other; texts are kept only for the report's examples.
fn read_and_shingle(
    args: &RunArgs,
    mode: Mode,
    pipeline: &Pipeline,
    bars: &Bars,
) -> Result<(Documents, neardup::Prepared)> {
    let keep_texts = args.report.is_some();
    // A few batches in flight bound what is read ahead of shingling.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<String>>(4);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            Documents::read_batches(&args.input, mode == Mode::Dedup, bars, READ_BATCH, |b| {
                tx.send(b).context("shingling stopped")
            })
        });
        let mut preparer = pipeline.preparer();
        let mut texts = Vec::new();
        let mut count = 0usize;
        for batch in rx {
            count += batch.len();
            if count > u32::MAX as usize {
                // Dropping the receiver stops the reader at its next send.
                break;
            }
            preparer.add(&batch);
            if keep_texts {
                texts.extend(batch);
            }
        }
        let read = reader
            .join()
            .map_err(|_| anyhow::anyhow!("the reading thread panicked"))?;
        if count > u32::MAX as usize {
            bail!(neardup::Error::TooManyDocuments(count));
        }
        let mut docs = read?;
        docs.texts = texts;
        Ok((docs, preparer.finish()))
    })
}

/// The skipped list: one JSON object per skipped record.
fn write_skipped(path: &std::path::Path, skipped: &[crate::input::SkippedRecord]) -> Result<()> {
    let mut out = open_output(Some(path))?;
    for s in skipped {
        serde_json::to_writer(&mut out, s)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// The command's name, for the report's title.
fn name(mode: Mode) -> &'static str {
    match mode {
        Mode::Pairs => "pairs",
        Mode::Clusters => "clusters",
        Mode::Dedup => "dedup",
    }
}

/// Writes every document that is neither removed nor skipped, in input order.
fn write_survivors(
    docs: &Documents,
    clusters: &[Cluster],
    corpus: &Corpus,
    args: &RunArgs,
) -> Result<()> {
    let first = docs.inputs.first().context("no input")?;
    for other in &docs.inputs[1..] {
        if other.format != first.format {
            bail!(
                "dedup writes one output in one format, but {} is {} and {} is {}",
                first.path.display(),
                first.format.name(),
                other.path.display(),
                other.format.name()
            );
        }
        if other.header != first.header {
            bail!(
                "dedup writes one header, but {} and {} have different headers",
                first.path.display(),
                other.path.display()
            );
        }
    }
    if first.format == Format::Dir && args.output.is_none() {
        bail!("dedup of a directory needs -o DIR");
    }
    let mut removed = vec![false; docs.ids.len()];
    for c in clusters {
        for d in &c.duplicates {
            removed[d.doc as usize] = true;
        }
    }
    let output = args
        .output
        .as_deref()
        .filter(|p| *p != std::path::Path::new("-"));
    let mut writer = DedupWriter::create(output, first.format, first.header.as_deref())?;
    for (doc, record) in docs.records.iter().enumerate() {
        // Empty documents are skipped, not kept: they are reported, not written.
        if !removed[doc] && corpus.skip_reason(doc as u32).is_none() {
            writer.write(record)?;
        }
    }
    writer.finish()?;
    Ok(())
}
