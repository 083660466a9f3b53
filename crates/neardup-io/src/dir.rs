//! The dir format: every regular file of a directory tree is one document.
//!
//! The tree is walked recursively in file-name order (so the order is the same on every
//! machine). A record's id is its path relative to the directory, with `/` separators
//! (lossy for a file name that is not UTF-8: [`Record::path`] keeps the exact path, which
//! the dedup writer copies from); its text is the file's content, decoded lossily,
//! without a leading UTF-8 BOM; its `raw` is empty (the writer copies the file by path).
//! A file whose name ends in `.gz` or `.zst` (any case) is decompressed and read like
//! any other (a corrupt one is unreadable).
//!
//! # What is read, what is skipped, what is left out
//!
//! Nothing is lost silently: every entry of the tree is read, skipped with a reason, or
//! left out and counted.
//!
//! - **Left out** (not records; counted by [`Reader::excluded`](crate::Reader::excluded)):
//!   a hidden file or folder (its name starts with `.`; a hidden folder is not entered
//!   and counts once) unless [`ReadOptions::hidden`] is set (`hidden`); a file that no
//!   pattern of [`ReadOptions::globs`] matches, when there are patterns (`not_matched`).
//!   A pattern without `/` matches the file name (`*.txt`), one with `/` the path
//!   relative to the directory (`docs/**/*.md`; `*` does not cross a `/`, `**` does).
//!   The directory given is never left out, even if its own name starts with `.`.
//! - **Skipped** (records with a [`SkipReason`]): a symbolic link, unless
//!   [`ReadOptions::follow_links`] is set ([`SkipReason::Symlink`]); a FIFO, socket or
//!   device, which is never opened ([`SkipReason::SpecialFile`]; opening a FIFO would
//!   wait forever); a file or folder that cannot be read, including a link that leads
//!   nowhere or back to one of its own parent folders when links are followed
//!   ([`SkipReason::Unreadable`]; a link loop is detected, never walked round); a file
//!   larger than the record-size limit ([`SkipReason::TooLarge`], not read; for a `.gz`
//!   or `.zst` file, its decompressed size); a binary file ([`SkipReason::Binary`], below).
//!
//! [`Record::path`]: crate::Record::path
//! [`ReadOptions::hidden`]: crate::ReadOptions::hidden
//! [`ReadOptions::globs`]: crate::ReadOptions::globs
//! [`ReadOptions::follow_links`]: crate::ReadOptions::follow_links
//!
//! # Text and binary files
//!
//! A file that starts with a UTF-16 byte order mark (`FF FE` little-endian, `FE FF`
//! big-endian) is UTF-16 text: it is decoded (lossily: an unpaired surrogate or an odd
//! last byte is replaced, and the record marked lossy), without the BOM.
//!
//! Any other file is judged on its first 8 KiB (the probe). It is **binary**, and
//! skipped as [`SkipReason::Binary`], if the probe
//!
//! - holds a NUL byte (images, archives, executables, UTF-16 or UTF-32 without a BOM,
//!   a UTF-32 file with its BOM), or
//! - is more than 30 % "not text": bytes of invalid UTF-8 sequences, and control bytes
//!   other than tab, line feed, carriage return, form feed and escape (e.g. random bytes,
//!   compressed data).
//!
//! Otherwise the file is text, decoded as UTF-8 lossily: a mostly-UTF-8 file with a few
//! Latin-1 bytes is a (lossy) record, but a file in a legacy 8-bit encoding whose text
//! is mostly non-ASCII (Cyrillic or Greek code pages) is binary too: as UTF-8 it would be
//! replacement characters, which every such file shares. Convert it to UTF-8 first.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};

use flate2::bufread::MultiGzDecoder;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use walkdir::WalkDir;

use crate::error::{Error, Result};
use crate::open::{is_gzip_name, is_zstd_name};
use crate::options::ReadOptions;
use crate::record::{Entry, Location, Record, SkipReason, Skipped};

/// Why an entry of a directory tree was left out (it is not a record: it was never asked
/// for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Excluded {
    /// A hidden file, or a file in a hidden folder, without
    /// [`ReadOptions::hidden`](crate::ReadOptions::hidden); a hidden folder counts as one.
    Hidden,
    /// A file that no pattern of [`ReadOptions::globs`](crate::ReadOptions::globs) matches.
    NotMatched,
}

impl Excluded {
    /// A stable snake_case code for reports: `hidden`, `not_matched`.
    pub fn code(self) -> &'static str {
        match self {
            Excluded::Hidden => "hidden",
            Excluded::NotMatched => "not_matched",
        }
    }
}
use crate::text::{decode_owned, BOM};

/// How much of a file is checked for NUL bytes.
const BINARY_PROBE: usize = 8 * 1024;

/// A probe with more than this share of bytes that are not text is binary.
const MAX_NOT_TEXT: f64 = 0.30;

/// The UTF-16 byte order marks.
const UTF16_LE: &[u8] = b"\xFF\xFE";
const UTF16_BE: &[u8] = b"\xFE\xFF";

/// The glob patterns selecting files: those without `/` match the file name, the
/// others the relative path.
struct Globs {
    names: GlobSet,
    paths: GlobSet,
}

impl Globs {
    fn new(patterns: &[String]) -> Result<Option<Globs>> {
        if patterns.is_empty() {
            return Ok(None);
        }
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        for pattern in patterns {
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| Error::InvalidOptions(format!("glob {pattern:?}: {e}")))?;
            if pattern.contains('/') {
                paths.add(glob);
            } else {
                names.add(glob);
            }
        }
        let build = |b: GlobSetBuilder| {
            b.build()
                .map_err(|e| Error::InvalidOptions(format!("glob patterns: {e}")))
        };
        Ok(Some(Globs {
            names: build(names)?,
            paths: build(paths)?,
        }))
    }

    fn is_match(&self, relative: &Path) -> bool {
        relative
            .file_name()
            .is_some_and(|name| self.names.is_match(name))
            || self.paths.is_match(relative)
    }
}

/// What the walk of a tree found next: a regular file, or an entry skipped with a reason.
enum Walked {
    File(PathBuf),
    Skipped(PathBuf, SkipReason),
}

/// The files of a tree as [`DirReader`] walks it (sorted, hidden entries and files the
/// globs do not match left out), without reading them: what a folder of shards is made of.
pub(crate) struct Listing {
    /// The regular files, in walk order.
    pub(crate) files: Vec<PathBuf>,
    /// The entries [`DirReader`] would skip (links not followed, special files, entries
    /// that cannot be read), with the reason.
    pub(crate) skipped: Vec<(PathBuf, SkipReason)>,
    /// Entries left out, by reason.
    pub(crate) excluded: Vec<(Excluded, u64)>,
}

/// Lists the tree under `root` as `opts` say (hidden entries, globs, links).
pub(crate) fn list(root: &Path, opts: &ReadOptions) -> Result<Listing> {
    let mut walk = DirReader::new(root, opts)?;
    let (mut files, mut skipped) = (Vec::new(), Vec::new());
    while let Some(walked) = walk.next_walked()? {
        match walked {
            Walked::File(path) => files.push(path),
            Walked::Skipped(path, reason) => skipped.push((path, reason)),
        }
    }
    Ok(Listing {
        files,
        skipped,
        excluded: walk.excluded(),
    })
}

/// Reads the files of a directory tree.
pub(crate) struct DirReader {
    root: PathBuf,
    source: String,
    walk: walkdir::IntoIter,
    records: u64,
    limit: usize,
    hidden: bool,
    globs: Option<Globs>,
    excluded_hidden: u64,
    excluded_not_matched: u64,
}

impl DirReader {
    /// Walks the tree under `root` as `opts` say (record-size limit, hidden entries,
    /// glob patterns, links).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOptions`] for a glob pattern that is not one.
    pub(crate) fn new(root: &Path, opts: &ReadOptions) -> Result<DirReader> {
        Ok(DirReader {
            limit: opts.max_record_bytes,
            root: root.to_path_buf(),
            source: root.display().to_string(),
            walk: WalkDir::new(root)
                .follow_links(opts.follow_links)
                .sort_by_file_name()
                .into_iter(),
            records: 0,
            hidden: opts.hidden,
            globs: Globs::new(&opts.globs)?,
            excluded_hidden: 0,
            excluded_not_matched: 0,
        })
    }

    /// Entries left out so far, by reason (nonzero counts only).
    pub(crate) fn excluded(&self) -> Vec<(Excluded, u64)> {
        [
            (Excluded::Hidden, self.excluded_hidden),
            (Excluded::NotMatched, self.excluded_not_matched),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect()
    }

    /// The next entry, `None` at the end.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        Ok(match self.next_walked()? {
            None => None,
            Some(Walked::File(path)) => Some(self.read_file(&path)),
            Some(Walked::Skipped(path, reason)) => Some(self.skipped(&path, reason)),
        })
    }

    /// The next file to read, or entry to skip, `None` at the end: hidden entries and
    /// files the globs do not match are left out and counted.
    fn next_walked(&mut self) -> Result<Option<Walked>> {
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
                            if !self.hidden && is_hidden(&path) {
                                self.excluded_hidden += 1;
                                continue;
                            }
                            let reason = SkipReason::Unreadable(error.to_string());
                            return Ok(Some(Walked::Skipped(path, reason)));
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
            let depth = entry.depth();
            let file_type = entry.file_type();
            if depth > 0 && !self.hidden && is_hidden(entry.path()) {
                if file_type.is_dir() {
                    self.walk.skip_current_dir();
                }
                self.excluded_hidden += 1;
                continue;
            }
            if file_type.is_dir() {
                continue;
            }
            if let Some(globs) = &self.globs {
                let relative = entry
                    .path()
                    .strip_prefix(&self.root)
                    .unwrap_or(entry.path());
                if !globs.is_match(relative) {
                    self.excluded_not_matched += 1;
                    continue;
                }
            }
            let path = entry.into_path();
            if file_type.is_symlink() {
                return Ok(Some(Walked::Skipped(path, SkipReason::Symlink)));
            }
            if !file_type.is_file() {
                return Ok(Some(Walked::Skipped(path, SkipReason::SpecialFile)));
            }
            return Ok(Some(Walked::File(path)));
        }
    }

    fn location(&mut self, path: &Path) -> Location {
        self.records += 1;
        Location {
            source: path.display().to_string().into(),
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
        let (text, lossy) = match read_text_file(path, self.limit) {
            Ok(Content::Text(text, lossy)) => (text, lossy),
            Ok(Content::Binary) => return self.skipped(path, SkipReason::Binary),
            Ok(Content::TooLarge(size)) => {
                let limit = self.limit as u64;
                return self.skipped(path, SkipReason::TooLarge { size, limit });
            }
            Err(e) => return self.skipped(path, SkipReason::Unreadable(e.to_string())),
        };
        Entry::Record(Record {
            id: Some(relative_id(&self.root, path)),
            text,
            raw: Vec::new(),
            location: self.location(path),
            lossy,
            key: None,
            numeric_id: false,
            path: Some(path.to_path_buf()),
        })
    }
}

/// True if the last component of `path` is hidden (starts with `.`, other than `.` and
/// `..` themselves).
fn is_hidden(path: &Path) -> bool {
    match path.components().next_back() {
        Some(Component::Normal(name)) => name.as_encoded_bytes().starts_with(b"."),
        _ => false,
    }
}

/// What a file of the tree holds.
#[derive(Debug, PartialEq)]
enum Content {
    /// Its text, and whether it was decoded lossily.
    Text(String, bool),
    /// Binary (see the module's documentation).
    Binary,
    /// More than the limit; its size.
    TooLarge(u64),
}

/// Reads a file: its text, or why it has none. A binary or too-large file is not read
/// past its first 8 KiB.
fn read_text_file(path: &Path, limit: usize) -> io::Result<Content> {
    let file = File::open(path)?;
    if is_gzip_name(path) {
        let gz = MultiGzDecoder::new(BufReader::new(file));
        return read_text(gz, limit);
    }
    if is_zstd_name(path) {
        return read_text(zstd::stream::read::Decoder::new(file)?, limit);
    }
    let size = file.metadata()?.len();
    if size > limit as u64 {
        return Ok(Content::TooLarge(size));
    }
    read_text(file, limit)
}

/// Reads a file's bytes (decompressed): its text, or why it has none.
fn read_text(mut file: impl Read, limit: usize) -> io::Result<Content> {
    let mut bytes = Vec::new();
    (&mut file)
        .take(BINARY_PROBE as u64)
        .read_to_end(&mut bytes)?;
    let whole = bytes.len() < BINARY_PROBE;
    let utf32 = bytes.starts_with(b"\xFF\xFE\0\0");
    let utf16 = !utf32 && (bytes.starts_with(UTF16_LE) || bytes.starts_with(UTF16_BE));
    if !utf16 && is_binary(&bytes, whole) {
        return Ok(Content::Binary);
    }
    // The file may have grown since its size was taken.
    (&mut file)
        .take((limit - bytes.len().min(limit)) as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Ok(Content::TooLarge(bytes.len() as u64));
    }
    if utf16 {
        let (text, lossy) = decode_utf16(&bytes);
        return Ok(Content::Text(text, lossy));
    }
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    let (text, lossy) = decode_owned(bytes);
    Ok(Content::Text(text, lossy))
}

/// True if `probe` (the start of a file; `whole` if it is all of it) does not look like
/// text: see the module's documentation.
fn is_binary(probe: &[u8], whole: bool) -> bool {
    if memchr::memchr(0, probe).is_some() {
        return true;
    }
    let mut not_text = 0usize;
    let mut rest = probe;
    loop {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s.as_bytes(), 0),
            Err(e) => {
                let bad = match e.error_len() {
                    Some(n) => n,
                    // An incomplete sequence at the end: cut by the probe, or truly bad.
                    None if whole => rest.len() - e.valid_up_to(),
                    None => 0,
                };
                (&rest[..e.valid_up_to()], bad)
            }
        };
        not_text += valid
            .iter()
            .filter(|&&b| {
                (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b)) || b == 0x7f
            })
            .count();
        not_text += bad;
        if bad == 0 {
            break;
        }
        rest = &rest[valid.len() + bad..];
    }
    not_text as f64 > MAX_NOT_TEXT * probe.len() as f64
}

/// Decodes UTF-16 after its BOM (which says the byte order), lossily.
fn decode_utf16(bytes: &[u8]) -> (String, bool) {
    let little = bytes.starts_with(UTF16_LE);
    let body = &bytes[2..];
    let units = body.chunks_exact(2).map(|p| {
        if little {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    });
    let mut lossy = body.len() % 2 == 1;
    let mut text = String::with_capacity(body.len() / 2);
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => text.push(c),
            Err(_) => {
                lossy = true;
                text.push(char::REPLACEMENT_CHARACTER);
            }
        }
    }
    if body.len() % 2 == 1 {
        text.push(char::REPLACEMENT_CHARACTER);
    }
    (text, lossy)
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
        all_with(root, &ReadOptions::default().with_max_record_bytes(1 << 20))
    }

    fn all_with(root: &Path, opts: &ReadOptions) -> Vec<Entry> {
        let mut r = DirReader::new(root, opts).unwrap();
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
        let es = all_with(root, &ReadOptions::default().with_hidden(true));
        let ids: Vec<&str> = es.iter().map(|e| e.id().unwrap()).collect();
        assert_eq!(
            ids,
            [".hidden", "a.txt", "b/bin.dat", "b/deep/z.txt", "c.txt"]
        );
        let a = es[1].record().unwrap();
        assert_eq!(a.text, "alpha");
        assert!(a.raw.is_empty());
        assert_eq!(
            &*a.location.source,
            root.join("a.txt").display().to_string()
        );
        assert_eq!(a.path.as_deref(), Some(&*root.join("a.txt")));
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
        assert_eq!(es.len(), 2);
        assert!(
            matches!(&es[0], Entry::Skipped(s) if s.reason == SkipReason::Symlink
                && s.id.as_deref() == Some("link.txt"))
        );
        assert_eq!(es[1].id(), Some("real.txt"));
        assert!(es[1].record().is_some());
        // Followed on request: the link is read as the file it leads to.
        let es = all_with(dir.path(), &ReadOptions::default().with_follow_links(true));
        assert_eq!(es.len(), 2);
        assert_eq!(es[0].record().unwrap().text, "x");
        assert_eq!(es[0].id(), Some("link.txt"));
    }

    fn ids_and_codes(es: &[Entry]) -> Vec<(String, &'static str)> {
        es.iter()
            .map(|e| {
                let code = match e {
                    Entry::Record(_) => "record",
                    Entry::Skipped(s) => s.reason.code(),
                };
                (e.id().unwrap_or("").to_string(), code)
            })
            .collect()
    }

    #[test]
    fn hidden_entries_are_left_out_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(".git/objects")).unwrap();
        fs::write(root.join(".git/objects/ab"), "blob").unwrap();
        fs::write(root.join(".git/HEAD"), "ref").unwrap();
        fs::write(root.join(".env"), "SECRET=1").unwrap();
        fs::create_dir_all(root.join("sub/.cache")).unwrap();
        fs::write(root.join("sub/.cache/x"), "x").unwrap();
        fs::write(root.join("sub/a.txt"), "a").unwrap();
        let mut r = DirReader::new(root, &ReadOptions::default()).unwrap();
        let mut es = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            es.push(e);
        }
        assert_eq!(ids_and_codes(&es), [("sub/a.txt".to_string(), "record")]);
        // .env, .git (not entered) and sub/.cache.
        assert_eq!(r.excluded(), [(Excluded::Hidden, 3)]);
        let es = all_with(root, &ReadOptions::default().with_hidden(true));
        let ids: Vec<&str> = es.iter().map(|e| e.id().unwrap()).collect();
        assert_eq!(
            ids,
            [
                ".env",
                ".git/HEAD",
                ".git/objects/ab",
                "sub/.cache/x",
                "sub/a.txt"
            ]
        );
        // A hidden directory given as the root is read.
        let es = all(&root.join(".git"));
        assert_eq!(es.len(), 2);
    }

    #[test]
    fn globs_select_by_name_or_relative_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("docs/deep")).unwrap();
        fs::write(root.join("a.txt"), "a").unwrap();
        fs::write(root.join("b.md"), "b").unwrap();
        fs::write(root.join("docs/c.md"), "c").unwrap();
        fs::write(root.join("docs/deep/d.md"), "d").unwrap();
        fs::write(root.join("docs/deep/e.txt"), "e").unwrap();
        let read = |globs: &[&str]| {
            let mut opts = ReadOptions::default();
            for g in globs {
                opts = opts.with_glob(*g);
            }
            let mut r = DirReader::new(root, &opts).unwrap();
            let mut ids = Vec::new();
            while let Some(e) = r.next_entry().unwrap() {
                ids.push(e.id().unwrap().to_string());
            }
            (ids, r.excluded())
        };
        let (ids, excluded) = read(&["*.txt"]);
        assert_eq!(ids, ["a.txt", "docs/deep/e.txt"]);
        assert_eq!(excluded, [(Excluded::NotMatched, 3)]);
        let (ids, _) = read(&["docs/*.md"]);
        assert_eq!(ids, ["docs/c.md"]);
        let (ids, _) = read(&["docs/**/*.md", "a.*"]);
        assert_eq!(ids, ["a.txt", "docs/c.md", "docs/deep/d.md"]);
        let (ids, excluded) = read(&[]);
        assert_eq!(ids.len(), 5);
        assert!(excluded.is_empty());
        let err = DirReader::new(root, &ReadOptions::default().with_glob("a[")).err();
        assert!(matches!(err, Some(Error::InvalidOptions(_))), "{err:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_loop_ends_when_links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("a")).unwrap();
        fs::write(root.join("a/f.txt"), "f").unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("a/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("broken")).unwrap();
        let es = all_with(root, &ReadOptions::default().with_follow_links(true));
        assert_eq!(
            ids_and_codes(&es),
            [
                ("a/f.txt".to_string(), "record"),
                ("a/loop".to_string(), "unreadable"),
                ("broken".to_string(), "unreadable"),
            ]
        );
        let es = all(root);
        assert_eq!(
            ids_and_codes(&es),
            [
                ("a/f.txt".to_string(), "record"),
                ("a/loop".to_string(), "symlink"),
                ("broken".to_string(), "symlink"),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_skipped_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("a.txt"), "a").unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(root.join("pipe"))
            .status()
            .unwrap();
        assert!(status.success());
        // Opening the FIFO would block this thread forever: read on another one.
        let (tx, rx) = std::sync::mpsc::channel();
        let path = root.to_path_buf();
        std::thread::spawn(move || tx.send(ids_and_codes(&all(&path))).unwrap());
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("reading a directory with a FIFO hung");
        assert_eq!(
            got,
            [
                ("a.txt".to_string(), "record"),
                ("pipe".to_string(), "special_file"),
            ]
        );
    }

    #[test]
    fn gz_files_are_decompressed() {
        use flate2::{write::GzEncoder, Compression};
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all("compressed text, caf\u{e9}".as_bytes())
            .unwrap();
        fs::write(root.join("doc.txt.gz"), gz.finish().unwrap()).unwrap();
        fs::write(root.join("bad.gz"), b"\x1f\x8bnot really").unwrap();
        let mut big = GzEncoder::new(Vec::new(), Compression::default());
        big.write_all(&vec![b'a'; 5000]).unwrap();
        fs::write(root.join("big.gz"), big.finish().unwrap()).unwrap();
        let es = all_with(root, &ReadOptions::default().with_max_record_bytes(1000));
        assert_eq!(
            ids_and_codes(&es),
            [
                ("bad.gz".to_string(), "unreadable"),
                ("big.gz".to_string(), "too_large"),
                ("doc.txt.gz".to_string(), "record"),
            ]
        );
        assert_eq!(es[2].record().unwrap().text, "compressed text, caf\u{e9}");
    }

    #[test]
    fn zst_files_are_decompressed_as_gz_files_are() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let text = "compressed text, caf\u{e9}";
        fs::write(
            root.join("doc.txt.zst"),
            zstd::encode_all(text.as_bytes(), 3).unwrap(),
        )
        .unwrap();
        fs::write(root.join("bad.zst"), b"\x28\xb5\x2f\xfdnot really").unwrap();
        let big = zstd::encode_all(&vec![b'a'; 5000][..], 3).unwrap();
        fs::write(root.join("big.zst"), big).unwrap();
        let es = all_with(root, &ReadOptions::default().with_max_record_bytes(1000));
        assert_eq!(
            ids_and_codes(&es),
            [
                ("bad.zst".to_string(), "unreadable"),
                ("big.zst".to_string(), "too_large"),
                ("doc.txt.zst".to_string(), "record"),
            ]
        );
        assert_eq!(es[2].record().unwrap().text, text);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_name_that_is_not_utf8_is_read() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let name = OsStr::from_bytes(b"caf\xE9.txt");
        fs::write(root.join(name), "latin-1 name").unwrap();
        let es = all(root);
        let r = es[0].record().unwrap();
        assert_eq!(r.id.as_deref(), Some("caf\u{FFFD}.txt"));
        assert_eq!(r.path.as_deref(), Some(&*root.join(name)));
        assert_eq!(r.text, "latin-1 name");
    }

    #[test]
    fn binary_means_nul_or_mostly_not_text() {
        assert!(is_binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", true));
        assert!(is_binary(b"a\0b", true));
        assert!(!is_binary(b"", true));
        assert!(!is_binary(b"plain text\n\twith tabs\x0c\x1b[0m", true));
        assert!(!is_binary("caf\u{e9} na\u{ef}ve".as_bytes(), true));
        assert!(!is_binary(
            b"Latin-1 caf\xE9 and na\xEFve, mostly ASCII",
            true
        ));
        assert!(
            is_binary(b"\xF0\xE8\xE2\xE5\xF2 \xEC\xE8\xF0", true),
            "cp1251"
        );
        assert!(is_binary(b"\x01\x02\x03\x04abc", true));
        // A sequence cut by the end of the probe is not held against the file.
        let mut probe = "é".repeat(BINARY_PROBE / 2 - 1).into_bytes();
        probe.extend_from_slice(b"a\xC3");
        assert!(!is_binary(&probe, false));
        assert!(!is_binary(&probe, true));
    }

    #[test]
    fn utf16_with_a_bom_is_decoded() {
        let mut le = vec![0xFF, 0xFE];
        le.extend("héllo 日本".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode_utf16(&le), ("héllo 日本".to_string(), false));
        let mut be = vec![0xFE, 0xFF];
        be.extend("héllo".encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode_utf16(&be), ("héllo".to_string(), false));
        assert_eq!(
            decode_utf16(b"\xFF\xFEa\0b"),
            ("a\u{FFFD}".to_string(), true)
        );
        assert_eq!(
            decode_utf16(b"\xFF\xFE\x00\xD8"),
            ("\u{FFFD}".to_string(), true)
        );
    }

    #[test]
    fn files_over_the_limit_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("big.txt"), "0123456789").unwrap();
        fs::write(dir.path().join("small.txt"), "01234").unwrap();
        let mut r =
            DirReader::new(dir.path(), &ReadOptions::default().with_max_record_bytes(5)).unwrap();
        let big = r.next_entry().unwrap().unwrap();
        assert!(matches!(&big, Entry::Skipped(s)
            if s.reason == SkipReason::TooLarge { size: 10, limit: 5 }));
        assert_eq!(
            r.next_entry().unwrap().unwrap().record().unwrap().text,
            "01234"
        );
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
