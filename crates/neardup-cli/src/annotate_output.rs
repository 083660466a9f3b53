//! `annotate` and `dedup --annotate`: every record read written back in its input's own
//! format with what dedup decided added (neardup-io's `annotate`); and `dedup
//! --cluster-size-field NAME`: the survivors, each with its cluster size.
//!
//! The run is the clusters run; this writes its result input by input, reading each
//! input a second time beside the documents' exact bytes, so records the readers skipped
//! are written back where they were.

use std::ops::Range;
use std::path::Path;

use anyhow::Result;
use neardup::Clusters;
use neardup_io::annotate::{
    AnnotateError, AnnotatedInput, Annotation, AnnotationField, AnnotationFields, Delimiting,
    InputAnnotator,
};
use neardup_io::documents::{
    known_format, skipped_by_pipeline, DocId, Documents, InputOptions, RawReader,
};
use neardup_io::{Format, OutputFile};

use crate::errors::{usage, BadRecord};
use crate::output::{finish, open_output, round};
use crate::per_input::Layout;
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
    pub(crate) fn flag(&self) -> &'static str {
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
        // A folder may be shards (each file a record format) or a dir of documents:
        // reading tells, and the refusal after reading names it.
        let folder = args.input.format.is_none() && path.is_dir();
        if let Some(format) = known_format(path, args.input.format).filter(|_| !folder) {
            refuse_format(path, format, annotate)?;
        }
    }
    Ok(())
}

/// [`refuse_before_reading`]'s format refusal, on what reading told.
pub fn refuse_after_reading(docs: &Documents, annotate: &Annotate) -> Result<()> {
    // The reference (`--reference`, read first) is not written.
    for input in &docs.inputs[docs.reference_inputs()..] {
        refuse_format(&input.path, input.format, annotate)?;
    }
    Ok(())
}

fn refuse_format(path: &Path, format: Format, annotate: &Annotate) -> Result<()> {
    if !matches!(
        format,
        Format::Jsonl | Format::Csv | Format::Tsv | Format::Parquet
    ) {
        usage!(
            "{} writes JSONL, CSV, TSV and Parquet records with fields or columns added; {} is {} \
             (its records have no place for them: use clusters for a list by id)",
            annotate.flag(),
            path.display(),
            format.name()
        );
    }
    Ok(())
}

/// What dedup decided about each document, asked for in ascending order.
struct Decisions<'a> {
    docs: &'a Documents,
    clusters: &'a Clusters,
    has_shingles: &'a dyn Fn(u32) -> bool,
    /// Each document in a cluster of 2 or more: (document, kept document, cluster size),
    /// by document.
    members: std::iter::Peekable<std::vec::IntoIter<(u32, u32, u32)>>,
}

/// One document's decision, holding the id it names.
struct Decision {
    /// No text to compare: not a document of any cluster.
    skipped: bool,
    cluster: u32,
    size: u32,
    /// The kept document's id and the similarity to it, for a removed document.
    duplicate_of: Option<(DocId, Option<f64>)>,
}

impl Decision {
    fn annotation(&self) -> Annotation<'_> {
        if self.skipped {
            return Annotation::SKIPPED;
        }
        Annotation {
            cluster: Some(u64::from(self.cluster)),
            cluster_size: Some(u64::from(self.size)),
            kept: self.duplicate_of.is_none(),
            duplicate_of: self.duplicate_of.as_ref().map(|(id, _)| id),
            jaccard: self.duplicate_of.as_ref().and_then(|(_, j)| *j),
        }
    }
}

impl<'a> Decisions<'a> {
    fn new(
        docs: &'a Documents,
        clusters: &'a Clusters,
        has_shingles: &'a dyn Fn(u32) -> bool,
    ) -> Self {
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
        Decisions {
            docs,
            clusters,
            has_shingles,
            members: members.into_iter().peekable(),
        }
    }

    /// Whether dedup writes `doc` (any order).
    fn survives(&self, doc: u32) -> bool {
        survives(self.clusters, self.has_shingles, doc)
    }

    /// What was decided about `doc` (at or after the last document asked for).
    fn of(&mut self, doc: u32) -> Decision {
        while self.members.next_if(|m| m.0 < doc).is_some() {}
        let (cluster, size) = match self.members.peek() {
            Some(&(d, kept, size)) if d == doc => (kept, size),
            _ => (doc, 1),
        };
        let duplicate = self.clusters.duplicate_of(doc);
        Decision {
            skipped: skipped_by_pipeline(self.has_shingles, doc).is_some(),
            cluster,
            size,
            duplicate_of: duplicate.map(|(kept, s)| (self.docs.id(kept), round(s.value()))),
        }
    }
}

/// Whether dedup writes `doc`: neither removed nor skipped.
fn survives(clusters: &Clusters, has_shingles: &dyn Fn(u32) -> bool, doc: u32) -> bool {
    clusters.duplicate_of(doc).is_none() && skipped_by_pipeline(has_shingles, doc).is_none()
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
    let mut w = Writing {
        docs,
        decisions: Decisions::new(docs, clusters, has_shingles),
        args,
        annotate,
        fields: &fields,
        raw: docs.raw_reader()?,
    };
    // The reference (`--reference`, read first) is not written.
    let first = docs.reference_inputs();
    let inputs = &docs.inputs[first..];
    let mut written = 0;
    // The layout dedup writes: one output, or one per shard (or Parquet file) below -o DIR.
    match crate::per_input::layout(inputs, args.output.as_deref()) {
        Layout::One => {
            let mut out = open_output(args.output.as_deref(), &args.input.inputs)?;
            written += w.inputs(first..docs.inputs.len(), &mut out)?;
            finish(out)?;
        }
        Layout::PerInput(dir) => {
            let relative = crate::per_input::relative_paths(inputs)?;
            let outputs = match neardup_io::OutputDir::create(dir, args.force) {
                Err(neardup_io::Error::OutputDirNotEmpty { path }) => usage!(
                    "output directory {path} exists and is not empty; --force replaces it, \
                     or name a new directory"
                ),
                other => other?,
            };
            for (i, rel) in relative.iter().enumerate() {
                let path = outputs.file(rel)?;
                let mut out = OutputFile::create(&path, &neardup_io::OutputOptions::new())?;
                written += w.inputs(first + i..first + i + 1, &mut out)?;
                out.finish()?;
            }
            outputs.finish()?;
        }
    }
    let expected = if matches!(annotate, Annotate::ClusterSize { .. }) {
        kept
    } else {
        docs.len() as u64 - u64::from(docs.reference_docs())
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

/// What writing the annotated inputs shares, input after input.
struct Writing<'a> {
    docs: &'a Documents,
    decisions: Decisions<'a>,
    args: &'a RunSettings,
    annotate: &'a Annotate,
    fields: &'a AnnotationFields,
    /// The documents' bytes, read in document order across every output.
    raw: RawReader<'a>,
}

impl Writing<'_> {
    /// Writes the inputs `inputs` (of one format) to `out`; returns the documents written.
    fn inputs(&mut self, inputs: Range<usize>, out: &mut OutputFile) -> Result<u64> {
        if self.docs.inputs[inputs.start].format == Format::Parquet {
            let options = self.args.parquet.unwrap_or_default();
            let (docs, annotate, fields) = (self.docs, self.annotate, self.fields);
            write_parquet(
                docs,
                &mut self.decisions,
                annotate,
                fields,
                inputs,
                &options,
                out,
            )
        } else {
            self.records(inputs, out)
        }
    }

    /// JSONL, CSV and TSV inputs, each read again beside the documents' bytes; returns the
    /// documents written.
    fn records(&mut self, inputs: Range<usize>, out: &mut OutputFile) -> Result<u64> {
        let (docs, args, annotate, fields) = (self.docs, self.args, self.annotate, self.fields);
        let (decisions, raw) = (&mut self.decisions, &mut self.raw);
        let survivors_only = matches!(annotate, Annotate::ClusterSize { .. });
        let output = out.name().to_string();
        let mut written = 0;
        let mut specs = AnnotatedInputs {
            options: &args.input,
            output: &output,
            command: annotate.flag(),
            verb: "annotate",
            survivors_only,
            header: None,
        };
        for (i, input) in docs
            .inputs
            .iter()
            .enumerate()
            .take(inputs.end)
            .skip(inputs.start)
        {
            let spec = specs.next(input)?;
            let mut annotator = InputAnnotator::open(&spec, fields, out).map_err(failed)?;
            for doc in docs.input_docs(i) {
                let line = docs.place(doc).line;
                let bytes = raw.read(doc)?;
                if survivors_only && !decisions.survives(doc) {
                    annotator.leave_out(line, bytes).map_err(failed)?;
                    continue;
                }
                let decision = decisions.of(doc);
                annotator
                    .document(line, bytes, &decision.annotation())
                    .map_err(failed)?;
            }
            written += annotator.finish().map_err(failed)?;
        }
        Ok(written)
    }
}

/// Parquet inputs, through neardup-io's rewrite (compressed and grouped as `options` say,
/// dedup's --compression and --row-group-size): every row (or the survivors) with the
/// annotation's columns added after the input's; returns the documents written.
fn write_parquet(
    docs: &Documents,
    decisions: &mut Decisions,
    annotate: &Annotate,
    fields: &AnnotationFields,
    inputs: Range<usize>,
    options: &neardup_io::parquet::ParquetOutput,
    out: &mut OutputFile,
) -> Result<u64> {
    let survivors_only = matches!(annotate, Annotate::ClusterSize { .. });
    for input in docs.inputs[inputs.clone()]
        .iter()
        .filter(|_| !fields.replaces())
    {
        let schema = neardup_io::parquet::schema_of(&input.path)?;
        if let Some(name) = fields
            .names()
            .find(|n| schema.fields().iter().any(|f| f.name() == n))
        {
            return Err(BadRecord(format!(
                "{}: the file already has a column {name:?}; choose other names with \
                 --annotate-prefix, or replace its values with --force",
                input.path.display()
            ))
            .into());
        }
    }
    let name = out.name().to_string();
    let mut rewriter = neardup_io::parquet::Rewriter::new(&mut *out, &name, options);
    let mut written = 0;
    for i in inputs {
        let range = docs.input_docs(i);
        // Documents of this input in row order: its rows skipped while reading are in no
        // document, and are written with the skipped record's annotation.
        let row_of = |doc: u32| docs.place(doc).record;
        let mut next = range.start;
        let (clusters, has_shingles) = (decisions.clusters, decisions.has_shingles);
        let mut keep = |row: u64| {
            if !survivors_only {
                return true;
            }
            while next < range.end && row_of(next) < row {
                next += 1;
            }
            next < range.end && row_of(next) == row && survives(clusters, has_shingles, next)
        };
        let mut doc = range.start;
        let mut extra = |_first: u64, rows: &[u64]| {
            let found: Vec<Option<Decision>> = rows
                .iter()
                .map(|&row| {
                    while doc < range.end && row_of(doc) < row {
                        doc += 1;
                    }
                    (doc < range.end && row_of(doc) == row).then(|| decisions.of(doc))
                })
                .collect();
            written += found.iter().flatten().count() as u64;
            let annotations: Vec<Annotation> = found
                .iter()
                .map(|d| d.as_ref().map_or(Annotation::SKIPPED, Decision::annotation))
                .collect();
            Ok(neardup_io::annotate::arrow_columns(fields, &annotations))
        };
        rewriter.add(&docs.inputs[i].path, &mut keep, Some(&mut extra))?;
    }
    rewriter.finish()?;
    Ok(written)
}

/// The inputs written again into one output, one after another: each input's
/// description for [`InputAnnotator::open`], an input whose CSV/TSV header differs from the
/// first one's refused (one output has one header).
pub(crate) struct AnnotatedInputs<'a> {
    pub options: &'a InputOptions,
    /// The output's name, for errors.
    pub output: &'a str,
    /// What writes the output and what the user should do instead, for the refusal:
    /// "`{command}` writes one output with one header ...; `{verb}` them apart".
    pub command: &'a str,
    pub verb: &'a str,
    pub survivors_only: bool,
    /// The first header seen.
    pub header: Option<&'a [u8]>,
}

impl<'a> AnnotatedInputs<'a> {
    /// The description of the next input.
    pub(crate) fn next(
        &mut self,
        input: &'a neardup_io::documents::InputInfo,
    ) -> Result<AnnotatedInput<'a>> {
        let spec = AnnotatedInput {
            path: &input.path,
            format: input.format,
            header: input.header.as_deref(),
            delimiting: delimiting(input.format, self.options),
            limit: self.options.max_record_bytes,
            output: self.output,
            header_written: self.header.is_some(),
            survivors_only: self.survivors_only,
        };
        if let (Some(first), Some(this)) = (self.header, spec.header) {
            if first != this {
                usage!(
                    "{} writes one output with one header, but {} has another; {} them apart",
                    self.command,
                    input.path.display(),
                    self.verb
                );
            }
        }
        self.header = self.header.or(spec.header);
        Ok(spec)
    }
}

/// How the reader split a CSV/TSV input's fields.
pub(crate) fn delimiting(format: Format, input: &InputOptions) -> Delimiting {
    match format {
        Format::Tsv => Delimiting {
            delimiter: b'\t',
            quote: input.quote,
        },
        _ => Delimiting {
            delimiter: input.delimiter.unwrap_or(b','),
            quote: Some(b'"'),
        },
    }
}

/// An annotating error as the command reports it: a name taken is a bad record (exit
/// code 3), as is a record whose value cannot be replaced.
pub(crate) fn failed(e: AnnotateError) -> anyhow::Error {
    match e {
        e @ (AnnotateError::Clash { .. } | AnnotateError::CannotReplace { .. }) => {
            BadRecord(e.to_string()).into()
        }
        AnnotateError::Io(e) => e.into(),
        e => anyhow::Error::new(e).context("cannot annotate"),
    }
}
