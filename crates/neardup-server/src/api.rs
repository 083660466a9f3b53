//! The request and response bodies of `/v1`, and how a body is read.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// One document to add.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewDocument {
    pub id: String,
    pub text: String,
}

/// `POST /v1/query`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryRequest {
    #[serde(default)]
    pub texts: Option<Vec<String>>,
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    #[serde(default)]
    pub threshold: Option<f64>,
    #[serde(default)]
    pub top: Option<usize>,
}

/// `POST /v1/documents/delete`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeleteRequest {
    pub ids: Vec<String>,
}

/// `?dedup=true`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct AddParams {
    #[serde(default)]
    pub dedup: bool,
}

/// What a plain add did with one document (`?dedup=true` answers with
/// [`OutcomeJson`](neardup_index::OutcomeJson)).
#[derive(Debug, Serialize)]
pub(crate) struct AddResult<'a> {
    pub id: &'a str,
    pub added: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replaced: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<&'static str>,
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
}
