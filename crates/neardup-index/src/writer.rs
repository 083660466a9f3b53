//! Writing an index: one writer at a time (across processes), each change one durable
//! commit.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use neardup::candidates::TokenCounter;
use neardup::corpus::set_fingerprint;
use neardup::sketch::{DocSet, DocSketch};
use neardup::{Config, Pipeline, Similarity};

use crate::deletes::Deletes;
use crate::error::{io_at, Error, Result};
use crate::files::{
    belongs_to_index, deletes_name, is_index_file, remove_files, segment_name, sync_dir,
    WriterLock, LOCK, MANIFEST, MANIFEST_TMP,
};
use crate::manifest::{Manifest, SegmentMeta};
use crate::parallel;
use crate::params::Params;
use crate::searcher::{check_params, family_mask, index_keys, shared_family, Probe, Searcher};
use crate::segment::{SegmentData, MAX_ARENA};
use crate::state::State;

/// Documents per segment written by one `add` (a larger batch becomes several).
const SEGMENT_DOCS: usize = 1 << 21;
/// Segments of a similar size (the same power of 4) merged into one once there are this
/// many: a query probes each segment, so their number stays logarithmic.
const MERGE_FACTOR: usize = 4;
/// Documents shingled and sketched at a time (in parallel) while a batch is added: the
/// batch is never held whole in that form.
const PREPARE_CHUNK: usize = 1 << 16;

/// What an [`IndexWriter::add`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddReport {
    /// Documents added (live after the commit: one per distinct id of the batch).
    pub added: usize,
    /// Of those, how many replaced an indexed document with the same id.
    pub replaced: usize,
    /// Documents of the batch not added because a later one of the batch has the same id
    /// (the last one wins).
    pub superseded: usize,
    /// Ids of the documents not added because their text has no shingles (they would
    /// match nothing); a document indexed under the same id stays as it was.
    pub empty: Vec<String>,
    /// In a containment index's first add: the distinct shingle sets its common tokens
    /// were learned from (the fewer, the less a token's share tells; see
    /// [`COMMON_SAMPLE`]).
    pub common_learned_from: Option<u64>,
}

/// The most documents of the first add a containment index learns its common tokens from:
/// evenly spaced through the batch. A token held by 1 % of a hundred thousand documents
/// is met a thousand times, and counting every distinct shingle of a large build would
/// hold them all in memory.
pub const COMMON_SAMPLE: usize = 100_000;

/// What [`IndexWriter::add_unique`] did with one document.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Added: no indexed document and no earlier one of the batch is similar to it.
    Added {
        /// It replaced an indexed document with the same id.
        replaced: bool,
    },
    /// Not added: it is a near-duplicate of a document kept before it.
    Duplicate {
        /// The id of the most similar such document (the earliest among equals).
        of: String,
        /// How similar.
        similarity: Similarity,
        /// True if that document was already indexed; false if it came earlier in the
        /// same batch.
        indexed: bool,
    },
    /// Not added: its text has no shingles.
    Empty,
    /// Not added: a later document of the batch has the same id and was added in its
    /// place (the last of an id wins, as in [`IndexWriter::add`]).
    Superseded,
}

/// What an [`IndexWriter::remove`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemoveReport {
    /// Documents removed.
    pub removed: usize,
    /// Ids asked for that no live document has (each once, in the order first asked).
    pub missing: Vec<String>,
    /// Ids asked for more than once: counted once.
    pub repeated: usize,
}

/// The judgement of [`IndexWriter::judge_unique`]: what each document of a batch would
/// become, ready to commit with [`IndexWriter::commit_unique`]. Nothing is written until
/// then, so a caller can first put the outcomes somewhere safe (a file) and commit only
/// once that worked.
pub struct UniqueBatch {
    outcomes: Vec<Outcome>,
    prepared: Vec<Prepared>,
    kept: Vec<usize>,
    /// The commit the judgement was made against.
    generation: u64,
}

impl UniqueBatch {
    /// What each document becomes, in batch order.
    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }
}

impl std::fmt::Debug for UniqueBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UniqueBatch")
            .field("outcomes", &self.outcomes)
            .field("generation", &self.generation)
            .finish()
    }
}

/// Where the indexed document with the same id is, if any: (segment, document).
type Found = Option<(usize, u32)>;

/// A document shingled and sketched, ready to be added or compared.
#[derive(Clone)]
struct Prepared {
    id: String,
    doc: DocSet,
    sketch: DocSketch,
}

impl Prepared {
    fn new(pipeline: &Pipeline, id: &str, text: &str, common: &[u64]) -> Prepared {
        Prepared::of(pipeline, id, pipeline.shingle_doc(text), common)
    }

    /// A document already shingled, sketched.
    fn of(pipeline: &Pipeline, id: &str, doc: DocSet, common: &[u64]) -> Prepared {
        // Verification is exact: the band keys are all the index needs of the sketch.
        let sketch = index_keys(pipeline, &doc, common);
        Prepared {
            id: id.to_string(),
            doc,
            sketch,
        }
    }

    fn is_empty(&self) -> bool {
        self.doc.set().is_empty()
    }

    fn probe(&self) -> Probe<'_> {
        Probe {
            set: self.doc.set(),
            whole: self.doc.whole_signature(),
            sketch: &self.sketch,
        }
    }
}

/// The one writer of an index. It holds the directory's lock until dropped; readers
/// ([`Searcher`]) in any thread or process go on reading the last commit meanwhile.
///
/// Every change (`add`, `add_unique`, `remove`, `compact`) is one commit and returns only
/// once it is durable: after a crash the index holds all of it or none of it.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// use neardup_index::{IndexWriter, Outcome};
/// let config = neardup::Config::builder().threshold(0.8).build()?;
/// let mut writer = IndexWriter::create(dir.path(), &config)?;
/// writer.add(&[("1", "Handmade oak dining table, seats six, excellent condition")])?;
/// let outcomes = writer.add_unique(&[
///     ("2", "Handmade oak dining table, seats six - excellent condition"),
///     ("3", "Set of four ladder-back chairs in beech"),
/// ])?;
/// assert!(matches!(&outcomes[0], Outcome::Duplicate { of, indexed: true, .. } if of == "1"));
/// assert_eq!(outcomes[1], Outcome::Added { replaced: false });
/// assert_eq!(writer.searcher().len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct IndexWriter {
    dir: PathBuf,
    current: Searcher,
    /// A commit failed after its manifest was in place and the state could not be read
    /// back (see `commit`).
    failed: bool,
    /// Why the last merge after a change failed, until one succeeds.
    merge_failure: Option<String>,
    _lock: WriterLock,
}

impl std::fmt::Debug for IndexWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexWriter")
            .field("current", &self.current)
            .finish()
    }
}

impl IndexWriter {
    /// Creates an empty index in `dir` (made if missing), pinned to `config`'s shingling,
    /// sketch and band plan. A directory that already holds an index is refused, unless
    /// that index never committed a change (a build that died before its commit).
    pub fn create(dir: impl AsRef<Path>, config: &Config) -> Result<IndexWriter> {
        IndexWriter::create_within(dir, config, None)
    }

    /// [`create`](IndexWriter::create), waiting at most `wait` for another writer of the
    /// directory (`None`: as long as it takes): [`Error::Locked`] after that.
    ///
    /// A directory holding anything but an index's own files is refused
    /// ([`Error::NotEmpty`]): a writer removes the files of its own that no commit names,
    /// and must never mistake a user's file for one.
    pub fn create_within(
        dir: impl AsRef<Path>,
        config: &Config,
        wait: Option<Duration>,
    ) -> Result<IndexWriter> {
        if !config.sketch().is_minhash() {
            // The index looks documents up by their MinHash bands.
            return Err(neardup::Error::NotForSimHash("an index").into());
        }
        let dir = dir.as_ref();
        fs::create_dir_all(dir).map_err(io_at(dir))?;
        refuse_foreign_files(dir)?;
        let lock = WriterLock::acquire(dir, wait)?;
        // An index that never committed anything (its creator died before its first
        // commit) holds nothing to keep: it is created anew.
        if dir.join(MANIFEST).exists() && Manifest::read(dir).map_or(true, |m| m.generation > 0) {
            return Err(Error::AlreadyExists(dir.to_path_buf()));
        }
        let params = Params::of(config);
        let pipeline = Pipeline::new(params.config()?)?;
        // A containment index keeps its tables as one family.
        let families = if config.measure().from_smaller() {
            1
        } else {
            pipeline.families()
        };
        let mut manifest = Manifest::new(params, families);
        manifest.write(dir)?;
        sync_dir(dir)?;
        IndexWriter::with_lock(dir, lock)
    }

    /// Opens the index in `dir` for writing, waiting for another writer to finish.
    pub fn open(dir: impl AsRef<Path>) -> Result<IndexWriter> {
        IndexWriter::open_within(dir, None)
    }

    /// [`open`](IndexWriter::open), waiting at most `wait` for another writer (`None`: as
    /// long as it takes; `Some(Duration::ZERO)`: not at all): [`Error::Locked`] after that,
    /// naming the process that holds the lock when it can.
    pub fn open_within(dir: impl AsRef<Path>, wait: Option<Duration>) -> Result<IndexWriter> {
        let dir = dir.as_ref();
        if !dir.join(MANIFEST).exists() {
            return Err(Error::NotAnIndex(dir.to_path_buf()));
        }
        let lock = WriterLock::acquire(dir, wait)?;
        IndexWriter::with_lock(dir, lock)
    }

    /// Opens the index for writing, refusing it if it was built with other parameters
    /// than `config`'s (each difference is named).
    pub fn open_with(dir: impl AsRef<Path>, config: &Config) -> Result<IndexWriter> {
        let writer = IndexWriter::open(dir.as_ref())?;
        check_params(dir.as_ref(), writer.current.params(), config)?;
        Ok(writer)
    }

    fn with_lock(dir: &Path, lock: WriterLock) -> Result<IndexWriter> {
        let current = Searcher::open(dir)?;
        let writer = IndexWriter {
            dir: dir.to_path_buf(),
            current,
            failed: false,
            merge_failure: None,
            _lock: lock,
        };
        writer.remove_orphans()?;
        Ok(writer)
    }

    /// Removes what an interrupted commit left: files the manifest does not name.
    fn remove_orphans(&self) -> Result<()> {
        let named = self.current.state.manifest.files();
        let entries = fs::read_dir(&self.dir).map_err(io_at(&self.dir))?;
        let orphans = entries.filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            (is_index_file(&name) && !named.contains(&name)).then_some(name)
        });
        remove_files(&self.dir, orphans.collect::<Vec<_>>());
        Ok(())
    }

    /// The last committed state, for queries (clone it to keep it past the next change).
    pub fn searcher(&self) -> &Searcher {
        &self.current
    }

    /// Adds documents, `(id, text)`, in one durable commit. A document whose id is
    /// indexed replaces that document; within the batch the last of an id wins.
    pub fn add<I, T>(&mut self, docs: &[(I, T)]) -> Result<AddReport>
    where
        I: AsRef<str> + Sync,
        T: AsRef<str> + Sync,
    {
        self.usable()?;
        let ids: Vec<&str> = docs.iter().map(|(id, _)| id.as_ref()).collect();
        refuse_empty_ids(ids.iter().copied())?;
        let pipeline = Arc::clone(&self.current.pipeline);
        let learned = self.learn_common(docs)?;
        let common = learned
            .as_ref()
            .map(|(tokens, _)| Arc::clone(tokens))
            .unwrap_or_else(|| Arc::clone(&self.current.state.common));
        let count = learned.as_ref().map(|(tokens, _)| tokens.len() as u64);
        let mut report = self.commit_docs(&ids, count, |i| {
            Cow::Owned(Prepared::new(
                &pipeline,
                ids[i],
                docs[i].1.as_ref(),
                &common,
            ))
        })?;
        report.common_learned_from = learned.map(|(_, from)| from);
        Ok(report)
    }

    /// Adds several batches in one durable commit, each as if [`add`](IndexWriter::add)ed
    /// after the ones before it, and says what became of each document, batch by batch
    /// (never [`Outcome::Duplicate`]): a batch's last document of an id is its word on
    /// that id (the others are [`Outcome::Superseded`]); an empty word leaves the id as it
    /// was ([`Outcome::Empty`]), so an id ends as the last non-empty word on it said, and a
    /// word replaces if the id was live before its batch.
    ///
    /// A containment index learns its common tokens from the first add that commits: until
    /// one has, each batch is a commit of its own, as it would be alone. An error may come
    /// after such a commit; nothing of the batches after it is committed then.
    pub fn add_batches<B, I, T>(&mut self, batches: &[B]) -> Result<Vec<Vec<Outcome>>>
    where
        B: AsRef<[(I, T)]>,
        I: AsRef<str> + Sync,
        T: AsRef<str> + Sync,
    {
        self.usable()?;
        for batch in batches {
            refuse_empty_ids(batch.as_ref().iter().map(|(id, _)| id.as_ref()))?;
        }
        let mut outcomes = Vec::with_capacity(batches.len());
        let mut rest = batches;
        while let [first, tail @ ..] = rest {
            if !self.learns_common() {
                break;
            }
            outcomes.extend(self.add_together(&as_strs(std::slice::from_ref(first)))?);
            rest = tail;
        }
        if !rest.is_empty() {
            outcomes.extend(self.add_together(&as_strs(rest))?);
        }
        Ok(outcomes)
    }

    /// True while the next add would learn a containment index's common tokens.
    fn learns_common(&self) -> bool {
        let manifest = &self.current.state.manifest;
        self.current.is_containment() && manifest.common.is_none() && manifest.segments.is_empty()
    }

    /// [`add_batches`](IndexWriter::add_batches) in one commit.
    fn add_together(&mut self, batches: &[Vec<(&str, &str)>]) -> Result<Vec<Vec<Outcome>>> {
        let docs: Vec<(&str, &str)> = batches.iter().flatten().copied().collect();
        let learned = self.learn_common(&docs)?;
        let count = learned.as_ref().map(|(tokens, _)| tokens.len() as u64);
        let common = learned
            .map(|(tokens, _)| tokens)
            .unwrap_or_else(|| Arc::clone(&self.current.state.common));
        let pipeline = Arc::clone(&self.current.pipeline);
        let words = Words::of(batches);
        // Only the words on an id said by several batches need their emptiness known
        // before the commit: they are shingled here (only the last non-empty one of an id
        // is sketched).
        let early: HashMap<usize, DocSet> = {
            let repeated = words.repeated(&docs);
            let sets = parallel::map(&repeated, |&w| pipeline.shingle_doc(docs[w].1));
            repeated.into_iter().zip(sets).collect()
        };
        let known_empty = |w: usize| early.get(&w).is_some_and(|d| d.set().is_empty());
        let mut last_word: HashMap<&str, usize> = HashMap::new();
        for &w in words.all.iter().filter(|&&w| !known_empty(w)) {
            last_word.insert(docs[w].0, w);
        }
        let finals: Vec<usize> = (words.all.iter().copied())
            .filter(|&w| last_word.get(docs[w].0) == Some(&w))
            .collect();
        drop(last_word);
        let ids: Vec<&str> = finals.iter().map(|&w| docs[w].0).collect();
        let before = Arc::clone(&self.current.state);
        let report = self.commit_docs(&ids, count, |k| {
            let w = finals[k];
            Cow::Owned(match early.get(&w) {
                Some(doc) => Prepared::of(&pipeline, docs[w].0, doc.clone(), &common),
                None => Prepared::new(&pipeline, docs[w].0, docs[w].1, &common),
            })
        })?;
        // A final word the commit found empty was the only word on its id.
        let empty: HashSet<&str> = report.empty.iter().map(String::as_str).collect();
        let mut live: HashSet<&str> = HashSet::new();
        let mut outcomes: Vec<Outcome> = vec![Outcome::Superseded; docs.len()];
        for &w in &words.all {
            let id = docs[w].0;
            outcomes[w] = if known_empty(w) || (!early.contains_key(&w) && empty.contains(id)) {
                Outcome::Empty
            } else {
                let replaced = live.contains(id) || before.find(id).is_some();
                live.insert(id);
                Outcome::Added { replaced }
            };
        }
        let mut outcomes = outcomes.into_iter();
        Ok(batches
            .iter()
            .map(|b| outcomes.by_ref().take(b.len()).collect())
            .collect())
    }

    /// A containment index's common tokens, learned from its first documents and written
    /// (the commit that adds them names the file), with the number of distinct sets they
    /// were learned from; `None` once learned, or for Jaccard.
    fn learn_common<I, T>(&self, docs: &[(I, T)]) -> Result<Option<(Arc<Vec<u64>>, u64)>>
    where
        I: AsRef<str> + Sync,
        T: AsRef<str> + Sync,
    {
        // An index with documents but no tokens (none could be learned) stays without:
        // its stored keys were signed without any.
        if !self.learns_common() {
            return Ok(None);
        }
        let pipeline = self.current.pipeline();
        let step = docs.len().div_ceil(COMMON_SAMPLE).max(1);
        let sample: Vec<&(I, T)> = docs.iter().step_by(step).collect();
        let mut counter = TokenCounter::new();
        // Copies count once, as in the batch search (which counts distinct sets).
        let mut seen: HashSet<u128> = HashSet::new();
        // A chunk at a time, so the batch's sets are never all held at once.
        for chunk in sample.chunks(PREPARE_CHUNK) {
            let sets: Vec<DocSet> =
                parallel::map(chunk, |(_, text)| pipeline.shingle_doc(text.as_ref()));
            let sets: Vec<&[u64]> = sets
                .iter()
                .map(DocSet::set)
                .filter(|s| !s.is_empty() && seen.insert(set_fingerprint(s)))
                .collect();
            counter.add(&sets);
        }
        let tokens = counter.common();
        crate::common::write(&self.dir, &tokens)?;
        Ok(Some((Arc::new(tokens), seen.len() as u64)))
    }

    /// Adds each document that is not a near-duplicate of an indexed document or of one
    /// added before it in the batch, in one durable commit, and says what it did with
    /// each, in order. A document is not compared with the indexed document it would
    /// replace (same id).
    pub fn add_unique<I, T>(&mut self, docs: &[(I, T)]) -> Result<Vec<Outcome>>
    where
        I: AsRef<str> + Sync,
        T: AsRef<str> + Sync,
    {
        let batch = self.judge_unique(docs)?;
        self.commit_unique(batch)
    }

    /// The first half of [`add_unique`](IndexWriter::add_unique): decides what each
    /// document becomes against the last commit, and writes nothing.
    pub fn judge_unique<I, T>(&self, docs: &[(I, T)]) -> Result<UniqueBatch>
    where
        I: AsRef<str> + Sync,
        T: AsRef<str> + Sync,
    {
        self.usable()?;
        if self.current.is_containment() {
            return Err(Error::NotForContainment(
                "adding only the documents that are new",
            ));
        }
        refuse_empty_ids(docs.iter().map(|(id, _)| id.as_ref()))?;
        let prepared = self.prepare(docs);
        let searcher = &self.current;
        let threshold = searcher.params().threshold;
        let in_index: Vec<Option<Outcome>> = parallel::map(&prepared, |p| {
            if p.is_empty() {
                return Some(Outcome::Empty);
            }
            let hit = *searcher
                .hits(&p.probe(), threshold, Some(1), Some(&p.id))
                .first()?;
            let n = searcher.neighbour(&hit);
            Some(Outcome::Duplicate {
                of: n.id.to_string(),
                similarity: n.similarity,
                indexed: true,
            })
        });
        let replaces: Vec<bool> =
            parallel::map(&prepared, |p| searcher.state.find(&p.id).is_some());
        let mut outcomes = Vec::with_capacity(prepared.len());
        let mut kept: Vec<usize> = Vec::new();
        // The kept document of each id so far: a later one of the same id supersedes it.
        let mut kept_of: HashMap<&str, usize> = HashMap::new();
        let mut superseded = vec![false; prepared.len()];
        let mut buckets: HashMap<(usize, usize, u64), Vec<usize>> = HashMap::new();
        for (i, p) in prepared.iter().enumerate() {
            if let Some(outcome) = in_index[i].clone() {
                outcomes.push(outcome);
                continue;
            }
            if let Some((j, similarity)) = self.best_earlier(p, &prepared, &buckets) {
                outcomes.push(Outcome::Duplicate {
                    of: prepared[j].id.clone(),
                    similarity,
                    indexed: false,
                });
                continue;
            }
            if let Some(earlier) = kept_of.insert(&p.id, i) {
                // The earlier text is not going into the index: nothing later may be
                // dropped as its duplicate.
                outcomes[earlier] = Outcome::Superseded;
                superseded[earlier] = true;
                for part in prepared[earlier].sketch.families() {
                    for (band, &key) in part.band_keys().iter().enumerate() {
                        if let Some(docs) = buckets.get_mut(&(part.family(), band, key)) {
                            docs.retain(|&d| d != earlier);
                        }
                    }
                }
            }
            outcomes.push(Outcome::Added {
                replaced: replaces[i],
            });
            for part in p.sketch.families() {
                for (band, &key) in part.band_keys().iter().enumerate() {
                    buckets
                        .entry((part.family(), band, key))
                        .or_default()
                        .push(i);
                }
            }
            kept.push(i);
        }
        drop(kept_of);
        kept.retain(|&k| !superseded[k]);
        Ok(UniqueBatch {
            outcomes,
            prepared,
            kept,
            generation: self.current.generation(),
        })
    }

    /// The second half of [`add_unique`](IndexWriter::add_unique): commits the documents
    /// `batch` keeps, and hands back its outcomes. A batch judged against another commit
    /// than this writer's last is judged again first.
    pub fn commit_unique(&mut self, batch: UniqueBatch) -> Result<Vec<Outcome>> {
        self.usable()?;
        if batch.generation != self.current.generation() {
            return Err(Error::StaleBatch {
                path: self.dir.clone(),
                judged: batch.generation,
                now: self.current.generation(),
            });
        }
        let UniqueBatch {
            outcomes,
            prepared,
            kept,
            ..
        } = batch;
        let ids: Vec<&str> = kept.iter().map(|&i| prepared[i].id.as_str()).collect();
        self.commit_docs(&ids, None, |k| Cow::Borrowed(&prepared[kept[k]]))?;
        Ok(outcomes)
    }

    /// The most similar document kept earlier in the batch (the earliest among equals).
    fn best_earlier(
        &self,
        p: &Prepared,
        prepared: &[Prepared],
        buckets: &HashMap<(usize, usize, u64), Vec<usize>>,
    ) -> Option<(usize, Similarity)> {
        let mask = family_mask(&p.sketch);
        let mut candidates: Vec<usize> = Vec::new();
        for part in p.sketch.families() {
            let f = part.family();
            for (band, &key) in part.band_keys().iter().enumerate() {
                let Some(docs) = buckets.get(&(f, band, key)) else {
                    continue;
                };
                candidates.extend(docs.iter().copied().filter(|&j| {
                    let other = &prepared[j];
                    other.id != p.id && shared_family(mask, family_mask(&other.sketch)) == Some(f)
                }));
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let pipeline = self.current.pipeline();
        let mut best: Option<(usize, Similarity)> = None;
        for j in candidates {
            let other = &prepared[j];
            let verdict = pipeline.verify_sets(
                (p.doc.set(), p.doc.whole_signature()),
                (other.doc.set(), other.doc.whole_signature()),
            );
            let Some(s) = verdict.passed() else { continue };
            let score = |s: &Similarity| s.value().unwrap_or(0.0);
            if best.as_ref().is_none_or(|(_, b)| score(&s) > score(b)) {
                best = Some((j, s));
            }
        }
        best
    }

    fn prepare<I, T>(&self, docs: &[(I, T)]) -> Vec<Prepared>
    where
        I: AsRef<str> + Sync,
        T: AsRef<str> + Sync,
    {
        let pipeline = self.current.pipeline();
        let common = &self.current.state.common;
        parallel::map(docs, |(id, text)| {
            Prepared::new(pipeline, id.as_ref(), text.as_ref(), common)
        })
    }

    /// Adds documents `0..ids.len()`, each made by `prepare` when its turn comes (a
    /// chunk at a time, in parallel), as new segments, deletes the documents they
    /// replace, and commits; then merges if segments piled up. Within the batch the last
    /// of an id wins; an empty document is reported, not added.
    fn commit_docs<'p>(
        &mut self,
        ids: &[&str],
        common: Option<u64>,
        prepare: impl Fn(usize) -> Cow<'p, Prepared> + Sync,
    ) -> Result<AddReport> {
        let mut last: HashMap<&str, usize> = HashMap::with_capacity(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            last.insert(id, i);
        }
        let kept: Vec<usize> = (0..ids.len()).filter(|&i| last[ids[i]] == i).collect();
        drop(last);
        let mut report = AddReport {
            superseded: ids.len() - kept.len(),
            ..AddReport::default()
        };
        let state = Arc::clone(&self.current.state);
        let mut manifest = state.manifest.next(&self.dir)?;
        if common.is_some() {
            manifest.common = common;
        }
        let (families, bands) = (manifest.families, manifest.params.bands);
        let mut changed: BTreeMap<usize, Deletes> = BTreeMap::new();
        let mut data = SegmentData::new(families, bands);
        for chunk in kept.chunks(PREPARE_CHUNK) {
            let prepared: Vec<(Cow<'p, Prepared>, Found)> = parallel::map(chunk, |&i| {
                let p = prepare(i);
                let found = if p.is_empty() {
                    None
                } else {
                    state.find(&p.id)
                };
                (p, found)
            });
            for (p, found) in prepared {
                if p.is_empty() {
                    report.empty.push(p.id.clone());
                    continue;
                }
                if let Some((s, d)) = found {
                    changed
                        .entry(s)
                        .or_insert_with(|| (*state.deletes[s]).clone())
                        .insert(d);
                    report.replaced += 1;
                }
                if data.len() >= SEGMENT_DOCS || !data.fits(p.doc.set().len(), p.id.len()) {
                    let full = std::mem::replace(&mut data, SegmentData::new(families, bands));
                    self.push_segment(&mut manifest, full)?;
                }
                let (entry, new) = data.push_doc(
                    &p.id,
                    p.doc.set(),
                    p.doc.whole_signature(),
                    family_mask(&p.sketch),
                );
                if new {
                    for part in p.sketch.families() {
                        for (band, &key) in part.band_keys().iter().enumerate() {
                            data.push_key(part.family(), band, key, entry);
                        }
                    }
                }
                report.added += 1;
            }
        }
        if report.added == 0 && changed.is_empty() {
            return Ok(report);
        }
        if data.len() > 0 {
            self.push_segment(&mut manifest, data)?;
        }
        let obsolete = self.apply_deletions(&mut manifest, &changed)?;
        manifest.segments.retain(|m| m.live() > 0);
        self.commit(manifest, obsolete)?;
        // The add stands from here on, whatever becomes of the merge.
        self.merge_after_change();
        Ok(report)
    }

    /// Merges what piled up after a committed change. A failure (a full disk, a damaged
    /// segment) does not undo the change: it is kept for [`merge_failure`] and the merge
    /// is tried again after the next change.
    ///
    /// [`merge_failure`]: IndexWriter::merge_failure
    fn merge_after_change(&mut self) {
        self.merge_failure = self.merge_tiers().err().map(|e| e.to_string());
    }

    /// Why the merge after the last change failed, if it did: the change itself was
    /// committed, and the index is sound with more segments than it would have had.
    pub fn merge_failure(&self) -> Option<&str> {
        self.merge_failure.as_deref()
    }

    /// Writes the new deletion files of the changed segments into `manifest`; returns
    /// the files the commit makes obsolete (a segment left with nothing live goes).
    fn apply_deletions(
        &self,
        manifest: &mut Manifest,
        changed: &BTreeMap<usize, Deletes>,
    ) -> Result<Vec<String>> {
        let mut obsolete = Vec::new();
        let generation = manifest.generation;
        for (&s, deletes) in changed {
            let meta = &mut manifest.segments[s];
            if meta.deletes != 0 {
                obsolete.push(deletes_name(meta.name, meta.deletes));
            }
            meta.deleted = deletes.count();
            meta.deletes = 0;
            if meta.live() == 0 {
                obsolete.push(segment_name(meta.name));
            } else {
                deletes.write(&self.dir, meta.name, generation, meta.docs)?;
                meta.deletes = generation;
            }
        }
        Ok(obsolete)
    }

    /// Writes a new segment and lists it in `manifest`.
    fn push_segment(&self, manifest: &mut Manifest, data: SegmentData) -> Result<SegmentMeta> {
        let docs = u32::try_from(data.len()).map_err(|_| Error::TooManyDocuments(data.len()))?;
        let name = manifest.take_segment_name(&self.dir)?;
        data.write(&self.dir, name)?;
        let meta = SegmentMeta {
            name,
            docs,
            deleted: 0,
            deletes: 0,
        };
        manifest.segments.push(meta);
        Ok(meta)
    }

    /// Makes `manifest` the committed state (durably), then removes what it made
    /// obsolete and moves this writer's view to it.
    fn commit(&mut self, mut manifest: Manifest, obsolete: Vec<String>) -> Result<()> {
        // Until the manifest's rename nothing has changed; from it on, a writer whose view
        // fell behind the manifest would reuse names of live files, so a failure past this
        // point leaves this writer unusable (the index itself is at one commit or the other).
        manifest.write(&self.dir)?;
        let moved = sync_dir(&self.dir).and_then(|()| {
            remove_files(&self.dir, obsolete);
            State::open_files(&self.dir, manifest, Some(&self.current.state))
        });
        match moved {
            Ok(state) => {
                self.current = self.current.with_state(state);
                Ok(())
            }
            Err(e) => {
                // The commit is in place or not: what is on disk says which, and a writer
                // that reads it back goes on from there without reusing a live name.
                match State::load(&self.dir, Some(&self.current.state)) {
                    Ok(state) => self.current = self.current.with_state(state),
                    Err(_) => self.failed = true,
                }
                Err(e)
            }
        }
    }

    /// Refuses to write after a commit that failed past its point of no return.
    fn usable(&self) -> Result<()> {
        if self.failed {
            Err(Error::WriterFailed(self.dir.clone()))
        } else {
            Ok(())
        }
    }

    /// Removes the documents with these ids, in one durable commit (none if nothing
    /// matched).
    pub fn remove<I: AsRef<str>>(&mut self, ids: &[I]) -> Result<RemoveReport> {
        self.usable()?;
        let state = Arc::clone(&self.current.state);
        let mut changed: BTreeMap<usize, Deletes> = BTreeMap::new();
        let mut report = RemoveReport::default();
        let mut asked: HashSet<&str> = HashSet::with_capacity(ids.len());
        for id in ids {
            let id = id.as_ref();
            if !asked.insert(id) {
                report.repeated += 1;
                continue;
            }
            let removed = state.find(id).is_some_and(|(s, d)| {
                changed
                    .entry(s)
                    .or_insert_with(|| (*state.deletes[s]).clone())
                    .insert(d)
            });
            if removed {
                report.removed += 1;
            } else {
                report.missing.push(id.to_string());
            }
        }
        if report.removed > 0 {
            let mut manifest = state.manifest.next(&self.dir)?;
            let obsolete = self.apply_deletions(&mut manifest, &changed)?;
            manifest.segments.retain(|m| m.live() > 0);
            self.commit(manifest, obsolete)?;
        }
        Ok(report)
    }

    /// Merges every segment into one without the deleted documents, in one durable
    /// commit. Queries get a little faster and the deleted documents' space is returned.
    pub fn compact(&mut self) -> Result<()> {
        self.usable()?;
        let state = &self.current.state;
        if state.segments.len() > 1 || state.manifest.deleted() > 0 {
            // Whatever does not fit in one segment's 32-bit offsets stays in another.
            let mut group: Vec<usize> = (0..state.segments.len()).collect();
            let (mut shingles, mut ids) = (0, 0);
            group.retain(|&s| {
                let (a, b) = state.segments[s].arena_sizes();
                let fits = shingles + a <= MAX_ARENA && ids + b <= MAX_ARENA;
                if fits {
                    (shingles, ids) = (shingles + a, ids + b);
                }
                fits
            });
            self.merge(group)?;
        }
        Ok(())
    }

    /// Merges segments of a similar size while `MERGE_FACTOR` of them share a tier.
    fn merge_tiers(&mut self) -> Result<()> {
        loop {
            let mut tiers: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for (i, m) in self.current.state.manifest.segments.iter().enumerate() {
                let tier = (u32::BITS - m.live().leading_zeros()) / 2;
                tiers.entry(tier).or_default().push(i);
            }
            let state = &self.current.state;
            let fits = |g: &Vec<usize>| {
                let (shingles, ids) = g.iter().fold((0, 0), |(s, i), &x| {
                    let (a, b) = state.segments[x].arena_sizes();
                    (s + a, i + b)
                });
                shingles <= MAX_ARENA && ids <= MAX_ARENA
            };
            match tiers
                .into_values()
                .find(|g| g.len() >= MERGE_FACTOR && fits(g))
            {
                Some(group) => self.merge(group)?,
                None => return Ok(()),
            }
        }
    }

    /// Rewrites the segments `group` (indices into the manifest) as one, live documents
    /// only, in one commit.
    fn merge(&mut self, group: Vec<usize>) -> Result<()> {
        let state = Arc::clone(&self.current.state);
        let mut manifest = state.manifest.next(&self.dir)?;
        let (families, bands) = (manifest.families, manifest.params.bands);
        let mut data = SegmentData::new(families, bands);
        let mut obsolete = Vec::new();
        for &s in &group {
            let (seg, deletes) = (&state.segments[s], &state.deletes[s]);
            // A merge reads every byte it copies anyway: it checks them first, so damage
            // is never carried into a new segment under a fresh checksum.
            let problems = seg.verify();
            if !problems.is_empty() {
                return Err(Error::Damaged {
                    path: seg.path().to_path_buf(),
                    problems,
                });
            }
            // Each entry with a live member becomes a new entry, or joins one with the same
            // set from a segment merged before it (which has the band keys already).
            let mut renumber = vec![u32::MAX; seg.entries() as usize];
            for e in 0..seg.entries() {
                let mut joined: Option<u32> = None;
                for d in seg.members(e).filter(|&d| !deletes.contains(d)) {
                    match joined {
                        Some(entry) => data.push_member(seg.id(d), entry),
                        None => {
                            let (entry, new) =
                                data.push_doc(seg.id(d), seg.set(e), seg.whole(e), seg.mask(e));
                            joined = Some(entry);
                            if new {
                                renumber[e as usize] = entry;
                            }
                        }
                    }
                }
            }
            for f in 0..families {
                for b in 0..bands {
                    let (keys, entries) = seg.postings(f, b);
                    for (&key, &e) in keys.iter().zip(entries) {
                        match renumber.get(e as usize) {
                            Some(&n) if n != u32::MAX => data.push_key(f, b, key, n),
                            _ => {}
                        }
                    }
                }
            }
            let meta = &state.manifest.segments[s];
            obsolete.push(segment_name(meta.name));
            if meta.deletes != 0 {
                obsolete.push(deletes_name(meta.name, meta.deletes));
            }
        }
        let first = group[0];
        let merged = if data.len() > 0 {
            let meta = self.push_segment(&mut manifest, data)?;
            manifest.segments.pop();
            Some(meta)
        } else {
            None
        };
        let mut segments = Vec::with_capacity(manifest.segments.len());
        for (i, m) in manifest.segments.iter().enumerate() {
            if i == first {
                segments.extend(merged);
            }
            if !group.contains(&i) {
                segments.push(*m);
            }
        }
        manifest.segments = segments;
        self.commit(manifest, obsolete)
    }
}

/// Batches of `(id, text)` as string slices.
fn as_strs<'a, B, I, T>(batches: &'a [B]) -> Vec<Vec<(&'a str, &'a str)>>
where
    B: AsRef<[(I, T)]>,
    I: AsRef<str> + 'a,
    T: AsRef<str> + 'a,
{
    (batches.iter())
        .map(|b| {
            (b.as_ref().iter())
                .map(|(id, text)| (id.as_ref(), text.as_ref()))
                .collect()
        })
        .collect()
}

/// The words of batches added together: each batch's last document of an id, by its
/// position in the batches laid end to end.
struct Words {
    all: Vec<usize>,
}

impl Words {
    fn of(batches: &[Vec<(&str, &str)>]) -> Words {
        let mut all = Vec::new();
        let mut start = 0;
        for batch in batches {
            let mut last: HashMap<&str, usize> = HashMap::with_capacity(batch.len());
            for (i, &(id, _)) in batch.iter().enumerate() {
                last.insert(id, start + i);
            }
            all.extend(
                (0..batch.len())
                    .filter_map(|i| (last[batch[i].0] == start + i).then_some(start + i)),
            );
            start += batch.len();
        }
        Words { all }
    }

    /// The words on an id that more than one batch has a word on.
    fn repeated(&self, docs: &[(&str, &str)]) -> Vec<usize> {
        let mut times: HashMap<&str, usize> = HashMap::new();
        for &w in &self.all {
            *times.entry(docs[w].0).or_default() += 1;
        }
        (self.all.iter().copied())
            .filter(|&w| times[docs[w].0] > 1)
            .collect()
    }
}

/// Refuses a batch with an empty id: no request could name that document afterwards.
fn refuse_empty_ids<'a>(mut ids: impl Iterator<Item = &'a str>) -> Result<()> {
    match ids.position(str::is_empty) {
        Some(position) => Err(Error::EmptyId { position }),
        None => Ok(()),
    }
}

/// Refuses to create an index in a directory that holds anything but an index's own
/// files. A build that died before its first commit leaves only those: before its
/// manifest was in place, only the lock and the manifest's temporary file; after, files
/// the writer may have written. So a user's `00000001.seg` is never taken for a segment.
fn refuse_foreign_files(dir: &Path) -> Result<()> {
    let has_manifest = dir.join(MANIFEST).exists();
    let entries = fs::read_dir(dir).map_err(io_at(dir))?;
    for entry in entries {
        let name = entry.map_err(io_at(dir))?.file_name();
        let name = name.to_string_lossy();
        let ours = if has_manifest {
            belongs_to_index(&name)
        } else {
            name == LOCK || name == MANIFEST_TMP
        };
        if !ours {
            return Err(Error::NotEmpty {
                path: dir.to_path_buf(),
                example: name.into_owned(),
            });
        }
    }
    Ok(())
}
