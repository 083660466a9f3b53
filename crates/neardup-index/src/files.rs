//! The index's files on disk: their names, durable writes, and the writer's lock.
//!
//! A commit is durable when the files it names and the new manifest are on disk: each
//! file is written under a temporary name, synced, renamed into place, and the directory
//! synced; the manifest's rename is the moment the commit happens.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{io_at, Error, Result};

/// The manifest: the list of live segments and the parameters.
pub(crate) const MANIFEST: &str = "MANIFEST";
/// A containment index's common tokens ([`crate::common`]).
pub(crate) const COMMON: &str = "COMMON";
/// Held (flock) by the one writer.
pub(crate) const LOCK: &str = "LOCK";
const TMP: &str = ".tmp";
/// The manifest while it is written.
pub(crate) const MANIFEST_TMP: &str = "MANIFEST.tmp";

/// A segment's file name.
pub(crate) fn segment_name(name: u64) -> String {
    format!("{name:08}.seg")
}

/// The deletions of segment `name` as of commit `generation`.
pub(crate) fn deletes_name(name: u64, generation: u64) -> String {
    format!("{name:08}.{generation}.del")
}

/// True for a name the index itself gives a file it may later remove: a segment
/// (`00000012.seg`), a deletion file (`00000012.7.del`), `COMMON`, and any of these or the
/// manifest under its temporary name. The names are matched exactly, not by extension: a
/// writer only ever removes files it could have written, never a user's `notes.tmp`.
pub(crate) fn is_index_file(file_name: &str) -> bool {
    let name = file_name.strip_suffix(TMP).unwrap_or(file_name);
    if name == COMMON || (name == MANIFEST && name.len() < file_name.len()) {
        return true;
    }
    let digits = |s: &str| s.len() >= 8 && s.bytes().all(|b| b.is_ascii_digit());
    let generation = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(stem) = name.strip_suffix(".seg") {
        return digits(stem);
    }
    if let Some(stem) = name.strip_suffix(".del") {
        return stem
            .split_once('.')
            .is_some_and(|(seg, gen)| digits(seg) && generation(gen));
    }
    false
}

/// True for a file an index directory may hold besides the user's: the manifest, the
/// lock, and what [`is_index_file`] names. A directory holding anything else is not an
/// index, and creating one there is refused.
pub(crate) fn belongs_to_index(file_name: &str) -> bool {
    file_name == MANIFEST || file_name == LOCK || is_index_file(file_name)
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
    let written = (|| {
        let mut out = io::BufWriter::with_capacity(1 << 20, &file);
        write(&mut out)?;
        out.flush()?;
        drop(out);
        file.sync_all()?;
        file.metadata().map(|m| m.len())
    })();
    let renamed = written.map_err(io_at(&tmp)).and_then(|bytes| {
        fs::rename(&tmp, &path)
            .map(|()| bytes)
            .map_err(io_at(&path))
    });
    if renamed.is_err() {
        // A full disk stays full while a half-written file sits there: it goes at once,
        // not at the next writer's start.
        let _ = fs::remove_file(&tmp);
    }
    renamed
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
/// in this process or another, waits for it. The holder writes its process id into the
/// lock file, so a writer kept waiting can say whom it waits for.
#[derive(Debug)]
pub(crate) struct WriterLock {
    _file: File,
}

/// How often a writer with a deadline tries the lock again.
const LOCK_POLL: Duration = Duration::from_millis(20);

impl WriterLock {
    /// Takes the lock, waiting for it at most `wait` (`None`: as long as it takes).
    pub(crate) fn acquire(dir: &Path, wait: Option<Duration>) -> Result<WriterLock> {
        let path: PathBuf = dir.join(LOCK);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io_at(&path))?;
        match wait {
            None => lock_exclusive(&file).map_err(io_at(&path))?,
            Some(wait) => {
                let deadline = Instant::now() + wait;
                while !try_lock_exclusive(&file).map_err(io_at(&path))? {
                    if Instant::now() >= deadline {
                        return Err(Error::Locked {
                            path,
                            holder: lock_holder(dir),
                            waited: wait,
                        });
                    }
                    std::thread::sleep(LOCK_POLL);
                }
            }
        }
        // Best effort: the lock holds whether or not its holder could be written down.
        let _ = file
            .set_len(0)
            .and_then(|()| file.write_all(std::process::id().to_string().as_bytes()));
        Ok(WriterLock { _file: file })
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // The next writer must not name a process that is gone (the lock itself goes
        // with the descriptor, however this process ends).
        let _ = self._file.set_len(0);
    }
}

/// The process id the writer holding `dir`'s lock wrote into it, if that process is
/// still running (a writer killed before it could clear the file left its id behind).
pub(crate) fn lock_holder(dir: &Path) -> Option<u32> {
    let pid: u32 = fs::read_to_string(dir.join(LOCK))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    is_running(pid).then_some(pid)
}

#[cfg(unix)]
fn is_running(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    alive || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn is_running(_pid: u32) -> bool {
    true
}

#[cfg(unix)]
fn flock(file: &File, operation: libc::c_int) -> io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: flock on a descriptor this function borrows; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(false),
            _ => return Err(err),
        }
    }
}

#[cfg(unix)]
fn lock_exclusive(file: &File) -> io::Result<()> {
    flock(file, libc::LOCK_EX).map(drop)
}

#[cfg(unix)]
fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    flock(file, libc::LOCK_EX | libc::LOCK_NB)
}

#[cfg(not(unix))]
fn lock_exclusive(file: &File) -> io::Result<()> {
    file.lock()
}

#[cfg(not(unix))]
fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(fs::TryLockError::WouldBlock) => Ok(false),
        Err(fs::TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_names_the_index_gives_are_its_files() {
        for name in [
            "00000001.seg",
            "00000001.seg.tmp",
            "123456789.seg",
            "00000004.17.del",
            "00000004.17.del.tmp",
            "COMMON",
            "COMMON.tmp",
            "MANIFEST.tmp",
        ] {
            assert!(is_index_file(name), "{name}");
        }
        for name in [
            "take1.seg",
            "report.tmp",
            "1.seg",
            "0000001x.seg",
            "00000004.del",
            "00000004..del",
            "notes.del",
            "MANIFEST",
            "LOCK",
            "common",
            ".tmp",
            "00000001.seg.bak",
        ] {
            assert!(!is_index_file(name), "{name}");
        }
        assert!(belongs_to_index("MANIFEST") && belongs_to_index("LOCK"));
        assert!(!belongs_to_index("README.md"));
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_durably(dir.path(), "00000001.seg", |out| {
            out.write_all(b"half")?;
            Err(io::Error::new(io::ErrorKind::StorageFull, "no space"))
        });
        assert!(err.is_err());
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_writer_with_a_deadline_gives_up_and_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let _held = WriterLock::acquire(dir.path(), None).unwrap();
        let err = WriterLock::acquire(dir.path(), Some(Duration::from_millis(50))).unwrap_err();
        match err {
            Error::Locked { holder, .. } => assert_eq!(holder, Some(std::process::id())),
            other => panic!("{other}"),
        }
    }
}
