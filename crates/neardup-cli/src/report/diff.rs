//! A word-level diff (Myers' O(ND) algorithm) for showing two near-duplicates side by side.
//!
//! Words are maximal runs of non-whitespace, compared exactly. Inputs are cut to a bounded
//! number of words and characters first, so a diff costs at most O((n + m) · D) steps and
//! O(D²) memory with n, m ≤ [`MAX_WORDS`].

/// Words of each text that take part in a diff; the rest is cut off for display.
pub const MAX_WORDS: usize = 250;
/// Characters of each text that take part in a diff.
pub const MAX_CHARS: usize = 1_500;
/// A single word longer than this is shown shortened.
pub const MAX_WORD_CHARS: usize = 60;

/// One step of an edit script from `a` to `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// `a[a] == b[b]`, kept.
    Equal { a: usize, b: usize },
    /// `a[a]` is not in `b`.
    Delete { a: usize },
    /// `b[b]` is not in `a`.
    Insert { b: usize },
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
    /// The words joined by single spaces (long words shortened).
    pub text: String,
    pub shared: bool,
}

/// Both sides of a word diff, ready to display.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WordDiff {
    pub a: Vec<Segment>,
    pub b: Vec<Segment>,
    /// Words of each side left out of the diff by the bounds.
    pub a_cut: usize,
    pub b_cut: usize,
    /// Words in the longest common subsequence (of the shown parts).
    pub shared_words: usize,
}

/// The words of `text` within the bounds, and how many words were left out.
pub fn bounded_words(text: &str, max_words: usize, max_chars: usize) -> (Vec<&str>, usize) {
    let mut words = Vec::new();
    let mut chars = 0;
    let mut all = text.split_whitespace();
    for w in all.by_ref() {
        let len = w.chars().count().min(MAX_WORD_CHARS + 1);
        if words.len() == max_words || (chars + len > max_chars && !words.is_empty()) {
            return (words, 1 + all.count());
        }
        chars += len + 1;
        words.push(w);
    }
    (words, 0)
}

/// The word diff of two texts, each cut to [`MAX_WORDS`] words and [`MAX_CHARS`] characters.
pub fn word_diff(a: &str, b: &str) -> WordDiff {
    let (wa, a_cut) = bounded_words(a, MAX_WORDS, MAX_CHARS);
    let (wb, b_cut) = bounded_words(b, MAX_WORDS, MAX_CHARS);
    let edits = diff(&wa, &wb);
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
        a_cut,
        b_cut,
        shared_words,
    }
}

fn segments(words: &[&str], shared: &[bool]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for (w, &s) in words.iter().zip(shared) {
        match out.last_mut() {
            Some(seg) if seg.shared == s => {
                seg.text.push(' ');
                push_word(&mut seg.text, w);
            }
            _ => {
                let mut text = String::new();
                push_word(&mut text, w);
                out.push(Segment { text, shared: s });
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
        assert_eq!((d.a_cut, d.b_cut), (0, 0));
    }

    #[test]
    fn word_diff_is_bounded() {
        let long: String = (0..10_000).map(|i| format!("w{} ", i % 97)).collect();
        let other: String = (0..10_000).map(|i| format!("w{} ", i % 89)).collect();
        let d = word_diff(&long, &other);
        let shown: usize = d.a.iter().map(|s| s.text.split(' ').count()).sum();
        assert!(shown <= MAX_WORDS);
        assert_eq!(shown + d.a_cut, 10_000);
        let text: usize = d.a.iter().map(|s| s.text.chars().count()).sum();
        assert!(text <= MAX_CHARS + d.a.len(), "{text}");

        let huge_word = "x".repeat(100_000);
        let d = word_diff(&huge_word, "y");
        assert_eq!(d.a[0].text.chars().count(), MAX_WORD_CHARS + 1);
        assert_eq!(d.a_cut, 0);
    }
}
