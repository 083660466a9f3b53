//! Reading an index: one committed state, queried by any number of threads.

use std::path::Path;
use std::sync::Arc;

use neardup::candidates::{contained, is_smaller, EnsemblePlan, MAX_ONE_ROW_BUCKET};
use neardup::sketch::{DocSet, DocSketch};
use neardup::text::{shingle_ids, Shingle, SketchInput};
use neardup::verify::meets_threshold;
use neardup::{Config, Contained, Pipeline, Similarity};

use crate::error::{Error, Result};
use crate::params::Params;
use crate::query::Query;
use crate::segment::Segment;
use crate::state::State;

/// An indexed document similar to a query. Its id borrows from the [`Searcher`] that
/// answered (no copy per answer; `id.to_string()` keeps it longer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour<'a> {
    /// Its id.
    pub id: &'a str,
    /// How similar: the exact Jaccard of the shingle sets, or, when either document was
    /// longer than the shingle cap, the estimate of the whole documents' sketches.
    pub similarity: Similarity,
    /// In a containment index: which of the two is inside the other, and how much of it.
    pub containment: Option<Containment>,
}

impl Neighbour<'_> {
    /// The similarity the neighbour was judged on: the containment in a containment
    /// index, else Jaccard, else the estimate.
    pub fn score(&self) -> f64 {
        match self.containment {
            Some(c) => c.value,
            None => self.similarity.value().unwrap_or(0.0),
        }
    }
}

/// Which document of a containment answer is inside the other: the smaller one (on equal
/// sizes, the query).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inside {
    /// The query is inside the indexed document.
    Query,
    /// The indexed document is inside the query.
    Document,
}

impl Inside {
    /// `query` or `document`.
    pub fn name(self) -> &'static str {
        match self {
            Inside::Query => "query",
            Inside::Document => "document",
        }
    }
}

/// How much of the smaller document of a containment answer lies in the larger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Containment {
    /// |A ∩ B| / |A|, A the smaller shingle set.
    pub value: f64,
    /// Which one A is.
    pub inside: Inside,
}

/// An indexed document that matched: where it is and how similar.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hit {
    pub segment: usize,
    pub entry: u32,
    pub doc: u32,
    pub similarity: Similarity,
    pub containment: Option<Containment>,
}

/// Buckets at least this large are compared with those already walked (see
/// `candidates`).
const LARGE_BUCKET: usize = 64;

thread_local! {
    /// A query's "already a candidate" bits, kept per thread so a query allocates nothing.
    static SEEN: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A document to look up, shingled and sketched.
pub(crate) struct Probe<'a> {
    pub set: &'a [u64],
    pub whole: Option<&'a [u64]>,
    pub sketch: &'a DocSketch,
}

/// The keys an index looks a document up by: its band keys in each of its families, or in
/// a containment index the tables of every row count (one family), signed without the
/// index's `common` tokens.
pub(crate) fn index_keys(pipeline: &Pipeline, doc: &DocSet, common: &[u64]) -> DocSketch {
    if pipeline.config().measure().from_smaller() {
        // The configuration refuses containment with SimHash, the one sketch without keys.
        pipeline
            .ensemble_keys(doc, common)
            .unwrap_or_else(|_| pipeline.sketch_doc_keys(doc))
    } else {
        pipeline.sketch_doc_keys(doc)
    }
}

/// The families a sketch is in, one bit each (as segments store them).
pub(crate) fn family_mask(sketch: &DocSketch) -> u8 {
    sketch.family_set().bits()
}

/// The family two documents are compared in ([`neardup::sketch::FamilySet::shared`]), by their
/// stored masks.
pub(crate) fn shared_family(a: u8, b: u8) -> Option<usize> {
    neardup::sketch::FamilySet::from_bits(a).shared(neardup::sketch::FamilySet::from_bits(b))
}

/// The entries `walk` offers to `first(segment, entry)`, each kept once, in the order
/// first offered. One bit per stored entry is set while the walk runs (then cleared): an
/// entry met in many of a query's buckets (a near-copy is in most of them) is taken once
/// without sorting repeats, and a query allocates nothing.
fn each_once(state: &State, walk: impl FnOnce(&mut dyn FnMut(usize, u32))) -> Vec<(usize, u32)> {
    let mut out: Vec<(usize, u32)> = Vec::new();
    SEEN.with_borrow_mut(|seen| {
        let (base, total) = (&state.first_entry, state.entries);
        if seen.len() < total.div_ceil(64) {
            seen.resize(total.div_ceil(64), 0);
        }
        walk(&mut |s, e| {
            let g = base[s] + e as usize;
            let (word, bit) = (g / 64, 1u64 << (g % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                out.push((s, e));
            }
        });
        for &(s, e) in &out {
            let g = base[s] + e as usize;
            seen[g / 64] &= !(1u64 << (g % 64));
        }
    });
    out
}

/// One committed state of an index, ready for queries. Cloning is cheap and every clone
/// sees the same state: the one committed when it was opened, never a later or a partial
/// one; [`Searcher::reload`] moves to the last commit.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// use neardup_index::{IndexWriter, Query, Searcher};
/// let mut writer = IndexWriter::create(dir.path(), &neardup::Config::builder().build()?)?;
/// writer.add(&[("a", "Vintage road bike, 56 cm steel frame, new tyres")])?;
/// let searcher = Searcher::open(dir.path())?;
/// let found = searcher.query("Vintage road bike, 56 cm steel frame, new tyres!", &Query::new())?;
/// assert_eq!(found[0].id, "a");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Searcher {
    pub(crate) pipeline: Arc<Pipeline>,
    pub(crate) state: Arc<State>,
    /// The tables' plan, in a containment index.
    ensemble: Option<EnsemblePlan>,
}

impl std::fmt::Debug for Searcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Searcher")
            .field("dir", &self.state.dir)
            .field("generation", &self.generation())
            .field("documents", &self.len())
            .finish()
    }
}

impl Searcher {
    /// Opens the last committed state of the index in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Searcher> {
        let state = State::load(dir.as_ref(), None)?;
        let pipeline = Pipeline::new(state.manifest.params.config()?)?;
        let ensemble = pipeline
            .config()
            .measure()
            .from_smaller()
            .then(|| pipeline.ensemble_plan());
        // The segments hold one section per table band: any other count is not this
        // version's containment index.
        if let Some(plan) = ensemble {
            let p = &state.manifest.params;
            if (p.bands, p.rows) != (plan.table_bands(), 0) || state.manifest.families != 1 {
                return Err(Error::Corrupt {
                    path: dir.as_ref().join(crate::files::MANIFEST),
                    reason: format!(
                        "a containment index of {} permutations has {} table bands, one family \
                         and rows 0; the manifest says {} bands x {} rows, {} families",
                        p.num_perm,
                        plan.table_bands(),
                        p.bands,
                        p.rows,
                        state.manifest.families
                    ),
                });
            }
        }
        Ok(Searcher {
            pipeline: Arc::new(pipeline),
            state: Arc::new(state),
            ensemble,
        })
    }

    /// Opens the index, refusing it if it was built with other parameters than `config`'s
    /// (each difference is named).
    pub fn open_with(dir: impl AsRef<Path>, config: &Config) -> Result<Searcher> {
        let searcher = Searcher::open(dir.as_ref())?;
        check_params(dir.as_ref(), searcher.params(), config)?;
        Ok(searcher)
    }

    /// The last committed state, reusing this one's open segments.
    pub fn reload(&self) -> Result<Searcher> {
        let state = State::load(&self.state.dir, Some(&self.state))?;
        Ok(self.with_state(state))
    }

    /// This searcher over another state of the same index.
    pub(crate) fn with_state(&self, state: State) -> Searcher {
        Searcher {
            pipeline: Arc::clone(&self.pipeline),
            state: Arc::new(state),
            ensemble: self.ensemble,
        }
    }

    /// The parameters the index is pinned to.
    pub fn params(&self) -> &Params {
        &self.state.manifest.params
    }

    /// The pipeline of those parameters (to shingle and sketch documents as the index
    /// does).
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// The number of the commit this state is.
    pub fn generation(&self) -> u64 {
        self.state.manifest.generation
    }

    /// Live documents.
    pub fn len(&self) -> u64 {
        self.state.manifest.live()
    }

    /// True when no document is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if a live document has this id.
    pub fn contains(&self, id: &str) -> bool {
        self.state.find(id).is_some()
    }

    /// The ids of the live documents, segment by segment.
    pub fn ids(&self) -> impl Iterator<Item = &str> + '_ {
        let state = &*self.state;
        state.segments.iter().enumerate().flat_map(move |(s, seg)| {
            (0..seg.docs())
                .filter(move |&d| !state.deletes[s].contains(d))
                .map(move |d| seg.id(d))
        })
    }

    /// True for an index built with `--measure containment`: its answers are documents
    /// inside the query or holding it ([`Neighbour::containment`]).
    pub fn is_containment(&self) -> bool {
        self.ensemble.is_some()
    }

    /// The indexed documents similar to `text`, most similar first (ties by id). In a
    /// containment index: the indexed documents the query is inside of at the threshold,
    /// and those inside it, most contained first.
    pub fn query(&self, text: &str, query: &Query) -> Result<Vec<Neighbour<'_>>> {
        self.query_doc(&self.pipeline.shingle_doc(text), query)
    }

    /// The same for a document already shingled by [`Searcher::pipeline`].
    pub fn query_doc(&self, doc: &DocSet, query: &Query) -> Result<Vec<Neighbour<'_>>> {
        let threshold = self.query_threshold(query)?;
        let sketch = index_keys(&self.pipeline, doc, &self.state.common);
        let probe = Probe {
            set: doc.set(),
            whole: doc.whole_signature(),
            sketch: &sketch,
        };
        let hits = self.hits(&probe, threshold, query.top, None);
        Ok(hits.iter().map(|h| self.neighbour(h)).collect())
    }

    /// The indexed documents similar to the live document `id` (itself left out), most
    /// similar first; `None` if no live document has that id.
    pub fn query_id(&self, id: &str, query: &Query) -> Result<Option<Vec<Neighbour<'_>>>> {
        let threshold = self.query_threshold(query)?;
        let Some(doc) = self.stored(id) else {
            return Ok(None);
        };
        let sketch = index_keys(&self.pipeline, &doc, &self.state.common);
        let probe = Probe {
            set: doc.set(),
            whole: doc.whole_signature(),
            sketch: &sketch,
        };
        let hits = self.hits(&probe, threshold, query.top, Some(id));
        Ok(Some(hits.iter().map(|h| self.neighbour(h)).collect()))
    }

    /// The shingle set the live document `id` is stored with (and its whole-document
    /// sketch if it was truncated).
    pub fn stored(&self, id: &str) -> Option<DocSet> {
        let (s, d) = self.state.find(id)?;
        let seg = &self.state.segments[s];
        let e = seg.entry_of(d);
        Some(DocSet::from_parts(
            seg.set(e).to_vec(),
            seg.whole(e).map(<[u64]>::to_vec),
        ))
    }

    fn query_threshold(&self, query: &Query) -> Result<f64> {
        let built = self.params().threshold;
        match query.threshold {
            None => Ok(built),
            Some(t) if !(t > 0.0 && t <= 1.0) => Err(Error::InvalidThreshold(t)),
            Some(t) if t < built => Err(Error::ThresholdBelowIndex { asked: t, built }),
            Some(t) => Ok(t),
        }
    }

    pub(crate) fn neighbour(&self, hit: &Hit) -> Neighbour<'_> {
        Neighbour {
            id: self.state.segments[hit.segment].id(hit.doc),
            similarity: hit.similarity,
            containment: hit.containment,
        }
    }

    /// The live documents that share a bucket with the probe in the family they are
    /// compared in, verified, at least `threshold` similar, best first; a document with
    /// the id `exclude` is left out (a replacement is not compared with what it replaces).
    pub(crate) fn hits(
        &self,
        probe: &Probe<'_>,
        threshold: f64,
        top: Option<usize>,
        exclude: Option<&str>,
    ) -> Vec<Hit> {
        // The threshold in the score the checks compute, as a corpus run tests it.
        let threshold = self.pipeline.config().measure().tested(threshold);
        let state = &*self.state;
        let excluded = exclude.and_then(|id| state.find(id));
        let live = |s: usize, d: u32| !state.deletes[s].contains(d) && excluded != Some((s, d));
        let mut hits: Vec<(u64, Hit)> = Vec::new();
        let candidates = match &self.ensemble {
            Some(plan) => self.ensemble_candidates(probe, plan),
            None => self.candidates(probe.sketch),
        };
        for (s, e) in candidates {
            let seg = &state.segments[s];
            // An entry whose documents are all deleted is not worth verifying.
            if !seg.members(e).any(|d| live(s, d)) {
                continue;
            }
            // One verification answers for every copy in the entry.
            let Some((similarity, containment)) = self.judge(probe, seg, e, threshold) else {
                continue;
            };
            let score = containment.map_or(similarity.value().unwrap_or(0.0), |c| c.value);
            hits.extend(seg.members(e).filter(|&d| live(s, d)).map(|doc| {
                let hit = Hit {
                    segment: s,
                    entry: e,
                    doc,
                    similarity,
                    containment,
                };
                (!score.to_bits(), hit)
            }));
        }
        // Best first, ties by id (UTF-8 byte order is character order). An entry's members
        // are numbered in id order, so ties among copies are settled by their numbers.
        let order = |a: &(u64, Hit), b: &(u64, Hit)| {
            a.0.cmp(&b.0).then_with(|| {
                let (x, y) = (&a.1, &b.1);
                if (x.segment, x.entry) == (y.segment, y.entry) {
                    x.doc.cmp(&y.doc)
                } else {
                    let id = |h: &Hit| state.segments[h.segment].id_raw(h.doc);
                    id(x).cmp(id(y))
                }
            })
        };
        if let Some(k) = top.filter(|&k| k < hits.len()) {
            if k > 0 {
                hits.select_nth_unstable_by(k - 1, order);
            }
            hits.truncate(k);
        }
        hits.sort_unstable_by(order);
        hits.into_iter().map(|(_, h)| h).collect()
    }

    /// The verdict on one entry at `threshold`: its similarity, and in a containment index
    /// which of the two is inside the other; `None` if it falls short.
    fn judge(
        &self,
        probe: &Probe<'_>,
        seg: &Segment,
        e: u32,
        threshold: f64,
    ) -> Option<(Similarity, Option<Containment>)> {
        if self.ensemble.is_none() {
            let similarity = self
                .pipeline
                .verify_sets((probe.set, probe.whole), (seg.set(e), seg.whole(e)))
                .passed()?;
            let score = similarity.value().unwrap_or(0.0);
            return meets_threshold(score, threshold).then_some((similarity, None));
        }
        // Compared on the shingles kept (the first --max-shingles of a longer document), by
        // their ids as a batch run compares them, unless the index hashes the hashes.
        let (query, doc) = (probe.set, seg.set(e));
        let (found, inside) = match self.pipeline.config().sketch_input() {
            SketchInput::Ids => inside(&shingle_ids(query), &shingle_ids(doc), threshold)?,
            SketchInput::Hashes => inside(query, doc, threshold)?,
        };
        let similarity = Similarity {
            jaccard: Some(found.jaccard),
            ..Similarity::default()
        };
        let containment = Containment {
            value: found.containment,
            inside,
        };
        Some((similarity, Some(containment)))
    }

    /// The entries that share a bucket with the sketch in the family they are compared
    /// in, each once, as (segment, entry).
    fn candidates(&self, sketch: &DocSketch) -> Vec<(usize, u32)> {
        let state = &*self.state;
        let mask = family_mask(sketch);
        each_once(state, |first| {
            for part in sketch.families() {
                let f = part.family();
                // Entries of near-identical sets (one template, many fillings) fill the
                // same bucket in every band: a large bucket equal to one already walked in
                // this family adds nothing (comparing the two is a memcmp; walking it
                // again, thousands of bit tests).
                let mut walked: Vec<(usize, &[u32])> = Vec::new();
                for (band, &key) in part.band_keys().iter().enumerate() {
                    for (s, seg) in state.segments.iter().enumerate() {
                        let bucket = seg.bucket(f, band, key);
                        if bucket.len() >= LARGE_BUCKET {
                            if walked.iter().any(|&(ws, w)| ws == s && w == bucket) {
                                continue;
                            }
                            walked.push((s, bucket));
                        }
                        for &e in bucket {
                            // Not a candidate in this family if it is compared in a later
                            // one.
                            if e < seg.entries() && shared_family(mask, seg.mask(e)) == Some(f) {
                                first(s, e);
                            }
                        }
                    }
                }
            }
        })
    }

    /// The entries a containment query meets in the table of the rows its pair of sizes
    /// is looked for with ([`EnsemblePlan::rows`], the smaller size against the larger's
    /// partition), each once, as (segment, entry). One-row buckets of a segment holding
    /// more than [`MAX_ONE_ROW_BUCKET`] entries are passed over, as the batch search does.
    fn ensemble_candidates(&self, probe: &Probe<'_>, plan: &EnsemblePlan) -> Vec<(usize, u32)> {
        let state = &*self.state;
        let Some(keys) = probe.sketch.band_keys(0) else {
            return Vec::new(); // an empty document
        };
        let size = |set: &[u64]| self.pipeline.config().sketch_input().size(set);
        let a = size(probe.set);
        each_once(state, |first| {
            for (band, &key) in keys.iter().enumerate() {
                let Some(rows) = plan.table_of(band) else {
                    break;
                };
                for (s, seg) in state.segments.iter().enumerate() {
                    let bucket = seg.bucket(0, band, key);
                    if rows == 1 && bucket.len() > MAX_ONE_ROW_BUCKET {
                        continue;
                    }
                    for &e in bucket.iter().filter(|&&e| e < seg.entries()) {
                        let b = size(seg.set(e));
                        let (small, large) = (a.min(b), a.max(b));
                        if plan.rows(small, EnsemblePlan::partition(large)) == rows {
                            first(s, e);
                        }
                    }
                }
            }
        })
    }

    /// Counts and sizes.
    pub fn stats(&self) -> IndexStats {
        let state = &*self.state;
        let deletes_bytes: u64 = state
            .manifest
            .segments
            .iter()
            .filter(|m| m.deletes != 0)
            .map(|m| 24 + 8 * u64::from(m.docs).div_ceil(64))
            .sum();
        IndexStats {
            documents: state.manifest.live(),
            deleted: state.manifest.deleted(),
            segments: state.segments.len(),
            bytes: state.segments.iter().map(|s| s.bytes()).sum::<u64>() + deletes_bytes,
            set_bytes: state.segments.iter().map(|s| s.set_bytes()).sum(),
            sets: state.entries as u64,
            generation: state.manifest.generation,
            format: state.manifest.format,
            common_tokens: state.manifest.common,
        }
    }
}

/// Refuses a configuration whose parameters differ from the index's.
pub(crate) fn check_params(dir: &Path, have: &Params, config: &Config) -> Result<()> {
    let differences = have.differences(&Params::of(config));
    if differences.is_empty() {
        Ok(())
    } else {
        Err(Error::ParameterMismatch {
            path: dir.to_path_buf(),
            differences,
        })
    }
}

/// An index's counts and sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexStats {
    /// Live documents.
    pub documents: u64,
    /// Deleted documents still stored (until a merge or `compact` drops them).
    pub deleted: u64,
    /// Live segments.
    pub segments: usize,
    /// Bytes on disk of the segments and deletion files.
    pub bytes: u64,
    /// Of those, the stored shingle sets (and the whole-document sketches of truncated
    /// documents).
    pub set_bytes: u64,
    /// Distinct shingle sets stored: copies in one segment share one.
    pub sets: u64,
    /// The commit this is.
    pub generation: u64,
    /// The index's on-disk format.
    pub format: u32,
    /// In a containment index, the common tokens learned from its first documents and
    /// left out of every signature; `None` before the first documents and in a Jaccard
    /// index.
    pub common_tokens: Option<u64>,
}

impl IndexStats {
    /// Bytes on disk per live document: what each searchable document costs, deleted
    /// ones included in the bytes until `compact` returns their space.
    pub fn bytes_per_document(&self) -> f64 {
        self.bytes as f64 / self.documents.max(1) as f64
    }

    /// Bytes per live document beyond the shingle sets: ids, postings, offsets.
    pub fn index_bytes_per_document(&self) -> f64 {
        (self.bytes - self.set_bytes) as f64 / self.documents.max(1) as f64
    }
}

/// The containment of the smaller of a query's and a document's sets in the larger (the
/// query's when the sizes tie), with which of the two is inside, if it meets `threshold`.
fn inside<S: Shingle>(query: &[S], doc: &[S], threshold: f64) -> Option<(Contained, Inside)> {
    Some(if is_smaller(query.len(), 0, doc.len(), 1) {
        (contained((0, query), (1, doc), threshold)?, Inside::Query)
    } else {
        (
            contained((1, doc), (0, query), threshold)?,
            Inside::Document,
        )
    })
}
