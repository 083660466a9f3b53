//! The real server on a free loopback port, spoken to over HTTP by a real client.

mod common;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

use common::{ids, Running, BIKE, BIKE2, CHAIRS};
use neardup_index::IndexWriter;
use neardup_server::{Server, ServerConfig, OPENAPI};
use proptest::prelude::*;
use serde_json::{json, Value};

#[test]
fn add_query_get_and_remove() {
    let s = Running::start(ServerConfig::default());
    let (status, body) = s.post(
        "/v1/documents",
        &json!([{"id": "a", "text": BIKE}, {"id": "b", "text": CHAIRS}, {"id": "e", "text": ""}]),
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["added"], 2);
    assert_eq!(body["results"][2]["skipped"], "empty");
    let (status, body) = s.post(
        "/v1/query",
        &json!({"texts": [BIKE2, "nothing like it"]}),
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids(&body["results"][0]), ["a"]);
    assert!(
        body["results"][0]["neighbours"][0]["jaccard"]
            .as_f64()
            .unwrap()
            > 0.7
    );
    assert!(ids(&body["results"][1]).is_empty());
    // Dedup: a near-copy of an indexed document, one of an earlier one in the batch.
    let (status, body) = s.post(
        "/v1/documents?dedup=true",
        &json!([{"id": "c", "text": BIKE2}, {"id": "d", "text": "Brand new kayak"}, {"id": "d2", "text": "Brand new kayak!"}]),
        None,
    );
    assert_eq!(status, 200, "{body}");
    let r = &body["results"];
    assert_eq!(
        (
            r[0]["added"].clone(),
            r[0]["duplicate_of"].clone(),
            r[0]["of_indexed"].clone()
        ),
        (json!(false), json!("a"), json!(true))
    );
    assert_eq!(r[1]["added"], true);
    assert_eq!(
        (r[2]["duplicate_of"].clone(), r[2]["of_indexed"].clone()),
        (json!("d"), json!(false))
    );
    // By id: itself left out.
    s.post("/v1/documents", &json!([{"id": "a2", "text": BIKE2}]), None);
    let (status, body) = s.post("/v1/query", &json!({"ids": ["a"], "top": 5}), None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids(&body["results"][0]), ["a2"]);
    let (status, body) = s.post("/v1/query", &json!({"ids": ["nobody"]}), None);
    assert_eq!(
        (
            status,
            body["error"]["code"].clone(),
            body["error"]["field"].clone()
        ),
        (404, json!("not_found"), json!("ids[0]"))
    );
    let (status, body) = s.get("/v1/documents/a", None);
    assert_eq!(status, 200);
    assert!(body["shingles"].as_u64().unwrap() > 10);
    let (status, _) = s.send("DELETE", "/v1/documents/a", None, None);
    assert_eq!(status, 200);
    assert_eq!(s.get("/v1/documents/a", None).0, 404);
    assert_eq!(s.send("DELETE", "/v1/documents/a", None, None).0, 404);
    let (status, body) = s.post("/v1/documents/delete", &json!({"ids": ["b", "zz"]}), None);
    assert_eq!(status, 200);
    assert_eq!(
        (body["removed"].clone(), body["missing"].clone()),
        (json!(1), json!(["zz"]))
    );
    let (_, body) = s.post("/v1/query", &json!({"texts": [BIKE]}), None);
    assert_eq!(ids(&body["results"][0]), ["a2"]);
    let (status, stats) = s.get("/v1/stats", None);
    assert_eq!(status, 200);
    assert_eq!(stats["documents"], 2);
    assert_eq!(stats["parameters"]["seed"], 3);
    assert_eq!(s.get("/healthz", None).0, 200);
    assert_eq!(s.get("/readyz", None).1["ready"], true);
    let (status, metrics) = s.get("/metrics", None);
    assert_eq!(status, 200);
    let text = metrics.as_str().unwrap();
    assert!(text.contains("neardup_documents 2"), "{text}");
    assert!(
        text.contains(
            r#"neardup_http_requests_total{route="/v1/query",method="POST",status="200"}"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"neardup_errors_total{code="not_found"}"#),
        "{text}"
    );
    assert!(
        text.contains("neardup_http_request_duration_seconds_bucket"),
        "{text}"
    );
}

#[test]
fn a_containment_index_answers_which_document_is_inside_which() {
    let index_config = neardup::Config::builder()
        .measure(neardup::Measure::Containment)
        .threshold(0.8)
        .build()
        .unwrap();
    let s = Running::over(ServerConfig::default(), &index_config);
    let digest = format!("Weather: rain all weekend, clearing on Monday. {BIKE}. Sport: the cup final ends in a draw.");
    let (status, body) = s.post(
        "/v1/documents",
        &json!([{"id": "digest", "text": digest}, {"id": "chairs", "text": CHAIRS}]),
        None,
    );
    assert_eq!((status, body["added"].clone()), (200, json!(2)), "{body}");
    let (status, body) = s.post("/v1/query", &json!({"texts": [BIKE, digest]}), None);
    assert_eq!(status, 200, "{body}");
    // The listing is inside the digest, whole; its Jaccard with it is low.
    let n = &body["results"][0]["neighbours"];
    assert_eq!(ids(&body["results"][0]), ["digest"]);
    assert_eq!(
        (n[0]["containment"].clone(), n[0]["inside"].clone()),
        (json!(1.0), json!("query"))
    );
    assert!(n[0]["jaccard"].as_f64().unwrap() < 0.6, "{n}");
    // The digest is itself, whole: both are the same size, so the query is "inside".
    assert_eq!(ids(&body["results"][1]), ["digest"]);
    let n = &body["results"][1]["neighbours"][0];
    assert_eq!(
        (n["containment"].clone(), n["inside"].clone()),
        (json!(1.0), json!("query"))
    );
    // Keeping only new documents is not what a containment index does: a 400 naming it.
    let (status, body) = s.post(
        "/v1/documents?dedup=true",
        &json!([{"id": "x", "text": BIKE}]),
        None,
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("containment index"),
        "{body}"
    );
    let (_, stats) = s.get("/v1/stats", None);
    assert_eq!(stats["parameters"]["measure"], "containment");
    // Two documents share no token with more than 16 documents: none is common.
    assert_eq!(stats["common_tokens"], 0);
}

#[test]
fn the_openapi_description_names_every_route() {
    let s = Running::start(ServerConfig::default());
    let (status, body) = s.get("/v1/openapi.json", None);
    assert_eq!(status, 200);
    assert_eq!(body, serde_json::from_str::<Value>(OPENAPI).unwrap());
    let paths = body["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/v1/documents", &["post"][..]),
        ("/v1/documents/delete", &["post"]),
        ("/v1/documents/{id}", &["get", "delete"]),
        ("/v1/query", &["post"]),
        ("/v1/stats", &["get"]),
        ("/healthz", &["get"]),
        ("/readyz", &["get"]),
        ("/metrics", &["get"]),
        ("/v1/openapi.json", &["get"]),
    ] {
        for m in methods {
            assert!(paths[path][m].is_object(), "{path} {m}");
        }
    }
}

#[test]
fn tokens_are_required_where_configured() {
    let config = ServerConfig::builder()
        .write_token("w-token")
        .read_token("r-token")
        .build();
    let s = Running::start(config);
    let add = json!([{"id": "a", "text": BIKE}]);
    let (status, body) = s.post("/v1/documents", &add, None);
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (401, json!("unauthorized"))
    );
    assert_eq!(s.post("/v1/documents", &add, Some("r-token")).0, 401);
    assert_eq!(s.post("/v1/documents", &add, Some("w-token!")).0, 401);
    assert_eq!(s.post("/v1/documents", &add, Some("w-token")).0, 200);
    let q = json!({"texts": [BIKE]});
    assert_eq!(s.post("/v1/query", &q, None).0, 401);
    assert_eq!(s.post("/v1/query", &q, Some("nope")).0, 401);
    assert_eq!(s.post("/v1/query", &q, Some("r-token")).0, 200);
    assert_eq!(s.post("/v1/query", &q, Some("w-token")).0, 200);
    assert_eq!(s.get("/v1/stats", None).0, 401);
    assert_eq!(s.get("/metrics", None).0, 401);
    assert_eq!(
        s.send("DELETE", "/v1/documents/a", None, Some("r-token")).0,
        401
    );
    // Probes and the description stay open.
    assert_eq!(s.get("/healthz", None).0, 200);
    assert_eq!(s.get("/readyz", None).0, 200);
    assert_eq!(s.get("/v1/openapi.json", None).0, 200);
}

#[test]
fn a_public_address_needs_a_token_or_insecure() {
    let dir = tempfile::tempdir().unwrap();
    drop(IndexWriter::create(dir.path(), &neardup::Config::builder().build().unwrap()).unwrap());
    let public: SocketAddr = "0.0.0.0:7878".parse().unwrap();
    let loopback: SocketAddr = "127.0.0.1:7878".parse().unwrap();
    for (config, ok) in [
        (ServerConfig::default(), false),
        (ServerConfig::builder().insecure(true).build(), true),
        (ServerConfig::builder().write_token("t").build(), true),
        // The read token alone guards writes too.
        (ServerConfig::builder().read_token("t").build(), true),
    ] {
        let server = Server::open(dir.path(), config).unwrap();
        assert_eq!(server.check_address(public).is_ok(), ok);
        assert!(server.check_address(loopback).is_ok());
    }
}

#[test]
fn bad_requests_get_json_errors_naming_the_field() {
    let config = ServerConfig::builder().max_body(2_000).max_batch(3).build();
    let s = Running::start(config);
    // (path, body, status, code, field named)
    type Case = (
        &'static str,
        Vec<u8>,
        u16,
        &'static str,
        Option<&'static str>,
    );
    let cases: Vec<Case> = vec![
        ("/v1/documents", b"[{\"id\": \"a\", \"text\": ".to_vec(), 400, "bad_json", None),
        ("/v1/documents", br#"[{"id" "a"}]"#.to_vec(), 400, "bad_json", None),
        ("/v1/documents", br#"[{"id": "a", "text": 5}]"#.to_vec(), 400, "bad_request", Some("[0].text")),
        ("/v1/documents", br#"[{"id": "a"}]"#.to_vec(), 400, "bad_request", None),
        ("/v1/documents", br#"[{"id": "", "text": "x"}]"#.to_vec(), 400, "bad_request", Some("[0].id")),
        ("/v1/documents", br#"[{"id": "a", "text": "x", "colour": 1}]"#.to_vec(), 400, "bad_request", Some("[0].colour")),
        ("/v1/documents", br#"[{"id":"a","text":"x"}] trailing"#.to_vec(), 400, "bad_json", None),
        ("/v1/documents", serde_json::to_vec(&json!([{"id":"1","text":"x"},{"id":"2","text":"x"},{"id":"3","text":"x"},{"id":"4","text":"x"}])).unwrap(), 413, "batch_too_large", None),
        ("/v1/documents", serde_json::to_vec(&json!([{"id": "a", "text": "x".repeat(3_000)}])).unwrap(), 413, "body_too_large", None),
        ("/v1/query", br#"{"texts": ["x"], "ids": ["a"]}"#.to_vec(), 400, "bad_request", None),
        ("/v1/query", br#"{}"#.to_vec(), 400, "bad_request", None),
        ("/v1/query", br#"{"texts": ["x"], "threshold": 0.1}"#.to_vec(), 400, "bad_request", Some("threshold")),
        ("/v1/query", br#"{"texts": ["x"], "threshold": 7}"#.to_vec(), 400, "bad_request", Some("threshold")),
        ("/v1/query", br#"{"texts": ["x"], "top": -1}"#.to_vec(), 400, "bad_request", Some("top")),
        ("/v1/query", br#"{"texts": "x"}"#.to_vec(), 400, "bad_request", Some("texts")),
        ("/v1/documents/delete", br#"{"ids": [1]}"#.to_vec(), 400, "bad_request", Some("ids[0]")),
        ("/v1/nothing", b"{}".to_vec(), 404, "not_found", None),
    ];
    for (path, body, status, code, field) in cases {
        let (got, answer) = s.send("POST", path, Some(body.clone()), None);
        let what = format!(
            "{path} {}",
            String::from_utf8_lossy(&body[..body.len().min(80)])
        );
        assert_eq!(got, status, "{what}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{what}"
        );
        if let Some(f) = field {
            assert_eq!(answer["error"]["field"], f, "{what}: {answer}");
        }
        assert!(
            !answer.to_string().contains("/tmp"),
            "{what}: leaks a path: {answer}"
        );
    }
    let (status, _) = s.send("DELETE", "/v1/documents/%FF", None, None);
    assert!(status == 400 || status == 404, "{status}");
}

/// Opens a request whose body never finishes: it holds a slot until the timeout.
fn stalled_request(addr: SocketAddr) -> std::net::TcpStream {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"POST /v1/query HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"texts\":")
        .unwrap();
    stream
}

#[test]
fn past_the_cap_requests_get_503_with_retry_after_and_slow_ones_time_out() {
    let config = ServerConfig::builder()
        .max_concurrent(1)
        .timeout(Duration::from_millis(1_500))
        .build();
    let s = Running::start(config);
    let mut stalled = stalled_request(s.addr);
    std::thread::sleep(Duration::from_millis(300));
    let (status, body) = s.post("/v1/query", &json!({"texts": [BIKE]}), None);
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (503, json!("overloaded")),
        "{body}"
    );
    let retry = s.runtime.block_on(async {
        s.client
            .post(s.url("/v1/query"))
            .body("{}")
            .send()
            .await
            .unwrap()
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string())
    });
    assert_eq!(retry.as_deref(), Some("1"));
    // The stalled request runs out of time and frees its slot.
    stalled
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stalled.read(&mut buf) {
        bytes.extend_from_slice(&buf[..n]);
        if n == 0 || String::from_utf8_lossy(&bytes).contains("}}") {
            break;
        }
    }
    let answer = String::from_utf8_lossy(&bytes).into_owned();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("\"timeout\""), "{answer}");
    assert_eq!(s.post("/v1/query", &json!({"texts": [BIKE]}), None).0, 200);
}

#[test]
fn readers_during_writes_see_only_whole_commits() {
    let s = std::sync::Arc::new(Running::start(ServerConfig::default()));
    // Batch k: 20 copies of one text; a reader sees none of them or all 20.
    // Unrelated texts per batch (pseudo-random words), so batches never match each other.
    let text = |k: usize| -> String {
        (0..8)
            .map(|i| {
                format!(
                    "{:016x}",
                    ((k * 8 + i + 1) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let writer = {
        let s = std::sync::Arc::clone(&s);
        std::thread::spawn(move || {
            for k in 0..15 {
                let docs: Vec<Value> = (0..20)
                    .map(|i| json!({"id": format!("{k}-{i}"), "text": text(k)}))
                    .collect();
                assert_eq!(s.post("/v1/documents", &json!(docs), None).0, 200);
            }
        })
    };
    let readers: Vec<_> = (0..3)
        .map(|r| {
            let s = std::sync::Arc::clone(&s);
            std::thread::spawn(move || {
                for round in 0..60 {
                    let k = (round * 7 + r) % 15;
                    let (status, body) = s.post("/v1/query", &json!({"texts": [text(k)]}), None);
                    assert_eq!(status, 200);
                    let n = body["results"][0]["neighbours"].as_array().unwrap().len();
                    assert!(n == 0 || n == 20, "batch {k}: {n} of 20 visible");
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    let (_, stats) = s.get("/v1/stats", None);
    assert_eq!(stats["documents"], 300);
}

#[test]
fn concurrent_adds_are_committed_together_and_each_answered() {
    let s = std::sync::Arc::new(Running::start(ServerConfig::default()));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let s = std::sync::Arc::clone(&s);
            std::thread::spawn(move || {
                let mut generations = Vec::new();
                for i in 0..25 {
                    let id = format!("t{t}-{i}");
                    let text = format!(
                        "listing {id}: {:016x} {:016x}",
                        ((t * 100 + i + 1) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                        ((t * 100 + i + 7) as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9)
                    );
                    let (status, body) = s.post(
                        "/v1/documents",
                        &json!([{"id": id, "text": text}, {"id": "shared", "text": text}]),
                        None,
                    );
                    assert_eq!(status, 200, "{body}");
                    assert_eq!(body["results"][0], json!({"id": id, "added": true}));
                    assert_eq!(body["results"][1]["added"], true);
                    generations.push(body["generation"].as_u64().unwrap());
                    // Its own answer is committed: visible at once.
                    let (_, found) = s.get(&format!("/v1/documents/{id}"), None);
                    assert_eq!(found["id"], id.as_str());
                }
                generations
            })
        })
        .collect();
    let mut generations: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let (_, stats) = s.get("/v1/stats", None);
    // 200 documents of their own and one "shared" id that every request replaced.
    assert_eq!(stats["documents"], 201);
    generations.sort_unstable();
    generations.dedup();
    assert!(generations.len() <= 200, "{} commits", generations.len());
}

#[test]
fn adds_within_the_commit_delay_share_one_commit() {
    let config = ServerConfig::builder()
        .commit_delay(std::time::Duration::from_millis(400))
        .build();
    let s = std::sync::Arc::new(Running::start(config));
    let (_, before) = s.get("/v1/stats", None);
    let start = std::sync::Arc::new(std::sync::Barrier::new(6));
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (s, start) = (std::sync::Arc::clone(&s), std::sync::Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                let text = format!(
                    "a listing of its own, number {t}, {:016x}",
                    (t as u64 + 3).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                );
                let (status, body) = s.post(
                    "/v1/documents",
                    &json!([{"id": format!("d{t}"), "text": text}]),
                    None,
                );
                assert_eq!(status, 200, "{body}");
                body["generation"].as_u64().unwrap()
            })
        })
        .collect();
    let generations: std::collections::BTreeSet<u64> =
        threads.into_iter().map(|t| t.join().unwrap()).collect();
    // Six adds sent together, well within 400 ms of each other: one commit (two if the
    // first was taken before the others were queued).
    assert!(generations.len() <= 2, "{generations:?}");
    let first = before["generation"].as_u64().unwrap();
    assert!(generations.iter().all(|&g| g > first));
    let (_, stats) = s.get("/v1/stats", None);
    assert_eq!(stats["documents"], 6);
}

/// Requests that share one commit are each answered as if committed alone, in order: the
/// writer's report names the empty documents of the group's last word on each id; a
/// document a later request replaced is judged by its own text.
#[test]
fn requests_sharing_a_commit_are_answered_one_after_another() {
    let config = ServerConfig::builder()
        .commit_delay(Duration::from_millis(500))
        .build();
    let s = std::sync::Arc::new(Running::start(config));
    let requests = [
        // Nothing indexed yet: both added; the first "x" is superseded by the second.
        json!([{"id": "x", "text": CHAIRS}, {"id": "e", "text": ""}, {"id": "x", "text": BIKE}]),
        // "x" again (replaced), "e" now with a text, "y" empty here but not in the last.
        json!([{"id": "x", "text": BIKE2}, {"id": "e", "text": CHAIRS}, {"id": "y", "text": "   "}]),
        json!([{"id": "y", "text": BIKE}, {"id": "z", "text": ""}]),
    ];
    let threads: Vec<_> = requests
        .into_iter()
        .enumerate()
        .map(|(k, body)| {
            let s = std::sync::Arc::clone(&s);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(80 * k as u64));
                let (status, answer) = s.post("/v1/documents", &body, None);
                assert_eq!(status, 200, "{answer}");
                answer
            })
        })
        .collect();
    let answers: Vec<Value> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let results = |k: usize| answers[k]["results"].clone();
    assert_eq!(
        results(0),
        json!([
            {"id": "x", "added": false, "skipped": "superseded"},
            {"id": "e", "added": false, "skipped": "empty"},
            {"id": "x", "added": true},
        ])
    );
    assert_eq!(
        results(1),
        json!([
            {"id": "x", "added": true, "replaced": true},
            {"id": "e", "added": true},
            {"id": "y", "added": false, "skipped": "empty"},
        ])
    );
    assert_eq!(
        results(2),
        json!([{"id": "y", "added": true}, {"id": "z", "added": false, "skipped": "empty"}])
    );
    assert_eq!(
        answers
            .iter()
            .map(|a| a["added"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2, 1]
    );
    let (_, stats) = s.get("/v1/stats", None);
    assert_eq!(stats["documents"], 3);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// No body makes the server fail: every answer is 2xx or a 4xx JSON error.
    #[test]
    fn random_bodies_never_make_the_server_fail(
        path in prop::sample::select(vec!["/v1/documents", "/v1/documents?dedup=true", "/v1/query", "/v1/documents/delete"]),
        body in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..200),
            "\\PC{0,200}".prop_map(String::into_bytes),
            (proptest::collection::vec(("\\PC{0,12}", "\\PC{0,60}"), 0..5), any::<bool>()).prop_map(|(docs, as_query)| {
                let v = if as_query {
                    json!({"texts": docs.iter().map(|d| &d.1).collect::<Vec<_>>(), "top": docs.len()})
                } else {
                    json!(docs.iter().map(|(id, text)| json!({"id": id, "text": text})).collect::<Vec<_>>())
                };
                serde_json::to_vec(&v).unwrap()
            }),
        ],
    ) {
        let s = shared();
        let (status, answer) = s.send("POST", path, Some(body), None);
        prop_assert!((200..500).contains(&status), "{} {}", status, answer);
        if status >= 400 {
            prop_assert!(answer["error"]["code"].is_string(), "{}", answer);
        }
        prop_assert_eq!(s.get("/healthz", None).0, 200);
    }
}

fn shared() -> &'static Running {
    static SERVER: std::sync::OnceLock<Running> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| Running::start(ServerConfig::default()))
}
