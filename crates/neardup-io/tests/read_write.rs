//! Reading the fixtures in `testdata/io/` and writing them back; properties over
//! arbitrary bytes in `read_write/properties.rs`; real standard input and output in
//! `read_write/stdio.rs`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use neardup_io::{
    open, same_file, DedupWriter, Entry, Error, Format, ReadOptions, Reader, Record, SkipReason,
};

// ---------------------------------------------------------------- harness

/// The path of a fixture.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/io")
        .join(name)
}

/// Every entry of `path`, panicking on a hard error.
fn entries(path: &Path, opts: &ReadOptions) -> Vec<Entry> {
    open(path, opts)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
        .map(|e| e.unwrap_or_else(|e| panic!("read {}: {e}", path.display())))
        .collect()
}

fn records(entries: &[Entry]) -> Vec<&Record> {
    entries.iter().filter_map(Entry::record).collect()
}

/// A short, comparable description of each entry: (line, record number, id, kind).
fn summary(entries: &[Entry]) -> Vec<(u64, u64, Option<&str>, &'static str)> {
    entries
        .iter()
        .map(|e| {
            let kind = match e {
                Entry::Record(_) => "record",
                Entry::Skipped(s) => s.reason.code(),
            };
            (e.location().line, e.location().record, e.id(), kind)
        })
        .collect()
}

/// Reads `path` and writes every record back with a `DedupWriter`; returns the output.
fn round_trip(path: &Path, opts: &ReadOptions) -> Vec<u8> {
    let reader = open(path, opts).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out");
    let mut writer = DedupWriter::create(Some(&out), reader.format(), reader.header_raw()).unwrap();
    for entry in reader {
        match entry.unwrap() {
            Entry::Record(r) => writer.write(&r).unwrap(),
            Entry::Skipped(s) => panic!("{}: unexpected skip {s:?}", path.display()),
        }
    }
    writer.finish().unwrap();
    fs::read(&out).unwrap()
}

/// listings.tsv is quoted as CSV is (a quoted field spans two lines): it needs the quote.
fn tsv_opts() -> ReadOptions {
    ReadOptions::default()
        .with_text_columns(["Title", "Short Description"])
        .with_id_column("id")
        .with_quote(b'"')
}

fn csv_opts() -> ReadOptions {
    ReadOptions::default()
        .with_text_columns(["title", "description"])
        .with_id_column("id")
}

/// The source's physical lines (split after each `\n`).
fn physical_lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

// ---------------------------------------------------------------- JSONL

#[test]
fn jsonl_fixture_yields_one_entry_per_line() {
    let path = fixture("docs.jsonl");
    let es = entries(&path, &ReadOptions::default());
    let source = fs::read(&path).unwrap();
    assert_eq!(es.len(), physical_lines(&source).len());
    assert_eq!(
        summary(&es),
        [
            (1, 1, Some("1"), "record"),
            (2, 2, Some("doc-2"), "record"),
            (3, 3, None, "record"),
            (4, 4, None, "malformed_json"),
            (5, 5, Some("5"), "missing_field"),
            (6, 6, Some("6"), "field_not_text"),
            (7, 7, None, "blank_line"),
            (8, 8, Some("8.50"), "record"),
            (9, 9, Some("9"), "record"),
        ]
    );
    let rs = records(&es);
    assert_eq!(rs[0].text, "The quick brown fox jumps over the lazy dog");
    assert_eq!(rs[3].text, "crlf line");
    assert_eq!(rs[4].text, "café é \"quoted\"");
    // Each record's raw is exactly its source line, terminator included.
    let lines = physical_lines(&source);
    for r in &rs {
        assert_eq!(r.raw, lines[r.location.line as usize - 1]);
        assert_eq!(&*r.location.source, path.display().to_string());
        assert!(!r.lossy);
    }
    assert!(rs[3].raw.ends_with(b"\r\n"));
    match &es[3] {
        Entry::Skipped(s) => match &s.reason {
            SkipReason::MalformedJson(msg) => assert!(msg.contains("column"), "{msg}"),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn jsonl_custom_fields() {
    let es = entries(
        &fixture("docs.jsonl"),
        &ReadOptions::default()
            .with_text_field("title")
            .with_id_field("nope"),
    );
    let kinds: Vec<_> = summary(&es).into_iter().map(|s| s.3).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "record").count(), 1);
    let r = records(&es)[0];
    assert_eq!(r.text, "missing text field");
    assert_eq!(r.id, None);
}

#[test]
fn clean_jsonl_round_trips() {
    let path = fixture("clean.jsonl");
    assert_eq!(
        round_trip(&path, &ReadOptions::default()),
        fs::read(&path).unwrap()
    );
    let es = entries(&path, &ReadOptions::default());
    let rs = records(&es);
    assert_eq!(rs[0].text, "first, after a BOM");
    assert_eq!(rs[2].text, "", "empty documents are records");
    assert_eq!(
        rs[3].raw,
        b"{\"id\": 4, \"text\": \"last, no final newline\"}"
    );
}

// ---------------------------------------------------------------- gzip

#[test]
fn gzip_reads_like_the_plain_file() {
    let plain = entries(&fixture("docs.jsonl"), &ReadOptions::default());
    let gz_path = fixture("docs.jsonl.gz");
    let reader = open(&gz_path, &ReadOptions::default()).unwrap();
    assert_eq!(
        reader.format(),
        Format::Jsonl,
        "format detected through .gz"
    );
    let gz: Vec<Entry> = reader.map(Result::unwrap).collect();
    assert_eq!(summary(&plain), summary(&gz));
    for (p, g) in records(&plain).iter().zip(records(&gz)) {
        assert_eq!(p.raw, g.raw);
        assert_eq!(p.text, g.text);
        assert_eq!(&*g.location.source, gz_path.display().to_string());
    }
}

#[test]
fn truncated_gzip_is_an_error_naming_the_file_and_line() {
    let path = fixture("truncated.jsonl.gz");
    let mut reader = open(&path, &ReadOptions::default()).unwrap();
    let mut ok = 0;
    let err = loop {
        match reader.next() {
            Some(Ok(_)) => ok += 1,
            Some(Err(e)) => break e,
            None => panic!("truncated stream read to the end without an error"),
        }
    };
    assert!(ok > 0, "the intact part is read before the error");
    match &err {
        Error::Gzip { path: p, line, .. } => {
            assert_eq!(p, &path.display().to_string());
            assert_eq!(*line, Some(ok as u64 + 1));
        }
        other => panic!("expected a gzip error, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{}:{}: ", path.display(), ok + 1)),
        "{msg}"
    );
    assert!(reader.next().is_none(), "the iterator ends after an error");
}

#[test]
fn file_named_gz_that_is_not_gzip_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.jsonl.gz");
    fs::write(&path, "{\"text\":\"not compressed\"}\n").unwrap();
    let mut reader = open(&path, &ReadOptions::default()).unwrap();
    let err = reader.next().unwrap().unwrap_err();
    assert!(matches!(err, Error::Gzip { .. }), "{err:?}");
    assert!(err.to_string().contains("plain.jsonl.gz"), "{err}");
    assert!(reader.next().is_none());
}

#[test]
fn stream_input_detects_gzip_and_sniffs_format() {
    let gz = fs::read(fixture("docs.jsonl.gz")).unwrap();
    let reader =
        Reader::from_reader(std::io::Cursor::new(gz), "-", &ReadOptions::default()).unwrap();
    assert_eq!(reader.format(), Format::Jsonl);
    assert_eq!(reader.source(), "-");
    let es: Vec<Entry> = reader.map(Result::unwrap).collect();
    assert_eq!(
        summary(&es),
        summary(&entries(&fixture("docs.jsonl"), &ReadOptions::default()))
    );
    assert!(es.iter().all(|e| &*e.location().source == "-"));

    let lines = fs::read(fixture("lines.txt")).unwrap();
    let reader =
        Reader::from_reader(std::io::Cursor::new(lines), "-", &ReadOptions::default()).unwrap();
    assert_eq!(reader.format(), Format::Lines);
    assert_eq!(reader.count(), 6);
}

// ---------------------------------------------------------------- CSV / TSV

#[test]
fn tsv_fixture_reads_columns_and_quoted_newlines() {
    let path = fixture("listings.tsv");
    let reader = open(&path, &tsv_opts()).unwrap();
    assert_eq!(reader.format(), Format::Tsv);
    assert_eq!(
        reader.header_raw(),
        Some(&b"id\tTitle\tShort Description\tPrice\n"[..])
    );
    assert_eq!(
        reader.columns(),
        ["id", "Title", "Short Description", "Price"]
    );
    let es: Vec<Entry> = reader.map(Result::unwrap).collect();
    assert_eq!(
        summary(&es),
        [
            (2, 1, Some("L1"), "record"),
            (3, 2, Some("L2"), "record"),
            (4, 3, Some("L3"), "record"),
            (6, 4, Some("L4"), "record"),
            (7, 5, Some("L5"), "record"),
        ]
    );
    let rs = records(&es);
    assert_eq!(rs[0].text, "Red city bike Almost new, 3 gears, barely used");
    assert_eq!(
        rs[2].text,
        "Oak dining table Seats six.\nSolid oak, some scratches"
    );
    assert_eq!(
        rs[2].raw,
        b"L3\tOak dining table\t\"Seats six.\nSolid oak, some scratches\"\t300\n"
    );
    assert_eq!(rs[3].text, "24\" monitor Full HD, \"like new\"");
}

#[test]
fn tsv_without_a_quote_byte_has_no_quoting() {
    // The same fixture as TSV is defined: the quote is text, and the quoted field's second
    // line is a row of its own (too short: skipped, and counted).
    let path = fixture("listings.tsv");
    let opts = tsv_opts();
    let opts = ReadOptions {
        quote: None,
        ..opts
    };
    let es: Vec<Entry> = open(&path, &opts).unwrap().map(Result::unwrap).collect();
    assert_eq!(
        summary(&es)
            .iter()
            .map(|&(line, _, _, code)| (line, code))
            .collect::<Vec<_>>(),
        [
            (2, "record"),
            (3, "record"),
            (4, "record"),
            (5, "missing_columns"),
            (6, "record"),
            (7, "record"),
            (8, "missing_columns"),
        ]
    );
    assert_eq!(records(&es)[2].text, "Oak dining table \"Seats six.");
}

/// Real listings data: titles that start with a quote. Every row is its own record, and
/// writing every record back gives the file byte for byte.
#[test]
fn tsv_with_leading_quotes_keeps_every_row() {
    let data: &[u8] = b"id\ttitle\tprice\r\n\
        1\t\"Bilocale\" luminoso\t900\r\n\
        2\tTrilocale con \"vista\" mare\t1200\r\n\
        3\t\"Monolocale arredato\t500\r\n\
        4\tAttico \"panoramico\"\t2000\r\n\
        5\tBox auto\t100";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("listings.tsv");
    fs::write(&path, data).unwrap();
    let opts = ReadOptions::default()
        .with_text_columns(["title"])
        .with_id_column("id");
    let es: Vec<Entry> = open(&path, &opts).unwrap().map(Result::unwrap).collect();
    let rs = records(&es);
    assert_eq!(rs.len(), 5);
    assert_eq!(
        rs.iter().map(|r| r.text.as_str()).collect::<Vec<_>>(),
        [
            "\"Bilocale\" luminoso",
            "Trilocale con \"vista\" mare",
            "\"Monolocale arredato",
            "Attico \"panoramico\"",
            "Box auto"
        ]
    );
    assert_eq!(rs[0].raw, b"1\t\"Bilocale\" luminoso\t900\r\n");
    assert_eq!(rs[2].raw, b"3\t\"Monolocale arredato\t500\r\n");
    assert_eq!(rs[4].raw, b"5\tBox auto\t100");
    assert_eq!(round_trip(&path, &opts), data);
}

#[test]
fn tsv_escapes_and_a_quote_do_not_go_together() {
    let path = fixture("listings.tsv");
    let err = open(&path, &tsv_opts().with_tsv_escapes(true)).unwrap_err();
    assert!(matches!(err, Error::InvalidOptions(_)), "{err:?}");
    // CSV quotes with '"' only.
    let err = open(&fixture("listings.csv"), &csv_opts().with_quote(b'\'')).unwrap_err();
    assert!(matches!(err, Error::InvalidOptions(_)), "{err:?}");
    assert!(open(&fixture("listings.csv"), &csv_opts().with_quote(b'"')).is_ok());
}

#[test]
fn tsv_round_trips() {
    let path = fixture("listings.tsv");
    assert_eq!(round_trip(&path, &tsv_opts()), fs::read(&path).unwrap());
}

#[test]
fn csv_with_bom_crlf_and_quoted_newlines_round_trips() {
    let path = fixture("listings.csv");
    let source = fs::read(&path).unwrap();
    assert_eq!(round_trip(&path, &csv_opts()), source);

    let reader = open(&path, &csv_opts()).unwrap();
    assert_eq!(
        reader.columns()[0],
        "id",
        "BOM is not part of the column name"
    );
    assert!(reader.header_raw().unwrap().starts_with(b"\xEF\xBB\xBFid,"));
    let es: Vec<Entry> = reader.map(Result::unwrap).collect();
    let rs = records(&es);
    assert_eq!(
        rs.iter().map(|r| r.location.line).collect::<Vec<_>>(),
        [2, 3, 4, 6, 8]
    );
    assert_eq!(
        rs[2].raw,
        b"3,Oak table,\"Seats six.\r\nSolid oak, \"\"antique\"\" look\",300\r\n"
    );
    assert_eq!(
        rs[2].text,
        "Oak table Seats six.\r\nSolid oak, \"antique\" look"
    );
    assert_eq!(rs[3].raw, b"4,Lamp,\"Brass\nreading lamp\",25\r\n");
    assert_eq!(rs[4].raw, b"5,Lamp,Brass reading lamp,20");
}

#[test]
fn csv_missing_column_error_names_file_column_and_columns() {
    let path = fixture("listings.tsv");
    let err = open(&path, &ReadOptions::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(msg.contains("\"text\""), "{msg}");
    assert!(msg.contains("\"Short Description\""), "{msg}");

    let err = open(
        &path,
        &ReadOptions::default()
            .with_text_columns(["Title"])
            .with_id_column("ID"),
    )
    .unwrap_err();
    match err {
        Error::MissingColumn {
            column, available, ..
        } => {
            assert_eq!(column, "ID");
            assert_eq!(available.len(), 4);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn csv_format_can_be_forced() {
    // A .txt file read as CSV.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("table.txt");
    fs::write(&path, "text\nhello\n").unwrap();
    let es = entries(&path, &ReadOptions::default().with_format(Format::Csv));
    assert_eq!(records(&es)[0].text, "hello");
}

// ---------------------------------------------------------------- lines

#[test]
fn lines_fixture_ids_and_text() {
    let path = fixture("lines.txt");
    let es = entries(&path, &ReadOptions::default());
    assert_eq!(es.len(), physical_lines(&fs::read(&path).unwrap()).len());
    let rs = records(&es);
    assert_eq!(rs.len(), es.len(), "the lines format never skips");
    let got: Vec<(Option<&str>, &str)> = rs
        .iter()
        .map(|r| (r.id.as_deref(), r.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("a1"), "The quick brown fox"),
            (Some("a2"), "The quick brown fox!"),
            (None, "no id on this line"),
            (None, ""),
            (Some("a3"), "text with\ta second tab"),
            (None, "last line"),
        ]
    );
    assert_eq!(rs[4].raw, b"a3\ttext with\ta second tab\r\n");
}

#[test]
fn lines_round_trip_with_and_without_final_newline() {
    for name in [
        "lines.txt",
        "lines_no_final_newline.txt",
        "invalid_utf8.txt",
    ] {
        let path = fixture(name);
        assert_eq!(
            round_trip(&path, &ReadOptions::default()),
            fs::read(&path).unwrap(),
            "{name}"
        );
    }
    let es = entries(
        &fixture("lines_no_final_newline.txt"),
        &ReadOptions::default(),
    );
    let last = records(&es)[2];
    assert_eq!(last.text, "three without newline");
    assert_eq!(last.raw, b"three without newline");
}

#[test]
fn writer_separates_a_last_line_without_newline_from_the_next_record() {
    let path = fixture("lines_no_final_newline.txt");
    let es = entries(&path, &ReadOptions::default());
    let rs = records(&es);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txt");
    let mut w = DedupWriter::create(Some(&out), Format::Lines, None).unwrap();
    w.write(rs[2]).unwrap();
    w.write(rs[0]).unwrap();
    w.finish().unwrap();
    assert_eq!(fs::read(&out).unwrap(), b"three without newline\none\n");
}

#[test]
fn invalid_utf8_is_lossy() {
    let es = entries(&fixture("invalid_utf8.txt"), &ReadOptions::default());
    let rs = records(&es);
    assert_eq!(rs.len(), 3);
    assert!(!rs[0].lossy);
    assert!(rs[1].lossy);
    assert_eq!(rs[1].text, "Latin-1 caf\u{FFFD}");
    assert_eq!(rs[1].raw, b"Latin-1 caf\xe9\n");
    assert!(rs[2].lossy);
    assert_eq!(rs[2].id.as_deref(), Some("\u{FFFD}\u{FFFD}id"));
}

// ---------------------------------------------------------------- directories

#[test]
fn dir_fixture_walks_sorted_and_skips_binary() {
    let root = fixture("dir");
    let mut reader = open(&root, &ReadOptions::default()).unwrap();
    assert_eq!(reader.format(), Format::Dir);
    let es: Vec<Entry> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(
        summary(&es),
        [
            (1, 1, Some("a.txt"), "record"),
            (1, 2, Some("sub/b.txt"), "record"),
            (1, 3, Some("sub/deeper/c.md"), "record"),
            (1, 4, Some("sub/image.bin"), "binary"),
        ]
    );
    // The hidden file is left out, and counted.
    assert_eq!(reader.excluded(), [(neardup_io::Excluded::Hidden, 1)]);
    let reader = open(&root, &ReadOptions::default().with_hidden(true)).unwrap();
    let es: Vec<Entry> = reader.map(Result::unwrap).collect();
    assert_eq!(
        summary(&es),
        [
            (1, 1, Some(".hidden.txt"), "record"),
            (1, 2, Some("a.txt"), "record"),
            (1, 3, Some("sub/b.txt"), "record"),
            (1, 4, Some("sub/deeper/c.md"), "record"),
            (1, 5, Some("sub/image.bin"), "binary"),
        ]
    );
    let rs = records(&es);
    assert_eq!(rs[1].text, "Alpha document.\n");
    assert_eq!(rs[3].text, "# Charlie\n", "BOM stripped");
    assert_eq!(
        &*rs[2].location.source,
        root.join("sub/b.txt").display().to_string()
    );
    assert!(rs.iter().all(|r| r.raw.is_empty()));
}

#[test]
fn dir_round_trips_into_an_output_directory() {
    let root = fixture("dir");
    let reader = open(&root, &ReadOptions::default()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kept");
    let mut w = DedupWriter::create(Some(&out), Format::Dir, None).unwrap();
    let mut kept = Vec::new();
    for entry in reader {
        if let Entry::Record(r) = entry.unwrap() {
            w.write(&r).unwrap();
            kept.push(r.id.unwrap());
        }
    }
    w.finish().unwrap();
    for id in &kept {
        assert_eq!(
            fs::read(out.join(id)).unwrap(),
            fs::read(root.join(id)).unwrap(),
            "{id}"
        );
    }
    assert!(!out.join("sub/image.bin").exists());
    assert_eq!(
        entries(&out, &ReadOptions::default()).len(),
        kept.len(),
        "nothing else in the output"
    );
}

// ---------------------------------------------------------------- misc

#[test]
fn same_file_protects_inputs() {
    let path = fixture("docs.jsonl");
    let dotted = fixture("dir/../docs.jsonl");
    assert!(same_file(&path, &dotted));
    assert!(!same_file(&path, &fixture("clean.jsonl")));
    assert!(!same_file(&path, &fixture("does-not-exist.jsonl")));
}

#[test]
fn format_detection_of_fixtures() {
    for (name, format) in [
        ("docs.jsonl", Format::Jsonl),
        ("docs.jsonl.gz", Format::Jsonl),
        ("listings.tsv", Format::Tsv),
        ("listings.csv", Format::Csv),
        ("lines.txt", Format::Lines),
        ("dir", Format::Dir),
    ] {
        assert_eq!(Format::detect(&fixture(name)), format, "{name}");
    }
}

#[test]
fn generated_csv_round_trips_across_buffer_boundaries() {
    // Long enough to cross every internal buffer many times.
    let mut data = b"id,text,extra\r\n".to_vec();
    for i in 0..5000 {
        let text = "x".repeat(i % 97);
        data.extend_from_slice(
            format!("{i},\"{text}\r\nline two \"\"q\"\"\",{}\r\n", i * 3).as_bytes(),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.csv");
    fs::write(&path, &data).unwrap();
    let opts = ReadOptions::default().with_id_column("id");
    assert_eq!(round_trip(&path, &opts), data);
    let es = entries(&path, &opts);
    assert_eq!(es.len(), 5000);
    assert_eq!(es[4999].location().line, 2 + 2 * 4999);
}

#[test]
fn ndjson_name_and_single_line_without_newline() {
    let mut f = tempfile::Builder::new()
        .suffix(".ndjson")
        .tempfile()
        .unwrap();
    f.write_all(b"{\"text\":\"x\"}").unwrap();
    let es = entries(f.path(), &ReadOptions::default());
    assert_eq!(records(&es)[0].text, "x");
}

#[path = "read_write/properties.rs"]
mod properties;
#[path = "read_write/stdio.rs"]
mod stdio;

// ---------------------------------------------------------------- fuzzing regressions

/// Found by the `csv`, `tsv` and `round_trip` fuzz targets (inputs in
/// `fuzz/corpus/*/regression-lone-cr-line-numbers`): a row ended by a lone `\r` did not
/// advance the line count, so the next row had the same line number.
#[test]
fn regression_rows_ended_by_a_lone_cr_have_increasing_lines() {
    let data = b"\xEF\xBB\xBFid,text\r\n1,\"a, b\"\r\n3,\"x\r\ny\"\rRed city bike,b\r\n5,c";
    let opts = ReadOptions::default()
        .with_format(Format::Csv)
        .with_id_column("id");
    let reader = Reader::from_reader(std::io::Cursor::new(data.to_vec()), "-", &opts).unwrap();
    let es: Vec<Entry> = reader.map(Result::unwrap).collect();
    assert_eq!(
        summary(&es),
        [
            (2, 1, Some("1"), "record"),
            (3, 2, Some("3"), "record"),
            (5, 3, Some("Red city bike"), "record"),
            (6, 4, Some("5"), "record"),
        ]
    );
}

// ---------------------------------------------------------------- issue 9: input formats

/// A file name that is not UTF-8: read (id lossy), and dedup copies it by its exact name.
#[cfg(target_os = "linux")]
#[test]
fn dir_with_a_non_utf8_file_name_round_trips() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("in");
    fs::create_dir_all(root.join("sub")).unwrap();
    let name = OsStr::from_bytes(b"caf\xE9.txt");
    fs::write(root.join("sub").join(name), "latin-1 name").unwrap();
    fs::write(root.join("plain.txt"), "plain").unwrap();
    let reader = open(&root, &ReadOptions::default()).unwrap();
    let out = tmp.path().join("kept");
    let mut w = DedupWriter::create(Some(&out), Format::Dir, None).unwrap();
    let mut ids = Vec::new();
    for entry in reader {
        let r = entry.unwrap().into_record().unwrap();
        ids.push(r.id.clone().unwrap());
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(ids, ["plain.txt", "sub/caf\u{FFFD}.txt"]);
    assert_eq!(
        fs::read(out.join("sub").join(name)).unwrap(),
        b"latin-1 name"
    );
    assert_eq!(fs::read(out.join("plain.txt")).unwrap(), b"plain");
}

/// The reader's accessors for the CLI: warnings, fields seen, keys.
#[test]
fn reader_reports_warnings_fields_and_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("runaway.csv");
    let mut data = b"id,text,price\n1,fine,3\n2,\"stray quote,4\n".to_vec();
    for i in 0..120 {
        data.extend_from_slice(format!("{},row,{i}\n", i + 3).as_bytes());
    }
    fs::write(&csv, &data).unwrap();
    let opts = ReadOptions::default()
        .with_id_column("id")
        .with_key_field("price");
    let mut reader = open(&csv, &opts).unwrap();
    assert_eq!(reader.fields_seen(), ["id", "text", "price"]);
    let es: Vec<Entry> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(es.len(), 2);
    assert_eq!(es[0].record().unwrap().key.as_deref(), Some("3"));
    assert!(matches!(&es[1], Entry::Skipped(s) if s.reason.code() == "unclosed_quote"));
    let warnings = reader.take_warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!(
        warnings[0].to_string(),
        format!(
            "{}:3: a quoted field opened here runs 121 lines to the end of the input; \
             is a quote stray?",
            csv.display()
        )
    );
    assert!(reader.take_warnings().is_empty());

    let jsonl = tmp.path().join("docs.jsonl");
    fs::write(
        &jsonl,
        "{\"id\":1,\"body\":\"a\",\"price\":9.90}\n{\"id\":\"x\",\"body\":\"b\"}\n",
    )
    .unwrap();
    let mut reader = open(&jsonl, &ReadOptions::default().with_key_field("price")).unwrap();
    let es: Vec<Entry> = reader.by_ref().map(Result::unwrap).collect();
    assert!(es.iter().all(|e| e.record().is_none()), "no text field");
    assert_eq!(reader.fields_seen(), ["id", "body", "price"]);
    let reader = open(
        &jsonl,
        &ReadOptions::default()
            .with_text_field("body")
            .with_key_field("price"),
    )
    .unwrap();
    let rs: Vec<Record> = reader.map(|e| e.unwrap().into_record().unwrap()).collect();
    assert_eq!(
        rs.iter()
            .map(|r| (r.id.as_deref(), r.numeric_id, r.key.as_deref()))
            .collect::<Vec<_>>(),
        [(Some("1"), true, Some("9.90")), (Some("x"), false, None)]
    );
}
