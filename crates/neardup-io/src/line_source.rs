//! Physical lines of an input, with their terminators and 1-based numbers.
//!
//! A line longer than the record-size limit is read past without being stored: memory
//! stays bounded by the limit whatever the input holds.

use std::io::{self, BufRead};

use crate::error::Result;
use crate::open::{ErrorContext, Input};
use crate::record::{Entry, Location, SkipReason, Skipped};
use crate::text::{strip_bom, strip_line_end};

/// What [`LineSource::next_line_record`] found.
pub(crate) enum NextLine {
    /// The end of the input.
    End,
    /// A line over the size limit, as the skipped entry it becomes.
    TooLarge(Entry),
    /// A line, at this location.
    Line(Location),
}

/// A line's content: without its line end, and without the input's BOM on line 1.
pub(crate) fn line_content<'b>(buf: &'b [u8], location: &Location) -> &'b [u8] {
    let content = strip_line_end(buf);
    if location.line == 1 {
        strip_bom(content)
    } else {
        content
    }
}

/// A buffer that grew past this is given back after its line, so one long line does
/// not pin its memory for the rest of the input.
const KEEP_CAPACITY: usize = 1 << 20;

/// One line read by [`LineSource`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// The line is in the buffer, terminator included.
    Held,
    /// The line was longer than the limit and was skipped; its size in bytes, terminator
    /// included. The buffer is empty.
    TooLarge(u64),
}

/// Splits an input into lines ending in `\n` (the last one may have no terminator).
pub(crate) struct LineSource {
    reader: Box<dyn BufRead + Send>,
    ctx: ErrorContext,
    /// The longest line held, in bytes.
    limit: usize,
    /// The number of the next line to be read.
    next_line: u64,
    /// Records handed out so far by [`LineSource::next_record`].
    records: u64,
    /// Whether records carry their raw bytes ([`crate::ReadOptions::keep_raw`]).
    keep_raw: bool,
}

impl LineSource {
    /// Wraps an opened input; lines longer than `limit` bytes are not held.
    pub(crate) fn new(input: Input, limit: usize) -> LineSource {
        LineSource {
            reader: input.reader,
            ctx: input.ctx,
            limit,
            next_line: 1,
            records: 0,
            keep_raw: true,
        }
    }

    /// Whether [`LineSource::raw`] copies the line (default) or gives nothing.
    pub(crate) fn keep_raw(mut self, on: bool) -> LineSource {
        self.keep_raw = on;
        self
    }

    /// The line in `buf` as a record's `raw`: see [`take_raw`]; empty if raw bytes are
    /// not kept.
    pub(crate) fn raw(&self, buf: &mut Vec<u8>) -> Vec<u8> {
        if self.keep_raw {
            take_raw(buf)
        } else {
            Vec::new()
        }
    }

    /// Reads the next line as one record of a line-per-record format: `End`, the
    /// `too_large` skip of a line over the limit, or the line's location (its content is
    /// [`line_content`] of `buf`).
    pub(crate) fn next_line_record(&mut self, buf: &mut Vec<u8>) -> Result<NextLine> {
        let Some((location, line)) = self.next_record(buf)? else {
            return Ok(NextLine::End);
        };
        Ok(match line {
            Line::TooLarge(size) => NextLine::TooLarge(Entry::Skipped(Skipped {
                location,
                id: None,
                reason: SkipReason::TooLarge {
                    size,
                    limit: self.limit() as u64,
                },
            })),
            _ => NextLine::Line(location),
        })
    }

    /// The record-size limit.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Reads the next line, terminator included, into `buf` (cleared first) and
    /// returns its 1-based number, or `None` at the end of the input.
    pub(crate) fn next_line(&mut self, buf: &mut Vec<u8>) -> Result<Option<(u64, Line)>> {
        if buf.capacity() > KEEP_CAPACITY {
            *buf = Vec::new();
        }
        buf.clear();
        let line = self.next_line;
        let mut size: u64 = 0;
        let mut too_large = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.ctx.read_error(Some(line), e)),
            };
            if chunk.is_empty() {
                if size == 0 {
                    return Ok(None);
                }
                break;
            }
            let (n, ended) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !too_large {
                if size + n as u64 > self.limit as u64 {
                    too_large = true;
                    *buf = Vec::new();
                } else {
                    crate::delimited::grow_within(buf, n, self.limit);
                    buf.extend_from_slice(&chunk[..n]);
                }
            }
            size += n as u64;
            self.reader.consume(n);
            if ended {
                break;
            }
        }
        self.next_line += 1;
        let held = if too_large {
            Line::TooLarge(size)
        } else {
            Line::Held
        };
        Ok(Some((line, held)))
    }

    /// Reads the next line as one record: like [`LineSource::next_line`], numbering
    /// records as it goes and returning where the record is.
    pub(crate) fn next_record(&mut self, buf: &mut Vec<u8>) -> Result<Option<(Location, Line)>> {
        let Some((line, held)) = self.next_line(buf)? else {
            return Ok(None);
        };
        self.records += 1;
        let location = Location {
            source: self.ctx.source.clone(),
            line,
            record: self.records,
        };
        Ok(Some((location, held)))
    }
}

/// The bytes of `buf` as a record's own `raw`: a copy of a short line (the buffer is
/// reused), the buffer itself for a long one (no second copy of a huge line).
pub(crate) fn take_raw(buf: &mut Vec<u8>) -> Vec<u8> {
    if buf.len() < KEEP_CAPACITY {
        buf.clone()
    } else {
        let mut raw = std::mem::take(buf);
        raw.shrink_to_fit();
        raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn source(bytes: &[u8], limit: usize) -> LineSource {
        LineSource::new(
            Input {
                // A tiny buffer so lines straddle refills.
                reader: Box::new(io::BufReader::with_capacity(3, Cursor::new(bytes.to_vec()))),
                ctx: ErrorContext {
                    source: "t".into(),
                    gzip: false,
                    zstd: false,
                },
            },
            limit,
        )
    }

    #[test]
    fn yields_lines_with_terminators_and_numbers() {
        let mut src = source(b"a\r\n\nlast", 100);
        let mut buf = Vec::new();
        assert_eq!(src.next_line(&mut buf).unwrap(), Some((1, Line::Held)));
        assert_eq!(buf, b"a\r\n");
        assert_eq!(src.next_line(&mut buf).unwrap(), Some((2, Line::Held)));
        assert_eq!(buf, b"\n");
        assert_eq!(src.next_line(&mut buf).unwrap(), Some((3, Line::Held)));
        assert_eq!(buf, b"last");
        assert_eq!(src.next_line(&mut buf).unwrap(), None);
        assert_eq!(src.next_line(&mut buf).unwrap(), None);
        assert_eq!(&*src.ctx.source, "t");
    }

    #[test]
    fn empty_input_has_no_lines() {
        let mut src = source(b"", 100);
        assert_eq!(src.next_line(&mut Vec::new()).unwrap(), None);
    }

    #[test]
    fn lines_over_the_limit_are_skipped_not_held() {
        let mut src = source(b"12345\n123456\n1234567\n12", 6);
        let mut buf = Vec::new();
        assert_eq!(src.next_line(&mut buf).unwrap(), Some((1, Line::Held)));
        assert_eq!(buf, b"12345\n");
        assert_eq!(
            src.next_line(&mut buf).unwrap(),
            Some((2, Line::TooLarge(7)))
        );
        assert!(buf.is_empty());
        assert_eq!(
            src.next_line(&mut buf).unwrap(),
            Some((3, Line::TooLarge(8)))
        );
        assert_eq!(src.next_line(&mut buf).unwrap(), Some((4, Line::Held)));
        assert_eq!(buf, b"12");
        assert_eq!(src.next_line(&mut buf).unwrap(), None);
    }

    #[test]
    fn take_raw_copies_short_lines_and_moves_long_ones() {
        let mut short = b"abc\n".to_vec();
        assert_eq!(take_raw(&mut short), b"abc\n");
        assert_eq!(short, b"abc\n");
        let mut long = vec![b'x'; KEEP_CAPACITY];
        let raw = take_raw(&mut long);
        assert_eq!(raw.len(), KEEP_CAPACITY);
        assert!(long.is_empty());
    }
}
