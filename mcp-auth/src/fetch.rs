//! The one door to the network: a fetch trait the HTTP transport implements.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response};
use serde::de::DeserializeOwned;

use crate::error::Error;
use crate::url::{form_encode, require_secure};

/// A boxed, `Send` future, as the object-safe traits of this crate return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The largest body this crate reads from any response (metadata, tokens,
/// registration). Implementors of [`HttpFetch`] should stop reading there;
/// the crate also refuses longer bodies itself.
pub const MAX_BODY: usize = 1024 * 1024;

/// Performs one HTTP exchange for the OAuth client.
///
/// The implementor (the HTTP transport) must:
/// - send the request as given (method, URI, headers, body) and add no
///   credentials of its own;
/// - **not follow redirects**: a 3xx comes back as the response (the
///   headless authorization handler reads its `Location`);
/// - refuse hosts on networks the MCP server is not on
///   ([`FetchError::Refused`], see [`AddressClass`]): checked on the
///   resolved address the connection then goes to, for every request
///   (a redirect the caller follows is a new request);
/// - cap the response body at [`MAX_BODY`] (return
///   [`FetchError::BodyTooLarge`] beyond) and bound the whole exchange with
///   a timeout ([`FetchError::Timeout`]).
pub trait HttpFetch: Send + Sync {
    /// Sends `req` and returns the response with its whole (capped) body.
    fn fetch(&self, req: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>>;
}

impl<T: HttpFetch + ?Sized> HttpFetch for Arc<T> {
    fn fetch(&self, req: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
        (**self).fetch(req)
    }
}

impl<T: HttpFetch + ?Sized> HttpFetch for &T {
    fn fetch(&self, req: Request<Bytes>) -> BoxFuture<'_, Result<Response<Bytes>, FetchError>> {
        (**self).fetch(req)
    }
}

/// The kind of network an address belongs to, as the SSRF guard of an
/// [`HttpFetch`] sees it: URLs that a server or its metadata names (metadata,
/// registration, token, authorization endpoints) may be refused when they
/// resolve to anything but [`Public`](AddressClass::Public).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    /// A routable address of the internet.
    Public,
    /// This machine: `127.0.0.0/8`, `::1`, and the unspecified `0.0.0.0` and
    /// `::` (a connection to them reaches this machine).
    Loopback,
    /// A private network: `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`,
    /// the carrier-grade NAT range `100.64.0.0/10`, and IPv6 unique local
    /// (`fc00::/7`) and site-local (`fec0::/10`) addresses.
    Private,
    /// Link-local: `169.254.0.0/16` (cloud metadata services listen on
    /// `169.254.169.254`) and `fe80::/10`.
    LinkLocal,
    /// Not a unicast host address: multicast, broadcast, `0.0.0.0/8`,
    /// `240.0.0.0/4` and other reserved ranges.
    Reserved,
}

impl AddressClass {
    /// The class of an address. An IPv4 address inside IPv6 (mapped,
    /// `::ffff:a.b.c.d`, or NAT64, `64:ff9b::a.b.c.d`) is classed as the IPv4
    /// address it reaches.
    pub fn of(ip: std::net::IpAddr) -> AddressClass {
        match ip {
            std::net::IpAddr::V4(v4) => Self::of_v4(v4),
            std::net::IpAddr::V6(v6) => Self::of_v6(v6),
        }
    }

    fn of_v4(ip: std::net::Ipv4Addr) -> AddressClass {
        let [a, b, ..] = ip.octets();
        if ip.is_loopback() || ip.is_unspecified() {
            AddressClass::Loopback
        } else if ip.is_link_local() {
            AddressClass::LinkLocal
        } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
            AddressClass::Private
        } else if a == 0 || a >= 224 || ip.is_broadcast() {
            AddressClass::Reserved
        } else {
            AddressClass::Public
        }
    }

    fn of_v6(ip: std::net::Ipv6Addr) -> AddressClass {
        if let Some(v4) = ip.to_ipv4_mapped() {
            return Self::of_v4(v4);
        }
        let seg = ip.segments();
        if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
            let [.., a, b, c, d] = ip.octets();
            return Self::of_v4(std::net::Ipv4Addr::new(a, b, c, d));
        }
        if ip.is_loopback() || ip.is_unspecified() {
            AddressClass::Loopback
        } else if seg[0] & 0xffc0 == 0xfe80 {
            AddressClass::LinkLocal
        } else if seg[0] & 0xfe00 == 0xfc00 || seg[0] & 0xffc0 == 0xfec0 {
            AddressClass::Private
        } else if seg[0] & 0xff00 == 0xff00 {
            AddressClass::Reserved
        } else {
            AddressClass::Public
        }
    }

    /// The class's name in messages (`"link-local"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            AddressClass::Public => "public",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link-local",
            AddressClass::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a fetch failed. Messages must not carry credentials or full URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchError {
    /// The exchange did not finish in time.
    Timeout,
    /// The body was longer than the cap.
    BodyTooLarge,
    /// Connecting failed (DNS, TCP, TLS).
    Connect(String),
    /// The URL's host is (or resolves only to) an address the fetcher's
    /// SSRF guard refuses: a server's metadata may not send the client to
    /// cloud metadata, private or loopback services unless the MCP server
    /// itself lives on such a network. Nothing was sent.
    Refused {
        /// The first refused address.
        address: std::net::IpAddr,
        /// Its class.
        class: AddressClass,
    },
    /// Anything else the transport reports.
    Other(String),
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Timeout => f.write_str("timed out"),
            FetchError::BodyTooLarge => write!(f, "response body larger than {MAX_BODY} bytes"),
            FetchError::Connect(m) => write!(f, "connection failed: {m}"),
            FetchError::Refused { address, class } => write!(
                f,
                "refused: the host is or resolves to {address}, a {class} address, and the MCP server is not on \
                 such a network (server-side request forgery guard)"
            ),
            FetchError::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FetchError {}

/// A GET for a metadata document: no credentials, `Accept: application/json`.
pub(crate) fn metadata_get(url: &str) -> Result<Request<Bytes>, Error> {
    Request::builder()
        .method(Method::GET)
        .uri(url)
        .header(ACCEPT, "application/json")
        .body(Bytes::new())
        .map_err(|_| Error::InvalidUrl { what: "metadata", reason: "not a valid request URI" })
}

/// Client authentication material for a form POST to the token endpoint.
pub(crate) struct FormPost<'a> {
    pub(crate) url: &'a str,
    pub(crate) params: Vec<(&'static str, String)>,
    pub(crate) basic: Option<HeaderValue>,
}

pub(crate) fn form_post(post: FormPost<'_>) -> Result<Request<Bytes>, Error> {
    let body = form_encode(post.params.iter().map(|(k, v)| (*k, v.as_str())));
    let mut b = Request::builder()
        .method(Method::POST)
        .uri(post.url)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ACCEPT, "application/json");
    if let Some(basic) = post.basic {
        b = b.header(AUTHORIZATION, basic);
    }
    b.body(Bytes::from(body)).map_err(|_| Error::InvalidUrl {
        what: "token endpoint",
        reason: "not a valid request URI",
    })
}

pub(crate) fn json_post(url: &str, body: &serde_json::Value) -> Result<Request<Bytes>, Error> {
    let bytes =
        serde_json::to_vec(body).map_err(|_| Error::document("request", url, "unserializable"))?;
    Request::builder()
        .method(Method::POST)
        .uri(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .body(Bytes::from(bytes))
        .map_err(|_| Error::InvalidUrl {
            what: "registration endpoint",
            reason: "not a valid request URI",
        })
}

/// Sends a request after checking that its URL is https (or loopback).
pub(crate) async fn send(
    fetch: &dyn HttpFetch,
    what: &'static str,
    req: Request<Bytes>,
) -> Result<Response<Bytes>, Error> {
    let url = req.uri().to_string();
    require_secure(what, &url)?;
    let resp = fetch.fetch(req).await.map_err(|e| Error::fetch(&url, e))?;
    if resp.body().len() > MAX_BODY {
        return Err(Error::fetch(&url, FetchError::BodyTooLarge));
    }
    Ok(resp)
}

/// Parses a JSON body into `T`, naming the document on failure.
pub(crate) fn parse_json<T: DeserializeOwned>(
    what: &'static str,
    url: &str,
    body: &[u8],
) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|e| {
        // serde_json messages name the offending member and position, never
        // the value; safe to show.
        Error::document(what, url, e.to_string())
    })
}

/// The OAuth error object of a 4xx answer (RFC 6749 §5.2).
#[derive(Debug, serde::Deserialize)]
pub(crate) struct OAuthErrorBody {
    pub(crate) error: String,
    #[serde(default)]
    pub(crate) error_description: Option<String>,
}

/// Turns a non-success answer of a token or registration endpoint into an
/// error: the OAuth error object when there is one, the status otherwise.
pub(crate) fn endpoint_error(endpoint: &'static str, url: &str, resp: &Response<Bytes>) -> Error {
    match serde_json::from_slice::<OAuthErrorBody>(resp.body()) {
        Ok(body) => Error::OAuth {
            endpoint,
            error: body.error,
            description: body.error_description.map(|d| d.chars().take(300).collect()),
        },
        Err(_) => Error::status(endpoint, url, resp.status().as_u16()),
    }
}

#[cfg(test)]
mod tests {
    use super::AddressClass::{self, *};

    fn check(ip: &str, class: AddressClass) {
        assert_eq!(AddressClass::of(ip.parse().unwrap()), class, "{ip}");
    }

    #[test]
    fn address_classes() {
        for (ip, class) in [
            ("8.8.8.8", Public),
            ("100.63.255.255", Public),
            ("100.128.0.0", Public),
            ("172.32.0.1", Public),
            ("2606:4700::1111", Public),
            ("127.0.0.1", Loopback),
            ("127.255.0.9", Loopback),
            ("0.0.0.0", Loopback),
            ("::1", Loopback),
            ("::", Loopback),
            ("::ffff:127.0.0.1", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", Private),
            ("100.127.255.255", Private),
            ("fc00::1", Private),
            ("fd00:ec2::254", Private),
            ("fec0::1", Private),
            ("169.254.169.254", LinkLocal),
            ("169.254.0.1", LinkLocal),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("::ffff:169.254.169.254", LinkLocal),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("::ffff:10.0.0.1", Private),
            ("224.0.0.1", Reserved),
            ("255.255.255.255", Reserved),
            ("240.0.0.1", Reserved),
            ("0.1.2.3", Reserved),
            ("ff02::1", Reserved),
        ] {
            check(ip, class);
        }
    }

    #[test]
    fn refusal_names_the_address_and_why() {
        let e = super::FetchError::Refused {
            address: "169.254.169.254".parse().unwrap(),
            class: LinkLocal,
        };
        let text = e.to_string();
        assert!(text.contains("169.254.169.254") && text.contains("link-local"), "{text}");
    }
}
