//! Throughput of each stage on real text: the shipped PyPI package summaries (short
//! documents, ~95 bytes) and long documents made of 40 consecutive summaries (~3.8 KB).
//!
//! `cargo bench -p neardup --bench stages`; criterion reports bytes of text per second.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use neardup::bench_internals::{bucket_key, BandIndex};
use neardup::candidates::BandPlan;
use neardup::sketch::OnePermutation;
use neardup::sketch::{ClassicMinHash, Sketch};
use neardup::verify::jaccard;
use neardup::{ShingleKind, Shingler};

mod common;
use common::summaries;

fn corpora() -> Vec<(&'static str, Vec<String>)> {
    let short = summaries();
    let long = short.chunks(40).map(|c| c.join(" ")).collect();
    vec![("short", short), ("long", long)]
}

/// The ASCII summaries only (4,710 of 5,000): the fast paths alone.
fn ascii_short() -> Vec<String> {
    summaries().into_iter().filter(|t| t.is_ascii()).collect()
}

/// The ASCII summaries joined 40 at a time.
fn ascii_long() -> Vec<String> {
    ascii_short().chunks(40).map(|c| c.join(" ")).collect()
}

fn bytes(texts: &[String]) -> u64 {
    texts.iter().map(|t| t.len() as u64).sum()
}

fn shingle(c: &mut Criterion) {
    let char5 = Shingler::default();
    let word3 = Shingler::new(ShingleKind::Word(3));
    let mut g = c.benchmark_group("shingle");
    let mut all = corpora();
    all.push(("ascii_short", ascii_short()));
    all.push(("ascii_long", ascii_long()));
    for (name, texts) in all {
        g.throughput(Throughput::Bytes(bytes(&texts)));
        // The shingling alone (normalized text to hashes, in text order, with repeats).
        g.bench_function(BenchmarkId::new("char5_hashes", name), |b| {
            let mut buf = Vec::new();
            b.iter(|| {
                let mut n = 0;
                for t in &texts {
                    buf.clear();
                    char5.hashes_into(t, &mut buf);
                    n += buf.len();
                }
                n
            })
        });
        // The set: shingled, sorted and deduplicated.
        for (id, sh) in [("char5_set", char5), ("word3_set", word3)] {
            g.bench_function(BenchmarkId::new(id, name), |b| {
                let mut buf = Vec::new();
                b.iter(|| {
                    let mut n = 0;
                    for t in &texts {
                        sh.set_into(t, &mut buf);
                        n += buf.len();
                    }
                    n
                })
            });
        }
    }
    g.finish();
}

fn sketch(c: &mut Criterion) {
    let sh = Shingler::default();
    let mut g = c.benchmark_group("sketch");
    for (name, texts) in corpora() {
        let sets: Vec<Vec<u64>> = texts.iter().map(|t| sh.shingle_set(t)).collect();
        g.throughput(Throughput::Bytes(bytes(&texts)));
        let sketches: [(&str, Box<dyn Sketch>); 2] = [
            ("oph", Box::new(OnePermutation::new(128, 1).unwrap())),
            ("classic", Box::new(ClassicMinHash::new(128, 1).unwrap())),
        ];
        for (kind, s) in sketches {
            g.bench_function(BenchmarkId::new(kind, name), |b| {
                let mut out = vec![0u64; 128];
                b.iter(|| {
                    for set in &sets {
                        s.sketch_into(set, &mut out);
                    }
                    out[0]
                })
            });
        }
    }
    g.finish();
}

fn group_and_verify(c: &mut Criterion) {
    let sh = Shingler::default();
    let (_, texts) = corpora().remove(0);
    let sets: Vec<Vec<u64>> = texts.iter().map(|t| sh.shingle_set(t)).collect();
    let oph = OnePermutation::new(128, 1).unwrap();
    let plan = BandPlan::new(16, 8, 128).unwrap();
    let mut wide = vec![0u64; sets.len() * 16];
    for (set, out) in sets.iter().zip(wide.chunks_mut(16)) {
        plan.band_keys_into(&oph.sketch(set), out);
    }
    let keys: Vec<_> = wide.into_iter().map(bucket_key).collect();
    let members: Vec<u32> = (0..sets.len() as u32).collect();
    let per_band: Vec<&[u32]> = vec![&members; 16];
    let mut g = c.benchmark_group("group");
    g.throughput(Throughput::Elements(sets.len() as u64));
    g.bench_function("sort_16_bands_links", |b| {
        b.iter(|| {
            BandIndex::build(16, 16, keys.clone(), &members, &per_band)
                .links(|_, _, _| true)
                .len()
        })
    });
    g.finish();

    let links = BandIndex::build(16, 16, keys, &members, &per_band).links(|_, _, _| true);
    let mut g = c.benchmark_group("verify");
    g.throughput(Throughput::Elements(links.len() as u64));
    g.bench_function("exact_jaccard_links", |b| {
        b.iter(|| {
            links
                .iter()
                .filter(|&&(a, b)| jaccard(&sets[a as usize], &sets[b as usize]) >= 0.8)
                .count()
        })
    });
    g.finish();
}

/// Candidate pairs of long documents crowding below t = 0.8, as on templated pages: 4,000
/// shingles each, Jaccard spread over 0.55..0.85.
fn long_pairs() -> Vec<(Vec<u64>, Vec<u64>)> {
    let mut rng = neardup::sketch::SplitMix64::new(17);
    (0..200)
        .map(|i| {
            let j = 0.55 + 0.3 * (i as f64 / 199.0);
            let size = 4_000usize;
            let shared = (size as f64 * 2.0 * j / (1.0 + j)).round() as usize;
            let mut common: Vec<u64> = (0..shared).map(|_| rng.next_u64()).collect();
            let mut a = common.clone();
            a.extend((shared..size).map(|_| rng.next_u64()));
            common.extend((shared..size).map(|_| rng.next_u64()));
            a.sort_unstable();
            common.sort_unstable();
            (a, common)
        })
        .collect()
}

/// The merge with a branch per step, as verification was before: the reference the
/// branchless merge is measured against.
fn branchy_intersection(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

fn verify_long(c: &mut Criterion) {
    let pairs = long_pairs();
    let mut g = c.benchmark_group("verify_long");
    g.throughput(Throughput::Elements(pairs.len() as u64));
    let passing =
        |f: &dyn Fn(&[u64], &[u64]) -> bool| pairs.iter().filter(|(a, b)| f(a, b)).count();
    g.bench_function("branchy_merge", |b| {
        b.iter(|| {
            passing(&|a, b| {
                let n = branchy_intersection(a, b);
                neardup::verify::jaccard_from_counts(n, a.len(), b.len()) >= 0.8
            })
        })
    });
    g.bench_function("branchless_merge", |b| {
        b.iter(|| passing(&|a, b| jaccard(a, b) >= 0.8))
    });
    g.bench_function("early_exit", |b| {
        b.iter(|| passing(&|a, b| neardup::verify::jaccard_at_least(a, b, 0.8).is_some()))
    });
    g.finish();
}

criterion_group!(benches, shingle, sketch, group_and_verify, verify_long);
criterion_main!(benches);
