//! The real server on a free loopback port, spoken to over HTTP by a real client.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use neardup_index::IndexWriter;
use neardup_server::{Server, ServerConfig};
use serde_json::Value;

/// A server on its own runtime, stopped when dropped.
pub struct Running {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Sent when `serve` has returned.
    stopped: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
    pub dir: tempfile::TempDir,
    pub client: reqwest::Client,
    pub runtime: tokio::runtime::Runtime,
}

pub fn index_config() -> neardup::Config {
    neardup::Config::builder()
        .threshold(0.7)
        .seed(3)
        .build()
        .unwrap()
}

impl Running {
    pub fn start(config: ServerConfig) -> Running {
        Running::over(config, &index_config())
    }

    /// A server over a new index pinned to `index_config`.
    pub fn over(config: ServerConfig, index_config: &neardup::Config) -> Running {
        let dir = tempfile::tempdir().unwrap();
        drop(IndexWriter::create(dir.path(), index_config).unwrap());
        Running::in_dir(dir, config, None)
    }

    /// A server over the index in `dir`, on a runtime of at most `blocking` blocking
    /// threads if given.
    pub fn in_dir(
        dir: tempfile::TempDir,
        config: ServerConfig,
        blocking: Option<usize>,
    ) -> Running {
        let server = Server::open(dir.path(), config).unwrap();
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (tx, rx) = std::sync::mpsc::channel();
        let (done, stopped) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut runtime = tokio::runtime::Builder::new_multi_thread();
            runtime.enable_all();
            if let Some(n) = blocking {
                runtime.max_blocking_threads(n);
            }
            let runtime = runtime.build().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                server
                    .serve(listener, async {
                        let _ = stop_rx.await;
                    })
                    .await
                    .unwrap();
            });
            let _ = done.send(());
        });
        let addr = rx.recv().unwrap();
        Running {
            addr,
            stop: Some(stop),
            thread: Some(thread),
            stopped: std::sync::Mutex::new(stopped),
            dir,
            client: reqwest::Client::new(),
            // Several test threads may send at once.
            runtime: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Tells the server to stop; true if `serve` returned within `wait`.
    pub fn stop_within(&mut self, wait: Duration) -> bool {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.stopped.lock().unwrap().recv_timeout(wait).is_ok()
    }

    /// Sends a request; answers (status, body as JSON or as a string).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
        token: Option<&str>,
    ) -> (u16, Value) {
        let (status, _, value) = self.send_full(method, path, body, &[], token);
        (status, value)
    }

    /// Sends a request with extra headers; answers (status, headers, body as JSON or as a
    /// string).
    pub fn send_full(
        &self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
        token: Option<&str>,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.client.request(method, self.url(path));
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        self.runtime.block_on(async {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let bytes = resp.bytes().await.unwrap();
            let value = serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
            (status, headers, value)
        })
    }

    pub fn post(&self, path: &str, body: &Value, token: Option<&str>) -> (u16, Value) {
        self.send("POST", path, Some(serde_json::to_vec(body).unwrap()), token)
    }

    pub fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        self.send("GET", path, None, token)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sends raw bytes on a new connection and reads the answer until the server closes it
/// or `wait` passes.
pub fn raw(addr: SocketAddr, request: &[u8], wait: Duration) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(request).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The body of a raw HTTP answer (after its head), as JSON.
pub fn raw_json(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or(Value::Null)
}

pub const BIKE: &str = "Vintage road bike, 56 cm steel frame, new tyres and brakes";
pub const BIKE2: &str = "Vintage road bike, 56 cm steel frame, new tyres and brakes!";
pub const CHAIRS: &str = "Set of four ladder-back chairs in beech, lightly used";

pub fn ids(result: &Value) -> Vec<&str> {
    result["neighbours"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect()
}

/// A text unlike any other made with another `k`.
pub fn unique_text(k: usize) -> String {
    (0..8)
        .map(|i| {
            format!(
                "{:016x}",
                ((k * 8 + i + 1) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}
