//! `check`: reads every byte of an index and reports what does not add up.

use std::collections::HashMap;
use std::path::Path;

use crate::error::Result;
use crate::files::is_index_file;
use crate::searcher::Searcher;

/// What [`check`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Live documents.
    pub documents: u64,
    /// Live segments.
    pub segments: usize,
    /// One line per problem, naming the file; empty for a sound index.
    pub problems: Vec<String>,
    /// Files the manifest does not name (left by an interrupted commit; the next writer
    /// removes them). Not a problem.
    pub unreferenced: Vec<String>,
}

impl CheckReport {
    /// True if nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the last committed state of the index in `dir`: every segment's checksum and
/// layout, its postings against its documents, the deletion files against the manifest,
/// and that no two live documents share an id. An index that cannot be opened at all is
/// an error.
pub fn check(dir: impl AsRef<Path>) -> Result<CheckReport> {
    let dir = dir.as_ref();
    let searcher = Searcher::open(dir)?;
    let state = &*searcher.state;
    let mut report = CheckReport {
        documents: state.manifest.live(),
        segments: state.segments.len(),
        ..CheckReport::default()
    };
    let named = state.manifest.files();
    let mut owners: HashMap<&str, (u64, u32)> = HashMap::new();
    for (s, seg) in state.segments.iter().enumerate() {
        let meta = &state.manifest.segments[s];
        report.problems.extend(seg.verify());
        if meta.live() == 0 {
            report.problems.push(format!(
                "{}: listed with no live document",
                seg.path().display()
            ));
        }
        for d in 0..seg.docs() {
            if state.deletes[s].contains(d) {
                continue;
            }
            if let Some((other, od)) = owners.insert(seg.id(d), (seg.name(), d)) {
                report.problems.push(format!(
                    "id {:?} is live twice: segment {other} document {od} and segment {} document {d}",
                    seg.id(d),
                    seg.name()
                ));
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut extra: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| is_index_file(n) && !named.contains(n))
            .collect();
        extra.sort();
        report.unreferenced = extra;
    }
    Ok(report)
}
