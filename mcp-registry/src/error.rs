//! The registry's error types.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

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
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
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
        /// The 1-based line, when known.
        line: Option<usize>,
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
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Io { path, source } => {
                write!(f, "cannot read the MCP configuration {}: {source}", path.display())
            }
            ConfigError::Syntax { format, line: Some(line), message } => {
                write!(f, "invalid {format} in the MCP configuration at line {line}: {message}")
            }
            ConfigError::Syntax { format, line: None, message } => {
                write!(f, "invalid {format} in the MCP configuration: {message}")
            }
            ConfigError::Invalid { location, reason } => {
                write!(f, "invalid MCP configuration: {location}: {reason}")
            }
            ConfigError::MissingEnv { location, variable } => write!(
                f,
                "invalid MCP configuration: {location}: the environment variable {variable} is not set"
            ),
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::Io { source, .. } => Some(source),
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
    /// closed, the network failed): the registry then drops its cached
    /// connection so the next use starts a new one.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            #[cfg(feature = "stdio")]
            TransportError::Stdio(e) => matches!(
                **e,
                mcp_client_stdio::Error::ServerExited { .. }
                    | mcp_client_stdio::Error::RestartLimit { .. }
                    | mcp_client_stdio::Error::Closed { .. }
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
            TransportError::Other(_) => false,
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
}

impl Error {
    /// The server the error is about, when there is one.
    pub fn server(&self) -> Option<&str> {
        match self {
            Error::Config(_) => None,
            Error::UnknownServer { server }
            | Error::ToolNotAllowed { server, .. }
            | Error::UnknownTool { server, .. }
            | Error::OAuthUnavailable { server }
            | Error::NotOAuth { server }
            | Error::LoginRequired { server, .. }
            | Error::LoginTimeout { server, .. }
            | Error::ConnectTimeout { server, .. }
            | Error::Closed { server }
            | Error::Transport { server, .. }
            | Error::TransportUnavailable { server, .. } => Some(server),
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
                | Error::UnknownTool { .. }
                | Error::NotOAuth { .. }
                | Error::TransportUnavailable { .. }
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
            // The stdio transport names the server itself; the HTTP one
            // names the (redacted) endpoint, which follows the name once.
            #[cfg(feature = "stdio")]
            Error::Transport { source: source @ TransportError::Stdio(_), .. } => source.fmt(f),
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
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Config(e) => Some(e),
            Error::Transport { source, .. } => Some(source),
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
