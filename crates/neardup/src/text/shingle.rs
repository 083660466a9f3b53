//! Documents → sets of k-shingles, hashed to 64 bits.
//!
//! Text is first normalized ([`Normalization`], NFKC by default). A character shingle is
//! `k` consecutive Unicode scalar values; a word shingle is `k` consecutive words, joined
//! by one space. Words are found by Unicode word segmentation (UAX #29): whitespace and
//! punctuation are not words, so `"fox,"` is the word `fox`; unspaced scripts split into
//! characters (Han ideographs, Hiragana, and the Thai, Lao, Khmer and Myanmar scripts,
//! one letter with its marks at a time) or runs (Katakana). Each shingle is hashed with
//! xxh3 and a fixed seed, so a shingle's hash is the same on every machine and in every
//! version.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use unicode_segmentation::UnicodeSegmentation;
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
        if !(1..=MAX_SHINGLE_SIZE).contains(&k) {
            return Err(bad());
        }
        match kind.trim() {
            "char" | "chars" | "c" => Ok(ShingleKind::Char(k)),
            "word" | "words" | "w" => Ok(ShingleKind::Word(k)),
            _ => Err(bad()),
        }
    }
}

pub use crate::text::normalize::Normalization;

/// The largest shingle size `k` accepted (`char:K`, `word:K`): far beyond any useful
/// shingle, small enough that no size arithmetic can overflow.
pub const MAX_SHINGLE_SIZE: usize = 1024;

/// The largest cap on shingle positions per document accepted by
/// [`ConfigBuilder::max_shingles`](crate::ConfigBuilder::max_shingles): 2³² positions
/// (32 GiB of hashes for one document).
pub const MAX_MAX_SHINGLES: usize = 1 << 32;

/// Turns a text into its set of shingle hashes.
///
/// ```
/// use neardup::{Shingler, ShingleKind};
/// let shingler = Shingler::new(ShingleKind::Char(3));
/// // "Abcd" normalizes to "abcd": shingles "abc" and "bcd".
/// assert_eq!(shingler.shingle_set("  Abcd ").len(), 2);
/// assert_eq!(shingler.shingle_set("ABCD"), shingler.shingle_set("abcd"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shingler {
    kind: ShingleKind,
    normalization: Normalization,
    max_shingles: usize,
    multiset: bool,
}

/// What [`Shingler::shingle_info`] learned about one document besides its set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShingleInfo {
    /// The document had more shingle positions than the cap and was cut.
    pub truncated: bool,
    /// The document is not empty but has fewer than `k` tokens (words for `word:K`,
    /// characters for `char:K`): it is a single shingle and matches only exact copies.
    pub short: bool,
}

/// Default cap on the shingle positions compared exactly per document: 2²⁴ (16,777,216),
/// so documents up to 16 MiB of text are compared whole. A longer document keeps the set of
/// its first positions for LSH, and a sketch of all its shingles
/// ([`Corpus::whole_signature`](crate::corpus::Corpus::whole_signature)) for the estimate its
/// pairs are reported with.
pub const DEFAULT_MAX_SHINGLES: usize = 1 << 24;

impl Default for Shingler {
    fn default() -> Self {
        Shingler::new(ShingleKind::default())
    }
}

impl Shingler {
    /// A shingler of the given kind, with the default normalization (NFKC). A shingle is
    /// at least one token: a `k` of 0 (which parsing a spec refuses) is taken as 1.
    pub fn new(kind: ShingleKind) -> Self {
        let kind = match kind {
            ShingleKind::Char(0) => ShingleKind::Char(1),
            ShingleKind::Word(0) => ShingleKind::Word(1),
            other => other,
        };
        Shingler {
            kind,
            normalization: Normalization::default(),
            max_shingles: DEFAULT_MAX_SHINGLES,
            multiset: false,
        }
    }

    /// Counts repeated shingles (default off): the i-th occurrence of a shingle becomes
    /// its own element, so the Jaccard similarity of two sets is the weighted Jaccard
    /// Σ min / Σ max of the shingles' counts (a page that repeats a phrase ten times is
    /// no longer the same as one that says it once).
    ///
    /// ```
    /// use neardup::{Shingler, ShingleKind};
    /// use neardup::verify::jaccard;
    /// let words = Shingler::new(ShingleKind::Word(1));
    /// let (a, b) = ("buy buy buy now", "buy now");
    /// assert_eq!(jaccard(&words.shingle_set(a), &words.shingle_set(b)), 1.0);
    /// let counted = words.multiset(true);
    /// // min(3, 1) + min(1, 1) over max(3, 1) + max(1, 1)
    /// assert_eq!(jaccard(&counted.shingle_set(a), &counted.shingle_set(b)), 0.5);
    /// ```
    pub fn multiset(mut self, on: bool) -> Self {
        self.multiset = on;
        self
    }

    /// True if repeated shingles are counted ([`Shingler::multiset`]).
    pub fn is_multiset(&self) -> bool {
        self.multiset
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

    /// How text is normalized before shingling (default [`Normalization::Nfkc`]).
    pub fn normalization(mut self, level: Normalization) -> Self {
        self.normalization = level;
        self
    }

    /// Normalization at the default level (`true`) or none (`false`); shorthand for
    /// [`Shingler::normalization`].
    pub fn normalize(self, on: bool) -> Self {
        self.normalization(Normalization::default_or_none(on))
    }

    /// The kind of shingle.
    pub fn kind(&self) -> ShingleKind {
        self.kind
    }

    /// The normalization level.
    pub fn normalization_level(&self) -> Normalization {
        self.normalization
    }

    /// The text as it is shingled: normalized, or as given.
    pub fn normalized<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.normalization.apply(text)
    }

    /// Appends the hashes of every shingle of `text` (in text order, with repeats) to `out`.
    ///
    /// A non-empty text shorter than `k` is one shingle; an empty text has none.
    pub fn hashes_into(&self, text: &str, out: &mut Vec<u64>) {
        self.hashes_uncapped(text, out, self.max_shingles);
    }

    /// Appends the hashes (at most `cap`); returns true if the text is short (non-empty,
    /// fewer than `k` tokens).
    fn hashes_uncapped(&self, text: &str, out: &mut Vec<u64>, cap: usize) -> bool {
        let start = out.len();
        // A prefix long enough for `cap` shingles: k·cap characters are at most 4·k·cap bytes.
        // Saturating throughout: a huge cap or k must mean "the whole text", never wrap.
        let prefix = cap.saturating_mul(self.kind.size().saturating_mul(4).saturating_add(4));
        let text = if text.len() > prefix {
            let mut end = prefix.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            &text[..end]
        } else {
            text
        };
        let fused = match (self.kind, self.normalization) {
            (ShingleKind::Char(k), level)
                if k <= 7 && level != Normalization::None && text.is_ascii() =>
            {
                Some(if level == Normalization::Aggressive {
                    ascii_normalized_shingles::<true>(text.as_bytes(), k, out)
                } else {
                    ascii_normalized_shingles::<false>(text.as_bytes(), k, out)
                })
            }
            _ => None,
        };
        if let Some(short) = fused {
            out.truncate(start.saturating_add(cap));
            return short;
        }
        let text = self.normalized(text);
        let short = match self.kind {
            ShingleKind::Char(k) => char_shingles(&text, k, out),
            ShingleKind::Word(k) => word_shingles(&text, k, out),
        };
        out.truncate(start.saturating_add(cap));
        short
    }

    /// Appends the hashes of every shingle of `text`, ignoring the cap (for the sketch of a
    /// truncated document's whole text).
    pub fn all_hashes_into(&self, text: &str, out: &mut Vec<u64>) {
        self.hashes_uncapped(text, out, usize::MAX);
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
        self.shingle_info(text, out).truncated
    }

    /// Replaces `out` with the set of shingle hashes of `text`, reusing its allocation, and
    /// tells whether the document was cut or is shorter than `k` tokens.
    ///
    /// ```
    /// use neardup::{Shingler, ShingleKind};
    /// let shingler = Shingler::new(ShingleKind::Word(3));
    /// let mut set = Vec::new();
    /// assert!(shingler.shingle_info("two words", &mut set).short);
    /// assert!(!shingler.shingle_info("three whole words", &mut set).short);
    /// ```
    pub fn shingle_info(&self, text: &str, out: &mut Vec<u64>) -> ShingleInfo {
        self.shingle_info_with(text, out, |_| {})
    }

    /// [`Shingler::shingle_info`], handing `sorted` the document's shingle hashes sorted
    /// with their repeats (the counts a SimHash weighs) before they become a set.
    pub(crate) fn shingle_info_with(
        &self,
        text: &str,
        out: &mut Vec<u64>,
        sorted: impl FnOnce(&[u64]),
    ) -> ShingleInfo {
        out.clear();
        let short = self.hashes_uncapped(text, out, self.max_shingles.saturating_add(1));
        let truncated = out.len() > self.max_shingles;
        out.truncate(self.max_shingles);
        sort_uniform(out);
        sorted(out);
        if self.multiset {
            number_occurrences(out);
            sort_uniform(out);
        }
        dedup_sorted(out);
        ShingleInfo { truncated, short }
    }

    /// Every shingle of `text` past the cap, as the elements its set is made of: for a
    /// multiset, occurrences numbered (for the sketch of a truncated document's whole
    /// text).
    pub(crate) fn all_elements_into(&self, text: &str, out: &mut Vec<u64>) {
        self.all_hashes_into(text, out);
        if self.multiset {
            out.sort_unstable();
            number_occurrences(out);
        }
    }
}

/// Gives each repeat of a value in a sorted slice its own value: the i-th occurrence
/// (from 0) of `h` becomes `occurrence(h, i)`, the first staying `h`. The result is no
/// longer sorted.
fn number_occurrences(v: &mut [u64]) {
    let mut i = 0;
    while i < v.len() {
        let h = v[i];
        let mut j = i + 1;
        while j < v.len() && v[j] == h {
            v[j] = occurrence(h, (j - i) as u64);
            j += 1;
        }
        i = j;
    }
}

/// The element of the `n`-th occurrence (n ≥ 1) of shingle hash `h`: fixed for all
/// versions, like the shingle hashes.
fn occurrence(h: u64, n: u64) -> u64 {
    crate::rng::mix64(h ^ crate::rng::mix64(n.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

/// Sorts uniformly distributed hashes (see [`crate::text::uniform_sort`]), with the thread's
/// own scratch buffers, so a set costs no allocation once the thread has sorted one as
/// large. Short inputs use the standard sort.
fn sort_uniform(v: &mut Vec<u64>) {
    const SMALL: usize = 32;
    if v.len() <= SMALL {
        v.sort_unstable();
        return;
    }
    thread_local! {
        static SCRATCH: std::cell::RefCell<crate::text::uniform_sort::Scratch<u64>> =
            std::cell::RefCell::new(crate::text::uniform_sort::Scratch::default());
    }
    SCRATCH.with_borrow_mut(|scratch| crate::text::uniform_sort::sort(v, scratch, |&x| x));
}

/// Removes repeats from a sorted vector without a branch per element: texts repeat
/// shingles at random, so a branch on "same as the last one" would be mispredicted often.
fn dedup_sorted(v: &mut Vec<u64>) {
    if v.len() < 2 {
        return;
    }
    // Compared with the previous value held in a register, not read back from where it
    // was just stored: that store-to-load round trip made every step wait for the last.
    let mut kept = 1;
    let mut previous = v[0];
    for i in 1..v.len() {
        let x = v[i];
        v[kept] = x;
        kept += (x != previous) as usize;
        previous = x;
    }
    v.truncate(kept);
}

/// The hash of one shingle's bytes. Up to 7 bytes are packed into a word with their
/// length in the top byte (distinct shingles give distinct words) and mixed by a bijection;
/// longer shingles go through xxh3. Both are fixed for all versions.
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
    crate::rng::mix64(word ^ SHINGLE_SEED)
}

/// Char shingles of pure-ASCII text, k ≤ 7, `bytes` at least `k` long.
fn ascii_shingles(bytes: &[u8], k: usize, out: &mut Vec<u64>) {
    with_ascii_scratch(|buf| {
        buf.clear();
        buf.extend_from_slice(bytes);
        window_hashes(buf, k, out);
    });
}

/// Char k-grams (k ≤ 7) of pure-ASCII text normalized first into a scratch buffer
/// (lowercased, whitespace runs as one space, trimmed, and punctuation dropped if
/// `STRIP`), exactly as [`Normalization::apply`] followed by [`char_shingles`]. Returns
/// true if the text is short (some characters, fewer than k).
fn ascii_normalized_shingles<const STRIP: bool>(
    bytes: &[u8],
    k: usize,
    out: &mut Vec<u64>,
) -> bool {
    with_ascii_scratch(|buf| {
        crate::text::normalize::normalize_ascii_into::<STRIP>(bytes, buf);
        let len = buf.len();
        if len >= k {
            window_hashes(buf, k, out);
            return false;
        }
        if len > 0 {
            // The whole normalized text is one shingle.
            out.push(hash(buf));
        }
        len > 0
    })
}

/// Runs `f` with the thread's byte buffer for ASCII text, so shingling allocates nothing
/// once the thread has seen a text as long. A buffer grown past 1 MiB by a huge text is
/// let go afterwards rather than kept for the thread's life.
fn with_ascii_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    const KEPT: usize = 1 << 20;
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|buf| {
        let result = f(buf);
        if buf.capacity() > KEPT {
            *buf = Vec::new();
        }
        result
    })
}

/// Appends the hash of every k-byte window (k ≤ 7) of `text`, which is at least `k` long;
/// pads `text` with zeros.
fn window_hashes(text: &mut Vec<u8>, k: usize, out: &mut Vec<u64>) {
    let windows = text.len() + 1 - k;
    text.extend_from_slice(&[0; 8]);
    let start = out.len();
    out.resize(start + windows, 0);
    let room = &mut out[start..];
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512dq")
    {
        // SAFETY: the CPU supports AVX-512F and DQ, checked just above.
        unsafe { window_hashes_avx512(text, k, room) };
        return;
    }
    window_hashes_into(text, k, room);
}

/// [`window_hashes_into`] compiled for AVX-512, whose 64-bit multiplies let the compiler
/// hash eight windows per instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn window_hashes_avx512(text: &[u8], k: usize, out: &mut [u64]) {
    window_hashes_into(text, k, out)
}

/// Writes the hash of window `i` of `text` (its bytes `i..i + k`) to `out[i]`; `text`
/// holds at least `out.len() + 8` bytes (a block's second word may lie past the last
/// window). Eight windows at a time are cut from two 8-byte
/// words by fixed shifts, the same for every block, so the compiler can vectorize them.
#[inline(always)]
fn window_hashes_into(text: &[u8], k: usize, out: &mut [u64]) {
    let tag = (k as u64) << 56;
    let mask = u64::MAX >> (64 - 8 * k);
    let word = |at: usize| u64::from_le_bytes(text[at..at + 8].try_into().unwrap_or_default());
    let done = out.len() / 8 * 8;
    for (b, block) in out[..done].chunks_exact_mut(8).enumerate() {
        let (low, high) = (word(8 * b), word(8 * b + 8));
        for (j, slot) in block.iter_mut().enumerate() {
            // Little-endian, as `hash` packs: the window's first byte is the lowest. The
            // high word goes in by two shifts, as a shift by 64 bits (j = 0) is not one.
            let window = (low >> (8 * j)) | ((high << 1) << (63 - 8 * j));
            *slot = packed_hash((window & mask) | tag);
        }
    }
    for (i, slot) in out.iter_mut().enumerate().skip(done) {
        *slot = packed_hash((word(i) & mask) | tag);
    }
}

/// Appends the char k-gram hashes; returns true if the text is short (fewer than k chars).
fn char_shingles(text: &str, k: usize, out: &mut Vec<u64>) -> bool {
    if text.is_empty() {
        return false;
    }
    if k <= 7 && text.len() > k && text.is_ascii() {
        ascii_shingles(text.as_bytes(), k, out);
        return false;
    }
    // Byte offsets of every char start, plus the end: window i is starts[i]..starts[i + k].
    let mut starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    starts.push(text.len());
    let chars = starts.len() - 1;
    if chars <= k {
        out.push(hash(text.as_bytes()));
        return chars < k;
    }
    out.reserve(chars + 1 - k);
    let bytes = text.as_bytes();
    for w in starts.windows(k + 1) {
        out.push(hash(&bytes[w[0]..w[k]]));
    }
    false
}

/// Appends the word k-gram hashes: each the hash of its k words joined by one space.
/// Returns true if the text is short (some words, fewer than k).
fn word_shingles(text: &str, k: usize, out: &mut Vec<u64>) -> bool {
    let spans = word_spans(text);
    if spans.is_empty() {
        return false;
    }
    let bytes = text.as_bytes();
    // A window whose words are separated by exactly one space in the text (normalized text,
    // mostly) is hashed straight from the text; others are joined in a buffer first.
    let single = |i: usize| &bytes[spans[i - 1].1..spans[i].0] == b" ";
    let mut buf = Vec::new();
    let mut joined = |first: usize, last: usize, out: &mut Vec<u64>| {
        buf.clear();
        for (i, &(s, e)) in spans[first..=last].iter().enumerate() {
            if i > 0 {
                buf.push(b' ');
            }
            buf.extend_from_slice(&bytes[s..e]);
        }
        out.push(hash(&buf));
    };
    if spans.len() <= k {
        let last = spans.len() - 1;
        if (1..=last).all(single) {
            out.push(hash(&bytes[spans[0].0..spans[last].1]));
        } else {
            joined(0, last, out);
        }
        return spans.len() < k;
    }
    out.reserve(spans.len() + 1 - k);
    // good: how many gaps in a row, ending at the window's last word, are single spaces.
    let mut good = 0;
    for last in 0..spans.len() {
        good = if last > 0 && single(last) {
            good + 1
        } else {
            0
        };
        if last + 1 < k {
            continue;
        }
        let first = last + 1 - k;
        if good >= k - 1 {
            out.push(hash(&bytes[spans[first].0..spans[last].1]));
        } else {
            joined(first, last, out);
        }
    }
    false
}

/// Byte spans of the words of `text` (UAX #29 word segments holding a letter or a digit).
///
/// The text is cut at spaces: UAX #29 always breaks before a space (only WB3d joins
/// spaces, and only to spaces) and no rule after it looks back past a space, so the
/// pieces' words are the text's words. The pieces holding a non-ASCII byte (from the space
/// run of spaces before it to the space after) are split by the unicode-segmentation crate; the ASCII
/// runs between them, however many words long, byte by byte ([`ascii_word_spans`]).
pub(crate) fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    if text.is_ascii() {
        return ascii_word_spans(bytes);
    }
    let mut spans = Vec::with_capacity(text.len() / 6 + 1);
    // `start` is 0 or at a space.
    let mut start = 0;
    while start < bytes.len() {
        let Some(wide) = bytes[start..].iter().position(|b| !b.is_ascii()) else {
            push_ascii_word_spans(&bytes[start..], start, &mut spans);
            break;
        };
        let wide = start + wide;
        // The whole run of spaces: WB3d keeps it one segment, which a mark after it
        // (WB4) can make a word.
        let mut from = bytes[start..wide]
            .iter()
            .rposition(|&b| b == b' ')
            .map_or(start, |i| start + i);
        while from > start && bytes[from - 1] == b' ' {
            from -= 1;
        }
        push_ascii_word_spans(&bytes[start..from], start, &mut spans);
        let to = bytes[wide..]
            .iter()
            .position(|&b| b == b' ')
            .map_or(bytes.len(), |i| wide + i);
        spans.extend(
            text[from..to]
                .unicode_word_indices()
                .map(|(i, w)| (from + i, from + i + w.len())),
        );
        start = to;
    }
    spans
}

/// [`word_spans`] of ASCII text, byte by byte. UAX #29 restricted to ASCII: letters, digits
/// and `_` (ExtendNumLet) join; between two letters `:` `.` `'` join too (WB6, WB7), between
/// two digits `,` `;` `.` `'` (WB11, WB12); everything else breaks. A segment is a word if
/// it holds a letter or a digit (so `__` is not).
fn ascii_word_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::with_capacity(bytes.len() / 6 + 1);
    push_ascii_word_spans(bytes, 0, &mut spans);
    spans
}

/// [`ascii_word_spans`] of `bytes`, each moved by `offset`, onto `spans` (a piece of a
/// longer text split without a vector of its own).
fn push_ascii_word_spans(bytes: &[u8], offset: usize, spans: &mut Vec<(usize, usize)>) {
    let class = |b: u8| CLASSES[usize::from(b)];
    let mut i = 0;
    while i < bytes.len() {
        if class(bytes[i]) & JOINS == 0 {
            i += 1;
            continue;
        }
        let start = i;
        let mut seen = 0;
        loop {
            while let Some(&b) = bytes.get(i) {
                let c = class(b);
                if c & JOINS == 0 {
                    break;
                }
                seen |= c;
                i += 1;
            }
            // Most words end at a space: the rules between two letters or two digits are
            // looked at only after a byte that one of them joins by.
            if i + 1 < bytes.len() && class(bytes[i]) & MIDDLE != 0 {
                let (x, mid, y) = (bytes[i - 1], bytes[i], bytes[i + 1]);
                let letters = x.is_ascii_alphabetic()
                    && y.is_ascii_alphabetic()
                    && matches!(mid, b':' | b'.' | b'\'');
                let digits = x.is_ascii_digit()
                    && y.is_ascii_digit()
                    && matches!(mid, b',' | b';' | b'.' | b'\'');
                if letters || digits {
                    i += 1;
                    continue;
                }
            }
            break;
        }
        if seen & ALNUM != 0 {
            spans.push((offset + start, offset + i));
        }
    }
}

/// [`CLASSES`]: a byte that joins a word (letters, digits, `_`).
const JOINS: u8 = 1;
/// A letter or a digit: a segment holding one is a word.
const ALNUM: u8 = 2;
/// A byte that joins two letters or two digits (`:` `.` `'` `,` `;`).
const MIDDLE: u8 = 4;

/// What each byte is to [`push_ascii_word_spans`], looked up rather than compared.
const CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let byte = b as u8;
        t[b] = if byte.is_ascii_alphanumeric() {
            JOINS | ALNUM
        } else if byte == b'_' {
            JOINS
        } else if matches!(byte, b':' | b'.' | b'\'' | b',' | b';') {
            MIDDLE
        } else {
            0
        };
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

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
        // Without normalization case counts; words are still joined by one space.
        let raw = w.normalize(false);
        h.clear();
        raw.hashes_into("The quick  brown", &mut h);
        assert_eq!(h, vec![hash(b"The quick"), hash(b"quick brown")]);
    }

    #[test]
    fn long_documents_are_capped() {
        let s = Shingler::new(ShingleKind::Char(3)).max_shingles(10);
        let text = "abcdefghijklmnopqrstuvwxyz";
        let mut h = Vec::new();
        s.hashes_into(text, &mut h);
        assert_eq!(h.len(), 10);
        assert!(s.set_into(text, &mut Vec::new()));
        // Exactly 10 positions: nothing is cut.
        assert!(!s.set_into("abcdefghijkl", &mut Vec::new()));
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

    proptest::proptest! {
        #[test]
        fn ascii_words_are_unicode_words(text in "[a-cA-C0-2_:.',; \t\n!\"$-]{0,40}") {
            let expected: Vec<(usize, usize)> = text
                .unicode_word_indices()
                .map(|(i, w)| (i, i + w.len()))
                .collect();
            proptest::prop_assert_eq!(ascii_word_spans(text.as_bytes()), expected);
        }

        #[test]
        fn words_by_pieces_are_unicode_words(
            text in "[a-c0-1 .'\u{a0}\u{301}\u{e31}\u{200d}\u{1f1e6}\u{1f1e8}\u{1f600}éก北タカ]{0,40}"
        ) {
            let expected: Vec<(usize, usize)> = text
                .unicode_word_indices()
                .map(|(i, w)| (i, i + w.len()))
                .collect();
            proptest::prop_assert_eq!(word_spans(&text), expected);
        }

        #[test]
        fn word_shingles_hash_their_words_joined_by_one_space(
            text in "[a-c .,'\u{301}北\t]{0,30}", k in 1usize..4
        ) {
            let words: Vec<&str> = text.unicode_words().collect();
            let expected: Vec<u64> = if words.is_empty() {
                Vec::new()
            } else if words.len() <= k {
                vec![hash(words.join(" ").as_bytes())]
            } else {
                words.windows(k).map(|w| hash(w.join(" ").as_bytes())).collect()
            };
            let mut got = Vec::new();
            word_shingles(&text, k, &mut got);
            proptest::prop_assert_eq!(got, expected);
        }

        #[test]
        fn fused_ascii_shingles_equal_normalizing_first(
            text in "[\\x00-\\x7f]{0,40}|[ a-cA-C.,!;\t\n\x0b\x0c\r]{0,24}",
            k in 1usize..=7,
        ) {
            for level in [Normalization::Basic, Normalization::Nfkc, Normalization::Aggressive] {
                // The normalized text's windows hashed one by one: no code shared with
                // the window hashing under test.
                let normalized = level.apply(&text);
                let bytes = normalized.as_bytes();
                let expected: Vec<u64> = if bytes.len() >= k {
                    bytes.windows(k).map(hash).collect()
                } else if bytes.is_empty() {
                    Vec::new()
                } else {
                    vec![hash(bytes)]
                };
                let expected_short = !bytes.is_empty() && bytes.len() < k;
                let mut fused = Vec::new();
                let short = if level == Normalization::Aggressive {
                    ascii_normalized_shingles::<true>(text.as_bytes(), k, &mut fused)
                } else {
                    ascii_normalized_shingles::<false>(text.as_bytes(), k, &mut fused)
                };
                proptest::prop_assert_eq!(&fused, &expected, "{:?} at {:?}, k = {}", text, level, k);
                proptest::prop_assert_eq!(short, expected_short);
            }
        }

        fn ascii_words_of_any_ascii_are_unicode_words(text in "[\\x00-\\x7f]{0,40}") {
            let expected: Vec<(usize, usize)> = text
                .unicode_word_indices()
                .map(|(i, w)| (i, i + w.len()))
                .collect();
            proptest::prop_assert_eq!(ascii_word_spans(text.as_bytes()), expected);
        }
    }

    /// Σ min / Σ max of the shingles' counts, computed from the counts themselves.
    fn weighted_jaccard(shingler: &Shingler, a: &str, b: &str) -> f64 {
        let counts = |t: &str| {
            let mut all = Vec::new();
            shingler.hashes_into(t, &mut all);
            let mut c = std::collections::HashMap::<u64, u64>::new();
            for h in all {
                *c.entry(h).or_default() += 1;
            }
            c
        };
        let (x, y) = (counts(a), counts(b));
        let (mut min, mut max) = (0u64, 0u64);
        for h in x.keys().chain(y.keys().filter(|h| !x.contains_key(h))) {
            let (p, q) = (
                x.get(h).copied().unwrap_or(0),
                y.get(h).copied().unwrap_or(0),
            );
            min += p.min(q);
            max += p.max(q);
        }
        if max == 0 {
            1.0
        } else {
            min as f64 / max as f64
        }
    }

    proptest::proptest! {
        // Repeats are what multisets are about: few distinct words, many repeats.
        #[test]
        fn multiset_jaccard_is_the_weighted_jaccard_of_counts(
            a in "(ab |cd |ef ){0,30}",
            b in "(ab |cd |ef |gh ){0,30}",
            k in 1usize..=3,
        ) {
            for kind in [ShingleKind::Word(k), ShingleKind::Char(k + 2)] {
                let shingler = Shingler::new(kind).multiset(true);
                let (x, y) = (shingler.shingle_set(&a), shingler.shingle_set(&b));
                let got = if x.is_empty() && y.is_empty() {
                    1.0
                } else {
                    crate::verify::jaccard::jaccard(&x, &y)
                };
                proptest::prop_assert_eq!(got, weighted_jaccard(&shingler, &a, &b), "{:?} {:?} {:?}", kind, a, b);
            }
        }

        #[test]
        fn dedup_sorted_is_dedup(mut v in proptest::collection::vec(0u64..20, 0..60)) {
            v.sort_unstable();
            let mut expected = v.clone();
            expected.dedup();
            dedup_sorted(&mut v);
            proptest::prop_assert_eq!(v, expected);
        }

        #[test]
        fn uniform_sort_sorts(mut v in proptest::collection::vec(proptest::num::u64::ANY, 0..3000)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            sort_uniform(&mut v);
            proptest::prop_assert_eq!(v, expected);
        }
    }

    #[test]
    fn occurrences_are_numbered_from_the_second_on() {
        let mut v = vec![1, 1, 1, 2, 5, 5];
        number_occurrences(&mut v);
        assert_eq!(
            v,
            [
                1,
                occurrence(1, 1),
                occurrence(1, 2),
                2,
                5,
                occurrence(5, 1)
            ]
        );
        // Without repeats a multiset is the set, and whole-text elements follow the set's.
        let plain = Shingler::new(ShingleKind::Char(3));
        let counted = plain.multiset(true);
        assert_eq!(counted.shingle_set("abcdefg"), plain.shingle_set("abcdefg"));
        assert!(counted.is_multiset() && !plain.is_multiset());
        let mut whole = Vec::new();
        counted.all_elements_into("abab abab", &mut whole);
        whole.sort_unstable();
        assert_eq!(whole, counted.shingle_set("abab abab"));
    }

    proptest::proptest! {
        /// Every length from no whole block of eight windows to several and a remainder,
        /// on the CPU's own path (AVX-512 where it has it) and the portable one.
        #[test]
        fn window_hashes_are_the_hash_of_each_window(
            text in proptest::collection::vec(proptest::num::u8::ANY, 1..60),
            k in 1usize..=7,
        ) {
            proptest::prop_assume!(text.len() >= k);
            let expected: Vec<u64> = text.windows(k).map(hash).collect();
            let mut fast = vec![1, 2];
            window_hashes(&mut text.clone(), k, &mut fast);
            proptest::prop_assert_eq!(&fast[..2], &[1, 2]);
            proptest::prop_assert_eq!(&fast[2..], &expected[..]);
            let mut padded = text.clone();
            padded.extend_from_slice(&[0; 8]);
            let mut portable = vec![0; expected.len()];
            window_hashes_into(&padded, k, &mut portable);
            proptest::prop_assert_eq!(portable, expected);
        }
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

    fn jaccard_of(s: &Shingler, a: &str, b: &str) -> f64 {
        let (x, y) = (s.shingle_set(a), s.shingle_set(b));
        crate::verify::jaccard::jaccard(&x, &y)
    }

    #[test]
    fn each_level_decides_what_is_the_same_text() {
        let nfc = "Perché è così città più";
        let nfd: String = unicode_normalization::UnicodeNormalization::nfd(nfc).collect();
        let fw = ("ＡＩ技術１２３％", "AI技術123%");
        let lig = ("ﬁnancial ﬂows", "financial flows");
        let acc = ("Perché, “così”!", "perche cosi");
        for kind in [ShingleKind::Char(3), ShingleKind::Word(1)] {
            let at = |level| Shingler::new(kind).normalization(level);
            let basic = at(Normalization::Basic);
            let nfkc = Shingler::new(kind);
            let aggressive = at(Normalization::Aggressive);
            assert!(jaccard_of(&basic, nfc, &nfd) < 0.5, "{kind}");
            assert_eq!(jaccard_of(&nfkc, nfc, &nfd), 1.0, "{kind}");
            assert_eq!(jaccard_of(&nfkc, fw.0, fw.1), 1.0, "{kind}");
            assert_eq!(jaccard_of(&nfkc, lig.0, lig.1), 1.0, "{kind}");
            assert!(jaccard_of(&basic, lig.0, lig.1) < 1.0, "{kind}");
            assert!(jaccard_of(&nfkc, acc.0, acc.1) < 1.0, "{kind}");
            assert_eq!(jaccard_of(&aggressive, acc.0, acc.1), 1.0, "{kind}");
            assert_eq!(jaccard_of(&aggressive, nfc, &nfd), 1.0, "{kind}");
        }
        assert_eq!(
            Shingler::default().normalization_level(),
            Normalization::Nfkc
        );
        assert_eq!(
            Shingler::default().normalize(false).normalization_level(),
            Normalization::None
        );
        assert_eq!(
            Shingler::default().normalize(true).normalization_level(),
            Normalization::Nfkc
        );
    }

    fn words(text: &str) -> Vec<&str> {
        text.unicode_words().collect()
    }

    #[test]
    fn words_of_unspaced_scripts() {
        // Han ideographs and Hiragana one at a time, Katakana runs whole.
        assert_eq!(
            words("我们今天去北京。"),
            ["我", "们", "今", "天", "去", "北", "京"]
        );
        assert_eq!(
            words("東京タワーへ行きました"),
            ["東", "京", "タワー", "へ", "行", "き", "ま", "し", "た"]
        );
        // Thai, Lao, Khmer, Myanmar: UAX #29 has no dictionary for them; the crate splits
        // them into letters with their marks.
        assert_eq!(words("ภาษาไทย"), ["ภ", "า", "ษ", "า", "ไ", "ท", "ย"]);
        assert_eq!(words("ທີ່ລາວ").len(), 4);
        assert_eq!(words("ខ្មែរ"), ["ខ្", "មែ", "រ"]);
        assert_eq!(words("မြန်မာ"), ["မြ", "န်", "မာ"]);
        // Mixed scripts, spaced words and punctuation.
        assert_eq!(
            words("neardup 工具 finds 重复, don't 3.14!"),
            ["neardup", "工", "具", "finds", "重", "复", "don't", "3.14"]
        );
    }

    #[test]
    fn word_shingles_join_words_by_one_space() {
        let w = Shingler::new(ShingleKind::Word(2));
        let mut h = Vec::new();
        w.hashes_into("我们去北京", &mut h);
        assert_eq!(
            h,
            vec![
                hash("我 们".as_bytes()),
                hash("们 去".as_bytes()),
                hash("去 北".as_bytes()),
                hash("北 京".as_bytes())
            ]
        );
        // Punctuation is not a word: "fox," and "fox" are the same word.
        h.clear();
        w.hashes_into("The quick, brown fox!", &mut h);
        assert_eq!(
            h,
            vec![hash(b"the quick"), hash(b"quick brown"), hash(b"brown fox")]
        );
        // Punctuation alone has no words.
        assert!(w.shingle_set("... !!! --").is_empty());
    }

    #[test]
    fn chinese_japanese_and_thai_near_duplicates_match_on_words() {
        let cases = [
            (
                "今天天气很好，我们一起去公园散步，然后在湖边喝咖啡聊天。",
                "今天天气很好，我们一起去公园散步，然后在河边喝咖啡聊天。",
            ),
            (
                "東京タワーの近くにある小さなレストランで、友達と一緒に晩ご飯を食べました。",
                "東京タワーの近くにある小さなレストランで、家族と一緒に晩ご飯を食べました。",
            ),
            (
                "วันนี้อากาศดีมากเราจะไปเดินเล่นที่สวนสาธารณะกับเพื่อนๆแล้วกินข้าวเย็นด้วยกัน",
                "วันนี้อากาศดีมากเราจะไปเดินเล่นที่สวนสาธารณะกับครอบครัวแล้วกินข้าวเย็นด้วยกัน",
            ),
        ];
        for (a, b) in cases {
            for kind in [
                ShingleKind::Word(2),
                ShingleKind::Word(3),
                ShingleKind::Char(3),
            ] {
                let s = Shingler::new(kind);
                let j = jaccard_of(&s, a, b);
                assert!((0.6..1.0).contains(&j), "{kind} {a}: {j}");
                let mut set = Vec::new();
                assert!(!s.shingle_info(a, &mut set).short);
            }
        }
    }

    #[test]
    fn short_documents_are_flagged() {
        let mut set = Vec::new();
        let w = Shingler::new(ShingleKind::Word(3));
        assert!(w.shingle_info("two words", &mut set).short);
        assert!(!w.shingle_info("exactly three words", &mut set).short);
        assert!(!w.shingle_info("", &mut set).short);
        assert!(!w.shingle_info("!!!", &mut set).short);
        assert!(w.shingle_info("北京", &mut set).short);
        let c = Shingler::new(ShingleKind::Char(5));
        assert!(c.shingle_info("abcd", &mut set).short);
        assert!(!c.shingle_info("abcde", &mut set).short);
        assert!(!c.shingle_info("abcdef", &mut set).short);
        assert!(c.shingle_info("日本語", &mut set).short);
        assert!(!c.shingle_info("", &mut set).short);
        assert!(
            Shingler::new(ShingleKind::Char(3))
                .max_shingles(2)
                .shingle_info("abcdef", &mut set)
                .truncated
        );
    }

    #[test]
    fn a_k_of_zero_is_one() {
        for (zero, one) in [
            (ShingleKind::Char(0), ShingleKind::Char(1)),
            (ShingleKind::Word(0), ShingleKind::Word(1)),
        ] {
            let shingler = Shingler::new(zero);
            assert_eq!(shingler.kind(), one);
            for text in ["", "a", "hello world", "héllo wörld"] {
                assert_eq!(
                    shingler.shingle_set(text),
                    Shingler::new(one).shingle_set(text)
                );
            }
        }
    }

    #[test]
    fn hashes_are_stable_across_versions() {
        // Pinned values: if this fails, every persisted signature and index is invalidated.
        let set = Shingler::new(ShingleKind::Char(5)).shingle_set("Hello");
        assert_eq!(set, vec![12_774_514_482_281_871_338_u64]);
        // A text of several blocks of eight windows, for every k of the ASCII fast path:
        // the set's size and a fingerprint of its hashes, as the first version gave them.
        let pinned: [(usize, u64); 7] = [
            (28, 15_753_421_469_462_294_166),
            (40, 11_724_432_952_908_581_278),
            (40, 17_081_095_338_171_351_254),
            (40, 4_241_497_066_353_506_944),
            (40, 1_800_477_995_883_836_052),
            (39, 8_014_694_910_433_989_279),
            (38, 8_476_592_191_080_615_051),
        ];
        for (k, (size, fingerprint)) in (1..=7).zip(pinned) {
            let set = Shingler::new(ShingleKind::Char(k))
                .shingle_set("The quick brown fox jumps over the lazy dog.");
            assert_eq!(set.len(), size, "k = {k}");
            let got = set.iter().fold(0u64, |a, &h| a.rotate_left(5) ^ h);
            assert_eq!(got, fingerprint, "k = {k}");
        }
        assert_eq!(
            hash(b"hello world"),
            xxh3_64_with_seed(b"hello world", 0x6e65_6172_6475_7031)
        );
    }
}
