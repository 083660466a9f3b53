//! Whole runs over a list of texts, as the CLI's `pairs`, `clusters` and `dedup` run them
//! (LSH, or the exact join with `exact`; for pairs, also by containment), through the
//! core's one run seam (`Pipeline::intake`, `RunPlan`, `Pipeline::run`), with the GIL
//! released while the library works, and stopped by Ctrl-C between batches of texts and
//! between the library's stages and chunks of candidates.

use neardup::{Contained, Goal, Intake, Method, Pair, Pipeline, Ready, RunError, RunPlan, Sink};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use rayon::slice::ParallelSliceMut;

use crate::arrow::TextChunk;
use crate::config::NativeConfig;
use crate::errors::{core, refused};
use crate::results::{ClusterColumns, ContainedColumns, Ids, PairColumns};
use crate::texts::{self, Source};
use crate::threads::{self, Stop};

/// How a result is handed back: plain Python objects, or columns for NumPy.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    List,
    Columns,
    Survivors,
    /// The survivors' mask and their texts (from an Arrow stream, which cannot be read
    /// twice).
    SurvivorTexts,
    /// Per document: its cluster, the cluster's size, kept, duplicate of, similarity.
    Annotate,
}

impl Form {
    fn parse(form: &str, allowed: &[Form]) -> PyResult<Form> {
        let f = match form {
            "list" => Form::List,
            "columns" => Form::Columns,
            "survivors" => Form::Survivors,
            "survivor_texts" => Form::SurvivorTexts,
            "annotate" => Form::Annotate,
            _ => return Err(refused(format!("unknown result form {form:?}"))),
        };
        if allowed.contains(&f) {
            Ok(f)
        } else {
            Err(refused(format!("result form {form:?} does not apply here")))
        }
    }
}

/// A run's texts, handed to its intake a chunk at a time: held ones in chunks, an Arrow
/// stream as its producer gives it (each chunk dropped once shingled, unless `keep`).
pub struct Feed {
    source: Source,
    /// Keep the stream's chunks (for a dedup that hands back the surviving texts).
    keep: bool,
    kept: Vec<TextChunk>,
    documents: usize,
}

impl Feed {
    fn new(source: Source, keep: bool) -> Self {
        Feed {
            source,
            keep,
            kept: Vec::new(),
            documents: 0,
        }
    }

    /// Whether the run is worth watching for Ctrl-C (a stream's size is not known).
    fn worth_watching(&self) -> bool {
        match &self.source {
            Source::Held(texts) => {
                let texts = texts.as_slice();
                threads::worth_watching(texts.len(), threads::bytes_of(texts))
            }
            Source::Stream(_) => true,
        }
    }

    /// The number of texts, if known before the run.
    fn known_len(&self) -> Option<usize> {
        match &self.source {
            Source::Held(texts) => Some(texts.len()),
            Source::Stream(_) => None,
        }
    }

    /// Adds every text to `intake`, stopping between chunks if asked.
    fn add_to(&mut self, intake: &mut Intake<'_>, stop: &Stop) -> PyResult<()> {
        match &mut self.source {
            Source::Held(texts) => {
                for chunk in threads::text_chunks(texts.as_slice()) {
                    stop.checkpoint();
                    intake.add(chunk).map_err(core)?;
                }
                self.documents = texts.len();
            }
            Source::Stream(stream) => {
                while let Some(chunk) = stream.next_chunk() {
                    stop.checkpoint();
                    let chunk = chunk.map_err(refused)?;
                    let views = chunk.views();
                    for part in threads::text_chunks(&views) {
                        stop.checkpoint();
                        intake.add(part).map_err(core)?;
                    }
                    self.documents += views.len();
                    drop(views);
                    if self.keep {
                        self.kept.push(chunk);
                    }
                }
            }
        }
        Ok(())
    }

    /// The texts of the documents `mask` keeps, as `str`s, from the kept chunks.
    fn survivors<'py>(&self, py: Python<'py>, mask: &[bool]) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let take = |doc: usize, text: &str| -> PyResult<()> {
            if mask.get(doc).copied().unwrap_or(false) {
                out.append(PyString::new(py, text))?;
            }
            Ok(())
        };
        match &self.source {
            Source::Held(texts) => {
                for (doc, text) in texts.as_slice().iter().enumerate() {
                    take(doc, text)?;
                }
            }
            Source::Stream(_) => {
                let texts = self.kept.iter().flat_map(TextChunk::views);
                for (doc, text) in texts.enumerate() {
                    take(doc, text)?;
                }
            }
        }
        Ok(out)
    }
}

/// A run's inputs: a reference corpus, read first (its documents numbered before the
/// texts, never removed, always heading their clusters), and the texts.
pub struct Feeds {
    reference: Option<Feed>,
    texts: Feed,
}

impl Feeds {
    /// The texts (a table's `text_col`) and the reference (the same column if it is a
    /// table too); `keep`: keep a stream's chunks of texts (see [`Feed`]).
    fn open(
        texts: &Bound<'_, PyAny>,
        text_col: Option<&str>,
        reference: Option<&Bound<'_, PyAny>>,
        keep: bool,
    ) -> PyResult<Self> {
        let texts = Feed::new(texts::source(texts, text_col, "texts")?, keep);
        let reference = match reference {
            None => None,
            Some(r) => {
                let column = text_col.filter(|_| texts::is_stream(r).unwrap_or(false));
                Some(Feed::new(texts::source(r, column, "reference")?, false))
            }
        };
        Ok(Feeds { reference, texts })
    }

    /// The number of documents, if known before the run.
    fn known_len(&self) -> Option<usize> {
        let reference = self.reference.as_ref().map_or(Some(0), Feed::known_len)?;
        Some(reference + self.texts.known_len()?)
    }

    fn worth_watching(&self) -> bool {
        self.texts.worth_watching() || self.reference.as_ref().is_some_and(Feed::worth_watching)
    }

    /// Documents of the reference (read so far): the texts' numbers start here.
    fn reference_docs(&self) -> usize {
        self.reference.as_ref().map_or(0, |r| r.documents)
    }

    /// Documents read, the reference's included.
    fn documents(&self) -> usize {
        self.reference_docs() + self.texts.documents
    }
}

/// Reads the reference and the texts a batch at a time (stopping between batches if
/// asked), chooses the engine once, and makes the corpus ready for it: the one run seam
/// every run shares.
fn prepare<'p>(
    pipeline: &'p Pipeline,
    feeds: &mut Feeds,
    exact: bool,
    goal: Goal,
    stop: &Stop,
) -> PyResult<Ready<'p>> {
    let mut intake = pipeline.intake(None).map_err(core)?;
    if let Some(reference) = &mut feeds.reference {
        reference.add_to(&mut intake, stop)?;
    }
    feeds.texts.add_to(&mut intake, stop)?;
    let mut held = intake.finish().map_err(core)?;
    let reference = feeds.reference_docs();
    if reference > 0 {
        let n = u32::try_from(reference)
            .map_err(|_| refused(format!("{reference} reference texts: at most {}", u32::MAX)))?;
        held.set_reference(n).map_err(core)?;
    }
    let method = if exact { Method::Exact } else { Method::Lsh };
    let plan = RunPlan::choose(pipeline, &held, method, goal).map_err(core)?;
    pipeline
        .prepare(held, &plan, &mut stop.observer())
        .map_err(core)
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
) -> PyResult<neardup::Outcome> {
    match pipeline.run(ready, &mut stop.observer(), sink) {
        Ok((outcome, _)) => Ok(outcome),
        Err(RunError::Run(e)) => Err(core(e)),
        Err(RunError::Sink(never)) => match never {},
    }
}

/// What every run shares: the threads and inputs read (a stream as the run goes) and the
/// ids checked against them, then `work` on the inputs with the GIL released, on the
/// threads asked for, until it ends or Ctrl-C stops it.
fn released<'a, 'py, T: Send>(
    py: Python<'py>,
    config: &NativeConfig,
    mut feeds: Feeds,
    ids: Option<&'a Bound<'py, PyList>>,
    threads: Option<i64>,
    work: impl FnOnce(&Pipeline, &mut Feeds, &Stop) -> PyResult<T> + Send,
) -> PyResult<(Ids<'a, 'py>, T, Feeds)> {
    let threads = threads::parse(threads)?;
    if let Some(n) = feeds.known_len() {
        Ids::new(ids, n)?;
    }
    let pipeline = config.pipeline();
    let watch = feeds.worth_watching();
    let done =
        threads::interruptible(py, threads, watch, |stop| work(&pipeline, &mut feeds, stop))??;
    let ids = Ids::new(ids, feeds.documents())?;
    Ok((ids, done, feeds))
}

/// Every similar pair of `texts`, sorted by `(a, b)`; with a containment configuration,
/// every document `a` contained in a larger `b` (see [`run_contained`]).
#[pyfunction]
#[pyo3(signature = (config, texts, ids, exact, threads, form, text_col=None, reference=None))]
#[allow(clippy::too_many_arguments)]
pub fn run_pairs<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    texts: &Bound<'py, PyAny>,
    ids: Option<Bound<'py, PyList>>,
    exact: bool,
    threads: Option<i64>,
    form: &str,
    text_col: Option<&str>,
    reference: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let form = Form::parse(form, &[Form::List, Form::Columns])?;
    let feeds = Feeds::open(texts, text_col, reference.as_ref(), false)?;
    let (ids, columns, _) = released(
        py,
        config,
        feeds,
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
#[pyo3(signature = (config, texts, ids, exact, threads, form, text_col=None, reference=None))]
#[allow(clippy::too_many_arguments)]
pub fn run_clusters<'py>(
    py: Python<'py>,
    config: &NativeConfig,
    texts: &Bound<'py, PyAny>,
    ids: Option<Bound<'py, PyList>>,
    exact: bool,
    threads: Option<i64>,
    form: &str,
    text_col: Option<&str>,
    reference: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let form = Form::parse(
        form,
        &[
            Form::List,
            Form::Columns,
            Form::Survivors,
            Form::SurvivorTexts,
            Form::Annotate,
        ],
    )?;
    // A fragment inside two unrelated pages does not make the pages one cluster.
    config.refuse_containment(match form {
        Form::Survivors | Form::SurvivorTexts => "dedup",
        Form::Annotate => "annotate",
        _ => "clusters",
    })?;
    let feeds = Feeds::open(
        texts,
        text_col,
        reference.as_ref(),
        form == Form::SurvivorTexts,
    )?;
    let (ids, clusters, feeds) = released(
        py,
        config,
        feeds,
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
        Form::SurvivorTexts => {
            let mask = clusters.survivors().to_vec();
            let texts = feeds.texts.survivors(py, &mask)?;
            let mask = Bound::new(py, clusters.into_survivors())?.into_any();
            PyTuple::new(py, [mask, texts.into_any()])?.into_any()
        }
        Form::Annotate => clusters.into_annotations(py)?.into_any(),
    })
}
