//! The dir format: every regular file of a directory tree is one document.
//!
//! The tree is walked recursively in file-name order (so the order is the same on every
//! machine), hidden files included. Symbolic links inside the tree are not followed and
//! not read (the directory given may itself be a link). A record's id is its path
//! relative to the directory, with `/` separators; its text is the file's content, decoded
//! lossily, without a leading UTF-8 BOM; its `raw` is empty (the writer copies the file by
//! path, [`Location::source`]). A file with a NUL byte in its first 8 KiB is skipped as
//! [`SkipReason::Binary`]; a file or subdirectory that cannot be read is skipped as
//! [`SkipReason::Unreadable`], so one bad file does not stop a large walk.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use walkdir::WalkDir;

use crate::error::{Error, Result};
use crate::record::{Entry, Location, Record, SkipReason, Skipped};
use crate::text::{decode_owned, BOM};

/// How much of a file is checked for NUL bytes.
const BINARY_PROBE: usize = 8 * 1024;

/// Reads the files of a directory tree.
pub(crate) struct DirReader {
    root: PathBuf,
    source: String,
    walk: walkdir::IntoIter,
    records: u64,
}

impl DirReader {
    /// Walks the tree under `root`.
    pub(crate) fn new(root: &Path) -> DirReader {
        DirReader {
            root: root.to_path_buf(),
            source: root.display().to_string(),
            walk: WalkDir::new(root)
                .follow_links(false)
                .sort_by_file_name()
                .into_iter(),
            records: 0,
        }
    }

    /// The next entry, `None` at the end.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            let entry = match self.walk.next() {
                None => return Ok(None),
                Some(Ok(entry)) => entry,
                Some(Err(e)) => {
                    let depth = e.depth();
                    let path = e.path().map(Path::to_path_buf);
                    let error = io::Error::from(e);
                    match path {
                        Some(path) if depth > 0 => {
                            let skipped =
                                self.skipped(&path, SkipReason::Unreadable(error.to_string()));
                            return Ok(Some(skipped));
                        }
                        _ => {
                            return Err(Error::Read {
                                path: self.source.clone(),
                                line: None,
                                error,
                            })
                        }
                    }
                }
            };
            if !entry.file_type().is_file() {
                continue;
            }
            return Ok(Some(self.read_file(entry.path())));
        }
    }

    fn location(&mut self, path: &Path) -> Location {
        self.records += 1;
        Location {
            source: path.display().to_string(),
            line: 1,
            record: self.records,
        }
    }

    fn skipped(&mut self, path: &Path, reason: SkipReason) -> Entry {
        Entry::Skipped(Skipped {
            location: self.location(path),
            id: Some(relative_id(&self.root, path)),
            reason,
        })
    }

    fn read_file(&mut self, path: &Path) -> Entry {
        let mut bytes = match read_text_file(path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return self.skipped(path, SkipReason::Binary),
            Err(e) => return self.skipped(path, SkipReason::Unreadable(e.to_string())),
        };
        if bytes.starts_with(BOM) {
            bytes.drain(..BOM.len());
        }
        let (text, lossy) = decode_owned(bytes);
        Entry::Record(Record {
            id: Some(relative_id(&self.root, path)),
            text,
            raw: Vec::new(),
            location: self.location(path),
            lossy,
        })
    }
}

/// Reads a file, or `None` if its first 8 KiB hold a NUL byte (then the rest is not read).
fn read_text_file(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let mut file = File::open(path)?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(BINARY_PROBE as u64)
        .read_to_end(&mut bytes)?;
    if bytes.contains(&0) {
        return Ok(None);
    }
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// `path` relative to `root`, with `/` separators (lossy for non-UTF-8 names).
fn relative_id(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut id = String::new();
    for component in rel.components() {
        if let Component::Normal(part) = component {
            if !id.is_empty() {
                id.push('/');
            }
            id.push_str(&part.to_string_lossy());
        }
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn all(root: &Path) -> Vec<Entry> {
        let mut r = DirReader::new(root);
        let mut out = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            out.push(e);
        }
        out
    }

    #[test]
    fn walks_sorted_with_relative_ids() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("b/deep")).unwrap();
        fs::write(root.join("b/deep/z.txt"), "zed").unwrap();
        fs::write(root.join("a.txt"), "\u{feff}alpha").unwrap();
        fs::write(root.join(".hidden"), "secret").unwrap();
        fs::write(root.join("b/bin.dat"), b"ab\0cd").unwrap();
        fs::write(root.join("c.txt"), b"bad \xFF").unwrap();
        let es = all(root);
        let ids: Vec<&str> = es.iter().map(|e| e.id().unwrap()).collect();
        assert_eq!(
            ids,
            [".hidden", "a.txt", "b/bin.dat", "b/deep/z.txt", "c.txt"]
        );
        let a = es[1].record().unwrap();
        assert_eq!(a.text, "alpha");
        assert!(a.raw.is_empty());
        assert_eq!(a.location.source, root.join("a.txt").display().to_string());
        assert_eq!(a.location.line, 1);
        assert_eq!(a.location.record, 2);
        assert!(matches!(&es[2], Entry::Skipped(s) if s.reason == SkipReason::Binary));
        assert_eq!(es[3].record().unwrap().text, "zed");
        let c = es[4].record().unwrap();
        assert!(c.lossy);
        assert_eq!(c.text, "bad \u{FFFD}");
    }

    #[test]
    fn nul_after_the_probe_is_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut content = vec![b'a'; BINARY_PROBE];
        content.push(0);
        fs::write(dir.path().join("late-nul"), &content).unwrap();
        let es = all(dir.path());
        assert_eq!(es[0].record().unwrap().text.len(), BINARY_PROBE + 1);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("real.txt"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.txt"), dir.path().join("link.txt"))
            .unwrap();
        let es = all(dir.path());
        assert_eq!(es.len(), 1);
        assert_eq!(es[0].id(), Some("real.txt"));
    }

    #[test]
    fn empty_directory_has_no_entries() {
        let dir = tempfile::tempdir().unwrap();
        assert!(all(dir.path()).is_empty());
    }

    #[test]
    fn relative_ids_use_slashes() {
        assert_eq!(
            relative_id(Path::new("root"), Path::new("root/a/b.txt")),
            "a/b.txt"
        );
        assert_eq!(relative_id(Path::new("./r/"), Path::new("./r/x")), "x");
    }
}
