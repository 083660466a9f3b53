//! Band keys → candidates, by sorting `(key, doc)` records band by band.
//!
//! Documents whose keys agree in some band share a bucket. For clustering, each bucket links
//! every member to its first member (m − 1 links, never m(m − 1)/2). For pairs, every pair
//! of a bucket is a candidate, but a pair is produced only in the *first* band where the two
//! collide, so it is verified once however many bands it shares — no global set of seen
//! pairs — and huge buckets are walked in bounded chunks.

use rayon::prelude::*;

use crate::corpus::slot::{doc_id, Slot};

/// A band key as the bucket index holds it: the top 32 bits of the band's 64-bit key
/// ([`bucket_key`]). Half the memory of the whole key, in the corpus and in every sorted
/// record. Two documents whose bands differ share a key with probability 2⁻³²: among
/// 10⁶ documents that is about 116 chance pairs per band. Each is one more candidate,
/// judged like any other by verification; a run without it (`--verify none`, raw
/// candidates) reports it as one.
pub type BucketKey = u32;

/// The bucket key of a band's 64-bit key.
#[inline]
pub fn bucket_key(key: u64) -> BucketKey {
    (key >> 32) as u32
}

/// Where a [`BandIndex`] reads each document's band keys: the corpus's own rows (no
/// copy), or rows handed to [`BandIndex::build`].
pub trait BandKeys: Sync {
    /// The keys of `doc` in the bands of `family` (one per band of the family), if it
    /// takes part there.
    fn keys_in(&self, family: usize, doc: u32) -> Option<&[BucketKey]>;
}

/// Band keys held as rows, one per document that has keys (see [`BandIndex::build`]).
#[derive(Debug, Clone)]
struct KeyRows {
    /// Keys per row: every band of every family.
    width: usize,
    family_width: usize,
    /// Row-major: `keys[row * width + band]`.
    keys: Vec<BucketKey>,
    /// Each document's row, if it has one: documents without keys (identical copies,
    /// empty documents) cost 4 bytes here, not a row.
    slot: Vec<Slot>,
}

impl BandKeys for KeyRows {
    fn keys_in(&self, family: usize, doc: u32) -> Option<&[BucketKey]> {
        let row = self.slot.get(doc as usize)?.get()? as usize;
        let start = row * self.width + family * self.family_width;
        self.keys.get(start..start + self.family_width)
    }
}

/// The keys an index reads.
enum Keys<'a> {
    Rows(KeyRows),
    Borrowed(&'a dyn BandKeys),
}

impl Keys<'_> {
    fn get(&self) -> &dyn BandKeys {
        match self {
            Keys::Rows(rows) => rows,
            Keys::Borrowed(keys) => *keys,
        }
    }
}

/// Band keys of every document, grouped per band by sorting.
pub struct BandIndex<'a> {
    bands: usize,
    /// Bands per sketch family: family f owns bands f·w .. (f+1)·w.
    family_width: usize,
    keys: Keys<'a>,
    /// Per band, the `(key, doc)` records of the buckets of two or more documents, sorted
    /// (a record alone in its bucket is never walked, and most are alone).
    sorted: Vec<Vec<(BucketKey, u32)>>,
}

/// A candidate pair `a < b` and the first band in which they collide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Candidate {
    /// The lower document index.
    pub a: u32,
    /// The higher document index.
    pub b: u32,
    /// The band that produced the pair.
    pub band: u32,
}

impl<'a> BandIndex<'a> {
    /// Groups documents by their band keys.
    ///
    /// `keys` holds one row of `bands` keys for each document of `docs` (sorted), in that
    /// order: `keys[i * bands + band]` is `docs[i]`'s; in each band only the documents
    /// listed in `members[band]` (all in `docs`) take part in buckets. A document absent
    /// from a band must hold a key no other document has there, so that
    /// [`BandIndex::collided_earlier`] never matches on it.
    ///
    /// Bands come in families of `family_width` (one per sketch family); a pair belongs to
    /// the first band where it collides *within* a family.
    ///
    /// # Panics
    ///
    /// If the arguments disagree: `keys` is not one row per document, `bands` is 0, past
    /// `u32::MAX` or not a multiple of `family_width`, `members` is not one list per band,
    /// or a member is not in `docs`.
    pub fn build(
        bands: usize,
        family_width: usize,
        keys: Vec<BucketKey>,
        docs: &[u32],
        members: &[&[u32]],
    ) -> BandIndex<'static> {
        assert!(
            bands > 0 && keys.len() == docs.len() * bands,
            "one row of keys per document"
        );
        let mut slot = vec![Slot::NONE; docs.last().map_or(0, |&d| d as usize + 1)];
        for (row, &d) in docs.iter().enumerate() {
            // Rows are fewer than documents.
            slot[d as usize] = Slot::new(doc_id(row));
        }
        let rows = KeyRows {
            width: bands,
            family_width,
            keys,
            slot,
        };
        BandIndex::grouped(bands, family_width, Keys::Rows(rows), members)
    }

    /// Groups documents by the band keys `keys` holds, without copying them: family f's
    /// keys of a document are its keys in bands f·w .. (f+1)·w (w = `family_width`). In
    /// each band only the documents of `members[band]` take part in buckets; a document
    /// with no keys in a family never collides there.
    ///
    /// # Panics
    ///
    /// As [`BandIndex::build`]; also if a member has no keys in its band's family.
    pub fn over(
        bands: usize,
        family_width: usize,
        keys: &'a dyn BandKeys,
        members: &[&[u32]],
    ) -> BandIndex<'a> {
        BandIndex::grouped(bands, family_width, Keys::Borrowed(keys), members)
    }

    fn grouped(bands: usize, family_width: usize, keys: Keys<'a>, members: &[&[u32]]) -> Self {
        assert!(bands > 0, "at least one band");
        assert!(u32::try_from(bands).is_ok(), "bands are numbered with u32");
        assert!(
            family_width > 0 && bands.is_multiple_of(family_width),
            "whole families"
        );
        assert_eq!(members.len(), bands, "one member list per band");
        let source = keys.get();
        let sorted = (0..bands)
            .into_par_iter()
            .map_init(
                || (Vec::new(), crate::text::uniform_sort::Scratch::default()),
                |(recs, scratch), band| {
                    let (family, offset) = (band / family_width, band % family_width);
                    recs.clear();
                    recs.extend(members[band].iter().map(|&d| {
                        let keys = source
                            .keys_in(family, d)
                            .expect("every band member has keys in its family");
                        (keys[offset], d)
                    }));
                    // The key's bits on top, the document below: the tuple's own order.
                    crate::text::uniform_sort::sort(recs, scratch, |r| {
                        (u64::from(r.0) << 32) | u64::from(r.1)
                    });
                    shared_buckets(recs)
                },
            )
            .collect();
        BandIndex {
            bands,
            family_width,
            keys,
            sorted,
        }
    }

    /// True if `a` and `b` share a key in one of the `bands`, all of one family.
    fn share_key(&self, a: u32, b: u32, bands: std::ops::Range<usize>) -> bool {
        if bands.is_empty() {
            return false;
        }
        let family = bands.start / self.family_width;
        let offsets = bands.start % self.family_width..(bands.end - 1) % self.family_width + 1;
        let keys = self.keys.get();
        match (keys.keys_in(family, a), keys.keys_in(family, b)) {
            (Some(ka), Some(kb)) => ka[offsets.clone()]
                .iter()
                .zip(&kb[offsets])
                .any(|(x, y)| x == y),
            _ => false,
        }
    }

    /// Number of bands.
    pub fn bands(&self) -> usize {
        self.bands
    }

    /// The buckets of one band with two or more members, each as a sorted run of records.
    fn buckets(&self, band: usize) -> impl Iterator<Item = &[(BucketKey, u32)]> {
        self.sorted[band]
            .chunk_by(|x, y| x.0 == y.0)
            .filter(|run| run.len() > 1)
    }

    /// The sketch family a band belongs to.
    pub fn family_of(&self, band: u32) -> usize {
        band as usize / self.family_width
    }

    /// Links from every bucket member to the bucket's first (lowest) document, over all
    /// bands, deduplicated and sorted; `keep(a, b, band)` filters them.
    pub fn links(&self, keep: impl Fn(u32, u32, u32) -> bool + Sync) -> Vec<(u32, u32)> {
        let mut links: Vec<(u32, u32)> = (0..self.bands)
            .into_par_iter()
            .flat_map_iter(|band| {
                let keep = &keep;
                self.buckets(band)
                    .flat_map(|run| run[1..].iter().map(move |&(_, d)| (run[0].1, d)))
                    .filter(move |&(a, b)| keep(a, b, band as u32))
                    .collect::<Vec<_>>()
            })
            .collect();
        links.par_sort_unstable();
        links.dedup();
        links
    }

    /// True if `a` and `b` collide in an earlier band of `band`'s family: the pair belongs
    /// to that band.
    pub fn collided_earlier(&self, a: u32, b: u32, band: u32) -> bool {
        let start = self.family_of(band) * self.family_width;
        self.share_key(a, b, start..band as usize)
    }

    /// True if `a` and `b` share a bucket in some band of a family: LSH made them a
    /// candidate there.
    pub fn collide_in_family(&self, a: u32, b: u32, family: usize) -> bool {
        let range = family * self.family_width..((family + 1) * self.family_width).min(self.bands);
        self.share_key(a, b, range)
    }

    /// Walks every pair of every bucket, band by band, handing them to `f` in chunks of at
    /// most `chunk` (memory stays bounded however large a bucket is).
    ///
    /// The same pair appears once per band in which it collides; keep only those for which
    /// [`BandIndex::collided_earlier`] is false to see each distinct pair once. An error
    /// from `f` stops the walk and is returned.
    pub fn for_each_pair_chunk<E>(
        &self,
        chunk: usize,
        mut f: impl FnMut(&[Candidate]) -> Result<(), E>,
    ) -> Result<(), E> {
        let chunk = chunk.max(1);
        let mut buf = Vec::with_capacity(chunk.min(1 << 16));
        for band in 0..self.bands {
            for run in self.buckets(band) {
                for (i, &(_, a)) in run.iter().enumerate() {
                    for &(_, b) in &run[i + 1..] {
                        buf.push(Candidate {
                            a,
                            b,
                            band: band as u32,
                        });
                        if buf.len() == chunk {
                            f(&buf)?;
                            buf.clear();
                        }
                    }
                }
            }
        }
        if !buf.is_empty() {
            f(&buf)?;
        }
        Ok(())
    }

    /// The number of buckets with two or more members, and the size of the largest.
    pub fn bucket_stats(&self) -> (u64, usize) {
        let mut count = 0u64;
        let mut largest = 0;
        for band in 0..self.bands {
            for run in self.buckets(band) {
                count += 1;
                largest = largest.max(run.len());
            }
        }
        (count, largest)
    }
}

/// The records of `sorted` that share their key with another, in order.
fn shared_buckets(sorted: &[(BucketKey, u32)]) -> Vec<(BucketKey, u32)> {
    let shared = |run: &&[(BucketKey, u32)]| run.len() > 1;
    let len = sorted
        .chunk_by(|x, y| x.0 == y.0)
        .filter(shared)
        .map(<[_]>::len)
        .sum();
    let mut out = Vec::with_capacity(len);
    for run in sorted.chunk_by(|x, y| x.0 == y.0).filter(shared) {
        out.extend_from_slice(run);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5 docs, 2 bands. Band 0: {0,1,2} share key 7; band 1: {1,2} and {3,4} share keys.
    fn index() -> BandIndex<'static> {
        let keys = vec![
            7, 100, // doc 0
            7, 5, // doc 1
            7, 5, // doc 2
            8, 6, // doc 3
            9, 6, // doc 4
        ];
        let all: &[u32] = &[0, 1, 2, 3, 4];
        BandIndex::build(2, 2, keys, all, &[all, all])
    }

    #[test]
    fn links_go_to_the_first_member() {
        assert_eq!(
            index().links(|_, _, _| true),
            vec![(0, 1), (0, 2), (1, 2), (3, 4)]
        );
        assert_eq!(index().links(|_, _, band| band == 1), vec![(1, 2), (3, 4)]);
    }

    #[test]
    fn each_distinct_pair_belongs_to_its_first_band() {
        let idx = index();
        let mut all = Vec::new();
        idx.for_each_pair_chunk(2, |c| {
            assert!(c.len() <= 2);
            all.extend_from_slice(c);
            Ok::<(), ()>(())
        })
        .unwrap();
        // Band 0: (0,1) (0,2) (1,2); band 1: (1,2) again and (3,4).
        assert_eq!(all.len(), 5);
        let firsts: Vec<(u32, u32)> = all
            .iter()
            .filter(|c| !idx.collided_earlier(c.a, c.b, c.band))
            .map(|c| (c.a, c.b))
            .collect();
        assert_eq!(firsts, vec![(0, 1), (0, 2), (1, 2), (3, 4)]);
        assert_eq!(idx.bucket_stats(), (3, 3));
    }

    #[test]
    fn earlier_collisions_count_only_within_a_family() {
        // Two families of one band each: docs 0 and 1 collide in both.
        let keys = vec![5, 6, 5, 6];
        let all: &[u32] = &[0, 1];
        let idx = BandIndex::build(2, 1, keys, all, &[all, all]);
        assert!(!idx.collided_earlier(0, 1, 0));
        assert!(!idx.collided_earlier(0, 1, 1), "band 0 is another family");
        assert!(idx.collide_in_family(0, 1, 0) && idx.collide_in_family(0, 1, 1));
        let apart = BandIndex::build(2, 1, vec![5, 6, 5, 7], all, &[all, all]);
        assert!(apart.collide_in_family(0, 1, 0) && !apart.collide_in_family(0, 1, 1));
        assert_eq!(idx.family_of(1), 1);
    }

    /// Keys read where a caller holds them: doc 2 has none in family 0, doc 0 none in 1.
    struct Held;

    impl BandKeys for Held {
        fn keys_in(&self, family: usize, doc: u32) -> Option<&[BucketKey]> {
            match (family, doc) {
                (0, 0 | 1) => Some(&[5]),
                (1, 1 | 2) => Some(&[7]),
                _ => None,
            }
        }
    }

    #[test]
    fn an_index_over_held_keys_reads_them_in_place() {
        let idx = BandIndex::over(2, 1, &Held, &[&[0, 1], &[1, 2]]);
        assert_eq!(idx.links(|_, _, _| true), vec![(0, 1), (1, 2)]);
        assert!(idx.collide_in_family(0, 1, 0) && idx.collide_in_family(1, 2, 1));
        assert!(!idx.collide_in_family(0, 2, 0) && !idx.collide_in_family(0, 2, 1));
        assert!(!idx.collided_earlier(1, 2, 1), "band 0 is another family");
        assert_eq!(idx.bucket_stats(), (2, 2));
    }

    #[test]
    fn non_members_take_no_part() {
        let keys = vec![1, 1, 1];
        let idx = BandIndex::build(1, 1, keys, &[0, 2, 3], &[&[0, 2]]);
        assert_eq!(idx.links(|_, _, _| true), vec![(0, 2)]);
        // Documents without a row of keys (1, and 4 past the last) never collide.
        assert!(!idx.collide_in_family(0, 1, 0) && !idx.collide_in_family(4, 0, 0));
        assert!(
            idx.collide_in_family(0, 3, 0),
            "3 has keys, though not a member"
        );
    }
}
