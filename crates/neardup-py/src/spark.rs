//! The bindings of `neardup.spark`: what each Spark task runs on its partition, through
//! the core's [`neardup::shuffle`] (band-row blocks, the bucket walk, the clustering of
//! components), with NumPy and Arrow columns in and out.

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, BinaryArray, Int32Array, LargeBinaryArray};
use neardup::shuffle::{self, BlockKind, Walk};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrow;
use crate::blocks::array_data;
use crate::buffer::Buffer;
use crate::config::NativeConfig;
use crate::errors;
use crate::texts;
use crate::threads;

/// A contiguous NumPy int64 vector, copied.
fn i64_vector(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let (address, shape) = array_data(obj, "<i8", 1)?;
    if shape[0] == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: a contiguous array of `shape[0]` i64 that `obj` keeps alive during the copy.
    Ok(unsafe { std::slice::from_raw_parts(address as *const i64, shape[0]) }.to_vec())
}

/// One partition's shuffle blocks, as columns: each block's kind (0: band rows, 1:
/// fingerprint rows, one each per destination partition that gets rows; 2: the documents
/// with no shingles, which are skipped), its destination partition, and where it ends
/// in `data`, which holds the blocks one after the other. Three vectors and one buffer
/// however many blocks, which the caller hands to Arrow without a copy.
#[pyfunction]
#[pyo3(signature = (config, positions, texts, parts, threads))]
pub fn spark_sketch(
    py: Python<'_>,
    config: &NativeConfig,
    positions: &Bound<'_, PyAny>,
    texts: &Bound<'_, PyAny>,
    parts: usize,
    threads: Option<i64>,
) -> PyResult<(Buffer, Buffer, Buffer, Buffer)> {
    config.refuse_containment("neardup.spark")?;
    let threads = threads::parse(threads)?;
    let positions = i64_vector(positions)?;
    let texts = texts::read(texts, "texts")?;
    // The core checks the rest; a part's number crosses back as an int32.
    if parts == 0 || parts > i32::MAX as usize {
        return Err(PyValueError::new_err(format!(
            "parts must be in 1..2^31, got {parts}"
        )));
    }
    let pipeline = config.pipeline();
    let blocks = py
        .detach(|| {
            threads::run(threads, || {
                shuffle::sketch_blocks(&pipeline, &positions, texts.as_slice(), parts)
            })
        })?
        .map_err(errors::core)?;
    let mut data = Vec::with_capacity(blocks.iter().map(|b| b.bytes.len()).sum());
    let (mut kinds, mut destinations, mut ends) = (Vec::new(), Vec::new(), Vec::new());
    for b in blocks {
        data.extend_from_slice(&b.bytes);
        kinds.push(i64::from(b.kind.code()));
        destinations.push(b.part as i64);
        ends.push(data.len() as i64);
    }
    Ok((
        Buffer::column(kinds),
        Buffer::column(destinations),
        Buffer::column(ends),
        Buffer::column(data),
    ))
}

/// The buckets of one shuffle partition, walked in chunks: each chunk `(a, b, kind)`, int64
/// positions with `a < b` and kind 0 for a candidate from a bucket, 1 for a copy `b` of
/// the first document `a` of its group, 2 for a document with no shingles (`a = b`). A
/// bucket of m documents gives m − 1 links to its first member (`links`) or its
/// m(m − 1)/2 pairs (`pairs`), and only the pairs that a corpus run bands in this family
/// (the last family both documents are in).
#[pyclass(name = "_BucketWalk", module = "neardup._neardup")]
pub struct BucketWalk {
    walk: shuffle::BucketWalk,
}

#[pymethods]
impl BucketWalk {
    /// Reads the blocks one partition received, in place: an Arrow stream (a pyarrow
    /// Table of the partition's batches) with an int32 column `kind` and a binary column
    /// `block`. `mode` is `links` or `pairs`.
    #[new]
    fn new(py: Python<'_>, blocks: &Bound<'_, PyAny>, mode: &str) -> PyResult<Self> {
        let walk = match mode {
            "pairs" => Walk::Pairs,
            "links" => Walk::Links,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "mode must be links or pairs, got {mode:?}"
                )))
            }
        };
        let batches = arrow::stream(blocks, "blocks")?
            .collect::<Result<Vec<ArrayRef>, _>>()
            .map_err(|e| PyValueError::new_err(format!("blocks: {e}")))?;
        py.detach(|| {
            let mut received = Vec::new();
            for batch in &batches {
                let (kinds, bytes) = block_columns(batch.as_ref())?;
                for (kind, block) in kinds.iter().zip(bytes) {
                    let kind = BlockKind::from_code(i64::from(kind.unwrap_or(-1)))?;
                    received.push((kind, block.unwrap_or_default()));
                }
            }
            shuffle::BucketWalk::new(&received, walk)
        })
        .map(|walk| BucketWalk { walk })
        .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next chunk `(a, b, kind)`, at most 2^20 rows; `None` at the end.
    fn __next__(&mut self) -> Option<(Buffer, Buffer, Buffer)> {
        let chunk = self.walk.next()?;
        Some((
            Buffer::column(chunk.a),
            Buffer::column(chunk.b),
            Buffer::column(chunk.kind),
        ))
    }
}

/// The `kind` (int32) and `block` (binary) columns of a batch of blocks.
fn block_columns(batch: &dyn Array) -> neardup::Result<(&Int32Array, BinaryIter<'_>)> {
    let bad = |what: &str| neardup::Error::ShuffleBlock(format!("a batch of blocks {what}"));
    let table = batch.as_struct_opt().ok_or_else(|| bad("is not a table"))?;
    let kinds = table
        .column_by_name("kind")
        .and_then(|c| c.as_primitive_opt::<Int32Type>())
        .ok_or_else(|| bad("has no int32 column kind"))?;
    let blocks = table
        .column_by_name("block")
        .ok_or_else(|| bad("has no column block"))?;
    let bytes = match (blocks.as_binary_opt::<i32>(), blocks.as_binary_opt::<i64>()) {
        (Some(b), _) => BinaryIter::Small(b.iter()),
        (_, Some(b)) => BinaryIter::Large(b.iter()),
        _ => return Err(bad("has a column block that is not binary")),
    };
    Ok((kinds, bytes))
}

/// The values of a `binary` or `large_binary` column.
enum BinaryIter<'a> {
    Small(arrow_array::iterator::ArrayIter<&'a BinaryArray>),
    Large(arrow_array::iterator::ArrayIter<&'a LargeBinaryArray>),
}

impl<'a> Iterator for BinaryIter<'a> {
    type Item = Option<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            BinaryIter::Small(i) => i.next(),
            BinaryIter::Large(i) => i.next(),
        }
    }
}

/// The connected components of the edges `(u[i], v[i])` (int64 positions), as columns
/// `(node, label)`: every node once, in position order, labelled with the smallest
/// position of its component.
#[pyfunction]
pub fn spark_components(
    py: Python<'_>,
    u: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
) -> PyResult<(Buffer, Buffer)> {
    let (u, v) = (i64_vector(u)?, i64_vector(v)?);
    let rows = py
        .detach(|| shuffle::components(&u, &v))
        .map_err(errors::core)?;
    let (nodes, labels): (Vec<i64>, Vec<i64>) = rows.into_iter().unzip();
    Ok((Buffer::column(nodes), Buffer::column(labels)))
}

/// Clusters of whole connected components, as a corpus run clusters them. Rows (a
/// component, a position, a text) come in any order; each component's documents are put
/// in input order, grouped by identical sets, and clustered in keep order with the
/// configured verification. One row per document in a cluster, as columns `doc`, `duplicate_of`
/// (the kept document; itself for the kept one), `kept`, `jaccard`, `estimate`,
/// `truncated` (NaN/false for a kept document). Positions below `reference_below` are a
/// reference corpus (never removed, always heads).
#[pyfunction]
#[pyo3(signature = (config, components, positions, texts, threads, reference_below=i64::MIN))]
pub fn spark_clusters<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    components: &Bound<'py, PyAny>,
    positions: &Bound<'py, PyAny>,
    texts: &Bound<'py, PyAny>,
    threads: Option<i64>,
    reference_below: i64,
) -> PyResult<Vec<(&'static str, Buffer)>> {
    let threads = threads::parse(threads)?;
    let components = i64_vector(components)?;
    let positions = i64_vector(positions)?;
    let texts = texts::read(texts, "texts")?;
    let pipeline = config.pipeline();
    let rows = py
        .detach(|| {
            threads::run(threads, || {
                shuffle::cluster_components_after(
                    &pipeline,
                    &components,
                    &positions,
                    texts.as_slice(),
                    reference_below,
                )
            })
        })?
        .map_err(errors::core)?;
    let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
    Ok(vec![
        (
            "doc",
            Buffer::column(rows.iter().map(|r| r.doc).collect::<Vec<i64>>()),
        ),
        (
            "duplicate_of",
            Buffer::column(rows.iter().map(|r| r.duplicate_of).collect::<Vec<i64>>()),
        ),
        (
            "kept",
            Buffer::column(
                rows.iter()
                    .map(|r| r.similarity.is_none())
                    .collect::<Vec<bool>>(),
            ),
        ),
        (
            "jaccard",
            Buffer::column(
                rows.iter()
                    .map(|r| nan(r.similarity.and_then(|s| s.jaccard)))
                    .collect::<Vec<f64>>(),
            ),
        ),
        (
            "estimate",
            Buffer::column(
                rows.iter()
                    .map(|r| nan(r.similarity.and_then(|s| s.estimate)))
                    .collect::<Vec<f64>>(),
            ),
        ),
        (
            "truncated",
            Buffer::column(
                rows.iter()
                    .map(|r| r.similarity.is_some_and(|s| s.truncated))
                    .collect::<Vec<bool>>(),
            ),
        ),
    ])
}
