//! Reads each file given with `neardup_io::open` (the format from its name, as the CLI
//! does), on one thread, and prints one JSON line per file: records, bytes of text and
//! ids, and MB of text per second, the best and the median of `--passes N` readings (default
//! 5: on a shared machine the best is the least disturbed). Every record is taken out of
//! the reader as a run takes it (`Reader::read_into`, one record's buffers reused); nothing else is done with it, so the figure is the
//! reader's alone.

use std::path::Path;
use std::time::Instant;

use neardup_io::{Filled, ReadOptions, Record};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut passes = 5usize;
    if let Some(i) = args.iter().position(|a| a == "--passes") {
        passes = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| fail("--passes takes a number above 0"));
        args.drain(i..i + 2);
    }
    if args.is_empty() {
        fail("usage: readrate [--passes N] FILE...");
    }
    for file in args {
        let mut rates = Vec::with_capacity(passes);
        let mut counts = Counts::default();
        for _ in 0..passes {
            let start = Instant::now();
            counts = read(&file);
            rates.push(counts.text as f64 / 1e6 / start.elapsed().as_secs_f64());
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "{{\"file\": {file:?}, \"records\": {}, \"skipped\": {}, \"text_bytes\": {}, \"id_bytes\": {}, \"passes\": {passes}, \"text_mb_per_s\": {:.1}, \"median_mb_per_s\": {:.1}}}",
            counts.records,
            counts.skipped,
            counts.text,
            counts.ids,
            rates[passes - 1],
            rates[passes / 2]
        );
    }
}

#[derive(Default)]
struct Counts {
    records: u64,
    skipped: u64,
    text: u64,
    ids: u64,
}

/// One pass over a file: every record taken out of the reader.
fn read(file: &str) -> Counts {
    let opts = ReadOptions {
        keep_raw: false,
        ..ReadOptions::default()
    };
    let mut reader =
        neardup_io::open(Path::new(file), &opts).unwrap_or_else(|e| fail(&format!("{file}: {e}")));
    let mut c = Counts::default();
    // As a run reads (`Documents`): each record written into one `Record`.
    let mut r = Record::default();
    while let Some(filled) = reader.read_into(&mut r) {
        match filled {
            Ok(Filled::Record) => {
                c.records += 1;
                c.text += r.text.len() as u64;
                c.ids += r.id.as_ref().map_or(0, |id| id.len() as u64);
            }
            Ok(Filled::Skipped(_)) => c.skipped += 1,
            Err(e) => fail(&format!("{file}: {e}")),
        }
    }
    c
}

fn fail(message: &str) -> ! {
    eprintln!("readrate: {message}");
    std::process::exit(1)
}
