//! `annotate` and `dedup --annotate`: every record read written back in its input's own
//! format with what dedup decided added (neardup-io's `annotate`); and `dedup
//! --cluster-size-field NAME`: the survivors, each with its cluster size.
//!
//! The run is the clusters run; this writes its result input by input, reading each
//! input a second time beside the documents' exact bytes, so records the readers skipped
//! are written back where they were.

use std::path::Path;

use anyhow::Result;
use neardup::Clusters;
use neardup_io::annotate::{
    AnnotateError, AnnotatedInput, Annotation, AnnotationField, AnnotationFields, Delimiting,
    InputAnnotator,
};
use neardup_io::documents::{known_format, skipped_by_pipeline, Documents};
use neardup_io::Format;

use crate::errors::{usage, BadRecord};
use crate::output::{finish, open_output, round};
use crate::settings::RunSettings;

/// What dedup writes instead of the survivors alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Annotate {
    /// Every record, with every field, each named `prefix` + its name.
    All { prefix: String },
    /// The survivors, with their cluster size under this name.
    ClusterSize { field: String },
}

impl Annotate {
    fn flag(&self) -> &'static str {
        match self {
            Annotate::All { .. } => "annotate",
            Annotate::ClusterSize { .. } => "--cluster-size-field",
        }
    }

    fn fields(&self, force: bool) -> AnnotationFields {
        match self {
            Annotate::All { prefix } => AnnotationFields::all(prefix),
            Annotate::ClusterSize { field } => {
                AnnotationFields::one(AnnotationField::ClusterSize, field)
            }
        }
        .replace(force)
    }
}

/// Refuses what annotating cannot write, before reading where the command line tells:
/// standard input (read twice), and formats other than JSONL, CSV and TSV.
pub fn refuse_before_reading(args: &RunSettings, annotate: &Annotate) -> Result<()> {
    for path in &args.input.inputs {
        let stream = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if path == Path::new("-") || stream {
            usage!(
                "{} reads its input twice, so not from standard input or a pipe ({}); \
                 give a file",
                annotate.flag(),
                path.display()
            );
        }
        if let Some(format) = known_format(path, args.input.format) {
            refuse_format(path, format, annotate)?;
        }
    }
    Ok(())
}

/// [`refuse_before_reading`]'s format refusal, on what reading told.
pub fn refuse_after_reading(docs: &Documents, annotate: &Annotate) -> Result<()> {
    for input in &docs.inputs {
        refuse_format(&input.path, input.format, annotate)?;
    }
    Ok(())
}

fn refuse_format(path: &Path, format: Format, annotate: &Annotate) -> Result<()> {
    if !matches!(format, Format::Jsonl | Format::Csv | Format::Tsv) {
        usage!(
            "{} writes JSONL, CSV and TSV records with fields or columns added; {} is {} \
             (its records have no place for them: use clusters for a list by id)",
            annotate.flag(),
            path.display(),
            format.name()
        );
    }
    Ok(())
}

/// Each document's cluster, where it is in one of 2 or more: (document, kept document,
/// cluster size), by document.
fn memberships(clusters: &Clusters) -> Vec<(u32, u32, u32)> {
    let mut members: Vec<(u32, u32, u32)> = clusters
        .iter()
        .flat_map(|c| {
            let (kept, size) = (c.kept(), c.len() as u32);
            std::iter::once(kept)
                .chain(c.duplicates().map(|d| d.doc))
                .map(move |doc| (doc, kept, size))
        })
        .collect();
    members.sort_unstable();
    members
}

/// Writes every input annotated (or, for `--cluster-size-field`, its `kept` survivors)
/// to the one output, and `--removed`; checks that every document was written once.
pub fn write(
    docs: &Documents,
    clusters: &Clusters,
    has_shingles: &dyn Fn(u32) -> bool,
    args: &RunSettings,
    annotate: &Annotate,
    kept: u64,
) -> Result<()> {
    let fields = annotate.fields(args.force);
    let survivors_only = matches!(annotate, Annotate::ClusterSize { .. });
    let members = memberships(clusters);
    let mut member = members.iter().peekable();
    let mut out = open_output(args.output.as_deref(), &args.input.inputs)?;
    let output = out.name().to_string();
    let mut raw = docs.raw_reader()?;
    let mut written = 0;
    let mut header: Option<&[u8]> = None;
    for (i, input) in docs.inputs.iter().enumerate() {
        let spec = AnnotatedInput {
            path: &input.path,
            format: input.format,
            header: input.header.as_deref(),
            delimiting: delimiting(input.format, args),
            limit: args.input.max_record_bytes,
            output: &output,
            header_written: header.is_some(),
            survivors_only,
        };
        if let (Some(first), Some(this)) = (header, spec.header) {
            if first != this {
                usage!(
                    "{} writes one output with one header, but {} has another; annotate them apart",
                    annotate.flag(),
                    input.path.display()
                );
            }
        }
        header = header.or(spec.header);
        let mut annotator = InputAnnotator::open(&spec, &fields, &mut out).map_err(failed)?;
        for doc in docs.input_docs(i) {
            let place = docs.place(doc);
            let bytes = raw.read(doc)?;
            let duplicate = clusters.duplicate_of(doc);
            let skipped = skipped_by_pipeline(has_shingles, doc).is_some();
            if survivors_only && (skipped || duplicate.is_some()) {
                annotator.leave_out(place.line, bytes).map_err(failed)?;
                continue;
            }
            while member.next_if(|m| m.0 < doc).is_some() {}
            let (cluster, size) = match member.peek() {
                Some(&&(d, kept, size)) if d == doc => (kept, size),
                _ => (doc, 1),
            };
            let kept_id = duplicate.map(|(kept, _)| docs.id(kept));
            let annotation = if skipped {
                Annotation::SKIPPED
            } else {
                Annotation {
                    cluster: Some(u64::from(cluster)),
                    cluster_size: Some(u64::from(size)),
                    kept: duplicate.is_none(),
                    duplicate_of: kept_id.as_ref(),
                    jaccard: duplicate.and_then(|(_, s)| round(s.value())),
                }
            };
            annotator
                .document(place.line, bytes, &annotation)
                .map_err(failed)?;
        }
        written += annotator.finish().map_err(failed)?;
    }
    finish(out)?;
    let expected = if survivors_only {
        kept
    } else {
        docs.len() as u64
    };
    if written != expected {
        anyhow::bail!(
            "{} wrote {written} documents of {expected}",
            annotate.flag()
        );
    }
    if let Some(path) = &args.removed {
        crate::dedup_output::write_removed(path, docs, clusters, &args.input.inputs)?;
    }
    Ok(())
}

/// How the reader split a CSV/TSV input's fields.
fn delimiting(format: Format, args: &RunSettings) -> Delimiting {
    match format {
        Format::Tsv => Delimiting {
            delimiter: b'\t',
            quote: args.input.quote,
        },
        _ => Delimiting {
            delimiter: args.input.delimiter.unwrap_or(b','),
            quote: Some(b'"'),
        },
    }
}

/// An annotating error as the command reports it: a name taken is a bad record (exit
/// code 3), as is a record whose value cannot be replaced.
fn failed(e: AnnotateError) -> anyhow::Error {
    match e {
        e @ (AnnotateError::Clash { .. } | AnnotateError::CannotReplace { .. }) => {
            BadRecord(e.to_string()).into()
        }
        AnnotateError::Io(e) => e.into(),
        e => anyhow::Error::new(e).context("cannot annotate"),
    }
}
