//! The server (`neardup-server`) as an engine: an index served over HTTP on a loopback
//! port, the corpus posted in two batches, every document queried with `POST /v1/query`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use neardup::{Pipeline, Similarity};
use neardup_index::IndexWriter;
use serde_json::{json, Value};

use super::{from_neighbours, Answer};

/// The pairs and clusters of a corpus served over HTTP: posted in two batches, every
/// document queried with `POST /v1/query`.
pub(super) fn served(pipeline: &Pipeline, texts: &[String]) -> Answer {
    let dir = tempfile::tempdir().expect("a temporary directory");
    drop(IndexWriter::create(dir.path(), pipeline.config()).expect("an index"));
    let server = neardup_server::Server::open(dir.path(), Default::default()).expect("a server");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = runtime.spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));
    let docs: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"id": i.to_string(), "text": t}))
        .collect();
    let half = docs.len() / 2;
    post(addr, "/v1/documents", json!(docs[..half]));
    post(addr, "/v1/documents", json!(docs[half..]));
    let answer = from_neighbours(pipeline, texts, |text| {
        let found = post(addr, "/v1/query", json!({ "texts": [text] }));
        found["results"][0]["neighbours"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let similarity = Similarity {
                    jaccard: n["jaccard"].as_f64(),
                    estimate: n["estimate"].as_f64(),
                    truncated: n["truncated"].as_bool().unwrap_or(false),
                    hamming: None,
                };
                (n["id"].as_str().unwrap().parse().unwrap(), similarity)
            })
            .collect()
    });
    let _ = stop.send(());
    runtime.block_on(serving).unwrap().expect("served");
    answer
}

/// One `POST` of a JSON body on a connection of its own; the answer must be 200.
fn post(addr: SocketAddr, path: &str, body: Value) -> Value {
    let body = serde_json::to_vec(&body).unwrap();
    let mut stream = TcpStream::connect(addr).expect("a connection");
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nhost: cases\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 200"), "{path}: {raw}");
    serde_json::from_str(raw.split("\r\n\r\n").nth(1).unwrap()).unwrap()
}
