//! JSON lines for pairs and clusters.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use neardup::{Clusters, Measure, Pair};
use neardup_io::{OutputFile, OutputOptions};
use rayon::prelude::*;
use serde::Serialize;

use neardup_io::documents::{DocId, Documents};

/// Opens an output (`None` or `-` is standard output) with
/// [`neardup_io::OutputFile::create`]: a device or FIFO is written in place, a regular
/// file through a temporary file renamed by [`finish`], a `.gz` name compressed, and an
/// output that is one of `inputs` (by device and inode) refused. The refusals are usage
/// errors (exit code 2). Call [`finish`] when done, or nothing replaces the target.
pub fn open_output(path: Option<&Path>, inputs: &[PathBuf]) -> Result<OutputFile> {
    open_output_with(path, &OutputOptions::new().refuse_inputs(inputs))
}

/// [`open_output`] with the caller's options (Parquet's: never compressed by name).
pub fn open_output_with(path: Option<&Path>, options: &OutputOptions) -> Result<OutputFile> {
    let path = path.unwrap_or(Path::new("-"));
    match OutputFile::create(path, options) {
        Ok(out) => Ok(out),
        Err(
            e @ (neardup_io::Error::OutputIsInput { .. }
            | neardup_io::Error::OutputIsDirectory { .. }
            | neardup_io::Error::DanglingSymlink { .. }
            | neardup_io::Error::UnsupportedOutput { .. }),
        ) => Err(crate::errors::Usage(e.to_string()).into()),
        Err(e) => Err(e.into()),
    }
}

/// Finishes an output from [`open_output`]: the error, if any, names the target.
pub fn finish(out: OutputFile) -> Result<()> {
    out.finish()?;
    Ok(())
}

/// Similarities are printed to 6 decimals: rounding is monotone, so a value ≥ t stays ≥ t.
pub fn round(x: Option<f64>) -> Option<f64> {
    x.map(|v| (v * 1e6).round() / 1e6)
}

/// Pairs formatted per parallel task.
const FORMAT_TASK: usize = 1 << 14;

/// How pairs and clusters are written (`--output-format`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// One JSON object per line (the default).
    #[default]
    Jsonl,
    /// Tab-separated values with a header line; tabs, line breaks and backslashes in ids
    /// escaped as \t, \n, \r and \\.
    ///
    /// The header of pairs: `a`, `b`, `jaccard`, `estimate`, `truncated`; an absent
    /// value is an empty field.
    Tsv,
    /// Apache Parquet: the JSON lines' fields as typed columns (ids as strings, absent
    /// values null, `truncated` always there), compressed as --compression says.
    Parquet,
}

/// Writes pairs as they come, one line each. Ids repeat across many pairs, so each id is
/// rendered once; each chunk is formatted in parallel, written in order and flushed, so a
/// reader at the other end of a pipe sees the first pairs while the rest are found.
pub struct PairWriter<'a> {
    out: &'a mut dyn Write,
    docs: &'a Documents,
    format: OutputFormat,
    /// A SimHash run: TSV has a `hamming` column.
    hamming: bool,
    /// What the scores are: their name and their values, from the Jaccard computed.
    measure: Measure,
}

impl<'a> PairWriter<'a> {
    /// Writes the TSV header; `hamming` (a SimHash run) adds the fingerprints' distance
    /// as a last column. The score is named after the `measure`.
    pub fn new(
        out: &'a mut dyn Write,
        docs: &'a Documents,
        format: OutputFormat,
        hamming: bool,
        measure: Measure,
    ) -> io::Result<Self> {
        if format == OutputFormat::Tsv {
            write!(out, "a\tb\t{}\testimate\ttruncated", measure.name())?;
            out.write_all(if hamming { b"\thamming\n" } else { b"\n" })?;
        }
        Ok(PairWriter {
            out,
            docs,
            format,
            hamming,
            measure,
        })
    }

    /// Writes a chunk of pairs and flushes it.
    ///
    /// The ids of the chunk's documents are rendered once each for the chunk, not held
    /// for every document: on 30M documents that table took 1.4 GB.
    pub fn write(&mut self, chunk: &[Pair]) -> io::Result<()> {
        let mut docs: Vec<u32> = chunk.iter().flat_map(|p| [p.a, p.b]).collect();
        docs.par_sort_unstable();
        docs.dedup();
        let (all, format, hamming, measure) = (self.docs, self.format, self.hamming, self.measure);
        let rendered: Vec<Vec<u8>> = docs
            .par_iter()
            .map(|&d| render_id(&all.id(d), format))
            .collect::<io::Result<_>>()?;
        let id = |d: u32| -> &[u8] { &rendered[docs.binary_search(&d).expect("rendered above")] };
        let parts: Vec<Vec<u8>> = chunk
            .par_chunks(FORMAT_TASK)
            .map(|part| format_pairs(part, &id, format, hamming, measure))
            .collect::<io::Result<_>>()?;
        parts.iter().try_for_each(|p| self.out.write_all(p))?;
        self.out.flush()
    }
}

/// An id as it appears in the output: JSON, or escaped for TSV.
pub(crate) fn render_id(id: &DocId, format: OutputFormat) -> io::Result<Vec<u8>> {
    Ok(match format {
        // Parquet is written by parquet_output.rs; never rendered here.
        OutputFormat::Jsonl | OutputFormat::Parquet => serde_json::to_vec(id)?,
        OutputFormat::Tsv => tsv_field(&id.to_string()).into_bytes(),
    })
}

/// A value for a TSV field: tabs, line breaks and backslashes escaped.
fn tsv_field(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out
}

/// A similarity in TSV: rounded like the JSON output, empty if absent.
pub(crate) fn push_tsv_number(buf: &mut Vec<u8>, x: Option<f64>) -> io::Result<()> {
    if let Some(v) = round(x) {
        serde_json::to_writer(&mut *buf, &v)?;
    }
    Ok(())
}

fn format_pairs<'i>(
    pairs: &[Pair],
    id: &(impl Fn(u32) -> &'i [u8] + Sync),
    format: OutputFormat,
    hamming: bool,
    measure: Measure,
) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(pairs.len() * 64);
    let score = |v: Option<f64>| v.map(|j| measure.score(j));
    let key = format!(",\"{}\":", measure.name());
    let unknown = format!("{key}null,\"truncated\":true");
    for p in pairs {
        let (a, b) = (id(p.a), id(p.b));
        match format {
            OutputFormat::Jsonl | OutputFormat::Parquet => {
                buf.extend_from_slice(b"{\"a\":");
                buf.extend_from_slice(a);
                buf.extend_from_slice(b",\"b\":");
                buf.extend_from_slice(b);
                if p.similarity.truncated {
                    // No exact score: a document was longer than the cap.
                    buf.extend_from_slice(unknown.as_bytes());
                }
                // Absent values are left out, as in the cluster lines.
                for (key, value) in [
                    (key.as_bytes(), score(p.similarity.jaccard)),
                    (&b",\"estimate\":"[..], score(p.similarity.estimate)),
                ] {
                    if let Some(v) = round(value) {
                        buf.extend_from_slice(key);
                        serde_json::to_writer(&mut buf, &v)?;
                    }
                }
                if let Some(d) = p.similarity.hamming {
                    write!(buf, ",\"hamming\":{d}")?;
                }
                buf.extend_from_slice(b"}\n");
            }
            OutputFormat::Tsv => {
                buf.extend_from_slice(a);
                buf.push(b'\t');
                buf.extend_from_slice(b);
                buf.push(b'\t');
                push_tsv_number(&mut buf, score(p.similarity.jaccard))?;
                buf.push(b'\t');
                push_tsv_number(&mut buf, score(p.similarity.estimate))?;
                buf.extend_from_slice(if p.similarity.truncated {
                    b"\ttrue"
                } else {
                    b"\tfalse"
                });
                if hamming {
                    buf.push(b'\t');
                    if let Some(d) = p.similarity.hamming {
                        write!(buf, "{d}")?;
                    }
                }
                buf.push(b'\n');
            }
        }
    }
    Ok(buf)
}

#[derive(Serialize)]
struct ClusterLine<'a> {
    id: &'a DocId,
    cluster: usize,
    kept: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    duplicate_of: Option<&'a DocId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jaccard: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimate: Option<f64>,
    /// Removed on an estimate because a document was truncated (`--allow-truncated`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
    /// A SimHash run: the distance of the fingerprints to the kept document's.
    #[serde(skip_serializing_if = "Option::is_none")]
    hamming: Option<u32>,
    /// A run with a reference: the record's file, and the file of the record it
    /// duplicates (the last TSV columns).
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    duplicate_of_source: Option<&'a str>,
}

impl ClusterLine<'_> {
    fn write(&self, out: &mut dyn Write, format: OutputFormat, hamming: bool) -> io::Result<()> {
        match format {
            OutputFormat::Jsonl | OutputFormat::Parquet => serde_json::to_writer(&mut *out, self)?,
            OutputFormat::Tsv => {
                let mut buf = Vec::new();
                buf.extend_from_slice(tsv_field(&self.id.to_string()).as_bytes());
                let of = self.duplicate_of.map(|d| tsv_field(&d.to_string()));
                write!(
                    buf,
                    "\t{}\t{}\t{}\t",
                    self.cluster,
                    self.kept,
                    of.unwrap_or_default()
                )?;
                push_tsv_number(&mut buf, self.jaccard)?;
                buf.push(b'\t');
                push_tsv_number(&mut buf, self.estimate)?;
                if hamming {
                    buf.push(b'\t');
                    if let Some(d) = self.hamming {
                        write!(buf, "{d}")?;
                    }
                }
                if let Some(source) = self.source {
                    let of = self.duplicate_of_source.map(tsv_field);
                    write!(buf, "\t{}\t{}", tsv_field(source), of.unwrap_or_default())?;
                }
                out.write_all(&buf)?;
            }
        }
        out.write_all(b"\n")
    }
}

/// One line per document of each cluster: the kept one first, then its duplicates;
/// `hamming` (a SimHash run) adds the fingerprints' distance as a last TSV column.
pub fn write_clusters(
    out: &mut dyn Write,
    clusters: &Clusters,
    docs: &Documents,
    format: OutputFormat,
    hamming: bool,
) -> io::Result<()> {
    // With a reference, each line names its record's file (a kept one may be the
    // reference's).
    let with_sources = clusters.reference() > 0;
    let source = |doc: u32| with_sources.then(|| docs.source_of(doc));
    if format == OutputFormat::Tsv {
        out.write_all(b"id\tcluster\tkept\tduplicate_of\tjaccard\testimate")?;
        out.write_all(if hamming { b"\thamming" } else { b"" })?;
        out.write_all(if with_sources {
            b"\tsource\tduplicate_of_source\n"
        } else {
            b"\n"
        })?;
    }
    for (n, c) in clusters.iter().enumerate() {
        let kept = &docs.id(c.kept());
        let head = ClusterLine {
            source: source(c.kept()),
            duplicate_of_source: None,
            id: kept,
            cluster: n + 1,
            kept: true,
            duplicate_of: None,
            jaccard: None,
            estimate: None,
            truncated: false,
            hamming: None,
        };
        head.write(out, format, hamming)?;
        for d in c.duplicates() {
            let line = ClusterLine {
                source: source(d.doc),
                duplicate_of_source: source(c.kept()),
                id: &docs.id(d.doc),
                cluster: n + 1,
                kept: false,
                duplicate_of: Some(kept),
                jaccard: round(d.similarity.jaccard),
                estimate: round(d.similarity.estimate),
                truncated: d.similarity.truncated,
                hamming: d.similarity.hamming,
            };
            line.write(out, format, hamming)?;
        }
    }
    out.flush()
}
