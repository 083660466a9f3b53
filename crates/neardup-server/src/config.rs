//! What a server allows: who may read and write, and how much a request may ask.

use std::time::Duration;

use crate::error::Error;

/// The default [`ServerConfigBuilder::commit_delay`].
pub const DEFAULT_COMMIT_DELAY: Duration = Duration::from_millis(5);

/// The longest any duration setting may be: a day (a longer one is a mistake, and
/// adding it to the clock could overflow).
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// What the server's work costs in memory per byte of request body: the body itself, the
/// parsed documents, their shingle sets and what an add or a query builds from them.
/// Measured (peak resident memory over the request, 16 MiB bodies): one query text of 16
/// MiB 33x (its whole shingle set, sorted), 16 texts of 1 MiB 2x, many short texts at most
/// 1.5x; adds 8x to 16x, `?dedup=true` adds 9x to 11x. The budget counts 40x.
pub const AMPLIFICATION: usize = 40;

/// The server's limits and tokens. Defaults: no tokens (so loopback only), 16 MiB bodies,
/// 10,000 documents or ids per request, 30 s per request, 256 requests at once, 512
/// connections, 10 s to send a request's head, idle connections closed after 5 s, a 1 GiB
/// memory budget for request bodies and the work they cause, 10 s for requests in flight
/// at shutdown, adds committed in groups gathered for up to 5 ms.
///
/// ```
/// use std::time::Duration;
/// let config = neardup_server::ServerConfig::builder()
///     .write_token("s3cret")
///     .max_batch(1_000)
///     .timeout(Duration::from_secs(5))
///     .build();
/// assert_eq!(config.max_batch(), 1_000);
/// assert!(config.check().is_ok());
/// ```
#[derive(Clone)]
pub struct ServerConfig {
    pub(crate) write_token: Option<String>,
    pub(crate) read_token: Option<String>,
    pub(crate) insecure: bool,
    pub(crate) read_only: bool,
    pub(crate) max_body: usize,
    pub(crate) max_batch: usize,
    pub(crate) timeout: Duration,
    pub(crate) max_concurrent: usize,
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
    pub(crate) keep_alive: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) memory: usize,
    pub(crate) commit_delay: Duration,
    pub(crate) reload_every: Duration,
}

impl std::fmt::Debug for ServerConfig {
    // Tokens are never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("write_token", &self.write_token.as_ref().map(|_| "…"))
            .field("read_token", &self.read_token.as_ref().map(|_| "…"))
            .field("insecure", &self.insecure)
            .field("read_only", &self.read_only)
            .field("max_body", &self.max_body)
            .field("max_batch", &self.max_batch)
            .field("timeout", &self.timeout)
            .field("max_concurrent", &self.max_concurrent)
            .field("max_connections", &self.max_connections)
            .field("header_timeout", &self.header_timeout)
            .field("keep_alive", &self.keep_alive)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("memory", &self.memory)
            .field("commit_delay", &self.commit_delay)
            .finish()
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            write_token: None,
            read_token: None,
            insecure: false,
            read_only: false,
            max_body: 16 << 20,
            max_batch: 10_000,
            timeout: Duration::from_secs(30),
            max_concurrent: 256,
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            keep_alive: Duration::from_secs(5),
            shutdown_timeout: Duration::from_secs(10),
            memory: 1 << 30,
            commit_delay: DEFAULT_COMMIT_DELAY,
            reload_every: Duration::from_millis(500),
        }
    }
}

impl ServerConfig {
    /// A builder starting from the defaults.
    pub fn builder() -> ServerConfigBuilder {
        ServerConfigBuilder(ServerConfig::default())
    }

    /// Documents or ids one request may carry.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Bytes one request body may have.
    pub fn max_body(&self) -> usize {
        self.max_body
    }

    /// True if writes need a token: the write token, or the read token when it is the
    /// only one (a read token never leaves writes open).
    pub fn has_write_token(&self) -> bool {
        self.write_token.is_some() || self.read_token.is_some()
    }

    /// The tokens a write accepts: the write token, else the read token.
    pub(crate) fn write_tokens(&self) -> Option<&str> {
        self.write_token.as_deref().or(self.read_token.as_deref())
    }

    /// Refuses settings that cannot work, naming the setting: a count of zero, a duration
    /// of zero or past [`MAX_DURATION`], an empty token, a memory budget that cannot hold
    /// one largest body.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |what: String| Err(Error::Config(what));
        for (name, n) in [
            ("max_body", self.max_body),
            ("max_batch", self.max_batch),
            ("max_concurrent", self.max_concurrent),
            ("max_connections", self.max_connections),
        ] {
            if n == 0 {
                return bad(format!("{name} is 0: give at least 1"));
            }
        }
        for (name, d, zero_ok) in [
            ("timeout", self.timeout, false),
            ("header_timeout", self.header_timeout, false),
            ("keep_alive", self.keep_alive, true),
            ("shutdown_timeout", self.shutdown_timeout, true),
            ("commit_delay", self.commit_delay, true),
            ("reload_every", self.reload_every, false),
        ] {
            if (d.is_zero() && !zero_ok) || d > MAX_DURATION {
                let low = if zero_ok { "0" } else { "more than 0" };
                return bad(format!(
                    "{name} is {d:?}: give from {low} to {} seconds",
                    MAX_DURATION.as_secs()
                ));
            }
        }
        for (name, t) in [
            ("write_token", &self.write_token),
            ("read_token", &self.read_token),
        ] {
            if t.as_deref().is_some_and(|t| t.trim().is_empty()) {
                return bad(format!("{name} is empty: give a secret, or no token"));
            }
        }
        if self.memory / AMPLIFICATION < self.max_body {
            return bad(format!(
                "memory is {} bytes: one largest body ({} bytes) needs {} ({AMPLIFICATION} times \
                 it); raise memory or lower max_body",
                self.memory,
                self.max_body,
                self.max_body.saturating_mul(AMPLIFICATION)
            ));
        }
        Ok(())
    }
}

/// Builds a [`ServerConfig`]; [`Server::open`](crate::Server::open) refuses one whose
/// [`check`](ServerConfig::check) fails.
#[derive(Debug, Clone)]
pub struct ServerConfigBuilder(ServerConfig);

impl ServerConfigBuilder {
    /// Every write (`POST /v1/documents`, deletes, compaction) needs
    /// `Authorization: Bearer TOKEN`.
    pub fn write_token(mut self, token: impl Into<String>) -> Self {
        self.0.write_token = Some(token.into());
        self
    }

    /// Every read (queries, documents, stats, metrics) needs this token or the write
    /// token. Without a write token, writes need this token too.
    pub fn read_token(mut self, token: impl Into<String>) -> Self {
        self.0.read_token = Some(token.into());
        self
    }

    /// Allows listening on a non-loopback address without a token.
    pub fn insecure(mut self, yes: bool) -> Self {
        self.0.insecure = yes;
        self
    }

    /// Serves the index without writing it: no writer lock is taken (a writer may run
    /// beside the server, and the directory may be read-only), writes answer `403`
    /// `read_only`, and new commits are picked up within half a second.
    pub fn read_only(mut self, yes: bool) -> Self {
        self.0.read_only = yes;
        self
    }

    /// Bytes one request body may have (past it: `413`).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.0.max_body = bytes;
        self
    }

    /// Documents or ids one request may carry (past it: `413`).
    pub fn max_batch(mut self, n: usize) -> Self {
        self.0.max_batch = n;
        self
    }

    /// Time one request may take (past it: `503`; a write may still commit, and
    /// sending it again is safe: an id added again replaces itself).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.0.timeout = t;
        self
    }

    /// How long the committing thread waits for more adds before it commits what
    /// is queued (default 5 ms; zero commits at once). Each commit writes a segment and
    /// syncs it: under a steady stream of single adds, fewer and larger commits leave more
    /// of the machine to queries (see ARCHITECTURE.md, "Group commit").
    pub fn commit_delay(mut self, d: Duration) -> Self {
        self.0.commit_delay = d;
        self
    }

    /// Requests served at once (past it: `503` with `Retry-After`; `/healthz` is
    /// always answered).
    pub fn max_concurrent(mut self, n: usize) -> Self {
        self.0.max_concurrent = n;
        self
    }

    /// Connections open at once; past it new connections wait in the kernel's queue
    /// until one closes. Keep it below the process's open-file limit.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.0.max_connections = n;
        self
    }

    /// Time a client has to send a request's head (its line and headers), counted from
    /// when the server starts waiting for it; past it the connection is closed.
    pub fn header_timeout(mut self, t: Duration) -> Self {
        self.0.header_timeout = t;
        self
    }

    /// An idle connection (no request in flight) is closed after this, or after the
    /// header timeout if that is shorter (zero: one request per connection).
    pub fn keep_alive(mut self, t: Duration) -> Self {
        self.0.keep_alive = t;
        self
    }

    /// At shutdown, how long requests in flight may take to be answered; then their
    /// connections are closed (a write in flight still commits whole or not at all).
    pub fn shutdown_timeout(mut self, t: Duration) -> Self {
        self.0.shutdown_timeout = t;
        self
    }

    /// Bytes the requests in flight may cost at once: each request with a body holds
    /// [`AMPLIFICATION`] times its size until it is answered (a write until it is
    /// committed); past it `503` with `Retry-After`.
    pub fn memory(mut self, bytes: usize) -> Self {
        self.0.memory = bytes;
        self
    }

    /// How often a read-only server looks for a new commit (default 500 ms).
    pub fn reload_every(mut self, t: Duration) -> Self {
        self.0.reload_every = t.max(Duration::from_millis(10));
        self
    }

    /// The configuration.
    pub fn build(self) -> ServerConfig {
        self.0
    }
}
