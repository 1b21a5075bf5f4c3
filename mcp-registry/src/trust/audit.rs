//! The audit log: one JSON line per tool call (opt-in), rotated by size,
//! without secrets.
//!
//! ```json
//! {"time_ms":1767225600000,"server":"files","tool":"write_file","arguments_sha256":"…",
//!  "arguments":{"path":"a.txt","content":"…","token":"<redacted>"},"duration_ms":12,
//!  "outcome":"ok","decision":{"tier":"allow","reason":"the approval rule \"files__*\""}}
//! ```

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_proto::types::{CallToolResult, JsonObject};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::config::{AuthConfig, ServerConfig, TransportConfig};
use crate::digest::{canonical_json, sha256_hex};
use crate::error::Error;
use crate::trust::TrustError;
use crate::trust::approval::Decision;

/// The longest string value kept in the logged arguments (characters);
/// the rest is cut and its length noted.
pub const MAX_LOGGED_STRING: usize = 256;
/// The most bytes of logged arguments per line; beyond, only the digest.
pub const MAX_LOGGED_ARGUMENTS: usize = 8 * 1024;

/// Words that mark an argument's name as a secret (compared without case,
/// as parts of the name): its value is never logged.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "authorization",
    "auth",
    "cookie",
    "credential",
    "private_key",
    "privatekey",
    "session",
];

/// Where and how much is logged (`[mcp_client.audit]`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditConfig {
    /// The log file (`path`).
    pub path: PathBuf,
    /// The size past which the file is rotated (`max_bytes`; 10 MiB).
    pub max_bytes: u64,
    /// How many rotated files are kept (`keep`; 3): `path.1` is the
    /// newest.
    pub keep: u32,
}

impl AuditConfig {
    /// A log at `path` with the default size and count.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        AuditConfig { path: path.into(), max_bytes: 10 * 1024 * 1024, keep: 3 }
    }

    /// Reads `[mcp_client.audit]`: `None` when it is absent or
    /// `enabled = false`; a relative `path` is the configuration file's
    /// neighbour; without `path`, `default_path`.
    pub(crate) fn read(
        value: &Value,
        folder: &Path,
        default_path: Option<PathBuf>,
    ) -> Result<Option<AuditConfig>, String> {
        let table = value.as_object().ok_or("must be a table")?;
        const KEYS: &[&str] = &["enabled", "path", "max_bytes", "keep"];
        if let Some(key) = table.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!("unknown key `{key}`"));
        }
        match table.get("enabled") {
            None | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => return Ok(None),
            Some(_) => return Err("`enabled` must be true or false".into()),
        }
        let path = match table.get("path") {
            Some(Value::String(p)) if !p.trim().is_empty() => folder.join(p.trim()),
            Some(_) => return Err("`path` must be a file name".into()),
            None => default_path.ok_or("`path` is needed (no state directory is known)")?,
        };
        let mut config = AuditConfig::new(path);
        if let Some(v) = table.get("max_bytes") {
            config.max_bytes = v
                .as_u64()
                .filter(|n| (1024..=1 << 40).contains(n))
                .ok_or("`max_bytes` must be a whole number from 1024")?;
        }
        if let Some(v) = table.get("keep") {
            config.keep = v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=100).contains(n))
                .ok_or("`keep` must be a whole number from 1 to 100")?;
        }
        Ok(Some(config))
    }
}

/// An open audit log ([`TrustOptions::audit`](crate::TrustOptions::audit)).
/// Lines are appended whole under a lock; a file at its size limit is
/// renamed to `.1` (older ones shifted, the oldest dropped) before the
/// next line. A line that cannot be written is reported through `tracing`
/// and does not fail the call.
#[derive(Debug)]
pub struct AuditLog {
    config: AuditConfig,
    write: Mutex<()>,
}

impl AuditLog {
    /// Opens (creates) the log, so a path that cannot be written is an
    /// error when the host starts, naming the file.
    pub fn open(config: AuditConfig) -> Result<AuditLog, TrustError> {
        open_append(&config.path)
            .map_err(|source| TrustError::Io { path: config.path.clone(), source })?;
        Ok(AuditLog { config, write: Mutex::new(()) })
    }

    /// Where it writes.
    pub fn config(&self) -> &AuditConfig {
        &self.config
    }

    /// Logs one call.
    pub(crate) fn record(&self, call: &AuditedCall<'_>) {
        let mut line = call.to_json().to_string();
        line.push('\n');
        let _guard = self.write.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = self.rotate_for(line.len() as u64).and_then(|()| {
            let mut file = open_append(&self.config.path)?;
            file.write_all(line.as_bytes())
        }) {
            tracing::warn!(file = %self.config.path.display(), error = %e, "the audit log could not be written");
        }
    }

    fn rotate_for(&self, adding: u64) -> std::io::Result<()> {
        let size = match std::fs::metadata(&self.config.path) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        if size == 0 || size + adding <= self.config.max_bytes {
            return Ok(());
        }
        let numbered = |n: u32| {
            let mut name = self.config.path.as_os_str().to_owned();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        let _ = std::fs::remove_file(numbered(self.config.keep));
        for n in (1..self.config.keep).rev() {
            let from = numbered(n);
            if from.exists() {
                std::fs::rename(&from, numbered(n + 1))?;
            }
        }
        std::fs::rename(&self.config.path, numbered(1))
    }
}

fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path)
}

/// One call as the log sees it.
#[derive(Debug)]
pub(crate) struct AuditedCall<'a> {
    pub(crate) server: &'a str,
    /// The server's configuration, for its secrets (none when unknown).
    pub(crate) config: Option<&'a ServerConfig>,
    pub(crate) tool: &'a str,
    pub(crate) arguments: Option<&'a JsonObject>,
    pub(crate) duration: Duration,
    pub(crate) result: Result<Audited<'a>, &'a Error>,
    pub(crate) decision: Option<&'a Decision>,
}

/// What a call that was sent came back with, for its audit line.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Audited<'a> {
    /// The tool's result.
    Result(&'a CallToolResult),
    /// The tool's result as the JSON text the server sent (an object).
    Json(&'a RawValue),
    /// A task the server made of the call (its id): its result is the
    /// server's to keep, and is not in the log.
    Task(&'a str),
    /// An answer of a kind this version does not know.
    Other,
}

impl AuditedCall<'_> {
    fn to_json(&self) -> Value {
        let secrets = self.config.map(secrets_of).unwrap_or_default();
        let arguments = self.arguments.cloned().unwrap_or_default();
        let digest = sha256_hex(canonical_json(&Value::Object(arguments.clone())).as_bytes());
        let mut logged = redact(&Value::Object(arguments), &secrets);
        if logged.to_string().len() > MAX_LOGGED_ARGUMENTS {
            logged = json!("<too large: see the digest>");
        }
        let time_ms =
            SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
        let mut line = json!({
            "time_ms": time_ms,
            "server": self.server,
            "tool": self.tool,
            "arguments_sha256": digest,
            "arguments": logged,
            "duration_ms": self.duration.as_millis() as u64,
        });
        let (outcome, error) = match self.result {
            Ok(Audited::Result(r)) if r.is_error == Some(true) => ("tool_error", None),
            Ok(Audited::Result(_)) => ("ok", None),
            Ok(Audited::Json(r)) if reports_error(r) => ("tool_error", None),
            Ok(Audited::Json(_)) => ("ok", None),
            Ok(Audited::Task(id)) => {
                line["task_id"] = json!(id);
                ("task", None)
            }
            Ok(Audited::Other) => ("other", None),
            Err(e @ (Error::CallDenied { .. } | Error::ToolNotAllowed { .. })) => {
                ("denied", Some(e.to_string()))
            }
            Err(e) => ("error", Some(e.to_string())),
        };
        line["outcome"] = json!(outcome);
        if let Some(error) = error {
            line["error"] = json!(scrub(&error, &secrets));
        }
        let decision = match (self.decision, self.result) {
            (Some(d), _) => json!({"tier": d.tier.as_str(), "reason": d.reason.to_string()}),
            (None, Err(Error::CallDenied { reason, .. })) => {
                json!({"tier": "deny", "reason": reason.to_string()})
            }
            (None, Err(Error::ToolNotAllowed { .. })) => {
                json!({"tier": "deny", "reason": crate::trust::approval::Reason::ServerLists.to_string()})
            }
            (None, _) => Value::Null,
        };
        line["decision"] = decision;
        line
    }
}

/// Whether a result's JSON text has `isError: true` at its top level,
/// read without building the result (the other members are skipped).
fn reports_error(result: &RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(rename = "isError", default)]
        is_error: Option<Value>,
    }
    serde_json::from_str::<Peek>(result.get()).is_ok_and(|p| p.is_error == Some(Value::Bool(true)))
}

/// The configured secrets of a server: environment values, header values,
/// credentials (at least 4 characters: shorter ones would blank out
/// ordinary text).
fn secrets_of(server: &ServerConfig) -> Vec<String> {
    let mut out = Vec::new();
    match &server.transport {
        TransportConfig::Stdio(c) => out.extend(c.env.values().cloned()),
        TransportConfig::Http { endpoint, headers, auth, network } => {
            out.extend(headers.iter().map(|(_, v)| v.expose().to_owned()));
            if let Some(proxy) = &network.proxy {
                out.push(proxy.expose().to_owned());
            }
            match auth {
                AuthConfig::Bearer { token: s }
                | AuthConfig::Basic { password: s, .. }
                | AuthConfig::Header { value: s, .. }
                | AuthConfig::QueryParam { value: s, .. } => out.push(s.expose().to_owned()),
                AuthConfig::Headers(list) => {
                    out.extend(list.iter().map(|(_, v)| v.expose().to_owned()));
                }
                AuthConfig::OAuth(o) => {
                    out.extend(o.client_secret.as_ref().map(|s| s.expose().to_owned()));
                }
                AuthConfig::None => {}
            }
            // A secret in the URL's query or user information.
            if let Some((_, rest)) = endpoint.split_once("://") {
                let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
                if let Some((userinfo, _)) = authority.rsplit_once('@') {
                    out.extend(userinfo.split(':').map(str::to_owned));
                }
            }
            if let Some((_, query)) = endpoint.split_once('?') {
                for pair in query.split(['&', '#']) {
                    out.extend(pair.split_once('=').map(|(_, v)| v.to_owned()));
                }
            }
        }
    }
    out.retain(|s| s.chars().count() >= 4);
    out
}

fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for s in secrets {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "<redacted>");
        }
    }
    out
}

fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| name.contains(w))
}

/// The arguments as logged: values under secret-looking names and every
/// configured secret replaced by `<redacted>`, long strings cut.
fn redact(value: &Value, secrets: &[String]) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let v = if is_secret_name(k) { json!("<redacted>") } else { redact(v, secrets) };
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| redact(v, secrets)).collect()),
        Value::String(s) => {
            let s = scrub(s, secrets);
            let count = s.chars().count();
            if count > MAX_LOGGED_STRING {
                let head: String = s.chars().take(MAX_LOGGED_STRING).collect();
                json!(format!("{head}... ({count} characters)"))
            } else {
                json!(s)
            }
        }
        other => other.clone(),
    }
}
