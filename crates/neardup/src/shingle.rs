//! Documents → sets of k-shingles, hashed to 64 bits.
//!
//! A character shingle is `k` consecutive Unicode scalar values; a word shingle is `k`
//! consecutive whitespace-separated words. Each shingle is hashed with xxh3 and a fixed
//! seed, so a shingle's hash is the same on every machine and in every version.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::{Error, Result};

/// The fixed seed of shingle hashes. Changing it changes every persisted value: never do.
pub const SHINGLE_SEED: u64 = 0x6e65_6172_6475_7031;

/// What a shingle is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShingleKind {
    /// `k` consecutive characters.
    Char(usize),
    /// `k` consecutive words.
    Word(usize),
}

impl ShingleKind {
    /// The shingle size `k`.
    pub fn size(self) -> usize {
        match self {
            ShingleKind::Char(k) | ShingleKind::Word(k) => k,
        }
    }
}

impl Default for ShingleKind {
    fn default() -> Self {
        ShingleKind::Char(5)
    }
}

impl fmt::Display for ShingleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShingleKind::Char(k) => write!(f, "char:{k}"),
            ShingleKind::Word(k) => write!(f, "word:{k}"),
        }
    }
}

impl FromStr for ShingleKind {
    type Err = Error;

    /// Parses `char:K` or `word:K`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::InvalidShingleSpec(s.to_string());
        let (kind, k) = s.split_once(':').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        if k == 0 {
            return Err(bad());
        }
        match kind.trim() {
            "char" | "chars" | "c" => Ok(ShingleKind::Char(k)),
            "word" | "words" | "w" => Ok(ShingleKind::Word(k)),
            _ => Err(bad()),
        }
    }
}

/// Unicode lowercase, runs of Unicode whitespace collapsed to one space, trimmed.
pub fn normalize(text: &str) -> String {
    if text.is_ascii() {
        return normalize_ascii(text.as_bytes());
    }
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// [`normalize`] for ASCII text, byte by byte (ASCII whitespace is Unicode whitespace
/// restricted to ASCII, so the result is the same).
fn normalize_ascii(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    let mut pending_space = false;
    for &b in bytes {
        // What char::is_whitespace accepts in ASCII: \t \n \x0B \x0C \r and space.
        if matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r') {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(b' ');
                pending_space = false;
            }
            out.push(b.to_ascii_lowercase());
        }
    }
    // Only ASCII bytes were pushed.
    String::from_utf8(out).unwrap_or_default()
}

/// Turns a text into its set of shingle hashes.
///
/// ```
/// use neardup::shingle::{Shingler, ShingleKind};
/// let shingler = Shingler::new(ShingleKind::Char(3));
/// // "Abcd" normalizes to "abcd": shingles "abc" and "bcd".
/// assert_eq!(shingler.shingle_set("  Abcd ").len(), 2);
/// assert_eq!(shingler.shingle_set("ABCD"), shingler.shingle_set("abcd"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shingler {
    kind: ShingleKind,
    normalize: bool,
    max_shingles: usize,
}

/// Default cap on the shingles taken from one document: its first million positions
/// (about 1 MB of text), so one huge document cannot exhaust memory.
pub const DEFAULT_MAX_SHINGLES: usize = 1_000_000;

impl Default for Shingler {
    fn default() -> Self {
        Shingler::new(ShingleKind::default())
    }
}

impl Shingler {
    /// A shingler of the given kind, with normalization on.
    pub fn new(kind: ShingleKind) -> Self {
        Shingler {
            kind,
            normalize: true,
            max_shingles: DEFAULT_MAX_SHINGLES,
        }
    }

    /// Takes at most `n` shingle positions from the start of a document (default
    /// [`DEFAULT_MAX_SHINGLES`]; at least 1). Longer documents are compared on that prefix.
    pub fn max_shingles(mut self, n: usize) -> Self {
        self.max_shingles = n.max(1);
        self
    }

    /// The cap on shingle positions per document.
    pub fn shingle_cap(&self) -> usize {
        self.max_shingles
    }

    /// True if `text` has more shingle positions than the cap (so only a prefix is used).
    pub fn truncates(&self, text: &str) -> bool {
        self.set_into(text, &mut Vec::new())
    }

    /// Turns normalization on (default) or off.
    pub fn normalize(mut self, on: bool) -> Self {
        self.normalize = on;
        self
    }

    /// The kind of shingle.
    pub fn kind(&self) -> ShingleKind {
        self.kind
    }

    /// Whether text is normalized before shingling.
    pub fn normalizes(&self) -> bool {
        self.normalize
    }

    /// The text as it is shingled: normalized, or as given.
    pub fn prepare<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.normalize {
            Cow::Owned(normalize(text))
        } else {
            Cow::Borrowed(text)
        }
    }

    /// Appends the hashes of every shingle of `text` (in text order, with repeats) to `out`.
    ///
    /// A non-empty text shorter than `k` is one shingle; an empty text has none.
    pub fn hashes_into(&self, text: &str, out: &mut Vec<u64>) {
        self.hashes_uncapped(text, out, self.max_shingles);
    }

    fn hashes_uncapped(&self, text: &str, out: &mut Vec<u64>, cap: usize) {
        let start = out.len();
        // A prefix long enough for `cap` shingles: k·cap characters are at most 4·k·cap bytes.
        let text = if text.len() > cap.saturating_mul(4 * self.kind.size() + 4) {
            let mut end = cap.saturating_mul(4 * self.kind.size() + 4).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            &text[..end]
        } else {
            text
        };
        let text = self.prepare(text);
        match self.kind {
            ShingleKind::Char(k) => char_shingles(&text, k, out),
            ShingleKind::Word(k) => word_shingles(&text, k, out),
        }
        out.truncate(start + cap);
    }

    /// The set of shingle hashes of `text`: sorted and deduplicated.
    pub fn shingle_set(&self, text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        self.set_into(text, &mut out);
        out
    }

    /// Replaces `out` with the set of shingle hashes of `text`, reusing its allocation.
    /// Returns true if the document had more positions than the cap and was cut.
    pub fn set_into(&self, text: &str, out: &mut Vec<u64>) -> bool {
        out.clear();
        self.hashes_uncapped(text, out, self.max_shingles + 1);
        let truncated = out.len() > self.max_shingles;
        out.truncate(self.max_shingles);
        sort_uniform(out);
        out.dedup();
        truncated
    }
}

/// The hash of one shingle's bytes. Up to 7 bytes are packed into a word with their
/// length in the top byte (distinct shingles give distinct words) and mixed by a bijection;
/// longer shingles go through xxh3. Both are fixed for all versions.
/// Sorts uniformly distributed hashes: scattered into about n/2 buckets by their top bits
/// (two linear passes), then each small bucket sorted in place. Short inputs use the
/// standard sort.
fn sort_uniform(v: &mut Vec<u64>) {
    const SMALL: usize = 256;
    if v.len() <= SMALL {
        v.sort_unstable();
        return;
    }
    let bits = (usize::BITS - (v.len() / 2).leading_zeros()).min(20);
    let shift = 64 - bits;
    let mut starts = vec![0usize; (1 << bits) + 1];
    for &x in v.iter() {
        starts[(x >> shift) as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut out = vec![0u64; v.len()];
    let mut next = starts.clone();
    for &x in v.iter() {
        let b = (x >> shift) as usize;
        out[next[b]] = x;
        next[b] += 1;
    }
    for w in starts.windows(2) {
        out[w[0]..w[1]].sort_unstable();
    }
    *v = out;
}

fn hash(bytes: &[u8]) -> u64 {
    if bytes.len() <= 7 {
        let mut word = (bytes.len() as u64) << 56;
        for (i, &b) in bytes.iter().enumerate() {
            word |= (b as u64) << (8 * i);
        }
        packed_hash(word)
    } else {
        xxh3_64_with_seed(bytes, SHINGLE_SEED)
    }
}

#[inline(always)]
fn packed_hash(word: u64) -> u64 {
    crate::sketch::mix64(word ^ SHINGLE_SEED)
}

/// Char shingles of pure-ASCII text, k ≤ 7: one byte in, one shift, one mix per shingle.
fn ascii_shingles(bytes: &[u8], k: usize, out: &mut Vec<u64>) {
    let tag = (k as u64) << 56;
    let mask = if k == 7 {
        (1u64 << 56) - 1
    } else {
        (1u64 << (8 * k)) - 1
    };
    out.reserve(bytes.len() + 1 - k);
    // Little-endian packing: the window's first byte is the lowest.
    let mut word = 0u64;
    for (i, &b) in bytes.iter().enumerate() {
        word = (word >> 8) | ((b as u64) << (8 * (k - 1)));
        if i + 1 >= k {
            out.push(packed_hash((word & mask) | tag));
        }
    }
}

fn char_shingles(text: &str, k: usize, out: &mut Vec<u64>) {
    if text.is_empty() {
        return;
    }
    if k <= 7 && text.len() > k && text.is_ascii() {
        ascii_shingles(text.as_bytes(), k, out);
        return;
    }
    // Byte offsets of every char start, plus the end: window i is starts[i]..starts[i + k].
    let mut starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    starts.push(text.len());
    let chars = starts.len() - 1;
    if chars <= k {
        out.push(hash(text.as_bytes()));
        return;
    }
    out.reserve(chars + 1 - k);
    let bytes = text.as_bytes();
    for w in starts.windows(k + 1) {
        out.push(hash(&bytes[w[0]..w[k]]));
    }
}

fn word_shingles(text: &str, k: usize, out: &mut Vec<u64>) {
    // A word shingle hashes the text from its first word's start to its last word's end:
    // with normalization that is the words joined by single spaces.
    let spans: Vec<(usize, usize)> = word_spans(text).collect();
    if spans.is_empty() {
        return;
    }
    let bytes = text.as_bytes();
    if spans.len() <= k {
        out.push(hash(&bytes[spans[0].0..spans[spans.len() - 1].1]));
        return;
    }
    out.reserve(spans.len() + 1 - k);
    for w in spans.windows(k) {
        out.push(hash(&bytes[w[0].0..w[k - 1].1]));
    }
}

fn word_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut iter = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = iter.peek() {
            if !c.is_whitespace() {
                break;
            }
            iter.next();
        }
        let (start, _) = *iter.peek()?;
        let mut end = start;
        while let Some(&(i, c)) = iter.peek() {
            if c.is_whitespace() {
                break;
            }
            end = i + c.len_utf8();
            iter.next();
        }
        Some((start, end))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_lowercases_collapses_and_trims() {
        assert_eq!(
            normalize("  Hello\t\tWORLD \n\u{00A0}Ünïcode  "),
            "hello world ünïcode"
        );
        assert_eq!(normalize(""), "");
        assert_eq!(normalize(" \t\n "), "");
        assert_eq!(normalize("İ"), "i\u{307}");
    }

    #[test]
    fn parses_specs() {
        assert_eq!("char:5".parse::<ShingleKind>(), Ok(ShingleKind::Char(5)));
        assert_eq!("word:3".parse::<ShingleKind>(), Ok(ShingleKind::Word(3)));
        assert!("char:0".parse::<ShingleKind>().is_err());
        assert!("byte:3".parse::<ShingleKind>().is_err());
        assert!("char".parse::<ShingleKind>().is_err());
        assert_eq!(ShingleKind::Word(2).to_string(), "word:2");
    }

    #[test]
    fn char_shingles_count_and_distinctness() {
        let s = Shingler::new(ShingleKind::Char(3));
        let mut h = Vec::new();
        s.hashes_into("abcdab", &mut h);
        // abc bcd cda dab
        assert_eq!(h.len(), 4);
        assert_eq!(s.shingle_set("abcabc").len(), 3); // abc bca cab
    }

    #[test]
    fn multibyte_chars_are_one_position() {
        let s = Shingler::new(ShingleKind::Char(2));
        let mut h = Vec::new();
        s.hashes_into("ééé", &mut h);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0], h[1]);
        assert_eq!(h[0], hash("éé".as_bytes()));
    }

    #[test]
    fn short_document_is_one_shingle_and_empty_has_none() {
        let s = Shingler::new(ShingleKind::Char(5));
        assert_eq!(s.shingle_set("abc"), vec![hash(b"abc")]);
        assert_eq!(s.shingle_set("abcde"), vec![hash(b"abcde")]);
        assert!(s.shingle_set("").is_empty());
        assert!(s.shingle_set("   \n").is_empty());
        let w = Shingler::new(ShingleKind::Word(3));
        assert_eq!(w.shingle_set("one two"), vec![hash(b"one two")]);
    }

    #[test]
    fn word_shingles_follow_words() {
        let w = Shingler::new(ShingleKind::Word(2));
        let mut h = Vec::new();
        w.hashes_into("The quick  brown\tfox", &mut h);
        assert_eq!(
            h,
            vec![hash(b"the quick"), hash(b"quick brown"), hash(b"brown fox")]
        );
        // Without normalization the text is hashed as it stands.
        let raw = w.normalize(false);
        h.clear();
        raw.hashes_into("The quick  brown", &mut h);
        assert_eq!(h, vec![hash(b"The quick"), hash(b"quick  brown")]);
    }

    #[test]
    fn long_documents_are_capped() {
        let s = Shingler::new(ShingleKind::Char(3)).max_shingles(10);
        let text = "abcdefghijklmnopqrstuvwxyz";
        let mut h = Vec::new();
        s.hashes_into(text, &mut h);
        assert_eq!(h.len(), 10);
        assert!(s.truncates(text));
        assert!(!s.truncates("abcdefghijkl")); // exactly 10 positions
                                               // The capped shingles are the document's first ones.
        let full = Shingler::new(ShingleKind::Char(3));
        let mut all = Vec::new();
        full.hashes_into(text, &mut all);
        assert_eq!(h, all[..10]);
        // Word shingles too, and the cap never drops a whole short document.
        let w = Shingler::new(ShingleKind::Word(2)).max_shingles(2);
        h.clear();
        w.hashes_into("a b c d e", &mut h);
        assert_eq!(h.len(), 2);
        assert_eq!(
            Shingler::new(ShingleKind::Char(5))
                .max_shingles(0)
                .shingle_cap(),
            1
        );
    }

    #[test]
    fn normalization_can_be_turned_off() {
        let on = Shingler::new(ShingleKind::Char(3));
        let off = on.normalize(false);
        assert_eq!(on.shingle_set("ABC"), on.shingle_set("abc"));
        assert_ne!(off.shingle_set("ABC"), off.shingle_set("abc"));
    }

    fn normalize_general(text: &str) -> String {
        let mut out = String::new();
        for word in text.split(char::is_whitespace).filter(|w| !w.is_empty()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.extend(word.chars().flat_map(char::to_lowercase));
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn ascii_normalization_equals_the_unicode_one(text in "[\\x00-\\x7f]{0,40}") {
            proptest::prop_assert_eq!(normalize(&text), normalize_general(&text));
        }

        #[test]
        fn normalization_matches_its_definition(text in "\\PC{0,30}") {
            proptest::prop_assert_eq!(normalize(&text), normalize_general(&text));
        }
    }

    proptest::proptest! {
        #[test]
        fn uniform_sort_sorts(mut v in proptest::collection::vec(proptest::num::u64::ANY, 0..3000)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            sort_uniform(&mut v);
            proptest::prop_assert_eq!(v, expected);
        }
    }

    #[test]
    fn uniform_sort_handles_skewed_input() {
        // Not uniform at all: everything in one bucket still sorts correctly.
        let mut v: Vec<u64> = (0..5000u64).rev().collect();
        sort_uniform(&mut v);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn ascii_fast_path_equals_the_general_path() {
        for k in 1..=7 {
            let text = "the quick brown fox jumps over the lazy dog";
            let mut fast = Vec::new();
            ascii_shingles(text.as_bytes(), k, &mut fast);
            let slow: Vec<u64> = text.as_bytes().windows(k).map(hash).collect();
            assert_eq!(fast, slow, "k={k}");
        }
        // Lengths are part of the word: "a" and "a\0" differ.
        assert_ne!(hash(b"a"), hash(b"a\0"));
    }

    #[test]
    fn hashes_are_stable_across_versions() {
        // Pinned values: if this fails, every persisted signature and index is invalidated.
        let set = Shingler::new(ShingleKind::Char(5)).shingle_set("Hello");
        assert_eq!(set, vec![12_774_514_482_281_871_338_u64]);
        assert_eq!(
            hash(b"hello world"),
            xxh3_64_with_seed(b"hello world", 0x6e65_6172_6475_7031)
        );
    }
}
