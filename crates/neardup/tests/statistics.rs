//! Statistical tests of the estimators, with fixed seeds and tolerances from their variance.

mod common;

use common::{planted_sets, tokens_text, Rng};
use neardup::sketch::{ClassicMinHash, Sketch};
use neardup::text::{shingle_ids, Shingle};
use neardup::verify::{estimate, jaccard};
use neardup::{Config, Pipeline, Quiet, ShingleKind, Verification};

/// The sample mean and variance of T estimates of Jaccard `j` from `k` positions, against
/// the binomial model: its variance σ² = J(1−J)/K, the mean's standard error √(σ²/T), and
/// the relative standard error of the sample variance, √(2/(T−1) + κ/T) with κ the
/// binomial excess kurtosis (Var(s²) ≈ σ⁴ (2/(T−1) + κ/T)).
struct Spread {
    /// Sample variance over σ².
    ratio: f64,
    rel_se: f64,
}

/// The estimates' [`Spread`], once their mean is checked to be unbiased: within 4 standard
/// errors of `j` (`what` names the case in the message).
fn unbiased_spread(estimates: &[f64], j: f64, k: usize, what: &str) -> Spread {
    let t = estimates.len() as f64;
    let mean = estimates.iter().sum::<f64>() / t;
    let var = estimates.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (t - 1.0);
    let sigma2 = j * (1.0 - j) / k as f64;
    let kurtosis = (1.0 - 6.0 * j * (1.0 - j)) / (k as f64 * j * (1.0 - j));
    let se_mean = (sigma2 / t).sqrt();
    assert!(
        (mean - j).abs() <= 4.0 * se_mean,
        "{what} J={j:.3}: mean {mean:.4} is biased (4 SE = {:.4})",
        4.0 * se_mean
    );
    Spread {
        ratio: var / sigma2,
        rel_se: (2.0 / (t - 1.0) + kurtosis / t).sqrt(),
    }
}

/// The MinHash estimate of Jaccard J from K positions is Binomial(K, J)/K: unbiased with
/// variance J(1−J)/K. Over T independent seeds the mean must sit within 4 standard errors
/// of J and the sample variance within 4 standard errors of J(1−J)/K.
#[test]
fn classic_minhash_is_unbiased_with_binomial_spread() {
    const K: usize = 128;
    const T: usize = 400;
    let mut rng = Rng::new(7);
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
        let Spread { ratio, rel_se } = unbiased_spread(&estimates, j, K, "");
        assert!(
            (ratio - 1.0).abs() <= 4.0 * rel_se,
            "J={j:.3}: variance over J(1-J)/K {ratio:.3} (4 SE = {:.3})",
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
        let mut rng = Rng::new(11 + bands as u64);
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
            // The S-curve of the buckets alone, without the candidates found beyond them.
            .neighbours(false)
            .seed(3)
            .build()
            .unwrap();
        let pipeline = Pipeline::new(config).unwrap();
        let corpus = pipeline.sketch_texts(&texts).unwrap();
        let (pairs, _) = pipeline.pairs(&corpus, &mut Quiet);
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

/// Band-collision rates of planted pairs with `size` shingles each, per sketch, against
/// the S-curve. Returns (similarity, rate, expected, 4 SE) per level.
fn band_collision_rates(
    sketch: &dyn Sketch,
    size: usize,
    pairs: usize,
    seed: u64,
) -> Vec<(f64, f64, f64, f64)> {
    band_collision_rates_of(sketch, size, pairs, seed, |s| s.to_vec())
}

/// What a sketch is given of a set of hashes.
type Values = fn(&[u64]) -> Vec<u64>;

/// What a corpus's sketch hashes of a set of hashes: the spread of each 32-bit id.
fn id_values(set: &[u64]) -> Vec<u64> {
    shingle_ids(set)
        .iter()
        .map(|id| id.sketch_value())
        .collect()
}

/// As [`band_collision_rates`], each set sketched as `input` gives it.
fn band_collision_rates_of(
    sketch: &dyn Sketch,
    size: usize,
    pairs: usize,
    seed: u64,
    input: impl Fn(&[u64]) -> Vec<u64>,
) -> Vec<(f64, f64, f64, f64)> {
    let plan = neardup::candidates::BandPlan::new(16, 8, 128).unwrap();
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for &share in &[0.5, 0.7, 0.8, 0.9] {
        // J = shared / (shared + 2 own) with shared + own = size.
        let shared = ((2.0 * share * size as f64) / (1.0 + share)).round() as usize;
        let own = size - shared;
        let mut hits = 0usize;
        let mut j = 0.0;
        for _ in 0..pairs {
            let (a, b) = planted_sets(&mut rng, shared, own);
            j = jaccard(&a, &b);
            let (mut ka, mut kb) = ([0u64; 16], [0u64; 16]);
            plan.band_keys_into(&sketch.sketch(&input(&a)), &mut ka);
            plan.band_keys_into(&sketch.sketch(&input(&b)), &mut kb);
            hits += ka.iter().zip(&kb).any(|(x, y)| x == y) as usize;
        }
        let p = plan.probability(j);
        let se = (p * (1.0 - p) / pairs as f64)
            .sqrt()
            .max(0.5 / pairs as f64);
        out.push((j, hits as f64 / pairs as f64, p, 4.0 * se));
    }
    out
}

#[test]
#[ignore = "measurement: prints band-collision rates per document size"]
fn measure_band_collisions_by_size() {
    let oph = neardup::sketch::OnePermutation::new(128, 5).unwrap();
    let classic = ClassicMinHash::new(128, 5).unwrap();
    let sizes: Vec<usize> = std::env::var("SIZES")
        .map(|v| v.split(',').map(|x| x.parse().unwrap()).collect())
        .unwrap_or(vec![8, 16, 32, 48, 64, 100, 1000]);
    let pairs: usize = std::env::var("PAIRS")
        .map(|v| v.parse().unwrap())
        .unwrap_or(2000);
    for &size in &sizes {
        for (name, s) in [("oph", &oph as &dyn Sketch), ("classic", &classic)] {
            for (j, rate, p, tol) in band_collision_rates(s, size, pairs, size as u64) {
                println!(
                    "{name:8} n={size:5} J={j:.3} rate={rate:.3} S-curve={p:.3} 4SE={tol:.3} {}",
                    if (rate - p).abs() > tol { "OFF" } else { "" }
                );
            }
        }
    }
}

/// One-permutation hashing follows the S-curve for documents of 100 and 1000 shingles, and
/// the classic sketch does for 16 (where one-permutation hashing falls short and is not
/// used: see `family.rs`).
#[test]
fn band_collisions_follow_the_s_curve_for_each_sketch_where_it_is_used() {
    let oph = neardup::sketch::OnePermutation::new(128, 5).unwrap();
    let classic = ClassicMinHash::new(128, 5).unwrap();
    let cases: [(&str, &dyn Sketch, usize); 4] = [
        ("oph", &oph, 100),
        ("oph", &oph, 1000),
        ("classic", &classic, 16),
        ("classic", &classic, 40),
    ];
    // As given, and as a corpus sketches them: the 32-bit ids, spread.
    let inputs: [(&str, Values); 2] = [("hashes", <[u64]>::to_vec), ("ids", id_values)];
    for (name, sketch, size) in cases {
        for (i, (input, values)) in inputs.iter().enumerate() {
            let seed = 77 + size as u64 + i as u64;
            for (j, rate, p, tol) in band_collision_rates_of(sketch, size, 1500, seed, values) {
                assert!(
                    (rate - p).abs() <= tol,
                    "{name} on {input} n={size} J={j:.3}: band collision rate {rate:.3} vs S-curve {p:.3} (4 SE = {tol:.3})"
                );
            }
        }
    }
}

/// The estimate from the 32-bit values a corpus keeps of signatures of ids is unbiased
/// with binomial spread, for both sketches: the spread ids vary in every bit the sketches
/// use (bins from the top, kept values from the bottom). Tolerances as in
/// [`classic_minhash_is_unbiased_with_binomial_spread`].
#[test]
fn estimates_from_ids_are_unbiased_with_binomial_spread() {
    const K: usize = 128;
    const T: usize = 300;
    let mut rng = Rng::new(31);
    for &(shared, own) in &[(150, 150), (400, 50)] {
        let (a, b) = planted_sets(&mut rng, shared, own);
        let j = jaccard(&shingle_ids(&a), &shingle_ids(&b));
        let (va, vb) = (id_values(&a), id_values(&b));
        let low = |sig: Vec<u64>| sig.iter().map(|&v| v as u32).collect::<Vec<u32>>();
        for name in ["classic", "oph"] {
            let estimates: Vec<f64> = (0..T as u64)
                .map(|seed| {
                    let s: Box<dyn Sketch> = if name == "oph" {
                        Box::new(neardup::sketch::OnePermutation::new(K, seed + 500).unwrap())
                    } else {
                        Box::new(ClassicMinHash::new(K, seed + 500).unwrap())
                    };
                    estimate(&low(s.sketch(&va)), &low(s.sketch(&vb)))
                })
                .collect();
            let Spread { ratio, rel_se } = unbiased_spread(&estimates, j, K, name);
            // One-permutation bins sample without replacement: a smaller spread, never
            // a larger one.
            assert!(
                ratio <= 1.0 + 4.0 * rel_se,
                "{name} J={j:.3}: variance over J(1-J)/K {ratio:.3}"
            );
            if name == "classic" {
                assert!(
                    ratio >= 1.0 - 4.0 * rel_se,
                    "{name} J={j:.3}: variance over J(1-J)/K {ratio:.3}"
                );
            }
        }
    }
}

/// The one-permutation estimate is unbiased for sets larger than K, with spread close to
/// the classic sketch's √(J(1−J)/K) (it is slightly smaller: bins sample without
/// replacement). Tolerances: 4 standard errors of the mean; variance at most that of
/// the classic sketch plus 4 standard errors.
#[test]
fn one_permutation_estimate_is_unbiased_for_large_sets() {
    const K: usize = 128;
    const T: usize = 400;
    let mut rng = Rng::new(21);
    for &(shared, own) in &[(300, 600), (750, 375), (1200, 150)] {
        let (a, b) = planted_sets(&mut rng, shared, own);
        let j = jaccard(&a, &b);
        let estimates: Vec<f64> = (0..T as u64)
            .map(|seed| {
                let s = neardup::sketch::OnePermutation::new(K, seed + 5000).unwrap();
                estimate(&s.sketch(&a), &s.sketch(&b))
            })
            .collect();
        let Spread { ratio, rel_se } = unbiased_spread(&estimates, j, K, "");
        assert!(
            ratio <= 1.0 + 4.0 * rel_se,
            "J={j:.3}: variance over J(1-J)/K {ratio:.3}"
        );
        assert!(
            ratio >= 0.3,
            "J={j:.3}: variance over J(1-J)/K {ratio:.3} implausibly small"
        );
    }
}
