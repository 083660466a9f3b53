//! `MinHash`, shaped like datasketch's: `update` with bytes, `jaccard`, `digest`, `merge`,
//! `count`, `bulk`. Unlike datasketch's it keeps the set itself (8 bytes per distinct
//! element) beside the sketch, so `jaccard` is exact and `MinHashLSH` can verify its
//! answers; `estimate` gives the sketch's estimate, as datasketch's `jaccard` does.
//!
//! Elements are hashed with xxh3-64 (seed 0) of their bytes (a `str` as UTF-8);
//! `MinHash.from_text` takes a text's shingle set exactly as the library makes it, so a
//! `MinHashLSH` of such MinHashes answers as the library's runs do.

use std::sync::{Mutex, MutexGuard};

use neardup::sketch::{ClassicMinHash, DocSet, OnePermutation, Sketch};
use neardup::{Config, Pipeline, SketchKind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple};
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::blocks::u64_vector;
use crate::errors::{core, refused};
use crate::texts;
use crate::threads;

/// Below this many elements a set gets the classic sketch (the library's rule).
const SMALL_SET: usize = 64;

/// A set of hashed elements and its MinHash signature.
#[pyclass(frozen, module = "neardup", name = "MinHash")]
pub struct MinHash {
    num_perm: usize,
    seed: u64,
    sketch: SketchKind,
    inner: Mutex<Inner>,
}

#[derive(Clone, Default)]
struct Inner {
    /// The elements' hashes; sorted and deduplicated unless `pending`.
    set: Vec<u64>,
    pending: bool,
    /// The whole text's sketch when the set is a truncated text's first shingles.
    whole: Option<Vec<u64>>,
}

impl Inner {
    fn settle(&mut self) -> &[u64] {
        if self.pending {
            self.set.sort_unstable();
            self.set.dedup();
            self.pending = false;
        }
        &self.set
    }

    fn add(&mut self, hashes: impl IntoIterator<Item = u64>) {
        self.set.extend(hashes);
        self.pending = true;
        // The set is the caller's now, not a text's first shingles.
        self.whole = None;
    }
}

/// The hash of one element: bytes, a bytearray, or a str as UTF-8.
fn element_hash(item: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(b) = item.cast::<PyBytes>() {
        Ok(xxh3_64(b.as_bytes()))
    } else if let Ok(b) = item.cast::<PyByteArray>() {
        Ok(xxh3_64(&b.to_vec()))
    } else if let Ok(s) = item.cast::<PyString>() {
        Ok(xxh3_64(texts::utf8_of(s.as_any())?.as_bytes()))
    } else {
        Err(PyTypeError::new_err(format!(
            "MinHash elements are bytes or str, not {}",
            item.get_type().name()?
        )))
    }
}

fn num_perm_of(num_perm: i64) -> PyResult<usize> {
    match usize::try_from(num_perm) {
        Ok(k) if (1..=neardup::sketch::MAX_NUM_PERM).contains(&k) => Ok(k),
        _ => Err(core(neardup::Error::InvalidNumPerm(
            num_perm.max(0) as usize
        ))),
    }
}

fn to_bytes(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn from_bytes(bytes: &[u8]) -> PyResult<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(refused(
            "a pickled MinHash's set is not whole 64-bit values",
        ));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

impl MinHash {
    fn with(num_perm: usize, seed: u64, sketch: SketchKind, inner: Inner) -> MinHash {
        MinHash {
            num_perm,
            seed,
            sketch,
            inner: Mutex::new(inner),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The set and the whole-text sketch, settled, as the library's document.
    pub fn doc(&self) -> DocSet {
        let mut inner = self.lock();
        let set = inner.settle().to_vec();
        DocSet::from_parts(set, inner.whole.clone())
    }

    /// Whether the MinHash carries its set (a sketch rebuilt from hashvalues, or built
    /// with a hashfunc of the caller's, does not).
    pub fn has_set(&self) -> bool {
        true
    }

    /// The hashvalues, `num_perm` of them.
    pub fn values(&self) -> Vec<u64> {
        let set = self.lock().settle().to_vec();
        self.signature(&set, self.uses_oph(&[set.len()]))
    }

    /// Whether sets of these sizes are sketched with one-permutation hashing.
    fn uses_oph(&self, sizes: &[usize]) -> bool {
        self.sketch == SketchKind::OnePermutation && sizes.iter().all(|&n| n >= SMALL_SET)
    }

    fn signature(&self, set: &[u64], oph: bool) -> Vec<u64> {
        let sketch: Box<dyn Sketch> = if oph {
            Box::new(OnePermutation::new(self.num_perm, self.seed).expect("checked num_perm"))
        } else {
            Box::new(ClassicMinHash::new(self.num_perm, self.seed).expect("checked num_perm"))
        };
        sketch.sketch(set)
    }

    fn same_kind(&self, other: &MinHash) -> PyResult<()> {
        if (self.num_perm, self.seed, self.sketch) != (other.num_perm, other.seed, other.sketch) {
            return Err(PyValueError::new_err(format!(
                "cannot compare MinHashes of different num_perm, seed or sketch: \
                 ({}, {}, {}) and ({}, {}, {})",
                self.num_perm, self.seed, self.sketch, other.num_perm, other.seed, other.sketch
            )));
        }
        Ok(())
    }

    /// Both settled sets (one lock at a time: `self` may be `other`).
    fn both(&self, other: &MinHash) -> (Vec<u64>, Vec<u64>) {
        let a = self.lock().settle().to_vec();
        let b = other.lock().settle().to_vec();
        (a, b)
    }
}

/// A pipeline for the shingling options of `from_text`.
fn shingling_pipeline(
    shingle: &str,
    normalize: &str,
    max_shingles: i64,
    num_perm: usize,
    seed: u64,
    sketch: SketchKind,
) -> PyResult<Pipeline> {
    let max_shingles =
        usize::try_from(max_shingles).map_err(|_| core(neardup::Error::InvalidMaxShingles(0)))?;
    let config = Config::builder()
        .shingle(shingle.parse().map_err(core)?)
        .normalization(normalize.parse().map_err(core)?)
        .max_shingles(max_shingles)
        .num_perm(num_perm)
        .seed(seed)
        .sketch(sketch)
        .build()
        .map_err(core)?;
    Pipeline::new(config).map_err(core)
}

#[pymethods]
impl MinHash {
    /// An empty MinHash of `num_perm` positions whose permutations are drawn from `seed`;
    /// `sketch` is `"oph"` (one-permutation hashing from 64 elements, classic below, as
    /// the library does) or `"classic"`.
    #[new]
    #[pyo3(signature = (num_perm=128, seed=1, *, sketch="oph".to_string()),
           text_signature = "(num_perm=128, seed=1, *, sketch='oph')")]
    fn new(num_perm: i64, seed: u64, sketch: String) -> PyResult<MinHash> {
        let sketch: SketchKind = sketch.parse().map_err(core)?;
        Ok(MinHash::with(
            num_perm_of(num_perm)?,
            seed,
            sketch,
            Inner::default(),
        ))
    }

    /// The MinHash of a text's shingle set, made as the library makes it.
    #[staticmethod]
    #[pyo3(signature = (text, *, shingle="char:5".to_string(), normalize="nfkc".to_string(),
                        max_shingles=neardup::text::DEFAULT_MAX_SHINGLES as i64, num_perm=128, seed=1,
                        sketch="oph".to_string()),
           text_signature = "(text, *, shingle='char:5', normalize='nfkc', max_shingles=16777216, num_perm=128, seed=1, sketch='oph')")]
    #[allow(clippy::too_many_arguments)]
    fn from_text(
        py: Python<'_>,
        text: String,
        shingle: String,
        normalize: String,
        max_shingles: i64,
        num_perm: i64,
        seed: u64,
        sketch: String,
    ) -> PyResult<MinHash> {
        let mut all = MinHash::from_texts(
            py,
            PyList::new(py, [text])?.as_any(),
            shingle,
            normalize,
            max_shingles,
            num_perm,
            seed,
            sketch,
        )?;
        Ok(all.pop().expect("one text"))
    }

    /// The MinHashes of many texts, shingled in parallel with the GIL released.
    #[staticmethod]
    #[pyo3(signature = (texts, *, shingle="char:5".to_string(), normalize="nfkc".to_string(),
                        max_shingles=neardup::text::DEFAULT_MAX_SHINGLES as i64, num_perm=128, seed=1,
                        sketch="oph".to_string()),
           text_signature = "(texts, *, shingle='char:5', normalize='nfkc', max_shingles=16777216, num_perm=128, seed=1, sketch='oph')")]
    #[allow(clippy::too_many_arguments)]
    fn from_texts(
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        shingle: String,
        normalize: String,
        max_shingles: i64,
        num_perm: i64,
        seed: u64,
        sketch: String,
    ) -> PyResult<Vec<MinHash>> {
        let num_perm = num_perm_of(num_perm)?;
        let kind: SketchKind = sketch.parse().map_err(core)?;
        let pipeline =
            shingling_pipeline(&shingle, &normalize, max_shingles, num_perm, seed, kind)?;
        let texts = texts::read(texts, "texts")?;
        let texts = texts.as_slice();
        let watch = threads::worth_watching(texts.len(), threads::bytes_of(texts));
        // A chunk at a time, so Ctrl-C stops it between two.
        let docs: Vec<DocSet> = threads::interruptible(py, None, watch, |stop| {
            let mut docs = Vec::with_capacity(texts.len());
            for chunk in threads::text_chunks(texts) {
                stop.checkpoint();
                docs.par_extend(chunk.par_iter().map(|t| pipeline.shingle_doc(t)));
            }
            docs
        })?;
        Ok(docs
            .into_iter()
            .map(|d| {
                let inner = Inner {
                    set: d.set().to_vec(),
                    pending: false,
                    whole: d.whole_signature().map(<[u64]>::to_vec),
                };
                MinHash::with(num_perm, seed, kind, inner)
            })
            .collect())
    }

    /// MinHashes of many sets at once (datasketch's `MinHash.bulk`): each item of `b` is
    /// an iterable of elements (bytes or str).
    #[staticmethod]
    #[pyo3(signature = (b, num_perm=128, seed=1, *, sketch="oph".to_string()),
           text_signature = "(b, num_perm=128, seed=1, *, sketch='oph')")]
    fn bulk(
        b: &Bound<'_, PyAny>,
        num_perm: i64,
        seed: u64,
        sketch: String,
    ) -> PyResult<Vec<MinHash>> {
        let num_perm = num_perm_of(num_perm)?;
        let kind: SketchKind = sketch.parse().map_err(core)?;
        let mut out = Vec::new();
        for elements in b.try_iter()? {
            let mut inner = Inner::default();
            for e in elements?.try_iter()? {
                inner.set.push(element_hash(&e?)?);
            }
            inner.pending = true;
            out.push(MinHash::with(num_perm, seed, kind, inner));
        }
        Ok(out)
    }

    /// Adds one element (bytes, or a str as UTF-8).
    fn update(&self, b: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = element_hash(b)?;
        self.lock().add([h]);
        Ok(())
    }

    /// Adds every element of an iterable.
    fn update_batch(&self, b: &Bound<'_, PyAny>) -> PyResult<()> {
        let hashes = b
            .try_iter()?
            .map(|e| element_hash(&e?))
            .collect::<PyResult<Vec<u64>>>()?;
        self.lock().add(hashes);
        Ok(())
    }

    /// Adds 64-bit hashes as they are: a uint64 array or a sequence of ints, such as a
    /// set from `neardup.shingle_sets`.
    fn update_hashes(&self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let array = py
            .import("numpy")?
            .call_method1("ascontiguousarray", (values, "uint64"))?;
        let hashes = u64_vector(&array)?;
        self.lock().add(hashes);
        Ok(())
    }

    /// The exact Jaccard similarity of the two sets (datasketch's `jaccard` estimates it;
    /// `estimate` does that here). 0 if either set is empty.
    fn jaccard(&self, other: &MinHash) -> f64 {
        let (a, b) = self.both(other);
        neardup::verify::jaccard(&a, &b)
    }

    /// The MinHash estimate of the Jaccard similarity: the share of signature positions
    /// that agree. Both need the same `num_perm`, `seed` and `sketch`.
    fn estimate(&self, other: &MinHash) -> PyResult<f64> {
        self.same_kind(other)?;
        let (a, b) = self.both(other);
        if a.is_empty() || b.is_empty() {
            return Ok(0.0);
        }
        let oph = self.uses_oph(&[a.len(), b.len()]);
        Ok(neardup::verify::estimate(
            &self.signature(&a, oph),
            &self.signature(&b, oph),
        ))
    }

    /// The signature: `num_perm` values as a uint64 array (classic sketch below 64
    /// elements, one-permutation hashing from 64 unless `sketch="classic"`).
    fn digest<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let set = self.lock().settle().to_vec();
        let sig = self.signature(&set, self.uses_oph(&[set.len()]));
        py.import("numpy")?
            .call_method1("asarray", (crate::buffer::Buffer::column(sig),))
    }

    /// The signature (datasketch's attribute).
    #[getter]
    fn hashvalues<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.digest(py)
    }

    /// The number of distinct elements (exact; datasketch estimates it).
    fn count(&self) -> usize {
        self.lock().settle().len()
    }

    /// True if no element was added.
    fn is_empty(&self) -> bool {
        self.lock().set.is_empty()
    }

    /// Adds the other set's elements to this one (datasketch's `merge`).
    fn merge(&self, other: &MinHash) -> PyResult<()> {
        self.same_kind(other)?;
        let theirs = other.lock().set.clone();
        self.lock().add(theirs);
        Ok(())
    }

    /// Removes every element.
    fn clear(&self) {
        *self.lock() = Inner::default();
    }

    /// A copy.
    fn copy(&self) -> MinHash {
        MinHash::with(self.num_perm, self.seed, self.sketch, self.lock().clone())
    }

    /// The union of MinHashes of the same kind (datasketch's `MinHash.union`).
    #[staticmethod]
    #[pyo3(signature = (*minhashes))]
    fn union(minhashes: &Bound<'_, PyTuple>) -> PyResult<MinHash> {
        let first = minhashes
            .get_item(0)
            .map_err(|_| refused("union of no MinHash"))?;
        let first = first.cast::<MinHash>()?.get();
        let out = first.copy();
        for m in minhashes.iter().skip(1) {
            out.merge(m.cast::<MinHash>()?.get())?;
        }
        Ok(out)
    }

    /// Signature length K.
    #[getter]
    fn num_perm(&self) -> usize {
        self.num_perm
    }

    /// Seed of the permutations.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// The sketch: `"oph"` or `"classic"`.
    #[getter]
    fn sketch(&self) -> &'static str {
        self.sketch.name()
    }

    /// The set's hashes, sorted (a uint64 array).
    fn hashes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let set = self.lock().settle().to_vec();
        py.import("numpy")?
            .call_method1("asarray", (crate::buffer::Buffer::column(set),))
    }

    /// The signature length, as datasketch's `len(m)`.
    fn __len__(&self) -> usize {
        self.num_perm
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        let Ok(other) = other.cast::<MinHash>() else {
            return false;
        };
        let other = other.get();
        if std::ptr::eq(self, other) {
            return true;
        }
        if (self.num_perm, self.seed, self.sketch) != (other.num_perm, other.seed, other.sketch) {
            return false;
        }
        let (a, b) = self.both(other);
        a == b && self.lock().whole == other.lock().whole
    }

    fn __repr__(&self) -> String {
        format!(
            "MinHash(num_perm={}, seed={}, sketch={:?}, elements={})",
            self.num_perm,
            self.seed,
            self.sketch.name(),
            self.count()
        )
    }

    /// Pickles as its parameters and its set.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let (set, whole) = {
            let mut inner = me.lock();
            let set = to_bytes(inner.settle());
            (set, inner.whole.as_deref().map(to_bytes))
        };
        let args = PyTuple::new(
            py,
            [
                me.num_perm.into_pyobject(py)?.into_any(),
                me.seed.into_pyobject(py)?.into_any(),
                me.sketch.name().into_pyobject(py)?.into_any(),
                PyBytes::new(py, &set).into_any(),
                match whole {
                    Some(w) => PyBytes::new(py, &w).into_any(),
                    None => py.None().into_bound(py),
                },
            ],
        )?;
        Ok((slf.get_type().getattr("_restore")?, args))
    }

    /// Rebuilds a pickled MinHash.
    #[staticmethod]
    fn _restore(
        num_perm: i64,
        seed: u64,
        sketch: String,
        set: &[u8],
        whole: Option<&[u8]>,
    ) -> PyResult<MinHash> {
        let inner = Inner {
            set: from_bytes(set)?,
            pending: true,
            whole: whole.map(from_bytes).transpose()?,
        };
        let sketch: SketchKind = sketch.parse().map_err(core)?;
        Ok(MinHash::with(num_perm_of(num_perm)?, seed, sketch, inner))
    }
}
