//! Reading Parquet: the fixtures of `testdata/parquet/` (written by pyarrow, Polars and
//! DuckDB by `make.py` there, the same rows as `rows.jsonl`), broken files, and a
//! property: JSONL and Parquet of the same rows read as the same records.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use neardup_io::{open, Entry, Error, Filled, ReadOptions, Record, SkipReason};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/parquet")
        .join(name)
}

/// (id, text or skip code, row) of every entry, locations checked to be row numbers.
fn entries(path: &Path, opts: &ReadOptions) -> Vec<(Option<String>, String, u64)> {
    let reader = open(path, opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parquet = reader.format() == neardup_io::Format::Parquet;
    reader
        .map(|e| {
            let e = e.unwrap();
            let loc = e.location().clone();
            assert_eq!(loc.line, loc.record);
            match e {
                Entry::Record(r) => {
                    assert!(!parquet || r.raw.is_empty());
                    (r.id, r.text, loc.record)
                }
                Entry::Skipped(s) => (s.id, format!("skipped:{}", s.reason.code()), loc.record),
            }
        })
        .collect()
}

/// The rows of `rows.jsonl` as the JSONL reader gives them.
fn jsonl_rows() -> Vec<(Option<String>, String, u64)> {
    entries(&fixture("rows.jsonl"), &ReadOptions::default())
}

#[test]
fn pyarrow_polars_and_duckdb_files_read_as_their_jsonl() {
    let expected = jsonl_rows();
    assert_eq!(expected.len(), 12);
    assert_eq!(expected[6].1, "skipped:field_not_text", "{expected:?}");
    assert_eq!(expected[7].1, "", "{expected:?}");
    for name in [
        "pyarrow.parquet",
        "polars.parquet",
        "duckdb.parquet",
        "large_string.parquet",
        "string_view.parquet",
        "dictionary.parquet",
    ] {
        assert_eq!(
            entries(&fixture(name), &ReadOptions::default()),
            expected,
            "{name}"
        );
    }
}

#[test]
fn numeric_ids_are_numbers_and_rows_count_across_row_groups() {
    let reader = open(&fixture("pyarrow.parquet"), &ReadOptions::default()).unwrap();
    assert_eq!(reader.format(), neardup_io::Format::Parquet);
    let records: Vec<_> = reader.filter_map(|e| e.unwrap().into_record()).collect();
    assert_eq!(records.len(), 11);
    assert!(records.iter().all(|r| r.numeric_id));
    // Rows 11 and 12 are in the third row group (of 5, 5 and 2 rows).
    let last = records.last().unwrap();
    assert_eq!((last.id.as_deref(), last.location.record), (Some("12"), 12));
}

#[test]
fn a_dotted_path_reaches_into_a_struct() {
    let opts = ReadOptions::default()
        .with_text_field("meta.body")
        .with_id_field("meta.url")
        .with_key_field("lang");
    let reader = open(&fixture("struct.parquet"), &opts).unwrap();
    let entries: Vec<Entry> = reader.map(Result::unwrap).collect();
    assert_eq!(entries.len(), 12);
    let first = entries[0].record().unwrap();
    assert_eq!(first.id.as_deref(), Some("https://example.org/1"));
    assert!(first.text.starts_with("the quick brown fox"));
    assert_eq!(first.key.as_deref(), Some("en"));
    assert!(!first.numeric_id);
    let Entry::Skipped(null) = &entries[6] else {
        panic!("{:?}", entries[6])
    };
    assert_eq!(null.reason, SkipReason::FieldNotText("meta.body".into()));
    assert_eq!(null.id.as_deref(), Some("https://example.org/7"));
}

#[test]
fn without_an_id_column_rows_go_unnamed() {
    let opts = ReadOptions::default().with_text_field("meta.body");
    let reader = open(&fixture("struct.parquet"), &opts).unwrap();
    assert!(reader.map(Result::unwrap).all(|e| e.id().is_none()));
}

#[test]
fn a_missing_column_lists_the_columns_and_the_near_miss() {
    let opts = ReadOptions::default().with_text_field("body");
    let err = open(&fixture("struct.parquet"), &opts).unwrap_err();
    assert!(matches!(err, Error::MissingParquetColumn { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("struct.parquet: column \"body\""), "{msg}");
    assert!(
        msg.contains(r#"(its columns: "meta.url", "meta.body", "lang")"#),
        "{msg}"
    );
    assert!(msg.ends_with(r#"did you mean "meta.body"?"#), "{msg}");
    // A named id column must be there; the default `id` may be absent.
    let opts = ReadOptions::default().with_id_field("ID");
    let err = open(&fixture("pyarrow.parquet"), &opts).unwrap_err();
    assert!(err.to_string().ends_with(r#"did you mean "id"?"#), "{err}");
}

#[test]
fn a_text_column_that_is_not_a_string_names_its_type() {
    let err = open(&fixture("int_text.parquet"), &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, Error::ParquetColumnType { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("int_text.parquet: column \"text\" is int64; "),
        "{msg}"
    );
    // As an id, a number is fine.
    let opts = ReadOptions::default()
        .with_text_field("")
        .with_id_field("text");
    let ids: Vec<_> = entries(&fixture("int_text.parquet"), &opts)
        .into_iter()
        .map(|(id, _, _)| id.unwrap())
        .collect();
    assert_eq!(ids[..3], ["1", "2", "3"]);
}

#[test]
fn broken_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fixture("pyarrow.parquet")).unwrap();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "jsonl.parquet",
            b"{\"text\": \"x\"}\n".to_vec(),
            "not a Parquet file",
        ),
        (
            "cut.parquet",
            bytes[..bytes.len() / 2].to_vec(),
            "truncated Parquet file",
        ),
        ("empty.parquet", Vec::new(), "not a Parquet file"),
        (
            "footer.parquet",
            {
                // The footer's length, just before the closing magic, pointing past the start.
                let mut b = bytes.clone();
                let n = b.len();
                b[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
                b
            },
            "damaged Parquet footer",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let err = open(&path, &ReadOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Parquet { .. }), "{name}: {err:?}");
        let msg = err.to_string();
        assert!(msg.starts_with(&format!("{}: ", path.display())), "{msg}");
        assert!(msg.contains(expected), "{name}: {msg}");
    }
}

#[test]
fn damaged_data_is_an_error_naming_the_file_and_row() {
    // Zero the second half of the data pages (the footer intact): decoding fails.
    let bytes = std::fs::read(fixture("polars.parquet")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.parquet");
    let mut damaged = bytes.clone();
    let footer_len =
        u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
    let data_end = bytes.len() - 8 - footer_len as usize;
    for b in &mut damaged[data_end / 2..data_end] {
        *b = 0xff;
    }
    std::fs::write(&path, damaged).unwrap();
    let result: Result<Vec<Entry>, Error> = match open(&path, &ReadOptions::default()) {
        Ok(reader) => reader.collect(),
        Err(e) => Err(e),
    };
    let err = result.unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{}", path.display())) && msg.contains("Parquet"),
        "{msg}"
    );
    eprintln!("{msg}");
}

#[test]
fn parquet_from_standard_input_is_refused() {
    let opts = ReadOptions::default().with_format(neardup_io::Format::Parquet);
    let err = neardup_io::Reader::from_reader(std::io::empty(), "-", &opts).unwrap_err();
    assert!(matches!(err, Error::ParquetNeedsFile { .. }), "{err:?}");
    assert!(err.to_string().contains("not from standard input"), "{err}");
}

#[test]
fn a_parquet_file_without_a_known_extension_is_told_by_its_magic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("batch_aa");
    std::fs::copy(fixture("pyarrow.parquet"), &path).unwrap();
    let reader = open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(
        (reader.format(), reader.sniffed()),
        (neardup_io::Format::Parquet, true)
    );
    assert_eq!(entries(&path, &ReadOptions::default()), jsonl_rows());
    // Standard input cannot be: it is said so, not read as lines.
    let bytes = std::fs::read(&path).unwrap();
    let err =
        neardup_io::Reader::from_reader(std::io::Cursor::new(bytes), "-", &ReadOptions::default())
            .unwrap_err();
    assert!(matches!(err, Error::ParquetNeedsFile { .. }), "{err:?}");
}

#[test]
fn a_text_over_the_size_limit_is_skipped() {
    let opts = ReadOptions::default().with_max_record_bytes(69);
    let rows = entries(&fixture("pyarrow.parquet"), &opts);
    // Row 2 is 70 bytes long, row 1 69.
    assert_eq!(rows[1].1, "skipped:too_large", "{rows:?}");
    assert!(!rows[0].1.starts_with("skipped"), "{rows:?}");
}

/// Writes `rows` as Parquet with `ArrowWriter`, in row groups of `group` rows.
fn write_parquet(path: &Path, rows: &[(i64, Option<String>)], group: usize) {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0)));
    let texts: ArrayRef = Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1.clone())));
    let batch = RecordBatch::try_from_iter([("id", ids), ("text", texts)]).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// JSONL and Parquet of the same rows (nulls, empty and non-ASCII texts) read as the
    /// same records, skips and row numbers, whatever the row groups.
    #[test]
    fn jsonl_and_parquet_of_the_same_rows_read_alike(
        texts in prop::collection::vec(prop::option::weighted(0.9, "\\PC{0,12}"), 0..40),
        group in 1usize..9,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let rows: Vec<(i64, Option<String>)> = texts
            .into_iter()
            .enumerate()
            .map(|(i, t)| (i as i64 * 7 - 20, t))
            .collect();
        let jsonl = dir.path().join("rows.jsonl");
        let lines: String = rows
            .iter()
            .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string() + "\n")
            .collect();
        std::fs::write(&jsonl, lines).unwrap();
        let parquet = dir.path().join("rows.parquet");
        write_parquet(&parquet, &rows, group);
        let opts = ReadOptions::default();
        prop_assert_eq!(entries(&parquet, &opts), entries(&jsonl, &opts));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Damaged bytes anywhere in a file (its pages, its footer) are an error or skips,
    /// never a panic.
    #[test]
    fn damaged_parquet_never_panics(
        name in prop::sample::select(vec!["pyarrow.parquet", "dictionary.parquet", "polars.parquet", "struct.parquet"]),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut bytes = std::fs::read(fixture(name)).unwrap();
        let n = bytes.len();
        for (at, byte) in flips {
            bytes[at.index(n)] = byte;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("damaged.parquet");
        std::fs::write(&path, bytes).unwrap();
        let opts = if name == "struct.parquet" {
            ReadOptions::default().with_text_field("meta.body").with_id_field("meta.url")
        } else {
            ReadOptions::default()
        };
        if let Ok(reader) = open(&path, &opts) {
            for entry in reader {
                if entry.is_err() {
                    break;
                }
            }
        }
        if let Ok(mut reader) = open(&path, &opts) {
            let mut record = Record::default();
            while let Some(filled) = reader.read_into(&mut record) {
                if filled.is_err() {
                    break;
                }
            }
        }
    }
}

/// A row's id, text and key, each maybe null.
type Row = (Option<String>, Option<String>, Option<String>);

/// Every entry of `path` as `Reader::read_into` gives them into one reused record.
fn entries_read_into(path: &Path, opts: &ReadOptions) -> Vec<Entry> {
    let mut reader = open(path, opts).unwrap();
    let mut record = Record::default();
    let mut out = Vec::new();
    while let Some(filled) = reader.read_into(&mut record) {
        out.push(match filled.unwrap() {
            Filled::Record => Entry::Record(record.clone()),
            Filled::Skipped(s) => Entry::Skipped(s),
        });
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A record filled in place (its buffers reused from the row before) is the record
    /// the iterator gives: a null id, text or key after a value leaves nothing of it behind.
    #[test]
    fn records_read_into_one_record_are_the_records_read_one_by_one(
        rows in prop::collection::vec(
            (
                prop::option::weighted(0.7, "\\PC{0,6}"),
                prop::option::weighted(0.8, "\\PC{0,12}"),
                prop::option::weighted(0.6, "[a-z]{0,4}"),
            ),
            0..40,
        ),
        group in 1usize..9,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let column = |f: fn(&Row) -> &Option<String>| -> ArrayRef {
            Arc::new(StringArray::from_iter(rows.iter().map(|r| f(r).clone())))
        };
        let batch = RecordBatch::try_from_iter([
            ("id", column(|r| &r.0)),
            ("text", column(|r| &r.1)),
            ("key", column(|r| &r.2)),
        ])
        .unwrap();
        let path = dir.path().join("rows.parquet");
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(group))
            .build();
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let opts = ReadOptions::default().with_key_field("key").with_max_record_bytes(10);
        let one_by_one: Vec<Entry> = open(&path, &opts).unwrap().map(Result::unwrap).collect();
        prop_assert_eq!(one_by_one.len(), rows.len());
        prop_assert_eq!(entries_read_into(&path, &opts), one_by_one);
    }
}
