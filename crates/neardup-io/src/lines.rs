//! The lines format: one document per line, optionally `ID<TAB>TEXT`.
//!
//! A line with a tab gives the id (the part before the first tab) and the text (the rest);
//! a line without one is all text and has no id. The text excludes the line's `\n` or
//! `\r\n` (the record's `raw` keeps it) and a UTF-8 BOM at the start of the input. A
//! blank line is a record with empty text (the caller decides what to do with empty
//! documents). A last line without a final newline is a record too. A line longer than
//! the record-size limit is skipped ([`SkipReason::TooLarge`]), the only skip of this
//! format.

use crate::error::Result;
use crate::line_source::{line_content, LineSource, NextLine};
use crate::record::{Entry, Record};
use crate::text::decode;

/// Reads records from the lines format.
pub(crate) struct LinesReader {
    lines: LineSource,
    buf: Vec<u8>,
}

impl LinesReader {
    /// Reads `lines`.
    pub(crate) fn new(lines: LineSource) -> LinesReader {
        LinesReader {
            lines,
            buf: Vec::new(),
        }
    }

    /// The next entry, `None` at the end.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        let location = match self.lines.next_line_record(&mut self.buf)? {
            NextLine::End => return Ok(None),
            NextLine::TooLarge(skipped) => return Ok(Some(skipped)),
            NextLine::Line(location) => location,
        };
        let content = line_content(&self.buf, &location);
        let (id, text, lossy) = match memchr::memchr(b'\t', content) {
            Some(tab) => {
                let (id, id_lossy) = decode(&content[..tab]);
                let (text, text_lossy) = decode(&content[tab + 1..]);
                (Some(id), text, id_lossy || text_lossy)
            }
            None => {
                let (text, lossy) = decode(content);
                (None, text, lossy)
            }
        };
        Ok(Some(Entry::Record(Record {
            id,
            text,
            raw: self.lines.raw(&mut self.buf),
            location,
            lossy,
            key: None,
            numeric_id: false,
            path: None,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::open::{ErrorContext, Input};
    use std::io::Cursor;

    fn read(bytes: &[u8]) -> Vec<Record> {
        let mut r = LinesReader::new(LineSource::new(
            Input {
                reader: Box::new(Cursor::new(bytes.to_vec())),
                ctx: ErrorContext {
                    source: "l.txt".into(),
                    gzip: false,
                    zstd: false,
                },
            },
            1 << 20,
        ));
        let mut out = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            out.push(e.into_record().expect("lines never skips"));
        }
        out
    }

    #[test]
    fn splits_id_and_text_on_first_tab() {
        let r = read(b"a1\thello\tworld\nplain line\r\n\tno id text\n");
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].id.as_deref(), Some("a1"));
        assert_eq!(r[0].text, "hello\tworld");
        assert_eq!(r[1].id, None);
        assert_eq!(r[1].text, "plain line");
        assert_eq!(r[1].raw, b"plain line\r\n");
        assert_eq!(r[2].id.as_deref(), Some(""));
        assert_eq!(r[2].text, "no id text");
        assert_eq!(
            r.iter().map(|r| r.location.line).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(
            r.iter().map(|r| r.location.record).collect::<Vec<_>>(),
            [1, 2, 3]
        );
    }

    #[test]
    fn blank_lines_are_empty_records_and_last_line_counts() {
        let r = read(b"one\n\n\r\nlast");
        assert_eq!(r.len(), 4);
        assert_eq!(r[1].text, "");
        assert_eq!(r[2].text, "");
        assert_eq!(r[3].text, "last");
        assert_eq!(r[3].raw, b"last");
    }

    #[test]
    fn bom_is_stripped_from_text_not_raw() {
        let r = read(b"\xEF\xBB\xBFfirst\n\xEF\xBB\xBFsecond\n");
        assert_eq!(r[0].text, "first");
        assert_eq!(r[0].raw, b"\xEF\xBB\xBFfirst\n");
        assert_eq!(r[1].text, "\u{feff}second");
    }

    #[test]
    fn invalid_utf8_is_lossy() {
        let r = read(b"ok\nbad \xFF byte\nid\xFE\tx\n");
        assert!(!r[0].lossy);
        assert!(r[1].lossy);
        assert_eq!(r[1].text, "bad \u{FFFD} byte");
        assert!(r[2].lossy);
        assert_eq!(r[2].id.as_deref(), Some("id\u{FFFD}"));
    }
}
