//! Properties over arbitrary input: no panics, one entry per line, every byte accounted for.

use super::*;
use proptest::prelude::*;

fn read_bytes(bytes: &[u8], format: Format) -> (Vec<Entry>, Option<Vec<u8>>) {
    read_bytes_with(bytes, &ReadOptions::default().with_format(format))
}

fn read_bytes_with(bytes: &[u8], opts: &ReadOptions) -> (Vec<Entry>, Option<Vec<u8>>) {
    let mut reader = match Reader::from_reader(std::io::Cursor::new(bytes.to_vec()), "-", opts) {
        Ok(r) => r,
        Err(Error::MissingColumn { .. } | Error::BadHeader { .. }) => return (Vec::new(), None),
        Err(e) => panic!("unexpected error {e}"),
    };
    let header = reader.header_raw().map(<[u8]>::to_vec);
    let entries = reader
        .by_ref()
        .map(|e| e.expect("an in-memory source has no hard errors"))
        .collect();
    (entries, header)
}

/// Arbitrary bytes, biased towards the characters that matter to the parsers.
fn messy_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(b"\n\r\t,\"{}:[] text\\\0\xEF\xBB\xBF\xFF".to_vec()),
            1 => any::<u8>(),
        ],
        0..300,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn lines_yield_one_record_per_line_and_raw_rebuilds_input(bytes in messy_bytes()) {
        // Avoid the gzip magic: a stream starting with it is decompressed.
        prop_assume!(!bytes.starts_with(&[0x1f, 0x8b]));
        let (es, _) = read_bytes(&bytes, Format::Lines);
        prop_assert_eq!(es.len(), physical_lines(&bytes).len());
        let mut rebuilt = Vec::new();
        for (i, e) in es.iter().enumerate() {
            let r = e.record().expect("lines never skip");
            prop_assert_eq!(r.location.line, i as u64 + 1);
            rebuilt.extend_from_slice(&r.raw);
        }
        prop_assert_eq!(rebuilt, bytes);
    }

    #[test]
    fn jsonl_yields_one_entry_per_line(bytes in messy_bytes()) {
        prop_assume!(!bytes.starts_with(&[0x1f, 0x8b]));
        let (es, _) = read_bytes(&bytes, Format::Jsonl);
        let lines = physical_lines(&bytes);
        prop_assert_eq!(es.len(), lines.len());
        for (i, e) in es.iter().enumerate() {
            prop_assert_eq!(e.location().line, i as u64 + 1);
            if let Entry::Record(r) = e {
                prop_assert_eq!(&r.raw[..], lines[i]);
            }
        }
    }

    #[test]
    fn csv_with_arbitrary_header_never_panics(bytes in messy_bytes(), tsv in any::<bool>()) {
        prop_assume!(!bytes.starts_with(&[0x1f, 0x8b]));
        let format = if tsv { Format::Tsv } else { Format::Csv };
        let (_, header) = read_bytes(&bytes, format);
        if let Some(h) = header {
            prop_assert!(bytes.starts_with(&h));
        }
    }

    #[test]
    fn csv_accounts_for_every_byte(body in messy_bytes(), kind in 0..3usize) {
        // One column, so every row that is not blank is a record. CSV, TSV quoted as CSV,
        // TSV as defined (no quoting; only `\n` ends a line).
        let opts = match kind {
            0 => ReadOptions::default().with_format(Format::Csv),
            1 => ReadOptions::default().with_format(Format::Tsv).with_quote(b'"'),
            _ => ReadOptions::default().with_format(Format::Tsv),
        };
        let plain = kind == 2;
        let mut bytes = b"text\n".to_vec();
        bytes.extend_from_slice(&body);
        let (es, header) = read_bytes_with(&bytes, &opts);
        prop_assert_eq!(header.as_deref(), Some(&b"text\n"[..]));
        let mut at = 5;
        let mut line = 2;
        for e in &es {
            prop_assert_eq!(e.location().line, line);
            match e {
                Entry::Record(r) => {
                    prop_assert!(!r.raw.is_empty());
                    prop_assert!(bytes[at..].starts_with(&r.raw), "raw out of place");
                    at += r.raw.len();
                    if plain {
                        // One line, through its `\n`.
                        let lf = r.raw.iter().filter(|&&b| b == b'\n').count();
                        prop_assert!(lf <= 1 && (lf == 0 || r.raw.ends_with(b"\n")));
                        prop_assert!(lf == 1 || at == bytes.len());
                        line += lf as u64;
                    } else {
                        // Line ends: `\n`, `\r\n`, lone `\r`.
                        line += r.raw.iter().filter(|&&b| b == b'\r').count() as u64
                            + r.raw.iter().filter(|&&b| b == b'\n').count() as u64
                            - r.raw.windows(2).filter(|w| w == b"\r\n").count() as u64;
                    }
                }
                Entry::Skipped(s) if s.reason.code() == "unclosed_quote" => {
                    prop_assert!(!plain);
                    // The rest of the input, from a row whose quote is never closed.
                    prop_assert!(bytes[at..].contains(&b'"'));
                    at = bytes.len();
                }
                Entry::Skipped(s) => {
                    prop_assert_eq!(&s.reason, &SkipReason::BlankLine);
                    let width = if bytes[at..].starts_with(b"\r\n") {
                        2
                    } else if plain {
                        prop_assert_eq!(bytes.get(at), Some(&b'\n'));
                        1
                    } else {
                        prop_assert!(matches!(bytes.get(at), Some(b'\r' | b'\n')));
                        1
                    };
                    line += 1;
                    at += width;
                }
            }
        }
        prop_assert_eq!(at, bytes.len(), "every byte belongs to the header or an entry");
    }

    #[test]
    fn csv_written_by_the_csv_crate_round_trips(
        rows in prop::collection::vec(
            prop::collection::vec("[a-z ,\"\r\n]{0,8}", 2..=2),
            0..20,
        ),
        crlf in any::<bool>(),
    ) {
        let mut out = csv::WriterBuilder::new()
            .terminator(if crlf { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') })
            .from_writer(Vec::new());
        out.write_record(["id", "text"]).unwrap();
        let mut expected = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            // A row whose fields are all empty is written as a blank line; keep ids non-empty.
            let id = format!("r{i}");
            out.write_record([id.as_str(), row[1].as_str()]).unwrap();
            expected.push((id, row[1].clone()));
        }
        let data = out.into_inner().unwrap();
        let opts = ReadOptions::default().with_format(Format::Csv).with_id_column("id");
        let reader = Reader::from_reader(std::io::Cursor::new(data.clone()), "-", &opts).unwrap();
        let mut rebuilt = reader.header_raw().unwrap().to_vec();
        let mut got = Vec::new();
        for e in reader {
            let r = e.unwrap().into_record().expect("no skips");
            rebuilt.extend_from_slice(&r.raw);
            got.push((r.id.unwrap(), r.text));
        }
        prop_assert_eq!(got, expected);
        prop_assert_eq!(rebuilt, data);
    }
}

/// Record numbers are 1, 2, 3, ... and lines strictly increase, for every format.
fn assert_numbering(es: &[Entry]) -> Result<(), TestCaseError> {
    let mut last = 0;
    for (i, e) in es.iter().enumerate() {
        prop_assert_eq!(e.location().record, i as u64 + 1);
        prop_assert!(
            e.location().line > last,
            "line {} after {}",
            e.location().line,
            last
        );
        last = e.location().line;
    }
    Ok(())
}

/// A `Vec` that can be read after a `DedupWriter` took it.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads `data` as `format` and writes every record back with a `DedupWriter`.
fn write_back(data: &[u8], opts: &ReadOptions) -> (Vec<Entry>, Vec<u8>) {
    let reader = Reader::from_reader(std::io::Cursor::new(data.to_vec()), "-", opts).unwrap();
    let format = reader.format();
    let out = Shared::default();
    let mut w =
        DedupWriter::from_writer(out.clone(), "memory", format, reader.header_raw()).unwrap();
    let entries: Vec<Entry> = reader.map(Result::unwrap).collect();
    for e in &entries {
        if let Entry::Record(r) = e {
            w.write(r).unwrap();
        }
    }
    w.finish().unwrap();
    let written = out.0.lock().unwrap().clone();
    (entries, written)
}

/// Any string, biased towards what JSON and CSV must escape or quote.
fn field_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        2 => "[a-z ,;\t\"'\\\\\r\n\u{0}\u{1f}\u{7f}\u{feff}\u{2028}\u{fffd}é日🙂]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_format_numbers_entries_and_lines_in_order(bytes in messy_bytes(), which in 0..4usize) {
        prop_assume!(!bytes.starts_with(&[0x1f, 0x8b]));
        let format = [Format::Jsonl, Format::Csv, Format::Tsv, Format::Lines][which];
        // CSV/TSV read the first column of whatever header there is.
        let mut opts = ReadOptions::default().with_format(format);
        if format.has_header() {
            let delim = if format == Format::Tsv { b'\t' } else { b',' };
            let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
            let end = body
                .iter()
                .position(|&b| b == delim || b == b'\n' || b == b'\r' || b == b'"')
                .unwrap_or(body.len());
            opts = opts.with_text_columns([String::from_utf8_lossy(&body[..end]).into_owned()]);
        }
        let (es, _) = read_bytes(&bytes, format);
        assert_numbering(&es)?;
        let reader = Reader::from_reader(std::io::Cursor::new(bytes.clone()), "-", &opts);
        if let Ok(reader) = reader {
            let es: Vec<Entry> = reader.map(|e| e.unwrap()).collect();
            assert_numbering(&es)?;
        }
    }

    #[test]
    fn generated_jsonl_round_trips_through_the_writer(
        rows in prop::collection::vec(
            (field_string(), field_string(), prop::option::of(field_string()), any::<bool>()),
            0..12,
        ),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
        bom in any::<bool>(),
    ) {
        prop_assume!(!rows.is_empty() || !bom, "a lone BOM is a blank line");
        let mut data = Vec::new();
        if bom {
            data.extend_from_slice(b"\xEF\xBB\xBF");
        }
        for (i, (id, text, extra, id_first)) in rows.iter().enumerate() {
            let mut obj = serde_json::Map::new();
            if *id_first {
                obj.insert("id".into(), id.clone().into());
            }
            if let Some(extra) = extra {
                obj.insert("other".into(), serde_json::json!({"text": extra, "n": [1, 2.5]}));
            }
            obj.insert("text".into(), text.clone().into());
            if !*id_first {
                obj.insert("id".into(), id.clone().into());
            }
            data.extend_from_slice(serde_json::to_string(&obj).unwrap().as_bytes());
            if i + 1 < rows.len() || final_newline {
                data.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            }
        }
        let opts = ReadOptions::default().with_format(Format::Jsonl);
        let (es, written) = write_back(&data, &opts);
        prop_assert_eq!(es.len(), rows.len());
        for (e, (id, text, _, _)) in es.iter().zip(&rows) {
            let r = e.record().expect("every generated line is a record");
            prop_assert_eq!(&r.text, text);
            prop_assert_eq!(r.id.as_deref(), Some(id.as_str()));
            prop_assert!(!r.lossy);
        }
        prop_assert_eq!(written, data);
    }

    #[test]
    fn generated_csv_round_trips_through_the_writer(
        header in prop::collection::vec("[A-Za-z_][A-Za-z0-9 _]{0,6}", 1..4),
        rows in prop::collection::vec(prop::collection::vec(field_string(), 4), 0..12),
        crlf in any::<bool>(),
        tsv in any::<bool>(),
        bom in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        // Columns: "id", "text", then the arbitrary ones (made distinct).
        let mut columns = vec!["id".to_string(), "text".to_string()];
        for (i, h) in header.iter().enumerate() {
            columns.push(format!("{h}{i}"));
        }
        let width = columns.len();
        let mut out = csv::WriterBuilder::new()
            .delimiter(if tsv { b'\t' } else { b',' })
            .terminator(if crlf { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') })
            .from_writer(Vec::new());
        out.write_record(&columns).unwrap();
        for row in &rows {
            // A row whose only field is empty would be a blank line: give it a width.
            let fields: Vec<&str> = (0..width).map(|i| row[i % row.len()].as_str()).collect();
            out.write_record(&fields).unwrap();
        }
        let mut data = out.into_inner().unwrap();
        if !final_newline && !rows.is_empty() {
            let cut = if crlf { 2 } else { 1 };
            data.truncate(data.len() - cut);
        }
        if bom {
            data.splice(0..0, b"\xEF\xBB\xBF".iter().copied());
        }
        // The csv crate quotes as CSV does, in TSV too: read it with the quote byte.
        let opts = if tsv {
            ReadOptions::default().with_format(Format::Tsv).with_quote(b'"')
        } else {
            ReadOptions::default().with_format(Format::Csv)
        };
        let opts = opts.with_id_column("id");
        let (es, written) = write_back(&data, &opts);
        prop_assert_eq!(es.len(), rows.len());
        for (e, row) in es.iter().zip(&rows) {
            let r = e.record().expect("every generated row is a record");
            prop_assert_eq!(r.id.as_deref(), Some(row[0].as_str()));
            prop_assert_eq!(&r.text, &row[1 % row.len()]);
        }
        assert_numbering(&es)?;
        prop_assert_eq!(written, data);
    }

    #[test]
    fn generated_tsv_round_trips_through_the_writer(
        rows in prop::collection::vec(prop::collection::vec(tsv_field(), 3), 0..12),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        // TSV as defined: fields hold anything but tabs and line feeds (quotes included);
        // the id is never empty, so no row is blank.
        let end: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        let mut data = b"id\ttext\tmore".to_vec();
        data.extend_from_slice(end);
        for row in &rows {
            data.extend_from_slice(format!("#{}\t{}\t{}", row[0], row[1], row[2]).as_bytes());
            data.extend_from_slice(end);
        }
        if !final_newline && !rows.is_empty() {
            data.truncate(data.len() - end.len());
        }
        let opts = ReadOptions::default().with_format(Format::Tsv).with_id_column("id");
        let (es, written) = write_back(&data, &opts);
        prop_assert_eq!(es.len(), rows.len());
        for (i, (e, row)) in es.iter().zip(&rows).enumerate() {
            prop_assert_eq!(e.location().line, i as u64 + 2);
            let r = e.record().expect("every generated row is a record");
            prop_assert_eq!(r.id.clone(), Some(format!("#{}", row[0])));
            prop_assert_eq!(&r.text, &row[1]);
        }
        prop_assert_eq!(written, data);
    }
}

/// A TSV field: anything but a tab or a line feed, quotes and `\r` inside included (but
/// not at the end, where a `\n` after it would make a CRLF line end).
fn tsv_field() -> impl Strategy<Value = String> {
    "[a-z \",;'\\\\\r\u{0}é日🙂]{0,10}[a-z\"]?".prop_map(|s| s.trim_end_matches('\r').to_string())
}
