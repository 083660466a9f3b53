//! Whole runs over a list of texts, as the CLI's `pairs`, `clusters` and `dedup` run them
//! (LSH, or the exact join with `exact`; for pairs, also by containment), through the
//! core's one run seam (`Pipeline::intake`, `RunPlan`, `Pipeline::run`), with the GIL
//! released while the library works, and stopped by Ctrl-C between batches of texts and
//! between the library's stages and chunks of candidates.

use neardup::{Contained, Goal, Method, Pair, Pipeline, Ready, RunError, RunPlan, Sink};
use pyo3::prelude::*;
use pyo3::types::PyList;
use rayon::slice::ParallelSliceMut;

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

/// Reads the texts a batch at a time (stopping between batches if asked), chooses the
/// engine once, and makes the corpus ready for it: the one run seam every run shares.
fn prepare<'p>(
    pipeline: &'p Pipeline,
    texts: &[&str],
    exact: bool,
    goal: Goal,
    stop: &Stop,
) -> neardup::Result<Ready<'p>> {
    let mut intake = pipeline.intake(None)?;
    for chunk in threads::text_chunks(texts) {
        stop.checkpoint();
        intake.add(chunk)?;
    }
    let held = intake.finish()?;
    let method = if exact { Method::Exact } else { Method::Lsh };
    let plan = RunPlan::choose(pipeline, &held, method, goal)?;
    pipeline.prepare(held, &plan, &mut stop.observer())
}

/// Collects a pairs run's pairs, of either kind.
#[derive(Default)]
struct Collected {
    pairs: Vec<Pair>,
    contained: Vec<Contained>,
}

impl Sink for Collected {
    type Error = std::convert::Infallible;
    fn pairs(&mut self, chunk: &[Pair]) -> Result<(), Self::Error> {
        self.pairs.extend_from_slice(chunk);
        Ok(())
    }
    fn contained(&mut self, chunk: &[Contained]) -> Result<(), Self::Error> {
        self.contained.extend_from_slice(chunk);
        Ok(())
    }
}

/// Runs a ready corpus; the sink's error cannot happen.
fn run(
    pipeline: &Pipeline,
    ready: &mut Ready<'_>,
    stop: &Stop,
    sink: &mut Collected,
) -> neardup::Result<neardup::Outcome> {
    match pipeline.run(ready, &mut stop.observer(), sink) {
        Ok((outcome, _)) => Ok(outcome),
        Err(RunError::Run(e)) => Err(e),
        Err(RunError::Sink(never)) => match never {},
    }
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
    let (ids, columns) = released(
        py,
        config,
        texts,
        ids.as_ref(),
        threads,
        |pipeline, texts, stop| {
            let mut ready = prepare(pipeline, texts, exact, Goal::Pairs, stop)?;
            let mut sink = Collected::default();
            run(pipeline, &mut ready, stop, &mut sink)?;
            if ready.plan().engine().is_containment() {
                return Ok(Columns::Contained(ContainedColumns::new(&sink.contained)));
            }
            // Streamed in the engine's order; handed back by (a, b).
            sink.pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
            Ok(Columns::Pairs(PairColumns::from_pairs(&sink.pairs)))
        },
    )?;
    Ok(match (columns, form) {
        (Columns::Pairs(c), Form::List) => c.into_list(py, &ids)?.into_any(),
        (Columns::Pairs(c), _) => c.into_columns(py)?.into_any(),
        (Columns::Contained(c), Form::List) => c.into_list(py, &ids)?.into_any(),
        (Columns::Contained(c), _) => c.into_columns(py)?.into_any(),
    })
}

/// A pairs run's result: pairs by similarity, or (`a` contained in `b`) by containment.
enum Columns {
    Pairs(PairColumns),
    Contained(ContainedColumns),
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
            let mut ready = prepare(pipeline, texts, exact, Goal::Clusters, stop)?;
            let outcome = run(pipeline, &mut ready, stop, &mut Collected::default())?;
            let neardup::Outcome::Clusters(clusters) = outcome else {
                unreachable!("a clusters plan gives clusters")
            };
            let documents = ready.shingled().map_or(0, |s| s.corpus().len());
            Ok(ClusterColumns::new(&clusters, documents, |d| {
                ready.has_shingles(d)
            }))
        },
    )?;
    Ok(match form {
        Form::List => clusters.into_list(py, &ids)?.into_any(),
        Form::Columns => clusters.into_columns(py)?.into_any(),
        Form::Survivors => Bound::new(py, clusters.into_survivors())?.into_any(),
    })
}
