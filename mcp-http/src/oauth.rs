//! OAuth through `mcp-auth`: the fetcher it talks through, and the options a
//! host sets.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use mcp_auth::{
    AuthorizationHandler, BoxFuture, FetchError, HeadlessHandler, HttpFetch, MAX_BODY, OAuthClient,
    OAuthConfig, TokenStore,
};

use crate::conn::{self, Pool, ReadError};
use crate::error::chain;

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
/// bodies capped at [`MAX_BODY`], each exchange bounded by
/// [`OAUTH_FETCH_TIMEOUT`], nothing added to the requests).
#[derive(Clone)]
pub struct OAuthOptions {
    /// The configuration; its `server_url` is replaced with the endpoint
    /// URL the client connects to.
    pub config: OAuthConfig,
    /// Who completes the user's part.
    pub handler: OAuthHandler,
    /// Where tokens are kept (`None`: in memory, for this client only).
    pub store: Option<Arc<dyn TokenStore>>,
}

impl fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("grant", &self.config.grant)
            .field("client_name", &self.config.client_metadata.client_name)
            .field("handler", &self.handler)
            .field("store", &self.store)
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
        OAuthOptions { config, handler: OAuthHandler::None, store: None }
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

/// `mcp-auth`'s door to the network: the client's pool, nothing added to
/// the request, no redirect followed, the body capped, the exchange
/// bounded.
#[derive(Clone)]
pub(crate) struct Fetcher {
    pub(crate) pool: Pool,
    pub(crate) timeout: Duration,
}

impl fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fetcher").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Fetcher {
    async fn exchange(
        &self,
        req: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, FetchError> {
        let (parts, body) = req.into_parts();
        let req = http::Request::from_parts(parts, Full::new(body));
        let resp = self.pool.request(req).await.map_err(|e| FetchError::Connect(chain(&e)))?;
        let (parts, body) = resp.into_parts();
        let bytes = conn::read_limited(body, MAX_BODY).await.map_err(|e| match e {
            ReadError::TooLarge => FetchError::BodyTooLarge,
            ReadError::Io(reason) => FetchError::Other(reason),
        })?;
        Ok(http::Response::from_parts(parts, bytes))
    }
}

impl HttpFetch for Fetcher {
    fn fetch(
        &self,
        req: http::Request<Bytes>,
    ) -> BoxFuture<'_, Result<http::Response<Bytes>, FetchError>> {
        Box::pin(async move {
            match tokio::time::timeout(self.timeout, self.exchange(req)).await {
                Ok(r) => r,
                Err(_) => Err(FetchError::Timeout),
            }
        })
    }
}
