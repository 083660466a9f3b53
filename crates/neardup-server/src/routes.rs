//! The one list of routes: each with its method, path template, handler and who may call
//! it. The router, the token check and the metrics' route labels are all made from it,
//! and a test holds it to `openapi.json` both ways.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Request, State};
use axum::handler::Handler;
use axum::http::{header, HeaderMap, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{on, MethodFilter, MethodRouter};
use axum::Router;
use neardup_index::Kind;
use subtle::ConstantTimeEq;

use crate::app::AppState;
use crate::error::ApiError;
use crate::handlers;

/// Who may call a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Access {
    /// Anyone: the probes and the description.
    Open,
    /// The read token or the write token, if the server has a read token.
    Read,
    /// The write token (or the read token when it is the only one), on a server that is
    /// not read-only.
    Write,
}

/// One route. Its metrics label is its path template: bounded, never the raw path (ids
/// would each make a series).
pub(crate) struct Route {
    /// Read by the test against `openapi.json`; the handler already holds it.
    #[cfg_attr(not(test), allow(dead_code))]
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
    handler: MethodRouter<Arc<AppState>>,
}

fn route<H, T>(method: Method, path: &'static str, access: Access, handler: H) -> Route
where
    H: Handler<T, Arc<AppState>>,
    T: 'static,
{
    let filter = MethodFilter::try_from(method.clone()).expect("a method axum routes");
    Route {
        method,
        path,
        access,
        handler: on(filter, handler),
    }
}

/// A query operation: POST, read access, the one request body, the answers of `kind`.
fn query(path: &'static str, kind: Kind) -> Route {
    let handler = move |state: State<Arc<AppState>>, bytes: Result<Bytes, BytesRejection>| {
        handlers::query(state, bytes, kind)
    };
    route(Method::POST, path, Access::Read, handler)
}

/// Every route the server answers.
pub(crate) fn table() -> Vec<Route> {
    use Access::{Open, Read, Write};
    use Method as M;
    vec![
        query("/v1/query", Kind::Neighbours),
        route(M::GET, "/v1/documents/{id}", Read, handlers::get_document),
        route(
            M::DELETE,
            "/v1/documents/{id}",
            Write,
            handlers::delete_document,
        ),
        route(M::POST, "/v1/documents", Write, handlers::add),
        // POST is the batch removal; GET and DELETE are the document whose id is "delete",
        // still read and removed by id.
        route(
            M::POST,
            "/v1/documents/delete",
            Write,
            handlers::delete_documents,
        ),
        route(
            M::GET,
            "/v1/documents/delete",
            Read,
            handlers::get_document_delete,
        ),
        route(
            M::DELETE,
            "/v1/documents/delete",
            Write,
            handlers::delete_document_delete,
        ),
        route(M::POST, "/v1/compact", Write, handlers::compact),
        route(M::GET, "/v1/stats", Read, handlers::stats),
        route(M::GET, "/metrics", Read, handlers::metrics),
        route(M::GET, "/healthz", Open, handlers::healthz),
        route(M::GET, "/readyz", Open, handlers::readyz),
        route(M::GET, "/v1/openapi.json", Open, handlers::openapi),
    ]
}

/// The routes of `table`, each behind its token check, and their metrics labels. The
/// check is a route layer, so that a method a route does not take is `405` before it.
pub(crate) fn router(state: &Arc<AppState>, table: Vec<Route>) -> (Router<Arc<AppState>>, Labels) {
    let mut router = Router::new();
    let mut labels: Vec<&'static str> = Vec::new();
    for r in table {
        let handler = match r.access {
            Access::Open => r.handler,
            access => r.handler.route_layer(middleware::from_fn_with_state(
                (Arc::clone(state), access),
                guard,
            )),
        };
        // Two rows of one path make one route taking both methods.
        router = router.route(r.path, handler);
        if !labels.contains(&r.path) {
            labels.push(r.path);
        }
    }
    (router, Labels(labels.into()))
}

/// The metrics labels of the routes: their path templates.
#[derive(Clone)]
pub(crate) struct Labels(Arc<[&'static str]>);

impl Labels {
    /// The label of the route the router matched (`other` for none).
    pub fn of(&self, matched: Option<&str>) -> &'static str {
        matched
            .and_then(|m| self.0.iter().find(|&&p| p == m))
            .copied()
            .unwrap_or("other")
    }
}

async fn guard(
    State((state, access)): State<(Arc<AppState>, Access)>,
    req: Request,
    next: Next,
) -> Response {
    match allowed(&state, access, req.headers()) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

/// Whether a request with these headers may call a route of this access.
fn allowed(state: &AppState, access: Access, headers: &HeaderMap) -> Result<(), ApiError> {
    let c = &state.config;
    match access {
        Access::Open => Ok(()),
        Access::Read => match &c.read_token {
            Some(r) => {
                let tokens: Vec<&str> = std::iter::once(r.as_str())
                    .chain(c.write_token.as_deref())
                    .collect();
                bearer_matches(headers, &tokens)
                    .then_some(())
                    .ok_or_else(ApiError::unauthorized)
            }
            None => Ok(()),
        },
        Access::Write => {
            if let Some(t) = c.write_tokens() {
                if !bearer_matches(headers, &[t]) {
                    return Err(ApiError::unauthorized());
                }
            }
            if c.read_only {
                return Err(ApiError::read_only());
            }
            Ok(())
        }
    }
}

/// The bearer token of a request: the scheme is case-insensitive (RFC 9110 §11.1).
fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(header::AUTHORIZATION)?.as_bytes();
    let space = value.iter().position(|&b| b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    scheme
        .eq_ignore_ascii_case(b"bearer")
        .then(|| rest.trim_ascii())
}

/// True if the request carries one of `tokens`, compared in constant time.
fn bearer_matches(headers: &HeaderMap, tokens: &[&str]) -> bool {
    let Some(given) = bearer(headers) else {
        return false;
    };
    tokens
        .iter()
        .fold(false, |ok, t| ok | bool::from(given.ct_eq(t.as_bytes())))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;

    /// (method, path, access) of each operation `openapi.json` describes: `security` means
    /// a token may be asked for, and a `403` that the operation writes (a read-only server
    /// refuses it).
    fn described() -> BTreeSet<(String, String, Access)> {
        let api: Value = serde_json::from_str(crate::OPENAPI).unwrap();
        let mut ops = BTreeSet::new();
        for (path, item) in api["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                if method == "parameters" {
                    continue;
                }
                let access = match (op.get("security"), op["responses"].get("403")) {
                    (None, _) => Access::Open,
                    (Some(_), None) => Access::Read,
                    (Some(_), Some(_)) => Access::Write,
                };
                ops.insert((method.to_uppercase(), path.clone(), access));
            }
        }
        ops
    }

    #[test]
    fn every_route_is_described_and_every_described_operation_routed() {
        let routed: BTreeSet<(String, String, Access)> = table()
            .iter()
            .map(|r| (r.method.to_string(), r.path.to_string(), r.access))
            .collect();
        assert_eq!(table().len(), routed.len(), "a route is listed twice");
        let described = described();
        let undescribed: Vec<_> = routed.difference(&described).collect();
        let unrouted: Vec<_> = described.difference(&routed).collect();
        assert!(
            undescribed.is_empty() && unrouted.is_empty(),
            "routed but not so in openapi.json: {undescribed:?}; described but not so routed: {unrouted:?}"
        );
    }
}
