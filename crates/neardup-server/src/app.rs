//! The server: its shared state, the router with its layers, and its life from bind to
//! graceful shutdown: connections accepted up to a cap, each with a deadline for its
//! request heads and for idling between requests.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use neardup_index::{IndexWriter, Searcher};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::trace::{DefaultOnRequest, DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::config::{ServerConfig, AMPLIFICATION};
use crate::error::{ApiError, Error, ErrorCode, Result};
use crate::group_commit;
use crate::handlers;
use crate::metrics::Metrics;
use crate::routes::{self, Labels};

/// What every request shares.
pub(crate) struct AppState {
    pub config: ServerConfig,
    /// The one writer (none when read-only); writes take turns through `pending`.
    pub writer: Option<Mutex<IndexWriter>>,
    /// The last committed state, replaced after each commit.
    pub searcher: RwLock<Searcher>,
    /// Writes waiting for the writer, in order.
    pub pending: Mutex<Vec<group_commit::Job>>,
    /// Set while a blocking thread runs the queue, so that one thread does it and
    /// waiting writes don't each hold a thread of their own.
    pub flushing: AtomicBool,
    pub metrics: Metrics,
    slots: Arc<Semaphore>,
    /// The memory budget, in KiB.
    memory: Arc<Semaphore>,
}

impl AppState {
    /// Bytes of the memory budget the requests in flight hold now.
    pub fn memory_held(&self) -> u64 {
        let total = budget_kib(self.config.memory);
        (total.saturating_sub(self.memory.available_permits()) as u64) << 10
    }

    /// Makes the writer's last commit the state new requests read; answers its number.
    pub fn publish(&self, writer: &IndexWriter) -> u64 {
        if let Some(why) = writer.merge_failure() {
            // The change stands; the merge is tried again after the next one.
            tracing::warn!(error = %why, "merging segments after a commit failed");
        }
        self.publish_searcher(writer.searcher().clone())
    }

    fn publish_searcher(&self, searcher: Searcher) -> u64 {
        self.metrics.documents(searcher.len());
        let generation = searcher.generation();
        *self.searcher.write().unwrap_or_else(|p| p.into_inner()) = searcher;
        generation
    }

    /// The last committed state (a cheap clone; the request keeps it to the end).
    pub fn searcher(&self) -> Searcher {
        self.searcher
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Read-only: picks up the index's last commit, if it is new.
    fn reload(&self) {
        let current = self.searcher();
        match current.reload() {
            Ok(next) if next.generation() != current.generation() => {
                let generation = self.publish_searcher(next);
                tracing::info!(generation, "serving a new commit");
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "could not reload the index; serving the last commit read")
            }
        }
    }
}

/// Memory a request holds from the budget, shared by the request and the write it
/// queued: it goes back when both are done. A body of unknown length adds to it as it
/// arrives.
#[derive(Clone)]
pub(crate) struct Budget(Arc<Mutex<OwnedSemaphorePermit>>);

/// A body sent without a length ran out of the memory budget while it arrived.
#[derive(Debug)]
pub(crate) struct MemorySpent;

impl std::fmt::Display for MemorySpent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the requests in flight use the server's memory budget")
    }
}

impl std::error::Error for MemorySpent {}

/// A request body that takes its share of the memory budget as its bytes arrive, and
/// fails with [`MemorySpent`] when the budget is spent.
struct Metered {
    body: Body,
    budget: Budget,
    memory: Arc<Semaphore>,
    bytes: u64,
    held_kib: u64,
}

impl axum::body::HttpBody for Metered {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<std::result::Result<http_body::Frame<Self::Data>, Self::Error>>>
    {
        let frame = std::task::ready!(std::pin::Pin::new(&mut self.body).poll_frame(cx));
        if let Some(data) = frame.as_ref().and_then(|f| f.as_ref().ok()?.data_ref()) {
            let this = &mut *self;
            this.bytes += data.len() as u64;
            let need = (this.bytes * AMPLIFICATION as u64).div_ceil(1024);
            let more = u32::try_from(need - this.held_kib).unwrap_or(u32::MAX);
            match Arc::clone(&this.memory).try_acquire_many_owned(more) {
                Ok(permit) => {
                    this.budget
                        .0
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .merge(permit);
                    this.held_kib = need;
                }
                Err(_) => return std::task::Poll::Ready(Some(Err(axum::Error::new(MemorySpent)))),
            }
        }
        std::task::Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The memory budget in KiB, the unit of its semaphore's permits.
fn budget_kib(memory: usize) -> usize {
    (memory >> 10).clamp(1, u32::MAX as usize)
}

/// An index served over HTTP.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// # neardup_index::IndexWriter::create(dir.path(), &neardup::Config::builder().build()?)?;
/// use neardup_server::{Server, ServerConfig};
/// let server = Server::open(dir.path(), ServerConfig::default())?;
/// let runtime = tokio::runtime::Runtime::new()?;
/// runtime.block_on(async {
///     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
///     // Serves until the future given as `shutdown` completes: here, at once.
///     server.serve(listener, async {}).await?;
///     Ok::<(), Box<dyn std::error::Error>>(())
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Server {
    state: Arc<AppState>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.state.config)
            .finish()
    }
}

impl Server {
    /// Opens the index in `dir` for writing (holding its writer lock while the server
    /// lives) and for reading; read-only, for reading only (no lock). Refuses a
    /// configuration whose [`check`](ServerConfig::check) fails.
    pub fn open(dir: impl AsRef<Path>, config: ServerConfig) -> Result<Server> {
        config.check()?;
        if config.read_only {
            Server::with(None, Searcher::open(dir)?, config)
        } else {
            Server::with_writer(IndexWriter::open(dir)?, config)
        }
    }

    /// Serves the index `writer` writes (a caller that opened it itself, e.g. waiting
    /// for another writer at most so long). A read-only configuration is refused: it
    /// takes no writer.
    pub fn with_writer(writer: IndexWriter, config: ServerConfig) -> Result<Server> {
        config.check()?;
        if config.read_only {
            return Err(Error::Config(
                "a read-only server opens no writer: use Server::open".into(),
            ));
        }
        let searcher = writer.searcher().clone();
        Server::with(Some(Mutex::new(writer)), searcher, config)
    }

    /// The state every request shares (tests run the writer's queue on it directly).
    #[cfg(test)]
    pub(crate) fn state(&self) -> Arc<AppState> {
        Arc::clone(&self.state)
    }

    fn with(
        writer: Option<Mutex<IndexWriter>>,
        searcher: Searcher,
        config: ServerConfig,
    ) -> Result<Server> {
        let metrics = Metrics::new();
        metrics.documents(searcher.len());
        let slots = Arc::new(Semaphore::new(config.max_concurrent));
        let memory = Arc::new(Semaphore::new(budget_kib(config.memory)));
        Ok(Server {
            state: Arc::new(AppState {
                config,
                writer,
                searcher: RwLock::new(searcher),
                pending: Mutex::new(Vec::new()),
                flushing: AtomicBool::new(false),
                metrics,
                slots,
                memory,
            }),
        })
    }

    /// Refuses to serve a non-loopback address without a token for writes, unless the
    /// configuration says `insecure`.
    pub fn check_address(&self, addr: SocketAddr) -> Result<()> {
        let c = &self.state.config;
        if !addr.ip().is_loopback() && !c.has_write_token() && !c.read_only && !c.insecure {
            return Err(Error::Insecure(addr));
        }
        Ok(())
    }

    /// The routes with their layers.
    pub fn router(&self) -> Router {
        let state = Arc::clone(&self.state);
        let (routes, labels) = routes::router(&state, routes::table());
        routes
            .fallback(handlers::fallback)
            .layer(DefaultBodyLimit::max(state.config.max_body))
            .layer(middleware::from_fn_with_state(Arc::clone(&state), admit))
            .layer(middleware::from_fn(json_errors))
            .layer(middleware::from_fn_with_state((Arc::clone(&state), labels), measure))
            .layer(PropagateRequestIdLayer::x_request_id())
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(|req: &Request| {
                        let id = req
                            .headers()
                            .get("x-request-id")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("-");
                        tracing::info_span!("request", id, method = %req.method(), path = %req.uri().path())
                    })
                    // One line per answered request, with its status and time.
                    .on_request(DefaultOnRequest::new().level(Level::DEBUG))
                    .on_response(DefaultOnResponse::new().level(Level::INFO)),
            )
            .layer(SetRequestIdLayer::x_request_id(Counter::default()))
            .with_state(state)
    }

    /// Serves on `listener` until `shutdown` completes; then stops accepting, lets the
    /// requests in flight finish for up to the shutdown timeout (a write in flight commits
    /// whole or not at all, answered or not), and returns.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<()> {
        let router = self.router();
        let config = self.state.config.clone();
        let reload = config.read_only.then(|| {
            let state = Arc::clone(&self.state);
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(state.config.reload_every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let state = Arc::clone(&state);
                    let _ = tokio::task::spawn_blocking(move || state.reload()).await;
                }
            })
        });
        let (stop, stopping) = tokio::sync::watch::channel(false);
        let connections = Arc::new(Semaphore::new(config.max_connections));
        let mut tasks = tokio::task::JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            // At the cap, new connections wait in the kernel's queue: the header timeout
            // frees the slots of clients that send nothing.
            let permit = tokio::select! {
                () = &mut shutdown => break,
                p = Arc::clone(&connections).acquire_owned() => p.expect("the semaphore is never closed"),
            };
            let stream = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors, or a connection reset before it was
                        // accepted: wait a little rather than spin.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            while tasks.try_join_next().is_some() {}
            tasks.spawn(connection(
                stream,
                router.clone(),
                (config.header_timeout, config.keep_alive),
                stopping.clone(),
                permit,
            ));
        }
        drop(listener);
        let _ = stop.send(true);
        let all_closed = async { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(config.shutdown_timeout, all_closed)
            .await
            .is_err()
        {
            tracing::warn!(
                connections = tasks.len(),
                "shutdown timeout: closing connections whose requests are still in flight"
            );
            tasks.shutdown().await;
        }
        if let Some(reload) = reload {
            reload.abort();
        }
        Ok(())
    }

    /// Binds `addr` and serves until SIGTERM or SIGINT, on a runtime of its own; `ready`
    /// is called with the bound address once it accepts connections.
    pub fn run(self, addr: SocketAddr, ready: impl FnOnce(SocketAddr)) -> Result<()> {
        self.check_address(addr)?;
        let io = |source| Error::Io {
            addr: addr.to_string(),
            source,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(io)?;
        runtime.block_on(async move {
            let listener = TcpListener::bind(addr).await.map_err(io)?;
            let bound = listener.local_addr().map_err(io)?;
            // The handlers go in before the address is announced: a SIGTERM sent as soon
            // as it is known must stop the server, not kill it.
            let stop = stop_signal();
            ready(bound);
            self.serve(listener, stop).await
        })
        // Dropping the runtime waits for index work already running on blocking threads.
    }
}

/// What a connection's task knows of its requests: how many are being answered, how
/// many were, and when the last answer was given.
struct Activity {
    in_flight: AtomicUsize,
    answered: AtomicU64,
    /// Milliseconds from `start` to the end of the last answer.
    last_answer: AtomicU64,
    start: Instant,
}

impl Activity {
    /// When an idle connection is to be closed: `keep_alive` after its last answer, if it
    /// has had one and has no request in flight.
    fn idle_deadline(&self, keep_alive: Duration) -> Option<tokio::time::Instant> {
        if self.in_flight.load(Ordering::Acquire) > 0 || self.answered.load(Ordering::Acquire) == 0
        {
            return None;
        }
        let last = self.start + Duration::from_millis(self.last_answer.load(Ordering::Acquire));
        Some(tokio::time::Instant::from_std(last + keep_alive))
    }
}

/// Counts a request in flight until its answer's body is dropped (sent).
struct InFlight(Arc<Activity>);

impl InFlight {
    fn enter(activity: &Arc<Activity>) -> InFlight {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(activity))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let a = &self.0;
        let ms = u64::try_from(a.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        a.last_answer.store(ms, Ordering::Release);
        a.answered.fetch_add(1, Ordering::AcqRel);
        a.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request counted in flight until it is dropped.
struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl axum::body::HttpBody for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<std::result::Result<http_body::Frame<Self::Data>, Self::Error>>>
    {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Serves one connection: HTTP/1.1 with a deadline for each request's head, an idle
/// connection closed after the keep-alive time, a graceful close when the server stops.
async fn connection(
    stream: TcpStream,
    router: Router,
    (header_timeout, keep_alive): (Duration, Duration),
    mut stopping: tokio::sync::watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let activity = Arc::new(Activity {
        in_flight: AtomicUsize::new(0),
        answered: AtomicU64::new(0),
        last_answer: AtomicU64::new(0),
        start: Instant::now(),
    });
    let service = {
        let activity = Arc::clone(&activity);
        hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
            let in_flight = InFlight::enter(&activity);
            let router = router.clone();
            async move {
                let response = tower::ServiceExt::oneshot(router, req.map(Body::new)).await?;
                Ok::<_, std::convert::Infallible>(response.map(|body| {
                    Body::new(Tracked {
                        body,
                        _in_flight: in_flight,
                    })
                }))
            }
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(!keep_alive.is_zero());
    let conn = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    tokio::pin!(conn);
    // One timer for the connection's life, re-armed only when it fires: re-arming it at
    // each answer cost a wake-up and a timer per request.
    let idle = tokio::time::sleep(keep_alive);
    tokio::pin!(idle);
    let mut closing = false;
    loop {
        tokio::select! {
            done = conn.as_mut() => {
                if let Err(e) = done {
                    tracing::debug!(error = %e, "connection closed");
                }
                return;
            }
            _ = stopping.wait_for(|stop| *stop), if !closing => {
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
            () = &mut idle, if !keep_alive.is_zero() => {
                let now = tokio::time::Instant::now();
                match activity.idle_deadline(keep_alive) {
                    // Idle past the keep-alive time: closed with no request in flight.
                    Some(deadline) if deadline <= now => return,
                    Some(deadline) => idle.as_mut().reset(deadline),
                    None => idle.as_mut().reset(now + keep_alive),
                }
            }
        }
    }
}

/// SIGTERM or SIGINT, their handlers installed now (a future that installs them when
/// first polled would leave a window in which the default action kills the process).
/// Called inside the runtime.
fn stop_signal() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let term = signal(SignalKind::terminate());
        let int = signal(SignalKind::interrupt());
        Box::pin(async move {
            match (term, int) {
                (Ok(mut term), Ok(mut int)) => {
                    tokio::select! {
                        _ = term.recv() => {},
                        _ = int.recv() => {},
                    }
                }
                (Ok(mut one), Err(_)) | (Err(_), Ok(mut one)) => {
                    one.recv().await;
                }
                (Err(_), Err(_)) => std::future::pending::<()>().await,
            }
            tracing::info!("stopping: no new connections; requests in flight finish");
        })
    }
    #[cfg(not(unix))]
    {
        Box::pin(async {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("stopping: no new connections; requests in flight finish");
        })
    }
}

/// Request ids: a counter, unique within the process.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicU64>);

impl MakeRequestId for Counter {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        HeaderValue::from_str(&n.to_string())
            .ok()
            .map(RequestId::new)
    }
}

/// Before a request runs: `/healthz` always; past `max_concurrent` requests `503`; a
/// URI or headers too long, a compressed body: JSON errors; a body takes its share of
/// the memory budget (`503` when it is spent); then the request runs within `timeout`.
async fn admit(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    // Liveness stays cheap and is never refused for load: a busy server is alive.
    if req.uri().path() == "/healthz" {
        return next.run(req).await;
    }
    let Ok(_slot) = Arc::clone(&state.slots).try_acquire_owned() else {
        return ApiError::overloaded().into_response();
    };
    if let Some(e) = refuse_head(&req) {
        return e.into_response();
    }
    let _held = match hold_memory(&state, &mut req) {
        Ok(Some(budget)) => {
            req.extensions_mut().insert(budget.clone());
            Some(budget)
        }
        Ok(None) => None,
        Err(e) => return e.into_response(),
    };
    match tokio::time::timeout(state.config.timeout, next.run(req)).await {
        Ok(response) => response,
        Err(_) => ApiError::timeout().into_response(),
    }
}

/// The longest URI and the most header bytes answered with a JSON error (the HTTP layer
/// itself refuses, without a body, URIs past 64 KiB and heads past ~400 KiB or 100
/// fields).
const MAX_URI: usize = 8 << 10;
const MAX_HEADERS: usize = 16 << 10;

fn refuse_head(req: &Request) -> Option<ApiError> {
    let uri = req.uri().to_string().len();
    if uri > MAX_URI {
        return Some(ApiError::new(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the URI has {uri} bytes; at most {MAX_URI}"),
        ));
    }
    let headers: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    if headers > MAX_HEADERS {
        return Some(ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            format!("the headers have {headers} bytes; at most {MAX_HEADERS}"),
        ));
    }
    if let Some(encoding) = req.headers().get(header::CONTENT_ENCODING) {
        if !encoding.as_bytes().eq_ignore_ascii_case(b"identity") {
            return Some(
                ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_encoding",
                    format!(
                        "Content-Encoding {:?}: send the JSON uncompressed",
                        String::from_utf8_lossy(encoding.as_bytes())
                    ),
                )
                .field("Content-Encoding"),
            );
        }
    }
    None
}

/// A request with a body holds `AMPLIFICATION` times the bytes it has sent from the
/// memory budget until it is answered, taken as they arrive: a declared length is not
/// reserved up front, or a client could hold the whole budget with a few headers and no
/// body.
fn hold_memory(
    state: &AppState,
    req: &mut Request,
) -> std::result::Result<Option<Budget>, ApiError> {
    let length = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let chunked = req.headers().contains_key(header::TRANSFER_ENCODING);
    if !chunked && length.unwrap_or(0) == 0 {
        return Ok(None);
    }
    let Ok(permit) = Arc::clone(&state.memory).try_acquire_many_owned(0) else {
        return Err(ApiError::memory_full());
    };
    let budget = Budget(Arc::new(Mutex::new(permit)));
    let body = std::mem::take(req.body_mut());
    *req.body_mut() = Body::new(Metered {
        body,
        budget: budget.clone(),
        memory: Arc::clone(&state.memory),
        bytes: 0,
        held_kib: 0,
    });
    Ok(Some(budget))
}

/// Every error answered as JSON: those the router makes itself (`405` for a method a
/// route does not take, a path it cannot decode) come without a body of ours.
async fn json_errors(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 << 10)
        .await
        .unwrap_or_default();
    let mut message = String::from_utf8_lossy(&text).trim().to_string();
    if status == StatusCode::METHOD_NOT_ALLOWED {
        if let Some(allow) = parts
            .headers
            .get(header::ALLOW)
            .and_then(|v| v.to_str().ok())
        {
            message = format!("this route takes {allow}");
        }
    }
    let mut json = ApiError::from_status(status, message).into_response();
    for name in [header::ALLOW, header::RETRY_AFTER, header::WWW_AUTHENTICATE] {
        if let Some(v) = parts.headers.get(&name) {
            json.headers_mut().insert(name, v.clone());
        }
    }
    json
}

/// The HTTP methods counted by name in the metrics; any other is `other`, so that made-up
/// methods cannot grow the label set without bound.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "other",
    }
}

/// Counts each request by route template (never the raw path: ids would each make a
/// series), method and status, its time, and its error code.
async fn measure(
    State((state, labels)): State<(Arc<AppState>, Labels)>,
    req: Request,
    next: Next,
) -> Response {
    let start = Instant::now();
    let route = labels.of(req
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str));
    let method = method_label(req.method());
    let response = next.run(req).await;
    let status = response.status().as_u16();
    state
        .metrics
        .request(route, method, status, start.elapsed().as_secs_f64());
    if let Some(ErrorCode(code)) = response.extensions().get::<ErrorCode>() {
        state.metrics.error(code);
        if status >= 500 {
            tracing::warn!(status, code, "request failed");
        }
    }
    response
}
