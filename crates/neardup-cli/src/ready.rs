//! The batch commands' corpus from reading to the stage each method starts from: read
//! into memory or spilled to disk (`Held`), then shingled for the exact join, sketched
//! for LSH, or spilled (`Ready`), with the method chosen on the way.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use neardup::{Goal, Measure, Method, Pipeline, Shingled, Sketched};

use crate::args::{InputArgs, RunArgs};
use crate::input::{BadRecord, Documents};
use crate::keep_by::KeepBy;
use crate::progress::Bars;
use crate::run::{lsh_option, Mode};
use crate::spill::Spill;
use crate::summary::{self, secs, thousands};

/// What reading gave: the documents, the corpus held, the keep-by ranks of a spilled
/// corpus (a corpus in memory holds its own), and how long reading took.
pub struct Read<'p> {
    pub docs: Documents,
    pub held: Held<'p>,
    pub spilled_ranks: Option<Vec<u32>>,
    pub read_time: Duration,
}

/// Reads the inputs into the pipeline's batches (in memory, or spilled when `spill`
/// says so) and ranks the documents by `--keep-by`.
pub fn read<'p>(
    mode: Mode,
    args: &RunArgs,
    pipeline: &'p Pipeline,
    bars: &Bars,
    spill: Option<&Spill>,
    keep_by: Option<&KeepBy>,
) -> Result<Read<'p>> {
    let mut input = args.input.clone();
    input.key_field = keep_by.map(|k| k.field.clone());
    input.empty_under = Some(*pipeline.config().shingler());
    let read_start = Instant::now();
    let (mut docs, mut held) = match spill {
        None => {
            let (docs, batches) = read_into(args, &input, mode, bars, pipeline.shingle_batches())?;
            (docs, Held::Memory(batches.finish()))
        }
        Some(s) => {
            let batches = pipeline
                .spill_batches(s.options.clone())
                .map_err(|e| anyhow::anyhow!(e))?;
            let (docs, batches) = read_into(args, &input, mode, bars, batches)?;
            (docs, Held::Disk(batches.finish()?))
        }
    };
    let read_time = read_start.elapsed();
    // What reading freed sits in the reader's and the shingling threads' arenas, which
    // the later stages hardly allocate from.
    crate::freed::trim();
    let mut spilled_ranks = None;
    if let Some(keep_by) = keep_by {
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
    Ok(Read {
        docs,
        held,
        spilled_ranks,
        read_time,
    })
}

/// Chooses the method, prints the plan (unless quiet) and brings the corpus to the stage
/// the method starts from; returns whether the run takes the exact join.
pub fn prepare<'p>(
    mode: Mode,
    args: &RunArgs,
    pipeline: &'p Pipeline,
    bars: &Bars,
    held: Held<'p>,
    spill: Option<&Spill>,
) -> Result<(bool, Ready<'p>)> {
    let config = pipeline.config();
    let goal = if mode == Mode::Pairs {
        Goal::Pairs
    } else {
        Goal::Clusters
    };
    let (exact, choice) = match &held {
        Held::Memory(shingled) => choose(pipeline, shingled, args, goal)?,
        Held::Disk(_) => (
            false,
            (args.method() == Method::Auto).then(|| {
                "LSH (auto: the run spills to disk; the exact join holds every set in memory)"
                    .to_string()
            }),
        ),
    };
    if !args.runtime.quiet {
        if let Some(s) = spill {
            summary::to_stderr(&format!("memory    {}\n", s.line));
        }
        if let Some(line) = &choice {
            summary::to_stderr(&format!("method    {line}\n"));
        }
        summary::to_stderr(&summary::plan(config, exact));
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
                config,
                args.matching.memory,
            )?;
            Ready::Lsh(pipeline.sketch(shingled, &mut bars.clone()))
        }
    };
    Ok((exact, ready))
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
pub enum Held<'p> {
    Memory(Shingled),
    Disk(neardup::Spilled<'p>),
}

/// The corpus as far as the run needs it: shingled for the exact join, sketched for LSH,
/// or spilled to disk.
pub enum Ready<'p> {
    Exact(Shingled),
    /// `--measure containment`: the exact containment join or the ensemble search.
    Contained(Shingled),
    Lsh(Sketched),
    Spilled(neardup::Spilled<'p>),
}

impl Ready<'_> {
    pub fn has_shingles(&self, doc: u32) -> bool {
        match self {
            Ready::Exact(s) | Ready::Contained(s) => s.corpus().has_shingles(doc),
            Ready::Lsh(s) => s.corpus().has_shingles(doc),
            Ready::Spilled(s) => s.has_shingles(doc),
        }
    }
}
