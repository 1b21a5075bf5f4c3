//! The registry: the declared servers, their lazy connections, the tool
//! policy in front of them.

use std::fmt;
use std::sync::Arc;
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
use mcp_http::{HttpClient, HttpOptions, HttpTransport, OAuthHandler, OAuthOptions, StaticAuth};
#[cfg(any(feature = "stdio", feature = "http"))]
use mcp_peer::Client;
use mcp_proto::client::{BoxFuture, Handlers, RequestOptions};
use mcp_proto::types::{CallToolResult, Implementation, InitializeResult, JsonObject, Tool};
use mcp_proto::{Era, ProtocolVersion, methods};

#[cfg(feature = "http")]
use crate::config::{AuthConfig, OAuthConfig};
use crate::config::{ClientIdentity, Config, ServerConfig, TransportConfig};
#[cfg(feature = "http")]
use crate::error::{ConfigError, Location};
use crate::error::{Error, TransportError};
use crate::pins::{MemoryPinStore, PinBook, PinPolicy, PinStore};
#[cfg(any(feature = "stdio", feature = "http"))]
use crate::transport::BoxTransport;
use crate::transport::ServerClient;
#[cfg(feature = "http")]
use crate::transport::{AuthorizationInfo, authorization_info};

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
                    let session = options.client_options();
                    let transport = StdioTransport::spawn(command.clone(), options)
                        .await
                        .map_err(|e| transport_error(e.into()))?;
                    Ok(Client::new(Box::new(transport) as BoxTransport, session))
                }
                #[cfg(feature = "http")]
                TransportConfig::Http { endpoint, headers, auth } => {
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
            let TransportConfig::Http { endpoint, headers, auth: auth @ AuthConfig::OAuth(_) } =
                &server.transport
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
            let TransportConfig::Http { endpoint, headers, auth: auth @ AuthConfig::OAuth(_) } =
                &server.transport
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
            let revocation = match revocation {
                // Discovery failed: without the issuer the stored tokens
                // cannot be found.
                Revocation::Failed(source) if oauth.discovery().is_none() => {
                    return Err(Error::Logout { server: name, source });
                }
                r => r,
            };
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
    /// [`Registry::list_all_tools`] talk to at once (8).
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
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            max_concurrency: 8,
            connector: Arc::new(DefaultConnector::default()),
            login_command: None,
            pin_store: Arc::new(MemoryPinStore::new()),
            pin_policy: PinPolicy::default(),
        }
    }
}

impl RegistryOptions {
    /// Options with this connector.
    pub fn with_connector(connector: impl Connector + 'static) -> Self {
        RegistryOptions { connector: Arc::new(connector), ..Default::default() }
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
/// 2026-07-28) and the server's `serverInfo`.
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
}

impl ServerStatus {
    /// The status of `server` with the connection `conn`, if any.
    fn of(server: &str, conn: Option<&ServerClient>) -> ServerStatus {
        let protocol_version = conn.and_then(|c| c.protocol_version());
        ServerStatus {
            server: server.to_owned(),
            connected: conn.is_some(),
            protocol_version,
            era: protocol_version.map(ProtocolVersion::era),
            server_info: conn.and_then(|c| c.server_info()),
        }
    }
}

type Cached = Option<(u64, ServerClient)>;

#[derive(Debug)]
struct Slot {
    server: ServerConfig,
    /// The connection, once made; held while connecting, so concurrent
    /// first uses share one spawn.
    conn: tokio::sync::Mutex<Cached>,
}

/// The servers a host declared, behind one face.
///
/// Connections are made lazily (first use of a server: spawn or connect,
/// then the handshake) and cached; a server whose connection failed or was
/// lost is connected again on its next use. The tool policy is applied
/// before anything is spawned or sent.
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
    identity: ClientIdentity,
    slots: Vec<Slot>,
    options: RegistryOptions,
    generation: std::sync::atomic::AtomicU64,
    /// Counts [`close_all`](Registry::close_all) calls: a connection made
    /// by a connect that began before one is closed, not kept.
    closes: std::sync::atomic::AtomicU64,
    pins: PinBook,
}

/// How long [`Registry::close_all`] waits for a server whose connection is
/// being made elsewhere before it goes on without it (that connect, when it
/// ends, closes what it made).
const CLOSE_LOCK_WAIT: Duration = Duration::from_secs(2);

impl Registry {
    /// A registry of the configuration's servers (none when it is
    /// disabled). Nothing is spawned or connected yet.
    pub fn new(config: Config, options: RegistryOptions) -> Registry {
        let servers = if config.enabled { config.servers } else { Vec::new() };
        let slots = servers
            .into_iter()
            .map(|server| Slot { server, conn: tokio::sync::Mutex::new(None) })
            .collect();
        let pins = PinBook::new(options.pin_store.clone(), options.pin_policy);
        Registry {
            identity: config.client_identity,
            slots,
            pins,
            options,
            generation: std::sync::atomic::AtomicU64::new(0),
            closes: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The servers, in declaration order.
    pub fn list(&self) -> impl ExactSizeIterator<Item = &ServerConfig> {
        self.slots.iter().map(|s| &s.server)
    }

    /// The server of this name.
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.slot(name).ok().map(|s| &s.server)
    }

    /// How the host introduces itself to servers.
    pub fn client_identity(&self) -> &ClientIdentity {
        &self.identity
    }

    /// Whether a connection to this server is open (cached).
    pub async fn is_connected(&self, name: &str) -> bool {
        match self.slot(name) {
            Ok(slot) => slot.conn.lock().await.is_some(),
            Err(_) => false,
        }
    }

    /// The state of this server's connection (protocol version and era
    /// once connected). Connects nothing: a server not used yet is
    /// reported unconnected.
    pub async fn status(&self, name: &str) -> Result<ServerStatus, Error> {
        let slot = self.slot(name)?;
        let cached = slot.conn.lock().await;
        Ok(ServerStatus::of(&slot.server.name, cached.as_ref().map(|(_, c)| c)))
    }

    /// Every server's [`status`](Self::status), in declaration order.
    /// Connects nothing.
    pub async fn statuses(&self) -> Vec<ServerStatus> {
        let mut all = Vec::with_capacity(self.slots.len());
        for slot in &self.slots {
            let cached = slot.conn.lock().await;
            all.push(ServerStatus::of(&slot.server.name, cached.as_ref().map(|(_, c)| c)));
        }
        all
    }

    fn slot(&self, name: &str) -> Result<&Slot, Error> {
        self.slots
            .iter()
            .find(|s| s.server.name == name)
            .ok_or_else(|| Error::UnknownServer { server: name.to_owned() })
    }

    /// The cached connection, or a new one (spawned or connected, then
    /// initialized), bounded by the server's timeout plus a grace period.
    async fn connection(&self, slot: &Slot) -> Result<(u64, ServerClient), Error> {
        if let Some(missing) = &slot.server.unusable {
            return Err(Error::ServerUnusable {
                server: slot.server.name.clone(),
                missing: missing.clone(),
            });
        }
        let mut cached = slot.conn.lock().await;
        if let Some((generation, conn)) = &*cached {
            return Ok((*generation, conn.clone()));
        }
        let server = &slot.server;
        let limit = server.timeout + CONNECT_GRACE;
        let closes = self.closes.load(std::sync::atomic::Ordering::SeqCst);
        let connect = async {
            let conn = self.options.connector.connect(server, &self.identity).await?;
            conn.initialize().await.map_err(|source| self.transport_error(server, source))?;
            Ok::<_, Error>(conn)
        };
        let conn = match tokio::time::timeout(limit, connect).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(Error::ConnectTimeout { server: server.name.clone(), after: limit });
            }
        };
        if self.closes.load(std::sync::atomic::Ordering::SeqCst) != closes {
            // `close_all` ran meanwhile (and could not wait for this).
            close_bounded(&server.name, conn).await;
            return Err(Error::Closed { server: server.name.clone() });
        }
        let generation = self.generation.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(server = %server.name, "MCP server connected");
        *cached = Some((generation, conn.clone()));
        Ok((generation, conn))
    }

    /// Maps a transport error, dropping the cached connection when it is
    /// gone so the next use reconnects.
    async fn failed(&self, slot: &Slot, generation: u64, source: TransportError) -> Error {
        if source.is_connection_lost() {
            let mut cached = slot.conn.lock().await;
            if cached.as_ref().is_some_and(|(g, _)| *g == generation) {
                tracing::debug!(server = %slot.server.name, "MCP connection lost; will reconnect");
                *cached = None;
            }
        }
        self.transport_error(&slot.server, source)
    }

    /// A transport error of `server`, or [`Error::LoginRequired`] when the
    /// OAuth flow needed the user and nobody was set to ask them.
    fn transport_error(&self, server: &ServerConfig, source: TransportError) -> Error {
        if source.is_login_required() {
            let command =
                self.options.login_command.as_ref().map(|c| c.replace("{server}", &server.name));
            return Error::LoginRequired { server: server.name.clone(), command };
        }
        Error::Transport { server: server.name.clone(), source }
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
        let slot = self.slot(server)?;
        if !slot.server.uses_oauth() {
            return Err(Error::NotOAuth { server: server.to_owned() });
        }
        self.close(server).await?;
        let login = self.options.connector.login(&slot.server, &self.identity, handler);
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
        let slot = self.slot(server)?;
        if !slot.server.uses_oauth() {
            return Err(Error::NotOAuth { server: server.to_owned() });
        }
        self.close(server).await?;
        let logout = self.options.connector.logout(&slot.server, &self.identity);
        match tokio::time::timeout(timeout, logout).await {
            Ok(result) => result,
            Err(_) => Err(Error::LoginTimeout { server: server.to_owned(), after: timeout }),
        }
    }

    /// Connects to the server if needed and returns its `initialize` answer.
    pub async fn initialize(&self, server: &str) -> Result<Arc<InitializeResult>, Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(slot).await?;
        match conn.initialize().await {
            Ok(result) => Ok(result),
            Err(e) => Err(self.failed(slot, generation, e).await),
        }
    }

    /// Every server's `initialize`, at most
    /// [`max_concurrency`](RegistryOptions::max_concurrency) at once, in
    /// declaration order; one server's failure does not affect the others.
    pub async fn initialize_all(&self) -> Vec<ServerResult<Arc<InitializeResult>>> {
        self.fan_out(|name| self.initialize(name)).await
    }

    /// The server's tools that its policy allows, less those withheld by
    /// tool pinning (a definition that changed since it was pinned, under
    /// [`PinPolicy::Block`]; see [`list_tools_with_pins`](Self::list_tools_with_pins)).
    pub async fn list_tools(&self, server: &str) -> Result<Vec<Tool>, Error> {
        let (config, tools) = self.allowed_tools(server).await?;
        self.pins.visible(config, tools)
    }

    /// The server's tools that its policy allows, before pinning.
    pub(crate) async fn allowed_tools(
        &self,
        server: &str,
    ) -> Result<(&ServerConfig, Vec<Tool>), Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(slot).await?;
        match conn.list_tools().await {
            Ok(tools) => Ok((
                &slot.server,
                tools.iter().filter(|t| slot.server.policy.is_allowed(&t.name)).cloned().collect(),
            )),
            Err(e) => Err(self.failed(slot, generation, e).await),
        }
    }

    pub(crate) fn pin_book(&self) -> &PinBook {
        &self.pins
    }

    /// Every server's allowed tools, concurrently (bounded), in declaration
    /// order; a server that fails is reported beside the others' results.
    pub async fn list_all_tools(&self) -> Vec<ServerResult<Vec<Tool>>> {
        self.fan_out(|name| self.list_tools(name)).await
    }

    async fn fan_out<'a, T, F, Fut>(&'a self, op: F) -> Vec<ServerResult<T>>
    where
        F: Fn(&'a str) -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>> + 'a,
    {
        let limit = self.options.max_concurrency.max(1);
        futures_util::stream::iter(self.slots.iter().map(|slot| {
            let name = slot.server.name.as_str();
            let fut = op(name);
            async move { ServerResult { server: name.to_owned(), result: fut.await } }
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
    /// result, not an `Err`.
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        let slot = self.slot(server)?;
        let tool = tool.trim();
        if !slot.server.policy.is_allowed(tool) {
            return Err(Error::ToolNotAllowed { server: server.to_owned(), tool: tool.to_owned() });
        }
        let (generation, conn) = self.connection(slot).await?;
        let tools = match conn.list_tools().await {
            Ok(tools) => tools,
            Err(e) => return Err(self.failed(slot, generation, e).await),
        };
        let Some(definition) = tools.iter().find(|t| t.name == tool) else {
            return Err(Error::UnknownTool { server: server.to_owned(), tool: tool.to_owned() });
        };
        self.pins.check_call(&slot.server, definition)?;
        match conn.call_tool_with(tool, arguments, options).await {
            Ok(result) => Ok(result),
            Err(e) => Err(self.failed(slot, generation, e).await),
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
        let (generation, conn) = self.connection(slot).await?;
        match op(conn).await {
            Ok(value) => Ok(value),
            Err(e) => Err(self.failed(slot, generation, e).await),
        }
    }

    /// A round trip (connecting first if needed): `ping`, or for a server
    /// of the stateless era, which has no `ping`, `server/discover`.
    pub async fn ping(&self, server: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let (generation, conn) = self.connection(slot).await?;
        let result = if conn.protocol_version().is_some_and(ProtocolVersion::is_modern) {
            conn.request(methods::SERVER_DISCOVER, None, RequestOptions::default()).await.map(drop)
        } else {
            conn.ping().await
        };
        match result {
            Ok(()) => Ok(()),
            Err(e) => Err(self.failed(slot, generation, e).await),
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
        let probe_server;
        let config = if slot.server.uses_oauth() {
            let mut s = slot.server.clone();
            if let TransportConfig::Http { auth, .. } = &mut s.transport {
                *auth = AuthConfig::None;
            }
            probe_server = s;
            &probe_server
        } else {
            if let Some((_, conn)) = &*slot.conn.lock().await {
                let conn = conn.clone();
                return discover_authorization(&conn)
                    .await
                    .map_err(|source| Error::Transport { server: server.to_owned(), source });
            }
            &slot.server
        };
        let limit = config.timeout + CONNECT_GRACE;
        let probe = async {
            let conn = self.options.connector.connect(config, &self.identity).await?;
            let found = discover_authorization(&conn)
                .await
                .map_err(|source| Error::Transport { server: server.to_owned(), source })?;
            let _ = conn.close().await;
            Ok::<_, Error>(found)
        };
        match tokio::time::timeout(limit, probe).await {
            Ok(result) => result,
            Err(_) => Err(Error::ConnectTimeout { server: server.to_owned(), after: limit }),
        }
    }

    /// Closes one server's connection, if open (it reconnects on next use).
    pub async fn close(&self, server: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let taken = slot.conn.lock().await.take();
        if let Some((_, conn)) = taken {
            close_bounded(&slot.server.name, conn).await;
        }
        Ok(())
    }

    /// Closes every open connection, concurrently, each within a bound.
    pub async fn close_all(&self) {
        self.closes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut open = Vec::new();
        for slot in &self.slots {
            // A connect in progress holds the slot; it is not waited for
            // long (its caller may have been abandoned): when it ends it
            // sees the close and closes what it made.
            match tokio::time::timeout(CLOSE_LOCK_WAIT, slot.conn.lock()).await {
                Ok(mut cached) => {
                    if let Some((_, conn)) = cached.take() {
                        open.push((slot.server.name.as_str(), conn));
                    }
                }
                Err(_) => {
                    tracing::debug!(server = %slot.server.name, "not waiting for a connection being made")
                }
            }
        }
        futures_util::future::join_all(
            open.into_iter().map(|(name, conn)| close_bounded(name, conn)),
        )
        .await;
    }
}

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
    match client.initialize().await {
        Ok(_) => Ok(None),
        Err(TransportError::Http(e)) => match authorization_info(&e) {
            Some(info) => Ok(Some(info)),
            None => Err(TransportError::Http(e)),
        },
        Err(e) => Err(e),
    }
}

async fn close_bounded(name: &str, conn: ServerClient) {
    match tokio::time::timeout(CLOSE_TIMEOUT, conn.close()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(server = %name, "closing the MCP connection failed: {e}"),
        Err(_) => tracing::debug!(server = %name, "closing the MCP connection timed out"),
    }
}
