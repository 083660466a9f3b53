//! Answers as JSON, one shape for every front end (the CLI's lines, the server's bodies):
//! a [`Neighbour`] is `{"id", "jaccard"}` (plus `"estimate"` and `"truncated": true` for a
//! document longer than the shingle cap; `"containment"` and `"inside"` (`"query"` or
//! `"document"`) in a containment index), an [`OutcomeJson`] what `add_unique` did.

use neardup::Similarity;
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::searcher::{Neighbour, Searcher};
use crate::writer::Outcome;

/// Similarities are given to 6 decimals.
fn round(x: Option<f64>) -> Option<f64> {
    x.map(|v| (v * 1e6).round() / 1e6)
}

/// `"jaccard"` (null when it was not computed), `"estimate"` when there is one,
/// `"truncated": true` for a pair judged on whole-document sketches.
fn similarity_fields<M: SerializeMap>(map: &mut M, s: &Similarity) -> Result<(), M::Error> {
    map.serialize_entry("jaccard", &round(s.jaccard))?;
    if s.estimate.is_some() {
        map.serialize_entry("estimate", &round(s.estimate))?;
    }
    if s.truncated {
        map.serialize_entry("truncated", &true)?;
    }
    Ok(())
}

impl Serialize for Neighbour<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("id", self.id)?;
        if let Some(c) = &self.containment {
            map.serialize_entry("containment", &round(Some(c.value)))?;
            map.serialize_entry("inside", c.inside.name())?;
        }
        similarity_fields(&mut map, &self.similarity)?;
        map.end()
    }
}

/// What [`IndexWriter::add_unique`](crate::IndexWriter::add_unique) did with the document
/// `id`: `{"id", "added": true}` (with `"replaced": true` if it replaced an indexed
/// document), `{"id", "added": false, "duplicate_of", "of_indexed", "jaccard"}`, or
/// `{"id", "added": false, "skipped": "empty"}`, or `{"id", "added": false, "skipped":
/// "superseded"}` when a later document of the batch has the same id.
/// The id is any serializable value (a front end may echo its input's own id, a number
/// as a number).
#[derive(Clone, Copy, Debug)]
pub struct OutcomeJson<'a, I: Serialize + ?Sized = str> {
    /// The document's id.
    pub id: &'a I,
    /// What was done with it.
    pub outcome: &'a Outcome,
}

impl<I: Serialize + ?Sized> Serialize for OutcomeJson<'_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("id", self.id)?;
        match self.outcome {
            Outcome::Added { replaced } => {
                map.serialize_entry("added", &true)?;
                if *replaced {
                    map.serialize_entry("replaced", &true)?;
                }
            }
            Outcome::Duplicate {
                of,
                similarity,
                indexed,
            } => {
                map.serialize_entry("added", &false)?;
                map.serialize_entry("duplicate_of", of)?;
                map.serialize_entry("of_indexed", indexed)?;
                similarity_fields(&mut map, similarity)?;
            }
            Outcome::Empty => {
                map.serialize_entry("added", &false)?;
                map.serialize_entry("skipped", "empty")?;
            }
            Outcome::Superseded => {
                map.serialize_entry("added", &false)?;
                map.serialize_entry("skipped", "superseded")?;
            }
        }
        map.end()
    }
}

/// An index's counts, sizes, format and parameters:
/// `{"documents", "deleted", "segments", "sets", "bytes", "set_bytes",
/// "bytes_per_document", "index_bytes_per_document", "generation", "format", "parameters"}`, and
/// `"common_tokens"` in a containment index.
#[derive(Clone, Copy, Debug)]
pub struct StatsJson<'a>(pub &'a Searcher);

impl Serialize for StatsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let st = self.0.stats();
        let tenth = |x: f64| (x * 10.0).round() / 10.0;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("documents", &st.documents)?;
        map.serialize_entry("deleted", &st.deleted)?;
        map.serialize_entry("segments", &st.segments)?;
        map.serialize_entry("sets", &st.sets)?;
        map.serialize_entry("bytes", &st.bytes)?;
        map.serialize_entry("set_bytes", &st.set_bytes)?;
        map.serialize_entry("bytes_per_document", &tenth(st.bytes_per_document()))?;
        map.serialize_entry(
            "index_bytes_per_document",
            &tenth(st.index_bytes_per_document()),
        )?;
        map.serialize_entry("generation", &st.generation)?;
        map.serialize_entry("format", &st.format)?;
        if let Some(n) = st.common_tokens {
            map.serialize_entry("common_tokens", &n)?;
        }
        map.serialize_entry("parameters", self.0.params())?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::searcher::{Containment, Inside};

    #[test]
    fn the_shapes_of_answers() {
        let sim = Similarity {
            jaccard: Some(0.123_456_789),
            estimate: None,
            truncated: false,
            hamming: None,
        };
        let n = Neighbour {
            id: "a",
            similarity: sim,
            containment: None,
        };
        assert_eq!(
            serde_json::to_string(&n).unwrap(),
            r#"{"id":"a","jaccard":0.123457}"#
        );
        let long = Neighbour {
            id: "b",
            similarity: Similarity {
                jaccard: None,
                estimate: Some(0.9),
                truncated: true,
                hamming: None,
            },
            containment: None,
        };
        assert_eq!(
            serde_json::to_string(&long).unwrap(),
            r#"{"id":"b","jaccard":null,"estimate":0.9,"truncated":true}"#
        );
        let inside = Neighbour {
            id: "c",
            similarity: sim,
            containment: Some(Containment {
                value: 0.987_654_321,
                inside: Inside::Document,
            }),
        };
        assert_eq!(
            serde_json::to_string(&inside).unwrap(),
            r#"{"id":"c","containment":0.987654,"inside":"document","jaccard":0.123457}"#
        );
        let json = |o: &Outcome| {
            serde_json::to_string(&OutcomeJson {
                id: "x",
                outcome: o,
            })
            .unwrap()
        };
        assert_eq!(
            json(&Outcome::Added { replaced: false }),
            r#"{"id":"x","added":true}"#
        );
        assert_eq!(
            json(&Outcome::Added { replaced: true }),
            r#"{"id":"x","added":true,"replaced":true}"#
        );
        assert_eq!(
            json(&Outcome::Duplicate {
                of: "y".into(),
                similarity: sim,
                indexed: false
            }),
            r#"{"id":"x","added":false,"duplicate_of":"y","of_indexed":false,"jaccard":0.123457}"#
        );
        assert_eq!(
            json(&Outcome::Empty),
            r#"{"id":"x","added":false,"skipped":"empty"}"#
        );
    }
}
