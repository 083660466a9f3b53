//! Properties over arbitrary input: no panics, one entry per line, every byte accounted for.

use super::*;
use proptest::prelude::*;

fn read_bytes(bytes: &[u8], format: Format) -> (Vec<Entry>, Option<Vec<u8>>) {
    let opts = ReadOptions::default().with_format(format);
    let mut reader = match Reader::from_reader(std::io::Cursor::new(bytes.to_vec()), "-", &opts) {
        Ok(r) => r,
        Err(Error::MissingColumn { .. }) => return (Vec::new(), None),
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
    fn csv_accounts_for_every_byte(body in messy_bytes(), tsv in any::<bool>()) {
        // One column, so every row that is not blank is a record.
        let format = if tsv { Format::Tsv } else { Format::Csv };
        let mut bytes = b"text\n".to_vec();
        bytes.extend_from_slice(&body);
        let (es, header) = read_bytes(&bytes, format);
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
                    line += r.raw.iter().filter(|&&b| b == b'\n').count() as u64;
                }
                Entry::Skipped(s) => {
                    prop_assert_eq!(&s.reason, &SkipReason::BlankLine);
                    let width = if bytes[at..].starts_with(b"\r\n") {
                        2
                    } else {
                        prop_assert!(matches!(bytes.get(at), Some(b'\r' | b'\n')));
                        1
                    };
                    if bytes[at + width - 1] == b'\n' {
                        line += 1;
                    }
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
