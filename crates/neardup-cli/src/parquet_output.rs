//! Parquet outputs: `pairs` and `clusters --output-format parquet` (the JSON lines'
//! fields as typed columns), and dedup's survivors of Parquet inputs, written with the
//! input's schema by neardup-io's `parquet::Rewriter`.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use neardup::{Clusters, Measure, Pair};
use neardup_io::documents::Documents;
use neardup_io::parquet::{ParquetOutput, ParquetWriter, Rewriter};
use neardup_io::{Format, OutputFile, OutputOptions};

use crate::errors::usage;
use crate::output::round;
use crate::settings::RunSettings;

/// Opens a Parquet output (`None` or `-` is standard output) as `open_output` does,
/// never compressed by name: Parquet compresses its pages itself.
pub fn open(path: Option<&Path>, inputs: &[std::path::PathBuf]) -> Result<OutputFile> {
    let options = OutputOptions::new().refuse_inputs(inputs).gzip(false);
    crate::output::open_output_with(path, &options)
}

/// Refuses `--compression` and `--row-group-size` where no Parquet is written: pairs and
/// clusters without `--output-format parquet` (dedup's are checked on its inputs'
/// formats, [`refuse_for_dedup`]); and Parquet pairs of a containment run.
pub fn refuse(args: &RunSettings, dedup: bool) -> Result<()> {
    let parquet_out = args.output_format == Some(crate::output::OutputFormat::Parquet);
    if args.parquet.is_some() && !dedup && !parquet_out {
        usage!(
            "--compression and --row-group-size apply to Parquet output (--output-format parquet)"
        );
    }
    if parquet_out && args.matching.measure.from_smaller() {
        usage!(
            "--output-format parquet writes pairs and clusters by similarity; containment \
             pairs are written as jsonl or tsv"
        );
    }
    Ok(())
}

/// dedup: `--compression` and `--row-group-size` with inputs that are not Parquet.
pub fn refuse_for_dedup(args: &RunSettings, format: Format) -> Result<()> {
    if args.parquet.is_some() && format != Format::Parquet {
        usage!(
            "--compression and --row-group-size apply to Parquet output, and dedup writes \
             the inputs' own format ({})",
            format.name()
        );
    }
    Ok(())
}

/// dedup's Parquet refusals before reading, on the inputs whose format is known without
/// reading (`known`): `--compression` or `--row-group-size` with no Parquet among them,
/// and several Parquet files of different columns for one file.
pub fn refuse_before_reading(
    args: &RunSettings,
    known: &[(&Path, Format)],
    all_known: bool,
) -> Result<()> {
    let Some(&(_, first)) = known.first() else {
        return Ok(());
    };
    if !all_known {
        return Ok(()); // the rest are told by reading
    }
    if known
        .iter()
        .all(|(_, f)| !matches!(f, Format::Parquet | Format::Dir))
    {
        refuse_for_dedup(args, first)?;
    }
    let out = args.output.as_deref().filter(|p| *p != Path::new("-"));
    let one_file = out.is_none_or(|o| Format::from_extension(o) == Some(Format::Parquet));
    if one_file && known.len() > 1 && known.iter().all(|(_, f)| *f == Format::Parquet) {
        let paths: Vec<&Path> = known.iter().map(|(p, _)| *p).collect();
        refuse_schemas(&paths)?;
    }
    Ok(())
}

/// The pairs' columns: `a`, `b`, the score (named by the measure), `estimate`,
/// `truncated`, and `hamming` in a SimHash run.
fn pair_schema(measure: Measure, hamming: bool) -> SchemaRef {
    let mut fields = vec![
        Field::new("a", DataType::Utf8, false),
        Field::new("b", DataType::Utf8, false),
        Field::new(measure.name(), DataType::Float64, true),
        Field::new("estimate", DataType::Float64, true),
        Field::new("truncated", DataType::Boolean, false),
    ];
    if hamming {
        fields.push(Field::new("hamming", DataType::UInt32, true));
    }
    Arc::new(Schema::new(fields))
}

/// Pairs written as Parquet, a batch per chunk the run hands on.
pub struct PairParquet<'a> {
    file: ParquetWriter<OutputFile>,
    docs: &'a Documents,
    schema: SchemaRef,
    hamming: bool,
    measure: Measure,
}

impl<'a> PairParquet<'a> {
    /// Starts the file on `out`.
    pub fn new(
        out: OutputFile,
        docs: &'a Documents,
        options: &ParquetOutput,
        hamming: bool,
        measure: Measure,
    ) -> Result<Self> {
        let name = out.name().to_string();
        let schema = pair_schema(measure, hamming);
        let file = ParquetWriter::create(out, &name, schema.clone(), options)?;
        Ok(PairParquet {
            file,
            docs,
            schema,
            hamming,
            measure,
        })
    }

    /// Writes a chunk of pairs.
    pub fn write(&mut self, chunk: &[Pair]) -> std::io::Result<()> {
        let n = chunk.len();
        let (mut a, mut b) = (StringBuilder::new(), StringBuilder::new());
        let (mut score, mut estimate) = (
            Float64Builder::with_capacity(n),
            Float64Builder::with_capacity(n),
        );
        let mut truncated = BooleanBuilder::with_capacity(n);
        let mut hamming = UInt32Builder::with_capacity(n);
        let scored = |v: Option<f64>| round(v.map(|j| self.measure.score(j)));
        for p in chunk {
            a.append_value(self.docs.id(p.a).to_string());
            b.append_value(self.docs.id(p.b).to_string());
            score.append_option(scored(p.similarity.jaccard));
            estimate.append_option(scored(p.similarity.estimate));
            truncated.append_value(p.similarity.truncated);
            hamming.append_option(p.similarity.hamming);
        }
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(a.finish()),
            Arc::new(b.finish()),
            Arc::new(score.finish()),
            Arc::new(estimate.finish()),
            Arc::new(truncated.finish()),
        ];
        if self.hamming {
            columns.push(Arc::new(hamming.finish()));
        }
        let batch =
            RecordBatch::try_new(self.schema.clone(), columns).map_err(std::io::Error::other)?;
        self.file.write(&batch).map_err(std::io::Error::other)
    }

    /// Writes the footer; the output is still to be finished.
    pub fn finish(self) -> Result<OutputFile> {
        Ok(self.file.finish()?)
    }
}

/// Rows of a clusters batch.
const CLUSTER_BATCH: usize = 64 * 1024;

/// `clusters --output-format parquet`: a row per document of each cluster, the kept one
/// first, with the JSON lines' fields (`truncated` always there, `hamming` in a SimHash
/// run, `source` and `duplicate_of_source` with a reference).
pub fn write_clusters(
    out: &mut OutputFile,
    clusters: &Clusters,
    docs: &Documents,
    options: &ParquetOutput,
    hamming: bool,
) -> Result<()> {
    let sources = clusters.reference() > 0;
    let mut fields = vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("cluster", DataType::UInt64, false),
        Field::new("kept", DataType::Boolean, false),
        Field::new("duplicate_of", DataType::Utf8, true),
        Field::new("jaccard", DataType::Float64, true),
        Field::new("estimate", DataType::Float64, true),
        Field::new("truncated", DataType::Boolean, false),
    ];
    if hamming {
        fields.push(Field::new("hamming", DataType::UInt32, true));
    }
    if sources {
        fields.push(Field::new("source", DataType::Utf8, false));
        fields.push(Field::new("duplicate_of_source", DataType::Utf8, true));
    }
    let schema = Arc::new(Schema::new(fields));
    let name = out.name().to_string();
    let mut file = ParquetWriter::create(out, &name, schema.clone(), options)?;
    let mut rows = ClusterRows::default();
    for (n, c) in clusters.iter().enumerate() {
        let kept = docs.id(c.kept()).to_string();
        let source = sources.then(|| docs.source_of(c.kept()));
        rows.push(&kept, n as u64 + 1, None, Default::default(), source, None);
        for d in c.duplicates() {
            let id = docs.id(d.doc).to_string();
            let of = sources.then(|| docs.source_of(d.doc));
            rows.push(&id, n as u64 + 1, Some(&kept), d.similarity, of, source);
        }
        if rows.len >= CLUSTER_BATCH {
            file.write(&std::mem::take(&mut rows).finish(&schema, hamming, sources)?)?;
        }
    }
    file.write(&rows.finish(&schema, hamming, sources)?)?;
    file.finish()?;
    Ok(())
}

/// Columns of cluster rows being built.
#[derive(Default)]
struct ClusterRows {
    len: usize,
    id: StringBuilder,
    cluster: UInt64Builder,
    kept: BooleanBuilder,
    duplicate_of: StringBuilder,
    jaccard: Float64Builder,
    estimate: Float64Builder,
    truncated: BooleanBuilder,
    hamming: UInt32Builder,
    source: StringBuilder,
    duplicate_of_source: StringBuilder,
}

impl ClusterRows {
    fn push(
        &mut self,
        id: &str,
        cluster: u64,
        duplicate_of: Option<&str>,
        similarity: neardup::Similarity,
        source: Option<&str>,
        duplicate_of_source: Option<&str>,
    ) {
        self.len += 1;
        self.id.append_value(id);
        self.cluster.append_value(cluster);
        self.kept.append_value(duplicate_of.is_none());
        self.duplicate_of.append_option(duplicate_of);
        self.jaccard.append_option(round(similarity.jaccard));
        self.estimate.append_option(round(similarity.estimate));
        self.truncated.append_value(similarity.truncated);
        self.hamming.append_option(similarity.hamming);
        self.source.append_value(source.unwrap_or_default());
        self.duplicate_of_source.append_option(duplicate_of_source);
    }

    fn finish(mut self, schema: &SchemaRef, hamming: bool, sources: bool) -> Result<RecordBatch> {
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.id.finish()),
            Arc::new(self.cluster.finish()),
            Arc::new(self.kept.finish()),
            Arc::new(self.duplicate_of.finish()),
            Arc::new(self.jaccard.finish()),
            Arc::new(self.estimate.finish()),
            Arc::new(self.truncated.finish()),
        ];
        if hamming {
            columns.push(Arc::new(self.hamming.finish()));
        }
        if sources {
            columns.push(Arc::new(self.source.finish()));
            columns.push(Arc::new(self.duplicate_of_source.finish()));
        }
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// dedup of Parquet inputs into one file (`-o FILE` or standard output): the kept rows
/// of every input, which must share one schema; returns the rows written.
pub fn write_one(
    docs: &Documents,
    is_kept: &dyn Fn(u32) -> bool,
    args: &RunSettings,
) -> Result<u64> {
    let mut out = open(args.output.as_deref(), &args.input.inputs)?;
    let name = out.name().to_string();
    let options = args.parquet.unwrap_or_default();
    let mut rewriter = Rewriter::new(&mut out, &name, &options);
    let mut written = 0;
    for input in docs.reference_inputs()..docs.inputs.len() {
        let mut keep = kept_rows(docs, input, is_kept);
        written += rewriter
            .add(&docs.inputs[input].path, &mut keep, None)?
            .written;
    }
    rewriter.finish()?;
    out.finish()?;
    Ok(written)
}

/// dedup of one Parquet input into `path` (a file of a per-input output directory).
pub fn write_input(
    docs: &Documents,
    input: usize,
    is_kept: &dyn Fn(u32) -> bool,
    path: &Path,
    options: &OutputOptions,
    args: &RunSettings,
) -> Result<u64> {
    let mut out = OutputFile::create(path, options)?;
    let name = out.name().to_string();
    let options = args.parquet.unwrap_or_default();
    let mut rewriter = Rewriter::new(&mut out, &name, &options);
    let mut keep = kept_rows(docs, input, is_kept);
    let written = rewriter
        .add(&docs.inputs[input].path, &mut keep, None)?
        .written;
    rewriter.finish()?;
    out.finish()?;
    Ok(written)
}

/// Whether a row of input `input` is kept, asked in ascending row order: its documents'
/// rows walked alongside (a skipped row is no document, so never kept).
pub(crate) fn kept_rows<'a>(
    docs: &'a Documents,
    input: usize,
    is_kept: &'a dyn Fn(u32) -> bool,
) -> impl FnMut(u64) -> bool + 'a {
    let mut next = docs.input_docs(input).peekable();
    move |row| {
        while next.peek().is_some_and(|&d| docs.place(d).record < row) {
            next.next();
        }
        match next.peek() {
            Some(&d) if docs.place(d).record == row => is_kept(d),
            _ => false,
        }
    }
}

/// Refuses, before reading, Parquet files given for one output whose schemas differ
/// (read from their footers).
pub fn refuse_schemas(paths: &[&Path]) -> Result<()> {
    let mut first: Option<(&Path, SchemaRef)> = None;
    for path in paths {
        let Ok(schema) = neardup_io::parquet::schema_of(path) else {
            continue; // reading reports it, naming the file
        };
        match &first {
            None => first = Some((path, schema)),
            Some((one, known)) if known.fields() != schema.fields() => usage!(
                "dedup writes one Parquet file, but {} and {} have different schemas (columns or their types); \
                 write them to a directory (-o DIR) or deduplicate them apart",
                one.display(),
                path.display()
            ),
            Some(_) => {}
        }
    }
    Ok(())
}
