//! JSON lines for pairs and clusters.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use neardup::{Cluster, Pair};
use serde::Serialize;

use crate::input::DocId;

/// Output buffer: large writes for outputs of millions of lines.
const OUT_BUFFER: usize = 1 << 20;

/// Standard output, or a file, buffered.
pub fn open_output(path: Option<&Path>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) if p != Path::new("-") => Box::new(BufWriter::with_capacity(
            OUT_BUFFER,
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        _ => Box::new(BufWriter::with_capacity(OUT_BUFFER, io::stdout().lock())),
    })
}

/// Similarities are printed to 6 decimals: rounding is monotone, so a value ≥ t stays ≥ t.
fn round(x: Option<f64>) -> Option<f64> {
    x.map(|v| (v * 1e6).round() / 1e6)
}

/// One line per pair. Ids repeat across many pairs, so each id's JSON is rendered once.
pub fn write_pairs(out: &mut dyn Write, pairs: &[Pair], ids: &[DocId]) -> io::Result<()> {
    let mut rendered: Vec<Option<Vec<u8>>> = vec![None; ids.len()];
    let mut line = Vec::with_capacity(256);
    for p in pairs {
        line.clear();
        line.extend_from_slice(b"{\"a\":");
        push_id(&mut line, &mut rendered, ids, p.a)?;
        line.extend_from_slice(b",\"b\":");
        push_id(&mut line, &mut rendered, ids, p.b)?;
        line.extend_from_slice(b",\"jaccard\":");
        serde_json::to_writer(&mut line, &round(p.similarity.jaccard))?;
        line.extend_from_slice(b",\"estimate\":");
        serde_json::to_writer(&mut line, &round(p.similarity.estimate))?;
        line.extend_from_slice(b"}\n");
        out.write_all(&line)?;
    }
    out.flush()
}

fn push_id(
    line: &mut Vec<u8>,
    rendered: &mut [Option<Vec<u8>>],
    ids: &[DocId],
    doc: u32,
) -> io::Result<()> {
    let slot = &mut rendered[doc as usize];
    if slot.is_none() {
        *slot = Some(serde_json::to_vec(&ids[doc as usize])?);
    }
    line.extend_from_slice(slot.as_deref().unwrap_or_default());
    Ok(())
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
