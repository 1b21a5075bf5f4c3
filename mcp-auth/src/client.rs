//! The orchestrator: one [`OAuthClient`] per MCP server, driven by the HTTP
//! transport on 401 and 403 and before each request.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use http::HeaderValue;
use mcp_sse::www_authenticate::{self, BearerChallenge};

use crate::discovery::{
    AuthorizationServerMetadata, Discovery, discover_at, fetch_authorization_server_metadata,
};
use crate::dpop::{
    DPOP, DPOP_NONCE, DpopKey, DpopMode, USE_DPOP_NONCE, access_token_hash, alg_allowed,
};
use crate::error::Error;
use crate::fetch::{FormPost, HttpFetch, form_post};
use crate::handler::{AuthorizationHandler, AuthorizationRequest};
use crate::jwt::PrivateKeyJwt;
use crate::pkce::{Pkce, constant_time_eq, random_b64, supports_s256};
use crate::quirks::ProviderQuirks;
use crate::registration::{ClientMetadata, register};
use crate::scope::{covers, initial_scopes, join, step_up_scopes};
use crate::store::{MemoryTokenStore, StoreKey, StoredAuth, TokenStore};
use crate::token::{
    AccessToken, ClientRegistration, DpopCall, Grant, TokenCall, TokenSet, TokenType, client_auth,
    exchange, post_with_dpop,
};
use crate::url::{
    append_query, is_loopback_host, iss_matches, parse_url, redact, require_secure,
    resource_matches, same_origin,
};
use crate::workload::AssertionSource;
use crate::xaa::{IdentityProvider, request_id_jag};

/// Step-up authorizations allowed for one request after 403
/// `insufficient_scope`.
pub const MAX_STEP_UPS: u8 = 3;
/// Full authorizations (interactive or client credentials) allowed for one
/// request, whatever triggered them.
pub const MAX_AUTHORIZATIONS_PER_REQUEST: u8 = 3;
/// 401 answers one request may recover from (a refresh, then a full
/// authorization).
const MAX_UNAUTHORIZED_PER_REQUEST: u8 = 3;

/// How the client obtains tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrantKind {
    /// Authorization code with PKCE, through an [`AuthorizationHandler`]
    /// (the user's flow).
    AuthorizationCode,
    /// Client credentials (a machine client; needs a pre-registered client
    /// with a secret or a signing key).
    ClientCredentials,
    /// Cross-app access (SEP-990): the user's ID token exchanged at their
    /// identity provider for an ID-JAG, redeemed as a JWT bearer grant by
    /// the pre-registered client.
    CrossAppAccess,
    /// Workload identity (SEP-1933): an assertion the host supplies
    /// ([`AssertionSource`]) presented as an RFC 7523 JWT bearer grant by
    /// the pre-registered client.
    WorkloadIdentity,
}

/// What the host configures for one OAuth-protected MCP server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// The MCP server URL (the transport's endpoint).
    pub server_url: String,
    /// What the client says about itself (name, optional Client ID
    /// Metadata Document URL).
    pub client_metadata: ClientMetadata,
    /// Pre-registered client credentials, used first when present.
    pub pre_registered: Option<ClientRegistration>,
    /// The grant.
    pub grant: GrantKind,
    /// The key for `private_key_jwt`.
    pub signing_key: Option<Arc<PrivateKeyJwt>>,
    /// Scopes to ask for on the first authorization when the server's
    /// `WWW-Authenticate` challenge names none, instead of every scope of
    /// its protected resource metadata's `scopes_supported`. Default: none
    /// (the MCP specification's scope selection strategy). A step-up after
    /// `insufficient_scope` still adds what the server asks for.
    pub scopes: Vec<String>,
    /// Ask for `offline_access` (refresh tokens) when the authorization
    /// server lists it. Default: true.
    pub offline_access: bool,
    /// Refresh this long before the access token expires. Default: 60 s.
    pub refresh_skew: Duration,
    /// The identity provider, for [`GrantKind::CrossAppAccess`].
    pub identity_provider: Option<IdentityProvider>,
    /// Where the workload's assertion comes from, for
    /// [`GrantKind::WorkloadIdentity`].
    pub assertion: Option<AssertionSource>,
    /// When tokens are DPoP-bound (RFC 9449). Default:
    /// [`DpopMode::WhenRequired`].
    pub dpop: DpopMode,
    /// Which account's tokens (a label such as `work`; `None`: the default
    /// account): kept apart in the store, so one server can be used as
    /// several users.
    pub account: Option<String>,
    /// What this authorization server needs beyond the specification
    /// (`resource` left out or replaced, a metadata URL, more
    /// authorization parameters, fixed scopes). Default: nothing.
    pub quirks: ProviderQuirks,
}

impl OAuthConfig {
    /// An authorization-code configuration for `server_url` with a client
    /// name.
    pub fn new(server_url: impl Into<String>, client_name: impl Into<String>) -> Self {
        OAuthConfig {
            server_url: server_url.into(),
            client_metadata: ClientMetadata::new(client_name),
            pre_registered: None,
            grant: GrantKind::AuthorizationCode,
            signing_key: None,
            scopes: Vec::new(),
            offline_access: true,
            refresh_skew: Duration::from_secs(60),
            identity_provider: None,
            assertion: None,
            dpop: DpopMode::WhenRequired,
            quirks: ProviderQuirks::default(),
            account: None,
        }
    }

    /// Uses the tokens of `account` (see [`account`](Self::account)).
    pub fn with_account(mut self, account: impl Into<String>) -> Self {
        self.account = Some(account.into());
        self
    }

    /// Sets the [`quirks`](Self::quirks) of the authorization server.
    pub fn with_quirks(mut self, quirks: ProviderQuirks) -> Self {
        self.quirks = quirks;
        self
    }

    /// When to use DPoP (see [`DpopMode`]).
    ///
    /// ```
    /// use mcp_auth::{DpopMode, OAuthConfig};
    ///
    /// // Every token DPoP-bound, whatever the MCP server asks.
    /// let config = OAuthConfig::new("https://mcp.example.com/mcp", "my-host")
    ///     .with_dpop(DpopMode::Always);
    /// # let _ = config;
    /// ```
    pub fn with_dpop(mut self, mode: DpopMode) -> Self {
        self.dpop = mode;
        self
    }

    /// Uses these pre-registered client credentials.
    pub fn with_pre_registered(mut self, client: ClientRegistration) -> Self {
        self.pre_registered = Some(client);
        self
    }

    /// Uses the client credentials grant with this client (a secret, or
    /// `private_key_jwt` with [`Self::with_signing_key`]).
    pub fn with_client_credentials(mut self, client: ClientRegistration) -> Self {
        self.pre_registered = Some(client);
        self.grant = GrantKind::ClientCredentials;
        self
    }

    /// Uses cross-app access (SEP-990) with this client (registered with
    /// the MCP server's authorization server) and the user's identity
    /// provider.
    pub fn with_cross_app_access(
        mut self,
        client: ClientRegistration,
        idp: IdentityProvider,
    ) -> Self {
        self.pre_registered = Some(client);
        self.identity_provider = Some(idp);
        self.grant = GrantKind::CrossAppAccess;
        self
    }

    /// Uses workload identity (SEP-1933): `client` (usually public, its
    /// `client_id` only) presents the assertion `source` hands out as an
    /// RFC 7523 JWT bearer grant.
    ///
    /// ```
    /// use mcp_auth::{AssertionSource, ClientRegistration, OAuthConfig};
    ///
    /// let config = OAuthConfig::new("https://mcp.example.com/mcp", "my-agent")
    ///     .with_workload_identity(
    ///         ClientRegistration::public("my-workload"),
    ///         AssertionSource::File("/var/run/secrets/tokens/mcp".into()),
    ///     );
    /// # let _ = config;
    /// ```
    pub fn with_workload_identity(
        mut self,
        client: ClientRegistration,
        source: AssertionSource,
    ) -> Self {
        self.pre_registered = Some(client);
        self.assertion = Some(source);
        self.grant = GrantKind::WorkloadIdentity;
        self
    }

    /// The key for `private_key_jwt`.
    pub fn with_signing_key(mut self, key: PrivateKeyJwt) -> Self {
        self.signing_key = Some(Arc::new(key));
        self
    }

    /// The Client ID Metadata Document URL the host serves (https, with a
    /// path).
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Result<Self, Error> {
        self.client_metadata = self.client_metadata.with_metadata_url(url)?;
        Ok(self)
    }

    /// Scopes to ask for when the server's challenge names none (see
    /// [`OAuthConfig::scopes`]).
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Whether to ask for `offline_access` when offered.
    pub fn with_offline_access(mut self, yes: bool) -> Self {
        self.offline_access = yes;
        self
    }
}

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

    /// The `DPoP` header for one request to the MCP server carrying `req`'s
    /// token (`None` for a Bearer token): a fresh proof for `method` and
    /// `url`, bound to the token, with the server's nonce when it gave one.
    pub fn dpop_proof(
        &self,
        req: &RequestAuth,
        method: &str,
        url: &str,
    ) -> Result<Option<HeaderValue>, Error> {
        let Some(ath) = &req.ath else { return Ok(None) };
        let (key, nonce) = {
            let st = self.state();
            (st.dpop_key.clone(), st.resource_nonce.clone())
        };
        let key = key.ok_or(Error::InvalidCredentials("a DPoP-bound token without its key"))?;
        let proof = key.proof_with_ath(method, url, Some(ath), nonce.as_deref(), self.now())?;
        let mut v = HeaderValue::try_from(proof)
            .map_err(|_| Error::InvalidCredentials("a DPoP proof does not fit a header"))?;
        v.set_sensitive(true);
        Ok(Some(v))
    }

    fn dpop_call<'a>(&'a self, key: &'a DpopKey) -> DpopCall<'a> {
        DpopCall { key, nonce: &self.as_nonce }
    }

    /// The DPoP key for a token request to `disc`'s authorization server:
    /// the one held (its tokens are bound to it), else a new one when DPoP
    /// is to be used ([`OAuthConfig::dpop`]), else none.
    fn dpop_key(&self, disc: &Discovery) -> Result<Option<Arc<DpopKey>>, Error> {
        let mut st = self.state();
        if let Some(k) = &st.dpop_key {
            return Ok(Some(k.clone()));
        }
        let required = st.dpop_required
            || disc
                .protected_resource
                .as_ref()
                .is_some_and(|p| p.dpop_bound_access_tokens_required);
        let allowed = alg_allowed(disc.metadata.dpop_signing_alg_values_supported.as_deref());
        let wanted = match self.config.dpop {
            DpopMode::Never => false,
            DpopMode::Always => allowed,
            DpopMode::WhenRequired if required && !allowed => {
                return Err(Error::document(
                    "authorization server metadata",
                    &disc.metadata.issuer,
                    "the MCP server requires DPoP but dpop_signing_alg_values_supported does not list ES256",
                ));
            }
            DpopMode::WhenRequired => required,
        };
        if !wanted {
            return Ok(None);
        }
        let key = Arc::new(DpopKey::generate()?);
        tracing::debug!(jkt = %key.thumbprint(), "DPoP key created");
        st.dpop_key = Some(key.clone());
        Ok(Some(key))
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

    /// Revokes the held (or stored) tokens at the authorization server's
    /// RFC 7009 revocation endpoint, the refresh token first, then the
    /// access token, with the client's authentication (and, for DPoP-bound
    /// tokens, a proof of their key); runs discovery first when none ran
    /// (no credentials sent). When the MCP server cannot say who its
    /// authorization server is (unreachable, or without usable metadata),
    /// the tokens stored for it are revoked at the issuer kept with them
    /// (its metadata read from there). `Ok(false)` when there is nothing to
    /// revoke, the server offers no revocation endpoint, or it cannot revoke
    /// one of the tokens (`unsupported_token_type`, as for self-contained
    /// JWT access tokens, which live until they expire: the others are
    /// revoked all the same); `Ok(true)` when every token was revoked. The tokens are kept: call
    /// [`logout`](Self::logout) after (whatever this returned).
    pub async fn revoke(&self) -> Result<bool, Error> {
        let _flow = self.flow.lock().await;
        let disc = match self.ensure_discovery(None, false).await {
            Ok(disc) => disc,
            Err(e) => {
                tracing::debug!(error = %e, "no discovery; revoking what is stored for the server");
                return self.revoke_stored(None).await?.ok_or(e);
            }
        };
        let key = self.key_of(&disc);
        self.load_stored(&key)?;
        let (client, tokens, dpop_key) = {
            let st = self.state();
            let client = self.config.pre_registered.clone().or_else(|| st.client.clone());
            (client, st.tokens.clone(), st.dpop_key.clone())
        };
        let Some(tokens) = tokens else {
            // None under the issuer found now (a server without metadata
            // gets a default one): those kept under the issuer they came from.
            return Ok(self.revoke_stored(Some(&key)).await?.unwrap_or(false));
        };
        let Some(client) = client else { return Ok(false) };
        self.revoke_at(&disc.metadata, &client, &tokens, dpop_key.as_deref()).await
    }

    /// The store's entries for this server and account whatever their
    /// issuer, found without asking it: those whose resource identifies
    /// the server URL.
    fn stored_keys(&self) -> Result<Vec<StoreKey>, Error> {
        let mut keys: Vec<StoreKey> = self
            .store
            .keys()?
            .into_iter()
            .filter(|k| resource_matches(&k.resource, &self.config.server_url))
            .filter(|k| k.account == self.config.account)
            .collect();
        keys.sort_by(|a, b| (&a.resource, &a.issuer).cmp(&(&b.resource, &b.issuer)));
        Ok(keys)
    }

    /// Revokes the tokens stored for this server under any key but
    /// `except`, each at the issuer kept with it. `None` when none is
    /// stored.
    async fn revoke_stored(&self, except: Option<&StoreKey>) -> Result<Option<bool>, Error> {
        let mut outcome = None;
        for key in self.stored_keys()? {
            if Some(&key) == except {
                continue;
            }
            let Some(stored) = self.store.load(&key)? else { continue };
            let Some(tokens) = stored.tokens else { continue };
            // The client the tokens were obtained with, at that issuer.
            let Some(client) = stored.client.or_else(|| self.config.pre_registered.clone()) else {
                continue;
            };
            let metadata = fetch_authorization_server_metadata(&*self.fetch, &key.issuer).await?;
            let revoked =
                self.revoke_at(&metadata, &client, &tokens, stored.dpop_key.as_ref()).await?;
            outcome = Some(outcome.unwrap_or(true) && revoked);
        }
        Ok(outcome)
    }

    /// Revokes `tokens` at `metadata`'s revocation endpoint.
    async fn revoke_at(
        &self,
        metadata: &AuthorizationServerMetadata,
        client: &ClientRegistration,
        tokens: &TokenSet,
        dpop_key: Option<&DpopKey>,
    ) -> Result<bool, Error> {
        let Some(endpoint) = metadata.revocation_endpoint.as_deref() else {
            tracing::debug!("the authorization server offers no token revocation");
            return Ok(false);
        };
        let mut list = Vec::with_capacity(2);
        if let Some(rt) = &tokens.refresh_token {
            list.push((rt.secret(), "refresh_token"));
        }
        list.push((tokens.access_token.secret(), "access_token"));
        // DPoP-bound tokens are revoked with a proof of their key, as they
        // were obtained (and a nonce when the server asks for one).
        let dpop = match tokens.token_type {
            TokenType::Dpop => dpop_key.map(|key| self.dpop_call(key)),
            _ => None,
        };
        let mut every = true;
        for (token, hint) in list {
            let build = || {
                let mut params: Vec<(&'static str, String)> =
                    vec![("token", token.to_owned()), ("token_type_hint", hint.to_owned())];
                let basic = client_auth(
                    client,
                    self.config.signing_key.as_deref(),
                    &metadata.issuer,
                    self.now(),
                    &mut params,
                )?;
                form_post(FormPost { url: endpoint, params, basic })
            };
            // RFC 7009 §2.2: 200 also for a token that was already invalid.
            let names = ("revocation endpoint", "revocation");
            match post_with_dpop(&*self.fetch, names, endpoint, dpop.as_ref(), self.now(), build)
                .await
            {
                Ok(_) => tracing::debug!(hint, "token revoked"),
                // RFC 7009 §2.2.1: this kind of token cannot be revoked
                // there (a self-contained JWT access token lives until it
                // expires); the others still are.
                Err(Error::OAuth { error, .. }) if error == "unsupported_token_type" => {
                    tracing::debug!(hint, "the server cannot revoke this kind of token");
                    every = false;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(every)
    }

    /// Forgets the tokens of this server (memory and store), keeping the
    /// client registrations: those of the last discovery's issuer, and
    /// those stored for the server under any other issuer (so a logout
    /// needs no answer from the server).
    pub fn logout(&self) -> Result<(), Error> {
        let discovered = {
            let mut st = self.state();
            st.tokens = None;
            st.header = None;
            st.dpop_key = None;
            st.generation += 1;
            st.discovery.as_ref().map(|d| self.key_of(d))
        };
        let mut keys = self.stored_keys()?;
        if let Some(key) = discovered.filter(|k| !keys.contains(k)) {
            keys.push(key);
        }
        for key in keys {
            if let Some(stored) = self.store.load(&key)? {
                let value = StoredAuth { client: stored.client, tokens: None, dpop_key: None };
                self.store.save(&key, &value)?;
            }
        }
        Ok(())
    }

    // ----- the flow (called with the flow lock held) -----

    /// The discovery to use: the one held, unless the challenge names
    /// another metadata URL or `again` asks for a fresh look (a refused
    /// token). When the issuer changed, nothing obtained from the old one
    /// is kept: not the tokens, not the client registration, in memory or
    /// in the store (SEP-2352); pre-registered credentials belong to one
    /// authorization server, so a change is an error for them.
    async fn ensure_discovery(
        &self,
        challenge: Option<&BearerChallenge>,
        again: bool,
    ) -> Result<Discovery, Error> {
        let wanted = challenge.and_then(|c| c.resource_metadata.clone());
        if !again {
            let st = self.state();
            if let Some(d) = &st.discovery
                && (wanted.is_none() || wanted == st.prm_url)
            {
                return Ok(d.clone());
            }
        }
        let metadata_url = self.config.quirks.metadata_url.as_deref();
        let d = discover_at(&*self.fetch, &self.config.server_url, challenge, metadata_url).await?;
        tracing::debug!(issuer = %redact(&d.issuer), mode = ?d.mode, "discovered authorization server");
        let old = self.state().discovery.clone();
        let changed =
            old.as_ref().filter(|old| old.issuer != d.issuer || old.resource != d.resource);
        if let Some(old) = changed {
            if old.issuer != d.issuer && self.config.pre_registered.is_some() {
                return Err(Error::AuthorizationServerChanged {
                    from: redact(&old.issuer),
                    to: redact(&d.issuer),
                });
            }
            tracing::debug!(
                from = %redact(&old.issuer),
                to = %redact(&d.issuer),
                "the authorization server changed; forgetting what the previous one issued"
            );
            if old.issuer != d.issuer {
                self.store.remove(&self.key_of(old))?;
            }
        }
        let mut st = self.state();
        if old.is_none() || changed.is_some() {
            // Never send a token from another authorization server.
            st.tokens = None;
            st.client = None;
            st.dpop_key = None;
            *self.as_nonce.lock().unwrap_or_else(|p| p.into_inner()) = None;
            if st.header.take().is_some() {
                st.generation += 1;
            }
        }
        st.discovery = Some(d.clone());
        st.prm_url = wanted;
        Ok(d)
    }

    fn load_stored(&self, key: &StoreKey) -> Result<(), Error> {
        let need = {
            let st = self.state();
            st.tokens.is_none() || st.client.is_none()
        };
        if !need {
            return Ok(());
        }
        if let Some(stored) = self.store.load(key)? {
            let mut st = self.state();
            if st.client.is_none() {
                st.client = stored.client;
            }
            if st.tokens.is_none()
                && let Some(t) = stored.tokens
            {
                if t.token_type == TokenType::Dpop && stored.dpop_key.is_none() {
                    // Bound to a key that is gone: useless.
                    return Ok(());
                }
                st.header = t.header_value().ok();
                st.tokens = Some(t);
                st.generation += 1;
                if let Some(k) = stored.dpop_key {
                    st.dpop_key = Some(Arc::new(k));
                }
            }
        }
        Ok(())
    }

    /// The store key of this discovery, for the configured account.
    fn key_of(&self, d: &Discovery) -> StoreKey {
        StoreKey::new(d.resource.clone(), d.issuer.clone())
            .with_account(self.config.account.clone())
    }

    fn save(&self, key: &StoreKey) -> Result<(), Error> {
        let value = {
            let st = self.state();
            StoredAuth {
                client: st.client.clone(),
                tokens: st.tokens.clone(),
                dpop_key: st.dpop_key.as_deref().cloned(),
            }
        };
        self.store.save(key, &value)
    }

    fn set_tokens(&self, tokens: Option<TokenSet>) -> Result<(), Error> {
        let header = tokens.as_ref().map(TokenSet::header_value).transpose()?;
        let mut st = self.state();
        st.tokens = tokens;
        st.header = header;
        st.generation += 1;
        Ok(())
    }

    /// Refreshes (or re-runs client credentials). `Ok(false)` when there is
    /// nothing to refresh with.
    async fn renew(&self) -> Result<bool, Error> {
        let (disc, client, tokens) = {
            let st = self.state();
            (st.discovery.clone(), st.client.clone(), st.tokens.clone())
        };
        let Some(disc) = disc else { return Ok(false) };
        let key = self.key_of(&disc);
        if self.config.grant != GrantKind::AuthorizationCode {
            let scopes = tokens.map(|t| t.scopes).unwrap_or_default();
            self.machine_grant(&disc, &scopes).await?;
            self.save(&key)?;
            return Ok(true);
        }
        let (Some(client), Some(tokens)) = (client, tokens) else { return Ok(false) };
        let Some(refresh) = tokens.refresh_token.clone() else { return Ok(false) };
        // A DPoP-bound refresh token is refreshed with the key it is bound to.
        let dpop = self.state().dpop_key.clone();
        let call = TokenCall {
            metadata: &disc.metadata,
            client: &client,
            signer: self.config.signing_key.as_deref(),
            resource: self.config.quirks.resource.resolve(&disc.resource),
            scopes: &tokens.scopes,
            now: self.now(),
            dpop: dpop.as_deref().map(|key| self.dpop_call(key)),
        };
        match exchange(&*self.fetch, &call, &Grant::RefreshToken(&refresh)).await {
            Ok(new) => {
                tracing::debug!("refreshed access token");
                self.set_tokens(Some(new))?;
                self.save(&key)?;
                Ok(true)
            }
            Err(e) => {
                if e.is_invalid_grant() {
                    tracing::debug!("refresh token refused; dropping tokens");
                    self.set_tokens(None)?;
                    self.save(&key)?;
                }
                Err(e)
            }
        }
    }

    async fn run(
        &self,
        challenge: Option<&BearerChallenge>,
        mode: Mode,
        allow_authorize: bool,
        rediscover: bool,
    ) -> Result<Outcome, Error> {
        let disc = self.ensure_discovery(challenge, rediscover).await?;
        let key = self.key_of(&disc);
        self.load_stored(&key)?;
        let now = self.now();
        let (valid, refreshable) = {
            let st = self.state();
            match &st.tokens {
                Some(t) => {
                    (!t.expires_within(now, self.config.refresh_skew), t.refresh_token.is_some())
                }
                None => (false, false),
            }
        };
        let try_refresh = match &mode {
            Mode::Reuse if valid => return Ok(Outcome::Reused),
            Mode::Reuse | Mode::Rejected => refreshable,
            Mode::Authorize | Mode::StepUp(_) => false,
        };
        // The machine grants are run again rather than refreshed (below).
        if try_refresh && self.config.grant == GrantKind::AuthorizationCode {
            match self.renew().await {
                Ok(true) => return Ok(Outcome::Refreshed),
                Ok(false) => {}
                // `invalid_grant`: tokens dropped; start over once, below.
                Err(e) if e.is_invalid_grant() => {}
                Err(e) => return Err(e),
            }
        }
        if !allow_authorize {
            return Err(Error::Unauthorized);
        }
        let scopes = match mode {
            Mode::StepUp(s) => s,
            _ => {
                let offline = self.config.offline_access && disc.metadata.offers_offline_access();
                let challenged = challenge.and_then(|c| c.scope.as_deref());
                let overridden = self.config.quirks.scopes_override.as_deref();
                initial_scopes(
                    overridden.or(challenged),
                    &self.config.scopes,
                    disc.protected_resource.as_ref().and_then(|p| p.scopes_supported.as_deref()),
                    offline,
                )
            }
        };
        match self.config.grant {
            GrantKind::ClientCredentials
            | GrantKind::CrossAppAccess
            | GrantKind::WorkloadIdentity => self.machine_grant(&disc, &scopes).await?,
            GrantKind::AuthorizationCode => self.authorization_code(&disc, &key, &scopes).await?,
        }
        self.save(&key)?;
        Ok(Outcome::Authorized)
    }

    /// Client credentials, cross-app access or workload identity: no user
    /// interaction. A refusal is returned as it is: the grant is not tried
    /// again, nor another one.
    async fn machine_grant(&self, disc: &Discovery, scopes: &[String]) -> Result<(), Error> {
        let client = self
            .config
            .pre_registered
            .clone()
            .ok_or(Error::InvalidCredentials("this grant needs a pre-registered client"))?;
        // The JWT bearer grants' assertion: an ID-JAG from the identity
        // provider, or the workload's own.
        let assertion = match self.config.grant {
            GrantKind::CrossAppAccess => {
                let idp = self.config.identity_provider.as_ref().ok_or(
                    Error::InvalidCredentials("cross-app access needs an identity provider"),
                )?;
                Some(request_id_jag(&*self.fetch, idp, disc, scopes).await?)
            }
            GrantKind::WorkloadIdentity => {
                let source = self.config.assertion.as_ref().ok_or(Error::InvalidCredentials(
                    "workload identity needs an assertion source",
                ))?;
                Some(source.current().await?)
            }
            _ => None,
        };
        let dpop = self.dpop_key(disc)?;
        let call = TokenCall {
            metadata: &disc.metadata,
            client: &client,
            signer: self.config.signing_key.as_deref(),
            resource: self.config.quirks.resource.resolve(&disc.resource),
            scopes,
            now: self.now(),
            dpop: dpop.as_deref().map(|key| self.dpop_call(key)),
        };
        let grant = match &assertion {
            Some(a) => Grant::JwtBearer(a),
            None => Grant::ClientCredentials,
        };
        let tokens = exchange(&*self.fetch, &call, &grant).await?;
        tracing::debug!(
            grant = ?self.config.grant,
            method = client.auth_method.as_str(),
            "obtained token without user interaction"
        );
        self.state().client = Some(client);
        self.set_tokens(Some(tokens))
    }

    async fn ensure_client(
        &self,
        disc: &Discovery,
        key: &StoreKey,
        redirect_uri: &str,
        scopes: &[String],
    ) -> Result<ClientRegistration, Error> {
        if let Some(pre) = &self.config.pre_registered {
            return Ok(pre.clone());
        }
        if let Some(c) = self.state().client.clone() {
            return Ok(c);
        }
        let client = if let (true, Some(url)) = (
            disc.metadata.client_id_metadata_document_supported,
            self.config.client_metadata.metadata_url.as_deref(),
        ) {
            tracing::debug!("using the client id metadata document URL as client_id");
            ClientRegistration::public(url)
        } else if disc.metadata.registration_endpoint.is_some() {
            register(
                &*self.fetch,
                &disc.metadata,
                &self.config.client_metadata,
                &[redirect_uri.to_owned()],
                scopes,
            )
            .await?
        } else {
            return Err(Error::NoRegistrationMethod);
        };
        self.state().client = Some(client.clone());
        self.save(key)?;
        Ok(client)
    }

    async fn authorization_code(
        &self,
        disc: &Discovery,
        key: &StoreKey,
        scopes: &[String],
    ) -> Result<(), Error> {
        if !supports_s256(disc.metadata.code_challenge_methods_supported.as_deref()) {
            return Err(Error::PkceNotSupported);
        }
        let handler = self
            .handler
            .clone()
            .ok_or_else(|| Error::Handler("no authorization handler configured".into()))?;
        let redirect_uri = handler.redirect_uri();
        check_redirect_uri(&redirect_uri)?;
        let endpoint = disc.metadata.authorization_endpoint()?;
        require_secure("authorization endpoint", endpoint)?;
        let client = self.ensure_client(disc, key, &redirect_uri, scopes).await?;

        let pkce = Pkce::generate()?;
        let state = random_b64(24)?;
        let scope = join(scopes);
        let mut params: Vec<(&str, &str)> = vec![
            ("response_type", "code"),
            ("client_id", &client.client_id),
            ("redirect_uri", &redirect_uri),
            ("code_challenge", pkce.challenge()),
            ("code_challenge_method", pkce.method()),
            ("state", &state),
        ];
        if let Some(resource) = self.config.quirks.resource.resolve(&disc.resource) {
            params.push(("resource", resource));
        }
        if let Some(s) = &scope {
            params.push(("scope", s));
        }
        for (name, value) in &self.config.quirks.authorization_params {
            params.push((name, value));
        }
        let request = AuthorizationRequest {
            url: append_query(endpoint, params),
            redirect_uri: redirect_uri.clone(),
        };
        tracing::debug!(endpoint = %redact(endpoint), "sending the user to the authorization endpoint");
        let callback = handler.authorize(&request).await?;

        match &callback.state {
            Some(s) if constant_time_eq(s, &state) => {}
            _ => return Err(Error::StateMismatch),
        }
        match &callback.iss {
            Some(iss) if !iss_matches(iss, &disc.metadata.issuer) => {
                return Err(Error::IssMismatch);
            }
            None if disc.metadata.authorization_response_iss_parameter_supported => {
                return Err(Error::IssMismatch);
            }
            _ => {}
        }
        if let Some(error) = callback.error {
            return Err(Error::OAuth {
                endpoint: "authorization",
                error,
                description: callback.error_description.map(|d| d.chars().take(300).collect()),
            });
        }
        let code = callback.code.filter(|c| !c.is_empty()).ok_or(Error::MissingCode)?;
        let dpop = self.dpop_key(disc)?;
        let call = TokenCall {
            metadata: &disc.metadata,
            client: &client,
            signer: self.config.signing_key.as_deref(),
            resource: self.config.quirks.resource.resolve(&disc.resource),
            scopes,
            now: self.now(),
            dpop: dpop.as_deref().map(|key| self.dpop_call(key)),
        };
        let grant = Grant::AuthorizationCode {
            code: &code,
            redirect_uri: &redirect_uri,
            code_verifier: pkce.verifier(),
        };
        let tokens = exchange(&*self.fetch, &call, &grant).await?;
        tracing::debug!(scopes = %tokens.scopes.join(" "), "obtained token with authorization code");
        self.set_tokens(Some(tokens))
    }
}

/// A redirect URI must be `https`, or `http` on a loopback host.
fn check_redirect_uri(uri: &str) -> Result<(), Error> {
    let u = parse_url("redirect", uri)?;
    let https = u.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case("https"));
    if https || u.host().is_some_and(is_loopback_host) {
        Ok(())
    } else {
        Err(Error::InsecureUrl { what: "redirect", endpoint: redact(uri) })
    }
}
