//! The `/v1` routes and the probes. Index work runs on tokio's blocking threads, never on
//! the threads that accept and read requests; every write goes through the writer's queue
//! (`group_commit`), so writes waiting for the writer hold no thread.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{FromRequestParts, Path, Query as QueryParams, State};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use neardup_index::{Kind, Query};
use serde::Serialize;

use crate::api::{parse, AddParams, DeleteRequest, NewDocument, QueryRequest};
use crate::app::{AppState, Budget, MemorySpent};
use crate::error::ApiError;
use crate::group_commit::{queue, Work};

type Answer = Result<Response, ApiError>;

/// The memory a request holds (see `app::admit`), kept by a write until it is committed.
pub(crate) struct Held(Option<Budget>);

impl<S: Send + Sync> FromRequestParts<S> for Held {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Held, Self::Rejection> {
        Ok(Held(parts.extensions.get::<Budget>().cloned()))
    }
}

/// A body already serialized.
fn bytes_response(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The body, or `413` past the limit, or `503` if a body of unknown length spent the
/// memory budget as it arrived.
fn body(bytes: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    bytes.map_err(|e| {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(c) = cause {
            if c.is::<MemorySpent>() {
                return ApiError::memory_full();
            }
            cause = c.source();
        }
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large("body_too_large", e.body_text())
        } else {
            ApiError::bad_request(e.body_text())
        }
    })
}

/// The `{id}` of the path, or a JSON `400` naming it (`%FF` is no UTF-8).
fn path_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    id.map(|Path(id)| id)
        .map_err(|e| ApiError::bad_request(e.body_text()).field("id"))
}

fn check_batch(state: &AppState, n: usize, field: &str) -> Result<(), ApiError> {
    let max = state.config.max_batch;
    if n > max {
        return Err(ApiError::too_large(
            "batch_too_large",
            format!("{n} items in one request; at most {max}"),
        )
        .field(field));
    }
    Ok(())
}

pub(crate) fn internal() -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "internal error; the server's log says why",
    )
}

/// Runs index work on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        tracing::error!(error = %e, "index work panicked");
        Err(internal())
    })
}

fn json_response<T: Serialize + ?Sized>(value: &T) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(value).unwrap_or_default(),
    )
        .into_response()
}

/// `POST /v1/documents[?dedup=true]`: adds a batch in one durable commit.
pub(crate) async fn add(
    State(state): State<Arc<AppState>>,
    Held(held): Held,
    params: Result<QueryParams<AddParams>, axum::extract::rejection::QueryRejection>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let QueryParams(params) =
        params.map_err(|e| ApiError::bad_request(e.body_text()).field("dedup"))?;
    let docs: Vec<NewDocument> = parse(&body(bytes)?)?;
    check_batch(&state, docs.len(), "")?;
    for (i, d) in docs.iter().enumerate() {
        if d.id.is_empty() {
            return Err(ApiError::bad_request("an id must not be empty").field(format!("[{i}].id")));
        }
    }
    let work = if params.dedup {
        Work::Dedup(docs)
    } else {
        Work::Add(docs)
    };
    Ok(bytes_response(queue(state, work, held).await?.body))
}

/// A query operation (`POST /v1/query` for neighbours): the answers of one kind about
/// texts, or about indexed documents by id.
pub(crate) async fn query(
    State(state): State<Arc<AppState>>,
    bytes: Result<Bytes, BytesRejection>,
    kind: Kind,
) -> Answer {
    let (q, by_id, items) = parse::<QueryRequest>(&body(bytes)?)?.split()?;
    let q = q.kind(kind);
    check_batch(&state, items.len(), if by_id { "ids" } else { "texts" })?;
    let searcher = state.searcher();
    let inline = !by_id
        && items.len() <= INLINE_TEXTS
        && items.iter().map(String::len).sum::<usize>() <= INLINE_BYTES;
    let answer = move || answer_queries(&searcher, &items, by_id, &q);
    let value = if inline {
        answer()?
    } else {
        blocking(answer).await?
    };
    Ok(bytes_response(value))
}

/// Queries of at most this many texts, of at most `INLINE_BYTES` in all, are answered on
/// the thread that read the request: one short text takes tens of microseconds, less than
/// handing it to the blocking pool and back (which, measured under load, cost more CPU in
/// thread switches than the queries themselves). Larger batches, queries by id and every
/// write go to the blocking pool, so no request holds an async thread for long.
const INLINE_TEXTS: usize = 8;
const INLINE_BYTES: usize = 64 << 10;

fn answer_queries(
    searcher: &neardup_index::Searcher,
    items: &[String],
    by_id: bool,
    q: &Query,
) -> Result<Vec<u8>, ApiError> {
    let mut results = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let answer = if by_id {
            searcher
                .answer_id(item, q)
                .map_err(ApiError::index)?
                .ok_or_else(|| {
                    ApiError::not_found(format!("no live document has the id {item:?}"))
                        .field(format!("ids[{i}]"))
                })?
        } else {
            searcher.answer(item, q).map_err(ApiError::index)?
        };
        results.push(answer);
    }
    #[derive(Serialize)]
    struct Answers<'a> {
        results: Vec<neardup_index::Answer<'a>>,
    }
    Ok(serde_json::to_vec(&Answers { results }).unwrap_or_default())
}

/// `GET /v1/documents/{id}`: what the index keeps of a live document (its shingle set's
/// size, not its text: the index stores no texts).
pub(crate) async fn get_document(
    State(state): State<Arc<AppState>>,
    id: Result<Path<String>, PathRejection>,
) -> Answer {
    let id = path_id(id)?;
    document(state, id).await
}

/// `GET /v1/documents/delete`: the document whose id is `delete` (the path is also the
/// batch removal's, which is POST only).
pub(crate) async fn get_document_delete(State(state): State<Arc<AppState>>) -> Answer {
    document(state, "delete".to_string()).await
}

async fn document(state: Arc<AppState>, id: String) -> Answer {
    let searcher = state.searcher();
    let value = blocking(move || {
        let doc = searcher
            .stored(&id)
            .ok_or_else(|| ApiError::not_found(format!("no live document has the id {id:?}")))?;
        #[derive(Serialize)]
        struct Stored {
            id: String,
            shingles: usize,
            truncated: bool,
        }
        Ok(Stored {
            shingles: doc.set().len(),
            truncated: doc.is_truncated(),
            id,
        })
    })
    .await?;
    Ok(json_response(&value))
}

/// `DELETE /v1/documents/{id}`.
pub(crate) async fn delete_document(
    State(state): State<Arc<AppState>>,
    id: Result<Path<String>, PathRejection>,
) -> Answer {
    let id = path_id(id)?;
    remove_one(state, id).await
}

/// `DELETE /v1/documents/delete`: the document whose id is `delete`.
pub(crate) async fn delete_document_delete(State(state): State<Arc<AppState>>) -> Answer {
    remove_one(state, "delete".to_string()).await
}

async fn remove_one(state: Arc<AppState>, id: String) -> Answer {
    let done = queue(state, Work::Remove(vec![id.clone()]), None).await?;
    if done.removed == 0 {
        return Err(ApiError::not_found(format!(
            "no live document has the id {id:?}"
        )));
    }
    Ok(bytes_response(done.body))
}

/// `POST /v1/documents/delete`: `{"ids": [...]}` in one durable commit.
pub(crate) async fn delete_documents(
    State(state): State<Arc<AppState>>,
    Held(held): Held,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let req: DeleteRequest = parse(&body(bytes)?)?;
    check_batch(&state, req.ids.len(), "ids")?;
    Ok(bytes_response(
        queue(state, Work::Remove(req.ids), held).await?.body,
    ))
}

/// `POST /v1/compact`: merges every segment into one without the deleted documents, on
/// the writer, in one durable commit.
pub(crate) async fn compact(State(state): State<Arc<AppState>>) -> Answer {
    Ok(bytes_response(
        queue(state, Work::Compact, None).await?.body,
    ))
}

/// `GET /v1/stats`.
pub(crate) async fn stats(State(state): State<Arc<AppState>>) -> Answer {
    let searcher = state.searcher();
    Ok(json_response(&neardup_index::StatsJson(&searcher)))
}

/// `GET /healthz`: the process answers.
pub(crate) async fn healthz() -> &'static str {
    "ok\n"
}

/// `GET /readyz`: the index is open (it is for as long as the server runs).
pub(crate) async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    let generation = state.searcher().generation();
    #[derive(Serialize)]
    struct Ready {
        ready: bool,
        generation: u64,
    }
    json_response(&Ready {
        ready: true,
        generation,
    })
}

/// `GET /metrics`.
pub(crate) async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    state.metrics.memory_held(state.memory_held());
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.text(),
    )
        .into_response()
}

/// `GET /v1/openapi.json`.
pub(crate) async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], crate::OPENAPI).into_response()
}

/// Any other path.
pub(crate) async fn fallback() -> ApiError {
    ApiError::not_found("no such route; see /v1/openapi.json")
}
