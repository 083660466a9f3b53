//! Deduplicating against a reference corpus (`Held::set_reference`): the reference is
//! never removed, every removed document is similar to the one it names (a reference
//! document or an earlier kept one), and the answer is the same in memory and spilled,
//! on one thread and several, on every engine that clusters.

mod common;

use common::Collect;
use neardup::{
    Clusters, Config, Engine, Error, Goal, Held, KeepPolicy, Method, Outcome, Pair, Pipeline,
    Quiet, RunPlan, SketchKind, SpillOptions,
};

/// Texts of random words; one in three is a near-copy of an earlier text, so
/// near-copies cross the reference's boundary both ways.
fn corpus(seed: u64, n: usize) -> Vec<String> {
    common::near_copies(seed, n, 3)
}

fn pipeline(sketch: SketchKind, keep: KeepPolicy) -> Pipeline {
    let config = Config::builder()
        .threshold(0.7)
        .sketch(sketch)
        .keep(keep)
        .build()
        .unwrap();
    Pipeline::new(config).unwrap()
}

/// The texts held (spilled to `spill` if given), the first `reference` of them the
/// reference.
fn held<'p>(
    pipeline: &'p Pipeline,
    texts: &[String],
    reference: u32,
    spill: Option<&std::path::Path>,
) -> Held<'p> {
    let mut intake = pipeline
        .intake(spill.map(|d| SpillOptions::new(d).memory(1 << 20)))
        .unwrap();
    for batch in texts.chunks(41) {
        intake.add(batch).unwrap();
    }
    let mut held = intake.finish().unwrap();
    held.set_reference(reference).unwrap();
    assert_eq!(held.reference(), reference);
    held
}

/// Runs the seam; the outcome and what the sink got.
fn run(
    pipeline: &Pipeline,
    held: Held<'_>,
    method: Method,
    goal: Goal,
) -> (Engine, Outcome, Collect) {
    let plan = RunPlan::choose(pipeline, &held, method, goal).unwrap();
    let mut ready = pipeline.prepare(held, &plan, &mut Quiet).unwrap();
    let mut sink = Collect::default();
    let (outcome, _) = pipeline.run(&mut ready, &mut Quiet, &mut sink).unwrap();
    sink.pairs.sort_by_key(|p| (p.a, p.b));
    (plan.engine(), outcome, sink)
}

fn clusters(
    pipeline: &Pipeline,
    texts: &[String],
    reference: u32,
    method: Method,
    spill: Option<&std::path::Path>,
) -> (Engine, Clusters) {
    let held = held(pipeline, texts, reference, spill);
    let (engine, outcome, _) = run(pipeline, held, method, Goal::Clusters);
    let Outcome::Clusters(c) = outcome else {
        panic!("clusters asked")
    };
    (engine, c)
}

/// The exact verdict on two texts.
fn similar(pipeline: &Pipeline, a: &str, b: &str) -> bool {
    let (x, y) = (pipeline.shingle_doc(a), pipeline.shingle_doc(b));
    pipeline.verify_docs(&x, &y, None).passed().is_some()
}

/// What must hold of clusters against a reference of `reference` documents.
fn check(pipeline: &Pipeline, texts: &[String], reference: u32, c: &Clusters) {
    assert_eq!(c.reference(), reference);
    let mut removed = 0;
    for doc in 0..texts.len() as u32 {
        let Some((of, _)) = c.duplicate_of(doc) else {
            continue;
        };
        removed += 1;
        assert!(doc >= reference, "reference document {doc} removed");
        assert!(
            similar(pipeline, &texts[doc as usize], &texts[of as usize]),
            "{doc} is not similar to {of}, which it is removed as a duplicate of"
        );
        // The document named is a reference one, or a kept one before it in keep order.
        assert!(
            of < reference || c.duplicate_of(of).is_none(),
            "{of} is removed"
        );
    }
    assert_eq!(removed, c.removed());
    for cluster in c.iter() {
        assert!(
            cluster.duplicates().all(|d| d.doc >= reference),
            "a reference document listed as removed"
        );
        assert!(cluster.len() >= 2);
    }
}

#[test]
fn the_reference_is_never_removed_and_every_removed_document_names_a_similar_one() {
    let texts = corpus(11, 600);
    let reference = 250;
    for (sketch, method) in [
        (SketchKind::OnePermutation, Method::Lsh),
        (SketchKind::Classic, Method::Lsh),
        (SketchKind::SimHash, Method::Lsh),
        (SketchKind::OnePermutation, Method::Exact),
    ] {
        for keep in [KeepPolicy::First, KeepPolicy::Last, KeepPolicy::Longest] {
            let p = pipeline(sketch, keep);
            let (_, c) = clusters(&p, &texts, reference, method, None);
            check(&p, &texts, reference, &c);
            assert!(
                c.removed() > 50,
                "{sketch:?} {method:?}: a corpus with copies"
            );
            // Some are removed as duplicates of the reference, some of new documents.
            let of_reference = (reference..texts.len() as u32)
                .filter(|&d| c.duplicate_of(d).is_some_and(|(of, _)| of < reference))
                .count();
            assert!(of_reference > 10 && of_reference < c.removed());
        }
    }
}

/// With the exact join every similar pair is found, so the answer is exactly the
/// incremental one: a new document is removed if and only if it is similar to a
/// reference document or to an earlier kept new one (keep first).
#[test]
fn the_exact_join_removes_exactly_what_one_at_a_time_would() {
    let texts = corpus(5, 240);
    let reference = 100u32;
    let p = pipeline(SketchKind::OnePermutation, KeepPolicy::First);
    let (engine, c) = clusters(&p, &texts, reference, Method::Exact, None);
    assert_eq!(engine, Engine::ExactJoin);
    let mut heads: Vec<usize> = (0..reference as usize).collect();
    for doc in reference as usize..texts.len() {
        let of_reference = heads
            .iter()
            .filter(|&&h| h < reference as usize)
            .any(|&h| similar(&p, &texts[h], &texts[doc]));
        let of_new = heads
            .iter()
            .filter(|&&h| h >= reference as usize)
            .any(|&h| similar(&p, &texts[h], &texts[doc]));
        let named = c.duplicate_of(doc as u32).map(|(of, _)| of as usize);
        match named {
            Some(of) if of_reference => assert!(of < reference as usize, "{doc}: {of}"),
            Some(of) => assert!(of_new && of >= reference as usize, "{doc}: {of}"),
            None => {
                assert!(!of_reference && !of_new, "{doc} kept");
                heads.push(doc);
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Any corpus, reference size, keep policy and engine: the reference is never removed
    /// and every removed document names a similar reference or kept document.
    #[test]
    fn any_reference_keeps_the_rules(
        seed in 0u64..1_000,
        n in 2usize..120,
        cut in 0.0f64..=1.0,
        keep in 0usize..4,
        exact in proptest::bool::ANY,
    ) {
        let texts = corpus(seed, n);
        let reference = (cut * n as f64) as u32;
        let p = pipeline(SketchKind::OnePermutation, KeepPolicy::ALL[keep]);
        let method = if exact { Method::Exact } else { Method::Lsh };
        let (_, c) = clusters(&p, &texts, reference, method, None);
        check(&p, &texts, reference, &c);
    }
}

#[test]
fn spilled_runs_and_thread_counts_give_the_same_clusters() {
    let texts = corpus(3, 500);
    let dir = tempfile::tempdir().unwrap();
    for keep in [KeepPolicy::First, KeepPolicy::Shortest] {
        let p = pipeline(SketchKind::OnePermutation, keep);
        let (_, memory) = clusters(&p, &texts, 200, Method::Lsh, None);
        let (engine, spilled) = clusters(&p, &texts, 200, Method::Auto, Some(dir.path()));
        assert_eq!(engine, Engine::Spilled);
        assert_eq!(spilled.to_vec(), memory.to_vec(), "{keep:?}");
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| clusters(&p, &texts, 200, Method::Lsh, None).1);
        assert_eq!(one.to_vec(), memory.to_vec(), "{keep:?} one thread");
        check(&p, &texts, 200, &memory);
    }
}

#[test]
fn pairs_of_two_reference_documents_are_left_out() {
    let texts = corpus(9, 400);
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline(SketchKind::OnePermutation, KeepPolicy::First);
    for (method, spill) in [
        (Method::Lsh, None),
        (Method::Exact, None),
        (Method::Auto, Some(dir.path())),
    ] {
        let (_, whole, all) = run(&p, held(&p, &texts, 0, spill), method, Goal::Pairs);
        let (_, outcome, got) = run(&p, held(&p, &texts, 150, spill), method, Goal::Pairs);
        let want: Vec<Pair> = all.pairs.iter().filter(|p| p.b >= 150).copied().collect();
        assert!(
            want.len() < all.pairs.len(),
            "{method:?}: pairs inside the reference"
        );
        assert_eq!(got.pairs, want, "{method:?}");
        let (Outcome::Pairs(totals), Outcome::Pairs(whole)) = (outcome, whole) else {
            panic!("pairs asked")
        };
        assert_eq!(totals.pairs, want.len() as u64);
        assert!(totals.documents < whole.documents);
        let mut docs: Vec<u32> = want.iter().flat_map(|p| [p.a, p.b]).collect();
        docs.sort_unstable();
        docs.dedup();
        assert_eq!(totals.documents, docs.len() as u64);
    }
}

#[test]
fn drop_all_removes_every_new_member_of_a_cluster() {
    let texts = corpus(13, 400);
    let p = pipeline(SketchKind::OnePermutation, KeepPolicy::First);
    for reference in [0, 120] {
        let (_, kept_one) = clusters(&p, &texts, reference, Method::Lsh, None);
        let mut c = kept_one.clone();
        c.drop_all();
        let new_heads = c.iter().filter(|k| k.kept() >= reference).count();
        assert!(new_heads > 5);
        assert_eq!(c.removed(), kept_one.removed() + new_heads);
        for cluster in c.iter() {
            let head = cluster.kept();
            if head < reference {
                assert_eq!(c.duplicate_of(head), None);
                continue;
            }
            let (of, _) = c.duplicate_of(head).expect("a kept document is removed");
            assert_eq!(of, cluster.duplicates().next().unwrap().doc);
            assert!(similar(&p, &texts[head as usize], &texts[of as usize]));
        }
    }
}

#[test]
fn a_reference_past_the_corpus_is_an_error() {
    let p = pipeline(SketchKind::OnePermutation, KeepPolicy::First);
    let texts = corpus(1, 10);
    let mut held = held(&p, &texts, 10, None);
    assert_eq!(
        held.set_reference(11),
        Err(Error::Reference {
            reference: 11,
            documents: 10
        })
    );
}

/// Containment pairs (both engines) leave out the pairs inside the reference too.
#[test]
fn containment_pairs_inside_the_reference_are_left_out() {
    let texts = common::planted_fragments(3, 12);
    let config = Config::builder()
        .threshold(0.7)
        .measure(neardup::Measure::Containment)
        .build()
        .unwrap();
    let p = Pipeline::new(config).unwrap();
    for method in [Method::Exact, Method::Auto] {
        let (_, _, all) = run(&p, held(&p, &texts, 0, None), method, Goal::Pairs);
        // References that hold some pairs whole and not others.
        let mut ends: Vec<u32> = all.contained.iter().map(|c| c.a.max(c.b) + 1).collect();
        ends.sort_unstable();
        for reference in [ends[ends.len() / 3], ends[ends.len() / 2]] {
            let (_, outcome, got) = run(&p, held(&p, &texts, reference, None), method, Goal::Pairs);
            let want: Vec<_> = (all.contained.iter())
                .filter(|c| c.a.max(c.b) >= reference)
                .copied()
                .collect();
            assert!(want.len() < all.contained.len(), "{method:?} {reference}");
            assert!(!want.is_empty(), "{method:?} {reference}");
            assert_eq!(got.contained, want, "{method:?} {reference}");
            let Outcome::Pairs(totals) = outcome else {
                panic!("pairs asked")
            };
            assert_eq!(totals.pairs, want.len() as u64);
        }
    }
}
