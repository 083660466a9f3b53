//! Whole runs through the one seam (`Pipeline::run` into a `Sink`) on the shipped PyPI
//! package summaries: what the engines cost end to end, the candidate sources, judging,
//! streaming and clustering included. Shingling and sketching are timed too (a run
//! needs them), so each engine's figure is a whole run on 5,000 documents.
//!
//! `cargo bench -p neardup --bench run`; criterion reports documents per second.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use neardup::{
    Config, Contained, Goal, Measure, Method, Outcome, Pair, Pipeline, Quiet, RunPlan, Sink,
    SpillOptions,
};

mod common;
use common::summaries;

/// Counts what a run hands on, so that nothing is optimized away.
#[derive(Default)]
struct Count(u64);

impl Sink for Count {
    type Error = std::convert::Infallible;
    fn pairs(&mut self, chunk: &[Pair]) -> Result<(), Self::Error> {
        self.0 += chunk.iter().map(|p| u64::from(p.b - p.a)).sum::<u64>();
        Ok(())
    }
    fn contained(&mut self, chunk: &[Contained]) -> Result<(), Self::Error> {
        self.0 += chunk.iter().map(|p| u64::from(p.a ^ p.b)).sum::<u64>();
        Ok(())
    }
}

/// One whole run: intake, plan, prepare, run; what it found, as a number.
fn run(p: &Pipeline, texts: &[String], method: Method, goal: Goal, spill: bool) -> u64 {
    let spill = spill.then(|| SpillOptions::new(std::env::temp_dir()));
    let mut intake = p.intake(spill).unwrap();
    intake.add(texts).unwrap();
    let held = intake.finish().unwrap();
    let plan = RunPlan::choose(p, &held, method, goal).unwrap();
    let mut ready = p.prepare(held, &plan, &mut Quiet).unwrap();
    let mut sink = Count::default();
    let (outcome, _) = p.run(&mut ready, &mut Quiet, &mut sink).unwrap();
    match outcome {
        Outcome::Pairs(t) => sink.0 + t.pairs,
        Outcome::Clusters(c) => c.len() as u64,
        _ => 0,
    }
}

fn engines(c: &mut Criterion) {
    let texts = summaries();
    let jaccard = Pipeline::new(Config::builder().threshold(0.8).build().unwrap()).unwrap();
    let containment = Pipeline::new(
        Config::builder()
            .measure(Measure::Containment)
            .threshold(0.8)
            .build()
            .unwrap(),
    )
    .unwrap();
    let mut g = c.benchmark_group("run");
    g.throughput(Throughput::Elements(texts.len() as u64));
    g.sample_size(20);
    let cases: [(&str, &Pipeline, Method, Goal, bool); 6] = [
        ("bands_pairs", &jaccard, Method::Lsh, Goal::Pairs, false),
        (
            "bands_clusters",
            &jaccard,
            Method::Lsh,
            Goal::Clusters,
            false,
        ),
        (
            "exact_join_pairs",
            &jaccard,
            Method::Exact,
            Goal::Pairs,
            false,
        ),
        ("spilled_pairs", &jaccard, Method::Lsh, Goal::Pairs, true),
        (
            "ensemble_pairs",
            &containment,
            Method::Lsh,
            Goal::Pairs,
            false,
        ),
        (
            "containment_join_pairs",
            &containment,
            Method::Exact,
            Goal::Pairs,
            false,
        ),
    ];
    for (name, p, method, goal, spill) in cases {
        // A run that finds nothing would measure nothing.
        assert!(
            run(p, &texts, method, goal, spill) > 0,
            "{name} found nothing"
        );
        g.bench_function(name, |b| {
            b.iter(|| black_box(run(p, black_box(&texts), method, goal, spill)))
        });
    }
    g.finish();
}

criterion_group!(benches, engines);
criterion_main!(benches);
