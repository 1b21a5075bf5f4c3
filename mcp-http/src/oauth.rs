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
use crate::guard::{AddressPolicy, Guard};

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

/// `mcp-auth`'s door to the network: a pool of its own whose resolver is
/// guarded (the client's pool, when it goes through a proxy), nothing added
/// to the request, no redirect followed, the body capped, the exchange
/// bounded.
#[derive(Clone)]
pub(crate) struct Fetcher {
    pub(crate) pool: Pool,
    pub(crate) timeout: Duration,
    /// The SSRF guard (`None`: [`AddressPolicy::AllowAll`]).
    pub(crate) guard: Option<Guard>,
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
        if let Some(guard) = &self.guard {
            guard.check_uri(req.uri()).await.map_err(|r| {
                tracing::warn!(address = %r.address, class = %r.class, "an OAuth request was refused by the SSRF guard");
                FetchError::Refused { address: r.address, class: r.class }
            })?;
        }
        let (parts, body) = req.into_parts();
        let req = http::Request::from_parts(parts, Full::new(body));
        let resp = self.pool.request(req).await.map_err(|e| match crate::guard::refusal(&e) {
            Some(r) => {
                tracing::warn!(address = %r.address, class = %r.class, "an OAuth request was refused by the SSRF guard: its host resolves to a forbidden address");
                FetchError::Refused { address: r.address, class: r.class }
            }
            None => FetchError::Connect(chain(&e)),
        })?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HttpOptions;
    use mcp_auth::AddressClass;

    /// A name that resolves to loopback, for a server that is not on
    /// loopback: refused in the resolver, and no connection is made.
    #[tokio::test]
    async fn a_name_that_resolves_to_a_refused_address_is_never_connected_to() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let endpoint: http::Uri = "https://203.0.113.9/mcp".parse().unwrap();
        let guard = Guard::new(AddressPolicy::SameNetwork, &endpoint, false);
        let pool = conn::build_pool(&HttpOptions::new("t"), None, guard.as_ref()).unwrap();
        let fetcher = Fetcher { pool, timeout: Duration::from_secs(5), guard };
        let req = http::Request::get(format!("http://localhost:{port}/.well-known/x"))
            .body(Bytes::new())
            .unwrap();
        let err = fetcher.fetch(req).await.expect_err("refused");
        assert!(
            matches!(err, FetchError::Refused { class: AddressClass::Loopback, address } if address.is_loopback()),
            "{err:?}"
        );
        let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
        assert!(accepted.is_err(), "a connection was made");

        // The same fetch for a server on loopback goes through.
        let local: http::Uri = format!("http://127.0.0.1:{port}/mcp").parse().unwrap();
        let guard = Guard::new(AddressPolicy::SameNetwork, &local, false);
        let pool = conn::build_pool(&HttpOptions::new("t"), None, guard.as_ref()).unwrap();
        let fetcher = Fetcher { pool, timeout: Duration::from_secs(5), guard };
        let req =
            http::Request::get(format!("http://localhost:{port}/x")).body(Bytes::new()).unwrap();
        let serve = async {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buf).await;
            let reply = b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n";
            tokio::io::AsyncWriteExt::write_all(&mut stream, reply).await.unwrap();
        };
        let (resp, ()) = tokio::join!(fetcher.fetch(req), serve);
        assert_eq!(resp.expect("allowed").status(), http::StatusCode::NO_CONTENT);
    }
}
