//! `--measure containment`: what applies to it, its pairs as JSON lines or TSV, and the
//! set sizes its plan partitions (for `plan` and the report).

use std::io::{self, Write};

use anyhow::Result;
use neardup::{Contained, Method, SketchKind};
use neardup_io::documents::Documents;

use crate::errors::usage;
use crate::output::{push_tsv_number, render_id, round, OutputFormat};
use crate::run::Mode;
use crate::settings::RunSettings;

/// Refuses what the measure does not do (a containment run: clusters, SimHash, --sketch
/// with the exact join), before any work.
pub fn refuse(mode: Mode, args: &RunSettings) -> Result<()> {
    let m = &args.matching;
    let name = m.measure.name();
    if !m.measure.gives_clusters() && mode != Mode::Pairs {
        usage!(
            "--measure {name} is for pairs, eval and plan: a fragment contained in two \
             unrelated pages does not make the pages one cluster"
        );
    }
    if !m.measure.from_smaller() {
        return Ok(());
    }
    if m.sketch == Some(SketchKind::SimHash) {
        usage!("--measure {name} searches by MinHash bands; --sketch simhash has none");
    }
    // --bands and --no-neighbours are refused with the matching options (`run::config`).
    if args.method() == Method::Exact && m.sketch.is_some() {
        usage!("--sketch is an LSH option; --method exact runs the exact containment join");
    }
    Ok(())
}

/// The summary's `method` line of a containment run under `--method auto`.
pub const METHOD_LINE: &str =
    "LSH Ensemble (auto: --measure containment; --method exact runs the exact containment join)";

/// The TSV header of containment pairs (JSON lines have none), the score named after
/// the measure ([`Measure::name`](neardup::Measure::name): `containment`).
pub fn write_header(out: &mut dyn Write, format: OutputFormat, score: &str) -> io::Result<()> {
    if format == OutputFormat::Tsv {
        writeln!(out, "a\tb\t{score}\tjaccard")?;
    }
    Ok(())
}

/// Writes a chunk of pairs, `a` the contained document: JSON lines `{"a", "b",
/// "containment", "jaccard"}` (the score named `score`), or TSV rows under
/// [`write_header`]'s columns.
pub fn write(
    out: &mut dyn Write,
    pairs: &[Contained],
    docs: &Documents,
    format: OutputFormat,
    score: &str,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(128);
    for p in pairs {
        buf.clear();
        let (a, b) = (
            render_id(&docs.id(p.a), format)?,
            render_id(&docs.id(p.b), format)?,
        );
        match format {
            // Parquet is refused for containment pairs when the run is resolved.
            OutputFormat::Jsonl | OutputFormat::Parquet => {
                buf.extend_from_slice(b"{\"a\":");
                buf.extend_from_slice(&a);
                buf.extend_from_slice(b",\"b\":");
                buf.extend_from_slice(&b);
                buf.extend_from_slice(b",\"");
                buf.extend_from_slice(score.as_bytes());
                buf.extend_from_slice(b"\":");
                serde_json::to_writer(&mut buf, &round(Some(p.containment)))?;
                buf.extend_from_slice(b",\"jaccard\":");
                serde_json::to_writer(&mut buf, &round(Some(p.jaccard)))?;
                buf.extend_from_slice(b"}\n");
            }
            OutputFormat::Tsv => {
                buf.extend_from_slice(&a);
                buf.push(b'\t');
                buf.extend_from_slice(&b);
                buf.push(b'\t');
                push_tsv_number(&mut buf, Some(p.containment))?;
                buf.push(b'\t');
                push_tsv_number(&mut buf, Some(p.jaccard))?;
                buf.push(b'\n');
            }
        }
        out.write_all(&buf)?;
    }
    out.flush()
}

/// Documents in at least one pair.
pub fn documents(pairs: &[Contained], n: usize) -> u64 {
    let mut seen = vec![false; n];
    for p in pairs {
        seen[p.a as usize] = true;
        seen[p.b as usize] = true;
    }
    seen.iter().filter(|&&s| s).count() as u64
}

/// The set size of every document with shingles: what the containment search partitions.
pub fn set_sizes(corpus: &neardup::corpus::Corpus) -> impl Iterator<Item = usize> + '_ {
    // A corpus holds at most u32::MAX documents (they are numbered by u32).
    (0..corpus.len() as u32)
        .filter(|&d| corpus.has_shingles(d))
        .map(|d| corpus.set(d).len())
}
