//! A segment: an immutable file of documents (ids, shingle sets) and their band postings,
//! memory-mapped and read in place.
//!
//! Layout (little-endian, every section 8-byte aligned):
//!
//! ```text
//! header    magic "NDIXSEG1", format u32, sections u32, docs u64, families u32, bands u32
//! directory per section: offset u64, length u64
//! sections  set starts (u32 × docs+1), sets (u64), truncated documents (u32, sorted),
//!           their whole-document sketches (u64 × WHOLE_NUM_PERM each), id starts
//!           (u32 × docs+1), id bytes (UTF-8), family masks (u8 × docs), id hashes
//!           (u32 × docs, sorted) and their documents (u32 × docs), then per family and
//!           band: keys (u64, sorted) and their documents (u32)
//! footer    xxh3-64 of everything before it
//! ```
//!
//! A band's postings are sorted by key, so a bucket is one binary search: no hash table
//! to load when the segment opens. Offsets are 32-bit: a segment holds at most 2^32 - 1
//! shingles and id bytes (an `add` splits larger batches, merges stop short of it).

use std::fs::File;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use rayon::prelude::*;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::error::{io_at, Error, Result};
use crate::files::{segment_name, write_durably};
use crate::manifest::FORMAT_VERSION;
use neardup::WHOLE_NUM_PERM;

const MAGIC: [u8; 8] = *b"NDIXSEG1";
const HEADER: usize = 32;
const SET_STARTS: usize = 0;
const SETS: usize = 1;
const TRUNCATED: usize = 2;
const WHOLES: usize = 3;
const ID_STARTS: usize = 4;
const ID_BYTES: usize = 5;
const MASKS: usize = 6;
const ID_HASHES: usize = 7;
const ID_DOCS: usize = 8;
const FIXED: usize = 9;

/// The hash an id is looked up by (32 bits: equal hashes are told apart by the id).
pub(crate) fn id_hash(id: &[u8]) -> u32 {
    xxh3_64(id) as u32
}

/// Shingles or id bytes one segment holds at most (its offsets are 32-bit).
pub(crate) const MAX_ARENA: usize = u32::MAX as usize;

fn section_count(families: usize, bands: usize) -> usize {
    FIXED + 2 * families * bands
}

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
    set_starts: Vec<u32>,
    sets: Vec<u64>,
    truncated: Vec<u32>,
    wholes: Vec<u64>,
    id_starts: Vec<u32>,
    id_bytes: Vec<u8>,
    masks: Vec<u8>,
    /// Per family and band, `(key, doc)`; sorted when written.
    postings: Vec<Vec<(u64, u32)>>,
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
            id_starts: vec![0],
            id_bytes: Vec::new(),
            masks: Vec::new(),
            postings: vec![Vec::new(); families * bands],
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.masks.len()
    }

    /// True if a document of `shingles` shingles and an id of `id_bytes` bytes still fits
    /// (the 32-bit offsets, the 32-bit numbering).
    pub(crate) fn fits(&self, shingles: usize, id_bytes: usize) -> bool {
        self.sets.len() + shingles <= MAX_ARENA
            && self.id_bytes.len() + id_bytes <= MAX_ARENA
            && self.len() < u32::MAX as usize
    }

    /// Adds a document; its band keys follow with [`SegmentData::push_key`].
    pub(crate) fn push_doc(
        &mut self,
        id: &str,
        set: &[u64],
        whole: Option<&[u64]>,
        mask: u8,
    ) -> u32 {
        let doc = self.masks.len() as u32;
        self.sets.extend_from_slice(set);
        self.set_starts.push(self.sets.len() as u32);
        if let Some(whole) = whole {
            self.truncated.push(doc);
            self.wholes.extend_from_slice(whole);
        }
        self.id_bytes.extend_from_slice(id.as_bytes());
        self.id_starts.push(self.id_bytes.len() as u32);
        self.masks.push(mask);
        doc
    }

    pub(crate) fn push_key(&mut self, family: usize, band: usize, key: u64, doc: u32) {
        self.postings[family * self.bands + band].push((key, doc));
    }

    /// Writes the segment durably as `name` in `dir`; returns its size in bytes.
    pub(crate) fn write(mut self, dir: &Path, name: u64) -> Result<u64> {
        let n = self.len();
        self.postings.par_iter_mut().for_each(|p| p.sort_unstable());
        let mut id_table: Vec<(u32, u32)> = (0..n)
            .map(|d| {
                let id = &self.id_bytes[self.id_starts[d] as usize..self.id_starts[d + 1] as usize];
                (id_hash(id), d as u32)
            })
            .collect();
        id_table.sort_unstable();
        let id_hashes: Vec<u32> = id_table.iter().map(|p| p.0).collect();
        let id_docs: Vec<u32> = id_table.iter().map(|p| p.1).collect();
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
            bytemuck::cast_slice(&self.id_starts),
            &self.id_bytes,
            &self.masks,
            bytemuck::cast_slice(&id_hashes),
            bytemuck::cast_slice(&id_docs),
        ];
        for (keys, docs) in &split {
            sections.push(bytemuck::cast_slice(keys));
            sections.push(bytemuck::cast_slice(docs));
        }
        debug_assert_eq!(sections.len(), section_count(self.families, self.bands));
        let (families, bands) = (self.families as u32, self.bands as u32);
        write_durably(dir, &segment_name(name), |out| {
            let mut out = Hashing::new(out);
            out.write_all(&MAGIC)?;
            out.write_all(&FORMAT_VERSION.to_le_bytes())?;
            out.write_all(&(sections.len() as u32).to_le_bytes())?;
            out.write_all(&(n as u64).to_le_bytes())?;
            out.write_all(&families.to_le_bytes())?;
            out.write_all(&bands.to_le_bytes())?;
            let mut offset = align8(HEADER + 16 * sections.len());
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
    docs: u32,
    families: usize,
    bands: usize,
    sections: Vec<Range<usize>>,
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment")
            .field("path", &self.path)
            .field("docs", &self.docs)
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
        if map.len() < HEADER + 8 || map[..8] != MAGIC {
            return Err(corrupt("not a segment (bad magic or too short)".into()));
        }
        if read_u32(8) != FORMAT_VERSION {
            return Err(corrupt(format!("segment format {}", read_u32(8))));
        }
        let count = read_u32(12) as usize;
        if count != section_count(families, bands)
            || read_u64(16) != u64::from(docs)
            || read_u32(24) as usize != families
            || read_u32(28) as usize != bands
        {
            return Err(corrupt(format!(
                "header says {} documents, {} families × {} bands; the manifest says {docs}, {families} × {bands}",
                read_u64(16),
                read_u32(24),
                read_u32(28)
            )));
        }
        let body_end = map.len() - 8;
        if HEADER + 16 * count > body_end {
            return Err(corrupt("truncated directory".into()));
        }
        let mut sections = Vec::with_capacity(count);
        for i in 0..count {
            let at = HEADER + 16 * i;
            let (offset, len) = (read_u64(at) as usize, read_u64(at + 8) as usize);
            let end = offset.saturating_add(len);
            if offset % 8 != 0 || offset < HEADER + 16 * count || end > body_end {
                return Err(corrupt(format!("section {i} lies outside the file")));
            }
            sections.push(offset..end);
        }
        let n = docs as usize;
        let expect = |s: usize, bytes: usize| sections[s].len() == bytes;
        let truncated = sections[TRUNCATED].len() / 4;
        let mut ok = expect(SET_STARTS, 4 * (n + 1))
            && expect(ID_STARTS, 4 * (n + 1))
            && expect(MASKS, n)
            && expect(ID_HASHES, 4 * n)
            && expect(ID_DOCS, 4 * n)
            && sections[SETS].len() % 8 == 0
            && sections[TRUNCATED].len() % 4 == 0
            && expect(WHOLES, 8 * WHOLE_NUM_PERM * truncated);
        for p in 0..families * bands {
            let (keys, docs) = (&sections[FIXED + 2 * p], &sections[FIXED + 2 * p + 1]);
            ok &= keys.len() % 8 == 0 && docs.len() * 2 == keys.len();
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
            docs,
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

    /// Size of the file in bytes.
    pub(crate) fn bytes(&self) -> u64 {
        self.map.len() as u64
    }

    /// Shingles and id bytes held (what the 32-bit offsets bound).
    pub(crate) fn arena_sizes(&self) -> (usize, usize) {
        (self.u64s(SETS).len(), self.bytes_of(ID_BYTES).len())
    }

    /// Bytes of the stored shingle sets (sets and whole-document sketches).
    pub(crate) fn set_bytes(&self) -> u64 {
        (self.sections[SETS].len() + self.sections[WHOLES].len()) as u64
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

    /// The slice `starts[doc]..starts[doc + 1]` of an arena; empty if the starts are
    /// corrupt (which `verify` reports).
    fn span<'a, T>(&self, starts: usize, arena: &'a [T], doc: u32) -> &'a [T] {
        let starts = self.u32s(starts);
        let d = doc as usize;
        match (starts.get(d), starts.get(d + 1)) {
            (Some(&a), Some(&b)) => arena.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    pub(crate) fn set(&self, doc: u32) -> &[u64] {
        self.span(SET_STARTS, self.u64s(SETS), doc)
    }

    pub(crate) fn whole(&self, doc: u32) -> Option<&[u64]> {
        let i = self.u32s(TRUNCATED).binary_search(&doc).ok()?;
        self.u64s(WHOLES)
            .get(i * WHOLE_NUM_PERM..(i + 1) * WHOLE_NUM_PERM)
    }

    pub(crate) fn id_raw(&self, doc: u32) -> &[u8] {
        self.span(ID_STARTS, self.bytes_of(ID_BYTES), doc)
    }

    /// The document's id (U+FFFD if the bytes are not UTF-8, which `verify` reports).
    pub(crate) fn id(&self, doc: u32) -> &str {
        std::str::from_utf8(self.id_raw(doc)).unwrap_or("\u{FFFD}")
    }

    pub(crate) fn mask(&self, doc: u32) -> u8 {
        self.bytes_of(MASKS).get(doc as usize).copied().unwrap_or(0)
    }

    /// The document stored under `id`, deleted or not.
    pub(crate) fn find(&self, id: &str) -> Option<u32> {
        let hashes = self.u32s(ID_HASHES);
        let docs = self.u32s(ID_DOCS);
        let h = id_hash(id.as_bytes());
        let start = hashes.partition_point(|&x| x < h);
        hashes[start..]
            .iter()
            .zip(&docs[start..])
            .take_while(|(&x, _)| x == h)
            .map(|(_, &d)| d)
            .find(|&d| self.id_raw(d) == id.as_bytes())
    }

    /// The sorted keys and documents of one band of one family.
    pub(crate) fn postings(&self, family: usize, band: usize) -> (&[u64], &[u32]) {
        let p = FIXED + 2 * (family * self.bands + band);
        (self.u64s(p), self.u32s(p + 1))
    }

    /// The documents in the bucket of `key`.
    pub(crate) fn bucket(&self, family: usize, band: usize, key: u64) -> &[u32] {
        let (keys, docs) = self.postings(family, band);
        let start = lower_bound(keys, key);
        // Most buckets hold one document or none: gallop over the run of equal keys
        // rather than binary-search the rest of the band.
        let rest = &keys[start..];
        let mut step = 1;
        while step < rest.len() && rest[step] == key {
            step *= 2;
        }
        let upto = (step + 1).min(rest.len());
        let len = rest[..upto].partition_point(|&k| k == key);
        &docs[start..start + len]
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
        let n = self.docs as usize;
        for (starts, arena_len) in [
            (SET_STARTS, self.u64s(SETS).len()),
            (ID_STARTS, self.bytes_of(ID_BYTES).len()),
        ] {
            let s = self.u32s(starts);
            if s[0] != 0 || s[n] as usize != arena_len || s.windows(2).any(|w| w[0] > w[1]) {
                say(format!(
                    "section {starts}: offsets out of order or out of range"
                ));
            }
        }
        let mut family_counts = vec![0usize; self.families];
        for d in 0..self.docs {
            let set = self.set(d);
            if set.is_empty() || set.windows(2).any(|w| w[0] >= w[1]) {
                say(format!(
                    "document {d}: shingle set empty or not strictly sorted"
                ));
            }
            if std::str::from_utf8(self.id_raw(d)).is_err() {
                say(format!("document {d}: id is not UTF-8"));
            }
            let mask = self.mask(d);
            if mask == 0 || u32::from(mask) >> self.families != 0 {
                say(format!("document {d}: family mask {mask:#b} is invalid"));
            }
            for (f, count) in family_counts.iter_mut().enumerate() {
                *count += usize::from(mask >> f & 1 == 1);
            }
            if self.find(self.id(d)) != Some(d) {
                say(format!("document {d}: not found under its id"));
            }
        }
        let hashes = self.u32s(ID_HASHES);
        if hashes.windows(2).any(|w| w[0] > w[1]) {
            say("id table not sorted".into());
        }
        let truncated = self.u32s(TRUNCATED);
        if truncated.windows(2).any(|w| w[0] >= w[1])
            || truncated.last().is_some_and(|&d| d >= self.docs)
        {
            say("truncated documents out of order or out of range".into());
        }
        for (f, &count) in family_counts.iter().enumerate() {
            for b in 0..self.bands {
                let (keys, docs) = self.postings(f, b);
                let mut seen = vec![false; n];
                let mut bad = keys.len() != count || keys.windows(2).any(|w| w[0] > w[1]);
                for &d in docs {
                    let d = d as usize;
                    bad |= d >= n
                        || std::mem::replace(&mut seen[d], true)
                        || self.mask(d as u32) >> f & 1 == 0;
                    if bad {
                        break;
                    }
                }
                if bad {
                    say(format!(
                        "family {f} band {b}: postings do not match the documents"
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
