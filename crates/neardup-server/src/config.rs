//! What a server allows: who may read and write, and how much a request may ask.

use std::time::Duration;

/// The default [`ServerConfigBuilder::commit_delay`].
pub const DEFAULT_COMMIT_DELAY: Duration = Duration::from_millis(5);

/// The server's limits and tokens. Defaults: no tokens (so loopback only), 16 MiB bodies,
/// 10,000 documents or ids per request, 30 s per request, 256 requests at once, adds
/// committed in groups gathered for up to 5 ms.
///
/// ```
/// use std::time::Duration;
/// let config = neardup_server::ServerConfig::builder()
///     .write_token("s3cret")
///     .max_batch(1_000)
///     .timeout(Duration::from_secs(5))
///     .build();
/// assert_eq!(config.max_batch(), 1_000);
/// ```
#[derive(Clone)]
pub struct ServerConfig {
    pub(crate) write_token: Option<String>,
    pub(crate) read_token: Option<String>,
    pub(crate) insecure: bool,
    pub(crate) max_body: usize,
    pub(crate) max_batch: usize,
    pub(crate) timeout: Duration,
    pub(crate) max_concurrent: usize,
    pub(crate) commit_delay: Duration,
}

impl std::fmt::Debug for ServerConfig {
    // Tokens are never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("write_token", &self.write_token.as_ref().map(|_| "…"))
            .field("read_token", &self.read_token.as_ref().map(|_| "…"))
            .field("insecure", &self.insecure)
            .field("max_body", &self.max_body)
            .field("max_batch", &self.max_batch)
            .field("timeout", &self.timeout)
            .field("max_concurrent", &self.max_concurrent)
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
            max_body: 16 << 20,
            max_batch: 10_000,
            timeout: Duration::from_secs(30),
            max_concurrent: 256,
            commit_delay: DEFAULT_COMMIT_DELAY,
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

    /// True if writes need a token.
    pub fn has_write_token(&self) -> bool {
        self.write_token.is_some()
    }
}

/// Builds a [`ServerConfig`].
#[derive(Debug, Clone)]
pub struct ServerConfigBuilder(ServerConfig);

impl ServerConfigBuilder {
    /// Every write (`POST /v1/documents`, deletes) needs `Authorization: Bearer TOKEN`.
    /// Empty tokens are ignored.
    pub fn write_token(mut self, token: impl Into<String>) -> Self {
        self.0.write_token = Some(token.into()).filter(|t: &String| !t.is_empty());
        self
    }

    /// Every read (queries, documents, stats, metrics) needs this token or the write
    /// token. Empty tokens are ignored.
    pub fn read_token(mut self, token: impl Into<String>) -> Self {
        self.0.read_token = Some(token.into()).filter(|t: &String| !t.is_empty());
        self
    }

    /// Allows listening on a non-loopback address without a write token.
    pub fn insecure(mut self, yes: bool) -> Self {
        self.0.insecure = yes;
        self
    }

    /// Bytes one request body may have (past it: `413`).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.0.max_body = bytes.max(1);
        self
    }

    /// Documents or ids one request may carry (past it: `413`).
    pub fn max_batch(mut self, n: usize) -> Self {
        self.0.max_batch = n.max(1);
        self
    }

    /// Time one request may take (past it: `503`; a write may still commit, and
    /// sending it again is safe: an id added again replaces itself).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.0.timeout = t.max(Duration::from_millis(1));
        self
    }

    /// How long the committing thread waits for more plain adds before it commits what
    /// is queued (default 5 ms; zero commits at once). Each commit writes a segment and
    /// syncs it: under a steady stream of single adds, fewer and larger commits leave more
    /// of the machine to queries (see ARCHITECTURE.md, "Group commit").
    pub fn commit_delay(mut self, d: Duration) -> Self {
        self.0.commit_delay = d;
        self
    }

    /// Requests served at once (past it: `503` with `Retry-After`).
    pub fn max_concurrent(mut self, n: usize) -> Self {
        self.0.max_concurrent = n.max(1);
        self
    }

    /// The configuration.
    pub fn build(self) -> ServerConfig {
        self.0
    }
}
