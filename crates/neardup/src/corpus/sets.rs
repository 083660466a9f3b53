//! The shingled corpus: each document's shingle set and signature, in flat arrays.

use rayon::iter::Either;
use rayon::prelude::*;

use std::collections::HashMap;

use crate::candidates::band_index::{bucket_key, BucketKey};
use crate::candidates::bands::BandPlan;
#[cfg(test)]
use crate::corpus::slot::MAX_DOCUMENTS;
use crate::corpus::slot::{check_documents, doc_id, Slot};
use crate::error::Result;
use crate::sketch::classic::Sketch;
use crate::sketch::family::{Family, FamilySet};
use crate::text::ids::{extend_ids, Shingle, SketchInput};
use crate::text::shingle::Shingler;
use crate::verify::prefilter;

/// Length of the sketch of a truncated document's whole text (standard error of its
/// estimate √(J(1 − J)/256) ≤ 0.031).
pub const WHOLE_NUM_PERM: usize = 256;

/// Seed of the sketch of truncated documents' whole texts.
const WHOLE_SEED: u64 = 0x7768_6f6c_6573_6b31;

/// The sketch of whole documents: one-permutation hashing, fixed length and seed, so a
/// pair is estimated the same way whatever the configuration. Made once: its probe table
/// is built at first use.
fn whole_sketch() -> &'static crate::sketch::oph::OnePermutation {
    static SKETCH: std::sync::LazyLock<crate::sketch::oph::OnePermutation> =
        std::sync::LazyLock::new(|| {
            crate::sketch::oph::OnePermutation::new(WHOLE_NUM_PERM, WHOLE_SEED)
                .expect("valid sketch")
        });
    &SKETCH
}

/// The sketch ([`WHOLE_NUM_PERM`] values) of every shingle of a text, past the cap.
pub(crate) fn whole_signature_of(shingler: &Shingler, text: &str, input: SketchInput) -> Vec<u64> {
    let mut all = Vec::new();
    shingler.all_elements_into(text, &mut all);
    // In place: a truncated text's shingles are many, and a copy would double them.
    input.to_values(&mut all);
    whole_sketch().sketch(&all)
}

/// The estimated Jaccard of two whole documents when either was truncated, `None`
/// otherwise. Each is given by its set and, if truncated, the sketch of all its shingles;
/// a document that was not truncated is sketched from its complete set.
pub(crate) fn whole_estimate<S: Shingle>(
    a: (&[S], Option<&[u64]>),
    b: (&[S], Option<&[u64]>),
    input: SketchInput,
) -> Option<f64> {
    if a.1.is_none() && b.1.is_none() {
        return None;
    }
    let sig = |(set, whole): (&[S], Option<&[u64]>)| match whole {
        Some(s) => s.to_vec(),
        None => whole_sketch().sketch(&input.values(set)),
    };
    Some(crate::verify::jaccard::estimate(&sig(a), &sig(b)))
}

/// Seed of the 128-bit hash that finds identical shingle sets.
const SET_SEED: u64 = 0x7365_7473_6565_6431;

/// What one sketch family holds: a row for each document sketched with it, with the
/// row's band keys and, when verification needs them, its signature.
#[derive(Clone, Debug, Default)]
struct FamilySketches {
    num_perm: usize,
    bands: usize,
    /// Row of each distinct set (see [`Corpus::set_index`]), if it has one: copies share
    /// their set's row and cost nothing here.
    slot: Vec<Slot>,
    /// `bands` keys per row ([`BucketKey`]s of the keys of the full 64-bit signature).
    keys: Vec<BucketKey>,
    /// `num_perm` values per row, each the low 32 bits of the signature's value (enough
    /// for estimates: two different values agree by chance with probability 2⁻³²); empty
    /// if signatures are not kept.
    signatures: Vec<u32>,
}

impl FamilySketches {
    fn row(&self, set: u32) -> Option<usize> {
        Some(self.slot.get(set as usize)?.get()? as usize)
    }

    fn signature(&self, set: u32) -> Option<&[u32]> {
        let row = self.row(set)?;
        self.signatures
            .get(row * self.num_perm..(row + 1) * self.num_perm)
    }

    fn band_keys(&self, set: u32) -> Option<&[BucketKey]> {
        let row = self.row(set)?;
        Some(&self.keys[row * self.bands..(row + 1) * self.bands])
    }
}

/// What sketching keeps of each signature beside its band keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Kept {
    /// The signature's values (32 bits each), for estimates.
    pub(crate) signatures: bool,
    /// The prefilter's sketch of each long set ([`bbit`]), for exact verification.
    pub(crate) prefilter: bool,
}

/// Rows of `width` values of `v` for `n` rows, or `None` for each row if `v` is empty
/// (nothing of that kind is kept).
fn kept_rows<T: Send>(
    v: &mut [T],
    width: usize,
    n: usize,
) -> impl IndexedParallelIterator<Item = Option<&mut [T]>> + '_ {
    if v.is_empty() {
        Either::Right((0..n).into_par_iter().map(|_| None))
    } else {
        Either::Left(v.par_chunks_mut(width).map(Some))
    }
}

/// Refuses to number more than [`MAX_DOCUMENTS`](crate::corpus::MAX_DOCUMENTS) documents.
fn check_count(held: usize, adding: usize) -> Result<()> {
    check_documents(held.saturating_add(adding))
}

/// Builds a corpus batch by batch, so documents can be shingled while later ones are
/// still being read, and each batch's sets go straight into the flat arrays.
pub(crate) struct CorpusBuilder {
    shingler: Shingler,
    /// The seed of each set's SimHash, if the run compares fingerprints.
    simhash: Option<u64>,
    corpus: Corpus,
    /// The 128-bit hash of each distinct non-empty set added, and its index.
    seen: HashMap<u128, u32, foldhash::fast::FixedState>,
}

impl CorpusBuilder {
    /// An empty corpus to be shingled with `shingler`.
    pub fn new(shingler: Shingler) -> Self {
        CorpusBuilder {
            shingler,
            simhash: None,
            corpus: Corpus {
                offsets: vec![0],
                ..Corpus::default()
            },
            seen: HashMap::default(),
        }
    }

    /// Also gives each distinct set the SimHash of its first document's shingle counts.
    pub fn simhash(mut self, seed: Option<u64>) -> Self {
        self.simhash = seed;
        self
    }

    /// Shingles a batch of texts in parallel and appends them, in order.
    ///
    /// A set identical to an earlier document's is not stored again: the document is
    /// recorded as a copy of that one (its representative), so a corpus of many copies
    /// holds one set, whatever the number of copies. A batch that would take the corpus
    /// past [`MAX_DOCUMENTS`](crate::corpus::MAX_DOCUMENTS) is refused whole.
    pub fn add<T: AsRef<str> + Sync>(&mut self, texts: &[T]) -> Result<()> {
        check_count(self.corpus.len(), texts.len())?;
        // Per parallel task, its documents' sets back to back: one buffer per task, not
        // one allocation per document.
        const TASK: usize = 256;
        struct Part {
            /// The sets' 32-bit ids.
            flat: Vec<u32>,
            /// Each document's set length, hash and SimHash (0 if not wanted).
            sets: Vec<(usize, u128, u64)>,
            /// Truncated documents with the sketch of all their shingles.
            whole: Vec<(u32, Vec<u64>)>,
            short: u64,
        }
        let first_doc = self.corpus.len() as u32;
        let parts: Vec<Part> = texts
            .par_chunks(TASK)
            .enumerate()
            .map_init(Vec::new, |buf, (task, chunk)| {
                let mut part = Part {
                    flat: Vec::new(),
                    sets: Vec::with_capacity(chunk.len()),
                    whole: Vec::new(),
                    short: 0,
                };
                for (i, t) in chunk.iter().enumerate() {
                    let mut fingerprint = 0;
                    let info = self.shingler.shingle_info_with(t.as_ref(), buf, |sorted| {
                        if let Some(seed) = self.simhash {
                            fingerprint = crate::candidates::simhash::simhash(sorted, seed);
                        }
                    });
                    part.short += info.short as u64;
                    let start = part.flat.len();
                    extend_ids(buf, &mut part.flat);
                    part.sets
                        .push((part.flat.len() - start, set_fingerprint(buf), fingerprint));
                    if info.truncated {
                        // Past the cap: a sketch of every shingle, for the estimate. The
                        // batch was checked to fit in u32 numbering.
                        let doc = first_doc + (task * TASK + i) as u32;
                        let whole =
                            whole_signature_of(&self.shingler, t.as_ref(), SketchInput::Ids);
                        part.whole.push((doc, whole));
                    }
                }
                part
            })
            .collect();
        let c = &mut self.corpus;
        for part in parts {
            let truncated: Vec<u32> = part.whole.iter().map(|(d, _)| *d).collect();
            c.truncated += truncated.len() as u64;
            c.whole.extend(part.whole);
            let mut start = 0;
            for (len, hash, fingerprint) in part.sets {
                let set = &part.flat[start..start + len];
                start += len;
                let doc = c.set_of.len() as u32;
                c.total += len as u64;
                // Equal prefixes of truncated documents say nothing about the rest: they
                // are never copies nor representatives of copies.
                let whole_set = len > 0 && truncated.binary_search(&doc).is_err();
                // A 128-bit collision is not a reason to merge: the sets are compared.
                let first = whole_set
                    .then(|| self.seen.get(&hash).copied())
                    .flatten()
                    .filter(|&f| c.stored_set(f) == set);
                match first {
                    Some(f) => c.set_of.push(f),
                    None => {
                        let index = c.first_doc.len() as u32;
                        if whole_set {
                            self.seen.entry(hash).or_insert(index);
                        }
                        c.ids.extend_from_slice(set);
                        c.offsets.push(c.ids.len());
                        c.first_doc.push(doc);
                        c.set_of.push(index);
                        if self.simhash.is_some() {
                            c.simhash.push(fingerprint);
                        }
                    }
                }
            }
            c.short += part.short;
        }
        // Lengths past 4 GiB saturate (records are capped far below by the readers).
        c.lengths.extend(
            texts
                .iter()
                .map(|t| u32::try_from(t.as_ref().len()).unwrap_or(u32::MAX)),
        );
        Ok(())
    }

    /// The corpus, with its groups of identical sets.
    pub fn finish(self) -> Corpus {
        self.corpus
    }
}

/// The fingerprint of a shingle set: a 128-bit hash of its sorted, deduplicated values.
/// Identical sets have equal fingerprints; two different sets collide with probability
/// about 2⁻¹²⁸, and the corpus still compares the sets before it calls two documents copies.
///
/// ```
/// use neardup::Shingler;
/// use neardup::corpus::set_fingerprint;
/// let shingler = Shingler::default();
/// let a = shingler.shingle_set("Second-hand bicycle, barely used");
/// let b = shingler.shingle_set("second-hand  bicycle, barely used");
/// assert_eq!(set_fingerprint(&a), set_fingerprint(&b)); // equal after normalization
/// ```
pub fn set_fingerprint(set: &[u64]) -> u128 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::with_seed(SET_SEED);
    for h in set {
        hasher.update(&h.to_le_bytes());
    }
    hasher.digest128()
}

/// Shingle sets of all documents as 32-bit ids (the top half of each hash; sorted,
/// deduplicated), stored back to back, with the groups of identical sets and the
/// signatures of each group's representative.
///
/// Documents are numbered from 0 in the order they were given. A document with no
/// shingles (empty after normalization) takes no part in matching.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    /// Per distinct set stored, where it ends in `ids` (after a leading 0).
    offsets: Vec<usize>,
    ids: Vec<u32>,
    /// Each document's text length in bytes (saturating at `u32::MAX`).
    lengths: Vec<u32>,
    /// Each document's distinct set: an index into `offsets` and `first_doc`. A copy
    /// costs this entry and its length, nothing more.
    set_of: Vec<u32>,
    /// Per distinct set, the first document that has it (its representative).
    first_doc: Vec<u32>,
    /// Shingles summed over all documents, copies included.
    total: u64,
    families: Vec<FamilySketches>,
    /// Per distinct set, its row of prefilter sketches, if it has one.
    prefilter_rows: Vec<Slot>,
    /// [`prefilter::SKETCH_WORDS`] words per row.
    prefilter: Vec<u64>,
    truncated: u64,
    /// Truncated documents (in order) with the sketch of all their shingles.
    whole: Vec<(u32, Vec<u64>)>,
    short: u64,
    /// Per distinct set, the SimHash of its first document, if the run compares them.
    simhash: Vec<u64>,
}

impl Corpus {
    /// Shingles every text in parallel (the order of documents is kept) and groups
    /// documents whose shingle sets are identical.
    #[cfg(test)]
    pub(crate) fn shingle<T: AsRef<str> + Sync>(shingler: &Shingler, texts: &[T]) -> Self {
        let mut builder = CorpusBuilder::new(*shingler);
        builder.add(texts).expect("a small test corpus");
        builder.finish()
    }

    /// Sketches every representative with the family its size belongs to, in parallel,
    /// and keeps each signature's band keys under `plan`; the signatures themselves are
    /// kept (as 32-bit values) only if `kept.signatures`, as estimates need them and
    /// exact verification does not; sets of [`prefilter::MIN_SET`] shingles or more get the
    /// prefilter's sketch if `kept.prefilter`.
    pub(crate) fn sketch(
        &mut self,
        families: &[Family],
        plan: BandPlan,
        kept: Kept,
        prefilter_key: u64,
    ) {
        let reps = self.members();
        let b = plan.bands();
        let sets = self.distinct_sets();
        self.families = families
            .iter()
            .map(|family| {
                let k = family.sketch.num_perm();
                let chosen: Vec<u32> = reps
                    .iter()
                    .copied()
                    .filter(|&d| family.takes(self.set(d).len()))
                    .collect();
                let mut slot = vec![Slot::NONE; sets];
                for (row, &d) in chosen.iter().enumerate() {
                    slot[self.set_of[d as usize] as usize] = Slot::new(doc_id(row));
                }
                let mut keys = vec![0 as BucketKey; chosen.len() * b];
                let rows = |on: bool, width: usize| if on { chosen.len() * width } else { 0 };
                let mut signatures = vec![0u32; rows(kept.signatures, k)];
                let set = |d: u32| self.set(d);
                keys.par_chunks_mut(b.max(1))
                    .zip(kept_rows(&mut signatures, k, chosen.len()))
                    .zip(chosen.par_iter())
                    .for_each_init(
                        || (vec![0u64; k], vec![0u64; b], Vec::new()),
                        |(sig, wide, values), ((keys, out), &d)| {
                            SketchInput::Ids.values_into(set(d), values);
                            sketch_one(family, plan, values, sig, wide, out);
                            for (key, &w) in keys.iter_mut().zip(wide.iter()) {
                                *key = bucket_key(w);
                            }
                        },
                    );
                FamilySketches {
                    num_perm: k,
                    bands: b,
                    slot,
                    keys,
                    signatures,
                }
            })
            .collect();
        if kept.prefilter {
            self.sketch_prefilter(&reps, prefilter_key);
        }
    }

    /// The prefilter's sketch of every representative of [`prefilter::MIN_SET`] shingles or
    /// more.
    fn sketch_prefilter(&mut self, reps: &[u32], key: u64) {
        let long: Vec<u32> = reps
            .iter()
            .copied()
            .filter(|&d| self.set(d).len() >= prefilter::MIN_SET)
            .collect();
        let mut rows = vec![Slot::NONE; self.distinct_sets()];
        for (row, &d) in long.iter().enumerate() {
            rows[self.set_of[d as usize] as usize] = Slot::new(doc_id(row));
        }
        let mut sketches = vec![0u64; long.len() * prefilter::SKETCH_WORDS];
        sketches
            .par_chunks_mut(prefilter::SKETCH_WORDS)
            .zip(long.par_iter())
            .for_each_init(Vec::new, |values, (out, &d)| {
                SketchInput::Ids.values_into(self.set(d), values);
                prefilter::sketch(values, key, out);
            });
        self.prefilter_rows = rows;
        self.prefilter = sketches;
    }

    /// Number of documents, skipped ones included.
    pub fn len(&self) -> usize {
        self.set_of.len()
    }

    /// True if there are no documents.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shingle set of a document as 32-bit ids (the top half of each hash):
    /// sorted, deduplicated.
    pub fn set(&self, doc: u32) -> &[u32] {
        self.stored_set(self.set_of[doc as usize])
    }

    /// A distinct set by its index.
    fn stored_set(&self, index: u32) -> &[u32] {
        let i = index as usize;
        &self.ids[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The first document whose shingle set is identical to this one's (itself if none).
    pub fn representative(&self, doc: u32) -> u32 {
        self.first_doc[self.set_of[doc as usize] as usize]
    }

    /// Each document's distinct set, numbered from 0 in order of first appearance:
    /// documents with equal numbers have identical sets (empty documents and truncated
    /// ones each have their own). Below [`Corpus::distinct_sets`].
    pub fn set_index(&self) -> &[u32] {
        &self.set_of
    }

    /// Number of distinct sets (see [`Corpus::set_index`]).
    pub fn distinct_sets(&self) -> usize {
        self.first_doc.len()
    }

    /// Bytes of heap the corpus holds (capacities), for tests that bound what a
    /// document costs.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of_val;
        let families: usize = self
            .families
            .iter()
            .map(|f| f.slot.capacity() * 4 + f.keys.capacity() * 4 + f.signatures.capacity() * 4)
            .sum();
        self.offsets.capacity() * size_of_val(&0usize)
            + self.ids.capacity() * 4
            + self.lengths.capacity() * 4
            + self.set_of.capacity() * 4
            + self.first_doc.capacity() * 4
            + families
            + self.whole.capacity() * (4 + 24 + WHOLE_NUM_PERM * 8)
            + self.prefilter_rows.capacity() * 4
            + self.prefilter.capacity() * 8
    }

    /// True if some sets have the prefilter's sketch.
    pub(crate) fn has_prefilter(&self) -> bool {
        !self.prefilter.is_empty()
    }

    /// Number of sketch families the corpus was sketched with (0 if not sketched).
    pub(crate) fn num_families(&self) -> usize {
        self.families.len()
    }

    /// True if signatures were kept when sketching (estimates are available).
    pub(crate) fn has_signatures(&self) -> bool {
        self.families.iter().any(|f| !f.signatures.is_empty())
    }

    /// True if the document (or its representative) was sketched in a family.
    pub(crate) fn in_family(&self, family: usize, doc: u32) -> bool {
        self.families
            .get(family)
            .is_some_and(|f| f.row(self.set_of[doc as usize]).is_some())
    }

    /// A document's signature in one family (32-bit values), if it has one there and
    /// signatures were kept (copies use their representative's).
    pub(crate) fn signature_in(&self, family: usize, doc: u32) -> Option<&[u32]> {
        self.families
            .get(family)?
            .signature(self.set_of[doc as usize])
    }

    /// A document's band keys in one family (a copy has its representative's), if it
    /// was sketched there.
    pub(crate) fn band_keys_in(&self, family: usize, doc: u32) -> Option<&[BucketKey]> {
        self.families
            .get(family)?
            .band_keys(self.set_of[doc as usize])
    }

    /// The family in which two documents are compared: the last one both are in (none if
    /// the corpus was not sketched or one of them takes no part), so every pair is
    /// compared with exactly one sketch.
    pub(crate) fn shared_family(&self, a: u32, b: u32) -> Option<usize> {
        self.family_set(a).shared(self.family_set(b))
    }

    /// The families a document (or its representative) was sketched in.
    pub(crate) fn family_set(&self, doc: u32) -> FamilySet {
        (0..self.families.len())
            .filter(|&f| self.in_family(f, doc))
            .collect()
    }

    /// The prefilter's sketches of two documents, if both have one.
    pub(crate) fn prefilter_pair(&self, a: u32, b: u32) -> Option<(&[u64], &[u64])> {
        let sketch = |d: u32| {
            let row = self
                .prefilter_rows
                .get(self.set_of[d as usize] as usize)?
                .get()? as usize;
            let w = prefilter::SKETCH_WORDS;
            Some(&self.prefilter[row * w..(row + 1) * w])
        };
        Some((sketch(a)?, sketch(b)?))
    }

    /// Signatures of two documents in the family they are compared in, if kept.
    pub(crate) fn signature_pair(&self, a: u32, b: u32) -> Option<(&[u32], &[u32])> {
        let f = self.shared_family(a, b)?;
        Some((self.signature_in(f, a)?, self.signature_in(f, b)?))
    }

    /// The length of a document's text in bytes, as given.
    pub fn text_len(&self, doc: u32) -> usize {
        self.lengths[doc as usize] as usize
    }

    /// True if the document has shingles and so takes part in matching; false for a text
    /// that is empty after normalization (a front end reports it as skipped).
    pub fn has_shingles(&self, doc: u32) -> bool {
        !self.set(doc).is_empty()
    }

    /// Each document's set if it represents its group of identical sets, else the empty
    /// set: what the exact joins run on (a copy takes no part, its representative does).
    pub(crate) fn representative_sets(&self) -> Vec<&[u32]> {
        (0..self.len() as u32)
            .map(|d| {
                if self.representative(d) == d {
                    self.set(d)
                } else {
                    &[]
                }
            })
            .collect()
    }

    /// The SimHash of a document's set (of its group's first document), if the corpus
    /// was shingled for SimHash.
    pub fn simhash(&self, doc: u32) -> Option<u64> {
        let set = *self.set_of.get(doc as usize)?;
        self.simhash.get(set as usize).copied()
    }

    /// The Hamming distance of two documents' SimHashes, if the corpus has them.
    pub fn hamming(&self, a: u32, b: u32) -> Option<u32> {
        Some(crate::candidates::simhash::hamming(
            self.simhash(a)?,
            self.simhash(b)?,
        ))
    }

    /// The documents that take part in LSH, in order: not skipped, and each the
    /// representative of its group of identical sets.
    pub fn members(&self) -> Vec<u32> {
        // Distinct sets come in order of their first document.
        (0..self.distinct_sets() as u32)
            .filter(|&s| !self.stored_set(s).is_empty())
            .map(|s| self.first_doc[s as usize])
            .collect()
    }

    /// A corpus of the sets of `docs` only, in that order, each its own representative
    /// (the documents must have distinct sets): a sample to run a method on.
    pub(crate) fn subset(&self, docs: &[u32]) -> Corpus {
        let mut sub = Corpus {
            offsets: vec![0],
            ..Corpus::default()
        };
        for (i, &d) in docs.iter().enumerate() {
            let set = self.set(d);
            sub.ids.extend_from_slice(set);
            sub.offsets.push(sub.ids.len());
            sub.lengths.push(self.lengths[d as usize]);
            sub.set_of.push(doc_id(i));
            sub.first_doc.push(doc_id(i));
            sub.total += set.len() as u64;
            if let Some(f) = self.simhash(d) {
                sub.simhash.push(f);
            }
        }
        sub
    }

    /// Number of documents with each distinct set (see [`Corpus::set_index`]).
    pub fn set_sizes(&self) -> Vec<u32> {
        let mut sizes = vec![0u32; self.distinct_sets()];
        for &s in &self.set_of {
            sizes[s as usize] += 1;
        }
        sizes
    }

    /// Groups of two or more documents with identical (non-empty) shingle sets, each
    /// sorted, the representative first; groups in order of their representative.
    pub fn identical_groups(&self) -> Vec<Vec<u32>> {
        let sizes = self.set_sizes();
        // Per distinct set, its group's place in the output, if it has a group.
        let mut place = vec![Slot::NONE; sizes.len()];
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for (s, &n) in sizes.iter().enumerate() {
            if n > 1 {
                place[s] = Slot::new(doc_id(groups.len()));
                groups.push(Vec::with_capacity(n as usize));
            }
        }
        for (d, &s) in self.set_of.iter().enumerate() {
            if let Some(g) = place[s as usize].get() {
                groups[g as usize].push(doc_id(d));
            }
        }
        groups
    }

    /// Number of documents identical to an earlier one (not representatives, not skipped).
    pub fn identical_copies(&self) -> u64 {
        (self.len() - self.distinct_sets()) as u64
    }

    /// Documents longer than the shingle cap: their set holds their first shingles only.
    pub fn truncated(&self) -> u64 {
        self.truncated
    }

    /// True if the document had more shingle positions than the cap.
    pub fn is_truncated(&self, doc: u32) -> bool {
        self.whole_signature(doc).is_some()
    }

    /// The sketch ([`WHOLE_NUM_PERM`] values) of all the shingles of a truncated document;
    /// `None` if the document was not truncated.
    pub fn whole_signature(&self, doc: u32) -> Option<&[u64]> {
        let i = self.whole.binary_search_by_key(&doc, |w| w.0).ok()?;
        Some(&self.whole[i].1)
    }

    /// The estimated Jaccard of two whole documents when either was truncated (`None`
    /// otherwise): a truncated document's whole sketch against the other's, sketched from
    /// its complete set when it was not truncated.
    pub fn truncated_estimate(&self, a: u32, b: u32) -> Option<f64> {
        if self.whole.is_empty() {
            return None;
        }
        let doc = |d: u32| (self.set(d), self.whole_signature(d));
        whole_estimate(doc(a), doc(b), SketchInput::Ids)
    }

    /// Documents with fewer than `k` tokens (words for `word:K`, characters for `char:K`),
    /// empty ones not counted: each is a single shingle, so it matches only exact copies.
    pub fn short_documents(&self) -> u64 {
        self.short
    }

    /// Total number of distinct shingles, summed over documents.
    pub fn total_shingles(&self) -> u64 {
        self.total
    }
}

/// Sketches one set, given by the values its sketch hashes ([`SketchInput`]), with a
/// family: its band keys under `plan` into `keys` and, if `out` is given, the low 32 bits
/// of each signature value (enough for estimates: two different values agree by chance
/// with probability 2⁻³²). `sig` is scratch space.
pub(crate) fn sketch_one(
    family: &Family,
    plan: BandPlan,
    values: &[u64],
    sig: &mut [u64],
    keys: &mut [u64],
    out: Option<&mut [u32]>,
) {
    family.sketch.sketch_into(values, sig);
    plan.band_keys_into(sig, keys);
    for (o, &v) in out.into_iter().flatten().zip(sig.iter()) {
        *o = v as u32;
    }
}

/// The bucket index reads the corpus's band keys where they are.
impl crate::candidates::band_index::BandKeys for Corpus {
    fn keys_in(&self, family: usize, doc: u32) -> Option<&[BucketKey]> {
        self.band_keys_in(family, doc)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn copies_store_no_set_of_their_own() {
        let mut b = CorpusBuilder::new(Shingler::default());
        let texts = vec!["the same listing, twice and more"; 1000];
        b.add(&texts).unwrap();
        b.add(&[
            "The same listing,  twice and more",
            "",
            "something else entirely",
        ])
        .unwrap();
        let c = b.finish();
        let one = c.set(0).len();
        assert_eq!(
            c.ids.len(),
            one + c.set(1002).len(),
            "one set per distinct text"
        );
        assert_eq!(c.representative(999), 0);
        assert_eq!(c.representative(1000), 0, "identical after normalization");
        assert_eq!(c.set(1000), c.set(0));
        assert_eq!(c.representative(1001), 1001);
        assert!(!c.has_shingles(1001) && c.has_shingles(1000));
        assert_eq!(c.representative(1002), 1002);
        assert_eq!(c.total_shingles(), (1001 * one + c.set(1002).len()) as u64);
        assert_eq!(c.identical_copies(), 1000);
    }

    use super::*;
    use crate::error::Error;
    use crate::sketch::family::{families, SketchKind};

    /// A copy costs its set number and its length (8 bytes, doubled at worst by the
    /// vectors' growth), before and after sketching.
    #[test]
    fn copies_cost_a_few_bytes_each() {
        let n = 100_000;
        let texts = vec!["a listing that is copied many, many times"; 1 << 14];
        let mut b = CorpusBuilder::new(Shingler::default());
        let mut added = 0;
        while added < n {
            let batch = &texts[..(n - added).min(texts.len())];
            b.add(batch).unwrap();
            added += batch.len();
        }
        b.add(&["and one that is not"]).unwrap();
        let mut c = b.finish();
        assert_eq!((c.len(), c.distinct_sets()), (n + 1, 2));
        assert_eq!(c.identical_groups().len(), 1);
        assert_eq!(c.identical_groups()[0].len(), n);
        let per_doc = |c: &Corpus| c.heap_bytes() as f64 / n as f64;
        assert!(per_doc(&c) <= 16.0, "{} bytes per document", per_doc(&c));
        let plan = BandPlan::new(16, 8, 128).unwrap();
        let fams = families(SketchKind::OnePermutation, 128, 1, 0.8).unwrap();
        c.sketch(
            &fams,
            plan,
            Kept {
                signatures: true,
                prefilter: false,
            },
            0,
        );
        assert!(per_doc(&c) <= 16.0, "{} bytes per document", per_doc(&c));
    }

    use crate::text::ids::shingle_ids;
    use crate::text::shingle::ShingleKind;

    #[test]
    fn more_documents_than_u32_numbers_are_refused() {
        assert_eq!(check_count(MAX_DOCUMENTS - 5, 5), Ok(()));
        assert_eq!(
            check_count(MAX_DOCUMENTS - 5, 6),
            Err(Error::TooManyDocuments(MAX_DOCUMENTS + 1))
        );
        assert_eq!(
            check_count(usize::MAX, 1),
            Err(Error::TooManyDocuments(usize::MAX))
        );
    }

    #[test]
    fn stores_sets_in_order_and_marks_empty() {
        let sh = Shingler::new(ShingleKind::Char(3));
        let texts = ["abcd", "", "  ", "ABCD", "xyz", "abcd"];
        let mut c = Corpus::shingle(&sh, &texts);
        assert_eq!(c.len(), 6);
        assert_eq!(c.set(0), shingle_ids(&sh.shingle_set("abcd")));
        assert_eq!(c.set(0), c.set(3));
        assert!(!c.has_shingles(1) && !c.has_shingles(2));
        // "ABCD" normalizes to "abcd": the same set, represented by document 0.
        assert_eq!(c.representative(3), 0);
        assert_eq!(c.representative(5), 0);
        assert_eq!(c.members(), vec![0, 4]);
        assert_eq!(c.identical_groups(), vec![vec![0, 3, 5]]);
        assert_eq!(c.identical_copies(), 2);
        assert_eq!(c.total_shingles(), 2 + 2 + 1 + 2);
        assert_eq!(c.text_len(2), 2);
        assert!(c.signature_pair(0, 4).is_none());
        let plan = BandPlan::new(4, 4, 16).unwrap();
        c.sketch(
            &families(SketchKind::OnePermutation, 16, 3, 0.8).unwrap(),
            plan,
            Kept {
                signatures: true,
                prefilter: true,
            },
            0,
        );
        let (a, b) = c.signature_pair(0, 3).unwrap();
        assert_eq!(a, b, "a copy uses its representative's signature");
        let (a, b) = c.signature_pair(0, 4).unwrap();
        assert_ne!(a, b);
        // Small documents are in the classic family only.
        assert!(c.signature_in(0, 0).is_some() && c.signature_in(1, 0).is_none());
        assert!(c.in_family(0, 3) && !c.in_family(1, 3));
        assert_eq!(c.band_keys_in(0, 0).map(<[BucketKey]>::len), Some(4));
        // Without kept signatures, families and band keys stay; estimates go.
        c.sketch(
            &families(SketchKind::OnePermutation, 16, 3, 0.8).unwrap(),
            plan,
            Kept::default(),
            0,
        );
        assert!(c.signature_pair(0, 4).is_none());
        assert!(c.in_family(0, 4) && c.band_keys_in(0, 4).is_some());
    }
}
