//! The one writer's queue: every write (add, add with dedup, remove, compact) waits here
//! for the one [`IndexWriter`], holding no thread while it waits; one blocking thread at a
//! time runs the queue. Plain adds queued together share one durable commit (group
//! commit), applied and answered as if each had been committed after the ones before it:
//! the writer's [`IndexWriter::add_batches`] says what became of each document.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use neardup_index::{IndexWriter, Outcome, OutcomeJson};
use serde::Serialize;

use crate::api::NewDocument;
use crate::app::{AppState, Budget};
use crate::error::ApiError;
use crate::handlers::internal;

/// What waits for the writer.
pub(crate) enum Work {
    /// A plain add: consecutive ones share one commit.
    Add(Vec<NewDocument>),
    /// `?dedup=true`: one commit of its own.
    Dedup(Vec<NewDocument>),
    /// Removals by id.
    Remove(Vec<String>),
    /// Merging every segment into one.
    Compact,
}

/// What the writer did for a job.
pub(crate) struct Done {
    /// The answer's body.
    pub(crate) body: Vec<u8>,
    /// Documents removed (for a removal).
    pub(crate) removed: usize,
}

impl Done {
    fn body(body: Vec<u8>) -> Self {
        Done { body, removed: 0 }
    }
}

/// A write waiting for the writer, with its answer's channel and the memory it holds.
pub(crate) struct Job {
    work: Work,
    reply: tokio::sync::oneshot::Sender<Result<Done, ApiError>>,
    _held: Option<Budget>,
}

/// Queues a write and has a blocking thread run the queue when it gets the writer: plain
/// adds queued together share one durable commit (group commit) and each request is
/// answered as if they had been committed one after another, in queue order. Waiting
/// writes hold no thread, so a slow writer cannot starve the reads of blocking threads.
pub(crate) async fn queue(
    state: Arc<AppState>,
    work: Work,
    held: Option<Budget>,
) -> Result<Done, ApiError> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    {
        let mut pending = state.pending.lock().unwrap_or_else(|p| p.into_inner());
        // A job whose request is gone (timed out, disconnected) is not done: it was not
        // acknowledged, and its memory goes back now.
        pending.retain(|j| !j.reply.is_closed());
        pending.push(Job {
            work,
            reply,
            _held: held,
        });
    }
    schedule_flush(&state);
    answer.await.unwrap_or_else(|_| Err(internal()))
}

/// Starts a blocking thread that runs the queue until it is empty, unless one is at it.
/// (One thread per waiting write would pile up threads behind a long merge, each with its
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
            // Lowers the flag even if the work panics, so later writes start a thread.
            struct Lower<'a>(&'a AtomicBool);
            impl Drop for Lower<'_> {
                fn drop(&mut self) {
                    self.0.store(false, Ordering::Release);
                }
            }
            let _lower = Lower(&state.flushing);
            run_queue(&state);
        }
        // A write queued after the last take but before the flag fell saw it raised and
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

/// Runs every queued write in order and answers each; nothing to do if another thread
/// took them first.
fn run_queue(state: &AppState) {
    let Some(writer) = &state.writer else {
        return;
    };
    let mut writer = writer.lock().unwrap_or_else(|p| p.into_inner());
    let mut jobs = std::mem::take(&mut *state.pending.lock().unwrap_or_else(|p| p.into_inner()));
    jobs.retain(|j| !j.reply.is_closed());
    let mut jobs = jobs.into_iter().peekable();
    while let Some(job) = jobs.next() {
        let answer = match &job.work {
            Work::Add(_) => {
                let mut group = vec![job];
                while let Some(next) = jobs.next_if(|j| matches!(j.work, Work::Add(_))) {
                    group.push(next);
                }
                commit_adds(state, &mut writer, group);
                continue;
            }
            Work::Dedup(docs) => add_unique(state, &mut writer, docs),
            Work::Remove(ids) => remove(state, &mut writer, ids),
            Work::Compact => compact(state, &mut writer),
        };
        let _ = job.reply.send(answer);
    }
}

/// `?dedup=true`: each document added unless it nearly duplicates one kept before it.
fn add_unique(
    state: &AppState,
    writer: &mut IndexWriter,
    docs: &[NewDocument],
) -> Result<Done, ApiError> {
    let pairs: Vec<(&str, &str)> = docs
        .iter()
        .map(|d| (d.id.as_str(), d.text.as_str()))
        .collect();
    let done = writer.add_unique(&pairs);
    let generation = state.publish(writer);
    let outcomes = done.map_err(ApiError::index)?;
    Ok(Done::body(answer_adds(generation, &pairs, &outcomes)))
}

/// What a removal did.
#[derive(Serialize)]
struct Removed {
    removed: usize,
    missing: Vec<String>,
    generation: u64,
}

fn remove(state: &AppState, writer: &mut IndexWriter, ids: &[String]) -> Result<Done, ApiError> {
    let done = writer.remove(ids);
    let generation = state.publish(writer);
    let report = done.map_err(ApiError::index)?;
    Ok(Done {
        removed: report.removed,
        body: serde_json::to_vec(&Removed {
            removed: report.removed,
            missing: report.missing,
            generation,
        })
        .unwrap_or_default(),
    })
}

fn compact(state: &AppState, writer: &mut IndexWriter) -> Result<Done, ApiError> {
    let done = writer.compact();
    let generation = state.publish(writer);
    done.map_err(ApiError::index)?;
    let stats = writer.searcher().stats();
    #[derive(Serialize)]
    struct Compacted {
        generation: u64,
        documents: u64,
        segments: usize,
    }
    Ok(Done::body(
        serde_json::to_vec(&Compacted {
            generation,
            documents: stats.documents,
            segments: stats.segments,
        })
        .unwrap_or_default(),
    ))
}

fn docs(job: &Job) -> &[NewDocument] {
    match &job.work {
        Work::Add(docs) => docs,
        _ => &[],
    }
}

/// Commits queued plain adds in one commit and answers each with what the writer says
/// became of its documents, as if each request had been committed after the ones before
/// it.
fn commit_adds(state: &AppState, writer: &mut IndexWriter, jobs: Vec<Job>) {
    let batches: Vec<Vec<(&str, &str)>> = jobs
        .iter()
        .map(|j| {
            docs(j)
                .iter()
                .map(|d| (d.id.as_str(), d.text.as_str()))
                .collect()
        })
        .collect();
    let committed = writer.add_batches(&batches);
    // Published whatever the outcome: an error after the commit was durable (a failed
    // merge) must not leave readers on the generation before it.
    let generation = state.publish(writer);
    let outcomes = match committed {
        Ok(outcomes) => outcomes,
        Err(e) => {
            let e = ApiError::index(e);
            drop(batches);
            for job in jobs {
                let _ = job.reply.send(Err(e.clone()));
            }
            return;
        }
    };
    let answers: Vec<Vec<u8>> = batches
        .iter()
        .zip(&outcomes)
        .map(|(batch, outcomes)| answer_adds(generation, batch, outcomes))
        .collect();
    drop(batches);
    for (job, body) in jobs.into_iter().zip(answers) {
        let _ = job.reply.send(Ok(Done::body(body)));
    }
}

/// The body of an add's answer: how many documents were added, and what became of each.
fn answer_adds(generation: u64, docs: &[(&str, &str)], outcomes: &[Outcome]) -> Vec<u8> {
    let added = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Added { .. }))
        .count();
    #[derive(Serialize)]
    struct Added<'a> {
        added: usize,
        generation: u64,
        results: Vec<OutcomeJson<'a>>,
    }
    let results = docs
        .iter()
        .zip(outcomes)
        .map(|(&(id, _), outcome)| OutcomeJson { id, outcome })
        .collect();
    serde_json::to_vec(&Added {
        added,
        generation,
        results,
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests;
