//! How the client talks to one server.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::{EventCallback, Handlers};
use mcp_proto::types::{ClientCapabilities, Implementation};

use crate::auth::StaticAuth;
use crate::oauth::OAuthOptions;

/// The default cap on a response body (16 MiB).
pub const DEFAULT_MAX_BODY: usize = 16 * 1024 * 1024;
/// The default cap on one server-sent event (16 MiB).
pub const DEFAULT_MAX_EVENT_SIZE: usize = mcp_sse::sse::DEFAULT_MAX_EVENT_SIZE;
/// The default connect timeout (10 s).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default number of reconnections of a reply stream in a row without
/// an event (5).
pub const DEFAULT_MAX_RECONNECTS: u32 = 5;

/// Whether requests go through an HTTP proxy. A proxy is always used
/// through a `CONNECT` tunnel (for `http://` endpoints too, so a proxy that
/// only allows `CONNECT` to port 443 refuses those); TLS to the server runs
/// inside the tunnel.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxyConfig {
    /// `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` (upper or
    /// lower case), read when the client is built, as curl reads them.
    /// Loopback endpoints never go through a proxy. The default.
    #[default]
    FromEnv,
    /// Never use a proxy.
    None,
    /// This proxy, for every endpoint that `no_proxy` does not exclude.
    Url {
        /// `http://[user:password@]host:port`; credentials become
        /// `Proxy-Authorization: Basic`.
        url: String,
        /// Hosts that bypass the proxy, in `NO_PROXY` syntax
        /// (`example.com, .internal, 10.0.0.0/8`).
        no_proxy: Option<String>,
    },
}

impl fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyConfig::FromEnv => f.write_str("FromEnv"),
            ProxyConfig::None => f.write_str("None"),
            ProxyConfig::Url { url, no_proxy } => f
                .debug_struct("Url")
                .field("url", &crate::endpoint::redact_endpoint(url))
                .field("no_proxy", no_proxy)
                .finish(),
        }
    }
}

/// How the client runs one Streamable HTTP server.
#[derive(Clone)]
pub struct HttpOptions {
    /// The server's name, in logs.
    pub name: String,
    /// `clientInfo` sent in `initialize`.
    pub client_info: Implementation,
    /// The default request timeout (30 s): the longest a request waits for
    /// its reply, stream resumption included.
    pub request_timeout: Duration,
    /// The TCP connect timeout (10 s).
    pub connect_timeout: Duration,
    /// The largest JSON response body accepted (16 MiB).
    pub max_body: usize,
    /// The largest server-sent event accepted (16 MiB); larger ones are
    /// skipped and logged.
    pub max_event_size: usize,
    /// How many times in a row a reply stream is resumed (GET with
    /// `Last-Event-ID`) without receiving an event, before giving up (5).
    pub max_reconnects: u32,
    /// How long an idle pooled connection is kept (90 s).
    pub pool_idle_timeout: Duration,
    /// Static credentials sent with every request.
    pub auth: StaticAuth,
    /// OAuth (the MCP authorization spec, through `mcp-auth`): the token
    /// goes on every request to the endpoint's origin, a 401 or a 403
    /// `insufficient_scope` runs the flow and sends the request again.
    /// Exclusive with [`auth`](Self::auth) (both set is
    /// [`Error::InvalidAuth`](crate::Error::InvalidAuth)).
    pub oauth: Option<OAuthOptions>,
    /// The TLS configuration; `None` means rustls with the `ring` provider
    /// and the Mozilla roots of `webpki-roots`. ALPN is set by the client
    /// (h2 and http/1.1).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Whether to go through an HTTP proxy (from the environment by default).
    pub proxy: ProxyConfig,
    /// Whether to follow redirects (off by default). Only 307 and 308 to
    /// the endpoint's own origin (scheme, host and port) are followed, at
    /// most 5 in a row, re-sending the same method, headers and body; a
    /// redirect to another origin is [`Error::Redirect`](crate::Error::Redirect)
    /// and nothing is sent there. Other 3xx statuses are
    /// [`Error::Status`](crate::Error::Status) either way. A temporary
    /// redirect is not remembered: every request is sent to the endpoint.
    pub follow_redirects: bool,
    /// Whether the standalone GET stream (the server's channel for
    /// messages that belong to no request) opens by itself once the
    /// handshake finished (on by default; 405 means the server has none).
    pub event_stream: bool,
    /// The host's answers to server requests; they decide the declared capabilities.
    pub handlers: Handlers,
    /// Capabilities declared beyond the handlers' (`tasks`, `experimental`,
    /// `roots.listChanged`): see [`mcp_peer::ClientOptions::capabilities`].
    pub capabilities: ClientCapabilities,
    /// Hears list changes, log messages and other notifications.
    pub on_event: Option<EventCallback>,
    /// The protocol version offered.
    pub protocol_version: ProtocolVersion,
    /// The protocol versions accepted.
    pub supported_versions: Vec<ProtocolVersion>,
}

impl HttpOptions {
    /// Sets [`oauth`](Self::oauth).
    pub fn with_oauth(mut self, oauth: OAuthOptions) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The session's share of these options, for [`mcp_peer::Client::new`].
    pub fn client_options(&self) -> mcp_peer::ClientOptions {
        let mut o = mcp_peer::ClientOptions::new(self.name.clone());
        o.client_info = self.client_info.clone();
        o.handlers = self.handlers.clone();
        o.capabilities = self.capabilities.clone();
        o.on_event = self.on_event.clone();
        o.protocol_version = self.protocol_version;
        o.supported_versions = self.supported_versions.clone();
        o.request_timeout = self.request_timeout;
        o
    }

    /// Defaults for a server called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        HttpOptions {
            name: name.into(),
            client_info: Implementation::new("mcp-http", env!("CARGO_PKG_VERSION")),
            request_timeout: mcp_proto::client::DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_body: DEFAULT_MAX_BODY,
            max_event_size: DEFAULT_MAX_EVENT_SIZE,
            max_reconnects: DEFAULT_MAX_RECONNECTS,
            pool_idle_timeout: Duration::from_secs(90),
            auth: StaticAuth::None,
            oauth: None,
            tls: None,
            proxy: ProxyConfig::default(),
            follow_redirects: false,
            event_stream: true,
            handlers: Handlers::default(),
            capabilities: ClientCapabilities::default(),
            on_event: None,
            protocol_version: ProtocolVersion::LATEST,
            supported_versions: ProtocolVersion::SUPPORTED.to_vec(),
        }
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpOptions")
            .field("name", &self.name)
            .field("client_info", &self.client_info)
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_body", &self.max_body)
            .field("max_event_size", &self.max_event_size)
            .field("max_reconnects", &self.max_reconnects)
            .field("pool_idle_timeout", &self.pool_idle_timeout)
            .field("auth", &self.auth)
            .field("oauth", &self.oauth)
            .field("tls", &self.tls.as_ref().map(|_| "<custom>"))
            .field("proxy", &self.proxy)
            .field("follow_redirects", &self.follow_redirects)
            .field("event_stream", &self.event_stream)
            .field("handlers", &self.handlers)
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}
