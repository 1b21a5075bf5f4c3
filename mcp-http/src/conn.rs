//! The connection layer: one connection pool per `HttpClient`, on hyper's
//! connection API.
//!
//! The pool keeps every HTTP/1.1 connection it opened in one list, busy or
//! not: a connection whose last response was read to the end reports itself
//! ready, and the next request takes it (the most recently used first). No
//! task is spawned per request and nothing is hashed: a client talks to one
//! origin (two or three with OAuth), compared by scheme and authority. An
//! HTTP/2 connection (the `http2` feature, negotiated with ALPN) is shared
//! by every request to its origin.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::uri::{Authority, Scheme};
use http::{HeaderValue, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper::rt::{Read, Write};
use hyper_rustls::HttpsConnector;
#[cfg(feature = "proxy")]
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connection, HttpConnector};
#[cfg(feature = "proxy")]
use hyper_util::client::proxy::matcher::Matcher;
use tower_service::Service;

/// Where a proxied client connects (the proxy's URL and credentials).
#[cfg(feature = "proxy")]
pub(crate) use hyper_util::client::proxy::matcher::Intercept as Proxy;

/// Without the `proxy` feature there is never a proxy.
#[cfg(not(feature = "proxy"))]
#[derive(Debug)]
pub(crate) enum Proxy {}

use crate::guard::{Guard, GuardedResolver};
use crate::options::{HttpOptions, ProxyConfig, Roots};

/// The request body type: every message is one buffer.
pub(crate) type Body = Full<Bytes>;

/// Marks a request that may be sent again when a kept connection failed
/// after taking it, before any reply (the keep-alive race: closed or reset
/// by the server): the client puts it on idempotent MCP requests
/// (`mcp_proto::methods::is_idempotent`). Sent again once, on a new connection, whose
/// failure is final.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replayable;

/// A copy of a request (for a redirect, an authorization retry or a
/// replay): method, URI, headers, body and the [`Replayable`] mark.
pub(crate) fn copy_request(req: &http::Request<Body>) -> http::Request<Body> {
    let mut again = http::Request::new(req.body().clone());
    *again.method_mut() = req.method().clone();
    *again.uri_mut() = req.uri().clone();
    *again.headers_mut() = req.headers().clone();
    if req.extensions().get::<Replayable>().is_some() {
        again.extensions_mut().insert(Replayable);
    }
    again
}

/// The most connections kept per origin; one more is closed when it is
/// returned.
const MAX_KEPT: usize = 64;

/// What [`Pool::request`] returns.
pub(crate) type ResponseFuture = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<http::Response<Incoming>, PoolError>> + Send>,
>;

/// The connection pool: cloning shares it.
#[derive(Clone)]
pub(crate) struct Pool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    connector: Connector,
    conns: Mutex<Vec<Kept>>,
    idle_timeout: Duration,
}

/// How connections are opened: directly, or through a proxy (a CONNECT
/// tunnel over TCP or over TLS, or SOCKS5). One client talks through one,
/// so the choice is made once.
enum Connector {
    Direct(HttpsConnector<HttpConnector>),
    /// Direct, through the SSRF guard's resolver (the OAuth requests).
    Guarded(HttpsConnector<HttpConnector<GuardedResolver>>),
    /// `http://` proxy: CONNECT over TCP.
    #[cfg(feature = "proxy")]
    Tunnel(HttpsConnector<Tunnel<HttpConnector>>),
    /// `https://` proxy: CONNECT over TLS to the proxy.
    #[cfg(feature = "proxy")]
    TlsTunnel(HttpsConnector<Tunnel<HttpsConnector<HttpConnector>>>),
    /// `socks5://` and `socks5h://` proxies.
    #[cfg(feature = "proxy")]
    Socks(HttpsConnector<Socks<HttpConnector>>),
}

/// A connection the pool holds, with its origin.
struct Kept {
    scheme: Scheme,
    authority: Authority,
    sender: Sender,
    /// When it was last handed back (its response may still be streaming).
    since: Instant,
}

enum Sender {
    Http1(http1::SendRequest<Body>),
    #[cfg(feature = "http2")]
    Http2(hyper::client::conn::http2::SendRequest<Body>),
}

/// Why the pool could not deliver a response.
#[derive(Debug)]
pub(crate) enum PoolError {
    /// The request's URI has no scheme or host.
    BadUri,
    /// Opening the connection (TCP, proxy tunnel, TLS) failed.
    Connect(Box<dyn std::error::Error + Send + Sync>),
    /// The HTTP exchange failed.
    Http(hyper::Error),
}

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PoolError::BadUri => f.write_str("the request URI has no scheme or host"),
            PoolError::Connect(_) => f.write_str("client error (Connect)"),
            PoolError::Http(_) => f.write_str("client error (SendRequest)"),
        }
    }
}

impl std::error::Error for PoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PoolError::BadUri => None,
            PoolError::Connect(e) => Some(&**e),
            PoolError::Http(e) => Some(e),
        }
    }
}

impl PoolError {
    /// The underlying error, for [`Error::Connect`](crate::Error::Connect)'s
    /// source.
    pub(crate) fn into_source(self) -> Option<Box<dyn std::error::Error + Send + Sync>> {
        match self {
            PoolError::BadUri => None,
            PoolError::Connect(e) => Some(e),
            PoolError::Http(e) => Some(Box::new(e)),
        }
    }
}

impl Pool {
    /// Sends a request on a kept connection of its origin, or on a new one.
    /// A request that a kept connection closed before sending (the server
    /// ended an idle connection) is sent once more on a new connection; so
    /// is a [`Replayable`] one that a kept connection closed after taking
    /// it, before any reply.
    ///
    /// The future is boxed: it holds hyper's send futures, and the
    /// exchanges that await it are deep.
    pub(crate) fn request(&self, req: http::Request<Body>) -> ResponseFuture {
        let pool = self.clone();
        Box::pin(async move { pool.send(req).await })
    }

    async fn send(
        &self,
        mut req: http::Request<Body>,
    ) -> Result<http::Response<Incoming>, PoolError> {
        let uri = req.uri().clone();
        let (Some(scheme), Some(authority)) = (uri.scheme().cloned(), uri.authority().cloned())
        else {
            return Err(PoolError::BadUri);
        };
        if !req.headers().contains_key(http::header::HOST) {
            let host = host_header(&uri).ok_or(PoolError::BadUri)?;
            req.headers_mut().insert(http::header::HOST, host);
        }
        // After a kept connection failed, the one more attempt goes on a new
        // connection: two attempts at most (an HTTP/2 connection stays in
        // the pool while it closes, and must not be picked again).
        let mut fresh = false;
        loop {
            let kept = if fresh { None } else { self.checkout(&scheme, &authority) };
            let (sender, reused) = match kept {
                Some(sender) => (sender, true),
                None => (self.connect(&uri).await?, false),
            };
            // Kept only when it may be needed again.
            let replay = (reused && req.extensions().get::<Replayable>().is_some())
                .then(|| copy_request(&req));
            let failed = match sender {
                Sender::Http1(mut send) => {
                    // HTTP/1.1 asks for the path only (a CONNECT tunnel too).
                    *req.uri_mut() = origin_form(&uri);
                    match send.try_send_request(req).await {
                        Ok(resp) => {
                            self.give_back(scheme, authority, Sender::Http1(send));
                            return Ok(resp);
                        }
                        Err(failed) => failed,
                    }
                }
                #[cfg(feature = "http2")]
                Sender::Http2(mut send) => {
                    self.give_back(scheme.clone(), authority.clone(), Sender::Http2(send.clone()));
                    *req.uri_mut() = uri.clone();
                    match send.try_send_request(req).await {
                        Ok(resp) => return Ok(resp),
                        Err(failed) => failed,
                    }
                }
            };
            let mut failed = failed;
            match (failed.take_message(), replay) {
                (Some(unsent), _) if reused => {
                    req = unsent;
                    fresh = true;
                }
                // No response head came (the send future ends there): the
                // connection closed or was reset under the request.
                (_, Some(copy)) => {
                    tracing::debug!(error = %failed.error(), "a kept connection failed before replying; sending again");
                    req = copy;
                    fresh = true;
                }
                _ => return Err(PoolError::Http(failed.into_error())),
            }
        }
    }

    /// Whether requests go through a proxy.
    pub(crate) fn is_proxied(&self) -> bool {
        !matches!(self.inner.connector, Connector::Direct(_) | Connector::Guarded(_))
    }

    /// A kept connection of this origin that can take a request now; closed
    /// and long-idle ones are dropped on the way.
    fn checkout(&self, scheme: &Scheme, authority: &Authority) -> Option<Sender> {
        let mut conns = lock(&self.inner.conns);
        let now = Instant::now();
        let timeout = self.inner.idle_timeout;
        conns.retain(|k| !k.sender.is_closed());
        let found = conns.iter().rposition(|k| {
            k.sender.is_ready() && k.scheme == *scheme && k.authority == *authority
        })?;
        let kept = &conns[found];
        if now.saturating_duration_since(kept.since) > timeout {
            // Idle too long: the server may be about to close it.
            conns.swap_remove(found);
            return None;
        }
        match &kept.sender {
            Sender::Http1(_) => Some(conns.remove(found).sender),
            #[cfg(feature = "http2")]
            Sender::Http2(send) => Some(Sender::Http2(send.clone())),
        }
    }

    /// Keeps a connection for the next request of its origin (HTTP/1.1:
    /// once its response has been read, it reports itself ready).
    fn give_back(&self, scheme: Scheme, authority: Authority, sender: Sender) {
        let mut conns = lock(&self.inner.conns);
        #[cfg(feature = "http2")]
        if let Sender::Http2(_) = &sender {
            let shared = conns.iter().any(|k| {
                matches!(k.sender, Sender::Http2(_))
                    && k.scheme == scheme
                    && k.authority == authority
            });
            if shared {
                return;
            }
        }
        let same = conns.iter().filter(|k| k.scheme == scheme && k.authority == authority).count();
        if same >= MAX_KEPT {
            return;
        }
        conns.push(Kept { scheme, authority, sender, since: Instant::now() });
    }

    /// Opens a connection to the URI's origin and starts its task.
    async fn connect(&self, uri: &Uri) -> Result<Sender, PoolError> {
        match &self.inner.connector {
            Connector::Direct(c) => handshake(call(c.clone(), uri.clone()).await?).await,
            Connector::Guarded(c) => handshake(call(c.clone(), uri.clone()).await?).await,
            // A proxy is asked for host and port: the scheme's port when
            // the URI has none.
            #[cfg(feature = "proxy")]
            Connector::Tunnel(c) => handshake(call(c.clone(), explicit_port(uri)).await?).await,
            #[cfg(feature = "proxy")]
            Connector::TlsTunnel(c) => handshake(call(c.clone(), explicit_port(uri)).await?).await,
            #[cfg(feature = "proxy")]
            Connector::Socks(c) => handshake(call(c.clone(), explicit_port(uri)).await?).await,
        }
    }
}

impl Sender {
    fn is_closed(&self) -> bool {
        match self {
            Sender::Http1(s) => s.is_closed(),
            #[cfg(feature = "http2")]
            Sender::Http2(s) => s.is_closed(),
        }
    }

    fn is_ready(&self) -> bool {
        match self {
            Sender::Http1(s) => s.is_ready(),
            #[cfg(feature = "http2")]
            Sender::Http2(s) => s.is_ready(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs a connector once.
async fn call<C>(mut connector: C, uri: Uri) -> Result<C::Response, PoolError>
where
    C: Service<Uri>,
    C::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    std::future::poll_fn(|cx| connector.poll_ready(cx))
        .await
        .map_err(|e| PoolError::Connect(e.into()))?;
    connector.call(uri).await.map_err(|e| PoolError::Connect(e.into()))
}

/// The HTTP handshake on a new connection (HTTP/2 when ALPN chose it); the
/// connection's task runs until it closes.
async fn handshake<T>(io: T) -> Result<Sender, PoolError>
where
    T: Read + Write + Connection + Unpin + Send + 'static,
{
    #[cfg(feature = "http2")]
    if io.connected().is_negotiated_h2() {
        let (send, conn) =
            hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                .timer(hyper_util::rt::TokioTimer::new())
                .handshake(io)
                .await
                .map_err(PoolError::Http)?;
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "HTTP/2 connection ended");
            }
        });
        return Ok(Sender::Http2(send));
    }
    #[cfg(not(feature = "http2"))]
    let _ = io.connected();
    let (send, conn) = http1::Builder::new().handshake(io).await.map_err(PoolError::Http)?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "HTTP/1.1 connection ended");
        }
    });
    Ok(Sender::Http1(send))
}

/// The `Host` header for a URI: its host, and its port unless it is the
/// scheme's default (never the authority's userinfo).
fn host_header(uri: &Uri) -> Option<HeaderValue> {
    let host = uri.host()?;
    let default_port = match uri.scheme_str() {
        Some(s) if s.eq_ignore_ascii_case("https") => Some(443),
        Some(s) if s.eq_ignore_ascii_case("http") => Some(80),
        _ => None,
    };
    let value = match uri.port_u16() {
        Some(port) if Some(port) != default_port => format!("{host}:{port}"),
        _ => host.to_owned(),
    };
    HeaderValue::from_str(&value).ok()
}

/// The URI's path and query alone, as HTTP/1.1 sends it.
fn origin_form(uri: &Uri) -> Uri {
    match uri.path_and_query() {
        Some(path) if path.as_str() != "/" => {
            let mut parts = http::uri::Parts::default();
            parts.path_and_query = Some(path.clone());
            Uri::from_parts(parts).unwrap_or_default()
        }
        _ => Uri::default(),
    }
}

/// Whether a host is a loopback name or address.
#[cfg(feature = "proxy")]
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The proxy for `endpoint`, if any. The error never repeats the proxy URL
/// (it may hold credentials).
#[cfg(feature = "proxy")]
pub(crate) fn proxy_for(config: &ProxyConfig, endpoint: &Uri) -> Result<Option<Proxy>, String> {
    match config {
        ProxyConfig::None => Ok(None),
        ProxyConfig::FromEnv => {
            if endpoint.host().is_some_and(is_loopback) {
                return Ok(None);
            }
            let found = Matcher::from_env().intercept(endpoint);
            if let Some(p) = &found
                && proxy_kind(p.uri()).is_none()
            {
                tracing::warn!(
                    scheme = p.uri().scheme_str().unwrap_or(""),
                    "ignoring the proxy from the environment: only http, https, socks5 and socks5h proxies are supported"
                );
                return Ok(None);
            }
            Ok(found)
        }
        ProxyConfig::Url { url, no_proxy } => {
            let uri: Uri = url.parse().map_err(|_| "the proxy URL is not a valid URL")?;
            if proxy_kind(&uri).is_none() || uri.host().is_none() {
                return Err(
                    "the proxy URL must be http://, https://, socks5:// or socks5h://[user:password@]host:port"
                        .into(),
                );
            }
            let matcher =
                Matcher::builder().all(url.as_str()).no(no_proxy.as_deref().unwrap_or("")).build();
            Ok(matcher.intercept(endpoint))
        }
    }
}

/// Without the `proxy` feature: never a proxy, and a configured one is an
/// error rather than silently ignored.
#[cfg(not(feature = "proxy"))]
pub(crate) fn proxy_for(config: &ProxyConfig, _endpoint: &Uri) -> Result<Option<Proxy>, String> {
    match config {
        ProxyConfig::Url { .. } => {
            Err("this build of mcp-http has no proxy support (the `proxy` feature is off)".into())
        }
        _ => Ok(None),
    }
}

/// How a proxy is spoken to.
#[cfg(feature = "proxy")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProxyKind {
    /// `http://`: CONNECT over TCP.
    Http,
    /// `https://`: CONNECT over TLS to the proxy.
    Https,
    /// `socks5://`: SOCKS5, names resolved here.
    Socks5,
    /// `socks5h://`: SOCKS5, names resolved by the proxy.
    Socks5h,
}

#[cfg(feature = "proxy")]
fn proxy_kind(uri: &Uri) -> Option<ProxyKind> {
    let scheme = uri.scheme_str()?;
    [
        ("http", ProxyKind::Http),
        ("https", ProxyKind::Https),
        ("socks5", ProxyKind::Socks5),
        ("socks5h", ProxyKind::Socks5h),
    ]
    .into_iter()
    .find(|(name, _)| scheme.eq_ignore_ascii_case(name))
    .map(|(_, kind)| kind)
}

/// The URI with its scheme's port when it has none (a proxy is asked for
/// host and port; hyper-util's proxy connectors would assume 443).
#[cfg(feature = "proxy")]
fn explicit_port(uri: &Uri) -> Uri {
    crate::endpoint::with_explicit_port(uri)
}

/// SOCKS5 through hyper-util's handshake; for `socks5://`, the name is
/// resolved here first (asynchronously) and the proxy is given the address.
#[cfg(feature = "proxy")]
#[derive(Clone)]
pub(crate) struct Socks<C> {
    inner: hyper_util::client::legacy::connect::proxy::SocksV5<C>,
    local_dns: bool,
}

#[cfg(feature = "proxy")]
type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[cfg(feature = "proxy")]
impl<C> Service<Uri> for Socks<C>
where
    C: Service<Uri> + Clone + Send + 'static,
    C::Future: Send + 'static,
    C::Response: Read + Write + Unpin + Send + 'static,
    C::Error: std::error::Error + Send + Sync + 'static,
{
    type Response = C::Response;
    type Error = BoxError;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<C::Response, BoxError>> + Send>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let mut inner = self.inner.clone();
        let local_dns = self.local_dns;
        Box::pin(async move {
            let dst = if local_dns { resolved(dst).await? } else { dst };
            inner.call(dst).await.map_err(Into::into)
        })
    }
}

/// `dst` with its host replaced by the first address it resolves to.
#[cfg(feature = "proxy")]
async fn resolved(dst: Uri) -> Result<Uri, BoxError> {
    let host = dst.host().ok_or("the URI has no host")?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.parse::<std::net::IpAddr>().is_ok() {
        return Ok(dst);
    }
    let port = dst.port_u16().unwrap_or(443);
    let addr = tokio::net::lookup_host((bare, port))
        .await?
        .next()
        .ok_or("the name resolved to no address")?;
    let mut parts = dst.into_parts();
    parts.authority = Some(addr.to_string().parse()?);
    Ok(Uri::from_parts(parts)?)
}

/// Builds the pool for `endpoint`: connect timeout, `TCP_NODELAY`, rustls
/// with ALPN (h2 with the `http2` feature, and http/1.1), `http` allowed
/// (for local servers), through a CONNECT tunnel when a proxy applies, or
/// through the SSRF guard's resolver when `guard` is given (never with a
/// proxy).
pub(crate) fn build_pool(
    options: &HttpOptions,
    proxy: Option<&Proxy>,
    guard: Option<&Guard>,
) -> Result<Pool, String> {
    fn tcp<R>(mut http: HttpConnector<R>, options: &HttpOptions) -> HttpConnector<R> {
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(options.connect_timeout));
        http
    }
    let http = tcp(HttpConnector::new(), options);
    let config = tls_config(options)?;
    let builder = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(config.clone());
    #[cfg(feature = "http2")]
    let builder = builder.https_or_http().enable_all_versions();
    #[cfg(not(feature = "http2"))]
    let builder = builder.https_or_http().enable_http1();
    let connector = match (proxy, guard) {
        (None, Some(guard)) => Connector::Guarded(
            builder
                .wrap_connector(tcp(HttpConnector::new_with_resolver(guard.resolver()), options)),
        ),
        (None, None) => Connector::Direct(builder.wrap_connector(http)),
        #[cfg(feature = "proxy")]
        (Some(proxy), _) => {
            let kind = proxy_kind(proxy.uri()).ok_or("unsupported proxy scheme")?;
            match kind {
                ProxyKind::Http => {
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), http);
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    Connector::Tunnel(builder.wrap_connector(tunnel))
                }
                ProxyKind::Https => {
                    // TLS to the proxy (HTTP/1.1 only: CONNECT), with the
                    // same roots; TLS to the server runs inside.
                    let to_proxy = hyper_rustls::HttpsConnectorBuilder::new()
                        .with_tls_config(config)
                        .https_only()
                        .enable_http1()
                        .wrap_connector(http);
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), to_proxy);
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    Connector::TlsTunnel(builder.wrap_connector(tunnel))
                }
                ProxyKind::Socks5 | ProxyKind::Socks5h => {
                    let mut socks = hyper_util::client::legacy::connect::proxy::SocksV5::new(
                        proxy.uri().clone(),
                        http,
                    );
                    if let Some((user, password)) = proxy.raw_auth() {
                        socks = socks.with_auth(user.to_owned(), password.to_owned());
                    }
                    let local_dns = kind == ProxyKind::Socks5;
                    Connector::Socks(builder.wrap_connector(Socks { inner: socks, local_dns }))
                }
            }
        }
        #[cfg(not(feature = "proxy"))]
        (Some(never), _) => match *never {},
    };
    Ok(Pool {
        inner: Arc::new(PoolInner {
            connector,
            conns: Mutex::new(Vec::new()),
            idle_timeout: options.pool_idle_timeout,
        }),
    })
}

/// The TLS configuration: the caller's (ALPN cleared: the connector sets
/// it), or rustls with the `ring` provider, the roots of
/// [`HttpOptions::roots`] and the certificates of [`HttpOptions::ca_file`].
fn tls_config(options: &HttpOptions) -> Result<rustls::ClientConfig, String> {
    if let Some(config) = &options.tls {
        if options.ca_file.is_some() {
            return Err("`ca_file` and `tls` cannot be used together: add the roots to the given TLS configuration".into());
        }
        // ALPN is the client's to set (HTTP/1.1, and h2 with `http2`):
        // hyper-rustls refuses a configuration that already has some.
        let mut config = rustls::ClientConfig::clone(config);
        config.alpn_protocols.clear();
        return Ok(config);
    }
    let mut roots = match options.roots {
        Roots::Mozilla => mozilla_roots(),
        _ => platform_roots(),
    };
    if let Some(path) = &options.ca_file {
        let added = extra_roots(Arc::make_mut(&mut roots), path)?;
        tracing::debug!(added, "extra CA roots loaded");
    }
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
}

/// The Mozilla roots of `webpki-roots`, made once per process (a client
/// shares them: nothing is copied per client).
fn mozilla_roots() -> Arc<rustls::RootCertStore> {
    static ROOTS: std::sync::OnceLock<Arc<rustls::RootCertStore>> = std::sync::OnceLock::new();
    ROOTS
        .get_or_init(|| {
            Arc::new(rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() })
        })
        .clone()
}

/// The operating system's trust anchors, loaded once per process and
/// shared by every client; the Mozilla roots when it has none that rustls
/// can use.
fn platform_roots() -> Arc<rustls::RootCertStore> {
    static ROOTS: std::sync::OnceLock<Arc<rustls::RootCertStore>> = std::sync::OnceLock::new();
    let roots = ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for error in &found.errors {
            tracing::debug!(%error, "reading the platform's certificate store");
        }
        let mut roots = rustls::RootCertStore::empty();
        let (added, unusable) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            tracing::warn!(
                errors = found.errors.len(),
                unusable,
                "the platform's certificate store has no usable CA certificate; trusting the Mozilla roots instead"
            );
            return mozilla_roots();
        }
        tracing::debug!(added, unusable, "the platform's CA certificates loaded");
        Arc::new(roots)
    });
    roots.clone()
}

/// Adds the certificates of a PEM file to `roots`; returns how many. A
/// file that cannot be read, holds no certificate or a certificate rustls
/// cannot use as a root is an error.
fn extra_roots(roots: &mut rustls::RootCertStore, path: &std::path::Path) -> Result<usize, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let what = || format!("the CA file {}", path.display());
    let mut added = 0;
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| format!("{}: {e}", what()))? {
        let cert = cert.map_err(|e| format!("{}: {e}", what()))?;
        roots.add(cert).map_err(|e| format!("{}: {e}", what()))?;
        added += 1;
    }
    if added == 0 {
        return Err(format!("{} holds no PEM certificate", what()));
    }
    Ok(added)
}

/// Why a capped body could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Over the cap.
    TooLarge,
    /// The connection failed.
    Io(String),
}

/// Reads a whole body, at most `limit` bytes.
pub(crate) async fn read_limited(body: Incoming, limit: usize) -> Result<Bytes, ReadError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => {
            if e.is::<http_body_util::LengthLimitError>() {
                Err(ReadError::TooLarge)
            } else {
                Err(ReadError::Io(crate::error::chain(&*e)))
            }
        }
    }
}

/// Reads at most `limit` bytes of a body (for error excerpts), ignoring
/// what follows and read errors.
pub(crate) async fn read_prefix(mut body: Incoming, limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while out.len() < limit {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    let take = data.len().min(limit - out.len());
                    out.extend_from_slice(&data[..take]);
                }
            }
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_header_and_origin_form() {
        let host = |u: &str| host_header(&u.parse().unwrap()).unwrap();
        assert_eq!(host("https://mcp.example.com/mcp"), "mcp.example.com");
        assert_eq!(host("https://mcp.example.com:443/mcp"), "mcp.example.com");
        assert_eq!(host("https://mcp.example.com:8443/mcp"), "mcp.example.com:8443");
        assert_eq!(host("http://127.0.0.1:80/mcp"), "127.0.0.1");
        assert_eq!(host("http://127.0.0.1:3000/mcp"), "127.0.0.1:3000");
        assert_eq!(host("http://[::1]:3000/mcp"), "[::1]:3000");
        // Userinfo never reaches the header.
        assert_eq!(host("https://user:secret@mcp.example.com/mcp"), "mcp.example.com");
        let origin = |u: &str| origin_form(&u.parse().unwrap()).to_string();
        assert_eq!(origin("https://mcp.example.com/mcp?key=1"), "/mcp?key=1");
        assert_eq!(origin("https://mcp.example.com"), "/");
    }

    #[cfg(not(feature = "proxy"))]
    #[test]
    fn without_the_feature_a_proxy_is_refused() {
        let endpoint: Uri = "https://mcp.example.com/mcp".parse().unwrap();
        let url = ProxyConfig::Url { url: "http://u:p@127.0.0.1:3128".into(), no_proxy: None };
        let err = proxy_for(&url, &endpoint).unwrap_err();
        assert!(!err.contains("u:p"), "{err}");
        assert!(proxy_for(&ProxyConfig::FromEnv, &endpoint).unwrap().is_none());
    }

    #[cfg(feature = "proxy")]
    #[test]
    fn loopback_hosts() {
        for host in ["localhost", "LOCALHOST", "127.0.0.1", "127.8.9.10", "::1", "[::1]"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["example.com", "10.0.0.1", "localhost.example.com", "::2"] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[cfg(feature = "proxy")]
    #[test]
    fn proxy_choice() {
        let remote: Uri = "https://mcp.example.com/mcp".parse().unwrap();
        let local: Uri = "http://127.0.0.1:9/mcp".parse().unwrap();
        let url = |u: &str, no: Option<&str>| ProxyConfig::Url {
            url: u.into(),
            no_proxy: no.map(str::to_owned),
        };
        assert!(proxy_for(&ProxyConfig::None, &remote).unwrap().is_none());
        // The environment is never consulted for loopback.
        assert!(proxy_for(&ProxyConfig::FromEnv, &local).unwrap().is_none());
        let p = proxy_for(&url("http://u:p@127.0.0.1:3128", None), &remote).unwrap().unwrap();
        assert_eq!(p.uri().to_string(), "http://127.0.0.1:3128/");
        assert_eq!(p.basic_auth().unwrap(), "Basic dTpw");
        assert!(
            proxy_for(&url("http://127.0.0.1:3128", Some("example.com")), &remote)
                .unwrap()
                .is_none()
        );
        // SOCKS5 credentials are handed to the handshake as they are
        // (percent-decoded); HTTPS proxies get Basic.
        let p = proxy_for(&url("socks5h://us%40er:p%3Ass@127.0.0.1:1080", None), &remote)
            .unwrap()
            .unwrap();
        assert_eq!(p.raw_auth(), Some(("us@er", "p:ss")));
        assert_eq!(proxy_kind(p.uri()), Some(ProxyKind::Socks5h));
        let p = proxy_for(&url("https://u:p@proxy.example:3129", None), &remote).unwrap().unwrap();
        assert_eq!(p.basic_auth().unwrap(), "Basic dTpw");
        assert_eq!(proxy_kind(p.uri()), Some(ProxyKind::Https));
        assert_eq!(proxy_kind(&"SOCKS5://h:1".parse().unwrap()), Some(ProxyKind::Socks5));
        for bad in ["socks4://u:pw@127.0.0.1:1080", "ftp://u:pw@proxy:3128", "not a url"] {
            let err = proxy_for(&url(bad, None), &remote).unwrap_err();
            assert!(
                !err.contains("proxy:3128") && !err.contains("1080") && !err.contains("pw"),
                "{err}"
            );
        }
    }
}
