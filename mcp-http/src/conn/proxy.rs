//! Proxies: which one applies to an endpoint (configured, or from the
//! environment), how each kind is spoken to, and SOCKS5 with local name
//! resolution. Without the `proxy` feature there is never one.

use http::Uri;
#[cfg(feature = "proxy")]
use hyper::rt::{Read, Write};
#[cfg(feature = "proxy")]
use hyper_util::client::proxy::matcher::Matcher;
#[cfg(feature = "proxy")]
use tower_service::Service;

use crate::options::ProxyConfig;

/// Where a proxied client connects (the proxy's URL and credentials).
#[cfg(feature = "proxy")]
pub(crate) use hyper_util::client::proxy::matcher::Intercept as Proxy;

/// Without the `proxy` feature there is never a proxy.
#[cfg(not(feature = "proxy"))]
#[derive(Debug)]
pub(crate) enum Proxy {}

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
            let host = endpoint.authority().map(|a| crate::endpoint::host_and_port(a.as_str()).0);
            if host.is_some_and(is_loopback) {
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
pub(crate) enum ProxyKind {
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
pub(crate) fn proxy_kind(uri: &Uri) -> Option<ProxyKind> {
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
pub(crate) fn explicit_port(uri: &Uri) -> Uri {
    crate::endpoint::with_explicit_port(uri)
}

/// SOCKS5 through hyper-util's handshake; for `socks5://`, the name is
/// resolved here first (asynchronously) and the proxy is given the address.
#[cfg(feature = "proxy")]
#[derive(Clone)]
pub(crate) struct Socks<C> {
    pub(crate) inner: hyper_util::client::legacy::connect::proxy::SocksV5<C>,
    pub(crate) local_dns: bool,
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
