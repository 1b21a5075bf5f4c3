//! The connection layer: one pooled hyper client per `HttpClient`.

use std::sync::Arc;

use bytes::Bytes;
use http::Uri;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
#[cfg(feature = "proxy")]
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::{Client, ResponseFuture};
#[cfg(feature = "proxy")]
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// Where a proxied client connects (the proxy's URL and credentials).
#[cfg(feature = "proxy")]
pub(crate) use hyper_util::client::proxy::matcher::Intercept as Proxy;

/// Without the `proxy` feature there is never a proxy.
#[cfg(not(feature = "proxy"))]
#[derive(Debug)]
pub(crate) enum Proxy {}

use crate::options::{HttpOptions, ProxyConfig};

/// The request body type: every message is one buffer.
pub(crate) type Body = Full<Bytes>;

/// The pooled client, direct or through a proxy's CONNECT tunnel. One
/// client talks to one origin, so the choice is made once. Cloning shares
/// the pool.
#[derive(Clone)]
pub(crate) enum Pool {
    Direct(Client<HttpsConnector<HttpConnector>, Body>),
    #[cfg(feature = "proxy")]
    Tunnel(Client<HttpsConnector<Tunnel<HttpConnector>>, Body>),
}

impl Pool {
    /// Sends a request on a pooled connection.
    pub(crate) fn request(&self, req: http::Request<Body>) -> ResponseFuture {
        match self {
            Pool::Direct(c) => c.request(req),
            #[cfg(feature = "proxy")]
            Pool::Tunnel(c) => c.request(req),
        }
    }

    /// Whether requests go through a proxy.
    pub(crate) fn is_proxied(&self) -> bool {
        !matches!(self, Pool::Direct(_))
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
            Ok(Matcher::from_env().intercept(endpoint).filter(|i| is_http_proxy(i.uri())))
        }
        ProxyConfig::Url { url, no_proxy } => {
            let uri: Uri = url.parse().map_err(|_| "the proxy URL is not a valid URL")?;
            if !is_http_proxy(&uri) || uri.host().is_none() {
                return Err("the proxy URL must be http://[user:password@]host:port".into());
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

#[cfg(feature = "proxy")]
fn is_http_proxy(uri: &Uri) -> bool {
    uri.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case("http"))
}

/// Builds the pooled client for `endpoint`: keep-alive on, connect timeout,
/// rustls with ALPN h2 and http/1.1, `http` allowed (for local servers),
/// through a CONNECT tunnel when a proxy applies.
pub(crate) fn build_pool(options: &HttpOptions, proxy: Option<&Proxy>) -> Result<Pool, String> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(options.connect_timeout));
    let builder = hyper_rustls::HttpsConnectorBuilder::new();
    let builder = match &options.tls {
        Some(config) => builder.with_tls_config(rustls::ClientConfig::clone(config)),
        None => builder
            .with_provider_and_webpki_roots(Arc::new(rustls::crypto::ring::default_provider()))
            .map_err(|e| e.to_string())?,
    };
    #[cfg(feature = "http2")]
    let builder = builder.https_or_http().enable_all_versions();
    #[cfg(not(feature = "http2"))]
    let builder = builder.https_or_http().enable_http1();
    let mut client = Client::builder(TokioExecutor::new());
    client
        .pool_timer(TokioTimer::new())
        .timer(TokioTimer::new())
        .pool_idle_timeout(options.pool_idle_timeout);
    Ok(match proxy {
        None => Pool::Direct(client.build(builder.wrap_connector(http))),
        #[cfg(feature = "proxy")]
        Some(proxy) => {
            let mut tunnel = Tunnel::new(proxy.uri().clone(), http);
            if let Some(auth) = proxy.basic_auth() {
                tunnel = tunnel.with_auth(auth.clone());
            }
            Pool::Tunnel(client.build(builder.wrap_connector(tunnel)))
        }
        #[cfg(not(feature = "proxy"))]
        Some(never) => match *never {},
    })
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
        for bad in ["socks5://127.0.0.1:1080", "https://proxy:3128", "not a url"] {
            let err = proxy_for(&url(bad, None), &remote).unwrap_err();
            assert!(!err.contains("proxy:3128") && !err.contains("1080"), "{err}");
        }
    }
}
