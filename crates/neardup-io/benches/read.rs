//! Reading throughput: bytes of input per second, every record taken out of the reader
//! (text, id, location; raw bytes only where the dedup writer would need them).
//!
//! Inputs are the shipped PyPI package summaries (`testdata/pypi-summaries.jsonl`, short
//! records of ~95 bytes), repeated to ~10 MB and held in memory, so the figure is the
//! parser's and not the disk's. `cargo bench -p neardup-io --bench read`.
//!
//! `read/compressed` reads the same JSONL gzip- and zstd-compressed (in memory, told by
//! their magic bytes), per byte of decompressed JSONL, so the two compare directly.
//! `read/parquet` reads the records as a Parquet file (zstd pages, as pyarrow writes
//! them with `compression="zstd"`; in a temporary file, which stays in the page cache),
//! per byte of *text*, the figure the 400 MB/s per core is about.

use std::io::{Cursor, Write};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use neardup_io::{Entry, Format, ReadOptions, Reader};

const REPEAT: usize = 20;

fn jsonl() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/pypi-summaries.jsonl"
    );
    let one = std::fs::read(path).expect("testdata/pypi-summaries.jsonl");
    one.repeat(REPEAT)
}

/// The same records as `ID<TAB>TEXT` lines.
fn tsv_lines(jsonl: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in jsonl.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line).expect("a JSON object");
        let text = v["text"]
            .as_str()
            .unwrap_or("")
            .replace(['\t', '\n', '\r'], " ");
        out.extend_from_slice(format!("{}\t{text}\n", v["id"].as_str().unwrap_or("")).as_bytes());
    }
    out
}

/// Reads every record; returns the text bytes seen so the work cannot be skipped.
fn read_all(data: &Arc<[u8]>, opts: &ReadOptions) -> usize {
    let reader = Reader::from_reader(Cursor::new(Arc::clone(data)), "bench", opts)
        .expect("an in-memory input opens");
    let mut n = 0;
    for entry in reader {
        match entry.expect("no read error in memory") {
            Entry::Record(r) => n += r.text.len() + r.raw.len(),
            Entry::Skipped(_) => panic!("the bench input has no bad records"),
        }
    }
    n
}

fn read(c: &mut Criterion) {
    let json = jsonl();
    let lines = tsv_lines(&json);
    let mut g = c.benchmark_group("read");
    g.sample_size(20);
    // `pairs` and `clusters` read without raw bytes; `dedup` keeps them to write back.
    let inputs = [
        ("jsonl", &json, Format::Jsonl, false),
        ("jsonl_raw", &json, Format::Jsonl, true),
        ("id_tab_text", &lines, Format::Lines, false),
    ];
    for (name, data, format, keep_raw) in inputs {
        let opts = ReadOptions {
            format: Some(format),
            keep_raw,
            ..ReadOptions::default()
        };
        g.throughput(Throughput::Bytes(data.len() as u64));
        let data: Arc<[u8]> = data.as_slice().into();
        g.bench_function(BenchmarkId::new("summaries", name), |b| {
            b.iter(|| read_all(&data, &opts))
        });
    }
    g.finish();
}

/// The records' ids and texts, in order.
fn ids_and_texts(jsonl: &[u8]) -> (Vec<String>, Vec<String>) {
    jsonl
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_slice(line).expect("a JSON object");
            let field = |k: &str| v[k].as_str().unwrap_or("").to_string();
            (field("id"), field("text"))
        })
        .unzip()
}

/// The records as a Parquet file with zstd pages.
fn parquet_file(jsonl: &[u8]) -> (tempfile::NamedTempFile, u64) {
    let (ids, texts) = ids_and_texts(jsonl);
    let text_bytes = texts.iter().map(|t| t.len() as u64).sum();
    let columns: [(&str, ArrayRef); 2] = [
        ("id", Arc::new(StringArray::from(ids))),
        ("text", Arc::new(StringArray::from(texts))),
    ];
    let batch = RecordBatch::try_from_iter(columns).expect("two string columns");
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let file = tempfile::Builder::new()
        .suffix(".parquet")
        .tempfile()
        .expect("a temporary file");
    let mut writer =
        ArrowWriter::try_new(file.reopen().expect("reopen"), batch.schema(), Some(props))
            .expect("a Parquet writer");
    writer.write(&batch).expect("written");
    writer.close().expect("closed");
    (file, text_bytes)
}

fn compressed(c: &mut Criterion) {
    let json = jsonl();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&json).expect("in memory");
    let gz = gz.finish().expect("in memory");
    let zst = zstd::encode_all(json.as_slice(), 3).expect("in memory");
    let mut g = c.benchmark_group("read/compressed");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(json.len() as u64));
    let opts = ReadOptions {
        format: Some(Format::Jsonl),
        keep_raw: false,
        ..ReadOptions::default()
    };
    for (name, data) in [("jsonl_gz", gz), ("jsonl_zst", zst)] {
        let data: Arc<[u8]> = data.into();
        g.bench_function(BenchmarkId::new("summaries", name), |b| {
            b.iter(|| read_all(&data, &opts))
        });
    }
    g.finish();
}

fn parquet(c: &mut Criterion) {
    let (file, text_bytes) = parquet_file(&jsonl());
    let mut g = c.benchmark_group("read/parquet");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(text_bytes));
    g.bench_function(BenchmarkId::new("summaries", "parquet_zstd"), |b| {
        b.iter(|| {
            let reader = neardup_io::open(file.path(), &ReadOptions::default())
                .expect("the Parquet file opens");
            let mut n = 0;
            for entry in reader {
                if let Entry::Record(r) = entry.expect("no read error") {
                    n += r.text.len();
                }
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, read, compressed, parquet);
criterion_main!(benches);
