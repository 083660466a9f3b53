//! dedup's output as one file per input under `-o DIR`: for folders of shards (each
//! shard at its path below the folder, in its own format and compression) and for
//! several Parquet files; and dedup's Parquet output as a whole.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use neardup::Clusters;
use neardup_io::documents::{skipped_by_pipeline, Documents, InputInfo};
use neardup_io::{DedupWriter, Format, OutputDir, OutputOptions};

use crate::errors::usage;
use crate::settings::RunSettings;

/// Where dedup writes its survivors.
#[derive(Debug, PartialEq, Eq)]
pub enum Layout<'a> {
    /// One output, as ever (the lines formats, a directory's files), or one Parquet file.
    One,
    /// One output per input, at its relative path below this directory.
    PerInput(&'a Path),
}

/// The layout of `inputs` (the reference left out) to `output`: one file per input when
/// an input is a shard of a folder or there are several Parquet files, unless the output
/// is named as a file of records (`-o all.jsonl.zst`, `-o kept.parquet`); one output
/// otherwise.
pub fn layout<'a>(inputs: &[InputInfo], output: Option<&'a Path>) -> Layout<'a> {
    let Some(dir) = output.filter(|p| *p != Path::new("-")) else {
        return Layout::One;
    };
    if inputs.iter().any(|i| i.format == Format::Dir) {
        return Layout::One;
    }
    if Format::from_extension(dir).is_some() {
        return Layout::One;
    }
    let shards = inputs.iter().any(|i| i.root.is_some());
    let parquet_files = inputs.len() > 1 && inputs.iter().all(|i| i.format == Format::Parquet);
    if shards || parquet_files {
        Layout::PerInput(dir)
    } else {
        Layout::One
    }
}

/// [`layout`] before reading, on the inputs' files (a folder of shards expanded) and
/// their formats: true when each will be written to its own output below `-o DIR`.
pub fn written_apart(files: &[(&Path, Format)], shards: bool, output: Option<&Path>) -> bool {
    let Some(dir) = output.filter(|p| *p != Path::new("-")) else {
        return false;
    };
    if Format::from_extension(dir).is_some() || files.iter().any(|(_, f)| *f == Format::Dir) {
        return false;
    }
    shards || (files.len() > 1 && files.iter().all(|(_, f)| *f == Format::Parquet))
}

/// Each input's path below the output directory: a shard's path below its folder (under
/// a subfolder per folder when there are several, named as the dir format names them),
/// a file given directly by its name.
///
/// # Errors
///
/// A usage error when two inputs would be written to the same path.
pub fn relative_paths(inputs: &[InputInfo]) -> Result<Vec<PathBuf>> {
    let mut roots: Vec<&Path> = Vec::new();
    for root in inputs.iter().filter_map(|i| i.root.as_deref()) {
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    let folders = neardup_io::root_folders(&roots);
    let mut taken: HashMap<PathBuf, &Path> = HashMap::new();
    let mut paths = Vec::with_capacity(inputs.len());
    for input in inputs {
        let path = match input.root.as_deref() {
            Some(root) if roots.len() > 1 => {
                let i = roots.iter().position(|r| *r == root).unwrap_or(0);
                folders[i].join(&input.relative)
            }
            _ => input.relative.clone(),
        };
        if let Some(other) = taken.insert(path.clone(), &input.path) {
            usage!(
                "dedup writes one output per input under -o DIR, but {} and {} would both be {}; \
                 deduplicate them apart or give them different names",
                other.display(),
                input.path.display(),
                path.display()
            );
        }
        paths.push(path);
    }
    Ok(paths)
}

/// Writes the survivors of every input (the reference left out) to its own file below
/// `dir`; `is_kept` says which documents survive. Returns the records written.
pub fn write(
    docs: &Documents,
    is_kept: &dyn Fn(u32) -> bool,
    args: &RunSettings,
    dir: &Path,
) -> Result<u64> {
    let first = docs.reference_inputs();
    let inputs = &docs.inputs[first..];
    let relative = relative_paths(inputs)?;
    let out = match OutputDir::create(dir, args.force) {
        Err(neardup_io::Error::OutputDirNotEmpty { path }) => usage!(
            "output directory {path} exists and is not empty; --force replaces it, or name a new directory"
        ),
        other => other?,
    };
    let mut raw = docs.raw_reader()?;
    let mut written = 0;
    for (i, rel) in relative.iter().enumerate() {
        let input = first + i;
        let info = &docs.inputs[input];
        let path = out.file(rel)?;
        // Errors name the file where it will be, not in the folder being built.
        let options = OutputOptions::new().shown_as(dir.join(rel).display().to_string());
        if info.format == Format::Parquet {
            let options = options.gzip(false);
            written +=
                crate::parquet_output::write_input(docs, input, is_kept, &path, &options, args)?;
            continue;
        }
        // Compressed as its name says: a .jsonl.zst shard stays zstd, a .jsonl.gz gzip.
        let mut writer = DedupWriter::create_with_options(
            Some(&path),
            info.format,
            info.header.as_deref(),
            &options,
        )?;
        for doc in docs.input_docs(input) {
            if is_kept(doc) {
                writer.write(&*docs.record(doc, &mut raw)?)?;
            }
        }
        written += writer.written();
        writer.finish()?;
    }
    out.finish()?;
    Ok(written)
}

/// Where the records of each input (the reference left out) went, as summary lines
/// `SOURCE: read R = kept K + removed D + skipped S`, in input order. Each input's
/// numbers add up, and their sums are the run's.
pub fn accounts(
    docs: &Documents,
    clusters: &Clusters,
    has_shingles: &dyn Fn(u32) -> bool,
) -> Vec<String> {
    use crate::summary::thousands;
    (docs.reference_inputs()..docs.inputs.len())
        .map(|input| {
            let (mut kept, mut removed, mut skipped) = (0u64, 0u64, docs.input_skipped(input));
            for doc in docs.input_docs(input) {
                if clusters.duplicate_of(doc).is_some() {
                    removed += 1;
                } else if skipped_by_pipeline(has_shingles, doc).is_some() {
                    skipped += 1;
                } else {
                    kept += 1;
                }
            }
            format!(
                "{}: read {} = kept {} + removed {} + skipped {}",
                docs.inputs[input].source,
                thousands(kept + removed + skipped),
                thousands(kept),
                thousands(removed),
                thousands(skipped)
            )
        })
        .collect()
}
