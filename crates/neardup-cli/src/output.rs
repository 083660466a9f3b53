//! JSON lines for pairs and clusters.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use neardup::{Cluster, Pair};
use serde::Serialize;

use crate::input::DocId;

/// Standard output, or a file, buffered.
pub fn open_output(path: Option<&Path>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) if p != Path::new("-") => Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        _ => Box::new(BufWriter::new(io::stdout().lock())),
    })
}

/// Similarities are printed to 6 decimals: rounding is monotone, so a value ≥ t stays ≥ t.
fn round(x: Option<f64>) -> Option<f64> {
    x.map(|v| (v * 1e6).round() / 1e6)
}

#[derive(Serialize)]
struct PairLine<'a> {
    a: &'a DocId,
    b: &'a DocId,
    jaccard: Option<f64>,
    estimate: Option<f64>,
}

/// One line per pair.
pub fn write_pairs(out: &mut dyn Write, pairs: &[Pair], ids: &[DocId]) -> io::Result<()> {
    for p in pairs {
        let line = PairLine {
            a: &ids[p.a as usize],
            b: &ids[p.b as usize],
            jaccard: round(p.similarity.jaccard),
            estimate: round(p.similarity.estimate),
        };
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(b"\n")?;
    }
    out.flush()
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
}

/// One line per document of each cluster: the kept one first, then its duplicates.
pub fn write_clusters(out: &mut dyn Write, clusters: &[Cluster], ids: &[DocId]) -> io::Result<()> {
    for (n, c) in clusters.iter().enumerate() {
        let kept = &ids[c.kept as usize];
        let head = ClusterLine {
            id: kept,
            cluster: n + 1,
            kept: true,
            duplicate_of: None,
            jaccard: None,
            estimate: None,
        };
        serde_json::to_writer(&mut *out, &head)?;
        out.write_all(b"\n")?;
        for d in &c.duplicates {
            let line = ClusterLine {
                id: &ids[d.doc as usize],
                cluster: n + 1,
                kept: false,
                duplicate_of: Some(kept),
                jaccard: round(d.similarity.jaccard),
                estimate: round(d.similarity.estimate),
            };
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()
}
