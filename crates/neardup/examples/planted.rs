//! Corpora of any size with planted near-duplicates and their exact truth, for the
//! scale benchmark (`bench/scale`).
//!
//! ```text
//! planted generate N SEED CORPUS.jsonl TRUTH.tsv   # N documents
//! planted recall TRUTH.tsv PAIRS.tsv               # recall of `neardup pairs --output-format tsv`
//! ```
//!
//! Each document is 10 to 24 words drawn from 200,000 made-up words (about 110 bytes,
//! like a package summary), so two independent documents share next to no 5-character
//! shingle. One document in ten is instead a near-copy of one of the 100,000 before it,
//! with one letter changed (two, one time in three). The truth lists every planted pair with its exact Jaccard
//! similarity under neardup's default shingling (char:5, NFKC), computed with the
//! library itself; `recall` counts the planted pairs at or above the threshold that a
//! pairs file contains.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};

use neardup::sketch::SplitMix64;
use neardup::verify::jaccard;
use neardup::{Config, Pipeline};

const WORDS: u64 = 200_000;

/// Word `i`: its base-64 digits as consonant-vowel syllables, so every word is distinct
/// (three syllables for most of the 200,000).
fn word(mut i: u64, out: &mut String) {
    const CONSONANTS: &[u8; 16] = b"bdfghjklmnprstvz";
    const VOWELS: &[u8; 4] = b"aeio";
    loop {
        let digit = (i % 64) as usize;
        out.push(CONSONANTS[digit / 4] as char);
        out.push(VOWELS[digit % 4] as char);
        i /= 64;
        if i == 0 {
            break;
        }
    }
}

fn text(rng: &mut SplitMix64) -> String {
    let len = 10 + rng.next_u64() % 15;
    let mut s = String::new();
    for i in 0..len {
        if i > 0 {
            s.push(' ');
        }
        word(rng.next_u64() % WORDS, &mut s);
    }
    s
}

/// A near-copy: one letter changed (two, one time in three), as a re-post with a typo
/// fixed or a number changed would be.
fn near_copy(source: &str, rng: &mut SplitMix64) -> String {
    let mut bytes = source.as_bytes().to_vec();
    let edits = if rng.next_u64().is_multiple_of(3) {
        2
    } else {
        1
    };
    for _ in 0..edits {
        let at = (rng.next_u64() % bytes.len() as u64) as usize;
        if bytes[at] != b' ' {
            let old = bytes[at];
            while bytes[at] == old {
                bytes[at] = b'a' + (rng.next_u64() % 26) as u8;
            }
        }
    }
    String::from_utf8(bytes).expect("ASCII")
}

fn generate(n: u64, seed: u64, corpus: &str, truth: &str) -> std::io::Result<()> {
    let mut rng = SplitMix64::new(seed);
    let mut out = BufWriter::with_capacity(1 << 20, File::create(corpus)?);
    let mut planted: Vec<(u64, u64)> = Vec::new();
    // Texts are kept only as long as they may still be copied: a near-copy picks one of
    // the last 100,000 documents, so memory stays bounded.
    const WINDOW: u64 = 100_000;
    let mut recent: Vec<String> = Vec::with_capacity(WINDOW as usize);
    for doc in 0..n {
        let text = if doc > 0 && rng.next_u64().is_multiple_of(10) {
            let back = 1 + rng.next_u64() % doc.min(WINDOW);
            let source = doc - back;
            planted.push((source, doc));
            near_copy(&recent[(source % WINDOW) as usize], &mut rng)
        } else {
            text(&mut rng)
        };
        writeln!(out, "{{\"id\":\"d{doc}\",\"text\":\"{text}\"}}")?;
        if recent.len() < WINDOW as usize {
            recent.push(text);
        } else {
            recent[(doc % WINDOW) as usize] = text;
        }
    }
    out.flush()?;
    drop(recent);
    // The truth: each planted pair's exact Jaccard, from the texts read back.
    let pipeline = Pipeline::new(Config::builder().build().expect("default config"))
        .expect("default pipeline");
    let texts = read_texts(corpus, &planted)?;
    let mut out = BufWriter::new(File::create(truth)?);
    writeln!(out, "a\tb\tjaccard")?;
    for &(a, b) in &planted {
        let j = jaccard(
            pipeline.shingle_doc(&texts[&a]).set(),
            pipeline.shingle_doc(&texts[&b]).set(),
        );
        writeln!(out, "d{a}\td{b}\t{j}")?;
    }
    out.flush()?;
    eprintln!("{n} documents, {} planted pairs", planted.len());
    Ok(())
}

/// The texts of the documents in `pairs`, read back from the corpus.
fn read_texts(
    corpus: &str,
    pairs: &[(u64, u64)],
) -> std::io::Result<std::collections::HashMap<u64, String>> {
    let wanted: HashSet<u64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let mut texts = std::collections::HashMap::with_capacity(wanted.len());
    for (doc, line) in BufReader::new(File::open(corpus)?).lines().enumerate() {
        if wanted.contains(&(doc as u64)) {
            let line = line?;
            let start = line.find(",\"text\":\"").expect("generated line") + 9;
            texts.insert(doc as u64, line[start..line.len() - 2].to_string());
        }
    }
    Ok(texts)
}

fn recall(truth: &str, pairs: &str, threshold: f64) -> std::io::Result<()> {
    let mut wanted: HashSet<(String, String)> = HashSet::new();
    let mut below = 0u64;
    for line in BufReader::new(File::open(truth)?).lines().skip(1) {
        let line = line?;
        let f: Vec<&str> = line.split('\t').collect();
        let j: f64 = f[2].parse().expect("a similarity");
        if j >= threshold {
            wanted.insert((f[0].to_string(), f[1].to_string()));
        } else {
            below += 1;
        }
    }
    let planted = wanted.len();
    let mut found = 0u64;
    let mut reported = 0u64;
    for line in BufReader::new(File::open(pairs)?).lines().skip(1) {
        let line = line?;
        let mut f = line.split('\t');
        let (a, b) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
        reported += 1;
        if wanted.remove(&(a.to_string(), b.to_string()))
            || wanted.remove(&(b.to_string(), a.to_string()))
        {
            found += 1;
        }
    }
    println!(
        "planted pairs at or above {threshold}: {planted} (and {below} below); found {found}; \
         recall {:.5}; pairs reported {reported}",
        found as f64 / planted.max(1) as f64
    );
    Ok(())
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: planted generate N SEED CORPUS.jsonl TRUTH.tsv | planted recall TRUTH.tsv PAIRS.tsv [THRESHOLD]";
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["generate", n, seed, corpus, truth] => generate(
            n.parse().expect(usage),
            seed.parse().expect(usage),
            corpus,
            truth,
        ),
        ["recall", truth, pairs] => recall(truth, pairs, 0.8),
        ["recall", truth, pairs, t] => recall(truth, pairs, t.parse().expect(usage)),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
