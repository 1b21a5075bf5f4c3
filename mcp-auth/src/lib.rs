//! The OAuth 2.1 client of the Model Context Protocol authorization
//! specification (2025-11-25, with the 2025-03-26 fallbacks), sans-IO.
//!
//! Its one job: given an MCP server URL and the server's `401`/`403`
//! challenges, obtain, keep, refresh and step up the access token to send
//! as `Authorization: Bearer`, or DPoP-bound (RFC 9449) as
//! `Authorization: DPoP` with a proof for each request.
//!
//! What it never does: open a socket, resolve a name, follow a redirect or
//! pick a TLS stack. Every request (metadata, registration, token) is built
//! as an [`http::Request`] and handed to an [`HttpFetch`] that the HTTP
//! transport implements; every answer comes back as an
//! [`http::Response`]. The only exception is the optional loopback
//! redirect listener (feature `loopback`). It never logs a token, a secret,
//! a code or a verifier, and its errors name endpoints by scheme and
//! authority only.
//!
//! # The flow
//!
//! ```text
//!  401 + WWW-Authenticate ──► discovery ──► registration ──► authorization ──► token
//!  (resource_metadata,        PRM (RFC 9728)   pre-registered   PKCE S256, state,   code + verifier,
//!   scope)                    AS metadata      CIMD / DCR       resource, scope     resource, client auth
//!                             (RFC 8414/OIDC)
//!  before each request ──► proactive refresh     401 ──► PRM again; refresh once, else re-authorize
//!  403 insufficient_scope ──► re-authorize with held ∪ challenged scopes (≤ 3 per request)
//! ```
//!
//! - Discovery ([`discovery`]): the challenge's `resource_metadata`, else
//!   `/.well-known/oauth-protected-resource/<path>` then the root; the
//!   metadata's `resource` must identify the MCP server
//!   ([`url::resource_matches`]) or nothing else happens; authorization
//!   server metadata in the spec's order
//!   ([`url::authorization_server_metadata_urls`]) with `issuer` checked;
//!   for 2025-03-26 servers, metadata at the origin root, else `/authorize`,
//!   `/token`, `/register`.
//! - Registration: pre-registered credentials, else a Client ID Metadata
//!   Document URL when the server supports them, else Dynamic Client
//!   Registration; the token endpoint auth method the registration returns
//!   is honoured (`client_secret_basic`, `client_secret_post`, `none`).
//! - Authorization code with PKCE S256 (refused when the server does not
//!   list S256), a random `state` checked on return, RFC 9207 `iss` checked,
//!   RFC 8707 `resource` on the authorization and token requests exactly as
//!   the metadata gives it.
//! - Client credentials with a secret or `private_key_jwt` (ES256, RS256),
//!   and cross-app access (SEP-990: ID token, then ID-JAG at the identity
//!   provider, then a JWT bearer grant), and workload identity (SEP-1933:
//!   an assertion the host supplies through an [`AssertionSource`],
//!   presented as an RFC 7523 JWT bearer grant).
//! - Tokens kept per server and issuer in a [`TokenStore`]
//!   ([`MemoryTokenStore`], [`FileTokenStore`]: atomic writes, `0600`;
//!   [`KeychainTokenStore`]: the OS keychain, chosen with [`StoreKind`]
//!   and [`choose_store`], entries moved with [`migrate`]).
//! - DPoP (RFC 9449, SEP-1932; [`DpopMode`]): when the MCP server requires
//!   it (a `DPoP` challenge, or `dpop_bound_access_tokens_required`), or
//!   always when configured, an ES256 key kept with the tokens in the
//!   store, a proof on every token request and, through
//!   [`OAuthClient::dpop_proof`], on every request to the MCP server;
//!   `use_dpop_nonce` from either server answered by one retry with the
//!   nonce.
//! - Authorization servers as they are ([`ProviderQuirks`]): `resource`
//!   left out or replaced, the metadata at a configured URL, extra
//!   authorization parameters (`prompt`, `audience`), fixed scopes; and
//!   (feature `loopback`) one exact redirect URI for a pre-registered
//!   client.
//! - Authorization-server migration (SEP-2352): a 401 that refuses a token
//!   reads the protected resource metadata again; a new issuer means a new
//!   registration, and nothing obtained from the old issuer (tokens,
//!   client id and secret) is sent to the new one.
//!
//! # The transport's side
//!
//! ```text
//! let mut auth = oauth.prepare().await;            // before each request
//! loop {
//!     send(request, auth.header(), oauth.dpop_proof(&auth, method, url)?);
//!     oauth.observe_response(status, headers);   // DPoP nonces and requirement
//!     401 => oauth.on_unauthorized(&mut auth, challenge.as_ref()).await?,
//!     403 insufficient_scope => oauth.on_insufficient_scope(&mut auth, &challenge).await?,
//!     _ => break,
//! }
//! ```
//!
//! # A CLI-style login
//!
//! ```no_run
//! # #[cfg(feature = "loopback")]
//! # async fn login(fetch: std::sync::Arc<dyn mcp_auth::HttpFetch>) -> Result<(), mcp_auth::Error> {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mcp_auth::{FileTokenStore, OAuthClient, OAuthConfig, loopback::LoopbackHandler};
//!
//! // `fetch` is the HTTP transport's `HttpFetch` (mcp-http provides one).
//! let handler = LoopbackHandler::bind(Duration::from_secs(300))
//!     .await?
//!     .on_url(|url| {
//!         // A CLI prints the URL (or opens a browser).
//!         eprintln!("Open this URL to log in:\n  {url}");
//!     });
//! let config = OAuthConfig::new("https://mcp.example.com/mcp", "my-cli");
//! let client = OAuthClient::new(config, fetch)?
//!     .with_handler(Arc::new(handler))
//!     .with_store(Arc::new(FileTokenStore::new("/home/me/.config/my-cli/tokens")));
//! let _token = client.authorize(None).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Grants
//!
//! Each grant is a way of filling an [`OAuthConfig`]; the client is driven
//! the same way whatever the grant (by the transport on a 401, or at once
//! with [`OAuthClient::authorize`]). Workload identity and DPoP have their
//! examples at [`OAuthConfig::with_workload_identity`] and
//! [`OAuthConfig::with_dpop`].
//!
//! **Authorization code, pre-registered client.** The authorization server
//! already knows the client: no registration is attempted, and the
//! credentials are never taken to another authorization server
//! ([`Error::AuthorizationServerChanged`]).
//!
//! ```
//! use mcp_auth::{ClientRegistration, OAuthConfig, TokenEndpointAuthMethod};
//!
//! // A public client (PKCE is its proof) ...
//! let public = OAuthConfig::new("https://mcp.example.com/mcp", "my-host")
//!     .with_pre_registered(ClientRegistration::public("my-host"));
//! // ... or a confidential one, its secret sent as HTTP Basic.
//! let secret = std::env::var("MY_HOST_CLIENT_SECRET").unwrap_or_default();
//! let confidential = OAuthConfig::new("https://mcp.example.com/mcp", "my-host")
//!     .with_pre_registered(ClientRegistration::confidential(
//!         "my-host",
//!         secret,
//!         TokenEndpointAuthMethod::ClientSecretBasic,
//!     ));
//! # let _ = (public, confidential);
//! ```
//!
//! **Authorization code, Client ID Metadata Document.** The host serves a
//! document about itself at an https URL and uses that URL as its
//! `client_id` with every authorization server that lists
//! `client_id_metadata_document_supported`; with the others it falls back
//! to Dynamic Client Registration.
//!
//! ```
//! use mcp_auth::{OAuthConfig, client_id_metadata_document};
//!
//! let url = "https://host.example.com/oauth/client.json";
//! let config =
//!     OAuthConfig::new("https://mcp.example.com/mcp", "My Host").with_client_metadata_url(url)?;
//! // What the host serves at `url`. (RFC 8252 §7.3: an authorization
//! // server lets a loopback redirect URI come with any port.)
//! let document = client_id_metadata_document(
//!     &config.client_metadata,
//!     &["http://127.0.0.1/callback".to_owned()],
//! )?;
//! assert_eq!(document["client_id"], url);
//! assert_eq!(document["token_endpoint_auth_method"], "none");
//! # Ok::<(), mcp_auth::Error>(())
//! ```
//!
//! **Client credentials.** A machine client with no user: a secret, or a
//! key the authorization server holds the public half of
//! (`private_key_jwt`, ES256 or RS256). No handler is needed; an expired
//! token is simply requested again.
//!
//! ```no_run
//! # async fn run(fetch: std::sync::Arc<dyn mcp_auth::HttpFetch>) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_auth::{ClientRegistration, JwtAlgorithm, OAuthClient, OAuthConfig, PrivateKeyJwt};
//!
//! let pem = std::fs::read_to_string("/etc/billing-job/client-key.pem")?;
//! let config = OAuthConfig::new("https://mcp.example.com/mcp", "billing-job")
//!     .with_client_credentials(ClientRegistration::private_key_jwt("billing-job"))
//!     .with_signing_key(PrivateKeyJwt::from_pem(&pem, JwtAlgorithm::Es256)?.with_key_id("k1"))
//!     .with_scopes(["invoices:read"]);
//! // `fetch` is the HTTP transport's `HttpFetch` (mcp-http provides one).
//! let client = OAuthClient::new(config, fetch)?;
//! let _token = client.authorize(None).await?;
//! # Ok(()) }
//! ```
//!
//! **Cross-app access / enterprise-managed authorization** (SEP-990). The
//! user signed in to the host through the enterprise identity provider;
//! the host exchanges that ID token there for an ID-JAG naming the MCP
//! server's authorization server, and redeems it there as a JWT bearer
//! grant with its pre-registered client. No browser, no consent screen:
//! the enterprise's policy decides.
//!
//! ```no_run
//! # async fn run(fetch: std::sync::Arc<dyn mcp_auth::HttpFetch>, id_token: String) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_auth::{
//!     ClientRegistration, IdentityProvider, OAuthClient, OAuthConfig, TokenEndpointAuthMethod,
//! };
//!
//! // `id_token`: from the host's own OpenID Connect sign-in.
//! let idp = IdentityProvider::new("https://idp.example.com/oauth2/token", id_token, "my-host")
//!     .with_client_secret(std::env::var("MY_HOST_IDP_SECRET")?);
//! let client = ClientRegistration::confidential(
//!     "my-host",
//!     std::env::var("MY_HOST_CLIENT_SECRET")?,
//!     TokenEndpointAuthMethod::ClientSecretBasic,
//! );
//! let config = OAuthConfig::new("https://mcp.example.com/mcp", "my-host")
//!     .with_cross_app_access(client, idp);
//! let client = OAuthClient::new(config, fetch)?;
//! let _token = client.authorize(None).await?;
//! # Ok(()) }
//! ```
//!
//! # Optional features
//!
//! - `loopback`: `loopback::LoopbackHandler`, a one-shot
//!   `http://127.0.0.1:<port>/callback` listener on tokio.
//! - `keychain`: `OsKeychain`, the OS keychain (macOS Keychain, Windows
//!   Credential Manager, the Secret Service on Linux and the BSDs) through
//!   the `keyring` crate, behind [`KeychainTokenStore::open`]. Without it
//!   the keychain is [`KeychainError::Absent`] and [`StoreKind::Auto`]
//!   falls back to the files. [`KeychainTokenStore`] over a host's own
//!   [`KeychainBackend`], [`choose_store`] and [`migrate`] need no feature.

#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

mod client;
pub mod discovery;
mod dpop;
mod error;
mod fetch;
mod handler;
mod jwt;
pub mod keychain;
#[cfg(feature = "loopback")]
pub mod loopback;
mod pkce;
mod quirks;
mod registration;
pub mod scope;
mod store;
mod token;
pub mod url;
mod workload;
mod xaa;

pub use client::{
    GrantKind, MAX_AUTHORIZATIONS_PER_REQUEST, MAX_STEP_UPS, OAuthClient, OAuthConfig, RequestAuth,
};
pub use discovery::{
    AuthorizationServerMetadata, Discovery, DiscoveryMode, ProtectedResourceMetadata,
};
pub use dpop::{
    DPOP, DPOP_ALG, DPOP_NONCE, DpopKey, DpopMode, USE_DPOP_NONCE, access_token_hash,
    find_challenge,
};
pub use error::Error;
pub use fetch::{AddressClass, BoxFuture, FetchError, HttpFetch, MAX_BODY};
pub use handler::{AuthorizationHandler, AuthorizationRequest, CallbackParams, HeadlessHandler};
pub use jwt::{CLIENT_ASSERTION_TYPE, JwtAlgorithm, PrivateKeyJwt};
#[cfg(feature = "keychain")]
pub use keychain::OsKeychain;
pub use keychain::{
    ChosenStore, KeychainBackend, KeychainError, KeychainTokenStore, Migration, StoreKind,
    UnknownStoreKind, choose_store, choose_store_with, migrate,
};
pub use mcp_sse::www_authenticate::BearerChallenge;
pub use pkce::{Pkce, s256_challenge, supports_s256};
pub use quirks::{ProviderQuirks, ResourceParam};
pub use registration::{
    ClientMetadata, application_type, check_metadata_url, client_id_metadata_document,
    parse_registration_response, preferred_auth_method, register, registration_body,
};
pub use store::{FileTokenStore, MemoryTokenStore, StoreKey, StoredAuth, TokenStore};
pub use token::{
    AccessToken, ClientRegistration, ClientSecret, RefreshToken, TokenEndpointAuthMethod, TokenSet,
    TokenType, parse_token_response,
};
pub use workload::{AssertionProvider, AssertionSource, MAX_ASSERTION};
pub use xaa::{
    ID_JAG_TYPE, ID_TOKEN_TYPE, IdentityProvider, JWT_BEARER_GRANT, TOKEN_EXCHANGE_GRANT,
};

/// The README's examples, compiled as doc tests (the login needs the
/// loopback listener).
#[cfg(all(doctest, feature = "loopback"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
