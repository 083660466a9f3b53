//! Load on a running `neardup serve`: CLIENTS concurrent connections for SECONDS, each
//! sending one request after another: a query of one short text (a random line of
//! QUERIES), or with probability ADD_SHARE an add of one new short document. Prints one
//! JSON object: requests by kind, throughput, latency percentiles, errors by kind; writes
//! the id of every add answered 2xx to ACKED (one per line).
//!
//!   load ADDR QUERIES.jsonl CLIENTS SECONDS ADD_SHARE ACKED ID_PREFIX [TOKEN]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::{json, Value};

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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
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
    // Query bodies are serialized once, so the clients spend their CPU on HTTP, not JSON.
    let bodies: Vec<bytes::Bytes> = texts
        .iter()
        .map(|t| serde_json::to_vec(&json!({ "texts": [t] })).map(bytes::Bytes::from))
        .collect::<Result<_, _>>()?;
    let bodies = Arc::new(bodies);
    let texts = Arc::new(texts);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .timeout(Duration::from_secs(30))
        .build()?;
    let tally = Arc::new(Mutex::new(Tally {
        queries: Histogram::new_with_bounds(1, 60_000_000, 3)?,
        adds: Histogram::new_with_bounds(1, 60_000_000, 3)?,
        acked: Vec::new(),
        errors: Default::default(),
    }));
    let next_id = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (client, texts, bodies, tally, next_id) = (client.clone(), Arc::clone(&texts), Arc::clone(&bodies), Arc::clone(&tally), Arc::clone(&next_id));
        let (prefix, token) = (prefix.clone(), token.clone());
        let (add_url, query_url) = (format!("http://{addr}/v1/documents"), format!("http://{addr}/v1/query"));
        tasks.push(tokio::spawn(async move {
            // A small xorshift per client: reproducible, no shared state.
            let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ (c as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let mut rand = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let (mut queries, mut adds) = (Vec::new(), Vec::new());
            let (mut acked, mut errors) = (Vec::new(), Vec::<String>::new());
            while Instant::now() < end {
                let pick = (rand() % texts.len() as u64) as usize;
                let is_add = (rand() % 1_000_000) as f64 / 1e6 < add_share;
                let (url, body, id) = if is_add {
                    let id = format!("{prefix}{}", next_id.fetch_add(1, Ordering::Relaxed));
                    let body = json!([{ "id": id, "text": format!("{} {id}", texts[pick]) }]);
                    (&add_url, bytes::Bytes::from(serde_json::to_vec(&body).unwrap_or_default()), Some(id))
                } else {
                    (&query_url, bodies[pick].clone(), None)
                };
                let mut req = client
                    .post(url.as_str())
                    .header("content-type", "application/json")
                    .body(body);
                if let Some(t) = &token {
                    req = req.bearer_auth(t);
                }
                let sent = Instant::now();
                let outcome = match req.send().await {
                    Ok(resp) => {
                        let status = resp.status();
                        match resp.bytes().await {
                            Ok(_) if status.is_success() => Ok(()),
                            Ok(_) => Err(format!("http {}", status.as_u16())),
                            Err(_) => Err("body".to_string()),
                        }
                    }
                    Err(e) if e.is_connect() => Err("connect".to_string()),
                    Err(e) if e.is_timeout() => Err("timeout".to_string()),
                    Err(_) => Err("transport".to_string()),
                };
                let micros = sent.elapsed().as_micros() as u64;
                match outcome {
                    Ok(()) => {
                        if let Some(id) = id {
                            adds.push(micros);
                            acked.push(id);
                        } else {
                            queries.push(micros);
                        }
                    }
                    Err(kind) => {
                        errors.push(kind);
                        // A server that is down is not hammered in a tight loop.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
            }
            let mut t = tally.lock().unwrap();
            for m in queries {
                let _ = t.queries.record(m.max(1));
            }
            for m in adds {
                let _ = t.adds.record(m.max(1));
            }
            t.acked.extend(acked);
            for e in errors {
                *t.errors.entry(e).or_default() += 1;
            }
        }));
    }
    for t in tasks {
        t.await?;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let t = tally.lock().unwrap();
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
