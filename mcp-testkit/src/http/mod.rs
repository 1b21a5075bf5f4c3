//! The HTTP driver: `mcp-server-io`'s Streamable HTTP service at `/mcp`
//! (or its 2024-11-05 HTTP+SSE pair with [`HttpConfig::legacy`]) on hyper 1
//! (HTTP/1.1; HTTPS, and HTTP/2 by ALPN, with [`HttpConfig::tls`]) bound to
//! 127.0.0.1, each session a testkit core.
//!
//! Every protocol decision is that crate's; this module maps an
//! [`HttpConfig`] to its options, implements its hooks (the fault switches
//! and the authorization checks, in `hooks`), and records what clients
//! send for [`HttpServerHandle`]'s accessors.

mod hooks;

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use http::{HeaderMap, Method, Version};
use mcp_server_io::http::{self as server_http, HttpOptions, HttpServer, TlsOptions};
use tokio::net::TcpListener;

use crate::config::{HttpConfig, ReplyMode};
use crate::server::{Server, Testkit, session_options, stderr_line};

/// How many requests [`HttpServerHandle::requests`] remembers.
const REQUEST_LOG_CAP: usize = 512;
/// How many JSON-RPC methods [`HttpServerHandle::rpc_methods`] remembers.
const RPC_LOG_CAP: usize = 4096;

/// Starts the HTTP driver on `127.0.0.1:<config.port>` and returns once it
/// is listening (HTTPS when [`HttpConfig::tls`] is set; a certificate or
/// key rustls refuses is an [`io::ErrorKind::InvalidInput`] error).
///
/// The server runs on the current Tokio runtime until
/// [`HttpServerHandle::shutdown`] is called or the handle is dropped; either
/// ends every connection and stream and aborts running tool calls.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// use mcp_testkit::{HttpConfig, ReplyMode, serve_http};
///
/// let config = HttpConfig { reply: ReplyMode::Sse, priming: true, ..HttpConfig::default() };
/// let server = serve_http(config).await?;
/// assert!(server.url().starts_with("http://127.0.0.1:"));
/// assert!(server.url().ends_with("/mcp"));
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub async fn serve_http(config: HttpConfig) -> io::Result<HttpServerHandle> {
    if !config.server.start_delay.is_zero() {
        tokio::time::sleep(config.server.start_delay).await;
    }
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port)).await?;
    let local_addr = listener.local_addr()?;
    if let Some(banner) = &config.server.stderr_banner {
        stderr_line(banner);
    }
    let scheme = if config.tls.is_some() { "https" } else { "http" };
    let base = format!("{scheme}://{local_addr}");
    let waived = Arc::new(AtomicBool::new(false));
    let options = options(&config, &base, &waived);
    let stats = Arc::new(Mutex::new(Stats::default()));
    let core = config.server.clone();
    let hooks = hooks::Hooks::new(config, base, stats.clone());
    let factory = move || Testkit::new(core.clone());
    let server = server_http::serve_with_hooks(listener, options, factory, hooks).await?;
    Ok(HttpServerHandle { server, stats, waived })
}

/// The service's options for a configuration.
fn options(config: &HttpConfig, base: &str, waived: &Arc<AtomicBool>) -> HttpOptions {
    let mut options = HttpOptions::new(config.server.era);
    options.session = session_options(&config.server);
    if let Some(max) = config.server.max_in_flight {
        options.shared_max_in_flight = max;
    }
    if let Some(max) = config.max_unsent_events {
        options.max_unsent_events = max;
    }
    options.reply = match config.reply {
        ReplyMode::Sse => server_http::ReplyMode::Sse,
        ReplyMode::Auto => server_http::ReplyMode::Auto,
        _ => server_http::ReplyMode::Json,
    };
    options.priming = config.priming || config.close_after_priming;
    options.retry_ms = config.retry_ms;
    options.sessions = config.sessions;
    options.get_stream = config.get_stream;
    options.delete = config.delete;
    options.legacy_sse = config.legacy;
    options.legacy_endpoint = config.legacy_endpoint.clone();
    options.max_body_bytes = config.server.max_line_bytes;
    options.allowed_hosts = config.allowed_hosts.clone();
    options.tls = config.tls.as_ref().map(|tls| {
        let mut options = TlsOptions::new(tls.cert_chain().to_vec(), tls.private_key().to_vec());
        options.http2 = tls.http2();
        options
    });
    options.authorize = hooks::authorize(config, base, waived.clone());
    options
}

/// A running HTTP driver: its address, what it has seen, and the switch
/// that stops it. Dropping it stops the server too.
#[derive(Debug)]
pub struct HttpServerHandle {
    server: HttpServer<Testkit>,
    stats: Arc<Mutex<Stats>>,
    /// [`waive_auth`](HttpServerHandle::waive_auth).
    waived: Arc<AtomicBool>,
}

/// One HTTP request the server received, as [`HttpServerHandle::requests`]
/// lists it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestRecord {
    /// The request method.
    pub method: Method,
    /// The path and query, as sent.
    pub target: String,
    /// Every request header.
    pub headers: HeaderMap,
    /// The HTTP version it came over (`HTTP/2.0` when the client chose
    /// `h2` by ALPN).
    pub version: Version,
}

impl HttpServerHandle {
    /// While `true`, requests pass without the token the configuration
    /// requires ([`HttpConfig::require_auth`], [`HttpConfig::jwt_auth`]);
    /// set back to `false`, a client connected meanwhile meets 401s in
    /// the middle of its session, as when its token is revoked.
    pub fn waive_auth(&self, waived: bool) {
        self.waived.store(waived, Ordering::Relaxed);
    }

    /// The MCP endpoint: `http://127.0.0.1:PORT/mcp` (`https://` with
    /// [`HttpConfig::tls`]; also the legacy SSE URL in legacy mode).
    pub fn url(&self) -> String {
        self.server.url().to_owned()
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// How many requests with this method arrived (any path).
    pub fn request_count(&self, method: &Method) -> u64 {
        self.stats().counts.get(method).copied().unwrap_or(0)
    }

    /// How many DELETE requests arrived.
    pub fn deletes(&self) -> u64 {
        self.request_count(&Method::DELETE)
    }

    /// The headers of the latest request, if any arrived.
    pub fn last_request_headers(&self) -> Option<HeaderMap> {
        self.stats().log.back().map(|r| r.headers.clone())
    }

    /// The latest requests (up to 512), oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.stats().log.iter().cloned().collect()
    }

    /// The JSON-RPC `method` of every request and notification POSTed (up to
    /// 4096), oldest first; responses from the client appear as
    /// `"(response)"`.
    pub fn rpc_methods(&self) -> Vec<String> {
        self.stats().rpc_methods.iter().cloned().collect()
    }

    /// What every stateless-era request carried, oldest first (the last
    /// 256), as the `received_log` tool answers it: `{id, method,
    /// protocolVersion, clientCapabilities, clientInfo?, logLevel?, name?,
    /// requestState?, inputResponses?}`.
    pub fn received_log(&self) -> Vec<serde_json::Value> {
        self.server
            .stateless_session()
            .map(|session| Server::from_session(session).received_log())
            .unwrap_or_default()
    }

    /// How many sessions are live.
    pub fn session_count(&self) -> usize {
        self.server.session_count()
    }

    /// Stops accepting, ends every connection and stream, aborts running
    /// tool calls, and waits (at most 5 s) for all of it.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }

    fn stats(&self) -> MutexGuard<'_, Stats> {
        lock(&self.stats)
    }
}

/// What the server has seen.
#[derive(Debug, Default)]
struct Stats {
    counts: HashMap<Method, u64>,
    log: VecDeque<RequestRecord>,
    rpc_methods: VecDeque<String>,
}

impl Stats {
    fn record_request(
        &mut self,
        method: &Method,
        target: &str,
        headers: &HeaderMap,
        version: Version,
    ) {
        *self.counts.entry(method.clone()).or_insert(0) += 1;
        self.log.push_back(RequestRecord {
            method: method.clone(),
            target: target.to_owned(),
            headers: headers.clone(),
            version,
        });
        if self.log.len() > REQUEST_LOG_CAP {
            self.log.pop_front();
        }
    }

    fn record_rpc_method(&mut self, method: &str) {
        self.rpc_methods.push_back(method.to_owned());
        if self.rpc_methods.len() > RPC_LOG_CAP {
            self.rpc_methods.pop_front();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
