//! Containment runs against their definition: the exact containment join gives exactly the
//! brute-force pairs (|A ∩ B| / |A| ≥ t, A the smaller), and the LSH Ensemble-style search
//! finds a subset of them, each verified, with the recall its plan promises.

mod common;

use common::planted_fragments as planted;
use neardup::candidates::is_smaller;
use neardup::verify::{intersection_size, meets_threshold};
use neardup::{Config, Pipeline, Quiet, ShingleKind, SketchKind};

fn pipeline(t: f64) -> Pipeline {
    let config = Config::builder()
        .shingle(ShingleKind::Word(2))
        .threshold(t)
        .build()
        .unwrap();
    Pipeline::new(config).unwrap()
}

/// Every pair (a, b) of documents with A the smaller and contained at `t`.
fn brute(p: &Pipeline, texts: &[String], t: f64) -> Vec<(u32, u32)> {
    let sets: Vec<Vec<u64>> = texts
        .iter()
        .map(|x| p.config().shingler().shingle_set(x))
        .collect();
    let mut out = Vec::new();
    for (a, x) in sets.iter().enumerate() {
        for (b, y) in sets.iter().enumerate() {
            if a == b || x.is_empty() || !is_smaller(x.len(), a as u32, y.len(), b as u32) {
                continue;
            }
            if meets_threshold(intersection_size(x, y) as f64 / x.len() as f64, t) {
                out.push((a as u32, b as u32));
            }
        }
    }
    out
}

#[test]
fn the_exact_join_is_the_brute_force_and_the_search_a_verified_subset() {
    let texts = planted(3, 120);
    for t in [0.5, 0.8, 0.95] {
        let p = pipeline(t);
        let shingled = p.shingle(&texts).unwrap();
        let (exact, _) = p.exact_containment_pairs(&shingled, &mut Quiet);
        let truth: Vec<(u32, u32)> = exact.iter().map(|c| (c.a, c.b)).collect();
        assert_eq!(truth, brute(&p, &texts, t), "t = {t}");
        let (found, stats) = p.containment_pairs(&shingled, &mut Quiet).unwrap();
        for c in &found {
            // Precision 1: each pair is in the exact join's, with the same figures.
            let at = truth.binary_search(&(c.a, c.b));
            assert!(at.is_ok(), "t = {t}: ({}, {}) is no pair", c.a, c.b);
            assert_eq!(*c, exact[at.unwrap()]);
        }
        let recall = found.len() as f64 / truth.len() as f64;
        assert!(recall >= 0.95, "t = {t}: recall {recall}");
        assert!(stats.candidates >= stats.verified);
        // Copies contain each other, the lower number first.
        assert!(found
            .iter()
            .any(|c| c.containment == 1.0 && c.jaccard == 1.0));
    }
}

#[test]
fn fragments_are_found_where_jaccard_would_not_find_them() {
    let texts = planted(4, 60);
    let p = pipeline(0.8);
    let shingled = p.shingle(&texts).unwrap();
    let (found, _) = p.containment_pairs(&shingled, &mut Quiet).unwrap();
    let far: Vec<_> = found.iter().filter(|c| c.jaccard < 0.2).collect();
    assert!(far.len() >= 30, "{} fragments at Jaccard < 0.2", far.len());
}

#[test]
fn the_same_pairs_for_one_and_many_threads() {
    let texts = planted(5, 80);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let p = pipeline(0.7);
                let shingled = p.shingle(&texts).unwrap();
                (
                    p.containment_pairs(&shingled, &mut Quiet).unwrap().0,
                    p.exact_containment_pairs(&shingled, &mut Quiet).0,
                )
            })
    };
    assert_eq!(run(1), run(4));
}

#[test]
fn simhash_has_no_containment() {
    let config = Config::builder()
        .sketch(SketchKind::SimHash)
        .build()
        .unwrap();
    let p = Pipeline::new(config).unwrap();
    let shingled = p.shingle(&["a text", "another text"]).unwrap();
    assert!(p.containment_pairs(&shingled, &mut Quiet).is_err());
}
