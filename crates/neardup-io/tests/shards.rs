//! Folders of shards: a directory of `.jsonl.gz`, `.jsonl.zst` and Parquet files read by
//! the document table as one input per file, in sorted order, with its root and
//! relative path; a folder of text files is read one document per file, as before.

use std::io::Write;
use std::path::{Path, PathBuf};

use neardup_io::documents::{DocId, Documents, InputOptions};
use neardup_io::Format;

fn gzip(text: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text).unwrap();
    enc.finish().unwrap()
}

fn parquet_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/parquet/pyarrow.parquet")
}

/// corpus/a.jsonl.gz (2 records), corpus/b/c.jsonl.zst (a record and a blank line),
/// corpus/b/d.parquet (12 rows, one null), corpus/.hidden.jsonl.
fn corpus(root: &Path) -> PathBuf {
    let corpus = root.join("corpus");
    std::fs::create_dir_all(corpus.join("b")).unwrap();
    std::fs::write(
        corpus.join("a.jsonl.gz"),
        gzip(b"{\"text\": \"first shard one\"}\n{\"text\": \"first shard two\"}\n"),
    )
    .unwrap();
    let zst = zstd::encode_all(&b"{\"text\": \"second shard\"}\n\n"[..], 3).unwrap();
    std::fs::write(corpus.join("b/c.jsonl.zst"), zst).unwrap();
    std::fs::copy(parquet_fixture(), corpus.join("b/d.parquet")).unwrap();
    std::fs::write(corpus.join(".hidden.jsonl"), "{\"text\": \"hidden\"}\n").unwrap();
    corpus
}

#[test]
fn a_folder_of_mixed_shards_is_one_input_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(dir.path());
    let docs = Documents::read(&InputOptions::new(vec![corpus.clone()])).unwrap();
    let inputs: Vec<(String, Format, Option<PathBuf>)> = docs
        .inputs
        .iter()
        .map(|i| (i.relative.display().to_string(), i.format, i.root.clone()))
        .collect();
    let root = Some(corpus.clone());
    assert_eq!(
        inputs,
        [
            ("a.jsonl.gz".to_string(), Format::Jsonl, root.clone()),
            ("b/c.jsonl.zst".to_string(), Format::Jsonl, root.clone()),
            ("b/d.parquet".to_string(), Format::Parquet, root),
        ]
    );
    assert_eq!(docs.inputs[2].path, corpus.join("b/d.parquet"));
    // 2 + 1 + 11 documents; the blank line and the null text skipped.
    assert_eq!(docs.len(), 14);
    assert_eq!(docs.read_count(), 2 + 2 + 12);
    assert_eq!(docs.skipped_count(), 2);
    // Unnamed documents are named by shard and line; Parquet rows by their id column.
    assert_eq!(
        docs.id(1),
        DocId::Text(format!("{}:2", corpus.join("a.jsonl.gz").display()))
    );
    assert_eq!(docs.id(3), DocId::JsonNumber("1".into()));
    assert_eq!(docs.place(13).record, 12);
    assert_eq!(docs.texts[2], "second shard");
    assert_eq!(
        docs.excluded_line().as_deref(),
        Some("1 file or folder (hidden 1)")
    );
}

#[test]
fn glob_and_format_choose_the_shards_and_dir_keeps_documents() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(dir.path());
    let mut options = InputOptions::new(vec![corpus.clone()]);
    options.globs = vec!["*.jsonl.*".into()];
    let docs = Documents::read(&options).unwrap();
    assert_eq!(docs.inputs.len(), 2);
    assert_eq!(docs.len(), 3);
    assert!(docs
        .excluded_line()
        .unwrap()
        .contains("not matched by --glob 1"));
    // --format dir: each file one document, as before.
    let docs =
        Documents::read(&InputOptions::new(vec![corpus.clone()]).with_format(Format::Dir)).unwrap();
    assert_eq!(docs.inputs.len(), 1);
    assert_eq!(docs.inputs[0].format, Format::Dir);
    assert_eq!(docs.inputs[0].root, None);
    // A folder of text files stays one document per file.
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("a.txt"), "a note").unwrap();
    std::fs::write(notes.join("b.jsonl"), "{\"text\": \"x\"}\n").unwrap();
    let docs = Documents::read(&InputOptions::new(vec![notes])).unwrap();
    assert_eq!((docs.inputs.len(), docs.inputs[0].format), (1, Format::Dir));
    assert_eq!(docs.len(), 2);
}

#[test]
fn a_file_given_directly_has_no_root() {
    let docs = Documents::read(&InputOptions::new(vec![parquet_fixture()])).unwrap();
    assert_eq!(docs.inputs[0].root, None);
    assert_eq!(docs.inputs[0].relative, Path::new("pyarrow.parquet"));
    assert_eq!(docs.len(), 11);
}
