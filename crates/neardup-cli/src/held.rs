//! What is held per document, in a few bytes: places as the points where numbering jumps,
//! the users' own ids back to back, records' bytes spilled to an unnamed temporary file.

use std::fs::File;
use std::io::{Read, Seek, Write};

use anyhow::{Context, Result};

use crate::input::Place;

/// Where each document is, held as the places where numbering jumps: a document one
/// line and one record after the previous one (the usual case) costs nothing.
#[derive(Default)]
pub(crate) struct Places {
    count: u32,
    /// `(doc, place)` where `doc`'s place is not its predecessor's plus one, ascending.
    jumps: Vec<(u32, Place)>,
}

impl Places {
    pub(crate) fn push(&mut self, place: Place) {
        let doc = self.count;
        if doc == 0
            || self.get(doc - 1).map(|p| (p.line + 1, p.record + 1))
                != Some((place.line, place.record))
        {
            self.jumps.push((doc, place));
        }
        self.count += 1;
    }

    pub(crate) fn get(&self, doc: u32) -> Option<Place> {
        let i = self.jumps.partition_point(|j| j.0 <= doc).checked_sub(1)?;
        let (first, p) = self.jumps[i];
        let k = u64::from(doc - first);
        Some(Place {
            line: p.line + k,
            record: p.record + k,
        })
    }

    #[cfg(test)]
    /// Bytes of heap held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.jumps.capacity() * std::mem::size_of::<(u32, Place)>()
    }
}

/// The users' own ids, for the documents that have one; other documents are named by
/// their place, computed when asked, so a document without an id costs no memory here.
#[derive(Default)]
pub(crate) struct UserIds {
    /// Documents with an id, ascending.
    docs: Vec<u32>,
    /// Where each id ends in `text`.
    ends: Vec<usize>,
    /// The ids back to back, each as a kind byte (`b'n'`: a JSON number) and its text.
    text: Vec<u8>,
}

impl UserIds {
    pub(crate) fn push(&mut self, doc: u32, id: &str, json_number: bool) {
        self.docs.push(doc);
        self.text.push(if json_number { b'n' } else { b's' });
        self.text.extend_from_slice(id.as_bytes());
        self.ends.push(self.text.len());
    }

    /// The id of the `i`th document with one: its text, and whether it is a JSON number.
    pub(crate) fn nth(&self, i: usize) -> (&str, bool) {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let bytes = &self.text[start..self.ends[i]];
        // Pushed from a `&str` after one ASCII byte: always valid UTF-8.
        let text = std::str::from_utf8(&bytes[1..]).unwrap_or_default();
        (text, bytes[0] == b'n')
    }

    pub(crate) fn get(&self, doc: u32) -> Option<(&str, bool)> {
        let i = self.docs.binary_search(&doc).ok()?;
        Some(self.nth(i))
    }

    /// Number of documents with an id.
    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    #[cfg(test)]
    /// Bytes of heap held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.docs.capacity() * 4
            + self.ends.capacity() * std::mem::size_of::<usize>()
            + self.text.capacity()
    }
}

/// Documents' exact source bytes (dedup), spilled to an unnamed temporary file as they
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
    pub(crate) fn new() -> Result<Self> {
        let file = tempfile::tempfile().context("cannot create a temporary file for records")?;
        Ok(RawSpill {
            out: std::io::BufWriter::with_capacity(1 << 16, file),
            lens: Vec::new(),
            long: Vec::new(),
        })
    }

    pub(crate) fn push(&mut self, raw: &[u8]) -> Result<()> {
        self.out
            .write_all(raw)
            .context("cannot write records to a temporary file")?;
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
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.out
            .flush()
            .context("cannot write records to a temporary file")
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
    pub(crate) fn new(spill: Option<&'a RawSpill>) -> Result<Self> {
        let spill = match spill {
            Some(spill) => {
                let mut file = spill
                    .out
                    .get_ref()
                    .try_clone()
                    .context("cannot read records back from their temporary file")?;
                file.rewind()
                    .context("cannot read records back from their temporary file")?;
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
    pub fn read(&mut self, doc: u32) -> Result<&[u8]> {
        self.buf.clear();
        let Some((spill, mut file)) = self.spill.take() else {
            return Ok(&self.buf);
        };
        let result = (|| -> Result<()> {
            if doc < self.next || doc as usize >= spill.lens.len() {
                anyhow::bail!("record {doc} asked for out of order");
            }
            let mut skip = 0i64;
            while self.next < doc {
                skip += self.len_of(spill, self.next) as i64;
                self.next += 1;
            }
            file.seek_relative(skip)?;
            let len = self.len_of(spill, doc);
            self.next = doc + 1;
            (&mut file).take(len).read_to_end(&mut self.buf)?;
            if self.buf.len() as u64 != len {
                anyhow::bail!("the temporary file of records is shorter than written");
            }
            Ok(())
        })();
        self.spill = Some((spill, file));
        result.context("cannot read records back from their temporary file")?;
        Ok(&self.buf)
    }
}
