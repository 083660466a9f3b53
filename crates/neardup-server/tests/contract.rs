//! The server answers as its OpenAPI description says: methods, errors as JSON, bodies
//! of the declared types, the routes' ids, tokens, metrics' labels.

mod common;

use std::time::Duration;

use common::{raw, raw_json, Running, BIKE, CHAIRS};
use neardup_server::{ServerConfig, OPENAPI};
use serde_json::{json, Value};

#[test]
fn a_method_a_route_does_not_take_is_405_with_json_before_any_token() {
    let config = ServerConfig::builder()
        .write_token("w")
        .read_token("r")
        .build();
    let s = Running::start(config);
    for (method, path) in [
        ("TRACE", "/metrics"),
        ("PUT", "/v1/query"),
        ("GET", "/v1/query"),
        ("PATCH", "/v1/documents/a"),
        ("GET", "/v1/compact"),
    ] {
        let (status, headers, body) = s.send_full(method, path, None, &[], None);
        assert_eq!(status, 405, "{method} {path}: {body}");
        assert_eq!(
            body["error"]["code"], "method_not_allowed",
            "{method} {path}"
        );
        assert!(headers.contains_key("allow"), "{method} {path}");
        assert_eq!(headers["content-type"], "application/json");
    }
}

#[test]
fn errors_of_the_http_layer_are_json() {
    let s = Running::start(ServerConfig::default());
    // A path that is no UTF-8.
    let (status, headers, body) = s.send_full("GET", "/v1/documents/%FF", None, &[], None);
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (400, Some("id")),
        "{body}"
    );
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(
        s.send("DELETE", "/v1/documents/%FF", None, None).1["error"]["code"],
        "bad_request"
    );
    // A long URI, long headers.
    let long = format!("/v1/documents/{}", "a".repeat(10_000));
    let (status, body) = s.get(&long, None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (414, Some("uri_too_long")),
        "{body}"
    );
    let big = "b".repeat(20_000);
    let (status, _, body) = s.send_full("GET", "/v1/stats", None, &[("x-big", &big)], None);
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (431, Some("headers_too_large")),
        "{body}"
    );
    // A compressed body: 415, not a JSON syntax error.
    let (status, _, body) = s.send_full(
        "POST",
        "/v1/query",
        Some(b"\x1f\x8b\x08\x00".to_vec()),
        &[("content-encoding", "gzip")],
        None,
    );
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (415, Some("unsupported_encoding")),
        "{body}"
    );
    // The same over a raw connection (no client in between).
    let answer = raw(
        s.addr,
        b"TRACE /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        Duration::from_secs(10),
    );
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    assert_eq!(raw_json(&answer)["error"]["code"], "method_not_allowed");
}

#[test]
fn bodies_declared_as_objects_refuse_arrays_and_surrogates_are_read_as_the_cli_reads_them() {
    let s = Running::start(ServerConfig::default());
    s.post(
        "/v1/documents",
        &json!([{"id": "id1", "text": BIKE}, {"id": "id2", "text": CHAIRS}]),
        None,
    );
    // [["id1", "id2"]] used to be read as {"ids": ["id1", "id2"]} and delete both.
    let (status, body) = s.post("/v1/documents/delete", &json!([["id1", "id2"]]), None);
    assert_eq!(status, 400, "{body}");
    let (status, body) = s.post("/v1/documents", &json!([["id3", "text"]]), None);
    assert_eq!(status, 400, "{body}");
    let (status, body) = s.post("/v1/query", &json!([[BIKE]]), None);
    assert_eq!(status, 400, "{body}");
    // Out of the declared range or type, even with nothing to query.
    for q in [
        json!({"ids": [], "threshold": 2}),
        json!({"ids": [], "top": 4294967296u64}),
        json!({"ids": [], "top": null}),
        json!({"texts": null, "ids": []}),
    ] {
        let (status, body) = s.post("/v1/query", &q, None);
        assert_eq!(status, 400, "{q}: {body}");
    }
    assert_eq!(s.get("/v1/stats", None).1["documents"], 2);
    // A lone surrogate escape is U+FFFD, as `neardup` reads JSONL.
    let (status, body) = s.send(
        "POST",
        "/v1/documents",
        Some(
            br#"[{"id": "s\ud800", "text": "lone \udc00 surrogate in a listing of old bikes"}]"#
                .to_vec(),
        ),
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["id"], "s\u{FFFD}");
    assert_eq!(s.get("/v1/documents/s%EF%BF%BD", None).0, 200);
}

#[test]
fn the_document_named_delete_is_read_and_removed_by_id() {
    let s = Running::start(ServerConfig::default());
    let (status, _) = s.post(
        "/v1/documents",
        &json!([{"id": "delete", "text": BIKE}]),
        None,
    );
    assert_eq!(status, 200);
    let (status, body) = s.get("/v1/documents/delete", None);
    assert_eq!(
        (status, body["id"].as_str()),
        (200, Some("delete")),
        "{body}"
    );
    let (status, body) = s.send("DELETE", "/v1/documents/delete", None, None);
    assert_eq!((status, body["removed"].as_u64()), (200, Some(1)), "{body}");
    assert_eq!(s.get("/v1/documents/delete", None).0, 404);
    assert_eq!(s.send("DELETE", "/v1/documents/delete", None, None).0, 404);
    // The batch removal is still POST.
    let (status, body) = s.post("/v1/documents/delete", &json!({"ids": ["delete"]}), None);
    assert_eq!((status, body["missing"].clone()), (200, json!(["delete"])));
}

#[test]
fn tokens_bearer_in_any_case_and_a_read_token_alone_guards_writes() {
    let s = Running::start(ServerConfig::builder().read_token("r-token").build());
    let add = json!([{"id": "a", "text": BIKE}]);
    assert_eq!(s.post("/v1/documents", &add, None).0, 401);
    assert_eq!(s.send("DELETE", "/v1/documents/a", None, None).0, 401);
    assert_eq!(s.post("/v1/compact", &json!({}), None).0, 401);
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let auth = format!("{scheme} r-token");
        let (status, _, body) = s.send_full(
            "POST",
            "/v1/documents",
            Some(serde_json::to_vec(&add).unwrap()),
            &[("authorization", &auth)],
            None,
        );
        assert_eq!(status, 200, "{scheme}: {body}");
        let (status, _, _) =
            s.send_full("GET", "/v1/stats", None, &[("authorization", &auth)], None);
        assert_eq!(status, 200, "{scheme}");
    }
    let (status, _, _) = s.send_full(
        "GET",
        "/v1/stats",
        None,
        &[("authorization", "Basic r-token")],
        None,
    );
    assert_eq!(status, 401);
    // Empty tokens and zero limits are refused, not taken as none or as one.
    for config in [
        ServerConfig::builder().write_token("").build(),
        ServerConfig::builder().read_token(" ").build(),
        ServerConfig::builder().max_batch(0).build(),
        ServerConfig::builder().max_concurrent(0).build(),
        ServerConfig::builder()
            .timeout(Duration::from_secs(1 << 40))
            .build(),
    ] {
        let e = neardup_server::Server::open(s.path(), config).unwrap_err();
        assert!(matches!(e, neardup_server::Error::Config(_)), "{e}");
    }
}

#[test]
fn metrics_labels_are_bounded_methods_and_route_templates() {
    let s = Running::start(ServerConfig::default());
    for i in 0..20 {
        s.send(&format!("MADEUP{i}"), "/v1/stats", None, None);
        s.get(&format!("/v1/documents/id-{i}"), None);
        s.get(&format!("/no/such/{i}"), None);
    }
    let (_, metrics) = s.get("/metrics", None);
    let text = metrics.as_str().unwrap();
    assert!(!text.contains("MADEUP"), "{text}");
    assert!(
        text.contains(r#"route="/v1/stats",method="other",status="405""#),
        "{text}"
    );
    assert!(
        text.contains(r#"route="/v1/documents/{id}",method="GET",status="404""#),
        "{text}"
    );
    assert!(!text.contains("id-1"), "{text}");
    assert!(!text.contains("/no/such"), "{text}");
}

#[test]
fn the_description_documents_every_status_and_the_security_of_each_operation() {
    let api: Value = serde_json::from_str(OPENAPI).unwrap();
    for (path, item) in api["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if method == "parameters" {
                continue;
            }
            let responses = op["responses"].as_object().unwrap();
            // /healthz is answered before any limit: only its method can be wrong.
            let statuses: &[&str] = if path == "/healthz" {
                &["405"]
            } else {
                &["405", "414", "431", "500", "503"]
            };
            for &status in statuses {
                assert!(
                    responses.contains_key(status),
                    "{method} {path}: no {status}"
                );
            }
            let guarded = !matches!(path.as_str(), "/healthz" | "/readyz" | "/v1/openapi.json");
            assert_eq!(op.get("security").is_some(), guarded, "{method} {path}");
            if guarded {
                assert!(responses.contains_key("401"), "{method} {path}: no 401");
            }
            if op.get("requestBody").is_some() {
                for status in ["400", "413", "415"] {
                    assert!(
                        responses.contains_key(status),
                        "{method} {path}: no {status}"
                    );
                }
            }
        }
    }
}
