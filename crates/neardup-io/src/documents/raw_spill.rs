//! Documents' exact source bytes (for a deduplicated output), spilled to an unnamed
//! temporary file as they are read and read back in document order.

use std::fs::File;
use std::io::{Read, Seek, Write};

use super::error::{temp_file, DocumentsError};

/// are read: memory holds 4 bytes per document (its length), and nothing is left on
/// disk however the process ends.
pub(crate) struct RawSpill {
    out: std::io::BufWriter<File>,
    /// Each document's length in bytes (`u32::MAX`: the length is in `long`).
    lens: Vec<u32>,
    /// Lengths of `u32::MAX` bytes or more, in document order.
    long: Vec<u64>,
}

impl RawSpill {
    pub(crate) fn new() -> Result<Self, DocumentsError> {
        let file = tempfile::tempfile()
            .map_err(temp_file("cannot create a temporary file for records"))?;
        Ok(RawSpill {
            out: std::io::BufWriter::with_capacity(1 << 16, file),
            lens: Vec::new(),
            long: Vec::new(),
        })
    }

    pub(crate) fn push(&mut self, raw: &[u8]) -> Result<(), DocumentsError> {
        self.out
            .write_all(raw)
            .map_err(temp_file("cannot write records to a temporary file"))?;
        match u32::try_from(raw.len()) {
            Ok(n) if n != u32::MAX => self.lens.push(n),
            _ => {
                self.lens.push(u32::MAX);
                self.long.push(raw.len() as u64);
            }
        }
        Ok(())
    }

    /// Flushes what was written, before reading back.
    pub(crate) fn finish(&mut self) -> Result<(), DocumentsError> {
        self.out
            .flush()
            .map_err(temp_file("cannot write records to a temporary file"))
    }

    #[cfg(test)]
    /// Bytes of heap held (the lengths and the write buffer).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.lens.capacity() * 4 + self.long.capacity() * 8 + self.out.capacity()
    }
}

/// Reads documents' spilled bytes back, in ascending document order.
pub struct RawReader<'a> {
    spill: Option<(&'a RawSpill, std::io::BufReader<File>)>,
    /// The next document whose bytes start at the reader's position.
    next: u32,
    long_seen: usize,
    buf: Vec<u8>,
}

impl<'a> RawReader<'a> {
    /// A reader of `spill` (none: every document's bytes are empty).
    pub(super) fn new(spill: Option<&'a RawSpill>) -> Result<Self, DocumentsError> {
        let spill = match spill {
            Some(spill) => {
                let mut file = spill
                    .out
                    .get_ref()
                    .try_clone()
                    .map_err(temp_file(READ_BACK))?;
                file.rewind().map_err(temp_file(READ_BACK))?;
                Some((spill, std::io::BufReader::with_capacity(1 << 16, file)))
            }
            None => None,
        };
        Ok(RawReader {
            spill,
            next: 0,
            long_seen: 0,
            buf: Vec::new(),
        })
    }

    fn len_of(&mut self, spill: &RawSpill, doc: u32) -> u64 {
        match spill.lens[doc as usize] {
            u32::MAX => {
                self.long_seen += 1;
                spill.long[self.long_seen - 1]
            }
            n => u64::from(n),
        }
    }

    /// A document's exact source bytes (empty if none were kept). Documents must be
    /// asked for in ascending order.
    pub fn read(&mut self, doc: u32) -> Result<&[u8], DocumentsError> {
        self.buf.clear();
        let Some((spill, mut file)) = self.spill.take() else {
            return Ok(&self.buf);
        };
        let result = self.read_from(spill, &mut file, doc);
        self.spill = Some((spill, file));
        result?;
        Ok(&self.buf)
    }

    /// Reads document `doc`'s bytes from `file` into the buffer.
    fn read_from(
        &mut self,
        spill: &RawSpill,
        file: &mut std::io::BufReader<File>,
        doc: u32,
    ) -> Result<(), DocumentsError> {
        let mismatch = |detail: String| DocumentsError::TempFileMismatch {
            context: READ_BACK,
            detail,
        };
        if doc < self.next || doc as usize >= spill.lens.len() {
            return Err(mismatch(format!("record {doc} asked for out of order")));
        }
        let mut skip = 0i64;
        while self.next < doc {
            skip += self.len_of(spill, self.next) as i64;
            self.next += 1;
        }
        file.seek_relative(skip).map_err(temp_file(READ_BACK))?;
        let len = self.len_of(spill, doc);
        self.next = doc + 1;
        file.take(len)
            .read_to_end(&mut self.buf)
            .map_err(temp_file(READ_BACK))?;
        if self.buf.len() as u64 != len {
            return Err(mismatch(
                "the temporary file of records is shorter than written".into(),
            ));
        }
        Ok(())
    }
}

/// The context of every failure to read records back.
const READ_BACK: &str = "cannot read records back from their temporary file";
