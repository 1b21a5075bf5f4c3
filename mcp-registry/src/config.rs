//! The declared server set: types, and loading from TOML or `mcpServers`
//! JSON.
//!
//! Both formats are read into one JSON value tree first and then walked by
//! one validator, so every rule (names, targets, unknown keys, duplicates,
//! secrets from the environment) holds the same way for both.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_proto::types::Implementation;
use mcp_spawn_env::ServerCommand;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{ConfigError, Location, MissingVariable, Warning, WarningKind};
use crate::pins::PinPolicy;
use crate::policy::ToolPolicy;

pub(crate) mod jsonc;
mod vscode;

pub use vscode::{InputKind, InputLookup, InputRequest, input_variable};

/// The default request timeout of a server (30 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest `timeout_secs` accepted (one day).
const MAX_TIMEOUT_SECS: u64 = 86_400;

/// A credential: shown as `<redacted>` by `Debug`, never displayed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

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

/// Looks up an environment variable (the process's by default; tests and
/// hosts may pass their own).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How a configuration is loaded.
#[derive(Clone)]
pub struct LoadOptions {
    /// Unknown keys and incomplete entries are errors rather than warnings.
    pub strict: bool,
    /// The identity used where the file does not say (per field).
    pub client_identity: ClientIdentity,
    /// Servers the host always has (as a host seeds its own docs server);
    /// an entry of the same name in the file replaces one, in place.
    pub defaults: Vec<ServerConfig>,
    /// Where `*_env` references and `${env:NAME}` are looked up.
    pub env: EnvLookup,
    /// Supplies `${input:ID}` values of a JSON file's `inputs` (a host asks
    /// on a terminal); `None`: only [`input_env_prefix`](Self::input_env_prefix).
    pub inputs: Option<InputLookup>,
    /// The environment variables that supply inputs, before
    /// [`inputs`](Self::inputs) is asked: this prefix and the input's id
    /// ([`input_variable`]). `None`: inputs never come from the
    /// environment.
    pub input_env_prefix: Option<String>,
    /// What `${workspaceFolder}` names; `None`: [`Config::load`] takes the
    /// folder holding a `.vscode/` or `.cursor/` file, else the file's
    /// folder (from text, without a path, it is an error to use it).
    pub workspace_folder: Option<PathBuf>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            strict: false,
            client_identity: ClientIdentity::default(),
            defaults: Vec::new(),
            env: Arc::new(|name| std::env::var(name).ok()),
            inputs: None,
            input_env_prefix: None,
            workspace_folder: None,
        }
    }
}

impl fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadOptions")
            .field("strict", &self.strict)
            .field("client_identity", &self.client_identity)
            .field("defaults", &self.defaults)
            .field("inputs", &self.inputs.as_ref().map(|_| "<callback>"))
            .field("input_env_prefix", &self.input_env_prefix)
            .field("workspace_folder", &self.workspace_folder)
            .finish_non_exhaustive()
    }
}

/// A loaded configuration and the problems that did not stop it loading.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The configuration.
    pub config: Config,
    /// Unknown keys, skipped entries, replaced duplicates, ignored values.
    pub warnings: Vec<Warning>,
}

impl Config {
    /// Reads a file. The format is told from the content: text that starts
    /// with `{` is JSON (`mcpServers`, `servers`, or the `mcp_client`
    /// shape), anything else TOML; an empty file is the JSON it is named
    /// after (`.json`) or TOML. Errors and warnings name the file and, where
    /// it can be found, the line (and for syntax errors the column).
    pub fn load(path: &Path, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: PathBuf::from(path), source })?;
        let named_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let format = Format::detect(&text, named_json);
        // Comments are blanked out in place: lines found in the plain
        // text are the file's.
        let text = match format {
            Format::Json => jsonc::strip(&text).into_owned(),
            Format::Toml => text,
        };
        let with_folder;
        let options = if options.workspace_folder.is_none() {
            let folder = vscode::workspace_of(&std::path::absolute(path).unwrap_or(path.into()));
            with_folder = LoadOptions { workspace_folder: Some(folder), ..options.clone() };
            &with_folder
        } else {
            options
        };
        match format.parse(&text, options) {
            Ok(mut loaded) => {
                // A relative `ca_file` is the configuration's neighbour.
                let folder = path.parent().unwrap_or(Path::new(""));
                for server in &mut loaded.config.servers {
                    if let TransportConfig::Http { network, .. } = &mut server.transport
                        && let Some(ca_file) = &mut network.ca_file
                        && ca_file.is_relative()
                    {
                        *ca_file = folder.join(&*ca_file);
                    }
                }
                for warning in &mut loaded.warnings {
                    warning.path = Some(path.to_owned());
                    warning.line = locate(&text, format, &warning.location);
                }
                Ok(loaded)
            }
            Err(ConfigError::Syntax { format, line, column, message, .. }) => {
                Err(ConfigError::Syntax {
                    format,
                    path: Some(path.to_owned()),
                    line,
                    column,
                    message,
                })
            }
            Err(e) => {
                let line = match &e {
                    ConfigError::Invalid { location, .. }
                    | ConfigError::MissingEnv { location, .. } => locate(&text, format, location),
                    ConfigError::MissingInput(missing) => locate(&text, format, &missing.location),
                    _ => None,
                };
                Err(ConfigError::InFile { path: path.to_owned(), line, source: Box::new(e) })
            }
        }
    }

    /// Parses text in either format, told from the content as
    /// [`load`](Self::load) does (text starting with `{` is JSON).
    pub fn from_str_detected(text: &str, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        Format::detect(text, false).parse(text, options)
    }

    /// Parses TOML with an `[mcp_client]` table (other top-level tables are
    /// the host's and are ignored; no `[mcp_client]` means no servers but
    /// the host's defaults). An empty text, or a server list outside
    /// `[mcp_client]` (`[[servers]]`), loads with a warning
    /// ([`WarningKind::NoServers`], [`WarningKind::MisplacedServers`]).
    pub fn from_toml_str(text: &str, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        let root: Value = toml::from_str(text).map_err(|e| {
            let position = e.span().map(|s| position_of(text, s.start));
            ConfigError::Syntax {
                format: "TOML",
                path: None,
                line: position.map(|p| p.0),
                column: position.map(|p| p.1),
                message: e.message().trim().to_owned(),
            }
        })?;
        let mut ctx = Ctx::new(options);
        let config = match root.get("mcp_client") {
            Some(client) => ctx.client(client)?,
            None => {
                let misplaced = ["servers", "mcp_servers", "mcpServers"]
                    .into_iter()
                    .find(|key| root.get(key).is_some());
                if let Some(key) = misplaced {
                    ctx.warn(
                        WarningKind::MisplacedServers,
                        Location::top(key),
                        format!(
                            "`{key}` is not read: servers go in `[[mcp_client.servers]]` \
                             (under `[mcp_client]`), so no servers are declared"
                        ),
                    );
                } else if root.as_object().is_none_or(Map::is_empty) {
                    ctx.warn(
                        WarningKind::NoServers,
                        Location::default(),
                        "the configuration is empty: it declares no servers".into(),
                    );
                }
                ctx.finish_servers(Vec::new(), true)?
            }
        };
        Ok(Loaded { config, warnings: ctx.warnings })
    }

    /// Parses the JSON other hosts write: `{"mcpServers": {NAME: {...}}}`
    /// (Claude Desktop, Cursor), `{"servers": {...}}` (VS Code), or JSON in
    /// the `mcp_client` shape. Other top-level keys are ignored; JSON with
    /// none of these keys (or an empty text) loads with a
    /// [`WarningKind::NoServers`] warning. Comments (`//`, `/* */`) and
    /// trailing commas are accepted, as VS Code and Cursor write them.
    ///
    /// An entry has `command`, `args`, `env`, `cwd` (stdio) or `url`,
    /// `type`, `headers` (HTTP); also `disabled` or `enabled`,
    /// `description`, `allowed_tools`, `disallowed_tools`, `timeout_secs`,
    /// `pin_policy`, `max_result_chars`, `max_result_bytes`. `${NAME}`, `${env:NAME}` and `${NAME:-default}` in
    /// every string value are replaced by the variable.
    pub fn from_json_str(text: &str, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        if text.trim().is_empty() {
            let mut ctx = Ctx::new(options);
            ctx.warn(
                WarningKind::NoServers,
                Location::default(),
                "the configuration is empty: it declares no servers".into(),
            );
            let config = ctx.finish_servers(Vec::new(), true)?;
            return Ok(Loaded { config, warnings: ctx.warnings });
        }
        let text = jsonc::strip(text);
        let root: JsonRoot = serde_json::from_str(&text).map_err(|e| ConfigError::Syntax {
            format: "JSON",
            path: None,
            line: Some(e.line()).filter(|l| *l > 0),
            column: Some(e.column()).filter(|c| *c > 0 && e.line() > 0),
            message: json_message(&e),
        })?;
        let mut ctx = Ctx::new(options);
        let config = if let Some(client) = &root.mcp_client {
            ctx.client(client)?
        } else {
            // The hosts' variables: `${input:ID}`, `${workspaceFolder}`, ...
            ctx.host = Some(vscode::HostVars::new(root.inputs.as_ref())?);
            if root.mcp_servers.is_none() && root.servers.is_none() {
                ctx.warn(
                    WarningKind::NoServers,
                    Location::default(),
                    "no `mcpServers`, `servers` or `mcp_client` key: no servers are declared"
                        .into(),
                );
            }
            let mut servers = Vec::new();
            for (index, (name, entry)) in
                root.mcp_servers.iter().chain(root.servers.iter()).flat_map(|m| &m.0).enumerate()
            {
                if let Some(server) = ctx.json_entry(index, name, entry)? {
                    servers.push(server);
                }
            }
            ctx.finish_servers(servers, true)?
        };
        Ok(Loaded { config, warnings: ctx.warnings })
    }
}

/// A configuration's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Toml,
    Json,
}

impl Format {
    /// JSON when the text starts with `{` (TOML never does), or when it is
    /// empty and named `.json`; TOML otherwise.
    fn detect(text: &str, named_json: bool) -> Format {
        let start = text.trim_start_matches('\u{feff}').trim_start();
        match start.chars().next() {
            Some('{') => Format::Json,
            None if named_json => Format::Json,
            _ => Format::Toml,
        }
    }

    fn parse(self, text: &str, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        match self {
            Format::Toml => Config::from_toml_str(text, options),
            Format::Json => Config::from_json_str(text, options),
        }
    }
}

/// The line of a location in a configuration's text, found by its shape:
/// the server's entry (the n-th `[[mcp_client.servers]]`, or the JSON key
/// of its name), then the first part of the key within it. `None` when it
/// cannot be found.
fn locate(text: &str, format: Format, location: &Location) -> Option<usize> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let first_key = location.key.as_deref().map(|k| k.split('.').next().unwrap_or(k));
    let (start, end) = match (format, &location.server, location.index) {
        (Format::Toml, _, Some(index)) => {
            let headers: Vec<usize> = (0..lines.len())
                .filter(|&i| {
                    let compact: String = lines[i].chars().filter(|c| !c.is_whitespace()).collect();
                    compact.starts_with("[[mcp_client.servers]]")
                })
                .collect();
            let start = *headers.get(index)?;
            let end = (start + 1..lines.len())
                .find(|&i| lines[i].trim_start().starts_with('['))
                .unwrap_or(lines.len());
            (start, end)
        }
        (Format::Json, Some(name), _) => {
            let quoted = serde_json::to_string(name).ok()?;
            let start = (0..lines.len()).find(|&i| {
                lines[i]
                    .split(&quoted)
                    .nth(1)
                    .is_some_and(|after| after.trim_start().starts_with(':'))
            })?;
            (start, lines.len())
        }
        (_, None, None) => {
            let key = location.key.as_deref()?;
            let last = key.rsplit('.').next().unwrap_or(key);
            let found = (0..lines.len()).find(|&i| key_at(lines[i], last, format))?;
            return Some(found + 1);
        }
        _ => return None,
    };
    if let Some(key) = first_key
        && let Some(i) = (start..end).find(|&i| key_at(lines[i], key, format))
    {
        return Some(i + 1);
    }
    Some(start + 1)
}

/// Whether a line sets `key` (`key = ...`, `key.x = ...` in TOML;
/// `"key": ...` in JSON).
fn key_at(line: &str, key: &str, format: Format) -> bool {
    match format {
        Format::Toml => line.trim_start().strip_prefix(key).is_some_and(|after| {
            let after = after.trim_start();
            after.starts_with('=') || after.starts_with('.')
        }),
        Format::Json => line
            .split(&format!("\"{key}\""))
            .nth(1)
            .is_some_and(|after| after.trim_start().starts_with(':')),
    }
}

/// The top level of a JSON file, keeping the order of the server maps.
#[derive(Deserialize)]
struct JsonRoot {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<Ordered>,
    servers: Option<Ordered>,
    mcp_client: Option<Value>,
    /// VS Code's `inputs` (`${input:ID}`).
    inputs: Option<Value>,
}

/// A JSON object as its entries in document order.
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of servers")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// serde_json's message without the position (given separately) and
/// without quoting the input.
pub(crate) fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// The 1-based line and column (in characters) of a byte offset.
fn position_of(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or(before).chars().count() + 1;
    (line, column)
}

/// `[mcp_client]` keys; the trust tables are read by `trust::settings`.
const CLIENT_KEYS: &[&str] = &[
    "enabled",
    "client_identity",
    "servers",
    "approval",
    "audit",
    "token_store",
    "keychain_service",
];
const IDENTITY_KEYS: &[&str] = &["name", "title", "version"];
const SERVER_KEYS: &[&str] = &[
    "name",
    "endpoint",
    "command",
    "args",
    "env",
    "cwd",
    "description",
    "enabled",
    "allowed_tools",
    "disallowed_tools",
    "timeout_secs",
    "headers",
    "auth",
    "pin_policy",
    "protocol",
    "max_result_chars",
    "max_result_bytes",
    "proxy",
    "no_proxy",
    "ca_file",
    "headers_helper",
];
const JSON_SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "type",
    "headers",
    "disabled",
    "enabled",
    "description",
    "allowed_tools",
    "disallowed_tools",
    "timeout_secs",
    "pin_policy",
    "protocol",
    "max_result_chars",
    "max_result_bytes",
    "dev",
    "gallery",
];

/// The validator's state: options and the warnings so far.
struct Ctx<'a> {
    options: &'a LoadOptions,
    warnings: Vec<Warning>,
    /// The first variable the current entry refers to that is not set.
    missing: Option<MissingVariable>,
    /// The hosts' variables, in their JSON only.
    host: Option<vscode::HostVars>,
}

/// Where an entry is, for messages.
#[derive(Clone)]
struct Entry {
    index: usize,
    name: Option<String>,
}

impl Entry {
    fn at(&self, key: impl Into<String>) -> Location {
        Location { server: self.name.clone(), index: Some(self.index), key: Some(key.into()) }
    }

    fn whole(&self) -> Location {
        Location { server: self.name.clone(), index: Some(self.index), key: None }
    }
}

impl<'a> Ctx<'a> {
    fn new(options: &'a LoadOptions) -> Self {
        Ctx { options, warnings: Vec::new(), missing: None, host: None }
    }

    fn warn(&mut self, kind: WarningKind, location: Location, message: String) {
        tracing::warn!(target: "mcp_host_registry", "{location}: {message}");
        self.warnings.push(Warning { kind, location, message, path: None, line: None });
    }

    /// A problem that is a warning, or an error in strict mode.
    fn lenient(
        &mut self,
        kind: WarningKind,
        location: Location,
        message: String,
    ) -> Result<(), ConfigError> {
        if self.options.strict {
            Err(ConfigError::Invalid { location, reason: message })
        } else {
            self.warn(kind, location, message);
            Ok(())
        }
    }

    fn check_keys(
        &mut self,
        map: &Map<String, Value>,
        known: &[&str],
        prefix: &str,
        entry: Option<&Entry>,
    ) -> Result<(), ConfigError> {
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                let full = format!("{prefix}{key}");
                let location = match entry {
                    Some(e) => e.at(full),
                    None => Location::top(full),
                };
                self.lenient(WarningKind::UnknownKey, location, "unknown key".into())?;
            }
        }
        Ok(())
    }

    /// The `mcp_client` table.
    fn client(&mut self, client: &Value) -> Result<Config, ConfigError> {
        let top = |key: &str| Location::top(format!("mcp_client.{key}"));
        let Value::Object(map) = client else {
            return Err(invalid(Location::top("mcp_client"), "must be a table"));
        };
        self.check_keys(map, CLIENT_KEYS, "mcp_client.", None)?;
        let enabled = opt_bool(map, "enabled", || top("enabled"))?.unwrap_or(true);
        let mut identity = self.options.client_identity.clone();
        if let Some(value) = map.get("client_identity") {
            let Value::Object(id) = value else {
                return Err(invalid(top("client_identity"), "must be a table"));
            };
            self.check_keys(id, IDENTITY_KEYS, "mcp_client.client_identity.", None)?;
            let at = |k: &str| top(&format!("client_identity.{k}"));
            if let Some(name) = opt_str(id, "name", || at("name"))? {
                let name = name.trim();
                if name.is_empty() {
                    return Err(invalid(at("name"), "must not be blank"));
                }
                identity.name = name.to_owned();
            }
            if let Some(title) = opt_str(id, "title", || at("title"))? {
                identity.title = Some(title.trim().to_owned()).filter(|t| !t.is_empty());
            }
            if let Some(version) = opt_str(id, "version", || at("version"))? {
                let version = version.trim();
                if version.is_empty() {
                    return Err(invalid(at("version"), "must not be blank"));
                }
                identity.version = version.to_owned();
            }
        }
        #[cfg(feature = "http")]
        let token_store = token_store_config(map)?;
        if !enabled {
            return Ok(Config {
                enabled: false,
                client_identity: identity,
                servers: Vec::new(),
                #[cfg(feature = "http")]
                token_store,
            });
        }
        let mut servers = Vec::new();
        match map.get("servers") {
            None => {}
            Some(Value::Array(entries)) => {
                for (index, entry) in entries.iter().enumerate() {
                    if let Some(server) = self.toml_entry(index, entry)? {
                        servers.push(server);
                    }
                }
            }
            Some(_) => return Err(invalid(top("servers"), "must be an array of tables")),
        }
        let mut config = self.finish_servers(servers, true)?;
        config.client_identity = identity;
        #[cfg(feature = "http")]
        {
            config.token_store = token_store;
        }
        Ok(config)
    }

    /// Host defaults first, then the file's entries: a duplicate replaces
    /// the earlier entry in place (with a warning unless the earlier one was
    /// a default). Each entry's transport options are built once here
    /// ([`mapping::check`](crate::mapping::check)), so what they refuse is
    /// an error of the file, at the entry's key.
    fn finish_servers(
        &mut self,
        declared: Vec<(usize, ServerConfig)>,
        enabled: bool,
    ) -> Result<Config, ConfigError> {
        let mut servers: Vec<ServerConfig> = self.options.defaults.clone();
        let mut from_file = vec![false; servers.len()];
        for (index, server) in declared {
            crate::mapping::check(&server).map_err(|e| match e {
                ConfigError::Invalid { mut location, reason } => {
                    location.index = Some(index);
                    ConfigError::Invalid { location, reason }
                }
                other => other,
            })?;
            match servers.iter().position(|s| s.name == server.name) {
                Some(i) => {
                    if from_file[i] {
                        let location = Location {
                            server: Some(server.name.clone()),
                            index: Some(index),
                            key: None,
                        };
                        self.warn(
                            WarningKind::DuplicateName,
                            location,
                            "a later entry with the same name replaces the earlier one".into(),
                        );
                    }
                    servers[i] = server;
                    from_file[i] = true;
                }
                None => {
                    servers.push(server);
                    from_file.push(true);
                }
            }
        }
        Ok(Config {
            enabled,
            client_identity: self.options.client_identity.clone(),
            servers: if enabled { servers } else { Vec::new() },
            #[cfg(feature = "http")]
            token_store: crate::TokenStoreConfig::default(),
        })
    }

    /// One `[[mcp_client.servers]]` entry: `None` when skipped.
    fn toml_entry(
        &mut self,
        index: usize,
        value: &Value,
    ) -> Result<Option<(usize, ServerConfig)>, ConfigError> {
        let mut entry = Entry { index, name: None };
        let Value::Object(map) = value else {
            return Err(invalid(entry.whole(), "a server entry must be a table"));
        };
        if opt_bool(map, "enabled", || entry.at("enabled"))? == Some(false) {
            return Ok(None);
        }
        let name = opt_str(map, "name", || entry.at("name"))?.map(|n| n.trim().to_owned());
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            self.lenient(WarningKind::SkippedEntry, entry.whole(), "the entry has no name".into())?;
            return Ok(None);
        };
        entry.name = Some(name.clone());
        self.check_keys(map, SERVER_KEYS, "", Some(&entry))?;

        self.missing = None;
        let command = self.string(map, "command", &entry)?.map(|c| c.trim().to_owned());
        let endpoint = self.string(map, "endpoint", &entry)?.map(|e| e.trim().to_owned());
        let headers = self.headers(map, "headers", &entry)?;
        let command = command.filter(|c| !c.is_empty() || self.missing_at("command"));
        let endpoint =
            endpoint.map(|e| if self.missing_at("endpoint") { "<unset>".into() } else { e });
        let transport = match (command, endpoint) {
            (Some(command), endpoint) => {
                if endpoint.is_some_and(|e| !e.is_empty()) {
                    self.ignored(
                        &entry,
                        "endpoint",
                        "a command is given, so the server is spawned",
                    )?;
                }
                if !headers.is_empty() {
                    self.ignored(&entry, "headers", "headers apply to HTTP servers only")?;
                }
                if map.get("auth").is_some() {
                    self.ignored(&entry, "auth", "auth applies to HTTP servers only")?;
                }
                for key in ["proxy", "no_proxy", "ca_file", "headers_helper"] {
                    if map.contains_key(key) {
                        self.ignored(&entry, key, "the server is spawned, not reached over HTTP")?;
                    }
                }
                TransportConfig::Stdio(self.command(map, command, &entry)?)
            }
            (None, Some(endpoint)) if !endpoint.is_empty() => {
                for key in ["args", "env", "cwd"] {
                    if map.contains_key(key) {
                        self.ignored(&entry, key, "the server is reached over HTTP")?;
                    }
                }
                let auth = match map.get("auth") {
                    Some(auth) => self.auth(auth, &entry)?,
                    None => AuthConfig::None,
                };
                let proxy = self.string(map, "proxy", &entry)?.map(Secret::new);
                let mut no_proxy = self.string(map, "no_proxy", &entry)?;
                if proxy.is_none() && no_proxy.is_some() {
                    self.ignored(
                        &entry,
                        "no_proxy",
                        "it applies to `proxy` (the environment's proxy uses NO_PROXY)",
                    )?;
                    no_proxy = None;
                }
                let ca_file = self.string(map, "ca_file", &entry)?.map(PathBuf::from);
                let headers_helper = match map.get("headers_helper") {
                    None => None,
                    Some(helper) => Some(self.headers_helper(helper, &entry)?),
                };
                let network = HttpNetwork { proxy, no_proxy, ca_file, headers_helper };
                TransportConfig::Http { endpoint, headers, auth, network }
            }
            _ => {
                self.lenient(
                    WarningKind::SkippedEntry,
                    entry.whole(),
                    "the entry has neither an endpoint nor a command".into(),
                )?;
                return Ok(None);
            }
        };
        Ok(Some((index, self.common(map, name, transport, &entry)?)))
    }

    /// One `mcpServers` entry: `None` when skipped.
    fn json_entry(
        &mut self,
        index: usize,
        name: &str,
        value: &Value,
    ) -> Result<Option<(usize, ServerConfig)>, ConfigError> {
        let name = name.trim();
        let mut entry = Entry { index, name: Some(name.to_owned()).filter(|n| !n.is_empty()) };
        let Value::Object(map) = value else {
            return Err(invalid(entry.whole(), "a server entry must be an object"));
        };
        if opt_bool(map, "disabled", || entry.at("disabled"))? == Some(true)
            || opt_bool(map, "enabled", || entry.at("enabled"))? == Some(false)
        {
            return Ok(None);
        }
        let Some(name) = entry.name.clone() else {
            self.lenient(WarningKind::SkippedEntry, entry.whole(), "the entry has no name".into())?;
            return Ok(None);
        };
        entry.name = Some(name.clone());
        self.check_keys(map, JSON_SERVER_KEYS, "", Some(&entry))?;
        for key in ["dev", "gallery"] {
            if map.contains_key(key) {
                self.ignored(&entry, key, "it is VS Code's own")?;
            }
        }
        if let Some(kind) = opt_str(map, "type", || entry.at("type"))? {
            let known = ["stdio", "http", "streamable-http", "streamableHttp", "sse"];
            if !known.contains(&kind) {
                return Err(invalid(
                    entry.at("type"),
                    "must be \"stdio\", \"http\", \"streamable-http\" or \"sse\"",
                ));
            }
        }
        self.missing = None;
        let command = self.string(map, "command", &entry)?.map(|c| c.trim().to_owned());
        let url = self.string(map, "url", &entry)?.map(|u| u.trim().to_owned());
        let command = command.filter(|c| !c.is_empty() || self.missing_at("command"));
        let url = url.map(|u| if self.missing_at("url") { "<unset>".into() } else { u });
        let transport = match (command, url) {
            (Some(command), url) => {
                if url.is_some_and(|u| !u.is_empty()) {
                    self.ignored(&entry, "url", "a command is given, so the server is spawned")?;
                }
                if map.contains_key("headers") {
                    self.ignored(&entry, "headers", "headers apply to HTTP servers only")?;
                }
                TransportConfig::Stdio(self.command(map, command, &entry)?)
            }
            (None, Some(url)) if !url.is_empty() => {
                let headers = self.headers(map, "headers", &entry)?;
                TransportConfig::Http {
                    endpoint: url,
                    headers,
                    auth: AuthConfig::None,
                    network: HttpNetwork::default(),
                }
            }
            _ => {
                self.lenient(
                    WarningKind::SkippedEntry,
                    entry.whole(),
                    "the entry has neither a url nor a command".into(),
                )?;
                return Ok(None);
            }
        };
        Ok(Some((index, self.common(map, name, transport, &entry)?)))
    }

    fn ignored(&mut self, entry: &Entry, key: &str, why: &str) -> Result<(), ConfigError> {
        self.warn(WarningKind::Ignored, entry.at(key), format!("ignored: {why}"));
        Ok(())
    }

    /// Whether the entry's missing variable is in `key` (whose value may
    /// then be empty: the entry is kept, unusable, rather than skipped).
    fn missing_at(&self, key: &str) -> bool {
        self.missing.as_ref().is_some_and(|m| m.location.key.as_deref() == Some(key))
    }

    /// A string value, `${VAR}` expanded.
    fn string(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        entry: &Entry,
    ) -> Result<Option<String>, ConfigError> {
        match opt_str(map, key, || entry.at(key))? {
            Some(text) => self.expand(text, entry.at(key)).map(Some),
            None => Ok(None),
        }
    }

    /// `headers_helper = { command, args, timeout_secs, max_output_bytes }`.
    fn headers_helper(
        &mut self,
        value: &Value,
        entry: &Entry,
    ) -> Result<HeadersHelper, ConfigError> {
        let at = |k: &str| entry.at(format!("headers_helper.{k}"));
        let Value::Object(map) = value else {
            return Err(type_error(entry.at("headers_helper"), "a table"));
        };
        let command = required_str(map, "command", || at("command"))?;
        let command = self.expand(&command, at("command"))?;
        let args = self.string_list(map, "args", || at("args"))?.unwrap_or_default();
        let mut helper = HeadersHelper::new(command, args);
        let positive = |key: &str| match map.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| *n > 0)
                .map(Some)
                .ok_or_else(|| type_error(at(key), "a positive whole number")),
        };
        if let Some(secs) = positive("timeout_secs")? {
            helper.timeout = Duration::from_secs(secs.min(600));
        }
        if let Some(bytes) = positive("max_output_bytes")? {
            helper.max_output = usize::try_from(bytes).unwrap_or(usize::MAX).min(1024 * 1024);
        }
        self.check_keys(
            map,
            &["command", "args", "timeout_secs", "max_output_bytes"],
            "headers_helper.",
            Some(entry),
        )?;
        Ok(helper)
    }

    /// A list of strings, each `${VAR}` expanded.
    fn string_list(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        location: impl Fn() -> Location,
    ) -> Result<Option<Vec<String>>, ConfigError> {
        let Some(items) = opt_str_list(map, key, &location)? else { return Ok(None) };
        items.iter().map(|item| self.expand(item, location())).collect::<Result<_, _>>().map(Some)
    }

    /// A table of strings, each value `${VAR}` expanded (`KEY.NAME` in
    /// messages).
    fn string_map(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        location: impl Fn(&str) -> Location,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        let items = opt_str_map(map, key, || location(key))?.unwrap_or_default();
        let mut out = Vec::with_capacity(items.len());
        for (name, value) in items {
            let value = self.expand(&value, location(&format!("{key}.{name}")))?;
            out.push((name, value));
        }
        Ok(out)
    }

    /// An environment variable's value. One that is not set is an error in
    /// strict mode; otherwise it makes the entry unusable (the first one is
    /// remembered) and reads as empty.
    fn var(&mut self, name: &str, location: Location) -> Result<String, ConfigError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(invalid(location, "names no environment variable"));
        }
        if let Some(value) = (self.options.env)(name) {
            return Ok(value);
        }
        if self.options.strict {
            return Err(ConfigError::MissingEnv { location, variable: name.to_owned() });
        }
        if self.missing.is_none() {
            self.missing = Some(MissingVariable { location, variable: name.to_owned() });
        }
        Ok(String::new())
    }

    /// `text` with `${VAR}`, `${env:VAR}`, `${VAR:-default}` and
    /// `${env:VAR:-default}` replaced ([`expand_with`]), and the hosts'
    /// variables in their JSON.
    fn expand(&mut self, text: &str, location: Location) -> Result<String, ConfigError> {
        let options = self.options;
        let mut host = self.host.take();
        let mut secret = false;
        let expanded = expand_with(
            text,
            |inner| {
                let (value, is_secret) = match host.as_mut()?.resolve(inner, &location, options)? {
                    Ok(found) => found,
                    Err(e) => return Some(Err(e)),
                };
                secret |= is_secret;
                Some(Ok(value))
            },
            |name, default| match default {
                Some(default) => match (self.options.env)(name) {
                    Some(value) if !value.is_empty() => Ok(value),
                    _ => Ok(default.to_owned()),
                },
                None => self.var(name, location.clone()),
            },
        );
        self.host = host;
        let shown = location.key.as_deref().is_none_or(|k| {
            !(k.starts_with("env.") || k.starts_with("headers.") || k.starts_with("auth."))
        });
        if secret && shown && expanded.is_ok() {
            self.warn(
                WarningKind::SecretShown,
                location,
                "a password input is used here, where the value is shown as part of the \
                 command line or URL; pass secrets in `env` or `headers`"
                    .into(),
            );
        }
        expanded
    }

    /// The rest of an entry (`description`, the tool lists, the timeout,
    /// the pin policy) and whether it is usable.
    fn common(
        &mut self,
        map: &Map<String, Value>,
        name: String,
        transport: TransportConfig,
        entry: &Entry,
    ) -> Result<ServerConfig, ConfigError> {
        let description = self
            .string(map, "description", entry)?
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty());
        let allowed = opt_str_list(map, "allowed_tools", || entry.at("allowed_tools"))?;
        let denied = opt_str_list(map, "disallowed_tools", || entry.at("disallowed_tools"))?;
        let timeout = match map.get("timeout_secs") {
            None => DEFAULT_TIMEOUT,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=MAX_TIMEOUT_SECS).contains(&n) => Duration::from_secs(n),
                _ => {
                    return Err(invalid(
                        entry.at("timeout_secs"),
                        &format!("must be a whole number of seconds from 1 to {MAX_TIMEOUT_SECS}"),
                    ));
                }
            },
        };
        let pin_policy = match opt_str(map, "pin_policy", || entry.at("pin_policy"))? {
            None => None,
            Some(text) => Some(text.parse::<PinPolicy>().map_err(|_| {
                invalid(entry.at("pin_policy"), "must be \"warn\", \"block\" or \"allow\"")
            })?),
        };
        let protocol = match opt_str(map, "protocol", || entry.at("protocol"))? {
            None => None,
            Some(text) => {
                parse_protocol(text).map_err(|reason| invalid(entry.at("protocol"), &reason))?
            }
        };
        let max_result_chars = result_limit(map, "max_result_chars", entry)?
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let max_result_bytes = result_limit(map, "max_result_bytes", entry)?;
        let unusable = self.missing.take();
        if let Some(missing) = &unusable {
            self.warn(
                WarningKind::ServerUnusable,
                missing.location.clone(),
                format!(
                    "the environment variable {} is not set; the server cannot be used until it is",
                    missing.variable
                ),
            );
        }
        Ok(ServerConfig {
            name,
            description,
            transport,
            policy: ToolPolicy::new(allowed.unwrap_or_default(), denied.unwrap_or_default()),
            timeout,
            pin_policy,
            protocol,
            max_result_chars,
            max_result_bytes,
            unusable,
        })
    }

    /// `args`, `env`, `cwd` of a stdio server.
    fn command(
        &mut self,
        map: &Map<String, Value>,
        command: String,
        entry: &Entry,
    ) -> Result<ServerCommand, ConfigError> {
        let mut cmd = ServerCommand::new(command);
        cmd.args = self.string_list(map, "args", || entry.at("args"))?.unwrap_or_default();
        for (key, value) in self.string_map(map, "env", |k| entry.at(k))? {
            cmd.env.insert(key, value);
        }
        if let Some(cwd) = self.string(map, "cwd", entry)?
            && !cwd.trim().is_empty()
        {
            cmd.cwd = Some(PathBuf::from(cwd.trim()));
        }
        Ok(cmd)
    }

    /// A `headers` table, `${env:NAME}` expanded.
    fn headers(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        entry: &Entry,
    ) -> Result<Vec<(String, Secret)>, ConfigError> {
        let mut out = Vec::new();
        for (name, value) in self.string_map(map, key, |k| entry.at(k))? {
            if name.trim().is_empty() {
                return Err(invalid(
                    entry.at(format!("{key}.{name}")),
                    "a header name must not be blank",
                ));
            }
            out.push((name.trim().to_owned(), Secret(value)));
        }
        Ok(out)
    }

    /// The `auth` table.
    fn auth(&mut self, value: &Value, entry: &Entry) -> Result<AuthConfig, ConfigError> {
        let Value::Object(map) = value else {
            return Err(invalid(entry.at("auth"), "must be a table with a `kind`"));
        };
        let at = |k: &str| entry.at(format!("auth.{k}"));
        let Some(kind) = opt_str(map, "kind", || at("kind"))? else {
            return Err(invalid(at("kind"), "is missing"));
        };
        let (keys, auth): (&[&str], AuthConfig) = match kind {
            "none" => (&["kind"], AuthConfig::None),
            "bearer_token" => {
                let token = self.secret(map, "token", entry)?;
                (&["kind", "token", "token_env"], AuthConfig::Bearer { token })
            }
            "basic" => {
                let username = self.secret(map, "username", entry)?.0;
                let password = self.secret(map, "password", entry)?;
                (
                    &["kind", "username", "username_env", "password", "password_env"],
                    AuthConfig::Basic { username, password },
                )
            }
            "header" => {
                let name = required_str(map, "name", || at("name"))?;
                let value = self.secret(map, "value", entry)?;
                (&["kind", "name", "value", "value_env"], AuthConfig::Header { name, value })
            }
            "headers" => {
                let mut list = Vec::new();
                for (name, value) in self.string_map(map, "headers", at)? {
                    list.push((name, Secret(value)));
                }
                for (name, var) in
                    opt_str_map(map, "headers_env", || at("headers_env"))?.unwrap_or_default()
                {
                    let location = at(&format!("headers_env.{name}"));
                    list.push((name, Secret(self.var(&var, location)?)));
                }
                if list.is_empty() {
                    return Err(invalid(at("headers"), "no headers are given"));
                }
                (&["kind", "headers", "headers_env"], AuthConfig::Headers(list))
            }
            "query_param" => {
                let name = required_str(map, "name", || at("name"))?;
                let value = self.secret(map, "value", entry)?;
                (&["kind", "name", "value", "value_env"], AuthConfig::QueryParam { name, value })
            }
            "oauth" => {
                let client_secret = match (map.get("client_secret"), map.get("client_secret_env")) {
                    (None, None) => None,
                    _ => Some(self.secret(map, "client_secret", entry)?),
                };
                let mut auth_string = |key: &str| match opt_str(map, key, || at(key))? {
                    Some(text) => self.expand(text, at(key)).map(Some),
                    None => Ok::<_, ConfigError>(None),
                };
                let client_id = auth_string("client_id")?;
                let client_metadata_url = auth_string("client_metadata_url")?;
                let redirect_uri = auth_string("redirect_uri")?;
                let metadata_url = auth_string("metadata_url")?;
                let account = auth_string("account")?.filter(|a| !a.trim().is_empty());
                let resource = match map.get("resource") {
                    None => OAuthResource::Server,
                    Some(Value::Bool(false)) => OAuthResource::Omit,
                    Some(Value::String(text)) => {
                        OAuthResource::Value(self.expand(text, at("resource"))?)
                    }
                    Some(_) => return Err(type_error(at("resource"), "false or a string")),
                };
                let redirect_port = match map.get("redirect_port") {
                    None => None,
                    Some(v) => Some(
                        v.as_u64()
                            .and_then(|p| u16::try_from(p).ok())
                            .filter(|p| *p > 0)
                            .ok_or_else(|| {
                                type_error(at("redirect_port"), "a port (1 to 65535)")
                            })?,
                    ),
                };
                let authorization_params =
                    self.string_map(map, "authorization_params", |k| at(k))?;
                let scopes_override =
                    opt_bool(map, "scopes_override", || at("scopes_override"))?.unwrap_or(false);
                let word = |key: &str, words: &[&str]| -> Result<usize, ConfigError> {
                    match opt_str(map, key, || at(key))? {
                        None => Ok(0),
                        Some(w) => words.iter().position(|x| *x == w).ok_or_else(|| {
                            invalid(at(key), &format!("must be one of {}", words.join(", ")))
                        }),
                    }
                };
                let address_policy = match word(
                    "address_policy",
                    &["same_network", "allow_private", "allow_all"],
                )? {
                    1 => OAuthAddressPolicy::AllowPrivate,
                    2 => OAuthAddressPolicy::AllowAll,
                    _ => OAuthAddressPolicy::SameNetwork,
                };
                let dpop = match word("dpop", &["when_required", "always", "never"])? {
                    1 => OAuthDpop::Always,
                    2 => OAuthDpop::Never,
                    _ => OAuthDpop::WhenRequired,
                };
                let offline_access =
                    opt_bool(map, "offline_access", || at("offline_access"))?.unwrap_or(true);
                let scopes = self.string_list(map, "scopes", || at("scopes"))?.unwrap_or_default();
                if scopes_override && scopes.is_empty() {
                    return Err(invalid(at("scopes_override"), "needs `scopes`"));
                }
                let oauth = OAuthConfig {
                    client_id,
                    client_secret,
                    scopes,
                    client_metadata_url,
                    redirect_uri,
                    redirect_port,
                    resource,
                    metadata_url,
                    authorization_params,
                    scopes_override,
                    address_policy,
                    dpop,
                    offline_access,
                    account,
                };
                (
                    &[
                        "kind",
                        "client_id",
                        "client_secret",
                        "client_secret_env",
                        "scopes",
                        "client_metadata_url",
                        "redirect_uri",
                        "redirect_port",
                        "resource",
                        "metadata_url",
                        "authorization_params",
                        "scopes_override",
                        "address_policy",
                        "dpop",
                        "offline_access",
                        "account",
                    ],
                    AuthConfig::OAuth(Box::new(oauth)),
                )
            }
            _ => {
                return Err(invalid(
                    at("kind"),
                    "must be one of none, bearer_token, basic, header, headers, query_param, oauth",
                ));
            }
        };
        let prefix = "auth.";
        self.check_keys(map, keys, prefix, Some(entry))?;
        Ok(auth)
    }

    /// `KEY` or `KEY_env` (exactly one).
    fn secret(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        entry: &Entry,
    ) -> Result<Secret, ConfigError> {
        let env_key = format!("{key}_env");
        let at = |k: &str| entry.at(format!("auth.{k}"));
        let literal = opt_str(map, key, || at(key))?;
        let var = opt_str(map, &env_key, || at(&env_key))?;
        match (literal, var) {
            (Some(_), Some(_)) => {
                Err(invalid(at(key), &format!("give `{key}` or `{env_key}`, not both")))
            }
            (Some(value), None) => self.expand(value, at(key)).map(Secret),
            (None, Some(var)) => self.var(var, at(&env_key)).map(Secret),
            (None, None) => Err(invalid(at(key), &format!("is missing (or give `{env_key}`)"))),
        }
    }
}

/// A `protocol` value: `"auto"` (`None`) or a revision this client speaks.
/// Also what `mcpc --protocol` takes.
pub fn parse_protocol(text: &str) -> Result<Option<ProtocolVersion>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    ProtocolVersion::parse(text).map(Some).ok_or_else(|| {
        let known: Vec<String> =
            ProtocolVersion::SUPPORTED.iter().map(|v| format!("\"{v}\"")).collect();
        format!("must be \"auto\" or a protocol revision: {}", known.join(", "))
    })
}

/// `max_result_chars` or `max_result_bytes`: a whole number from 1.
fn result_limit(
    map: &Map<String, Value>,
    key: &str,
    entry: &Entry,
) -> Result<Option<u64>, ConfigError> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => Err(invalid(entry.at(key), "must be a whole number from 1")),
        },
    }
}

/// `mcp_client.token_store` and `mcp_client.keychain_service`.
#[cfg(feature = "http")]
fn token_store_config(map: &Map<String, Value>) -> Result<crate::TokenStoreConfig, ConfigError> {
    let top = |key: &str| Location::top(format!("mcp_client.{key}"));
    let mut config = crate::TokenStoreConfig::default();
    if let Some(kind) = opt_str(map, "token_store", || top("token_store"))? {
        config.kind = kind.parse().map_err(|_| {
            invalid(top("token_store"), "must be \"file\", \"keychain\" or \"auto\"")
        })?;
    }
    if let Some(service) = opt_str(map, "keychain_service", || top("keychain_service"))? {
        let service = service.trim();
        if service.is_empty() {
            return Err(invalid(top("keychain_service"), "must not be blank"));
        }
        config.keychain_service = Some(service.to_owned());
    }
    Ok(config)
}

fn invalid(location: Location, reason: &str) -> ConfigError {
    ConfigError::Invalid { location, reason: reason.to_owned() }
}

/// Replaces `${NAME}` and `${env:NAME}` with `value(NAME, None)`, and
/// `${NAME:-default}` and `${env:NAME:-default}` with
/// `value(NAME, Some(default))`; `$${` is a literal `${`. Anything else
/// (an unclosed `${`, a `${...}` that does not hold a variable name) is kept
/// verbatim. `NAME` is `[A-Za-z_][A-Za-z0-9_]*`.
///
/// `host` is asked first about each `${...}` not starting with `env:`
/// (its whole inside): `Some` is its value (the hosts' variables).
fn expand_with<H, F>(text: &str, mut host: H, mut value: F) -> Result<String, ConfigError>
where
    H: FnMut(&str) -> Option<Result<String, ConfigError>>,
    F: FnMut(&str, Option<&str>) -> Result<String, ConfigError>,
{
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
            continue;
        }
        let Some(after) = tail.strip_prefix("${") else {
            out.push('$');
            rest = &tail[1..];
            continue;
        };
        let Some(end) = after.find('}') else {
            out.push_str(tail);
            return Ok(out);
        };
        let inner = &after[..end];
        if !inner.starts_with("env:")
            && let Some(found) = host(inner)
        {
            out.push_str(&found?);
            rest = &after[end + 1..];
            continue;
        }
        let reference = inner.strip_prefix("env:").unwrap_or(inner);
        let (name, default) = match reference.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (reference, None),
        };
        let is_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_name {
            out.push_str(&value(name, default)?);
        } else {
            out.push_str(&tail[..2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn type_error(location: Location, what: &str) -> ConfigError {
    invalid(location, &format!("must be {what}"))
}

fn opt_str<'v>(
    map: &'v Map<String, Value>,
    key: &str,
    at: impl Fn() -> Location,
) -> Result<Option<&'v str>, ConfigError> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(type_error(at(), "a string")),
    }
}

fn required_str(
    map: &Map<String, Value>,
    key: &str,
    at: impl Fn() -> Location,
) -> Result<String, ConfigError> {
    match opt_str(map, key, &at)? {
        Some(s) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        Some(_) => Err(invalid(at(), "must not be blank")),
        None => Err(invalid(at(), "is missing")),
    }
}

fn opt_bool(
    map: &Map<String, Value>,
    key: &str,
    at: impl Fn() -> Location,
) -> Result<Option<bool>, ConfigError> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(type_error(at(), "true or false")),
    }
}

fn opt_str_list(
    map: &Map<String, Value>,
    key: &str,
    at: impl Fn() -> Location,
) -> Result<Option<Vec<String>>, ConfigError> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or_else(|| type_error(at(), "a list of strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(type_error(at(), "a list of strings")),
    }
}

fn opt_str_map(
    map: &Map<String, Value>,
    key: &str,
    at: impl Fn() -> Location,
) -> Result<Option<BTreeMap<String, String>>, ConfigError> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Object(items)) => items
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(type_error(at(), "a table of strings")),
            })
            .collect::<Result<BTreeMap<_, _>, _>>()
            .map(Some),
        Some(_) => Err(type_error(at(), "a table of strings")),
    }
}
