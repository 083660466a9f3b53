//! SimHash runs against their definition: every pair of documents whose fingerprints are
//! within K bits (and, verified, whose Jaccard is ≥ t) is reported, and nothing else.

mod common;

use common::Rng;
use neardup::candidates::{hamming, simhash};
use neardup::verify::jaccard;
use neardup::{Config, Pipeline, Quiet, ShingleKind, Shingler, SketchKind, Verification};

/// Texts in families: a base of random words and copies with a few words changed, so
/// that fingerprint distances spread from 0 to far past K.
fn families(seed: u64, bases: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let word = |rng: &mut Rng| format!("w{}", rng.below(400));
    let mut texts = Vec::new();
    for _ in 0..bases {
        let len = 20 + rng.below(60) as usize;
        let base: Vec<String> = (0..len).map(|_| word(&mut rng)).collect();
        texts.push(base.join(" "));
        for _ in 0..rng.below(5) {
            let mut copy = base.clone();
            for _ in 0..rng.below(6) {
                let i = rng.below(copy.len() as u64) as usize;
                copy[i] = word(&mut rng);
            }
            texts.push(copy.join(" "));
        }
    }
    texts
}

fn pipeline(k: u32, t: f64, verification: Verification) -> Pipeline {
    let config = Config::builder()
        .shingle(ShingleKind::Word(2))
        .sketch(SketchKind::SimHash)
        .hamming(k)
        .threshold(t)
        .verification(verification)
        .build()
        .unwrap();
    Pipeline::new(config).unwrap()
}

/// Every pair `(a, b, distance)` a brute-force comparison finds: fingerprints within
/// `k` and, if `t` is given, Jaccard ≥ t.
fn brute(texts: &[String], k: u32, t: Option<f64>) -> Vec<(u32, u32, u32)> {
    let p = pipeline(k, t.unwrap_or(0.5), Verification::Exact);
    let corpus = p.shingle(texts).unwrap();
    let c = corpus.corpus();
    let mut out = Vec::new();
    for a in 0..c.len() as u32 {
        for b in a + 1..c.len() as u32 {
            let (Some(fa), Some(fb)) = (c.simhash(a), c.simhash(b)) else {
                continue;
            };
            if !c.has_shingles(a) || !c.has_shingles(b) {
                continue;
            }
            let d = hamming(fa, fb);
            let similar = t.is_none_or(|t| jaccard(c.set(a), c.set(b)) >= t);
            if d <= k && similar {
                out.push((a, b, d));
            }
        }
    }
    out
}

#[test]
fn verified_pairs_are_exactly_those_within_k_and_t() {
    let texts = families(11, 150);
    for (k, t) in [(3, 0.5), (6, 0.3), (10, 0.5), (0, 0.9)] {
        let p = pipeline(k, t, Verification::Exact);
        let corpus = p.sketch(p.shingle(&texts).unwrap(), &mut Quiet);
        let (pairs, stats) = p.pairs(&corpus, &mut Quiet);
        let got: Vec<(u32, u32, u32)> = pairs
            .iter()
            .map(|x| (x.a, x.b, x.similarity.hamming.unwrap()))
            .collect();
        let want = brute(&texts, k, Some(t));
        assert!(!want.is_empty(), "k={k} t={t}: the corpus must have pairs");
        assert_eq!(got, want, "k={k} t={t}");
        for x in &pairs {
            assert!(x.similarity.jaccard.unwrap() >= t);
        }
        assert!(stats.candidates >= stats.verified);
    }
}

#[test]
fn unverified_pairs_are_every_pair_within_k() {
    let texts = families(12, 120);
    for k in [2, 5] {
        let p = pipeline(k, 0.8, Verification::None);
        let corpus = p.sketch(p.shingle(&texts).unwrap(), &mut Quiet);
        let (pairs, _) = p.pairs(&corpus, &mut Quiet);
        let got: Vec<(u32, u32, u32)> = pairs
            .iter()
            .map(|x| (x.a, x.b, x.similarity.hamming.unwrap()))
            .collect();
        assert_eq!(got, brute(&texts, k, None), "k={k}");
        assert!(pairs.iter().all(|x| x.similarity.jaccard.is_none()));
    }
}

#[test]
fn clusters_hold_only_members_close_to_the_kept_document() {
    let texts = families(13, 150);
    for verification in [Verification::Exact, Verification::None] {
        let p = pipeline(4, 0.5, verification);
        let shingled = p.shingle(&texts).unwrap();
        let c = shingled.corpus().clone();
        let corpus = p.sketch(shingled, &mut Quiet);
        let (clusters, _) = p.clusters(&corpus, &mut Quiet);
        assert!(!clusters.is_empty());
        for cl in &clusters {
            for d in &cl.duplicates {
                let distance = c.hamming(cl.kept, d.doc).unwrap();
                assert!(distance <= 4);
                assert_eq!(d.similarity.hamming, Some(distance));
                if verification == Verification::Exact {
                    assert!(jaccard(c.set(cl.kept), c.set(d.doc)) >= 0.5);
                }
            }
        }
    }
}

#[test]
fn fingerprints_weigh_each_shingle_by_its_count() {
    let texts = ["spam spam spam eggs", "spam eggs eggs eggs", "spam eggs"];
    let p = pipeline(3, 0.5, Verification::Exact);
    let shingled = p.shingle(&texts).unwrap();
    let words = Shingler::new(ShingleKind::Word(2));
    for (d, text) in texts.iter().enumerate() {
        let mut hashes = Vec::new();
        words.hashes_into(text, &mut hashes);
        hashes.sort_unstable();
        let want = simhash(&hashes, p.config().seed());
        assert_eq!(shingled.corpus().simhash(d as u32), Some(want));
    }
}

#[test]
fn the_same_pairs_for_one_and_many_threads() {
    let texts = families(14, 200);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let p = pipeline(5, 0.4, Verification::Exact);
            let corpus = p.sketch(p.shingle(&texts).unwrap(), &mut Quiet);
            p.pairs(&corpus, &mut Quiet).0
        })
    };
    assert_eq!(run(1), run(4));
}

#[test]
fn minhash_only_settings_are_refused() {
    let base = || Config::builder().sketch(SketchKind::SimHash);
    assert!(base().bands(Some(4)).rows(Some(8)).build().is_err());
    assert!(base().verification(Verification::Triage).build().is_err());
    assert!(base().verification(Verification::Estimate).build().is_err());
    assert!(base().hamming(17).build().is_err());
    assert!(base().hamming(16).build().is_ok());
}
