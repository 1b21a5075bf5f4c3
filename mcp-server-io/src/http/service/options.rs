//! How the HTTP service behaves: [`HttpOptions`], its reply mode and TLS
//! certificate, and the defaults of its caps and timeouts.

use std::sync::Arc;
use std::time::Duration;

use super::super::auth::Authorize;
use crate::era::ServeEra;
use crate::session::SessionOptions;

/// The default cap on live sessions.
pub const DEFAULT_SESSION_CAP: usize = 4096;
/// The default time a session may go unused before it is forgotten.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The default cap on a request body.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;
/// The default time a client may take to send a request body.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The default cap on the requests run at once by the session every
/// stateless-era POST goes to (and the one every handshake-era client
/// shares when sessions are off): four times a session's
/// ([`DEFAULT_MAX_IN_FLIGHT`](crate::inflight::DEFAULT_MAX_IN_FLIGHT)),
/// as it serves every client at once.
pub const DEFAULT_SHARED_MAX_IN_FLIGHT: usize = 1024;
/// The default cap on the events that wait unsent on one event stream
/// ([`HttpOptions::max_unsent_events`](HttpOptions::max_unsent_events)):
/// a quarter of what a stream keeps for resumption
/// ([`LOG_CAP`](crate::http::stream::LOG_CAP)), so every event a stream
/// ended at its cap still held is in its log when the client resumes.
pub const DEFAULT_MAX_UNSENT_EVENTS: usize = 256;

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
    /// the deadline of requests to the client, the cap on a session's
    /// requests in flight (each `Mcp-Session-Id`'s).
    pub session: SessionOptions,
    /// The cap on requests in flight of the sessions every client shares:
    /// the one serving the stateless era's POSTs (each POST one request,
    /// so this bounds the stateless requests the service runs at once)
    /// and, with `sessions` off, the handshake era's one session. A
    /// request beyond it is answered at once with
    /// [`SERVER_BUSY`](crate::inflight::SERVER_BUSY) (HTTP 200).
    pub shared_max_in_flight: usize,
    /// The most events that may wait unsent on one SSE connection (a
    /// client that does not read, or reads more slowly than the server
    /// sends; a cap of 0 is taken as 1). At the cap a resumable stream's
    /// connection is ended cleanly, the events after it kept in the
    /// stream's log for the client's GET with `Last-Event-ID` (the reply
    /// to a POST included); a 2024-11-05 stream, which cannot be resumed,
    /// ends its session once what waits is read; a stateless-era stream is
    /// cut and its request cancelled, unless what did not fit was its
    /// reply, which is always queued.
    pub max_unsent_events: usize,
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
    /// certificate ([`serve`](crate::http::serve) reads it).
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
            shared_max_in_flight: DEFAULT_SHARED_MAX_IN_FLIGHT,
            max_unsent_events: DEFAULT_MAX_UNSENT_EVENTS,
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

impl HttpOptions {
    /// These options with another cap on each session's requests in
    /// flight (`session.max_in_flight`).
    pub fn with_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.session.max_in_flight = max_in_flight;
        self
    }

    /// These options with another cap on the shared sessions' requests in
    /// flight (`shared_max_in_flight`).
    pub fn with_shared_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.shared_max_in_flight = max_in_flight;
        self
    }

    /// These options with another cap on the events waiting unsent on one
    /// SSE connection (`max_unsent_events`).
    pub fn with_max_unsent_events(mut self, max_unsent_events: usize) -> Self {
        self.max_unsent_events = max_unsent_events;
        self
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
            .field("shared_max_in_flight", &self.shared_max_in_flight)
            .field("max_unsent_events", &self.max_unsent_events)
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("tls", &self.tls)
            .field("authorize", &self.authorize.as_ref().map(|_| ".."))
            .finish_non_exhaustive()
    }
}
