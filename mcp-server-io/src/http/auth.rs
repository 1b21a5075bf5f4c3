//! Authorization as a hook: an [`Authorize`] is given each request's head
//! before anything else of it is read, and lets it through or answers it
//! (401 with `WWW-Authenticate`, 403). Which credentials are valid is the
//! application's business; [`BearerToken`] is the ready check of one
//! configured token.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use http::header::AUTHORIZATION;
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};

use super::reply::{Reply, text};

/// `WWW-Authenticate`.
pub const WWW_AUTHENTICATE: HeaderName = HeaderName::from_static("www-authenticate");

/// What [`Authorize::authorize`] returns: `Ok` lets the request through,
/// `Err` is the response sent instead.
pub type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<(), Reply>> + Send + 'a>>;

/// Decides whether a request may go on, from its head (method, target,
/// headers). Called after the DNS rebinding guard and before the body is
/// read, for every request the service serves.
///
/// A closure `Fn(&Parts) -> Result<(), Reply>` is one; implement the trait
/// for a check that needs to wait (fetching keys, asking a server).
pub trait Authorize: Send + Sync + 'static {
    /// `Ok(())` to serve the request, or the response that refuses it
    /// (build 401s with [`unauthorized`]).
    fn authorize<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a>;
}

impl<F> Authorize for F
where
    F: Fn(&Parts) -> Result<(), Reply> + Send + Sync + 'static,
{
    fn authorize<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a> {
        let result = self(request);
        Box::pin(std::future::ready(result))
    }
}

/// A 401 `unauthorized` with this `WWW-Authenticate` challenge (left out
/// when it is not a valid header value).
pub fn unauthorized(challenge: &str) -> Reply {
    let mut response = text(StatusCode::UNAUTHORIZED, "unauthorized");
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// The bearer token of an `Authorization: Bearer <token>` header (scheme
/// without case, spaces trimmed), if the request has one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, credentials)| credentials.trim())
}

/// Requires `Authorization: Bearer <token>` with one configured token,
/// compared in constant time; anything else gets 401 with a `Bearer`
/// challenge. `Debug` never shows the token.
#[derive(Clone)]
pub struct BearerToken {
    token: String,
    challenge: String,
}

impl BearerToken {
    /// Accepts exactly `token`; the 401 says `WWW-Authenticate: Bearer`.
    pub fn new(token: impl Into<String>) -> Self {
        BearerToken { token: token.into(), challenge: "Bearer".to_owned() }
    }

    /// The 401's `WWW-Authenticate` value instead of `Bearer` (to name a
    /// `resource_metadata` URL, a realm or a scope).
    pub fn with_challenge(mut self, challenge: impl Into<String>) -> Self {
        self.challenge = challenge.into();
        self
    }

    /// Whether the headers carry the token.
    pub fn accepts(&self, headers: &HeaderMap) -> bool {
        bearer_token(headers).is_some_and(|given| same(given.as_bytes(), self.token.as_bytes()))
    }

    /// `None` when the headers carry the token, else the 401.
    pub fn refusal(&self, headers: &HeaderMap) -> Option<Reply> {
        (!self.accepts(headers)).then(|| unauthorized(&self.challenge))
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerToken")
            .field("token", &"<redacted>")
            .field("challenge", &self.challenge)
            .finish()
    }
}

impl Authorize for BearerToken {
    fn authorize<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a> {
        let result = match self.refusal(&request.headers) {
            Some(refusal) => Err(refusal),
            None => Ok(()),
        };
        Box::pin(std::future::ready(result))
    }
}

/// Compares two byte strings in time that depends on their lengths only,
/// never on where they differ.
fn same(given: &[u8], expected: &[u8]) -> bool {
    let mut diff = u8::from(given.len() != expected.len());
    for (i, b) in expected.iter().enumerate() {
        diff |= b ^ given.get(i).copied().unwrap_or(!*b);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_token_is_compared_whole() {
        let check = BearerToken::new("s3cret").with_challenge("Bearer realm=\"mcp\"");
        let headers = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            headers
        };
        assert!(check.accepts(&headers("Bearer s3cret")));
        assert!(check.accepts(&headers("bearer  s3cret ")));
        for wrong in ["Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "Bearer ", "s3cret"] {
            assert!(!check.accepts(&headers(wrong)), "{wrong}");
        }
        let refusal = check.refusal(&HeaderMap::new()).unwrap();
        assert_eq!(refusal.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(refusal.headers()[WWW_AUTHENTICATE], "Bearer realm=\"mcp\"");
        assert!(!format!("{check:?}").contains("s3cret"));
        assert!(same(b"", b"") && !same(b"a", b"") && !same(b"", b"a"));
    }
}
