//! The engines every case runs against, and what they answer.

mod documents;
mod index;
mod server;

use neardup::cluster::cluster;
use neardup::{Cluster, Config, Measure, Pair, Pipeline, Quiet, Similarity};
use neardup::{SketchKind, Verification};

use crate::case::Case;

pub use index::contained_by_index;

/// A way of finding the pairs and clusters of a corpus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Engine {
    /// LSH over one-permutation hashing (classic below 64 shingles), exact verification.
    LshOph,
    /// LSH over the classic sketch throughout, exact verification.
    LshClassic,
    /// LSH, deciding on the signature far from the threshold, exactly near it.
    Triage,
    /// The exact set-similarity join: no sketch, no misses.
    Exact,
    /// One document at a time, as an index or a cluster job meets them: copies by
    /// fingerprint, candidates by a band key shared in their family, verdicts by
    /// `verify_docs`, clusters by `neardup::cluster::cluster` over the verified pairs.
    Documents,
    /// The persistent index (`neardup-index`): the corpus added in two batches, each
    /// document queried against it; clusters by `neardup::cluster::cluster` over those pairs.
    Index,
    /// The index behind `neardup-server`, over HTTP on a loopback port: the corpus posted
    /// in two batches, each document queried; Jaccard as the API gives it (6 decimals).
    Server,
}

/// Every engine, in the order a case runs them.
pub const ENGINES: [Engine; 7] = [
    Engine::LshOph,
    Engine::LshClassic,
    Engine::Triage,
    Engine::Exact,
    Engine::Documents,
    Engine::Index,
    Engine::Server,
];

/// What an engine answered.
pub struct Answer {
    pub pairs: Vec<Pair>,
    pub clusters: Vec<Cluster>,
}

impl Engine {
    /// The engine's name in a case's `engines` list.
    pub fn name(self) -> &'static str {
        match self {
            Engine::LshOph => "lsh-oph",
            Engine::LshClassic => "lsh-classic",
            Engine::Triage => "triage",
            Engine::Exact => "exact",
            Engine::Documents => "documents",
            Engine::Index => "index",
            Engine::Server => "server",
        }
    }

    /// Whether the engine may miss a pair (the S-curve of its bands).
    pub fn is_lsh(self) -> bool {
        self != Engine::Exact
    }

    /// The engines a case runs: its list (Spark's is run by the Python suite), else all.
    pub fn for_case(case: &Case) -> Vec<Engine> {
        match &case.engines {
            None => ENGINES.to_vec(),
            Some(names) => names
                .iter()
                .filter(|n| n.as_str() != "spark")
                .map(|n| {
                    *ENGINES
                        .iter()
                        .find(|e| e.name() == n)
                        .unwrap_or_else(|| panic!("unknown engine {n:?}"))
                })
                .collect(),
        }
    }

    /// The case's configuration as this engine runs it (Jaccard).
    pub fn config(self, case: &Case) -> Config {
        let sketch = match self {
            Engine::LshClassic => SketchKind::Classic,
            _ => SketchKind::OnePermutation,
        };
        let verification = match self {
            Engine::Triage => Verification::Triage,
            _ => Verification::Exact,
        };
        case.config(sketch, verification, Measure::Jaccard)
    }

    /// The engine's pairs and clusters of the case's documents.
    pub fn run(self, case: &Case) -> Answer {
        let pipeline = Pipeline::new(self.config(case)).expect("pipeline");
        let docs = &case.docs;
        match self {
            Engine::Documents => documents::one_at_a_time(&pipeline, docs),
            Engine::Index => index::indexed(&pipeline, docs),
            Engine::Server => server::served(&pipeline, docs),
            Engine::Exact => {
                let corpus = pipeline.shingle(docs).unwrap();
                let (pairs, _) = pipeline.exact_pairs(&corpus, &mut Quiet).unwrap();
                let (clusters, _) = pipeline.exact_clusters(&corpus, &mut Quiet).unwrap();
                Answer { pairs, clusters }
            }
            Engine::LshOph | Engine::LshClassic | Engine::Triage => {
                let corpus = pipeline.sketch_texts(docs).unwrap();
                let (pairs, _) = pipeline.pairs(&corpus, &mut Quiet);
                let (clusters, _) = pipeline.clusters(&corpus, &mut Quiet);
                Answer { pairs, clusters }
            }
        }
    }
}

/// The pairs (a < b) from each document's neighbours, and clusters by `neardup::cluster::cluster`
/// over them: how the engines that answer one query at a time (index, server) are judged.
fn from_neighbours(
    pipeline: &Pipeline,
    texts: &[String],
    neighbours: impl Fn(&str) -> Vec<(u32, Similarity)>,
) -> Answer {
    let mut pairs = Vec::new();
    for (a, text) in texts.iter().enumerate() {
        for (b, similarity) in neighbours(text) {
            if b > a as u32 {
                pairs.push(Pair {
                    a: a as u32,
                    b,
                    similarity,
                });
            }
        }
    }
    pairs.sort_by_key(|p| (p.a, p.b));
    let by_pair: std::collections::HashMap<(u32, u32), Similarity> =
        pairs.iter().map(|p| ((p.a, p.b), p.similarity)).collect();
    let links: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
    let clusters = cluster(
        texts.len(),
        &links,
        pipeline.config().keep(),
        |d| texts[d as usize].len(),
        |kept, doc| by_pair.get(&(kept.min(doc), kept.max(doc))).copied(),
    )
    .expect("a small corpus");
    Answer { pairs, clusters }
}
