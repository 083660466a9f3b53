//! Requests run in one flush of the queue (consecutive plain adds in one commit) against
//! the same requests each run alone: every answer and the final index must be the same.

use std::sync::Arc;

use neardup_index::{IndexWriter, Query};
use proptest::prelude::*;
use serde_json::{json, Value};

use super::{run_queue, Done, Job, Work};
use crate::api::NewDocument;
use crate::app::{AppState, Server};
use crate::config::ServerConfig;
use crate::error::ApiError;

const BIKE: &str = "Vintage road bike, 56 cm steel frame, new tyres and brakes";
const BIKE2: &str = "Vintage road bike, 56 cm steel frame, new tyres and brakes!";
const CHAIRS: &str = "Set of four ladder-back chairs in beech, lightly used";
const CHAIRS2: &str = "Set of four ladder-back chairs in beech, hardly used";
/// The texts requests are made of: near-duplicates, and two with no shingles.
const TEXTS: [&str; 6] = [BIKE, BIKE2, CHAIRS, CHAIRS2, "", "   "];
const IDS: [&str; 4] = ["a", "b", "c", "d"];

/// A server's shared state over a new index, and the index's directory.
fn server(containment: bool) -> (tempfile::TempDir, Arc<AppState>) {
    let dir = tempfile::tempdir().unwrap();
    let measure = if containment {
        neardup::Measure::Containment
    } else {
        neardup::Measure::Jaccard
    };
    let config = neardup::Config::builder()
        .measure(measure)
        .threshold(0.7)
        .seed(3)
        .build()
        .unwrap();
    let writer = IndexWriter::create(dir.path(), &config).unwrap();
    let server = Server::with_writer(writer, ServerConfig::default()).unwrap();
    (dir, server.state())
}

/// A request, as the test makes them (it is made into `Work` for each server).
#[derive(Clone, Debug)]
enum Request {
    Add(Vec<(String, String)>),
    Dedup(Vec<(String, String)>),
    Remove(Vec<String>),
    Compact,
}

fn add(docs: &[(&str, &str)]) -> Request {
    Request::Add(
        docs.iter()
            .map(|&(id, text)| (id.to_string(), text.to_string()))
            .collect(),
    )
}

impl Request {
    fn work(&self) -> Work {
        let docs = |d: &[(String, String)]| {
            d.iter()
                .map(|(id, text)| NewDocument {
                    id: id.clone(),
                    text: text.clone(),
                })
                .collect()
        };
        match self {
            Request::Add(d) => Work::Add(docs(d)),
            Request::Dedup(d) => Work::Dedup(docs(d)),
            Request::Remove(ids) => Work::Remove(ids.clone()),
            Request::Compact => Work::Compact,
        }
    }
}

type Reply = tokio::sync::oneshot::Receiver<Result<Done, ApiError>>;

fn submit(state: &AppState, request: &Request) -> Reply {
    let (reply, answer) = tokio::sync::oneshot::channel();
    state.pending.lock().unwrap().push(Job {
        work: request.work(),
        reply,
        _held: None,
    });
    answer
}

/// The answer's body without its generation (commits are numbered differently when
/// they are shared).
fn answer(mut reply: Reply) -> Result<Value, ApiError> {
    let done = reply.try_recv().expect("answered")?;
    let mut body: Value = serde_json::from_slice(&done.body).unwrap();
    body.as_object_mut().unwrap().remove("generation");
    if body.get("segments").is_some() {
        // A compaction's count of segments depends on how many commits made them.
        body.as_object_mut().unwrap().remove("segments");
    }
    Ok(body)
}

/// Queues every request, then runs the queue once: plain adds next to each other share
/// a commit.
fn together(state: &AppState, requests: &[Request]) -> Vec<Result<Value, ApiError>> {
    let replies: Vec<Reply> = requests.iter().map(|r| submit(state, r)).collect();
    run_queue(state);
    replies.into_iter().map(answer).collect()
}

/// Runs each request alone: one commit each.
fn one_by_one(state: &AppState, requests: &[Request]) -> Vec<Result<Value, ApiError>> {
    requests
        .iter()
        .map(|r| {
            let reply = submit(state, r);
            run_queue(state);
            answer(reply)
        })
        .collect()
}

/// What the index holds: each live id with its set's size, the common tokens, and what
/// each text of `TEXTS` finds.
fn contents(state: &AppState) -> Value {
    let searcher = state.searcher();
    let mut ids: Vec<(String, usize)> = searcher
        .ids()
        .map(|id| (id.to_string(), searcher.stored(id).unwrap().set().len()))
        .collect();
    ids.sort();
    let found: Vec<Value> = TEXTS
        .iter()
        .map(|t| json!(searcher.query(t, &Query::new()).unwrap()))
        .collect();
    let stats = json!(neardup_index::StatsJson(&searcher));
    json!({"ids": ids, "found": found, "common_tokens": stats["common_tokens"]})
}

/// The report's case: request A adds "x" with a text, a later request B of the same
/// commit sends "x" with an empty text. B leaves "x" as A left it, so A's "added" is true
/// only if the index keeps A's text.
#[test]
fn an_empty_text_later_in_the_commit_does_not_drop_an_earlier_add() {
    let (_dir, state) = server(false);
    one_by_one(&state, &[add(&[("x", CHAIRS)])]);
    let answers = together(&state, &[add(&[("x", BIKE)]), add(&[("x", "")])]);
    assert_eq!(
        answers,
        [
            Ok(json!({"added": 1, "results": [{"id": "x", "added": true, "replaced": true}]})),
            Ok(json!({"added": 0, "results": [{"id": "x", "added": false, "skipped": "empty"}]})),
        ]
    );
    let searcher = state.searcher();
    let found = searcher.query(BIKE, &Query::new()).unwrap();
    assert_eq!(found.len(), 1, "{}", json!(found));
    assert_eq!((found[0].id, found[0].similarity.jaccard), ("x", Some(1.0)));
}

/// A containment index learns its common tokens from its first add that commits, as
/// it would were every request committed alone: not from the requests that share its
/// commit.
#[test]
fn a_containment_index_learns_its_common_tokens_from_its_first_add_alone() {
    let crowd: Vec<(String, String)> = (0..40)
        .map(|k| {
            let text = format!("{} {}", "shipping is free in the whole country", k * 7919);
            (format!("n{k}"), text)
        })
        .collect();
    let requests = [add(&[("first", BIKE)]), Request::Add(crowd)];
    let (_a, alone) = server(true);
    let (_b, shared) = server(true);
    assert_eq!(together(&shared, &requests), one_by_one(&alone, &requests));
    assert_eq!(contents(&shared), contents(&alone));
}

fn docs() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec(
        (0..IDS.len(), 0..TEXTS.len())
            .prop_map(|(i, t)| (IDS[i].to_string(), TEXTS[t].to_string())),
        0..4,
    )
}

fn request() -> impl Strategy<Value = Request> {
    prop_oneof![
        4 => docs().prop_map(Request::Add),
        2 => docs().prop_map(Request::Dedup),
        1 => proptest::collection::vec(prop::sample::select(IDS.to_vec()), 0..3)
            .prop_map(|ids| Request::Remove(ids.into_iter().map(String::from).collect())),
        1 => Just(Request::Compact),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    /// Any sequence of adds (plain and with dedup), removals and compactions, queued
    /// together, is answered and leaves the index as the same requests committed one by
    /// one.
    #[test]
    fn requests_in_one_flush_answer_and_keep_what_one_commit_each_would(
        first in docs(),
        requests in proptest::collection::vec(request(), 1..8),
        containment in any::<bool>(),
    ) {
        let (_a, alone) = server(containment);
        let (_b, shared) = server(containment);
        let setup = [Request::Add(first)];
        one_by_one(&alone, &setup);
        one_by_one(&shared, &setup);
        prop_assert_eq!(together(&shared, &requests), one_by_one(&alone, &requests));
        prop_assert_eq!(contents(&shared), contents(&alone));
    }
}
