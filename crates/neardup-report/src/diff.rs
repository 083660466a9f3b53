//! A word-level diff (Myers' O(ND) algorithm) for showing two near-duplicates side by side.
//!
//! Words are Unicode word-boundary segments (UAX #29) other than whitespace, compared
//! exactly: words, numbers and single punctuation marks; in Chinese, Japanese (except
//! Katakana runs) and Thai text, written without spaces, single characters. The text is
//! shown with its own spacing (collapsed to one space). Inputs are cut to a bounded number
//! of words and characters first, so a diff costs at most O((n + m) · D) steps and O(D²)
//! memory with n, m ≤ [`MAX_WORDS`]; where a text is cut, the diff says how much was left
//! out.
//!
//! ```
//! use neardup_report::diff::word_diff;
//!
//! let d = word_diff("red bike for sale", "red bike on sale");
//! assert_eq!(d.shared_words, 3);
//! let only_left: Vec<&str> = d.a.iter().filter(|s| !s.shared).map(|s| s.text.as_str()).collect();
//! assert_eq!(only_left, ["for"]);
//! ```

use unicode_segmentation::UnicodeSegmentation;

/// Words of each text that take part in a diff; the rest is cut off for display.
pub const MAX_WORDS: usize = 600;
/// Characters of each text that take part in a diff.
pub const MAX_CHARS: usize = 3_000;
/// A single word longer than this is shown shortened.
pub const MAX_WORD_CHARS: usize = 60;

/// One step of an edit script from `a` to `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// `a[a] == b[b]`, kept.
    Equal {
        /// Index in `a`.
        a: usize,
        /// Index in `b`.
        b: usize,
    },
    /// `a[a]` is not in `b`.
    Delete {
        /// Index in `a`.
        a: usize,
    },
    /// `b[b]` is not in `a`.
    Insert {
        /// Index in `b`.
        b: usize,
    },
}

/// A shortest edit script from `a` to `b` (Myers 1986): its `Equal` steps form a longest
/// common subsequence. Steps are in order of both sequences.
pub fn diff<T: PartialEq>(a: &[T], b: &[T]) -> Vec<Edit> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = n + m;
    let offset = max + 1;
    // v[k + offset]: the furthest x reached on diagonal k = x − y.
    let mut v = vec![0isize; 2 * max as usize + 3];
    // trace[d]: v over diagonals −d..=d before step d (all that step d and backtracking read).
    let mut trace: Vec<Vec<isize>> = Vec::new();
    'search: for d in 0..=max {
        trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let i = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[i - 1] < v[i + 1]) {
                v[i + 1] // down: insert b[y]
            } else {
                v[i - 1] + 1 // right: delete a[x]
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[i] = x;
            if x >= n && y >= m {
                break 'search;
            }
            k += 2;
        }
    }
    // Walk back from (n, m) through the saved states.
    let mut edits = Vec::with_capacity((n + m) as usize);
    let (mut x, mut y) = (n, m);
    for (d, saved) in trace.iter().enumerate().rev() {
        let d = d as isize;
        let at = |k: isize| saved[(k + d) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = if d == 0 { 0 } else { at(prev_k) };
        let prev_y = if d == 0 { 0 } else { prev_x - prev_k };
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            edits.push(Edit::Equal {
                a: x as usize,
                b: y as usize,
            });
        }
        if d > 0 {
            if x == prev_x {
                edits.push(Edit::Insert {
                    b: (y - 1) as usize,
                });
            } else {
                edits.push(Edit::Delete {
                    a: (x - 1) as usize,
                });
            }
        }
        x = prev_x;
        y = prev_y;
    }
    edits.reverse();
    edits
}

/// A run of consecutive words of one side, all shared with the other side or all not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The words with the text's own spacing, runs of whitespace as one space (long words
    /// shortened).
    pub text: String,
    /// The words are in the other side too (in the longest common subsequence).
    pub shared: bool,
    /// Whitespace separates this segment from the one before it.
    pub space_before: bool,
}

/// One word of a text, as compared and shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word<'a> {
    /// The word as written.
    pub text: &'a str,
    /// Whitespace stands between this word and the one before it.
    pub space_before: bool,
}

/// What the bounds left out of one side: nothing, or everything from a word on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// Words left out.
    pub words: usize,
    /// Characters left out (of the text, whitespace included; the tails of shortened long
    /// words count too).
    pub chars: usize,
}

impl Cut {
    /// True if the whole text is shown.
    pub fn is_none(&self) -> bool {
        self.words == 0 && self.chars == 0
    }
}

/// Both sides of a word diff, ready to display.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WordDiff {
    /// The left text's segments.
    pub a: Vec<Segment>,
    /// The right text's segments.
    pub b: Vec<Segment>,
    /// Words of the left text shown (and compared).
    pub a_words: usize,
    /// Words of the right text shown (and compared).
    pub b_words: usize,
    /// What the bounds left out of the left text.
    pub a_cut: Cut,
    /// What the bounds left out of the right text.
    pub b_cut: Cut,
    /// Words in the longest common subsequence (of the shown parts).
    pub shared_words: usize,
}

/// The words of `text` within the bounds, and what was left out.
pub fn bounded_words(text: &str, max_words: usize, max_chars: usize) -> (Vec<Word<'_>>, Cut) {
    let mut words = Vec::new();
    let mut chars = 0;
    let mut space = false;
    let mut shortened = 0;
    for (at, seg) in text.split_word_bound_indices() {
        if seg.chars().all(char::is_whitespace) {
            space = !words.is_empty();
            continue;
        }
        let n = seg.chars().count();
        let len = n.min(MAX_WORD_CHARS + 1);
        if words.len() == max_words || (chars + len > max_chars && !words.is_empty()) {
            let rest = &text[at..];
            let left: usize = rest
                .split_word_bounds()
                .filter(|w| !w.chars().all(char::is_whitespace))
                .count();
            let cut = Cut {
                words: left,
                chars: rest.chars().count() + shortened,
            };
            return (words, cut);
        }
        shortened += n - n.min(MAX_WORD_CHARS);
        chars += len + space as usize;
        words.push(Word {
            text: seg,
            space_before: space,
        });
        space = false;
    }
    let cut = Cut {
        words: 0,
        chars: shortened,
    };
    (words, cut)
}

/// The word diff of two texts, each cut to [`MAX_WORDS`] words and [`MAX_CHARS`] characters.
pub fn word_diff(a: &str, b: &str) -> WordDiff {
    let (wa, a_cut) = bounded_words(a, MAX_WORDS, MAX_CHARS);
    let (wb, b_cut) = bounded_words(b, MAX_WORDS, MAX_CHARS);
    let ta: Vec<&str> = wa.iter().map(|w| w.text).collect();
    let tb: Vec<&str> = wb.iter().map(|w| w.text).collect();
    let edits = diff(&ta, &tb);
    let mut shared_a = vec![false; wa.len()];
    let mut shared_b = vec![false; wb.len()];
    let mut shared_words = 0;
    for e in &edits {
        if let Edit::Equal { a, b } = *e {
            shared_a[a] = true;
            shared_b[b] = true;
            shared_words += 1;
        }
    }
    WordDiff {
        a: segments(&wa, &shared_a),
        b: segments(&wb, &shared_b),
        a_words: wa.len(),
        b_words: wb.len(),
        a_cut,
        b_cut,
        shared_words,
    }
}

fn segments(words: &[Word<'_>], shared: &[bool]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for (w, &s) in words.iter().zip(shared) {
        match out.last_mut() {
            Some(seg) if seg.shared == s => {
                if w.space_before {
                    seg.text.push(' ');
                }
                push_word(&mut seg.text, w.text);
            }
            _ => {
                let mut text = String::new();
                push_word(&mut text, w.text);
                out.push(Segment {
                    text,
                    shared: s,
                    space_before: w.space_before,
                });
            }
        }
    }
    out
}

fn push_word(out: &mut String, word: &str) {
    match word.char_indices().nth(MAX_WORD_CHARS) {
        None => out.push_str(word),
        Some((at, _)) => {
            out.push_str(&word[..at]);
            out.push('\u{2026}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Length of a longest common subsequence by dynamic programming (the reference).
    fn lcs_len<T: PartialEq>(a: &[T], b: &[T]) -> usize {
        let mut row = vec![0usize; b.len() + 1];
        for x in a {
            let mut diag = 0;
            for (j, y) in b.iter().enumerate() {
                let up = row[j + 1];
                row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
                diag = up;
            }
        }
        row[b.len()]
    }

    /// Checks that `edits` is a valid script from `a` to `b` with a longest common subsequence.
    fn check<T: PartialEq + std::fmt::Debug>(a: &[T], b: &[T]) {
        let edits = diff(a, b);
        let (mut i, mut j, mut equal) = (0, 0, 0);
        for e in &edits {
            match *e {
                Edit::Equal { a: x, b: y } => {
                    assert_eq!((x, y), (i, j), "{a:?} {b:?} {edits:?}");
                    assert_eq!(a[x], b[y]);
                    i += 1;
                    j += 1;
                    equal += 1;
                }
                Edit::Delete { a: x } => {
                    assert_eq!(x, i);
                    i += 1;
                }
                Edit::Insert { b: y } => {
                    assert_eq!(y, j);
                    j += 1;
                }
            }
        }
        assert_eq!((i, j), (a.len(), b.len()), "{a:?} {b:?} {edits:?}");
        assert_eq!(equal, lcs_len(a, b), "{a:?} {b:?} {edits:?}");
        assert_eq!(edits.len(), a.len() + b.len() - equal);
    }

    #[test]
    fn small_cases() {
        check::<u8>(&[], &[]);
        check(&[1], &[]);
        check(&[], &[1, 2]);
        check(&[1, 2, 3], &[1, 2, 3]);
        check(&[1, 2, 3], &[4, 5, 6]);
        check(b"ABCABBA", b"CBABAC"); // Myers' paper: D = 5
        assert_eq!(diff(b"ABCABBA", b"CBABAC").len(), 7 + 6 - 4);
    }

    #[test]
    fn random_cases_match_the_dynamic_program() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..500 {
            let alphabet = 1 + next(5);
            let a: Vec<u64> = (0..next(25)).map(|_| next(alphabet)).collect();
            let mut b = a.clone();
            for _ in 0..next(6) {
                match next(3) {
                    0 if !b.is_empty() => {
                        let at = next(b.len() as u64) as usize;
                        b.remove(at);
                    }
                    1 => {
                        let at = next(b.len() as u64 + 1) as usize;
                        b.insert(at, next(alphabet));
                    }
                    _ if !b.is_empty() => {
                        let at = next(b.len() as u64) as usize;
                        b[at] = next(alphabet);
                    }
                    _ => {}
                }
            }
            check(&a, &b);
            let c: Vec<u64> = (0..next(25)).map(|_| next(alphabet)).collect();
            check(&a, &c);
        }
    }

    #[test]
    fn word_diff_marks_shared_and_differing_runs() {
        let d = word_diff(
            "the quick brown fox jumps over the lazy dog",
            "the quick red fox jumps over the  lazy cat today",
        );
        let seg = |t: &str, s: bool| Segment {
            text: t.to_string(),
            shared: s,
            space_before: t != "the quick",
        };
        assert_eq!(
            d.a,
            [
                seg("the quick", true),
                seg("brown", false),
                seg("fox jumps over the lazy", true),
                seg("dog", false)
            ]
        );
        assert_eq!(
            d.b,
            [
                seg("the quick", true),
                seg("red", false),
                seg("fox jumps over the lazy", true),
                seg("cat today", false)
            ]
        );
        assert_eq!(d.shared_words, 7);
        assert_eq!((d.a_words, d.b_words), (9, 10));
        assert!(d.a_cut.is_none() && d.b_cut.is_none());
    }

    #[test]
    fn unspaced_scripts_are_compared_character_by_character() {
        let d = word_diff("今天天气很好，我们去公园。", "今天天气很好，我们去湖边。");
        let texts = |s: &[Segment]| -> Vec<(String, bool)> {
            s.iter().map(|s| (s.text.clone(), s.shared)).collect()
        };
        assert_eq!(
            texts(&d.a),
            [
                ("今天天气很好，我们去".to_string(), true),
                ("公园".to_string(), false),
                ("。".to_string(), true)
            ]
        );
        assert_eq!(texts(&d.b)[1], ("湖边".to_string(), false));
        assert!(d.a.iter().all(|s| !s.space_before));
        assert_eq!(d.shared_words, 11);
        let d = word_diff("ภาษาไทยง่าย", "ภาษาไทยยาก");
        assert_eq!(d.a[0].text, "ภาษาไทย");
        assert!(d.a[0].shared && !d.a[1].shared);
        // Punctuation is its own word; spacing is kept, runs of whitespace as one space.
        let d = word_diff("Hello,  world!", "Hello, world.");
        assert_eq!(d.a[0].text, "Hello, world");
        assert_eq!(d.a[1].text, "!");
        assert!(!d.a[1].space_before);
    }

    #[test]
    fn short_texts_are_shown_whole() {
        let text = "a text of a few words, shown whole";
        let (words, cut) = bounded_words(text, MAX_WORDS, MAX_CHARS);
        assert!(cut.is_none());
        let shown: Vec<&str> = words.iter().map(|w| w.text).collect();
        assert_eq!(shown.concat(), text.replace(' ', ""));
    }

    #[test]
    fn word_diff_is_bounded() {
        let long: String = (0..10_000).map(|i| format!("w{} ", i % 97)).collect();
        let other: String = (0..10_000).map(|i| format!("w{} ", i % 89)).collect();
        let d = word_diff(&long, &other);
        let shown: usize = d.a.iter().map(|s| s.text.split(' ').count()).sum();
        assert!(shown <= MAX_WORDS);
        assert_eq!(shown, d.a_words);
        assert_eq!(shown + d.a_cut.words, 10_000);
        let text: usize = d.a.iter().map(|s| s.text.chars().count()).sum();
        assert!(text <= MAX_CHARS + d.a.len(), "{text}");
        // Shown and left-out characters add up to the text (one space after each shown word).
        assert_eq!(
            text + d.a.len() - 1 + 1 + d.a_cut.chars,
            long.chars().count()
        );

        let huge_word = "x".repeat(100_000);
        let d = word_diff(&huge_word, "y");
        assert_eq!(d.a[0].text.chars().count(), MAX_WORD_CHARS + 1);
        assert_eq!(d.a_cut.words, 0);
        assert_eq!(d.a_cut.chars, 100_000 - MAX_WORD_CHARS);

        // A long unspaced text is cut by characters, and says so.
        let zh: String = "今天天气很好我们去公园".repeat(1000);
        let d = word_diff(&zh, &zh);
        assert_eq!(d.a_words, MAX_WORDS);
        assert_eq!(d.a_cut.words, 11_000 - MAX_WORDS);
        assert_eq!(d.a_cut.chars, 11_000 - MAX_WORDS);
    }
}
