//! The batch commands' results from the ready corpus, run through the core's one seam
//! (`Pipeline::run`): pairs (by similarity or containment) written as they are verified
//! by a `Sink`, clusters, or dedup's survivors; each gives the stats and the summary's
//! result line, and writes the report if one is asked for.

use std::cell::Cell;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use neardup::run::Similarities;
use neardup::{Config, Contained, Pair, Pipeline, Ready, RunError, Stats};
use neardup_io::documents::Documents;

use crate::output::{finish, open_output, write_clusters, OutputFormat, PairWriter};
use crate::progress::Bars;
use crate::report_run;
use crate::run::{name, Mode};
use crate::settings::RunSettings;
use crate::summary::{self, thousands};

/// What the result stages share: the run's settings, its documents, its method.
pub struct Run<'a> {
    pub mode: Mode,
    pub args: &'a RunSettings,
    pub pipeline: &'a Pipeline,
    pub bars: &'a Bars,
    pub docs: &'a Documents,
    pub format: OutputFormat,
    pub exact: bool,
    pub read_time: Duration,
    /// What the stages report for the report: the candidates' scores.
    pub recorded: Option<Similarities>,
    /// How long writing the report took, once written.
    pub report_time: Cell<Option<Duration>>,
}

/// What a result stage gives the summary.
pub struct Outcome {
    pub stats: Stats,
    pub line: String,
    pub write_time: Duration,
    /// clusters and dedup of several inputs: a summary line per input, its accounts.
    pub per_input: Vec<String>,
}

impl Run<'_> {
    fn config(&self) -> &Config {
        self.pipeline.config()
    }

    /// Writes the report if asked, with what is common to every mode plus `add`.
    fn report(
        &self,
        stats: &Stats,
        similarities: Option<&Similarities>,
        add: &dyn Fn(&mut neardup_report::ReportData),
    ) -> Result<()> {
        if let Some(path) = &self.args.report {
            let start = Instant::now();
            let mut data = report_run::base(
                report_run::title(name(self.mode), &self.args.input.inputs),
                self.config(),
                self.exact,
                self.docs,
                stats,
                similarities,
                self.read_time,
            );
            add(&mut data);
            report_run::write(path, &data, &self.args.input.inputs)?;
            self.report_time.set(Some(start.elapsed()));
        }
        Ok(())
    }

    /// `pairs`: each chunk of pairs written as soon as it is verified (by similarity, or
    /// `a` contained in `b` with `--measure containment`).
    pub fn pairs(&mut self, ready: &mut Ready) -> Result<Outcome> {
        let (pipeline, docs) = (self.pipeline, self.docs);
        let containment = ready.plan().engine().is_containment();
        let simhash = !self.config().sketch().is_minhash();
        let format = self.format;
        let (output, inputs) = (self.args.output.as_deref(), &self.args.input.inputs);
        // Parquet owns its output (its buffers write to it when dropped); the lines
        // formats borrow theirs.
        let (mut out, parquet) = if format == OutputFormat::Parquet {
            let options = self.args.parquet.unwrap_or_default();
            let measure = pipeline.config().measure();
            let out = crate::parquet_output::open(output, inputs)?;
            let parquet =
                crate::parquet_output::PairParquet::new(out, docs, &options, simhash, measure)?;
            (None, Some(parquet))
        } else {
            (Some(open_output(output, inputs)?), None)
        };
        let report = self.args.report.is_some();
        let mut observer = (self.bars.clone(), &mut self.recorded);
        let score = pipeline.config().measure().name();
        let to = match (parquet, out.as_mut()) {
            (Some(parquet), _) => Ok(To::Parquet(Box::new(parquet))),
            (None, Some(out)) if containment => {
                crate::containment::write_header(out, format, score)
                    .map(|()| To::Contained(out, score))
            }
            (None, Some(out)) => {
                PairWriter::new(out, docs, format, simhash, pipeline.config().measure())
                    .map(To::Pairs)
            }
            (None, None) => bail!("pairs have an output"),
        };
        let named = |out: &Option<neardup_io::OutputFile>, e: std::io::Error| match out {
            Some(out) => anyhow::Error::from(out.error(e)),
            None => e.into(),
        };
        let to = match to {
            Ok(to) => to,
            Err(e) => return Err(named(&out, e)),
        };
        let mut sink = Written {
            to,
            docs,
            format,
            sample: report.then(report_run::PairSample::default),
            contained: report.then(Vec::new),
            time: Duration::ZERO,
        };
        let (outcome, stats) = match pipeline.run(ready, &mut observer, &mut sink) {
            Ok(done) => done,
            Err(RunError::Run(e)) => return Err(e.into()),
            Err(RunError::Sink(e)) => return Err(named(&out, e)),
        };
        let Written {
            to,
            sample,
            contained,
            time,
            ..
        } = sink;
        if let To::Parquet(parquet) = to {
            finish(parquet.finish()?)?;
        }
        if let Some(out) = out {
            finish(out)?;
        }
        let neardup::Outcome::Pairs(totals) = outcome else {
            bail!("a pairs run gave no pairs")
        };
        let pairs = summary::count(totals.pairs, "pair", "pairs");
        let among = summary::count(totals.documents, "document", "documents");
        let line = if containment {
            let t = self.config().threshold();
            format!("{pairs} among {among} (a contained in b at {t} or more)")
        } else {
            format!("{pairs} among {among}")
        };
        if containment {
            let plan = (!ready.plan().engine().is_exact()).then(|| pipeline.ensemble_plan());
            let shingled = ready.shingled().context("containment runs in memory")?;
            let pairs = contained.unwrap_or_default();
            self.report(&stats, None, &|data| {
                let sizes = crate::containment::set_sizes(shingled.corpus());
                report_run::add_containment(data, &pairs, &stats, plan, sizes, docs)
            })?;
        } else {
            self.report(&stats, self.recorded.as_ref(), &|data| {
                report_run::add_pairs(data, &totals, sample.as_ref(), docs)
            })?;
        }
        Ok(Outcome {
            stats,
            line,
            write_time: time,
            per_input: Vec::new(),
        })
    }

    /// `clusters` and `dedup`: the clusters, written as JSON lines or TSV (clusters) or
    /// as the surviving records (dedup).
    pub fn clusters(
        &mut self,
        ready: &mut Ready,
        has_shingles: &dyn Fn(u32) -> bool,
    ) -> Result<Outcome> {
        let (pipeline, docs, args) = (self.pipeline, self.docs, self.args);
        let simhash = !self.config().sketch().is_minhash();
        let mut observer = (self.bars.clone(), &mut self.recorded);
        let (outcome, stats) = match pipeline.run(ready, &mut observer, &mut NoPairs) {
            Ok(done) => done,
            Err(RunError::Run(e)) => return Err(e.into()),
            Err(RunError::Sink(never)) => match never {},
        };
        let neardup::Outcome::Clusters(mut clusters) = outcome else {
            bail!("a clusters run gave no clusters")
        };
        if args.drop_all {
            clusters.drop_all();
        }
        let write_start = Instant::now();
        if self.mode == Mode::Clusters && self.format == OutputFormat::Parquet {
            let mut out = crate::parquet_output::open(args.output.as_deref(), &args.input.inputs)?;
            let options = args.parquet.unwrap_or_default();
            crate::parquet_output::write_clusters(&mut out, &clusters, docs, &options, simhash)?;
            finish(out)?;
        } else if self.mode == Mode::Clusters {
            let mut out = open_output(args.output.as_deref(), &args.input.inputs)?;
            write_clusters(&mut out, &clusters, docs, self.format, simhash)
                .map_err(|e| out.error(e))?;
            finish(out)?;
        }
        // The reference's records are counted apart: only the inputs' empty ones here.
        let reference = docs.reference_docs();
        let empty = match reference {
            0 => stats.empty,
            _ => (reference..docs.len() as u32)
                .filter(|&d| !has_shingles(d))
                .count() as u64,
        };
        let accounts = docs.accounts(clusters.removed() as u64, empty);
        if let (Mode::Dedup, Some(annotate)) = (self.mode, &args.annotate) {
            let kept = accounts.kept;
            crate::annotate_output::write(docs, &clusters, has_shingles, args, annotate, kept)?;
        } else if self.mode == Mode::Dedup {
            let written =
                crate::dedup_output::write_survivors(docs, &clusters, has_shingles, args)?;
            if written != accounts.kept {
                bail!(
                    "dedup wrote {written} records but counts {} as kept",
                    accounts.kept
                );
            }
        }
        // dedup's survivors and annotations are written here: the write stage counts them.
        let write_time = write_start.elapsed();
        self.report(&stats, self.recorded.as_ref(), &|data| {
            report_run::add_clusters(data, &clusters, docs, &accounts)
        })?;
        let mut line = format!(
            "{} | read {} = kept {} + removed {} + skipped {}",
            summary::count(clusters.len() as u64, "cluster", "clusters"),
            thousands(accounts.read),
            thousands(accounts.kept),
            thousands(accounts.removed),
            thousands(accounts.skipped)
        );
        if !args.input.reference.is_empty() {
            line += &format!(
                " | reference: {}, never written",
                summary::count(docs.reference_read(), "record", "records")
            );
        }
        // Several inputs (a folder of shards): where each one's records went.
        let per_input = if docs.inputs.len() - docs.reference_inputs() > 1 {
            crate::per_input::accounts(docs, &clusters, has_shingles)
        } else {
            Vec::new()
        };
        Ok(Outcome {
            stats,
            line,
            write_time,
            per_input,
        })
    }
}

/// Where `pairs` writes: each chunk as it comes, and what the report needs of them.
struct Written<'a, 'w> {
    to: To<'w, 'a>,
    docs: &'a Documents,
    format: OutputFormat,
    sample: Option<report_run::PairSample>,
    /// Containment pairs kept for the report (only when one is asked for).
    contained: Option<Vec<Contained>>,
    /// Time spent writing.
    time: Duration,
}

/// The writer of one kind of pairs.
enum To<'w, 'a> {
    Pairs(PairWriter<'w>),
    /// The pairs' output, and the name of their score (the measure's).
    Contained(&'w mut dyn std::io::Write, &'static str),
    /// Pairs by similarity as Parquet.
    Parquet(Box<crate::parquet_output::PairParquet<'a>>),
}

impl neardup::Sink for Written<'_, '_> {
    type Error = std::io::Error;

    fn pairs(&mut self, chunk: &[Pair]) -> Result<(), Self::Error> {
        let start = Instant::now();
        if let Some(sample) = self.sample.as_mut() {
            sample.add(chunk);
        }
        let done = match &mut self.to {
            To::Pairs(writer) => writer.write(chunk),
            To::Parquet(writer) => writer.write(chunk),
            To::Contained(..) => Err(std::io::Error::other(
                "pairs by similarity in a containment run",
            )),
        };
        self.time += start.elapsed();
        done
    }

    fn contained(&mut self, chunk: &[Contained]) -> Result<(), Self::Error> {
        let start = Instant::now();
        if let Some(kept) = self.contained.as_mut() {
            kept.extend_from_slice(chunk);
        }
        let done = match &mut self.to {
            To::Contained(out, score) => {
                crate::containment::write(*out, chunk, self.docs, self.format, score)
            }
            To::Pairs(_) | To::Parquet(_) => Err(std::io::Error::other(
                "containment pairs in a similarity run",
            )),
        };
        self.time += start.elapsed();
        done
    }
}

/// The sink of a clusters run, which hands on no pairs.
struct NoPairs;

impl neardup::Sink for NoPairs {
    type Error = std::convert::Infallible;
    fn pairs(&mut self, _: &[Pair]) -> Result<(), Self::Error> {
        Ok(())
    }
    fn contained(&mut self, _: &[Contained]) -> Result<(), Self::Error> {
        Ok(())
    }
}
