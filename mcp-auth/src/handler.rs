//! The user's part of the flow: sending the user agent to the authorization
//! endpoint and bringing back the callback parameters.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::header::LOCATION;
use http::{Method, Request};

use crate::error::Error;
use crate::fetch::{BoxFuture, HttpFetch, send};
use crate::url::query_params;

/// An authorization request ready for the user agent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationRequest {
    /// The full authorization URL to open.
    pub url: String,
    /// The redirect URI it names (the handler's).
    pub redirect_uri: String,
}

impl AuthorizationRequest {
    /// A request for `url` naming `redirect_uri` (for hosts and tests that
    /// drive a handler themselves).
    pub fn new(url: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        AuthorizationRequest { url: url.into(), redirect_uri: redirect_uri.into() }
    }
}

/// The parameters the authorization server put on the redirect URI.
/// `Debug` hides the code.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallbackParams {
    /// `code`.
    pub code: Option<String>,
    /// `state`.
    pub state: Option<String>,
    /// `iss` (RFC 9207).
    pub iss: Option<String>,
    /// `error`, when the user or server refused.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl fmt::Debug for CallbackParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallbackParams")
            .field("code", &self.code.as_ref().map(|_| "<redacted>"))
            .field("state", &self.state)
            .field("iss", &self.iss)
            .field("error", &self.error)
            .field("error_description", &self.error_description)
            .finish()
    }
}

impl CallbackParams {
    /// The parameters of a callback URL (or bare query string). The first
    /// occurrence of each parameter counts.
    pub fn from_url(url: &str) -> Self {
        let mut p = CallbackParams::default();
        for (k, v) in query_params(url) {
            let slot = match k.as_str() {
                "code" => &mut p.code,
                "state" => &mut p.state,
                "iss" => &mut p.iss,
                "error" => &mut p.error,
                "error_description" => &mut p.error_description,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v);
            }
        }
        p
    }

    /// A callback with a code and a state (tests, hosts with their own
    /// redirect handling).
    pub fn new(code: impl Into<String>, state: impl Into<String>) -> Self {
        CallbackParams { code: Some(code.into()), state: Some(state.into()), ..Default::default() }
    }
}

/// Sends the user to the authorization URL and returns the callback's
/// parameters. The host provides one: a browser and a loopback listener
/// (feature `loopback`), a device with a printed URL, or
/// [`HeadlessHandler`] in tests.
pub trait AuthorizationHandler: Send + Sync + fmt::Debug {
    /// The redirect URI this handler receives callbacks on (registered with
    /// the authorization server). Must be loopback `http` or `https`.
    fn redirect_uri(&self) -> String;

    /// Completes the user's part for `request`: returns the callback's
    /// parameters (the flow checks `state`, `iss` and `code`). Must be
    /// bounded in time.
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> BoxFuture<'a, Result<CallbackParams, Error>>;
}

/// A handler for tests and automated clients against servers that approve
/// at once: GETs the authorization URL through the fetcher, does not follow
/// the redirect, and reads the parameters from its `Location`.
#[derive(Clone)]
pub struct HeadlessHandler {
    fetch: Arc<dyn HttpFetch>,
    redirect_uri: String,
}

impl fmt::Debug for HeadlessHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeadlessHandler")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl HeadlessHandler {
    /// The default redirect URI of the headless handler (nothing listens
    /// there: the redirect is read, not followed).
    pub const DEFAULT_REDIRECT_URI: &'static str = "http://127.0.0.1:33418/callback";

    /// A headless handler with [`Self::DEFAULT_REDIRECT_URI`].
    pub fn new(fetch: Arc<dyn HttpFetch>) -> Self {
        Self::with_redirect_uri(fetch, Self::DEFAULT_REDIRECT_URI)
    }

    /// A headless handler with a given redirect URI.
    pub fn with_redirect_uri(fetch: Arc<dyn HttpFetch>, redirect_uri: impl Into<String>) -> Self {
        HeadlessHandler { fetch, redirect_uri: redirect_uri.into() }
    }
}

impl AuthorizationHandler for HeadlessHandler {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
    ) -> BoxFuture<'a, Result<CallbackParams, Error>> {
        Box::pin(async move {
            let req = Request::builder()
                .method(Method::GET)
                .uri(&request.url)
                .body(Bytes::new())
                .map_err(|_| Error::InvalidUrl {
                what: "authorization endpoint",
                reason: "not a valid request URI",
            })?;
            let resp = send(&*self.fetch, "authorization endpoint", req).await?;
            if !resp.status().is_redirection() {
                return Err(Error::Handler(format!(
                    "authorization endpoint answered HTTP {} instead of a redirect",
                    resp.status().as_u16()
                )));
            }
            let location = resp
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| Error::Handler("redirect without a Location".into()))?;
            let target = location.split(['?', '#']).next().unwrap_or("");
            let expected = request.redirect_uri.split(['?', '#']).next().unwrap_or("");
            if target != expected {
                return Err(Error::Handler("redirect to another URI than the redirect URI".into()));
            }
            Ok(CallbackParams::from_url(location))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_parsing() {
        let p = CallbackParams::from_url(
            "http://127.0.0.1:1/callback?code=abc%2F1&state=s+1&iss=https%3A%2F%2Fas&code=2",
        );
        assert_eq!(p.code.as_deref(), Some("abc/1"));
        assert_eq!(p.state.as_deref(), Some("s 1"));
        assert_eq!(p.iss.as_deref(), Some("https://as"));
        assert!(!format!("{p:?}").contains("abc"));
        let p =
            CallbackParams::from_url("/callback?error=access_denied&error_description=no&state=x");
        assert_eq!(p.error.as_deref(), Some("access_denied"));
        assert_eq!(p.code, None);
    }
}
