//! Load on a running `neardup serve`: CLIENTS concurrent connections for SECONDS, each
//! sending one request after another: a query of one short text (a random line of
//! QUERIES), or with probability ADD_SHARE an add of one new short document. Prints one
//! JSON object: requests by kind, throughput, latency percentiles, errors by kind; writes
//! the id of every add answered 2xx to ACKED (one per line).
//!
//! HTTP/1.1 by hand over keep-alive connections, on one thread: requests are bytes built
//! once, answers are read to their Content-Length. A general client (reqwest, on tokio's
//! two-thread runtime) spent 45 µs of CPU per request, a third of what the server spent,
//! on the same two cores the server needs.
//!
//!   load ADDR QUERIES.jsonl CLIENTS SECONDS ADD_SHARE ACKED ID_PREFIX [TOKEN] [--top K]
//!
//! With `--top K` each query asks for its K most similar neighbours only.

use std::io;
use std::rc::Rc;
use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Tally {
    queries: Histogram<u64>,
    adds: Histogram<u64>,
    acked: Vec<String>,
    errors: std::collections::BTreeMap<String, u64>,
}

fn percentile(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    h.value_at_quantile(q) as f64 / 1e3 // µs -> ms
}

/// A POST with a JSON body, whole.
fn request(addr: &str, path: &str, body: &[u8], token: Option<&str>) -> Vec<u8> {
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{auth}\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    req
}

/// Sends `req` and reads the whole answer into `buf`; its status.
async fn exchange(stream: &mut TcpStream, buf: &mut Vec<u8>, req: &[u8]) -> io::Result<u16> {
    stream.write_all(req).await?;
    buf.clear();
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    loop {
        if let Some(end) = memchr::memmem::find(buf, b"\r\n\r\n") {
            let head = std::str::from_utf8(&buf[..end]).map_err(|_| bad("head"))?;
            let status: u16 = head
                .get(9..12)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad("status"))?;
            let len: usize = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse().ok())
                .ok_or_else(|| bad("content-length"))?;
            while buf.len() < end + 4 + len {
                if stream.read_buf(buf).await? == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
            return Ok(status);
        }
        if stream.read_buf(buf).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    let top: Option<usize> = match args.iter().position(|a| a == "--top") {
        Some(i) => {
            let k = args.get(i + 1).and_then(|k| k.parse().ok()).ok_or("--top needs a number")?;
            args.drain(i..i + 2);
            Some(k)
        }
        None => None,
    };
    if args.len() < 8 {
        return Err("usage: load ADDR QUERIES.jsonl CLIENTS SECONDS ADD_SHARE ACKED ID_PREFIX [TOKEN]".into());
    }
    let addr = args[1].clone();
    let texts: Vec<String> = std::fs::read_to_string(&args[2])?
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .collect();
    let clients: usize = args[3].parse()?;
    let seconds: f64 = args[4].parse()?;
    let add_share: f64 = args[5].parse()?;
    let acked_path = args[6].clone();
    let prefix = args[7].clone();
    let token = args.get(8).cloned();
    // Query requests are built once, so the clients spend their CPU on the exchange.
    let queries: Vec<Vec<u8>> = texts
        .iter()
        .map(|t| {
            let body = match top {
                Some(k) => json!({ "texts": [t], "top": k }),
                None => json!({ "texts": [t] }),
            };
            Ok(request(&addr, "/v1/query", &serde_json::to_vec(&body)?, token.as_deref()))
        })
        .collect::<Result<_, serde_json::Error>>()?;
    let (queries, texts) = (Rc::new(queries), Rc::new(texts));
    let tally = Rc::new(RefCell::new(Tally {
        queries: Histogram::new_with_bounds(1, 60_000_000, 3)?,
        adds: Histogram::new_with_bounds(1, 60_000_000, 3)?,
        acked: Vec::new(),
        errors: Default::default(),
    }));
    let next_id = Rc::new(Cell::new(0u64));
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let local = tokio::task::LocalSet::new();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (texts, queries, tally, next_id) = (Rc::clone(&texts), Rc::clone(&queries), Rc::clone(&tally), Rc::clone(&next_id));
        let (prefix, token, addr) = (prefix.clone(), token.clone(), addr.clone());
        tasks.push(local.spawn_local(async move {
            // A small xorshift per client: reproducible, no shared state.
            let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ (c as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let mut rand = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let mut stream: Option<TcpStream> = None;
            let mut buf = Vec::with_capacity(1 << 16);
            while Instant::now() < end {
                let pick = (rand() % texts.len() as u64) as usize;
                let is_add = (rand() % 1_000_000) as f64 / 1e6 < add_share;
                let add;
                let (req, id) = if is_add {
                    let id = format!("{prefix}{}", next_id.get());
                    next_id.set(next_id.get() + 1);
                    let body = json!([{ "id": id, "text": format!("{} {id}", texts[pick]) }]);
                    add = request(&addr, "/v1/documents", &serde_json::to_vec(&body).unwrap_or_default(), token.as_deref());
                    (&add[..], Some(id))
                } else {
                    (&queries[pick][..], None)
                };
                let sent = Instant::now();
                let outcome = async {
                    if stream.is_none() {
                        let s = TcpStream::connect(addr.as_str()).await.map_err(|_| "connect".to_string())?;
                        let _ = s.set_nodelay(true);
                        stream = Some(s);
                    }
                    let s = stream.as_mut().expect("connected above");
                    match tokio::time::timeout(Duration::from_secs(30), exchange(s, &mut buf, req)).await {
                        Ok(Ok(status)) if (200..300).contains(&status) => Ok(()),
                        Ok(Ok(status)) => Err(format!("http {status}")),
                        Ok(Err(_)) => {
                            stream = None;
                            Err("transport".to_string())
                        }
                        Err(_) => {
                            stream = None;
                            Err("timeout".to_string())
                        }
                    }
                }
                .await;
                let micros = sent.elapsed().as_micros() as u64;
                let mut t = tally.borrow_mut();
                match outcome {
                    Ok(()) => {
                        if let Some(id) = id {
                            let _ = t.adds.record(micros.max(1));
                            t.acked.push(id);
                        } else {
                            let _ = t.queries.record(micros.max(1));
                        }
                    }
                    Err(kind) => {
                        *t.errors.entry(kind).or_default() += 1;
                        drop(t);
                        // A server that is down is not hammered in a tight loop.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
            }
        }));
    }
    local
        .run_until(async {
            for t in tasks {
                t.await?;
            }
            Ok::<_, tokio::task::JoinError>(())
        })
        .await?;
    let elapsed = start.elapsed().as_secs_f64();
    let t = tally.borrow();
    std::fs::write(&acked_path, t.acked.iter().map(|id| format!("{id}\n")).collect::<String>())?;
    let (nq, na) = (t.queries.len(), t.adds.len());
    println!(
        "{}",
        json!({
            "seconds": (elapsed * 100.0).round() / 100.0,
            "clients": clients,
            "queries": nq,
            "adds": na,
            "requests_per_s": ((nq + na) as f64 / elapsed).round(),
            "queries_per_s": (nq as f64 / elapsed).round(),
            "query_ms": {"p50": percentile(&t.queries, 0.5), "p99": percentile(&t.queries, 0.99), "p999": percentile(&t.queries, 0.999), "max": percentile(&t.queries, 1.0)},
            "add_ms": {"p50": percentile(&t.adds, 0.5), "p99": percentile(&t.adds, 0.99), "p999": percentile(&t.adds, 0.999), "max": percentile(&t.adds, 1.0)},
            "errors": t.errors.values().sum::<u64>(),
            "errors_by_kind": t.errors,
            "acked_adds": t.acked.len(),
        })
    );
    Ok(())
}
