//! How a server's configuration becomes a connected client: the
//! [`Connector`] trait and the built-in [`DefaultConnector`] (spawn a
//! stdio server, connect to an HTTP one, log in and out of OAuth).

use std::fmt;
#[cfg(feature = "http")]
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "stdio")]
use mcp_client_stdio::{StdioOptions, StdioTransport};
#[cfg(feature = "http")]
use mcp_http::mcp_auth::TokenStore;
#[cfg(feature = "http")]
use mcp_http::{HttpTransport, OAuthHandler};
#[cfg(any(feature = "stdio", feature = "http"))]
use mcp_peer::Client;
use mcp_proto::client::{BoxFuture, Handlers};
use mcp_proto::types::LoggingLevel;

#[cfg(feature = "http")]
use crate::config::AuthConfig;
use crate::config::{ClientIdentity, ServerConfig, TransportConfig};
use crate::error::Error;
#[cfg(any(feature = "stdio", feature = "http"))]
use crate::error::TransportError;
#[cfg(feature = "http")]
use crate::registry::CLOSE_TIMEOUT;
#[cfg(any(feature = "stdio", feature = "http"))]
use crate::transport::BoxTransport;
use crate::transport::ServerClient;

/// Builds the client of one server (a [`ServerClient`]: the one client over
/// a boxed transport). The registry calls it lazily, on first use of a
/// server (and again after the connection was lost); the registry runs the
/// handshake itself.
///
/// [`DefaultConnector`] builds the built-in transports (those of the
/// enabled features); a host with a transport of its own implements this.
pub trait Connector: Send + Sync + fmt::Debug {
    /// A client of `server`, not yet initialized.
    fn connect<'a>(
        &'a self,
        server: &'a ServerConfig,
        identity: &'a ClientIdentity,
    ) -> BoxFuture<'a, Result<ServerClient, Error>>;

    /// Runs an explicit OAuth login for `server` (see [`Registry::login`](crate::Registry::login)):
    /// `handler` completes the user's part (`None`: the connector's own).
    /// The default refuses with [`Error::OAuthUnavailable`]: a connector
    /// with OAuth support overrides it. Feature `http`.
    #[cfg(feature = "http")]
    fn login<'a>(
        &'a self,
        server: &'a ServerConfig,
        identity: &'a ClientIdentity,
        handler: Option<OAuthHandler>,
    ) -> BoxFuture<'a, Result<(), Error>> {
        let _ = (identity, handler);
        Box::pin(async move { Err(Error::OAuthUnavailable { server: server.name.clone() }) })
    }

    /// Runs an OAuth logout for `server` (see [`Registry::logout`](crate::Registry::logout)). The
    /// default refuses with [`Error::OAuthUnavailable`]. Feature `http`.
    #[cfg(feature = "http")]
    fn logout<'a>(
        &'a self,
        server: &'a ServerConfig,
        identity: &'a ClientIdentity,
    ) -> BoxFuture<'a, Result<Revocation, Error>> {
        let _ = identity;
        Box::pin(async move { Err(Error::OAuthUnavailable { server: server.name.clone() }) })
    }
}

/// What the authorization server said to a logout's revocation (RFC 7009).
/// The tokens are forgotten locally whatever it said. Feature `http`.
#[cfg(feature = "http")]
#[derive(Debug)]
#[non_exhaustive]
pub enum Revocation {
    /// The tokens were revoked at the authorization server.
    Revoked,
    /// Nothing to revoke, the server offers no revocation endpoint, or it
    /// cannot revoke one of the tokens (a self-contained JWT access token,
    /// which lives until it expires; the refresh token was revoked).
    NotOffered,
    /// The revocation failed (the tokens may still be valid there until
    /// they expire).
    Failed(mcp_http::mcp_auth::Error),
}

/// The built-in transports: `mcp-stdio`'s `StdioTransport` for a command
/// (feature `stdio`), `mcp-http`'s `HttpTransport` for an endpoint (feature
/// `http`). A server whose transport's feature is off is
/// [`Error::TransportUnavailable`], before anything is spawned or sent.
///
/// OAuth servers (`auth = { kind = "oauth" }`) get [`HttpOptions::oauth`](mcp_http::HttpOptions::oauth):
/// the configured `client_id` (with its secret: `client_secret_basic`) as a
/// pre-registered client, the `client_metadata_url` as the Client ID
/// Metadata Document URL, the client name from the [`ClientIdentity`], and
/// the tokens in [`token_store`](Self::token_store). Who completes the
/// user's part is [`oauth_handler`](Self::oauth_handler): by default
/// nobody, so a server that needs a new authorization in the middle of a
/// call fails with [`Error::LoginRequired`] instead of prompting; the host
/// runs [`Registry::login`](crate::Registry::login) with a handler first.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DefaultConnector {
    /// The host's name, in the guidance shown when a command is missing.
    pub host_name: String,
    /// Whether the PATH of spawned servers is rebuilt with `mcp-spawn-env`
    /// (the login shell's PATH and the usual tool directories; default
    /// true).
    pub discover_path: bool,
    /// With `discover_path`, a file that keeps the login shell's PATH
    /// between runs of the host (`None`, the default: the shell is probed
    /// once per process). See [`ProbeCache`](mcp_spawn_env::ProbeCache).
    pub path_cache: Option<mcp_spawn_env::ProbeCache>,
    /// The host's answers to server requests (roots, sampling,
    /// elicitation).
    pub handlers: Handlers,
    /// How long a stdio server may take to exit after its input is
    /// closed, and again after SIGTERM (`None`: the transport's default,
    /// 2 s). A one-shot command keeps it short, so a server that ignores
    /// the end of its input does not hold up every run.
    pub stdio_shutdown_grace: Option<Duration>,
    /// The server log level asked of stdio servers of the stateless era,
    /// in each request's `_meta` (`None`: none asked).
    pub stdio_log_level: Option<LoggingLevel>,
    /// Read each stdio server's stdout on a thread of its own
    /// (`mcp_client_stdio::StdioOptions::reader_thread`; `false` by
    /// default): for a host whose answers are mostly consumed
    /// where they are read (a bridge forwarding calls), not for one that
    /// awaits them.
    pub stdio_reader_thread: bool,
    /// Declare MCP Apps (the `io.modelcontextprotocol/ui` extension) to
    /// every server (`false` by default): a host that can show a server's
    /// HTML views says so, and servers may then offer tools with views and
    /// tools meant only for them (see
    /// [`RegistryOptions::app_only_tools`](crate::RegistryOptions::app_only_tools)).
    pub apps: bool,
    /// Declare the tasks extension (`io.modelcontextprotocol/tasks`,
    /// 2026-07-28) to every server (`false` by default): a stateless-era
    /// server may then answer a tool call with a task, which the client
    /// follows to its result (`tasks/get` at the interval the server
    /// suggests, its input requests answered by `handlers`).
    pub tasks: bool,
    /// Who completes the user's part of an OAuth authorization during
    /// normal use ([`OAuthHandler::None`] by default: stored tokens and
    /// refresh only, a needed login is [`Error::LoginRequired`]). With
    /// [`OAuthHandler::Headless`] and no redirect URI, the server's
    /// configured `redirect_uri` is used. Feature `http`.
    #[cfg(feature = "http")]
    pub oauth_handler: OAuthHandler,
    /// Where OAuth tokens are kept between runs. `None` (the default): a
    /// [`FileTokenStore`](mcp_http::mcp_auth::FileTokenStore) in [`default_token_dir`]`("mcp-registry")`, or in
    /// memory when no such directory can be found. Feature `http`.
    #[cfg(feature = "http")]
    pub token_store: Option<Arc<dyn TokenStore>>,
}

impl Default for DefaultConnector {
    fn default() -> Self {
        DefaultConnector {
            host_name: "this application".into(),
            discover_path: true,
            path_cache: None,
            handlers: Handlers::default(),
            stdio_shutdown_grace: None,
            stdio_log_level: None,
            stdio_reader_thread: false,
            apps: false,
            tasks: false,
            #[cfg(feature = "http")]
            oauth_handler: OAuthHandler::None,
            #[cfg(feature = "http")]
            token_store: None,
        }
    }
}

/// The directory where `app` keeps OAuth tokens by default:
/// `$XDG_DATA_HOME/<app>/oauth` when `XDG_DATA_HOME` is set (on every
/// platform, so tests and sandboxes can redirect it), else
/// `%APPDATA%\<app>\oauth` on Windows,
/// `~/Library/Application Support/<app>/oauth` on macOS and
/// `~/.local/share/<app>/oauth` elsewhere. `None` when neither the variable
/// nor a home directory is known. Feature `http`.
#[cfg(feature = "http")]
pub fn default_token_dir(app: &str) -> Option<std::path::PathBuf> {
    let base = crate::private_file::user_base_dir("XDG_DATA_HOME", "APPDATA", ".local/share")?;
    Some(base.join(app).join("oauth"))
}

/// Where OAuth tokens are kept, as `mcp_client.token_store` and
/// `mcp_client.keychain_service` say. Feature `http`; the keychain needs
/// feature `keychain` (without it, `keychain` fails and `auto` falls back
/// to the files, saying why).
#[cfg(feature = "http")]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenStoreConfig {
    /// `file` (the default), `keychain` or `auto`.
    pub kind: mcp_http::mcp_auth::StoreKind,
    /// The keychain service name the entries are kept under; `None`: the
    /// application's name.
    pub keychain_service: Option<String>,
}

#[cfg(feature = "http")]
impl TokenStoreConfig {
    /// The keychain service name for `app`.
    pub fn service<'a>(&'a self, app: &'a str) -> &'a str {
        self.keychain_service.as_deref().unwrap_or(app)
    }

    /// The file store of `app` ([`default_token_dir`]), or a memory store
    /// when no such directory can be found.
    pub fn file_store(app: &str) -> Arc<dyn TokenStore> {
        match default_token_dir(app) {
            Some(dir) => Arc::new(mcp_http::mcp_auth::FileTokenStore::new(dir)),
            None => Arc::new(mcp_http::mcp_auth::MemoryTokenStore::new()),
        }
    }

    /// The store this asks for, for `app` (a host sets it as
    /// [`DefaultConnector::token_store`]): `file` is
    /// [`file_store`](Self::file_store); `keychain` the OS keychain under
    /// [`service`](Self::service), or its error (locked, absent, denied);
    /// `auto` the keychain, else the file store with a warning that says
    /// why ([`ChosenStore::fallback`](mcp_http::mcp_auth::ChosenStore::fallback)).
    pub fn open(
        &self,
        app: &str,
    ) -> Result<mcp_http::mcp_auth::ChosenStore, mcp_http::mcp_auth::Error> {
        mcp_http::mcp_auth::choose_store(self.kind, Self::file_store(app), self.service(app))
    }
}

#[cfg(feature = "http")]
impl DefaultConnector {
    /// The HTTP client (not yet connected) of a server that uses OAuth, for
    /// a login or a logout; `NotOAuth` for any other server.
    fn oauth_client(
        &self,
        server: &ServerConfig,
        identity: &ClientIdentity,
        handler: Option<OAuthHandler>,
    ) -> Result<mcp_http::HttpClient, Error> {
        let TransportConfig::Http { endpoint, headers, auth: auth @ AuthConfig::OAuth(_), .. } =
            &server.transport
        else {
            return Err(Error::NotOAuth { server: server.name.clone() });
        };
        let options = self.http_options(server, identity, headers, auth, handler)?;
        mcp_http::connect(endpoint, options)
            .map_err(|e| Error::Transport { server: server.name.clone(), source: e.into() })
    }
}

impl Connector for DefaultConnector {
    fn connect<'a>(
        &'a self,
        server: &'a ServerConfig,
        identity: &'a ClientIdentity,
    ) -> BoxFuture<'a, Result<ServerClient, Error>> {
        Box::pin(async move {
            #[cfg(any(feature = "stdio", feature = "http"))]
            let transport_error =
                |source: TransportError| Error::Transport { server: server.name.clone(), source };
            #[cfg(not(any(feature = "stdio", feature = "http")))]
            let _ = identity;
            match &server.transport {
                #[cfg(feature = "stdio")]
                TransportConfig::Stdio(command) => {
                    let mut options = StdioOptions::new(server.name.clone());
                    options.client_info = identity.to_implementation();
                    options.host_name = self.host_name.clone();
                    options.request_timeout = server.timeout;
                    options.discover_path = self.discover_path;
                    options.path_cache = self.path_cache.clone();
                    options.handlers = self.handlers.clone();
                    options.log_level = self.stdio_log_level.clone();
                    options.reader_thread = self.stdio_reader_thread;
                    crate::mapping::client_settings(&mut options, server, self.apps, self.tasks);
                    if let Some(grace) = self.stdio_shutdown_grace {
                        options.shutdown_grace = grace;
                    }
                    let session = options.client_options();
                    let transport = StdioTransport::spawn(command.clone(), options)
                        .await
                        .map_err(|e| transport_error(e.into()))?;
                    Ok(Client::new(Box::new(transport) as BoxTransport, session))
                }
                #[cfg(feature = "http")]
                TransportConfig::Http { endpoint, headers, auth, .. } => {
                    let options = self.http_options(server, identity, headers, auth, None)?;
                    let session = options.client_options();
                    let transport = HttpTransport::connect(endpoint, options)
                        .map_err(|e| transport_error(e.into()))?;
                    Ok(Client::new(Box::new(transport) as BoxTransport, session))
                }
                #[cfg(not(feature = "stdio"))]
                TransportConfig::Stdio(_) => Err(Error::TransportUnavailable {
                    server: server.name.clone(),
                    transport: "stdio",
                }),
                #[cfg(not(feature = "http"))]
                TransportConfig::Http { .. } => Err(Error::TransportUnavailable {
                    server: server.name.clone(),
                    transport: "http",
                }),
            }
        })
    }

    #[cfg(feature = "http")]
    fn login<'a>(
        &'a self,
        server: &'a ServerConfig,
        identity: &'a ClientIdentity,
        handler: Option<OAuthHandler>,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let client = self.oauth_client(server, identity, handler)?;
            let name = server.name.clone();
            // The handshake runs the flow on the server's own 401 (its
            // challenge names the metadata and the scope); a server that
            // let the handshake through without a token is asked through
            // the well-known metadata instead.
            let result = match client.initialize().await {
                Ok(_) => match client.transport().oauth() {
                    Some(oauth) if oauth.authorization_header().is_none() => oauth
                        .authorize(None)
                        .await
                        .map(drop)
                        .map_err(|source| Error::Login { server: name, source }),
                    _ => Ok(()),
                },
                Err(mcp_http::Error::Auth { source, .. }) => {
                    Err(Error::Login { server: name, source: *source })
                }
                Err(e) => Err(Error::Transport { server: name, source: e.into() }),
            };
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, client.close()).await;
            result
        })
    }

    #[cfg(feature = "http")]
    fn logout<'a>(
        &'a self,
        server: &'a ServerConfig,
        identity: &'a ClientIdentity,
    ) -> BoxFuture<'a, Result<Revocation, Error>> {
        Box::pin(async move {
            let client = self.oauth_client(server, identity, None)?;
            let Some(oauth) = client.transport().oauth().cloned() else {
                return Err(Error::NotOAuth { server: server.name.clone() });
            };
            let name = server.name.clone();
            // The handshake finds the authorization server as a login does,
            // from the server's own 401 (its challenge names the metadata);
            // without a handler it never asks the user, and its failure
            // (no usable token) does not stop the logout.
            let _ = client.initialize().await;
            // Revocation is best effort; forgetting the tokens is not.
            let revocation = match oauth.revoke().await {
                Ok(true) => Revocation::Revoked,
                Ok(false) => Revocation::NotOffered,
                Err(e) => Revocation::Failed(e),
            };
            // Even when neither the server nor its authorization server
            // answered, the tokens are forgotten: the store keeps the
            // issuer they came from, so they are found without discovery.
            oauth.logout().map_err(|source| Error::Logout { server: name, source })?;
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, client.close()).await;
            Ok(revocation)
        })
    }
}
