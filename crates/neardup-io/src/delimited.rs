//! CSV and TSV: a header row, then one record per row.
//!
//! Parsing is the `csv` crate's (RFC 4180 quoting, `""` inside quotes, quoted fields may
//! span lines; TSV is the same with a tab delimiter), in flexible mode so rows of any
//! length are read. Each record's exact source bytes are sliced out of a
//! [`Recorder`] by byte offset, from the first byte of the row through its line end
//! (`\n`, `\r\n` or a lone `\r`), so writing every record's `raw` after the header gives
//! back the input.
//!
//! The text is the values of [`ReadOptions::text_columns`] joined with one space; the id
//! is the value of [`ReadOptions::id_column`]. Both are looked up by exact name in the
//! header (whose UTF-8 BOM is ignored); a missing one is an [`Error::MissingColumn`].
//! A row too short to hold every column read from is skipped
//! ([`SkipReason::MissingColumns`]); a row with extra fields is read normally. A blank
//! line (only a line end) is skipped as [`SkipReason::BlankLine`], so that every line
//! outside the header is accounted for. An empty input has no header and no records.
//!
//! [`ReadOptions::text_columns`]: crate::ReadOptions::text_columns
//! [`ReadOptions::id_column`]: crate::ReadOptions::id_column

use std::collections::VecDeque;
use std::io;

use crate::error::{Error, Result};
use crate::open::{ErrorContext, Input};
use crate::options::ReadOptions;
use crate::record::{Entry, Location, Record, SkipReason, Skipped};
use crate::recorder::Recorder;
use crate::text::{count_newlines, decode, BOM};

/// Reads records from CSV or TSV.
pub(crate) struct DelimitedReader {
    csv: csv::Reader<Recorder>,
    ctx: ErrorContext,
    header_raw: Option<Vec<u8>>,
    columns: Vec<String>,
    text_idx: Vec<usize>,
    id_idx: Option<usize>,
    /// The number of fields a row needs to hold every column read from.
    needed: usize,
    /// The absolute offset of the first byte not yet given to the header or an entry.
    pos: u64,
    /// The line number at `pos`.
    line: u64,
    /// Entries yielded so far.
    records: u64,
    row: csv::ByteRecord,
    /// Entries found but not yet yielded (blank lines before a record, then the record).
    pending: VecDeque<Entry>,
    finished: bool,
}

impl DelimitedReader {
    /// Reads the header of `input` and checks that the columns of `opts` are in it.
    pub(crate) fn new(input: Input, delimiter: u8, opts: &ReadOptions) -> Result<Self> {
        if opts.text_columns.is_empty() {
            return Err(Error::InvalidOptions(
                "at least one text column is needed for CSV/TSV".to_string(),
            ));
        }
        let csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(delimiter)
            .from_reader(Recorder::new(input.reader));
        let mut reader = DelimitedReader {
            csv,
            ctx: input.ctx,
            header_raw: None,
            columns: Vec::new(),
            text_idx: Vec::new(),
            id_idx: None,
            needed: 0,
            pos: 0,
            line: 1,
            records: 0,
            row: csv::ByteRecord::new(),
            pending: VecDeque::new(),
            finished: false,
        };
        reader.read_header(opts)?;
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

    fn read_header(&mut self, opts: &ReadOptions) -> Result<()> {
        let mut header = csv::ByteRecord::new();
        let has_header = self
            .csv
            .read_byte_record(&mut header)
            .map_err(|e| self.csv_error(e))?;
        if !has_header {
            return Ok(());
        }
        let end = self.record_end()?;
        let raw = self.csv.get_ref().slice(0, end).to_vec();
        self.line += count_newlines(&raw);
        self.pos = end;
        self.header_raw = Some(raw);
        self.columns = header
            .iter()
            .enumerate()
            .map(|(i, field)| {
                let field = if i == 0 {
                    field.strip_prefix(BOM).unwrap_or(field)
                } else {
                    field
                };
                decode(field).0
            })
            .collect();
        for name in &opts.text_columns {
            let idx = self.column_index(name)?;
            self.text_idx.push(idx);
        }
        if let Some(name) = &opts.id_column {
            self.id_idx = Some(self.column_index(name)?);
        }
        self.needed = self
            .text_idx
            .iter()
            .chain(self.id_idx.iter())
            .map(|&i| i + 1)
            .max()
            .unwrap_or(0);
        Ok(())
    }

    fn column_index(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| Error::MissingColumn {
                path: self.ctx.source.clone(),
                column: name.to_string(),
                available: self.columns.clone(),
            })
    }

    /// The absolute offset just past the record the csv reader last returned, including a
    /// `\n` that follows its `\r` (the csv reader stops between the two).
    fn record_end(&mut self) -> Result<u64> {
        let mut end = self.csv.position().byte();
        let line = self.line;
        let rec = self.csv.get_mut();
        let crlf = end > 0
            && rec
                .byte_at(end - 1)
                .map_err(|e| self.ctx.read_error(Some(line), e))?
                == Some(b'\r')
            && rec
                .byte_at(end)
                .map_err(|e| self.ctx.read_error(Some(line), e))?
                == Some(b'\n');
        if crlf {
            end += 1;
        }
        Ok(end)
    }

    fn csv_error(&self, e: csv::Error) -> Error {
        let line = Some(self.line);
        match e.into_kind() {
            csv::ErrorKind::Io(io) => self.ctx.read_error(line, io),
            // Not expected: rows are read as bytes, in flexible mode.
            kind => self
                .ctx
                .read_error(line, io::Error::other(format!("CSV error: {kind:?}"))),
        }
    }

    fn location(&self) -> Location {
        Location {
            source: self.ctx.source.clone(),
            line: self.line,
            record: self.records,
        }
    }

    /// Queues a blank-line entry for every line end between `pos` and the next byte that
    /// is not a line end (or `end`), and moves `pos` past them.
    fn take_blank_lines(&mut self, end: u64) {
        let gap = self.csv.get_ref().slice(self.pos, end);
        let mut i = 0;
        while i < gap.len() {
            let width = match (gap[i], gap.get(i + 1)) {
                (b'\r', Some(b'\n')) => 2,
                (b'\r', _) | (b'\n', _) => 1,
                _ => break,
            };
            self.records += 1;
            self.pending.push_back(Entry::Skipped(Skipped {
                location: Location {
                    source: self.ctx.source.clone(),
                    line: self.line,
                    record: self.records,
                },
                id: None,
                reason: SkipReason::BlankLine,
            }));
            if gap[i + width - 1] == b'\n' {
                self.line += 1;
            }
            i += width;
        }
        self.pos += i as u64;
    }

    /// The next entry, `None` at the end.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            if let Some(entry) = self.pending.pop_front() {
                return Ok(Some(entry));
            }
            if self.finished {
                return Ok(None);
            }
            let mut row = std::mem::take(&mut self.row);
            let got = self.csv.read_byte_record(&mut row);
            let got = match got {
                Ok(got) => got,
                Err(e) => {
                    self.finished = true;
                    return Err(self.csv_error(e));
                }
            };
            if !got {
                self.finished = true;
                let total = self.csv.get_ref().total().unwrap_or(self.pos);
                self.take_blank_lines(total);
                self.row = row;
                continue;
            }
            let end = self.record_end()?;
            self.take_blank_lines(end);
            let raw = self.csv.get_ref().slice(self.pos, end).to_vec();
            self.records += 1;
            let location = self.location();
            self.line += count_newlines(&raw);
            self.pos = end.max(self.pos);
            self.csv.get_mut().release_before(self.pos);
            let entry = self.row_entry(&row, raw, location);
            self.pending.push_back(entry);
            self.row = row;
        }
    }

    fn row_entry(&self, row: &csv::ByteRecord, raw: Vec<u8>, location: Location) -> Entry {
        let id = self.id_idx.and_then(|i| row.get(i)).map(decode);
        if row.len() < self.needed {
            return Entry::Skipped(Skipped {
                location,
                id: id.map(|(id, _)| id),
                reason: SkipReason::MissingColumns {
                    expected: self.columns.len(),
                    found: row.len(),
                },
            });
        }
        let mut joined = Vec::new();
        for (n, &i) in self.text_idx.iter().enumerate() {
            if n > 0 {
                joined.push(b' ');
            }
            joined.extend_from_slice(row.get(i).unwrap_or_default());
        }
        let (text, text_lossy) = crate::text::decode_owned(joined);
        let id_lossy = id.as_ref().is_some_and(|(_, lossy)| *lossy);
        Entry::Record(Record {
            id: id.map(|(id, _)| id),
            text,
            raw,
            location,
            lossy: text_lossy || id_lossy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    fn reader(bytes: &[u8], delimiter: u8, opts: &ReadOptions) -> Result<DelimitedReader> {
        let input = Input {
            // A tiny buffer so records straddle refills.
            reader: Box::new(BufReader::with_capacity(2, Cursor::new(bytes.to_vec()))),
            ctx: ErrorContext {
                source: "t.csv".into(),
                gzip: false,
            },
        };
        DelimitedReader::new(input, delimiter, opts)
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

    #[test]
    fn raw_is_exact_with_crlf_and_quoted_newlines() {
        let data = b"id,text\r\n1,\"two\r\nlines\"\r\n2,\"say \"\"hi\"\"\"\r\n3,last";
        let mut r = reader(data, b',', &opts(&["text"], Some("id"))).unwrap();
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
        let summary: Vec<(u64, u64, &str)> = es
            .iter()
            .map(|e| match e {
                Entry::Record(r) => (r.location.line, r.location.record, "record"),
                Entry::Skipped(s) => (s.location.line, s.location.record, s.reason.code()),
            })
            .collect();
        assert_eq!(
            summary,
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
        let mut r = reader(b"text", b',', &opts(&["text"], None)).unwrap();
        assert_eq!(r.header_raw(), Some(&b"text"[..]));
        assert!(entries(&mut r).is_empty());
        let mut r = reader(b"text\n\n\n", b',', &opts(&["text"], None)).unwrap();
        let es = entries(&mut r);
        assert_eq!(es.len(), 2);
        assert!(es
            .iter()
            .all(|e| matches!(e, Entry::Skipped(s) if s.reason == SkipReason::BlankLine)));
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
        let data = b"text\rone\rtwo";
        let mut r = reader(data, b',', &opts(&["text"], None)).unwrap();
        assert_eq!(r.header_raw(), Some(&b"text\r"[..]));
        let es = entries(&mut r);
        let raws: Vec<&[u8]> = es.iter().map(|e| &e.record().unwrap().raw[..]).collect();
        assert_eq!(raws, [&b"one\r"[..], &b"two"[..]]);
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
    fn large_input_is_sliced_correctly_across_releases() {
        let mut data = b"id,text\n".to_vec();
        for i in 0..20_000 {
            data.extend_from_slice(format!("{i},\"row {i}\nsecond line\"\r\n").as_bytes());
        }
        let mut r = reader(&data, b',', &opts(&["text"], Some("id"))).unwrap();
        let es = entries(&mut r);
        assert_eq!(es.len(), 20_000);
        let last = es[19_999].record().unwrap();
        assert_eq!(last.id.as_deref(), Some("19999"));
        assert_eq!(last.location.line, 2 + 2 * 19_999);
        assert_eq!(rebuild(&r, &es, b""), data);
    }
}
