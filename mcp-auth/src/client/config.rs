//! What the host configures for one server: the grant and its options.

use std::sync::Arc;
use std::time::Duration;

use crate::dpop::DpopMode;
use crate::error::Error;
#[cfg(doc)]
use crate::handler::AuthorizationHandler;
use crate::jwt::PrivateKeyJwt;
use crate::quirks::ProviderQuirks;
use crate::registration::ClientMetadata;
use crate::token::ClientRegistration;
use crate::workload::AssertionSource;
use crate::xaa::IdentityProvider;

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
