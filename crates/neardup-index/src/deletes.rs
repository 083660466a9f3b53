//! A segment's deleted documents: a bitset, written whole as a new file by each commit
//! that changes it (`NAME.GENERATION.del`), so a reader of an older commit keeps its own.
//!
//! Layout: magic "NDIXDEL1", documents u64, the bitset's words (u64), xxh3-64 of all that.

use std::io::Write;
use std::path::Path;

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{io_at, Error, Result};
use crate::files::{deletes_name, write_durably};

const MAGIC: [u8; 8] = *b"NDIXDEL1";

/// Which documents of a segment are deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Deletes {
    words: Vec<u64>,
    count: u32,
}

impl Deletes {
    pub(crate) fn none(docs: u32) -> Self {
        Deletes {
            words: vec![0; (docs as usize).div_ceil(64)],
            count: 0,
        }
    }

    pub(crate) fn contains(&self, doc: u32) -> bool {
        let d = doc as usize;
        self.words
            .get(d / 64)
            .is_some_and(|w| w >> (d % 64) & 1 == 1)
    }

    /// Marks a document deleted; false if it already was. Not inlined: rustc 1.95 (and
    /// nightly 1.97) miscompile a caller's `a.insert(x) && a.insert(y)` at opt-level 2 and
    /// up (MIR GVN drops one `count` increment; `-Zmir-enable-passes=-GVN` avoids it), and a
    /// call boundary keeps the optimizer from merging the two bodies.
    #[inline(never)]
    pub(crate) fn insert(&mut self, doc: u32) -> bool {
        let d = doc as usize;
        let (word, bit) = (&mut self.words[d / 64], 1u64 << (d % 64));
        let fresh = *word & bit == 0;
        *word |= bit;
        self.count += u32::from(fresh);
        fresh
    }

    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    pub(crate) fn write(&self, dir: &Path, name: u64, generation: u64, docs: u32) -> Result<()> {
        let mut bytes = Vec::with_capacity(24 + 8 * self.words.len());
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&u64::from(docs).to_le_bytes());
        bytes.extend_from_slice(bytemuck::cast_slice(&self.words));
        let digest = xxh3_64(&bytes);
        bytes.extend_from_slice(&digest.to_le_bytes());
        write_durably(dir, &deletes_name(name, generation), |out| {
            out.write_all(&bytes)
        })?;
        Ok(())
    }

    /// Reads and checks a deletion file (small: one bit per document).
    pub(crate) fn read(dir: &Path, name: u64, generation: u64, docs: u32) -> Result<Deletes> {
        let path = dir.join(deletes_name(name, generation));
        let bytes = std::fs::read(&path).map_err(io_at(&path))?;
        let words = (docs as usize).div_ceil(64);
        let good = bytes.len() == 24 + 8 * words
            && bytes[..8] == MAGIC
            && bytes[8..16] == u64::from(docs).to_le_bytes()
            && xxh3_64(&bytes[..bytes.len() - 8]).to_le_bytes() == bytes[bytes.len() - 8..];
        if !good {
            return Err(Error::Corrupt {
                path,
                reason: "deletion file damaged (size, header or checksum)".into(),
            });
        }
        let words: Vec<u64> = bytes[16..bytes.len() - 8]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // Bits past the last document would count deletions of nobody.
        let tail = docs as usize % 64;
        if tail != 0 && words.last().is_some_and(|w| w >> tail != 0) {
            return Err(Error::Corrupt {
                path,
                reason: "deletion bits past the last document".into(),
            });
        }
        let count = words.iter().map(|w| w.count_ones()).sum();
        Ok(Deletes { words, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deletion_file_round_trips_and_a_damaged_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = Deletes::none(130);
        // Separate statements: `d.insert(0) && d.insert(129)` loses a count increment under
        // rustc 1.95's MIR GVN at opt-level 2 and 3 (see `insert`).
        assert!(d.insert(0));
        assert!(d.insert(129));
        assert!(!d.insert(129));
        assert_eq!(d.count(), 2);
        d.write(dir.path(), 3, 7, 130).unwrap();
        let back = Deletes::read(dir.path(), 3, 7, 130).unwrap();
        assert_eq!(back, d);
        assert!(back.contains(129) && !back.contains(1) && back.count() == 2);
        let path = dir.path().join(deletes_name(3, 7));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[17] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            Deletes::read(dir.path(), 3, 7, 130),
            Err(Error::Corrupt { .. })
        ));
    }
}
