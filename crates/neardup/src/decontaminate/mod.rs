//! Test sets inside training data: which benchmark items occur inside a document, how
//! much of each, and where.
//!
//! A [`TestSet`] holds the items of one or more benchmarks as word n-grams. For a
//! document, [`TestSet::find`] looks up each of the document's n-grams, confirms every hit
//! by comparing the words themselves (a hash collision is never reported), and returns,
//! per item it shares an n-gram with, its *containment* (the share of the item's distinct
//! n-grams found in the document) and the byte spans of the document those n-grams cover.
//! Only items at or above [`TestSetBuilder::min_overlap`] are returned.
//!
//! **Words.** Unicode words (UAX #29, split by the shingler's `word:K` code, its ASCII
//! fast path included): punctuation and
//! whitespace are not words, so `"Paris, France."` and `"paris france"` are the same two
//! words. Each word is folded alone, NFKC then lowercased (full Unicode lowercasing), so a
//! copy in decomposed accents or full-width letters is the same words while spans stay
//! byte offsets in the document as given. lm-eval-harness lowercases
//! and strips punctuation before splitting on whitespace; datatrove tokenizes and
//! lowercases: the same words on ordinary text.
//!
//! **Items shorter than n words.** The rule of GPT-3's appendix C, as NeMo Curator
//! applies it: an item of `m` words, `min_ngram <= m < n`, is one n-gram of all its `m`
//! words (found only whole); an item of fewer than `min_ngram` words is not checked and is
//! counted ([`TestSet::unchecked`]). lm-eval-harness (n = 13, no minimum) checks no item
//! shorter than 13 words, silently; [`TestSetBuilder::min_ngram`] equal to `n` does the
//! same and counts them.
//!
//! # Example
//!
//! ```
//! use neardup::decontaminate::TestSet;
//!
//! let items = [
//!     "What is the capital of France? The capital of France is Paris, a city on the Seine.",
//!     "Name the largest planet in the solar system.",
//! ];
//! let tests = TestSet::builder().ngram(8).min_ngram(4).build(items)?;
//! let doc = "Quiz night! what is the capital of france - the capital of France is Paris, \
//!            a city on the Seine. Next round.";
//! let found = tests.find(doc);
//! assert_eq!(found.len(), 1);
//! assert_eq!(found[0].item, 0);
//! assert_eq!(found[0].containment, 1.0);
//! let span = found[0].spans[0].clone();
//! assert_eq!(&doc[span], "what is the capital of france - the capital of France is \
//!                          Paris, a city on the Seine");
//! // The second item has 8 words: one 8-gram, found only whole.
//! assert!(tests.find("name the largest planet in the solar").is_empty());
//! # Ok::<(), neardup::decontaminate::DecontaminateError>(())
//! ```

use std::collections::HashMap;
use std::ops::Range;

use crate::text::shingle::word_spans;
use unicode_normalization::UnicodeNormalization;

/// lm-eval-harness's n (GPT-3 used 8 to 13 by benchmark; datatrove 12).
pub const DEFAULT_NGRAM: usize = 13;
/// The shortest item checked, as GPT-3 and NeMo Curator (`min_ngram_size = 8`).
pub const DEFAULT_MIN_NGRAM: usize = 8;
/// The containment an item needs to be reported by default.
pub const DEFAULT_MIN_OVERLAP: f64 = 0.5;

/// Why a [`TestSet`] cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecontaminateError {
    /// `n` must be at least 1, and `min_ngram` in `1..=n`.
    #[error("the n-gram size must be at least 1 and the minimum in 1..=n (got n = {n}, minimum {min_ngram})")]
    BadNgram {
        /// The n-gram size given.
        n: usize,
        /// The minimum given.
        min_ngram: usize,
    },
    /// The minimum overlap must be in `0..=1`.
    #[error("the minimum overlap must be a number in 0..=1 (got {0})")]
    BadOverlap(f64),
    /// More items than fit in a `u32`.
    #[error("too many test items (at most {max})", max = u32::MAX)]
    TooManyItems,
}

/// How a [`TestSet`] is built; [`TestSet::builder`].
#[derive(Debug, Clone)]
pub struct TestSetBuilder {
    n: usize,
    min_ngram: usize,
    min_overlap: f64,
}

impl Default for TestSetBuilder {
    fn default() -> Self {
        TestSetBuilder {
            n: DEFAULT_NGRAM,
            min_ngram: DEFAULT_MIN_NGRAM,
            min_overlap: DEFAULT_MIN_OVERLAP,
        }
    }
}

impl TestSetBuilder {
    /// Words per n-gram (default 13).
    pub fn ngram(mut self, n: usize) -> Self {
        self.n = n;
        self
    }

    /// Items with fewer words than this are not checked (default 8; at most `n`).
    pub fn min_ngram(mut self, min: usize) -> Self {
        self.min_ngram = min;
        self
    }

    /// The containment an item needs to be reported (default 0.5); 0 reports an item
    /// sharing any one n-gram, lm-eval-harness's rule.
    pub fn min_overlap(mut self, overlap: f64) -> Self {
        self.min_overlap = overlap;
        self
    }

    /// The test set of `items`, numbered in order from 0.
    pub fn build<I>(self, items: I) -> Result<TestSet, DecontaminateError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        if self.n == 0 || self.min_ngram == 0 || self.min_ngram > self.n {
            return Err(DecontaminateError::BadNgram {
                n: self.n,
                min_ngram: self.min_ngram,
            });
        }
        if !(0.0..=1.0).contains(&self.min_overlap) {
            return Err(DecontaminateError::BadOverlap(self.min_overlap));
        }
        let mut set = TestSet {
            n: self.n,
            min_ngram: self.min_ngram,
            min_overlap: self.min_overlap,
            items: Vec::new(),
            grams: HashMap::default(),
            lengths: Vec::new(),
            filter: Vec::new(),
            shift: 64,
        };
        for text in items {
            let number =
                u32::try_from(set.items.len()).map_err(|_| DecontaminateError::TooManyItems)?;
            set.add(number, text.as_ref());
        }
        set.lengths.sort_unstable();
        set.lengths.dedup();
        set.fill_filter();
        Ok(set)
    }
}

/// One test item, as words.
#[derive(Debug, Clone)]
struct Item {
    words: Vec<Box<str>>,
    /// Words per n-gram: `n`, the item's length if shorter, 0 if not checked.
    gram: usize,
    /// Its distinct n-grams.
    distinct: u32,
}

/// An item's n-gram: the item and where the n-gram first starts in it.
#[derive(Debug, Clone, Copy)]
struct GramRef {
    item: u32,
    at: u32,
}

/// Benchmark items as word n-grams, searched for inside documents; see the
/// [module](self) documentation. `Send + Sync`: documents can be searched in parallel.
#[derive(Debug, Clone)]
pub struct TestSet {
    n: usize,
    min_ngram: usize,
    min_overlap: f64,
    items: Vec<Item>,
    grams: HashMap<u64, Vec<GramRef>, foldhash::fast::FixedState>,
    /// The n-gram lengths items use, ascending (`n`, and shorter items' lengths), each
    /// with `BASE` to its power for the rolling hash.
    lengths: Vec<(usize, u64)>,
    /// One bit per slot of the n-gram hashes' top bits, set for the items' n-grams: nearly
    /// every n-gram of a document is in no item, and is turned away by one bit in a few
    /// kilobytes instead of a probe of `grams`.
    filter: Vec<u64>,
    /// `64 - log2(filter bits)`.
    shift: u32,
}

/// One item found inside a document.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemMatch {
    /// The item's number (0-based, in the order given to [`TestSetBuilder::build`]).
    pub item: usize,
    /// Its distinct n-grams found in the document.
    pub matched: usize,
    /// Its distinct n-grams.
    pub ngrams: usize,
    /// `matched / ngrams`.
    pub containment: f64,
    /// The byte ranges of the document covered by the n-grams found, in order, not
    /// overlapping (from the first byte of a run's first word to the last of its last).
    pub spans: Vec<Range<usize>>,
}

/// The seed of word hashes, and the base of the rolling n-gram hash (odd).
const WORD_SEED: u64 = 0x6465_636f_6e74_616d;
const BASE: u64 = 0x9e37_79b9_7f4a_7c15;

impl TestSet {
    /// A builder with the defaults: 13-grams, items of 8 to 12 words matched whole,
    /// shorter ones not checked, reported at containment 0.5.
    pub fn builder() -> TestSetBuilder {
        TestSetBuilder::default()
    }

    /// Words per n-gram.
    pub fn ngram(&self) -> usize {
        self.n
    }

    /// Items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True if there are no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The number of words of item `item`.
    pub fn item_len(&self, item: usize) -> usize {
        self.items.get(item).map_or(0, |i| i.words.len())
    }

    /// True if item `item` is checked: it has at least `min_ngram` words.
    pub fn is_checked(&self, item: usize) -> bool {
        self.items.get(item).is_some_and(|i| i.gram > 0)
    }

    /// Items shorter than `n` words but checked, each as one n-gram of all its words.
    pub fn short(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.gram > 0 && i.gram < self.n)
            .count()
    }

    /// Items with fewer than `min_ngram` words, not checked.
    pub fn unchecked(&self) -> usize {
        self.items.iter().filter(|i| i.gram == 0).count()
    }

    fn add(&mut self, number: u32, text: &str) {
        let mut words = Vec::new();
        let mut hashes = Vec::new();
        let mut buf = String::new();
        for (start, end) in word_spans(text) {
            fold(&text[start..end], &mut buf);
            hashes.push(hash_folded(&buf));
            words.push(Box::from(buf.as_str()));
        }
        let gram = match words.len() {
            m if m >= self.n => self.n,
            m if m >= self.min_ngram => m,
            _ => 0,
        };
        let mut distinct = 0;
        if gram > 0 {
            self.lengths.push((gram, power(gram)));
            let prefix = prefix_hashes(hashes.into_iter());
            let pow = power(gram);
            let mut seen = Vec::new();
            for at in 0..=words.len() - gram {
                let key = gram_hash(prefix[at], prefix[at + gram], gram, pow);
                let refs = self.grams.entry(key).or_default();
                // A repeated n-gram of an item counts once, at its first place. Items are
                // added in order, so an earlier place of this item is the list's last.
                if refs.last().is_none_or(|r| r.item != number) {
                    refs.push(GramRef {
                        item: number,
                        at: at as u32,
                    });
                    seen.push(key);
                }
            }
            distinct = seen.len() as u32;
        }
        self.items.push(Item {
            words,
            gram,
            distinct,
        });
    }

    /// Sets the filter's bit of every n-gram of the items: 16 bits an n-gram, so about
    /// one n-gram in 16 that no item has passes to the exact lookup.
    fn fill_filter(&mut self) {
        let bits = (self.grams.len().max(1) * 16).next_power_of_two().max(64);
        self.shift = 64 - bits.trailing_zeros();
        self.filter = vec![0; bits / 64];
        for key in self.grams.keys() {
            let slot = (key >> self.shift) as usize;
            self.filter[slot / 64] |= 1 << (slot % 64);
        }
    }

    /// False if no item has an n-gram of hash `key`.
    fn may_hold(&self, key: u64) -> bool {
        let slot = (key >> self.shift) as usize;
        self.filter[slot / 64] >> (slot % 64) & 1 == 1
    }

    /// The items inside `text` at or above the minimum overlap, by item number.
    pub fn find(&self, text: &str) -> Vec<ItemMatch> {
        let places = word_spans(text);
        let Some(&(shortest, _)) = self.lengths.first() else {
            return Vec::new();
        };
        if places.len() < shortest {
            return Vec::new();
        }
        let mut buf = String::new();
        let prefix = prefix_hashes(
            places
                .iter()
                .map(|&(start, end)| word_hash(text, start, end, &mut buf)),
        );
        // (item, the n-gram's place in the item, its first word in the document)
        let mut hits: Vec<(u32, u32, u32)> = Vec::new();
        for &(len, pow) in &self.lengths {
            for (at, (lo, hi)) in prefix.iter().zip(prefix.iter().skip(len)).enumerate() {
                let key = gram_hash(*lo, *hi, len, pow);
                if !self.may_hold(key) {
                    continue;
                }
                let Some(refs) = self.grams.get(&key) else {
                    continue;
                };
                for r in refs {
                    let item = &self.items[r.item as usize];
                    let from = r.at as usize;
                    if item.gram == len
                        && same_words(&item.words[from..from + len], text, &places[at..at + len])
                    {
                        hits.push((r.item, r.at, at as u32));
                    }
                }
            }
        }
        hits.sort_unstable();
        let mut found = Vec::new();
        for group in hits.chunk_by(|a, b| a.0 == b.0) {
            let item = &self.items[group[0].0 as usize];
            let mut matched = 1;
            for pair in group.windows(2) {
                matched += usize::from(pair[0].1 != pair[1].1);
            }
            let ngrams = item.distinct as usize;
            let containment = matched as f64 / ngrams as f64;
            if containment < self.min_overlap {
                continue;
            }
            let mut words: Vec<(usize, usize)> = group
                .iter()
                .map(|&(_, _, at)| (at as usize, at as usize + item.gram))
                .collect();
            words.sort_unstable();
            found.push(ItemMatch {
                item: group[0].0 as usize,
                matched,
                ngrams,
                containment,
                spans: merge(&words, &places),
            });
        }
        found
    }
}

/// Runs of overlapping or touching word ranges as byte ranges of the text.
fn merge(words: &[(usize, usize)], places: &[(usize, usize)]) -> Vec<Range<usize>> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &(from, to) in words {
        match runs.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => runs.push((from, to)),
        }
    }
    runs.iter()
        .map(|&(from, to)| places[from].0..places[to - 1].1)
        .collect()
}

/// True if the document's words at `places` are `words` once folded.
fn same_words(words: &[Box<str>], text: &str, places: &[(usize, usize)]) -> bool {
    let mut buf = String::new();
    words.iter().zip(places).all(|(w, &(start, end))| {
        fold(&text[start..end], &mut buf);
        buf == **w
    })
}

/// A word as it is compared: NFKC, then lowercased, into `buf`.
fn fold(word: &str, buf: &mut String) {
    buf.clear();
    if word.is_ascii() {
        buf.push_str(word);
        buf.make_ascii_lowercase();
    } else {
        buf.extend(word.nfkc().flat_map(char::to_lowercase));
    }
}

/// The hash of a folded word: a word of up to 16 bytes (nearly every word) as two
/// zero-padded little-endian `u64`s mixed by [`short_hash`], a longer one by xxh3.
fn hash_folded(word: &str) -> u64 {
    let bytes = word.as_bytes();
    if bytes.len() <= SHORT_WORD {
        let mut padded = [0u8; SHORT_WORD];
        padded[..bytes.len()].copy_from_slice(bytes);
        let (lo, hi) = halves(&padded);
        return short_hash(lo, hi, bytes.len());
    }
    xxhash_rust::xxh3::xxh3_64_with_seed(bytes, WORD_SEED)
}

/// The longest word hashed as two `u64`s.
const SHORT_WORD: usize = 16;

/// The hash of the word `text[start..end]` folded ([`hash_folded`] of [`fold`]). An
/// ASCII word of up to 16 bytes with 16 bytes of text from its start is read as two
/// `u64`s, masked to its length and lowercased eight bytes at a time, without a copy;
/// any other is folded into `buf`.
fn word_hash(text: &str, start: usize, end: usize, buf: &mut String) -> u64 {
    let len = end - start;
    if len <= SHORT_WORD {
        if let Some(chunk) = text.as_bytes()[start..].first_chunk::<SHORT_WORD>() {
            let (lo, hi) = halves(chunk);
            let (lo, hi) = (lo & low_bytes(len), hi & low_bytes(len.saturating_sub(8)));
            if (lo | hi) & 0x8080_8080_8080_8080 == 0 {
                return short_hash(ascii_lower(lo), ascii_lower(hi), len);
            }
        }
    }
    fold(&text[start..end], buf);
    hash_folded(buf)
}

fn halves(bytes: &[u8; SHORT_WORD]) -> (u64, u64) {
    let (lo, hi) = bytes.split_at(8);
    let word = |b: &[u8]| b.iter().rev().fold(0u64, |w, &x| w << 8 | u64::from(x));
    (word(lo), word(hi))
}

/// A mask of the low `n` bytes (all of them from 8).
fn low_bytes(n: usize) -> u64 {
    if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (n * 8)) - 1
    }
}

/// ASCII bytes `A`..=`Z` of `x` lowercased, 8 at a time: a byte is upper case when
/// adding 0x3f sets its top bit (>= 0x41) and adding 0x25 does not (<= 0x5a); no byte
/// carries into the next, all being below 0x80.
fn ascii_lower(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let upper = x.wrapping_add(0x3f * ONES) & !x.wrapping_add(0x25 * ONES) & (0x80 * ONES);
    x | upper >> 2
}

/// Two 64-bit halves of a word and its length mixed by folded multiplies (as foldhash).
fn short_hash(lo: u64, hi: u64, len: usize) -> u64 {
    let fold = |a: u64, b: u64| {
        let m = u128::from(a) * u128::from(b);
        (m as u64) ^ (m >> 64) as u64
    };
    // The constants have bytes >= 0x80, which ASCII words never have: no factor is 0.
    let h = fold(
        lo ^ 0xe703_7ed1_a0b4_28db,
        hi ^ 0xa076_1d64_78bd_642f ^ len as u64,
    );
    fold(h ^ WORD_SEED, BASE)
}

/// Prefix sums of a polynomial hash of the words' hashes (`prefix[i]` covers the first
/// `i` words), so that every run of words has its hash in O(1): collisions only cost a
/// comparison of words, never a false report.
fn prefix_hashes(hashes: impl ExactSizeIterator<Item = u64>) -> Vec<u64> {
    let mut prefix = Vec::with_capacity(hashes.len() + 1);
    let mut h = 0u64;
    prefix.push(h);
    for word in hashes {
        h = h.wrapping_mul(BASE).wrapping_add(word);
        prefix.push(h);
    }
    prefix
}

/// `BASE` to the power `len`.
fn power(len: usize) -> u64 {
    (0..len).fold(1u64, |p, _| p.wrapping_mul(BASE))
}

/// The hash of the `len` words between prefix hashes `lo` and `hi` (`pow` is
/// [`power`]`(len)`), with the length mixed in so that runs of different lengths differ.
fn gram_hash(lo: u64, hi: u64, len: usize, pow: u64) -> u64 {
    let h = hi.wrapping_sub(lo.wrapping_mul(pow));
    h ^ (len as u64).wrapping_mul(0xff51_afd7_ed55_8ccd)
}

#[cfg(test)]
mod tests;
