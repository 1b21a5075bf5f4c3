//! Sending one HTTP request: the OAuth token and its 401/403 rounds,
//! same-origin redirects, the pool, status checks; and a message POSTed
//! for a 2xx with nothing to read.

use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, HeaderName, WWW_AUTHENTICATE};
use http::{HeaderValue, Method, Response, StatusCode, Uri};
use hyper::body::{Body as _, Incoming};
use mcp_proto::jsonrpc::Message;
use mcp_sse::www_authenticate;

use crate::auth::StaticAuth;
use crate::conn::{self, ReadError};
use crate::endpoint::Endpoint;
use crate::error::{Error, chain};
use crate::wire::{self, MCP_METHOD};

use super::base::{Http, Snapshot};

/// The DPoP proof header (RFC 9449).
static DPOP: HeaderName = HeaderName::from_static("dpop");

/// Makes a DPoP proof for a request's method and URL (`None`: the token
/// is not DPoP-bound).
pub(crate) type Reprove<'a> =
    dyn Fn(&Method, &http::Uri) -> Result<Option<HeaderValue>, Error> + Send + Sync + 'a;

/// Sees each redirect's status and headers before it is followed.
pub(crate) type Observe<'a> = dyn Fn(u16, &http::HeaderMap) + Send + Sync + 'a;

/// The longest an error body is read for its excerpt.
pub(crate) const EXCERPT_WAIT: Duration = Duration::from_secs(2);
/// The most redirects followed in a row (with
/// [`HttpOptions::follow_redirects`](crate::HttpOptions::follow_redirects)).
pub(crate) const MAX_REDIRECTS: u32 = 5;
/// The most OAuth rounds (a 401 or 403 handled, the request sent again) for
/// one HTTP request; `mcp-auth`'s own per-request bounds stop sooner.
pub(crate) const MAX_AUTH_ROUNDS: u32 = 8;

impl Http {
    /// Sends a request with the OAuth token, when OAuth is configured: the
    /// token held (refreshed first when it is about to expire) goes on the
    /// request; a 401 runs [`on_unauthorized`](mcp_auth::OAuthClient::on_unauthorized),
    /// a 403 `insufficient_scope` runs
    /// [`on_insufficient_scope`](mcp_auth::OAuthClient::on_insufficient_scope),
    /// and the request is sent again, as often as `mcp-auth`'s per-request
    /// bounds allow (and never more than [`MAX_AUTH_ROUNDS`] times).
    /// Run-time headers go on first; a 401 or 403 gets fresh ones and the
    /// request once more (once per request).
    pub(crate) async fn send(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
    ) -> Result<Response<Incoming>, Error> {
        let Some(cache) = &self.run_time_headers else {
            return self.send_authorized(req, method).await;
        };
        Box::pin(self.send_sourced(req, method, cache)).await
    }

    /// [`send`](Self::send) with run-time headers.
    async fn send_sourced(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
        cache: &crate::header_source::HeaderCache,
    ) -> Result<Response<Incoming>, Error> {
        let endpoint = &self.endpoint.redacted;
        let headers = cache.current(false, endpoint).await?;
        let mut first = conn::copy_request(&req);
        crate::header_source::apply(&mut first, &headers);
        let resp = self.send_authorized(first, method).await?;
        if !matches!(resp.status(), StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            return Ok(resp);
        }
        tracing::debug!(endpoint = %endpoint, method, status = %resp.status(), "run-time headers refused; making them again");
        let body = resp.into_body();
        if !body.is_end_stream() {
            let _ = tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
        }
        let headers = cache.current(true, endpoint).await?;
        let mut again = req;
        crate::header_source::apply(&mut again, &headers);
        self.send_authorized(again, method).await
    }

    /// [`send`](Self::send) without the run-time headers: the OAuth rounds.
    async fn send_authorized(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
    ) -> Result<Response<Incoming>, Error> {
        let Some(oauth) = &self.oauth else {
            return self.send_redirects(req, method, None, None).await;
        };
        Box::pin(self.send_oauth(req, method, oauth)).await
    }

    /// [`send_authorized`](Self::send_authorized) with OAuth.
    async fn send_oauth(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
        oauth: &mcp_auth::OAuthClient,
    ) -> Result<Response<Incoming>, Error> {
        let mut auth = oauth.prepare().await;
        let applies = oauth.applies_to(&req.uri().to_string());
        let mut rounds = 0u32;
        let auth_error = |status: StatusCode, source: mcp_auth::Error| Error::Auth {
            endpoint: self.endpoint.redacted.clone(),
            method: method.into(),
            status,
            source: Box::new(source),
        };
        loop {
            let mut attempt = conn::copy_request(&req);
            if applies && let Some(header) = auth.header() {
                let mut header = header.clone();
                header.set_sensitive(true);
                attempt.headers_mut().insert(AUTHORIZATION, header);
                // A DPoP-bound token goes with a fresh proof of its key.
                let proof = oauth
                    .dpop_proof(&auth, attempt.method().as_str(), &attempt.uri().to_string())
                    .map_err(|e| auth_error(StatusCode::UNAUTHORIZED, e))?;
                if let Some(proof) = proof {
                    attempt.headers_mut().insert(DPOP.clone(), proof);
                }
            }
            // A redirect's `DPoP-Nonce` counts as much as any other's.
            let observe = |status: u16, headers: &http::HeaderMap| {
                oauth.observe_response(status, headers);
            };
            let observe: Option<&Observe<'_>> = if applies { Some(&observe) } else { None };
            let resp = if applies && auth.is_dpop() {
                // A proof names its request's URL: a followed redirect
                // needs a new one.
                let reprove = |m: &Method, uri: &http::Uri| {
                    oauth
                        .dpop_proof(&auth, m.as_str(), &uri.to_string())
                        .map_err(|e| auth_error(StatusCode::UNAUTHORIZED, e))
                };
                self.send_redirects(attempt, method, Some(&reprove), observe).await?
            } else {
                self.send_redirects(attempt, method, None, observe).await?
            };
            let status = resp.status();
            if applies {
                oauth.observe_response(status.as_u16(), resp.headers());
            }
            if !applies
                || rounds >= MAX_AUTH_ROUNDS
                || (status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN)
            {
                return Ok(resp);
            }
            // `Bearer`, or `DPoP` from a server that requires DPoP.
            let bearer = mcp_auth::find_challenge(
                resp.headers().get_all(WWW_AUTHENTICATE).iter().filter_map(|v| v.to_str().ok()),
            );
            let step_up = bearer.as_ref().filter(|b| b.is_insufficient_scope());
            if status == StatusCode::FORBIDDEN && step_up.is_none() {
                return Ok(resp);
            }
            // Read the refusal so its connection goes back to the pool.
            let body = resp.into_body();
            if !body.is_end_stream() {
                let _ =
                    tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
            }
            rounds += 1;
            let outcome = match step_up {
                Some(challenge) => {
                    tracing::debug!(endpoint = %self.endpoint.redacted, method, "403 insufficient_scope: stepping up the authorization");
                    oauth.on_insufficient_scope(&mut auth, challenge).await
                }
                None => {
                    tracing::debug!(endpoint = %self.endpoint.redacted, method, "401: running the OAuth flow");
                    oauth.on_unauthorized(&mut auth, bearer.as_ref()).await
                }
            };
            if let Err(source) = outcome {
                return Err(auth_error(status, source));
            }
        }
    }

    /// Sends a request; with [`HttpOptions::follow_redirects`](crate::HttpOptions::follow_redirects), follows
    /// same-origin 307 and 308 redirects (same method, body and headers), at
    /// most [`MAX_REDIRECTS`] times. A redirect elsewhere is an error: the
    /// credentials never leave the endpoint's origin. A request with a DPoP
    /// proof gets a new one from `reprove` for each redirect's target (a
    /// proof's `htu` is the URL it is sent to), after `observe` has seen
    /// the redirect (its `DPoP-Nonce` then goes in that proof).
    pub(crate) async fn send_redirects(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
        reprove: Option<&Reprove<'_>>,
        observe: Option<&Observe<'_>>,
    ) -> Result<Response<Incoming>, Error> {
        if !self.options.follow_redirects {
            return self.send_once(req, method).await;
        }
        Box::pin(self.follow(req, method, reprove, observe)).await
    }

    /// [`send_redirects`](Self::send_redirects) when redirects are followed.
    async fn follow(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
        reprove: Option<&Reprove<'_>>,
        observe: Option<&Observe<'_>>,
    ) -> Result<Response<Incoming>, Error> {
        let mut req = req;
        let mut hops = 0u32;
        loop {
            let mut again = conn::copy_request(&req);
            let resp = self.send_once(req, method).await?;
            let status = resp.status();
            if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT
            {
                return Ok(resp);
            }
            if let Some(observe) = observe {
                observe(status.as_u16(), resp.headers());
            }
            let refuse = |reason: String| Error::Redirect {
                endpoint: self.endpoint.redacted.clone(),
                method: method.into(),
                status,
                reason,
            };
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(refuse(format!("more than {MAX_REDIRECTS} redirects in a row")));
            }
            let location = resp
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| refuse("the redirect has no usable Location".into()))?;
            let target = crate::endpoint::resolve_same_origin(again.uri(), location)
                .map_err(|reason| refuse(format!("the redirect's Location: {reason}")))?;
            let target = self.with_auth_query(target).map_err(refuse)?;
            // Read the redirect's body so its connection goes back to the pool.
            let body = resp.into_body();
            if !body.is_end_stream() {
                let _ =
                    tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
            }
            tracing::debug!(endpoint = %self.endpoint.redacted, method, %status, hop = hops, "following a same-origin redirect");
            *again.uri_mut() = target;
            if let Some(reprove) = reprove
                && again.headers().contains_key(&DPOP)
            {
                match reprove(again.method(), again.uri())? {
                    Some(proof) => again.headers_mut().insert(DPOP.clone(), proof),
                    None => again.headers_mut().remove(&DPOP),
                };
            }
            req = again;
        }
    }

    /// A same-origin URI with the query-parameter credential added, unless
    /// it already carries it.
    fn with_auth_query(&self, uri: http::Uri) -> Result<http::Uri, String> {
        let StaticAuth::Query { name, value } = &self.options.auth else { return Ok(uri) };
        let pair = format!(
            "{}={}",
            crate::endpoint::percent_encode(name),
            crate::endpoint::percent_encode(value)
        );
        if uri.query().is_some_and(|q| q.split('&').any(|p| p == pair)) {
            return Ok(uri);
        }
        let e = Endpoint { uri, redacted: self.endpoint.redacted.clone() };
        Ok(e.with_query_param(name, value)?.uri)
    }

    pub(crate) async fn send_once(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
    ) -> Result<Response<Incoming>, Error> {
        self.pool.request(req).await.map_err(|e| Error::Connect {
            endpoint: self.endpoint.redacted.clone(),
            method: method.into(),
            reason: self.scrub(&chain(&e)),
            source: e.into_source(),
        })
    }

    /// [`send`](Self::send), bounded by the request timeout (for messages
    /// that are not requests, whose wait the core does not bound).
    pub(crate) async fn send_bounded(
        &self,
        req: http::Request<conn::Body>,
        method: &str,
    ) -> Result<Response<Incoming>, Error> {
        let timeout = self.options.request_timeout;
        match tokio::time::timeout(timeout, self.send(req, method)).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout {
                endpoint: self.endpoint.redacted.clone(),
                method: method.into(),
                after: timeout,
            }),
        }
    }

    /// Turns a non-2xx response into its error.
    pub(crate) async fn check_status(
        &self,
        resp: Response<Incoming>,
        method: &str,
        had_session: bool,
    ) -> Result<Response<Incoming>, Error> {
        if resp.status().is_success() {
            return Ok(resp);
        }
        // Boxed: reading a refusal's excerpt stays off a success's future.
        Box::pin(self.refused(resp, method, had_session)).await
    }

    /// [`check_status`](Self::check_status) for a status other than 2xx.
    async fn refused(
        &self,
        resp: Response<Incoming>,
        method: &str,
        had_session: bool,
    ) -> Result<Response<Incoming>, Error> {
        let status = resp.status();
        let endpoint = self.endpoint.redacted.clone();
        let method = method.to_owned();
        if status == StatusCode::NOT_FOUND && had_session {
            return Err(Error::SessionExpired { endpoint, method });
        }
        let values: Vec<&str> = resp
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        if status == StatusCode::UNAUTHORIZED {
            let challenges =
                www_authenticate::parse_all(values.iter().copied()).into_iter().flatten().collect();
            let bearer = www_authenticate::find_bearer(values.iter().copied()).map(Box::new);
            return Err(Error::Unauthorized { endpoint, method, challenges, bearer });
        }
        if status == StatusCode::FORBIDDEN
            && let Some(bearer) = www_authenticate::find_bearer(values.iter().copied())
            && bearer.is_insufficient_scope()
        {
            let challenges =
                www_authenticate::parse_all(values.iter().copied()).into_iter().flatten().collect();
            return Err(Error::InsufficientScope {
                endpoint,
                method,
                challenges,
                bearer: Box::new(bearer),
            });
        }
        let prefix = tokio::time::timeout(
            EXCERPT_WAIT,
            conn::read_prefix(resp.into_body(), wire::EXCERPT_BYTES + 1),
        )
        .await
        .unwrap_or_default();
        let body = self.scrub(&wire::excerpt(&prefix));
        Err(Error::Status { endpoint, method, status, body })
    }

    /// POSTs a notification or a response to `uri`; the server answers
    /// 202.
    pub(crate) async fn post_message(
        &self,
        uri: &Uri,
        message: &Message,
        snap: &Snapshot,
    ) -> Result<(), Error> {
        let label = message.method().unwrap_or("response");
        let req = self.build(
            Method::POST,
            uri,
            &self.post_headers,
            Bytes::from(message.to_vec()),
            snap,
            |h| {
                if let Some(m) = message.method() {
                    h.insert(MCP_METHOD.clone(), wire::method_value(m));
                }
            },
        );
        let resp = self.send_bounded(req, label).await?;
        let resp = self.check_status(resp, label, snap.session.is_some()).await?;
        let body = resp.into_body();
        if !body.is_end_stream() {
            // Read what a server sent anyway, so the connection is reused.
            let _ = tokio::time::timeout(EXCERPT_WAIT, conn::read_limited(body, 64 * 1024)).await;
        }
        Ok(())
    }

    pub(crate) fn invalid(&self, method: &str, reason: &str) -> Error {
        Error::InvalidResponse {
            endpoint: self.endpoint.redacted.clone(),
            method: method.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn read_error(&self, method: &str, e: ReadError) -> Error {
        match e {
            ReadError::TooLarge => Error::BodyTooLarge {
                endpoint: self.endpoint.redacted.clone(),
                method: method.into(),
                limit: self.options.max_body,
            },
            ReadError::Io(reason) => Error::Connect {
                endpoint: self.endpoint.redacted.clone(),
                method: method.into(),
                reason: self.scrub(&reason),
                source: None,
            },
        }
    }
}
