//! The batch commands' results from the ready corpus: pairs streamed as they are
//! verified, containment pairs, clusters, or dedup's survivors; each gives the stats and
//! the summary's result line, and writes the report if one is asked for.

use std::cell::Cell;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use neardup::{Config, Pipeline, Similarities, Stats};

use crate::args::RunArgs;
use crate::input::Documents;
use crate::output::{finish, open_output, write_clusters, OutputFormat, PairWriter};
use crate::progress::Bars;
use crate::ready::Ready;
use crate::report_run;
use crate::run::{name, Mode};
use crate::summary::{self, thousands};

/// What the result stages share: the run's settings, its documents, its method.
pub struct Run<'a> {
    pub mode: Mode,
    pub args: &'a RunArgs,
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

    /// `pairs --measure containment`: the exact containment join or the ensemble search.
    pub fn contained_pairs(&mut self, shingled: &neardup::Shingled) -> Result<Outcome> {
        let (pipeline, docs, exact) = (self.pipeline, self.docs, self.exact);
        let mut observer = (self.bars.clone(), &mut self.recorded);
        let (pairs, stats) = if exact {
            pipeline.exact_containment_pairs(shingled, &mut observer)
        } else {
            pipeline.containment_pairs(shingled, &mut observer)?
        };
        let start = Instant::now();
        let mut out = open_output(self.args.output.as_deref(), &self.args.input.inputs)?;
        crate::contain::write(&mut out, &pairs, docs, self.format).map_err(|e| out.error(e))?;
        finish(out)?;
        let write_time = start.elapsed();
        let line = format!(
            "{} among {} (a contained in b at {} or more)",
            summary::count(pairs.len() as u64, "pair", "pairs"),
            summary::count(
                crate::contain::documents(&pairs, docs.len()),
                "document",
                "documents"
            ),
            self.config().threshold()
        );
        let plan = (!exact).then(|| pipeline.ensemble_plan());
        self.report(&stats, None, &|data| {
            let sizes = crate::contain::set_sizes(shingled.corpus());
            report_run::add_containment(data, &pairs, &stats, plan, sizes, docs)
        })?;
        Ok(Outcome {
            stats,
            line,
            write_time,
        })
    }

    /// `pairs`: each chunk of pairs written as soon as it is verified.
    pub fn pairs(&mut self, ready: Ready) -> Result<Outcome> {
        let (pipeline, docs) = (self.pipeline, self.docs);
        let simhash = !self.config().sketch().is_minhash();
        let mut out = open_output(self.args.output.as_deref(), &self.args.input.inputs)?;
        let mut written = Duration::ZERO;
        let mut sample = self
            .args
            .report
            .is_some()
            .then(report_run::PairSample::default);
        let format = self.format;
        let bars = self.bars.clone();
        let recorded = &mut self.recorded;
        // The exact join's error (outer) comes before any pair; the writer's (inner) stops
        // the stream.
        let streamed = (|| -> neardup::Result<std::io::Result<_>> {
            let mut writer = match PairWriter::new(&mut out, docs, format, simhash) {
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
            let mut observer = (bars, recorded);
            match ready {
                Ready::Exact(c) => pipeline.exact_for_each_pair_chunk(&c, &mut observer, sink),
                Ready::Lsh(c) => Ok(pipeline.for_each_pair_chunk(&c, &mut observer, sink)),
                Ready::Spilled(c) => c.for_each_pair_chunk(&mut observer, sink),
                Ready::Contained(_) => unreachable!("containment pairs are written apart"),
            }
        })();
        let (totals, stats) = streamed?.map_err(|e| out.error(e))?;
        finish(out)?;
        let line = format!(
            "{} among {}",
            summary::count(totals.pairs, "pair", "pairs"),
            summary::count(totals.documents, "document", "documents")
        );
        self.report(&stats, self.recorded.as_ref(), &|data| {
            report_run::add_pairs(data, &totals, sample.as_ref(), docs)
        })?;
        Ok(Outcome {
            stats,
            line,
            write_time: written,
        })
    }

    /// `clusters` and `dedup`: the clusters, written as JSON lines or TSV (clusters) or
    /// as the surviving records (dedup).
    pub fn clusters(
        &mut self,
        ready: Ready,
        spilled_ranks: Option<&[u32]>,
        has_shingles: &dyn Fn(u32) -> bool,
    ) -> Result<Outcome> {
        let (pipeline, docs, args) = (self.pipeline, self.docs, self.args);
        let simhash = !self.config().sketch().is_minhash();
        let mut observer = (self.bars.clone(), &mut self.recorded);
        let (clusters, stats) = match ready {
            Ready::Exact(c) => pipeline.exact_cluster_set(&c, &mut observer)?,
            Ready::Lsh(c) => pipeline.cluster_set(&c, &mut observer),
            Ready::Spilled(c) => c.cluster_set(spilled_ranks, &mut observer)?,
            Ready::Contained(_) => unreachable!("containment runs are refused for clusters"),
        };
        let write_start = Instant::now();
        if self.mode == Mode::Clusters {
            let mut out = open_output(args.output.as_deref(), &args.input.inputs)?;
            write_clusters(&mut out, &clusters, docs, self.format, simhash)
                .map_err(|e| out.error(e))?;
            finish(out)?;
        }
        let write_time = write_start.elapsed();
        let accounts = docs.accounts(clusters.removed() as u64, stats.empty);
        if self.mode == Mode::Dedup {
            let written =
                crate::dedup_output::write_survivors(docs, &clusters, has_shingles, args)?;
            if written != accounts.kept {
                bail!(
                    "dedup wrote {written} records but counts {} as kept",
                    accounts.kept
                );
            }
        }
        self.report(&stats, self.recorded.as_ref(), &|data| {
            report_run::add_clusters(data, &clusters, docs, &accounts)
        })?;
        let line = format!(
            "{} | read {} = kept {} + removed {} + skipped {}",
            summary::count(clusters.len() as u64, "cluster", "clusters"),
            thousands(accounts.read),
            thousands(accounts.kept),
            thousands(accounts.removed),
            thousands(accounts.skipped)
        );
        Ok(Outcome {
            stats,
            line,
            write_time,
        })
    }
}
