//! The brute-force baseline of the containment benchmark (`bench/containment`): every
//! ordered pair of the first N documents of a JSONL file compared exactly, timed, so that
//! the search and the exact join can be set against what comparing every pair costs.
//!
//! ```text
//! containment_brute CORPUS.jsonl N THRESHOLD
//! ```
//!
//! Prints `documents N pairs P compared C seconds S` (P the pairs contained at the
//! threshold, C the ordered pairs compared).

use std::io::{BufRead, BufReader};
use std::time::Instant;

use neardup::candidates::is_smaller;
use neardup::verify::meets_threshold;
use neardup::{Config, Pipeline};
use rayon::prelude::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: containment_brute CORPUS.jsonl N THRESHOLD");
        std::process::exit(2);
    }
    let n: usize = args[2].parse().expect("N");
    let t: f64 = args[3].parse().expect("THRESHOLD");
    let file = std::fs::File::open(&args[1]).expect("corpus");
    let texts: Vec<String> = BufReader::new(file)
        .lines()
        .take(n)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l.expect("line")).expect("JSON");
            v["text"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    let pipeline =
        Pipeline::new(Config::builder().threshold(t).build().expect("config")).expect("pipeline");
    let shingled = pipeline.shingle(&texts).expect("shingle");
    let corpus = shingled.corpus();
    let start = Instant::now();
    let docs = texts.len() as u32;
    let (pairs, compared): (u64, u64) = (0..docs)
        .into_par_iter()
        .map(|a| {
            let x = corpus.set(a);
            let (mut pairs, mut compared) = (0u64, 0u64);
            for b in 0..docs {
                let y = corpus.set(b);
                if a == b || x.is_empty() || !is_smaller(x.len(), a, y.len(), b) {
                    continue;
                }
                compared += 1;
                let shared = neardup::verify::intersection_size(x, y);
                pairs += u64::from(meets_threshold(shared as f64 / x.len() as f64, t));
            }
            (pairs, compared)
        })
        .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
    println!(
        "documents {} pairs {pairs} compared {compared} seconds {:.3}",
        texts.len(),
        start.elapsed().as_secs_f64()
    );
}
