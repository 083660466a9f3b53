//! The server: its shared state, the router with its layers, and its life from bind to
//! graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use neardup_index::{IndexWriter, Searcher};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::trace::{DefaultOnRequest, DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::config::ServerConfig;
use crate::error::{ApiError, Error, ErrorCode, Result};
use crate::handlers;
use crate::metrics::Metrics;

/// What every request shares.
pub(crate) struct AppState {
    pub config: ServerConfig,
    /// The one writer; writes take turns.
    pub writer: Mutex<IndexWriter>,
    /// The last committed state, replaced after each commit.
    pub searcher: RwLock<Searcher>,
    /// Plain adds waiting to be committed together.
    pub pending: Mutex<Vec<handlers::AddJob>>,
    /// Set while a blocking thread commits the queue, so that one thread does it and
    /// waiting adds don't each hold a thread of their own.
    pub flushing: AtomicBool,
    pub metrics: Metrics,
    slots: Arc<Semaphore>,
}

impl AppState {
    /// Makes the writer's last commit the state new requests read; answers its number.
    pub fn publish(&self, writer: &IndexWriter) -> u64 {
        let searcher = writer.searcher().clone();
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
    /// lives) and for reading.
    pub fn open(dir: impl AsRef<Path>, config: ServerConfig) -> Result<Server> {
        let writer = IndexWriter::open(dir)?;
        let searcher = writer.searcher().clone();
        let metrics = Metrics::new();
        metrics.documents(searcher.len());
        let slots = Arc::new(Semaphore::new(config.max_concurrent));
        Ok(Server {
            state: Arc::new(AppState {
                config,
                writer: Mutex::new(writer),
                searcher: RwLock::new(searcher),
                pending: Mutex::new(Vec::new()),
                flushing: AtomicBool::new(false),
                metrics,
                slots,
            }),
        })
    }

    /// Refuses to serve a non-loopback address without a write token, unless the
    /// configuration says `insecure`.
    pub fn check_address(&self, addr: SocketAddr) -> Result<()> {
        let c = &self.state.config;
        if !addr.ip().is_loopback() && c.write_token.is_none() && !c.insecure {
            return Err(Error::Insecure(addr));
        }
        Ok(())
    }

    /// The routes with their layers.
    pub fn router(&self) -> Router {
        let state = Arc::clone(&self.state);
        let reads = Router::new()
            .route("/v1/query", post(handlers::query))
            .route("/v1/documents/{id}", get(handlers::get_document))
            .route("/v1/stats", get(handlers::stats))
            .route("/metrics", get(handlers::metrics))
            .route_layer(middleware::from_fn_with_state(
                Arc::clone(&state),
                require_read,
            ));
        let writes = Router::new()
            .route("/v1/documents", post(handlers::add))
            .route(
                "/v1/documents/{id}",
                axum::routing::delete(handlers::delete_document),
            )
            .route("/v1/documents/delete", post(handlers::delete_documents))
            .route_layer(middleware::from_fn_with_state(
                Arc::clone(&state),
                require_write,
            ));
        let open = Router::new()
            .route("/healthz", get(handlers::healthz))
            .route("/readyz", get(handlers::readyz))
            .route("/v1/openapi.json", get(handlers::openapi));
        Router::new()
            .merge(reads)
            .merge(writes)
            .merge(open)
            .fallback(handlers::fallback)
            .layer(DefaultBodyLimit::max(state.config.max_body))
            .layer(middleware::from_fn_with_state(
                Arc::clone(&state),
                limit_and_time,
            ))
            .layer(middleware::from_fn_with_state(Arc::clone(&state), measure))
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
    /// requests in flight finish (a write in flight commits whole or not at all), and
    /// returns.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<()> {
        let addr = listener
            .local_addr()
            .map_or_else(|_| "listener".to_string(), |a| a.to_string());
        let router = self.router();
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(|source| Error::Io { addr, source })
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

/// True if the request carries `Authorization: Bearer` with one of `tokens`, compared in
/// constant time.
fn bearer_matches(req: &Request, tokens: &[&str]) -> bool {
    let Some(given) = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
    else {
        return false;
    };
    tokens
        .iter()
        .fold(false, |ok, t| ok | bool::from(given.ct_eq(t.as_bytes())))
}

async fn require_write(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    match &state.config.write_token {
        Some(t) if !bearer_matches(&req, &[t]) => ApiError::unauthorized().into_response(),
        _ => next.run(req).await,
    }
}

async fn require_read(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let c = &state.config;
    match (&c.read_token, &c.write_token) {
        (Some(r), w) => {
            let tokens: Vec<&str> = std::iter::once(r.as_str()).chain(w.as_deref()).collect();
            if bearer_matches(&req, &tokens) {
                next.run(req).await
            } else {
                ApiError::unauthorized().into_response()
            }
        }
        (None, _) => next.run(req).await,
    }
}

/// At most `max_concurrent` requests at once (`503` past it), each within `timeout`.
async fn limit_and_time(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let Ok(_slot) = Arc::clone(&state.slots).try_acquire_owned() else {
        return ApiError::overloaded().into_response();
    };
    match tokio::time::timeout(state.config.timeout, next.run(req)).await {
        Ok(response) => response,
        Err(_) => ApiError::timeout().into_response(),
    }
}

/// Counts each request by route and status, its time, and its error code.
async fn measure(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("other", |m| m.as_str())
        .to_string();
    let method = req.method().to_string();
    let response = next.run(req).await;
    let status = response.status().as_u16();
    state
        .metrics
        .request(&route, &method, status, start.elapsed().as_secs_f64());
    if let Some(ErrorCode(code)) = response.extensions().get::<ErrorCode>() {
        state.metrics.error(code);
        if status >= 500 {
            tracing::warn!(status, code, "request failed");
        }
    }
    response
}
