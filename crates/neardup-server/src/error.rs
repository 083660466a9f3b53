//! Errors: those that stop the server from starting ([`Error`]) and those a request gets
//! back as JSON ([`ApiError`]).

use std::net::SocketAddr;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Why a server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting that cannot work (named, with why).
    #[error("server configuration: {0}")]
    Config(String),
    /// The index could not be opened for writing.
    #[error(transparent)]
    Index(#[from] neardup_index::Error),
    /// A non-loopback address without a token, not read-only, and without `insecure`.
    #[error("{0} is not a loopback address: give a token (--token-file or NEARDUP_TOKEN), serve it --read-only, or give --insecure to let anyone write")]
    Insecure(SocketAddr),
    /// Binding or serving failed.
    #[error("{addr}: {source}")]
    Io {
        /// The address.
        addr: String,
        /// What happened.
        source: std::io::Error,
    },
}

/// The code of an error response, for the metrics layer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ErrorCode(pub &'static str);

/// A library `Result`.
pub type Result<T> = std::result::Result<T, Error>;

/// An error answered to a request: `{"error": {"code", "message", "field"?}}` with its
/// HTTP status. Messages name the request's fault, never the server's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) code: &'static str,
    pub(crate) message: String,
    pub(crate) field: Option<String>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    code: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            field: None,
        }
    }

    pub(crate) fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into()).filter(|f: &String| !f.is_empty() && f != ".");
        self
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub(crate) fn too_large(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, code, message)
    }

    pub(crate) fn unauthorized() -> Self {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this request needs Authorization: Bearer <token>",
        )
    }

    pub(crate) fn read_only() -> Self {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "read_only",
            "this server serves the index read-only (--read-only): it takes no writes",
        )
    }

    pub(crate) fn memory_full() -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "overloaded",
            "the requests in flight use the server's memory budget; retry after a second",
        )
    }

    pub(crate) fn overloaded() -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "overloaded",
            "too many requests at once; retry after a second",
        )
    }

    pub(crate) fn timeout() -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            "the request took longer than the server allows; a write may have been committed, and sending it again is safe",
        )
    }

    /// An index error: the caller's when it is about the request, else an internal one
    /// logged in full and answered without details.
    pub(crate) fn index(e: neardup_index::Error) -> Self {
        use neardup_index::Error as E;
        match e {
            E::ThresholdBelowIndex { .. } | E::InvalidThreshold(_) => {
                ApiError::bad_request(e.to_string()).field("threshold")
            }
            E::NotForContainment(_) => ApiError::bad_request(e.to_string()),
            other => {
                tracing::error!(error = %other, "index error");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "index_error",
                    "the index could not do this; the server's log says why",
                )
            }
        }
    }

    /// An error the router or the HTTP layer answered without a body of ours (a method
    /// the route does not take, a URI it cannot decode), as JSON.
    pub(crate) fn from_status(status: StatusCode, message: String) -> Self {
        let code = match status {
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::NOT_FOUND => "not_found",
            StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
            StatusCode::URI_TOO_LONG => "uri_too_long",
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "headers_too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            s if s.is_server_error() => "internal",
            _ => "bad_request",
        };
        let message = if message.trim().is_empty() {
            status
                .canonical_reason()
                .unwrap_or("request refused")
                .to_string()
        } else {
            message
        };
        ApiError::new(status, code, message)
    }

    /// The code, for metrics and tests.
    pub fn code(&self) -> &'static str {
        self.code
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&Body {
            error: Inner {
                code: self.code,
                message: &self.message,
                field: self.field.as_deref(),
            },
        })
        .unwrap_or_default();
        let mut response = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        response.extensions_mut().insert(ErrorCode(self.code));
        let headers = response.headers_mut();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
