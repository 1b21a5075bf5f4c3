//! The Streamable HTTP service over any [`Handler`]: routing POST, GET and
//! DELETE, sessions (ended by a timer when idle), JSON or SSE replies with
//! resumption, and the legacy HTTP+SSE endpoint pair; the stateless era's
//! POSTs are in `http/stateless.rs`.
//!
//! The options it is made with are in `service/options.rs`; a POST's
//! handling (accept, decode, hand to a session, answer with JSON or an SSE
//! stream) in `service/post.rs`.
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

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use hyper::body::Body;
use mcp_proto::jsonrpc::{
    DecodeError, Message, Received, ReceivedIncoming, RequestId, decode_received, error_code,
};
use tokio::sync::watch;
use tokio::task::AbortHandle;

use super::body::ResponseBody;
use super::guard::{self, BodyError, accepts};
use super::hooks::{HttpHooks, NoHooks};
use super::pump::{Next, Pump};
use super::reply::{Reply, accepted, event_stream, not_allowed, rpc_error, text};
use super::routes::{Routes, is_reply};
use super::sessions::SessionTable;
use super::stream::parse_event_id;
use super::{LAST_EVENT_ID, SESSION_ID};
use crate::Handler;
use crate::era::ServeEra;
use crate::session::Session;

mod options;
mod post;

pub use options::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_UNSENT_EVENTS, DEFAULT_SESSION_CAP,
    DEFAULT_SESSION_IDLE_TIMEOUT, DEFAULT_SHARED_MAX_IN_FLIGHT, HttpOptions, ReplyMode, TlsOptions,
};
use post::post;

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
        let mut options = shared.options.session.clone();
        if id.is_none() {
            // Every client shares it.
            options.max_in_flight = shared.options.shared_max_in_flight;
        }
        let (session, queue) = Session::new((shared.factory)(), options);
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

    /// Gives the core `message`, then routes what it queued at once
    /// ([`Pump::route_now`]); how many messages were routed.
    pub(super) fn handle_and_route(&self, shared: &Shared<H>, message: Received) -> usize {
        self.pump.route_now(shared, self, || self.session.handle_received(0, message))
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
    // a handshake-era session (dual-era) names itself (looked up for a GET
    // or DELETE only: a POST reads the header once, in `post`).
    let sessionless = || match options.session.era {
        ServeEra::Legacy => false,
        ServeEra::Modern => true,
        _ => !parts.headers.contains_key(SESSION_ID),
    };
    match parts.method {
        Method::POST => post(shared, parts, body).await,
        Method::GET | Method::DELETE if sessionless() => Ok(not_allowed("POST")),
        Method::GET => Ok(get(shared, &parts.headers)),
        Method::DELETE => Ok(delete(shared, &parts.headers)),
        _ => Ok(not_allowed("GET, POST, DELETE")),
    }
}

fn get<H: Handler>(shared: &Arc<Shared<H>>, headers: &HeaderMap) -> Reply {
    if !accepts(headers, "text/event-stream") {
        return text(StatusCode::NOT_ACCEPTABLE, "Accept must list text/event-stream");
    }
    let session = match find_session(shared, headers.get(SESSION_ID), false) {
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
    let (tx, body) = ResponseBody::events(shared.options.max_unsent_events);
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
    match find_session(shared, headers.get(SESSION_ID), false) {
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
            let (tx, body) = ResponseBody::events(shared.options.max_unsent_events);
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

/// The request's session, from its `Mcp-Session-Id` header's value:
/// `Some(Ok)` found, `Some(Err)` a refusal (400 with no id, 404 unknown),
/// `None` when a new one should be made (an initialize without an id).
/// With sessions off, always the shared one.
fn find_session<H: Handler>(
    shared: &Arc<Shared<H>>,
    session_id: Option<&HeaderValue>,
    may_create: bool,
) -> Option<Result<Arc<HttpSession<H>>, Reply>> {
    if !shared.options.sessions {
        return Some(Ok(shared.shared_session()));
    }
    match session_id.map(HeaderValue::to_str) {
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
