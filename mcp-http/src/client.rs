//! The Streamable HTTP client: a small driver around the shared client core.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Body as _, Incoming};
use mcp_proto::ProtocolVersion;
use mcp_proto::client::{
    ClientCore, ClientError, CoreConfig, DriverWork, Event, RequestOptions, ops,
};
use mcp_proto::jsonrpc::{self, Message, Notification, RequestId};
use mcp_proto::methods;
use mcp_proto::types::{CallToolResult, InitializeResult, JsonObject, Tool};
use mcp_sse::{Decoder, Item, ItemRef, www_authenticate};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use crate::auth::{Secrets, StaticAuth};
use crate::conn::{self, Pool, ReadError};
use crate::endpoint::Endpoint;
use crate::error::{Error, chain};
use crate::oauth::{Fetcher, OAUTH_FETCH_TIMEOUT};
use crate::options::HttpOptions;
use crate::wire::{
    self, ACCEPT_BOTH, LAST_EVENT_ID, MCP_METHOD, MCP_NAME, MediaType, PROTOCOL_VERSION, SESSION_ID,
};

type Waiter = oneshot::Sender<Result<Box<RawValue>, ClientError>>;

/// Headers a request carries besides the fixed ones (`Mcp-Name`,
/// `Mcp-Param-*`).
type ExtraHeaders = Vec<(HeaderName, HeaderValue)>;

/// The longest a reply stream is drained after its reply arrived (so the
/// connection can go back to the pool and late messages are still seen).
const DRAIN_AFTER_REPLY: Duration = Duration::from_secs(5);
/// The longest an error body is read for its excerpt.
const EXCERPT_WAIT: Duration = Duration::from_secs(2);
/// The most redirects followed in a row (with
/// [`HttpOptions::follow_redirects`]).
pub(crate) const MAX_REDIRECTS: u32 = 5;
/// The most OAuth rounds (a 401 or 403 handled, the request sent again) for
/// one HTTP request; `mcp-auth`'s own per-request bounds stop sooner.
pub(crate) const MAX_AUTH_ROUNDS: u32 = 8;

/// A client of one MCP server behind a Streamable HTTP endpoint.
///
/// Cheap to clone (all clones share the session and the connection pool).
/// Every message is its own POST on a pooled keep-alive connection; many
/// requests may be in flight at once.
#[derive(Clone, Debug)]
pub struct HttpClient {
    inner: Arc<Inner>,
}

struct Inner {
    options: HttpOptions,
    endpoint: Endpoint,
    /// Content-Type, Accept (both) and the credentials.
    post_headers: HeaderMap,
    /// Accept: text/event-stream and the credentials.
    get_headers: HeaderMap,
    /// The credentials alone.
    plain_headers: HeaderMap,
    secrets: Secrets,
    pool: Pool,
    /// The OAuth client, when the host configured OAuth.
    oauth: Option<Arc<mcp_auth::OAuthClient>>,
    core: Mutex<ClientCore<Waiter>>,
    state: Mutex<State>,
    init_lock: tokio::sync::Mutex<()>,
    flush_lock: tokio::sync::Mutex<()>,
    server_tasks: Mutex<HashMap<RequestId, AbortHandle>>,
    /// The standalone GET stream's task.
    listener: Mutex<Option<AbortHandle>>,
    /// Set when the server speaks the 2024-11-05 HTTP+SSE transport.
    legacy: Mutex<Option<Arc<Legacy>>>,
}

/// A 2024-11-05 HTTP+SSE connection: POSTs go to `post_uri`, replies come
/// as `message` events on the GET stream a task reads.
#[derive(Debug)]
struct Legacy {
    post_uri: http::Uri,
    reader: Mutex<Option<AbortHandle>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
        if let Some(legacy) = lock(&self.legacy).take()
            && let Some(task) = lock(&legacy.reader).take()
        {
            task.abort();
        }
        for (_, task) in lock(&self.server_tasks).drain() {
            task.abort();
        }
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("endpoint", &self.endpoint.redacted)
            .field("options", &self.options)
            .field("core", &*lock(&self.core))
            .field("state", &*lock(&self.state))
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    session: Option<HeaderValue>,
    /// Counts sessions: a request knows which one it was sent in.
    epoch: u64,
    closed: bool,
    fatal: Option<ClientError>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("session", &self.session.as_ref().map(|_| "<set>"))
            .field("epoch", &self.epoch)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

/// What a request is sent with.
#[derive(Clone)]
struct Snapshot {
    session: Option<HeaderValue>,
    version: Option<ProtocolVersion>,
    epoch: u64,
}

/// How one attempt at a request ended.
enum Attempt {
    Done(Result<Box<RawValue>, Error>),
    /// The session is gone: the parameters back, and the session it was in.
    SessionLost(Option<Value>, u64),
}

/// Why waiting for a reply stopped.
enum WaitError {
    Http(Error),
    Client(ClientError),
}

/// Why the 2024-11-05 transport could not be set up.
enum LegacyFail {
    /// The server has no legacy SSE stream at the URL.
    NoStream(Error),
    /// It has one, but it is unusable.
    Broken(Error),
}

/// Why a GET stream could not be opened.
enum Resume {
    Retry(Error),
    /// 405: the server offers no GET stream.
    NotAllowed,
    Fatal(Error),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl HttpClient {
    /// Checks the URL, the credentials and the TLS configuration, and
    /// prepares the connection pool. No I/O happens here: the first
    /// connection is made by the first request (the handshake runs then, or
    /// explicitly with [`initialize`](Self::initialize)).
    ///
    /// The methods must be called within a Tokio runtime.
    pub fn connect(url: &str, options: HttpOptions) -> Result<HttpClient, Error> {
        let mut endpoint =
            Endpoint::parse(url).map_err(|reason| Error::InvalidEndpoint { reason })?;
        let auth = options.auth.to_parts().map_err(|reason| Error::InvalidAuth { reason })?;
        if let Some((name, value)) = &auth.query {
            endpoint = endpoint
                .with_query_param(name, value)
                .map_err(|reason| Error::InvalidAuth { reason })?;
        }
        let mut plain_headers = HeaderMap::new();
        for (name, value) in auth.headers {
            plain_headers.append(name, value);
        }
        let mut get_headers = plain_headers.clone();
        get_headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let mut post_headers = plain_headers.clone();
        post_headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        post_headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        let proxy = conn::proxy_for(&options.proxy, &endpoint.uri)
            .map_err(|reason| Error::InvalidProxy { reason })?;
        if proxy.is_some() {
            endpoint = endpoint.with_explicit_port();
        }
        let pool =
            conn::build_pool(&options, proxy.as_ref()).map_err(|reason| Error::Tls { reason })?;
        let oauth = match &options.oauth {
            None => None,
            Some(_) if options.auth != StaticAuth::None => {
                return Err(Error::InvalidAuth {
                    reason: "static credentials and OAuth cannot be used together".into(),
                });
            }
            Some(o) => {
                let fetch = Arc::new(Fetcher { pool: pool.clone(), timeout: OAUTH_FETCH_TIMEOUT });
                let client = o
                    .build(url, fetch)
                    .map_err(|e| Error::InvalidAuth { reason: format!("OAuth: {e}") })?;
                Some(Arc::new(client))
            }
        };

        let mut config = CoreConfig::new(options.client_info.clone());
        config.capabilities = options.handlers.capabilities();
        config.protocol_version = options.protocol_version;
        config.supported_versions = options.supported_versions.clone();
        config.request_timeout = options.request_timeout;
        let inner = Arc::new(Inner {
            options,
            endpoint,
            post_headers,
            get_headers,
            plain_headers,
            secrets: auth.secrets,
            pool,
            oauth,
            core: Mutex::new(ClientCore::new(config)),
            state: Mutex::new(State::default()),
            init_lock: tokio::sync::Mutex::new(()),
            flush_lock: tokio::sync::Mutex::new(()),
            server_tasks: Mutex::new(HashMap::new()),
            listener: Mutex::new(None),
            legacy: Mutex::new(None),
        });
        Ok(HttpClient { inner })
    }

    /// The server's name (from the options).
    pub fn name(&self) -> &str {
        &self.inner.options.name
    }

    /// The OAuth client, when [`HttpOptions::oauth`] is set: a host calls
    /// its [`authorize`](mcp_auth::OAuthClient::authorize) for an explicit
    /// login (before the first request, so an interactive flow is not cut
    /// short by the request timeout) or its
    /// [`logout`](mcp_auth::OAuthClient::logout).
    pub fn oauth(&self) -> Option<&Arc<mcp_auth::OAuthClient>> {
        self.inner.oauth.as_ref()
    }

    /// The endpoint as errors and logs show it (scheme and `host[:port]`).
    pub fn redacted_endpoint(&self) -> &str {
        &self.inner.endpoint.redacted
    }

    /// Whether requests go through a proxy.
    pub fn is_proxied(&self) -> bool {
        self.inner.pool.is_proxied()
    }

    /// Whether the server gave a session id (the id itself is not exposed:
    /// it is a credential of sorts).
    pub fn has_session(&self) -> bool {
        lock(&self.inner.state).session.is_some()
    }

    /// The negotiated protocol version, once initialized.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        lock(&self.inner.core).protocol_version()
    }

    /// The server's answer to `initialize`, once initialized.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        lock(&self.inner.core).initialize_result().cloned()
    }

    /// Runs the handshake if it has not run yet (concurrent callers share
    /// one), and returns the server's answer.
    pub async fn initialize(&self) -> Result<Arc<InitializeResult>, Error> {
        if let Some(r) = self.initialize_result() {
            return Ok(r);
        }
        let _guard = self.inner.init_lock.lock().await;
        if let Some(r) = self.initialize_result() {
            return Ok(r);
        }
        self.inner.check_open()?;
        self.inner.handshake().await
    }

    /// Sends a request and waits for its result (initializing first if
    /// needed). When the session expired (404), a new one is started and
    /// the request is sent again, once. Cancelling the returned future
    /// sends `notifications/cancelled`.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, Error> {
        let raw = self.request_text(method, params, options).await?;
        ops::parse_result(method, &raw).map_err(|e| self.inner.map_error(e))
    }

    /// [`request`](Self::request), with the result left as JSON text.
    async fn request_text(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.initialize().await?;
        let extra = self.param_headers(method, params.as_ref()).await;
        self.request_with(method, params, options, &extra).await
    }

    /// [`request`](Self::request) with these extra headers, once initialized.
    async fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<Box<RawValue>, Error> {
        match self.raw_request(method, params, &options, extra).await {
            Attempt::Done(r) => r,
            Attempt::SessionLost(params, epoch) => {
                tracing::info!(endpoint = %self.redacted_endpoint(), method, "the MCP session expired; starting a new one");
                self.renew(epoch).await?;
                match self.raw_request(method, params, &options, extra).await {
                    Attempt::Done(r) => r,
                    Attempt::SessionLost(..) => Err(Error::SessionExpired {
                        endpoint: self.inner.endpoint.redacted.clone(),
                        method: method.into(),
                    }),
                }
            }
        }
    }

    /// Sends a notification (initializing first if needed); the server
    /// acknowledges it with 202.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        self.initialize().await?;
        let message = Message::Notification(Notification::new(method, params));
        let snap = self.inner.snapshot();
        match self.inner.post_message(&message, &snap).await {
            Err(Error::SessionExpired { .. }) => {
                self.renew(snap.epoch).await?;
                let snap = self.inner.snapshot();
                self.inner.post_message(&message, &snap).await
            }
            other => other,
        }
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), Error> {
        ops::ping(self, RequestOptions::default()).await
    }

    /// Every tool the server offers (all pages), cached until the server
    /// says the list changed.
    pub async fn list_tools(&self) -> Result<Arc<[Tool]>, Error> {
        ops::list_tools(self, RequestOptions::default()).await
    }

    /// Calls a tool. `options` may carry a timeout and a progress callback.
    /// A tool that fails reports `is_error` in the result; that is not an
    /// `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        ops::call_tool(self, name, arguments, options).await
    }

    /// Opens the standalone GET stream, on which the server may send
    /// requests and notifications that belong to no request (they go through
    /// the same handlers and `on_event` callback as the others). Initializes
    /// first if needed.
    ///
    /// Returns `Ok(false)` when the server offers no such stream (405); that
    /// is final, nothing is retried. `Ok(true)` when the stream is open (or
    /// already was). A background task reads it; when the stream ends it is
    /// reopened (with `Last-Event-ID` when the server gave event ids, in the
    /// current session), after the server's `retry` delay or a jittered
    /// backoff, at most [`HttpOptions::max_reconnects`] times in a row
    /// without an event. It stops on an HTTP error, at [`close`](Self::close),
    /// or when the last clone of the client is dropped.
    pub async fn open_event_stream(&self) -> Result<bool, Error> {
        self.initialize().await?;
        let inner = &self.inner;
        if lock(&inner.listener).as_ref().is_some_and(|t| !t.is_finished()) {
            return Ok(true);
        }
        let snap = inner.snapshot();
        match inner.open_get("GET", None, &snap).await {
            Ok(body) => {
                let task = tokio::spawn(listen(Arc::downgrade(inner), body, snap.epoch));
                if let Some(old) = lock(&inner.listener).replace(task.abort_handle()) {
                    old.abort();
                }
                Ok(true)
            }
            Err(Resume::NotAllowed) => Ok(false),
            Err(Resume::Fatal(e) | Resume::Retry(e)) => Err(e),
        }
    }

    /// Ends the session: waiting requests fail with [`Error::Closed`], and
    /// when the server gave a session id it is deleted (`DELETE`; 405 and
    /// 404 are accepted). Idempotent.
    pub async fn close(&self) -> Result<(), Error> {
        let inner = &self.inner;
        let session = {
            let mut state = lock(&inner.state);
            if state.closed {
                return Ok(());
            }
            state.closed = true;
            state.session.take()
        };
        if let Some(task) = lock(&inner.listener).take() {
            task.abort();
        }
        if let Some(legacy) = lock(&inner.legacy).take()
            && let Some(task) = lock(&legacy.reader).take()
        {
            // Ending the GET stream ends a 2024-11-05 session.
            task.abort();
        }
        for (_, task) in lock(&inner.server_tasks).drain() {
            task.abort();
        }
        let (version, events) = {
            let mut core = lock(&inner.core);
            let version = core.protocol_version();
            core.close();
            (version, drain_events(&mut core))
        };
        deliver(inner, events);
        let Some(session) = session else { return Ok(()) };
        let snap = Snapshot { session: Some(session), version, epoch: 0 };
        let req = inner.build(Method::DELETE, &inner.plain_headers, Bytes::new(), &snap, |_| {});
        let resp = inner.send_bounded(req, "DELETE").await?;
        let status = resp.status();
        if status.is_success()
            || status == StatusCode::METHOD_NOT_ALLOWED
            || status == StatusCode::NOT_FOUND
        {
            tracing::debug!(endpoint = %inner.endpoint.redacted, %status, "MCP session deleted");
            return Ok(());
        }
        inner.check_status(resp, "DELETE", false).await.map(drop)
    }

    /// The `Mcp-Param-*` headers of a `tools/call`, from the tool's schema
    /// in the cached tool list (listed first when the tool is not in it).
    /// Without the schema (the listing failed, or the server does not list
    /// the tool) the call goes without them.
    async fn param_headers(&self, method: &str, params: Option<&Value>) -> ExtraHeaders {
        if method != methods::TOOLS_CALL {
            return Vec::new();
        }
        let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Vec::new();
        };
        // Through `Plain`, whose requests carry no parameter headers: the
        // listing must not come back here.
        let plain = Plain(self);
        let headers = ops::with_tool(&plain, name, RequestOptions::default(), |tool| {
            wire::param_headers(tool, params)
        });
        match headers.await {
            Ok(Some(headers)) => headers,
            Ok(None) => {
                tracing::debug!(endpoint = %self.redacted_endpoint(), tool = name, "the server does not list the tool; calling it without Mcp-Param headers");
                Vec::new()
            }
            Err(e) => {
                tracing::debug!(endpoint = %self.redacted_endpoint(), error = %e, "listing the tools failed; calling without Mcp-Param headers");
                Vec::new()
            }
        }
    }

    async fn renew(&self, epoch: u64) -> Result<(), Error> {
        let inner = &self.inner;
        let _guard = inner.init_lock.lock().await;
        inner.check_open()?;
        let reset = {
            let mut state = lock(&inner.state);
            if state.epoch == epoch {
                state.epoch += 1;
                state.session = None;
                true
            } else {
                false
            }
        };
        if reset {
            let events = {
                let mut core = lock(&inner.core);
                core.reset();
                drain_events(&mut core)
            };
            deliver(inner, events);
        }
        if self.initialize_result().is_none() {
            inner.handshake().await?;
        }
        Ok(())
    }

    async fn raw_request(
        &self,
        method: &str,
        params: Option<Value>,
        options: &RequestOptions,
        param_headers: &[(HeaderName, HeaderValue)],
    ) -> Attempt {
        let inner = &self.inner;
        let snap = inner.snapshot();
        let (tx, rx) = oneshot::channel();
        let started = {
            let mut core = lock(&inner.core);
            if !core.is_ready() && !core.is_closed() && method != methods::PING {
                // Another request is renewing the session right now: wait
                // for it (renew takes the init lock) and go on in the new one.
                return Attempt::SessionLost(params, snap.epoch);
            }
            core.start_request(method, params, options, tx, Instant::now())
        };
        let request = match started {
            Ok(r) => r,
            Err(e) => return Attempt::Done(Err(inner.map_error(e))),
        };
        let body = match serde_json::to_vec(&request) {
            Ok(b) => Bytes::from(b),
            Err(e) => {
                inner.forget(&request.id, "the request could not be encoded");
                return Attempt::Done(Err(inner.map_error(ClientError::InvalidParams {
                    method: method.into(),
                    reason: e.to_string(),
                })));
            }
        };
        let id = request.id;
        let mut extra = ExtraHeaders::new();
        if let Some(name) = wire::mcp_name(method, request.params.as_ref()) {
            extra.push((MCP_NAME.clone(), name));
        }
        extra.extend_from_slice(param_headers);
        let mut guard = CancelOnDrop { inner: Arc::downgrade(inner), id: Some(id.clone()) };
        let exchange = inner.exchange(&id, method, body, extra, &snap, false);
        let outcome = inner.wait(&id, rx, exchange).await;
        guard.id = None;
        match outcome {
            Ok(v) => Attempt::Done(Ok(v)),
            Err(WaitError::Http(Error::SessionExpired { .. })) => {
                Attempt::SessionLost(request.params, snap.epoch)
            }
            Err(WaitError::Http(e)) => {
                inner.forget(&id, "the HTTP exchange failed");
                Attempt::Done(Err(e))
            }
            Err(WaitError::Client(ClientError::Closed { .. })) if inner.session_changed(&snap) => {
                // The session ended while the request was out: the server
                // may have acted on it, so only a read is sent again.
                if wire::is_retry_safe(method) {
                    Attempt::SessionLost(request.params, snap.epoch)
                } else {
                    Attempt::Done(Err(Error::SessionLost {
                        endpoint: inner.endpoint.redacted.clone(),
                        method: method.into(),
                    }))
                }
            }
            Err(WaitError::Client(e)) => Attempt::Done(Err(inner.map_error(e))),
        }
    }
}

impl Inner {
    fn check_open(&self) -> Result<(), Error> {
        let state = lock(&self.state);
        if state.closed {
            return Err(Error::Closed { endpoint: self.endpoint.redacted.clone() });
        }
        if let Some(fatal) = &state.fatal {
            return Err(self.protocol_error(fatal.clone()));
        }
        Ok(())
    }

    fn snapshot(&self) -> Snapshot {
        let version = lock(&self.core).protocol_version();
        let state = lock(&self.state);
        Snapshot { session: state.session.clone(), version, epoch: state.epoch }
    }

    fn session_changed(&self, snap: &Snapshot) -> bool {
        let state = lock(&self.state);
        !state.closed && state.epoch != snap.epoch
    }

    fn is_pending(&self, id: &RequestId) -> bool {
        lock(&self.core).deadline(id).is_some()
    }

    fn protocol_error(&self, source: ClientError) -> Error {
        Error::Protocol { endpoint: self.endpoint.redacted.clone(), source }
    }

    fn map_error(&self, e: ClientError) -> Error {
        let endpoint = self.endpoint.redacted.clone();
        match e {
            ClientError::Rpc { method, error } => Error::Rpc { endpoint, method, error },
            ClientError::Timeout { method, after } => Error::Timeout { endpoint, method, after },
            ClientError::Closed { .. } if lock(&self.state).closed => Error::Closed { endpoint },
            other => Error::Protocol { endpoint, source: other },
        }
    }

    /// The `initialize` exchange. Called under `init_lock`.
    async fn handshake(self: &Arc<Self>) -> Result<Arc<InitializeResult>, Error> {
        let (tx, rx) = oneshot::channel();
        let (request, events) = {
            let mut core = lock(&self.core);
            if !core.is_fresh() {
                core.reset();
            }
            let request = core.initialize(tx, Instant::now());
            (request, drain_events(&mut core))
        };
        deliver(self, events);
        let request = request.map_err(|e| self.protocol_error(e))?;
        let snap = {
            let mut state = lock(&self.state);
            state.session = None;
            Snapshot { session: None, version: None, epoch: state.epoch }
        };
        let body = match serde_json::to_vec(&request) {
            Ok(b) => Bytes::from(b),
            Err(e) => {
                return Err(self.protocol_error(ClientError::InvalidParams {
                    method: methods::INITIALIZE.into(),
                    reason: e.to_string(),
                }));
            }
        };
        let id = request.id;
        let exchange = self.exchange(&id, methods::INITIALIZE, body, Vec::new(), &snap, true);
        match self.wait(&id, rx, exchange).await {
            Ok(_) => {
                // notifications/initialized goes out before any other request.
                self.flush().await;
                lock(&self.core)
                    .initialize_result()
                    .cloned()
                    .ok_or_else(|| Error::Closed { endpoint: self.endpoint.redacted.clone() })
            }
            Err(WaitError::Http(e)) => Err(e),
            Err(WaitError::Client(e)) => {
                let fatal = matches!(
                    e,
                    ClientError::UnsupportedVersion(_)
                        | ClientError::InvalidResult { .. }
                        | ClientError::Rpc { .. }
                );
                if fatal {
                    lock(&self.state).fatal = Some(e.clone());
                }
                Err(self.map_error(e))
            }
        }
    }

    /// Builds a request to the endpoint with the session headers.
    fn build(
        &self,
        method: Method,
        headers: &HeaderMap,
        body: Bytes,
        snap: &Snapshot,
        extra: impl FnOnce(&mut HeaderMap),
    ) -> http::Request<conn::Body> {
        let mut req = http::Request::new(Full::new(body));
        let legacy = if method == Method::POST { self.legacy_post_uri() } else { None };
        *req.method_mut() = method;
        *req.uri_mut() = legacy.unwrap_or_else(|| self.endpoint.uri.clone());
        let h = req.headers_mut();
        h.clone_from(headers);
        if let Some(session) = &snap.session {
            h.insert(SESSION_ID.clone(), session.clone());
        }
        if let Some(v) = snap.version.filter(|v| v.sends_protocol_version_header()) {
            h.insert(PROTOCOL_VERSION.clone(), HeaderValue::from_static(v.as_str()));
        }
        extra(h);
        req
    }

    /// Sends a request with the OAuth token, when OAuth is configured: the
    /// token held (refreshed first when it is about to expire) goes on the
    /// request; a 401 runs [`on_unauthorized`](mcp_auth::OAuthClient::on_unauthorized),
    /// a 403 `insufficient_scope` runs
    /// [`on_insufficient_scope`](mcp_auth::OAuthClient::on_insufficient_scope),
    /// and the request is sent again, as often as `mcp-auth`'s per-request
    /// bounds allow (and never more than [`MAX_AUTH_ROUNDS`] times).
    async fn send(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
    ) -> Result<Response<Incoming>, Error> {
        let Some(oauth) = &self.oauth else { return self.send_redirects(req, method).await };
        let mut auth = oauth.prepare().await;
        let applies = oauth.applies_to(&req.uri().to_string());
        let mut rounds = 0u32;
        loop {
            let mut attempt = conn::copy_request(&req);
            if applies && let Some(header) = auth.header() {
                let mut header = header.clone();
                header.set_sensitive(true);
                attempt.headers_mut().insert(AUTHORIZATION, header);
            }
            let resp = self.send_redirects(attempt, method).await?;
            let status = resp.status();
            if !applies
                || rounds >= MAX_AUTH_ROUNDS
                || (status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN)
            {
                return Ok(resp);
            }
            let bearer = www_authenticate::find_bearer(
                resp.headers().get_all(WWW_AUTHENTICATE).iter().filter_map(|v| v.to_str().ok()),
            );
            let step_up = bearer.as_ref().filter(|b| b.is_insufficient_scope());
            if status == StatusCode::FORBIDDEN && step_up.is_none() {
                return Ok(resp);
            }
            // Read the refusal so its connection goes back to the pool.
            let body = resp.into_body();
            if !body.is_end_stream() {
                let _ =
                    tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
            }
            rounds += 1;
            let outcome = match step_up {
                Some(challenge) => {
                    tracing::debug!(endpoint = %self.endpoint.redacted, method, "403 insufficient_scope: stepping up the authorization");
                    oauth.on_insufficient_scope(&mut auth, challenge).await
                }
                None => {
                    tracing::debug!(endpoint = %self.endpoint.redacted, method, "401: running the OAuth flow");
                    oauth.on_unauthorized(&mut auth, bearer.as_ref()).await
                }
            };
            if let Err(source) = outcome {
                return Err(Error::Auth {
                    endpoint: self.endpoint.redacted.clone(),
                    method: method.into(),
                    status,
                    source: Box::new(source),
                });
            }
        }
    }

    /// Sends a request; with [`HttpOptions::follow_redirects`], follows
    /// same-origin 307 and 308 redirects (same method, body and headers), at
    /// most [`MAX_REDIRECTS`] times. A redirect elsewhere is an error: the
    /// credentials never leave the endpoint's origin.
    async fn send_redirects(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
    ) -> Result<Response<Incoming>, Error> {
        if !self.options.follow_redirects {
            return self.send_once(req, method).await;
        }
        let mut req = req;
        let mut hops = 0u32;
        loop {
            let mut again = conn::copy_request(&req);
            let resp = self.send_once(req, method).await?;
            let status = resp.status();
            if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT
            {
                return Ok(resp);
            }
            let refuse = |reason: String| Error::Redirect {
                endpoint: self.endpoint.redacted.clone(),
                method: method.into(),
                status,
                reason,
            };
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(refuse(format!("more than {MAX_REDIRECTS} redirects in a row")));
            }
            let location = resp
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| refuse("the redirect has no usable Location".into()))?;
            let target = crate::endpoint::resolve_same_origin(again.uri(), location)
                .map_err(|reason| refuse(format!("the redirect's Location: {reason}")))?;
            let target = self.with_auth_query(target).map_err(refuse)?;
            // Read the redirect's body so its connection goes back to the pool.
            let body = resp.into_body();
            if !body.is_end_stream() {
                let _ =
                    tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
            }
            tracing::debug!(endpoint = %self.endpoint.redacted, method, %status, hop = hops, "following a same-origin redirect");
            *again.uri_mut() = target;
            req = again;
        }
    }

    /// A same-origin URI with the query-parameter credential added, unless
    /// it already carries it.
    fn with_auth_query(&self, uri: http::Uri) -> Result<http::Uri, String> {
        let StaticAuth::Query { name, value } = &self.options.auth else { return Ok(uri) };
        let pair = format!(
            "{}={}",
            crate::endpoint::percent_encode(name),
            crate::endpoint::percent_encode(value)
        );
        if uri.query().is_some_and(|q| q.split('&').any(|p| p == pair)) {
            return Ok(uri);
        }
        let e = Endpoint { uri, redacted: self.endpoint.redacted.clone() };
        Ok(e.with_query_param(name, value)?.uri)
    }

    async fn send_once(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
    ) -> Result<Response<Incoming>, Error> {
        self.pool.request(req).await.map_err(|e| Error::Connect {
            endpoint: self.endpoint.redacted.clone(),
            method: method.into(),
            reason: self.secrets.scrub(&chain(&e)),
        })
    }

    /// [`send`](Self::send), bounded by the request timeout (for messages
    /// that are not requests, whose wait the core does not bound).
    async fn send_bounded(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
    ) -> Result<Response<Incoming>, Error> {
        let timeout = self.options.request_timeout;
        match tokio::time::timeout(timeout, self.send(req, method)).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout {
                endpoint: self.endpoint.redacted.clone(),
                method: method.into(),
                after: timeout,
            }),
        }
    }

    /// Turns a non-2xx response into its error.
    async fn check_status(
        &self,
        resp: Response<Incoming>,
        method: &str,
        had_session: bool,
    ) -> Result<Response<Incoming>, Error> {
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let endpoint = self.endpoint.redacted.clone();
        let method = method.to_owned();
        if status == StatusCode::NOT_FOUND && had_session {
            return Err(Error::SessionExpired { endpoint, method });
        }
        let values: Vec<&str> = resp
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        if status == StatusCode::UNAUTHORIZED {
            let challenges =
                www_authenticate::parse_all(values.iter().copied()).into_iter().flatten().collect();
            let bearer = www_authenticate::find_bearer(values.iter().copied()).map(Box::new);
            return Err(Error::Unauthorized { endpoint, method, challenges, bearer });
        }
        if status == StatusCode::FORBIDDEN
            && let Some(bearer) = www_authenticate::find_bearer(values.iter().copied())
            && bearer.is_insufficient_scope()
        {
            let challenges =
                www_authenticate::parse_all(values.iter().copied()).into_iter().flatten().collect();
            return Err(Error::InsufficientScope {
                endpoint,
                method,
                challenges,
                bearer: Box::new(bearer),
            });
        }
        let prefix = tokio::time::timeout(
            EXCERPT_WAIT,
            conn::read_prefix(resp.into_body(), wire::EXCERPT_BYTES + 1),
        )
        .await
        .unwrap_or_default();
        let body = self.secrets.scrub(&wire::excerpt(&prefix));
        Err(Error::Status { endpoint, method, status, body })
    }

    /// POSTs one request and reads its reply (JSON or a stream, resuming
    /// the stream when it breaks). Returns once the core has the reply.
    async fn exchange(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        body: Bytes,
        extra: ExtraHeaders,
        snap: &Snapshot,
        initialize: bool,
    ) -> Result<(), Error> {
        if self.legacy_post_uri().is_some() {
            return self.legacy_exchange(method, body, extra, snap).await;
        }
        // Kept for a fallback to the 2024-11-05 transport (a cheap clone).
        let again = initialize.then(|| body.clone());
        let mut req = self.build(Method::POST, &self.post_headers, body, snap, |h| {
            h.insert(MCP_METHOD.clone(), wire::method_value(method));
            for (name, value) in extra {
                h.insert(name, value);
            }
        });
        if wire::is_retry_safe(method) {
            req.extensions_mut().insert(conn::Replayable);
        }
        let resp = self.send(req, method).await?;
        if let Some(body) = again
            && matches!(resp.status().as_u16(), 400 | 404 | 405)
        {
            let refusal = match self.check_status(resp, method, false).await {
                Err(e) => e,
                Ok(_) => self.invalid(method, "unexpected status"),
            };
            tracing::info!(endpoint = %self.endpoint.redacted, error = %refusal, "initialize was refused; trying the 2024-11-05 HTTP+SSE transport");
            return match self.open_legacy(method).await {
                Ok(()) => self.legacy_exchange(method, body, Vec::new(), snap).await,
                // No legacy server either: the POST's refusal says more.
                Err(LegacyFail::NoStream(e)) => {
                    tracing::debug!(error = %e, "no 2024-11-05 SSE stream either");
                    Err(refusal)
                }
                Err(LegacyFail::Broken(e)) => Err(e),
            };
        }
        let resp = self.check_status(resp, method, snap.session.is_some()).await?;
        if initialize && let Some(session) = resp.headers().get(&SESSION_ID) {
            if wire::valid_session_id(session) {
                lock(&self.state).session = Some(session.clone());
            } else {
                return Err(self.invalid(method, "the Mcp-Session-Id header is not visible ASCII"));
            }
        }
        // The initialize reply's stream is resumed within the new session.
        let resumed;
        let snap = if initialize {
            resumed = Snapshot { session: lock(&self.state).session.clone(), ..snap.clone() };
            &resumed
        } else {
            snap
        };
        let status = resp.status();
        match wire::media_type(resp.headers()) {
            MediaType::Json => {
                let bytes = conn::read_limited(resp.into_body(), self.options.max_body)
                    .await
                    .map_err(|e| self.read_error(method, e))?;
                let incoming = jsonrpc::decode_slice_as::<Box<RawValue>>(&bytes)
                    .map_err(|e| self.invalid(method, &format!("the body is not JSON-RPC: {e}")))?;
                // An error the server could not tie to the request (a parse
                // error, say) still answers it.
                if let jsonrpc::IncomingOf::Single(jsonrpc::MessageOf::Error(e)) = &incoming
                    && e.id.is_none()
                {
                    return Err(Error::Rpc {
                        endpoint: self.endpoint.redacted.clone(),
                        method: method.into(),
                        error: e.error.clone(),
                    });
                }
                self.feed(incoming);
                if self.is_pending(id) {
                    return Err(self.invalid(method, "the JSON body does not answer the request"));
                }
                Ok(())
            }
            MediaType::EventStream => {
                self.read_reply_stream(id, method, resp.into_body(), snap).await
            }
            _ if status == StatusCode::ACCEPTED => {
                Err(self
                    .invalid(method, "the server accepted the request (202) without answering it"))
            }
            MediaType::Other(t) => {
                Err(self.invalid(method, &format!("unexpected content type {t:?}")))
            }
            MediaType::Missing => Err(self.invalid(method, "the response has no content type")),
        }
    }

    fn legacy_post_uri(&self) -> Option<http::Uri> {
        lock(&self.legacy).as_ref().map(|l| l.post_uri.clone())
    }

    /// POSTs a request over the 2024-11-05 transport: the server accepts it
    /// and the reply comes on the GET stream, so this never returns `Ok`
    /// (the waiter gets the reply; the caller's deadline bounds the wait).
    async fn legacy_exchange(
        &self,
        method: &str,
        body: Bytes,
        extra: ExtraHeaders,
        snap: &Snapshot,
    ) -> Result<(), Error> {
        let req = self.build(Method::POST, &self.post_headers, body, snap, |h| {
            h.insert(MCP_METHOD.clone(), wire::method_value(method));
            for (name, value) in extra {
                h.insert(name, value);
            }
        });
        let resp = self.send(req, method).await?;
        let resp = self.check_status(resp, method, false).await?;
        let body = resp.into_body();
        if !body.is_end_stream() {
            let _ = tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
        }
        std::future::pending::<Result<(), Error>>().await
    }

    /// Opens the 2024-11-05 SSE stream at the endpoint URL, reads its
    /// `endpoint` event (bounded by the request timeout), and starts the
    /// task that reads the rest.
    async fn open_legacy(self: &Arc<Self>, method: &str) -> Result<(), LegacyFail> {
        let snap = Snapshot { session: None, version: None, epoch: lock(&self.state).epoch };
        let mut body = match self.open_get(method, None, &snap).await {
            Ok(body) => body,
            Err(Resume::NotAllowed) => {
                return Err(LegacyFail::NoStream(self.invalid(method, "GET is not allowed (405)")));
            }
            Err(Resume::Fatal(e) | Resume::Retry(e)) => return Err(LegacyFail::NoStream(e)),
        };
        let mut decoder = Decoder::with_max_event_size(self.options.max_event_size);
        let found = tokio::time::timeout(self.options.request_timeout, async {
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(data) = frame.into_data() else { continue };
                // The owned iterator, not `decode_with`: it can stop at the
                // endpoint event and keep what follows for the reader.
                for item in decoder.decode(&data) {
                    if let Item::Event(event) = item
                        && event.event == "endpoint"
                    {
                        return Some(event.data);
                    }
                }
            }
            None
        })
        .await;
        let reference = match found {
            Ok(Some(reference)) => reference,
            Ok(None) => {
                return Err(LegacyFail::Broken(
                    self.invalid(method, "the SSE stream ended before its endpoint event"),
                ));
            }
            Err(_) => {
                return Err(LegacyFail::Broken(Error::Timeout {
                    endpoint: self.endpoint.redacted.clone(),
                    method: method.into(),
                    after: self.options.request_timeout,
                }));
            }
        };
        let mut post = Endpoint {
            uri: crate::endpoint::resolve_same_origin(&self.endpoint.uri, &reference).map_err(
                |reason| {
                    LegacyFail::Broken(
                        self.invalid(method, &format!("the endpoint event: {reason}")),
                    )
                },
            )?,
            redacted: self.endpoint.redacted.clone(),
        };
        if let StaticAuth::Query { name, value } = &self.options.auth {
            post = post
                .with_query_param(name, value)
                .map_err(|reason| LegacyFail::Broken(self.invalid(method, &reason)))?;
        }
        let legacy = Arc::new(Legacy { post_uri: post.uri, reader: Mutex::new(None) });
        let task = tokio::spawn(legacy_reader(
            Arc::downgrade(self),
            legacy.clone(),
            decoder,
            body,
            snap.epoch,
        ));
        *lock(&legacy.reader) = Some(task.abort_handle());
        *lock(&self.legacy) = Some(legacy);
        Ok(())
    }

    fn invalid(&self, method: &str, reason: &str) -> Error {
        Error::InvalidResponse {
            endpoint: self.endpoint.redacted.clone(),
            method: method.into(),
            reason: reason.into(),
        }
    }

    fn read_error(&self, method: &str, e: ReadError) -> Error {
        match e {
            ReadError::TooLarge => Error::BodyTooLarge {
                endpoint: self.endpoint.redacted.clone(),
                method: method.into(),
                limit: self.options.max_body,
            },
            ReadError::Io(reason) => Error::Connect {
                endpoint: self.endpoint.redacted.clone(),
                method: method.into(),
                reason: self.secrets.scrub(&reason),
            },
        }
    }

    /// Reads a reply stream until the reply arrived; when it ends before,
    /// resumes it with GET and `Last-Event-ID`, a bounded number of times
    /// in a row without progress.
    async fn read_reply_stream(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        body: Incoming,
        snap: &Snapshot,
    ) -> Result<(), Error> {
        let mut decoder = Decoder::with_max_event_size(self.options.max_event_size);
        let mut body = body;
        let mut failures = 0u32;
        let mut attempts = 0u32;
        loop {
            let (progress, end) = match self.pump(&mut decoder, body, id).await {
                Pumped::Replied => return Ok(()),
                Pumped::Ended { progress, reason } => (progress, reason),
            };
            if !self.is_pending(id) {
                return Ok(());
            }
            if progress {
                failures = 0;
            }
            let last = decoder.last_event_id().to_owned();
            if last.is_empty() {
                return Err(Error::StreamLost {
                    endpoint: self.endpoint.redacted.clone(),
                    method: method.into(),
                    attempts,
                    reason: format!(
                        "the stream ended ({end}) before the reply, with no event id to resume from"
                    ),
                });
            }
            body = loop {
                failures += 1;
                if failures > self.options.max_reconnects {
                    return Err(Error::StreamLost {
                        endpoint: self.endpoint.redacted.clone(),
                        method: method.into(),
                        attempts,
                        reason: format!("the stream ended ({end}) and could not be resumed"),
                    });
                }
                attempts += 1;
                let delay = wire::reconnect_delay(failures, decoder.retry(), wire::entropy());
                tracing::debug!(endpoint = %self.endpoint.redacted, method, ?delay, attempt = attempts, "resuming the reply stream");
                tokio::time::sleep(delay).await;
                match self.resume(method, &last, snap).await {
                    Ok(body) => break body,
                    // The server has the request: only a read may be sent
                    // again in a new session.
                    Err(Resume::Fatal(Error::SessionExpired { .. }))
                        if !wire::is_retry_safe(method) =>
                    {
                        return Err(Error::SessionLost {
                            endpoint: self.endpoint.redacted.clone(),
                            method: method.into(),
                        });
                    }
                    Err(Resume::Fatal(e)) => return Err(e),
                    Err(Resume::NotAllowed) => {
                        return Err(Error::StreamLost {
                            endpoint: self.endpoint.redacted.clone(),
                            method: method.into(),
                            attempts,
                            reason: "the server does not allow GET (405), so the stream cannot be resumed".into(),
                        });
                    }
                    Err(Resume::Retry(reason)) => {
                        tracing::debug!(method, error = %reason, "resuming the reply stream failed");
                    }
                }
            };
        }
    }

    /// One GET with `Last-Event-ID`.
    async fn resume(&self, method: &str, last: &str, snap: &Snapshot) -> Result<Incoming, Resume> {
        self.open_get(method, Some(last), snap).await
    }

    /// A GET for an event stream (with `Last-Event-ID` when resuming).
    async fn open_get(
        &self,
        method: &str,
        last: Option<&str>,
        snap: &Snapshot,
    ) -> Result<Incoming, Resume> {
        let last = match last {
            None => None,
            Some(last) => Some(HeaderValue::from_bytes(last.as_bytes()).map_err(|_| {
                Resume::Fatal(Error::StreamLost {
                    endpoint: self.endpoint.redacted.clone(),
                    method: method.into(),
                    attempts: 0,
                    reason: "the last event id cannot be sent as a header".into(),
                })
            })?),
        };
        let req = self.build(Method::GET, &self.get_headers, Bytes::new(), snap, |h| {
            if let Some(last) = last {
                h.insert(LAST_EVENT_ID.clone(), last);
            }
        });
        let resp = match self.send_bounded(req, method).await {
            Ok(r) => r,
            Err(e) => return Err(Resume::Retry(e)),
        };
        let status = resp.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(Resume::NotAllowed);
        }
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            return Err(match self.check_status(resp, method, false).await {
                Err(e) => Resume::Retry(e),
                Ok(_) => Resume::Retry(self.invalid(method, "unexpected status")),
            });
        }
        let resp =
            self.check_status(resp, method, snap.session.is_some()).await.map_err(Resume::Fatal)?;
        match wire::media_type(resp.headers()) {
            MediaType::EventStream => Ok(resp.into_body()),
            _ => {
                Err(Resume::Fatal(self.invalid(method, "the GET stream is not text/event-stream")))
            }
        }
    }

    /// Feeds a stream's events to the core until the reply to `id` arrived
    /// (then the rest of the stream is drained in the background) or the
    /// stream ended.
    async fn pump(
        self: &Arc<Self>,
        decoder: &mut Decoder,
        mut body: Incoming,
        id: &RequestId,
    ) -> Pumped {
        let mut progress = false;
        let reason = loop {
            match body.frame().await {
                None => break "end of stream".to_owned(),
                Some(Err(e)) => break self.secrets.scrub(&chain(&e)),
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue };
                    decoder.decode_with(&data, |item| progress |= self.on_item(item));
                    if !self.is_pending(id) {
                        if !body.is_end_stream() {
                            self.drain(std::mem::take(decoder), body);
                        }
                        return Pumped::Replied;
                    }
                }
            }
        };
        decoder.finish();
        decoder.decode_with(b"", |item| progress |= self.on_item(item));
        Pumped::Ended { progress, reason }
    }

    /// Reads what follows a reply on its stream, for a bounded time.
    fn drain(self: &Arc<Self>, mut decoder: Decoder, mut body: Incoming) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let _ = tokio::time::timeout(DRAIN_AFTER_REPLY, async {
                while let Some(Ok(frame)) = body.frame().await {
                    let Some(inner) = weak.upgrade() else { return };
                    if let Ok(data) = frame.into_data() {
                        decoder.decode_with(&data, |item| {
                            inner.on_item(item);
                        });
                    }
                }
            })
            .await;
        });
    }

    /// Acts on one stream item; true when it was an event (progress). Items
    /// come borrowed (`Decoder::decode_with`): an event's JSON is parsed
    /// straight from the body frame when it lies whole in it.
    fn on_item(self: &Arc<Self>, item: ItemRef<'_>) -> bool {
        match item {
            ItemRef::Event(event) => {
                // Priming events (an id and empty data) are never parsed.
                if event.data.is_empty() {
                    return true;
                }
                if event.event != "message" {
                    tracing::debug!(endpoint = %self.endpoint.redacted, event = %event.event, "ignoring a server-sent event of another type");
                    return true;
                }
                match jsonrpc::decode_slice_as::<Box<RawValue>>(event.data.as_bytes()) {
                    Ok(incoming) => self.feed(incoming),
                    Err(e) => {
                        tracing::warn!(endpoint = %self.endpoint.redacted, error = %e, "skipping an event that is not a JSON-RPC message")
                    }
                }
                true
            }
            ItemRef::NoData { .. } => true,
            ItemRef::Error(e) => {
                tracing::warn!(endpoint = %self.endpoint.redacted, error = %e, "event stream");
                false
            }
            _ => false,
        }
    }

    /// Gives incoming messages to the core and acts on what follows.
    fn feed(self: &Arc<Self>, incoming: jsonrpc::IncomingOf<Box<RawValue>>) {
        let (events, flush) = {
            let mut core = lock(&self.core);
            core.handle_incoming(incoming, Instant::now());
            (drain_events(&mut core), core.has_transmit())
        };
        deliver(self, events);
        if flush {
            self.spawn_flush();
        }
    }

    /// Waits for a request's outcome while its exchange runs, expiring
    /// deadlines as they pass.
    async fn wait(
        self: &Arc<Self>,
        id: &RequestId,
        mut rx: oneshot::Receiver<Result<Box<RawValue>, ClientError>>,
        exchange: impl Future<Output = Result<(), Error>>,
    ) -> Result<Box<RawValue>, WaitError> {
        let closed = || ClientError::Closed { method: String::new() };
        tokio::pin!(exchange);
        let mut running = true;
        loop {
            let deadline = lock(&self.core).deadline(id);
            let Some(deadline) = deadline else { break };
            tokio::select! {
                biased;
                outcome = &mut rx => {
                    return outcome.unwrap_or_else(|_| Err(closed())).map_err(WaitError::Client);
                }
                result = &mut exchange, if running => {
                    running = false;
                    if let Err(e) = result {
                        return Err(WaitError::Http(e));
                    }
                }
                () = tokio::time::sleep_until(deadline.into()) => {
                    let (events, flush) = {
                        let mut core = lock(&self.core);
                        core.handle_timeout(Instant::now());
                        (drain_events(&mut core), core.has_transmit())
                    };
                    deliver(self, events);
                    if flush {
                        self.spawn_flush();
                    }
                }
            }
        }
        rx.await.unwrap_or_else(|_| Err(closed())).map_err(WaitError::Client)
    }

    /// Stops waiting for a request (sending `notifications/cancelled`).
    fn forget(self: &Arc<Self>, id: &RequestId, reason: &str) {
        let (events, flush) = {
            let mut core = lock(&self.core);
            core.cancel(id, reason);
            (drain_events(&mut core), core.has_transmit())
        };
        deliver(self, events);
        if flush {
            self.spawn_flush();
        }
    }

    fn spawn_flush(self: &Arc<Self>) {
        let inner = self.clone();
        tokio::spawn(async move { inner.flush().await });
    }

    /// POSTs what the core queued (notifications, answers to server
    /// requests), in order, one message per POST.
    async fn flush(&self) {
        let _guard = self.flush_lock.lock().await;
        loop {
            let message = lock(&self.core).poll_transmit();
            let Some(message) = message else { break };
            let snap = self.snapshot();
            if let Err(e) = self.post_message(&message, &snap).await {
                tracing::debug!(error = %e, "sending a message to the MCP server failed");
            }
        }
    }

    /// POSTs a notification or a response; the server answers 202.
    async fn post_message(&self, message: &Message, snap: &Snapshot) -> Result<(), Error> {
        let label = message.method().unwrap_or("response");
        let req = self.build(
            Method::POST,
            &self.post_headers,
            Bytes::from(message.to_vec()),
            snap,
            |h| {
                if let Some(m) = message.method() {
                    h.insert(MCP_METHOD.clone(), wire::method_value(m));
                }
            },
        );
        let resp = self.send_bounded(req, label).await?;
        let resp = self.check_status(resp, label, snap.session.is_some()).await?;
        let body = resp.into_body();
        if !body.is_end_stream() {
            // Read what a server sent anyway, so the connection is reused.
            let _ = tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
        }
        Ok(())
    }
}

/// How reading one stream ended.
enum Pumped {
    Replied,
    Ended { progress: bool, reason: String },
}

impl ops::Requester for HttpClient {
    type Error = Error;

    fn client_error(&self, error: ClientError) -> Error {
        self.inner.map_error(error)
    }

    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.request_text(method, params, options).await
    }

    fn cached_tools(&self) -> Option<Arc<[Tool]>> {
        lock(&self.inner.core).cached_tools()
    }

    fn tools_generation(&self) -> u64 {
        lock(&self.inner.core).tools_generation()
    }

    /// (Tools whose `x-mcp-header` annotations are invalid were already
    /// dropped, with a warning, by `ops::list_tools_fresh`.)
    fn store_tools(&self, generation: u64, tools: Vec<Tool>) -> Arc<[Tool]> {
        lock(&self.inner.core).store_tools(generation, tools)
    }
}

/// The client as a requester whose requests carry no `Mcp-Param-*`
/// headers (so listing the tools to find them does not recurse), sharing
/// the client's tool cache.
struct Plain<'a>(&'a HttpClient);

impl ops::Requester for Plain<'_> {
    type Error = Error;

    fn client_error(&self, error: ClientError) -> Error {
        self.0.inner.map_error(error)
    }

    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.0.initialize().await?;
        self.0.request_with(method, params, options, &[]).await
    }

    fn cached_tools(&self) -> Option<Arc<[Tool]>> {
        ops::Requester::cached_tools(self.0)
    }

    fn tools_generation(&self) -> u64 {
        ops::Requester::tools_generation(self.0)
    }

    fn store_tools(&self, generation: u64, tools: Vec<Tool>) -> Arc<[Tool]> {
        ops::Requester::store_tools(self.0, generation, tools)
    }
}

/// Cancels a request whose caller stopped waiting (its future was dropped).
struct CancelOnDrop {
    inner: Weak<Inner>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(id), Some(inner)) = (self.id.take(), self.inner.upgrade()) else { return };
        if !inner.is_pending(&id) || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        inner.forget(&id, "the client stopped waiting");
    }
}

fn drain_events(core: &mut ClientCore<Waiter>) -> Vec<Event<Waiter>> {
    std::iter::from_fn(|| core.poll_event()).collect()
}

/// Acts on the core's events outside its lock.
fn deliver(inner: &Arc<Inner>, events: Vec<Event<Waiter>>) {
    for event in events {
        let work = event.deliver(inner.options.on_event.as_ref(), |waiter, outcome| {
            let _ = waiter.send(outcome);
        });
        match work {
            Some(DriverWork::AnswerServerRequest(request)) => {
                let weak = Arc::downgrade(inner);
                let handlers = inner.options.handlers.clone();
                let id = request.id.clone();
                // Held while spawning, so the task cannot remove its entry
                // before it is inserted.
                let mut tasks = lock(&inner.server_tasks);
                let task = tokio::spawn(async move {
                    let outcome = handlers.handle(&request.method, request.params).await;
                    let Some(inner) = weak.upgrade() else { return };
                    lock(&inner.server_tasks).remove(&request.id);
                    lock(&inner.core).respond(request.id, outcome);
                    inner.flush().await;
                });
                tasks.insert(id, task.abort_handle());
            }
            Some(DriverWork::StopServerRequest(id)) => {
                if let Some(task) = lock(&inner.server_tasks).remove(&id) {
                    task.abort();
                }
            }
            _ => {}
        }
    }
}

/// Reads the standalone GET stream, holding the client only while an item
/// is handled (so dropping the client ends it), and reopens it when it ends.
async fn listen(weak: Weak<Inner>, body: Incoming, mut epoch: u64) {
    let (max_event, max_reconnects) = match weak.upgrade() {
        Some(inner) => (inner.options.max_event_size, inner.options.max_reconnects),
        None => return,
    };
    let mut decoder = Decoder::with_max_event_size(max_event);
    let mut body = body;
    let mut failures = 0u32;
    loop {
        let mut progress = false;
        let mut body_done = false;
        while !body_done {
            let frame = body.frame().await;
            let Some(inner) = weak.upgrade() else { return };
            match frame {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        decoder.decode_with(&data, |item| progress |= inner.on_item(item));
                    }
                }
                _ => body_done = true,
            }
        }
        decoder.finish();
        {
            let Some(inner) = weak.upgrade() else { return };
            decoder.decode_with(b"", |item| progress |= inner.on_item(item));
        }
        if progress {
            failures = 0;
        }
        body = loop {
            failures += 1;
            if failures > max_reconnects {
                tracing::debug!("the standalone event stream ended and could not be reopened");
                return;
            }
            let delay = wire::reconnect_delay(failures, decoder.retry(), wire::entropy());
            tokio::time::sleep(delay).await;
            let Some(inner) = weak.upgrade() else { return };
            if lock(&inner.state).closed {
                return;
            }
            let snap = inner.snapshot();
            if snap.epoch != epoch {
                // A new session: the old stream's event ids mean nothing.
                decoder = Decoder::with_max_event_size(max_event);
                epoch = snap.epoch;
            }
            let last = decoder.last_event_id().to_owned();
            let last = (!last.is_empty()).then_some(last.as_str());
            match inner.open_get("GET", last, &snap).await {
                Ok(body) => break body,
                Err(Resume::Retry(e)) => {
                    tracing::debug!(error = %e, "reopening the standalone event stream failed")
                }
                Err(Resume::NotAllowed) => return,
                Err(Resume::Fatal(e)) => {
                    tracing::warn!(error = %e, "the standalone event stream stopped");
                    return;
                }
            }
        };
    }
}

/// Reads a 2024-11-05 SSE stream after its `endpoint` event: `message`
/// events go to the core. When it ends, the session is over: waiting
/// requests fail (and are retried once in a new session).
async fn legacy_reader(
    weak: Weak<Inner>,
    legacy: Arc<Legacy>,
    mut decoder: Decoder,
    mut body: Incoming,
    epoch: u64,
) {
    // What the endpoint event's chunk held after it (an empty chunk reads
    // what the decoder holds).
    if let Some(inner) = weak.upgrade() {
        decoder.decode_with(b"", |item| {
            inner.on_item(item);
        });
    }
    while let Some(Ok(frame)) = body.frame().await {
        let Some(inner) = weak.upgrade() else { return };
        if let Ok(data) = frame.into_data() {
            decoder.decode_with(&data, |item| {
                inner.on_item(item);
            });
        }
    }
    let Some(inner) = weak.upgrade() else { return };
    tracing::info!(endpoint = %inner.endpoint.redacted, "the 2024-11-05 SSE stream ended");
    {
        let mut current = lock(&inner.legacy);
        if current.as_ref().is_some_and(|l| Arc::ptr_eq(l, &legacy)) {
            *current = None;
        }
    }
    let reset = {
        let mut state = lock(&inner.state);
        let reset = !state.closed && state.epoch == epoch;
        if reset {
            state.epoch += 1;
        }
        reset
    };
    if reset {
        let events = {
            let mut core = lock(&inner.core);
            core.reset();
            drain_events(&mut core)
        };
        deliver(&inner, events);
    }
}
