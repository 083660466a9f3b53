//! Folders of shards: a directory whose files are each an input of records (`.jsonl.zst`
//! shards of the Pile, Parquet shards of FineWeb), rather than each a document.

use std::path::{Path, PathBuf};

use crate::{Excluded, Format, ReadOptions};

use super::error::DocumentsError;

/// A folder read as shards: every file its own input, in its own format.
#[derive(Clone, Debug)]
pub struct Shards {
    /// The files, in sorted path order (the order a directory's files are read in).
    pub files: Vec<PathBuf>,
    /// Entries of the folder left out (hidden, not matched by the globs), by reason.
    pub excluded: Vec<(Excluded, u64)>,
}

/// True for a file name that names a format of records, not of one document per file:
/// JSONL, CSV, TSV or Parquet, optionally compressed (`.txt` names plain text, which a
/// folder of holds documents).
fn names_records(path: &Path) -> bool {
    Format::from_extension(path).is_some_and(|f| f != Format::Lines)
}

/// Whether the directory `dir` is read as shards, and its shards if so; `None` when it is
/// read as [`Format::Dir`] (each file one document).
///
/// It is read as shards when `opts.format` names a format of records (JSONL, CSV, TSV,
/// lines, Parquet), or, without a format, when every regular file that is not hidden and
/// that the globs select has a record extension other than `.txt`/`.text` (`.jsonl`,
/// `.ndjson`, `.json`, `.csv`, `.tsv`, `.tab`, `.parquet`, `.pq`, each optionally with
/// `.gz` or `.zst`) and there is at least one. [`Format::Dir`] forces one document per file.
///
/// # Errors
///
/// The walk's errors (an unreadable folder, a bad glob), and
/// [`DocumentsError::BadRecord`] for an entry of a folder of shards that is no regular
/// file (a link not followed, a FIFO, an entry that cannot be read): no shard is left
/// out unsaid.
pub fn shards(dir: &Path, opts: &ReadOptions) -> Result<Option<Shards>, DocumentsError> {
    if opts.format == Some(Format::Dir) {
        return Ok(None);
    }
    let listing = crate::dir::list(dir, opts)?;
    let as_shards = match opts.format {
        Some(_) => true,
        None => !listing.files.is_empty() && listing.files.iter().all(|f| names_records(f)),
    };
    if !as_shards {
        return Ok(None);
    }
    if let Some((path, reason)) = listing.skipped.first() {
        return Err(DocumentsError::BadRecord(format!(
            "{}: {reason}, in the folder of shards {} (each shard is a regular file; \
             --glob can leave the others out)",
            path.display(),
            dir.display()
        )));
    }
    Ok(Some(Shards {
        files: listing.files,
        excluded: listing.excluded,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(shards: &Shards, dir: &Path) -> Vec<String> {
        shards
            .files
            .iter()
            .map(|f| f.strip_prefix(dir).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn a_folder_of_record_files_is_shards_in_sorted_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("b")).unwrap();
        for name in [
            "b/2.jsonl.zst",
            "a.parquet",
            "b/1.jsonl.gz",
            "c.CSV",
            ".hidden.txt",
        ] {
            fs::write(root.join(name), "").unwrap();
        }
        let opts = ReadOptions::default();
        let found = shards(root, &opts).unwrap().unwrap();
        assert_eq!(
            names(&found, root),
            ["a.parquet", "b/1.jsonl.gz", "b/2.jsonl.zst", "c.CSV"]
        );
        assert_eq!(found.excluded, [(Excluded::Hidden, 1)]);
        // A glob selects; --format dir reads one document per file.
        let jsonl = opts.clone().with_glob("*.jsonl.*");
        assert_eq!(
            names(&shards(root, &jsonl).unwrap().unwrap(), root),
            ["b/1.jsonl.gz", "b/2.jsonl.zst"]
        );
        assert!(shards(root, &opts.clone().with_format(Format::Dir))
            .unwrap()
            .is_none());
        // A text file among them: a folder of documents, as before.
        fs::write(root.join("notes.txt"), "").unwrap();
        assert!(shards(root, &opts).unwrap().is_none());
        // Unless a format of records is named.
        let named = shards(root, &opts.clone().with_format(Format::Jsonl)).unwrap();
        assert_eq!(named.unwrap().files.len(), 5);
    }

    #[test]
    fn an_empty_folder_is_a_folder_of_documents() {
        let dir = tempfile::tempdir().unwrap();
        assert!(shards(dir.path(), &ReadOptions::default())
            .unwrap()
            .is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_among_shards_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("a.jsonl"), "").unwrap();
        std::os::unix::fs::symlink(root.join("a.jsonl"), root.join("b.jsonl")).unwrap();
        let err = shards(root, &ReadOptions::default()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("b.jsonl: symbolic link"), "{msg}");
        let follow = ReadOptions::default().with_follow_links(true);
        assert_eq!(shards(root, &follow).unwrap().unwrap().files.len(), 2);
    }
}
