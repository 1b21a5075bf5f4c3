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

use mcp_proto::types::Implementation;
use mcp_spawn_env::ServerCommand;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{ConfigError, Location, Warning, WarningKind};
use crate::policy::ToolPolicy;

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
    /// The redirect URI to register (`redirect_uri`).
    pub redirect_uri: Option<String>,
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
    /// `kind = "oauth"`.
    OAuth(OAuthConfig),
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
    },
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
            TransportConfig::Http { endpoint, headers, auth } => f
                .debug_struct("Http")
                .field("endpoint", &redact_endpoint(endpoint))
                .field("headers", &headers.iter().map(|(n, _)| n).collect::<Vec<_>>())
                .field("auth", auth)
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

    /// Whether the server is spawned (stdio) rather than reached over HTTP.
    pub fn is_stdio(&self) -> bool {
        matches!(self.transport, TransportConfig::Stdio(_))
    }

    /// Whether the server uses OAuth.
    pub fn uses_oauth(&self) -> bool {
        matches!(self.transport, TransportConfig::Http { auth: AuthConfig::OAuth(_), .. })
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
}

impl Default for Config {
    fn default() -> Self {
        Config { enabled: true, client_identity: ClientIdentity::default(), servers: Vec::new() }
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
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            strict: false,
            client_identity: ClientIdentity::default(),
            defaults: Vec::new(),
            env: Arc::new(|name| std::env::var(name).ok()),
        }
    }
}

impl fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadOptions")
            .field("strict", &self.strict)
            .field("client_identity", &self.client_identity)
            .field("defaults", &self.defaults)
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
    /// Reads a file: `.json` as `mcpServers` JSON (or JSON in the
    /// `mcp_client` shape), anything else as TOML.
    pub fn load(path: &Path, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: PathBuf::from(path), source })?;
        let is_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if is_json {
            Config::from_json_str(&text, options)
        } else {
            Config::from_toml_str(&text, options)
        }
    }

    /// Parses TOML with an `[mcp_client]` table (other top-level tables are
    /// the host's and are ignored; no `[mcp_client]` means no servers but
    /// the host's defaults).
    pub fn from_toml_str(text: &str, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        let root: Value = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            format: "TOML",
            line: e.span().map(|s| line_of(text, s.start)),
            message: e.message().trim().to_owned(),
        })?;
        let mut ctx = Ctx::new(options);
        let config = match root.get("mcp_client") {
            Some(client) => ctx.client(client)?,
            None => ctx.finish_servers(Vec::new(), true),
        };
        Ok(Loaded { config, warnings: ctx.warnings })
    }

    /// Parses the JSON other hosts write: `{"mcpServers": {NAME: {...}}}`
    /// (Claude Desktop, Cursor), `{"servers": {...}}` (VS Code), or JSON in
    /// the `mcp_client` shape. Other top-level keys are ignored.
    ///
    /// An entry has `command`, `args`, `env`, `cwd` (stdio) or `url`,
    /// `type`, `headers` (HTTP); also `disabled` or `enabled`,
    /// `description`, `allowed_tools`, `disallowed_tools`, `timeout_secs`.
    /// `${env:NAME}` (or `${NAME}`) in `env` and `headers` values is
    /// replaced by the variable.
    pub fn from_json_str(text: &str, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        let root: JsonRoot = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
            format: "JSON",
            line: Some(e.line()).filter(|l| *l > 0),
            message: json_message(&e),
        })?;
        let mut ctx = Ctx::new(options);
        let config = if let Some(client) = &root.mcp_client {
            ctx.client(client)?
        } else {
            let mut servers = Vec::new();
            for (index, (name, entry)) in
                root.mcp_servers.iter().chain(root.servers.iter()).flat_map(|m| &m.0).enumerate()
            {
                if let Some(server) = ctx.json_entry(index, name, entry)? {
                    servers.push(server);
                }
            }
            ctx.finish_servers(servers, true)
        };
        Ok(Loaded { config, warnings: ctx.warnings })
    }
}

/// The top level of a JSON file, keeping the order of the server maps.
#[derive(Deserialize)]
struct JsonRoot {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<Ordered>,
    servers: Option<Ordered>,
    mcp_client: Option<Value>,
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
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1
}

const CLIENT_KEYS: &[&str] = &["enabled", "client_identity", "servers"];
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
];

/// The validator's state: options and the warnings so far.
struct Ctx<'a> {
    options: &'a LoadOptions,
    warnings: Vec<Warning>,
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
        Ctx { options, warnings: Vec::new() }
    }

    fn warn(&mut self, kind: WarningKind, location: Location, message: String) {
        tracing::warn!(target: "mcp_host_registry", "{location}: {message}");
        self.warnings.push(Warning { kind, location, message });
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
        if !enabled {
            return Ok(Config { enabled: false, client_identity: identity, servers: Vec::new() });
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
        let mut config = self.finish_servers(servers, true);
        config.client_identity = identity;
        Ok(config)
    }

    /// Host defaults first, then the file's entries: a duplicate replaces
    /// the earlier entry in place (with a warning unless the earlier one was
    /// a default).
    fn finish_servers(&mut self, declared: Vec<(usize, ServerConfig)>, enabled: bool) -> Config {
        let mut servers: Vec<ServerConfig> = self.options.defaults.clone();
        let mut from_file = vec![false; servers.len()];
        for (index, server) in declared {
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
        Config {
            enabled,
            client_identity: self.options.client_identity.clone(),
            servers: if enabled { servers } else { Vec::new() },
        }
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

        let command = opt_str(map, "command", || entry.at("command"))?.map(|c| c.trim().to_owned());
        let endpoint =
            opt_str(map, "endpoint", || entry.at("endpoint"))?.map(|e| e.trim().to_owned());
        let headers = self.headers(map, "headers", &entry)?;
        let transport = match (command.filter(|c| !c.is_empty()), endpoint) {
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
                TransportConfig::Http { endpoint, headers, auth }
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
        if let Some(kind) = opt_str(map, "type", || entry.at("type"))? {
            let known = ["stdio", "http", "streamable-http", "streamableHttp", "sse"];
            if !known.contains(&kind) {
                return Err(invalid(
                    entry.at("type"),
                    "must be \"stdio\", \"http\", \"streamable-http\" or \"sse\"",
                ));
            }
        }
        let command = opt_str(map, "command", || entry.at("command"))?.map(|c| c.trim().to_owned());
        let url = opt_str(map, "url", || entry.at("url"))?.map(|u| u.trim().to_owned());
        let transport = match (command.filter(|c| !c.is_empty()), url) {
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
                TransportConfig::Http { endpoint: url, headers, auth: AuthConfig::None }
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

    /// `description`, the tool lists and the timeout.
    fn common(
        &mut self,
        map: &Map<String, Value>,
        name: String,
        transport: TransportConfig,
        entry: &Entry,
    ) -> Result<ServerConfig, ConfigError> {
        let description = opt_str(map, "description", || entry.at("description"))?
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
        Ok(ServerConfig {
            name,
            description,
            transport,
            policy: ToolPolicy::new(allowed.unwrap_or_default(), denied.unwrap_or_default()),
            timeout,
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
        cmd.args = opt_str_list(map, "args", || entry.at("args"))?.unwrap_or_default();
        for (key, value) in opt_str_map(map, "env", || entry.at("env"))?.unwrap_or_default() {
            let at = format!("env.{key}");
            let value = expand(&value, || entry.at(at.clone()), &self.options.env)?;
            cmd.env.insert(key, value);
        }
        if let Some(cwd) = opt_str(map, "cwd", || entry.at("cwd"))?
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
        for (name, value) in opt_str_map(map, key, || entry.at(key))?.unwrap_or_default() {
            let at = format!("{key}.{name}");
            if name.trim().is_empty() {
                return Err(invalid(entry.at(at), "a header name must not be blank"));
            }
            let value = expand(&value, || entry.at(at.clone()), &self.options.env)?;
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
                for (name, value) in
                    opt_str_map(map, "headers", || at("headers"))?.unwrap_or_default()
                {
                    list.push((name, Secret(value)));
                }
                for (name, var) in
                    opt_str_map(map, "headers_env", || at("headers_env"))?.unwrap_or_default()
                {
                    let location = at(&format!("headers_env.{name}"));
                    list.push((name, Secret(lookup(&var, location, &self.options.env)?)));
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
                let oauth = OAuthConfig {
                    client_id: opt_str(map, "client_id", || at("client_id"))?.map(str::to_owned),
                    client_secret,
                    scopes: opt_str_list(map, "scopes", || at("scopes"))?.unwrap_or_default(),
                    client_metadata_url: opt_str(map, "client_metadata_url", || {
                        at("client_metadata_url")
                    })?
                    .map(str::to_owned),
                    redirect_uri: opt_str(map, "redirect_uri", || at("redirect_uri"))?
                        .map(str::to_owned),
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
                    ],
                    AuthConfig::OAuth(oauth),
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
            (Some(value), None) => Ok(Secret(value.to_owned())),
            (None, Some(var)) => lookup(var, at(&env_key), &self.options.env).map(Secret),
            (None, None) => Err(invalid(at(key), &format!("is missing (or give `{env_key}`)"))),
        }
    }
}

fn invalid(location: Location, reason: &str) -> ConfigError {
    ConfigError::Invalid { location, reason: reason.to_owned() }
}

fn lookup(var: &str, location: Location, env: &EnvLookup) -> Result<String, ConfigError> {
    let var = var.trim();
    if var.is_empty() {
        return Err(invalid(location, "names no environment variable"));
    }
    env(var).ok_or_else(|| ConfigError::MissingEnv { location, variable: var.to_owned() })
}

/// Replaces `${env:NAME}` and `${NAME}` with the variable's value; anything
/// else is kept verbatim.
fn expand(
    text: &str,
    location: impl Fn() -> Location,
    env: &EnvLookup,
) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let var = inner.strip_prefix("env:").unwrap_or(inner);
        let is_name = var.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_name {
            out.push_str(&lookup(var, location(), env)?);
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
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
