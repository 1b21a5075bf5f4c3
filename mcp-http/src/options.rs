//! How the client talks to one server.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mcp_peer::ClientOptions;
use mcp_proto::types::Implementation;

use crate::auth::StaticAuth;
use crate::oauth::OAuthOptions;
use crate::pool::HttpPool;

/// The default cap on a response body (16 MiB).
pub const DEFAULT_MAX_BODY: usize = 16 * 1024 * 1024;
/// The default cap on one server-sent event (16 MiB).
pub const DEFAULT_MAX_EVENT_SIZE: usize = mcp_sse::sse::DEFAULT_MAX_EVENT_SIZE;
/// The default connect timeout (10 s).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default number of reconnections of an event stream in a row without
/// a message (5).
pub const DEFAULT_MAX_RECONNECTS: u32 = 5;

/// The certificate authorities a server's (or an `https://` proxy's)
/// certificate is checked against, besides [`HttpOptions::ca_file`]'s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Roots {
    /// The operating system's store, through `rustls-native-certs`: the
    /// system's CA bundle on Linux and the BSDs (`SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` when set), the keychain on macOS, the certificate
    /// store on Windows; so a CA that an organisation installs on its
    /// machines is trusted. Loaded once per process, at the first `https`
    /// connection made with it (a client of an `http://` endpoint never
    /// loads it). A store with no usable certificate (a minimal
    /// container without a CA bundle) gives the Mozilla roots instead,
    /// with a warning. The default.
    #[default]
    Platform,
    /// The Mozilla roots compiled in (`webpki-roots`): the same on every
    /// machine, whatever it has installed.
    Mozilla,
}

/// Whether requests go through a proxy (the `proxy` feature). Four kinds,
/// by the proxy URL's scheme:
///
/// - `http://`: a `CONNECT` tunnel over TCP;
/// - `https://`: a `CONNECT` tunnel over TLS to the proxy (verified with
///   the same roots as servers: [`HttpOptions::ca_file`] adds some);
/// - `socks5h://`: SOCKS5, the proxy resolves the server's name;
/// - `socks5://`: SOCKS5, the name is resolved here and the proxy is given
///   the address.
///
/// An HTTP proxy is always used through `CONNECT` (for `http://` endpoints
/// too, so a proxy that only allows `CONNECT` to port 443 refuses those);
/// TLS to the server runs inside the tunnel. Credentials in the proxy URL
/// (`user:password@`, percent-encoded) become `Proxy-Authorization: Basic`
/// for HTTP proxies and the username/password method for SOCKS5; they
/// never appear in an error, a log line or `Debug`.
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
        /// `http://`, `https://`, `socks5://` or
        /// `socks5h://[user:password@]host:port`.
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
    /// What every transport's client shares: the server's name, `clientInfo`,
    /// the request timeout (the longest a request waits for its reply,
    /// stream resumption included), the host's handlers and declared
    /// capabilities, the notification callback, the protocol versions. Its
    /// fields are reached through `Deref` (`options.request_timeout = ...`).
    pub client: ClientOptions,
    /// The TCP connect timeout (10 s).
    pub connect_timeout: Duration,
    /// The largest JSON response body accepted (16 MiB).
    pub max_body: usize,
    /// The largest server-sent event accepted (16 MiB); larger ones are
    /// skipped and logged.
    pub max_event_size: usize,
    /// How many times in a row an event stream (a reply stream resumed with
    /// GET and `Last-Event-ID`, or the standalone GET stream) is reopened
    /// without receiving a message, before giving up (5). Events that carry
    /// no JSON-RPC message (a priming event, a new id, a `retry`) are no
    /// progress.
    pub max_reconnects: u32,
    /// How long an idle pooled connection is kept (90 s).
    pub pool_idle_timeout: Duration,
    /// Connect to this Unix domain socket instead of the URL's host and
    /// port (the URL still gives the request path and the `Host` header);
    /// no proxy and no TLS then. Set by an endpoint written
    /// `unix:/path/to/socket` (see [`connect`](crate::connect)). Unix only:
    /// elsewhere such a client fails to connect with
    /// [`Error::Connect`](crate::Error::Connect).
    pub unix_socket: Option<std::path::PathBuf>,
    /// Static credentials sent with every request.
    pub auth: StaticAuth,
    /// OAuth (the MCP authorization spec, through `mcp-auth`): the token
    /// goes on every request to the endpoint's origin, a 401 or a 403
    /// `insufficient_scope` runs the flow and sends the request again.
    /// Exclusive with [`auth`](Self::auth) (both set is
    /// [`Error::InvalidAuth`](crate::Error::InvalidAuth)).
    pub oauth: Option<OAuthOptions>,
    /// The TLS configuration; `None` means rustls with the `ring` provider
    /// and the certificate authorities of [`roots`](Self::roots) and
    /// [`ca_file`](Self::ca_file), keeping the sessions of 16 servers for
    /// resumption; without a CA file that configuration is made once per
    /// process (per [`Roots`]) and shared by every client, session cache
    /// included. ALPN is set by the
    /// client (h2 and http/1.1); protocols the given configuration lists
    /// are replaced.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Which certificate authorities are trusted ([`Roots::Platform`], the
    /// operating system's, by default). Ignored when [`tls`](Self::tls) is
    /// given.
    pub roots: Roots,
    /// Extra trust anchors: a PEM file of CA certificates trusted besides
    /// [`roots`](Self::roots) (a private CA, or a TLS-inspecting corporate
    /// proxy), for servers and `https://` proxies alike. Read when the
    /// client is built: a file that cannot be read or holds no usable
    /// certificate is [`Error::Tls`](crate::Error::Tls). Not with
    /// [`tls`](Self::tls) (add the roots to that configuration instead).
    pub ca_file: Option<PathBuf>,
    /// Whether to go through a proxy (from the environment by default).
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
    /// It opens in the background: the handshake returns without waiting
    /// for the GET's answer (the server has no stream to send on until the
    /// GET arrives, so nothing is lost), and
    /// [`HttpTransport::watch_event_stream`](crate::HttpTransport::watch_event_stream)
    /// tells when it is open.
    pub event_stream: bool,
    /// Whether the handshake waits for the standalone GET stream's answer
    /// (open, 405 or an error) before it returns, so that the stream is
    /// open before the first request goes out (off by default). The wait
    /// is at most one second; a slower server's stream opens later, in
    /// the background. Nothing without [`event_stream`](Self::event_stream).
    pub wait_for_event_stream: bool,
    /// Headers made at run time (a helper command's short-lived token):
    /// asked for at the first request, kept as long as the source says,
    /// asked for again, once, when the server answers 401 or 403 to them.
    /// They replace static headers of the same name.
    pub header_source: Option<Arc<dyn crate::HeaderSource>>,
    /// A connection pool shared with other clients ([`HttpPool`]): requests
    /// go through its kept connections, made with its connect timeout and
    /// TLS settings (this client's are then not used for them). Not used
    /// when a proxy applies to the endpoint or it is a Unix domain socket.
    pub pool: Option<HttpPool>,
}

impl HttpOptions {
    /// Sets [`header_source`](Self::header_source).
    pub fn with_header_source(mut self, source: Arc<dyn crate::HeaderSource>) -> Self {
        self.header_source = Some(source);
        self
    }

    /// Sets [`pool`](Self::pool): this client shares `pool`'s connections.
    pub fn with_pool(mut self, pool: HttpPool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Sets [`oauth`](Self::oauth).
    pub fn with_oauth(mut self, oauth: OAuthOptions) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The session's share of these options, for [`mcp_peer::Client::new`].
    pub fn client_options(&self) -> ClientOptions {
        self.client.clone()
    }

    /// Defaults for a server called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        let mut client = ClientOptions::new(name);
        client.client_info = Implementation::new("mcp-http", env!("CARGO_PKG_VERSION"));
        HttpOptions {
            client,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_body: DEFAULT_MAX_BODY,
            max_event_size: DEFAULT_MAX_EVENT_SIZE,
            max_reconnects: DEFAULT_MAX_RECONNECTS,
            pool_idle_timeout: Duration::from_secs(90),
            unix_socket: None,
            auth: StaticAuth::None,
            oauth: None,
            tls: None,
            roots: Roots::default(),
            ca_file: None,
            proxy: ProxyConfig::default(),
            follow_redirects: false,
            event_stream: true,
            wait_for_event_stream: false,
            header_source: None,
            pool: None,
        }
    }
}

impl std::ops::Deref for HttpOptions {
    type Target = ClientOptions;

    fn deref(&self) -> &ClientOptions {
        &self.client
    }
}

impl std::ops::DerefMut for HttpOptions {
    fn deref_mut(&mut self) -> &mut ClientOptions {
        &mut self.client
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpOptions")
            .field("client", &self.client)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_body", &self.max_body)
            .field("max_event_size", &self.max_event_size)
            .field("max_reconnects", &self.max_reconnects)
            .field("pool_idle_timeout", &self.pool_idle_timeout)
            .field("unix_socket", &self.unix_socket)
            .field("auth", &self.auth)
            .field("oauth", &self.oauth)
            .field("tls", &self.tls.as_ref().map(|_| "<custom>"))
            .field("roots", &self.roots)
            .field("ca_file", &self.ca_file)
            .field("proxy", &self.proxy)
            .field("follow_redirects", &self.follow_redirects)
            .field("event_stream", &self.event_stream)
            .field("wait_for_event_stream", &self.wait_for_event_stream)
            .field("header_source", &self.header_source)
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

/// What a transport keeps of its [`HttpOptions`] once the connection pool
/// and the OAuth client are made from them: the client's share
/// ([`HttpOptions::client`]) stays with the [`Client`](mcp_peer::Client),
/// but for the request timeout, and what only building needs is dropped.
/// (Keeping the whole options cost every idle session about 1.5 KiB, and a
/// second copy of the client's strings.)
pub(crate) struct Settings {
    pub(crate) request_timeout: Duration,
    pub(crate) max_body: usize,
    pub(crate) max_event_size: usize,
    pub(crate) max_reconnects: u32,
    /// Read for [`StaticAuth::Query`], which every URL the transport
    /// makes carries.
    pub(crate) auth: StaticAuth,
    pub(crate) follow_redirects: bool,
    pub(crate) event_stream: bool,
    pub(crate) wait_for_event_stream: bool,
}

impl From<&HttpOptions> for Settings {
    fn from(options: &HttpOptions) -> Settings {
        Settings {
            request_timeout: options.client.request_timeout,
            max_body: options.max_body,
            max_event_size: options.max_event_size,
            max_reconnects: options.max_reconnects,
            auth: options.auth.clone(),
            follow_redirects: options.follow_redirects,
            event_stream: options.event_stream,
            wait_for_event_stream: options.wait_for_event_stream,
        }
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("request_timeout", &self.request_timeout)
            .field("max_body", &self.max_body)
            .field("max_event_size", &self.max_event_size)
            .field("max_reconnects", &self.max_reconnects)
            .field("auth", &self.auth)
            .field("follow_redirects", &self.follow_redirects)
            .field("event_stream", &self.event_stream)
            .field("wait_for_event_stream", &self.wait_for_event_stream)
            .finish()
    }
}
