//! Documents' ids: as the user sees them ([`DocId`]), and the users' own ids held back to
//! back ([`UserIds`]).

use serde::Serialize;

/// A document's id as the user sees it: theirs, or its line/record number.
///
/// In JSON output an id keeps the type it had: a user's id is written as given (a JSON
/// number in the input stays a number, with its source text, e.g. `8.50`; every other
/// id is a string), and a line or record number is a number. So an output line can be
/// joined back to the input on the id field without conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocId {
    /// A 1-based line or record number (one input without ids).
    Number(u64),
    /// The user's id, or `source:number` when several inputs are numbered.
    Text(String),
    /// The user's id, a JSON number in the input: its source text.
    JsonNumber(String),
}

impl std::fmt::Display for DocId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DocId::Number(n) => write!(f, "{n}"),
            DocId::Text(t) | DocId::JsonNumber(t) => f.write_str(t),
        }
    }
}

impl Serialize for DocId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            DocId::Number(n) => serializer.serialize_u64(*n),
            DocId::Text(t) => serializer.serialize_str(t),
            // The reader kept a valid JSON number's text; fall back to a string if not.
            DocId::JsonNumber(t) => match serde_json::value::RawValue::from_string(t.clone()) {
                Ok(raw) => raw.serialize(serializer),
                Err(_) => serializer.serialize_str(t),
            },
        }
    }
}

/// The users' own ids, for the documents that have one; other documents are named by
/// their place, computed when asked, so a document without an id costs no memory here.
#[derive(Default)]
pub(crate) struct UserIds {
    /// Documents with an id, ascending.
    docs: Vec<u32>,
    /// Where each id ends in `text`.
    ends: Vec<usize>,
    /// The ids back to back, each as a kind byte (`b'n'`: a JSON number) and its text.
    text: Vec<u8>,
}

impl UserIds {
    pub(crate) fn push(&mut self, doc: u32, id: &str, json_number: bool) {
        self.docs.push(doc);
        self.text.push(if json_number { b'n' } else { b's' });
        self.text.extend_from_slice(id.as_bytes());
        self.ends.push(self.text.len());
    }

    /// The id of the `i`th document with one: its text, and whether it is a JSON number.
    pub(crate) fn nth(&self, i: usize) -> (&str, bool) {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let bytes = &self.text[start..self.ends[i]];
        // Pushed from a `&str` after one ASCII byte: always valid UTF-8.
        let text = std::str::from_utf8(&bytes[1..]).unwrap_or_default();
        (text, bytes[0] == b'n')
    }

    pub(crate) fn get(&self, doc: u32) -> Option<(&str, bool)> {
        let i = self.docs.binary_search(&doc).ok()?;
        Some(self.nth(i))
    }

    /// Number of documents with an id.
    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    #[cfg(test)]
    /// Bytes of heap held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.docs.capacity() * 4
            + self.ends.capacity() * std::mem::size_of::<usize>()
            + self.text.capacity()
    }
}
