//! The `/v1` routes and the probes. Index work runs on tokio's blocking threads, never on
//! the threads that accept and read requests.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query as QueryParams, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use neardup_index::{OutcomeJson, Query};
use serde::Serialize;

use crate::api::{parse, AddParams, AddResult, DeleteRequest, NewDocument, QueryRequest};
use crate::app::AppState;
use crate::error::ApiError;

type Answer = Result<Response, ApiError>;

/// One result of an add: plain, or with `?dedup=true`.
#[derive(Serialize)]
#[serde(untagged)]
enum AddItem<'a> {
    Plain(AddResult<'a>),
    Dedup(OutcomeJson<'a>),
}

/// One query's answer.
#[derive(Serialize)]
struct Found<'a> {
    neighbours: Vec<neardup_index::Neighbour<'a>>,
}

/// A body already serialized.
fn bytes_response(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The body, or `413` past the limit.
fn body(bytes: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    bytes.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large("body_too_large", e.body_text())
        } else {
            ApiError::bad_request(e.body_text())
        }
    })
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

/// Runs index work on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        tracing::error!(error = %e, "index work panicked");
        Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the server's log says why",
        ))
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
    if !params.dedup {
        return add_grouped(state, docs).await.map(bytes_response);
    }
    let value = blocking(move || {
        let pairs: Vec<(&str, &str)> = docs
            .iter()
            .map(|d| (d.id.as_str(), d.text.as_str()))
            .collect();
        let mut writer = state.writer.lock().unwrap_or_else(|p| p.into_inner());
        let outcomes = writer.add_unique(&pairs).map_err(ApiError::index)?;
        let added = outcomes
            .iter()
            .filter(|o| matches!(o, neardup_index::Outcome::Added { .. }))
            .count();
        let results: Vec<AddItem<'_>> = pairs
            .iter()
            .zip(&outcomes)
            .map(|(&(id, _), outcome)| AddItem::Dedup(OutcomeJson { id, outcome }))
            .collect();
        let generation = state.publish(&writer);
        Ok(added_body(added, generation, results))
    })
    .await?;
    Ok(bytes_response(value))
}

/// The body of an add's answer.
fn added_body(added: usize, generation: u64, results: Vec<AddItem<'_>>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Added<'a> {
        added: usize,
        generation: u64,
        results: Vec<AddItem<'a>>,
    }
    serde_json::to_vec(&Added {
        added,
        generation,
        results,
    })
    .unwrap_or_default()
}

/// A plain add waiting for the writer.
pub(crate) struct AddJob {
    docs: Vec<NewDocument>,
    reply: tokio::sync::oneshot::Sender<Result<Vec<u8>, ApiError>>,
}

/// Queues a plain add and has a blocking thread commit every queued add at once when it
/// gets the writer (group commit): concurrent small adds share one durable commit
/// instead of taking turns at one each. Each request is answered as if the adds had
/// been committed one after another, in queue order.
async fn add_grouped(state: Arc<AppState>, docs: Vec<NewDocument>) -> Result<Vec<u8>, ApiError> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    state
        .pending
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(AddJob { docs, reply });
    schedule_flush(&state);
    answer.await.unwrap_or_else(|_| {
        Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the server's log says why",
        ))
    })
}

/// Starts a blocking thread that commits the queue until it is empty, unless one is at it.
/// (One thread per waiting add would pile up threads behind a long merge, each with its
/// share of memory.)
fn schedule_flush(state: &Arc<AppState>) {
    if state.flushing.swap(true, Ordering::AcqRel) {
        return;
    }
    let state = Arc::clone(state);
    tokio::task::spawn_blocking(move || loop {
        // Adds that arrive meanwhile share this commit (one segment, one set of syncs).
        let delay = state.config.commit_delay;
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        {
            // Lowers the flag even if the commit panics, so later adds start a thread.
            struct Lower<'a>(&'a AtomicBool);
            impl Drop for Lower<'_> {
                fn drop(&mut self) {
                    self.0.store(false, Ordering::Release);
                }
            }
            let _lower = Lower(&state.flushing);
            flush_adds(&state);
        }
        // An add queued after the last take but before the flag fell saw it raised and
        // counts on this thread; one queued after it fell started a thread of its own.
        let more = !state
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty();
        if !more || state.flushing.swap(true, Ordering::AcqRel) {
            return;
        }
    });
}

/// Commits every queued add in one commit and answers each; nothing to do if another
/// thread took them first.
fn flush_adds(state: &AppState) {
    let mut writer = state.writer.lock().unwrap_or_else(|p| p.into_inner());
    let jobs = std::mem::take(&mut *state.pending.lock().unwrap_or_else(|p| p.into_inner()));
    if jobs.is_empty() {
        return;
    }
    let before = writer.searcher().clone();
    let pairs: Vec<(&str, &str)> = jobs
        .iter()
        .flat_map(|j| j.docs.iter().map(|d| (d.id.as_str(), d.text.as_str())))
        .collect();
    let committed = writer.add(&pairs);
    drop(pairs);
    let generation = match committed {
        Ok(_) => state.publish(&writer),
        Err(e) => {
            let e = ApiError::index(e);
            for job in jobs {
                let _ = job.reply.send(Err(e.clone()));
            }
            return;
        }
    };
    drop(writer);
    let pipeline = before.pipeline();
    let mut earlier: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut answers = Vec::with_capacity(jobs.len());
    for job in &jobs {
        let mut last = std::collections::HashMap::new();
        for (i, d) in job.docs.iter().enumerate() {
            last.insert(d.id.as_str(), i);
        }
        let results: Vec<AddItem<'_>> = job
            .docs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let id = d.id.as_str();
                let (added, skipped) = if last[id] != i {
                    (false, Some("superseded"))
                } else if pipeline.shingle_doc(&d.text).set().is_empty() {
                    (false, Some("empty"))
                } else {
                    (true, None)
                };
                AddItem::Plain(AddResult {
                    id,
                    added,
                    replaced: added && (before.contains(id) || earlier.contains(id)),
                    skipped,
                })
            })
            .collect();
        let added = results
            .iter()
            .filter(|r| matches!(r, AddItem::Plain(AddResult { added: true, .. })))
            .count();
        answers.push(added_body(added, generation, results));
        earlier.extend(job.docs.iter().map(|d| d.id.as_str()));
    }
    for (job, body) in jobs.into_iter().zip(answers) {
        let _ = job.reply.send(Ok(body));
    }
}

/// `POST /v1/query`: neighbours of texts, or of indexed documents by id.
pub(crate) async fn query(
    State(state): State<Arc<AppState>>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let req: QueryRequest = parse(&body(bytes)?)?;
    let mut q = Query::new();
    if let Some(t) = req.threshold {
        q = q.threshold(t);
    }
    if let Some(k) = req.top {
        q = q.top(k);
    }
    let (by_id, items) = match (req.texts, req.ids) {
        (Some(texts), None) => (false, texts),
        (None, Some(ids)) => (true, ids),
        _ => {
            return Err(ApiError::bad_request(
                "give either \"texts\" or \"ids\" (a list), not both",
            ))
        }
    };
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
        let found = if by_id {
            searcher
                .query_id(item, q)
                .map_err(ApiError::index)?
                .ok_or_else(|| {
                    ApiError::not_found(format!("no live document has the id {item:?}"))
                        .field(format!("ids[{i}]"))
                })?
        } else {
            searcher.query(item, q).map_err(ApiError::index)?
        };
        results.push(Found { neighbours: found });
    }
    #[derive(Serialize)]
    struct Answers<'a> {
        results: Vec<Found<'a>>,
    }
    Ok(serde_json::to_vec(&Answers { results }).unwrap_or_default())
}

/// `GET /v1/documents/{id}`: what the index holds for a live document.
pub(crate) async fn get_document(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Answer {
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
    Path(id): Path<String>,
) -> Answer {
    let removed = remove(state, vec![id.clone()]).await?;
    if removed.removed == 0 {
        return Err(ApiError::not_found(format!(
            "no live document has the id {id:?}"
        )));
    }
    Ok(json_response(&removed))
}

/// `POST /v1/documents/delete`: `{"ids": [...]}` in one durable commit.
pub(crate) async fn delete_documents(
    State(state): State<Arc<AppState>>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let req: DeleteRequest = parse(&body(bytes)?)?;
    check_batch(&state, req.ids.len(), "ids")?;
    Ok(json_response(&remove(state, req.ids).await?))
}

/// What a removal did.
#[derive(Serialize)]
struct Removed {
    removed: usize,
    missing: Vec<String>,
    generation: u64,
}

async fn remove(state: Arc<AppState>, ids: Vec<String>) -> Result<Removed, ApiError> {
    blocking(move || {
        let mut writer = state.writer.lock().unwrap_or_else(|p| p.into_inner());
        let report = writer.remove(&ids).map_err(ApiError::index)?;
        let generation = state.publish(&writer);
        Ok(Removed {
            removed: report.removed,
            missing: report.missing,
            generation,
        })
    })
    .await
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
