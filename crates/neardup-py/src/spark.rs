//! The Rust side of `neardup.spark`: what each Spark task runs on its partition.
//!
//! 1. [`spark_sketch`] shingles a partition's documents and writes what the shuffle moves:
//!    per destination partition a block of band rows `(key, position, last family?)` and a
//!    block of fingerprint rows `(128-bit set fingerprint, position)`. Copies inside the
//!    partition send no band rows (their first occurrence stands for them), so a flood of
//!    boilerplate costs one fingerprint row per copy. Blocks are sorted by key and
//!    delta-encoded as LEB128 varints: a 64-bit key costs ~7 bytes, a position ~3.
//! 2. [`BucketWalk`] reads the blocks one shuffle partition received, sorts them, and
//!    walks runs of equal keys: links from each member to the bucket's first (clusters) or
//!    every pair (pairs), and each group of copies as `(first, member)`, in bounded chunks.
//! 3. [`spark_clusters`] clusters whole connected components exactly as a corpus run
//!    clusters them (groups of copies, keep order, star cover, verification).
//!
//! Positions are Spark's row positions (`i64`, in input order); they order documents as
//! the input does, so "first" means what it means on one machine.

use std::collections::HashSet;

use integer_encoding::VarInt;
use neardup::{cluster_sets, DocSet, KeepPolicy, Similarity, Verification};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use crate::blocks::array_data;
use crate::buffer::Buffer;
use crate::config::NativeConfig;
use crate::texts;
use crate::threads;

/// Block kind of band rows.
const BANDS: i32 = 0;
/// Block kind of fingerprint rows.
const COPIES: i32 = 1;
/// Block kind of the positions of documents with no shingles.
const SKIPPED: i32 = 2;
/// Most rows a [`BucketWalk`] chunk holds.
const CHUNK: usize = 1 << 20;

/// A contiguous NumPy int64 vector, copied.
fn i64_vector(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let (address, shape) = array_data(obj, "<i8", 1)?;
    if shape[0] == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: a contiguous array of `shape[0]` i64 that `obj` keeps alive during the copy.
    Ok(unsafe { std::slice::from_raw_parts(address as *const i64, shape[0]) }.to_vec())
}

/// Which of `parts` shuffle partitions a key goes to (its high bits, scaled).
fn part_of(key: u64, parts: usize) -> usize {
    (((key >> 32) * parts as u64) >> 32) as usize
}

/// A band key made distinct per band (family · bands + band): buckets of different bands
/// never merge when the shuffle brings them to one partition.
fn band_key(key: u64, band: usize) -> u64 {
    key ^ (band as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One document as the shuffle sees it.
struct Sketched {
    pos: u64,
    /// `None` for a document whose set is truncated (never grouped with another).
    fingerprint: Option<u128>,
    /// `(key, last family of the document?)` per band of every family it is in; empty for
    /// a copy of an earlier document of the partition.
    bands: Vec<(u64, bool)>,
}

/// Writes rows sorted by key as varints: the key's delta from the previous row, then
/// `extra` raw little-endian words, then the position's offset from the block's first
/// (smallest) position, shifted left once with `flag` in bit 0.
#[derive(Default)]
struct BlockWriter {
    rows: Vec<(u64, u64, u64)>,
}

impl BlockWriter {
    fn push(&mut self, key: u64, extra: u64, pos_flag: u64) {
        self.rows.push((key, extra, pos_flag));
    }

    fn finish(mut self, with_extra: bool) -> Vec<u8> {
        self.rows.sort_unstable();
        let base = self.rows.iter().map(|r| r.2 >> 1).min().unwrap_or(0);
        let mut out = Vec::with_capacity(self.rows.len() * 12 + 20);
        push_var(&mut out, self.rows.len() as u64);
        push_var(&mut out, base);
        let mut prev = 0u64;
        for &(key, extra, pos_flag) in &self.rows {
            push_var(&mut out, key - prev);
            prev = key;
            if with_extra {
                out.extend_from_slice(&extra.to_le_bytes());
            }
            let offset = (pos_flag >> 1) - base;
            push_var(&mut out, (offset << 1) | (pos_flag & 1));
        }
        out
    }
}

fn push_var(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 10];
    let n = v.encode_var(&mut buf);
    out.extend_from_slice(&buf[..n]);
}

/// Reads a block that [`BlockWriter::finish`] wrote.
struct BlockReader<'a> {
    block: &'a [u8],
    at: usize,
}

impl BlockReader<'_> {
    fn var(&mut self) -> Result<u64, String> {
        let (v, n) = u64::decode_var(&self.block[self.at..])
            .ok_or_else(|| format!("a block ends inside a number at byte {}", self.at))?;
        self.at += n;
        Ok(v)
    }

    fn word(&mut self) -> Result<u64, String> {
        let bytes = self
            .block
            .get(self.at..self.at + 8)
            .ok_or_else(|| format!("a block ends inside a word at byte {}", self.at))?;
        self.at += 8;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// Every row: `(key, extra, position, flag)`.
    fn rows(
        block: &[u8],
        with_extra: bool,
        mut row: impl FnMut(u64, u64, u64, bool),
    ) -> Result<(), String> {
        let mut r = BlockReader { block, at: 0 };
        let (rows, base) = (r.var()?, r.var()?);
        let mut key = 0u64;
        for _ in 0..rows {
            key = key.wrapping_add(r.var()?);
            let extra = if with_extra { r.word()? } else { 0 };
            let p = r.var()?;
            row(key, extra, base + (p >> 1), p & 1 == 1);
        }
        Ok(())
    }
}

/// One partition's shuffle blocks `[(kind, part, block), ...]`: a block of band rows
/// (kind 0) and one of fingerprint rows (kind 1) per destination partition that gets
/// rows, and one block (kind 2) of the documents with no shingles, which are skipped.
#[pyfunction]
#[pyo3(signature = (config, positions, texts, parts, threads))]
pub fn spark_sketch<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    positions: &Bound<'py, PyAny>,
    texts: &Bound<'py, PyAny>,
    parts: usize,
    threads: Option<i64>,
) -> PyResult<Vec<(i32, i32, Bound<'py, PyBytes>)>> {
    config.refuse_containment("neardup.spark")?;
    let threads = threads::parse(threads)?;
    let positions = i64_vector(positions)?;
    let texts = texts::read(texts, "texts")?;
    if positions.len() != texts.len() {
        return Err(PyValueError::new_err(format!(
            "{} positions for {} texts",
            positions.len(),
            texts.len()
        )));
    }
    if parts == 0 || parts > i32::MAX as usize {
        return Err(PyValueError::new_err(format!(
            "parts must be in 1..2^31, got {parts}"
        )));
    }
    let pipeline = config.pipeline();
    let blocks = py.detach(|| {
        threads::run(threads, || {
            let docs: Vec<Option<Sketched>> = texts
                .as_slice()
                .par_iter()
                .zip(positions.par_iter())
                .map(|(text, &pos)| {
                    let doc = pipeline.shingle_doc(text);
                    (!doc.set().is_empty()).then(|| {
                        let sketch = pipeline.sketch_doc_keys(&doc);
                        let families = sketch.families();
                        let last = families.iter().map(|f| f.family()).max().unwrap_or(0);
                        let bands = families
                            .iter()
                            .flat_map(|part| {
                                let base = part.family() * part.band_keys().len();
                                let is_last = part.family() == last;
                                part.band_keys()
                                    .iter()
                                    .enumerate()
                                    .map(move |(j, &k)| (band_key(k, base + j), is_last))
                            })
                            .collect();
                        Sketched {
                            pos: pos as u64,
                            fingerprint: doc.fingerprint(),
                            bands,
                        }
                    })
                })
                .collect();
            let mut writers: Vec<[BlockWriter; 2]> =
                (0..parts).map(|_| Default::default()).collect();
            let mut seen = HashSet::new();
            let mut skipped = BlockWriter::default();
            for (doc, &pos) in docs.into_iter().zip(&positions) {
                let Some(doc) = doc else {
                    skipped.push(0, 0, (pos as u64) << 1);
                    continue;
                };
                if let Some(fp) = doc.fingerprint {
                    let (hi, lo) = ((fp >> 64) as u64, fp as u64);
                    writers[part_of(hi, parts)][1].push(hi, lo, doc.pos << 1);
                    if !seen.insert(fp) {
                        continue;
                    }
                }
                for (key, last) in doc.bands {
                    writers[part_of(key, parts)][0].push(key, 0, (doc.pos << 1) | last as u64);
                }
            }
            let mut blocks: Vec<(i32, i32, Vec<u8>)> = writers
                .into_par_iter()
                .enumerate()
                .flat_map_iter(|(part, [bands, copies])| {
                    [(BANDS, bands), (COPIES, copies)]
                        .into_iter()
                        .filter(|(_, w)| !w.rows.is_empty())
                        .map(move |(kind, w)| (kind, part as i32, w.finish(kind == COPIES)))
                })
                .collect();
            if let Some(&(_, _, first)) = skipped.rows.first() {
                let part = part_of(band_key(first, 0), parts) as i32;
                blocks.push((SKIPPED, part, skipped.finish(false)));
            }
            blocks
        })
    })?;
    Ok(blocks
        .into_iter()
        .map(|(kind, part, bytes)| (kind, part, PyBytes::new(py, &bytes)))
        .collect())
}

/// The buckets of one shuffle partition, walked in chunks: each chunk `(a, b, kind)`, int64
/// positions with `a < b` and kind 0 for a candidate from a bucket, 1 for a copy `b` of
/// the first document `a` of its group, 2 for a document with no shingles (`a = b`). A bucket of m documents gives m − 1 links to its
/// first member (`links`) or its m(m − 1)/2 pairs (`pairs`), and only the pairs that a
/// corpus run bands in this family (the last family both documents are in).
#[pyclass(name = "_BucketWalk", module = "neardup._neardup")]
pub struct BucketWalk {
    /// Band rows `(key, position << 1 | last family?)`, sorted.
    bands: Vec<(u64, u64)>,
    /// Runs of two or more equal keys in `bands`.
    runs: Vec<(usize, usize)>,
    /// Groups of copies as `(first, member, 1)` and skipped documents as `(d, d, 2)`, not
    /// yet handed out.
    copies: Vec<(i64, i64, u8)>,
    pairs: bool,
    /// Where the walk is: run, member, and (pairs) the second member.
    at: (usize, usize, usize),
}

#[pymethods]
impl BucketWalk {
    /// Reads the blocks (`[(kind, block), ...]`) of one partition; `mode` is `links` or
    /// `pairs`.
    #[new]
    fn new(py: Python<'_>, blocks: Vec<(i32, Vec<u8>)>, mode: &str) -> PyResult<Self> {
        let pairs = match mode {
            "pairs" => true,
            "links" => false,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "mode must be links or pairs, got {mode:?}"
                )))
            }
        };
        py.detach(|| {
            let mut bands = Vec::new();
            let mut prints = Vec::new();
            let mut skipped = Vec::new();
            for (kind, block) in &blocks {
                match *kind {
                    BANDS => BlockReader::rows(block, false, |key, _, pos, last| {
                        bands.push((key, (pos << 1) | last as u64))
                    }),
                    COPIES => {
                        BlockReader::rows(block, true, |hi, lo, pos, _| prints.push((hi, lo, pos)))
                    }
                    SKIPPED => BlockReader::rows(block, false, |_, _, pos, _| {
                        skipped.push((pos as i64, pos as i64, SKIPPED as u8))
                    }),
                    _ => Err(format!("unknown block kind {kind}")),
                }
                .map_err(PyValueError::new_err)?;
            }
            bands.par_sort_unstable();
            prints.par_sort_unstable();
            let runs = bands
                .chunk_by(|x, y| x.0 == y.0)
                .scan(0usize, |start, run| {
                    let range = (*start, *start + run.len());
                    *start += run.len();
                    Some(range)
                })
                .filter(|(s, e)| e - s > 1)
                .collect();
            let mut copies = skipped;
            copies.extend(
                prints
                    .chunk_by(|x, y| (x.0, x.1) == (y.0, y.1))
                    .flat_map(|run| {
                        run[1..]
                            .iter()
                            .map(|m| (run[0].2 as i64, m.2 as i64, COPIES as u8))
                    }),
            );
            Ok(BucketWalk {
                bands,
                runs,
                copies,
                pairs,
                at: (0, 1, 0),
            })
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next chunk `(a, b, kind)`, at most 2^20 rows; `None` at the end.
    fn __next__(&mut self) -> Option<(Buffer, Buffer, Buffer)> {
        let (mut a, mut b, mut kind) = (Vec::new(), Vec::new(), Vec::new());
        let take = self.copies.len().min(CHUNK);
        for (x, y, k) in self.copies.drain(..take) {
            a.push(x);
            b.push(y);
            kind.push(k);
        }
        while a.len() < CHUNK && self.at.0 < self.runs.len() {
            let (start, end) = self.runs[self.at.0];
            let run = &self.bands[start..end];
            let (i, j) = (self.at.1, self.at.2);
            // links: (first, member i); pairs: (member j, member i) for every j < i.
            let x = run[j].1;
            let y = run[i].1;
            if (x | y) & 1 == 1 {
                a.push((x >> 1) as i64);
                b.push((y >> 1) as i64);
                kind.push(BANDS as u8);
            }
            self.at = if self.pairs && j + 1 < i {
                (self.at.0, i, j + 1)
            } else if i + 1 < run.len() {
                (self.at.0, i + 1, 0)
            } else {
                (self.at.0 + 1, 1, 0)
            };
        }
        (!a.is_empty()).then(|| (Buffer::column(a), Buffer::column(b), Buffer::column(kind)))
    }
}

/// Clusters of whole connected components, as a corpus run clusters them. Rows (a
/// component, a position, a text) come in any order; each component's documents are put
/// in input order, grouped by identical sets, and clustered in keep order with the
/// configured verification. One row per document in a cluster, as columns `doc`, `duplicate_of`
/// (the kept document; itself for the kept one), `kept`, `jaccard`, `estimate`,
/// `truncated` (NaN/false for a kept document).
#[pyfunction]
#[pyo3(signature = (config, components, positions, texts, threads))]
pub fn spark_clusters<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    components: &Bound<'py, PyAny>,
    positions: &Bound<'py, PyAny>,
    texts: &Bound<'py, PyAny>,
    threads: Option<i64>,
) -> PyResult<Vec<(&'static str, Buffer)>> {
    let threads = threads::parse(threads)?;
    let components = i64_vector(components)?;
    let positions = i64_vector(positions)?;
    let texts = texts::read(texts, "texts")?;
    if positions.len() != texts.len() || components.len() != texts.len() {
        return Err(PyValueError::new_err(format!(
            "{} components and {} positions for {} texts",
            components.len(),
            positions.len(),
            texts.len()
        )));
    }
    let pipeline = config.pipeline();
    let keep: KeepPolicy = config.config().keep();
    let allow = config.config().allow_truncated();
    let estimates = config.config().verification() != Verification::Exact;
    let rows = py.detach(|| {
        threads::run(threads, || {
            let mut order: Vec<usize> = (0..texts.len()).collect();
            order.sort_unstable_by_key(|&i| (components[i], positions[i]));
            let comps: Vec<&[usize]> = order
                .chunk_by(|&x, &y| components[x] == components[y])
                .collect();
            let per: Vec<Vec<(i64, i64, Option<Similarity>)>> = comps
                .par_iter()
                .map(|members| {
                    let docs: Vec<(DocSet, Option<neardup::DocSketch>)> = members
                        .iter()
                        .map(|&i| {
                            let doc = pipeline.shingle_doc(texts.as_slice()[i]);
                            let sketch = estimates.then(|| pipeline.sketch_doc(&doc));
                            (doc, sketch)
                        })
                        .collect();
                    // Identical sets are one group (a truncated set is alone, as in a corpus).
                    let mut set_of = vec![0u32; docs.len()];
                    let mut firsts: std::collections::HashMap<u128, u32> = Default::default();
                    let mut sets = 0u32;
                    for (d, (doc, _)) in docs.iter().enumerate() {
                        set_of[d] = match doc.fingerprint() {
                            Some(fp) => *firsts.entry(fp).or_insert_with(|| {
                                sets += 1;
                                sets - 1
                            }),
                            None => {
                                sets += 1;
                                sets - 1
                            }
                        };
                    }
                    // The component is connected already: a chain joins it.
                    let links: Vec<(u32, u32)> =
                        (1..docs.len() as u32).map(|d| (d - 1, d)).collect();
                    let lens: Vec<usize> =
                        members.iter().map(|&i| texts.as_slice()[i].len()).collect();
                    let clusters = cluster_sets(
                        &set_of,
                        sets as usize,
                        &links,
                        |d| keep.rank(d, lens[d as usize]),
                        |x, y| {
                            let (x, y) = (&docs[x.min(y) as usize], &docs[x.max(y) as usize]);
                            let sketches = x.1.as_ref().zip(y.1.as_ref());
                            pipeline
                                .verify_docs(&x.0, &y.0, sketches)
                                .passed()
                                .filter(|s| allow || !s.truncated)
                        },
                    );
                    let global = |d: u32| positions[members[d as usize]];
                    let mut rows = Vec::new();
                    for c in clusters.iter() {
                        let k = global(c.kept());
                        rows.push((k, k, None));
                        rows.extend(
                            c.duplicates()
                                .map(|d| (global(d.doc), k, Some(d.similarity))),
                        );
                    }
                    rows
                })
                .collect();
            per.into_iter().flatten().collect::<Vec<_>>()
        })
    })?;
    let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
    Ok(vec![
        (
            "doc",
            Buffer::column(rows.iter().map(|r| r.0).collect::<Vec<i64>>()),
        ),
        (
            "duplicate_of",
            Buffer::column(rows.iter().map(|r| r.1).collect::<Vec<i64>>()),
        ),
        (
            "kept",
            Buffer::column(rows.iter().map(|r| r.2.is_none()).collect::<Vec<bool>>()),
        ),
        (
            "jaccard",
            Buffer::column(
                rows.iter()
                    .map(|r| nan(r.2.and_then(|s| s.jaccard)))
                    .collect::<Vec<f64>>(),
            ),
        ),
        (
            "estimate",
            Buffer::column(
                rows.iter()
                    .map(|r| nan(r.2.and_then(|s| s.estimate)))
                    .collect::<Vec<f64>>(),
            ),
        ),
        (
            "truncated",
            Buffer::column(
                rows.iter()
                    .map(|r| r.2.is_some_and(|s| s.truncated))
                    .collect::<Vec<bool>>(),
            ),
        ),
    ])
}
