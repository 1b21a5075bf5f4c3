//! The Streamable HTTP service over any [`Handler`]: routing POST, GET and
//! DELETE, sessions (ended by a timer when idle), JSON or SSE replies with
//! resumption, and the legacy HTTP+SSE endpoint pair; the stateless era's
//! POSTs are in `http/stateless.rs`.
//!
//! [`HttpService`] is a hyper `Service` (bring your own accept loop);
//! [`serve`](super::serve) runs it on a listener. Each handshake-era
//! session is one [`Session`] with a handler the factory makes; one more
//! session (one more handler) serves every stateless-era POST, each its own
//! origin.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use hyper::body::Body;
use mcp_proto::jsonrpc::{
    DecodeError, Message, Received, ReceivedIncoming, RequestId, decode_received, error_code,
};
use mcp_proto::methods;
use tokio::sync::{oneshot, watch};
use tokio::task::AbortHandle;

use super::auth::Authorize;
use super::body::ResponseBody;
use super::guard::{self, BodyError, accepts, accepts_all, is_json};
use super::hooks::{HttpHooks, NoHooks};
use super::pump::{Next, Pump};
use super::reply::{Reply, accepted, event_stream, json_body, not_allowed, rpc_error, text};
use super::routes::{Route, Routes, is_reply};
use super::sessions::SessionTable;
use super::stateless::{is_modern, stateless_post};
use super::stream::{EventStream, parse_event_id};
use super::{LAST_EVENT_ID, SESSION_ID};
use crate::Handler;
use crate::era::ServeEra;
use crate::session::{RequestKey, Session, SessionOptions};

/// The default cap on live sessions.
pub const DEFAULT_SESSION_CAP: usize = 4096;
/// The default time a session may go unused before it is forgotten.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The default cap on a request body.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;
/// The default time a client may take to send a request body.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// How a handshake-era POST's request is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReplyMode {
    /// One JSON body; what the session sends about the request meanwhile
    /// goes on the GET stream. (Stateless era: as [`ReplyMode::Auto`].)
    Json,
    /// Always an SSE stream: what the session sends about the request,
    /// then the reply, each an event with an id (resumable).
    Sse,
    /// A JSON body when the reply is the first thing the session sends
    /// about the request, else an SSE stream (the default).
    #[default]
    Auto,
}

/// The certificate and key to serve HTTPS with (DER; rustls with `ring`).
/// `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsOptions {
    /// The certificate chain, the server's own certificate first.
    pub cert_chain: Vec<Vec<u8>>,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub private_key: Vec<u8>,
    /// Offer HTTP/2 (`h2`) by ALPN too.
    pub http2: bool,
}

impl TlsOptions {
    /// A chain and its key, HTTP/1.1 only.
    pub fn new(cert_chain: Vec<Vec<u8>>, private_key: Vec<u8>) -> Self {
        TlsOptions { cert_chain, private_key, http2: false }
    }
}

impl std::fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsOptions")
            .field("cert_chain", &format_args!("[{} certificate(s)]", self.cert_chain.len()))
            .field("private_key", &"<redacted>")
            .field("http2", &self.http2)
            .finish()
    }
}

/// How the HTTP service behaves.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Each session's options: the eras served ([`ServeEra::Legacy`]: the
    /// handshake era, [`ServeEra::Modern`]: the stateless era, `Both`),
    /// the deadline of requests to the client.
    pub session: SessionOptions,
    /// The MCP endpoint's path (`/mcp`; with a `/` at its end too).
    pub path: String,
    /// How handshake-era POSTs are answered.
    pub reply: ReplyMode,
    /// Start each SSE reply with a priming event (an id, empty data), so
    /// a client can resume it before anything else was sent.
    pub priming: bool,
    /// The `retry:` field of priming events, in milliseconds.
    pub retry_ms: Option<u64>,
    /// Issue `Mcp-Session-Id` on `initialize` and require it afterwards;
    /// `false` serves every handshake-era client from one session.
    pub sessions: bool,
    /// Serve the standalone GET stream; `false` answers a GET without
    /// `Last-Event-ID` with 405.
    pub get_stream: bool,
    /// Honour DELETE (ending a session); `false` answers 405.
    pub delete: bool,
    /// Serve the 2024-11-05 HTTP+SSE transport instead: GET on the path
    /// (or `/sse`) opens a session's stream, whose first event,
    /// `endpoint`, names where to POST (`/message?sessionId=<id>`).
    pub legacy_sse: bool,
    /// The `endpoint` event's data instead of `/message?sessionId=<id>`.
    pub legacy_endpoint: Option<String>,
    /// The most bytes of a request body (413 beyond).
    pub max_body_bytes: usize,
    /// How long a client may take to send a request body (408 after).
    pub body_timeout: Duration,
    /// The most live sessions (503 to an `initialize` beyond).
    pub session_cap: usize,
    /// How long a session may go unused before it ends (404 after): a
    /// task of the service ends it then, as a DELETE would, its running
    /// requests aborted.
    pub session_idle_timeout: Duration,
    /// `Origin` values allowed besides the loopback ones
    /// (`scheme://host[:port]`); any other gets 403.
    pub allowed_origins: Vec<String>,
    /// Host names allowed in `Host` besides `localhost`, `127.0.0.1` and
    /// `[::1]` (no port; `*`: any); any other gets 403. A server bound to
    /// another address lists the names clients reach it by.
    pub allowed_hosts: Vec<String>,
    /// Serve HTTPS (and HTTP/2 by ALPN when it says so) with this
    /// certificate ([`serve`](super::serve) reads it).
    pub tls: Option<TlsOptions>,
    /// The authorization check of every request, after the DNS rebinding
    /// guard (none: every request is served).
    pub authorize: Option<Arc<dyn Authorize>>,
}

impl HttpOptions {
    /// The defaults for serving `era`: `/mcp`, [`ReplyMode::Auto`],
    /// sessions, the GET stream and DELETE on, loopback origins and hosts
    /// only, no authorization, plain HTTP.
    pub fn new(era: ServeEra) -> Self {
        HttpOptions {
            session: SessionOptions::new(era),
            path: "/mcp".to_owned(),
            reply: ReplyMode::Auto,
            priming: false,
            retry_ms: None,
            sessions: true,
            get_stream: true,
            delete: true,
            legacy_sse: false,
            legacy_endpoint: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            session_cap: DEFAULT_SESSION_CAP,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            tls: None,
            authorize: None,
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions::new(ServeEra::Both)
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("session", &self.session)
            .field("path", &self.path)
            .field("reply", &self.reply)
            .field("priming", &self.priming)
            .field("sessions", &self.sessions)
            .field("legacy_sse", &self.legacy_sse)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("session_cap", &self.session_cap)
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("tls", &self.tls)
            .field("authorize", &self.authorize.as_ref().map(|_| ".."))
            .finish_non_exhaustive()
    }
}

/// What a request comes to: `Err` drops the connection without a response
/// (the session ended before the reply).
pub(super) type Handled = io::Result<Reply>;

/// The Streamable HTTP service: cheap to clone (clones share the sessions),
/// a hyper [`Service`](hyper::service::Service) for any request body.
pub struct HttpService<H: Handler> {
    shared: Arc<Shared<H>>,
}

impl<H: Handler> Clone for HttpService<H> {
    fn clone(&self) -> Self {
        HttpService { shared: self.shared.clone() }
    }
}

impl<H: Handler> std::fmt::Debug for HttpService<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService")
            .field("options", &self.shared.options)
            .field("sessions", &self.shared.sessions.len())
            .finish_non_exhaustive()
    }
}

impl<H: Handler> HttpService<H> {
    /// A service whose sessions each get a handler from `factory`.
    pub fn new(options: HttpOptions, factory: impl Fn() -> H + Send + Sync + 'static) -> Self {
        HttpService::with_hooks(options, factory, NoHooks)
    }

    /// [`HttpService::new`] with hooks for a test server.
    pub fn with_hooks(
        options: HttpOptions,
        factory: impl Fn() -> H + Send + Sync + 'static,
        hooks: impl HttpHooks<H>,
    ) -> Self {
        let shared = Shared {
            sessions: SessionTable::new(options.session_cap, options.session_idle_timeout),
            options,
            factory: Box::new(factory),
            hooks: Box::new(hooks),
            shared_session: Mutex::new(None),
            modern_session: Mutex::new(None),
            next_stream: AtomicU64::new(1),
            next_origin: AtomicU64::new(1),
            sweeping: AtomicBool::new(false),
            stop_sweeping: watch::Sender::new(()),
        };
        HttpService { shared: Arc::new(shared) }
    }

    /// The options.
    pub fn options(&self) -> &HttpOptions {
        &self.shared.options
    }

    /// Serves one request.
    pub async fn handle<B>(&self, request: Request<B>) -> io::Result<Reply>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        handle(&self.shared, request).await
    }

    /// How many handshake-era sessions are live.
    pub fn session_count(&self) -> usize {
        self.shared.sessions.len()
    }

    /// The session serving stateless-era requests, once one came.
    pub fn stateless_session(&self) -> Option<Session<H>> {
        lock(&self.shared.modern_session).as_ref().map(|s| s.session.clone())
    }

    /// Ends every session: running requests are aborted, and every
    /// stream's connection cut.
    pub fn close_all(&self) {
        self.shared.end_all_sessions();
    }
}

impl<H: Handler, B> hyper::service::Service<Request<B>> for HttpService<H>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Reply;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Reply>> + Send>>;

    fn call(&self, request: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { handle(&shared, request).await })
    }
}

/// What every connection of one service shares.
pub(super) struct Shared<H: Handler> {
    pub(super) options: HttpOptions,
    factory: Box<dyn Fn() -> H + Send + Sync>,
    pub(super) hooks: Box<dyn HttpHooks<H>>,
    sessions: SessionTable<HttpSession<H>>,
    /// The one session when sessions are off.
    shared_session: Mutex<Option<Arc<HttpSession<H>>>>,
    /// The session serving every stateless-era request.
    modern_session: Mutex<Option<Arc<HttpSession<H>>>>,
    next_stream: AtomicU64,
    /// Each stateless-era POST's origin: clients choose their ids, so the
    /// same id from two clients (or reused by one) names two requests.
    pub(super) next_origin: AtomicU64,
    /// The idle sweeper was started (with the first session).
    sweeping: AtomicBool,
    /// Dropped with the service: the sweeper stops.
    stop_sweeping: watch::Sender<()>,
}

impl<H: Handler> Shared<H> {
    /// A stream name unique in this service: `s1`, `s2`, ...
    fn stream_name(&self) -> String {
        format!("s{}", self.next_stream.fetch_add(1, Ordering::Relaxed))
    }

    fn session(&self, id: &str) -> Option<Arc<HttpSession<H>>> {
        self.sessions.get(id)
    }

    /// A new session under a new random id (sessions idle too long are
    /// ended first); `None` when too many are live.
    fn new_session(self: &Arc<Self>, legacy: bool) -> Option<Arc<HttpSession<H>>> {
        self.end_idle_sessions();
        let made =
            self.sessions.insert_new(|id| HttpSession::start(self, Some(id.to_owned()), legacy));
        if made.is_some() && !self.sweeping.swap(true, Ordering::AcqRel) {
            tokio::spawn(sweep_idle_sessions(Arc::downgrade(self), self.stop_sweeping.subscribe()));
        }
        made.map(|(_, session)| session)
    }

    /// Ends the sessions idle too long, as DELETE would.
    fn end_idle_sessions(&self) {
        for idle in self.sessions.evict_idle() {
            idle.close(self, false);
        }
    }

    /// The one session shared by everyone when sessions are off.
    fn shared_session(self: &Arc<Self>) -> Arc<HttpSession<H>> {
        lock(&self.shared_session)
            .get_or_insert_with(|| HttpSession::start(self, None, false))
            .clone()
    }

    /// The session that serves stateless-era requests.
    pub(super) fn modern_session(self: &Arc<Self>) -> Arc<HttpSession<H>> {
        lock(&self.modern_session)
            .get_or_insert_with(|| HttpSession::start(self, None, false))
            .clone()
    }

    /// Forgets a session and ends it.
    fn end_session(&self, session: &Arc<HttpSession<H>>, abort: bool) {
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
        session.close(self, abort);
    }

    fn end_all_sessions(&self) {
        let mut all: Vec<Arc<HttpSession<H>>> = self.sessions.drain();
        all.extend(lock(&self.shared_session).take());
        all.extend(lock(&self.modern_session).take());
        for session in all {
            session.close(self, true);
        }
    }
}

/// The service's sweeper: ends each session when it falls idle (so an
/// idle session neither counts as connected nor waits for the next one to
/// be made), sleeping until the next expiry; stops with the service.
async fn sweep_idle_sessions<H: Handler>(
    shared: std::sync::Weak<Shared<H>>,
    mut stop: watch::Receiver<()>,
) {
    loop {
        let wake = match shared.upgrade() {
            Some(shared) => shared
                .sessions
                .next_expiry()
                .unwrap_or_else(|| tokio::time::Instant::now() + shared.sessions.idle_timeout()),
            None => return,
        };
        tokio::select! {
            () = tokio::time::sleep_until(wake) => {}
            // The sender went with the service.
            _ = stop.changed() => return,
        }
        match shared.upgrade() {
            Some(shared) => shared.end_idle_sessions(),
            None => return,
        }
    }
}

/// One session over HTTP: the core, the task that routes its outgoing
/// queue, and the streams its messages go to.
pub(super) struct HttpSession<H: Handler> {
    /// The `Mcp-Session-Id` (legacy: the `sessionId` query value); `None`
    /// for the shared and the stateless sessions.
    id: Option<String>,
    pub(super) session: Session<H>,
    posts: AtomicU64,
    pub(super) routes: Routes,
    /// The core's outgoing queue, drained by a waiting POST or the router.
    pump: Pump,
    router: Mutex<Option<AbortHandle>>,
}

impl<H: Handler> HttpSession<H> {
    fn start(shared: &Arc<Shared<H>>, id: Option<String>, legacy: bool) -> Arc<Self> {
        let (session, queue) = Session::new((shared.factory)(), shared.options.session.clone());
        let this = Arc::new(HttpSession {
            id,
            session,
            posts: AtomicU64::new(0),
            routes: Routes::new(shared.stream_name(), legacy),
            pump: Pump::new(queue),
            router: Mutex::new(None),
        });
        let task = tokio::spawn(route_outgoing(shared.clone(), this.clone()));
        *lock(&this.router) = Some(task.abort_handle());
        this
    }

    /// Counts a POST; returns how many the session has seen.
    fn count_post(&self) -> u64 {
        self.posts.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Ends the session: running calls are aborted, waiting POSTs dropped,
    /// and every stream's connection ended (cleanly, or cut with `abort`).
    fn close(&self, shared: &Shared<H>, abort: bool) {
        if let Some(router) = lock(&self.router).take() {
            router.abort();
        }
        self.pump.close();
        self.session.abort_all();
        shared.hooks.session_closed(&self.session);
        self.routes.close(abort);
    }

    /// Awaits `reply`, a POST's own channel, routing the session's
    /// outgoing queue meanwhile ([`Pump::wait`]).
    pub(super) async fn wait<F: Future>(&self, shared: &Shared<H>, reply: F) -> F::Output {
        self.pump.wait(shared, self, reply).await
    }

    /// Sends one outgoing message where it belongs.
    pub(super) fn dispatch(
        &self,
        shared: &Shared<H>,
        message: &Message,
        related: Option<RequestId>,
        origin: u64,
    ) {
        let is_reply = is_reply(message, related.as_ref());
        let hooked = if is_reply { shared.hooks.encode_reply(message) } else { None };
        let json = match hooked {
            Some(bytes) => bytes,
            // Written as it is: no `Value` built on the way.
            None => match serde_json::to_vec(message) {
                Ok(json) => Bytes::from(json),
                Err(_) => return,
            },
        };
        self.routes.dispatch(json, is_reply, related, origin);
    }
}

/// A session's routing task: drains the core's queue when no POST waiting
/// for its reply does ([`Pump`]), and runs the exit hook.
async fn route_outgoing<H: Handler>(shared: Arc<Shared<H>>, session: Arc<HttpSession<H>>) {
    let next = std::future::poll_fn(|cx| session.pump.poll_route(cx, &shared, &session)).await;
    if let Next::Exit(code) = next {
        shared.hooks.exit(code).await;
        shared.end_session(&session, true);
    }
}

async fn handle<H: Handler, B>(shared: &Arc<Shared<H>>, request: Request<B>) -> Handled
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = request.into_parts();
    shared.hooks.request(&parts);
    let response = route(shared, parts, body).await;
    if let Some(delay) = shared.hooks.response_delay() {
        tokio::time::sleep(delay).await;
    }
    response
}

async fn route<H: Handler, B>(shared: &Arc<Shared<H>>, parts: Parts, body: B) -> Handled
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let options = &shared.options;
    let (origins, hosts) = (&options.allowed_origins, &options.allowed_hosts);
    if let Err(refusal) = guard::check_origin_and_host(&parts.headers, &parts.uri, origins, hosts) {
        return Ok(refusal.reply());
    }
    if let Some(reply) = shared.hooks.intercept(&parts).await {
        return Ok(reply);
    }
    if let Some(authorize) = &options.authorize
        && let Err(refusal) = authorize.authorize(&parts).await
    {
        return Ok(refusal);
    }
    if let Some(reply) = shared.hooks.intercept_authorized(&parts) {
        return Ok(reply);
    }
    if options.legacy_sse {
        return legacy(shared, parts, body).await;
    }
    let path = parts.uri.path();
    if path != options.path && path.strip_suffix('/') != Some(options.path.as_str()) {
        return Ok(text(
            StatusCode::NOT_FOUND,
            &format!("not found: the endpoint is {}", options.path),
        ));
    }
    // The stateless era has neither the GET stream nor DELETE: 405, unless
    // a handshake-era session (dual-era) names itself.
    let sessionless = match options.session.era {
        ServeEra::Legacy => false,
        ServeEra::Modern => true,
        _ => !parts.headers.contains_key(SESSION_ID),
    };
    match parts.method {
        Method::POST => post(shared, parts, body).await,
        Method::GET | Method::DELETE if sessionless => Ok(not_allowed("POST")),
        Method::GET => Ok(get(shared, &parts.headers)),
        Method::DELETE => Ok(delete(shared, &parts.headers)),
        _ => Ok(not_allowed("GET, POST, DELETE")),
    }
}

async fn post<H: Handler, B>(shared: &Arc<Shared<H>>, parts: Parts, body: B) -> Handled
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let options = &shared.options;
    let headers = &parts.headers;
    if !accepts_all(headers, &["application/json", "text/event-stream"]) {
        return Ok(text(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must list both application/json and text/event-stream",
        ));
    }
    if !is_json(headers) {
        return Ok(text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        ));
    }
    let body = match read_body(body, options).await? {
        Ok(body) => body,
        Err(refusal) => return Ok(refusal),
    };
    let era = options.session.era;
    // A request's parameters stay the text the client wrote, for the
    // handler to decode once (as over stdio).
    let message = match decode_received(&body) {
        Ok(ReceivedIncoming::Batch(_)) if era == ServeEra::Modern => {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                error_code::INVALID_REQUEST,
                "the stateless era takes one message per POST",
            ));
        }
        Ok(ReceivedIncoming::Single(message)) => message,
        Ok(ReceivedIncoming::Batch(items)) => {
            return Ok(match find_session(shared, headers, false) {
                Some(Ok(session)) => post_batch(shared, &session, items),
                Some(Err(refusal)) => refusal,
                None => text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"),
            });
        }
        Err(e) => return Ok(decode_failure(&e)),
    };
    let is_initialize = match &message {
        Received::Request(r) => r.method == methods::INITIALIZE,
        Received::Message(Message::Request(r)) => r.method == methods::INITIALIZE,
        Received::Message(_) => false,
    };
    let modern = match era {
        ServeEra::Legacy => false,
        ServeEra::Modern => true,
        _ => !is_initialize && !headers.contains_key(SESSION_ID) && is_modern(&message, headers),
    };
    if modern {
        return stateless_post(shared, headers, message).await;
    }
    if shared.hooks.never_answer(&message) {
        std::future::pending::<()>().await;
    }
    let session = match find_session(shared, headers, is_initialize) {
        Some(Ok(session)) => session,
        Some(Err(refusal)) => return Ok(refusal),
        None => match shared.new_session(false) {
            Some(session) => session,
            None => return Ok(text(StatusCode::SERVICE_UNAVAILABLE, "too many sessions")),
        },
    };
    if !is_initialize && let Err(refusal) = guard::check_version_header(headers) {
        return Ok(refusal.reply());
    }
    if shared.hooks.expire_session(session.count_post()) {
        shared.end_session(&session, true);
        return Ok(text(StatusCode::NOT_FOUND, "session expired"));
    }
    shared.hooks.message(&message);
    let id = match &message {
        Received::Request(rpc) => rpc.id.clone(),
        Received::Message(Message::Request(rpc)) => rpc.id.clone(),
        Received::Message(_) => {
            session.session.handle_received(0, message);
            return Ok(accepted());
        }
    };
    if shared.hooks.id_only_events() && !is_initialize {
        // Never handed to the session: the reply never comes.
        return Ok(id_only_event(shared));
    }
    let key = RequestKey { origin: 0, id };
    let session_header = session.id.as_deref().filter(|_| is_initialize);
    let mut response = match options.reply {
        ReplyMode::Json => {
            let (tx, rx) = oneshot::channel();
            if !session.routes.register(key, Route::Json(tx)) {
                return Ok(text(StatusCode::NOT_FOUND, "session ended"));
            }
            session.session.handle_received(0, message);
            let reply = session
                .wait(shared, rx)
                .await
                .map_err(|_| io::Error::other("the session ended before the reply"))?;
            json_body(StatusCode::OK, reply)
        }
        ReplyMode::Sse => {
            let (tx, body) = ResponseBody::events();
            let stream = open_reply_stream(shared, &session, tx);
            if shared.hooks.close_after_priming() {
                stream.disconnect();
            }
            if !session.routes.register(key, Route::Sse(stream)) {
                return Ok(text(StatusCode::NOT_FOUND, "session ended"));
            }
            session.session.handle_received(0, message);
            event_stream(body)
        }
        ReplyMode::Auto => {
            let (tx, rx) = oneshot::channel();
            if !session.routes.register(key.clone(), Route::First(tx)) {
                return Ok(text(StatusCode::NOT_FOUND, "session ended"));
            }
            session.session.handle_received(0, message);
            let Ok((first, is_reply)) = session.wait(shared, rx).await else {
                return Err(io::Error::other("the session ended before the reply"));
            };
            if is_reply {
                json_body(StatusCode::OK, first)
            } else {
                let (tx, body) = ResponseBody::events();
                let stream = open_reply_stream(shared, &session, tx);
                stream.push_message(&first);
                if !session.routes.upgrade_held(&key, stream.clone()) {
                    // The reply was already there, or the session ended.
                    stream.disconnect();
                }
                event_stream(body)
            }
        }
    };
    if let Some(value) = session_header.and_then(|id| HeaderValue::from_str(id).ok()) {
        response.headers_mut().insert(SESSION_ID, value);
    }
    Ok(response)
}

/// A new reply stream of the session, attached to `tx`, with its priming
/// event when the options ask for one.
fn open_reply_stream<H: Handler>(
    shared: &Shared<H>,
    session: &HttpSession<H>,
    tx: super::body::EventSender,
) -> Arc<EventStream> {
    let stream = session.routes.open_reply_stream(shared.stream_name());
    stream.attach(tx, None, shared.hooks.reply_stream_budget());
    if shared.options.priming || shared.hooks.close_after_priming() {
        stream.push_priming(shared.options.retry_ms);
    }
    stream
}

/// A batch (2025-03-26): notifications and responses are handed to the
/// session; requests in a batch are refused, as this service answers each
/// POST with one reply.
fn post_batch<H: Handler>(
    shared: &Shared<H>,
    session: &HttpSession<H>,
    items: Vec<Result<Received, DecodeError>>,
) -> Reply {
    let mut messages = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Ok(Received::Request(_) | Received::Message(Message::Request(_))) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    error_code::INVALID_REQUEST,
                    "this server does not take requests in a batch",
                );
            }
            Ok(Received::Message(message)) => messages.push(message),
            Err(e) => return decode_failure(&e),
        }
    }
    for message in messages {
        let message = Received::Message(message);
        shared.hooks.message(&message);
        session.session.handle_received(0, message);
    }
    accepted()
}

fn get<H: Handler>(shared: &Arc<Shared<H>>, headers: &HeaderMap) -> Reply {
    if !accepts(headers, "text/event-stream") {
        return text(StatusCode::NOT_ACCEPTABLE, "Accept must list text/event-stream");
    }
    let session = match find_session(shared, headers, false) {
        Some(Ok(session)) => session,
        Some(Err(refusal)) => return refusal,
        None => return text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"),
    };
    if let Err(refusal) = guard::check_version_header(headers) {
        return refusal.reply();
    }
    if shared.hooks.id_only_events() {
        return id_only_event(shared);
    }
    let (tx, body) = ResponseBody::events();
    match headers.get(LAST_EVENT_ID).map(|v| v.to_str().ok().and_then(parse_event_id)) {
        Some(Some((name, n))) => {
            let Some(stream) = session.routes.stream(name) else {
                return text(StatusCode::BAD_REQUEST, "unknown Last-Event-ID");
            };
            let standalone = Arc::ptr_eq(&stream, &session.routes.standalone());
            let budget = if standalone { None } else { shared.hooks.reply_stream_budget() };
            stream.attach(tx, Some(n), budget);
        }
        Some(None) => return text(StatusCode::BAD_REQUEST, "malformed Last-Event-ID"),
        None if !shared.options.get_stream => return not_allowed("POST, DELETE"),
        None => session.routes.standalone().attach(tx, None, None),
    }
    event_stream(body)
}

/// An event stream of one event that carries a fresh id and `retry: 0`
/// and no data, then its end.
fn id_only_event<H: Handler>(shared: &Shared<H>) -> Reply {
    let event = format!("id: {}-0\nretry: 0\n\n", shared.stream_name());
    event_stream(ResponseBody::full(event))
}

fn delete<H: Handler>(shared: &Arc<Shared<H>>, headers: &HeaderMap) -> Reply {
    if !shared.options.delete || !shared.options.sessions {
        return not_allowed("GET, POST");
    }
    match find_session(shared, headers, false) {
        Some(Ok(session)) => {
            shared.end_session(&session, false);
            text(StatusCode::OK, "session ended")
        }
        Some(Err(refusal)) => refusal,
        None => text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"),
    }
}

/// The 2024-11-05 HTTP+SSE transport.
async fn legacy<H: Handler, B>(shared: &Arc<Shared<H>>, parts: Parts, body: B) -> Handled
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let path = parts.uri.path();
    let sse = path == shared.options.path || path == "/sse";
    match (&parts.method, path) {
        (&Method::GET, _) if sse => {
            let Some(session) = shared.new_session(true) else {
                return Ok(text(StatusCode::SERVICE_UNAVAILABLE, "too many sessions"));
            };
            let id = session.id.clone().unwrap_or_default();
            let endpoint = match &shared.options.legacy_endpoint {
                Some(url) => url.clone(),
                None => format!("/message?sessionId={id}"),
            };
            let stream = session.routes.standalone();
            stream.push_endpoint(&endpoint);
            let (tx, body) = ResponseBody::events();
            stream.attach(tx, None, None);
            // The session lives as long as its GET stream.
            let weak = Arc::downgrade(shared);
            let body = body.on_drop(move || {
                if let Some(shared) = weak.upgrade()
                    && let Some(session) = shared.session(&id)
                {
                    shared.end_session(&session, false);
                }
            });
            Ok(event_stream(body))
        }
        (&Method::POST, "/message") => {
            let id = parts.uri.query().and_then(|q| {
                q.split('&').find_map(|pair| pair.strip_prefix("sessionId=")).map(str::to_owned)
            });
            let Some(id) = id else {
                return Ok(text(StatusCode::BAD_REQUEST, "sessionId query parameter required"));
            };
            let Some(session) = shared.session(&id) else {
                return Ok(text(StatusCode::NOT_FOUND, "unknown session"));
            };
            let body = match read_body(body, &shared.options).await? {
                Ok(body) => body,
                Err(refusal) => return Ok(refusal),
            };
            match decode_received(&body) {
                Ok(ReceivedIncoming::Single(message)) => {
                    shared.hooks.message(&message);
                    session.session.handle_received(0, message);
                    Ok(accepted())
                }
                Ok(ReceivedIncoming::Batch(_)) => Ok(rpc_error(
                    StatusCode::BAD_REQUEST,
                    error_code::INVALID_REQUEST,
                    "the 2024-11-05 transport takes one message per POST",
                )),
                Err(e) => Ok(decode_failure(&e)),
            }
        }
        _ if sse => Ok(not_allowed("GET")),
        (_, "/message") => Ok(not_allowed("POST")),
        _ => Ok(text(
            StatusCode::NOT_FOUND,
            &format!("not found: the SSE endpoint is {} or /sse", shared.options.path),
        )),
    }
}

/// The request's session: `Some(Ok)` found, `Some(Err)` a refusal (400 with
/// no id, 404 unknown), `None` when a new one should be made (an initialize
/// without an id). With sessions off, always the shared one.
fn find_session<H: Handler>(
    shared: &Arc<Shared<H>>,
    headers: &HeaderMap,
    may_create: bool,
) -> Option<Result<Arc<HttpSession<H>>, Reply>> {
    if !shared.options.sessions {
        return Some(Ok(shared.shared_session()));
    }
    match headers.get(SESSION_ID).map(HeaderValue::to_str) {
        Some(Ok(id)) => Some(
            shared
                .session(id.trim())
                .filter(|s| s.id.is_some())
                .ok_or_else(|| text(StatusCode::NOT_FOUND, "unknown or expired session")),
        ),
        Some(Err(_)) => Some(Err(text(StatusCode::BAD_REQUEST, "malformed Mcp-Session-Id"))),
        None if may_create => None,
        None => Some(Err(text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"))),
    }
}

/// The body, or a refusal (413 too large, 408 too slow); `Err` when the
/// connection failed.
async fn read_body<B>(body: B, options: &HttpOptions) -> io::Result<Result<Bytes, Reply>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match guard::read_body(body, options.max_body_bytes, options.body_timeout).await {
        Ok(body) => Ok(Ok(body)),
        Err(BodyError::Refused(refusal)) => Ok(Err(refusal.reply())),
        Err(BodyError::Io(e)) => Err(e),
    }
}

fn decode_failure(error: &DecodeError) -> Reply {
    match error {
        DecodeError::Json(e) => rpc_error(
            StatusCode::BAD_REQUEST,
            error_code::PARSE_ERROR,
            &format!("Parse error: {e}"),
        ),
        e => rpc_error(
            StatusCode::BAD_REQUEST,
            error_code::INVALID_REQUEST,
            &format!("Invalid Request: {e}"),
        ),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
