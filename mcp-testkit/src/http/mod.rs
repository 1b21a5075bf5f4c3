//! The HTTP driver: Streamable HTTP (2025-11-25) at `/mcp`, or the
//! 2024-11-05 HTTP+SSE transport with [`HttpConfig::legacy`], on hyper 1
//! (HTTP/1.1; HTTPS, and HTTP/2 by ALPN, with [`HttpConfig::tls`]) bound to
//! 127.0.0.1.
//!
//! Like the stdio driver it only moves messages: each session is one
//! [`Server`](crate::Server) core, and every protocol decision is the core's.
//! The driver decides the HTTP parts (status codes, sessions, streams,
//! resumption) and injects the faults [`HttpConfig`] switches on.

mod service;
mod session;
mod stateless;

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use http::{HeaderMap, Method, Version};
use mcp_server_io::http::listen::{accept_loop, tls_acceptor};
use mcp_server_io::http::sessions::SessionTable;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::HttpConfig;
use crate::server::stderr_line;
use session::Session;

/// How many requests [`HttpServerHandle::requests`] remembers.
const REQUEST_LOG_CAP: usize = 512;
/// How many JSON-RPC methods [`HttpServerHandle::rpc_methods`] remembers.
const RPC_LOG_CAP: usize = 4096;
/// The most live sessions; an initialize beyond gets 503.
const SESSION_CAP: usize = 4096;
/// How long a session may go unused before it is forgotten (a request
/// naming it then gets 404).
const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

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
    let tls = match &config.tls {
        Some(tls) => Some(tls_acceptor(tls.cert_chain(), tls.private_key(), tls.http2())?),
        None => None,
    };
    if !config.server.start_delay.is_zero() {
        tokio::time::sleep(config.server.start_delay).await;
    }
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port)).await?;
    let local_addr = listener.local_addr()?;
    if let Some(banner) = &config.server.stderr_banner {
        stderr_line(banner);
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    let shared = Arc::new(Shared::new(config, format!("{scheme}://{local_addr}")));
    let (stop, stopped) = watch::channel(false);
    let serving = shared.clone();
    let task = tokio::spawn(async move {
        let handle = {
            let shared = serving.clone();
            move |request| service::handle(shared.clone(), request)
        };
        accept_loop(listener, tls, handle, stopped).await;
        serving.end_all_sessions();
    });
    Ok(HttpServerHandle { local_addr, shared, stop, task: Some(task) })
}

/// A running HTTP driver: its address, what it has seen, and the switch
/// that stops it. Dropping it stops the server too.
#[derive(Debug)]
pub struct HttpServerHandle {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
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
    /// The MCP endpoint: `http://127.0.0.1:PORT/mcp` (`https://` with
    /// [`HttpConfig::tls`]; also the legacy SSE URL in legacy mode).
    pub fn url(&self) -> String {
        format!("{}/mcp", self.shared.base)
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// How many requests with this method arrived (any path).
    pub fn request_count(&self, method: &Method) -> u64 {
        self.shared.stats().counts.get(method).copied().unwrap_or(0)
    }

    /// How many DELETE requests arrived.
    pub fn deletes(&self) -> u64 {
        self.request_count(&Method::DELETE)
    }

    /// The headers of the latest request, if any arrived.
    pub fn last_request_headers(&self) -> Option<HeaderMap> {
        self.shared.stats().log.back().map(|r| r.headers.clone())
    }

    /// The latest requests (up to 512), oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.stats().log.iter().cloned().collect()
    }

    /// The JSON-RPC `method` of every request and notification POSTed (up to
    /// 4096), oldest first; responses from the client appear as
    /// `"(response)"`.
    pub fn rpc_methods(&self) -> Vec<String> {
        self.shared.stats().rpc_methods.iter().cloned().collect()
    }

    /// What every stateless-era request carried, oldest first (the last
    /// 256), as the `received_log` tool answers it: `{id, method,
    /// protocolVersion, clientCapabilities, clientInfo?, logLevel?, name?,
    /// requestState?, inputResponses?}`.
    pub fn received_log(&self) -> Vec<serde_json::Value> {
        lock(&self.shared.modern_session)
            .as_ref()
            .map(|s| s.server.received_log())
            .unwrap_or_default()
    }

    /// How many sessions are live.
    pub fn session_count(&self) -> usize {
        self.shared.sessions.len()
    }

    /// Stops accepting, ends every connection and stream, aborts running
    /// tool calls, and waits (at most 5 s) for all of it.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }
}

impl Drop for HttpServerHandle {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// What every connection of one server shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: HttpConfig,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    sessions: SessionTable<Session>,
    /// The one session when sessions are off.
    shared_session: Mutex<Option<Arc<Session>>>,
    /// The core serving every stateless-era request.
    modern_session: Mutex<Option<Arc<Session>>>,
    stats: Mutex<Stats>,
    next_stream: AtomicU64,
}

#[derive(Debug, Default)]
struct Stats {
    counts: HashMap<Method, u64>,
    log: VecDeque<RequestRecord>,
    rpc_methods: VecDeque<String>,
}

impl Shared {
    fn new(mut config: HttpConfig, base: String) -> Self {
        config.priming |= config.close_after_priming;
        Shared {
            config,
            base,
            sessions: SessionTable::new(SESSION_CAP, SESSION_IDLE_TIMEOUT),
            shared_session: Mutex::new(None),
            modern_session: Mutex::new(None),
            stats: Mutex::new(Stats::default()),
            next_stream: AtomicU64::new(1),
        }
    }

    /// A stream name unique in this server: `s1`, `s2`, ...
    pub(crate) fn stream_name(&self) -> String {
        format!("s{}", self.next_stream.fetch_add(1, Ordering::Relaxed))
    }

    fn stats(&self) -> MutexGuard<'_, Stats> {
        lock(&self.stats)
    }

    pub(crate) fn record_request(
        &self,
        method: &Method,
        target: &str,
        headers: &HeaderMap,
        version: Version,
    ) {
        let mut stats = self.stats();
        *stats.counts.entry(method.clone()).or_insert(0) += 1;
        stats.log.push_back(RequestRecord {
            method: method.clone(),
            target: target.to_owned(),
            headers: headers.clone(),
            version,
        });
        if stats.log.len() > REQUEST_LOG_CAP {
            stats.log.pop_front();
        }
    }

    pub(crate) fn record_rpc_method(&self, method: &str) {
        let mut stats = self.stats();
        stats.rpc_methods.push_back(method.to_owned());
        if stats.rpc_methods.len() > RPC_LOG_CAP {
            stats.rpc_methods.pop_front();
        }
    }

    pub(crate) fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.get(id)
    }

    /// A new session with a fresh core, registered under a new random id
    /// (sessions idle too long are ended first); `None` when too many are
    /// live.
    pub(crate) fn new_session(self: &Arc<Self>, legacy: bool) -> Option<Arc<Session>> {
        for idle in self.sessions.evict_idle() {
            idle.close(false);
        }
        let config = self.config.server.clone();
        let made = self
            .sessions
            .insert_new(|id| Session::start(self, Some(id.to_owned()), config, legacy));
        made.map(|(_, session)| session)
    }

    /// The one session shared by everyone when sessions are off.
    pub(crate) fn shared_session(self: &Arc<Self>) -> Arc<Session> {
        lock(&self.shared_session)
            .get_or_insert_with(|| Session::start(self, None, self.config.server.clone(), false))
            .clone()
    }

    /// The core that serves stateless-era requests (one for the whole
    /// server: the era has no sessions).
    pub(crate) fn modern_session(self: &Arc<Self>) -> Arc<Session> {
        lock(&self.modern_session)
            .get_or_insert_with(|| Session::start(self, None, self.config.server.clone(), false))
            .clone()
    }

    /// Forgets a session and ends it.
    pub(crate) fn end_session(&self, session: &Arc<Session>, abort: bool) {
        match &session.id {
            Some(id) => {
                self.sessions.remove(id);
            }
            None => {
                for slot in [&self.shared_session, &self.modern_session] {
                    let mut slot = lock(slot);
                    if slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, session)) {
                        *slot = None;
                    }
                }
            }
        }
        session.close(abort);
    }

    fn end_all_sessions(&self) {
        let mut all: Vec<Arc<Session>> = self.sessions.drain();
        all.extend(lock(&self.shared_session).take());
        all.extend(lock(&self.modern_session).take());
        for session in all {
            session.close(true);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
