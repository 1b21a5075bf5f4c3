//! The TOML `[mcp_client]` table and its `[[mcp_client.servers]]`
//! entries.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::load::{LoadOptions, Loaded, position_of};
use super::types::{AuthConfig, Config, HttpNetwork, Secret, ServerConfig, TransportConfig};
use super::validate::{Ctx, Entry, invalid, opt_bool, opt_str};
use crate::error::{ConfigError, Location, WarningKind};

impl Config {
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
impl Ctx<'_> {
    /// The `mcp_client` table.
    pub(super) fn client(&mut self, client: &Value) -> Result<Config, ConfigError> {
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

    /// One `[[mcp_client.servers]]` entry: `None` when skipped.
    pub(super) fn toml_entry(
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
