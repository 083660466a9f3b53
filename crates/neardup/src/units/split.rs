//! Documents cut into units: paragraphs, lines, or spans of sentences.

use std::fmt;
use std::num::NonZeroU32;
use std::ops::Range;
use std::str::FromStr;

use unicode_segmentation::UnicodeSegmentation;

/// What a document is cut into for unit deduplication.
///
/// A unit is a byte range of the text with the whitespace at both ends left out, so the
/// whitespace between units (line ends, blank lines, the spaces after a full stop) is the
/// separator, never part of a unit. A span holding only whitespace is no unit.
///
/// Parsed from and printed as `paragraph`, `line`, `sentences:N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnitKind {
    /// Runs of lines between blank lines (lines holding only whitespace).
    Paragraph,
    /// Lines, cut at `\n` (a `\r` before it is whitespace, so it stays out of the unit).
    Line,
    /// Spans of N sentences by the Unicode sentence boundaries of UAX #29, one after the
    /// other without overlap (C4's 3-sentence spans are `sentences:3`); the last span of a
    /// document may be shorter.
    Sentences(NonZeroU32),
}

/// A unit kind that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitKindError {
    /// Not one of the names.
    #[error("invalid unit {0:?}: expected paragraph, line or sentences:N")]
    Unknown(String),
    /// `sentences:N` with N not a whole number from 1 up.
    #[error("invalid unit {0:?}: N in sentences:N must be a whole number from 1")]
    SentenceCount(String),
}

impl FromStr for UnitKind {
    type Err = UnitKindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "paragraph" => Ok(UnitKind::Paragraph),
            "line" => Ok(UnitKind::Line),
            _ => match s.strip_prefix("sentences:") {
                Some(n) => n
                    .parse::<NonZeroU32>()
                    .map(UnitKind::Sentences)
                    .map_err(|_| UnitKindError::SentenceCount(s.to_owned())),
                None => Err(UnitKindError::Unknown(s.to_owned())),
            },
        }
    }
}

impl fmt::Display for UnitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitKind::Paragraph => f.write_str("paragraph"),
            UnitKind::Line => f.write_str("line"),
            UnitKind::Sentences(n) => write!(f, "sentences:{n}"),
        }
    }
}

impl UnitKind {
    /// The units of `text`, as byte ranges in order; each starts and ends on a character
    /// boundary and on no whitespace.
    ///
    /// ```
    /// use neardup::units::UnitKind;
    ///
    /// let text = "Cookies help us.\r\nAccept?\n\n  Der Bär schläft. Er träumt.\n";
    /// let pieces = |kind: UnitKind| -> Vec<&str> {
    ///     kind.split(text).into_iter().map(|r| &text[r]).collect()
    /// };
    /// assert_eq!(
    ///     pieces(UnitKind::Paragraph),
    ///     ["Cookies help us.\r\nAccept?", "Der Bär schläft. Er träumt."]
    /// );
    /// assert_eq!(
    ///     pieces(UnitKind::Line),
    ///     ["Cookies help us.", "Accept?", "Der Bär schläft. Er träumt."]
    /// );
    /// let two: UnitKind = "sentences:2".parse()?;
    /// assert_eq!(
    ///     pieces(two),
    ///     ["Cookies help us.\r\nAccept?", "Der Bär schläft. Er träumt."]
    /// );
    /// # Ok::<(), neardup::units::UnitKindError>(())
    /// ```
    pub fn split(self, text: &str) -> Vec<Range<usize>> {
        match self {
            UnitKind::Line => lines(text).filter_map(|r| trimmed(text, r)).collect(),
            UnitKind::Paragraph => paragraphs(text),
            UnitKind::Sentences(n) => sentences(text, n.get() as usize),
        }
    }
}

/// Each line's range, its `\n` left out.
fn lines(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = 0;
    text.split_inclusive('\n').map(move |line| {
        let range = start..start + line.trim_end_matches('\n').len();
        start += line.len();
        range
    })
}

/// `range` of `text` without the whitespace at its ends; `None` if nothing is left.
fn trimmed(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let piece = &text[range.clone()];
    let start = range.start + (piece.len() - piece.trim_start().len());
    let end = range.start + piece.trim_end().len();
    (start < end).then_some(start..end)
}

fn paragraphs(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut current: Option<Range<usize>> = None;
    for line in lines(text) {
        match trimmed(text, line) {
            Some(r) => match &mut current {
                Some(c) => c.end = r.end,
                None => current = Some(r),
            },
            None => out.extend(current.take()),
        }
    }
    out.extend(current);
    out
}

fn sentences(text: &str, n: usize) -> Vec<Range<usize>> {
    let bounds: Vec<Range<usize>> = text
        .split_sentence_bound_indices()
        .filter_map(|(i, s)| trimmed(text, i..i + s.len()))
        .collect();
    bounds
        .chunks(n)
        .map(|c| c[0].start..c[c.len() - 1].end)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'a>(kind: &str, text: &'a str) -> Vec<&'a str> {
        let kind: UnitKind = kind.parse().unwrap();
        kind.split(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn paragraphs_end_at_blank_lines_of_any_whitespace() {
        let text = "\n\na\nb\n \t\n\nc  \r\n\r\nd";
        assert_eq!(pieces("paragraph", text), ["a\nb", "c", "d"]);
        assert!(pieces("paragraph", " \n\t\n").is_empty());
        assert!(pieces("paragraph", "").is_empty());
    }

    #[test]
    fn lines_leave_out_blank_lines_and_line_ends() {
        assert_eq!(
            pieces("line", "one\r\n\n  two  \nthree"),
            ["one", "two", "three"]
        );
    }

    #[test]
    fn sentence_spans_group_n_and_keep_a_short_tail() {
        let text = "Eins ist gut. Zwei auch! Drei? Vier.";
        assert_eq!(
            pieces("sentences:2", text),
            ["Eins ist gut. Zwei auch!", "Drei? Vier."]
        );
        assert_eq!(
            pieces("sentences:3", text),
            ["Eins ist gut. Zwei auch! Drei?", "Vier."]
        );
        assert_eq!(pieces("sentences:1", "Ja.")[0], "Ja.");
    }

    #[test]
    fn ranges_are_on_char_boundaries_in_multibyte_text() {
        let text = "日本語の文。\n\n次の段落です。 Ещё одно.";
        for kind in ["paragraph", "line", "sentences:1", "sentences:2"] {
            let kind: UnitKind = kind.parse().unwrap();
            for r in kind.split(text) {
                assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
                assert_eq!(text[r.clone()].trim(), &text[r]);
            }
        }
        assert_eq!(
            pieces("sentences:1", text),
            ["日本語の文。", "次の段落です。", "Ещё одно."]
        );
    }

    #[test]
    fn names_parse_and_print_back() {
        for name in ["paragraph", "line", "sentences:3"] {
            assert_eq!(name.parse::<UnitKind>().unwrap().to_string(), name);
        }
        assert!(matches!(
            "sentences:0".parse::<UnitKind>(),
            Err(UnitKindError::SentenceCount(_))
        ));
        assert!(matches!(
            "word".parse::<UnitKind>(),
            Err(UnitKindError::Unknown(_))
        ));
    }
}
