//! Annotating instead of removing: every record of an input written back in its own
//! format with fields (JSONL) or columns (CSV/TSV) added that say what deduplication
//! decided ([`Annotation`]), so a pipeline can filter, count or upsample later.
//!
//! [`InputAnnotator`] reads the input a second time as bytes, alongside the documents'
//! exact bytes the caller hands it in order, so the records the readers skipped (blank
//! lines, malformed ones, rows with no text) are written back too, where they were:
//!
//! - **JSONL.** A document's line keeps its own bytes; the fields go before its closing
//!   brace (after any whitespace inside it is kept; the line end, `\r\n` included, and a
//!   BOM stay as they were; `{}` gets no comma). A skipped line that is a JSON object gets
//!   the fields of [`Annotation::SKIPPED`]; any other skipped line is written unchanged.
//! - **CSV/TSV.** The names are added to the header, the values to each document's row
//!   (CSV-quoted where needed; TSV without a quote byte has tabs and line ends in a value
//!   turned into spaces). A row the reader skipped that has the header's width (a row
//!   with no text) gets the values of [`Annotation::SKIPPED`]; any other (a short row, a
//!   quoted field never closed) is written unchanged.
//!
//! A field or column that already has one of the names is [`AnnotateError::Clash`],
//! naming the file, line and field, unless [`AnnotationFields::replace`] is on: then its
//! value is replaced where it stands (a JSON line is rewritten with the other keys in
//! their order; a CSV/TSV column keeps its place) and only the missing fields are added.

use std::borrow::Cow;
use std::io::{BufRead, Write};
use std::path::Path;

use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::documents::DocId;
use crate::open::{open_file, ErrorContext};
use crate::text::{strip_bom, strip_line_end, BOM};
use crate::{Error, Format};

/// What deduplication decided about one record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Annotation<'a> {
    /// The document number (0-based, in input order) of its cluster's kept document; its
    /// own for a document in no cluster; `None` for a record that is not compared.
    pub cluster: Option<u64>,
    /// Documents in its cluster (1 for a document in no cluster); `None` as `cluster`.
    pub cluster_size: Option<u64>,
    /// Whether dedup keeps it.
    pub kept: bool,
    /// The id of the kept document it duplicates (`None` when it is not removed).
    pub duplicate_of: Option<&'a DocId>,
    /// Its similarity to that document (`None` when it is not removed or none is known).
    pub jaccard: Option<f64>,
}

impl Annotation<'static> {
    /// A record that was not compared (skipped by the reader, or with no text to
    /// compare): not kept, everything else null.
    pub const SKIPPED: Annotation<'static> = Annotation {
        cluster: None,
        cluster_size: None,
        kept: false,
        duplicate_of: None,
        jaccard: None,
    };
}

/// One field of an [`Annotation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnnotationField {
    /// [`Annotation::cluster`].
    Cluster,
    /// [`Annotation::cluster_size`].
    ClusterSize,
    /// [`Annotation::kept`].
    Kept,
    /// [`Annotation::duplicate_of`].
    DuplicateOf,
    /// [`Annotation::jaccard`].
    Jaccard,
    /// A value the caller gives as JSON with [`InputAnnotator::document_json`] (not one
    /// of [`Annotation`]'s; `decontaminate --annotate`'s items); null on the records the
    /// readers skipped. Not in [`AnnotationField::ALL`].
    Json,
}

impl AnnotationField {
    /// Every field, in the order they are written.
    pub const ALL: [AnnotationField; 5] = [
        AnnotationField::Cluster,
        AnnotationField::ClusterSize,
        AnnotationField::Kept,
        AnnotationField::DuplicateOf,
        AnnotationField::Jaccard,
    ];

    /// Its name without a prefix.
    pub fn name(self) -> &'static str {
        match self {
            AnnotationField::Cluster => "cluster",
            AnnotationField::ClusterSize => "cluster_size",
            AnnotationField::Kept => "kept",
            AnnotationField::DuplicateOf => "duplicate_of",
            AnnotationField::Jaccard => "jaccard",
            AnnotationField::Json => "json",
        }
    }
}

/// Which fields are written, under which names, and what a name already taken means.
#[derive(Clone, Debug)]
pub struct AnnotationFields {
    fields: Vec<(AnnotationField, String)>,
    replace: bool,
    /// Each name's bytes, when every name is of letters, digits, `_`, `-`, `.` and
    /// spaces: such a name can be written in JSON only as itself or with `\u` escapes, so
    /// a document line holding neither has none of the names (and is not parsed).
    literal: Option<Vec<memchr::memmem::Finder<'static>>>,
    /// Each name as a JSON key with its colon (`"cluster":`), written once, not per line.
    keys: Vec<Vec<u8>>,
}

impl AnnotationFields {
    /// Every field, each named `prefix` + its name (`""` for the plain names).
    pub fn all(prefix: &str) -> Self {
        Self::named(
            AnnotationField::ALL
                .iter()
                .map(|f| (*f, format!("{prefix}{}", f.name())))
                .collect(),
        )
    }

    /// One field under a name of the caller's (`dedup --cluster-size-field NAME`).
    pub fn one(field: AnnotationField, name: impl Into<String>) -> Self {
        Self::named(vec![(field, name.into())])
    }

    fn named(fields: Vec<(AnnotationField, String)>) -> Self {
        let plain = |n: &String| {
            n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-. ".contains(&b))
        };
        let literal = fields.iter().all(|(_, n)| plain(n)).then(|| {
            fields
                .iter()
                .map(|(_, n)| memchr::memmem::Finder::new(n.as_bytes()).into_owned())
                .collect()
        });
        let keys = fields
            .iter()
            .map(|(_, n)| {
                let mut key = serde_json::to_vec(n).expect("a string serializes");
                key.push(b':');
                key
            })
            .collect();
        AnnotationFields {
            fields,
            replace: false,
            literal,
            keys,
        }
    }

    /// True if the JSON text `body` cannot hold a key of one of the names.
    fn absent_from(&self, body: &[u8]) -> bool {
        self.literal.as_ref().is_some_and(|finders| {
            memchr::memmem::find(body, b"\\u").is_none()
                && finders.iter().all(|f| f.find(body).is_none())
        })
    }

    /// Replace the value of a field that already has one of the names (default: refuse
    /// it, [`AnnotateError::Clash`]).
    pub fn replace(mut self, on: bool) -> Self {
        self.replace = on;
        self
    }

    /// True if a field already in a record is replaced (`--force`), not refused.
    pub fn replaces(&self) -> bool {
        self.replace
    }

    /// The names, in the order they are written.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(_, n)| n.as_str())
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|(_, n)| n == name)
    }
}

/// Why an input could not be annotated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnnotateError {
    /// A record already has a field of one of the annotation's names.
    #[error(
        "{path}:{line}: the record already has a field {field:?}; choose other names with \
         --annotate-prefix, or replace its value with --force"
    )]
    Clash {
        /// The input.
        path: String,
        /// The line (the header's, for CSV/TSV).
        line: u64,
        /// The name taken.
        field: String,
    },
    /// The input's bytes are not those read before (it changed, or a line end the
    /// annotator does not count as the reader does, such as a lone `\r` in CSV).
    #[error(
        "{path}:{line}: the input is not as it was when read: it changed, or it ends lines \
         with a lone \\r, which annotate does not follow"
    )]
    Changed {
        /// The input.
        path: String,
        /// The line where it differs.
        line: u64,
    },
    /// A value to replace could not be found in a record (a CSV row with fewer columns
    /// than its header, a JSON line that is not UTF-8).
    #[error("{path}:{line}: cannot replace {field:?} in this record: {reason}")]
    CannotReplace {
        /// The input.
        path: String,
        /// The record's line.
        line: u64,
        /// The field.
        field: String,
        /// Why.
        reason: &'static str,
    },
    /// Reading the input or writing the output failed.
    #[error(transparent)]
    Io(#[from] Error),
}

type Result<T> = std::result::Result<T, AnnotateError>;

/// How a CSV/TSV input separates and quotes its fields.
#[derive(Clone, Copy, Debug)]
pub struct Delimiting {
    /// The field delimiter.
    pub delimiter: u8,
    /// The quote byte, if fields may be quoted (CSV: `"`; TSV: none unless given).
    pub quote: Option<u8>,
}

/// An input to annotate, as it was read.
#[derive(Clone, Copy, Debug)]
pub struct AnnotatedInput<'a> {
    /// The input (a file: it is read a second time).
    pub path: &'a Path,
    /// The format it was read as.
    pub format: Format,
    /// CSV/TSV: its header line as read ([`crate::Reader::header_raw`]).
    pub header: Option<&'a [u8]>,
    /// CSV/TSV: how its fields are split.
    pub delimiting: Delimiting,
    /// Skipped lines longer than this many bytes are copied unchanged, not held.
    pub limit: usize,
    /// The output's name, for errors.
    pub output: &'a str,
    /// CSV/TSV: the output has its header already (from an earlier input of the same
    /// header): the header is not written again.
    pub header_written: bool,
    /// Only the documents given to [`InputAnnotator::document`] are written: records the
    /// readers skipped and documents passed to [`InputAnnotator::leave_out`] are not
    /// (`dedup --cluster-size-field`: the survivors, each with its cluster size).
    pub survivors_only: bool,
}

/// A CSV/TSV input's shape, from its header.
struct Delimited {
    delimiting: Delimiting,
    /// The columns the header already has of the annotation's names (by field).
    columns: Vec<Option<usize>>,
    /// The header's number of columns.
    width: usize,
    /// Skipped lines: the last one ended inside a quoted field.
    in_quote: bool,
}

/// Writes one input back annotated; see the [module](self) documentation.
pub struct InputAnnotator<'w> {
    stream: Box<dyn BufRead + Send>,
    ctx: ErrorContext,
    out: &'w mut dyn Write,
    output: String,
    /// [`AnnotatedInput::survivors_only`].
    survivors_only: bool,
    fields: &'w AnnotationFields,
    /// CSV/TSV: how fields are split, and the columns the header already has of the
    /// annotation's names (field index → column index).
    delimited: Option<Delimited>,
    /// The number of the next line of `stream`.
    next_line: u64,
    /// The longest skipped line held to be annotated; longer ones are copied through.
    limit: usize,
    line: Vec<u8>,
    /// The record being written (reused).
    buf: Vec<u8>,
    values: Vec<Vec<u8>>,
    written: u64,
}

impl<'w> InputAnnotator<'w> {
    /// Opens the input of `spec` to be written annotated with `fields` to `out`; the
    /// header, annotated, is written at once.
    pub fn open(
        spec: &AnnotatedInput,
        fields: &'w AnnotationFields,
        out: &'w mut dyn Write,
    ) -> Result<Self> {
        let input = open_file(spec.path)?;
        let mut this = InputAnnotator {
            stream: input.reader,
            ctx: input.ctx,
            out,
            output: spec.output.to_string(),
            survivors_only: spec.survivors_only,
            fields,
            delimited: None,
            next_line: 1,
            limit: spec.limit,
            line: Vec::new(),
            buf: Vec::new(),
            values: vec![Vec::new(); fields.fields.len()],
            written: 0,
        };
        match spec.format {
            Format::Jsonl => {}
            Format::Csv | Format::Tsv => {
                let header = spec.header.unwrap_or_default();
                this.header(header, spec.delimiting, !spec.header_written)?;
            }
            other => {
                return Err(Error::InvalidOptions(format!(
                    "annotate writes JSONL, CSV and TSV; {} is {}",
                    spec.path.display(),
                    other.name()
                ))
                .into())
            }
        }
        Ok(this)
    }

    /// Documents written.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes the records skipped before line `line`, then the document whose exact bytes
    /// are `raw` (starting at that line), annotated.
    pub fn document(&mut self, line: u64, raw: &[u8], annotation: &Annotation) -> Result<()> {
        self.start_document(line, raw)?;
        self.set_values(annotation);
        self.write_document(line, raw)
    }

    /// [`document`](Self::document) with each field's value given as a JSON text, in the
    /// fields' order ([`AnnotationField::Json`]): a JSON line gets it as it is, a CSV/TSV
    /// row as one field (quoted as needed; null empty).
    pub fn document_json(&mut self, line: u64, raw: &[u8], values: &[&[u8]]) -> Result<()> {
        self.start_document(line, raw)?;
        let csv = self.delimited.as_ref().map(|d| d.delimiting);
        for (value, given) in self.values.iter_mut().zip(values) {
            value.clear();
            match csv {
                Some(_) if *given == b"null" => {}
                Some(d) => csv_field(value, given, d),
                None => value.extend_from_slice(given),
            }
        }
        self.write_document(line, raw)
    }

    /// Writes the records skipped before line `line` and consumes the document `raw`.
    fn start_document(&mut self, line: u64, raw: &[u8]) -> Result<()> {
        self.skip_to(line)?;
        self.expect(raw)?;
        self.next_line += self.lines_in(raw);
        if let Some(d) = self.delimited.as_mut() {
            d.in_quote = false; // a document starts a row
        }
        Ok(())
    }

    /// Writes the document `raw` at `line` with `self.values`.
    fn write_document(&mut self, line: u64, raw: &[u8]) -> Result<()> {
        let line_no = line;
        if self.delimited.is_some() {
            self.annotate_row(raw, line_no)?;
        } else {
            let done = self.annotate_object(raw, line_no, true)?;
            if !done {
                return Err(self.changed(line_no));
            }
        }
        self.written += 1;
        Ok(())
    }

    /// Reads past the document at `line` whose exact bytes are `raw` without writing it
    /// (with [`AnnotatedInput::survivors_only`]), and past the records skipped before it.
    pub fn leave_out(&mut self, line: u64, raw: &[u8]) -> Result<()> {
        self.skip_to(line)?;
        self.expect(raw)?;
        self.next_line += self.lines_in(raw);
        Ok(())
    }

    /// Writes a CSV/TSV line the reader skipped with [`Annotation::SKIPPED`]'s values if
    /// it is a whole row of the header's width (a row with no text); false if it is not
    /// (a short row, a line of a quoted field spanning lines), to be written unchanged.
    fn skipped_row(&mut self, raw: &[u8], line: u64) -> Result<bool> {
        let d = self.delimited.as_mut().expect("a delimited input");
        let was_in_quote = d.in_quote;
        if let Some(q) = d.delimiting.quote {
            let quotes = memchr::memchr_iter(q, raw).count();
            d.in_quote ^= quotes % 2 == 1;
        }
        if was_in_quote || d.in_quote {
            return Ok(false);
        }
        if split_row(strip_line_end(raw), d.delimiting).len() != d.width {
            return Ok(false);
        }
        self.set_values(&Annotation::SKIPPED);
        self.annotate_row(raw, line)?;
        Ok(true)
    }

    /// Writes the records after the last document, and flushes.
    pub fn finish(mut self) -> Result<u64> {
        self.skip_to(u64::MAX)?;
        self.out.flush().map_err(|e| self.write_error(e))?;
        Ok(self.written)
    }

    /// The lines a document's bytes span: one for a JSON line (a JSON text holds no raw
    /// line break), counted for a CSV/TSV record (quoted fields may hold some).
    fn lines_in(&self, raw: &[u8]) -> u64 {
        match self.delimited {
            None => u64::from(raw.ends_with(b"\n")),
            Some(_) => memchr::memchr_iter(b'\n', raw).count() as u64,
        }
    }

    fn changed(&self, line: u64) -> AnnotateError {
        AnnotateError::Changed {
            path: self.ctx.source.to_string(),
            line,
        }
    }

    fn write_error(&self, error: std::io::Error) -> AnnotateError {
        Error::Write {
            path: self.output.clone(),
            error,
        }
        .into()
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(|e| self.write_error(e))
    }

    /// Writes `self.buf`, keeping its allocation.
    fn write_buf(&mut self) -> Result<()> {
        let buf = std::mem::take(&mut self.buf);
        let done = self.write(&buf);
        self.buf = buf;
        done
    }

    /// Consumes `raw` from the stream, which must hold exactly it.
    fn expect(&mut self, mut raw: &[u8]) -> Result<()> {
        while !raw.is_empty() {
            let buf = self
                .stream
                .fill_buf()
                .map_err(|e| self.ctx.read_error(Some(self.next_line), e))?;
            if buf.is_empty() {
                return Err(self.changed(self.next_line));
            }
            let n = buf.len().min(raw.len());
            if buf[..n] != raw[..n] {
                return Err(self.changed(self.next_line));
            }
            self.stream.consume(n);
            raw = &raw[n..];
        }
        Ok(())
    }

    /// Copies the lines before `line` (records the readers skipped), annotating a JSON
    /// line that is an object as [`Annotation::SKIPPED`].
    fn skip_to(&mut self, line: u64) -> Result<()> {
        while self.next_line < line {
            let held = self.read_line()?;
            if !held {
                // A line over the limit was copied (or dropped) as it was read.
                self.next_line += 1;
                continue;
            }
            if self.line.is_empty() {
                return Ok(()); // the end of the input
            }
            let raw = std::mem::take(&mut self.line);
            let number = self.next_line;
            self.next_line += 1;
            if self.survivors_only {
                self.line = raw;
                self.line.clear();
                continue;
            }
            let blank = strip_bom(strip_line_end(&raw))
                .iter()
                .all(u8::is_ascii_whitespace);
            let annotated = if blank {
                false
            } else if self.delimited.is_some() {
                self.skipped_row(&raw, number)?
            } else {
                self.set_values(&Annotation::SKIPPED);
                self.annotate_object(&raw, number, false)?
            };
            if !annotated {
                self.write(&raw)?;
            }
            self.line = raw;
            self.line.clear();
        }
        Ok(())
    }

    /// Reads the next line into `self.line`; false if it was longer than the limit and
    /// was copied to the output instead.
    fn read_line(&mut self) -> Result<bool> {
        self.line.clear();
        loop {
            let buf = self
                .stream
                .fill_buf()
                .map_err(|e| self.ctx.read_error(Some(self.next_line), e))?;
            if buf.is_empty() {
                return Ok(true);
            }
            let (n, end) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if self.line.len() + n > self.limit {
                // Too long to hold: copy what is held and the rest of the line through.
                let held = std::mem::take(&mut self.line);
                if !self.survivors_only {
                    self.write(&held)?;
                }
                return self.copy_rest_of_line().map(|()| false);
            }
            self.line.extend_from_slice(&buf[..n]);
            self.stream.consume(n);
            if end {
                return Ok(true);
            }
        }
    }

    fn copy_rest_of_line(&mut self) -> Result<()> {
        loop {
            let buf = self
                .stream
                .fill_buf()
                .map_err(|e| self.ctx.read_error(Some(self.next_line), e))?;
            if buf.is_empty() {
                return Ok(());
            }
            let (n, end) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let chunk = buf[..n].to_vec();
            self.stream.consume(n);
            if !self.survivors_only {
                self.write(&chunk)?;
            }
            if end {
                return Ok(());
            }
        }
    }

    /// Formats each field's value of `annotation` into `self.values`, as JSON (which CSV
    /// writes as it is but for null, which is empty, and strings, which are unquoted).
    fn set_values(&mut self, a: &Annotation) {
        let csv = self.delimited.as_ref().map(|d| d.delimiting);
        for ((field, _), value) in self.fields.fields.iter().zip(&mut self.values) {
            value.clear();
            match field {
                AnnotationField::Cluster => json_or_null(value, a.cluster),
                AnnotationField::ClusterSize => json_or_null(value, a.cluster_size),
                AnnotationField::Kept => {
                    value.extend_from_slice(if a.kept { b"true" } else { b"false" })
                }
                AnnotationField::DuplicateOf => match (a.duplicate_of, csv) {
                    (Some(id), Some(d)) => csv_field(value, id.to_string().as_bytes(), d),
                    (id, _) => json_or_null(value, id),
                },
                AnnotationField::Jaccard => json_or_null(value, a.jaccard),
                AnnotationField::Json => value.extend_from_slice(b"null"),
            }
            if csv.is_some() && value == b"null" {
                value.clear();
            }
        }
    }

    /// Writes the JSON object line `raw` with the fields added (or replaced); false if
    /// `raw` is not an object. A `document` was read as an object: if its keys cannot be
    /// scanned (a key that is not UTF-8), the fields are added after them all the same.
    fn annotate_object(&mut self, raw: &[u8], line: u64, document: bool) -> Result<bool> {
        let bom = if raw.starts_with(BOM) { BOM.len() } else { 0 };
        let content = strip_line_end(raw);
        let body_end = content
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(bom, |i| i + 1)
            .max(bom);
        let body = &content[bom..body_end];
        // A document was read as an object: its keys are scanned only if they may hold
        // one of the names.
        let unscanned = document && body.len() >= 2 && body.ends_with(b"}");
        let scan = if unscanned && self.fields.absent_from(body) {
            None
        } else {
            scan_object(body, self.fields)
        };
        let scan = match scan {
            Some(scan) => scan,
            None if unscanned => Scan {
                keys: usize::from(!body[1..body.len() - 1].iter().all(u8::is_ascii_whitespace)),
                taken: Vec::new(),
            },
            None => return Ok(false),
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.extend_from_slice(&raw[..bom]);
        let mut present = [false; AnnotationField::ALL.len()];
        if let Some(&field) = scan.taken.first() {
            if !self.fields.replace {
                return Err(AnnotateError::Clash {
                    path: self.ctx.source.to_string(),
                    line,
                    field: self.fields.fields[field].1.clone(),
                });
            }
            let spans =
                value_spans(body, self.fields).ok_or_else(|| AnnotateError::CannotReplace {
                    path: self.ctx.source.to_string(),
                    line,
                    field: self.fields.fields[field].1.clone(),
                    reason: "the line is not valid UTF-8",
                })?;
            let mut from = 0;
            for (field, span) in spans {
                buf.extend_from_slice(&body[from..span.start]);
                buf.extend_from_slice(&self.values[field]);
                present[field] = true;
                from = span.end;
            }
            buf.extend_from_slice(&body[from..body.len() - 1]);
        } else {
            buf.extend_from_slice(&body[..body.len() - 1]);
        }
        let mut comma = scan.keys > 0;
        for ((key, value), present) in self.fields.keys.iter().zip(&self.values).zip(present) {
            if present {
                continue;
            }
            if comma {
                buf.push(b',');
            }
            comma = true;
            buf.extend_from_slice(key);
            buf.extend_from_slice(value);
        }
        buf.push(b'}');
        buf.extend_from_slice(&raw[bom + body.len()..]);
        self.buf = buf;
        self.write_buf()?;
        Ok(true)
    }

    /// Reads the CSV/TSV header (which must be `header`), finds the annotation's names
    /// in it, and writes it with the missing names added.
    fn header(&mut self, header: &[u8], delimiting: Delimiting, write: bool) -> Result<()> {
        self.expect(header)?;
        let line = 1 + header
            .iter()
            .take(header.len().saturating_sub(1))
            .filter(|&&b| b == b'\n')
            .count() as u64;
        self.next_line += memchr::memchr_iter(b'\n', header).count() as u64;
        let content = strip_line_end(header);
        let names = strip_bom(content);
        let spans = split_row(names, delimiting);
        let mut columns = vec![None; self.fields.fields.len()];
        for (col, span) in spans.iter().enumerate() {
            let name = unquote(&names[span.clone()], delimiting.quote);
            if let Some(i) = std::str::from_utf8(&name)
                .ok()
                .and_then(|n| self.fields.position(n))
            {
                if !self.fields.replace {
                    return Err(AnnotateError::Clash {
                        path: self.ctx.source.to_string(),
                        line,
                        field: self.fields.fields[i].1.clone(),
                    });
                }
                columns[i].get_or_insert(col);
            }
        }
        let mut out = content.to_vec();
        for ((_, name), column) in self.fields.fields.iter().zip(&columns) {
            if column.is_none() {
                out.push(delimiting.delimiter);
                csv_field(&mut out, name.as_bytes(), delimiting);
            }
        }
        out.extend_from_slice(&header[content.len()..]);
        if write {
            self.write(&out)?;
        }
        self.delimited = Some(Delimited {
            delimiting,
            columns,
            width: spans.len(),
            in_quote: false,
        });
        Ok(())
    }

    /// Writes the CSV/TSV row `raw` with the values added (or replaced).
    fn annotate_row(&mut self, raw: &[u8], line: u64) -> Result<()> {
        let Delimited {
            delimiting,
            columns,
            ..
        } = self.delimited.as_ref().expect("a delimited input");
        let content = strip_line_end(raw);
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let mut from = 0;
        if columns.iter().any(Option::is_some) {
            let spans = split_row(content, *delimiting);
            let mut replaced: Vec<(usize, usize)> = columns
                .iter()
                .enumerate()
                .filter_map(|(field, col)| col.map(|c| (c, field)))
                .collect();
            replaced.sort_unstable();
            for (col, field) in replaced {
                let Some(span) = spans.get(col) else {
                    return Err(AnnotateError::CannotReplace {
                        path: self.ctx.source.to_string(),
                        line,
                        field: self.fields.fields[field].1.clone(),
                        reason: "the row has fewer columns than its header",
                    });
                };
                buf.extend_from_slice(&content[from..span.start]);
                buf.extend_from_slice(&self.values[field]);
                from = span.end;
            }
        }
        buf.extend_from_slice(&content[from..]);
        for (value, column) in self.values.iter().zip(columns) {
            if column.is_none() {
                buf.push(delimiting.delimiter);
                buf.extend_from_slice(value);
            }
        }
        buf.extend_from_slice(&raw[content.len()..]);
        self.buf = buf;
        self.write_buf()
    }
}

/// The fields of `rows` as Arrow columns, one row per annotation, for a Parquet output
/// (neardup-io's `parquet::rewrite` adds them after the input's columns): `cluster` and
/// `cluster_size` as nullable int64, `kept` as bool, `duplicate_of` as nullable string
/// (an id in its text form), `jaccard` as nullable float64.
pub fn arrow_columns(
    fields: &AnnotationFields,
    rows: &[Annotation],
) -> Vec<(arrow_schema::FieldRef, arrow_array::ArrayRef)> {
    use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field};
    let int = |f: fn(&Annotation) -> Option<u64>| -> ArrayRef {
        let values: Int64Array = rows
            .iter()
            .map(|a| f(a).map(|v| i64::try_from(v).unwrap_or(i64::MAX)))
            .collect();
        std::sync::Arc::new(values)
    };
    fields
        .fields
        .iter()
        .map(|(field, name)| {
            let (kind, column): (DataType, ArrayRef) = match field {
                AnnotationField::Cluster => (DataType::Int64, int(|a| a.cluster)),
                AnnotationField::ClusterSize => (DataType::Int64, int(|a| a.cluster_size)),
                AnnotationField::Kept => (
                    DataType::Boolean,
                    std::sync::Arc::new(
                        rows.iter().map(|a| Some(a.kept)).collect::<BooleanArray>(),
                    ),
                ),
                AnnotationField::DuplicateOf => (
                    DataType::Utf8,
                    std::sync::Arc::new(
                        rows.iter()
                            .map(|a| a.duplicate_of.map(ToString::to_string))
                            .collect::<StringArray>(),
                    ),
                ),
                AnnotationField::Jaccard => (
                    DataType::Float64,
                    std::sync::Arc::new(rows.iter().map(|a| a.jaccard).collect::<Float64Array>()),
                ),
                // Given by the caller, not by an annotation.
                AnnotationField::Json => (
                    DataType::Utf8,
                    std::sync::Arc::new(StringArray::new_null(rows.len())),
                ),
            };
            let nullable = *field != AnnotationField::Kept;
            (
                std::sync::Arc::new(Field::new(name, kind, nullable)),
                column,
            )
        })
        .collect()
}

/// `value` as JSON, or `null`.
fn json_or_null<T: serde::Serialize>(out: &mut Vec<u8>, value: Option<T>) {
    match value {
        Some(v) => serde_json::to_writer(out, &v).expect("a number or id serializes"),
        None => out.extend_from_slice(b"null"),
    }
}

/// Appends `value` as one CSV/TSV field: quoted (quotes doubled) when it holds the
/// delimiter, the quote or a line end and the format quotes; else with tabs and line
/// ends turned into spaces.
fn csv_field(out: &mut Vec<u8>, value: &[u8], d: Delimiting) {
    let special = |b: &u8| *b == d.delimiter || *b == b'\n' || *b == b'\r' || Some(*b) == d.quote;
    if !value.iter().any(special) {
        out.extend_from_slice(value);
        return;
    }
    match d.quote {
        Some(q) => {
            out.push(q);
            for &b in value {
                if b == q {
                    out.push(q);
                }
                out.push(b);
            }
            out.push(q);
        }
        None => out.extend(value.iter().map(|&b| if special(&b) { b' ' } else { b })),
    }
}

/// The byte ranges of a row's fields (quotes included), split as the reader splits; the
/// row has no line end.
fn split_row(row: &[u8], d: Delimiting) -> Vec<std::ops::Range<usize>> {
    let mut reader = csv_core::ReaderBuilder::new()
        .delimiter(d.delimiter)
        .quote(d.quote.unwrap_or(b'"'))
        .quoting(d.quote.is_some())
        .build();
    let mut spans = Vec::new();
    let mut scratch = vec![0u8; row.len() + 1];
    let (mut start, mut at) = (0, 0);
    loop {
        // An empty input is the end of the input to csv-core.
        let (result, read, _) = reader.read_field(&row[at..], &mut scratch);
        at += read;
        match result {
            csv_core::ReadFieldResult::Field { record_end } => {
                // What was read ends with the delimiter unless the record ended.
                let end = if record_end { at } else { at - 1 };
                spans.push(start..end);
                start = at;
                if record_end {
                    return spans;
                }
            }
            csv_core::ReadFieldResult::InputEmpty => {}
            csv_core::ReadFieldResult::OutputFull => scratch.resize(scratch.len() * 2, 0),
            csv_core::ReadFieldResult::End => return spans,
        }
    }
}

/// A field as written, without its quotes.
fn unquote(field: &[u8], quote: Option<u8>) -> Cow<'_, [u8]> {
    match quote {
        Some(q) if field.len() >= 2 && field[0] == q && field[field.len() - 1] == q => {
            let inner = &field[1..field.len() - 1];
            let doubled = [q, q];
            if inner.windows(2).any(|w| w == doubled) {
                let mut out = Vec::with_capacity(inner.len());
                let mut i = 0;
                while i < inner.len() {
                    out.push(inner[i]);
                    i += if inner[i] == q && inner.get(i + 1) == Some(&q) {
                        2
                    } else {
                        1
                    };
                }
                Cow::Owned(out)
            } else {
                Cow::Borrowed(inner)
            }
        }
        _ => Cow::Borrowed(field),
    }
}

/// What a look at a JSON object's top-level keys found.
struct Scan {
    /// How many keys it has.
    keys: usize,
    /// The annotation fields it already has (index into the fields, the key's order).
    taken: Vec<usize>,
}

/// Scans `body` (one JSON value, nothing around it) as an object; `None` if it is not one.
fn scan_object(body: &[u8], fields: &AnnotationFields) -> Option<Scan> {
    struct Keys<'f>(&'f AnnotationFields);
    impl<'de> Visitor<'de> for Keys<'_> {
        type Value = Scan;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Scan, A::Error> {
            let mut scan = Scan {
                keys: 0,
                taken: Vec::new(),
            };
            while let Some(key) = map.next_key::<Key>()? {
                scan.keys += 1;
                if let Some(i) = self.0.position(&key.0) {
                    scan.taken.push(i);
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(scan)
        }
    }
    if body.first() != Some(&b'{') {
        return None;
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let scan = de.deserialize_map(Keys(fields)).ok()?;
    de.end().ok()?;
    Some(scan)
}

/// The top-level values of `body` (a JSON object) whose keys are annotation fields, as
/// (field, byte range), in order; `None` if `body` is not UTF-8.
fn value_spans(
    body: &[u8],
    fields: &AnnotationFields,
) -> Option<Vec<(usize, std::ops::Range<usize>)>> {
    struct Values<'f>(&'f AnnotationFields);
    impl<'de> Visitor<'de> for Values<'_> {
        type Value = Vec<(usize, &'de RawValue)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let mut found = Vec::new();
            while let Some(key) = map.next_key::<Key>()? {
                let value: &RawValue = map.next_value()?;
                if let Some(i) = self.0.position(&key.0) {
                    found.push((i, value));
                }
            }
            Ok(found)
        }
    }
    let text = std::str::from_utf8(body).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let found = de.deserialize_map(Values(fields)).ok()?;
    let base = text.as_ptr() as usize;
    Some(
        found
            .into_iter()
            .map(|(i, raw)| {
                let start = raw.get().as_ptr() as usize - base;
                (i, start..start + raw.get().len())
            })
            .collect(),
    )
}

/// An object key, borrowed from the input unless it had escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: Delimiting = Delimiting {
        delimiter: b',',
        quote: Some(b'"'),
    };

    /// Annotates `input` (a file of `format` with these documents: line, raw bytes,
    /// annotation) and returns the output.
    fn annotate(
        input: &[u8],
        format: Format,
        header: Option<&[u8]>,
        fields: &AnnotationFields,
        docs: &[(u64, &[u8], Annotation)],
    ) -> Result<String> {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), input).unwrap();
        let mut out = Vec::new();
        let delimiting = match format {
            Format::Tsv => Delimiting {
                delimiter: b'\t',
                quote: None,
            },
            _ => CSV,
        };
        let spec = AnnotatedInput {
            path: file.path(),
            format,
            header,
            delimiting,
            limit: 1 << 20,
            output: "out",
            header_written: false,
            survivors_only: false,
        };
        let mut annotator = InputAnnotator::open(&spec, fields, &mut out)?;
        for (line, raw, a) in docs {
            annotator.document(*line, raw, a)?;
        }
        annotator.finish()?;
        Ok(String::from_utf8(out).unwrap())
    }

    fn kept(cluster: u64, size: u64) -> Annotation<'static> {
        Annotation {
            cluster: Some(cluster),
            cluster_size: Some(size),
            kept: true,
            duplicate_of: None,
            jaccard: None,
        }
    }

    fn removed(id: &DocId, cluster: u64, size: u64, j: f64) -> Annotation<'_> {
        Annotation {
            cluster: Some(cluster),
            cluster_size: Some(size),
            kept: false,
            duplicate_of: Some(id),
            jaccard: Some(j),
        }
    }

    #[test]
    fn jsonl_lines_keep_their_bytes_and_get_the_fields_before_the_brace() {
        let a: &[u8] = b"\xEF\xBB\xBF{\"id\": \"a\", \"text\": \"x\"}\r\n";
        let b: &[u8] = b"{\"text\":\"x\"  }  \n";
        let c: &[u8] = b"{ }";
        let input = [a, b"\n", b"not json\n", b"{\"no_text\": 1}\n", b, c].concat();
        let id = DocId::Text("a".into());
        let fields = AnnotationFields::all("");
        let out = annotate(
            &input,
            Format::Jsonl,
            None,
            &fields,
            &[
                (1, a, kept(0, 2)),
                (5, b, removed(&id, 0, 2, 0.75)),
                (6, c, kept(2, 1)),
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            "\u{feff}{\"id\": \"a\", \"text\": \"x\",\"cluster\":0,\"cluster_size\":2,\"kept\":true,\"duplicate_of\":null,\"jaccard\":null}\r\n\
             \n\
             not json\n\
             {\"no_text\": 1,\"cluster\":null,\"cluster_size\":null,\"kept\":false,\"duplicate_of\":null,\"jaccard\":null}\n\
             {\"text\":\"x\"  ,\"cluster\":0,\"cluster_size\":2,\"kept\":false,\"duplicate_of\":\"a\",\"jaccard\":0.75}  \n\
             { \"cluster\":2,\"cluster_size\":1,\"kept\":true,\"duplicate_of\":null,\"jaccard\":null}"
        );
    }

    #[test]
    fn a_taken_name_is_refused_or_replaced_in_place() {
        let line: &[u8] = b"{\"kept\": \"yes\", \"text\": \"x\", \"p_kept\": 1}\n";
        let fields = AnnotationFields::one(AnnotationField::ClusterSize, "kept");
        let err =
            annotate(line, Format::Jsonl, None, &fields, &[(1, line, kept(0, 3))]).unwrap_err();
        assert!(
            matches!(&err, AnnotateError::Clash { line: 1, field, .. } if field == "kept"),
            "{err}"
        );
        let out = annotate(
            line,
            Format::Jsonl,
            None,
            &fields.replace(true),
            &[(1, line, kept(0, 3))],
        )
        .unwrap();
        assert_eq!(out, "{\"kept\": 3, \"text\": \"x\", \"p_kept\": 1}\n");
        // A prefix keeps the names apart; an escaped key is the same name.
        let escaped: &[u8] = b"{\"text\": \"x\", \"p_\\u006bept\": 0}\n";
        let err = annotate(
            escaped,
            Format::Jsonl,
            None,
            &AnnotationFields::all("p_"),
            &[(1, escaped, kept(0, 1))],
        )
        .unwrap_err();
        assert!(
            matches!(&err, AnnotateError::Clash { field, .. } if field == "p_kept"),
            "{err}"
        );
    }

    #[test]
    fn csv_gets_columns_quoted_where_needed_and_skipped_rows_unchanged() {
        let header: &[u8] = b"id,text\r\n";
        let a: &[u8] = b"\"a,1\",\"x\ny\"\r\n";
        let b: &[u8] = b"b,x y\r\n";
        let input = [header, a, b"short\r\n", b"c,\r\n", b].concat();
        let id = DocId::Text("a,1".into());
        let out = annotate(
            &input,
            Format::Csv,
            Some(header),
            &AnnotationFields::all("nd "),
            &[(2, a, kept(0, 2)), (6, b, removed(&id, 0, 2, 0.5))],
        )
        .unwrap();
        assert_eq!(
            out,
            "id,text,nd cluster,nd cluster_size,nd kept,nd duplicate_of,nd jaccard\r\n\
             \"a,1\",\"x\ny\",0,2,true,,\r\n\
             short\r\n\
             c,,,,false,,\r\n\
             b,x y,0,2,false,\"a,1\",0.5\r\n"
        );
        let taken: &[u8] = b"text,\"kept\"\n";
        let row: &[u8] = b"\"x,y\",old\n";
        let input = [taken, row].concat();
        let fields = AnnotationFields::one(AnnotationField::Kept, "kept");
        let err = annotate(
            &input,
            Format::Csv,
            Some(taken),
            &fields,
            &[(2, row, kept(0, 1))],
        )
        .unwrap_err();
        assert!(matches!(err, AnnotateError::Clash { line: 1, .. }), "{err}");
        let out = annotate(
            &input,
            Format::Csv,
            Some(taken),
            &fields.replace(true),
            &[(2, row, kept(0, 1))],
        )
        .unwrap();
        assert_eq!(out, "text,\"kept\"\n\"x,y\",true\n");
    }

    #[test]
    fn tsv_values_lose_tabs_and_line_ends() {
        let header: &[u8] = b"id\ttext\n";
        let a: &[u8] = b"1\tx\n";
        let b: &[u8] = b"2\tx";
        let input = [header, a, b].concat();
        let id = DocId::Text("a\tb".into());
        let out = annotate(
            &input,
            Format::Tsv,
            Some(header),
            &AnnotationFields::one(AnnotationField::DuplicateOf, "dup"),
            &[(2, a, kept(0, 2)), (3, b, removed(&id, 0, 2, 1.0))],
        )
        .unwrap();
        assert_eq!(out, "id\ttext\tdup\n1\tx\t\n2\tx\ta b");
    }

    #[test]
    fn an_input_that_changed_is_an_error_not_a_wrong_output() {
        let a: &[u8] = b"{\"text\": \"x\"}\n";
        let err = annotate(
            b"{\"text\": \"y\"}\n",
            Format::Jsonl,
            None,
            &AnnotationFields::all(""),
            &[(1, a, kept(0, 1))],
        )
        .unwrap_err();
        assert!(
            matches!(err, AnnotateError::Changed { line: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn arrow_columns_hold_one_row_per_annotation() {
        use arrow_array::Array;
        let id = DocId::Number(7);
        let rows = [kept(0, 2), removed(&id, 0, 2, 0.5), Annotation::SKIPPED];
        let columns = arrow_columns(&AnnotationFields::all("nd_"), &rows);
        let names: Vec<&str> = columns.iter().map(|(f, _)| f.name().as_str()).collect();
        assert_eq!(
            names,
            [
                "nd_cluster",
                "nd_cluster_size",
                "nd_kept",
                "nd_duplicate_of",
                "nd_jaccard"
            ]
        );
        assert!(columns.iter().all(|(_, c)| c.len() == 3));
        assert_eq!(columns[0].1.null_count(), 1);
        let dup = columns[3]
            .1
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!((dup.is_null(0), dup.value(1)), (true, "7"));
        let kept = columns[2]
            .1
            .as_any()
            .downcast_ref::<arrow_array::BooleanArray>()
            .unwrap();
        assert_eq!(
            (kept.value(0), kept.value(1), kept.value(2)),
            (true, false, false)
        );
    }

    #[test]
    fn rows_split_as_the_reader_splits() {
        let spans = split_row(b"a,\"b,\"\"c\",,d", CSV);
        assert_eq!(spans, [0..1, 2..9, 10..10, 11..12]);
        assert_eq!(split_row(b"a,", CSV), [0..1, 2..2]);
        assert_eq!(&*unquote(b"\"a\"\"b\"", Some(b'"')), b"a\"b");
    }
}
