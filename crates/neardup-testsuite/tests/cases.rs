//! Tests as data: every case in `testdata/cases/*.toml` (the format: the crate's `case`
//! module) is a small corpus with the pairs and clusters expected at its settings, run
//! against every engine. All engines must give the expected answer; a case's expected
//! pairs are also checked against brute force, so a wrong case cannot pass.

use neardup::{Config, Contained, Measure, Pipeline, Quiet, SketchKind, Verification};
use neardup_testsuite::case::{brute_force, load_cases, members, MAX_MISS};
use neardup_testsuite::engine::{contained_by_index, Engine};

#[test]
fn there_are_cases() {
    assert!(load_cases().len() >= 8, "testdata/cases lost its cases");
}

/// The cases themselves: expected pairs are the brute-force pairs, every expected pair is
/// safe from an LSH miss (unless marked), clusters cover each document at most once.
#[test]
fn every_case_is_right_about_itself() {
    for (name, case) in load_cases() {
        let truth = brute_force(&case);
        let pairs: Vec<[u32; 2]> = truth.iter().map(|&(a, b, _)| [a, b]).collect();
        assert_eq!(pairs, case.pairs, "{name}: expected pairs ≠ brute force");
        if !case.lsh_may_miss {
            let plan = Engine::LshOph.config(&case).plan();
            for &(a, b, j) in &truth {
                let miss = 1.0 - plan.probability(j);
                assert!(
                    miss < MAX_MISS,
                    "{name}: pair ({a}, {b}) at J = {j:.3} is missed with probability {miss:.2e} \
                     under {}×{}; mark the case lsh_may_miss or move the pair",
                    plan.bands(),
                    plan.rows()
                );
            }
        }
        let mut seen: Vec<u32> = case.clusters.iter().flatten().copied().collect();
        let n = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), n, "{name}: a document in two clusters");
        assert!(!case.description.is_empty(), "{name}: no description");
    }
}

#[test]
fn every_engine_agrees_with_every_case() {
    let mut checked = 0;
    for (name, case) in load_cases() {
        let truth = brute_force(&case);
        for engine in Engine::for_case(&case) {
            if engine.is_lsh() && case.lsh_may_miss {
                continue;
            }
            let what = format!("{name} [{}]", engine.name());
            let answer = engine.run(&case);
            let pairs: Vec<[u32; 2]> = answer.pairs.iter().map(|p| [p.a, p.b]).collect();
            assert_eq!(pairs, case.pairs, "{what}: pairs");
            for (p, &(_, _, j)) in answer.pairs.iter().zip(&truth) {
                // Triage may accept a pair on its signature alone, without a Jaccard.
                match p.similarity.jaccard {
                    // The API gives 6 decimals.
                    Some(x) if engine == Engine::Server => assert!(
                        (x - j).abs() <= 5e-7,
                        "{what}: Jaccard of ({}, {}): {x} for {j}",
                        p.a,
                        p.b
                    ),
                    Some(x) => assert_eq!(x, j, "{what}: Jaccard of ({}, {})", p.a, p.b),
                    None => assert_eq!(engine, Engine::Triage, "{what}: no Jaccard"),
                }
            }
            assert_eq!(members(&answer.clusters), case.clusters, "{what}: clusters");
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} case × engine runs");
}

/// Cases with a `[simhash]` table: its pairs are exactly the brute-force pairs with Jaccard
/// ≥ t and fingerprints within K bits, and a SimHash run gives them and its clusters.
#[test]
fn simhash_agrees_with_its_cases() {
    let mut checked = 0;
    for (name, case) in load_cases() {
        let Some(sim) = &case.simhash else { continue };
        let config = Config::builder()
            .shingle(case.shingle.parse().expect("shingle"))
            .normalization(case.normalize.parse().expect("normalize"))
            .threshold(case.threshold)
            .multiset(case.multiset)
            .sketch(SketchKind::SimHash)
            .hamming(sim.hamming)
            .build()
            .expect("a valid configuration");
        let pipeline = Pipeline::new(config).expect("pipeline");
        let shingled = pipeline.shingle(&case.docs).unwrap();
        let c = shingled.corpus().clone();
        let truth: Vec<[u32; 2]> = brute_force(&case)
            .into_iter()
            .filter(|&(a, b, _)| c.hamming(a, b).is_some_and(|d| d <= sim.hamming))
            .map(|(a, b, _)| [a, b])
            .collect();
        assert_eq!(truth, sim.pairs, "{name}: simhash pairs ≠ brute force");
        let corpus = pipeline.sketch(shingled, &mut Quiet);
        let (pairs, _) = pipeline.pairs(&corpus, &mut Quiet);
        let got: Vec<[u32; 2]> = pairs.iter().map(|p| [p.a, p.b]).collect();
        assert_eq!(got, sim.pairs, "{name} [simhash]: pairs");
        let (clusters, _) = pipeline.clusters(&corpus, &mut Quiet);
        assert_eq!(
            members(&clusters),
            sim.clusters,
            "{name} [simhash]: clusters"
        );
        checked += 1;
    }
    assert!(checked >= 1, "no case has a [simhash] table");
}

/// Cases with a `[containment]` table: its pairs are exactly the brute-force pairs (the
/// smaller contained in the larger at the threshold), and the exact containment join and
/// the LSH Ensemble-style search both give them, and so does a containment index of it.
#[test]
fn containment_agrees_with_its_cases() {
    let mut checked = 0;
    for (name, case) in load_cases() {
        let Some(want) = &case.containment else {
            continue;
        };
        let sets = case.sets();
        let mut truth = Vec::new();
        for (a, x) in sets.iter().enumerate() {
            for (b, y) in sets.iter().enumerate() {
                let smaller = neardup::candidates::is_smaller(x.len(), a as u32, y.len(), b as u32);
                if a == b || x.is_empty() || !smaller {
                    continue;
                }
                let c = neardup::verify::intersection_size(x, y) as f64 / x.len() as f64;
                if neardup::verify::meets_threshold(c, case.threshold) {
                    truth.push([a as u32, b as u32]);
                }
            }
        }
        truth.sort_unstable();
        assert_eq!(truth, want.pairs, "{name}: containment pairs ≠ brute force");
        let pipeline = Pipeline::new(Engine::Exact.config(&case)).expect("pipeline");
        let shingled = pipeline.shingle(&case.docs).unwrap();
        let pairs =
            |found: Vec<Contained>| -> Vec<[u32; 2]> { found.iter().map(|c| [c.a, c.b]).collect() };
        let exact = pipeline.exact_containment_pairs(&shingled, &mut Quiet).0;
        assert_eq!(pairs(exact), want.pairs, "{name} [exact containment]");
        let search = pipeline.containment_pairs(&shingled, &mut Quiet).unwrap().0;
        assert_eq!(pairs(search), want.pairs, "{name} [ensemble]");
        let config = case.config(
            SketchKind::OnePermutation,
            Verification::Exact,
            Measure::Containment,
        );
        let index = Pipeline::new(config).expect("pipeline");
        assert_eq!(
            contained_by_index(&index, &case.docs),
            want.pairs,
            "{name} [containment index]"
        );
        checked += 1;
    }
    assert!(checked >= 1, "no case has a [containment] table");
}
