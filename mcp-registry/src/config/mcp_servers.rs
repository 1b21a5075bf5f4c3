//! The JSON other hosts write: `mcpServers` (Claude Desktop, Cursor),
//! `servers` (VS Code), one entry per server keyed by its name.

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use super::load::{LoadOptions, Loaded, json_message};
use super::types::{AuthConfig, Config, HttpNetwork, ServerConfig, TransportConfig};
use super::validate::{Ctx, Entry, invalid, opt_bool, opt_str};
use super::{jsonc, vscode};
use crate::error::{ConfigError, Location, WarningKind};

impl Config {
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

/// The top level of a JSON file, keeping the order of the server maps.
#[derive(Deserialize)]
pub(super) struct JsonRoot {
    #[serde(rename = "mcpServers")]
    pub(super) mcp_servers: Option<Ordered>,
    pub(super) servers: Option<Ordered>,
    pub(super) mcp_client: Option<Value>,
    /// VS Code's `inputs` (`${input:ID}`).
    pub(super) inputs: Option<Value>,
}

/// A JSON object as its entries in document order.
pub(super) struct Ordered(pub(super) Vec<(String, Value)>);

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

impl Ctx<'_> {
    /// One `mcpServers` entry: `None` when skipped.
    pub(super) fn json_entry(
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
}
