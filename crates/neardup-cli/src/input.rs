//! Reads every input: texts for the pipeline, records for dedup (spilled to a temporary
//! file), skips counted; what is held per document is a few bytes.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use neardup_io::{Entry, Excluded, Format, Location, ReadOptions, Record, SkipReason, Skipped};
use rayon::prelude::*;
use serde::Serialize;

use crate::held::{Places, RawReader, RawSpill, UserIds};
use crate::progress::Bars;
use crate::settings::InputSettings;
use crate::usage::usage;

/// A document's id as the user sees it: theirs, or its line/record number.
///
/// In JSON output an id keeps the type it had: a user's id is written as given (a JSON
/// number in the input stays a number, with its source text, e.g. `8.50`; every other
/// id is a string), and a line or record number is a number. So an output line can be
/// joined back to the input on the id field without conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocId {
    /// A 1-based line or record number (one input without ids).
    Number(u64),
    /// The user's id, or `source:number` when several inputs are numbered.
    Text(String),
    /// The user's id, a JSON number in the input: its source text.
    JsonNumber(String),
}

impl std::fmt::Display for DocId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DocId::Number(n) => write!(f, "{n}"),
            DocId::Text(t) | DocId::JsonNumber(t) => f.write_str(t),
        }
    }
}

impl Serialize for DocId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            DocId::Number(n) => serializer.serialize_u64(*n),
            DocId::Text(t) => serializer.serialize_str(t),
            // The reader kept a valid JSON number's text; fall back to a string if not.
            DocId::JsonNumber(t) => match serde_json::value::RawValue::from_string(t.clone()) {
                Ok(raw) => raw.serialize(serializer),
                Err(_) => serializer.serialize_str(t),
            },
        }
    }
}

/// One input as opened.
#[derive(Clone, Debug)]
pub struct InputInfo {
    pub path: PathBuf,
    /// The input as its records' locations name it (`-` for standard input).
    pub source: std::sync::Arc<str>,
    pub format: Format,
    /// The format was told from the content (standard input, a file without a known
    /// extension), not from `--format` or the file name.
    pub sniffed: bool,
    pub header: Option<Vec<u8>>,
}

/// Where the records read went: `read = kept + removed + skipped`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accounts {
    pub read: u64,
    pub kept: u64,
    /// Removed as a duplicate of a kept document.
    pub removed: u64,
    /// Skipped by the readers or, empty, by the pipeline.
    pub skipped: u64,
}

/// Where a document is in its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The 1-based line of its first line.
    pub line: u64,
    /// The 1-based number of its entry (skipped entries count).
    pub record: u64,
}

/// A record that is not a document, and why: a line of the skipped list.
#[derive(Clone, Debug, Serialize)]
struct SkippedRecord {
    /// Index of the input it came from (for ordering; not written).
    #[serde(skip)]
    input: usize,
    #[serde(flatten)]
    location: LocationLine,
    code: &'static str,
    reason: String,
}

impl SkippedRecord {
    fn new(input: usize, location: LocationLine, reason: &SkipReason) -> Self {
        SkippedRecord {
            input,
            location,
            code: reason.code(),
            reason: reason.to_string(),
        }
    }
}

/// Where a record is, as written to the skipped list.
#[derive(Clone, Debug, Serialize)]
struct LocationLine {
    source: String,
    line: u64,
    record: u64,
}

impl From<&Location> for LocationLine {
    fn from(l: &Location) -> Self {
        LocationLine {
            source: l.source.to_string(),
            line: l.line,
            record: l.record,
        }
    }
}

/// Why the pipeline left document `doc` out, if it did: its text has no shingles. The one
/// place the CLI asks the core, so that every skip is a `SkipReason` of neardup-io's.
pub fn skipped_by_pipeline(has_shingles: &dyn Fn(u32) -> bool, doc: u32) -> Option<SkipReason> {
    (!has_shingles(doc)).then_some(SkipReason::Empty)
}

/// True if `text` has no shingles under `shingler`: the pipeline would skip it as empty.
/// Only a text without a letter or digit is shingled to find out (blank lines, spaces,
/// punctuation for word shingles), so reading stays as fast; the rare text that loses all
/// its letters to normalization is still skipped by the pipeline.
pub fn has_no_shingles(shingler: &neardup::Shingler, text: &str) -> bool {
    !text.chars().any(char::is_alphanumeric) && shingler.shingle_set(text).is_empty()
}

/// All documents of all inputs, in input order.
#[derive(Default)]
pub struct Documents {
    /// Number of documents.
    count: u32,
    /// The ids users gave (documents without one are named by their place).
    user_ids: UserIds,
    /// Whether documents without a user id are named `source:number` (several inputs).
    numbered_with_source: bool,
    pub texts: Vec<String>,
    /// Where each document is: its line and record number in its input.
    places: Places,
    /// Each document's exact source bytes (dedup only).
    raw: Option<RawSpill>,
    /// Each document's `--keep-by` value (only when asked for).
    pub keys: Vec<Option<Box<str>>>,
    /// The records of files in directories, whole, by document (the dir writer copies
    /// them by path); other formats hold only the compact fields above.
    files: Vec<(u32, Record)>,
    /// The first document of each input (inputs are read in order).
    input_start: Vec<u32>,
    /// Records the readers skipped, by reason code: counted, not held, so junk costs no
    /// memory.
    pub skipped_by_code: BTreeMap<&'static str, u64>,
    /// The readers' skipped records as lines of the skipped list, in input order, each
    /// behind its `input record` key, when the list was asked for (see
    /// [`Documents::write_skipped`]).
    skipped_spill: Option<std::io::BufWriter<File>>,
    pub inputs: Vec<InputInfo>,
    /// Documents whose bytes were not valid UTF-8 and were decoded lossily.
    pub lossy: u64,
    /// The readers' warnings (e.g. a quoted CSV field running over 100 lines), as
    /// `FILE:LINE: message`, in input order.
    pub warnings: Vec<String>,
    /// Entries of input directories left out (not records), summed over the inputs, by
    /// reason; nonzero counts only.
    pub excluded: Vec<(Excluded, u64)>,
    /// The field names each input has (JSONL: the keys of its first 10 objects; CSV/TSV:
    /// the header's columns), for telling the user what is there.
    pub fields_seen: Vec<(PathBuf, Vec<String>)>,
}

impl Documents {
    /// Reads every input (given as the input options or their settings). A hard error
    /// (unreadable file, bad header) stops the run.
    pub fn read<A: Clone + Into<InputSettings>>(
        args: &A,
        keep_raw: bool,
        bars: &Bars,
    ) -> Result<Documents> {
        let args: InputSettings = args.clone().into();
        let args = &args;
        let mut texts = Vec::new();
        let mut docs = Self::read_batches(args, keep_raw, false, bars, usize::MAX, |batch| {
            texts.extend(batch);
            Ok(())
        })?;
        docs.texts = texts;
        Ok(docs)
    }

    /// Reads every input, handing the texts to `sink` in batches of `batch` documents,
    /// in order, as they are read; the documents come back without their texts. With
    /// `list_skipped`, the skipped records go to a temporary file for the skipped list.
    pub fn read_batches(
        args: &InputSettings,
        keep_raw: bool,
        list_skipped: bool,
        bars: &Bars,
        batch: usize,
        mut sink: impl FnMut(Vec<String>) -> Result<()>,
    ) -> Result<Documents> {
        let mut pending = Vec::new();
        let opts = ReadOptions {
            keep_raw,
            ..read_options(args)
        };
        let mut docs = Documents {
            numbered_with_source: args.inputs.len() > 1,
            ..Documents::default()
        };
        if list_skipped {
            // Unnamed: nothing to clean up whatever ends the process.
            let spill = tempfile::tempfile()
                .context("cannot create a temporary file for the skipped list")?;
            docs.skipped_spill = Some(std::io::BufWriter::new(spill));
        }
        if keep_raw {
            docs.raw = Some(RawSpill::new()?);
        }
        bars.spinner("read");
        // Several inputs: a directory's files are named by the subfolder dedup writes
        // them to, then their path in it, so equal relative paths stay apart.
        let folders = (args.inputs.len() > 1).then(|| neardup_io::root_folders(&args.inputs));
        for path in &args.inputs {
            // Options that do not fit a format known without reading are refused at once.
            if let Some(format) = known_format(path, opts.format) {
                refuse_options_for(format, false, path, args)?;
            }
            // The reader's errors name the file and line already.
            let mut reader = neardup_io::open(path, &opts)?;
            let format = reader.format();
            docs.inputs.push(InputInfo {
                path: path.clone(),
                source: path.display().to_string().into(),
                format,
                sniffed: reader.sniffed(),
                header: reader.header_raw().map(<[u8]>::to_vec),
            });
            refuse_options_for(format, reader.sniffed(), path, args)?;
            let input = docs.inputs.len() - 1;
            docs.input_start.push(docs.count);
            let mut tally = InputTally::default();
            for entry in reader.by_ref() {
                bars.tick();
                let entry = entry?;
                if args.fail_on_error {
                    fail_on_bad(&entry)?;
                }
                tally.count(&entry);
                // A record with nothing to compare is skipped here rather than by the
                // pipeline: so it costs what a blank line costs (a count, and a line of the
                // skipped list's file), not a document's place in every table.
                let entry = match entry {
                    Entry::Record(r)
                        if args
                            .empty_under
                            .is_some_and(|s| has_no_shingles(&s, &r.text)) =>
                    {
                        Entry::Skipped(Skipped {
                            location: r.location,
                            id: r.id,
                            reason: SkipReason::Empty,
                        })
                    }
                    entry => entry,
                };
                match entry {
                    Entry::Record(mut record) => {
                        // Held per document, so only what later steps use, compactly.
                        let doc = docs.count;
                        docs.count = doc
                            .checked_add(1)
                            .ok_or(neardup::Error::TooManyDocuments(doc as usize + 1))?;
                        match (&record.id, &folders) {
                            (Some(id), Some(folders)) if format == Format::Dir => {
                                let folder = folders[input].to_string_lossy();
                                docs.user_ids.push(doc, &format!("{folder}/{id}"), false);
                            }
                            (Some(id), _) => docs.user_ids.push(doc, id, record.numeric_id),
                            (None, _) => {}
                        }
                        docs.lossy += record.lossy as u64;
                        pending.push(std::mem::take(&mut record.text));
                        if pending.len() >= batch {
                            sink(std::mem::take(&mut pending))?;
                        }
                        docs.places.push(Place {
                            line: record.location.line,
                            record: record.location.record,
                        });
                        if args.key_field.is_some() {
                            docs.keys
                                .push(record.key.take().map(String::into_boxed_str));
                        }
                        if let Some(raw) = &mut docs.raw {
                            // A directory's file is kept whole below: no bytes here.
                            raw.push(if format == Format::Dir {
                                &[]
                            } else {
                                &record.raw
                            })?;
                        }
                        if format == Format::Dir {
                            docs.files.push((doc, record));
                        }
                    }
                    Entry::Skipped(s) => {
                        *docs.skipped_by_code.entry(s.reason.code()).or_insert(0) += 1;
                        if let Some(spill) = &mut docs.skipped_spill {
                            let line = SkippedRecord::new(input, (&s.location).into(), &s.reason);
                            write!(spill, "{input} {}\t", s.location.record)
                                .and_then(|()| {
                                    serde_json::to_writer(&mut *spill, &line).map_err(Into::into)
                                })
                                .and_then(|()| spill.write_all(b"\n"))
                                .context("cannot write the skipped list's temporary file")?;
                        }
                    }
                }
            }
            docs.note_reader(path, &mut reader);
            let fields = &docs
                .fields_seen
                .last()
                .map(|(_, f)| f.as_slice())
                .unwrap_or(&[]);
            let sniffed = reader.sniffed();
            tally.check(path, format, sniffed, args, fields, &mut docs.warnings)?;
        }
        if !pending.is_empty() {
            sink(pending)?;
        }
        if let Some(raw) = &mut docs.raw {
            raw.finish()?;
        }
        bars.done();
        Ok(docs)
    }

    /// Keeps what a reader tells after reading: warnings, entries left out, fields seen.
    fn note_reader(&mut self, path: &Path, reader: &mut neardup_io::Reader) {
        self.warnings
            .extend(reader.take_warnings().iter().map(ToString::to_string));
        for (reason, n) in reader.excluded() {
            match self.excluded.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, total)) => *total += n,
                None => self.excluded.push((reason, n)),
            }
        }
        self.fields_seen
            .push((path.to_path_buf(), reader.fields_seen()));
    }

    /// "; the first records have the fields: a, b" for the first input with field names,
    /// to follow a message about a field that is not there.
    pub fn fields_hint(&self) -> String {
        self.fields_seen
            .iter()
            .find(|(_, f)| !f.is_empty())
            .map(|(path, f)| {
                format!(
                    "; the first records of {} have: {}",
                    path.display(),
                    f.join(", ")
                )
            })
            .unwrap_or_default()
    }

    /// The summary's line for the entries of directories left out, e.g. "12 files or
    /// folders (hidden 10, not matched by --glob 2)"; `None` if none were.
    pub fn excluded_line(&self) -> Option<String> {
        let total: u64 = self.excluded.iter().map(|(_, n)| n).sum();
        if total == 0 {
            return None;
        }
        let parts: Vec<String> = self
            .excluded
            .iter()
            .map(|(reason, n)| match reason {
                Excluded::Hidden => format!("hidden {n}"),
                Excluded::NotMatched => format!("not matched by --glob {n}"),
            })
            .collect();
        let noun = if total == 1 {
            "file or folder"
        } else {
            "files or folders"
        };
        Some(format!("{total} {noun} ({})", parts.join(", ")))
    }

    /// User ids given to more than one record: how many such ids, and the first of them
    /// (in input order). Sorts document numbers rather than building a map of ids.
    pub fn duplicate_ids(&self) -> (usize, Option<String>) {
        let ids = &self.user_ids;
        // Indices into the users' ids, which are in document order.
        let user = |i: &u32| ids.nth(*i as usize).0;
        let mut order: Vec<u32> = (0..ids.len() as u32).collect();
        order.par_sort_by(|a, b| user(a).cmp(user(b)).then(a.cmp(b)));
        let mut firsts: Vec<u32> = order
            .chunk_by(|a, b| user(a) == user(b))
            .filter(|run| run.len() > 1)
            .map(|run| run[0])
            .collect();
        firsts.sort_unstable();
        (firsts.len(), firsts.first().map(|i| user(i).to_string()))
    }

    /// True if document `doc` has no id of the user's and goes by its line or record
    /// number ([`DocId::Number`], or `source:number` when several inputs are read), which
    /// the same line of another input would share.
    pub fn is_numbered(&self, doc: u32) -> bool {
        self.user_ids.get(doc).is_none()
    }

    /// How many documents go by their line or record number ([`Documents::is_numbered`]).
    pub fn numbered(&self) -> u64 {
        u64::from(self.count) - self.user_ids.len() as u64
    }

    /// How each input whose format was told from its content was read, e.g.
    /// `batch_aa: jsonl (no known extension: read by its content)`, for the summary.
    pub fn sniffed_formats(&self) -> Vec<String> {
        self.inputs
            .iter()
            .filter(|i| i.sniffed)
            .map(|i| {
                let why = if i.path == Path::new("-") {
                    "standard input"
                } else {
                    "no known extension"
                };
                format!(
                    "{}: {} ({why}: {})",
                    i.source,
                    i.format.name(),
                    if i.format == Format::Jsonl {
                        "its first non-blank byte is '{'"
                    } else {
                        "it does not start with '{'"
                    }
                )
            })
            .collect()
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// A document's id as the user sees it: theirs, or its line (JSONL, lines) or record
    /// (CSV/TSV) number, prefixed by its source when several inputs are read.
    pub fn id(&self, doc: u32) -> DocId {
        if let Some((id, json_number)) = self.user_ids.get(doc) {
            return if json_number {
                DocId::JsonNumber(id.to_string())
            } else {
                DocId::Text(id.to_string())
            };
        }
        let place = self.place(doc);
        let input = &self.inputs[self.input_of(doc)];
        // Lines and JSONL are numbered by line; CSV/TSV by record (a record may span lines).
        let n = match input.format {
            Format::Csv | Format::Tsv => place.record,
            _ => place.line,
        };
        if self.numbered_with_source {
            DocId::Text(format!("{}:{}", self.source_of(doc), n))
        } else {
            DocId::Number(n)
        }
    }

    /// Where a document is in its input.
    pub fn place(&self, doc: u32) -> Place {
        self.places.get(doc).unwrap_or(Place { line: 0, record: 0 })
    }

    /// Index into `inputs` of a document's input.
    fn input_of(&self, doc: u32) -> usize {
        self.input_start
            .partition_point(|&s| s <= doc)
            .saturating_sub(1)
    }

    #[cfg(test)]
    /// Bytes of heap held per document for ids, places, inputs and kept records (not
    /// texts, `--keep-by` values or a directory's files), for tests that bound what a
    /// document costs.
    pub fn heap_bytes(&self) -> usize {
        self.user_ids.heap_bytes()
            + self.places.heap_bytes()
            + self.input_start.capacity() * 4
            + self.raw.as_ref().map_or(0, RawSpill::heap_bytes)
    }

    /// Where document `doc` came from, as the skipped list and `--removed` name it: the
    /// input as given, or a directory's file path.
    pub fn source_of(&self, doc: u32) -> &str {
        self.shared_source_of(doc)
    }

    /// [`Documents::source_of`], as the name the records of its input share.
    fn shared_source_of(&self, doc: u32) -> &std::sync::Arc<str> {
        match self.file(doc) {
            Some(record) => &record.location.source,
            None => &self.inputs[self.input_of(doc)].source,
        }
    }

    /// A directory file's whole record.
    fn file(&self, doc: u32) -> Option<&Record> {
        let i = self.files.binary_search_by_key(&doc, |(d, _)| *d).ok()?;
        Some(&self.files[i].1)
    }

    /// A reader of documents' exact source bytes (kept with `keep_raw`; empty otherwise
    /// and for a file of a directory), to be asked in ascending document order.
    pub fn raw_reader(&self) -> Result<RawReader<'_>> {
        RawReader::new(self.raw.as_ref())
    }

    /// The record to hand to the dedup writer: a directory's file as read, or the
    /// document's bytes (from `raw`, asked in ascending document order).
    pub fn record(&self, doc: u32, raw: &mut RawReader) -> Result<std::borrow::Cow<'_, Record>> {
        Ok(match self.file(doc) {
            Some(r) => std::borrow::Cow::Borrowed(r),
            None => {
                let place = self.place(doc);
                std::borrow::Cow::Owned(Record {
                    id: None,
                    text: String::new(),
                    raw: raw.read(doc)?.to_vec(),
                    location: Location {
                        source: self.shared_source_of(doc).clone(),
                        line: place.line,
                        record: place.record,
                    },
                    lossy: false,
                    key: None,
                    numeric_id: false,
                    path: None,
                })
            }
        })
    }

    /// Number of records read, documents and skipped ones.
    pub fn read_count(&self) -> u64 {
        u64::from(self.count) + self.skipped_count()
    }

    /// Where every record read went, `removed` of the documents being duplicates and
    /// `empty` of them skipped by the pipeline.
    pub fn accounts(&self, removed: u64, empty: u64) -> Accounts {
        let read = self.read_count();
        let skipped = self.skipped_count() + empty;
        Accounts {
            read,
            kept: read - removed - skipped,
            removed,
            skipped,
        }
    }

    /// Records the readers skipped.
    pub fn skipped_count(&self) -> u64 {
        self.skipped_by_code.values().sum()
    }

    /// Skipped records by reason code: the readers' and the `empty` documents the
    /// pipeline skipped ([`SkipReason::Empty`]).
    pub fn skip_counts(&self, empty: u64) -> BTreeMap<&'static str, u64> {
        let mut counts = self.skipped_by_code.clone();
        if empty > 0 {
            *counts.entry(SkipReason::Empty.code()).or_insert(0) += empty;
        }
        counts
    }

    /// Writes the skipped list to `out`: the readers' skipped records (spilled to a
    /// temporary file as they were read) merged, in input order, with the documents the
    /// pipeline skipped. Memory does not grow with the number of skipped records.
    pub fn write_skipped(
        &mut self,
        has_shingles: &dyn Fn(u32) -> bool,
        out: &mut dyn Write,
    ) -> Result<()> {
        let spill = match self.skipped_spill.take() {
            Some(spill) => Some(
                spill
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .and_then(|mut f| f.rewind().map(|()| f))
                    .context("cannot read back the skipped list's temporary file")?,
            ),
            None => None,
        };
        let mut empty = (0..self.count)
            .filter_map(|doc| {
                skipped_by_pipeline(has_shingles, doc).map(|reason| {
                    let location = LocationLine {
                        source: self.source_of(doc).to_string(),
                        line: self.place(doc).line,
                        record: self.place(doc).record,
                    };
                    SkippedRecord::new(self.input_of(doc), location, &reason)
                })
            })
            .peekable();
        let put = |out: &mut dyn Write, s: &SkippedRecord| -> Result<()> {
            serde_json::to_writer(&mut *out, s)?;
            out.write_all(b"\n")?;
            Ok(())
        };
        // Record numbers count every entry of an input (a directory's files in walk order).
        if let Some(spill) = spill {
            for line in std::io::BufReader::new(spill).lines() {
                let line = line.context("cannot read back the skipped list's temporary file")?;
                let (key, json) = line.split_once('\t').unwrap_or(("", &line));
                let mut parts = key.split(' ').map(|n| n.parse::<u64>().unwrap_or(0));
                let at = (
                    parts.next().unwrap_or(0) as usize,
                    parts.next().unwrap_or(0),
                );
                while let Some(e) = empty.next_if(|e| (e.input, e.location.record) < at) {
                    put(out, &e)?;
                }
                out.write_all(json.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        for e in empty {
            put(out, &e)?;
        }
        Ok(())
    }
}

/// Refuses input options that do not apply to an input's format: a JSONL field option on
/// a CSV file, a CSV column option on JSONL, either on plain lines or a directory.
/// `sniffed`: the format was told from the content, which the message says.
pub fn refuse_options_for(
    format: Format,
    sniffed: bool,
    path: &Path,
    args: &InputSettings,
) -> Result<()> {
    let how = match (sniffed, format) {
        (true, Format::Jsonl) => " (by its content: its first non-blank byte is '{')",
        (true, _) => " (by its content: it has no known extension and does not start with '{')",
        (false, _) => "",
    };
    let jsonl = [
        ("--text-field", args.text_field.is_some()),
        ("--id-field", args.id_field.is_some()),
    ];
    let delimited = [
        ("--text-columns", args.text_columns.is_some()),
        ("--id-column", args.id_column.is_some()),
    ];
    let (refused, instead): (&[(&str, bool)], &str) = match format {
        Format::Jsonl => (&delimited, "; JSONL takes --text-field and --id-field"),
        Format::Csv | Format::Tsv => (&jsonl, "; CSV/TSV take --text-columns and --id-column"),
        Format::Lines => (
            &[jsonl, delimited].concat(),
            ": each line is a document, \"ID<TAB>TEXT\" gives its id (--format jsonl|csv|tsv for other layouts)",
        ),
        Format::Dir => (
            &[jsonl, delimited].concat(),
            ": each file is a document, named by its path",
        ),
    };
    if args.key_field.is_some() && matches!(format, Format::Lines | Format::Dir) {
        usage!(
            "--keep-by needs a JSONL field or a CSV/TSV column, but {} is read as {}{how}",
            path.display(),
            format.name()
        );
    }
    if args.delimiter.is_some() && format != Format::Csv {
        usage!(
            "--delimiter is for CSV, but {} is read as {}{how}{}",
            path.display(),
            format.name(),
            if format == Format::Tsv {
                " (TSV is tab-separated by definition)"
            } else {
                ""
            }
        );
    }
    if let Some((flag, _)) = refused.iter().find(|(_, given)| *given) {
        usage!(
            "{flag} does not apply to {}, read as {}{how}{instead}",
            path.display(),
            format.name()
        );
    }
    Ok(())
}

/// What one input yielded, to tell a run that read nothing by mistake from one that read
/// an input with nothing in it.
#[derive(Default)]
struct InputTally {
    records: u64,
    with_id: u64,
    /// Records without an id whose text is blank (skipped as empty later).
    unnamed_blank: u64,
    /// Skipped entries by reason code: how many, and the first.
    skipped: BTreeMap<&'static str, (u64, Skipped)>,
}

impl InputTally {
    fn count(&mut self, entry: &Entry) {
        match entry {
            Entry::Record(r) => {
                self.records += 1;
                self.with_id += r.id.is_some() as u64;
                self.unnamed_blank += (r.id.is_none() && r.text.trim().is_empty()) as u64;
            }
            Entry::Skipped(s) => {
                let e = self
                    .skipped
                    .entry(s.reason.code())
                    .or_insert_with(|| (0, s.clone()));
                e.0 += 1;
            }
        }
    }

    /// Fails when every record of the input was skipped for one reason (a wrong field
    /// name, the wrong format), or when a named id field is in no record; warns when it
    /// is in only some.
    fn check(
        &self,
        path: &Path,
        format: Format,
        sniffed: bool,
        args: &InputSettings,
        fields: &[String],
        warnings: &mut Vec<String>,
    ) -> Result<()> {
        let have = || {
            if fields.is_empty() {
                String::new()
            } else {
                let kind = if format == Format::Jsonl {
                    "fields"
                } else {
                    "columns"
                };
                format!("; the first records have the {kind}: {}", fields.join(", "))
            }
        };
        let skipped: u64 = self.skipped.values().map(|(n, _)| n).sum();
        let blank = self
            .skipped
            .get(SkipReason::BlankLine.code())
            .map_or(0, |(n, _)| *n);
        if self.records == 0 && skipped > blank {
            let reasons: Vec<_> = self
                .skipped
                .values()
                .filter(|(_, first)| first.reason != SkipReason::BlankLine)
                .collect();
            if let [(n, first)] = reasons.as_slice() {
                let message = match first.reason {
                    SkipReason::MissingField(_) => format!(
                        "no record of {} has the text field {:?} (all {n} skipped){}; \
                         name the text field with --text-field",
                        path.display(),
                        args.text_field.as_deref().unwrap_or("text"),
                        have()
                    ),
                    _ => format!(
                        "{} of {} {} skipped as {} (first: {}: {}); nothing to compare{}",
                        if *n == 1 {
                            "the only record".to_string()
                        } else {
                            format!("all {n} records")
                        },
                        path.display(),
                        are(*n, "was", "were"),
                        first.reason.code(),
                        first.location,
                        first.reason,
                        if sniffed && matches!(first.reason, SkipReason::MalformedJson(_)) {
                            " (it has no known extension and starts with '{', so it was read \
                             as JSONL; --format lines reads every line as text)"
                        } else {
                            ""
                        }
                    ),
                };
                return Err(BadRecord(message).into());
            }
        }
        if format == Format::Jsonl {
            let field = args.id_field.as_deref().unwrap_or("id");
            if args.id_field.is_some() && self.records > 0 && self.with_id == 0 {
                return Err(BadRecord(format!(
                    "no record of {} has the id field {field:?}{}",
                    path.display(),
                    have()
                ))
                .into());
            }
            if self.with_id > 0 && self.with_id < self.records {
                warnings.push(format!(
                    "{} of {} of {} {} no id field {field:?}; {} named by line number",
                    self.records - self.with_id,
                    crate::summary::count(self.records, "record", "records"),
                    path.display(),
                    are(self.records - self.with_id, "has", "have"),
                    are(self.records - self.with_id, "it is", "they are"),
                ));
            }
        }
        // Blank lines are skipped as empty: their lack of an id does not matter.
        let unnamed = self.records - self.unnamed_blank - self.with_id;
        if format == Format::Lines && self.with_id > 0 && unnamed > 0 {
            warnings.push(format!(
                "{} of {} of {} {} no \"ID<TAB>\" before {} text; {} named by line number, the \
                 others by the id before their tab: ids of two kinds",
                unnamed,
                crate::summary::count(self.records - self.unnamed_blank, "line", "lines"),
                path.display(),
                are(unnamed, "has", "have"),
                are(unnamed, "its", "their"),
                are(unnamed, "it is", "they are"),
            ));
        }
        let malformed = self
            .skipped
            .get(SkipReason::MalformedJson(String::new()).code())
            .map_or(0, |(n, _)| *n);
        if sniffed && format == Format::Jsonl && malformed > 0 {
            warnings.push(format!(
                "{} was read as JSONL because its first non-blank byte is '{{', but {} of its \
                 lines {} not JSON; --format lines reads every line as text",
                path.display(),
                malformed,
                are(malformed, "is", "are")
            ));
        }
        Ok(())
    }
}

/// `one` if `n` is 1, else `many`: the verb or pronoun that agrees with a count.
fn are<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Under `--on-error fail`: an error for a malformed record (blank lines are not errors).
pub fn fail_on_bad(entry: &Entry) -> Result<()> {
    match entry {
        Entry::Skipped(s) if s.reason != SkipReason::BlankLine => {
            Err(BadRecord(format!("{}: {}", s.location, s.reason)).into())
        }
        Entry::Record(r) if r.lossy => Err(BadRecord(format!(
            "{}: invalid UTF-8 (decoded lossily under --on-error skip)",
            r.location
        ))
        .into()),
        _ => Ok(()),
    }
}

/// A malformed record under `--on-error fail` (exit code 3).
#[derive(Debug)]
pub struct BadRecord(pub String);

impl std::fmt::Display for BadRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadRecord {}

/// The format of an input as known without reading it: `forced` (`--format`), a
/// directory, or a known extension; `None` for one the reader tells from its content
/// (standard input, a file named otherwise).
pub fn known_format(path: &Path, forced: Option<Format>) -> Option<Format> {
    match forced {
        Some(format) => Some(format),
        None if path == Path::new("-") => None,
        None if path.is_dir() => Some(Format::Dir),
        None => Format::from_extension(path),
    }
}

/// Reader options from the input arguments.
pub fn read_options(args: &InputSettings) -> ReadOptions {
    let defaults = ReadOptions::default();
    let mut opts = ReadOptions::default()
        .with_text_field(args.text_field.clone().unwrap_or(defaults.text_field))
        .with_id_field(args.id_field.clone().unwrap_or(defaults.id_field))
        .with_max_record_bytes(args.max_record_bytes);
    if let Some(columns) = &args.text_columns {
        opts = opts.with_text_columns(columns.split(',').map(str::trim));
    }
    if let Some(col) = &args.id_column {
        opts = opts.with_id_column(col.clone());
    }
    opts.tsv_escapes = args.tsv_escapes;
    opts.quote = args.quote;
    if let Some(d) = args.delimiter {
        opts.delimiter = d;
    }
    opts.hidden = args.hidden;
    opts.globs = args.globs.clone();
    opts.follow_links = args.follow;
    opts.key_field = args.key_field.clone();
    if let Some(format) = args.format {
        opts = opts.with_format(format);
    }
    opts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path, keep_raw: bool) -> Documents {
        let args = InputSettings::new(vec![path.to_path_buf()]);
        Documents::read_batches(
            &args,
            keep_raw,
            false,
            &Bars::new(true),
            1 << 14,
            |_| Ok(()),
        )
        .unwrap()
    }

    /// A copy without an id costs its length (4 bytes, for dedup): no id, no place, no
    /// bytes in memory.
    #[test]
    fn copies_cost_a_few_bytes_each() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("copies.jsonl");
        let line = "{\"text\": \"the same listing, again and again\"}\n";
        let n = 100_000;
        std::fs::write(&path, line.repeat(n)).unwrap();
        let docs = read(&path, true);
        assert_eq!(docs.len(), n);
        let per_doc = docs.heap_bytes() as f64 / n as f64;
        // The records' lengths (4 bytes each, doubled at worst by growth) and a 64 KiB buffer.
        assert!(per_doc <= 9.0, "{per_doc} bytes per document");
        assert_eq!(docs.id(n as u32 - 1), DocId::Number(n as u64));
        let mut raw = docs.raw_reader().unwrap();
        assert_eq!(raw.read(3).unwrap(), line.as_bytes());
        assert_eq!(raw.read(n as u32 - 1).unwrap(), line.as_bytes());
        assert!(raw.read(5).is_err(), "asked out of order");
    }

    /// A record with nothing to compare costs what a blank JSONL line costs: it is counted
    /// and listed as `empty` while reading, and holds no place among the documents.
    #[test]
    fn records_without_shingles_are_skipped_while_reading() {
        let dir = tempfile::tempdir().unwrap();
        let n = 100_000;
        for (name, blank, text) in [
            (
                "spaces.jsonl",
                "{\"text\": \"   \"}\n",
                "{\"text\": \"a b c d e f\"}\n",
            ),
            ("blank.txt", "\n", "a b c d e f\n"),
            ("tabs.txt", " \t \n", "a b c d e f\n"),
        ] {
            let path = dir.path().join(name);
            let mut content = text.to_string();
            content.push_str(&blank.repeat(n));
            content.push_str(text);
            std::fs::write(&path, content).unwrap();
            let mut args = InputSettings::new(vec![path.clone()]);
            args.empty_under = Some(neardup::Shingler::default());
            let mut texts = Vec::new();
            let mut docs =
                Documents::read_batches(&args, true, true, &Bars::new(true), 1 << 14, |b| {
                    texts.extend(b);
                    Ok(())
                })
                .unwrap();
            assert_eq!(docs.len(), 2, "{name}");
            assert_eq!(texts.len(), 2, "{name}");
            assert_eq!(
                docs.skip_counts(0).get("empty"),
                Some(&(n as u64)),
                "{name}"
            );
            assert_eq!(docs.read_count(), n as u64 + 2, "{name}");
            assert_eq!(
                docs.accounts(1, 0),
                Accounts {
                    read: n as u64 + 2,
                    kept: 1,
                    removed: 1,
                    skipped: n as u64
                }
            );
            // The second document is the last line, as its place and id say.
            assert_eq!(docs.place(1).record, n as u64 + 2, "{name}");
            assert!(docs.heap_bytes() < 1 << 20, "{name}: {}", docs.heap_bytes());
            let mut list = Vec::new();
            docs.write_skipped(&|_| true, &mut list).unwrap();
            let records: Vec<u64> = String::from_utf8(list)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .inspect(|v| assert_eq!(v["code"], "empty"))
                .map(|v| v["record"].as_u64().unwrap())
                .collect();
            assert_eq!(records, (2..n as u64 + 2).collect::<Vec<_>>(), "{name}");
        }
        // Without the shingler (a caller that shingles nothing), the records stay documents.
        let path = dir.path().join("blank.txt");
        assert_eq!(read(&path, false).len(), n + 2);
        // Punctuation has shingles of characters, none of words.
        let words = neardup::Shingler::new(neardup::ShingleKind::Word(2));
        assert!(has_no_shingles(&words, "-- !! --"));
        assert!(!has_no_shingles(&neardup::Shingler::default(), "-- !! --"));
        assert!(!has_no_shingles(&words.normalize(false), "x"));
        assert!(!has_no_shingles(
            &neardup::Shingler::default().normalize(false),
            " "
        ));
    }

    /// Ids and places computed from the jumps in numbering match what the reader said.
    #[test]
    fn ids_and_places_survive_skipped_lines_and_user_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mixed.jsonl");
        let text = "{\"text\": \"a\"}\n\n{\"text\": \"b\", \"id\": \"x\"}\r\nnot json\n\
                    {\"text\": \"c\", \"id\": 8.50}\n{\"text\": \"d\"}\n{\"text\": \"e\"}\n";
        std::fs::write(&path, text).unwrap();
        let docs = read(&path, true);
        let ids: Vec<DocId> = (0..docs.len() as u32).map(|d| docs.id(d)).collect();
        assert_eq!(
            ids,
            [
                DocId::Number(1),
                DocId::Text("x".into()),
                DocId::JsonNumber("8.50".into()),
                DocId::Number(6),
                DocId::Number(7),
            ]
        );
        let numbered: Vec<bool> = (0..5).map(|d| docs.is_numbered(d)).collect();
        assert_eq!(numbered, [true, false, false, true, true]);
        assert_eq!(docs.numbered(), 3);
        let places: Vec<(u64, u64)> = (0..5)
            .map(|d| docs.place(d))
            .map(|p| (p.line, p.record))
            .collect();
        assert_eq!(places, [(1, 1), (3, 3), (5, 5), (6, 6), (7, 7)]);
        assert_eq!(
            docs.read_count(),
            7,
            "the blank line and the bad one are entries"
        );
        let mut raw = docs.raw_reader().unwrap();
        assert_eq!(
            raw.read(1).unwrap(),
            b"{\"text\": \"b\", \"id\": \"x\"}\r\n"
        );
        assert_eq!(raw.read(4).unwrap(), b"{\"text\": \"e\"}\n");
        // Without keep_raw no bytes are kept.
        let docs = read(&path, false);
        assert_eq!(docs.raw_reader().unwrap().read(0).unwrap(), b"");
    }

    /// The readers' skips and the pipeline's empty documents make one list, in input
    /// order, of one kind of reason; the counts and the accounts agree with it.
    #[test]
    fn readers_and_pipeline_skips_make_one_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skips.jsonl");
        let text = "{\"text\": \"a b c d e f\"}\n{\"text\": \" \\t \"}\n\nnot json\n\
                    {\"text\": \"\"}\n{\"text\": \"g h i j k\"}\n";
        std::fs::write(&path, text).unwrap();
        let args = InputSettings::new(vec![path.clone()]);
        let mut texts = Vec::new();
        let bars = Bars::new(true);
        let mut docs = Documents::read_batches(&args, false, true, &bars, 2, |batch| {
            texts.extend(batch);
            Ok(())
        })
        .unwrap();
        let config = neardup::Config::builder().build().unwrap();
        let shingled = neardup::Pipeline::new(config)
            .unwrap()
            .shingle(&texts)
            .unwrap();
        let by_pipeline: Vec<_> = (0..docs.len() as u32)
            .map(|d| skipped_by_pipeline(&|d| shingled.corpus().has_shingles(d), d))
            .collect();
        let empty = Some(SkipReason::Empty);
        assert_eq!(by_pipeline, [None, empty.clone(), empty, None]);
        let counts: Vec<_> = docs.skip_counts(2).into_iter().collect();
        assert_eq!(
            counts,
            [("blank_line", 1), ("empty", 2), ("malformed_json", 1)]
        );
        assert_eq!(docs.skip_counts(0).get("empty"), None);
        let accounts = Accounts {
            read: 6,
            kept: 1,
            removed: 1,
            skipped: 4,
        };
        assert_eq!(docs.accounts(1, shingled.stats().empty), accounts);
        let mut list = Vec::new();
        docs.write_skipped(&|d| shingled.corpus().has_shingles(d), &mut list)
            .unwrap();
        let lines: Vec<(u64, String)> = String::from_utf8(list)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (v["record"].as_u64().unwrap(), v["code"].to_string())
            })
            .collect();
        let want = [
            (2, "\"empty\""),
            (3, "\"blank_line\""),
            (4, "\"malformed_json\""),
            (5, "\"empty\""),
        ];
        assert_eq!(lines, want.map(|(r, c)| (r, c.to_string())));
    }
}
