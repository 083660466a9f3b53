//! The index's files on disk: their names, durable writes, and the writer's lock.
//!
//! A commit is durable when the files it names and the new manifest are on disk: each
//! file is written under a temporary name, synced, renamed into place, and the directory
//! synced; the manifest's rename is the moment the commit happens.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{io_at, Result};

/// The manifest: the list of live segments and the parameters.
pub(crate) const MANIFEST: &str = "MANIFEST";
/// A containment index's common tokens ([`crate::common`]).
pub(crate) const COMMON: &str = "COMMON";
/// Held (flock) by the one writer.
pub(crate) const LOCK: &str = "LOCK";
const TMP: &str = ".tmp";

/// A segment's file name.
pub(crate) fn segment_name(name: u64) -> String {
    format!("{name:08}.seg")
}

/// The deletions of segment `name` as of commit `generation`.
pub(crate) fn deletes_name(name: u64, generation: u64) -> String {
    format!("{name:08}.{generation}.del")
}

/// True for a file the index writes (the ones a writer may clean up when no manifest
/// names them).
pub(crate) fn is_index_file(file_name: &str) -> bool {
    file_name.ends_with(".seg")
        || file_name.ends_with(".del")
        || file_name.ends_with(TMP)
        || file_name == COMMON
}

/// Writes a file durably: under a temporary name, synced, then renamed into place. The
/// directory is synced by the caller once per commit ([`sync_dir`]).
pub(crate) fn write_durably(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&mut io::BufWriter<&File>) -> io::Result<()>,
) -> Result<u64> {
    let path = dir.join(name);
    let tmp = dir.join(format!("{name}{TMP}"));
    let file = File::create(&tmp).map_err(io_at(&tmp))?;
    let mut out = io::BufWriter::with_capacity(1 << 20, &file);
    write(&mut out).map_err(io_at(&tmp))?;
    out.flush().map_err(io_at(&tmp))?;
    drop(out);
    file.sync_all().map_err(io_at(&tmp))?;
    let bytes = file.metadata().map_err(io_at(&tmp))?.len();
    fs::rename(&tmp, &path).map_err(io_at(&path))?;
    Ok(bytes)
}

/// Syncs the directory, so the renames in it survive a crash.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

/// Removes files, ignoring those already gone (a reader never needs a file the current
/// manifest does not name; one that mapped it keeps its pages).
pub(crate) fn remove_files(dir: &Path, names: impl IntoIterator<Item = String>) {
    for name in names {
        let _ = fs::remove_file(dir.join(name));
    }
}

/// The writer's exclusive lock on an index directory, held until dropped. Another writer,
/// in this process or another, waits for it.
#[derive(Debug)]
pub(crate) struct WriterLock {
    _file: File,
}

impl WriterLock {
    pub(crate) fn acquire(dir: &Path) -> Result<WriterLock> {
        let path: PathBuf = dir.join(LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_at(&path))?;
        lock_exclusive(&file).map_err(io_at(&path))?;
        Ok(WriterLock { _file: file })
    }
}

#[cfg(unix)]
fn lock_exclusive(file: &File) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: flock on a descriptor this function borrows; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

#[cfg(not(unix))]
fn lock_exclusive(file: &File) -> io::Result<()> {
    file.lock()
}
