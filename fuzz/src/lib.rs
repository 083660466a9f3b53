//! Shared checks of the fuzz targets: read arbitrary bytes with a neardup-io reader and
//! assert what every reader promises (see `crates/neardup-io/src/lib.rs`):
//!
//! - no panic, and after a hard error the iterator ends;
//! - every entry has the next record number (1, 2, 3, ...) and a larger line than the
//!   one before it; its source is the name given;
//! - JSONL and lines: one entry per physical line, a record's `raw` is exactly its line;
//!   lines: the text (and id) are the line's bytes decoded lossily, `lossy` tells;
//!   JSONL: the text agrees with `serde_json`'s own reading of the line;
//! - CSV/TSV: the header is a prefix of the input and every record's `raw` follows the
//!   previous one in the input (blank lines between them are one skipped entry each),
//!   through the very last byte.

use std::io::Cursor;

use neardup_io::{Entry, Error, Format, ReadOptions, Reader, SkipReason};

/// The name every fuzzed input is read under.
pub const SOURCE: &str = "fuzz";

/// The smallest record-size limit the targets ask for, so that the `too_large` path is
/// reached by small inputs too.
pub const MIN_LIMIT: usize = 1;

/// Everything a reader yielded for one input.
pub struct Outcome {
    /// The CSV/TSV header as read.
    pub header: Option<Vec<u8>>,
    /// Every entry, in order.
    pub entries: Vec<Entry>,
    /// The hard error that ended the reading, if any.
    pub error: Option<Error>,
}

impl Outcome {
    /// True if every entry is a record.
    pub fn all_records(&self) -> bool {
        self.entries.iter().all(|e| matches!(e, Entry::Record(_)))
    }
}

/// Reads `data` as `format` from memory. `gzip` says whether the input may be (or is)
/// a gzip stream, in which case gzip errors are allowed; an error at open time that a
/// reader may legitimately give (a missing CSV column) gives `None`.
pub fn read(data: &[u8], opts: &ReadOptions, gzip: bool) -> Option<Outcome> {
    let mut reader = match Reader::from_reader(Cursor::new(data.to_vec()), SOURCE, opts) {
        Ok(r) => r,
        Err(e) => {
            check_error(&e, gzip);
            return None;
        }
    };
    if let Some(format) = opts.format {
        assert_eq!(reader.format(), format);
    }
    assert_eq!(reader.source(), SOURCE);
    let header = reader.header_raw().map(<[u8]>::to_vec);
    let mut entries = Vec::new();
    let mut error = None;
    for entry in reader.by_ref() {
        match entry {
            Ok(e) => entries.push(e),
            Err(e) => {
                check_error(&e, gzip);
                error = Some(e);
                break;
            }
        }
    }
    assert!(reader.next().is_none(), "the reader is fused");
    check_numbering(&entries);
    Some(Outcome {
        header,
        entries,
        error,
    })
}

/// The errors an in-memory input may give: gzip ones for a gzip stream, a CSV header
/// that lacks a column or cannot be one; never a plain read error.
fn check_error(e: &Error, gzip: bool) {
    let msg = e.to_string();
    match e {
        Error::Gzip { .. } if gzip => assert!(msg.starts_with("fuzz:"), "{msg}"),
        Error::MissingColumn { .. } | Error::BadHeader { .. } => {
            assert!(msg.starts_with(SOURCE), "{msg}")
        }
        other => panic!("unexpected error from an in-memory input: {other:?}"),
    }
}

/// Record numbers are 1, 2, 3, ...; lines strictly increase; every entry names the source.
fn check_numbering(entries: &[Entry]) {
    let mut last_line = 0;
    for (i, e) in entries.iter().enumerate() {
        let loc = e.location();
        assert_eq!(loc.record, i as u64 + 1, "record numbers: {e:?}");
        assert!(
            loc.line > last_line,
            "lines increase: {last_line} then {e:?}"
        );
        last_line = loc.line;
        assert_eq!(loc.source, SOURCE);
    }
}

/// The physical lines of `data` (each with its `\n`, the last one maybe without).
pub fn physical_lines(data: &[u8]) -> Vec<&[u8]> {
    data.split_inclusive(|&b| b == b'\n').collect()
}

/// `line` without its `\n` or `\r\n`, and without a BOM if it is the first line.
fn content(line: &[u8], first: bool) -> &[u8] {
    let mut c = match line.strip_suffix(b"\n") {
        Some(rest) => rest.strip_suffix(b"\r").unwrap_or(rest),
        None => line,
    };
    if first {
        c = c.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(c);
    }
    c
}

fn is_too_large(e: &Entry) -> bool {
    matches!(e, Entry::Skipped(s) if s.reason.code() == "too_large")
}

/// The checks of the lines format on a plain (not gzip) input.
pub fn check_lines(data: &[u8], out: &Outcome) {
    assert!(out.error.is_none(), "{:?}", out.error);
    let lines = physical_lines(data);
    assert_eq!(out.entries.len(), lines.len(), "one entry per line");
    for (i, (e, line)) in out.entries.iter().zip(&lines).enumerate() {
        assert_eq!(e.location().line, i as u64 + 1);
        let r = match e {
            Entry::Record(r) => r,
            Entry::Skipped(_) if is_too_large(e) => continue,
            Entry::Skipped(s) => panic!("the lines format skips only huge lines: {s:?}"),
        };
        assert_eq!(&r.raw[..], *line, "raw is the line");
        let c = content(line, i == 0);
        let valid = std::str::from_utf8(c).is_ok();
        assert_eq!(r.lossy, !valid, "lossy iff the line is not UTF-8");
        let decoded = String::from_utf8_lossy(c);
        match &r.id {
            Some(id) => assert_eq!(format!("{id}\t{}", r.text), decoded),
            None => {
                assert!(!c.contains(&b'\t'));
                assert_eq!(r.text, decoded);
            }
        }
    }
}

/// The checks of the JSONL format on a plain (not gzip) input, against serde_json.
pub fn check_jsonl(data: &[u8], opts: &ReadOptions, out: &Outcome) {
    assert!(out.error.is_none(), "{:?}", out.error);
    let lines = physical_lines(data);
    assert_eq!(out.entries.len(), lines.len(), "one entry per line");
    for (i, (e, line)) in out.entries.iter().zip(&lines).enumerate() {
        assert_eq!(e.location().line, i as u64 + 1);
        if is_too_large(e) {
            continue;
        }
        if let Entry::Record(r) = e {
            assert_eq!(&r.raw[..], *line, "raw is the line");
        }
        let c = content(line, i == 0);
        let text = String::from_utf8_lossy(c);
        if let Entry::Record(r) = e {
            assert_eq!(r.lossy, std::str::from_utf8(c).is_err());
        }
        if text.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
            assert!(
                matches!(e, Entry::Skipped(s) if s.reason == SkipReason::BlankLine),
                "blank line: {e:?}"
            );
            continue;
        }
        let oracle: Result<serde_json::Value, _> = serde_json::from_str(&text);
        match oracle {
            Ok(serde_json::Value::Object(map)) => match (map.get(&opts.text_field), e) {
                (Some(serde_json::Value::String(t)), Entry::Record(r)) => {
                    assert_eq!(&r.text, t);
                    if let Some(serde_json::Value::String(id)) = map.get(&opts.id_field) {
                        assert_eq!(r.id.as_deref(), Some(id.as_str()));
                    }
                    if let Some(serde_json::Value::Null) | None = map.get(&opts.id_field) {
                        assert_eq!(r.id, None);
                    }
                }
                (None, Entry::Skipped(s)) => {
                    assert_eq!(s.reason, SkipReason::MissingField(opts.text_field.clone()))
                }
                (Some(v), Entry::Skipped(s)) if !v.is_string() => {
                    assert_eq!(s.reason, SkipReason::FieldNotText(opts.text_field.clone()))
                }
                (v, e) => panic!("serde_json reads {v:?}, the reader {e:?}"),
            },
            Ok(_) => assert!(
                matches!(e, Entry::Skipped(s) if s.reason.code() == "malformed_json"),
                "not an object: {e:?}"
            ),
            // serde_json's Value stops at 128 levels of nesting, and at numbers beyond
            // f64 (`1e999`): JSON's grammar has neither limit, and the reader skips
            // values it does not need without them (and keeps a numeric id's text).
            Err(err)
                if err.to_string().contains("recursion limit")
                    || err.to_string().contains("number out of range") => {}
            Err(err) => assert!(
                matches!(e, Entry::Skipped(s) if s.reason.code() == "malformed_json"),
                "serde_json says {err}, the reader {e:?}"
            ),
        }
    }
}

/// The checks of CSV/TSV on a plain (not gzip) input: every byte belongs to the header,
/// a record's raw, or a blank line, in order. Only checked while every skip is a blank
/// line (a skipped short row has no raw to follow).
pub fn check_delimited(data: &[u8], out: &Outcome) {
    let Some(header) = &out.header else {
        // No header: the input is empty.
        assert!(out.entries.is_empty());
        assert!(data.is_empty());
        return;
    };
    assert!(data.starts_with(header), "the header is the input's start");
    let mut at = header.len();
    for e in &out.entries {
        match e {
            Entry::Record(r) => {
                assert!(!r.raw.is_empty());
                assert!(
                    data[at..].starts_with(&r.raw),
                    "raw {:?} out of place at {at}",
                    String::from_utf8_lossy(&r.raw)
                );
                at += r.raw.len();
            }
            Entry::Skipped(s) if s.reason == SkipReason::BlankLine => {
                let width = if data[at..].starts_with(b"\r\n") {
                    2
                } else {
                    assert!(matches!(data.get(at), Some(b'\r' | b'\n')), "blank at {at}");
                    1
                };
                at += width;
            }
            Entry::Skipped(_) => return,
        }
    }
    if out.error.is_none() {
        assert_eq!(at, data.len(), "every byte is accounted for");
    }
}

/// Options chosen by the fuzzer from a few bytes.
#[derive(Debug, arbitrary::Arbitrary)]
pub struct FuzzOptions {
    /// The JSONL text field / the first CSV text column.
    pub text: String,
    /// The JSONL id field / the CSV id column.
    pub id: Option<String>,
    /// A second CSV text column.
    pub text2: Option<String>,
    /// A record-size limit (small, to reach the too_large path), if any.
    pub limit: Option<u16>,
    /// TSV: read with CSV-style quoting (`"`), else as TSV is defined (no quoting).
    pub quote: bool,
    /// TSV: decode the escapes `\t`, `\n`, `\r`, `\\`.
    pub escapes: bool,
}

impl FuzzOptions {
    /// The read options for `format`.
    pub fn options(&self, format: Format) -> ReadOptions {
        let mut opts = ReadOptions::default().with_format(format);
        match format {
            Format::Jsonl => {
                opts = opts.with_text_field(self.text.clone());
                if let Some(id) = &self.id {
                    opts = opts.with_id_field(id.clone());
                }
            }
            _ => {
                let mut cols = vec![self.text.clone()];
                cols.extend(self.text2.clone());
                opts = opts.with_text_columns(cols);
                if let Some(id) = &self.id {
                    opts = opts.with_id_column(id.clone());
                }
            }
        }
        if format == Format::Tsv {
            opts.quote = self.quote.then_some(b'"');
            opts.tsv_escapes = self.escapes;
        }
        set_limit(&mut opts, self.limit);
        opts
    }
}

/// Sets a record-size limit of at least [`MIN_LIMIT`] bytes.
pub fn set_limit(opts: &mut ReadOptions, limit: Option<u16>) {
    if let Some(limit) = limit {
        opts.max_record_bytes = (limit as usize).max(MIN_LIMIT);
    }
}

/// Runs one reader target: the fixed default options, then options from the fuzzer.
pub fn reader_target(data: &[u8], format: Format) {
    // The first bytes choose options; the whole input is also read with the defaults.
    let mut u = arbitrary::Unstructured::new(data);
    let fuzzed: Option<FuzzOptions> = arbitrary::Arbitrary::arbitrary(&mut u).ok();
    let plain = !data.starts_with(&[0x1f, 0x8b]);
    let default_opts = match format {
        // The first column of a CSV/TSV header, whatever it is.
        Format::Csv | Format::Tsv => ReadOptions::default()
            .with_format(format)
            .with_text_columns([first_column(data, format)]),
        _ => ReadOptions::default().with_format(format),
    };
    let mut runs = vec![(data, default_opts)];
    if let Some(f) = &fuzzed {
        let rest = u.take_rest();
        runs.push((rest, f.options(format)));
    }
    for (bytes, opts) in runs {
        let plain = plain && !bytes.starts_with(&[0x1f, 0x8b]);
        let Some(out) = read(bytes, &opts, !plain) else {
            continue;
        };
        if !plain {
            continue;
        }
        match format {
            Format::Lines => check_lines(bytes, &out),
            Format::Jsonl => check_jsonl(bytes, &opts, &out),
            Format::Csv | Format::Tsv => check_delimited(bytes, &out),
            Format::Dir => unreachable!(),
        }
    }
}

/// The first header field as the CSV parser would read it when it is simple (no quotes);
/// otherwise "text". Good enough to make the fixed-options run read rows most of the time.
fn first_column(data: &[u8], format: Format) -> String {
    let delim = if format == Format::Tsv { b'\t' } else { b',' };
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let end = data
        .iter()
        .position(|&b| b == delim || b == b'\n' || b == b'\r' || b == b'"')
        .unwrap_or(data.len());
    if data.get(end) == Some(&b'"') {
        return "text".to_string();
    }
    String::from_utf8_lossy(&data[..end]).into_owned()
}
