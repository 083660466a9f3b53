//! Physical lines of an input, with their terminators and 1-based numbers.

use std::io::{self, BufRead};

use crate::error::Result;
use crate::open::{ErrorContext, Input};
use crate::record::Location;

/// Splits an input into lines ending in `\n` (the last one may have no terminator).
pub(crate) struct LineSource {
    reader: Box<dyn BufRead + Send>,
    ctx: ErrorContext,
    /// The number of the next line to be read.
    next_line: u64,
    /// Records handed out so far by [`LineSource::next_record`].
    records: u64,
}

impl LineSource {
    /// Wraps an opened input.
    pub(crate) fn new(input: Input) -> LineSource {
        LineSource {
            reader: input.reader,
            ctx: input.ctx,
            next_line: 1,
            records: 0,
        }
    }

    /// The input's name for messages.
    pub(crate) fn source(&self) -> &str {
        &self.ctx.source
    }

    /// Reads the next line, terminator included, into `buf` (cleared first) and
    /// returns its 1-based number, or `None` at the end of the input.
    pub(crate) fn next_line(&mut self, buf: &mut Vec<u8>) -> Result<Option<u64>> {
        buf.clear();
        let line = self.next_line;
        loop {
            match self.reader.read_until(b'\n', buf) {
                Ok(0) if buf.is_empty() => return Ok(None),
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.ctx.read_error(Some(line), e)),
            }
        }
        self.next_line += 1;
        Ok(Some(line))
    }

    /// Reads the next line as one record: like [`LineSource::next_line`], numbering
    /// records as it goes and returning where the record is.
    pub(crate) fn next_record(&mut self, buf: &mut Vec<u8>) -> Result<Option<Location>> {
        let Some(line) = self.next_line(buf)? else {
            return Ok(None);
        };
        self.records += 1;
        Ok(Some(Location {
            source: self.source().to_string(),
            line,
            record: self.records,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn source(bytes: &[u8]) -> LineSource {
        LineSource::new(Input {
            reader: Box::new(Cursor::new(bytes.to_vec())),
            ctx: ErrorContext {
                source: "t".into(),
                gzip: false,
            },
        })
    }

    #[test]
    fn yields_lines_with_terminators_and_numbers() {
        let mut src = source(b"a\r\n\nlast");
        let mut buf = Vec::new();
        assert_eq!(src.next_line(&mut buf).unwrap(), Some(1));
        assert_eq!(buf, b"a\r\n");
        assert_eq!(src.next_line(&mut buf).unwrap(), Some(2));
        assert_eq!(buf, b"\n");
        assert_eq!(src.next_line(&mut buf).unwrap(), Some(3));
        assert_eq!(buf, b"last");
        assert_eq!(src.next_line(&mut buf).unwrap(), None);
        assert_eq!(src.next_line(&mut buf).unwrap(), None);
        assert_eq!(src.source(), "t");
    }

    #[test]
    fn empty_input_has_no_lines() {
        let mut src = source(b"");
        assert_eq!(src.next_line(&mut Vec::new()).unwrap(), None);
    }
}
