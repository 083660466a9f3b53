//! Results as columns, and the two forms Python gets them in: plain objects (lists of
//! tuples, lists of lists) built here, or NumPy columns ([`Buffer`]s) that the package
//! turns into arrays or a pyarrow table.

use neardup::{Clusters, Contained, Pair, Similarity};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyTuple};

use crate::buffer::Buffer;

/// The ids results name documents by: the caller's, or the documents' positions (each
/// position's int made once, so a document in many pairs shares one object).
pub struct Ids<'a, 'py> {
    ids: Option<&'a Bound<'py, PyList>>,
    positions: std::cell::RefCell<Vec<Option<Bound<'py, PyAny>>>>,
}

impl<'a, 'py> Ids<'a, 'py> {
    /// The caller's ids (checked to be one per document), or positions.
    pub fn new(ids: Option<&'a Bound<'py, PyList>>, documents: usize) -> PyResult<Self> {
        if let Some(list) = ids {
            if list.len() != documents {
                return Err(crate::errors::refused(format!(
                    "{} ids for {documents} texts: give one id per text",
                    list.len()
                )));
            }
        }
        let positions = if ids.is_none() {
            vec![None; documents]
        } else {
            Vec::new()
        };
        Ok(Ids {
            ids,
            positions: std::cell::RefCell::new(positions),
        })
    }

    /// The id of document `doc`.
    pub fn get(&self, py: Python<'py>, doc: u32) -> PyResult<Bound<'py, PyAny>> {
        if let Some(list) = self.ids {
            return list.get_item(doc as usize);
        }
        let mut positions = self.positions.borrow_mut();
        let slot = &mut positions[doc as usize];
        if let Some(id) = slot {
            return Ok(id.clone());
        }
        let id = doc.into_pyobject(py)?.into_any();
        *slot = Some(id.clone());
        Ok(id)
    }
}

/// A list of `n` items made by `item`, filled in place (no growing).
fn list_of<'py>(
    py: Python<'py>,
    n: usize,
    mut item: impl FnMut(usize) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: PyList_New gives a new list of `n` empty slots (or NULL and an exception);
    // each slot is set exactly once with a new reference, which PyList_SetItem steals,
    // before the list is handed to Python code. An error drops the list, whose unset
    // slots are NULL, which CPython's list deallocation accepts.
    unsafe {
        let list = ffi::PyList_New(n as ffi::Py_ssize_t);
        if list.is_null() {
            return Err(PyErr::fetch(py));
        }
        let list = Bound::from_owned_ptr(py, list).cast_into_unchecked::<PyList>();
        for i in 0..n {
            let value = item(i)?;
            ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, value.into_ptr());
        }
        Ok(list)
    }
}

/// `NaN` for an absent similarity, so a column stays a plain float array.
fn or_nan(x: Option<f64>) -> f64 {
    x.unwrap_or(f64::NAN)
}

/// Pairs as columns: documents `a` and `b`, the exact Jaccard and the estimate (`NaN`
/// where absent), and whether a document was truncated.
#[derive(Default)]
pub struct PairColumns {
    a: Vec<u32>,
    b: Vec<u32>,
    jaccard: Vec<f64>,
    estimate: Vec<f64>,
    truncated: Vec<bool>,
}

impl PairColumns {
    /// Every pair of a pair set, sorted by `(a, b)`.
    pub fn from_pairs(pairs: &[Pair]) -> Self {
        let mut out = PairColumns::with_capacity(pairs.len());
        for p in pairs {
            out.push(p.a, p.b, p.similarity);
        }
        out
    }

    /// Room for `n` pairs.
    pub fn with_capacity(n: usize) -> Self {
        PairColumns {
            a: Vec::with_capacity(n),
            b: Vec::with_capacity(n),
            jaccard: Vec::with_capacity(n),
            estimate: Vec::with_capacity(n),
            truncated: Vec::with_capacity(n),
        }
    }

    /// Appends one pair.
    pub fn push(&mut self, a: u32, b: u32, s: Similarity) {
        self.a.push(a);
        self.b.push(b);
        self.jaccard.push(or_nan(s.jaccard));
        self.estimate.push(or_nan(s.estimate));
        self.truncated.push(s.truncated);
    }

    /// `[(id_a, id_b, similarity), ...]`: the exact Jaccard, else the estimate, else None.
    pub fn into_list<'py>(
        self,
        py: Python<'py>,
        ids: &Ids<'_, 'py>,
    ) -> PyResult<Bound<'py, PyList>> {
        // Pairs expanded from a group of copies share a similarity: one float for a run.
        let mut last: Option<(u64, Bound<'py, PyAny>)> = None;
        list_of(py, self.a.len(), |i| {
            let value = [self.jaccard[i], self.estimate[i]]
                .into_iter()
                .find(|v| !v.is_nan());
            let value = match value {
                None => py.None().into_bound(py),
                Some(v) => match &last {
                    Some((bits, obj)) if *bits == v.to_bits() => obj.clone(),
                    _ => {
                        let obj = PyFloat::new(py, v).into_any();
                        last = Some((v.to_bits(), obj.clone()));
                        obj
                    }
                },
            };
            let a = ids.get(py, self.a[i])?;
            let b = ids.get(py, self.b[i])?;
            Ok(PyTuple::new(py, [a, b, value])?.into_any())
        })
    }

    /// `{"a", "b", "jaccard", "estimate", "truncated"}` as buffers for NumPy.
    pub fn into_columns(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("a", Buffer::column(self.a))?;
        d.set_item("b", Buffer::column(self.b))?;
        d.set_item("jaccard", Buffer::column(self.jaccard))?;
        d.set_item("estimate", Buffer::column(self.estimate))?;
        d.set_item("truncated", Buffer::column(self.truncated))?;
        Ok(d)
    }
}

/// Containment pairs as columns: `a` contained in `b`, the containment |A ∩ B| / |A| and
/// the Jaccard of the pair.
pub struct ContainedColumns {
    a: Vec<u32>,
    b: Vec<u32>,
    containment: Vec<f64>,
    jaccard: Vec<f64>,
}

impl ContainedColumns {
    /// The pairs, in their order.
    pub fn new(pairs: &[Contained]) -> Self {
        ContainedColumns {
            a: pairs.iter().map(|p| p.a).collect(),
            b: pairs.iter().map(|p| p.b).collect(),
            containment: pairs.iter().map(|p| p.containment).collect(),
            jaccard: pairs.iter().map(|p| p.jaccard).collect(),
        }
    }

    /// `[(id_a, id_b, containment, jaccard), ...]`.
    pub fn into_list<'py>(
        self,
        py: Python<'py>,
        ids: &Ids<'_, 'py>,
    ) -> PyResult<Bound<'py, PyList>> {
        list_of(py, self.a.len(), |i| {
            let a = ids.get(py, self.a[i])?;
            let b = ids.get(py, self.b[i])?;
            let c = PyFloat::new(py, self.containment[i]).into_any();
            let j = PyFloat::new(py, self.jaccard[i]).into_any();
            Ok(PyTuple::new(py, [a, b, c, j])?.into_any())
        })
    }

    /// `{"a", "b", "containment", "jaccard"}` as buffers for NumPy.
    pub fn into_columns(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("a", Buffer::column(self.a))?;
        d.set_item("b", Buffer::column(self.b))?;
        d.set_item("containment", Buffer::column(self.containment))?;
        d.set_item("jaccard", Buffer::column(self.jaccard))?;
        Ok(d)
    }
}

/// Clusters, and which documents survive a dedup.
pub struct ClusterColumns {
    /// Each cluster: the kept document, then its duplicates with their similarity.
    clusters: Vec<(u32, Vec<(u32, Similarity)>)>,
    /// Per document: neither removed as a duplicate nor without shingles.
    survivors: Vec<bool>,
    /// The first document past the reference: survivors and annotations start here.
    first: usize,
}

impl ClusterColumns {
    /// The clusters of a corpus; with a reference, survivors and annotations are of the
    /// documents past it.
    pub fn new(clusters: &Clusters, documents: usize, has_shingles: impl Fn(u32) -> bool) -> Self {
        let clusters_reference = (clusters.reference() as usize).min(documents);
        let survivors = (0..documents as u32)
            .map(|d| has_shingles(d) && clusters.duplicate_of(d).is_none())
            .collect();
        let clusters = clusters
            .iter()
            .map(|c| {
                let dups = c.duplicates().map(|d| (d.doc, d.similarity)).collect();
                (c.kept(), dups)
            })
            .collect();
        ClusterColumns {
            clusters,
            survivors,
            first: clusters_reference,
        }
    }

    /// `[[kept, duplicate, ...], ...]`, clusters by kept document, duplicates in input
    /// order.
    pub fn into_list<'py>(
        self,
        py: Python<'py>,
        ids: &Ids<'_, 'py>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for (kept, dups) in &self.clusters {
            let members = PyList::empty(py);
            members.append(ids.get(py, *kept)?)?;
            for (d, _) in dups {
                members.append(ids.get(py, *d)?)?;
            }
            out.append(members)?;
        }
        Ok(out)
    }

    /// One row per document in a cluster, the kept one first: `{"doc", "cluster", "kept",
    /// "duplicate_of", "jaccard", "estimate", "truncated"}` as buffers for NumPy. A kept
    /// document's `duplicate_of` is itself and its similarities `NaN`.
    pub fn into_columns(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let rows: usize = self.clusters.iter().map(|(_, d)| d.len() + 1).sum();
        let mut doc = Vec::with_capacity(rows);
        let mut cluster = Vec::with_capacity(rows);
        let mut kept = Vec::with_capacity(rows);
        let mut of = Vec::with_capacity(rows);
        let mut jaccard = Vec::with_capacity(rows);
        let mut estimate = Vec::with_capacity(rows);
        let mut truncated = Vec::with_capacity(rows);
        for (n, (k, dups)) in self.clusters.iter().enumerate() {
            let rows = std::iter::once((*k, None)).chain(dups.iter().map(|(d, s)| (*d, Some(*s))));
            for (d, s) in rows {
                doc.push(d);
                cluster.push(n as u32);
                kept.push(s.is_none());
                of.push(*k);
                jaccard.push(or_nan(s.and_then(|s| s.jaccard)));
                estimate.push(or_nan(s.and_then(|s| s.estimate)));
                truncated.push(s.is_some_and(|s| s.truncated));
            }
        }
        let d = PyDict::new(py);
        d.set_item("doc", Buffer::column(doc))?;
        d.set_item("cluster", Buffer::column(cluster))?;
        d.set_item("kept", Buffer::column(kept))?;
        d.set_item("duplicate_of", Buffer::column(of))?;
        d.set_item("jaccard", Buffer::column(jaccard))?;
        d.set_item("estimate", Buffer::column(estimate))?;
        d.set_item("truncated", Buffer::column(truncated))?;
        Ok(d)
    }

    /// Per document past the reference, whether it survives a dedup.
    pub fn survivors(&self) -> &[bool] {
        &self.survivors[self.first..]
    }

    /// One row per document past the reference, in input order (the annotations of
    /// `neardup annotate`): `{"cluster"` (the cluster's kept document; its own for a
    /// document in none), `"cluster_size"` (1 in none), `"kept"` (survives a dedup: false
    /// for a duplicate and for a document without shingles, which is skipped),
    /// `"duplicate_of"` (the kept document; its own where it duplicates nothing), `"alone"`
    /// (it duplicates nothing), `"jaccard"` (the similarity to it, the estimate where no
    /// exact one was computed; `NaN` where none)`}` as buffers.
    pub fn into_annotations(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let n = self.survivors.len();
        let first = self.first;
        let mut cluster: Vec<u32> = (0..n as u32).collect();
        let mut size = vec![1u32; n];
        let mut of = cluster.clone();
        let mut jaccard = vec![f64::NAN; n];
        for (k, dups) in &self.clusters {
            let members = dups.len() as u32 + 1;
            size[*k as usize] = members;
            for (d, s) in dups {
                let d = *d as usize;
                cluster[d] = *k;
                size[d] = members;
                of[d] = *k;
                jaccard[d] = or_nan(s.value());
            }
        }
        let alone = (first..n).map(|d| of[d] as usize == d).collect();
        let past = |mut v: Vec<_>| v.split_off(first);
        let d = PyDict::new(py);
        d.set_item("cluster", Buffer::column(past(cluster)))?;
        d.set_item("cluster_size", Buffer::column(past(size)))?;
        d.set_item("kept", Buffer::column(self.survivors[first..].to_vec()))?;
        d.set_item("duplicate_of", Buffer::column(past(of)))?;
        d.set_item("alone", Buffer::column::<bool>(alone))?;
        d.set_item("jaccard", Buffer::column(jaccard.split_off(first)))?;
        Ok(d)
    }

    /// Per document past the reference, whether it survives a dedup.
    pub fn into_survivors(mut self) -> Buffer {
        Buffer::column(self.survivors.split_off(self.first))
    }
}
