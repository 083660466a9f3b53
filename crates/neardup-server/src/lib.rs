//! The neardup index behind an HTTP API: services in any language add documents, ask
//! which indexed documents a text nearly duplicates (exact Jaccard), and remove documents,
//! with JSON over HTTP.
//!
//! - `POST /v1/documents[?dedup=true]`, `POST /v1/query`, `GET`/`DELETE
//!   /v1/documents/{id}`, `POST /v1/documents/delete`, `POST /v1/compact`, `GET
//!   /v1/stats`, `GET /healthz`, `GET /readyz`, `GET /metrics`, `GET /v1/openapi.json`
//!   (the description of them all, and the contract: `scripts/test-api` checks it).
//! - Index work runs on tokio's blocking threads, so a slow query never stalls the
//!   threads that accept connections; writes wait in one queue for the one
//!   [`IndexWriter`](neardup_index::IndexWriter) (holding no thread while they wait) and
//!   are answered after their commit is durable; readers see the last committed state.
//!   Read-only, the server opens a [`Searcher`](neardup_index::Searcher) only and serves
//!   new commits as they come.
//! - Tokens for writes and reads (compared in constant time), a body limit, a batch limit,
//!   a per-request timeout, a cap on requests at once and a memory budget for the bodies
//!   in flight (`503` with `Retry-After`), a cap on connections, a deadline for each
//!   request's head and for idle connections. Errors are JSON with a code, a message and
//!   the field at fault.
//! - Graceful shutdown: [`Server::run`] stops on SIGTERM or SIGINT, lets requests in
//!   flight finish within the shutdown timeout, and commits nothing half.
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! use neardup_server::{Server, ServerConfig};
//! neardup_index::IndexWriter::create(dir.path(), &neardup::Config::builder().build()?)?;
//! let config = ServerConfig::builder().write_token("s3cret").build();
//! let server = Server::open(dir.path(), config)?;
//! // A non-loopback address is allowed: writes need the token.
//! assert!(server.check_address("0.0.0.0:7878".parse()?).is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod api;
mod app;
mod config;
mod error;
mod group_commit;
mod handlers;
mod metrics;
mod routes;

pub use app::Server;
pub use config::{
    ServerConfig, ServerConfigBuilder, AMPLIFICATION, DEFAULT_COMMIT_DELAY, MAX_DURATION,
};
pub use error::{ApiError, Error, Result};

/// The OpenAPI description served at `/v1/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");
