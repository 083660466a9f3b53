//! Writes the kept records back, byte for byte, in the input's own format; documented on
//! [`DedupWriter`].

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::Format;
use crate::output::{registry, OutputFile, OutputOptions};
use crate::output_dir::OutputDir;
use crate::record::Record;

/// Buffer size for the output of [`DedupWriter::from_writer`].
const BUF_SIZE: usize = 64 * 1024;

/// Writes deduplicated output. Create it, [`write`](DedupWriter::write) each kept
/// record in order, then [`finish`](DedupWriter::finish) it.
///
/// ```
/// use neardup_io::{open, DedupWriter, Entry, ReadOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let input = dir.path().join("in.jsonl");
/// std::fs::write(&input, "{\"text\":\"a\"}\n{\"text\":\"a\"}\n{\"text\":\"b\"}")?;
/// let output = dir.path().join("out.jsonl");
///
/// let reader = open(&input, &ReadOptions::default())?;
/// let mut writer = DedupWriter::create(Some(&output), reader.format(), reader.header_raw())?;
/// let mut seen = std::collections::HashSet::new();
/// for entry in reader {
///     if let Entry::Record(record) = entry? {
///         if seen.insert(record.text.clone()) {
///             writer.write(&record)?;
///         }
///     }
/// }
/// writer.finish()?;
/// assert_eq!(std::fs::read_to_string(&output)?, "{\"text\":\"a\"}\n{\"text\":\"b\"}");
/// # Ok(())
/// # }
/// ```
///
/// Writing the kept records back, byte for byte, in the input's own format.
///
/// For JSONL, lines, CSV and TSV the writer puts the header (CSV/TSV) first and then
/// each kept record's `raw` bytes. A record whose `raw` has no line end (the last line
/// of an input without a final newline) gets a `\n` before the next record is written,
/// never at the very end, so writing every record back reproduces the input exactly.
///
/// A file output is opened with [`OutputFile::create`], so the rules of
/// [`OutputFile`] apply: standard output, a character device or a FIFO is written in
/// place; a regular file (or a link to one) is written to a temporary file beside it and
/// renamed over it by [`DedupWriter::finish`]; if the writer is dropped without `finish`
/// (an error, an interrupt), the target is left as it was; a name ending in `.gz` is
/// gzip-compressed (the input's format, compressed); an input is never overwritten
/// (with [`OutputOptions::refuse_inputs`]).
///
/// For the dir format the output is a directory: each kept record's file
/// ([`Record::path`](crate::Record::path), else
/// [`Location::source`](crate::Location::source)) is copied to `output/<id>` (to its
/// exact relative path when a file name is not UTF-8, which the id shows lossily). The files
/// are copied into a temporary directory beside the output, which `finish` renames to
/// the output path; the output must not exist or be an empty directory.
///
/// **Several input roots.** When the records come from more than one directory
/// ([`DedupWriter::with_roots`]), each root gets its own subfolder, named after the root's
/// last component (`a/docs` → `docs`; `.` and `..` by the directory they resolve to);
/// equal names are told apart by a suffix in the order given: `docs`, `docs-2`,
/// `docs-3`. So `dedup dA dB -o out` writes `out/dA/x.txt` and `out/dB/x.txt`, and two
/// inputs never write the same file. With one root the layout is `output/<id>`.
pub struct DedupWriter {
    format: Format,
    target: Target,
    /// True if what was written last has no line end, so the next record needs one first.
    needs_newline: bool,
    written: u64,
}

/// Where the output goes.
enum Target {
    /// Standard output or a file, as [`OutputFile`] opens it.
    Output(Box<OutputFile>),
    /// Any writer given to [`DedupWriter::from_writer`]; errors name it `name`.
    Writer {
        out: BufWriter<Box<dyn Write + Send>>,
        name: String,
    },
    Dir {
        /// The directory built beside the output and moved into place on finish.
        staged: OutputDir,
        path: PathBuf,
        /// Subfolders per input root (see [`DedupWriter::with_roots`]): the roots, the
        /// folder of each, and the root of the last record written.
        roots: Vec<(PathBuf, PathBuf)>,
        current: usize,
    },
}

impl DedupWriter {
    /// Creates a writer for `format` to `output` (`None`, or `-`, is standard output)
    /// and writes `header` (the input's [`Reader::header_raw`](crate::Reader::header_raw)
    /// for CSV/TSV) first, if given.
    ///
    /// # Errors
    ///
    /// [`Error::DirNeedsOutput`] for the dir format without an output path;
    /// [`Error::OutputDirNotEmpty`] if the dir output exists and is not an empty
    /// directory; [`Error::Write`] if the temporary file or directory cannot be created
    /// or the header cannot be written; [`Error::BrokenPipe`] if standard output is closed.
    pub fn create(output: Option<&Path>, format: Format, header: Option<&[u8]>) -> Result<Self> {
        Self::create_with_options(output, format, header, &OutputOptions::new())
    }

    /// [`DedupWriter::create`], except that for the dir format an existing output
    /// directory, empty or not, is replaced on [`finish`](DedupWriter::finish): the new
    /// tree is built beside it and swapped in, and the old one is deleted only after the
    /// swap, so a failed run leaves it as it was. The caller must make sure it holds no
    /// input.
    ///
    /// # Errors
    ///
    /// As [`DedupWriter::create`], less [`Error::OutputDirNotEmpty`] for a directory.
    pub fn create_replacing(
        output: Option<&Path>,
        format: Format,
        header: Option<&[u8]>,
    ) -> Result<Self> {
        Self::create_with_options(
            output,
            format,
            header,
            &OutputOptions::new().replace_directory(true),
        )
    }

    /// [`DedupWriter::create`] with the checks and choices of `options`: the inputs it
    /// must not overwrite ([`Error::OutputIsInput`]), gzip or not (by default a name
    /// ending in `.gz` is compressed), and for the dir format whether an existing
    /// directory is replaced ([`OutputOptions::replace_directory`]).
    ///
    /// # Errors
    ///
    /// As [`DedupWriter::create`] and [`OutputFile::create`].
    pub fn create_with_options(
        output: Option<&Path>,
        format: Format,
        header: Option<&[u8]>,
        options: &OutputOptions,
    ) -> Result<Self> {
        let output = output.filter(|p| *p != Path::new("-"));
        let target = match (format, output) {
            (Format::Dir, None) => return Err(Error::DirNeedsOutput),
            (Format::Dir, Some(path)) => create_dir_target(path, options.replace_directory)?,
            (_, None) => Target::Output(Box::new(OutputFile::create(Path::new("-"), options)?)),
            (_, Some(path)) => Target::Output(Box::new(OutputFile::create(path, options)?)),
        };
        let mut writer = DedupWriter {
            format,
            target,
            needs_newline: false,
            written: 0,
        };
        if let Some(header) = header.filter(|_| format != Format::Dir) {
            writer.write_bytes(header)?;
        }
        Ok(writer)
    }

    /// Creates a writer for `format` that writes to `writer` (a `Vec`, a socket, a
    /// pipe, ...) and writes `header` first, if given. Nothing is renamed on
    /// [`finish`](DedupWriter::finish), which only flushes; errors name the output `name`.
    ///
    /// ```
    /// use neardup_io::{DedupWriter, Format, ReadOptions, Reader};
    /// use std::sync::{Arc, Mutex};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// /// A `Vec` that the test can still read after the writer took it.
    /// #[derive(Clone, Default)]
    /// struct Shared(Arc<Mutex<Vec<u8>>>);
    /// impl std::io::Write for Shared {
    ///     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
    ///         self.0.lock().unwrap().write(b)
    ///     }
    ///     fn flush(&mut self) -> std::io::Result<()> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let input = b"id,text\n1,a\n2,b".to_vec();
    /// let opts = ReadOptions::default().with_id_column("id");
    /// let reader = Reader::from_reader(std::io::Cursor::new(input.clone()), "-", &opts.with_format(Format::Csv))?;
    /// let out = Shared::default();
    /// let mut writer = DedupWriter::from_writer(out.clone(), "memory", reader.format(), reader.header_raw())?;
    /// for entry in reader {
    ///     writer.write(entry?.record().unwrap())?;
    /// }
    /// writer.finish()?;
    /// assert_eq!(*out.0.lock().unwrap(), input);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::DirNeedsOutput`] for the dir format; [`Error::Write`] if the header
    /// cannot be written ([`Error::is_broken_pipe`] tells a closed pipe).
    pub fn from_writer(
        writer: impl Write + Send + 'static,
        name: &str,
        format: Format,
        header: Option<&[u8]>,
    ) -> Result<Self> {
        if format == Format::Dir {
            return Err(Error::DirNeedsOutput);
        }
        let out: Box<dyn Write + Send> = Box::new(writer);
        let mut writer = DedupWriter {
            format,
            target: Target::Writer {
                out: BufWriter::with_capacity(BUF_SIZE, out),
                name: name.to_string(),
            },
            needs_newline: false,
            written: 0,
        };
        if let Some(header) = header {
            writer.write_bytes(header)?;
        }
        Ok(writer)
    }

    /// For the dir format: the records come from these input directories, in this
    /// order, and each root's files go to their own subfolder of the output (named as
    /// the [`DedupWriter`] docs say) when there is more than one root. A record belongs to
    /// the first root, from the last record's on, whose path and the record's id make
    /// up the record's path. Without effect for other formats or a single root.
    pub fn with_roots<P: AsRef<Path>>(mut self, roots: &[P]) -> Self {
        if let Target::Dir { roots: r, .. } = &mut self.target {
            if roots.len() > 1 {
                *r = subfolders(roots);
            }
        }
        self
    }

    /// The format being written.
    pub fn format(&self) -> Format {
        self.format
    }

    /// How many records were written.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes one kept record: its `raw` bytes, or for the dir format a copy of its file
    /// at `output/<id>`.
    ///
    /// # Errors
    ///
    /// [`Error::Write`] or [`Error::BrokenPipe`] if writing fails; for the dir format,
    /// [`Error::UnsafeId`] if the id is not a plain relative path and [`Error::Copy`] if
    /// the file cannot be copied.
    pub fn write(&mut self, record: &Record) -> Result<()> {
        if let Target::Dir {
            staged,
            path,
            roots,
            current,
        } = &mut self.target
        {
            let staging = staged.staging();
            if roots.is_empty() {
                copy_into(staging, path, record)?;
            } else {
                *current = root_of(record, roots, *current);
                let folder = &roots[*current].1;
                copy_into(&staging.join(folder), &path.join(folder), record)?;
            }
        } else {
            self.write_bytes(&record.raw)?;
        }
        self.written += 1;
        Ok(())
    }

    /// Writes `bytes`, after a `\n` if what came before has no line end.
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let ended = match bytes.last() {
            Some(b'\n') => true,
            Some(b'\r') => self.format.has_header(),
            _ => false,
        };
        let needs_newline = std::mem::replace(&mut self.needs_newline, !ended);
        let result = match &mut self.target {
            Target::Output(out) => write_with_newline(out, needs_newline, bytes),
            Target::Writer { out, .. } => write_with_newline(out, needs_newline, bytes),
            Target::Dir { .. } => Ok(()),
        };
        result.map_err(|e| self.write_error(e))
    }

    fn write_error(&self, error: io::Error) -> Error {
        match &self.target {
            Target::Output(out) => out.error(error),
            Target::Writer { name, .. } => Error::Write {
                path: name.clone(),
                error,
            },
            Target::Dir { path, .. } => Error::Write {
                path: path.display().to_string(),
                error,
            },
        }
    }

    /// Flushes the output and, for a file or directory, moves it into place.
    ///
    /// # Errors
    ///
    /// [`Error::Write`] (or [`Error::BrokenPipe`]) if flushing or renaming fails; the
    /// target is then left as it was.
    pub fn finish(self) -> Result<()> {
        match self.target {
            Target::Output(out) => out.finish(),
            Target::Writer { mut out, name } => out
                .flush()
                .map_err(|error| Error::Write { path: name, error }),
            Target::Dir { staged, .. } => staged.finish(),
        }
    }
}

impl std::fmt::Debug for DedupWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DedupWriter")
            .field("format", &self.format)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

fn write_with_newline(out: &mut impl Write, newline: bool, bytes: &[u8]) -> io::Result<()> {
    if newline {
        out.write_all(b"\n")?;
    }
    out.write_all(bytes)
}

fn create_dir_target(path: &Path, replace: bool) -> Result<Target> {
    Ok(Target::Dir {
        staged: OutputDir::create(path, replace)?,
        path: path.to_path_buf(),
        roots: Vec::new(),
        current: 0,
    })
}

/// Copies the record's file to `dir/<id>`, creating subdirectories; errors name the
/// place it is going to, `target/<id>`, not the staging directory the user never sees.
fn copy_into(dir: &Path, target: &Path, record: &Record) -> Result<()> {
    let id = record.id.as_deref().unwrap_or("");
    let rel = Path::new(id);
    let plain = !id.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(Error::UnsafeId { id: id.to_string() });
    }
    // The exact path (a file name that is not UTF-8 is lossy in the id and the source):
    // copied from there, to the same relative path, its last components.
    let (from, to) = match &record.path {
        Some(path) => {
            let parts = id.split('/').count();
            let names: Vec<_> = path.components().collect();
            let tail = &names[names.len().saturating_sub(parts)..];
            let exact: PathBuf = tail.iter().collect();
            let safe =
                tail.len() == parts && tail.iter().all(|c| matches!(c, Component::Normal(_)));
            (
                path.as_path(),
                dir.join(if safe { exact.as_path() } else { rel }),
            )
        }
        None => (Path::new(&*record.location.source), dir.join(rel)),
    };
    let err = |error: io::Error| Error::Copy {
        from: from.display().to_string(),
        to: target.join(rel).display().to_string(),
        error,
    };
    let mut source = File::open(from).map_err(err)?;
    let mode = source.metadata().map_err(err)?.permissions();
    // Folders and the file are created under the registry's lock: an interrupt that is
    // deleting the staging folder holds the lock until the process ends, so nothing can
    // be created inside it while (or after) it is removed. The bytes are copied outside
    // the lock; into an unlinked file, they are harmless.
    let mut dest = {
        let _registry = registry();
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(err)?;
        }
        File::create(&to).map_err(err)?
    };
    io::copy(&mut source, &mut dest).map_err(err)?;
    dest.set_permissions(mode).map_err(err)?;
    Ok(())
}

/// Each root with its subfolder ([`root_folders`]).
fn subfolders<P: AsRef<Path>>(roots: &[P]) -> Vec<(PathBuf, PathBuf)> {
    roots
        .iter()
        .map(|r| r.as_ref().to_path_buf())
        .zip(root_folders(roots))
        .collect()
}

/// The subfolder of the output that each of several input directories' files go to
/// ([`DedupWriter::with_roots`]): the last component of the root (resolved if it is `.`
/// or `..`), with `-2`, `-3`, ... added to a name already taken. Ids of files read from
/// several directories can be prefixed with these names, so that equal relative paths
/// stay apart as they do in the output.
///
/// ```
/// use std::path::PathBuf;
/// let names = neardup_io::root_folders(&["2024/articles", "2025/articles", "notes"]);
/// assert_eq!(names, [PathBuf::from("articles"), "articles-2".into(), "notes".into()]);
/// ```
pub fn root_folders<P: AsRef<Path>>(roots: &[P]) -> Vec<PathBuf> {
    let mut taken = std::collections::HashSet::new();
    roots
        .iter()
        .map(|root| {
            let root = root.as_ref();
            let base = root
                .file_name()
                .map(|n| n.to_os_string())
                .or_else(|| {
                    fs::canonicalize(root)
                        .ok()
                        .and_then(|p| p.file_name().map(|n| n.to_os_string()))
                })
                .unwrap_or_else(|| "root".into());
            let mut name = base.clone();
            let mut n = 1;
            while !taken.insert(name.clone()) {
                n += 1;
                name = base.clone();
                name.push(format!("-{n}"));
            }
            PathBuf::from(name)
        })
        .collect()
}

/// The index of the root `record` comes from: the first from `current` on whose path,
/// joined with the record's id, is the record's path (the last root if none matches).
fn root_of(record: &Record, roots: &[(PathBuf, PathBuf)], current: usize) -> usize {
    let file = match &record.path {
        Some(p) => p.clone(),
        None => PathBuf::from(&*record.location.source),
    };
    let parts = record.id.as_deref().map_or(0, |id| id.split('/').count());
    let mut root = file.as_path();
    for _ in 0..parts {
        root = root.parent().unwrap_or(root);
    }
    (current..roots.len())
        .find(|&i| roots[i].0 == root)
        .unwrap_or(roots.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::same_file;
    use crate::record::Location;

    fn record(raw: &[u8]) -> Record {
        Record {
            id: None,
            text: String::new(),
            raw: raw.to_vec(),
            location: Location {
                source: "in".into(),
                line: 1,
                record: 1,
            },
            lossy: false,
            key: None,
            numeric_id: false,
            path: None,
        }
    }

    fn write_all(format: Format, header: Option<&[u8]>, raws: &[&[u8]]) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut w = DedupWriter::create(Some(&out), format, header).unwrap();
        for raw in raws {
            w.write(&record(raw)).unwrap();
        }
        assert_eq!(w.written(), raws.len() as u64);
        w.finish().unwrap();
        fs::read(&out).unwrap()
    }

    #[test]
    fn newline_only_between_records() {
        assert_eq!(
            write_all(Format::Lines, None, &[b"a\n", b"b", b"c"]),
            b"a\nb\nc"
        );
        assert_eq!(
            write_all(Format::Jsonl, None, &[b"a\r\n", b"b\n"]),
            b"a\r\nb\n"
        );
        assert_eq!(write_all(Format::Lines, None, &[]), b"");
        assert_eq!(write_all(Format::Lines, None, &[b"x\r", b"y"]), b"x\r\ny");
    }

    #[test]
    fn header_first_and_lone_cr_ends_csv_records() {
        assert_eq!(
            write_all(Format::Csv, Some(b"id,text\n"), &[b"1,a\n"]),
            b"id,text\n1,a\n"
        );
        assert_eq!(write_all(Format::Csv, Some(b"h"), &[b"1"]), b"h\n1");
        assert_eq!(write_all(Format::Csv, Some(b"h\r"), &[b"1\r"]), b"h\r1\r");
        assert_eq!(write_all(Format::Tsv, Some(b"h\n"), &[]), b"h\n");
    }

    #[test]
    fn nothing_replaces_the_target_without_finish() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.jsonl");
        fs::write(&out, "old\n").unwrap();
        {
            let mut w = DedupWriter::create(Some(&out), Format::Jsonl, None).unwrap();
            w.write(&record(b"new\n")).unwrap();
        }
        assert_eq!(fs::read(&out).unwrap(), b"old\n");
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "temporary file removed");
        let mut w = DedupWriter::create(Some(&out), Format::Jsonl, None).unwrap();
        w.write(&record(b"new\n")).unwrap();
        w.finish().unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"new\n");
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions_of_an_existing_target() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        fs::write(&out, "old\n").unwrap();
        fs::set_permissions(&out, fs::Permissions::from_mode(0o640)).unwrap();
        let w = DedupWriter::create(Some(&out), Format::Lines, None).unwrap();
        w.finish().unwrap();
        let mode = fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let fresh = dir.path().join("fresh.txt");
        DedupWriter::create(Some(&fresh), Format::Lines, None)
            .unwrap()
            .finish()
            .unwrap();
        let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_ne!(mode & 0o044, 0, "a new file is not owner-only: {mode:o}");
    }

    #[test]
    fn missing_output_directory_is_a_write_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("no/such/dir/out.txt");
        let err = DedupWriter::create(Some(&out), Format::Lines, None).unwrap_err();
        assert!(matches!(err, Error::Write { .. }), "{err:?}");
        assert!(err.to_string().contains("out.txt"), "{err}");
    }

    #[test]
    fn dir_output_copies_files_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.txt");
        fs::write(&src, "content").unwrap();
        let out = dir.path().join("out");
        let mut rec = record(b"");
        rec.id = Some("a/b/c.txt".into());
        rec.location.source = src.display().to_string().into();
        let mut w = DedupWriter::create(Some(&out), Format::Dir, None).unwrap();
        w.write(&rec).unwrap();
        assert!(!out.exists(), "nothing appears before finish");
        w.finish().unwrap();
        assert_eq!(
            fs::read_to_string(out.join("a/b/c.txt")).unwrap(),
            "content"
        );
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "no staging directory left: {names:?}");
    }

    #[test]
    fn dir_output_rules() {
        assert!(matches!(
            DedupWriter::create(None, Format::Dir, None),
            Err(Error::DirNeedsOutput)
        ));
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("x"), "").unwrap();
        assert!(matches!(
            DedupWriter::create(Some(dir.path()), Format::Dir, None),
            Err(Error::OutputDirNotEmpty { .. })
        ));
        assert!(matches!(
            DedupWriter::create(Some(&dir.path().join("x")), Format::Dir, None),
            Err(Error::OutputDirNotEmpty { .. })
        ));
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        let mut w = DedupWriter::create(Some(&empty), Format::Dir, None).unwrap();
        for bad in ["", "../escape", "/abs", "a/../../b"] {
            let mut rec = record(b"");
            rec.id = Some(bad.into());
            assert!(
                matches!(w.write(&rec), Err(Error::UnsafeId { .. })),
                "{bad:?} accepted"
            );
        }
        let mut rec = record(b"");
        rec.id = Some("gone.txt".into());
        rec.location.source = dir.path().join("missing").display().to_string().into();
        assert!(matches!(w.write(&rec), Err(Error::Copy { .. })));
        w.finish().unwrap();
        assert!(empty.is_dir());
    }

    #[test]
    fn several_roots_get_a_subfolder_each() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (root, text) in [("a/docs", "1"), ("b/docs", "2"), ("dB", "3")] {
            let root = dir.path().join(root);
            fs::create_dir_all(root.join("sub")).unwrap();
            fs::write(root.join("sub/x.txt"), text).unwrap();
            files.push((root.clone(), root.join("sub/x.txt")));
        }
        let out = dir.path().join("out");
        let roots: Vec<_> = files.iter().map(|f| f.0.clone()).collect();
        let mut w = DedupWriter::create(Some(&out), Format::Dir, None)
            .unwrap()
            .with_roots(&roots);
        for (_, file) in &files {
            let mut rec = record(b"");
            rec.id = Some("sub/x.txt".into());
            rec.path = Some(file.clone());
            rec.location.source = file.display().to_string().into();
            w.write(&rec).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(fs::read_to_string(out.join("docs/sub/x.txt")).unwrap(), "1");
        assert_eq!(
            fs::read_to_string(out.join("docs-2/sub/x.txt")).unwrap(),
            "2"
        );
        assert_eq!(fs::read_to_string(out.join("dB/sub/x.txt")).unwrap(), "3");
    }

    #[test]
    fn gz_output_is_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.jsonl.gz");
        let mut w = DedupWriter::create(Some(&out), Format::Jsonl, None).unwrap();
        w.write(&record(b"{}\n")).unwrap();
        w.finish().unwrap();
        let reader = crate::open(&out, &crate::ReadOptions::default()).unwrap();
        assert_eq!(reader.count(), 1);
    }

    #[test]
    fn same_file_resolves_paths() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, "").unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(same_file(&a, &dir.path().join("sub/../a")));
        assert!(!same_file(&a, &dir.path().join("b")));
        assert!(!same_file(Path::new("-"), Path::new("-")));
    }

    #[test]
    fn writer_is_send() {
        fn check<T: Send>() {}
        check::<DedupWriter>();
    }
}
