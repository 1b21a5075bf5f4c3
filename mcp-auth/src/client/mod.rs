//! The orchestrator: one [`OAuthClient`] per MCP server, driven by the HTTP
//! transport on 401 and 403 and before each request.
//!
//! By job: this file holds the client, its state and the per-request
//! entry points (`prepare`, `on_unauthorized`, ...); `config.rs` what the
//! host configures; `tokens.rs` discovery, the stored tokens and refresh;
//! `grants.rs` obtaining tokens (the flow, the grants, registration);
//! `dpop.rs` DPoP proofs and keys; `revoke.rs` revocation and logout.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use http::HeaderValue;
use mcp_sse::www_authenticate::{self, BearerChallenge};

use crate::discovery::Discovery;
#[cfg(doc)]
use crate::dpop::DpopMode;
use crate::dpop::{DPOP, DPOP_NONCE, DpopKey, USE_DPOP_NONCE, access_token_hash};
use crate::error::Error;
use crate::fetch::HttpFetch;
use crate::handler::AuthorizationHandler;
use crate::scope::{covers, step_up_scopes};
use crate::store::{MemoryTokenStore, TokenStore};
use crate::token::{AccessToken, ClientRegistration, TokenSet, TokenType};
use crate::url::{parse_url, redact, require_secure, same_origin};

mod config;
mod dpop;
mod grants;
mod revoke;
mod tokens;

pub use config::{GrantKind, OAuthConfig};

/// Step-up authorizations allowed for one request after 403
/// `insufficient_scope`.
pub const MAX_STEP_UPS: u8 = 3;
/// Full authorizations (interactive or client credentials) allowed for one
/// request, whatever triggered them.
pub const MAX_AUTHORIZATIONS_PER_REQUEST: u8 = 3;
/// 401 answers one request may recover from (a refresh, then a full
/// authorization).
const MAX_UNAUTHORIZED_PER_REQUEST: u8 = 3;

/// The authorization state of one MCP request, kept by the transport for
/// the request's retries: the header to send and the bounded counters.
#[derive(Debug, Clone, Default)]
pub struct RequestAuth {
    header: Option<HeaderValue>,
    /// `ath` of a DPoP-bound token (its proofs name it).
    ath: Option<String>,
    nonce_retried: bool,
    generation: u64,
    unauthorized: u8,
    step_ups: u8,
    authorizations: u8,
    refreshed: bool,
    fresh: bool,
}

impl RequestAuth {
    /// The `Authorization` header to send, if a token is held.
    pub fn header(&self) -> Option<&HeaderValue> {
        self.header.as_ref()
    }

    /// Full authorizations run for this request so far.
    pub fn authorizations(&self) -> u8 {
        self.authorizations
    }

    /// Whether the token is DPoP-bound: every request that carries it also
    /// needs [`OAuthClient::dpop_proof`].
    pub fn is_dpop(&self) -> bool {
        self.ath.is_some()
    }
}

type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

#[derive(Default)]
struct State {
    discovery: Option<Discovery>,
    prm_url: Option<String>,
    client: Option<ClientRegistration>,
    tokens: Option<TokenSet>,
    header: Option<HeaderValue>,
    generation: u64,
    /// The DPoP key of this server and issuer, once DPoP is in use.
    dpop_key: Option<Arc<DpopKey>>,
    /// The MCP server challenged with the `DPoP` scheme only.
    dpop_required: bool,
    /// The MCP server's last DPoP nonce.
    resource_nonce: Option<String>,
}

enum Mode {
    /// No token was sent: use a stored one if valid, refresh an expired
    /// one, else authorize.
    Reuse,
    /// The token sent was refused: refresh it, else authorize.
    Rejected,
    /// Authorize anew.
    Authorize,
    /// Authorize with these scopes.
    StepUp(Vec<String>),
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Reused,
    Refreshed,
    Authorized,
}

/// The OAuth client of one MCP server.
///
/// The HTTP transport calls [`prepare`](Self::prepare) before each request
/// (proactive refresh; the header to send), and
/// [`on_unauthorized`](Self::on_unauthorized) or
/// [`on_insufficient_scope`](Self::on_insufficient_scope) when the server
/// answers 401 or 403 `insufficient_scope`, then retries with the new
/// [`RequestAuth::header`]. Only one flow runs at a time; concurrent
/// requests that hit 401 together share its result.
pub struct OAuthClient {
    config: OAuthConfig,
    fetch: Arc<dyn HttpFetch>,
    handler: Option<Arc<dyn AuthorizationHandler>>,
    store: Arc<dyn TokenStore>,
    clock: Clock,
    state: Mutex<State>,
    flow: futures_util::lock::Mutex<()>,
    /// The authorization server's last DPoP nonce.
    as_nonce: Mutex<Option<String>>,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthClient")
            .field("server", &redact(&self.config.server_url))
            .field("grant", &self.config.grant)
            .field("handler", &self.handler)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client for `config.server_url`, talking through `fetch`, with an
    /// in-memory token store and no authorization handler (set one with
    /// [`with_handler`](Self::with_handler) for the authorization code
    /// grant).
    pub fn new(config: OAuthConfig, fetch: Arc<dyn HttpFetch>) -> Result<Self, Error> {
        parse_url("MCP server", &config.server_url)?;
        require_secure("MCP server", &config.server_url)?;
        config.quirks.check()?;
        if config.grant != GrantKind::AuthorizationCode && config.pre_registered.is_none() {
            return Err(Error::InvalidCredentials("this grant needs a pre-registered client"));
        }
        if config.grant == GrantKind::CrossAppAccess && config.identity_provider.is_none() {
            return Err(Error::InvalidCredentials("cross-app access needs an identity provider"));
        }
        if config.grant == GrantKind::WorkloadIdentity && config.assertion.is_none() {
            return Err(Error::InvalidCredentials("workload identity needs an assertion source"));
        }
        Ok(OAuthClient {
            config,
            fetch,
            handler: None,
            store: Arc::new(MemoryTokenStore::new()),
            clock: Arc::new(SystemTime::now),
            state: Mutex::new(State::default()),
            flow: futures_util::lock::Mutex::new(()),
            as_nonce: Mutex::new(None),
        })
    }

    /// Sets the authorization handler (the user's part).
    pub fn with_handler(mut self, handler: Arc<dyn AuthorizationHandler>) -> Self {
        self.handler = Some(handler);
        self
    }

    /// Sets the token store.
    pub fn with_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// Sets the clock (tests use a virtual one).
    pub fn with_clock(mut self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> SystemTime {
        (self.clock)()
    }

    /// The `Authorization: Bearer` header for the current token, if any.
    /// Send it only to the MCP server (see [`applies_to`](Self::applies_to)).
    pub fn authorization_header(&self) -> Option<HeaderValue> {
        self.state().header.clone()
    }

    /// Whether `url` is on the MCP server's origin: the only place the
    /// token may be sent.
    pub fn applies_to(&self, url: &str) -> bool {
        same_origin(url, &self.config.server_url)
    }

    /// The result of the last discovery, if one ran.
    pub fn discovery(&self) -> Option<Discovery> {
        self.state().discovery.clone()
    }

    /// The granted scopes of the current token.
    pub fn granted_scopes(&self) -> Vec<String> {
        self.state().tokens.as_ref().map(|t| t.scopes.clone()).unwrap_or_default()
    }

    fn fill(&self, req: &mut RequestAuth) {
        let st = self.state();
        req.header = st.header.clone();
        req.ath = match (&st.header, &st.tokens) {
            (Some(_), Some(t)) if t.token_type == TokenType::Dpop => {
                Some(access_token_hash(t.access_token.secret()))
            }
            _ => None,
        };
        req.generation = st.generation;
    }

    /// Notes what a response of the MCP server says about DPoP: a nonce it
    /// hands out (`DPoP-Nonce`, kept for the next proofs), and a 401 that
    /// challenges with the `DPoP` scheme and not `Bearer` (the server
    /// requires DPoP; with [`DpopMode::WhenRequired`] the next token is
    /// DPoP-bound). Call it for every response from the MCP server's origin.
    pub fn observe_response(&self, status: u16, headers: &http::HeaderMap) {
        let nonce = headers
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
            .filter(|n| !n.is_empty() && n.len() <= 1024);
        let dpop_only = status == 401 && {
            let all = www_authenticate::parse_all(
                headers
                    .get_all(http::header::WWW_AUTHENTICATE)
                    .iter()
                    .filter_map(|v| v.to_str().ok()),
            );
            let has = |scheme: &str| all.iter().flatten().any(|c| c.is_scheme(scheme));
            has(DPOP) && !has("Bearer")
        };
        if nonce.is_none() && !dpop_only {
            return;
        }
        let mut st = self.state();
        if let Some(n) = nonce {
            st.resource_nonce = Some(n.to_owned());
        }
        if dpop_only && !st.dpop_required {
            tracing::debug!("the MCP server requires DPoP");
            st.dpop_required = true;
        }
    }

    /// Called before each request: refreshes a token that expires within
    /// the configured skew (or re-runs client credentials), and returns the
    /// request's authorization state. Never fails: when the refresh fails,
    /// the request goes out with what is held (or nothing) and a 401 runs
    /// the flow.
    pub async fn prepare(&self) -> RequestAuth {
        let mut req = RequestAuth::default();
        self.fill(&mut req);
        let now = self.now();
        let expiring = {
            let st = self.state();
            st.tokens.as_ref().is_some_and(|t| t.expires_within(now, self.config.refresh_skew))
        };
        if !expiring {
            return req;
        }
        let _flow = self.flow.lock().await;
        if self.state().generation != req.generation {
            self.fill(&mut req);
            return req;
        }
        match self.renew().await {
            Ok(true) => {}
            Ok(false) => {
                // Nothing to refresh with: drop an expired token so the
                // server's 401 starts the flow.
                let mut st = self.state();
                if st.tokens.as_ref().is_some_and(|t| t.expires_within(now, Duration::ZERO)) {
                    st.header = None;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "proactive token refresh failed");
                let mut st = self.state();
                if e.is_invalid_grant()
                    || st.tokens.as_ref().is_some_and(|t| t.expires_within(now, Duration::ZERO))
                {
                    st.header = None;
                }
            }
        }
        self.fill(&mut req);
        req
    }

    /// Obtains a token now (a CLI `login`, or the transport before the
    /// first request): the current one when valid, else a stored one, a
    /// refreshed one, or a new authorization. `challenge` is the 401's, if
    /// there was one.
    pub async fn authorize(
        &self,
        challenge: Option<&BearerChallenge>,
    ) -> Result<AccessToken, Error> {
        let _flow = self.flow.lock().await;
        let now = self.now();
        let valid = self
            .state()
            .tokens
            .as_ref()
            .is_some_and(|t| !t.expires_within(now, self.config.refresh_skew));
        if !valid {
            self.run(challenge, Mode::Reuse, true, false).await?;
        }
        self.state().tokens.as_ref().map(|t| t.access_token.clone()).ok_or(Error::Unauthorized)
    }

    /// Called on a 401: refreshes the refused token once, else (or when the
    /// refresh fails with `invalid_grant`) authorizes anew; a token that
    /// was obtained for this very request and still refused ends in
    /// [`Error::Unauthorized`]. On `Ok`, retry the request with
    /// [`RequestAuth::header`].
    pub async fn on_unauthorized(
        &self,
        req: &mut RequestAuth,
        challenge: Option<&BearerChallenge>,
    ) -> Result<(), Error> {
        if challenge.is_some_and(|c| c.error.as_deref() == Some(USE_DPOP_NONCE))
            && req.ath.is_some()
            && !req.nonce_retried
        {
            // The nonce came with the answer (see `observe_response`): the
            // same token again, with a new proof carrying it, once.
            tracing::debug!("the MCP server asked for a DPoP nonce; sending the request again");
            req.nonce_retried = true;
            return Ok(());
        }
        req.unauthorized += 1;
        if req.unauthorized > MAX_UNAUTHORIZED_PER_REQUEST || (req.fresh && req.header.is_some()) {
            return Err(Error::Unauthorized);
        }
        let _flow = self.flow.lock().await;
        if self.state().generation != req.generation {
            // Another request renewed the token meanwhile.
            self.fill(req);
            if req.header.is_some() {
                return Ok(());
            }
        }
        let mode = match (&req.header, req.refreshed) {
            (None, _) => Mode::Reuse,
            (Some(_), false) => Mode::Rejected,
            (Some(_), true) => Mode::Authorize,
        };
        let allow = req.authorizations < MAX_AUTHORIZATIONS_PER_REQUEST;
        // A refused token: the authorization server may have changed
        // (SEP-2352), so the protected resource metadata is read again.
        let rediscover = req.header.is_some();
        let outcome = self.run(challenge, mode, allow, rediscover).await?;
        match outcome {
            Outcome::Refreshed => req.refreshed = true,
            Outcome::Authorized => {
                req.authorizations += 1;
                req.fresh = true;
            }
            Outcome::Reused => {}
        }
        self.fill(req);
        Ok(())
    }

    /// Called on a 403 with `error="insufficient_scope"`: authorizes again
    /// with the union of the held and the challenged scopes, at most
    /// [`MAX_STEP_UPS`] times per request, and not again when the union
    /// adds nothing after a first try. On `Ok`, retry the request.
    pub async fn on_insufficient_scope(
        &self,
        req: &mut RequestAuth,
        challenge: &BearerChallenge,
    ) -> Result<(), Error> {
        req.step_ups += 1;
        let challenged = challenge.scope.clone().unwrap_or_default();
        let refused = || Error::InsufficientScope { scope: challenged.clone() };
        if req.step_ups > MAX_STEP_UPS || req.authorizations >= MAX_AUTHORIZATIONS_PER_REQUEST {
            return Err(refused());
        }
        let held = self.granted_scopes();
        let wanted = step_up_scopes(&held, &challenged);
        if req.step_ups > 1 && covers(&held, &wanted) {
            tracing::debug!(scope = %wanted.join(" "), "step-up would ask for nothing new; giving up");
            return Err(refused());
        }
        let _flow = self.flow.lock().await;
        if self.state().generation != req.generation && covers(&self.granted_scopes(), &wanted) {
            self.fill(req);
            return Ok(());
        }
        self.run(Some(challenge), Mode::StepUp(wanted), true, false).await?;
        req.authorizations += 1;
        req.fresh = true;
        self.fill(req);
        Ok(())
    }
}
