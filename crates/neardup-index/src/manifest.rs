//! The manifest: which segments are live, with which deletions, under which parameters.
//! Replacing it (atomically, durably) is what commits a change; readers read it to see the
//! last committed state.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{io_at, Error, Result};
use crate::files::{deletes_name, segment_name, write_durably, COMMON, MANIFEST};
use crate::params::Params;

/// The on-disk format this version writes. It reads every earlier one too: each later
/// version must open an index of each format and answer as it did (the fixtures
/// `testdata/index-v1` to `testdata/index-v3`). Format 2 stores copies' shared shingle
/// set once per segment. Format 3 keeps format 2's segments and records in the
/// parameters what the band keys hash (`sketch_input`): a new index hashes 32-bit
/// shingle ids, as a batch run does, and an older one keeps hashing the 64-bit hashes.
/// A version that reads format 2 at most would not know the difference, so it is refused
/// a format 3 index.
pub const FORMAT_VERSION: u32 = 3;

/// The oldest format this version reads.
pub const OLDEST_FORMAT: u32 = 1;

/// The committed state of an index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub format: u32,
    pub params: Params,
    /// Sketch families of the parameters (a document's family mask has this many bits).
    pub families: usize,
    /// Counts commits; deletion files are named by the commit that wrote them.
    pub generation: u64,
    /// The name the next new segment gets.
    pub next_segment: u64,
    pub segments: Vec<SegmentMeta>,
    /// In a containment index whose first documents are in: how many common tokens its
    /// `COMMON` file holds (possibly 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common: Option<u64>,
}

/// One live segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SegmentMeta {
    pub name: u64,
    /// Documents stored in it, live or deleted.
    pub docs: u32,
    /// Of those, deleted.
    pub deleted: u32,
    /// The generation of its deletion file; 0 when nothing in it is deleted.
    pub deletes: u64,
}

impl SegmentMeta {
    pub(crate) fn live(&self) -> u32 {
        self.docs - self.deleted
    }
}

impl Manifest {
    pub(crate) fn new(params: Params, families: usize) -> Manifest {
        Manifest {
            format: FORMAT_VERSION,
            params,
            families,
            generation: 0,
            next_segment: 1,
            segments: Vec::new(),
            common: None,
        }
    }

    /// The files this state consists of (besides the manifest and the lock).
    pub(crate) fn files(&self) -> Vec<String> {
        let mut named: Vec<String> = Vec::new();
        for m in &self.segments {
            named.push(segment_name(m.name));
            if m.deletes != 0 {
                named.push(deletes_name(m.name, m.deletes));
            }
        }
        if self.common.is_some() {
            named.push(COMMON.to_string());
        }
        named
    }

    pub(crate) fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST);
        let text = match fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NotAnIndex(dir.to_path_buf()))
            }
            Err(e) => return Err(io_at(&path)(e)),
        };
        // The format is read first so an unknown one is named as such, not as corrupt.
        #[derive(Deserialize)]
        struct Version {
            format: u32,
        }
        let corrupt = |e: serde_json::Error| Error::Corrupt {
            path: path.clone(),
            reason: e.to_string(),
        };
        let version: Version = serde_json::from_slice(&text).map_err(corrupt)?;
        if !(OLDEST_FORMAT..=FORMAT_VERSION).contains(&version.format) {
            return Err(Error::UnsupportedFormat {
                path,
                found: version.format,
                oldest: OLDEST_FORMAT,
                newest: FORMAT_VERSION,
            });
        }
        let manifest: Manifest = serde_json::from_slice(&text).map_err(corrupt)?;
        if manifest.segments.iter().any(|s| s.deleted > s.docs) || manifest.families > 8 {
            return Err(Error::Corrupt {
                path,
                reason: "segment counts do not add up".into(),
            });
        }
        Ok(manifest)
    }

    /// Writes the manifest durably; the caller syncs the directory to commit. A manifest
    /// read in an older format is written in this version's (its new segments are).
    pub(crate) fn write(&mut self, dir: &Path) -> Result<()> {
        self.format = FORMAT_VERSION;
        let json = serde_json::to_vec_pretty(self).expect("a manifest serializes");
        write_durably(dir, MANIFEST, |out| {
            out.write_all(&json)?;
            out.write_all(b"\n")
        })?;
        Ok(())
    }

    /// The next commit's manifest: this one with the generation counted up. A counter at
    /// its largest value (an edited or damaged manifest) is refused rather than wrapped to
    /// a number that names older files.
    pub(crate) fn next(&self, dir: &Path) -> Result<Manifest> {
        let mut next = self.clone();
        next.generation = self
            .generation
            .checked_add(1)
            .ok_or_else(|| Error::CounterExhausted(dir.join(MANIFEST)))?;
        Ok(next)
    }

    /// Takes the next segment name.
    pub(crate) fn take_segment_name(&mut self, dir: &Path) -> Result<u64> {
        let name = self.next_segment;
        self.next_segment = name
            .checked_add(1)
            .ok_or_else(|| Error::CounterExhausted(dir.join(MANIFEST)))?;
        Ok(name)
    }

    pub(crate) fn live(&self) -> u64 {
        self.segments.iter().map(|s| u64::from(s.live())).sum()
    }

    pub(crate) fn deleted(&self) -> u64 {
        self.segments.iter().map(|s| u64::from(s.deleted)).sum()
    }
}
