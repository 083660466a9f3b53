//! Reads each file given with `neardup_io::open` (the format from its name, as the CLI
//! does), on one thread, and prints one JSON line per file: records, bytes of text and
//! ids, seconds, and MB of text per second. Every record is taken out of the reader as a
//! run takes it; nothing else is done with it, so the figure is the reader's alone.

use std::path::Path;
use std::time::Instant;

use neardup_io::{Entry, ReadOptions};

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: readrate FILE...");
        std::process::exit(2);
    }
    let opts = ReadOptions {
        keep_raw: false,
        ..ReadOptions::default()
    };
    for file in files {
        let start = Instant::now();
        let reader = match neardup_io::open(Path::new(&file), &opts) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("readrate: {file}: {e}");
                std::process::exit(1);
            }
        };
        let (mut records, mut skipped, mut text, mut ids) = (0u64, 0u64, 0u64, 0u64);
        for entry in reader {
            match entry {
                Ok(Entry::Record(r)) => {
                    records += 1;
                    text += r.text.len() as u64;
                    ids += r.id.as_ref().map_or(0, |id| id.len() as u64);
                }
                Ok(Entry::Skipped(_)) => skipped += 1,
                Err(e) => {
                    eprintln!("readrate: {file}: {e}");
                    std::process::exit(1);
                }
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{{\"file\": {file:?}, \"records\": {records}, \"skipped\": {skipped}, \"text_bytes\": {text}, \"id_bytes\": {ids}, \"seconds\": {secs:.4}, \"text_mb_per_s\": {:.1}}}",
            text as f64 / 1e6 / secs
        );
    }
}
