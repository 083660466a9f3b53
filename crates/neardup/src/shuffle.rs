//! The shuffle of a distributed run (Spark): band rows encoded in blocks, the walk over a
//! sorted partition of them, and the clustering of the verified edges. Pure Rust, so the
//! same code the Python bindings call is tested here.
//!
//! 1. [`sketch_blocks`] shingles a partition's documents and writes what the shuffle
//!    moves: per destination partition a block of band rows `(key, position, last
//!    family?)` and a block of fingerprint rows `(128-bit set fingerprint, position)`.
//!    Copies inside the partition send no band rows (their first occurrence stands for
//!    them), so a flood of boilerplate costs one fingerprint row per copy. Blocks are
//!    sorted by key and delta-encoded as LEB128 varints: a 64-bit key costs ~7 bytes, a
//!    position ~3.
//! 2. [`BucketWalk`] reads the blocks one shuffle partition received, sorts them, and
//!    walks runs of equal keys: links from each member to the bucket's first (clusters) or
//!    every pair (pairs), and each group of copies as `(first, member)`, in bounded chunks.
//! 3. [`cluster_components`] clusters whole connected components exactly as a corpus run
//!    clusters them (groups of copies, keep order, star cover, verification).
//!
//! Positions are the engine's row positions (`i64`, in input order, not negative); they
//! order documents as the input does, so "first" means what it means on one machine.
//!
//! ```
//! use neardup::shuffle::{sketch_blocks, BucketWalk, Walk};
//! use neardup::{Config, Pipeline};
//!
//! let pipeline = Pipeline::new(Config::builder().build()?)?;
//! let texts = ["a red apple on the table", "pears", "A red apple on the table!"];
//! let blocks = sketch_blocks(&pipeline, &[0, 1, 2], &texts, 1)?;
//! let received: Vec<_> = blocks.iter().map(|b| (b.kind, &b.bytes[..])).collect();
//! let candidates: Vec<(i64, i64)> = BucketWalk::new(&received, Walk::Links)?
//!     .flat_map(|chunk| chunk.rows().collect::<Vec<_>>())
//!     .map(|(a, b, _)| (a, b))
//!     .collect();
//! assert!(candidates.contains(&(0, 2)));
//! # Ok::<(), neardup::Error>(())
//! ```

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use crate::candidates::band_index::bucket_key;
use crate::cluster::clusters::{cluster_sets, UnionFind};
use crate::corpus::slot::MAX_DOCUMENTS;
use crate::sketch::{DocSet, DocSketch};
use crate::{Error, Pipeline, Result, Similarity, Verification};

/// Most rows a [`BucketWalk`] chunk holds.
pub const CHUNK: usize = 1 << 20;

/// What a block holds; its code is what crosses to the engine and back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// Band rows `(key, position, last family?)`; in a walk's chunk, a candidate from a
    /// bucket.
    Bands = 0,
    /// Fingerprint rows `(fingerprint, position)`; in a walk's chunk, a copy `b` of the
    /// first document `a` of its group.
    Copies = 1,
    /// The positions of documents with no shingles, which are skipped; in a walk's chunk,
    /// such a document `a = b`.
    Skipped = 2,
}

impl BlockKind {
    /// The kind's code: 0, 1 or 2.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The kind of a code; an unknown code is a bad block.
    pub fn from_code(code: i64) -> Result<Self> {
        match code {
            0 => Ok(BlockKind::Bands),
            1 => Ok(BlockKind::Copies),
            2 => Ok(BlockKind::Skipped),
            _ => Err(bad(format!("unknown block kind {code}"))),
        }
    }
}

/// One block of a partition's shuffle output, for destination partition `part`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// What it holds.
    pub kind: BlockKind,
    /// The shuffle partition it goes to.
    pub part: usize,
    /// The encoded rows.
    pub bytes: Vec<u8>,
}

fn bad(message: String) -> Error {
    Error::ShuffleBlock(message)
}

/// Which of `parts` shuffle partitions a key goes to (its high bits, scaled).
pub fn part_of(key: u64, parts: usize) -> usize {
    (((key >> 32) * parts as u64) >> 32) as usize
}

/// The shuffle's key of a band's bucket (`band` = family · bands + band): the bucket a
/// corpus run puts the document in, the band and the top 32 bits of its key (the corpus's
/// bucket key), not the whole key, so that the same documents share a bucket. A chance
/// match of those 32 bits is one more candidate, rejected by verification, but in a walk
/// of links it can head the bucket and take its links: with the whole key, a distributed
/// run found links a corpus run does not (the PyPI summaries'
/// `types-aiobotocore-s3vectors`, issue 37). The high half is the bucket's key mixed with
/// the band (it chooses the partition, [`part_of`]), the low half the band, so buckets of
/// different bands never merge when the shuffle brings them to one partition.
pub fn band_key(key: u64, band: usize) -> u64 {
    let band = band as u32;
    (u64::from(bucket_key(key) ^ spread(u64::from(band))) << 32) | u64::from(band)
}

/// 32 well-mixed bits of `x` (Fibonacci hashing).
fn spread(x: u64) -> u32 {
    ((x + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32
}

/// Writes rows sorted by key as varints: the key's delta from the previous row, then
/// (fingerprint blocks) a raw little-endian word, then the position's offset from the
/// block's first (smallest) position, shifted left once with the flag in bit 0.
#[derive(Clone, Debug, Default)]
pub struct BlockWriter {
    rows: Vec<(u64, u64, u64)>,
}

impl BlockWriter {
    /// Adds a row: its key, its extra word (written only with `with_extra`), its position
    /// and its flag.
    pub fn push(&mut self, key: u64, extra: u64, pos: u64, flag: bool) {
        self.rows.push((key, extra, (pos << 1) | flag as u64));
    }

    /// True if no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The block's bytes.
    pub fn finish(mut self, with_extra: bool) -> Vec<u8> {
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

/// Appends `v` as an unsigned LEB128 varint.
fn push_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a block that [`BlockWriter::finish`] wrote.
struct BlockReader<'a> {
    block: &'a [u8],
    at: usize,
}

impl BlockReader<'_> {
    fn var(&mut self) -> Result<u64> {
        let start = self.at;
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.block.get(self.at) else {
                return Err(bad(format!("a block ends inside a number at byte {start}")));
            };
            self.at += 1;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                break;
            }
            v |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(bad(format!("a number past 64 bits at byte {start}")))
    }

    fn word(&mut self) -> Result<u64> {
        let bytes = self
            .block
            .get(self.at..self.at + 8)
            .ok_or_else(|| bad(format!("a block ends inside a word at byte {}", self.at)))?;
        self.at += 8;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }
}

/// Reads every row of a block that [`BlockWriter::finish`] wrote, as `(key, extra,
/// position, flag)`; a truncated or malformed block is an error.
pub fn read_block(
    block: &[u8],
    with_extra: bool,
    mut row: impl FnMut(u64, u64, u64, bool),
) -> Result<()> {
    let mut r = BlockReader { block, at: 0 };
    let (rows, base) = (r.var()?, r.var()?);
    let mut key = 0u64;
    for _ in 0..rows {
        key = key.wrapping_add(r.var()?);
        let extra = if with_extra { r.word()? } else { 0 };
        let p = r.var()?;
        let pos = base
            .checked_add(p >> 1)
            .filter(|&pos| pos <= i64::MAX as u64)
            .ok_or_else(|| bad(format!("a position past 2^63 before byte {}", r.at)))?;
        row(key, extra, pos, p & 1 == 1);
    }
    if r.at != block.len() {
        return Err(bad(format!(
            "{} bytes after the last row",
            block.len() - r.at
        )));
    }
    Ok(())
}

/// One document as the shuffle sees it.
struct Sketched {
    /// `None` for a document whose set is truncated (never grouped with another).
    fingerprint: Option<u128>,
    /// `(key, last family of the document?)` per band of every family it is in.
    bands: Vec<(u64, bool)>,
}

fn sketched(pipeline: &Pipeline, text: &str) -> Option<Sketched> {
    let doc = pipeline.shingle_doc(text);
    if doc.set().is_empty() {
        return None;
    }
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
    Some(Sketched {
        fingerprint: doc.fingerprint(),
        bands,
    })
}

/// One partition's shuffle blocks: a block of band rows and one of fingerprint rows per
/// destination partition (of `parts`) that gets rows, and one block of the documents with
/// no shingles, which are skipped. `positions` are the texts' (not negative).
pub fn sketch_blocks(
    pipeline: &Pipeline,
    positions: &[i64],
    texts: &[&str],
    parts: usize,
) -> Result<Vec<Block>> {
    if positions.len() != texts.len() {
        return Err(bad(format!(
            "{} positions for {} texts",
            positions.len(),
            texts.len()
        )));
    }
    if parts == 0 {
        return Err(bad("a shuffle needs at least one partition".into()));
    }
    let docs: Vec<Option<Sketched>> = texts.par_iter().map(|t| sketched(pipeline, t)).collect();
    let mut writers: Vec<[BlockWriter; 2]> = (0..parts).map(|_| Default::default()).collect();
    let mut seen = HashSet::new();
    let mut skipped = BlockWriter::default();
    for (doc, &pos) in docs.into_iter().zip(positions) {
        let pos = pos as u64;
        let Some(doc) = doc else {
            skipped.push(0, 0, pos, false);
            continue;
        };
        if let Some(fp) = doc.fingerprint {
            let (hi, lo) = ((fp >> 64) as u64, fp as u64);
            writers[part_of(hi, parts)][1].push(hi, lo, pos, false);
            if !seen.insert(fp) {
                continue;
            }
        }
        for (key, last) in doc.bands {
            writers[part_of(key, parts)][0].push(key, 0, pos, last);
        }
    }
    let mut blocks: Vec<Block> = writers
        .into_par_iter()
        .enumerate()
        .flat_map_iter(|(part, [bands, copies])| {
            [(BlockKind::Bands, bands), (BlockKind::Copies, copies)]
                .into_iter()
                .filter(|(_, w)| !w.is_empty())
                .map(move |(kind, w)| Block {
                    kind,
                    part,
                    bytes: w.finish(kind == BlockKind::Copies),
                })
        })
        .collect();
    if let Some(&(_, _, first)) = skipped.rows.first() {
        let part = part_of(u64::from(spread(first)) << 32, parts);
        blocks.push(Block {
            kind: BlockKind::Skipped,
            part,
            bytes: skipped.finish(false),
        });
    }
    Ok(blocks)
}

/// What a [`BucketWalk`] gives for a bucket of m documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// m − 1 links, from each member to the first (enough for clusters).
    Links,
    /// Its m(m − 1)/2 pairs.
    Pairs,
}

/// One chunk of a walk, as columns: positions `a < b` and each row's kind's code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chunk {
    /// The earlier document.
    pub a: Vec<i64>,
    /// The later document (`a` itself for a skipped one).
    pub b: Vec<i64>,
    /// What the row is: [`BlockKind::code`] of `Bands` for a candidate from a bucket,
    /// `Copies` for a copy `b` of the first document `a` of its group, `Skipped` for a
    /// document with no shingles.
    pub kind: Vec<u8>,
}

impl Chunk {
    fn push(&mut self, a: i64, b: i64, kind: BlockKind) {
        self.a.push(a);
        self.b.push(b);
        self.kind.push(kind.code());
    }

    /// Rows in the chunk.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    /// True if the chunk has no row.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// The rows `(a, b, kind code)`.
    pub fn rows(&self) -> impl Iterator<Item = (i64, i64, u8)> + '_ {
        (0..self.len()).map(|i| (self.a[i], self.b[i], self.kind[i]))
    }
}

/// The buckets of one shuffle partition, walked in chunks of at most [`CHUNK`] rows: first
/// the skipped documents and the groups of copies, then the buckets. Of a bucket's pairs
/// only those a corpus run bands in this family (the last family both documents are in)
/// are given.
#[derive(Clone, Debug)]
pub struct BucketWalk {
    /// Band rows `(key, position << 1 | last family?)`, sorted.
    bands: Vec<(u64, u64)>,
    /// Runs of two or more equal keys in `bands`.
    runs: Vec<(usize, usize)>,
    /// Skipped documents as `(d, d)` and groups of copies as `(first, member)`, with their
    /// kind, not yet handed out.
    copies: Vec<(i64, i64, BlockKind)>,
    pairs: bool,
    /// Where the walk is: run, member, and (pairs) the second member.
    at: (usize, usize, usize),
}

impl BucketWalk {
    /// Reads the blocks `(kind, bytes)` one partition received.
    pub fn new(blocks: &[(BlockKind, &[u8])], walk: Walk) -> Result<Self> {
        let mut bands = Vec::new();
        let mut prints = Vec::new();
        let mut copies = Vec::new();
        for &(kind, block) in blocks {
            match kind {
                BlockKind::Bands => read_block(block, false, |key, _, pos, last| {
                    bands.push((key, (pos << 1) | last as u64))
                }),
                BlockKind::Copies => {
                    read_block(block, true, |hi, lo, pos, _| prints.push((hi, lo, pos)))
                }
                BlockKind::Skipped => read_block(block, false, |_, _, pos, _| {
                    copies.push((pos as i64, pos as i64, BlockKind::Skipped))
                }),
            }?;
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
        copies.extend(
            prints
                .chunk_by(|x, y| (x.0, x.1) == (y.0, y.1))
                .flat_map(|run| {
                    run[1..]
                        .iter()
                        .map(|m| (run[0].2 as i64, m.2 as i64, BlockKind::Copies))
                }),
        );
        Ok(BucketWalk {
            bands,
            runs,
            copies,
            pairs: walk == Walk::Pairs,
            at: (0, 1, 0),
        })
    }
}

impl Iterator for BucketWalk {
    type Item = Chunk;

    /// The next chunk; `None` at the end.
    fn next(&mut self) -> Option<Chunk> {
        let mut chunk = Chunk::default();
        let take = self.copies.len().min(CHUNK);
        for (x, y, k) in self.copies.drain(..take) {
            chunk.push(x, y, k);
        }
        while chunk.len() < CHUNK && self.at.0 < self.runs.len() {
            let (start, end) = self.runs[self.at.0];
            let run = &self.bands[start..end];
            let (i, j) = (self.at.1, self.at.2);
            // links: (first, member i); pairs: (member j, member i) for every j < i.
            let x = run[j].1;
            let y = run[i].1;
            if (x | y) & 1 == 1 {
                chunk.push((x >> 1) as i64, (y >> 1) as i64, BlockKind::Bands);
            }
            self.at = if self.pairs && j + 1 < i {
                (self.at.0, i, j + 1)
            } else if i + 1 < run.len() {
                (self.at.0, i + 1, 0)
            } else {
                (self.at.0 + 1, 1, 0)
            };
        }
        (!chunk.is_empty()).then_some(chunk)
    }
}

/// The connected components of an undirected graph of positions, edges `(u[i], v[i])`:
/// every node once, in position order, with its component's label, the smallest position
/// in it (a root is its own label). A task runs it on the edges it verified, and keeps
/// only the rows that are not roots (a star forest with the partition's connectivity);
/// the driver runs it on every partition's forest when they fit its budget.
pub fn components(u: &[i64], v: &[i64]) -> Result<Vec<(i64, i64)>> {
    if u.len() != v.len() {
        return Err(bad(format!("{} edge ends u and {} v", u.len(), v.len())));
    }
    let mut nodes: Vec<i64> = u.iter().chain(v).copied().collect();
    nodes.par_sort_unstable();
    nodes.dedup();
    if nodes.len() > MAX_DOCUMENTS {
        return Err(bad(format!(
            "{} nodes: components take at most {MAX_DOCUMENTS}",
            nodes.len()
        )));
    }
    // Every end is in `nodes`, so its index is where it sorts.
    let index = |p: i64| nodes.partition_point(|&x| x < p) as u32;
    let mut sets = UnionFind::new(nodes.len());
    for (&a, &b) in u.iter().zip(v) {
        sets.union(index(a), index(b));
    }
    // Nodes are sorted: the first met of each set is its smallest.
    let mut lowest = vec![u32::MAX; nodes.len()];
    let mut rows = Vec::with_capacity(nodes.len());
    for (i, &node) in nodes.iter().enumerate() {
        let root = sets.find(i as u32) as usize;
        if lowest[root] == u32::MAX {
            lowest[root] = i as u32;
        }
        rows.push((node, nodes[lowest[root] as usize]));
    }
    Ok(rows)
}

/// One document of a cluster, as [`cluster_components`] gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ComponentRow {
    /// The document's position.
    pub doc: i64,
    /// The position of its cluster's kept document (its own for the kept one).
    pub duplicate_of: i64,
    /// Its similarity to the kept document; `None` for the kept one.
    pub similarity: Option<Similarity>,
}

/// Clusters of whole connected components, as a corpus run clusters them. Rows (a
/// component, a position, a text) come in any order; each component's documents are put
/// in input order, grouped by identical sets, and clustered in keep order with the
/// pipeline's verification. One row per document in a cluster, each cluster's kept
/// document first.
pub fn cluster_components(
    pipeline: &Pipeline,
    components: &[i64],
    positions: &[i64],
    texts: &[&str],
) -> Result<Vec<ComponentRow>> {
    cluster_components_after(pipeline, components, positions, texts, i64::MIN)
}

/// [`cluster_components`] with a reference: documents at positions below `reference_below`
/// are a reference corpus ([`Held::set_reference`](crate::Held::set_reference)): first in
/// keep order, never removed, always heading their clusters; rows only for clusters that
/// hold a document past them.
pub fn cluster_components_after(
    pipeline: &Pipeline,
    components: &[i64],
    positions: &[i64],
    texts: &[&str],
    reference_below: i64,
) -> Result<Vec<ComponentRow>> {
    if positions.len() != texts.len() || components.len() != texts.len() {
        return Err(bad(format!(
            "{} components and {} positions for {} texts",
            components.len(),
            positions.len(),
            texts.len()
        )));
    }
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_unstable_by_key(|&i| (components[i], positions[i]));
    let comps: Vec<&[usize]> = order
        .chunk_by(|&x, &y| components[x] == components[y])
        .collect();
    let per: Vec<Vec<ComponentRow>> = comps
        .par_iter()
        .map(|members| {
            let texts: Vec<&str> = members.iter().map(|&i| texts[i]).collect();
            let global = |d: u32| positions[members[d as usize]];
            // In position order: the reference's documents come first.
            let reference = members
                .iter()
                .take_while(|&&i| positions[i] < reference_below)
                .count() as u32;
            cluster_one(pipeline, &texts, global, reference)
        })
        .collect();
    Ok(per.into_iter().flatten().collect())
}

/// The clusters of one connected component's texts, in input order, the first
/// `reference` of them a reference; `global` names a document by its position.
fn cluster_one(
    pipeline: &Pipeline,
    texts: &[&str],
    global: impl Fn(u32) -> i64,
    reference: u32,
) -> Vec<ComponentRow> {
    let config = pipeline.config();
    let (keep, allow) = (config.keep(), config.allow_truncated());
    let estimates = config.verification() != Verification::Exact;
    let docs: Vec<(DocSet, Option<DocSketch>)> = texts
        .iter()
        .map(|text| {
            let doc = pipeline.shingle_doc(text);
            let sketch = estimates.then(|| pipeline.sketch_doc(&doc));
            (doc, sketch)
        })
        .collect();
    // Identical sets are one group (a truncated set is alone, as in a corpus).
    let mut firsts: HashMap<u128, u32> = HashMap::new();
    let mut sets = 0u32;
    let mut next_set = || {
        sets += 1;
        sets - 1
    };
    let set_of: Vec<u32> = docs
        .iter()
        .map(|(doc, _)| match doc.fingerprint() {
            Some(fp) => *firsts.entry(fp).or_insert_with(&mut next_set),
            None => next_set(),
        })
        .collect();
    // The component is connected already: a chain joins it.
    let links: Vec<(u32, u32)> = (1..docs.len() as u32).map(|d| (d - 1, d)).collect();
    let clusters = cluster_sets(
        &set_of,
        sets as usize,
        &links,
        reference,
        |d| keep.rank(d, texts[d as usize].len()),
        |x, y| {
            let (x, y) = (&docs[x.min(y) as usize], &docs[x.max(y) as usize]);
            let sketches = x.1.as_ref().zip(y.1.as_ref());
            pipeline
                .verify_docs(&x.0, &y.0, sketches)
                .passed()
                .filter(|s| allow || !s.truncated)
        },
    );
    let mut rows = Vec::new();
    for c in clusters.iter() {
        let k = global(c.kept());
        rows.push(ComponentRow {
            doc: k,
            duplicate_of: k,
            similarity: None,
        });
        rows.extend(c.duplicates().map(|d| ComponentRow {
            doc: global(d.doc),
            duplicate_of: k,
            similarity: Some(d.similarity),
        }));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, KeepPolicy, Quiet};

    fn rows_of(block: &[u8], with_extra: bool) -> Result<Vec<(u64, u64, u64, bool)>> {
        let mut rows = Vec::new();
        read_block(block, with_extra, |k, e, p, f| rows.push((k, e, p, f)))?;
        Ok(rows)
    }

    fn written(rows: &[(u64, u64, u64, bool)]) -> BlockWriter {
        let mut w = BlockWriter::default();
        for &(key, extra, pos, flag) in rows {
            w.push(key, extra, pos, flag);
        }
        w
    }

    fn sample_rows() -> Vec<(u64, u64, u64, bool)> {
        vec![
            (u64::MAX, 7, 1 << 40, true),
            (0, u64::MAX, 12, false),
            (1 << 63, 0, 12, true),
            (0, 3, 3_000_000, false),
            (99, 1, 0, true),
        ]
    }

    #[test]
    fn a_block_reads_back_its_rows_sorted() {
        for with_extra in [false, true] {
            let w = written(&sample_rows());
            let mut want: Vec<_> = sample_rows()
                .into_iter()
                .map(|(k, e, p, f)| (k, if with_extra { e } else { 0 }, p, f))
                .collect();
            want.sort_unstable();
            let got = rows_of(&w.finish(with_extra), with_extra).unwrap();
            let mut got_sorted = got.clone();
            got_sorted.sort_unstable();
            assert_eq!(got_sorted, want);
            assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "sorted by key");
        }
        assert_eq!(
            rows_of(&BlockWriter::default().finish(true), true),
            Ok(vec![])
        );
    }

    #[test]
    fn varints_are_leb128() {
        for v in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX] {
            let mut out = Vec::new();
            push_var(&mut out, v);
            assert_eq!(
                out.len(),
                (64 - v.leading_zeros() as usize).div_ceil(7).max(1)
            );
            let mut r = BlockReader { block: &out, at: 0 };
            assert_eq!(r.var(), Ok(v));
            assert_eq!(r.at, out.len());
        }
        let mut out = Vec::new();
        push_var(&mut out, 300);
        assert_eq!(out, [0xAC, 0x02]);
    }

    #[test]
    fn a_bad_or_truncated_block_is_an_error_not_a_panic() {
        let w = written(&sample_rows());
        for with_extra in [false, true] {
            let block = w.clone().finish(with_extra);
            for cut in 0..block.len() {
                let err = rows_of(&block[..cut], with_extra).unwrap_err();
                assert!(matches!(err, Error::ShuffleBlock(_)), "{err}");
            }
            let mut longer = block.clone();
            longer.push(0);
            assert!(rows_of(&longer, with_extra).is_err());
        }
        // A number of eleven bytes, a 10-byte number past 64 bits, a position past 2^63.
        assert!(rows_of(&[0xFF; 11], false).is_err());
        assert!(rows_of(
            &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02],
            false
        )
        .is_err());
        let mut huge = Vec::new();
        for v in [1, u64::MAX, 5, 2] {
            push_var(&mut huge, v);
        }
        assert!(rows_of(&huge, false).is_err());
        // Garbage of every short length: an answer either way, never a panic.
        let mut x = 0x1234_5678_9ABC_DEF0u64;
        for len in 0..200 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x = crate::rng::mix64(x);
                    x as u8
                })
                .collect();
            let _ = rows_of(&bytes, len % 2 == 0);
            let _ = BucketWalk::new(&[(BlockKind::Copies, &bytes[..])], Walk::Pairs);
        }
        assert!(BlockKind::from_code(3).is_err() && BlockKind::from_code(-1).is_err());
        assert_eq!(BlockKind::from_code(2), Ok(BlockKind::Skipped));
    }

    /// A partition by hand: bucket 10 holds 5 (in its last family), 2 and 9; bucket 20
    /// holds 3 and 4, neither in its last family; bucket 30 one document; documents 6 and
    /// 8 are copies, 11 has no copy; 12 has no shingles.
    fn hand_made() -> Vec<(BlockKind, Vec<u8>)> {
        let bands = written(&[(10, 0, 5, true), (20, 0, 3, false), (30, 0, 1, true)]);
        let more = written(&[(10, 0, 2, false), (10, 0, 9, false), (20, 0, 4, false)]);
        let prints = written(&[(7, 1, 8, false), (7, 2, 11, false), (7, 1, 6, false)]);
        let skipped = written(&[(0, 0, 12, false)]);
        vec![
            (BlockKind::Bands, bands.finish(false)),
            (BlockKind::Copies, prints.finish(true)),
            (BlockKind::Bands, more.finish(false)),
            (BlockKind::Skipped, skipped.finish(false)),
        ]
    }

    fn walked(walk: Walk) -> Vec<(i64, i64, u8)> {
        let blocks = hand_made();
        let blocks: Vec<(BlockKind, &[u8])> = blocks.iter().map(|(k, b)| (*k, &b[..])).collect();
        BucketWalk::new(&blocks, walk)
            .unwrap()
            .flat_map(|c| c.rows().collect::<Vec<_>>())
            .collect()
    }

    #[test]
    fn the_walk_links_each_member_to_the_first_in_its_last_family() {
        assert_eq!(walked(Walk::Links), [(12, 12, 2), (6, 8, 1), (2, 5, 0)]);
    }

    #[test]
    fn the_walk_gives_every_pair_banded_in_its_family() {
        assert_eq!(
            walked(Walk::Pairs),
            [(12, 12, 2), (6, 8, 1), (2, 5, 0), (5, 9, 0)]
        );
    }

    #[test]
    fn the_walk_cuts_large_buckets_into_chunks() {
        let mut w = BlockWriter::default();
        for pos in 0..(CHUNK as u64 + 10) {
            w.push(42, 0, pos, true);
        }
        let block = w.finish(false);
        let chunks: Vec<Chunk> = BucketWalk::new(&[(BlockKind::Bands, &block[..])], Walk::Links)
            .unwrap()
            .collect();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].len(), CHUNK);
        assert_eq!(chunks[1].len(), 9);
        assert!(chunks.iter().flat_map(|c| c.a.iter()).all(|&a| a == 0));
        assert_eq!(chunks[1].b.last(), Some(&(CHUNK as i64 + 9)));
    }

    fn corpus_texts() -> Vec<String> {
        let base = [
            "the quick brown fox jumps over the lazy dog near the river bank",
            "a library for parsing command line arguments in many languages",
            "near duplicate detection with minhash and locality sensitive hashing",
        ];
        let mut texts = Vec::new();
        for (i, b) in base.iter().enumerate() {
            texts.push(b.to_string());
            texts.push(format!("{b}!"));
            texts.push(format!("{b} today"));
            texts.push(b.to_string());
            texts.push(format!(
                "unrelated text number {i} about something else entirely"
            ));
        }
        texts.push(String::new());
        texts.push("x".repeat(500));
        texts
    }

    #[test]
    fn components_cluster_as_the_corpus_does() {
        let texts = corpus_texts();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for keep in [KeepPolicy::First, KeepPolicy::Longest, KeepPolicy::Last] {
            for verification in [Verification::Exact, Verification::Estimate] {
                let config = Config::builder()
                    .keep(keep)
                    .verification(verification)
                    .build()
                    .unwrap();
                let pipeline = Pipeline::new(config).unwrap();
                let corpus = pipeline.sketch_texts(&refs).unwrap();
                let (want, _) = pipeline.clusters(&corpus, &mut Quiet);
                assert!(want.len() >= 3, "{want:?}");
                // Each cluster one component, every other document one of its own, in
                // scrambled order, at positions 10·i + 3.
                let mut component = vec![-1i64; refs.len()];
                for (c, cluster) in want.iter().enumerate() {
                    component[cluster.kept as usize] = c as i64;
                    for d in &cluster.duplicates {
                        component[d.doc as usize] = c as i64;
                    }
                }
                let mut rows: Vec<(i64, i64, &str)> = (0..refs.len())
                    .map(|i| {
                        let c = if component[i] < 0 {
                            1000 + i as i64
                        } else {
                            component[i]
                        };
                        (c, 10 * i as i64 + 3, refs[i])
                    })
                    .collect();
                rows.reverse();
                let comps: Vec<i64> = rows.iter().map(|r| r.0).collect();
                let pos: Vec<i64> = rows.iter().map(|r| r.1).collect();
                let txt: Vec<&str> = rows.iter().map(|r| r.2).collect();
                let got = cluster_components(&pipeline, &comps, &pos, &txt).unwrap();
                let at = |d: u32| 10 * d as i64 + 3;
                let want_rows: Vec<ComponentRow> = want
                    .iter()
                    .flat_map(|c| {
                        std::iter::once(ComponentRow {
                            doc: at(c.kept),
                            duplicate_of: at(c.kept),
                            similarity: None,
                        })
                        .chain(c.duplicates.iter().map(|d| {
                            ComponentRow {
                                doc: at(d.doc),
                                duplicate_of: at(c.kept),
                                similarity: Some(d.similarity),
                            }
                        }))
                    })
                    .collect();
                assert_eq!(got, want_rows, "{keep:?} {verification:?}");
            }
        }
    }

    #[test]
    fn a_reference_below_a_position_is_never_removed_and_heads() {
        let pipeline = Pipeline::new(Config::builder().build().unwrap()).unwrap();
        let texts = [
            "a red apple on the table",
            "A red apple on the table!",
            "a red apple on the table.",
        ];
        let rows = |below| cluster_components_after(&pipeline, &[0; 3], &[5, 6, 7], &texts, below);
        let heads = |rows: Vec<ComponentRow>| -> Vec<(i64, i64)> {
            rows.iter().map(|r| (r.doc, r.duplicate_of)).collect()
        };
        // Without a reference the first copy keeps the two others.
        assert_eq!(heads(rows(i64::MIN).unwrap()), [(5, 5), (6, 5), (7, 5)]);
        // Both reference documents stay; the later one heads no cluster with a new document.
        assert_eq!(heads(rows(7).unwrap()), [(5, 5), (7, 5)]);
    }

    #[test]
    fn components_label_each_node_with_its_smallest_position() {
        // Two chains and a star, given in no order, with a repeated edge and a loop.
        let edges = [
            (9, 4),
            (4, 30),
            (7, 7),
            (12, 5),
            (5, 40),
            (40, 12),
            (4, 9),
            (2, 100),
        ];
        let (u, v): (Vec<i64>, Vec<i64>) = edges.iter().copied().unzip();
        let got = components(&u, &v).unwrap();
        assert_eq!(
            got,
            vec![
                (2, 2),
                (4, 4),
                (5, 5),
                (7, 7),
                (9, 4),
                (12, 5),
                (30, 4),
                (40, 5),
                (100, 2)
            ]
        );
        // A partition's forest (the rows that are not roots) joined with another's gives
        // the components of the union of their edges.
        let forest: Vec<(i64, i64)> = got.into_iter().filter(|(n, l)| n != l).collect();
        let (mut u2, mut v2): (Vec<i64>, Vec<i64>) = forest.into_iter().unzip();
        u2.extend([100, 30]);
        v2.extend([40, 1]);
        let joined: HashMap<i64, i64> = components(&u2, &v2).unwrap().into_iter().collect();
        assert!([2, 5, 12, 40, 100].iter().all(|n| joined[n] == 2));
        assert!([4, 9, 30].iter().all(|n| joined[n] == 1));
        assert!(components(&[1], &[]).is_err());
        assert!(components(&[], &[]).unwrap().is_empty());
    }

    #[test]
    fn inputs_that_do_not_fit_are_refused() {
        let pipeline = Pipeline::new(Config::builder().build().unwrap()).unwrap();
        assert!(sketch_blocks(&pipeline, &[0], &["a", "b"], 1).is_err());
        assert!(sketch_blocks(&pipeline, &[0], &["a"], 0).is_err());
        assert!(cluster_components(&pipeline, &[0], &[0, 1], &["a", "b"]).is_err());
    }

    /// Five PyPI summaries where the first's band key matches two others' in its top 32
    /// bits, by chance, in a band where they share a bucket.
    const CHANCE: [&str; 5] = [
        "Generate OKF knowledge bundles from codebases — Claude skill + OpenCode integration",
        "Type annotations for aiobotocore AccessAnalyzer 3.10.0 service generated with mypy-boto3-builder 8.12.0",
        "Type annotations for aiobotocore S3Control 3.10.0 service generated with mypy-boto3-builder 8.12.0",
        "Type annotations for aiobotocore S3Outposts 3.10.0 service generated with mypy-boto3-builder 8.12.0",
        "Type annotations for aiobotocore S3Tables 3.10.0 service generated with mypy-boto3-builder 8.12.0",
    ];

    #[test]
    fn buckets_are_the_corpus_buckets_chance_matches_included() {
        let config = Config::builder().neighbours(false).build().unwrap();
        let pipeline = Pipeline::new(config).unwrap();
        let blocks = sketch_blocks(&pipeline, &[0, 1, 2, 3, 4], &CHANCE, 1).unwrap();
        let received: Vec<(BlockKind, &[u8])> =
            blocks.iter().map(|b| (b.kind, &b.bytes[..])).collect();
        let links: HashSet<(i64, i64)> = BucketWalk::new(&received, Walk::Links)
            .unwrap()
            .flat_map(|c| c.rows().map(|(a, b, _)| (a, b)).collect::<Vec<_>>())
            .collect();
        // The chance match heads the bucket of 3 and 4, as in a corpus run, where their
        // other buckets are headed by 1 and 2, neither similar enough: the run finds no
        // cluster (3 and 4 have Jaccard 0.81), and the distributed one must not either.
        assert!(
            links.contains(&(0, 3)) && links.contains(&(0, 4)),
            "{links:?}"
        );
        assert!(!links.contains(&(3, 4)), "{links:?}");
        let corpus = pipeline.sketch_texts(&CHANCE).unwrap();
        let (clusters, _) = pipeline.clusters(&corpus, &mut Quiet);
        assert!(clusters.is_empty(), "{clusters:?}");
    }

    #[test]
    fn sketched_blocks_walk_to_the_corpus_candidates() {
        let texts = corpus_texts();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let config = Config::builder().neighbours(false).build().unwrap();
        let pipeline = Pipeline::new(config).unwrap();
        let positions: Vec<i64> = (0..refs.len() as i64).collect();
        // Two source partitions, three shuffle partitions.
        let half = refs.len() / 2;
        let mut blocks = sketch_blocks(&pipeline, &positions[..half], &refs[..half], 3).unwrap();
        blocks.extend(sketch_blocks(&pipeline, &positions[half..], &refs[half..], 3).unwrap());
        let mut rows = Vec::new();
        for part in 0..3 {
            let received: Vec<(BlockKind, &[u8])> = blocks
                .iter()
                .filter(|b| b.part == part)
                .map(|b| (b.kind, &b.bytes[..]))
                .collect();
            rows.extend(
                BucketWalk::new(&received, Walk::Pairs)
                    .unwrap()
                    .flat_map(|c| c.rows().collect::<Vec<_>>()),
            );
        }
        let skipped: Vec<i64> = rows.iter().filter(|r| r.2 == 2).map(|r| r.0).collect();
        assert_eq!(skipped, [refs.len() as i64 - 2]);
        // Every verified pair of the corpus is a candidate, or joins two copies of one
        // group, or a copy's first document with a candidate of it.
        let mut first = (0..refs.len() as i64).collect::<Vec<_>>();
        for r in rows.iter().filter(|r| r.2 == 1) {
            first[r.1 as usize] = r.0;
        }
        let candidates: HashSet<(i64, i64)> = rows
            .iter()
            .filter(|r| r.2 == 0)
            .map(|r| (r.0, r.1))
            .collect();
        let corpus = pipeline.sketch_texts(&refs).unwrap();
        let (pairs, _) = pipeline.pairs(&corpus, &mut Quiet);
        assert!(pairs.len() >= 6, "{pairs:?}");
        for p in pairs {
            let (a, b) = (first[p.a as usize], first[p.b as usize]);
            let (a, b) = (a.min(b), a.max(b));
            assert!(a == b || candidates.contains(&(a, b)), "{p:?} not found");
        }
    }
}
