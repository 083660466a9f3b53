//! One-document query latency through the library, warm: opens an index, queries each
//! document of a JSONL file (`{"id", "text"}`) one at a time on one thread, and prints
//! `{"open_ms", "queries", "p50_us", "p99_us", "max_us", "found"}`.
//!
//! ```text
//! cargo run --release -p neardup-index --example latency -- INDEX QUERIES.jsonl
//! ```

use std::time::Instant;

use neardup_index::{Query, Searcher};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, index, queries] = &args[..] else {
        return Err("usage: latency INDEX QUERIES.jsonl".into());
    };
    let texts: Vec<String> = std::fs::read_to_string(queries)?
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l)?;
            Ok(v["text"].as_str().unwrap_or_default().to_string())
        })
        .collect::<Result<_, serde_json::Error>>()?;
    let start = Instant::now();
    let searcher = Searcher::open(index)?;
    let open_ms = start.elapsed().as_secs_f64() * 1e3;
    let query = Query::new();
    // Warm: one pass untimed brings the pages the queries touch into memory.
    for t in &texts {
        searcher.query(t, &query)?;
    }
    let mut micros = Vec::with_capacity(texts.len());
    let mut found = 0usize;
    let mut heavy = (0usize, 0f64);
    for t in &texts {
        let start = Instant::now();
        let n = searcher.query(t, &query)?;
        let us = start.elapsed().as_secs_f64() * 1e6;
        micros.push(us);
        found += n.len();
        if n.len() > 100 {
            heavy = (heavy.0 + 1, heavy.1 + us);
        }
    }
    // What shingling and sketching the queries alone costs, for comparison.
    let start = Instant::now();
    for t in &texts {
        let doc = searcher.pipeline().shingle_doc(t);
        std::hint::black_box(searcher.pipeline().sketch_doc_keys(&doc));
    }
    let prepare_us = start.elapsed().as_secs_f64() * 1e6 / texts.len().max(1) as f64;
    let mean = micros.iter().sum::<f64>() / micros.len().max(1) as f64;
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| {
        micros
            .get(((micros.len() as f64 * q) as usize).min(micros.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "{}",
        serde_json::json!({
            "open_ms": (open_ms * 100.0).round() / 100.0,
            "queries": texts.len(),
            "p50_us": (at(0.5) * 10.0).round() / 10.0,
            "p99_us": (at(0.99) * 10.0).round() / 10.0,
            "max_us": (at(1.0) * 10.0).round() / 10.0,
            "found": found,
            "mean_us": (mean * 10.0).round() / 10.0,
            "prepare_mean_us": (prepare_us * 10.0).round() / 10.0,
            "heavy_queries": heavy.0,
            "heavy_share": (heavy.1 / micros.iter().sum::<f64>() * 1000.0).round() / 1000.0,
        })
    );
    Ok(())
}
