//! The per-document building blocks as an engine: what an index or a cluster job does
//! with documents it meets one at a time.

use neardup::cluster::cluster;
use neardup::sketch::{DocSet, DocSketch};
use neardup::{Pair, Pipeline, Similarity};

use super::Answer;

/// The pairs and clusters of a corpus from the per-document building blocks alone.
pub(super) fn one_at_a_time(pipeline: &Pipeline, texts: &[String]) -> Answer {
    let docs: Vec<DocSet> = texts.iter().map(|t| pipeline.shingle_doc(t)).collect();
    let sketches: Vec<DocSketch> = docs.iter().map(|d| pipeline.sketch_doc(d)).collect();
    let identical = Similarity {
        jaccard: Some(1.0),
        estimate: None,
        truncated: false,
        hamming: None,
    };
    let similar = |a: usize, b: usize| -> Option<Similarity> {
        if docs[a].fingerprint().is_some() && docs[a].fingerprint() == docs[b].fingerprint() {
            return Some(identical);
        }
        let sketches = (&sketches[a], &sketches[b]);
        pipeline
            .verify_docs(&docs[a], &docs[b], Some(sketches))
            .passed()
    };
    let mut pairs = Vec::new();
    for a in 0..docs.len() {
        for b in a + 1..docs.len() {
            let copies =
                docs[a].fingerprint().is_some() && docs[a].fingerprint() == docs[b].fingerprint();
            let collide = sketches[a].shared_family(&sketches[b]).is_some_and(|f| {
                let (x, y) = (sketches[a].band_keys(f), sketches[b].band_keys(f));
                x.unwrap().iter().zip(y.unwrap()).any(|(x, y)| x == y)
            });
            if copies || collide {
                if let Some(similarity) = similar(a, b) {
                    pairs.push(Pair {
                        a: a as u32,
                        b: b as u32,
                        similarity,
                    });
                }
            }
        }
    }
    let links: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
    let keep = pipeline.config().keep();
    let clusters = cluster(
        docs.len(),
        &links,
        keep,
        |d| texts[d as usize].len(),
        |kept, doc| similar(kept as usize, doc as usize),
    )
    .expect("a small corpus");
    Answer { pairs, clusters }
}
