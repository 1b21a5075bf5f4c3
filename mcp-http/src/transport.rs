//! The transport front: [`HttpTransport`], the [`mcp_peer::Transport`] face
//! the client drives. It holds the shared request layer, the Streamable
//! HTTP state and the variant in use, sends each message through that
//! variant, and is the one place that decides to fall back to the
//! 2024-11-05 HTTP+SSE transport.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::Response;
use hyper::body::Incoming;
use mcp_peer::{Link, OutgoingRequest, Transport};
use mcp_proto::client::ClientError;
use mcp_proto::methods;

use crate::error::Error;
use crate::legacy::{Legacy, LegacyFail};
use crate::options::HttpOptions;
use crate::request::{ExtraHeaders, Http, Snapshot, lock};
use crate::streamable::{EventStreamState, Streamable};
use crate::wire;

/// How long the handshake waits for the standalone GET stream to open
/// when the host asked it to ([`HttpOptions::wait_for_event_stream`]).
const EVENT_STREAM_OPEN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The Streamable HTTP transport of one endpoint (and the 2024-11-05
/// HTTP+SSE transport it falls back to when `initialize` is refused): a
/// connection pool, the session id, the reply streams and the standalone
/// GET stream. Give it to [`mcp_peer::Client::new`] with
/// [`HttpOptions::client_options`], or use [`HttpClient`](crate::HttpClient).
#[derive(Debug)]
pub struct HttpTransport {
    inner: Arc<Shared>,
}

/// Which protocol variant the server speaks.
#[derive(Clone)]
enum Variant {
    /// Streamable HTTP (until an `initialize` is refused).
    Streamable,
    /// The 2024-11-05 HTTP+SSE transport, while its GET stream lasts.
    Legacy(Arc<Legacy>),
}

struct Shared {
    http: Arc<Http>,
    streamable: Arc<Streamable>,
    variant: Mutex<Variant>,
    flush_lock: tokio::sync::Mutex<()>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // A standalone GET still being opened ends with the client (its
        // task holds the Streamable state, not this).
        self.streamable.stop_opening();
        if let Variant::Legacy(legacy) = self.take_variant() {
            legacy.stop();
        }
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("endpoint", &self.http.endpoint.redacted)
            .field("options", &self.http.options)
            .field("state", &*lock(&self.streamable.state))
            .field("closed", &self.http.is_closed())
            .finish_non_exhaustive()
    }
}

impl HttpTransport {
    /// Checks the URL, the credentials and the TLS configuration, and
    /// prepares the connection pool (see [`connect`](crate::connect)).
    pub fn connect(url: &str, options: HttpOptions) -> Result<HttpTransport, Error> {
        HttpTransport::with(url, &options)
    }

    /// [`connect`](Self::connect) reading the options in place (the
    /// client's share of them goes to the client, not copied).
    pub(crate) fn with(url: &str, options: &HttpOptions) -> Result<HttpTransport, Error> {
        let http = Arc::new(Http::new(url, options)?);
        let streamable = Arc::new(Streamable::new(http.clone()));
        let inner = Arc::new(Shared {
            http,
            streamable,
            variant: Mutex::new(Variant::Streamable),
            flush_lock: tokio::sync::Mutex::new(()),
        });
        Ok(HttpTransport { inner })
    }

    /// The OAuth client, when [`HttpOptions::oauth`] is set.
    pub fn oauth(&self) -> Option<&Arc<mcp_auth::OAuthClient>> {
        self.inner.http.oauth.as_ref()
    }

    /// The endpoint as errors and logs show it (scheme and `host[:port]`).
    pub fn redacted_endpoint(&self) -> &str {
        &self.inner.http.endpoint.redacted
    }

    /// Whether requests go through a proxy.
    pub fn is_proxied(&self) -> bool {
        self.inner.http.pool.is_proxied()
    }

    /// Whether the server gave a session id.
    pub fn has_session(&self) -> bool {
        self.inner.streamable.has_session()
    }

    /// Whether the server speaks the 2024-11-05 HTTP+SSE transport.
    pub fn is_legacy(&self) -> bool {
        matches!(*lock(&self.inner.variant), Variant::Legacy(_))
    }

    /// Opens the standalone GET stream now, when it is not open: by
    /// default it opens by itself, in the background, after the handshake
    /// ([`HttpOptions::event_stream`](crate::HttpOptions::event_stream));
    /// call this once the handshake finished
    /// ([`initialize`](mcp_peer::Client::initialize)). While that opening
    /// is under way, this waits for it and says what it found.
    /// [`Error::Closed`] after [`close`](mcp_peer::Client::close).
    ///
    /// Returns `Ok(false)` when the server offers no such stream (405); that
    /// is final, nothing is retried. `Ok(true)` when the stream is open (or
    /// already was; on a 2024-11-05 connection the SSE stream that carries
    /// every reply is that stream, and no other GET is made). A background
    /// task reads it; when the stream ends it is reopened (with
    /// `Last-Event-ID` when the server gave event ids, in the current
    /// session), after the server's `retry` delay or a jittered backoff, at
    /// most [`HttpOptions::max_reconnects`](crate::HttpOptions::max_reconnects)
    /// times in a row without a message. It stops then, on an HTTP error, at
    /// [`close`](mcp_peer::Client::close), or when the last clone of the
    /// client is dropped; [`watch_event_stream`](Self::watch_event_stream)
    /// says when it ended and why.
    pub async fn open_event_stream(&self) -> Result<bool, Error> {
        self.inner.open_event_stream().await
    }

    /// The standalone GET stream's state, and each change of it: a host
    /// that waits for the server's notifications (`mcpc listen`) learns
    /// here that none will come, because the stream was given up
    /// ([`EventStreamState::Ended`]) or the server has none
    /// ([`EventStreamState::NotOffered`]).
    pub fn watch_event_stream(&self) -> tokio::sync::watch::Receiver<EventStreamState> {
        self.inner.streamable.watch_event_stream()
    }
}

/// Whether the status an `initialize` POST got says the server does not
/// speak Streamable HTTP, so the 2024-11-05 transport is worth a try.
fn refused_initialize(resp: &Response<Incoming>) -> bool {
    matches!(resp.status().as_u16(), 400 | 404 | 405)
}

impl Shared {
    fn variant(&self) -> Variant {
        lock(&self.variant).clone()
    }

    /// Stops using the variant in use (the 2024-11-05 one, if any).
    fn take_variant(&self) -> Variant {
        std::mem::replace(&mut *lock(&self.variant), Variant::Streamable)
    }

    /// Stops using a 2024-11-05 connection whose stream ended; says
    /// whether it was the one in use.
    fn retire(&self, legacy: &Arc<Legacy>) -> bool {
        let mut variant = lock(&self.variant);
        let current = matches!(&*variant, Variant::Legacy(l) if Arc::ptr_eq(l, legacy));
        if current {
            *variant = Variant::Streamable;
        }
        current
    }

    /// Sends one request through the variant in use and reads its reply;
    /// an `initialize` that Streamable HTTP refuses tries the 2024-11-05
    /// transport.
    async fn exchange(
        self: &Arc<Self>,
        id: &mcp_proto::RequestId,
        method: &str,
        body: Bytes,
        extra: ExtraHeaders,
        snap: &Snapshot,
        initialize: bool,
    ) -> Result<(), Error> {
        if let Variant::Legacy(legacy) = self.variant() {
            // The cold paths are boxed: a request's future stays small.
            return Box::pin(legacy.exchange(&self.http, method, body, extra, snap)).await;
        }
        // Kept for a fallback to the 2024-11-05 transport (a cheap clone).
        let again = initialize.then(|| body.clone());
        let resp = self.streamable.post(method, body, extra, snap).await?;
        if let Some(body) = again
            && refused_initialize(&resp)
        {
            return Box::pin(self.fall_back(resp, method, body, snap)).await;
        }
        self.streamable.reply(id, method, resp, snap, initialize).await
    }

    /// The fallback: an `initialize` POST was refused (400, 404, 405), so
    /// the 2024-11-05 transport is opened at the same URL and the request
    /// sent over it. When the server has no such stream either, the POST's
    /// refusal is the error.
    async fn fall_back(
        self: &Arc<Self>,
        refused: Response<Incoming>,
        method: &str,
        body: Bytes,
        snap: &Snapshot,
    ) -> Result<(), Error> {
        let http = &self.http;
        let refusal = match http.check_status(refused, method, false).await {
            Err(e) => e,
            Ok(_) => http.invalid(method, "unexpected status"),
        };
        tracing::info!(endpoint = %http.endpoint.redacted, error = %refusal, "initialize was refused; trying the 2024-11-05 HTTP+SSE transport");
        let weak = Arc::downgrade(self);
        let retire = move |legacy: &Arc<Legacy>| weak.upgrade().is_some_and(|s| s.retire(legacy));
        match Legacy::open(http, method, retire).await {
            Ok(legacy) => {
                *lock(&self.variant) = Variant::Legacy(legacy.clone());
                legacy.exchange(http, method, body, Vec::new(), snap).await
            }
            // No legacy server either: the POST's refusal says more.
            Err(LegacyFail::NoStream(e)) => {
                tracing::debug!(error = %e, "no 2024-11-05 SSE stream either");
                Err(refusal)
            }
            Err(LegacyFail::Broken(e)) => Err(e),
        }
    }

    /// POSTs what the core queued (notifications, answers to server
    /// requests), in order, one message per POST, to where the variant in
    /// use takes them. Every message is tried; the first failure is
    /// returned.
    ///
    /// In the stateless era a request given up on has its answer's stream
    /// closed (its exchange future is dropped), which the spec makes the
    /// cancellation signal; its `notifications/cancelled` is POSTed too,
    /// for a server that answered with JSON and never saw a stream close.
    async fn flush(&self) -> Result<(), Error> {
        let _guard = self.flush_lock.lock().await;
        let link = self.http.link();
        let mut first = None;
        while let Some(message) = link.poll_transmit() {
            let snap = self.streamable.snapshot();
            let legacy = match self.variant() {
                Variant::Legacy(legacy) => Some(legacy),
                Variant::Streamable => None,
            };
            let uri = legacy.as_ref().map_or(&self.http.endpoint.uri, |l| l.post_uri());
            if let Err(e) = self.http.post_message(uri, &message, &snap).await {
                tracing::debug!(endpoint = %self.http.endpoint.redacted, error = %e, "sending a message to the MCP server failed");
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Opens the standalone GET stream unless it (or the 2024-11-05 stream,
    /// which carries everything) is open.
    async fn open_event_stream(&self) -> Result<bool, Error> {
        if let Variant::Legacy(_) = self.variant() {
            return Ok(true);
        }
        self.streamable.open_event_stream().await
    }
}

impl Transport for HttpTransport {
    type Error = Error;

    fn attach(&self, link: Link) {
        if self.inner.http.link.set(link).is_err() {
            tracing::warn!(endpoint = %self.inner.http.endpoint.redacted, "the transport was attached twice; keeping the first client");
        }
    }

    /// The `Mcp-Name` and `Mcp-Param-*` headers are read from the encoded
    /// request (its parameters are never built as a value for them) and
    /// the called tool's schema.
    fn wants_params(&self) -> bool {
        false
    }

    fn wants_tool(&self) -> bool {
        true
    }

    async fn send_request(&self, request: OutgoingRequest<'_>) -> Result<(), Error> {
        let inner = &self.inner;
        let initialize = request.method == methods::INITIALIZE;
        let modern = request.protocol_version.filter(|v| v.is_modern());
        let snap = inner.streamable.request_snapshot(initialize, modern);
        // The client gives no parameters as a value (`wants_params` is
        // false): the headers come from the encoded request.
        let mut extra = wire::body_headers(request.method, request.tool, &request.body);
        if !request.headers.is_empty() {
            let given = wire::extra_headers(request.headers).map_err(|reason| {
                self.client_error(ClientError::InvalidParams {
                    method: request.method.into(),
                    reason,
                })
            })?;
            extra.extend(given);
        }
        let body = Bytes::from(request.body);
        let exchange = inner.exchange(request.id, request.method, body, extra, &snap, initialize);
        // A debug build's poll frames are large: boxed there, so a request's
        // chain of them fits a 2 MiB thread (see mcp-peer's request path).
        #[cfg(debug_assertions)]
        let exchange = Box::pin(exchange);
        exchange.await
    }

    async fn flush(&self) -> Result<(), Error> {
        self.inner.flush().await
    }

    async fn initialized(&self) {
        let inner = &self.inner;
        if !inner.http.options.event_stream || self.is_legacy() {
            return;
        }
        // Opened in a task of its own, as other clients do: the server has
        // no stream to send on until the GET arrives, so nothing is lost
        // by not waiting, and the handshake does not pay for the GET's
        // round trip. A host that wants the stream open before the first
        // request goes out asks to wait for it (at most
        // EVENT_STREAM_OPEN_WAIT; a slower server gets its stream later).
        let opening = inner.streamable.open_in_background();
        if inner.http.options.wait_for_event_stream {
            let _ = tokio::time::timeout(EVENT_STREAM_OPEN_WAIT, opening).await;
        }
    }

    /// Stops the streams, and deletes the session when the server gave one
    /// (`DELETE`; 405 and 404 are accepted).
    async fn close(&self) -> Result<(), Error> {
        let inner = &self.inner;
        if !inner.http.close() {
            return Ok(());
        }
        let session = inner.streamable.stop();
        if let Variant::Legacy(legacy) = inner.take_variant() {
            // Ending the GET stream ends a 2024-11-05 session.
            legacy.stop();
        }
        let Some(session) = session else { return Ok(()) };
        inner.streamable.delete(session).await
    }

    fn client_error(&self, error: ClientError) -> Error {
        self.inner.http.map_error(error)
    }

    fn resends_after_loss(&self) -> bool {
        true
    }

    /// The endpoint's origin (scheme and authority); none for an endpoint
    /// whose redacted form hides it.
    fn era_cache_key(&self) -> Option<String> {
        let redacted = &self.inner.http.endpoint.redacted;
        (!redacted.starts_with('<')).then(|| redacted.clone())
    }
}
