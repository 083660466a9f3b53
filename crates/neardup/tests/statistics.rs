//! Statistical tests of the estimators, with fixed seeds and tolerances from their variance.

mod common;

use common::{planted_sets, tokens_text, Rng};
use neardup::sketch::{ClassicMinHash, Sketch};
use neardup::verify::{estimate, jaccard};
use neardup::{Config, Pipeline, ShingleKind, Verification};

/// The MinHash estimate of Jaccard J from K positions is Binomial(K, J)/K: unbiased with
/// variance J(1−J)/K. Over T independent seeds the mean must sit within 4 standard errors
/// of J and the sample variance within 4 standard errors of J(1−J)/K.
#[test]
fn classic_minhash_is_unbiased_with_binomial_spread() {
    const K: usize = 128;
    const T: usize = 400;
    let mut rng = Rng(7);
    // (shared, own): J = shared / (shared + 2 own).
    for &(shared, own) in &[(100, 200), (250, 125), (400, 50), (475, 12)] {
        let (a, b) = planted_sets(&mut rng, shared, own);
        let j = jaccard(&a, &b);
        let estimates: Vec<f64> = (0..T as u64)
            .map(|seed| {
                let s = ClassicMinHash::new(K, seed + 1000).unwrap();
                estimate(&s.sketch(&a), &s.sketch(&b))
            })
            .collect();
        let mean = estimates.iter().sum::<f64>() / T as f64;
        let var = estimates.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (T - 1) as f64;
        let sigma2 = j * (1.0 - j) / K as f64;
        let se_mean = (sigma2 / T as f64).sqrt();
        assert!(
            (mean - j).abs() <= 4.0 * se_mean,
            "J={j:.3}: mean {mean:.4} is biased (4 SE = {:.4})",
            4.0 * se_mean
        );
        // Var(sample variance) ≈ σ⁴ (2/(T−1) + κ/T), κ the binomial excess kurtosis.
        let kurtosis = (1.0 - 6.0 * j * (1.0 - j)) / (K as f64 * j * (1.0 - j));
        let rel_se = (2.0 / (T - 1) as f64 + kurtosis / T as f64).sqrt();
        let ratio = var / sigma2;
        assert!(
            (ratio - 1.0).abs() <= 4.0 * rel_se,
            "J={j:.3}: variance {var:.6} vs J(1-J)/K {sigma2:.6} (ratio {ratio:.3}, 4 SE = {:.3})",
            4.0 * rel_se
        );
    }
}

/// On a corpus of planted pairs at known Jaccard, the share of pairs that LSH makes
/// candidates (no verification) must follow P(s) = 1 − (1 − s^r)^b within 4 binomial
/// standard errors, for several similarity levels and two band plans.
#[test]
fn lsh_candidate_rate_follows_the_s_curve() {
    const PAIRS: usize = 300;
    for &(bands, rows) in &[(16usize, 8usize), (20, 5)] {
        let mut rng = Rng(11 + bands as u64);
        let levels = [(60, 20), (60, 15), (70, 10), (80, 10), (90, 5), (95, 2)];
        let mut texts = Vec::new();
        let mut level_of_pair = Vec::new();
        for (li, &(shared, own)) in levels.iter().enumerate() {
            for _ in 0..PAIRS {
                let (a, b) = planted_sets(&mut rng, shared, own);
                texts.push(tokens_text(&a));
                texts.push(tokens_text(&b));
                level_of_pair.push(li);
            }
        }
        let config = Config::builder()
            .shingle(ShingleKind::Word(1))
            .threshold(0.5)
            .num_perm(128)
            .bands(Some(bands))
            .rows(Some(rows))
            .verification(Verification::None)
            .seed(3)
            .build()
            .unwrap();
        let pipeline = Pipeline::new(config).unwrap();
        let prepared = pipeline.prepare(&texts);
        let (pairs, _) = pipeline.pairs(&prepared);
        let mut found = vec![0usize; levels.len()];
        for p in &pairs {
            // Planted partners are (2i, 2i+1); cross-pair collisions are not counted.
            if p.a % 2 == 0 && p.b == p.a + 1 {
                found[level_of_pair[p.a as usize / 2]] += 1;
            }
        }
        let plan = pipeline.config().plan();
        for (li, &(shared, own)) in levels.iter().enumerate() {
            let s = shared as f64 / (shared + 2 * own) as f64;
            let p = plan.probability(s);
            let rate = found[li] as f64 / PAIRS as f64;
            let se = (p * (1.0 - p) / PAIRS as f64)
                .sqrt()
                .max(0.5 / PAIRS as f64);
            assert!(
                (rate - p).abs() <= 4.0 * se,
                "{bands}x{rows} s={s:.3}: candidate rate {rate:.3} vs S-curve {p:.3} (4 SE = {:.3})",
                4.0 * se
            );
        }
    }
}
