//! The document table: every input read into documents numbered `0..n` in input order,
//! each held in a few bytes, for any front end (the command line, a binding) to read
//! documents the same way.
//!
//! [`Documents::read_batches`] opens each input of [`InputOptions`] with [`open`](crate::open)
//! (a folder of shards, [`shards`], as one input per file, each [`InputInfo`] naming its
//! root and relative path),
//! hands the texts to the caller in batches as they are read (so shingling can run
//! beside reading), and keeps per document only what later steps use:
//!
//! - its **id** as the user sees it ([`Documents::id`], a [`DocId`]): the user's own (a
//!   JSON number keeps its source text), else its line (JSONL, lines) or record (CSV/TSV)
//!   number, `source:number` when several inputs are read. Users' ids are held back to
//!   back; a document without one costs nothing.
//! - its **place** ([`Place`]), held only where numbering jumps;
//! - with [`InputOptions::keep_raw`], its **exact bytes**, spilled to an unnamed
//!   temporary file (4 bytes of memory per document) and read back in document order
//!   ([`Documents::raw_reader`], [`Documents::record`]);
//! - with [`InputOptions::key_field`], its **key** ([`Documents::keys`]).
//!
//! Every record read is a document or a skipped record: skips are counted by reason code
//! and, with [`InputOptions::list_skipped`], listed in a temporary file that
//! [`Documents::write_skipped`] merges with the documents a caller skipped later (empty
//! ones) into one list in input order; [`Documents::accounts`] says where every record
//! went, `read = kept + removed + skipped`.
//!
//! Refusals: an option that does not apply to an input's format is
//! [`DocumentsError::OptionNotForFormat`] (before the input is read when its format is
//! known from its name); an input whose every record was skipped for one reason, or whose
//! named id field is in no record, is [`DocumentsError::BadRecord`]. Messages name the
//! options as the command line spells them (`--text-field`, `--keep-by`). Warnings (a
//! JSONL input with ids on some records only, a file sniffed as JSONL that is not) are
//! kept in [`Documents::warnings`].
//!
//! ```
//! use neardup_io::documents::{DocId, Documents, InputOptions};
//! use std::io::Write;
//!
//! # fn main() -> Result<(), neardup_io::documents::DocumentsError> {
//! let mut input = tempfile::Builder::new().suffix(".jsonl").tempfile().unwrap();
//! input.write_all(b"{\"id\": \"a\", \"text\": \"red bike\"}\n\nnot json\n{\"text\": \"blue car\"}\n").unwrap();
//! let options = InputOptions::new(vec![input.path().to_path_buf()]).with_raw(true);
//! let mut texts = Vec::new();
//! let docs = Documents::read_batches(&options, 1024, || {}, |batch| {
//!     texts.extend(batch);
//!     Ok::<(), neardup_io::documents::DocumentsError>(())
//! })?;
//! assert_eq!(texts, ["red bike", "blue car"]);
//! assert_eq!((docs.id(0), docs.id(1)), (DocId::Text("a".into()), DocId::Number(4)));
//! assert_eq!(docs.read_count(), 4); // two documents, a blank line, a malformed one
//! assert_eq!(docs.raw_reader()?.read(1)?, b"{\"text\": \"blue car\"}\n");
//! # Ok(())
//! # }
//! ```

mod checks;
mod error;
mod ids;
mod options;
mod places;
mod raw_spill;
mod shards;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};

use rayon::slice::ParallelSliceMut;
use serde::Serialize;

use crate::{Excluded, Filled, Format, Location, Record, SkipReason, Skipped};

pub use checks::fail_on_bad;
use checks::InputTally;
use error::temp_file;
pub use error::DocumentsError;
pub use ids::DocId;
use ids::UserIds;
pub use options::{known_format, refuse_options_for, EmptyText, InputOptions};
pub use places::Place;
use places::Places;
pub use raw_spill::RawReader;
use raw_spill::RawSpill;
pub use shards::{shards, Shards};

/// One input as opened.
#[derive(Clone, Debug)]
pub struct InputInfo {
    /// The input as given.
    pub path: PathBuf,
    /// The input as its records' locations name it (`-` for standard input).
    pub source: std::sync::Arc<str>,
    /// The format it was read as.
    pub format: Format,
    /// The format was told from the content (standard input, a file without a known
    /// extension), not from `--format` or the file name.
    pub sniffed: bool,
    /// A CSV/TSV input's header line, exactly as read ([`Reader::header_raw`](crate::Reader::header_raw)).
    pub header: Option<Vec<u8>>,
    /// The folder the user gave, for a shard of a folder read as shards (each file its
    /// own input); `None` for an input given directly.
    pub root: Option<PathBuf>,
    /// The shard's path below [`InputInfo::root`]; for an input given directly, its file
    /// name (`-` for standard input).
    pub relative: PathBuf,
}

/// Where the records read went: `read = kept + removed + skipped`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accounts {
    /// Records read: every entry of every input.
    pub read: u64,
    /// Documents kept.
    pub kept: u64,
    /// Removed as a duplicate of a kept document.
    pub removed: u64,
    /// Skipped by the readers or, empty, by a later stage.
    pub skipped: u64,
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

/// Why a later stage left document `doc` out, if it did: its text has no shingles
/// (`has_shingles` says whether it has), so every skip is a [`SkipReason`].
pub fn skipped_by_pipeline(has_shingles: &dyn Fn(u32) -> bool, doc: u32) -> Option<SkipReason> {
    (!has_shingles(doc)).then_some(SkipReason::Empty)
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
    /// The documents' texts, by [`Documents::read`] (empty after
    /// [`Documents::read_batches`], which hands them on; a caller may put them back).
    pub texts: Vec<String>,
    /// Where each document is: its line and record number in its input.
    places: Places,
    /// Each document's exact source bytes ([`InputOptions::keep_raw`]).
    raw: Option<RawSpill>,
    /// Each document's key ([`InputOptions::key_field`]; empty when none is asked for).
    pub keys: Vec<Option<Box<str>>>,
    /// The records of files in directories, whole, by document (the dir writer copies
    /// them by path); other formats hold only the compact fields above.
    files: Vec<(u32, Record)>,
    /// The first document of each input (inputs are read in order).
    input_start: Vec<u32>,
    /// The reference read before the inputs ([`InputOptions::reference`]): its documents,
    /// its inputs, its records read and skipped.
    reference: Reference,
    /// Records the readers skipped, by reason code: counted, not held, so junk costs no
    /// memory.
    pub skipped_by_code: BTreeMap<&'static str, u64>,
    /// Records the readers skipped, by input (for the per-input accounts).
    skipped_by_input: Vec<u64>,
    /// The readers' skipped records as lines of the skipped list, in input order, each
    /// behind its `input record` key, when the list was asked for (see
    /// [`Documents::write_skipped`]).
    skipped_spill: Option<std::io::BufWriter<File>>,
    /// The inputs, in the order read.
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

/// How much of what was read is the reference ([`InputOptions::reference`]).
#[derive(Clone, Copy, Debug, Default)]
struct Reference {
    docs: u32,
    inputs: usize,
    read: u64,
    skipped: u64,
}

/// What reading every input shares.
struct Reading<'a> {
    options: &'a InputOptions,
    /// The readers' options.
    opts: crate::ReadOptions,
    /// With several inputs, the folder each input's directory files are named under.
    folders: Option<Vec<PathBuf>>,
    /// The index of the input being read among those given (a folder of shards is one).
    given: usize,
    /// Texts read and not yet handed on.
    pending: Vec<String>,
    batch: usize,
}

/// Why reading stopped: the table's own error, or the caller's sink's.
enum Stop<E> {
    Documents(DocumentsError),
    Sink(E),
}

impl<E> From<DocumentsError> for Stop<E> {
    fn from(e: DocumentsError) -> Self {
        Stop::Documents(e)
    }
}

impl<E: From<DocumentsError>> Stop<E> {
    fn into_error(self) -> E {
        match self {
            Stop::Documents(e) => e.into(),
            Stop::Sink(e) => e,
        }
    }
}

impl Documents {
    /// Reads every input into the table, the texts with it ([`Documents::texts`]); see
    /// [`Documents::read_batches`].
    pub fn read(options: &InputOptions) -> Result<Documents, DocumentsError> {
        let mut texts = Vec::new();
        let mut docs = Self::read_batches(
            options,
            usize::MAX,
            || {},
            |batch| {
                texts.extend(batch);
                Ok::<(), DocumentsError>(())
            },
        )?;
        docs.texts = texts;
        Ok(docs)
    }

    /// Reads every input of `options` in order, handing the documents' texts to `sink`
    /// in batches of `batch` (the last one shorter) as they are read; the table comes back
    /// without its texts. `on_entry` is called once per record read (a progress count).
    ///
    /// A hard error (an unreadable file, a bad header, an option that does not fit an
    /// input's format, an input that yielded nothing but skips) stops reading, as does
    /// an error of `sink`, which is returned as it is.
    pub fn read_batches<E: From<DocumentsError>>(
        options: &InputOptions,
        batch: usize,
        mut on_entry: impl FnMut(),
        mut sink: impl FnMut(Vec<String>) -> Result<(), E>,
    ) -> Result<Documents, E> {
        // The reference first, so its documents are numbered `0..reference_docs()`.
        let given: Vec<&PathBuf> = options.reference.iter().chain(&options.inputs).collect();
        let mut docs = Documents {
            numbered_with_source: given.len() > 1,
            ..Documents::default()
        };
        if options.list_skipped {
            // Unnamed: nothing to clean up whatever ends the process.
            let spill = tempfile::tempfile().map_err(temp_file(
                "cannot create a temporary file for the skipped list",
            ))?;
            docs.skipped_spill = Some(std::io::BufWriter::new(spill));
        }
        if options.keep_raw {
            docs.raw = Some(RawSpill::new()?);
        }
        let mut reading = Reading {
            options,
            opts: options.read_options(),
            // Several inputs: a directory's files are named by the subfolder a dedup
            // writes them to, then their path in it, so equal relative paths stay apart.
            folders: (given.len() > 1).then(|| crate::root_folders(&given)),
            given: 0,
            pending: Vec::new(),
            batch,
        };
        reading.opts.keep_raw = options.keep_raw;
        let mut send = |texts: Vec<String>| sink(texts).map_err(Stop::Sink);
        for (i, path) in given.iter().enumerate() {
            if i == options.reference.len() {
                docs.end_reference();
            }
            reading.given = i;
            docs.read_given(path, &mut reading, &mut on_entry, &mut send)
                .map_err(Stop::into_error)?;
        }
        if options.inputs.is_empty() {
            docs.end_reference();
        }
        if !reading.pending.is_empty() {
            send(reading.pending).map_err(Stop::into_error)?;
        }
        if let Some(raw) = &mut docs.raw {
            raw.finish()?;
        }
        Ok(docs)
    }

    /// Reads one input as given: a file, or a folder, read as shards (each file its own
    /// input, [`shards`]) or as one document per file.
    fn read_given<E>(
        &mut self,
        path: &Path,
        reading: &mut Reading,
        on_entry: &mut impl FnMut(),
        send: &mut impl FnMut(Vec<String>) -> Result<(), Stop<E>>,
    ) -> Result<(), Stop<E>> {
        let shards = if path != Path::new("-") && path.is_dir() {
            shards(path, &reading.opts)?
        } else {
            None
        };
        let Some(shards) = shards else {
            return self.read_input(path, None, reading, on_entry, send);
        };
        self.add_excluded(shards.excluded);
        // Rows of different shards share numbers: ids without the user's name the shard.
        self.numbered_with_source |= shards.files.len() > 1;
        for file in &shards.files {
            self.read_input(file, Some(path), reading, on_entry, send)?;
        }
        Ok(())
    }

    /// Reads one input into the table; `root`: the folder of shards it is in.
    fn read_input<E>(
        &mut self,
        path: &Path,
        root: Option<&Path>,
        reading: &mut Reading,
        on_entry: &mut impl FnMut(),
        send: &mut impl FnMut(Vec<String>) -> Result<(), Stop<E>>,
    ) -> Result<(), Stop<E>> {
        let options = reading.options;
        // Options that do not fit a format known without reading are refused at once.
        if let Some(format) = known_format(path, reading.opts.format) {
            refuse_options_for(format, false, path, options)?;
        }
        // The reader's errors name the file and line already.
        let mut reader = crate::open(path, &reading.opts).map_err(DocumentsError::from)?;
        let format = reader.format();
        self.inputs.push(InputInfo {
            path: path.to_path_buf(),
            source: path.display().to_string().into(),
            format,
            sniffed: reader.sniffed(),
            header: reader.header_raw().map(<[u8]>::to_vec),
            root: root.map(Path::to_path_buf),
            relative: match root.and_then(|r| path.strip_prefix(r).ok()) {
                Some(relative) => relative.to_path_buf(),
                None => path
                    .file_name()
                    .map_or_else(|| path.to_path_buf(), PathBuf::from),
            },
        });
        refuse_options_for(format, reader.sniffed(), path, options)?;
        let input = self.inputs.len() - 1;
        self.input_start.push(self.count);
        let mut tally = InputTally::default();
        // One record, its buffers reused by the readers that can (Parquet).
        let mut record = Record::default();
        while let Some(filled) = reader.read_into(&mut record) {
            on_entry();
            let filled = filled.map_err(DocumentsError::from)?;
            let skipped = match filled {
                Filled::Record => {
                    if options.fail_on_error {
                        checks::fail_on_lossy(&record)?;
                    }
                    tally.record(&record);
                    // A record with nothing to compare is skipped here rather than by a
                    // later stage: so it costs what a blank line costs (a count, and a
                    // line of the skipped list's file), not a document's place in every
                    // table.
                    if !options.skips_as_empty(&record.text) {
                        self.add(&mut record, format, reading, send)?;
                        continue;
                    }
                    Skipped {
                        location: record.location.clone(),
                        id: record.id.take(),
                        reason: SkipReason::Empty,
                    }
                }
                Filled::Skipped(s) => {
                    if options.fail_on_error {
                        checks::fail_on_skipped(&s)?;
                    }
                    tally.skipped(&s);
                    s
                }
            };
            self.skip(&skipped, input)?;
        }
        self.note_reader(path, &mut reader);
        let fields = &self
            .fields_seen
            .last()
            .map(|(_, f)| f.as_slice())
            .unwrap_or(&[]);
        let sniffed = reader.sniffed();
        tally.check(path, format, sniffed, options, fields, &mut self.warnings)?;
        Ok(())
    }

    /// Adds a record of the input being read as the next document.
    fn add<E>(
        &mut self,
        record: &mut Record,
        format: Format,
        reading: &mut Reading,
        send: &mut impl FnMut(Vec<String>) -> Result<(), Stop<E>>,
    ) -> Result<(), Stop<E>> {
        // Held per document, so only what later steps use, compactly.
        let doc = self.count;
        self.count = doc
            .checked_add(1)
            .ok_or(DocumentsError::TooManyDocuments(doc as usize + 1))?;
        match (&record.id, &reading.folders) {
            (Some(id), Some(folders)) if format == Format::Dir => {
                let folder = folders[reading.given].to_string_lossy();
                self.user_ids.push(doc, &format!("{folder}/{id}"), false);
            }
            (Some(id), _) => self.user_ids.push(doc, id, record.numeric_id),
            (None, _) => {}
        }
        self.lossy += record.lossy as u64;
        reading.pending.push(std::mem::take(&mut record.text));
        if reading.pending.len() >= reading.batch {
            send(std::mem::take(&mut reading.pending))?;
        }
        self.places.push(Place {
            line: record.location.line,
            record: record.location.record,
        });
        if reading.options.key_field.is_some() {
            self.keys
                .push(record.key.take().map(String::into_boxed_str));
        }
        if let Some(raw) = &mut self.raw {
            // A directory's file is kept whole below: no bytes here.
            raw.push(if format == Format::Dir {
                &[]
            } else {
                &record.raw
            })?;
        }
        if format == Format::Dir {
            self.files.push((doc, std::mem::take(record)));
        }
        Ok(())
    }

    /// Counts a skipped record of input `input` (and lists it, when asked to).
    fn skip(&mut self, s: &Skipped, input: usize) -> Result<(), DocumentsError> {
        *self.skipped_by_code.entry(s.reason.code()).or_insert(0) += 1;
        if self.skipped_by_input.len() <= input {
            self.skipped_by_input.resize(input + 1, 0);
        }
        self.skipped_by_input[input] += 1;
        if let Some(spill) = &mut self.skipped_spill {
            let line = SkippedRecord::new(input, (&s.location).into(), &s.reason);
            write!(spill, "{input} {}\t", s.location.record)
                .and_then(|()| serde_json::to_writer(&mut *spill, &line).map_err(Into::into))
                .and_then(|()| spill.write_all(b"\n"))
                .map_err(temp_file("cannot write the skipped list's temporary file"))?;
        }
        Ok(())
    }

    /// Keeps what a reader tells after reading: warnings, entries left out, fields seen.
    fn note_reader(&mut self, path: &Path, reader: &mut crate::Reader) {
        self.warnings
            .extend(reader.take_warnings().iter().map(ToString::to_string));
        self.add_excluded(reader.excluded());
        self.fields_seen
            .push((path.to_path_buf(), reader.fields_seen()));
    }

    /// Counts entries of a directory left out.
    fn add_excluded(&mut self, excluded: Vec<(Excluded, u64)>) {
        for (reason, n) in excluded {
            match self.excluded.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, total)) => *total += n,
                None => self.excluded.push((reason, n)),
            }
        }
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
                    match i.format {
                        Format::Jsonl => "its first non-blank byte is '{'",
                        Format::Parquet => "it starts with PAR1",
                        _ => "it does not start with '{'",
                    }
                )
            })
            .collect()
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True if no input had a document.
    pub fn is_empty(&self) -> bool {
        self.count == 0
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

    /// The documents of input `input` (an index into `inputs`), numbered in a run.
    pub fn input_docs(&self, input: usize) -> std::ops::Range<u32> {
        let start = self.input_start.get(input).copied().unwrap_or(self.count);
        let end = self
            .input_start
            .get(input + 1)
            .copied()
            .unwrap_or(self.count);
        start..end
    }

    /// Records input `input`'s reader skipped (documents the pipeline skips as empty
    /// are documents here: [`Documents::input_docs`]).
    pub fn input_skipped(&self, input: usize) -> u64 {
        self.skipped_by_input.get(input).copied().unwrap_or(0)
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
    pub fn raw_reader(&self) -> Result<RawReader<'_>, DocumentsError> {
        RawReader::new(self.raw.as_ref())
    }

    /// The record to hand to the dedup writer: a directory's file as read, or the
    /// document's bytes (from `raw`, asked in ascending document order).
    pub fn record(
        &self,
        doc: u32,
        raw: &mut RawReader,
    ) -> Result<std::borrow::Cow<'_, Record>, DocumentsError> {
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

    /// Number of records read, documents and skipped ones (the reference's too).
    pub fn read_count(&self) -> u64 {
        u64::from(self.count) + self.skipped_count()
    }

    /// Marks what was read so far as the reference.
    fn end_reference(&mut self) {
        self.reference = Reference {
            docs: self.count,
            inputs: self.inputs.len(),
            read: self.read_count(),
            skipped: self.skipped_count(),
        };
    }

    /// The number of reference documents ([`InputOptions::reference`]): documents
    /// `0..reference_docs()`, read before the inputs; 0 without a reference.
    pub fn reference_docs(&self) -> u32 {
        self.reference.docs
    }

    /// The number of reference inputs: `inputs[..reference_inputs()]` are the reference.
    pub fn reference_inputs(&self) -> usize {
        self.reference.inputs
    }

    /// Records read from the reference, documents and skipped ones: never written, and
    /// not in [`Documents::accounts`].
    pub fn reference_read(&self) -> u64 {
        self.reference.read
    }

    /// True if document `doc` is in the reference.
    pub fn is_reference(&self, doc: u32) -> bool {
        doc < self.reference.docs
    }

    /// Where every record of the inputs went (the reference's are not counted: see
    /// [`Documents::reference_read`]), `removed` of the documents being duplicates and
    /// `empty` of them skipped by the pipeline.
    pub fn accounts(&self, removed: u64, empty: u64) -> Accounts {
        let read = self.read_count() - self.reference.read;
        let skipped = self.skipped_count() - self.reference.skipped + empty;
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
    ) -> Result<(), DocumentsError> {
        const READ_BACK: &str = "cannot read back the skipped list's temporary file";
        let spill = match self.skipped_spill.take() {
            Some(spill) => Some(
                spill
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .and_then(|mut f| f.rewind().map(|()| f))
                    .map_err(temp_file(READ_BACK))?,
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
        let put = |out: &mut dyn Write, s: &SkippedRecord| -> Result<(), DocumentsError> {
            serde_json::to_writer(&mut *out, s).map_err(|e| DocumentsError::Write(e.into()))?;
            out.write_all(b"\n").map_err(DocumentsError::Write)
        };
        // Record numbers count every entry of an input (a directory's files in walk order).
        if let Some(spill) = spill {
            for line in std::io::BufReader::new(spill).lines() {
                let line = line.map_err(temp_file(READ_BACK))?;
                let (key, json) = line.split_once('\t').unwrap_or(("", &line));
                let mut parts = key.split(' ').map(|n| n.parse::<u64>().unwrap_or(0));
                let at = (
                    parts.next().unwrap_or(0) as usize,
                    parts.next().unwrap_or(0),
                );
                while let Some(e) = empty.next_if(|e| (e.input, e.location.record) < at) {
                    put(out, &e)?;
                }
                out.write_all(json.as_bytes())
                    .and_then(|()| out.write_all(b"\n"))
                    .map_err(DocumentsError::Write)?;
            }
        }
        for e in empty {
            put(out, &e)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path, keep_raw: bool) -> Documents {
        let options = InputOptions::new(vec![path.to_path_buf()]).with_raw(keep_raw);
        Documents::read_batches(&options, 1 << 14, || {}, |_| Ok::<(), DocumentsError>(())).unwrap()
    }

    /// Nothing to compare: no letter or digit (what a shingler without normalization
    /// tricks would say of these texts).
    fn no_letters(text: &str) -> bool {
        !text.chars().any(char::is_alphanumeric)
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
            let options = InputOptions::new(vec![path.clone()])
                .with_raw(true)
                .with_skipped_list(true)
                .with_empty_text(no_letters);
            let mut texts = Vec::new();
            let mut docs = Documents::read_batches(
                &options,
                1 << 14,
                || {},
                |b| {
                    texts.extend(b);
                    Ok::<(), DocumentsError>(())
                },
            )
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
        // Only a text without a letter or digit is asked.
        let options = InputOptions::new(vec![]).with_empty_text(|_| true);
        assert!(options.skips_as_empty(" -- "));
        assert!(!options.skips_as_empty("x"));
        assert!(!InputOptions::new(vec![]).skips_as_empty(" "));
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
        let options = InputOptions::new(vec![path.clone()]).with_skipped_list(true);
        let mut texts = Vec::new();
        let mut entries = 0;
        let mut docs = Documents::read_batches(
            &options,
            2,
            || entries += 1,
            |batch| {
                texts.extend(batch);
                Ok::<(), DocumentsError>(())
            },
        )
        .unwrap();
        assert_eq!(entries, 6);
        // The empty documents a later stage (here: `no_letters`) leaves out.
        let has_shingles = |d: u32| !no_letters(&texts[d as usize]);
        let by_pipeline: Vec<_> = (0..docs.len() as u32)
            .map(|d| skipped_by_pipeline(&has_shingles, d))
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
        assert_eq!(docs.accounts(1, 2), accounts);
        let mut list = Vec::new();
        docs.write_skipped(&has_shingles, &mut list).unwrap();
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

    /// What stops reading is typed: an option for another format (before the input is
    /// read), an input that yields nothing but skips, a malformed record under
    /// `fail_on_error`, and the sink's own error, returned as it is.
    #[test]
    fn refusals_and_the_sinks_error_come_back_typed() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("a.csv");
        std::fs::write(&csv, "text\nx\n").unwrap();
        let options = InputOptions::new(vec![csv]).with_text_field("body");
        match Documents::read(&options) {
            Err(DocumentsError::OptionNotForFormat(m)) => {
                assert!(m.starts_with("--text-field does not apply to "), "{m}")
            }
            other => panic!("{:?}", other.map(|d| d.len())),
        }
        let jsonl = dir.path().join("b.jsonl");
        std::fs::write(&jsonl, "{\"body\": \"x\"}\n{\"body\": \"y\"}\n").unwrap();
        match Documents::read(&InputOptions::new(vec![jsonl])) {
            Err(DocumentsError::BadRecord(m)) => {
                assert!(
                    m.contains("has the text field \"text\" (all 2 skipped)"),
                    "{m}"
                )
            }
            other => panic!("{:?}", other.map(|d| d.len())),
        }
        let bad = dir.path().join("c.jsonl");
        std::fs::write(&bad, "{\"text\": \"a\"}\nnot json\n").unwrap();
        let strict = InputOptions::new(vec![bad.clone()]).with_fail_on_error(true);
        match Documents::read(&strict) {
            Err(DocumentsError::BadRecord(m)) => assert!(m.contains("c.jsonl:2: "), "{m}"),
            other => panic!("{:?}", other.map(|d| d.len())),
        }
        let stopped = Documents::read_batches(
            &InputOptions::new(vec![bad]),
            1,
            || {},
            |_| Err::<(), Box<dyn std::error::Error>>("shingling stopped".into()),
        );
        assert_eq!(stopped.err().unwrap().to_string(), "shingling stopped");
    }
}
