//! dedup's output: the inputs' shape it can be written in (refused before reading where
//! the shape is known without reading, after reading where only the content told it),
//! the surviving records, and `--removed`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use neardup::Clusters;
use neardup_io::documents::{known_format, skipped_by_pipeline, DocId, Documents};
use neardup_io::{DedupWriter, Format};

use crate::errors::usage;
use crate::output::{finish, open_output};
use crate::per_input::Layout;
use crate::settings::RunSettings;

/// An input as far as dedup's one output cares: its format and, when known, its header.
struct Shape<'a> {
    path: &'a Path,
    format: Format,
    /// CSV/TSV: the header line; `None` when not known (not read yet).
    header: Option<Option<&'a [u8]>>,
}

/// Refuses, before any record is read, a dedup whose output cannot be written: inputs of
/// different formats (of those known from `--format`, a directory or an extension) or
/// CSV/TSV files with different header lines (each regular file's first line, read
/// alone), a directory without `-o DIR`, and an output named for another format than
/// the input's. A folder of shards stands for its files. Inputs whose format only their
/// content tells are checked after reading ([`refuse_after_reading`]); inputs written
/// one output each (`-o DIR`) need no shape in common.
pub fn refuse_before_reading(args: &RunSettings) -> Result<()> {
    let opts = args.input.read_options();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut shards = false;
    for path in &args.input.inputs {
        match path
            .is_dir()
            .then(|| neardup_io::documents::shards(path, &opts))
        {
            Some(Ok(Some(folder))) => {
                shards = true;
                files.extend(folder.files);
            }
            // Not shards, or a folder reading will report on.
            _ => files.push(path.clone()),
        }
    }
    let headers: Vec<(&Path, Format, Option<Vec<u8>>)> = files
        .iter()
        .filter_map(|path| {
            let format = known_format(path, opts.format)?;
            Some((path.as_path(), format, header_line(path, format, &opts)))
        })
        .collect();
    let known: Vec<(&Path, Format)> = headers.iter().map(|(p, f, _)| (*p, *f)).collect();
    let all_known = known.len() == files.len();
    crate::parquet_output::refuse_before_reading(args, &known, all_known)?;
    if all_known && crate::per_input::written_apart(&known, shards, args.output.as_deref()) {
        return Ok(());
    }
    let shapes: Vec<Shape> = headers
        .iter()
        .map(|(path, format, header)| Shape {
            path,
            format: *format,
            header: header.as_deref().map(Some),
        })
        .collect();
    refuse_mixed(&shapes, args)
}

/// The same refusals as [`refuse_before_reading`] on what reading told: the formats of
/// inputs read by their content, and every header.
pub fn refuse_after_reading(docs: &Documents, args: &RunSettings) -> Result<()> {
    let inputs = &docs.inputs[docs.reference_inputs()..];
    if let Some(first) = inputs.first() {
        crate::parquet_output::refuse_for_dedup(args, first.format)?;
    }
    match crate::per_input::layout(inputs, args.output.as_deref()) {
        // Each input is written in its own format: only their paths must differ.
        Layout::PerInput(_) => return crate::per_input::relative_paths(inputs).map(drop),
        Layout::One if inputs.iter().all(|i| i.format == Format::Parquet) => {
            let paths: Vec<&Path> = inputs.iter().map(|i| i.path.as_path()).collect();
            crate::parquet_output::refuse_schemas(&paths)?;
        }
        Layout::One => {}
    }
    // The reference is never written: its shape does not matter.
    let shapes: Vec<Shape> = docs.inputs[docs.reference_inputs()..]
        .iter()
        .map(|i| Shape {
            path: &i.path,
            format: i.format,
            header: Some(i.header.as_deref()),
        })
        .collect();
    refuse_mixed(&shapes, args)
}

/// The header line of a CSV/TSV regular file, read alone; `None` for anything else (a
/// FIFO or standard input cannot be read twice) or a file that cannot be opened, whose
/// error reading reports.
fn header_line(path: &Path, format: Format, opts: &neardup_io::ReadOptions) -> Option<Vec<u8>> {
    if !format.has_header() || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let reader = neardup_io::open(path, opts).ok()?;
    reader.header_raw().map(<[u8]>::to_vec)
}

/// Refuses inputs of different formats: `command` writes one output in one format.
pub(crate) fn one_format<'a>(
    command: &str,
    verb: &str,
    mut inputs: impl Iterator<Item = (&'a Path, Format)>,
) -> Result<()> {
    let Some((first, format)) = inputs.next() else {
        return Ok(());
    };
    if let Some((other, other_format)) = inputs.find(|(_, f)| *f != format) {
        usage!(
            "{command} writes one output in one format, but {} is {} and {} is {}; \
             {verb} them apart",
            first.display(),
            format.name(),
            other.display(),
            other_format.name()
        );
    }
    Ok(())
}

fn refuse_mixed(shapes: &[Shape], args: &RunSettings) -> Result<()> {
    let output = args.output.as_deref();
    let Some(first) = shapes.first() else {
        return Ok(());
    };
    // The refusals name what the user ran: `annotate` reads its inputs through here too.
    let (command, verb) = match &args.annotate {
        Some(annotate) => (annotate.flag(), "annotate"),
        None => ("dedup", "deduplicate"),
    };
    one_format(command, verb, shapes.iter().map(|s| (s.path, s.format)))?;
    let known_headers: Vec<&Shape> = shapes.iter().filter(|s| s.header.is_some()).collect();
    if let [one, rest @ ..] = &known_headers[..] {
        if let Some(other) = rest.iter().find(|s| s.header != one.header) {
            usage!(
                "{command} writes one output with one header, but {} and {} have different \
                 headers; {verb} them apart",
                one.path.display(),
                other.path.display()
            );
        }
    }
    let output = output.filter(|p| *p != Path::new("-"));
    if first.format == Format::Dir {
        if output.is_none() {
            usage!("dedup of a directory needs -o DIR");
        }
        return Ok(());
    }
    if let Some(out) = output {
        if let Some(named) = Format::from_extension(out).filter(|f| *f != first.format) {
            usage!(
                "dedup writes the input's own format, but {} is {} and -o {} is named as {}; \
                 name the output .{} (or without a known extension)",
                first.path.display(),
                first.format.name(),
                out.display(),
                named.name(),
                extension(first.format)
            );
        }
    }
    Ok(())
}

/// The usual file extension of a format.
fn extension(format: Format) -> &'static str {
    match format {
        Format::Lines => "txt",
        other => other.name(),
    }
}

/// Writes every document that is neither removed nor skipped, in input order; returns
/// how many were written.
pub fn write_survivors(
    docs: &Documents,
    clusters: &Clusters,
    has_shingles: &dyn Fn(u32) -> bool,
    args: &RunSettings,
) -> Result<u64> {
    let first = (docs.inputs.get(docs.reference_inputs())).context("no input")?;
    let is_kept = |doc: u32| {
        !docs.is_reference(doc)
            && clusters.duplicate_of(doc).is_none()
            && skipped_by_pipeline(has_shingles, doc).is_none()
    };
    let inputs = &docs.inputs[docs.reference_inputs()..];
    let written = match crate::per_input::layout(inputs, args.output.as_deref()) {
        Layout::PerInput(dir) => Some(crate::per_input::write(docs, &is_kept, args, dir)?),
        Layout::One if first.format == Format::Parquet => {
            Some(crate::parquet_output::write_one(docs, &is_kept, args)?)
        }
        Layout::One => None,
    };
    if let Some(written) = written {
        if let Some(path) = &args.removed {
            write_removed(path, docs, clusters, &args.input.inputs)?;
        }
        return Ok(written);
    }
    let mut writer = create_writer(args, first.format, first.header.as_deref())?;
    // Several directories: one subfolder per root, so equal relative paths stay apart.
    let roots: Vec<&Path> = docs.inputs.iter().map(|i| i.path.as_path()).collect();
    writer = writer.with_roots(&roots);
    let mut raw = docs.raw_reader()?;
    // The reference (read first) is never written.
    for doc in docs.reference_docs()..docs.len() as u32 {
        // Empty documents are skipped, not kept: they are reported, not written.
        if clusters.duplicate_of(doc).is_none() && skipped_by_pipeline(has_shingles, doc).is_none()
        {
            writer.write(&*docs.record(doc, &mut raw)?)?;
        }
    }
    let written = writer.written();
    writer.finish()?;
    if let Some(path) = &args.removed {
        write_removed(path, docs, clusters, &args.input.inputs)?;
    }
    Ok(written)
}

/// dedup's one output (`-o`, or standard output) in `format`, with `header` for CSV/TSV;
/// what the command line named wrongly is a usage error.
pub fn create_writer(
    args: &RunSettings,
    format: Format,
    header: Option<&[u8]>,
) -> Result<DedupWriter> {
    let output = args
        .output
        .as_deref()
        .filter(|p| *p != std::path::Path::new("-"));
    let options = neardup_io::OutputOptions::new()
        .refuse_inputs(&args.input.inputs)
        .replace_directory(args.force);
    Ok(
        match DedupWriter::create_with_options(output, format, header, &options) {
            Err(neardup_io::Error::OutputDirNotEmpty { path }) => usage!(
                "output directory {path} exists and is not empty; --force replaces it, or name a new directory"
            ),
            Err(
                e @ (neardup_io::Error::OutputIsInput { .. }
                | neardup_io::Error::OutputIsDirectory { .. }
                | neardup_io::Error::DanglingSymlink { .. }
                | neardup_io::Error::UnsupportedOutput { .. }),
            ) => usage!("{e}"),
            other => other?,
        },
    )
}

/// One removed record of `dedup --removed`.
#[derive(serde::Serialize)]
struct RemovedRecord<'a> {
    id: DocId,
    duplicate_of: DocId,
    /// With a reference: the file of the record it duplicates.
    #[serde(skip_serializing_if = "Option::is_none")]
    duplicate_of_source: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jaccard: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimate: Option<f64>,
    source: &'a str,
    line: u64,
    /// The record as it stands in the input, without its line end (absent for a file of
    /// a directory, which `source` names).
    #[serde(skip_serializing_if = "Option::is_none")]
    record: Option<std::borrow::Cow<'a, str>>,
}

/// `dedup --removed`: every removed record, in input order, with the record it duplicates.
pub fn write_removed(
    path: &Path,
    docs: &Documents,
    clusters: &Clusters,
    inputs: &[PathBuf],
) -> Result<()> {
    let mut out = open_output(Some(path), inputs)?;
    let mut raw = docs.raw_reader()?;
    for doc in 0..docs.len() as u32 {
        let Some((kept, similarity)) = clusters.duplicate_of(doc) else {
            continue;
        };
        let place = docs.place(doc);
        let whole = raw.read(doc)?;
        let raw = whole.strip_suffix(b"\n").unwrap_or(whole);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let line = RemovedRecord {
            id: docs.id(doc),
            duplicate_of: docs.id(kept),
            duplicate_of_source: (docs.reference_docs() > 0).then(|| docs.source_of(kept)),
            jaccard: crate::output::round(similarity.jaccard),
            estimate: crate::output::round(similarity.estimate),
            source: docs.source_of(doc),
            line: place.line,
            record: (!whole.is_empty()).then(|| String::from_utf8_lossy(raw)),
        };
        serde_json::to_writer(&mut out, &line)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| out.error(e))?;
    }
    finish(out)
}
