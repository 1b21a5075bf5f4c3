//! OAuth through `mcp-auth`: the options a host sets (the fetcher it talks
//! through is the request layer's).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthorizationHandler, HeadlessHandler, HttpFetch, OAuthClient, OAuthConfig, TokenStore,
};

use crate::guard::AddressPolicy;

/// The longest one OAuth exchange (metadata, registration, token) may take.
pub const OAUTH_FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// Who completes the user's part of the authorization code flow.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum OAuthHandler {
    /// Nobody: only stored tokens, refresh, and the machine grants (client
    /// credentials, cross-app access) work.
    #[default]
    None,
    /// The host's handler (a browser and a loopback listener, a printed
    /// URL, ...).
    Custom(Arc<dyn AuthorizationHandler>),
    /// [`HeadlessHandler`] over this client's connections, with this
    /// redirect URI (`None`: [`HeadlessHandler::DEFAULT_REDIRECT_URI`]):
    /// for tests and servers that approve at once.
    Headless(Option<String>),
}

/// OAuth for one MCP server (see [`HttpOptions::oauth`](crate::HttpOptions::oauth)).
///
/// The client builds an [`OAuthClient`] for its endpoint that talks through
/// the client's own connection pool ([`HttpFetch`]: no redirects followed,
/// bodies capped at [`MAX_BODY`](mcp_auth::MAX_BODY), each exchange bounded by
/// [`OAUTH_FETCH_TIMEOUT`], nothing added to the requests), behind an SSRF
/// guard ([`address_policy`](Self::address_policy)).
#[derive(Clone)]
pub struct OAuthOptions {
    /// The configuration; its `server_url` is replaced with the endpoint
    /// URL the client connects to.
    pub config: OAuthConfig,
    /// Who completes the user's part.
    pub handler: OAuthHandler,
    /// Where tokens are kept (`None`: in memory, for this client only).
    pub store: Option<Arc<dyn TokenStore>>,
    /// Which addresses the OAuth requests may reach (the SSRF guard):
    /// by default public ones, and the classes of the MCP server's own
    /// addresses, so metadata cannot send the client to a cloud metadata
    /// service (`169.254.169.254`), a private network or this machine
    /// unless the MCP server is there too. Checked on the resolved address
    /// the connection then goes to (redirects the headless handler follows
    /// included); a refusal is [`mcp_auth::FetchError::Refused`], inside
    /// [`mcp_auth::Error::Fetch`] with the redacted URL. Through a proxy,
    /// names are the proxy's to resolve: only addresses written in the URL
    /// are checked.
    pub address_policy: AddressPolicy,
}

impl fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("grant", &self.config.grant)
            .field("client_name", &self.config.client_metadata.client_name)
            .field("handler", &self.handler)
            .field("store", &self.store)
            .field("address_policy", &self.address_policy)
            .finish_non_exhaustive()
    }
}

impl OAuthOptions {
    /// The authorization code grant for a client called `client_name`, no
    /// handler yet, tokens in memory.
    pub fn new(client_name: impl Into<String>) -> Self {
        Self::from_config(OAuthConfig::new(String::new(), client_name))
    }

    /// Options from a full configuration (pre-registration, client
    /// credentials, cross-app access, CIMD URL, ...).
    pub fn from_config(config: OAuthConfig) -> Self {
        OAuthOptions {
            config,
            handler: OAuthHandler::None,
            store: None,
            address_policy: AddressPolicy::default(),
        }
    }

    /// Sets the [`address_policy`](Self::address_policy).
    pub fn with_address_policy(mut self, policy: AddressPolicy) -> Self {
        self.address_policy = policy;
        self
    }

    /// Sets the authorization handler.
    pub fn with_handler(mut self, handler: Arc<dyn AuthorizationHandler>) -> Self {
        self.handler = OAuthHandler::Custom(handler);
        self
    }

    /// Uses a [`HeadlessHandler`] over the client's own connections.
    pub fn headless(mut self) -> Self {
        self.handler = OAuthHandler::Headless(None);
        self
    }

    /// Sets the token store.
    pub fn with_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Builds the OAuth client of `url` over `fetch`.
    pub(crate) fn build(
        &self,
        url: &str,
        fetch: Arc<dyn HttpFetch>,
    ) -> Result<OAuthClient, mcp_auth::Error> {
        let mut config = self.config.clone();
        config.server_url = url.to_owned();
        let mut client = OAuthClient::new(config, fetch.clone())?;
        client = match &self.handler {
            OAuthHandler::None => client,
            OAuthHandler::Custom(h) => client.with_handler(h.clone()),
            OAuthHandler::Headless(uri) => {
                let h = match uri {
                    Some(uri) => HeadlessHandler::with_redirect_uri(fetch, uri.clone()),
                    None => HeadlessHandler::new(fetch),
                };
                client.with_handler(Arc::new(h))
            }
        };
        if let Some(store) = &self.store {
            client = client.with_store(store.clone());
        }
        Ok(client)
    }
}
