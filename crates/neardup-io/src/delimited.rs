//! CSV and TSV: a header row, then one record per row.
//!
//! **CSV** (and TSV read with a quote byte, [`ReadOptions::quote`]) is parsed by
//! `csv-core` (the parser of the `csv` crate: RFC 4180 quoting, `""` inside quotes,
//! quoted fields may span lines), driven here field by field straight from the input
//! buffer. So each record's exact source bytes are known — from the first byte of the
//! row through its line end (`\n`, `\r\n` or a lone `\r`) — and writing every record's
//! `raw` after the header gives back the input; and only the fields that are read (text,
//! id and key columns) are kept, so memory is bounded by the record-size limit however
//! many fields a row has.
//!
//! **TSV** without a quote byte is read as the format is defined (IANA
//! `text/tab-separated-values`): no quoting at all. A row is a line, ending at `\n` or
//! `\r\n` (a lone `\r` is data), its fields split at tabs; a `"` is an ordinary
//! character, so a title like `"Bilocale" luminoso` cannot swallow the rows after it.
//! With [`ReadOptions::tsv_escapes`] the escapes `\t`, `\n`, `\r` and `\\` in the kept
//! fields are decoded (another backslash is kept as is); `raw` stays the exact line.
//!
//! The text is the values of [`ReadOptions::text_columns`] joined with one space; the id
//! is the value of [`ReadOptions::id_column`] (by default the column named `id`, if the
//! header has one, as JSONL's id is the field `id`; a row too short to hold that default
//! column is a record without an id), the key that of [`ReadOptions::key_field`].
//! All are looked up by exact name in the
//! header (whose UTF-8 BOM is ignored); a missing one is an [`Error::MissingColumn`].
//! Blank lines before the header belong to the header. Then every line end that starts
//! a row (a blank line: only `\n`, `\r\n` or `\r`) is skipped as
//! [`SkipReason::BlankLine`], so that every line is accounted for. A row too short to
//! hold every column read from is skipped ([`SkipReason::MissingColumns`]); a row with
//! extra fields is read normally. A row longer than the record-size limit is skipped
//! ([`SkipReason::TooLarge`]) without being held.
//!
//! A quoted field that is still open at the end of the input means a stray quote: the
//! parser would make one field of everything after it. That record is skipped as
//! [`SkipReason::UnclosedQuote`], naming its first line and how many lines it swallowed;
//! in the header it is an [`Error::BadHeader`] (the columns cannot be trusted), as is a
//! header over the record-size limit or of more than 2²⁰ columns. A stray
//! quote that a later quote closes cannot be told from a valid quoted field: the record
//! is read as the parser sees it, but a quoted field spanning more than
//! [`LONG_QUOTED_FIELD_LINES`] lines (and one never closed) is a [`Warning`] naming the
//! line of its opening quote.
//!
//! With quoting, lines are counted at `\n`, `\r\n` and lone `\r` line ends: the parser
//! ends a row at each of them, so each row starts on a new line. Without, at `\n`.
//!
//! [`ReadOptions::quote`]: crate::ReadOptions::quote
//! [`ReadOptions::tsv_escapes`]: crate::ReadOptions::tsv_escapes
//! [`ReadOptions::text_columns`]: crate::ReadOptions::text_columns
//! [`ReadOptions::id_column`]: crate::ReadOptions::id_column
//! [`ReadOptions::key_field`]: crate::ReadOptions::key_field

use std::io::{self, BufRead};

use csv_core::ReadFieldResult;

use crate::error::{Error, Result};
use crate::open::{peek_until, ErrorContext, Input};
use crate::options::{ReadOptions, DEFAULT_ID_COLUMN};
use crate::record::{Entry, Location, Record, SkipReason, Skipped};
use crate::text::{decode, decode_owned, BOM};
use crate::warning::{Warning, WarningKind, LONG_QUOTED_FIELD_LINES};

/// The scratch buffer for the bytes of fields that are not kept.
const SCRATCH: usize = 8 * 1024;

/// The most columns a header may have: each costs a name and an offset, so a "header"
/// of millions of delimiters would otherwise take gigabytes.
const MAX_COLUMNS: usize = 1 << 20;

/// Reads records from CSV or TSV.
pub(crate) struct DelimitedReader {
    input: Box<dyn BufRead + Send>,
    ctx: ErrorContext,
    core: csv_core::Reader,
    delimiter: u8,
    /// The quote byte; `None` for TSV as defined (no quoting: rows are lines).
    quote: Option<u8>,
    /// Unquoted TSV: decode `\t`, `\n`, `\r`, `\\` in the kept fields.
    escapes: bool,
    /// True once the parser has been given input (see [`DelimitedReader::feed`]).
    started: bool,
    limit: usize,
    header_raw: Option<Vec<u8>>,
    columns: Vec<String>,
    text_idx: Vec<usize>,
    id_idx: Option<usize>,
    key_idx: Option<usize>,
    /// The number of fields a row needs to hold every column read from.
    needed: usize,
    /// The number of fields a row must have to be a record: every column read from but
    /// the default id column.
    required: usize,
    /// The line number of the next byte of the input.
    line: u64,
    /// Entries yielded so far.
    records: u64,
    finished: bool,
    /// The kept fields of the current row, back to back, and where each ends.
    store: Vec<u8>,
    ends: Vec<usize>,
    scratch: Box<[u8]>,
    /// The longest quoted field of the last row read: the line ends before its opening
    /// quote (in the row), the line ends inside it, and whether it is still open.
    quoted_span: Option<QuotedSpan>,
    warnings: Vec<Warning>,
}

/// Where the longest quoted field of a row is, and how long it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct QuotedSpan {
    /// Line ends in the row before its opening quote.
    start: u64,
    /// The lines it spans.
    lines: u64,
    /// True if it is open at the end of the input.
    to_end: bool,
}

/// One row as parsed.
enum Row {
    /// The row is in `raw`, its first `kept` fields in the reader's store.
    Held {
        raw: Vec<u8>,
        fields: usize,
        lines: u64,
    },
    /// The row is longer than the limit.
    TooLarge { size: u64, lines: u64 },
    /// A quoted field is open at the end of the input.
    Unclosed { lines: u64 },
}

/// Follows the parser's quoting through the bytes of one row, to tell whether the input
/// ends inside a quoted field. (csv-core does not say, and a clone of its reader cannot
/// be asked: `Dfa::clone` in csv-core 0.1.13 copies only the transition table, so a
/// cloned reader parses wrongly.) The states and transitions are csv-core's, for `"`
/// quotes doubled to escape them and no escape byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quoting {
    /// At the start of a field (or of the row).
    StartField,
    /// In an unquoted field: quotes are literal.
    InField,
    /// In a quoted field.
    InQuoted,
    /// Just after a quote in a quoted field: it closed the field, unless another follows.
    AfterQuote,
}

/// A change of [`Quoting`] that [`Quoting::feed_with`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QuoteEvent {
    /// A quote at the start of a field opens a quoted field.
    Open,
    /// A quote inside a quoted field: it closes the field unless another follows.
    Close,
}

impl Quoting {
    #[cfg(test)]
    fn feed(self, delimiter: u8, quote: u8, bytes: &[u8]) -> Quoting {
        self.feed_with(delimiter, quote, bytes, |_, _| {})
    }

    /// Follows `bytes`, calling `on(i, event)` at the index of each quote that opens or
    /// (perhaps) closes a quoted field.
    fn feed_with(
        mut self,
        delimiter: u8,
        quote: u8,
        all: &[u8],
        mut on: impl FnMut(usize, QuoteEvent),
    ) -> Quoting {
        use Quoting::*;
        let mut bytes = all;
        let at = |rest: &[u8]| all.len() - rest.len();
        while let Some((&b, rest)) = bytes.split_first() {
            let is_end = |b: u8| b == delimiter || b == b'\r' || b == b'\n';
            self = match self {
                StartField if b == quote => {
                    on(at(bytes), QuoteEvent::Open);
                    InQuoted
                }
                StartField | InField | AfterQuote if is_end(b) => StartField,
                AfterQuote if b == quote => InQuoted,
                StartField | AfterQuote => InField,
                InField => {
                    // Skip to the next byte that can end the field.
                    match memchr::memchr3(delimiter, b'\r', b'\n', rest) {
                        Some(i) => {
                            bytes = &rest[i..];
                            continue;
                        }
                        None => return InField,
                    }
                }
                InQuoted => match memchr::memchr(quote, bytes) {
                    Some(i) => {
                        on(at(bytes) + i, QuoteEvent::Close);
                        bytes = &bytes[i + 1..];
                        self = AfterQuote;
                        continue;
                    }
                    None => return InQuoted,
                },
            };
            bytes = rest;
        }
        self
    }
}

/// True if a row's raw bytes are only a line end.
fn is_blank_line(raw: &[u8]) -> bool {
    matches!(raw, b"\n" | b"\r\n")
}

/// Appends `field` to `out` with the TSV escapes `\t`, `\n`, `\r` and `\\` decoded; a
/// backslash before any other byte (or at the end) is kept as is.
fn unescape_into(out: &mut Vec<u8>, field: &[u8]) {
    let mut rest = field;
    while let Some(i) = memchr::memchr(b'\\', rest) {
        out.extend_from_slice(&rest[..i]);
        let decoded = match rest.get(i + 1) {
            Some(b't') => Some(b'\t'),
            Some(b'n') => Some(b'\n'),
            Some(b'r') => Some(b'\r'),
            Some(b'\\') => Some(b'\\'),
            _ => None,
        };
        match decoded {
            Some(b) => {
                out.push(b);
                rest = &rest[i + 2..];
            }
            None => {
                out.push(b'\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.extend_from_slice(rest);
}

/// Makes room for `more` bytes in `buf`, doubling its capacity as usual but never past
/// `limit` (the caller checked that `buf.len() + more <= limit`).
pub(crate) fn grow_within(buf: &mut Vec<u8>, more: usize, limit: usize) {
    let need = buf.len() + more;
    if need > buf.capacity() {
        let cap = (buf.capacity() * 2).max(need).min(limit.max(need));
        buf.reserve_exact(cap - buf.len());
    }
}

/// Counts line ends (`\n`, `\r\n`, lone `\r`) in a stream of chunks.
#[derive(Default, Clone, Copy)]
struct LineEnds {
    count: u64,
    after_cr: bool,
}

impl LineEnds {
    fn feed(&mut self, bytes: &[u8]) {
        let mut last = None;
        for i in memchr::memchr2_iter(b'\r', b'\n', bytes) {
            let b = bytes[i];
            let cr_before = match last {
                Some(j) => j + 1 == i && bytes[j] == b'\r',
                None => i == 0 && self.after_cr,
            };
            if b == b'\r' || !cr_before {
                self.count += 1;
            }
            last = Some(i);
        }
        if let Some(&b) = bytes.last() {
            self.after_cr = b == b'\r';
        }
    }
}

impl DelimitedReader {
    /// Reads the header of `input` and checks that the columns of `opts` are in it.
    /// `quote` is the quote byte (`None`: no quoting, a row is a line).
    pub(crate) fn new(
        input: Input,
        delimiter: u8,
        quote: Option<u8>,
        opts: &ReadOptions,
    ) -> Result<Self> {
        if opts.text_columns.is_empty() {
            return Err(Error::InvalidOptions(
                "at least one text column is needed for CSV/TSV".to_string(),
            ));
        }
        if delimiter == b'\r' || delimiter == b'\n' || !delimiter.is_ascii() {
            return Err(Error::InvalidOptions(format!(
                "the delimiter {:?} must be an ASCII character other than a line end",
                delimiter as char
            )));
        }
        if let Some(q) = quote {
            if q == delimiter || q == b'\r' || q == b'\n' {
                return Err(Error::InvalidOptions(format!(
                    "the quote byte {:?} cannot be the delimiter or a line end",
                    q as char
                )));
            }
        }
        let core = csv_core::ReaderBuilder::new()
            .delimiter(delimiter)
            .quote(quote.unwrap_or(b'"'))
            .build();
        let Input { reader, ctx } = input;
        let (reader, prefix) =
            peek_until(reader, |p| p.len() >= BOM.len()).map_err(|e| ctx.read_error(Some(1), e))?;
        let mut reader = DelimitedReader {
            input: reader,
            ctx,
            core,
            delimiter,
            quote,
            escapes: opts.tsv_escapes && quote.is_none(),
            started: false,
            limit: opts.max_record_bytes,
            header_raw: None,
            columns: Vec::new(),
            text_idx: Vec::new(),
            id_idx: None,
            key_idx: None,
            needed: 0,
            required: 0,
            line: 1,
            records: 0,
            finished: false,
            store: vec![0; 256],
            ends: Vec::new(),
            scratch: vec![0; SCRATCH].into_boxed_slice(),
            quoted_span: None,
            warnings: Vec::new(),
        };
        let bom = prefix.starts_with(BOM);
        if bom {
            reader.input.consume(BOM.len());
        }
        reader.read_header(bom, opts)?;
        Ok(reader)
    }

    /// The header row's exact bytes (with any BOM and its line end), if there is one.
    pub(crate) fn header_raw(&self) -> Option<&[u8]> {
        self.header_raw.as_deref()
    }

    /// The column names of the header.
    pub(crate) fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The warnings collected so far, emptied.
    pub(crate) fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// Notes a warning if the last row read had a long or unclosed quoted field; `line`
    /// is the row's first line.
    fn check_quoted_span(&mut self, line: u64) {
        if let Some(span) = self.quoted_span.take() {
            if span.to_end || span.lines > LONG_QUOTED_FIELD_LINES {
                self.warnings.push(Warning {
                    source: self.ctx.source.to_string(),
                    line: line + span.start,
                    kind: WarningKind::LongQuotedField {
                        lines: span.lines,
                        to_end: span.to_end,
                    },
                });
            }
        }
    }

    /// Reads the next row, as a line (no quoting) or with the parser.
    fn next_row(&mut self, keep: usize) -> Result<Row> {
        if self.quote.is_none() {
            self.read_line_row(keep)
        } else {
            let line = self.line;
            let row = self.read_row(keep)?;
            self.check_quoted_span(line);
            Ok(row)
        }
    }

    fn read_header(&mut self, bom: bool, opts: &ReadOptions) -> Result<()> {
        let mut raw = if bom { BOM.to_vec() } else { Vec::new() };
        // Blank lines before the header are part of it.
        let row = loop {
            if self.quote.is_some() {
                if let Some(end) = self.take_line_end()? {
                    raw.extend_from_slice(end);
                    self.line += 1;
                    continue;
                }
            }
            if self.peek()?.is_none() {
                self.header_raw = (!raw.is_empty()).then_some(raw);
                self.finished = true;
                return Ok(());
            }
            match self.next_row(MAX_COLUMNS)? {
                Row::Held {
                    raw: blank, lines, ..
                } if is_blank_line(&blank) => {
                    raw.extend_from_slice(&blank);
                    self.line += lines;
                }
                row => break row,
            }
        };
        let line = self.line;
        let path = self.ctx.source.to_string();
        let bad = |reason: String| Error::BadHeader { path, line, reason };
        let (row, fields, lines) = match row {
            Row::Held { fields, .. } if fields > MAX_COLUMNS => {
                return Err(bad(format!(
                    "{fields} columns, more than the {MAX_COLUMNS} a header may have"
                )))
            }
            Row::Held { raw, fields, lines } => (raw, fields, lines),
            Row::TooLarge { size, .. } => {
                return Err(bad(format!(
                    "the header row is {size} bytes, over the record-size limit of {} bytes",
                    self.limit
                )))
            }
            Row::Unclosed { lines } => {
                return Err(bad(format!(
                    "a quoted column name is never closed: the header runs to the end of \
                     the input ({lines} lines)"
                )))
            }
        };
        raw.extend_from_slice(&row);
        self.line += lines;
        self.header_raw = Some(raw);
        self.columns = (0..fields).map(|i| decode(self.field(i)).0).collect();
        for name in &opts.text_columns {
            let idx = self.column_index(name)?;
            self.text_idx.push(idx);
        }
        self.id_idx = match &opts.id_column {
            Some(name) => Some(self.column_index(name)?),
            // As JSONL's `id` field does, a column named `id` (in any case: spreadsheets
            // write `ID`; an exact `id` first) names the records unless another is asked for.
            None => self
                .columns
                .iter()
                .position(|c| c == DEFAULT_ID_COLUMN)
                .or_else(|| {
                    self.columns
                        .iter()
                        .position(|c| c.eq_ignore_ascii_case(DEFAULT_ID_COLUMN))
                }),
        };
        if let Some(name) = &opts.key_field {
            self.key_idx = Some(self.column_index(name)?);
        }
        let end =
            |columns: &mut dyn Iterator<Item = &usize>| columns.map(|&i| i + 1).max().unwrap_or(0);
        let named_id = self.id_idx.filter(|_| opts.id_column.is_some());
        self.needed = end(&mut self
            .text_idx
            .iter()
            .chain(self.id_idx.iter())
            .chain(self.key_idx.iter()));
        // A row without the default id column is a record without an id, not a short row.
        self.required = end(&mut self
            .text_idx
            .iter()
            .chain(named_id.iter())
            .chain(self.key_idx.iter()));
        Ok(())
    }

    fn column_index(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| Error::MissingColumn {
                path: self.ctx.source.to_string(),
                column: name.to_string(),
                available: self.columns.clone(),
            })
    }

    fn read_error(&self, e: io::Error) -> Error {
        self.ctx.read_error(Some(self.line), e)
    }

    /// The next byte of the input, without consuming it; `None` at the end.
    fn peek(&mut self) -> Result<Option<u8>> {
        loop {
            match self.input.fill_buf() {
                Ok(buf) => return Ok(buf.first().copied()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_error(e)),
            }
        }
    }

    /// Consumes a line end (`\n`, `\r\n` or a lone `\r`) if the input continues with
    /// one, and returns it.
    fn take_line_end(&mut self) -> Result<Option<&'static [u8]>> {
        match self.peek()? {
            Some(b'\n') => {
                self.input.consume(1);
                Ok(Some(b"\n"))
            }
            Some(b'\r') => {
                self.input.consume(1);
                if self.peek()? == Some(b'\n') {
                    self.input.consume(1);
                    return Ok(Some(b"\r\n"));
                }
                Ok(Some(b"\r"))
            }
            _ => Ok(None),
        }
    }

    /// Parses one row, which starts at the next byte (not a line end, not the end of
    /// the input); keeps the bytes of its first `keep` fields.
    fn read_row(&mut self, keep: usize) -> Result<Row> {
        let mut raw = Vec::new();
        let mut size: u64 = 0;
        let mut too_large = false;
        let mut unclosed = false;
        let mut line_ends = LineEnds::default();
        let mut store_len = 0;
        let mut fields = 0;
        self.ends.clear();
        let limit = self.limit as u64;
        let mut quoting = Quoting::StartField;
        let quote = self.quote.unwrap_or(b'"');
        // Line ends before the open quoted field's opening quote, and the longest
        // closed quoted field so far (as in `QuotedSpan`).
        let mut open_at = 0;
        let mut longest: Option<QuotedSpan> = None;
        let mut last = None;
        let DelimitedReader {
            delimiter,
            input,
            ctx,
            core,
            started,
            store,
            ends,
            scratch,
            line,
            ..
        } = self;
        loop {
            let chunk = loop {
                match input.fill_buf() {
                    Ok(chunk) => break chunk,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(ctx.read_error(Some(*line + line_ends.count), e)),
                }
            };
            if chunk.is_empty() {
                unclosed = quoting == Quoting::InQuoted;
            }
            // The parser strips a UTF-8 BOM at the start of its first input of 3 bytes
            // or more. The BOM is handled before (only at the start of the input): give
            // the parser a single byte first so that it never strips one itself.
            let chunk = if *started || chunk.is_empty() {
                chunk
            } else {
                *started = true;
                &chunk[..1]
            };
            let kept = !too_large && fields < keep;
            if kept && store_len == store.len() {
                // Never much past the limit: a row that needs more is too large anyway.
                let len = (store.len() * 2)
                    .min(limit as usize + 1)
                    .max(store.len() + 1);
                store.reserve_exact(len - store.len());
                store.resize(len, 0);
            }
            let (res, nin, nout) = if kept {
                core.read_field(chunk, &mut store[store_len..])
            } else {
                core.read_field(chunk, scratch)
            };
            if kept {
                store_len += nout;
            }
            let consumed = &chunk[..nin];
            let mut fed = 0;
            quoting = quoting.feed_with(*delimiter, quote, consumed, |i, event| {
                line_ends.feed(&consumed[fed..i]);
                fed = i;
                match event {
                    QuoteEvent::Open => open_at = line_ends.count,
                    QuoteEvent::Close => {
                        let lines = line_ends.count - open_at + 1;
                        if longest.is_none_or(|l| lines > l.lines) {
                            longest = Some(QuotedSpan {
                                start: open_at,
                                lines,
                                to_end: false,
                            });
                        }
                    }
                }
            });
            line_ends.feed(&consumed[fed..]);
            if !too_large {
                if size + nin as u64 > limit {
                    too_large = true;
                    raw = Vec::new();
                    *store = vec![0; 256];
                    store_len = 0;
                } else {
                    grow_within(&mut raw, nin, limit as usize);
                    raw.extend_from_slice(consumed);
                }
            }
            if let Some(&b) = consumed.last() {
                last = Some(b);
            }
            size += nin as u64;
            input.consume(nin);
            match res {
                ReadFieldResult::InputEmpty | ReadFieldResult::OutputFull => continue,
                ReadFieldResult::Field { record_end } => {
                    if kept {
                        ends.push(store_len);
                    }
                    fields += 1;
                    if record_end {
                        break;
                    }
                }
                ReadFieldResult::End => break,
            }
        }
        // A `\r` that ends the row may be followed by its `\n`: that belongs to the row.
        if line_ends.after_cr && self.peek()? == Some(b'\n') {
            self.input.consume(1);
            line_ends.feed(b"\n");
            if !too_large && size < self.limit as u64 {
                raw.push(b'\n');
            } else if !too_large {
                too_large = true;
                raw = Vec::new();
            }
            size += 1;
        }
        self.quoted_span = longest;
        if unclosed {
            // The lines holding bytes of the row: one more than its line ends, unless it
            // ends with one.
            let open_line = !matches!(last, Some(b'\r' | b'\n'));
            self.quoted_span = Some(QuotedSpan {
                start: open_at,
                lines: line_ends.count - open_at + u64::from(open_line),
                to_end: true,
            });
            return Ok(Row::Unclosed {
                lines: line_ends.count + u64::from(open_line),
            });
        }
        if too_large {
            return Ok(Row::TooLarge {
                size,
                lines: line_ends.count,
            });
        }
        Ok(Row::Held {
            raw,
            fields,
            lines: line_ends.count,
        })
    }

    /// Reads one row of TSV without quoting: one line, through its `\n` (or to the end of
    /// the input), split at tabs; keeps its first `keep` fields (without the line end,
    /// `\r\n` or `\n`), escapes decoded if asked for.
    fn read_line_row(&mut self, keep: usize) -> Result<Row> {
        let limit = self.limit as u64;
        let mut raw = Vec::new();
        let mut size: u64 = 0;
        let mut too_large = false;
        let mut ended = false;
        loop {
            let chunk = loop {
                match self.input.fill_buf() {
                    Ok(chunk) => break chunk,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(self.ctx.read_error(Some(self.line), e)),
                }
            };
            if chunk.is_empty() {
                break;
            }
            let (n, end) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !too_large {
                if size + n as u64 > limit {
                    too_large = true;
                    raw = Vec::new();
                } else {
                    grow_within(&mut raw, n, self.limit);
                    raw.extend_from_slice(&chunk[..n]);
                }
            }
            size += n as u64;
            self.input.consume(n);
            if end {
                ended = true;
                break;
            }
        }
        let lines = u64::from(ended);
        if too_large {
            return Ok(Row::TooLarge { size, lines });
        }
        let mut content = &raw[..];
        if ended {
            content = &content[..content.len() - 1];
            content = content.strip_suffix(b"\r").unwrap_or(content);
        }
        self.store.clear();
        self.ends.clear();
        let mut fields = 0;
        for field in content.split(|&b| b == b'\t') {
            if fields < keep {
                if self.escapes {
                    unescape_into(&mut self.store, field);
                } else {
                    self.store.extend_from_slice(field);
                }
                self.ends.push(self.store.len());
            }
            fields += 1;
        }
        Ok(Row::Held { raw, fields, lines })
    }

    /// The bytes of kept field `i` of the current row.
    fn field(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.store[start..self.ends[i]]
    }

    fn location(&mut self) -> Location {
        self.records += 1;
        Location {
            source: self.ctx.source.clone(),
            line: self.line,
            record: self.records,
        }
    }

    fn skipped(&mut self, id: Option<String>, reason: SkipReason) -> Entry {
        Entry::Skipped(Skipped {
            location: self.location(),
            id,
            reason,
        })
    }

    /// The next entry, `None` at the end.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        if self.finished {
            return Ok(None);
        }
        if self.quote.is_some() && self.take_line_end()?.is_some() {
            let entry = self.skipped(None, SkipReason::BlankLine);
            self.line += 1;
            return Ok(Some(entry));
        }
        if self.peek()?.is_none() {
            self.finished = true;
            return Ok(None);
        }
        let row = self.next_row(self.needed);
        let row = match row {
            Ok(row) => row,
            Err(e) => {
                self.finished = true;
                return Err(e);
            }
        };
        let entry = match row {
            Row::Held { raw, lines, .. } if is_blank_line(&raw) => {
                let entry = self.skipped(None, SkipReason::BlankLine);
                self.line += lines;
                entry
            }
            Row::Held { raw, fields, lines } => {
                let entry = self.row_entry(raw, fields);
                self.line += lines;
                entry
            }
            Row::TooLarge { size, lines } => {
                let entry = self.skipped(
                    None,
                    SkipReason::TooLarge {
                        size,
                        limit: self.limit as u64,
                    },
                );
                self.line += lines;
                entry
            }
            Row::Unclosed { lines } => {
                let entry = self.skipped(None, SkipReason::UnclosedQuote { lines });
                self.finished = true;
                self.line += lines;
                entry
            }
        };
        Ok(Some(entry))
    }

    fn row_entry(&mut self, raw: Vec<u8>, fields: usize) -> Entry {
        let id = self
            .id_idx
            .filter(|&i| i < fields)
            .map(|i| decode(self.field(i)));
        if fields < self.required {
            let expected = self.columns.len();
            return self.skipped(
                id.map(|(id, _)| id),
                SkipReason::MissingColumns {
                    expected,
                    found: fields,
                },
            );
        }
        let mut joined = Vec::new();
        for (n, &i) in self.text_idx.iter().enumerate() {
            if n > 0 {
                joined.push(b' ');
            }
            joined.extend_from_slice(self.field(i));
        }
        let (text, text_lossy) = decode_owned(joined);
        let id_lossy = id.as_ref().is_some_and(|(_, lossy)| *lossy);
        let key = self.key_idx.map(|i| decode(self.field(i)).0);
        Entry::Record(Record {
            id: id.map(|(id, _)| id),
            text,
            raw,
            location: self.location(),
            lossy: text_lossy || id_lossy,
            key,
            numeric_id: false,
            path: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    fn reader_with(
        bytes: &[u8],
        delimiter: u8,
        opts: &ReadOptions,
        capacity: usize,
    ) -> Result<DelimitedReader> {
        let input = Input {
            reader: Box::new(BufReader::with_capacity(
                capacity,
                Cursor::new(bytes.to_vec()),
            )),
            ctx: ErrorContext {
                source: "t.csv".into(),
                gzip: false,
                zstd: false,
            },
        };
        // As `Reader` does: CSV always quotes, TSV only when asked to.
        let quote = if delimiter == b',' {
            Some(b'"')
        } else {
            opts.quote
        };
        DelimitedReader::new(input, delimiter, quote, opts)
    }

    fn reader(bytes: &[u8], delimiter: u8, opts: &ReadOptions) -> Result<DelimitedReader> {
        // A tiny buffer so records straddle refills.
        reader_with(bytes, delimiter, opts, 2)
    }

    fn entries(r: &mut DelimitedReader) -> Vec<Entry> {
        let mut out = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            out.push(e);
        }
        out
    }

    fn opts(text: &[&str], id: Option<&str>) -> ReadOptions {
        let mut o = ReadOptions::default().with_text_columns(text.iter().copied());
        o.id_column = id.map(str::to_string);
        o
    }

    /// Header + every record's raw + blank lines as they were.
    fn rebuild(r: &DelimitedReader, entries: &[Entry], blank: &[u8]) -> Vec<u8> {
        let mut out = r.header_raw().unwrap_or_default().to_vec();
        for e in entries {
            match e {
                Entry::Record(rec) => out.extend_from_slice(&rec.raw),
                Entry::Skipped(s) if s.reason == SkipReason::BlankLine => {
                    out.extend_from_slice(blank)
                }
                Entry::Skipped(s) => panic!("unexpected skip {s:?}"),
            }
        }
        out
    }

    /// (line, record, code) of each entry.
    fn summary(es: &[Entry]) -> Vec<(u64, u64, &'static str)> {
        es.iter()
            .map(|e| match e {
                Entry::Record(r) => (r.location.line, r.location.record, "record"),
                Entry::Skipped(s) => (s.location.line, s.location.record, s.reason.code()),
            })
            .collect()
    }

    /// Without an id column named, a column named `id` gives the ids, as JSONL's field
    /// `id` does; a row too short to hold it is a record without an id.
    #[test]
    fn a_column_named_id_gives_the_ids_by_default() {
        let ids = |bytes: &[u8], delimiter: u8, opts: &ReadOptions| -> Vec<Option<String>> {
            let mut r = reader(bytes, delimiter, opts).unwrap();
            entries(&mut r)
                .into_iter()
                .map(|e| e.into_record().expect("a record").id)
                .collect()
        };
        let some = |s: &str| Some(s.to_string());
        let csv = b"id,text,ref\nA17,a flat,r1\nB22,a house,r2\n";
        assert_eq!(
            ids(csv, b',', &opts(&["text"], None)),
            [some("A17"), some("B22")]
        );
        assert_eq!(
            ids(csv, b',', &opts(&["text"], Some("ref"))),
            [some("r1"), some("r2")]
        );
        let tsv = b"text\tid\na flat\tA17\na house\n";
        assert_eq!(ids(tsv, b'\t', &opts(&["text"], None)), [some("A17"), None]);
        // Named, the column must be in every row.
        let mut r = reader(tsv, b'\t', &opts(&["text"], Some("id"))).unwrap();
        assert_eq!(
            summary(&entries(&mut r)),
            [(2, 1, "record"), (3, 2, "missing_columns")]
        );
        // `Id` and `ID` are `id` (spreadsheets write them so); an exact `id` comes first.
        let csv = b"Id,text\n1,a flat\n";
        assert_eq!(ids(csv, b',', &opts(&["text"], None)), [some("1")]);
        let csv = b"ID,id,text\n1,2,a flat\n";
        assert_eq!(ids(csv, b',', &opts(&["text"], None)), [some("2")]);
        // No column `id` in any case: no ids.
        let csv = b"ident,text\n1,a flat\n";
        assert_eq!(ids(csv, b',', &opts(&["text"], None)), [None]);
    }

    #[test]
    fn quoting_follows_the_parser() {
        let q = |chunks: &[&[u8]]| {
            chunks
                .iter()
                .fold(Quoting::StartField, |q, c| q.feed(b',', b'"', c))
        };
        assert_eq!(q(&[b"text"]), Quoting::InField);
        assert_eq!(q(&[b"\"abc"]), Quoting::InQuoted);
        assert_eq!(q(&[b"a,\"b,c\nd"]), Quoting::InQuoted);
        assert_eq!(q(&[b"\"a\""]), Quoting::AfterQuote);
        assert_eq!(q(&[b"\"a\"", b"\""]), Quoting::InQuoted);
        assert_eq!(q(&[b"\"a\"b\""]), Quoting::InField);
        assert_eq!(q(&[b"a\"b"]), Quoting::InField);
        assert_eq!(q(&[b"a,"]), Quoting::StartField);
        assert_eq!(q(&[b"a\n\"x"]), Quoting::InQuoted);
        assert_eq!(q(&[b"a,b", b"\r\"", b"\"\""]), Quoting::InQuoted);
    }

    proptest::proptest! {
        /// The tracker agrees with csv-core itself: a parser fed the same bytes, then
        /// `"` and a line end, ends the record copying nothing exactly when it was in a
        /// quoted field (from any other state it copies a byte or does not end the record).
        #[test]
        fn quoting_agrees_with_csv_core(
            bytes in proptest::collection::vec(
                proptest::sample::select(b"ab,\t\"\r\n".to_vec()), 0..40),
            split in 0usize..40,
            tab in proptest::bool::ANY,
        ) {
            let delimiter = if tab { b'\t' } else { b',' };
            let mut core = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
            let mut out = [0u8; 64];
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                let (_, nin, _) = core.read_field(rest, &mut out);
                rest = &rest[nin..];
            }
            let (res, _, nout) = core.read_field(b"\"\n", &mut out);
            let in_quotes = res == ReadFieldResult::Field { record_end: true } && nout == 0;
            let split = split.min(bytes.len());
            let tracked = Quoting::StartField
                .feed(delimiter, b'"', &bytes[..split])
                .feed(delimiter, b'"', &bytes[split..]);
            proptest::prop_assert_eq!(tracked == Quoting::InQuoted, in_quotes);
        }
    }

    #[test]
    fn line_ends_are_counted_across_chunks() {
        let mut c = LineEnds::default();
        c.feed(b"a\r");
        c.feed(b"\nb\n\r\r");
        c.feed(b"\n");
        assert_eq!(c.count, 4);
        let mut c = LineEnds::default();
        c.feed(b"\r\n\r\n\n\r");
        assert_eq!(c.count, 4);
    }

    #[test]
    fn raw_is_exact_with_crlf_and_quoted_newlines() {
        let data = b"id,text\r\n1,\"two\r\nlines\"\r\n2,\"say \"\"hi\"\"\"\r\n3,last";
        for capacity in [1, 2, 3, 64] {
            let mut r = reader_with(data, b',', &opts(&["text"], Some("id")), capacity).unwrap();
            assert_eq!(r.header_raw(), Some(&b"id,text\r\n"[..]));
            assert_eq!(r.columns(), ["id", "text"]);
            let es = entries(&mut r);
            assert_eq!(es.len(), 3);
            let recs: Vec<&Record> = es.iter().map(|e| e.record().unwrap()).collect();
            assert_eq!(recs[0].raw, b"1,\"two\r\nlines\"\r\n");
            assert_eq!(recs[0].text, "two\r\nlines");
            assert_eq!(recs[0].id.as_deref(), Some("1"));
            assert_eq!(recs[0].location.line, 2);
            assert_eq!(recs[1].raw, b"2,\"say \"\"hi\"\"\"\r\n");
            assert_eq!(recs[1].text, "say \"hi\"");
            assert_eq!(recs[1].location.line, 4);
            assert_eq!(recs[2].raw, b"3,last");
            assert_eq!(recs[2].location.line, 5);
            assert_eq!(
                recs.iter().map(|r| r.location.record).collect::<Vec<_>>(),
                [1, 2, 3]
            );
            assert_eq!(rebuild(&r, &es, b""), data);
        }
    }

    #[test]
    fn joins_text_columns_and_reads_tsv() {
        let data = b"\xEF\xBB\xBFid\tTitle\tBody\tPrice\nA7\tRed bike\tAlmost new\t100\n";
        let mut r = reader(data, b'\t', &opts(&["Title", "Body"], Some("id"))).unwrap();
        assert_eq!(r.columns()[0], "id");
        let es = entries(&mut r);
        let rec = es[0].record().unwrap();
        assert_eq!(rec.text, "Red bike Almost new");
        assert_eq!(rec.id.as_deref(), Some("A7"));
        assert_eq!(
            r.header_raw().unwrap(),
            b"\xEF\xBB\xBFid\tTitle\tBody\tPrice\n"
        );
    }

    #[test]
    fn only_the_first_bom_is_stripped() {
        for capacity in [1, 64] {
            let data = b"\xEF\xBB\xBF\xEF\xBB\xBFtext\nx\n";
            let r = reader_with(data, b',', &opts(&["\u{feff}text"], None), capacity).unwrap();
            assert_eq!(r.columns(), ["\u{feff}text"]);
            let data = b"\xEF\xBB\xBF\"text\"\nx\n";
            let mut r = reader_with(data, b',', &opts(&["text"], None), capacity).unwrap();
            assert_eq!(entries(&mut r)[0].record().unwrap().text, "x");
        }
    }

    #[test]
    fn missing_column_is_an_error_listing_columns() {
        let err = reader(b"a,b\n1,2\n", b',', &opts(&["text"], None))
            .err()
            .unwrap();
        match err {
            Error::MissingColumn {
                path,
                column,
                available,
            } => {
                assert_eq!(path, "t.csv");
                assert_eq!(column, "text");
                assert_eq!(available, ["a", "b"]);
            }
            other => panic!("{other:?}"),
        }
        let err = reader(b"text\nx\n", b',', &opts(&["text"], Some("key")))
            .err()
            .unwrap();
        assert!(err.to_string().contains("\"key\""), "{err}");
        let err = reader(b"text\n", b',', &opts(&[], None)).err().unwrap();
        assert!(matches!(err, Error::InvalidOptions(_)));
    }

    #[test]
    fn short_rows_and_blank_lines_are_skipped_and_counted() {
        let data = b"id,x,text\n1,a,hello\n\n2,b\r\n\r\n3,c,bye\n,\n";
        let mut r = reader(data, b',', &opts(&["text"], Some("id"))).unwrap();
        let es = entries(&mut r);
        assert_eq!(
            summary(&es),
            [
                (2, 1, "record"),
                (3, 2, "blank_line"),
                (4, 3, "missing_columns"),
                (5, 4, "blank_line"),
                (6, 5, "record"),
                (7, 6, "missing_columns"),
            ]
        );
        match &es[2] {
            Entry::Skipped(s) => {
                assert_eq!(s.id.as_deref(), Some("2"));
                assert_eq!(
                    s.reason,
                    SkipReason::MissingColumns {
                        expected: 3,
                        found: 2
                    }
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn empty_and_header_only_inputs() {
        let mut r = reader(b"", b',', &opts(&["text"], None)).unwrap();
        assert_eq!(r.header_raw(), None);
        assert!(entries(&mut r).is_empty());
        let mut r = reader(b"\xEF\xBB\xBF", b',', &opts(&["text"], None)).unwrap();
        assert_eq!(r.header_raw(), Some(BOM));
        assert!(r.columns().is_empty());
        assert!(entries(&mut r).is_empty());
        let mut r = reader(b"\r\n\n", b',', &opts(&["text"], None)).unwrap();
        assert_eq!(r.header_raw(), Some(&b"\r\n\n"[..]));
        assert!(entries(&mut r).is_empty());
        let mut r = reader(b"text", b',', &opts(&["text"], None)).unwrap();
        assert_eq!(r.header_raw(), Some(&b"text"[..]));
        assert!(entries(&mut r).is_empty());
        let mut r = reader(b"text\n\n\n", b',', &opts(&["text"], None)).unwrap();
        let es = entries(&mut r);
        assert_eq!(summary(&es), [(2, 1, "blank_line"), (3, 2, "blank_line")]);
        let mut r = reader(b"\n\ntext\nx", b',', &opts(&["text"], None)).unwrap();
        assert_eq!(r.header_raw(), Some(&b"\n\ntext\n"[..]));
        assert_eq!(summary(&entries(&mut r)), [(4, 1, "record")]);
    }

    #[test]
    fn quote_inside_unquoted_field_is_literal() {
        let data = b"text,n\n24\" monitor,1\nnext,2\n";
        let mut r = reader(data, b',', &opts(&["text"], None)).unwrap();
        let es = entries(&mut r);
        assert_eq!(es.len(), 2);
        assert_eq!(es[0].record().unwrap().text, "24\" monitor");
        assert_eq!(es[0].record().unwrap().raw, b"24\" monitor,1\n");
        assert_eq!(es[1].record().unwrap().location.line, 3);
    }

    #[test]
    fn lone_cr_line_ends() {
        let data = b"text\rone\r\rtwo";
        for capacity in [1, 2, 64] {
            let mut r = reader_with(data, b',', &opts(&["text"], None), capacity).unwrap();
            assert_eq!(r.header_raw(), Some(&b"text\r"[..]));
            let es = entries(&mut r);
            assert_eq!(
                summary(&es),
                [(2, 1, "record"), (3, 2, "blank_line"), (4, 3, "record")]
            );
            assert_eq!(es[0].record().unwrap().raw, b"one\r");
            assert_eq!(es[2].record().unwrap().raw, b"two");
        }
    }

    #[test]
    fn unclosed_quote_at_the_end_is_reported() {
        let data = b"id,text\n1,ok\n2,\"never closed\n3,swallowed\n4,too\n";
        let mut r = reader(data, b',', &opts(&["text"], Some("id"))).unwrap();
        let es = entries(&mut r);
        assert_eq!(summary(&es), [(2, 1, "record"), (3, 2, "unclosed_quote")]);
        match &es[1] {
            Entry::Skipped(s) => assert_eq!(s.reason, SkipReason::UnclosedQuote { lines: 3 }),
            other => panic!("{other:?}"),
        }
        // A quote closed later is a valid (if odd) quoted field.
        let data = b"text\n\"a\nb\"\nc\n";
        let mut r = reader(data, b',', &opts(&["text"], None)).unwrap();
        assert_eq!(
            summary(&entries(&mut r)),
            [(2, 1, "record"), (4, 2, "record")]
        );
        // Closed quote then more bytes: still closed.
        let data = b"text\n\"a\"b\n";
        let mut r = reader(data, b',', &opts(&["text"], None)).unwrap();
        assert_eq!(entries(&mut r)[0].record().unwrap().text, "ab");
        // An escaped quote at the very end is still inside the field.
        let data = b"text\n\"a\"\"";
        let mut r = reader(data, b',', &opts(&["text"], None)).unwrap();
        assert_eq!(summary(&entries(&mut r)), [(2, 1, "unclosed_quote")]);
        // A field that closes right at the end is fine.
        let data = b"text\n\"a\"";
        let mut r = reader(data, b',', &opts(&["text"], None)).unwrap();
        assert_eq!(entries(&mut r)[0].record().unwrap().text, "a");
    }

    #[test]
    fn unclosed_quote_in_the_header_is_an_error() {
        let err = reader(b"text,\"b\n1,2\n", b',', &opts(&["text"], None))
            .err()
            .unwrap();
        assert!(matches!(err, Error::BadHeader { line: 1, .. }), "{err:?}");
        assert!(err.to_string().contains("never closed"), "{err}");
    }

    #[test]
    fn rows_over_the_limit_are_skipped() {
        let data = b"id,text\n1,short\n2,\"a long\nrow\"\n3,ok\n";
        let o = opts(&["text"], Some("id")).with_max_record_bytes(10);
        let mut r = reader(data, b',', &o).unwrap();
        let es = entries(&mut r);
        assert_eq!(
            summary(&es),
            [(2, 1, "record"), (3, 2, "too_large"), (5, 3, "record")]
        );
        match &es[1] {
            Entry::Skipped(s) => assert_eq!(
                s.reason,
                SkipReason::TooLarge {
                    size: 15,
                    limit: 10
                }
            ),
            other => panic!("{other:?}"),
        }
        let err = reader(data, b',', &opts(&["text"], None).with_max_record_bytes(4))
            .err()
            .unwrap();
        assert!(matches!(err, Error::BadHeader { .. }), "{err:?}");
    }

    #[test]
    fn a_header_of_too_many_columns_is_an_error() {
        let mut data = b"text".to_vec();
        data.extend(std::iter::repeat_n(b',', MAX_COLUMNS));
        let err = reader_with(&data, b',', &opts(&["text"], None), 4096)
            .err()
            .unwrap();
        assert!(err.to_string().contains("columns, more than"), "{err}");
    }

    #[test]
    fn many_fields_are_not_kept() {
        let mut data = b"text,rest\nx".to_vec();
        data.extend(std::iter::repeat_n(b',', 100_000));
        data.push(b'\n');
        let mut r = reader_with(&data, b',', &opts(&["text"], None), 4096).unwrap();
        let es = entries(&mut r);
        assert_eq!(es[0].record().unwrap().text, "x");
        assert!(
            r.ends.capacity() < 100,
            "only the kept fields' ends are stored"
        );
    }

    #[test]
    fn invalid_utf8_fields_are_lossy() {
        let data = b"id,text\n\xFF,caf\xE9\n";
        let mut r = reader(data, b',', &opts(&["text"], Some("id"))).unwrap();
        let es = entries(&mut r);
        let rec = es[0].record().unwrap();
        assert!(rec.lossy);
        assert_eq!(rec.text, "caf\u{FFFD}");
        assert_eq!(rec.id.as_deref(), Some("\u{FFFD}"));
        assert_eq!(rec.raw, b"\xFF,caf\xE9\n");
    }

    #[test]
    fn large_input_is_sliced_correctly() {
        let mut data = b"id,text\n".to_vec();
        for i in 0..20_000 {
            data.extend_from_slice(format!("{i},\"row {i}\nsecond line\"\r\n").as_bytes());
        }
        let mut r = reader_with(&data, b',', &opts(&["text"], Some("id")), 4096).unwrap();
        let es = entries(&mut r);
        assert_eq!(es.len(), 20_000);
        let last = es[19_999].record().unwrap();
        assert_eq!(last.id.as_deref(), Some("19999"));
        assert_eq!(last.location.line, 2 + 2 * 19_999);
        assert_eq!(rebuild(&r, &es, b""), data);
    }

    #[test]
    fn tsv_has_no_quoting() {
        // A title that starts with a quote (real listings data): the parser of CSV would
        // read the rows after it as one quoted field.
        let data: &[u8] = b"id\ttitle\tprice\n\
            1\t\"Bilocale\" luminoso\t900\n\
            2\tTrilocale con \"vista\" mare\t1200\r\n\
            3\t\"Monolocale\t500\n\
            4\tAttico\t2000\n";
        for capacity in [1, 2, 3, 64] {
            let mut r = reader_with(data, b'\t', &opts(&["title"], Some("id")), capacity).unwrap();
            assert_eq!(r.columns(), ["id", "title", "price"]);
            let es = entries(&mut r);
            assert_eq!(
                summary(&es),
                [
                    (2, 1, "record"),
                    (3, 2, "record"),
                    (4, 3, "record"),
                    (5, 4, "record")
                ]
            );
            let texts: Vec<&str> = es
                .iter()
                .map(|e| e.record().unwrap().text.as_str())
                .collect();
            assert_eq!(
                texts,
                [
                    "\"Bilocale\" luminoso",
                    "Trilocale con \"vista\" mare",
                    "\"Monolocale",
                    "Attico"
                ]
            );
            assert_eq!(
                es[1].record().unwrap().raw,
                b"2\tTrilocale con \"vista\" mare\t1200\r\n"
            );
            assert_eq!(rebuild(&r, &es, b""), data);
            assert!(r.take_warnings().is_empty());
        }
    }

    #[test]
    fn tsv_rows_end_at_line_feeds_only() {
        // A lone `\r` is data; `\r\n` and `\n` end rows; blank lines are counted.
        let data = b"\n\r\ntext\tn\r\na\rb\t1\n\r\n\nlast";
        for capacity in [1, 2, 64] {
            let mut r = reader_with(data, b'\t', &opts(&["text"], None), capacity).unwrap();
            assert_eq!(r.header_raw(), Some(&b"\n\r\ntext\tn\r\n"[..]));
            assert_eq!(r.columns(), ["text", "n"]);
            let es = entries(&mut r);
            assert_eq!(
                summary(&es),
                [
                    (4, 1, "record"),
                    (5, 2, "blank_line"),
                    (6, 3, "blank_line"),
                    (7, 4, "record")
                ]
            );
            assert_eq!(es[0].record().unwrap().text, "a\rb");
            assert_eq!(es[3].record().unwrap().text, "last");
            assert_eq!(es[3].record().unwrap().raw, b"last");
        }
    }

    #[test]
    fn tsv_short_rows_long_rows_and_many_fields() {
        let data = b"id\tx\ttext\n1\ta\n2\tb\tlong enough to be over\n3\tc\tok\n";
        let o = opts(&["text"], Some("id")).with_max_record_bytes(12);
        let mut r = reader(data, b'\t', &o).unwrap();
        let es = entries(&mut r);
        assert_eq!(
            summary(&es),
            [
                (2, 1, "missing_columns"),
                (3, 2, "too_large"),
                (4, 3, "record")
            ]
        );
        let mut data = b"text\trest\nx".to_vec();
        data.extend(std::iter::repeat_n(b'\t', 100_000));
        data.push(b'\n');
        let mut r = reader_with(&data, b'\t', &opts(&["text"], None), 4096).unwrap();
        assert_eq!(entries(&mut r)[0].record().unwrap().text, "x");
        assert!(r.ends.capacity() < 100);
    }

    #[test]
    fn tsv_escapes_are_decoded_only_when_asked() {
        let data = b"id\ttext\na\\tb\tone\\ttwo\\nthree\\r\\\\ \\x end\\\n";
        let mut r = reader(data, b'\t', &opts(&["text"], Some("id"))).unwrap();
        let rec = entries(&mut r).remove(0).into_record().unwrap();
        assert_eq!(rec.text, "one\\ttwo\\nthree\\r\\\\ \\x end\\");
        assert_eq!(rec.id.as_deref(), Some("a\\tb"));
        let o = opts(&["text"], Some("id")).with_tsv_escapes(true);
        let mut r = reader(data, b'\t', &o).unwrap();
        let rec = entries(&mut r).remove(0).into_record().unwrap();
        assert_eq!(rec.text, "one\ttwo\nthree\r\\ \\x end\\");
        assert_eq!(rec.id.as_deref(), Some("a\tb"));
        assert_eq!(rec.raw, &data[8..]);
    }

    #[test]
    fn a_quote_byte_gives_tsv_csv_quoting() {
        let data = b"id\ttext\n1\t\"two\nlines\ttab\"\n2\t'single'\n";
        let o = opts(&["text"], Some("id")).with_quote(b'"');
        let mut r = reader(data, b'\t', &o).unwrap();
        let es = entries(&mut r);
        assert_eq!(summary(&es), [(2, 1, "record"), (4, 2, "record")]);
        assert_eq!(es[0].record().unwrap().text, "two\nlines\ttab");
        assert_eq!(rebuild(&r, &es, b""), data);
        let o = opts(&["text"], Some("id")).with_quote(b'\'');
        let mut r = reader(data, b'\t', &o).unwrap();
        let es = entries(&mut r);
        assert_eq!(es[0].record().unwrap().text, "\"two");
        assert_eq!(es.last().unwrap().record().unwrap().text, "single");
        let o = opts(&["text"], None).with_quote(b'\t');
        assert!(matches!(
            reader(data, b'\t', &o).err(),
            Some(Error::InvalidOptions(_))
        ));
    }

    #[test]
    fn a_long_quoted_field_is_a_warning_at_its_opening_line() {
        // Row 3 opens a quote on its second line that a quote 150 lines later closes.
        let mut data = b"id,text\n1,fine\n2,\"ok\nstill ok\",x\"y\n3,\"stray\n".to_vec();
        for i in 0..150 {
            data.extend_from_slice(format!("{},swallowed\n", i + 4).as_bytes());
        }
        data.extend_from_slice(b"closing\",z\n5,after\n");
        let mut r = reader_with(&data, b',', &opts(&["text"], Some("id")), 64).unwrap();
        let es = entries(&mut r);
        assert_eq!(es.len(), 4);
        assert_eq!(es[3].record().unwrap().location.line, 157);
        let warnings = r.take_warnings();
        assert_eq!(
            warnings,
            [Warning {
                source: "t.csv".into(),
                line: 5,
                kind: WarningKind::LongQuotedField {
                    lines: 152,
                    to_end: false
                }
            }]
        );
        assert_eq!(
            warnings[0].to_string(),
            "t.csv:5: a quoted field opened here runs 152 lines; is a quote stray?"
        );
        assert!(r.take_warnings().is_empty());
        // 100 lines is not long; the same at the end of the input is, and is skipped.
        let mut data = b"text\n\"a".to_vec();
        data.extend(std::iter::repeat_n(b'\n', 99));
        data.extend_from_slice(b"\"\n\"open\nx\n");
        let mut r = reader(&data, b',', &opts(&["text"], None)).unwrap();
        let es = entries(&mut r);
        assert_eq!(summary(&es), [(2, 1, "record"), (102, 2, "unclosed_quote")]);
        assert_eq!(
            r.take_warnings(),
            [Warning {
                source: "t.csv".into(),
                line: 102,
                kind: WarningKind::LongQuotedField {
                    lines: 2,
                    to_end: true
                }
            }]
        );
    }

    #[test]
    fn the_key_column_is_read() {
        let data = b"id,price,text\n1,900,a\n2,,b\n3\n";
        let mut o = opts(&["text"], Some("id"));
        o.key_field = Some("price".into());
        let mut r = reader(data, b',', &o).unwrap();
        let es = entries(&mut r);
        assert_eq!(es[0].record().unwrap().key.as_deref(), Some("900"));
        assert_eq!(es[1].record().unwrap().key.as_deref(), Some(""));
        assert_eq!(es[2].location().line, 4);
        assert!(matches!(&es[2], Entry::Skipped(s) if s.reason.code() == "missing_columns"));
        o.key_field = Some("cost".into());
        match reader(data, b',', &o).err() {
            Some(Error::MissingColumn {
                column, available, ..
            }) => {
                assert_eq!(column, "cost");
                assert_eq!(available, ["id", "price", "text"]);
            }
            other => panic!("{other:?}"),
        }
        // Without a key field there is no key.
        let mut r = reader(data, b',', &opts(&["text"], None)).unwrap();
        assert_eq!(entries(&mut r)[0].record().unwrap().key, None);
    }

    #[test]
    fn a_tab_separated_file_read_as_csv_gets_a_hint() {
        let err = reader(b"id\ttext\n1\thello\n", b',', &opts(&["text"], None))
            .err()
            .unwrap();
        let msg = err.to_string();
        assert!(msg.contains(r#"available columns: "id\ttext""#), "{msg}");
        assert!(msg.contains("looks tab-separated"), "{msg}");
        assert!(msg.contains("try --format tsv"), "{msg}");
        let err = reader(b"a,b\n", b',', &opts(&["text"], None))
            .err()
            .unwrap();
        assert!(!err.to_string().contains("tab-separated"), "{err}");
    }
}
