//! `pairs`, `clusters` and `dedup`: read, match, write, summarize.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use neardup::{
    Config, ConfigBuilder, Goal, KeepPolicy, Measure, Method, Normalization, Pipeline, Shingled,
    Similarities, Sketched, Verification,
};

use crate::args::{InputArgs, MatchArgs, OutputFormatArg, RunArgs, DEFAULT_NUM_PERM};
use crate::input::{BadRecord, Documents};
use crate::keep_by::KeepBy;
use crate::output::{finish, open_output, write_clusters, OutputFormat, PairWriter};
use crate::progress::Bars;
use crate::report_run;
use crate::summary::{self, secs, thousands, Summary};
use crate::usage::usage;

/// What a run produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pairs,
    Clusters,
    Dedup,
}

/// A validated configuration from the matching options.
pub fn config(m: &MatchArgs, verify: Verification, keep: KeepPolicy) -> Result<Config> {
    Ok(builder(m, verify, keep)?.build()?)
}

/// The configuration from the matching options, to be built once the command's own are
/// added; refuses the matching options that do not go together.
pub fn builder(m: &MatchArgs, verify: Verification, keep: KeepPolicy) -> Result<ConfigBuilder> {
    if m.hamming.is_some() && m.sketch != Some(neardup::SketchKind::SimHash) {
        usage!("--hamming is the distance of SimHash fingerprints: give --sketch simhash too");
    }
    if m.sketch == Some(neardup::SketchKind::SimHash) {
        if m.num_perm != DEFAULT_NUM_PERM {
            usage!("--num-perm is the length of a MinHash signature; --sketch simhash keeps one 64-bit fingerprint");
        }
        if m.no_neighbours {
            usage!("--no-neighbours does not apply to --sketch simhash: it looks at no pairs beyond its candidates");
        }
    }
    if m.measure == Measure::Containment {
        if m.bands.is_some() {
            usage!(
                "--bands and --rows do not apply to --measure containment: the rows per band are \
                 chosen for each size partition (see `neardup plan --measure containment`)"
            );
        }
        if m.no_neighbours {
            usage!("--no-neighbours does not apply to --measure containment (it has no steps beyond the buckets)");
        }
    }
    Ok(Config::builder()
        .shingle(m.shingle)
        .normalization(if m.no_normalize {
            Normalization::None
        } else {
            m.normalize
        })
        .num_perm(m.num_perm)
        .seed(m.seed)
        .max_shingles(m.max_shingles)
        .neighbours(!m.no_neighbours)
        .multiset(m.multiset)
        .sketch(m.sketch.unwrap_or_default())
        .hamming(m.hamming.unwrap_or(neardup::DEFAULT_HAMMING))
        .measure(m.measure)
        .threshold(m.threshold)
        .bands(m.bands)
        .rows(m.rows)
        .verification(verify)
        .keep(keep))
}

/// Refuses options that do not go together, before any work (an option that never
/// applies to the command is not offered by it).
fn refuse_inapplicable(mode: Mode, args: &RunArgs) -> Result<()> {
    if args.matching.measure == Measure::Containment {
        crate::contain::refuse(mode, args)?;
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
fn check_outputs(args: &RunArgs) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = [
        ("-o", args.output.as_deref()),
        ("--skipped", args.skipped.as_deref()),
        ("--report", args.report.as_deref()),
        ("--removed", args.removed.as_deref()),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.filter(|p| *p != Path::new("-")).map(|p| (flag, p)))
    .collect();
    for (flag, out) in &outputs {
        for input in args.input.inputs.iter().filter(|p| *p != Path::new("-")) {
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

/// Runs one of the three matching commands.
pub fn run(mode: Mode, args: &RunArgs) -> Result<()> {
    let started = Instant::now();
    refuse_inapplicable(mode, args)?;
    check_outputs(args)?;
    if mode == Mode::Dedup {
        crate::dedup_output::refuse_before_reading(args)?;
    }
    let config = builder(&args.matching, args.verify, args.keep.unwrap_or_default())?
        .allow_truncated(args.allow_truncated)
        .build()?;
    let format = match args.output_format {
        Some(OutputFormatArg::Tsv) => OutputFormat::Tsv,
        Some(OutputFormatArg::Jsonl) | None => OutputFormat::Jsonl,
    };
    let quiet = args.runtime.quiet;
    let bars = Bars::new(quiet);
    let pipeline = Pipeline::new(config.clone())?;
    // What the stages report: progress, and the candidates' scores for the report.
    let mut recorded = args.report.is_some().then(Similarities::default);
    let keep_by = args.keep_by.as_deref().map(KeepBy::parse).transpose()?;
    let mut input = args.input.clone();
    input.key_field = keep_by.as_ref().map(|k| k.field.clone());
    input.empty_under = Some(*config.shingler());
    let spill = crate::spill::decide(args, &config)?;
    let read_start = Instant::now();
    let (mut docs, mut held) = match &spill {
        None => {
            let (docs, batches) = read_into(args, &input, mode, &bars, pipeline.shingle_batches())?;
            (docs, Held::Memory(batches.finish()))
        }
        Some(s) => {
            let batches = pipeline
                .spill_batches(s.options.clone())
                .map_err(|e| anyhow::anyhow!(e))?;
            let (docs, batches) = read_into(args, &input, mode, &bars, batches)?;
            (docs, Held::Disk(batches.finish()?))
        }
    };
    let read_time = read_start.elapsed();
    if mode == Mode::Dedup {
        crate::dedup_output::refuse_after_reading(&docs, args)?;
    }
    // What reading freed sits in the reader's and the shingling threads' arenas, which
    // the later stages hardly allocate from.
    crate::freed::trim();
    let mut spilled_ranks = None;
    if let Some(keep_by) = &keep_by {
        let values: Vec<Option<&str>> = docs.keys.iter().map(Option::as_deref).collect();
        let ranks = keep_by.ranks(&values);
        if ranks.missing == values.len() as u64 && !values.is_empty() {
            return Err(BadRecord(format!(
                "no record has a value for --keep-by {:?}{}",
                keep_by.field,
                docs.fields_hint()
            ))
            .into());
        }
        if ranks.missing > 0 {
            docs.warnings.push(format!(
                "{} of {} {} no {:?}; a cluster keeps {} only when no member has one",
                thousands(ranks.missing),
                summary::count(values.len() as u64, "record", "records"),
                if ranks.missing == 1 { "has" } else { "have" },
                keep_by.field,
                if ranks.missing == 1 { "it" } else { "them" }
            ));
        }
        match &mut held {
            Held::Memory(shingled) => shingled.set_keep_ranks(ranks.ranks)?,
            Held::Disk(_) => spilled_ranks = Some(ranks.ranks),
        }
    }
    let goal = if mode == Mode::Pairs {
        Goal::Pairs
    } else {
        Goal::Clusters
    };
    let (exact, choice) = match &held {
        Held::Memory(shingled) => choose(&pipeline, shingled, args, goal)?,
        Held::Disk(_) => (
            false,
            (args.method() == Method::Auto).then(|| {
                "LSH (auto: the run spills to disk; the exact join holds every set in memory)"
                    .to_string()
            }),
        ),
    };
    if !quiet {
        if let Some(s) = &spill {
            summary::to_stderr(&format!("memory    {}\n", s.line));
        }
        if let Some(line) = &choice {
            summary::to_stderr(&format!("method    {line}\n"));
        }
        summary::to_stderr(&summary::plan(&config, exact));
    }
    let ready = match held {
        Held::Disk(spilled) => Ready::Spilled(spilled),
        Held::Memory(shingled) if args.matching.measure == Measure::Containment => {
            Ready::Contained(shingled)
        }
        Held::Memory(shingled) if exact => Ready::Exact(shingled),
        Held::Memory(shingled) => {
            // Band keys are held per distinct set: copies cost none.
            crate::plan::refuse_over_memory(
                shingled.corpus().distinct_sets() as u64,
                &config,
                args.matching.memory,
            )?;
            Ready::Lsh(pipeline.sketch(shingled, &mut bars.clone()))
        }
    };
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
    let mut summary = Summary::default();
    // Writes the report if asked, with what is common to every mode plus `add`.
    let report_time = std::cell::Cell::new(None);
    let report = |stats: &neardup::Stats,
                  similarities: Option<&Similarities>,
                  add: &dyn Fn(&mut neardup_report::ReportData)|
     -> Result<()> {
        if let Some(path) = &args.report {
            let start = Instant::now();
            let mut data = report_run::base(
                report_run::title(name(mode), &args.input.inputs),
                &config,
                exact,
                &docs,
                stats,
                similarities,
                read_time,
            );
            add(&mut data);
            report_run::write(path, &data, &args.input.inputs)?;
            report_time.set(Some(start.elapsed()));
        }
        Ok(())
    };
    let write_time;
    let simhash = !config.sketch().is_minhash();
    let (stats, result_line) = match (mode, ready) {
        (Mode::Pairs, Ready::Contained(shingled)) => {
            let mut observer = (bars.clone(), &mut recorded);
            let (pairs, stats) = if exact {
                pipeline.exact_containment_pairs(&shingled, &mut observer)
            } else {
                pipeline.containment_pairs(&shingled, &mut observer)?
            };
            let start = Instant::now();
            let mut out = open_output(args.output.as_deref(), &args.input.inputs)?;
            crate::contain::write(&mut out, &pairs, &docs, format).map_err(|e| out.error(e))?;
            finish(out)?;
            write_time = start.elapsed();
            let line = format!(
                "{} among {} (a contained in b at {} or more)",
                summary::count(pairs.len() as u64, "pair", "pairs"),
                summary::count(
                    crate::contain::documents(&pairs, docs.len()),
                    "document",
                    "documents"
                ),
                config.threshold()
            );
            let plan = (!exact).then(|| pipeline.ensemble_plan());
            report(&stats, None, &|data| {
                let sizes = crate::contain::set_sizes(shingled.corpus());
                report_run::add_containment(data, &pairs, &stats, plan, sizes, &docs)
            })?;
            (stats, line)
        }
        (Mode::Pairs, ready) => {
            let mut out = open_output(args.output.as_deref(), &args.input.inputs)?;
            let mut written = std::time::Duration::ZERO;
            let mut sample = args.report.is_some().then(report_run::PairSample::default);
            // The exact join's error (outer) comes before any pair; the writer's (inner) stops
            // the stream.
            let streamed = (|| -> neardup::Result<std::io::Result<_>> {
                let mut writer = match PairWriter::new(&mut out, &docs, format, simhash) {
                    Ok(writer) => writer,
                    Err(e) => return Ok(Err(e)),
                };
                // Each chunk is written as soon as it is verified: nothing holds the pairs.
                let sink = |chunk: &[neardup::Pair]| {
                    let start = Instant::now();
                    if let Some(sample) = sample.as_mut() {
                        sample.add(chunk);
                    }
                    let done = writer.write(chunk);
                    written += start.elapsed();
                    done
                };
                let mut observer = (bars.clone(), &mut recorded);
                match ready {
                    Ready::Exact(c) => pipeline.exact_for_each_pair_chunk(&c, &mut observer, sink),
                    Ready::Lsh(c) => Ok(pipeline.for_each_pair_chunk(&c, &mut observer, sink)),
                    Ready::Spilled(c) => c.for_each_pair_chunk(&mut observer, sink),
                    Ready::Contained(_) => unreachable!("containment pairs are written above"),
                }
            })();
            let (totals, stats) = streamed?.map_err(|e| out.error(e))?;
            finish(out)?;
            write_time = written;
            let line = format!(
                "{} among {}",
                summary::count(totals.pairs, "pair", "pairs"),
                summary::count(totals.documents, "document", "documents")
            );
            report(&stats, recorded.as_ref(), &|data| {
                report_run::add_pairs(data, &totals, sample.as_ref(), &docs)
            })?;
            (stats, line)
        }
        (Mode::Clusters | Mode::Dedup, ready) => {
            let mut observer = (bars.clone(), &mut recorded);
            let (clusters, stats) = match ready {
                Ready::Exact(c) => pipeline.exact_cluster_set(&c, &mut observer)?,
                Ready::Lsh(c) => pipeline.cluster_set(&c, &mut observer),
                Ready::Spilled(c) => c.cluster_set(spilled_ranks.as_deref(), &mut observer)?,
                Ready::Contained(_) => unreachable!("containment runs are refused for clusters"),
            };
            let write_start = Instant::now();
            if mode == Mode::Clusters {
                let mut out = open_output(args.output.as_deref(), &args.input.inputs)?;
                write_clusters(&mut out, &clusters, &docs, format, simhash)
                    .map_err(|e| out.error(e))?;
                finish(out)?;
            }
            write_time = write_start.elapsed();
            let accounts = docs.accounts(clusters.removed() as u64, stats.empty);
            if mode == Mode::Dedup {
                let written =
                    crate::dedup_output::write_survivors(&docs, &clusters, &has_shingles, args)?;
                if written != accounts.kept {
                    bail!(
                        "dedup wrote {written} records but counts {} as kept",
                        accounts.kept
                    );
                }
            }
            report(&stats, recorded.as_ref(), &|data| {
                report_run::add_clusters(data, &clusters, &docs, &accounts)
            })?;
            let line = format!(
                "{} | read {} = kept {} + removed {} + skipped {}",
                summary::count(clusters.len() as u64, "cluster", "clusters"),
                thousands(accounts.read),
                thousands(accounts.kept),
                thousands(accounts.removed),
                thousands(accounts.skipped)
            );
            (stats, line)
        }
    };
    // Built under --quiet too: its warnings are about the data, and print either way.
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
        &stats,
    );
    for w in &docs.warnings {
        summary.warning(w);
    }
    if config.measure() == Measure::Containment && stats.truncated > 0 {
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
    summary.short_documents(config.shingler().kind(), &stats);
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
    summary.line("write", secs(write_time));
    if let Some(t) = report_time.get() {
        summary.line("report", secs(t));
    }
    summary.line("result", result_line);
    summary.line("total", secs(started.elapsed()));
    if let Some(peak) = crate::plan::peak_memory() {
        summary.line("peak", format!("{} resident", crate::plan::bytes(peak)));
    }
    summary.print(quiet);
    Ok(())
}

/// Documents handed from the reading thread to shingling at a time.
const READ_BATCH: usize = 1 << 14;

/// Where read batches go: shingled in memory, or shingled, sketched and spilled to disk.
trait Batches {
    fn add(&mut self, texts: &[String]) -> neardup::Result<()>;
}

impl Batches for neardup::ShingleBatches {
    fn add(&mut self, texts: &[String]) -> neardup::Result<()> {
        neardup::ShingleBatches::add(self, texts)
    }
}

impl Batches for neardup::SpillBatches<'_> {
    fn add(&mut self, texts: &[String]) -> neardup::Result<()> {
        neardup::SpillBatches::add(self, texts)
    }
}

/// Reads the inputs on one thread while the documents read so far are shingled on the
/// others, so neither waits for the other; texts are kept only for the report's examples.
fn read_into<B: Batches>(
    args: &RunArgs,
    input: &InputArgs,
    mode: Mode,
    bars: &Bars,
    mut batches: B,
) -> Result<(Documents, B)> {
    let keep_texts = args.report.is_some();
    // A few batches in flight bound what is read ahead of shingling.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<String>>(4);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let list_skipped = args.skipped.is_some();
            Documents::read_batches(
                input,
                mode == Mode::Dedup,
                list_skipped,
                bars,
                READ_BATCH,
                |b| tx.send(b).context("shingling stopped"),
            )
        });
        let mut texts = Vec::new();
        let mut count = 0usize;
        let mut failed = None;
        for batch in rx {
            count += batch.len();
            if let Err(e) = batches.add(&batch) {
                // Dropping the receiver stops the reader at its next send.
                failed = Some(e);
                break;
            }
            if keep_texts {
                texts.extend(batch);
            }
        }
        let read = reader
            .join()
            .map_err(|_| anyhow::anyhow!("the reading thread panicked"))?;
        match failed {
            Some(neardup::Error::TooManyDocuments(_)) | None if count > neardup::MAX_DOCUMENTS => {
                bail!(neardup::Error::TooManyDocuments(count))
            }
            Some(e) => bail!(e),
            None => {}
        }
        let mut docs = read?;
        docs.texts = texts;
        Ok((docs, batches))
    })
}

/// The command's name, for the report's title.
fn name(mode: Mode) -> &'static str {
    match mode {
        Mode::Pairs => "pairs",
        Mode::Clusters => "clusters",
        Mode::Dedup => "dedup",
    }
}

/// The first LSH option given on the command line, if any.
fn lsh_option(args: &RunArgs) -> Option<&'static str> {
    let m = &args.matching;
    [
        ("--bands", m.bands.is_some()),
        ("--sketch", m.sketch.is_some()),
        ("--num-perm", m.num_perm != DEFAULT_NUM_PERM),
        ("--no-neighbours", m.no_neighbours),
        ("--verify", args.verify != Verification::Exact),
    ]
    .into_iter()
    .find_map(|(flag, given)| given.then_some(flag))
}

/// Whether the run takes the exact join, and for `--method auto` the summary's line on
/// why. `--method auto` with an LSH option given runs LSH: the option asks for it.
fn choose(
    pipeline: &Pipeline,
    shingled: &neardup::Shingled,
    args: &RunArgs,
    goal: Goal,
) -> Result<(bool, Option<String>)> {
    if args.matching.measure == Measure::Containment {
        return Ok((
            args.method() == Method::Exact,
            crate::contain::method_line(args.method()),
        ));
    }
    match args.method() {
        Method::Exact => Ok((true, None)),
        Method::Lsh => Ok((false, None)),
        Method::Auto if args.matching.sketch == Some(neardup::SketchKind::SimHash) => Ok((
            false,
            Some("SimHash (auto: --sketch simhash finds its candidates by fingerprint)".into()),
        )),
        Method::Auto if lsh_option(args).is_some() => Ok((
            false,
            lsh_option(args).map(|flag| format!("LSH (auto: {flag} is an LSH option)")),
        )),
        Method::Auto => {
            let start = Instant::now();
            let c = pipeline.choose_method(shingled, goal)?;
            let line = format!(
                "{} in {}",
                summary::method_choice(&c),
                secs(start.elapsed())
            );
            Ok((c.method == Method::Exact, Some(line)))
        }
    }
}

/// The corpus after reading: shingled in memory, or spilled to disk (sketched too).
enum Held<'p> {
    Memory(Shingled),
    Disk(neardup::Spilled<'p>),
}

/// The corpus as far as the run needs it: shingled for the exact join, sketched for LSH,
/// or spilled to disk.
enum Ready<'p> {
    Exact(Shingled),
    /// `--measure containment`: the exact containment join or the ensemble search.
    Contained(Shingled),
    Lsh(Sketched),
    Spilled(neardup::Spilled<'p>),
}

impl Ready<'_> {
    fn has_shingles(&self, doc: u32) -> bool {
        match self {
            Ready::Exact(s) | Ready::Contained(s) => s.corpus().has_shingles(doc),
            Ready::Lsh(s) => s.corpus().has_shingles(doc),
            Ready::Spilled(s) => s.has_shingles(doc),
        }
    }
}
