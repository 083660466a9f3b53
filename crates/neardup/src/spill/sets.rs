//! Shingle sets kept on disk: appended back to back as they are made, read back by
//! document with positioned reads (no seek state, so threads read at once).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::spill_error;
use crate::error::Result;

/// The sets of documents `0..len`, in an unnamed temporary file.
pub(crate) struct SetFile {
    dir: PathBuf,
    out: Option<BufWriter<File>>,
    file: File,
    /// Where each document's set starts, in hashes, and one past the last.
    starts: Vec<u64>,
}

impl SetFile {
    pub(crate) fn new(dir: &Path) -> Result<Self> {
        let file = tempfile::tempfile_in(dir).map_err(|e| spill_error(dir, e))?;
        let writer = file.try_clone().map_err(|e| spill_error(dir, e))?;
        Ok(SetFile {
            dir: dir.to_path_buf(),
            out: Some(BufWriter::with_capacity(1 << 20, writer)),
            file,
            starts: vec![0],
        })
    }

    /// Appends the next document's set.
    pub(crate) fn push(&mut self, set: &[u64]) -> Result<()> {
        let out = self.out.as_mut().expect("sets are appended before reading");
        let mut bytes = [0u8; 8 * 64];
        for chunk in set.chunks(64) {
            for (i, h) in chunk.iter().enumerate() {
                bytes[8 * i..8 * i + 8].copy_from_slice(&h.to_le_bytes());
            }
            out.write_all(&bytes[..8 * chunk.len()])
                .map_err(|e| spill_error(&self.dir, e))?;
        }
        let end = self.starts.last().copied().unwrap_or(0) + set.len() as u64;
        self.starts.push(end);
        Ok(())
    }

    /// Ends appending: the sets can be read from now on.
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

    /// The size of a document's set.
    pub(crate) fn size(&self, doc: u32) -> usize {
        let d = doc as usize;
        (self.starts[d + 1] - self.starts[d]) as usize
    }

    /// Bytes the sets take on disk.
    pub(crate) fn disk_bytes(&self) -> u64 {
        8 * self.starts.last().copied().unwrap_or(0)
    }

    /// Reads a document's set into `out` (replacing what it held).
    pub(crate) fn read(&self, doc: u32, out: &mut Vec<u64>, bytes: &mut Vec<u8>) -> Result<()> {
        let d = doc as usize;
        let (start, end) = (self.starts[d], self.starts[d + 1]);
        bytes.resize(8 * (end - start) as usize, 0);
        read_exact_at(&self.file, bytes, 8 * start).map_err(|e| spill_error(&self.dir, e))?;
        out.clear();
        out.extend(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
        );
        Ok(())
    }

    /// A document's set, read now.
    pub(crate) fn get(&self, doc: u32) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        self.read(doc, &mut out, &mut Vec::new())?;
        Ok(out)
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
    fn sets_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = SetFile::new(dir.path()).unwrap();
        let sets: Vec<Vec<u64>> = (0..50u64)
            .map(|i| {
                (0..i * 7)
                    .map(|j| j.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i)
                    .collect()
            })
            .collect();
        for s in &sets {
            f.push(s).unwrap();
        }
        f.seal().unwrap();
        assert_eq!(f.len(), 50);
        for (d, s) in sets.iter().enumerate().rev() {
            assert_eq!(&f.get(d as u32).unwrap(), s);
            assert_eq!(f.size(d as u32), s.len());
        }
        assert_eq!(
            f.disk_bytes(),
            8 * sets.iter().map(Vec::len).sum::<usize>() as u64
        );
    }
}
