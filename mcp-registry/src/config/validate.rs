//! The validator both formats are walked by: its state, the rules every
//! entry shares, and typed reads of JSON values.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_spawn_env::ServerCommand;
use serde_json::{Map, Value};

use super::load::LoadOptions;
use super::types::{
    Config, DEFAULT_TIMEOUT, HeadersHelper, MAX_TIMEOUT_SECS, Secret, ServerConfig, TransportConfig,
};
use super::vscode;
use crate::error::{ConfigError, Location, MissingVariable, Warning, WarningKind};
use crate::pins::PinPolicy;
use crate::policy::ToolPolicy;

/// The validator's state: options and the warnings so far.
pub(super) struct Ctx<'a> {
    pub(super) options: &'a LoadOptions,
    pub(super) warnings: Vec<Warning>,
    /// The first variable the current entry refers to that is not set.
    pub(super) missing: Option<MissingVariable>,
    /// The hosts' variables, in their JSON only.
    pub(super) host: Option<vscode::HostVars>,
}

/// Where an entry is, for messages.
#[derive(Clone)]
pub(super) struct Entry {
    pub(super) index: usize,
    pub(super) name: Option<String>,
}

impl Entry {
    pub(super) fn at(&self, key: impl Into<String>) -> Location {
        Location { server: self.name.clone(), index: Some(self.index), key: Some(key.into()) }
    }

    pub(super) fn whole(&self) -> Location {
        Location { server: self.name.clone(), index: Some(self.index), key: None }
    }
}

impl<'a> Ctx<'a> {
    pub(super) fn new(options: &'a LoadOptions) -> Self {
        Ctx { options, warnings: Vec::new(), missing: None, host: None }
    }

    pub(super) fn warn(&mut self, kind: WarningKind, location: Location, message: String) {
        tracing::warn!(target: "mcp_host_registry", "{location}: {message}");
        self.warnings.push(Warning { kind, location, message, path: None, line: None });
    }

    /// A problem that is a warning, or an error in strict mode.
    pub(super) fn lenient(
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

    pub(super) fn check_keys(
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

    /// Host defaults first, then the file's entries: a duplicate replaces
    /// the earlier entry in place (with a warning unless the earlier one was
    /// a default). Each entry's transport options are built once here
    /// ([`mapping::check`](crate::mapping::check)), so what they refuse is
    /// an error of the file, at the entry's key.
    pub(super) fn finish_servers(
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

    pub(super) fn ignored(
        &mut self,
        entry: &Entry,
        key: &str,
        why: &str,
    ) -> Result<(), ConfigError> {
        self.warn(WarningKind::Ignored, entry.at(key), format!("ignored: {why}"));
        Ok(())
    }

    /// Whether the entry's missing variable is in `key` (whose value may
    /// then be empty: the entry is kept, unusable, rather than skipped).
    pub(super) fn missing_at(&self, key: &str) -> bool {
        self.missing.as_ref().is_some_and(|m| m.location.key.as_deref() == Some(key))
    }

    /// A string value, `${VAR}` expanded.
    pub(super) fn string(
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
    pub(super) fn headers_helper(
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
    pub(super) fn string_list(
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
    pub(super) fn string_map(
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

    /// The rest of an entry (`description`, the tool lists, the timeout,
    /// the pin policy) and whether it is usable.
    pub(super) fn common(
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
    pub(super) fn command(
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
    pub(super) fn headers(
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
pub(super) fn result_limit(
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

pub(super) fn invalid(location: Location, reason: &str) -> ConfigError {
    ConfigError::Invalid { location, reason: reason.to_owned() }
}

pub(super) fn type_error(location: Location, what: &str) -> ConfigError {
    invalid(location, &format!("must be {what}"))
}

pub(super) fn opt_str<'v>(
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

pub(super) fn required_str(
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

pub(super) fn opt_bool(
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

pub(super) fn opt_str_list(
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

pub(super) fn opt_str_map(
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
