//! A segment: an immutable file of documents (ids, shingle sets) and their band postings,
//! memory-mapped and read in place.
//!
//! Documents with the same shingle set (copies of one text, a boilerplate summary posted
//! 5,000 times) share one *entry*: the set, its family mask and its band postings are
//! stored once, and a query verifies the entry once and then lists its members. Layout of
//! format 2 (little-endian, every section 8-byte aligned):
//!
//! ```text
//! header    magic "NDIXSEG1", format u32, sections u32, docs u64, families u32,
//!           bands u32, entries u64
//! directory per section: offset u64, length u64
//! sections  per entry: set starts (u32 × entries+1), sets (u64), truncated entries
//!           (u32, sorted) and their whole-document sketches (u64 × WHOLE_NUM_PERM each),
//!           family masks (u8), first members (u32 × entries+1); per document: id starts
//!           (u32 × docs+1), id bytes (UTF-8), id hashes (u32, sorted) and their
//!           documents (u32); then per family and band: keys (u64, sorted) and their
//!           entries (u32)
//! footer    xxh3-64 of everything before it
//! ```
//!
//! Documents are numbered entry by entry, and within an entry in id order: an entry's
//! members are a range of numbers with their ids side by side, and answers tied in
//! similarity (copies) are put in id order by comparing numbers.
//!
//! Format 1 (the first release) had no entries: every document was its own. It is still
//! read; a merge rewrites it as format 2.
//!
//! A band's postings are sorted by key, so a bucket is one search: no hash table to load
//! when the segment opens. Offsets are 32-bit: a segment holds at most 2^32 - 1 shingles
//! and id bytes (an `add` splits larger batches, merges stop short of it).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::error::{io_at, Error, Result};
use crate::files::{segment_name, write_durably};
use crate::manifest::FORMAT_VERSION;
use crate::parallel;
use neardup::corpus::WHOLE_NUM_PERM;

const MAGIC: [u8; 8] = *b"NDIXSEG1";

/// Where each section is in one format.
struct Layout {
    header: usize,
    set_starts: usize,
    sets: usize,
    truncated: usize,
    wholes: usize,
    masks: usize,
    /// Each entry's first document (format 2 only).
    members: Option<usize>,
    id_starts: usize,
    id_bytes: usize,
    id_hashes: usize,
    id_docs: usize,
    /// The first posting section.
    fixed: usize,
}

const V1: Layout = Layout {
    header: 32,
    set_starts: 0,
    sets: 1,
    truncated: 2,
    wholes: 3,
    id_starts: 4,
    id_bytes: 5,
    masks: 6,
    id_hashes: 7,
    id_docs: 8,
    members: None,
    fixed: 9,
};

const V2: Layout = Layout {
    header: 40,
    set_starts: 0,
    sets: 1,
    truncated: 2,
    wholes: 3,
    masks: 4,
    members: Some(5),
    id_starts: 6,
    id_bytes: 7,
    id_hashes: 8,
    id_docs: 9,
    fixed: 10,
};

impl Layout {
    fn of(format: u32) -> Option<&'static Layout> {
        match format {
            1 => Some(&V1),
            // Format 3 changed the manifest's parameters only.
            2 | 3 => Some(&V2),
            _ => None,
        }
    }

    fn sections(&self, families: usize, bands: usize) -> usize {
        self.fixed + 2 * families * bands
    }
}

/// The hash an id is looked up by (32 bits: equal hashes are told apart by the id).
pub(crate) fn id_hash(id: &[u8]) -> u32 {
    xxh3_64(id) as u32
}

/// Shingles or id bytes one segment holds at most (its offsets are 32-bit).
pub(crate) const MAX_ARENA: usize = u32::MAX as usize;

/// The first position whose key is not below `key`. Band keys are hashes, spread evenly
/// over the 64-bit range, so interpolation finds the spot in a few probes where a binary
/// search takes twenty (each a cache miss on a large segment); a few rounds of it narrow
/// the range, and a binary search finishes (or takes over on skewed keys).
pub(crate) fn lower_bound(keys: &[u64], key: u64) -> usize {
    let (mut lo, mut hi) = (0usize, keys.len());
    for _ in 0..4 {
        if hi - lo <= 32 {
            break;
        }
        let (a, b) = (keys[lo], keys[hi - 1]);
        if key <= a {
            hi = lo;
            break;
        }
        if key > b {
            lo = hi;
            break;
        }
        // key in (a, b]: the guess lies in (lo, hi - 1].
        let span = u128::from(b - a);
        let guess = lo + ((u128::from(key - a) * (hi - 1 - lo) as u128) / span.max(1)) as usize;
        let guess = guess.clamp(lo + 1, hi - 1);
        // Probe a small window around the guess to bracket the key.
        let window = 8;
        let left = guess.saturating_sub(window).max(lo + 1);
        let right = (guess + window).min(hi - 1);
        if keys[left] >= key {
            hi = left + 1;
            lo += 1;
        } else if keys[right] < key {
            lo = right + 1;
        } else {
            lo = left + 1;
            hi = right + 1;
        }
    }
    lo + keys[lo..hi].partition_point(|&k| k < key)
}

/// A segment being built in memory, then written once.
pub(crate) struct SegmentData {
    families: usize,
    bands: usize,
    // Per entry.
    set_starts: Vec<u32>,
    sets: Vec<u64>,
    truncated: Vec<u32>,
    wholes: Vec<u64>,
    masks: Vec<u8>,
    /// Per family and band, `(key, entry)`; sorted when written.
    postings: Vec<Vec<(u64, u32)>>,
    /// Entries by a hash of their content, to find a document's twin.
    by_content: HashMap<u64, Vec<u32>, foldhash::fast::FixedState>,
    // Per document, in the order added (sorted by id when written).
    id_starts: Vec<u32>,
    id_bytes: Vec<u8>,
    doc_entry: Vec<u32>,
}

/// What a document's entry is made of: its set, the whole-document sketch if it was
/// truncated, its family mask.
fn content_hash(set: &[u64], whole: Option<&[u64]>, mask: u8) -> u64 {
    let mut h = Xxh3::new();
    h.update(bytemuck::cast_slice(set));
    if let Some(whole) = whole {
        h.update(bytemuck::cast_slice(whole));
    }
    h.update(&[mask, u8::from(whole.is_some())]);
    h.digest()
}

impl SegmentData {
    pub(crate) fn new(families: usize, bands: usize) -> Self {
        SegmentData {
            families,
            bands,
            set_starts: vec![0],
            sets: Vec::new(),
            truncated: Vec::new(),
            wholes: Vec::new(),
            masks: Vec::new(),
            postings: vec![Vec::new(); families * bands],
            by_content: HashMap::default(),
            id_starts: vec![0],
            id_bytes: Vec::new(),
            doc_entry: Vec::new(),
        }
    }

    /// Documents added.
    pub(crate) fn len(&self) -> usize {
        self.doc_entry.len()
    }

    /// True if a document of `shingles` shingles and an id of `id_bytes` bytes still fits
    /// (the 32-bit offsets, the 32-bit numbering).
    pub(crate) fn fits(&self, shingles: usize, id_bytes: usize) -> bool {
        self.sets.len() + shingles <= MAX_ARENA
            && self.id_bytes.len() + id_bytes <= MAX_ARENA
            && self.len() < u32::MAX as usize
    }

    fn entry_set(&self, e: u32) -> &[u64] {
        &self.sets[self.set_starts[e as usize] as usize..self.set_starts[e as usize + 1] as usize]
    }

    fn entry_whole(&self, e: u32) -> Option<&[u64]> {
        let i = self.truncated.binary_search(&e).ok()?;
        Some(&self.wholes[i * WHOLE_NUM_PERM..(i + 1) * WHOLE_NUM_PERM])
    }

    /// Adds a document: to the entry of the same set if there is one, else to a new entry.
    /// Returns the entry and whether it is new; a new entry's band keys follow with
    /// [`SegmentData::push_key`] (an old one has them).
    pub(crate) fn push_doc(
        &mut self,
        id: &str,
        set: &[u64],
        whole: Option<&[u64]>,
        mask: u8,
    ) -> (u32, bool) {
        let hash = content_hash(set, whole, mask);
        let twin = self.by_content.get(&hash).and_then(|entries| {
            entries.iter().copied().find(|&e| {
                self.masks[e as usize] == mask
                    && self.entry_set(e) == set
                    && self.entry_whole(e) == whole
            })
        });
        let (entry, new) = match twin {
            Some(e) => (e, false),
            None => {
                let e = self.masks.len() as u32;
                self.sets.extend_from_slice(set);
                self.set_starts.push(self.sets.len() as u32);
                if let Some(whole) = whole {
                    self.truncated.push(e);
                    self.wholes.extend_from_slice(whole);
                }
                self.masks.push(mask);
                self.by_content.entry(hash).or_default().push(e);
                (e, true)
            }
        };
        self.push_member(id, entry);
        (entry, new)
    }

    /// Adds a document to an entry returned by [`SegmentData::push_doc`] (a copy known to
    /// have that entry's set).
    pub(crate) fn push_member(&mut self, id: &str, entry: u32) {
        self.id_bytes.extend_from_slice(id.as_bytes());
        self.id_starts.push(self.id_bytes.len() as u32);
        self.doc_entry.push(entry);
    }

    pub(crate) fn push_key(&mut self, family: usize, band: usize, key: u64, entry: u32) {
        self.postings[family * self.bands + band].push((key, entry));
    }

    /// Writes the segment durably as `name` in `dir`; returns its size in bytes.
    pub(crate) fn write(mut self, dir: &Path, name: u64) -> Result<u64> {
        let n = self.len();
        let entries = self.masks.len();
        self.by_content = HashMap::default();
        parallel::sort_each(&mut self.postings);
        // Documents are numbered entry by entry, in id order within an entry.
        let id_of =
            |d: usize| &self.id_bytes[self.id_starts[d] as usize..self.id_starts[d + 1] as usize];
        let mut order: Vec<u32> = (0..n as u32).collect();
        parallel::sort_by(&mut order, |&a, &b| {
            let (a, b) = (a as usize, b as usize);
            (self.doc_entry[a], id_of(a)).cmp(&(self.doc_entry[b], id_of(b)))
        });
        let mut id_starts = Vec::with_capacity(n + 1);
        let mut id_bytes = Vec::with_capacity(self.id_bytes.len());
        id_starts.push(0u32);
        let mut member_starts = vec![0u32; entries + 1];
        for &d in &order {
            id_bytes.extend_from_slice(id_of(d as usize));
            id_starts.push(id_bytes.len() as u32);
            member_starts[self.doc_entry[d as usize] as usize + 1] += 1;
        }
        drop(order);
        for e in 0..entries {
            member_starts[e + 1] += member_starts[e];
        }
        let mut id_table: Vec<(u32, u32)> = (0..n)
            .map(|d| {
                let id = &id_bytes[id_starts[d] as usize..id_starts[d + 1] as usize];
                (id_hash(id), d as u32)
            })
            .collect();
        id_table.sort_unstable();
        let id_hashes: Vec<u32> = id_table.iter().map(|p| p.0).collect();
        let id_docs: Vec<u32> = id_table.iter().map(|p| p.1).collect();
        drop(id_table);
        let split: Vec<(Vec<u64>, Vec<u32>)> = self
            .postings
            .iter()
            .map(|p| p.iter().copied().unzip())
            .collect();
        let mut sections: Vec<&[u8]> = vec![
            bytemuck::cast_slice(&self.set_starts),
            bytemuck::cast_slice(&self.sets),
            bytemuck::cast_slice(&self.truncated),
            bytemuck::cast_slice(&self.wholes),
            &self.masks,
            bytemuck::cast_slice(&member_starts),
            bytemuck::cast_slice(&id_starts),
            &id_bytes,
            bytemuck::cast_slice(&id_hashes),
            bytemuck::cast_slice(&id_docs),
        ];
        for (keys, entries) in &split {
            sections.push(bytemuck::cast_slice(keys));
            sections.push(bytemuck::cast_slice(entries));
        }
        debug_assert_eq!(sections.len(), V2.sections(self.families, self.bands));
        let (families, bands) = (self.families as u32, self.bands as u32);
        write_durably(dir, &segment_name(name), |out| {
            let mut out = Hashing::new(out);
            out.write_all(&MAGIC)?;
            out.write_all(&FORMAT_VERSION.to_le_bytes())?;
            out.write_all(&(sections.len() as u32).to_le_bytes())?;
            out.write_all(&(n as u64).to_le_bytes())?;
            out.write_all(&families.to_le_bytes())?;
            out.write_all(&bands.to_le_bytes())?;
            out.write_all(&(entries as u64).to_le_bytes())?;
            let mut offset = align8(V2.header + 16 * sections.len());
            for s in &sections {
                out.write_all(&(offset as u64).to_le_bytes())?;
                out.write_all(&(s.len() as u64).to_le_bytes())?;
                offset = align8(offset + s.len());
            }
            out.pad_to_8()?;
            for s in &sections {
                out.write_all(s)?;
                out.pad_to_8()?;
            }
            let digest = out.digest();
            out.write_all(&digest.to_le_bytes())
        })
    }
}

fn align8(x: usize) -> usize {
    x.div_ceil(8) * 8
}

/// A writer that hashes and counts what passes through it.
struct Hashing<'a, W: Write> {
    out: &'a mut W,
    hasher: Xxh3,
    written: usize,
}

impl<'a, W: Write> Hashing<'a, W> {
    fn new(out: &'a mut W) -> Self {
        Hashing {
            out,
            hasher: Xxh3::new(),
            written: 0,
        }
    }

    fn pad_to_8(&mut self) -> io::Result<()> {
        let pad = align8(self.written) - self.written;
        self.write_all(&[0u8; 8][..pad])
    }

    fn digest(&self) -> u64 {
        self.hasher.digest()
    }
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// An open segment, read in place.
pub(crate) struct Segment {
    name: u64,
    path: PathBuf,
    map: Mmap,
    layout: &'static Layout,
    docs: u32,
    entries: u32,
    families: usize,
    bands: usize,
    sections: Vec<Range<usize>>,
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment")
            .field("path", &self.path)
            .field("docs", &self.docs)
            .field("entries", &self.entries)
            .finish()
    }
}

impl Segment {
    /// Maps segment `name` and checks that its layout adds up (not its checksum: that
    /// reads every byte, and is [`Segment::verify`]'s job).
    pub(crate) fn open(
        dir: &Path,
        name: u64,
        docs: u32,
        families: usize,
        bands: usize,
    ) -> Result<Segment> {
        let path = dir.join(segment_name(name));
        let file = File::open(&path).map_err(io_at(&path))?;
        // SAFETY: a segment is never written after it is renamed into place (commits
        // write new files), so the mapped bytes do not change under the reader.
        let map = unsafe { Mmap::map(&file) }.map_err(io_at(&path))?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Random);
        let corrupt = |reason: String| Error::Corrupt {
            path: path.clone(),
            reason,
        };
        let read_u32 = |at: usize| u32::from_le_bytes(map[at..at + 4].try_into().unwrap());
        let read_u64 = |at: usize| u64::from_le_bytes(map[at..at + 8].try_into().unwrap());
        if map.len() < V1.header + 8 || map[..8] != MAGIC {
            return Err(corrupt("not a segment (bad magic or too short)".into()));
        }
        let format = read_u32(8);
        let Some(layout) = Layout::of(format).filter(|l| map.len() >= l.header + 8) else {
            return Err(corrupt(format!("segment format {format}")));
        };
        let count = read_u32(12) as usize;
        let n = docs as usize;
        let entries = match layout.members {
            Some(_) => read_u64(32),
            None => u64::from(docs),
        };
        if count != layout.sections(families, bands)
            || read_u64(16) != u64::from(docs)
            || read_u32(24) as usize != families
            || read_u32(28) as usize != bands
            || entries > u64::from(docs)
            || (entries == 0) != (docs == 0)
        {
            return Err(corrupt(format!(
                "header says {} documents in {entries} entries, {} families × {} bands; the manifest says {docs}, {families} × {bands}",
                read_u64(16),
                read_u32(24),
                read_u32(28)
            )));
        }
        let m = entries as usize;
        let body_end = map.len() - 8;
        if layout.header + 16 * count > body_end {
            return Err(corrupt("truncated directory".into()));
        }
        let mut sections = Vec::with_capacity(count);
        for i in 0..count {
            let at = layout.header + 16 * i;
            let (offset, len) = (read_u64(at) as usize, read_u64(at + 8) as usize);
            let end = offset.saturating_add(len);
            if offset % 8 != 0 || offset < layout.header + 16 * count || end > body_end {
                return Err(corrupt(format!("section {i} lies outside the file")));
            }
            sections.push(offset..end);
        }
        let expect = |s: usize, bytes: usize| sections[s].len() == bytes;
        let truncated = sections[layout.truncated].len() / 4;
        let mut ok = expect(layout.set_starts, 4 * (m + 1))
            && expect(layout.id_starts, 4 * (n + 1))
            && expect(layout.masks, m)
            && expect(layout.id_hashes, 4 * n)
            && expect(layout.id_docs, 4 * n)
            && sections[layout.sets].len() % 8 == 0
            && sections[layout.truncated].len() % 4 == 0
            && expect(layout.wholes, 8 * WHOLE_NUM_PERM * truncated);
        if let Some(starts) = layout.members {
            ok &= expect(starts, 4 * (m + 1));
        }
        for p in 0..families * bands {
            let (keys, entries) = (
                &sections[layout.fixed + 2 * p],
                &sections[layout.fixed + 2 * p + 1],
            );
            ok &= keys.len() % 8 == 0 && entries.len() * 2 == keys.len();
        }
        if !ok {
            return Err(corrupt(
                "section sizes do not match the document count".into(),
            ));
        }
        Ok(Segment {
            name,
            path,
            map,
            layout,
            docs,
            entries: entries as u32,
            families,
            bands,
            sections,
        })
    }

    pub(crate) fn name(&self) -> u64 {
        self.name
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn docs(&self) -> u32 {
        self.docs
    }

    /// Distinct stored sets (entries); as many as documents in format 1.
    pub(crate) fn entries(&self) -> u32 {
        self.entries
    }

    /// Size of the file in bytes.
    pub(crate) fn bytes(&self) -> u64 {
        self.map.len() as u64
    }

    /// Shingles and id bytes held (what the 32-bit offsets bound).
    pub(crate) fn arena_sizes(&self) -> (usize, usize) {
        (
            self.u64s(self.layout.sets).len(),
            self.bytes_of(self.layout.id_bytes).len(),
        )
    }

    /// Bytes of the stored shingle sets (sets and whole-document sketches).
    pub(crate) fn set_bytes(&self) -> u64 {
        (self.sections[self.layout.sets].len() + self.sections[self.layout.wholes].len()) as u64
    }

    fn bytes_of(&self, s: usize) -> &[u8] {
        &self.map[self.sections[s].clone()]
    }

    fn u64s(&self, s: usize) -> &[u64] {
        bytemuck::cast_slice(self.bytes_of(s))
    }

    fn u32s(&self, s: usize) -> &[u32] {
        bytemuck::cast_slice(self.bytes_of(s))
    }

    /// The slice `starts[i]..starts[i + 1]` of an arena; empty if the starts are corrupt
    /// (which `verify` reports).
    fn span<'a, T>(&self, starts: usize, arena: &'a [T], i: u32) -> &'a [T] {
        let starts = self.u32s(starts);
        let i = i as usize;
        match (starts.get(i), starts.get(i + 1)) {
            (Some(&a), Some(&b)) => arena.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The entry a document is a member of.
    pub(crate) fn entry_of(&self, doc: u32) -> u32 {
        match self.layout.members {
            Some(starts) => {
                let starts = self.u32s(starts);
                (starts.partition_point(|&s| s <= doc) as u32).saturating_sub(1)
            }
            None => doc,
        }
    }

    /// The documents of an entry: a range of numbers, in id order (empty if the entry is
    /// out of range or the starts are corrupt, which `verify` reports).
    pub(crate) fn members(&self, entry: u32) -> Range<u32> {
        let range = match self.layout.members {
            Some(starts) => {
                let starts = self.u32s(starts);
                let e = entry as usize;
                match (starts.get(e), starts.get(e + 1)) {
                    (Some(&a), Some(&b)) => a..b,
                    _ => 0..0,
                }
            }
            None => entry..entry.saturating_add(1),
        };
        range.start..range.end.min(self.docs)
    }

    /// An entry's shingle set.
    pub(crate) fn set(&self, entry: u32) -> &[u64] {
        self.span(self.layout.set_starts, self.u64s(self.layout.sets), entry)
    }

    /// An entry's whole-document sketch, if its documents were truncated.
    pub(crate) fn whole(&self, entry: u32) -> Option<&[u64]> {
        let i = self
            .u32s(self.layout.truncated)
            .binary_search(&entry)
            .ok()?;
        self.u64s(self.layout.wholes)
            .get(i * WHOLE_NUM_PERM..(i + 1) * WHOLE_NUM_PERM)
    }

    /// An entry's family mask.
    pub(crate) fn mask(&self, entry: u32) -> u8 {
        self.bytes_of(self.layout.masks)
            .get(entry as usize)
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn id_raw(&self, doc: u32) -> &[u8] {
        self.span(
            self.layout.id_starts,
            self.bytes_of(self.layout.id_bytes),
            doc,
        )
    }

    /// The document's id (U+FFFD if the bytes are not UTF-8, which `verify` reports).
    pub(crate) fn id(&self, doc: u32) -> &str {
        std::str::from_utf8(self.id_raw(doc)).unwrap_or("\u{FFFD}")
    }

    /// The document stored under `id`, deleted or not.
    pub(crate) fn find(&self, id: &str) -> Option<u32> {
        let hashes = self.u32s(self.layout.id_hashes);
        let docs = self.u32s(self.layout.id_docs);
        let h = id_hash(id.as_bytes());
        let start = hashes.partition_point(|&x| x < h);
        hashes[start..]
            .iter()
            .zip(&docs[start..])
            .take_while(|(&x, _)| x == h)
            .map(|(_, &d)| d)
            .find(|&d| self.id_raw(d) == id.as_bytes())
    }

    /// The sorted keys and entries of one band of one family.
    pub(crate) fn postings(&self, family: usize, band: usize) -> (&[u64], &[u32]) {
        let p = self.layout.fixed + 2 * (family * self.bands + band);
        (self.u64s(p), self.u32s(p + 1))
    }

    /// The entries in the bucket of `key`.
    pub(crate) fn bucket(&self, family: usize, band: usize, key: u64) -> &[u32] {
        let (keys, entries) = self.postings(family, band);
        let start = lower_bound(keys, key);
        // Most buckets hold one entry or none: gallop over the run of equal keys rather
        // than binary-search the rest of the band.
        let rest = &keys[start..];
        let mut step = 1;
        while step < rest.len() && rest[step] == key {
            step *= 2;
        }
        let upto = (step + 1).min(rest.len());
        let len = rest[..upto].partition_point(|&k| k == key);
        &entries[start..start + len]
    }

    /// Reads every byte: the checksum, then the invariants a query relies on. Each
    /// problem is one line naming the segment.
    pub(crate) fn verify(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut say = |what: String| problems.push(format!("{}: {what}", self.path.display()));
        let body = &self.map[..self.map.len() - 8];
        let stored = u64::from_le_bytes(self.map[self.map.len() - 8..].try_into().unwrap());
        if xxh3_64(body) != stored {
            say("checksum does not match: the file was changed or damaged".into());
            return problems;
        }
        let (n, m) = (self.docs as usize, self.entries as usize);
        let l = self.layout;
        let mut offsets = vec![
            (l.set_starts, m, self.u64s(l.sets).len()),
            (l.id_starts, n, self.bytes_of(l.id_bytes).len()),
        ];
        if let Some(starts) = l.members {
            offsets.push((starts, m, n));
        }
        for (starts, count, arena_len) in offsets {
            let s = self.u32s(starts);
            if s[0] != 0 || s[count] as usize != arena_len || s.windows(2).any(|w| w[0] > w[1]) {
                say(format!(
                    "section {starts}: offsets out of order or out of range"
                ));
            }
        }
        let mut family_counts = vec![0usize; self.families];
        for e in 0..self.entries {
            let set = self.set(e);
            if set.is_empty() || set.windows(2).any(|w| w[0] >= w[1]) {
                say(format!(
                    "entry {e}: shingle set empty or not strictly sorted"
                ));
            }
            let mask = self.mask(e);
            if mask == 0 || u32::from(mask) >> self.families != 0 {
                say(format!("entry {e}: family mask {mask:#b} is invalid"));
            }
            for (f, count) in family_counts.iter_mut().enumerate() {
                *count += usize::from(mask >> f & 1 == 1);
            }
            let members = self.members(e);
            if members.is_empty() {
                say(format!("entry {e}: no documents"));
            }
            if members
                .clone()
                .skip(1)
                .any(|d| self.id_raw(d - 1) >= self.id_raw(d))
            {
                say(format!("entry {e}: ids not in strictly ascending order"));
            }
        }
        for d in 0..self.docs {
            if std::str::from_utf8(self.id_raw(d)).is_err() {
                say(format!("document {d}: id is not UTF-8"));
            }
            if self.find(self.id(d)) != Some(d) {
                say(format!("document {d}: not found under its id"));
            }
        }
        let hashes = self.u32s(l.id_hashes);
        if hashes.windows(2).any(|w| w[0] > w[1]) {
            say("id table not sorted".into());
        }
        let truncated = self.u32s(l.truncated);
        if truncated.windows(2).any(|w| w[0] >= w[1])
            || truncated.last().is_some_and(|&e| e >= self.entries)
        {
            say("truncated entries out of order or out of range".into());
        }
        for (f, &count) in family_counts.iter().enumerate() {
            for b in 0..self.bands {
                let (keys, entries) = self.postings(f, b);
                let mut seen = vec![false; m];
                let mut bad = keys.len() != count || keys.windows(2).any(|w| w[0] > w[1]);
                for &e in entries {
                    let e = e as usize;
                    bad |= e >= m
                        || std::mem::replace(&mut seen[e], true)
                        || self.mask(e as u32) >> f & 1 == 0;
                    if bad {
                        break;
                    }
                }
                if bad {
                    say(format!(
                        "family {f} band {b}: postings do not match the entries"
                    ));
                }
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::lower_bound;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn lower_bound_agrees_with_partition_point(
            mut keys in proptest::collection::vec(any::<u64>(), 0..400),
            repeats in proptest::collection::vec((any::<prop::sample::Index>(), 1usize..50), 0..5),
            probe in any::<u64>(),
            pick in any::<prop::sample::Index>(),
        ) {
            // Runs of equal keys (groups of copies) and skewed values as well as spread ones.
            for (i, n) in repeats {
                if !keys.is_empty() {
                    let k = keys[i.index(keys.len())];
                    keys.extend(std::iter::repeat_n(k, n));
                }
            }
            keys.sort_unstable();
            let want = |k: u64| keys.partition_point(|&x| x < k);
            prop_assert_eq!(lower_bound(&keys, probe), want(probe));
            if !keys.is_empty() {
                let k = keys[pick.index(keys.len())];
                for q in [k, k.wrapping_sub(1), k.wrapping_add(1)] {
                    prop_assert_eq!(lower_bound(&keys, q), want(q));
                }
            }
        }
    }
}
