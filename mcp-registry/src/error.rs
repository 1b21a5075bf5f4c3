//! The registry's error types.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::pins::{PinError, PinField};

/// Where in a configuration a problem is: the server entry (by name when it
/// has one, and by its position) and the key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The server's name, when the entry has one.
    pub server: Option<String>,
    /// The entry's position among the servers (0-based), when known.
    pub index: Option<usize>,
    /// The key, dotted (`auth.token_env`, `env.GITHUB_TOKEN`), when the
    /// problem is one key's.
    pub key: Option<String>,
}

impl Location {
    /// A location at the top level of the configuration.
    pub(crate) fn top(key: impl Into<String>) -> Self {
        Location { key: Some(key.into()), ..Default::default() }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut wrote = false;
        match (&self.server, self.index) {
            (Some(name), _) => {
                write!(f, "server {name:?}")?;
                wrote = true;
            }
            (None, Some(i)) => {
                write!(f, "server #{}", i + 1)?;
                wrote = true;
            }
            (None, None) => {}
        }
        if let Some(key) = &self.key {
            if wrote {
                f.write_str(", ")?;
            }
            write!(f, "key `{key}`")?;
            wrote = true;
        }
        if !wrote {
            f.write_str("configuration")?;
        }
        Ok(())
    }
}

/// What kind of problem a [`Warning`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// A key the registry does not know (an error in strict mode).
    UnknownKey,
    /// An entry that was skipped (no name, or neither endpoint nor command;
    /// an error in strict mode).
    SkippedEntry,
    /// A second entry with the same name replaced the first, in place.
    DuplicateName,
    /// A value that is present but not used (an endpoint beside a command).
    Ignored,
    /// The configuration declares no servers: the file is empty, or holds
    /// nothing the registry reads.
    NoServers,
    /// A server list outside the table the registry reads (`[[servers]]`
    /// without `[mcp_client]`), so it declares nothing.
    MisplacedServers,
    /// A server refers to an environment variable that is not set: it is
    /// loaded but unusable ([`Error::ServerUnusable`]); the others work.
    ServerUnusable,
    /// A `password` input is used in a value that is shown (`args`,
    /// `command`, `cwd`, a URL) rather than in `env` or `headers`.
    SecretShown,
}

/// A problem in a configuration that did not stop it loading. Loading
/// returns them in a list (and logs them at `warn`), so a host can show
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What kind of problem.
    pub kind: WarningKind,
    /// Where it is.
    pub location: Location,
    /// What it is, for a person.
    pub message: String,
    /// The file, when the configuration was read from one
    /// ([`Config::load`](crate::Config::load)).
    pub path: Option<PathBuf>,
    /// The 1-based line in the file, when it could be found.
    pub line: Option<usize>,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_file_position(f, self.path.as_deref(), self.line, None)?;
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// `path:line:column: ` (as much as is known), or nothing.
fn write_file_position(
    f: &mut fmt::Formatter<'_>,
    path: Option<&std::path::Path>,
    line: Option<usize>,
    column: Option<usize>,
) -> fmt::Result {
    let Some(path) = path else { return Ok(()) };
    write!(f, "{}", path.display())?;
    if let Some(line) = line {
        write!(f, ":{line}")?;
        if let Some(column) = column {
            write!(f, ":{column}")?;
        }
    }
    f.write_str(": ")
}

/// A server's reference to an environment variable that is not set: the
/// server is unusable until it is, while the others work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingVariable {
    /// Where the reference is (the server and the key).
    pub location: Location,
    /// The variable's name (never its value: it has none).
    pub variable: String,
}

impl fmt::Display for MissingVariable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: the environment variable {} is not set", self.location, self.variable)
    }
}

/// An input (`${input:ID}`) nobody supplied
/// ([`ConfigError::MissingInput`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MissingInput {
    /// Where the reference is.
    pub location: Location,
    /// The input's id.
    pub input: String,
    /// The environment variable that would supply it, when inputs are read
    /// from the environment
    /// ([`LoadOptions::input_env_prefix`](crate::LoadOptions::input_env_prefix)).
    pub variable: Option<String>,
}

/// Why a configuration could not be loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not valid TOML or JSON. The message never quotes the
    /// file's text (it may hold secrets), only a position.
    Syntax {
        /// `"TOML"` or `"JSON"`.
        format: &'static str,
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// The 1-based line, when known.
        line: Option<usize>,
        /// The 1-based column, when known.
        column: Option<usize>,
        /// What the parser said.
        message: String,
    },
    /// A value is missing, of the wrong type or out of range; or, in strict
    /// mode, a key is unknown or an entry is incomplete.
    Invalid {
        /// Where.
        location: Location,
        /// Why.
        reason: String,
    },
    /// A secret refers to an environment variable that is not set.
    MissingEnv {
        /// Where the reference is.
        location: Location,
        /// The variable's name.
        variable: String,
    },
    /// A value refers to an input (`${input:ID}`) that nobody supplied:
    /// no environment variable and no answer from the host's
    /// [`LoadOptions::inputs`](crate::LoadOptions::inputs).
    MissingInput(Box<MissingInput>),
    /// A problem in a configuration file ([`Config::load`](crate::Config::load)):
    /// the file and, when it could be found, the line of the entry or key.
    InFile {
        /// The file.
        path: PathBuf,
        /// The 1-based line, when found.
        line: Option<usize>,
        /// The problem.
        source: Box<ConfigError>,
    },
}

impl ConfigError {
    /// The problem itself, without the file it is in
    /// ([`InFile`](Self::InFile) unwrapped).
    pub fn problem(&self) -> &ConfigError {
        match self {
            ConfigError::InFile { source, .. } => source.problem(),
            other => other,
        }
    }

    /// The file the problem is in, when known.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            ConfigError::Io { path, .. } | ConfigError::InFile { path, .. } => Some(path),
            ConfigError::Syntax { path, .. } => path.as_deref(),
            _ => None,
        }
    }

    /// The 1-based line the problem is at, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            ConfigError::Syntax { line, .. } | ConfigError::InFile { line, .. } => *line,
            _ => None,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Io { path, source } => {
                write!(f, "cannot read the MCP configuration {}: {source}", path.display())
            }
            ConfigError::Syntax { format, path, line, column, message } => {
                write_file_position(f, path.as_deref(), *line, *column)?;
                write!(f, "invalid {format} in the MCP configuration")?;
                match (path, line, column) {
                    (Some(_), _, _) | (None, None, _) => {}
                    (None, Some(line), None) => write!(f, " at line {line}")?,
                    (None, Some(line), Some(column)) => {
                        write!(f, " at line {line}, column {column}")?
                    }
                }
                write!(f, ": {message}")
            }
            ConfigError::Invalid { location, reason } => {
                write!(f, "invalid MCP configuration: {location}: {reason}")
            }
            ConfigError::MissingEnv { location, variable } => write!(
                f,
                "invalid MCP configuration: {location}: the environment variable {variable} is not set"
            ),
            ConfigError::MissingInput(missing) => {
                let MissingInput { location, input, variable } = &**missing;
                write!(
                    f,
                    "invalid MCP configuration: {location}: the input `{input}` has no value"
                )?;
                match variable {
                    Some(variable) => write!(f, "; set the environment variable {variable}"),
                    None => f.write_str("; nothing supplies inputs here"),
                }
            }
            ConfigError::InFile { path, line, source } => {
                write_file_position(f, Some(path), *line, None)?;
                source.fmt(f)
            }
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::Io { source, .. } => Some(source),
            ConfigError::InFile { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

/// What a transport reported: the built-in transports' own errors, or a
/// host transport's.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransportError {
    /// From the stdio transport (feature `stdio`).
    #[cfg(feature = "stdio")]
    Stdio(Box<mcp_client_stdio::Error>),
    /// From the Streamable HTTP transport (feature `http`).
    #[cfg(feature = "http")]
    Http(Box<mcp_http::Error>),
    /// From a host's own transport. Its message must not carry secrets.
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl TransportError {
    /// Whether the connection is gone (the process exited, the client was
    /// closed, the network failed; for a host's own transport, its error or
    /// one in its `source` chain is the client's `Closed` or
    /// `ConnectionLost`): the registry then drops its cached connection so
    /// the next use starts a new one.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            #[cfg(feature = "stdio")]
            TransportError::Stdio(e) => matches!(
                **e,
                mcp_client_stdio::Error::ServerExited { .. }
                    | mcp_client_stdio::Error::RestartLimit { .. }
                    | mcp_client_stdio::Error::Closed { .. }
                    | mcp_client_stdio::Error::StreamEnded { .. }
                    | mcp_client_stdio::Error::Io { .. }
            ),
            #[cfg(feature = "http")]
            TransportError::Http(e) => matches!(
                **e,
                mcp_http::Error::Connect { .. }
                    | mcp_http::Error::Closed { .. }
                    | mcp_http::Error::SessionExpired { .. }
                    | mcp_http::Error::StreamLost { .. }
            ),
            // A host's own transport: the connection ended if its error,
            // or one it wraps, says so (the client's `Closed` or
            // `ConnectionLost`, the in-memory transport's `Closed`).
            TransportError::Other(e) => {
                use mcp_proto::client::ClientError;
                let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&**e);
                while let Some(error) = next {
                    if let Some(ClientError::Closed { .. } | ClientError::ConnectionLost { .. }) =
                        error.downcast_ref::<ClientError>()
                    {
                        return true;
                    }
                    if let Some(mcp_peer::memory::MemoryError::Closed) = error.downcast_ref() {
                        return true;
                    }
                    next = error.source();
                }
                false
            }
        }
    }

    /// Whether the server ended while the era probe (`server/discover`,
    /// the first request when the protocol is not pinned) waited: a
    /// handshake-era server that stops on a request it does not know does
    /// that, and is usable once its `protocol` is pinned.
    pub fn exited_on_probe(&self) -> bool {
        match self {
            #[cfg(feature = "stdio")]
            TransportError::Stdio(e) => matches!(
                &**e,
                mcp_client_stdio::Error::ServerExited { method, .. }
                    if method == mcp_proto::methods::SERVER_DISCOVER
            ),
            _ => false,
        }
    }

    /// Whether the OAuth flow needed the user (a new authorization) and no
    /// authorization handler was set to ask them: the host should run its
    /// login ([`Registry::login`](crate::Registry::login)).
    pub fn is_login_required(&self) -> bool {
        match self {
            #[cfg(feature = "http")]
            TransportError::Http(e) => match &**e {
                mcp_http::Error::Auth { source, .. } => matches!(
                    &**source,
                    // mcp-auth's words when the authorization code grant has
                    // no handler (checked by the registry's OAuth tests).
                    mcp_http::mcp_auth::Error::Handler(m) if m == NO_HANDLER
                ),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether the server refused the credentials (HTTP 401, or 403 for a
    /// missing scope).
    pub fn is_unauthorized(&self) -> bool {
        match self {
            #[cfg(feature = "http")]
            TransportError::Http(e) => matches!(
                **e,
                mcp_http::Error::Unauthorized { .. } | mcp_http::Error::InsufficientScope { .. }
            ),
            _ => false,
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "stdio")]
            TransportError::Stdio(e) => e.fmt(f),
            #[cfg(feature = "http")]
            TransportError::Http(e) => e.fmt(f),
            TransportError::Other(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            #[cfg(feature = "stdio")]
            TransportError::Stdio(e) => Some(&**e),
            #[cfg(feature = "http")]
            TransportError::Http(e) => Some(&**e),
            TransportError::Other(e) => Some(&**e),
        }
    }
}

impl mcp_peer::TransportError for TransportError {
    fn is_session_expired(&self) -> bool {
        match self {
            #[cfg(feature = "http")]
            TransportError::Http(e) => mcp_peer::TransportError::is_session_expired(&**e),
            _ => false,
        }
    }

    fn protocol_error(&self) -> Option<&mcp_proto::client::ClientError> {
        match self {
            #[cfg(feature = "stdio")]
            TransportError::Stdio(e) => mcp_peer::TransportError::protocol_error(&**e),
            #[cfg(feature = "http")]
            TransportError::Http(e) => mcp_peer::TransportError::protocol_error(&**e),
            _ => None,
        }
    }

    fn is_refusal(&self) -> bool {
        match self {
            #[cfg(feature = "http")]
            TransportError::Http(e) => mcp_peer::TransportError::is_refusal(&**e),
            _ => false,
        }
    }

    fn is_stream_lost(&self) -> bool {
        match self {
            #[cfg(feature = "http")]
            TransportError::Http(e) => mcp_peer::TransportError::is_stream_lost(&**e),
            _ => false,
        }
    }
}

#[cfg(feature = "stdio")]
impl From<mcp_client_stdio::Error> for TransportError {
    fn from(e: mcp_client_stdio::Error) -> Self {
        TransportError::Stdio(Box::new(e))
    }
}

impl From<mcp_peer::memory::MemoryError> for TransportError {
    fn from(e: mcp_peer::memory::MemoryError) -> Self {
        TransportError::Other(Box::new(e))
    }
}

#[cfg(feature = "http")]
impl From<mcp_http::Error> for TransportError {
    fn from(e: mcp_http::Error) -> Self {
        TransportError::Http(Box::new(e))
    }
}

/// What `mcp-auth` says when a new authorization is needed and no handler
/// is set.
#[cfg(feature = "http")]
const NO_HANDLER: &str = "no authorization handler configured";

/// Why a registry operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The configuration could not be loaded.
    Config(ConfigError),
    /// No enabled server has this name.
    UnknownServer {
        /// The name asked for.
        server: String,
    },
    /// The server's tool policy does not allow this tool (nothing was
    /// spawned or sent).
    ToolNotAllowed {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The server does not offer this tool (no `tools/call` was sent).
    UnknownTool {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The tool is meant only for the server's MCP App view (its `_meta.ui`
    /// `visibility` leaves out the model), and the registry serves a model
    /// ([`RegistryOptions::app_only_tools`](crate::RegistryOptions::app_only_tools)
    /// is off). Nothing was sent.
    AppOnlyTool {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The host's [`Connector`](crate::Connector) cannot run an OAuth login
    /// (its [`login`](crate::Connector::login) is not implemented).
    OAuthUnavailable {
        /// The server.
        server: String,
    },
    /// A login was asked for a server that is not configured for OAuth.
    NotOAuth {
        /// The server.
        server: String,
    },
    /// The OAuth server needs a new authorization by the user (no usable
    /// stored token) and no authorization handler was set: the host runs
    /// its login ([`Registry::login`](crate::Registry::login)) first.
    LoginRequired {
        /// The server.
        server: String,
        /// The host's login command for it
        /// ([`RegistryOptions::login_command`](crate::RegistryOptions::login_command)).
        command: Option<String>,
    },
    /// The OAuth login failed (the source never holds a token, a secret or
    /// a code). Feature `http`.
    #[cfg(feature = "http")]
    Login {
        /// The server.
        server: String,
        /// What failed.
        source: mcp_http::mcp_auth::Error,
    },
    /// An OAuth logout could not forget the tokens (discovery or the token
    /// store failed). Feature `http`.
    #[cfg(feature = "http")]
    Logout {
        /// The server.
        server: String,
        /// What failed.
        source: mcp_http::mcp_auth::Error,
    },
    /// The OAuth login did not finish in time.
    LoginTimeout {
        /// The server.
        server: String,
        /// How long it waited.
        after: Duration,
    },
    /// Connecting (spawning, or the handshake) took longer than allowed.
    ConnectTimeout {
        /// The server.
        server: String,
        /// How long it waited.
        after: Duration,
    },
    /// The registry's connections were closed
    /// ([`Registry::close_all`](crate::Registry::close_all)) while this
    /// one was being made; it was closed too.
    Closed {
        /// The server.
        server: String,
    },
    /// The server is supervised and backing off (its connection was lost
    /// or could not be made; the supervisor waits before the next
    /// attempt), and the call did not wait
    /// ([`WhileDown::FailFast`](crate::WhileDown::FailFast)) or waited up
    /// to its timeout (or the server's) in vain.
    Unavailable {
        /// The server.
        server: String,
        /// Its health when the call gave up.
        health: crate::Health,
    },
    /// A [`Registry::reload`](crate::Registry::reload) removed or replaced
    /// the server while this call was reaching it (before it had a
    /// connection); nothing was sent. Calling again reaches the new
    /// configuration.
    Reloaded {
        /// The server.
        server: String,
    },
    /// A server of the stateless era (2026-07-28) acknowledged the
    /// `subscriptions/listen` stream without the resource asked for (it
    /// will send no updates of it); the subscription is not remembered.
    SubscriptionRefused {
        /// The server.
        server: String,
        /// The resource's URI.
        uri: String,
    },
    /// The transport failed.
    Transport {
        /// The server.
        server: String,
        /// What the transport said.
        source: TransportError,
    },
    /// The server's transport is not compiled in: a `command` server
    /// without the `stdio` feature, an `endpoint` server without `http`
    /// (the configuration is read either way; nothing was spawned or sent).
    TransportUnavailable {
        /// The server.
        server: String,
        /// The missing transport, and the feature's name: `"stdio"` or
        /// `"http"`.
        transport: &'static str,
    },
    /// The server's configuration refers to an environment variable that
    /// is not set (nothing was spawned or sent; the other servers work).
    ServerUnusable {
        /// The server.
        server: String,
        /// The variable and where the configuration refers to it.
        missing: MissingVariable,
    },
    /// The tool's definition changed since it was pinned, and the server's
    /// pin policy is `block`: the tool is withheld until the host approves
    /// the new definition ([`Registry::approve_pins`](crate::Registry::approve_pins)).
    ToolChanged {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The parts of the definition that changed.
        fields: Vec<PinField>,
    },
    /// The tool pin store failed.
    Pins {
        /// The server whose pins were read or written.
        server: String,
        /// What failed.
        source: PinError,
    },
    /// The call policy (a rule, the managed policy, the approver, or no
    /// answer in time) refused the call: nothing was sent.
    CallDenied {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// Why.
        reason: crate::trust::approval::Reason,
    },
    /// A trust record (remembered answers, the audit log) could not be
    /// used; the call was not made.
    Trust {
        /// The server.
        server: String,
        /// What failed.
        source: crate::trust::TrustError,
    },
}

impl Error {
    /// The server the error is about, when there is one.
    pub fn server(&self) -> Option<&str> {
        match self {
            Error::Config(_) => None,
            Error::UnknownServer { server }
            | Error::ToolNotAllowed { server, .. }
            | Error::UnknownTool { server, .. }
            | Error::AppOnlyTool { server, .. }
            | Error::OAuthUnavailable { server }
            | Error::NotOAuth { server }
            | Error::LoginRequired { server, .. }
            | Error::LoginTimeout { server, .. }
            | Error::ConnectTimeout { server, .. }
            | Error::Closed { server }
            | Error::Unavailable { server, .. }
            | Error::Reloaded { server }
            | Error::SubscriptionRefused { server, .. }
            | Error::Transport { server, .. }
            | Error::TransportUnavailable { server, .. }
            | Error::ServerUnusable { server, .. }
            | Error::ToolChanged { server, .. }
            | Error::Pins { server, .. }
            | Error::CallDenied { server, .. }
            | Error::Trust { server, .. } => Some(server),
            #[cfg(feature = "http")]
            Error::Login { server, .. } | Error::Logout { server, .. } => Some(server),
        }
    }

    /// Whether the error is the caller's mistake (an unknown server or tool,
    /// a tool the policy refuses, a bad configuration, a server whose
    /// transport is not compiled in) rather than a failure to reach or talk
    /// to a server.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::Config(_)
                | Error::UnknownServer { .. }
                | Error::ToolNotAllowed { .. }
                | Error::CallDenied { .. }
                | Error::UnknownTool { .. }
                | Error::AppOnlyTool { .. }
                | Error::NotOAuth { .. }
                | Error::TransportUnavailable { .. }
                | Error::ServerUnusable { .. }
        )
    }

    /// The transport's error, when the transport failed.
    pub fn transport_error(&self) -> Option<&TransportError> {
        match self {
            Error::Transport { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What a server that ended on the era probe is told to do.
#[cfg(feature = "stdio")]
const PROBE_HINT: &str = "\nIt ended on the protocol probe (server/discover), as a server of the \
     initialize handshake era may on a request it does not know: pin its protocol \
     (protocol = \"2025-11-25\" in its configuration; mcpc: --protocol 2025-11-25).";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(e) => e.fmt(f),
            Error::UnknownServer { server } => write!(f, "no MCP server is named {server:?}"),
            Error::ToolNotAllowed { server, tool } => write!(
                f,
                "tool {tool:?} of MCP server {server:?} is not allowed by the server's tool policy"
            ),
            Error::UnknownTool { server, tool } => {
                write!(f, "MCP server {server:?} has no tool named {tool:?}")
            }
            Error::AppOnlyTool { server, tool } => write!(
                f,
                "tool {tool:?} of MCP server {server:?} is meant only for the server's MCP App view \
                 (visibility [\"app\"]), not for a model"
            ),
            Error::OAuthUnavailable { server } => write!(
                f,
                "MCP server {server:?} uses OAuth, but this host's connector cannot run an OAuth login"
            ),
            Error::NotOAuth { server } => write!(
                f,
                "MCP server {server:?} is not configured for OAuth (auth = {{ kind = \"oauth\" }}); nothing to log in to"
            ),
            Error::LoginRequired { server, command: Some(command) } => {
                write!(f, "MCP server {server:?} needs an OAuth login: run `{command}`")
            }
            Error::LoginRequired { server, command: None } => {
                write!(f, "MCP server {server:?} needs an OAuth login first")
            }
            #[cfg(feature = "http")]
            Error::Login { server, source } => {
                write!(f, "OAuth login to MCP server {server:?} failed: {source}")
            }
            #[cfg(feature = "http")]
            Error::Logout { server, source } => {
                write!(f, "OAuth logout from MCP server {server:?} failed: {source}")
            }
            Error::LoginTimeout { server, after } => write!(
                f,
                "OAuth login to MCP server {server:?} did not finish within {}s",
                after.as_secs()
            ),
            Error::ConnectTimeout { server, after } => {
                write!(f, "MCP server {server:?} did not start within {:.1}s", after.as_secs_f64())
            }
            Error::Closed { server } => {
                write!(f, "MCP server {server:?}: the connections were closed while it connected")
            }
            Error::Unavailable { server, health } => {
                write!(f, "MCP server {server:?} is unavailable: {health}")
            }
            Error::Reloaded { server } => write!(
                f,
                "MCP server {server:?} was removed or replaced by a configuration reload during this call; nothing was sent"
            ),
            Error::SubscriptionRefused { server, uri } => write!(
                f,
                "MCP server {server:?} refused to send updates of resource {uri:?} (its \
                 subscriptions/listen acknowledgment left it out)"
            ),
            // The stdio transport names the server itself; the HTTP one
            // names the (redacted) endpoint, which follows the name once.
            #[cfg(feature = "stdio")]
            Error::Transport { source: source @ TransportError::Stdio(_), .. } => {
                source.fmt(f)?;
                if source.exited_on_probe() {
                    f.write_str(PROBE_HINT)?;
                }
                Ok(())
            }
            #[cfg(feature = "http")]
            Error::Transport { server, source: TransportError::Http(e) } => match e.endpoint() {
                Some(endpoint) => write!(f, "MCP server {server:?} ({endpoint}): {}", e.detail()),
                None => write!(f, "MCP server {server:?}: {e}"),
            },
            Error::Transport { server, source } => write!(f, "MCP server {server:?}: {source}"),
            Error::TransportUnavailable { server, transport } => write!(
                f,
                "MCP server {server:?} uses the {transport} transport, which this build does not \
                 include (mcp-registry's `{transport}` feature is off)"
            ),
            Error::ServerUnusable { server, missing } => write!(
                f,
                "MCP server {server:?} cannot be used: key `{}` refers to the environment \
                 variable {}, which is not set",
                missing.location.key.as_deref().unwrap_or("?"),
                missing.variable
            ),
            Error::ToolChanged { server, tool, fields } => {
                write!(f, "tool {tool:?} of MCP server {server:?} changed since it was pinned (")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(field.as_str())?;
                }
                f.write_str("); it is withheld until the new definition is approved")
            }
            Error::Pins { server, source } => write!(f, "MCP server {server:?}: {source}"),
            Error::CallDenied { server, tool, reason } => write!(
                f,
                "the call of tool {tool:?} of MCP server {server:?} was refused ({reason})"
            ),
            Error::Trust { server, source } => write!(f, "MCP server {server:?}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Config(e) => Some(e),
            Error::Transport { source, .. } => Some(source),
            Error::Pins { source, .. } => Some(source),
            Error::Trust { source, .. } => Some(source),
            #[cfg(feature = "http")]
            Error::Login { source, .. } | Error::Logout { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Config(e)
    }
}
