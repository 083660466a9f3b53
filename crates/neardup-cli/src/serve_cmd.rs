//! `neardup serve`: the index over HTTP (neardup-server), with its tokens read from files
//! or the environment and its logs on standard error.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use neardup_server::{Server, ServerConfig};

use crate::errors::usage;
use crate::settings::ServeSettings;
use crate::summary::to_stderr;

/// Where the write token comes from when no file is given.
const TOKEN_ENV: &str = "NEARDUP_TOKEN";
/// Where the read token comes from when no file is given.
const READ_TOKEN_ENV: &str = "NEARDUP_READ_TOKEN";

fn token(file: Option<&Path>, env: &str) -> Result<Option<String>> {
    let (raw, source) = match file {
        Some(path) => (
            std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the token", path.display()))?,
            format!("{}: the token file", path.display()),
        ),
        None => match std::env::var(env) {
            Ok(t) => (t, format!("the {env} environment variable")),
            Err(std::env::VarError::NotPresent) => return Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                usage!("the {env} environment variable is not UTF-8")
            }
        },
    };
    let token = raw.trim();
    if token.is_empty() {
        // An empty token would silently mean no token at all.
        usage!("{source} is empty: give a secret, or no token");
    }
    Ok(Some(token.to_string()))
}

/// A duration flag: a finite number of seconds from 0 (if allowed) to a day.
fn seconds(flag: &str, value: f64, zero_ok: bool) -> Result<Duration> {
    let max = neardup_server::MAX_DURATION.as_secs_f64();
    let low = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if !(low && value <= max) {
        let from = if zero_ok { "from 0" } else { "more than 0" };
        usage!("{flag} {value}: give {from} up to {max} seconds");
    }
    Ok(Duration::from_secs_f64(value))
}

/// A count flag: at least 1 (0 would mean nothing is ever served).
fn count(flag: &str, value: usize) -> Result<usize> {
    if value == 0 {
        usage!("{flag} 0: give at least 1");
    }
    Ok(value)
}

/// The server's configuration, resolved right after parsing (`main.rs`): every flag
/// checked and the tokens read before the index is opened.
pub fn resolve(a: &ServeSettings) -> Result<ServerConfig> {
    if !(a.commit_delay >= 0.0 && a.commit_delay <= 10_000.0) {
        usage!(
            "--commit-delay {}: give milliseconds from 0 to 10000",
            a.commit_delay
        );
    }
    let Some(memory) = count("--memory", a.memory)?.checked_mul(1 << 20) else {
        usage!("--memory {}: too large for this machine", a.memory);
    };
    let mut config = ServerConfig::builder()
        .insecure(a.insecure)
        .read_only(a.read_only)
        .max_body(count("--max-body", a.max_body)?)
        .max_batch(count("--max-batch", a.max_batch)?)
        .timeout(seconds("--timeout", a.timeout, false)?)
        .max_concurrent(count("--max-concurrent", a.max_concurrent)?)
        .max_connections(count("--max-connections", a.max_connections)?)
        .header_timeout(seconds("--header-timeout", a.header_timeout, false)?)
        .keep_alive(seconds("--keep-alive", a.keep_alive, true)?)
        .shutdown_timeout(seconds("--shutdown-timeout", a.shutdown_timeout, true)?)
        .memory(memory)
        .commit_delay(Duration::from_secs_f64(a.commit_delay / 1000.0));
    if let Some(t) = token(a.token_file.as_deref(), TOKEN_ENV)? {
        config = config.write_token(t);
    }
    if let Some(t) = token(a.read_token_file.as_deref(), READ_TOKEN_ENV)? {
        config = config.read_token(t);
    }
    let config = config.build();
    let amplification = neardup_server::AMPLIFICATION;
    if memory / amplification < a.max_body {
        usage!(
            "--memory {} cannot hold one largest body: --max-body {} needs {} MiB ({amplification} \
             times it)",
            a.memory,
            a.max_body,
            (a.max_body.saturating_mul(amplification) >> 20) + 1
        );
    }
    if let Err(e) = config.check() {
        usage!("{e}");
    }
    Ok(config)
}

pub fn run(a: &ServeSettings, config: &ServerConfig) -> Result<()> {
    return_freed_memory();
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let server = if a.read_only {
        Server::open(&a.index, config.clone())?
    } else {
        // Says which writer it waits for (another server, an index command), up to --wait.
        Server::with_writer(
            crate::index_cmd::open_writer(&a.index, a.wait)?,
            config.clone(),
        )?
    };
    server.check_address(a.addr)?;
    let writes = if a.read_only {
        "read-only"
    } else if config.has_write_token() {
        "writes need the token"
    } else {
        "writes open to anyone who can reach it"
    };
    server.run(a.addr, |bound| {
        to_stderr(&format!(
            "serving {} on http://{bound} ({writes}); SIGTERM or Ctrl-C stops it\n",
            a.index.display()
        ));
    })?;
    to_stderr("stopped\n");
    Ok(())
}

/// glibc gives each thread that allocates at once an arena of its own and keeps what is
/// freed there, giving back only what lies at the top of a heap: under the benchmark's
/// load (half a million allocations a second, merges that build a segment in memory) the
/// server's resident heap grew from 13 to 82 MB in five minutes, over three times the
/// most it ever held live. One arena, trimmed once a second (a few milliseconds), kept it
/// between 4.6 and 5.8 MB over five minutes with no measurable loss of throughput
/// (ARCHITECTURE.md, "Memory"). Called before the server starts its threads.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn return_freed_memory() {
    // SAFETY: mallopt only changes the allocator's own settings.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let _ = std::thread::Builder::new()
        .name("malloc-trim".into())
        .spawn(|| loop {
            std::thread::sleep(Duration::from_secs(1));
            crate::trim_memory::trim();
        });
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_freed_memory() {}
