//! A committed state, opened: the manifest and its segments and deletions. Readers and
//! the writer share the same loading, and a reload reuses what has not changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::deletes::Deletes;
use crate::error::{Error, Result};
use crate::manifest::Manifest;
use crate::segment::Segment;

/// How often a reader re-reads the manifest when a file it names has just been removed
/// by a commit (a merge or a new deletion generation) between the two reads.
const RETRIES: usize = 16;

/// One committed state of an index.
#[derive(Debug)]
pub(crate) struct State {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub segments: Vec<Arc<Segment>>,
    pub deletes: Vec<Arc<Deletes>>,
    /// Each segment's first entry in one numbering of all stored entries (for a query's
    /// per-entry bits).
    pub first_entry: Vec<usize>,
    /// Entries stored (distinct sets per segment), live or deleted.
    pub entries: usize,
    /// A containment index's common tokens, sorted (empty otherwise).
    pub common: Arc<Vec<u64>>,
}

impl State {
    /// Opens the last committed state, reusing the open files of `previous`.
    pub(crate) fn load(dir: &Path, previous: Option<&State>) -> Result<State> {
        let mut attempt = 0;
        loop {
            let manifest = Manifest::read(dir)?;
            match State::open_files(dir, manifest, previous) {
                Err(Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound && attempt < RETRIES =>
                {
                    attempt += 1;
                    std::thread::yield_now();
                }
                other => return other,
            }
        }
    }

    pub(crate) fn open_files(
        dir: &Path,
        manifest: Manifest,
        previous: Option<&State>,
    ) -> Result<State> {
        let mut segments = Vec::with_capacity(manifest.segments.len());
        let mut deletes = Vec::with_capacity(manifest.segments.len());
        for meta in &manifest.segments {
            let old = previous.and_then(|p| {
                let i = p
                    .manifest
                    .segments
                    .iter()
                    .position(|m| m.name == meta.name)?;
                Some((&p.manifest.segments[i], &p.segments[i], &p.deletes[i]))
            });
            let segment = match old {
                Some((_, seg, _)) => Arc::clone(seg),
                None => Arc::new(Segment::open(
                    dir,
                    meta.name,
                    meta.docs,
                    manifest.families,
                    manifest.params.bands,
                )?),
            };
            let dels = match old {
                Some((m, _, d)) if m.deletes == meta.deletes => Arc::clone(d),
                _ if meta.deletes == 0 => Arc::new(Deletes::none(meta.docs)),
                _ => Arc::new(Deletes::read(dir, meta.name, meta.deletes, meta.docs)?),
            };
            if dels.count() != meta.deleted {
                return Err(Error::Corrupt {
                    path: dir.join(crate::files::MANIFEST),
                    reason: format!(
                        "segment {} lists {} deletions, its deletion file holds {}",
                        meta.name,
                        meta.deleted,
                        dels.count()
                    ),
                });
            }
            segments.push(segment);
            deletes.push(dels);
        }
        let mut first_entry = Vec::with_capacity(segments.len());
        let mut entries = 0usize;
        for seg in &segments {
            first_entry.push(entries);
            entries += seg.entries() as usize;
        }
        // Written once, with the first documents: a previous state that has them has these.
        let common = match (manifest.common, previous) {
            (None, _) => Arc::new(Vec::new()),
            (Some(count), Some(p)) if p.manifest.common == Some(count) => Arc::clone(&p.common),
            (Some(count), _) => Arc::new(crate::common::read(dir, count)?),
        };
        Ok(State {
            dir: dir.to_path_buf(),
            manifest,
            segments,
            deletes,
            first_entry,
            entries,
            common,
        })
    }

    /// The live document stored under `id`: (segment index, document).
    pub(crate) fn find(&self, id: &str) -> Option<(usize, u32)> {
        self.segments.iter().enumerate().find_map(|(s, seg)| {
            let d = seg.find(id)?;
            (!self.deletes[s].contains(d)).then_some((s, d))
        })
    }
}
