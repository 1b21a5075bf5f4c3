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
    /// Anything else the transport reports.
    Other(String),
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Timeout => f.write_str("timed out"),
            FetchError::BodyTooLarge => write!(f, "response body larger than {MAX_BODY} bytes"),
            FetchError::Connect(m) => write!(f, "connection failed: {m}"),
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
