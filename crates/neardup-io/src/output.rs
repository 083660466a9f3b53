//! One checked way to open an output path, documented on [`OutputFile`].

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use flate2::write::GzEncoder;
use tempfile::NamedTempFile;
use zstd::stream::write::Encoder as ZstdEncoder;

use crate::error::{Error, Result};
use crate::open::{is_gzip_name, is_zstd_name};
use crate::output_thread::Handoff;

/// Buffer size of an output.
const BUF_SIZE: usize = 256 * 1024;

/// How [`OutputFile::create`] treats a path.
#[derive(Clone, Debug, Default)]
pub struct OutputOptions {
    inputs: Vec<PathBuf>,
    gzip: Option<bool>,
    /// What errors call the output, when not its path (a file built in a staging folder).
    shown_as: Option<String>,
    pub(crate) replace_directory: bool,
}

impl OutputOptions {
    /// Default options: no inputs to protect, gzip by name.
    pub fn new() -> Self {
        Self::default()
    }

    /// Refuses to write over any of `inputs` ([`Error::OutputIsInput`]), compared by
    /// device and inode after following links, so another name for an input is caught
    /// too. `-` and paths that do not exist are ignored.
    pub fn refuse_inputs<P: AsRef<Path>>(mut self, inputs: impl IntoIterator<Item = P>) -> Self {
        self.inputs
            .extend(inputs.into_iter().map(|p| p.as_ref().to_path_buf()));
        self
    }

    /// Compresses with gzip (`true`) or not (`false`) whatever the name; by default a
    /// name ending in `.gz` is gzip-compressed and one ending in `.zst` zstd-compressed.
    pub fn gzip(mut self, gzip: bool) -> Self {
        self.gzip = Some(gzip);
        self
    }

    /// Errors name the output `name` instead of its path: for a file written inside an
    /// [`OutputDir`](crate::OutputDir)'s temporary folder, its place in the target.
    pub fn shown_as(mut self, name: impl Into<String>) -> Self {
        self.shown_as = Some(name.into());
        self
    }

    /// For the dedup writer's dir format only: an existing output directory, empty or
    /// not, is replaced on finish (see
    /// [`DedupWriter::create_replacing`](crate::DedupWriter::create_replacing)).
    pub fn replace_directory(mut self, replace: bool) -> Self {
        self.replace_directory = replace;
        self
    }
}

/// What an [`OutputFile`] writes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// Standard output.
    Stdout,
    /// A character device or a FIFO, written in place.
    Direct,
    /// A regular file, written through a temporary file and renamed on finish.
    Atomic,
}

/// An open output: a [`Write`] that must be [`finish`](OutputFile::finish)ed.
///
/// ```
/// use neardup_io::{OutputFile, OutputOptions};
/// use std::io::Write;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("pairs.jsonl.gz");
/// let mut out = OutputFile::create(&path, &OutputOptions::new())?;
/// out.write_all(b"{\"a\":1,\"b\":2}\n")?;
/// assert!(!path.exists(), "nothing appears before finish");
/// out.finish()?;
/// let mut text = String::new();
/// std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(&path)?), &mut text)?;
/// assert_eq!(text, "{\"a\":1,\"b\":2}\n");
/// # Ok(())
/// # }
/// ```
///
/// One checked way to open an output path: [`OutputFile::create`].
///
/// What happens depends on what the path names (links followed, see below):
///
/// | target | what is written |
/// |---|---|
/// | `-` | standard output, directly |
/// | a character device (`/dev/null`, a terminal) or a FIFO | the device or pipe, directly: no temporary file, no rename, the special file stays what it is |
/// | a regular file, or nothing yet | a temporary file `.neardup-XXXXXX.tmp` beside the target, renamed over it by [`OutputFile::finish`]; until then the old file is untouched, and a dropped (unfinished) output removes its temporary file |
/// | a symbolic link | followed: the file it points to is treated as above (a regular file is replaced atomically *at the link's target*, the link stays a link); a dangling link is [`Error::DanglingSymlink`] |
/// | a directory | [`Error::OutputIsDirectory`] |
/// | a socket, a block device | [`Error::UnsupportedOutput`] |
/// | the same file as an input (device and inode, whatever the name) | [`Error::OutputIsInput`] |
///
/// A name ending in `.gz` (any case) is gzip-compressed, one ending in `.zst` is
/// zstd-compressed (one frame, level 3, zstd's default); the rest of the rules are the same.
/// Errors name the target as given, never the temporary file.
///
/// # Interrupts
///
/// Temporary files and directories of unfinished outputs (these and the dedup writer's)
/// are listed in a process-wide registry. A program that exits on a signal without
/// unwinding calls [`abandon_outputs`] first, which deletes them; the `neardup` binary
/// does so on SIGINT and SIGTERM.
pub struct OutputFile {
    /// The path as given (`-` for standard output): what errors name.
    name: String,
    kind: OutputKind,
    out: Out,
    /// For [`OutputKind::Atomic`]: the file to replace (links resolved) and the
    /// temporary file's registration.
    target: Option<(PathBuf, Registered)>,
}

/// Where the bytes go: the sink on the caller's thread (standard output, where a reader
/// may wait for each flushed line) or on a thread of its own (files).
enum Out {
    Here(Sink),
    Thread(Handoff<Sink>),
}

/// The byte sink, compressed or not.
enum Sink {
    Plain(BufWriter<Inner>),
    Gzip(Box<GzEncoder<BufWriter<Inner>>>),
    Zstd(Box<ZstdEncoder<'static, BufWriter<Inner>>>),
}

/// How an output's bytes are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Codec {
    None,
    Gzip,
    Zstd,
}

impl Codec {
    /// By name unless `gzip` says otherwise: `.gz` gzip, `.zst` zstd (any case).
    fn of(path: &Path, gzip: Option<bool>) -> Codec {
        match gzip {
            Some(true) => Codec::Gzip,
            Some(false) => Codec::None,
            None if is_gzip_name(path) => Codec::Gzip,
            None if is_zstd_name(path) => Codec::Zstd,
            None => Codec::None,
        }
    }
}

enum Inner {
    Stdout(io::Stdout),
    File(File),
    Temp(NamedTempFile),
}

impl Write for Inner {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Inner::Stdout(o) => o.write(buf),
            Inner::File(f) => f.write(buf),
            Inner::Temp(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Inner::Stdout(o) => o.flush(),
            Inner::File(f) => f.flush(),
            Inner::Temp(t) => t.flush(),
        }
    }
}

impl OutputFile {
    /// Opens `path` (`-` for standard output) by the rules of [`OutputFile`].
    ///
    /// # Errors
    ///
    /// [`Error::OutputIsInput`], [`Error::OutputIsDirectory`], [`Error::DanglingSymlink`],
    /// [`Error::UnsupportedOutput`] for the refusals; [`Error::Write`] naming `path` if
    /// the file or its temporary file cannot be created.
    pub fn create(path: &Path, options: &OutputOptions) -> Result<OutputFile> {
        let name = (options.shown_as.clone()).unwrap_or_else(|| path.display().to_string());
        let codec = Codec::of(path, options.gzip);
        if path == Path::new("-") {
            return OutputFile::new(
                name,
                OutputKind::Stdout,
                Inner::Stdout(io::stdout()),
                codec,
                None,
            );
        }
        let err = |error: io::Error| Error::Write {
            path: name.clone(),
            error,
        };
        check_not_input(path, &options.inputs)?;
        let meta = match fs::metadata(path) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(Error::DanglingSymlink { path: name });
                }
                None
            }
            Err(e) => return Err(err(e)),
        };
        if let Some(meta) = &meta {
            let kind = special_kind(meta);
            if meta.is_dir() {
                return Err(Error::OutputIsDirectory { path: name });
            }
            if let Some(kind) = kind {
                if kind == "direct" {
                    let file = OpenOptions::new().write(true).open(path).map_err(err)?;
                    return OutputFile::new(
                        name,
                        OutputKind::Direct,
                        Inner::File(file),
                        codec,
                        None,
                    );
                }
                return Err(Error::UnsupportedOutput { path: name, kind });
            }
        }
        // A regular file or a new one: replace the link's target, not the link.
        let target = if meta.is_some() {
            fs::canonicalize(path).map_err(err)?
        } else {
            path.to_path_buf()
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".neardup-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Like a new file: 0o666 less the umask.
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        let (file, registered) = {
            let mut registry = registry();
            let file = builder
                .tempfile_in(parent_dir(&target))
                .map_err(|e| err(without_temp_path(e)))?;
            let registered = Registered::new_locked(file.path(), &mut registry);
            (file, registered)
        };
        if let Some(meta) = &meta {
            fs::set_permissions(file.path(), meta.permissions()).map_err(err)?;
        }
        OutputFile::new(
            name,
            OutputKind::Atomic,
            Inner::Temp(file),
            codec,
            Some((target, registered)),
        )
    }

    fn new(
        name: String,
        kind: OutputKind,
        inner: Inner,
        codec: Codec,
        target: Option<(PathBuf, Registered)>,
    ) -> Result<OutputFile> {
        let buffered = BufWriter::with_capacity(BUF_SIZE, inner);
        let sink = match codec {
            Codec::None => Sink::Plain(buffered),
            Codec::Gzip => Sink::Gzip(Box::new(GzEncoder::new(
                buffered,
                flate2::Compression::default(),
            ))),
            Codec::Zstd => match ZstdEncoder::new(buffered, zstd::DEFAULT_COMPRESSION_LEVEL) {
                Ok(encoder) => Sink::Zstd(Box::new(encoder)),
                Err(error) => return Err(Error::Write { path: name, error }),
            },
        };
        let out = if kind == OutputKind::Stdout {
            Out::Here(sink)
        } else {
            match Handoff::new(sink) {
                Ok(handoff) => Out::Thread(handoff),
                Err(error) => return Err(Error::Write { path: name, error }),
            }
        };
        Ok(OutputFile {
            name,
            kind,
            out,
            target,
        })
    }

    /// What is being written to.
    pub fn kind(&self) -> OutputKind {
        self.kind
    }

    /// The path as given, as errors name it (`-` for standard output).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Turns an I/O error of this output into the crate's error, naming the target
    /// ([`Error::BrokenPipe`] for a closed standard output).
    pub fn error(&self, error: io::Error) -> Error {
        if self.kind == OutputKind::Stdout && error.kind() == io::ErrorKind::BrokenPipe {
            Error::BrokenPipe
        } else {
            Error::Write {
                path: self.name.clone(),
                error,
            }
        }
    }

    /// Ends the gzip or zstd stream, flushes, and for a regular file renames the temporary
    /// file over the target.
    ///
    /// # Errors
    ///
    /// [`Error::Write`] naming the target (or [`Error::BrokenPipe`]); the target is
    /// then as it was and the temporary file is removed.
    pub fn finish(self) -> Result<()> {
        let OutputFile {
            name,
            kind,
            out,
            target,
        } = self;
        let err = |error: io::Error| {
            if kind == OutputKind::Stdout && error.kind() == io::ErrorKind::BrokenPipe {
                Error::BrokenPipe
            } else {
                Error::Write {
                    path: name.clone(),
                    error,
                }
            }
        };
        let sink = match out {
            Out::Here(sink) => sink,
            Out::Thread(handoff) => handoff.finish().map_err(err)?,
        };
        let buffered = match sink {
            Sink::Plain(b) => b,
            Sink::Gzip(g) => g.finish().map_err(err)?,
            Sink::Zstd(z) => z.finish().map_err(err)?,
        };
        let inner = buffered.into_inner().map_err(|e| err(e.into_error()))?;
        match (inner, target) {
            (Inner::Temp(file), Some((target, registered))) => {
                // Under the registry's lock: an interrupt removes the temporary file
                // either before the rename or not at all.
                let _registry = registry();
                file.persist(&target).map_err(|e| err(e.error))?;
                registered.forget_locked(_registry);
                Ok(())
            }
            (Inner::Stdout(mut o), _) => o.flush().map_err(err),
            (Inner::File(mut f), _) => f.flush().map_err(err),
            (Inner::Temp(_), None) => Ok(()),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Plain(o) => o.write(buf),
            Sink::Gzip(o) => o.write(buf),
            Sink::Zstd(o) => o.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(o) => o.write_all(buf),
            Sink::Gzip(o) => o.write_all(buf),
            Sink::Zstd(o) => o.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(o) => o.flush(),
            Sink::Gzip(o) => o.flush(),
            Sink::Zstd(o) => o.flush(),
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.out {
            Out::Here(o) => o.write(buf),
            Out::Thread(o) => o.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.out {
            Out::Here(o) => o.write_all(buf),
            Out::Thread(o) => o.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Out::Here(o) => o.flush(),
            Out::Thread(o) => o.flush(),
        }
    }
}

impl std::fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputFile")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// The error of creating a temporary file without the temporary file's name, which
/// `tempfile` adds: messages name the target only.
pub(crate) fn without_temp_path(error: io::Error) -> io::Error {
    let message = error.to_string();
    match message.rfind(" at path \"") {
        Some(i) => io::Error::new(error.kind(), &message[..i]),
        None => error,
    }
}

/// `Some("direct")` for a character device or FIFO, `Some(kind)` for another special
/// file, `None` for a regular file or directory.
fn special_kind(meta: &fs::Metadata) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_char_device() || t.is_fifo() {
            return Some("direct");
        }
        if t.is_socket() {
            return Some("socket");
        }
        if t.is_block_device() {
            return Some("block device");
        }
    }
    if meta.is_file() || meta.is_dir() {
        None
    } else {
        Some("special file")
    }
}

/// [`Error::OutputIsInput`] if `path` is one of `inputs` by device and inode.
pub(crate) fn check_not_input(path: &Path, inputs: &[PathBuf]) -> Result<()> {
    for input in inputs.iter().filter(|p| *p != Path::new("-")) {
        if same_file(path, input) {
            return Err(Error::OutputIsInput {
                path: path.display().to_string(),
                input: input.display().to_string(),
            });
        }
    }
    Ok(())
}

/// True if `a` and `b` are the same existing file: the same device and inode after
/// following links (on Unix; elsewhere the same canonical path). False if either does
/// not exist or is `-`.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if a == Path::new("-") || b == Path::new("-") {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(a), fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The directory a path lives in (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Temporary files and directories of outputs not yet finished.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

pub(crate) fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A temporary path in the registry; dropping it takes the path out (the temporary
/// file or directory itself is removed by its own owner).
#[derive(Debug)]
pub(crate) struct Registered(PathBuf);

impl Registered {
    /// Registers `path`, given the registry's lock.
    pub(crate) fn new_locked(path: &Path, registry: &mut Vec<PathBuf>) -> Registered {
        registry.push(path.to_path_buf());
        Registered(path.to_path_buf())
    }

    /// Takes the path out while the caller holds the lock.
    pub(crate) fn forget_locked(self, mut registry: MutexGuard<'_, Vec<PathBuf>>) {
        remove_entry(&mut registry, &self.0);
        std::mem::forget(self);
    }
}

fn remove_entry(registry: &mut Vec<PathBuf>, path: &Path) {
    if let Some(i) = registry.iter().rposition(|p| p == path) {
        registry.swap_remove(i);
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        remove_entry(&mut registry(), &self.0);
    }
}

/// Deletes the temporary files and directories of every output not yet finished, and
/// keeps any output from being created or finished afterwards (those calls block): for a
/// signal handler's thread that is about to end the process with
/// [`std::process::exit`], which runs no destructors. An output being renamed into place
/// when this is called finishes first, so a target is either the old one or the new one.
pub fn abandon_outputs() {
    let registry = registry();
    for path in registry.iter() {
        if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            let _ = fs::remove_dir_all(path);
        } else {
            let _ = fs::remove_file(path);
        }
    }
    // Held until the process ends.
    std::mem::forget(registry);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn regular_file_is_replaced_on_finish_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        fs::write(&path, "old").unwrap();
        let mut out = OutputFile::create(&path, &OutputOptions::new()).unwrap();
        assert_eq!(out.kind(), OutputKind::Atomic);
        out.write_all(b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"old");
        drop(out);
        assert_eq!(names(dir.path()), ["out.txt"]);
        let mut out = OutputFile::create(&path, &OutputOptions::new()).unwrap();
        out.write_all(b"new").unwrap();
        out.finish().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["out.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_is_followed_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        let mut out = OutputFile::create(&link, &OutputOptions::new()).unwrap();
        out.write_all(b"new").unwrap();
        out.finish().unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("nowhere", &dangling).unwrap();
        let e = OutputFile::create(&dangling, &OutputOptions::new()).unwrap_err();
        assert!(matches!(e, Error::DanglingSymlink { .. }), "{e:?}");
        assert!(e.to_string().contains("dangling"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_written_in_place() {
        let out = OutputFile::create(Path::new("/dev/null"), &OutputOptions::new()).unwrap();
        assert_eq!(out.kind(), OutputKind::Direct);
        out.finish().unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn refusals() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.txt");
        fs::write(&input, "x").unwrap();
        let e = OutputFile::create(dir.path(), &OutputOptions::new()).unwrap_err();
        assert!(matches!(e, Error::OutputIsDirectory { .. }), "{e:?}");
        let opts = OutputOptions::new().refuse_inputs([&input]);
        let e = OutputFile::create(&dir.path().join("./in.txt"), &opts).unwrap_err();
        assert!(matches!(e, Error::OutputIsInput { .. }), "{e:?}");
        #[cfg(unix)]
        {
            let hard = dir.path().join("hard.txt");
            fs::hard_link(&input, &hard).unwrap();
            let e = OutputFile::create(&hard, &opts).unwrap_err();
            assert!(matches!(e, Error::OutputIsInput { .. }), "{e:?}");
        }
        let e = OutputFile::create(&dir.path().join("no/such/out.txt"), &opts).unwrap_err();
        assert!(matches!(e, Error::Write { .. }), "{e:?}");
        assert!(e.to_string().contains("out.txt"), "{e}");
        assert!(!e.to_string().contains(".neardup-"), "{e}");
    }

    #[test]
    fn gz_names_are_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.JSONL.GZ");
        let mut out = OutputFile::create(&path, &OutputOptions::new()).unwrap();
        out.write_all(b"hello\n").unwrap();
        out.finish().unwrap();
        let bytes = fs::read(&path).unwrap();
        assert_eq!(&bytes[..2], [0x1f, 0x8b]);
        let path = dir.path().join("plain.gz");
        let mut out = OutputFile::create(&path, &OutputOptions::new().gzip(false)).unwrap();
        out.write_all(b"hello\n").unwrap();
        out.finish().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"hello\n");
    }

    #[test]
    fn errors_name_the_output_as_shown() {
        let dir = tempfile::tempdir().unwrap();
        let staged = dir.path().join("no/such/.neardup-x/a.jsonl");
        let options = OutputOptions::new().shown_as("out/a.jsonl");
        let e = OutputFile::create(&staged, &options).unwrap_err();
        assert!(e.to_string().starts_with("out/a.jsonl"), "{e}");
        assert!(!e.to_string().contains(".neardup-"), "{e}");
    }

    #[test]
    fn zst_names_are_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.JSONL.ZST");
        let text = b"{\"text\":\"hello\"}\n".repeat(1000);
        let mut out = OutputFile::create(&path, &OutputOptions::new()).unwrap();
        out.write_all(&text).unwrap();
        out.finish().unwrap();
        let bytes = fs::read(&path).unwrap();
        assert_eq!(
            &bytes[..4],
            [0x28, 0xb5, 0x2f, 0xfd],
            "the zstd magic number"
        );
        assert!(bytes.len() < text.len() / 10, "{} bytes", bytes.len());
        assert_eq!(zstd::decode_all(&bytes[..]).unwrap(), text);
        // An empty output is still one whole frame, as `zstd` writes for an empty file.
        let path = dir.path().join("empty.zst");
        OutputFile::create(&path, &OutputOptions::new())
            .unwrap()
            .finish()
            .unwrap();
        assert!(zstd::decode_all(&fs::read(&path).unwrap()[..])
            .unwrap()
            .is_empty());
        let path = dir.path().join("plain.zst");
        let mut out = OutputFile::create(&path, &OutputOptions::new().gzip(false)).unwrap();
        out.write_all(b"hello\n").unwrap();
        out.finish().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"hello\n");
    }

    #[test]
    fn abandoned_temporaries_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let out = OutputFile::create(&path, &OutputOptions::new()).unwrap();
        let temp = match &out.target {
            Some((_, Registered(p))) => p.clone(),
            None => unreachable!(),
        };
        assert!(registry().contains(&temp));
        drop(out);
        assert!(!registry().contains(&temp));
    }
}
