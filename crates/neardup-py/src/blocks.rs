//! Building blocks for engines written around the library (Spark, Ray, a database): the
//! shingle sets (the 64-bit hashes, whose top halves a corpus holds as ids), the band
//! keys, the exact Jaccard of two texts and the verdict on candidate pairs, each equal to
//! what a corpus run computes for the same documents.

use neardup::sketch::{DocSet, DocSketch};
use neardup::text::jaccard_of_ids;
use neardup::verify::jaccard;
use neardup::{Similarity, Verification};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use rayon::prelude::*;

use crate::buffer::Buffer;
use crate::config::NativeConfig;
use crate::errors::{core, refused};
use crate::results::{Ids, PairColumns};
use crate::texts;
use crate::threads;

/// A contiguous NumPy array's data address and shape, checked against the type and number
/// of dimensions expected (`typestr` as in `__array_interface__`, e.g. `<u8`).
pub fn array_data(
    obj: &Bound<'_, PyAny>,
    typestr: &str,
    ndim: usize,
) -> PyResult<(usize, Vec<usize>)> {
    let interface = obj.getattr("__array_interface__")?;
    let found: String = interface.get_item("typestr")?.extract()?;
    let shape: Vec<usize> = interface.get_item("shape")?.extract()?;
    let contiguous = interface.get_item("strides").map_or(true, |s| s.is_none());
    if found != typestr || shape.len() != ndim || !contiguous {
        return Err(PyTypeError::new_err(format!(
            "expected a contiguous {ndim}-dimensional array of {typestr}, got {found} of shape {shape:?}"
        )));
    }
    let (address, _readonly): (usize, bool) = interface.get_item("data")?.extract()?;
    Ok((address, shape))
}

/// A NumPy uint64 vector, copied.
pub fn u64_vector(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let (address, shape) = array_data(obj, "<u8", 1)?;
    if shape[0] == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: a contiguous array of `shape[0]` u64 that `obj` keeps alive during the copy.
    Ok(unsafe { std::slice::from_raw_parts(address as *const u64, shape[0]) }.to_vec())
}

/// Each document's shingle set, sorted: `(offsets, hashes)`, document `i`'s set being
/// `hashes[offsets[i]..offsets[i + 1]]`.
#[pyfunction]
#[pyo3(signature = (config, texts, threads))]
pub fn shingle_sets(
    py: Python<'_>,
    config: &NativeConfig,
    texts: &Bound<'_, PyAny>,
    threads: Option<i64>,
) -> PyResult<(Buffer, Buffer)> {
    let threads = threads::parse(threads)?;
    let texts = texts::read(texts, "texts")?;
    let texts = texts.as_slice();
    let pipeline = config.pipeline();
    let watch = threads::worth_watching(texts.len(), threads::bytes_of(texts));
    let (offsets, hashes) = threads::interruptible(py, threads, watch, |stop| {
        // Each text on its own: a corpus holds 32-bit ids, the caller gets the hashes.
        let mut sets: Vec<Vec<u64>> = Vec::with_capacity(texts.len());
        for chunk in threads::text_chunks(texts) {
            stop.checkpoint();
            sets.par_extend(
                chunk
                    .par_iter()
                    .map(|t| pipeline.config().shingler().shingle_set(t)),
            );
        }
        let mut offsets = Vec::with_capacity(sets.len() + 1);
        offsets.push(0i64);
        for s in &sets {
            offsets.push(offsets[offsets.len() - 1] + s.len() as i64);
        }
        (offsets, sets.concat())
    })?;
    Ok((Buffer::column(offsets), Buffer::column(hashes)))
}

/// Each document's band keys: a matrix of documents × (families × bands), family `f`'s
/// band `j` in column `f·bands + j`; 0 where the document is not in the family (a key
/// that is 0 is given as 1, so 0 always means none).
#[pyfunction]
#[pyo3(signature = (config, texts, threads))]
pub fn band_keys(
    py: Python<'_>,
    config: &NativeConfig,
    texts: &Bound<'_, PyAny>,
    threads: Option<i64>,
) -> PyResult<Buffer> {
    if !config.config().sketch().is_minhash() {
        return Err(core(neardup::Error::NotForSimHash("band keys")));
    }
    // A containment search's keys depend on the query's and the partition's sizes.
    config.refuse_containment("band_keys")?;
    let threads = threads::parse(threads)?;
    let texts = texts::read(texts, "texts")?;
    let texts = texts.as_slice();
    let pipeline = config.pipeline();
    let bands = config.config().plan().bands();
    let width = pipeline.families() * bands;
    let watch = threads::worth_watching(texts.len(), threads::bytes_of(texts));
    let keys = threads::interruptible(py, threads, watch, |stop| {
        let mut keys = vec![0u64; texts.len() * width];
        let mut rows = keys.as_mut_slice();
        for chunk in threads::text_chunks(texts) {
            stop.checkpoint();
            let (these, rest) = std::mem::take(&mut rows).split_at_mut(chunk.len() * width);
            rows = rest;
            these
                .par_chunks_mut(width.max(1))
                .zip(chunk.par_iter())
                .for_each(|(row, text)| {
                    let sketch = pipeline.sketch_doc_keys(&pipeline.shingle_doc(text));
                    for part in sketch.families() {
                        let cols = &mut row[part.family() * bands..][..bands];
                        for (out, &k) in cols.iter_mut().zip(part.band_keys()) {
                            *out = k.max(1);
                        }
                    }
                });
        }
        keys
    })?;
    let n = texts.len();
    Ok(Buffer::shaped(keys, vec![n, width]))
}

/// The exact Jaccard of two texts' shingle sets, compared by their 32-bit ids as a corpus
/// compares them.
#[pyfunction]
pub fn jaccard_texts(py: Python<'_>, config: &NativeConfig, a: String, b: String) -> f64 {
    let shingler = *config.config().shingler();
    py.detach(|| jaccard_of_ids(&shingler.shingle_set(&a), &shingler.shingle_set(&b)))
}

/// The exact Jaccard of two sets of values (uint64 arrays, in any order), compared as
/// given: a caller's sets need not be shingle hashes.
#[pyfunction]
pub fn jaccard_sets(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (mut a, mut b) = (u64_vector(a)?, u64_vector(b)?);
    for s in [&mut a, &mut b] {
        s.sort_unstable();
        s.dedup();
    }
    Ok(jaccard(&a, &b))
}

/// Pairs verified between two checks for Ctrl-C.
const PAIRS_CHUNK: usize = 1 << 18;

/// The pairs of `pairs` (an int64 array of rows `(a, b)`, positions in `texts`) that
/// pass verification, in their order, with their similarity.
#[pyfunction]
#[pyo3(signature = (config, texts, pairs, ids, threads, form))]
pub fn verify<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    texts: &Bound<'py, PyAny>,
    pairs: &Bound<'py, PyAny>,
    ids: Option<Bound<'py, PyList>>,
    threads: Option<i64>,
    form: &str,
) -> PyResult<Bound<'py, PyAny>> {
    // It judges by Jaccard (or its estimate), never by containment.
    config.refuse_containment("verify")?;
    let threads = threads::parse(threads)?;
    let texts = texts::read(texts, "texts")?;
    let ids = Ids::new(ids.as_ref(), texts.len())?;
    let (address, shape) = array_data(pairs, "<i8", 2)?;
    if shape[1] != 2 {
        return Err(refused(format!(
            "pairs must have two columns (a, b), got {}",
            shape[1]
        )));
    }
    let m = shape[0];
    let pipeline = config.pipeline();
    let estimates = config.config().verification() != Verification::Exact;
    let n = texts.len();
    let watch = threads::worth_watching(n.max(m), threads::bytes_of(texts.as_slice()));
    let columns =
        threads::interruptible(py, threads, watch, |stop| {
            (|| -> Result<PairColumns, String> {
                // SAFETY: a contiguous (m, 2) int64 array that `pairs` keeps alive.
                let flat: &[i64] = if m == 0 {
                    &[]
                } else {
                    unsafe { std::slice::from_raw_parts(address as *const i64, m * 2) }
                };
                let mut needed = vec![false; n];
                for (i, p) in flat.chunks_exact(2).enumerate() {
                    let (a, b) = (p[0], p[1]);
                    for d in [a, b] {
                        if !(0..n as i64).contains(&d) {
                            return Err(format!(
                            "pairs[{i}] = ({a}, {b}) names document {d}, but there are {n} texts"
                        ));
                        }
                    }
                    if a == b {
                        return Err(format!("pairs[{i}] = ({a}, {b}) names one document twice"));
                    }
                    needed[a as usize] = true;
                    needed[b as usize] = true;
                }
                // In chunks of texts, then of pairs, so Ctrl-C stops it between two.
                let mut docs: Vec<Option<(DocSet, Option<DocSketch>)>> = Vec::with_capacity(n);
                for chunk in threads::text_chunks(texts.as_slice()) {
                    stop.checkpoint();
                    let needed = &needed[docs.len()..docs.len() + chunk.len()];
                    docs.par_extend(chunk.par_iter().zip(needed.par_iter()).map(
                        |(text, &needed)| {
                            needed.then(|| {
                                let doc = pipeline.shingle_doc(text);
                                let sketch = estimates.then(|| pipeline.sketch_doc(&doc));
                                (doc, sketch)
                            })
                        },
                    ));
                }
                let mut verdicts: Vec<Option<Similarity>> = Vec::with_capacity(m);
                for chunk in flat.chunks(2 * PAIRS_CHUNK) {
                    stop.checkpoint();
                    verdicts.par_extend(chunk.par_chunks_exact(2).map(|p| {
                        let (a, b) = (&docs[p[0] as usize], &docs[p[1] as usize]);
                        let (a, b) = (a.as_ref().expect("needed"), b.as_ref().expect("needed"));
                        let sketches = a.1.as_ref().zip(b.1.as_ref());
                        pipeline.verify_docs(&a.0, &b.0, sketches).passed()
                    }));
                }
                let mut out = PairColumns::with_capacity(verdicts.iter().flatten().count());
                for (p, v) in flat.chunks_exact(2).zip(verdicts) {
                    if let Some(s) = v {
                        out.push(p[0] as u32, p[1] as u32, s);
                    }
                }
                Ok(out)
            })()
        })?;
    let columns = columns.map_err(refused)?;
    Ok(match form {
        "list" => columns.into_list(py, &ids)?.into_any(),
        _ => columns.into_columns(py)?.into_any(),
    })
}
