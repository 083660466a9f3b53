//! `decontaminate -o`: the corpus without its contaminated documents, or every document
//! with the items it holds (`--annotate`), in the input's own format: JSONL, CSV and TSV
//! records as read (neardup-io's `DedupWriter`, and its `InputAnnotator` for CSV/TSV
//! columns), Parquet rows rewritten by neardup-io's `parquet::Rewriter`.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use arrow_array::{ArrayRef, StringArray};
use arrow_schema::{DataType, Field};
use neardup::decontaminate::ItemMatch;
use neardup_io::annotate::{AnnotateError, AnnotationField, AnnotationFields};
use neardup_io::documents::{Documents, InputOptions};
use neardup_io::{DedupWriter, Format};

use crate::args::InputFlags;
use crate::decontaminate::{hits_of, Found, TestItem};
use crate::errors::{usage, BadRecord};
use crate::output::{finish, open_output};

/// The field or column `--annotate` adds.
const FIELD: &str = "contamination";

/// Refuses `--annotate` of a format it cannot write, before reading where `--format`
/// tells, and CSV, TSV or Parquet from standard input (they are read again).
pub fn refuse_before_reading(input: &InputFlags) -> Result<()> {
    if let Some(format) = input.format {
        refuse_annotate(format)?;
        let piped = input.inputs.iter().any(|p| p == Path::new("-"));
        if piped && format != Format::Jsonl {
            usage!(
                "--annotate reads a {} input twice, so not from standard input; give a file",
                format.name()
            );
        }
    }
    Ok(())
}

fn refuse_annotate(format: Format) -> Result<()> {
    if !matches!(
        format,
        Format::Jsonl | Format::Csv | Format::Tsv | Format::Parquet
    ) {
        usage!(
            "--annotate writes JSONL, CSV, TSV and Parquet corpora; not {}",
            format.name()
        );
    }
    Ok(())
}

/// Refuses, after reading, an output that cannot be written: inputs of different
/// formats, and what `--annotate` cannot write.
pub fn refuse(docs: &Documents, annotate: bool) -> Result<()> {
    let Some(first) = docs.inputs.first() else {
        return Ok(());
    };
    crate::dedup_output::one_format(
        "decontaminate",
        "decontaminate",
        docs.inputs.iter().map(|i| (&*i.path, i.format)),
    )?;
    if annotate {
        refuse_annotate(first.format)?;
        if first.format != Format::Jsonl && first.path == Path::new("-") {
            usage!(
                "--annotate reads a {} input twice, so not from standard input; give a file",
                first.format.name()
            );
        }
    }
    Ok(())
}

/// What `-o` writes from.
pub struct Out<'a> {
    pub path: &'a Path,
    pub found: &'a Found,
    pub items: &'a [TestItem],
    /// The test files' names.
    pub names: &'a [String],
    pub options: &'a InputOptions,
}

impl Out<'_> {
    /// Writes the output in the inputs' format (one format, [`refuse`]).
    pub fn write(&self, annotate: bool) -> Result<()> {
        match (self.found.docs.inputs.first().map(|i| i.format), annotate) {
            (Some(Format::Parquet), annotate) => self.parquet(annotate),
            (Some(Format::Csv | Format::Tsv), true) => self.delimited(),
            (_, true) => self.jsonl(),
            (_, false) => self.clean(),
        }
    }

    /// The items document `doc` holds (none if it is clean).
    fn matches(&self, doc: u32) -> &[ItemMatch] {
        let hits = &self.found.hits;
        hits.binary_search_by_key(&doc, |(d, _)| *d)
            .map_or(&[], |i| hits[i].1.as_slice())
    }

    /// The `contamination` value of document `doc`, as JSON.
    fn value(&self, doc: u32) -> Result<Vec<u8>> {
        Ok(serde_json::to_vec(&hits_of(
            self.matches(doc),
            self.items,
            self.names,
        ))?)
    }

    /// Every document not holding an item, its bytes as read, in input order.
    fn clean(&self) -> Result<()> {
        let docs = &self.found.docs;
        let first = docs.inputs.first().context("no input")?;
        let options = neardup_io::OutputOptions::new().refuse_inputs(&self.options.inputs);
        let output = Some(self.path).filter(|p| *p != Path::new("-"));
        let mut writer = DedupWriter::create_with_options(
            output,
            first.format,
            first.header.as_deref(),
            &options,
        )?;
        let roots: Vec<&Path> = docs.inputs.iter().map(|i| i.path.as_path()).collect();
        writer = writer.with_roots(&roots);
        let mut raw = docs.raw_reader()?;
        for doc in 0..docs.len() as u32 {
            if self.matches(doc).is_empty() {
                writer.write(&*docs.record(doc, &mut raw)?)?;
            }
        }
        writer.finish()?;
        Ok(())
    }

    /// JSONL `--annotate`: every document with the field before its closing brace, from
    /// the bytes kept while reading (so standard input works); records the reader
    /// skipped are counted, not written.
    fn jsonl(&self) -> Result<()> {
        let docs = &self.found.docs;
        let mut out = open_output(Some(self.path), &self.options.inputs)?;
        let mut raw = docs.raw_reader()?;
        let mut buf = Vec::new();
        for doc in 0..docs.len() as u32 {
            let record = docs.record(doc, &mut raw)?;
            let value = self.value(doc)?;
            buf.clear();
            annotate_line(&record.raw, &value, &mut buf).ok_or_else(|| {
                BadRecord(format!(
                    "{}:{}: the record already has a field \"{FIELD}\"",
                    docs.source_of(doc),
                    record.location.line
                ))
            })?;
            out.write_all(&buf).map_err(|e| out.error(e))?;
        }
        finish(out)
    }

    /// CSV/TSV `--annotate`: each input read again beside the documents' bytes by
    /// neardup-io's annotator, the column added to the header and to every row (rows the
    /// reader skipped get it empty, or are copied unchanged).
    fn delimited(&self) -> Result<()> {
        let docs = &self.found.docs;
        let fields = AnnotationFields::one(AnnotationField::Json, FIELD);
        let mut out = open_output(Some(self.path), &self.options.inputs)?;
        let output = out.name().to_string();
        let mut raw = docs.raw_reader()?;
        let mut specs = crate::annotate_output::AnnotatedInputs {
            options: self.options,
            output: &output,
            command: "--annotate",
            verb: "decontaminate",
            survivors_only: false,
            header: None,
        };
        for (i, input) in docs.inputs.iter().enumerate() {
            let spec = specs.next(input)?;
            let mut annotator =
                neardup_io::annotate::InputAnnotator::open(&spec, &fields, &mut out)
                    .map_err(failed)?;
            for doc in docs.input_docs(i) {
                let value = self.value(doc)?;
                let line = docs.place(doc).line;
                annotator
                    .document_json(line, raw.read(doc)?, &[&value])
                    .map_err(failed)?;
            }
            annotator.finish().map_err(failed)?;
        }
        finish(out)
    }

    /// Parquet: the clean rows, or (`annotate`) every row with a string column of the
    /// items as JSON (null for a row the reader skipped), after the input's columns.
    fn parquet(&self, annotate: bool) -> Result<()> {
        let docs = &self.found.docs;
        if annotate {
            for input in &docs.inputs {
                let schema = neardup_io::parquet::schema_of(&input.path)?;
                if schema.fields().iter().any(|f| f.name() == FIELD) {
                    return Err(BadRecord(format!(
                        "{}: the file already has a column \"{FIELD}\"",
                        input.path.display()
                    ))
                    .into());
                }
            }
        }
        let mut out = crate::parquet_output::open(Some(self.path), &self.options.inputs)?;
        let name = out.name().to_string();
        let options = neardup_io::parquet::ParquetOutput::default();
        let mut rewriter = neardup_io::parquet::Rewriter::new(&mut out, &name, &options);
        let is_kept = |doc: u32| self.matches(doc).is_empty();
        for input in 0..docs.inputs.len() {
            let path = &docs.inputs[input].path;
            if !annotate {
                let mut keep = crate::parquet_output::kept_rows(docs, input, &is_kept);
                rewriter.add(path, &mut keep, None)?;
                continue;
            }
            let mut next = docs.input_docs(input).peekable();
            let mut extra = |_first: u64, rows: &[u64]| {
                let mut values = Vec::with_capacity(rows.len());
                for &row in rows {
                    while next.peek().is_some_and(|&d| docs.place(d).record < row) {
                        next.next();
                    }
                    let doc = next.peek().filter(|&&d| docs.place(d).record == row);
                    values.push(match doc {
                        Some(&d) => Some(self.value(d).map_err(|e| {
                            neardup_io::Error::InvalidOptions(format!("row {row}: {e}"))
                        })?),
                        None => None,
                    });
                }
                let column: StringArray = values
                    .iter()
                    .map(|v| v.as_deref().map(String::from_utf8_lossy))
                    .collect();
                let field = Arc::new(Field::new(FIELD, DataType::Utf8, true));
                Ok(vec![(field, Arc::new(column) as ArrayRef)])
            };
            rewriter.add(path, &mut |_| true, Some(&mut extra))?;
        }
        rewriter.finish()?;
        out.finish()?;
        Ok(())
    }
}

/// An annotating error as the command reports it; a field taken is named without
/// annotate's flags, which decontaminate has not.
fn failed(e: AnnotateError) -> anyhow::Error {
    match e {
        AnnotateError::Clash { path, line, field } => BadRecord(format!(
            "{path}:{line}: the record already has a field {field:?}"
        ))
        .into(),
        e => crate::annotate_output::failed(e),
    }
}

/// `line` (a JSON object and its line end) with `"contamination": value` before its
/// closing brace, into `buf`; `None` if the object has that key already.
fn annotate_line(line: &[u8], value: &[u8], buf: &mut Vec<u8>) -> Option<()> {
    let body_end = line.iter().rposition(|b| *b == b'}').unwrap_or(line.len());
    let body = &line[..body_end];
    if memchr::memmem::find(body, b"contamination").is_some() {
        let parsed: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&line[..(body_end + 1).min(line.len())]).ok()?;
        if parsed.contains_key("contamination") {
            return None;
        }
    }
    let empty = body
        .iter()
        .rev()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    buf.extend_from_slice(body);
    buf.extend_from_slice(if empty { b"\"" } else { b", \"" });
    buf.extend_from_slice(b"contamination\": ");
    buf.extend_from_slice(value);
    buf.extend_from_slice(&line[body_end..]);
    Some(())
}
