//! `pairs`, `clusters` and `dedup`: read, match, write, summarize.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use neardup::run::Similarities;
use neardup::{Config, ConfigBuilder, KeepPolicy, Method, Pipeline, Verification};
use neardup_io::documents::Documents;

use crate::errors::usage;
use crate::keep_by::KeepBy;
use crate::output::{finish, open_output};
use crate::progress::Bars;
use crate::ready;
use crate::results::{Outcome, Run};
use crate::settings::{MatchSettings, RunSettings};
use crate::summary::{self, secs, Summary};

/// What a run produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pairs,
    Clusters,
    Dedup,
}

/// A validated configuration from the matching options.
pub fn config(m: &MatchSettings, verify: Verification, keep: KeepPolicy) -> Result<Config> {
    Ok(builder(m, verify, keep)?.build()?)
}

/// The configuration from the matching options, to be built once the command's own are
/// added; refuses the matching options that do not go together.
pub fn builder(m: &MatchSettings, verify: Verification, keep: KeepPolicy) -> Result<ConfigBuilder> {
    // What a sketch kind does not take (--hamming without simhash; --num-perm and
    // --no-neighbours with it) and what containment does not take (bands, --no-neighbours,
    // --verify) are refused by the core's ConfigBuilder::build, for every front end
    // alike; the sketch's refusals are worded here with the command's flags.
    let builder = Config::builder()
        .shingle(m.shingle)
        .normalization(m.normalize)
        .num_perm(m.num_perm)
        .seed(m.seed)
        .max_shingles(m.max_shingles)
        .neighbours(!m.no_neighbours)
        .multiset(m.multiset)
        .sketch(m.sketch.unwrap_or_default())
        .measure(m.measure)
        .threshold(m.threshold)
        .bands(m.bands)
        .rows(m.rows)
        .verification(verify)
        .keep(keep);
    let builder = match m.hamming {
        Some(k) => builder.hamming(k),
        None => builder,
    };
    match builder.clone().build() {
        Err(neardup::Error::HammingWithoutSimHash) => {
            usage!("--hamming is the distance of SimHash fingerprints: give --sketch simhash too")
        }
        Err(neardup::Error::NumPermWithSimHash(_)) => {
            usage!("--num-perm is the length of a MinHash signature; --sketch simhash keeps one 64-bit fingerprint")
        }
        Err(neardup::Error::NoNeighboursWithSimHash) => {
            usage!("--no-neighbours does not apply to --sketch simhash: it looks at no pairs beyond its candidates")
        }
        _ => Ok(builder),
    }
}

/// Refuses options that do not go together, before any work (an option that never
/// applies to the command is not offered by it).
fn refuse_inapplicable(mode: Mode, args: &RunSettings) -> Result<()> {
    crate::containment::refuse(mode, args)?;
    crate::parquet_output::refuse(args, mode == Mode::Dedup)?;
    if args.drop_all && mode == Mode::Clusters {
        usage!("--drop-all decides what dedup and annotate write; clusters lists each cluster whole, its kept record first");
    }
    if args.method == Method::Exact {
        if let Some(flag) = lsh_option(args) {
            usage!("{flag} is an LSH option; --method exact runs the exact join, which verifies every pair exactly");
        }
    }
    Ok(())
}

/// Refuses an output that is an input (by device and inode), an output named twice, and
/// a `--force` that would delete a directory holding an input.
fn check_outputs(args: &RunSettings) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = [
        ("-o", args.output.as_deref()),
        ("--skipped", args.skipped.as_deref()),
        ("--report", args.report.as_deref()),
        ("--removed", args.removed.as_deref()),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.filter(|p| *p != Path::new("-")).map(|p| (flag, p)))
    .collect();
    let inputs = args.input.inputs.iter().chain(&args.input.reference);
    let inputs: Vec<&PathBuf> = inputs.filter(|p| *p != Path::new("-")).collect();
    for (flag, out) in &outputs {
        for input in inputs.iter().copied() {
            if neardup_io::same_file(input, out) {
                usage!(
                    "refusing to overwrite input {} with the output of {flag}; choose another file",
                    input.display()
                );
            }
            if *flag == "-o" && args.force && contains(out, input) {
                usage!(
                    "--force would replace {}, which holds input {}; choose another output directory",
                    out.display(),
                    input.display()
                );
            }
        }
    }
    for (i, (flag, out)) in outputs.iter().enumerate() {
        if let Some((other, _)) = outputs[..i]
            .iter()
            .find(|(_, o)| o == out || neardup_io::same_file(o, out))
        {
            usage!(
                "{other} and {flag} both name {}; give each output its own file",
                out.display()
            );
        }
    }
    Ok(())
}

/// True if `dir` is `path` or one of its ancestors (both resolved).
fn contains(dir: &Path, path: &Path) -> bool {
    match (std::fs::canonicalize(dir), std::fs::canonicalize(path)) {
        (Ok(dir), Ok(path)) => path.starts_with(dir),
        _ => false,
    }
}

/// A matching command resolved, before any record is read: its settings and what they
/// decide, every refusal the command line allows made.
pub struct Resolved {
    pub mode: Mode,
    pub settings: RunSettings,
    pub config: Config,
    pub keep_by: Option<KeepBy>,
}

/// Resolves a matching command right after parsing (`main.rs`), its refusals in this
/// order: options that do not apply or go together, outputs that are inputs or named
/// twice (by the file system), dedup's output where the inputs' shape is known without
/// reading a record, the matching options, `--keep-by`. Whether the run spills, and the
/// refusals that come with it, are the run's plan: [`run`] decides them, still before
/// reading.
pub fn resolve(mode: Mode, settings: RunSettings) -> Result<Resolved> {
    refuse_inapplicable(mode, &settings)?;
    check_outputs(&settings)?;
    if mode == Mode::Dedup {
        if let Some(annotate) = &settings.annotate {
            crate::annotate_output::refuse_before_reading(&settings, annotate)?;
        }
        crate::dedup_output::refuse_before_reading(&settings)?;
    }
    let config = builder(
        &settings.matching,
        settings.verify,
        settings.keep.unwrap_or_default(),
    )?
    .allow_truncated(settings.allow_truncated)
    .build()?;
    let keep_by = settings.keep_by.as_deref().map(KeepBy::parse).transpose()?;
    Ok(Resolved {
        mode,
        settings,
        config,
        keep_by,
    })
}

/// Runs one of the three matching commands.
pub fn run(resolved: &Resolved) -> Result<()> {
    let started = Instant::now();
    let (mode, args, config) = (resolved.mode, &resolved.settings, &resolved.config);
    let keep_by = &resolved.keep_by;
    let format = args.output_format.unwrap_or_default();
    let bars = Bars::new(args.runtime.quiet);
    let pipeline = Pipeline::new(config.clone())?;
    let spill = crate::spill::decide(args, config)?;
    let read = ready::read(
        mode,
        args,
        &pipeline,
        &bars,
        spill.as_ref(),
        keep_by.as_ref(),
    )?;
    let mut docs = read.docs;
    if mode == Mode::Dedup {
        if let Some(annotate) = &args.annotate {
            crate::annotate_output::refuse_after_reading(&docs, annotate)?;
        }
        crate::dedup_output::refuse_after_reading(&docs, args)?;
    }
    let mut ready = ready::prepare(mode, args, &pipeline, &bars, read.held, spill.as_ref())?;
    let exact = ready.plan().engine().is_exact();
    // Documents without shingles, which every mode reports as skipped.
    let empty: Vec<u32> = (0..docs.len() as u32)
        .filter(|&d| !ready.has_shingles(d))
        .collect();
    let has_shingles = |d: u32| empty.binary_search(&d).is_err();
    if let Some(path) = &args.skipped {
        let mut out = open_output(Some(path), &args.input.inputs)?;
        docs.write_skipped(&has_shingles, &mut out)
            .with_context(|| format!("cannot write the skipped list {}", path.display()))?;
        finish(out)?;
    }
    let mut run = Run {
        mode,
        args,
        pipeline: &pipeline,
        bars: &bars,
        docs: &docs,
        format,
        exact,
        read_time: read.read_time,
        recorded: args.report.is_some().then(Similarities::default),
        report_time: std::cell::Cell::new(None),
    };
    let outcome = match mode {
        Mode::Pairs => run.pairs(&mut ready)?,
        Mode::Clusters | Mode::Dedup => run.clusters(&mut ready, &has_shingles)?,
    };
    let report_time = run.report_time.get();
    let summary = summarize(&mut docs, config, read.read_time, &outcome);
    finish_summary(summary, outcome, report_time, started, args.runtime.quiet);
    Ok(())
}

/// The summary's counts and warnings, from reading to the result's stats. Built under
/// --quiet too: its warnings are about the data, and print either way.
fn summarize(
    docs: &mut Documents,
    config: &Config,
    read_time: Duration,
    outcome: &Outcome,
) -> Summary {
    let stats = &outcome.stats;
    let mut summary = Summary::default();
    let skipped = docs.skip_counts(stats.empty);
    for line in docs.sniffed_formats() {
        summary.line("format", line);
    }
    summary.stages(
        docs.read_count(),
        docs.inputs.len(),
        read_time,
        &skipped,
        docs.lossy,
        stats,
    );
    for w in &docs.warnings {
        summary.warning(w);
    }
    if config.measure().from_smaller() && stats.truncated > 0 {
        summary.warning(format!(
            "{} longer than --max-shingles: their containment is of their first {} only",
            summary::count(stats.truncated, "document is", "documents are"),
            summary::count(
                config.shingler().shingle_cap() as u64,
                "shingle",
                "shingles"
            )
        ));
    }
    summary.short_documents(config.shingler().kind(), stats);
    let (dup_ids, first) = docs.duplicate_ids();
    if let Some(first) = first {
        summary.warning(format!(
            "{} to more than one record (first: {first:?}); the records stay apart, but \
             the output names them alike",
            summary::count(dup_ids as u64, "id belongs", "ids belong")
        ));
    }
    if let Some(line) = docs.excluded_line() {
        summary.line("left out", line);
    }
    summary
}

/// The summary's last lines (write, report, result, total, peak), then the summary
/// printed.
fn finish_summary(
    mut summary: Summary,
    outcome: Outcome,
    report_time: Option<Duration>,
    started: Instant,
    quiet: bool,
) {
    summary.line("write", secs(outcome.write_time));
    if let Some(t) = report_time {
        summary.line("report", secs(t));
    }
    summary.line("result", outcome.line);
    for line in outcome.per_input {
        summary.line("input", line);
    }
    summary.line("total", secs(started.elapsed()));
    if let Some(peak) = crate::plan::peak_memory() {
        summary.line("peak", format!("{} resident", crate::plan::bytes(peak)));
    }
    summary.print(quiet);
}

/// The command's name, for the report's title.
pub fn name(mode: Mode) -> &'static str {
    match mode {
        Mode::Pairs => "pairs",
        Mode::Clusters => "clusters",
        Mode::Dedup => "dedup",
    }
}

/// The first LSH option given on the command line, if any.
pub fn lsh_option(args: &RunSettings) -> Option<&'static str> {
    let m = &args.matching;
    [
        ("--bands", m.bands.is_some()),
        ("--sketch", m.sketch.is_some()),
        ("--num-perm", m.num_perm != neardup::defaults::NUM_PERM),
        ("--no-neighbours", m.no_neighbours),
        ("--verify", args.verify != Verification::Exact),
    ]
    .into_iter()
    .find_map(|(flag, given)| given.then_some(flag))
}
