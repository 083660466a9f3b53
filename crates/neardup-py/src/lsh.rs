//! The table behind `MinHashLSH`: each inserted set's band keys in every family its size
//! puts it in, buckets by (family, band, key), and the sets themselves, so answers are
//! verified by exact Jaccard. Candidates follow the library's rule: two sets are compared
//! in the last family both are in, so a table of `MinHash.from_text` sets finds what a
//! corpus run finds in its buckets.
//!
//! Entries are numbered by slot; the Python class maps its keys to slots.

use std::sync::{Arc, RwLock};

use foldhash::{HashMap, HashMapExt};
use neardup::sketch::{DocSet, DocSketch};
use neardup::Pipeline;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use crate::config::NativeConfig;
use crate::errors::refused;
use crate::minhash::MinHash;
use crate::threads;

/// The most sets, and elements of sets, sketched between two checks for Ctrl-C: under a
/// millisecond with one-permutation hashing, under a second with classic MinHash's
/// thousands of permutations.
const CHUNK_SETS: usize = 1 << 12;
const CHUNK_ELEMENTS: usize = 1 << 18;

/// Candidates past this many are verified in parallel.
const PARALLEL_VERIFY: usize = 64;

struct Entry {
    doc: DocSet,
    sketch: DocSketch,
    /// The families the set is in.
    mask: neardup::sketch::FamilySet,
}

/// A slot's set and, for a truncated text, its whole-text sketch, as bytes.
type Exported<B> = (B, Option<B>);

#[derive(Default)]
struct Table {
    entries: Vec<Option<Entry>>,
    /// Per family and band (`family · bands + band`): key → slots.
    buckets: Vec<HashMap<u64, Vec<u32>>>,
    live: usize,
}

/// The LSH table of `neardup.MinHashLSH`.
#[pyclass(frozen, name = "_LshTable", module = "neardup._neardup")]
pub struct LshTable {
    pipeline: Arc<Pipeline>,
    bands: usize,
    table: RwLock<Table>,
}

impl LshTable {
    fn prepare(&self, doc: DocSet) -> Entry {
        let sketch = self.pipeline.sketch_doc_keys(&doc);
        let mask = sketch.family_set();
        Entry { doc, sketch, mask }
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
        entries
            .into_iter()
            .map(|e| {
                let slot = t.entries.len() as u32;
                self.place(&mut t, Some(e));
                slot
            })
            .collect()
    }

    /// Appends a slot (empty for a removed one) and files its set in the buckets.
    fn place(&self, t: &mut Table, entry: Option<Entry>) {
        if t.buckets.is_empty() {
            t.buckets = (0..self.pipeline.families() * self.bands)
                .map(|_| HashMap::new())
                .collect();
        }
        let slot = t.entries.len() as u32;
        if let Some(e) = &entry {
            for part in e.sketch.families() {
                for (band, &key) in part.band_keys().iter().enumerate() {
                    let bucket = part.family() * self.bands + band;
                    t.buckets[bucket].entry(key).or_default().push(slot);
                }
            }
            t.live += 1;
        }
        t.entries.push(entry);
    }

    /// The slots similar to `probe` (verified) or colliding with it (not), with their
    /// similarity (`NaN` unverified), most similar first, then by slot.
    fn answer(&self, probe: &Entry, verify: bool) -> Vec<(u32, f64)> {
        let t = self.read();
        let mut found = Vec::new();
        for part in probe.sketch.families() {
            let f = part.family();
            for (band, key) in part.band_keys().iter().enumerate() {
                let Some(slots) = t
                    .buckets
                    .get(f * self.bands + band)
                    .and_then(|b| b.get(key))
                else {
                    continue;
                };
                for &s in slots {
                    let e = t.entries[s as usize]
                        .as_ref()
                        .expect("buckets hold live slots");
                    if probe.mask.shared(e.mask) == Some(f) {
                        found.push(s);
                    }
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        if !verify {
            return found.into_iter().map(|s| (s, f64::NAN)).collect();
        }
        let judge = |&s: &u32| {
            let e = t.entries[s as usize].as_ref().expect("a live slot");
            let verdict = self.pipeline.verify_sets(
                (probe.doc.set(), probe.doc.whole_signature()),
                (e.doc.set(), e.doc.whole_signature()),
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
        answers.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        answers
    }
}

#[pymethods]
impl LshTable {
    #[new]
    fn new(config: &NativeConfig) -> LshTable {
        LshTable {
            pipeline: config.pipeline(),
            bands: config.config().plan().bands(),
            table: RwLock::new(Table::default()),
        }
    }

    /// Inserts one set; returns its slot.
    fn insert(&self, py: Python<'_>, minhash: &MinHash) -> u32 {
        let doc = minhash.doc();
        py.detach(|| {
            let entry = self.prepare(doc);
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
                entries.par_extend(chunk.into_par_iter().map(|d| self.prepare(d)));
            }
            stop.checkpoint();
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
            for part in entry.sketch.families() {
                for (band, key) in part.band_keys().iter().enumerate() {
                    let bucket = &mut t.buckets[part.family() * self.bands + band];
                    if let Some(slots) = bucket.get_mut(key) {
                        slots.retain(|&s| s != slot);
                        if slots.is_empty() {
                            bucket.remove(key);
                        }
                    }
                }
            }
            t.live -= 1;
            Ok(())
        })
    }

    /// The slots answering a query, and their similarities.
    #[pyo3(signature = (minhash, verify=true))]
    fn query(
        &self,
        py: Python<'_>,
        minhash: &MinHash,
        verify: bool,
    ) -> PyResult<(Vec<u32>, Vec<f64>)> {
        let doc = minhash.doc();
        threads::detached(py, || {
            let probe = self.prepare(doc);
            self.answer(&probe, verify).into_iter().unzip()
        })
    }

    /// Each slot's set and whole-text sketch as bytes (`None` for a removed slot), to
    /// pickle the table.
    fn export<'py>(&self, py: Python<'py>) -> Vec<Option<Exported<Bound<'py, PyBytes>>>> {
        let t = self.read();
        let bytes = |v: &[u64]| {
            let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            PyBytes::new(py, &b)
        };
        t.entries
            .iter()
            .map(|e| {
                e.as_ref()
                    .map(|e| (bytes(e.doc.set()), e.doc.whole_signature().map(bytes)))
            })
            .collect()
    }

    /// Restores what `export` gave, into an empty table, slot for slot.
    fn restore(&self, py: Python<'_>, slots: Vec<Option<Exported<Vec<u8>>>>) -> PyResult<()> {
        let values = |b: &[u8]| -> PyResult<Vec<u64>> {
            if !b.len().is_multiple_of(8) {
                return Err(refused("a pickled MinHashLSH holds a malformed set"));
            }
            Ok(b.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect())
        };
        let docs: Vec<Option<DocSet>> = slots
            .iter()
            .map(|s| {
                s.as_ref()
                    .map(|(set, whole)| {
                        Ok(DocSet::from_parts(
                            values(set)?,
                            whole.as_deref().map(values).transpose()?,
                        ))
                    })
                    .transpose()
            })
            .collect::<PyResult<_>>()?;
        if !self.read().entries.is_empty() {
            return Err(refused("restore needs an empty table"));
        }
        threads::detached(py, || {
            let entries: Vec<Option<Entry>> = docs
                .into_par_iter()
                .map(|d| d.map(|d| self.prepare(d)))
                .collect();
            let mut t = self.write();
            for e in entries {
                self.place(&mut t, e);
            }
        })?;
        Ok(())
    }

    /// Sets in the table.
    fn __len__(&self) -> usize {
        self.read().live
    }
}
