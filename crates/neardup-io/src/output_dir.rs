//! An output directory built beside its target and moved into place on finish,
//! documented on [`OutputDir`].

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use tempfile::TempDir;

use crate::error::{Error, Result};
use crate::output::{parent_dir, registry, Registered};

/// A directory of outputs (the dedup writer's copies of a directory's files, one output
/// per shard of a folder), built in a temporary directory `.neardup-XXXXXX` beside the
/// target and renamed to it by [`OutputDir::finish`]: until then the target is as it
/// was, and an unfinished one (dropped, or abandoned on a signal through
/// [`abandon_outputs`](crate::abandon_outputs)) leaves nothing behind.
///
/// The target must not exist or be an empty directory, unless it is replaced
/// (`replace`): the new tree is swapped in and the old one deleted only after the swap.
///
/// ```
/// use neardup_io::OutputDir;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let target = dir.path().join("out");
/// let out = OutputDir::create(&target, false)?;
/// std::fs::write(out.file("a/part-0.jsonl".as_ref())?, "{}\n")?;
/// assert!(!target.exists());
/// out.finish()?;
/// assert_eq!(std::fs::read_to_string(target.join("a/part-0.jsonl"))?, "{}\n");
/// # Ok(())
/// # }
/// ```
pub struct OutputDir {
    staging: TempDir,
    registered: Registered,
    path: PathBuf,
    replace: bool,
}

impl OutputDir {
    /// Starts an output directory for `path`, replacing a non-empty one on finish if
    /// `replace` (the caller makes sure it holds no input).
    ///
    /// # Errors
    ///
    /// [`Error::OutputDirNotEmpty`] if `path` exists and is not an empty directory (and
    /// `replace` is off, or it is no directory); [`Error::Write`] naming `path` if the
    /// temporary directory cannot be created.
    pub fn create(path: &Path, replace: bool) -> Result<OutputDir> {
        let err = |error: io::Error| Error::Write {
            path: path.display().to_string(),
            error,
        };
        match fs::symlink_metadata(path) {
            Ok(meta) => {
                let empty =
                    meta.is_dir() && (replace || fs::read_dir(path).map_err(err)?.next().is_none());
                if !empty {
                    return Err(Error::OutputDirNotEmpty {
                        path: path.display().to_string(),
                    });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(err(e)),
        }
        let parent = parent_dir(path);
        fs::create_dir_all(parent).map_err(err)?;
        let mut builder = tempfile::Builder::new();
        builder.prefix(".neardup-");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Like a new directory: 0o777 less the umask.
            builder.permissions(fs::Permissions::from_mode(0o777));
        }
        let mut registry = registry();
        let staging = builder
            .tempdir_in(parent)
            .map_err(|e| err(crate::output::without_temp_path(e)))?;
        let registered = Registered::new_locked(staging.path(), &mut registry);
        Ok(OutputDir {
            staging,
            registered,
            path: path.to_path_buf(),
            replace,
        })
    }

    /// The temporary directory the tree is built in.
    pub(crate) fn staging(&self) -> &Path {
        self.staging.path()
    }

    /// The target directory, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where to write the file that will be `relative` below the target: its place in
    /// the temporary directory, its folders created.
    ///
    /// # Errors
    ///
    /// [`Error::UnsafeId`] if `relative` is not a plain relative path (no `..`, no
    /// root); [`Error::Write`] naming the target's file if its folders cannot be made.
    pub fn file(&self, relative: &Path) -> Result<PathBuf> {
        let plain = relative.components().next().is_some()
            && relative
                .components()
                .all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err(Error::UnsafeId {
                id: relative.display().to_string(),
            });
        }
        let to = self.staging.path().join(relative);
        if let Some(parent) = to.parent() {
            // Under the registry's lock, as the dedup writer's copies are: nothing is
            // created in a staging folder an interrupt is removing.
            let _registry = registry();
            fs::create_dir_all(parent).map_err(|error| Error::Write {
                path: self.path.join(relative).display().to_string(),
                error,
            })?;
        }
        Ok(to)
    }

    /// Moves the tree into place (swapping out a directory it replaces).
    ///
    /// # Errors
    ///
    /// [`Error::Write`] naming the target if the rename fails; the target is then as it
    /// was.
    pub fn finish(self) -> Result<()> {
        let OutputDir {
            staging,
            registered,
            path,
            replace,
        } = self;
        // Under the registry's lock: an interrupt waits for the swap to end.
        let registry = registry();
        let err = |error: io::Error| Error::Write {
            path: path.display().to_string(),
            error,
        };
        let is_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if replace && is_dir {
            // Swap, then delete the old tree: a failure before the swap keeps it.
            let old = tempfile::Builder::new()
                .prefix(".neardup-old-")
                .tempdir_in(parent_dir(&path))
                .map_err(err)?;
            let aside = old.path().join("old");
            fs::rename(&path, &aside).map_err(err)?;
            if let Err(e) = fs::rename(staging.path(), &path) {
                let _ = fs::rename(&aside, &path);
                return Err(err(e));
            }
            let _ = staging.keep();
            registered.forget_locked(registry);
            return old.close().map_err(err);
        }
        if is_dir {
            // Checked empty at creation; `remove_dir` fails if that changed.
            fs::remove_dir(&path).map_err(err)?;
        }
        fs::rename(staging.path(), &path).map_err(err)?;
        let _ = staging.keep();
        registered.forget_locked(registry);
        Ok(())
    }
}

impl std::fmt::Debug for OutputDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputDir")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}
