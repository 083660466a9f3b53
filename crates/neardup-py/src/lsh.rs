//! The table behind `MinHashLSH`. An entry is filed one of two ways:
//!
//! - **sketched**: a neardup `MinHash` with its set is sketched by the table itself, its
//!   band keys in every family its size puts it in, and two sets are compared in the last
//!   family both are in (the library's rule), so a table of `MinHash.from_text` sets finds
//!   what a corpus run finds in its buckets;
//! - **given**: any other sketch (a datasketch-style `MinHash`, one rebuilt from stored
//!   hashvalues, a weighted MinHash) is filed by its own hashvalues, `b` bands of `r` rows
//!   each hashed to one key, as datasketch files them, so sketches from anywhere meet.
//!
//! Answers are verified by exact Jaccard when both sets are known, else they are the
//! bands' candidates. Entries are numbered by slot; the Python class maps keys to slots.

use std::collections::hash_map::Entry as Bucket;
use std::sync::{Arc, RwLock};

use foldhash::{HashMap, HashMapExt};
use neardup::sketch::{DocSet, DocSketch, FamilySet};
use neardup::Pipeline;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::blocks::u64_vector;
use crate::config::NativeConfig;
use crate::errors::refused;
use crate::minhash::MinHash;
use crate::threads;

/// The most sets, and elements of sets, sketched between two checks for Ctrl-C: under a
/// millisecond with one-permutation hashing, under a second with classic MinHash's
/// thousands of permutations.
const CHUNK_SETS: usize = 1 << 12;
const CHUNK_ELEMENTS: usize = 1 << 18;

/// Candidates past this many are verified in parallel, and batches of entries past this
/// many filed in parallel.
const PARALLEL_VERIFY: usize = 64;

/// How an entry is filed in the buckets.
enum Bands {
    /// Sketched by the table, in the families `mask` names.
    Sketched { sketch: DocSketch, mask: FamilySet },
    /// One key per band of the hashvalues it came with.
    Given(Vec<u64>),
}

struct Entry {
    /// The set, when known: answers are verified on it.
    doc: Option<DocSet>,
    bands: Bands,
}

/// A slot's set and, for a truncated text, its whole-text sketch, as bytes.
type Exported<B> = (B, Option<B>);

/// A bucket's slots: most buckets of a large table hold one, kept inline (a vector per
/// key was an allocation per band of every insert).
enum Slots {
    One(u32),
    Many(Vec<u32>),
}

impl Slots {
    fn push(&mut self, slot: u32) {
        match self {
            Slots::One(first) => *self = Slots::Many(vec![*first, slot]),
            Slots::Many(all) => all.push(slot),
        }
    }

    fn as_slice(&self) -> &[u32] {
        match self {
            Slots::One(slot) => std::slice::from_ref(slot),
            Slots::Many(all) => all,
        }
    }

    /// Takes `slot` out; true if none is left.
    fn remove(&mut self, slot: u32) -> bool {
        match self {
            Slots::One(only) => *only == slot,
            Slots::Many(all) => {
                all.retain(|&s| s != slot);
                all.is_empty()
            }
        }
    }
}

#[derive(Default)]
struct Table {
    entries: Vec<Option<Entry>>,
    /// Per family and band (`family · bands + band`): key → slots; the family after the
    /// pipeline's last holds the given hashvalues' keys.
    buckets: Vec<HashMap<u64, Slots>>,
    live: usize,
}

impl Table {
    fn entry(&self, slot: u32) -> &Entry {
        self.entries[slot as usize]
            .as_ref()
            .expect("buckets hold live slots")
    }
}

/// The LSH table of `neardup.MinHashLSH`.
#[pyclass(frozen, name = "_LshTable", module = "neardup._neardup")]
pub struct LshTable {
    pipeline: Arc<Pipeline>,
    bands: usize,
    rows: usize,
    table: RwLock<Table>,
}

/// Each band's key of hashvalues of `width` values per position (2 for a weighted
/// MinHash): band `i` covers positions `i·r .. (i+1)·r`.
fn given_keys(values: &[u64], width: usize, bands: usize, rows: usize) -> Vec<u64> {
    let mut bytes = Vec::with_capacity(rows * width * 8);
    (0..bands)
        .map(|band| {
            bytes.clear();
            let span = &values[band * rows * width..(band + 1) * rows * width];
            bytes.extend(span.iter().flat_map(|v| v.to_le_bytes()));
            xxh3_64(&bytes)
        })
        .collect()
}

fn to_bytes(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> PyResult<Vec<u64>> {
    if !b.len().is_multiple_of(8) {
        return Err(refused("a pickled MinHashLSH holds a malformed set"));
    }
    Ok(b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

/// The set a MinHash carries, if it carries one (a sketch rebuilt from hashvalues has none).
fn set_of(minhash: &MinHash) -> Option<DocSet> {
    minhash.has_set().then(|| minhash.doc())
}

/// The hashvalues of `n` sketches as one row each: those given (`width` values per
/// position), else the MinHashes' own.
fn rows(
    values: Option<&Bound<'_, PyAny>>,
    minhashes: &[Option<PyRef<'_, MinHash>>],
) -> PyResult<Vec<u64>> {
    if let Some(values) = values {
        return u64_vector(values);
    }
    minhashes
        .iter()
        .map(|m| {
            m.as_ref()
                .map(|m| m.values())
                .ok_or_else(|| refused("a sketch without hashvalues"))
        })
        .collect::<PyResult<Vec<_>>>()
        .map(|v| v.concat())
}

impl LshTable {
    fn sketched(&self, doc: DocSet) -> Entry {
        let sketch = self.pipeline.sketch_doc_keys(&doc);
        let mask = sketch.family_set();
        Entry {
            doc: Some(doc),
            bands: Bands::Sketched { sketch, mask },
        }
    }

    fn given(&self, values: &[u64], width: usize, doc: Option<DocSet>) -> Entry {
        Entry {
            doc,
            bands: Bands::Given(given_keys(values, width, self.bands, self.rows)),
        }
    }

    /// The bucket number of the given hashvalues' `band`.
    fn given_bucket(&self, band: usize) -> usize {
        self.pipeline.families() * self.bands + band
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Table> {
        self.table.write().unwrap_or_else(|p| p.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Table> {
        self.table.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts prepared entries in the table; returns their slots.
    fn put(&self, entries: Vec<Entry>) -> Vec<u32> {
        let mut t = self.write();
        let first = t.entries.len() as u32;
        let n = entries.len() as u32;
        self.place(&mut t, entries.into_iter().map(Some).collect());
        (first..first + n).collect()
    }

    /// Each (bucket, key) an entry is filed under.
    fn filed(&self, e: &Entry) -> Vec<(usize, u64)> {
        match &e.bands {
            Bands::Sketched { sketch, .. } => sketch
                .families()
                .iter()
                .flat_map(|part| {
                    let f = part.family();
                    part.band_keys()
                        .iter()
                        .enumerate()
                        .map(move |(band, &key)| (f * self.bands + band, key))
                })
                .collect(),
            Bands::Given(keys) => keys
                .iter()
                .enumerate()
                .map(|(band, &key)| (self.given_bucket(band), key))
                .collect(),
        }
    }

    /// The key an entry is filed under in bucket `b`, if it is in that bucket.
    fn key_in(&self, e: &Entry, b: usize) -> Option<u64> {
        let (family, band) = (b / self.bands, b % self.bands);
        let keys = match &e.bands {
            Bands::Given(keys) if family == self.pipeline.families() => keys.as_slice(),
            Bands::Sketched { sketch, .. } => sketch.band_keys(family)?,
            Bands::Given(_) => return None,
        };
        keys.get(band).copied()
    }

    /// Appends slots (empty for removed ones) and files their sets in the buckets: each
    /// bucket takes its key of every entry, the buckets in parallel for a batch.
    fn place(&self, t: &mut Table, entries: Vec<Option<Entry>>) {
        if t.buckets.is_empty() {
            t.buckets = (0..(self.pipeline.families() + 1) * self.bands)
                .map(|_| HashMap::new())
                .collect();
        }
        let first = t.entries.len() as u32;
        let file = |(b, bucket): (usize, &mut HashMap<u64, Slots>)| {
            for (i, e) in entries.iter().enumerate() {
                let Some(key) = e.as_ref().and_then(|e| self.key_in(e, b)) else {
                    continue;
                };
                let slot = first + i as u32;
                match bucket.entry(key) {
                    Bucket::Occupied(mut slots) => slots.get_mut().push(slot),
                    Bucket::Vacant(free) => {
                        free.insert(Slots::One(slot));
                    }
                }
            }
        };
        if entries.len() > PARALLEL_VERIFY {
            t.buckets.par_iter_mut().enumerate().for_each(file);
        } else {
            t.buckets.iter_mut().enumerate().for_each(file);
        }
        t.live += entries.iter().flatten().count();
        t.entries.extend(entries);
    }

    /// The slots whose keys meet `probe`'s in one of its first `bands` bands, in the
    /// family both are compared in.
    fn candidates(&self, t: &Table, probe: &Entry, bands: usize) -> Vec<u32> {
        let mut found = Vec::new();
        let mut look = |bucket: usize, key: &u64, keep: &dyn Fn(&Entry) -> bool| {
            if let Some(slots) = t.buckets.get(bucket).and_then(|b| b.get(key)) {
                found.extend(slots.as_slice().iter().filter(|&&s| keep(t.entry(s))));
            }
        };
        match &probe.bands {
            Bands::Sketched { sketch, mask } => {
                for part in sketch.families() {
                    let f = part.family();
                    let here = |e: &Entry| match &e.bands {
                        Bands::Sketched { mask: m, .. } => mask.shared(*m) == Some(f),
                        Bands::Given(_) => false,
                    };
                    for (band, key) in part.band_keys().iter().enumerate().take(bands) {
                        look(f * self.bands + band, key, &here);
                    }
                }
            }
            Bands::Given(keys) => {
                for (band, key) in keys.iter().enumerate().take(bands) {
                    look(self.given_bucket(band), key, &|_| true);
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The slots similar to `probe` (verified when both sets are known) or colliding with
    /// it, with their similarity (`NaN` unverified): verified ones most similar first,
    /// then the unverified by slot.
    fn answer(&self, probe: &Entry, verify: bool, bands: usize) -> Vec<(u32, f64)> {
        let t = self.read();
        let found = self.candidates(&t, probe, bands);
        let judge = |&s: &u32| {
            let e = t.entry(s);
            let (Some(a), Some(b), true) = (&probe.doc, &e.doc, verify) else {
                return Some((s, f64::NAN));
            };
            let verdict = self.pipeline.verify_sets(
                (a.set(), a.whole_signature()),
                (b.set(), b.whole_signature()),
            );
            verdict
                .passed()
                .map(|sim| (s, sim.value().unwrap_or(f64::NAN)))
        };
        let mut answers: Vec<(u32, f64)> = if found.len() > PARALLEL_VERIFY {
            found.par_iter().filter_map(judge).collect()
        } else {
            found.iter().filter_map(judge).collect()
        };
        answers.sort_by(|x, y| {
            match (x.1.is_nan(), y.1.is_nan()) {
                (false, false) => y.1.total_cmp(&x.1),
                (a, b) => a.cmp(&b),
            }
            .then(x.0.cmp(&y.0))
        });
        answers
    }

    /// The rows of `n` sketches, `per` values each; every row must cover the bands.
    fn per_row(&self, flat: &[u64], n: usize, width: usize) -> PyResult<usize> {
        let per = flat.len().checked_div(n).unwrap_or(0);
        if n > 0 && (flat.len() != per * n || per < self.bands * self.rows * width.max(1)) {
            return Err(refused(format!(
                "hashvalues of {per} values do not cover {} bands of {} rows",
                self.bands, self.rows
            )));
        }
        Ok(per)
    }
}

#[pymethods]
impl LshTable {
    #[new]
    fn new(config: &NativeConfig) -> LshTable {
        let plan = config.config().plan();
        LshTable {
            pipeline: config.pipeline(),
            bands: plan.bands(),
            rows: plan.rows(),
            table: RwLock::new(Table::default()),
        }
    }

    /// Inserts one set, sketched by the table; returns its slot.
    fn insert(&self, py: Python<'_>, minhash: &MinHash) -> u32 {
        let doc = minhash.doc();
        py.detach(|| {
            let entry = self.sketched(doc);
            self.put(vec![entry])[0]
        })
    }

    /// Inserts many sets, sketched in parallel; returns their slots.
    fn insert_many(
        &self,
        py: Python<'_>,
        minhashes: Vec<PyRef<'_, MinHash>>,
    ) -> PyResult<Vec<u32>> {
        let docs: Vec<DocSet> = minhashes.iter().map(|m| m.doc()).collect();
        let elements: usize = docs.iter().map(|d| d.set().len()).sum();
        let watch = threads::worth_watching(docs.len(), elements);
        // Sketched a chunk at a time, so Ctrl-C stops it between two; put in the table all
        // at once, or not at all.
        threads::interruptible(py, None, watch, |stop| {
            let mut entries = Vec::with_capacity(docs.len());
            let mut docs = docs.into_iter().peekable();
            while docs.peek().is_some() {
                let (mut chunk, mut elements) = (Vec::new(), 0);
                while let Some(d) =
                    docs.next_if(|_| chunk.len() < CHUNK_SETS && elements < CHUNK_ELEMENTS)
                {
                    elements += d.set().len();
                    chunk.push(d);
                }
                stop.checkpoint();
                entries.par_extend(chunk.into_par_iter().map(|d| self.sketched(d)));
            }
            stop.checkpoint();
            self.put(entries)
        })
    }

    /// Inserts sketches by their hashvalues: `values` holds `len(minhashes)` rows of
    /// `width` values per position back to back (a contiguous uint64 array), or `None` for
    /// the MinHashes' own; a neardup `MinHash` that carries its set has it kept for
    /// verification.
    fn insert_given(
        &self,
        py: Python<'_>,
        values: Option<&Bound<'_, PyAny>>,
        width: usize,
        minhashes: Vec<Option<PyRef<'_, MinHash>>>,
    ) -> PyResult<Vec<u32>> {
        let flat = rows(values, &minhashes)?;
        let per = self.per_row(&flat, minhashes.len(), width)?;
        let docs: Vec<Option<DocSet>> = minhashes
            .iter()
            .map(|m| m.as_ref().and_then(|m| set_of(m)))
            .collect();
        threads::detached(py, || {
            let entries: Vec<Entry> = docs
                .into_par_iter()
                .enumerate()
                .map(|(i, d)| self.given(&flat[i * per..(i + 1) * per], width, d))
                .collect();
            self.put(entries)
        })
    }

    /// Removes a slot's set.
    fn remove(&self, py: Python<'_>, slot: u32) -> PyResult<()> {
        py.detach(|| {
            let mut t = self.write();
            let Some(entry) = t.entries.get_mut(slot as usize).and_then(Option::take) else {
                return Err(refused(format!("no set in slot {slot}")));
            };
            for (bucket, key) in self.filed(&entry) {
                let bucket = &mut t.buckets[bucket];
                if bucket.get_mut(&key).is_some_and(|slots| slots.remove(slot)) {
                    bucket.remove(&key);
                }
            }
            t.live -= 1;
            Ok(())
        })
    }

    /// The slots answering a query of a set the table sketches, and their similarities.
    #[pyo3(signature = (minhash, verify=true))]
    fn query(
        &self,
        py: Python<'_>,
        minhash: &MinHash,
        verify: bool,
    ) -> PyResult<(Vec<u32>, Vec<f64>)> {
        let doc = minhash.doc();
        threads::detached(py, || {
            let probe = self.sketched(doc);
            self.answer(&probe, verify, self.bands).into_iter().unzip()
        })
    }

    /// The slots answering a query by hashvalues (one sketch's, `width` values per
    /// position, or `None` for the MinHash's own), looking in the first `bands` bands (all
    /// by default).
    #[pyo3(signature = (values, width, minhash=None, verify=true, bands=None))]
    fn query_given(
        &self,
        py: Python<'_>,
        values: Option<&Bound<'_, PyAny>>,
        width: usize,
        minhash: Option<PyRef<'_, MinHash>>,
        verify: bool,
        bands: Option<usize>,
    ) -> PyResult<(Vec<u32>, Vec<f64>)> {
        let minhash = [minhash];
        let flat = rows(values, &minhash)?;
        self.per_row(&flat, 1, width)?;
        let doc = minhash[0].as_ref().and_then(|m| set_of(m));
        let bands = bands.unwrap_or(self.bands).min(self.bands);
        threads::detached(py, || {
            let probe = self.given(&flat, width, doc);
            self.answer(&probe, verify, bands).into_iter().unzip()
        })
    }

    /// Each band's key of a slot, as datasketch's `keys[key]` lists them (a sketched set's
    /// in the last family it is in).
    fn band_keys(&self, slot: u32) -> PyResult<Vec<u64>> {
        let t = self.read();
        let Some(Some(e)) = t.entries.get(slot as usize) else {
            return Err(refused(format!("no set in slot {slot}")));
        };
        Ok(match &e.bands {
            Bands::Sketched { sketch, .. } => sketch
                .families()
                .last()
                .map(|p| p.band_keys().to_vec())
                .unwrap_or_default(),
            Bands::Given(keys) => keys.clone(),
        })
    }

    /// Copies the other table's entries in `slots` here, filed by this table's plan;
    /// returns their new slots.
    fn copy_from(&self, py: Python<'_>, other: &LshTable, slots: Vec<u32>) -> PyResult<Vec<u32>> {
        if (other.bands, other.rows) != (self.bands, self.rows) {
            return Err(refused("cannot merge tables of different band plans"));
        }
        threads::detached(py, || {
            let entries: Vec<Entry> = {
                let t = other.read();
                slots
                    .iter()
                    .filter_map(|&s| t.entries.get(s as usize).and_then(Option::as_ref))
                    .map(|e| match &e.bands {
                        Bands::Sketched { .. } => {
                            self.sketched(e.doc.clone().expect("a sketched set is kept"))
                        }
                        Bands::Given(keys) => Entry {
                            doc: e.doc.clone(),
                            bands: Bands::Given(keys.clone()),
                        },
                    })
                    .collect()
            };
            self.put(entries)
        })
    }

    /// Each slot's set and whole-text sketch as bytes (`None` for a removed slot), to
    /// pickle the table; an entry filed by given hashvalues is `(set or None, None, keys)`.
    fn export<'py>(&self, py: Python<'py>) -> PyResult<Vec<Option<Bound<'py, PyTuple>>>> {
        let t = self.read();
        let bytes = |v: &[u64]| PyBytes::new(py, &to_bytes(v)).into_any();
        let none = || py.None().into_bound(py);
        t.entries
            .iter()
            .map(|e| {
                e.as_ref()
                    .map(|e| {
                        let set = e.doc.as_ref().map_or_else(none, |d| bytes(d.set()));
                        let whole = e
                            .doc
                            .as_ref()
                            .and_then(|d| d.whole_signature())
                            .map_or_else(none, bytes);
                        match &e.bands {
                            Bands::Sketched { .. } => PyTuple::new(py, [set, whole]),
                            Bands::Given(keys) => PyTuple::new(py, [set, whole, bytes(keys)]),
                        }
                    })
                    .transpose()
            })
            .collect()
    }

    /// Restores what `export` gave (or a version that kept only sketched sets), into an
    /// empty table, slot for slot.
    fn restore(&self, py: Python<'_>, slots: Vec<Option<Bound<'_, PyTuple>>>) -> PyResult<()> {
        type Slot = Option<(Option<Exported<Vec<u64>>>, Option<Vec<u64>>)>;
        let parsed: Vec<Slot> = slots
            .iter()
            .map(|s| {
                let Some(s) = s else { return Ok(None) };
                let part = |i: usize| -> PyResult<Option<Vec<u64>>> {
                    let item = s.get_item(i)?;
                    if item.is_none() {
                        return Ok(None);
                    }
                    from_bytes(&item.extract::<Vec<u8>>()?).map(Some)
                };
                let set = part(0)?
                    .map(|set| Ok::<_, PyErr>((set, part(1)?)))
                    .transpose()?;
                let keys = if s.len() > 2 { part(2)? } else { None };
                if set.is_none() && keys.is_none() {
                    return Err(refused("a pickled MinHashLSH holds a malformed slot"));
                }
                Ok(Some((set, keys)))
            })
            .collect::<PyResult<_>>()?;
        if !self.read().entries.is_empty() {
            return Err(refused("restore needs an empty table"));
        }
        threads::detached(py, || {
            let entries: Vec<Option<Entry>> = parsed
                .into_par_iter()
                .map(|slot| {
                    slot.map(|(set, keys)| {
                        let doc = set.map(|(set, whole)| DocSet::from_parts(set, whole));
                        match keys {
                            Some(keys) => Entry {
                                doc,
                                bands: Bands::Given(keys),
                            },
                            None => self.sketched(doc.expect("checked above")),
                        }
                    })
                })
                .collect();
            let mut t = self.write();
            self.place(&mut t, entries);
        })?;
        Ok(())
    }

    /// Sets in the table.
    fn __len__(&self) -> usize {
        self.read().live
    }
}
