//! The registry: the declared servers, their lazy connections, the tool
//! policy in front of them.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

#[cfg(feature = "http")]
use base64::Engine as _;
use futures_util::StreamExt;
#[cfg(feature = "stdio")]
use mcp_client_stdio::{StdioOptions, StdioTransport};
#[cfg(feature = "http")]
use mcp_http::mcp_auth::{
    self, ClientRegistration, FileTokenStore, TokenEndpointAuthMethod, TokenStore,
};
#[cfg(feature = "http")]
use mcp_http::{
    HttpClient, HttpOptions, HttpTransport, OAuthHandler, OAuthOptions, ProxyConfig, StaticAuth,
};
#[cfg(any(feature = "stdio", feature = "http"))]
use mcp_peer::Client;
use mcp_peer::Subscription;
use mcp_proto::client::{BoxFuture, Handlers, RequestOptions};
use mcp_proto::types::{
    CallToolResult, Implementation, InitializeResult, JsonObject, LoggingLevel, SubscriptionFilter,
    Tool,
};
use mcp_proto::{Era, ProtocolVersion};

#[cfg(feature = "http")]
use crate::config::{AuthConfig, OAuthConfig};
use crate::config::{ClientIdentity, Config, ServerConfig, TransportConfig};
#[cfg(feature = "http")]
use crate::error::{ConfigError, Location};
use crate::error::{Error, TransportError};
use crate::pins::{MemoryPinStore, PinBook, PinPolicy, PinStore};
use crate::relay::{NOTIFICATION_EVENTS, NotificationEvent, Relay};
use crate::supervisor::{Health, HealthEvent, Supervision, WhileDown, back_off, supervise};
#[cfg(any(feature = "stdio", feature = "http"))]
use crate::transport::BoxTransport;
use crate::transport::ServerClient;
#[cfg(feature = "http")]
use crate::transport::{AuthorizationInfo, authorization_info};
use tokio::sync::{Notify, broadcast, watch};
use tokio::task::AbortHandle;

/// How long connecting may take beyond the server's request timeout (the
/// spawn, with its one-off PATH probe, or the TCP and TLS set-up).
const CONNECT_GRACE: Duration = Duration::from_secs(10);
/// How long closing one connection may take in [`Registry::close_all`].
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

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

    /// Runs an explicit OAuth login for `server` (see [`Registry::login`]):
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

    /// Runs an OAuth logout for `server` (see [`Registry::logout`]). The
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
    /// Nothing to revoke, or the server offers no revocation endpoint.
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
/// OAuth servers (`auth = { kind = "oauth" }`) get [`HttpOptions::oauth`]:
/// the configured `client_id` (with its secret: `client_secret_basic`) as a
/// pre-registered client, the `client_metadata_url` as the Client ID
/// Metadata Document URL, the client name from the [`ClientIdentity`], and
/// the tokens in [`token_store`](Self::token_store). Who completes the
/// user's part is [`oauth_handler`](Self::oauth_handler): by default
/// nobody, so a server that needs a new authorization in the middle of a
/// call fails with [`Error::LoginRequired`] instead of prompting; the host
/// runs [`Registry::login`] with a handler first.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DefaultConnector {
    /// The host's name, in the guidance shown when a command is missing.
    pub host_name: String,
    /// Whether the PATH of spawned servers is rebuilt with `mcp-spawn-env`
    /// (the login shell's PATH and the usual tool directories; default
    /// true).
    pub discover_path: bool,
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
    /// Who completes the user's part of an OAuth authorization during
    /// normal use ([`OAuthHandler::None`] by default: stored tokens and
    /// refresh only, a needed login is [`Error::LoginRequired`]). With
    /// [`OAuthHandler::Headless`] and no redirect URI, the server's
    /// configured `redirect_uri` is used. Feature `http`.
    #[cfg(feature = "http")]
    pub oauth_handler: OAuthHandler,
    /// Where OAuth tokens are kept between runs. `None` (the default): a
    /// [`FileTokenStore`] in [`default_token_dir`]`("mcp-registry")`, or in
    /// memory when no such directory can be found. Feature `http`.
    #[cfg(feature = "http")]
    pub token_store: Option<Arc<dyn TokenStore>>,
}

impl Default for DefaultConnector {
    fn default() -> Self {
        DefaultConnector {
            host_name: "this application".into(),
            discover_path: true,
            handlers: Handlers::default(),
            stdio_shutdown_grace: None,
            stdio_log_level: None,
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
    use std::path::PathBuf;
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = if let Some(d) = var("XDG_DATA_HOME") {
        d
    } else if cfg!(windows) {
        var("APPDATA")?
    } else if cfg!(target_os = "macos") {
        var("HOME")?.join("Library").join("Application Support")
    } else {
        var("HOME")?.join(".local").join("share")
    };
    Some(base.join(app).join("oauth"))
}

#[cfg(feature = "http")]
impl DefaultConnector {
    /// The token store: the host's, else the default file store.
    fn store(&self) -> Option<Arc<dyn TokenStore>> {
        if let Some(store) = &self.token_store {
            return Some(store.clone());
        }
        let dir = default_token_dir("mcp-registry")?;
        Some(Arc::new(FileTokenStore::new(dir)))
    }

    /// The HTTP options of an endpoint server; `handler` overrides
    /// [`oauth_handler`](Self::oauth_handler) for an OAuth server.
    fn http_options(
        &self,
        server: &ServerConfig,
        identity: &ClientIdentity,
        headers: &[(String, crate::Secret)],
        auth: &AuthConfig,
        handler: Option<OAuthHandler>,
    ) -> Result<HttpOptions, Error> {
        let mut options = HttpOptions::new(server.name.clone());
        options.client_info = identity.to_implementation();
        options.request_timeout = server.timeout;
        options.handlers = self.handlers.clone();
        if let TransportConfig::Http { network, .. } = &server.transport {
            options.ca_file.clone_from(&network.ca_file);
            match (&network.proxy, &network.no_proxy) {
                (Some(proxy), _) if proxy.expose().trim().eq_ignore_ascii_case("none") => {
                    options.proxy = ProxyConfig::None;
                }
                (Some(proxy), no_proxy) => {
                    options.proxy = ProxyConfig::Url {
                        url: proxy.expose().trim().to_owned(),
                        no_proxy: no_proxy.clone(),
                    };
                }
                (None, _) => {}
            }
        }
        if let AuthConfig::OAuth(oauth) = auth {
            if !headers.is_empty() {
                return Err(invalid_auth(
                    server,
                    "headers",
                    "`headers` cannot be combined with OAuth",
                ));
            }
            let handler = handler.unwrap_or_else(|| self.oauth_handler.clone());
            options.oauth = Some(oauth_options(server, identity, oauth, handler, self.store())?);
        } else {
            options.auth = static_auth(server, headers, auth)?;
        }
        Ok(options)
    }
}

/// A configuration error at `auth.<key>` of `server`.
#[cfg(feature = "http")]
fn invalid_auth(server: &ServerConfig, key: &str, reason: &str) -> Error {
    Error::Config(ConfigError::Invalid {
        location: Location {
            server: Some(server.name.clone()),
            index: None,
            key: Some(format!("auth.{key}")),
        },
        reason: reason.into(),
    })
}

/// The registry's OAuth settings as the HTTP transport's [`OAuthOptions`].
/// `scopes` become `mcp-auth`'s configured scopes: asked for when the
/// server's challenge names none.
#[cfg(feature = "http")]
fn oauth_options(
    server: &ServerConfig,
    identity: &ClientIdentity,
    oauth: &OAuthConfig,
    handler: OAuthHandler,
    store: Option<Arc<dyn TokenStore>>,
) -> Result<OAuthOptions, Error> {
    let mut config = mcp_auth::OAuthConfig::new(String::new(), identity.name.clone());
    if let Some(url) = &oauth.client_metadata_url {
        config = config
            .with_client_metadata_url(url.clone())
            .map_err(|e| invalid_auth(server, "client_metadata_url", &e.to_string()))?;
    }
    match (&oauth.client_id, &oauth.client_secret) {
        (Some(id), Some(secret)) => {
            config = config.with_pre_registered(ClientRegistration::confidential(
                id.clone(),
                secret.expose(),
                TokenEndpointAuthMethod::ClientSecretBasic,
            ));
        }
        (Some(id), None) => {
            config = config.with_pre_registered(ClientRegistration::public(id.clone()))
        }
        (None, Some(_)) => {
            return Err(invalid_auth(
                server,
                "client_secret",
                "a client secret needs a `client_id`",
            ));
        }
        (None, None) => {}
    }
    config = config.with_scopes(oauth.scopes.iter().cloned());
    let handler = match (handler, &oauth.redirect_uri) {
        (OAuthHandler::Headless(None), Some(uri)) => OAuthHandler::Headless(Some(uri.clone())),
        (h, _) => h,
    };
    let mut options = OAuthOptions::from_config(config);
    options.handler = handler;
    options.store = store;
    Ok(options)
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
                    options.handlers = self.handlers.clone();
                    options.log_level = self.stdio_log_level.clone();
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
            let TransportConfig::Http {
                endpoint, headers, auth: auth @ AuthConfig::OAuth(_), ..
            } = &server.transport
            else {
                return Err(Error::NotOAuth { server: server.name.clone() });
            };
            let options = self.http_options(server, identity, headers, auth, handler)?;
            let client = HttpClient::connect(endpoint, options)
                .map_err(|e| Error::Transport { server: server.name.clone(), source: e.into() })?;
            let name = server.name.clone();
            // The handshake runs the flow on the server's own 401 (its
            // challenge names the metadata and the scope); a server that
            // let the handshake through without a token is asked through
            // the well-known metadata instead.
            let result = match client.initialize().await {
                Ok(_) => match client.oauth() {
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
            let TransportConfig::Http {
                endpoint, headers, auth: auth @ AuthConfig::OAuth(_), ..
            } = &server.transport
            else {
                return Err(Error::NotOAuth { server: server.name.clone() });
            };
            let options = self.http_options(server, identity, headers, auth, None)?;
            let client = HttpClient::connect(endpoint, options)
                .map_err(|e| Error::Transport { server: server.name.clone(), source: e.into() })?;
            let Some(oauth) = client.oauth().cloned() else {
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

/// The configured headers and credentials as the HTTP transport's
/// [`StaticAuth`].
#[cfg(feature = "http")]
fn static_auth(
    server: &ServerConfig,
    headers: &[(String, crate::Secret)],
    auth: &AuthConfig,
) -> Result<StaticAuth, Error> {
    let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
    let mut list: Vec<(String, String)> =
        headers.iter().map(|(n, v)| pair(n, v.expose())).collect();
    let single = match auth {
        AuthConfig::None => None,
        AuthConfig::Bearer { token } => Some(StaticAuth::Bearer(token.expose().to_owned())),
        AuthConfig::Basic { username, password } => Some(StaticAuth::Basic {
            username: username.clone(),
            password: password.expose().to_owned(),
        }),
        AuthConfig::Header { name, value } => {
            Some(StaticAuth::Header { name: name.clone(), value: value.expose().to_owned() })
        }
        AuthConfig::Headers(h) => {
            Some(StaticAuth::Headers(h.iter().map(|(n, v)| pair(n, v.expose())).collect()))
        }
        AuthConfig::QueryParam { name, value } => {
            Some(StaticAuth::Query { name: name.clone(), value: value.expose().to_owned() })
        }
        AuthConfig::OAuth(_) => {
            return Err(invalid_auth(server, "kind", "OAuth is not a static credential"));
        }
    };
    if list.is_empty() {
        return Ok(single.unwrap_or_default());
    }
    // Headers and a credential together: everything becomes headers.
    match single {
        None => {}
        Some(StaticAuth::Bearer(token)) => {
            list.push(pair("Authorization", &format!("Bearer {}", token.trim())));
        }
        Some(StaticAuth::Basic { username, password }) => {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
            list.push(pair("Authorization", &format!("Basic {encoded}")));
        }
        Some(StaticAuth::Header { name, value }) => list.push((name, value)),
        Some(StaticAuth::Headers(h)) => list.extend(h),
        Some(_) => {
            return Err(Error::Config(ConfigError::Invalid {
                location: Location {
                    server: Some(server.name.clone()),
                    index: None,
                    key: Some("auth.kind".into()),
                },
                reason: "query_param credentials cannot be combined with `headers`".into(),
            }));
        }
    }
    Ok(StaticAuth::Headers(list))
}

/// How a [`Registry`] runs.
#[derive(Clone)]
#[non_exhaustive]
pub struct RegistryOptions {
    /// How many servers [`Registry::initialize_all`] and
    /// [`Registry::list_all_tools`] talk to at once (64: a start is mostly
    /// waiting for a process or the network, so a host's whole set starts
    /// together).
    pub max_concurrency: usize,
    /// Builds each server's transport ([`DefaultConnector`] by default).
    pub connector: Arc<dyn Connector>,
    /// The host's login command, shown in [`Error::LoginRequired`]; `{server}`
    /// is replaced with the server's name (e.g. `"mcpc login {server}"`).
    pub login_command: Option<String>,
    /// Where tool pins are kept ([`MemoryPinStore`] by default: for as
    /// long as the registry's process runs). A host that loads its
    /// configuration from a file keeps them beside it
    /// ([`FilePinStore::beside`](crate::FilePinStore::beside)).
    pub pin_store: Arc<dyn PinStore>,
    /// What a changed tool definition does when the server's entry sets no
    /// `pin_policy` ([`PinPolicy::Warn`] by default).
    pub pin_policy: PinPolicy,
    /// Keeps servers connected: restarts, reconnects with backoff,
    /// keepalive pings, resource subscriptions made again ([`Supervision`]).
    /// `None` (the default): no background task ever runs; a lost
    /// connection is made again on the server's next use.
    pub supervision: Option<Supervision>,
    /// How long [`Registry::reload`] lets calls in flight on a removed or
    /// replaced server finish before it closes that server's connection
    /// (which fails what still runs) (10 s).
    pub drain_timeout: Duration,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            max_concurrency: 64,
            connector: Arc::new(DefaultConnector::default()),
            login_command: None,
            pin_store: Arc::new(MemoryPinStore::new()),
            pin_policy: PinPolicy::default(),
            supervision: None,
            drain_timeout: Duration::from_secs(10),
        }
    }
}

impl RegistryOptions {
    /// Options with this connector.
    pub fn with_connector(connector: impl Connector + 'static) -> Self {
        RegistryOptions { connector: Arc::new(connector), ..Default::default() }
    }

    /// These options with supervision on.
    pub fn with_supervision(mut self, supervision: Supervision) -> Self {
        self.supervision = Some(supervision);
        self
    }
}

impl fmt::Debug for RegistryOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryOptions")
            .field("max_concurrency", &self.max_concurrency)
            .field("connector", &self.connector)
            .field("login_command", &self.login_command)
            .field("pin_store", &self.pin_store)
            .field("pin_policy", &self.pin_policy)
            .field("supervision", &self.supervision)
            .field("drain_timeout", &self.drain_timeout)
            .finish()
    }
}

/// One server's outcome in a fan-out ([`Registry::list_all_tools`],
/// [`Registry::initialize_all`]).
#[derive(Debug)]
pub struct ServerResult<T> {
    /// The server's name.
    pub server: String,
    /// What it gave.
    pub result: Result<T, Error>,
}

/// What is known of one server's connection ([`Registry::status`],
/// [`Registry::statuses`]): whether one is open and, once the era is
/// settled, the protocol version it speaks and that version's era (the
/// handshake era, 2024-11-05 to 2025-11-25, or the stateless one,
/// 2026-07-28) and the server's `serverInfo`; its [`Health`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerStatus {
    /// The server's name.
    pub server: String,
    /// Whether a connection is open (cached).
    pub connected: bool,
    /// The protocol version spoken (`None` until connected).
    pub protocol_version: Option<ProtocolVersion>,
    /// The era of [`protocol_version`](Self::protocol_version):
    /// [`Era::Legacy`] (`initialize`, a session) or [`Era::Modern`]
    /// (stateless, `server/discover`).
    pub era: Option<Era>,
    /// The server's `serverInfo` (name and version), once connected.
    pub server_info: Option<Implementation>,
    /// The server's health.
    pub health: Health,
    /// Which connection is open: a number the registry gives each
    /// connection it makes (a restart or a reconnect gives a new one; a
    /// reload keeps an unchanged server's).
    pub connection: Option<u64>,
}

impl ServerStatus {
    /// The status of `slot` with the connection `cached`, if any.
    fn of(slot: &Slot, cached: &Cached) -> ServerStatus {
        let conn = cached.as_ref().map(|(_, c, _)| c);
        let protocol_version = conn.and_then(|c| c.protocol_version());
        ServerStatus {
            server: slot.name.clone(),
            connected: conn.is_some(),
            protocol_version,
            era: protocol_version.map(ProtocolVersion::era),
            server_info: conn.and_then(|c| c.server_info()),
            health: slot.health(),
            connection: cached.as_ref().map(|(g, _, _)| *g),
        }
    }
}

/// What [`Registry::reload`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReloadReport {
    /// Servers that are new, in the new configuration's order.
    pub added: Vec<String>,
    /// Servers that are gone, in the old order.
    pub removed: Vec<String>,
    /// Servers whose configuration differs (by value, secrets included), in
    /// the new order. Those that differ only in the tool policy or the
    /// description keep their connection; the others are connected anew.
    pub changed: Vec<String>,
    /// Whether the client identity changed (every server is then connected
    /// anew, and counted as changed).
    pub identity_changed: bool,
}

impl ReloadReport {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && !self.identity_changed
    }
}

/// The connection, its generation, and its relay (which ends with it).
type Cached = Option<(u64, ServerClient, Relay)>;

/// One server: its configuration, its connection (once made) and health,
/// the resources subscribed to through the registry, its supervisor.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) name: String,
    /// Replaced in place by a reload that changes only the tool policy or
    /// the description.
    config: std::sync::RwLock<Arc<ServerConfig>>,
    /// The connection, once made; held while connecting, so concurrent
    /// first uses share one spawn.
    conn: tokio::sync::Mutex<Cached>,
    health: watch::Sender<Health>,
    events: broadcast::Sender<HealthEvent>,
    /// Wakes the supervisor when a call dropped the connection.
    pub(crate) wake: Notify,
    /// The URIs of `resources/subscribe` made through the registry, made
    /// again on every new connection.
    subscriptions: std::sync::Mutex<BTreeSet<String>>,
    /// One change of the subscriptions at a time (in the stateless era a
    /// change opens the connection's listen stream again).
    subscribing: tokio::sync::Mutex<()>,
    supervisor: std::sync::Mutex<Option<AbortHandle>>,
    /// Set when a reload removed or replaced the server.
    retired: AtomicBool,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Slot {
    fn new(config: Arc<ServerConfig>, events: broadcast::Sender<HealthEvent>) -> Slot {
        Slot {
            name: config.name.clone(),
            config: std::sync::RwLock::new(config),
            conn: tokio::sync::Mutex::new(None),
            health: watch::Sender::new(Health::Idle),
            events,
            wake: Notify::new(),
            subscriptions: std::sync::Mutex::new(BTreeSet::new()),
            subscribing: tokio::sync::Mutex::new(()),
            supervisor: std::sync::Mutex::new(None),
            retired: AtomicBool::new(false),
        }
    }

    fn config(&self) -> Arc<ServerConfig> {
        self.config.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_config(&self, config: Arc<ServerConfig>) {
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = config;
    }

    fn health(&self) -> Health {
        self.health.borrow().clone()
    }

    /// Sets the health; a change is announced to the registry's
    /// subscribers.
    pub(crate) fn set_health(&self, health: Health) {
        self.set_health_if(|_| true, health);
    }

    /// Sets the health when the current one passes `when`.
    pub(crate) fn set_health_if(&self, when: impl Fn(&Health) -> bool, health: Health) {
        let changed = self.health.send_if_modified(|h| {
            if *h == health || !when(h) {
                return false;
            }
            *h = health.clone();
            true
        });
        if changed {
            tracing::debug!(server = %self.name, %health, "MCP server health");
            let _ = self.events.send(HealthEvent { server: self.name.clone(), health });
        }
    }

    fn is_retired(&self) -> bool {
        self.retired.load(Ordering::SeqCst)
    }

    /// The generation of the cached connection (`Some(None)`: none), or
    /// `None` while someone holds the slot (a connect in progress).
    pub(crate) fn current_generation(&self) -> Option<Option<u64>> {
        self.conn.try_lock().ok().map(|c| c.as_ref().map(|(g, _, _)| *g))
    }

    /// Forgets connection `generation` (lost), if it is still the cached
    /// one.
    pub(crate) async fn drop_connection(&self, generation: u64) -> bool {
        let mut cached = self.conn.lock().await;
        if cached.as_ref().is_some_and(|(g, _, _)| *g == generation) {
            *cached = None;
            return true;
        }
        false
    }

    /// Stops the supervisor, if one runs.
    fn stop_supervisor(&self) {
        if let Some(task) = lock(&self.supervisor).take() {
            task.abort();
        }
    }

    fn is_supervised(&self) -> bool {
        lock(&self.supervisor).as_ref().is_some_and(|t| !t.is_finished())
    }
}

/// The configurations a registry was given (the first, then each reload's
/// that changed something), so [`Registry::list`] and [`Registry::get`]
/// can lend them: a reload appends, nothing is removed while the registry
/// lives. Unchanged servers' entries are shared between generations, so a
/// reload keeps only what it changed (and one pointer per server).
#[derive(Debug)]
struct Declared {
    identity: ClientIdentity,
    servers: Vec<Arc<ServerConfig>>,
    next: OnceLock<Box<Declared>>,
}

impl Declared {
    fn latest(&self) -> &Declared {
        let mut d = self;
        while let Some(next) = d.next.get() {
            d = next;
        }
        d
    }
}

impl Drop for Declared {
    fn drop(&mut self) {
        // Iteratively: a long chain must not recurse.
        let mut next = self.next.take();
        while let Some(mut d) = next {
            next = d.next.take();
        }
    }
}

/// What the registry's handles and its supervisors share.
#[derive(Debug)]
pub(crate) struct Shared {
    me: Weak<Shared>,
    declared: Declared,
    slots: std::sync::RwLock<Arc<[Arc<Slot>]>>,
    options: RegistryOptions,
    generation: AtomicU64,
    /// Counts [`close_all`](Registry::close_all) calls: a connection made
    /// by a connect that began before one is closed, not kept.
    closes: AtomicU64,
    events: broadcast::Sender<HealthEvent>,
    /// Every connection's notifications.
    notices: broadcast::Sender<NotificationEvent>,
    /// One reload at a time.
    reload: tokio::sync::Mutex<()>,
    /// The tool pins and their policy.
    pins: PinBook,
}

/// How many health changes a slow [`Registry::health_events`] subscriber
/// may fall behind before it skips the oldest.
const HEALTH_EVENTS: usize = 256;

/// The servers a host declared, behind one face.
///
/// Connections are made lazily (first use of a server: spawn or connect,
/// then the handshake) and cached; a server whose connection failed or was
/// lost is connected again on its next use (or, supervised, in the
/// background: [`RegistryOptions::supervision`]). The tool policy is
/// applied before anything is spawned or sent. [`reload`](Self::reload)
/// applies a changed configuration in place.
///
/// ```no_run
/// use mcp_host_registry::{Config, LoadOptions, Registry, RegistryOptions};
///
/// # async fn run() -> Result<(), mcp_host_registry::Error> {
/// let loaded = Config::load("mcp.toml".as_ref(), &LoadOptions::default())?;
/// let registry = Registry::new(loaded.config, RegistryOptions::default());
/// for entry in registry.list_all_tools().await {
///     match entry.result {
///         Ok(tools) => println!("{}: {} tools", entry.server, tools.len()),
///         Err(e) => eprintln!("{}: {e}", entry.server),
///     }
/// }
/// let args = serde_json::json!({"message": "hi"});
/// let result = registry.call_tool("files", "echo", args.as_object().cloned()).await?;
/// println!("{}", mcp_proto::render_tool_result(&result).text);
/// registry.close_all().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Registry {
    shared: Arc<Shared>,
}

/// How long [`Registry::close_all`] waits for a server whose connection is
/// being made elsewhere before it goes on without it (that connect, when it
/// ends, closes what it made).
const CLOSE_LOCK_WAIT: Duration = Duration::from_secs(2);

impl Drop for Registry {
    fn drop(&mut self) {
        // Supervisors hold the registry weakly; stopped here they let go of
        // the connections at once.
        for slot in self.shared.snapshot().iter() {
            slot.stop_supervisor();
        }
    }
}

impl Registry {
    /// A registry of the configuration's servers (none when it is
    /// disabled). Nothing is spawned or connected yet, and no task runs.
    pub fn new(config: Config, options: RegistryOptions) -> Registry {
        let servers = if config.enabled { config.servers } else { Vec::new() };
        let servers: Vec<Arc<ServerConfig>> = servers.into_iter().map(Arc::new).collect();
        let events = broadcast::channel(HEALTH_EVENTS).0;
        let slots: Arc<[Arc<Slot>]> =
            servers.iter().map(|s| Arc::new(Slot::new(s.clone(), events.clone()))).collect();
        let pins = PinBook::new(options.pin_store.clone(), options.pin_policy);
        let shared = Arc::new_cyclic(|me| Shared {
            me: me.clone(),
            declared: Declared { identity: config.client_identity, servers, next: OnceLock::new() },
            slots: std::sync::RwLock::new(slots),
            options,
            generation: AtomicU64::new(0),
            closes: AtomicU64::new(0),
            events,
            notices: broadcast::channel(NOTIFICATION_EVENTS).0,
            reload: tokio::sync::Mutex::new(()),
            pins,
        });
        Registry { shared }
    }

    /// The servers, in declaration order (after the last
    /// [`reload`](Self::reload)).
    pub fn list(&self) -> impl ExactSizeIterator<Item = &ServerConfig> {
        self.shared.declared.latest().servers.iter().map(|s| &**s)
    }

    /// The server of this name.
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.list().find(|s| s.name == name)
    }

    /// How the host introduces itself to servers.
    pub fn client_identity(&self) -> &ClientIdentity {
        &self.shared.declared.latest().identity
    }

    /// Whether a connection to this server is open (cached).
    pub async fn is_connected(&self, name: &str) -> bool {
        match self.slot(name) {
            Ok(slot) => slot.conn.lock().await.is_some(),
            Err(_) => false,
        }
    }

    /// The state of this server's connection (protocol version and era
    /// once connected, health). Connects nothing: a server not used yet is
    /// reported unconnected.
    pub async fn status(&self, name: &str) -> Result<ServerStatus, Error> {
        let slot = self.slot(name)?;
        let cached = slot.conn.lock().await;
        Ok(ServerStatus::of(&slot, &cached))
    }

    /// Every server's [`status`](Self::status), in declaration order.
    /// Connects nothing.
    pub async fn statuses(&self) -> Vec<ServerStatus> {
        let slots = self.shared.snapshot();
        let mut all = Vec::with_capacity(slots.len());
        for slot in slots.iter() {
            let cached = slot.conn.lock().await;
            all.push(ServerStatus::of(slot, &cached));
        }
        all
    }

    /// The server's [`Health`] now (no waiting, no I/O).
    pub fn health(&self, name: &str) -> Result<Health, Error> {
        Ok(self.slot(name)?.health())
    }

    /// The server's health as a [`watch::Receiver`]: its current value and
    /// each change (`changed()` ends with an error once a reload removed or
    /// replaced the server, whose last value is then [`Health::Removed`]).
    pub fn watch_health(&self, name: &str) -> Result<watch::Receiver<Health>, Error> {
        Ok(self.slot(name)?.health.subscribe())
    }

    /// Every server's health changes, from now on, as
    /// [`HealthEvent`]s (server, new health). A subscriber that falls more
    /// than 256 changes behind skips the oldest
    /// ([`broadcast::error::RecvError::Lagged`]).
    pub fn health_events(&self) -> broadcast::Receiver<HealthEvent> {
        self.shared.events.subscribe()
    }

    /// Every server's notifications from now on ([`NotificationEvent`]:
    /// the server's name and what it sent: progress, log messages,
    /// resource updates, list changes, ...), from every connection the
    /// registry makes, across restarts and reconnects: the one stream a
    /// host reads instead of each connection's
    /// [`notifications`](mcp_peer::Client::notifications). A subscriber
    /// that falls more than 256 behind skips the oldest
    /// ([`broadcast::error::RecvError::Lagged`]).
    pub fn notifications(&self) -> broadcast::Receiver<NotificationEvent> {
        self.shared.notices.subscribe()
    }

    /// Starts supervising every server now (each connects in the
    /// background, concurrently) rather than at its first use. Does
    /// nothing without [`RegistryOptions::supervision`].
    pub fn supervise_all(&self) {
        for slot in self.shared.snapshot().iter() {
            self.shared.ensure_supervisor(slot, false);
        }
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>, Error> {
        self.shared.slot(name)
    }

    /// The cached connection, or a new one (spawned or connected, then
    /// initialized), bounded by the server's timeout plus a grace period.
    /// A supervised server that is backing off is waited for, or fails
    /// fast ([`Supervision::while_down`]).
    async fn connection(&self, slot: &Arc<Slot>) -> Result<(u64, ServerClient), Error> {
        self.shared.connection(slot, None).await.map(|(generation, conn, _)| (generation, conn))
    }

    /// Maps a transport error, dropping the cached connection when it is
    /// gone so the next use (or the supervisor) reconnects.
    async fn failed(&self, slot: &Slot, generation: u64, source: TransportError) -> Error {
        if source.is_connection_lost() && slot.drop_connection(generation).await {
            tracing::debug!(server = %slot.name, "MCP connection lost; will reconnect");
            if slot.is_supervised() {
                slot.wake.notify_one();
            } else {
                slot.set_health(Health::Idle);
            }
        }
        self.shared.transport_error(&slot.name, source)
    }

    /// Runs an explicit OAuth login for an OAuth server: discovery,
    /// registration when needed, the user's authorization through
    /// `handler` (`None`: the connector's own; [`DefaultConnector`]'s is
    /// [`DefaultConnector::oauth_handler`]) and the token request; the
    /// tokens land in the connector's token store, where later connections
    /// find them. A stored valid or refreshable token is reused without
    /// asking the user. Bounded by `timeout`; an open connection to the
    /// server is closed first so the next use picks the new tokens up.
    /// Feature `http`.
    #[cfg(feature = "http")]
    pub async fn login(
        &self,
        server: &str,
        handler: Option<OAuthHandler>,
        timeout: Duration,
    ) -> Result<(), Error> {
        let config = self.slot(server)?.config();
        if !config.uses_oauth() {
            return Err(Error::NotOAuth { server: server.to_owned() });
        }
        self.close(server).await?;
        let login = self.shared.options.connector.login(&config, self.client_identity(), handler);
        match tokio::time::timeout(timeout, login).await {
            Ok(result) => result,
            Err(_) => Err(Error::LoginTimeout { server: server.to_owned(), after: timeout }),
        }
    }

    /// Runs an OAuth logout for an OAuth server: revokes its tokens where
    /// the authorization server offers RFC 7009 revocation, then deletes
    /// them from the connector's token store (the client registration is
    /// kept). A handshake without an authorization handler finds the
    /// issuer the tokens are stored under, from the server's challenge (a
    /// server that cannot be reached: discovery from its well-known
    /// metadata). An open connection is closed first. Bounded by `timeout`.
    /// Feature `http`.
    #[cfg(feature = "http")]
    pub async fn logout(&self, server: &str, timeout: Duration) -> Result<Revocation, Error> {
        let config = self.slot(server)?.config();
        if !config.uses_oauth() {
            return Err(Error::NotOAuth { server: server.to_owned() });
        }
        self.close(server).await?;
        let logout = self.shared.options.connector.logout(&config, self.client_identity());
        match tokio::time::timeout(timeout, logout).await {
            Ok(result) => result,
            Err(_) => Err(Error::LoginTimeout { server: server.to_owned(), after: timeout }),
        }
    }

    /// Connects to the server if needed and returns its `initialize` answer.
    pub async fn initialize(&self, server: &str) -> Result<Arc<InitializeResult>, Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(&slot).await?;
        match calls::initialize(&conn).await {
            Ok(result) => Ok(result),
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// Every server's `initialize`, at most
    /// [`max_concurrency`](RegistryOptions::max_concurrency) at once, in
    /// declaration order; one server's failure does not affect the others.
    pub async fn initialize_all(&self) -> Vec<ServerResult<Arc<InitializeResult>>> {
        self.fan_out(|name| async move { self.initialize(&name).await }).await
    }

    /// The server's tools that its policy allows, less those withheld by
    /// tool pinning (a definition that changed since it was pinned, under
    /// [`PinPolicy::Block`]; see [`list_tools_with_pins`](Self::list_tools_with_pins)).
    pub async fn list_tools(&self, server: &str) -> Result<Vec<Tool>, Error> {
        let (config, tools) = self.allowed_tools(server).await?;
        self.shared.pins.visible(&config, tools)
    }

    /// The server's tools that its policy allows, before pinning, with the
    /// configuration they were listed under.
    pub(crate) async fn allowed_tools(
        &self,
        server: &str,
    ) -> Result<(Arc<ServerConfig>, Vec<Tool>), Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(&slot).await?;
        let config = slot.config();
        match calls::list_tools(&conn).await {
            Ok(tools) => {
                let allowed =
                    tools.iter().filter(|t| config.policy.is_allowed(&t.name)).cloned().collect();
                Ok((config, allowed))
            }
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    pub(crate) fn pin_book(&self) -> &PinBook {
        &self.shared.pins
    }

    /// Every server's allowed tools, concurrently (bounded), in declaration
    /// order; a server that fails is reported beside the others' results.
    pub async fn list_all_tools(&self) -> Vec<ServerResult<Vec<Tool>>> {
        self.fan_out(|name| async move { self.list_tools(&name).await }).await
    }

    async fn fan_out<'a, T, F, Fut>(&'a self, op: F) -> Vec<ServerResult<T>>
    where
        F: Fn(String) -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>> + 'a,
    {
        let limit = self.shared.options.max_concurrency.max(1);
        let names: Vec<String> = self.shared.snapshot().iter().map(|s| s.name.clone()).collect();
        futures_util::stream::iter(names.into_iter().map(|name| {
            let fut = op(name.clone());
            async move { ServerResult { server: name, result: fut.await } }
        }))
        .buffered(limit)
        .collect()
        .await
    }

    /// Calls a tool with the server's timeout. See
    /// [`call_tool_with`](Self::call_tool_with).
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(server, tool, arguments, RequestOptions::default()).await
    }

    /// Calls a tool. A tool the policy refuses is refused before anything is
    /// spawned or sent ([`Error::ToolNotAllowed`]); a tool the server does
    /// not list is refused before the `tools/call` is sent
    /// ([`Error::UnknownTool`]), and so is a tool withheld by pinning
    /// ([`Error::ToolChanged`]). `options` may carry a timeout and a
    /// progress callback. A tool that fails reports `is_error` in the
    /// result, not an `Err`. A supervised server that is backing off is
    /// waited for within the call's timeout, when it has one
    /// ([`WhileDown::Wait`]): what the wait took is taken off the time the
    /// server has to answer.
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        mut options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let slot = self.slot(server)?;
        let tool = tool.trim();
        let config = slot.config();
        if !config.policy.is_allowed(tool) {
            return Err(Error::ToolNotAllowed { server: server.to_owned(), tool: tool.to_owned() });
        }
        let (generation, conn, waited) = self.shared.connection(&slot, options.timeout).await?;
        if let Some(timeout) = &mut options.timeout {
            *timeout = timeout.saturating_sub(waited).max(MIN_CALL_TIME);
        }
        let tools = match calls::list_tools(&conn).await {
            Ok(tools) => tools,
            Err(e) => return Err(self.failed(&slot, generation, e).await),
        };
        let Some(definition) = tools.iter().find(|t| t.name == tool) else {
            return Err(Error::UnknownTool { server: server.to_owned(), tool: tool.to_owned() });
        };
        self.shared.pins.check_call(&config, definition)?;
        match calls::call_tool(&conn, tool, arguments, options).await {
            Ok(result) => Ok(result),
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// Runs `op` on the server's client (connecting first if needed): the
    /// way to every method the registry has no shortcut for (resources,
    /// prompts, completion, tasks, subscriptions, `request` for anything
    /// else). A transport error becomes [`Error::Transport`] naming the
    /// server (or [`Error::LoginRequired`]), and a lost connection is
    /// dropped so the next use reconnects. The tool policy is not applied:
    /// `op` sees the server as it is.
    ///
    /// ```no_run
    /// # async fn demo(registry: &mcp_host_registry::Registry) -> Result<(), mcp_host_registry::Error> {
    /// let resources = registry.with_client("files", |c| async move { c.list_resources().await }).await?;
    /// # let _ = resources; Ok(()) }
    /// ```
    pub async fn with_client<T, F, Fut>(&self, server: &str, op: F) -> Result<T, Error>
    where
        F: FnOnce(ServerClient) -> Fut,
        Fut: std::future::Future<Output = Result<T, TransportError>>,
    {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(&slot).await?;
        match op(conn).await {
            Ok(value) => Ok(value),
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// Subscribes to updates of the resource `uri`, remembered: every
    /// later connection to the server (a restart, a reconnect, the next
    /// use after a loss) subscribes again before it is used. The updates
    /// (`notifications/resources/updated`) reach
    /// [`notifications`](Self::notifications) (and the connection's own
    /// [`notifications`](mcp_peer::Client::notifications) stream).
    ///
    /// In the handshake era this is `resources/subscribe`, and a refusal
    /// is the server's error. In the stateless era (2026-07-28) the
    /// registry keeps one `subscriptions/listen` stream per connection for
    /// the resources subscribed through it, opened again with each change
    /// of the set (the new stream is acknowledged before the old one is
    /// closed); a URI the acknowledgment leaves out is
    /// [`Error::SubscriptionRefused`]. A refused subscription is not
    /// remembered.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let _one_at_a_time = slot.subscribing.lock().await;
        let (generation, conn) = self.connection(&slot).await?;
        if !is_modern(&conn) {
            return match calls::subscribe(&conn, uri).await {
                Ok(()) => {
                    lock(&slot.subscriptions).insert(uri.to_owned());
                    Ok(())
                }
                Err(e) => Err(self.failed(&slot, generation, e).await),
            };
        }
        // Remembered first, so a connection made meanwhile listens to it.
        let added = lock(&slot.subscriptions).insert(uri.to_owned());
        let forget = || {
            if added {
                lock(&slot.subscriptions).remove(uri);
            }
        };
        let subscription = match calls::listen(&conn, resources_filter(&slot)).await {
            Ok(subscription) => subscription,
            Err(e) => {
                forget();
                return Err(self.failed(&slot, generation, e).await);
            }
        };
        if subscription.refused().iter().any(|refused| refused == uri) {
            forget();
            return Err(Error::SubscriptionRefused {
                server: server.to_owned(),
                uri: uri.to_owned(),
            });
        }
        keep_listen(&slot, generation, Some(subscription)).await;
        Ok(())
    }

    /// Unsubscribes from the resource `uri`, and forgets it (it is not
    /// subscribed again on later connections, even when this fails): in
    /// the handshake era `resources/unsubscribe`; in the stateless era the
    /// connection's listen stream is opened again without it (closed when
    /// no resource is left).
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let _one_at_a_time = slot.subscribing.lock().await;
        lock(&slot.subscriptions).remove(uri);
        let (generation, conn) = self.connection(&slot).await?;
        if !is_modern(&conn) {
            return match calls::unsubscribe(&conn, uri).await {
                Ok(()) => Ok(()),
                Err(e) => Err(self.failed(&slot, generation, e).await),
            };
        }
        if lock(&slot.subscriptions).is_empty() {
            keep_listen(&slot, generation, None).await;
            return Ok(());
        }
        match calls::listen(&conn, resources_filter(&slot)).await {
            Ok(subscription) => {
                keep_listen(&slot, generation, Some(subscription)).await;
                Ok(())
            }
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// The resource URIs subscribed through [`subscribe_resource`](Self::subscribe_resource),
    /// in order.
    pub fn subscriptions(&self, server: &str) -> Result<Vec<String>, Error> {
        Ok(lock(&self.slot(server)?.subscriptions).iter().cloned().collect())
    }

    /// A round trip (connecting first if needed): `ping`, or for a server
    /// of the stateless era, which has no `ping`, `server/discover`.
    pub async fn ping(&self, server: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(&slot).await?;
        match calls::round_trip(&conn).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// Whether the server asks for authorization: `None` when it talks
    /// without (always for stdio servers). An open connection is asked as
    /// it is; otherwise a probe connection is made (for an OAuth server,
    /// without credentials) and closed again. Feature `http`.
    #[cfg(feature = "http")]
    pub async fn discover_authorization(
        &self,
        server: &str,
    ) -> Result<Option<AuthorizationInfo>, Error> {
        let slot = self.slot(server)?;
        let mut config = (*slot.config()).clone();
        if config.uses_oauth() {
            if let TransportConfig::Http { auth, .. } = &mut config.transport {
                *auth = AuthConfig::None;
            }
        } else if let Some((_, conn, _)) = &*slot.conn.lock().await {
            let conn = conn.clone();
            return discover_authorization(&conn)
                .await
                .map_err(|source| Error::Transport { server: server.to_owned(), source });
        }
        let limit = config.timeout + CONNECT_GRACE;
        let probe = async {
            let conn =
                self.shared.options.connector.connect(&config, self.client_identity()).await?;
            let found = discover_authorization(&conn)
                .await
                .map_err(|source| Error::Transport { server: server.to_owned(), source })?;
            let _ = calls::close(&conn).await;
            Ok::<_, Error>(found)
        };
        match tokio::time::timeout(limit, probe).await {
            Ok(result) => result,
            Err(_) => Err(Error::ConnectTimeout { server: server.to_owned(), after: limit }),
        }
    }

    /// Closes one server's connection, if open, and stops its supervisor
    /// (it reconnects on next use).
    pub async fn close(&self, server: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        slot.stop_supervisor();
        let taken = slot.conn.lock().await.take();
        if let Some((_, conn, _)) = taken {
            close_bounded(&slot.name, conn).await;
        }
        slot.set_health_if(|h| *h != Health::Removed, Health::Idle);
        Ok(())
    }

    /// Stops every supervisor and closes every open connection,
    /// concurrently, each within a bound.
    pub async fn close_all(&self) {
        self.shared.closes.fetch_add(1, Ordering::SeqCst);
        let slots = self.shared.snapshot();
        for slot in slots.iter() {
            slot.stop_supervisor();
        }
        let mut open = Vec::new();
        for slot in slots.iter() {
            // A connect in progress holds the slot; it is not waited for
            // long (its caller may have been abandoned): when it ends it
            // sees the close and closes what it made.
            match tokio::time::timeout(CLOSE_LOCK_WAIT, slot.conn.lock()).await {
                Ok(mut cached) => {
                    if let Some((_, conn, _)) = cached.take() {
                        open.push((slot.name.as_str(), conn));
                    }
                    slot.set_health(Health::Idle);
                }
                Err(_) => {
                    tracing::debug!(server = %slot.name, "not waiting for a connection being made")
                }
            }
        }
        futures_util::future::join_all(
            open.into_iter().map(|(name, conn)| close_bounded(name, conn)),
        )
        .await;
    }

    /// Applies a changed configuration: servers added, removed or changed
    /// (by [`ServerConfig`] equality, secrets compared by value), without
    /// touching the connections of the unchanged ones; returns what
    /// changed. One reload runs at a time.
    ///
    /// - An added server is connected on first use, or at once by a
    ///   [`supervise_all`](Self::supervise_all) after the reload.
    /// - A changed server whose configuration differs only in its tool
    ///   policy, pin policy or description keeps its connection; the new policy
    ///   applies to the next call. Any other change replaces it:
    ///   the new configuration is connected on next use (at once when the
    ///   old one was supervised).
    /// - A removed or replaced server's calls in flight may finish within
    ///   [`RegistryOptions::drain_timeout`]; then its connection is closed
    ///   (what still runs fails with [`Error::Transport`]), its supervisor
    ///   stopped, its health [`Health::Removed`]. A call that reached such
    ///   a server before it had a connection fails with [`Error::Reloaded`].
    ///   New calls go to the new configuration (a removed server is
    ///   [`Error::UnknownServer`]).
    ///
    /// A new client identity replaces every server. Returns once the
    /// removed and replaced connections are closed (bounded by the drain
    /// timeout plus the close bound).
    pub async fn reload(&self, config: Config) -> ReloadReport {
        self.shared.reload(config).await
    }
}

impl Shared {
    fn snapshot(&self) -> Arc<[Arc<Slot>]> {
        self.slots.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>, Error> {
        self.snapshot()
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .ok_or_else(|| Error::UnknownServer { server: name.to_owned() })
    }

    /// See [`Registry::connection`]. A wait while the server is down lasts
    /// at most `wait` (the server's timeout by default), and how long it
    /// lasted comes back with the connection.
    async fn connection(
        &self,
        slot: &Arc<Slot>,
        wait: Option<Duration>,
    ) -> Result<(u64, ServerClient, Duration), Error> {
        if let Some(missing) = &slot.config().unusable {
            return Err(Error::ServerUnusable {
                server: slot.name.clone(),
                missing: missing.clone(),
            });
        }
        if let Some(supervision) = &self.options.supervision {
            let health = slot.health();
            if matches!(health, Health::BackingOff { .. }) && slot.is_supervised() {
                match supervision.while_down {
                    WhileDown::FailFast => {
                        return Err(Error::Unavailable { server: slot.name.clone(), health });
                    }
                    _ => {
                        let started = tokio::time::Instant::now();
                        self.wait_while_down(slot, wait).await?;
                        let (generation, conn) = self.connect_slot(slot).await?;
                        return Ok((generation, conn, started.elapsed()));
                    }
                }
            }
        }
        let (generation, conn) = self.connect_slot(slot).await?;
        Ok((generation, conn, Duration::ZERO))
    }

    /// Waits, up to `limit` (the server's timeout by default), until a
    /// supervised server is no longer backing off or connecting.
    async fn wait_while_down(&self, slot: &Slot, limit: Option<Duration>) -> Result<(), Error> {
        let after = limit.unwrap_or_else(|| slot.config().timeout);
        let mut health = slot.health.subscribe();
        let wait =
            health.wait_for(|h| !matches!(h, Health::BackingOff { .. } | Health::Connecting));
        match tokio::time::timeout(after, wait).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(Error::Reloaded { server: slot.name.clone() }),
            Err(_) => Err(Error::Unavailable { server: slot.name.clone(), health: slot.health() }),
        }
    }

    /// The cached connection or a new one; starts the supervisor when
    /// supervision is on.
    pub(crate) async fn connect_slot(
        &self,
        slot: &Arc<Slot>,
    ) -> Result<(u64, ServerClient), Error> {
        let result = self.connect_locked(slot).await;
        if self.options.supervision.is_some() {
            match &result {
                Ok(_) => self.ensure_supervisor(slot, false),
                Err(Error::Closed { .. } | Error::Reloaded { .. }) => {}
                Err(e) if e.is_usage() => {}
                Err(_) => self.ensure_supervisor(slot, true),
            }
        }
        result
    }

    /// Starts the slot's supervisor unless one runs (or supervision is off,
    /// or the slot was retired). `failed_first`: a connect just failed.
    fn ensure_supervisor(&self, slot: &Arc<Slot>, failed_first: bool) {
        let Some(options) = &self.options.supervision else { return };
        let mut task = lock(&slot.supervisor);
        if task.as_ref().is_some_and(|t| !t.is_finished()) || slot.is_retired() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        // Announced before the task runs, so a call right after this one
        // sees the server backing off.
        let first_wait = if failed_first {
            match back_off(slot, options, 1) {
                Some(wait) => Some(wait),
                None => return,
            }
        } else {
            None
        };
        let handle =
            runtime.spawn(supervise(self.me.clone(), slot.clone(), options.clone(), first_wait));
        *task = Some(handle.abort_handle());
    }

    async fn connect_locked(&self, slot: &Slot) -> Result<(u64, ServerClient), Error> {
        let mut cached = slot.conn.lock().await;
        if let Some((generation, conn, _)) = &*cached {
            return Ok((*generation, conn.clone()));
        }
        if slot.is_retired() {
            return Err(Error::Reloaded { server: slot.name.clone() });
        }
        let server = slot.config();
        let identity = &self.declared.latest().identity;
        let limit = server.timeout + CONNECT_GRACE;
        let closes = self.closes.load(Ordering::SeqCst);
        slot.set_health(Health::Connecting);
        // A caller that gives up (drops this future) leaves no stale
        // `Connecting` behind.
        let connecting = Connecting { slot, armed: AtomicBool::new(true) };
        let connect = async {
            let conn = self.options.connector.connect(&server, identity).await?;
            // From the first message on.
            let notifications = conn.notifications();
            calls::initialize(&conn)
                .await
                .map_err(|source| self.transport_error(&server.name, source))?;
            Ok::<_, Error>((conn, notifications))
        };
        let failed = |e: Error| {
            // Supervised, a failure that a retry may mend is announced as
            // the wait before that retry, by the supervisor.
            if self.options.supervision.is_none() || e.is_usage() {
                slot.set_health(Health::Failed { reason: e.to_string() });
            } else {
                connecting.armed.store(false, Ordering::Relaxed);
            }
            Err(e)
        };
        let (conn, notifications) = match tokio::time::timeout(limit, connect).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return failed(e),
            Err(_) => {
                return failed(Error::ConnectTimeout { server: server.name.clone(), after: limit });
            }
        };
        if self.closes.load(Ordering::SeqCst) != closes {
            // `close_all` ran meanwhile (and could not wait for this).
            close_bounded(&server.name, conn).await;
            slot.set_health(Health::Idle);
            return Err(Error::Closed { server: server.name.clone() });
        }
        if slot.is_retired() {
            close_bounded(&server.name, conn).await;
            return Err(Error::Reloaded { server: server.name.clone() });
        }
        let relay = Relay::start(&server.name, notifications, self.notices.clone());
        resubscribe(slot, &server, &conn, &relay).await;
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(server = %server.name, "MCP server connected");
        *cached = Some((generation, conn.clone(), relay));
        slot.set_health(Health::Ready);
        Ok((generation, conn))
    }

    /// A transport error of `server`, or [`Error::LoginRequired`] when the
    /// OAuth flow needed the user and nobody was set to ask them.
    fn transport_error(&self, server: &str, source: TransportError) -> Error {
        if source.is_login_required() {
            let command =
                self.options.login_command.as_ref().map(|c| c.replace("{server}", server));
            return Error::LoginRequired { server: server.to_owned(), command };
        }
        Error::Transport { server: server.to_owned(), source }
    }

    async fn reload(&self, config: Config) -> ReloadReport {
        let _one_at_a_time = self.reload.lock().await;
        let declared = self.declared.latest();
        let identity_changed = config.client_identity != declared.identity;
        let servers = if config.enabled { config.servers } else { Vec::new() };
        let old = self.snapshot();
        let mut report = ReloadReport { identity_changed, ..ReloadReport::default() };
        let mut next: Vec<Arc<Slot>> = Vec::with_capacity(servers.len());
        let mut configs = Vec::with_capacity(servers.len());
        // (old slot, whether it is removed rather than replaced)
        let mut retired: Vec<(Arc<Slot>, bool)> = Vec::new();
        let mut in_place = Vec::new();
        for server in servers {
            let server = Arc::new(server);
            let Some(slot) = old.iter().find(|s| s.name == server.name) else {
                report.added.push(server.name.clone());
                next.push(Arc::new(Slot::new(server.clone(), self.events.clone())));
                configs.push(server);
                continue;
            };
            let current = slot.config();
            if *current == *server && !identity_changed {
                next.push(slot.clone());
                configs.push(current);
                continue;
            }
            report.changed.push(server.name.clone());
            if same_connection(&current, &server) && !identity_changed {
                in_place.push((slot.clone(), server.clone()));
                next.push(slot.clone());
            } else {
                retired.push((slot.clone(), false));
                next.push(Arc::new(Slot::new(server.clone(), self.events.clone())));
            }
            configs.push(server);
        }
        for slot in old.iter() {
            if !next.iter().any(|s| s.name == slot.name) {
                report.removed.push(slot.name.clone());
                retired.push((slot.clone(), true));
            }
        }
        if report.is_empty() {
            return report;
        }
        for (slot, config) in in_place {
            slot.set_config(config);
        }
        let _ = declared.next.set(Box::new(Declared {
            identity: config.client_identity,
            servers: configs,
            next: OnceLock::new(),
        }));
        let next: Arc<[Arc<Slot>]> = next.into();
        *self.slots.write().unwrap_or_else(|e| e.into_inner()) = next.clone();
        for (slot, _) in &retired {
            slot.retired.store(true, Ordering::SeqCst);
        }
        tracing::debug!(
            added = report.added.len(),
            removed = report.removed.len(),
            changed = report.changed.len(),
            "MCP configuration reloaded"
        );
        // A replaced server that was supervised is supervised again (and
        // so connected at once).
        for (slot, removed) in &retired {
            let successor = next.iter().find(|s| s.name == slot.name);
            if let Some(new) = successor.filter(|_| !removed && slot.is_supervised()) {
                self.ensure_supervisor(new, false);
            }
        }
        // Only the retired list holds the old slots now (the drain counts
        // references).
        drop(old);
        drop(next);
        let drain = self.options.drain_timeout;
        futures_util::future::join_all(
            retired.into_iter().map(|(slot, removed)| retire(slot, removed, drain)),
        )
        .await;
        report
    }
}

/// Puts a slot still marked `Connecting` back to `Idle` when dropped armed:
/// the connect was abandoned (every other ending sets the health itself, or
/// leaves it to the supervisor, which announces its backoff next).
struct Connecting<'a> {
    slot: &'a Slot,
    armed: AtomicBool,
}

impl Drop for Connecting<'_> {
    fn drop(&mut self) {
        if self.armed.load(Ordering::Relaxed) {
            self.slot.set_health_if(|h| *h == Health::Connecting, Health::Idle);
        }
    }
}

/// Whether two configurations of a server connect the same way: they
/// differ at most in the tool policy and the description (any other
/// setting, present or future, counts as a new connection).
fn same_connection(old: &ServerConfig, new: &ServerConfig) -> bool {
    let mut probe = new.clone();
    probe.policy = old.policy.clone();
    probe.description = old.description.clone();
    probe.pin_policy = old.pin_policy;
    probe == *old
}

/// Takes a removed or replaced server out of service: stops its
/// supervisor, lets its calls in flight finish within `drain`, closes its
/// connection.
async fn retire(slot: Arc<Slot>, removed: bool, drain: Duration) {
    slot.stop_supervisor();
    if removed {
        slot.set_health(Health::Removed);
    } else {
        // Its successor announces the server's health from now on.
        slot.health.send_replace(Health::Removed);
    }
    // Every call holds the slot while it runs: once this is the last
    // reference (the supervisor's goes with its task), none runs.
    let deadline = tokio::time::Instant::now() + drain;
    while Arc::strong_count(&slot) > 1 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(DRAIN_POLL).await;
    }
    let taken = match tokio::time::timeout(CLOSE_LOCK_WAIT, slot.conn.lock()).await {
        Ok(mut cached) => cached.take(),
        // A connect in progress sees the retirement and closes what it
        // made.
        Err(_) => None,
    };
    if let Some((_, conn, _)) = taken {
        close_bounded(&slot.name, conn).await;
    }
}

/// The least time a call that waited for its server keeps for the server
/// to answer.
const MIN_CALL_TIME: Duration = Duration::from_millis(1);

/// How often a reload looks whether a retired server's calls have ended.
const DRAIN_POLL: Duration = Duration::from_millis(10);

/// Whether the connection speaks the stateless revision (2026-07-28).
fn is_modern(conn: &ServerClient) -> bool {
    conn.protocol_version().is_some_and(ProtocolVersion::is_modern)
}

/// A `subscriptions/listen` filter for the resources subscribed through
/// the registry.
fn resources_filter(slot: &Slot) -> SubscriptionFilter {
    let uris = lock(&slot.subscriptions).iter().cloned().collect();
    SubscriptionFilter { resource_subscriptions: Some(uris), ..SubscriptionFilter::default() }
}

/// Keeps `subscription` as the listen stream of connection `generation`
/// (`None`: keeps none), if that is still the slot's connection, and ends
/// the one it replaces before returning (so the server stops sending what
/// is no longer asked for before anything else is sent); otherwise the
/// stream is closed (the newer connection listened to the registry's set
/// when it was made).
async fn keep_listen(slot: &Slot, generation: u64, subscription: Option<Subscription>) {
    let replaced = {
        let cached = slot.conn.lock().await;
        match &*cached {
            Some((g, _, relay)) if *g == generation => {
                relay.set_listen(subscription.map(|s| (slot.name.clone(), s)))
            }
            _ => None,
        }
    };
    if let Some(replaced) = replaced {
        replaced.end().await;
    }
}

/// Subscribes a new connection to the resources subscribed through the
/// registry, within the server's timeout: concurrent `resources/subscribe`
/// requests in the handshake era, one `subscriptions/listen` stream (kept
/// by `relay`) in the stateless era. A refusal is logged (the URI stays
/// remembered).
async fn resubscribe(slot: &Slot, server: &ServerConfig, conn: &ServerClient, relay: &Relay) {
    let uris: Vec<String> = lock(&slot.subscriptions).iter().cloned().collect();
    if uris.is_empty() {
        return;
    }
    if is_modern(conn) {
        match tokio::time::timeout(server.timeout, calls::listen(conn, resources_filter(slot)))
            .await
        {
            Ok(Ok(subscription)) => {
                for uri in subscription.refused() {
                    tracing::warn!(server = %server.name, %uri, "subscribing again was refused");
                }
                // A new connection: no stream to replace.
                let _none = relay.set_listen(Some((server.name.clone(), subscription)));
            }
            Ok(Err(e)) => tracing::warn!(server = %server.name, "subscribing again failed: {e}"),
            Err(_) => tracing::warn!(server = %server.name, "subscribing again timed out"),
        }
        return;
    }
    let all = futures_util::future::join_all(uris.iter().map(|uri| calls::subscribe(conn, uri)));
    match tokio::time::timeout(server.timeout, all).await {
        Ok(results) => {
            for (uri, result) in uris.iter().zip(results) {
                if let Err(e) = result {
                    tracing::warn!(server = %server.name, %uri, "subscribing again failed: {e}");
                }
            }
        }
        Err(_) => tracing::warn!(server = %server.name, "subscribing again timed out"),
    }
}

/// The client calls the registry makes, as boxed futures built in
/// functions generic over the transport. A spawned task's future must be
/// `Send`, and rustc cannot prove that of a future that awaits a
/// `Client<Box<dyn DynTransport<_>>>` call directly (the box's `Transport`
/// impl is for `'static`, and the proof meets an erased lifetime); made
/// generic, the proof is done once for any `T: Transport`. So a host can
/// `tokio::spawn` the registry's calls, and the supervisors can run.
mod calls {
    use std::sync::Arc;

    use mcp_peer::{Client, Subscription, Transport};
    use mcp_proto::client::{BoxFuture, RequestOptions};
    use mcp_proto::types::{
        CallToolResult, InitializeResult, JsonObject, SubscriptionFilter, Tool,
    };
    use mcp_proto::{ProtocolVersion, methods};

    /// A round trip: `ping`, or `server/discover` in the stateless era
    /// (which has no `ping`).
    pub(crate) fn round_trip<T: Transport>(c: &Client<T>) -> BoxFuture<'_, Result<(), T::Error>> {
        Box::pin(async move {
            if c.protocol_version().is_some_and(ProtocolVersion::is_modern) {
                c.request(methods::SERVER_DISCOVER, None, RequestOptions::default()).await.map(drop)
            } else {
                c.ping().await
            }
        })
    }

    pub(crate) fn initialize<T: Transport>(
        c: &Client<T>,
    ) -> BoxFuture<'_, Result<Arc<InitializeResult>, T::Error>> {
        Box::pin(c.initialize())
    }

    pub(crate) fn list_tools<T: Transport>(
        c: &Client<T>,
    ) -> BoxFuture<'_, Result<Arc<[Tool]>, T::Error>> {
        Box::pin(c.list_tools())
    }

    pub(crate) fn call_tool<'a, T: Transport>(
        c: &'a Client<T>,
        tool: &'a str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> BoxFuture<'a, Result<CallToolResult, T::Error>> {
        Box::pin(c.call_tool_with(tool, arguments, options))
    }

    pub(crate) fn subscribe<'a, T: Transport>(
        c: &'a Client<T>,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<(), T::Error>> {
        Box::pin(c.subscribe_resource(uri))
    }

    pub(crate) fn listen<T: Transport>(
        c: &Client<T>,
        filter: SubscriptionFilter,
    ) -> BoxFuture<'_, Result<Subscription, T::Error>> {
        Box::pin(c.listen(filter))
    }

    pub(crate) fn unsubscribe<'a, T: Transport>(
        c: &'a Client<T>,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<(), T::Error>> {
        Box::pin(c.unsubscribe_resource(uri))
    }

    pub(crate) fn close<T: Transport>(c: &Client<T>) -> BoxFuture<'_, Result<(), T::Error>> {
        Box::pin(c.close())
    }
}

pub(crate) use calls::round_trip;

/// Whether the server asks for authorization: only an HTTP server can
/// (stdio servers take credentials from their environment); it is asked by
/// the handshake, whose 401 or 403 carries the challenge.
#[cfg(feature = "http")]
async fn discover_authorization(
    client: &ServerClient,
) -> Result<Option<AuthorizationInfo>, TransportError> {
    // Through the box: the box itself is a transport too.
    let transport: &dyn mcp_peer::DynTransport<TransportError> = &**client.transport();
    if !transport.as_any().is::<HttpTransport>() {
        return Ok(None);
    }
    match calls::initialize(client).await {
        Ok(_) => Ok(None),
        Err(TransportError::Http(e)) => match authorization_info(&e) {
            Some(info) => Ok(Some(info)),
            None => Err(TransportError::Http(e)),
        },
        Err(e) => Err(e),
    }
}

async fn close_bounded(name: &str, conn: ServerClient) {
    match tokio::time::timeout(CLOSE_TIMEOUT, calls::close(&conn)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(server = %name, "closing the MCP connection failed: {e}"),
        Err(_) => tracing::debug!(server = %name, "closing the MCP connection timed out"),
    }
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;
    use crate::LoadOptions;

    /// The configuration's `proxy`, `no_proxy` and `ca_file` become the
    /// HTTP transport's options (which `mcp-http`'s tests exercise against
    /// a proxy and a TLS server of their own).
    #[test]
    fn network_keys_reach_the_http_options() {
        let toml = r#"
[mcp_client]
[[mcp_client.servers]]
name = "a"
endpoint = "https://e.test/mcp"
proxy = " socks5h://u:p@proxy.test:1080 "
no_proxy = ".internal"
ca_file = "/etc/corp/ca.pem"
[[mcp_client.servers]]
name = "b"
endpoint = "https://e.test/mcp"
proxy = "NONE"
[[mcp_client.servers]]
name = "c"
endpoint = "https://e.test/mcp"
"#;
        let loaded = Config::from_toml_str(toml, &LoadOptions::default()).unwrap();
        let connector = DefaultConnector::default();
        let identity = ClientIdentity::default();
        let options = |server: &ServerConfig| {
            let TransportConfig::Http { headers, auth, .. } = &server.transport else {
                panic!("{server:?}")
            };
            connector.http_options(server, &identity, headers, auth, None).unwrap()
        };
        let a = options(&loaded.config.servers[0]);
        assert_eq!(
            a.proxy,
            ProxyConfig::Url {
                url: "socks5h://u:p@proxy.test:1080".into(),
                no_proxy: Some(".internal".into())
            }
        );
        assert_eq!(a.ca_file.as_deref(), Some(std::path::Path::new("/etc/corp/ca.pem")));
        assert_eq!(options(&loaded.config.servers[1]).proxy, ProxyConfig::None);
        let c = options(&loaded.config.servers[2]);
        assert_eq!((c.proxy, c.ca_file), (ProxyConfig::FromEnv, None));
    }
}
