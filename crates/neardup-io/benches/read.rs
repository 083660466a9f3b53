//! Reading throughput: bytes of input per second, every record taken out of the reader
//! (text, id, location; raw bytes only where the dedup writer would need them).
//!
//! Inputs are the shipped PyPI package summaries (`testdata/pypi-summaries.jsonl`, short
//! records of ~95 bytes), repeated to ~10 MB and held in memory, so the figure is the
//! parser's and not the disk's. `cargo bench -p neardup-io --bench read`.

use std::io::Cursor;
use std::sync::Arc;

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

criterion_group!(benches, read);
criterion_main!(benches);
