//! The Streamable HTTP transport: what it holds, and the
//! [`mcp_peer::Transport`] face the client drives.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use hyper::body::Body as _;
use mcp_peer::{Link, OutgoingRequest, Transport};
use mcp_proto::ProtocolVersion;
use mcp_proto::client::ClientError;
use mcp_proto::jsonrpc::Message;
use mcp_proto::methods;
use tokio::task::AbortHandle;

use crate::auth::{Secrets, StaticAuth};
use crate::conn::{self, Pool};
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::guard::Guard;
use crate::legacy::Legacy;
use crate::oauth::{Fetcher, OAUTH_FETCH_TIMEOUT};
use crate::options::HttpOptions;
use crate::send::EXCERPT_WAIT;
use crate::stream::{EventStreamState, GetError};
use crate::wire::{self, ACCEPT_BOTH, MCP_METHOD, MCP_NAME};

/// Headers a request carries besides the fixed ones (`Mcp-Name`,
/// `Mcp-Param-*`).
pub(crate) type ExtraHeaders = Vec<(HeaderName, HeaderValue)>;

/// How long the handshake waits for the standalone GET stream to open.
const EVENT_STREAM_OPEN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The Streamable HTTP transport of one endpoint (and the 2024-11-05
/// HTTP+SSE transport it falls back to when `initialize` is refused): a
/// connection pool, the session id, the reply streams and the standalone
/// GET stream. Give it to [`mcp_peer::Client::new`] with
/// [`HttpOptions::client_options`], or use [`HttpClient`](crate::HttpClient).
#[derive(Debug)]
pub struct HttpTransport {
    pub(crate) inner: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) options: HttpOptions,
    pub(crate) endpoint: Endpoint,
    /// Content-Type, Accept (both) and the credentials.
    pub(crate) post_headers: HeaderMap,
    /// Accept: text/event-stream and the credentials.
    pub(crate) get_headers: HeaderMap,
    /// The credentials alone.
    pub(crate) plain_headers: HeaderMap,
    pub(crate) secrets: Secrets,
    pub(crate) pool: Pool,
    /// The OAuth client, when the host configured OAuth.
    pub(crate) oauth: Option<Arc<mcp_auth::OAuthClient>>,
    pub(crate) link: OnceLock<Link>,
    pub(crate) state: Mutex<State>,
    pub(crate) flush_lock: tokio::sync::Mutex<()>,
    /// The standalone GET stream's task.
    pub(crate) listener: Mutex<Option<AbortHandle>>,
    /// Held while the standalone stream is being opened, so concurrent
    /// openers share one GET.
    pub(crate) opening: tokio::sync::Mutex<()>,
    /// Set when the server speaks the 2024-11-05 HTTP+SSE transport.
    pub(crate) legacy: Mutex<Option<Arc<Legacy>>>,
    /// What became of the standalone GET stream (always written with
    /// `send_replace`: there may be nobody watching).
    pub(crate) event_stream: tokio::sync::watch::Sender<EventStreamState>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
        if let Some(legacy) = lock(&self.legacy).take() {
            legacy.stop();
        }
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("endpoint", &self.endpoint.redacted)
            .field("options", &self.options)
            .field("state", &*lock(&self.state))
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) session: Option<HeaderValue>,
    /// Counts sessions (each `initialize` starts one): a stream knows which
    /// session it belongs to.
    pub(crate) epoch: u64,
    pub(crate) closed: bool,
    /// The server answered the standalone GET with 405 in this session:
    /// it has no such stream, and is not asked again.
    pub(crate) no_event_stream: bool,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("session", &self.session.as_ref().map(|_| "<set>"))
            .field("epoch", &self.epoch)
            .field("closed", &self.closed)
            .field("no_event_stream", &self.no_event_stream)
            .finish()
    }
}

/// What a request is sent with.
#[derive(Clone)]
pub(crate) struct Snapshot {
    pub(crate) session: Option<HeaderValue>,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) epoch: u64,
}

impl HttpTransport {
    /// Checks the URL, the credentials and the TLS configuration, and
    /// prepares the connection pool (see [`HttpClient::connect`](crate::HttpClient::connect)).
    pub fn connect(url: &str, options: HttpOptions) -> Result<HttpTransport, Error> {
        let mut endpoint =
            Endpoint::parse(url).map_err(|reason| Error::InvalidEndpoint { reason })?;
        let mut auth = options.auth.to_parts().map_err(|reason| Error::InvalidAuth { reason })?;
        // What the URL itself carries (query values) is as secret as the
        // configured credentials.
        auth.secrets.add_url(url);
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
        let pool = conn::build_pool(&options, proxy.as_ref(), None)
            .map_err(|reason| Error::Tls { reason })?;
        let oauth = match &options.oauth {
            None => None,
            Some(_) if options.auth != StaticAuth::None => {
                return Err(Error::InvalidAuth {
                    reason: "static credentials and OAuth cannot be used together".into(),
                });
            }
            Some(o) => {
                // The OAuth requests get a pool of their own whose resolver
                // the SSRF guard checks (through a proxy, the proxy
                // resolves: the client's pool, literal addresses checked).
                let guard = Guard::new(o.address_policy, &endpoint.uri, proxy.is_some());
                let oauth_pool = match (&guard, &proxy) {
                    (Some(guard), None) => conn::build_pool(&options, None, Some(guard))
                        .map_err(|reason| Error::Tls { reason })?,
                    _ => pool.clone(),
                };
                let fetch =
                    Arc::new(Fetcher { pool: oauth_pool, timeout: OAUTH_FETCH_TIMEOUT, guard });
                let client = o
                    .build(url, fetch)
                    .map_err(|e| Error::InvalidAuth { reason: format!("OAuth: {e}") })?;
                Some(Arc::new(client))
            }
        };
        let inner = Arc::new(Shared {
            options,
            endpoint,
            post_headers,
            get_headers,
            plain_headers,
            secrets: auth.secrets,
            pool,
            oauth,
            link: OnceLock::new(),
            state: Mutex::new(State::default()),
            flush_lock: tokio::sync::Mutex::new(()),
            listener: Mutex::new(None),
            opening: tokio::sync::Mutex::new(()),
            legacy: Mutex::new(None),
            event_stream: tokio::sync::watch::channel(EventStreamState::NotOpen).0,
        });
        Ok(HttpTransport { inner })
    }

    /// The OAuth client, when [`HttpOptions::oauth`] is set.
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

    /// Whether the server gave a session id.
    pub fn has_session(&self) -> bool {
        lock(&self.inner.state).session.is_some()
    }

    /// Whether the server speaks the 2024-11-05 HTTP+SSE transport.
    pub fn is_legacy(&self) -> bool {
        lock(&self.inner.legacy).is_some()
    }

    /// Opens the standalone GET stream when it is not open (see
    /// [`HttpClient::open_event_stream`](crate::HttpClient::open_event_stream));
    /// call it once the handshake finished.
    pub async fn open_event_stream(&self) -> Result<bool, Error> {
        self.inner.open_event_stream().await
    }

    /// The standalone GET stream's state, and each change of it: a host
    /// that waits for the server's notifications (`mcpc listen`) learns
    /// here that none will come, because the stream was given up
    /// ([`EventStreamState::Ended`]) or the server has none
    /// ([`EventStreamState::NotOffered`]).
    pub fn watch_event_stream(&self) -> tokio::sync::watch::Receiver<EventStreamState> {
        self.inner.event_stream.subscribe()
    }
}

impl Shared {
    /// A JSON-RPC error from the server with the client's secrets taken
    /// out of its message and data (a server may echo what it was sent).
    pub(crate) fn scrub_error(&self, mut error: mcp_proto::ErrorObject) -> mcp_proto::ErrorObject {
        if self.secrets.is_empty() {
            return error;
        }
        error.message = self.secrets.scrub(&error.message);
        if let Some(data) = &error.data {
            let text = data.to_string();
            let scrubbed = self.secrets.scrub(&text);
            if scrubbed != text {
                error.data = serde_json::from_str(&scrubbed).ok();
            }
        }
        error
    }

    pub(crate) fn link(&self) -> Link {
        self.link.get().cloned().unwrap_or_else(Link::detached)
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        let version = self.link.get().and_then(Link::protocol_version);
        let state = lock(&self.state);
        Snapshot { session: state.session.clone(), version, epoch: state.epoch }
    }

    pub(crate) fn is_pending(&self, id: &mcp_proto::RequestId) -> bool {
        self.link.get().is_some_and(|l| l.is_pending(id))
    }

    pub(crate) fn map_error(&self, e: ClientError) -> Error {
        let endpoint = self.endpoint.redacted.clone();
        match e {
            ClientError::Rpc { method, error } => {
                Error::Rpc { endpoint, method, error: self.scrub_error(error) }
            }
            ClientError::Timeout { method, after } => Error::Timeout { endpoint, method, after },
            ClientError::Closed { .. } if lock(&self.state).closed => Error::Closed { endpoint },
            ClientError::ConnectionLost { method } => Error::SessionLost { endpoint, method },
            ClientError::UnsupportedProtocolVersion {
                method,
                supported,
                requested,
                client_versions,
                error,
            } => {
                let error = Box::new(self.scrub_error(*error));
                let source = ClientError::UnsupportedProtocolVersion {
                    method,
                    supported,
                    requested,
                    client_versions,
                    error,
                };
                Error::Protocol { endpoint, source }
            }
            ClientError::HeaderMismatch { method, error } => {
                let error = Box::new(self.scrub_error(*error));
                Error::Protocol { endpoint, source: ClientError::HeaderMismatch { method, error } }
            }
            ClientError::MissingClientCapability { method, required, error } => {
                let error = Box::new(self.scrub_error(*error));
                let source = ClientError::MissingClientCapability { method, required, error };
                Error::Protocol { endpoint, source }
            }
            other => Error::Protocol { endpoint, source: other },
        }
    }

    /// POSTs what the core queued (notifications, answers to server
    /// requests), in order, one message per POST. Every message is tried;
    /// the first failure is returned.
    ///
    /// In the stateless era a request given up on has its answer's stream
    /// closed (its exchange future is dropped), which the spec makes the
    /// cancellation signal; its `notifications/cancelled` is POSTed too,
    /// for a server that answered with JSON and never saw a stream close.
    async fn flush(&self) -> Result<(), Error> {
        let _guard = self.flush_lock.lock().await;
        let link = self.link();
        let mut first = None;
        while let Some(message) = link.poll_transmit() {
            let snap = self.snapshot();
            if let Err(e) = self.post_message(&message, &snap).await {
                tracing::debug!(endpoint = %self.endpoint.redacted, error = %e, "sending a message to the MCP server failed");
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
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

    /// Opens the standalone GET stream unless it (or the 2024-11-05 stream)
    /// is open.
    pub(crate) async fn open_event_stream(self: &Arc<Self>) -> Result<bool, Error> {
        let _opening = self.opening.lock().await;
        if lock(&self.legacy).is_some() {
            return Ok(true);
        }
        if self.link().protocol_version().is_some_and(ProtocolVersion::is_modern) {
            // The stateless era has no standalone stream
            // (`subscriptions/listen` replaces it).
            return Ok(false);
        }
        if lock(&self.listener).as_ref().is_some_and(|t| !t.is_finished()) {
            return Ok(true);
        }
        if lock(&self.state).no_event_stream {
            return Ok(false);
        }
        let snap = self.snapshot();
        match self.open_get("GET", None, &snap).await {
            Ok(body) => {
                let task =
                    tokio::spawn(crate::stream::listen(Arc::downgrade(self), body, snap.epoch));
                if let Some(old) = lock(&self.listener).replace(task.abort_handle()) {
                    old.abort();
                }
                self.event_stream.send_replace(EventStreamState::Open);
                Ok(true)
            }
            Err(GetError::NotAllowed) => {
                let mut state = lock(&self.state);
                if state.epoch == snap.epoch {
                    state.no_event_stream = true;
                    self.event_stream.send_replace(EventStreamState::NotOffered);
                }
                Ok(false)
            }
            Err(GetError::Fatal(e) | GetError::Retry(e)) => Err(e),
        }
    }
}

impl Transport for HttpTransport {
    type Error = Error;

    fn attach(&self, link: Link) {
        if self.inner.link.set(link).is_err() {
            tracing::warn!(endpoint = %self.inner.endpoint.redacted, "the transport was attached twice; keeping the first client");
        }
    }

    /// The `Mcp-Name` and `Mcp-Param-*` headers are read from the
    /// parameters and the called tool's schema.
    fn wants_params(&self) -> bool {
        true
    }

    async fn send_request(&self, request: OutgoingRequest<'_>) -> Result<(), Error> {
        let inner = &self.inner;
        let initialize = request.method == methods::INITIALIZE;
        let modern = request.protocol_version.filter(|v| v.is_modern());
        let snap = if initialize {
            // A new session: a new epoch, no session id, no version header.
            let mut state = lock(&inner.state);
            state.session = None;
            state.no_event_stream = false;
            state.epoch += 1;
            Snapshot { session: None, version: None, epoch: state.epoch }
        } else if let Some(version) = modern {
            // The stateless era: no session; the version header is the one
            // the request's `_meta` names.
            Snapshot { session: None, version: Some(version), epoch: lock(&inner.state).epoch }
        } else {
            inner.snapshot()
        };
        let mut extra = ExtraHeaders::new();
        if let Some(name) = wire::mcp_name(request.method, request.params) {
            extra.push((MCP_NAME.clone(), name));
        }
        if let Some(tool) = request.tool {
            extra.extend(wire::param_headers(tool, request.params));
        }
        let body = Bytes::from(request.body);
        inner.exchange(request.id, request.method, body, extra, &snap, initialize).await
    }

    async fn flush(&self) -> Result<(), Error> {
        self.inner.flush().await
    }

    async fn initialized(&self) {
        let inner = &self.inner;
        if !inner.options.event_stream || lock(&inner.legacy).is_some() {
            return;
        }
        // Opened by a task of its own, which the handshake waits for (one
        // round trip, at most EVENT_STREAM_OPEN_WAIT): the stream is then
        // open before the first request goes out, so a server that has
        // something to say right away has somewhere to say it, and the
        // server never mistakes it for the resumption of a later request's
        // stream. A server slower than that gets its stream later.
        let weak = Arc::downgrade(inner);
        let task = tokio::spawn(async move {
            let Some(inner) = weak.upgrade() else { return };
            match inner.open_event_stream().await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::debug!(endpoint = %inner.endpoint.redacted, "the server offers no standalone event stream (405)")
                }
                Err(e) => {
                    tracing::debug!(endpoint = %inner.endpoint.redacted, error = %e, "the standalone event stream could not be opened")
                }
            }
        });
        let _ = tokio::time::timeout(EVENT_STREAM_OPEN_WAIT, task).await;
    }

    /// Stops the streams, and deletes the session when the server gave one
    /// (`DELETE`; 405 and 404 are accepted).
    async fn close(&self) -> Result<(), Error> {
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
        inner.event_stream.send_if_modified(|state| {
            let open = *state == EventStreamState::Open;
            if open {
                let reason = "the client was closed".to_owned();
                *state = EventStreamState::Ended { reason };
            }
            open
        });
        if let Some(legacy) = lock(&inner.legacy).take() {
            // Ending the GET stream ends a 2024-11-05 session.
            legacy.stop();
        }
        let Some(session) = session else { return Ok(()) };
        let version = inner.link.get().and_then(Link::protocol_version);
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

    fn client_error(&self, error: ClientError) -> Error {
        self.inner.map_error(error)
    }

    fn resends_after_loss(&self) -> bool {
        true
    }

    /// The endpoint's origin (scheme and authority); none for an endpoint
    /// whose redacted form hides it.
    fn era_cache_key(&self) -> Option<String> {
        let redacted = &self.inner.endpoint.redacted;
        (!redacted.starts_with('<')).then(|| redacted.clone())
    }
}
