//! `neardup serve` as a process: it starts, answers HTTP, refuses what it must, and stops
//! on SIGTERM without losing an acknowledged write or committing half of one.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command as Process, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use neardup_index::Searcher;
use serde_json::{json, Value};

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pypi-summaries.jsonl")
}

/// A built index of the shipped sample, in a temporary directory.
fn built_index() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx").display().to_string();
    let out = Process::cargo_bin("neardup")
        .unwrap()
        .args(["index", "build", &index, corpus().to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, index)
}

/// Starts `neardup serve` on a free loopback port; answers the child and its address.
fn serve(index: &str, extra: &[&str]) -> (Child, SocketAddr) {
    #[allow(clippy::zombie_processes)]
    let mut child = Process::cargo_bin("neardup")
        .unwrap()
        .args(["serve", index, "--addr", "127.0.0.1:0"])
        .args(extra)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server exited before serving"
        );
        if let Some(rest) = line.split("http://").nth(1) {
            let addr = rest.split_whitespace().next().unwrap().parse().unwrap();
            // Keep draining its log so it never blocks on a full pipe.
            std::thread::spawn(move || {
                let mut sink = String::new();
                let _ = stderr.read_to_string(&mut sink);
            });
            return (child, addr);
        }
    }
}

/// One HTTP/1.1 request on a fresh connection: (status, body), or the I/O error.
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &[u8],
) -> std::io::Result<(u16, Value)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line: {text:?}")))?;
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    Ok((
        status,
        serde_json::from_str(body).unwrap_or(Value::String(body.to_string())),
    ))
}

fn sigterm(child: &Child) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
}

#[test]
fn serves_the_index_and_stops_cleanly_on_sigterm() {
    let (_dir, index) = built_index();
    let (mut child, addr) = serve(&index, &[]);
    let (status, body) = request(
        addr,
        "POST",
        "/v1/query",
        br#"{"ids": ["azadmin"], "top": 3}"#,
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["results"][0]["neighbours"].as_array().unwrap().len(),
        3
    );
    let (status, body) = request(addr, "GET", "/readyz", b"").unwrap();
    assert_eq!((status, body["ready"].clone()), (200, json!(true)));
    sigterm(&child);
    let code = child.wait().unwrap();
    assert_eq!(code.code(), Some(0));
}

#[test]
fn sigterm_during_a_write_loses_no_acknowledged_document_and_commits_nothing_half() {
    let (_dir, index) = built_index();
    let before = Searcher::open(&index).unwrap().len();
    for delay_ms in [0u64, 30, 120] {
        let (mut child, addr) = serve(&index, &[]);
        let start = Searcher::open(&index).unwrap().len();
        let docs: Vec<Value> = (0..4_000)
            .map(|i| json!({"id": format!("new-{delay_ms}-{i}"), "text": format!("a fresh listing number {i}, written while the server stops ({delay_ms})")}))
            .collect();
        let body = serde_json::to_vec(&docs).unwrap();
        let sender = std::thread::spawn(move || request(addr, "POST", "/v1/documents", &body));
        std::thread::sleep(Duration::from_millis(delay_ms));
        sigterm(&child);
        let answer = sender.join().unwrap();
        let code = child.wait().unwrap();
        assert_eq!(code.code(), Some(0), "delay {delay_ms}");
        let after = Searcher::open(&index).unwrap().len();
        eprintln!(
            "SIGTERM {delay_ms} ms into the write: answer {:?}, documents {start} -> {after}",
            answer.as_ref().map(|a| a.0)
        );
        match answer {
            Ok((200, _)) => assert_eq!(
                after,
                start + 4_000,
                "delay {delay_ms}: acknowledged, so all of it"
            ),
            // Refused or cut off: all of it or none of it.
            _ => assert!(
                after == start || after == start + 4_000,
                "delay {delay_ms}: {after} of {start} + 4000"
            ),
        }
    }
    assert!(Searcher::open(&index).unwrap().len() >= before);
}

#[test]
fn refuses_a_public_address_without_a_token_and_an_empty_token_file() {
    let (dir, index) = built_index();
    let out = Process::cargo_bin("neardup")
        .unwrap()
        .args(["serve", &index, "--addr", "0.0.0.0:0"])
        .env_remove("NEARDUP_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a loopback address"));
    let empty = dir.path().join("token");
    std::fs::write(&empty, "\n").unwrap();
    let out = Process::cargo_bin("neardup")
        .unwrap()
        .args(["serve", &index, "--token-file", empty.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("token file is empty"));
}

#[test]
fn a_token_from_the_environment_guards_writes() {
    let (_dir, index) = built_index();
    let mut child = Process::cargo_bin("neardup")
        .unwrap()
        .args(["serve", &index, "--addr", "127.0.0.1:0"])
        .env("NEARDUP_TOKEN", "from-env")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("writes need the token"), "{line}");
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (status, _) = request(
        addr,
        "POST",
        "/v1/documents",
        br#"[{"id": "x", "text": "y z w"}]"#,
    )
    .unwrap();
    assert_eq!(status, 401);
    sigterm(&child);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn bad_limits_and_empty_tokens_are_refused_with_exit_2_and_the_flag_named() {
    let (_dir, index) = built_index();
    for (args, env, says) in [
        (&["--timeout", "1e20"][..], None, "--timeout"),
        (&["--timeout", "NaN"], None, "--timeout"),
        (&["--timeout", "0"], None, "--timeout"),
        (&["--header-timeout=-1"], None, "--header-timeout"),
        (&["--keep-alive", "inf"], None, "--keep-alive"),
        (&["--shutdown-timeout", "1e300"], None, "--shutdown-timeout"),
        (&["--max-batch", "0"], None, "--max-batch 0"),
        (&["--max-concurrent", "0"], None, "--max-concurrent 0"),
        (&["--max-connections", "0"], None, "--max-connections 0"),
        (&["--max-body", "0"], None, "--max-body 0"),
        (&["--memory", "1"], None, "--memory"),
        (&[], Some(("NEARDUP_TOKEN", "")), "NEARDUP_TOKEN"),
        (
            &[],
            Some(("NEARDUP_READ_TOKEN", "  ")),
            "NEARDUP_READ_TOKEN",
        ),
    ] {
        let mut cmd = Process::cargo_bin("neardup").unwrap();
        cmd.args(["serve", &index, "--addr", "127.0.0.1:0"])
            .args(args)
            .env_remove("NEARDUP_TOKEN")
            .env_remove("NEARDUP_READ_TOKEN");
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?} {env:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_read_token_alone_guards_writes_too() {
    let (dir, index) = built_index();
    let token = dir.path().join("read-token");
    std::fs::write(&token, "r-secret\n").unwrap();
    let (mut child, addr) = serve(&index, &["--read-token-file", token.to_str().unwrap()]);
    let (status, _) = request(
        addr,
        "POST",
        "/v1/documents",
        br#"[{"id": "x", "text": "y z w"}]"#,
    )
    .unwrap();
    assert_eq!(status, 401);
    let (status, _) = request(addr, "POST", "/v1/compact", b"").unwrap();
    assert_eq!(status, 401);
    sigterm(&child);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn sigterm_is_not_held_by_a_half_sent_request() {
    let (_dir, index) = built_index();
    let (mut child, addr) = serve(&index, &["--timeout", "600", "--shutdown-timeout", "1"]);
    // A request whose body never comes: in flight for up to the 600 s timeout.
    let mut stalled = TcpStream::connect(addr).unwrap();
    stalled
        .write_all(b"POST /v1/query HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"texts\":")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    sigterm(&child);
    let until = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(code) = child.try_wait().unwrap() {
            assert_eq!(code.code(), Some(0));
            break;
        }
        if std::time::Instant::now() > until {
            let _ = child.kill();
            panic!("still running 30 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stalled);
}

#[test]
fn a_read_only_server_runs_beside_an_index_add_and_serves_its_commit() {
    let (dir, index) = built_index();
    let (mut child, addr) = serve(&index, &["--read-only"]);
    let (status, body) = request(
        addr,
        "POST",
        "/v1/documents",
        br#"[{"id": "x", "text": "y z w"}]"#,
    )
    .unwrap();
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (403, json!("read_only"))
    );
    // The server holds no writer lock: an add runs (and does not wait) beside it.
    let new = dir.path().join("new.jsonl");
    std::fs::write(
        &new,
        "{\"id\": \"fresh-1\", \"text\": \"a listing written beside a read-only server\"}\n",
    )
    .unwrap();
    let out = Process::cargo_bin("neardup")
        .unwrap()
        .args(["index", "add", &index, new.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while request(addr, "GET", "/v1/documents/fresh-1", b"")
        .unwrap()
        .0
        != 200
    {
        assert!(
            std::time::Instant::now() < until,
            "the new commit was not served"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    sigterm(&child);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_second_server_on_one_index_says_whom_it_waits_for_and_gives_up_after_wait() {
    let (_dir, index) = built_index();
    let (mut first, _) = serve(&index, &[]);
    let out = Process::cargo_bin("neardup")
        .unwrap()
        .args(["serve", &index, "--addr", "127.0.0.1:0", "--wait", "0.3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!(
            "waiting for {index}: another writer, process {},",
            first.id()
        )),
        "{err}"
    );
    assert!(
        err.contains("holds the index's lock; gave up after 0.3 s"),
        "{err}"
    );
    // A read-only server takes no lock: it serves beside the first.
    let (mut reader, addr) = serve(&index, &["--read-only"]);
    assert_eq!(request(addr, "GET", "/readyz", b"").unwrap().0, 200);
    for child in [&mut first, &mut reader] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
