//! Importing a server from an MCP Registry `server.json` (the package
//! description registries publish): one of its `packages[]` or `remotes[]`
//! becomes a [`ServerConfig`] and the `[[mcp_client.servers]]` entry a user
//! adds to a configuration.
//!
//! A package is started the way its registry's tools run one: npm with
//! `npx -y NAME@VERSION`, PyPI with `uvx NAME==VERSION`, OCI with
//! `docker run -i --rm IMAGE:VERSION`, NuGet with `dnx NAME@VERSION`
//! (`runtimeHint` names another runner). A remote is its URL and headers.
//! What the user must supply (required environment variables, secret
//! headers, argument values without a default) becomes a `${NAME}`
//! reference, filled from the environment when the configuration is
//! loaded, and is listed in [`ImportedServer::variables`]. Text of the
//! file that is not such a reference never refers to the user's
//! environment: a `${` in it is written `$${`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::{ServerConfig, TransportConfig};

mod build;
use build::Builder;

/// The largest `server.json` read (1 MiB).
pub const MAX_SERVER_JSON_BYTES: u64 = 1 << 20;

/// Which entry of a `server.json` to import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerJsonChoice {
    /// The first package, else the first remote.
    First,
    /// `packages[N]` (0-based).
    Package(usize),
    /// `remotes[N]` (0-based).
    Remote(usize),
}

/// A value the user supplies to an imported server, through the
/// environment variable `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportedVariable {
    /// The environment variable.
    pub name: String,
    /// What the file says it is for (its text: untrusted).
    pub description: Option<String>,
    /// Whether it is a secret (`isSecret`).
    pub secret: bool,
    /// Whether the server needs it (`isRequired`): the server is unusable
    /// until it is set. An optional one falls back to `default`.
    pub required: bool,
    /// The value used when it is not set.
    pub default: Option<String>,
}

/// A server imported from a `server.json`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ImportedServer {
    /// The server, its values holding `${NAME}` references (expanded when
    /// a configuration holding [`to_toml`](Self::to_toml) is loaded).
    pub server: ServerConfig,
    /// The variables its references name, in order of first use.
    pub variables: Vec<ImportedVariable>,
}

/// Why a `server.json` could not be imported. Each names the file (when
/// read from one) and the key.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerJsonError {
    /// The file could not be read, or is larger than
    /// [`MAX_SERVER_JSON_BYTES`].
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not JSON.
    Syntax {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// The 1-based line.
        line: usize,
        /// The 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A package names a registry type this client cannot start
    /// (`registryType`, e.g. `mcpb`).
    UnknownRegistryType {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// The key (`packages[0].registryType`).
        key: String,
        /// The type named (the file's text, shown escaped).
        registry_type: String,
    },
    /// The chosen entry does not exist.
    NoSuchEntry {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// `packages` or `remotes`.
        key: &'static str,
        /// The index asked for.
        index: usize,
        /// How many there are.
        count: usize,
    },
    /// A value is missing or of the wrong type, or the entry cannot be
    /// turned into a server (a package served over HTTP).
    Invalid {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// The key.
        key: String,
        /// Why.
        reason: String,
    },
}

impl ServerJsonError {
    fn in_file(mut self, file: &Path) -> Self {
        match &mut self {
            ServerJsonError::Syntax { path, .. }
            | ServerJsonError::UnknownRegistryType { path, .. }
            | ServerJsonError::NoSuchEntry { path, .. }
            | ServerJsonError::Invalid { path, .. } => *path = Some(file.to_owned()),
            ServerJsonError::Io { .. } => {}
        }
        self
    }
}

impl fmt::Display for ServerJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = |f: &mut fmt::Formatter<'_>, path: &Option<PathBuf>| match path {
            Some(path) => write!(f, "{}: ", path.display()),
            None => Ok(()),
        };
        match self {
            ServerJsonError::Io { path, source } => {
                write!(f, "cannot read the server.json {}: {source}", path.display())
            }
            ServerJsonError::Syntax { path, line, column, message } => {
                file(f, path)?;
                write!(
                    f,
                    "invalid JSON in the server.json at line {line}, column {column}: {message}"
                )
            }
            ServerJsonError::UnknownRegistryType { path, key, registry_type } => {
                file(f, path)?;
                write!(
                    f,
                    "server.json key `{key}`: the registry type {:?} cannot be started here \
                     (npm, pypi, oci and nuget can)",
                    shorten(registry_type)
                )
            }
            ServerJsonError::NoSuchEntry { path, key, index, count } => {
                file(f, path)?;
                write!(
                    f,
                    "server.json key `{key}`: there is no entry {} (it has {count})",
                    index + 1
                )
            }
            ServerJsonError::Invalid { path, key, reason } => {
                file(f, path)?;
                write!(f, "server.json key `{key}`: {reason}")
            }
        }
    }
}

impl std::error::Error for ServerJsonError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServerJsonError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The file's text in a message: at most 64 characters.
fn shorten(text: &str) -> String {
    text.chars().take(64).collect()
}

fn invalid(key: impl Into<String>, reason: impl Into<String>) -> ServerJsonError {
    ServerJsonError::Invalid { path: None, key: key.into(), reason: reason.into() }
}

impl ImportedServer {
    /// Reads a `server.json` file (at most [`MAX_SERVER_JSON_BYTES`]) and
    /// imports one entry ([`from_str`](Self::from_str)); errors name the
    /// file.
    pub fn from_file(
        path: &Path,
        choice: ServerJsonChoice,
        name: Option<&str>,
    ) -> Result<Self, ServerJsonError> {
        use std::io::Read as _;
        let io = |source| ServerJsonError::Io { path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut text = String::new();
        file.take(MAX_SERVER_JSON_BYTES + 1).read_to_string(&mut text).map_err(io)?;
        if text.len() as u64 > MAX_SERVER_JSON_BYTES {
            return Err(io(std::io::Error::other(format!(
                "larger than {MAX_SERVER_JSON_BYTES} bytes"
            ))));
        }
        Self::from_str(&text, choice, name).map_err(|e| e.in_file(path))
    }

    /// Imports one entry of a `server.json`'s text, named `name` (default:
    /// the last part of the file's `name`, `io.github.user/weather` giving
    /// `weather`).
    pub fn from_str(
        text: &str,
        choice: ServerJsonChoice,
        name: Option<&str>,
    ) -> Result<Self, ServerJsonError> {
        let root: Value = serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(text))
            .map_err(|e| ServerJsonError::Syntax {
                path: None,
                line: e.line(),
                column: e.column(),
                message: crate::config::json_message(&e),
            })?;
        let Value::Object(root) = root else { return Err(invalid("(top)", "must be an object")) };
        let name = match name.map(str::trim) {
            Some(name) if !name.is_empty() => name.to_owned(),
            Some(_) => return Err(invalid("name", "the name given is blank")),
            None => default_name(&root)?,
        };
        let list = |key: &'static str| match root.get(key) {
            None => Ok(&[][..]),
            Some(Value::Array(items)) => Ok(items.as_slice()),
            Some(_) => Err(invalid(key, "must be an array")),
        };
        let (packages, remotes) = (list("packages")?, list("remotes")?);
        let (key, index) = match choice {
            ServerJsonChoice::Package(i) => ("packages", i),
            ServerJsonChoice::Remote(i) => ("remotes", i),
            ServerJsonChoice::First if !packages.is_empty() => ("packages", 0),
            ServerJsonChoice::First if !remotes.is_empty() => ("remotes", 0),
            ServerJsonChoice::First => {
                return Err(invalid("packages", "the file has no packages and no remotes"));
            }
        };
        let items = if key == "packages" { packages } else { remotes };
        let Some(Value::Object(entry)) = items.get(index) else {
            return match items.get(index) {
                None => {
                    Err(ServerJsonError::NoSuchEntry { path: None, key, index, count: items.len() })
                }
                Some(_) => Err(invalid(format!("{key}[{index}]"), "must be an object")),
            };
        };
        let mut builder = Builder { at: format!("{key}[{index}]"), variables: Vec::new() };
        let transport =
            if key == "packages" { builder.package(entry)? } else { builder.remote(entry)? };
        let mut server = ServerConfig::new(name, transport);
        if let Some(Value::String(d)) = root.get("description") {
            server.description = Some(d.trim().to_owned()).filter(|d| !d.is_empty());
        }
        Ok(ImportedServer { server, variables: builder.variables })
    }

    /// The `[[mcp_client.servers]]` entry (TOML) that declares the server,
    /// with a comment naming each variable to set.
    pub fn to_toml(&self) -> String {
        let s = &self.server;
        let mut out = String::new();
        for v in &self.variables {
            let what = match (v.required, v.secret) {
                (true, true) => "required, secret",
                (true, false) => "required",
                (false, true) => "optional, secret",
                (false, false) => "optional",
            };
            out.push_str(&format!("# set {} ({what})\n", v.name));
        }
        out.push_str("[[mcp_client.servers]]\n");
        out.push_str(&format!("name = {}\n", quote(&s.name)));
        if let Some(d) = &s.description {
            out.push_str(&format!("description = {}\n", quote(d)));
        }
        match &s.transport {
            TransportConfig::Stdio(c) => {
                out.push_str(&format!("command = {}\n", quote(&c.command)));
                if !c.args.is_empty() {
                    let args: Vec<String> = c.args.iter().map(|a| quote(a)).collect();
                    out.push_str(&format!("args = [{}]\n", args.join(", ")));
                }
                let env: Vec<(&str, &str)> =
                    c.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                push_table(&mut out, "env", &env);
            }
            TransportConfig::Http { endpoint, headers, .. } => {
                out.push_str(&format!("endpoint = {}\n", quote(endpoint)));
                let headers: Vec<(&str, &str)> =
                    headers.iter().map(|(k, v)| (k.as_str(), v.expose())).collect();
                push_table(&mut out, "headers", &headers);
            }
        }
        out
    }
}

/// `key = { A = "...", ... }` when there is anything.
fn push_table(out: &mut String, key: &str, items: &[(&str, &str)]) {
    if items.is_empty() {
        return;
    }
    let items: Vec<String> =
        items.iter().map(|(k, v)| format!("{} = {}", bare(k), quote(v))).collect();
    out.push_str(&format!("{key} = {{ {} }}\n", items.join(", ")));
}

/// A TOML basic string (control characters escaped).
fn quote(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// A TOML key: bare when it can be.
fn bare(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        key.to_owned()
    } else {
        quote(key)
    }
}

/// The last part of the file's `name`.
fn default_name(root: &Map<String, Value>) -> Result<String, ServerJsonError> {
    let Some(Value::String(full)) = root.get("name") else {
        return Err(invalid("name", "is missing (or give a name)"));
    };
    let last = full.rsplit('/').next().unwrap_or(full).trim();
    let name: String = last
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' })
        .collect();
    if name.is_empty() {
        return Err(invalid("name", "is blank (give a name)"));
    }
    Ok(name)
}
