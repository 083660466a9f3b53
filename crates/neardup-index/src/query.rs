//! Queries as data: what a query asks (its [`Kind`], a threshold, a top) and what it gets
//! back (an [`Answer`]). Front ends pass a kind through by name and write the answer as
//! it serializes, so a new kind is a variant here and its operation in the server's
//! description, not a branch in each front end.

use neardup::sketch::DocSet;
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::error::Result;
use crate::searcher::{Neighbour, Searcher};

/// What a query answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// The indexed documents similar to the query, most similar first.
    #[default]
    Neighbours,
}

impl Kind {
    /// Every kind, as front ends list them.
    pub const ALL: &'static [Kind] = &[Kind::Neighbours];

    /// How front ends name it, and the field of its answer in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Neighbours => "neighbours",
        }
    }

    /// The kind of this name, if any.
    pub fn named(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The names of every kind, for help texts and error messages.
    pub fn names() -> impl Iterator<Item = &'static str> {
        Kind::ALL.iter().map(|k| k.name())
    }
}

/// What a query asks for beyond the document: its kind, a threshold at or above the
/// index's, and how many neighbours at most.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Query {
    pub(crate) kind: Kind,
    pub(crate) threshold: Option<f64>,
    pub(crate) top: Option<usize>,
}

impl Query {
    /// Every neighbour at the index's threshold.
    pub fn new() -> Self {
        Query::default()
    }

    /// What the query answers ([`Kind::Neighbours`] unless said).
    pub fn kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self
    }

    /// Only neighbours at least this similar; it must be at least the index's threshold
    /// (the band plan finds nothing below it reliably).
    pub fn threshold(mut self, t: f64) -> Self {
        self.threshold = Some(t);
        self
    }

    /// At most `k` neighbours, the most similar.
    pub fn top(mut self, k: usize) -> Self {
        self.top = Some(k);
        self
    }
}

/// The answer to one query, of its query's kind. As JSON it is one field named by the
/// kind: `{"neighbours": [...]}`.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer<'a> {
    /// [`Kind::Neighbours`].
    Neighbours(Vec<Neighbour<'a>>),
}

impl Answer<'_> {
    /// The kind it answers.
    pub fn kind(&self) -> Kind {
        match self {
            Answer::Neighbours(_) => Kind::Neighbours,
        }
    }

    /// True if the query met any indexed document.
    pub fn found_any(&self) -> bool {
        match self {
            Answer::Neighbours(n) => !n.is_empty(),
        }
    }
}

impl Serialize for Answer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        let name = self.kind().name();
        match self {
            Answer::Neighbours(n) => map.serialize_entry(name, n)?,
        }
        map.end()
    }
}

impl Searcher {
    /// The answer to `query` about `text`.
    pub fn answer(&self, text: &str, query: &Query) -> Result<Answer<'_>> {
        self.answer_doc(&self.pipeline().shingle_doc(text), query)
    }

    /// The same for a document already shingled by [`Searcher::pipeline`].
    pub fn answer_doc(&self, doc: &DocSet, query: &Query) -> Result<Answer<'_>> {
        match query.kind {
            Kind::Neighbours => self.query_doc(doc, query).map(Answer::Neighbours),
        }
    }

    /// The answer to `query` about the live document `id` (itself left out); `None` if
    /// no live document has that id.
    pub fn answer_id(&self, id: &str, query: &Query) -> Result<Option<Answer<'_>>> {
        match query.kind {
            Kind::Neighbours => Ok(self.query_id(id, query)?.map(Answer::Neighbours)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_named_both_ways_and_answers_are_one_field_named_by_the_kind() {
        for &k in Kind::ALL {
            assert_eq!(Kind::named(k.name()), Some(k));
        }
        assert_eq!(Kind::named("neighbors"), None);
        let json = serde_json::to_string(&Answer::Neighbours(Vec::new())).unwrap();
        assert_eq!(json, r#"{"neighbours":[]}"#);
    }
}
