//! Read arbitrary JSONL/CSV/TSV/lines bytes, write every record back with `DedupWriter`
//! into memory, and check the output is the input byte for byte when nothing was
//! skipped (the writer puts a `\n` only between a record without a line end and the next
//! one, never at the very end, so no exception is needed for a missing final newline).
#![no_main]

use std::io::Write;
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use neardup_io::{DedupWriter, Entry, Format, ReadOptions};

/// A `Vec` the target can read after the writer is done with it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, data)) = data.split_first() else {
        return;
    };
    if data.starts_with(&[0x1f, 0x8b]) {
        return; // decompressed: the output would be the decompressed bytes
    }
    let format = [Format::Jsonl, Format::Csv, Format::Tsv, Format::Lines][selector as usize % 4];
    let mut opts = ReadOptions::default().with_format(format);
    if format.has_header() {
        // One text column, the first of the header: every non-blank row is a record.
        let delim = if format == Format::Tsv { b'\t' } else { b',' };
        let body = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
        let end = body
            .iter()
            .position(|&b| b == delim || b == b'\n' || b == b'\r' || b == b'"')
            .unwrap_or(body.len());
        if body.get(end) == Some(&b'"') {
            return;
        }
        opts = opts.with_text_columns([String::from_utf8_lossy(&body[..end]).into_owned()]);
    }
    let Some(out) = neardup_fuzz::read(data, &opts, false) else {
        return;
    };
    assert!(out.error.is_none(), "{:?}", out.error);
    let written = Shared::default();
    let mut w =
        DedupWriter::from_writer(written.clone(), "memory", format, out.header.as_deref()).unwrap();
    for e in &out.entries {
        if let Entry::Record(r) = e {
            w.write(r).unwrap();
        }
    }
    w.finish().unwrap();
    let written = written.0.lock().unwrap().clone();
    if out.all_records() {
        assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(data),
            "round trip"
        );
        assert_eq!(written, data);
    } else {
        // Skipped records are left out: never more bytes than the input.
        assert!(written.len() <= data.len() + out.entries.len());
    }
});
