//! The LSH run with its per-document state on disk, for corpora larger than memory.
//!
//! Reading: each batch is shingled and sketched in parallel; its texts are appended to a
//! file, its band records `(key, document)` to one file per band, its set fingerprints
//! to an external sorter ([`crate::spill::runs`]). Then, in order:
//! 1. the fingerprints, merged, give the groups of identical sets (checked set against
//!    set, so a 128-bit collision merges nothing);
//! 2. each band's records, sorted by key (in memory when the band fits, else through
//!    sorted runs), give each bucket's representatives and so the candidate pairs, which
//!    go to another sorter;
//! 3. the candidates, merged and deduplicated, are verified in batches: a batch reads the
//!    texts it needs in the order they lie in the file and shingles them again (a text
//!    is smaller than its set, and shingling a short one takes about a microsecond);
//! 4. for pairs, the search around the largest groups of copies reads every text once,
//!    and the shared-neighbour step proposes, from the verified pairs sorted by
//!    document, pairs of neighbours that were no candidate yet.
//!
//! Per document a few words stay in memory: where its text starts, its set's size, its
//! group. Candidates, verification and clustering are those of the in-memory run, so the
//! pairs and clusters are the same.

use std::time::Instant;

use rayon::prelude::*;

use crate::candidates::band_index::bucket_key;
use crate::candidates::large_groups::{LargeGroups, Scratch};
use crate::candidates::neighbours::MAX_NEIGHBOURS;
use crate::candidates::source::{verify_from, CandidateSource, Halt, Judge, Take};
use crate::cluster::clusters::{Clusters, Similarity};
use crate::corpus::sets::set_fingerprint;
use crate::corpus::slot::check_documents;
use crate::error::{Error, Result};
use crate::run::observer::Observer;
use crate::run::pairs::{Groups, Pair};
use crate::run::pipeline::Pipeline;
use crate::run::stats::{Stage, Stats};
use crate::run::stream::{documents_in_pairs, Emitter, PairTotals};
use crate::sketch::document::{DocSet, DocSketch};
use crate::sketch::family::FamilySet;
use crate::spill::bands::BandFiles;
use crate::spill::runs::Sorter;
use crate::spill::texts::TextFile;
use crate::spill::SpillOptions;
use crate::text::ids::{distinct_ids, shingle_ids, SketchInput};
use crate::verify::jaccard::Verification;
use crate::verify::verifier::{passed, Tally, Verdict};

/// A document pair, as the sorters hold it.
type Link = (u32, u32);

/// Either the library's error or the consumer's, which stops a stream.
enum Stop<E> {
    Lib(Error),
    Sink(E),
}

impl<E> From<Error> for Stop<E> {
    fn from(e: Error) -> Self {
        Stop::Lib(e)
    }
}

/// The public shape of a stream's result: the library's error outside, the consumer's
/// inside.
fn split<T, E>(r: std::result::Result<T, Stop<E>>) -> Result<std::result::Result<T, E>> {
    match r {
        Ok(t) => Ok(Ok(t)),
        Err(Stop::Sink(e)) => Ok(Err(e)),
        Err(Stop::Lib(e)) => Err(e),
    }
}

/// Builds a spilled corpus batch by batch: see [`Pipeline::spill_batches`](crate::Pipeline::spill_batches).
pub struct SpillBatches<'p> {
    pipeline: &'p Pipeline,
    options: SpillOptions,
    texts: TextFile,
    /// Each document's set size: which families it is in.
    sizes: Vec<u32>,
    bands: BandFiles,
    prints: Sorter<(u128, u32)>,
    stats: Stats,
}

impl Pipeline {
    /// A run whose sets, band keys and candidates spill to temporary files in
    /// `options.dir()`, for corpora whose in-memory run would not fit: add the texts in
    /// batches, then [`SpillBatches::finish`] and ask the [`Spilled`] corpus for its
    /// pairs or clusters. They are those of [`Pipeline::for_each_pair_chunk`] and
    /// [`Pipeline::cluster_set`] (pairs in another order). Only exact verification (the
    /// default) spills: estimates need every signature at hand.
    ///
    /// ```
    /// use neardup::{Config, Pipeline, Quiet, SpillOptions};
    /// let pipeline = Pipeline::new(Config::builder().threshold(0.5).build()?)?;
    /// let dir = std::env::temp_dir();
    /// let mut batches = pipeline.spill_batches(SpillOptions::new(&dir).memory(1 << 20))?;
    /// batches.add(&["the quick brown fox jumps", "the quick brown fox jumped"])?;
    /// batches.add(&["an entirely different text"])?;
    /// let mut pairs = Vec::new();
    /// let (totals, _stats) = batches.finish()?.for_each_pair_chunk(&mut Quiet, |chunk| {
    ///     pairs.extend(chunk.iter().map(|p| (p.a, p.b)));
    ///     Ok::<(), ()>(())
    /// })?.unwrap();
    /// assert_eq!(pairs, [(0, 1)]);
    /// assert_eq!(totals.documents, 2);
    /// # Ok::<(), neardup::Error>(())
    /// ```
    pub fn spill_batches(&self, options: SpillOptions) -> Result<SpillBatches<'_>> {
        if !self.config.sketch().is_minhash() {
            return Err(Error::NotForSimHash("spilling to disk"));
        }
        let v = self.config.verification();
        if v != Verification::Exact {
            return Err(Error::SpillNeedsExact(v.name().to_string()));
        }
        if self.config.sketch_input() != SketchInput::Ids {
            return Err(Error::CorpusSketchesIds);
        }
        let memory = options.memory_bytes();
        let slots = self.families.len() * self.config.plan().bands();
        Ok(SpillBatches {
            pipeline: self,
            texts: TextFile::new(options.dir())?,
            sizes: Vec::new(),
            bands: BandFiles::new(options.dir(), slots),
            prints: Sorter::new(options.dir(), memory),
            options,
            stats: Stats::default(),
        })
    }
}

impl<'p> SpillBatches<'p> {
    /// Shingles and sketches a batch of texts in parallel and spills them, in order. A
    /// batch that would take the corpus past [`MAX_DOCUMENTS`](crate::corpus::MAX_DOCUMENTS) is
    /// refused whole.
    pub fn add<T: AsRef<str> + Sync>(&mut self, texts: &[T]) -> Result<()> {
        let first = self.texts.len();
        check_documents(first.saturating_add(texts.len()))?;
        let start = Instant::now();
        let p = self.pipeline;
        let made: Vec<_> = texts
            .par_iter()
            .map(|t| {
                let set = p.shingle_doc(t.as_ref());
                let sketch = p.sketch_doc_keys(&set);
                let print = set_fingerprint(set.set());
                (set, sketch, print)
            })
            .collect();
        let bands = p.config.plan().bands();
        for (i, (set, sketch, print)) in made.into_iter().enumerate() {
            let doc = (first + i) as u32;
            self.texts.push(texts[i].as_ref())?;
            // Its size as a corpus counts it (in ids), at most `max_shingles`, below 2^32.
            let size = distinct_ids(set.set());
            self.sizes.push(size as u32);
            let s = &mut self.stats;
            s.shingles += size as u64;
            s.empty += set.set().is_empty() as u64;
            s.short_documents += set.is_short() as u64;
            s.truncated += set.is_truncated() as u64;
            // Equal prefixes of truncated documents say nothing of the rest.
            if !set.set().is_empty() && !set.is_truncated() {
                self.prints.push((print, doc))?;
            }
            for part in sketch.families() {
                for (band, &key) in part.band_keys().iter().enumerate() {
                    let slot = part.family() * bands + band;
                    self.bands.push(slot, bucket_key(key), doc)?;
                }
            }
        }
        self.stats.spend(Stage::Shingle, start.elapsed());
        Ok(())
    }

    /// Documents added so far.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True if no document was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Groups the identical sets and hands the corpus on for pairs or clusters.
    pub fn finish(mut self) -> Result<Spilled<'p>> {
        self.texts.seal()?;
        let start = Instant::now();
        let n = self.texts.len();
        // First each document's representative, then, in place, its set's number.
        let mut set_of: Vec<u32> = (0..n as u32).collect();
        let mut groups: Vec<Vec<u32>> = Vec::new();
        let mut members: Vec<u32> = Vec::new();
        let mut at = None;
        let (texts, p) = (&self.texts, self.pipeline);
        let set = |d: u32| -> Result<DocSet> { Ok(p.shingle_doc(&texts.get(d)?)) };
        let mut close = |members: &mut Vec<u32>, set_of: &mut [u32]| -> Result<()> {
            if members.len() > 1 {
                let first = members[0];
                let base = set(first)?;
                let mut group = vec![first];
                for &m in &members[1..] {
                    if set(m)?.set() == base.set() {
                        group.push(m);
                        set_of[m as usize] = first;
                    }
                }
                if group.len() > 1 {
                    groups.push(group);
                }
            }
            members.clear();
            Ok(())
        };
        for record in self.prints.finish()? {
            let (print, doc) = record?;
            if at != Some(print) {
                close(&mut members, &mut set_of)?;
                at = Some(print);
            }
            members.push(doc);
        }
        close(&mut members, &mut set_of)?;
        groups.sort_unstable_by_key(|g| g[0]);
        let mut first_doc = Vec::new();
        for d in 0..n {
            let rep = set_of[d] as usize;
            set_of[d] = if rep == d {
                first_doc.push(d as u32);
                (first_doc.len() - 1) as u32
            } else {
                set_of[rep]
            };
        }
        let mut stats = self.stats;
        stats.documents = n as u64;
        stats.identical = (n - first_doc.len()) as u64;
        stats.spend(Stage::Group, start.elapsed());
        Ok(Spilled {
            pipeline: self.pipeline,
            options: self.options,
            texts: self.texts,
            sizes: self.sizes,
            bands: Some(self.bands),
            reps: bits(&first_doc, n),
            set_of,
            first_doc,
            groups: Groups::from_groups(groups),
            stats,
            reference: 0,
        })
    }
}

/// A corpus spilled to disk, ready for its pairs or clusters (once: each consumes it).
pub struct Spilled<'p> {
    pipeline: &'p Pipeline,
    options: SpillOptions,
    texts: TextFile,
    sizes: Vec<u32>,
    bands: Option<BandFiles>,
    /// Each document's set, numbered in order of first appearance.
    set_of: Vec<u32>,
    /// Each set's first document (its representative).
    first_doc: Vec<u32>,
    /// The representatives as a bit set.
    reps: Vec<u64>,
    groups: Groups,
    stats: Stats,
    /// Documents `0..reference` are a reference corpus ([`Spilled::set_reference`]).
    reference: u32,
}

/// The bit set of `docs` among `n` documents.
fn bits(docs: &[u32], n: usize) -> Vec<u64> {
    let mut b = vec![0u64; n.div_ceil(64)];
    for &d in docs {
        b[d as usize / 64] |= 1 << (d % 64);
    }
    b
}

impl Spilled<'_> {
    /// Documents held.
    pub fn len(&self) -> usize {
        self.set_of.len()
    }

    /// True if there are no documents.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if the document has shingles (an empty one takes no part).
    pub fn has_shingles(&self, doc: u32) -> bool {
        self.sizes[doc as usize] > 0
    }

    /// Makes documents `0..n` a reference corpus, as
    /// [`Shingled::set_reference`](crate::corpus::Shingled::set_reference) does in memory.
    pub fn set_reference(&mut self, n: u32) -> Result<()> {
        crate::corpus::stages::check_reference(n, self.len())?;
        self.reference = n;
        Ok(())
    }

    /// The number of reference documents ([`Spilled::set_reference`]).
    pub fn reference(&self) -> u32 {
        self.reference
    }

    /// The length of a document's text in bytes, as given.
    pub fn text_len(&self, doc: u32) -> usize {
        self.texts.text_len(doc)
    }

    /// Counters and timings so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Bytes the texts take in the temporary folder.
    pub fn text_bytes(&self) -> u64 {
        self.texts.disk_bytes()
    }

    /// Documents' sets, made again from their texts: read in file order, shingled in
    /// parallel.
    fn doc_sets(&self, docs: &[u32]) -> Result<Vec<DocSet>> {
        let texts: Vec<String> = docs
            .iter()
            .map(|&d| self.texts.get(d))
            .collect::<Result<_>>()?;
        Ok(texts
            .par_iter()
            .map(|t| self.pipeline.shingle_doc(t))
            .collect())
    }

    fn representative(&self, doc: u32) -> u32 {
        self.first_doc[self.set_of[doc as usize] as usize]
    }

    /// True if the document stands for its set: one bit per document, so the walk over
    /// band records, in key order, finds it in cache rather than in two large arrays.
    fn is_representative(&self, doc: u32) -> bool {
        self.reps[doc as usize / 64] & (1 << (doc % 64)) != 0
    }

    /// The family two documents are compared in ([`FamilySet::shared`]) by their sizes.
    fn shared_family(&self, a: u32, b: u32) -> Option<usize> {
        let of =
            |d: u32| FamilySet::of_size(&self.pipeline.families, self.sizes[d as usize] as usize);
        of(a).shared(of(b))
    }

    /// A sorter of pairs, with a quarter of the memory (two may be filled while a batch
    /// of sets is verified).
    fn sorter(&self) -> Sorter<Link> {
        Sorter::new(self.options.dir(), self.options.memory_bytes() / 4)
    }

    /// Candidate pairs of representatives: those that share a bucket in a band of the
    /// family they are compared in; for clusters (`star`), only each bucket member's
    /// pair with the bucket's first, as the in-memory index links them.
    fn candidates(&mut self, star: bool, observer: &mut dyn Observer) -> Result<Sorter<Link>> {
        observer.start(Stage::Group, 0);
        let start = Instant::now();
        let bands = self.pipeline.config.plan().bands() as u32;
        let mut out = self.sorter();
        let mut bucket: Vec<u32> = Vec::new();
        let mut at = None;
        let memory = self.options.memory_bytes();
        let records = self.bands.take().map(|b| b.finish(memory)).transpose()?;
        for record in records.into_iter().flatten() {
            let (slot, key, doc) = record?;
            if at != Some((slot, key)) {
                self.bucket(at.map_or(0, |a| a.0 / bands), star, &mut bucket, &mut out)?;
                at = Some((slot, key));
            }
            if self.is_representative(doc) {
                bucket.push(doc);
            }
        }
        self.bucket(at.map_or(0, |a| a.0 / bands), star, &mut bucket, &mut out)?;
        self.stats.spend(Stage::Group, start.elapsed());
        observer.finish();
        Ok(out)
    }

    fn bucket(
        &mut self,
        family: u32,
        star: bool,
        bucket: &mut Vec<u32>,
        out: &mut Sorter<Link>,
    ) -> Result<()> {
        if bucket.len() > 1 {
            self.stats.buckets += 1;
            self.stats.largest_bucket = self.stats.largest_bucket.max(bucket.len() as u64);
            let firsts = if star { 1 } else { bucket.len() };
            for (i, &a) in bucket.iter().enumerate().take(firsts) {
                for &b in &bucket[i + 1..] {
                    if self.shared_family(a, b) == Some(family as usize) {
                        out.push((a, b))?;
                    }
                }
            }
        }
        bucket.clear();
        Ok(())
    }

    /// Candidate pairs verified at a time: their texts and sets (a shingle of 8 bytes per
    /// byte of text, at most) fit in half the sorting memory.
    fn batch_size(&self) -> usize {
        let docs = self.texts.len().max(1) as u64;
        let per_doc = 9 * (self.texts.disk_bytes() / docs) + 128;
        (self.options.memory_bytes() as u64 / 2 / (2 * per_doc + 8)).clamp(1 << 10, 1 << 22)
            as usize
    }

    /// Pairs of representatives with one of the largest groups of copies, found exactly
    /// ([`crate::candidates::large_groups`]) in one pass over the sets in file order; sorted.
    fn near_large_groups(&self) -> Result<Vec<Link>> {
        let groups = self.groups.all().iter().map(|g| (g.len(), g[0])).collect();
        let mut failed = None;
        let large = LargeGroups::new(
            groups,
            self.pipeline.config.tested_threshold(),
            |r| match self.doc_sets(&[r]) {
                Ok(mut s) => s.pop().map(|s| shingle_ids(s.set())).unwrap_or_default(),
                Err(e) => {
                    failed.get_or_insert(e);
                    Vec::new()
                }
            },
        );
        if let Some(e) = failed {
            return Err(e);
        }
        let Some(large) = large else {
            return Ok(Vec::new());
        };
        let reps: Vec<u32> = (self.first_doc.iter().copied())
            .filter(|&d| {
                let n = self.sizes[d as usize] as usize;
                n > 0 && large.reachable(n)
            })
            .collect();
        let mut out: Vec<Link> = Vec::new();
        for chunk in reps.chunks(1 << 14) {
            let sets = self.doc_sets(chunk)?;
            out.par_extend(
                chunk
                    .par_iter()
                    .zip(&sets)
                    .map_init(Scratch::default, |scratch, (&d, set)| {
                        large.near(d, &shingle_ids(set.set()), scratch)
                    })
                    .flatten_iter(),
            );
        }
        out.par_sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// True if two documents share a bucket in some band of `family`: their band keys,
    /// sketched again from their sets.
    fn collide(&self, a: u32, b: u32, family: usize) -> Result<bool> {
        let keys = |d: u32| -> Result<DocSketch> {
            let set = self.pipeline.shingle_doc(&self.texts.get(d)?);
            Ok(self.pipeline.sketch_doc_keys(&set))
        };
        let (x, y) = (keys(a)?, keys(b)?);
        // Bucket keys, as the band records hold them.
        Ok(match (x.band_keys(family), y.band_keys(family)) {
            (Some(p), Some(q)) => p
                .iter()
                .zip(q)
                .any(|(&u, &v)| bucket_key(u) == bucket_key(v)),
            _ => false,
        })
    }

    /// Verifies a batch of distinct pairs; the sets are read in file order.
    fn verify(
        &self,
        batch: &[Link],
        tally: &mut Tally,
        observer: &mut dyn Observer,
    ) -> Result<Vec<Pair>> {
        let mut docs: Vec<u32> = batch.iter().flat_map(|&(a, b)| [a, b]).collect();
        docs.sort_unstable();
        docs.dedup();
        let sets = self.doc_sets(&docs)?;
        let of = |d: u32| {
            let s = &sets[docs.binary_search(&d).expect("read above")];
            (s.set(), s.whole_signature())
        };
        let verdicts: Vec<Verdict> = batch
            .par_iter()
            .map(|&(a, b)| self.pipeline.verify_sets(of(a), of(b)))
            .collect();
        Ok(passed(batch, verdicts, tally, observer))
    }

    /// Verifies the distinct pairs of a sorted stream, batch by batch, handing each
    /// batch's verified pairs to `each` (and every distinct pair to `seen`, if given).
    fn verify_all<E>(
        &self,
        pairs: impl Iterator<Item = Result<Link>>,
        seen: Option<&mut Sorter<Link>>,
        tally: &mut Tally,
        observer: &mut dyn Observer,
        each: impl FnMut(&[Pair]) -> std::result::Result<(), Stop<E>>,
    ) -> std::result::Result<(), Stop<E>> {
        let mut source = Sorted {
            pairs,
            seen,
            size: self.batch_size(),
        };
        match verify_from(&mut source, &OnDisk(self), observer, each) {
            Ok(judged) => {
                *tally += judged.tally;
                Ok(())
            }
            Err(Halt::Failed(e)) => Err(Stop::Lib(e)),
            Err(Halt::Stopped(stop)) => Err(stop),
        }
    }

    /// Every similar pair, handed to `sink` in chunks as it is verified: the pairs inside
    /// groups of identical documents first, then the pairs between distinct sets by
    /// `(a, b)` of their representatives, then those found through shared neighbours.
    /// The same pairs as [`Pipeline::for_each_pair_chunk`] gives in memory, each once,
    /// `a < b`; the totals are the same too.
    ///
    /// Two kinds of error, one inside the other: the outer one is the library's (a
    /// temporary file could not be written or read), the inner one `sink`'s, which stops
    /// the stream.
    pub fn for_each_pair_chunk<E>(
        mut self,
        observer: &mut dyn Observer,
        sink: impl FnMut(&[Pair]) -> std::result::Result<(), E>,
    ) -> Result<std::result::Result<(PairTotals, Stats), E>> {
        let candidates = self.candidates(false, observer)?;
        let start = Instant::now();
        let large = if self.pipeline.config.neighbours() {
            self.near_large_groups()?
        } else {
            Vec::new()
        };
        let searched = start.elapsed();
        let groups = std::mem::take(&mut self.groups);
        let mut emitter = Emitter::new(&groups, sink);
        let identical = Similarity {
            jaccard: Some(1.0),
            estimate: None,
            truncated: false,
            hamming: None,
        };
        if let Err(e) = emitter.identical(identical) {
            return Ok(Err(e));
        }
        let before = emitter.sink_time;
        let out = self.stream_pairs(candidates, large, &mut emitter, observer);
        let mut stats = std::mem::take(&mut self.stats);
        split(out.map(|paired| {
            let mut totals = emitter.totals;
            totals.documents = documents_in_pairs(
                self.len(),
                |d| self.has_shingles(d),
                |d| self.representative(d),
                &groups,
                &paired,
            );
            // The large groups' search is verification's work; the consumer's time is not.
            stats.spend(Stage::Verify, searched);
            stats.remove_time(Stage::Verify, emitter.sink_time - before);
            (totals, stats)
        }))
    }

    fn stream_pairs<E, F: FnMut(&[Pair]) -> std::result::Result<(), E>>(
        &mut self,
        candidates: Sorter<Link>,
        large: Vec<Link>,
        emitter: &mut Emitter<'_, F>,
        observer: &mut dyn Observer,
    ) -> std::result::Result<Vec<bool>, Stop<E>> {
        let neighbours = self.pipeline.config.neighbours();
        let mut paired = vec![false; self.len()];
        let mut seen = neighbours.then(|| self.sorter());
        let mut links = neighbours.then(|| self.sorter());
        let (mut tally, mut heavy, mut near) =
            (Tally::default(), Tally::default(), Tally::default());
        observer.start(Stage::Verify, 0);
        let start = Instant::now();
        let mut note = |passed: &[Pair], emitter: &mut Emitter<'_, F>| {
            for p in passed {
                paired[p.a as usize] = true;
                paired[p.b as usize] = true;
                if let Some(links) = links.as_mut() {
                    links.push((p.a, p.b))?;
                    links.push((p.b, p.a))?;
                }
            }
            emitter.reps(passed).map_err(Stop::Sink)
        };
        self.verify_all(
            candidates.finish()?,
            seen.as_mut(),
            &mut tally,
            observer,
            |passed| note(passed, emitter),
        )?;
        // The large groups' pairs that were no candidate: those of their family that
        // share no bucket there.
        let mut fresh_large = Vec::new();
        for (a, b) in large {
            if let Some(family) = self.shared_family(a, b) {
                if !self.collide(a, b, family)? {
                    fresh_large.push((a, b));
                }
            }
        }
        let mut large_verified: Vec<Link> = Vec::new();
        self.verify_all(
            fresh_large.into_iter().map(Ok),
            None,
            &mut heavy,
            observer,
            |passed| {
                large_verified.extend(passed.iter().map(|p| (p.a, p.b)));
                note(passed, emitter)
            },
        )?;
        if let (Some(seen), Some(links)) = (seen, links) {
            let proposed = self.shared_neighbours(links)?;
            let fresh = Fresh {
                proposed: proposed.finish()?.peekable(),
                seen: seen.finish()?.peekable(),
            };
            let fresh = fresh.filter(|p| {
                p.as_ref().map_or(true, |&(a, b)| {
                    self.shared_family(a, b).is_some()
                        && large_verified.binary_search(&(a, b)).is_err()
                })
            });
            self.verify_all(fresh, None, &mut near, observer, |passed| {
                for p in passed {
                    paired[p.a as usize] = true;
                    paired[p.b as usize] = true;
                }
                emitter.reps(passed).map_err(Stop::Sink)
            })?;
        }
        observer.finish();
        let s = &mut self.stats;
        s.spend(Stage::Verify, start.elapsed());
        s.candidates = tally.candidates + heavy.candidates + near.candidates;
        s.verified = tally.verified + heavy.verified + near.verified;
        s.large_group_candidates = heavy.candidates;
        s.large_group_verified = heavy.verified;
        s.neighbour_candidates = near.candidates;
        s.neighbour_verified = near.verified;
        s.truncated_pairs = tally.truncated + heavy.truncated + near.truncated;
        Ok(paired)
    }

    /// Pairs of two verified neighbours of one document that has 2 to
    /// [`MAX_NEIGHBOURS`] of them, from the verified pairs in both directions.
    fn shared_neighbours(&self, links: Sorter<Link>) -> Result<Sorter<Link>> {
        let mut out = self.sorter();
        let mut list: Vec<u32> = Vec::new();
        let mut at = None;
        let mut propose = |list: &mut Vec<u32>| -> Result<()> {
            if (2..=MAX_NEIGHBOURS).contains(&list.len()) {
                for (i, &x) in list.iter().enumerate() {
                    for &y in &list[i + 1..] {
                        out.push((x, y))?;
                    }
                }
            }
            list.clear();
            Ok(())
        };
        for link in links.finish()? {
            let (x, y) = link?;
            if at != Some(x) {
                propose(&mut list)?;
                at = Some(x);
            }
            // One past the cap is enough to know the list is not eligible.
            if list.len() <= MAX_NEIGHBOURS {
                list.push(y);
            }
        }
        propose(&mut list)?;
        Ok(out)
    }

    /// Clusters, as [`Pipeline::cluster_set`] makes them in memory: the verified
    /// candidates link documents, and each document of a component is checked against
    /// its kept documents. `ranks` orders the documents for keeping (smaller first), in
    /// place of the configured keep policy, as [`Shingled::set_keep_ranks`] does.
    ///
    /// [`Shingled::set_keep_ranks`]: crate::corpus::Shingled::set_keep_ranks
    pub fn cluster_set(
        mut self,
        ranks: Option<&[u32]>,
        observer: &mut dyn Observer,
    ) -> Result<(Clusters, Stats)> {
        if let Some(r) = ranks {
            if r.len() != self.len() {
                return Err(Error::KeepRanks {
                    ranks: r.len(),
                    documents: self.len(),
                });
            }
        }
        let candidates = self.candidates(true, observer)?;
        observer.start(Stage::Verify, 0);
        let start = Instant::now();
        let mut links: Vec<Link> = Vec::new();
        let mut tally = Tally::default();
        let walked = self.verify_all::<std::convert::Infallible>(
            candidates.finish()?,
            None,
            &mut tally,
            observer,
            |passed| {
                links.extend(passed.iter().map(|p| (p.a, p.b)));
                Ok(())
            },
        );
        if let Err(Stop::Lib(e)) = walked {
            return Err(e);
        }
        observer.finish();
        self.stats.spend(Stage::Verify, start.elapsed());
        self.stats.candidates = tally.candidates;
        self.stats.verified = tally.verified;
        if self.pipeline.config.neighbours() {
            // A near-copy of a large group of copies that LSH missed would stay alone.
            let fresh: Vec<Link> = (self.near_large_groups()?.into_iter())
                .filter(|l| links.binary_search(l).is_err())
                .collect();
            let mut large = Tally::default();
            let mut found = Vec::new();
            let walked = self.verify_all::<std::convert::Infallible>(
                fresh.into_iter().map(Ok),
                None,
                &mut large,
                &mut crate::run::observer::Quiet,
                |passed| {
                    found.extend(passed.iter().map(|p| (p.a, p.b)));
                    Ok(())
                },
            );
            if let Err(Stop::Lib(e)) = walked {
                return Err(e);
            }
            self.stats.large_group_verified = large.verified;
            links.extend(found);
        }
        let failed = std::sync::Mutex::new(None);
        let similar = |kept: u32, doc: u32| {
            let read = |d: u32| match self.texts.get(d) {
                Ok(t) => Some(self.pipeline.shingle_doc(&t)),
                Err(e) => {
                    failed.lock().expect("not poisoned").get_or_insert(e);
                    None
                }
            };
            let (x, y) = (read(kept)?, read(doc)?);
            self.pipeline.verify_docs(&x, &y, None).passed()
        };
        let mut stats = std::mem::take(&mut self.stats);
        let groups = (&self.set_of[..], self.first_doc.len());
        let clusters = self.pipeline.cluster_groups(
            groups,
            |d| self.text_len(d),
            (ranks, self.reference),
            &links,
            &mut stats,
            observer,
            similar,
        );
        if let Some(e) = failed.into_inner().expect("not poisoned") {
            return Err(e);
        }
        Ok((clusters, stats))
    }
}

/// Candidate pairs read back sorted from disk: each distinct pair once (and to `seen`,
/// if given), in batches of `size` whose sets fit in memory.
struct Sorted<'s, I> {
    pairs: I,
    seen: Option<&'s mut Sorter<Link>>,
    size: usize,
}

impl<I: Iterator<Item = Result<Link>>> CandidateSource for Sorted<'_, I> {
    type Candidate = Link;
    type Error = Error;

    fn propose<G: From<Error>>(
        &mut self,
        take: &mut Take<'_, Link, G>,
    ) -> std::result::Result<(), G> {
        let mut batch = Vec::with_capacity(self.size);
        let mut last = None;
        let mut pairs = (&mut self.pairs).peekable();
        while let Some(pair) = pairs.next() {
            let pair = pair?;
            if last != Some(pair) {
                last = Some(pair);
                if let Some(seen) = self.seen.as_mut() {
                    seen.push(pair)?;
                }
                batch.push(pair);
            }
            if batch.len() == self.size || (pairs.peek().is_none() && !batch.is_empty()) {
                take(&batch)?;
                batch.clear();
            }
        }
        Ok(())
    }
}

/// Jaccard under the configured verification, on sets read back from disk.
struct OnDisk<'s, 'p>(&'s Spilled<'p>);

impl Judge<Link> for OnDisk<'_, '_> {
    type Found = Pair;
    type Error = Error;

    fn judge(
        &self,
        batch: &[Link],
        tally: &mut Tally,
        observer: &mut dyn Observer,
    ) -> Result<Vec<Pair>> {
        self.0.verify(batch, tally, observer)
    }
}

/// The proposed pairs (sorted, possibly repeated) that are not among the seen ones
/// (sorted, distinct), each once.
struct Fresh<P: Iterator<Item = Result<Link>>, S: Iterator<Item = Result<Link>>> {
    proposed: std::iter::Peekable<P>,
    seen: std::iter::Peekable<S>,
}

impl<P: Iterator<Item = Result<Link>>, S: Iterator<Item = Result<Link>>> Iterator for Fresh<P, S> {
    type Item = Result<Link>;

    fn next(&mut self) -> Option<Result<Link>> {
        loop {
            let pair = match self.proposed.next()? {
                Ok(p) => p,
                Err(e) => return Some(Err(e)),
            };
            while let Some(Ok(&(a, b))) = self.seen.peek().map(|r| r.as_ref()) {
                if (a, b) < pair {
                    self.seen.next();
                } else {
                    break;
                }
            }
            match self.seen.peek() {
                Some(Err(_)) => return self.seen.next(),
                Some(Ok(s)) if *s == pair => continue,
                _ => return Some(Ok(pair)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use crate::run::config::Config;
    use crate::run::observer::Quiet;

    /// Texts with near-copies, chains of them, exact copies (one group past the large-group
    /// size), empty and very short texts.
    fn texts(n: usize, seed: u64) -> Vec<String> {
        let mut rng = SplitMix64::new(seed);
        let word = |rng: &mut SplitMix64| format!("w{}", rng.next_u64() % 5000);
        let mut out: Vec<String> = Vec::new();
        for i in 0..n {
            let r = rng.next_u64() % 100;
            let text = if i > 0 && r < 25 {
                // A near-copy of an earlier text: one word changed.
                let src = &out[(rng.next_u64() % i as u64) as usize];
                let mut words: Vec<String> = src.split(' ').map(str::to_string).collect();
                let at = (rng.next_u64() % words.len() as u64) as usize;
                words[at] = word(&mut rng);
                words.join(" ")
            } else if i > 0 && r < 32 {
                out[(rng.next_u64() % i as u64) as usize].clone()
            } else if r < 34 {
                String::new()
            } else if r < 36 {
                "ab".to_string()
            } else {
                let len = 8 + rng.next_u64() % 40;
                (0..len)
                    .map(|_| word(&mut rng))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            out.push(text);
        }
        // A large group of copies, and near-copies of it that few bands may miss.
        let large = "a group of many copies of one text, said again and again";
        out.extend(std::iter::repeat_n(large.to_string(), 40));
        for w in ["again", "gain", "and", "text", "copies", "group", "said"] {
            out.push(large.replacen(w, "other", 1));
        }
        out
    }

    fn in_memory(p: &Pipeline, texts: &[String]) -> (Vec<Pair>, PairTotals, Stats, Clusters) {
        let sketched = p.sketch_texts(texts).unwrap();
        let mut pairs = Vec::new();
        let (totals, stats) = p
            .for_each_pair_chunk(&sketched, &mut Quiet, |c| {
                pairs.extend_from_slice(c);
                Ok::<(), ()>(())
            })
            .unwrap();
        pairs.sort_unstable_by_key(|p| (p.a, p.b));
        let (clusters, _) = p.cluster_set(&sketched, &mut Quiet);
        (pairs, totals, stats, clusters)
    }

    fn spilled<'p>(
        p: &'p Pipeline,
        texts: &[String],
        memory: usize,
        dir: &std::path::Path,
    ) -> Spilled<'p> {
        let mut b = p
            .spill_batches(SpillOptions::new(dir).memory(memory))
            .unwrap();
        for batch in texts.chunks(333) {
            b.add(batch).unwrap();
        }
        b.finish().unwrap()
    }

    #[test]
    fn a_spilled_run_finds_what_the_in_memory_run_finds() {
        let dir = tempfile::tempdir().unwrap();
        let texts = texts(3000, 11);
        // The default plan; one without the steps beyond the buckets; truncated
        // documents; and a plan of few bands, which misses pairs that those steps find.
        let cases = [
            (0.8, true, 1 << 20, None),
            (0.5, false, 1 << 20, None),
            (0.7, true, 24, None),
            (0.7, true, 1 << 20, Some((2, 6))),
        ];
        for (t, neighbours, max_shingles, bands) in cases {
            let config = Config::builder()
                .threshold(t)
                .neighbours(neighbours)
                .max_shingles(max_shingles)
                .bands(bands.map(|b: (usize, usize)| b.0))
                .rows(bands.map(|b| b.1))
                .build()
                .unwrap();
            let p = Pipeline::new(config).unwrap();
            let (want_pairs, want_totals, want, want_clusters) = in_memory(&p, &texts);
            assert!(want_pairs.len() > 500, "{} pairs", want_pairs.len());
            if bands.is_some() {
                assert!(
                    want.large_group_verified > 0 && want.neighbour_verified > 0,
                    "{want:?}"
                );
            }
            // Sorted in memory, and through many runs on disk.
            for memory in [1 << 30, 1] {
                let mut pairs = Vec::new();
                let s = spilled(&p, &texts, memory, dir.path());
                let (totals, stats) = s
                    .for_each_pair_chunk(&mut Quiet, |c| {
                        pairs.extend_from_slice(c);
                        Ok::<(), ()>(())
                    })
                    .unwrap()
                    .unwrap();
                let counted = |s: &Stats| {
                    [
                        s.documents,
                        s.empty,
                        s.identical,
                        s.truncated,
                        s.candidates,
                        s.verified,
                        s.large_group_candidates,
                        s.large_group_verified,
                        s.neighbour_candidates,
                        s.neighbour_verified,
                        s.truncated_pairs,
                    ]
                };
                assert_eq!(counted(&stats), counted(&want), "t {t} memory {memory}");
                pairs.sort_unstable_by_key(|p| (p.a, p.b));
                assert_eq!(pairs, want_pairs, "t {t} memory {memory}");
                assert_eq!(totals, want_totals, "t {t} memory {memory}");
                let s = spilled(&p, &texts, memory, dir.path());
                let (clusters, _) = s.cluster_set(None, &mut Quiet).unwrap();

                assert!(clusters == want_clusters, "t {t} memory {memory} bands {bands:?}: {} clusters removing {}, want {} removing {}", clusters.len(), clusters.removed(), want_clusters.len(), want_clusters.removed());
            }
        }
        // Every temporary file is unnamed: nothing is left in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_sink_error_stops_the_stream_and_estimates_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = Pipeline::new(Config::builder().threshold(0.5).build().unwrap()).unwrap();
        let texts = texts(500, 3);
        let out =
            spilled(&p, &texts, 1, dir.path()).for_each_pair_chunk(&mut Quiet, |_| Err("full"));
        assert_eq!(out.unwrap().unwrap_err(), "full");
        let estimate = Config::builder()
            .verification(Verification::Estimate)
            .build()
            .unwrap();
        let p = Pipeline::new(estimate).unwrap();
        assert!(matches!(
            p.spill_batches(SpillOptions::new(dir.path())).err(),
            Some(Error::SpillNeedsExact(v)) if v == "estimate"
        ));
        let gone = dir.path().join("missing");
        let p = Pipeline::new(Config::builder().build().unwrap()).unwrap();
        let err = p.spill_batches(SpillOptions::new(&gone)).err().unwrap();
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
