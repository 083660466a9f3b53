//! Whole runs over a list of texts, as the CLI's `pairs`, `clusters` and `dedup` run them
//! (LSH, or the exact join with `exact`; for pairs, also by containment), with the GIL
//! released while the library works, and stopped by Ctrl-C between batches of texts and
//! between the library's stages and chunks of candidates.

use neardup::{Measure, Pipeline, Shingled};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::config::NativeConfig;
use crate::errors::{core, refused};
use crate::results::{ClusterColumns, ContainedColumns, Ids, PairColumns};
use crate::texts;
use crate::threads::{self, Stop};

/// How a result is handed back: plain Python objects, or columns for NumPy.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    List,
    Columns,
    Survivors,
}

impl Form {
    fn parse(form: &str, allowed: &[Form]) -> PyResult<Form> {
        let f = match form {
            "list" => Form::List,
            "columns" => Form::Columns,
            "survivors" => Form::Survivors,
            _ => return Err(refused(format!("unknown result form {form:?}"))),
        };
        if allowed.contains(&f) {
            Ok(f)
        } else {
            Err(refused(format!("result form {form:?} does not apply here")))
        }
    }
}

/// Shingles the texts a batch at a time (as `Pipeline::shingle` does in one), stopping
/// between batches if asked.
fn shingle(pipeline: &Pipeline, texts: &[&str], stop: &Stop) -> neardup::Result<Shingled> {
    let mut batches = pipeline.shingle_batches();
    for chunk in threads::text_chunks(texts) {
        stop.checkpoint();
        batches.add(chunk)?;
    }
    Ok(batches.finish())
}

/// Shingles the texts, and sketches them unless the exact join is asked for.
fn prepare(
    pipeline: &Pipeline,
    texts: &[&str],
    exact: bool,
    stop: &Stop,
) -> neardup::Result<Prepared> {
    let shingled = shingle(pipeline, texts, stop)?;
    Ok(if exact {
        Prepared::Exact(shingled)
    } else {
        Prepared::Lsh(pipeline.sketch(shingled, &mut stop.observer()))
    })
}

/// What every run shares: the threads and texts read and the ids checked against them,
/// then `work` on the texts with the GIL released, on the threads asked for, until it
/// ends or Ctrl-C stops it.
fn released<'a, 'py, T: Send>(
    py: Python<'py>,
    config: &NativeConfig,
    texts: &Bound<'py, PyAny>,
    ids: Option<&'a Bound<'py, PyList>>,
    threads: Option<i64>,
    work: impl FnOnce(&Pipeline, &[&str], &Stop) -> neardup::Result<T> + Send,
) -> PyResult<(Ids<'a, 'py>, T)> {
    let threads = threads::parse(threads)?;
    let texts = texts::read(texts, "texts")?;
    let ids = Ids::new(ids, texts.len())?;
    let pipeline = config.pipeline();
    let texts = texts.as_slice();
    let watch = threads::worth_watching(texts.len(), threads::bytes_of(texts));
    let done = threads::interruptible(py, threads, watch, |stop| work(&pipeline, texts, stop))?;
    Ok((ids, done.map_err(core)?))
}

/// A corpus ready for the run asked for.
enum Prepared {
    Exact(Shingled),
    Lsh(neardup::Sketched),
}

/// Every similar pair of `texts`, sorted by `(a, b)`; with a containment configuration,
/// every document `a` contained in a larger `b` (see [`run_contained`]).
#[pyfunction]
#[pyo3(signature = (config, texts, ids, exact, threads, form))]
pub fn run_pairs<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    texts: &Bound<'py, PyAny>,
    ids: Option<Bound<'py, PyList>>,
    exact: bool,
    threads: Option<i64>,
    form: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let form = Form::parse(form, &[Form::List, Form::Columns])?;
    if config.config().measure() == Measure::Containment {
        return run_contained(py, config, texts, ids, exact, threads, form);
    }
    let (ids, columns) = released(
        py,
        config,
        texts,
        ids.as_ref(),
        threads,
        |pipeline, texts, stop| {
            let set = match prepare(pipeline, texts, exact, stop)? {
                Prepared::Exact(c) => pipeline.exact_pair_set(&c, &mut stop.observer())?.0,
                Prepared::Lsh(c) => pipeline.pair_set(&c, &mut stop.observer()).0,
            };
            Ok(PairColumns::from_set(&set))
        },
    )?;
    Ok(match form {
        Form::List => columns.into_list(py, &ids)?.into_any(),
        _ => columns.into_columns(py)?.into_any(),
    })
}

/// Every document of `texts` contained at the threshold in a larger one, by the LSH
/// Ensemble search or (`exact`) the exact containment join: `(a, b, containment,
/// jaccard)`, `a` the contained document, sorted by `(a, b)`.
fn run_contained<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    texts: &Bound<'py, PyAny>,
    ids: Option<Bound<'py, PyList>>,
    exact: bool,
    threads: Option<i64>,
    form: Form,
) -> PyResult<Bound<'py, PyAny>> {
    let (ids, columns) = released(
        py,
        config,
        texts,
        ids.as_ref(),
        threads,
        |pipeline, texts, stop| {
            let shingled = shingle(pipeline, texts, stop)?;
            let (pairs, _) = if exact {
                pipeline.exact_containment_pairs(&shingled, &mut stop.observer())
            } else {
                pipeline.containment_pairs(&shingled, &mut stop.observer())?
            };
            Ok(ContainedColumns::new(&pairs))
        },
    )?;
    Ok(match form {
        Form::List => columns.into_list(py, &ids)?.into_any(),
        _ => columns.into_columns(py)?.into_any(),
    })
}

/// The clusters of `texts`, or which of them survive a dedup.
#[pyfunction]
#[pyo3(signature = (config, texts, ids, exact, threads, form))]
pub fn run_clusters<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    texts: &Bound<'py, PyAny>,
    ids: Option<Bound<'py, PyList>>,
    exact: bool,
    threads: Option<i64>,
    form: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let form = Form::parse(form, &[Form::List, Form::Columns, Form::Survivors])?;
    // A fragment inside two unrelated pages does not make the pages one cluster.
    config.refuse_containment(if form == Form::Survivors {
        "dedup"
    } else {
        "clusters"
    })?;
    let (ids, clusters) = released(
        py,
        config,
        texts,
        ids.as_ref(),
        threads,
        |pipeline, texts, stop| {
            Ok(match prepare(pipeline, texts, exact, stop)? {
                Prepared::Exact(c) => {
                    let (clusters, _) = pipeline.exact_cluster_set(&c, &mut stop.observer())?;
                    ClusterColumns::new(&clusters, c.corpus())
                }
                Prepared::Lsh(c) => {
                    let (clusters, _) = pipeline.cluster_set(&c, &mut stop.observer());
                    ClusterColumns::new(&clusters, c.corpus())
                }
            })
        },
    )?;
    Ok(match form {
        Form::List => clusters.into_list(py, &ids)?.into_any(),
        Form::Columns => clusters.into_columns(py)?.into_any(),
        Form::Survivors => Bound::new(py, clusters.into_survivors())?.into_any(),
    })
}
