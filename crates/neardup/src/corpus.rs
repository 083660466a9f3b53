//! The prepared corpus: each document's shingle set and signature, in flat arrays.

use rayon::prelude::*;

use crate::shingle::Shingler;
use crate::sketch::Sketch;

/// Why a document takes no part in matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// No shingles: the text is empty (after normalization, if on).
    Empty,
}

impl SkipReason {
    /// A stable snake_case code for reports.
    pub fn code(self) -> &'static str {
        match self {
            SkipReason::Empty => "empty",
        }
    }
}

/// Shingle sets (sorted, deduplicated) of all documents, stored back to back.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    offsets: Vec<usize>,
    hashes: Vec<u64>,
    lengths: Vec<usize>,
    signatures: Vec<u64>,
    num_perm: usize,
}

impl Corpus {
    /// Shingles every text in parallel; the order of documents is kept.
    pub fn shingle<T: AsRef<str> + Sync>(shingler: &Shingler, texts: &[T]) -> Self {
        let sets: Vec<Vec<u64>> = texts
            .par_iter()
            .map_init(Vec::new, |buf, t| {
                shingler.set_into(t.as_ref(), buf);
                buf.clone()
            })
            .collect();
        let mut offsets = Vec::with_capacity(sets.len() + 1);
        offsets.push(0);
        let mut total = 0;
        for s in &sets {
            total += s.len();
            offsets.push(total);
        }
        let mut hashes = Vec::with_capacity(total);
        for s in sets {
            hashes.extend_from_slice(&s);
        }
        Corpus {
            offsets,
            hashes,
            lengths: texts.iter().map(|t| t.as_ref().len()).collect(),
            signatures: Vec::new(),
            num_perm: 0,
        }
    }

    /// Computes every document's signature in parallel.
    pub fn sketch(&mut self, sketch: &dyn Sketch) {
        let k = sketch.num_perm();
        let mut signatures = vec![0u64; self.len() * k];
        signatures
            .par_chunks_mut(k.max(1))
            .enumerate()
            .for_each(|(d, out)| sketch.sketch_into(self.set(d as u32), out));
        self.signatures = signatures;
        self.num_perm = k;
    }

    /// Number of documents, skipped ones included.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True if there are no documents.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shingle set of a document: sorted, deduplicated.
    pub fn set(&self, doc: u32) -> &[u64] {
        let d = doc as usize;
        &self.hashes[self.offsets[d]..self.offsets[d + 1]]
    }

    /// The signature of a document, if the corpus was sketched.
    pub fn signature(&self, doc: u32) -> Option<&[u64]> {
        if self.num_perm == 0 {
            return None;
        }
        let d = doc as usize;
        Some(&self.signatures[d * self.num_perm..(d + 1) * self.num_perm])
    }

    /// The length of a document's text in bytes, as given.
    pub fn text_len(&self, doc: u32) -> usize {
        self.lengths[doc as usize]
    }

    /// Why a document is skipped, or `None` if it takes part.
    pub fn skip_reason(&self, doc: u32) -> Option<SkipReason> {
        self.set(doc).is_empty().then_some(SkipReason::Empty)
    }

    /// The documents that take part in matching, in order.
    pub fn members(&self) -> Vec<u32> {
        (0..self.len() as u32)
            .filter(|&d| self.skip_reason(d).is_none())
            .collect()
    }

    /// Total number of distinct shingles, summed over documents.
    pub fn total_shingles(&self) -> u64 {
        self.hashes.len() as u64
    }

    /// All shingle sets, for the exact join.
    pub fn sets(&self) -> Vec<&[u64]> {
        (0..self.len() as u32).map(|d| self.set(d)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingle::ShingleKind;
    use crate::sketch::ClassicMinHash;

    #[test]
    fn stores_sets_in_order_and_marks_empty() {
        let sh = Shingler::new(ShingleKind::Char(3));
        let texts = ["abcd", "", "  ", "abcd", "xyz"];
        let mut c = Corpus::shingle(&sh, &texts);
        assert_eq!(c.len(), 5);
        assert_eq!(c.set(0), sh.shingle_set("abcd").as_slice());
        assert_eq!(c.set(0), c.set(3));
        assert_eq!(c.skip_reason(1), Some(SkipReason::Empty));
        assert_eq!(c.skip_reason(2), Some(SkipReason::Empty));
        assert_eq!(c.members(), vec![0, 3, 4]);
        assert_eq!(c.total_shingles(), 2 + 2 + 1);
        assert_eq!(c.text_len(2), 2);
        assert!(c.signature(0).is_none());
        c.sketch(&ClassicMinHash::new(16, 3).unwrap());
        assert_eq!(c.signature(0), c.signature(3));
        assert_ne!(c.signature(0), c.signature(4));
    }
}
