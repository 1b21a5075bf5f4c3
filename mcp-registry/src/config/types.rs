//! The declared server set's types: the shape both formats load into.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_proto::types::Implementation;
use mcp_spawn_env::ServerCommand;

use crate::error::MissingVariable;
use crate::pins::PinPolicy;
use crate::policy::ToolPolicy;

/// The default request timeout of a server (30 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest `timeout_secs` accepted (one day).
pub(super) const MAX_TIMEOUT_SECS: u64 = 86_400;

/// A credential: shown as `<redacted>` by `Debug`, never displayed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub(super) String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for the transport that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How the host introduces itself to servers (`clientInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    /// The programmatic name.
    pub name: String,
    /// A display name.
    pub title: Option<String>,
    /// The host's version.
    pub version: String,
}

impl ClientIdentity {
    /// An identity with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientIdentity { name: name.into(), title: None, version: version.into() }
    }

    /// The `clientInfo` sent in `initialize`.
    pub fn to_implementation(&self) -> Implementation {
        let mut imp = Implementation::new(self.name.clone(), self.version.clone());
        imp.title = self.title.clone();
        imp
    }
}

impl Default for ClientIdentity {
    fn default() -> Self {
        ClientIdentity::new("mcp-registry", env!("CARGO_PKG_VERSION"))
    }
}

/// The OAuth settings of a server (`auth = { kind = "oauth", ... }`).
///
/// [`DefaultConnector`](crate::DefaultConnector) maps it onto `mcp-http`'s
/// OAuth options (the flow is `mcp-auth`'s; feature `http`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// A pre-registered client id (`client_id`).
    pub client_id: Option<String>,
    /// Its secret (`client_secret` or `client_secret_env`).
    pub client_secret: Option<Secret>,
    /// The scopes to ask for (`scopes`) when the server's challenge names
    /// none, instead of everything its metadata lists (`mcp-auth`'s
    /// `OAuthConfig::scopes`).
    pub scopes: Vec<String>,
    /// A Client ID Metadata Document URL (`client_metadata_url`).
    pub client_metadata_url: Option<String>,
    /// The redirect URI to register (`redirect_uri`); with `mcpc login`,
    /// the loopback URI listened on (a client pre-registered with one
    /// exact URI).
    pub redirect_uri: Option<String>,
    /// The loopback redirect port (`redirect_port`):
    /// `http://127.0.0.1:PORT/callback` when no `redirect_uri` is given.
    pub redirect_port: Option<u16>,
    /// The RFC 8707 `resource` parameter (`resource`: `false` leaves it
    /// out, a string replaces it).
    pub resource: OAuthResource,
    /// The authorization server metadata URL (`metadata_url`), read
    /// instead of the well-known ones.
    pub metadata_url: Option<String>,
    /// More authorization request parameters (`authorization_params =
    /// { prompt = "consent", audience = "..." }`).
    pub authorization_params: Vec<(String, String)>,
    /// `scopes` asked for whatever the server's challenge names
    /// (`scopes_override = true`).
    pub scopes_override: bool,
    /// Which addresses the OAuth requests may reach (`address_policy`:
    /// `"same_network"`, the default, `"allow_private"` or `"allow_all"`).
    pub address_policy: OAuthAddressPolicy,
    /// When tokens are DPoP-bound (`dpop`: `"when_required"`, the
    /// default, `"always"` or `"never"`).
    pub dpop: OAuthDpop,
    /// Ask for `offline_access` (refresh tokens) when offered
    /// (`offline_access`, default `true`).
    pub offline_access: bool,
    /// Whose tokens (`account`, a label such as `"work"`; unset: the
    /// default account): each account logs in and keeps its tokens apart.
    pub account: Option<String>,
}

/// The SSRF guard of a server's OAuth requests (`address_policy`); the
/// HTTP transport's `AddressPolicy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthAddressPolicy {
    /// Public addresses and the classes of the MCP server's own
    /// (`"same_network"`).
    #[default]
    SameNetwork,
    /// Private networks too (`"allow_private"`).
    AllowPrivate,
    /// No check (`"allow_all"`).
    AllowAll,
}

/// When a server's tokens are DPoP-bound (`dpop`); `mcp-auth`'s
/// `DpopMode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthDpop {
    /// When the server requires it (`"when_required"`).
    #[default]
    WhenRequired,
    /// Always (`"always"`).
    Always,
    /// Never (`"never"`).
    Never,
}

impl OAuthConfig {
    /// The loopback redirect URI a login listens on: `redirect_uri`, else
    /// `http://127.0.0.1:<redirect_port>/callback`; `None`: any free port.
    pub fn loopback_redirect_uri(&self) -> Option<String> {
        self.redirect_uri
            .clone()
            .or_else(|| self.redirect_port.map(|p| format!("http://127.0.0.1:{p}/callback")))
    }
}

/// What the `resource` parameter of a server's OAuth requests carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthResource {
    /// The server's own (the specification's rule; no `resource` key).
    #[default]
    Server,
    /// None (`resource = false`), for authorization servers that refuse
    /// it.
    Omit,
    /// This value (`resource = "api://..."`).
    Value(String),
}

/// How a remote server is authenticated (`auth`, tagged by `kind`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthConfig {
    /// `kind = "none"` (or no `auth`).
    #[default]
    None,
    /// `kind = "bearer_token"`: `token` or `token_env`.
    Bearer {
        /// The token.
        token: Secret,
    },
    /// `kind = "basic"`: `username` (or `username_env`), `password` (or
    /// `password_env`).
    Basic {
        /// The user name.
        username: String,
        /// The password.
        password: Secret,
    },
    /// `kind = "header"`: `name`, `value` (or `value_env`).
    Header {
        /// The header name.
        name: String,
        /// Its value.
        value: Secret,
    },
    /// `kind = "headers"`: `headers = { Name = "value" }` and/or
    /// `headers_env = { Name = "VARIABLE" }`.
    Headers(Vec<(String, Secret)>),
    /// `kind = "query_param"`: `name`, `value` (or `value_env`).
    QueryParam {
        /// The parameter name.
        name: String,
        /// Its value.
        value: Secret,
    },
    /// `kind = "oauth"` (boxed: the largest settings by far).
    OAuth(Box<OAuthConfig>),
}

/// How to reach a server.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub enum TransportConfig {
    /// Spawn it and talk over stdio. Read whatever the features;
    /// [`DefaultConnector`](crate::DefaultConnector) connects it with the
    /// `stdio` feature.
    Stdio(ServerCommand),
    /// Streamable HTTP (with the 2024-11-05 HTTP+SSE fallback). Read
    /// whatever the features; [`DefaultConnector`](crate::DefaultConnector)
    /// connects it with the `http` feature.
    Http {
        /// The endpoint URL, used verbatim.
        endpoint: String,
        /// Extra headers sent with every request (`headers`).
        headers: Vec<(String, Secret)>,
        /// Credentials.
        auth: AuthConfig,
        /// The proxy and extra CA roots (`proxy`, `no_proxy`, `ca_file`).
        network: HttpNetwork,
    },
}

/// How an HTTP server is reached: the proxy, the certificates trusted
/// besides the platform's, and the command that makes headers at run time.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpNetwork {
    /// The command whose output gives headers for the requests
    /// (`headers_helper`).
    pub headers_helper: Option<HeadersHelper>,
    /// The proxy (`proxy`): `http://`, `https://`, `socks5://` or
    /// `socks5h://[user:password@]host:port`, or `none` for no proxy at
    /// all; unset, the environment's (`HTTPS_PROXY`, `ALL_PROXY`, ...).
    /// A secret: it may hold credentials.
    pub proxy: Option<Secret>,
    /// Hosts that bypass `proxy`, in `NO_PROXY` syntax (`no_proxy`).
    pub no_proxy: Option<String>,
    /// A PEM file of CA certificates trusted besides the platform's
    /// (`ca_file`; relative to the configuration file's folder when loaded
    /// from a file).
    pub ca_file: Option<PathBuf>,
}

impl fmt::Debug for HttpNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpNetwork")
            .field("proxy", &self.proxy.as_ref().map(|_| "<redacted>"))
            .field("no_proxy", &self.no_proxy)
            .field("ca_file", &self.ca_file)
            .field("headers_helper", &self.headers_helper)
            .finish()
    }
}

/// A command that prints headers for a server's requests
/// (`headers_helper = { command = "...", args = [...], timeout_secs = 10 }`):
/// run at connect, at each reconnect, and once more when the server
/// refuses its headers with 401 or 403. Its stdout is a JSON object of
/// header names to values (or `{"headers": {...}, "expires_in": SECONDS}`,
/// which also says how long they may be reused), or `Name: value` lines.
/// Its output and error stream are never shown or logged.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeadersHelper {
    /// The program (looked up in `PATH`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// How long one run may take (`timeout_secs`, default 10 s); it is
    /// killed beyond.
    pub timeout: Duration,
    /// The largest output accepted, in bytes (`max_output_bytes`, default
    /// 64 KiB).
    pub max_output: usize,
}

impl HeadersHelper {
    /// The default bound of one run.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default bound of the output.
    pub const DEFAULT_MAX_OUTPUT: usize = 64 * 1024;

    /// `command` with `args`, and the default bounds.
    pub fn new(command: impl Into<String>, args: Vec<String>) -> Self {
        HeadersHelper {
            command: command.into(),
            args,
            timeout: Self::DEFAULT_TIMEOUT,
            max_output: Self::DEFAULT_MAX_OUTPUT,
        }
    }
}

impl fmt::Debug for TransportConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Environment values are often secrets: show the names only.
            TransportConfig::Stdio(c) => f
                .debug_struct("Stdio")
                .field("command", &c.command)
                .field("args", &c.args)
                .field("env", &c.env.keys().collect::<Vec<_>>())
                .field("cwd", &c.cwd)
                .finish(),
            TransportConfig::Http { endpoint, headers, auth, network } => f
                .debug_struct("Http")
                .field("endpoint", &redact_endpoint(endpoint))
                .field("headers", &headers.iter().map(|(n, _)| n).collect::<Vec<_>>())
                .field("auth", auth)
                .field("network", network)
                .finish(),
        }
    }
}

/// The endpoint as scheme and `host[:port]` (`mcp-http`'s redaction);
/// without the `http` feature, nothing of it.
fn redact_endpoint(endpoint: &str) -> String {
    #[cfg(feature = "http")]
    return mcp_http::redact_endpoint(endpoint);
    #[cfg(not(feature = "http"))]
    {
        let _ = endpoint;
        "<redacted>".to_owned()
    }
}

/// One server of the set.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Its name, unique in the set.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// How to reach it.
    pub transport: TransportConfig,
    /// Which tools may be listed and called.
    pub policy: ToolPolicy,
    /// The request timeout (`timeout_secs`, default 30).
    pub timeout: Duration,
    /// What a tool definition that changed since it was pinned does
    /// (`pin_policy`); `None`: the registry's default
    /// ([`RegistryOptions::pin_policy`](crate::RegistryOptions::pin_policy)).
    pub pin_policy: Option<PinPolicy>,
    /// The protocol revision the server is spoken to in (`protocol`);
    /// `None` (`"auto"`, the default): found out by the era probe. A
    /// handshake-era revision sends `initialize` offering it, with no
    /// probe (for servers that stop on a request they do not know); a
    /// stateless-era one speaks that era only.
    pub protocol: Option<ProtocolVersion>,
    /// The most characters of text a result of this server may give a
    /// model (`max_result_chars`); `None`: the registry's default
    /// ([`RegistryOptions::result_limits`](crate::RegistryOptions::result_limits)).
    pub max_result_chars: Option<usize>,
    /// The most bytes of binary content a result of this server may give
    /// a model (`max_result_bytes`); `None`: the registry's default.
    pub max_result_bytes: Option<u64>,
    /// Set when the entry refers to an environment variable that is not
    /// set: the server is listed but every use of it fails with
    /// [`Error::ServerUnusable`](crate::Error::ServerUnusable) (the other
    /// servers are not affected). Its values that came from the missing
    /// variable are empty.
    pub unusable: Option<MissingVariable>,
}

impl ServerConfig {
    /// A stdio server, with the default policy and timeout.
    pub fn stdio(name: impl Into<String>, command: ServerCommand) -> Self {
        ServerConfig::new(name, TransportConfig::Stdio(command))
    }

    /// A Streamable HTTP server without credentials, with the default
    /// policy and timeout.
    pub fn http(name: impl Into<String>, endpoint: impl Into<String>) -> Self {
        ServerConfig::new(
            name,
            TransportConfig::Http {
                endpoint: endpoint.into(),
                headers: Vec::new(),
                auth: AuthConfig::None,
                network: HttpNetwork::default(),
            },
        )
    }

    /// A server reached through `transport`, with the default policy and
    /// timeout.
    pub fn new(name: impl Into<String>, transport: TransportConfig) -> Self {
        ServerConfig {
            name: name.into(),
            description: None,
            transport,
            policy: ToolPolicy::default(),
            timeout: DEFAULT_TIMEOUT,
            pin_policy: None,
            protocol: None,
            max_result_chars: None,
            max_result_bytes: None,
            unusable: None,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the tool policy.
    pub fn with_policy(mut self, policy: ToolPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets the request timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the pin policy (instead of the registry's default).
    pub fn with_pin_policy(mut self, policy: PinPolicy) -> Self {
        self.pin_policy = Some(policy);
        self
    }

    /// Pins the protocol revision (instead of the era probe).
    pub fn with_protocol(mut self, version: ProtocolVersion) -> Self {
        self.protocol = Some(version);
        self
    }

    /// Whether the server is spawned (stdio) rather than reached over HTTP.
    pub fn is_stdio(&self) -> bool {
        matches!(self.transport, TransportConfig::Stdio(_))
    }

    /// Whether the server uses OAuth.
    pub fn uses_oauth(&self) -> bool {
        self.oauth().is_some()
    }

    /// Its OAuth settings, when it uses OAuth.
    pub fn oauth(&self) -> Option<&OAuthConfig> {
        match &self.transport {
            TransportConfig::Http { auth: AuthConfig::OAuth(oauth), .. } => Some(oauth),
            _ => None,
        }
    }
}

/// The whole declared set.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `mcp_client.enabled`: false gives an empty registry.
    pub enabled: bool,
    /// How the host introduces itself.
    pub client_identity: ClientIdentity,
    /// The enabled servers, in declaration order (host defaults first).
    pub servers: Vec<ServerConfig>,
    /// `mcp_client.token_store` and `mcp_client.keychain_service`: where
    /// OAuth tokens are kept ([`TokenStoreConfig::open`](crate::TokenStoreConfig::open)).
    /// Feature `http` (without it the keys are read and not used).
    #[cfg(feature = "http")]
    pub token_store: crate::TokenStoreConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            client_identity: ClientIdentity::default(),
            servers: Vec::new(),
            #[cfg(feature = "http")]
            token_store: crate::TokenStoreConfig::default(),
        }
    }
}
