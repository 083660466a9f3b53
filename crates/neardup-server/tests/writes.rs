//! Writes through the writer's queue: compaction over HTTP, a read-only server beside
//! another writer, what is served after a write whose merge failed.

mod common;

use std::time::{Duration, Instant};

use common::{index_config, unique_text, Running, BIKE};
use neardup_index::{IndexWriter, Searcher};
use neardup_server::{Server, ServerConfig};
use serde_json::json;

#[test]
fn compaction_over_http_merges_every_segment_and_drops_the_deleted() {
    let s = Running::start(ServerConfig::builder().write_token("w").build());
    for k in 0..3 {
        let docs: Vec<_> = (0..5)
            .map(|i| json!({"id": format!("{k}-{i}"), "text": unique_text(k * 10 + i)}))
            .collect();
        assert_eq!(s.post("/v1/documents", &json!(docs), Some("w")).0, 200);
    }
    assert_eq!(
        s.send("DELETE", "/v1/documents/0-0", None, Some("w")).0,
        200
    );
    let (_, before) = s.get("/v1/stats", None);
    assert!(before["segments"].as_u64().unwrap() > 1, "{before}");
    assert_eq!(s.post("/v1/compact", &json!(null), None).0, 401);
    let (status, body) = s.send("POST", "/v1/compact", None, Some("w"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["documents"].as_u64(), body["segments"].as_u64()),
        (Some(14), Some(1)),
        "{body}"
    );
    let (_, after) = s.get("/v1/stats", None);
    assert_eq!(
        (after["segments"].as_u64(), after["deleted"].as_u64()),
        (Some(1), Some(0)),
        "{after}"
    );
    assert_eq!(after["generation"], body["generation"]);
    assert_eq!(s.get("/v1/documents/2-4", None).0, 200);
}

#[test]
fn a_read_only_server_runs_beside_a_writer_refuses_writes_and_serves_new_commits() {
    let dir = tempfile::tempdir().unwrap();
    // The test holds the writer (and its lock) the whole time.
    let mut writer = IndexWriter::create(dir.path(), &index_config()).unwrap();
    writer.add(&[("a", BIKE)]).unwrap();
    let config = ServerConfig::builder()
        .read_only(true)
        .reload_every(Duration::from_millis(50))
        .build();
    let path = dir.path().to_path_buf();
    let s = Running::in_dir(dir, config, None);
    assert_eq!(s.get("/v1/documents/a", None).0, 200);
    for (method, path, body) in [
        (
            "POST",
            "/v1/documents",
            Some(br#"[{"id": "b", "text": "x y z"}]"#.to_vec()),
        ),
        (
            "POST",
            "/v1/documents?dedup=true",
            Some(br#"[{"id": "b", "text": "x y z"}]"#.to_vec()),
        ),
        ("DELETE", "/v1/documents/a", None),
        (
            "POST",
            "/v1/documents/delete",
            Some(br#"{"ids": ["a"]}"#.to_vec()),
        ),
        ("POST", "/v1/compact", None),
    ] {
        let (status, body) = s.send(method, path, body, None);
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (403, Some("read_only")),
            "{method} {path}"
        );
        assert!(body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read-only"));
    }
    // Commits of the other writer are served once seen.
    writer.add(&[("b", unique_text(1).as_str())]).unwrap();
    writer.remove(&["a"]).unwrap();
    let generation = writer.searcher().generation();
    let until = Instant::now() + Duration::from_secs(20);
    while s.get("/readyz", None).1["generation"].as_u64() != Some(generation) {
        assert!(Instant::now() < until, "the new commit was not picked up");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.get("/v1/documents/b", None).0, 200);
    assert_eq!(s.get("/v1/documents/a", None).0, 404);
    assert_eq!(s.get("/v1/stats", None).1["documents"], 1);
    let _ = path;
}

#[test]
fn a_read_only_server_opens_a_read_only_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = IndexWriter::create(dir.path(), &index_config()).unwrap();
    writer.add(&[("a", BIKE)]).unwrap();
    drop(writer);
    let mut perms = std::fs::metadata(dir.path()).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
    std::fs::set_permissions(dir.path(), perms.clone()).unwrap();
    let opened = Server::open(dir.path(), ServerConfig::builder().read_only(true).build());
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(dir.path(), perms).unwrap();
    opened.unwrap();
}

#[test]
fn after_an_add_whose_merge_fails_the_committed_generation_is_served() {
    let s = Running::start(ServerConfig::default());
    for k in 0..3 {
        let (status, _) = s.post(
            "/v1/documents",
            &json!([{"id": format!("d{k}"), "text": unique_text(k)}]),
            None,
        );
        assert_eq!(status, 200);
    }
    // The fourth segment makes four of a tier: the merge that follows writes the next
    // segment's name, where a directory now stands.
    let highest = std::fs::read_dir(s.path())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".seg")?.parse::<u64>().ok()
        })
        .max()
        .unwrap();
    for n in highest + 2..highest + 4 {
        std::fs::create_dir(s.path().join(format!("{n:08}.seg.tmp"))).unwrap();
        std::fs::create_dir(s.path().join(format!("{n:08}.seg"))).unwrap();
    }
    let (status, body) = s.post(
        "/v1/documents",
        &json!([{"id": "d3", "text": unique_text(3)}]),
        None,
    );
    // Committed durably before the merge failed: on disk, and served as it is on disk.
    let on_disk = Searcher::open(s.path()).unwrap();
    assert!(on_disk.contains("d3"), "{status} {body}");
    let (_, ready) = s.get("/readyz", None);
    assert_eq!(
        ready["generation"].as_u64(),
        Some(on_disk.generation()),
        "{status} {body}"
    );
    assert_eq!(s.get("/v1/documents/d3", None).0, 200);
    let (_, stats) = s.get("/v1/stats", None);
    assert_eq!(stats["documents"], 4);
    // The merge did fail: four segments still.
    assert_eq!(stats["segments"], 4, "{stats}");
}
