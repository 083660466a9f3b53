//! The batch commands' corpus from reading to the stage its engine starts from, through
//! the core's run seam: read into memory or spilled to disk (`neardup::Intake`, then
//! `Held`), the engine chosen once (`RunPlan`, whose reason the summary prints), and the
//! corpus made ready for it (`neardup::Ready`).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use neardup::run::Why;
use neardup::{Engine, Goal, Held, Intake, Pipeline, Ready, RunPlan};
use neardup_io::documents::{Documents, InputOptions};

use crate::errors::BadRecord;
use crate::keep_by::KeepBy;
use crate::progress::Bars;
use crate::run::{lsh_option, Mode};
use crate::settings::RunSettings;
use crate::spill::Spill;
use crate::summary::{self, secs, thousands};

/// What reading gave: the documents, the corpus held (with its keep-by ranks), and how
/// long reading took.
pub struct Read<'p> {
    pub docs: Documents,
    pub held: Held<'p>,
    pub read_time: Duration,
}

/// Reads the inputs into the pipeline's batches (in memory, or spilled when `spill`
/// says so) and ranks the documents by `--keep-by`.
pub fn read<'p>(
    mode: Mode,
    args: &RunSettings,
    pipeline: &'p Pipeline,
    bars: &Bars,
    spill: Option<&Spill>,
    keep_by: Option<&KeepBy>,
) -> Result<Read<'p>> {
    let mut input = args.input.clone();
    input.key_field = keep_by.map(|k| k.field.clone());
    // A record the pipeline would give no shingles is skipped as empty while reading.
    let shingler = *pipeline.config().shingler();
    input.empty_text = Some(std::sync::Arc::new(move |text: &str| {
        shingler.shingle_set(text).is_empty()
    }));
    input.keep_raw = mode == Mode::Dedup;
    input.list_skipped = args.skipped.is_some();
    let read_start = Instant::now();
    let intake = pipeline
        .intake(spill.map(|s| s.options.clone()))
        .map_err(|e| anyhow::anyhow!(e))?;
    let (mut docs, intake) = read_into(args, &input, bars, intake)?;
    let mut held = intake.finish()?;
    if docs.reference_docs() > 0 {
        held.set_reference(docs.reference_docs())?;
    }
    let read_time = read_start.elapsed();
    // What reading freed sits in the reader's and the shingling threads' arenas, which
    // the later stages hardly allocate from.
    crate::trim_memory::trim();
    if let Some(keep_by) = keep_by {
        held.set_keep_ranks(keep_by_ranks(&mut docs, keep_by)?)?;
    }
    Ok(Read {
        docs,
        held,
        read_time,
    })
}

/// One keep rank per document from the `--keep-by` values read (`InputOptions::key_field`):
/// an error if no record has one, a warning if some have none.
pub fn keep_by_ranks(docs: &mut Documents, keep_by: &KeepBy) -> Result<Vec<u32>> {
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
    Ok(ranks.ranks)
}

/// Chooses the engine once, prints the plan (unless quiet) and brings the corpus to the
/// stage the engine starts from.
pub fn prepare<'p>(
    mode: Mode,
    args: &RunSettings,
    pipeline: &'p Pipeline,
    bars: &Bars,
    held: Held<'p>,
    spill: Option<&Spill>,
) -> Result<Ready<'p>> {
    let config = pipeline.config();
    let goal = if mode == Mode::Pairs {
        Goal::Pairs
    } else {
        Goal::Clusters
    };
    let start = Instant::now();
    let plan = RunPlan::choose_with(pipeline, &held, args.method(), goal, lsh_option(args))?;
    let chosen_in = start.elapsed();
    if !args.runtime.quiet {
        if let Some(s) = spill {
            summary::to_stderr(&format!("memory    {}\n", s.line));
        }
        if let Some(why) = plan.why() {
            summary::to_stderr(&format!("method    {}\n", why_line(why, chosen_in)));
        }
        summary::to_stderr(&summary::plan(config, plan.engine().is_exact()));
    }
    if let (Some(shingled), Engine::Bands | Engine::SimHash) = (held.shingled(), plan.engine()) {
        // Band keys are held per distinct set: copies cost none.
        crate::plan::refuse_over_memory(
            shingled.corpus().distinct_sets() as u64,
            config,
            args.matching.memory,
        )?;
    }
    Ok(pipeline.prepare(held, &plan, &mut bars.clone())?)
}

/// The summary's `method` line: why `--method auto` chose the engine.
fn why_line(why: &Why, chosen_in: Duration) -> String {
    match why {
        Why::Spilled => {
            "LSH (auto: the run spills to disk; the exact join holds every set in memory)".into()
        }
        Why::SimHash => {
            "SimHash (auto: --sketch simhash finds its candidates by fingerprint)".into()
        }
        Why::Containment => crate::containment::METHOD_LINE.into(),
        Why::LshOption(flag) => format!("LSH (auto: {flag} is an LSH option)"),
        Why::Predicted(c) => format!("{} in {}", summary::method_choice(c), secs(chosen_in)),
        // A reason this command does not know yet: named as the core debug-prints it.
        other => format!("{other:?}"),
    }
}

/// Reads every input into the document table, texts included, with a spinner counting
/// records (eval, the index commands).
pub fn read_all(input: &InputOptions, bars: &Bars) -> Result<Documents> {
    bars.spinner("read");
    let mut texts = Vec::new();
    let mut docs = Documents::read_batches(
        input,
        usize::MAX,
        || bars.tick(),
        |batch| {
            texts.extend(batch);
            Ok::<_, anyhow::Error>(())
        },
    )?;
    bars.done();
    docs.texts = texts;
    Ok(docs)
}

/// Documents handed from the reading thread to shingling at a time.
const READ_BATCH: usize = 1 << 14;

/// Reads the inputs on one thread while the documents read so far are shingled on the
/// others, so neither waits for the other; texts are kept only for the report's examples.
fn read_into<'p>(
    args: &RunSettings,
    input: &InputOptions,
    bars: &Bars,
    mut batches: Intake<'p>,
) -> Result<(Documents, Intake<'p>)> {
    let keep_texts = args.report.is_some();
    // A few batches in flight bound what is read ahead of shingling.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<String>>(4);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            bars.spinner("read");
            let docs = Documents::read_batches(
                input,
                READ_BATCH,
                || bars.tick(),
                |b| tx.send(b).context("shingling stopped"),
            )?;
            bars.done();
            Ok::<_, anyhow::Error>(docs)
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
            Some(neardup::Error::TooManyDocuments(_)) | None
                if count > neardup::corpus::MAX_DOCUMENTS =>
            {
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
