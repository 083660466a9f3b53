//! What a client cannot take from the server: connections (half-sent heads, idle
//! keep-alives, a cap), the shutdown, the memory budget.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::{raw, raw_json, Running, BIKE};
use neardup_server::ServerConfig;
use serde_json::json;

/// A connection that sent part of a request's head and nothing more.
fn half_sent_head(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"POST /v1/query HTTP/1.1\r\nhost: x\r\ncontent-type: appl")
        .unwrap();
    stream
}

/// True if the server closes `stream` (end of stream or reset) within `wait`; whatever
/// it sends first is ignored.
fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let until = Instant::now() + wait;
    let mut buf = [0u8; 1024];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn half_sent_heads_are_dropped_after_the_header_timeout_and_others_are_served() {
    let config = ServerConfig::builder()
        .header_timeout(Duration::from_secs(1))
        .max_connections(300)
        .build();
    let s = Running::start(config);
    // Slowloris: 150 requests whose heads never end.
    let mut loris: Vec<TcpStream> = (0..150).map(|_| half_sent_head(s.addr)).collect();
    // New requests are still served meanwhile.
    for _ in 0..3 {
        let (status, body) = s.post("/v1/query", &json!({"texts": [BIKE]}), None);
        assert_eq!(status, 200, "{body}");
    }
    // And the half-sent ones are closed by the server after the header timeout (one
    // second; ten allowed for a loaded machine).
    let until = Instant::now() + Duration::from_secs(10);
    let open = loris
        .iter_mut()
        .map(|l| closed_within(l, until.saturating_duration_since(Instant::now())))
        .filter(|closed| !closed)
        .count();
    assert_eq!(open, 0, "{open} of 150 half-sent requests still open");
}

#[test]
fn past_the_connection_cap_new_connections_wait_for_a_free_slot() {
    let config = ServerConfig::builder()
        .header_timeout(Duration::from_secs(3))
        .max_connections(20)
        .build();
    let s = Running::start(config);
    let loris: Vec<TcpStream> = (0..20).map(|_| half_sent_head(s.addr)).collect();
    std::thread::sleep(Duration::from_millis(200));
    // The 21st connection is not served while the 20 hold every slot...
    let mut waiting = TcpStream::connect(s.addr).unwrap();
    waiting
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    waiting
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 256];
    let early = waiting.read(&mut buf);
    assert!(
        early.as_ref().is_err_and(|e| matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        )),
        "answered past the cap: {early:?}"
    );
    // ...and is once the header timeout has closed them.
    waiting
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = waiting.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    drop(loris);
}

#[test]
fn idle_keep_alive_connections_are_closed() {
    let config = ServerConfig::builder()
        .keep_alive(Duration::from_millis(300))
        .build();
    let s = Running::start(config);
    let mut stream = TcpStream::connect(s.addr).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&answer).contains("ok\n") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed before answering");
        answer.extend_from_slice(&buf[..n]);
    }
    // Kept alive after the answer, then closed when idle.
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
    assert!(closed_within(&mut stream, Duration::from_secs(10)));
}

#[test]
fn a_half_sent_request_does_not_hold_the_shutdown_past_its_timeout() {
    let config = ServerConfig::builder()
        .timeout(Duration::from_secs(600))
        .header_timeout(Duration::from_secs(600))
        .shutdown_timeout(Duration::from_millis(500))
        .build();
    let mut s = Running::start(config);
    // A body that never ends: its request is in flight until the (long) timeout.
    let mut body = TcpStream::connect(s.addr).unwrap();
    body.write_all(b"POST /v1/query HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"texts\":")
        .unwrap();
    let head = half_sent_head(s.addr);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        s.stop_within(Duration::from_secs(20)),
        "the server was still waiting for a half-sent request 20 s after being told to stop"
    );
    drop((body, head));
}

/// A server whose largest body is 64 KiB and whose memory budget holds one such body and
/// a little more; answers it and the largest body.
fn small_budget() -> (Running, usize) {
    let max_body = 64 << 10;
    let config = ServerConfig::builder()
        .max_body(max_body)
        .memory(max_body * neardup_server::AMPLIFICATION + (64 << 10))
        .build();
    (Running::start(config), max_body)
}

#[test]
fn bodies_in_flight_share_a_memory_budget() {
    let (s, max_body) = small_budget();
    // A body of the largest size, all but its last bytes sent: what arrived holds its
    // share until answered.
    let mut stalled = TcpStream::connect(s.addr).unwrap();
    write!(
        stalled,
        "POST /v1/documents HTTP/1.1\r\nhost: x\r\ncontent-length: {max_body}\r\n\r\n[{{\"id\": \"a\", \"text\": \"{}",
        "x".repeat(max_body - 100)
    )
    .unwrap();
    let big = serde_json::to_vec(&json!({"texts": ["x".repeat(20_000)]})).unwrap();
    // Refused once the stalled request holds its share (as soon as the server has read
    // its head).
    let refused = (0..100).find_map(|_| {
        let (status, headers, body) =
            s.send_full("POST", "/v1/query", Some(big.clone()), &[], None);
        if status == 503 {
            return Some((headers, body));
        }
        assert_eq!(status, 200, "{body}");
        std::thread::sleep(Duration::from_millis(100));
        None
    });
    let (headers, body) = refused.expect("never refused while the budget was held");
    assert_eq!(body["error"]["code"], "overloaded", "{body}");
    assert_eq!(headers.get("retry-after").unwrap(), "1");
    // Requests without a body are not held back.
    assert_eq!(s.get("/v1/stats", None).0, 200);
    // Once the stalled request is gone, its share is back.
    drop(stalled);
    let mut status = 0;
    for _ in 0..50 {
        status = s.send("POST", "/v1/query", Some(big.clone()), None).0;
        if status == 200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(status, 200);
}

#[test]
fn a_declared_length_holds_nothing_until_its_bytes_arrive() {
    let (s, max_body) = small_budget();
    // Heads that promise the largest body and send none of it: were the promise reserved,
    // any one of them would spend the budget.
    let _promises: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut stream = TcpStream::connect(s.addr).unwrap();
            write!(
                stream,
                "POST /v1/query HTTP/1.1\r\nhost: x\r\ncontent-length: {max_body}\r\n\r\n"
            )
            .unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let big = serde_json::to_vec(&json!({"texts": ["x".repeat(20_000)]})).unwrap();
    let (status, body) = s.send("POST", "/v1/query", Some(big), None);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn healthz_answers_past_the_concurrency_cap() {
    let config = ServerConfig::builder()
        .max_concurrent(1)
        .timeout(Duration::from_secs(30))
        .build();
    let s = Running::start(config);
    let _stalled = {
        let mut stream = TcpStream::connect(s.addr).unwrap();
        stream
            .write_all(
                b"POST /v1/query HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"texts\":",
            )
            .unwrap();
        stream
    };
    // The stalled request holds the one slot as soon as the server has read its head.
    let full = (0..100).any(|_| {
        let busy = s.get("/v1/stats", None).0 == 503;
        if !busy {
            std::thread::sleep(Duration::from_millis(100));
        }
        busy
    });
    assert!(full, "the cap was never reached");
    // Liveness: a busy server is alive.
    assert_eq!(s.get("/healthz", None).0, 200);
    let answer = raw(
        s.addr,
        b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        Duration::from_secs(10),
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let _ = raw_json;
}

/// A whole request whose body is sent chunked (no length), on a new connection.
fn chunked(addr: SocketAddr, path: &str, body: &str) -> String {
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    raw(addr, request.as_bytes(), Duration::from_secs(30))
}

/// The bytes of the memory budget the server says its requests in flight hold.
fn memory_held(s: &Running) -> u64 {
    let (status, metrics) = s.get("/metrics", None);
    assert_eq!(status, 200);
    let text = metrics.as_str().unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("neardup_request_memory_bytes "))
        .unwrap_or_else(|| panic!("no memory gauge in {text}"));
    line.trim().parse().unwrap()
}

#[test]
fn bodies_without_a_length_take_their_share_as_they_arrive() {
    let (s, _) = small_budget();
    // 20 KB of a chunked body, then nothing: it holds 40 times 20 KB, not the largest
    // body's share.
    let mut stalled = TcpStream::connect(s.addr).unwrap();
    let part = format!("{{\"texts\": [\"{}", "x".repeat(20_000));
    write!(
        stalled,
        "POST /v1/query HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{part}\r\n",
        part.len()
    )
    .unwrap();
    let small = json!({"texts": ["y".repeat(20_000)]}).to_string();
    let large = json!({"texts": ["z".repeat(60_000)]}).to_string();
    // Once the server has counted the stalled one's bytes (its own gauge says so; how
    // soon depends on the machine's load, so the test waits on the count, not on time)...
    let share = (part.len() * neardup_server::AMPLIFICATION) as u64;
    let counted = (0..600).any(|_| {
        if memory_held(&s) >= share {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
        false
    });
    assert!(
        counted,
        "the stalled body's {share} bytes were never counted"
    );
    // ...a large one is refused...
    let answer = chunked(s.addr, "/v1/query", &large);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert_eq!(raw_json(&answer)["error"]["code"], "overloaded", "{answer}");
    // ...and a small one still fits beside it.
    let answer = chunked(s.addr, "/v1/query", &small);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The stalled one's share is given back when its client goes.
    drop(stalled);
    let released = (0..600).any(|_| {
        if memory_held(&s) == 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
        false
    });
    assert!(released, "a closed request's share was never given back");
}
