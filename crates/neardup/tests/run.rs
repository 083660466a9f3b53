//! The one run seam: every engine behind `Pipeline::run` gives what its own entry point
//! gives, the plan is chosen once as documented, and misuse is an error, not a panic.

mod common;

use common::Collect;
use neardup::run::Why;
use neardup::{
    Config, Contained, Engine, Error, Goal, Held, Measure, Method, Outcome, Pair, Pipeline, Quiet,
    RunError, RunPlan, Sink, SketchKind, SpillOptions,
};

/// Texts of a few hundred random words, near-copies of some, exact copies of others,
/// and an empty one.
fn corpus(seed: u64, n: usize) -> Vec<String> {
    let mut texts = common::near_copies(seed, n, 5);
    texts.push(String::new());
    texts
}

fn pipeline(build: impl FnOnce(neardup::ConfigBuilder) -> neardup::ConfigBuilder) -> Pipeline {
    Pipeline::new(build(Config::builder().threshold(0.7)).build().unwrap()).unwrap()
}

fn held<'p>(pipeline: &'p Pipeline, texts: &[String], spill: Option<&std::path::Path>) -> Held<'p> {
    let mut intake = pipeline
        .intake(spill.map(|d| SpillOptions::new(d).memory(1 << 20)))
        .unwrap();
    for batch in texts.chunks(37) {
        intake.add(batch).unwrap();
    }
    intake.finish().unwrap()
}

/// Runs `texts` through the seam; the pairs sorted by `(a, b)`, or the clusters.
fn run(
    pipeline: &Pipeline,
    texts: &[String],
    method: Method,
    goal: Goal,
    spill: Option<&std::path::Path>,
) -> (RunPlan, Collect, Outcome) {
    let held = held(pipeline, texts, spill);
    let plan = RunPlan::choose(pipeline, &held, method, goal).unwrap();
    let mut ready = pipeline.prepare(held, &plan, &mut Quiet).unwrap();
    let mut sink = Collect::default();
    let (outcome, _) = pipeline.run(&mut ready, &mut Quiet, &mut sink).unwrap();
    sink.pairs.sort_by_key(|p| (p.a, p.b));
    (plan, sink, outcome)
}

#[test]
fn each_engine_gives_what_its_own_entry_point_gives() {
    let texts = corpus(7, 400);
    let dir = tempfile::tempdir().unwrap();
    for sketch in [
        SketchKind::OnePermutation,
        SketchKind::Classic,
        SketchKind::SimHash,
    ] {
        let p = pipeline(|b| b.sketch(sketch));
        let sketched = p.sketch_texts(&texts).unwrap();
        let (want_pairs, _) = p.pairs(&sketched, &mut Quiet);
        let (want_clusters, _) = p.cluster_set(&sketched, &mut Quiet);
        assert!(
            want_pairs.len() > 20,
            "{sketch:?}: a corpus with pairs ({})",
            want_pairs.len()
        );
        let (plan, got, _) = run(&p, &texts, Method::Lsh, Goal::Pairs, None);
        let engine = if sketch == SketchKind::SimHash {
            Engine::SimHash
        } else {
            Engine::Bands
        };
        assert_eq!(plan.engine(), engine);
        assert_eq!(got.pairs, want_pairs, "{sketch:?} pairs");
        let (_, _, outcome) = run(&p, &texts, Method::Lsh, Goal::Clusters, None);
        let Outcome::Clusters(clusters) = outcome else {
            panic!("clusters asked")
        };
        assert_eq!(
            clusters.to_vec(),
            want_clusters.to_vec(),
            "{sketch:?} clusters"
        );
        if sketch != SketchKind::SimHash {
            // Spilled to disk: the same pairs and clusters as in memory.
            let (plan, got, _) = run(&p, &texts, Method::Auto, Goal::Pairs, Some(dir.path()));
            assert_eq!(
                (plan.engine(), plan.why()),
                (Engine::Spilled, Some(&Why::Spilled))
            );
            assert_eq!(got.pairs, want_pairs, "{sketch:?} spilled pairs");
            let (_, _, outcome) = run(&p, &texts, Method::Lsh, Goal::Clusters, Some(dir.path()));
            let Outcome::Clusters(clusters) = outcome else {
                panic!("clusters asked")
            };
            assert_eq!(
                clusters.to_vec(),
                want_clusters.to_vec(),
                "{sketch:?} spilled"
            );
        }
    }
    let p = pipeline(|b| b);
    let shingled = p.shingle(&texts).unwrap();
    let (want, _) = p.exact_pairs(&shingled, &mut Quiet).unwrap();
    let (plan, got, outcome) = run(&p, &texts, Method::Exact, Goal::Pairs, None);
    assert_eq!((plan.engine(), plan.why()), (Engine::ExactJoin, None));
    assert_eq!(got.pairs, want);
    let Outcome::Pairs(totals) = outcome else {
        panic!("pairs asked")
    };
    assert_eq!(totals.pairs, want.len() as u64);
    let (want, _) = p.exact_clusters(&shingled, &mut Quiet).unwrap();
    let (_, _, outcome) = run(&p, &texts, Method::Exact, Goal::Clusters, None);
    let Outcome::Clusters(clusters) = outcome else {
        panic!("clusters asked")
    };
    assert_eq!(clusters.to_vec(), want);
}

#[test]
fn containment_runs_stream_the_pairs_of_both_engines() {
    let texts = common::planted_fragments(3, 12);
    let p = pipeline(|b| b.measure(Measure::Containment));
    let shingled = p.shingle(&texts).unwrap();
    let (want, _) = p.exact_containment_pairs(&shingled, &mut Quiet);
    assert!(!want.is_empty());
    let (plan, got, outcome) = run(&p, &texts, Method::Exact, Goal::Pairs, None);
    assert_eq!(plan.engine(), Engine::ExactContainment);
    assert_eq!(got.contained, want);
    assert!(got.pairs.is_empty());
    let Outcome::Pairs(totals) = outcome else {
        panic!("pairs asked")
    };
    let mut docs: Vec<u32> = want.iter().flat_map(|c| [c.a, c.b]).collect();
    docs.sort_unstable();
    docs.dedup();
    assert_eq!(
        (totals.pairs, totals.documents),
        (want.len() as u64, docs.len() as u64)
    );
    let (want, _) = p.containment_pairs(&shingled, &mut Quiet).unwrap();
    let (plan, got, _) = run(&p, &texts, Method::Auto, Goal::Pairs, None);
    assert_eq!(
        (plan.engine(), plan.why()),
        (Engine::Ensemble, Some(&Why::Containment))
    );
    assert_eq!(got.contained, want);
    // Clusters of containment are refused when the plan is made.
    let held = held(&p, &texts, None);
    let refused = RunPlan::choose(&p, &held, Method::Auto, Goal::Clusters).unwrap_err();
    assert!(matches!(refused, Error::NotForContainment(m) if m.contains("clusters")));
}

#[test]
fn auto_chooses_once_and_says_why() {
    let texts = corpus(11, 200);
    let p = pipeline(|b| b);
    let held = held(&p, &texts, None);
    let plan = RunPlan::choose(&p, &held, Method::Auto, Goal::Clusters).unwrap();
    let Some(Why::Predicted(choice)) = plan.why() else {
        panic!("{:?}", plan.why())
    };
    let engine = if choice.method == Method::Exact {
        Engine::ExactJoin
    } else {
        Engine::Bands
    };
    assert_eq!(plan.engine(), engine);
    let plan = RunPlan::choose_with(&p, &held, Method::Auto, Goal::Pairs, Some("--bands")).unwrap();
    assert_eq!(
        (plan.engine(), plan.why()),
        (Engine::Bands, Some(&Why::LshOption("--bands")))
    );
    let simhash = pipeline(|b| b.sketch(SketchKind::SimHash));
    let plan = RunPlan::choose(&simhash, &held, Method::Auto, Goal::Pairs).unwrap();
    assert_eq!(
        (plan.engine(), plan.why()),
        (Engine::SimHash, Some(&Why::SimHash))
    );
    // A method given needs no reason.
    let plan = RunPlan::choose(&p, &held, Method::Lsh, Goal::Pairs).unwrap();
    assert_eq!((plan.engine(), plan.why()), (Engine::Bands, None));
}

#[test]
fn a_plan_for_another_corpus_and_a_second_run_on_disk_are_errors() {
    let texts = corpus(5, 60);
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline(|b| b);
    let on_disk = held(&p, &texts, Some(dir.path()));
    let in_memory = held(&p, &texts, None);
    let disk_plan = RunPlan::choose(&p, &on_disk, Method::Auto, Goal::Pairs).unwrap();
    let memory_plan = RunPlan::choose(&p, &in_memory, Method::Lsh, Goal::Pairs).unwrap();
    assert_eq!(
        p.prepare(in_memory, &disk_plan, &mut Quiet).err(),
        Some(Error::PlanNotForCorpus(Engine::Spilled))
    );
    assert_eq!(
        p.prepare(on_disk, &memory_plan, &mut Quiet).err(),
        Some(Error::PlanNotForCorpus(Engine::Bands))
    );
    let on_disk = held(&p, &texts, Some(dir.path()));
    let mut ready = p.prepare(on_disk, &disk_plan, &mut Quiet).unwrap();
    let mut sink = Collect::default();
    p.run(&mut ready, &mut Quiet, &mut sink).unwrap();
    match p.run(&mut ready, &mut Quiet, &mut sink) {
        Err(RunError::Run(Error::CorpusSpent)) => {}
        other => panic!(
            "a second run on disk: {:?}",
            other.map(|(_, s)| s.documents)
        ),
    }
}

#[test]
fn a_sink_error_stops_the_run_and_is_returned() {
    struct Refuse(usize);
    impl Sink for Refuse {
        type Error = String;
        fn pairs(&mut self, _: &[Pair]) -> Result<(), String> {
            self.0 += 1;
            Err("disk full".into())
        }
        fn contained(&mut self, _: &[Contained]) -> Result<(), String> {
            Err("disk full".into())
        }
    }
    let texts = corpus(9, 100);
    let p = pipeline(|b| b);
    for method in [Method::Lsh, Method::Exact] {
        let held = held(&p, &texts, None);
        let plan = RunPlan::choose(&p, &held, method, Goal::Pairs).unwrap();
        let mut ready = p.prepare(held, &plan, &mut Quiet).unwrap();
        let mut sink = Refuse(0);
        match p.run(&mut ready, &mut Quiet, &mut sink) {
            Err(RunError::Sink(e)) => assert_eq!(e, "disk full"),
            other => panic!("{method:?}: {:?}", other.map(|(_, s)| s.documents)),
        }
        assert_eq!(sink.0, 1, "{method:?}: the first refusal stops the stream");
    }
}

#[test]
fn a_corpus_in_memory_runs_again_under_another_plan() {
    let texts = corpus(13, 150);
    let p = pipeline(|b| b);
    let first_held = held(&p, &texts, None);
    let exact = RunPlan::choose(&p, &first_held, Method::Exact, Goal::Pairs).unwrap();
    let mut ready = p.prepare(first_held, &exact, &mut Quiet).unwrap();
    let mut first = Collect::default();
    p.run(&mut ready, &mut Quiet, &mut first).unwrap();
    let back = ready.into_held().expect("held in memory");
    let lsh = RunPlan::choose(&p, &back, Method::Lsh, Goal::Pairs).unwrap();
    let mut ready = p.prepare(back, &lsh, &mut Quiet).unwrap();
    let mut second = Collect::default();
    p.run(&mut ready, &mut Quiet, &mut second).unwrap();
    second.pairs.sort_by_key(|p| (p.a, p.b));
    let (_, fresh, _) = run(&p, &texts, Method::Lsh, Goal::Pairs, None);
    assert_eq!(second.pairs, fresh.pairs);
    assert!(!first.pairs.is_empty());
    // A corpus on disk that has run gives nothing back to run again.
    let dir = tempfile::tempdir().unwrap();
    let on_disk = held(&p, &texts, Some(dir.path()));
    let plan = RunPlan::choose(&p, &on_disk, Method::Auto, Goal::Pairs).unwrap();
    let mut ready = p.prepare(on_disk, &plan, &mut Quiet).unwrap();
    p.run(&mut ready, &mut Quiet, &mut Collect::default())
        .unwrap();
    assert!(ready.into_held().is_none());
}
