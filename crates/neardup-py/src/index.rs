//! `neardup.Index`: the persistent index of `neardup-index` for Python.
//!
//! Changes are staged (`add`, `remove`) and made durable by `commit`, which takes the
//! index's writer lock only while it writes, so several processes can each hold an
//! `Index` of the same directory and commit in turn (the lock makes the others wait).
//! Queries read the last commit and notice a newer one, from any process, by the
//! manifest's file changing. A handle pickles as its path.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use neardup::Config;
use neardup_index::{Answer, IndexWriter, Kind, Neighbour, Outcome, Query, Searcher};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use rayon::prelude::*;

use crate::config::NativeConfig;
use crate::errors::{index as index_error, refused};
use crate::texts;
use crate::threads;

/// The file whose replacement is a commit (neardup-index's layout).
const MANIFEST: &str = "MANIFEST";

/// A staged text handed to the index's writer, which reads it only while it prepares the
/// documents of a commit, before it writes the manifest: reading it once Ctrl-C was
/// pressed unwinds out of the commit (see `threads::Stop::checkpoint`), leaving the index
/// at the commit before. The segment files the writer wrote meanwhile are named by no
/// manifest, and the next commit removes them.
struct Watched<'a> {
    text: &'a str,
    stop: &'a threads::Stop,
}

impl AsRef<str> for Watched<'_> {
    fn as_ref(&self) -> &str {
        self.stop.checkpoint();
        self.text
    }
}

/// A staged change.
enum Change {
    Add(Vec<(String, String)>),
    Remove(Vec<String>),
}

/// What the manifest file was when the searcher was opened: a commit replaces it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: u64,
}

fn stamp(dir: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(dir.join(MANIFEST)).ok()?;
    Some(Stamp {
        modified: m.modified().ok(),
        len: m.len(),
        #[cfg(unix)]
        inode: std::os::unix::fs::MetadataExt::ino(&m),
    })
}

struct State {
    searcher: Searcher,
    stamp: Option<Stamp>,
    staged: Vec<Change>,
}

impl State {
    /// Moves to the last commit if the manifest changed since the searcher was opened.
    fn refresh(&mut self, dir: &Path, force: bool) -> neardup_index::Result<()> {
        let now = stamp(dir);
        if force || now != self.stamp {
            self.searcher = self.searcher.reload()?;
            self.stamp = now;
        }
        Ok(())
    }

    fn staged_items(&self) -> usize {
        self.staged
            .iter()
            .map(|c| match c {
                Change::Add(d) => d.len(),
                Change::Remove(ids) => ids.len(),
            })
            .sum()
    }
}

/// A persistent near-duplicate index in a directory.
#[pyclass(frozen, module = "neardup", name = "Index")]
pub struct Index {
    path: PathBuf,
    state: Mutex<State>,
}

/// What one commit did.
#[derive(Default)]
struct Report {
    added: usize,
    replaced: usize,
    superseded: usize,
    removed: usize,
    missing: Vec<String>,
    empty: Vec<String>,
    merge_failed: Option<String>,
}

/// True if an id is in more than one of `batches`.
fn shares_ids<T>(batches: &[Vec<(&str, T)>]) -> bool {
    let mut owner: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    batches.iter().enumerate().any(|(b, batch)| {
        batch
            .iter()
            .any(|(id, _)| *owner.entry(id).or_insert(b) != b)
    })
}

impl Report {
    /// Counts what became of each document of `batches` (`outcomes`, batch by batch, as
    /// [`IndexWriter::add_batches`] gives them).
    fn count<T>(&mut self, batches: &[Vec<(&str, T)>], outcomes: &[Vec<Outcome>]) {
        for (batch, outcomes) in batches.iter().zip(outcomes) {
            for ((id, _), outcome) in batch.iter().zip(outcomes) {
                match outcome {
                    Outcome::Added { replaced } => {
                        self.added += 1;
                        self.replaced += usize::from(*replaced);
                    }
                    Outcome::Superseded => self.superseded += 1,
                    Outcome::Empty => self.empty.push((*id).to_string()),
                    // add_batches checks no similarity: nothing is a duplicate.
                    Outcome::Duplicate { .. } => {}
                }
            }
        }
    }
}

/// How long a writer waits for the lock between two checks for Ctrl-C.
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// True if another writer (a server, another process) holds the index's lock now.
fn writer_busy(dir: &Path) -> bool {
    matches!(
        IndexWriter::open_within(dir, Some(std::time::Duration::ZERO)),
        Err(neardup_index::Error::Locked { .. })
    )
}

/// Opens the index's writer, waiting for another writer as long as it takes, checking for
/// Ctrl-C while it waits.
fn open_writer(dir: &Path, stop: &threads::Stop) -> neardup_index::Result<IndexWriter> {
    loop {
        stop.checkpoint();
        match IndexWriter::open_within(dir, Some(LOCK_POLL)) {
            Err(neardup_index::Error::Locked { .. }) => continue,
            other => return other,
        }
    }
}

/// Opens the index in `dir`, creating it with `config` (or the defaults) if there is none.
fn open_or_create(dir: &Path, config: Option<&Config>) -> neardup_index::Result<Searcher> {
    if !dir.join(MANIFEST).exists() {
        let default;
        let config = match config {
            Some(c) => c,
            None => {
                default = Config::builder().build()?;
                &default
            }
        };
        match IndexWriter::create(dir, config) {
            Ok(writer) => drop(writer),
            // Another process made it meanwhile: open it as it is.
            Err(neardup_index::Error::AlreadyExists(_)) => {}
            Err(e) => return Err(e),
        }
    }
    match config {
        Some(c) => Searcher::open_with(dir, c),
        None => Searcher::open(dir),
    }
}

impl Index {
    /// The state. Taken only without the GIL (`py.detach`): a commit holds it while it
    /// waits for the writer lock and writes, and a thread waiting for it must not stop
    /// every other Python thread meanwhile.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `(id, similarity)` each; in a containment index `(id, containment, inside,
    /// jaccard)`, `inside` naming which one is inside the other (`"query"`, `"document"`).
    fn neighbours<'py>(py: Python<'py>, found: &[Neighbour<'_>]) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for n in found {
            match n.containment {
                Some(c) => list.append((n.id, c.value, c.inside.name(), n.similarity.jaccard))?,
                None => list.append((n.id, n.similarity.value()))?,
            }
        }
        Ok(list)
    }

    /// A query's answer: for neighbours, as `neighbours` gives them.
    fn answer<'py>(py: Python<'py>, answer: &Answer<'_>) -> PyResult<Bound<'py, PyAny>> {
        match answer {
            Answer::Neighbours(found) => Ok(Index::neighbours(py, found)?.into_any()),
        }
    }

    fn query_of(kind: &str, threshold: Option<f64>, top: Option<i64>) -> PyResult<Query> {
        let kind = Kind::named(kind).ok_or_else(|| {
            let names: Vec<&str> = Kind::names().collect();
            refused(format!("kind {kind:?}: one of {}", names.join(", ")))
        })?;
        let mut q = Query::new().kind(kind);
        let top = top
            .map(|k| {
                usize::try_from(k).map_err(|_| refused(format!("top must be 0 or more, got {k}")))
            })
            .transpose()?;
        if let Some(t) = threshold {
            q = q.threshold(t);
        }
        if let Some(k) = top {
            q = q.top(k);
        }
        Ok(q)
    }
}

/// Ids from Python: one str, or a sequence of str.
fn ids_of(ids: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(one) = ids.cast::<PyString>() {
        return Ok(vec![texts::utf8_of(one.as_any())?.to_string()]);
    }
    ids.extract::<Vec<String>>()
}

#[pymethods]
impl Index {
    /// Opens the index in the directory `path`, creating it (pinned to `config`, or to the
    /// defaults) if there is none. An existing index is checked against `config` when one
    /// is given: each differing parameter is named. A directory that holds other files
    /// and no index is refused (`IndexFileError`): none of them is taken for the index's.
    #[new]
    #[pyo3(signature = (path, config=None))]
    fn new(py: Python<'_>, path: PathBuf, config: Option<&Bound<'_, PyAny>>) -> PyResult<Index> {
        let native: Option<PyRef<'_, NativeConfig>> = match config {
            None => None,
            Some(c) => Some(match c.cast::<NativeConfig>() {
                Ok(n) => n.borrow(),
                Err(_) => c.getattr("_native")?.extract()?,
            }),
        };
        let config = native.as_ref().map(|n| n.config().clone());
        // Absolute: the handle keeps working after a change of directory, and a pickled
        // one names the same index in a process started elsewhere.
        let path = std::path::absolute(&path).map_err(|e| {
            crate::errors::IndexFileError::new_err(format!("{}: {e}", path.display()))
        })?;
        let searcher = py
            .detach(|| open_or_create(&path, config.as_ref()))
            .map_err(index_error)?;
        Ok(Index {
            state: Mutex::new(State {
                searcher,
                stamp: stamp(&path),
                staged: Vec::new(),
            }),
            path,
        })
    }

    /// Stages documents to add: `texts` (as the runs take them) under `ids` (str, one per
    /// text). A document whose id is indexed replaces it; within what is staged, the last
    /// of an id wins. Nothing changes on disk until `commit`.
    fn add(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let texts = texts::read(texts, "texts")?;
        let ids = ids_of(ids)?;
        if ids.len() != texts.len() {
            return Err(refused(format!(
                "{} ids for {} texts: give one id per text",
                ids.len(),
                texts.len()
            )));
        }
        // Refused here rather than by the commit, which would fail with it everything
        // staged since.
        if let Some(i) = ids.iter().position(String::is_empty) {
            return Err(refused(format!(
                "ids[{i}] is the empty string: a document needs an id to be fetched or removed by"
            )));
        }
        // The texts are copied (they are written at the commit), and the lock waited for
        // (a commit may hold it), without the GIL.
        py.detach(|| {
            let docs = ids
                .into_iter()
                .zip(texts.as_slice())
                .map(|(id, t)| (id, t.to_string()))
                .collect();
            self.lock().staged.push(Change::Add(docs));
        });
        Ok(())
    }

    /// Stages the removal of documents by id (one str, or several).
    fn remove(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = ids_of(ids)?;
        py.detach(|| self.lock().staged.push(Change::Remove(ids)));
        Ok(())
    }

    /// Makes the staged changes durable, in the order they were staged (each run of adds
    /// or of removals is one atomic commit), and returns what they did: `added`,
    /// `replaced`, `removed`, the ids `missing` from the index and those `empty` (texts
    /// with no shingles, not added).
    fn commit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        // Ctrl-C stops it before a commit or while one prepares its documents, before
        // anything of that commit is in the manifest: the commits made stand, the rest
        // stays staged. (A few documents, which cannot take long, are not watched.)
        let watch = py.detach(|| {
            let state = self.lock();
            let bytes = state
                .staged
                .iter()
                .map(|c| match c {
                    Change::Add(d) => d.iter().map(|(_, t)| t.len()).sum(),
                    Change::Remove(_) => 0,
                })
                .sum();
            threads::worth_watching(state.staged_items(), bytes)
        }) || writer_busy(&self.path);
        let report =
            threads::interruptible(py, None, watch, |stop| -> neardup_index::Result<Report> {
                let mut state = self.lock();
                let mut report = Report::default();
                if state.staged.is_empty() {
                    return Ok(report);
                }
                let mut writer = open_writer(&self.path, stop)?;
                while !state.staged.is_empty() {
                    stop.checkpoint();
                    // Consecutive changes of one kind go in one commit.
                    let first_add = matches!(state.staged[0], Change::Add(_));
                    let run = state
                        .staged
                        .iter()
                        .take_while(|c| matches!(c, Change::Add(_)) == first_add)
                        .count();
                    // Borrowed, and unstaged once committed: an interrupted commit leaves them.
                    let changes = &state.staged[..run];
                    let done = if first_add {
                        let batches: Vec<Vec<(&str, Watched<'_>)>> = changes
                            .iter()
                            .map(|c| match c {
                                Change::Add(d) => d
                                    .iter()
                                    .map(|(id, text)| (id.as_str(), Watched { text, stop }))
                                    .collect(),
                                Change::Remove(_) => unreachable!("a run of adds"),
                            })
                            .collect();
                        if shares_ids(&batches) {
                            // Each staged add applies in order, as if committed one after
                            // another: a later empty text of an id does not undo an
                            // earlier add of it. (Texts are taken up front here, so
                            // Ctrl-C waits for this commit.)
                            writer
                                .add_batches(&batches)
                                .map(|outcomes| report.count(&batches, &outcomes))
                        } else {
                            // No id in two staged adds: one add is the same, and watches
                            // for Ctrl-C as it reads each text.
                            let docs: Vec<(&str, Watched<'_>)> =
                                batches.into_iter().flatten().collect();
                            writer.add(&docs).map(|r| {
                                report.added += r.added;
                                report.replaced += r.replaced;
                                report.superseded += r.superseded;
                                report.empty.extend(r.empty);
                            })
                        }
                    } else {
                        let ids: Vec<&str> = changes
                            .iter()
                            .flat_map(|c| match c {
                                Change::Remove(ids) => ids,
                                Change::Add(_) => unreachable!("a run of removals"),
                            })
                            .map(String::as_str)
                            .collect();
                        writer.remove(&ids).map(|r| {
                            report.removed += r.removed;
                            report.missing.extend(r.missing);
                        })
                    };
                    state.staged.drain(..run);
                    done?;
                    // The change stands; a merge that failed after it is retried later.
                    report.merge_failed = writer.merge_failure().map(str::to_string);
                }
                drop(writer);
                state.refresh(&self.path, true)?;
                Ok(report)
            });
        let report = report?.map_err(index_error)?;
        let d = PyDict::new(py);
        d.set_item("added", report.added)?;
        d.set_item("replaced", report.replaced)?;
        d.set_item("superseded", report.superseded)?;
        d.set_item("removed", report.removed)?;
        d.set_item("missing", report.missing)?;
        d.set_item("empty", report.empty)?;
        d.set_item("merge_failed", report.merge_failed)?;
        Ok(d)
    }

    /// Drops the staged changes.
    fn discard(&self, py: Python<'_>) {
        py.detach(|| self.lock().staged.clear());
    }

    /// Documents and ids staged and not yet committed.
    #[getter]
    fn pending(&self, py: Python<'_>) -> usize {
        py.detach(|| self.lock().staged_items())
    }

    /// The indexed documents similar to `text`, most similar first (ties by id), as
    /// `(id, similarity)` (in a containment index `(id, containment, inside, jaccard)`,
    /// the most contained first); for a list of texts, one such list per text, answered in
    /// parallel. `threshold` may ask for more than the index's, never less; `top` keeps the
    /// most similar. `kind` names what to answer (the index's query kinds).
    #[pyo3(signature = (texts, *, kind="neighbours", threshold=None, top=None))]
    fn query<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        kind: &str,
        threshold: Option<f64>,
        top: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let one = texts.is_instance_of::<PyString>();
        let texts = if one {
            texts::read(PyList::new(py, [texts])?.as_any(), "texts")?
        } else {
            texts::read(texts, "texts")?
        };
        let query = Index::query_of(kind, threshold, top)?;
        let searcher = self.searcher(py)?;
        let texts = texts.as_slice();
        let watch = threads::worth_watching(texts.len(), threads::bytes_of(texts));
        // A chunk at a time, so Ctrl-C stops it between two.
        let found = threads::interruptible(py, None, watch, |stop| {
            let mut found = Vec::with_capacity(texts.len());
            for chunk in threads::text_chunks(texts) {
                stop.checkpoint();
                let part = chunk
                    .par_iter()
                    .map(|t| searcher.answer(t, &query))
                    .collect::<neardup_index::Result<Vec<_>>>()?;
                found.extend(part);
            }
            Ok(found)
        })?;
        let found = found.map_err(index_error)?;
        if one {
            return Index::answer(py, &found[0]);
        }
        let out = PyList::empty(py);
        for f in &found {
            out.append(Index::answer(py, f)?)?;
        }
        Ok(out.into_any())
    }

    /// The neighbours of the indexed document `id` (itself left out), as `query` gives
    /// them; `None` if no document has that id.
    #[pyo3(signature = (id, *, kind="neighbours", threshold=None, top=None))]
    fn query_id<'py>(
        &self,
        py: Python<'py>,
        id: String,
        kind: &str,
        threshold: Option<f64>,
        top: Option<i64>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let query = Index::query_of(kind, threshold, top)?;
        let searcher = self.searcher(py)?;
        let found =
            threads::detached(py, || searcher.answer_id(&id, &query))?.map_err(index_error)?;
        found.map(|f| Index::answer(py, &f)).transpose()
    }

    /// Merges every segment into one and drops deleted documents (one commit). Staged
    /// changes stay staged.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        // Watched while another writer keeps it waiting: Ctrl-C stops the wait.
        let watch = writer_busy(&self.path);
        threads::interruptible(py, None, watch, |stop| -> neardup_index::Result<()> {
            let mut state = self.lock();
            open_writer(&self.path, stop)?.compact()?;
            state.refresh(&self.path, true)
        })?
        .map_err(index_error)
    }

    /// Moves to the last commit now (queries do it when they notice one).
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.lock().refresh(&self.path, true))
            .map_err(index_error)
    }

    /// Live documents in the last commit.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.searcher(py)?.len() as usize)
    }

    fn __contains__(&self, py: Python<'_>, id: String) -> PyResult<bool> {
        Ok(self.searcher(py)?.contains(&id))
    }

    /// The ids of the live documents.
    fn ids(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self.searcher(py)?.ids().map(str::to_string).collect())
    }

    /// Counts and sizes: documents, deleted, segments, bytes, set_bytes, sets, generation,
    /// format.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.searcher(py)?.stats();
        let d = PyDict::new(py);
        d.set_item("documents", s.documents)?;
        d.set_item("deleted", s.deleted)?;
        d.set_item("segments", s.segments)?;
        d.set_item("bytes", s.bytes)?;
        d.set_item("set_bytes", s.set_bytes)?;
        d.set_item("sets", s.sets)?;
        d.set_item("generation", s.generation)?;
        d.set_item("format", s.format)?;
        Ok(d)
    }

    /// The parameters the index is pinned to, as `neardup.Config` takes them.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let searcher = self.searcher(py)?;
        let p = searcher.params();
        let d = PyDict::new(py);
        d.set_item("shingle", &p.shingle)?;
        d.set_item("normalize", &p.normalization)?;
        d.set_item("max_shingles", p.max_shingles)?;
        d.set_item("num_perm", p.num_perm)?;
        d.set_item("sketch", &p.sketch)?;
        d.set_item("seed", p.seed)?;
        d.set_item("threshold", p.threshold)?;
        // A containment index has no one band plan: its rows depend on the sizes compared.
        if searcher.is_containment() {
            d.set_item("measure", &p.measure)?;
        } else {
            d.set_item("bands", p.bands)?;
            d.set_item("rows", p.rows)?;
        }
        d.set_item("multiset", p.multiset)?;
        Ok(d)
    }

    /// The commit the index is at.
    #[getter]
    fn generation(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.searcher(py)?.generation())
    }

    /// The index's directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Commits the staged changes when the block ends normally, drops them when it
    /// raises.
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        match exc_type {
            Some(t) if !t.is_none() => self.discard(py),
            _ => {
                self.commit(py)?;
            }
        }
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        py.detach(|| {
            let state = self.lock();
            format!(
                "Index({:?}, documents={}, generation={}, pending={})",
                self.path.display().to_string(),
                state.searcher.len(),
                state.searcher.generation(),
                state.staged_items()
            )
        })
    }

    /// Pickles as its path: the process that unpickles it opens the same directory.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let me = slf.get();
        if me.pending(slf.py()) > 0 {
            return Err(refused(
                "this Index has staged changes: commit() or discard() them before pickling (they would not travel)",
            ));
        }
        let args = PyTuple::new(slf.py(), [me.path.clone()])?;
        Ok((slf.get_type().into_any(), args))
    }
}

impl Index {
    /// The searcher of the last commit.
    fn searcher(&self, py: Python<'_>) -> PyResult<Searcher> {
        py.detach(|| -> neardup_index::Result<Searcher> {
            let mut state = self.lock();
            state.refresh(&self.path, false)?;
            Ok(state.searcher.clone())
        })
        .map_err(index_error)
    }
}
