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
use tower_service::Service;

use crate::endpoint::host_and_port;
use crate::guard::{Guard, GuardedResolver};
use crate::options::{HttpOptions, Roots};

mod proxy;
mod tls;

pub(crate) use proxy::{Proxy, proxy_for};
#[cfg(feature = "proxy")]
use proxy::{ProxyKind, Socks, explicit_port, proxy_kind};
use tls::tls_config;

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
    /// Direct, with the process's default TLS configuration made at the
    /// first `https` connection: an `http://` client never loads the
    /// platform's roots (milliseconds, once per process). An `http://`
    /// URL naming an IP address is connected to here, within the connect
    /// timeout (no name to resolve: the connector's machinery is not needed).
    DirectDefault(HttpConnector, Roots, Duration),
    /// Direct, through the SSRF guard's resolver (the OAuth requests).
    Guarded(HttpsConnector<HttpConnector<GuardedResolver>>),
    /// A Unix domain socket (HTTP/1.1, no TLS), with the connect timeout.
    Unix(std::path::PathBuf, Duration),
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
        // The sending future itself is boxed, not a block awaiting it: a
        // block would hold a second copy of the request's room. It is 1,032
        // bytes in a release build, the largest allocation glibc's
        // per-thread cache serves (a larger one costs each request a trip
        // to the shared heap): worth keeping there.
        Box::pin(self.clone().send(req))
    }

    async fn send(
        self,
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
                // Boxed (see `connect`): connecting (TCP, a tunnel, TLS) is
                // a large future, which would otherwise make every
                // request's future as large and be copied into its box
                // each time.
                None => (self.connect(&uri).await?, false),
            };
            // Kept only when it may be needed again; boxed, so the room for
            // it (rarely used) does not make every request's future larger.
            let replay = (reused && req.extensions().get::<Replayable>().is_some())
                .then(|| Box::new(copy_request(&req)));
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
                    req = *copy;
                    fresh = true;
                }
                _ => return Err(PoolError::Http(failed.into_error())),
            }
        }
    }

    /// How many connections the pool keeps (busy or idle; closed ones
    /// are dropped first).
    pub(crate) fn kept(&self) -> usize {
        let mut conns = lock(&self.inner.conns);
        conns.retain(|k| !k.sender.is_closed());
        conns.len()
    }

    /// Whether requests go through a proxy.
    pub(crate) fn is_proxied(&self) -> bool {
        !matches!(
            self.inner.connector,
            Connector::Direct(_)
                | Connector::DirectDefault(..)
                | Connector::Guarded(_)
                | Connector::Unix(..)
        )
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
    ///
    /// Each connector's future is boxed on its own: one future over every
    /// connector would be as large as the largest (TLS to a proxy and TLS
    /// inside it hold two TLS connections), and all of it is copied into
    /// its box, about 11k instructions per connection for a direct one.
    fn connect(&self, uri: &Uri) -> ConnectFuture {
        match &self.inner.connector {
            Connector::Direct(c) => Box::pin(connect_with(c.clone(), uri.clone())),
            Connector::DirectDefault(http, roots, _) if uri.scheme() == Some(&Scheme::HTTPS) => {
                match tls::default_config(*roots) {
                    Ok(config) => {
                        let c = HttpsConnector::from((http.clone(), config));
                        Box::pin(connect_with(c, uri.clone()))
                    }
                    Err(e) => Box::pin(std::future::ready(Err(PoolError::Connect(e.into())))),
                }
            }
            Connector::DirectDefault(http, _, timeout) => match ip_address(uri) {
                Some(addr) => {
                    let timeout = *timeout;
                    Box::pin(
                        async move { handshake_http1(connect_tcp(addr, timeout).await?).await },
                    )
                }
                // The same stream type as through TLS: one handshake for both.
                None => {
                    let (http, uri) = (http.clone(), uri.clone());
                    Box::pin(async move {
                        handshake(hyper_rustls::MaybeHttpsStream::Http(call(http, uri).await?))
                            .await
                    })
                }
            },
            Connector::Guarded(c) => Box::pin(connect_with(c.clone(), uri.clone())),
            Connector::Unix(socket, timeout) => {
                let (socket, timeout) = (socket.clone(), *timeout);
                Box::pin(
                    async move { handshake_http1(connect_unix(&socket, timeout).await?).await },
                )
            }
            // A proxy is asked for host and port: the scheme's port when
            // the URI has none.
            #[cfg(feature = "proxy")]
            Connector::Tunnel(c) => Box::pin(connect_with(c.clone(), explicit_port(uri))),
            #[cfg(feature = "proxy")]
            Connector::TlsTunnel(c) => Box::pin(connect_with(c.clone(), explicit_port(uri))),
            #[cfg(feature = "proxy")]
            Connector::Socks(c) => Box::pin(connect_with(c.clone(), explicit_port(uri))),
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

/// What [`Pool::connect`] returns.
type ConnectFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Sender, PoolError>> + Send>>;

/// Opens a connection with `connector` and makes the HTTP handshake on it.
async fn connect_with<C>(connector: C, uri: Uri) -> Result<Sender, PoolError>
where
    C: Service<Uri>,
    C::Response: Read + Write + Connection + Unpin + Send + 'static,
    C::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    handshake(call(connector, uri).await?).await
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
        // Boxed before it is spawned, as an HTTP/1.1 connection is.
        let conn = Box::pin(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "HTTP/2 connection ended");
            }
        });
        return Ok(Sender::Http2(send));
    }
    #[cfg(not(feature = "http2"))]
    let _ = io.connected();
    handshake_http1(io).await
}

/// The HTTP/1.1 handshake on a new connection; its task runs until it
/// closes.
async fn handshake_http1<T>(io: T) -> Result<Sender, PoolError>
where
    T: Read + Write + Unpin + Send + 'static,
{
    let (send, conn) = http1::Builder::new().handshake(io).await.map_err(PoolError::Http)?;
    // Boxed before it is spawned: hyper's connection (its buffers and
    // state, ≈ 1.3 KB) would otherwise be moved through each layer of
    // `spawn` into the task's cell, and its task stage rewritten whole
    // when it ends: about ten copies of it per connection. The task holds
    // the box.
    let conn = Box::pin(conn);
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "HTTP/1.1 connection ended");
        }
    });
    Ok(Sender::Http1(send))
}

/// Waits for `connect` at most `timeout`; saying `what` timed out.
async fn within<S>(
    timeout: Duration,
    connect: impl std::future::Future<Output = std::io::Result<S>>,
    what: &'static str,
) -> Result<S, PoolError> {
    match tokio::time::timeout(timeout, connect).await {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(e)) => Err(PoolError::Connect(Box::new(e))),
        Err(_) => Err(PoolError::Connect(Box::new(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            what,
        )))),
    }
}

/// Opens a Unix domain socket within `timeout`.
#[cfg(unix)]
async fn connect_unix(
    socket: &std::path::Path,
    timeout: Duration,
) -> Result<hyper_util::rt::TokioIo<tokio::net::UnixStream>, PoolError> {
    let connect = tokio::net::UnixStream::connect(socket);
    let stream = within(timeout, connect, "connecting to the socket timed out").await?;
    Ok(hyper_util::rt::TokioIo::new(stream))
}

/// Opens a TCP connection to `addr` within `timeout`, with `TCP_NODELAY`
/// (as the connector sets it).
async fn connect_tcp(
    addr: std::net::SocketAddr,
    timeout: Duration,
) -> Result<hyper_util::rt::TokioIo<tokio::net::TcpStream>, PoolError> {
    let connect = tokio::net::TcpStream::connect(addr);
    let stream = within(timeout, connect, "tcp connect timed out").await?;
    stream.set_nodelay(true).map_err(|e| PoolError::Connect(Box::new(e)))?;
    Ok(hyper_util::rt::TokioIo::new(stream))
}

/// The address of an `http://` URI whose host is an IP address (a name
/// is left to the connector's resolver).
fn ip_address(uri: &Uri) -> Option<std::net::SocketAddr> {
    if uri.scheme() != Some(&Scheme::HTTP) {
        return None;
    }
    let (host, port) = host_and_port(uri.authority()?.as_str());
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let ip: std::net::IpAddr = host.parse().ok()?;
    Some(std::net::SocketAddr::new(ip, port.map_or(80, |(_, port)| port)))
}

/// Unix domain sockets exist on Unix only.
#[cfg(not(unix))]
async fn connect_unix(
    _socket: &std::path::Path,
    _timeout: Duration,
) -> Result<hyper_util::rt::TokioIo<tokio::io::DuplexStream>, PoolError> {
    Err(PoolError::Connect(Box::new(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "Unix domain sockets are not available on this platform",
    ))))
}

/// The `Host` header for a URI: its host, and its port unless it is the
/// scheme's default (never the authority's userinfo).
pub(crate) fn host_header(uri: &Uri) -> Option<HeaderValue> {
    let text = uri.authority()?.as_str();
    let (host, port) = host_and_port(text);
    let default_port = match uri.scheme_str() {
        Some(s) if s.eq_ignore_ascii_case("https") => Some(443),
        Some(s) if s.eq_ignore_ascii_case("http") => Some(80),
        _ => None,
    };
    match port {
        Some((digits, port)) if Some(port) != default_port => {
            // Without userinfo, and with the port written as a number is
            // (no leading zero), the authority is the header as it stands.
            if !text.contains('@') && !digits.starts_with('0') {
                return HeaderValue::from_str(text).ok();
            }
            HeaderValue::from_str(&format!("{host}:{port}")).ok()
        }
        _ => HeaderValue::from_str(host).ok(),
    }
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
    // The TLS configuration (shared by every client that uses the
    // defaults) with ALPN set; `https` and `http` both allowed.
    fn wrap<H>(config: &Arc<rustls::ClientConfig>, conn: H) -> HttpsConnector<H> {
        HttpsConnector::from((conn, config.clone()))
    }
    if let (None, None, Some(socket)) = (proxy, guard, &options.unix_socket) {
        // No TLS over a socket: no configuration is looked at.
        return Ok(Pool::with_connector(
            Connector::Unix(socket.clone(), options.connect_timeout),
            options,
        ));
    }
    let http = tcp(HttpConnector::new(), options);
    if let (None, None) = (proxy, guard)
        && tls::uses_default(options)
    {
        let direct = Connector::DirectDefault(http, options.roots, options.connect_timeout);
        return Ok(Pool::with_connector(direct, options));
    }
    let config = tls_config(options)?;
    let connector = match (proxy, guard) {
        (None, Some(guard)) => Connector::Guarded(wrap(
            &config,
            tcp(HttpConnector::new_with_resolver(guard.resolver()), options),
        )),
        (None, None) => Connector::Direct(wrap(&config, http)),
        #[cfg(feature = "proxy")]
        (Some(proxy), _) => {
            let kind = proxy_kind(proxy.uri()).ok_or("unsupported proxy scheme")?;
            match kind {
                ProxyKind::Http => {
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), http);
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    Connector::Tunnel(wrap(&config, tunnel))
                }
                ProxyKind::Https => {
                    // TLS to the proxy (HTTP/1.1 only: CONNECT), with the
                    // same roots; TLS to the server runs inside.
                    let mut to_proxy = rustls::ClientConfig::clone(&config);
                    to_proxy.alpn_protocols.clear();
                    let to_proxy = hyper_rustls::HttpsConnectorBuilder::new()
                        .with_tls_config(to_proxy)
                        .https_only()
                        .enable_http1()
                        .wrap_connector(http);
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), to_proxy);
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    Connector::TlsTunnel(wrap(&config, tunnel))
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
                    Connector::Socks(wrap(&config, Socks { inner: socks, local_dns }))
                }
            }
        }
        #[cfg(not(feature = "proxy"))]
        (Some(never), _) => match *never {},
    };
    Ok(Pool::with_connector(connector, options))
}

impl Pool {
    fn with_connector(connector: Connector, options: &HttpOptions) -> Pool {
        Pool {
            inner: Arc::new(PoolInner {
                connector,
                conns: Mutex::new(Vec::new()),
                idle_timeout: options.pool_idle_timeout,
            }),
        }
    }
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
    fn the_default_tls_configuration_is_not_made_by_building_a_pool() {
        let direct = build_pool(&HttpOptions::new("t"), None, None).unwrap();
        assert!(matches!(direct.inner.connector, Connector::DirectDefault(_, Roots::Platform, _)));
        let mut mozilla = HttpOptions::new("t");
        mozilla.roots = Roots::Mozilla;
        let direct = build_pool(&mozilla, None, None).unwrap();
        assert!(matches!(direct.inner.connector, Connector::DirectDefault(_, Roots::Mozilla, _)));
    }

    #[test]
    fn only_http_to_an_ip_address_is_connected_to_directly() {
        let ip = |u: &str| ip_address(&u.parse().unwrap()).map(|a| a.to_string());
        assert_eq!(ip("http://127.0.0.1:3000/mcp").as_deref(), Some("127.0.0.1:3000"));
        assert_eq!(ip("http://127.0.0.1/mcp").as_deref(), Some("127.0.0.1:80"));
        assert_eq!(ip("http://[::1]:3000/mcp").as_deref(), Some("[::1]:3000"));
        // A name is resolved by the connector; TLS is the connector's.
        assert_eq!(ip("http://localhost:3000/mcp"), None);
        assert_eq!(ip("https://127.0.0.1:3000/mcp"), None);
    }

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
        assert_eq!(host("https://user:secret@mcp.example.com:8443/mcp"), "mcp.example.com:8443");
        // The port as a number, whatever its spelling in the URL.
        assert_eq!(host("http://127.0.0.1:03000/mcp"), "127.0.0.1:3000");
        assert_eq!(host("http://127.0.0.1:0080/mcp"), "127.0.0.1");
        let origin = |u: &str| origin_form(&u.parse().unwrap()).to_string();
        assert_eq!(origin("https://mcp.example.com/mcp?key=1"), "/mcp?key=1");
        assert_eq!(origin("https://mcp.example.com"), "/");
    }
}
