//! The client over Streamable HTTP: the one [`mcp_peer::Client`] with what
//! only HTTP offers.

use std::sync::Arc;

use mcp_peer::Client;

use crate::error::Error;
use crate::options::HttpOptions;
use crate::transport::HttpTransport;

/// A client of one MCP server behind a Streamable HTTP endpoint (or the
/// 2024-11-05 HTTP+SSE transport it falls back to): the one
/// [`mcp_peer::Client`] over an [`HttpTransport`], with HTTP's own
/// accessors (the OAuth client, the session, the redacted endpoint).
///
/// Every typed operation of [`mcp_peer::Client`] (`call_tool`,
/// `read_resource`, `notifications`, ...) is reached through `Deref`.
///
/// Cheap to clone (all clones share the session and the connection pool).
/// Every message is its own POST on a pooled keep-alive connection; many
/// requests may be in flight at once.
#[derive(Clone, Debug)]
pub struct HttpClient {
    client: Client<HttpTransport>,
}

impl std::ops::Deref for HttpClient {
    type Target = Client<HttpTransport>;

    fn deref(&self) -> &Client<HttpTransport> {
        &self.client
    }
}

impl From<HttpClient> for Client<HttpTransport> {
    fn from(c: HttpClient) -> Self {
        c.client
    }
}

impl HttpClient {
    /// Checks the URL, the credentials and the TLS configuration, and
    /// prepares the connection pool. No I/O happens here: the first
    /// connection is made by the first request (the handshake runs then, or
    /// explicitly with [`initialize`](Client::initialize)).
    ///
    /// The methods must be called within a Tokio runtime.
    pub fn connect(url: &str, options: HttpOptions) -> Result<HttpClient, Error> {
        let session = options.client_options();
        let transport = HttpTransport::connect(url, options)?;
        Ok(HttpClient { client: Client::new(transport, session) })
    }

    /// The client over the transport (what [`Deref`](std::ops::Deref) reaches).
    pub fn client(&self) -> &Client<HttpTransport> {
        &self.client
    }

    /// The OAuth client, when [`HttpOptions::oauth`] is set: a host calls
    /// its [`authorize`](mcp_auth::OAuthClient::authorize) for an explicit
    /// login (before the first request, so an interactive flow is not cut
    /// short by the request timeout) or its
    /// [`logout`](mcp_auth::OAuthClient::logout).
    pub fn oauth(&self) -> Option<&Arc<mcp_auth::OAuthClient>> {
        self.transport().oauth()
    }

    /// The endpoint as errors and logs show it (scheme and `host[:port]`).
    pub fn redacted_endpoint(&self) -> &str {
        self.transport().redacted_endpoint()
    }

    /// Whether requests go through a proxy.
    pub fn is_proxied(&self) -> bool {
        self.transport().is_proxied()
    }

    /// Whether the server gave a session id (the id itself is not exposed:
    /// it is a credential of sorts).
    pub fn has_session(&self) -> bool {
        self.transport().has_session()
    }

    /// Whether the server speaks the 2024-11-05 HTTP+SSE transport (found
    /// when `initialize` was refused).
    pub fn is_legacy(&self) -> bool {
        self.transport().is_legacy()
    }

    /// Opens the standalone GET stream now (initializing first if needed),
    /// when it is not open: by default it opens by itself after the
    /// handshake ([`HttpOptions::event_stream`]).
    ///
    /// Returns `Ok(false)` when the server offers no such stream (405); that
    /// is final, nothing is retried. `Ok(true)` when the stream is open (or
    /// already was; on a 2024-11-05 connection the SSE stream that carries
    /// every reply is that stream, and no other GET is made). A background
    /// task reads it; when the stream ends it is reopened (with
    /// `Last-Event-ID` when the server gave event ids, in the current
    /// session), after the server's `retry` delay or a jittered backoff, at
    /// most [`HttpOptions::max_reconnects`] times in a row without a
    /// message. It stops then, on an HTTP error, at
    /// [`close`](Client::close), or when the last clone of the client is
    /// dropped; [`HttpTransport::watch_event_stream`](crate::HttpTransport::watch_event_stream)
    /// says when it ended and why.
    pub async fn open_event_stream(&self) -> Result<bool, Error> {
        self.initialize().await?;
        self.transport().open_event_stream().await
    }
}
