//! The persistent index (`neardup-index`) as an engine: the corpus added in two batches
//! (two segments), every document queried against it.

use std::collections::BTreeSet;

use neardup::Pipeline;
use neardup_index::{IndexWriter, Inside, Query};

use super::{from_neighbours, Answer};

/// An index of the corpus under the pipeline's configuration, added in two batches (two
/// segments), each document under its number; the directory lives as long as it is held.
fn two_segments(pipeline: &Pipeline, texts: &[String]) -> (tempfile::TempDir, IndexWriter) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut writer = IndexWriter::create(dir.path(), pipeline.config()).expect("an index");
    let docs: Vec<(String, &str)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (i.to_string(), t.as_str()))
        .collect();
    let half = docs.len() / 2;
    writer.add(&docs[..half]).expect("first batch");
    writer.add(&docs[half..]).expect("second batch");
    (dir, writer)
}

/// The pairs and clusters of a corpus from an index of it: added in two batches (two
/// segments), every document queried.
pub(super) fn indexed(pipeline: &Pipeline, texts: &[String]) -> Answer {
    let (_dir, writer) = two_segments(pipeline, texts);
    let searcher = writer.searcher();
    from_neighbours(pipeline, texts, |text| {
        let found = searcher.query(text, &Query::new()).expect("a query");
        found
            .iter()
            .map(|n| (n.id.parse().expect("a numeric id"), n.similarity))
            .collect()
    })
}

/// The containment pairs of a corpus from a containment index of it (two segments, every
/// document queried), as `(contained, containing)` in the order the batch run gives them.
pub fn contained_by_index(pipeline: &Pipeline, texts: &[String]) -> Vec<[u32; 2]> {
    let (_dir, writer) = two_segments(pipeline, texts);
    let searcher = writer.searcher();
    let size = |i: usize| pipeline.shingle_doc(&texts[i]).set().len();
    let mut pairs = BTreeSet::new();
    for (q, text) in texts.iter().enumerate() {
        for n in searcher.query(text, &Query::new()).expect("a query") {
            let d: u32 = n.id.parse().expect("a numeric id");
            let q = q as u32;
            let inside = n.containment.expect("a containment answer").inside;
            let (sq, sd) = (size(q as usize), size(d as usize));
            if sq != sd {
                let query_inside = inside == Inside::Query;
                assert_eq!(
                    query_inside,
                    sq < sd,
                    "query {q}, neighbour {d}: the smaller is inside"
                );
            }
            // The batch run's order: the smaller first, on equal sizes the lower number.
            let pair = if (sq, q) < (sd, d) { [q, d] } else { [d, q] };
            if d != q {
                pairs.insert(pair);
            }
        }
    }
    pairs.into_iter().collect()
}
