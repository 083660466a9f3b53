//! Writes waiting for the writer hold no thread: many concurrent `?dedup=true` adds and
//! removals take one blocking thread, and reads are answered meanwhile. (A test binary
//! of its own: it counts the process's threads.)

mod common;

use std::sync::Arc;

use common::{unique_text, Running, BIKE};
use neardup_server::ServerConfig;
use serde_json::json;

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn waiting_writes_do_not_each_take_a_blocking_thread() {
    let s = Arc::new(Running::start(
        ServerConfig::builder()
            .commit_delay(std::time::Duration::ZERO)
            .build(),
    ));
    let (status, _) = s.post("/v1/documents", &json!([{"id": "r", "text": BIKE}]), None);
    assert_eq!(status, 200);
    let before = threads();
    let start = Arc::new(std::sync::Barrier::new(48));
    let writers: Vec<_> = (0..48)
        .map(|w| {
            let (s, start) = (Arc::clone(&s), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                let (status, body) = if w % 3 == 0 {
                    s.post("/v1/documents/delete", &json!({"ids": [format!("never-{w}")]}), None)
                } else {
                    let docs: Vec<_> = (0..400)
                        .map(|i| json!({"id": format!("w{w}-{i}"), "text": unique_text(w * 1000 + i)}))
                        .collect();
                    s.post("/v1/documents?dedup=true", &json!(docs), None)
                };
                assert_eq!(status, 200, "{body}");
                // Reads are answered while writes wait (short ones on the threads that
                // read requests: the blocking threads counted are the writes').
                let (status, _) = s.post("/v1/query", &json!({"texts": [BIKE]}), None);
                assert_eq!(status, 200);
            })
        })
        .collect();
    // The test's own threads are counted before the server's grow.
    let with_clients = threads();
    for w in writers {
        w.join().unwrap();
    }
    // tokio keeps an idle blocking thread for ten seconds: what the writes took is still
    // there to count. Before, each waiting write held one (10 to 40 here).
    let grown = threads().saturating_sub(with_clients.max(before));
    assert!(grown <= 3, "{grown} more threads for 48 concurrent writes");
    let (_, stats) = s.get("/v1/stats", None);
    assert_eq!(stats["documents"].as_u64(), Some(1 + 32 * 400));
}
