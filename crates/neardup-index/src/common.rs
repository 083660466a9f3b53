//! The common tokens of a containment index: the shingles held by more than 1 % of the
//! documents of its first batch, left out of every document's signature (as the batch
//! containment search leaves out those of its corpus). They are learned once, when the
//! first documents are added, and pinned: every key of the index depends on them.
//!
//! ```text
//! COMMON    magic "NDIXCOM1", count u64, tokens (u64 × count, sorted), xxh3-64 of what
//!           precedes it
//! ```

use std::io::Write;
use std::path::Path;

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{io_at, Error, Result};
use crate::files::{write_durably, COMMON};

const MAGIC: [u8; 8] = *b"NDIXCOM1";

/// Writes the tokens (sorted) durably; the manifest that names them commits them.
pub(crate) fn write(dir: &Path, tokens: &[u64]) -> Result<()> {
    let mut bytes = Vec::with_capacity(24 + 8 * tokens.len());
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&(tokens.len() as u64).to_le_bytes());
    for t in tokens {
        bytes.extend_from_slice(&t.to_le_bytes());
    }
    let sum = xxh3_64(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    write_durably(dir, COMMON, |out| out.write_all(&bytes))?;
    Ok(())
}

/// Reads the tokens, checking that the file is whole and holds the `count` the manifest
/// says.
pub(crate) fn read(dir: &Path, count: u64) -> Result<Vec<u64>> {
    let path = dir.join(COMMON);
    let bytes = std::fs::read(&path).map_err(io_at(&path))?;
    let corrupt = |reason: String| Error::Corrupt {
        path: path.clone(),
        reason,
    };
    let expected = usize::try_from(count)
        .ok()
        .and_then(|n| n.checked_mul(8)?.checked_add(24))
        .ok_or_else(|| corrupt(format!("the manifest says {count} tokens")))?;
    if bytes.len() != expected || bytes[..8] != MAGIC {
        return Err(corrupt(format!(
            "{} bytes, expected {expected} for {count} tokens",
            bytes.len()
        )));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    if xxh3_64(body) != u64::from_le_bytes(sum.try_into().expect("8 bytes")) {
        return Err(corrupt(
            "checksum does not match: the file was changed or damaged".into(),
        ));
    }
    let stored = u64::from_le_bytes(body[8..16].try_into().expect("8 bytes"));
    if stored != count {
        return Err(corrupt(format!(
            "holds {stored} tokens, the manifest says {count}"
        )));
    }
    let tokens: Vec<u64> = body[16..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    if tokens.windows(2).any(|w| w[0] >= w[1]) {
        return Err(corrupt("tokens not strictly sorted".into()));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_survive_the_round_trip_and_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[3, 9, 1 << 60]).unwrap();
        assert_eq!(read(dir.path(), 3).unwrap(), [3, 9, 1 << 60]);
        let err = read(dir.path(), 2).unwrap_err().to_string();
        assert!(err.contains("expected 40 for 2 tokens"), "{err}");
        let err = read(dir.path(), u64::MAX).unwrap_err().to_string();
        assert!(err.contains("the manifest says"), "{err}");
        let path = dir.path().join(COMMON);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[20] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let err = read(dir.path(), 3).unwrap_err().to_string();
        assert!(err.contains("checksum does not match"), "{err}");
        assert!(err.contains("COMMON"), "{err}");
    }
}
