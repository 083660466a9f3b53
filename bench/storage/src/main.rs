//! The persistent index's data as plain tables in redb, measured the way `bench/index`
//! measures the segments: a bulk load, adds in batches of 10,000 with a durable commit
//! each, size per document, one-document lookups, open time, and whether a second process
//! can read while the first has the database open. Synthetic documents shaped like PyPI
//! summaries: 40 shingles, 16 band keys, 5 % copies.

use redb::{Database, TableDefinition};
use std::time::Instant;

const IDS: TableDefinition<&str, u32> = TableDefinition::new("ids");
const SETS: TableDefinition<u32, &[u8]> = TableDefinition::new("sets");
const BANDS: TableDefinition<(u8, u64, u32), ()> = TableDefinition::new("bands");
const N: u32 = 741_708;
const BANDS_N: u8 = 16;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
}

fn doc(d: u32) -> (String, Vec<u8>, Vec<u64>) {
    let mut r = Rng(u64::from(d) * 7 + 1);
    let mut set: Vec<u64> = (0..40).map(|_| r.next()).collect();
    set.sort_unstable();
    let bytes: Vec<u8> = set.iter().flat_map(|x| x.to_le_bytes()).collect();
    // ~5% of documents share the band keys of an earlier one (copies).
    let src = if d % 20 == 0 && d > 0 { d / 2 } else { d };
    let mut k = Rng(u64::from(src) * 13 + 5);
    let keys = (0..BANDS_N).map(|_| k.next()).collect();
    (format!("pkg-{d:07}"), bytes, keys)
}

fn insert(db: &Database, range: std::ops::Range<u32>) {
    let w = db.begin_write().unwrap();
    {
        let (mut ids, mut sets, mut bands) = (
            w.open_table(IDS).unwrap(),
            w.open_table(SETS).unwrap(),
            w.open_table(BANDS).unwrap(),
        );
        for d in range {
            let (id, set, keys) = doc(d);
            ids.insert(id.as_str(), d).unwrap();
            sets.insert(d, set.as_slice()).unwrap();
            for (b, k) in keys.iter().enumerate() {
                bands.insert((b as u8, *k, d), ()).unwrap();
            }
        }
    }
    w.commit().unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::env::temp_dir().join("neardup-storage-tables");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("index.redb");
    let path = path.as_path();
    if args.len() > 1 && args[1] == "child" {
        match Database::open(path) {
            Ok(_) => println!("second process: opened"),
            Err(e) => println!("second process: {e}"),
        }
        return;
    }
    let _ = std::fs::remove_file(path);
    let db = Database::create(path).unwrap();
    let t = Instant::now();
    insert(&db, 0..N);
    let bulk = t.elapsed().as_secs_f64();
    println!(
        "bulk {N} docs in {bulk:.1} s = {:.0} docs/s",
        f64::from(N) / bulk
    );
    let t = Instant::now();
    for b in 0..10 {
        insert(&db, N + b * 10_000..N + (b + 1) * 10_000);
    }
    let add = t.elapsed().as_secs_f64();
    println!(
        "add 100000 in batches of 10000 (durable commits): {add:.2} s = {:.0} docs/s",
        100_000.0 / add
    );
    let size = std::fs::metadata(path).unwrap().len();
    let total = N + 100_000;
    println!(
        "size {size} bytes = {:.0} per doc; sets raw 320 per doc -> {:.0} per doc beyond the sets",
        size as f64 / f64::from(total),
        size as f64 / f64::from(total) - 320.0
    );
    let mut lat = Vec::new();
    for q in 0..10_000u32 {
        let d = (q * 74) % N;
        let (_, _, keys) = doc(d);
        let t = Instant::now();
        let r = db.begin_read().unwrap();
        let (bands, sets) = (r.open_table(BANDS).unwrap(), r.open_table(SETS).unwrap());
        let mut found = 0usize;
        for (b, k) in keys.iter().enumerate() {
            for e in bands
                .range((b as u8, *k, 0)..=(b as u8, *k, u32::MAX))
                .unwrap()
            {
                let (key, _) = e.unwrap();
                let doc_id = key.value().2;
                let s = sets.get(doc_id).unwrap().unwrap();
                found += s.value().len();
            }
        }
        std::hint::black_box(found);
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "query p50 {:.1} us, p99 {:.1} us",
        lat[lat.len() / 2],
        lat[lat.len() * 99 / 100]
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("child")
        .output()
        .unwrap();
    print!("{}", String::from_utf8_lossy(&out.stdout));
    drop(db);
    let t = Instant::now();
    let db = Database::open(path).unwrap();
    println!("open {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
    drop(db);
    let _ = std::fs::remove_file(path);
}
