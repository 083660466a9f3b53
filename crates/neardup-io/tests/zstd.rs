//! `.zst` inputs read as `.gz` ones are: JSONL, CSV, TSV and lines, frame after frame;
//! a frame cut short is an error naming the file and the line reached; zstd on standard
//! input is told by its magic bytes.

use std::io::Write;
use std::path::Path;

use neardup_io::{open, Entry, Error, Format, ReadOptions, Reader};

/// `text` as zstd, one frame per `frame` bytes of it (the way pzstd and datatrove's
/// writers leave several frames in one file).
fn zstd_frames(text: &[u8], frame: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in text.chunks(frame.max(1)) {
        out.extend(zstd::encode_all(chunk, 3).unwrap());
    }
    out
}

fn gzip(text: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text).unwrap();
    enc.finish().unwrap()
}

fn read(path: &Path) -> Vec<Entry> {
    open(path, &ReadOptions::default())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

const FILES: [(&str, &str); 4] = [
    (
        "a.jsonl",
        "{\"id\": 1, \"text\": \"one\"}\n{\"id\": 2, \"text\": \"two\"}\nbad\n",
    ),
    ("a.csv", "id,text\n1,\"one,\nstill one\"\n2,two\n"),
    ("a.tsv", "id\ttext\n1\tone\n2\ttwo\n"),
    ("a.txt", "one\n7\ttwo\n\n"),
];

#[test]
fn zst_files_read_as_their_plain_and_gz_forms() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in FILES {
        let plain = dir.path().join(name);
        std::fs::write(&plain, text).unwrap();
        let gz = dir.path().join(format!("{name}.gz"));
        std::fs::write(&gz, gzip(text.as_bytes())).unwrap();
        let expected = read(&plain);
        assert!(!expected.is_empty());
        assert_eq!(read(&gz).len(), expected.len());
        for frame in [1, 7, 1 << 20] {
            let zst = dir.path().join(format!("{name}.ZST"));
            std::fs::write(&zst, zstd_frames(text.as_bytes(), frame)).unwrap();
            let reader = open(&zst, &ReadOptions::default()).unwrap();
            assert_eq!(reader.format(), Format::from_file_name(&plain), "{name}");
            let got: Vec<Entry> = reader.map(Result::unwrap).collect();
            // Same records, bytes and lines; only the source differs.
            assert_eq!(got.len(), expected.len(), "{name} {frame}");
            for (g, e) in got.iter().zip(&expected) {
                assert_eq!(g.location().line, e.location().line);
                assert_eq!(g.id(), e.id());
                assert_eq!(
                    g.record().map(|r| (&r.text, &r.raw)),
                    e.record().map(|r| (&r.text, &r.raw))
                );
            }
        }
    }
}

#[test]
fn a_truncated_zst_file_is_an_error_naming_the_file_and_line_after_the_intact_records() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=200)
        .map(|i| format!("{{\"id\": {i}, \"text\": \"line {i}\"}}\n"))
        .collect();
    // Two frames; the second cut short.
    let first = zstd::encode_all(&text.as_bytes()[..text.len() / 2], 3).unwrap();
    let second = zstd::encode_all(&text.as_bytes()[text.len() / 2..], 3).unwrap();
    let mut bytes = first.clone();
    bytes.extend_from_slice(&second[..second.len() - 3]);
    let path = dir.path().join("cut.jsonl.zst");
    std::fs::write(&path, bytes).unwrap();
    let mut records = 0;
    let mut error = None;
    for entry in open(&path, &ReadOptions::default()).unwrap() {
        match entry {
            Ok(_) => records += 1,
            Err(e) => error = Some(e),
        }
    }
    let error = error.expect("a truncated frame is an error");
    assert!(
        matches!(error, Error::Zstd { line: Some(_), .. }),
        "{error:?}"
    );
    let msg = error.to_string();
    assert!(
        msg.starts_with(&format!("{}:", path.display())) && msg.contains("zstd"),
        "{msg}"
    );
    // Every record of the intact first frame was read first.
    assert!(records >= 100, "{records}");
}

#[test]
fn zstd_on_standard_input_is_decompressed() {
    let text = b"{\"text\": \"one\"}\n{\"text\": \"two\"}\n";
    let reader = Reader::from_reader(
        std::io::Cursor::new(zstd_frames(text, 10)),
        "-",
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(reader.format(), Format::Jsonl);
    let texts: Vec<String> = reader
        .filter_map(|e| e.unwrap().into_record())
        .map(|r| r.text)
        .collect();
    assert_eq!(texts, ["one", "two"]);
}
