//! The request and response bodies of `/v1`, and how a body is read.

use std::marker::PhantomData;

use neardup_index::Query;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::error::ApiError;

/// One document to add.
#[derive(Debug, Deserialize)]
#[serde(from = "Object<DocumentFields>")]
pub(crate) struct NewDocument {
    pub id: String,
    pub text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentFields {
    id: Lossy,
    text: Lossy,
}

impl From<Object<DocumentFields>> for NewDocument {
    fn from(Object(d): Object<DocumentFields>) -> Self {
        NewDocument {
            id: d.id.0,
            text: d.text.0,
        }
    }
}

/// The body of every query operation (`POST /v1/query`).
#[derive(Debug)]
pub(crate) struct QueryRequest {
    pub texts: Option<Vec<String>>,
    pub ids: Option<Vec<String>>,
    pub threshold: Option<f64>,
    pub top: Option<usize>,
}

impl QueryRequest {
    /// The index's query, whether the items are ids (else texts), and the items; a
    /// threshold out of [0, 1], or both lists or neither, is a `400`.
    pub fn split(self) -> Result<(Query, bool, Vec<String>), ApiError> {
        let mut q = Query::new();
        if let Some(t) = self.threshold {
            // Checked here too, not only by each query: a list of none still refuses it.
            if !(0.0..=1.0).contains(&t) {
                return Err(ApiError::bad_request(format!(
                    "threshold {t}: give a number from 0 to 1"
                ))
                .field("threshold"));
            }
            q = q.threshold(t);
        }
        if let Some(k) = self.top {
            q = q.top(k);
        }
        match (self.texts, self.ids) {
            (Some(texts), None) => Ok((q, false, texts)),
            (None, Some(ids)) => Ok((q, true, ids)),
            _ => Err(ApiError::bad_request(
                "give either \"texts\" or \"ids\" (a list), not both",
            )),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryFields {
    #[serde(default)]
    texts: Given<Vec<Lossy>>,
    #[serde(default)]
    ids: Given<Vec<Lossy>>,
    #[serde(default)]
    threshold: Given<f64>,
    #[serde(default)]
    top: Given<Top>,
}

/// An optional field that, when given, is of its type: `null` is refused (the OpenAPI
/// description does not allow it), where serde's `Option` would take it as absent.
struct Given<T>(Option<T>);

impl<T> Default for Given<T> {
    fn default() -> Self {
        Given(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Given<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(|t| Given(Some(t)))
    }
}

/// `top`: a JSON integer from 0 to 2^32 - 1, written as `5` or `5.0` (JSON Schema counts a
/// number with no fraction as an integer, and some encoders write one so).
struct Top(usize);

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = serde_json::Number::deserialize(d)?;
        let value = n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u32::MAX as f64)
                    .map(|f| f as u64)
            })
            .filter(|&v| v <= u64::from(u32::MAX));
        match value {
            Some(v) => Ok(Top(v as usize)),
            None => Err(de::Error::custom(format!(
                "top {n}: give a whole number from 0 to {}",
                u32::MAX
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for QueryRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Object(q) = Object::<QueryFields>::deserialize(d)?;
        Ok(QueryRequest {
            texts: q.texts.0.map(Lossy::strings),
            ids: q.ids.0.map(Lossy::strings),
            threshold: q.threshold.0,
            top: q.top.0.map(|t| t.0),
        })
    }
}

/// `POST /v1/documents/delete`.
#[derive(Debug)]
pub(crate) struct DeleteRequest {
    pub ids: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteFields {
    ids: Vec<Lossy>,
}

impl<'de> Deserialize<'de> for DeleteRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Object(r) = Object::<DeleteFields>::deserialize(d)?;
        Ok(DeleteRequest {
            ids: Lossy::strings(r.ids),
        })
    }
}

/// A struct read from a JSON object only: serde's derived structs also take an array of
/// their fields in order (`[["a", "b"]]` would have been `{"ids": ["a", "b"]}`), which
/// the OpenAPI description does not allow.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Fields(PhantomData)).map(Object)
    }
}

/// A JSON string whose lone surrogate escapes (`"\ud800"`: valid JSON, but no Unicode
/// text) become U+FFFD, as the command line reads them, instead of failing the request.
struct Lossy(String);

impl Lossy {
    fn strings(v: Vec<Lossy>) -> Vec<String> {
        v.into_iter().map(|s| s.0).collect()
    }
}

impl<'de> Deserialize<'de> for Lossy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = Lossy;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Lossy, E> {
                Ok(Lossy(s.to_string()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Lossy, E> {
                Ok(Lossy(s))
            }
            fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Lossy, E> {
                Ok(Lossy(lossy_utf8(b.to_vec())))
            }
            fn visit_byte_buf<E: de::Error>(self, b: Vec<u8>) -> Result<Lossy, E> {
                Ok(Lossy(lossy_utf8(b)))
            }
        }
        // serde_json hands over a string's bytes unchecked when asked for bytes: a lone
        // surrogate escape as its three-byte (WTF-8) form.
        d.deserialize_bytes(Text)
    }
}

/// Bytes as text: valid UTF-8 as it is (the usual case, no copy); a surrogate's
/// three-byte form as one U+FFFD; anything else invalid as `from_utf8_lossy` does.
fn lossy_utf8(bytes: Vec<u8>) -> String {
    let bytes = match String::from_utf8(bytes) {
        Ok(s) => return s,
        Err(e) => e.into_bytes(),
    };
    let mut out = String::with_capacity(bytes.len());
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let surrogate = rest
            .windows(3)
            .position(|w| w[0] == 0xED && (0xA0..=0xBF).contains(&w[1]) && w[2] & 0xC0 == 0x80);
        let (valid_or_not, next) = match surrogate {
            Some(at) => (&rest[..at], Some(at + 3)),
            None => (rest, None),
        };
        out.push_str(&String::from_utf8_lossy(valid_or_not));
        match next {
            Some(n) => {
                out.push('\u{FFFD}');
                rest = &rest[n..];
            }
            None => break,
        }
    }
    out
}

/// `?dedup=true`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct AddParams {
    #[serde(default)]
    pub dedup: bool,
}

/// Parses a JSON body, naming the field that failed (`[3].text`, `ids[0]`).
pub(crate) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    // A UTF-8 byte order mark is allowed before the JSON text (RFC 8259 lets a parser
    // ignore it; some clients on Windows send one).
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let mut de = serde_json::Deserializer::from_slice(body);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        let code = if inner.is_syntax() || inner.is_eof() {
            "bad_json"
        } else {
            "bad_request"
        };
        ApiError::new(axum::http::StatusCode::BAD_REQUEST, code, inner.to_string()).field(field)
    })?;
    de.end().map_err(|e| {
        ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "bad_json",
            e.to_string(),
        )
    })?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_is_skipped_and_a_bad_field_named() {
        let docs: Vec<NewDocument> =
            parse(b"\xEF\xBB\xBF[{\"id\": \"a\", \"text\": \"b\"}]").unwrap();
        assert_eq!((docs[0].id.as_str(), docs[0].text.as_str()), ("a", "b"));
        let e = parse::<Vec<NewDocument>>(br#"[{"id": "a", "text": "b"}, {"id": 7, "text": "c"}]"#)
            .unwrap_err();
        assert_eq!(
            (e.code, e.field.as_deref()),
            ("bad_request", Some("[1].id"))
        );
    }

    #[test]
    fn objects_are_not_read_from_arrays() {
        for e in [
            parse::<DeleteRequest>(br#"[["a", "b"]]"#).unwrap_err(),
            parse::<QueryRequest>(br#"[["a"]]"#).unwrap_err(),
            parse::<Vec<NewDocument>>(br#"[["a", "b"]]"#).unwrap_err(),
        ] {
            assert_eq!(e.code, "bad_request");
            assert!(
                e.message.contains("expected a JSON object"),
                "{}",
                e.message
            );
        }
        let e = parse::<DeleteRequest>(br#"{"ids": [1]}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("ids[0]"));
        assert!(e.message.contains("expected a string"), "{}", e.message);
    }

    #[test]
    fn top_is_a_whole_number_up_to_2_to_the_32() {
        let top = |body: &[u8]| parse::<QueryRequest>(body).map(|q| q.top);
        assert_eq!(top(br#"{"ids": [], "top": 5}"#).unwrap(), Some(5));
        assert_eq!(top(br#"{"ids": [], "top": 32165.0}"#).unwrap(), Some(32165));
        assert_eq!(
            top(br#"{"ids": [], "top": 4294967295}"#).unwrap(),
            Some(u32::MAX as usize)
        );
        for bad in [
            &br#"{"ids": [], "top": 4294967296}"#[..],
            br#"{"ids": [], "top": -1}"#,
            br#"{"ids": [], "top": 1.5}"#,
            br#"{"ids": [], "top": "5"}"#,
        ] {
            let e = top(bad).unwrap_err();
            assert_eq!(
                (e.code, e.field.as_deref()),
                ("bad_request", Some("top")),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn null_is_not_an_absent_field() {
        for (body, field) in [
            (&br#"{"ids": [], "threshold": null}"#[..], "threshold"),
            (br#"{"texts": null, "ids": []}"#, "texts"),
            (br#"{"ids": null}"#, "ids"),
        ] {
            let e = parse::<QueryRequest>(body).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{}", e.message);
        }
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let docs: Vec<NewDocument> =
            parse(br#"[{"id": "a\ud800b", "text": "x\udc00\ud83d\ude00 \u00e9"}]"#).unwrap();
        assert_eq!(docs[0].id, "a\u{FFFD}b");
        assert_eq!(docs[0].text, "x\u{FFFD}\u{1F600} \u{e9}");
        let q: QueryRequest = parse(br#"{"ids": ["\ud800\ud800"]}"#).unwrap();
        assert_eq!(q.ids.unwrap(), ["\u{FFFD}\u{FFFD}"]);
        // Raw invalid UTF-8 too, as the command line reads it.
        let r: DeleteRequest = parse(b"{\"ids\": [\"a\xffb\"]}").unwrap();
        assert_eq!(r.ids, ["a\u{FFFD}b"]);
    }
}
