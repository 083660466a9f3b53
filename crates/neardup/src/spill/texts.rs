//! Texts kept on disk: appended back to back as they are read, read back by document
//! with positioned reads (no seek state, so threads read at once).
//!
//! A spilled run keeps each document's text rather than its shingle set: the text is
//! smaller (a shingle per character at most, 8 bytes each) and shingling it again costs
//! about a microsecond per short document, so the sets that verification needs are made
//! again from their texts.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::spill_error;
use crate::error::Result;

/// The texts of documents `0..len`, in an unnamed temporary file.
pub(crate) struct TextFile {
    dir: PathBuf,
    out: Option<BufWriter<File>>,
    file: File,
    /// Where each document's text starts, in bytes, and one past the last.
    starts: Vec<u64>,
}

impl TextFile {
    pub(crate) fn new(dir: &Path) -> Result<Self> {
        let file = tempfile::tempfile_in(dir).map_err(|e| spill_error(dir, e))?;
        let writer = file.try_clone().map_err(|e| spill_error(dir, e))?;
        Ok(TextFile {
            dir: dir.to_path_buf(),
            out: Some(BufWriter::with_capacity(1 << 20, writer)),
            file,
            starts: vec![0],
        })
    }

    /// Appends the next document's text.
    pub(crate) fn push(&mut self, text: &str) -> Result<()> {
        let out = self
            .out
            .as_mut()
            .expect("texts are appended before reading");
        out.write_all(text.as_bytes())
            .map_err(|e| spill_error(&self.dir, e))?;
        let end = self.starts.last().copied().unwrap_or(0) + text.len() as u64;
        self.starts.push(end);
        Ok(())
    }

    /// Ends appending: the texts can be read from now on.
    pub(crate) fn seal(&mut self) -> Result<()> {
        if let Some(mut out) = self.out.take() {
            out.flush().map_err(|e| spill_error(&self.dir, e))?;
        }
        Ok(())
    }

    /// Documents held.
    pub(crate) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// The length of a document's text in bytes.
    pub(crate) fn text_len(&self, doc: u32) -> usize {
        let d = doc as usize;
        (self.starts[d + 1] - self.starts[d]) as usize
    }

    /// Bytes the texts take on disk.
    pub(crate) fn disk_bytes(&self) -> u64 {
        self.starts.last().copied().unwrap_or(0)
    }

    /// A document's text, read now.
    pub(crate) fn get(&self, doc: u32) -> Result<String> {
        self.get_span(doc, 0..self.text_len(doc))
    }

    /// The bytes `span` of a document's text (on character boundaries), read now.
    pub(crate) fn get_span(&self, doc: u32, span: std::ops::Range<usize>) -> Result<String> {
        let d = doc as usize;
        let mut bytes = vec![0u8; span.len()];
        read_exact_at(&self.file, &mut bytes, self.starts[d] + span.start as u64)
            .map_err(|e| spill_error(&self.dir, e))?;
        // Written from a `&str` above: only a broken disk gives other bytes.
        String::from_utf8(bytes).map_err(|e| {
            spill_error(
                &self.dir,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            )
        })
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = TextFile::new(dir.path()).unwrap();
        let texts: Vec<String> = (0..50).map(|i| "é x".repeat(i)).collect();
        for t in &texts {
            f.push(t).unwrap();
        }
        f.seal().unwrap();
        assert_eq!(f.len(), 50);
        for (d, t) in texts.iter().enumerate().rev() {
            assert_eq!(&f.get(d as u32).unwrap(), t);
            assert_eq!(f.text_len(d as u32), t.len());
        }
        assert_eq!(
            f.disk_bytes(),
            texts.iter().map(String::len).sum::<usize>() as u64
        );
    }
}
