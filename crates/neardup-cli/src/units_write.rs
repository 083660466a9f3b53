//! `--unit`'s records written back in their input's format: the text rewritten without
//! its removed units (`dedup --unit`), or the removed spans added (`annotate --unit`).
//!
//! Only the text changes: a JSON line gets the text field's value encoded anew (every
//! other byte stays); a CSV/TSV row gets the text column's value (the other values kept,
//! the row quoted as the `csv` crate writes it where a value needs quotes); a line of the
//! lines format keeps its `ID<TAB>` and line end; a Parquet row is written with the
//! input's schema, the text column's values replaced in place. A record that lost no unit
//! is written as its exact bytes.

use std::borrow::Cow;
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use arrow_array::{ArrayRef, LargeStringArray, StringArray, StringViewArray};
use arrow_schema::{DataType, Field, FieldRef};
use neardup::units::{DocUnits, SpilledUnits, UnitKind, UnitOutcome};
use neardup_io::annotate::{AnnotationField, AnnotationFields, Delimiting, InputAnnotator};
use neardup_io::documents::{Documents, InputInfo};
use neardup_io::{Format, OutputFile};

use crate::annotate_output::{delimiting, failed, AnnotatedInputs};
use crate::errors::{usage, BadRecord};
use crate::settings::RunSettings;

/// Refuses, after reading, inputs a unit run cannot write: formats without a text to
/// rewrite, CSV/TSV texts joined from several columns or decoded from escapes, lines cut
/// into lines or paragraphs (each line is one of each), and inputs of different shapes
/// for the one output (as dedup refuses them).
pub fn refuse_inputs(
    docs: &Documents,
    args: &RunSettings,
    kind: UnitKind,
    annotate: bool,
) -> Result<()> {
    let opts = args.input.read_options();
    // The reference is never written: its format does not matter.
    for info in &docs.inputs[docs.reference_inputs()..] {
        let path = info.path.display();
        match info.format {
            Format::Jsonl | Format::Parquet => {}
            Format::Csv | Format::Tsv => {
                if opts.text_columns.len() != 1 {
                    usage!(
                        "--unit rewrites one text column, but the text of {path} is {} columns \
                         joined; give one with --text-columns",
                        opts.text_columns.len()
                    );
                }
                if opts.tsv_escapes {
                    usage!("--unit writes TSV values as they are, not escaped: --tsv-escapes does not apply");
                }
                let stream = !std::fs::metadata(&info.path).is_ok_and(|m| m.is_file());
                if annotate && stream {
                    usage!("annotate --unit reads a CSV/TSV input twice, so not from standard input or a pipe ({path}); give a file");
                }
            }
            Format::Lines if annotate => usage!(
                "annotate --unit adds a field or column to JSONL, CSV, TSV and Parquet \
                 records; {path} is lines (its records have no place for one)"
            ),
            Format::Lines if !matches!(kind, UnitKind::Sentences(_)) => usage!(
                "each line of {path} (lines) is one document, so its only {kind} is the \
                 whole line: dedup without --unit removes repeated lines, --unit \
                 sentences:N repeated sentences inside them"
            ),
            Format::Lines => {}
            other => usage!(
                "--unit rewrites the text of JSONL, CSV, TSV, lines and Parquet records; \
                 {path} is {}",
                other.name()
            ),
        }
    }
    crate::dedup_output::refuse_after_reading(docs, args)?;
    let inputs = &docs.inputs[docs.reference_inputs()..];
    if let crate::per_input::Layout::PerInput(_) =
        crate::per_input::layout(inputs, args.output.as_deref())
    {
        usage!("--unit writes one output file, not one per input: name a file with -o");
    }
    Ok(())
}

/// A document's removed spans as JSON, from its units.
pub type Spans<'a> = dyn Fn(&DocUnits) -> Result<String> + 'a;

/// A unit run's documents, each asked for once, in ascending order: held in memory, or
/// read back from a spilled run.
pub trait UnitDocs {
    /// True if document `doc` had units and lost every one (any order).
    fn is_emptied(&self, doc: u32) -> bool;
    /// Document `doc`'s text and units; `doc` after the last one asked for.
    fn doc(&mut self, doc: u32) -> Result<(Cow<'_, str>, Cow<'_, DocUnits>)>;
}

/// An in-memory run's documents.
pub struct InMemory<'a> {
    pub texts: &'a [String],
    pub outcome: &'a UnitOutcome,
}

impl UnitDocs for InMemory<'_> {
    fn is_emptied(&self, doc: u32) -> bool {
        self.outcome.docs[doc as usize].is_emptied()
    }

    fn doc(&mut self, doc: u32) -> Result<(Cow<'_, str>, Cow<'_, DocUnits>)> {
        let d = doc as usize;
        Ok((
            Cow::Borrowed(&self.texts[d]),
            Cow::Borrowed(&self.outcome.docs[d]),
        ))
    }
}

/// A spilled run's documents, read back in order (those not asked for are passed over).
pub struct Spilled {
    pub units: SpilledUnits,
    pub next: u32,
}

impl UnitDocs for Spilled {
    fn is_emptied(&self, doc: u32) -> bool {
        self.units.is_emptied(doc)
    }

    fn doc(&mut self, doc: u32) -> Result<(Cow<'_, str>, Cow<'_, DocUnits>)> {
        loop {
            let got = self.units.next();
            self.next += 1;
            match got {
                Some(read) if self.next == doc + 1 => {
                    let (text, units) = read?;
                    return Ok((Cow::Owned(text), Cow::Owned(units)));
                }
                Some(read) => drop(read?),
                None => anyhow::bail!("the spilled unit run has no document {doc}"),
            }
        }
    }
}

/// Where a record's text is, to put a rewritten one in its place.
enum TextPlace {
    /// A JSON line's field.
    Jsonl(String),
    /// A CSV/TSV row's column, by its number in the header.
    Delimited(usize, Delimiting),
    /// A line's text after its `ID<TAB>`, if any.
    Lines,
}

impl TextPlace {
    fn new(info: &InputInfo, args: &RunSettings) -> Result<TextPlace> {
        let opts = args.input.read_options();
        Ok(match info.format {
            Format::Jsonl => TextPlace::Jsonl(opts.text_field),
            Format::Lines => TextPlace::Lines,
            format => {
                let d = delimiting(format, &args.input);
                let header = info.header.as_deref().unwrap_or_default();
                let names = csv_fields(header, d).unwrap_or_default();
                let name = opts.text_columns.first().map(String::as_str);
                let Some(column) = names
                    .iter()
                    .position(|n| Some(&n[..]) == name.map(str::as_bytes))
                else {
                    usage!(
                        "{}: no column {:?} in the header",
                        info.path.display(),
                        name.unwrap_or_default()
                    );
                };
                TextPlace::Delimited(column, d)
            }
        })
    }

    /// The record `raw` (its line end included) with `text` in place of `old`; `None` if
    /// the text is not where it was read from.
    fn rewrite(&self, raw: &[u8], old: &str, text: &str) -> Option<Vec<u8>> {
        let body_end = raw.len() - line_end(raw);
        let (body, end) = raw.split_at(body_end);
        let mut out = match self {
            TextPlace::Jsonl(field) => crate::units_output::replace_json_field(body, field, text)?,
            TextPlace::Lines => {
                let prefix = body.strip_suffix(old.as_bytes())?;
                [prefix, text.as_bytes()].concat()
            }
            TextPlace::Delimited(column, d) => {
                let mut fields = csv_fields(body, *d)?;
                *fields.get_mut(*column)? = text.as_bytes().to_vec();
                csv_row(&fields, *d)?
            }
        };
        out.extend_from_slice(end);
        Some(out)
    }
}

/// The length of `raw`'s line end: `\r\n`, `\n`, or none.
fn line_end(raw: &[u8]) -> usize {
    if raw.ends_with(b"\r\n") {
        2
    } else {
        usize::from(raw.ends_with(b"\n"))
    }
}

fn csv_reader(row: &[u8], d: Delimiting) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(d.delimiter)
        .quote(d.quote.unwrap_or(b'"'))
        .quoting(d.quote.is_some())
        .from_reader(row)
}

/// The values of one CSV/TSV row (no line end), unquoted as the reader reads them.
fn csv_fields(row: &[u8], d: Delimiting) -> Option<Vec<Vec<u8>>> {
    let row = row.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(row);
    let mut record = csv::ByteRecord::new();
    csv_reader(row, d).read_byte_record(&mut record).ok()?;
    Some(record.iter().map(<[u8]>::to_vec).collect())
}

/// `fields` as one row without a line end, quoted where a value needs it (TSV without a
/// quote byte: never; its values hold no tab or line end, the text's kept bytes included).
fn csv_row(fields: &[Vec<u8>], d: Delimiting) -> Option<Vec<u8>> {
    let style = match d.quote {
        Some(_) => csv::QuoteStyle::Necessary,
        None => csv::QuoteStyle::Never,
    };
    let mut writer = csv::WriterBuilder::new()
        .delimiter(d.delimiter)
        .quote(d.quote.unwrap_or(b'"'))
        .quote_style(style)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(fields).ok()?;
    let mut row = writer.into_inner().ok()?;
    row.pop(); // the terminator
    Some(row)
}

/// Writes every non-reference document that keeps a unit, its text rewritten without
/// the removed ones, in its input's format; returns how many were written.
pub fn write_rewritten(
    docs: &Documents,
    source: &mut dyn UnitDocs,
    args: &RunSettings,
) -> Result<u64> {
    let reference = docs.reference_docs();
    let Some(first) = docs.inputs.get(docs.reference_inputs()) else {
        return Ok(0);
    };
    if first.format == Format::Parquet {
        return write_parquet(docs, source, args, None);
    }
    let place = TextPlace::new(first, args)?;
    let mut writer =
        crate::dedup_output::create_writer(args, first.format, first.header.as_deref())?;
    let mut raw = docs.raw_reader()?;
    for doc in reference..docs.len() as u32 {
        let (old, units) = source.doc(doc)?;
        let Some(text) = units.rewrite(&old) else {
            raw.read(doc)?; // read in order: passed over
            continue;
        };
        let mut record = docs.record(doc, &mut raw)?.into_owned();
        if !units.removed.is_empty() {
            record.raw = place
                .rewrite(&record.raw, &old, &text)
                .ok_or_else(|| cannot_rewrite(docs, doc))?;
        }
        writer.write(&record)?;
    }
    let written = writer.written();
    writer.finish()?;
    Ok(written)
}

pub fn cannot_rewrite(docs: &Documents, doc: u32) -> anyhow::Error {
    BadRecord(format!(
        "{}:{}: the record cannot be rewritten: its text is not where it was read from \
         (not UTF-8, or not one record of its format)",
        docs.source_of(doc),
        docs.place(doc).line
    ))
    .into()
}

/// `annotate --unit` of CSV/TSV inputs: each read again beside the documents' bytes by
/// neardup-io's annotator, a column of the spans as JSON added to the header and to every
/// row (empty for a row the reader skipped); returns the documents written.
pub fn annotate_delimited(
    docs: &Documents,
    args: &RunSettings,
    field: &str,
    source: &mut dyn UnitDocs,
    spans: &Spans,
    out: &mut OutputFile,
) -> Result<u64> {
    let fields = AnnotationFields::one(AnnotationField::Json, field).replace(args.force);
    let output = out.name().to_string();
    let mut raw = docs.raw_reader()?;
    let mut specs = AnnotatedInputs {
        options: &args.input,
        output: &output,
        command: "annotate --unit",
        verb: "annotate",
        survivors_only: false,
        header: None,
    };
    let mut written = 0;
    for (i, input) in docs.inputs.iter().enumerate().skip(docs.reference_inputs()) {
        let spec = specs.next(input)?;
        let mut annotator = InputAnnotator::open(&spec, &fields, out).map_err(failed)?;
        for doc in docs.input_docs(i) {
            let value = spans(&source.doc(doc)?.1)?;
            annotator
                .document_json(docs.place(doc).line, raw.read(doc)?, &[value.as_bytes()])
                .map_err(failed)?;
        }
        written += annotator.finish().map_err(failed)?;
    }
    Ok(written)
}

/// Parquet: the rows of every non-reference input with the input's schema, `dedup`'s
/// without the rows left empty and with the text column rewritten, `annotate`'s (`Some`:
/// the column's name and the spans of a document as JSON) every row with a string column
/// of the spans added (null for a row the reader skipped); returns the documents written.
pub fn write_parquet(
    docs: &Documents,
    source: &mut dyn UnitDocs,
    args: &RunSettings,
    annotate: Option<(&str, &Spans)>,
) -> Result<u64> {
    let mut out = crate::parquet_output::open(args.output.as_deref(), &args.input.inputs)?;
    let name = out.name().to_string();
    let options = args.parquet.unwrap_or_default();
    let mut rewriter = neardup_io::parquet::Rewriter::new(&mut out, &name, &options);
    let text_field = args.input.read_options().text_field;
    let mut written = 0;
    // Asked whether a row is kept, then for the kept rows' texts, batch by batch.
    let source = RefCell::new(source);
    for input in docs.reference_inputs()..docs.inputs.len() {
        let path = &docs.inputs[input].path;
        let column = match annotate {
            None => text_column(path, &text_field)?,
            Some((field, _)) => spans_column(path, field, args.force)?,
        };
        let docs_of = docs.input_docs(input);
        let is_kept = |d: u32| annotate.is_some() || !source.borrow().is_emptied(d);
        let mut rows_kept = crate::parquet_output::kept_rows(docs, input, &is_kept);
        // Annotate writes every row, documents or not.
        let mut keep = |row: u64| annotate.is_some() || rows_kept(row);
        let mut next = docs_of.clone().peekable();
        let mut extra = |_first: u64, rows: &[u64]| {
            let mut values: Vec<Option<String>> = Vec::with_capacity(rows.len());
            for &row in rows {
                while next.peek().is_some_and(|&d| docs.place(d).record < row) {
                    next.next();
                }
                let doc = next
                    .peek()
                    .copied()
                    .filter(|&d| docs.place(d).record == row);
                let Some(d) = doc else {
                    values.push(None);
                    continue;
                };
                let mut source = source.borrow_mut();
                let (text, units) = source.doc(d).map_err(io_error(row))?;
                values.push(match annotate {
                    Some((_, spans)) => Some(spans(&units).map_err(io_error(row))?),
                    None => units.rewrite(&text),
                });
            }
            written += values.iter().filter(|v| v.is_some()).count() as u64;
            Ok(vec![(column.clone(), strings(column.data_type(), &values))])
        };
        rewriter.add(path, &mut keep, Some(&mut extra))?;
    }
    rewriter.finish()?;
    out.finish()?;
    Ok(written)
}

fn io_error(row: u64) -> impl Fn(anyhow::Error) -> neardup_io::Error {
    move |e| neardup_io::Error::InvalidOptions(format!("row {row}: {e}"))
}

/// The text column of a Parquet input, to be replaced where it stands: a top-level
/// string column (a nested or dictionary-encoded one is refused).
fn text_column(path: &Path, name: &str) -> Result<FieldRef> {
    let schema = neardup_io::parquet::schema_of(path)?;
    match schema.fields().iter().find(|f| f.name() == name) {
        Some(f)
            if matches!(
                f.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            ) =>
        {
            Ok(f.clone())
        }
        _ => usage!(
            "--unit rewrites a top-level string column of a Parquet file; the text {name:?} \
             of {} is not one (nested, or dictionary-encoded)",
            path.display()
        ),
    }
}

/// The column `annotate --unit` adds: the spans as a JSON string; one of the input's of
/// that name is an error unless `force` replaces it.
fn spans_column(path: &Path, name: &str, force: bool) -> Result<FieldRef> {
    let schema = neardup_io::parquet::schema_of(path)?;
    if !force && schema.fields().iter().any(|f| f.name() == name) {
        return Err(BadRecord(format!(
            "{}: the file already has a column {name:?}; --annotate-prefix names the new \
             one apart, --force replaces it",
            path.display()
        ))
        .into());
    }
    Ok(Arc::new(Field::new(name, DataType::Utf8, true)))
}

/// `values` as an Arrow string array of type `kind` (one of the three string types).
fn strings(kind: &DataType, values: &[Option<String>]) -> ArrayRef {
    let values = values.iter().map(Option::as_deref);
    match kind {
        DataType::LargeUtf8 => Arc::new(values.collect::<LargeStringArray>()),
        DataType::Utf8View => Arc::new(values.collect::<StringViewArray>()),
        _ => Arc::new(values.collect::<StringArray>()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_row_gets_its_text_replaced_and_keeps_the_other_values() {
        let d = Delimiting {
            delimiter: b',',
            quote: Some(b'"'),
        };
        let place = TextPlace::Delimited(1, d);
        let raw = b"7,\"Intro.\n\nBoiler, plate.\",\"say \"\"hi\"\"\"\r\n";
        let out = place.rewrite(raw, "", "Intro.\n").unwrap();
        assert_eq!(out, b"7,\"Intro.\n\",\"say \"\"hi\"\"\"\r\n");
        let tsv = TextPlace::Delimited(
            0,
            Delimiting {
                delimiter: b'\t',
                quote: None,
            },
        );
        assert_eq!(
            tsv.rewrite(b"a \"b\" c\tx", "", "a \"b\"").unwrap(),
            b"a \"b\"\tx"
        );
        assert_eq!(place.rewrite(b"only", "", "x"), None, "no second column");
    }

    #[test]
    fn a_line_keeps_its_id_and_line_end() {
        let out = TextPlace::Lines.rewrite(b"id7\tOne. Two.\r\n", "One. Two.", "Two.");
        assert_eq!(out.unwrap(), b"id7\tTwo.\r\n");
        assert_eq!(TextPlace::Lines.rewrite(b"other\n", "One.", "x"), None);
    }
}
